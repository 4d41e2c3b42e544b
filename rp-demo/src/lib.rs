//! rp-demo: the tavern demo (`examples/tavern.rs`, `cargo run --release --example tavern`):
//! the session it plays, and the parts of it worth a test of their own.
//!
//! The demo plays the tavern of `examples/tavern.toml` in the terminal, with the scripted lines
//! of `examples/tavern-lines.toml` by default. With the `llm` feature (on by default) and
//! `RP_LLM_BASE_URL` set, it plays on an OpenAI-compatible model server through `rp-llm`
//! instead, with the state-update pass on ([`model_options`]); `docs/real-model.md` runs it on
//! a small local model. The example opens (or creates) the save, chooses the [`Voices`] and
//! hands both to a [`Session`]; this library holds the rest:
//!
//! * [`Session`] plays: each line of the player is a turn of the engine, streamed as it comes;
//!   the commands of [`HELP`] (`/why`, `/prompt`, `/state`, `/go`, `/wait`, `/drives`,
//!   `/memories`, `/beliefs`, `/rules`, `/rewind`, `/branches`, `/switch`) show why the characters did what they did and move
//!   through the story's history; `/wait DURATION` ([`parse_duration`]) plays host time through
//!   rp-core's ticks, so a character left alone long enough speaks first; [`Args`] reads the
//!   command line;
//! * [`Initiations`] is the scripted generator of a `/wait`: a character that speaks first
//!   says the next line of its `initiate` script;
//! * [`ScriptedLines`] are what the characters say without a model, as data, and make the
//!   scripted generator of each turn; [`Voices`] chooses between them and a [`Model`];
//! * [`resolve_entity`] is how a name the player types ("Tobias", "the innkeeper") resolves to
//!   a character;
//! * [`Observed`] wraps the generator and records each call (purpose, answer or error), so a
//!   state-update pass that was retried can be told from one that was not;
//! * [`UpdateTally`] counts the passes by outcome (valid the first time, valid after the
//!   retry, rejected) and groups the reasons of rejected reports by kind ([`reason_kind`]);
//!   [`Stats`] adds turns, replies and tool calls and prints the `--stats` table;
//! * [`check_save`] reopens the save and replays its log, and compares both with the world the
//!   session ended with, byte for byte.

#![warn(missing_docs)]

mod args;
mod beliefs;
mod card;
mod commands;
mod drives;
mod edits;
mod lines;
mod memories;
mod names;
mod observe;
mod print;
mod rules;
mod save;
mod session;
mod tally;
mod voices;

pub use args::{Args, USAGE};
pub use card::bring_card;
pub use commands::HELP;
pub use drives::parse_duration;
pub use lines::{Initiations, Line, ScriptedLines};
pub use names::resolve_entity;
pub use observe::{Call, Observed};
pub use print::clock;
pub use save::{SaveCheck, check_save};
pub use session::{LINE_MS, Session};
pub use tally::{Reasons, Stats, UpdateTally, reason_kind};
pub use voices::{Model, Voices};

use rp_core::turn::TurnOptions;

/// The most tokens of one reply on a model server: a line of dialogue, not a chapter (without
/// a bound, some servers generate until the context is full).
pub const REPLY_MAX_TOKENS: u32 = 160;
/// The most tokens of one state-update answer: room for a dozen reports. An answer cut off
/// here is rejected as "the JSON ends early" and retried once.
pub const UPDATE_MAX_TOKENS: u32 = 600;

/// The turn options of the demo on a model server: `base` with the state-update pass on
/// (`updates.enabled`) and the lengths of replies and of state-update answers bounded
/// ([`REPLY_MAX_TOKENS`], [`UPDATE_MAX_TOKENS`]). Everything else stays as in `base`.
///
/// ```
/// use rp_core::turn::TurnOptions;
/// let options = rp_demo::model_options(TurnOptions::default());
/// assert!(options.updates.enabled && options.tools);
/// assert_eq!(options.sampling.max_tokens, Some(rp_demo::REPLY_MAX_TOKENS));
/// ```
pub fn model_options(base: TurnOptions) -> TurnOptions {
    let mut options = base;
    options.updates.enabled = true;
    options.updates.sampling.max_tokens = Some(UPDATE_MAX_TOKENS);
    options.sampling.max_tokens = Some(REPLY_MAX_TOKENS);
    options.sampling.temperature.get_or_insert(0.7);
    options
}
