//! Jobs from Python (docs/architecture.md): the sans-IO machines that need the
//! host's model but are not turns, in one poll form. `Job` is a scene close
//! (rp-core's `SceneClose`: one summary per witness), a time skip
//! (`TimeSkip`: the summaries of the scenes it closes), a world query
//! (`QueryMachine`: the query loop) or a tick (`TickMachine`: the
//! initiations of the characters whose pressure crossed), begun by
//! `World.begin_scene_close`, `begin_close_current_scene`,
//! `begin_time_skip`, `begin_query` and `begin_tick`.
//!
//! The same machines run in one call with a plain Python `generate`
//! callable (`World.close_scene`, `close_current_scene`, `time_skip`, `ask`):
//! each request crosses into Python once, is answered as `World.run_turn`'s
//! requests are (see [`crate::run_turn::Host`]), and nothing is committed
//! before the machine finishes, so a `generate` that raises commits nothing.
//! Every call on the engine releases the GIL.

use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::job::{Job as CoreJob, JobOutcome};
use rp_core::query::{QueryConfig, QueryInput, QueryMachine};
use rp_core::scene::SceneOptions;
use rp_core::tick::TickOptions;
use rp_core::turn::{GenerateRequest, Step};
use rp_core::{Engine, SceneId, Skip};

use crate::json;
use crate::model::{Named, container_id, entity_id};
use crate::run_turn::Host;
use crate::world::World;

/// What async callables should use instead of a one-call job, named in the
/// errors that refuse them.
const ASYNC_FORM: &str = "the poll form (World.begin_scene_close, begin_time_skip or \
                          begin_query return a Job whose requests you may await)";

/// A job in progress: a scene closing (one summary per witness), a time
/// skip (the summaries of the scenes it closes), a world query (the
/// model's answer, after as many rounds of asking for more as it needs) or
/// a tick (the first lines of the characters who start a conversation).
/// Begun by ``World.begin_scene_close``, ``begin_close_current_scene``,
/// ``begin_time_skip``, ``begin_query`` or ``begin_tick``; nothing is
/// committed until ``finish()``, but for a tick (see ``World.begin_tick``:
/// its arithmetic is committed when it begins, and each initiation as its
/// turn ends).
///
/// Drive it as a ``Turn``: call ``step()`` until it returns ``{"step":
/// "done"}``, answering each ``"generate"`` step with ``provide()`` (and,
/// for a tick, whose initiations run as turns, each ``"embed"`` step with
/// ``provide_embeddings()`` and each ``"act"`` step with
/// ``provide_action()``); then ``finish()`` commits everything in one
/// transaction and returns what it did. ``abandon()`` drops it, committing
/// nothing more. After either, every call but the properties raises
/// ``Conflict``.
///
/// Calls release the GIL while the engine works. The job refuses to go on
/// (``Conflict``) when its world changed since it began: begin it again.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct Job {
    world: Py<World>,
    kind: &'static str,
    /// `None` once finished or abandoned.
    machine: Mutex<Option<CoreJob>>,
}

/// The error of a call on a job that is over.
fn over() -> rp_core::Error {
    rp_core::Error::Conflict {
        reason: "the job is over (finished or abandoned); begin a new one".into(),
    }
}

impl Job {
    /// Begins a job on `world` with `begin`, run on the engine with the GIL
    /// released.
    fn begin(
        world: &Bound<'_, World>,
        begin: impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send,
    ) -> PyResult<Job> {
        let machine = world.get().with_engine(world.py(), begin)?;
        Ok(Job {
            world: world.clone().unbind(),
            kind: machine.kind().name(),
            machine: Mutex::new(Some(machine)),
        })
    }

    /// Runs `body` on the machine and its world's engine, with the GIL
    /// released.
    fn with_machine<T: Send>(
        &self,
        py: Python<'_>,
        body: impl FnOnce(&mut CoreJob, &mut Engine) -> Result<T, rp_core::Error> + Send,
    ) -> PyResult<T> {
        self.world.get().with_machine(py, &self.machine, over, body)
    }
}

