//! Generation requests as Python dicts, as [`crate::json::serialize`] makes them: the keys of
//! rp-core's JSON, sorted.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rp_core::turn::{GenerateRequest, Step};

use crate::json;

/// `request` as a dict: `{"json_schema"?, "messages", "params", "purpose", "tools"?}` (keys
/// sorted, as every dict of the turn's values).
pub(crate) fn request<'py>(
    py: Python<'py>,
    request: &GenerateRequest,
) -> PyResult<Bound<'py, PyDict>> {
    Ok(json::serialize(py, request)?.cast_into::<PyDict>()?)
}

/// `step` as a dict, as rp-core writes it (a generation's request with `"step": "generate"`),
/// keys sorted.
pub(crate) fn step<'py>(py: Python<'py>, step: &Step) -> PyResult<Bound<'py, PyAny>> {
    json::serialize(py, step)
}
