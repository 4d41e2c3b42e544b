//! The memories of `World`: forming and removing them (`add_memory()`,
//! `remove_memory()`), reading them as snapshots (`memories()`,
//! `memory()`), and recalling them (`always_loaded()`, `recall()`,
//! `mark_recalled()`). Their types and conversions are in
//! [`crate::memory`].

use pyo3::prelude::*;
use rp_core::EntityId;

use super::World;
use crate::errors::to_py_err;
use crate::model::{Memory, Named, entity_id};

#[pymethods]
impl World {
    /// Forms a memory of ``owner`` (its point of view) and returns its id.
    ///
    /// ``witnesses`` are the others who saw it (the owner is always one);
    /// ``kind`` is ``"utterance"``, ``"scene_summary"``, ``"event_gist"``,
    /// ``"reflection"`` or ``"thought"``; ``significance`` is 0–1; ``created`` defaults to the
    /// world's clock; a ``pinned`` memory is always in the owner's prompt
    /// (``always_loaded``); ``embedding`` is the host's vector for the text
    /// (semantic recall), stored with it; ``sources`` are the owner's own
    /// memories a reflection rests on. Raises ``NotFound`` (owner or
    /// witness) or
    /// ``InvalidInput`` (empty text, significance outside 0–1, unknown kind);
    /// the world is then unchanged.
    #[pyo3(signature = (owner, text, *, witnesses = None, kind = "utterance", significance = 0.5, created = None, pinned = false, embedding = None, sources = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_memory(
        &self,
        py: Python<'_>,
        owner: u64,
        text: String,
        witnesses: Option<Vec<u64>>,
        kind: &str,
        significance: f64,
        created: Option<i64>,
        pinned: bool,
        embedding: Option<Vec<f32>>,
        sources: Option<Vec<u64>>,
    ) -> PyResult<u64> {
        let kind = crate::memory::kind(kind).map_err(|e| to_py_err(py, e))?;
        let memory = rp_core::memory::NewMemory {
            owner: EntityId(owner),
            witnesses: witnesses
                .unwrap_or_default()
                .into_iter()
                .map(EntityId)
                .collect(),
            text,
            kind,
            significance,
            created,
            pinned,
            embedding,
            sources: sources
                .unwrap_or_default()
                .into_iter()
                .map(rp_core::MemoryId)
                .collect(),
        };
        self.with_engine(py, |engine| engine.add_memory(memory))
            .map(|id| id.0)
    }

    /// The memories always in ``speaker``'s prompt, outside retrieval, as
    /// ids: its pinned memories (oldest first), then its ``recent_scenes``
    /// most recent scene summaries (newest first). Raises ``NotFound``.
    #[pyo3(signature = (speaker, recent_scenes = 3))]
    fn always_loaded(
        &self,
        py: Python<'_>,
        speaker: u64,
        recent_scenes: usize,
    ) -> PyResult<Vec<u64>> {
        self.with_engine(py, |engine| {
            Ok(engine
                .always_loaded(EntityId(speaker), recent_scenes)?
                .into_iter()
                .map(|id| id.0)
                .collect())
        })
    }

    /// Removes a memory. Raises ``NotFound``.
    fn remove_memory(&self, py: Python<'_>, memory: u64) -> PyResult<()> {
        self.with_engine(py, |engine| engine.remove_memory(rp_core::MemoryId(memory)))
            .map(drop)
    }

    /// The memories ``speaker`` recalls for ``query`` at ``now`` (host
    /// clock, ms), best first, as ``Recalled`` items.
    ///
    /// Only the speaker's own memories (what it witnessed) can come back,
    /// and only those still in mind (whole, or reduced to a summary).
    /// ``query`` is text, never query syntax. ``k`` (1–1000) is how many;
    /// ``candidates`` (1–100) how many BM25 candidates per item to rerank;
    /// ``relevance``, ``retention`` and ``significance`` weigh the score
    /// (retention: ``World.retention``). With ``query_embedding`` (the host's vector for the query),
    /// memories that have a vector are also found by cosine similarity, and
    /// ``semantic`` (0–1) is the share of relevance it takes from BM25.
    /// Raises ``NotFound`` (speaker) or ``InvalidInput`` (options).
    /// Recalling changes nothing: record it with ``mark_recalled``.
    #[pyo3(signature = (speaker, query, *, now, k = 10, candidates = 8, relevance = 1.0, retention = 1.0, significance = 1.0, query_embedding = None, semantic = 0.5))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        speaker: u64,
        query: &str,
        now: i64,
        k: usize,
        candidates: usize,
        relevance: f64,
        retention: f64,
        significance: f64,
        query_embedding: Option<Vec<f32>>,
        semantic: f64,
    ) -> PyResult<Vec<crate::memory::Recalled>> {
        let options = crate::memory::options(
            k,
            candidates,
            relevance,
            retention,
            significance,
            query_embedding,
            semantic,
        );
        self.with_engine(py, |engine| {
            crate::memory::recall(engine, speaker, query, now, &options)
        })
    }

    /// How well ``memory`` is kept at ``now`` (host clock, ms): its
    /// retention, 0–1, read without ticking (docs/memory.md); 1 for a pinned
    /// memory or an event's gist. Raises ``NotFound``.
    #[pyo3(signature = (memory, *, now))]
    fn retention(&self, py: Python<'_>, memory: u64, now: i64) -> PyResult<f64> {
        self.with_engine(py, |engine| {
            engine.retention(rp_core::MemoryId(memory), now)
        })
    }

    /// Records that ``memories`` were recalled at ``at`` (their last-access
    /// time and access count; each is reinforced, fading more slowly from
    /// then on); returns the new head.
    /// Raises ``NotFound`` (a memory) or ``InvalidInput`` (an id twice).
    fn mark_recalled(&self, py: Python<'_>, memories: Vec<u64>, at: i64) -> PyResult<u64> {
        let ids: Vec<rp_core::MemoryId> = memories.into_iter().map(rp_core::MemoryId).collect();
        self.with_engine(py, |engine| engine.mark_recalled(&ids, at))
    }

    /// Every memory, in id order, as ``Memory`` snapshots: the host's view;
    /// with ``owner``, only the memories it holds and witnessed (what it can
    /// recall). Raises ``NotFound`` (owner).
    #[pyo3(signature = (owner = None))]
    fn memories(&self, py: Python<'_>, owner: Option<Named>) -> PyResult<Vec<Memory>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(match owner {
                Some(owner) => {
                    let owner = entity_id(world, &owner)?;
                    let mut found: Vec<Memory> = world
                        .memories_of(owner)
                        .map(|m| Memory(m.clone()))
                        .collect();
                    found.sort_by_key(|m| m.0.id);
                    found
                }
                None => world.all_memories().map(|m| Memory(m.clone())).collect(),
            })
        })
    }

    /// The memory with id ``memory``. Raises ``NotFound``.
    fn memory(&self, py: Python<'_>, memory: u64) -> PyResult<Memory> {
        self.with_engine(py, |engine| {
            engine
                .world()
                .memory(rp_core::MemoryId(memory))
                .map(|m| Memory(m.clone()))
                .ok_or_else(|| rp_core::Error::NotFound {
                    what: "memory",
                    id: memory.to_string(),
                })
        })
    }
}
