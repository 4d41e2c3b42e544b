//! JSON values between Python and rp-core: the structured values of the
//! turn (steps, results, options, outcomes, prompts) cross the binding as the
//! JSON rp-core reads and writes, seen from Python as dicts and lists.
//!
//! Values rp-core hands out are made into Python objects either from a
//! `serde_json::Value` ([`json_to_py`], [`to_py`]) or straight from their
//! `Serialize` implementation ([`serialize`], for the turn's values, which are
//! large and made on every generation); both give the same objects.

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

/// A value of rp-core as Python objects, straight from its `Serialize`
/// implementation: the objects that `json_to_py` gives for its JSON, without
/// building the JSON first. As there, dict keys come in sorted order (the
/// order of `serde_json::Value`), map keys that are numbers become `str`,
/// and floats that are not finite become `None`.
pub(crate) fn serialize<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    value
        .serialize(ToPy { py })
        .map_err(|failure| match failure {
            Failure::Python(error) => error,
            Failure::Encode(message) => {
                PyRuntimeError::new_err(format!("rp could not encode a value: {message}"))
            }
        })
}

/// Why a value could not become Python objects.
#[derive(Debug)]
enum Failure {
    /// A Python call failed (a `MemoryError`, say).
    Python(PyErr),
    /// The value has no JSON form (a map key that is not a string or a
    /// number, an integer beyond 64 bits).
    Encode(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Python(error) => write!(f, "{error}"),
            Failure::Encode(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Failure {}

impl serde::ser::Error for Failure {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        Failure::Encode(message.to_string())
    }
}

impl From<PyErr> for Failure {
    fn from(error: PyErr) -> Self {
        Failure::Python(error)
    }
}

/// The name under which `serde_json::value::RawValue` serialises its JSON
/// text (a struct of one field of that name).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The serializer of [`serialize`].
#[derive(Clone, Copy)]
struct ToPy<'py> {
    py: Python<'py>,
}

impl<'py> ToPy<'py> {
    fn object(self, value: impl IntoPyObjectExt<'py>) -> Result<Bound<'py, PyAny>, Failure> {
        Ok(value.into_bound_py_any(self.py)?)
    }

    fn none(self) -> Result<Bound<'py, PyAny>, Failure> {
        Ok(self.py.None().into_bound(self.py))
    }

    fn float(self, value: f64) -> Result<Bound<'py, PyAny>, Failure> {
        // As serde_json::Value: a float that is not finite is null.
        if value.is_finite() {
            self.object(value)
        } else {
            self.none()
        }
    }

    /// `{variant: value}`, as serde_json writes an enum's variant with data.
    fn variant(
        self,
        variant: &'static str,
        value: Bound<'py, PyAny>,
    ) -> Result<Bound<'py, PyAny>, Failure> {
        let dict = PyDict::new(self.py);
        dict.set_item(variant, value)?;
        Ok(dict.into_any())
    }
}

/// The items of a list being built.
struct Seq<'py> {
    to: ToPy<'py>,
    items: Vec<Bound<'py, PyAny>>,
}

/// The entries of a dict being built, sorted by key when done.
struct Map<'py> {
    to: ToPy<'py>,
    entries: Vec<(std::borrow::Cow<'static, str>, Bound<'py, PyAny>)>,
    key: Option<String>,
    /// A `RawValue`: its one field is JSON text, read as JSON.
    raw: bool,
}

/// A list or dict that becomes the value of `{variant: ...}`.
struct Variant<T> {
    name: &'static str,
    inner: T,
}

