//! The sans-IO turn machine: `begin_turn` commits the input, `step` says what the engine needs
//! next, `provide` feeds it, `finish` commits the outcome in one transaction.
//!
//! ```
//! use rp_core::{Engine, EntityId, Event, turn::{GenerateResult, Step, TurnInput}};
//! # let mut engine = Engine::in_memory("Demo", 0)?;
//! # let room = rp_core::ContainerId(engine.world().next_id());
//! # engine.append(vec![Event::ContainerCreated { id: room, key: None, name: "Room".into(),
//! #     facts: Default::default(), parent: None, slots: vec![], properties: Default::default() }])?;
//! # let at = |c| rp_core::Activity { position: Some(rp_core::Position { container: c, slot: None }), ..Default::default() };
//! # let (wren, mira) = (EntityId(engine.world().next_id()), EntityId(engine.world().next_id() + 1));
//! # engine.append(vec![
//! #     Event::EntityCreated { id: wren, key: None, name: "Wren".into(), aliases: vec![], facts: Default::default(), host_controlled: true, state: Default::default() },
//! #     Event::EntityCreated { id: mira, key: None, name: "Mira".into(), aliases: vec![], facts: Default::default(), host_controlled: false, state: Default::default() },
//! #     Event::ActivityChanged { entity: wren, activity: at(room) },
//! #     Event::ActivityChanged { entity: mira, activity: at(room) },
//! # ])?;
//! let mut turn = engine.begin_turn(TurnInput::say(wren, "Evening, Mira.", 1_000))?; // committed
//! while let Step::Generate(request) = turn.step()? {
//!     // the host's model, the host's threads, the host's streaming
//!     turn.provide(GenerateResult::text("Evening. What'll it be?"))?;
//! }
//! let outcome = turn.finish()?; // replies and memories, in one transaction
//! assert_eq!(outcome.replies[0].text, "Evening. What'll it be?");
//! # Ok::<(), rp_core::Error>(())
//! ```

use super::prompt::{
    self, CharsPerToken, Gathered, MemoryPick, Prompt, PromptOptions, TokenCounter,
};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::facts::{Decision, SeededDraws};
use crate::log::{Event, JudgedReport, Message, World, decision_event};
use crate::machine::{
    ChatMessage, EmbedRequest, GenerateRequest, GenerateResult, Purpose, Role, Sampling, Step,
};
use crate::model::{
    EntityId, Memory, MemoryId, MemoryKind, Millis, SceneId, Seq, Utterance, UtteranceId,
    WitnessSet,
};
use crate::scene::{self, SceneClose, SceneOptions};
use crate::update::{self, UpdateOptions, cut_at};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What starts a turn. Reads from JSON with these field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnInput {
    /// Who speaks: a host-controlled entity (the player).
    pub speaker: EntityId,
    /// What it says. Empty: a wake-up turn, in which the characters near the speaker that
    /// heard something since they last spoke reconsider the last line each heard (after a
    /// `$retry`, or when time has passed).
    #[serde(default)]
    pub text: String,
    /// The host clock. The world's clock advances to it (it never goes back).
    pub now: Millis,
    /// Who hears the input, overriding the positions (the speaker is always added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnesses: Option<Vec<EntityId>>,
}

impl TurnInput {
    /// `speaker` says `text` at `now`; the witnesses come from positions.
    pub fn say(speaker: EntityId, text: impl Into<String>, now: Millis) -> TurnInput {
        TurnInput {
            speaker,
            text: text.into(),
            now,
            witnesses: None,
        }
    }

    /// A wake-up turn at `now` around `speaker` (nothing is said).
    pub fn wake(speaker: EntityId, now: Millis) -> TurnInput {
        TurnInput::say(speaker, "", now)
    }

    /// Reads an input from a JSON object (unknown fields refused).
    pub fn from_json(json: &str) -> Result<TurnInput> {
        crate::json::json_object("turn input", json)
    }
}

/// How a turn runs. Reads from JSON with these field names, every one optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnOptions {
    /// Prompt building.
    pub prompt: PromptOptions,
    /// Sampling parameters of reply requests.
    pub sampling: Sampling,
    /// Record each line of the turn as a memory of each witness (its own point of view), so
    /// later recalls can find it once it has left the dialogue window.
    pub remember_dialogue: bool,
    /// Significance of those memories, 0–1.
    pub dialogue_significance: f64,
    /// Ask the host for vectors (semantic recall): one for the input before prompts are built,
    /// and one per remembered line before the turn commits.
    pub semantic: bool,
    /// The most characters that answer in one turn.
    pub max_responders: usize,
    /// The state-update pass after the replies ([`crate::update`]).
    pub updates: UpdateOptions,
    /// Offer replies the engine's tools (`roll_dice`, `roll_effects`): the engine rolls with
    /// the world's generator and asks again with the results, at most
    /// [`super::tools::MAX_TOOL_ROUNDS`] times per reply.
    pub tools: bool,
    /// When the turn opens and closes scenes ([`crate::scene`]): lines join the current scene
    /// of the speaker's container (one is opened if there is none), and the scenes the turn
    /// finds due are closed, with a summary per witness, before the replies.
    pub scenes: SceneOptions,
    /// Keep each responder's prompt in the outcome ([`TurnOutcome::prompts`]). Off by
    /// default: a prompt is kilobytes, and most hosts never read it after the turn
    /// ([`TurnMachine::prompts`] shows them while the turn runs).
    pub outcome_prompts: bool,
}

impl Default for TurnOptions {
    fn default() -> Self {
        TurnOptions {
            prompt: PromptOptions::default(),
            sampling: Sampling::default(),
            remember_dialogue: true,
            dialogue_significance: 0.3,
            semantic: false,
            max_responders: 8,
            updates: UpdateOptions::default(),
            tools: true,
            scenes: SceneOptions::default(),
            outcome_prompts: false,
        }
    }
}

