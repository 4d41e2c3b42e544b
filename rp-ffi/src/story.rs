//! Scoped events and threads from C (rp-core's `Engine::plan_event`,
//! `start_event`, `complete_event`, `cancel_event`, `expire_event`,
//! `run_due`, `open_thread`, `resolve_thread`, `drop_thread`, and
//! `World::scoped_events`, `World::threads`; docs/story.md).
//!
//! A scoped event is something with a beginning and an end (a picnic, a
//! duel) whose props are in its participants' prompts only while it is
//! active; closing it keeps only what its promotion names. A thread is an
//! unresolved tension in its participants' prompts until it is resolved or
//! dropped. Every change is one commit that takes the host clock `now`: the
//! world's clock advances to it first and never goes back.

use std::ffi::c_char;

use rp_core::story::EventPlan;
use rp_core::{EntityId, Promotion, ScopedEventId, ThreadId};

use crate::arg::{out_arg, slice_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::turn::to_json;
use crate::world::{invalid_json, write_json};

/// Reads the promotion of `rp_engine_complete_event`: `NULL` with length 0
/// promotes nothing.
///
/// # Safety
///
/// `json` is `NULL` or points to `len` readable bytes.
unsafe fn promotion_arg(json: *const c_char, len: usize) -> Result<Promotion, Error> {
    if json.is_null() && len == 0 {
        return Ok(Promotion::default());
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("promotion_json", json, len) }?;
    serde_json::from_str(json).map_err(|error| invalid_json("promotion JSON", error))
}

/// Plans a scoped event (status `"planned"`) and writes its id to
/// `*out_event_id`. Recorded as one event (with the clock's advance to
/// `now`, if any), so the head moves forward and a replay reproduces it.
///
/// `plan_json`, `plan_json_len`: the plan, a JSON object (UTF-8, borrowed
/// for the call); only `"name"` and `"participants"` are required, unknown
/// fields are refused:
///
/// ```text
/// {"name": "the picnic",
///  "participants": [2, 3],          // entity ids, at least one; only
///                                   // their prompts show the event
///  "props": {"basket": "a wicker basket of bread"},
///                                   // name -> description: in the
///                                   // participants' prompts while active
///  "preconditions": ["time.is_day"],  // $if expressions that must all
///                                   // hold to start, evaluated as its
///                                   // first participant would
///  "on_start": [EFFECT, ...],       // run when it starts
///  "on_complete": [EFFECT, ...],    // run when it completes
///  "significance": 0.6,             // 0-1 (default 0)
///  "start_at": 3600000,             // starts by itself from then on,
///                                   // once its conditions hold; or null
///  "start_when": "present.includes(\"Tobias\")",
///                                   // starts by itself when this holds;
///                                   // or null
///  "expire_at": 7200000}            // expires then unless closed; or null
/// ```
///
/// An `EFFECT` is an object with a `"type"`:
/// `{"type": "system_line", "text": "..."}` (a `[SYSTEM: ...]` line for the
/// participants), `{"type": "memory", "text": "...", "significance": 0.4}`
/// (a memory for each participant), `{"type": "give_item", "item": 7,
/// "to": 3}`, `{"type": "teach_fact", "who": 3, "about": 2, "fact": "..."}`,
/// `{"type": "change_edge", "from": 2, "to": 3, "affinity": 0.25,
/// "trust": 0, "summary": "..."}` (affinity and trust are added; summary
/// optional), `{"type": "open_thread", "text": "..."}`,
/// `{"type": "close_thread", "thread": 21, "status": "resolved"}` (status
/// `"resolved"` or `"dropped"`; without `"thread"`: the threads this event's
/// hooks opened).
///
/// Transitions that come due (`start_at`, `start_when`, `expire_at`) run
/// when a turn begins, or when the host calls `rp_engine_run_due`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match
/// the schema, an empty name, no participants, a significance outside 0-1,
/// an expiry before the start, or `now` before the world's clock;
/// `RP_RESULT_NOT_FOUND` for a participant or an effect's entity that does
/// not exist; `RP_RESULT_FACT_SYNTAX` for a precondition or `start_when`
/// that does not compile (the message quotes it); `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), `RP_RESULT_STORAGE`. `rp_last_error()` says
/// what was wrong. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `plan_json` points to `plan_json_len` readable bytes; `out_event_id` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_plan_event(
    engine: *mut rp_engine,
    plan_json: *const c_char,
    plan_json_len: usize,
    now: i64,
    out_event_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `plan_json` points to `plan_json_len`
        // bytes.
        let json = unsafe { str_arg("plan_json", plan_json, plan_json_len) }?;
        let out = out_arg("out_event_id", out_event_id)?;
        let plan = EventPlan::from_json(json)?;
        let id = with_engine(engine, |engine| Ok(engine.plan_event(plan, now)?))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// Starts the planned scoped event `event_id` at `now` (host clock, ms):
/// its preconditions must hold now (evaluated once, and recorded), then its
/// `on_start` effects run, all in one commit. Its props enter its
/// participants' prompts (`rp_engine_inspect_prompt` shows them in section
/// `"events"`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the event is not
/// planned (active already, or closed), when a precondition does not hold
/// or an `on_start` effect cannot run (the message says which and why), or
/// when called from a callback of a turn on this engine;
/// `RP_RESULT_NOT_FOUND` when there is no such event; `RP_RESULT_INVALID`
/// when `now` is before the world's clock; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_start_event(
    engine: *mut rp_engine,
    event_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.start_event(ScopedEventId(event_id), now)?)
        })?;
        Ok(())
    })
}

