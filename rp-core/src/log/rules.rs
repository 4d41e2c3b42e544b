//! Reading the rules characters hold (docs/rules.md), and the one reading of a rule as the
//! host, a world file and the model give it in JSON: the same rule, the same checks, the same
//! errors from Rust, C, Python, world files and state-update reports.

use super::{Named, World};
use crate::error::{Error, Result};
use crate::facts::{Condition, RegexCache};
use crate::model::*;
use serde::Deserialize;

impl World {
    /// The rules `owner` holds, in id order.
    pub fn rules_of(&self, owner: EntityId) -> impl Iterator<Item = &Rule> + '_ {
        self.rules
            .range((owner, RuleId(0))..=(owner, RuleId(u64::MAX)))
            .map(|(_, r)| r)
    }

    /// Rule `id` of `owner`.
    pub fn rule(&self, owner: EntityId, id: RuleId) -> Option<&Rule> {
        self.rules.get(&(owner, id))
    }

    /// Every rule, by owner then id.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> + '_ {
        self.rules.values()
    }

    /// The learned factor on `entity`'s `term` toward `to` at `t` (1 when nothing was learned;
    /// docs/rules.md).
    pub fn learned_factor(&self, entity: EntityId, to: EntityId, term: &str, t: Millis) -> f64 {
        let half_life = self.drive_settings(entity).learned_half_life_days;
        self.mind(entity)
            .and_then(|m| m.learned.iter().find(|l| l.to == to && l.term == term))
            .map_or(1.0, |l| l.factor_at(t, half_life))
    }

    /// Reads a rule of `owner` from its JSON form (docs/rules.md, "Writing a rule"), made at
    /// `now` with id `id`: names resolved, the condition compiled, every value checked.
    ///
    /// ```json
    /// {"description": "ask Wren about the letter",
    ///  "on": {"day": 1, "hour": 18},
    ///  "intent": {"initiate": "Wren", "about": "the letter"},
    ///  "condition": "drives.energy > 0.3", "weight": 0.8}
    /// ```
    pub fn rule_from_value(
        &self,
        owner: EntityId,
        value: serde_json::Value,
        id: RuleId,
        now: Millis,
        source: RuleSource,
    ) -> Result<Rule> {
        if !value.is_object() {
            return Err(Error::invalid("rule", "a rule is a JSON object"));
        }
        let input: RuleInput = crate::json::from_value("rule", value)?;
        let trigger = input.on.trigger(now)?;
        let intent = input.intent.resolve(self)?;
        let rule = Rule {
            id,
            owner,
            description: input.description,
            trigger,
            condition: input.condition,
            intent,
            weight: input.weight.unwrap_or(DEFAULT_RULE_WEIGHT),
            since: now,
            uses: 0,
            last_used: None,
            checked: None,
            created_at: now,
            source,
        };
        self.check_rule(&rule)?;
        Ok(rule)
    }

    /// Whether `rule` can be held by its owner: an engine character with room for it, a known
    /// stimulus kind, a condition that compiles, an intent within range, texts within
    /// [`MAX_RULE_TEXT_CHARS`], a weight in [0, 1].
    pub(super) fn check_rule(&self, rule: &Rule) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid("rule", reason));
        let owner = self.get_entity_ref(rule.owner)?;
        let Some(mind) = self.mind(rule.owner) else {
            return bad(format!(
                "{} has no drives (host-controlled or only mentioned); only the engine's characters hold rules",
                owner.name
            ));
        };
        if self.rules_of(rule.owner).count() >= MAX_RULES {
            return bad(format!(
                "{} already holds {MAX_RULES} rules; remove one first",
                owner.name
            ));
        }
        check_rule_text("description", &rule.description)?;
        if !(rule.weight.is_finite() && (0.0..=1.0).contains(&rule.weight)) {
            return bad(format!("weight is {}; it is in [0, 1]", rule.weight));
        }
        if let Trigger::Stimulus(kind) = &rule.trigger
            && !DriveSettings::knows_kind(kind, &self.drive_config, Some(&mind.config))
        {
            return bad(format!(
                "{kind:?} is not a stimulus kind; known: {}",
                DriveSettings::kinds(&self.drive_config, Some(&mind.config)).join(", ")
            ));
        }
        if let Some(source) = &rule.condition {
            if source.chars().count() > MAX_RULE_TEXT_CHARS {
                return bad(format!(
                    "the condition is longer than {MAX_RULE_TEXT_CHARS} characters"
                ));
            }
            compile_condition(self, rule.owner, source)?;
        }
        match &rule.intent {
            Intent::Drive { drive, amount } => {
                if !matches!(drive, Drive::Task | Drive::Curiosity) {
                    return bad(format!(
                        "a rule moves task or curiosity, not {}; social debt follows contact, and an intention is {{\"initiate\": who}}",
                        drive.name()
                    ));
                }
                if !(amount.is_finite() && (-1.0..=1.0).contains(amount)) {
                    return bad(format!("the amount is {amount}; it is in [-1, 1]"));
                }
            }
            Intent::Initiate { to, about } => {
                self.get_entity_ref(*to)?;
                if *to == rule.owner {
                    return bad("a character initiates with someone else".into());
                }
                check_rule_text("about", about)?;
            }
            Intent::Note { text } => check_rule_text("note", text)?,
        }
        Ok(())
    }

    fn get_entity_ref(&self, id: EntityId) -> Result<&Entity> {
        self.entity(id)
            .ok_or_else(|| Error::not_found("entity", id))
    }
}

