//! Drives, read from the world at any host time (docs/drives.md): energy, social debt toward
//! each entity a character knows, task pressure, curiosity; the pressure of each candidate
//! initiation as a weighted sum with its explanation; and when anything is next due, solved
//! from the piecewise-linear form of every term (`ramp`), never by stepping time.
//!
//! Nothing here changes the world: the tick machine ([`crate::tick`]) records what happens.

mod explain;
pub mod layers;
pub mod learn;
mod ramp;
mod schedule;

pub use explain::{Candidate, Gate, Term};
pub use schedule::{NextTick, TickReason, next_tick};
pub(crate) use schedule::{all_due, earliest, inbox_due_at, story_due};

use crate::error::{Error, Result};
use crate::facts::DriveValues;
use crate::log::World;
use crate::model::*;
use ramp::Ramp;
use serde::Serialize;
use std::collections::BTreeMap;

/// One character's drives at a time, with what they come from (`Engine::drives`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drives {
    /// Whose.
    pub entity: EntityId,
    /// At what host time.
    pub at: Millis,
    /// Energy, in [0, 1].
    pub energy: f64,
    /// Its mode.
    pub mode: Mode,
    /// Its processing interval now, in ms (the mode's, stretched by low energy and night).
    pub interval_ms: f64,
    /// A sleeper's disturbance.
    pub disturbance: f64,
    /// The disturbance that would wake it now.
    pub wake_threshold: f64,
    /// Social debt toward each entity it knows (has an edge to), in id order.
    pub social_debt: Vec<(EntityId, f64)>,
    /// Task pressure, in [0, 1].
    pub task: f64,
    /// Curiosity, in [0, 1].
    pub curiosity: f64,
    /// The highest initiation pressure toward anyone present (0 if no one is).
    pub pressure: f64,
    /// Its initiation threshold (after personality).
    pub threshold: f64,
    /// Its personality.
    pub personality: Personality,
    /// Stimuli waiting in its inbox.
    pub inbox: Vec<Stimulus>,
    /// Processed stimuli its next prompt mentions.
    pub noticed: Vec<Stimulus>,
    /// What became of stimuli merged, dropped, filtered, or that woke it.
    pub notes: Vec<InboxNote>,
    /// Initiations wait until then.
    pub held_until: Option<Millis>,
    /// What fired rules left in mind (docs/rules.md): intentions to speak to someone, notes.
    pub intentions: Vec<Intention>,
    /// Its initiations waiting for their feedback.
    pub awaiting: Vec<Awaiting>,
    /// The factors it learned on its pressure's terms toward each addressee.
    pub learned: Vec<Learned>,
    /// The feedback it learned from, latest last.
    pub feedback: Vec<Feedback>,
}

/// A character's settings with personality applied (docs/drives.md, "Personality").
#[derive(Clone, Debug)]
pub(crate) struct Tuned {
    pub s: DriveSettings,
    pub p: Personality,
    pub threshold: f64,
    pub follow_up_ms: f64,
    pub weights: Weights,
    pub availability_gate: f64,
    /// Hours of contact-free time per unit of social debt, per unit of (1 + affinity).
    pub social_rate: f64,
}

impl Tuned {
    pub fn of(world: &World, entity: EntityId) -> Option<(Tuned, &Mind)> {
        let mind = world.mind(entity)?;
        let s = world.drive_settings(entity);
        let p = mind.personality;
        let mut weights = s.weights;
        weights.curiosity *= 0.5 + p.curiosity;
        weights.availability *= 0.5 + p.empathy;
        Some((
            Tuned {
                threshold: s.threshold * (1.25 - 0.5 * p.independence) * (0.85 + 0.3 * p.shyness),
                follow_up_ms: s.follow_up_hours * HOUR_MS * (0.5 + p.patience),
                availability_gate: (s.availability_gate * (0.5 + p.empathy)).min(1.0),
                social_rate: s.social_debt_per_hour * (1.5 - p.patience),
                weights,
                s,
                p,
            },
            mind,
        ))
    }
}

fn ms(t: Millis) -> f64 {
    t as f64
}

/// Whether `entity` is alert at `t`: it said or heard a line within the alert window.
fn alert_until(world: &World, entity: EntityId, s: &DriveSettings) -> Option<Millis> {
    let sp = world.speech(entity);
    let last = sp.last_spoke.max(sp.last_heard)?;
    Some(last.saturating_add((s.alert_minutes * 60_000.0) as Millis))
}

