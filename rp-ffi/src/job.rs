//! Jobs from C (docs/architecture.md): the sans-IO machines other than the turn,
//! as calls on an `rp_job`: closing a scene (rp-core's `SceneClose`), a
//! time skip (`TimeSkip`), a world query (`QueryMachine`) and a tick
//! (`TickMachine`, begun in [`crate::drives`]). One handle type serves them
//! all, since they share the loop: step, provide what the step asks for (a
//! generation; a tick's turns may also ask for vectors and host actions),
//! finish. `rp_engine_run_job` is the callback form.
//!
//! An `rp_job` holds the owned machine beside the handle number of the
//! engine it began on, like an `rp_turn`.

use std::ffi::{c_char, c_void};

use rp_core::job::Job;
use rp_core::machine::{GenerateResult, NoSink, block_on};
use rp_core::query::{QueryInput, QueryMachine};
use rp_core::scene::{SceneClose, SceneOptions};
use rp_core::{ContainerId, Engine, SceneId, Skip};

use crate::arg::{out_arg, str_arg};
use crate::engine::{CallingOut, check_engine, rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::handle::{Handles, Publish};
use crate::run_turn::{CallbackGenerator, rp_generate_fn};
use crate::turn::{action_answer_arg, from_json, to_c_json, to_json};
use crate::world::{invalid_json, write_json};

/// A job in progress: a sans-IO loop of the engine other than the turn
/// (closing a scene, a time skip, a world query, a tick), begun with
/// `rp_engine_begin_scene_close`, `rp_engine_begin_close_current_scene`,
/// `rp_engine_begin_time_skip`, `rp_engine_begin_query` or
/// `rp_engine_begin_tick`; driven with `rp_job_step` and `rp_job_provide`
/// (`rp_job_provide_embeddings` and `rp_job_provide_action` for the vectors
/// and host actions a tick's turns may ask for), the poll form, or run
/// whole by `rp_engine_run_job` (the callback form); committed with
/// `rp_job_finish`; released with `rp_job_free`.
///
/// Nothing of a job is committed before it finishes: a job freed before
/// (or abandoned) leaves the world as it was. A tick is the exception: it
/// commits as it goes (see `rp_engine_begin_tick`).
///
/// A job belongs to the engine it began on: every call takes that engine
/// again, and another engine is refused with `RP_RESULT_INVALID`. Once
/// `rp_job_finish` (or `rp_engine_run_job`) has finished it, the job is
/// over: calls other than `rp_job_free` are refused with
/// `RP_RESULT_CONFLICT`. If the engine changes while a job is open (a turn
/// finishes, an event is appended, another job finishes), the job is
/// refused with `RP_RESULT_CONFLICT` from then on: free it and begin again.
///
/// The handle is opaque and never dereferenced: a freed or foreign handle is
/// refused with `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any, like `rp_engine`; calls on one job run one at a time.
#[allow(non_camel_case_types)]
pub struct rp_job {
    _opaque: [u8; 0],
}

/// Where a job is.
enum Stage {
    /// Waiting for the host's next call.
    Ready(Job),
    /// `rp_engine_run_job` holds the machine.
    Running,
    /// Finished (or its finish failed): only freeing is left.
    Over,
}

/// A job behind its handle: the engine it began on and where it is.
struct JobState {
    /// The handle number of the engine (numbers are never reused, so it
    /// names that engine for good).
    engine: usize,
    stage: Stage,
}

impl Publish for JobState {}

/// Every live job.
fn jobs() -> &'static Handles<JobState> {
    static JOBS: Handles<JobState> = Handles::new();
    &JOBS
}

/// Runs `body` on the job of handle argument `job`, holding its lock, after
/// checking it began on `engine`.
fn with_job_state<R>(
    engine: *const rp_engine,
    job: *mut rp_job,
    body: impl FnOnce(&mut JobState) -> Result<R, Error>,
) -> Result<R, Error> {
    check_engine(engine)?;
    jobs().with("job", job.addr(), |state| {
        if state.engine != engine.addr() {
            return Err(Error::new(
                rp_result::Invalid,
                "`job` began on another engine; pass the engine it began on",
            ));
        }
        body(state)
    })
}

