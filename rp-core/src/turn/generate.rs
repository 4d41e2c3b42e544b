//! `run_turn`: the whole turn machine driven through the host's [`Generate`] (see
//! [`crate::machine::run`]). Nothing here needs an async runtime: [`Engine::run_turn_blocking`]
//! runs a turn on the calling thread.

use super::{TurnInput, TurnMachine, TurnOptions, TurnOutcome};
use crate::engine::Engine;
use crate::error::Result;
use crate::machine::{Generate, TokenSink, block_on};

impl Engine {
    /// Runs a whole turn through `generator`: [`TurnMachine::begin`], then every step, then
    /// [`TurnMachine::finish`] ([`crate::machine::run`]). Tokens go to `sink` as they arrive.
    /// If the generator fails, the input stays committed, nothing else is, and the error is
    /// returned.
    pub async fn run_turn(
        &mut self,
        input: TurnInput,
        options: TurnOptions,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<TurnOutcome> {
        let machine = TurnMachine::begin(self, input, options)?;
        crate::machine::run(self, machine, generator, sink).await
    }

    /// [`Engine::run_turn`] on the calling thread, without an async runtime.
    pub fn run_turn_blocking(
        &mut self,
        input: TurnInput,
        options: TurnOptions,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<TurnOutcome> {
        block_on(self.run_turn(input, options, generator, sink))
    }
}
