//! The callback form of the turn (`rp_engine_run_turn`,
//! `rp_engine_run_turn_with_actions`): rp-core's `Engine::run_turn_blocking`
//! with a `Generate` that calls the host's generate callback (and its act
//! callback for host actions), and the `rp_token_sink` through which the
//! generate callback streams tokens to the host's token callback. The poll
//! form is in [`crate::turn`].

use std::ffi::{CString, c_char, c_int, c_void};

use rp_core::turn::{GenerateRequest, GenerateResult, NoSink, TokenSink, TurnInput, TurnOutcome};
use rp_core::update::ActionCall;

use crate::arg::{out_arg, str_arg};
use crate::engine::{CallingOut, rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::handle::{Handles, Publish};
use crate::turn::{options_arg, outcome_json, to_c_json};

/// Where the streamed tokens of one generation go: handed to the generate
/// callback of `rp_engine_run_turn`, fed with `rp_token_sink_emit`.
///
/// A sink is valid only while the callback it was handed to runs; after the
/// callback returns, `rp_token_sink_emit` refuses it with
/// `RP_RESULT_INVALID_HANDLE`. It is never dereferenced and needs no freeing.
#[allow(non_camel_case_types)]
pub struct rp_token_sink {
    _opaque: [u8; 0],
}

/// The generate callback of `rp_engine_run_turn`: the host's model.
///
/// Called once per generation the turn needs (one per responder, once more
/// per round of tool calls a reply makes, then, with `"updates"` enabled in
/// the options, one or two for the state-update pass),
/// on the thread that called `rp_engine_run_turn`, before that call returns,
/// with:
///
/// - `user_data`: the pointer given to `rp_engine_run_turn`, untouched;
/// - `request_json`, `request_json_len`: the request, NUL-terminated UTF-8
///   JSON owned by rp and valid until the callback returns (the shape is
///   that of a `"generate"` step of `rp_turn_step`, without `"step"`):
///
///   ```text
///   {"purpose": {"kind": "reply", "speaker": 3},   // whose line
///    "messages": [{"role": "system", "content": "You are Tobias Reed..."},
///                 {"role": "user", "content": "What does Tobias Reed say?"}],
///    "params": {"temperature": 0.8, "max_tokens": 200},  // sampling; only
///                                   // what the turn's options set
///    "tools": [{"name": "roll_dice", ...}, {"name": "roll_effects", ...}]}
///   ```
///
///   `"tools"` is there unless the options say `"tools": false` (see
///   `rp_turn_step`); a request asked again after tool calls ends with the
///   assistant's calls and one `{"role": "tool", "content": "<JSON result>",
///   "tool_call_id": "a"}` message per call.
///
///   A request of purpose `{"kind": "state_update"}` is the state-update
///   pass: it carries a `"json_schema"`, and its answer is the JSON object
///   the messages ask for, as the result's `"text"` (see `rp_turn_step`).
///
/// - `sink`: where streamed tokens go: call `rp_token_sink_emit(sink, text,
///   len)` for each piece as the model produces it (or never, if the host
///   does not stream). Valid until the callback returns.
/// - `out_result_json`, `out_result_len`: where the callback writes its
///   answer: a pointer to `*out_result_len` bytes of UTF-8 (no NUL needed)
///   that the host owns. rp reads and copies them right after the callback
///   returns, so they must stay valid after it returns: until the callback
///   is called again or `rp_engine_run_turn` returns, whichever comes first.
///   A buffer in `user_data` or a string literal works; an array local to
///   the callback does not. rp never frees or modifies it. Both start as
///   `NULL` and 0.
///
/// On success the callback returns `RP_RESULT_OK` (0) with the result JSON,
/// whose fields are all optional:
///
/// ```text
/// {"text": "Lights on the marsh, I tell you.",  // the line; "" or only
///                                               // spaces: stays silent
///  "model": "my-model",                         // recorded with the line
///  "prompt_tokens": 812, "completion_tokens": 9,
///  "tool_calls": [{"id": "a", "name": "roll_dice",  // instead of the line:
///                  "arguments": {"notation": "2d6+1"}}]}  // see below
/// ```
///
/// To call tools, answer a request that offers `"tools"` with
/// `"tool_calls"`, as for `rp_turn_provide` (the same result JSON): rp runs
/// them with the world's seeded generator and calls the callback again with
/// the request extended by their results; answer that one with the line. A
/// result of only `"text"`, as before tools existed, is the line.
///
/// Any other return value abandons the turn: `rp_engine_run_turn` returns
/// `RP_RESULT_GENERATION`, and the input stays committed. On failure the
/// callback may point `*out_result_json` at a message saying what went
/// wrong (same ownership rule); `rp_last_error()` then includes it.
///
/// The return type is `int`, not `rp_result`, so that any value a callback
/// returns is well defined; return the `RP_RESULT_*` constants.
///
/// The callback must not call rp with the engine running the turn (that call
/// is refused with `RP_RESULT_CONFLICT`, as are calls on its turns); calls
/// with other engines are allowed.
/// It must return normally (no `longjmp` or C++ exception across rp).
///
/// `rp_engine_run_job` calls the same callback for the generations of a
/// job (a scene's summaries, a time skip's, a query's rounds, a tick's
/// lines), and `rp_engine_advance` for those of its ticks, under the same
/// rules; there, what it streams through `sink` goes nowhere.
#[allow(non_camel_case_types)]
pub type rp_generate_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request_json: *const c_char,
        request_json_len: usize,
        sink: *mut rp_token_sink,
        out_result_json: *mut *const c_char,
        out_result_len: *mut usize,
    ) -> c_int,
