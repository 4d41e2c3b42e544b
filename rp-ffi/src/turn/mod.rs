//! The turn from C (docs/turn.md): the sans-IO loop as calls on an `rp_turn`
//! (the poll form), and the prompt a character would be given
//! (`rp_engine_inspect_prompt`). The callback form is in
//! [`crate::run_turn`].
//!
//! An `rp_turn` holds rp-core's owned `TurnMachine`, beside the handle number
//! of the engine it began on.

use std::ffi::{CString, c_char};

use rp_core::turn::{
    GenerateRequest, GenerateResult, Prompt, PromptOptions, Purpose, Step, TurnInput, TurnMachine,
    TurnOptions, TurnOutcome,
};
use rp_core::{Engine, EntityId};

use crate::arg::{out_arg, str_arg};
use crate::engine::{calling_out, check_engine, rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::handle::{Handles, Publish};

/// A turn in progress (the poll form of the turn loop): begun with
/// `rp_turn_begin` on an engine, driven with `rp_turn_step`,
/// `rp_turn_provide` and `rp_turn_provide_embeddings`, committed with
/// `rp_turn_finish`, released with `rp_turn_free`.
///
/// A turn belongs to the engine it began on: every call takes that engine
/// again, and another engine is refused with `RP_RESULT_INVALID`. Once
/// `rp_turn_finish` has committed it, the turn is over: calls other than
/// `rp_turn_free` are refused with `RP_RESULT_CONFLICT`. If the engine
/// changes while a turn is open (another turn finishes, a decision is
/// recorded, a world file is applied), the turn is refused with
/// `RP_RESULT_CONFLICT` from then on; its input stays committed.
///
/// The handle is opaque and never dereferenced: a freed or foreign handle is
/// refused with `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any, like `rp_engine`; calls on one turn run one at a time.
#[allow(non_camel_case_types)]
pub struct rp_turn {
    _opaque: [u8; 0],
}

/// A turn behind its handle: the engine it began on and its machine, which
/// `rp_turn_finish` consumes.
struct TurnState {
    /// The handle number of the engine (numbers are never reused, so it
    /// names that engine for good).
    engine: usize,
    machine: Option<TurnMachine>,
}

impl Publish for TurnState {}

/// Every live turn.
fn turns() -> &'static Handles<TurnState> {
    static TURNS: Handles<TurnState> = Handles::new();
    &TURNS
}

/// Runs `body` on the turn of handle argument `turn` and the engine it began
/// on, which must be `engine`, holding the turn's lock, then the engine's.
fn with_turn<R>(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
    body: impl FnOnce(&mut Engine, &mut TurnState) -> Result<R, Error>,
) -> Result<R, Error> {
    check_engine(engine)?;
    turns().with("turn", turn.addr(), |state| {
        if state.engine != engine.addr() {
            return Err(Error::new(
                rp_result::Invalid,
                "`turn` began on another engine; pass the engine it began on",
            ));
        }
        with_engine(engine, |engine| body(engine, state))
    })
}

/// The machine of a turn that is not over.
fn running(machine: &mut Option<TurnMachine>) -> Result<&mut TurnMachine, Error> {
    machine.as_mut().ok_or_else(finished)
}

fn finished() -> Error {
    Error::new(
        rp_result::Conflict,
        "`turn` is over: rp_turn_finish ended it; free it with rp_turn_free and begin a new turn",
    )
}

/// Reads `what` from JSON, refusing what does not match with
/// `RP_RESULT_INVALID`.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    json: &str,
) -> Result<T, Error> {
    serde_json::from_str(json).map_err(|error| {
        Error::from(rp_core::Error::Invalid {
            what,
            reason: error.to_string(),
        })
    })
}

