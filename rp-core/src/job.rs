//! [`Job`]: any machine of the engine behind one type, so a host (and each binding) drives a
//! turn, a scene close, a time skip or a world query with the same calls, in the order
//! [`crate::machine`] documents.
//!
//! A job adds two things to the machine it holds. It knows its [`JobKind`], and it stays in
//! place after [`Job::finish`]: a finish refused because the machine still needs a step leaves
//! the job going on, and every call on a finished job is a [`crate::ErrorKind::Conflict`]
//! saying it is over. It sits at the top of the machines, the one module that knows them all.
//!
//! ```
//! use rp_core::job::{Job, JobKind};
//! use rp_core::machine::Step;
//! use rp_core::scene::SceneOptions;
//! # let mut engine = rp_core::Engine::in_memory("Demo", 0)?;
//! # let room = rp_core::ContainerId(engine.world().next_id());
//! # engine.append(vec![rp_core::Event::ContainerCreated { id: room, key: None, name: "Room".into(),
//! #     facts: Default::default(), parent: None, slots: vec![], properties: Default::default() }])?;
//! # let scene = engine.open_scene(room, 0)?;
//! let mut job = Job::from(engine.begin_scene_close(scene, 0, &SceneOptions::default())?);
//! assert_eq!(job.kind(), JobKind::SceneClose);
//! while let Step::Generate(request) = job.step(&mut engine)? {
//!     # let _ = request;
//!     job.provide(&mut engine, rp_core::GenerateResult::text("A quiet evening."))?;
//! }
//! let outcome = job.finish(&mut engine)?; // committed
//! assert!(job.is_over());
//! # let _ = outcome;
//! # Ok::<(), rp_core::Error>(())
//! ```

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::machine::{Generate, GenerateResult, Machine, Step, TokenSink};
use crate::query::{QueryMachine, QueryOutcome};
use crate::scene::{SceneClose, SceneCloseOutcome};
use crate::skip::{SkipOutcome, TimeSkip};
use crate::tick::{TickMachine, TickOutcome};
use crate::turn::{TurnMachine, TurnOutcome};
use serde::Serialize;
use serde_json::{Value, json};

/// Which machine a job holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A turn ([`TurnMachine`]).
    Turn,
    /// A scene close ([`SceneClose`]).
    SceneClose,
    /// A time skip ([`TimeSkip`]).
    TimeSkip,
    /// A world query ([`QueryMachine`]).
    Query,
    /// A tick ([`TickMachine`]).
    Tick,
}

impl JobKind {
    /// The kind's name, as JSON and the bindings write it: `turn`, `scene_close`,
    /// `time_skip`, `query`, `tick`.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Turn => "turn",
            JobKind::SceneClose => "scene_close",
            JobKind::TimeSkip => "time_skip",
            JobKind::Query => "query",
            JobKind::Tick => "tick",
        }
    }
}

/// What a finished job committed: its machine's outcome. In JSON, the outcome as its machine
/// writes it (no wrapper).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JobOutcome {
    /// What a turn committed.
    Turn(Box<TurnOutcome>),
    /// What a scene close committed.
    SceneClose(SceneCloseOutcome),
    /// What a time skip committed.
    TimeSkip(SkipOutcome),
    /// What a world query committed.
    Query(Box<QueryOutcome>),
    /// What a tick committed.
    Tick(Box<TickOutcome>),
}

/// The machine a job holds.
#[derive(Debug)]
enum Held {
    Turn(Box<TurnMachine>),
    SceneClose(Box<SceneClose>),
    TimeSkip(Box<TimeSkip>),
    Query(Box<QueryMachine>),
    Tick(Box<TickMachine>),
}

/// Calls `$body` with the machine `$m` of any kind.
macro_rules! on_machine {
    ($held:expr, $m:ident => $body:expr) => {
        match $held {
            Held::Turn($m) => $body,
            Held::SceneClose($m) => $body,
            Held::TimeSkip($m) => $body,
            Held::Query($m) => $body,
            Held::Tick($m) => $body,
        }
    };
}

