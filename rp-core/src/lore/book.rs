//! Lorebook activation with SillyTavern's World Info semantics (docs/cards.md, "Lorebooks"):
//! which entries of which books come into a speaker's prompt, from the lines it heard.
//!
//! Keys: constant and disabled entries; primary keys (any matches), secondary keys under
//! AND ANY / NOT ALL / NOT ANY / AND ALL; `/regex/flags` keys through the fact language's
//! JavaScript-regex translation; case-sensitive and whole-word options (SillyTavern's rule: a
//! key of one word matches between non-word characters, a key of several words anywhere); the
//! scan depth in messages, the entry's over the book's, the window newest message first as
//! SillyTavern's scan buffer holds it.
//!
//! The scan is SillyTavern's loop ([`scan`]): a first pass, then passes of recursion over what
//! activated entries say (`exclude_recursion`, `prevent_recursion`, `delay_until_recursion`
//! levels), each pass drawing its probabilities and choosing its inclusion groups' winners;
//! `delay` counted in messages; sticky and cooldown entries as the character's timers hold
//! them ([`crate::lore::timers`]). `tests/lore_vs_node.rs` checks keys, recursion, delays and
//! timed effects against a transcription of SillyTavern's loop in JavaScript.

use crate::facts::JsRegex;
use crate::model::{BookEntry, Lorebook, SelectiveLogic, regex_key};
use std::collections::{HashMap, HashSet};

/// The deepest recursion.
pub const MAX_RECURSION: usize = 10;

/// An entry activated, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BookHit {
    /// Which book (its id).
    pub book: u64,
    /// Which entry (its index in the book).
    pub entry: usize,
    /// The key that matched (`None`: a constant entry).
    pub key: Option<String>,
    /// Whether a pass of recursion brought it (it matched what recursion added, or its
    /// delay until recursion was over).
    pub recursion: bool,
    /// Whether it is active because it is sticky (SillyTavern's timed effect).
    pub sticky: bool,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A window of text to match keys against: as written, and lowercased once (keys match
/// case-insensitively unless an entry says otherwise).
struct Hay {
    text: String,
    lower: String,
}

impl Hay {
    fn new(text: String) -> Hay {
        let lower = text.to_lowercase();
        Hay { text, lower }
    }
}

thread_local! {
    /// Regex keys compiled once per thread (a turn scans the same books again and again).
    static REGEXES: std::cell::RefCell<std::collections::HashMap<String, Option<std::rc::Rc<JsRegex>>>> =
        Default::default();
}

/// Whether the regex key `/source/flags` matches `hay` (a key that does not compile never
/// does; the log refuses such keys when a book is added).
fn regex_matches(key: &str, source: &str, flags: &str, hay: &str) -> bool {
    let compiled = REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        cache
            .entry(key.to_owned())
            .or_insert_with(|| JsRegex::compile(source, flags).ok().map(std::rc::Rc::new))
            .clone()
    });
    compiled.is_some_and(|r| r.test(hay).unwrap_or(false))
}

/// Whether `key` matches `hay` with `entry`'s options.
fn key_matches(key: &str, hay: &Hay, entry: &BookEntry) -> bool {
    if let Some((source, flags)) = regex_key(key) {
        return regex_matches(key, source, flags, &hay.text);
    }
    let key = key.trim();
    if key.is_empty() {
        return false;
    }
    let lowered;
    let (hay, key) = if entry.case_sensitive.unwrap_or(false) {
        (hay.text.as_str(), key)
    } else {
        lowered = key.to_lowercase();
        (hay.lower.as_str(), lowered.as_str())
    };
    if !entry.match_whole_words.unwrap_or(false) || key.split_whitespace().count() > 1 {
        return hay.contains(key);
    }
    hay.match_indices(key).any(|(at, m)| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + m.len()..].chars().next();
        before.is_none_or(|c| !is_word(c)) && after.is_none_or(|c| !is_word(c))
    })
}

/// The key by which `entry` activates on `hay`, if it does: a primary key that matches, its
/// secondary keys agreeing by its logic.
fn activation_key(entry: &BookEntry, hay: &Hay) -> Option<String> {
    let primary = entry.keys.iter().find(|k| key_matches(k, hay, entry))?;
    if entry.selective && !entry.secondary_keys.is_empty() {
        let hits = entry
            .secondary_keys
            .iter()
            .filter(|k| key_matches(k, hay, entry))
            .count();
        let all = entry.secondary_keys.len();
        let agrees = match entry.logic {
            SelectiveLogic::AndAny => hits > 0,
            SelectiveLogic::NotAll => hits < all,
            SelectiveLogic::NotAny => hits == 0,
            SelectiveLogic::AndAll => hits == all,
        };
        if !agrees {
            return None;
        }
    }
    Some(primary.clone())
}

