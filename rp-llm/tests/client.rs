//! The client against real HTTP servers on 127.0.0.1: a well-behaved one (streamed text, tool
//! calls split across deltas, usage; a JSON answer), one that stalls, one that drops the
//! stream midway, one that sends garbage, one without `json_schema` (as llama-cpp-python's:
//! `json_object` with the schema), one that refuses the `schema` field, one that asks the client
//! to slow down, one that is down (the circuit breaker), and the request as it goes on the
//! wire (key, models per purpose, sampling, tools, embeddings).

mod common;

use common::*;
use rp_core::EntityId;
use rp_core::turn::{
    ChatMessage, EmbedRequest, Generate, GenerateRequest, NoSink, Purpose, Role, Sampling, ToolDef,
    block_on,
};
use rp_llm::{BreakerState, ClientConfig, Error, ErrorKind, OpenAiClient};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A handler that answers on the connection.
type Answer = dyn Fn(&mut std::net::TcpStream) + Send + Sync;

fn request(purpose: Purpose) -> GenerateRequest {
    GenerateRequest {
        purpose,
        messages: vec![
            ChatMessage::new(Role::System, "You are Mira Holt, the innkeeper."),
            ChatMessage::new(Role::User, "Wren: Evening, Mira."),
        ],
        params: Sampling::default(),
        json_schema: None,
        tools: Vec::new(),
    }
}

fn reply() -> GenerateRequest {
    request(Purpose::Reply {
        speaker: EntityId(2),
    })
}

#[test]
fn a_stream_reaches_the_sink_as_it_arrives_with_usage_and_model() {
    // The server holds the rest of the stream back until the sink has the first delta: a
    // client that waited for the whole body would never let it go on.
    let first_seen = Arc::new(AtomicBool::new(false));
    let live = Arc::new(AtomicBool::new(false));
    let (seen, was_live) = (first_seen.clone(), live.clone());
    let server = Server::start(move |_, _, conn| {
        let mut s = Sse::chunked(conn);
        s.raw(": keep-alive\n\n")
            .data(&chunk(json!({"role": "assistant", "content": ""})))
            .data(&text("Evening"));
        was_live.store(
            wait_until(Duration::from_secs(3), || seen.load(Ordering::SeqCst)),
            Ordering::SeqCst,
        );
        // A multi-line event (its JSON split over two data lines), a comment, CRLF endings.
        s.raw("data: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\", traveller\"}}]}\r\n\r\n")
            .raw(":ping\n")
            .data(&text("."))
            .data(&finish("stop"))
            .data(&usage(42, 3))
            .done();
    });
    let (client, _) = new_client(config(&server));
    let mut tokens = Vec::new();
    let mut sink = |_: &Purpose, t: &str| {
        if t == "Evening" {
            first_seen.store(true, Ordering::SeqCst);
        }
        tokens.push(t.to_string());
    };
    let result = client.chat(&reply(), &mut sink).unwrap();
    assert!(
        live.load(Ordering::SeqCst),
        "the first delta reached the sink before the rest was sent"
    );
    assert_eq!(tokens, ["Evening", ", traveller", "."]);
    assert_eq!(result.text, "Evening, traveller.");
    assert_eq!(
        (result.prompt_tokens, result.completion_tokens),
        (Some(42), Some(3))
    );
    assert_eq!(result.model.as_deref(), Some("test-model"));
    assert!(result.tool_calls.is_empty());

    let r = &server.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(r.body["model"], "smart-model");
}

