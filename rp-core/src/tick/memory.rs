//! The memory work of a tick (docs/memory.md): the summaries of whole memories that faded and
//! the reflections due, asked one at a time, each answer read strictly, retried once with what
//! was wrong, and committed as it comes.

use super::{ReflectionOutcome, TickMachine};
use crate::drives::layers::Hoist;
use crate::engine::Engine;
use crate::error::Result;
use crate::log::{Event, World};
use crate::model::{Classification, EntityId, Layer, MemoryId, Millis, Stimulus};

/// Memory work a tick asks the model for, one request at a time.
#[derive(Debug)]
pub(super) enum MemoryWork {
    /// Summaries of one owner's whole memories that faded.
    Summary { owner: EntityId, ids: Vec<MemoryId> },
    /// One character's reflection.
    Reflect { entity: EntityId },
    /// The tone of the answer `to` gave `entity`'s initiation made at `at` (docs/rules.md).
    Classify {
        entity: EntityId,
        to: EntityId,
        at: Millis,
    },
    /// Stimuli hoisted past arithmetic and rules, for the fast model (docs/drives.md,
    /// "Layers"); `fresh` of them processed in this tick.
    Perceive {
        entity: EntityId,
        hoist: Hoist,
        fresh: u32,
    },
    /// What the fast model hoisted on, for the smart model.
    Think {
        entity: EntityId,
        stimuli: Vec<Stimulus>,
        reason: String,
        classification: Classification,
    },
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
            MemoryWork::Classify { entity, to, at } => {
                super::rules::classify_request(world, *entity, *to, *at)
            }
            MemoryWork::Perceive { entity, hoist, .. } => {
                super::think::classify_request(world, *entity, hoist)
            }
            MemoryWork::Think {
                entity,
                stimuli,
                classification,
                ..
            } => super::think::think_request(world, *entity, stimuli, classification),
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
        let why = format!("the host could not answer: {reason}");
        let summaries_left = matches!(asking.work, MemoryWork::Summary { .. })
            || self
                .memory
                .iter()
                .any(|w| matches!(w, MemoryWork::Summary { .. }));
        match asking.work {
            MemoryWork::Reflect { entity } => {
                self.record_reflection(engine, entity, Vec::new(), Some(why))?
            }
            MemoryWork::Classify { entity, to, at } => {
                self.record_feedback(engine, entity, to, at, Err(why))?
            }
            MemoryWork::Perceive { entity, hoist, .. } => {
                self.record_classified(engine, entity, &hoist, Err(why), None)?
            }
            MemoryWork::Think {
                entity,
                stimuli,
                reason,
                ..
            } => self.record_thought(engine, entity, &stimuli, &reason, Err(why))?,
            MemoryWork::Summary { .. } => {}
        }
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
            MemoryWork::Classify { entity, to, at } => {
                let (entity, to, at) = (*entity, *to, *at);
                match super::rules::read_sentiment(text) {
                    Err(problem) if !asking.retried => {
                        asking.request = asking.request.retried(
                            text,
                            &[problem],
                            r#"{"sentiment": "positive" | "neutral" | "negative"}"#,
                        );
                        asking.retried = true;
                        self.asking = Some(asking);
                        return Ok(());
                    }
                    read => {
                        let read =
                            read.map_err(|p| format!("the classification was rejected: {p}"));
                        self.record_feedback(engine, entity, to, at, read)?;
                    }
                }
            }
            MemoryWork::Perceive { .. } | MemoryWork::Think { .. } => {
                return self.answer_layer(engine, asking, text);
            }
        }
        Ok(())
    }

    /// Reads the fast model's classification of hoisted stimuli, or the smart model's thought
    /// (docs/drives.md, "Layers"): a bad answer is asked again once with what was wrong; then
    /// the classification (and, when it calls for it, a thought to ask for next) or the
    /// thought is committed, or why not.
    fn answer_layer(&mut self, engine: &mut Engine, mut asking: Asking, text: &str) -> Result<()> {
        let at = self.outcome.at;
        let world = engine.world();
        let (read, shape) = match &asking.work {
            MemoryWork::Perceive { .. } => (
                super::think::read_classification(text).map(|_| ()),
                r#"{"intent": ..., "sentiment": ..., "confidence": 0 to 1, "significance": 0 to 1}"#,
            ),
            MemoryWork::Think {
                entity,
                stimuli,
                reason,
                classification,
                ..
            } => (
                super::think::read_thought(
                    world,
                    *entity,
                    at,
                    stimuli,
                    reason,
                    classification.significance,
                    text,
                )
                .map(|_| ()),
                r#"{"thought": ..., "task": ..., "curiosity": ..., "speak_to": ..., "about": ...}"#,
            ),
            _ => return Ok(()),
        };
        if let Err(problem) = read
            && !asking.retried
        {
            asking.request = asking.request.retried(text, &[problem], shape);
            asking.retried = true;
            self.asking = Some(asking);
            return Ok(());
        }
        match asking.work {
            MemoryWork::Perceive {
                entity,
                hoist,
                fresh,
            } => {
                let read = super::think::read_classification(text)
                    .map_err(|p| format!("the classification was rejected: {p}"));
                self.record_classified(engine, entity, &hoist, read, Some(fresh))?;
            }
            MemoryWork::Think {
                entity,
                stimuli,
                reason,
                classification,
                ..
            } => {
                let world = engine.world();
                let read = super::think::read_thought(
                    world,
                    entity,
                    at,
                    &stimuli,
                    &reason,
                    classification.significance,
                    text,
                )
                .map_err(|p| format!("the thought was rejected: {p}"));
                self.record_thought(engine, entity, &stimuli, &reason, read)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Commits what the fast model made of `hoist` (or why nothing), and asks for a thought
    /// next when the classification calls for one (`fresh`: how many of its stimuli this tick
    /// processed, counted as going on; `None` after a failure).
    fn record_classified(
        &mut self,
        engine: &mut Engine,
        entity: EntityId,
        hoist: &Hoist,
        read: std::result::Result<Classification, String>,
        fresh: Option<u32>,
    ) -> Result<()> {
        let at = self.outcome.at;
        let (classification, rejected) = match read {
            Ok(c) => (Some(c), None),
            Err(why) => (None, Some(why.chars().take(4000).collect::<String>())),
        };
        let thought = classification
            .as_ref()
            .and_then(|c| super::think::think_reason(engine.world(), entity, c));
        self.outcome.seq = engine.append(vec![Event::StimulusClassified {
            entity,
            at,
            stimuli: hoist.stimuli.iter().map(|s| s.id).collect(),
            kind: hoist.kind.clone(),
            reason: hoist.reason.clone(),
            pattern: hoist.pattern,
            classification: classification.clone(),
            rejected,
        }])?;
        self.outcome.classified.push(super::ClassifiedOutcome {
            entity,
            kind: hoist.kind.clone(),
            reason: hoist.reason.clone(),
            classification: classification.clone(),
            thought: thought.clone(),
        });
        if let (Some(reason), Some(c), Some(fresh)) = (thought, classification, fresh) {
            self.outcome
                .layers
                .moved(Layer::Classify, Layer::Think, fresh);
            self.memory.push_front(MemoryWork::Think {
                entity,
                stimuli: hoist.stimuli.clone(),
                reason,
                classification: c,
            });
        }
        Ok(())
    }

    /// Commits `entity`'s thought (or why there is none).
    fn record_thought(
        &mut self,
        engine: &mut Engine,
        entity: EntityId,
        stimuli: &[Stimulus],
        reason: &str,
        read: std::result::Result<Event, String>,
    ) -> Result<()> {
        let event = match read {
            Ok(event) => event,
            Err(why) => Event::ThoughtFormed {
                entity,
                at: self.outcome.at,
                stimuli: stimuli.iter().map(|s| s.id).collect(),
                reason: reason.to_owned(),
                memory: None,
                effects: Vec::new(),
                rejected: Some(why.chars().take(4000).collect()),
            },
        };
        if let Event::ThoughtFormed {
            memory: Some(m), ..
        } = &event
        {
            self.outcome.thoughts.push((entity, m.id));
        }
        self.outcome.seq = engine.append(vec![event])?;
        Ok(())
    }

    /// Commits what `entity` learns from the answer `to` gave its initiation made at `at`:
    /// from its tone, or nothing when it could not be had (the wait ends either way).
    fn record_feedback(
        &mut self,
        engine: &mut Engine,
        entity: EntityId,
        to: EntityId,
        at: Millis,
        sentiment: std::result::Result<crate::model::Sentiment, String>,
    ) -> Result<()> {
        let now = self.outcome.at;
        let world = engine.world();
        let Some(awaiting) = super::rules::awaiting(world, entity, to, at) else {
            return Ok(()); // learned from already (an earlier tick, a rewind)
        };
        let event = match sentiment {
            Ok(s) => super::rules::learned_event(world, entity, awaiting, Some(s), now),
            Err(why) => super::rules::unlearned_event(world, entity, awaiting, &why, now),
        };
        self.outcome.note_rules(&event);
        self.outcome.seq = engine.append(vec![event])?;
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