/// Timed effects as a scan sees them (SillyTavern's `timedWorldInfo`, checked for the chat's
/// length: [`crate::lore::timers::check`]): entries held active, and entries cooling down, by
/// (book, entry index).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timed {
    /// Active whatever was said: no keys needed, past cooldown, delays until recursion and
    /// recursion exclusion; no probability drawn; first in their inclusion groups.
    pub sticky: HashSet<(u64, usize)>,
    /// Not active, whatever was said (unless sticky too).
    pub cooldown: HashSet<(u64, usize)>,
}

/// How a scan counts beyond keys: [`scan`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Scan<'a> {
    /// Draws for probabilities and inclusion groups (`None`: every entry passes its
    /// probability, and groups keep every member).
    pub seed: Option<u64>,
    /// Sticky and cooldown effects (`None`: none).
    pub timed: Option<&'a Timed>,
}

/// The entries of `books` that `messages` (the lines the speaker heard, oldest first)
/// activate by their keys, in activation order, with `delay` counted on the chat's length;
/// no probabilities, groups or timed effects ([`scan`] adds them).
pub fn activate(books: &[(u64, &Lorebook)], messages: &[&str]) -> Vec<BookHit> {
    scan(books, messages, Scan::default())
}

/// [`activate`], then SillyTavern's draws: an entry with `use_probability` below 100 stays if
/// its draw (in percent) is at most its `probability`; in each inclusion group (an entry may
/// name several, comma-separated) one entry stays: among those with `group_override`, the
/// highest order; else one drawn by `group_weight`. The draws come from `seed`: the same seed
/// gives the same entries (a prompt draws from the world's seed and position, so the same
/// world builds the same prompt).
pub fn activate_with(books: &[(u64, &Lorebook)], messages: &[&str], seed: u64) -> Vec<BookHit> {
    scan(
        books,
        messages,
        Scan {
            seed: Some(seed),
            timed: None,
        },
    )
}