/// Completes the active scoped event `event_id` at `now` with a promotion:
/// what survives it. Its `on_complete` effects run first, then the
/// promotion, all in one commit. Its props leave every prompt for good (the
/// closed record keeps them for the host: `rp_engine_scoped_event`).
///
/// `promotion_json`, `promotion_json_len`: a JSON object (UTF-8, borrowed
/// for the call) with any of four lists; `NULL` with length 0 promotes
/// nothing:
///
/// ```text
/// {"items": [{"item": 7, "to": 3}],          // into a participant's
///                                            // inventory
///  "knowledge": [{"who": 3, "about": 2, "fact": "hums when happy"}],
///  "summaries": [{"from": 3, "to": 2, "summary": "closer now"}],
///                                            // an edge's new summary
///  "gists": [{"witness": 3, "text": "We ate in the meadow.",
///             "significance": 0.8}]}         // one memory per witness (a
///                                            // participant); significance
///                                            // optional: the event's
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the event is not
/// active (still planned, or closed: completing twice included) or an
/// `on_complete` effect cannot run, or when called from a callback of a
/// turn on this engine; `RP_RESULT_NOT_FOUND` for an event or an entity of
/// the promotion that does not exist; `RP_RESULT_INVALID` for a promotion
/// that does not match the schema or that the rules refuse (a gist for
/// someone who is not a participant, two gists for one witness), or `now`
/// before the world's clock; `RP_RESULT_NULL_ARGUMENT` (`promotion_json`
/// `NULL` with a length), `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `promotion_json` is `NULL` (with `promotion_json_len` 0) or points to
/// `promotion_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_complete_event(
    engine: *mut rp_engine,
    event_id: u64,
    promotion_json: *const c_char,
    promotion_json_len: usize,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `promotion_json` is NULL or points to
        // `promotion_json_len` bytes.
        let promotion = unsafe { promotion_arg(promotion_json, promotion_json_len) }?;
        with_engine(engine, |engine| {
            Ok(engine.complete_event(ScopedEventId(event_id), promotion, now)?)
        })?;
        Ok(())
    })
}

/// Cancels the planned or active scoped event `event_id` at `now`: nothing
/// is promoted, no hook runs, its props leave every prompt.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the event is closed
/// already (or when called from a callback of a turn on this engine);
/// `RP_RESULT_NOT_FOUND`; `RP_RESULT_INVALID` when `now` is before the
/// world's clock; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_cancel_event(
    engine: *mut rp_engine,
    event_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.cancel_event(ScopedEventId(event_id), now)?)
        })?;
        Ok(())
    })
}

/// Expires the planned or active scoped event `event_id` at `now`, as its
/// `expire_at` would: nothing is promoted, no hook runs.
///
/// Returns as `rp_engine_cancel_event`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_expire_event(
    engine: *mut rp_engine,
    event_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.expire_event(ScopedEventId(event_id), now)?)
        })?;
        Ok(())
    })
}

/// Runs every scoped-event transition due by `now` (starts whose time came
/// and whose conditions hold, expiries), in time order, in one commit, and
/// writes what happened to `*out_json` (a string the caller releases with
/// `rp_string_free`). Turns do this by themselves when they begin; call it
/// to move events on between turns. The world's clock advances to `now`.
///
/// ```text
/// {"started": [12],       // event ids, in the order they ran
///  "expired": [9],
///  "held": [[14, "the picnic (event#14) cannot start: the precondition
///                 `time.is_night` does not hold"]]}
///                         // due to start but did not, and why: checked
///                         // again next time
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `now` is before the
/// world's clock; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine),
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_run_due(
    engine: *mut rp_engine,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| Ok(to_json(&engine.run_due(now)?)))?;
        // SAFETY: the caller made the non-NULL `out_json` writable.
        unsafe { write_json(out, "the due outcome JSON", json) }
    })
}

