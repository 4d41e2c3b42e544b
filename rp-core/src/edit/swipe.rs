//! Swipes (docs/edits.md, "Swipes"): the last reply of the latest turn asked for again with
//! the prompt it was given, every alternative kept (`alternatives_set`), and one chosen as the
//! line: the line and its memories become the chosen text and the turn's state-update pass is
//! asked for again on it. Prompts and memories only ever hold the line.

use super::plan::{Change, line_of};
use super::{EditOptions, OnInvalid, find_line, read_back};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::machine::{Generate, GenerateRequest, GenerateResult, Purpose, TokenSink, block_on};
use crate::model::{AsOf, HistoryPoint, Utterance, UtteranceId, WitnessSet};
use crate::turn::{TurnMachine, TurnOptions, TurnOutcome};
use serde::{Deserialize, Serialize};

/// A reply asked for again: which line, and the request for the host's model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwipeRequest {
    /// The line.
    pub line: UtteranceId,
    /// What to ask the model: the prompt the reply was given (built again from the world as
    /// it was before the reply), with the turn options' sampling.
    pub request: GenerateRequest,
}

impl Engine {
    /// The last line of the current branch, which must be a character's (the last reply of
    /// the latest turn); `line`, when given, must be it.
    fn last_reply(&self, line: Option<UtteranceId>) -> Result<Utterance> {
        let Some((events, at)) = read_back(self, 32, |e| line_of(e).is_some())? else {
            return Err(Error::not_found(
                "line",
                line.map_or_else(|| "a reply".to_owned(), |l| l.0.to_string()),
            ));
        };
        let Event::AssistantTurn { utterance } = &events[at].1 else {
            return Err(Error::conflict(
                "the last line is the player's: only a character's reply can be asked for again",
            ));
        };
        if let Some(l) = line.filter(|l| *l != utterance.id) {
            return Err(Error::conflict(format!(
                "line {} is not the last reply (line {} is); edit an older line with edit_line",
                l.0, utterance.id.0
            )));
        }
        Ok(utterance.clone())
    }

    /// The request that asks for the last reply of the latest turn again (`line`, when given,
    /// must be that reply): the prompt its speaker was given, built again from the world as it
    /// was before the reply, and `options`' sampling. Changes nothing; give the model's answer
    /// to [`Engine::add_alternative`]. A `conflict` error when the last line is not a
    /// character's, or `line` is not the last; `not_found` when there is no line.
    pub fn swipe_request(
        &mut self,
        line: Option<UtteranceId>,
        options: &TurnOptions,
    ) -> Result<SwipeRequest> {
        options.check()?;
        let reply = self.last_reply(line)?;
        let found = find_line(self, reply.id)?;
        let initiated = found.tail.iter().any(|(_, e)| {
            matches!(e, Event::Initiated { initiation, .. } if initiation.speaker == reply.speaker)
        });
        let world = self.world_at(&AsOf {
            point: HistoryPoint::Seq(found.base),
            branch: None,
        })?;
        let prompt =
            crate::turn::reply_prompt(self, &world, reply.speaker, reply.at, &options.prompt)?;
        Ok(SwipeRequest {
            line: reply.id,
            request: GenerateRequest {
                purpose: if initiated {
                    Purpose::Initiate {
                        speaker: reply.speaker,
                    }
                } else {
                    Purpose::Reply {
                        speaker: reply.speaker,
                    }
                },
                messages: prompt.messages,
                params: options.sampling.clone(),
                json_schema: None,
                tools: Vec::new(),
            },
        })
    }