/// Runs `body` on the machine of a job that is ready and on its engine,
/// holding the job's lock, then the engine's.
fn with_job<R>(
    engine: *mut rp_engine,
    job: *mut rp_job,
    body: impl FnOnce(&mut Engine, &mut Stage) -> Result<R, Error>,
) -> Result<R, Error> {
    with_job_state(engine, job, |state| {
        ready(&mut state.stage)?;
        with_engine(engine, |engine| body(engine, &mut state.stage))
    })
}

/// The machine of a job that is ready.
fn ready(stage: &mut Stage) -> Result<&mut Job, Error> {
    match stage {
        Stage::Ready(machine) => Ok(machine),
        Stage::Running => Err(Error::new(
            rp_result::Conflict,
            "`job` is being run by rp_engine_run_job; wait for it to return",
        )),
        Stage::Over => Err(Error::new(
            rp_result::Conflict,
            "`job` is over: it was finished; free it with rp_job_free and begin a new job",
        )),
    }
}

/// Registers a new job of `engine` and writes its handle to `out`.
///
/// # Safety
///
/// `out` is writable.
pub(crate) unsafe fn new_job(
    engine: *mut rp_engine,
    out: std::ptr::NonNull<*mut rp_job>,
    begin: impl FnOnce(&mut Engine) -> Result<Job, Error>,
) -> Result<(), Error> {
    let machine = with_engine(engine, begin)?;
    let number = jobs().insert(JobState {
        engine: engine.addr(),
        stage: Stage::Ready(machine),
    });
    // SAFETY: the caller guarantees `out` is writable.
    unsafe { out.write(std::ptr::without_provenance_mut(number)) };
    Ok(())
}

/// Reads scene options: `NULL` with length 0 means the defaults.
///
/// # Safety
///
/// `json` is `NULL` or points to `len` readable bytes.
pub(crate) unsafe fn scene_options_arg(
    json: *const c_char,
    len: usize,
) -> Result<SceneOptions, Error> {
    if json.is_null() && len == 0 {
        return Ok(SceneOptions::default());
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("options_json", json, len) }?;
    let options = SceneOptions::from_json(json)?;
    options.check()?;
    Ok(options)
}

/// The two ways to begin a scene close: reads the options, begins the close
/// with `begin` and writes the new job to `*out_job`.
///
/// # Safety
///
/// `options_json` is `NULL` (with `options_json_len` 0) or points to
/// `options_json_len` readable bytes; `out_job` is writable.
unsafe fn scene_close_job(
    engine: *mut rp_engine,
    options_json: *const c_char,
    options_json_len: usize,
    out_job: *mut *mut rp_job,
    begin: impl FnOnce(&mut Engine, &SceneOptions) -> rp_core::Result<SceneClose>
    + std::panic::UnwindSafe,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { scene_options_arg(options_json, options_json_len) }?;
        let out = out_arg("out_job", out_job)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { new_job(engine, out, |e| Ok(Job::from(begin(e, &options)?))) }
    })
}

/// Begins closing the open scene `scene_id` at `now` (host clock, ms; not
/// before the world's clock nor the scene's opening), whether or not it is
/// due, and writes the new job to `*out_job`. Nothing changes until
/// `rp_job_finish`.
///
/// The job asks for one summary per witness of the scene (`rp_job_step`), in
/// witness id order, each prompt carrying only that witness's view: its
/// identity, its edges, the lines of the scene it heard. Finishing commits,
/// in one transaction, the scene's close, one scene-summary memory per
/// witness (owned by that witness alone: `rp_engine_memories_of`), and with
/// three or more witnesses a group node of exactly them if there is none. A
/// scene in which nothing was said asks for nothing and closes without
/// summaries.
///
/// `options_json` (`options_json_len` bytes of UTF-8, borrowed for the
/// call; `NULL` with length 0 for the defaults) is an object whose fields
/// are all optional; unknown fields are refused (the same object is the
/// `"scenes"` field of the turn options, see `rp_turn_begin`):
///
/// ```text
/// {"enabled": true,             // turns open and close scenes (the
///                               // jobs ignore it, but a time skip with
///                               // false closes no scene)
///  "max_gap_ms": 3600000,       // a scene whose newest line (or opening)
///                               // is this old is due to close; 0: never
///  "close_on_departure": true,  // a scene is due when a witness left
///  "sampling": {"temperature": 0.3},  // of the summary requests, as the
///                               // turn options' "sampling"
///  "summary_lines": 64,         // the most lines of the scene a summary
///                               // prompt carries, at least 1
///  "significance": 0.6,         // of the summary memories, 0-1
///  "group_nodes": true}         // make the group node of 3+ witnesses
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// scene; `RP_RESULT_CONFLICT` when it is closed already, or when called
/// from a callback running on this engine; `RP_RESULT_INVALID` for options
/// that do not match or are out of range, or a `now` before the world's
/// clock or the scene's opening; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`. On failure no job
/// is made and nothing changes.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` (with `options_json_len` 0) or points to
/// `options_json_len` readable bytes; `out_job` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_begin_scene_close(
    engine: *mut rp_engine,
    scene_id: u64,
    now: i64,
    options_json: *const c_char,
    options_json_len: usize,
    out_job: *mut *mut rp_job,
) -> rp_result {
    // SAFETY: the caller upholds this function's contract, which is
    // scene_close_job's.
    unsafe {
        scene_close_job(engine, options_json, options_json_len, out_job, |e, o| {
            e.begin_scene_close(SceneId(scene_id), now, o)
        })
    }
}

