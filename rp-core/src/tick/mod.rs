//! The tick (docs/drives.md): the host calls [`Engine::next_tick_at`] to learn when anything
//! can next happen, sleeps until then, and runs a [`TickMachine`]. A tick does the cheap work
//! in arithmetic — characters fall asleep or wake, inboxes are processed, scoped events start,
//! memories fade (docs/memory.md) — and commits it; then it asks the fast model for the
//! summaries of whole memories that faded (purpose `summary`) and the smart model for the
//! reflections that fell due (purpose `reflect`), each answer committed as it comes; then, for
//! each character whose pressure crossed its threshold with every gate open, it asks for one
//! line (purpose `initiate`) and runs the rest as a turn: the line is committed with witnesses
//! from positions, and those who heard it decide through response control whether to answer.
//! With nothing due it asks for nothing and commits nothing.
//!
//! ```
//! # use rp_core::{Engine, Event, tick::TickOptions, machine::Step, GenerateResult};
//! # let mut engine = Engine::in_memory("Demo", 0)?;
//! let now = 3_600_000;
//! if let Some(next) = engine.next_tick_at(now)? {
//!     let mut tick = engine.begin_tick(next.at, TickOptions::default())?;
//!     while let Step::Generate(_request) = tick.step(&mut engine)? {
//!         tick.provide(&mut engine, GenerateResult::text("Quiet tonight, isn't it?"))?;
//!     }
//!     let outcome = tick.finish(&mut engine)?;
//!     # let _ = outcome;
//! }
//! # Ok::<(), rp_core::Error>(())
//! ```

mod engine;
mod memory;
mod rules;
mod think;

use memory::{Asking, MemoryWork};

use crate::drives::{self, Candidate, Gate, TickReason};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::facts::SeededDraws;
use crate::log::{Event, Message, World};
use crate::machine::{GenerateResult, Step};
use crate::model::{
    Classification, EntityId, Layer, MemoryId, Millis, RuleId, Seq, StageChange, Stimulus,
    WeightChange,
};
use crate::turn::{TurnMachine, TurnOptions, TurnOutcome};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How a tick runs. Reads from JSON with these field names, every one optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TickOptions {
    /// How the initiations' turns run (prompt, sampling, memories, responders…).
    pub turn: TurnOptions,
    /// The most characters that start a conversation in one tick (the highest pressures).
    pub max_initiations: usize,
}

impl Default for TickOptions {
    fn default() -> Self {
        TickOptions {
            turn: TurnOptions::default(),
            max_initiations: 2,
        }
    }
}

impl TickOptions {
    /// Reads options from a JSON object (unknown fields refused).
    pub fn from_json(json: &str) -> Result<TickOptions> {
        crate::json::json_object("tick options", json)
    }

    /// Whether the options are usable.
    pub fn check(&self) -> Result<()> {
        self.turn.check()
    }
}

/// What a tick did to one character's mind.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MindChange {
    /// Whose.
    pub entity: EntityId,
    /// `Some(true)`: fell asleep; `Some(false)`: woke.
    pub asleep: Option<bool>,
    /// Stimuli processed.
    pub processed: Vec<u64>,
    /// Stimuli filtered out by its mode.
    pub filtered: Vec<u64>,
}

/// An initiation a tick made, with its explanation and the turn it started.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InitiationOutcome {
    /// The candidate as it crossed (its terms, threshold, gates).
    pub candidate: Candidate,
    /// The explanation in words.
    pub explanation: String,
    /// The turn: the first line (its first reply) and the answers to it.
    pub turn: TurnOutcome,
}

