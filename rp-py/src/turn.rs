//! The turn from Python (docs/turn.md): `Turn`, the sans-IO machine of
//! `rp_core::turn` in its poll form, and `ScriptedGenerator`, a model
//! stand-in for trying turns without one.
//!
//! `World.begin_turn` commits the input and returns a `Turn`; the host then
//! asks `step()` what is needed, answers with `provide()`,
//! `provide_embeddings()` or `provide_action()`, and commits with
//! `finish()`. The structured values
//! (steps, results, options, outcomes, prompts) cross as the JSON rp-core
//! reads and writes, seen from Python as dicts.
//!
//! `World.run_turn` drives the same machine from Rust (see
//! [`crate::run_turn`]). `World.run_turn_async` (and `aturn`, and
//! `stream_turn`) drive this poll form with Python callables and are written
//! in Python (`rp_engine/_turn.py`, found through [`driver`]), so an async
//! generator is awaited on the caller's own event loop, a notebook's
//! included.

use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use rp_core::turn::{
    GenerateRequest, GenerateResult, Purpose, Step, TurnInput, TurnMachine, TurnOptions,
    TurnOutcome,
};
use rp_core::{Engine, EntityId};

use crate::json;
use crate::world::World;

/// A turn in progress: a player's line, the characters who heard it
/// deciding whether to answer, and their replies as the host's model writes
/// them. Begun by ``World.begin_turn``, which has already committed the
/// input.
///
/// Call ``step()`` until it returns ``{"step": "done"}``: a ``"generate"``
/// step is a request for the host's model (answer it with ``provide()``), an
/// ``"embed"`` step asks for vectors (``provide_embeddings()``), an ``"act"``
/// step for a host action (``provide_action()``). Then
/// ``finish()`` commits the replies, decisions and memories in one
/// transaction. ``abandon()`` drops the turn instead (the input stays). After
/// either, every call but the properties raises ``Conflict``.
///
/// Calls release the GIL while the engine works. The turn refuses to go on
/// (``Conflict``) when its world changed since it began.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct Turn {
    world: Py<World>,
    /// `None` once finished or abandoned.
    machine: Mutex<Option<TurnMachine>>,
    speaker: u64,
    input: Option<u64>,
    /// The response decisions (JSON), made when the turn began.
    decisions: serde_json::Value,
    responders: Vec<u64>,
}

/// The error of a call on a turn that is over.
fn over() -> rp_core::Error {
    rp_core::Error::Conflict {
        reason: "the turn is over (finished or abandoned); begin a new turn".into(),
    }
}

