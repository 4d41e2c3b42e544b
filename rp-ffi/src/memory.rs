//! Memories of an engine's world: forming, removing and recalling them
//! (rp-core's `Engine::add_memory`, `remove_memory`, `recall`,
//! `mark_recalled`).

use std::ffi::c_char;

use rp_core::memory::{NewMemory, RecallOptions};
use rp_core::{EntityId, MemoryId};

use crate::arg::{out_arg, slice_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::string::owned_string;
use crate::turn::to_json;

/// Forms a memory in the world (one event) and writes its id to
/// `*out_memory_id`.
///
/// `memory_json` (`memory_json_len` bytes of UTF-8) is a JSON object; only
/// `owner` and `text` are required, unknown fields are refused:
///
/// ```text
/// {"owner": 2,               // whose memory (an entity id): its point of view
///  "text": "Wren paid in silver",
///  "witnesses": [3],         // who else saw it; the owner is always added
///  "kind": "utterance",      // or "scene_summary", "event_gist", "reflection",
///                           // "thought"
///  "significance": 0.5,      // 0 to 1
///  "created": 1000,          // host clock, ms; default: the world's clock
///  "pinned": false,          // always in the owner's prompt (see
///                            // rp_engine_always_loaded)
///  "embedding": [0.1, -0.3], // the host's vector for the text (semantic
///                            // recall), 1 to 4096 numbers, stored with it
///  "sources": [12, 17]}      // a reflection's own memories it rests on
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match
/// (or an empty text, a significance outside 0–1); `RP_RESULT_NOT_FOUND` for
/// an owner or witness that does not exist; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`.
/// On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `memory_json` points to `memory_json_len` readable bytes; `out_memory_id`
/// is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_add_memory(
    engine: *mut rp_engine,
    memory_json: *const c_char,
    memory_json_len: usize,
    out_memory_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `memory_json` points to `memory_json_len` bytes.
        let json = unsafe { str_arg("memory_json", memory_json, memory_json_len) }?;
        let out = out_arg("out_memory_id", out_memory_id)?;
        let memory = NewMemory::from_json(json)?;
        let id = with_engine(engine, |engine| Ok(engine.add_memory(memory)?))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// Removes a memory from the world (one event).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// memory; `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_remove_memory(
    engine: *mut rp_engine,
    memory_id: u64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.remove_memory(MemoryId(memory_id))?)
        })?;
        Ok(())
    })
}