impl TurnOptions {
    /// Reads options from a JSON object (every field optional, unknown fields refused).
    pub fn from_json(json: &str) -> Result<TurnOptions> {
        crate::json::json_object("turn options", json)
    }

    fn check(&self) -> Result<()> {
        self.prompt.check()?;
        self.updates.check()?;
        self.scenes.check()?;
        self.prompt.recall.check()?;
        if !(0.0..=1.0).contains(&self.dialogue_significance) {
            return Err(Error::invalid(
                "turn options",
                "dialogue_significance must be within 0–1",
            ));
        }
        if self.max_responders == 0 {
            return Err(Error::invalid(
                "turn options",
                "max_responders must be at least 1",
            ));
        }
        Ok(())
    }
}

/// A state-update pass judged, waiting for the host's answers to its actions.
#[derive(Clone, Debug)]
struct Judged {
    /// The world with the pass's changes applied.
    scratch: World,
    /// The record of the answer.
    generated: Event,
    verdict: update::Verdict,
}

impl PartialEq for Judged {
    fn eq(&self, other: &Self) -> bool {
        self.generated == other.generated && self.verdict.reports == other.verdict.reports
    }
}

/// A character's response decision in a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnDecision {
    /// Who decided.
    pub entity: EntityId,
    /// Whether the input mentioned it.
    pub mentioned: bool,
    /// The decision, with its trace.
    pub decision: Decision,
}

/// A line a character said in the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Who.
    pub speaker: EntityId,
    /// The utterance's id.
    pub utterance: UtteranceId,
    /// What it said.
    pub text: String,
}

/// A `$retry`: the host should start a wake-up turn at `at` (the engine keeps no timers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wake {
    /// Who asked to be woken.
    pub entity: EntityId,
    /// When, on the host clock.
    pub at: Millis,
}

/// What a finished turn did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The head after the commit.
    pub seq: Seq,
    /// The input's utterance (none for a wake-up turn).
    pub input: Option<UtteranceId>,
    /// Every response decision, in the order made.
    pub decisions: Vec<TurnDecision>,
    /// The replies, in the order spoken.
    pub replies: Vec<Reply>,
    /// Responders whose generation came back empty (they stay silent).
    pub silent: Vec<EntityId>,
    /// Wake-up times asked for by `$retry`.
    pub wake: Vec<Wake>,
    /// The prompt each responder was given, when the turn's options asked for them
    /// ([`TurnOptions::outcome_prompts`]); empty otherwise.
    pub prompts: Vec<Prompt>,
    /// The reports of the state-update pass, each applied or rejected with the reason.
    #[serde(default)]
    pub reports: Vec<JudgedReport>,
    /// The scenes the turn closed, each with a summary per witness (see [`crate::scene`]).
    #[serde(default)]
    pub closed_scenes: Vec<SceneId>,
}

/// A line of the turn to remember: (speaker, "Name: text", witnesses, vector, scene).
type Line = (
    EntityId,
    String,
    WitnessSet,
    Option<Vec<f32>>,
    Option<SceneId>,
);

/// Where the machine is.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Waiting for the summaries of the scenes the turn closes.
    Summarizing,
    /// Waiting for the vector of the query.
    QueryVector,
    /// Building the next responder's prompt.
    NextResponder,
    /// Waiting for the generation of responder `i`.
    Generating(GenerateRequest),
    /// Waiting for the state-update pass (the request, and whether it is the retry).
    Updating(GenerateRequest, bool),
    /// Waiting for the host's answers to the pass's actions: the pass, and the next action.
    Acting(Box<Judged>, usize),
    /// Waiting for vectors of the remembered lines.
    LineVectors(EmbedRequest),
    /// Ready to commit.
    Done,
    /// The host could not answer (see [`TurnMachine::fail`]): finishing commits nothing more.
    Failed(String),
}

/// A turn in progress. It borrows nothing: every call takes the engine, so a binding can keep
/// it beside the engine. [`Turn`] is the same machine holding the engine.
#[derive(Debug)]
pub struct TurnMachine {
    options: TurnOptions,
    input: TurnInput,
    /// The head right after the input was committed: finish refuses if the engine moved.
    base: Seq,
    input_utterance: Option<UtteranceId>,
    /// The text responders answer (the input, or in a wake-up turn the last line heard).
    query: String,
    /// The world with this turn's events applied, not yet committed.
    scratch: World,
    pending: Vec<Event>,
    /// The engine's epoch when `scratch` was copied from its world.
    epoch: u64,
    decisions: Vec<TurnDecision>,
    responders: Vec<EntityId>,
    next: usize,
    phase: Phase,
    query_vector: Option<Vec<f32>>,
    replies: Vec<Reply>,
    silent: Vec<EntityId>,
    wake: Vec<Wake>,
    prompts: Vec<Prompt>,
    recalled: Vec<MemoryId>,
    /// Lines to remember.
    lines: Vec<Line>,
    /// Whether the state-update pass is over (or was never asked for).
    updated: bool,
    /// System lines shown to a responder in this turn.
    shown_system: Vec<u64>,
    /// Rounds of tool calls the current responder has taken.
    tool_rounds: usize,
    /// The pass's reports, as judged.
    reports: Vec<JudgedReport>,
    /// Significance the pass gave the memories of (line, owner).
    significance: BTreeMap<(usize, EntityId), f64>,
    /// The scenes the turn closes, with their summaries so far.
    closing: Vec<SceneClose>,
    counter: Arc<dyn TokenCounter>,
}

impl std::fmt::Debug for dyn TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounter")
    }
}

