//! `Decision`: whether a character responds, and why (rp-core's
//! `facts::Decision`).

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::json::json_to_py;

/// Whether a character responds to a message, and why: the outcome of
/// ``World.decide``.
///
/// Immutable. ``trace`` lists, in order, each sheet line that fired, each
/// random draw and each runtime error, as dicts with ``"line"`` (1-based) and
/// ``"kind"`` (``"fired"``, ``"random"``, ``"chance"``, ``"roll"`` or
/// ``"error"``) plus that kind's fields; ``explain()`` renders it as text.
#[pyclass(frozen, eq, module = "rp_engine")]
#[derive(PartialEq)]
pub(crate) struct Decision(pub(crate) rp_core::facts::Decision);

#[pymethods]
impl Decision {
    /// Whether the character responds now.
    #[getter]
    fn respond(&self) -> bool {
        self.0.respond
    }

    /// When a ``$retry`` fired: decide again after this many milliseconds
    /// (and do not respond now); otherwise ``None``.
    #[getter]
    fn retry_ms(&self) -> Option<u64> {
        self.0.retry_ms
    }

    /// The facts that apply: the sheet's plain lines, and the text of the
    /// conditional lines that fired.
    #[getter]
    fn facts(&self) -> Vec<String> {
        self.0.facts.iter().map(|f| f.to_string()).collect()
    }

    /// Why, in order: a dict per event, with ``"line"`` and ``"kind"``.
    #[getter]
    fn trace<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let entries = self
            .0
            .trace
            .iter()
            .map(|entry| {
                let json = serde_json::to_value(entry).map_err(|error| {
                    pyo3::exceptions::PyRuntimeError::new_err(error.to_string())
                })?;
                json_to_py(py, &json)
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, entries)
    }

    /// Every random number drawn, in order (what a replay reproduces).
    #[getter]
    fn draws(&self) -> Vec<f64> {
        self.0.draws.clone()
    }

    /// The trace as text a writer can read, one line per event, then the
    /// outcome (``"→ responds"``, ``"→ stays silent"`` or
    /// ``"→ not now; evaluate again in 5000 ms"``).
    fn explain(&self) -> String {
        self.0.explain()
    }

    fn __repr__(&self) -> String {
        let decision = &self.0;
        let respond = if decision.respond { "True" } else { "False" };
        let retry_ms = decision
            .retry_ms
            .map_or_else(|| "None".to_owned(), |ms| ms.to_string());
        format!(
            "Decision(respond={respond}, retry_ms={retry_ms}, facts={}, trace={}, draws={})",
            decision.facts.len(),
            decision.trace.len(),
            decision.draws.len(),
        )
    }
}