#[test]
fn tool_calls_split_across_deltas_come_back_whole() {
    let server = Server::start(|_, _, conn| {
        let call = |index: u32, id: Option<&str>, name: Option<&str>, args: &str| {
            let mut f = json!({"arguments": args});
            if let Some(n) = name {
                f["name"] = n.into();
            }
            let mut c = json!({"index": index, "function": f});
            if let Some(id) = id {
                c["id"] = id.into();
                c["type"] = "function".into();
            }
            chunk(json!({"tool_calls": [c]}))
        };
        let mut s = Sse::chunked(conn);
        s.data(&chunk(json!({"role": "assistant", "content": null})))
            .data(&call(0, Some("call_a"), Some("roll"), ""))
            .data(&call(0, None, None, "{\"dice\": \"2"))
            .data(&call(1, Some("call_b"), Some("look_at"), "{\"tar"))
            .data(&call(0, None, None, "d6+1\"}"))
            .data(&call(1, None, None, "get\": \"the door\"}"))
            .data(&finish("tool_calls"))
            .data(&usage(30, 12))
            .done();
    });
    let (client, _) = new_client(config(&server));
    let mut req = reply();
    req.tools = vec![
        ToolDef {
            name: "roll".into(),
            description: "Rolls dice.".into(),
            parameters: json!({"type": "object", "properties": {"dice": {"type": "string"}}}),
        },
        ToolDef {
            name: "look_at".into(),
            description: "Looks at something.".into(),
            parameters: json!({"type": "object"}),
        },
    ];
    let result = client.chat(&req, &mut NoSink).unwrap();
    assert_eq!(result.text, "");
    let calls: Vec<(&str, &str, &Value)> = result
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "roll", &json!({"dice": "2d6+1"})),
            ("call_b", "look_at", &json!({"target": "the door"})),
        ]
    );
    assert_eq!(result.completion_tokens, Some(12));
    let body = &server.requests()[0].body;
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "function": {
            "name": "roll",
            "description": "Rolls dice.",
            "parameters": {"type": "object", "properties": {"dice": {"type": "string"}}},
        }})
    );
}

#[test]
fn messages_sampling_and_tool_results_go_on_the_wire() {
    let server = Server::start(|_, _, conn| stream_text(conn, &["Four."]));
    let (client, _) = new_client(config(&server));
    let mut req = reply();
    req.messages
        .push(ChatMessage::new(Role::Assistant, "Let me roll."));
    req.messages.push(ChatMessage {
        role: Role::Tool,
        content: "4".into(),
        tool_call_id: Some("call_a".into()),
        tool_calls: Vec::new(),
    });
    req.params = Sampling {
        temperature: Some(0.7),
        top_p: Some(0.9),
        max_tokens: Some(80),
        stop: vec!["\nWren:".into()],
        seed: Some(12),
    };
    client.chat(&req, &mut NoSink).unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are Mira Holt, the innkeeper."},
            {"role": "user", "content": "Wren: Evening, Mira."},
            {"role": "assistant", "content": "Let me roll."},
            {"role": "tool", "content": "4", "tool_call_id": "call_a"},
        ])
    );
    assert_eq!(
        (
            &body["temperature"],
            &body["top_p"],
            &body["max_tokens"],
            &body["seed"]
        ),
        (&json!(0.7), &json!(0.9), &json!(80), &json!(12))
    );
    assert_eq!(body["stop"], json!(["\nWren:"]));
    assert!(body.get("response_format").is_none() && body.get("tools").is_none());
}

#[test]
fn a_json_answer_is_read_when_streaming_is_off_or_ignored() {
    let server = Server::start(|_, _, conn| json_answer(conn, 200, &completion("Aye.")));
    let mut c = config(&server);
    c.stream = false;
    let (off, _) = new_client(c);
    let (tokens, mut sink) = collect();
    let r = off.chat(&reply(), &mut sink).unwrap();
    assert_eq!(r.text, "Aye.");
    assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(11), Some(4)));
    assert_eq!(
        *tokens.lock().unwrap(),
        ["Aye."],
        "the whole text reaches the sink once"
    );
    let first = &server.requests()[0];
    assert!(first.body.get("stream").is_none());
    assert_eq!(first.header("accept"), Some("application/json"));
    // A server that ignores `stream: true` and answers with one JSON object is read too.
    let (on, _) = new_client(config(&server));
    assert_eq!(on.chat(&reply(), &mut NoSink).unwrap().text, "Aye.");
    assert_eq!(server.requests()[1].body["stream"], true);
}

