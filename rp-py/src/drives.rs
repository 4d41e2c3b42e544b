//! Drives from Python (docs/drives.md): the conversions behind `World.drives`,
//! `initiation_candidates`, `next_tick_at`, `notify`, `configure_drives`,
//! `set_personality` and `report_availability` (rp-core's `Engine::drives`
//! and friends, `rp_core::tick`), and `World.advance`, which plays host time
//! through rp-core's `tick::advance` with the host's Python `generate` as its
//! `Generate`. The tick in its poll form is a [`crate::job::Job`]
//! (`World.begin_tick`).
//!
//! Every rule (what a name resolves to, what a priority or a stimulus kind
//! is, which settings and traits are in range, when a tick is due, how time
//! is played) is rp-core's; what is here only reads the Python values and
//! hands rp-core's answers back as the dicts their JSON makes.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::machine::{Generate, TokenSink, block_on};
use rp_core::tick::TickOptions;
use rp_core::turn::{GenerateRequest, GenerateResult};
use rp_core::{DriveConfig, Engine, ErrorKind, Personality, Priority};
use serde_json::Value;

use crate::json;
use crate::model::{Named, entity_id};
use crate::run_turn::Host;
use crate::world::World;

/// What async callables should use instead of `World.advance`, named in the
/// errors that refuse them.
const ASYNC_FORM: &str = "the poll form (World.next_tick_at, then World.begin_tick returns a \
                          Job whose requests you may await)";