impl Machine for Held {
    type Outcome = JobOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        on_machine!(self, m => m.step(engine))
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        on_machine!(self, m => m.provide(engine, result))
    }

    fn provide_embeddings(&mut self, engine: &mut Engine, vectors: Vec<Vec<f32>>) -> Result<()> {
        on_machine!(self, m => m.provide_embeddings(engine, vectors))
    }

    fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<Value, String>,
    ) -> Result<()> {
        on_machine!(self, m => m.provide_action(engine, answer))
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        on_machine!(self, m => m.fail(engine, reason))
    }

    fn finish(self, engine: &mut Engine) -> Result<JobOutcome> {
        Ok(match self {
            Held::Turn(m) => JobOutcome::Turn(Box::new(m.finish(engine)?)),
            Held::SceneClose(m) => JobOutcome::SceneClose(m.finish(engine)?),
            Held::TimeSkip(m) => JobOutcome::TimeSkip(m.finish(engine)?),
            Held::Query(m) => JobOutcome::Query(Box::new(m.finish(engine)?)),
            Held::Tick(m) => JobOutcome::Tick(Box::new(m.finish(engine)?)),
        })
    }
}

/// Any machine of the engine, driven as [`crate::machine`] documents. Made from a machine with
/// `From` (`Job::from(engine.begin_time_skip(..)?)`).
#[derive(Debug)]
pub struct Job {
    kind: JobKind,
    /// `None` once finished.
    held: Option<Held>,
}

impl From<TurnMachine> for Job {
    fn from(machine: TurnMachine) -> Job {
        Job::new(JobKind::Turn, Held::Turn(Box::new(machine)))
    }
}

impl From<SceneClose> for Job {
    fn from(machine: SceneClose) -> Job {
        Job::new(JobKind::SceneClose, Held::SceneClose(Box::new(machine)))
    }
}

impl From<TimeSkip> for Job {
    fn from(machine: TimeSkip) -> Job {
        Job::new(JobKind::TimeSkip, Held::TimeSkip(Box::new(machine)))
    }
}

impl From<QueryMachine> for Job {
    fn from(machine: QueryMachine) -> Job {
        Job::new(JobKind::Query, Held::Query(Box::new(machine)))
    }
}

impl From<TickMachine> for Job {
    fn from(machine: TickMachine) -> Job {
        Job::new(JobKind::Tick, Held::Tick(Box::new(machine)))
    }
}

impl Job {
    fn new(kind: JobKind, held: Held) -> Job {
        Job {
            kind,
            held: Some(held),
        }
    }

    /// Which machine the job holds.
    pub fn kind(&self) -> JobKind {
        self.kind
    }

    /// Whether the job has finished (or its finish failed): every call but this one and
    /// [`Job::kind`] is refused from then on.
    pub fn is_over(&self) -> bool {
        self.held.is_none()
    }

    fn held(&mut self) -> Result<&mut Held> {
        let kind = self.kind;
        self.held.as_mut().ok_or_else(|| {
            Error::conflict(format!(
                "the {} is over: it was finished; begin a new one",
                kind.name().replace('_', " ")
            ))
        })
    }

