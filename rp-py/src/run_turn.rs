//! `World.run_turn`: a whole turn driven from Rust with the host's Python
//! callables.
//!
//! The turn is rp-core's `TurnMachine` (the poll form of [`crate::turn`]),
//! stepped here: each call on the machine takes the World's lock with the
//! GIL released, as every call on a World does, and the host's callables run
//! between those calls, with the GIL and without the World's lock (so a
//! callable may read the world, and other threads' calls may come between
//! the steps, as with a `Turn`). A turn whose one responder answers at once
//! takes the lock twice: to begin and ask, then to provide and finish. A
//! generation crosses into Python once: the request becomes a dict,
//! `generate` is called, and its result comes back as rp-core's
//! `GenerateResult`. The values reach Python straight from rp-core's types
//! ([`json::serialize`]).
//!
//! What the callables may return, and what their errors do, is what
//! `rp_engine/_turn.py` documents for the async driver (which stays in
//! Python to await on the caller's event loop):
//!
//! - `generate` returns the text (`str`), a result mapping (`{"text":
//!   ...}`, see `Turn.provide`), or an iterable of `str` chunks;
//!   `on_token(purpose, text)` sees a whole text once (not at all when it is
//!   empty) and each chunk as it comes; an awaitable or an async iterable is
//!   refused with `TypeError` (they are `World.aturn`'s);
//! - `embed(texts)` returns one vector per text;
//! - `on_action(call)` returns what the game did (`None` is recorded as
//!   `{}`), or raises `ActionRefused` to refuse;
//! - an exception (an `Exception`) raised by `generate`, `embed` or
//!   `on_action`, when called or while a stream is read, abandons the turn
//!   and becomes a `GenerationError` whose `__cause__` is that exception;
//!   anything else (`on_token`'s exceptions, a `TypeError` for a result of
//!   the wrong type, `KeyboardInterrupt`) abandons the turn and propagates
//!   as it is. Either way the input stays committed.

use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyType};
use rp_core::Engine;
use rp_core::turn::{GenerateRequest, GenerateResult, Step, TurnMachine, TurnOutcome};
use rp_core::update::ActionCall;

use crate::errors::{ActionRefused, GenerationError, InvalidInput};
use crate::json;
use crate::turn::{generate_result, outcome_to_py, turn_input, turn_options};
use crate::world::World;

/// The host's callables of one turn (or of a job: `generate` alone).
pub(crate) struct Host<'py> {
    generate: Bound<'py, PyAny>,
    on_token: Option<Bound<'py, PyAny>>,
    embed: Option<Bound<'py, PyAny>>,
    on_action: Option<Bound<'py, PyAny>>,
    /// What async callables should use instead, named in the errors that
    /// refuse them.
    async_form: &'static str,
}

/// The async form of a turn, named when a sync driver refuses an awaitable.
const TURN_ASYNC_FORM: &str = "World.aturn (run_turn_async)";

/// `World.run_turn`: begins the turn (committing the input), answers each
/// step with the host's callables and finishes it; returns the outcome dict.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_turn<'py>(
    world: &Bound<'py, World>,
    speaker: u64,
    text: String,
    now: i64,
    generate: Bound<'py, PyAny>,
    on_token: Option<Bound<'py, PyAny>>,
    embed: Option<Bound<'py, PyAny>>,
    on_action: Option<Bound<'py, PyAny>>,
    witnesses: Option<Vec<u64>>,
    options: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = world.py();
    // A semantic turn without `embed` is refused before anything is committed.
    if embed.is_none()
        && let Some(options) = &options
        && let Some(semantic) = options.get_item("semantic")?
        && semantic.is_truthy()?
    {
        return Err(InvalidInput::new_err(
            "options turn on \"semantic\", which needs an embed callable",
        ));
    }
    let options = turn_options(py, options.as_ref())?;
    let input = turn_input(speaker, text, now, witnesses);
    let host = Host {
        generate,
        on_token,
        embed,
        on_action,
        async_form: TURN_ASYNC_FORM,
    };
    drive(py, world.get(), &host, move |engine| {
        TurnMachine::begin(engine, input, options)
    })
}

/// Drives the turn machine `begin` makes through `host`'s callables and returns its outcome
/// (a turn, or a state-update pass asked for again: `World.choose`).
pub(crate) fn drive<'py>(
    py: Python<'py>,
    world: &World,
    host: &Host<'py>,
    begin: impl FnOnce(&mut Engine) -> Result<TurnMachine, rp_core::Error> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    // Each call on the machine takes the World's lock with the GIL released
    // and goes as far as it can: it answers the last step, asks for the next
    // one and finishes the turn when nothing is left. The callables run
    // between those calls, without the lock.
    let mut progress = world.with_engine(py, |engine| {
        let machine = Box::new(begin(engine)?);
        advance(engine, machine)
    })?;
    // Returning early drops the machine: the turn is abandoned, and only its
    // input stays.
    loop {
        let (mut machine, need) = match progress {
            Progress::Next(machine, need) => (machine, need),
            Progress::Done(outcome) => return outcome_to_py(py, outcome),
        };
        progress = match need {
            Need::Generation(request) => {
                let result = host.generation(py, &request)?;
                world.with_engine(py, move |engine| {
                    machine.provide(engine, result)?;
                    advance(engine, machine)
                })?
            }
            Need::Vectors(texts) => {
                let vectors = host.vectors(py, &texts)?;
                world.with_engine(py, move |engine| {
                    machine.provide_embeddings(engine, vectors)?;
                    advance(engine, machine)
                })?
            }
            Need::Action(call) => {
                let answer = host.act(py, &call)?;
                world.with_engine(py, move |engine| {
                    machine.provide_action(engine, answer)?;
                    advance(engine, machine)
                })?
            }
        };
    }
}

