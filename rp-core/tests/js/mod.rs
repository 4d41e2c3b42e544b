//! The harness of the differential test against JavaScript: a case (expression and context),
//! its evaluation in rp, and one long-lived node process (`oracle.js`) fed JSON lines in
//! batches.

use rp_core::facts::{Context, FactValue, ReplayDraws, SelfFacts, evaluate_to_string};
use serde_json::{Value as Json, json};
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The context of a case, owned (the rp `Context` borrows from it).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseCtx {
    pub content: String,
    pub author: String,
    pub name: String,
    pub mentioned: bool,
    pub response_ms: f64,
    pub retry_ms: f64,
    pub unread_count: f64,
    pub interaction_type: Option<String>,
    pub present: Vec<String>,
    pub hour: f64,
    pub self_facts: Vec<(String, FactValue)>,
    /// The numbers `random()` and `roll()` draw, in order (then zeros).
    pub draws: Vec<f64>,
}

impl Default for CaseCtx {
    fn default() -> Self {
        CaseCtx {
            content: String::new(),
            author: String::new(),
            name: String::new(),
            mentioned: false,
            response_ms: f64::INFINITY,
            retry_ms: 0.0,
            unread_count: 0.0,
            interaction_type: None,
            present: Vec::new(),
            hour: 12.0,
            self_facts: Vec::new(),
            draws: Vec::new(),
        }
    }
}

/// What evaluating an expression gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The rendered value.
    Ok(String),
    /// A runtime error (the message is not compared).
    Error(String),
    /// A compile error (the message is not compared).
    Syntax(String),
    /// node only: the case left the subset (the generator is wrong).
    Bug(String),
}

impl Outcome {
    /// Same kind, and the same value for values.
    pub fn agrees(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Ok(a), Outcome::Ok(b)) => a == b,
            (Outcome::Error(_), Outcome::Error(_)) | (Outcome::Syntax(_), Outcome::Syntax(_)) => {
                true
            }
            _ => false,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ok(v) => write!(f, "value {v}"),
            Outcome::Error(m) => write!(f, "runtime error ({m})"),
            Outcome::Syntax(m) => write!(f, "syntax error ({m})"),
            Outcome::Bug(m) => write!(f, "outside the subset ({m})"),
        }
    }
}

/// Evaluates `expr` in rp.
pub fn rp_eval(expr: &str, c: &CaseCtx) -> Outcome {
    let self_facts: SelfFacts = c.self_facts.iter().cloned().collect();
    let ctx = Context {
        name: &c.name,
        content: &c.content,
        author: &c.author,
        mentioned: c.mentioned,
        response_ms: c.response_ms,
        retry_ms: c.retry_ms,
        unread_count: c.unread_count,
        interaction_type: c.interaction_type.as_deref(),
        present: &c.present,
        hour: c.hour,
        // The oracle has no `drives`, and no generated expression reads it.
        ..Context::default()
    };
    let mut draws = ReplayDraws::new(c.draws.clone());
    match evaluate_to_string(expr, &self_facts, &ctx, &mut draws) {
        Err(e) => Outcome::Syntax(format!("at {}: {}", e.offset, e.message)),
        Ok(Err(e)) => Outcome::Error(e),
        Ok(Ok(v)) => Outcome::Ok(v),
    }
}

/// A number as JSON: finite numbers other than -0 as numbers, the rest as strings that
/// JavaScript's `Number()` reads back exactly.
fn num(x: f64) -> Json {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else if x == 0.0 && x.is_sign_negative() {
        json!("-0")
    } else {
        json!(x)
    }
}

/// The JSON line node reads for a case.
pub fn request(expr: &str, c: &CaseCtx) -> String {
    let self_facts: Vec<Json> = c
        .self_facts
        .iter()
        .map(|(k, v)| {
            let v = match v {
                FactValue::Num(n) => json!({ "n": num(*n) }),
                FactValue::Bool(b) => json!(b),
                FactValue::Str(s) => json!(s),
            };
            json!([k, v])
        })
        .collect();
    let line = json!({
        "expr": expr,
        "ctx": {
            "content": c.content,
            "author": c.author,
            "name": c.name,
            "mentioned": c.mentioned,
            "response_ms": num(c.response_ms),
            "retry_ms": num(c.retry_ms),
            "unread_count": num(c.unread_count),
            "interaction_type": c.interaction_type,
            "present": c.present,
            "hour": num(c.hour),
        },
        "self": self_facts,
        "draws": c.draws,
    });
    line.to_string()
}

/// True when the node tests are to be skipped (`RP_SKIP_NODE=1`).
pub fn skip_node() -> bool {
    std::env::var("RP_SKIP_NODE").is_ok_and(|v| v == "1")
}

/// One node process running `oracle.js`.
pub struct Node {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Node {
    /// Starts node, or `None` when `RP_SKIP_NODE=1`. Panics with a clear message when node is
    /// missing.
    pub fn start() -> Option<Node> {
        if skip_node() {
            eprintln!("RP_SKIP_NODE=1: skipping the comparison with node");
            return None;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/js/oracle.js");
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start `node` ({e}): the differential test of the fact language needs \
                     node (v18 or later) on PATH; set RP_SKIP_NODE=1 to skip it"
                )
            });
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Some(Node {
            child,
            stdin,
            stdout,
        })
    }

    /// Evaluates many cases: writes every request (from a second thread, so neither pipe
    /// fills up) while reading the answers in order.
    pub fn eval_batch(&mut self, cases: &[(String, CaseCtx)]) -> Vec<Outcome> {
        let stdin = self.stdin.as_mut().expect("node's stdin is open");
        let stdout = &mut self.stdout;
        std::thread::scope(|s| {
            let writer = s.spawn(move || {
                let mut buf = Vec::with_capacity(64 * 1024);
                for (expr, ctx) in cases {
                    buf.extend_from_slice(request(expr, ctx).as_bytes());
                    buf.push(b'\n');
                    if buf.len() >= 60 * 1024 {
                        stdin.write_all(&buf).expect("write to node");
                        buf.clear();
                    }
                }
                stdin.write_all(&buf).expect("write to node");
                stdin.flush().expect("flush to node");
            });
            let mut out = Vec::with_capacity(cases.len());
            let mut line = String::new();
            for _ in cases {
                line.clear();
                let n = stdout.read_line(&mut line).expect("read from node");
                assert!(n > 0, "node exited early (see its stderr above)");
                out.push(parse_answer(&line));
            }
            writer.join().expect("writer thread");
            out
        })
    }

    /// Evaluates one case.
    pub fn eval(&mut self, expr: &str, ctx: &CaseCtx) -> Outcome {
        self.eval_batch(&[(expr.to_owned(), ctx.clone())]).remove(0)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // Closing stdin ends the script; wait for it so no process is left behind.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn parse_answer(line: &str) -> Outcome {
    let v: Json =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("bad answer from node {line:?}: {e}"));
    let text = |k: &str| v.get(k).and_then(Json::as_str).map(str::to_owned);
    if let Some(s) = text("ok") {
        Outcome::Ok(s)
    } else if let Some(s) = text("error") {
        Outcome::Error(s)
    } else if let Some(s) = text("syntax") {
        Outcome::Syntax(s)
    } else {
        Outcome::Bug(text("bug").unwrap_or_else(|| line.to_owned()))
    }
}
