//! The world model from C (docs/architecture.md): reading entities, containers,
//! edges and the whole world as JSON, looking things up by id, key or name,
//! and changing the world with events (rp-core's `World` accessors and
//! `Engine::append`, `Engine::events`).
//!
//! What is read is rp-core's own types serialised, so an entity read here has
//! the fields an `entity_created` event takes.

use std::ffi::c_char;
use std::ptr::NonNull;

use rp_core::{
    Container, ContainerId, Edge, Engine, Entity, EntityId, Event, Group, Seq, Thread, Utterance,
    World, WorldSettings, log::LoggedEvent,
};
use serde::Serialize;

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::string::owned_string;
use crate::turn::to_json;

/// Writes `json` to the out-parameter `out` as a string for `rp_string_free`.
///
/// # Safety
///
/// `out` is a pointer the caller of the entry point made writable.
pub(crate) unsafe fn write_json(
    out: NonNull<*mut c_char>,
    what: &str,
    json: String,
) -> Result<(), Error> {
    let json = owned_string(what, json)?;
    // SAFETY: the caller guarantees `out` is writable.
    unsafe { out.write(json) };
    Ok(())
}

/// The refusal of JSON that does not match its schema.
pub(crate) fn invalid_json(what: &'static str, error: impl std::fmt::Display) -> Error {
    Error::from(rp_core::Error::Invalid {
        what,
        reason: error.to_string(),
    })
}

/// The world summary of `rp_engine_world`, in the order documented there.
#[derive(Serialize)]
struct WorldSummary<'a> {
    name: Option<&'a str>,
    created: Option<i64>,
    settings: Option<&'a WorldSettings>,
    now: i64,
    head: Seq,
    branch: &'a str,
    next_id: u64,
    entities: Vec<&'a Entity>,
    containers: Vec<&'a Container>,
    edges: Vec<&'a Edge>,
    groups: Vec<&'a Group>,
    threads: Vec<&'a Thread>,
    counts: Counts,
}

/// How many of the records that have calls of their own the world holds.
#[derive(Serialize)]
struct Counts {
    memories: usize,
    dialogue: usize,
    scenes: usize,
    scoped_events: usize,
    system_lines: usize,
}

fn summary(engine: &Engine) -> String {
    let world = engine.world();
    let meta = world.meta();
    to_json(&WorldSummary {
        name: meta.map(|m| m.name.as_str()),
        created: meta.map(|m| m.created),
        settings: meta.map(|m| &m.settings),
        now: world.now(),
        head: engine.head(),
        branch: engine.current_branch(),
        next_id: world.next_id(),
        entities: world.entities().collect(),
        containers: world.containers().collect(),
        edges: world.edges().collect(),
        groups: world.groups().collect(),
        threads: world.threads().collect(),
        counts: Counts {
            memories: world.all_memories().count(),
            dialogue: world.dialogue().count(),
            scenes: world.scenes().count(),
            scoped_events: world.scoped_events().count(),
            system_lines: world.system_lines().count(),
        },
    })
}

/// Runs `read` on the engine and writes the JSON it makes to `out_json`.
///
/// # Safety
///
/// `out_json` is NULL or writable.
unsafe fn read_json(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
    what: &str,
    read: impl FnOnce(&Engine) -> Result<String, Error>,
) -> Result<(), Error> {
    let out = out_arg("out_json", out_json)?;
    let json = with_engine(engine, |engine| read(engine))?;
    // SAFETY: the caller made the non-NULL `out_json` writable.
    unsafe { write_json(out, what, json) }
}

/// The refusal of an id that names nothing.
fn not_found(what: &'static str, id: impl std::fmt::Display) -> Error {
    Error::from(rp_core::Error::NotFound {
        what,
        id: id.to_string(),
    })
}

fn entity_of(world: &World, id: u64) -> Result<&Entity, Error> {
    world
        .entity(EntityId(id))
        .ok_or_else(|| not_found("entity", EntityId(id)))
}

fn container_of(world: &World, id: u64) -> Result<&Container, Error> {
    world
        .container(ContainerId(id))
        .ok_or_else(|| not_found("container", ContainerId(id)))
}