/// What a tick committed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TickOutcome {
    /// The head after the tick.
    pub seq: Seq,
    /// The tick's time.
    pub at: Millis,
    /// Minds that changed.
    pub changes: Vec<MindChange>,
    /// Initiations, in the order they were made.
    pub initiations: Vec<InitiationOutcome>,
    /// Characters whose initiation a gate held back (the sheet's `$initiate false`, or a gate
    /// that closed since the crossing was computed): they wait one processing interval.
    pub held: Vec<(EntityId, Vec<Gate>)>,
    /// Characters whose `$retry` fell due: run a wake-up turn near them to let them answer.
    pub retries: Vec<EntityId>,
    /// Whether scoped events started or expired.
    pub story: bool,
    /// Memories the decay pass moved on without a model (to a residue, or forgotten).
    pub faded: Vec<StageChange>,
    /// Whole memories reduced to summaries.
    pub summarized: Vec<MemoryId>,
    /// The reflections made, in order.
    pub reflections: Vec<ReflectionOutcome>,
    /// Rules that fired (docs/rules.md), with whose they are.
    pub rules_fired: Vec<(EntityId, RuleId)>,
    /// Rules forgotten: their weight faded below `rule_forget_below`.
    pub rules_forgotten: Vec<(EntityId, RuleId)>,
    /// What characters learned from the answers to their initiations, in order.
    pub learned: Vec<LearnedOutcome>,
    /// How many of the stimuli processed stopped at each layer (docs/drives.md, "Layers").
    pub layers: LayerCounts,
    /// Stimuli hoisted to the fast model, in order, and what it made of them.
    pub classified: Vec<ClassifiedOutcome>,
    /// The thoughts formed (memories of kind `thought`), with whose they are.
    pub thoughts: Vec<(EntityId, MemoryId)>,
}

/// How many processed stimuli stopped at each layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LayerCounts {
    /// Arithmetic alone.
    pub reflex: u32,
    /// A rule fired on it.
    pub rules: u32,
    /// The fast model classified it.
    pub classify: u32,
    /// The smart model thought about it.
    pub think: u32,
}

impl LayerCounts {
    fn at(&mut self, layer: Layer) -> &mut u32 {
        match layer {
            Layer::Reflex => &mut self.reflex,
            Layer::Rules => &mut self.rules,
            Layer::Classify => &mut self.classify,
            Layer::Think => &mut self.think,
        }
    }

    /// `n` stimuli counted at `from` went on to `to`.
    fn moved(&mut self, from: Layer, to: Layer, n: u32) {
        let f = self.at(from);
        *f = f.saturating_sub(n);
        *self.at(to) += n;
    }
}

/// Stimuli a tick hoisted to the fast model, and what it made of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassifiedOutcome {
    /// Whose stimuli.
    pub entity: EntityId,
    /// Their kind.
    pub kind: String,
    /// Why they were hoisted.
    pub reason: String,
    /// What the fast model made of them (`None`: rejected).
    pub classification: Option<Classification>,
    /// Why they went on to thought, if they did.
    pub thought: Option<String>,
}

/// What a character learned from the answer to its initiation (or its lack).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LearnedOutcome {
    /// Who learned.
    pub entity: EntityId,
    /// Who answered (or did not).
    pub from: EntityId,
    /// Why, in words.
    pub reason: String,
    /// The weights moved.
    pub changes: Vec<WeightChange>,
}

impl TickOutcome {
    /// Notes a rule or feedback event the tick committed.
    fn note_rules(&mut self, e: &Event) {
        match e {
            Event::RuleFired {
                entity,
                rule,
                held: false,
                ..
            } => self.rules_fired.push((*entity, *rule)),
            Event::RuleRemoved { entity, rule, .. } => self.rules_forgotten.push((*entity, *rule)),
            Event::FeedbackLearned {
                entity,
                feedback,
                changes,
                reason,
                ..
            } => self.learned.push(LearnedOutcome {
                entity: *entity,
                from: feedback.from,
                reason: reason.clone(),
                changes: changes.clone(),
            }),
            _ => {}
        }
    }
}

/// A reflection a tick asked for, and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReflectionOutcome {
    /// Who reflected.
    pub entity: EntityId,
    /// The insights recorded (memories of kind `reflection`).
    pub insights: Vec<MemoryId>,
    /// Why the answer was rejected after its retry (nothing of it recorded).
    pub rejected: Option<String>,
}

/// A tick in progress. Like the other machines it borrows nothing: every call takes the engine.
#[derive(Debug)]
pub struct TickMachine {
    outcome: TickOutcome,
    options: TickOptions,
    queue: VecDeque<Candidate>,
    current: Option<(Candidate, TurnMachine)>,
    memory: VecDeque<MemoryWork>,
    asking: Option<Asking>,
    failed: Option<String>,
    done: bool,
}

