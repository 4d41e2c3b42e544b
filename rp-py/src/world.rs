//! `World`: a world and the save file that keeps its log (rp-core's
//! `Engine`).

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use rp_core::{Engine, EngineOptions, EntityId, Message};

use crate::decision::Decision;
use crate::errors::{RpError, to_py_err};
use crate::turn::Turn;

/// A world and the save file that keeps its event log.
///
/// Create one with ``World.create`` (a new save from a world file),
/// ``World.open`` (an existing save) or ``World.in_memory`` (no file). Use it
/// as a context manager, or call ``close()``, to release the save file; any
/// call after that raises ``RpError``.
///
/// Calls release the GIL while the engine works (storage, replay, decisions),
/// so other Python threads run meanwhile. A World may be shared between
/// threads; calls on it run one at a time.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct World {
    /// `None` once closed.
    engine: Mutex<Option<Engine>>,
}

/// Why a call on a World failed.
enum Failure {
    Core(rp_core::Error),
    Closed,
    /// An earlier call panicked while holding the engine.
    Poisoned,
}

impl From<rp_core::Error> for Failure {
    fn from(error: rp_core::Error) -> Self {
        Failure::Core(error)
    }
}

fn to_py(py: Python<'_>, failure: Failure) -> PyErr {
    match failure {
        Failure::Core(error) => to_py_err(py, error),
        Failure::Closed => RpError::new_err("the World is closed"),
        Failure::Poisoned => RpError::new_err(
            "the World is unusable: an earlier call on it panicked (a bug in rp); close it",
        ),
    }
}

impl World {
    fn new(engine: Engine) -> Self {
        Self {
            engine: Mutex::new(Some(engine)),
        }
    }

    /// Runs `body` on the engine with the GIL released.
    pub(crate) fn with_engine<T: Send>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut engine = self.engine.lock().map_err(|_| Failure::Poisoned)?;
            let engine = engine.as_mut().ok_or(Failure::Closed)?;
            Ok(body(engine)?)
        })
        .map_err(|failure| to_py(py, failure))
    }
}

/// Runs `open` (which creates or opens an engine) with the GIL released.
fn open_with(
    py: Python<'_>,
    open: impl FnOnce() -> Result<Engine, rp_core::Error> + Send,
) -> PyResult<World> {
    py.detach(open)
        .map(World::new)
        .map_err(|error| to_py_err(py, error))
}

#[pymethods]
impl World {
    /// Creates a save file at ``path`` holding the world described by the
    /// world file (TOML) at ``world_file``. ``now`` is the host's clock in
    /// milliseconds, used when the world file gives none.
    ///
    /// Raises ``Conflict`` when ``path`` exists, ``WorldFileError`` when the
    /// world file has an error (then nothing is written), ``StorageError``.
    #[classmethod]
    #[pyo3(signature = (path, world_file, now = 0))]
    fn create(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        world_file: PathBuf,
        now: i64,
    ) -> PyResult<World> {
        open_with(py, || {
            Engine::create_from_world_file(path, world_file, now, EngineOptions::default())
        })
    }

    /// Opens the save file at ``path`` on its current branch.
    ///
    /// Raises ``StorageError``, ``NotASave``, ``CorruptSave`` or
    /// ``UnsupportedVersion``.
    #[classmethod]
    fn open(_cls: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf) -> PyResult<World> {
        open_with(py, || Engine::open(path))
    }

    /// A new world named ``name`` in memory, with no save file; ``now`` is
    /// the host's clock in milliseconds at which it begins.
    #[classmethod]
    #[pyo3(signature = (name, now = 0))]
    fn in_memory(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        name: &str,
        now: i64,
    ) -> PyResult<World> {
        open_with(py, || Engine::in_memory(name, now))
    }

    /// Applies a world file given as text (``name`` names it in errors):
    /// a first load creates what it describes, a newer version patches what
    /// changed. Returns the number of events appended (0: nothing changed).
    /// On error the world is unchanged.
    ///
    /// Raises ``WorldFileError``, ``Conflict``, ``StorageError``, ...
    fn apply_world_file(&self, py: Python<'_>, name: &str, text: &str) -> PyResult<usize> {
        self.with_engine(py, |engine| engine.apply_world_file(name, text))
    }

