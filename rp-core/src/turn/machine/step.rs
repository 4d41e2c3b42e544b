//! Stepping and providing: what the turn asks for next (scene summaries, the query's vector,
//! each responder's reply, the remembered lines' vectors) and what it does with each answer.

use super::begin::build_prompt;
use super::{Phase, Reply, TurnMachine};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::machine::{
    ChatMessage, EmbedRequest, GenerateRequest, GenerateResult, Purpose, Role, Step,
};
use crate::model::{
    EntityId, Initiation, Millis, Priority, Stimulus, Utterance, UtteranceId, WitnessSet,
};
use crate::scene::{self, SceneClose};
use crate::turn::tools;
use crate::update;

impl TurnMachine {
    /// What the turn needs next. Calling it again without providing returns the same request.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        let _span = tracing::info_span!("turn.step").entered();
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
    pub(super) fn ask_next_responder(&mut self, engine: &mut Engine) -> Result<()> {
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
            self.initiation
                .as_ref()
                .filter(|i| i.candidate.speaker == speaker && self.replies.is_empty())
                .map(|i| i.reason.clone()),
        )?;
        for id in recalled {
            if !self.recalled.contains(&id) {
                self.recalled.push(id);
            }
        }
        let initiating = self
            .initiation
            .as_ref()
            .is_some_and(|i| i.candidate.speaker == speaker && self.replies.is_empty());
        let request = GenerateRequest {
            purpose: if initiating {
                Purpose::Initiate { speaker }
            } else {
                Purpose::Reply { speaker }
            },
            messages: prompt.messages.clone(),
            params: self.options.sampling.clone(),
            json_schema: None,
            tools: if self.options.tools {
                tools::definitions()
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
        // The lorebook timers this prompt changed (docs/cards.md, "Timed effects").
        if let Some(timers) = prompt.lore_timers.clone() {
            let event = Event::LoreTimersSet {
                entity: speaker,
                timers,
            };
            self.scratch.apply(&event)?;
            self.pending.push(event);
        }
        self.prompts.push(prompt);
        self.phase = Phase::Generating(request);
        Ok(())
    }

    /// Once every summary of the scenes the turn closes is in: records the closes (on the
    /// scratch world, so the replies' prompts load the new summaries) and moves on.
    pub(super) fn settle_scenes(&mut self) -> Result<()> {
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
    pub(super) fn after_scenes(&self) -> Phase {
        if self.options.semantic && !self.responders.is_empty() && !self.query.trim().is_empty() {
            Phase::QueryVector
        } else {
            Phase::NextResponder
        }
    }

    pub(super) fn after_replies(&self) -> Phase {
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
        let calls = tools::run(&result.tool_calls, seed, self.scratch.draws_taken());
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
        if self.tool_rounds >= tools::MAX_TOOL_ROUNDS {
            // Enough rolling: the next answer is the reply.
            again.tools.clear();
        }
        self.phase = Phase::Generating(again);
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
        // Validate on a copy first: a bad result changes nothing.
        let mut next = self.scratch.clone();
        let mut events = vec![Event::Generated {
            purpose,
            result: result.clone(),
        }];
        next.apply(&events[0])?;
        let initiating = self
            .initiation
            .as_ref()
            .filter(|i| i.candidate.speaker == speaker && self.replies.is_empty())
            .map(|i| i.candidate.clone());
        let mut said = None;
        if !text.is_empty() {
            let (woken, witnesses) = witnesses_waking(&mut next, speaker, &text, self.input.now)?;
            events.extend(woken);
            let mut more = Vec::new();
            if let Some(c) = &initiating {
                more.push(Event::Initiated {
                    initiation: Initiation {
                        speaker,
                        to: c.to,
                        about: c.about,
                        score: c.score,
                        threshold: c.threshold,
                        shares: c.shares(),
                        rules: c.rules.clone(),
                    },
                    at: self.input.now,
                });
            }
            let (opened, scene) = if self.options.scenes.enabled {
                scene::scene_for_line(&next, speaker, self.input.now, &[])
            } else {
                (None, None)
            };
            let id = UtteranceId(next.next_id() + u64::from(opened.is_some()));
            if let Some(scene) = opened {
                more.push(Event::SceneOpened { scene });
            }
            more.push(Event::AssistantTurn {
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
            for e in &more {
                next.apply(e)?;
            }
            events.extend(more);
            said = Some((id, witnesses, scene));
        } else if initiating.is_some() {
            // Nothing said: the initiation waits a processing interval before it is tried again.
            let hold = hold_event(&next, speaker, self.input.now);
            next.apply(&hold)?;
            events.push(hold);
        }
        self.scratch = next;
        self.pending.extend(events);
        match said {
            Some((id, witnesses, scene)) => {
                self.lines.push((
                    speaker,
                    format!("{name}: {text}"),
                    witnesses.clone(),
                    None,
                    scene,
                ));
                self.replies.push(Reply {
                    speaker,
                    utterance: id,
                    text: text.clone(),
                });
                if initiating.is_some() {
                    // Those who heard the first line decide whether to answer it.
                    let candidates: Vec<EntityId> =
                        witnesses.iter().filter(|w| *w != speaker).collect();
                    self.query = text.clone();
                    self.decide_for(candidates, &text, &name, self.input.now)?;
                }
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
}

/// The witnesses of a line `speaker` says at `now` in `world`: sleepers within earshot are
/// disturbed first (a `line` stimulus, HIGH when the line names them, NORMAL otherwise; the
/// events are applied to `world` and returned), and those it wakes hear it (docs/drives.md).
pub(crate) fn witnesses_waking(
    world: &mut crate::log::World,
    speaker: EntityId,
    text: &str,
    now: Millis,
) -> Result<(Vec<Event>, WitnessSet)> {
    let mut events = Vec::new();
    let name = world
        .entity(speaker)
        .map_or_else(String::new, |e| e.name.clone());
    for sleeper in world.sleepers_near(speaker) {
        let priority = if world.mentions(sleeper, text) {
            Priority::High
        } else {
            Priority::Normal
        };
        let event = Event::StimulusNotified {
            entity: sleeper,
            stimulus: Stimulus {
                id: world.next_id(),
                kind: "line".into(),
                priority,
                payload: format!("{name} talking nearby"),
                at: now,
                count: 1,
            },
        };
        world.apply(&event)?;
        events.push(event);
    }
    Ok((events, world.hearers(speaker)))
}

/// Holds `entity`'s initiations for one processing interval from `now`.
pub(crate) fn hold_event(world: &crate::log::World, entity: EntityId, now: Millis) -> Event {
    let interval = crate::drives::interval_ms(world, entity, now).unwrap_or(60_000.0);
    Event::InitiationHeld {
        entity,
        until: now.saturating_add(interval.max(1_000.0) as Millis),
    }
}

/// A reply as it will be recorded: trimmed, without a leading `Name:` the model echoed.
pub(crate) fn clean_reply(text: &str, name: &str) -> String {
    let mut t = text.trim();
    if !name.is_empty()
        && let Some(rest) = t.strip_prefix(name)
        && let Some(rest) = rest.trim_start().strip_prefix(':')
    {
        t = rest.trim_start();
    }
    t.to_string()
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