impl TickMachine {
    /// Runs the tick's arithmetic at `now` and plans its initiations: see
    /// [`Engine::begin_tick`].
    pub fn begin(engine: &mut Engine, now: Millis, options: TickOptions) -> Result<TickMachine> {
        options.check()?;
        let world = engine.world().clone();
        if now < world.now() {
            return Err(Error::invalid(
                "tick",
                format!("now ({now}) is before the world's clock ({})", world.now()),
            ));
        }
        let due = engine.due_by(now);
        let story = drives::story_due(&world, world.now()).is_some_and(|at| at <= now);
        let decay = world.decay_due().is_some_and(|at| at <= now);
        let mut outcome = TickOutcome {
            at: now,
            ..TickOutcome::default()
        };
        if due.is_empty() && !story && !decay {
            outcome.seq = engine.head();
            return Ok(TickMachine {
                outcome,
                options,
                queue: VecDeque::new(),
                current: None,
                memory: VecDeque::new(),
                asking: None,
                failed: None,
                done: true,
            });
        }
        // The arithmetic: the clock, the story, sleep and the inboxes, in one commit.
        let mut batch = crate::story::Batch::new(&world);
        batch.advance_to(now, "tick")?;
        crate::story::run_due(&mut batch, world.now(), now);
        outcome.story = story
            && batch.events.iter().any(|e| {
                matches!(
                    e,
                    Event::ScopedEventStarted { .. } | Event::ScopedEventClosed { .. }
                )
            });
        let mut idle: Vec<EntityId> = Vec::new();
        let mut memory = VecDeque::new();
        for (entity, _, _) in &due {
            let mut busy = false;
            let mut processed: Vec<Stimulus> = Vec::new();
            if let Some(change) = maintain(&world, &batch.world, *entity, now) {
                if let Some(mind) = world.mind(*entity) {
                    processed = (mind.inbox.iter())
                        .filter(|s| change.processed.contains(&s.id))
                        .cloned()
                        .collect();
                }
                batch.push(Event::MindTicked {
                    entity: change.entity,
                    at: now,
                    asleep: change.asleep,
                    processed: change.processed.clone(),
                    filtered: change.filtered.clone(),
                })?;
                outcome.changes.push(change);
                busy = true;
            }
            // Its rules and the feedback due to it (docs/rules.md).
            let fired = rules::rule_events(&batch.world, *entity, &processed, now);
            let (ignored, ask) = rules::feedback_due(&batch.world, *entity, now);
            busy |= !fired.is_empty() || !ignored.is_empty() || !ask.is_empty();
            for e in fired.iter().chain(&ignored) {
                outcome.note_rules(e);
            }
            let ruled: Vec<u64> = fired
                .iter()
                .filter_map(|e| match e {
                    Event::RuleFired { stimulus, .. } => *stimulus,
                    _ => None,
                })
                .collect();
            rules::push_all(&mut batch, fired)?;
            rules::push_all(&mut batch, ignored)?;
            // Where the stimuli it processed stop (docs/drives.md, "Layers").
            let n_ruled = processed.iter().filter(|x| ruled.contains(&x.id)).count() as u32;
            outcome.layers.rules += n_ruled;
            outcome.layers.reflex += processed.len() as u32 - n_ruled;
            for hoist in drives::layers::hoists(&batch.world, *entity, &processed, &ruled) {
                let fresh: Vec<u64> = (hoist.stimuli.iter())
                    .filter(|x| processed.iter().any(|p| p.id == x.id))
                    .map(|x| x.id)
                    .collect();
                let from_rules = fresh.iter().filter(|id| ruled.contains(id)).count() as u32;
                outcome
                    .layers
                    .moved(Layer::Rules, Layer::Classify, from_rules);
                let from_reflex = fresh.len() as u32 - from_rules;
                outcome
                    .layers
                    .moved(Layer::Reflex, Layer::Classify, from_reflex);
                busy = true;
                memory.push_back(MemoryWork::Perceive {
                    entity: *entity,
                    hoist,
                    fresh: fresh.len() as u32,
                });
            }
            for (to, at) in ask {
                memory.push_back(MemoryWork::Classify {
                    entity: *entity,
                    to,
                    at,
                });
            }
            if !busy {
                idle.push(*entity);
            }
            if world
                .mind(*entity)
                .is_some_and(|m| m.retry_at.is_some_and(|r| r <= now))
            {
                outcome.retries.push(*entity);
            }
        }
        // Memories fade (docs/memory.md): the pass's arithmetic in this commit, the summaries
        // and reflections it calls for asked next, one at a time.
        if decay {
            let pass = crate::decay::pass(&batch.world, now);
            batch.push(Event::DecayPassed {
                at: now,
                changes: pass.changes.clone(),
                next: pass.next,
            })?;
            outcome.faded = pass.changes;
            for (owner, ids) in pass.summaries {
                memory.push_back(MemoryWork::Summary { owner, ids });
            }
        }
        for entity in crate::decay::reflections_due(&batch.world) {
            memory.push_back(MemoryWork::Reflect { entity });
        }
        // Who crosses now, with every gate open (the sheet's last).
        let mut planned: Vec<Candidate> = Vec::new();
        for (entity, _, reason) in &due {
            let w = &batch.world;
            if w.mind(*entity).is_none_or(|m| m.asleep) {
                continue;
            }
            let candidates = drives::candidates_now(w, *entity, now)?;
            let first_gates = candidates.first().map(|c| c.gates.clone());
            match candidates.into_iter().find(Candidate::is_due) {
                Some(mut c) => {
                    let gate = sheet_gate(w, &c, now)?;
                    let open = gate.open;
                    c.gates.push(gate);
                    if open {
                        planned.push(c);
                    } else {
                        hold(&mut batch, &mut outcome, *entity, now, c.gates.clone())?;
                    }
                }
                None if matches!(reason, TickReason::Pressure { .. }) => {
                    // The crossing computed for now did not hold (a gate changed): wait.
                    let gates = first_gates.unwrap_or_default();
                    hold(&mut batch, &mut outcome, *entity, now, gates)?;
                }
                None => {}
            }
        }
        planned.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.speaker.cmp(&b.speaker)));
        planned.truncate(options.max_initiations);
        let acted: Vec<EntityId> = planned
            .iter()
            .map(|c| c.speaker)
            .chain(outcome.held.iter().map(|(e, _)| *e))
            .collect();
        let intervals: Vec<(EntityId, f64)> = idle
            .iter()
            .filter(|e| !acted.contains(e))
            .map(|e| {
                let interval = drives::interval_ms(&batch.world, *e, now).unwrap_or(60_000.0);
                (*e, interval)
            })
            .collect();
        if batch.world.seq() > world.seq() {
            // Applied to the batch's world already: not validated twice.
            let epoch = engine.epoch();
            engine.append_applied(batch.events, Some((batch.world, epoch)), |_| ())?;
        }
        // A character found due with nothing to do is not due again for an interval of its
        // processing (so a host that ticks at next_tick_at never loops on one moment).
        for (entity, interval) in intervals {
            engine.defer(entity, now.saturating_add(interval.max(1_000.0) as Millis));
        }
        outcome.seq = engine.head();
        Ok(TickMachine {
            outcome,
            options,
            queue: planned.into(),
            current: None,
            memory,
            asking: None,
            failed: None,
            done: false,
        })
    }

    /// The tick's outcome so far (its arithmetic is committed when it begins).
    pub fn outcome(&self) -> &TickOutcome {
        &self.outcome
    }

    /// What the tick needs next: the generations of its initiations' turns, in order.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        loop {
            if self.done || self.failed.is_some() {
                return Ok(Step::Done);
            }
            if let Some(asking) = &self.asking {
                return Ok(Step::Generate(asking.request().clone()));
            }
            if let Some(work) = self.memory.pop_front() {
                self.asking = Some(Asking::new(engine.world(), work));
                continue;
            }
            if let Some((_, turn)) = &mut self.current {
                match turn.step(engine)? {
                    Step::Done => {
                        let (candidate, turn) = self.current.take().expect("checked above");
                        let explanation = candidate.explain(engine.world());
                        let turn = turn.finish(engine)?;
                        self.outcome.seq = turn.seq;
                        self.outcome.initiations.push(InitiationOutcome {
                            candidate,
                            explanation,
                            turn,
                        });
                    }
                    step => return Ok(step),
                }
                continue;
            }
            let Some(planned) = self.queue.pop_front() else {
                self.done = true;
                return Ok(Step::Done);
            };
            // An earlier initiation may have changed things: the candidate must still cross.
            let now = self.outcome.at;
            let still = drives::candidates_now(engine.world(), planned.speaker, now)?
                .into_iter()
                .find(|c| c.to == planned.to && c.is_due());
            let Some(mut c) = still else { continue };
            c.gates = planned.gates;
            let reason = c.reason(engine.world());
            let turn = TurnMachine::begin_initiation(
                engine,
                c.clone(),
                reason,
                now,
                self.options.turn.clone(),
            )?;
            self.current = Some((c, turn));
        }
    }

    /// Feeds the generation the last step asked for.
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        if let Some(asking) = self.asking.take() {
            return self.answer_memory(engine, asking, &result.text);
        }
        match &mut self.current {
            Some((_, turn)) => turn.provide(engine, result),
            None => Err(Error::conflict("the tick is not waiting for a generation")),
        }
    }

    /// Feeds the vectors the last step asked for.
    pub fn provide_embeddings(
        &mut self,
        engine: &mut Engine,
        vectors: Vec<Vec<f32>>,
    ) -> Result<()> {
        match &mut self.current {
            Some((_, turn)) => turn.provide_embeddings(engine, vectors),
            None => Err(Error::conflict("the tick is not waiting for vectors")),
        }
    }

    /// Feeds the host's answer to the action the last step asked for.
    pub fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<serde_json::Value, String>,
    ) -> Result<()> {
        match &mut self.current {
            Some((_, turn)) => turn.provide_action(engine, answer),
            None => Err(Error::conflict("the tick is not waiting for an action")),
        }
    }

    /// The host could not answer: the initiation in progress is held back one processing
    /// interval (committed; a reflection is recorded as rejected, summaries wait for the next
    /// pass), the tick ends, and [`TickMachine::finish`] reports the failure.
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        if let Some(asking) = self.asking.take() {
            self.fail_memory(engine, asking, reason)?;
            self.failed = Some(reason.to_owned());
            return Ok(());
        }
        let Some((c, _)) = self.current.take() else {
            return Err(Error::conflict(
                "the tick asks for nothing to fail; finish it",
            ));
        };
        let hold = crate::turn::hold_event(engine.world(), c.speaker, self.outcome.at);
        self.outcome.seq = engine.append(vec![hold])?;
        self.outcome.held.push((c.speaker, c.gates));
        self.failed = Some(reason.to_owned());
        Ok(())
    }

    /// Returns what the tick committed. Refused while a generation is still needed.
    pub fn finish(self, _engine: &mut Engine) -> Result<TickOutcome> {
        if let Some(reason) = self.failed {
            return Err(Error::Generation { message: reason });
        }
        if !self.done {
            return Err(Error::conflict(
                "the tick still needs what step() asks for; provide it before finishing",
            ));
        }
        Ok(self.outcome)
    }

    /// Whether [`TickMachine::finish`] would return now.
    pub fn is_done(&self) -> bool {
        self.done || self.failed.is_some()
    }
}

