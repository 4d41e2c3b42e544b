//! Relationship queries over the directed graph of edges (petgraph). `a→b` and `b→a` stay
//! distinct: every query says which direction it follows.
//!
//! [`RelationshipGraph`] is the adjacency of a world, built once and shared (the engine keeps
//! one until an entity or an edge changes); [`Relationships`] pairs it with the world to read
//! the edges themselves. Every walk is bounded: hops by [`MAX_HOPS`], results by the caller's
//! limit (at most [`MAX_RESULTS`]); a bound out of range is an error, never a long walk.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{Edge, EntityId};
use petgraph::graphmap::DiGraphMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The most hops any walk may take.
pub const MAX_HOPS: u32 = 6;
/// The most results any query may return.
pub const MAX_RESULTS: usize = 10_000;

/// Which edges of an entity a query follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Edges coming in: what others feel about it.
    Incoming,
    /// Edges going out: what it feels about others.
    Outgoing,
    /// Both.
    #[default]
    Both,
}

impl Direction {
    /// The stable name (`"incoming"`, `"outgoing"`, `"both"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Incoming => "incoming",
            Direction::Outgoing => "outgoing",
            Direction::Both => "both",
        }
    }

    fn follows(self, d: petgraph::Direction) -> bool {
        matches!(
            (self, d),
            (Direction::Both, _)
                | (Direction::Outgoing, petgraph::Direction::Outgoing)
                | (Direction::Incoming, petgraph::Direction::Incoming)
        )
    }
}

/// Refuses a hop bound outside `1..=MAX_HOPS`.
pub fn check_hops(max_hops: u32) -> Result<()> {
    if !(1..=MAX_HOPS).contains(&max_hops) {
        return Err(Error::invalid(
            "graph query",
            format!("max_hops must be 1 to {MAX_HOPS}, not {max_hops}"),
        ));
    }
    Ok(())
}

/// Refuses a result limit outside `1..=MAX_RESULTS`.
pub fn check_limit(limit: usize) -> Result<()> {
    if !(1..=MAX_RESULTS).contains(&limit) {
        return Err(Error::invalid(
            "graph query",
            format!("limit must be 1 to {MAX_RESULTS}, not {limit}"),
        ));
    }
    Ok(())
}

/// The adjacency of a world's entities: a node per entity, an arc per directed edge.
#[derive(Debug, Clone, Default)]
pub struct RelationshipGraph {
    graph: DiGraphMap<EntityId, ()>,
}

impl RelationshipGraph {
    /// The graph of `world`.
    pub fn build(world: &World) -> RelationshipGraph {
        let mut graph = DiGraphMap::with_capacity(world.entities().count(), world.edges().count());
        for e in world.entities() {
            graph.add_node(e.id);
        }
        for x in world.edges() {
            graph.add_edge(x.from, x.to, ());
        }
        RelationshipGraph { graph }
    }

    pub(crate) fn add_entity(&mut self, id: EntityId) {
        self.graph.add_node(id);
    }

    pub(crate) fn remove_entity(&mut self, id: EntityId) {
        self.graph.remove_node(id);
    }

    pub(crate) fn add_edge(&mut self, from: EntityId, to: EntityId) {
        self.graph.add_edge(from, to, ());
    }

    pub(crate) fn remove_edge(&mut self, from: EntityId, to: EntityId) {
        self.graph.remove_edge(from, to);
    }

    /// The neighbours of `id` along `direction`, each once, in adjacency order.
    fn neighbours(
        &self,
        id: EntityId,
        direction: Direction,
    ) -> impl Iterator<Item = EntityId> + '_ {
        let out = direction.follows(petgraph::Direction::Outgoing).then(|| {
            self.graph
                .neighbors_directed(id, petgraph::Direction::Outgoing)
        });
        let inc = direction.follows(petgraph::Direction::Incoming).then(|| {
            self.graph
                .neighbors_directed(id, petgraph::Direction::Incoming)
        });
        let both = direction == Direction::Both;
        out.into_iter().flatten().chain(
            inc.into_iter()
                .flatten()
                // In both directions, a mutual pair is one neighbour.
                .filter(move |n| !(both && self.graph.contains_edge(id, *n))),
        )
    }
}

/// An entity reached by a walk, and in how many hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reached {
    /// The entity.
    pub entity: EntityId,
    /// Hops from the start (1 = a direct neighbour).
    pub hops: u32,
}

