//! What a query may see, and the fulfilment of its info requests.
//!
//! A query asked by the host sees the whole world: every entity's facts, every edge. A query asked
//! as an entity sees only what that entity could know (docs/architecture.md, "What an entity may
//! know"): itself, the entities it has met (those it has an edge to, those that witnessed one of
//! its memories, those it can hear now, what it carries), its own edges (never what others feel
//! about it), and its own memories. Of another entity it knows the name, the aliases, the kinds,
//! and what its own edge says (summary, knowledge), never that entity's fact sheet.

use super::capability::Checked;
use super::context::{
    ContextEntity, ContextMemory, DefinitionSummary, EntitySummary, QueryContext,
    RelationshipSummary,
};
use super::past::PastIndexes;
use crate::engine::Engine;
use crate::error::Result;
use crate::graph::{Direction, MAX_RESULTS, RelationshipGraph, Relationships};
use crate::log::World;
use crate::lore::{DefinitionIndex, definitions_of};
use crate::memory::RecallOptions;
use crate::model::QueryConfig;
use crate::model::{Edge, EntityId, Millis};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The longest summary line, in characters.
const SUMMARY_CHARS: usize = 160;

/// What a query may see.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pov: Option<EntityId>,
    /// The entities within reach (`None`: all of them).
    known: Option<BTreeSet<EntityId>>,
    /// Each kind, with the entities within reach that declare it.
    kinds: Arc<DefinitionIndex>,
    graph: Arc<RelationshipGraph>,
    /// Asked about the past: the indexes of that world, read instead of the engine's.
    past: Option<Arc<PastIndexes>>,
}

impl Scope {
    /// The scope of a query asked by the host (`pov` = `None`) or as `pov`; `kinds` are those
    /// of the whole world.
    pub fn new(
        world: &World,
        pov: Option<EntityId>,
        graph: Arc<RelationshipGraph>,
        kinds: Arc<DefinitionIndex>,
    ) -> Scope {
        let known = pov.map(|p| {
            let mut k: BTreeSet<EntityId> = BTreeSet::from([p]);
            k.extend(world.edges_from(p).map(|e| e.to));
            for m in world.memories_of(p) {
                k.extend(m.witnesses.iter());
            }
            k.extend(world.hearers(p).iter());
            if let Some(e) = world.entity(p) {
                k.extend(e.inventory.iter().copied());
            }
            k.retain(|id| world.entity(*id).is_some());
            k
        });
        let kinds = match &known {
            Some(k) => Arc::new(DefinitionIndex::build(
                k.iter().filter_map(|id| world.entity(*id)),
            )),
            None => kinds,
        };
        Scope {
            pov,
            known,
            kinds,
            graph,
            past: None,
        }
    }

    /// The same scope over a past world: search and recall read `past`, the indexes of the
    /// world this scope was made from, never the engine's of today.
    pub fn looking_back(mut self, past: Arc<PastIndexes>) -> Scope {
        self.past = Some(past);
        self
    }

    /// Whether `id` is within reach.
    pub fn reaches(&self, id: EntityId) -> bool {
        self.known.as_ref().is_none_or(|k| k.contains(&id))
    }

    /// The kinds within reach, in name order.
    pub fn definitions(&self) -> Vec<String> {
        self.kinds.names().map(str::to_owned).collect()
    }

    /// Whether the asker may see `edge`.
    fn sees(&self, edge: &Edge) -> bool {
        self.pov.is_none_or(|p| edge.from == p)
    }

    fn full(&self, world: &World, id: EntityId) -> Option<ContextEntity> {
        let e = world.entity(id)?;
        let own = self.pov.is_none_or(|p| p == id);
        let place = |e: &crate::model::Entity| {
            e.activity.position.as_ref().and_then(|p| {
                let c = world.container(p.container)?;
                Some(match &p.slot {
                    Some(s) => format!("{} ({s})", c.name),
                    None => c.name.clone(),
                })
            })
        };
        if own {
            let facts = match world.sheet(id) {
                Some(sheet) => sheet.plain_facts().iter().map(|f| f.to_string()).collect(),
                None => Vec::new(),
            };
            return Some(ContextEntity {
                id,
                name: e.name.clone(),
                aliases: e.aliases.clone(),
                definitions: definitions_of(e),
                facts,
                state: Some(e.state.clone()),
                location: place(e),
                carries: e
                    .inventory
                    .iter()
                    .filter_map(|i| world.entity(*i).map(|x| x.name.clone()))
                    .collect(),
            });
        }
        let pov = self.pov?;
        let edge = world.edge(pov, id);
        let mut facts = Vec::new();
        if let Some(x) = edge {
            if !x.summary.is_empty() {
                facts.push(x.summary.clone());
            }
            facts.extend(x.knowledge.iter().cloned());
        }
        let heard = world.hearers(pov).contains(id);
        Some(ContextEntity {
            id,
            name: e.name.clone(),
            aliases: e.aliases.clone(),
            definitions: definitions_of(e),
            facts,
            state: None,
            location: if heard { place(e) } else { None },
            carries: Vec::new(),
        })
    }