    /// Reads the world file at ``path`` and applies it, as
    /// ``apply_world_file`` does. Returns the number of events appended.
    fn load_world_file(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        self.with_engine(py, |engine| engine.load_world_file(path))
    }

    /// The id of the entity whose world-file key is ``name_or_key``
    /// (exact), or failing that whose name it is (ignoring case).
    ///
    /// Raises ``NotFound``.
    fn entity_id(&self, py: Python<'_>, name_or_key: &str) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            engine
                .world()
                .find_entity(name_or_key)
                .map(|entity| entity.id.0)
                .ok_or_else(|| rp_core::Error::NotFound {
                    what: "entity with key or name",
                    id: format!("{name_or_key:?}"),
                })
        })
    }

    /// The seq of the last event on the current branch.
    #[getter]
    fn head(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_engine(py, |engine| Ok(engine.head()))
    }

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
        };
        self.with_engine(py, |engine| engine.decide(EntityId(entity), &message))
            .map(Decision)
    }

    /// Forms a memory of ``owner`` (its point of view) and returns its id.
    ///
    /// ``witnesses`` are the others who saw it (the owner is always one);
    /// ``kind`` is ``"utterance"``, ``"scene_summary"``, ``"event_gist"`` or
    /// ``"reflection"``; ``significance`` is 0–1; ``created`` defaults to the
    /// world's clock; a ``pinned`` memory is always in the owner's prompt
    /// (``always_loaded``); ``embedding`` is the host's vector for the text
    /// (semantic recall), stored with it. Raises ``NotFound`` (owner or
    /// witness) or
    /// ``InvalidInput`` (empty text, significance outside 0–1, unknown kind);
    /// the world is then unchanged.
    #[pyo3(signature = (owner, text, *, witnesses = None, kind = "utterance", significance = 0.5, created = None, pinned = false, embedding = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_memory(
        &self,
        py: Python<'_>,
        owner: u64,
        text: String,
        witnesses: Option<Vec<u64>>,
        kind: &str,
        significance: f64,
        created: Option<i64>,
        pinned: bool,
        embedding: Option<Vec<f32>>,
    ) -> PyResult<u64> {
        let kind = crate::memory::kind(kind).map_err(|e| to_py_err(py, e))?;
        let memory = rp_core::memory::NewMemory {
            owner: EntityId(owner),
            witnesses: witnesses
                .unwrap_or_default()
                .into_iter()
                .map(EntityId)
                .collect(),
            text,
            kind,
            significance,
            created,
            pinned,
            embedding,
        };
        self.with_engine(py, |engine| engine.add_memory(memory))
            .map(|id| id.0)
    }

    /// The memories always in ``speaker``'s prompt, outside retrieval, as
    /// ids: its pinned memories (oldest first), then its ``recent_scenes``
    /// most recent scene summaries (newest first). Raises ``NotFound``.
    #[pyo3(signature = (speaker, recent_scenes = 3))]
    fn always_loaded(
        &self,
        py: Python<'_>,
        speaker: u64,
        recent_scenes: usize,
    ) -> PyResult<Vec<u64>> {
        self.with_engine(py, |engine| {
            Ok(engine
                .always_loaded(EntityId(speaker), recent_scenes)?
                .into_iter()
                .map(|id| id.0)
                .collect())
        })
    }

    /// Removes a memory. Raises ``NotFound``.
    fn remove_memory(&self, py: Python<'_>, memory: u64) -> PyResult<()> {
        self.with_engine(py, |engine| engine.remove_memory(rp_core::MemoryId(memory)))
            .map(drop)
    }

    /// The memories ``speaker`` recalls for ``query`` at ``now`` (host
    /// clock, ms), best first, as ``Recalled`` items.
    ///
    /// Only the speaker's own memories (what it witnessed) can come back.
    /// ``query`` is text, never query syntax. ``k`` (1–1000) is how many;
    /// ``candidates`` (1–100) how many BM25 candidates per item to rerank;
    /// ``relevance``, ``recency`` and ``significance`` weigh the score;
    /// ``half_life_ms`` is the recency half-life (default: 0.995 per game
    /// hour). With ``query_embedding`` (the host's vector for the query),
    /// memories that have a vector are also found by cosine similarity, and
    /// ``semantic`` (0–1) is the share of relevance it takes from BM25.
    /// Raises ``NotFound`` (speaker) or ``InvalidInput`` (options).
    /// Recalling changes nothing: record it with ``mark_recalled``.
    #[pyo3(signature = (speaker, query, *, now, k = 10, candidates = 8, relevance = 1.0, recency = 1.0, significance = 1.0, half_life_ms = None, query_embedding = None, semantic = 0.5))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        speaker: u64,
        query: &str,
        now: i64,
        k: usize,
        candidates: usize,
        relevance: f64,
        recency: f64,
        significance: f64,
        half_life_ms: Option<f64>,
        query_embedding: Option<Vec<f32>>,
        semantic: f64,
    ) -> PyResult<Vec<crate::memory::Recalled>> {
        let options = crate::memory::options(
            k,
            candidates,
            relevance,
            recency,
            significance,
            half_life_ms,
            query_embedding,
            semantic,
        );
        self.with_engine(py, |engine| {
            crate::memory::recall(engine, speaker, query, now, &options)
        })
    }

    /// Records that ``memories`` were recalled at ``at`` (their last-access
    /// time and access count, which recency reads); returns the new head.
    /// Raises ``NotFound`` (a memory) or ``InvalidInput`` (an id twice).
    fn mark_recalled(&self, py: Python<'_>, memories: Vec<u64>, at: i64) -> PyResult<u64> {
        let ids: Vec<rp_core::MemoryId> = memories.into_iter().map(rp_core::MemoryId).collect();
        self.with_engine(py, |engine| engine.mark_recalled(&ids, at))
    }

    /// The ``k`` entities (1–1000) whose names, aliases or fact lines best
    /// match ``query``, best first, as ``(id, name, score)``. A word of a
    /// name or alias counts three times a word of the facts; ``query`` is
    /// words, never query syntax. The host's view of the whole world, not
    /// what any character knows. Raises ``InvalidInput`` for ``k``.
    #[pyo3(signature = (query, k = 10))]
    fn search_entities(
        &self,
        py: Python<'_>,
        query: &str,
        k: usize,
    ) -> PyResult<Vec<(u64, String, f32)>> {
        self.with_engine(py, |engine| {
            let found = engine.search_entities(query, k)?;
            Ok(found
                .iter()
                .filter_map(|(id, score)| {
                    let e = engine.world().entity(*id)?;
                    Some((id.0, e.name.clone(), *score))
                })
                .collect())
        })
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
    /// ``"max_responders"``, ``"tools"`` (default True: replies are offered
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
        crate::turn::driver(py, "run_turn")?
            .call((slf, speaker, text, now, generate), Some(&kwargs))
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

    /// The current world in world-file form (TOML).
    fn export_world_file(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| Ok(engine.export_world_file()))
    }

    /// Closes the world and its save file. Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        // Dropping an engine closes its file: no GIL needed meanwhile.
        py.detach(|| {
            let engine = self
                .engine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(engine);
        });
    }

    /// Whether ``close()`` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            self.engine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_none()
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the world; exceptions propagate.
    #[pyo3(signature = (_exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Bound<'_, PyAny>>,
        _exc_value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let described = self.with_engine(py, |engine| {
            let name = engine
                .world()
                .meta()
                .map(|meta| meta.name.clone())
                .unwrap_or_default();
            Ok(format!(
                "<World {name:?} at {:?}, head {}>",
                engine.store_name(),
                engine.head()
            ))
        });
        described.unwrap_or_else(|_| "<World (closed)>".to_owned())
    }
}

/// Checks a fact sheet (one fact per line) without a world: that every line
/// parses and every ``$if`` condition compiles.
///
/// Raises ``FactSyntaxError`` with ``.line`` and ``.column`` (1-based, every
/// line of ``text`` counted, blank ones included; ``.owner`` is None).
#[pyfunction]
pub(crate) fn check_sheet(py: Python<'_>, text: &str) -> PyResult<()> {
    match py.detach(|| rp_core::facts::check_sheet(text)) {
        Ok(()) => Ok(()),
        Err(error) => Err(crate::errors::sheet_error(py, error)),
    }
}