>;

/// The token callback of `rp_engine_run_turn`: receives the pieces of text a
/// generate callback streams with `rp_token_sink_emit`, in order.
///
/// - `user_data`: the pointer given to `rp_engine_run_turn`, untouched;
/// - `speaker`: the entity whose line is being generated (0 for a request
///   that is not a character's line, such as the state-update pass);
/// - `text`, `text_len`: the piece, NUL-terminated UTF-8 owned by rp, valid
///   only during the call (`text_len` does not count the NUL).
///
/// Called on the thread that calls `rp_token_sink_emit`, during that call.
/// It must not call rp with the engine running the turn.
#[allow(non_camel_case_types)]
pub type rp_token_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        speaker: u64,
        text: *const c_char,
        text_len: usize,
    ),
>;

/// The act callback of `rp_engine_run_turn_with_actions`: the game carrying
/// out a host action (see `"actions"` in the options of `rp_turn_begin`).
///
/// Called once per valid report of a declared action, after the
/// state-update pass (and its retry), in the order reported, on the thread
/// that called `rp_engine_run_turn_with_actions`, before that call returns,
/// with:
///
/// - `user_data`: the pointer given to `rp_engine_run_turn_with_actions`,
///   untouched;
/// - `call_json`, `call_json_len`: the action, NUL-terminated UTF-8 JSON
///   owned by rp and valid until the callback returns (an `"act"` step of
///   `rp_turn_step`, without `"step"`):
///
///   ```text
///   {"name": "open_door", "who": 3, "arguments": {"door": "cellar"},
///    "report": 0}
///   ```
///
/// - `out_answer`, `out_answer_len`: where the callback writes its answer, a
///   pointer to `*out_answer_len` bytes of UTF-8 (no NUL needed) that the
///   host owns, under the same rule as the result of `rp_generate_fn`: rp
///   copies them right after the callback returns, so they must stay valid
///   until the callback is called again or the turn returns. Both start as
///   `NULL` and 0.
///
/// Return `RP_RESULT_OK` (0) when the game did it, with the answer: any JSON
/// value saying what it did, recorded as the `"answer"` of the action's
/// report; an object with a `"system_line"` string injects that line (see
/// `rp_turn_provide_action`). Return any other value to refuse the action,
/// with `*out_answer` pointing at the reason (or left `NULL`): the report is
/// recorded as rejected with that reason and the turn goes on. An answer
/// that is not valid UTF-8 JSON is recorded as a refusal saying so. A
/// refusal does not abandon the turn; to stop, fail the next generation.
///
/// The callback must not call rp with the engine running the turn (that
/// call is refused with `RP_RESULT_CONFLICT`); calls with other engines are
/// allowed. It must return normally (no `longjmp` or C++ exception across
/// rp).
#[allow(non_camel_case_types)]
pub type rp_act_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        call_json: *const c_char,
        call_json_len: usize,
        out_answer: *mut *const c_char,
        out_answer_len: *mut usize,
    ) -> c_int,
>;

/// Where the tokens of one call of the generate callback go.
#[derive(Clone, Copy)]
struct SinkTarget {
    on_token: rp_token_fn,
    user_data: *mut c_void,
    speaker: u64,
}