/// Begins closing the current (newest open) scene of container
/// `container_id` at `now`: `rp_engine_begin_scene_close` for that scene,
/// with the same options, job and codes; also `RP_RESULT_NOT_FOUND` when
/// there is no such container or it has no open scene.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// As for `rp_engine_begin_scene_close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_begin_close_current_scene(
    engine: *mut rp_engine,
    container_id: u64,
    now: i64,
    options_json: *const c_char,
    options_json_len: usize,
    out_job: *mut *mut rp_job,
) -> rp_result {
    // SAFETY: as above.
    unsafe {
        scene_close_job(engine, options_json, options_json_len, out_job, |e, o| {
            e.begin_close_current_scene(ContainerId(container_id), now, o)
        })
    }
}

/// Begins a time skip and writes the new job to `*out_job`. Nothing
/// changes until `rp_job_finish`, which commits the whole skip in one
/// transaction:
///
/// 1. every open scene closes at the moment the skip begins, each witness
///    with its own summary (the job's `"generate"` steps, as for
///    `rp_engine_begin_scene_close`; with `"enabled": false` in the options
///    no scene is closed and nothing is asked for);
/// 2. the clock moves to the landing time;
/// 3. the scoped-event transitions due in between run forward in time
///    order: starts whose time came and whose conditions hold, expiries
///    (see `rp_engine_plan_event`);
/// 4. the actions over by the landing time end (action, attention and
///    status cleared; position, posture and what is held stay); after a
///    jump every action is over.
///
/// Rewinding to the head before the skip (`rp_engine_rewind`) restores the
/// world as it was.
///
/// `skip_json` (`skip_json_len` bytes of UTF-8, borrowed for the call) says
/// where the skip lands; unknown fields are refused:
///
/// ```text
/// {"kind": "jump", "to": 36000000}   // to a time (host clock, ms),
///                                    // after the world's clock
/// {"kind": "elision", "entity": 3}   // through the middle of entity 3's
///                                    // action, to its end (its start
///                                    // plus its duration)
/// ```
///
/// `options_json`, `options_json_len`: the scene options of the scenes it
/// closes, as for `rp_engine_begin_scene_close` (`NULL` with length 0 for
/// the defaults).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, options out of range, a landing time not after the world's clock,
/// an entity doing nothing or whose action has no duration;
/// `RP_RESULT_NOT_FOUND` for an unknown entity; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine). On
/// failure no job is made and nothing changes.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `skip_json` points to `skip_json_len` readable bytes; `options_json` is
/// `NULL` (with `options_json_len` 0) or points to `options_json_len`
/// readable bytes; `out_job` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_begin_time_skip(
    engine: *mut rp_engine,
    skip_json: *const c_char,
    skip_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_job: *mut *mut rp_job,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `skip_json` points to
        // `skip_json_len` bytes.
        let skip = unsafe { str_arg("skip_json", skip_json, skip_json_len) }?;
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { scene_options_arg(options_json, options_json_len) }?;
        let out = out_arg("out_job", out_job)?;
        let skip: Skip =
            serde_json::from_str(skip).map_err(|error| invalid_json("time skip", error))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe {
            new_job(engine, out, |e| {
                Ok(Job::from(e.begin_time_skip(skip, &options)?))
            })
        }
    })
}

