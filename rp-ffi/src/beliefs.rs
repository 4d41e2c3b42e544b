//! Beliefs about people from C (docs/beliefs.md): what a character believes
//! of others read at a host time (rp-core's `Engine::beliefs`), a belief the
//! host records (`Engine::observe_belief_json`), and a person who is only
//! mentioned (`Engine::mention_person`).
//!
//! Every rule (how confidence decays, what a belief may hold, how a name
//! resolves) is rp-core's: these calls convert arguments and answers.

use std::ffi::c_char;

use rp_core::{EntityId, FactSheet};

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;

/// Writes what the entity `observer_id` believes about each person at `now`
/// (host clock, ms; any time may be asked) as JSON to `*out_json` (a string
/// the caller releases with `rp_string_free`). Changes nothing. Each aspect
/// has its confidence at `now`: the confidence it was observed with, halved
/// every half-life since (the drive settings' `"belief_half_life_hours"`
/// for mood, energy and availability, `"trait_half_life_hours"` for traits
/// and feelings):
///
/// ```text
/// [{"about": 1, "name": "Wren", "mentioned": false,
///   "mood": ASPECT, "energy": ASPECT, "availability": ASPECT,
///                                 // each null when not believed;
///                                 // energy, availability: 0-1
///   "traits": [ASPECT, ...],      // "value": a text
///   "feelings": [ASPECT, ...]},   // "value": {"toward": 7, "toward_name":
///                                 // "Wren's mother", "sentiment": -0.6,
///                                 // "text": "mother"}, sentiment -1..1
///  ...]                           // people in id order
/// ```
///
/// An `ASPECT` is `{"value": "tired", "confidence": 0.56,
/// "observed_confidence": 0.7, "at": 3600000, "source": SOURCE}`; a `SOURCE`
/// is `"observed"`, `"inferred"`, `"host"` or `{"told_by": 3}`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_beliefs(
    engine: *const rp_engine,
    observer_id: u64,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the beliefs JSON", |e| {
                Ok(to_json(&e.beliefs(EntityId(observer_id), now)?))
            })
        }
    })
}

/// Records what a character believes about someone at `now` (host clock,
/// ms; the world's clock advances to it). Recorded as one event (with the
/// clock's advance, if any); the aspects given replace what it believed.
///
/// `belief_json` (`belief_json_len` bytes of UTF-8, borrowed for the call)
/// is an object; entities by id, key, name or alias; unknown fields are
/// refused:
///
/// ```text
/// {"observer": "Tobias",          // who believes (not a mentioned person)
///  "about": 1,                    // about whom (someone else)
///  "mood": "tired",               // any of mood, energy, availability,
///  "energy": 0.3,                 // traits, feelings; texts at most 200
///  "availability": 0.5,           // characters, one line; numbers 0-1
///  "traits": ["stubborn"],        // at most 16
///  "feelings": [{"toward": "Mira", "sentiment": -0.5, "text": "distrusts"}],
///                                 // how `about` feels about a third
///                                 // person, sentiment -1..1, at most 32
///  "confidence": 0.8,             // 0-1, default 1
///  "source": "host"}              // "host" (default), "observed",
///                                 // "inferred" or {"told_by": ENTITY}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, a value out of range, a text too long, no aspect at all, or a
/// `now` before the world's clock; `RP_RESULT_NOT_FOUND` when an entity
/// named does not exist; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `belief_json` points to `belief_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_observe_belief(
    engine: *mut rp_engine,
    belief_json: *const c_char,
    belief_json_len: usize,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `belief_json` points to
        // `belief_json_len` bytes.
        let json = unsafe { str_arg("belief_json", belief_json, belief_json_len) }?;
        with_engine(engine, |e| Ok(e.observe_belief_json(json, now)?))?;
        Ok(())
    })
}

/// Mentions a person who is only talked about (a mother, a boss) at `now`
/// (host clock, ms; the world's clock advances to it): a new lightweight
/// entity named `name` (`name_len` bytes of UTF-8, unique in the world)
/// with no place, no mind and no lines; beliefs and edges may name it.
/// `facts` (`facts_len` bytes; `NULL` with length 0 for none) is what is
/// said of it, one fact per line; `by_id` who mentioned it (0: no one, the
/// host). Writes its id to `*out_entity_id`. Recorded as one event.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for an empty or too long
/// name, or a `now` before the world's clock; `RP_RESULT_CONFLICT` when the
/// name is taken (or called from a callback running on this engine);
/// `RP_RESULT_NOT_FOUND` when `by_id` is not an entity;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `name` points to `name_len` readable bytes; `facts` is `NULL` or points
/// to `facts_len` readable bytes; `out_entity_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_mention_person(
    engine: *mut rp_engine,
    name: *const c_char,
    name_len: usize,
    facts: *const c_char,
    facts_len: usize,
    by_id: u64,
    now: i64,
    out_entity_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_entity_id", out_entity_id)?;
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        let facts = if facts.is_null() && facts_len == 0 {
            FactSheet::default()
        } else {
            // SAFETY: the caller guarantees `facts` points to `facts_len` bytes.
            FactSheet::from_text(unsafe { str_arg("facts", facts, facts_len) }?)
        };
        let by = (by_id != 0).then_some(EntityId(by_id));
        let id = with_engine(engine, |e| Ok(e.mention_person(name, facts, by, now)?))?;
        // SAFETY: a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}