// SAFETY: `user_data` is never dereferenced by rp, only handed back to the
// host's callback; the host's documentation says on which thread that
// happens (the one calling rp_token_sink_emit).
unsafe impl Send for SinkTarget {}

impl Publish for SinkTarget {}

/// Every sink whose generate callback is running.
fn sinks() -> &'static Handles<SinkTarget> {
    static SINKS: Handles<SinkTarget> = Handles::new();
    &SINKS
}

/// A sink registered for one call of the generate callback; unregistered
/// when dropped, so a sink kept past its callback is refused.
struct SinkRegistration(usize);

impl SinkRegistration {
    fn new(target: SinkTarget) -> SinkRegistration {
        SinkRegistration(sinks().insert(target))
    }

    fn handle(&self) -> *mut rp_token_sink {
        std::ptr::without_provenance_mut(self.0)
    }
}

impl Drop for SinkRegistration {
    fn drop(&mut self) {
        // `rp_token_sink_emit` holds a sink's lock only to copy it out.
        let _ = sinks().remove("sink", self.0, true);
    }
}

/// Streams a piece of the text being generated: hands `text` to the token
/// callback of `rp_engine_run_turn` (if one was given), NUL-terminated,
/// with the speaker whose line it is.
///
/// Call it from a generate callback with the `sink` it was handed, as the
/// model produces text; it may also be called from another thread while that
/// callback runs (the token callback then runs on that thread). `text` is
/// `text_len` bytes of UTF-8, borrowed for the call. What is streamed is for
/// display only: the line recorded is the result the callback returns.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID_HANDLE` for a sink whose
/// callback has returned (or that is not from rp); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`; `RP_RESULT_INVALID` for text holding a NUL
/// byte.
///
/// Thread: the generate callback's, or any other while that callback runs.
///
/// # Safety
///
/// `text` points to `text_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_token_sink_emit(
    sink: *mut rp_token_sink,
    text: *const c_char,
    text_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        // Copied out, so the host's callback runs without the sink's lock.
        let target = sinks().with("sink", sink.addr(), |target| Ok(*target))?;
        let text = CString::new(text).map_err(|error| {
            Error::new(
                rp_result::Invalid,
                format_args!(
                    "`text` holds a NUL byte at index {}, which a C string cannot carry",
                    error.nul_position()
                ),
            )
        })?;
        let Some(on_token) = target.on_token else {
            return Ok(());
        };
        // SAFETY: the host's callback, called as its documentation says: its
        // own user_data, and a NUL-terminated string valid for the call.
        unsafe {
            on_token(
                target.user_data,
                target.speaker,
                text.as_ptr(),
                text.as_bytes().len(),
            )
        };
        Ok(())
    })
}

/// The host's generate and token callbacks as rp-core's `Generate` (also
/// the model of `rp_engine_run_job`, without a token or act callback).
pub(crate) struct CallbackGenerator {
    generate: unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        usize,
        *mut rp_token_sink,
        *mut *const c_char,
        *mut usize,
    ) -> c_int,
    on_token: rp_token_fn,
    act: rp_act_fn,
    user_data: *mut c_void,
}

// SAFETY: the generator lives only inside rp_engine_run_turn, which drives
// the turn on the calling thread (`run_turn_blocking`); rp never dereferences
// `user_data`, it only hands it back to the host's callbacks.
unsafe impl Send for CallbackGenerator {}
// SAFETY: as above; `&CallbackGenerator` never leaves the calling thread.
unsafe impl Sync for CallbackGenerator {}

impl CallbackGenerator {
    /// The generate callback `generate` alone: what it streams is dropped,
    /// and it carries out no host action.
    pub(crate) fn generate_only(
        generate: unsafe extern "C" fn(
            *mut c_void,
            *const c_char,
            usize,
            *mut rp_token_sink,
            *mut *const c_char,
            *mut usize,
        ) -> c_int,
        user_data: *mut c_void,
    ) -> CallbackGenerator {
        CallbackGenerator {
            generate,
            on_token: None,
            act: None,
            user_data,
        }
    }

