//! Scenes from Python (docs/architecture.md): the typed snapshot `Scene`,
//! the scene options as a dict, and the reads and edits behind
//! `World.open_scene`, `scenes`, `scene`, `current_scene`, `scene_of` and
//! `due_scenes` (rp-core's `Engine::open_scene`, `due_scenes`, and
//! `World::scene`, `open_scenes`, `current_scene`, `scene_of`).
//!
//! Closing a scene goes through the host's model, one summary per witness:
//! that is a [`crate::job::Job`].

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::scene::SceneOptions;
use rp_core::{Engine, SceneId};

use crate::json;
use crate::model::{Named, container_id, entity_id};

/// A scene: a stretch of story in one container, from when it opened to
/// when it closed, the boundary at which its dialogue is compressed into one
/// summary memory per witness (a snapshot, taken when read).
///
/// ``witnesses`` are the entities present when it opened and everyone who
/// heard one of its lines; ``lines`` counts its lines and ``last_line`` is
/// when the newest was said (None before the first). ``closed`` is None
/// while it is open. ``to_dict()`` gives the record as the JSON rp-core
/// writes.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(Clone, PartialEq)]
pub(crate) struct Scene(pub(crate) rp_core::Scene);

#[pymethods]
impl Scene {
    /// Its id.
    #[getter]
    fn id(&self) -> u64 {
        self.0.id.0
    }
    /// The id of the container it happens in.
    #[getter]
    fn container(&self) -> u64 {
        self.0.container.0
    }
    /// When it opened (host clock, ms).
    #[getter]
    fn opened(&self) -> i64 {
        self.0.opened
    }
    /// When it closed, or None while it is open.
    #[getter]
    fn closed(&self) -> Option<i64> {
        self.0.closed
    }
    /// Whether it is still open.
    #[getter]
    fn is_open(&self) -> bool {
        self.0.is_open()
    }
    /// The ids of who was there, in id order.
    #[getter]
    fn witnesses(&self) -> Vec<u64> {
        self.0.witnesses.iter().map(|id| id.0).collect()
    }
    /// How many lines were said in it.
    #[getter]
    fn lines(&self) -> u32 {
        self.0.lines
    }
    /// When its newest line was said, or None before the first.
    #[getter]
    fn last_line(&self) -> Option<i64> {
        self.0.last_line
    }
    /// Every field, as the JSON rp-core writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, serde_json::to_value(&self.0))
    }
    fn __repr__(&self) -> String {
        let state = match self.0.closed {
            Some(at) => format!("closed at {at}"),
            None => "open".to_owned(),
        };
        format!(
            "Scene(id={}, container={}, opened={}, {state}, witnesses={:?}, lines={})",
            self.0.id.0,
            self.0.container.0,
            self.0.opened,
            self.witnesses(),
            self.0.lines
        )
    }
}

/// Scene options from an optional dict (the defaults when `None`), every key
/// optional and unknown keys refused (`InvalidInput`); ranges are checked too.
pub(crate) fn scene_options(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<SceneOptions> {
    let options = match options {
        Some(dict) => json::from_dict(py, "scene options", dict)?,
        None => SceneOptions::default(),
    };
    options
        .check()
        .map_err(|error| crate::errors::to_py_err(py, error))?;
    Ok(options)
}

/// `World.open_scene`: opens a scene in `container` at `now`.
pub(crate) fn open_scene(
    engine: &mut Engine,
    container: &Named,
    now: i64,
) -> Result<u64, rp_core::Error> {
    let container = container_id(engine.world(), container)?;
    Ok(engine.open_scene(container, now)?.0)
}

/// `World.scenes`: every scene (or only the open ones), in id order.
pub(crate) fn scenes(engine: &Engine, open_only: bool) -> Vec<Scene> {
    let world = engine.world();
    if open_only {
        world.open_scenes().map(|s| Scene(s.clone())).collect()
    } else {
        world.scenes().map(|s| Scene(s.clone())).collect()
    }
}

/// `World.scene`: the scene with id `scene`.
pub(crate) fn scene(engine: &Engine, scene: u64) -> Result<Scene, rp_core::Error> {
    engine
        .world()
        .scene(SceneId(scene))
        .map(|s| Scene(s.clone()))
        .ok_or_else(|| rp_core::Error::NotFound {
            what: "scene",
            id: scene.to_string(),
        })
}

/// `World.current_scene`: the open scene of `container`, if any.
pub(crate) fn current_scene(
    engine: &Engine,
    container: &Named,
) -> Result<Option<Scene>, rp_core::Error> {
    let world = engine.world();
    let container = container_id(world, container)?;
    Ok(world.current_scene(container).map(|s| Scene(s.clone())))
}

/// `World.scene_of`: the open scene where `entity` stands, if any.
pub(crate) fn scene_of(engine: &Engine, entity: &Named) -> Result<Option<Scene>, rp_core::Error> {
    let world = engine.world();
    let entity = entity_id(world, entity)?;
    Ok(world.scene_of(entity).map(|s| Scene(s.clone())))
}

/// `World.due_scenes`: the open scenes due to close at `now`, oldest first,
/// each as the JSON of its reason with its `"scene"`.
pub(crate) fn due_scenes(
    engine: &Engine,
    now: i64,
    options: &SceneOptions,
) -> serde_json::Result<serde_json::Value> {
    let mut due = Vec::new();
    for (scene, reason) in engine.due_scenes(now, options) {
        let mut value = serde_json::to_value(reason)?;
        if let serde_json::Value::Object(fields) = &mut value {
            fields.insert("scene".into(), scene.0.into());
        }
        due.push(value);
    }
    Ok(serde_json::Value::Array(due))
}
