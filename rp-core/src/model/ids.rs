//! Typed ids. Every id is a `u64` drawn from one counter per world, so an id names exactly one
//! thing of one kind; the newtypes keep an entity id from being used as a container id.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in a branch's history: the number of events applied, 1-based (0 = empty).
pub type Seq = u64;

/// Milliseconds on the host's clock (wall time in a chat app, game time in a game).
pub type Millis = i64;

/// The milliseconds from `since` to `until`, 0 if `until` comes first. It saturates: a time
/// read from a damaged save or given by a host may be anywhere in `Millis`, and a difference
/// of two such times must not overflow.
pub(crate) fn elapsed(since: Millis, until: Millis) -> Millis {
    until.saturating_sub(since).max(0)
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "#{}"), self.0)
            }
        }

        impl From<$name> for u64 {
            fn from(id: $name) -> u64 {
                id.0
            }
        }
    };
}

id_type!(
    /// An entity: a character, the player, an item.
    EntityId,
    "entity"
);
id_type!(
    /// A container: a room, a booth, a car.
    ContainerId,
    "container"
);
id_type!(
    /// A group node.
    GroupId,
    "group"
);
id_type!(
    /// A memory.
    MemoryId,
    "memory"
);
id_type!(
    /// An utterance (a user or assistant turn).
    UtteranceId,
    "utterance"
);
id_type!(
    /// A scoped event.
    ScopedEventId,
    "event"
);
id_type!(
    /// A thread.
    ThreadId,
    "thread"
);
id_type!(
    /// A scene.
    SceneId,
    "scene"
);
id_type!(
    /// A world query (a question asked about the world).
    QueryId,
    "query"
);
id_type!(
    /// A rule a character holds (docs/rules.md).
    RuleId,
    "rule"
);