/// One scan with SillyTavern's loop (`checkWorldInfo`): a first pass over the chat window,
/// then passes of recursion while activated entries add text (their books scanning
/// recursively), at most [`MAX_RECURSION`] of them. Every pass considers the entries not yet
/// active:
/// - skipped: disabled; `delay` above the chat's length; cooling down (unless sticky); with
///   `delay_until_recursion` in the first pass, or above the current level in a pass of
///   recursion (unless sticky); `exclude_recursion` in a pass of recursion (unless sticky);
/// - active: constant or sticky entries; the rest by their keys, against the window (and,
///   past the first pass, the recursion buffer);
/// - then the pass's inclusion groups (a sticky member wins; a group already represented
///   keeps none; an override; a draw by weight) and probabilities (sticky entries draw none;
///   an entry failing its draw is not considered again), with `how.seed`.
///
/// What the pass activated (and did not `prevent_recursion`) joins the recursion buffer. Delay
/// levels: the scan starts at the lowest; when it would stop with levels left and text in the
/// buffer, it goes on at the next level.
pub fn scan(books: &[(u64, &Lorebook)], messages: &[&str], how: Scan<'_>) -> Vec<BookHit> {
    let no_timers = Timed::default();
    let timed = how.timed.unwrap_or(&no_timers);
    let chat_len = messages.len();
    // One window per scan depth in use, built and lowercased once.
    let mut windows: HashMap<u32, Hay> = HashMap::new();
    let mut levels: Vec<u32> = Vec::new();
    for (_, book) in books {
        for e in &book.entries {
            let depth = e.scan_depth.unwrap_or(book.scan_depth);
            windows.entry(depth).or_insert_with(|| {
                // Newest first, as SillyTavern's scan buffer holds them.
                let from = messages.len().saturating_sub(depth as usize);
                let newest_first: Vec<&str> = messages[from..].iter().rev().copied().collect();
                Hay::new(newest_first.join("\n"))
            });
            if e.delay_until_recursion > 0 {
                levels.push(e.delay_until_recursion);
            }
        }
    }
    levels.sort_unstable();
    levels.dedup();
    let mut levels = levels.into_iter();
    let mut level = levels.next().unwrap_or(0);
    let mut hits: Vec<BookHit> = Vec::new();
    let mut done: HashSet<(u64, usize)> = HashSet::new();
    let mut buffer: Vec<String> = Vec::new();
    for pass in 0..=MAX_RECURSION {
        let recursion = pass > 0;
        // Each window with the recursion buffer, built when first needed in this pass.
        let recursed = buffer.join("\n");
        let mut hays: HashMap<u32, Hay> = HashMap::new();
        let mut now: Vec<BookHit> = Vec::new();
        for (id, book) in books {
            if recursion && !book.recursive_scanning {
                continue;
            }
            for (i, e) in book.entries.iter().enumerate() {
                if e.disabled || done.contains(&(*id, i)) || e.delay as usize > chat_len {
                    continue;
                }
                let sticky = timed.sticky.contains(&(*id, i));
                if !sticky
                    && (timed.cooldown.contains(&(*id, i))
                        || (!recursion && e.delay_until_recursion > 0)
                        || (recursion && e.delay_until_recursion > level)
                        || (recursion && e.exclude_recursion))
                {
                    continue;
                }
                let hit = |key| BookHit {
                    book: *id,
                    entry: i,
                    key,
                    recursion,
                    sticky,
                };
                if e.constant || sticky {
                    now.push(hit(None));
                    continue;
                }
                let depth = e.scan_depth.unwrap_or(book.scan_depth);
                let hay = if buffer.is_empty() {
                    &windows[&depth]
                } else {
                    hays.entry(depth).or_insert_with(|| {
                        Hay::new(format!("{}\n{recursed}", windows[&depth].text))
                    })
                };
                if let Some(key) = activation_key(e, hay) {
                    now.push(hit(Some(key)));
                }
            }
        }
        if let Some(seed) = how.seed {
            keep_group_winners(books, &mut now, &hits, seed, pass);
            now.retain(|h| {
                let e = entry_of(books, h);
                let passes = h.sticky
                    || !e.use_probability
                    || e.probability >= 100.0
                    || draw(seed, h.book, h.entry, 1) * 100.0 < e.probability;
                if !passes {
                    done.insert((h.book, h.entry));
                }
                passes
            });
        }
        let feeding: Vec<&str> = now
            .iter()
            .filter(|h| !entry_of(books, h).prevent_recursion)
            .map(|h| entry_of(books, h).content.as_str())
            .collect();
        let mut next = !feeding.is_empty();
        if !next
            && !buffer.is_empty()
            && let Some(l) = levels.next()
        {
            level = l;
            next = true;
        }
        let text = feeding.join("\n");
        for h in &now {
            done.insert((h.book, h.entry));
        }
        hits.extend(now);
        if !next {
            break;
        }
        if !text.is_empty() {
            buffer.push(text);
        }
    }
    hits
}

fn entry_of<'b>(books: &[(u64, &'b Lorebook)], h: &BookHit) -> &'b BookEntry {
    let (_, book) = books
        .iter()
        .find(|(id, _)| *id == h.book)
        .expect("a hit's book is among the books scanned");
    &book.entries[h.entry]
}

