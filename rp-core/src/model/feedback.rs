//! Implicit feedback and what a character learns from it (docs/rules.md; seed 004 §6): after
//! it starts a conversation, how the other answered — how soon, how much, in what tone —
//! moves the weights that made it speak. The records here are kept by the log; the arithmetic
//! is [`crate::drives::learn`].

use super::{EntityId, Millis, RuleId};

use serde::{Deserialize, Serialize};

/// The longest reply text kept for classification, in characters.
pub const MAX_REPLY_CHARS: usize = 2_000;
/// The most feedback notes a mind keeps (the oldest go first).
pub const MAX_FEEDBACK_NOTES: usize = 16;
/// The bounds of a learned factor on a term's weight.
pub const LEARNED_FACTOR_RANGE: (f64, f64) = (0.25, 2.0);

/// How an answer sounded, as the fast model classifies it (purpose `classify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sentiment {
    /// Warm, engaged, thankful.
    Positive,
    /// Neither.
    Neutral,
    /// Curt, annoyed, "busy right now".
    Negative,
}

impl Sentiment {
    /// +1, 0 or −1.
    pub fn value(self) -> f64 {
        match self {
            Sentiment::Positive => 1.0,
            Sentiment::Neutral => 0.0,
            Sentiment::Negative => -1.0,
        }
    }

    /// The stable name.
    pub fn name(self) -> &'static str {
        match self {
            Sentiment::Positive => "positive",
            Sentiment::Neutral => "neutral",
            Sentiment::Negative => "negative",
        }
    }
}

/// The first answer to a character's initiation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// When it was said.
    pub at: Millis,
    /// Its length in words.
    pub words: u32,
    /// Its text (the first [`MAX_REPLY_CHARS`] characters).
    pub text: String,
}

/// An initiation waiting for its feedback: made by the mind's owner to `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Awaiting {
    /// The addressee.
    pub to: EntityId,
    /// When the initiation was made.
    pub at: Millis,
    /// Each term's share of the pressure that made it (name, contribution ÷ score).
    pub shares: Vec<(String, f64)>,
    /// The rules whose intentions weighed in it.
    pub rules: Vec<RuleId>,
    /// The answer, once `to` spoke in its hearing.
    pub reply: Option<Reply>,
}

/// What a character read from the answer to its initiation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feedback {
    /// Who answered (or did not).
    pub from: EntityId,
    /// When the initiation was made.
    pub initiated_at: Millis,
    /// How long the answer took (`None`: no answer within `feedback_wait_minutes`).
    pub latency_ms: Option<Millis>,
    /// The answer's length in words.
    pub words: u32,
    /// Its tone, as classified (`None` without an answer).
    pub sentiment: Option<Sentiment>,
    /// The reward in [−1, 1] the weights learn from.
    pub reward: f64,
}

impl Feedback {
    /// In words, for explanations: "did not answer", "answered curtly", "answered warmly".
    pub fn label(&self) -> &'static str {
        if self.latency_ms.is_none() {
            "did not answer"
        } else if self.reward <= -0.3 {
            "answered curtly"
        } else if self.reward >= 0.3 {
            "answered warmly"
        } else {
            "answered"
        }
    }
}

/// A weight that learning moves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum WeightTarget {
    /// The learned factor on a pressure term's weight toward one addressee (timing: learns
    /// fast).
    Term {
        /// The addressee.
        to: EntityId,
        /// `social_debt`, `task`, `curiosity`, `availability` or `intent`.
        term: String,
    },
    /// A rule's weight (moderate).
    Rule {
        /// The rule.
        rule: RuleId,
    },
    /// A personality trait (very slow).
    Trait {
        /// The trait's name.
        name: String,
    },
}

/// One weight's change: from what to what. Applying it checks `from` is what the weight is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightChange {
    /// Which weight.
    pub target: WeightTarget,
    /// Its value before.
    pub from: f64,
    /// Its value after.
    pub to: f64,
}

/// A learned factor on a term's weight toward one addressee. What was learned fades: the
/// factor's distance to 1 halves at each `learned_half_life_days` since it was set, in steps
/// (so the weights are constant between them and the schedule solves crossings exactly).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Learned {
    /// The addressee.
    pub to: EntityId,
    /// The term.
    pub term: String,
    /// The factor when set, in [`LEARNED_FACTOR_RANGE`] (1: nothing learned).
    pub factor: f64,
    /// When it was set.
    pub at: Millis,
}

/// After this many halvings a learned factor counts as 1 (less than 0.4 % of its distance
/// left).
pub const LEARNED_STEPS: i64 = 8;

impl Learned {
    /// The factor at `t`: `1 + (factor − 1) × 0.5^k`, `k` the whole half-lives since it was
    /// set (1 after [`LEARNED_STEPS`]).
    pub fn factor_at(&self, t: Millis, half_life_days: f64) -> f64 {
        let k = self.steps(t, half_life_days);
        if k >= LEARNED_STEPS {
            1.0
        } else {
            1.0 + (self.factor - 1.0) * 0.5f64.powi(k as i32)
        }
    }

    /// How many half-lives have passed at `t`.
    fn steps(&self, t: Millis, half_life_days: f64) -> i64 {
        let step = (half_life_days * 24.0 * 3_600_000.0).max(1.0);
        (super::elapsed(self.at, t) as f64 / step).floor() as i64
    }

    /// The moments after `from` at which the factor steps (at most [`LEARNED_STEPS`]).
    pub fn steps_after(&self, from: Millis, half_life_days: f64) -> Vec<Millis> {
        let step = (half_life_days * 24.0 * 3_600_000.0).max(1.0);
        (self.steps(from, half_life_days) + 1..=LEARNED_STEPS)
            .map(|k| self.at.saturating_add((k as f64 * step).ceil() as Millis))
            .collect()
    }
}
