//! rp-demo: the tavern demo (`examples/tavern.rs`, `cargo run --release --example tavern`)
//! and the parts of it worth a test of their own.
//!
//! The demo plays the tavern of `examples/tavern.toml` in the terminal, with a scripted
//! generator by default. With the `llm` feature (on by default) and `RP_LLM_BASE_URL` set, it
//! plays on an OpenAI-compatible model server through `rp-llm` instead, with the state-update
//! pass on ([`model_options`]); `docs/real-model.md` runs it on a small local model.
//!
//! This library holds what the demo measures and checks:
//!
//! * [`Observed`] wraps the generator and records each call (purpose, answer or error), so a
//!   state-update pass that was retried can be told from one that was not;
//! * [`UpdateTally`] counts the passes by outcome (valid the first time, valid after the
//!   retry, rejected) and groups the reasons of rejected reports by kind ([`reason_kind`]);
//!   [`Stats`] adds turns, replies and tool calls and prints the `--stats` table;
//! * [`check_save`] reopens the save and replays its log, and compares both with the world the
//!   session ended with, byte for byte.

#![warn(missing_docs)]

mod observe;
mod save;
mod tally;

pub use observe::{Call, Observed};
pub use save::{SaveCheck, check_save};
pub use tally::{Reasons, Stats, UpdateTally, reason_kind};

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
