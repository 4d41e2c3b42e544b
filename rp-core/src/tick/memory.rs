//! The memory work of a tick (docs/memory.md): the summaries of whole memories that faded and
//! the reflections due, asked one at a time, each answer read strictly, retried once with what
//! was wrong, and committed as it comes.

use super::{ReflectionOutcome, TickMachine};
use crate::engine::Engine;
use crate::error::Result;
use crate::log::{Event, World};
use crate::model::{EntityId, MemoryId};

/// Memory work a tick asks the model for, one request at a time.
#[derive(Debug)]
pub(super) enum MemoryWork {
    /// Summaries of one owner's whole memories that faded.
    Summary { owner: EntityId, ids: Vec<MemoryId> },
    /// One character's reflection.
    Reflect { entity: EntityId },
}

/// The memory work asked for now: what, its request, and whether it is the retry.
#[derive(Debug)]
pub(super) struct Asking {
    work: MemoryWork,
    request: crate::machine::GenerateRequest,
    retried: bool,
}

impl Asking {
    /// The request for `work`, from the world as it is now.
    pub(super) fn new(world: &World, work: MemoryWork) -> Asking {
        let request = match &work {
            MemoryWork::Summary { owner, ids } => crate::decay::summary_request(world, *owner, ids),
            MemoryWork::Reflect { entity } => crate::decay::reflection_request(world, *entity),
        };
        Asking {
            work,
            request,
            retried: false,
        }
    }

    /// What is asked.
    pub(super) fn request(&self) -> &crate::machine::GenerateRequest {
        &self.request
    }
}

impl TickMachine {
    /// The host could not answer `asking`: a reflection is recorded as rejected (so the host
    /// is not asked again at once); summaries, this one and those not asked yet, wait an hour.
    pub(super) fn fail_memory(
        &mut self,
        engine: &mut Engine,
        asking: Asking,
        reason: &str,
    ) -> Result<()> {
        if let MemoryWork::Reflect { entity } = asking.work {
            let why = format!("the host could not answer: {reason}");
            self.record_reflection(engine, entity, Vec::new(), Some(why))?;
        }
        let summaries_left = matches!(asking.work, MemoryWork::Summary { .. })
            || self
                .memory
                .iter()
                .any(|w| matches!(w, MemoryWork::Summary { .. }));
        if summaries_left {
            let retry = crate::decay::retry_summaries(engine.world(), self.outcome.at);
            self.outcome.seq = engine.append(vec![retry])?;
        }
        Ok(())
    }

    /// Reads the answer to a summary or reflection request: a bad one is asked again once
    /// with what was wrong; then what is valid of it is committed (a reflection rejected as a
    /// whole is recorded so, and its significance starts again from 0).
    pub(super) fn answer_memory(
        &mut self,
        engine: &mut Engine,
        mut asking: Asking,
        text: &str,
    ) -> Result<()> {
        let at = self.outcome.at;
        let world = engine.world();
        match &asking.work {
            MemoryWork::Summary { owner, ids } => {
                let (summaries, problems) =
                    crate::decay::read_summaries(world, *owner, ids, at, text);
                if !problems.is_empty() && !asking.retried {
                    asking.request =
                        asking
                            .request
                            .retried(text, &problems, r#"{"summaries": [...]}"#);
                    asking.retried = true;
                    self.asking = Some(asking);
                    return Ok(());
                }
                let missed = summaries.len() < ids.len();
                if !summaries.is_empty() {
                    let done: Vec<MemoryId> = summaries.iter().map(|s| s.id).collect();
                    self.outcome.seq = engine.append(vec![Event::MemoriesSummarized {
                        owner: *owner,
                        at,
                        summaries,
                    }])?;
                    self.outcome.summarized.extend(done);
                }
                if missed {
                    let retry = crate::decay::retry_summaries(engine.world(), at);
                    self.outcome.seq = engine.append(vec![retry])?;
                }
            }
            MemoryWork::Reflect { entity } => {
                let (insights, problems) = crate::decay::read_insights(world, *entity, at, text);
                if !problems.is_empty() && !asking.retried {
                    asking.request =
                        asking
                            .request
                            .retried(text, &problems, r#"{"insights": [...]}"#);
                    asking.retried = true;
                    self.asking = Some(asking);
                    return Ok(());
                }
                let rejected = (insights.is_empty() && !problems.is_empty())
                    .then(|| problems.join("; ").chars().take(4000).collect());
                self.record_reflection(engine, *entity, insights, rejected)?;
            }
        }
        Ok(())
    }

    /// Commits `entity`'s reflection (or its rejection) at the tick's time.
    pub(super) fn record_reflection(
        &mut self,
        engine: &mut Engine,
        entity: EntityId,
        insights: Vec<crate::model::Memory>,
        rejected: Option<String>,
    ) -> Result<()> {
        let ids = insights.iter().map(|m| m.id).collect();
        self.outcome.seq = engine.append(vec![Event::Reflected {
            entity,
            at: self.outcome.at,
            insights,
            rejected: rejected.clone(),
        }])?;
        self.outcome.reflections.push(ReflectionOutcome {
            entity,
            insights: ids,
            rejected,
        });
        Ok(())
    }
}
