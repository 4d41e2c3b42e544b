//! The turn on `World`: response control (`decide()`), the turn in its
//! poll form (`begin_turn()`), driven from Rust (`run_turn()`) or on
//! asyncio (`run_turn_async()`, `aturn()`, `stream_turn()`), the prompt a
//! character would be given (`inspect_prompt()`), the dialogue window, and
//! system lines. The turn itself is in [`crate::turn`] and
//! [`crate::run_turn`].

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::{EntityId, Message};

use super::World;
use crate::decision::Decision;
use crate::turn::Turn;

#[pymethods]
impl World {
    /// Decides whether ``entity`` responds to a message (response control):
    /// evaluates its fact sheet with the world's seeded random generator and
    /// records the decision in the log.
    ///
    /// ``mentioned=None`` lets rp look for the entity's name and aliases in
    /// ``content``; ``response_ms=None`` means it never responded;
    /// ``hour=None`` takes the hour from the world clock.
    ///
    /// Raises ``NotFound`` (no such entity), ``StorageError``.
    #[pyo3(signature = (
        entity,
        *,
        content = "",
        author = "",
        mentioned = None,
        response_ms = None,
        retry_ms = 0.0,
        unread_count = 0,
        interaction_type = None,
        hour = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        py: Python<'_>,
        entity: u64,
        content: &str,
        author: &str,
        mentioned: Option<bool>,
        response_ms: Option<f64>,
        retry_ms: f64,
        unread_count: u32,
        interaction_type: Option<String>,
        hour: Option<f64>,
    ) -> PyResult<Decision> {
        let message = Message {
            content: content.to_owned(),
            author: author.to_owned(),
            mentioned,
            response_ms,
            retry_ms,
            unread_count,
            interaction_type,
            hour,
            ..Message::default()
        };
        self.with_engine(py, |engine| engine.decide(EntityId(entity), &message))
            .map(Decision)
    }

    /// Starts a turn: ``speaker`` (a host-controlled entity, the player) says
    /// ``text`` at ``now`` (host clock, ms; an empty text is a wake-up turn,
    /// in which the characters present reconsider the last line each heard).
    ///
    /// The input is committed here, with the clock advanced to ``now``, and
    /// every character who heard it decides whether to answer. Drive the
    /// returned ``Turn`` with ``step()``/``provide()``, then ``finish()``.
    /// ``witnesses`` (entity ids) overrides who hears the input, which is
    /// otherwise computed from positions. ``options`` is a dict of turn
    /// options (every key optional, unknown keys refused): ``"prompt"``
    /// (``budget_tokens``, ``memories_k``, ``dialogue_lines``,
    /// ``lore_lines``, ``lore_budget_tokens``, ``template``, ``recall``),
    /// ``"sampling"``, ``"remember_dialogue"``, ``"dialogue_significance"``,
    /// ``"semantic"`` (then the turn asks for vectors),
    /// ``"max_responders"``, ``"scenes"`` (scene options, see
    /// ``begin_scene_close``: the line joins the current scene of the
    /// speaker's container, one is opened if there is none, and the due
    /// scenes of that container and of those who hear it close first, each
    /// asking for a summary per witness, see ``Turn.step``),
    /// ``"outcome_prompts"`` (default False; True:
    /// the outcome's ``"prompts"`` holds each responder's prompt, see
    /// ``Turn.finish``), ``"tools"`` (default True: replies are offered
    /// the engine's dice tools, see ``Turn.step``; False: none) and
    /// ``"updates"``: ``{"enabled": True}`` runs
    /// the state-update pass after the replies (see ``Turn.step``), with
    /// ``"step"`` (how far one warmer/colder or more/less moves affinity or
    /// trust, in (0, 1], default 0.1), ``"sampling"`` (of the pass,
    /// default ``{"temperature": 0.2}``) and ``"actions"``: the host's own
    /// report types, ``[{"name": "open_door", "description": ..., "parameters":
    /// <JSON Schema object>}]``, whose valid reports come back as ``"act"``
    /// steps (see ``Turn.step``).
    ///
    /// Raises ``NotFound`` (speaker or witness), ``InvalidInput`` (a speaker
    /// the engine controls, ``now`` before the world's clock, bad options),
    /// ``StorageError``.
    #[pyo3(signature = (speaker, text, now, *, witnesses = None, options = None))]
    fn begin_turn(
        slf: &Bound<'_, Self>,
        speaker: u64,
        text: String,
        now: i64,
        witnesses: Option<Vec<u64>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Turn> {
        crate::turn::begin(slf, speaker, text, now, witnesses, options)
    }

    /// Runs a whole turn (``begin_turn``, every step, ``finish``) with the
    /// host's model behind ``generate`` and returns the outcome dict of
    /// ``Turn.finish``.
    ///
    /// ``generate(request)`` receives each request as a dict (``"purpose"``,
    /// ``"messages"``, ``"params"``, ...) and returns the text (``str``), a
    /// result dict (``{"text": ...}``, see ``Turn.provide``), or an
    /// iterable of ``str`` chunks (a generator that streams), which are
    /// joined. A request that offers ``"tools"`` may be answered with a
    /// result dict holding ``"tool_calls"``: the engine runs them and calls
    /// ``generate`` again with the request extended by their results (see
    /// ``Turn.step``). With ``"updates"`` in the options it also answers the
    /// state-update pass (purpose ``{"kind": "state_update"}``, see
    /// ``Turn.step``), after the replies. ``on_token(purpose, text)`` sees
    /// the text as it comes: each chunk of a streaming ``generate``, else
    /// the whole text at once.
    /// ``embed(texts)`` returns one vector per text; it is needed when
    /// ``options`` turn on ``"semantic"``.
    ///
    /// ``on_action(call)`` carries out the host actions the options declare
    /// (``"updates": {"actions": [...]}``, see ``Turn.step``): it receives
    /// each as a dict (``"name"``, ``"who"``, ``"arguments"``, ``"report"``)
    /// after the state-update pass and returns what the game did (any
    /// JSON-like value, recorded as the report's ``"answer"``; ``None``
    /// records ``{}``; a dict with a ``"system_line"`` injects that line), or
    /// raises ``ActionRefused(reason)`` to refuse (recorded as the report's
    /// ``"rejected"``; the turn goes on). Without ``on_action`` every action
    /// is refused, with a reason saying so.
    ///
    /// When ``generate``, ``embed`` or ``on_action`` raises (other than
    /// ``ActionRefused``), the turn is abandoned (its input stays
    /// committed) and ``GenerationError`` is raised from the callable's
    /// exception. Other exceptions, ``on_token``'s included, abandon the
    /// turn and propagate as they are.
    #[pyo3(signature = (speaker, text, now, generate, *, on_token = None, embed = None, on_action = None, witnesses = None, options = None))]
    #[allow(clippy::too_many_arguments)]
    fn run_turn<'py>(
        slf: &Bound<'py, Self>,
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
        crate::run_turn::run_turn(
            slf, speaker, text, now, generate, on_token, embed, on_action, witnesses, options,
        )
    }

    /// ``run_turn`` for asyncio: returns a coroutine that runs the turn on
    /// the running event loop (a notebook's included). ``generate``,
    /// ``embed``, ``on_action`` and ``on_token`` may be plain or ``async``
    /// functions; a
    /// ``generate`` may also return an async iterable of ``str`` chunks
    /// (an async generator that streams). The engine's own steps are short
    /// and run on the loop's thread. Errors are those of ``run_turn``.
    #[pyo3(signature = (speaker, text, now, generate, *, on_token = None, embed = None, on_action = None, witnesses = None, options = None))]
    #[allow(clippy::too_many_arguments)]
    fn run_turn_async<'py>(
        slf: &Bound<'py, Self>,
        speaker: u64,
        text: &str,
        now: i64,
        generate: Bound<'py, PyAny>,
        on_token: Option<Bound<'py, PyAny>>,
        embed: Option<Bound<'py, PyAny>>,
        on_action: Option<Bound<'py, PyAny>>,
        witnesses: Option<Vec<u64>>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let kwargs = crate::turn::keywords(py, on_token, embed, on_action, witnesses, options)?;
        crate::turn::driver(py, "run_turn_async")?
            .call((slf, speaker, text, now, generate), Some(&kwargs))
    }

    /// The Pythonic name of ``run_turn_async``: ``outcome = await
    /// world.aturn(speaker, text, now, generate)``, where ``generate`` is an
    /// ``async def`` (or a plain function), and may stream (an async
    /// generator of ``str`` chunks). Same arguments, errors and outcome.
    #[pyo3(signature = (speaker, text, now, generate, *, on_token = None, embed = None, on_action = None, witnesses = None, options = None))]
    #[allow(clippy::too_many_arguments)]
    fn aturn<'py>(
        slf: &Bound<'py, Self>,
        speaker: u64,
        text: &str,
        now: i64,
        generate: Bound<'py, PyAny>,
        on_token: Option<Bound<'py, PyAny>>,
        embed: Option<Bound<'py, PyAny>>,
        on_action: Option<Bound<'py, PyAny>>,
        witnesses: Option<Vec<u64>>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::run_turn_async(
            slf, speaker, text, now, generate, on_token, embed, on_action, witnesses, options,
        )
    }

    /// A turn whose text streams as an async iterator: ``async for token
    /// in world.stream_turn(speaker, text, now, generate): ...`` yields a
    /// ``Token`` (``.purpose``, ``.text``, ``.speaker``) for each chunk as
    /// ``generate`` produces it (each chunk of a streaming ``generate``, else
    /// its whole text), then the turn is committed and its outcome is the
    /// stream's ``.outcome``. Arguments, callables (sync or async) and errors
    /// are those of ``run_turn_async``; an error is raised from the ``async
    /// for``. Leaving the loop early abandons the turn (its input stays).
    #[pyo3(signature = (speaker, text, now, generate, *, on_token = None, embed = None, on_action = None, witnesses = None, options = None))]
    #[allow(clippy::too_many_arguments)]
    fn stream_turn<'py>(
        slf: &Bound<'py, Self>,
        speaker: u64,
        text: &str,
        now: i64,
        generate: Bound<'py, PyAny>,
        on_token: Option<Bound<'py, PyAny>>,
        embed: Option<Bound<'py, PyAny>>,
        on_action: Option<Bound<'py, PyAny>>,
        witnesses: Option<Vec<u64>>,
        options: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let kwargs = crate::turn::keywords(py, on_token, embed, on_action, witnesses, options)?;
        crate::turn::driver(py, "TurnStream")?
            .call((slf, speaker, text, now, generate), Some(&kwargs))
    }

    /// The prompt ``speaker`` would be given now, as a dict: ``"messages"``
    /// (what the model would read), ``"pieces"`` (each with ``"section"``,
    /// ``"text"``, ``"why"`` it is there, ``"tokens"``, and ``"memory"``,
    /// ``"entity"`` or ``"score"`` when it has one), ``"trimmed"`` (the
    /// pieces the token budget dropped), ``"tokens"`` and
    /// ``"budget_tokens"``.
    ///
    /// ``query`` is the line the speaker answers, which memories are
    /// recalled for (default: the last line it heard); ``now`` defaults to
    /// the world's clock; ``options`` is a dict of prompt options (the
    /// ``"prompt"`` part of the turn options). Changes nothing.
    ///
    /// Raises ``NotFound`` (speaker) or ``InvalidInput`` (options).
    #[pyo3(signature = (speaker, query = None, now = None, options = None))]
    fn inspect_prompt<'py>(
        &self,
        py: Python<'py>,
        speaker: u64,
        query: Option<String>,
        now: Option<i64>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::turn::inspect_prompt(self, py, speaker, query, now, options)
    }

    /// The recent lines of dialogue (the world's dialogue window), oldest
    /// first, as dicts: ``"id"``, ``"speaker"``, ``"text"``, ``"at"``,
    /// ``"witnesses"`` (who heard it, the speaker included) and ``"model"``
    /// (the model that wrote a character's line, else None).
    fn dialogue<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::turn::dialogue(self, py)
    }

    /// Injects a system line and returns its id: the next prompts of the
    /// characters of ``audience`` (entity ids; None: every character) carry
    /// ``[SYSTEM: text]`` after their newest line of dialogue, never trimmed
    /// for the token budget, until a turn has shown it to one of them as a
    /// responder (then it is gone from ``system_lines()``). Surrounding
    /// whitespace of ``text`` is dropped. Recorded as one event: the head
    /// moves forward.
    ///
    /// Raises ``InvalidInput`` (an empty text, or one over 64 KiB) or
    /// ``NotFound`` (an audience entity); the world is then unchanged.
    #[pyo3(signature = (text, audience = None))]
    fn inject_system_line(
        &self,
        py: Python<'_>,
        text: &str,
        audience: Option<Vec<u64>>,
    ) -> PyResult<u64> {
        let audience = audience.map(|ids| ids.into_iter().map(EntityId).collect());
        self.with_engine(py, |engine| engine.inject_system_line(text, audience))
    }

    /// The system lines no turn has shown yet, oldest first, as dicts:
    /// ``"id"`` (from ``inject_system_line``), ``"text"``, ``"audience"``
    /// (entity ids, or None: every character) and ``"at"`` (the world's
    /// clock when it was injected, ms).
    fn system_lines<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let lines = self.with_engine(py, |engine| {
            Ok(serde_json::to_value(
                engine.world().system_lines().collect::<Vec<_>>(),
            ))
        })?;
        crate::json::to_py(py, lines)
    }
}