    /// Calls the host's generate callback for `request`.
    pub(crate) fn call(&self, request: &GenerateRequest) -> Result<GenerateResult, String> {
        let request_json = to_c_json(request);
        let sink = SinkRegistration::new(SinkTarget {
            on_token: self.on_token,
            user_data: self.user_data,
            speaker: request.purpose.speaker().map_or(0, |speaker| speaker.0),
        });
        let mut result: *const c_char = std::ptr::null();
        let mut result_len = 0_usize;
        // SAFETY: the host's callback, called as rp_generate_fn documents:
        // the request is NUL-terminated and outlives the call, the sink is
        // registered until after it, the out-parameters are writable.
        let code = unsafe {
            (self.generate)(
                self.user_data,
                request_json.as_ptr(),
                request_json.as_bytes().len(),
                sink.handle(),
                &raw mut result,
                &raw mut result_len,
            )
        };
        // The sink dies with the call: emitting through it later is refused.
        drop(sink);
        let text = if result.is_null() {
            None
        } else {
            // SAFETY: the callback set `result` to `result_len` bytes it keeps
            // valid until it is called again or the turn returns; read now.
            let bytes = unsafe { std::slice::from_raw_parts(result.cast::<u8>(), result_len) };
            Some(std::str::from_utf8(bytes))
        };
        if code != rp_result::Ok as c_int {
            return Err(match text {
                Some(Ok(message)) if !message.is_empty() => {
                    format!("the generate callback failed (code {code}): {message}")
                }
                _ => format!("the generate callback failed (code {code})"),
            });
        }
        match text {
            None => Err(
                "the generate callback returned RP_RESULT_OK without a result: \
                 set *out_result_json"
                    .to_owned(),
            ),
            Some(Err(error)) => Err(format!(
                "the result of the generate callback is not valid UTF-8: {error}"
            )),
            Some(Ok(json)) => GenerateResult::from_json(json).map_err(|error| {
                format!("the result of the generate callback is not a result JSON: {error}")
            }),
        }
    }
}

#[async_trait::async_trait]
impl rp_core::turn::Generate for CallbackGenerator {
    async fn generate(
        &self,
        request: &GenerateRequest,
        _sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        // Tokens reach the host's token callback through the rp_token_sink
        // handed to the generate callback, not through rp-core's sink.
        self.call(request)
    }

    async fn act(&self, call: &ActionCall) -> Result<serde_json::Value, String> {
        self.call_act(call)
    }
}

impl CallbackGenerator {
    /// Calls the host's act callback for `call`: `Ok` with its answer, `Err`
    /// with why the action was refused.
    fn call_act(&self, call: &ActionCall) -> Result<serde_json::Value, String> {
        let Some(act) = self.act else {
            return Err(format!(
                "the host gave no act callback, so the action \"{}\" was not carried out \
                 (rp_engine_run_turn_with_actions takes one)",
                call.name
            ));
        };
        let call_json = to_c_json(call);
        let mut answer: *const c_char = std::ptr::null();
        let mut answer_len = 0_usize;
        // SAFETY: the host's callback, called as rp_act_fn documents: the
        // call is NUL-terminated and outlives the call, the out-parameters
        // are writable.
        let code = unsafe {
            act(
                self.user_data,
                call_json.as_ptr(),
                call_json.as_bytes().len(),
                &raw mut answer,
                &raw mut answer_len,
            )
        };
        let text = if answer.is_null() {
            None
        } else {
            // SAFETY: the callback set `answer` to `answer_len` bytes it keeps
            // valid until it is called again or the turn returns; read now.
            let bytes = unsafe { std::slice::from_raw_parts(answer.cast::<u8>(), answer_len) };
            Some(std::str::from_utf8(bytes))
        };
        if code != rp_result::Ok as c_int {
            return Err(match text {
                Some(Ok(reason)) if !reason.is_empty() => reason.to_owned(),
                _ => format!("the act callback refused it (code {code})"),
            });
        }
        match text {
            None => Err(
                "the act callback returned RP_RESULT_OK without an answer: set *out_answer"
                    .to_owned(),
            ),
            Some(Err(error)) => Err(format!(
                "the answer of the act callback is not valid UTF-8: {error}"
            )),
            Some(Ok(json)) => serde_json::from_str(json)
                .map_err(|error| format!("the answer of the act callback is not JSON: {error}")),
        }
    }
}