/// Begins a world query, a question about the world answered by the host's
/// model in rounds, and writes the new job to `*out_job`. Nothing is
/// committed until `rp_job_finish`, which records the query (asked, then
/// answered or failed) in one transaction; `rp_engine_query` and
/// `rp_engine_recent_queries` read it afterwards, also after a restart.
///
/// `input_json` (`input_json_len` bytes of UTF-8, borrowed for the call) is
/// an object; unknown fields are refused:
///
/// ```text
/// {"text": "Who runs the Crooked Lantern?",  // 1 to 10000 characters
///  "asked_as": 3,            // optional: ask as this entity; the answer
///                            // may use only what it could know (its own
///                            // memories and edges, whom it has met)
///  "now": 60000,             // the host clock, ms
///  "config": {               // optional, every field optional
///    "max_info_requests": 3,     // rounds the model may ask for more
///                                // before it must answer, 0-20
///    "max_initial_entities": 10, // entities of the first context, 1-100
///    "include_relationships": true,
///    "temperature": 0.7,         // of its requests, 0-2
///    "result_limit": 20,         // the most one info request adds, 1-200
///    "as_of": {"seq": 120}}}     // ask about the past (docs/history.md):
///                                // the context is the world as it was
///                                // after that seq, or {"time": ms} (the
///                                // last event at or before it); with
///                                // "branch": "name" on another branch.
///                                // Recorded with the query, which is
///                                // committed now (see rp_engine_memories_at
///                                // for the errors of a bad point)
/// ```
///
/// Each `"generate"` step (purpose `{"kind": "query"}`) carries the context
/// and the capabilities the model may use, and a `"json_schema"`. The
/// model's answer is the `"text"` of the result (`rp_job_provide`), one
/// JSON object:
///
/// ```text
/// {"type": "answer", "content": "Mira runs the bar.",
///  "confidence": "high",                 // "high", "medium" or "low"
///  "sources": [{"entity_id": 12, "contribution": "her facts",
///               "relevance": 0.9}],      // entities of the context
///  "suggested_follow_ups": ["Who supplies the ale?"]}
/// {"type": "needs_more_info", "reason": "I need Mira's ties.",
///  "requests": [{"capability_id": "GET_RELATIONSHIPS",
///                "params": {"entity_ids": [12], "direction": "both"},
///                "reason": "who she knows"}]}
/// ```
///
/// An answer ends the loop (the next step is `"done"`). A needs-more-info
/// is fulfilled and asked again with the larger context; a request that
/// breaks the capabilities' constraints, or the last allowed round, forces
/// an answer (low confidence). An answer that cannot be read is asked for
/// once more with the problem; a second one fails the query. None of these
/// is an error of `rp_job_provide`: the record says what happened.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not
/// match, an empty or too long question, a configuration out of range, an
/// `as_of` seq outside its branch or time before the world;
/// `RP_RESULT_NOT_FOUND` for an unknown `asked_as` (or one that did not
/// exist yet at `as_of`), an unknown `as_of` branch;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// running on this engine). On failure no job is made and nothing changes.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `input_json` points to `input_json_len` readable bytes; `out_job` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_begin_query(
    engine: *mut rp_engine,
    input_json: *const c_char,
    input_json_len: usize,
    out_job: *mut *mut rp_job,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `input_json` points to
        // `input_json_len` bytes.
        let input = unsafe { str_arg("input_json", input_json, input_json_len) }?;
        let out = out_arg("out_job", out_job)?;
        let input = QueryInput::from_json(input)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe {
            new_job(engine, out, |e| {
                Ok(Job::from(QueryMachine::begin(e, input)?))
            })
        }
    })
}