/// The whole world as JSON, written to `*out_json` (a string the caller
/// releases with `rp_string_free`): what it is, where its history stands,
/// and every entity, container, edge, group and thread (the records with
/// calls of their own are counted):
///
/// ```text
/// {"name": "The Crooked Lantern",   // from the world file or
///                                   // rp_engine_in_memory
///  "created": 0,                    // host clock at creation, ms
///  "settings": {"dialogue_window": 64, "seed": 17},
///  "now": 60000,                    // the world's clock, ms
///  "head": 42,                      // as rp_engine_head
///  "branch": "main",                // the current branch
///  "next_id": 12,                   // the id the next created thing
///                                   // takes (see rp_engine_append)
///  "entities": [ENTITY, ...],       // in id order; see rp_engine_entity
///  "containers": [CONTAINER, ...],  // see rp_engine_container
///  "edges": [EDGE, ...],            // in (from, to) order; see
///                                   // rp_engine_edge
///  "groups": [{"id": 20, "members": [2, 3, 5], "name": "the crew",
///              "summary": "...", "shared": ["..."]}],
///  "threads": [{"id": 21, "text": "Who is the Ferryman?",
///               "participants": [2, 5], "opened": 60000,
///               "status": "open"}],   // or "resolved", "dropped"
///  "counts": {"memories": 30,       // rp_engine_recall reads them
///             "dialogue": 12,       // recent lines kept (rp_engine_dialogue)
///             "scenes": 1, "scoped_events": 0,
///             "system_lines": 0}}   // rp_engine_system_lines
/// ```
///
/// Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_world(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe { read_json(engine, out_json, "the world JSON", |e| Ok(summary(e))) }
    })
}

/// Every entity, in id order, as a JSON array of the objects
/// `rp_engine_entity` describes, written to `*out_json` (a string the caller
/// releases with `rp_string_free`). Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_entities(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the entities JSON", |e| {
                Ok(to_json(&e.world().entities().collect::<Vec<_>>()))
            })
        }
    })
}

/// The entity `entity_id` as JSON, written to `*out_json` (a string the
/// caller releases with `rp_string_free`). Changes nothing.
///
/// ```text
/// {"id": 5,
///  "key": "tobias",            // its world-file key; null if made at run time
///  "name": "Tobias Reed",      // unique in the world, ignoring case
///  "aliases": ["Tobias"],
///  "facts": ["A fisherman with a bad knee.", "$if mentioned: $respond"],
///                              // the fact sheet, one line per item
///  "host_controlled": false,   // true for the player: rp never speaks for it
///  "state": {"mood": "maudlin", // or null
///            "goals": ["drink until the storm passes"],
///            "status": "three ciders in"},  // or null
///  "activity": {
///    "position": {"container": 2, "slot": "window seat"},
///                              // null: nowhere (or carried); "slot" null:
///                              // in the container, outside any slot
///    "posture": "slouched",    // or null
///    "action": {"verb": "polishing tankards", "started": 0,
///               "duration_ms": null, "interruptible": true,
///               "attention_required": false},  // or null
///    "holding": [],            // items in hand, a subset of the inventory
///    "attention": null,        // the entity it attends to, or null
///    "status": null},
///  "inventory": [7]}           // the items it carries (entity ids)
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_entity(
    engine: *const rp_engine,
    entity_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the entity JSON", |e| {
                Ok(to_json(entity_of(e.world(), entity_id)?))
            })
        }
    })
}

/// Every container, in id order, as a JSON array of the objects
/// `rp_engine_container` describes, written to `*out_json` (a string the
/// caller releases with `rp_string_free`). Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_containers(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the containers JSON", |e| {
                Ok(to_json(&e.world().containers().collect::<Vec<_>>()))
            })
        }
    })
}

/// The container `container_id` as JSON, written to `*out_json` (a string
/// the caller releases with `rp_string_free`). Changes nothing.
///
/// ```text
/// {"id": 2,
///  "key": "booth",             // its world-file key, or null
///  "name": "the corner booth",
///  "facts": ["A high-backed booth in the darkest corner."],
///  "parent": 1,                // the container it sits in, or null
///  "slots": [{"name": "bench", "capacity": 2},   // capacity null: no limit
///            {"name": "window seat", "capacity": 1}],
///  "properties": {"moving": false,    // it moves (a car, a ship)
///                 "public": false,    // open to the place around it
///                 "audible_range": 0}}  // steps through the container
///                                       // tree an utterance carries
/// ```
///
/// Who is in it: the entities whose `"activity"."position"."container"` is
/// its id (see `rp_engine_entity`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// container; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_container(
    engine: *const rp_engine,
    container_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the container JSON", |e| {
                Ok(to_json(container_of(e.world(), container_id)?))
            })
        }
    })
}

