//! What the model answers a query with: an [`Answer`] or a request for more information
//! ([`NeedsMoreInfo`]), read strictly from its JSON.
//!
//! ```json
//! {"type": "answer", "content": "Mira runs the bar.", "confidence": "high",
//!  "sources": [{"entity_id": 12, "contribution": "her facts", "relevance": 0.9}],
//!  "suggested_follow_ups": ["Who supplies the ale?"]}
//! {"type": "needs_more_info", "reason": "I need Mira's ties.",
//!  "requests": [{"capability_id": "GET_RELATIONSHIPS",
//!                "params": {"entity_ids": [12], "direction": "both"},
//!                "reason": "who she knows"}]}
//! ```

use super::context::QueryContext;
use crate::model::EntityId;
pub use crate::model::{
    Answer, AnswerSource, Confidence, InfoRequest, MAX_ANSWER_CHARS, MAX_FOLLOW_UPS,
    MAX_NOTE_CHARS, MAX_REQUESTS, MAX_SOURCES,
};
use crate::update::schema_check;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The longest model output read, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The model asks for more before it answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeedsMoreInfo {
    /// Why.
    pub reason: String,
    /// What to fetch, in order.
    pub requests: Vec<InfoRequest>,
}

/// What the model answers a query round with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueryResponse {
    /// The answer.
    Answer(Answer),
    /// A request for more information.
    NeedsMoreInfo(NeedsMoreInfo),
}

/// The JSON Schema (the subset of [`crate::update::schema_check`]) of an answer whose sources
/// are among `ids`.
pub fn answer_schema(ids: &[EntityId]) -> Value {
    let note = json!({"type": "string", "maxLength": MAX_NOTE_CHARS});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "content", "confidence"],
        "properties": {
            "type": {"type": "string", "const": "answer"},
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_ANSWER_CHARS},
            "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
            "sources": {"type": "array", "maxItems": MAX_SOURCES, "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["entity_id", "contribution", "relevance"],
                "properties": {
                    "entity_id": {"type": "integer", "enum": ids},
                    "contribution": note,
                    "relevance": {"type": "number", "minimum": 0, "maximum": 1},
                },
            }},
            "suggested_follow_ups": {"type": "array", "maxItems": MAX_FOLLOW_UPS, "items": note},
        },
    })
}

/// The JSON Schema of a NeedsMoreInfo whose requests are each one of `requests` (the
/// per-capability schemas); the request items are checked one by one against their capability.
pub(crate) fn needs_more_info_schema() -> Value {
    let note = json!({"type": "string", "maxLength": MAX_NOTE_CHARS});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "reason", "requests"],
        "properties": {
            "type": {"type": "string", "const": "needs_more_info"},
            "reason": note,
            "requests": {"type": "array", "minItems": 1, "maxItems": MAX_REQUESTS, "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["capability_id", "params"],
                "properties": {
                    "capability_id": {"type": "string", "maxLength": 64},
                    "params": {"type": "object"},
                    "reason": note,
                },
            }},
        },
    })
}

/// Reads the model's output strictly: one JSON object (surrounding blanks, or one fenced
/// ```` ```json ```` block, allowed), of the answer's or the NeedsMoreInfo's shape; an answer's
/// sources must be entities of `context`. With `answer_only`, a NeedsMoreInfo is refused.
/// The error says what is wrong, to be fed back to the model.
pub fn parse_response(
    output: &str,
    context: &QueryContext,
    answer_only: bool,
) -> Result<QueryResponse, String> {
    if output.len() > MAX_OUTPUT_BYTES {
        return Err(format!(
            "the output is longer than {MAX_OUTPUT_BYTES} bytes"
        ));
    }
    let text = unfence(output.trim());
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the output is not JSON: {e}"))?;
    let Some(kind) = value.as_object().map(|o| o.get("type")) else {
        return Err("the output must be one JSON object".into());
    };
    match kind.and_then(Value::as_str) {
        Some("answer") => {
            let ids = context.all_entity_ids();
            schema_check::validate(&value, &answer_schema(&ids), "answer")?;
            let mut object = value;
            if let Some(o) = object.as_object_mut() {
                o.remove("type");
            }
            let answer: Answer =
                serde_json::from_value(object).map_err(|e| format!("answer: {e}"))?;
            answer.check(&|id| context.has_entity(id))?;
            Ok(QueryResponse::Answer(answer))
        }
        Some("needs_more_info") if answer_only => Err(
            "no more information can be requested now: answer with {\"type\": \"answer\", ...}"
                .into(),
        ),
        Some("needs_more_info") => {
            schema_check::validate(&value, &needs_more_info_schema(), "needs_more_info")?;
            let mut object = value;
            if let Some(o) = object.as_object_mut() {
                o.remove("type");
            }
            let n: NeedsMoreInfo =
                serde_json::from_value(object).map_err(|e| format!("needs_more_info: {e}"))?;
            Ok(QueryResponse::NeedsMoreInfo(n))
        }
        _ if answer_only => Err("\"type\" must be \"answer\"".into()),
        _ => Err("\"type\" must be \"answer\" or \"needs_more_info\"".into()),
    }
}