#[pymethods]
impl Job {
    /// What the job needs next, as a dict with ``"step"``: ``"generate"``, a
    /// request for the host's model in the shape of ``Turn.step``'s
    /// (``"purpose"``, ``"messages"``, ``"params"``, and ``"json_schema"``
    /// when the answer must match one); answer it with ``provide()``. Or
    /// ``"done"``: call ``finish()``. Asking again without answering returns
    /// the same request.
    ///
    /// A scene close (and a time skip, for each scene it closes) asks for
    /// one summary per witness, in id order, of purpose ``{"kind":
    /// "summary"}``, each prompt holding only what that witness saw and
    /// heard. A query asks with purpose ``{"kind": "query"}`` and a JSON
    /// schema: the answer is the model's JSON text, either ``{"type":
    /// "answer", "content", "confidence", "sources", ...}`` or ``{"type":
    /// "needs_more_info", "requests": [...]}`` (then it is asked again with
    /// what the requests found).
    ///
    /// A tick asks, for each initiation in turn, for its first line, of
    /// purpose ``{"kind": "initiate", "speaker": id}`` (the prompt says
    /// why it speaks first, and to whom), then for what the rest of its
    /// turn needs, as ``Turn.step`` does: the replies of those who heard
    /// it and answer (``{"kind": "reply", ...}``), ``"embed"`` and ``"act"``
    /// steps when its turn options ask for them.
    ///
    /// Raises ``Conflict`` when the job is over or its world changed.
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let step = self.with_machine(py, |machine, engine| machine.step(engine))?;
        crate::request::step(py, &step)
    }

    /// Answers the last ``"generate"`` step, as ``Turn.provide`` does: the
    /// generated text (``str``), or a result dict with ``"text"`` and
    /// optionally ``"prompt_tokens"``, ``"completion_tokens"`` and
    /// ``"model"``, recorded as given.
    ///
    /// A summary is the witness's memory of the scene: an empty one is
    /// refused (``InvalidInput``) and changes nothing, so provide again. A
    /// query's answer that cannot be read is asked for once more, with what
    /// was wrong, then the query fails (``finish()`` records it as failed).
    ///
    /// Raises ``Conflict`` when no generation was asked for, the job is
    /// over or its world changed; ``InvalidInput`` for a dict that is not a
    /// result; ``TypeError`` for anything but ``str`` or ``dict``.
    fn provide(&self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<()> {
        let result = crate::turn::generate_result(py, result)?;
        self.with_machine(py, |machine, engine| machine.provide(engine, result))
    }

    /// Answers the last ``"embed"`` step (a tick's turn with semantic
    /// recall), as ``Turn.provide_embeddings`` does: one vector per text, in
    /// order, all of the same length.
    ///
    /// Raises ``Conflict`` when no vectors were asked for (every job but a
    /// tick), ``InvalidInput`` for the wrong number of vectors, vectors of
    /// different lengths, or values that are not finite.
    fn provide_embeddings(&self, py: Python<'_>, vectors: Vec<Vec<f32>>) -> PyResult<()> {
        self.with_machine(py, |machine, engine| {
            machine.provide_embeddings(engine, vectors)
        })
    }

    /// Answers the last ``"act"`` step (a host action of a tick's turn), as
    /// ``Turn.provide_action`` does: what the game did (``answer``, any
    /// JSON-like value; ``{}`` for nothing to say), or why it did not
    /// (``refusal``); give exactly one.
    ///
    /// Raises ``TypeError`` when both or neither are given, or for an answer
    /// that cannot become JSON; ``Conflict`` when no host action was asked
    /// for (every job but a tick); ``InvalidInput`` for an answer longer
    /// than a recorded text may be.
    #[pyo3(signature = (answer = None, *, refusal = None))]
    fn provide_action(
        &self,
        py: Python<'_>,
        answer: Option<&Bound<'_, PyAny>>,
        refusal: Option<String>,
    ) -> PyResult<()> {
        let answer = crate::turn::action_answer(answer, refusal)?;
        self.with_machine(py, |machine, engine| machine.provide_action(engine, answer))
    }

    /// The host's model could not answer the last step (or the host gave
    /// up), with ``reason``: ``step()`` returns ``{"step": "done"}`` from
    /// then on. ``finish()`` then records a query as failed, or raises
    /// ``GenerationError`` naming ``reason`` for a scene close or a time
    /// skip, committing nothing (as every machine of rp-core does), and for
    /// a tick, whose initiation in progress is held back one processing
    /// interval (committed at once).
    ///
    /// Raises ``Conflict`` when the job asks for nothing (it has ended, or
    /// waits for ``finish()``), is over, or its world changed.
    fn fail(&self, py: Python<'_>, reason: &str) -> PyResult<()> {
        self.with_machine(py, |machine, engine| machine.fail(engine, reason))
    }

    /// Commits the job in one transaction and returns what it did, as a
    /// dict with ``"seq"`` (the head after the commit) and:
    ///
    /// - a scene close: ``"scene"``, ``"summaries"`` (``[witness,
    ///   memory]`` pairs, in witness id order: each witness's own summary
    ///   memory) and ``"group"`` (the group node created for three or more
    ///   witnesses, or None);
    /// - a time skip: ``"from"`` and ``"to"`` (the clock before and after),
    ///   ``"closed_scenes"`` (dicts with ``"scene"``, ``"summaries"`` and
    ///   ``"group"``), ``"due"`` (the scoped-event transitions run in
    ///   between, in time order: ``{"started", "expired", "held"}``, as
    ///   ``World.run_due`` gives them) and ``"reset"`` (the entities whose
    ///   finished action was cleared);
    /// - a query: ``"query"`` (the record, as ``World.get_query`` gives it),
    ///   ``"context"`` (what the model was last shown) and ``"iterations"``
    ///   (the rounds of asking for more);
    /// - a tick: ``"at"`` (its time), ``"changes"`` (minds that changed:
    ///   ``"entity"``, ``"asleep"`` (True fell asleep, False woke, None),
    ///   ``"processed"`` and ``"filtered"`` stimulus ids),
    ///   ``"initiations"`` (in the order made: ``"candidate"``, as
    ///   ``World.initiation_candidates`` gives it, ``"explanation"`` in
    ///   words, and ``"turn"``, the outcome of its turn as ``Turn.finish``
    ///   gives it), ``"held"`` (``[entity, gates]`` pairs of the
    ///   initiations a gate held back), ``"retries"`` (entities whose
    ///   ``$retry`` fell due: run a wake-up turn near them) and ``"story"``
    ///   (whether scoped events started or expired).
    ///
    /// Raises ``Conflict`` while ``step()`` still asks for something (the
    /// job goes on), when its world changed, or when the job is over. A
    /// failure to commit (``StorageError``) ends the job.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let outcome = self.world.get().with_engine(py, |engine| {
            let mut slot = self.machine.lock().unwrap_or_else(PoisonError::into_inner);
            let job = slot.as_mut().ok_or_else(over)?;
            let outcome = job.finish(engine);
            if job.is_over() {
                *slot = None;
            }
            outcome
        })?;
        outcome_to_py(py, &outcome)
    }

    /// Drops the job without committing anything. Does nothing on a job
    /// that is already over.
    fn abandon(&self, py: Python<'_>) {
        py.detach(|| {
            let machine = self
                .machine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(machine);
        });
    }

    /// Where the job stands, as a dict with ``"kind"`` and ``"done"``
    /// (whether ``finish()`` would commit now), and: for a scene close,
    /// ``"scene"`` and ``"witnesses"`` (who gets a summary, in order; none
    /// when nothing was said in it); for a time skip, ``"to"`` (the time it
    /// lands at) and ``"scenes"`` (the open scenes it closes); for a query,
    /// ``"query"`` (the record so far), ``"context"`` (what the model is
    /// shown) and ``"capabilities"`` (what the pending request offers to
    /// look up); for a tick, ``"at"`` and ``"initiations"`` (how many were
    /// made so far). Raises ``Conflict`` as ``step()`` does.
    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let progress = self.with_machine(py, |machine, engine| machine.progress(engine))?;
        json::json_to_py(py, &progress)
    }

    /// ``"scene_close"``, ``"time_skip"``, ``"query"`` or ``"tick"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether the job goes on: False once ``finish()`` succeeded or
    /// ``abandon()`` was called.
    #[getter]
    fn active(&self, py: Python<'_>) -> bool {
        py.detach(|| {
            self.machine
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
        })
    }

    /// The world the job runs in.
    #[getter]
    fn world(&self, py: Python<'_>) -> Py<World> {
        self.world.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.active(py) { "active" } else { "over" };
        format!("<Job {}, {state}>", self.kind)
    }
}