#[test]
fn the_api_key_goes_as_a_bearer_token_and_no_key_sends_none() {
    let server = Server::start(|_, _, conn| stream_text(conn, &["Hm."]));
    let (keyed, _) = new_client(config(&server).with_api_key("sk-test-123"));
    keyed.chat(&reply(), &mut NoSink).unwrap();
    let (open, _) = new_client(config(&server));
    open.chat(&reply(), &mut NoSink).unwrap();
    let r = server.requests();
    assert_eq!(r[0].header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(r[1].header("authorization"), None);
    assert!(
        !format!("{keyed:?}").contains("sk-test-123"),
        "Debug hides the key"
    );
}

#[test]
fn each_purpose_goes_to_its_model() {
    let server = Server::start(|_, r, conn| {
        if r.path.ends_with("/embeddings") {
            json_answer(
                conn,
                200,
                &json!({"data": [{"index": 0, "embedding": [1.0]}]}),
            );
        } else {
            stream_text(conn, &["ok"]);
        }
    });
    let mut c = config(&server);
    c.models.state_update = Some("fast-model".into());
    c.models.summary = Some("fast-model".into());
    c.models.query = Some("fast-model".into());
    c.models.embed = Some("embed-model".into());
    let (client, _) = new_client(c);
    for p in [
        Purpose::Reply {
            speaker: EntityId(2),
        },
        Purpose::StateUpdate,
        Purpose::Summary,
        Purpose::Query,
    ] {
        client.chat(&request(p), &mut NoSink).unwrap();
    }
    client.embeddings(&["a lantern".into()]).unwrap();
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            "smart-model",
            "fast-model",
            "fast-model",
            "fast-model",
            "embed-model"
        ]
    );
}

