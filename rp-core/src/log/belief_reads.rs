//! What [`World::beliefs_of`] reads, as one trait, and how an event changes it: the ground an
//! index of past beliefs stands on (docs/history.md, "How it is answered").
//!
//! [`BeliefReads`] is the only way the belief reading (`beliefs_of`, `belief_about`, the
//! availability a drive reads) looks at a world: the compiler, not a list kept by hand, makes
//! sure it reads nothing else. Anything that answers these few questions as a world would at
//! some point answers `beliefs_of` exactly as that world would.
//!
//! [`World::belief_changes`] says what an event changed of it, found rather than predicted: the
//! entities' names, the beliefs held, the availability seen and reported and the edges (which a
//! question about the past reads beside the beliefs) by diffing the persistent maps kept before
//! the event ([`BeliefMaps`]) with the world after it (shared nodes are skipped, so the diff
//! costs what the event changed). Only the drive settings are predicted, by
//! [`settings_reach`], because the minds they live in are rewritten by every line heard and a
//! copy of them before each event would cost more than the rest together.

use super::World;
use super::layered::Diff;
use super::pairs::PairMap;
use super::table::Table;
use crate::log::Event;
use crate::model::{Belief, DriveSettings, Edge, Entity, EntityId, Millis, PersonBelief};
use imbl::OrdMap;
use imbl::ordmap::DiffItem;
use std::sync::Arc;

/// What the belief reading asks of a world. A superset of candidates is fine: a person of whom
/// nothing is held reads as no belief.
pub trait BeliefReads {
    /// Everyone `observer` may hold a belief about, in any order, repeats allowed: at least
    /// those it holds a [`PersonBelief`] or a seen availability of, and everyone the host
    /// reported on.
    fn candidates(&self, observer: EntityId) -> Vec<EntityId>;
    /// The entity's name and whether it is only mentioned; `None` if it does not exist.
    fn named(&self, id: EntityId) -> Option<(&str, bool)>;
    /// What `observer` believes of `about` (aspects and when each was observed).
    fn person(&self, observer: EntityId, about: EntityId) -> Option<&PersonBelief>;
    /// The availability of `about` that `observer` saw (a line heard, an initiation unanswered).
    fn seen(&self, observer: EntityId, about: EntityId) -> Option<Belief>;
    /// What the host last reported of `about`'s availability.
    fn reported(&self, about: EntityId) -> Option<Belief>;
    /// `observer`'s drive settings resolved (the half-lives beliefs fade with).
    fn settings(&self, observer: EntityId) -> DriveSettings;
}

impl BeliefReads for World {
    fn candidates(&self, observer: EntityId) -> Vec<EntityId> {
        let all = (observer, EntityId(0))..=(observer, EntityId(u64::MAX));
        self.people
            .range(all.clone())
            .map(|((_, b), _)| *b)
            .chain(self.beliefs.range(all.clone()).map(|((_, b), _)| *b))
            .chain(self.heard.range(all).map(|((_, b), _)| *b))
            .chain(self.reported.keys().copied())
            .collect()
    }

    fn named(&self, id: EntityId) -> Option<(&str, bool)> {
        self.entity(id).map(|e| (e.name.as_str(), e.mentioned))
    }

    fn person(&self, observer: EntityId, about: EntityId) -> Option<&PersonBelief> {
        self.people.get(&(observer, about))
    }

    fn seen(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        self.seen_availability(observer, about)
    }

    fn reported(&self, about: EntityId) -> Option<Belief> {
        self.reported.get(&about).copied()
    }

    fn settings(&self, observer: EntityId) -> DriveSettings {
        self.drive_settings(observer)
    }
}

/// The parts of a world that [`World::belief_changes`] diffs, kept before an event: clones of
/// persistent maps (O(1), sharing every node with the world until the event copies one).
#[derive(Clone, Debug)]
pub struct BeliefMaps {
    entities: Table<Entity>,
    edges: Table<Edge>,
    people: PairMap<PersonBelief>,
    beliefs: PairMap<Belief>,
    heard: PairMap<Millis>,
    reported: OrdMap<EntityId, Belief>,
}