/// An entity related to another through neighbours they share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedConnections {
    /// The related entity.
    pub entity: EntityId,
    /// How many neighbours (either direction) the two share.
    pub shared: u32,
}

/// Figures of a relationship graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphStats {
    /// Entities (nodes).
    pub entities: usize,
    /// Directed edges.
    pub edges: usize,
    /// Pairs with an edge each way (counted once).
    pub mutual_pairs: usize,
    /// Entities with no edge either way.
    pub isolated: usize,
    /// The most edges going out of one entity.
    pub max_outgoing: usize,
    /// The most edges coming into one entity.
    pub max_incoming: usize,
    /// Edges per entity.
    pub mean_degree: f64,
}

/// A read-only view of who feels what about whom, built from a [`World`].
#[derive(Debug, Clone)]
pub struct Relationships<'w> {
    world: &'w World,
    graph: Arc<RelationshipGraph>,
}

impl<'w> Relationships<'w> {
    /// The relationship graph of `world`.
    pub fn of(world: &'w World) -> Relationships<'w> {
        Relationships::with(world, Arc::new(RelationshipGraph::build(world)))
    }

    /// `world` with a graph already built from it (by [`RelationshipGraph::build`] on this
    /// very world).
    pub fn with(world: &'w World, graph: Arc<RelationshipGraph>) -> Relationships<'w> {
        Relationships { world, graph }
    }

    /// The edges going out of `from`: what `from` feels about others.
    pub fn outgoing(&self, from: EntityId) -> impl Iterator<Item = &'w Edge> + '_ {
        self.graph
            .graph
            .neighbors_directed(from, petgraph::Direction::Outgoing)
            .filter_map(move |to| self.world.edge(from, to))
    }

    /// The edges coming into `to`: what others feel about `to`.
    pub fn incoming(&self, to: EntityId) -> impl Iterator<Item = &'w Edge> + '_ {
        self.graph
            .graph
            .neighbors_directed(to, petgraph::Direction::Incoming)
            .filter_map(move |from| self.world.edge(from, to))
    }

    /// Both directions between `a` and `b`, each independent: (`a→b`, `b→a`).
    pub fn between(&self, a: EntityId, b: EntityId) -> (Option<&'w Edge>, Option<&'w Edge>) {
        (self.world.edge(a, b), self.world.edge(b, a))
    }

    /// The edges of `ids` along `direction` (for each id in order: outgoing, then incoming),
    /// each edge once, at most `limit` (1 to [`MAX_RESULTS`]).
    pub fn relationships_of(
        &self,
        ids: &[EntityId],
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<&'w Edge>> {
        check_limit(limit)?;
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for id in ids {
            let outgoing = direction
                .follows(petgraph::Direction::Outgoing)
                .then(|| self.outgoing(*id));
            let incoming = direction
                .follows(petgraph::Direction::Incoming)
                .then(|| self.incoming(*id));
            for e in outgoing
                .into_iter()
                .flatten()
                .chain(incoming.into_iter().flatten())
            {
                if seen.insert((e.from, e.to)) {
                    out.push(e);
                    if out.len() == limit {
                        return Ok(out);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The entities reachable from `from` in at most `max_hops` hops along `direction`,
    /// nearest first (breadth-first, each once, `from` itself left out), at most `limit`.
    pub fn connected(
        &self,
        from: EntityId,
        max_hops: u32,
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<Reached>> {
        check_hops(max_hops)?;
        check_limit(limit)?;
        let mut out = Vec::new();
        if !self.graph.graph.contains_node(from) {
            return Ok(out);
        }
        let mut seen = BTreeSet::from([from]);
        let mut frontier = vec![from];
        for hops in 1..=max_hops {
            let mut next = Vec::new();
            for n in frontier {
                for m in self.graph.neighbours(n, direction) {
                    if seen.insert(m) {
                        out.push(Reached { entity: m, hops });
                        if out.len() == limit {
                            return Ok(out);
                        }
                        next.push(m);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        Ok(out)
    }

    /// The shortest chain of acquaintance from `from` to `to`, following edge direction
    /// (`from` knows x, x knows y, y knows `to`), both ends included; `None` if there is none.
    /// Unbounded: see [`Relationships::path_within`] for a walk with a hop limit.
    pub fn path(&self, from: EntityId, to: EntityId) -> Option<Vec<EntityId>> {
        self.bounded_path(from, to, u32::MAX)
    }

    /// [`Relationships::path`] of at most `max_hops` hops (1 to [`MAX_HOPS`]).
    pub fn path_within(
        &self,
        from: EntityId,
        to: EntityId,
        max_hops: u32,
    ) -> Result<Option<Vec<EntityId>>> {
        check_hops(max_hops)?;
        Ok(self.bounded_path(from, to, max_hops))
    }

    /// A shortest path of at most `max_hops` hops, by a search from both ends at once: each
    /// round expands the smaller frontier by one hop (forward along outgoing edges from
    /// `from`, backward along incoming edges from `to`), so a path of `h` hops visits about
    /// `2·d^(h/2)` entities instead of `d^h` at degree `d`. Among equally short paths, the one
    /// through the lowest meeting id.
    fn bounded_path(&self, from: EntityId, to: EntityId, max_hops: u32) -> Option<Vec<EntityId>> {
        use std::collections::HashMap;
        let g = &self.graph.graph;
        if !g.contains_node(from) || !g.contains_node(to) {
            return None;
        }
        if from == to {
            return Some(vec![from]);
        }
        // node → (its neighbour one hop nearer the end it was reached from, hops from that end)
        let mut forward: HashMap<EntityId, (EntityId, u32)> = HashMap::from([(from, (from, 0))]);
        let mut backward: HashMap<EntityId, (EntityId, u32)> = HashMap::from([(to, (to, 0))]);
        let (mut ahead, mut behind) = (vec![from], vec![to]);
        let (mut ahead_hops, mut behind_hops) = (0u32, 0u32);
        while ahead_hops + behind_hops < max_hops && !ahead.is_empty() && !behind.is_empty() {
            let forwards = ahead.len() <= behind.len();
            let (frontier, seen, other, direction) = if forwards {
                ahead_hops += 1;
                (
                    &mut ahead,
                    &mut forward,
                    &backward,
                    petgraph::Direction::Outgoing,
                )
            } else {
                behind_hops += 1;
                (
                    &mut behind,
                    &mut backward,
                    &forward,
                    petgraph::Direction::Incoming,
                )
            };
            let hops = if forwards { ahead_hops } else { behind_hops };
            let mut next = Vec::new();
            let mut meeting: Option<(u32, EntityId)> = None;
            for n in frontier.iter() {
                for m in g.neighbors_directed(*n, direction) {
                    if seen.contains_key(&m) {
                        continue;
                    }
                    seen.insert(m, (*n, hops));
                    if let Some((_, there)) = other.get(&m) {
                        let candidate = (hops + there, m);
                        if meeting.is_none_or(|best| candidate < best) {
                            meeting = Some(candidate);
                        }
                    }
                    next.push(m);
                }
            }
            *frontier = next;
            if let Some((total, meet)) = meeting {
                if total > max_hops {
                    return None;
                }
                let mut path = vec![meet];
                let mut at = meet;
                while at != from {
                    at = forward.get(&at)?.0;
                    path.push(at);
                }
                path.reverse();
                let mut at = meet;
                while at != to {
                    at = backward.get(&at)?.0;
                    path.push(at);
                }
                return Some(path);
            }
        }
        None
    }

    /// The entities that share neighbours (either direction) with `id`, most shared first
    /// (ties by id), `id` and its own neighbours included when they qualify; at most `limit`.
    pub fn shared_connections(&self, id: EntityId, limit: usize) -> Result<Vec<SharedConnections>> {
        check_limit(limit)?;
        let mut counts: BTreeMap<EntityId, u32> = BTreeMap::new();
        if self.graph.graph.contains_node(id) {
            for n in self.graph.neighbours(id, Direction::Both) {
                for m in self.graph.neighbours(n, Direction::Both) {
                    if m != id {
                        *counts.entry(m).or_default() += 1;
                    }
                }
            }
        }
        let mut out: Vec<SharedConnections> = counts
            .into_iter()
            .map(|(entity, shared)| SharedConnections { entity, shared })
            .collect();
        out.sort_by(|a, b| b.shared.cmp(&a.shared).then(a.entity.cmp(&b.entity)));
        out.truncate(limit);
        Ok(out)
    }

    /// Figures of the whole graph.
    pub fn stats(&self) -> GraphStats {
        let g = &self.graph.graph;
        let mut s = GraphStats {
            entities: g.node_count(),
            edges: g.edge_count(),
            ..GraphStats::default()
        };
        for n in g.nodes() {
            let out = g
                .neighbors_directed(n, petgraph::Direction::Outgoing)
                .count();
            let inc = g
                .neighbors_directed(n, petgraph::Direction::Incoming)
                .count();
            s.max_outgoing = s.max_outgoing.max(out);
            s.max_incoming = s.max_incoming.max(inc);
            if out + inc == 0 {
                s.isolated += 1;
            }
        }
        s.mutual_pairs = g
            .all_edges()
            .filter(|(a, b, _)| a < b && g.contains_edge(*b, *a))
            .count();
        if s.entities > 0 {
            s.mean_degree = s.edges as f64 / s.entities as f64;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Event, WorldSettings};
    use crate::model::{EntityState, FactSheet};

    fn world(edges: &[(u64, u64, f64)]) -> World {
        let mut w = World::new();
        w.apply(&Event::WorldCreated {
            name: "W".into(),
            now: 0,
            settings: WorldSettings::default(),
        })
        .unwrap();
        for i in 1..=6 {
            w.apply(&Event::EntityCreated {
                id: EntityId(i),
                key: None,
                name: format!("E{i}"),
                aliases: vec![],
                facts: FactSheet::default(),
                host_controlled: false,
                state: EntityState::default(),
            })
            .unwrap();
        }
        for (a, b, affinity) in edges {
            w.apply(&Event::EdgeUpdated {
                edge: Edge {
                    affinity: *affinity,
                    ..Edge::new(EntityId(*a), EntityId(*b))
                },
            })
            .unwrap();
        }
        w
    }

    fn ids(v: Vec<EntityId>) -> Vec<u64> {
        v.into_iter().map(|e| e.0).collect()
    }

    #[test]
    fn directions_stay_apart() {
        let w = world(&[(1, 2, 0.9), (2, 1, -0.5), (3, 2, 0.1)]);
        let r = Relationships::of(&w);
        let (ab, ba) = r.between(EntityId(1), EntityId(2));
        assert_eq!((ab.unwrap().affinity, ba.unwrap().affinity), (0.9, -0.5));
        let into_2: Vec<_> = r.incoming(EntityId(2)).map(|e| e.from.0).collect();
        assert_eq!(into_2, vec![1, 3]);
        let out_of_2: Vec<_> = r.outgoing(EntityId(2)).map(|e| e.to.0).collect();
        assert_eq!(out_of_2, vec![1]);
        let pairs = |d| -> Vec<(u64, u64)> {
            r.relationships_of(&[EntityId(2)], d, 10)
                .unwrap()
                .iter()
                .map(|e| (e.from.0, e.to.0))
                .collect()
        };
        assert_eq!(pairs(Direction::Outgoing), vec![(2, 1)]);
        assert_eq!(pairs(Direction::Incoming), vec![(1, 2), (3, 2)]);
        assert_eq!(pairs(Direction::Both), vec![(2, 1), (1, 2), (3, 2)]);
        assert_eq!(
            r.relationships_of(&[EntityId(2)], Direction::Both, 1)
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn paths_follow_edge_direction_within_their_hop_limit() {
        let w = world(&[
            (1, 2, 0.0),
            (2, 3, 0.0),
            (3, 4, 0.0),
            (1, 4, 0.0),
            (5, 1, 0.0),
        ]);
        let r = Relationships::of(&w);
        assert_eq!(r.path(EntityId(1), EntityId(4)).map(ids), Some(vec![1, 4]));
        assert_eq!(
            r.path(EntityId(5), EntityId(3)).map(ids),
            Some(vec![5, 1, 2, 3])
        );
        assert_eq!(r.path(EntityId(4), EntityId(1)), None, "edges are one-way");
        assert_eq!(r.path(EntityId(1), EntityId(99)), None);
        assert_eq!(r.path_within(EntityId(5), EntityId(3), 2).unwrap(), None);
        assert_eq!(
            r.path_within(EntityId(5), EntityId(3), 3).unwrap().map(ids),
            Some(vec![5, 1, 2, 3])
        );
        assert!(r.path_within(EntityId(5), EntityId(3), 0).is_err());
        assert!(
            r.path_within(EntityId(5), EntityId(3), MAX_HOPS + 1)
                .is_err()
        );
    }

    /// The hops of a shortest path by a plain breadth-first search from `from`.
    fn shortest_hops(g: &RelationshipGraph, from: EntityId, to: EntityId) -> Option<u32> {
        let mut seen = BTreeMap::from([(from, 0u32)]);
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            let d = seen[&n];
            if n == to {
                return Some(d);
            }
            for m in g.graph.neighbors_directed(n, petgraph::Direction::Outgoing) {
                if let std::collections::btree_map::Entry::Vacant(e) = seen.entry(m) {
                    e.insert(d + 1);
                    queue.push_back(m);
                }
            }
        }
        None
    }

    #[test]
    fn bounded_paths_are_shortest_paths_that_follow_the_edges() {
        let w = world(&[]);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..40 {
            let nodes = 20 + next(60);
            let mut g = RelationshipGraph {
                graph: DiGraphMap::new(),
            };
            for i in 0..nodes {
                g.add_entity(EntityId(i));
            }
            for _ in 0..nodes * (1 + next(3)) {
                let (a, b) = (next(nodes), next(nodes));
                if a != b {
                    g.add_edge(EntityId(a), EntityId(b));
                }
            }
            let graph = Arc::new(g);
            let r = Relationships::with(&w, Arc::clone(&graph));
            for _ in 0..50 {
                let (a, b) = (EntityId(next(nodes)), EntityId(next(nodes)));
                let hops = 1 + next(u64::from(MAX_HOPS)) as u32;
                let found = r.path_within(a, b, hops).unwrap();
                let shortest = shortest_hops(&graph, a, b).filter(|d| *d <= hops);
                assert_eq!(
                    found.as_ref().map(|p| p.len() as u32 - 1),
                    shortest,
                    "round {round}: {a} to {b} within {hops}: {found:?}"
                );
                if let Some(path) = found {
                    assert_eq!((path[0], path[path.len() - 1]), (a, b));
                    for pair in path.windows(2) {
                        assert!(graph.graph.contains_edge(pair[0], pair[1]), "{path:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn walks_are_bounded_by_hops_and_results() {
        let w = world(&[(1, 2, 0.0), (2, 3, 0.0), (3, 4, 0.0), (5, 1, 0.0)]);
        let r = Relationships::of(&w);
        let reached = |hops, d, limit| -> Vec<(u64, u32)> {
            r.connected(EntityId(1), hops, d, limit)
                .unwrap()
                .into_iter()
                .map(|x| (x.entity.0, x.hops))
                .collect()
        };
        assert_eq!(reached(1, Direction::Outgoing, 10), vec![(2, 1)]);
        assert_eq!(reached(2, Direction::Outgoing, 10), vec![(2, 1), (3, 2)]);
        assert_eq!(reached(2, Direction::Incoming, 10), vec![(5, 1)]);
        assert_eq!(
            reached(3, Direction::Both, 10),
            vec![(2, 1), (5, 1), (3, 2), (4, 3)]
        );
        assert_eq!(reached(3, Direction::Both, 2), vec![(2, 1), (5, 1)]);
        assert!(r.connected(EntityId(1), 1, Direction::Both, 0).is_err());
        assert!(
            r.connected(EntityId(99), 1, Direction::Both, 5)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn shared_connections_rank_by_how_many_neighbours_are_shared() {
        // 1 and 4 both know 2 and 3; 5 knows only 2; 6 knows nobody.
        let w = world(&[
            (1, 2, 0.0),
            (1, 3, 0.0),
            (4, 2, 0.0),
            (3, 4, 0.0),
            (5, 2, 0.0),
        ]);
        let r = Relationships::of(&w);
        let got: Vec<(u64, u32)> = r
            .shared_connections(EntityId(1), 10)
            .unwrap()
            .into_iter()
            .map(|s| (s.entity.0, s.shared))
            .collect();
        assert_eq!(got, vec![(4, 2), (5, 1)]);
        let s = r.stats();
        assert_eq!((s.entities, s.edges, s.isolated), (6, 5, 1));
        assert_eq!((s.max_outgoing, s.max_incoming, s.mutual_pairs), (2, 3, 0));
        let w = world(&[(1, 2, 0.0), (2, 1, 0.0)]);
        assert_eq!(Relationships::of(&w).stats().mutual_pairs, 1);
    }
}