#[test]
fn a_server_that_stalls_gives_a_timeout_never_a_hang() {
    // Before answering at all.
    let silent = Server::start(|_, _, _| std::thread::sleep(Duration::from_secs(3)));
    let mut c = config(&silent);
    c.read_timeout_ms = 200;
    c.max_retries = 0;
    let (client, _) = new_client(c);
    let start = Instant::now();
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        start.elapsed()
    );
    assert!(
        matches!(
            e,
            Error::Timeout {
                which: "read",
                after_ms: 200,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("read_timeout_ms"), "{e}");

    // In the middle of a stream: the tokens so far reached the sink, the call still fails.
    let midway = Server::start(|_, _, conn| {
        Sse::chunked(conn).data(&text("Well"));
        std::thread::sleep(Duration::from_secs(3));
    });
    let mut c = config(&midway);
    c.read_timeout_ms = 200;
    c.max_retries = 0;
    let (client, _) = new_client(c);
    let (tokens, mut sink) = collect();
    let e = client.chat(&reply(), &mut sink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("reading the stream"), "{e}");
    assert_eq!(*tokens.lock().unwrap(), ["Well"]);

    // A server that keeps the connection alive with comments but never finishes: the total
    // timeout ends the attempt.
    let dribble = Server::start(|_, _, conn| {
        let mut s = Sse::chunked(conn);
        for _ in 0..60 {
            s.raw(": still thinking\n\n");
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut c = config(&dribble);
    c.read_timeout_ms = 200;
    c.total_timeout_ms = 400;
    c.max_retries = 0;
    let (client, _) = new_client(c);
    let start = Instant::now();
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(e, Error::Timeout { which: "total", .. }), "{e}");
}

#[test]
fn a_stream_dropped_midway_is_retried_and_the_retry_succeeds() {
    let server = Server::start(|n, _, conn| {
        if n == 0 {
            // Two deltas, then the connection closes without the last chunk.
            Sse::chunked(conn)
                .data(&text("The cellar"))
                .data(&text(" door"));
            let _ = conn.shutdown(std::net::Shutdown::Both);
        } else {
            stream_text(conn, &["The cellar", " door", " is locked."]);
        }
    });
    let (client, clock) = new_client(config(&server));
    let (tokens, mut sink) = collect();
    let r = client.chat(&reply(), &mut sink).unwrap();
    assert_eq!(r.text, "The cellar door is locked.");
    assert_eq!(server.count(), 2);
    assert_eq!(clock.sleeps().len(), 1, "one backoff before the retry");
    // The retry restarts the stream: the sink sees the failed attempt's start, then the
    // whole new one.
    assert_eq!(
        *tokens.lock().unwrap(),
        ["The cellar", " door", "The cellar", " door", " is locked."]
    );
    assert_eq!(client.breaker_state(), BreakerState::Closed { failures: 0 });
}

#[test]
fn a_stream_that_always_drops_is_an_error_not_a_partial_result() {
    // Framed by the end of the connection, so only the missing `[DONE]` tells.
    let server = Server::start(|_, _, conn| {
        Sse::until_close(conn)
            .data(&text("Half"))
            .raw("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" a li");
    });
    let (client, clock) = new_client(config(&server));
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Dropped, "{e}");
    assert!(e.to_string().contains("[DONE]"), "{e}");
    assert_eq!(
        server.count(),
        3,
        "the first attempt and max_retries (2) more"
    );
    let sleeps = clock.sleeps();
    assert_eq!(sleeps.len(), 2);
    assert!(sleeps[0] >= Duration::from_millis(5) && sleeps[0] <= Duration::from_millis(10));
    assert!(sleeps[1] >= Duration::from_millis(10) && sleeps[1] <= Duration::from_millis(20));
    // Through Generate the error names the endpoint.
    let e = block_on(client.generate(&reply(), &mut NoSink)).unwrap_err();
    assert!(
        e.starts_with(&format!("{}/chat/completions: ", server.url())),
        "{e}"
    );
}

#[test]
fn garbage_is_a_clear_error_that_is_not_retried() {
    let cases: Vec<(&str, Box<Answer>, &str)> = vec![
        (
            "an HTML page",
            Box::new(|c| {
                respond(
                    c,
                    200,
                    &[("Content-Type", "text/html")],
                    b"<!DOCTYPE html><html><body>Welcome to nginx!</body></html>",
                )
            }),
            "HTML page",
        ),
        (
            "text that is not JSON",
            Box::new(|c| respond(c, 200, &[("Content-Type", "application/json")], b"OK then")),
            "not JSON",
        ),
        (
            "JSON of the wrong shape",
            Box::new(|c| json_answer(c, 200, &json!({"result": "Evening."}))),
            "no `choices[0]`",
        ),
        (
            "a stream of garbage",
            Box::new(|c| {
                Sse::chunked(c).raw("data: lorem ipsum\n\n").done();
            }),
            "event 1 of the stream is not JSON",
        ),
        (
            "not HTTP at all",
            Box::new(|c| {
                let _ = c.write_all(b"\x00\x17garbage\xff\r\n\r\n");
            }),
            "not HTTP",
        ),
        (
            "a malformed header line",
            Box::new(|c| {
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nBroken header\r\n\r\n",
                );
            }),
            "not `name: value`",
        ),
    ];
    for (what, handler, says) in cases {
        let server = Server::start(move |_, _, c| handler(c));
        let (client, _) = new_client(config(&server));
        let e = client.chat(&reply(), &mut NoSink).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{what}: {e}");
        assert!(e.to_string().contains(says), "{what}: {e}");
        assert_eq!(server.count(), 1, "{what}: garbage is not retried");
    }
    // An HTML error page from a gateway is a status error, retried as such.
    let gateway = Server::start(|_, _, c| {
        respond(
            c,
            502,
            &[("Content-Type", "text/html")],
            b"<html><body><h1>502 Bad Gateway</h1></body></html>",
        )
    });
    let (client, _) = new_client(config(&gateway));
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert!(matches!(e, Error::Status { status: 502, .. }), "{e}");
    assert!(e.to_string().contains("an HTML page"), "{e}");
    assert_eq!(gateway.count(), 3);
}

#[test]
fn an_answer_larger_than_the_cap_is_refused() {
    let endless = Server::start(|_, _, conn| {
        let mut s = Sse::chunked(conn);
        let piece = "x".repeat(1_000);
        for _ in 0..100 {
            s.data(&text(&piece));
        }
        s.done();
    });
    let mut c = config(&endless);
    c.max_response_bytes = 16 * 1024;
    let (client, _) = new_client(c);
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(e, Error::TooLarge { limit: 16 * 1024 });
    assert_eq!(endless.count(), 1, "not retried");
    // An announced length over the cap is refused before the body is read.
    let announced = Server::start(|_, _, conn| {
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{");
    });
    let (client, _) = new_client(config(&announced));
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
}

#[test]
fn json_schema_refused_with_500_falls_back_to_json_object_and_is_remembered() {
    let schema = json!({
        "type": "object",
        "properties": {"mood": {"type": "string"}},
        "required": ["mood"],
        "additionalProperties": false,
    });
    let expected = schema.to_string();
    // As llama-cpp-python's server: 500 to `json_schema`, fine with `json_object`.
    let server = Server::start(move |_, r, conn| match r.format() {
        Some("json_schema") => respond(conn, 500, &[], b"Internal Server Error"),
        Some("json_object") => {
            let system = r.body["messages"][0]["content"].as_str().unwrap_or("");
            if system.contains(&expected) {
                stream_text(conn, &["{\"mood\":", " \"calm\"}"]);
            } else {
                json_answer(conn, 400, &json!({"error": {"message": "no schema given"}}));
            }
        }
        _ => json_answer(
            conn,
            400,
            &json!({"error": {"message": "JSON was asked for"}}),
        ),
    });
    let (client, _) = new_client(config(&server));
    let mut req = request(Purpose::StateUpdate);
    req.json_schema = Some(schema.clone());
    assert!(client.json_schema_supported());
    let r = client.chat(&req, &mut NoSink).unwrap();
    assert_eq!(r.text, "{\"mood\": \"calm\"}");
    assert!(!client.json_schema_supported(), "remembered");
    let formats: Vec<Option<String>> = server
        .requests()
        .iter()
        .map(|r| r.format().map(str::to_string))
        .collect();
    assert_eq!(
        formats,
        [Some("json_schema".into()), Some("json_object".into())]
    );
    let first = &server.requests()[0].body["response_format"];
    assert_eq!(
        *first,
        json!({"type": "json_schema", "json_schema": {"name": "state_update", "schema": schema, "strict": true}})
    );
    // The fallback carries the schema in `response_format` as well.
    assert_eq!(
        server.requests()[1].body["response_format"],
        json!({"type": "json_object", "schema": schema})
    );
    // The next call asks for json_object straight away.
    client.chat(&req, &mut NoSink).unwrap();
    assert_eq!(server.count(), 3);
    assert_eq!(server.requests()[2].format(), Some("json_object"));
    // A request without a schema asks for no format at all.
    let _ = client.chat(&reply(), &mut NoSink);
    assert_eq!(server.requests()[3].format(), None);
}

#[test]
fn the_json_object_fallback_carries_the_schema_so_llama_cpp_python_constrains_decoding() {
    let schema = json!({
        "type": "object",
        "properties": {"reports": {"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"type": {"const": "state"}, "mood": {"type": "string"}},
             "required": ["type"], "additionalProperties": false}
        ]}}},
        "required": ["reports"],
        "additionalProperties": false,
    });
    let wanted = schema.clone();
    // As llama-cpp-python's server (0.3): `response_format` is a TypedDict whose type is
    // "text" or "json_object", so json_schema fails validation, answered 500; a json_object
    // with `schema` gets a grammar built from the schema. This one answers only when the
    // schema came in `response_format`.
    let server = Server::start(move |_, r, conn| match r.format() {
        Some("json_schema") => json_answer(
            conn,
            500,
            &json!({"error": {"message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object'", "type": "internal_server_error"}}),
        ),
        Some("json_object") if r.body["response_format"]["schema"] == wanted => stream_text(
            conn,
            &["{\"reports\": [{\"type\": \"state\", \"mood\": \"wary\"}]}"],
        ),
        _ => json_answer(
            conn,
            400,
            &json!({"error": {"message": "no grammar without a schema"}}),
        ),
    });
    let (client, _) = new_client(config(&server));
    let mut req = request(Purpose::StateUpdate);
    req.json_schema = Some(schema.clone());
    let r = client.chat(&req, &mut NoSink).unwrap();
    assert_eq!(
        r.text,
        "{\"reports\": [{\"type\": \"state\", \"mood\": \"wary\"}]}"
    );
    assert!(!client.json_schema_supported());
    // Later calls go straight to json_object, still with the schema.
    client.chat(&req, &mut NoSink).unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests[1..] {
        assert_eq!(
            r.body["response_format"],
            json!({"type": "json_object", "schema": schema})
        );
        // The system message asks for the schema too, for servers that ignore the field.
        let system = r.body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains(&schema.to_string()), "{system}");
    }
}

