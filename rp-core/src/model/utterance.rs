//! Utterances: what was said, by whom, heard by whom.

use super::{EntityId, Millis, SceneId, UtteranceId, WitnessSet};
use serde::{Deserialize, Serialize};

/// One line of dialogue. Its witnesses are computed by the engine from positions (or given by
/// the host) and stored with it, so replay never recomputes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Utterance {
    /// The utterance's id.
    pub id: UtteranceId,
    /// Who spoke.
    pub speaker: EntityId,
    /// What was said.
    pub text: String,
    /// When (host clock).
    pub at: Millis,
    /// Who heard it (the speaker included).
    pub witnesses: WitnessSet,
    /// The model that generated it, for assistant turns.
    #[serde(default)]
    pub model: Option<String>,
    /// The open scene it belongs to, if any: applying it adds its witnesses to the scene's
    /// and counts it as the scene's newest line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<SceneId>,
}