/// The memories `speaker_id` recalls for `query` at `now` (host clock, ms),
/// best first, as a JSON array written to `*out_json` (a string the caller
/// releases with `rp_string_free`):
///
/// ```text
/// [{"id": 7, "text": "Wren paid in silver", "kind": "utterance",
///   "score": 2.1, "relevance": 1.0, "retention": 0.6, "significance": 0.5}]
/// ```
///
/// Only the speaker's own memories (what it witnessed) can come back, and
/// only those still in mind (whole, or reduced to a summary: `text` is then
/// the summary). The score is `relevance` (BM25 of the query, divided by the
/// best among the candidates) + `retention` (how well the memory is kept at
/// `now`: see `rp_engine_retention`) + `significance`, each weighted. `query`
/// is text, never query syntax: quotes, colons, `AND` and the like are only
/// characters. An empty query ranks by retention and significance alone.
///
/// `options_json` (`options_len` bytes; `NULL` with length 0 for the
/// defaults) is a JSON object with any of
/// `{"k": 10, "candidates": 8,
///   "weights": {"relevance": 1, "retention": 1, "significance": 1},
///   "query_embedding": [0.1, -0.3], "semantic": 0.5}`.
/// With `query_embedding` (the host's vector for the query), memories that
/// have a vector are also found by cosine similarity, and `semantic` (0–1)
/// is the share of relevance it takes from BM25.
///
/// Recalling changes nothing; record what a turn used with
/// `rp_engine_mark_recalled`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for an unknown speaker;
/// `RP_RESULT_INVALID` for bad options; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `query` points to `query_len` readable bytes; `options_json` is `NULL`
/// (with `options_len` 0) or points to `options_len` readable bytes;
/// `out_json` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_recall(
    engine: *mut rp_engine,
    speaker_id: u64,
    query: *const c_char,
    query_len: usize,
    now: i64,
    options_json: *const c_char,
    options_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `query` points to `query_len` bytes.
        let query = unsafe { str_arg("query", query, query_len) }?;
        let options = if options_json.is_null() && options_len == 0 {
            RecallOptions::default()
        } else {
            // SAFETY: the caller guarantees `options_json` points to `options_len` bytes.
            RecallOptions::from_json(unsafe {
                str_arg("options_json", options_json, options_len)
            }?)?
        };
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let found = engine.recall(EntityId(speaker_id), query, now, &options)?;
            let items: Vec<serde_json::Value> = found
                .iter()
                .filter_map(|r| {
                    let m = engine.world().memory(r.id)?;
                    Some(serde_json::json!({
                        "id": r.id.0,
                        "text": m.shown_text(),
                        "kind": m.kind,
                        "score": r.score,
                        "relevance": r.relevance,
                        "retention": r.retention,
                        "significance": r.significance,
                    }))
                })
                .collect();
            Ok(serde_json::Value::Array(items).to_string())
        })?;
        let json = owned_string("the recall JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// Records that the `count` memories of `memory_ids` were recalled at `at`
/// (one event): each one's last-accessed time becomes `at` and its access
/// count goes up by one, and it is reinforced (its retention fades more
/// slowly from then on; docs/memory.md). Writes the new head to
/// `*out_head`. `memory_ids` may be `NULL` when `count` is 0 (nothing is
/// recorded).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for a memory that does not
/// exist; `RP_RESULT_INVALID` for an id listed twice;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `memory_ids` is `NULL` (with `count` 0) or points to `count` readable
/// `uint64_t`; `out_head` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_mark_recalled(
    engine: *mut rp_engine,
    memory_ids: *const u64,
    count: usize,
    at: i64,
    out_head: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `memory_ids` points to `count` items.
        let ids = unsafe { slice_arg("memory_ids", memory_ids, count) }?;
        let out = out_arg("out_head", out_head)?;
        let ids: Vec<MemoryId> = ids.iter().copied().map(MemoryId).collect();
        let head = with_engine(engine, |engine| Ok(engine.mark_recalled(&ids, at)?))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(head) };
        Ok(())
    })
}

/// How well memory `memory_id` is kept at `now` (host clock, ms): its
/// retention, 0–1, written to `*out_retention` (docs/memory.md). Read
/// without ticking and changing nothing; 1 for a pinned memory or an event's
/// gist, which never fade. It falls as `(1 + 19/81 · t/S)^−0.5` with the
/// time `t` since the memory was last recalled (or formed) and its stability
/// `S` (set by its significance, raised by each recall).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for a memory that does not
/// exist; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_retention` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_retention(
    engine: *const rp_engine,
    memory_id: u64,
    now: i64,
    out_retention: *mut f64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_retention", out_retention)?;
        let r = with_engine(engine, |engine| {
            Ok(engine.retention(MemoryId(memory_id), now)?)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(r) };
        Ok(())
    })
}

