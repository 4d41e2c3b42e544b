//! Scoped events and threads from Python (docs/story.md): the typed
//! snapshots `ScopedEvent` and `Thread`, and the conversions behind
//! `World.plan_event`, `complete_event`, `open_thread` and friends (rp-core's
//! `Engine::plan_event`, ..., `World::scoped_events`, `World::threads`).
//!
//! Hooks (`on_start`, `on_complete`) and promotions cross as dicts in the
//! JSON shape rp-core reads (``{"type": "system_line", "text": "..."}``,
//! ``{"items": [{"item": 7, "to": 3}], "gists": [...]}``); participants are
//! named as everywhere else in `World` (an id, key, name or alias).

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::model::Effect;
use rp_core::story::EventPlan;
use rp_core::{Engine, EntityId, Promotion, ScopedEventId, World};

use crate::json;
use crate::model::{Named, entity_id};

/// The JSON name of a serde enum value (`"planned"`).
fn status_name(value: impl serde::Serialize + std::fmt::Debug) -> String {
    match serde_json::to_value(&value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{value:?}"),
    }
}

/// A scoped event: something with a beginning and an end (a picnic, a
/// duel) whose props are in its participants' prompts only while it is
/// active (a snapshot, taken when read).
///
/// ``status`` is ``"planned"``, ``"active"``, ``"completed"``,
/// ``"cancelled"`` or ``"expired"``. A closed event keeps its props here for
/// the host; no prompt shows them again. ``to_dict()`` gives the record as
/// the JSON rp-core writes.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct ScopedEvent(pub(crate) rp_core::ScopedEvent);

#[pymethods]
impl ScopedEvent {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id.0
    }
    /// Its name ("the picnic").
    #[getter]
    fn name(&self) -> String {
        self.0.name.clone()
    }
    /// Where it stands: ``"planned"``, ``"active"``, ``"completed"``,
    /// ``"cancelled"`` or ``"expired"``.
    #[getter]
    fn status(&self) -> String {
        status_name(self.0.status)
    }
    /// Its props: name → description.
    #[getter]
    fn props(&self) -> BTreeMap<String, String> {
        self.0.props.clone()
    }
    /// The ids of who takes part (only their prompts show it).
    #[getter]
    fn participants(&self) -> Vec<u64> {
        self.0.participants.iter().map(|id| id.0).collect()
    }
    /// The ``$if`` expressions that must all hold for it to start.
    #[getter]
    fn preconditions(&self) -> Vec<String> {
        self.0.preconditions.clone()
    }
    /// The effects run when it starts, as dicts with a ``"type"``.
    #[getter]
    fn on_start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0.on_start))
    }
    /// The effects run when it completes, as dicts with a ``"type"``.
    #[getter]
    fn on_complete<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0.on_complete))
    }
    /// How much it matters, 0–1.
    #[getter]
    fn significance(&self) -> f64 {
        self.0.significance
    }
    /// When it is due to start by itself (host clock, ms), or None.
    #[getter]
    fn start_at(&self) -> Option<i64> {
        self.0.start_at
    }
    /// The ``$if`` expression that starts it by itself when it holds, or
    /// None.
    #[getter]
    fn start_when(&self) -> Option<String> {
        self.0.start_when.clone()
    }
    /// When it expires if still open (host clock, ms), or None.
    #[getter]
    fn expire_at(&self) -> Option<i64> {
        self.0.expire_at
    }
    /// When it started, or None.
    #[getter]
    fn started(&self) -> Option<i64> {
        self.0.started
    }
    /// When it closed, or None.
    #[getter]
    fn closed(&self) -> Option<i64> {
        self.0.closed
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        format!(
            "ScopedEvent(id={}, name={:?}, status={:?}, participants={:?})",
            self.0.id.0,
            self.0.name,
            self.status(),
            self.participants()
        )
    }
}

