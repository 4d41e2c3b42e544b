//! Ending a turn: failing it when the host's model cannot answer, or committing its lines,
//! memories and recalls in one transaction.

use super::{Phase, TurnMachine, TurnOutcome};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::scene::SceneClose;

impl TurnMachine {
    /// The host could not answer the step just returned (its model failed): the turn ends.
    /// [`TurnMachine::step`] returns [`Step::Done`] from now on and [`TurnMachine::finish`]
    /// commits nothing more (the input stays committed) and returns an
    /// [`crate::ErrorKind::Generation`] error naming `reason`. Refused when the turn asks for
    /// nothing.
    ///
    /// [`Step::Done`]: crate::machine::Step::Done
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
        let _span = tracing::info_span!("turn.finish").entered();
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
                        embedding: vector.clone(),
                        scene,
                        ..Memory::new(
                            MemoryId(self.scratch.next_id()),
                            owner,
                            witnesses.clone(),
                            text.clone(),
                            MemoryKind::Utterance,
                            significance,
                            now,
                        )
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
}
