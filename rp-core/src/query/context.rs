//! `QueryContext`: what the model is shown to answer a query, built up round by round.
//!
//! Entities are held in two forms: full ([`ContextEntity`]: facts, state, place) and light
//! ([`EntitySummary`]: a name, kinds and a line), so a first context can show much of what
//! exists and the model expands only what it needs. Relationships are directed edges as
//! [`RelationshipSummary`]; definitions are entity kinds with counts; memories appear only in a
//! query asked as an entity, and only that entity's own (witness-filtered).
//!
//! Serialises (JSON) as an object of lists, each in id order.

use crate::model::{EntityId, EntityState, MemoryId, Millis};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// An entity in light form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntitySummary {
    /// The entity.
    pub id: EntityId,
    /// Its name.
    pub name: String,
    /// The kinds it declares ([`super::definitions_of`]).
    #[serde(default)]
    pub definitions: Vec<String>,
    /// One short line about it.
    #[serde(default)]
    pub summary: String,
}

/// An entity in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextEntity {
    /// The entity.
    pub id: EntityId,
    /// Its name.
    pub name: String,
    /// Other names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The kinds it declares.
    #[serde(default)]
    pub definitions: Vec<String>,
    /// What is known of it: its unconditional facts (asked as an entity: for another entity,
    /// what the asker knows of it from its own edge).
    #[serde(default)]
    pub facts: Vec<String>,
    /// Mood, goals and status, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<EntityState>,
    /// Where it is (container and slot), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// What it carries, by name, when known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<String>,
}

impl ContextEntity {
    /// Its light form.
    pub fn summary(&self) -> EntitySummary {
        EntitySummary {
            id: self.id,
            name: self.name.clone(),
            definitions: self.definitions.clone(),
            summary: self.facts.first().cloned().unwrap_or_default(),
        }
    }
}

/// A directed edge as the context shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelationshipSummary {
    /// Whose feelings.
    pub from: EntityId,
    /// About whom.
    pub to: EntityId,
    /// `from`'s name.
    pub from_name: String,
    /// `to`'s name.
    pub to_name: String,
    /// Liking, -1 to 1.
    pub affinity: f64,
    /// Trust, -1 to 1.
    pub trust: f64,
    /// `from`'s summary of it.
    #[serde(default)]
    pub summary: String,
    /// What `from` knows of `to`.
    #[serde(default)]
    pub knowledge: Vec<String>,
}

/// An entity kind and how many entities (in the asker's reach) declare it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionSummary {
    /// The kind.
    pub name: String,
    /// How many entities declare it.
    pub entities: u32,
}

/// A memory of the entity a query is asked as.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextMemory {
    /// The memory.
    pub id: MemoryId,
    /// Whose (always the asker).
    pub owner: EntityId,
    /// Its text.
    pub text: String,
    /// When it formed.
    pub created: Millis,
}

/// Figures of a context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextStats {
    /// Entities in full.
    pub full_entities: usize,
    /// Entities as summaries only.
    pub summaries: usize,
    /// Relationships.
    pub relationships: usize,
    /// Definitions.
    pub definitions: usize,
    /// Memories.
    pub memories: usize,
    /// Entities marked expanded.
    pub expanded: usize,
    /// About how many tokens the rendered context takes (characters / 4).
    pub token_estimate: usize,
}

/// What a query's model is shown. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "Wire", from = "Wire")]
pub struct QueryContext {
    asked_as: Option<EntityId>,
    entities: BTreeMap<EntityId, ContextEntity>,
    summaries: BTreeMap<EntityId, EntitySummary>,
    relationships: BTreeMap<(EntityId, EntityId), RelationshipSummary>,
    definitions: BTreeMap<String, u32>,
    memories: BTreeMap<MemoryId, ContextMemory>,
    expanded: BTreeSet<EntityId>,
}

/// The serialised form: lists in id order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
struct Wire {
    #[serde(skip_serializing_if = "Option::is_none")]
    asked_as: Option<EntityId>,
    entities: Vec<ContextEntity>,
    summaries: Vec<EntitySummary>,
    relationships: Vec<RelationshipSummary>,
    definitions: Vec<DefinitionSummary>,
    memories: Vec<ContextMemory>,
    expanded: Vec<EntityId>,
}

impl From<QueryContext> for Wire {
    fn from(c: QueryContext) -> Wire {
        Wire {
            asked_as: c.asked_as,
            entities: c.entities.into_values().collect(),
            summaries: c.summaries.into_values().collect(),
            relationships: c.relationships.into_values().collect(),
            definitions: c
                .definitions
                .into_iter()
                .map(|(name, entities)| DefinitionSummary { name, entities })
                .collect(),
            memories: c.memories.into_values().collect(),
            expanded: c.expanded.into_iter().collect(),
        }
    }
}

impl From<Wire> for QueryContext {
    fn from(w: Wire) -> QueryContext {
        let mut c = QueryContext::new(w.asked_as);
        for e in w.entities {
            c.add_entity(e);
        }
        for s in w.summaries {
            c.add_entity_summary(s);
        }
        for r in w.relationships {
            c.add_relationship(r);
        }
        c.add_definitions(w.definitions);
        for m in w.memories {
            c.add_memory(m);
        }
        c.expanded.extend(w.expanded);
        c
    }
}

