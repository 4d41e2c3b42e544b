//! Lorebooks as the community writes them (docs/cards.md, "Lorebooks"): a card's
//! `character_book`, a standalone `lorebook_v3`, and SillyTavern's World Info JSON (its
//! `entries` object, in the camelCase of World Info files; a card's entries carry the same
//! settings in snake_case under `extensions`). All three read into one record; the JSON as
//! given is kept for export. Activation is [`crate::lore::book`].

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most entries one lorebook holds.
pub const MAX_BOOK_ENTRIES: usize = 100_000;
/// The largest lorebook JSON read, in bytes.
pub const MAX_BOOK_BYTES: usize = 32 << 20;
/// The most keys one entry holds.
pub const MAX_ENTRY_KEYS: usize = 256;

/// How an entry's secondary keys combine with its primary ones (SillyTavern's
/// `selectiveLogic`: 0, 1, 2, 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectiveLogic {
    /// Any secondary key matches too.
    #[default]
    AndAny,
    /// Not every secondary key matches.
    NotAll,
    /// No secondary key matches.
    NotAny,
    /// Every secondary key matches.
    AndAll,
}

/// One entry of a lorebook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BookEntry {
    /// Its id (World Info's `uid`, a card's `id`, else its place in the book).
    pub id: u64,
    /// Its name or comment.
    pub comment: String,
    /// Primary keys: a key is a word or phrase, or `/regex/flags` (JavaScript's regular
    /// expressions, through the fact language's translation).
    pub keys: Vec<String>,
    /// Secondary keys, combined by `logic` when `selective`.
    pub secondary_keys: Vec<String>,
    /// Whether the secondary keys count.
    pub selective: bool,
    /// How they count.
    pub logic: SelectiveLogic,
    /// What is inserted when it activates.
    pub content: String,
    /// Always active.
    pub constant: bool,
    /// Never active.
    pub disabled: bool,
    /// Insertion order (higher: kept first when the budget is short, placed later).
    pub order: i64,
    /// SillyTavern's position (0 before the character's description, 1 after, 2 and 3 the
    /// author's note, 4 at a depth in the chat, 5 and 6 example messages).
    pub position: i64,
    /// The depth of position 4.
    pub depth: i64,
    /// Messages scanned for it (`None`: the book's).
    pub scan_depth: Option<u32>,
    /// Keys match case-sensitively (`None`: no).
    pub case_sensitive: Option<bool>,
    /// Keys match whole words only (`None`: no).
    pub match_whole_words: Option<bool>,
    /// Not matched against what recursion adds.
    pub exclude_recursion: bool,
    /// Its content does not feed recursion.
    pub prevent_recursion: bool,
    /// Chance of activating when matched, in percent (when `use_probability`).
    pub probability: f64,
    /// Whether `probability` applies.
    pub use_probability: bool,
    /// Its inclusion group(s), comma-separated.
    pub group: String,
    /// Its weight in the group.
    pub group_weight: f64,
    /// It wins its groups over entries without it (the highest order among those with it).
    #[serde(default)]
    pub group_override: bool,
    /// Messages it stays active after activating.
    pub sticky: u32,
    /// Messages it cannot activate after it did.
    pub cooldown: u32,
    /// Messages the chat must have before it can activate.
    pub delay: u32,
    /// Held back until recursion (SillyTavern's `delayUntilRecursion`: `true` is level 1, a
    /// number its level): it activates only in a pass of recursion at that level or later;
    /// 0: not held back.
    #[serde(default)]
    pub delay_until_recursion: u32,
}

/// Which timed effect holds an entry (SillyTavern's `timedWorldInfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// Active whatever is said.
    Sticky,
    /// Not active whatever is said.
    Cooldown,
}

/// A lorebook entry's timed effect for one character, counted in the messages that character
/// heard: from `start` (the chat's length when it was set) to `end` (exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoreTimer {
    /// The book.
    pub book: u64,
    /// The entry (its index in the book).
    pub entry: u32,
    /// Sticky or cooldown.
    pub kind: TimerKind,
    /// The chat's length when it was set.
    pub start: u32,
    /// The chat's length at which it ends.
    pub end: u32,
    /// Kept even when the chat has not grown past `start` (a cooldown a sticky's end began);
    /// an unprotected timer set at the chat's current length is dropped when the prompt is
    /// built again at that length (SillyTavern: a regenerated reply starts afresh).
    pub protected: bool,
}

