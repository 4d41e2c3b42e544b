//! World queries on `World`: a question about the world answered by the
//! host's model, as a `Job` (`begin_query()`) or in one call (`ask()`), and
//! the records of the queries asked (`get_query()`, `recent_queries()`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::World;
use crate::job::Job;
use crate::model::Named;

#[pymethods]
impl World {
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
    /// ``as_of`` asks about the past (docs/history.md): a dict
    /// ``{"seq": 120}`` or ``{"time": 3600000}``, optionally with
    /// ``"branch"``; the context is built from the world as it was then, as
    /// ``as_entity`` (named as it was then) saw it, and the record, committed
    /// now, notes it in its ``"config"``.
    ///
    /// Raises ``InvalidInput`` (an empty or over-long text, a bad config, an
    /// ``as_of`` seq outside its branch or time before the world),
    /// ``NotFound`` (``as_entity``, or one that did not exist then; an
    /// unknown ``as_of`` branch).
    #[pyo3(signature = (text, *, now, as_entity = None, config = None, as_of = None))]
    fn begin_query(
        slf: &Bound<'_, Self>,
        text: String,
        now: i64,
        as_entity: Option<Named>,
        config: Option<&Bound<'_, PyDict>>,
        as_of: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Job> {
        crate::job::begin_query(slf, text, now, as_entity, config, as_of)
    }

    /// Asks a world query in one call (see ``begin_query``), with the
    /// host's model behind ``generate`` (as for ``close_scene``), and
    /// returns the outcome dict of ``Job.finish`` (``"seq"``, ``"query"``,
    /// ``"context"``, ``"iterations"``): the answer is
    /// ``outcome["query"]["answer"]``. When ``generate`` raises, nothing is
    /// committed (not even a failed record).
    #[pyo3(signature = (text, *, now, generate, as_entity = None, config = None, as_of = None))]
    fn ask<'py>(
        slf: &Bound<'py, Self>,
        text: String,
        now: i64,
        generate: Bound<'py, PyAny>,
        as_entity: Option<Named>,
        config: Option<&Bound<'_, PyDict>>,
        as_of: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::job::ask(slf, text, now, generate, as_entity, config, as_of)
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
}
