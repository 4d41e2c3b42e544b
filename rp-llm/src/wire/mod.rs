//! The OpenAI chat-completions and embeddings formats: request bodies built from the engine's
//! requests, and answers (a JSON body, or a stream of `chat.completion.chunk` events) read
//! into [`GenerateResult`]s, strictly: anything of the wrong shape is an [`Error::Protocol`]
//! that says what was expected.
//!
//! `request` builds the bodies, `answers` reads what a server sends back, `error_answers`
//! reads what an error answer says and whether it refuses a response format.

mod answers;
mod error_answers;
mod request;

pub(crate) use answers::{StreamState, parse_completion, parse_embeddings};
pub(crate) use error_answers::error_message;
pub(crate) use request::{ChatOptions, Format, chat_body, embed_body};
