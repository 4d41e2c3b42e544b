//! What the world's fact sheets say about its entities, indexed for the machines that read it:
//! lore activation ([`LoreIndex`]: entities named in what a speaker heard come into its prompt)
//! and entity definitions ([`DefinitionIndex`]: the kinds entities declare, for world queries).
//!
//! Both are derived from the [`crate::World`] and rebuilt when its entities change; the engine
//! keeps one of each between turns. They sit beside [`crate::memory`] and [`crate::graph`],
//! the other readers of the world, below the engine.

mod activation;
pub mod book;
mod definitions;
pub mod timers;

pub(crate) use activation::cut;
pub use activation::{Activated, LoreEntry, LoreIndex, SUMMARY_CHARS};
pub use definitions::{DefinitionIndex, definitions_of};