/// Turn options from an optional dict (the default options when `None`),
/// read by rp-core (`TurnOptions::from_json`: every field optional, unknown
/// ones refused, `"outcome_prompts"` among them).
pub(crate) fn turn_options(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<TurnOptions> {
    let Some(dict) = options else {
        return Ok(TurnOptions::default());
    };
    json::from_dict(py, "turn options", dict)
}

/// The input of a turn: `speaker` says `text` at `now`, heard by
/// `witnesses` (by positions when `None`).
pub(crate) fn turn_input(
    speaker: u64,
    text: String,
    now: i64,
    witnesses: Option<Vec<u64>>,
) -> TurnInput {
    TurnInput {
        speaker: EntityId(speaker),
        text,
        now,
        witnesses: witnesses.map(|ids| ids.into_iter().map(EntityId).collect()),
    }
}

/// A finished turn's outcome dict (its `"prompts"` are there when the
/// turn's options asked for them).
pub(crate) fn outcome_to_py(py: Python<'_>, outcome: TurnOutcome) -> PyResult<Bound<'_, PyAny>> {
    json::serialize(py, &outcome)
}

/// A generation's result from Python, as `Turn.provide` takes it: the text
/// (`str`), or a result dict, read strictly (a misspelt field is an error,
/// not a silent empty reply).
pub(crate) fn generate_result(
    py: Python<'_>,
    result: &Bound<'_, PyAny>,
) -> PyResult<GenerateResult> {
    if let Ok(text) = result.cast::<PyString>() {
        Ok(GenerateResult::text(text.to_cow()?))
    } else if let Ok(dict) = result.cast::<PyDict>() {
        GenerateResult::from_json_value(json::py_to_json(dict.as_any())?)
            .map_err(|e| crate::errors::to_py_err(py, e))
    } else {
        Err(PyTypeError::new_err(format!(
            "provide() takes the generated text (str) or a result dict such as \
             {{\"text\": ...}}, not {}",
            result.get_type().name()?
        )))
    }
}

/// The host's answer to a host action, as `provide_action` takes it: what
/// the game did (`answer`), or why it did not (`refusal`); exactly one.
pub(crate) fn action_answer(
    answer: Option<&Bound<'_, PyAny>>,
    refusal: Option<String>,
) -> PyResult<Result<serde_json::Value, String>> {
    match (answer, refusal) {
        (Some(answer), None) => Ok(Ok(json::py_to_json(answer)?)),
        (None, Some(reason)) => Ok(Err(reason)),
        (Some(_), Some(_)) => Err(PyTypeError::new_err(
            "provide_action() takes an answer or a refusal, not both",
        )),
        (None, None) => Err(PyTypeError::new_err(
            "provide_action() needs an answer (what the game did; {} for nothing to say) or \
             refusal= (why it did not)",
        )),
    }
}

/// `World.begin_turn`: commits the input and decides who answers.
pub(crate) fn begin(
    world: &Bound<'_, World>,
    speaker: u64,
    text: String,
    now: i64,
    witnesses: Option<Vec<u64>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Turn> {
    let py = world.py();
    let options = turn_options(py, options)?;
    let input = turn_input(speaker, text, now, witnesses);
    let machine = world
        .get()
        .with_engine(py, |engine| TurnMachine::begin(engine, input, options))?;
    let decisions = serde_json::to_value(machine.decisions())
        .map_err(|error| pyo3::exceptions::PyRuntimeError::new_err(error.to_string()))?;
    Ok(Turn {
        world: world.clone().unbind(),
        speaker,
        input: machine.input_utterance().map(|id| id.0),
        decisions,
        responders: machine.responders().iter().map(|id| id.0).collect(),
        machine: Mutex::new(Some(machine)),
    })
}

/// `World.inspect_prompt`: the prompt `speaker` would be given, with why
/// each piece is there.
pub(crate) fn inspect_prompt<'py>(
    world: &World,
    py: Python<'py>,
    speaker: u64,
    query: Option<String>,
    now: Option<i64>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = match options {
        Some(dict) => json::from_dict(py, "prompt options", dict)?,
        None => rp_core::turn::PromptOptions::default(),
    };
    let prompt = world.with_engine(py, |engine| {
        let now = now.unwrap_or_else(|| engine.world().now());
        engine.inspect_prompt(EntityId(speaker), query.as_deref(), now, &options)
    })?;
    json::serialize(py, &prompt)
}

/// `World.dialogue`: the recent utterances, oldest first.
pub(crate) fn dialogue<'py>(world: &World, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    let utterances = world.with_engine(py, |engine| {
        Ok(serde_json::to_value(
            engine.world().dialogue().collect::<Vec<_>>(),
        ))
    })?;
    json::to_py(py, utterances)
}

/// The Python driver `rp_engine._turn.<function>` of
/// `World.run_turn_async` (and `aturn`) or `World.stream_turn` (the class
/// `TurnStream`), called with `(world, speaker, text, now, generate)` and
/// [`keywords`].
pub(crate) fn driver<'py>(py: Python<'py>, function: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rp_engine._turn")?.getattr(function)
}

