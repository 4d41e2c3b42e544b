//! The event log and its projection: the [`Event`] kinds, [`World`] and `apply`, and the
//! stored record format.

mod apply;
mod apply_story;
mod belief_reads;
mod beliefs;
mod chunks;
pub mod codec;
mod compress;
mod edge_rows;
mod event;
mod event_json;
mod fading;
mod hearing;
mod index;
mod layered;
mod memory_rows;
mod minds;
mod names;
mod pair_rows;
mod pairs;
mod requirements;
mod respond;
mod rules;
pub mod table;
mod world;

pub(crate) use apply::TERM_NAMES;
pub(crate) use apply::check_name;
pub use apply::{MAX_NAME_CHARS, MAX_TEXT_BYTES, MAX_WORLD_FILE_BYTES};
pub use apply_story::transition_error;
pub use belief_reads::{BeliefChange, BeliefMaps, BeliefReads, SettingsReach, settings_reach};
pub(crate) use beliefs::beliefs_read;
pub use beliefs::{AspectView, BeliefView, FeltView};
pub use codec::FORMAT_VERSION;
pub use event::{Event, JudgedReport, Touched, WorldSettings};
pub use event_json::LoggedEvent;
pub use hearing::Speech;
pub use names::Named;
pub use requirements::{DECISION_REQUIRED, announcement_text};
pub(crate) use respond::decision_event;
pub use respond::{Message, hour_of};
pub(crate) use rules::compile_condition;
pub use world::{World, WorldFileBase, WorldMeta};
