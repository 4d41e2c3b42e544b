//! The characters' inner life from C (docs/architecture.md): their drives and
//! candidate initiations read at a host time (rp-core's `Engine::drives`,
//! `Engine::initiation_candidates`), when the next tick is due
//! (`Engine::next_tick_at`), a tick begun as an `rp_job`
//! (`Engine::begin_tick`) or host time played through the host's model
//! (`rp_core::tick::advance`), and the events a host records: stimuli
//! (`Engine::notify`), drive settings (`Engine::configure_drives`),
//! personality (`Engine::set_personality`) and availability reports
//! (`Engine::report_availability`).
//!
//! Every rule (what a drive is worth, when a tick is due, what a tick does)
//! is rp-core's: these calls convert arguments and answers.

use std::ffi::{c_char, c_void};

use rp_core::drives::Candidate;
use rp_core::job::Job;
use rp_core::machine::block_on;
use rp_core::tick::TickOptions;
use rp_core::{DriveConfig, EntityId, Personality, Priority};
use serde::Serialize;

use crate::arg::{out_arg, str_arg};
use crate::engine::{CallingOut, rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::job::{new_job, rp_job};
use crate::run_turn::{CallbackGenerator, rp_generate_fn};
use crate::scene::read_json;
use crate::turn::to_json;
use crate::world::{invalid_json, write_json};

/// Reads tick options: `NULL` with length 0 means the defaults.
///
/// # Safety
///
/// `json` is `NULL` or points to `len` readable bytes.
unsafe fn tick_options_arg(json: *const c_char, len: usize) -> Result<TickOptions, Error> {
    if json.is_null() && len == 0 {
        return Ok(TickOptions::default());
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("options_json", json, len) }?;
    Ok(TickOptions::from_json(json)?)
}

/// A candidate initiation as C reads it: the candidate's fields and its
/// explanation in words.
#[derive(Serialize)]
struct ExplainedCandidate {
    #[serde(flatten)]
    candidate: Candidate,
    explanation: String,
}

/// Writes the drives of the engine-controlled entity `entity_id` at `now`
/// (host clock, ms; not before the world's clock) as JSON to `*out_json` (a
/// string the caller releases with `rp_string_free`). Changes nothing:
/// drives are functions of time between recorded changes, so any `now`
/// from the world's clock on may be read.
///
/// ```text
/// {"entity": 3, "at": 43200000,
///  "energy": 0.52,              // 0-1: falls while awake, rises asleep
///  "mode": "relaxed",           // "alert" (in a conversation), "normal"
///                               // (something pending), "relaxed" or
///                               // "sleep"
///  "interval_ms": 1776000.0,    // its inbox's processing interval now
///  "disturbance": 0.0,          // a sleeper's; what wakes it:
///  "wake_threshold": 0.74,
///  "social_debt": [[1, 1.0], [2, 0.0]],  // [entity, 0-1] toward each
///                               // entity it has an edge to, in id order
///  "task": 0.15, "curiosity": 0.0,       // 0-1
///  "pressure": 0.975,           // the highest initiation pressure toward
///                               // anyone within earshot (0 if no one)
///  "threshold": 0.75,           // the pressure at which it initiates
///  "personality": {"humor": 0.5, "formality": 0.5, "curiosity": 0.5,
///                  "patience": 0.5, "empathy": 0.5, "shyness": 0.5,
///                  "independence": 0.5},
///  "inbox": [STIMULUS, ...],    // waiting to be processed
///  "noticed": [STIMULUS, ...],  // processed, for its next prompt
///  "notes": [{"stimulus": STIMULUS, "fate": "filtered", "at": 60000}],
///                               // stimuli merged ({"merged": id}),
///                               // dropped ("stale", "overflow"),
///                               // "filtered" or that "woke" it
///  "held_until": null,          // no initiation before then, or null
///  "intentions": [{"rule": 40, "to": 1, "text": "the letter",
///                  "weight": 0.8, "at": 64800000}],
///                               // what fired rules left in mind
///                               // (docs/rules.md): an intention to speak
///                               // to "to", or a note ("to": null)
///  "awaiting": [{"to": 1, "at": 64800000,
///                "shares": [["intent", 1.0]], "rules": [40],
///                "reply": {"at": 64860000, "words": 1, "text": "ok"}}],
///                               // its initiations waiting for their
///                               // feedback ("reply": null until the
///                               // answer comes)
///  "learned": [{"to": 1, "term": "intent", "factor": 0.74}],
///                               // factors learned on its pressure's term
///                               // weights toward each addressee, 0.25-2
///  "feedback": [{"from": 1, "initiated_at": 64800000,
///                "latency_ms": 60000, "words": 1,
///                "sentiment": "negative", "reward": -0.8}]}
///                               // the answers it learned from, latest
///                               // last ("latency_ms", "sentiment": null
///                               // when no answer came)
/// ```
///
/// A `STIMULUS` is `{"id": 20, "kind": "door", "priority": "normal",
/// "payload": "the door slams", "at": 60000, "count": 1}` (see
/// `rp_engine_notify`; `"count"`: how many merged into it).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_INVALID` for a host-controlled entity (the player has
/// no drives) or a `now` before the world's clock; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_drives(
    engine: *const rp_engine,
    entity_id: u64,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the drives JSON", |e| {
                Ok(to_json(&e.drives(EntityId(entity_id), now)?))
            })
        }
    })
}