/// SillyTavern's inclusion groups over one pass's new entries `now` (`filterByInclusionGroups`):
/// per group, sticky members win (the rest go); a group an earlier pass already represented
/// keeps none; else one member stays: the highest order among those with `group_override`,
/// or one drawn by `group_weight`.
fn keep_group_winners(
    books: &[(u64, &Lorebook)],
    now: &mut Vec<BookHit>,
    earlier: &[BookHit],
    seed: u64,
    pass: usize,
) {
    let groups_of = |h: &BookHit| -> Vec<String> {
        entry_of(books, h)
            .group
            .split(',')
            .map(|g| g.trim().to_owned())
            .filter(|g| !g.is_empty())
            .collect()
    };
    let mut groups: Vec<String> = now.iter().flat_map(groups_of).collect();
    groups.sort();
    groups.dedup();
    let mut gone: HashSet<(u64, usize)> = HashSet::new();
    for (n, group) in groups.iter().enumerate() {
        let members: Vec<&BookHit> = now
            .iter()
            .filter(|h| !gone.contains(&(h.book, h.entry)) && groups_of(h).contains(group))
            .collect();
        let stickies: Vec<&BookHit> = members.iter().copied().filter(|h| h.sticky).collect();
        let winner: Option<(u64, usize)> = if !stickies.is_empty() {
            for h in &members {
                if !h.sticky {
                    gone.insert((h.book, h.entry));
                }
            }
            continue;
        } else if earlier.iter().any(|h| groups_of(h).contains(group)) {
            None
        } else if members.len() < 2 {
            continue;
        } else if let Some(w) = members
            .iter()
            .filter(|h| entry_of(books, h).group_override)
            .max_by_key(|h| entry_of(books, h).order)
        {
            Some((w.book, w.entry))
        } else {
            let weight = |h: &BookHit| entry_of(books, h).group_weight.max(0.0);
            let total: f64 = members.iter().map(|h| weight(h)).sum();
            let first = members[0];
            let what = 2 + ((pass as u64) << 32) + n as u64;
            let mut at = draw(seed, first.book, first.entry, what) * total;
            let mut chosen = members[members.len() - 1];
            for h in &members {
                at -= weight(h);
                if at < 0.0 {
                    chosen = h;
                    break;
                }
            }
            Some((chosen.book, chosen.entry))
        };
        for h in &members {
            if Some((h.book, h.entry)) != winner {
                gone.insert((h.book, h.entry));
            }
        }
    }
    now.retain(|h| !gone.contains(&(h.book, h.entry)));
}

