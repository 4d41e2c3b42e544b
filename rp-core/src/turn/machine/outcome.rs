//! What a turn leaves for its host: the response decisions, the replies, the wake-up times
//! asked for, all gathered in the [`TurnOutcome`] that `finish` returns.

use crate::facts::Decision;
use crate::log::JudgedReport;
use crate::model::{EntityId, Millis, SceneId, Seq, UtteranceId};
use crate::turn::prompt::Prompt;
use serde::{Deserialize, Serialize};

/// A character's response decision in a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnDecision {
    /// Who decided.
    pub entity: EntityId,
    /// Whether the input mentioned it.
    pub mentioned: bool,
    /// The decision, with its trace.
    pub decision: Decision,
}

/// A line a character said in the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Who.
    pub speaker: EntityId,
    /// The utterance's id.
    pub utterance: UtteranceId,
    /// What it said.
    pub text: String,
}

/// A `$retry`: the host should start a wake-up turn at `at` (the engine keeps no timers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wake {
    /// Who asked to be woken.
    pub entity: EntityId,
    /// When, on the host clock.
    pub at: Millis,
}

/// What a finished turn did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The head after the commit.
    pub seq: Seq,
    /// The input's utterance (none for a wake-up turn).
    pub input: Option<UtteranceId>,
    /// Every response decision, in the order made.
    pub decisions: Vec<TurnDecision>,
    /// The replies, in the order spoken.
    pub replies: Vec<Reply>,
    /// Responders whose generation came back empty (they stay silent).
    pub silent: Vec<EntityId>,
    /// Wake-up times asked for by `$retry`.
    pub wake: Vec<Wake>,
    /// The prompt each responder was given, when the turn's options asked for them
    /// ([`TurnOptions::outcome_prompts`]); empty otherwise.
    ///
    /// [`TurnOptions::outcome_prompts`]: super::TurnOptions::outcome_prompts
    pub prompts: Vec<Prompt>,
    /// The reports of the state-update pass, each applied or rejected with the reason.
    #[serde(default)]
    pub reports: Vec<JudgedReport>,
    /// The scenes the turn closed, each with a summary per witness (see [`crate::scene`]).
    #[serde(default)]
    pub closed_scenes: Vec<SceneId>,
}
