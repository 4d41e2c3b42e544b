//! `World`: a world and the save file that keeps its log (rp-core's
//! `Engine`).
//!
//! This module holds the class, its construction (`create`, `open`, `load`,
//! `in_memory`) and world files, the save file (`flush`, `close`, the
//! context manager), `head`, the helpers every method reaches the engine
//! through, and `check_sheet`. The other methods are split by area, each
//! submodule with a `#[pymethods] impl World` of its own (PyO3's
//! `multiple-pymethods`):
//!
//! - [`entities`]: the world model (entities, containers, edges, groups) as
//!   typed snapshots, and the validated edits that change it;
//! - [`memories`]: forming, reading and recalling memories;
//! - [`turns`]: response control, the turn in its forms, the prompt, the
//!   dialogue and system lines;
//! - [`story`]: scoped events and threads;
//! - [`scenes`]: scenes, their closing, and time skips;
//! - [`queries`]: world queries and their records;
//! - [`graph`]: relationship queries, and the drawings for notebooks;
//! - [`branches`]: history branches and rewind;
//! - [`drives`]: the characters' drives, stimuli and personality, and the
//!   tick (a `Job`, or host time played in one call by `advance`).

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use rp_core::{Durability, Engine, EngineOptions, PublishedHead};

use crate::errors::{Conflict, RpError, to_py_err};

mod branches;
mod drives;
mod entities;
mod graph;
mod memories;
mod progress;
mod queries;
mod scenes;
mod story;
mod turns;

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
/// (``rewind()``, ``fork()``, ``branches()``, ``switch_branch()``), and
/// what a character could recall or believed at any point of any of them
/// (``memories_at()``, ``beliefs_at()``, a query's ``as_of=``). The
/// characters' drives move with host time (``drives()``,
/// ``initiation_candidates()``, ``notify()``); ``next_tick_at()`` says when
/// one of them next does something, and a tick (``begin_tick()``, or
/// ``advance()`` over a stretch of host time) lets them speak first. In a
/// notebook a World shows itself as HTML, and ``graph()`` draws its
/// relationships.
///
/// Threads: calls release the GIL while the engine works (storage, index,
/// replay, retrieval, decisions), so other Python threads run meanwhile. A
/// World may be shared between threads: a lock inside it runs its calls one
/// at a time, each whole (a call waits, without the GIL, for the one
/// before). A ``Turn`` holds that lock only during each of its calls, so
/// other calls may come between its steps (a commit in between makes the
/// turn refuse to go on). ``advance()`` holds the lock for its whole run,
/// its ``generate`` included: a call on the World from that ``generate``
/// raises ``Conflict``.
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
    /// The engine's head as of the end of the last call on it, published
    /// under `engine`'s lock, so `head` reads it without the lock and without
    /// releasing the GIL.
    head: PublishedHead,
    /// Set under `engine`'s lock when the world is closed.
    closed: AtomicBool,
}

/// Why a call on a World failed.
enum Failure {
    Core(rp_core::Error),
    Closed,
    /// An earlier call panicked while holding the engine.
    Poisoned,
    /// A call from a callback of a call that holds the engine on this thread
    /// (`World.advance`'s `generate`).
    Busy,
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
        Failure::Busy => Conflict::new_err(
            "the World is busy: a call on it (World.advance) holds it while it calls back into \
             Python, so the callback cannot call the World; answer from the request alone",
        ),
    }
}

thread_local! {
    /// The Worlds (by address) whose engine this thread holds while it calls
    /// back into Python ([`World::with_engine_calling_out`]). A call on one of
    /// them from such a callback is refused: the lock it would wait for is
    /// held by its own thread, and would never come free.
    static CALLING_OUT: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks a World as held by this thread while calling out, until dropped.
struct CallingOut(usize);

impl CallingOut {
    fn enter(world: usize) -> CallingOut {
        CALLING_OUT.with(|held| held.borrow_mut().push(world));
        CallingOut(world)
    }
}

impl Drop for CallingOut {
    fn drop(&mut self) {
        CALLING_OUT.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(at) = held.iter().rposition(|world| *world == self.0) {
                held.remove(at);
            }
        });
    }
}

impl World {
    fn new(engine: Engine) -> Self {
        Self {
            head: PublishedHead::new(&engine),
            engine: Mutex::new(Some(engine)),
            closed: AtomicBool::new(false),
        }
    }

    /// This World's identity, for [`CALLING_OUT`].
    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Whether this thread holds this World's engine while calling back into
    /// Python.
    fn calling_out(&self) -> bool {
        let address = self.address();
        CALLING_OUT.with(|held| held.borrow().contains(&address))
    }