/// Runs a whole turn through the host's model: begins it (committing the
/// input), calls `generate` for each generation it needs, in order, and
/// commits it, writing the outcome JSON to `*out_outcome_json` (a string
/// the caller releases with `rp_string_free`). The same turn as
/// `rp_turn_begin` ... `rp_turn_finish`, with the loop run by rp.
///
/// - `input_json`, `options_json`: as for `rp_turn_begin` (`options_json`
///   may be `NULL` with length 0 for the defaults). Options with
///   `"semantic": true` are refused with `RP_RESULT_INVALID` before anything
///   is committed: vectors are asked for by the poll form only. With
///   `"updates": {"enabled": true}`, `generate` also answers the
///   state-update pass (and its one retry), after the replies. Host actions
///   the options declare (`"actions"`) are refused, each recorded as
///   rejected with a reason saying no act callback was given: use
///   `rp_engine_run_turn_with_actions` to carry them out.
/// - `generate`: the host's model (see `rp_generate_fn`); must not be `NULL`.
/// - `on_token`: receives what `generate` streams with `rp_token_sink_emit`
///   (see `rp_token_fn`); `NULL` drops it.
/// - `user_data`: handed to both callbacks untouched; may be `NULL`.
/// - `out_outcome_json`: the outcome, as for `rp_turn_finish`.
///
/// The callbacks run on the calling thread, before this call returns, while
/// the engine is held: other threads' calls on the engine wait, and the
/// callbacks' own calls with this engine are refused with
/// `RP_RESULT_CONFLICT`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_GENERATION` when `generate` returned a
/// failure or a result rp could not read (`rp_last_error()` says which, with
/// the callback's message): the turn is abandoned, its input stays
/// committed, nothing else of it is; `RP_RESULT_INVALID` also for a result
/// the world refuses (a text over the size limit), with the turn abandoned
/// the same way; the codes of `rp_turn_begin` for a bad input or options
/// (nothing committed); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `input_json` points to `input_json_len` readable bytes; `options_json` is
/// `NULL` (with `options_json_len` 0) or points to `options_json_len`
/// readable bytes; `generate` and `on_token` follow their types'
/// documentation; `out_outcome_json` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_run_turn(
    engine: *mut rp_engine,
    input_json: *const c_char,
    input_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    generate: rp_generate_fn,
    on_token: rp_token_fn,
    user_data: *mut c_void,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    // SAFETY: the caller upholds this function's contract, which is
    // run_turn's without an act callback.
    unsafe {
        run_turn(
            engine,
            input_json,
            input_json_len,
            options_json,
            options_json_len,
            generate,
            on_token,
            None,
            user_data,
            out_outcome_json,
        )
    }
}

