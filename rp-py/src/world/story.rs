//! Scoped events and threads on `World`: planning, starting, completing,
//! cancelling and expiring events (`plan_event()`, ..., `run_due()`),
//! opening and closing threads, and reading both as snapshots. Their
//! conversions are in [`crate::story`].

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::World;
use crate::model::Named;
use crate::story::{ScopedEvent, Thread};

#[pymethods]
impl World {
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
}