impl crate::machine::Machine for TickMachine {
    type Outcome = TickOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        TickMachine::step(self, engine)
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        TickMachine::provide(self, engine, result)
    }

    fn provide_embeddings(&mut self, engine: &mut Engine, vectors: Vec<Vec<f32>>) -> Result<()> {
        TickMachine::provide_embeddings(self, engine, vectors)
    }

    fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<serde_json::Value, String>,
    ) -> Result<()> {
        TickMachine::provide_action(self, engine, answer)
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        TickMachine::fail(self, engine, reason)
    }

    fn finish(self, engine: &mut Engine) -> Result<TickOutcome> {
        TickMachine::finish(self, engine)
    }
}

/// Plays host time from the world's clock to `until` (docs/drives.md): ticks at each
/// [`Engine::next_tick_at`] up to `until`, every request answered by `generator`, then moves
/// the clock to `until`. Returns each tick's outcome, in order. Stops at the first error (a
/// failed generation holds that initiation back, committed, and is returned as the error).
pub async fn advance(
    engine: &mut Engine,
    until: Millis,
    options: &TickOptions,
    generator: &dyn crate::machine::Generate,
) -> Result<Vec<TickOutcome>> {
    // Checked here too: with nothing due, no tick would ever see them.
    options.check()?;
    if until < engine.world().now() {
        return Err(Error::invalid(
            "time",
            format!(
                "advance: until ({until}) is before the world's clock ({}); time never goes back",
                engine.world().now()
            ),
        ));
    }
    let mut outcomes = Vec::new();
    // Each tick commits, or defers the characters it found nothing to do for, so the next
    // moment due is later: the loop ends.
    loop {
        let from = engine.world().now();
        let Some(next) = engine.next_tick_at(from)? else {
            break;
        };
        if next.at > until {
            break;
        }
        let tick = engine.begin_tick(next.at, options.clone())?;
        let outcome =
            crate::machine::run(engine, tick, generator, &mut crate::machine::NoSink).await?;
        outcomes.push(outcome);
    }
    if until > engine.world().now() {
        engine.append(vec![Event::TimeAdvanced { to: until }])?;
    }
    Ok(outcomes)
}

