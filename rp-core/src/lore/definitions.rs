//! Entity definitions: the kinds entities declare in their own facts, so a world needs no
//! schema to be listed by kind. A fact line declares a kind when it reads `is a KIND` or
//! `is an KIND` (optionally after the entity's own name: `Mira is a bartender`), or
//! `kind: KIND`, `type: KIND`, `definition: KIND`. The kind is lower-cased and ends at the first
//! punctuation or relative clause (`is a sailor, retired` and `is a sailor who drinks` both
//! declare `sailor`), at most four words.

use crate::model::{Entity, EntityId};
use std::collections::BTreeMap;

/// Each kind, with the entities that declare it (in id order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefinitionIndex {
    kinds: BTreeMap<String, Vec<EntityId>>,
}

impl DefinitionIndex {
    /// The kinds `entities` declare.
    pub fn build<'a>(entities: impl IntoIterator<Item = &'a Entity>) -> DefinitionIndex {
        let mut kinds: BTreeMap<String, Vec<EntityId>> = BTreeMap::new();
        for e in entities {
            for d in definitions_of(e) {
                kinds.entry(d).or_default().push(e.id);
            }
        }
        for ids in kinds.values_mut() {
            ids.sort_unstable();
        }
        DefinitionIndex { kinds }
    }

    /// The kinds, in name order.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.kinds.keys().map(String::as_str)
    }

    /// The entities of `kind`, in id order.
    pub fn entities(&self, kind: &str) -> &[EntityId] {
        self.kinds.get(kind).map_or(&[], Vec::as_slice)
    }

    /// Each kind and how many entities declare it, in name order.
    pub fn counts(&self) -> impl Iterator<Item = (&str, usize)> + '_ {
        self.kinds.iter().map(|(k, v)| (k.as_str(), v.len()))
    }
}

/// The longest kind, in characters.
const MAX_KIND_CHARS: usize = 64;

/// The kinds `entity` declares, in the order of its facts, each once.
pub fn definitions_of(entity: &Entity) -> Vec<String> {
    let name = entity.name.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for line in entity.facts.lines() {
        let t = line.trim();
        if t.starts_with('$') {
            continue;
        }
        let lower = t.to_lowercase();
        let declared = declared_kind(&lower, &name);
        if let Some(kind) = declared.and_then(normalise)
            && !out.contains(&kind)
        {
            out.push(kind);
        }
    }
    out
}

fn declared_kind<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    for key in ["kind:", "type:", "definition:"] {
        if let Some(rest) = line.strip_prefix(key) {
            return Some(rest);
        }
    }
    let rest = line.strip_prefix(name).map(str::trim_start).unwrap_or(line);
    rest.strip_prefix("is a ")
        .or_else(|| rest.strip_prefix("is an "))
}

fn normalise(kind: &str) -> Option<String> {
    let end = kind
        .find(|c: char| ".,;:!?()[]\"".contains(c))
        .unwrap_or(kind.len());
    let mut words = Vec::new();
    for w in kind[..end].split_whitespace() {
        if [
            "who", "that", "which", "with", "from", "of", "in", "at", "and",
        ]
        .contains(&w)
        {
            break;
        }
        words.push(w);
        if words.len() == 4 {
            break;
        }
    }
    let kind = words.join(" ");
    (!kind.is_empty() && kind.chars().count() <= MAX_KIND_CHARS).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EntityId, FactSheet};

    fn entity(name: &str, facts: &str) -> Entity {
        Entity {
            id: EntityId(1),
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: FactSheet::from_text(facts),
            host_controlled: false,
            state: Default::default(),
            activity: Default::default(),
            inventory: vec![],
            mentioned: false,
        }
    }

    #[test]
    fn kinds_come_from_the_facts() {
        let e = entity(
            "Mira",
            "is a character\nMira is an innkeeper who hears everything.\nkind: Location\n\
             $if mentioned: is a liar\nis a character\nhas a dog\nIs A Retired Sailor, tired",
        );
        assert_eq!(
            definitions_of(&e),
            vec!["character", "innkeeper", "location", "retired sailor"]
        );
        assert!(definitions_of(&entity("Tobias", "Tobias is someone.")).is_empty());
    }
}
