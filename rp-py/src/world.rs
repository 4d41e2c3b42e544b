//! `World`: a world and the save file that keeps its log (rp-core's
//! `Engine`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use rp_core::{Durability, Engine, EngineOptions, EntityId, Message};

use crate::decision::Decision;
use crate::errors::{RpError, to_py_err};
use crate::job::Job;
use crate::model::{
    Branch, Container, Edge, Entity, Group, Memory, Named, RewindPreview, container_id, entity_id,
};
use crate::scene::Scene;
use crate::story::{ScopedEvent, Thread};
use crate::turn::Turn;

/// A world and the save file that keeps its event log.
///
/// Create one with ``World.create`` (a new save from a world file),
/// ``World.open`` (an existing save), ``World.load`` (a world file, in
/// memory) or ``World.in_memory`` (an empty world, no file). Use it
/// as a context manager, or call ``close()``, to release the save file; any
/// call after that raises ``RpError``.
///
/// The world model reads as typed snapshots (``entities()``, ``entity()``,
/// ``containers()``, ``edges()``, ``memories()``, ``groups()``) and changes
/// only through validated events (``append()`` and the named edits such as
/// ``create_entity()``, ``move_entity()``, ``set_edge()``): an edit the world
/// refuses raises an ``RpError`` and changes nothing. Scoped events and
/// threads have calls of their own (``plan_event()``, ``start_event()``,
/// ``complete_event()``, ``run_due()``, ``open_thread()``,
/// ``scoped_events()``, ``threads()``). History branches
/// (``rewind()``, ``fork()``, ``branches()``, ``switch_branch()``). In a
/// notebook a World shows itself as HTML, and ``graph()`` draws its
/// relationships.
///
/// Threads: calls release the GIL while the engine works (storage, index,
/// replay, retrieval, decisions), so other Python threads run meanwhile. A
/// World may be shared between threads: a lock inside it runs its calls one
/// at a time, each whole (a call waits, without the GIL, for the one
/// before). A ``Turn`` holds that lock only during each of its calls, so
/// other calls may come between its steps (a commit in between makes the
/// turn refuse to go on).
///
/// Ctrl-C: ``open`` checks for signals while it works and is interrupted at
/// once. Other calls run to their end first (each is one short commit, or a
/// replay bounded by ``snapshot_every``), then ``KeyboardInterrupt`` is
/// raised as the call returns; the call itself has then happened whole or
/// not at all.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct World {
    /// `None` once closed.
    engine: Mutex<Option<Engine>>,
    /// The engine's head as of the end of the last call on it, stored under
    /// `engine`'s lock, so `head` reads it without the lock and without
    /// releasing the GIL.
    head: AtomicU64,
    /// Set under `engine`'s lock when the world is closed.
    closed: AtomicBool,
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
            head: AtomicU64::new(engine.head()),
            engine: Mutex::new(Some(engine)),
            closed: AtomicBool::new(false),
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
            let result = body(engine);
            self.publish(engine);
            Ok(result?)
        })
        .map_err(|failure| to_py(py, failure))
    }

    /// Runs `body` on a machine held in `held` (a turn's or a job's) and on the
    /// engine, with the GIL released; `over` is the error for a machine that
    /// is gone (finished or abandoned).
    pub(crate) fn with_machine<M: Send, T: Send>(
        &self,
        py: Python<'_>,
        held: &Mutex<Option<M>>,
        over: fn() -> rp_core::Error,
        body: impl FnOnce(&mut M, &mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        self.with_engine(py, |engine| {
            let mut machine = held.lock().unwrap_or_else(PoisonError::into_inner);
            let machine = machine.as_mut().ok_or_else(over)?;
            body(machine, engine)
        })
    }

    /// Stores `engine`'s head for `head` to read; called under the lock at
    /// the end of every call on the engine.
    fn publish(&self, engine: &Engine) {
        self.head.store(engine.head(), Ordering::Release);
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
    /// ``durability="immediate"`` (the default) makes each commit durable
    /// before the call returns (fsync); ``"eventual"`` is faster, and a crash
    /// may lose the latest commits (never part of one) until ``flush()`` or
    /// ``close()``. A snapshot of the world is written every
    /// ``snapshot_every`` events (0: never), so opening replays at most that
    /// many.
    ///
    /// Raises ``Conflict`` when ``path`` exists, ``WorldFileError`` when the
    /// world file has an error (then nothing is written), ``StorageError``,
    /// ``InvalidInput`` (``durability``).
    #[classmethod]
    #[pyo3(signature = (path, world_file, now = 0, *, durability = "immediate", snapshot_every = 1000))]
    fn create(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        world_file: PathBuf,
        now: i64,
        durability: &str,
        snapshot_every: u64,
    ) -> PyResult<World> {
        let options = engine_options(py, durability, snapshot_every)?;
        open_with(py, || {
            Engine::create_from_world_file(path, world_file, now, options)
        })
    }

    /// Opens the save file at ``path`` on its current branch: the latest
    /// snapshot, then a replay of the events after it. ``durability`` and
    /// ``snapshot_every`` are as for ``create``.
    ///
    /// Ctrl-C (``KeyboardInterrupt``, or any exception a signal handler
    /// raises) interrupts a long open at once: the open is abandoned, runs
    /// to the end of its current read on a thread of its own and closes the
    /// file (until then, opening the same save again may be refused as
    /// already open). Opening changes nothing of the world the save holds,
    /// so an interrupted open loses nothing.
    ///
    /// Raises ``NotFound`` (no such file), ``StorageError``, ``NotASave``,
    /// ``CorruptSave``, ``UnsupportedVersion``, ``InvalidInput``
    /// (``durability``).
    #[classmethod]
    #[pyo3(signature = (path, *, durability = "immediate", snapshot_every = 1000))]
    fn open(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        durability: &str,
        snapshot_every: u64,
    ) -> PyResult<World> {
        let options = engine_options(py, durability, snapshot_every)?;
        open_interruptibly(py, move || Engine::open_with(path, options))
    }

    /// A new world in memory, with no save file, holding the world described
    /// by the world file (TOML) at ``world_file``: what ``create`` writes to
    /// a save, kept in memory only (for notebooks, tests, throwaway worlds).
    /// ``now`` is the host's clock in milliseconds, used when the world file
    /// gives none.
    ///
    /// Raises ``WorldFileError`` (the file cannot be read, or has an error).
    #[classmethod]
    #[pyo3(signature = (world_file, now = 0))]
    fn load(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        world_file: PathBuf,
        now: i64,
    ) -> PyResult<World> {
        open_with(py, || {
            let (file, text) = rp_core::worldfile::read(world_file)?;
            let events = rp_core::worldfile::creation_events(
                &file,
                &text,
                now,
                rp_core::WorldSettings::default(),
            )?;
            let (name, now) = match events.first() {
                Some(rp_core::Event::WorldCreated { name, now, .. }) => (name.clone(), *now),
                _ => {
                    return Err(rp_core::Error::Invalid {
                        what: "world file",
                        reason: "it creates no world".into(),
                    });
                }
            };
            let mut engine = Engine::in_memory(&name, now)?;
            engine.append(events[1..].to_vec())?;
            Ok(engine)
        })
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
    /// (exact), or failing that whose name it is (ignoring case), or failing
    /// that whose alias it is (ignoring case; an alias two entities share
    /// names neither).
    ///
    /// Raises ``NotFound``.
    fn entity_id(&self, py: Python<'_>, name_or_key: String) -> PyResult<u64> {
        let named = Named::Name(name_or_key);
        self.with_engine(py, |engine| Ok(entity_id(engine.world(), &named)?.0))
    }

    /// The seq of the last event on the current branch.
    ///
    /// It takes no lock and never waits: while a call on the world runs in
    /// another thread, it is the head as that call found it, and the new
    /// head once the call has returned.
    #[getter]
    fn head(&self, py: Python<'_>) -> PyResult<u64> {
        let head = self.head.load(Ordering::Acquire);
        if self.closed.load(Ordering::Acquire) {
            return Err(to_py(py, Failure::Closed));
        }
        if self.engine.is_poisoned() {
            return Err(to_py(py, Failure::Poisoned));
        }
        Ok(head)
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

    // ----- Scoped events and threads -----

    /// Plans a scoped event (status ``"planned"``) at ``now`` (host clock,
    /// ms) and returns its id: something with a beginning and an end whose
    /// ``props`` (name → description) are in the prompts of its
    /// ``participants`` (ids, keys, names or aliases; at least one) only
    /// while it is active.
    ///
    /// ``preconditions`` are ``$if`` expressions that must all hold for it
    /// to start, evaluated as its first participant would evaluate a line of
    /// its sheet. ``on_start`` and ``on_complete`` are effects as dicts with
    /// a ``"type"`` (``{"type": "system_line", "text": ...}``, ``"memory"``
    /// with ``"text"`` and ``"significance"``, ``"give_item"`` with
    /// ``"item"`` and ``"to"`` ids, ``"teach_fact"`` with ``"who"``,
    /// ``"about"`` and ``"fact"``, ``"change_edge"`` with ``"from"``,
    /// ``"to"``, ``"affinity"``, ``"trust"`` and ``"summary"``,
    /// ``"open_thread"`` with ``"text"``, ``"close_thread"`` with
    /// ``"thread"`` and ``"status"``). ``significance`` is 0–1. It starts by
    /// itself from ``start_at`` on, or when ``start_when`` (a ``$if``
    /// expression) holds, and expires at ``expire_at``: checked when a turn
    /// begins, or by ``run_due``. One commit: on error nothing changes.
    ///
    /// Raises ``InvalidInput`` (an empty name, no participants, an effect
    /// dict that does not match, a significance outside 0–1, an expiry
    /// before the start, ``now`` before the world's clock),
    /// ``FactSyntaxError`` (a condition that does not compile, quoted),
    /// ``NotFound`` (a participant, or an entity an effect names).
    #[pyo3(signature = (name, *, participants, props = None, preconditions = None, on_start = None, on_complete = None, significance = 0.5, start_at = None, start_when = None, expire_at = None, now))]
    #[allow(clippy::too_many_arguments)]
    fn plan_event(
        &self,
        py: Python<'_>,
        name: String,
        participants: Vec<Named>,
        props: Option<std::collections::BTreeMap<String, String>>,
        preconditions: Option<Vec<String>>,
        on_start: Option<Vec<Bound<'_, PyDict>>>,
        on_complete: Option<Vec<Bound<'_, PyDict>>>,
        significance: f64,
        start_at: Option<i64>,
        start_when: Option<String>,
        expire_at: Option<i64>,
        now: i64,
    ) -> PyResult<u64> {
        let new = crate::story::NewEvent {
            name,
            participants,
            props: props.unwrap_or_default(),
            preconditions: preconditions.unwrap_or_default(),
            on_start: crate::story::effects(py, "on_start effect", on_start)?,
            on_complete: crate::story::effects(py, "on_complete effect", on_complete)?,
            significance,
            start_at,
            start_when,
            expire_at,
        };
        self.with_engine(py, |engine| crate::story::plan_event(engine, new, now))
    }

    /// Starts the planned event ``event`` at ``now``: its preconditions must
    /// hold (evaluated once, recorded), then its ``on_start`` effects run, in
    /// one commit. Its props enter its participants' prompts.
    ///
    /// Raises ``Conflict`` (it is not planned, a precondition does not hold,
    /// an effect cannot run: the message says which), ``NotFound``,
    /// ``InvalidInput`` (``now`` before the world's clock); the world is then
    /// unchanged.
    #[pyo3(signature = (event, *, now))]
    fn start_event(&self, py: Python<'_>, event: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| {
            engine.start_event(rp_core::ScopedEventId(event), now)
        })?;
        Ok(())
    }

    /// Completes the active event ``event`` at ``now`` with ``promotion``,
    /// what survives it: a dict with any of ``"items"`` (``{"item", "to"}``:
    /// into a participant's inventory), ``"knowledge"`` (``{"who", "about",
    /// "fact"}``), ``"summaries"`` (``{"from", "to", "summary"}``) and
    /// ``"gists"`` (``{"witness", "text", "significance"}``: one memory per
    /// participant), all ids; None promotes nothing. Its ``on_complete``
    /// effects run first. Its props leave every prompt for good.
    ///
    /// Raises ``Conflict`` (it is not active: completing twice included),
    /// ``InvalidInput`` (a promotion that does not match, or that names
    /// someone who is not a participant), ``NotFound``; the world is then
    /// unchanged.
    #[pyo3(signature = (event, *, promotion = None, now))]
    fn complete_event(
        &self,
        py: Python<'_>,
        event: u64,
        promotion: Option<&Bound<'_, PyDict>>,
        now: i64,
    ) -> PyResult<()> {
        let promotion = crate::story::promotion(py, promotion)?;
        self.with_engine(py, |engine| {
            engine.complete_event(rp_core::ScopedEventId(event), promotion, now)
        })?;
        Ok(())
    }

    /// Cancels the planned or active event ``event`` at ``now``: nothing is
    /// promoted, no hook runs. Raises ``Conflict`` (it is closed already),
    /// ``NotFound``, ``InvalidInput`` (``now``).
    #[pyo3(signature = (event, *, now))]
    fn cancel_event(&self, py: Python<'_>, event: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| {
            engine.cancel_event(rp_core::ScopedEventId(event), now)
        })?;
        Ok(())
    }

    /// Expires the planned or active event ``event`` at ``now``, as its
    /// ``expire_at`` would: nothing is promoted. Raises as ``cancel_event``.
    #[pyo3(signature = (event, *, now))]
    fn expire_event(&self, py: Python<'_>, event: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| {
            engine.expire_event(rp_core::ScopedEventId(event), now)
        })?;
        Ok(())
    }

    /// Runs every scoped-event transition due by ``now`` (starts whose time
    /// came and whose conditions hold, expiries) in one commit, and returns
    /// what happened: ``{"started": [ids], "expired": [ids], "held": [[id,
    /// why], ...]}`` (``held``: due to start but did not, checked again next
    /// time). Turns do this when they begin. Raises ``InvalidInput``
    /// (``now`` before the world's clock).
    #[pyo3(signature = (*, now))]
    fn run_due<'py>(&self, py: Python<'py>, now: i64) -> PyResult<Bound<'py, PyAny>> {
        let outcome = self.with_engine(py, |engine| engine.run_due(now))?;
        crate::json::to_py(py, serde_json::to_value(outcome))
    }

    /// Opens a thread, an unresolved tension, at ``now`` and returns its id:
    /// the prompts of ``participants`` (ids, keys, names or aliases; at least
    /// one) carry ``text`` until it is resolved or dropped.
    ///
    /// Raises ``InvalidInput`` (an empty text, no participants, ``now``),
    /// ``NotFound`` (a participant).
    #[pyo3(signature = (text, participants, *, now))]
    fn open_thread(
        &self,
        py: Python<'_>,
        text: &str,
        participants: Vec<Named>,
        now: i64,
    ) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            let ids = crate::story::entity_ids(engine.world(), &participants)?;
            Ok(engine.open_thread(text, ids, now)?.0)
        })
    }

    /// Resolves the open thread ``thread`` at ``now``: it leaves every
    /// prompt. Raises ``Conflict`` (closed already), ``NotFound``,
    /// ``InvalidInput`` (``now``).
    #[pyo3(signature = (thread, *, now))]
    fn resolve_thread(&self, py: Python<'_>, thread: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| {
            engine.resolve_thread(rp_core::ThreadId(thread), now)
        })?;
        Ok(())
    }

    /// Drops the open thread ``thread`` unresolved at ``now``: it leaves
    /// every prompt. Raises as ``resolve_thread``.
    #[pyo3(signature = (thread, *, now))]
    fn drop_thread(&self, py: Python<'_>, thread: u64, now: i64) -> PyResult<()> {
        self.with_engine(py, |engine| {
            engine.drop_thread(rp_core::ThreadId(thread), now)
        })?;
        Ok(())
    }

    /// Every scoped event, open and closed, in id order, as ``ScopedEvent``
    /// snapshots.
    fn scoped_events(&self, py: Python<'_>) -> PyResult<Vec<ScopedEvent>> {
        self.with_engine(py, |engine| {
            Ok(engine
                .world()
                .scoped_events()
                .map(|e| ScopedEvent(e.clone()))
                .collect())
        })
    }

    /// The scoped event ``event``. Raises ``NotFound``.
    fn scoped_event(&self, py: Python<'_>, event: u64) -> PyResult<ScopedEvent> {
        self.with_engine(py, |engine| {
            crate::story::scoped_event(engine.world(), event)
        })
    }

    /// Every thread, open and closed, in id order, as ``Thread`` snapshots.
    fn threads(&self, py: Python<'_>) -> PyResult<Vec<Thread>> {
        self.with_engine(py, |engine| {
            Ok(engine
                .world()
                .threads()
                .map(|t| Thread(t.clone()))
                .collect())
        })
    }

    /// The current world in world-file form (TOML).
    fn export_world_file(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| Ok(engine.export_world_file()))
    }

    // ----- Scenes and time skips -----

    /// Opens a scene in ``container`` (an id, key or name) at ``now`` (host
    /// clock, ms; the clock advances to it) and returns its id; its
    /// witnesses start as the entities there. Turns open scenes by
    /// themselves (see the ``"scenes"`` turn options); this is for the host
    /// that wants one now.
    ///
    /// Raises ``NotFound`` (container), ``Conflict`` (the container already
    /// has an open scene: close it first), ``InvalidInput`` (``now`` before
    /// the world's clock).
    #[pyo3(signature = (container, *, now))]
    fn open_scene(&self, py: Python<'_>, container: Named, now: i64) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            crate::scene::open_scene(engine, &container, now)
        })
    }

    /// Every scene, open and closed, in id order, as ``Scene`` snapshots;
    /// with ``open_only``, only the open ones.
    #[pyo3(signature = (*, open_only = false))]
    fn scenes(&self, py: Python<'_>, open_only: bool) -> PyResult<Vec<Scene>> {
        self.with_engine(py, |engine| Ok(crate::scene::scenes(engine, open_only)))
    }

    /// The scene with id ``scene``. Raises ``NotFound``.
    fn scene(&self, py: Python<'_>, scene: u64) -> PyResult<Scene> {
        self.with_engine(py, |engine| crate::scene::scene(engine, scene))
    }

    /// The open scene of ``container`` (an id, key or name), or None.
    /// Raises ``NotFound`` (container).
    fn current_scene(&self, py: Python<'_>, container: Named) -> PyResult<Option<Scene>> {
        self.with_engine(py, |engine| crate::scene::current_scene(engine, &container))
    }

    /// The open scene of the container where ``entity`` (an id, key, name
    /// or alias) stands, or None (no scene there, or it stands nowhere).
    /// Raises ``NotFound`` (entity).
    fn scene_of(&self, py: Python<'_>, entity: Named) -> PyResult<Option<Scene>> {
        self.with_engine(py, |engine| crate::scene::scene_of(engine, &entity))
    }

    /// The open scenes due to close at ``now`` under ``options`` (scene
    /// options, see ``begin_scene_close``), oldest first, as dicts with
    /// ``"scene"`` and ``"reason"``: ``"superseded"`` (a newer scene opened
    /// in its container: ``"by"``), ``"departure"`` (a witness left its
    /// container: ``"entity"``) or ``"gap"`` (nothing said in it for
    /// ``max_gap_ms``: ``"since"``). Changes nothing. Raises
    /// ``InvalidInput`` (options).
    #[pyo3(signature = (*, now, options = None))]
    fn due_scenes<'py>(
        &self,
        py: Python<'py>,
        now: i64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = crate::scene::scene_options(py, options)?;
        let due = self.with_engine(py, |engine| {
            Ok(crate::scene::due_scenes(engine, now, &options))
        })?;
        crate::json::to_py(py, due)
    }

    /// Starts closing the open scene ``scene`` at ``now`` (host clock, ms),
    /// due or not, and returns the ``Job``: it asks for one summary per
    /// witness, each from that witness's own point of view, and its
    /// ``finish()`` commits the close and each summary as a memory owned by
    /// its witness (``kind == "scene_summary"``), in one transaction. A
    /// scene in which nothing was said closes with no summaries.
    ///
    /// ``options`` is a dict of scene options, every key optional, unknown
    /// keys refused: ``"enabled"``, ``"max_gap_ms"``,
    /// ``"close_on_departure"`` (when scenes are due, see ``due_scenes``),
    /// ``"sampling"`` (of the summary requests), ``"summary_lines"`` (the
    /// most lines of the scene a summary prompt carries, at least 1),
    /// ``"significance"`` (of the summaries, 0–1) and ``"group_nodes"``
    /// (with three or more witnesses, create a group node of exactly them).
    /// A turn takes the same dict as its ``"scenes"`` option.
    ///
    /// Raises ``NotFound`` (scene), ``Conflict`` (it is closed already),
    /// ``InvalidInput`` (``now`` before the world's clock or the scene's
    /// opening, bad options); nothing changes until ``finish()``.
    #[pyo3(signature = (scene, *, now, options = None))]
    fn begin_scene_close(
        slf: &Bound<'_, Self>,
        scene: u64,
        now: i64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_scene_close(slf, scene, now, options)
    }

    /// ``begin_scene_close`` of the open scene of ``container`` (an id, key
    /// or name). Raises as it does, and ``NotFound`` when the container has
    /// no open scene.
    #[pyo3(signature = (container, *, now, options = None))]
    fn begin_close_current_scene(
        slf: &Bound<'_, Self>,
        container: Named,
        now: i64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_close_current_scene(slf, container, now, options)
    }

    /// Closes the scene ``scene`` at ``now`` in one call, with the host's
    /// model behind ``generate``, and returns the outcome dict of
    /// ``Job.finish`` (``"seq"``, ``"scene"``, ``"summaries"``,
    /// ``"group"``).
    ///
    /// ``generate(request)`` is a plain function that receives each summary
    /// request as a dict (see ``Job.step``) and returns the text (``str``),
    /// a result dict (``{"text": ...}``) or an iterable of ``str`` chunks
    /// (joined); an async callable is refused with ``TypeError`` (drive the
    /// ``Job`` of ``begin_scene_close`` to await one). When ``generate``
    /// raises an ``Exception``, nothing is committed and ``GenerationError``
    /// is raised from it (its ``__cause__``, with its traceback); other
    /// exceptions (``KeyboardInterrupt``) propagate as they are, also
    /// committing nothing. Errors are otherwise those of
    /// ``begin_scene_close`` and ``Job``.
    #[pyo3(signature = (scene, *, now, generate, options = None))]
    fn close_scene<'py>(
        slf: &Bound<'py, Self>,
        scene: u64,
        now: i64,
        generate: Bound<'py, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::job::close_scene(slf, scene, now, generate, options)
    }

    /// ``close_scene`` of the open scene of ``container`` (an id, key or
    /// name): see ``begin_close_current_scene``.
    #[pyo3(signature = (container, *, now, generate, options = None))]
    fn close_current_scene<'py>(
        slf: &Bound<'py, Self>,
        container: Named,
        now: i64,
        generate: Bound<'py, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::job::close_current_scene(slf, container, now, generate, options)
    }

    /// Starts a time skip and returns the ``Job``: a jump ``to`` a time
    /// (host clock, ms: "the next morning"), or an elision of the action of
    /// ``elide`` (an entity's id, key, name or alias: its clock moves to the
    /// end of its action, which needs a duration). Give exactly one.
    ///
    /// The skip is one commit (``Job.finish``): every open scene closes at
    /// the moment the skip begins (a summary per witness, which the job
    /// asks for; ``options`` are scene options as for
    /// ``begin_scene_close``, and with ``"enabled": False`` no scene is
    /// closed), the clock moves, the scoped-event transitions due in between
    /// run forward in time order (starts whose time came, expiries), and the
    /// actions over by the landing time end (after a jump, every action).
    /// ``rewind`` to a seq before it restores everything.
    ///
    /// Raises ``TypeError`` (both or neither of ``to`` and ``elide``),
    /// ``InvalidInput`` (a landing time not after the world's clock, an
    /// entity doing nothing or whose action has no duration, bad options),
    /// ``NotFound`` (entity); nothing changes until ``finish()``.
    #[pyo3(signature = (*, to = None, elide = None, options = None))]
    fn begin_time_skip(
        slf: &Bound<'_, Self>,
        to: Option<i64>,
        elide: Option<Named>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_time_skip(slf, to, elide, options)
    }

    /// A whole time skip in one call (see ``begin_time_skip``), with
    /// ``generate`` writing the summaries of the scenes it closes, as for
    /// ``close_scene``; returns the outcome dict of ``Job.finish``
    /// (``"seq"``, ``"from"``, ``"to"``, ``"closed_scenes"``, ``"due"``,
    /// ``"reset"``). When ``generate`` raises, nothing is committed.
    #[pyo3(signature = (*, to = None, elide = None, generate, options = None))]
    fn time_skip<'py>(
        slf: &Bound<'py, Self>,
        to: Option<i64>,
        elide: Option<Named>,
        generate: Bound<'py, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::job::run_time_skip(slf, to, elide, generate, options)
    }

    // ----- World queries -----

    /// Starts a world query, a question about the world in natural
    /// language answered by the host's model, and returns the ``Job``. The
    /// model is shown a context (entities, relationships, and for a query
    /// asked ``as_entity`` its own memories) and either answers or asks to
    /// look up more (see ``Job.step``); ``finish()`` records the query in
    /// the log (``get_query`` reads it after a restart). A query changes
    /// nothing in the world but its record.
    ///
    /// ``now`` is the host clock (ms); ``as_entity`` (an id, key, name or
    /// alias) restricts the answer to what that entity could know; ``config``
    /// is a dict, every key optional, unknown keys refused:
    /// ``"max_info_requests"`` (0–20, default 3), ``"max_initial_entities"``
    /// (1–100, default 10), ``"include_relationships"`` (default True),
    /// ``"temperature"`` (0–2, default 0.7), ``"result_limit"`` (1–200,
    /// default 20).
    ///
    /// Raises ``InvalidInput`` (an empty or over-long text, a bad config),
    /// ``NotFound`` (``as_entity``).
    #[pyo3(signature = (text, *, now, as_entity = None, config = None))]
    fn begin_query(
        slf: &Bound<'_, Self>,
        text: String,
        now: i64,
        as_entity: Option<Named>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_query(slf, text, now, as_entity, config)
    }

    /// Asks a world query in one call (see ``begin_query``), with the
    /// host's model behind ``generate`` (as for ``close_scene``), and
    /// returns the outcome dict of ``Job.finish`` (``"seq"``, ``"query"``,
    /// ``"context"``, ``"iterations"``): the answer is
    /// ``outcome["query"]["answer"]``. When ``generate`` raises, nothing is
    /// committed (not even a failed record).
    #[pyo3(signature = (text, *, now, generate, as_entity = None, config = None))]
    fn ask<'py>(
        slf: &Bound<'py, Self>,
        text: String,
        now: i64,
        generate: Bound<'py, PyAny>,
        as_entity: Option<Named>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::job::ask(slf, text, now, generate, as_entity, config)
    }

    /// The record of the query ``query`` (an id, ``outcome["query"]["id"]``)
    /// on the current branch, as a dict: ``"id"``, ``"text"``,
    /// ``"asked_as"``, ``"config"``, ``"status"`` (``"completed"`` or
    /// ``"failed"``), ``"rounds"`` (each generation and what became of it),
    /// ``"answer"`` (``"content"``, ``"confidence"``, ``"sources"``,
    /// ``"suggested_follow_ups"``, ...) or ``"error"``, and its times.
    /// Raises ``NotFound``.
    fn get_query<'py>(&self, py: Python<'py>, query: u64) -> PyResult<Bound<'py, PyAny>> {
        let record = self.with_engine(py, |engine| crate::graph::get_query(engine, query))?;
        crate::json::to_py(py, record)
    }

    /// The ``limit`` most recent query records, newest first, as dicts (see
    /// ``get_query``).
    #[pyo3(signature = (limit = 10))]
    fn recent_queries<'py>(&self, py: Python<'py>, limit: usize) -> PyResult<Bound<'py, PyAny>> {
        let records =
            self.with_engine(py, |engine| Ok(crate::graph::recent_queries(engine, limit)))?;
        crate::json::to_py(py, records)
    }

    // ----- Relationship queries -----

    /// The edges of ``entities`` (ids, keys, names or aliases) along
    /// ``direction`` (``"outgoing"``: what they feel about others,
    /// ``"incoming"``: what others feel about them, or ``"both"``), for each
    /// entity in order outgoing then incoming, each edge once, at most
    /// ``limit`` (1–10000), as ``Edge`` snapshots.
    ///
    /// Raises ``NotFound`` (an entity), ``InvalidInput`` (direction, limit).
    #[pyo3(signature = (entities, *, direction = "both", limit = 100))]
    fn relationships_of(
        &self,
        py: Python<'_>,
        entities: Vec<Named>,
        direction: &str,
        limit: usize,
    ) -> PyResult<Vec<Edge>> {
        let direction = crate::graph::direction(direction).map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| {
            crate::graph::relationships_of(engine, &entities, direction, limit)
        })
    }

    /// The entities reachable from ``entity`` (an id, key, name or alias)
    /// in at most ``max_hops`` hops (1–6) along ``direction`` (see
    /// ``relationships_of``), nearest first, each once, ``entity`` itself
    /// left out, at most ``limit``, as ``(entity, hops)`` pairs (``hops ==
    /// 1``: a direct neighbour).
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (``max_hops``, direction,
    /// limit).
    #[pyo3(signature = (entity, *, max_hops = 2, direction = "outgoing", limit = 100))]
    fn connected(
        &self,
        py: Python<'_>,
        entity: Named,
        max_hops: u32,
        direction: &str,
        limit: usize,
    ) -> PyResult<Vec<(u64, u32)>> {
        let direction = crate::graph::direction(direction).map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| {
            crate::graph::connected(engine, &entity, max_hops, direction, limit)
        })
    }

    /// The shortest chain of acquaintance from ``a`` to ``b`` (ids, keys,
    /// names or aliases) following edge direction (``a`` has an edge to x,
    /// x to ``b``), both ends included, of at most ``max_hops`` hops (1–6);
    /// None when there is none.
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (``max_hops``).
    #[pyo3(signature = (a, b, *, max_hops = 4))]
    fn path(
        &self,
        py: Python<'_>,
        a: Named,
        b: Named,
        max_hops: u32,
    ) -> PyResult<Option<Vec<u64>>> {
        self.with_engine(py, |engine| crate::graph::path(engine, &a, &b, max_hops))
    }

    /// The entities that share neighbours (either direction) with
    /// ``entity`` (an id, key, name or alias), most shared first (ties by
    /// id), at most ``limit``, as ``(entity, shared)`` pairs.
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (limit).
    #[pyo3(signature = (entity, *, limit = 20))]
    fn shared_connections(
        &self,
        py: Python<'_>,
        entity: Named,
        limit: usize,
    ) -> PyResult<Vec<(u64, u32)>> {
        self.with_engine(py, |engine| {
            crate::graph::shared_connections(engine, &entity, limit)
        })
    }

    /// Figures of the relationship graph, as a dict: ``"entities"``,
    /// ``"edges"`` (directed), ``"mutual_pairs"`` (an edge each way, counted
    /// once), ``"isolated"`` (no edge either way), ``"max_outgoing"``,
    /// ``"max_incoming"`` and ``"mean_degree"``.
    fn graph_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.with_engine(py, |engine| Ok(engine.relationships().stats()))?;
        crate::json::serialize(py, &stats)
    }

    // ----- The world model: typed snapshots -----

    /// The world's name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| {
            Ok(engine
                .world()
                .meta()
                .map(|meta| meta.name.clone())
                .unwrap_or_default())
        })
    }

    /// The world's clock: the host time (ms) it was last advanced to.
    #[getter]
    fn now(&self, py: Python<'_>) -> PyResult<i64> {
        self.with_engine(py, |engine| Ok(engine.world().now()))
    }

    /// Every entity, in id order, as ``Entity`` snapshots.
    fn entities(&self, py: Python<'_>) -> PyResult<Vec<Entity>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(world.entities().map(|e| Entity::of(world, e)).collect())
        })
    }

    /// The entity ``entity`` names: an id, or a world-file key (exact) or
    /// name (ignoring case). Raises ``NotFound``.
    fn entity(&self, py: Python<'_>, entity: Named) -> PyResult<Entity> {
        self.with_engine(py, |engine| read_entity(engine, &entity))
    }

    /// Every container, in id order, as ``Container`` snapshots (with how
    /// many stand in each slot).
    fn containers(&self, py: Python<'_>) -> PyResult<Vec<Container>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(world
                .containers()
                .map(|c| Container::of(world, c))
                .collect())
        })
    }

    /// The container ``container`` names: an id, a world-file key (exact) or
    /// a name (ignoring case). Raises ``NotFound``, or ``InvalidInput`` for a
    /// name that two containers share.
    fn container(&self, py: Python<'_>, container: Named) -> PyResult<Container> {
        self.with_engine(py, |engine| read_container(engine, &container))
    }

    /// The directed edges of the relationship graph, in ``(from_, to)``
    /// order, as ``Edge`` snapshots; only those going out of ``from_``
    /// and/or into ``to`` when given (ids, keys or names). Raises
    /// ``NotFound``.
    #[pyo3(signature = (*, from_ = None, to = None))]
    fn edges(
        &self,
        py: Python<'_>,
        from_: Option<Named>,
        to: Option<Named>,
    ) -> PyResult<Vec<Edge>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            let from = from_.map(|f| entity_id(world, &f)).transpose()?;
            let to = to.map(|t| entity_id(world, &t)).transpose()?;
            Ok(world
                .edges()
                .filter(|e| from.is_none_or(|f| e.from == f) && to.is_none_or(|t| e.to == t))
                .map(|e| Edge(e.clone()))
                .collect())
        })
    }

    /// The edge ``from_ → to``. Raises ``NotFound`` (an entity, or no such
    /// edge).
    fn edge(&self, py: Python<'_>, from_: Named, to: Named) -> PyResult<Edge> {
        self.with_engine(py, |engine| read_edge(engine, &from_, &to))
    }

    /// Every memory, in id order, as ``Memory`` snapshots: the host's view;
    /// with ``owner``, only the memories it holds and witnessed (what it can
    /// recall). Raises ``NotFound`` (owner).
    #[pyo3(signature = (owner = None))]
    fn memories(&self, py: Python<'_>, owner: Option<Named>) -> PyResult<Vec<Memory>> {
        self.with_engine(py, |engine| {
            let world = engine.world();
            Ok(match owner {
                Some(owner) => {
                    let owner = entity_id(world, &owner)?;
                    let mut found: Vec<Memory> = world
                        .memories_of(owner)
                        .map(|m| Memory(m.clone()))
                        .collect();
                    found.sort_by_key(|m| m.0.id);
                    found
                }
                None => world.all_memories().map(|m| Memory(m.clone())).collect(),
            })
        })
    }

    /// The memory with id ``memory``. Raises ``NotFound``.
    fn memory(&self, py: Python<'_>, memory: u64) -> PyResult<Memory> {
        self.with_engine(py, |engine| {
            engine
                .world()
                .memory(rp_core::MemoryId(memory))
                .map(|m| Memory(m.clone()))
                .ok_or_else(|| rp_core::Error::NotFound {
                    what: "memory",
                    id: memory.to_string(),
                })
        })
    }

    /// Every group node, in id order, as ``Group`` snapshots.
    fn groups(&self, py: Python<'_>) -> PyResult<Vec<Group>> {
        self.with_engine(py, |engine| {
            Ok(engine.world().groups().map(|g| Group(g.clone())).collect())
        })
    }

    /// The whole state of the world as a dict: the JSON of its serialised
    /// form (entities, containers, edges, groups, memories, dialogue,
    /// threads, clock, ...). Two worlds with the same history give equal
    /// dicts, so a reopened save can be compared with the live world.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.with_engine(py, |engine| Ok(serde_json::to_value(engine.world())))?;
        crate::json::to_py(py, state)
    }

    // ----- Editing: validated events -----

    /// The events of the current branch with ``first <= seq <= last``
    /// (default: to the head), oldest first, as dicts: ``"seq"``,
    /// ``"kind"`` (``"entity_created"``, ``"user_turn"``, ...) and the
    /// event's fields, the form ``append`` takes. Raises ``StorageError``.
    #[pyo3(signature = (first = 1, last = None))]
    fn events<'py>(
        &self,
        py: Python<'py>,
        first: u64,
        last: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let events = self.with_engine(py, |engine| {
            let found = engine.events(first, last.unwrap_or(u64::MAX))?;
            Ok(found
                .iter()
                .map(|(seq, event)| crate::edits::event_to_json(*seq, event))
                .collect::<serde_json::Result<Vec<_>>>()
                .map(serde_json::Value::Array))
        })?;
        crate::json::to_py(py, events)
    }

    /// Validates ``events`` in order, commits them in one transaction and
    /// applies them; returns the new head. Each event is a dict with its
    /// ``"kind"`` and fields, as ``events()`` gives them, such as
    /// ``{"kind": "time_advanced", "to": 60000}`` or ``{"kind":
    /// "edge_updated", "edge": {"from": 1, "to": 2, "affinity": 0.5}}``
    /// (new ids are at least ``next_id``).
    ///
    /// If any event is malformed or refused, nothing changes and the error
    /// says why: ``InvalidInput`` (a malformed event, a value out of range),
    /// ``NotFound``, ``Conflict`` (a duplicate name, an entity in two
    /// places), ``CapacityError``, ``FactSyntaxError``, ``StorageError``.
    fn append(&self, py: Python<'_>, events: Vec<Bound<'_, PyDict>>) -> PyResult<u64> {
        let mut decoded = Vec::with_capacity(events.len());
        for (i, event) in events.iter().enumerate() {
            match crate::edits::event_from_dict(event)? {
                Ok(event) => decoded.push(event),
                Err(rp_core::Error::Invalid { what, reason }) => {
                    let reason = format!("event {i}: {reason}");
                    return Err(to_py_err(py, rp_core::Error::Invalid { what, reason }));
                }
                Err(error) => return Err(to_py_err(py, error)),
            }
        }
        self.with_engine(py, |engine| engine.append(decoded))
    }

    /// The id the next created thing takes (``append`` needs fresh ids).
    #[getter]
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_engine(py, |engine| Ok(engine.world().next_id()))
    }

    /// Creates an entity and returns it. ``facts`` is its fact sheet (one
    /// fact per line, ``$if`` lines included); with ``container`` (an id, key
    /// or name) it is placed there, in ``slot``, with ``posture``. One
    /// commit: on error nothing changes.
    ///
    /// Raises ``Conflict`` (a name or key in use), ``FactSyntaxError``,
    /// ``NotFound`` (container or slot), ``CapacityError`` (a full slot),
    /// ``InvalidInput`` (an empty name, a slot without a container).
    #[pyo3(signature = (name, *, key = None, aliases = None, facts = "", host_controlled = false, container = None, slot = None, posture = None, mood = None, goals = None, status = None))]
    #[allow(clippy::too_many_arguments)]
    fn create_entity(
        &self,
        py: Python<'_>,
        name: String,
        key: Option<String>,
        aliases: Option<Vec<String>>,
        facts: &str,
        host_controlled: bool,
        container: Option<Named>,
        slot: Option<String>,
        posture: Option<String>,
        mood: Option<String>,
        goals: Option<Vec<String>>,
        status: Option<String>,
    ) -> PyResult<Entity> {
        let new = crate::edits::NewEntity {
            name,
            key,
            aliases: aliases.unwrap_or_default(),
            facts: facts.to_owned(),
            host_controlled,
            container,
            slot,
            posture,
            mood,
            goals: goals.unwrap_or_default(),
            status,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::create_entity(engine, new)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Edits an entity's name, aliases, fact sheet or host-controlled flag
    /// (None keeps a field) and returns it. Raises ``NotFound``,
    /// ``Conflict`` (a name in use), ``FactSyntaxError``, ``InvalidInput``.
    #[pyo3(signature = (entity, *, name = None, aliases = None, facts = None, host_controlled = None))]
    fn edit_entity(
        &self,
        py: Python<'_>,
        entity: Named,
        name: Option<String>,
        aliases: Option<Vec<String>>,
        facts: Option<String>,
        host_controlled: Option<bool>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id =
                crate::edits::edit_entity(engine, &entity, name, aliases, facts, host_controlled)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Sets an entity's ``mood``, ``goals`` or ``status`` (None keeps a
    /// field; ``""`` clears mood or status) and returns it. Raises
    /// ``NotFound``, ``InvalidInput``.
    #[pyo3(signature = (entity, *, mood = None, goals = None, status = None))]
    fn set_entity_state(
        &self,
        py: Python<'_>,
        entity: Named,
        mood: Option<String>,
        goals: Option<Vec<String>>,
        status: Option<String>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id = crate::edits::set_entity_state(engine, &entity, mood, goals, status)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Moves an entity into ``container`` (an id, key or name) and ``slot``
    /// (None: outside any slot), keeping what it holds and does;
    /// ``posture`` replaces its posture (``""`` clears it). Returns it.
    ///
    /// Raises ``NotFound`` (entity, container or slot), ``CapacityError``
    /// (a full slot), ``InvalidInput`` (an item someone carries).
    #[pyo3(signature = (entity, container, slot = None, *, posture = None))]
    fn move_entity(
        &self,
        py: Python<'_>,
        entity: Named,
        container: Named,
        slot: Option<String>,
        posture: Option<String>,
    ) -> PyResult<Entity> {
        self.with_engine(py, |engine| {
            let id = crate::edits::move_entity(engine, &entity, &container, slot, posture)?;
            read_entity(engine, &Named::Id(id.0))
        })
    }

    /// Removes an entity with its edges, group memberships and memories;
    /// returns the new head. Raises ``NotFound``, ``Conflict`` (it carries
    /// items, or someone carries it).
    fn remove_entity(&self, py: Python<'_>, entity: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| crate::edits::remove_entity(engine, &entity))
    }

    /// Creates a container and returns it. ``parent`` (an id, key or name)
    /// is the container it sits in; ``slots`` are names or ``(name,
    /// capacity)`` pairs (capacity None: no limit); ``public``, ``moving``
    /// and ``audible_range`` are its properties.
    ///
    /// Raises ``Conflict`` (a key in use), ``NotFound`` (parent),
    /// ``InvalidInput`` (an empty name, a slot named twice).
    #[pyo3(signature = (name, *, key = None, parent = None, slots = None, facts = "", public = false, moving = false, audible_range = 0))]
    #[allow(clippy::too_many_arguments)]
    fn create_container(
        &self,
        py: Python<'_>,
        name: String,
        key: Option<String>,
        parent: Option<Named>,
        slots: Option<Vec<crate::edits::SlotArg>>,
        facts: &str,
        public: bool,
        moving: bool,
        audible_range: u32,
    ) -> PyResult<Container> {
        let new = crate::edits::NewContainer {
            name,
            key,
            parent,
            slots: slots.unwrap_or_default(),
            facts: facts.to_owned(),
            public,
            moving,
            audible_range,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::create_container(engine, new)?;
            read_container(engine, &Named::Id(id.0))
        })
    }

    /// Redefines a container: each field given replaces its value (None
    /// keeps it; ``slots`` as in ``create_container``). Returns it. Raises
    /// ``NotFound``, ``InvalidInput`` (a slot still occupied is removed, a
    /// parent that makes a cycle, ...).
    #[pyo3(signature = (container, *, name = None, parent = None, slots = None, facts = None, public = None, moving = None, audible_range = None))]
    #[allow(clippy::too_many_arguments)]
    fn edit_container(
        &self,
        py: Python<'_>,
        container: Named,
        name: Option<String>,
        parent: Option<Named>,
        slots: Option<Vec<crate::edits::SlotArg>>,
        facts: Option<String>,
        public: Option<bool>,
        moving: Option<bool>,
        audible_range: Option<u32>,
    ) -> PyResult<Container> {
        let edit = crate::edits::ContainerEdit {
            name,
            parent,
            slots,
            facts,
            public,
            moving,
            audible_range,
        };
        self.with_engine(py, |engine| {
            let id = crate::edits::edit_container(engine, &container, edit)?;
            read_container(engine, &Named::Id(id.0))
        })
    }

    /// Removes an empty container (no entities, no child containers);
    /// returns the new head. Raises ``NotFound``, ``Conflict``.
    fn remove_container(&self, py: Python<'_>, container: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            crate::edits::remove_container(engine, &container)
        })
    }

    /// Creates or edits the directed edge ``from_ → to`` (ids, keys or
    /// names) and returns it: each field given replaces its value, the
    /// others are kept (a new edge starts neutral). ``affinity`` and
    /// ``trust`` are in [-1, 1].
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (a value out of range, an edge
    /// to itself).
    #[pyo3(signature = (from_, to, *, affinity = None, trust = None, summary = None, knowledge = None, private_moments = None, last_interaction = None))]
    #[allow(clippy::too_many_arguments)]
    fn set_edge(
        &self,
        py: Python<'_>,
        from_: Named,
        to: Named,
        affinity: Option<f64>,
        trust: Option<f64>,
        summary: Option<String>,
        knowledge: Option<Vec<String>>,
        private_moments: Option<Vec<String>>,
        last_interaction: Option<i64>,
    ) -> PyResult<Edge> {
        let edit = crate::edits::EdgeEdit {
            affinity,
            trust,
            summary,
            knowledge,
            private_moments,
            last_interaction,
        };
        self.with_engine(py, |engine| {
            let (from, to) = crate::edits::set_edge(engine, &from_, &to, edit)?;
            read_edge(engine, &Named::Id(from.0), &Named::Id(to.0))
        })
    }

    /// Removes the edge ``from_ → to``; returns the new head. Raises
    /// ``NotFound``.
    fn remove_edge(&self, py: Python<'_>, from_: Named, to: Named) -> PyResult<u64> {
        self.with_engine(py, |engine| crate::edits::remove_edge(engine, &from_, &to))
    }

    /// Advances the world's clock to ``to`` (host time, ms); returns the new
    /// head. Raises ``InvalidInput`` when ``to`` is before the clock.
    fn advance_time(&self, py: Python<'_>, to: i64) -> PyResult<u64> {
        self.with_engine(py, |engine| {
            engine.append(vec![rp_core::Event::TimeAdvanced { to }])
        })
    }

    /// Applies the host's own state-update reports: the dicts a model's
    /// state-update pass writes (``{"type": "feeling", "who": "Tobias Reed",
    /// "toward": "Wren", "affinity": "warmer"}``, ``"learned"``,
    /// ``"relationship"``, ``"state"``, ``"activity"``, ``"thread_opened"``,
    /// ...; see ``Turn.step``), judged the same way: names resolved, values
    /// checked, the engine computing each change (``step`` is how far one
    /// warmer/colder or more/less moves). ``present`` (ids, keys or names;
    /// default: everyone) are who may be a report's ``"who"``. Returns the
    /// new head; the changes and the record of the reports are one commit.
    ///
    /// Raises ``InvalidReport`` when any report is refused (then nothing is
    /// applied; ``.reasons`` has each report's reason, None for the valid
    /// ones), ``NotFound`` (present), ``InvalidInput`` (``step``).
    #[pyo3(signature = (reports, *, present = None, step = 0.1))]
    fn apply_reports(
        &self,
        py: Python<'_>,
        reports: Vec<Bound<'_, PyAny>>,
        present: Option<Vec<Named>>,
        step: f64,
    ) -> PyResult<u64> {
        let reports = reports
            .iter()
            .map(crate::json::py_to_json)
            .collect::<PyResult<Vec<_>>>()?;
        let outcome = py.detach(|| {
            let mut engine = self.engine.lock().map_err(|_| Err(Failure::Poisoned))?;
            let engine = engine.as_mut().ok_or(Err(Failure::Closed))?;
            let result = crate::edits::apply_reports(engine, reports, present, step)
                .map_err(|e| e.map_err(Failure::Core));
            self.publish(engine);
            result
        });
        match outcome {
            Ok(head) => Ok(head),
            Err(Ok(refused)) => Err(crate::errors::invalid_report(
                py,
                refused.message,
                refused.reasons,
            )),
            Err(Err(failure)) => Err(to_py(py, failure)),
        }
    }

    // ----- Branches -----

    /// The name of the current branch (``"main"`` at first).
    #[getter]
    fn branch(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| Ok(engine.current_branch().to_owned()))
    }

    /// Every named branch, in creation order, as ``Branch`` objects.
    fn branches(&self, py: Python<'_>) -> PyResult<Vec<Branch>> {
        self.with_engine(py, |engine| {
            Ok(engine.branches().into_iter().map(Branch::from).collect())
        })
    }

    /// What ``rewind(to_seq)`` would undo, without undoing it. Raises
    /// ``InvalidInput`` for a seq outside the current branch.
    fn preview_rewind(&self, py: Python<'_>, to_seq: u64) -> PyResult<RewindPreview> {
        self.with_engine(py, |engine| engine.preview_rewind(to_seq))
            .map(RewindPreview::from)
    }

    /// Moves the current branch back to ``to_seq``: the world becomes what
    /// it was after that event. Nothing is destroyed: the undone events stay
    /// reachable as a new branch, named after the current one (``"main~2"``),
    /// whose name is returned (None when nothing was undone). A turn in
    /// progress refuses to go on afterwards.
    ///
    /// Raises ``InvalidInput`` (a seq outside the branch), ``StorageError``;
    /// on error nothing changes.
    fn rewind(&self, py: Python<'_>, to_seq: u64) -> PyResult<Option<String>> {
        self.with_engine(py, |engine| engine.rewind(to_seq))
    }

    /// Creates a branch ``name`` that shares the current branch's history up
    /// to ``at_seq`` (default: the head) and returns it; the current branch
    /// does not change.
    ///
    /// Raises ``Conflict`` (the name is taken), ``InvalidInput`` (a bad
    /// name, a seq outside the branch).
    #[pyo3(signature = (name, at_seq = None))]
    fn fork(&self, py: Python<'_>, name: &str, at_seq: Option<u64>) -> PyResult<Branch> {
        self.with_engine(py, |engine| {
            let at = at_seq.unwrap_or_else(|| engine.head());
            engine.fork(at, name)
        })
        .map(Branch::from)
    }

    /// Makes the branch ``name`` current, loading its world. Raises
    /// ``NotFound``.
    fn switch_branch(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.switch_branch(name))
    }

    /// Renames the branch ``old`` to ``new``. Raises ``NotFound``,
    /// ``Conflict`` (``new`` is taken), ``InvalidInput`` (a bad name).
    fn rename_branch(&self, py: Python<'_>, old: &str, new: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.rename_branch(old, new))
    }

    /// Deletes the branch ``name`` (not the current one); the events no other
    /// branch shares are removed from the file. Raises ``NotFound``,
    /// ``Conflict`` (the current branch).
    fn delete_branch(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with_engine(py, |engine| engine.delete_branch(name))
    }

    /// Makes every earlier commit durable: needed only with
    /// ``durability="eventual"`` (closing does it too). Raises
    /// ``StorageError``.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with_engine(py, |engine| engine.flush())
    }

    // ----- Notebooks -----

    /// The world as HTML, for notebooks: who is where, what they do, and the
    /// relationship graph.
    fn _repr_html_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        notebook(slf.py(), "world_html")?.call1((slf,))
    }

    /// The relationship graph as a ``Graph``: entities with their places,
    /// directed edges coloured and labelled by affinity. It shows itself in
    /// a notebook (``_repr_svg_``) and has ``.svg`` and ``save(path)``.
    fn graph<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        notebook(slf.py(), "graph")?.call1((slf,))
    }

    /// The relationship graph as an SVG document (a ``str``), drawn by the
    /// package itself: ``graph().svg``.
    fn graph_svg<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::graph(slf)?.getattr("svg")
    }

    /// Closes the world and its save file. Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        // Dropping an engine closes its file: no GIL needed meanwhile.
        py.detach(|| {
            let mut held = self.engine.lock().unwrap_or_else(PoisonError::into_inner);
            let engine = held.take();
            self.closed.store(true, Ordering::Release);
            drop(held);
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

/// The entity `named` names, as a snapshot.
fn read_entity(engine: &Engine, named: &Named) -> Result<Entity, rp_core::Error> {
    let world = engine.world();
    let id = entity_id(world, named)?;
    world
        .entity(id)
        .map(|e| Entity::of(world, e))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "entity",
            id: id.0.to_string(),
        })
}