/// The follow-up ramp: 0 when the character last spoke, back to 1 over `follow_up_ms`.
fn follow_up(t: &Tuned, mind: &Mind, from: Millis) -> Ramp {
    match mind.relieved_at {
        Some(r) => Ramp::segment(ms(from), ms(r), 0.0, ms(r) + t.follow_up_ms, 1.0),
        None => Ramp::constant(ms(from), 1.0),
    }
}

/// Task pressure as a function of time from `from`: goals, open threads it takes part in,
/// what fired rules added since it last spoke (docs/rules.md), and the planned scoped events it is due at (rising over the hour before their start),
/// capped at 1; after it speaks, it comes back over the follow-up time.
fn task_ramp(world: &World, entity: EntityId, t: &Tuned, mind: &Mind, from: Millis) -> Ramp {
    let goals = world.entity(entity).map_or(0, |e| e.state.goals.len()) as f64;
    let threads = world
        .threads()
        .filter(|th| th.status == ThreadStatus::Open && th.participants.contains(&entity))
        .count() as f64;
    let base = (0.15 * goals + 0.2 * threads + mind.task_extra).min(1.0);
    let mut raw = Ramp::constant(ms(from), base);
    for e in world.scoped_events() {
        if e.status != EventStatus::Planned || !e.participants.contains(&entity) {
            continue;
        }
        if let Some(start) = e.start_at {
            let due = Ramp::segment(ms(from), ms(start) - HOUR_MS, 0.0, ms(start), 1.0);
            raw = raw.add_scaled(1.0, &due, 1.0);
        }
    }
    raw.min(&Ramp::constant(ms(from), 1.0))
        .min(&follow_up(t, mind, from))
}

/// Curiosity from `from`: what processed stimuli gathered, lines heard and not answered, open
/// threads it takes part in; capped at 1, back over the follow-up time after it speaks.
fn curiosity_ramp(world: &World, entity: EntityId, t: &Tuned, mind: &Mind, from: Millis) -> Ramp {
    let unread = f64::from(world.speech(entity).unread);
    let threads = world
        .threads()
        .filter(|th| th.status == ThreadStatus::Open && th.participants.contains(&entity))
        .count() as f64;
    let raw = (mind.curiosity + 0.1 * unread * (0.5 + t.p.curiosity) + 0.1 * threads).min(1.0);
    Ramp::constant(ms(from), raw).min(&follow_up(t, mind, from))
}

/// Social debt of `entity` toward `other` from `from`: it grows from their last contact (or
/// since the character's drives began) at the social rate, scaled by the edge's affinity
/// (`1 + affinity`), capped at 1.
fn social_ramp(
    world: &World,
    entity: EntityId,
    other: EntityId,
    t: &Tuned,
    mind: &Mind,
    from: Millis,
) -> Ramp {
    let Some(edge) = world.edge(entity, other) else {
        return Ramp::constant(ms(from), 0.0);
    };
    let base = world.contact(entity, other).unwrap_or(mind.since);
    let per_hour = t.social_rate * (1.0 + edge.affinity.clamp(-1.0, 1.0));
    if per_hour <= 0.0 {
        return Ramp::constant(ms(from), 0.0);
    }
    Ramp::segment(ms(from), ms(base), 0.0, ms(base) + HOUR_MS / per_hour, 1.0)
}

/// The believed availability of `other` from `from`: the latest observation, its confidence
/// falling linearly to 0 over `belief_hours` (then 0.5: no idea).
fn availability_ramp(
    world: &World,
    entity: EntityId,
    other: EntityId,
    t: &Tuned,
    from: Millis,
) -> Ramp {
    match world.belief(entity, other) {
        Some(b) => Ramp::segment(
            ms(from),
            ms(b.at),
            b.availability,
            ms(b.at) + t.s.belief_hours * HOUR_MS,
            0.5,
        ),
        None => Ramp::constant(ms(from), 0.5),
    }
}

/// The mode of a character at `t`.
pub fn mode_at(world: &World, entity: EntityId, at: Millis) -> Option<Mode> {
    let (t, mind) = Tuned::of(world, entity)?;
    Some(mode_of(world, entity, &t, mind, at))
}

