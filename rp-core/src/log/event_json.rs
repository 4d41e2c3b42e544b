//! The one JSON shape of an [`Event`], as every host writes and reads it: the kind as the key
//! of an object holding the event's fields, `{"time_advanced": {"to": 120000}}`, and, read
//! back from the log, with its seq: `{"seq": 41, "event": {"time_advanced": {…}}}`
//! ([`LoggedEvent`]).
//!
//! Reading is strict, so that a typo is an error and not a silent default: an unknown kind or
//! an unknown field (at any depth: `activity.postion`, `slots[0].capcity`) is refused, naming
//! the event's position in the batch, its kind and the field.

use super::Event;
use crate::error::{Error, Result};
use crate::model::Seq;
use serde::Serialize;
use serde_json::Value;

/// An event of the log with its seq, as hosts read the log (`Engine::events`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoggedEvent {
    /// Its position on the branch.
    pub seq: Seq,
    /// The event.
    pub event: Event,
}

impl Event {
    /// Reads one event from its JSON value (`{"time_advanced": {"to": 120000}}`: the kind the
    /// key of its fields), strictly: an unknown kind or field, at any depth, is refused, naming
    /// the kind and the field.
    pub fn from_json_value(value: &Value) -> Result<Event> {
        read(value).map_err(|reason| Error::invalid("event", reason.trim_start_matches(':').trim()))
    }

    /// Reads a batch of events from a JSON array, strictly; an error names the event's index
    /// (`events[1]: unknown variant …`).
    pub fn list_from_json(json: &str) -> Result<Vec<Event>> {
        let values: Vec<Value> = serde_json::from_str(json)
            .map_err(|e| Error::invalid("events JSON", format!("{e} (an array of events)")))?;
        Event::list_from_json_values(&values)
    }

    /// Reads a batch of events from JSON values, strictly; an error names the event's index.
    pub fn list_from_json_values(values: &[Value]) -> Result<Vec<Event>> {
        values
            .iter()
            .enumerate()
            .map(|(i, value)| {
                read(value)
                    .map_err(|reason| Error::invalid("event", format!("events[{i}]{reason}")))
            })
            .collect()
    }
}

/// Reads `value`; the error's text starts with the kind in parentheses when it is known
/// (` (time_advanced): unknown field `by``), else with `: `.
fn read(value: &Value) -> std::result::Result<Event, String> {
    let event: Event = serde_path_to_error::deserialize(value).map_err(|e| {
        let kind = value
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.keys().next());
        let path = e.path().to_string();
        let inner = e.into_inner();
        // The path starts with the kind, which the prefix already names.
        let field = path
            .split_once('.')
            .map(|(_, rest)| rest)
            .filter(|rest| !rest.is_empty());
        match (kind, field) {
            (Some(kind), Some(field)) => format!(" ({kind}): {field}: {inner}"),
            (Some(kind), None) if path != "." => format!(" ({kind}): {inner}"),
            _ => format!(": {inner}"),
        }
    })?;
    // rp-core's events take defaults for absent fields and skip fields they do not know, so a
    // host's typo ("postion") would be dropped in silence: a field that does not come back
    // when the event is written out again is refused.
    let kind = event.kind();
    let written = serde_json::to_value(&event).map_err(|e| format!(": {e}"))?;
    if let (Some(given), Some(written)) = (value.get(kind), written.get(kind))
        && let Some(path) = unknown_field(given, written)
    {
        return Err(format!(" ({kind}): unknown field `{path}`"));
    }
    Ok(event)
}

/// The path of the first field of `given` that `written` (the same value read into the event
/// and written out again) does not have: a field the type does not know. A field given as
/// `null` or `[]` may be missing from `written`, which leaves absent options and empty lists
/// out.
fn unknown_field(given: &Value, written: &Value) -> Option<String> {
    match (given, written) {
        (Value::Object(given), Value::Object(written)) => given.iter().find_map(|(key, value)| {
            match written.get(key) {
                Some(back) => unknown_field(value, back).map(|path| format!("{key}.{path}")),
                None if is_empty(value) => None,
                None => Some(key.clone()),
            }
            .map(|path| path.trim_end_matches('.').to_owned())
        }),
        (Value::Array(given), Value::Array(written)) if given.len() == written.len() => given
            .iter()
            .zip(written)
            .enumerate()
            .find_map(|(i, (value, back))| {
                unknown_field(value, back).map(|path| format!("[{i}].{path}"))
            }),
        _ => None,
    }
    .map(|path| path.replace(".[", "["))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::{ErrorKind, Event};
    use serde_json::json;

    fn refusal(json: &str) -> String {
        let e = Event::list_from_json(json).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
        e.to_string()
    }

    #[test]
    fn events_read_strictly_and_errors_name_the_event_and_the_field() {
        let read = Event::list_from_json(r#"[{"time_advanced": {"to": 5}}]"#).unwrap();
        assert_eq!(read, [Event::TimeAdvanced { to: 5 }]);
        for (json, said) in [
            ("{not json", "invalid events JSON: "),
            (r#"{"time_advanced": {"to": 5}}"#, "invalid events JSON: "),
            (
                r#"[{"time_advanced": {"to": 5}}, {"entity_teleported": {"id": 1}}]"#,
                "invalid event: events[1]: unknown variant `entity_teleported`",
            ),
            (
                r#"[{"time_advanced": {}}]"#,
                "invalid event: events[0] (time_advanced): missing field `to`",
            ),
            (
                r#"[{"time_advanced": {"to": "soon"}}]"#,
                "invalid event: events[0] (time_advanced): to: invalid type",
            ),
            (
                r#"[{"time_advanced": {"to": 5, "by": 10}}]"#,
                "invalid event: events[0] (time_advanced): unknown field `by`",
            ),
            (
                r#"[{"activity_changed": {"entity": 1, "activity": {"postion": {"container": 2}}}}]"#,
                "invalid event: events[0] (activity_changed): unknown field `activity.postion`",
            ),
            (
                r#"[{"activity_changed": {"entity": 1, "activity": {"postion": null}}}]"#,
                "",
            ),
            (
                r#"[{"container_created": {"id": 9, "name": "Ferry", "slots": [{"name": "deck", "capcity": 4}]}}]"#,
                "invalid event: events[0] (container_created): unknown field `slots[0].capcity`",
            ),
        ] {
            if said.is_empty() {
                // A misspelt field given as null is indistinguishable from an absent one.
                assert!(Event::list_from_json(json).is_ok(), "{json}");
                continue;
            }
            let message = refusal(json);
            assert!(message.starts_with(said), "{json}: {message}");
        }
        let e = Event::from_json_value(&json!({"time_advanced": {"to": 1, "by": 2}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid event: (time_advanced): unknown field `by`"
        );
    }

    #[test]
    fn null_and_empty_fields_that_are_left_out_when_written_are_accepted() {
        Event::list_from_json(
            r#"[{"entity_edited": {"id": 3, "name": null, "aliases": null, "facts": null}}]"#,
        )
        .expect("null means unchanged");
    }

    #[test]
    fn unknown_field_compares_nested_values() {
        use super::unknown_field;
        let given = json!({"a": {"b": [{"c": 1, "d": 2}]}});
        let read = json!({"a": {"b": [{"c": 1}]}});
        assert_eq!(unknown_field(&given, &read).as_deref(), Some("a.b[0].d"));
        assert_eq!(unknown_field(&read, &read), None);
        assert_eq!(unknown_field(&json!({"x": null}), &json!({})), None);
    }
}
