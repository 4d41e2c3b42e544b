//! rp-core: an embeddable engine that runs LLM-driven characters inside a simulated world.
//!
//! The engine holds all state; the model only renders prose. State is a projection of an
//! append-only event log ([`Event`], [`World::apply`]) kept in one file per save
//! ([`Engine`], [`store::RedbStore`]), with snapshots, branches and rewind.
//!
//! ```
//! use rp_core::Engine;
//! let engine = Engine::in_memory("The Crooked Lantern", 0)?;
//! assert_eq!(engine.world().meta().unwrap().name, "The Crooked Lantern");
//! # Ok::<(), rp_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod cards;
pub mod decay;
pub mod drives;
pub mod edit;
mod engine;
mod error;
pub mod facts;
pub mod graph;
pub mod job;
pub mod json;
pub mod log;
pub mod lore;
pub mod machine;
pub mod memory;
pub mod model;
pub mod query;
pub mod scene;
pub mod skip;
pub mod store;
pub mod story;
pub mod tick;
pub mod turn;
pub mod update;
pub mod worldfile;

pub use engine::RequirementView;
pub use engine::{
    BeliefsAt, BranchInfo, Compaction, Durability, Engine, EngineOptions, HistoryOptions,
    HistoryStats, MemoriesAt, PublishedHead, RewindPreview, RuleView,
};
pub use engine::{Progress, ProgressFn};
pub use error::{Error, ErrorKind, Result};
pub use log::{
    AspectView, BeliefView, Event, FeltView, Message, Named, Speech, World, WorldSettings,
};
pub use model::*;

/// The version of this library.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
