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
    /// A rule is due: an `at` rule's time, or an unused rule's weight falling below the
    /// threshold at which it is forgotten (docs/rules.md).
    Rule,
    /// The answer to an initiation came, or the wait for it ended: the character learns from
    /// it (docs/rules.md).
    Feedback,
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
    if let Some(at) = rules_due(world, entity, &t.s) {
        offer(at, TickReason::Rule);
    }
    if let Some(at) = feedback_due(mind, &t.s) {
        offer(at, TickReason::Feedback);
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

/// The first moment one of `entity`'s rules is due: an `at` rule's time, or a rule's weight
/// falling below `rule_forget_below`.
fn rules_due(world: &World, entity: EntityId, s: &DriveSettings) -> Option<Millis> {
    world
        .rules_of(entity)
        .flat_map(|r| {
            [
                r.due_at(),
                r.forgotten_at(s.rule_half_life_days, s.rule_forget_below),
            ]
        })
        .flatten()
        .min()
}

/// The first moment an initiation's feedback is due: its answer came (at once), or the wait
/// for one ends.
pub(crate) fn feedback_due(mind: &Mind, s: &DriveSettings) -> Option<Millis> {
    mind.awaiting
        .iter()
        .map(|a| match &a.reply {
            Some(r) => r.at,
            None => {
                a.at.saturating_add((s.feedback_wait_minutes * 60_000.0) as Millis)
            }
        })
        .min()
}

/// The terms of a character's pressure that are its own, whoever it would address.
struct Own {
    task: Ramp,
    curiosity: Ramp,
}

impl Own {
    fn of(world: &World, t: &Tuned, mind: &Mind, entity: EntityId, from: Millis) -> Own {
        Own {
            task: super::task_ramp(world, entity, t, mind, from),
            curiosity: super::curiosity_ramp(world, entity, t, mind, from),
        }
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
/// with the gates that depend on time open (energy, held, availability). What `speaker` learned
/// about `to` fades in steps (docs/rules.md): between two steps the weights are constant, so
/// each stretch is solved exactly, in order.
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
    let social = super::social_ramp(world, speaker, to, t, mind, from);
    let (intent, _) = super::explain::intent_toward(mind, to);
    let intent = Ramp::constant(ms(from), intent);
    let mut steps: Vec<Millis> = mind
        .learned
        .iter()
        .filter(|l| l.to == to)
        .flat_map(|l| l.steps_after(from, t.s.learned_half_life_days))
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let start = from.max(mind.held_until.unwrap_or(from));
    // Energy only falls while awake: the last moment it allows an initiation.
    let tired = mind.energy_reaches(&t.s, t.s.min_energy, from);
    let stretches = std::iter::once(from).chain(steps.iter().copied());
    let ends = steps
        .iter()
        .map(|e| ms(*e))
        .chain(std::iter::once(f64::INFINITY));
    for (begin, end) in stretches.zip(ends) {
        let (w, _) = super::explain::weights_toward(world, t, speaker, to, begin);
        let score = own
            .task
            .add_scaled(w[1], &own.curiosity, w[2])
            .add_scaled(1.0, &social, w[0])
            .add_scaled(1.0, &availability, w[3])
            .add_scaled(1.0, &intent, w[4]);
        let found = first_open(t, own, &score, &availability, ms(start.max(begin)), end);
        if let Some(at) = found {
            let at = at.ceil() as Millis;
            return match tired {
                Some(last) if at > last => None,
                _ => Some(at),
            };
        }
        if tired.is_some_and(|last| ms(last) < end) {
            return None;
        }
    }
    None
}

/// The first time in [`from`, `end`) at which `score` reaches the threshold with the
/// availability gate open (or the task urgent).
fn first_open(
    t: &Tuned,
    own: &Own,
    score: &Ramp,
    availability: &Ramp,
    from: f64,
    end: f64,
) -> Option<f64> {
    let mut at = from;
    for _ in 0..4 {
        at = score.first_at_least(t.threshold, at)?;
        if at >= end {
            return None;
        }
        if availability.at(at) >= t.availability_gate || own.task.at(at) >= t.s.urgent_task {
            return Some(at);
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