/// A number in [0, 1) for `what` of entry `entry` of book `book`, from `seed`.
fn draw(seed: u64, book: u64, entry: usize, what: u64) -> f64 {
    let mut z = seed ^ book.rotate_left(17) ^ (entry as u64).rotate_left(33) ^ what;
    for _ in 0..2 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
    }
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(json: &str) -> Lorebook {
        Lorebook::from_json(json).unwrap()
    }

    fn active(b: &Lorebook, messages: &[&str]) -> Vec<usize> {
        let mut v: Vec<usize> = activate(&[(1, b)], messages)
            .iter()
            .map(|h| h.entry)
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn keys_logic_case_and_whole_words() {
        let b = book(
            r#"{"scan_depth": 2, "entries": [
                {"keys": ["dragon"], "content": "A"},
                {"keys": ["dragon"], "secondary_keys": ["fire", "ash"], "selective": true,
                 "extensions": {"selectiveLogic": 3}, "content": "B"},
                {"keys": ["dragon"], "secondary_keys": ["fire"], "selective": true,
                 "extensions": {"selectiveLogic": 2}, "content": "C"},
                {"keys": ["Salt"], "extensions": {"case_sensitive": true}, "content": "D"},
                {"keys": ["ash"], "extensions": {"match_whole_words": true}, "content": "E"},
                {"keys": ["/wyrm(s)?\\b/i"], "content": "F"},
                {"keys": ["x"], "constant": true, "content": "G"},
                {"keys": ["dragon"], "enabled": false, "content": "H"}
            ]}"#,
        );
        assert_eq!(active(&b, &["A dragon breathes fire."]), vec![0, 6]);
        assert_eq!(active(&b, &["A dragon, fire and ash!"]), vec![0, 1, 4, 6]);
        assert_eq!(active(&b, &["salt on the dragon"]), vec![0, 2, 6]);
        assert_eq!(active(&b, &["Salt", "washed away"]), vec![3, 6]);
        assert_eq!(
            active(&b, &["the cashier"]),
            vec![6],
            "whole words: cashier is not ash"
        );
        assert_eq!(active(&b, &["WYRMS above"]), vec![5, 6]);
        // Scan depth 2: a key three messages back is not seen.
        assert_eq!(active(&b, &["a dragon", "x", "y"]), vec![6]);
    }

    #[test]
    fn recursion_feeds_contents_back_and_honours_its_flags() {
        let b = book(
            r#"{"entries": [
                {"keys": ["letter"], "content": "The letter names the Ferryman."},
                {"keys": ["ferryman"], "content": "The Ferryman crosses at dawn."},
                {"keys": ["dawn"], "extensions": {"exclude_recursion": true}, "content": "x"},
                {"keys": ["crosses"], "content": "y", "extensions": {"prevent_recursion": true}}
            ]}"#,
        );
        let hits = activate(&[(1, &b)], &["She carries a letter."]);
        let got: Vec<(usize, bool)> = hits.iter().map(|h| (h.entry, h.recursion)).collect();
        assert_eq!(got, vec![(0, false), (1, true), (3, true)]);
        let flat = book(
            r#"{"recursive_scanning": false, "entries": [
            {"keys": ["letter"], "content": "The Ferryman."}, {"keys": ["ferryman"], "content": "z"}]}"#,
        );
        assert_eq!(active(&flat, &["a letter"]), vec![0]);
    }

    #[test]
    fn delayed_until_recursion_entries_wait_for_their_level() {
        let b = book(
            r#"{"entries": [
                {"keys": ["letter"], "content": "The letter names the Ferryman."},
                {"keys": ["letter"], "content": "A", "extensions": {"delayUntilRecursion": true}},
                {"keys": ["ferryman"], "content": "B", "extensions": {"delay_until_recursion": 2}},
                {"keys": ["dawn"], "content": "C", "extensions": {"delayUntilRecursion": 1}}
            ]}"#,
        );
        let hits = activate(&[(1, &b)], &["She carries a letter."]);
        let got: Vec<(usize, bool)> = hits.iter().map(|h| (h.entry, h.recursion)).collect();
        // Entry 1 matches the chat, yet waits for the first pass of recursion (level 1);
        // entry 2 waits for level 2, the pass after recursion stopped with text to scan.
        assert_eq!(got, vec![(0, false), (1, true), (2, true)]);
        // Nothing recursed (no entry activated by the chat): delayed entries never come.
        assert!(activate(&[(1, &b)], &["dawn"]).is_empty());
    }

    #[test]
    fn sticky_and_cooldown_entries_in_a_scan() {
        let b = book(
            r#"{"entries": [
                {"keys": ["bell"], "content": "A", "extensions": {"group": "g"}},
                {"keys": ["nothing said"], "content": "B", "extensions": {"group": "g"}},
                {"keys": ["bell"], "content": "C"}
            ]}"#,
        );
        let timed = Timed {
            sticky: [(1, 1)].into(),
            cooldown: [(1, 2)].into(),
        };
        let how = Scan {
            seed: Some(3),
            timed: Some(&timed),
        };
        let hits = scan(&[(1, &b)], &["a bell"], how);
        let got: Vec<(usize, bool)> = hits.iter().map(|h| (h.entry, h.sticky)).collect();
        // B is sticky (no key needed) and wins its group over A; C cools down.
        assert_eq!(got, vec![(1, true)]);
    }

    #[test]
    fn delays_probabilities_and_groups() {
        let b = book(
            r#"{"entries": [
                {"keys": ["bell"], "content": "A", "extensions": {"delay": 3}},
                {"keys": ["bell"], "content": "B", "extensions": {"probability": 0, "useProbability": true}},
                {"keys": ["bell"], "content": "C", "extensions": {"probability": 100}},
                {"keys": ["bell"], "content": "D", "extensions": {"group": "door", "group_weight": 1}},
                {"keys": ["bell"], "content": "E", "extensions": {"group": "door, yard", "group_weight": 1}},
                {"keys": ["bell"], "content": "F", "insertion_order": 5, "extensions": {"group": "yard", "group_override": true}},
                {"keys": ["bell"], "content": "G", "insertion_order": 9, "extensions": {"group": "yard", "group_override": true}}
            ]}"#,
        );
        let kept = |chat: usize, seed: u64| -> Vec<usize> {
            let mut said = vec!["..."; chat - 1];
            said.push("a bell rings");
            activate_with(&[(1, &b)], &said, seed)
                .iter()
                .map(|h| h.entry)
                .collect()
        };
        // Delay 3: not in a chat of one message; in one of three.
        assert!(!kept(1, 1).contains(&0) && kept(3, 1).contains(&0));
        // Probability 0 never, 100 always.
        assert!((0..50).all(|s| !kept(3, s).contains(&1) && kept(3, s).contains(&2)));
        // "yard": G overrides (the highest order with override); "door": D or E by weight,
        // but E lost "yard" to G first or D stands alone: never both.
        for s in 0..50 {
            let k = kept(3, s);
            assert!(k.contains(&6) && !k.contains(&5), "{k:?}");
            assert!(!(k.contains(&3) && k.contains(&4)), "{k:?}");
        }
        assert_eq!(kept(3, 7), kept(3, 7), "the same seed, the same entries");
    }
}