impl Engine {
    /// Injects a system line (docs/turn.md §5c): the next prompts of `audience` (every
    /// character when `None`) carry `[SYSTEM: text]` after their newest line, never trimmed,
    /// until a turn has shown it to a responder. Recorded as an event; returns its id.
    pub fn inject_system_line(
        &mut self,
        text: &str,
        audience: Option<Vec<EntityId>>,
    ) -> Result<u64> {
        let id = self.world().next_id();
        self.append(vec![Event::SystemLineInjected {
            line: crate::model::SystemLine {
                id,
                text: text.trim().to_owned(),
                audience,
                at: self.world().now(),
            },
        }])?;
        Ok(id)
    }

    /// Starts a turn with the default options: see [`Engine::begin_turn_with`].
    pub fn begin_turn(&mut self, input: TurnInput) -> Result<Turn<'_>> {
        self.begin_turn_with(input, TurnOptions::default())
    }

    /// Starts a turn: commits the input (with the clock advanced to `input.now`), then decides
    /// who responds. A crash from here until [`Turn::finish`] leaves the input and nothing
    /// else.
    pub fn begin_turn_with(&mut self, input: TurnInput, options: TurnOptions) -> Result<Turn<'_>> {
        let machine = TurnMachine::begin(self, input, options)?;
        Ok(Turn {
            engine: self,
            machine,
        })
    }

    /// The prompt `speaker` would be given now for `query` (default: the last line it heard),
    /// with every piece and why it is there. Changes nothing.
    pub fn inspect_prompt(
        &mut self,
        speaker: EntityId,
        query: Option<&str>,
        now: Millis,
        options: &PromptOptions,
    ) -> Result<Prompt> {
        options.check()?;
        options.recall.check()?;
        let world = self.world().clone();
        let query = match query {
            Some(q) => q.to_string(),
            None => prompt::witnessed(&world, speaker)
                .last()
                .map(|u| u.text.clone())
                .unwrap_or_default(),
        };
        let counter = CharsPerToken(options.chars_per_token);
        let (prompt, _) = build_prompt(
            self, &world, speaker, &query, None, now, options, &counter, None,
        )?;
        Ok(prompt)
    }
}

/// Builds `speaker`'s prompt in `world`, recalling from the engine. Returns the prompt and the
/// recalled memories.
#[allow(clippy::too_many_arguments)]
fn build_prompt(
    engine: &mut Engine,
    world: &World,
    speaker: EntityId,
    query: &str,
    query_vector: Option<&[f32]>,
    now: Millis,
    options: &PromptOptions,
    counter: &dyn TokenCounter,
    facts: Option<Vec<String>>,
) -> Result<(Prompt, Vec<MemoryId>)> {
    let mut memories = Vec::new();
    let mut recalled = Vec::new();
    // Pinned memories, then the speaker's summaries of its recent scenes (oldest first, in the
    // order they happened), from the world the prompt is built in.
    let pinned = world.always_loaded(speaker, options.recent_scenes)?;
    let (pins, mut scenes): (Vec<&Memory>, Vec<&Memory>) = pinned
        .iter()
        .filter_map(|id| world.memory(*id))
        .partition(|m| m.pinned);
    scenes.reverse();
    for (m, why) in pins
        .into_iter()
        .map(|m| (m, "pinned: always loaded"))
        .chain(scenes.into_iter().map(|m| (m, prompt::SCENE_SUMMARY)))
    {
        memories.push(MemoryPick {
            id: m.id,
            text: prompt::memory_line(&m.text),
            why: why.into(),
            score: None,
        });
    }
    if options.memories_k > 0 && !query.trim().is_empty() {
        // A remembered line still in the dialogue section would say the same thing twice:
        // such memories are left out of the ranking.
        let in_dialogue = prompt::dialogue_lines(world, speaker, options.dialogue_lines);
        let mut recall = options.recall.clone();
        recall.k = options.memories_k;
        recall.query_embedding = query_vector.map(<[f32]>::to_vec);
        let skip =
            |m: &crate::model::Memory| in_dialogue.contains(&m.text) || pinned.contains(&m.id);
        for r in engine.recall_skipping(speaker, query, now, &recall, &skip)? {
            if pinned.contains(&r.id) {
                continue;
            }
            let Some(m) = world.memory(r.id) else {
                continue;
            };
            recalled.push(r.id);
            memories.push(MemoryPick {
                id: r.id,
                text: prompt::memory_line(&m.text),
                why: format!(
                    "recalled for the line heard: score {:.3} (relevance {:.2}, recency {:.2}, significance {:.2})",
                    r.score, r.relevance, r.recency, r.significance
                ),
                score: Some(r.score),
            });
        }
    }
    let lore = engine.lore_index();
    let prompt = prompt::build(
        world,
        speaker,
        now,
        options,
        counter,
        Gathered {
            memories,
            lore: Some(&lore),
            facts,
        },
    )?;
    Ok((prompt, recalled))
}

impl TurnMachine {
    /// Starts a turn on `engine`: see [`Engine::begin_turn_with`].
    pub fn begin(
        engine: &mut Engine,
        input: TurnInput,
        options: TurnOptions,
    ) -> Result<TurnMachine> {
        let counter = Arc::new(CharsPerToken(options.prompt.chars_per_token));
        TurnMachine::begin_counting(engine, input, options, counter)
    }

