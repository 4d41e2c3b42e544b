//! Model servers for the tests: real HTTP listeners on 127.0.0.1 (port 0), one thread per
//! connection, each request recorded and answered by the test's handler. Handlers write raw
//! HTTP, so a test can answer well, stall, drop the connection midway or send garbage. Every
//! wait in a handler is bounded, so no thread outlives its test by more than a few seconds.
#![allow(dead_code)]

use rp_llm::{ClientConfig, ManualClock, OpenAiClient};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `response_format.type`, when there is one.
    pub fn format(&self) -> Option<&str> {
        self.body["response_format"]["type"].as_str()
    }
}

type Handler = dyn Fn(usize, &Recorded, &mut TcpStream) + Send + Sync;

/// A server; it stops accepting when dropped.
pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Answers the `n`-th request (0-based, in arrival order) with `handler`.
    pub fn start(
        handler: impl Fn(usize, &Recorded, &mut TcpStream) + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (reqs, stopping) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let (reqs, handler) = (reqs.clone(), handler.clone());
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
                    let Some(request) = read_request(&mut conn) else {
                        return;
                    };
                    let n = {
                        let mut r = reqs.lock().unwrap();
                        r.push(request.clone());
                        r.len() - 1
                    };
                    handler(n, &request, &mut conn);
                    let _ = conn.flush();
                });
            }
        });
        Server {
            addr,
            requests,
            stop,
        }
    }

    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn read_request(conn: &mut TcpStream) -> Option<Recorded> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte).ok()? == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).ok()?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    conn.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// A whole answer with a `Content-Length`.
pub fn respond(conn: &mut TcpStream, status: u16, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status} Status\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
}

/// A JSON answer.
pub fn json_answer(conn: &mut TcpStream, status: u16, body: &Value) {
    respond(
        conn,
        status,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    );
}

/// A non-streamed chat completion with `text`.
pub fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15},
    })
}

/// An event stream being written.
pub struct Sse<'a> {
    conn: &'a mut TcpStream,
    chunked: bool,
}

impl<'a> Sse<'a> {
    /// Starts an event stream framed by chunks.
    pub fn chunked(conn: &'a mut TcpStream) -> Sse<'a> {
        let _ = conn.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        Sse {
            conn,
            chunked: true,
        }
    }

    /// Starts an event stream that ends with the connection.
    pub fn until_close(conn: &'a mut TcpStream) -> Sse<'a> {
        let _ = conn.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nConnection: close\r\n\r\n",
        );
        Sse {
            conn,
            chunked: false,
        }
    }

    /// Writes raw stream text, flushed.
    pub fn raw(&mut self, text: &str) -> &mut Self {
        if self.chunked {
            let _ = write!(self.conn, "{:x}\r\n{text}\r\n", text.len());
        } else {
            let _ = self.conn.write_all(text.as_bytes());
        }
        let _ = self.conn.flush();
        self
    }

    /// One `data:` event.
    pub fn data(&mut self, value: &Value) -> &mut Self {
        self.raw(&format!("data: {value}\n\n"))
    }

    /// `data: [DONE]` and the end of the body.
    pub fn done(&mut self) {
        self.raw("data: [DONE]\n\n");
        if self.chunked {
            let _ = self.conn.write_all(b"0\r\n\r\n");
        }
        let _ = self.conn.flush();
    }
}

/// A `chat.completion.chunk` with `delta`.
pub fn chunk(delta: Value) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}],
    })
}

/// A chunk with a text delta.
pub fn text(t: &str) -> Value {
    chunk(json!({"content": t}))
}

/// The chunk that finishes.
pub fn finish(reason: &str) -> Value {
    json!({
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
    })
}

/// The usage chunk (`stream_options.include_usage`).
pub fn usage(prompt: u32, completion: u32) -> Value {
    json!({
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    })
}

/// A well-behaved streamed answer of `pieces`.
pub fn stream_text(conn: &mut TcpStream, pieces: &[&str]) {
    let mut s = Sse::chunked(conn);
    s.data(&chunk(json!({"role": "assistant", "content": ""})));
    for p in pieces {
        s.data(&text(p));
    }
    s.data(&finish("stop"))
        .data(&usage(20, pieces.len() as u32))
        .done();
}

/// Sleeps up to `max`, returning early once `until` holds.
pub fn wait_until(max: Duration, until: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < max {
        if until() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    until()
}

/// A configuration for `server` with bounds fit for tests: short timeouts, tiny backoffs.
pub fn config(server: &Server) -> ClientConfig {
    let mut c = ClientConfig::new(server.url(), "smart-model");
    c.connect_timeout_ms = 1_000;
    c.read_timeout_ms = 2_000;
    c.total_timeout_ms = 5_000;
    c.backoff_base_ms = 10;
    c.backoff_max_ms = 40;
    c
}

/// A client on a [`ManualClock`], so backoffs and cool-downs take no time.
pub fn new_client(config: ClientConfig) -> (OpenAiClient, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let client = OpenAiClient::new(config)
        .expect("the configuration is valid")
        .with_clock(clock.clone());
    (client, clock)
}

/// Tokens a sink received.
pub type Tokens = Arc<Mutex<Vec<String>>>;

/// A sink that keeps the tokens.
pub fn collect() -> (Tokens, impl FnMut(&rp_core::turn::Purpose, &str) + Send) {
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let t = tokens.clone();
    (tokens, move |_: &rp_core::turn::Purpose, s: &str| {
        t.lock().unwrap().push(s.to_string())
    })
}
