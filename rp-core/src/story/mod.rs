//! Scoped events and threads (docs/story.md): the rules that start and close events,
//! run their hooks, promote what survives them, and find the transitions that are due.
//!
//! Every rule here turns a decision into events on a scratch copy of the world
//! (`Batch`); the engine appends them in one commit. What a rule decided (conditions that
//! held, draws they took, the outcome of each effect) is in those events, so replay applies
//! outcomes and never evaluates a condition or a hook again (docs/architecture.md).
//!
//! **Conditions** (preconditions and `start_when`) are `$if` expressions evaluated as the
//! event's first participant would evaluate a line of its sheet: `self` and `has_fact` read
//! its sheet, `name` is its name, `present` the names of those in its place, `time` the clock
//! at the transition; `content`, `author` and `mentioned` are empty. A runtime type error makes
//! a condition false. Draws a condition takes are recorded with the start they allow; a check
//! that does not start the event records nothing, so the next check may draw the same numbers
//! again (a chance per turn is better written as the host's own roll).
//!
//! **Triggers.** An event with `start_at` or `start_when` starts by itself at the first check
//! at which `start_at` has come and its conditions hold; one with `expire_at` expires when the
//! clock reaches it unless it closed before. Checks run at the start of every turn, in the
//! input's commit, after the clock advances and before the input's line (so the turn's prompts
//! see the result), and whenever the host calls [`crate::Engine::run_due`]. Transitions due in
//! the same check run in time order (`due_between`), each on the world the earlier ones left.
//!
//! **Promotion** (docs/story.md). Closing an event keeps exactly four things: items into
//! inventories, facts onto edges, new edge summaries, one gist memory per witness
//! ([`crate::model::Promotion`]). The props stay in the closed record, which no prompt shows.

mod engine;

use crate::error::{Error, Result};
use crate::facts::{Condition, Context, Draws, RegexCache, SeededDraws};
use crate::log::{Event, World, hour_of};
use crate::model::MAX_KNOWLEDGE;
use crate::model::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the host gives to plan a scoped event (the id, status and times are the engine's).
/// Reads from JSON with these field names; only `name` and `participants` are required.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventPlan {
    /// Its name ("the picnic").
    pub name: String,
    /// Props: name → description.
    pub props: BTreeMap<String, String>,
    /// Who takes part (at least one).
    pub participants: Vec<EntityId>,
    /// `$if` expressions that must all hold for it to start.
    pub preconditions: Vec<String>,
    /// Effects when it starts.
    pub on_start: Vec<Effect>,
    /// Effects when it completes.
    pub on_complete: Vec<Effect>,
    /// 0–1.
    pub significance: f64,
    /// When it is due to start by itself.
    pub start_at: Option<Millis>,
    /// A `$if` expression checked each turn: it starts by itself when this holds.
    pub start_when: Option<String>,
    /// When it expires if still open.
    pub expire_at: Option<Millis>,
}

impl EventPlan {
    /// Reads a plan from a JSON object (unknown fields refused).
    pub fn from_json(json: &str) -> Result<EventPlan> {
        serde_json::from_str(json).map_err(|e| Error::invalid("event plan", e.to_string()))
    }

    /// The planned event this plan describes, with id `id`.
    pub fn into_event(self, id: ScopedEventId) -> ScopedEvent {
        ScopedEvent {
            id,
            name: self.name,
            status: EventStatus::Planned,
            props: self.props,
            participants: self.participants,
            preconditions: self.preconditions,
            on_start: self.on_start,
            on_complete: self.on_complete,
            significance: self.significance,
            start_at: self.start_at,
            start_when: self.start_when,
            expire_at: self.expire_at,
            started: None,
            closed: None,
        }
    }
}

/// Events built on a scratch copy of the world: each is applied (validated) as it is pushed,
/// so later rules see the earlier outcomes, and a failure leaves what was pushed before.
#[derive(Clone, Debug)]
pub(crate) struct Batch {
    /// The world with `events` applied.
    pub world: World,
    /// The events, in order.
    pub events: Vec<Event>,
}