/// A lorebook: its settings and entries, and its JSON as given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lorebook {
    /// Its name.
    pub name: String,
    /// Messages scanned (SillyTavern's default, 2, when not given).
    pub scan_depth: u32,
    /// The most tokens its entries take in a prompt (`None`: the prompt's lore budget).
    pub token_budget: Option<u32>,
    /// Whether activated entries' contents are scanned again.
    pub recursive_scanning: bool,
    /// The entries, in the book's order.
    pub entries: Vec<BookEntry>,
    /// Its JSON as given.
    pub json: String,
}

/// `key` as `/source/flags`, if it is written so (a regular-expression key).
pub fn regex_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (source, flags) = (&rest[..end], &rest[end + 1..]);
    (!source.is_empty() && flags.chars().all(|c| c.is_ascii_alphabetic()))
        .then_some((source, flags))
}

fn bad<T>(reason: impl Into<String>) -> Result<T> {
    Err(Error::invalid("lorebook", reason.into()))
}

/// A field of `o` by any of `names`.
fn get<'a>(o: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|n| o.get(*n))
        .filter(|v| !v.is_null())
}

fn string(o: &Map<String, Value>, names: &[&str]) -> Result<String> {
    match get(o, names) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => bad(format!("`{}` is not a string", names[0])),
    }
}

fn boolean(o: &Map<String, Value>, names: &[&str]) -> Result<Option<bool>> {
    match get(o, names) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => bad(format!("`{}` is not true or false", names[0])),
    }
}

fn number(o: &Map<String, Value>, names: &[&str]) -> Result<Option<f64>> {
    match get(o, names) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.is_finite() => Ok(Some(n)),
            _ => bad(format!("`{}` is not a number", names[0])),
        },
    }
}

fn keys(o: &Map<String, Value>, names: &[&str]) -> Result<Vec<String>> {
    let list = match get(o, names) {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        // World Info files of older versions give keys as one comma-separated string.
        Some(Value::String(s)) => {
            return Ok(s
                .split(',')
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .collect());
        }
        Some(_) => return bad(format!("`{}` is not a list of keys", names[0])),
    };
    if list.len() > MAX_ENTRY_KEYS {
        return bad(format!("an entry has more than {MAX_ENTRY_KEYS} keys"));
    }
    list.iter()
        .map(|k| match k {
            Value::String(s) => Ok(s.clone()),
            _ => bad(format!("a key of `{}` is not a string", names[0])),
        })
        .filter(|k| k.as_ref().map_or(true, |k| !k.trim().is_empty()))
        .collect()
}

fn count(o: &Map<String, Value>, names: &[&str]) -> Result<u32> {
    Ok(number(o, names)?.map_or(0, |n| n.clamp(0.0, f64::from(u32::MAX)) as u32))
}