#[test]
fn a_server_that_refuses_the_schema_field_gets_plain_json_object_and_that_is_remembered() {
    let server = Server::start(|_, r, conn| {
        match (
            r.format(),
            r.body["response_format"].get("schema").is_some(),
        ) {
            (Some("json_schema"), _) => json_answer(
                conn,
                400,
                &json!({"error": {"message": "response_format.type must be json_object or text"}}),
            ),
            (Some("json_object"), true) => json_answer(
                conn,
                422,
                &json!({"error": {"message": "response_format.schema: extra fields not permitted"}}),
            ),
            (Some("json_object"), false) => stream_text(conn, &["{\"mood\": \"calm\"}"]),
            _ => json_answer(
                conn,
                400,
                &json!({"error": {"message": "JSON was asked for"}}),
            ),
        }
    });
    let (client, _) = new_client(config(&server));
    let mut req = request(Purpose::StateUpdate);
    req.json_schema = Some(json!({"type": "object"}));
    assert_eq!(
        client.chat(&req, &mut NoSink).unwrap().text,
        "{\"mood\": \"calm\"}"
    );
    client.chat(&req, &mut NoSink).unwrap();
    let shapes: Vec<(Option<String>, bool)> = server
        .requests()
        .iter()
        .map(|r| {
            (
                r.format().map(str::to_string),
                r.body["response_format"].get("schema").is_some(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            (Some("json_schema".into()), false),
            (Some("json_object".into()), true),
            (Some("json_object".into()), false),
            // Remembered: the next call asks for plain json_object at once.
            (Some("json_object".into()), false),
        ]
    );
    // Refusals of the format are answers of a server that is up.
    assert_eq!(client.breaker_state(), BreakerState::Closed { failures: 0 });
}

#[test]
fn a_server_with_json_schema_keeps_getting_it() {
    let server = Server::start(|_, _, conn| stream_text(conn, &["{\"mood\": \"wary\"}"]));
    let (client, _) = new_client(config(&server));
    let mut req = request(Purpose::StateUpdate);
    req.json_schema = Some(json!({"type": "object"}));
    client.chat(&req, &mut NoSink).unwrap();
    client.chat(&req, &mut NoSink).unwrap();
    assert!(client.json_schema_supported());
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.format() == Some("json_schema"))
    );
}

