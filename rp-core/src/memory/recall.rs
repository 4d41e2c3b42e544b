//! Retrieval: the memories a speaker recalls for a query, scored by relevance, retention and
//! significance (docs/memory.md).

use super::index::MemoryIndex;
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{EntityId, Memory, MemoryId, Millis};

/// How much each part of the score weighs.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecallWeights {
    /// Relevance: BM25 of the query, divided by the best BM25 among the candidates (0–1).
    pub relevance: f64,
    /// Retention: how well the memory is kept at the time of recall ([`Memory::retention`],
    /// docs/memory.md), 0–1: it fades with host time since the memory was last recalled (or
    /// formed), more slowly the more significant it is and the more it was reinforced. Read
    /// from JSON as `retention` or, as before, `recency`.
    #[serde(alias = "recency")]
    pub retention: f64,
    /// Significance: the memory's own, 0–1.
    pub significance: f64,
}

impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            relevance: 1.0,
            retention: 1.0,
            significance: 1.0,
        }
    }
}

/// How to recall. Deserialises from JSON with these field names, every one optional.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecallOptions {
    /// How many memories to return (1–1000).
    pub k: usize,
    /// How many BM25 candidates to rerank, as a multiple of `k` (1–100): the relevance
    /// pruning that keeps a common word from scoring every memory.
    pub candidates: usize,
    /// The weights of the score.
    pub weights: RecallWeights,
    /// The host's vector for the query (semantic recall): memories with a vector are then
    /// also found by cosine similarity, so "beer" finds the memory about "ale".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_embedding: Option<Vec<f32>>,
    /// With a query vector, how much of relevance is cosine similarity (the rest is BM25),
    /// 0–1.
    pub semantic: f64,
}

impl Default for RecallOptions {
    fn default() -> Self {
        RecallOptions {
            k: 10,
            candidates: 8,
            weights: RecallWeights::default(),
            query_embedding: None,
            semantic: 0.5,
        }
    }
}

impl RecallOptions {
    /// Reads options from a JSON object.
    pub fn from_json(json: &str) -> Result<RecallOptions> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| Error::invalid("recall options", format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(Error::invalid(
                "recall options",
                "recall options are a JSON object",
            ));
        }
        let o: RecallOptions = serde_json::from_value(value)
            .map_err(|e| Error::invalid("recall options", e.to_string()))?;
        o.check()?;
        Ok(o)
    }

    /// Refuses options that cannot be meant: a `k` or `candidates` out of range, a weight
    /// that is negative or not finite.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::invalid("recall options", m));
        if !(1..=1000).contains(&self.k) {
            return bad(format!("k must be 1 to 1000, not {}", self.k));
        }
        if !(1..=100).contains(&self.candidates) {
            return bad(format!(
                "candidates must be 1 to 100, not {}",
                self.candidates
            ));
        }
        let w = self.weights;
        for (name, v) in [
            ("relevance", w.relevance),
            ("retention", w.retention),
            ("significance", w.significance),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(format!("the {name} weight must be a number ≥ 0, not {v}"));
            }
        }
        if !(0.0..=1.0).contains(&self.semantic) {
            return bad(format!("semantic must be 0 to 1, not {}", self.semantic));
        }
        if let Some(v) = &self.query_embedding {
            super::check_embedding(v).map_err(|m| Error::invalid("recall options", m))?;
        }
        Ok(())
    }
}

/// A recalled memory and why it ranked where it did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recalled {
    /// The memory.
    pub id: MemoryId,
    /// The weighted sum of the three parts.
    pub score: f64,
    /// Relevance, 0–1: BM25 divided by the best among the candidates (0 for an empty
    /// query), blended with cosine similarity when the query has a vector.
    pub relevance: f64,
    /// Retention, 0–1, at the time of recall ([`Memory::retention`]).
    pub retention: f64,
    /// Significance, 0–1.
    pub significance: f64,
}