/// Refuses `to` and `elide` together or both missing, before any engine
/// work.
fn check_skip_args(to: Option<i64>, elide: Option<&Named>) -> PyResult<()> {
    if to.is_some() == elide.is_some() {
        return Err(PyTypeError::new_err(
            "a time skip takes exactly one of to= (a jump to that time, ms) and elide= (an \
             entity whose action to skip through)",
        ));
    }
    Ok(())
}

/// The machine of `World.begin_scene_close`.
fn scene_close(
    scene: u64,
    now: i64,
    options: SceneOptions,
) -> impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send {
    move |engine| {
        engine
            .begin_scene_close(SceneId(scene), now, &options)
            .map(CoreJob::from)
    }
}

/// The machine of `World.begin_close_current_scene`.
fn current_scene_close(
    container: Named,
    now: i64,
    options: SceneOptions,
) -> impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send {
    move |engine| {
        let container = container_id(engine.world(), &container)?;
        engine
            .begin_close_current_scene(container, now, &options)
            .map(CoreJob::from)
    }
}

/// The machine of `World.begin_time_skip` (the keywords checked already).
fn time_skip(
    to: Option<i64>,
    elide: Option<Named>,
    options: SceneOptions,
) -> impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send {
    move |engine| {
        let skip = match (to, elide) {
            (Some(to), None) => Skip::Jump { to },
            (None, Some(entity)) => Skip::Elision {
                entity: entity_id(engine.world(), &entity)?,
            },
            _ => {
                return Err(rp_core::Error::Invalid {
                    what: "time skip",
                    reason: "give exactly one of to= and elide=".into(),
                });
            }
        };
        engine.begin_time_skip(skip, &options).map(CoreJob::from)
    }
}