/// Both callback forms of the turn; `act` is `None` for `rp_engine_run_turn`.
///
/// # Safety
///
/// As for `rp_engine_run_turn_with_actions`.
#[allow(clippy::too_many_arguments)]
unsafe fn run_turn(
    engine: *mut rp_engine,
    input_json: *const c_char,
    input_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    generate: rp_generate_fn,
    on_token: rp_token_fn,
    act: rp_act_fn,
    user_data: *mut c_void,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `input_json` points to
        // `input_json_len` bytes.
        let input = unsafe { str_arg("input_json", input_json, input_json_len) }?;
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { options_arg(options_json, options_json_len) }?;
        let generate =
            generate.ok_or_else(|| Error::new(rp_result::NullArgument, "`generate` is NULL"))?;
        let out = out_arg("out_outcome_json", out_outcome_json)?;
        let input = TurnInput::from_json(input)?;
        if options.semantic {
            return Err(Error::from(rp_core::Error::Invalid {
                what: "turn options",
                reason: "rp_engine_run_turn does not ask for vectors: set \"semantic\" to \
                         false, or drive the turn with rp_turn_begin to provide them"
                    .into(),
            }));
        }
        let generator = CallbackGenerator {
            generate,
            on_token,
            act,
            user_data,
        };
        let outcome: TurnOutcome = with_engine(engine, |e| {
            let _calling_out = CallingOut::new(engine);
            Ok(e.run_turn_blocking(input, options, &generator, &mut NoSink)?)
        })?;
        let json = outcome_json(outcome);
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// `rp_engine_run_turn` with host actions: the same turn, and each valid
/// report of an action the options declare (`"actions"` of `"updates"`,
/// see `rp_turn_begin`) is handed to `act` after the state-update pass, in
/// the order reported; its answer (or refusal) is recorded in the action's
/// report of the outcome (`"answer"` or `"rejected"`).
///
/// - `act`: the game (see `rp_act_fn`); `NULL` refuses every action, as
///   `rp_engine_run_turn` does.
/// - `user_data`: handed to all three callbacks untouched; may be `NULL`.
/// - the other arguments, the threads the callbacks run on and the result
///   codes: as for `rp_engine_run_turn`. `RP_RESULT_INVALID` also for an
///   answer longer than a recorded text may be (the turn is abandoned).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// As for `rp_engine_run_turn`; `act` follows its type's documentation.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_run_turn_with_actions(
    engine: *mut rp_engine,
    input_json: *const c_char,
    input_json_len: usize,
    options_json: *const c_char,
    options_json_len: usize,
    generate: rp_generate_fn,
    on_token: rp_token_fn,
    act: rp_act_fn,
    user_data: *mut c_void,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    // SAFETY: the caller upholds the contract of rp_engine_run_turn.
    unsafe {
        run_turn(
            engine,
            input_json,
            input_json_len,
            options_json,
            options_json_len,
            generate,
            on_token,
            act,
            user_data,
            out_outcome_json,
        )
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr;

    use serde_json::Value;

    use super::*;
    use crate::engine::{rp_engine_free, rp_engine_head};
    use crate::turn::rp_turn_step;
    use crate::turn::tests::{Tavern, begin, free, head, last_error, say, take_json, tavern};

    /// What the callbacks of the tests see and answer.
    #[derive(Default)]
    struct Host {
        engine: usize,
        requests: Vec<Value>,
        tokens: Vec<(u64, String)>,
        answer: Vec<u8>,
        fail: bool,
        reentrant: Option<rp_result>,
        freed: Option<rp_result>,
        turn: usize,
        turn_call: Option<(rp_result, String)>,
        kept_sink: usize,
    }

    unsafe extern "C" fn host_generate(
        user_data: *mut c_void,
        request_json: *const c_char,
        request_json_len: usize,
        sink: *mut rp_token_sink,
        out_result_json: *mut *const c_char,
        out_result_len: *mut usize,
    ) -> c_int {
        // SAFETY: the tests pass a `Host` as user_data.
        let host = unsafe { &mut *user_data.cast::<Host>() };
        // SAFETY: rp passes a NUL-terminated request of that length.
        let request = unsafe { CStr::from_ptr(request_json) }
            .to_str()
            .expect("UTF-8");
        assert_eq!(request.len(), request_json_len);
        host.requests
            .push(serde_json::from_str(request).expect("JSON"));
        let mut head = 0;
        let engine: *mut rp_engine = std::ptr::without_provenance_mut(host.engine);
        // SAFETY: valid out-parameter.
        host.reentrant = Some(unsafe { rp_engine_head(engine, &mut head) });
        // SAFETY: any handle is answered safely.
        host.freed = Some(unsafe { rp_engine_free(engine) });
        if host.turn != 0 {
            let mut json = ptr::null_mut();
            // SAFETY: valid out-parameter.
            let code = unsafe {
                rp_turn_step(
                    engine,
                    std::ptr::without_provenance_mut(host.turn),
                    &mut json,
                )
            };
            host.turn_call = Some((code, last_error()));
        }
        host.kept_sink = sink.addr();
        for word in ["Aye, ", "lights."] {
            // SAFETY: a valid string.
            let result = unsafe { rp_token_sink_emit(sink, word.as_ptr().cast(), word.len()) };
            assert_eq!(result, rp_result::Ok);
        }
        host.answer = if host.fail {
            b"the model server is down".to_vec()
        } else {
            br#"{"text": "Aye, lights.", "model": "test"}"#.to_vec()
        };
        // SAFETY: writable out-parameters; the answer lives in `host`.
        unsafe {
            out_result_json.write(host.answer.as_ptr().cast());
            out_result_len.write(host.answer.len());
        }
        if host.fail {
            rp_result::Generation as c_int
        } else {
            rp_result::Ok as c_int
        }
    }

    unsafe extern "C" fn host_token(
        user_data: *mut c_void,
        speaker: u64,
        text: *const c_char,
        text_len: usize,
    ) {
        // SAFETY: the tests pass a `Host` as user_data.
        let host = unsafe { &mut *user_data.cast::<Host>() };
        // SAFETY: rp passes a NUL-terminated text of that length.
        let text = unsafe { CStr::from_ptr(text) }.to_str().expect("UTF-8");
        assert_eq!(text.len(), text_len);
        host.tokens.push((speaker, text.to_owned()));
    }

    fn run_turn(
        t: &Tavern,
        input: &str,
        options: Option<&str>,
        host: &mut Host,
    ) -> Result<Value, rp_result> {
        let mut json = ptr::null_mut();
        let (options, options_len) = options.map_or((ptr::null(), 0), |o| (o.as_ptr(), o.len()));
        // SAFETY: valid strings, callbacks and out-parameters; `host`
        // outlives the call.
        match unsafe {
            rp_engine_run_turn(
                t.engine,
                input.as_ptr().cast(),
                input.len(),
                options.cast(),
                options_len,
                Some(host_generate),
                Some(host_token),
                ptr::from_mut(host).cast(),
                &mut json,
            )
        } {
            rp_result::Ok => Ok(take_json(json)),
            code => {
                assert!(json.is_null());
                Err(code)
            }
        }
    }

    #[test]
    fn the_callback_form_streams_tokens_and_refuses_reentry() {
        let t = tavern();
        // A turn of the same engine, which the callback will try to step.
        let open = begin(&t, &say(&t, "Tobias?", 1_000), None).expect("begins");
        let mut host = Host {
            engine: t.engine.addr(),
            turn: open.addr(),
            ..Host::default()
        };
        let outcome = run_turn(
            &t,
            &say(&t, "Tobias, anything out there?", 5_000),
            None,
            &mut host,
        )
        .expect("runs");
        assert_eq!(outcome["replies"][0]["text"], "Aye, lights.");
        assert_eq!(host.requests.len(), 1);
        assert_eq!(host.requests[0]["purpose"]["speaker"], t.tobias);
        assert_eq!(
            host.tokens,
            [
                (t.tobias, "Aye, ".to_owned()),
                (t.tobias, "lights.".to_owned())
            ]
        );
        assert_eq!(host.reentrant, Some(rp_result::Conflict), "no deadlock");
        assert_eq!(host.freed, Some(rp_result::Conflict), "no deadlock");
        assert_eq!(outcome["prompts"], serde_json::json!([]), "not asked for");
        let (code, message) = host
            .turn_call
            .take()
            .expect("the callback stepped the turn");
        assert_eq!(code, rp_result::Conflict, "no deadlock");
        assert!(
            message.contains("running a turn on this thread"),
            "{message}"
        );
        assert_eq!(free(open), rp_result::Ok);
        // After the call, the engine is free again and the sink is dead.
        assert_eq!(outcome["seq"], head(t.engine));
        let with_prompts = run_turn(
            &t,
            &say(&t, "Tobias?", 6_000),
            Some(r#"{"outcome_prompts": true}"#),
            &mut host,
        )
        .expect("runs");
        let prompts = with_prompts["prompts"].as_array().expect("prompts");
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0]["messages"], host.requests[1]["messages"]);
        // SAFETY: a dead sink is answered safely.
        let result = unsafe {
            rp_token_sink_emit(
                std::ptr::without_provenance_mut(host.kept_sink),
                c"x".as_ptr(),
                1,
            )
        };
        assert_eq!(result, rp_result::InvalidHandle);
    }

    #[test]
    fn a_failing_callback_abandons_the_turn_but_keeps_the_input() {
        let t = tavern();
        let mut host = Host {
            engine: t.engine.addr(),
            fail: true,
            ..Host::default()
        };
        let before = head(t.engine);
        assert_eq!(
            run_turn(&t, &say(&t, "Tobias, a word?", 5_000), None, &mut host),
            Err(rp_result::Generation)
        );
        assert_eq!(
            last_error(),
            "generation failed: the generate callback failed (code 16): the model server is down"
        );
        assert_eq!(
            head(t.engine),
            before + 3,
            "the clock, the booth's new scene and the line only"
        );

        // Semantic turns are the poll form's: refused before anything is committed.
        assert_eq!(
            run_turn(
                &t,
                &say(&t, "Tobias?", 6_000),
                Some(r#"{"semantic": true}"#),
                &mut host
            ),
            Err(rp_result::Invalid)
        );
        assert_eq!(head(t.engine), before + 3);
        let mut json = ptr::null_mut();
        let input = say(&t, "x", 7_000);
        // SAFETY: a NULL generate callback is refused.
        let result = unsafe {
            rp_engine_run_turn(
                t.engine,
                input.as_ptr().cast(),
                input.len(),
                ptr::null(),
                0,
                None,
                None,
                ptr::null_mut(),
                &mut json,
            )
        };
        assert_eq!(result, rp_result::NullArgument);
        assert_eq!(last_error(), "`generate` is NULL");
    }
}
