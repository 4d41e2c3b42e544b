//! Answers read strictly: a chat completion as one JSON body or as a stream of
//! `chat.completion.chunk` events, and an embeddings answer. Anything of the wrong shape is an
//! [`Error::Protocol`] that says what was expected.

use super::error_answers::{error_message, is_html};
use crate::error::{Error, snippet};
use crate::sse::SseEvent;
use rp_core::turn::{GenerateResult, Purpose, TokenSink, ToolCall};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Parses a body that must be a JSON object, naming `what` it should be.
pub(crate) fn json_object(
    body: &[u8],
    content_type: Option<&str>,
    what: &str,
) -> Result<Map<String, Value>, Error> {
    if is_html(body, content_type) {
        return Err(Error::protocol(format!(
            "{what} is an HTML page, not JSON (is the base URL that of the API?): {}",
            snippet(body, 120)
        )));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(other) => Err(Error::protocol(format!(
            "{what} is JSON but not an object: {}",
            snippet(other.to_string().as_bytes(), 120)
        ))),
        Err(e) => Err(Error::protocol(format!(
            "{what} is not JSON ({e}): {}",
            snippet(body, 120)
        ))),
    }
}

/// An `error` member in an answer that otherwise looks successful.
fn embedded_error(o: &Map<String, Value>) -> Option<Error> {
    let e = o.get("error").filter(|e| !e.is_null())?;
    let status = e
        .get("code")
        .and_then(Value::as_u64)
        .filter(|c| (400..600).contains(c))
        .unwrap_or(500) as u16;
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| e.to_string());
    Some(Error::Status {
        status,
        message,
        retry_after_ms: None,
    })
}

fn tokens(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// `content` as text: a string, null, or an array of `{type: "text", text}` parts.
fn content_text(v: Option<&Value>, what: &str) -> Result<String, Error> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                }
            }
            Ok(out)
        }
        Some(other) => Err(Error::protocol(format!(
            "{what} is neither text nor null: {}",
            snippet(other.to_string().as_bytes(), 80)
        ))),
    }
}

/// Tool-call arguments: the JSON the string holds (an empty string is `{}`). Arguments that
/// are not JSON are kept as a JSON string: they are the model's words, for the engine to
/// refuse with its own message, not a fault of the server.
fn arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// A non-streamed answer (`chat.completion`).
pub(crate) fn parse_completion(
    body: &[u8],
    content_type: Option<&str>,
) -> Result<GenerateResult, Error> {
    let o = json_object(body, content_type, "the answer")?;
    if let Some(e) = embedded_error(&o) {
        return Err(e);
    }
    let choice = o
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| {
            Error::protocol(format!(
                "the answer has no `choices[0]`: {}",
                snippet(body, 160)
            ))
        })?;
    let message = choice.get("message").ok_or_else(|| {
        Error::protocol(format!(
            "the answer's `choices[0]` has no `message`: {}",
            snippet(choice.to_string().as_bytes(), 160)
        ))
    })?;
    let text = content_text(message.get("content"), "`choices[0].message.content`")?;
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| Error::protocol("`choices[0].message.tool_calls` is not an array"))?;
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function");
            let name = f
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    Error::protocol(format!(
                        "tool call {i} of the answer has no `function.name`"
                    ))
                })?;
            let args = match f.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => arguments(s),
                None | Some(Value::Null) => json!({}),
                Some(v) => v.clone(),
            };
            tool_calls.push(ToolCall {
                id: c
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{i}")),
                name: name.to_string(),
                arguments: args,
            });
        }
    }
    let usage = o.get("usage");
    Ok(GenerateResult {
        text,
        tool_calls,
        prompt_tokens: tokens(usage.and_then(|u| u.get("prompt_tokens"))),
        completion_tokens: tokens(usage.and_then(|u| u.get("completion_tokens"))),
        model: o
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string),
    })
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// A streamed answer being put together from its `chat.completion.chunk` events.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
    model: Option<String>,
    /// `data: [DONE]` arrived.
    pub done: bool,
    /// A choice said why it finished (`finish_reason`).
    pub finished: bool,
    events: usize,
}

