//! Requirements (decision points and validators; docs/requirements.md, seed 002 "Decision
//! Point System"): a condition in the fact language that guards transitions. While it is
//! false the requirement is **pending**: a guarded transition is refused, and the prompts of
//! the characters concerned carry a warning until a state change makes it true.

use super::{ContainerId, EntityId, ScopedEventId};
use serde::{Deserialize, Serialize};

/// The most requirements a world holds at once.
pub const MAX_REQUIREMENTS: usize = 256;
/// The longest id, name or condition of a requirement, in characters.
pub const MAX_REQUIREMENT_NAME_CHARS: usize = 300;
/// The longest text of a requirement (what the characters concerned are told), in characters.
pub const MAX_REQUIREMENT_TEXT_CHARS: usize = 1000;
/// The most guards one requirement has.
pub const MAX_GUARDS: usize = 32;

/// A transition a requirement guards.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Guard {
    /// The subject moving out of `container` or out of any container inside it (an
    /// `activity_changed` whose new position is elsewhere, or nowhere).
    Leave {
        /// The container.
        container: ContainerId,
    },
    /// A scoped event starting (`None`: any scoped event).
    StartEvent {
        /// Which event.
        #[serde(default)]
        event: Option<ScopedEventId>,
    },
    /// A scoped event completing (`None`: any scoped event). Cancelling or expiring is not
    /// guarded.
    CompleteEvent {
        /// Which event.
        #[serde(default)]
        event: Option<ScopedEventId>,
    },
    /// A time skip (`time_skipped`).
    TimeSkip,
    /// A scene closing (with a subject: a scene the subject witnesses).
    SceneClose,
    /// A host action, checked by the host by name (`Engine::check_action`).
    Action {
        /// The action's name.
        name: String,
    },
}

/// A requirement: while `condition` is false (with `self` reading the subject's facts), the
/// transitions in `guards` are refused with its name and text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// Its key, unique in the world.
    pub id: String,
    /// A short name ("fare").
    pub name: String,
    /// Whose facts `self` reads and whose moves `leave` guards; `None`: a world-wide
    /// requirement, whose condition reads no `self`.
    #[serde(default)]
    pub subject: Option<EntityId>,
    /// A condition in the `$if` language (docs/facts.md).
    pub condition: String,
    /// The transitions it guards.
    pub guards: Vec<Guard>,
    /// What the characters concerned are told while it is pending.
    pub text: String,
}

/// A requirement as the world keeps it: the requirement and whether its being pending was
/// announced (a system line injected) since it last was met.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldRequirement {
    /// The requirement.
    pub requirement: Requirement,
    /// Whether the log announced it pending (`requirement_announced`) since it was added or
    /// last found met.
    #[serde(default)]
    pub announced: bool,
}