/// The inside of one ```` ``` ```` fenced block (with an optional language tag), or `text`.
fn unfence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    let body = body.strip_prefix("json").unwrap_or(body);
    body.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::context::EntitySummary;

    fn context() -> QueryContext {
        let mut c = QueryContext::new(None);
        c.add_entity_summary(EntitySummary {
            id: EntityId(7),
            name: "Mira".into(),
            definitions: vec!["character".into()],
            summary: "Runs the bar.".into(),
        });
        c
    }

    #[test]
    fn answers_are_read_strictly() {
        let c = context();
        let ok = r#"```json
{"type": "answer", "content": "Mira.", "confidence": "high",
 "sources": [{"entity_id": 7, "contribution": "facts", "relevance": 0.9}],
 "suggested_follow_ups": ["And Tobias?"]}
```"#;
        let QueryResponse::Answer(a) = parse_response(ok, &c, false).unwrap() else {
            panic!("an answer");
        };
        assert_eq!(
            (a.confidence, a.sources[0].entity_id),
            (Confidence::High, EntityId(7))
        );
        for (bad, says) in [
            ("Mira.", "not JSON"),
            ("[1]", "one JSON object"),
            (r#"{"type": "guess"}"#, "must be"),
            (
                r#"{"type": "answer", "content": "x", "confidence": "sure", "sources": []}"#,
                "one of",
            ),
            (
                r#"{"type": "answer", "content": "x", "confidence": "low", "sources": [{"entity_id": 8, "contribution": "", "relevance": 1}]}"#,
                "one of",
            ),
            (
                r#"{"type": "answer", "content": "x", "confidence": "low", "sources": [{"entity_id": 7, "contribution": "", "relevance": 1.5}]}"#,
                "above",
            ),
            (
                r#"{"type": "answer", "content": "  ", "confidence": "low", "sources": []}"#,
                "empty",
            ),
            (
                r#"{"type": "answer", "content": "x", "confidence": "low", "sources": [], "extra": 1}"#,
                "not a known field",
            ),
            (
                r#"{"type": "needs_more_info", "reason": "r", "requests": []}"#,
                "fewer than 1",
            ),
        ] {
            let e = parse_response(bad, &c, false).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let more = r#"{"type": "needs_more_info", "reason": "r", "requests": [{"capability_id": "LIST_ENTITY_DEFINITIONS", "params": {}, "reason": "kinds"}]}"#;
        assert!(matches!(
            parse_response(more, &c, false),
            Ok(QueryResponse::NeedsMoreInfo(_))
        ));
        assert!(
            parse_response(more, &c, true)
                .unwrap_err()
                .contains("no more information")
        );
    }

    #[test]
    fn a_forced_answer_has_low_confidence() {
        let mut a = Answer {
            content: "Perhaps Mira.".into(),
            confidence: Confidence::High,
            sources: vec![],
            suggested_follow_ups: vec![],
            forced: None,
        };
        a.force("the limit was reached");
        assert_eq!(a.confidence, Confidence::Low);
        assert!(a.forced.is_some());
    }
}
