//! Applying rules and learning (docs/rules.md): a rule added, removed or forgotten, fired;
//! the weights feedback moved. Each event is checked against the world before it changes it,
//! so a save file or a host cannot set a weight out of range or learn from an answer nobody
//! was waiting for.

use super::check_text;
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::*;

/// Terms a learned factor may be on.
pub(crate) const TERM_NAMES: [&str; 5] =
    ["social_debt", "task", "curiosity", "availability", "intent"];
/// The most weight changes one piece of feedback makes.
const MAX_CHANGES: usize = 16;

impl World {
    pub(super) fn add_rule(&mut self, rule: &Rule) -> Result<()> {
        self.check_fresh(rule.id.0)?;
        self.check_now("rule", rule.created_at)?;
        if rule.since != rule.created_at || rule.uses != 0 || rule.last_used.is_some() {
            return Err(Error::invalid(
                "rule",
                "a new rule is unused, its weight set when it is made",
            ));
        }
        if rule.checked.is_some() {
            return Err(Error::invalid("rule", "a new rule was never considered"));
        }
        self.check_rule(rule)?;
        self.take_id(rule.id.0);
        self.rules.insert((rule.owner, rule.id), rule.clone());
        Ok(())
    }

    pub(super) fn remove_rule(
        &mut self,
        entity: EntityId,
        id: RuleId,
        at: Millis,
        forgotten: bool,
    ) -> Result<()> {
        self.check_now("rule", at)?;
        let rule = self
            .rules
            .get(&(entity, id))
            .ok_or_else(|| Error::not_found("rule", id))?;
        if forgotten {
            let s = self.drive_settings(entity);
            let w = rule.weight_at(at, s.rule_half_life_days);
            if w >= s.rule_forget_below {
                return Err(Error::conflict(format!(
                    "{id} weighs {w:.3} at {at}, not below {}: it is not forgotten",
                    s.rule_forget_below
                )));
            }
        }
        self.rules.remove(&(entity, id));
        Ok(())
    }

    pub(super) fn fire_rule(
        &mut self,
        entity: EntityId,
        id: RuleId,
        at: Millis,
        held: bool,
        cause: &str,
    ) -> Result<()> {
        self.check_now("rule", at)?;
        check_text("rule", cause)?;
        let s = self.drive_settings(entity);
        let mut rule = self
            .rules
            .get(&(entity, id))
            .ok_or_else(|| Error::not_found("rule", id))?
            .clone();
        if matches!(rule.trigger, Trigger::At(_)) {
            if rule.checked.is_some() {
                return Err(Error::conflict(format!("{id} was considered already")));
            }
            rule.checked = Some(at);
        }
        if !held {
            let w = rule.weight_at(at, s.rule_half_life_days);
            rule.weight = w;
            rule.since = at;
            rule.uses = rule.uses.saturating_add(1);
            rule.last_used = Some(at);
            let mind = self
                .minds
                .get_mut(&entity)
                .ok_or_else(|| Error::not_found("mind", entity))?;
            match &rule.intent {
                Intent::Drive { drive, amount } => {
                    let moved = |v: f64| (v + amount * w).clamp(0.0, 1.0);
                    match drive {
                        Drive::Task => mind.task_extra = moved(mind.task_extra),
                        Drive::Curiosity => mind.curiosity = moved(mind.curiosity),
                        Drive::SocialDebt | Drive::Intent => {}
                    }
                }
                Intent::Initiate { to, about } => intend(mind, Some(id), Some(*to), about, w, at),
                Intent::Note { text } => intend(mind, Some(id), None, text, w, at),
            }
        }
        self.rules.insert((entity, id), rule);
        Ok(())
    }

