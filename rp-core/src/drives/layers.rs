//! Where a processed stimulus stops (docs/drives.md, "Layers"; seed 004's "Processing
//! Layers"): arithmetic handles it (curiosity, disturbance) and rules fire on it; only when
//! the arithmetic is not confident, or a pattern of one kind accumulates ("why am I so
//! restless?"), is it hoisted to the fast model. Arithmetic only: the tick asks the models.

use crate::log::World;
use crate::model::*;

/// The most hoists one character makes in one tick.
pub const MAX_HOISTS: usize = 3;

/// Stimuli hoisted to the fast model, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Hoist {
    /// The stimuli (one, or a pattern's).
    pub stimuli: Vec<Stimulus>,
    /// Their kind.
    pub kind: String,
    /// Why, in words.
    pub reason: String,
    /// A pattern rather than one stimulus.
    pub pattern: bool,
}

/// How confident arithmetic is that it handled `s`: by priority (CRITICAL 0.3, HIGH 0.6,
/// NORMAL 0.8, LOW 0.95, IDLE 1), 0.2 less for words to understand (a `line` or a `message`
/// with a payload). A rule that fired on it makes it 1.
pub fn reflex_confidence(s: &Stimulus) -> f64 {
    let base = match s.priority {
        Priority::Critical => 0.3,
        Priority::High => 0.6,
        Priority::Normal => 0.8,
        Priority::Low => 0.95,
        Priority::Idle => 1.0,
    };
    let words = matches!(s.kind.as_str(), "line" | "message") && !s.payload.trim().is_empty();
    if words { base - 0.2 } else { base }
}

/// What `entity` hoists of the stimuli it just processed (`processed`, those a rule fired on
/// in `ruled`), as the world stands after processing them: each one whose arithmetic is below
/// `hoist_below`, and for each kind a pattern: `pattern_count` stimuli (merged ones counted)
/// that arrived within `pattern_minutes` of each other, among those it processed now and those
/// still noticed (since it last spoke; the last few) that arrived after a pattern of that kind
/// was last hoisted. A kind's pattern takes in its single hoists. At most
/// [`MAX_HOISTS`], patterns first.
pub fn hoists(
    world: &World,
    entity: EntityId,
    processed: &[Stimulus],
    ruled: &[u64],
) -> Vec<Hoist> {
    let Some(mind) = world.mind(entity) else {
        return Vec::new();
    };
    let s = world.drive_settings(entity);
    let window = (s.pattern_minutes * 60_000.0) as Millis;
    let mut out: Vec<Hoist> = Vec::new();
    let mut kinds: Vec<&str> = processed.iter().map(|x| x.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        // Only stimuli after the last pattern of this kind was hoisted count again.
        let after = mind
            .patterns
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, at)| *at)
            .max()
            .unwrap_or(Millis::MIN);
        let mut seen: Vec<&Stimulus> = (mind.noticed.iter())
            .filter(|x| !processed.iter().any(|p| p.id == x.id))
            .chain(processed)
            .filter(|x| x.kind == kind && x.at > after)
            .collect();
        seen.sort_by_key(|x| (x.at, x.id));
        if let Some((count, from, to)) = densest(&seen, window)
            && count >= u64::from(s.pattern_count)
        {
            out.push(Hoist {
                stimuli: seen[from..to].iter().map(|x| (*x).clone()).collect(),
                kind: kind.to_owned(),
                reason: format!(
                    "a pattern: {count} {kind} stimuli within {} min",
                    s.pattern_minutes
                ),
                pattern: true,
            });
        }
    }
    for x in processed {
        if ruled.contains(&x.id) || out.iter().any(|h| h.pattern && h.kind == x.kind) {
            continue;
        }
        let c = reflex_confidence(x);
        if c < s.hoist_below {
            out.push(Hoist {
                stimuli: vec![x.clone()],
                kind: x.kind.clone(),
                reason: format!(
                    "arithmetic is not confident: {c:.2} below {:.2}",
                    s.hoist_below
                ),
                pattern: false,
            });
        }
    }
    out.truncate(MAX_HOISTS);
    out
}

/// The densest run of `seen` (in arrival order) within `window` ms of its first: how many
/// stimuli (merged ones counted) and the run's bounds.
fn densest(seen: &[&Stimulus], window: Millis) -> Option<(u64, usize, usize)> {
    let mut best: Option<(u64, usize, usize)> = None;
    let mut from = 0;
    let mut count: u64 = 0;
    for (to, x) in seen.iter().enumerate() {
        count += u64::from(x.count.max(1));
        while x.at.saturating_sub(seen[from].at) > window {
            count -= u64::from(seen[from].count.max(1));
            from += 1;
        }
        if best.is_none_or(|(c, _, _)| count > c) {
            best = Some((count, from, to + 1));
        }
    }
    best
}