impl Batch {
    /// A batch on a copy of `world`.
    pub fn new(world: &World) -> Batch {
        Batch {
            world: world.clone(),
            events: Vec::new(),
        }
    }

    /// Applies `event` to the scratch world and keeps it.
    pub fn push(&mut self, event: Event) -> Result<()> {
        self.world.apply(&event)?;
        self.events.push(event);
        Ok(())
    }

    /// Runs `rule` on a copy: on success its events are kept, on failure none are.
    pub fn attempt<T>(&mut self, rule: impl FnOnce(&mut Batch) -> Result<T>) -> Result<T> {
        let mut trial = self.clone();
        let out = rule(&mut trial)?;
        *self = trial;
        Ok(out)
    }

    /// Advances the clock to `now` (an error if `now` is in its past).
    pub fn advance_to(&mut self, now: Millis, what: &'static str) -> Result<()> {
        if now < self.world.now() {
            return Err(Error::invalid(
                what,
                format!(
                    "now ({now}) is before the world's clock ({})",
                    self.world.now()
                ),
            ));
        }
        if now > self.world.now() {
            self.push(Event::TimeAdvanced { to: now })?;
        }
        Ok(())
    }

    fn event(&self, id: ScopedEventId) -> Result<ScopedEvent> {
        self.world
            .scoped_event(id)
            .cloned()
            .ok_or_else(|| Error::not_found("scoped event", id))
    }
}

/// The world's generator, keeping every number it gives.
struct Recording {
    inner: SeededDraws,
    taken: Vec<f64>,
}

impl Draws for Recording {
    fn draw(&mut self) -> f64 {
        let d = self.inner.draw();
        self.taken.push(d);
        d
    }
}

/// Checks the conditions of `ev` at `at` (`start_when` too if `trigger`). `Ok(draws)` when all
/// hold; otherwise why not.
fn conditions_hold(
    world: &World,
    ev: &ScopedEvent,
    at: Millis,
    trigger: bool,
) -> std::result::Result<Vec<f64>, String> {
    let first = ev
        .participants
        .first()
        .and_then(|p| world.entity(*p))
        .ok_or_else(|| format!("{} has no participant left", ev.name))?;
    let present = world.present_names(first.id);
    let ctx = Context {
        name: &first.name,
        present: &present,
        hour: hour_of(at),
        drives: Default::default(),
        ..Context::default()
    };
    let seed = world.meta().map_or(0, |m| m.settings.seed);
    let mut draws = Recording {
        inner: SeededDraws::new(seed, world.draws_taken()),
        taken: Vec::new(),
    };
    let trigger = ev.start_when.iter().filter(|_| trigger);
    for (source, kind) in ev
        .preconditions
        .iter()
        .map(|c| (c, "precondition"))
        .chain(trigger.map(|c| (c, "start condition")))
    {
        let mut regexes = RegexCache::default();
        let compiled = match world.sheet(first.id) {
            Some(sheet) => Condition::compile_for(source, sheet, &mut regexes),
            None => Condition::compile(source, &mut regexes),
        }
        .map_err(|e| format!("the {kind} `{source}` does not compile: {}", e.message))?;
        match compiled.test(&ctx, &mut draws) {
            Ok(true) => {}
            Ok(false) => return Err(format!("the {kind} `{source}` does not hold")),
            Err(e) => return Err(format!("the {kind} `{source}` failed: {e}")),
        }
    }
    Ok(draws.taken)
}

/// Starts event `id` at `at`: its preconditions (and `start_when`, if `trigger`) must hold;
/// then its `on_start` effects.
pub(crate) fn start(batch: &mut Batch, id: ScopedEventId, at: Millis, trigger: bool) -> Result<()> {
    let ev = batch.event(id)?;
    if !ev.status.can_become(EventStatus::Active) {
        return Err(crate::log::transition_error(&ev, EventStatus::Active));
    }
    let draws = conditions_hold(&batch.world, &ev, at, trigger)
        .map_err(|why| Error::conflict(format!("{} ({id}) cannot start: {why}", ev.name)))?;
    batch.push(Event::ScopedEventStarted { id, at, draws })?;
    run_effects(batch, &ev, &ev.on_start, at)
}