/// What the job needs next, as JSON written to `*out_step_json` (a string
/// the caller releases with `rp_string_free`), in the shape of
/// `rp_turn_step`; a scene close, a time skip and a query ask only for
/// generations:
///
/// ```text
/// {"step": "generate",
///  "purpose": {"kind": "summary"},   // a witness's summary of a scene, or
///                                    // in a tick the summaries of faded
///                                    // memories (with a json_schema)
///                                    // ({"kind": "query"}: a query round;
///                                    // {"kind": "reflect", "speaker": 3}:
///                                    // a tick's reflection, JSON;
///                                    // {"kind": "classify", "speaker": 3}:
///                                    // the tone of an answer to 3's
///                                    // initiation, or what a stimulus
///                                    // 3 noticed means, JSON;
///                                    // {"kind": "think", "speaker": 3}:
///                                    // 3 thinking a stimulus over, JSON;
///                                    // {"kind": "initiate", "speaker": 3}:
///                                    // a tick's first line of a
///                                    // conversation, and {"kind": "reply",
///                                    // "speaker": 2} the answers to it, as
///                                    // rp_turn_step describes them)
///  "messages": [{"role": "system", "content": "You are Tobias Reed..."},
///               {"role": "user", "content": "..."}],
///  "params": {"temperature": 0.3},   // the options' sampling, as set
///  "json_schema": {...}}             // a query's, a reflection's, a
///                                    // classification's, a tick's
///                                    // memory summaries': what the answer
///                                    // must match (a scene's summary has
///                                    // none)
/// {"step": "done"}                   // nothing more: rp_job_finish
/// ```
///
/// A tick's turns may also offer `"tools"` (answered with `"tool_calls"`,
/// as for `rp_turn_provide`), ask for `"embed"` steps when its turn options
/// say `"semantic": true` (answered with `rp_job_provide_embeddings`), and
/// `"act"` steps when they declare host actions (answered with
/// `rp_job_provide_action`), in the shapes `rp_turn_step` describes.
///
/// Asking again without providing returns the same step.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `engine` is not the
/// engine the job began on; `RP_RESULT_CONFLICT` when the job is over, is
/// being run by `rp_engine_run_job`, or the engine changed since it began;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `out_step_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_step(
    engine: *mut rp_engine,
    job: *mut rp_job,
    out_step_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_step_json", out_step_json)?;
        let step = with_job(engine, job, |engine, stage| Ok(ready(stage)?.step(engine)?))?;
        let json = to_c_json(&step).into_raw();
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// Gives the job the generation its last `"generate"` step asked for.
///
/// `result_json` (`result_json_len` bytes of UTF-8, borrowed for the call)
/// is the result object of `rp_turn_provide` (`{"text": "..."}` is enough;
/// `"model"`, `"prompt_tokens"`, `"completion_tokens"` are recorded,
/// `"tool_calls"` are ignored by all but a tick's turns). For a scene's
/// summary, `"text"` (trimmed) is the witness's memory of the scene; for a
/// query round, the model's JSON answer (see `rp_engine_begin_query`), as a
/// string; for a tick, the line, as for `rp_turn_provide`, or the JSON
/// answer of its classifications, memory summaries and reflections (see
/// `rp_engine_begin_tick`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match,
/// an empty or oversized summary, or an `engine` that is not the one the job
/// began on; `RP_RESULT_CONFLICT` when the job is not waiting for a
/// generation, is over, is being run by `rp_engine_run_job`, or the engine
/// changed since it began; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`. On failure the job
/// is unchanged (provide again).
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `result_json` points to `result_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_provide(
    engine: *mut rp_engine,
    job: *mut rp_job,
    result_json: *const c_char,
    result_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `result_json` points to
        // `result_json_len` bytes.
        let json = unsafe { str_arg("result_json", result_json, result_json_len) }?;
        let result = GenerateResult::from_json(json)?;
        with_job(engine, job, |engine, stage| {
            Ok(ready(stage)?.provide(engine, result)?)
        })
    })
}

/// Gives the job the vectors its last `"embed"` step asked for (a tick
/// whose turn options say `"semantic": true`, see `rp_engine_begin_tick`),
/// as `rp_turn_provide_embeddings` gives them to a turn.
///
/// `vectors_json` (`vectors_json_len` bytes of UTF-8, borrowed for the call)
/// is an array with one vector per text of the step, in order; each vector is
/// an array of 1 to 4096 finite numbers, all vectors of the same length:
///
/// ```text
/// [[0.12, -0.5, 0.33], [0.8, 0.1, -0.2]]
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match,
/// a count or length that does not, or an `engine` that is not the one the
/// job began on; `RP_RESULT_CONFLICT` when the job is not waiting for
/// vectors (a scene close, a time skip and a query never ask for them), is
/// over, is being run by `rp_engine_run_job`, or the engine changed since
/// it began; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On failure the job is unchanged.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `vectors_json` points to `vectors_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_provide_embeddings(
    engine: *mut rp_engine,
    job: *mut rp_job,
    vectors_json: *const c_char,
    vectors_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `vectors_json` points to
        // `vectors_json_len` bytes.
        let json = unsafe { str_arg("vectors_json", vectors_json, vectors_json_len) }?;
        let vectors: Vec<Vec<f32>> = from_json("embeddings JSON", json)?;
        with_job(engine, job, |engine, stage| {
            Ok(ready(stage)?.provide_embeddings(engine, vectors)?)
        })
    })
}

