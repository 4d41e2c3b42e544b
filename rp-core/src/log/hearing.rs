//! Who hears an utterance, and what each entity's conversation timing is: both read from the
//! world, so a turn computes them the same way live and the log stores the outcome.

use super::World;
use crate::model::{ContainerId, EntityId, Millis, WitnessSet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// An entity's place in the conversation, kept by the world from the utterances it applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Speech {
    /// When it last spoke.
    #[serde(default)]
    pub last_spoke: Option<Millis>,
    /// When it last heard someone else.
    #[serde(default)]
    pub last_heard: Option<Millis>,
    /// Utterances of others it heard since it last spoke.
    #[serde(default)]
    pub unread: u32,
}

impl World {
    /// The conversation timing of `entity` (all empty if it never spoke or heard anything).
    pub fn speech(&self, entity: EntityId) -> Speech {
        self.speech.get(&entity).copied().unwrap_or_default()
    }

    /// Who hears `speaker` speak now: the speaker, every entity in its container, and every
    /// entity in a container at most the speaker's container's `audible_range` steps away in
    /// the container tree (one step: to the parent or to a child). A public container is open
    /// to the container around it: the step between it and its parent costs nothing, so what
    /// is said in it is heard in its parent, and within range in its parent's other children,
    /// and what is said around it is heard in it. An entity with no position hears only itself.
    /// A sleeper hears nothing (docs/drives.md, "Sleep"): it is in [`World::sleepers_near`].
    pub fn hearers(&self, speaker: EntityId) -> WitnessSet {
        let mut all = self.within_earshot(speaker);
        all.retain(|e| e == speaker || self.minds.get(&e).is_none_or(|m| !m.asleep));
        all
    }

    /// The sleepers within earshot of `speaker`: what it says disturbs them, and may wake them.
    pub fn sleepers_near(&self, speaker: EntityId) -> Vec<EntityId> {
        self.within_earshot(speaker)
            .iter()
            .filter(|e| *e != speaker && self.minds.get(e).is_some_and(|m| m.asleep))
            .collect()
    }

    /// Everyone within earshot of `speaker`, asleep or awake (who is there, as a prompt shows
    /// it; [`World::hearers`] is who hears).
    pub fn within_earshot(&self, speaker: EntityId) -> WitnessSet {
        let Some(here) = self
            .entity(speaker)
            .and_then(|e| e.activity.position.as_ref())
            .map(|p| p.container)
        else {
            return [speaker].into_iter().collect();
        };
        let reached = self.earshot_of(here);
        // Entities come in id order, so the set is filled in order.
        let mut out: WitnessSet = self
            .entities()
            .filter(|e| {
                e.activity
                    .position
                    .as_ref()
                    .is_some_and(|p| reached.contains(&p.container))
            })
            .map(|e| e.id)
            .collect();
        out.insert(speaker);
        out
    }

    /// The containers whose occupants hear what is said in `here` (and are heard in it): those
    /// within its `audible_range` (see [`World::hearers`]).
    pub(crate) fn earshot_of(&self, here: ContainerId) -> BTreeSet<ContainerId> {
        let range = self
            .container(here)
            .map_or(0, |c| c.properties.audible_range);
        self.containers_within(here, range)
    }

    /// `from` and every container at most `range` steps from it in the container tree, a step
    /// between a public container and its parent costing nothing.
    fn containers_within(&self, from: ContainerId, range: u32) -> BTreeSet<ContainerId> {
        let any_public = self.containers().any(|c| c.properties.public);
        if range == 0 && !any_public {
            return BTreeSet::from([from]);
        }
        let mut children: BTreeMap<ContainerId, Vec<ContainerId>> = BTreeMap::new();
        for c in self.containers() {
            if let Some(p) = c.parent {
                children.entry(p).or_default().push(c.id);
            }
        }
        let public = |c: ContainerId| self.container(c).is_some_and(|x| x.properties.public);
        // Shortest distances, free steps first (0-1 breadth-first search).
        let mut best: BTreeMap<ContainerId, u32> = BTreeMap::from([(from, 0)]);
        let mut queue = VecDeque::from([(from, 0u32)]);
        while let Some((c, d)) = queue.pop_front() {
            if best.get(&c).is_some_and(|b| *b < d) {
                continue;
            }
            let parent = self.container(c).and_then(|x| x.parent);
            let up = parent.map(|p| (p, public(c)));
            let kids = children.get(&c).map_or(&[][..], Vec::as_slice);
            let down = kids.iter().map(|k| (*k, public(*k)));
            for (n, free) in up.into_iter().chain(down) {
                let nd = if free { d } else { d + 1 };
                if nd > range || best.get(&n).is_some_and(|b| *b <= nd) {
                    continue;
                }
                best.insert(n, nd);
                if free {
                    queue.push_front((n, nd));
                } else {
                    queue.push_back((n, nd));
                }
            }
        }
        best.into_keys().collect()
    }

    /// Updates conversation timing for an utterance just applied.
    pub(super) fn note_utterance(&mut self, speaker: EntityId, at: Millis, heard: &WitnessSet) {
        for w in heard.iter() {
            // One descent for the common case (already known); a new entry otherwise.
            let s = match self.speech.get_mut(&w) {
                Some(s) => s,
                None => {
                    self.speech.insert(w, Speech::default());
                    self.speech.get_mut(&w).expect("just inserted")
                }
            };
            if w == speaker {
                s.last_spoke = Some(at);
                s.unread = 0;
            } else {
                s.last_heard = Some(at);
                s.unread = s.unread.saturating_add(1);
            }
        }
    }
}
