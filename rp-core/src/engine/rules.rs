//! The host's calls for rules (docs/rules.md): giving a character a rule, taking it away,
//! and reading its rules with their weights at any time. The JSON form of a rule is read by
//! the log ([`World::rule_from_value`]), once, for Rust, C, Python and world files alike.

use super::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::model::{EntityId, Millis, Rule, RuleId, RuleSource};
use serde::Serialize;

/// A rule as read at a time: the rule, its weight then, and when it will be forgotten unused.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RuleView {
    /// The rule as the log keeps it (`weight` as of `since`).
    pub rule: Rule,
    /// Its weight at the time asked.
    pub weight_now: f64,
    /// When its weight falls below `rule_forget_below` if it is not used before.
    pub forgotten_at: Option<Millis>,
}

impl Engine {
    /// Gives `owner` a rule at `now`, read from its JSON form (docs/rules.md):
    ///
    /// ```json
    /// {"description": "ask Wren about the letter", "on": {"day": 1, "hour": 18},
    ///  "intent": {"initiate": "Wren", "about": "the letter"}, "weight": 0.8}
    /// ```
    ///
    /// Returns its id. Refused, changing nothing, when the JSON is not a rule, a name is
    /// unknown, the condition does not compile, a value is out of range, `owner` is not one
    /// of the engine's characters or holds too many rules, or `now` is before the clock.
    pub fn add_rule(&mut self, owner: EntityId, rule: &str, now: Millis) -> Result<RuleId> {
        let value = crate::json::json_value("rule", rule)?;
        self.add_rule_value(owner, value, now)
    }

    /// [`Engine::add_rule`] of a JSON value already parsed (Python's dicts).
    pub fn add_rule_value(
        &mut self,
        owner: EntityId,
        rule: serde_json::Value,
        now: Millis,
    ) -> Result<RuleId> {
        check_now(self.world(), now, "add_rule")?;
        let id = RuleId(self.world().next_id());
        let rule = self
            .world()
            .rule_from_value(owner, rule, id, now, RuleSource::Host)?;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::RuleAdded { rule });
        self.append(events)?;
        Ok(id)
    }

    /// Takes rule `id` away at `now` (recorded; a rewind brings it back). An unknown id is a
    /// `not_found` error.
    pub fn remove_rule(&mut self, id: RuleId, now: Millis) -> Result<()> {
        check_now(self.world(), now, "remove_rule")?;
        let owner = self
            .world()
            .rules()
            .find(|r| r.id == id)
            .map(|r| r.owner)
            .ok_or_else(|| Error::not_found("rule", id.0))?;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::RuleRemoved {
            entity: owner,
            rule: id,
            at: now,
            forgotten: false,
        });
        self.append(events)?;
        Ok(())
    }

    /// The rules `entity` holds, with their weights at `now` (any time may be asked; changes
    /// nothing). An unknown entity is a `not_found` error.
    pub fn rules(&self, entity: EntityId, now: Millis) -> Result<Vec<RuleView>> {
        let world = self.world();
        if world.entity(entity).is_none() {
            return Err(Error::not_found("entity", entity.0));
        }
        let s = world.drive_settings(entity);
        Ok(world
            .rules_of(entity)
            .map(|r| RuleView {
                rule: r.clone(),
                weight_now: r.weight_at(now, s.rule_half_life_days),
                forgotten_at: r.forgotten_at(s.rule_half_life_days, s.rule_forget_below),
            })
            .collect())
    }
}

fn check_now(world: &World, now: Millis, what: &str) -> Result<()> {
    if now < world.now() {
        return Err(Error::invalid(
            "time",
            format!(
                "{what}: now ({now}) is before the world's clock ({}); time never goes back",
                world.now()
            ),
        ));
    }
    Ok(())
}
