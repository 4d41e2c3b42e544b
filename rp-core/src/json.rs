//! JSON read strictly: the one place that says how rp-core reads a JSON object a host hands
//! it (options, inputs, results). The ground layer, beside [`crate::error`]; every layer above
//! reads JSON through it, so a binding never decides how.

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
    serde_json::from_value(json_value(what, json)?)
        .map_err(|e| crate::Error::invalid(what, e.to_string()))
}
