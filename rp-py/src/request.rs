//! Generation requests as Python dicts, as [`crate::json::serialize`] makes them, except that
//! the reply tools' definitions (the JSON Schemas of `roll_dice` and `roll_effects`, some 70
//! Python objects) are made once per process: each request gets a new list of the same tool
//! dicts, which the host should treat as read-only.
//!
//! Why by hand: made for every request, they cost a Python turn about 4 µs, which measured
//! the turn's overhead over Rust at +12.2 % wall / +11.6 % CPU against the ≤ 10 % target
//! (`benches/python/overhead.py`, benches/README.md "Serde in the bindings").

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};
use rp_core::turn::{GenerateRequest, Step, ToolDef};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::sync::OnceLock;

use crate::json;

/// A request's fields but its tools, in rp-core's order and with its rules for leaving
/// fields out.
struct WithoutTools<'a>(&'a GenerateRequest);

impl Serialize for WithoutTools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Destructured, so a field added to the request cannot be missed here.
        let GenerateRequest {
            purpose,
            messages,
            params,
            json_schema,
            tools: _,
        } = self.0;
        let mut out = serializer.serialize_struct("GenerateRequest", 4)?;
        out.serialize_field("purpose", purpose)?;
        out.serialize_field("messages", messages)?;
        out.serialize_field("params", params)?;
        if let Some(schema) = json_schema {
            out.serialize_field("json_schema", schema)?;
        }
        out.end()
    }
}

/// The reply tools, as rp-core offers them.
fn reply_tools() -> &'static [ToolDef] {
    static TOOLS: OnceLock<Vec<ToolDef>> = OnceLock::new();
    TOOLS.get_or_init(rp_core::turn::tools::definitions)
}

/// The reply tools' dicts, made once.
fn reply_tool_dicts(py: Python<'_>) -> PyResult<&Py<PyList>> {
    static DICTS: PyOnceLock<Py<PyList>> = PyOnceLock::new();
    DICTS.get_or_try_init(py, || {
        Ok(json::serialize(py, &reply_tools())?
            .cast_into::<PyList>()?
            .unbind())
    })
}

/// `request` as a dict: `{"json_schema"?, "messages", "params", "purpose", "tools"?}` (keys
/// sorted, as every dict of the turn's values).
pub(crate) fn request<'py>(
    py: Python<'py>,
    request: &GenerateRequest,
) -> PyResult<Bound<'py, PyDict>> {
    dict(py, request, false)
}

/// `step` as a dict, as rp-core writes it (a generation's request with `"step": "generate"`),
/// keys sorted.
pub(crate) fn step<'py>(py: Python<'py>, step: &Step) -> PyResult<Bound<'py, PyAny>> {
    match step {
        Step::Generate(generate) => Ok(dict(py, generate, true)?.into_any()),
        other => json::serialize(py, other),
    }
}

/// The dict of `request`, with `"step": "generate"` when `tagged`.
fn dict<'py>(
    py: Python<'py>,
    request: &GenerateRequest,
    tagged: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = json::serialize(py, &WithoutTools(request))?.cast_into::<PyDict>()?;
    // "step" and "tools" sort after the other keys.
    if tagged {
        dict.set_item("step", "generate")?;
    }
    if !request.tools.is_empty() {
        if request.tools == reply_tools() {
            let shared = reply_tool_dicts(py)?.bind(py);
            dict.set_item("tools", PyList::new(py, shared.iter())?)?;
        } else {
            dict.set_item("tools", json::serialize(py, &request.tools)?)?;
        }
    }
    Ok(dict)
}