/// Closes event `id` as `status` at `at`: the transition, then (if completed) its
/// `on_complete` effects, then the promotion's outcomes.
pub(crate) fn close(
    batch: &mut Batch,
    id: ScopedEventId,
    status: EventStatus,
    at: Millis,
    promotion: Promotion,
) -> Result<()> {
    let ev = batch.event(id)?;
    if status.is_closed() && !ev.status.can_become(status) {
        return Err(crate::log::transition_error(&ev, status));
    }
    batch.push(Event::ScopedEventClosed {
        id,
        status,
        at,
        promotion: promotion.clone(),
    })?;
    if status == EventStatus::Completed {
        run_effects(batch, &ev, &ev.on_complete, at)?;
    }
    promote(batch, &ev, &promotion, at)
}

fn promote(batch: &mut Batch, ev: &ScopedEvent, p: &Promotion, at: Millis) -> Result<()> {
    for it in &p.items {
        give(batch, it.item, it.to)?;
    }
    for k in &p.knowledge {
        teach(batch, k.who, k.about, &k.fact, at)?;
    }
    for s in &p.summaries {
        let mut edge = edge(&batch.world, s.from, s.to, at);
        edge.summary = s.summary.trim().to_owned();
        batch.push(Event::EdgeUpdated { edge })?;
    }
    let witnesses: WitnessSet = ev.participants.iter().copied().collect();
    for g in &p.gists {
        let memory = Memory::new(
            MemoryId(batch.world.next_id()),
            g.witness,
            witnesses.clone(),
            g.text.trim(),
            MemoryKind::EventGist,
            g.significance.unwrap_or(ev.significance),
            at,
        );
        batch.push(Event::MemoryAdded { memory })?;
    }
    Ok(())
}

fn run_effects(batch: &mut Batch, ev: &ScopedEvent, effects: &[Effect], at: Millis) -> Result<()> {
    for effect in effects {
        run_effect(batch, ev, effect, at).map_err(|e| {
            Error::conflict(format!(
                "an effect of {} ({}) cannot run: {e}",
                ev.name, ev.id
            ))
        })?;
    }
    Ok(())
}

fn run_effect(batch: &mut Batch, ev: &ScopedEvent, effect: &Effect, at: Millis) -> Result<()> {
    match effect {
        Effect::SystemLine { text } => batch.push(Event::SystemLineInjected {
            line: SystemLine {
                id: batch.world.next_id(),
                text: text.trim().to_owned(),
                audience: Some(ev.participants.clone()),
                at,
            },
        }),
        Effect::Memory { text, significance } => {
            let witnesses: WitnessSet = ev.participants.iter().copied().collect();
            for &owner in &ev.participants {
                batch.push(Event::MemoryAdded {
                    memory: Memory::new(
                        MemoryId(batch.world.next_id()),
                        owner,
                        witnesses.clone(),
                        text.trim(),
                        MemoryKind::EventGist,
                        *significance,
                        at,
                    ),
                })?;
            }
            Ok(())
        }
        Effect::GiveItem { item, to } => give(batch, *item, *to),
        Effect::TeachFact { who, about, fact } => teach(batch, *who, *about, fact, at),
        Effect::ChangeEdge {
            from,
            to,
            affinity,
            trust,
            summary,
        } => {
            let mut e = edge(&batch.world, *from, *to, at);
            e.affinity = (e.affinity + affinity).clamp(-1.0, 1.0);
            e.trust = (e.trust + trust).clamp(-1.0, 1.0);
            if let Some(s) = summary {
                e.summary = s.trim().to_owned();
            }
            batch.push(Event::EdgeUpdated { edge: e })
        }
        Effect::OpenThread { text } => batch.push(Event::ThreadOpened {
            thread: Thread {
                id: ThreadId(batch.world.next_id()),
                text: text.trim().to_owned(),
                participants: ev.participants.clone(),
                opened: at,
                status: ThreadStatus::Open,
                event: Some(ev.id),
            },
        }),
        Effect::CloseThread { thread, status } => {
            // A thread someone else closed already has nothing left to close.
            let ids: Vec<ThreadId> = batch
                .world
                .threads()
                .filter(|t| t.status == ThreadStatus::Open)
                .filter(|t| match thread {
                    Some(id) => t.id == *id,
                    None => t.event == Some(ev.id),
                })
                .map(|t| t.id)
                .collect();
            for id in ids {
                batch.push(Event::ThreadClosed {
                    id,
                    status: *status,
                })?;
            }
            Ok(())
        }
    }
}