/// What the turn needs from the host next.
enum Need {
    Generation(GenerateRequest),
    Vectors(Vec<String>),
    Action(ActionCall),
}

/// Where a turn stands after a call on its machine.
enum Progress {
    /// It needs the host.
    Next(Box<TurnMachine>, Need),
    /// It is committed.
    Done(TurnOutcome),
}

/// Asks `machine` for its next step, and finishes the turn when there is
/// none left.
fn advance(engine: &mut Engine, mut machine: Box<TurnMachine>) -> Result<Progress, rp_core::Error> {
    Ok(match machine.step(engine)? {
        Step::Generate(request) => Progress::Next(machine, Need::Generation(request)),
        Step::Embed(request) => Progress::Next(machine, Need::Vectors(request.texts)),
        Step::Act(call) => Progress::Next(machine, Need::Action(call)),
        Step::Done => Progress::Done(machine.finish(engine)?),
    })
}

impl<'py> Host<'py> {
    /// Only a `generate` callable, for a job driven in one call; `async_form`
    /// is what async callables should use instead.
    pub(crate) fn generator(generate: Bound<'py, PyAny>, async_form: &'static str) -> Self {
        Host {
            generate,
            on_token: None,
            embed: None,
            on_action: None,
            async_form,
        }
    }

    /// Calls `generate` for `request` and reads what it returns, streaming
    /// its text to `on_token`.
    pub(crate) fn generation(
        &self,
        py: Python<'py>,
        request: &GenerateRequest,
    ) -> PyResult<GenerateResult> {
        let request = crate::request::request(py, request)?.into_any();
        // The purpose `on_token` sees is the request's own dict.
        let purpose = request.get_item("purpose")?;
        let result = self
            .generate
            .call1((request,))
            .map_err(|error| failed(py, "generate", error))?;
        // The common answers first: a str, a dict.
        if result.is_exact_instance_of::<PyString>() {
            return self.whole_text(py, &purpose, result);
        }
        if result.is_exact_instance_of::<PyDict>() {
            return self.whole_result(py, &purpose, &result);
        }
        refuse_awaitable(py, &result, "generate", self.async_form)?;
        if result.is_instance(abc(py, &ASYNC_ITERABLE, "AsyncIterable")?)? {
            return Err(PyTypeError::new_err(format!(
                "generate returned an async iterable; use {} for async callables",
                self.async_form
            )));
        }
        if result.is_instance_of::<PyString>() {
            return self.whole_text(py, &purpose, result);
        }
        if result.is_instance(abc(py, &MAPPING, "Mapping")?)? {
            return self.whole_result(py, &purpose, &result);
        }
        self.stream(py, &purpose, &result)
    }

    /// A text given whole: `on_token` sees it once, unless it is empty.
    fn whole_text(
        &self,
        py: Python<'py>,
        purpose: &Bound<'py, PyAny>,
        text: Bound<'py, PyAny>,
    ) -> PyResult<GenerateResult> {
        let text = text.cast_into::<PyString>()?;
        if text.len()? > 0 {
            self.token(py, purpose, text.as_any())?;
        }
        Ok(GenerateResult::text(text.to_cow()?))
    }

    /// A result mapping, read as a plain dict (copied first, as `dict()`
    /// does): `on_token` sees its `"text"` once, unless it is empty or not a
    /// `str`.
    fn whole_result(
        &self,
        py: Python<'py>,
        purpose: &Bound<'py, PyAny>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<GenerateResult> {
        let whole = match result.cast::<PyDict>() {
            Ok(dict) if result.is_exact_instance_of::<PyDict>() => dict.copy()?,
            _ => py
                .get_type::<PyDict>()
                .call1((result,))?
                .cast_into::<PyDict>()?,
        };
        if let Some(text) = whole.get_item("text")?
            && let Ok(text) = text.cast::<PyString>()
            && text.len()? > 0
        {
            self.token(py, purpose, text.as_any())?;
        }
        generate_result(py, whole.as_any())
    }

