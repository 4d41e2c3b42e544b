//! When anything is next due: each character's earliest moment (a pressure reaching its
//! threshold with its gates open, falling asleep, waking, its inbox's processing time, a
//! `$retry`) and the world's (a scoped event's start or expiry), each solved exactly from the
//! drives' piecewise-linear form.

use super::ramp::Ramp;
use super::{Hearing, Tuned, alert_until, hour_of_day, interval_of, mode_of, ms};
use crate::log::World;
use crate::model::*;
use serde::Serialize;

/// Why a tick is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TickReason {
    /// A pressure reaches its threshold with its gates open.
    Pressure {
        /// The addressee.
        to: EntityId,
    },
    /// The character falls asleep (night, or exhausted).
    Sleep,
    /// The character wakes (rested, by day).
    Wake,
    /// Its inbox is due to be processed.
    Inbox,
    /// A `$retry` fires.
    Retry,
    /// A scoped event starts or expires.
    Story,
    /// The character's significance since it last reflected reached its threshold
    /// (docs/memory.md).
    Reflect,
    /// A memory's retention falls below a stage's threshold: a decay pass is due
    /// (docs/memory.md).
    Decay,
}

/// The next moment anything can happen, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NextTick {
    /// Host time.
    pub at: Millis,
    /// The character concerned (`None` for the story).
    pub entity: Option<EntityId>,
    /// Why.
    pub reason: TickReason,
}

/// The next time from `from` at which `hour` (0–24) of day begins.
fn next_hour(from: Millis, hour: f64) -> Millis {
    let day = 24 * 3_600_000;
    let start = from - from.rem_euclid(day);
    let t = start + (hour * HOUR_MS) as Millis;
    if t >= from { t } else { t + day }
}

/// The first time from `from` that is night.
fn night_from(s: &DriveSettings, from: Millis) -> Millis {
    if s.is_night(hour_of_day(from)) {
        from
    } else {
        next_hour(from, s.night_start)
    }
}

/// `entity`'s earliest due moment at or after `from`, if any.
pub(crate) fn due_of(
    world: &World,
    entity: EntityId,
    from: Millis,
    hearing: &mut Hearing,
) -> Option<(Millis, TickReason)> {
    let (t, mind) = Tuned::of(world, entity)?;
    if !t.s.enabled || world.entity(entity)?.activity.position.is_none() {
        return None;
    }
    let mut best: Option<(Millis, TickReason)> = None;
    let mut offer = |at: Millis, why: TickReason| {
        let at = at.max(from);
        if best.is_none_or(|(b, _)| at < b) {
            best = Some((at, why));
        }
    };
    if mind.unreflected >= t.s.reflect_at(&mind.personality) {
        offer(from, TickReason::Reflect);
    }
    if let Some(r) = mind.retry_at {
        offer(r, TickReason::Retry);
    }
    if let Some(at) = inbox_due_at(world, entity, from) {
        offer(at, TickReason::Inbox);
    }
    if mind.asleep {
        // Wakes by day once rested.
        if let Some(rested) = mind.energy_reaches(&t.s, t.s.wake_energy, from) {
            let at = if t.s.is_night(hour_of_day(rested)) {
                next_hour(rested, t.s.night_end)
            } else {
                rested
            };
            offer(at, TickReason::Wake);
        }
        return best;
    }
    // Falls asleep at night once out of conversation, or when exhausted.
    if t.s.night_start != t.s.night_end {
        let quiet = alert_until(world, entity, &t.s).map_or(from, |u| u.max(from));
        offer(night_from(&t.s, quiet), TickReason::Sleep);
    }
    let exhausted = mind.energy_reaches(&t.s, t.s.sleep_energy, from);
    if let Some(at) = exhausted {
        offer(at, TickReason::Sleep);
    }
    let Some(hearers) = hearing.of(world, entity) else {
        return best;
    };
    let addressees = super::addressees(world, entity, hearers);
    if addressees.is_empty() || mind.energy_at(&t.s, from) < t.s.min_energy {
        return best;
    }
    // Task pressure and curiosity do not depend on the addressee: worked out once.
    let own = Own::of(world, &t, mind, entity, from);
    for to in addressees {
        if let Some(at) = crossing(world, &t, mind, &own, entity, to, from) {
            offer(at, TickReason::Pressure { to });
        }
    }
    best
}

/// The terms of a character's pressure that are its own, whoever it would address.
struct Own {
    task: Ramp,
    /// `w_task × task + w_curiosity × curiosity`.
    weighted: Ramp,
}