impl StreamState {
    /// Takes one event: text deltas go to `sink` at once.
    pub(crate) fn event(
        &mut self,
        event: &SseEvent,
        purpose: &Purpose,
        sink: &mut dyn TokenSink,
    ) -> Result<(), Error> {
        if self.done {
            return Ok(());
        }
        self.events += 1;
        let n = self.events;
        if event.data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        let what = format!("event {n} of the stream");
        if event.event == "error" {
            // An `event: error`, its data JSON or not.
            let message = error_message(&event.data, None);
            return Err(serde_json::from_slice::<Map<String, Value>>(&event.data)
                .ok()
                .and_then(|o| embedded_error(&o))
                .unwrap_or(Error::Status {
                    status: 500,
                    message,
                    retry_after_ms: None,
                }));
        }
        let o = json_object(&event.data, None, &what)?;
        if let Some(e) = embedded_error(&o) {
            return Err(e);
        }
        if self.model.is_none() {
            self.model = o
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string);
        }
        if let Some(u) = o.get("usage").filter(|u| u.is_object()) {
            self.prompt_tokens = tokens(u.get("prompt_tokens")).or(self.prompt_tokens);
            self.completion_tokens = tokens(u.get("completion_tokens")).or(self.completion_tokens);
        }
        let choices = match o.get("choices") {
            Some(Value::Array(c)) => c,
            None | Some(Value::Null) if o.contains_key("usage") => return Ok(()),
            _ => {
                return Err(Error::protocol(format!(
                    "{what} has no `choices` array: {}",
                    snippet(&event.data, 160)
                )));
            }
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
                self.finished = true;
            }
            let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) else {
                continue;
            };
            let piece = content_text(delta.get("content"), &format!("`delta.content` of {what}"))?;
            if !piece.is_empty() {
                sink.token(purpose, &piece);
                self.text.push_str(&piece);
            }
            if let Some(calls) = delta.get("tool_calls").filter(|c| !c.is_null()) {
                let calls = calls.as_array().ok_or_else(|| {
                    Error::protocol(format!("`delta.tool_calls` of {what} is not an array"))
                })?;
                for c in calls {
                    self.call_delta(c, &what)?;
                }
            }
        }
        Ok(())
    }

    fn call_delta(&mut self, c: &Value, what: &str) -> Result<(), Error> {
        let id = c
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let index = match c.get("index") {
            Some(i) => i.as_u64().ok_or_else(|| {
                Error::protocol(format!("a tool call's `index` in {what} is not a number"))
            })?,
            // No index: a new call when its id is new, else the last call.
            None => match id {
                Some(id) if !self.calls.values().any(|p| p.id == id) => {
                    self.calls.keys().next_back().map_or(0, |k| k + 1)
                }
                Some(id) => *self
                    .calls
                    .iter()
                    .find(|(_, p)| p.id == id)
                    .map(|(k, _)| k)
                    .unwrap_or(&0),
                None => self.calls.keys().next_back().copied().unwrap_or(0),
            },
        };
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id {
            call.id = id.to_string();
        }
        if let Some(f) = c.get("function").filter(|f| !f.is_null()) {
            if let Some(name) = f.get("name").and_then(Value::as_str) {
                // Servers send the name once; some repeat it whole in every delta.
                if call.name.is_empty() {
                    call.name = name.to_string();
                } else if call.name != name {
                    call.name.push_str(name);
                }
            }
            match f.get("arguments") {
                Some(Value::String(s)) => call.arguments.push_str(s),
                None | Some(Value::Null) => {}
                Some(v) => call.arguments = v.to_string(),
            }
        }
        Ok(())
    }

    /// The result, once the stream has ended properly.
    pub(crate) fn finish(self) -> Result<GenerateResult, Error> {
        let mut tool_calls = Vec::new();
        for (i, c) in self.calls {
            if c.name.is_empty() {
                return Err(Error::protocol(format!(
                    "tool call {i} of the stream never got a name"
                )));
            }
            tool_calls.push(ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.id
                },
                name: c.name,
                arguments: arguments(&c.arguments),
            });
        }
        Ok(GenerateResult {
            text: self.text,
            tool_calls,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            model: self.model,
        })
    }
}

