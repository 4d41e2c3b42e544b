//! JSON read strictly: the one place that says how rp-core reads a JSON object a host hands
//! it (options, inputs, results). The ground layer, beside the error type ([`crate::Error`]);
//! every layer above reads JSON through it, and so does a binding that holds the JSON as a
//! value already
//! ([`from_value`]: Python's dicts), so the errors are the same from every side.

/// `json` parsed, when it is a JSON object (serde would also read a struct from an array).
pub(crate) fn json_value(what: &'static str, json: &str) -> crate::Result<serde_json::Value> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| crate::Error::invalid(what, format!("not JSON: {e}")))?;
    if !value.is_object() {
        return Err(crate::Error::invalid(what, "expected a JSON object"));
    }
    Ok(value)
}

/// A `T` read from a JSON object (see [`json_value`]).
pub(crate) fn json_object<T: serde::de::DeserializeOwned>(
    what: &'static str,
    json: &str,
) -> crate::Result<T> {
    from_value(what, json_value(what, json)?)
}

/// A `T` (options, a promotion, a request: `what` names it in errors) read from a JSON value,
/// as rp-core reads the same JSON given as text: an error is an
/// [`crate::ErrorKind::Invalid`] naming the path of the field it is about
/// (`invalid turn options: updates.sampling.temperature: invalid type: …`), so a host can find
/// its typo.
pub fn from_value<T: serde::de::DeserializeOwned>(
    what: &'static str,
    value: serde_json::Value,
) -> crate::Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            crate::Error::invalid(what, inner.to_string())
        } else {
            crate::Error::invalid(what, format!("{path}: {inner}"))
        }
    })
}