/// Writes the candidate initiations of the engine-controlled entity
/// `entity_id` at `now` (host clock, ms; not before the world's clock) as a
/// JSON array to `*out_json` (a string the caller releases with
/// `rp_string_free`): one per entity it has an edge to among those within
/// earshot and awake, highest pressure first. Changes nothing.
///
/// Each candidate is rp-core's `Candidate` with its explanation in words
/// added as `"explanation"` (rp-core's `Candidate::explain`):
///
/// ```text
/// [{"speaker": 3, "to": 1,
///   "about": "social_debt",     // the drive that weighs most: also
///                               // "task", "curiosity" or "intent" (a
///                               // rule's intention; docs/rules.md)
///   "terms": [{"name": "social_debt", "value": 1.0, "weight": 0.6,
///              "learned": 1.0,  // the factor learned toward "to" from
///                               // feedback, already in "weight"
///              "contribution": 0.6},
///             {"name": "task", ...}, {"name": "curiosity", ...},
///             {"name": "availability", ...},
///             {"name": "intent", ...}],   // always these five
///   "score": 0.975,             // the sum of the contributions
///   "threshold": 0.75,
///   "pushed_over_by": "social_debt",  // the term without which the score
///                               // would stay below the threshold, or null
///   "gates": [{"name": "awake", "open": true, "detail": "awake"},
///             {"name": "energy", "open": true,
///              "detail": "energy 0.52, needs 0.20"},
///             {"name": "availability", ...}, {"name": "held", ...}],
///                               // all open: it may initiate
///   "rules": [40],              // the rules whose intentions toward "to"
///                               // weigh in the "intent" term
///   "learned": null,            // what feedback taught it about "to", in
///                               // words ("Tobias Reed speaks up less to
///                               // Wren (learned × 0.72) since Wren twice
///                               // answered curtly"), or null
///   "explanation": "Tobias Reed → Wren: pressure 0.97 ≥ threshold 0.75
///                   (about social_debt)\n  social_debt   1.00 × 0.60 =
///                   0.600\n ... gate held         open (not held)\n"}]
/// ```
///
/// The explanation has one line for the pressure, one per term (ending
/// with `(learned × 0.72)` when a factor was learned), one for the
/// `"learned"` sentence when there is one, one for `pushed_over_by` and one
/// per gate, each ending with `\n`.
///
/// A tick adds one more gate, `"sheet"` (the fact sheet's `$initiate`),
/// when the candidate crosses.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_INVALID` for a host-controlled entity or a `now`
/// before the world's clock; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_initiation_candidates(
    engine: *const rp_engine,
    entity_id: u64,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the candidates JSON", |e| {
                let candidates = e.initiation_candidates(EntityId(entity_id), now)?;
                let explained: Vec<ExplainedCandidate> = candidates
                    .into_iter()
                    .map(|candidate| ExplainedCandidate {
                        explanation: candidate.explain(e.world()),
                        candidate,
                    })
                    .collect();
                Ok(to_json(&explained))
            })
        }
    })
}

