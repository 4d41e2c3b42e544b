//! Lore activation: entities whose names, aliases or `keywords:` appear in what a speaker
//! recently witnessed are loaded into its prompt as short summaries.
//!
//! Every key of every entity is matched in one pass over the window (Aho-Corasick), ASCII
//! letters case-insensitively, and only as whole words (the characters either side of a match
//! are not letters or digits). Keys come from the entity's name, its aliases, and a
//! `keywords: a, b, c` line of its fact sheet. The summary is its `summary: ...` line if it
//! has one, else its first prose fact, cut at [`SUMMARY_CHARS`] characters.

use crate::log::World;
use crate::model::EntityId;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// The longest summary, in characters.
pub const SUMMARY_CHARS: usize = 240;

/// One entity that can be activated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoreEntry {
    /// The entity.
    pub entity: EntityId,
    /// Its name.
    pub name: String,
    /// What is loaded when it activates.
    pub summary: String,
}

/// An entity activated by a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activated {
    /// Index into [`LoreIndex::entries`].
    pub entry: usize,
    /// The key that matched last in the window.
    pub key: String,
    /// Byte offset of that match: later means more recent.
    pub at: usize,
}

/// The keys of every entity, compiled into one automaton. Built from a world; rebuilt when
/// entities change.
#[derive(Clone, Debug)]
pub struct LoreIndex {
    entries: Vec<LoreEntry>,
    /// For each pattern of the automaton: its entry and its text.
    keys: Vec<(usize, String)>,
    automaton: Option<AhoCorasick>,
}

impl LoreIndex {
    /// The lore of every entity of `world`.
    pub fn build(world: &World) -> LoreIndex {
        LoreIndex::from_entries(world.entities().map(|e| {
            let lines = e.facts.lines();
            let mut keys: Vec<String> = vec![e.name.clone()];
            keys.extend(e.aliases.iter().cloned());
            let mut summary = None;
            let mut first_prose = None;
            for line in lines {
                let t = line.trim();
                if let Some(rest) = strip_key(t, "keywords") {
                    keys.extend(rest.split(',').map(|k| k.trim().to_string()));
                } else if let Some(rest) = strip_key(t, "summary") {
                    summary = Some(rest.trim().to_string());
                } else if first_prose.is_none() && !t.is_empty() && !t.starts_with('$') {
                    first_prose = Some(t.to_string());
                }
            }
            let summary = summary.or(first_prose).unwrap_or_default();
            (
                LoreEntry {
                    entity: e.id,
                    name: e.name.clone(),
                    summary: cut(&summary, SUMMARY_CHARS),
                },
                keys,
            )
        }))
    }

    /// An index of `entries`, each with its keys (empty keys are ignored).
    pub fn from_entries(entries: impl IntoIterator<Item = (LoreEntry, Vec<String>)>) -> LoreIndex {
        let mut out = Vec::new();
        let mut keys = Vec::new();
        for (entry, ks) in entries {
            let i = out.len();
            out.push(entry);
            for k in ks {
                let k = k.trim();
                if !k.is_empty() {
                    keys.push((i, k.to_string()));
                }
            }
        }
        let automaton = if keys.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(keys.iter().map(|(_, k)| k.as_str()))
                .ok()
        };
        LoreIndex {
            entries: out,
            keys,
            automaton,
        }
    }

    /// The entries.
    pub fn entries(&self) -> &[LoreEntry] {
        &self.entries
    }

    /// How many keys the automaton holds.
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// The entries whose keys occur in `window` as whole words, most recently mentioned first.
    pub fn scan(&self, window: &str) -> Vec<Activated> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        // For each entry, its latest whole-word match.
        let mut latest: Vec<Option<(usize, u32)>> = vec![None; self.entries.len()];
        let bytes = window.as_bytes();
        for m in ac.find_overlapping_iter(window) {
            let (s, e) = (m.start(), m.end());
            if !word_edge(window, bytes, s, true) || !word_edge(window, bytes, e, false) {
                continue;
            }
            let p = m.pattern().as_usize();
            let entry = self.keys[p].0;
            if latest[entry].is_none_or(|(at, _)| s >= at) {
                latest[entry] = Some((s, p as u32));
            }
        }
        let mut out: Vec<Activated> = latest
            .into_iter()
            .enumerate()
            .filter_map(|(entry, hit)| {
                hit.map(|(at, p)| Activated {
                    entry,
                    key: self.keys[p as usize].1.clone(),
                    at,
                })
            })
            .collect();
        out.sort_by(|a, b| b.at.cmp(&a.at).then(a.entry.cmp(&b.entry)));
        out
    }
}