/// The container `named` names, as a snapshot.
fn read_container(engine: &Engine, named: &Named) -> Result<Container, rp_core::Error> {
    let world = engine.world();
    let id = container_id(world, named)?;
    world
        .container(id)
        .map(|c| Container::of(world, c))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "container",
            id: id.0.to_string(),
        })
}

/// The edge `from → to`, as a snapshot.
fn read_edge(engine: &Engine, from: &Named, to: &Named) -> Result<Edge, rp_core::Error> {
    let world = engine.world();
    let (from, to) = (entity_id(world, from)?, entity_id(world, to)?);
    world
        .edge(from, to)
        .map(|e| Edge(e.clone()))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "edge",
            id: format!("{} → {}", from.0, to.0),
        })
}

/// The function `rp_engine._notebook.<function>`, which draws the world.
fn notebook<'py>(py: Python<'py>, function: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rp_engine._notebook")?.getattr(function)
}

/// Engine options from the keyword arguments of `create` and `open`.
fn engine_options(
    py: Python<'_>,
    durability: &str,
    snapshot_every: u64,
) -> PyResult<EngineOptions> {
    let durability = match durability {
        "immediate" => Durability::Immediate,
        "eventual" => Durability::Eventual,
        other => {
            return Err(to_py_err(
                py,
                rp_core::Error::Invalid {
                    what: "durability",
                    reason: format!("{other:?} is not \"immediate\" or \"eventual\""),
                },
            ));
        }
    };
    Ok(EngineOptions {
        durability,
        snapshot_every,
        ..EngineOptions::default()
    })
}