    fn summary(&self, world: &World, id: EntityId) -> Option<EntitySummary> {
        let e = world.entity(id)?;
        let line = if self.pov.is_none_or(|p| p == id) {
            let sheet = world.sheet(id);
            let keyed = |l: &str| {
                l.split_once(':').is_some_and(|(k, _)| {
                    sheet.is_some_and(|s| s.self_facts().contains_key(k.trim()))
                })
            };
            sheet
                .map(|s| s.plain_facts())
                .unwrap_or_default()
                .iter()
                .map(|l| l.as_ref())
                .find(|l: &&str| {
                    let lower = l.to_lowercase();
                    !keyed(l) && !lower.starts_with("is a ") && !lower.starts_with("is an ")
                })
                .unwrap_or("")
                .to_owned()
        } else {
            self.pov
                .and_then(|p| world.edge(p, id))
                .map(|x| x.summary.clone())
                .unwrap_or_default()
        };
        Some(EntitySummary {
            id,
            name: e.name.clone(),
            definitions: definitions_of(e),
            summary: line.chars().take(SUMMARY_CHARS).collect(),
        })
    }

    fn relationship(world: &World, edge: &Edge) -> RelationshipSummary {
        let name = |id| world.entity(id).map_or(String::new(), |e| e.name.clone());
        RelationshipSummary {
            from: edge.from,
            to: edge.to,
            from_name: name(edge.from),
            to_name: name(edge.to),
            affinity: edge.affinity,
            trust: edge.trust,
            summary: edge.summary.clone(),
            knowledge: edge.knowledge.clone(),
        }
    }