#[test]
fn a_429_is_retried_after_the_wait_it_asks_for_and_a_refusal_is_not() {
    let server = Server::start(|n, _, conn| {
        if n == 0 {
            let body = json!({"error": {"message": "Rate limit reached", "type": "rate_limit"}});
            respond(
                conn,
                429,
                &[("Retry-After", "1"), ("Content-Type", "application/json")],
                body.to_string().as_bytes(),
            );
        } else {
            stream_text(conn, &["Patience."]);
        }
    });
    let mut c = config(&server);
    c.backoff_max_ms = 5_000;
    let (client, clock) = new_client(c);
    assert_eq!(
        client.chat(&reply(), &mut NoSink).unwrap().text,
        "Patience."
    );
    assert_eq!(server.count(), 2);
    assert_eq!(
        clock.sleeps(),
        [Duration::from_secs(1)],
        "Retry-After: 1, no real wait"
    );

    for status in [400, 401, 404, 422] {
        let refusing = Server::start(move |_, _, conn| {
            json_answer(
                conn,
                status,
                &json!({"error": {"message": "model `smart-model` does not exist"}}),
            )
        });
        let (client, clock) = new_client(config(&refusing));
        for _ in 0..4 {
            let e = client.chat(&reply(), &mut NoSink).unwrap_err();
            assert!(
                matches!(&e, Error::Status { status: s, message, .. } if *s == status && message.contains("does not exist")),
                "{e}"
            );
        }
        assert_eq!(refusing.count(), 4, "{status} is not retried");
        assert!(clock.sleeps().is_empty());
        assert_eq!(
            client.breaker_state(),
            BreakerState::Closed { failures: 0 },
            "a refusal shows the server is up"
        );
    }
}

