//! The JSON Schema subset host actions declare their arguments in, and the check of a value
//! against it. Keywords: `type` (object, string, number, integer, boolean, array), `properties`,
//! `required`, `additionalProperties` (a boolean), `enum`, `const`, `minimum`, `maximum`,
//! `minLength`, `maxLength`, `items`, `minItems`, `maxItems`, `anyOf` (a non-empty array of
//! schemas, at least one of which the value must match), `description`, `title`. Any other
//! keyword is refused when the action is declared, so a schema never means less than it says.

use serde_json::Value;

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "anyOf",
    "description",
    "title",
];

/// Refuses a schema that uses anything outside the subset.
pub fn check_schema(schema: &Value, at: &str) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        return Err(format!("{at}: a schema is a JSON object"));
    };
    for (k, v) in obj {
        if !KEYWORDS.contains(&k.as_str()) {
            return Err(format!(
                "{at}: \"{k}\" is not supported; use {}",
                KEYWORDS.join(", ")
            ));
        }
        match k.as_str() {
            "properties" => {
                let props = v
                    .as_object()
                    .ok_or_else(|| format!("{at}: properties is an object"))?;
                for (name, s) in props {
                    check_schema(s, &format!("{at}.{name}"))?;
                }
            }
            "items" => check_schema(v, &format!("{at}[]"))?,
            "anyOf" => {
                let branches = v
                    .as_array()
                    .filter(|b| !b.is_empty())
                    .ok_or_else(|| format!("{at}: anyOf is a non-empty array of schemas"))?;
                for (i, b) in branches.iter().enumerate() {
                    check_schema(b, &format!("{at}.anyOf[{i}]"))?;
                }
            }
            "additionalProperties" if !v.is_boolean() => {
                return Err(format!("{at}: additionalProperties is true or false"));
            }
            "type" => {
                let ok = v.as_str().is_some_and(|t| {
                    ["object", "string", "number", "integer", "boolean", "array"].contains(&t)
                });
                if !ok {
                    return Err(format!(
                        "{at}: type is one of object, string, number, integer, boolean, array"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks `value` against `schema` (already checked by [`check_schema`]).
pub fn validate(value: &Value, schema: &Value, at: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        return Ok(());
    };
    if let Some(branches) = s.get("anyOf").and_then(Value::as_array) {
        let mut why = Vec::new();
        for b in branches {
            match validate(value, b, at) {
                Ok(()) => {
                    why.clear();
                    break;
                }
                Err(e) => why.push(e),
            }
        }
        if !why.is_empty() {
            return Err(format!(
                "{at} matches none of its {} forms ({})",
                why.len(),
                why.join("; ")
            ));
        }
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => value.is_object(),
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            _ => false,
        };
        if !ok {
            return Err(format!("{at} is not a {t}"));
        }
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        return Err(format!("{at} must be {c}"));
    }
    if let Some(choices) = s.get("enum").and_then(Value::as_array)
        && !choices.contains(value)
    {
        return Err(format!(
            "{at} must be one of {}",
            Value::Array(choices.clone())
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = s.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{at} is below {min}"));
        }
        if let Some(max) = s.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{at} is above {max}"));
        }
    }
    if let Some(text) = value.as_str() {
        let len = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            return Err(format!("{at} is shorter than {min}"));
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            return Err(format!("{at} is longer than {max}"));
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            return Err(format!("{at} has fewer than {min} items"));
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            return Err(format!("{at} has more than {max} items"));
        }
        if let Some(item) = s.get("items") {
            for (i, v) in items.iter().enumerate() {
                validate(v, item, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(obj) = value.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for name in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str()
                && !obj.contains_key(name)
            {
                return Err(format!("{at}.{name} is missing"));
            }
        }
        for (k, v) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(sub) => validate(v, sub, &format!("{at}.{k}"))?,
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}.{k} is not a known field"));
                }
                None => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_subset_is_checked_and_values_against_it() {
        let schema = json!({"type": "object", "additionalProperties": false, "required": ["door"],
            "properties": {"door": {"type": "string", "enum": ["cellar", "front"]},
                           "force": {"type": "integer", "minimum": 0, "maximum": 10}}});
        check_schema(&schema, "open_door").unwrap();
        assert!(
            check_schema(&json!({"anyOf": []}), "x")
                .unwrap_err()
                .contains("non-empty")
        );
        assert!(check_schema(&json!({"anyOf": [{"pattern": "x"}]}), "x").is_err());
        assert!(
            check_schema(&json!({"oneOf": []}), "x")
                .unwrap_err()
                .contains("not supported")
        );
        assert!(check_schema(&json!({"type": "date"}), "x").is_err());
        assert!(check_schema(&json!({"properties": {"a": {"pattern": "x"}}}), "x").is_err());
        let ok = |v: Value| validate(&v, &schema, "args");
        ok(json!({"door": "cellar", "force": 3})).unwrap();
        assert!(
            ok(json!({"force": 3}))
                .unwrap_err()
                .contains("door is missing")
        );
        assert!(ok(json!({"door": "attic"})).unwrap_err().contains("one of"));
        assert!(
            ok(json!({"door": "front", "force": 11}))
                .unwrap_err()
                .contains("above")
        );
        assert!(
            ok(json!({"door": "front", "force": 1.5}))
                .unwrap_err()
                .contains("integer")
        );
        assert!(
            ok(json!({"door": "front", "key": 1}))
                .unwrap_err()
                .contains("not a known field")
        );
    }

    #[test]
    fn any_of_takes_a_value_that_one_form_takes() {
        // A light: on with a brightness, or off without one.
        let schema = json!({"anyOf": [
            {"type": "object", "additionalProperties": false, "required": ["on", "level"],
             "properties": {"on": {"const": true}, "level": {"type": "integer", "minimum": 1}}},
            {"type": "object", "additionalProperties": false, "required": ["on"],
             "properties": {"on": {"const": false}}}]});
        check_schema(&schema, "light").unwrap();
        let ok = |v: Value| validate(&v, &schema, "light");
        ok(json!({"on": true, "level": 3})).unwrap();
        ok(json!({"on": false})).unwrap();
        let e = ok(json!({"on": true})).unwrap_err();
        assert!(e.contains("none of its 2 forms"), "{e}");
        assert!(e.contains("light.level is missing"), "{e}");
        assert!(ok(json!({"on": false, "level": 3})).is_err());
        assert!(ok(json!("on")).is_err());
    }
}