/// When the next tick is due, seen from `now` (host clock, ms; not before
/// the world's clock): the exact earliest time at or after `now` at which a
/// tick does something (a pressure reaching its threshold with its gates
/// open, a character falling asleep or waking, an inbox due, a `$retry`, a
/// scoped event's start or expiry). Changes nothing.
///
/// Writes `*out_due`: `true` when there is such a time, written to
/// `*out_at`; `false` when nothing will happen until the host changes
/// something (a line, a stimulus, a setting), with `*out_at` set to 0. A
/// host sleeps until `*out_at` and begins a tick then
/// (`rp_engine_begin_tick`). `rp_engine_next_tick` says why.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `now` is before the
/// world's clock; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_at` and `out_due` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_next_tick_at(
    engine: *const rp_engine,
    now: i64,
    out_at: *mut i64,
    out_due: *mut bool,
) -> rp_result {
    ffi_result(|| {
        let out_at = out_arg("out_at", out_at)?;
        let out_due = out_arg("out_due", out_due)?;
        let next = with_engine(engine, |e| Ok(e.next_tick_at(now)?))?;
        // SAFETY: both are non-NULL pointers the caller made writable.
        unsafe {
            out_at.write(next.map_or(0, |next| next.at));
            out_due.write(next.is_some());
        }
        Ok(())
    })
}

/// `rp_engine_next_tick_at` with the reason, as JSON written to
/// `*out_json` (a string the caller releases with `rp_string_free`):
///
/// ```text
/// {"at": 43200000,               // host time
///  "entity": 3,                  // the character concerned, or null for
///                                // the story
///  "reason": {"kind": "pressure", "to": 1}}
///                                // its pressure toward entity 1 reaches
///                                // the threshold; or {"kind": "sleep"},
///                                // "wake", "inbox", "retry", "story",
///                                // "reflect" (enough lived to reflect
///                                // on), "decay" (entity null: a memory
///                                // fades; docs/memory.md), "rule" (a
///                                // rule's time, or an unused rule
///                                // forgotten), "feedback" (the answer
///                                // to an initiation came, or the wait
///                                // for it ended; docs/rules.md)
/// ```
///
/// or `null` when nothing will happen until the host changes something.
/// The codes are those of `rp_engine_next_tick_at`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_next_tick(
    engine: *const rp_engine,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the next tick JSON", |e| {
                Ok(to_json(&e.next_tick_at(now)?))
            })
        }
    })
}

/// Begins a tick at `now` (host clock, ms; not before the world's clock;
/// usually the time `rp_engine_next_tick_at` gave) and writes the new job
/// to `*out_job`; drive it with `rp_job_step`, `rp_job_provide` and
/// `rp_job_finish`, or run it with `rp_engine_run_job`.
///
/// Unlike the other jobs, a tick commits as it goes:
///
/// 1. at once, in this call, its arithmetic: the clock moves to `now`,
///    scoped events due start or expire, characters fall asleep or wake,
///    inboxes due are processed, rules due fire or are forgotten, an
///    initiation left unanswered is learned from (docs/rules.md), memories
///    fade to a residue or are forgotten (one commit; none when nothing is
///    due);
/// 2. then the work it found, each answer committed as it comes: the tone
///    of each answer to an initiation (purpose `{"kind": "classify",
///    "speaker": 3}`: answer `{"sentiment": "positive"}`, `"neutral"` or
///    `"negative"`, and nothing else; docs/rules.md), what stimuli hoisted
///    past arithmetic and rules mean (purpose `classify`: answer
///    `{"intent": "...", "sentiment": "neutral", "confidence": 0.8,
///    "significance": 0.3}`) and a character's thought on those that matter
///    (purpose `{"kind": "think", "speaker": 3}`: answer `{"thought":
///    "...", "task": "more", "speak_to": "Wren", "about": "..."}`, all but
///    `thought` optional; docs/drives.md "Layers"), summaries of whole memories that faded (a `"generate"`
///    step of purpose `"summary"` with a `json_schema`: answer
///    `{"summaries": [{"id": 12, "summary": "...", "feeling": "fond",
///    "about": "Wren"}]}`), then reflections (purpose `{"kind": "reflect",
///    "speaker": 3}`: answer `{"insights": [{"text": "...", "sources":
///    [12, 17], "significance": 0.8}]}`); a bad answer is asked again once
///    with what was wrong;
/// 3. then, for each character whose pressure crossed its threshold with
///    every gate open (at most `"max_initiations"`, highest pressure
///    first), the job asks for one line (a `"generate"` step of purpose
///    `{"kind": "initiate", "speaker": 3}`) and runs the rest as a turn:
///    the line is said to those within earshot, who answer as response
///    control decides (steps of purpose `"reply"`). Each initiation's turn
///    is committed when it ends, before the next one is asked for.
///
/// With nothing due the first step is `"done"` and nothing is committed.
/// A job freed before it finishes keeps what was committed (the
/// arithmetic, the initiations that ended) and abandons the initiation in
/// progress. `rp_job_fail` holds the initiation in progress back for one
/// processing interval (committed; a reflection is recorded as rejected,
/// summaries are asked for again an hour later) and ends the tick;
/// `rp_job_finish` then returns `RP_RESULT_GENERATION` with the reason.
///
/// `options_json` (`options_json_len` bytes of UTF-8, borrowed for the
/// call; `NULL` with length 0 for the defaults) is an object whose fields
/// are all optional; unknown fields are refused:
///
/// ```text
/// {"turn": {...},             // the options of the initiations' turns
///                             // (see rp_turn_begin)
///  "max_initiations": 2}      // the most characters that start a
///                             // conversation in one tick
/// ```
///
/// A tick whose turn options say `"semantic": true` or declare host
/// `"actions"` also asks for `"embed"` and `"act"` steps, answered with
/// `rp_job_provide_embeddings` and `rp_job_provide_action` (or failed).
///
/// The outcome `rp_job_finish` writes is described there.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for options that do not
/// match or are out of range, or a `now` before the world's clock;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure no job is made
/// and nothing changes.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` (with `options_json_len` 0) or points to
/// `options_json_len` readable bytes; `out_job` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_begin_tick(
    engine: *mut rp_engine,
    now: i64,
    options_json: *const c_char,
    options_json_len: usize,
    out_job: *mut *mut rp_job,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { tick_options_arg(options_json, options_json_len) }?;
        let out = out_arg("out_job", out_job)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { new_job(engine, out, |e| Ok(Job::from(e.begin_tick(now, options)?))) }
    })
}