/// A thread: an unresolved tension, in its participants' prompts until it
/// is resolved or dropped (a snapshot, taken when read).
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Thread(pub(crate) rp_core::Thread);

#[pymethods]
impl Thread {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id.0
    }
    /// What is unresolved, in prose.
    #[getter]
    fn text(&self) -> String {
        self.0.text.clone()
    }
    /// The ids of whose prompts carry it while it is open.
    #[getter]
    fn participants(&self) -> Vec<u64> {
        self.0.participants.iter().map(|id| id.0).collect()
    }
    /// When it was opened (host clock, ms).
    #[getter]
    fn opened(&self) -> i64 {
        self.0.opened
    }
    /// ``"open"``, ``"resolved"`` or ``"dropped"``.
    #[getter]
    fn status(&self) -> String {
        status_name(self.0.status)
    }
    /// The id of the scoped event whose hook opened it, or None (the host
    /// opened it).
    #[getter]
    fn event(&self) -> Option<u64> {
        self.0.event.map(|id| id.0)
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        format!(
            "Thread(id={}, text={:?}, status={:?})",
            self.0.id.0,
            self.0.text,
            self.status()
        )
    }
}

/// A plan as `World.plan_event` takes it, its effects already read; the
/// participants are resolved against the world under the engine's lock.
pub(crate) struct NewEvent {
    pub(crate) name: String,
    pub(crate) participants: Vec<Named>,
    pub(crate) props: BTreeMap<String, String>,
    pub(crate) preconditions: Vec<String>,
    pub(crate) on_start: Vec<Effect>,
    pub(crate) on_complete: Vec<Effect>,
    pub(crate) significance: f64,
    pub(crate) start_at: Option<i64>,
    pub(crate) start_when: Option<String>,
    pub(crate) expire_at: Option<i64>,
}

/// Reads hook effects from their dicts; one that does not match is
/// `InvalidInput` naming the hook and its index.
pub(crate) fn effects(
    py: Python<'_>,
    hook: &'static str,
    dicts: Option<Vec<Bound<'_, PyDict>>>,
) -> PyResult<Vec<Effect>> {
    dicts
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, dict)| {
            let json = json::py_to_json(dict.as_any())?;
            serde_json::from_value(json).map_err(|error| {
                crate::errors::to_py_err(
                    py,
                    rp_core::Error::Invalid {
                        what: hook,
                        reason: format!("effect {i}: {error}"),
                    },
                )
            })
        })
        .collect()
}

/// Reads a promotion from its dict (None: nothing promoted).
pub(crate) fn promotion(py: Python<'_>, dict: Option<&Bound<'_, PyDict>>) -> PyResult<Promotion> {
    match dict {
        None => Ok(Promotion::default()),
        Some(dict) => json::from_dict(py, "promotion", dict),
    }
}

/// The ids of `named` in `world`.
pub(crate) fn entity_ids(world: &World, named: &[Named]) -> Result<Vec<EntityId>, rp_core::Error> {
    named.iter().map(|n| entity_id(world, n)).collect()
}

/// Plans `new` at `now`.
pub(crate) fn plan_event(
    engine: &mut Engine,
    new: NewEvent,
    now: i64,
) -> Result<u64, rp_core::Error> {
    let plan = EventPlan {
        participants: entity_ids(engine.world(), &new.participants)?,
        name: new.name,
        props: new.props,
        preconditions: new.preconditions,
        on_start: new.on_start,
        on_complete: new.on_complete,
        significance: new.significance,
        start_at: new.start_at,
        start_when: new.start_when,
        expire_at: new.expire_at,
    };
    Ok(engine.plan_event(plan, now)?.0)
}

/// The scoped event `id`, or `NotFound`.
pub(crate) fn scoped_event(world: &World, id: u64) -> Result<ScopedEvent, rp_core::Error> {
    world
        .scoped_event(ScopedEventId(id))
        .map(|e| ScopedEvent(e.clone()))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "scoped event",
            id: ScopedEventId(id).to_string(),
        })
}
