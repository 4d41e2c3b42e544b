//! The past on `World` (docs/history.md): what an entity could recall and
//! what it believed at a point of history (rp-core's `Engine::memories_at`,
//! `Engine::beliefs_at`), and the point a world query is asked about
//! (`as_of=` of `begin_query` and `ask`).
//!
//! A point is read by rp-core's one rule (`AsOf`, from the JSON object C
//! takes), so a bad point gives the same error kind in Rust, C and Python.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::{AsOf, Engine, EntityId};

use crate::model::{Memory, Named};
use crate::world::World;

/// The point `seq` / `time` / `branch` name, read as rp-core reads the JSON
/// object `{"seq": .., "time": .., "branch": ..}` (keys left out when
/// `None`): exactly one of `seq` and `time`, else `InvalidInput`.
fn as_of(
    py: Python<'_>,
    seq: Option<i64>,
    time: Option<i64>,
    branch: Option<String>,
) -> PyResult<AsOf> {
    let mut fields = serde_json::Map::new();
    if let Some(seq) = seq {
        fields.insert("seq".into(), seq.into());
    }
    if let Some(time) = time {
        fields.insert("time".into(), time.into());
    }
    if let Some(branch) = branch {
        fields.insert("branch".into(), branch.into());
    }
    rp_core::json::from_value("as_of", serde_json::Value::Object(fields))
        .map_err(|error| crate::errors::to_py_err(py, error))
}

/// The point an `as_of=` dict names (`{"seq": 120}`, `{"time": 3600000}`,
/// either with `"branch"`), read by rp-core's rule.
pub(crate) fn as_of_dict(py: Python<'_>, dict: &Bound<'_, PyDict>) -> PyResult<AsOf> {
    crate::json::from_dict(py, "as_of", dict)
}

/// The entity `named` names at `at`: an id as it is (checked against the
/// world of then by the call that uses it), a key, name or alias resolved
/// in the world as it was then (names change).
pub(crate) fn entity_then(
    engine: &mut Engine,
    named: &Named,
    at: &AsOf,
) -> Result<EntityId, rp_core::Error> {
    match named {
        Named::Id(id) => Ok(EntityId(*id)),
        Named::Name(_) => crate::model::entity_id(&engine.world_at(at)?, named),
    }
}

#[pymethods]
impl World {
    /// What ``entity`` could recall at a point of history, as ``Memory``
    /// snapshots, oldest first: its own memories, witnessed by it and
    /// recallable then (not forgotten, not a residue, not the line of a
    /// closed scene), exactly as a replay of the log to that point has them.
    ///
    /// The point is ``seq`` (right after that event) or ``time`` (host ms:
    /// after the last event whose clock was at or before it), exactly one
    /// of them, on ``branch`` (default: the current one). ``entity`` is an
    /// id, or a key, name or alias as it was then. Reading only; nearby
    /// points answer fast once one was asked (docs/history.md).
    ///
    /// Raises ``NotFound`` (an unknown branch, an entity that did not exist
    /// then), ``InvalidInput`` (both or neither of ``seq`` and ``time``, a
    /// seq outside the branch, a time before the world).
    #[pyo3(signature = (entity, *, seq = None, time = None, branch = None))]
    fn memories_at(
        &self,
        py: Python<'_>,
        entity: Named,
        seq: Option<i64>,
        time: Option<i64>,
        branch: Option<String>,
    ) -> PyResult<Vec<Memory>> {
        let at = as_of(py, seq, time, branch)?;
        self.with_engine(py, move |engine| {
            let entity = entity_then(engine, &entity, &at)?;
            let found = engine.memories_at(entity, &at)?;
            Ok(found.memories.into_iter().map(Memory).collect())
        })
    }

    /// What ``entity`` believed at a point of history (named as for
    /// ``memories_at``), as a dict: ``"entity"``, ``"branch"``, ``"seq"``
    /// (the point it came to), ``"now"`` (that world's clock, at which the
    /// confidences are read), ``"beliefs"`` (per person, as ``beliefs()``
    /// gives them) and ``"edges"`` (its own edges then, as dicts).
    ///
    /// Raises as ``memories_at``.
    #[pyo3(signature = (entity, *, seq = None, time = None, branch = None))]
    fn beliefs_at<'py>(
        &self,
        py: Python<'py>,
        entity: Named,
        seq: Option<i64>,
        time: Option<i64>,
        branch: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let at = as_of(py, seq, time, branch)?;
        let found = self.with_engine(py, move |engine| {
            let entity = entity_then(engine, &entity, &at)?;
            engine.beliefs_at(entity, &at)
        })?;
        crate::json::to_py(py, serde_json::to_value(found))
    }
}
