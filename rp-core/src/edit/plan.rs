//! The plan of a line edit (docs/edits.md, "Editing and deleting a line"): the branch's events
//! from the line on, carried onto the history where the line is edited or gone.
//!
//! What changes, in order of the tail:
//! - the line: its text replaced, or dropped with the record of its generation (a character's
//!   line: the `generated`, `tools_run`, `initiated` and `scene_opened` events just before it);
//! - its memories (each witness's `memory_added` of the line, as "Name: text"): their text
//!   replaced (their vector dropped: it was of the old text), or dropped;
//! - with `with_replies`, the later lines of its turn and everything of theirs, dropped;
//! - the state-update pass of its turn (from its `generated` to its `reports_judged`), judged on
//!   the line as it was: dropped;
//! - the line's alternatives (`alternatives_set`), dropped (they were of the old line);
//! - recalls, decay passes and removals of dropped memories: those memories taken out of them;
//! - every other event re-applied as it was; one that no longer applies is *invalid*, and
//!   [`OnInvalid`] says what becomes of it.

use super::{EditNote, EditOptions, EditPreview, OnInvalid};
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::model::{EntityId, MemoryId, MemoryKind, Seq, Utterance, UtteranceId};
use crate::turn::TurnInput;
use std::collections::HashSet;

/// What an edit does to a line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Change {
    /// Its text becomes this.
    Text(String),
    /// It is gone.
    Delete,
    /// Another of its alternatives becomes the line (docs/edits.md, "Swipes"): the text, and
    /// the alternatives as they will be recorded.
    Choose(String, Vec<String>, u32),
}

/// The planned tail, with what it does.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The seq the branch is rewound to.
    pub base: Seq,
    /// The events after `base` on the new history.
    pub events: Vec<Event>,
    /// What the edit does, event by event.
    pub preview: EditPreview,
    /// The lines of the line's turn as they stand on the new history (for a state-update pass
    /// asked for again), and whether the turn had one.
    pub turn_lines: Vec<Utterance>,
    /// Whether the line's turn had a state-update pass (dropped here).
    pub had_update: bool,
    /// The world at `base`.
    pub base_world: World,
    /// The world after `events`.
    pub after: World,
}

/// Whether `e` is a line, and which.
pub(crate) fn line_of(e: &Event) -> Option<&Utterance> {
    match e {
        Event::UserTurn { utterance } | Event::AssistantTurn { utterance } => Some(utterance),
        _ => None,
    }
}

/// Whether `e` belongs to the generation of `speaker`'s reply, just before the line: its record,
/// its tool calls, its initiation, the scene its line opened.
pub(crate) fn leads_to_reply(e: &Event, speaker: EntityId) -> bool {
    match e {
        Event::Generated { purpose, .. } => purpose.speaker() == Some(speaker),
        Event::ToolsRun { speaker: s, .. } => *s == speaker,
        Event::Initiated { initiation, .. } => initiation.speaker == speaker,
        Event::SceneOpened { .. } => true,
        _ => false,
    }
}

/// The index in `events` where the block of the line at `at` starts: for a character's line,
/// its generation's events just before it; for the player's line, the line itself.
pub(crate) fn block_start(events: &[(Seq, Event)], at: usize) -> usize {
    let Some(Event::AssistantTurn { utterance }) = events.get(at).map(|(_, e)| e) else {
        return at;
    };
    let mut start = at;
    while start > 0 && leads_to_reply(&events[start - 1].1, utterance.speaker) {
        start -= 1;
    }
    start
}

/// A line as it is remembered: "Name: text".
fn remembered(world: &World, speaker: EntityId, text: &str) -> String {
    let name = world.entity(speaker).map_or("", |e| e.name.as_str());
    format!("{name}: {text}")
}

/// Whether `m` is the memory of line `u` (the turn writes "Name: text" at the line's time).
fn is_memory_of(m: &crate::model::Memory, world: &World, u: &Utterance) -> bool {
    m.kind == MemoryKind::Utterance
        && m.created == u.at
        && m.text == remembered(world, u.speaker, &u.text)
}