/// Plays host time from the world's clock to `until` (host clock, ms; not
/// before the world's clock) through the host's model: a tick at each time
/// `rp_engine_next_tick_at` gives up to `until`, each generation answered
/// by `generate`, then the clock moves to `until`. Writes the outcome of
/// each tick, in order, as a JSON array to `*out_json` (a string the caller
/// releases with `rp_string_free`); each is the outcome `rp_job_finish`
/// writes for a tick. The same as `rp_engine_next_tick_at`,
/// `rp_engine_begin_tick` and `rp_engine_run_job` in a loop.
///
/// - `options_json`, `options_json_len`: the tick options, as for
///   `rp_engine_begin_tick` (`NULL` with length 0 for the defaults).
/// - `generate`: the host's model (see `rp_generate_fn`; what it streams
///   through its sink goes nowhere); must not be `NULL`.
/// - `user_data`: handed to `generate` untouched; may be `NULL`.
///
/// The callback runs on the calling thread, before this call returns, while
/// the engine is held: other threads' calls on the engine wait, and the
/// callback's own calls with this engine are refused with
/// `RP_RESULT_CONFLICT`.
///
/// Each tick commits as it goes (see `rp_engine_begin_tick`), so a failure
/// keeps what the ticks before it committed. When `generate` fails (returns
/// another code than `RP_RESULT_OK`, or a result rp cannot read), the
/// initiation it was asked for is held back (committed), the call stops and
/// returns `RP_RESULT_GENERATION` with the callback's message in
/// `rp_last_error()`, and nothing is written to `*out_json`. So does a tick
/// whose turn options ask for vectors (`"semantic": true`) or carry out
/// host actions, which this callback cannot answer.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_GENERATION` as above;
/// `RP_RESULT_INVALID` for options that do not match or are out of range,
/// an `until` before the world's clock, or a result the world refuses;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` (with `options_json_len` 0) or points to
/// `options_json_len` readable bytes; `generate` follows its type's
/// documentation; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_advance(
    engine: *mut rp_engine,
    until: i64,
    options_json: *const c_char,
    options_json_len: usize,
    generate: rp_generate_fn,
    user_data: *mut c_void,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { tick_options_arg(options_json, options_json_len) }?;
        let generate =
            generate.ok_or_else(|| Error::new(rp_result::NullArgument, "`generate` is NULL"))?;
        let out = out_arg("out_json", out_json)?;
        let generator = CallbackGenerator::generate_only(generate, user_data);
        let json = with_engine(engine, |e| {
            let _calling_out = CallingOut::new(engine);
            let outcomes = block_on(rp_core::tick::advance(e, until, &options, &generator))?;
            Ok(to_json(&outcomes))
        })?;
        // SAFETY: the caller made the non-NULL `out_json` writable.
        unsafe { write_json(out, "the tick outcomes JSON", json) }
    })
}