#[test]
fn the_breaker_opens_after_three_failed_calls_and_half_opens_after_the_cool_down() {
    let healthy = Arc::new(AtomicBool::new(false));
    let up = healthy.clone();
    let server = Server::start(move |_, _, conn| {
        if up.load(Ordering::SeqCst) {
            stream_text(conn, &["Back."]);
        } else {
            json_answer(conn, 503, &json!({"error": {"message": "loading model"}}));
        }
    });
    let mut c = config(&server);
    c.max_retries = 0;
    let (client, clock) = new_client(c);
    for i in 0..3 {
        let e = client.chat(&reply(), &mut NoSink).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Status, "call {i}: {e}");
    }
    assert_eq!(server.count(), 3);
    assert_eq!(
        client.breaker_state(),
        BreakerState::Open {
            retry_in: Duration::from_secs(30)
        }
    );
    // Open: calls fail fast and nothing reaches the server.
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(
        e,
        Error::CircuitOpen {
            failures: 3,
            retry_in_ms: 30_000
        }
    );
    assert_eq!(
        client.embeddings(&["x".into()]).unwrap_err().kind(),
        ErrorKind::CircuitOpen
    );
    clock.advance(Duration::from_millis(29_999));
    assert_eq!(
        client.chat(&reply(), &mut NoSink).unwrap_err().kind(),
        ErrorKind::CircuitOpen
    );
    assert_eq!(server.count(), 3);
    // Half-open after 30 s: one trial, which fails and opens the breaker again.
    clock.advance(Duration::from_millis(1));
    assert_eq!(client.breaker_state(), BreakerState::HalfOpen);
    assert_eq!(
        client.chat(&reply(), &mut NoSink).unwrap_err().kind(),
        ErrorKind::Status
    );
    assert_eq!(server.count(), 4);
    assert!(matches!(client.breaker_state(), BreakerState::Open { .. }));
    assert_eq!(
        client.chat(&reply(), &mut NoSink).unwrap_err().kind(),
        ErrorKind::CircuitOpen
    );
    // The server recovers; after the next cool-down the trial succeeds and closes it.
    healthy.store(true, Ordering::SeqCst);
    clock.advance(Duration::from_secs(30));
    assert_eq!(client.chat(&reply(), &mut NoSink).unwrap().text, "Back.");
    assert_eq!(client.breaker_state(), BreakerState::Closed { failures: 0 });
    assert_eq!(client.chat(&reply(), &mut NoSink).unwrap().text, "Back.");
    assert_eq!(server.count(), 6);
}

#[test]
fn a_call_counts_once_for_the_breaker_whatever_its_retries() {
    let server = Server::start(|_, _, conn| json_answer(conn, 500, &json!({"error": "boom"})));
    let (client, _) = new_client(config(&server));
    client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(server.count(), 3);
    assert_eq!(client.breaker_state(), BreakerState::Closed { failures: 1 });
}

#[test]
fn a_server_that_is_down_is_a_connect_error_after_the_retries() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut c = ClientConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    c.backoff_base_ms = 10;
    c.backoff_max_ms = 40;
    let (client, clock) = new_client(c);
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connect, "{e}");
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    assert_eq!(clock.sleeps().len(), 2);
}

