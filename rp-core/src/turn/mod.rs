//! The turn: a player speaks, the characters who heard decide whether to answer (response
//! control), each responder gets a prompt built from its own point of view, the host's model
//! writes the lines, and the world records it all. See [`machine`] for the sans-IO loop and
//! [`Generate`] for driving it with a model behind a trait.

mod generate;
pub mod lore;
pub mod machine;
pub mod prompt;
mod request;
mod scripted;
pub mod tools;

pub use generate::{Generate, NoSink, TokenSink, block_on};
pub use lore::{LoreEntry, LoreIndex};
pub use machine::{
    Reply, Step, Turn, TurnDecision, TurnInput, TurnMachine, TurnOptions, TurnOutcome, Wake,
};
pub use prompt::{
    CharsPerToken, Prompt, PromptOptions, PromptPiece, PromptTemplate, Section, TokenCounter,
};
pub use request::{
    ChatMessage, EmbedRequest, GenerateRequest, GenerateResult, Purpose, Role, Sampling, ToolCall,
    ToolDef,
};
pub use scripted::ScriptedGenerator;
pub use tools::ToolRun;

/// `json` parsed, when it is a JSON object (serde would also read a struct from an array).
pub(crate) fn json_value(what: &'static str, json: &str) -> crate::Result<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| crate::Error::invalid(what, format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(crate::Error::invalid(what, "expected a JSON object"));
    }
    Ok(value)
}

/// A `T` read from a JSON object (see [`json_value`]).
pub(crate) fn json_object<T: serde::de::DeserializeOwned>(
    what: &'static str,
    json: &str,
) -> crate::Result<T> {
    serde_json::from_value(json_value(what, json)?)
        .map_err(|e| crate::Error::invalid(what, e.to_string()))
}
