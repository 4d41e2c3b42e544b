//! Directed relationship edges. `a→b` and `b→a` are independent records: asymmetric feelings
//! are the point, and they are never collapsed into one shared field.

use super::{BeliefSource, EntityId, Millis};
use serde::{Deserialize, Serialize};

/// What `from` feels about, and knows of, `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Whose feelings these are.
    pub from: EntityId,
    /// About whom.
    pub to: EntityId,
    /// Liking, in [-1, 1].
    #[serde(default)]
    pub affinity: f64,
    /// Trust, in [-1, 1].
    #[serde(default)]
    pub trust: f64,
    /// How `from` would sum up the relationship, in prose.
    #[serde(default)]
    pub summary: String,
    /// Facts `from` knows about `to`.
    #[serde(default)]
    pub knowledge: Vec<String>,
    /// Moments only these two share.
    #[serde(default)]
    pub private_moments: Vec<String>,
    /// When they last interacted.
    #[serde(default)]
    pub last_interaction: Option<Millis>,
    /// What faded memories left behind (docs/memory.md): the feeling of each memory about
    /// `to` that decayed to a residue, oldest first (at most [`MAX_IMPRINTS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imprints: Vec<String>,
    /// Where the edge comes from when no one witnessed it: an edge of a person who is only
    /// mentioned is what someone told (`told_by`) or what was inferred (docs/beliefs.md).
    /// `None` for an edge the world or the story set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<BeliefSource>,
}

impl Edge {
    /// A neutral edge from `from` to `to`.
    pub fn new(from: EntityId, to: EntityId) -> Edge {
        Edge {
            from,
            to,
            affinity: 0.0,
            trust: 0.0,
            summary: String::new(),
            knowledge: Vec::new(),
            private_moments: Vec::new(),
            last_interaction: None,
            imprints: Vec::new(),
            source: None,
        }
    }
}

/// The most imprints an edge keeps; the oldest go first.
pub const MAX_IMPRINTS: usize = 16;

/// The most facts an edge keeps; the oldest go first.
pub const MAX_KNOWLEDGE: usize = 64;