/// How often a caller waiting on a background open looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `open` on a thread of its own while the caller, without the GIL,
/// waits for it and checks for signals every 50 ms: Ctrl-C during a long
/// open (a large snapshot to decode, a long tail to replay) raises
/// `KeyboardInterrupt` at once. The abandoned open runs on to the end of
/// what it was doing and its engine is then dropped, closing the file:
/// opening changes nothing of the world the save holds.
fn open_interruptibly(
    py: Python<'_>,
    open: impl FnOnce() -> Result<Engine, rp_core::Error> + Send + 'static,
) -> PyResult<World> {
    let (done, result) = mpsc::channel();
    std::thread::Builder::new()
        .name("rp-open".into())
        .spawn(move || {
            // The receiver is gone when the caller was interrupted: the
            // engine is then dropped here.
            let _ = done.send(open());
        })
        .map_err(|error| {
            RpError::new_err(format!(
                "could not start a thread to open the save: {error}"
            ))
        })?;
    let mut result = result;
    loop {
        // The receiver is moved in and out: it is not Sync, so cannot be
        // borrowed across `detach`.
        let (receiver, received) = py.detach(move || {
            let received = result.recv_timeout(SIGNAL_POLL);
            (result, received)
        });
        result = receiver;
        match received {
            Ok(opened) => return opened.map(World::new).map_err(|e| to_py_err(py, e)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(RpError::new_err(
                    "opening the save failed: the thread opening it panicked (a bug in rp)",
                ));
            }
        }
    }
}