/// An entry from its object: the fields of World Info (camelCase), of a card's entry
/// (snake_case, with SillyTavern's settings under `extensions`), whichever are present.
fn entry(index: usize, o: &Map<String, Value>) -> Result<BookEntry> {
    let empty = Map::new();
    let ext = match o.get("extensions") {
        Some(Value::Object(e)) => e,
        None | Some(Value::Null) => &empty,
        Some(_) => return bad("an entry's `extensions` is not an object"),
    };
    // A setting from the entry, else from its extensions (a card's entries).
    let either =
        |names: &[&str]| -> &Map<String, Value> { if get(o, names).is_some() { o } else { ext } };
    let n = |names: &[&str]| number(either(names), names);
    let b = |names: &[&str]| boolean(either(names), names);
    let logic = match n(&["selectiveLogic", "selective_logic"])? {
        None => SelectiveLogic::AndAny,
        Some(v) => match v as i64 {
            0 => SelectiveLogic::AndAny,
            1 => SelectiveLogic::NotAll,
            2 => SelectiveLogic::NotAny,
            3 => SelectiveLogic::AndAll,
            other => return bad(format!("selectiveLogic {other} is not 0, 1, 2 or 3")),
        },
    };
    let position = match get(o, &["position"]) {
        // A card's entry: "before_char" or "after_char" (SillyTavern's own number, when it
        // wrote one, is in the extensions).
        Some(Value::String(p)) => match number(ext, &["position"])? {
            Some(v) => v as i64,
            None if p == "after_char" => 1,
            None => 0,
        },
        _ => n(&["position"])?.unwrap_or(0.0) as i64,
    };
    let enabled = boolean(o, &["enabled"])?;
    let disabled = boolean(o, &["disable"])?.unwrap_or(false) || enabled == Some(false);
    let probability = n(&["probability"])?.unwrap_or(100.0);
    if !(0.0..=100.0).contains(&probability) {
        return bad(format!("probability {probability} is not 0 to 100"));
    }
    let scan_depth = n(&["scanDepth", "scan_depth"])?.map(|v| v.clamp(0.0, 1000.0) as u32);
    let content = string(o, &["content"])?;
    Ok(BookEntry {
        id: number(o, &["uid", "id"])?.map_or(index as u64, |v| v.max(0.0) as u64),
        comment: string(o, &["comment", "name"])?,
        keys: keys(o, &["key", "keys"])?,
        secondary_keys: keys(o, &["keysecondary", "secondary_keys"])?,
        selective: b(&["selective"])?.unwrap_or(true),
        logic,
        content,
        constant: b(&["constant"])?.unwrap_or(false),
        disabled,
        order: n(&["order", "insertion_order"])?.unwrap_or(100.0) as i64,
        position,
        depth: n(&["depth"])?.unwrap_or(4.0) as i64,
        scan_depth,
        case_sensitive: b(&["caseSensitive", "case_sensitive"])?,
        match_whole_words: b(&["matchWholeWords", "match_whole_words"])?,
        exclude_recursion: b(&["excludeRecursion", "exclude_recursion"])?.unwrap_or(false),
        prevent_recursion: b(&["preventRecursion", "prevent_recursion"])?.unwrap_or(false),
        probability,
        use_probability: b(&["useProbability", "use_probability"])?.unwrap_or(true),
        group: string(either(&["group"]), &["group"])?,
        group_weight: n(&["groupWeight", "group_weight"])?.unwrap_or(100.0),
        group_override: b(&["groupOverride", "group_override"])?.unwrap_or(false),
        sticky: count(either(&["sticky"]), &["sticky"])?,
        cooldown: count(either(&["cooldown"]), &["cooldown"])?,
        delay: count(either(&["delay"]), &["delay"])?,
        delay_until_recursion: match get(
            either(&["delayUntilRecursion", "delay_until_recursion"]),
            &["delayUntilRecursion", "delay_until_recursion"],
        ) {
            None | Some(Value::Bool(false)) => 0,
            Some(Value::Bool(true)) => 1,
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() => n.clamp(0.0, f64::from(u32::MAX)) as u32,
                _ => return bad("`delayUntilRecursion` is not true, false or a level"),
            },
        },
    })
}