    /// Takes the engine's lock; refused (rather than waiting forever) when
    /// this thread holds it already, calling back into Python.
    fn lock(&self) -> Result<MutexGuard<'_, Option<Engine>>, Failure> {
        if self.calling_out() {
            return Err(Failure::Busy);
        }
        self.engine.lock().map_err(|_| Failure::Poisoned)
    }

    /// Runs `body` on the engine with the GIL released.
    pub(crate) fn with_engine<T: Send>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        // What the progress callable raises during the call is raised after it.
        let scope = progress::Scope::enter();
        let result = py
            .detach(|| {
                let mut engine = self.lock()?;
                let engine = engine.as_mut().ok_or(Failure::Closed)?;
                let result = body(engine);
                self.publish(engine);
                Ok(result?)
            })
            .map_err(|failure| to_py(py, failure));
        scope.finish(result)
    }

    /// Runs `body` on the engine as [`World::with_engine`] does, for a body
    /// that calls back into Python while it holds the engine (rp-core's
    /// `tick::advance` calling `generate`): a call on this World from such a
    /// callback raises `Conflict` instead of waiting for the lock its own
    /// thread holds. Calls from other threads wait, as for any call.
    pub(crate) fn with_engine_calling_out<T: Send>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        let address = self.address();
        self.with_engine(py, move |engine| {
            let _held = CallingOut::enter(address);
            body(engine)
        })
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
        self.head.publish(engine);
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
    /// ``progress``, a callable, hears how the open goes (docs/progress.md):
    /// ``progress(phase, done, total)`` for ``"open.snapshot"`` (the latest
    /// snapshot found and decoded: one item), then ``"open.replay"`` (the
    /// events after it), each at its start (``done`` 0), at most about every
    /// hundredth of its total, and at its end (``done == total``). It is
    /// called on this thread; an exception it raises abandons the open, as
    /// Ctrl-C does, and is raised here. The World keeps it for the long
    /// phases of later calls (see ``set_progress``). A tqdm bar is one line::
    ///
    ///     bar = tqdm(); world = World.open(path, progress=lambda phase, done, total: (bar.set_description(phase), bar.reset(total) if done == 0 else bar.update(done - bar.n)))
    ///
    /// Raises ``NotFound`` (no such file), ``StorageError``, ``NotASave``,
    /// ``CorruptSave``, ``UnsupportedVersion``, ``InvalidInput``
    /// (``durability``), ``TypeError`` (``progress`` not callable).
    #[classmethod]
    #[pyo3(signature = (path, *, durability = "immediate", snapshot_every = 1000, progress = None))]
    fn open(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        durability: &str,
        snapshot_every: u64,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Py<World>> {
        let options = engine_options(py, durability, snapshot_every)?;
        match progress {
            Some(progress) => progress::open_reporting(py, path, options, progress),
            None => Py::new(
                py,
                open_interruptibly(py, move || Engine::open_with(path, options))?,
            ),
        }
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

    /// The current world in world-file form (TOML).
    fn export_world_file(&self, py: Python<'_>) -> PyResult<String> {
        self.with_engine(py, |engine| Ok(engine.export_world_file()))
    }

    /// The seq of the last event on the current branch.
    ///
    /// It takes no lock and never waits: while a call on the world runs in
    /// another thread, it is the head as that call found it, and the new
    /// head once the call has returned.
    #[getter]
    fn head(&self, py: Python<'_>) -> PyResult<u64> {
        let head = self.head.get();
        if self.closed.load(Ordering::Acquire) {
            return Err(to_py(py, Failure::Closed));
        }
        if self.engine.is_poisoned() {
            return Err(to_py(py, Failure::Poisoned));
        }
        Ok(head)
    }

    /// Makes every earlier commit durable: needed only with
    /// ``durability="eventual"`` (closing does it too). Raises
    /// ``StorageError``.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with_engine(py, |engine| engine.flush())
    }

    /// When commits reach stable storage: ``"immediate"`` or ``"eventual"``
    /// (as for ``create``).
    #[getter]
    fn durability(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.with_engine(py, |engine| Ok(engine.options().durability.name()))
    }

    /// Sets when the next commits reach stable storage, ``"immediate"`` or
    /// ``"eventual"`` (as for ``create``). With ``"eventual"``, consecutive
    /// commits are written together in one transaction, with the next
    /// durable one. Going back to ``"immediate"`` flushes first.
    ///
    /// Raises ``InvalidInput`` for another name and ``StorageError`` when
    /// the flush fails; either way nothing changes.
    fn set_durability(&self, py: Python<'_>, durability: &str) -> PyResult<()> {
        let durability: Durability = durability.parse().map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| engine.set_durability(durability))
    }

    /// Closes the world and its save file. Closing twice does nothing.
    /// Raises ``Conflict`` from the ``generate`` of the World's own
    /// ``advance``, which holds it.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if self.calling_out() {
            return Err(to_py(py, Failure::Busy));
        }
        // Dropping an engine closes its file: no GIL needed meanwhile.
        py.detach(|| {
            let mut held = self.engine.lock().unwrap_or_else(PoisonError::into_inner);
            let engine = held.take();
            self.closed.store(true, Ordering::Release);
            drop(held);
            drop(engine);
        });
        Ok(())
    }

    /// Whether ``close()`` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        if self.calling_out() {
            // Held open by the call this thread is making.
            return false;
        }
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
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
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
        described.unwrap_or_else(|_| {
            if self.calling_out() {
                "<World (busy: held by the call that calls back)>".to_owned()
            } else {
                "<World (closed)>".to_owned()
            }
        })
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

/// Engine options from the keyword arguments of `create` and `open`.
fn engine_options(
    py: Python<'_>,
    durability: &str,
    snapshot_every: u64,
) -> PyResult<EngineOptions> {
    let durability = durability.parse().map_err(|e| to_py_err(py, e))?;
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