/// Answers the host action the last `"act"` step asked for (a tick whose
/// turn options declare `"actions"` of `"updates"`, see
/// `rp_engine_begin_tick`; the step is as `rp_turn_step` describes it): what
/// the game did, or why it refused, as `rp_turn_provide_action` answers a
/// turn. Give exactly one of the two:
///
/// - `answer_json` (`answer_json_len` bytes of UTF-8, borrowed for the
///   call): any JSON value saying what the game did, such as
///   `{"opened": true, "system_line": "The cellar door creaks open."}`. It
///   is recorded as the `"answer"` of the action's report (replay never asks
///   again). When it is an object with a `"system_line"` string, that line
///   is injected for the next prompts (see `rp_engine_inject_system_line`).
/// - `refusal` (`refusal_len` bytes of UTF-8, borrowed for the call): why
///   the game did not do it, recorded as the report's `"rejected"` (cut to
///   1000 bytes). The job goes on.
///
/// Pass the other as `NULL` with length 0.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NULL_ARGUMENT` when both are `NULL`;
/// `RP_RESULT_INVALID` when both are given, for an answer that is not JSON
/// or is longer than a recorded text may be, or an `engine` that is not the
/// one the job began on; `RP_RESULT_CONFLICT` when the job is not waiting
/// for a host action (call `rp_job_step` first; a scene close, a time skip
/// and a query never ask for one), is over, is being run by
/// `rp_engine_run_job`, or the engine changed since it began;
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`. On failure the job
/// is unchanged.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `answer_json` is `NULL` (with `answer_json_len` 0) or points to
/// `answer_json_len` readable bytes; the same for `refusal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_provide_action(
    engine: *mut rp_engine,
    job: *mut rp_job,
    answer_json: *const c_char,
    answer_json_len: usize,
    refusal: *const c_char,
    refusal_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller upholds this function's contract, which is
        // action_answer_arg's.
        let answer =
            unsafe { action_answer_arg(answer_json, answer_json_len, refusal, refusal_len) }?;
        with_job(engine, job, |engine, stage| {
            Ok(ready(stage)?.provide_action(engine, answer)?)
        })
    })
}

/// Tells the job the host could not answer its last step (the model
/// failed, the host gave up), with `reason` (`reason_len` bytes of UTF-8,
/// borrowed for the call): the job's next step is `"done"`. What
/// `rp_job_finish` then does depends on the job, as for every machine of
/// rp-core (`rp_core::machine`): a query is recorded as failed with `reason`
/// (cut to 2000 bytes; empty: "the host ended the query") and its outcome
/// written; a scene close or a time skip commits nothing and returns
/// `RP_RESULT_GENERATION` naming `reason`; a tick holds the initiation in
/// progress back for one processing interval (committed at once), keeps
/// what it committed before, and `rp_job_finish` returns
/// `RP_RESULT_GENERATION` naming `reason`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for an `engine` that is not
/// the one the job began on; `RP_RESULT_CONFLICT` when the job asks for
/// nothing (it has ended, or is done and waits for `rp_job_finish`), is
/// over or being run by `rp_engine_run_job`, or the engine changed since it
/// began; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `reason` points to `reason_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_fail(
    engine: *mut rp_engine,
    job: *mut rp_job,
    reason: *const c_char,
    reason_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `reason` points to `reason_len`
        // bytes.
        let reason = unsafe { str_arg("reason", reason, reason_len) }?;
        with_job(engine, job, |engine, stage| {
            Ok(ready(stage)?.fail(engine, reason)?)
        })
    })
}

