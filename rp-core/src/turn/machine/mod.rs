//! The sans-IO turn machine: `begin_turn` commits the input, `step` says what the engine needs
//! next, `provide` feeds it, `finish` commits the outcome in one transaction.
//!
//! The machine's files follow a turn's course: [`TurnInput`] and [`TurnOptions`] start it
//! (`options`), `begin` commits the input and makes the response decisions, `step` asks for
//! and takes the replies, `update_pass` reads the state-update pass and the host's actions,
//! `finish` commits the outcome ([`TurnOutcome`], `outcome`).
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

mod again;
mod begin;
mod finish;
mod options;
mod outcome;
mod step;
mod update_pass;

pub(crate) use begin::reply_prompt;
pub use options::{TurnInput, TurnOptions};
pub use outcome::{Reply, TurnDecision, TurnOutcome, Wake};
pub(crate) use step::{clean_reply, hold_event};

use self::update_pass::Judged;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, JudgedReport, World};
use crate::machine::{EmbedRequest, GenerateRequest, GenerateResult, Step};
use crate::model::{EntityId, MemoryId, SceneId, Seq, UtteranceId, WitnessSet};
use crate::scene::SceneClose;
use crate::turn::prompt::{Prompt, TokenCounter};
use std::collections::BTreeMap;
use std::sync::Arc;

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
    /// When the turn is a character's initiation: what it answers and why, in words.
    initiation: Option<Initiating>,
}

/// A turn that a character starts (docs/drives.md).
#[derive(Clone, Debug)]
struct Initiating {
    candidate: crate::drives::Candidate,
    reason: String,
}

impl std::fmt::Debug for dyn TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCounter")
    }
}

impl TurnMachine {
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
