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
    /// A thought a stimulus led the owner to (docs/drives.md, "Layers").
    Thought,
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
    /// How often it was recalled (each recall reinforces it: [`Memory::stability`]).
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
    /// How long it lasts (docs/memory.md): the host time, in ms, after which its retention
    /// falls to 0.9 if it is not recalled. 0 until it is first reinforced: then it is the
    /// stability its significance gives it ([`Memory::stability`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stability: f64,
    /// At stage [`DecayStage::Summary`], the shorter text that stands for it (what prompts and
    /// recall see); `None` for the line of a closed scene, which its scene's summary stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The feeling it left (`"fond"`, `"uneasy"`), given with its summary: what remains of it as
    /// a residue, on the owner's edge toward [`Memory::about`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeling: Option<String>,
    /// Whom it is mostly about (one of its other witnesses), given with its summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<EntityId>,
    /// For a [`MemoryKind::Reflection`]: the owner's memories it rests on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<MemoryId>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Memory {
    /// A new memory: never recalled, whole, not pinned, without a vector, a scene or sources
    /// (set those fields after, as needed).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: MemoryId,
        owner: EntityId,
        witnesses: WitnessSet,
        text: impl Into<String>,
        kind: MemoryKind,
        significance: f64,
        created: Millis,
    ) -> Memory {
        Memory {
            id,
            owner,
            witnesses,
            text: text.into(),
            kind,
            significance,
            created,
            last_accessed: None,
            access_count: 0,
            decay: DecayStage::Full,
            pinned: false,
            embedding: None,
            scene: None,
            stability: 0.0,
            summary: None,
            feeling: None,
            about: None,
            sources: Vec::new(),
        }
    }

    /// Whether recall may return it and prompts may show it: whole, or reduced to a summary
    /// of its own. Not the line of a closed scene (its scene's summary stands for it), a
    /// residue or a forgotten memory.
    pub fn recallable(&self) -> bool {
        match self.decay {
            DecayStage::Full => true,
            DecayStage::Summary => self.summary.is_some(),
            DecayStage::Residue | DecayStage::Forgotten => false,
        }
    }

    /// The text prompts and recall see: the summary once it has one, else the text.
    pub fn shown_text(&self) -> &str {
        self.summary.as_deref().unwrap_or(&self.text)
    }

    /// Whether it fades at all: pinned memories and event gists (a promotion category of
    /// docs/story.md) never do.
    pub fn decays(&self) -> bool {
        !self.pinned && self.kind != MemoryKind::EventGist
    }

    /// Its stability in ms: recorded once reinforced, else what its significance gives a new
    /// memory when `base_ms` is the stability at significance 0.5.
    pub fn stability(&self, base_ms: f64) -> f64 {
        if self.stability > 0.0 {
            self.stability
        } else {
            super::retention::initial_stability(base_ms, self.significance)
        }
    }

    /// When it was last reviewed: recalled, or else formed.
    pub fn reviewed(&self) -> Millis {
        self.last_accessed.unwrap_or(self.created).max(self.created)
    }

    /// Its retention at `now` (1 for a memory that never fades), in (0, 1].
    pub fn retention(&self, base_ms: f64, now: Millis) -> f64 {
        if !self.decays() {
            return 1.0;
        }
        let elapsed = now.saturating_sub(self.reviewed()) as f64;
        super::retention::retention(elapsed, self.stability(base_ms))
    }
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

/// A memory moved on by a decay pass without a model: a summary (or a closed scene's line) to a
/// residue, a residue to forgotten.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageChange {
    /// Which memory.
    pub id: MemoryId,
    /// Its new stage: [`DecayStage::Residue`] or [`DecayStage::Forgotten`].
    pub stage: DecayStage,
}

/// A whole memory reduced to a summary: the fast model's shorter text, recorded so that replay
/// never asks again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemorySummary {
    /// Which memory.
    pub id: MemoryId,
    /// The shorter text.
    pub text: String,
    /// The feeling it left, a word or a few.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeling: Option<String>,
    /// Whom it is mostly about: one of its other witnesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<EntityId>,
}

/// The longest feeling, in bytes.
pub const MAX_FEELING_BYTES: usize = 80;

/// The rule of fading under one owner's settings, worked out once (docs/memory.md): the decay
/// pass reads it for every memory of that owner, so each memory costs a multiplication and a
/// comparison, not a power.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FadeRule {
    /// The stability of a memory of significance 0.5, in ms.
    pub base_ms: f64,
    /// The stability at which a memory stops fading, in ms.
    pub consolidated_ms: f64,
    /// Recalls after which a summary keeps its stage.
    pub keep_recalls: u32,
    /// For the thresholds of summary, residue and forgotten, the time it takes retention to
    /// fall to each, in stabilities.
    span: [f64; 3],
}

impl FadeRule {
    /// The rule of settings `s`.
    pub fn of(s: &super::DriveSettings) -> FadeRule {
        let below = [s.summary_below, s.residue_below, s.forget_below];
        // `time_to` of a threshold it never falls to (0 or 1) is never.
        let span = below.map(|r| super::retention::time_to(r, 1.0).unwrap_or(f64::INFINITY));
        FadeRule {
            base_ms: s.memory_stability_ms(),
            consolidated_ms: s.consolidated_days * super::retention::DAY_MS,
            keep_recalls: s.keep_recalls,
            span,
        }
    }
}

impl Memory {
    /// The stage it moves to next and the first moment its retention is below that stage's
    /// threshold, under `rule`; `None` when it stays where it is: it never fades, it is
    /// consolidated (its stability reached `consolidated_days`), it is a summary recalled
    /// `keep_recalls` times, or it is forgotten.
    pub fn fading(&self, rule: &FadeRule) -> Option<(DecayStage, Millis)> {
        self.fading_from(self.decay, rule)
    }

    /// [`Memory::fading`] as if it were at stage `stage`.
    pub fn fading_from(&self, stage: DecayStage, rule: &FadeRule) -> Option<(DecayStage, Millis)> {
        if !self.decays() {
            return None;
        }
        let (next, k) = match stage {
            DecayStage::Full => (DecayStage::Summary, 0),
            DecayStage::Summary if self.access_count >= rule.keep_recalls => return None,
            DecayStage::Summary => (DecayStage::Residue, 1),
            DecayStage::Residue => (DecayStage::Forgotten, 2),
            DecayStage::Forgotten => return None,
        };
        let stability = self.stability(rule.base_ms);
        if stability >= rule.consolidated_ms {
            return None;
        }
        // Retention is below the threshold strictly after this many ms: the first whole
        // millisecond past it.
        let after = stability.max(1.0) * rule.span[k];
        if !after.is_finite() {
            return None;
        }
        let at = self
            .reviewed()
            .saturating_add(after.min(1e15).floor() as Millis)
            .saturating_add(1);
        Some((next, at))
    }
}
