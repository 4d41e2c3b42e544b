//! Applying what stimuli hoisted past arithmetic and rules came to (docs/drives.md,
//! "Layers"): the fast model's classification, and the thought the smart model had, a memory
//! of the character's own with what it does to its drives and intentions.

use super::check_text;
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::*;

/// The most stimuli one hoist carries.
const MAX_HOISTED: usize = 64;

impl World {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn classify_stimuli(
        &mut self,
        entity: EntityId,
        at: Millis,
        stimuli: &[u64],
        kind: &str,
        reason: &str,
        pattern: bool,
        classification: Option<&Classification>,
        rejected: Option<&str>,
    ) -> Result<()> {
        self.check_now("stimulus", at)?;
        check_text("stimulus", reason)?;
        let bad = |reason: String| Err(Error::invalid("stimulus", reason));
        if stimuli.is_empty() || stimuli.len() > MAX_HOISTED {
            return bad(format!("a hoist carries 1 to {MAX_HOISTED} stimuli"));
        }
        if !self
            .mind(entity)
            .is_some_and(|m| DriveSettings::knows_kind(kind, &self.drive_config, Some(&m.config)))
        {
            return bad(format!(
                "{entity} has no mind, or {kind:?} is not a stimulus kind"
            ));
        }
        match (classification, rejected) {
            (Some(c), None) => check_classification(c)?,
            (None, Some(r)) => check_text("stimulus", r)?,
            _ => return bad("a hoist records a classification or why not, not both".into()),
        }
        if pattern {
            let mind = self.minds.get_mut(&entity).expect("checked above");
            mind.patterns.retain(|(k, _)| k != kind);
            mind.patterns.push((kind.to_owned(), at));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn form_thought(
        &mut self,
        entity: EntityId,
        at: Millis,
        stimuli: &[u64],
        reason: &str,
        memory: Option<&Memory>,
        effects: &[ThoughtEffect],
        rejected: Option<&str>,
    ) -> Result<()> {
        self.check_now("thought", at)?;
        check_text("thought", reason)?;
        let bad = |reason: String| Err(Error::invalid("thought", reason));
        if stimuli.is_empty() || stimuli.len() > MAX_HOISTED {
            return bad(format!("a thought is about 1 to {MAX_HOISTED} stimuli"));
        }
        if self.mind(entity).is_none() {
            return bad(format!(
                "{entity} has no mind: only the engine's characters think"
            ));
        }
        let memory = match (memory, rejected) {
            (Some(m), None) => m,
            (None, Some(r)) if effects.is_empty() => return check_text("thought", r),
            _ => {
                return bad(
                    "a thought records a memory (and its effects) or why it was rejected".into(),
                );
            }
        };
        self.check_fresh(memory.id.0)?;
        self.check_new_own(entity, at, memory, MemoryKind::Thought, "thought")?;
        if !memory.sources.is_empty() {
            return bad("a thought cites no memory".into());
        }
        if effects.len() > 2 {
            return bad("a thought has at most two effects".into());
        }
        for e in effects {
            match e {
                ThoughtEffect::Drive { drive, amount } => {
                    if !matches!(drive, Drive::Task | Drive::Curiosity) {
                        return bad(format!(
                            "a thought moves task or curiosity, not {}",
                            drive.name()
                        ));
                    }
                    if !(amount.is_finite() && (-1.0..=1.0).contains(amount)) {
                        return bad(format!("the amount is {amount}; it is in [-1, 1]"));
                    }
                }
                ThoughtEffect::Initiate { to, about } => {
                    self.get_entity(*to)?;
                    if *to == entity {
                        return bad("a character initiates with someone else".into());
                    }
                    if about.trim().is_empty() || about.chars().count() > MAX_RULE_TEXT_CHARS {
                        return bad(format!(
                            "what it means to talk about is 1 to {MAX_RULE_TEXT_CHARS} characters"
                        ));
                    }
                }
            }
        }
        let significance = memory.significance;
        self.insert_memory(memory.clone());
        let mind = self.minds.get_mut(&entity).expect("checked above");
        for e in effects {
            match e {
                ThoughtEffect::Drive { drive, amount } => {
                    let moved = |v: f64| (v + amount).clamp(0.0, 1.0);
                    match drive {
                        Drive::Task => mind.task_extra = moved(mind.task_extra),
                        _ => mind.curiosity = moved(mind.curiosity),
                    }
                }
                ThoughtEffect::Initiate { to, about } => {
                    super::rules::intend(mind, None, Some(*to), about, significance, at)
                }
            }
        }
        Ok(())
    }
}

fn check_classification(c: &Classification) -> Result<()> {
    let bad = |reason: String| Err(Error::invalid("stimulus", reason));
    if c.intent.trim().is_empty() || c.intent.chars().count() > MAX_INTENT_LABEL_CHARS {
        return bad(format!(
            "the intent is a label of 1 to {MAX_INTENT_LABEL_CHARS} characters"
        ));
    }
    for (name, v) in [
        ("confidence", c.confidence),
        ("significance", c.significance),
    ] {
        if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
            return bad(format!("the {name} is {v}; it is in [0, 1]"));
        }
    }
    Ok(())
}