/// Reads the host's answer to an `"act"` step: exactly one of `answer_json`
/// (any JSON value, what the game did: `Ok`) and `refusal` (why it refused:
/// `Err`), the other `NULL`. Both given is `RP_RESULT_INVALID`, both `NULL`
/// `RP_RESULT_NULL_ARGUMENT`.
///
/// # Safety
///
/// `answer_json` is `NULL` or points to `answer_json_len` readable bytes; the
/// same for `refusal`.
pub(crate) unsafe fn action_answer_arg(
    answer_json: *const c_char,
    answer_json_len: usize,
    refusal: *const c_char,
    refusal_len: usize,
) -> Result<std::result::Result<serde_json::Value, String>, Error> {
    match (answer_json.is_null(), refusal.is_null()) {
        (false, false) => Err(Error::new(
            rp_result::Invalid,
            "both `answer_json` and `refusal` are given; pass one of them and NULL for \
             the other",
        )),
        (true, true) => Err(Error::new(
            rp_result::NullArgument,
            "`answer_json` and `refusal` are both NULL; pass what the game did or why \
             it refused",
        )),
        (false, true) => {
            // SAFETY: the caller guarantees `answer_json` points to
            // `answer_json_len` bytes.
            let json = unsafe { str_arg("answer_json", answer_json, answer_json_len) }?;
            Ok(Ok(from_json::<serde_json::Value>("action answer", json)?))
        }
        (true, false) => {
            // SAFETY: the caller guarantees `refusal` points to `refusal_len`
            // bytes.
            let reason = unsafe { str_arg("refusal", refusal, refusal_len) }?;
            Ok(Err(reason.to_owned()))
        }
    }
}

/// The JSON of a value rp-core made (its types always serialise).
pub(crate) fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("rp-core's turn types serialise to JSON")
}

/// The JSON of a value rp-core made as a C string, written by serde_json
/// straight into the string's buffer (a turn's requests are kilobytes).
pub(crate) fn to_c_json(value: &impl serde::Serialize) -> CString {
    let mut bytes = Vec::with_capacity(4096);
    serde_json::to_writer(&mut bytes, value).expect("rp-core's turn types serialise to JSON");
    // serde_json writes a NUL inside a string as \u0000, and nowhere else.
    CString::new(bytes).expect("JSON holds no NUL byte")
}

/// Reads turn options: `NULL` with length 0 means the defaults.
///
/// # Safety
///
/// `json` is `NULL` or points to `len` readable bytes.
pub(crate) unsafe fn options_arg(json: *const c_char, len: usize) -> Result<TurnOptions, Error> {
    if json.is_null() && len == 0 {
        return Ok(TurnOptions::default());
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("options_json", json, len) }?;
    Ok(TurnOptions::from_json(json)?)
}

/// The outcome JSON of a finished turn (its `"prompts"` are there when the
/// turn's options asked for them: rp-core's `TurnOptions::outcome_prompts`).
pub(crate) fn outcome_json(outcome: TurnOutcome) -> *mut c_char {
    to_c_json(&outcome).into_raw()
}

