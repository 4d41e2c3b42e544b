//! What a generation leaves in the log: why it was asked ([`Purpose`]), what the host's model
//! answered ([`GenerateResult`], with the [`ToolCall`]s it made) and each tool call as the
//! engine ran it ([`ToolRun`]). These are records, so they sit with the rest of the model: the
//! machines that ask for generations ([`crate::machine`]) and the log that records them both
//! build on them. Every type reads and writes JSON with these field names, which is how C and
//! Python hosts see them.

use crate::model::EntityId;
use serde::{Deserialize, Serialize};

/// Why a request is made, so a host can send cheap work to a fast model and the rest to a
/// smart one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Purpose {
    /// The next line of `speaker`.
    Reply {
        /// Who speaks.
        speaker: EntityId,
    },
    /// A state-update pass (what changed after an utterance).
    StateUpdate,
    /// A summary (scene compression).
    Summary,
    /// A question about the world.
    Query,
    /// The first line of a conversation `speaker` starts on its own (docs/drives.md): hosts
    /// route it like a reply, usually to their smart model.
    Initiate {
        /// Who speaks first.
        speaker: EntityId,
    },
    /// A character's reflection on its own memories (docs/memory.md): pure JSON; hosts route
    /// it to their smart model.
    Reflect {
        /// Who reflects.
        speaker: EntityId,
    },
    /// A short classification for a character (docs/rules.md): the tone of an answer to its
    /// initiation, pure JSON; hosts route it to their fast model.
    Classify {
        /// For whom.
        speaker: EntityId,
    },
    /// A character thinking over what the fast model hoisted to it (docs/drives.md,
    /// "Layers"): pure JSON; hosts route it to their smart model.
    Think {
        /// Who thinks.
        speaker: EntityId,
    },
}

impl Purpose {
    /// The purpose's stable name: `reply`, `state_update`, `summary`, `query`, `initiate`,
    /// `reflect`, `classify`, `think`.
    pub fn name(&self) -> &'static str {
        match self {
            Purpose::Reply { .. } => "reply",
            Purpose::StateUpdate => "state_update",
            Purpose::Summary => "summary",
            Purpose::Query => "query",
            Purpose::Initiate { .. } => "initiate",
            Purpose::Reflect { .. } => "reflect",
            Purpose::Classify { .. } => "classify",
            Purpose::Think { .. } => "think",
        }
    }

    /// The purpose a host names when scripting answers by purpose (whoever speaks: the
    /// speaker of `reply` and `initiate` is not read).
    pub fn from_name(name: &str) -> crate::error::Result<Purpose> {
        let any = EntityId(0);
        Ok(match name {
            "reply" => Purpose::Reply { speaker: any },
            "initiate" => Purpose::Initiate { speaker: any },
            "reflect" => Purpose::Reflect { speaker: any },
            "classify" => Purpose::Classify { speaker: any },
            "think" => Purpose::Think { speaker: any },
            "state_update" => Purpose::StateUpdate,
            "summary" => Purpose::Summary,
            "query" => Purpose::Query,
            other => {
                return Err(crate::error::Error::Invalid {
                    what: "purpose",
                    reason: format!(
                        "{other:?} is not a purpose; use \"reply\", \"initiate\", \"reflect\", \"classify\", \"think\", \"state_update\", \"summary\" or \"query\""
                    ),
                });
            }
        })
    }

    /// The speaker of a reply.
    pub fn speaker(&self) -> Option<EntityId> {
        match self {
            Purpose::Reply { speaker }
            | Purpose::Initiate { speaker }
            | Purpose::Reflect { speaker }
            | Purpose::Classify { speaker }
            | Purpose::Think { speaker } => Some(*speaker),
            _ => None,
        }
    }
}

/// A tool call made by the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (answered by a `tool` message (`crate::machine::Role::Tool`) with the same id).
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (JSON).
    pub arguments: serde_json::Value,
}

/// What the host's model produced. Recorded in the log as it is given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GenerateResult {
    /// The generated text.
    pub text: String,
    /// Tool calls, if the model made any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Prompt tokens, when the backend reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    /// Generated tokens, when the backend reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u32>,
    /// The model that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl GenerateResult {
    /// Reads a result from JSON: an object with the fields above, each optional; an unknown
    /// field (a typo such as `"txt"`, which would otherwise read as an empty, silent reply) is
    /// refused.
    pub fn from_json(json: &str) -> crate::Result<GenerateResult> {
        GenerateResult::from_json_value(crate::json::json_value("generation result", json)?)
    }

    /// [`GenerateResult::from_json`] of a JSON value a host holds already (a Python dict).
    pub fn from_json_value(value: serde_json::Value) -> crate::Result<GenerateResult> {
        const FIELDS: [&str; 5] = [
            "text",
            "tool_calls",
            "prompt_tokens",
            "completion_tokens",
            "model",
        ];
        if let Some(k) = value
            .as_object()
            .and_then(|o| o.keys().find(|k| !FIELDS.contains(&k.as_str())))
        {
            return Err(crate::Error::invalid(
                "generation result",
                format!("unknown field `{k}`; the fields are {}", FIELDS.join(", ")),
            ));
        }
        crate::json::from_value("generation result", value)
    }

    /// A result with only text.
    pub fn text(text: impl Into<String>) -> GenerateResult {
        GenerateResult {
            text: text.into(),
            ..GenerateResult::default()
        }
    }
}

/// One tool call as run: its arguments and result (JSON) and the draws it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolRun {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, as the model gave them (JSON).
    pub arguments: String,
    /// What the tool answered (JSON); an `{"error": …}` for a bad call.
    pub result: String,
    /// The uniform draws it took from the world's generator, in order.
    #[serde(default)]
    pub draws: Vec<f64>,
}

#[cfg(test)]
mod tests {
    use super::GenerateResult;

    #[test]
    fn results_read_from_json_refuse_unknown_fields() {
        let r =
            GenerateResult::from_json(r#"{"text": "Evening.", "model": "m", "prompt_tokens": 3}"#)
                .unwrap();
        assert_eq!((r.text.as_str(), r.prompt_tokens), ("Evening.", Some(3)));
        assert_eq!(
            GenerateResult::from_json("{}").unwrap(),
            GenerateResult::default()
        );
        for bad in [r#"{"txt": "x"}"#, "[]", "\"x\"", "{", r#"{"text": 3}"#] {
            let e = GenerateResult::from_json(bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Invalid, "{bad}");
        }
        assert!(
            GenerateResult::from_json(r#"{"txt": "x"}"#)
                .unwrap_err()
                .to_string()
                .contains("txt")
        );
    }
}