/// An embeddings answer: one vector per text, put in order by `index`, all of one length.
pub(crate) fn parse_embeddings(
    body: &[u8],
    content_type: Option<&str>,
    count: usize,
) -> Result<Vec<Vec<f32>>, Error> {
    let o = json_object(body, content_type, "the embeddings answer")?;
    if let Some(e) = embedded_error(&o) {
        return Err(e);
    }
    let data = o.get("data").and_then(Value::as_array).ok_or_else(|| {
        Error::protocol(format!(
            "the embeddings answer has no `data` array: {}",
            snippet(body, 160)
        ))
    })?;
    if data.len() != count {
        return Err(Error::protocol(format!(
            "the embeddings answer has {} vectors for {count} texts",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; count];
    for (i, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            None => i,
            Some(v) => v
                .as_u64()
                .map(|v| v as usize)
                .filter(|&v| v < count)
                .ok_or_else(|| {
                    Error::protocol(format!("`data[{i}].index` is not an index below {count}"))
                })?,
        };
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                Error::protocol(format!(
                    "`data[{i}].embedding` is not an array of numbers (was encoding_format ignored?)"
                ))
            })?
            .iter()
            .map(|x| x.as_f64().map(|x| x as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| Error::protocol(format!("`data[{i}].embedding` holds a non-number")))?;
        if vector.is_empty() || vector.iter().any(|x| !x.is_finite()) {
            return Err(Error::protocol(format!(
                "`data[{i}].embedding` is empty or not finite in f32"
            )));
        }
        if out[index].replace(vector).is_some() {
            return Err(Error::protocol(format!(
                "two vectors have the index {index}"
            )));
        }
    }
    let out: Vec<Vec<f32>> = out.into_iter().map(Option::unwrap_or_default).collect();
    if out.iter().any(|v| v.len() != out[0].len()) {
        return Err(Error::protocol(
            "the embeddings answer's vectors are not all of one length",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rp_core::EntityId;
    use rp_core::turn::NoSink;

    #[test]
    fn completions_parse_and_wrong_shapes_are_named() {
        let ok = br#"{"model":"m1","choices":[{"message":{"content":null,"tool_calls":[
            {"id":"c1","type":"function","function":{"name":"roll","arguments":"{\"dice\":\"2d6\"}"}},
            {"function":{"name":"look","arguments":{"at":"door"}}}]}}],
            "usage":{"prompt_tokens":12,"completion_tokens":3}}"#;
        let r = parse_completion(ok, Some("application/json")).unwrap();
        assert_eq!(r.text, "");
        assert_eq!(r.tool_calls[0].arguments, json!({"dice": "2d6"}));
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, json!({"at": "door"}));
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(12), Some(3)));
        assert_eq!(r.model.as_deref(), Some("m1"));
        let parts = br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#;
        assert_eq!(parse_completion(parts, None).unwrap().text, "ab");
        for (bad, says) in [
            (&b"<html><body>502</body></html>"[..], "HTML"),
            (b"not json", "not JSON"),
            (b"[1]", "not an object"),
            (b"{}", "no `choices[0]`"),
            (br#"{"choices":[]}"#, "no `choices[0]`"),
            (br#"{"choices":[{}]}"#, "no `message`"),
            (
                br#"{"choices":[{"message":{"content":5}}]}"#,
                "neither text",
            ),
            (
                br#"{"choices":[{"message":{"tool_calls":[{}]}}]}"#,
                "function.name",
            ),
        ] {
            let e = parse_completion(bad, None).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
        let e = parse_completion(br#"{"error":{"message":"overloaded","code":503}}"#, None)
            .unwrap_err();
        assert!(matches!(e, Error::Status { status: 503, .. }), "{e}");
    }

    fn sse(data: &str) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: data.as_bytes().to_vec(),
        }
    }

    #[test]
    fn stream_events_accumulate_text_calls_and_usage() {
        let mut s = StreamState::default();
        let mut got = Vec::new();
        let mut sink = |_: &Purpose, t: &str| got.push(t.to_string());
        let p = Purpose::Reply {
            speaker: EntityId(1),
        };
        for e in [
            r#"{"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"roll","arguments":"{\"di"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"look","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ce\":1}"}}]}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}"#,
            "[DONE]",
            "ignored after done",
        ] {
            s.event(&sse(e), &p, &mut sink).unwrap();
        }
        assert!(s.done && s.finished);
        let r = s.finish().unwrap();
        assert_eq!(got, ["Hel", "lo"]);
        assert_eq!(r.text, "Hello");
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(
            (r.tool_calls[0].id.as_str(), r.tool_calls[0].name.as_str()),
            ("a", "roll")
        );
        assert_eq!(r.tool_calls[0].arguments, json!({"dice": 1}));
        assert_eq!(r.tool_calls[1].arguments, json!({}));
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(5), Some(7)));
        assert_eq!(r.model.as_deref(), Some("m"));
    }

    #[test]
    fn bad_stream_events_are_named() {
        let p = Purpose::Query;
        for (data, says) in [
            ("{\"choi", "event 1 of the stream is not JSON"),
            ("<html>", "HTML"),
            ("{\"object\":\"x\"}", "no `choices` array"),
            (r#"{"choices":[{"delta":{"content":{}}}]}"#, "neither text"),
        ] {
            let e = StreamState::default()
                .event(&sse(data), &p, &mut NoSink)
                .unwrap_err();
            assert!(e.to_string().contains(says), "{data}: {e}");
        }
        let e = StreamState::default()
            .event(&sse(r#"{"error":{"message":"boom"}}"#), &p, &mut NoSink)
            .unwrap_err();
        assert!(matches!(e, Error::Status { status: 500, .. }), "{e}");
        let named = SseEvent {
            event: "error".into(),
            data: b"model crashed".to_vec(),
        };
        let e = StreamState::default()
            .event(&named, &p, &mut NoSink)
            .unwrap_err();
        assert!(
            matches!(&e, Error::Status { status: 500, message, .. } if message.contains("model crashed")),
            "{e}"
        );
        let mut s = StreamState::default();
        s.event(
            &sse(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#),
            &p,
            &mut NoSink,
        )
        .unwrap();
        assert!(
            s.finish()
                .unwrap_err()
                .to_string()
                .contains("never got a name")
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_as_text() {
        assert_eq!(arguments("{oops"), json!("{oops"));
        assert_eq!(arguments("  "), json!({}));
    }

    #[test]
    fn embeddings_are_ordered_by_index_and_checked() {
        let body = br#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1.5,2]}]}"#;
        assert_eq!(
            parse_embeddings(body, None, 2).unwrap(),
            vec![vec![1.5, 2.0], vec![3.0, 4.0]]
        );
        for (bad, n, says) in [
            (
                &br#"{"data":[{"embedding":[1]}]}"#[..],
                2,
                "1 vectors for 2 texts",
            ),
            (
                br#"{"data":[{"embedding":[1]},{"embedding":[1,2]}]}"#,
                2,
                "one length",
            ),
            (
                br#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}"#,
                2,
                "two vectors",
            ),
            (br#"{"data":[{"embedding":"AAAA"}]}"#, 1, "not an array"),
            (br#"{"data":[{"embedding":[]}]}"#, 1, "empty"),
            (br#"{"data":[{"embedding":[1e300]}]}"#, 1, "not finite"),
            (br#"{"object":"list"}"#, 1, "no `data`"),
        ] {
            let e = parse_embeddings(bad, None, n).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
    }
}
