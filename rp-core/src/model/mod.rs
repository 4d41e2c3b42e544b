//! The world model (DESIGN §3): ids, entities, containers, activities, directed edges, group
//! nodes, memories, scoped events, threads, scenes and utterances. Plain serialisable data; the
//! rules that change them live in [`crate::log`].

mod activity;
mod container;
mod edge;
mod effect;
mod entity;
mod facts;
mod group;
mod ids;
mod memory;
mod story;
mod utterance;

pub use activity::{Action, Activity, Position};
pub use container::{Container, ContainerProperties, Slot};
pub use edge::Edge;
pub use effect::{
    Effect, GistPromotion, ItemPromotion, KnowledgePromotion, Promotion, SummaryPromotion,
};
pub use entity::{Entity, EntityState};
pub use facts::FactSheet;
pub use group::{Group, MIN_GROUP_SIZE};
pub use ids::{
    ContainerId, EntityId, GroupId, MemoryId, Millis, QueryId, SceneId, ScopedEventId, Seq,
    ThreadId, UtteranceId,
};
pub use memory::{DecayStage, Memory, MemoryKind, WitnessSet};
pub use story::{EventStatus, Scene, ScopedEvent, Skip, SystemLine, Thread, ThreadStatus};
pub use utterance::Utterance;
