//! Memories: per point of view, with the set of entities that witnessed what they record.

use super::{EntityId, MemoryId, Millis, SceneId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The entities that witnessed something. A speaker sees a memory only if it is in this set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WitnessSet(pub BTreeSet<EntityId>);

impl WitnessSet {
    /// True if `id` witnessed it.
    pub fn contains(&self, id: EntityId) -> bool {
        self.0.contains(&id)
    }

    /// The witnesses in id order.
    pub fn iter(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.0.iter().copied()
    }

    /// The number of witnesses.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nobody witnessed it.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<EntityId> for WitnessSet {
    fn from_iter<I: IntoIterator<Item = EntityId>>(iter: I) -> Self {
        WitnessSet(iter.into_iter().collect())
    }
}

/// What a memory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// Something said.
    Utterance,
    /// A closed scene, summarised from the owner's point of view.
    SceneSummary,
    /// The gist of a closed scoped event.
    EventGist,
    /// The owner's own thought about what happened.
    Reflection,
}

/// How far a memory has faded (docs/architecture.md): full → summary → residue → forgotten.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecayStage {
    /// Verbatim.
    #[default]
    Full,
    /// Reduced to a summary.
    Summary,
    /// A trace.
    Residue,
    /// Gone from recall.
    Forgotten,
}

impl Memory {
    /// Whether recall may return it: not once it is reduced to a summary (the scene summary
    /// stands for it) or forgotten.
    pub fn recallable(&self) -> bool {
        !matches!(self.decay, DecayStage::Summary | DecayStage::Forgotten)
    }
}

/// A memory held by one entity (its owner, the point of view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// The memory's id.
    pub id: MemoryId,
    /// Whose memory it is.
    pub owner: EntityId,
    /// Who witnessed what it records; always includes the owner.
    pub witnesses: WitnessSet,
    /// The text, written from the owner's point of view.
    pub text: String,
    /// What kind of memory it is.
    pub kind: MemoryKind,
    /// How much it matters, in [0, 1].
    pub significance: f64,
    /// When it was formed (host clock).
    pub created: Millis,
    /// When it was last recalled.
    #[serde(default)]
    pub last_accessed: Option<Millis>,
    /// How often it was recalled: each recall lengthens the half-life of its recency (see
    /// [`crate::memory::RecallOptions::half_life_ms`]).
    #[serde(default)]
    pub access_count: u32,
    /// How far it has faded.
    #[serde(default)]
    pub decay: DecayStage,
    /// Always in the owner's prompt (a vow, a name, a wound), whatever the query: served by
    /// [`crate::Engine::always_loaded`], not by retrieval.
    #[serde(default)]
    pub pinned: bool,
    /// A vector the host computed for the text (semantic recall), recorded so that replay
    /// never embeds again. `None`: recalled by its words only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// For the memory of a line: the scene it was said in. When that scene closes, its
    /// witnesses' summaries stand for its lines: the line memories are compressed (decay
    /// stage [`DecayStage::Summary`]) and recall no longer returns them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<SceneId>,
}

/// The longest vector accepted.
pub const MAX_EMBEDDING_DIMENSIONS: usize = 4096;

/// Refuses a vector that is empty, too long, not finite or all zeros.
pub fn check_embedding(v: &[f32]) -> Result<(), String> {
    if v.is_empty() || v.len() > MAX_EMBEDDING_DIMENSIONS {
        return Err(format!(
            "an embedding has 1 to {MAX_EMBEDDING_DIMENSIONS} dimensions, not {}",
            v.len()
        ));
    }
    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
        return Err(format!("an embedding holds numbers only, not {x}"));
    }
    if v.iter().all(|x| *x == 0.0) {
        return Err("an embedding of zeros has no direction".into());
    }
    Ok(())
}