impl QueryContext {
    /// An empty context of a query asked by the host (`None`) or as an entity.
    pub fn new(asked_as: Option<EntityId>) -> QueryContext {
        QueryContext {
            asked_as,
            ..QueryContext::default()
        }
    }

    /// Whom the query is asked as.
    pub fn asked_as(&self) -> Option<EntityId> {
        self.asked_as
    }

    /// Every entity id (full and summary), in id order.
    pub fn all_entity_ids(&self) -> Vec<EntityId> {
        let mut ids: Vec<EntityId> = self
            .entities
            .keys()
            .chain(self.summaries.keys())
            .copied()
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The summaries not yet expanded, in id order.
    pub fn expandable_entity_ids(&self) -> Vec<EntityId> {
        self.summaries
            .keys()
            .filter(|id| !self.expanded.contains(id))
            .copied()
            .collect()
    }

    /// Whether the entity is in the context (either form).
    pub fn has_entity(&self, id: EntityId) -> bool {
        self.entities.contains_key(&id) || self.summaries.contains_key(&id)
    }

    /// Whether the entity is in the context in full.
    pub fn has_full_entity(&self, id: EntityId) -> bool {
        self.entities.contains_key(&id)
    }

    /// Whether any summary can still be expanded.
    pub fn has_expandable_entities(&self) -> bool {
        self.summaries.keys().any(|id| !self.expanded.contains(id))
    }

    /// Adds an entity in full (its summary, if any, gives way).
    pub fn add_entity(&mut self, entity: ContextEntity) {
        self.summaries.remove(&entity.id);
        self.entities.insert(entity.id, entity);
    }

    /// Adds an entity in light form (nothing, when it is already there in full).
    pub fn add_entity_summary(&mut self, summary: EntitySummary) {
        if !self.entities.contains_key(&summary.id) {
            self.summaries.insert(summary.id, summary);
        }
    }

    /// Adds (or replaces) a relationship.
    pub fn add_relationship(&mut self, relationship: RelationshipSummary) {
        self.relationships
            .insert((relationship.from, relationship.to), relationship);
    }

    /// Adds definitions (a kind listed again takes the new count).
    pub fn add_definitions(&mut self, definitions: impl IntoIterator<Item = DefinitionSummary>) {
        for d in definitions {
            self.definitions.insert(d.name, d.entities);
        }
    }

    /// Adds a memory. The caller answers for the witness filter: only memories the asker owns
    /// and witnessed belong here.
    pub fn add_memory(&mut self, memory: ContextMemory) {
        self.memories.insert(memory.id, memory);
    }

    /// Marks an entity fully explored (expanded, its relationships fetched).
    pub fn mark_expanded(&mut self, id: EntityId) {
        self.expanded.insert(id);
    }

    /// Whether the entity was marked expanded.
    pub fn is_expanded(&self, id: EntityId) -> bool {
        self.expanded.contains(&id)
    }

    /// Takes in everything `other` holds (its records win over equal keys; a full entity
    /// wins over a summary).
    pub fn merge(&mut self, other: QueryContext) {
        for e in other.entities.into_values() {
            self.add_entity(e);
        }
        for s in other.summaries.into_values() {
            self.add_entity_summary(s);
        }
        self.relationships.extend(other.relationships);
        self.definitions.extend(other.definitions);
        self.memories.extend(other.memories);
        self.expanded.extend(other.expanded);
    }

    /// Entities in full, in id order.
    pub fn entities(&self) -> impl Iterator<Item = &ContextEntity> + '_ {
        self.entities.values()
    }

    /// The entity in full, if it is held so.
    pub fn entity(&self, id: EntityId) -> Option<&ContextEntity> {
        self.entities.get(&id)
    }

