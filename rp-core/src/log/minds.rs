//! Reading what the log keeps of the characters' inner life (docs/drives.md); the drives
//! computed from it are [`crate::drives`].

use super::World;
use crate::model::{
    Belief, DecayStage, DriveConfig, DriveSettings, EntityId, FadeRule, HOUR_MS, MemoryId, Millis,
    Mind,
};

impl World {
    /// The mind of an engine-controlled entity.
    pub fn mind(&self, entity: EntityId) -> Option<&Mind> {
        self.minds.get(&entity)
    }

    /// Every mind, in entity id order.
    pub fn minds(&self) -> impl Iterator<Item = (EntityId, &Mind)> + '_ {
        self.minds.iter().map(|(id, m)| (*id, m))
    }

    /// The world's drive settings, as configured (over the built-in defaults).
    pub fn drive_config(&self) -> &DriveConfig {
        &self.drive_config
    }

    /// `entity`'s drive settings resolved: built-in defaults, the world's, its own.
    pub fn drive_settings(&self, entity: EntityId) -> DriveSettings {
        DriveSettings::resolve(
            &self.drive_config,
            self.minds.get(&entity).map(|m| &m.config),
        )
    }

    /// When `a` and `b` last spoke in each other's hearing.
    pub fn contact(&self, a: EntityId, b: EntityId) -> Option<Millis> {
        self.contacts.get(&contact_key(a, b)).copied()
    }

    /// The latest of what `observer` saw of `about`'s availability, what the host reported and
    /// what it came to believe (docs/beliefs.md). A belief observed with confidence `c` counts
    /// as the availability `0.5 + (a − 0.5) × c` (0.5: no idea); the drives fade it from there.
    pub fn belief(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        self.availability_held(observer, about, self.people.get(&(observer, about)))
            .map(|h| Belief {
                availability: 0.5 + (h.value - 0.5) * h.confidence,
                at: h.at,
            })
    }

    /// When a decay pass is next due (docs/memory.md): the earliest moment a memory may cross
    /// a stage's threshold, as the last pass found it and memories formed since bring it
    /// forward, but not before `decay_pass_hours` after the last pass (nor before the world's
    /// clock); `None` when no memory will.
    pub fn decay_due(&self) -> Option<Millis> {
        let every = DriveSettings::resolve(&self.drive_config, None).decay_pass_hours;
        let after_last = self.decay_passed.map_or(Millis::MIN, |p| {
            p.saturating_add((every * HOUR_MS) as Millis)
        });
        self.decay_next.map(|at| at.max(after_last).max(self.now))
    }

    /// The memories due to move on to a later stage at or before `now`, soonest first, each
    /// with its owner and the stage it moves to (docs/memory.md): what a decay pass at `now`
    /// visits.
    pub fn fading_by(&self, now: Millis) -> Vec<(MemoryId, EntityId, DecayStage)> {
        self.index.fading.schedule().due_by(now)
    }

    /// The first moment after `now` at which a memory moves on to a later stage.
    pub fn next_fading_after(&self, now: Millis) -> Option<Millis> {
        self.index.fading.schedule().next_after(now)
    }

    /// Works out again when memory `id` next moves on (after it changed, or its owner's
    /// settings did), and returns that moment (`None`: never, or no such memory).
    pub(super) fn refade(&mut self, id: MemoryId) -> Option<Millis> {
        let Some(m) = self.memories.get(&id) else {
            self.index.unset_fading(id);
            return None;
        };
        let next = m.fading(&FadeRule::of(&self.drive_settings(m.owner)));
        self.index.set_fading(m, next);
        next.map(|(_, at)| at)
    }

    /// [`World::refade`] of every memory of `owner`.
    pub(super) fn refade_owner(&mut self, owner: EntityId) {
        let ids: Vec<MemoryId> = self.memories_of(owner).map(|m| m.id).collect();
        for id in ids {
            self.refade(id);
        }
    }

    /// [`World::refade`] of every memory (the world's settings changed).
    pub(super) fn refade_all(&mut self) {
        let ids: Vec<MemoryId> = self.memories.iter().map(|m| m.id).collect();
        for id in ids {
            self.refade(id);
        }
    }

    /// Whether the world kept minds since its creation. A snapshot written before drives
    /// existed did not: opening replays the log rather than start from it.
    pub fn keeps_minds(&self) -> bool {
        self.minds_kept
    }
}

/// The decay moment of a world read from a snapshot that did not record one: at once.
pub(super) fn overdue() -> Option<Millis> {
    Some(Millis::MIN)
}

/// Where the contact of `a` and `b` is kept: one entry per pair, whichever spoke.
pub(super) fn contact_key(a: EntityId, b: EntityId) -> (EntityId, EntityId) {
    (a.min(b), a.max(b))
}
