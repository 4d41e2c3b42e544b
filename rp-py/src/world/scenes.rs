//! Scenes and time skips on `World`: opening scenes and reading them,
//! which are due to close, closing one (a `Job`, or in one call with a
//! Python `generate`), and time skips in the same two forms. The scene
//! conversions are in [`crate::scene`], the jobs in [`crate::job`].

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::World;
use crate::job::Job;
use crate::model::Named;
use crate::scene::Scene;

#[pymethods]
impl World {
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
}