    /// Entities held only as summaries, in id order.
    pub fn summaries(&self) -> impl Iterator<Item = &EntitySummary> + '_ {
        self.summaries.values()
    }

    /// Relationships in (from, to) order.
    pub fn relationships(&self) -> impl Iterator<Item = &RelationshipSummary> + '_ {
        self.relationships.values()
    }

    /// Definitions in name order.
    pub fn definitions(&self) -> impl Iterator<Item = DefinitionSummary> + '_ {
        self.definitions
            .iter()
            .map(|(name, entities)| DefinitionSummary {
                name: name.clone(),
                entities: *entities,
            })
    }

    /// Memories in id order.
    pub fn memories(&self) -> impl Iterator<Item = &ContextMemory> + '_ {
        self.memories.values()
    }

    /// The name of an entity of the context.
    pub fn name_of(&self, id: EntityId) -> Option<&str> {
        self.entities
            .get(&id)
            .map(|e| e.name.as_str())
            .or_else(|| self.summaries.get(&id).map(|s| s.name.as_str()))
    }

    /// Counts, and a token estimate of [`QueryContext::render`].
    pub fn stats(&self) -> ContextStats {
        ContextStats {
            full_entities: self.entities.len(),
            summaries: self.summaries.len(),
            relationships: self.relationships.len(),
            definitions: self.definitions.len(),
            memories: self.memories.len(),
            expanded: self.expanded.len(),
            token_estimate: self.render().chars().count().div_ceil(4),
        }
    }

    /// The context as prompt text. Entities are written `[id] Name`; ids are what capabilities
    /// and sources name.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let kinds = |d: &[String]| {
            if d.is_empty() {
                String::new()
            } else {
                format!(" ({})", d.join(", "))
            }
        };
        if !self.entities.is_empty() {
            s.push_str("Entities in full:\n");
            for e in self.entities.values() {
                let _ = writeln!(s, "[{}] {}{}", e.id.0, e.name, kinds(&e.definitions));
                if !e.aliases.is_empty() {
                    let _ = writeln!(s, "  also called: {}", e.aliases.join(", "));
                }
                for f in &e.facts {
                    let _ = writeln!(s, "  - {f}");
                }
                if let Some(st) = &e.state {
                    if let Some(m) = &st.mood {
                        let _ = writeln!(s, "  mood: {m}");
                    }
                    if !st.goals.is_empty() {
                        let _ = writeln!(s, "  goals: {}", st.goals.join("; "));
                    }
                    if let Some(x) = &st.status {
                        let _ = writeln!(s, "  status: {x}");
                    }
                }
                if let Some(l) = &e.location {
                    let _ = writeln!(s, "  at: {l}");
                }
                if !e.carries.is_empty() {
                    let _ = writeln!(s, "  carries: {}", e.carries.join(", "));
                }
            }
        }
        if !self.summaries.is_empty() {
            s.push_str("Entities in brief (expandable):\n");
            for e in self.summaries.values() {
                let _ = write!(s, "[{}] {}{}", e.id.0, e.name, kinds(&e.definitions));
                if !e.summary.is_empty() {
                    let _ = write!(s, ": {}", e.summary);
                }
                s.push('\n');
            }
        }
        if !self.relationships.is_empty() {
            s.push_str("Relationships (directed; each is how the first feels about the second):\n");
            for r in self.relationships.values() {
                let _ = write!(
                    s,
                    "[{}] {} → [{}] {}: affinity {:.2}, trust {:.2}",
                    r.from.0, r.from_name, r.to.0, r.to_name, r.affinity, r.trust
                );
                if !r.summary.is_empty() {
                    let _ = write!(s, "; {}", r.summary);
                }
                if !r.knowledge.is_empty() {
                    let _ = write!(s, "; knows: {}", r.knowledge.join("; "));
                }
                s.push('\n');
            }
        }
        if !self.definitions.is_empty() {
            s.push_str("Entity kinds: ");
            let list: Vec<String> = self
                .definitions
                .iter()
                .map(|(n, c)| format!("{n} ({c})"))
                .collect();
            s.push_str(&list.join(", "));
            s.push('\n');
        }
        if !self.memories.is_empty() {
            s.push_str("Your memories:\n");
            for m in self.memories.values() {
                let _ = writeln!(s, "- {}", m.text);
            }
        }
        if s.is_empty() {
            s.push_str("(nothing yet)\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(id: u64, name: &str) -> EntitySummary {
        EntitySummary {
            id: EntityId(id),
            name: name.into(),
            definitions: vec!["character".into()],
            summary: format!("{name} is here."),
        }
    }

    fn full(id: u64, name: &str) -> ContextEntity {
        ContextEntity {
            id: EntityId(id),
            name: name.into(),
            aliases: vec![],
            definitions: vec![],
            facts: vec!["a fact".into()],
            state: None,
            location: None,
            carries: vec![],
        }
    }

    #[test]
    fn summaries_expand_into_full_entities() {
        let mut c = QueryContext::new(None);
        c.add_entity_summary(summary(1, "Mira"));
        c.add_entity_summary(summary(2, "Tobias"));
        assert_eq!(c.expandable_entity_ids(), vec![EntityId(1), EntityId(2)]);
        c.add_entity(full(1, "Mira"));
        c.mark_expanded(EntityId(1));
        c.add_entity_summary(summary(1, "Mira"));
        assert!(c.has_full_entity(EntityId(1)) && c.is_expanded(EntityId(1)));
        assert_eq!(c.expandable_entity_ids(), vec![EntityId(2)]);
        assert_eq!(c.all_entity_ids(), vec![EntityId(1), EntityId(2)]);
        c.mark_expanded(EntityId(2));
        assert!(!c.has_expandable_entities());

        let mut other = QueryContext::new(None);
        other.add_entity(full(2, "Tobias"));
        other.add_definitions([DefinitionSummary {
            name: "character".into(),
            entities: 2,
        }]);
        c.merge(other);
        let s = c.stats();
        assert_eq!((s.full_entities, s.summaries, s.definitions), (2, 0, 1));
        assert!(s.token_estimate > 0);
        assert!(c.render().contains("[2] Tobias"));

        let json = serde_json::to_string(&c).unwrap();
        let back: QueryContext = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
