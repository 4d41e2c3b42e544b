//! Rules from C (docs/rules.md): giving a character a rule
//! (`Engine::add_rule`), taking it away (`Engine::remove_rule`), and reading
//! its rules with their weights at a host time (`Engine::rules`).
//!
//! Every rule (what a rule may say, when it fires, how its weight fades and
//! learns) is rp-core's: these calls convert arguments and answers.

use std::ffi::c_char;

use rp_core::{EntityId, RuleId};

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;

/// Gives the engine-controlled entity `entity_id` a rule at `now` (host
/// clock, ms; the world's clock advances to it) and writes its id to
/// `*out_rule_id`. Recorded as one event (with the clock's advance, if
/// any).
///
/// `rule_json` (`rule_json_len` bytes of UTF-8, borrowed for the call) is
/// an object; entities by id, key, name or alias; unknown fields are
/// refused:
///
/// ```text
/// {"description": "ask Wren about the letter",  // at most 300 characters
///  "on": {"day": 1, "hour": 18},  // when: d days after today at hour h
///                                 // (0-366, [0, 24)), or {"in_hours": 3},
///                                 // {"at": 64800000} (host time, once), or
///                                 // {"stimulus": "sound"} (each stimulus
///                                 // of that kind it processes; see
///                                 // rp_engine_notify)
///  "intent": {"initiate": "Wren", "about": "the letter"},
///                                 // means to speak to someone about
///                                 // something (an "intent" term of the
///                                 // rule's weight in its pressure toward
///                                 // them until it does); or {"note":
///                                 // "text"} (a thought for its next
///                                 // prompt), or {"drive": "task" or
///                                 // "curiosity", "amount": -1..1}
///  "condition": "content.includes('bell')",
///                                 // optional: an $if expression
///                                 // (docs/facts.md) tested when triggered
///  "weight": 0.8}                 // optional, 0-1, default 0.8; halves
///                                 // every "rule_half_life_days" unused
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, a value out of range (a weight above 1, a time that has passed),
/// an unknown stimulus kind, an empty or too long text, a host-controlled or
/// only mentioned entity (only the engine's characters hold rules), an
/// entity that holds 64 rules already, or a `now` before the world's clock;
/// `RP_RESULT_NOT_FOUND` when `entity_id` or an entity the rule names does
/// not exist; `RP_RESULT_FACT_SYNTAX` when the condition does not compile;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `rule_json` points to `rule_json_len` readable bytes; `out_rule_id` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_add_rule(
    engine: *mut rp_engine,
    entity_id: u64,
    rule_json: *const c_char,
    rule_json_len: usize,
    now: i64,
    out_rule_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_rule_id", out_rule_id)?;
        // SAFETY: the caller guarantees `rule_json` points to
        // `rule_json_len` bytes.
        let json = unsafe { str_arg("rule_json", rule_json, rule_json_len) }?;
        let id = with_engine(engine, |e| {
            Ok(e.add_rule(EntityId(entity_id), json, now)?)
        })?;
        // SAFETY: a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// Takes rule `rule_id` away from the character that holds it at `now`
/// (host clock, ms; the world's clock advances to it). Recorded as one
/// event (with the clock's advance, if any): a rewind brings it back.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when no character holds
/// such a rule; `RP_RESULT_INVALID` for a `now` before the world's clock;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine),
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_remove_rule(
    engine: *mut rp_engine,
    rule_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |e| Ok(e.remove_rule(RuleId(rule_id), now)?))?;
        Ok(())
    })
}

/// Writes the rules entity `entity_id` holds, in id order, with their
/// weights at `now` (host clock, ms; any time may be asked), as JSON to
/// `*out_json` (a string the caller releases with `rp_string_free`).
/// Changes nothing:
///
/// ```text
/// [{"rule": {"id": 40, "owner": 3,
///            "description": "ask Wren about the letter",
///            "trigger": {"at": 64800000},   // or {"stimulus": "sound"}
///            "condition": null,             // or the $if expression
///            "intent": {"initiate": {"to": 1, "about": "the letter"}},
///                                   // or {"note": {"text": "..."}},
///                                   // {"drive": {"drive": "task",
///                                   // "amount": 0.5}}
///            "weight": 0.8,         // as of "since"
///            "since": 0,            // made, fired, or learned from then
///            "uses": 0,             // how often it fired
///            "last_used": null,     // when it last fired
///            "checked": null,       // when an "at" rule was considered
///            "created_at": 0,
///            "source": "host"},     // or "world" (the world file),
///                                   // "model" (a state-update report)
///   "weight_now": 0.8,              // halved every "rule_half_life_days"
///                                   // since "since"
///   "forgotten_at": 2419200001},    // when it falls below
///                                   // "rule_forget_below" unused, or null
///  ...]
/// ```
///
/// An entity without rules (a host-controlled one included) gives `[]`.
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
pub unsafe extern "C" fn rp_engine_rules(
    engine: *const rp_engine,
    entity_id: u64,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the rules JSON", |e| {
                Ok(to_json(&e.rules(EntityId(entity_id), now)?))
            })
        }
    })
}