/// Holds `entity`'s initiations one processing interval (recorded), noting the gates.
fn hold(
    batch: &mut crate::story::Batch,
    outcome: &mut TickOutcome,
    entity: EntityId,
    now: Millis,
    gates: Vec<Gate>,
) -> Result<()> {
    let event = crate::turn::hold_event(&batch.world, entity, now);
    batch.push(event)?;
    outcome.held.push((entity, gates));
    Ok(())
}

/// The sheet's gate: `$initiate false` firing holds the initiation back. Evaluated with the
/// addressee as `author`, nothing as `content`, and the character's drives; its random draws
/// come from the world's generator without advancing it (nothing is recorded of them: the
/// initiation, or the hold, is).
fn sheet_gate(world: &World, c: &Candidate, now: Millis) -> Result<Gate> {
    let author = world
        .entity(c.to)
        .map_or_else(String::new, |e| e.name.clone());
    let message = Message {
        author,
        mentioned: Some(false),
        drives: drives::values(world, c.speaker, now),
        ..Message::default()
    };
    let seed = world.meta().map_or(0, |m| m.settings.seed);
    let mut draws = SeededDraws::new(seed, world.draws_taken());
    let decision = world.decide(c.speaker, &message, &mut draws)?;
    let open = decision.initiate != Some(false);
    Ok(Gate {
        name: "sheet".into(),
        open,
        detail: if open {
            "the sheet allows it".into()
        } else {
            "$initiate false fired".into()
        },
    })
}