/// The keyword arguments of a driver.
pub(crate) fn keywords<'py>(
    py: Python<'py>,
    on_token: Option<Bound<'py, PyAny>>,
    embed: Option<Bound<'py, PyAny>>,
    on_action: Option<Bound<'py, PyAny>>,
    witnesses: Option<Vec<u64>>,
    options: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("on_token", on_token)?;
    kwargs.set_item("embed", embed)?;
    kwargs.set_item("on_action", on_action)?;
    kwargs.set_item("witnesses", witnesses)?;
    kwargs.set_item("options", options)?;
    Ok(kwargs)
}

impl Turn {
    /// Runs `body` on the machine and its world's engine, with the GIL
    /// released.
    fn with_machine<T: Send>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&mut TurnMachine, &mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        self.world.get().with_machine(py, &self.machine, over, body)
    }
}

#[pymethods]
impl Turn {
    /// What the turn needs next, as a dict with ``"step"``:
    ///
    /// - ``"generate"``: a request for the host's model, with ``"purpose"``
    ///   (``{"kind": "reply", "speaker": id}``), ``"messages"`` (dicts with
    ///   ``"role"`` and ``"content"``, and ``"tool_calls"`` or
    ///   ``"tool_call_id"`` when they carry tool calls or their results),
    ///   ``"params"`` (sampling), and ``"json_schema"``/``"tools"`` when
    ///   there are any; answer it with ``provide()``;
    /// - ``"embed"``: ``"texts"`` that need vectors; answer with
    ///   ``provide_embeddings()``;
    /// - ``"act"``: a host action for the game to carry out, with ``"name"``
    ///   (one of the options' ``"updates"`` ``"actions"``), ``"who"`` (the
    ///   entity id of who does it), ``"arguments"`` (its other fields, a
    ///   dict) and ``"report"`` (its index among the outcome's
    ///   ``"reports"``); answer with ``provide_action()``;
    /// - ``"done"``: nothing more; call ``finish()``.
    ///
    /// Asking again without answering returns the same request.
    ///
    /// When the turn closes scenes (see the ``"scenes"`` options of
    /// ``World.begin_turn``), the first ``"generate"`` steps are their
    /// summaries, of purpose ``{"kind": "summary"}``: one per witness of
    /// each scene, written from that witness's point of view (an empty
    /// summary is refused, see ``World.begin_scene_close``).
    ///
    /// Unless the options say ``"tools": False``, a reply request offers the
    /// engine's tools: ``"tools"`` is a list of ``{"name", "description",
    /// "parameters"}`` (a JSON Schema) for ``"roll_dice"`` (arguments
    /// ``{"notation": "2d6+1"}``) and ``"roll_effects"`` (``{"effects":
    /// [{"chance": 0.3, "desc": "fox ears"}]}``); the tool dicts are made once
    /// and shared by every request (each gets its own list): treat them as
    /// read-only. A result with ``"tool_calls"`` (see ``provide()``) is not
    /// the reply: the engine runs
    /// the calls with the world's seeded generator (recorded with their
    /// draws: replay never rolls again), and the next step is the same
    /// request, its messages ending with an ``"assistant"`` message carrying
    /// the calls and one ``{"role": "tool", "content": <JSON result>,
    /// "tool_call_id": id}`` message per call, in order. ``roll_dice``
    /// answers ``{"notation", "dice", "total"}``, ``roll_effects``
    /// ``{"results": [True, False, ...], "effects": [...]}``, a bad call
    /// (unknown tool, arguments that are not an object, bad notation)
    /// ``{"error": ...}``. After three rounds of calls the request offers no
    /// tools, and the next answer is the reply.
    ///
    /// With the options' ``"updates": {"enabled": True}``, one more
    /// ``"generate"`` step follows the replies: the state-update pass, of
    /// purpose ``{"kind": "state_update"}``, with the ``"json_schema"`` its
    /// answer must match. Answer it with the model's JSON text, such as
    /// ``'{"reports": [{"type": "feeling", "who": "Tobias Reed", "toward":
    /// "Wren", "affinity": "warmer"}]}'``. An answer that cannot be read, or
    /// that holds a report the engine refuses, is asked for once more: a
    /// second ``"state_update"`` step whose messages end with the answer
    /// given and what was wrong with it. Then the valid reports are applied
    /// and every report is recorded (``"reports"`` of ``finish()``).
    ///
    /// When the options declare host actions (``"updates": {"actions":
    /// [{"name": "open_door", "description": ..., "parameters": <a JSON
    /// Schema object of its fields besides "type" and "who">}]}``), each
    /// valid report of one comes back after the pass, in the order
    /// reported, as an ``"act"`` step. A report that does not match its
    /// schema is asked about in the retry like any other, and never comes
    /// back as a step.
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let step = self.with_machine(py, |machine, engine| machine.step(engine))?;
        crate::request::step(py, &step)
    }

    /// Answers the last ``"generate"`` step: the generated text (``str``),
    /// or a dict with ``"text"`` and optionally ``"tool_calls"``,
    /// ``"prompt_tokens"``, ``"completion_tokens"`` and ``"model"``, recorded
    /// as given. The text becomes the responder's line (trimmed, without an
    /// echoed ``"Name:"``); an empty text means it stays silent.
    ///
    /// ``"tool_calls"`` answers a request that offered ``"tools"``: a list
    /// of ``{"id": "a", "name": "roll_dice", "arguments": {"notation":
    /// "2d6+1"}}``, the arguments a dict or a JSON text holding one. The
    /// calls are run and ``step()`` asks again with their results; the text
    /// may be empty. In a request without tools the calls are ignored and
    /// the text is the reply. For the
    /// state-update pass the text is the model's JSON answer; an answer the
    /// engine cannot use raises nothing (it is asked for again, then
    /// recorded as rejected).
    ///
    /// Raises ``Conflict`` when no generation was asked for,
    /// ``InvalidInput`` for a dict that is not a result, ``TypeError`` for
    /// anything but ``str`` or ``dict``.
    fn provide(&self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<()> {
        let result = generate_result(py, result)?;
        self.with_machine(py, |machine, engine| machine.provide(engine, result))
    }

    /// Answers the last ``"embed"`` step: one vector per text, in order, all
    /// of the same length.
    ///
    /// Raises ``Conflict`` when no vectors were asked for, ``InvalidInput``
    /// for the wrong number of vectors, vectors of different lengths, or
    /// values that are not finite.
    fn provide_embeddings(&self, py: Python<'_>, vectors: Vec<Vec<f32>>) -> PyResult<()> {
        self.with_machine(py, |machine, engine| {
            machine.provide_embeddings(engine, vectors)
        })
    }

    /// Answers the last ``"act"`` step: what the game did (``answer``), or
    /// why it did not (``refusal``); give exactly one.
    ///
    /// ``answer`` is any JSON-like value (dict, list, str, int, float,
    /// bool), recorded as the ``"answer"`` of the action's report (replay
    /// never asks again); ``None`` is no answer, so pass ``{}`` when there is
    /// nothing to say. A dict with a ``"system_line"`` str injects that line
    /// for the next prompts (see ``World.inject_system_line``). ``refusal``
    /// is recorded as the report's ``"rejected"`` (cut to 1000 bytes); the
    /// turn goes on either way.
    ///
    /// Raises ``TypeError`` when both or neither are given, or for an answer
    /// that cannot become JSON; ``Conflict`` when no host action was asked
    /// for; ``InvalidInput`` for an answer longer than a recorded text may
    /// be.
    #[pyo3(signature = (answer = None, *, refusal = None))]
    fn provide_action(
        &self,
        py: Python<'_>,
        answer: Option<&Bound<'_, PyAny>>,
        refusal: Option<String>,
    ) -> PyResult<()> {
        let answer = action_answer(answer, refusal)?;
        self.with_machine(py, |machine, engine| machine.provide_action(engine, answer))
    }

    /// Commits the turn (decisions, replies, generations, memories, recalls,
    /// the changes of the state-update pass) in one transaction and returns
    /// what it did, as a dict: ``"seq"`` (the head after the commit),
    /// ``"input"`` (the input's utterance id, or None), ``"decisions"``,
    /// ``"replies"`` (dicts with ``"speaker"``, ``"utterance"`` and
    /// ``"text"``, in the order spoken), ``"silent"``,
    /// ``"closed_scenes"`` (the ids of the scenes the turn closed, each with
    /// a summary memory per witness), ``"wake"``
    /// (``{"entity", "at"}``: when the host should start a wake-up turn),
    /// ``"prompts"`` (each responder's prompt, as ``World.inspect_prompt``
    /// gives it, when the options say ``"outcome_prompts": True``; empty
    /// otherwise) and ``"reports"`` (the
    /// state-update pass, empty without it: dicts with ``"report"``, the
    /// report as the model wrote it, a JSON text, or the whole answer when
    /// it could not be read; ``"rejected"``, None when it was applied, else
    /// why it was refused, and then nothing of it was applied; and
    /// ``"answer"``, the host's answer to a host action, None for a report).
    ///
    /// Raises ``Conflict`` while ``step()`` still asks for something (the
    /// turn goes on), when the world changed since the turn began, or when
    /// the turn is over. A failure to commit (``StorageError``) ends the
    /// turn; its input stays.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let outcome = self.world.get().with_engine(py, |engine| {
            let mut slot = self.machine.lock().unwrap_or_else(PoisonError::into_inner);
            let machine = slot.as_mut().ok_or_else(over)?;
            // Finishing consumes the machine: ask first, so a turn finished
            // too early can go on.
            let needed = match machine.step(engine)? {
                Step::Done => None,
                Step::Generate(_) => Some("a generation"),
                Step::Embed(_) => Some("vectors"),
                Step::Act(_) => Some("a host action's answer"),
            };
            if let Some(needed) = needed {
                return Err(rp_core::Error::Conflict {
                    reason: format!(
                        "the turn still needs {needed} (see step()); provide it before finishing"
                    ),
                });
            }
            slot.take().ok_or_else(over)?.finish(engine)
        })?;
        outcome_to_py(py, outcome)
    }

    /// Drops the turn without committing anything more: the input stays in
    /// the log, the replies provided so far are discarded. Does nothing on a
    /// turn that is already over.
    fn abandon(&self, py: Python<'_>) {
        py.detach(|| {
            let machine = self
                .machine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(machine);
        });
    }

    /// Whether the turn goes on: False once ``finish()`` succeeded or
    /// ``abandon()`` was called.
    #[getter]
    fn active(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            self.machine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
        })
    }

    /// The world the turn runs in.
    #[getter]
    fn world(&self, py: Python<'_>) -> Py<World> {
        self.world.clone_ref(py)
    }

    /// Who spoke (the entity id of the input's speaker).
    #[getter]
    fn speaker(&self) -> u64 {
        self.speaker
    }

    /// The id of the input's utterance, committed when the turn began; None
    /// for a wake-up turn (empty text).
    #[getter]
    fn input(&self) -> Option<u64> {
        self.input
    }

    /// The response decision of every character who heard the input, in the
    /// order made: dicts with ``"entity"``, ``"mentioned"`` and
    /// ``"decision"`` (``"respond"``, ``"retry_ms"``, ``"facts"``,
    /// ``"trace"``, ``"draws"``).
    #[getter]
    fn decisions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::json_to_py(py, &self.decisions)
    }

    /// Who will answer, in order (those mentioned first, then by id).
    #[getter]
    fn responders(&self) -> Vec<u64> {
        self.responders.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.active(py) { "active" } else { "over" };
        format!(
            "<Turn of {}, responders {:?}, {state}>",
            self.speaker, self.responders
        )
    }
}

