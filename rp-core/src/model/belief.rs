//! What a character believes about another person (docs/beliefs.md, seed 004 §9 "People
//! Model"): the other's mood, energy, availability, traits and feelings about third persons,
//! each held with a confidence that halves every half-life since it was observed. The log
//! records observations ([`BeliefObservation`]); the world keeps the latest of each aspect per
//! (observer, observed) pair ([`PersonBelief`]); confidence at a time is computed, never stored.

use super::{EntityId, Millis};
use serde::{Deserialize, Serialize};

/// The most traits a character keeps believed about one person; the oldest observed go first.
pub const MAX_BELIEVED_TRAITS: usize = 16;

/// The most feelings about third persons a character keeps believed of one person; the oldest
/// observed go first.
pub const MAX_BELIEVED_FEELINGS: usize = 32;

/// The longest believed text (a mood, a trait, a feeling's words), in characters.
pub const MAX_BELIEF_TEXT_CHARS: usize = 200;

/// Where a belief comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BeliefSource {
    /// The observer saw or heard it for itself.
    Observed,
    /// Someone told the observer (the teller's id).
    ToldBy(EntityId),
    /// The observer worked it out.
    Inferred,
    /// The host said so.
    Host,
}

/// One believed aspect: its value, the confidence it was observed with, when and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Held<T> {
    /// What is believed.
    pub value: T,
    /// The confidence when observed, in [0, 1].
    pub confidence: f64,
    /// When it was observed (host clock).
    pub at: Millis,
    /// Where it comes from.
    pub source: BeliefSource,
}

impl<T> Held<T> {
    /// The confidence at `now`: `confidence × 0.5^((now − at) / half_life)`; at or before `at`,
    /// the confidence observed.
    pub fn confidence_at(&self, now: Millis, half_life_hours: f64) -> f64 {
        decayed(self.confidence, self.at, now, half_life_hours)
    }
}

/// `base × 0.5^((now − at) / half_life)`, hours of host time; `base` at or before `at`.
pub fn decayed(base: f64, at: Millis, now: Millis, half_life_hours: f64) -> f64 {
    if now <= at || half_life_hours.is_nan() || half_life_hours <= 0.0 {
        return base;
    }
    let hours = super::elapsed(at, now) as f64 / super::HOUR_MS;
    base * 0.5f64.powf(hours / half_life_hours)
}

/// How a person feels about a third: sentiment in [-1, 1] and, optionally, in words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feeling {
    /// About whom.
    pub toward: EntityId,
    /// From −1 (hatred) to 1 (love).
    pub sentiment: f64,
    /// In words ("resents her"); may be empty.
    #[serde(default)]
    pub text: String,
}

/// What one character believes about one other person: each aspect the latest observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PersonBelief {
    /// The other's mood, in prose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood: Option<Held<String>>,
    /// The other's energy, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<Held<f64>>,
    /// The other's availability, in [0, 1] (0 away, 1 present and attentive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Held<f64>>,
    /// The other's traits, each observed on its own; oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traits: Vec<Held<String>>,
    /// How the other feels about third persons, one per third person; oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feelings: Vec<Held<Feeling>>,
}

impl PersonBelief {
    /// Whether nothing is believed.
    pub fn is_empty(&self) -> bool {
        self.mood.is_none()
            && self.energy.is_none()
            && self.availability.is_none()
            && self.traits.is_empty()
            && self.feelings.is_empty()
    }
}

/// An observation: what `observer` came to believe about `about` at `at`, with what confidence
/// and from what source. Every aspect is optional; those given replace what was believed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeliefObservation {
    /// Who believes.
    pub observer: EntityId,
    /// About whom.
    pub about: EntityId,
    /// Their mood, in prose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood: Option<String>,
    /// Their energy, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<f64>,
    /// Their availability, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<f64>,
    /// Traits (each added, or refreshed if already believed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traits: Vec<String>,
    /// How they feel about third persons (each replaces the one toward the same person).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feelings: Vec<Feeling>,
    /// The confidence of the observation, in [0, 1].
    pub confidence: f64,
    /// Where it comes from.
    pub source: BeliefSource,
    /// When (host clock).
    pub at: Millis,
}