    /// A stream of `str` chunks: each goes to `on_token` as it arrives, and
    /// the text is their concatenation. The iterator is closed afterwards,
    /// also when the turn is abandoned midway.
    fn stream(
        &self,
        py: Python<'py>,
        purpose: &Bound<'py, PyAny>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<GenerateResult> {
        if !result.is_instance(abc(py, &ITERABLE, "Iterable")?)? {
            return Err(PyTypeError::new_err(format!(
                "generate must return the text (str), a result dict or an iterable of str \
                 chunks, not {}",
                result.get_type().name()?
            )));
        }
        let chunks = result.try_iter()?;
        let mut text = String::new();
        let read = (|| {
            for chunk in chunks.clone() {
                let chunk = chunk.map_err(|error| failed(py, "generate", error))?;
                let Ok(chunk) = chunk.cast::<PyString>() else {
                    return Err(PyTypeError::new_err(format!(
                        "generate streamed a {}; chunks must be str",
                        chunk.get_type().name()?
                    )));
                };
                text.push_str(&chunk.to_cow()?);
                self.token(py, purpose, chunk.as_any())?;
            }
            Ok(())
        })();
        let close = chunks.getattr_opt("close").and_then(|close| match close {
            Some(close) if close.is_callable() => close.call0().map(drop),
            _ => Ok(()),
        });
        match (read, close) {
            (read, Err(close)) => {
                // As in Python: the failure to close wins, the first one
                // is its context.
                if let Err(read) = read {
                    close.set_context(py, Some(read));
                }
                Err(close)
            }
            (Err(read), Ok(())) => Err(read),
            (Ok(()), Ok(())) => Ok(GenerateResult::text(text)),
        }
    }

    /// Hands a piece of text to `on_token`, if there is one.
    fn token(
        &self,
        py: Python<'py>,
        purpose: &Bound<'py, PyAny>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if let Some(on_token) = &self.on_token {
            let done = on_token.call1((purpose, text))?;
            if !done.is_none() {
                refuse_awaitable(py, &done, "on_token", self.async_form)?;
            }
        }
        Ok(())
    }

    /// Calls `embed` for `texts`: one vector per text.
    fn vectors(&self, py: Python<'py>, texts: &[String]) -> PyResult<Vec<Vec<f32>>> {
        let Some(embed) = &self.embed else {
            return Err(GenerationError::new_err(
                "the turn asks for vectors and no embed callable was given",
            ));
        };
        let vectors = embed
            .call1((PyList::new(py, texts)?,))
            .map_err(|error| failed(py, "embed", error))?;
        refuse_awaitable(py, &vectors, "embed", self.async_form)?;
        vectors.extract()
    }

    /// Calls `on_action` for `call`: what the game did, or why it refused.
    fn act(
        &self,
        py: Python<'py>,
        call: &ActionCall,
    ) -> PyResult<Result<serde_json::Value, String>> {
        let Some(on_action) = &self.on_action else {
            return Ok(Err(format!(
                "no on_action callable was given to run the turn, so the action \"{}\" was not \
                 carried out",
                call.name
            )));
        };
        let answer = match on_action.call1((json::serialize(py, call)?,)) {
            Ok(answer) => answer,
            Err(refusal) if refusal.is_instance_of::<ActionRefused>(py) => {
                return Ok(Err(refusal.value(py).str()?.to_cow()?.into_owned()));
            }
            Err(error) => return Err(failed(py, "on_action", error)),
        };
        if answer.is_none() {
            return Ok(Ok(serde_json::Value::Object(serde_json::Map::new())));
        }
        refuse_awaitable(py, &answer, "on_action", self.async_form)?;
        Ok(Ok(json::py_to_json(&answer)?))
    }
}

/// The error of a callable that raised: an `Exception` becomes a
/// `GenerationError` raised from it (its `__cause__`, with its traceback);
/// anything else (`KeyboardInterrupt`, `SystemExit`) stays as it is.
fn failed(py: Python<'_>, name: &str, error: PyErr) -> PyErr {
    if !error.is_instance_of::<PyException>(py) {
        return error;
    }
    let value = error.value(py);
    let kind = match value.get_type().name() {
        Ok(kind) => kind.to_string(),
        Err(error) => return error,
    };
    let message = match value.str() {
        Ok(message) => message.to_string(),
        Err(error) => return error,
    };
    let failure = GenerationError::new_err(format!("{name} raised {kind}: {message}"));
    // As `raise GenerationError(...) from error` inside `except`.
    failure.set_context(py, Some(error.clone_ref(py)));
    failure.set_cause(py, Some(error));
    failure
}

/// A sync driver cannot await: an awaitable is refused (a coroutine is
/// closed first, so that it does not warn about never being awaited).
fn refuse_awaitable(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    name: &str,
    async_form: &str,
) -> PyResult<()> {
    static IS_AWAITABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static IS_COROUTINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let awaitable = IS_AWAITABLE
        .import(py, "inspect", "isawaitable")?
        .call1((value,))?
        .is_truthy()?;
    if !awaitable {
        return Ok(());
    }
    if IS_COROUTINE
        .import(py, "inspect", "iscoroutine")?
        .call1((value,))?
        .is_truthy()?
    {
        value.call_method0("close")?;
    }
    Err(PyTypeError::new_err(format!(
        "{name} returned an awaitable; use {async_form} for async callables"
    )))
}

static ASYNC_ITERABLE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static MAPPING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static ITERABLE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The abstract base class `collections.abc.<name>`, imported once.
fn abc<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyAny>> {
    cell.import(py, "collections.abc", name)
        .map(|abc| abc.as_any())
}
