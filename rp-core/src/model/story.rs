//! Narrative structure: scoped events, threads and scenes.
//!
//! These records are defined here so saves carry them from the start. Scenes open and close
//! through [`crate::scene`]; the rules of scoped events arrive with their own issue.

use super::{ContainerId, EntityId, Millis, SceneId, ScopedEventId, ThreadId, WitnessSet};
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
    /// Props: the blanket, the basket. Visible to participants while active, gone after.
    #[serde(default)]
    pub props: BTreeMap<String, String>,
    /// Who takes part.
    #[serde(default)]
    pub participants: Vec<EntityId>,
    /// Conditions (in the `$if` expression language) that must hold for it to start.
    #[serde(default)]
    pub preconditions: Vec<String>,
    /// Declarative effects run when it starts.
    #[serde(default)]
    pub on_start: Vec<String>,
    /// Declarative effects run when it completes.
    #[serde(default)]
    pub on_complete: Vec<String>,
    /// How much it matters, in [0, 1].
    #[serde(default)]
    pub significance: f64,
    /// When it is due to start.
    #[serde(default)]
    pub start_at: Option<Millis>,
    /// When it expires if not completed.
    #[serde(default)]
    pub expire_at: Option<Millis>,
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

/// A line injected for the next generation to process (seed 002, pattern 4): the host or a
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