/// The memory `memory_id` as JSON, written to `*out_json` (a string the
/// caller releases with `rp_string_free`). This is the host's view: any
/// memory, whoever holds it. Changes nothing.
///
/// ```text
/// {"id": 30, "owner": 5,        // whose memory: its point of view
///  "witnesses": [4, 5],         // who saw what it records, the owner too
///  "text": "Wren paid in silver",
///  "kind": "utterance",         // or "scene_summary", "event_gist",
///                               // "reflection", "thought"
///  "significance": 0.5,         // 0 to 1
///  "created": 60000,            // host clock, ms
///  "last_accessed": null,       // when last recalled, or null
///  "access_count": 0,           // how often recalled
///  "decay": "full",             // or "summary", "residue", "forgotten"
///  "pinned": false,
///  "embedding": [0.1, -0.3],    // only when the host gave one
///  "stability": 2.1e8,          // ms until retention falls to 0.9; only
///                               // once reinforced (see rp_engine_retention)
///  "summary": "Wren paid",      // at stage "summary": what is left of it
///  "feeling": "fond",           // the feeling it left, with its summary
///  "about": 4,                  // whom it was mostly about
///  "sources": [12, 17]}         // a reflection's memories it rests on
/// ```
///
/// How memories fade, and what each stage keeps, is docs/memory.md.
///
/// Memories are not edited: remove one (`rp_engine_remove_memory`) and add
/// another (`rp_engine_add_memory`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// memory; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_memory(
    engine: *const rp_engine,
    memory_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let memory = engine.world().memory(MemoryId(memory_id)).ok_or_else(|| {
                Error::from(rp_core::Error::NotFound {
                    what: "memory",
                    id: MemoryId(memory_id).to_string(),
                })
            })?;
            Ok(to_json(memory))
        })?;
        let json = owned_string("the memory JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// Every memory `owner_id` holds and witnessed (what its recall chooses
/// from), oldest first, as a JSON array of the objects `rp_engine_memory`
/// describes, written to `*out_json` (a string the caller releases with
/// `rp_string_free`). Changes nothing.
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
pub unsafe extern "C" fn rp_engine_memories_of(
    engine: *const rp_engine,
    owner_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let world = engine.world();
            let owner = EntityId(owner_id);
            if world.entity(owner).is_none() {
                return Err(Error::from(rp_core::Error::NotFound {
                    what: "entity",
                    id: owner.to_string(),
                }));
            }
            let mut memories: Vec<_> = world.memories_of(owner).collect();
            memories.sort_by_key(|m| (m.created, m.id));
            Ok(to_json(&memories))
        })?;
        let json = owned_string("the memories JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// The `k` entities (1–1000) whose names, aliases or fact lines best match
/// `query`, best first, as a JSON array written to `*out_json` (a string the
/// caller releases with `rp_string_free`):
///
/// ```text
/// [{"id": 2, "name": "Mira Holt", "score": 3.1}]
/// ```
///
/// A word of a name or alias counts three times a word of the facts.
/// `query` is words, never query syntax. This searches the whole world (the
/// host's view), not what any character knows.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for a `k` out of range;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `query` points to `query_len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_search_entities(
    engine: *mut rp_engine,
    query: *const c_char,
    query_len: usize,
    k: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `query` points to `query_len` bytes.
        let query = unsafe { str_arg("query", query, query_len) }?;
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let found = engine.search_entities(query, k)?;
            let items: Vec<serde_json::Value> = found
                .iter()
                .filter_map(|(id, score)| {
                    let e = engine.world().entity(*id)?;
                    Some(serde_json::json!({"id": id.0, "name": e.name, "score": score}))
                })
                .collect();
            Ok(serde_json::Value::Array(items).to_string())
        })?;
        let json = owned_string("the search JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// The memories always in `speaker_id`'s prompt, outside retrieval: its
/// pinned memories (oldest first), then its `recent_scenes` most recent scene
/// summaries (newest first), as a JSON array written to `*out_json` (a string
/// the caller releases with `rp_string_free`):
///
/// ```text
/// [{"id": 4, "text": "I swore to find my brother", "kind": "reflection",
///   "pinned": true}]
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for an unknown speaker;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_always_loaded(
    engine: *mut rp_engine,
    speaker_id: u64,
    recent_scenes: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let ids = engine.always_loaded(EntityId(speaker_id), recent_scenes)?;
            let items: Vec<serde_json::Value> = ids
                .iter()
                .filter_map(|id| {
                    let m = engine.world().memory(*id)?;
                    Some(serde_json::json!({
                        "id": id.0, "text": m.text, "kind": m.kind, "pinned": m.pinned,
                    }))
                })
                .collect();
            Ok(serde_json::Value::Array(items).to_string())
        })?;
        let json = owned_string("the memories JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}
