//! Containers: anything with slots that holds entities (a tavern, a booth, a car). Spatial
//! grounding lives here, separate from the relationship graph.

use super::{ContainerId, FactSheet};
use serde::{Deserialize, Serialize};

/// A container.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Container {
    /// The container's id.
    pub id: ContainerId,
    /// A stable key given by a world file; world-file patches match containers by it.
    #[serde(default)]
    pub key: Option<String>,
    /// Its name.
    pub name: String,
    /// Facts about the place.
    #[serde(default)]
    pub facts: FactSheet,
    /// The container it sits in (a booth in a tavern); `None` at the top.
    #[serde(default)]
    pub parent: Option<ContainerId>,
    /// Named places within it, each with a capacity.
    #[serde(default)]
    pub slots: Vec<Slot>,
    /// Its properties.
    #[serde(default)]
    pub properties: ContainerProperties,
}

impl Container {
    /// The slot of that name, if any.
    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }
}

/// A named place within a container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    /// The slot's name, unique within its container.
    pub name: String,
    /// How many entities fit; `None` for no limit.
    #[serde(default)]
    pub capacity: Option<u32>,
}

/// Properties of a container.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerProperties {
    /// It moves (a carriage, a ship): the prompts of those inside it say so.
    #[serde(default)]
    pub moving: bool,
    /// It is open to the container around it (a market stall on a square, a tavern's common
    /// room): for who hears a line, the step between it and its parent costs nothing, so
    /// lines said in it are heard around it and lines said around it are heard in it (see
    /// [`crate::World::hearers`]). The prompts of those inside it say that it is public.
    #[serde(default)]
    pub public: bool,
    /// How many steps through the container tree (parent, child) an utterance made here carries:
    /// 0 = heard only inside this container.
    #[serde(default)]
    pub audible_range: u32,
}