/// Delivers a stimulus to the inbox of the engine-controlled entity
/// `entity_id` at `now` (host clock, ms; the world's clock advances to it)
/// and writes its id to `*out_stimulus_id`: something the character
/// perceives outside dialogue (a door slams, a message arrives). Recorded
/// as one event (with the clock's advance, if any). What the inbox did with
/// it (queued, merged into an earlier one, dropped, filtered by a sleeper,
/// or woke it) shows in `rp_engine_drives` (`"inbox"`, `"notes"`); a tick
/// processes it when its inbox is due.
///
/// - `kind`, `kind_len`: a built-in kind (`"line"`, `"sound"`, `"sight"`,
///   `"touch"`, `"message"`, `"lore"`, `"game"`) or one the world's drive
///   settings add (`"stimulus_kinds"`, see `rp_engine_configure_drives`).
/// - `priority`, `priority_len`: `"critical"` (never filtered, wakes a
///   sleeper), `"high"`, `"normal"`, `"low"` or `"idle"`.
/// - `payload`, `payload_len`: what it is, in prose (at most 4096 bytes).
///
/// All three are UTF-8, borrowed for the call.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_INVALID` for an unknown kind or priority, a payload
/// too long, a host-controlled entity, or a `now` before the world's clock;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `kind`, `priority` and `payload` point to `kind_len`, `priority_len` and
/// `payload_len` readable bytes; `out_stimulus_id` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_notify(
    engine: *mut rp_engine,
    entity_id: u64,
    kind: *const c_char,
    kind_len: usize,
    priority: *const c_char,
    priority_len: usize,
    payload: *const c_char,
    payload_len: usize,
    now: i64,
    out_stimulus_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees each string points to its length
        // in bytes.
        let (kind, priority, payload) = unsafe {
            (
                str_arg("kind", kind, kind_len)?,
                str_arg("priority", priority, priority_len)?,
                str_arg("payload", payload, payload_len)?,
            )
        };
        let out = out_arg("out_stimulus_id", out_stimulus_id)?;
        let priority = Priority::from_name(priority).map_err(|e| invalid_json("priority", e))?;
        let id = with_engine(engine, |e| {
            Ok(e.notify(EntityId(entity_id), kind, priority, payload, now)?)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// Sets drive settings: the world's with `entity_id` 0, or else those of
/// the engine-controlled entity `entity_id`, laid over the world's. Each
/// call replaces the settings of its scope, those a world file's `[drives]`
/// tables set included (fields not given take the world's value, or the
/// built-in default). Recorded as one event.
///
/// `config_json` (`config_json_len` bytes of UTF-8, borrowed for the call)
/// is an object whose fields are all optional; unknown fields are refused:
///
/// ```text
/// {"enabled": true,                  // false: no drives (items)
///  "energy_per_line": 0.02,          // energy a generated line costs, 0-1
///  "energy_drain_per_hour": 0.04,    // lost awake; rates are >= 0
///  "energy_recharge_per_hour": 0.15, // regained asleep
///  "social_debt_per_hour": 0.25,     // gained without contact, at
///                                    // affinity 0 (doubled at 1)
///  "follow_up_hours": 2.0,           // task and curiosity come back
///                                    // over this after it speaks
///  "threshold": 0.75,                // the pressure that initiates, 0-1
///  "min_energy": 0.2,                // the least energy to initiate
///  "availability_gate": 0.3,         // below this believed availability
///                                    // only urgent initiations go ahead
///  "urgent_task": 0.8,               // task pressure that is urgent
///  "belief_hours": 2.0,              // an availability report fades
///                                    // over this
///  "belief_half_life_hours": 6.0,    // a belief about someone's mood,
///                                    // energy or availability loses
///                                    // half its confidence over this
///  "trait_half_life_hours": 720.0,   // and one about traits or
///                                    // feelings (see rp_engine_beliefs)
///  "night_start": 22.0, "night_end": 6.0,   // hours of day, 0-24
///  "sleep_energy": 0.05,             // falls asleep at or below this
///  "wake_energy": 0.3,               // wakes by day once back to this
///  "alert_minutes": 5.0,             // alert after a line said or heard
///  "interval_alert_s": 10.0, "interval_normal_s": 120.0,
///  "interval_relaxed_s": 1200.0, "interval_sleep_s": 3600.0,
///                                    // inbox processing intervals
///  "night_factor": 1.5,              // intervals at night are longer
///  "disturbance_decay": 0.95,        // a sleeper's disturbance kept per
///                                    // sleep interval
///  "inbox_capacity": 32,             // at least 1
///  "aggregate_ms": 5000,             // same kind within this: merged
///  "stale_low_ms": 60000, "stale_idle_ms": 30000,  // dropped when older
///  "weights": {"social_debt": 0.6, "task": 0.5, "curiosity": 0.4,
///              "availability": 0.3, "intent": 0.6},
///                                    // of the pressure terms, 0-10
///  "stimulus_kinds": ["door"],      // kinds beyond the built-in ones
///                                    // (letters, digits, '_', '-')
///  "memory_stability_hours": 24.0,   // memories (docs/memory.md): how
///                                    // long one of significance 0.5
///                                    // stays 90 % kept
///  "summary_below": 0.6, "residue_below": 0.35, "forget_below": 0.2,
///                                    // retention thresholds of the
///                                    // stages, in this order
///  "consolidated_days": 180.0,       // stability that stops fading
///  "keep_recalls": 5,                // recalls that keep a summary
///  "reflect_threshold": 15.0,        // summed significance to reflect
///  "reflect_memories": 20,           // memories a reflection reads, 1-100
///  "summary_batch": 20,              // memories per summary request, 1-100
///  "decay_pass_hours": 1.0,          // least time between decay passes
///  "rule_half_life_days": 7.0,       // rules (docs/rules.md): an unused
///                                    // rule's weight halves over this,
///  "rule_forget_below": 0.05,        // and it is forgotten below this
///  "learn_timing": 0.3,              // how fast feedback moves the term
///                                    // factors toward an addressee,
///  "learn_rules": 0.15,              // rules' weights,
///  "learn_personality": 0.01,        // and independence
///  "feedback_wait_minutes": 30.0}    // an initiation unanswered this long
///                                    // counts as ignored
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match or a value out of range (a negative rate, a threshold above 1),
/// or a host-controlled entity; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `config_json` points to `config_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_configure_drives(
    engine: *mut rp_engine,
    entity_id: u64,
    config_json: *const c_char,
    config_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `config_json` points to
        // `config_json_len` bytes.
        let json = unsafe { str_arg("config_json", config_json, config_json_len) }?;
        let config = DriveConfig::from_json(json)?;
        let entity = (entity_id != 0).then_some(EntityId(entity_id));
        with_engine(engine, |e| Ok(e.configure_drives(entity, config)?))?;
        Ok(())
    })
}