/// Looks up the container `name_or_key` names and writes its id to
/// `*out_container_id`, by rp-core's rule (`World::resolve_container`, the
/// same in Rust and Python): its world-file key (exact, such as
/// `"booth"`), or failing that its name (exactly, then ignoring case, such
/// as `"the corner booth"`).
///
/// `name_or_key` is `len` bytes of UTF-8 (borrowed for the call). Ids are
/// stable for the life of the world.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NOT_FOUND` (no container has that key
/// or name), `RP_RESULT_INVALID` (a name several containers share in
/// another case; the message lists them), `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `name_or_key` points to `len` readable bytes; `out_container_id` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_container_id(
    engine: *const rp_engine,
    name_or_key: *const c_char,
    len: usize,
    out_container_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name_or_key` points to `len` bytes.
        let name_or_key = unsafe { str_arg("name_or_key", name_or_key, len) }?;
        let out = out_arg("out_container_id", out_container_id)?;
        let id = with_engine(engine, |engine| {
            Ok(engine.world().resolve_container(name_or_key)?.0)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// Every directed edge, in (from, to) order, as a JSON array of the objects
/// `rp_engine_edge` describes, written to `*out_json` (a string the caller
/// releases with `rp_string_free`). Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_edges(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edges JSON", |e| {
                Ok(to_json(&e.world().edges().collect::<Vec<_>>()))
            })
        }
    })
}

/// The edges going out of entity `from_id` (what it feels about each entity
/// it has an edge to), in `to` order, as a JSON array of the objects
/// `rp_engine_edge` describes, written to `*out_json` (a string the caller
/// releases with `rp_string_free`). Changes nothing.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_edges_from(
    engine: *const rp_engine,
    from_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edges JSON", |e| {
                entity_of(e.world(), from_id)?;
                Ok(to_json(
                    &e.world().edges_from(EntityId(from_id)).collect::<Vec<_>>(),
                ))
            })
        }
    })
}

/// The directed edge `from_id → to_id` (what `from` feels about, and knows
/// of, `to`; the edge back is another record) as JSON, written to
/// `*out_json` (a string the caller releases with `rp_string_free`).
/// Changes nothing.
///
/// ```text
/// {"from": 3, "to": 5,
///  "affinity": 0.3,            // liking, -1 to 1
///  "trust": -0.2,              // -1 to 1
///  "summary": "Fond of him the way one is fond of a stray dog.",
///  "knowledge": ["owes her eleven silver"],  // what from knows of to
///  "private_moments": [],      // moments only these two share
///  "last_interaction": null,   // host clock, ms, or null
///  "imprints": ["fond"]}       // feelings faded memories left (only
///                              // when there are some; docs/memory.md)
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// edge; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_edge(
    engine: *const rp_engine,
    from_id: u64,
    to_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edge JSON", |e| {
                let edge = e
                    .world()
                    .edge(EntityId(from_id), EntityId(to_id))
                    .ok_or_else(|| {
                        Error::from(rp_core::Error::NotFound {
                            what: "edge",
                            id: format!("{from_id} → {to_id}"),
                        })
                    })?;
                Ok(to_json(edge))
            })
        }
    })
}

/// The recent lines of dialogue the world keeps (at most its
/// `"dialogue_window"`, see `rp_engine_world`), oldest first, as a JSON
/// array written to `*out_json` (a string the caller releases with
/// `rp_string_free`). Changes nothing.
///
/// ```text
/// [{"id": 17, "speaker": 1, "text": "Tobias, seen any lights?",
///   "at": 60000,               // host clock, ms
///   "witnesses": [1, 5],       // who heard it, the speaker included
///   "model": null}]            // the model of a generated line
/// ```
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_dialogue(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the dialogue JSON", |e| {
                Ok(to_json(&e.world().dialogue().collect::<Vec<&Utterance>>()))
            })
        }
    })
}