/// Commits the job in one transaction and writes its outcome as JSON to
/// `*out_outcome_json` (a string the caller releases with
/// `rp_string_free`).
///
/// Only a job whose `rp_job_step` says `"done"` can finish; earlier the
/// call is refused with `RP_RESULT_CONFLICT` and the job goes on. Once the
/// commit is attempted the job is over, whether it succeeded or not: free
/// the handle with `rp_job_free` (it is still needed).
///
/// The outcome of a scene close:
///
/// ```text
/// {"seq": 42,               // the head after the commit
///  "scene": 9,
///  "summaries": [[2, 43], [3, 44]],  // [witness, its summary memory id],
///                           // in witness id order ([] if nothing was said)
///  "group": null}           // the group node made for 3+ witnesses, or null
/// ```
///
/// Of a time skip:
///
/// ```text
/// {"seq": 50, "from": 1000, "to": 36000000,   // the clock before and after
///  "closed_scenes": [{"scene": 9, "summaries": [[2, 43]], "group": null}],
///  "due": {"started": [12, 14], "expired": [], "held": []},
///                           // the scoped-event transitions run in
///                           // between, as rp_engine_run_due writes them
///  "reset": [3]}            // entities whose action ended, in id order
/// ```
///
/// Of a query: the record as `rp_engine_query` writes it, with the head,
/// the final context and the rounds fulfilled:
///
/// ```text
/// {"seq": 44,
///  "query": {...},          // see rp_engine_query
///  "context": {"entities": [...], "summaries": [...],
///              "relationships": [...], ...},  // what the model saw last
///  "iterations": 1}         // needs-more-info rounds fulfilled
/// ```
///
/// Of a tick (`rp_engine_begin_tick`), what it committed:
///
/// ```text
/// {"seq": 61,               // the head after the tick
///  "at": 43200000,          // the tick's time
///  "changes": [{"entity": 2, "asleep": true,   // fell asleep (false:
///               "processed": [20],             // woke; null: neither),
///               "filtered": []}],              // stimuli its inbox
///                           // processed or its mode filtered out
///  "initiations": [{"candidate": {...},  // as rp_engine_initiation_
///                                        // candidates writes one, with
///                                        // the "sheet" gate added
///                   "explanation": "Tobias Reed → Wren: pressure ...",
///                   "turn": {...}}],     // the turn it started, as
///                           // rp_turn_finish writes it (its first reply
///                           // is the initiating line)
///  "held": [[3, [GATE, ...]]],  // characters whose initiation a gate
///                           // held back, with the gates
///  "retries": [],           // characters whose $retry fell due
///  "story": false,          // whether scoped events started or expired
///  "faded": [{"id": 30, "stage": "residue"}],  // memories moved on in
///                           // arithmetic (docs/memory.md)
///  "summarized": [31],      // whole memories reduced to a summary
///  "reflections": [{"entity": 3, "insights": [90],  // the reflection
///                   "rejected": null}],  // memories made, or why the
///                           // answer was rejected
///  "rules_fired": [[3, 40]],      // [entity, rule] of the rules that
///                           // fired (docs/rules.md)
///  "rules_forgotten": [[3, 41]],  // and of those forgotten unused
///  "learned": [{"entity": 3, "from": 1,  // what a character learned
///               "reason": "Wren answered curtly: ...",  // from the answer
///               "changes": [{"target": {"kind": "term", "to": 1,
///                                       "term": "intent"},
///                            "from": 1.0, "to": 0.79}]}]}
///                           // to its initiation (or its lack), each
///                           // weight moved; a "target" is also
///                           // {"kind": "rule", "rule": 40} or
///                           // {"kind": "trait", "name": "independence"}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the job still needs a
/// step, is over, is being run by `rp_engine_run_job`, or the engine changed
/// since it began; `RP_RESULT_INVALID` when `engine` is not the one the job
/// began on; `RP_RESULT_STORAGE` when the commit failed (nothing of the job
/// is committed); `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `out_outcome_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_finish(
    engine: *mut rp_engine,
    job: *mut rp_job,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_outcome_json", out_outcome_json)?;
        let json = with_job(engine, job, |engine, stage| {
            let job = ready(stage)?;
            let outcome = job.finish(engine);
            if job.is_over() {
                *stage = Stage::Over;
            }
            Ok(to_json(&outcome?))
        })?;
        // SAFETY: the caller made the non-NULL `out_outcome_json` writable.
        unsafe { write_json(out, "the job outcome JSON", json) }
    })
}

