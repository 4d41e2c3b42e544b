//! What the world was at a point of its history, from C (docs/history.md):
//! what an entity could recall and what it believed then (rp-core's
//! `Engine::memories_at`, `Engine::beliefs_at`). A query asked about the
//! past takes the same point in its configuration (`"as_of"`, see
//! `rp_engine_begin_query`).
//!
//! Every rule (how a point is read from JSON, which seq a time names, what
//! the answers hold) is rp-core's: these calls convert arguments and answers.

use std::ffi::c_char;

use rp_core::{AsOf, EntityId};

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::turn::to_json;
use crate::world::write_json;

/// Reads the point of history `as_of_json` names.
///
/// # Safety
///
/// `json` points to `len` readable bytes.
unsafe fn as_of_arg(json: *const c_char, len: usize) -> Result<AsOf, crate::error::Error> {
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("as_of_json", json, len) }?;
    Ok(AsOf::from_json(json)?)
}

/// What the entity `entity_id` could recall at a point of history, as JSON
/// written to `*out_json` (a string the caller releases with
/// `rp_string_free`): its own memories, witnessed by it and recallable then
/// (not forgotten, not a residue, not the line of a closed scene), oldest
/// first, exactly as a replay of the log to that point has them.
///
/// `as_of_json` (`as_of_json_len` bytes of UTF-8) names the point, one JSON
/// object with exactly one of `seq` and `time`, unknown fields refused:
///
/// ```text
/// {"seq": 120}                  // right after the event of seq 120
/// {"time": 3600000}             // after the last event whose clock was
///                               // at or before that host time (ms)
/// {"seq": 120, "branch": "what-if"}  // on that branch (default: the
///                               // current one)
/// ```
///
/// The answer:
///
/// ```text
/// {"entity": 2, "branch": "main",
///  "seq": 120,                  // the point it came to
///  "now": 3590000,              // the world's clock then
///  "memories": [MEMORY, ...]}   // as rp_engine_memory describes them
/// ```
///
/// Reading only; the engine keeps checkpoints of the past worlds it
/// rebuilds, so nearby points answer fast (docs/history.md).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for an unknown branch, or
/// an entity that did not exist at that point; `RP_RESULT_INVALID` for
/// JSON that does not match, a seq outside the branch (0, or past its
/// head), a time before the world; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine). Nothing changes on failure.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `as_of_json` points to `as_of_json_len` readable bytes; `out_json` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_memories_at(
    engine: *mut rp_engine,
    entity_id: u64,
    as_of_json: *const c_char,
    as_of_json_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        // SAFETY: the caller guarantees `as_of_json` points to
        // `as_of_json_len` bytes.
        let at = unsafe { as_of_arg(as_of_json, as_of_json_len) }?;
        let json = with_engine(engine, |engine| {
            Ok(to_json(&engine.memories_at(EntityId(entity_id), &at)?))
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the memories JSON", json) }
    })
}

/// What the entity `entity_id` believed at a point of history (named by
/// `as_of_json` as for `rp_engine_memories_at`), as JSON written to
/// `*out_json` (a string the caller releases with `rp_string_free`): its
/// beliefs about people as they stood then, each confidence read at that
/// world's clock, and its own edges then.
///
/// ```text
/// {"entity": 2, "branch": "main", "seq": 120,
///  "now": 3590000,              // the clock the confidences are read at
///  "beliefs": [{"about": 3, "name": "Tobias", "mentioned": false,
///               "mood": {"value": "tired", "confidence": 0.71,
///                        "observed_confidence": 0.8, "at": 3000000,
///                        "source": "observed"},
///               "energy": null, "availability": null,
///               "traits": [], "feelings": []}],
///  "edges": [EDGE, ...]}        // from the entity, by target id, as
///                               // rp_engine_edge describes them
/// ```
///
/// Returns, and changes, as `rp_engine_memories_at`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `as_of_json` points to `as_of_json_len` readable bytes; `out_json` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_beliefs_at(
    engine: *mut rp_engine,
    entity_id: u64,
    as_of_json: *const c_char,
    as_of_json_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        // SAFETY: the caller guarantees `as_of_json` points to
        // `as_of_json_len` bytes.
        let at = unsafe { as_of_arg(as_of_json, as_of_json_len) }?;
        let json = with_engine(engine, |engine| {
            Ok(to_json(&engine.beliefs_at(EntityId(entity_id), &at)?))
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the beliefs JSON", json) }
    })
}
