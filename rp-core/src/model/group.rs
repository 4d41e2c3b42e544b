//! Group nodes: one for each group of three or more entities that share scenes, holding what
//! belongs to the group rather than to any pair.

use super::{EntityId, GroupId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The smallest group that gets a node of its own.
pub const MIN_GROUP_SIZE: usize = 3;

/// A group node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// The group's id.
    pub id: GroupId,
    /// Its members (at least [`MIN_GROUP_SIZE`]).
    pub members: BTreeSet<EntityId>,
    /// An optional name ("the crew").
    #[serde(default)]
    pub name: Option<String>,
    /// The group's dynamic, in prose.
    #[serde(default)]
    pub summary: String,
    /// Jokes, rituals, shared history.
    #[serde(default)]
    pub shared: Vec<String>,
}