/// What a tick at `now` does to `entity`'s mind in arithmetic: sleep or wake, and its inbox
/// processed (by its mode) once due, as the schedule saw it from the world before the tick
/// (`before`). `None`: nothing.
fn maintain(before: &World, world: &World, entity: EntityId, now: Millis) -> Option<MindChange> {
    let mind = world.mind(entity)?;
    let s = world.drive_settings(entity);
    let night = s.is_night(drives::hour_of_day(now));
    let energy = mind.energy_at(&s, now);
    let mode_now = drives::mode_at(world, entity, now)?;
    // The schedule solved these moments to the millisecond; a hair of rounding must not keep
    // the tick from doing what it came for.
    const EPS: f64 = 1e-9;
    let asleep = if mind.asleep {
        (!night && energy >= s.wake_energy - EPS).then_some(false)
    } else {
        let quiet = mode_now != crate::model::Mode::Alert;
        ((night && quiet) || energy <= s.sleep_energy + EPS).then_some(true)
    };
    let mode = match asleep {
        Some(true) => crate::model::Mode::Sleep,
        Some(false) => crate::model::Mode::Relaxed,
        None => mode_now,
    };
    let due_inbox = drives::inbox_due_at(before, entity, before.now()).is_some_and(|at| at <= now);
    let (mut processed, mut filtered) = (Vec::new(), Vec::new());
    if due_inbox {
        for s in &mind.inbox {
            if mode.processes(s.priority) {
                processed.push(s.id);
            } else {
                filtered.push(s.id);
            }
        }
    }
    let retry = mind.retry_at.is_some_and(|r| r <= now);
    if asleep.is_none() && processed.is_empty() && filtered.is_empty() && !retry {
        return None;
    }
    Some(MindChange {
        entity,
        asleep,
        processed,
        filtered,
    })
}