/// Starts a turn: commits the input at once (a crash from here on keeps it),
/// advancing the world's clock to its `now`, and decides who responds
/// (response control for every character that heard it). On success writes
/// the new turn to `*out_turn`; drive it with `rp_turn_step`, commit it with
/// `rp_turn_finish`, release it with `rp_turn_free`.
///
/// `input_json` (`input_json_len` bytes of UTF-8, borrowed for the call) is
/// an object; unknown fields are refused:
///
/// ```text
/// {"speaker": 1,            // who speaks: a host-controlled entity (the
///                           // player), by id
///  "text": "Tobias, what did you see out there?",
///                           // "" or absent: a wake-up turn, in which the
///                           // characters present reconsider the last line
///                           // each heard (after a $retry, or when time passed)
///  "now": 60000,            // the host clock, ms; not before the world's
///  "witnesses": [1, 3]}     // optional: who hears it, overriding positions
///                           // (the speaker is always added); not allowed in
///                           // a wake-up turn
/// ```
///
/// Without `witnesses`, an utterance is heard by everyone in the speaker's
/// container and in the containers within its `audible_range` steps.
///
/// `options_json` (`options_json_len` bytes; `NULL` with length 0 for the
/// defaults) is an object whose fields are all optional; unknown fields are
/// refused:
///
/// ```text
/// {"prompt": {                  // how prompts are built
///    "budget_tokens": 4096,     // tokens of the whole prompt; retrieved
///                               // memories are trimmed first
///    "memories_k": 6,           // recalled memories, 0-1000
///    "dialogue_lines": 32,      // recent lines the speaker witnessed
///    "lore_lines": 16,          // lines scanned for lore
///    "lore_budget_tokens": 400,
///    "template": {"system": "You are {{name}}... {{dialogue}}...",
///                 "user": "What does {{name}} say?"},  // both fields; the
///                               // sections are {{identity}}, {{edges}},
///                               // {{group}}, {{world}}, {{scene}},
///                               // {{activity}}, {{threads}}, {{dialogue}}
///                               // (required), {{memories}}, {{lore}},
///                               // {{events}}
///    "recall": {...}},          // the options of rp_engine_recall
///  "sampling": {"temperature": 0.8, "top_p": 0.9, "max_tokens": 200,
///               "stop": ["\n"], "seed": 7},  // passed on in each request
///  "remember_dialogue": true,   // each line becomes a memory of each witness
///  "dialogue_significance": 0.3,  // of those memories, 0-1
///  "semantic": false,           // ask for vectors ("embed" steps)
///  "max_responders": 8,         // at least 1
///  "outcome_prompts": false,    // true: the outcome carries each
///                               // responder's prompt (see rp_turn_finish)
///  "tools": true,               // offer replies the engine's tools
///                               // (roll_dice, roll_effects; see
///                               // rp_turn_step); false: none
///  "updates": {                 // the state-update pass, after the replies
///    "enabled": false,          // true: one more "generate" step, of
///                               // purpose "state_update" (see rp_turn_step)
///    "step": 0.1,               // how far one warmer/colder (affinity) or
///                               // more/less (trust) moves, in (0, 1]
///    "sampling": {"temperature": 0.2},  // of the pass's requests
///    "actions": [               // the host's own report types (host
///      {"name": "open_door",    // actions): lower case letters, digits
///                               // and _, not a built-in type
///       "description": "someone opens a door",  // when to report it
///       "parameters": {"type": "object",        // its fields besides
///         "required": ["door"],                 // "type" and "who", as a
///         "properties": {"door": {"enum": ["cellar", "front"]}}}}]},
///                               // JSON Schema object; each valid one
///                               // comes back as an "act" step
///  "scenes": {                  // scenes (see rp_engine_scene): the
///                               // line joins the current scene of the
///                               // speaker's container (one is opened if
///                               // there is none), and the scenes due to
///                               // close are closed first, each witness
///                               // summarising it in a "generate" step of
///                               // purpose {"kind": "summary"}; the scene
///                               // options of rp_engine_begin_scene_close
///    "enabled": true, "max_gap_ms": 3600000, "close_on_departure": true,
///    "sampling": {}, "summary_lines": 64, "significance": 0.6,
///    "group_nodes": true}}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match
/// (`rp_last_error()` says where), a speaker that is not host-controlled, a
/// `now` before the world's clock, or options out of range;
/// `RP_RESULT_NOT_FOUND` for an unknown speaker; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`;
/// `RP_RESULT_STORAGE` when the input could not be saved. On failure nothing
/// is committed.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `input_json` points to `input_json_len` readable bytes; `options_json` is
/// `NULL` (with `options_json_len` 0) or points to `options_json_len`
/// readable bytes; `out_turn` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_begin(
    engine: *mut rp_engine,
    input_json: *const c_char,
    input_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    out_turn: *mut *mut rp_turn,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `input_json` points to
        // `input_json_len` bytes.
        let input = unsafe { str_arg("input_json", input_json, input_json_len) }?;
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { options_arg(options_json, options_json_len) }?;
        let out = out_arg("out_turn", out_turn)?;
        let input = TurnInput::from_json(input)?;
        let machine = with_engine(engine, |e| Ok(TurnMachine::begin(e, input, options)?))?;
        let number = turns().insert(TurnState {
            engine: engine.addr(),
            machine: Some(machine),
        });
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(std::ptr::without_provenance_mut(number)) };
        Ok(())
    })
}