/// Opens a thread, an unresolved tension, at `now` and writes its id to
/// `*out_thread_id`. The prompts of its participants carry it (section
/// `"threads"`, under `# Unresolved`) until it is resolved or dropped.
///
/// - `text`, `text_len`: what is unresolved, in prose (UTF-8, borrowed for
///   the call); surrounding whitespace is dropped, and it may not be empty.
/// - `participants`, `participant_count`: the entity ids whose prompts
///   carry it, at least one, each existing (a repeated id counts once).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for an empty text, no
/// participants, or `now` before the world's clock; `RP_RESULT_NOT_FOUND`
/// for a participant that does not exist; `RP_RESULT_NULL_ARGUMENT` (`text`
/// or `out_thread_id` `NULL`, or `participants` `NULL` with a count),
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine),
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `text` points to `text_len` readable bytes; `participants` is `NULL`
/// (with `participant_count` 0) or points to `participant_count` readable
/// ids; `out_thread_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_open_thread(
    engine: *mut rp_engine,
    text: *const c_char,
    text_len: usize,
    participants: *const u64,
    participant_count: usize,
    now: i64,
    out_thread_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        // SAFETY: the caller guarantees `participants` is NULL or points to
        // `participant_count` ids.
        let participants = unsafe { slice_arg("participants", participants, participant_count) }?;
        let participants: Vec<EntityId> = participants.iter().copied().map(EntityId).collect();
        let out = out_arg("out_thread_id", out_thread_id)?;
        let id = with_engine(engine, |engine| {
            Ok(engine.open_thread(text, participants, now)?)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// Resolves the open thread `thread_id` at `now`: it leaves every prompt.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the thread is closed
/// already (or when called from a callback of a turn on this engine);
/// `RP_RESULT_NOT_FOUND`; `RP_RESULT_INVALID` when `now` is before the
/// world's clock; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_resolve_thread(
    engine: *mut rp_engine,
    thread_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.resolve_thread(ThreadId(thread_id), now)?)
        })?;
        Ok(())
    })
}

/// Drops the open thread `thread_id` unresolved at `now`: it leaves every
/// prompt.
///
/// Returns as `rp_engine_resolve_thread`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// None beyond the signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_drop_thread(
    engine: *mut rp_engine,
    thread_id: u64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |engine| {
            Ok(engine.drop_thread(ThreadId(thread_id), now)?)
        })?;
        Ok(())
    })
}

/// Every scoped event, open and closed, in id order, as a JSON array of the
/// objects `rp_engine_scoped_event` describes, written to `*out_json` (a
/// string the caller releases with `rp_string_free`). Changes nothing.
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
pub unsafe extern "C" fn rp_engine_scoped_events(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            Ok(to_json(&engine.world().scoped_events().collect::<Vec<_>>()))
        })?;
        // SAFETY: the caller made the non-NULL `out_json` writable.
        unsafe { write_json(out, "the scoped events JSON", json) }
    })
}

/// The scoped event `event_id` as JSON, written to `*out_json` (a string
/// the caller releases with `rp_string_free`). Changes nothing.
///
/// ```text
/// {"id": 12, "name": "the picnic",
///  "status": "active",      // "planned", "active", "completed",
///                           // "cancelled" or "expired"
///  "props": {"basket": "a wicker basket of bread"},
///                           // kept in the closed record too
///  "participants": [2, 3],
///  "preconditions": ["time.is_day"],
///  "on_start": [EFFECT, ...], "on_complete": [EFFECT, ...],
///                           // see rp_engine_plan_event
///  "significance": 0.6,
///  "start_at": null, "start_when": null, "expire_at": null,
///  "started": 60000,        // host clock, ms; null until it starts
///  "closed": null}          // when it closed; null while open
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// event; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_scoped_event(
    engine: *const rp_engine,
    event_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let id = ScopedEventId(event_id);
            let event =
                engine
                    .world()
                    .scoped_event(id)
                    .ok_or_else(|| rp_core::Error::NotFound {
                        what: "scoped event",
                        id: id.to_string(),
                    })?;
            Ok(to_json(event))
        })?;
        // SAFETY: the caller made the non-NULL `out_json` writable.
        unsafe { write_json(out, "the scoped event JSON", json) }
    })
}