/// The top `options.k` memories `speaker` recalls for `query` at `now`, best first (ties by
/// id). Only `speaker`'s own memories (which it witnessed) can be returned, and only those
/// still [`Memory::recallable`]: not the memories of a closed scene's lines, which its
/// summaries stand for, nor residues and forgotten ones. An empty query (or one without a
/// word) ranks the speaker's memories by retention and significance alone.
///
/// `index` must hold exactly the recallable memories of `world` ([`crate::Engine::recall`]
/// keeps one so), or of the owners it covers: one built lazily ([`MemoryIndex::lazy`]) takes
/// in the speaker's first, which gives the same as a whole index would.
pub fn recall(
    world: &World,
    index: &mut MemoryIndex,
    speaker: EntityId,
    query: &str,
    now: Millis,
    options: &RecallOptions,
) -> Result<Vec<Recalled>> {
    recall_skipping(world, index, speaker, query, now, options, &|_| false)
}

/// [`recall`], leaving out the memories `skip` says (before ranking, so the `k` returned are
/// all kept ones, found among the same candidates).
pub(crate) fn recall_skipping(
    world: &World,
    index: &mut MemoryIndex,
    speaker: EntityId,
    query: &str,
    now: Millis,
    options: &RecallOptions,
    skip: &dyn Fn(&Memory) -> bool,
) -> Result<Vec<Recalled>> {
    options.check()?;
    if world.entity(speaker).is_none() {
        return Err(Error::not_found("entity", speaker));
    }
    index.cover(world, speaker)?;
    let words = index.words(query);
    let w = options.weights;
    let base = world.drive_settings(speaker).memory_stability_ms();
    let score = |m: &Memory, relevance: f64| {
        let retention = m.retention(base, now);
        let significance = m.significance;
        Recalled {
            id: m.id,
            score: w.relevance * relevance
                + w.retention * retention
                + w.significance * significance,
            relevance,
            retention,
            significance,
        }
    };
    let limit = options.k * options.candidates;
    // BM25 of the words, divided by the best: (memory, 0–1).
    let mut lexical: Vec<(MemoryId, f64)> = Vec::new();
    if !words.is_empty() {
        index.refresh()?;
        let hits = index.search(speaker, &words, limit, world.memory_count(speaker))?;
        let best = hits.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
        lexical = hits
            .into_iter()
            .map(|(id, s)| (id, if best > 0.0 { f64::from(s / best) } else { 0.0 }))
            .collect();
    }
    let mut out: Vec<Recalled> = match &options.query_embedding {
        None if words.is_empty() => world
            .memories_of(speaker)
            .filter(|m| m.recallable() && !skip(m))
            .map(|m| score(m, 0.0))
            .collect(),
        None => lexical
            .iter()
            .filter_map(|(id, r)| {
                // The index only returns the speaker's memories; checking again costs
                // nothing and keeps a stale index from ever leaking another's.
                let m = world
                    .memory(*id)
                    .filter(|m| m.owner == speaker && m.recallable() && !skip(m))?;
                Some(score(m, *r))
            })
            .collect(),
        Some(q) => {
            // Exact: every vector among the speaker's memories (the index lists them).
            let mut by_vector: Vec<(MemoryId, f64)> = index
                .embedded(world, speaker)
                .iter()
                .filter_map(|id| {
                    let m = world
                        .memory(*id)
                        .filter(|m| m.owner == speaker && m.recallable())?;
                    Some((*id, super::cosine(q, m.embedding.as_deref()?).max(0.0)))
                })
                .collect();
            by_vector.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            by_vector.truncate(limit);
            let mut ids: Vec<MemoryId> = lexical
                .iter()
                .map(|(id, _)| *id)
                .chain(by_vector.iter().map(|(id, _)| *id))
                .collect();
            ids.sort();
            ids.dedup();
            let s = options.semantic;
            ids.iter()
                .filter_map(|id| {
                    let m = world
                        .memory(*id)
                        .filter(|m| m.owner == speaker && m.recallable() && !skip(m))?;
                    let bm25 = lexical.iter().find(|(x, _)| x == id).map_or(0.0, |p| p.1);
                    let cos = m
                        .embedding
                        .as_deref()
                        .map_or(0.0, |v| super::cosine(q, v).max(0.0));
                    Some(score(m, (1.0 - s) * bm25 + s * cos))
                })
                .collect()
        }
    };
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    out.truncate(options.k);
    Ok(out)
}