#[cfg(feature = "tls")]
#[test]
fn https_to_a_server_without_tls_is_a_tls_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut conn, _)) = listener.accept() {
            let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
            let mut hello = [0u8; 512];
            let _ = std::io::Read::read(&mut conn, &mut hello);
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let (client, _) = new_client(ClientConfig::new(
        format!("https://127.0.0.1:{port}/v1"),
        "m",
    ));
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
}

#[cfg(feature = "tls")]
#[test]
fn a_tls_handshake_that_stalls_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((conn, _)) = listener.accept() {
            std::thread::sleep(Duration::from_secs(3));
            drop(conn);
        }
    });
    let mut c = ClientConfig::new(format!("https://127.0.0.1:{port}/v1"), "m");
    c.read_timeout_ms = 200;
    c.max_retries = 0;
    let (client, _) = new_client(c);
    let start = Instant::now();
    let e = client.chat(&reply(), &mut NoSink).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
}

#[test]
fn embeddings_come_back_in_the_order_of_the_texts() {
    let server = Server::start(|_, r, conn| {
        let n = r.body["input"].as_array().map_or(0, Vec::len);
        // Answered in reverse order, as `index` allows.
        let data: Vec<Value> = (0..n)
            .rev()
            .map(|i| json!({"object": "embedding", "index": i, "embedding": [i as f64, 0.5, -1.0]}))
            .collect();
        json_answer(
            conn,
            200,
            &json!({"object": "list", "data": data, "model": "embed"}),
        );
    });
    let (client, _) = new_client(config(&server));
    let texts: Vec<String> = vec!["the lantern".into(), "the cellar".into(), "the tide".into()];
    let vectors = block_on(client.embed(&EmbedRequest {
        texts: texts.clone(),
    }))
    .unwrap();
    assert_eq!(
        vectors,
        [
            vec![0.0, 0.5, -1.0],
            vec![1.0, 0.5, -1.0],
            vec![2.0, 0.5, -1.0]
        ]
    );
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/embeddings");
    assert_eq!(r.body["input"], json!(texts));
    assert_eq!(r.body["model"], "smart-model");
    assert!(client.embeddings(&[]).unwrap().is_empty());
    assert_eq!(server.count(), 1, "no texts, no call");
}

#[test]
fn a_client_is_shared_by_threads() {
    let server = Server::start(|n, _, conn| stream_text(conn, &[&format!("line {n}")]));
    let (client, _) = new_client(config(&server));
    let client = Arc::new(client);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let c = client.clone();
            std::thread::spawn(move || c.chat(&reply(), &mut NoSink).map(|r| r.text))
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap().unwrap().starts_with("line "));
    }
    assert_eq!(server.count(), 4);
}

#[test]
fn a_client_configured_from_the_environment_talks_to_its_server() {
    let server = Server::start(|_, _, conn| stream_text(conn, &["Aye."]));
    let url = server.url();
    // Through `from_vars`, so the test does not change the process's environment.
    let vars = move |name: &str| match name {
        "RP_LLM_BASE_URL" => Some(url.clone()),
        "RP_LLM_MODEL" => Some("smart-model".to_string()),
        "RP_LLM_API_KEY" => Some("sk-env".to_string()),
        "RP_LLM_FAST_MODEL" => Some("fast-model".to_string()),
        _ => None,
    };
    let client = OpenAiClient::new(ClientConfig::from_vars(vars).unwrap()).unwrap();
    client.chat(&reply(), &mut NoSink).unwrap();
    client
        .chat(&request(Purpose::Summary), &mut NoSink)
        .unwrap();
    let r = server.requests();
    assert_eq!(r[0].header("authorization"), Some("Bearer sk-env"));
    assert_eq!(
        (&r[0].body["model"], &r[1].body["model"]),
        (&json!("smart-model"), &json!("fast-model"))
    );
    // A missing variable is named.
    let e = OpenAiClient::new(ClientConfig::from_vars(|_| None).unwrap_or_else(|e| {
        assert!(
            e.to_string().starts_with("RP_LLM_BASE_URL: is not set"),
            "{e}"
        );
        ClientConfig::new("http://127.0.0.1:1", "m")
    }));
    assert!(e.is_ok());
}