impl<'py> serde::Serializer for ToPy<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    type SerializeSeq = Seq<'py>;
    type SerializeTuple = Seq<'py>;
    type SerializeTupleStruct = Seq<'py>;
    type SerializeTupleVariant = Variant<Seq<'py>>;
    type SerializeMap = Map<'py>;
    type SerializeStruct = Map<'py>;
    type SerializeStructVariant = Variant<Map<'py>>;

    fn serialize_bool(self, v: bool) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_i128(self, v: i128) -> Result<Self::Ok, Failure> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.object(v),
            (_, Ok(v)) => self.object(v),
            _ => Err(Failure::Encode(format!("{v} does not fit in 64 bits"))),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Self::Ok, Failure> {
        self.object(v)
    }
    fn serialize_u128(self, v: u128) -> Result<Self::Ok, Failure> {
        match u64::try_from(v) {
            Ok(v) => self.object(v),
            Err(_) => Err(Failure::Encode(format!("{v} does not fit in 64 bits"))),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<Self::Ok, Failure> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Self::Ok, Failure> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<Self::Ok, Failure> {
        self.object(v.encode_utf8(&mut [0; 4]) as &str)
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok, Failure> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Self::Ok, Failure> {
        // As serde_json::Value: a list of numbers.
        Ok(PyList::new(self.py, v)?.into_any())
    }
    fn serialize_none(self) -> Result<Self::Ok, Failure> {
        self.none()
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Failure> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, Failure> {
        self.none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok, Failure> {
        self.none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Failure> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Failure> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Failure> {
        let value = value.serialize(self)?;
        self.variant(variant, value)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'py>, Failure> {
        Ok(Seq {
            to: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'py>, Failure> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'py>, Failure> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq<'py>>, Failure> {
        Ok(Variant {
            name: variant,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'py>, Failure> {
        Ok(Map {
            to: self,
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
            raw: false,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Map<'py>, Failure> {
        let mut map = self.serialize_map(Some(len))?;
        map.raw = name == RAW_VALUE;
        Ok(map)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Map<'py>>, Failure> {
        Ok(Variant {
            name: variant,
            inner: self.serialize_map(Some(len))?,
        })
    }
}

impl<'py> Seq<'py> {
    fn push<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        self.items.push(value.serialize(self.to)?);
        Ok(())
    }

    fn list(self) -> Result<Bound<'py, PyAny>, Failure> {
        Ok(PyList::new(self.to.py, self.items)?.into_any())
    }
}

impl<'py> serde::ser::SerializeSeq for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_element<T: serde::Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), Failure> {
        self.push(value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        self.list()
    }
}

impl<'py> serde::ser::SerializeTuple for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_element<T: serde::Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), Failure> {
        self.push(value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        self.list()
    }
}

impl<'py> serde::ser::SerializeTupleStruct for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        self.push(value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        self.list()
    }
}

impl<'py> serde::ser::SerializeTupleVariant for Variant<Seq<'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        let to = self.inner.to;
        let list = self.inner.list()?;
        to.variant(self.name, list)
    }
}

impl<'py> Map<'py> {
    fn entry<T: serde::Serialize + ?Sized>(
        &mut self,
        key: std::borrow::Cow<'static, str>,
        value: &T,
    ) -> Result<(), Failure> {
        let value = value.serialize(self.to)?;
        self.entries.push((key, value));
        Ok(())
    }

    fn dict(mut self) -> Result<Bound<'py, PyAny>, Failure> {
        let py = self.to.py;
        if self.raw {
            // A RawValue: its JSON text, read as JSON.
            let text = match self.entries.pop() {
                Some((_, text)) => text.cast_into::<PyString>().map_err(PyErr::from)?,
                None => return Err(Failure::Encode("a RawValue without its text".into())),
            };
            let value: serde_json::Value = serde_json::from_str(&text.to_cow()?)
                .map_err(|error| Failure::Encode(error.to_string()))?;
            return Ok(json_to_py(py, &value)?);
        }
        // Stable, so that of two equal keys the later wins, as in a
        // serde_json::Map.
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        let dict = PyDict::new(py);
        for (key, value) in self.entries {
            match key {
                // A field name: the same few dozen in every request and
                // outcome, made into Python strings once per thread.
                std::borrow::Cow::Borrowed(name) => dict.set_item(field_name(py, name), value)?,
                std::borrow::Cow::Owned(key) => dict.set_item(key, value)?,
            }
        }
        Ok(dict.into_any())
    }
}

/// The Python string of the field name `name`, made once per thread (a
/// `str` is immutable, so sharing one between dicts is invisible to them,
/// and its hash is computed once).
fn field_name<'py>(py: Python<'py>, name: &'static str) -> Bound<'py, PyString> {
    type Names = std::collections::HashMap<(usize, usize), Py<PyString>>;
    thread_local! {
        static NAMES: std::cell::RefCell<Names> = std::cell::RefCell::new(Names::new());
    }
    // A static name is known by where it lives (and its length).
    let at = (name.as_ptr() as usize, name.len());
    NAMES.with_borrow_mut(|names| {
        if let Some(s) = names.get(&at) {
            return s.bind(py).clone();
        }
        let s = PyString::new(py, name);
        // The turn's types have a few dozen names; this bounds what a type
        // with many more could keep.
        if names.len() < 1024 {
            names.insert(at, s.clone().unbind());
        }
        s
    })
}

impl<'py> serde::ser::SerializeMap for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Failure> {
        self.key = Some(key.serialize(KeyToString)?);
        Ok(())
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failure> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Failure::Encode("a map value without its key".into()))?;
        self.entry(key.into(), value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        self.dict()
    }
}

impl<'py> serde::ser::SerializeStruct for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Failure> {
        self.entry(key.into(), value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        self.dict()
    }
}

impl<'py> serde::ser::SerializeStructVariant for Variant<Map<'py>> {
    type Ok = Bound<'py, PyAny>;
    type Error = Failure;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Failure> {
        self.inner.entry(key.into(), value)
    }
    fn end(self) -> Result<Self::Ok, Failure> {
        let to = self.inner.to;
        let dict = self.inner.dict()?;
        to.variant(self.name, dict)
    }
}

/// A map key as the text serde_json makes of it: strings as they are,
/// numbers, booleans and unit variants written out.
struct KeyToString;

impl KeyToString {
    fn refused() -> Failure {
        Failure::Encode("a map key must be a string or a number".into())
    }
}

impl serde::Serializer for KeyToString {
    type Ok = String;
    type Error = Failure;
    type SerializeSeq = serde::ser::Impossible<String, Failure>;
    type SerializeTuple = serde::ser::Impossible<String, Failure>;
    type SerializeTupleStruct = serde::ser::Impossible<String, Failure>;
    type SerializeTupleVariant = serde::ser::Impossible<String, Failure>;
    type SerializeMap = serde::ser::Impossible<String, Failure>;
    type SerializeStruct = serde::ser::Impossible<String, Failure>;
    type SerializeStructVariant = serde::ser::Impossible<String, Failure>;

    fn serialize_bool(self, v: bool) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, _v: f32) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_f64(self, _v: f64) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_char(self, v: char) -> Result<String, Failure> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Failure> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_none(self) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, _value: &T) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_unit(self) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Failure> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Failure> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Failure> {
        Err(Self::refused())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Failure> {
        Err(Self::refused())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Failure> {
        Err(Self::refused())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Failure> {
        Err(Self::refused())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Failure> {
        Err(Self::refused())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Failure> {
        Err(Self::refused())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Failure> {
        Err(Self::refused())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Failure> {
        Err(Self::refused())
    }
}