/// What the turn needs next, as JSON written to `*out_step_json` (a string
/// the caller releases with `rp_string_free`). One of:
///
/// ```text
/// {"step": "generate",                 // a generation: call the model,
///  "purpose": {"kind": "reply", "speaker": 3},  // then rp_turn_provide
///  "messages": [{"role": "system", "content": "You are Tobias Reed..."},
///               {"role": "user", "content": "What does Tobias Reed say?"}],
///  "params": {"temperature": 0.8}}     // the options' sampling, as set
///                                      // ("json_schema" and "tools" too,
///                                      // when a request has them)
/// {"step": "embed", "texts": ["..."]}  // vectors, one per text: call
///                                      // rp_turn_provide_embeddings
/// {"step": "act", "name": "open_door", // a host action: carry it out,
///  "who": 3, "arguments": {"door": "cellar"},  // then
///  "report": 0}                        // rp_turn_provide_action
/// {"step": "done"}                     // nothing more: rp_turn_finish
/// ```
///
/// Responders answer one by one, those the input mentions first; each
/// prompt is built when its step is asked for, so it sees the lines given
/// before it. Asking again without providing returns the same step.
///
/// Unless the options say `"tools": false`, a reply request offers the
/// engine's tools, in the shape of OpenAI-style function definitions:
///
/// ```text
/// "tools": [{"name": "roll_dice", "description": "...",
///            "parameters": {...}},   // {"notation": "2d6+1"}
///           {"name": "roll_effects", "description": "...",
///            "parameters": {...}}]   // {"effects": [{"chance": 0.3,
///                                    //   "desc": "fox ears"}]}
/// ```
///
/// A result with `"tool_calls"` (see `rp_turn_provide`) is not the reply:
/// the engine runs the calls with the world's seeded generator (recorded
/// with their draws, so replay never rolls again) and the next step is the
/// same request again, its messages ending with the assistant's calls and
/// one `"tool"` message per call, in order:
///
/// ```text
/// {"role": "assistant", "content": "",
///  "tool_calls": [{"id": "a", "name": "roll_dice",
///                  "arguments": {"notation": "2d6+1"}}]},
/// {"role": "tool",
///  "content": "{\"dice\":[3,5],\"notation\":\"2d6+1\",\"total\":9.0}",
///  "tool_call_id": "a"}
/// ```
///
/// `roll_effects` answers `{"results": [true, false], "effects": [...]}`;
/// a bad call (an unknown tool, arguments that are not a JSON object, bad
/// notation) gets `{"error": "..."}` as its result. After three rounds of
/// calls the request has no `"tools"`, and the next answer is the reply.
///
/// With `"updates": {"enabled": true}` in the options, one more
/// `"generate"` step follows the replies: the state-update pass, which asks
/// the model what the turn's lines changed (a cheap request: send it to a
/// fast model):
///
/// ```text
/// {"step": "generate",
///  "purpose": {"kind": "state_update"},
///  "messages": [{"role": "system", "content": "You keep the state of..."},
///               {"role": "user", "content": "What changed? ..."}],
///  "params": {"temperature": 0.2},     // the "updates" sampling
///  "json_schema": {...}}               // what the answer must match: pass
///                                      // it to a backend that constrains
///                                      // decoding, if there is one
/// ```
///
/// The answer (the `"text"` of `rp_turn_provide`) is one JSON object and
/// nothing else, such as
/// `{"reports": [{"type": "feeling", "who": "Tobias Reed", "toward": "Wren",
/// "affinity": "warmer"}]}`. An answer that cannot be read, or that holds a
/// report the engine refuses, is asked for once more: a second
/// `"state_update"` step whose messages end with the answer given and a
/// user message listing what was wrong. After that second answer, the valid
/// reports are applied and every report is recorded, applied or rejected
/// with the reason (`"reports"` of the outcome, see `rp_turn_finish`).
///
/// When the options declare host actions (`"actions"` of `"updates"`), each
/// valid report of one of them comes back after the pass, in the order
/// reported, as an `"act"` step: `"name"` (the action), `"who"` (the entity
/// id of who does it, a present entity), `"arguments"` (its other fields, as
/// the model wrote them and the schema accepted them) and `"report"` (its
/// index among the outcome's `"reports"`). The game carries it out (or
/// not) and answers with `rp_turn_provide_action`; the next step is the
/// next action, then `"done"`. A report of an action that does not match
/// its schema is asked about in the retry like any other, and never comes
/// back as a step.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `engine` is not the
/// engine the turn began on; `RP_RESULT_CONFLICT` when the turn is over or
/// the engine changed since it began; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_turn`).
///
/// # Safety
///
/// `out_step_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_step(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
    out_step_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_step_json", out_step_json)?;
        let step = with_turn(engine, turn, |engine, state| {
            Ok(running(&mut state.machine)?.step(engine)?)
        })?;
        let json = to_c_json(&step).into_raw();
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// Gives the turn the generation its last `"generate"` step asked for: a
/// responder's line, or the answer of the state-update pass (see
/// `rp_turn_step`).
///
/// `result_json` (`result_json_len` bytes of UTF-8, borrowed for the call)
/// is an object whose fields are all optional (`{"text": "..."}` is enough):
///
/// ```text
/// {"text": "Lights on the marsh, I tell you.",  // the line: trimmed, a
///                       // leading "Tobias Reed:" the model echoed is
///                       // dropped; "" or only spaces: the character stays
///                       // silent
///  "model": "my-model",                         // recorded with the line
///  "prompt_tokens": 812, "completion_tokens": 9,
///  "tool_calls": [{"id": "a", "name": "roll_dice",
///                  "arguments": {"notation": "2d6+1"}}]}
/// ```
///
/// `"tool_calls"` answers a request that offered `"tools"`: each call has
/// an `"id"` (echoed as the `"tool_call_id"` of its result), the tool's
/// `"name"`, and `"arguments"`, a JSON object or a string holding one (as
/// some servers send them). The calls are run, and `rp_turn_step` asks
/// again with their results (see there); `"text"` may then be empty. In a
/// request without `"tools"`, calls are ignored and `"text"` is the reply.
///
/// The result is recorded as given (replay never calls a model). For the
/// state-update pass, `"text"` is the model's JSON answer, as a string; an
/// answer the engine cannot use is not an error of this call (it is
/// answered with a retry, then recorded as rejected).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for JSON that does not match,
/// or an `engine` that is not the one the turn began on;
/// `RP_RESULT_CONFLICT` when the turn is not waiting for a generation (call
/// `rp_turn_step` first), is over, or the engine changed since it began;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On failure the turn is unchanged.
///
/// Thread: any (see `rp_turn`).
///
/// # Safety
///
/// `result_json` points to `result_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_provide(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
    result_json: *const c_char,
    result_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `result_json` points to
        // `result_json_len` bytes.
        let json = unsafe { str_arg("result_json", result_json, result_json_len) }?;
        let result = GenerateResult::from_json(json)?;
        with_turn(engine, turn, |engine, state| {
            Ok(running(&mut state.machine)?.provide(engine, result)?)
        })
    })
}

