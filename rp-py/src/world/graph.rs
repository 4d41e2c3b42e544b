//! The relationship graph of `World`: its queries (`relationships_of()`,
//! `connected()`, `path()`, `shared_connections()`, `graph_stats()`), and
//! the drawings for notebooks (`_repr_html_()`, `graph()`, `graph_svg()`),
//! which are written in Python (`python/rp_engine/_notebook.py`).

use pyo3::prelude::*;

use super::World;
use crate::errors::to_py_err;
use crate::model::{Edge, Named};

#[pymethods]
impl World {
    /// The edges of ``entities`` (ids, keys, names or aliases) along
    /// ``direction`` (``"outgoing"``: what they feel about others,
    /// ``"incoming"``: what others feel about them, or ``"both"``), for each
    /// entity in order outgoing then incoming, each edge once, at most
    /// ``limit`` (1–10000), as ``Edge`` snapshots.
    ///
    /// Raises ``NotFound`` (an entity), ``InvalidInput`` (direction, limit).
    #[pyo3(signature = (entities, *, direction = "both", limit = 100))]
    fn relationships_of(
        &self,
        py: Python<'_>,
        entities: Vec<Named>,
        direction: &str,
        limit: usize,
    ) -> PyResult<Vec<Edge>> {
        let direction = crate::graph::direction(direction).map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| {
            crate::graph::relationships_of(engine, &entities, direction, limit)
        })
    }

    /// The entities reachable from ``entity`` (an id, key, name or alias)
    /// in at most ``max_hops`` hops (1–6) along ``direction`` (see
    /// ``relationships_of``), nearest first, each once, ``entity`` itself
    /// left out, at most ``limit``, as ``(entity, hops)`` pairs (``hops ==
    /// 1``: a direct neighbour).
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (``max_hops``, direction,
    /// limit).
    #[pyo3(signature = (entity, *, max_hops = 2, direction = "outgoing", limit = 100))]
    fn connected(
        &self,
        py: Python<'_>,
        entity: Named,
        max_hops: u32,
        direction: &str,
        limit: usize,
    ) -> PyResult<Vec<(u64, u32)>> {
        let direction = crate::graph::direction(direction).map_err(|e| to_py_err(py, e))?;
        self.with_engine(py, |engine| {
            crate::graph::connected(engine, &entity, max_hops, direction, limit)
        })
    }

    /// The shortest chain of acquaintance from ``a`` to ``b`` (ids, keys,
    /// names or aliases) following edge direction (``a`` has an edge to x,
    /// x to ``b``), both ends included, of at most ``max_hops`` hops (1–6);
    /// None when there is none.
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (``max_hops``).
    #[pyo3(signature = (a, b, *, max_hops = 4))]
    fn path(
        &self,
        py: Python<'_>,
        a: Named,
        b: Named,
        max_hops: u32,
    ) -> PyResult<Option<Vec<u64>>> {
        self.with_engine(py, |engine| crate::graph::path(engine, &a, &b, max_hops))
    }

    /// The entities that share neighbours (either direction) with
    /// ``entity`` (an id, key, name or alias), most shared first (ties by
    /// id), at most ``limit``, as ``(entity, shared)`` pairs.
    ///
    /// Raises ``NotFound``, ``InvalidInput`` (limit).
    #[pyo3(signature = (entity, *, limit = 20))]
    fn shared_connections(
        &self,
        py: Python<'_>,
        entity: Named,
        limit: usize,
    ) -> PyResult<Vec<(u64, u32)>> {
        self.with_engine(py, |engine| {
            crate::graph::shared_connections(engine, &entity, limit)
        })
    }

    /// Figures of the relationship graph, as a dict: ``"entities"``,
    /// ``"edges"`` (directed), ``"mutual_pairs"`` (an edge each way, counted
    /// once), ``"isolated"`` (no edge either way), ``"max_outgoing"``,
    /// ``"max_incoming"`` and ``"mean_degree"``.
    fn graph_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.with_engine(py, |engine| Ok(engine.relationships().stats()))?;
        crate::json::serialize(py, &stats)
    }

    /// The world as HTML, for notebooks: who is where, what they do, and the
    /// relationship graph.
    fn _repr_html_<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        notebook(slf.py(), "world_html")?.call1((slf,))
    }

    /// The relationship graph as a ``Graph``: entities with their places,
    /// directed edges coloured and labelled by affinity. It shows itself in
    /// a notebook (``_repr_svg_``) and has ``.svg`` and ``save(path)``.
    fn graph<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        notebook(slf.py(), "graph")?.call1((slf,))
    }

    /// The relationship graph as an SVG document (a ``str``), drawn by the
    /// package itself: ``graph().svg``.
    fn graph_svg<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::graph(slf)?.getattr("svg")
    }
}

/// The function `rp_engine._notebook.<function>`, which draws the world.
fn notebook<'py>(py: Python<'py>, function: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("rp_engine._notebook")?.getattr(function)
}
