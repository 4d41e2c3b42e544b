//! The index of past beliefs (docs/history.md, "How it is answered"): the versions of what a
//! belief answer reads, each kept with the event that set it, so `beliefs_at` reads the past
//! without rebuilding a world.
//!
//! **The rule.** For each key of what [`BeliefReads`] and `World::edges_from` read (an
//! entity's name and mentioned flag, a belief held, an availability seen or reported, an edge,
//! an entity's drive settings) and for the world's clock, the index keeps every value the key
//! took, each under the (stored branch, seq) of the event that set it; a key's value at a
//! point of a branch is its latest version along the branch's stretches up to that point, and
//! a key without one there was never set (absent; the clock: a new world's). The versions come
//! from `World::belief_changes`, which finds them by diffing the world before and after each
//! event as a replay applies it: so an answer read from them is `beliefs_of` on the world of
//! that point, read through the same code ([`beliefs_read`]), whatever the event kinds.
//!
//! **What is recorded.** A stored branch's stretch is recorded from its first event on, in
//! order, with no gap: `indexed` says how far. An event is recorded only when it is the next of
//! its stretch (so a replay from a checkpoint or a snapshot records what follows the recorded
//! part and nothing else), and a question is answered from the index only when every stretch of
//! its branch up to its point is recorded; otherwise the engine first replays what is missing.
//! Stretches never change once written (a rewind starts a new stored branch), so versions stay
//! true; deleting a branch drops the versions of the events it purges, and a storage failure
//! that makes the engine re-read its store drops them all.
//!
//! **What it costs.** One B-tree entry per change (key, stored branch, seq, value); the beliefs
//! held and the edges as shared records, which a version keeps alive once the world replaced
//! them. In the 1M-event bench, where every line heard changes each hearer's sight of the
//! speaker, that is 1.78 million versions and 443 MB, about 250 bytes each (benches/README.md,
//! "What did X believe at time T").

use super::super::catalog::Segment;
use crate::log::{
    BeliefChange, BeliefMaps, BeliefReads, BeliefView, SettingsReach, World, beliefs_read,
};
use crate::model::{Belief, DriveConfig, DriveSettings, Edge, EntityId, Millis, PersonBelief, Seq};
use crate::store::BranchId;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A key's versions: by (key, stored branch, seq of the event that set it).
type Versions<K, V> = BTreeMap<(K, BranchId, Seq), V>;

/// A key with the lowest and highest ids, for ranges over pairs.
const LOWEST: EntityId = EntityId(0);
const HIGHEST: EntityId = EntityId(u64::MAX);

/// The value of `key` at the end of `segments` (a branch's stretches up to a point, oldest
/// first): its latest version in the latest stretch that has one.
fn value_at<'v, K: Ord + Copy, V>(
    versions: &'v Versions<K, V>,
    key: K,
    segments: &[Segment],
) -> Option<&'v V> {
    segments.iter().rev().find_map(|seg| {
        versions
            .range((key, seg.branch, seg.first)..=(key, seg.branch, seg.last))
            .next_back()
            .map(|(_, v)| v)
    })
}

/// The keys that have any version in `range` (each once, in order).
fn keys_in<K: Ord + Copy, V>(
    versions: &Versions<K, V>,
    range: std::ops::RangeInclusive<(K, BranchId, Seq)>,
) -> Vec<K> {
    let mut keys: Vec<K> = versions.range(range).map(|((k, _, _), _)| *k).collect();
    keys.dedup();
    keys
}

/// The versions of what a belief answer reads, on every branch recorded.
#[derive(Debug, Default)]
pub(in crate::engine) struct BeliefIndex {
    /// By stored branch: the last seq of its stretch recorded (all before it are); absent: none.
    indexed: HashMap<BranchId, Seq>,
    clock: BTreeMap<(BranchId, Seq), Millis>,
    names: Versions<EntityId, Option<(Arc<str>, bool)>>,
    people: Versions<(EntityId, EntityId), Option<Arc<PersonBelief>>>,
    seen: Versions<(EntityId, EntityId), Option<Belief>>,
    reported: Versions<EntityId, Option<Belief>>,
    edges: Versions<(EntityId, EntityId), Option<Arc<Edge>>>,
    settings: Versions<EntityId, DriveSettings>,
}

impl BeliefIndex {
    /// Drops every version.
    pub fn clear(&mut self) {
        *self = BeliefIndex::default();
    }

    /// How many versions are kept.
    pub fn len(&self) -> usize {
        self.clock.len()
            + self.names.len()
            + self.people.len()
            + self.seen.len()
            + self.reported.len()
            + self.edges.len()
            + self.settings.len()
    }

