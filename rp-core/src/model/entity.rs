//! Entities: characters, the player, items. Everything that can speak, be spoken of or be held.

use super::{Activity, EntityId, FactSheet};
use serde::{Deserialize, Serialize};

/// An entity of the world. Players are entities too, marked [`Entity::host_controlled`]: the
/// engine never generates their lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    /// The entity's id.
    pub id: EntityId,
    /// A stable key given by a world file (`id = "mira"`); `None` for entities made at run time.
    /// World-file patches match entities by this key.
    #[serde(default)]
    pub key: Option<String>,
    /// The display name, unique in the world (case-insensitive).
    pub name: String,
    /// Other names the entity answers to.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The fact sheet, one fact per line (the format of docs/facts.md, `$if` lines included).
    #[serde(default)]
    pub facts: FactSheet,
    /// True for entities the host speaks for (the player).
    #[serde(default)]
    pub host_controlled: bool,
    /// Mood, goals and status.
    #[serde(default)]
    pub state: EntityState,
    /// Where it is and what it does.
    #[serde(default)]
    pub activity: Activity,
    /// Entities (items) it carries. An item in an inventory has no position of its own.
    #[serde(default)]
    pub inventory: Vec<EntityId>,
    /// True for a person who is only talked about (a mother, a boss: docs/beliefs.md): it has
    /// no place, no mind and no lines; it is something characters hold beliefs about.
    #[serde(default)]
    pub mentioned: bool,
}

/// The changeable inner state of an entity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityState {
    /// Current mood, in prose ("wary", "delighted").
    #[serde(default)]
    pub mood: Option<String>,
    /// Current goals, most important first.
    #[serde(default)]
    pub goals: Vec<String>,
    /// A status line ("injured", "on shift").
    #[serde(default)]
    pub status: Option<String>,
}