/// `source` compiled as `owner`'s sheet would read it.
pub(crate) fn compile_condition(world: &World, owner: EntityId, source: &str) -> Result<Condition> {
    let mut regexes = RegexCache::default();
    match world.sheet(owner) {
        Some(sheet) => Condition::compile_for(source, sheet, &mut regexes),
        None => Condition::compile(source, &mut regexes),
    }
    .map_err(|e| e.to_error(source, "rule condition"))
}

fn check_rule_text(what: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::invalid("rule", format!("the {what} is empty")));
    }
    if text.chars().count() > MAX_RULE_TEXT_CHARS {
        return Err(Error::invalid(
            "rule",
            format!("the {what} is longer than {MAX_RULE_TEXT_CHARS} characters"),
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleInput {
    description: String,
    on: OnInput,
    intent: IntentInput,
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    weight: Option<f64>,
}

/// When: `{"stimulus": kind}`, `{"at": ms}`, `{"in_hours": h}` or `{"day": d, "hour": h}`
/// (`d` days after today, at hour `h`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OnInput {
    #[serde(default)]
    stimulus: Option<String>,
    #[serde(default)]
    at: Option<Millis>,
    #[serde(default)]
    in_hours: Option<f64>,
    #[serde(default)]
    day: Option<u32>,
    #[serde(default)]
    hour: Option<f64>,
}

impl OnInput {
    fn trigger(&self, now: Millis) -> Result<Trigger> {
        let bad = |reason: &str| Err(Error::invalid("rule", format!("on: {reason}")));
        match (
            self.stimulus.as_ref(),
            self.at,
            self.in_hours,
            self.day,
            self.hour,
        ) {
            (Some(kind), None, None, None, None) => Ok(Trigger::Stimulus(kind.clone())),
            (None, Some(at), None, None, None) => Ok(Trigger::At(at)),
            (None, None, Some(h), None, None) => {
                if !(h.is_finite() && h > 0.0 && h <= 24.0 * 366.0) {
                    return bad("in_hours is a number of hours in (0, 8784]");
                }
                Ok(Trigger::At(now.saturating_add((h * HOUR_MS) as Millis)))
            }
            (None, None, None, day, Some(hour)) => {
                let day = day.unwrap_or(0);
                if !(0.0..24.0).contains(&hour) || day > 366 {
                    return bad("day is 0 to 366 and hour in [0, 24)");
                }
                // Saturating: `now` may be anywhere in `Millis` (a damaged save, a host's clock).
                let today = now.saturating_sub(now.rem_euclid(24 * 3_600_000));
                let at = today
                    .saturating_add(i64::from(day) * 24 * 3_600_000)
                    .saturating_add((hour * HOUR_MS) as Millis);
                if at < now {
                    return bad(&format!("day {day} at hour {hour} has passed"));
                }
                Ok(Trigger::At(at))
            }
            _ => bad(
                "give one of {\"stimulus\": kind}, {\"at\": ms}, {\"in_hours\": h}, {\"day\": d, \"hour\": h}",
            ),
        }
    }
}

/// What: `{"initiate": who, "about": text}`, `{"note": text}` or
/// `{"drive": "task"|"curiosity", "amount": x}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentInput {
    #[serde(default)]
    initiate: Option<WhoInput>,
    #[serde(default)]
    about: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    drive: Option<Drive>,
    #[serde(default)]
    amount: Option<f64>,
}

/// An entity as JSON names it: an id, or a key, name or alias.
#[derive(Deserialize)]
#[serde(untagged)]
enum WhoInput {
    Id(u64),
    Text(String),
}

impl IntentInput {
    fn resolve(self, world: &World) -> Result<Intent> {
        match (
            self.initiate,
            self.about,
            self.note,
            self.drive,
            self.amount,
        ) {
            (Some(who), about, None, None, None) => Ok(Intent::Initiate {
                to: world.resolve_entity(match &who {
                    WhoInput::Id(id) => Named::Id(*id),
                    WhoInput::Text(t) => Named::Text(t),
                })?,
                about: about.unwrap_or_else(|| "what is on its mind".to_owned()),
            }),
            (None, None, Some(text), None, None) => Ok(Intent::Note { text }),
            (None, None, None, Some(drive), Some(amount)) => Ok(Intent::Drive { drive, amount }),
            _ => Err(Error::invalid(
                "rule",
                "intent: give one of {\"initiate\": who, \"about\": text}, {\"note\": text}, {\"drive\": \"task\" or \"curiosity\", \"amount\": x}",
            )),
        }
    }
}

/// The rules map in a snapshot: the rules in order (their keys are in them).
pub(super) mod rule_map {
    use crate::model::{EntityId, Rule, RuleId};
    use serde::{Deserialize, Deserializer, Serializer};

    type Map = imbl::OrdMap<(EntityId, RuleId), Rule>;

    pub fn serialize<S: Serializer>(map: &Map, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.values())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        let items: Vec<Rule> = Vec::deserialize(d)?;
        Ok(items.into_iter().map(|r| ((r.owner, r.id), r)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_and_hour_at_the_ends_of_the_clock_do_not_overflow() {
        // The world's now may be anywhere in `Millis` (a damaged save, a host's clock far
        // off): the day's start and the moment asked for saturate rather than overflow.
        let on: OnInput = serde_json::from_str(r#"{"day": 366, "hour": 23.5}"#).unwrap();
        let Ok(Trigger::At(at)) = on.trigger(Millis::MIN) else {
            panic!("a day ahead of the earliest now is a moment");
        };
        assert!(at > Millis::MIN);
        let on: OnInput = serde_json::from_str(r#"{"day": 0, "hour": 0}"#).unwrap();
        let Err(e) = on.trigger(Millis::MAX) else {
            panic!("the day's start has passed");
        };
        assert!(e.to_string().contains("has passed"), "{e}");
        let on: OnInput = serde_json::from_str(r#"{"day": 1, "hour": 0}"#).unwrap();
        assert!(matches!(
            on.trigger(Millis::MAX),
            Ok(Trigger::At(Millis::MAX))
        ));
    }
}