impl Lorebook {
    /// Reads a lorebook from its JSON: SillyTavern's World Info (`{"entries": {"0": {...}}}`),
    /// a `lorebook_v3` (`{"spec": "lorebook_v3", "data": {...}}`), or a card's
    /// `character_book` (`{"entries": [...]}`). Refused (`invalid lorebook`) when it is none
    /// of them, too large, holds more than [`MAX_BOOK_ENTRIES`] entries, or a field has the
    /// wrong type.
    pub fn from_json(text: &str) -> Result<Lorebook> {
        if text.len() > MAX_BOOK_BYTES {
            return bad(format!(
                "the lorebook is larger than {MAX_BOOK_BYTES} bytes"
            ));
        }
        let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| Error::invalid("lorebook", format!("not JSON: {e}")))?;
        let mut book = Lorebook::from_value(&value)?;
        book.json = text.to_owned();
        Ok(book)
    }

    /// [`Lorebook::from_json`] of a value already parsed (a card's `character_book`); its
    /// `json` is the value's text.
    pub fn from_value(value: &Value) -> Result<Lorebook> {
        let Some(root) = value.as_object() else {
            return bad("a lorebook is a JSON object");
        };
        let body = match root.get("spec").and_then(Value::as_str) {
            Some("lorebook_v3") => match root.get("data") {
                Some(Value::Object(d)) => d,
                _ => return bad("a lorebook_v3 has its fields in a `data` object"),
            },
            Some(other) => return bad(format!("{other:?} is not a lorebook spec")),
            None => root,
        };
        let listed: Vec<&Value> = match body.get("entries") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(Value::Object(o)) => {
                // World Info: keyed by uid ("0", "1", ...), in key order of the numbers.
                let mut keyed: Vec<(u64, &Value)> = o
                    .iter()
                    .map(|(k, v)| (k.parse::<u64>().unwrap_or(u64::MAX), v))
                    .collect();
                keyed.sort_by_key(|(k, _)| *k);
                keyed.into_iter().map(|(_, v)| v).collect()
            }
            _ => return bad("a lorebook has `entries` (a list, or World Info's object)"),
        };
        if listed.len() > MAX_BOOK_ENTRIES {
            return bad(format!(
                "{} entries; a lorebook holds at most {MAX_BOOK_ENTRIES}",
                listed.len()
            ));
        }
        let entries = listed
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Object(o) => entry(i, o).map_err(|e| match e {
                    Error::Invalid { reason, .. } => {
                        Error::invalid("lorebook", format!("entry {i}: {reason}"))
                    }
                    other => other,
                }),
                _ => bad(format!("entry {i} is not an object")),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lorebook {
            name: string(body, &["name"])?,
            scan_depth: number(body, &["scan_depth", "scanDepth"])?
                .map_or(2, |v| v.clamp(0.0, 1000.0) as u32),
            token_budget: number(body, &["token_budget", "tokenBudget"])?
                .map(|v| v.clamp(0.0, f64::from(u32::MAX)) as u32),
            recursive_scanning: boolean(body, &["recursive_scanning", "recursiveScanning"])?
                .unwrap_or(true),
            entries,
            json: value.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_info_and_card_books_read_the_same_settings() {
        let wi = Lorebook::from_json(
            r#"{"entries": {"1": {"uid": 1, "key": ["dragon", "/wyrms?/i"], "keysecondary": ["fire"],
                "selectiveLogic": 2, "content": "Dragons fear salt.", "order": 50, "position": 4,
                "caseSensitive": true, "matchWholeWords": true, "excludeRecursion": true,
                "scanDepth": 5, "group": "beasts", "sticky": 2}, "0": {"uid": 0, "key": "inn, tavern",
                "content": "The inn.", "constant": true, "disable": true}}}"#,
        )
        .unwrap();
        assert_eq!(wi.entries[0].keys, vec!["inn", "tavern"]);
        assert!(wi.entries[0].constant && wi.entries[0].disabled);
        let e = &wi.entries[1];
        assert_eq!(
            (e.logic, e.order, e.position, e.scan_depth),
            (SelectiveLogic::NotAny, 50, 4, Some(5))
        );
        assert_eq!(
            (e.case_sensitive, e.match_whole_words, e.exclude_recursion),
            (Some(true), Some(true), true)
        );
        assert_eq!((e.group.as_str(), e.sticky), ("beasts", 2));
        let card = Lorebook::from_json(
            r#"{"name": "Marsh", "scan_depth": 4, "token_budget": 500, "entries": [{"keys": ["dragon"],
                "secondary_keys": ["fire"], "content": "Dragons fear salt.", "enabled": true,
                "insertion_order": 50, "position": "after_char", "selective": true,
                "extensions": {"selectiveLogic": 2, "position": 4, "case_sensitive": true,
                "match_whole_words": true, "exclude_recursion": true, "scan_depth": 5,
                "group": "beasts", "sticky": 2}}]}"#,
        )
        .unwrap();
        let c = &card.entries[0];
        assert_eq!(
            (c.logic, c.order, c.position, c.scan_depth),
            (e.logic, 50, 4, Some(5))
        );
        assert_eq!(
            (c.case_sensitive, c.match_whole_words),
            (Some(true), Some(true))
        );
        assert_eq!((card.scan_depth, card.token_budget), (4, Some(500)));
        let v3 =
            Lorebook::from_json(r#"{"spec": "lorebook_v3", "data": {"entries": []}}"#).unwrap();
        assert!(v3.entries.is_empty());
    }

    #[test]
    fn what_is_not_a_lorebook_is_named() {
        for (bad, why) in [
            ("[]", "a JSON object"),
            ("{}", "`entries`"),
            (r#"{"entries": [5]}"#, "entry 0 is not an object"),
            (
                r#"{"entries": [{"keys": [1]}]}"#,
                "entry 0: a key of `key` is not a string",
            ),
            (
                r#"{"entries": [{"selectiveLogic": 7}]}"#,
                "not 0, 1, 2 or 3",
            ),
            (r#"{"entries": [{"probability": 150}]}"#, "0 to 100"),
            (
                r#"{"spec": "lorebook_v9", "data": {}}"#,
                "not a lorebook spec",
            ),
        ] {
            let e = Lorebook::from_json(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