/// Whether the match edge at byte `at` is a word boundary: the character before (`start`) or
/// at (`!start`) `at` is not alphanumeric.
fn word_edge(text: &str, bytes: &[u8], at: usize, start: bool) -> bool {
    let c = if start {
        if at == 0 {
            return true;
        }
        if bytes[at - 1].is_ascii() {
            Some(bytes[at - 1] as char)
        } else {
            text[..at].chars().next_back()
        }
    } else {
        match bytes.get(at) {
            None => return true,
            Some(b) if b.is_ascii() => Some(*b as char),
            Some(_) => text[at..].chars().next(),
        }
    };
    c.is_none_or(|c| !c.is_alphanumeric())
}

/// `rest` of a `key: rest` line whose key is `key` (any case).
fn strip_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let (k, rest) = line.split_once(':')?;
    k.trim().eq_ignore_ascii_case(key).then_some(rest)
}

/// `text` cut to at most `chars` characters, with an ellipsis when cut.
pub(crate) fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(entries: &[(&str, &[&str])]) -> LoreIndex {
        LoreIndex::from_entries(entries.iter().enumerate().map(|(i, (name, keys))| {
            (
                LoreEntry {
                    entity: EntityId(i as u64 + 1),
                    name: name.to_string(),
                    summary: format!("about {name}"),
                },
                keys.iter().map(|k| k.to_string()).collect(),
            )
        }))
    }

    #[test]
    fn keys_match_whole_words_in_any_ascii_case_most_recent_first() {
        let ix = index(&[
            ("Ferryman", &["Ferryman", "the heron seal"]),
            ("Marsh", &["marsh"]),
            ("Ann", &["Ann"]),
        ]);
        let hits =
            ix.scan("Who is the FERRYMAN? Lights on the Marsh. Annual fair. The heron seal!");
        let names: Vec<_> = hits
            .iter()
            .map(|h| ix.entries()[h.entry].name.as_str())
            .collect();
        // "Annual" is not "Ann"; the Ferryman was named last through its keyword.
        assert_eq!(names, ["Ferryman", "Marsh"]);
        assert_eq!(hits[0].key, "the heron seal");
    }

    #[test]
    fn overlapping_keys_all_count_and_non_ascii_edges_are_words() {
        let ix = index(&[
            ("Old Tom", &["Old Tom"]),
            ("Tom", &["Tom"]),
            ("Zoë", &["Zoë"]),
        ]);
        let hits = ix.scan("«Old Tom» and Zoë.");
        assert_eq!(hits.len(), 3);
        assert!(ix.scan("Tomás and Zoëlle").is_empty());
    }

    #[test]
    fn an_empty_index_or_window_activates_nothing() {
        assert!(index(&[]).scan("anything").is_empty());
        assert!(index(&[("A", &["", "  "])]).scan("A").is_empty());
        assert!(index(&[("Mira", &["Mira"])]).scan("").is_empty());
    }

    #[test]
    fn summaries_are_cut_at_a_character_boundary() {
        assert_eq!(cut("héllo world", 5), "héllo…");
        assert_eq!(cut("short", 10), "short");
    }
}