/// The edge `from → to` as it is (or a new one), touched at `at`.
fn edge(world: &World, from: EntityId, to: EntityId, at: Millis) -> Edge {
    let mut e = world
        .edge(from, to)
        .cloned()
        .unwrap_or_else(|| Edge::new(from, to));
    e.last_interaction = Some(at);
    e
}

fn teach(batch: &mut Batch, who: EntityId, about: EntityId, fact: &str, at: Millis) -> Result<()> {
    let fact = fact.trim();
    let mut e = edge(&batch.world, who, about, at);
    if e.knowledge.iter().any(|k| k.eq_ignore_ascii_case(fact)) {
        return Ok(());
    }
    e.knowledge.push(fact.to_owned());
    if e.knowledge.len() > MAX_KNOWLEDGE {
        e.knowledge.remove(0);
    }
    batch.push(Event::EdgeUpdated { edge: e })
}

/// Puts `item` into `to`'s inventory: out of its carrier's hands and inventory, or out of its
/// place. Nothing happens if `to` carries it already.
pub(crate) fn give(batch: &mut Batch, item: EntityId, to: EntityId) -> Result<()> {
    let w = &batch.world;
    let receiver = w.entity(to).ok_or_else(|| Error::not_found("entity", to))?;
    if receiver.inventory.contains(&item) {
        return Ok(());
    }
    let thing = w
        .entity(item)
        .ok_or_else(|| Error::not_found("entity", item))?;
    let positioned = thing.activity.position.is_some();
    let mut inventory = receiver.inventory.clone();
    inventory.push(item);
    if let Some(carrier) = w.carrier_of(item).and_then(|c| w.entity(c)).cloned() {
        if carrier.activity.holding.contains(&item) {
            let mut activity = carrier.activity.clone();
            activity.holding.retain(|h| *h != item);
            batch.push(Event::ActivityChanged {
                entity: carrier.id,
                activity,
            })?;
        }
        let mut rest = carrier.inventory.clone();
        rest.retain(|i| *i != item);
        batch.push(Event::InventoryChanged {
            entity: carrier.id,
            inventory: rest,
        })?;
    } else if positioned {
        let mut activity = batch
            .world
            .entity(item)
            .map(|e| e.activity.clone())
            .unwrap_or_default();
        activity.position = None;
        batch.push(Event::ActivityChanged {
            entity: item,
            activity,
        })?;
    }
    batch.push(Event::InventoryChanged {
        entity: to,
        inventory,
    })
}

/// A transition a scoped event is due for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Transition {
    /// Start (if its conditions hold then).
    Start,
    /// Expire.
    Expire,
}

/// The transitions due in `(from, to]`, in the order they run: by time, then event id, a
/// start before an expiry. A start is due at its `start_at`; one without (`start_when` only),
/// or whose `start_at` is at or before `from` (it is waiting for its conditions), is due at
/// `to`. An expiry is due at its `expire_at`, clamped to `from` if that passed already.
pub(crate) fn due_between(
    world: &World,
    from: Millis,
    to: Millis,
) -> Vec<(Millis, ScopedEventId, Transition)> {
    let mut due = Vec::new();
    if to < from {
        return due;
    }
    for ev in world.scoped_events() {
        if ev.status == EventStatus::Planned && (ev.start_at.is_some() || ev.start_when.is_some()) {
            // A start whose time came at or before `from` had its check then and is waiting
            // for its conditions: it is checked again at `to`.
            let at = ev.start_at.filter(|s| *s > from).unwrap_or(to);
            if at <= to {
                due.push((at, ev.id, Transition::Start));
            }
        }
        if !ev.status.is_closed()
            && let Some(e) = ev.expire_at
            && e <= to
        {
            due.push((e.max(from), ev.id, Transition::Expire));
        }
    }
    due.sort();
    due
}