    /// Drops the versions of `branch` after `keep` (its events there are purged).
    pub fn forget(&mut self, branch: BranchId, keep: Seq) {
        fn drop_after<K: Ord, V>(v: &mut Versions<K, V>, branch: BranchId, keep: Seq) {
            v.retain(|(_, b, s), _| *b != branch || *s <= keep);
        }
        self.clock.retain(|(b, s), _| *b != branch || *s <= keep);
        drop_after(&mut self.names, branch, keep);
        drop_after(&mut self.people, branch, keep);
        drop_after(&mut self.seen, branch, keep);
        drop_after(&mut self.reported, branch, keep);
        drop_after(&mut self.edges, branch, keep);
        drop_after(&mut self.settings, branch, keep);
        if let Some(last) = self.indexed.get_mut(&branch) {
            *last = (*last).min(keep);
        }
    }

    /// The last seq of `seg`'s stored branch recorded (its base when none is).
    fn recorded(&self, seg: &Segment) -> Seq {
        self.indexed
            .get(&seg.branch)
            .copied()
            .unwrap_or(0)
            .max(seg.first - 1)
    }

    /// Whether the event of `seq`, in the stretch `seg`, is the next one to record.
    pub fn wants(&self, seg: &Segment, seq: Seq) -> bool {
        self.recorded(seg) + 1 == seq
    }

    /// The last seq along `segments` up to which everything is recorded, if something after
    /// it (up to the end of `segments`) is not.
    pub fn missing_after(&self, segments: &[Segment]) -> Option<Seq> {
        segments
            .iter()
            .find(|seg| self.recorded(seg) < seg.last)
            .map(|seg| self.recorded(seg))
    }

    /// Records what the event of `seq` (in the stored branch `branch`) changed: the world was
    /// `before` (its clock `before_now`), the event's settings reach `reach`, and is `world`.
    pub fn record(
        &mut self,
        branch: BranchId,
        seq: Seq,
        before_now: Millis,
        before: &BeliefMaps,
        reach: SettingsReach,
        world: &World,
    ) {
        if world.now() != before_now {
            self.clock.insert((branch, seq), world.now());
        }
        world.belief_changes(before, reach, &mut |change| match change {
            BeliefChange::Named(id, named) => {
                let named = named.map(|(n, m)| (Arc::from(n), m));
                self.names.insert((id, branch, seq), named);
            }
            BeliefChange::Person(k, p) => {
                self.people
                    .insert((k, branch, seq), p.map(|p| Arc::new(p.clone())));
            }
            BeliefChange::Seen(k, b) => {
                self.seen.insert((k, branch, seq), b);
            }
            BeliefChange::Reported(k, b) => {
                self.reported.insert((k, branch, seq), b);
            }
            BeliefChange::Edge(k, e) => {
                self.edges.insert((k, branch, seq), e.cloned());
            }
            BeliefChange::Settings(id, s) => {
                // Kept only when they changed (a reach names whom they may have changed for).
                if self.settings_before(id, branch, seq) != Some(*s) {
                    self.settings.insert((id, branch, seq), *s);
                }
            }
        });
        self.indexed.insert(branch, seq);
    }

    /// The settings `id` had before `seq` of `branch` as recorded in that stretch or, when it
    /// has none there, `None` (a repeat version then is harmless: equal values).
    fn settings_before(&self, id: EntityId, branch: BranchId, seq: Seq) -> Option<DriveSettings> {
        self.settings
            .range((id, branch, 0)..(id, branch, seq))
            .next_back()
            .map(|(_, s)| *s)
    }

    /// What was true at the end of `segments` (recorded all through: see
    /// [`BeliefIndex::missing_after`]).
    pub fn at<'a>(&'a self, segments: &'a [Segment]) -> IndexedPoint<'a> {
        IndexedPoint {
            index: self,
            segments,
        }
    }

    /// The seq of the first event along `segments` that moved the clock past `time`, if any.
    pub fn first_after(&self, segments: &[Segment], time: Millis) -> Option<Seq> {
        segments.iter().find_map(|seg| {
            self.clock
                .range((seg.branch, seg.first)..=(seg.branch, seg.last))
                .find(|(_, now)| **now > time)
                .map(|((_, s), _)| *s)
        })
    }
}

/// The index read at one point of one branch: what the world then answered.
pub(in crate::engine) struct IndexedPoint<'a> {
    index: &'a BeliefIndex,
    segments: &'a [Segment],
}

