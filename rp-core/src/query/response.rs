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
use crate::update::schema_check;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The longest answer, in characters.
pub const MAX_ANSWER_CHARS: usize = 8_000;
/// The longest short text of a response (a reason, a contribution, a follow-up), in characters.
pub const MAX_NOTE_CHARS: usize = 500;
/// The most sources of an answer.
pub const MAX_SOURCES: usize = 50;
/// The most suggested follow-ups of an answer.
pub const MAX_FOLLOW_UPS: usize = 5;
/// The most info requests of one NeedsMoreInfo.
pub const MAX_REQUESTS: usize = 8;
/// The longest model output read, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// How sure an answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Well supported by the context.
    High,
    /// Partly supported.
    Medium,
    /// Little support (every forced answer).
    Low,
}

/// An entity an answer drew on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSource {
    /// The entity (one of the context's).
    pub entity_id: EntityId,
    /// How it contributed.
    pub contribution: String,
    /// How much it mattered, 0–1.
    pub relevance: f64,
}

/// The answer to a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The answer in prose.
    pub content: String,
    /// How sure it is.
    pub confidence: Confidence,
    /// The entities it drew on.
    #[serde(default)]
    pub sources: Vec<AnswerSource>,
    /// Questions worth asking next.
    #[serde(default)]
    pub suggested_follow_ups: Vec<String>,
    /// Set by the engine when the answer was forced (the info-request limit, or a request
    /// that broke the constraints): why. A forced answer always has low confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<String>,
}

impl Answer {
    /// Marks the answer forced for `reason`: low confidence, whatever the model said.
    pub fn force(&mut self, reason: impl Into<String>) {
        self.confidence = Confidence::Low;
        self.forced = Some(reason.into());
    }

    /// Checks the answer against the context's entity ids: content present and bounded,
    /// every source in `context_ids`, relevances in [0, 1].
    pub fn check(&self, has_entity: &dyn Fn(EntityId) -> bool) -> Result<(), String> {
        if self.content.trim().is_empty() {
            return Err("the answer's content is empty".into());
        }
        if self.content.chars().count() > MAX_ANSWER_CHARS {
            return Err(format!(
                "the answer is longer than {MAX_ANSWER_CHARS} characters"
            ));
        }
        if self.sources.len() > MAX_SOURCES {
            return Err(format!("an answer has at most {MAX_SOURCES} sources"));
        }
        for (i, s) in self.sources.iter().enumerate() {
            if !has_entity(s.entity_id) {
                return Err(format!(
                    "sources[{i}].entity_id {} is not an entity of the context",
                    s.entity_id.0
                ));
            }
            if !(s.relevance.is_finite() && (0.0..=1.0).contains(&s.relevance)) {
                return Err(format!("sources[{i}].relevance must be 0 to 1"));
            }
            if s.contribution.chars().count() > MAX_NOTE_CHARS {
                return Err(format!("sources[{i}].contribution is too long"));
            }
        }
        if self.suggested_follow_ups.len() > MAX_FOLLOW_UPS {
            return Err(format!("an answer has at most {MAX_FOLLOW_UPS} follow-ups"));
        }
        if self
            .suggested_follow_ups
            .iter()
            .any(|f| f.chars().count() > MAX_NOTE_CHARS)
        {
            return Err("a follow-up is too long".into());
        }
        if let Some(r) = &self.forced {
            if r.len() > crate::log::MAX_TEXT_BYTES {
                return Err("the forced reason is too long".into());
            }
            if self.confidence != Confidence::Low {
                return Err("a forced answer has low confidence".into());
            }
        }
        Ok(())
    }
}

/// One piece of information the model asks for: a capability and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoRequest {
    /// The capability (`"EXPAND_ENTITY"`, ...), as the model wrote it.
    pub capability_id: String,
    /// Its parameters (a JSON object).
    #[serde(default = "empty_object")]
    pub params: Value,
    /// Why it asks.
    #[serde(default)]
    pub reason: String,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

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