impl Own {
    fn of(world: &World, t: &Tuned, mind: &Mind, entity: EntityId, from: Millis) -> Own {
        let task = super::task_ramp(world, entity, t, mind, from);
        let curiosity = super::curiosity_ramp(world, entity, t, mind, from);
        let weighted = task.add_scaled(t.weights.task, &curiosity, t.weights.curiosity);
        Own { task, weighted }
    }
}

/// When `entity`'s inbox is due to be processed, seen from `from`: at once for a CRITICAL
/// stimulus, otherwise one processing interval (of its mode at `from`) after the oldest
/// waiting stimulus arrived or the inbox was last processed, whichever is later.
pub(crate) fn inbox_due_at(world: &World, entity: EntityId, from: Millis) -> Option<Millis> {
    let (t, mind) = Tuned::of(world, entity)?;
    let first = mind.inbox.iter().map(|s| s.at).min()?;
    if mind.inbox.iter().any(|s| s.priority == Priority::Critical) {
        return Some(first);
    }
    let mode = mode_of(world, entity, &t, mind, from);
    let since = mind.processed_at.unwrap_or(first).max(first);
    Some(since.saturating_add(interval_of(&t, mind, mode, from) as Millis))
}

/// The first time from `from` at which `speaker`'s pressure toward `to` reaches its threshold
/// with the gates that depend on time open (energy, held, availability).
fn crossing(
    world: &World,
    t: &Tuned,
    mind: &Mind,
    own: &Own,
    speaker: EntityId,
    to: EntityId,
    from: Millis,
) -> Option<Millis> {
    let availability = super::availability_ramp(world, speaker, to, t, from);
    let score = own
        .weighted
        .add_scaled(
            1.0,
            &super::social_ramp(world, speaker, to, t, mind, from),
            t.weights.social_debt,
        )
        .add_scaled(1.0, &availability, t.weights.availability);
    let mut at = ms(from.max(mind.held_until.unwrap_or(from)));
    // Energy only falls while awake: the last moment it allows an initiation.
    let tired = mind.energy_reaches(&t.s, t.s.min_energy, from);
    for _ in 0..4 {
        at = score.first_at_least(t.threshold, at)?;
        let task = own.task.at(at);
        if availability.at(at) >= t.availability_gate || task >= t.s.urgent_task {
            let at = at.ceil() as Millis;
            return match tired {
                Some(end) if at > end => None,
                _ => Some(at),
            };
        }
        // Wait for the belief to come back to the gate, then look again.
        at = availability.first_at_least(t.availability_gate, at)?;
    }
    None
}

/// The next moment at or after `now` at which a tick does something, over every character and
/// the story; `None` when nothing will happen until something else changes. (The engine keeps
/// this per change of the world: `Engine::next_tick_at`.)
pub fn next_tick(world: &World, now: Millis) -> Option<NextTick> {
    let from = world.now();
    earliest(
        &all_due(world, from),
        story_due(world, from),
        world.decay_due().map(|at| at.max(from)),
    )
    .map(|n| NextTick {
        at: n.at.max(now),
        ..n
    })
}

/// The earliest of the characters' due moments, the story's and the next decay pass's.
pub(crate) fn earliest(
    due: &[(EntityId, Millis, TickReason)],
    story: Option<Millis>,
    decay: Option<Millis>,
) -> Option<NextTick> {
    due.iter()
        .map(|(id, at, reason)| NextTick {
            at: *at,
            entity: Some(*id),
            reason: *reason,
        })
        .chain(story.map(|at| NextTick {
            at,
            entity: None,
            reason: TickReason::Story,
        }))
        .chain(decay.map(|at| NextTick {
            at,
            entity: None,
            reason: TickReason::Decay,
        }))
        .min_by_key(|n| (n.at, n.entity))
}

/// Every character's due moment from `now`, in entity order (the engine's cache).
pub(crate) fn all_due(world: &World, now: Millis) -> Vec<(EntityId, Millis, TickReason)> {
    let mut hearing = Hearing::default();
    world
        .minds()
        .filter_map(|(id, _)| due_of(world, id, now, &mut hearing).map(|(at, r)| (id, at, r)))
        .collect()
}

/// The next start or expiry of a scoped event at or after `now`.
pub(crate) fn story_due(world: &World, now: Millis) -> Option<Millis> {
    world
        .scoped_events()
        .filter(|e| !e.status.is_closed())
        .flat_map(|e| {
            let start = (e.status == EventStatus::Planned)
                .then_some(e.start_at)
                .flatten();
            [start, e.expire_at]
        })
        .flatten()
        // What is due by the world's clock already ran when the clock moved.
        .filter(|t| *t > world.now())
        .map(|t| t.max(now))
        .min()
}