fn mode_of(world: &World, entity: EntityId, t: &Tuned, mind: &Mind, at: Millis) -> Mode {
    if mind.asleep {
        Mode::Sleep
    } else if alert_until(world, entity, &t.s).is_some_and(|u| at < u) {
        Mode::Alert
    } else if task_ramp(world, entity, t, mind, at).at(ms(at)) > 0.2 {
        Mode::Normal
    } else {
        Mode::Relaxed
    }
}

/// The processing interval at `at`: the mode's, × (1 + (1 − energy)), × the night factor.
fn interval_of(t: &Tuned, mind: &Mind, mode: Mode, at: Millis) -> f64 {
    let energy = mind.energy_at(&t.s, at);
    let night = if t.s.is_night(hour_of_day(at)) {
        t.s.night_factor
    } else {
        1.0
    };
    t.s.interval_ms(mode) * (1.0 + (1.0 - energy)) * night
}

/// `entity`'s processing interval at `at`, in ms (its mode's, stretched by low energy and
/// night), without working out the rest of its drives; `None` for an entity without drives.
pub fn interval_ms(world: &World, entity: EntityId, at: Millis) -> Option<f64> {
    let (t, mind) = Tuned::of(world, entity)?;
    let mode = mode_of(world, entity, &t, mind, at);
    Some(interval_of(&t, mind, mode, at))
}

/// The hour of day (fractional) of a host time.
pub(crate) fn hour_of_day(at: Millis) -> f64 {
    (at.rem_euclid(24 * 3_600_000)) as f64 / HOUR_MS
}

/// Who `entity` could address at `at`: the entities it knows (has an edge to) among those who
/// would hear it, awake (or host-controlled).
pub(crate) fn addressees(world: &World, entity: EntityId, hearers: &WitnessSet) -> Vec<EntityId> {
    world
        .edges_from(entity)
        .map(|e| e.to)
        .filter(|to| *to != entity && hearers.contains(*to))
        .filter(|to| world.mind(*to).is_none_or(|m| !m.asleep))
        .filter(|to| world.entity(*to).is_some())
        .collect()
}

/// `entity`'s drives at `at` (not before the world's clock).
pub fn drives(world: &World, entity: EntityId, at: Millis) -> Result<Drives> {
    drives_heard(world, entity, at).map(|(d, _)| d)
}

/// `entity`'s settings and mind, if its drives can be read at `at`: an engine-controlled
/// entity, `at` not before the world's clock.
fn readable(world: &World, entity: EntityId, at: Millis) -> Result<(Tuned, &Mind)> {
    let e = world
        .entity(entity)
        .ok_or_else(|| Error::not_found("entity", entity))?;
    let Some(found) = Tuned::of(world, entity) else {
        let why = if e.mentioned {
            "is only mentioned (docs/beliefs.md)"
        } else {
            "is host-controlled"
        };
        return Err(Error::invalid(
            "drives",
            format!("{} {why}; only the engine's characters have drives", e.name),
        ));
    };
    if at < world.now() {
        return Err(Error::invalid(
            "drives",
            format!("now ({at}) is before the world's clock ({})", world.now()),
        ));
    }
    Ok(found)
}

/// [`drives`], with who hears `entity` now.
fn drives_heard(world: &World, entity: EntityId, at: Millis) -> Result<(Drives, WitnessSet)> {
    let (t, mind) = readable(world, entity, at)?;
    let mode = mode_of(world, entity, &t, mind, at);
    let social_debt = world
        .edges_from(entity)
        .map(|edge| {
            let r = social_ramp(world, entity, edge.to, &t, mind, at);
            (edge.to, r.at(ms(at)))
        })
        .collect();
    let hearers = world.hearers(entity);
    let pressure = explain::candidates(world, entity, at, &hearers)?
        .iter()
        .map(|c| c.score)
        .fold(0.0, f64::max);
    let energy = mind.energy_at(&t.s, at);
    let drives = Drives {
        entity,
        at,
        energy,
        mode,
        interval_ms: interval_of(&t, mind, mode, at),
        disturbance: mind.disturbance_at(&t.s, at),
        wake_threshold: DriveSettings::wake_threshold(energy),
        social_debt,
        task: task_ramp(world, entity, &t, mind, at).at(ms(at)),
        curiosity: curiosity_ramp(world, entity, &t, mind, at).at(ms(at)),
        pressure,
        threshold: t.threshold,
        personality: t.p,
        inbox: mind.inbox.clone(),
        noticed: mind.noticed.clone(),
        notes: mind.notes.clone(),
        held_until: mind.held_until,
        intentions: mind.intentions.clone(),
        awaiting: mind.awaiting.clone(),
        learned: mind.learned.clone(),
        feedback: mind.feedback.clone(),
    };
    Ok((drives, hearers))
}

