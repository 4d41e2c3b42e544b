//! Memories: per point of view, with the set of entities that witnessed what they record.

use super::{EntityId, MemoryId, Millis, SceneId};
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// The entities that witnessed something, in id order, none twice. A speaker sees a memory
/// only if it is in this set.
///
/// Kept as a sorted array, two witnesses inline: a million memories of a long campaign each
/// had a set of their own, and a `BTreeSet` gave each an allocation of 112 bytes (a fifth of
/// the memory a memory took when loaded; benches/README.md, "Witnesses inline"). It reads and
/// writes as the sequence of its ids in order, as the `BTreeSet` did: the format is the same.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WitnessSet(SmallVec<[EntityId; 2]>);

impl WitnessSet {
    /// Nobody.
    pub fn new() -> Self {
        WitnessSet::default()
    }

    /// True if `id` witnessed it.
    pub fn contains(&self, id: EntityId) -> bool {
        self.0.binary_search(&id).is_ok()
    }

    /// The witnesses in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = EntityId> + ExactSizeIterator + '_ {
        self.0.iter().copied()
    }

    /// The witnesses in id order, as a slice.
    pub fn as_slice(&self) -> &[EntityId] {
        &self.0
    }

    /// The number of witnesses.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nobody witnessed it.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `id`; false if it was there already.
    pub fn insert(&mut self, id: EntityId) -> bool {
        match self.0.binary_search(&id) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, id);
                true
            }
        }
    }

    /// Takes `id` out; false if it was not there.
    pub fn remove(&mut self, id: EntityId) -> bool {
        match self.0.binary_search(&id) {
            Ok(at) => {
                self.0.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// Keeps only the witnesses `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(EntityId) -> bool) {
        self.0.retain(|e| keep(*e));
    }

    /// In id order, none twice.
    fn settle(&mut self) {
        if !self.0.is_sorted_by(|a, b| a < b) {
            self.0.sort_unstable();
            self.0.dedup();
        }
    }
}

impl FromIterator<EntityId> for WitnessSet {
    fn from_iter<I: IntoIterator<Item = EntityId>>(iter: I) -> Self {
        let mut set = WitnessSet(iter.into_iter().collect());
        set.settle();
        set
    }
}

impl Extend<EntityId> for WitnessSet {
    fn extend<I: IntoIterator<Item = EntityId>>(&mut self, iter: I) {
        self.0.extend(iter);
        self.settle();
    }
}

impl<'a> IntoIterator for &'a WitnessSet {
    type Item = EntityId;
    type IntoIter = std::iter::Copied<std::slice::Iter<'a, EntityId>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().copied()
    }
}

impl Serialize for WitnessSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl<'de> Deserialize<'de> for WitnessSet {
    /// Any sequence of ids; put in order and said once each, as a `BTreeSet` read them.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ids;
        impl<'de> Visitor<'de> for Ids {
            type Value = WitnessSet;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence of entity ids")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WitnessSet, A::Error> {
                // One allocation for a set of more than two (the length a format gives, up to
                // a bound: a length is not trusted further than that).
                let mut ids = SmallVec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                while let Some(id) = seq.next_element::<EntityId>()? {
                    ids.push(id);
                }
                let mut set = WitnessSet(ids);
                set.settle();
                Ok(set)
            }
        }
        d.deserialize_seq(Ids)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64),
        Remove(u64),
        Retain(u64),
        Extend(Vec<u64>),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..12u64).prop_map(Op::Insert),
            (0..12u64).prop_map(Op::Remove),
            (1..4u64).prop_map(Op::Retain),
            proptest::collection::vec(0..12u64, 0..6).prop_map(Op::Extend),
        ]
    }

    proptest! {
        /// A witness set is the set of its ids: whatever is done to it, it holds what a
        /// `BTreeSet` would, in id order, and says so in the same answers.
        #[test]
        fn a_witness_set_behaves_as_a_set(
            start in proptest::collection::vec(0..12u64, 0..8),
            ops in proptest::collection::vec(op(), 0..24),
        ) {
            let mut set: WitnessSet = start.iter().map(|i| EntityId(*i)).collect();
            let mut model: BTreeSet<EntityId> = start.iter().map(|i| EntityId(*i)).collect();
            for op in ops {
                match op {
                    Op::Insert(i) => prop_assert_eq!(set.insert(EntityId(i)), model.insert(EntityId(i))),
                    Op::Remove(i) => prop_assert_eq!(set.remove(EntityId(i)), model.remove(&EntityId(i))),
                    Op::Retain(m) => {
                        set.retain(|e| e.0 % m == 0);
                        model.retain(|e| e.0 % m == 0);
                    }
                    Op::Extend(ids) => {
                        set.extend(ids.iter().map(|i| EntityId(*i)));
                        model.extend(ids.iter().map(|i| EntityId(*i)));
                    }
                }
                prop_assert_eq!(set.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(set.len(), model.len());
                for i in 0..12 {
                    prop_assert_eq!(set.contains(EntityId(i)), model.contains(&EntityId(i)));
                }
            }
        }

        /// A witness set reads and writes as the `BTreeSet` it replaced did, in both of rp's
        /// formats: the same bytes out, and any sequence of ids in (out of order, an id twice)
        /// read as the set of them.
        #[test]
        fn a_witness_set_reads_and_writes_as_a_btree_set(
            ids in proptest::collection::vec(0..1_000u64, 0..20),
        ) {
            let ids: Vec<EntityId> = ids.into_iter().map(EntityId).collect();
            let set: WitnessSet = ids.iter().copied().collect();
            let model: BTreeSet<EntityId> = ids.iter().copied().collect();
            prop_assert_eq!(rmp_serde::to_vec(&set).unwrap(), rmp_serde::to_vec(&model).unwrap());
            prop_assert_eq!(serde_json::to_string(&set).unwrap(), serde_json::to_string(&model).unwrap());
            let from_list: WitnessSet = rmp_serde::from_slice(&rmp_serde::to_vec(&ids).unwrap()).unwrap();
            prop_assert_eq!(&from_list, &set);
            let from_json: WitnessSet = serde_json::from_str(&serde_json::to_string(&ids).unwrap()).unwrap();
            prop_assert_eq!(&from_json, &set);
        }
    }

    #[test]
    fn two_witnesses_fit_where_a_btree_set_did() {
        assert_eq!(
            std::mem::size_of::<WitnessSet>(),
            std::mem::size_of::<BTreeSet<EntityId>>()
        );
        let two: WitnessSet = [EntityId(9), EntityId(3)].into_iter().collect();
        assert!(!two.0.spilled());
        assert_eq!(two.as_slice(), &[EntityId(3), EntityId(9)]);
    }

    #[test]
    fn a_witness_set_that_is_not_a_list_of_ids_is_refused() {
        for bad in [r#"{"a": 1}"#, "7"] {
            let e = serde_json::from_str::<WitnessSet>(bad).unwrap_err();
            assert!(
                e.to_string().contains("a sequence of entity ids"),
                "{bad}: {e}"
            );
        }
        for bad in [r#"[1, "two"]"#, r#"[-1]"#] {
            let e = serde_json::from_str::<WitnessSet>(bad).unwrap_err();
            assert!(e.to_string().contains("invalid"), "{bad}: {e}");
        }
        assert!(rmp_serde::from_slice::<WitnessSet>(&[0x91, 0xa1, b'x']).is_err());
    }
}