/// Tick options from an optional dict (the defaults when `None`), read by
/// rp-core (every key optional, unknown keys refused: `InvalidInput`); the
/// tick and `advance` check them.
pub(crate) fn tick_options(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<TickOptions> {
    match options {
        Some(dict) => json::from_dict(py, "tick options", dict),
        None => Ok(TickOptions::default()),
    }
}

/// Drive settings from a dict, read as rp-core reads them (every key
/// optional, unknown keys refused); their ranges are checked by the engine
/// when they are recorded.
pub(crate) fn drive_config(py: Python<'_>, config: &Bound<'_, PyDict>) -> PyResult<DriveConfig> {
    json::from_dict(py, "drive settings", config)
}

/// A personality from a dict (traits not given are 0.5, unknown ones
/// refused); the traits' range is checked by the engine when it is recorded.
pub(crate) fn personality(py: Python<'_>, traits: &Bound<'_, PyDict>) -> PyResult<Personality> {
    json::from_dict(py, "personality", traits)
}

/// The priority a host names, by rp-core's names (`Priority::from_name`);
/// another name is an `InvalidInput`.
fn priority(name: &str) -> Result<Priority, rp_core::Error> {
    Priority::from_name(name).map_err(|reason| rp_core::Error::Invalid {
        what: "priority",
        reason,
    })
}

/// `World.drives`: `entity`'s drives at `now`.
pub(crate) fn drives(
    engine: &mut Engine,
    entity: &Named,
    now: i64,
) -> Result<rp_core::drives::Drives, rp_core::Error> {
    let entity = entity_id(engine.world(), entity)?;
    engine.drives(entity, now)
}

/// `World.initiation_candidates`: `entity`'s candidates at `now`, highest
/// pressure first, each as its JSON with its `"explanation"`
/// (`Candidate::explain`).
pub(crate) fn initiation_candidates(
    engine: &mut Engine,
    entity: &Named,
    now: i64,
) -> Result<serde_json::Result<Value>, rp_core::Error> {
    let entity = entity_id(engine.world(), entity)?;
    let candidates = engine.initiation_candidates(entity, now)?;
    let world = engine.world();
    Ok(candidates
        .iter()
        .map(|candidate| {
            let mut value = serde_json::to_value(candidate)?;
            if let Value::Object(fields) = &mut value {
                fields.insert("explanation".into(), candidate.explain(world).into());
            }
            Ok(value)
        })
        .collect::<serde_json::Result<Vec<_>>>()
        .map(Value::Array))
}

/// `World.notify`: a stimulus for `entity`'s inbox; its id.
pub(crate) fn notify(
    engine: &mut Engine,
    entity: &Named,
    kind: &str,
    priority_name: &str,
    payload: &str,
    now: i64,
) -> Result<u64, rp_core::Error> {
    let entity = entity_id(engine.world(), entity)?;
    let priority = priority(priority_name)?;
    engine.notify(entity, kind, priority, payload, now)
}

/// `World.configure_drives`: the world's drive settings (`entity` None) or
/// one entity's; the new head.
pub(crate) fn configure_drives(
    engine: &mut Engine,
    entity: Option<&Named>,
    config: DriveConfig,
) -> Result<u64, rp_core::Error> {
    let entity = entity
        .map(|entity| entity_id(engine.world(), entity))
        .transpose()?;
    engine.configure_drives(entity, config)
}

/// `World.set_personality`: `entity`'s personality; the new head.
pub(crate) fn set_personality(
    engine: &mut Engine,
    entity: &Named,
    personality: Personality,
) -> Result<u64, rp_core::Error> {
    let entity = entity_id(engine.world(), entity)?;
    engine.set_personality(entity, personality)
}

/// `World.report_availability`: `entity`'s availability at `now`; the new
/// head.
pub(crate) fn report_availability(
    engine: &mut Engine,
    entity: &Named,
    availability: f64,
    now: i64,
) -> Result<u64, rp_core::Error> {
    let entity = entity_id(engine.world(), entity)?;
    engine.report_availability(entity, availability, now)
}

/// The host's Python `generate` as rp-core's `Generate`, for
/// `World.advance`. Each request crosses into Python as the requests of the
/// one-call jobs do ([`Host::generation`]), the GIL taken for the call. What
/// the callable raised is kept, and raised as it is once rp-core has
/// returned (rp-core itself sees only its message).
struct PyGenerate {
    generate: Py<PyAny>,
    raised: Mutex<Option<PyErr>>,
}

#[async_trait::async_trait]
impl Generate for PyGenerate {
    async fn generate(
        &self,
        request: &GenerateRequest,
        _sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        Python::attach(|py| {
            let host = Host::generator(self.generate.bind(py).clone(), ASYNC_FORM);
            host.generation(py, request).map_err(|error| {
                let message = error.to_string();
                *self.raised.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
                message
            })
        })
    }
}

/// `World.advance`: plays host time from the world's clock to `until`
/// through rp-core's `tick::advance`, every request answered by `generate`;
/// the ticks' outcomes as a list of dicts.
///
/// rp-core holds the engine for the whole call, so the World's lock is held
/// while `generate` runs: a call on the same World from `generate` raises
/// `Conflict` (see [`World::with_engine_calling_out`]), other threads' calls
/// wait for the end. When `generate` raises, rp-core holds the initiation in
/// progress back (committed, as are the ticks before it) and returns a
/// generation error: what `generate` raised is raised instead, as the
/// one-call jobs raise it (a `GenerationError` from an `Exception`, anything
/// else as it is).
pub(crate) fn advance<'py>(
    world: &Bound<'py, World>,
    until: i64,
    generate: Bound<'py, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = world.py();
    let options = tick_options(py, options)?;
    let model = PyGenerate {
        generate: generate.unbind(),
        raised: Mutex::new(None),
    };
    let played = world.get().with_engine_calling_out(py, |engine| {
        Ok(block_on(rp_core::tick::advance(
            engine, until, &options, &model,
        )))
    })?;
    match played {
        Ok(outcomes) => json::to_py(py, serde_json::to_value(&outcomes)),
        Err(error) => {
            let raised = model
                .raised
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            match raised {
                Some(raised) if error.kind() == ErrorKind::Generation => Err(raised),
                _ => Err(crate::errors::to_py_err(py, error)),
            }
        }
    }
}
