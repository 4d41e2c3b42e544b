//! `Condition`: one condition of the fact language outside any sheet
//! (rp-core's `facts::Condition`).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rp_core::facts::{ContextData, DriveValues, RegexCache};

use crate::json::json_to_py;

/// A compiled condition: the expression of a ``$if`` line, without ``$if``
/// and ``: action`` (``time.is_night && random() < 0.3``), compiled once
/// and tested as often as needed: conditions of the host's own, such as a
/// door that opens only at night.
///
/// Compiled on its own, a condition's ``self`` has no keys and ``has_fact``
/// finds nothing. Raises ``FactSyntaxError`` (with ``.line`` and
/// ``.column``) when ``source`` does not compile.
#[pyclass(frozen, module = "rp_engine")]
pub(crate) struct Condition {
    source: String,
    compiled: rp_core::facts::Condition,
}

/// The context of a test, from keyword arguments.
#[allow(clippy::too_many_arguments)]
fn context(
    name: &str,
    content: &str,
    author: &str,
    mentioned: bool,
    response_ms: Option<f64>,
    retry_ms: f64,
    unread_count: u32,
    interaction_type: Option<String>,
    present: Vec<String>,
    hour: f64,
    drives: DriveValues,
) -> ContextData {
    ContextData {
        name: name.to_owned(),
        content: content.to_owned(),
        author: author.to_owned(),
        mentioned,
        response_ms,
        retry_ms,
        unread_count: f64::from(unread_count),
        interaction_type,
        present,
        hour,
        drives,
    }
}

/// The `drives` a condition sees, from a dict with any of `energy`,
/// `social_debt`, `task`, `curiosity`, `pressure`, `disturbance`, `asleep`,
/// `mode` (read by rp-core as C's JSON is); None: the defaults.
fn drive_values(py: Python<'_>, drives: Option<&Bound<'_, PyDict>>) -> PyResult<DriveValues> {
    match drives {
        Some(dict) => crate::json::from_dict(py, "drives", dict),
        None => Ok(DriveValues::default()),
    }
}

#[pymethods]
impl Condition {
    #[new]
    fn new(py: Python<'_>, source: &str) -> PyResult<Self> {
        let compiled = py
            .detach(|| rp_core::facts::Condition::compile(source, &mut RegexCache::default()))
            .map_err(|e| crate::errors::to_py_err(py, e.to_error(source, "condition")))?;
        Ok(Condition {
            source: source.to_owned(),
            compiled,
        })
    }

    /// The source it was compiled from.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// Whether the condition holds (JavaScript's truthiness of its value)
    /// in this context (``present`` lists who is there; ``response_ms`` None
    /// means never; ``drives`` is what ``drives.*`` reads, a dict with any of
    /// ``energy``, ``social_debt``, ``task``, ``curiosity``, ``pressure``,
    /// ``disturbance``, ``asleep``, ``mode``: docs/drives.md). ``random()`` and ``roll()`` draw from the generator
    /// of ``seed``, from its start, so the same seed gives the same answer.
    /// A runtime type error makes it False, as on a sheet line (see
    /// ``test_traced`` for the message).
    #[pyo3(signature = (
        *,
        name = "",
        content = "",
        author = "",
        mentioned = false,
        response_ms = None,
        retry_ms = 0.0,
        unread_count = 0,
        interaction_type = None,
        present = None,
        hour = 12.0,
        drives = None,
        seed = 0,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn test(
        &self,
        py: Python<'_>,
        name: &str,
        content: &str,
        author: &str,
        mentioned: bool,
        response_ms: Option<f64>,
        retry_ms: f64,
        unread_count: u32,
        interaction_type: Option<String>,
        present: Option<Vec<String>>,
        hour: f64,
        drives: Option<&Bound<'_, PyDict>>,
        seed: u64,
    ) -> PyResult<bool> {
        let data = context(
            name,
            content,
            author,
            mentioned,
            response_ms,
            retry_ms,
            unread_count,
            interaction_type,
            present.unwrap_or_default(),
            hour,
            drive_values(py, drives)?,
        );
        Ok(self.compiled.test_seeded(&data, seed).holds)
    }

    /// ``test``, also returning what happened: a dict per random draw, dice
    /// roll and runtime error, with ``"kind"`` (``"random"``, ``"chance"``,
    /// ``"roll"`` or ``"error"``) and that kind's fields.
    #[pyo3(signature = (
        *,
        name = "",
        content = "",
        author = "",
        mentioned = false,
        response_ms = None,
        retry_ms = 0.0,
        unread_count = 0,
        interaction_type = None,
        present = None,
        hour = 12.0,
        drives = None,
        seed = 0,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn test_traced<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        content: &str,
        author: &str,
        mentioned: bool,
        response_ms: Option<f64>,
        retry_ms: f64,
        unread_count: u32,
        interaction_type: Option<String>,
        present: Option<Vec<String>>,
        hour: f64,
        drives: Option<&Bound<'py, PyDict>>,
        seed: u64,
    ) -> PyResult<(bool, Bound<'py, PyList>)> {
        let data = context(
            name,
            content,
            author,
            mentioned,
            response_ms,
            retry_ms,
            unread_count,
            interaction_type,
            present.unwrap_or_default(),
            hour,
            drive_values(py, drives)?,
        );
        let tested = self.compiled.test_seeded(&data, seed);
        let events = tested
            .trace
            .iter()
            .map(|event| {
                let json = serde_json::to_value(event).map_err(|error| {
                    pyo3::exceptions::PyRuntimeError::new_err(error.to_string())
                })?;
                json_to_py(py, &json)
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((tested.holds, PyList::new(py, events)?))
    }

    fn __repr__(&self) -> String {
        format!("Condition({:?})", self.source)
    }
}
