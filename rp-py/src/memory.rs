//! Memories from Python: `World.add_memory`, `recall` and friends (the
//! methods are in `world/memories.rs`; this module holds their types and
//! conversions).

use pyo3::prelude::*;
use rp_core::MemoryKind;
use rp_core::memory::{RecallOptions, RecallWeights};

/// A memory a speaker recalled, and why it ranked where it did: the items
/// of ``World.recall``.
///
/// ``score`` is ``relevance`` (BM25 of the query, divided by the best among
/// the candidates) + ``retention`` (how well the memory is kept at the time:
/// ``World.retention``) + ``significance``, each weighted.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Recalled {
    /// The memory's id.
    #[pyo3(get)]
    id: u64,
    /// Its text (its summary, once it faded to one).
    #[pyo3(get)]
    text: String,
    /// Its kind: ``"utterance"``, ``"scene_summary"``, ``"event_gist"``,
    /// ``"reflection"`` or ``"thought"``.
    #[pyo3(get)]
    kind: String,
    /// The weighted sum.
    #[pyo3(get)]
    score: f64,
    /// Relevance, 0–1.
    #[pyo3(get)]
    relevance: f64,
    /// Retention, 0–1.
    #[pyo3(get)]
    retention: f64,
    /// Significance, 0–1.
    #[pyo3(get)]
    significance: f64,
}

#[pymethods]
impl Recalled {
    fn __repr__(&self) -> String {
        format!(
            "Recalled(id={}, score={:.3}, text={:?})",
            self.id, self.score, self.text
        )
    }
}

/// The kind named `name`.
pub(crate) fn kind(name: &str) -> Result<MemoryKind, rp_core::Error> {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(|_| {
        rp_core::Error::Invalid {
            what: "memory kind",
            reason: format!(
                "{name:?} is not one of utterance, scene_summary, event_gist, reflection"
            ),
        }
    })
}

fn kind_name(kind: MemoryKind) -> String {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{kind:?}"),
    }
}

/// Recall options from keyword arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn options(
    k: usize,
    candidates: usize,
    relevance: f64,
    retention: f64,
    significance: f64,
    query_embedding: Option<Vec<f32>>,
    semantic: f64,
) -> RecallOptions {
    RecallOptions {
        k,
        candidates,
        weights: RecallWeights {
            relevance,
            retention,
            significance,
        },
        query_embedding,
        semantic,
    }
}

/// What `engine` recalls, with each memory's text.
pub(crate) fn recall(
    engine: &mut rp_core::Engine,
    speaker: u64,
    query: &str,
    now: i64,
    options: &RecallOptions,
) -> Result<Vec<Recalled>, rp_core::Error> {
    let found = engine.recall(rp_core::EntityId(speaker), query, now, options)?;
    Ok(found
        .iter()
        .filter_map(|r| {
            let m = engine.world().memory(r.id)?;
            Some(Recalled {
                id: r.id.0,
                text: m.shown_text().to_owned(),
                kind: kind_name(m.kind),
                score: r.score,
                relevance: r.relevance,
                retention: r.retention,
                significance: r.significance,
            })
        })
        .collect())
}
