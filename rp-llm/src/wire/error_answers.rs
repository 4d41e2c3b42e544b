//! Error answers: what a server's error says, and whether it refuses a response format (so
//! the client falls back to the next one).

use crate::error::{Error, snippet};
use serde_json::Value;

/// Whether an error answer to a `json_schema` request says the server does not do
/// `json_schema`: 500 (llama-cpp-python's server) or 501, or a 400/404/422 that names
/// `response_format`, `json_schema` or `schema`. A 502, 503 or 504 is a busy or unreachable
/// server, retried as such.
pub(crate) fn says_json_schema_unsupported(error: &Error) -> bool {
    match error {
        Error::Status {
            status, message, ..
        } => {
            let m = message.to_ascii_lowercase();
            matches!(status, 500 | 501)
                || (matches!(status, 400 | 404 | 422)
                    && (m.contains("response_format")
                        || m.contains("json_schema")
                        || m.contains("schema")))
        }
        _ => false,
    }
}

/// Whether an error answer to a `json_object` request with a `schema` says the server will
/// not have that field: a 400 or 422 that names `schema` or `response_format` (a strict
/// validator refusing an unknown field). Anything else is not about the field.
pub(crate) fn says_schema_field_refused(error: &Error) -> bool {
    match error {
        Error::Status {
            status, message, ..
        } => {
            let m = message.to_ascii_lowercase();
            matches!(status, 400 | 422) && (m.contains("schema") || m.contains("response_format"))
        }
        _ => false,
    }
}

/// What an error answer says: `error.message` (or `error` as a string, or `message`,
/// `detail`) when it is JSON, else the start of its text.
pub(crate) fn error_message(body: &[u8], content_type: Option<&str>) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let found = v
            .get("error")
            .and_then(|e| e.get("message").or(Some(e)))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"));
        if let Some(m) = found {
            return match m.as_str() {
                Some(s) => s.to_string(),
                None => m.to_string(),
            };
        }
    }
    if is_html(body, content_type) {
        return format!("an HTML page: {}", snippet(body, 120));
    }
    if body.is_empty() {
        return "(no body)".into();
    }
    snippet(body, 200)
}

pub(super) fn is_html(body: &[u8], content_type: Option<&str>) -> bool {
    if content_type.is_some_and(|c| c.to_ascii_lowercase().contains("html")) {
        return true;
    }
    let start = String::from_utf8_lossy(&body[..body.len().min(64)]).to_ascii_lowercase();
    let start = start.trim_start();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_json_schema_is_told_apart_from_other_refusals() {
        let status = |status, message: &str| Error::Status {
            status,
            message: message.into(),
            retry_after_ms: None,
        };
        assert!(says_json_schema_unsupported(&status(
            500,
            "Internal Server Error"
        )));
        assert!(!says_json_schema_unsupported(&status(503, "loading model")));
        assert!(says_json_schema_unsupported(&status(
            400,
            "response_format.type must be one of json_object, text"
        )));
        assert!(!says_json_schema_unsupported(&status(
            400,
            "context length exceeded"
        )));
        assert!(!says_json_schema_unsupported(&status(
            401,
            "bad key, no schema"
        )));
        assert!(!says_json_schema_unsupported(&Error::dropped("x")));
    }

    #[test]
    fn error_messages_come_from_json_or_the_text() {
        assert_eq!(
            error_message(br#"{"error":{"message":"slow down"}}"#, None),
            "slow down"
        );
        assert_eq!(error_message(br#"{"error":"nope"}"#, None), "nope");
        assert_eq!(
            error_message(br#"{"detail":"Not Found"}"#, None),
            "Not Found"
        );
        assert!(error_message(b"<html>oops</html>", None).starts_with("an HTML page"));
        assert_eq!(error_message(b"", None), "(no body)");
    }
}
