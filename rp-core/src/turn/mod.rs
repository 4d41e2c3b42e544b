//! The turn: a player speaks, the characters who heard decide whether to answer (response
//! control), each responder gets a prompt built from its own point of view, the host's model
//! writes the lines, and the world records it all. See [`machine`] for the sans-IO loop and
//! [`Generate`] for driving it with a model behind a trait.

mod generate;
pub mod machine;
pub mod prompt;
mod scripted;
pub mod tools;

pub use crate::lore::{LoreEntry, LoreIndex};
pub use machine::{
    Reply, Turn, TurnDecision, TurnInput, TurnMachine, TurnOptions, TurnOutcome, Wake,
};
pub use prompt::{
    CharsPerToken, Prompt, PromptOptions, PromptPiece, PromptTemplate, Section, TokenCounter,
};
// The contract of the machines and the records of a generation, where a turn's host finds
// them (they live in `crate::machine` and `crate::model`).
pub use crate::machine::{
    ChatMessage, EmbedRequest, Generate, GenerateRequest, GenerateResult, NoSink, Purpose, Role,
    Sampling, Step, TokenSink, ToolCall, ToolDef, block_on,
};
pub(crate) use machine::{clean_reply, hold_event, reply_prompt};
pub use scripted::ScriptedGenerator;
pub use tools::ToolRun;
