//! What the turn machine asks of the host's model, and what the host gives back. Every type
//! here reads and writes JSON with these field names, which is how C and Python hosts see
//! them.

use crate::model::EntityId;
use serde::{Deserialize, Serialize};

/// Who a chat message is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions and the world as the speaker knows it.
    System,
    /// The other side of the conversation (for a reply: the scene's transcript).
    User,
    /// The model's own earlier output.
    Assistant,
    /// The result of a tool call.
    Tool,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who it is from.
    pub role: Role,
    /// Its text.
    pub content: String,
    /// For a [`Role::Tool`] message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a [`Role::Assistant`] message: the tool calls it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl ChatMessage {
    /// A message with no tool call id.
    pub fn new(role: Role, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
            tool_call_id: None,
            tool_calls: Vec::new(),
        }
    }
}

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
}

impl Purpose {
    /// The speaker of a reply.
    pub fn speaker(&self) -> Option<EntityId> {
        match self {
            Purpose::Reply { speaker } => Some(*speaker),
            _ => None,
        }
    }
}

/// Sampling parameters. `None` leaves the choice to the host's model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sampling {
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// The most tokens to generate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Texts that end the generation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed, for backends that sample reproducibly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its arguments, as a JSON Schema.
    pub parameters: serde_json::Value,
}

/// A tool call made by the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (answered by a [`Role::Tool`] message with the same id).
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (JSON).
    pub arguments: serde_json::Value,
}

/// One generation the engine needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerateRequest {
    /// Why it is asked.
    pub purpose: Purpose,
    /// The prompt.
    pub messages: Vec<ChatMessage>,
    /// Sampling parameters.
    #[serde(default)]
    pub params: Sampling,
    /// When the answer must be JSON: its schema, so a backend can constrain decoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
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
        const FIELDS: [&str; 5] = [
            "text",
            "tool_calls",
            "prompt_tokens",
            "completion_tokens",
            "model",
        ];
        let value = super::json_value("generation result", json)?;
        if let Some(k) = value
            .as_object()
            .and_then(|o| o.keys().find(|k| !FIELDS.contains(&k.as_str())))
        {
            return Err(crate::Error::invalid(
                "generation result",
                format!("unknown field `{k}`; the fields are {}", FIELDS.join(", ")),
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| crate::Error::invalid("generation result", e.to_string()))
    }

    /// A result with only text.
    pub fn text(text: impl Into<String>) -> GenerateResult {
        GenerateResult {
            text: text.into(),
            ..GenerateResult::default()
        }
    }
}

/// Texts the engine needs vectors for (semantic recall): the host answers with one vector
/// per text, in order, all of the same length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedRequest {
    /// The texts.
    pub texts: Vec<String>,
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
