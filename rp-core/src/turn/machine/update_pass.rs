//! The state-update pass of a turn ([`crate::update`]): its answer judged, retried once,
//! the host's answers to its actions, and the pass recorded.

use super::{Phase, TurnMachine};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::machine::{GenerateRequest, GenerateResult, Purpose};
use crate::model::{EntityId, WitnessSet};
use crate::update::{self, cut_at};

/// A state-update pass judged, waiting for the host's answers to its actions.
#[derive(Clone, Debug)]
pub(super) struct Judged {
    /// The world with the pass's changes applied.
    pub(super) scratch: World,
    /// The record of the answer.
    pub(super) generated: Event,
    pub(super) verdict: update::Verdict,
}

impl PartialEq for Judged {
    fn eq(&self, other: &Self) -> bool {
        self.generated == other.generated && self.verdict.reports == other.verdict.reports
    }
}

impl TurnMachine {
    /// Reads the state-update pass's answer: retries once with the problems, then applies what
    /// is valid and records every report as judged.
    pub(super) fn provide_update(
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
            self.phase = Phase::Updating(
                request.retried(&answer, &verdict.problems, r#"{"reports": [...]}"#),
                true,
            );
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
    ///
    /// [`Step::Act`]: crate::machine::Step::Act
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
}
