//! What starts a turn ([`TurnInput`]) and how it runs ([`TurnOptions`]), both read from JSON
//! by every host.

use crate::error::{Error, Result};
use crate::machine::Sampling;
use crate::model::{EntityId, Millis};
use crate::scene::SceneOptions;
use crate::turn::prompt::PromptOptions;
use crate::update::UpdateOptions;
use serde::{Deserialize, Serialize};

/// What starts a turn. Reads from JSON with these field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnInput {
    /// Who speaks: a host-controlled entity (the player).
    pub speaker: EntityId,
    /// What it says. Empty: a wake-up turn, in which the characters near the speaker that
    /// heard something since they last spoke reconsider the last line each heard (after a
    /// `$retry`, or when time has passed).
    #[serde(default)]
    pub text: String,
    /// The host clock. The world's clock advances to it (it never goes back).
    pub now: Millis,
    /// Who hears the input, overriding the positions (the speaker is always added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnesses: Option<Vec<EntityId>>,
}

impl TurnInput {
    /// `speaker` says `text` at `now`; the witnesses come from positions.
    pub fn say(speaker: EntityId, text: impl Into<String>, now: Millis) -> TurnInput {
        TurnInput {
            speaker,
            text: text.into(),
            now,
            witnesses: None,
        }
    }

    /// A wake-up turn at `now` around `speaker` (nothing is said).
    pub fn wake(speaker: EntityId, now: Millis) -> TurnInput {
        TurnInput::say(speaker, "", now)
    }

    /// Reads an input from a JSON object (unknown fields refused).
    pub fn from_json(json: &str) -> Result<TurnInput> {
        crate::json::json_object("turn input", json)
    }
}

/// How a turn runs. Reads from JSON with these field names, every one optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnOptions {
    /// Prompt building.
    pub prompt: PromptOptions,
    /// Sampling parameters of reply requests.
    pub sampling: Sampling,
    /// Record each line of the turn as a memory of each witness (its own point of view), so
    /// later recalls can find it once it has left the dialogue window.
    pub remember_dialogue: bool,
    /// Significance of those memories, 0–1.
    pub dialogue_significance: f64,
    /// Ask the host for vectors (semantic recall): one for the input before prompts are built,
    /// and one per remembered line before the turn commits.
    pub semantic: bool,
    /// The most characters that answer in one turn.
    pub max_responders: usize,
    /// The state-update pass after the replies ([`crate::update`]).
    pub updates: UpdateOptions,
    /// Offer replies the engine's tools (`roll_dice`, `roll_effects`): the engine rolls with
    /// the world's generator and asks again with the results, at most
    /// [`crate::turn::tools::MAX_TOOL_ROUNDS`] times per reply.
    pub tools: bool,
    /// When the turn opens and closes scenes ([`crate::scene`]): lines join the current scene
    /// of the speaker's container (one is opened if there is none), and the scenes the turn
    /// finds due are closed, with a summary per witness, before the replies.
    pub scenes: SceneOptions,
    /// Keep each responder's prompt in the outcome ([`TurnOutcome::prompts`]). Off by
    /// default: a prompt is kilobytes, and most hosts never read it after the turn
    /// ([`TurnMachine::prompts`] shows them while the turn runs).
    ///
    /// [`TurnOutcome::prompts`]: super::TurnOutcome::prompts
    /// [`TurnMachine::prompts`]: super::TurnMachine::prompts
    pub outcome_prompts: bool,
}

impl Default for TurnOptions {
    fn default() -> Self {
        TurnOptions {
            prompt: PromptOptions::default(),
            sampling: Sampling::default(),
            remember_dialogue: true,
            dialogue_significance: 0.3,
            semantic: false,
            max_responders: 8,
            updates: UpdateOptions::default(),
            tools: true,
            scenes: SceneOptions::default(),
            outcome_prompts: false,
        }
    }
}

impl TurnOptions {
    /// Reads options from a JSON object (every field optional, unknown fields refused).
    pub fn from_json(json: &str) -> Result<TurnOptions> {
        crate::json::json_object("turn options", json)
    }

    pub(crate) fn check(&self) -> Result<()> {
        self.prompt.check()?;
        self.updates.check()?;
        self.scenes.check()?;
        self.prompt.recall.check()?;
        if !(0.0..=1.0).contains(&self.dialogue_significance) {
            return Err(Error::invalid(
                "turn options",
                "dialogue_significance must be within 0–1",
            ));
        }
        if self.max_responders == 0 {
            return Err(Error::invalid(
                "turn options",
                "max_responders must be at least 1",
            ));
        }
        Ok(())
    }
}
