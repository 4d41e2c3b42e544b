//! Rules as data (docs/rules.md; seed 004 §4): what a character does when something happens,
//! with a weight that fades when the rule goes unused and that feedback strengthens or
//! weakens. The log keeps them; [`crate::drives`] reads them; the tick fires them.

use super::{Drive, EntityId, HOUR_MS, Millis, RuleId};
use serde::{Deserialize, Serialize};

/// The most rules one character holds at once.
pub const MAX_RULES: usize = 64;
/// The longest description, intention or note of a rule, in characters.
pub const MAX_RULE_TEXT_CHARS: usize = 300;
/// A new rule's weight when none is given.
pub const DEFAULT_RULE_WEIGHT: f64 = 0.8;
/// The most intentions a character keeps in mind (the oldest go first).
pub const MAX_INTENTIONS: usize = 8;

/// When a rule is considered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Trigger {
    /// Each time the character processes a stimulus of this kind (docs/drives.md, "The
    /// inbox"; `line` for lines heard while asleep).
    Stimulus(String),
    /// Once, at this host time.
    At(Millis),
}

/// What a rule does when it fires. Its strength scales with the rule's weight then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Intent {
    /// Moves a drive by `amount × weight` (task pressure or curiosity; `amount` in [−1, 1]).
    Drive {
        /// `task` or `curiosity`.
        drive: Drive,
        /// In [−1, 1].
        amount: f64,
    },
    /// The character means to speak to `to` about `about`: until it does, its pressure toward
    /// `to` has an `intent` term of the rule's weight (docs/rules.md).
    Initiate {
        /// To whom.
        to: EntityId,
        /// What about, in words ("ask about the letter").
        about: String,
    },
    /// A thought for the character's next prompt, until it speaks.
    Note {
        /// The text.
        text: String,
    },
}

/// Where a rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    /// The world file.
    World,
    /// The host.
    Host,
    /// The model, through a state-update report ("remember to ask Wren about the letter").
    Model,
}

/// A rule a character holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Its id (from the world's counter).
    pub id: RuleId,
    /// Whose rule it is.
    pub owner: EntityId,
    /// What it is, in words.
    pub description: String,
    /// When it is considered.
    pub trigger: Trigger,
    /// A condition in the `$if` language (docs/facts.md), tested when triggered: `content` is
    /// the stimulus's payload, `drives` the owner's drives.
    #[serde(default)]
    pub condition: Option<String>,
    /// What it does.
    pub intent: Intent,
    /// Its weight at `since`, in [0, 1]; it halves every `rule_half_life_days` unused.
    pub weight: f64,
    /// When `weight` was last set: made, fired, or learned from.
    pub since: Millis,
    /// How often it fired.
    #[serde(default)]
    pub uses: u32,
    /// When it last fired.
    #[serde(default)]
    pub last_used: Option<Millis>,
    /// When an `at` rule was considered (it is considered once, fired or not).
    #[serde(default)]
    pub checked: Option<Millis>,
    /// When it was made.
    pub created_at: Millis,
    /// Where it came from.
    pub source: RuleSource,
}

impl Rule {
    /// Its weight at `t`: `weight × 0.5^((t − since) / half_life)` (never more than
    /// `weight`, whatever `t`).
    pub fn weight_at(&self, t: Millis, half_life_days: f64) -> f64 {
        let days = super::elapsed(self.since, t) as f64 / (24.0 * HOUR_MS);
        self.weight * 0.5f64.powf(days / half_life_days)
    }

    /// The first moment its weight falls below `below` (`None`: never, a weight of 0 aside,
    /// which is below at once).
    pub fn forgotten_at(&self, half_life_days: f64, below: f64) -> Option<Millis> {
        if self.weight < below {
            return Some(self.since);
        }
        if below <= 0.0 {
            return None;
        }
        let days = half_life_days * (self.weight / below).log2();
        let at = self.since as f64 + days * 24.0 * HOUR_MS;
        // The moment it is strictly below: one millisecond past the solved crossing.
        Some((at.ceil() as Millis).saturating_add(1))
    }

    /// When an `at` rule is due (once; `None` once considered, and for the other triggers).
    pub fn due_at(&self) -> Option<Millis> {
        match self.trigger {
            Trigger::At(at) if self.checked.is_none() => Some(at),
            _ => None,
        }
    }
}

/// Something a fired rule or a thought left in a character's mind (docs/rules.md): an
/// intention to speak to someone, or a note for its next prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intention {
    /// The rule that fired (`None`: a thought's, docs/drives.md "Layers").
    pub rule: Option<RuleId>,
    /// Whom it means to speak to (`None`: a note).
    pub to: Option<EntityId>,
    /// What, in words.
    pub text: String,
    /// The rule's weight when it fired (a thought's significance): the `intent` term's value
    /// toward `to`.
    pub weight: f64,
    /// When.
    pub at: Millis,
}