/// A stand-in for a model, for tests and notebooks: it answers each request
/// with the next line scripted for its speaker (``script``) or its purpose
/// (``script_purpose``), then with ``fallback``; an unscripted state-update
/// pass is answered ``{"reports": []}`` (nothing changed), unscripted
/// summaries of faded memories each memory's first eight words, and an
/// unscripted reflection one insight citing the first three memories listed.
///
/// ``fallback`` may use ``{name}`` (the speaker's name), ``{n}`` (a running
/// count of requests) and ``{heard}`` (the last dialogue line of the prompt).
/// An instance is a ``generate`` callable for ``World.run_turn`` (it returns
/// a result dict), and ``embed`` is an ``embed`` callable: deterministic
/// bag-of-words vectors (64 numbers), so equal texts get equal vectors and
/// shared words raise similarity.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct ScriptedGenerator(rp_core::turn::ScriptedGenerator);

#[pymethods]
impl ScriptedGenerator {
    #[new]
    #[pyo3(signature = (fallback = "{name} nods. ({n})"))]
    fn new(fallback: &str) -> Self {
        ScriptedGenerator(rp_core::turn::ScriptedGenerator::new(fallback))
    }

    /// Queues ``lines`` for the replies of ``speaker`` (an entity id), in
    /// order.
    fn script(&self, speaker: u64, lines: Vec<String>) {
        self.0.script(EntityId(speaker), lines);
    }

