//! When each character is next due (docs/drives.md), worked out once per change of the world
//! and kept: a host that ticks at `next_tick_at` with nothing due pays for a lookup, not for a
//! pass over every character.

use super::Engine;
use crate::drives::{NextTick, TickReason};
use crate::model::{EntityId, Millis, Seq};
use std::sync::Arc;

/// The due moments of every character and of the story, as of the world's clock.
#[derive(Debug)]
pub(crate) struct Schedule {
    /// Each character's earliest due moment from the world's clock, in entity order.
    pub due: Vec<(EntityId, Millis, TickReason)>,
    /// The earliest of them and the story's.
    pub first: Option<NextTick>,
}

#[derive(Debug)]
pub(super) struct Cached {
    head: Seq,
    epoch: u64,
    schedule: Arc<Schedule>,
}

impl Engine {
    /// The schedule of the current world (worked out when the world changed since).
    pub(crate) fn drive_schedule(&mut self) -> Arc<Schedule> {
        if let Some(c) = &self.drive_schedule
            && c.head == self.head()
            && c.epoch == self.epoch
        {
            return c.schedule.clone();
        }
        let from = self.world.now();
        let due = crate::drives::all_due(&self.world, from);
        let story = crate::drives::story_due(&self.world, from).map(|at| NextTick {
            at,
            entity: None,
            reason: TickReason::Story,
        });
        let first = due
            .iter()
            .map(|(id, at, reason)| NextTick {
                at: *at,
                entity: Some(*id),
                reason: *reason,
            })
            .chain(story)
            .min_by_key(|n| (n.at, n.entity));
        let schedule = Arc::new(Schedule { due, first });
        self.drive_schedule = Some(Cached {
            head: self.head(),
            epoch: self.epoch,
            schedule: schedule.clone(),
        });
        schedule
    }
}
