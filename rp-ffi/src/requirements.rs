//! Requirements from C (docs/requirements.md): decision points and
//! validators. Adding one (`Engine::add_requirement`), removing it
//! (`Engine::remove_requirement`), reading them with whether each is pending
//! (`Engine::requirements`) and checking a host action
//! (`Engine::check_action`).
//!
//! Every rule (what a requirement may say, when it is pending, which
//! transitions it refuses) is rp-core's: these calls convert arguments and
//! answers. A guarded transition made any other way (`rp_engine_append`, a
//! turn, a time skip) is refused by rp-core with
//! `RP_RESULT_REQUIREMENT_UNMET`, too.

use std::ffi::c_char;

use rp_core::EntityId;

use crate::arg::str_arg;
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;

/// Adds a requirement and writes it, as the world keeps it (names
/// resolved to ids), as JSON to `*out_json` (a string the caller releases
/// with `rp_string_free`). Recorded as one event; if it is pending, the same
/// commit injects a system line announcing it to those it concerns (docs/
/// turn.md §5c).
///
/// `requirement_json` (`requirement_json_len` bytes of UTF-8, borrowed for
/// the call) is an object; entities and containers by id, key, name or
/// alias; unknown fields are refused:
///
/// ```text
/// {"id": "fare",                  // a key, unique in the world
///  "name": "The fare",            // a short name
///  "subject": "wren",             // optional: whose facts `self` reads
///                                 // and whose moves "leave" guards
///  "condition": "self.fare_paid", // an $if expression (docs/facts.md);
///                                 // pending while it is false
///  "guards": [{"leave": "jetty"}, // moving out of it (or out of a
///                                 // container inside it)
///             {"start_event": true},    // any scoped event starting,
///                                       // or one by id or name
///             {"complete_event": "the crossing"},
///             {"time_skip": true}, {"scene_close": true},
///             {"action": "board"}],     // a host action, see
///                                       // rp_engine_check_action
///  "text": "Wren must pay the ferryman before leaving the jetty."}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, an empty or too long text, no guards, a `leave` without a subject
/// or a world-wide condition that reads `self`; `RP_RESULT_CONFLICT` when the
/// id is taken (or called from a callback running on this engine);
/// `RP_RESULT_NOT_FOUND` when the subject, a container or a scoped event
/// does not exist; `RP_RESULT_FACT_SYNTAX` when the condition does not
/// compile; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the world is
/// unchanged and `*out_json` is left alone.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `requirement_json` points to `requirement_json_len` readable bytes;
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_add_requirement(
    engine: *mut rp_engine,
    requirement_json: *const c_char,
    requirement_json_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `requirement_json` points to
        // `requirement_json_len` bytes.
        let json = unsafe { str_arg("requirement_json", requirement_json, requirement_json_len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the requirement JSON", |e| {
                Ok(to_json(&e.add_requirement(json)?))
            })
        }
    })
}

/// Removes requirement `id` (`id_len` bytes of UTF-8). Recorded as one
/// event: a rewind brings it back.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// requirement; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `id` points to `id_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_remove_requirement(
    engine: *mut rp_engine,
    id: *const c_char,
    id_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `id` points to `id_len` bytes.
        let id = unsafe { str_arg("id", id, id_len) }?;
        with_engine(engine, |e| Ok(e.remove_requirement(id)?))?;
        Ok(())
    })
}

/// Writes every requirement, by id, with whether it is pending now, as
/// JSON to `*out_json` (a string the caller releases with
/// `rp_string_free`). Changes nothing:
///
/// ```text
/// [{"requirement": {"id": "fare", "name": "The fare", "subject": 1,
///                   "condition": "self.fare_paid",
///                   "guards": [{"leave": {"container": 4}}, "time_skip",
///                              {"start_event": {"event": null}},
///                              {"action": {"name": "board"}}],
///                   "text": "..."},
///   "pending": true,       // its condition is false now
///   "announced": true},    // a system line announced it
///  ...]
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_requirements(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the requirements JSON", |e| {
                Ok(to_json(&e.requirements()))
            })
        }
    })
}

/// Checks host action `name` (`name_len` bytes of UTF-8) of entity
/// `subject_id` (0: of no one in particular) against the requirements:
/// refused while a requirement guarding it (`{"action": name}`) is pending.
/// Changes nothing.
///
/// Returns `RP_RESULT_OK` when the action may go ahead;
/// `RP_RESULT_REQUIREMENT_UNMET` when it may not (`rp_last_error` names the
/// requirement's id, name and text); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `name` points to `name_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_check_action(
    engine: *const rp_engine,
    name: *const c_char,
    name_len: usize,
    subject_id: u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        let subject = (subject_id != 0).then_some(EntityId(subject_id));
        with_engine(engine, |e| Ok(e.check_action(name, subject)?))?;
        Ok(())
    })
}