    /// Adds `edges` the asker may see, and the other ends as summaries; returns how many.
    fn add_edges<'w>(
        &self,
        world: &World,
        ctx: &mut QueryContext,
        edges: impl IntoIterator<Item = &'w Edge>,
        added: &mut Vec<EntityId>,
    ) -> usize {
        let mut n = 0;
        for edge in edges {
            if !self.sees(edge) || !self.reaches(edge.from) || !self.reaches(edge.to) {
                continue;
            }
            for end in [edge.from, edge.to] {
                if !ctx.has_entity(end)
                    && let Some(s) = self.summary(world, end)
                {
                    ctx.add_entity_summary(s);
                    added.push(end);
                }
            }
            ctx.add_relationship(Scope::relationship(world, edge));
            n += 1;
        }
        n
    }

    fn add_summaries(
        &self,
        world: &World,
        ctx: &mut QueryContext,
        ids: impl IntoIterator<Item = EntityId>,
        added: &mut Vec<EntityId>,
    ) -> usize {
        let mut n = 0;
        for id in ids {
            if !self.reaches(id) {
                continue;
            }
            n += 1;
            if !ctx.has_entity(id)
                && let Some(s) = self.summary(world, id)
            {
                ctx.add_entity_summary(s);
                added.push(id);
            }
        }
        n
    }

    /// Entity search within reach: the best `limit` matches of `query`.
    fn search(&self, engine: &mut Engine, query: &str, limit: usize) -> Result<Vec<EntityId>> {
        let k = if self.known.is_some() {
            (limit * 10).clamp(1, 1000)
        } else {
            limit.clamp(1, 1000)
        };
        let found = match &self.past {
            Some(past) => past.search(query, k)?,
            None => engine.search_entities(query, k)?,
        };
        Ok(found
            .into_iter()
            .map(|(id, _)| id)
            .filter(|id| self.reaches(*id) && Some(*id) != self.pov)
            .take(limit)
            .collect())
    }

    /// The first context of a query: the entities that best match its text (as summaries),
    /// the relationships among them, and, asked as an entity, that entity in full and the
    /// memories it recalls for the question.
    pub fn initial(
        &self,
        engine: &mut Engine,
        world: &World,
        text: &str,
        now: Millis,
        config: &QueryConfig,
    ) -> Result<QueryContext> {
        let mut ctx = QueryContext::new(self.pov);
        let mut added = Vec::new();
        if let Some(p) = self.pov
            && let Some(e) = self.full(world, p)
        {
            ctx.add_entity(e);
        }
        let found = self.search(engine, text, config.max_initial_entities as usize)?;
        self.add_summaries(world, &mut ctx, found, &mut added);
        if config.include_relationships {
            let ids = ctx.all_entity_ids();
            let inside: BTreeSet<EntityId> = ids.iter().copied().collect();
            let edges: Vec<&Edge> = match self.pov {
                Some(p) => world
                    .edges_from(p)
                    .filter(|e| inside.contains(&e.to))
                    .collect(),
                None => Relationships::with(world, self.graph.clone())
                    .relationships_of(&ids, Direction::Outgoing, MAX_RESULTS)?
                    .into_iter()
                    .filter(|e| inside.contains(&e.to))
                    .take(config.result_limit as usize)
                    .collect(),
            };
            self.add_edges(world, &mut ctx, edges, &mut added);
        }
        if let Some(p) = self.pov {
            let options = RecallOptions {
                k: config.max_initial_entities as usize,
                ..RecallOptions::default()
            };
            let recalled = match &self.past {
                // As it was: recency and retention at that world's clock.
                Some(past) => past.recall(world, p, text, world.now(), &options)?,
                None => engine.recall(p, text, now, &options)?,
            };
            for r in recalled {
                self.add_memory(world, &mut ctx, r.id);
            }
        }
        Ok(ctx)
    }

    /// Adds a memory if, and only if, the asker owns it and witnessed it.
    fn add_memory(&self, world: &World, ctx: &mut QueryContext, id: crate::model::MemoryId) {
        let (Some(p), Some(m)) = (self.pov, world.memory(id)) else {
            return;
        };
        if m.owner == p && m.witnesses.contains(p) && m.recallable() {
            ctx.add_memory(ContextMemory {
                id: m.id,
                owner: m.owner,
                text: m.shown_text().to_owned(),
                created: m.created,
            });
        }
    }

    /// Fulfils a checked request into `ctx`: what it added, in words, and the entities added.
    pub fn fulfil(
        &self,
        engine: &mut Engine,
        world: &World,
        ctx: &mut QueryContext,
        request: &Checked,
        config: &QueryConfig,
    ) -> Result<(String, Vec<EntityId>)> {
        let limit = config.result_limit as usize;
        let mut added = Vec::new();
        let summary = match request {
            Checked::Expand(ids) => {
                let mut expanded = 0;
                let mut edges = 0;
                let mut memories = 0;
                for id in ids {
                    if !self.reaches(*id) {
                        continue;
                    }
                    let Some(full) = self.full(world, *id) else {
                        continue;
                    };
                    ctx.add_entity(full);
                    ctx.mark_expanded(*id);
                    added.push(*id);
                    expanded += 1;
                    if config.include_relationships {
                        let list: Vec<&Edge> = match self.pov {
                            Some(p) if p == *id => world.edges_from(p).take(limit).collect(),
                            Some(p) => world.edge(p, *id).into_iter().collect(),
                            None => Relationships::with(world, self.graph.clone())
                                .relationships_of(&[*id], Direction::Both, limit)?,
                        };
                        edges += self.add_edges(world, ctx, list, &mut added);
                    }
                    if let Some(p) = self.pov
                        && p != *id
                    {
                        let mut shared: Vec<&crate::model::Memory> = world
                            .memories_of(p)
                            .filter(|m| m.witnesses.contains(*id))
                            .collect();
                        shared.sort_by_key(|m| std::cmp::Reverse((m.created, m.id)));
                        for m in shared.into_iter().take(limit) {
                            self.add_memory(world, ctx, m.id);
                            memories += 1;
                        }
                    }
                }
                format!("expanded {expanded} entities ({edges} relationships, {memories} memories)")
            }
            Checked::Search { query, limit } => {
                let found = self.search(engine, query, *limit)?;
                let n = self.add_summaries(world, ctx, found, &mut added);
                format!("found {n} entities")
            }
            Checked::ByName(name) => {
                let found = self.by_name(world, name);
                let n = found.len();
                if let Some((best, _)) = found.first()
                    && let Some(full) = self.full(world, *best)
                {
                    ctx.add_entity(full);
                    added.push(*best);
                }
                self.add_summaries(world, ctx, found.iter().skip(1).map(|x| x.0), &mut added);
                match found.first() {
                    Some((id, score)) => format!(
                        "{n} close names; best {} (similarity {score:.2})",
                        world.entity(*id).map_or("", |e| e.name.as_str())
                    ),
                    None => format!("no entity is called anything like {name:?}"),
                }
            }
            Checked::Relationships {
                ids,
                direction,
                max_hops,
            } => {
                let mut edges: Vec<&Edge> = Vec::new();
                match self.pov {
                    Some(p) => {
                        // The asker's own edges: a star around it, one hop deep.
                        for id in ids {
                            if *id == p && *direction != Direction::Incoming {
                                edges.extend(world.edges_from(p));
                            } else if *id != p
                                && *direction != Direction::Outgoing
                                && let Some(e) = world.edge(p, *id)
                            {
                                edges.push(e);
                            }
                        }
                    }
                    None => {
                        let r = Relationships::with(world, self.graph.clone());
                        if *max_hops <= 1 {
                            edges = r.relationships_of(ids, *direction, limit)?;
                        } else {
                            let mut set: BTreeSet<EntityId> = ids.iter().copied().collect();
                            for id in ids {
                                set.extend(
                                    r.connected(*id, *max_hops, *direction, limit)?
                                        .into_iter()
                                        .map(|x| x.entity),
                                );
                            }
                            let all: Vec<EntityId> = set.iter().copied().collect();
                            edges = r
                                .relationships_of(&all, Direction::Outgoing, MAX_RESULTS)?
                                .into_iter()
                                .filter(|e| set.contains(&e.to))
                                .collect();
                        }
                    }
                }
                edges.truncate(limit);
                let n = self.add_edges(world, ctx, edges, &mut added);
                format!(
                    "{n} relationships ({}, up to {max_hops} hops)",
                    direction.as_str()
                )
            }
            Checked::ListDefinitions => {
                ctx.add_definitions(self.kinds.counts().map(|(name, n)| DefinitionSummary {
                    name: name.to_owned(),
                    entities: u32::try_from(n).unwrap_or(u32::MAX),
                }));
                format!("{} entity kinds", self.kinds.counts().count())
            }
            Checked::ByDefinition { definition, limit } => {
                let ids = self.kinds.entities(definition).to_vec();
                let total = ids.len();
                let n = self.add_summaries(world, ctx, ids.into_iter().take(*limit), &mut added);
                format!("{n} of {total} entities of kind {definition}")
            }
        };
        Ok((summary, added))
    }

    /// The entities within reach whose name or an alias is close to `name`: best first, at
    /// most three, with their similarity (0–1).
    fn by_name(&self, world: &World, name: &str) -> Vec<(EntityId, f64)> {
        let wanted = name.trim().to_lowercase();
        let mut scored: Vec<(EntityId, f64)> = Vec::new();
        let mut consider = |e: &crate::model::Entity| {
            let best = std::iter::once(&e.name)
                .chain(&e.aliases)
                .map(|n| similarity(&wanted, &n.to_lowercase()))
                .fold(0.0, f64::max);
            if best >= 0.6 {
                scored.push((e.id, best));
            }
        };
        match &self.known {
            Some(k) => k
                .iter()
                .filter_map(|id| world.entity(*id))
                .for_each(&mut consider),
            None => world.entities().for_each(&mut consider),
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(3);
        scored
    }
}

/// How alike two lower-case names are, 0–1: 1 when equal, 0.9 when one holds the other as a
/// word, otherwise one minus the edit distance over the longer length.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if b.split_whitespace().any(|w| w == a) || a.split_whitespace().any(|w| w == b) {
        return 0.9;
    }
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    1.0 - row[b.len()] as f64 / a.len().max(b.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::similarity;

    #[test]
    fn names_match_fuzzily() {
        assert_eq!(similarity("mira", "mira"), 1.0);
        assert_eq!(similarity("mira", "mira holt"), 0.9);
        assert!(similarity("myra", "mira") >= 0.7);
        assert!(similarity("tobias", "mira") < 0.6);
        assert_eq!(similarity("", "mira"), 0.0);
    }
}
