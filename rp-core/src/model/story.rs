//! Narrative structure: scoped events, threads and scenes.
//!
//! The rules that start, close and promote scoped events and open and close threads live in
//! [`crate::story`]; scenes open and close through [`crate::scene`]. These are the records.

use super::{ContainerId, Effect, EntityId, Millis, SceneId, ScopedEventId, ThreadId, WitnessSet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The lifecycle of a scoped event. Valid moves: planned → active | cancelled | expired;
/// active → completed | cancelled | expired. Completed, cancelled and expired are final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventStatus {
    /// Scheduled, not started.
    Planned,
    /// Under way.
    Active,
    /// Finished as intended.
    Completed,
    /// Called off.
    Cancelled,
    /// Its time ran out.
    Expired,
}

impl EventStatus {
    /// Whether the lifecycle allows moving from `self` to `next`.
    pub fn can_become(self, next: EventStatus) -> bool {
        use EventStatus::*;
        matches!(
            (self, next),
            (Planned, Active | Cancelled | Expired) | (Active, Completed | Cancelled | Expired)
        )
    }

    /// True for completed, cancelled and expired.
    pub fn is_closed(self) -> bool {
        matches!(
            self,
            EventStatus::Completed | EventStatus::Cancelled | EventStatus::Expired
        )
    }
}

/// A scoped event: something with a beginning and an end (a picnic, a duel) whose props live
/// and die with it. Only inventory, knowledge, edge summaries and the gist memory survive it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopedEvent {
    /// The event's id.
    pub id: ScopedEventId,
    /// Its name ("the picnic").
    pub name: String,
    /// Where it stands in its lifecycle.
    pub status: EventStatus,
    /// Props: the blanket, the basket. In the prompts of its participants while it is active,
    /// in no prompt before or after (docs/story.md); the closed record keeps them for the host.
    #[serde(default)]
    pub props: BTreeMap<String, String>,
    /// Who takes part (at least one): only their prompts show it.
    #[serde(default)]
    pub participants: Vec<EntityId>,
    /// Conditions (in the `$if` expression language) that must all hold for it to start.
    /// They are evaluated as its first participant would evaluate a `$if` line (see
    /// [`crate::story`]).
    #[serde(default)]
    pub preconditions: Vec<String>,
    /// Declarative effects run when it starts.
    #[serde(default)]
    pub on_start: Vec<Effect>,
    /// Declarative effects run when it completes (not when it is cancelled or expires).
    #[serde(default)]
    pub on_complete: Vec<Effect>,
    /// How much it matters, in [0, 1].
    #[serde(default)]
    pub significance: f64,
    /// When it is due to start: from then on it starts at the first check at which its
    /// preconditions (and `start_when`) hold.
    #[serde(default)]
    pub start_at: Option<Millis>,
    /// A condition (the `$if` language) checked at every turn while it is planned: it starts
    /// when this holds (and its preconditions do, and `start_at` has come).
    #[serde(default)]
    pub start_when: Option<String>,
    /// When it expires if it has not closed by then.
    #[serde(default)]
    pub expire_at: Option<Millis>,
    /// When it started.
    #[serde(default)]
    pub started: Option<Millis>,
    /// When it closed.
    #[serde(default)]
    pub closed: Option<Millis>,
}

/// An unresolved tension, sticky in prompts until resolved or dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// The thread's id.
    pub id: ThreadId,
    /// What is unresolved, in prose.
    pub text: String,
    /// Who is involved (whose prompts carry it).
    #[serde(default)]
    pub participants: Vec<EntityId>,
    /// When it was opened.
    pub opened: Millis,
    /// Whether it is still open.
    #[serde(default)]
    pub status: ThreadStatus,
    /// The scoped event whose hook opened it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<ScopedEventId>,
}

/// Where a thread stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    /// Still unresolved.
    #[default]
    Open,
    /// Resolved in the story.
    Resolved,
    /// Dropped without resolution.
    Dropped,
}

/// A scene: a stretch of story in one place. On close every witness gets its own summary
/// (see [`crate::scene`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scene {
    /// The scene's id.
    pub id: SceneId,
    /// Where it happens.
    pub container: ContainerId,
    /// When it opened.
    pub opened: Millis,
    /// When it closed, if it has.
    #[serde(default)]
    pub closed: Option<Millis>,
    /// Who was there: those present when it opened, and everyone who heard one of its lines
    /// (the world adds them as the lines are applied).
    #[serde(default)]
    pub witnesses: WitnessSet,
    /// How many lines were said in it (kept by the world from its utterances; 0 when opened).
    #[serde(default)]
    pub lines: u32,
    /// When its newest line was said (kept by the world; `None` when opened).
    #[serde(default)]
    pub last_line: Option<Millis>,
}

impl Scene {
    /// Whether it is still open.
    pub fn is_open(&self) -> bool {
        self.closed.is_none()
    }
}

/// A line injected for the next generation to process (docs/turn.md §5c): the host or a
/// rule says `[SYSTEM: …]` and the characters' next prompts carry it until a turn has shown it
/// to a responder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemLine {
    /// Its id (from the world's id space).
    pub id: u64,
    /// What it says (shown as `[SYSTEM: text]`).
    pub text: String,
    /// Whose prompts carry it; `None`: every character's.
    #[serde(default)]
    pub audience: Option<Vec<EntityId>>,
    /// When it was injected.
    pub at: Millis,
}

impl SystemLine {
    /// Whether `entity`'s prompts carry it.
    pub fn reaches(&self, entity: EntityId) -> bool {
        self.audience.as_ref().is_none_or(|a| a.contains(&entity))
    }
}

/// A time skip (docs/architecture.md): how the story moves past time nobody wants to play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", deny_unknown_fields)]
pub enum Skip {
    /// Skips the middle of `entity`'s current action: the clock moves to the action's end
    /// (its start plus its duration).
    Elision {
        /// Whose action.
        entity: EntityId,
    },
    /// Jumps to a time ("the next morning").
    Jump {
        /// The time landed at.
        to: Millis,
    },
}