/// What `drives` shows `entity`'s fact sheet at `at` (defaults for an entity without drives,
/// and for a sheet that never reads them: they are not worked out then).
pub fn values(world: &World, entity: EntityId, at: Millis) -> DriveValues {
    if !world.sheet(entity).is_some_and(|s| s.reads_drives()) {
        return DriveValues::default();
    }
    let at = at.max(world.now());
    match drives_heard(world, entity, at) {
        Ok((d, hearers)) => DriveValues {
            energy: d.energy,
            social_debt: d
                .social_debt
                .iter()
                .filter(|(to, _)| hearers.contains(*to))
                .map(|(_, v)| *v)
                .fold(0.0, f64::max),
            task: d.task,
            curiosity: d.curiosity,
            pressure: d.pressure,
            disturbance: d.disturbance,
            asleep: d.mode == Mode::Sleep,
            mode: d.mode.name(),
        },
        Err(_) => DriveValues::default(),
    }
}

/// The candidate initiations of `speaker` at `at` toward everyone it knows within earshot,
/// highest pressure first, each with its terms, gates and explanation. Refused as
/// [`drives`] is (an unknown or host-controlled entity, `at` before the world's clock).
pub fn candidates_now(world: &World, speaker: EntityId, at: Millis) -> Result<Vec<Candidate>> {
    readable(world, speaker, at)?;
    explain::candidates(world, speaker, at, &world.hearers(speaker))
}

/// The style line personality adds to a character's prompt: its traits in words, and how it
/// approaches someone (seed 004's table).
pub fn style_line(p: &Personality) -> String {
    fn pick(v: f64, low: &'static str, high: &'static str) -> Option<&'static str> {
        if v <= 0.3 {
            Some(low)
        } else if v >= 0.7 {
            Some(high)
        } else {
            None
        }
    }
    let words: Vec<&str> = [
        pick(p.humor, "serious", "playful"),
        pick(p.formality, "casual", "formal"),
        pick(p.curiosity, "incurious", "inquisitive"),
        pick(p.patience, "impatient", "patient"),
        pick(p.empathy, "detached", "emotionally attuned"),
        pick(p.shyness, "direct", "hesitant"),
        pick(p.independence, "eager for approval", "self-directed"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut line = if words.is_empty() {
        "Temperament: even.".to_owned()
    } else {
        format!("Temperament: {}.", words.join(", "))
    };
    if p.shyness >= 0.7 {
        line.push_str(" When starting a conversation, hint rather than ask outright.");
    } else if p.shyness <= 0.3 {
        line.push_str(" When starting a conversation, ask directly.");
    }
    if p.empathy >= 0.7 {
        line.push_str(" Notice a cold answer and adjust or apologise.");
    }
    line
}

/// Who hears whom, worked out once for a pass over many characters: the entities standing in
/// each container (one pass over the entities), and each container's earshot once.
#[derive(Default)]
pub(crate) struct Hearing {
    standing: Option<BTreeMap<ContainerId, Vec<EntityId>>>,
    by_container: BTreeMap<ContainerId, WitnessSet>,
}

impl Hearing {
    /// Who hears `entity` besides itself (as [`World::hearers`]: the awake within earshot),
    /// shared by everyone in its container; `None` for an entity with no position.
    pub fn of(&mut self, world: &World, entity: EntityId) -> Option<&WitnessSet> {
        let here = world
            .entity(entity)
            .and_then(|e| e.activity.position.as_ref())
            .map(|p| p.container)?;
        let standing = self.standing.get_or_insert_with(|| {
            let mut map: BTreeMap<ContainerId, Vec<EntityId>> = BTreeMap::new();
            for e in world.entities() {
                if let Some(p) = &e.activity.position {
                    map.entry(p.container).or_default().push(e.id);
                }
            }
            map
        });
        let set = self.by_container.entry(here).or_insert_with(|| {
            let awake = |e: &EntityId| world.mind(*e).is_none_or(|m| !m.asleep);
            world
                .earshot_of(here)
                .iter()
                .filter_map(|c| standing.get(c))
                .flatten()
                .copied()
                .filter(awake)
                .collect::<WitnessSet>()
        });
        Some(set)
    }
}