/// Every thread, open and closed, in id order, as a JSON array written to
/// `*out_json` (a string the caller releases with `rp_string_free`).
/// (`rp_engine_world` lists them too.) Changes nothing.
///
/// ```text
/// [{"id": 21, "text": "Who is the Ferryman?",
///   "participants": [2, 5],   // whose prompts carry it while open
///   "opened": 60000,          // host clock, ms
///   "status": "open",         // or "resolved", "dropped"
///   "event": 12}]             // the scoped event whose hook opened it;
///                             // absent when the host opened it
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
pub unsafe extern "C" fn rp_engine_threads(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            Ok(to_json(&engine.world().threads().collect::<Vec<_>>()))
        })?;
        // SAFETY: the caller made the non-NULL `out_json` writable.
        unsafe { write_json(out, "the threads JSON", json) }
    })
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use serde_json::Value;

    use super::*;
    use crate::turn::tests::{Tavern, head, last_error, take_json, tavern};

    fn plan(t: &Tavern, json: &str, now: i64) -> Result<u64, rp_result> {
        let mut id = u64::MAX;
        // SAFETY: a valid string and out-parameter.
        match unsafe {
            rp_engine_plan_event(t.engine, json.as_ptr().cast(), json.len(), now, &mut id)
        } {
            rp_result::Ok => Ok(id),
            code => {
                assert_eq!(id, u64::MAX, "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    fn complete(t: &Tavern, id: u64, promotion: Option<&str>) -> rp_result {
        let (json, len) = promotion.map_or((ptr::null(), 0), |p| (p.as_ptr(), p.len()));
        // SAFETY: NULL with length 0, or a valid string.
        unsafe { rp_engine_complete_event(t.engine, id, json.cast(), len, 0) }
    }

    fn event(t: &Tavern, id: u64) -> Value {
        let mut json = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        let result = unsafe { rp_engine_scoped_event(t.engine, id, &mut json) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        take_json(json)
    }

    fn picnic(t: &Tavern) -> String {
        serde_json::json!({
            "name": "the picnic",
            "participants": [t.wren, t.mira],
            "props": {"basket": "a wicker basket"},
        })
        .to_string()
    }

    #[test]
    fn an_event_runs_its_lifecycle_and_refuses_wrong_moves() {
        let t = tavern();
        let id = plan(&t, &picnic(&t), 0).expect("plans");
        assert_eq!(event(&t, id)["status"], "planned");
        let before = head(t.engine);
        assert_eq!(complete(&t, id, None), rp_result::Conflict);
        assert!(last_error().contains("cannot complete"), "{}", last_error());
        assert_eq!(head(t.engine), before);
        // SAFETY: plain values.
        assert_eq!(
            unsafe { rp_engine_start_event(t.engine, id, 0) },
            rp_result::Ok
        );
        let gist = format!(
            r#"{{"gists": [{{"witness": {}, "text": "We ate."}}]}}"#,
            t.mira
        );
        assert_eq!(complete(&t, id, Some(&gist)), rp_result::Ok);
        assert_eq!(event(&t, id)["status"], "completed");
        assert_eq!(complete(&t, id, None), rp_result::Conflict);
        assert!(last_error().contains("closed for good"), "{}", last_error());
    }

    #[test]
    fn bad_input_is_refused_and_changes_nothing() {
        let t = tavern();
        let before = head(t.engine);
        assert_eq!(plan(&t, "{", 0), Err(rp_result::Invalid));
        assert!(
            last_error().starts_with("invalid event plan"),
            "{}",
            last_error()
        );
        let bad = serde_json::json!({
            "name": "the picnic",
            "participants": [t.mira],
            "preconditions": ["time.is_day &&"],
        })
        .to_string();
        assert_eq!(plan(&t, &bad, 0), Err(rp_result::FactSyntax));
        assert_eq!(complete(&t, 1, Some("[")), rp_result::Invalid);
        assert!(
            last_error().starts_with("invalid promotion JSON"),
            "{}",
            last_error()
        );
        let mut id = 0;
        // SAFETY: NULL arguments are answered safely.
        unsafe {
            assert_eq!(
                rp_engine_open_thread(t.engine, c"x".as_ptr(), 1, ptr::null(), 1, 0, &mut id),
                rp_result::NullArgument
            );
            assert_eq!(
                rp_engine_run_due(t.engine, 0, ptr::null_mut()),
                rp_result::NullArgument
            );
        }
        assert_eq!(head(t.engine), before);
    }
}
