//! The progress of long work from Python (docs/progress.md): `World.open(path,
//! progress=...)` and `World.set_progress(...)`.
//!
//! The callable gets `(phase, done, total)`. While a save opens, the open
//! runs on a thread of its own (see [`super::open_interruptibly`]) and the
//! reports are sent to the caller's thread, which calls the callable there
//! (with the GIL, where a notebook's widgets and `print` expect it): an
//! exception it raises abandons the open, as Ctrl-C does, and is raised by
//! `open`. For the phases of later calls the callable is called on the
//! thread of the call, which holds the World meanwhile (a call on the same
//! World from the callable raises `Conflict`); an exception it raises is
//! kept, the call's later reports are skipped, and it is raised when the
//! call returns (the call itself has then happened whole: as with Ctrl-C).

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use rp_core::{Engine, EngineOptions, Progress, ProgressFn};

use super::{CallingOut, SIGNAL_POLL, World};
use crate::errors::{RpError, to_py_err};

thread_local! {
    /// How many calls on a World this thread is making that raise a
    /// callable's exception when they return ([`Scope`]).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The exception the progress callable raised during the call this
    /// thread is making.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// A call on a World during which the progress callable's exception is kept,
/// to be raised when the call returns ([`Scope::finish`]).
pub(super) struct Scope(());

impl Scope {
    pub(super) fn enter() -> Scope {
        DEPTH.with(|d| d.set(d.get() + 1));
        Scope(())
    }

    /// `result`, unless the progress callable raised meanwhile: then its
    /// exception.
    pub(super) fn finish<T>(self, result: PyResult<T>) -> PyResult<T> {
        match PENDING.with(|p| p.borrow_mut().take()) {
            Some(raised) => Err(raised),
            None => result,
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Refuses what is not callable.
fn callable(py: Python<'_>, progress: Py<PyAny>) -> PyResult<Py<PyAny>> {
    if progress.bind(py).is_callable() {
        Ok(progress)
    } else {
        Err(PyTypeError::new_err(
            "progress must be a callable taking (phase, done, total), or None",
        ))
    }
}

/// The callable as the engine's progress callback for the phases of later
/// calls on the World at `address`.
fn later(progress: Py<PyAny>, address: usize) -> ProgressFn {
    Arc::new(move |p: &Progress| {
        if PENDING.with(|pending| pending.borrow().is_some()) {
            // It raised already during this call: the rest is skipped.
            return;
        }
        let _held = CallingOut::enter(address);
        Python::attach(|py| {
            if let Err(raised) = progress.call1(py, (p.phase, p.done, p.total)) {
                if DEPTH.with(Cell::get) > 0 {
                    PENDING.with(|pending| *pending.borrow_mut() = Some(raised));
                } else {
                    // A call that does not raise it (none should report):
                    // shown, never lost.
                    raised.write_unraisable(py, Some(progress.bind(py)));
                }
            }
        });
    })
}

/// What the thread opening a save sends the caller.
enum Opening {
    Progress(Progress),
    Done(Box<Result<Engine, rp_core::Error>>),
}

/// Opens the save at `path` on a thread of its own, as
/// [`super::open_interruptibly`] does, calling `progress` on the caller's
/// thread with each report; the World keeps `progress` for later phases.
pub(super) fn open_reporting(
    py: Python<'_>,
    path: PathBuf,
    options: EngineOptions,
    progress: Py<PyAny>,
) -> PyResult<Py<World>> {
    let progress = callable(py, progress)?;
    let (send, receive) = mpsc::channel();
    let reports = send.clone();
    let options = EngineOptions {
        progress: Some(Arc::new(move |p: &Progress| {
            // The receiver is gone when the caller gave up: nobody listens.
            let _ = reports.send(Opening::Progress(*p));
        })),
        ..options
    };
    std::thread::Builder::new()
        .name("rp-open".into())
        .spawn(move || {
            let _ = send.send(Opening::Done(Box::new(Engine::open_with(path, options))));
        })
        .map_err(|error| {
            RpError::new_err(format!(
                "could not start a thread to open the save: {error}"
            ))
        })?;
    let mut receive = receive;
    loop {
        // The receiver is moved in and out: it is not Sync.
        let (receiver, received) = py.detach(move || {
            let received = receive.recv_timeout(SIGNAL_POLL);
            (receive, received)
        });
        receive = receiver;
        match received {
            // An exception abandons the open, as Ctrl-C does: the thread
            // runs on to the end and drops the engine, closing the file.
            Ok(Opening::Progress(p)) => {
                progress.call1(py, (p.phase, p.done, p.total))?;
            }
            Ok(Opening::Done(opened)) => {
                let mut engine = (*opened).map_err(|e| to_py_err(py, e))?;
                engine.set_progress(None);
                let world = Py::new(py, World::new(engine))?;
                let address = world.get().address();
                world.get().with_engine(py, move |engine| {
                    engine.set_progress(Some(later(progress, address)));
                    Ok(())
                })?;
                return Ok(world);
            }
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(RpError::new_err(
                    "opening the save failed: the thread opening it panicked (a bug in rp)",
                ));
            }
        }
    }
}

#[pymethods]
impl World {
    /// Sets the callable that hears the progress of long work from now on
    /// (``None`` removes it): ``progress(phase, done, total)`` for
    /// ``"history.replay"`` (rebuilding a past world: ``memories_at``,
    /// ``beliefs_at``, a query's ``as_of``) and ``"index.build"`` (the
    /// memory index, built on the first recall after opening, a rewind or a
    /// branch switch) and ``"compact"`` (``compact``: four steps);
    /// ``World.open(path, progress=...)`` sets it too, after
    /// reporting the open. Each phase is reported at its start (``done``
    /// 0), at most about every hundredth of its total, and at its end
    /// (``done == total``); later versions add phases.
    ///
    /// The callable runs on the thread of the call doing the work, which
    /// holds the World meanwhile: a call on this World from it raises
    /// ``Conflict``. An exception it raises is kept and raised when that call
    /// returns (the call has then happened whole); its later reports in that
    /// call are skipped.
    ///
    /// Raises ``TypeError`` when ``progress`` is not callable.
    #[pyo3(signature = (progress))]
    fn set_progress(&self, py: Python<'_>, progress: Option<Py<PyAny>>) -> PyResult<()> {
        let progress = progress.map(|p| callable(py, p)).transpose()?;
        let address = self.address();
        self.with_engine(py, move |engine| {
            engine.set_progress(progress.map(|p| later(p, address)));
            Ok(())
        })
    }
}
