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
fn from_json<T: serde::de::DeserializeOwned>(what: &'static str, json: &str) -> Result<T, Error> {
    serde_json::from_str(json).map_err(|error| {
        Error::from(rp_core::Error::Invalid {
            what,
            reason: error.to_string(),
        })
    })
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
        let answer = match (answer_json.is_null(), refusal.is_null()) {
            (false, false) => {
                return Err(Error::new(
                    rp_result::Invalid,
                    "both `answer_json` and `refusal` are given; pass one of them and NULL \
                     for the other",
                ));
            }
            (true, true) => {
                return Err(Error::new(
                    rp_result::NullArgument,
                    "`answer_json` and `refusal` are both NULL; pass what the game did or \
                     why it refused",
                ));
            }
            (false, true) => {
                // SAFETY: the caller guarantees `answer_json` points to
                // `answer_json_len` bytes.
                let json = unsafe { str_arg("answer_json", answer_json, answer_json_len) }?;
                Ok(from_json::<serde_json::Value>("action answer", json)?)
            }
            (true, false) => {
                // SAFETY: the caller guarantees `refusal` points to
                // `refusal_len` bytes.
                let reason = unsafe { str_arg("refusal", refusal, refusal_len) }?;
                Err(reason.to_owned())
            }
        };
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
/// - `now`: the host clock, ms (recency is measured from it).
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
pub(crate) mod tests {
    use std::ffi::CStr;
    use std::ptr;

    use serde_json::Value;

    use super::*;
    use crate::engine::{rp_engine_apply_world_file, rp_engine_free, rp_engine_head};
    use crate::error::rp_last_error;
    use crate::string::rp_string_free;

    const TAVERN: &str = include_str!("../../examples/tavern.toml");

    pub(crate) fn last_error() -> String {
        // SAFETY: rp_last_error returns a valid NUL-terminated string.
        unsafe { CStr::from_ptr(rp_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Takes a string rp handed out as JSON, releasing it.
    pub(crate) fn take_json(string: *mut c_char) -> Value {
        assert!(!string.is_null());
        // SAFETY: a live string rp handed out, released once.
        let text = unsafe { CStr::from_ptr(string) }
            .to_str()
            .expect("UTF-8")
            .to_owned();
        // SAFETY: as above.
        unsafe { rp_string_free(string) };
        serde_json::from_str(&text).expect("JSON")
    }

    pub(crate) struct Tavern {
        pub(crate) engine: *mut rp_engine,
        pub(crate) wren: u64,
        pub(crate) mira: u64,
        pub(crate) tobias: u64,
    }

    impl Drop for Tavern {
        fn drop(&mut self) {
            // SAFETY: a live handle, freed once.
            unsafe { rp_engine_free(self.engine) };
        }
    }

    pub(crate) fn tavern() -> Tavern {
        let mut engine = ptr::null_mut();
        // SAFETY: valid strings and out-parameters.
        unsafe {
            assert_eq!(
                crate::engine::rp_engine_in_memory(c"t".as_ptr(), 1, 0, &mut engine),
                rp_result::Ok
            );
            let mut events = 0;
            let result = rp_engine_apply_world_file(
                engine,
                c"tavern.toml".as_ptr(),
                11,
                TAVERN.as_ptr().cast(),
                TAVERN.len(),
                &mut events,
            );
            assert_eq!(result, rp_result::Ok, "{}", last_error());
        }
        let id = |engine: *mut rp_engine, name: &str| {
            let mut id = 0;
            // SAFETY: valid strings and out-parameters.
            let result = unsafe {
                crate::engine::rp_engine_entity_id(
                    engine,
                    name.as_ptr().cast(),
                    name.len(),
                    &mut id,
                )
            };
            assert_eq!(result, rp_result::Ok);
            id
        };
        Tavern {
            wren: id(engine, "wren"),
            mira: id(engine, "mira"),
            tobias: id(engine, "tobias"),
            engine,
        }
    }

    pub(crate) fn head(engine: *mut rp_engine) -> u64 {
        let mut head = 0;
        // SAFETY: valid out-parameter.
        assert_eq!(unsafe { rp_engine_head(engine, &mut head) }, rp_result::Ok);
        head
    }

    pub(crate) fn say(t: &Tavern, text: &str, now: i64) -> String {
        serde_json::json!({"speaker": t.wren, "text": text, "now": now}).to_string()
    }

    pub(crate) fn begin(
        t: &Tavern,
        input: &str,
        options: Option<&str>,
    ) -> Result<*mut rp_turn, rp_result> {
        let mut turn = ptr::null_mut();
        let (options, options_len) = options.map_or((ptr::null(), 0), |o| (o.as_ptr(), o.len()));
        // SAFETY: valid strings and out-parameters.
        match unsafe {
            rp_turn_begin(
                t.engine,
                input.as_ptr().cast(),
                input.len(),
                options.cast(),
                options_len,
                &mut turn,
            )
        } {
            rp_result::Ok => Ok(turn),
            code => {
                assert!(turn.is_null(), "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    pub(crate) fn step(engine: *mut rp_engine, turn: *mut rp_turn) -> Result<Value, rp_result> {
        let mut json = ptr::null_mut();
        // SAFETY: valid out-parameter.
        match unsafe { rp_turn_step(engine, turn, &mut json) } {
            rp_result::Ok => Ok(take_json(json)),
            code => Err(code),
        }
    }

    pub(crate) fn provide(engine: *mut rp_engine, turn: *mut rp_turn, result: &str) -> rp_result {
        // SAFETY: a valid string.
        unsafe { rp_turn_provide(engine, turn, result.as_ptr().cast(), result.len()) }
    }

    pub(crate) fn finish(engine: *mut rp_engine, turn: *mut rp_turn) -> Result<Value, rp_result> {
        let mut json = ptr::null_mut();
        // SAFETY: valid out-parameter.
        match unsafe { rp_turn_finish(engine, turn, &mut json) } {
            rp_result::Ok => Ok(take_json(json)),
            code => {
                assert!(json.is_null());
                Err(code)
            }
        }
    }

    pub(crate) fn free(turn: *mut rp_turn) -> rp_result {
        // SAFETY: any value is answered safely.
        unsafe { rp_turn_free(turn) }
    }

    #[test]
    fn the_poll_form_runs_a_turn_tobias_answers_and_mira_does_not_hear() {
        let t = tavern();
        let before = head(t.engine);
        let turn = begin(
            &t,
            &say(&t, "Tobias, seen any lights tonight?", 60_000),
            None,
        )
        .expect("begins");
        assert_eq!(
            head(t.engine),
            before + 3,
            "the clock, the booth's new scene and the line"
        );

        let request = step(t.engine, turn).expect("a step");
        assert_eq!(request["step"], "generate");
        assert_eq!(request["purpose"]["speaker"], t.tobias);
        assert_eq!(
            step(t.engine, turn),
            Ok(request),
            "asked again: the same step"
        );
        assert_eq!(
            provide(
                t.engine,
                turn,
                r#"{"text": "Tobias Reed: Aye, out past the reeds."}"#
            ),
            rp_result::Ok,
            "{}",
            last_error()
        );
        assert_eq!(step(t.engine, turn).expect("a step")["step"], "done");
        let outcome = finish(t.engine, turn).expect("finishes");
        assert_eq!(outcome["replies"][0]["speaker"], t.tobias);
        assert_eq!(outcome["replies"][0]["text"], "Aye, out past the reeds.");
        let decided: Vec<u64> = outcome["decisions"]
            .as_array()
            .expect("decisions")
            .iter()
            .map(|d| d["entity"].as_u64().expect("an id"))
            .collect();
        assert_eq!(
            decided,
            [t.tobias],
            "Mira at the bar does not hear the booth"
        );
        assert!(!decided.contains(&t.mira));
        assert_eq!(outcome["seq"], head(t.engine));
        assert!(head(t.engine) > before + 3);

        // Over: only freeing is left.
        assert_eq!(step(t.engine, turn), Err(rp_result::Conflict));
        assert!(
            last_error().contains("rp_turn_finish ended it"),
            "{}",
            last_error()
        );
        assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
        assert_eq!(free(turn), rp_result::Ok);
        assert_eq!(free(turn), rp_result::InvalidHandle);
        assert_eq!(step(t.engine, turn), Err(rp_result::InvalidHandle));
    }

    #[test]
    fn finishing_early_is_a_conflict_and_the_turn_goes_on() {
        let t = tavern();
        let turn = begin(&t, &say(&t, "Tobias?", 1_000), None).expect("begins");
        assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
        assert!(
            last_error().contains(&format!("the line of entity {}", t.tobias)),
            "{}",
            last_error()
        );
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "Mm."}"#),
            rp_result::Ok,
            "{}",
            last_error()
        );
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "again"}"#),
            rp_result::Conflict,
            "not asked"
        );
        let outcome = finish(t.engine, turn).expect("finishes");
        assert_eq!(outcome["replies"][0]["text"], "Mm.");
        assert_eq!(outcome["prompts"], serde_json::json!([]), "not asked for");
        assert_eq!(free(turn), rp_result::Ok);
    }

    #[test]
    fn the_outcome_carries_the_prompts_when_the_options_ask() {
        let t = tavern();
        let options = r#"{"outcome_prompts": true, "max_responders": 2}"#;
        let turn = begin(&t, &say(&t, "Tobias?", 1_000), Some(options)).expect("begins");
        let request = step(t.engine, turn).expect("a step");
        assert_eq!(provide(t.engine, turn, r#"{"text": "Mm."}"#), rp_result::Ok);
        let outcome = finish(t.engine, turn).expect("finishes");
        let prompts = outcome["prompts"].as_array().expect("prompts");
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0]["speaker"], t.tobias);
        assert_eq!(prompts[0]["messages"], request["messages"]);
        assert!(prompts[0]["pieces"].is_array());
        assert_eq!(free(turn), rp_result::Ok);

        for bad in [r#"{"outcome_prompts": 1}"#, r#"{"outcome_prompts": null}"#] {
            assert_eq!(
                begin(&t, &say(&t, "x", 2_000), Some(bad)),
                Err(rp_result::Invalid)
            );
            assert!(
                last_error().contains("outcome_prompts: invalid type"),
                "{}",
                last_error()
            );
        }
        // The other options are still read strictly, and a text that is
        // not an object is refused as before.
        assert_eq!(
            begin(
                &t,
                &say(&t, "x", 2_000),
                Some(r#"{"outcome_prompts": false, "loud": 1}"#)
            ),
            Err(rp_result::Invalid)
        );
        assert!(last_error().contains("loud"), "{}", last_error());
        for bad in ["[]", "{x", "3"] {
            assert_eq!(
                begin(&t, &say(&t, "x", 2_000), Some(bad)),
                Err(rp_result::Invalid)
            );
            assert!(
                last_error().starts_with("invalid turn options: "),
                "{}",
                last_error()
            );
        }
    }

    #[test]
    fn a_turn_refuses_another_engine_and_bad_json() {
        let t = tavern();
        let other = tavern();
        let turn = begin(&t, &say(&t, "Tobias?", 1_000), None).expect("begins");
        assert_eq!(step(other.engine, turn), Err(rp_result::Invalid));
        assert!(last_error().contains("another engine"), "{}", last_error());
        assert_eq!(step(ptr::null_mut(), turn), Err(rp_result::NullArgument));
        assert_eq!(
            step(t.engine, ptr::null_mut()),
            Err(rp_result::NullArgument)
        );
        assert_eq!(last_error(), "`turn` is NULL");
        step(t.engine, turn).expect("asks");
        for bad in ["{text", r#"{"text": 3}"#, "3", r#"{"txt": "x"}"#, "[]"] {
            assert_eq!(provide(t.engine, turn, bad), rp_result::Invalid, "{bad}");
            assert!(
                last_error().starts_with("invalid generation result: "),
                "{}",
                last_error()
            );
        }
        // SAFETY: a valid string.
        let result = unsafe { rp_turn_provide(t.engine, turn, c"\xff".as_ptr(), 1) };
        assert_eq!(result, rp_result::InvalidUtf8);
        // SAFETY: a valid string.
        let result = unsafe { rp_turn_provide_embeddings(t.engine, turn, c"[[1]]".as_ptr(), 5) };
        assert_eq!(result, rp_result::Conflict, "not asked for vectors");

        assert_eq!(begin(&t, "{}", None), Err(rp_result::Invalid));
        assert_eq!(
            begin(&t, &say(&t, "x", 0), Some("{\"loud\": 1}")),
            Err(rp_result::Invalid)
        );
        assert!(last_error().contains("loud"), "{}", last_error());
        let mira_speaks = serde_json::json!({"speaker": t.mira, "text": "x", "now": 1}).to_string();
        assert_eq!(begin(&t, &mira_speaks, None), Err(rp_result::Invalid));
        assert_eq!(free(turn), rp_result::Ok);
        assert_eq!(free(ptr::null_mut()), rp_result::Ok);
    }

    #[test]
    fn a_semantic_turn_asks_for_vectors() {
        let t = tavern();
        let turn = begin(
            &t,
            &say(&t, "Tobias, the lights?", 1_000),
            Some(r#"{"semantic": true}"#),
        )
        .expect("begins");
        let first = step(t.engine, turn).expect("a step");
        assert_eq!(first["step"], "embed");
        assert_eq!(first["texts"].as_array().map(Vec::len), Some(1));
        let embed = |json: &str| {
            // SAFETY: a valid string.
            unsafe { rp_turn_provide_embeddings(t.engine, turn, json.as_ptr().cast(), json.len()) }
        };
        assert_eq!(embed("[[1, 0], [0, 1]]"), rp_result::Invalid, "two for one");
        assert_eq!(embed(r#"[["a"]]"#), rp_result::Invalid);
        assert_eq!(embed("[[0.5, 0.5]]"), rp_result::Ok, "{}", last_error());
        assert_eq!(step(t.engine, turn).expect("a step")["step"], "generate");
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "Green ones."}"#),
            rp_result::Ok
        );
        let lines = step(t.engine, turn).expect("a step");
        assert_eq!(lines["step"], "embed", "vectors of the remembered lines");
        let n = lines["texts"].as_array().map_or(0, Vec::len);
        assert_eq!(n, 2, "Wren's line and Tobias's");
        assert_eq!(embed("[[1, 0], [0, 1]]"), rp_result::Ok, "{}", last_error());
        finish(t.engine, turn).expect("finishes");
        assert_eq!(free(turn), rp_result::Ok);
    }

    #[test]
    fn the_state_update_pass_is_a_generate_step_and_its_reports_are_in_the_outcome() {
        let t = tavern();
        let turn = begin(
            &t,
            &say(&t, "Tobias, the lights?", 1_000),
            Some(r#"{"updates": {"enabled": true, "step": 0.25}}"#),
        )
        .expect("begins");
        assert_eq!(
            step(t.engine, turn).expect("a step")["purpose"]["kind"],
            "reply"
        );
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "Green ones."}"#),
            rp_result::Ok
        );
        let pass = step(t.engine, turn).expect("a step");
        assert_eq!(pass["step"], "generate");
        assert_eq!(pass["purpose"], serde_json::json!({"kind": "state_update"}));
        assert!(pass["json_schema"].is_object(), "{pass}");
        assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
        assert!(
            last_error().contains("the state-update pass"),
            "{}",
            last_error()
        );
        let answer = serde_json::json!({"reports": [
            {"type": "feeling", "who": "Tobias Reed", "toward": "Wren", "affinity": "warmer"},
            {"type": "feeling", "who": "Nobody", "toward": "Wren", "affinity": "warmer"},
        ]})
        .to_string();
        let result = serde_json::json!({ "text": answer }).to_string();
        assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
        let retry = step(t.engine, turn).expect("a step");
        assert_eq!(retry["purpose"]["kind"], "state_update", "one retry");
        let feedback = retry["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        assert!(feedback.contains("Nobody"), "{feedback}");
        assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
        let outcome = finish(t.engine, turn).expect("finishes");
        let reports = outcome["reports"].as_array().expect("reports");
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0]["rejected"], Value::Null, "applied");
        assert!(reports[1]["rejected"].is_string(), "{}", reports[1]);
        assert_eq!(free(turn), rp_result::Ok);

        let mut text = ptr::null_mut();
        // SAFETY: valid out-parameter.
        let result = unsafe { crate::engine::rp_engine_export_world_file(t.engine, &mut text) };
        assert_eq!(result, rp_result::Ok);
        // SAFETY: a live string rp handed out, released once.
        let world = unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: as above.
        unsafe { rp_string_free(text) };
        assert!(
            world.contains("from = \"tobias\"\nto = \"wren\"\naffinity = 0.25\n"),
            "the step of the options: {world}"
        );
    }

    #[test]
    fn a_host_action_is_an_act_step_answered_with_provide_action() {
        let t = tavern();
        let options = serde_json::json!({"updates": {"enabled": true, "actions": [
            {"name": "open_door", "parameters": {"type": "object", "required": ["door"],
             "properties": {"door": {"enum": ["cellar"]}}}}]}})
        .to_string();
        let turn =
            begin(&t, &say(&t, "Tobias, the cellar?", 1_000), Some(&options)).expect("begins");
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "Aye."}"#),
            rp_result::Ok
        );
        let answer =
            r#"{"reports": [{"type": "open_door", "who": "Tobias Reed", "door": "cellar"}]}"#;
        let result = serde_json::json!({ "text": answer }).to_string();
        assert_eq!(
            step(t.engine, turn).expect("a step")["purpose"]["kind"],
            "state_update"
        );
        assert_eq!(provide(t.engine, turn, &result), rp_result::Ok);
        let act = step(t.engine, turn).expect("a step");
        assert_eq!(
            act,
            serde_json::json!({"step": "act", "name": "open_door", "who": t.tobias,
                "arguments": {"door": "cellar"}, "report": 0})
        );
        assert_eq!(finish(t.engine, turn), Err(rp_result::Conflict));
        let action = |answer: Option<&str>, refusal: Option<&str>| {
            let (a, a_len) = answer.map_or((ptr::null(), 0), |a| (a.as_ptr(), a.len()));
            let (r, r_len) = refusal.map_or((ptr::null(), 0), |r| (r.as_ptr(), r.len()));
            // SAFETY: valid strings or NULL with length 0.
            unsafe { rp_turn_provide_action(t.engine, turn, a.cast(), a_len, r.cast(), r_len) }
        };
        assert_eq!(action(Some("{}"), Some("no")), rp_result::Invalid);
        assert_eq!(action(None, None), rp_result::NullArgument);
        assert_eq!(action(Some("{x"), None), rp_result::Invalid);
        assert_eq!(action(Some(r#"{"opened": true}"#), None), rp_result::Ok);
        assert_eq!(action(None, Some("late")), rp_result::Conflict);
        let outcome = finish(t.engine, turn).expect("finishes");
        assert_eq!(outcome["reports"][0]["answer"], r#"{"opened":true}"#);
        assert_eq!(free(turn), rp_result::Ok);
    }

    #[test]
    fn inspect_prompt_explains_every_piece() {
        let t = tavern();
        let mut json = ptr::null_mut();
        // SAFETY: valid out-parameter; NULL query and options.
        let result = unsafe {
            rp_engine_inspect_prompt(
                t.engine,
                t.mira,
                ptr::null(),
                0,
                0,
                ptr::null(),
                0,
                &mut json,
            )
        };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        let prompt = take_json(json);
        assert_eq!(prompt["speaker"], t.mira);
        let pieces = prompt["pieces"].as_array().expect("pieces");
        assert!(!pieces.is_empty());
        assert!(
            pieces
                .iter()
                .all(|p| p["why"].as_str().is_some_and(|w| !w.is_empty()))
        );

        let options = r#"{"budget_tokens": 0}"#;
        // SAFETY: valid strings and out-parameter.
        let result = unsafe {
            rp_engine_inspect_prompt(
                t.engine,
                t.mira,
                c"cider".as_ptr(),
                5,
                0,
                options.as_ptr().cast(),
                options.len(),
                &mut json,
            )
        };
        assert_eq!(result, rp_result::Invalid);
        // SAFETY: as above.
        let result = unsafe {
            rp_engine_inspect_prompt(
                t.engine,
                999_999,
                ptr::null(),
                0,
                0,
                ptr::null(),
                0,
                &mut json,
            )
        };
        assert_eq!(result, rp_result::NotFound);
    }
}
