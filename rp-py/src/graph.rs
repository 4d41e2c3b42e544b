//! Relationship queries and the world-query records from Python: what
//! `World.relationships_of`, `connected`, `path`, `shared_connections` and
//! `graph_stats` read (rp-core's `Engine::relationships`, a walk over the
//! directed graph of edges, every walk bounded), and `World.get_query` and
//! `recent_queries` (the queries recorded in the log).

use rp_core::graph::Direction;
use rp_core::{Engine, EntityId, QueryId};

use crate::model::{Edge, Named, entity_id};

/// A direction by its name: `"incoming"`, `"outgoing"` or `"both"`.
pub(crate) fn direction(name: &str) -> Result<Direction, rp_core::Error> {
    match name {
        "incoming" => Ok(Direction::Incoming),
        "outgoing" => Ok(Direction::Outgoing),
        "both" => Ok(Direction::Both),
        other => Err(rp_core::Error::Invalid {
            what: "direction",
            reason: format!("{other:?} is not \"incoming\", \"outgoing\" or \"both\""),
        }),
    }
}

/// The entities `named` name, in order.
fn entity_ids(engine: &Engine, named: &[Named]) -> Result<Vec<EntityId>, rp_core::Error> {
    named.iter().map(|n| entity_id(engine.world(), n)).collect()
}

/// `World.relationships_of`.
pub(crate) fn relationships_of(
    engine: &mut Engine,
    entities: &[Named],
    direction: Direction,
    limit: usize,
) -> Result<Vec<Edge>, rp_core::Error> {
    let ids = entity_ids(engine, entities)?;
    let found = engine
        .relationships()
        .relationships_of(&ids, direction, limit)?;
    Ok(found.into_iter().map(|e| Edge(e.clone())).collect())
}

/// `World.connected`: `(entity, hops)` pairs, nearest first.
pub(crate) fn connected(
    engine: &mut Engine,
    entity: &Named,
    max_hops: u32,
    direction: Direction,
    limit: usize,
) -> Result<Vec<(u64, u32)>, rp_core::Error> {
    let from = entity_id(engine.world(), entity)?;
    let reached = engine
        .relationships()
        .connected(from, max_hops, direction, limit)?;
    Ok(reached.iter().map(|r| (r.entity.0, r.hops)).collect())
}

/// `World.path`: both ends included, or `None`.
pub(crate) fn path(
    engine: &mut Engine,
    from: &Named,
    to: &Named,
    max_hops: u32,
) -> Result<Option<Vec<u64>>, rp_core::Error> {
    let (from, to) = (
        entity_id(engine.world(), from)?,
        entity_id(engine.world(), to)?,
    );
    let path = engine.relationships().path_within(from, to, max_hops)?;
    Ok(path.map(|ids| ids.iter().map(|id| id.0).collect()))
}

/// `World.shared_connections`: `(entity, shared)` pairs, most shared first.
pub(crate) fn shared_connections(
    engine: &mut Engine,
    entity: &Named,
    limit: usize,
) -> Result<Vec<(u64, u32)>, rp_core::Error> {
    let id = entity_id(engine.world(), entity)?;
    let shared = engine.relationships().shared_connections(id, limit)?;
    Ok(shared.iter().map(|s| (s.entity.0, s.shared)).collect())
}

/// `World.get_query`: the record of query `id`, as JSON.
pub(crate) fn get_query(
    engine: &Engine,
    id: u64,
) -> Result<serde_json::Result<serde_json::Value>, rp_core::Error> {
    let query = engine
        .get_query(QueryId(id))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "query",
            id: id.to_string(),
        })?;
    Ok(serde_json::to_value(query))
}

/// `World.recent_queries`: the `limit` most recent records, newest first, as
/// JSON.
pub(crate) fn recent_queries(
    engine: &Engine,
    limit: usize,
) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(engine.recent_queries(limit))
}
