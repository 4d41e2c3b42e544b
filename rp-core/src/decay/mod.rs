//! Memory that fades and reflects (docs/memory.md): the decay pass a tick runs over every
//! memory, the summary requests that compress whole memories before they fade further, and
//! the reflections a character draws from its own memories. Each builds requests and reads
//! answers; the tick ([`crate::tick`]) asks and commits. The rules of what may be recorded
//! (a stage only once retention fell below its threshold, a summary shorter than the memory, an
//! insight citing the owner's own memories) are the log's ([`crate::log`]); what is read here
//! is checked by applying it to a copy of the world, so there is one rule in one place.

mod reflect;
mod summary;

pub(crate) use reflect::read_insights;
pub use reflect::{ReflectionAnswer, reflection_request, reflections_due};
pub(crate) use summary::read_summaries;
pub use summary::{SummaryAnswer, summary_request};

use crate::log::World;
use crate::model::{DecayStage, EntityId, FadeRule, MemoryId, Millis, StageChange};
use std::collections::{BTreeMap, HashMap};

/// The largest answer read (bytes); a longer one is refused unread.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// How soon a pass looks again after whole memories were left waiting for their summaries (one
/// game hour): a summary the host could not give is asked for again then, not in a loop.
pub const RETRY_SUMMARIES_MS: Millis = 3_600_000;

/// What a decay pass at one moment finds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pass {
    /// Memories that move on in arithmetic (to a residue, or forgotten).
    pub changes: Vec<StageChange>,
    /// Whole memories due for a summary, by owner, oldest first (at most `summary_batch` of
    /// each owner).
    pub summaries: BTreeMap<EntityId, Vec<MemoryId>>,
    /// The earliest moment after this pass at which a memory can cross a threshold (the
    /// memories awaiting a summary aside: their summaries record what comes next for them).
    pub next: Option<Millis>,
}

impl Pass {
    /// Whether the pass changes nothing and asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.summaries.is_empty()
    }
}

/// The decay pass at `now` (docs/memory.md): each memory whose retention fell below its next
/// stage's threshold moves on by one stage. Only the memories due are visited, soonest due
/// first (the world keeps them ordered by that moment); no model.
pub fn pass(world: &World, now: Millis) -> Pass {
    let mut rules: HashMap<EntityId, (FadeRule, usize)> = HashMap::new();
    let mut out = Pass::default();
    let mut next = world.next_fading_after(now);
    let mut earliest = |at: Millis| next = Some(next.map_or(at, |n: Millis| n.min(at)));
    // The world keeps every memory that will fade further by the moment it next moves on:
    // only those due are visited.
    for (id, owner, stage) in world.fading_by(now) {
        let (rule, batch) = *rules.entry(owner).or_insert_with(|| {
            let s = world.drive_settings(owner);
            (FadeRule::of(&s), s.summary_batch as usize)
        });
        if stage == DecayStage::Summary {
            // A summary needs only the id; the owner's batch may be full already (a backlog of
            // summaries the host has not given yet costs a visit each, no look-up).
            let waiting = out.summaries.entry(owner).or_default();
            if waiting.len() < batch {
                waiting.push(id);
            }
            continue;
        }
        out.changes.push(StageChange { id, stage });
        // Its next stage, from its new one.
        if let Some((_, at)) = world.memory(id).and_then(|m| m.fading_from(stage, &rule)) {
            earliest(at);
        }
    }
    out.next = next.map(|n| n.max(now));
    out
}

/// The record that brings the next pass forward to one [`RETRY_SUMMARIES_MS`] after `at` (or
/// keeps it, if sooner): whole memories due for a summary did not get one.
pub(crate) fn retry_summaries(world: &World, at: Millis) -> crate::log::Event {
    let retry = at.saturating_add(RETRY_SUMMARIES_MS);
    crate::log::Event::DecayPassed {
        at,
        changes: Vec::new(),
        next: Some(world.decay_due().map_or(retry, |d| d.clamp(at, retry))),
    }
}

/// An answer read strictly as the JSON object `T` (unknown fields refused), at most
/// [`MAX_ANSWER_BYTES`] (a longer one is refused unread; serde_json refuses nesting deeper
/// than 128); the problem in words otherwise, as a retry feeds it back.
pub(crate) fn read_answer<T: serde::de::DeserializeOwned>(answer: &str) -> Result<T, String> {
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer is {} bytes; at most {MAX_ANSWER_BYTES}",
            answer.len()
        ));
    }
    serde_json::from_str(answer.trim()).map_err(|e| format!("not the JSON object asked for: {e}"))
}