    /// [`TurnMachine::begin`] with a token counter of the host's (instead of
    /// `options.prompt.chars_per_token`).
    pub fn begin_counting(
        engine: &mut Engine,
        input: TurnInput,
        options: TurnOptions,
        counter: Arc<dyn TokenCounter>,
    ) -> Result<TurnMachine> {
        options.check()?;
        let world = engine.world();
        let speaker = world
            .entity(input.speaker)
            .ok_or_else(|| Error::not_found("entity", input.speaker))?;
        if !speaker.host_controlled {
            return Err(Error::invalid(
                "turn input",
                format!(
                    "{} is not host-controlled; only the host's entities start turns",
                    speaker.name
                ),
            ));
        }
        if input.now < world.now() {
            return Err(Error::invalid(
                "turn input",
                format!(
                    "now ({}) is before the world's clock ({})",
                    input.now,
                    world.now()
                ),
            ));
        }
        let author = speaker.name.clone();
        let now = input.now;
        // Commit the input (and the clock) first: it is never lost. Scoped events due by now
        // (starts, expiries) run in the same commit, before the line, so this turn's prompts
        // see them.
        let mut events = Vec::new();
        let due_world;
        let world = if crate::story::any_open(world) {
            let from = world.now();
            let mut batch = crate::story::Batch::new(world);
            batch.advance_to(input.now, "turn input")?;
            crate::story::run_due(&mut batch, from, input.now);
            events = batch.events;
            due_world = batch.world;
            &due_world
        } else {
            if input.now > world.now() {
                events.push(Event::TimeAdvanced { to: input.now });
            }
            world
        };
        let mut input_utterance = None;
        let mut lines = Vec::new();
        let closing = if options.scenes.enabled {
            let hearers = match &input.witnesses {
                Some(w) => w.iter().copied().chain([input.speaker]).collect(),
                None => world.hearers(input.speaker),
            };
            scene::due_for_turn(world, input.speaker, &hearers, input.now, &options.scenes)
        } else {
            Vec::new()
        };
        if !input.text.trim().is_empty() {
            let witnesses: WitnessSet = match &input.witnesses {
                Some(w) => w.iter().copied().chain([input.speaker]).collect(),
                None => world.hearers(input.speaker),
            };
            let (opened, scene) = if options.scenes.enabled {
                scene::scene_for_line(world, input.speaker, input.now, &closing)
            } else {
                (None, None)
            };
            let next_id = world.next_id() + u64::from(opened.is_some());
            if let Some(scene) = opened {
                events.push(Event::SceneOpened { scene });
            }
            let id = UtteranceId(next_id);
            input_utterance = Some(id);
            lines.push((
                input.speaker,
                format!("{author}: {}", input.text),
                witnesses.clone(),
                None,
                scene,
            ));
            events.push(Event::UserTurn {
                utterance: Utterance {
                    id,
                    speaker: input.speaker,
                    text: input.text.clone(),
                    at: input.now,
                    witnesses,
                    model: None,
                    scene,
                },
            });
        } else if input.witnesses.is_some() {
            return Err(Error::invalid(
                "turn input",
                "witnesses are for what is said; a wake-up turn says nothing",
            ));
        }
        // The input's commit is written while response control and the first prompt are
        // worked out: with durable commits the disk's wait hides behind that work.
        let make = move |engine: &mut Engine| -> Result<TurnMachine> {
            let mut m = TurnMachine {
                options,
                query: input.text.clone(),
                input,
                base: engine.head(),
                input_utterance,
                scratch: engine.world().clone(),
                pending: Vec::new(),
                epoch: engine.epoch(),
                decisions: Vec::new(),
                responders: Vec::new(),
                next: 0,
                phase: Phase::NextResponder,
                query_vector: None,
                replies: Vec::new(),
                silent: Vec::new(),
                wake: Vec::new(),
                prompts: Vec::new(),
                recalled: Vec::new(),
                lines,
                counter,
                updated: false,
                shown_system: Vec::new(),
                tool_rounds: 0,
                reports: Vec::new(),
                significance: BTreeMap::new(),
                closing: Vec::new(),
            };
            m.decide_responders()?;
            for id in &closing {
                let close = SceneClose::plan(&m.scratch, *id, now, &m.options.scenes)?;
                m.closing.push(close);
            }
            if !m.closing.is_empty() {
                m.phase = Phase::Summarizing;
                m.settle_scenes()?;
            } else {
                m.phase = m.after_scenes();
                if m.phase == Phase::NextResponder && m.next < m.responders.len() {
                    // Ahead of the first step, while the input's commit is written. The store
                    // is busy meanwhile (a read is refused as a conflict), so a prompt that
                    // needs it fails: the first step then builds it again, with the store back,
                    // and reports what still fails. Any other error is the turn's.
                    match m.ask_next_responder(engine) {
                        Err(e)
                            if !matches!(
                                e.kind(),
                                crate::ErrorKind::Conflict | crate::ErrorKind::Storage
                            ) =>
                        {
                            return Err(e);
                        }
                        _ => {}
                    }
                }
            }
            Ok(m)
        };
        engine.append_overlapped(events, make)?.1
    }