/// Writes to `*out_id` the id the next thing created in the world takes:
/// the `"id"` to give an `entity_created` or `container_created` event (see
/// `rp_engine_append`). Within one batch, each creation takes the next
/// number: `next_id`, `next_id + 1`, ...
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`). Another thread's call on the same engine
/// may take the id first; then the append is refused with
/// `RP_RESULT_CONFLICT` and may be tried again with a new id.
///
/// # Safety
///
/// `out_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_next_id(
    engine: *const rp_engine,
    out_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_id", out_id)?;
        let id = with_engine(engine, |engine| Ok(engine.world().next_id()))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// `Engine::append`, naming the event that was refused.
fn append(engine: &mut Engine, events: Vec<Event>) -> Result<Seq, Error> {
    let attempt = events.clone();
    engine.append(attempt).map_err(|error| {
        if matches!(error.kind(), rp_core::ErrorKind::Storage) {
            return Error::from(error);
        }
        // Find the refused event by trying the batch on a copy of the world
        // (cheap: its structure is shared), which the engine left unchanged.
        let mut world = engine.world().clone();
        let refused = events
            .iter()
            .enumerate()
            .find(|(_, event)| world.apply(event).is_err());
        match refused {
            Some((index, event)) => Error::new(
                rp_result::of_kind(error.kind()),
                format_args!("events[{index}] ({}): {error}", event.kind()),
            ),
            None => Error::from(error),
        }
    })
}

/// Changes the world: validates `events_json`, a JSON array of events, in
/// order against the world, commits them in one transaction and applies
/// them; writes the new head to `*out_head`. If any event is refused, or the
/// write fails, nothing changes (in memory or on disk) and the call returns
/// the code of the first refusal; `rp_last_error()` names the event by its
/// index (`events[2] (activity_changed): ...`) and says what is wrong.
/// `[]` changes nothing and writes the current head.
///
/// `events_json` is `events_json_len` bytes of UTF-8, borrowed for the call.
/// Each event is an object with one key, its kind, whose value holds its
/// fields; fields marked optional may be left out; unknown kinds and unknown
/// fields are refused. Ids are the world's (see `rp_engine_entity_id`,
/// `rp_engine_container_id`); a created thing takes a fresh id, from
/// `rp_engine_next_id` on. The events of the world model:
///
/// ```text
/// {"entity_created": {"id": 12, "name": "Old Sam",
///   "key": null, "aliases": [], "facts": ["A ferryman."],  // optional
///   "host_controlled": false,                              // optional
///   "state": {"mood": null, "goals": [], "status": null}}} // optional
///                                // placed nowhere: follow it with an
///                                // activity_changed to put it somewhere
/// {"entity_edited": {"id": 12, "name": "Sam", "aliases": ["the ferryman"],
///   "facts": ["..."], "host_controlled": false}}
///                                // every field but "id" optional: absent
///                                // or null leaves it as it is
/// {"entity_removed": {"id": 12}} // with its edges, group memberships and
///                                // memories; it may hold no items, and no
///                                // one may hold it
/// {"container_created": {"id": 13, "name": "the ferry",
///   "key": null, "facts": [], "parent": null,              // optional
///   "slots": [{"name": "deck", "capacity": 4}],            // optional
///   "properties": {"moving": true, "public": false,
///                  "audible_range": 0}}}                   // optional
/// {"container_edited": {...}}    // the fields of container_created but
///                                // "key"; every field is the new value
/// {"container_removed": {"id": 13}}  // it must be empty
/// {"activity_changed": {"entity": 12, "activity": {
///   "position": {"container": 13, "slot": "deck"},  // null: nowhere
///   "posture": "standing", "action": null, "holding": [],
///   "attention": null, "status": null}}}
///                                // the whole record replaced: a move, a
///                                // posture, an action (as in
///                                // rp_engine_entity; all optional)
/// {"inventory_changed": {"entity": 12, "inventory": [7]}}
/// {"entity_state_changed": {"entity": 12, "state":
///   {"mood": "wary", "goals": ["cross the marsh"], "status": null}}}
/// {"edge_updated": {"edge": {"from": 12, "to": 3, "affinity": 0.2,
///   "trust": 0.1, "summary": "...", "knowledge": [],
///   "private_moments": [], "last_interaction": null}}}
///                                // created or replaced; all but "from"
///                                // and "to" optional
/// {"edge_removed": {"from": 12, "to": 3}}
/// {"group_updated": {"group": {"id": 14, "members": [3, 5, 12],
///   "name": null, "summary": "", "shared": []}}}  // 3 members or more
/// {"group_removed": {"id": 14}}
/// {"time_advanced": {"to": 120000}}  // the world's clock, never back
/// ```
///
/// The log's other kinds (the records `rp_engine_events` shows, such as
/// `"user_turn"` or `"memory_added"`) are accepted too, with the fields they
/// are shown with, but turns, memories and decisions are better made by
/// their own calls (`rp_turn_begin`, `rp_engine_add_memory`,
/// `rp_engine_decide`), which fill them in.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that is not an
/// array of events, an unknown kind or field, or an event that is
/// malformed or out of range (an empty name, an affinity above 1);
/// `RP_RESULT_NOT_FOUND` for an id that does not exist;
/// `RP_RESULT_CONFLICT` for an event that contradicts the world (an id
/// already taken, a duplicate name, an entity held by two);
/// `RP_RESULT_CAPACITY` for a full slot; `RP_RESULT_FACT_SYNTAX` for facts
/// that do not compile; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), `RP_RESULT_STORAGE`. An open `rp_turn` of the
/// engine is refused from then on when the batch changed the world.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file.
///
/// # Safety
///
/// `events_json` points to `events_json_len` readable bytes; `out_head` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_append(
    engine: *mut rp_engine,
    events_json: *const c_char,
    events_json_len: usize,
    out_head: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `events_json` points to
        // `events_json_len` bytes.
        let json = unsafe { str_arg("events_json", events_json, events_json_len) }?;
        let out = out_arg("out_head", out_head)?;
        let events = Event::list_from_json(json)?;
        let head = with_engine(engine, |engine| append(engine, events))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(head) };
        Ok(())
    })
}