/// Releases a job. A job released before it finished is abandoned: nothing
/// of it is committed.
///
/// `job` may be `NULL`, which does nothing and returns `RP_RESULT_OK`. A
/// handle freed already (or not from rp) is refused with
/// `RP_RESULT_INVALID_HANDLE` and nothing happens.
///
/// Thread: any. A call on the same job still running on another thread
/// finishes first: this call waits for it. From a callback of
/// `rp_engine_run_turn` or `rp_engine_run_job`, where waiting could
/// deadlock, a job in use by another thread is refused with
/// `RP_RESULT_CONFLICT` instead. The job `rp_engine_run_job` is running may
/// be freed from its callback: the run goes on, and its outcome is still
/// written.
///
/// # Safety
///
/// None beyond the signature: any `job` value is answered safely.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_job_free(job: *mut rp_job) -> rp_result {
    ffi_result(|| {
        drop(jobs().remove("job", job.addr(), !crate::engine::calling_out())?);
        Ok(())
    })
}

/// Runs a job to its end through the host's model: calls `generate` for
/// each generation the job asks for, in order, and commits it, writing the
/// outcome JSON to `*out_outcome_json` (a string the caller releases with
/// `rp_string_free`). The same as `rp_job_step`, `rp_job_provide` ...
/// `rp_job_finish`, with the loop run by rp; a job partly driven by the
/// poll form is run from where it is.
///
/// - `job`: a job begun on `engine` and not over.
/// - `generate`: the host's model (see `rp_generate_fn`; what it streams
///   through its sink goes nowhere); must not be `NULL`.
/// - `user_data`: handed to `generate` untouched; may be `NULL`.
/// - `out_outcome_json`: the outcome, as for `rp_job_finish`.
///
/// The callback runs on the calling thread, before this call returns, while
/// the engine is held: other threads' calls on the engine wait, and the
/// callback's own calls with this engine, or on this job, are refused with
/// `RP_RESULT_CONFLICT`.
///
/// When `generate` fails (returns another code than `RP_RESULT_OK`, or a
/// result rp cannot read), this returns `RP_RESULT_GENERATION` with the
/// callback's message in `rp_last_error()`. A scene close, a time skip or
/// a tick is then left as it was before the failed generation, nothing
/// (more) committed: run it again, drive it with `rp_job_step`, or free it
/// (a tick keeps what it committed before: see `rp_engine_begin_tick`). A
/// query is recorded as failed (as `rp_job_fail` then `rp_job_finish`
/// would) and the job is over. A result the job refuses (an empty summary) returns
/// `RP_RESULT_INVALID`, the job left as it was.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_GENERATION`, `RP_RESULT_INVALID` as
/// above, and when `engine` is not the one the job began on;
/// `RP_RESULT_CONFLICT` when the job is over, or the engine changed since
/// it began; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_job`).
///
/// # Safety
///
/// `generate` follows its type's documentation; `out_outcome_json` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_run_job(
    engine: *mut rp_engine,
    job: *mut rp_job,
    generate: rp_generate_fn,
    user_data: *mut c_void,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let generate =
            generate.ok_or_else(|| Error::new(rp_result::NullArgument, "`generate` is NULL"))?;
        let out = out_arg("out_outcome_json", out_outcome_json)?;
        // The machine leaves the job while it runs, so that the callback
        // never waits on the job's lock (its calls are refused instead).
        let machine = with_job_state(engine, job, |state| {
            ready(&mut state.stage)?;
            match std::mem::replace(&mut state.stage, Stage::Running) {
                Stage::Ready(machine) => Ok(machine),
                _ => unreachable!("checked ready above"),
            }
        })?;
        let generator = CallbackGenerator::generate_only(generate, user_data);
        let mut machine = machine;
        let result = with_engine(engine, |e| {
            let _calling_out = CallingOut::new(engine);
            Ok(to_json(&block_on(machine.run(e, &generator, &mut NoSink))?))
        });
        // Back in the job: where it stopped, or over. A job freed by the
        // callback is gone (its run still counts), so not finding it is no
        // error.
        let stage = if machine.is_over() {
            Stage::Over
        } else {
            Stage::Ready(machine)
        };
        let _ = jobs().with("job", job.addr(), |state| {
            state.stage = stage;
            Ok(())
        });
        let json = result?;
        // SAFETY: the caller made the non-NULL `out_outcome_json` writable.
        unsafe { write_json(out, "the job outcome JSON", json) }
    })
}
