//! JSON values between Python and rp-core: the structured values of the
//! turn (steps, results, options, outcomes, prompts) cross the binding as the
//! JSON rp-core reads and writes, seen from Python as dicts and lists.

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// How deeply a Python value may nest before it is refused (a list that
/// contains itself would otherwise never end).
const MAX_DEPTH: usize = 128;

/// A JSON value as the Python value `json.loads` would give.
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_u64() {
                i.into_bound_py_any(py)
            } else if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| json_to_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_bound_py_any(py)
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, field) in fields {
                dict.set_item(key, json_to_py(py, field)?)?;
            }
            dict.into_bound_py_any(py)
        }
    }
}

/// A value of rp-core, encoded by `serde_json::to_value`, as Python sees its
/// JSON.
pub(crate) fn to_py(
    py: Python<'_>,
    encoded: serde_json::Result<serde_json::Value>,
) -> PyResult<Bound<'_, PyAny>> {
    let json = encoded.map_err(|error| {
        PyRuntimeError::new_err(format!("rp could not encode a value: {error}"))
    })?;
    json_to_py(py, &json)
}

/// A Python value as JSON: `None`, `bool`, `int`, `float`, `str`, and
/// dicts (with `str` keys), lists and tuples of those. Anything else is a
/// `TypeError`; a float that is not finite, or nesting deeper than 128, a
/// `ValueError`.
pub(crate) fn py_to_json(value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    to_json(value, 0)
}

fn to_json(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "a value nested more than {MAX_DEPTH} deep cannot become JSON"
        )));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    // `bool` before `int`: in Python, a bool is an int.
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = value.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(PyValueError::new_err(format!(
            "{} does not fit in 64 bits",
            value.repr()?
        )));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        let f = f.value();
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err(format!("{f} is not a JSON number")));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut fields = serde_json::Map::new();
        for (key, field) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "JSON keys are str, not {}",
                    key.get_type().name()?
                )));
            };
            fields.insert(key.to_cow()?.into_owned(), to_json(&field, depth + 1)?);
        }
        return Ok(Value::Object(fields));
    }
    if let Ok(list) = value.cast::<PyList>() {
        return list
            .iter()
            .map(|item| to_json(&item, depth + 1))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return tuple
            .iter()
            .map(|item| to_json(&item, depth + 1))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "a {} cannot become JSON (use dict, list, str, int, float, bool or None)",
        value.get_type().name()?
    )))
}

/// A value of rp-core read from a Python dict by its JSON field names
/// (`decode` is `serde_json::from_value`); a dict that does not match is
/// `InvalidInput` naming `what`.
pub(crate) fn from_dict<T>(
    py: Python<'_>,
    what: &'static str,
    dict: &Bound<'_, PyDict>,
    decode: impl FnOnce(serde_json::Value) -> serde_json::Result<T>,
) -> PyResult<T> {
    let json = py_to_json(dict.as_any())?;
    decode(json).map_err(|error| {
        crate::errors::to_py_err(
            py,
            rp_core::Error::Invalid {
                what,
                reason: error.to_string(),
            },
        )
    })
}