    /// Response control for every engine-controlled entity that heard the input (in a wake-up
    /// turn: every one near the speaker), in id order; responders are those mentioned first.
    fn decide_responders(&mut self) -> Result<()> {
        let w = &self.scratch;
        let now = self.input.now;
        let candidates: Vec<EntityId> = match self.input_utterance {
            Some(id) => w
                .dialogue()
                .rev()
                .find(|u| u.id == id)
                .map(|u| u.witnesses.iter().collect())
                .unwrap_or_default(),
            None => w.hearers(self.input.speaker).iter().collect(),
        };
        let mut mentioned_first = Vec::new();
        for entity in candidates {
            let Some(e) = self.scratch.entity(entity) else {
                continue;
            };
            if e.host_controlled {
                continue;
            }
            // The line it answers: the input, or in a wake-up turn the last line it heard
            // from someone else.
            let (content, author, arrived) = if self.input_utterance.is_some() {
                let author = self
                    .scratch
                    .entity(self.input.speaker)
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                (self.input.text.clone(), author, now)
            } else if self.scratch.speech(entity).unread == 0 {
                // A wake-up turn is for lines not yet answered: it has spoken since.
                continue;
            } else {
                match prompt::witnessed(&self.scratch, entity)
                    .into_iter()
                    .rev()
                    .find(|u| u.speaker != entity)
                {
                    Some(u) => (
                        u.text.clone(),
                        self.scratch
                            .entity(u.speaker)
                            .map(|s| s.name.clone())
                            .unwrap_or_default(),
                        u.at,
                    ),
                    None => continue,
                }
            };
            let speech = self.scratch.speech(entity);
            let mentioned = self.scratch.mentions(entity, &content);
            let message = Message {
                content: content.clone(),
                author,
                mentioned: Some(mentioned),
                response_ms: speech.last_spoke.map(|t| (now - t) as f64),
                retry_ms: (now - arrived).max(0) as f64,
                unread_count: speech.unread,
                interaction_type: None,
                hour: None,
            };
            let seed = self.scratch.meta().map_or(0, |m| m.settings.seed);
            let mut draws = SeededDraws::new(seed, self.scratch.draws_taken());
            let decision = self.scratch.decide(entity, &message, &mut draws)?;
            let event = decision_event(entity, &decision);
            self.scratch.apply(&event)?;
            self.pending.push(event);
            if let Some(ms) = decision.retry_ms {
                self.wake.push(Wake {
                    entity,
                    at: now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)),
                });
            } else if decision.respond {
                mentioned_first.push((!mentioned, entity));
                if self.query.is_empty() {
                    // A wake-up turn answers the line each heard; recall uses the first.
                    self.query = content;
                }
            }
            self.decisions.push(TurnDecision {
                entity,
                mentioned,
                decision,
            });
        }
        mentioned_first.sort();
        self.responders = mentioned_first
            .into_iter()
            .map(|(_, e)| e)
            .take(self.options.max_responders)
            .collect();
        Ok(())
    }

    /// What the turn needs next. Calling it again without providing returns the same request.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        self.check_engine(engine)?;
        loop {
            match &self.phase {
                Phase::Failed(_) => return Ok(Step::Done),
                Phase::Summarizing => {
                    if let Some(request) = self.closing.iter().find_map(SceneClose::next_request) {
                        return Ok(Step::Generate(request.clone()));
                    }
                    self.settle_scenes()?;
                }
                Phase::QueryVector => {
                    return Ok(Step::Embed(EmbedRequest {
                        texts: vec![self.query.clone()],
                    }));
                }
                Phase::Generating(request) | Phase::Updating(request, _) => {
                    return Ok(Step::Generate(request.clone()));
                }
                Phase::Acting(judged, next) => {
                    return Ok(Step::Act(judged.verdict.actions[*next].clone()));
                }
                Phase::LineVectors(request) => return Ok(Step::Embed(request.clone())),
                Phase::Done => return Ok(Step::Done),
                Phase::NextResponder => {
                    if self.next < self.responders.len() {
                        self.ask_next_responder(engine)?;
                    } else {
                        self.phase = self.after_replies();
                    }
                }
            }
        }
    }

    /// Builds the prompt of the next responder and asks for its reply.
    fn ask_next_responder(&mut self, engine: &mut Engine) -> Result<()> {
        let speaker = self.responders[self.next];
        let facts = self
            .decisions
            .iter()
            .find(|d| d.entity == speaker)
            .map(|d| d.decision.facts.iter().map(|f| f.to_string()).collect());
        let (prompt, recalled) = build_prompt(
            engine,
            &self.scratch,
            speaker,
            &self.query,
            self.query_vector.as_deref(),
            self.input.now,
            &self.options.prompt,
            self.counter.as_ref(),
            facts,
        )?;
        for id in recalled {
            if !self.recalled.contains(&id) {
                self.recalled.push(id);
            }
        }
        let request = GenerateRequest {
            purpose: Purpose::Reply { speaker },
            messages: prompt.messages.clone(),
            params: self.options.sampling.clone(),
            json_schema: None,
            tools: if self.options.tools {
                super::tools::definitions()
            } else {
                Vec::new()
            },
        };
        self.tool_rounds = 0;
        for line in self.scratch.system_lines().filter(|l| l.reaches(speaker)) {
            if !self.shown_system.contains(&line.id) {
                self.shown_system.push(line.id);
            }
        }
        self.prompts.push(prompt);
        self.phase = Phase::Generating(request);
        Ok(())
    }

    /// Once every summary of the scenes the turn closes is in: records the closes (on the
    /// scratch world, so the replies' prompts load the new summaries) and moves on.
    fn settle_scenes(&mut self) -> Result<()> {
        if self.closing.iter().any(|c| !c.is_done()) {
            return Ok(());
        }
        let mut next = self.scratch.clone();
        let mut events = Vec::new();
        for close in &self.closing {
            events.extend(close.events(&mut next)?.0);
        }
        self.scratch = next;
        self.pending.extend(events);
        self.phase = self.after_scenes();
        Ok(())
    }

    /// Where the turn goes once its scenes are closed: the query's vector, or the replies.
    fn after_scenes(&self) -> Phase {
        if self.options.semantic && !self.responders.is_empty() && !self.query.trim().is_empty() {
            Phase::QueryVector
        } else {
            Phase::NextResponder
        }
    }

    fn after_replies(&self) -> Phase {
        if self.options.updates.enabled && !self.updated && !self.lines.is_empty() {
            let lines: Vec<(EntityId, String, WitnessSet)> = self
                .lines
                .iter()
                .map(|(s, t, w, _, _)| (*s, t.clone(), w.clone()))
                .collect();
            let present: WitnessSet = lines.iter().flat_map(|l| l.2.iter()).collect();
            let request = update::request(&self.scratch, &present, &lines, &self.options.updates);
            return Phase::Updating(request, false);
        }
        if self.options.semantic && self.options.remember_dialogue && !self.lines.is_empty() {
            Phase::LineVectors(EmbedRequest {
                texts: self.lines.iter().map(|l| l.1.clone()).collect(),
            })
        } else {
            Phase::Done
        }
    }

    /// Runs the tools a reply called, records them, and asks again with their results.
    fn run_tools(
        &mut self,
        speaker: EntityId,
        request: GenerateRequest,
        result: GenerateResult,
    ) -> Result<()> {
        let seed = self.scratch.meta().map_or(0, |m| m.settings.seed);
        let calls = super::tools::run(&result.tool_calls, seed, self.scratch.draws_taken());
        let events = vec![
            Event::Generated {
                purpose: request.purpose,
                result: result.clone(),
            },
            Event::ToolsRun {
                speaker,
                calls: calls.clone(),
            },
        ];
        // Validate on a copy first: a bad result changes nothing.
        let mut next = self.scratch.clone();
        for e in &events {
            next.apply(e)?;
        }
        self.scratch = next;
        self.pending.extend(events);
        self.tool_rounds += 1;
        let mut again = request;
        again.messages.push(ChatMessage {
            role: Role::Assistant,
            content: result.text,
            tool_call_id: None,
            tool_calls: result.tool_calls,
        });
        for call in calls {
            again.messages.push(ChatMessage {
                role: Role::Tool,
                content: call.result,
                tool_call_id: Some(call.id),
                tool_calls: Vec::new(),
            });
        }
        if self.tool_rounds >= super::tools::MAX_TOOL_ROUNDS {
            // Enough rolling: the next answer is the reply.
            again.tools.clear();
        }
        self.phase = Phase::Generating(again);
        Ok(())
    }

    /// Reads the state-update pass's answer: retries once with the problems, then applies what
    /// is valid and records every report as judged.
    fn provide_update(
        &mut self,
        request: GenerateRequest,
        retried: bool,
        mut result: GenerateResult,
    ) -> Result<()> {
        let answer = std::mem::take(&mut result.text);
        // What is recorded is bounded; what is read is the answer as given (and refused if
        // too long).
        result.text = cut_at(&answer, crate::log::MAX_TEXT_BYTES).to_owned();
        let generated = Event::Generated {
            purpose: Purpose::StateUpdate,
            result,
        };
        let mut scratch = self.scratch.clone();
        scratch.apply(&generated)?;
        let lines: Vec<(EntityId, WitnessSet)> =
            self.lines.iter().map(|l| (l.0, l.2.clone())).collect();
        let present: WitnessSet = lines.iter().flat_map(|l| l.1.iter()).collect();
        let pass = update::Pass {
            present: &present,
            lines: &lines,
            remembered: self.options.remember_dialogue,
            step: self.options.updates.step,
            now: self.input.now,
        };
        let verdict =
            update::judge_answer(&mut scratch, &pass, &self.options.updates.actions, &answer);
        if !verdict.problems.is_empty() && !retried {
            // Exactly one retry, with what was wrong; nothing of this answer is kept but its
            // record.
            self.scratch.apply(&generated)?;
            self.pending.push(generated);
            self.phase = Phase::Updating(update::retry(&request, &answer, &verdict.problems), true);
            return Ok(());
        }
        let judged = Judged {
            scratch,
            generated,
            verdict,
        };
        if judged.verdict.actions.is_empty() {
            return self.settle_update(judged);
        }
        self.phase = Phase::Acting(Box::new(judged), 0);
        Ok(())
    }

    /// Records a judged pass (with the host's answers to its actions) and moves on.
    fn settle_update(&mut self, judged: Judged) -> Result<()> {
        let Judged {
            mut scratch,
            generated,
            verdict,
        } = judged;
        let record = Event::ReportsJudged {
            reports: verdict.reports.clone(),
        };
        scratch.apply(&record)?;
        self.scratch = scratch;
        self.significance.extend(verdict.significance);
        self.pending.push(generated);
        self.pending.extend(verdict.events);
        self.pending.push(record);
        self.reports = verdict.reports;
        self.updated = true;
        self.phase = self.after_replies();
        Ok(())
    }

    /// Answers the host action asked for by the last [`Step::Act`]: `Ok` with what the game
    /// did (any JSON; recorded, so replay never asks again; a `"system_line"` text in an
    /// object is injected for the next prompts), or `Err` with why it refused (the report is
    /// then recorded as rejected).
    pub fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<serde_json::Value, String>,
    ) -> Result<()> {
        self.check_engine(engine)?;
        let Phase::Acting(judged, next) = &mut self.phase else {
            return Err(Error::conflict("the turn is not waiting for a host action"));
        };
        let call = judged.verdict.actions[*next].clone();
        let mut judged_now = judged.clone();
        let report = &mut judged_now.verdict.reports[call.report];
        match answer {
            Ok(value) => {
                let text = value.to_string();
                if text.len() > crate::log::MAX_TEXT_BYTES {
                    return Err(Error::invalid(
                        "action answer",
                        format!("longer than {} bytes", crate::log::MAX_TEXT_BYTES),
                    ));
                }
                if let Some(line) = value.get("system_line").and_then(serde_json::Value::as_str) {
                    let event = Event::SystemLineInjected {
                        line: crate::model::SystemLine {
                            id: judged_now.scratch.next_id(),
                            text: line.trim().to_owned(),
                            audience: None,
                            at: self.input.now,
                        },
                    };
                    judged_now.scratch.apply(&event)?;
                    judged_now.verdict.events.push(event);
                }
                report.answer = Some(text);
            }
            Err(reason) => {
                report.rejected = Some(cut_at(&reason, 1000).to_owned());
            }
        }
        let next = *next + 1;
        if next == judged_now.verdict.actions.len() {
            return self.settle_update(*judged_now);
        }
        self.phase = Phase::Acting(judged_now, next);
        Ok(())
    }

    /// Feeds the generation asked for by the last [`Step::Generate`]. The text becomes the
    /// responder's line (trimmed, without a leading "Name:" the model may echo); an empty text
    /// means it stays silent. The result is recorded as it is given.
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        self.check_engine(engine)?;
        if self.phase == Phase::Summarizing {
            let Some(i) = self.closing.iter().position(|c| !c.is_done()) else {
                return Err(Error::conflict("the turn is not waiting for a summary"));
            };
            // A refused summary, or a close that does not apply, changes nothing.
            let before = self.closing[i].clone();
            self.closing[i].accept(result)?;
            if let Err(e) = self.settle_scenes() {
                self.closing[i] = before;
                return Err(e);
            }
            return Ok(());
        }
        if let Phase::Updating(request, retried) = &self.phase {
            let (request, retried) = (request.clone(), *retried);
            return self.provide_update(request, retried, result);
        }
        let Phase::Generating(request) = &self.phase else {
            return Err(Error::conflict("the turn is not waiting for a generation"));
        };
        let purpose = request.purpose;
        let Some(speaker) = purpose.speaker() else {
            return Err(Error::conflict("the turn is not waiting for a reply"));
        };
        if !result.tool_calls.is_empty() && !request.tools.is_empty() {
            let request = request.clone();
            return self.run_tools(speaker, request, result);
        }
        let name = self
            .scratch
            .entity(speaker)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        let text = clean_reply(&result.text, &name);
        let mut events = vec![Event::Generated {
            purpose,
            result: result.clone(),
        }];
        let mut said = None;
        if !text.is_empty() {
            let witnesses = self.scratch.hearers(speaker);
            let (opened, scene) = if self.options.scenes.enabled {
                scene::scene_for_line(&self.scratch, speaker, self.input.now, &[])
            } else {
                (None, None)
            };
            let id = UtteranceId(self.scratch.next_id() + u64::from(opened.is_some()));
            if let Some(scene) = opened {
                events.push(Event::SceneOpened { scene });
            }
            events.push(Event::AssistantTurn {
                utterance: Utterance {
                    id,
                    speaker,
                    text: text.clone(),
                    at: self.input.now,
                    witnesses: witnesses.clone(),
                    model: result.model.clone(),
                    scene,
                },
            });
            said = Some((id, witnesses, scene));
        }
        // Validate on a copy first: a bad result changes nothing.
        let mut next = self.scratch.clone();
        for e in &events {
            next.apply(e)?;
        }
        self.scratch = next;
        self.pending.extend(events);
        match said {
            Some((id, witnesses, scene)) => {
                self.lines
                    .push((speaker, format!("{name}: {text}"), witnesses, None, scene));
                self.replies.push(Reply {
                    speaker,
                    utterance: id,
                    text,
                });
            }
            None => self.silent.push(speaker),
        }
        self.next += 1;
        self.phase = Phase::NextResponder;
        Ok(())
    }

    /// Feeds the vectors asked for by the last [`Step::Embed`]: one per text, in order, all of
    /// the same length.
    pub fn provide_embeddings(
        &mut self,
        engine: &mut Engine,
        vectors: Vec<Vec<f32>>,
    ) -> Result<()> {
        self.check_engine(engine)?;
        let texts = match &self.phase {
            Phase::QueryVector => 1,
            Phase::LineVectors(r) => r.texts.len(),
            _ => return Err(Error::conflict("the turn is not waiting for vectors")),
        };
        if vectors.len() != texts {
            return Err(Error::invalid(
                "embeddings",
                format!("{} vectors for {texts} texts", vectors.len()),
            ));
        }
        for v in &vectors {
            crate::memory::check_embedding(v).map_err(|e| Error::invalid("embeddings", e))?;
            if v.len() != vectors[0].len() {
                return Err(Error::invalid("embeddings", "the vectors differ in length"));
            }
        }
        match self.phase {
            Phase::QueryVector => {
                self.query_vector = vectors.into_iter().next();
                self.phase = Phase::NextResponder;
            }
            _ => {
                for (line, v) in self.lines.iter_mut().zip(vectors) {
                    line.3 = Some(v);
                }
                self.phase = Phase::Done;
            }
        }
        Ok(())
    }

    /// The host could not answer the step just returned (its model failed): the turn ends.
    /// [`TurnMachine::step`] returns [`Step::Done`] from now on and [`TurnMachine::finish`]
    /// commits nothing more (the input stays committed) and returns an
    /// [`crate::ErrorKind::Generation`] error naming `reason`. Refused when the turn asks for
    /// nothing.
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        self.check_engine(engine)?;
        if matches!(self.phase, Phase::Done | Phase::Failed(_)) {
            return Err(Error::conflict(
                "the turn asks for nothing to fail; finish it",
            ));
        }
        self.phase = Phase::Failed(reason.to_owned());
        Ok(())
    }

    /// Commits the turn's decisions, replies, generations, memories and recalls in one
    /// transaction. Refused while generations are still needed.
    pub fn finish(mut self, engine: &mut Engine) -> Result<TurnOutcome> {
        self.check_engine(engine)?;
        if let Phase::Failed(reason) = &self.phase {
            return Err(Error::Generation {
                message: reason.clone(),
            });
        }
        if self.phase == Phase::NextResponder {
            // Nothing is pending if no responder is left; settle the phase.
            if self.next >= self.responders.len() {
                self.phase = self.after_replies();
            }
        }
        if self.phase != Phase::Done {
            return Err(Error::conflict(
                "the turn still needs what step() asks for; provide it before finishing",
            ));
        }
        let now = self.input.now;
        if self.options.remember_dialogue {
            let lines = std::mem::take(&mut self.lines);
            for (line, (_, text, witnesses, vector, scene)) in lines.into_iter().enumerate() {
                for owner in witnesses.iter() {
                    let significance = self
                        .significance
                        .get(&(line, owner))
                        .copied()
                        .unwrap_or(self.options.dialogue_significance);
                    let memory = Memory {
                        id: MemoryId(self.scratch.next_id()),
                        owner,
                        witnesses: witnesses.clone(),
                        text: text.clone(),
                        kind: MemoryKind::Utterance,
                        significance,
                        created: now,
                        last_accessed: None,
                        access_count: 0,
                        decay: Default::default(),
                        pinned: false,
                        embedding: vector.clone(),
                        scene,
                    };
                    let event = Event::MemoryAdded { memory };
                    self.scratch.apply(&event)?;
                    self.pending.push(event);
                }
            }
        }
        if !self.shown_system.is_empty() {
            let event = Event::SystemLinesShown {
                ids: std::mem::take(&mut self.shown_system),
            };
            self.scratch.apply(&event)?;
            self.pending.push(event);
        }
        if !self.recalled.is_empty() {
            let event = Event::MemoriesRecalled {
                ids: std::mem::take(&mut self.recalled),
                at: now,
            };
            self.scratch.apply(&event)?;
            self.pending.push(event);
        }
        let seq = if self.pending.is_empty() {
            engine.head()
        } else {
            // `scratch` is the world after `pending`: the engine need not apply them again.
            // Nothing is left to do but wait for the disk; the indexes catch up meanwhile.
            let applied = Some((std::mem::take(&mut self.scratch), self.epoch));
            engine
                .append_applied(std::mem::take(&mut self.pending), applied, |_| ())?
                .0
        };
        Ok(TurnOutcome {
            seq,
            input: self.input_utterance,
            decisions: self.decisions,
            replies: self.replies,
            silent: self.silent,
            wake: self.wake,
            prompts: if self.options.outcome_prompts {
                self.prompts
            } else {
                Vec::new()
            },
            reports: self.reports,
            closed_scenes: self.closing.iter().map(SceneClose::scene).collect(),
        })
    }

    /// Whether [`TurnMachine::finish`] would commit now: nothing more is asked for.
    /// (`finish` consumes the machine, also when it refuses; check this first to keep a turn
    /// that is not done.)
    pub fn is_done(&self) -> bool {
        match self.phase {
            Phase::Done => true,
            Phase::Summarizing => false,
            Phase::NextResponder => {
                self.next >= self.responders.len()
                    && !(self.options.semantic
                        && self.options.remember_dialogue
                        && !self.lines.is_empty())
            }
            _ => false,
        }
    }

    /// The response decisions made when the turn began.
    pub fn decisions(&self) -> &[TurnDecision] {
        &self.decisions
    }

    /// Who will answer, in order.
    pub fn responders(&self) -> &[EntityId] {
        &self.responders
    }

    /// The prompts built so far.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    /// The input's utterance (none for a wake-up turn).
    pub fn input_utterance(&self) -> Option<UtteranceId> {
        self.input_utterance
    }

    fn check_engine(&self, engine: &Engine) -> Result<()> {
        if engine.head() != self.base || engine.epoch() != self.epoch {
            return Err(Error::conflict(
                "the world changed since the turn began; begin a new turn",
            ));
        }
        Ok(())
    }
}

