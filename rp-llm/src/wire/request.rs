//! Request bodies: `POST /chat/completions` built from an engine's [`GenerateRequest`] in the
//! response [`Format`] the server takes, and `POST /embeddings`.

use super::error_answers::{says_json_schema_unsupported, says_schema_field_refused};
use crate::error::Error;
use rp_core::turn::{GenerateRequest, Purpose, Role};
use serde_json::{Map, Value, json};

/// How a request that wants JSON asks for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// Plain text: the request has no schema.
    Text,
    /// `response_format: {type: "json_schema", json_schema: {name, schema, strict: true}}`.
    JsonSchema,
    /// `response_format: {type: "json_object", schema}`, the schema also given in the system
    /// message. llama-cpp-python's server builds a grammar from `schema` and constrains
    /// decoding with it; servers that do not know the field ignore it, and the system message
    /// still asks for the schema.
    JsonObject,
    /// `response_format: {type: "json_object"}`, the schema only in the system message: for
    /// a server that refuses the `schema` field.
    JsonObjectPlain,
}

impl Format {
    /// How far down the fallbacks a format is (`Text` and `JsonSchema` are 0), for the client
    /// to remember.
    pub(crate) fn level(self) -> u8 {
        match self {
            Format::Text | Format::JsonSchema => 0,
            Format::JsonObject => 1,
            Format::JsonObjectPlain => 2,
        }
    }

    /// The format of a request with a schema at fallback `level`.
    pub(crate) fn for_level(level: u8) -> Format {
        match level {
            0 => Format::JsonSchema,
            1 => Format::JsonObject,
            _ => Format::JsonObjectPlain,
        }
    }

    /// The format to ask for next when a request in this one was refused with `error`:
    /// `json_schema` refused as unsupported ([`says_json_schema_unsupported`]) falls back to
    /// `json_object` with the schema; that refused for its `schema` field
    /// ([`says_schema_field_refused`]) to plain `json_object`.
    pub(crate) fn fallback(self, error: &Error) -> Option<Format> {
        match self {
            Format::JsonSchema if says_json_schema_unsupported(error) => Some(Format::JsonObject),
            Format::JsonObject if says_schema_field_refused(error) => Some(Format::JsonObjectPlain),
            _ => None,
        }
    }
}

/// The name of a purpose, as a schema name and in messages.
pub(crate) fn purpose_name(purpose: &Purpose) -> &'static str {
    purpose.name()
}

fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// The instruction that carries the schema when the server only has `json_object`.
pub(crate) fn schema_instruction(schema: &Value) -> String {
    format!(
        "Answer with one JSON object and nothing else. It must conform to this JSON Schema:\n{schema}"
    )
}

/// Options of a chat request that come from the client's configuration.
pub(crate) struct ChatOptions<'a> {
    pub model: &'a str,
    pub stream: bool,
    pub stream_usage: bool,
    pub format: Format,
}

/// The body of `POST /chat/completions`.
pub(crate) fn chat_body(request: &GenerateRequest, options: &ChatOptions) -> Value {
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .map(|m| {
            let mut o = Map::new();
            o.insert("role".into(), role(m.role).into());
            o.insert("content".into(), m.content.clone().into());
            if let Some(id) = &m.tool_call_id {
                o.insert("tool_call_id".into(), id.clone().into());
            }
            if !m.tool_calls.is_empty() {
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function", "function": {
                            "name": c.name,
                            "arguments": c.arguments.as_str().map_or_else(|| c.arguments.to_string(), str::to_owned),
                        }})
                    })
                    .collect();
                o.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(o)
        })
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), options.model.into());
    if let (Format::JsonObject | Format::JsonObjectPlain, Some(schema)) =
        (options.format, &request.json_schema)
    {
        let instruction = schema_instruction(schema);
        // Into the first system message when there is one: some chat templates accept only
        // one system message, and only first.
        match messages.first_mut() {
            Some(Value::Object(first)) if first.get("role") == Some(&"system".into()) => {
                let content = first
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let joined = if content.is_empty() {
                    instruction
                } else {
                    format!("{content}\n\n{instruction}")
                };
                first.insert("content".into(), joined.into());
            }
            _ => messages.insert(0, json!({"role": "system", "content": instruction})),
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    let p = &request.params;
    if let Some(t) = p.temperature {
        body.insert("temperature".into(), t.into());
    }
    if let Some(t) = p.top_p {
        body.insert("top_p".into(), t.into());
    }
    if let Some(n) = p.max_tokens {
        body.insert("max_tokens".into(), n.into());
    }
    if !p.stop.is_empty() {
        body.insert("stop".into(), p.stop.clone().into());
    }
    if let Some(s) = p.seed {
        body.insert("seed".into(), s.into());
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), tools.into());
    }
    match (options.format, &request.json_schema) {
        (Format::JsonSchema, Some(schema)) => {
            body.insert(
                "response_format".into(),
                json!({
                    "type": "json_schema",
                    "json_schema": {
                        "name": purpose_name(&request.purpose),
                        "schema": schema,
                        "strict": true,
                    }
                }),
            );
        }
        (Format::JsonObject, Some(schema)) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_object", "schema": schema}),
            );
        }
        (Format::JsonObjectPlain, Some(_)) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        _ => {}
    }
    if options.stream {
        body.insert("stream".into(), true.into());
        if options.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }
    Value::Object(body)
}

