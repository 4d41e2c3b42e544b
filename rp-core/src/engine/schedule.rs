//! When each character is next due (docs/drives.md), worked out once per change of the world
//! and kept: a host that ticks at `next_tick_at` with nothing due pays for a lookup, not for a
//! pass over every character.

use super::Engine;
use crate::drives::{NextTick, TickReason};
use crate::model::{EntityId, Millis, Seq};
use std::collections::BTreeMap;

/// The due moments of every character and of the story, as of the world's clock, for the head
/// and epoch they were worked out at.
#[derive(Debug)]
pub(super) struct Cached {
    head: Seq,
    epoch: u64,
    /// Each character's earliest due moment from the world's clock, in entity order.
    due: Vec<(EntityId, Millis, TickReason)>,
    story: Option<Millis>,
    /// Characters a tick found due but with nothing to do (a crossing a gate closed since, a
    /// rounding at the edge of a threshold): not due again before this time. Kept in memory
    /// only; it changes what the engine reports, never the world.
    deferred: BTreeMap<EntityId, Millis>,
}

impl Cached {
    fn due(&self) -> impl Iterator<Item = (EntityId, Millis, TickReason)> + '_ {
        self.due.iter().map(|(id, at, reason)| {
            let at = self.deferred.get(id).map_or(*at, |d| (*at).max(*d));
            (*id, at, *reason)
        })
    }
}

impl Engine {
    fn schedule(&mut self) -> &mut Cached {
        let stale = self
            .drive_schedule
            .as_ref()
            .is_none_or(|c| c.head != self.head() || c.epoch != self.epoch);
        if stale {
            let from = self.world.now();
            self.drive_schedule = Some(Cached {
                head: self.head(),
                epoch: self.epoch,
                due: crate::drives::all_due(&self.world, from),
                story: crate::drives::story_due(&self.world, from),
                deferred: BTreeMap::new(),
            });
        }
        self.drive_schedule.as_mut().expect("set above")
    }

    /// The earliest due moment of any character, of the story or of the decay pass (worked out
    /// when the world changed since).
    pub(crate) fn next_due(&mut self) -> Option<NextTick> {
        let s = self.schedule();
        let due: Vec<_> = s.due().collect();
        let story = s.story;
        let from = self.world.now();
        let decay = self.world.decay_due().map(|at| at.max(from));
        crate::drives::earliest(&due, story, decay)
    }

    /// The characters due at or before `now`, with why.
    pub(crate) fn due_by(&mut self, now: Millis) -> Vec<(EntityId, Millis, TickReason)> {
        self.schedule()
            .due()
            .filter(|(_, at, _)| *at <= now)
            .collect()
    }

    /// `entity` is not due again before `until` (a tick found nothing to do for it).
    pub(crate) fn defer(&mut self, entity: EntityId, until: Millis) {
        self.schedule().deferred.insert(entity, until);
    }
}