impl crate::machine::Machine for TurnMachine {
    type Outcome = TurnOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        TurnMachine::step(self, engine)
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        TurnMachine::provide(self, engine, result)
    }

    fn provide_embeddings(&mut self, engine: &mut Engine, vectors: Vec<Vec<f32>>) -> Result<()> {
        TurnMachine::provide_embeddings(self, engine, vectors)
    }

    fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<serde_json::Value, String>,
    ) -> Result<()> {
        TurnMachine::provide_action(self, engine, answer)
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        TurnMachine::fail(self, engine, reason)
    }

    fn finish(self, engine: &mut Engine) -> Result<TurnOutcome> {
        TurnMachine::finish(self, engine)
    }
}

/// A reply as it will be recorded: trimmed, without a leading `Name:` the model echoed.
fn clean_reply(text: &str, name: &str) -> String {
    let mut t = text.trim();
    if !name.is_empty()
        && let Some(rest) = t.strip_prefix(name)
        && let Some(rest) = rest.trim_start().strip_prefix(':')
    {
        t = rest.trim_start();
    }
    t.to_string()
}

/// A turn holding its engine: the machine of [`TurnMachine`] with the engine passed for you.
#[derive(Debug)]
pub struct Turn<'e> {
    engine: &'e mut Engine,
    machine: TurnMachine,
}