/// Plans the edit of the line at `tail[line]` (`tail` starting at the line's block, on top of
/// `world`, the world at `base`).
pub(crate) fn plan(
    world: World,
    base: Seq,
    tail: &[(Seq, Event)],
    line: usize,
    change: &Change,
    options: &EditOptions,
) -> Result<Plan> {
    let Some(old) = line_of(&tail[line].1).cloned() else {
        return Err(Error::invalid("line", "the event planned on is not a line"));
    };
    let user_line = matches!(tail[line].1, Event::UserTurn { .. });
    let deleting = *change == Change::Delete;
    // The line's turn: up to the next line of the player.
    let turn_end = (line + 1..tail.len())
        .find(|&i| matches!(tail[i].1, Event::UserTurn { .. }))
        .unwrap_or(tail.len());
    // The lines dropped with it: itself when deleted, the replies after it when asked.
    let mut gone: Vec<(usize, Utterance)> = Vec::new();
    if deleting {
        gone.push((line, old.clone()));
    }
    if options.with_replies {
        for (i, (_, e)) in tail.iter().enumerate().take(turn_end).skip(line + 1) {
            if let Event::AssistantTurn { utterance } = e {
                gone.push((i, utterance.clone()));
            }
        }
    }
    let mut dropped_at: HashSet<usize> = HashSet::new();
    for (i, _) in &gone {
        let from = if *i == line { 0 } else { block_start(tail, *i) };
        dropped_at.extend(from..=*i);
    }
    // The turn's state-update pass.
    let update_from = (line + 1..turn_end).find(|&i| {
        matches!(&tail[i].1, Event::Generated { purpose, .. }
            if *purpose == crate::machine::Purpose::StateUpdate)
    });
    let update_to = update_from.and_then(|from| {
        (from..turn_end).find(|&i| matches!(tail[i].1, Event::ReportsJudged { .. }))
    });
    let update = match (update_from, update_to) {
        (Some(a), Some(b)) => Some(a..=b),
        _ => None,
    };
    let new_text = match change {
        Change::Text(t) | Change::Choose(t, _, _) => Some(t.clone()),
        Change::Delete => None,
    };
    let chosen_alternatives = match change {
        Change::Choose(_, texts, n) => Some((texts.clone(), *n)),
        _ => None,
    };
    let touched_lines: HashSet<UtteranceId> =
        gone.iter().map(|(_, u)| u.id).chain([old.id]).collect();

    let base_world = world.clone();
    let mut w = world;
    let mut preview = EditPreview {
        line: old.id,
        base,
        kept: 0,
        edited: Vec::new(),
        dropped: Vec::new(),
        invalid: Vec::new(),
        regenerate: None,
    };
    let note = |seq: Seq, e: &Event, why: String| EditNote {
        seq,
        kind: e.kind().to_owned(),
        why,
    };
    let mut events: Vec<Event> = Vec::new();
    let mut removed_memories: HashSet<MemoryId> = HashSet::new();
    // The latest player's line after the line's turn, for a regeneration: its index, the
    // events planned before it, and the world before it.
    let mut last_turn: Option<(usize, usize, World)> = None;
    let mut cut: Option<usize> = None;
    // The events planned before the line, and the world before it.
    let mut before_line: Option<(usize, World)> = None;
    for (i, (seq, e)) in tail.iter().enumerate() {
        let seq = *seq;
        // Only a regeneration goes back to a turn's start: only it keeps the world there.
        if i > line
            && options.on_invalid == OnInvalid::Regenerate
            && matches!(e, Event::UserTurn { .. })
        {
            last_turn = Some((i, events.len(), w.clone()));
        }
        if i == line {
            before_line = Some((events.len(), w.clone()));
        }
        let dropped = |why: &str| Some(why.to_owned());
        let mut event = e.clone();
        let mut edited: Option<String> = None;
        let drop: Option<String> = if dropped_at.contains(&i) {
            if i == line {
                dropped("the line, deleted")
            } else if i < line {
                dropped("the generation of the deleted line")
            } else {
                dropped("a later line of the deleted line's turn, or its generation")
            }
        } else if i == line {
            let Some(text) = &new_text else {
                unreachable!("a deleted line is dropped above")
            };
            let mut u = old.clone();
            u.text = text.clone();
            event = match e {
                Event::UserTurn { .. } => Event::UserTurn { utterance: u },
                _ => Event::AssistantTurn { utterance: u },
            };
            edited = Some("the line, edited".into());
            None
        } else if update.as_ref().is_some_and(|r| r.contains(&i)) {
            dropped("the state update of the line's turn, judged on the line as it was")
        } else {
            match e {
                Event::MemoryAdded { memory } if i < turn_end => {
                    let gone_line = gone.iter().find(|(_, u)| is_memory_of(memory, &w, u));
                    if gone_line.is_some() {
                        removed_memories.insert(memory.id);
                        dropped("a memory of a deleted line")
                    } else if !deleting && is_memory_of(memory, &w, &old) {
                        let mut m = memory.clone();
                        m.text =
                            remembered(&w, old.speaker, new_text.as_deref().unwrap_or_default());
                        m.embedding = None;
                        event = Event::MemoryAdded { memory: m };
                        edited = Some("a memory of the line: its text edited".into());
                        None
                    } else {
                        None
                    }
                }
                Event::AlternativesSet { line: l, .. } if touched_lines.contains(l) => {
                    dropped("the alternatives of the line as it was")
                }
                Event::MemoriesRecalled { ids, at } if !removed_memories.is_empty() => {
                    let kept: Vec<MemoryId> = ids
                        .iter()
                        .copied()
                        .filter(|id| !removed_memories.contains(id))
                        .collect();
                    if kept.is_empty() {
                        dropped("recalls of dropped memories")
                    } else {
                        if kept.len() != ids.len() {
                            edited = Some("recalls: dropped memories taken out".into());
                        }
                        event = Event::MemoriesRecalled { ids: kept, at: *at };
                        None
                    }
                }
                Event::MemoryRemoved { id } if removed_memories.contains(id) => {
                    dropped("the removal of a dropped memory")
                }
                Event::DecayPassed { .. } if !removed_memories.is_empty() => {
                    event = without_memories(e, &removed_memories);
                    if event != *e {
                        edited = Some("a decay pass: dropped memories taken out".into());
                    }
                    None
                }
                _ => None,
            }
        };
        if let Some(why) = drop {
            preview.dropped.push(note(seq, e, why));
            continue;
        }
        let applied = w.apply(&event);
        if let Err(err) = applied {
            // The edit itself does not apply (a text too long for a line): refused.
            if i == line || (edited.is_some() && i < turn_end) {
                return Err(err);
            }
            preview.invalid.push(note(seq, e, err.to_string()));
            if options.on_invalid == OnInvalid::Regenerate && cut.is_none() {
                cut = Some(i);
                break;
            }
            continue;
        }
        if let Some(why) = edited {
            preview.edited.push(note(seq, e, why));
        } else {
            preview.kept += 1;
        }
        events.push(event);
    }
    // Regenerate: the history stops before the turn of the first invalid event, and that turn's
    // input is the host's to run again.
    if let Some(i) = cut {
        let later_turn = last_turn.filter(|(at, _, _)| *at <= i);
        let (from, keep, input) = match later_turn {
            Some((at, keep, before)) => {
                let Some(u) = line_of(&tail[at].1) else {
                    unreachable!("a player's line")
                };
                w = before;
                (
                    at,
                    keep,
                    Some(TurnInput::say(u.speaker, u.text.clone(), u.at)),
                )
            }
            // In the line's own turn: an edited player's line is said again.
            None if user_line && !deleting => {
                let Some((keep, before)) = before_line.clone() else {
                    unreachable!("the line is planned before anything after it")
                };
                w = before;
                let text = new_text.clone().unwrap_or_default();
                (line, keep, Some(TurnInput::say(old.speaker, text, old.at)))
            }
            None => (tail.len(), events.len(), None),
        };
        if input.is_some() {
            events.truncate(keep);
            for (seq, e) in &tail[from..] {
                if preview.invalid.iter().all(|n| n.seq != *seq) {
                    preview
                        .dropped
                        .push(note(*seq, e, "after the turn to regenerate".to_owned()));
                }
            }
            preview.regenerate = input;
        }
    }
    if let Some((texts, chosen)) = chosen_alternatives {
        let set = Event::AlternativesSet {
            line: old.id,
            texts,
            chosen,
        };
        w.apply(&set)?;
        events.push(set);
    }
    let turn_lines: Vec<Utterance> = events
        .iter()
        .filter_map(line_of)
        .filter(|u| {
            tail[..turn_end]
                .iter()
                .any(|(_, e)| line_of(e).is_some_and(|o| o.id == u.id))
        })
        .cloned()
        .collect();
    Ok(Plan {
        base,
        events,
        preview,
        turn_lines,
        had_update: update.is_some(),
        base_world,
        after: w,
    })
}

/// `e` (a decay pass) without the changes of `removed` memories.
fn without_memories(e: &Event, removed: &HashSet<MemoryId>) -> Event {
    match e {
        Event::DecayPassed { changes, .. } => {
            let mut e = e.clone();
            if let Event::DecayPassed { changes: c, .. } = &mut e {
                *c = changes
                    .iter()
                    .filter(|ch| !removed.contains(&ch.id))
                    .cloned()
                    .collect();
            }
            e
        }
        _ => e.clone(),
    }
}
