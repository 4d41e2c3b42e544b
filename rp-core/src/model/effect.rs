//! What a scoped event does when it starts or completes (its hooks), and what survives it
//! when it closes (its promotion). Both are typed data, checked when the event is planned or
//! closed, never free text interpreted at run time.

use super::{EntityId, ThreadId, ThreadStatus};
use serde::{Deserialize, Serialize};

/// One declarative effect of a hook. Reads from JSON as an object with a `type` field
/// (`{"type": "system_line", "text": "The sun comes out."}`), unknown fields refused.
///
/// "The participants" are those of the event whose hook it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Effect {
    /// Injects a system line (`[SYSTEM: text]`) into the next prompts of the participants.
    SystemLine {
        /// What it says.
        text: String,
    },
    /// Gives each participant a memory (an event gist) of `text`, witnessed by all of them.
    Memory {
        /// The memory's text.
        text: String,
        /// Its significance, 0–1.
        #[serde(default)]
        significance: f64,
    },
    /// Puts `item` into `to`'s inventory (out of its place, or out of its carrier's hands).
    GiveItem {
        /// The item (an entity).
        item: EntityId,
        /// Who receives it.
        to: EntityId,
    },
    /// `who` learns `fact` about `about` (the knowledge of the edge `who → about`).
    TeachFact {
        /// Who learns.
        who: EntityId,
        /// About whom.
        about: EntityId,
        /// The fact.
        fact: String,
    },
    /// Moves the edge `from → to`: affinity and trust by the given amounts (clamped to
    /// [-1, 1]), and its summary replaced if one is given.
    ChangeEdge {
        /// From.
        from: EntityId,
        /// To.
        to: EntityId,
        /// Added to affinity, in [-2, 2].
        #[serde(default)]
        affinity: f64,
        /// Added to trust, in [-2, 2].
        #[serde(default)]
        trust: f64,
        /// The new summary.
        #[serde(default)]
        summary: Option<String>,
    },
    /// Opens a thread with `text` for the participants (the thread remembers the event).
    OpenThread {
        /// What is unresolved.
        text: String,
    },
    /// Resolves or drops `thread`, or, when `thread` is `None`, every open thread that a hook
    /// of this event opened.
    CloseThread {
        /// Which thread; `None`: the event's own.
        #[serde(default)]
        thread: Option<ThreadId>,
        /// `resolved` or `dropped`.
        status: ThreadStatus,
    },
}

/// What survives a scoped event when it closes: exactly the four categories of docs/story.md.
/// Everything else of the event (its props above all) stays in the closed record and reaches
/// no prompt again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Promotion {
    /// Objects acquired: each item into a participant's inventory.
    pub items: Vec<ItemPromotion>,
    /// Knowledge gained: a fact onto an edge's knowledge.
    pub knowledge: Vec<KnowledgePromotion>,
    /// Relationship changes: an edge's new summary.
    pub summaries: Vec<SummaryPromotion>,
    /// The gist memory of each witness (a participant), in its own words.
    pub gists: Vec<GistPromotion>,
}

impl Promotion {
    /// True when nothing is promoted.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
            && self.knowledge.is_empty()
            && self.summaries.is_empty()
            && self.gists.is_empty()
    }

    /// Every text the promotion carries into later prompts (facts, summaries, gists).
    pub fn texts(&self) -> impl Iterator<Item = &str> + '_ {
        self.knowledge
            .iter()
            .map(|k| k.fact.as_str())
            .chain(self.summaries.iter().map(|s| s.summary.as_str()))
            .chain(self.gists.iter().map(|g| g.text.as_str()))
    }
}

/// An item that goes into a participant's inventory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemPromotion {
    /// The item.
    pub item: EntityId,
    /// The participant who keeps it.
    pub to: EntityId,
}

/// A fact a participant learned about someone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnowledgePromotion {
    /// The participant who learned it.
    pub who: EntityId,
    /// About whom.
    pub about: EntityId,
    /// The fact.
    pub fact: String,
}

/// How a participant now sums up a relationship.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryPromotion {
    /// The participant.
    pub from: EntityId,
    /// Toward whom.
    pub to: EntityId,
    /// The new summary.
    pub summary: String,
}

/// The gist a witness keeps of the event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GistPromotion {
    /// The witness (a participant); one gist each.
    pub witness: EntityId,
    /// The gist, from its point of view.
    pub text: String,
    /// Its significance, 0–1 (default: the event's).
    #[serde(default)]
    pub significance: Option<f64>,
}
