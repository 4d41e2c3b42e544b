//! The activity record: where an entity is and what it is doing. Always in the prompt, it is
//! the spatial anchor that keeps a character from leaning on a kitchen counter while in a car.

use super::{ContainerId, EntityId, Millis};
use serde::{Deserialize, Serialize};

/// Where an entity is: a container and, optionally, one of its slots.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Position {
    /// The container.
    pub container: ContainerId,
    /// The slot within it (`None`: somewhere in the container, outside any slot).
    #[serde(default)]
    pub slot: Option<String>,
}

/// Something an entity is doing over time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// The verb ("pouring drinks", "sleeping").
    pub verb: String,
    /// When it started (host clock).
    pub started: Millis,
    /// How long it takes, if known.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Whether it can be interrupted.
    #[serde(default = "yes")]
    pub interruptible: bool,
    /// Whether it takes the entity's attention.
    #[serde(default)]
    pub attention_required: bool,
}

fn yes() -> bool {
    true
}

/// The live activity record of an entity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Where it is; `None` for an entity that is nowhere in the world (or carried as an item).
    #[serde(default)]
    pub position: Option<Position>,
    /// Posture ("sitting", "leaning on the bar").
    #[serde(default)]
    pub posture: Option<String>,
    /// What it is doing.
    #[serde(default)]
    pub action: Option<Action>,
    /// Items in hand: a subset of the entity's inventory.
    #[serde(default)]
    pub holding: Vec<EntityId>,
    /// Who or what it is attending to.
    #[serde(default)]
    pub attention: Option<EntityId>,
    /// A short status ("busy", "idle").
    #[serde(default)]
    pub status: Option<String>,
}
