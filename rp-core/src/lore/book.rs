//! Lorebook activation with SillyTavern's World Info semantics (docs/cards.md, "Lorebooks"):
//! which entries of which books come into a speaker's prompt, from the lines it heard.
//!
//! Implemented: constant and disabled entries; primary keys (any matches), secondary keys under
//! AND ANY / NOT ALL / NOT ANY / AND ALL; `/regex/flags` keys through the fact language's
//! JavaScript-regex translation; case-sensitive and whole-word options (SillyTavern's rule: a
//! key of one word matches between non-word characters, a key of several words anywhere); the
//! scan depth in messages, the entry's over the book's, the window newest message first as
//! SillyTavern's scan buffer holds it; recursion (each level scans an entry's window with
//! every content recursion added so far, `exclude_recursion` and `prevent_recursion`
//! honoured, ten levels at most). `tests/lore_vs_node.rs` checks all of it against a
//! transcription of SillyTavern's matching in JavaScript.
//! Then, as SillyTavern does: an entry's `delay` (the chat must have that many messages), its
//! probability (a draw per entry), and inclusion groups (one winner per group: an entry with
//! `group_override` first, the highest order among those; else drawn by `group_weight`). The
//! draws come from `seed` ([`activate_with`]): the same seed, the same entries. Sticky and
//! cooldown are not yet (docs/cards.md, "Not yet").

use crate::facts::JsRegex;
use crate::model::{BookEntry, Lorebook, SelectiveLogic, regex_key};

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
    /// Whether it matched what recursion added rather than what was said.
    pub recursion: bool,
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

/// The entries of `books` that `messages` (the lines the speaker heard, oldest first)
/// activate by their keys, in activation order (constant and matched entries, then each level
/// of recursion), before delays, probabilities and groups ([`activate_with`]).
pub fn activate(books: &[(u64, &Lorebook)], messages: &[&str]) -> Vec<BookHit> {
    let mut hits: Vec<BookHit> = Vec::new();
    // One window per scan depth in use, built and lowercased once.
    let mut windows: std::collections::HashMap<u32, Hay> = Default::default();
    for (_, book) in books {
        for e in &book.entries {
            let depth = e.scan_depth.unwrap_or(book.scan_depth);
            windows.entry(depth).or_insert_with(|| {
                // Newest first, as SillyTavern's scan buffer holds them.
                let from = messages.len().saturating_sub(depth as usize);
                let newest_first: Vec<&str> = messages[from..].iter().rev().copied().collect();
                Hay::new(newest_first.join("\n"))
            });
        }
    }
    for (id, book) in books {
        for (i, e) in book.entries.iter().enumerate() {
            if e.disabled {
                continue;
            }
            if e.constant {
                hits.push(BookHit {
                    book: *id,
                    entry: i,
                    key: None,
                    recursion: false,
                });
                continue;
            }
            let hay = &windows[&e.scan_depth.unwrap_or(book.scan_depth)];
            if let Some(key) = activation_key(e, hay) {
                hits.push(BookHit {
                    book: *id,
                    entry: i,
                    key: Some(key),
                    recursion: false,
                });
            }
        }
    }
    // Recursion: what activated entries say may activate others, level by level; each level
    // scans the entry's window with everything recursion added so far (SillyTavern's
    // recursion buffer).
    let mut fed = 0;
    let mut added: Vec<String> = Vec::new();
    for _ in 0..MAX_RECURSION {
        let more: Vec<String> = hits[fed..]
            .iter()
            .filter_map(|h| {
                let (_, book) = books.iter().find(|(id, _)| *id == h.book)?;
                let e = &book.entries[h.entry];
                (book.recursive_scanning && !e.prevent_recursion).then(|| e.content.clone())
            })
            .collect();
        fed = hits.len();
        if more.is_empty() {
            break;
        }
        added.extend(more);
        let recursed = added.join("\n");
        let mut hays: std::collections::HashMap<u32, Hay> = Default::default();
        let before = hits.len();
        for (id, book) in books {
            if !book.recursive_scanning {
                continue;
            }
            for (i, e) in book.entries.iter().enumerate() {
                if e.disabled || e.constant || e.exclude_recursion {
                    continue;
                }
                if hits.iter().any(|h| h.book == *id && h.entry == i) {
                    continue;
                }
                let depth = e.scan_depth.unwrap_or(book.scan_depth);
                let hay = hays
                    .entry(depth)
                    .or_insert_with(|| Hay::new(format!("{}\n{recursed}", windows[&depth].text)));
                if let Some(key) = activation_key(e, hay) {
                    hits.push(BookHit {
                        book: *id,
                        entry: i,
                        key: Some(key),
                        recursion: true,
                    });
                }
            }
        }
        if hits.len() == before {
            break;
        }
    }
    hits
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

/// [`activate`], then SillyTavern's last steps: entries whose `delay` the chat has not reached
/// (`chat_len` messages) are dropped; an entry with `use_probability` below 100 stays if its
/// draw (in percent) is at most its `probability`; in each inclusion group (an entry may name
/// several, comma-separated) one entry stays: among those with `group_override`, the highest
/// order; else one drawn by `group_weight`. The draws come from `seed`: the same seed gives
/// the same entries (a prompt draws from the world's seed and position, so the same world
/// builds the same prompt).
pub fn activate_with(
    books: &[(u64, &Lorebook)],
    messages: &[&str],
    chat_len: usize,
    seed: u64,
) -> Vec<BookHit> {
    let entry = |h: &BookHit| -> &BookEntry {
        let (_, book) = books
            .iter()
            .find(|(id, _)| *id == h.book)
            .expect("a hit's book");
        &book.entries[h.entry]
    };
    let mut hits: Vec<BookHit> = activate(books, messages)
        .into_iter()
        .filter(|h| {
            let e = entry(h);
            if (e.delay as usize) > chat_len {
                return false;
            }
            !(e.use_probability
                && e.probability < 100.0
                && draw(seed, h.book, h.entry, 1) * 100.0 >= e.probability)
        })
        .collect();
    let mut groups: Vec<String> = hits
        .iter()
        .flat_map(|h| entry(h).group.split(',').map(|g| g.trim().to_owned()))
        .filter(|g| !g.is_empty())
        .collect();
    groups.sort();
    groups.dedup();
    for (n, group) in groups.iter().enumerate() {
        let members: Vec<usize> = (0..hits.len())
            .filter(|i| entry(&hits[*i]).group.split(',').any(|g| g.trim() == group))
            .collect();
        if members.len() < 2 {
            continue;
        }
        let overriding: Vec<usize> = members
            .iter()
            .copied()
            .filter(|i| entry(&hits[*i]).group_override)
            .collect();
        let winner = if let Some(w) = overriding
            .iter()
            .copied()
            .max_by_key(|i| entry(&hits[*i]).order)
        {
            w
        } else {
            let total: f64 = members
                .iter()
                .map(|i| entry(&hits[*i]).group_weight.max(0.0))
                .sum();
            let first = &hits[members[0]];
            let mut at = draw(seed, first.book, first.entry, 2 + n as u64) * total;
            let mut chosen = members[members.len() - 1];
            for i in &members {
                at -= entry(&hits[*i]).group_weight.max(0.0);
                if at < 0.0 {
                    chosen = *i;
                    break;
                }
            }
            chosen
        };
        let losers: Vec<usize> = members.into_iter().filter(|i| *i != winner).collect();
        let mut index = 0;
        hits.retain(|_| {
            let keep = !losers.contains(&index);
            index += 1;
            keep
        });
    }
    hits
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
            activate_with(&[(1, &b)], &["a bell rings"], chat, seed)
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