/// The body of `POST /embeddings`.
pub(crate) fn embed_body(model: &str, texts: &[String]) -> Value {
    json!({"model": model, "input": texts, "encoding_format": "float"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::turn::{ChatMessage, Sampling, ToolDef};

    fn request(json_schema: Option<Value>) -> GenerateRequest {
        GenerateRequest {
            purpose: Purpose::StateUpdate,
            messages: vec![
                ChatMessage::new(Role::System, "You watch."),
                ChatMessage::new(Role::User, "What changed?"),
                ChatMessage {
                    role: Role::Tool,
                    content: "4".into(),
                    tool_call_id: Some("call_1".into()),
                    tool_calls: Vec::new(),
                },
            ],
            params: Sampling {
                temperature: Some(0.5),
                top_p: None,
                max_tokens: Some(64),
                stop: vec!["\n\n".into()],
                seed: Some(7),
            },
            json_schema,
            tools: vec![ToolDef {
                name: "roll".into(),
                description: "Rolls dice.".into(),
                parameters: json!({"type": "object"}),
            }],
        }
    }

    fn options(format: Format) -> ChatOptions<'static> {
        ChatOptions {
            model: "m",
            stream: true,
            stream_usage: true,
            format,
        }
    }

    #[test]
    fn chat_bodies_carry_roles_tool_ids_sampling_tools_and_streaming() {
        let body = chat_body(&request(None), &options(Format::Text));
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "You watch."},
                    {"role": "user", "content": "What changed?"},
                    {"role": "tool", "content": "4", "tool_call_id": "call_1"},
                ],
                "temperature": 0.5,
                "max_tokens": 64,
                "stop": ["\n\n"],
                "seed": 7,
                "tools": [{"type": "function", "function": {
                    "name": "roll", "description": "Rolls dice.", "parameters": {"type": "object"}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
    }

    #[test]
    fn json_object_bodies_put_the_schema_in_the_system_message_and_the_response_format() {
        let schema = json!({"type": "object", "properties": {"mood": {"type": "string"}}});
        let body = chat_body(&request(Some(schema.clone())), &options(Format::JsonSchema));
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "state_update", "schema": schema, "strict": true}})
        );
        let body = chat_body(&request(Some(schema.clone())), &options(Format::JsonObject));
        // The schema also goes in `response_format`, where llama-cpp-python's server reads it
        // to constrain decoding with a grammar.
        assert_eq!(
            body["response_format"],
            json!({"type": "json_object", "schema": schema})
        );
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("You watch.\n\n"), "{system}");
        assert!(system.contains(&schema.to_string()), "{system}");
        // Without a system message, one is added first.
        let mut r = request(Some(schema));
        r.messages.remove(0);
        let body = chat_body(&r, &options(Format::JsonObject));
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn formats_fall_back_from_json_schema_to_json_object_with_then_without_the_schema() {
        let status = |status, message: &str| Error::Status {
            status,
            message: message.into(),
            retry_after_ms: None,
        };
        let internal = status(500, "Internal Server Error");
        let extra = status(422, "response_format.schema: extra fields not permitted");
        assert_eq!(
            Format::JsonSchema.fallback(&internal),
            Some(Format::JsonObject)
        );
        assert_eq!(
            Format::JsonObject.fallback(&extra),
            Some(Format::JsonObjectPlain)
        );
        // A 500 to json_object is the server's trouble, not the field's.
        assert_eq!(Format::JsonObject.fallback(&internal), None);
        assert_eq!(Format::JsonObjectPlain.fallback(&extra), None);
        assert_eq!(Format::Text.fallback(&internal), None);
        assert_eq!(
            Format::JsonObject.fallback(&status(400, "context length exceeded")),
            None
        );
        for f in [
            Format::JsonSchema,
            Format::JsonObject,
            Format::JsonObjectPlain,
        ] {
            assert_eq!(Format::for_level(f.level()), f);
        }
        // Plain json_object keeps the schema in the system message only.
        let schema = json!({"type": "object"});
        let body = chat_body(
            &request(Some(schema.clone())),
            &options(Format::JsonObjectPlain),
        );
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains(&schema.to_string()), "{system}");
    }
}