    /// Queues ``answers`` for requests of ``purpose``, in order:
    /// ``"state_update"`` (the answers of the state-update pass, JSON texts
    /// such as ``'{"reports": []}'``), ``"summary"``, ``"query"``,
    /// ``"reply"`` (the replies of any speaker, after those ``script``
    /// queued for that speaker), ``"initiate"`` (the first lines of
    /// conversations characters start on their own, whoever speaks; see
    /// ``World.begin_tick``), ``"reflect"`` (a character's reflection, a
    /// JSON text such as ``'{"insights": []}'``, whoever reflects) or
    /// ``"classify"`` (the tone of an answer to an initiation, a JSON text
    /// such as ``'{"sentiment": "negative"}'``, or what a stimulus means,
    /// whoever asks) or ``"think"`` (a character thinking a stimulus over,
    /// a JSON text such as ``'{"thought": "..."}'``). Raises
    /// ``InvalidInput`` for another purpose.
    fn script_purpose(&self, py: Python<'_>, purpose: &str, answers: Vec<String>) -> PyResult<()> {
        // Replies and initiations are scripted by purpose whoever speaks.
        let purpose =
            Purpose::from_name(purpose).map_err(|error| crate::errors::to_py_err(py, error))?;
        self.0.script_purpose(&purpose, answers);
        Ok(())
    }

    /// Answers ``request`` (a ``"generate"`` step, or the request a
    /// ``generate`` callable receives) with a result dict: ``"text"``,
    /// ``"prompt_tokens"``, ``"completion_tokens"`` and ``"model"``
    /// (``"scripted"``). Raises ``InvalidInput`` for a dict that is not a
    /// request.
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request: GenerateRequest = json::from_dict(py, "generate request", request)?;
        let result = self.0.answer(&request);
        json::serialize(py, &result)
    }

    /// Every request answered so far, in order, as dicts.
    #[getter]
    fn requests<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::serialize(py, &self.0.requests())
    }

    /// One deterministic vector per text, in order.
    fn embed(&self, texts: Vec<String>) -> Vec<Vec<f32>> {
        self.0.vectors(&texts)
    }

    fn __repr__(&self) -> String {
        format!(
            "<ScriptedGenerator, {} requests answered>",
            self.0.requests().len()
        )
    }
}