/// The events of the current branch with `first <= seq <= last`, in order,
/// as a JSON array written to `*out_json` (a string the caller releases
/// with `rp_string_free`). `last` beyond the head means up to the head;
/// `first` 0 means from the first; an empty range gives `[]`.
///
/// ```text
/// [{"seq": 41, "event": {"time_advanced": {"to": 120000}}},
///  {"seq": 42, "event": {"user_turn": {"utterance": {"id": 17,
///    "speaker": 1, "text": "...", "at": 120000, "witnesses": [1, 5],
///    "model": null}}}}]
/// ```
///
/// Each event has the shape `rp_engine_append` takes (see there for the
/// world model's); the log also records turns (`"user_turn"`,
/// `"assistant_turn"`), memories, response decisions, generations, tool
/// runs, state-update reports and system lines, each with the fields that
/// replay needs. Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), or `RP_RESULT_STORAGE` / `RP_RESULT_CORRUPT`
/// when the save file cannot be read.
///
/// Thread: any (see `rp_engine`). Reads the save file: a long range takes a
/// while.
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_events(
    engine: *const rp_engine,
    first: u64,
    last: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the events JSON", |e| {
                let events: Vec<LoggedEvent> = e
                    .events(first, last)?
                    .into_iter()
                    .map(|(seq, event)| LoggedEvent { seq, event })
                    .collect();
                Ok(to_json(&events))
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use serde_json::{Value, json};

    use super::*;
    use crate::memory::rp_engine_add_memory;
    use crate::system_line::rp_engine_inject_system_line;
    use crate::turn::tests::{
        Tavern, begin, finish, free, head, last_error, provide, say, step, take_json, tavern,
    };

    fn append_json(t: &Tavern, events: &str) -> Result<u64, rp_result> {
        let mut seq = u64::MAX;
        // SAFETY: a valid string and out-parameter.
        match unsafe { rp_engine_append(t.engine, events.as_ptr().cast(), events.len(), &mut seq) }
        {
            rp_result::Ok => Ok(seq),
            code => {
                assert_eq!(seq, u64::MAX, "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    fn read(body: impl FnOnce(*mut *mut c_char) -> rp_result) -> Value {
        let mut json = ptr::null_mut();
        assert_eq!(body(&mut json), rp_result::Ok, "{}", last_error());
        take_json(json)
    }

    /// A tavern whose log holds every kind a turn records: a decision, both
    /// turns, a tool run, a generation, judged reports and their changes,
    /// memories, a system line shown.
    fn a_played_tavern() -> Tavern {
        let t = tavern();
        let memory = json!({"owner": t.mira, "text": "Wren paid in silver"}).to_string();
        let line = "The rain stops.";
        let (mut id, mut line_id) = (0, 0);
        // SAFETY: valid strings and out-parameters.
        unsafe {
            assert_eq!(
                rp_engine_add_memory(t.engine, memory.as_ptr().cast(), memory.len(), &mut id),
                rp_result::Ok
            );
            assert_eq!(
                rp_engine_inject_system_line(
                    t.engine,
                    line.as_ptr().cast(),
                    line.len(),
                    ptr::null(),
                    0,
                    &mut line_id
                ),
                rp_result::Ok
            );
        }
        let turn = begin(
            &t,
            &say(&t, "Tobias, roll for the lights?", 1_000),
            Some(r#"{"updates": {"enabled": true}}"#),
        )
        .expect("begins");
        assert_eq!(step(t.engine, turn).expect("a step")["step"], "generate");
        let calls = r#"{"tool_calls": [{"id": "a", "name": "roll_dice",
                        "arguments": {"notation": "2d6"}}]}"#;
        assert_eq!(provide(t.engine, turn, calls), rp_result::Ok);
        assert_eq!(step(t.engine, turn).expect("a step")["step"], "generate");
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "Green ones.", "model": "m"}"#),
            rp_result::Ok
        );
        let pass = step(t.engine, turn).expect("a step");
        assert_eq!(pass["purpose"]["kind"], "state_update");
        let answer = json!({"reports": [
            {"type": "feeling", "who": "Tobias Reed", "toward": "Wren", "affinity": "warmer"},
        ]})
        .to_string();
        let result = json!({ "text": answer }).to_string();
        assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
        finish(t.engine, turn).expect("finishes");
        assert_eq!(free(turn), rp_result::Ok);
        t
    }

    #[test]
    fn every_event_the_log_shows_is_read_back_as_it_is_shown() {
        let t = a_played_tavern();
        // SAFETY: valid out-parameters.
        let events = read(|out| unsafe { rp_engine_events(t.engine, 0, u64::MAX, out) });
        let events = events.as_array().expect("an array");
        assert_eq!(events.len() as u64, head(t.engine));
        let mut kinds = std::collections::BTreeSet::new();
        for (i, numbered) in events.iter().enumerate() {
            assert_eq!(numbered["seq"], i as u64 + 1);
            let event = Event::from_json_value(&numbered["event"])
                .unwrap_or_else(|error| panic!("{error}: {}", numbered["event"]));
            kinds.insert(event.kind());
        }
        for kind in [
            "world_created",
            "user_turn",
            "assistant_turn",
            "response_decided",
            "generated",
            "tools_run",
            "reports_judged",
            "edge_updated",
            "memory_added",
            "system_line_injected",
            "system_lines_shown",
            "world_file_applied",
        ] {
            assert!(kinds.contains(kind), "no {kind} in {kinds:?}");
        }
    }

    #[test]
    fn appended_events_change_the_world_and_refused_ones_change_nothing() {
        let t = tavern();
        let before = head(t.engine);
        let mut next = 0;
        // SAFETY: a valid out-parameter.
        assert_eq!(
            unsafe { rp_engine_next_id(t.engine, &mut next) },
            rp_result::Ok
        );
        let events = json!([
            {"entity_created": {"id": next, "name": "Old Sam"}},
            {"edge_updated": {"edge": {"from": next, "to": t.mira, "affinity": 0.5}}},
        ])
        .to_string();
        assert_eq!(append_json(&t, &events), Ok(before + 2));
        // SAFETY: valid out-parameters.
        let sam = read(|out| unsafe { rp_engine_entity(t.engine, next, out) });
        assert_eq!(sam["name"], "Old Sam");
        assert_eq!(sam["activity"]["position"], Value::Null);
        // SAFETY: valid out-parameters.
        let edge = read(|out| unsafe { rp_engine_edge(t.engine, next, t.mira, out) });
        assert_eq!(edge["affinity"], 0.5);

        // SAFETY: valid out-parameters.
        let world = read(|out| unsafe { rp_engine_world(t.engine, out) });
        assert_eq!(world["head"], before + 2);
        assert_eq!(world["next_id"], next + 1);
        let duplicate = json!([
            {"time_advanced": {"to": 5_000}},
            {"entity_created": {"id": next + 1, "name": "old sam"}},
        ])
        .to_string();
        assert_eq!(append_json(&t, &duplicate), Err(rp_result::Conflict));
        assert!(
            last_error().starts_with("events[1] (entity_created): "),
            "{}",
            last_error()
        );
        // SAFETY: valid out-parameters.
        let after = read(|out| unsafe { rp_engine_world(t.engine, out) });
        assert_eq!(after, world, "the refused batch changed nothing");
    }
}