/// One change an event made to what a belief read (or an entity's own edges) sees.
#[derive(Clone, Debug, PartialEq)]
pub enum BeliefChange<'a> {
    /// The entity now has this name and mentioned flag, or (`None`) no longer exists.
    Named(EntityId, Option<(&'a str, bool)>),
    /// `observer`'s belief about `about` is now this, or gone.
    Person((EntityId, EntityId), Option<&'a PersonBelief>),
    /// The availability `observer` saw of `about` is now this, or gone.
    Seen((EntityId, EntityId), Option<Belief>),
    /// The host's report of the entity's availability is now this, or gone.
    Reported(EntityId, Option<Belief>),
    /// The edge `from → to` is now this, or gone.
    Edge((EntityId, EntityId), Option<&'a Arc<Edge>>),
    /// The entity's drive settings may have changed: these are they now.
    Settings(EntityId, Box<DriveSettings>),
}

/// Whose drive settings an event may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsReach {
    /// No one's.
    Nobody,
    /// This entity's only.
    One(EntityId),
    /// Anyone's.
    Everyone,
}

/// Whose drive settings `event` may change. An entity's settings are resolved from the world's
/// drive config and its mind's (`World::drive_settings`); `apply` changes those only in
/// `configure_drives` (a [`Event::DrivesConfigured`]) and gives or takes a mind only where an
/// entity is created, edited, removed or mentioned. The events listed as `Nobody` are the
/// frequent ones known to do none of that; every other kind, including any added later, counts
/// for everyone: a slower index, never a wrong one.
pub fn settings_reach(event: &Event) -> SettingsReach {
    match event {
        Event::DrivesConfigured {
            entity: Some(id), ..
        }
        | Event::EntityCreated { id, .. }
        | Event::EntityEdited { id, .. }
        | Event::EntityRemoved { id }
        | Event::PersonMentioned { id, .. } => SettingsReach::One(*id),
        Event::UserTurn { .. }
        | Event::AssistantTurn { .. }
        | Event::ActivityChanged { .. }
        | Event::EntityStateChanged { .. }
        | Event::InventoryChanged { .. }
        | Event::EdgeUpdated { .. }
        | Event::EdgeRemoved { .. }
        | Event::MemoryAdded { .. }
        | Event::MemoryRemoved { .. }
        | Event::MemoriesRecalled { .. }
        | Event::TimeAdvanced { .. }
        | Event::BeliefObserved { .. }
        | Event::AvailabilityReported { .. }
        | Event::ContainerCreated { .. } => SettingsReach::Nobody,
        _ => SettingsReach::Everyone,
    }
}

/// An entity's name and mentioned flag, if it exists.
fn named(e: Option<&Arc<Entity>>) -> Option<(&str, bool)> {
    e.map(|e| (e.name.as_str(), e.mentioned))
}

impl World {
    /// What [`World::belief_changes`] compares the world after an event with.
    pub fn belief_maps(&self) -> BeliefMaps {
        BeliefMaps {
            entities: self.entities.clone(),
            edges: self.edges.clone(),
            people: self.people.clone(),
            beliefs: self.beliefs.clone(),
            heard: self.heard.clone(),
            reported: self.reported.clone(),
        }
    }

    /// Every change an event, just applied to a world that was `before`, made to what
    /// [`BeliefReads`] and [`World::edges_from`] read, each once, given to `out`: the names
    /// (of entities created, renamed, removed), beliefs held, availability seen and reported
    /// and edges by diff; the drive settings of those `reach` (the event's [`settings_reach`],
    /// taken before it was applied) names, possibly unchanged. Nothing that changed is left
    /// out.
    pub fn belief_changes(
        &self,
        before: &BeliefMaps,
        reach: SettingsReach,
        out: &mut dyn FnMut(BeliefChange<'_>),
    ) {
        for d in before.entities.diff(&self.entities) {
            let (id, old, new) = match d {
                Diff::Add(k, v) => (*k, None, Some(v)),
                Diff::Update { key, old, new } => (*key, Some(old), Some(new)),
                Diff::Remove(k, v) => (*k, Some(v), None),
            };
            let (was, is) = (named(old), named(new));
            if was != is {
                out(BeliefChange::Named(id, is));
            }
        }
        for d in before.people.diff(&self.people) {
            match d {
                Diff::Add(k, v) | Diff::Update { key: k, new: v, .. } => {
                    out(BeliefChange::Person(*k, Some(v)))
                }
                Diff::Remove(k, _) => out(BeliefChange::Person(*k, None)),
            }
        }
        // What was seen is read from two maps (`World::seen_availability`): a pair is given
        // once, with what is seen now, if either changed it. A line heard changes what is seen
        // unless an availability seen otherwise, and left unchanged, still stands over it.
        let otherwise: Vec<_> = before
            .beliefs
            .diff(&self.beliefs)
            .into_iter()
            .map(|d| match d {
                Diff::Add(k, _) | Diff::Update { key: k, .. } | Diff::Remove(k, _) => *k,
            })
            .collect();
        for k in &otherwise {
            out(BeliefChange::Seen(*k, self.seen_availability(k.0, k.1)));
        }
        for d in before.heard.diff(&self.heard) {
            let (Diff::Add(k, _) | Diff::Update { key: k, .. } | Diff::Remove(k, _)) = d;
            if !self.beliefs.contains(k) && otherwise.binary_search(k).is_err() {
                out(BeliefChange::Seen(*k, self.seen_availability(k.0, k.1)));
            }
        }
        for d in before.reported.diff(&self.reported) {
            match d {
                DiffItem::Add(k, v) | DiffItem::Update { new: (k, v), .. } => {
                    out(BeliefChange::Reported(*k, Some(*v)))
                }
                DiffItem::Remove(k, _) => out(BeliefChange::Reported(*k, None)),
            }
        }
        for d in before.edges.diff(&self.edges) {
            match d {
                Diff::Add(k, v) | Diff::Update { key: k, new: v, .. } => {
                    out(BeliefChange::Edge(*k, Some(v)))
                }
                Diff::Remove(k, _) => out(BeliefChange::Edge(*k, None)),
            }
        }
        match reach {
            SettingsReach::Nobody => {}
            SettingsReach::One(id) => {
                if self.entity(id).is_some() {
                    out(BeliefChange::Settings(
                        id,
                        Box::new(self.drive_settings(id)),
                    ));
                }
            }
            SettingsReach::Everyone => {
                for e in self.entities() {
                    out(BeliefChange::Settings(
                        e.id,
                        Box::new(self.drive_settings(e.id)),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EntityState, FactSheet, Utterance, UtteranceId};

    fn world() -> World {
        let mut w = World::new();
        w.apply(&Event::WorldCreated {
            name: "w".into(),
            now: 1_000,
            settings: Default::default(),
        })
        .expect("world");
        for (id, name) in [(1, "Mira"), (2, "Wren"), (3, "Tobias")] {
            w.apply(&Event::EntityCreated {
                id: EntityId(id),
                key: None,
                name: name.into(),
                aliases: vec![],
                facts: FactSheet::default(),
                host_controlled: false,
                state: EntityState::default(),
            })
            .expect("person");
        }
        w
    }

    fn changes(w: &mut World, event: &Event) -> Vec<String> {
        let (maps, reach) = (w.belief_maps(), settings_reach(event));
        w.apply(event).expect("applies");
        let mut out = Vec::new();
        w.belief_changes(&maps, reach, &mut |c| out.push(format!("{c:?}")));
        out
    }

    #[test]
    fn a_line_heard_changes_each_hearer_sight_of_the_speaker_only() {
        let mut w = world();
        let line = Event::AssistantTurn {
            utterance: Utterance {
                id: UtteranceId(10),
                speaker: EntityId(2),
                text: "Evening.".into(),
                at: 1_000,
                witnesses: [1, 2, 3].map(EntityId).into_iter().collect(),
                model: None,
                scene: None,
            },
        };
        let found = changes(&mut w, &line);
        let seen = |o: u64| {
            format!(
                "{:?}",
                BeliefChange::Seen(
                    (EntityId(o), EntityId(2)),
                    Some(Belief {
                        availability: 1.0,
                        at: 1_000
                    })
                )
            )
        };
        assert_eq!(found, vec![seen(1), seen(3)]);
    }

    #[test]
    fn a_rename_and_a_removal_are_found_and_a_settings_change_is_reached() {
        let mut w = world();
        let rename = Event::EntityEdited {
            id: EntityId(3),
            name: Some("Old Tobias".into()),
            aliases: None,
            facts: None,
            host_controlled: None,
        };
        let found = changes(&mut w, &rename);
        assert!(found.contains(&format!(
            "{:?}",
            BeliefChange::Named(EntityId(3), Some(("Old Tobias", false)))
        )));
        let found = changes(&mut w, &Event::EntityRemoved { id: EntityId(3) });
        assert!(found.contains(&format!("{:?}", BeliefChange::Named(EntityId(3), None))));
        let found = changes(&mut w, &Event::TimeAdvanced { to: 5_000 });
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn settings_reach_counts_every_kind_not_known_to_spare_them_for_everyone() {
        let config = Box::new(crate::model::DriveConfig::default());
        let world_wide = Event::DrivesConfigured {
            entity: None,
            config: config.clone(),
        };
        let own = Event::DrivesConfigured {
            entity: Some(EntityId(4)),
            config,
        };
        assert_eq!(settings_reach(&world_wide), SettingsReach::Everyone);
        assert_eq!(settings_reach(&own), SettingsReach::One(EntityId(4)));
        assert_eq!(
            settings_reach(&Event::TimeAdvanced { to: 1 }),
            SettingsReach::Nobody
        );
        let created = Event::WorldCreated {
            name: "w".into(),
            now: 0,
            settings: Default::default(),
        };
        assert_eq!(settings_reach(&created), SettingsReach::Everyone);
    }
}
