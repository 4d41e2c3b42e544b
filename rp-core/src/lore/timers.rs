//! Sticky and cooldown entries (SillyTavern's timed effects, `WorldInfoTimedEffects`), per
//! character, counted in the messages that character heard (docs/cards.md, "Timed effects").
//!
//! A character's timers live in the world (`World::lore_timers`); a prompt reads them for the
//! chat's length ([`check`]), and the turn that uses the prompt records what the scan changed
//! ([`after_scan`]) as one `lore_timers_set` event, so a replay, a rewind and a branch see the
//! same timers. Building a prompt without a turn (inspecting it) changes nothing.
//!
//! As SillyTavern: an entry that activates with `sticky` stays active for that many messages;
//! with `cooldown` it cannot activate for that many; when a sticky effect ends, the entry's
//! cooldown begins at once (protected). A timer set at the chat's current length and not
//! protected is dropped when the prompt is built again at that length (a regenerated reply
//! starts afresh).

use super::book::{BookHit, Timed};
use crate::model::{LoreTimer, Lorebook, TimerKind};

fn entry_config(books: &[(u64, &Lorebook)], t: &LoreTimer) -> Option<(u32, u32)> {
    let (_, book) = books.iter().find(|(id, _)| *id == t.book)?;
    let e = book.entries.get(t.entry as usize)?;
    Some((e.sticky, e.cooldown))
}

/// The timers `timers` as the scan at chat length `chat_len` sees them: the entries held
/// sticky and cooling down, and the timers kept (with the cooldowns a sticky's end began).
pub fn check(
    timers: &[LoreTimer],
    books: &[(u64, &Lorebook)],
    chat_len: u32,
) -> (Timed, Vec<LoreTimer>) {
    let mut timed = Timed::default();
    let mut kept: Vec<LoreTimer> = Vec::new();
    let mut began: Vec<LoreTimer> = Vec::new();
    // Sticky first: an ended sticky effect begins a cooldown the same check sees.
    for kind in [TimerKind::Sticky, TimerKind::Cooldown] {
        for t in timers.iter().chain(began.clone().iter()) {
            if t.kind != kind {
                continue;
            }
            if chat_len <= t.start && !t.protected {
                continue;
            }
            let Some((sticky, cooldown)) = entry_config(books, t) else {
                // Its book is gone (another character's, say): kept until it would end.
                if chat_len < t.end {
                    kept.push(*t);
                }
                continue;
            };
            let configured = match kind {
                TimerKind::Sticky => sticky,
                TimerKind::Cooldown => cooldown,
            };
            if configured == 0 {
                continue;
            }
            if chat_len >= t.end {
                if kind == TimerKind::Sticky && cooldown > 0 {
                    began.push(LoreTimer {
                        kind: TimerKind::Cooldown,
                        start: chat_len,
                        end: chat_len.saturating_add(cooldown),
                        protected: true,
                        ..*t
                    });
                }
                continue;
            }
            let key = (t.book, t.entry as usize);
            match kind {
                TimerKind::Sticky => timed.sticky.insert(key),
                TimerKind::Cooldown => timed.cooldown.insert(key),
            };
            kept.push(*t);
        }
    }
    (timed, kept)
}

/// The timers after a scan at chat length `chat_len` activated `activated` (the entries that
/// came into the prompt): `kept` (from [`check`]) with a sticky and a cooldown timer set for
/// each activated entry configured for one and not already timed so.
pub fn after_scan(
    mut kept: Vec<LoreTimer>,
    activated: &[&BookHit],
    books: &[(u64, &Lorebook)],
    chat_len: u32,
) -> Vec<LoreTimer> {
    for h in activated {
        let probe = LoreTimer {
            book: h.book,
            entry: h.entry as u32,
            kind: TimerKind::Sticky,
            start: chat_len,
            end: chat_len,
            protected: false,
        };
        let Some((sticky, cooldown)) = entry_config(books, &probe) else {
            continue;
        };
        for (kind, length) in [(TimerKind::Sticky, sticky), (TimerKind::Cooldown, cooldown)] {
            let timed = kept
                .iter()
                .any(|t| t.book == probe.book && t.entry == probe.entry && t.kind == kind);
            if length > 0 && !timed {
                kept.push(LoreTimer {
                    kind,
                    end: chat_len.saturating_add(length),
                    ..probe
                });
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lore::book::{Scan, scan};

    /// The entries active at each chat length 1..=n for a chat where only message `keyed`
    /// (1-based) names the key, timers carried from scan to scan as a turn records them.
    fn run(entry: &str, keyed: &[usize], n: usize) -> Vec<bool> {
        let book = Lorebook::from_json(&format!(
            r#"{{"scan_depth": 1, "entries": [{{"keys": ["bell"], "content": "x", "extensions": {entry}}}]}}"#
        ))
        .unwrap();
        let books = [(1u64, &book)];
        let mut timers: Vec<LoreTimer> = Vec::new();
        let mut chat: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for len in 1..=n {
            chat.push(if keyed.contains(&len) {
                "a bell"
            } else {
                "quiet"
            });
            let (timed, kept) = check(&timers, &books, len as u32);
            let hits = scan(
                &books,
                &chat,
                Scan {
                    seed: Some(1),
                    timed: Some(&timed),
                },
            );
            out.push(!hits.is_empty());
            let used: Vec<&BookHit> = hits.iter().collect();
            timers = after_scan(kept, &used, &books, len as u32);
        }
        out
    }

    #[test]
    fn sticky_holds_an_entry_for_its_messages() {
        // Named at message 2, sticky 3: active at 2, 3, 4; not at 5.
        let got = run(r#"{"sticky": 3}"#, &[2], 6);
        assert_eq!(got, vec![false, true, true, true, false, false]);
    }

    #[test]
    fn cooldown_keeps_an_entry_out_after_it_activated() {
        // Cooldown 2: named at 1, 2, 3, 4 and 5; active at 1, then not at 2 (cooling), active
        // at 3 (the cooldown [1, 3) is over), and so on.
        let got = run(r#"{"cooldown": 2}"#, &[1, 2, 3, 4, 5], 5);
        assert_eq!(got, vec![true, false, true, false, true]);
    }

    #[test]
    fn a_sticky_end_begins_its_cooldown() {
        // Sticky 2 and cooldown 2, named every message: active at 1 and 2 (sticky over the
        // cooldown set with it), the sticky ends at 3 and its cooldown holds 3 and 4, active
        // again at 5.
        let got = run(r#"{"sticky": 2, "cooldown": 2}"#, &[1, 2, 3, 4, 5, 6], 6);
        assert_eq!(got, vec![true, true, false, false, true, true]);
    }

    #[test]
    fn a_prompt_built_again_at_the_same_length_starts_afresh() {
        let book = Lorebook::from_json(
            r#"{"entries": [{"keys": ["bell"], "content": "x", "extensions": {"cooldown": 5}}]}"#,
        )
        .unwrap();
        let books = [(1u64, &book)];
        let hit = BookHit {
            book: 1,
            entry: 0,
            key: None,
            recursion: false,
            sticky: false,
        };
        let timers = after_scan(Vec::new(), &[&hit], &books, 3);
        assert_eq!(timers.len(), 1);
        // Again at length 3 (a regenerated reply): the cooldown set at 3 is dropped.
        let (timed, kept) = check(&timers, &books, 3);
        assert!(timed.cooldown.is_empty() && kept.is_empty());
        // At 4 it holds.
        let (timed, _) = check(&timers, &books, 4);
        assert!(timed.cooldown.contains(&(1, 0)));
    }
}
