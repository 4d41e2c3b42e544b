//! JSON values between Python and rp-core: the structured values of the
//! turn (steps, results, options, outcomes, prompts) cross the binding as the
//! JSON rp-core reads and writes, seen from Python as dicts and lists.
//!
//! Values rp-core hands out become Python objects through `pythonize`, either
//! from a `serde_json::Value` ([`json_to_py`], [`to_py`]) or straight from
//! their `Serialize` implementation ([`serialize`]); both give the objects
//! `json.loads` gives for the value's JSON, dict keys sorted (the order of a
//! `serde_json::Value`). Values from Python are read by [`py_to_json`], which
//! accepts exactly what JSON can hold.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use pythonize::{PythonizeMappingType, PythonizeTypes, PythonizeUnnamedMappingAdapter};

/// How deeply a Python value may nest before it is refused (a list that
/// contains itself would otherwise never end).
const MAX_DEPTH: usize = 128;

/// A JSON value as the Python value `json.loads` would give.
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    value: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
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

/// A value of rp-core (options, a promotion, a request: `what` names it in
/// errors) read from a dict the way rp-core reads the same JSON from C
/// (`rp_core::json::from_value`: `InvalidInput` naming the field's path).
pub(crate) fn from_dict<T: serde::de::DeserializeOwned>(
    py: Python<'_>,
    what: &'static str,
    dict: &Bound<'_, PyDict>,
) -> PyResult<T> {
    let json = py_to_json(dict.as_any())?;
    rp_core::json::from_value(what, json).map_err(|error| crate::errors::to_py_err(py, error))
}

/// A value of rp-core as Python objects, straight from its `Serialize`
/// implementation: the objects that `json_to_py` gives for its JSON, without
/// building the JSON first. As there, dict keys come in sorted order and map
/// keys that are numbers or booleans become `str`.
///
/// pythonize makes a tuple of a Rust tuple, where JSON has a list: values
/// holding tuples go through [`to_py`] instead.
pub(crate) fn serialize<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize_custom::<AsJson, _>(py, value)
        .map_err(|error| PyRuntimeError::new_err(format!("rp could not encode a value: {error}")))
}

/// The Python types [`serialize`] builds: lists, and dicts whose keys are
/// sorted once all are known.
struct AsJson;

impl PythonizeTypes for AsJson {
    type Map = SortedDict;
    type NamedMap = PythonizeUnnamedMappingAdapter<SortedDict>;
    type List = PyList;
}

/// A dict whose entries are sorted by key when it is built.
struct SortedDict;

/// The entries of a [`SortedDict`] being built: each key as text (to sort
/// by) and as the Python string the dict will hold.
struct Entries<'py> {
    py: Python<'py>,
    entries: Vec<(String, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
}

impl PythonizeMappingType for SortedDict {
    type Builder<'py> = Entries<'py>;

    fn builder<'py>(py: Python<'py>, len: Option<usize>) -> PyResult<Self::Builder<'py>> {
        Ok(Entries {
            py,
            entries: Vec::with_capacity(len.unwrap_or(0)),
        })
    }

    fn push_item<'py>(
        builder: &mut Self::Builder<'py>,
        key: Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<()> {
        // As serde_json writes map keys: strings as they are, numbers and
        // booleans written out.
        let key = if key.is_instance_of::<PyString>() {
            key
        } else if let Ok(b) = key.cast::<PyBool>() {
            PyString::new(builder.py, if b.is_true() { "true" } else { "false" }).into_any()
        } else if key.is_instance_of::<PyInt>() || key.is_instance_of::<PyFloat>() {
            key.str()?.into_any()
        } else {
            return Err(PyTypeError::new_err(format!(
                "a map key must be a string or a number, not {}",
                key.get_type().name()?
            )));
        };
        let text = key.cast::<PyString>()?.to_cow()?.into_owned();
        builder.entries.push((text, key, value));
        Ok(())
    }

    fn finish<'py>(builder: Self::Builder<'py>) -> PyResult<Bound<'py, PyMapping>> {
        let Entries { py, mut entries } = builder;
        // Stable, so that of two equal keys the later wins, as in a
        // serde_json::Map.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let dict = PyDict::new(py);
        for (_, key, value) in entries {
            dict.set_item(key, value)?;
        }
        Ok(dict.into_mapping())
    }
}