/// The machine of `World.begin_query`.
fn query(
    text: String,
    now: i64,
    as_entity: Option<Named>,
    config: QueryConfig,
) -> impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send {
    move |engine| {
        let asked_as = match (&config.as_of, as_entity) {
            // Asked about the past: a name as it was then.
            (Some(at), Some(entity)) => Some(crate::history::entity_then(engine, &entity, at)?),
            (None, Some(entity)) => Some(entity_id(engine.world(), &entity)?),
            (_, None) => None,
        };
        let input = QueryInput {
            text,
            asked_as,
            now,
            config,
        };
        QueryMachine::begin(engine, input).map(CoreJob::from)
    }
}

/// The machine of `World.begin_tick`.
fn tick(
    now: i64,
    options: TickOptions,
) -> impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send {
    move |engine| engine.begin_tick(now, options).map(CoreJob::from)
}

/// A query configuration from an optional dict (the defaults when `None`),
/// every key optional, unknown keys and values out of range refused
/// (`InvalidInput`), with the point `as_of` names (docs/history.md), given
/// either there or in the configuration, not both.
fn query_config(
    py: Python<'_>,
    config: Option<&Bound<'_, PyDict>>,
    as_of: Option<&Bound<'_, PyDict>>,
) -> PyResult<QueryConfig> {
    let mut config: QueryConfig = match config {
        Some(dict) => json::from_dict(py, "query config", dict)?,
        None => QueryConfig::default(),
    };
    if let Some(dict) = as_of {
        if config.as_of.is_some() {
            return Err(crate::errors::to_py_err(
                py,
                rp_core::Error::Invalid {
                    what: "query config",
                    reason: "as_of is given twice: as a keyword and in the config".into(),
                },
            ));
        }
        config.as_of = Some(crate::history::as_of_dict(py, dict)?);
    }
    config
        .check()
        .map_err(|error| crate::errors::to_py_err(py, error))?;
    Ok(config)
}