    /// Records the model's answer to [`Engine::swipe_request`] as another alternative of
    /// `line` (the last reply), with the record of its generation; the line stays as it is.
    /// Returns the new alternative's index (the line itself is alternative 0 until others are
    /// chosen). Refused, changing nothing, when `line` is not the last reply, the answer is
    /// empty (after an echoed "Name:" is taken off), or the line has 64 alternatives.
    pub fn add_alternative(&mut self, line: UtteranceId, result: &GenerateResult) -> Result<usize> {
        let reply = self.last_reply(Some(line))?;
        let name = self
            .world()
            .entity(reply.speaker)
            .map(|e| e.name.clone())
            .unwrap_or_default();
        let text = crate::turn::clean_reply(&result.text, &name);
        if text.is_empty() {
            return Err(Error::invalid(
                "alternative",
                "the model gave no text; ask again",
            ));
        }
        let (mut texts, chosen) = match self.world().alternatives(line) {
            Some((texts, chosen)) => (texts.to_vec(), chosen),
            None => (vec![reply.text.clone()], 0),
        };
        texts.push(text);
        let index = texts.len() - 1;
        self.append(vec![
            Event::Generated {
                purpose: Purpose::Reply {
                    speaker: reply.speaker,
                },
                result: GenerateResult {
                    tool_calls: Vec::new(),
                    ..result.clone()
                },
            },
            Event::AlternativesSet {
                line,
                texts,
                chosen: chosen as u32,
            },
        ])?;
        Ok(index)
    }

    /// Asks for the last reply again through `generator` and records the answer
    /// ([`Engine::swipe_request`], then [`Engine::add_alternative`]): returns its index.
    pub fn swipe_blocking(
        &mut self,
        line: Option<UtteranceId>,
        options: &TurnOptions,
        generator: &dyn Generate,
    ) -> Result<usize> {
        let swipe = self.swipe_request(line, options)?;
        let result = block_on(generator.generate(&swipe.request, &mut crate::machine::NoSink))
            .map_err(|e| Error::Generation { message: e })?;
        self.add_alternative(swipe.line, &result)
    }

    /// Makes alternative `n` of `line` (the last reply) the line: the line and its memories
    /// take its text (a new history, the old kept as a branch, as [`Engine::edit_line`] does),
    /// the alternatives are kept with `n` chosen, and the state-update pass of its turn, judged
    /// on the old text, is dropped. Returns a turn machine that asks for that pass again on the
    /// line that stands (done at once when the turn had none, `options` disable it, or `n` is
    /// already the line); drive it like a turn and finish it to commit the pass. Refused,
    /// changing nothing, when `line` is not the last reply or has no alternative `n`.
    pub fn begin_choose(
        &mut self,
        line: UtteranceId,
        n: usize,
        mut options: TurnOptions,
    ) -> Result<TurnMachine> {
        options.check()?;
        let reply = self.last_reply(Some(line))?;
        let Some((texts, chosen)) = self
            .world()
            .alternatives(line)
            .map(|(t, c)| (t.to_vec(), c))
        else {
            return Err(Error::not_found(
                "alternative",
                format!("{n} of line {} (it has none but itself)", line.0),
            ));
        };
        let Some(text) = texts.get(n).cloned() else {
            return Err(Error::not_found(
                "alternative",
                format!("{n} of line {} (it has {})", line.0, texts.len()),
            ));
        };
        if n == chosen {
            options.updates.enabled = false;
            return Ok(TurnMachine::update_again(
                self,
                Vec::new(),
                options,
                reply.at,
            ));
        }
        let edit = EditOptions {
            with_replies: false,
            on_invalid: OnInvalid::Drop,
        };
        let plan = self.plan_change(line, &Change::Choose(text, texts, n as u32), &edit)?;
        let had_update = plan.had_update;
        let lines: Vec<Utterance> = plan.turn_lines.clone();
        self.make_edit(plan, &edit)?;
        if !had_update {
            options.updates.enabled = false;
        }
        let world = self.world();
        let lines = lines
            .into_iter()
            .map(|u| {
                let name = world.entity(u.speaker).map_or("", |e| e.name.as_str());
                let witnesses: WitnessSet = u.witnesses.clone();
                (u.speaker, format!("{name}: {}", u.text), witnesses, u.scene)
            })
            .collect();
        Ok(TurnMachine::update_again(self, lines, options, reply.at))
    }

    /// [`Engine::begin_choose`], with the state-update pass asked of `generator`.
    pub fn choose_blocking(
        &mut self,
        line: UtteranceId,
        n: usize,
        options: TurnOptions,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<TurnOutcome> {
        let machine = self.begin_choose(line, n, options)?;
        block_on(crate::machine::run(self, machine, generator, sink))
    }
}