/// Gives the turn the vectors its last `"embed"` step asked for.
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
/// turn began on; `RP_RESULT_CONFLICT` when the turn is not waiting for
/// vectors, is over, or the engine changed since it began;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On failure the turn is unchanged.
///
/// Thread: any (see `rp_turn`).
///
/// # Safety
///
/// `vectors_json` points to `vectors_json_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_provide_embeddings(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
    vectors_json: *const c_char,
    vectors_json_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `vectors_json` points to
        // `vectors_json_len` bytes.
        let json = unsafe { str_arg("vectors_json", vectors_json, vectors_json_len) }?;
        let vectors: Vec<Vec<f32>> = from_json("embeddings JSON", json)?;
        with_turn(engine, turn, |engine, state| {
            Ok(running(&mut state.machine)?.provide_embeddings(engine, vectors)?)
        })
    })
}

/// Answers the host action the last `"act"` step asked for (see
/// `rp_turn_step`): what the game did, or why it refused. Give exactly one
/// of the two:
///
/// - `answer_json` (`answer_json_len` bytes of UTF-8, borrowed for the
///   call): any JSON value saying what the game did, such as
///   `{"opened": true, "system_line": "The cellar door creaks open."}`. It
///   is recorded as the `"answer"` of the action's report (replay never asks
///   again). When it is an object with a `"system_line"` string, that line
///   is injected for the next prompts (see `rp_engine_inject_system_line`;
///   it shows in `rp_engine_system_lines` once the turn is finished).
/// - `refusal` (`refusal_len` bytes of UTF-8, borrowed for the call): why
///   the game did not do it, recorded as the report's `"rejected"` (cut to
///   1000 bytes). The turn goes on.
///
/// Pass the other as `NULL` with length 0.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NULL_ARGUMENT` when both are `NULL`;
/// `RP_RESULT_INVALID` when both are given, for an answer that is not JSON
/// or is longer than a recorded text may be, or an `engine` that is not the
/// one the turn began on; `RP_RESULT_CONFLICT` when the turn is not waiting
/// for a host action (call `rp_turn_step` first), is over, or the engine
/// changed since it began; `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On failure the turn is unchanged.
///
/// Thread: any (see `rp_turn`).
///
/// # Safety
///
/// `answer_json` is `NULL` (with `answer_json_len` 0) or points to
/// `answer_json_len` readable bytes; the same for `refusal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_provide_action(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
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
        with_turn(engine, turn, |engine, state| {
            Ok(running(&mut state.machine)?.provide_action(engine, answer)?)
        })
    })
}