impl Turn<'_> {
    /// What the turn needs next: see [`TurnMachine::step`].
    pub fn step(&mut self) -> Result<Step> {
        self.machine.step(self.engine)
    }

    /// Feeds a generation: see [`TurnMachine::provide`].
    pub fn provide(&mut self, result: GenerateResult) -> Result<()> {
        self.machine.provide(self.engine, result)
    }

    /// Answers a host action: see [`TurnMachine::provide_action`].
    pub fn provide_action(
        &mut self,
        answer: std::result::Result<serde_json::Value, String>,
    ) -> Result<()> {
        self.machine.provide_action(self.engine, answer)
    }

    /// Feeds vectors: see [`TurnMachine::provide_embeddings`].
    pub fn provide_embeddings(&mut self, vectors: Vec<Vec<f32>>) -> Result<()> {
        self.machine.provide_embeddings(self.engine, vectors)
    }

    /// Commits the outcome: see [`TurnMachine::finish`].
    pub fn finish(self) -> Result<TurnOutcome> {
        self.machine.finish(self.engine)
    }

    /// The machine (decisions, responders, prompts so far).
    pub fn machine(&self) -> &TurnMachine {
        &self.machine
    }
}

#[cfg(test)]
mod tests {
    use super::clean_reply;

    #[test]
    fn replies_lose_an_echoed_name_and_outer_space() {
        assert_eq!(clean_reply("  Mira: Evening.  ", "Mira"), "Evening.");
        assert_eq!(clean_reply("Mira said no.", "Mira"), "Mira said no.");
        assert_eq!(clean_reply("   ", "Mira"), "");
    }
}
