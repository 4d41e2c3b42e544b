//! What a machine asks of the host's model: the messages, sampling and tools of a request.
//! What the model gives back and the log records is in [`crate::model`]. Every type
//! here reads and writes JSON with these field names, which is how C and Python hosts see
//! them.

pub use crate::model::{GenerateResult, Purpose, ToolCall};
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

impl GenerateRequest {
    /// This request asked again after `answer` was refused for `problems` (the one retry of a
    /// JSON answer: the state-update pass, a tick's summaries and reflections): the answer
    /// (its first 4,000 characters) and what was wrong are added, and `shape` says what to
    /// answer with (`{"reports": [...]}`).
    pub(crate) fn retried(
        &self,
        answer: &str,
        problems: &[String],
        shape: &str,
    ) -> GenerateRequest {
        let mut request = self.clone();
        let shown: String = answer.chars().take(4000).collect();
        request
            .messages
            .push(ChatMessage::new(Role::Assistant, shown));
        request.messages.push(ChatMessage::new(
            Role::User,
            format!(
                "That answer could not be used:\n- {}\nAnswer again with the whole corrected \
                 JSON object {shape} and nothing else.",
                problems.join("\n- ")
            ),
        ));
        request
    }
}

/// Texts the engine needs vectors for (semantic recall): the host answers with one vector
/// per text, in order, all of the same length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedRequest {
    /// The texts.
    pub texts: Vec<String>,
}