    /// What the machine needs next ([`Machine::step`]).
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        self.held()?.step(engine)
    }

    /// The model's answer to the last [`Step::Generate`] ([`Machine::provide`]).
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        self.held()?.provide(engine, result)
    }

    /// The vectors asked for by the last [`Step::Embed`] ([`Machine::provide_embeddings`]).
    pub fn provide_embeddings(
        &mut self,
        engine: &mut Engine,
        vectors: Vec<Vec<f32>>,
    ) -> Result<()> {
        self.held()?.provide_embeddings(engine, vectors)
    }

    /// The game's answer to the last [`Step::Act`] ([`Machine::provide_action`]).
    pub fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<Value, String>,
    ) -> Result<()> {
        self.held()?.provide_action(engine, answer)
    }

    /// The host could not answer the last step ([`Machine::fail`]).
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        self.held()?.fail(engine, reason)
    }

    /// Commits what the machine produced ([`Machine::finish`]). Refused, with the job going
    /// on, while [`Job::step`] still asks for something; after the commit is attempted the job
    /// is over, whether it succeeded or not.
    pub fn finish(&mut self, engine: &mut Engine) -> Result<JobOutcome> {
        if let step @ (Step::Generate(_) | Step::Embed(_) | Step::Act(_)) = self.step(engine)? {
            let what = match step {
                Step::Generate(request) => format!(
                    "a generation ({})",
                    serde_json::to_string(&request.purpose).unwrap_or_default()
                ),
                Step::Embed(_) => "vectors".to_owned(),
                _ => "a host action".to_owned(),
            };
            return Err(Error::conflict(format!(
                "the job is not done: the {} still needs {what} (see step()); answer it \
                 before finishing",
                self.kind.name().replace('_', " ")
            )));
        }
        let held = self
            .held
            .take()
            .ok_or_else(|| Error::conflict("the job is over"))?;
        Ok(match held {
            Held::Turn(m) => JobOutcome::Turn(Box::new(m.finish(engine)?)),
            Held::SceneClose(m) => JobOutcome::SceneClose(m.finish(engine)?),
            Held::TimeSkip(m) => JobOutcome::TimeSkip(m.finish(engine)?),
            Held::Query(m) => JobOutcome::Query(Box::new(m.finish(engine)?)),
            Held::Tick(m) => JobOutcome::Tick(Box::new(m.finish(engine)?)),
        })
    }

    /// Runs the job to its end through `generator`: every step answered in turn, tokens to
    /// `sink`, then [`Job::finish`]. When the generator fails, a world query is failed and
    /// finished (it is recorded as failed, as [`crate::machine::run`] does); any other job is
    /// left where it was, with nothing committed, so the host may answer the same step again
    /// (by polling or by running it again) or [`Job::fail`] it. Either way the generator's
    /// error is returned as an [`crate::ErrorKind::Generation`].
    pub async fn run(
        &mut self,
        engine: &mut Engine,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<JobOutcome> {
        let held = self.held()?;
        let Some(failed) = crate::machine::answer_steps(engine, held, generator, sink).await?
        else {
            return self.finish(engine);
        };
        if self.kind == JobKind::Query {
            self.fail(engine, &format!("generation failed: {failed}"))?;
            self.finish(engine)?;
        }
        Err(Error::Generation { message: failed })
    }

    /// Where the job stands, as JSON: `{"kind": …, "done": bool, …}` with, for a scene close,
    /// `"scene"` and `"witnesses"`; for a time skip, `"to"` and `"scenes"`; for a query,
    /// `"query"` (the record so far), `"context"` and `"capabilities"`; for a turn,
    /// `"responders"`.
    pub fn progress(&mut self, engine: &mut Engine) -> Result<Value> {
        let done = matches!(self.step(engine)?, Step::Done);
        let kind = self.kind.name();
        let encode = |value: serde_json::Result<Value>| {
            value.map_err(|error| Error::invalid("job progress", error.to_string()))
        };
        Ok(match self.held()? {
            Held::Turn(turn) => json!({
                "kind": kind,
                "responders": turn.responders().iter().map(|e| e.0).collect::<Vec<_>>(),
                "done": done,
            }),
            Held::SceneClose(close) => json!({
                "kind": kind,
                "scene": close.scene().0,
                "witnesses": close.witnesses().iter().map(|w| w.0).collect::<Vec<_>>(),
                "done": done,
            }),
            Held::TimeSkip(skip) => json!({
                "kind": kind,
                "to": skip.to(),
                "scenes": skip.scenes().iter().map(|s| s.0).collect::<Vec<_>>(),
                "done": done,
            }),
            Held::Query(query) => json!({
                "kind": kind,
                "query": encode(serde_json::to_value(query.query()))?,
                "context": encode(serde_json::to_value(query.context()))?,
                "capabilities": encode(serde_json::to_value(query.capabilities()))?,
                "done": done,
            }),
            Held::Tick(tick) => json!({
                "kind": kind,
                "at": tick.outcome().at,
                "initiations": tick.outcome().initiations.len(),
                "done": done,
            }),
        })
    }
}
