//! The contract every sans-IO machine of rp keeps (docs/architecture.md, "The machines' contract"):
//! the turn ([`crate::turn::TurnMachine`]), a scene close ([`crate::scene::SceneClose`]), a time
//! skip ([`crate::skip::TimeSkip`]) and a world query ([`crate::query::QueryMachine`]) all have the
//! shape of [`Machine`], and [`crate::job::Job`] holds any of them behind one type.
//!
//! # Driving a machine
//!
//! A machine is begun by an `Engine::begin_*` call, which checks the input (and, for a turn,
//! commits it). Then the host loops:
//!
//! 1. [`Machine::step`] says what the machine needs next, as a [`Step`]. Calling it again
//!    without answering returns the same step: it is a question, not an action.
//! 2. The host answers the step it was given:
//!    * [`Step::Generate`]: call the model with the [`GenerateRequest`] and hand its
//!      [`GenerateResult`] to [`Machine::provide`]; if the model cannot answer, tell the
//!      machine with [`Machine::fail`] instead;
//!    * [`Step::Embed`]: [`Machine::provide_embeddings`], one vector per text;
//!    * [`Step::Act`]: carry out the [`ActionCall`] and hand the game's answer (or the reason
//!      it refused) to [`Machine::provide_action`];
//!    * [`Step::Done`]: nothing more is needed; go to 3.
//! 3. [`Machine::finish`] commits what the machine produced, in one transaction, and returns
//!    its outcome.
//!
//! A machine holds no reference to the engine: every call takes it again, and a machine is
//! refused ([`crate::ErrorKind::Conflict`]) when the engine changed under it since it began (a
//! turn finished, an event was appended, another machine finished). A machine dropped before
//! `finish` commits nothing (a turn's input stays committed). Each answer is checked before it
//! is taken; an answer that is refused changes nothing, and the same step can be answered
//! again.
//!
//! After [`Machine::fail`], [`Machine::step`] returns [`Step::Done`] and [`Machine::finish`]
//! commits what the machine records of a failure: a world query records itself as failed and
//! returns that outcome; a turn, a scene close and a time skip record nothing more and return
//! an [`crate::ErrorKind::Generation`] error naming the reason.
//!
//! [`run`] is this loop over a [`Generate`], for hosts that hand the engine a model.
//!
//! This module is the neutral ground of the machines: it knows the engine and the records of
//! the model ([`GenerateResult`], [`Purpose`]), and no machine. Each machine builds on it.

mod generate;
mod request;

pub use generate::{Generate, NoSink, TokenSink, block_on};
pub use request::{
    ChatMessage, EmbedRequest, GenerateRequest, GenerateResult, Purpose, Role, Sampling, ToolCall,
    ToolDef,
};

use crate::engine::Engine;
use crate::error::{Error, ErrorKind, Result};
use crate::model::EntityId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a machine needs next. In JSON (C and Python hosts): an object whose `"step"` names
/// the variant (`generate`, `embed`, `act`, `done`) beside the variant's fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum Step {
    /// A generation: call the model and [`Machine::provide`] the result (or
    /// [`Machine::fail`]).
    Generate(GenerateRequest),
    /// Vectors: [`Machine::provide_embeddings`], one per text.
    Embed(EmbedRequest),
    /// A host action a state-update pass reported (one of the turn options'
    /// `updates.actions`): carry it out and [`Machine::provide_action`] the answer.
    Act(ActionCall),
    /// Nothing more: [`Machine::finish`].
    Done,
}

/// A valid host action of a state-update pass, for the host to carry out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionCall {
    /// The action's name.
    pub name: String,
    /// Who does it: a present entity.
    pub who: EntityId,
    /// Its fields besides `type` and `who`.
    pub arguments: Value,
    /// Its position among the pass's reports.
    pub report: usize,
}

/// A resumable machine of the engine: see the [module docs](self) for the order of calls.
pub trait Machine {
    /// What [`Machine::finish`] returns.
    type Outcome;

    /// What the machine needs next.
    fn step(&mut self, engine: &mut Engine) -> Result<Step>;

    /// The model's answer to the [`Step::Generate`] just returned.
    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()>;

    /// The vectors asked for by the [`Step::Embed`] just returned. Machines that never ask
    /// for vectors refuse it with a [`ErrorKind::Conflict`].
    fn provide_embeddings(&mut self, engine: &mut Engine, vectors: Vec<Vec<f32>>) -> Result<()> {
        let _ = (engine, vectors);
        Err(Error::conflict("this machine asks for no embeddings"))
    }

    /// The game's answer to the [`Step::Act`] just returned: `Ok` with what it did, `Err`
    /// with why it refused. Machines that never ask for actions refuse it with a
    /// [`ErrorKind::Conflict`].
    fn provide_action(
        &mut self,
        engine: &mut Engine,
        answer: std::result::Result<Value, String>,
    ) -> Result<()> {
        let _ = (engine, answer);
        Err(Error::conflict("this machine asks for no actions"))
    }

    /// The host could not answer the step just returned (the model failed): the machine ends.
    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()>;

    /// Commits what the machine produced and returns it.
    fn finish(self, engine: &mut Engine) -> Result<Self::Outcome>;
}

/// Runs `machine` to its end through `generator`: every step answered in turn, tokens to
/// `sink` as they arrive, then [`Machine::finish`]. When the generator fails, the machine is
/// told ([`Machine::fail`]) and finished, so what it records of a failure is committed, and
/// the generator's error is returned as an [`ErrorKind::Generation`].
pub async fn run<M: Machine>(
    engine: &mut Engine,
    mut machine: M,
    generator: &dyn Generate,
    sink: &mut dyn TokenSink,
) -> Result<M::Outcome> {
    let Some(failed) = answer_steps(engine, &mut machine, generator, sink).await? else {
        return machine.finish(engine);
    };
    machine.fail(engine, &format!("generation failed: {failed}"))?;
    match machine.finish(engine) {
        Err(error) if error.kind() != ErrorKind::Generation => Err(error),
        _ => Err(Error::Generation { message: failed }),
    }
}

/// Answers `machine`'s steps through `generator` until it is done (`None`) or the generator
/// fails (`Some` with its message, the step unanswered).
pub(crate) async fn answer_steps<M: Machine + ?Sized>(
    engine: &mut Engine,
    machine: &mut M,
    generator: &dyn Generate,
    sink: &mut dyn TokenSink,
) -> Result<Option<String>> {
    loop {
        match machine.step(engine)? {
            Step::Generate(request) => match generator.generate(&request, sink).await {
                Ok(result) => machine.provide(engine, result)?,
                Err(message) => return Ok(Some(message)),
            },
            Step::Embed(request) => match generator.embed(&request).await {
                Ok(vectors) => machine.provide_embeddings(engine, vectors)?,
                Err(message) => return Ok(Some(message)),
            },
            Step::Act(call) => {
                let answer = generator.act(&call).await;
                machine.provide_action(engine, answer)?;
            }
            Step::Done => return Ok(None),
        }
    }
}

/// [`run`] on the calling thread, without an async runtime.
pub fn run_blocking<M: Machine>(
    engine: &mut Engine,
    machine: M,
    generator: &dyn Generate,
    sink: &mut dyn TokenSink,
) -> Result<M::Outcome> {
    block_on(run(engine, machine, generator, sink))
}