impl IndexedPoint<'_> {
    /// The world's clock then.
    pub fn now(&self) -> Millis {
        let last = self.segments.iter().rev().find_map(|seg| {
            self.index
                .clock
                .range((seg.branch, seg.first)..=(seg.branch, seg.last))
                .next_back()
                .map(|(_, now)| *now)
        });
        last.unwrap_or_else(|| World::new().now())
    }

    /// What `observer` believed then, read at `now` ([`World::beliefs_of`]).
    pub fn beliefs_of(&self, observer: EntityId, now: Millis) -> Vec<BeliefView> {
        beliefs_read(self, observer, now)
    }

    /// The edges going out of `from` then, by target.
    pub fn edges_from(&self, from: EntityId) -> Vec<Edge> {
        let keys = keys_in(
            &self.index.edges,
            ((from, LOWEST), 0, 0)..=((from, HIGHEST), BranchId::MAX, Seq::MAX),
        );
        keys.into_iter()
            .filter_map(|k| {
                value_at(&self.index.edges, k, self.segments)?
                    .as_deref()
                    .cloned()
            })
            .collect()
    }
}

impl BeliefReads for IndexedPoint<'_> {
    fn candidates(&self, observer: EntityId) -> Vec<EntityId> {
        let pairs = ((observer, LOWEST), 0, 0)..=((observer, HIGHEST), BranchId::MAX, Seq::MAX);
        let everyone = (LOWEST, 0, 0)..=(HIGHEST, BranchId::MAX, Seq::MAX);
        let mut out: Vec<EntityId> = keys_in(&self.index.people, pairs.clone())
            .into_iter()
            .chain(keys_in(&self.index.seen, pairs))
            .map(|(_, about)| about)
            .collect();
        out.extend(keys_in(&self.index.reported, everyone));
        out
    }

    fn named(&self, id: EntityId) -> Option<(&str, bool)> {
        value_at(&self.index.names, id, self.segments)?
            .as_ref()
            .map(|(n, m)| (n.as_ref(), *m))
    }

    fn person(&self, observer: EntityId, about: EntityId) -> Option<&PersonBelief> {
        value_at(&self.index.people, (observer, about), self.segments)?.as_deref()
    }

    fn seen(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        *value_at(&self.index.seen, (observer, about), self.segments)?
    }

    fn reported(&self, about: EntityId) -> Option<Belief> {
        *value_at(&self.index.reported, about, self.segments)?
    }

    fn settings(&self, observer: EntityId) -> DriveSettings {
        // Every entity's settings are recorded when it is created (its event's reach names
        // it); the defaults only for an observer that never existed, which believes nothing.
        value_at(&self.index.settings, observer, self.segments)
            .copied()
            .unwrap_or_else(|| DriveSettings::resolve(&DriveConfig::default(), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Event, settings_reach};
    use crate::model::{
        BeliefObservation, BeliefSource, EntityState, FactSheet, Feeling, Utterance, UtteranceId,
    };

    fn stretch(branch: BranchId, first: Seq, last: Seq) -> Segment {
        Segment {
            branch,
            first,
            last,
        }
    }

    fn person(id: u64, name: &str) -> Event {
        Event::EntityCreated {
            id: EntityId(id),
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: FactSheet::default(),
            host_controlled: false,
            state: EntityState::default(),
        }
    }

    /// A log that changes each thing a belief reads: people, a line heard, a belief with a
    /// feeling toward a third, a rename of the third, a report, drive settings, an edge, time,
    /// a removal.
    fn log() -> Vec<Event> {
        let line = |id: u64, speaker: u64, at: Millis| Event::AssistantTurn {
            utterance: Utterance {
                id: UtteranceId(id),
                speaker: EntityId(speaker),
                text: "Evening.".into(),
                at,
                witnesses: [1, 2, 3].map(EntityId).into_iter().collect(),
                model: None,
                scene: None,
            },
        };
        let believe = Event::BeliefObserved {
            observation: BeliefObservation {
                observer: EntityId(1),
                about: EntityId(2),
                mood: Some("tired".into()),
                energy: None,
                availability: None,
                traits: vec!["stubborn".into()],
                feelings: vec![Feeling {
                    toward: EntityId(3),
                    sentiment: -0.5,
                    text: "resents him".into(),
                }],
                confidence: 0.8,
                source: BeliefSource::Observed,
                at: 2_000,
            },
        };
        vec![
            Event::WorldCreated {
                name: "w".into(),
                now: 1_000,
                settings: Default::default(),
            },
            person(1, "Mira"),
            person(2, "Wren"),
            person(3, "Tobias"),
            line(10, 2, 1_000),
            Event::TimeAdvanced { to: 2_000 },
            believe,
            Event::EntityEdited {
                id: EntityId(3),
                name: Some("Old Tobias".into()),
                aliases: None,
                facts: None,
                host_controlled: None,
            },
            Event::AvailabilityReported {
                about: EntityId(2),
                availability: 0.3,
                at: 2_000,
            },
            Event::DrivesConfigured {
                entity: None,
                config: Box::new(DriveConfig {
                    belief_half_life_hours: Some(0.5),
                    ..Default::default()
                }),
            },
            Event::EdgeUpdated {
                edge: Edge {
                    affinity: 0.4,
                    ..Edge::new(EntityId(1), EntityId(2))
                },
            },
            Event::TimeAdvanced { to: 9_000_000 },
            line(11, 3, 9_000_000),
            Event::EntityRemoved { id: EntityId(2) },
        ]
    }

    /// Replays `log` on stored branch 1, recording every event.
    fn recorded(log: &[Event]) -> (BeliefIndex, Vec<World>) {
        let mut index = BeliefIndex::default();
        let mut world = World::new();
        let mut worlds = Vec::new();
        for (i, e) in log.iter().enumerate() {
            let seq = i as Seq + 1;
            assert!(index.wants(&stretch(1, 1, 100), seq));
            let (now, maps, reach) = (world.now(), world.belief_maps(), settings_reach(e));
            world.apply(e).expect("applies");
            index.record(1, seq, now, &maps, reach, &world);
            worlds.push(world.clone());
        }
        (index, worlds)
    }

    #[test]
    fn history_index_answers_what_the_world_answered_at_every_seq() {
        let log = log();
        let (index, worlds) = recorded(&log);
        for (i, w) in worlds.iter().enumerate() {
            let segments = [stretch(1, 1, i as Seq + 1)];
            let at = index.at(&segments);
            assert_eq!(at.now(), w.now(), "seq {}", i + 1);
            for who in 1..=3 {
                let who = EntityId(who);
                assert_eq!(at.named(who), BeliefReads::named(w, who), "seq {}", i + 1);
                for now in [w.now(), w.now() + 3_600_000] {
                    assert_eq!(
                        at.beliefs_of(who, now),
                        w.beliefs_of(who, now),
                        "{who} at seq {}",
                        i + 1
                    );
                }
                let edges: Vec<Edge> = w.edges_from(who).cloned().collect();
                assert_eq!(at.edges_from(who), edges, "seq {}", i + 1);
            }
        }
        // Mira came to believe things of Wren, with a feeling toward Tobias renamed, and
        // forgot them when Wren was removed.
        let of_wren = |w: &World| {
            w.beliefs_of(EntityId(1), w.now())
                .into_iter()
                .find(|b| b.about == EntityId(2))
        };
        assert!(worlds.iter().any(|w| {
            of_wren(w).is_some_and(|b| {
                b.feelings
                    .iter()
                    .any(|f| f.value.toward_name == "Old Tobias")
            })
        }));
        assert!(of_wren(worlds.last().expect("worlds")).is_none());
    }

    #[test]
    fn history_index_reads_a_fork_from_its_parent_up_to_the_fork_point() {
        let mut index = BeliefIndex::default();
        let v = |b: BranchId, s: Seq| {
            (
                (EntityId(1), b, s),
                Some(Belief {
                    availability: s as f64,
                    at: 0,
                }),
            )
        };
        index.reported.extend([v(1, 2), v(1, 5), v(2, 4)]);
        let on = |segments: &[Segment]| {
            index
                .at(segments)
                .reported(EntityId(1))
                .map(|b| b.availability)
        };
        // Branch 2 forked from branch 1 at seq 3.
        assert_eq!(on(&[stretch(1, 1, 6)]), Some(5.0));
        assert_eq!(on(&[stretch(1, 1, 4)]), Some(2.0));
        assert_eq!(on(&[stretch(1, 1, 1)]), None);
        assert_eq!(on(&[stretch(1, 1, 3), stretch(2, 4, 6)]), Some(4.0));
        assert_eq!(on(&[stretch(1, 1, 3)]), Some(2.0));
    }

    #[test]
    fn history_index_records_each_stretch_in_order_and_forgets_what_is_purged() {
        let log = log();
        let (mut index, _) = recorded(&log);
        let n = log.len() as Seq;
        assert_eq!(index.missing_after(&[stretch(1, 1, n)]), None);
        assert_eq!(index.missing_after(&[stretch(1, 1, n + 2)]), Some(n));
        assert!(index.wants(&stretch(1, 1, n + 2), n + 1));
        assert!(!index.wants(&stretch(1, 1, n + 2), n));
        // A fork's stretch is recorded from its first event on.
        assert_eq!(
            index.missing_after(&[stretch(1, 1, 4), stretch(2, 5, 6)]),
            Some(4)
        );
        assert!(index.wants(&stretch(2, 5, 6), 5));
        let before = index.len();
        index.forget(1, 6);
        assert!(index.len() < before);
        assert_eq!(index.missing_after(&[stretch(1, 1, n)]), Some(6));
        assert!(index.clock.keys().all(|(_, s)| *s <= 6));
        index.clear();
        assert_eq!(index.len(), 0);
    }
}
