//! Relationship and world-query reads from C: the graph of who feels what
//! about whom (rp-core's `Engine::relationships`, `graph::Relationships`)
//! and the recorded world queries (`Engine::get_query`,
//! `Engine::recent_queries`). Asking a query is a job: see [`crate::job`].

use std::ffi::c_char;

use rp_core::graph::Direction;
use rp_core::{EntityId, QueryId};
use serde::Deserialize;

use crate::arg::str_arg;
use crate::engine::rp_engine;
use crate::error::{Error, ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;
use crate::world::invalid_json;

/// A graph request of `rp_engine_graph`.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum GraphRequest {
    RelationshipsOf {
        entities: Vec<EntityId>,
        #[serde(default)]
        direction: Direction,
        #[serde(default = "many")]
        limit: usize,
    },
    Connected {
        from: EntityId,
        #[serde(default = "two")]
        max_hops: u32,
        #[serde(default)]
        direction: Direction,
        #[serde(default = "many")]
        limit: usize,
    },
    Path {
        from: EntityId,
        to: EntityId,
        #[serde(default = "four")]
        max_hops: u32,
    },
    SharedConnections {
        entity: EntityId,
        #[serde(default = "twenty")]
        limit: usize,
    },
    Stats {},
}

fn many() -> usize {
    100
}

fn two() -> u32 {
    2
}

fn four() -> u32 {
    4
}

fn twenty() -> usize {
    20
}

/// Refuses an entity id that names nothing.
fn entity(world: &rp_core::World, id: EntityId) -> Result<EntityId, Error> {
    match world.entity(id) {
        Some(_) => Ok(id),
        None => Err(Error::from(rp_core::Error::NotFound {
            what: "entity",
            id: id.to_string(),
        })),
    }
}

/// Answers a question about the relationship graph (the directed edges:
/// `a → b` and `b → a` are distinct, and every request says which way it
/// follows), as JSON written to `*out_json` (a string the caller releases
/// with `rp_string_free`). Changes nothing.
///
/// `request_json` (`request_json_len` bytes of UTF-8, borrowed for the
/// call) is one of these objects; fields shown with a value in a comment
/// are optional with that value as default, unknown fields are refused:
///
/// ```text
/// {"op": "relationships_of", "entities": [2, 3],
///  "direction": "both",     // "outgoing", "incoming" or "both"
///  "limit": 100}            // 1-10000
///   -> [EDGE, ...]          // the edges of each entity in order (outgoing,
///                           // then incoming), each once; EDGE as
///                           // rp_engine_edge writes it
/// {"op": "connected", "from": 2,
///  "max_hops": 2,           // 1-6
///  "direction": "both", "limit": 100}
///   -> [{"entity": 3, "hops": 1}, {"entity": 5, "hops": 2}]
///                           // reachable entities, nearest first, each
///                           // once, `from` left out
/// {"op": "path", "from": 2, "to": 5,
///  "max_hops": 4}           // 1-6
///   -> [2, 3, 5]            // the shortest chain following the edges'
///                           // direction, both ends included; null if
///                           // there is none within max_hops
/// {"op": "shared_connections", "entity": 2,
///  "limit": 20}             // 1-10000
///   -> [{"entity": 5, "shared": 2}]  // entities sharing neighbours
///                           // (either direction) with it, most first
/// {"op": "stats"}
///   -> {"entities": 5, "edges": 4, "mutual_pairs": 1, "isolated": 1,
///       "max_outgoing": 2, "max_incoming": 2, "mean_degree": 0.8}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match
/// or a bound out of range; `RP_RESULT_NOT_FOUND` for an entity id that
/// names nothing; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `request_json` points to `request_json_len` readable bytes; `out_json`
/// is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_graph(
    engine: *const rp_engine,
    request_json: *const c_char,
    request_json_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `request_json` points to
        // `request_json_len` bytes.
        let json = unsafe { str_arg("request_json", request_json, request_json_len) }?;
        let request: GraphRequest =
            serde_json::from_str(json).map_err(|error| invalid_json("graph request", error))?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the graph JSON", |e| {
                let world = e.world();
                match &request {
                    GraphRequest::RelationshipsOf { entities, .. } => {
                        for id in entities {
                            entity(world, *id)?;
                        }
                    }
                    GraphRequest::Connected { from, .. } => {
                        entity(world, *from)?;
                    }
                    GraphRequest::Path { from, to, .. } => {
                        entity(world, *from)?;
                        entity(world, *to)?;
                    }
                    GraphRequest::SharedConnections { entity: id, .. } => {
                        entity(world, *id)?;
                    }
                    GraphRequest::Stats {} => {}
                }
                let graph = e.relationships();
                Ok(match request {
                    GraphRequest::RelationshipsOf {
                        entities,
                        direction,
                        limit,
                    } => to_json(&graph.relationships_of(&entities, direction, limit)?),
                    GraphRequest::Connected {
                        from,
                        max_hops,
                        direction,
                        limit,
                    } => to_json(&graph.connected(from, max_hops, direction, limit)?),
                    GraphRequest::Path { from, to, max_hops } => {
                        to_json(&graph.path_within(from, to, max_hops)?)
                    }
                    GraphRequest::SharedConnections { entity, limit } => {
                        to_json(&graph.shared_connections(entity, limit)?)
                    }
                    GraphRequest::Stats {} => to_json(&graph.stats()),
                })
            })
        }
    })
}

/// The world query `query_id` as JSON, written to `*out_json` (a string the
/// caller releases with `rp_string_free`). Changes nothing. Queries are
/// recorded by `rp_job_finish` of a query job (see `rp_engine_begin_query`)
/// and kept in the save.
///
/// ```text
/// {"id": 40, "text": "Who runs the Crooked Lantern?",
///  "asked_as": 3,           // absent when the host asked
///  "config": {...},         // as in the input of rp_engine_begin_query
///  "status": "completed",   // or "failed"
///  "created": 60000, "completed_at": 60000,
///  "info_requests": 1,      // needs-more-info rounds fulfilled
///  "rounds": [              // every generation, in order
///    {"output": {"text": "..."},  // the result as provided
///     "forced": "...",      // present when only an answer was allowed,
///                           // and why
///     "problem": "...",     // present when the output could not be read
///     "requests": [{"request": {"capability_id": "EXPAND_ENTITY",
///                               "params": {...}, "reason": "..."},
///                   "refused": "...",  // present when it broke a
///                                      // constraint
///                   "summary": "expanded 1 entity",
///                   "entities": [5]}]}],
///  "context": [2, 5],       // the entities of the final context
///  "answer": {"content": "Mira.", "confidence": "high",
///             "sources": [{"entity_id": 2, "contribution": "...",
///                          "relevance": 0.9}],
///             "suggested_follow_ups": [],
///             "forced": "..."},  // present when forced (then "low")
///  "error": "..."}          // present when it failed, and why
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// query; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_query(
    engine: *const rp_engine,
    query_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the query JSON", |e| {
                let query = e.get_query(QueryId(query_id)).ok_or_else(|| {
                    Error::from(rp_core::Error::NotFound {
                        what: "query",
                        id: QueryId(query_id).to_string(),
                    })
                })?;
                Ok(to_json(query))
            })
        }
    })
}

/// The `limit` most recent world queries, newest first, as a JSON array of
/// the objects `rp_engine_query` describes, written to `*out_json` (a string
/// the caller releases with `rp_string_free`). Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_recent_queries(
    engine: *const rp_engine,
    limit: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the queries JSON", |e| {
                Ok(to_json(&e.recent_queries(limit)))
            })
        }
    })
}
