//! Retrieval (docs/architecture.md): a full-text index of memories, derived from the world, and
//! recall scored by relevance (BM25), retention (how well a memory is kept at the time,
//! docs/memory.md) and significance, with the speaker's witness filter inside the query; and an index of entities
//! (names, aliases, facts) for finding one by what a player calls it.
//!
//! Memories themselves are world state ([`crate::model::Memory`]), added, recalled and removed
//! only through events; the index is rebuilt from the world whenever it cannot be caught up
//! from the events just applied, so deleting it loses nothing.

mod entities;
#[cfg(test)]
pub(crate) mod faults;
mod index;
mod pending;
mod recall;
mod semantic;

pub use entities::EntityIndex;
pub(crate) use index::split_owners;
pub use index::{COMMIT_EVERY, IndexOrigin, MAX_QUERY_TERMS, MemoryIndex};
pub(crate) use recall::recall_skipping;
pub use recall::{RecallOptions, RecallWeights, Recalled, recall};
pub use semantic::{MAX_EMBEDDING_DIMENSIONS, check_embedding, cosine};

use crate::model::{EntityId, MemoryId, MemoryKind, Millis};

/// A memory to form: what [`crate::Engine::add_memory`] turns into a
/// [`crate::Event::MemoryAdded`] with a fresh id. Deserialises from JSON with these field
/// names; only `owner` and `text` are required.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMemory {
    /// Whose memory (the point of view).
    pub owner: EntityId,
    /// Who else witnessed it (the owner is always added).
    #[serde(default)]
    pub witnesses: Vec<EntityId>,
    /// The text, from the owner's point of view.
    pub text: String,
    /// What kind of memory it is (default: an utterance).
    #[serde(default = "utterance")]
    pub kind: MemoryKind,
    /// How much it matters, 0–1 (default 0.5).
    #[serde(default = "half")]
    pub significance: f64,
    /// When it formed (default: the world's clock).
    #[serde(default)]
    pub created: Option<Millis>,
    /// Always in the owner's prompt, whatever the query (default false).
    #[serde(default)]
    pub pinned: bool,
    /// The host's vector for the text, for semantic recall (default none).
    #[serde(default)]
    pub embedding: Option<Vec<f32>>,
    /// For a reflection: the owner's own memories it rests on (default none).
    #[serde(default)]
    pub sources: Vec<MemoryId>,
}

fn utterance() -> MemoryKind {
    MemoryKind::Utterance
}

fn half() -> f64 {
    0.5
}

impl NewMemory {
    /// A memory of `owner` with `text`, the other fields at their defaults.
    pub fn new(owner: EntityId, text: impl Into<String>) -> NewMemory {
        NewMemory {
            owner,
            witnesses: Vec::new(),
            text: text.into(),
            kind: MemoryKind::Utterance,
            significance: 0.5,
            created: None,
            pinned: false,
            embedding: None,
            sources: Vec::new(),
        }
    }

    /// Reads one from a JSON object.
    pub fn from_json(json: &str) -> crate::Result<NewMemory> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| crate::Error::invalid("memory", format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(crate::Error::invalid("memory", "a memory is a JSON object"));
        }
        serde_json::from_value(value).map_err(|e| crate::Error::invalid("memory", e.to_string()))
    }
}
