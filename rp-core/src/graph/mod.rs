//! Relationship queries over the directed graph of edges (petgraph). `a→b` and `b→a` stay
//! distinct: every query says which direction it follows.

use crate::log::World;
use crate::model::{Edge, EntityId};
use petgraph::graphmap::DiGraphMap;
use petgraph::visit::Bfs;
use std::collections::BTreeMap;

/// A read-only view of who feels what about whom, built from a [`World`].
#[derive(Debug, Clone)]
pub struct Relationships<'w> {
    world: &'w World,
    graph: DiGraphMap<EntityId, ()>,
}

impl<'w> Relationships<'w> {
    /// The relationship graph of `world`.
    pub fn of(world: &'w World) -> Relationships<'w> {
        let mut graph = DiGraphMap::new();
        for e in world.entities() {
            graph.add_node(e.id);
        }
        for x in world.edges() {
            graph.add_edge(x.from, x.to, ());
        }
        Relationships { world, graph }
    }

    /// The edges going out of `from`: what `from` feels about others.
    pub fn outgoing(&self, from: EntityId) -> impl Iterator<Item = &'w Edge> + '_ {
        self.graph
            .neighbors_directed(from, petgraph::Direction::Outgoing)
            .filter_map(move |to| self.world.edge(from, to))
    }

    /// The edges coming into `to`: what others feel about `to`.
    pub fn incoming(&self, to: EntityId) -> impl Iterator<Item = &'w Edge> + '_ {
        self.graph
            .neighbors_directed(to, petgraph::Direction::Incoming)
            .filter_map(move |from| self.world.edge(from, to))
    }

    /// Both directions between `a` and `b`, each independent: (`a→b`, `b→a`).
    pub fn between(&self, a: EntityId, b: EntityId) -> (Option<&'w Edge>, Option<&'w Edge>) {
        (self.world.edge(a, b), self.world.edge(b, a))
    }

    /// The shortest chain of acquaintance from `from` to `to`, following edge direction
    /// (`from` knows x, x knows y, y knows `to`), both ends included; `None` if there is none.
    pub fn path(&self, from: EntityId, to: EntityId) -> Option<Vec<EntityId>> {
        if !self.graph.contains_node(from) || !self.graph.contains_node(to) {
            return None;
        }
        let mut parent: BTreeMap<EntityId, EntityId> = BTreeMap::new();
        let mut bfs = Bfs::new(&self.graph, from);
        while let Some(n) = bfs.next(&self.graph) {
            if n == to {
                let mut path = vec![to];
                let mut at = to;
                while let Some(p) = parent.get(&at) {
                    path.push(*p);
                    at = *p;
                }
                path.reverse();
                return Some(path);
            }
            for m in self.graph.neighbors(n) {
                if m != from && !parent.contains_key(&m) {
                    parent.insert(m, n);
                }
            }
        }
        None
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
        for i in 1..=5 {
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
    }

    #[test]
    fn paths_follow_edge_direction() {
        let w = world(&[
            (1, 2, 0.0),
            (2, 3, 0.0),
            (3, 4, 0.0),
            (1, 4, 0.0),
            (5, 1, 0.0),
        ]);
        let r = Relationships::of(&w);
        let ids = |v: Vec<EntityId>| v.into_iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(r.path(EntityId(1), EntityId(4)).map(ids), Some(vec![1, 4]));
        assert_eq!(
            r.path(EntityId(5), EntityId(3)).map(ids),
            Some(vec![5, 1, 2, 3])
        );
        assert_eq!(r.path(EntityId(4), EntityId(1)), None, "edges are one-way");
        assert_eq!(r.path(EntityId(1), EntityId(99)), None);
    }
}