/// Commits the turn: its decisions, generations, replies, the memories of
/// its lines, what it recalled and the changes of its state-update pass, in
/// one transaction; writes the outcome as JSON to `*out_outcome_json` (a
/// string the caller releases with `rp_string_free`).
///
/// Only a turn whose `rp_turn_step` says `"done"` can finish; earlier the
/// call is refused with `RP_RESULT_CONFLICT` and the turn goes on. Once the
/// commit is attempted the turn is over, whether it succeeded or not: free
/// the handle with `rp_turn_free` (it is still needed).
///
/// ```text
/// {"seq": 42,              // the head after the commit
///  "input": 17,            // the input's utterance id (null: wake-up turn)
///  "decisions": [          // every response decision, in the order made
///    {"entity": 3, "mentioned": true,
///     "decision": {...}}], // as the JSON of rp_engine_decide
///  "replies": [{"speaker": 3, "utterance": 18,
///               "text": "Lights on the marsh, I tell you."}],
///  "silent": [],           // responders whose text was empty
///  "wake": [{"entity": 2, "at": 65000}],  // $retry: start a wake-up turn
///                          // then (rp keeps no timers)
///  "prompts": [],          // each responder's prompt, as the JSON of
///                          // rp_engine_inspect_prompt, when the options
///                          // say "outcome_prompts": true; [] otherwise
///                          // (the prompts are most of a turn's JSON)
///  "reports": [            // the state-update pass ("updates" in the
///                          // options; [] without it), in the order given
///    {"report": "{\"type\": \"feeling\", ...}",  // the report as the
///                          // model wrote it (a JSON text), or the whole
///                          // answer when it could not be read
///     "rejected": null,    // null: applied; else why it was refused
///                          // (nothing of it was applied)
///     "answer": null}],    // for a host action, the host's answer
///                          // (JSON); null for a report
///  "closed_scenes": [9]}   // the scenes the turn closed, each with a
///                          // summary memory per witness (see
///                          // rp_engine_scene, rp_engine_memories_of)
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when the turn still needs a
/// step, is over, or the engine changed since it began; `RP_RESULT_INVALID`
/// when `engine` is not the one the turn began on; `RP_RESULT_STORAGE` when
/// the commit failed (the input stays committed, nothing of the turn is);
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_turn`).
///
/// # Safety
///
/// `out_outcome_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_finish(
    engine: *mut rp_engine,
    turn: *mut rp_turn,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_outcome_json", out_outcome_json)?;
        let outcome = with_turn(engine, turn, |engine, state| {
            // The machine's finish consumes it even when it refuses, so ask
            // first: only a turn with nothing left to do is handed over.
            match running(&mut state.machine)?.step(engine)? {
                Step::Done => {}
                Step::Generate(request) => {
                    return Err(not_done(format_args!(
                        "a generation ({})",
                        describe(&request)
                    )));
                }
                Step::Embed(request) => {
                    return Err(not_done(format_args!(
                        "vectors for {} texts",
                        request.texts.len()
                    )));
                }
                Step::Act(call) => {
                    return Err(not_done(format_args!("the host action \"{}\"", call.name)));
                }
            }
            let machine = state.machine.take().ok_or_else(finished)?;
            Ok(machine.finish(engine)?)
        })?;
        let json = outcome_json(outcome);
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// The refusal of a turn finished too early.
fn not_done(needs: std::fmt::Arguments<'_>) -> Error {
    Error::new(
        rp_result::Conflict,
        format_args!(
            "the turn is not done: rp_turn_step asks for {needs}; provide it before rp_turn_finish"
        ),
    )
}

/// What a request is for, in words.
fn describe(request: &GenerateRequest) -> String {
    match request.purpose {
        Purpose::Reply { speaker } => format!("the line of entity {}", speaker.0),
        Purpose::StateUpdate => "the answer of the state-update pass".to_owned(),
        _ => format!("a request {}", to_json(&request.purpose)),
    }
}

/// Releases a turn. A turn released before `rp_turn_finish` is abandoned:
/// its input stays committed, nothing else of it is.
///
/// `turn` may be `NULL`, which does nothing and returns `RP_RESULT_OK`. A
/// handle freed already (or not from rp) is refused with
/// `RP_RESULT_INVALID_HANDLE` and nothing happens.
///
/// Thread: any. A call on the same turn still running on another thread
/// finishes first: this call waits for it. From a callback of
/// `rp_engine_run_turn`, where waiting could deadlock, a turn in use by
/// another thread is refused with `RP_RESULT_CONFLICT` instead.
///
/// # Safety
///
/// None beyond the signature: any `turn` value is answered safely.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_turn_free(turn: *mut rp_turn) -> rp_result {
    ffi_result(|| {
        drop(turns().remove("turn", turn.addr(), !calling_out())?);
        Ok(())
    })
}