    pub(super) fn learn_feedback(
        &mut self,
        entity: EntityId,
        feedback: &Feedback,
        changes: &[WeightChange],
        reason: &str,
        at: Millis,
    ) -> Result<()> {
        self.check_now("feedback", at)?;
        check_text("feedback", reason)?;
        let bad = |reason: String| Err(Error::invalid("feedback", reason));
        if !(feedback.reward.is_finite() && (-1.0..=1.0).contains(&feedback.reward)) {
            return bad(format!(
                "the reward is {}; it is in [-1, 1]",
                feedback.reward
            ));
        }
        if changes.len() > MAX_CHANGES {
            return bad(format!("more than {MAX_CHANGES} weight changes"));
        }
        let s = self.drive_settings(entity);
        let mind = self
            .minds
            .get(&entity)
            .ok_or_else(|| Error::not_found("mind", entity))?;
        if !mind
            .awaiting
            .iter()
            .any(|a| a.to == feedback.from && a.at == feedback.initiated_at)
        {
            return Err(Error::conflict(format!(
                "{entity} awaits no answer from {} to its initiation at {}",
                feedback.from, feedback.initiated_at
            )));
        }
        let mut mind = mind.clone();
        let mut rules: Vec<Rule> = Vec::new();
        for c in changes {
            let same = |a: f64, b: f64| (a - b).abs() <= 1e-9;
            if !c.to.is_finite() {
                return bad(format!("{:?} moves to {}", c.target, c.to));
            }
            match &c.target {
                WeightTarget::Term { to, term } => {
                    if *to != feedback.from || !TERM_NAMES.contains(&term.as_str()) {
                        return bad(format!(
                            "a term toward {to} named {term:?} is not one this feedback moves"
                        ));
                    }
                    let (lo, hi) = LEARNED_FACTOR_RANGE;
                    if !(lo..=hi).contains(&c.to) {
                        return bad(format!("a learned factor is in [{lo}, {hi}], not {}", c.to));
                    }
                    let slot = mind
                        .learned
                        .iter_mut()
                        .find(|l| l.to == *to && l.term == *term);
                    let half_life = s.learned_half_life_days;
                    let now = slot.as_ref().map_or(1.0, |l| l.factor_at(at, half_life));
                    if !same(now, c.from) {
                        return Err(Error::conflict(format!(
                            "{term} toward {to} is {now}, not {}",
                            c.from
                        )));
                    }
                    match slot {
                        Some(l) => (l.factor, l.at) = (c.to, at),
                        None => mind.learned.push(Learned {
                            to: *to,
                            term: term.clone(),
                            factor: c.to,
                            at,
                        }),
                    }
                }
                WeightTarget::Rule { rule } => {
                    let mut r = self
                        .rules
                        .get(&(entity, *rule))
                        .ok_or_else(|| Error::not_found("rule", rule))?
                        .clone();
                    let now = r.weight_at(at, s.rule_half_life_days);
                    if !same(now, c.from) {
                        return Err(Error::conflict(format!(
                            "{rule} weighs {now}, not {}",
                            c.from
                        )));
                    }
                    if !(0.0..=1.0).contains(&c.to) {
                        return bad(format!("a rule's weight is in [0, 1], not {}", c.to));
                    }
                    r.weight = c.to;
                    r.since = at;
                    rules.push(r);
                }
                WeightTarget::Trait { name } => {
                    let Some(now) = mind.personality.get(name) else {
                        return bad(format!("{name:?} is not a personality trait"));
                    };
                    if !same(now, c.from) {
                        return Err(Error::conflict(format!("{name} is {now}, not {}", c.from)));
                    }
                    if !(0.0..=1.0).contains(&c.to) {
                        return bad(format!("a trait is in [0, 1], not {}", c.to));
                    }
                    mind.personality.set(name, c.to);
                }
            }
        }
        mind.awaiting
            .retain(|a| !(a.to == feedback.from && a.at == feedback.initiated_at));
        mind.feedback.push(feedback.clone());
        if mind.feedback.len() > MAX_FEEDBACK_NOTES {
            let extra = mind.feedback.len() - MAX_FEEDBACK_NOTES;
            mind.feedback.drain(..extra);
        }
        self.minds.insert(entity, mind);
        for r in rules {
            self.rules.insert((entity, r.id), r);
        }
        Ok(())
    }

    /// Refuses an event stamped with another time than the world's.
    pub(super) fn check_now(&self, what: &'static str, at: Millis) -> Result<()> {
        if at != self.now {
            return Err(Error::invalid(
                what,
                format!("it happens at the world's time {}, not {at}", self.now),
            ));
        }
        Ok(())
    }

    /// Forgets the rules of a removed entity.
    pub(super) fn remove_rules_of(&mut self, entity: EntityId) {
        let ids: Vec<RuleId> = self.rules_of(entity).map(|r| r.id).collect();
        for id in ids {
            self.rules.remove(&(entity, id));
        }
    }
}

/// Keeps an intention a fired rule or a thought left (one per rule: a rule firing again
/// renews it).
pub(super) fn intend(
    mind: &mut Mind,
    rule: Option<RuleId>,
    to: Option<EntityId>,
    text: &str,
    w: f64,
    at: Millis,
) {
    if rule.is_some() {
        mind.intentions.retain(|i| i.rule != rule);
    }
    mind.intentions.push(Intention {
        rule,
        to,
        text: text.to_owned(),
        weight: w,
        at,
    });
    if mind.intentions.len() > MAX_INTENTIONS {
        let extra = mind.intentions.len() - MAX_INTENTIONS;
        mind.intentions.drain(..extra);
    }
}