/// Sets the personality of the engine-controlled entity `entity_id`: seven
/// traits, each in [0, 1], that shift its threshold, weights and patience
/// and give its prompt a temperament line. Recorded as one event.
///
/// `personality_json` (`personality_json_len` bytes of UTF-8, borrowed for
/// the call) is an object; traits not given are 0.5, unknown fields are
/// refused:
///
/// ```text
/// {"humor": 0.5,         // 0 serious, 1 playful
///  "formality": 0.5,     // 0 casual, 1 formal
///  "curiosity": 0.5,     // 0 passive, 1 inquisitive
///  "patience": 0.5,      // 0 impatient, 1 patient
///  "empathy": 0.5,       // 0 detached, 1 emotionally attuned
///  "shyness": 0.5,       // 0 direct, 1 hesitant
///  "independence": 0.5}  // 0 approval-seeking, 1 self-directed
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, a trait outside [0, 1] (the message names it), or a
/// host-controlled entity; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `personality_json` points to `personality_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_set_personality(
    engine: *mut rp_engine,
    entity_id: u64,
    personality_json: *const c_char,
    personality_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `personality_json` points to
        // `personality_json_len` bytes.
        let json = unsafe { str_arg("personality_json", personality_json, personality_json_len) }?;
        let personality = Personality::from_json(json)?;
        with_engine(engine, |e| {
            Ok(e.set_personality(EntityId(entity_id), personality)?)
        })?;
        Ok(())
    })
}

/// Reports the availability of entity `entity_id` (usually the player) at
/// `now` (host clock, ms; the world's clock advances to it): 1 present and
/// attentive, 0.3 idle, 0 away. Every character believes it, with a
/// confidence that fades over the drive settings' `"belief_hours"`; below
/// the `"availability_gate"` only urgent initiations go ahead. Recorded as
/// one event (with the clock's advance, if any).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// entity; `RP_RESULT_INVALID` for an availability outside [0, 1] (or not
/// a number) or a `now` before the world's clock;
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
pub unsafe extern "C" fn rp_engine_report_availability(
    engine: *mut rp_engine,
    entity_id: u64,
    availability: f64,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        with_engine(engine, |e| {
            Ok(e.report_availability(EntityId(entity_id), availability, now)?)
        })?;
        Ok(())
    })
}