/// What a check of due transitions did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DueOutcome {
    /// Events that started.
    pub started: Vec<ScopedEventId>,
    /// Events that expired.
    pub expired: Vec<ScopedEventId>,
    /// Events due to start that did not, and why (conditions that do not hold yet, an
    /// effect that cannot run): they are checked again next time.
    pub held: Vec<(ScopedEventId, String)>,
}

/// Runs the transitions due in `(from, to]` on `batch` (whose clock is at `to` or later), in
/// order, each on the world the earlier ones left.
pub(crate) fn run_due(batch: &mut Batch, from: Millis, to: Millis) -> DueOutcome {
    let mut out = DueOutcome::default();
    for (at, id, transition) in due_between(&batch.world, from, to) {
        let Some(status) = batch.world.scoped_event(id).map(|e| e.status) else {
            continue;
        };
        match transition {
            Transition::Start if status == EventStatus::Planned => {
                match batch.attempt(|b| start(b, id, at, true)) {
                    Ok(()) => out.started.push(id),
                    Err(e) => out.held.push((id, e.to_string())),
                }
            }
            Transition::Expire if !status.is_closed() => {
                match batch
                    .attempt(|b| close(b, id, EventStatus::Expired, at, Promotion::default()))
                {
                    Ok(()) => out.expired.push(id),
                    Err(e) => out.held.push((id, e.to_string())),
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether any scoped event could be due at some point (one not closed).
pub(crate) fn any_open(world: &World) -> bool {
    world.scoped_events().any(|e| !e.status.is_closed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world_with(events: &[(u64, Option<Millis>, Option<Millis>)]) -> World {
        let mut w = World::new();
        w.apply(&Event::WorldCreated {
            name: "w".into(),
            now: 0,
            settings: Default::default(),
        })
        .unwrap();
        w.apply(&Event::EntityCreated {
            id: EntityId(1),
            key: None,
            name: "Mira".into(),
            aliases: vec![],
            facts: FactSheet::default(),
            host_controlled: false,
            state: Default::default(),
        })
        .unwrap();
        for (id, start_at, expire_at) in events {
            let plan = EventPlan {
                name: format!("e{id}"),
                participants: vec![EntityId(1)],
                start_at: *start_at,
                expire_at: *expire_at,
                ..EventPlan::default()
            };
            w.apply(&Event::ScopedEventPlanned {
                event: plan.into_event(ScopedEventId(*id)),
            })
            .unwrap();
        }
        w
    }

    #[test]
    fn due_transitions_come_in_time_order_clamped_to_the_window() {
        let w = world_with(&[
            (10, Some(500), Some(900)),
            (11, Some(100), None),
            (12, None, Some(300)),
            (13, Some(2000), None),
            (14, Some(700), Some(700)),
        ]);
        let due = due_between(&w, 200, 1000);
        assert_eq!(
            due,
            vec![
                (300, ScopedEventId(12), Transition::Expire),
                (500, ScopedEventId(10), Transition::Start),
                (700, ScopedEventId(14), Transition::Start),
                (700, ScopedEventId(14), Transition::Expire),
                (900, ScopedEventId(10), Transition::Expire),
                (1000, ScopedEventId(11), Transition::Start),
            ]
        );
        assert!(due_between(&w, 1000, 999).is_empty());
    }

    #[test]
    fn running_due_transitions_applies_them_in_order() {
        let w = world_with(&[(10, Some(500), Some(900)), (14, Some(700), Some(700))]);
        let mut batch = Batch::new(&w);
        batch.advance_to(1000, "test").unwrap();
        let out = run_due(&mut batch, 0, 1000);
        assert_eq!(out.started, vec![ScopedEventId(10), ScopedEventId(14)]);
        assert_eq!(out.expired, vec![ScopedEventId(14), ScopedEventId(10)]);
        let ev = batch.world.scoped_event(ScopedEventId(10)).unwrap();
        assert_eq!((ev.started, ev.closed), (Some(500), Some(900)));
        assert_eq!(ev.status, EventStatus::Expired);
    }
}
