//! What a character perceives outside dialogue (docs/drives.md, "The inbox"): stimuli, their
//! priorities, and what became of those not simply queued.

use super::Millis;
use serde::{Deserialize, Serialize};

/// The most stimuli an inbox notes as merged, dropped or filtered (the oldest go first).
pub const MAX_INBOX_NOTES: usize = 32;

/// The most processed stimuli a character keeps for its next prompt (the oldest go first).
pub const MAX_NOTICED: usize = 8;

/// The longest stimulus payload, in bytes.
pub const MAX_PAYLOAD_BYTES: usize = 4 * 1024;

/// The stimulus kinds every world knows; a world's drive settings may add more.
pub const BUILTIN_STIMULUS_KINDS: &[&str] =
    &["line", "sound", "sight", "touch", "message", "lore", "game"];

/// How urgent a stimulus is (seed 004's priorities). Ordered from most to least urgent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Never filtered, never dropped; wakes a sleeper at once.
    Critical,
    /// Processed in every mode but sleep.
    High,
    /// Processed when alert or normal.
    Normal,
    /// Processed when alert or normal; dropped when stale.
    Low,
    /// Processed when alert or normal; dropped soonest.
    Idle,
}

impl Priority {
    /// The disturbance a filtered stimulus of this priority adds to a sleeper (seed 004:
    /// HIGH 0.3, NORMAL 0.1, LOW 0.05, IDLE 0.01; CRITICAL wakes).
    pub fn disturbance(self) -> f64 {
        match self {
            Priority::Critical => f64::INFINITY,
            Priority::High => 0.3,
            Priority::Normal => 0.1,
            Priority::Low => 0.05,
            Priority::Idle => 0.01,
        }
    }

    /// The curiosity a processed stimulus of this priority adds.
    pub fn curiosity(self) -> f64 {
        match self {
            Priority::Critical => 0.4,
            Priority::High => 0.25,
            Priority::Normal => 0.15,
            Priority::Low => 0.08,
            Priority::Idle => 0.03,
        }
    }

    /// The priority a host names: `critical`, `high`, `normal`, `low` or `idle`.
    pub fn from_name(name: &str) -> Result<Priority, String> {
        Ok(match name {
            "critical" => Priority::Critical,
            "high" => Priority::High,
            "normal" => Priority::Normal,
            "low" => Priority::Low,
            "idle" => Priority::Idle,
            other => {
                return Err(format!(
                    "{other:?} is not a priority; use critical, high, normal, low or idle"
                ));
            }
        })
    }

    /// The stable lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Priority::Critical => "critical",
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
            Priority::Idle => "idle",
        }
    }
}

/// Something a character perceives outside dialogue: a door slams, a message arrives on
/// another channel, a game event. Lines it hears while asleep arrive as `line` stimuli.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stimulus {
    /// The stimulus's id (given by the engine).
    #[serde(default)]
    pub id: u64,
    /// Its kind: a built-in kind or one the world's drive settings add.
    pub kind: String,
    /// How urgent it is.
    pub priority: Priority,
    /// What the host says it is, in prose ("the door slams").
    #[serde(default)]
    pub payload: String,
    /// When it arrived (host clock).
    #[serde(default)]
    pub at: Millis,
    /// How many stimuli merged into this one (1 for a single one).
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// What became of a stimulus that was not simply queued.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InboxFate {
    /// Merged into an earlier stimulus of the same kind (its id).
    Merged(u64),
    /// Dropped as stale (too old for its priority).
    Stale,
    /// Dropped because the inbox was full and it was the least urgent.
    Overflow,
    /// Filtered out by the character's mode (asleep or relaxed); it added disturbance.
    Filtered,
    /// It woke the character.
    Woke,
}

/// A note of the inbox: a stimulus and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InboxNote {
    /// The stimulus (id, kind, priority, payload, arrival).
    pub stimulus: Stimulus,
    /// What became of it.
    pub fate: InboxFate,
    /// When (host clock).
    pub at: Millis,
}