/// `World.begin_scene_close`.
pub(crate) fn begin_scene_close(
    world: &Bound<'_, World>,
    scene: u64,
    now: i64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Job> {
    let options = crate::scene::scene_options(world.py(), options)?;
    Job::begin(world, scene_close(scene, now, options))
}

/// `World.begin_close_current_scene`.
pub(crate) fn begin_close_current_scene(
    world: &Bound<'_, World>,
    container: Named,
    now: i64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Job> {
    let options = crate::scene::scene_options(world.py(), options)?;
    Job::begin(world, current_scene_close(container, now, options))
}

/// `World.begin_time_skip`.
pub(crate) fn begin_time_skip(
    world: &Bound<'_, World>,
    to: Option<i64>,
    elide: Option<Named>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Job> {
    check_skip_args(to, elide.as_ref())?;
    let options = crate::scene::scene_options(world.py(), options)?;
    Job::begin(world, time_skip(to, elide, options))
}

/// `World.begin_query`.
pub(crate) fn begin_query(
    world: &Bound<'_, World>,
    text: String,
    now: i64,
    as_entity: Option<Named>,
    config: Option<&Bound<'_, PyDict>>,
    as_of: Option<&Bound<'_, PyDict>>,
) -> PyResult<Job> {
    let config = query_config(world.py(), config, as_of)?;
    Job::begin(world, query(text, now, as_entity, config))
}

/// `World.begin_tick`.
pub(crate) fn begin_tick(
    world: &Bound<'_, World>,
    now: i64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Job> {
    let options = crate::drives::tick_options(world.py(), options)?;
    Job::begin(world, tick(now, options))
}

/// `World.close_scene`.
pub(crate) fn close_scene<'py>(
    world: &Bound<'py, World>,
    scene: u64,
    now: i64,
    generate: Bound<'py, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = crate::scene::scene_options(world.py(), options)?;
    run(world, generate, scene_close(scene, now, options))
}

/// `World.close_current_scene`.
pub(crate) fn close_current_scene<'py>(
    world: &Bound<'py, World>,
    container: Named,
    now: i64,
    generate: Bound<'py, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = crate::scene::scene_options(world.py(), options)?;
    run(
        world,
        generate,
        current_scene_close(container, now, options),
    )
}

/// `World.time_skip`.
pub(crate) fn run_time_skip<'py>(
    world: &Bound<'py, World>,
    to: Option<i64>,
    elide: Option<Named>,
    generate: Bound<'py, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    check_skip_args(to, elide.as_ref())?;
    let options = crate::scene::scene_options(world.py(), options)?;
    run(world, generate, time_skip(to, elide, options))
}

/// `World.ask`.
pub(crate) fn ask<'py>(
    world: &Bound<'py, World>,
    text: String,
    now: i64,
    generate: Bound<'py, PyAny>,
    as_entity: Option<Named>,
    config: Option<&Bound<'_, PyDict>>,
    as_of: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = query_config(world.py(), config, as_of)?;
    run(world, generate, query(text, now, as_entity, config))
}

/// Where a job driven in one call stands after a call on its machine.
enum Progress {
    /// It needs a generation.
    Next(Box<CoreJob>, GenerateRequest),
    /// It is committed.
    Done(JobOutcome),
}

/// Asks `job` for its next step, and finishes it when there is none left.
fn advance(engine: &mut Engine, mut job: Box<CoreJob>) -> Result<Progress, rp_core::Error> {
    match job.step(engine)? {
        Step::Generate(request) => Ok(Progress::Next(job, request)),
        Step::Done => Ok(Progress::Done(job.finish(engine)?)),
        Step::Embed(_) | Step::Act(_) => Err(rp_core::Error::Conflict {
            reason: "a job asks only for generations".into(),
        }),
    }
}

/// Begins a job with `begin`, answers each of its requests with `generate`
/// and finishes it; returns the outcome dict. Each call on the machine takes
/// the World's lock with the GIL released; `generate` runs between them,
/// without the lock. When `generate` raises, the job is failed and finished
/// as rp-core's `machine::run` does (a query is recorded as failed; a scene
/// close or a time skip commits nothing), and the exception is raised.
fn run<'py>(
    world: &Bound<'py, World>,
    generate: Bound<'py, PyAny>,
    begin: impl FnOnce(&mut Engine) -> Result<CoreJob, rp_core::Error> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let py = world.py();
    let host = Host::generator(generate, ASYNC_FORM);
    let world = world.get();
    let mut progress = world.with_engine(py, |engine| {
        let job = Box::new(begin(engine)?);
        advance(engine, job)
    })?;
    loop {
        match progress {
            Progress::Done(outcome) => return outcome_to_py(py, &outcome),
            Progress::Next(mut job, request) => match host.generation(py, &request) {
                Ok(result) => {
                    progress = world.with_engine(py, move |engine| {
                        job.provide(engine, result)?;
                        advance(engine, job)
                    })?;
                }
                Err(error) => {
                    let reason = format!("generation failed: {error}");
                    world.with_engine(py, move |engine| {
                        job.fail(engine, &reason)?;
                        match job.finish(engine) {
                            Err(e) if e.kind() != rp_core::ErrorKind::Generation => Err(e),
                            _ => Ok(()),
                        }
                    })?;
                    return Err(error);
                }
            },
        }
    }
}

/// A job's outcome as the dict its machine's outcome makes (through its JSON: the pairs of
/// `"summaries"` are lists there).
fn outcome_to_py<'py>(py: Python<'py>, outcome: &JobOutcome) -> PyResult<Bound<'py, PyAny>> {
    json::to_py(py, serde_json::to_value(outcome))
}