/// The prompt `speaker` would be given now, with every piece and why it is
/// there, as JSON written to `*out_prompt_json` (a string the caller
/// releases with `rp_string_free`). Changes nothing.
///
/// - `query`, `query_len`: the line the speaker answers, which recall
///   searches for (UTF-8, borrowed for the call); `NULL` with length 0: the
///   last line the speaker heard.
/// - `now`: the host clock, ms (recalled memories' retention is read at it).
/// - `prompt_options_json`, `prompt_options_len`: the `"prompt"` object of
///   the turn options (see `rp_turn_begin`); `NULL` with length 0 for the
///   defaults.
///
/// ```text
/// {"speaker": 3,
///  "messages": [{"role": "system", "content": "You are Tobias Reed..."},
///               {"role": "user", "content": "What does Tobias Reed say?"}],
///  "pieces": [             // what the prompt holds, in prompt order
///    {"section": "identity",  // identity, edges, group, world, scene,
///                             // activity, threads, dialogue, memories,
///                             // lore or events
///     "text": "A fisherman with a bad knee...",
///     "why": "an active fact of the speaker's sheet",  // the rule that
///                             // put it there
///     "entity": 3,            // the entity it is about, if any
///     "memory": 7,            // the memory it shows, if any
///     "score": 1.9,           // a recalled memory's score, if any
///     "tokens": 12}],
///  "trimmed": [],          // pieces dropped to fit the budget, as above
///  "tokens": 812,          // tokens of the messages
///  "budget_tokens": 4096}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` for an unknown speaker;
/// `RP_RESULT_INVALID` for options that do not match or are out of range;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `query` is `NULL` (with `query_len` 0) or points to `query_len` readable
/// bytes; likewise `prompt_options_json`; `out_prompt_json` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_inspect_prompt(
    engine: *mut rp_engine,
    speaker: u64,
    query: *const c_char,
    query_len: usize,
    now: i64,
    prompt_options_json: *const c_char,
    prompt_options_len: usize,
    out_prompt_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let query = if query.is_null() && query_len == 0 {
            None
        } else {
            // SAFETY: the caller guarantees `query` points to `query_len`
            // bytes.
            Some(unsafe { str_arg("query", query, query_len) }?)
        };
        let options: PromptOptions = if prompt_options_json.is_null() && prompt_options_len == 0 {
            PromptOptions::default()
        } else {
            // SAFETY: the caller guarantees `prompt_options_json` points to
            // `prompt_options_len` bytes.
            let json = unsafe {
                str_arg(
                    "prompt_options_json",
                    prompt_options_json,
                    prompt_options_len,
                )
            }?;
            PromptOptions::from_json(json)?
        };
        let out = out_arg("out_prompt_json", out_prompt_json)?;
        let prompt: Prompt = with_engine(engine, |engine| {
            Ok(engine.inspect_prompt(EntityId(speaker), query, now, &options)?)
        })?;
        let json = to_c_json(&prompt).into_raw();
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

#[cfg(test)]
pub(crate) mod tests;
