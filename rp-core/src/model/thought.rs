//! Stimuli climbing the processing layers (docs/drives.md, "Layers"; seed 004's "Processing
//! Layers"): the records of a stimulus hoisted past arithmetic and rules to the fast model,
//! and of the thought the smart model had about it.

use super::{Drive, EntityId, Sentiment};
use serde::{Deserialize, Serialize};

/// The longest label of a classified intent, in characters.
pub const MAX_INTENT_LABEL_CHARS: usize = 60;

/// Where a stimulus stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Arithmetic: it raised curiosity (and disturbed or woke a sleeper).
    Reflex,
    /// A rule fired on it.
    Rules,
    /// The fast model classified it (purpose `classify`).
    Classify,
    /// The smart model thought about it (purpose `think`).
    Think,
}

impl Layer {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Reflex => "reflex",
            Layer::Rules => "rules",
            Layer::Classify => "classify",
            Layer::Think => "think",
        }
    }
}

/// What the fast model made of a stimulus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Classification {
    /// What it means, in a few words ("a customer calling", "trouble outside").
    pub intent: String,
    /// Its tone.
    pub sentiment: Sentiment,
    /// How sure the model is, 0–1.
    pub confidence: f64,
    /// How much it matters to the character, 0–1.
    pub significance: f64,
}

/// What a thought does besides being remembered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ThoughtEffect {
    /// Moves task pressure or curiosity by `amount` (−1 to 1).
    Drive {
        /// `task` or `curiosity`.
        drive: Drive,
        /// −1 to 1.
        amount: f64,
    },
    /// The character means to speak to `to` about `about`.
    Initiate {
        /// To whom.
        to: EntityId,
        /// What about.
        about: String,
    },
}
