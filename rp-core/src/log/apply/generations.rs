//! Applying what the machines' model calls leave in the log: response decisions and their
//! draws, generations as given, tool runs, the judged reports of a state-update pass.

use super::{check_text, check_texts};
use crate::error::{Error, Result};
use crate::log::{JudgedReport, World};
use crate::model::{EntityId, GenerateResult, Purpose, ToolRun};

impl World {
    /// `response_decided`: the decision's random draws, counted on the world's generator.
    pub(super) fn record_decision(&mut self, entity: EntityId, draws: &[f64]) -> Result<()> {
        self.get_entity(entity)?;
        if let Some(d) = draws.iter().find(|d| !(0.0..1.0).contains(*d)) {
            return Err(Error::invalid(
                "event",
                format!("a random draw of {d} is outside [0, 1)"),
            ));
        }
        self.draws_taken = self
            .draws_taken
            .checked_add(draws.len() as u64)
            .ok_or_else(|| {
                Error::invalid("event", "the random generator's counter is exhausted")
            })?;
        Ok(())
    }

    /// `generated`: a generation as the host gave it, its texts bounded.
    pub(super) fn record_generation(
        &mut self,
        purpose: &Purpose,
        result: &GenerateResult,
    ) -> Result<()> {
        if let Some(speaker) = purpose.speaker() {
            self.get_entity(speaker)?;
        }
        check_text("generation", &result.text)?;
        check_texts("generation", result.model.iter())?;
        Ok(())
    }

    /// `tools_run`: the tool calls of a reply, their draws counted on the world's generator.
    pub(super) fn record_tool_runs(&mut self, speaker: EntityId, calls: &[ToolRun]) -> Result<()> {
        self.get_entity(speaker)?;
        let mut taken: u64 = 0;
        for c in calls {
            check_texts("tool call", [&c.id, &c.name, &c.arguments, &c.result])?;
            if let Some(d) = c.draws.iter().find(|d| !(0.0..1.0).contains(*d)) {
                return Err(Error::invalid(
                    "event",
                    format!("a random draw of {d} is outside [0, 1)"),
                ));
            }
            taken = taken.saturating_add(c.draws.len() as u64);
        }
        self.draws_taken = self.draws_taken.checked_add(taken).ok_or_else(|| {
            Error::invalid("event", "the random generator's counter is exhausted")
        })?;
        Ok(())
    }

    /// `reports_judged`: the texts of a state-update pass's reports, bounded.
    pub(super) fn record_reports(&mut self, reports: &[JudgedReport]) -> Result<()> {
        for r in reports {
            check_text("report", &r.report)?;
            check_texts("report", r.rejected.iter().chain(r.answer.iter()))?;
        }
        Ok(())
    }
}
