// One file: one bench harness; rp, node and evalexpr run the same cases and report in one run.
//! The fact language (issue 3 item 8, DESIGN §10): evaluating `$if` conditions and compiling
//! sheets, rp beside node/V8 and beside an embedded Rust interpreter (evalexpr), in one run.
//!
//! Cases, each over 10 entities (10 contexts; a sheet per entity):
//! - `expr_mentioned` / `expr_unmentioned`:
//!   `mentioned && random() < 0.1 && content.match(/aria|merchant/i)` with `mentioned` true
//!   (the whole expression runs) and false (it stops at once). rp compiles it once per entity
//!   as a `Condition` and evaluates it with `Condition::test` (the breakdown below also times
//!   it as the one-line sheet `$if <expr>: $respond` through `Sheet::decide`).
//! - `match_only` (no target): `content.match(/aria|merchant/i)` alone, to compare regex engines.
//! - `sheet20`: a 20-line sheet (prose, `key: value`, a comment, 10 `$if` lines on mentioned,
//!   content, response_ms, time, self, has_fact and random), one per entity.
//!
//! Peers, fed the same contexts and the same fixed sequence of random numbers:
//! - V8: `node benches/facts/bench.js` compiles every expression once (`new Function`) and
//!   times its own loop; skipped with a note when node is missing;
//! - evalexpr 11.3 (its last MIT release): each expression precompiled
//!   (`build_operator_tree`), one `HashMapContext` per entity holding the same variables;
//!   `random`, `has_fact`, `includes` and the regexes are Rust functions (regexes precompiled
//!   with the `regex` crate). evalexpr evaluates every operand of `&&`/`||` (no
//!   short-circuit), so the sheet puts `random()` first in each `&&` to keep the draws aligned.
//!
//! Every engine first runs a verification pass from the first draw; the checksums (truthy
//! results; responds and facts of the decisions) must agree, so all did the same work.
//! Then 15 samples of ~25 ms each (after warm-up and calibration), interleaved rp / evalexpr /
//! V8 (one long-lived node process answers one sample per request), timed in process CPU time (the figure the ratios use: the machine is shared) and wall
//! clock; then a breakdown of where rp's time goes on `expr_mentioned`; then criterion (wall
//! clock). `RP_FACTS_PROFILE=<case>` (or `compile`) runs only rp's loop of one case (or
//! compiling the 100-line sheet), for `perf record`.
//!
//! Compilation: a 100-line sheet with a warm regex cache (regexes not counted) and a cold one,
//! and 1000 sheets sharing 5 distinct regexes, which must leave 5 regexes in the cache.

use criterion::{Criterion, Throughput};
use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, EvalexprError, Function,
    HashMapContext, Value,
};
use rp_core::facts::{Condition, Context, Draws, JsRegex, RegexCache, SeededDraws, Sheet};
use serde_json::json;
use std::cell::RefCell;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Length of the fixed random sequence (a power of two; both sides wrap around it).
const DRAWS: usize = 4096;
/// Entities per round.
const ENTITIES: usize = 10;
/// `$if` lines in the 20-line sheet.
const SHEET_CONDITIONS: usize = 10;

const EXPR: &str = "mentioned && random() < 0.1 && content.match(/aria|merchant/i)";
const EXPR_EVX: &str = "mentioned && random() < 0.1 && re_aria(content)";
const MATCH: &str = "content.match(/aria|merchant/i)";
const MATCH_EVX: &str = "re_aria(content)";

/// True when run as a benchmark (`cargo bench`); false in test mode (`cargo test --benches`,
/// `-- --test`), where everything shrinks to a smoke run.
fn full_run() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

fn scaled<T>(full: T, smoke: T) -> T {
    if full_run() { full } else { smoke }
}

fn report(line: impl AsRef<str>) {
    println!("RESULT facts: {}", line.as_ref());
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

// ---------------------------------------------------------------------------------------------
// The shared inputs.

fn draw_sequence() -> Vec<f64> {
    let mut g = SeededDraws::new(0xfac7_5eed, 0);
    (0..DRAWS).map(|_| g.draw()).collect()
}

/// The fixed sequence, wrapping around (node does the same).
struct Cycle<'a> {
    seq: &'a [f64],
    pos: usize,
}

impl Draws for Cycle<'_> {
    fn draw(&mut self) -> f64 {
        let d = self.seq[self.pos];
        self.pos = (self.pos + 1) & (DRAWS - 1);
        d
    }
}

/// One entity's situation: what its context holds, and its `key: value` facts.
#[derive(Clone, Debug)]
struct Situation {
    name: String,
    content: String,
    author: String,
    mentioned: bool,
    response_ms: f64,
    hour: f64,
    present: Vec<String>,
    mood: &'static str,
    greed: f64,
    chatty: bool,
}

const NAMES: [&str; ENTITIES] = [
    "Aria", "Bram", "Cress", "Dunstan", "Elowen", "Fenn", "Greta", "Hollis", "Ivo", "Juno",
];

fn situations() -> Vec<Situation> {
    let messages = [
        "Aria, what do you have for sale today?",
        "Does anyone know a merchant who trades in silver?",
        "The road north was muddy and cold; we barely made it before the gates closed.",
        "I'll pay in gold if the price is right.",
        "Can we haggle over this lantern, or is the price fixed?",
        "Listen, all of you: the caravan from the southern coast is three days late, the \
         bridge at Millford washed out in the storm, and nobody in this tavern seems to care \
         that half the town's lamp oil was on those wagons. Someone should ride out at dawn.",
        "hello",
        "Wren waves at the merchant and asks about maps of the marshes.",
        "The tavern is quiet tonight.",
        "Is that a coin purse on your belt?",
    ];
    let authors = [
        "Tamsin", "Wren", "Tamsin", "Odo", "Wren", "Odo", "Mira", "Wren", "Tamsin", "Mira",
    ];
    let response_ms = [
        f64::INFINITY,
        1_500.0,
        90_000.0,
        20_000.0,
        2_500.0,
        600_000.0,
        f64::INFINITY,
        45_000.0,
        1_000.0,
        120_000.0,
    ];
    let hours = [9.0, 14.0, 22.0, 3.0, 11.0, 18.0, 7.0, 23.0, 12.0, 16.0];
    let moods = ["cheerful", "grim", "cheerful", "wary", "cheerful"];
    (0..ENTITIES)
        .map(|i| Situation {
            name: NAMES[i].into(),
            content: messages[i].into(),
            author: authors[i].into(),
            mentioned: i % 3 == 0,
            response_ms: response_ms[i],
            hour: hours[i],
            present: vec![NAMES[i].into(), "Wren".into(), authors[i].into()],
            mood: moods[i % moods.len()],
            greed: 0.2 + 0.07 * i as f64,
            chatty: i % 2 == 0,
        })
        .collect()
}

impl Situation {
    fn context(&self) -> Context<'_> {
        Context {
            name: &self.name,
            content: &self.content,
            author: &self.author,
            mentioned: self.mentioned,
            response_ms: self.response_ms,
            hour: self.hour,
            drives: Default::default(),
            present: &self.present,
            ..Context::default()
        }
    }

    fn greed(&self) -> String {
        format!("{:.2}", self.greed)
    }

    /// The context as node reads it (`response_ms` Infinity as null).
    fn json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "content": self.content,
            "author": self.author,
            "mentioned": self.mentioned,
            "response_ms": if self.response_ms.is_finite() { json!(self.response_ms) } else { json!(null) },
            "hour": self.hour,
            "present": self.present,
            "self": {
                "mood": self.mood,
                "greed": self.greed().parse::<f64>().expect("number"),
                "chatty": self.chatty,
                "home": "Lantern Row",
            },
        })
    }

    /// The same variables for evalexpr (`self.x` as `self_x`, `time.x` as `time_x`).
    fn evalexpr_context(&self, functions: &[(&str, Function)]) -> HashMapContext {
        let mut c = HashMapContext::new();
        let day = (6.0..18.0).contains(&self.hour);
        let values = [
            ("mentioned", Value::Boolean(self.mentioned)),
            ("content", Value::String(self.content.clone())),
            ("author", Value::String(self.author.clone())),
            ("name", Value::String(self.name.clone())),
            ("response_ms", Value::Float(self.response_ms)),
            ("time_hour", Value::Float(self.hour)),
            ("time_is_night", Value::Boolean(!day)),
            ("self_mood", Value::String(self.mood.into())),
            (
                "self_greed",
                Value::Float(self.greed().parse().expect("number")),
            ),
            ("self_chatty", Value::Boolean(self.chatty)),
        ];
        for (k, v) in values {
            c.set_value(k.into(), v).expect("set value");
        }
        for (k, f) in functions {
            c.set_function((*k).into(), f.clone())
                .expect("set function");
        }
        c
    }
}

/// What a fired `$if` does.
#[derive(Clone, Copy)]
enum Then {
    Fact(&'static str),
    Respond(bool),
}

/// A sheet line, written for rp/JavaScript and for evalexpr.
enum Line {
    Plain(String),
    Comment(&'static str),
    If {
        js: &'static str,
        evx: &'static str,
        then: Then,
    },
}

/// The 20-line sheet of `s`: 9 unconditional lines (4 of them `key: value`), a comment and
/// 10 `$if` lines.
fn sheet20(s: &Situation) -> Vec<Line> {
    use Line::*;
    use Then::*;
    vec![
        Plain(format!(
            "{} is a traveling merchant who sells lanterns and maps.",
            s.name
        )),
        Plain("She speaks softly and counts coins when she is nervous.".into()),
        Plain(format!("mood: {}", s.mood)),
        Plain(format!("greed: {}", s.greed())),
        Plain(format!("chatty: {}", s.chatty)),
        Plain("home: Lantern Row".into()),
        Plain("She never haggles before noon.".into()),
        Comment("$# replies when addressed, sometimes unprompted"),
        If {
            js: "mentioned",
            evx: "mentioned",
            then: Respond(true),
        },
        If {
            js: r"content.match(/\b(gold|coin|price|trade)\b/i) && self.greed > 0.5",
            evx: "re_trade(content) && self_greed > 0.5",
            then: Respond(true),
        },
        If {
            js: "random() < 0.05 && response_ms > 60000",
            evx: "random() < 0.05 && response_ms > 60000",
            then: Respond(true),
        },
        If {
            js: "response_ms < 3000 && !mentioned",
            evx: "response_ms < 3000 && !mentioned",
            then: Respond(false),
        },
        If {
            js: "time.is_night",
            evx: "time_is_night",
            then: Fact("keeps her lantern lit and her voice low"),
        },
        If {
            js: r#"time.hour < 12 && content.includes("haggle")"#,
            evx: r#"time_hour < 12 && includes(content, "haggle")"#,
            then: Fact("refuses to haggle before noon"),
        },
        If {
            js: r#"random() < 0.3 && self.mood == "cheerful""#,
            evx: r#"random() < 0.3 && self_mood == "cheerful""#,
            then: Fact("hums an old sea shanty"),
        },
        If {
            js: r#"has_fact("sea shanty") && mentioned"#,
            evx: r#"has_fact("sea shanty") && mentioned"#,
            then: Fact("offers to teach the shanty"),
        },
        If {
            js: r#"author === "Wren" || has_fact(/^mood: (grim|wary)$/)"#,
            evx: r#"author == "Wren" || has_fact_mood()"#,
            then: Fact("eyes the stranger warily"),
        },
        If {
            js: "content.length > 200 && !self.chatty",
            evx: "len(content) > 200 && !self_chatty",
            then: Respond(false),
        },
        Plain("She keeps a ledger of every debt owed to her.".into()),
        Plain("Wren is her rival from the northern markets.".into()),
    ]
}

fn then_text(t: Then) -> String {
    match t {
        Then::Fact(f) => f.into(),
        Then::Respond(true) => "$respond".into(),
        Then::Respond(false) => "$respond false".into(),
    }
}

fn rp_lines(lines: &[Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match l {
            Line::Plain(f) => f.clone(),
            Line::Comment(c) => (*c).into(),
            Line::If { js, then, .. } => format!("$if {js}: {}", then_text(*then)),
        })
        .collect()
}

fn sheet_json(lines: &[Line]) -> serde_json::Value {
    let plain: Vec<&str> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Plain(f) => Some(f.as_str()),
            _ => None,
        })
        .collect();
    let has_respond = lines.iter().any(|l| {
        matches!(
            l,
            Line::If {
                then: Then::Respond(true),
                ..
            }
        )
    });
    let ls: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| match l {
            Line::Plain(f) => json!({"t": "fact", "text": f}),
            Line::Comment(_) => json!({"t": "comment"}),
            Line::If {
                js,
                then: Then::Fact(f),
                ..
            } => json!({"t": "if", "cond": js, "fact": f}),
            Line::If {
                js,
                then: Then::Respond(v),
                ..
            } => json!({"t": "if", "cond": js, "respond": v}),
        })
        .collect();
    json!({"has_respond": has_respond, "plain": plain, "lines": ls})
}

// ---------------------------------------------------------------------------------------------
// evalexpr: the functions the expressions call, over thread-local state (the random cursor and
// the facts active so far), since evalexpr functions are `Fn + Send + Sync + 'static`.

thread_local! {
    static EVX_DRAWS: RefCell<(Vec<f64>, usize)> = const { RefCell::new((Vec::new(), 0)) };
    static EVX_FACTS: RefCell<Vec<Rc<str>>> = const { RefCell::new(Vec::new()) };
}

fn evx_reset_draws(seq: &[f64]) {
    EVX_DRAWS.with(|d| *d.borrow_mut() = (seq.to_vec(), 0));
}

fn evx_draw() -> f64 {
    EVX_DRAWS.with(|d| {
        let mut d = d.borrow_mut();
        let v = d.0[d.1];
        d.1 = (d.1 + 1) & (DRAWS - 1);
        v
    })
}

fn evx_str(v: &Value) -> Result<&str, EvalexprError> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(EvalexprError::expected_string(other.clone())),
    }
}

fn regex_fn(re: regex::Regex) -> Function {
    Function::new(move |arg| Ok(Value::Boolean(re.is_match(evx_str(arg)?))))
}

fn evx_functions() -> Vec<(&'static str, Function)> {
    let mood = regex::Regex::new("^mood: (grim|wary)$").expect("regex");
    vec![
        (
            "random",
            Function::new(|arg| {
                let d = evx_draw();
                Ok(match arg {
                    Value::Empty => Value::Float(d),
                    p => Value::Boolean(d < p.as_number()?),
                })
            }),
        ),
        (
            "has_fact",
            Function::new(|arg| {
                let q = evx_str(arg)?.to_lowercase();
                Ok(Value::Boolean(EVX_FACTS.with(|f| {
                    f.borrow().iter().any(|f| f.to_lowercase().contains(&q))
                })))
            }),
        ),
        (
            "has_fact_mood",
            Function::new(move |_| {
                Ok(Value::Boolean(
                    EVX_FACTS.with(|f| f.borrow().iter().any(|f| mood.is_match(f))),
                ))
            }),
        ),
        (
            "includes",
            Function::new(|arg| {
                let t = arg.as_fixed_len_tuple(2)?;
                Ok(Value::Boolean(evx_str(&t[0])?.contains(evx_str(&t[1])?)))
            }),
        ),
        (
            "re_aria",
            regex_fn(regex::Regex::new("(?i)aria|merchant").expect("regex")),
        ),
        (
            "re_trade",
            regex_fn(regex::Regex::new(r"(?i)\b(gold|coin|price|trade)\b").expect("regex")),
        ),
    ]
}

enum EvxLine {
    Plain(Rc<str>),
    Comment,
    If(evalexpr::Node, Then),
}

struct EvxSheet {
    plain: Vec<Rc<str>>,
    lines: Vec<EvxLine>,
    has_respond: bool,
}

impl EvxSheet {
    fn compile(lines: &[Line]) -> EvxSheet {
        let lines: Vec<EvxLine> = lines
            .iter()
            .map(|l| match l {
                Line::Plain(f) => EvxLine::Plain(f.as_str().into()),
                Line::Comment(_) => EvxLine::Comment,
                Line::If { evx, then, .. } => EvxLine::If(
                    evalexpr::build_operator_tree(evx).expect("evalexpr compiles"),
                    *then,
                ),
            })
            .collect();
        EvxSheet {
            plain: lines
                .iter()
                .filter_map(|l| match l {
                    EvxLine::Plain(f) => Some(f.clone()),
                    _ => None,
                })
                .collect(),
            has_respond: lines
                .iter()
                .any(|l| matches!(l, EvxLine::If(_, Then::Respond(true)))),
            lines,
        }
    }

    /// rp's response control, in evalexpr: returns (respond, number of facts).
    fn decide(&self, ctx: &HashMapContext) -> (bool, usize) {
        EVX_FACTS.with(|f| {
            let mut f = f.borrow_mut();
            f.clear();
            f.extend(self.plain.iter().cloned());
        });
        let mut facts: Vec<Rc<str>> = Vec::new();
        let mut respond = None;
        for l in &self.lines {
            match l {
                EvxLine::Plain(f) => facts.push(f.clone()),
                EvxLine::Comment => {}
                EvxLine::If(tree, then) => {
                    if tree.eval_boolean_with_context(ctx).unwrap_or(false) {
                        match then {
                            Then::Fact(f) => {
                                let f: Rc<str> = (*f).into();
                                facts.push(f.clone());
                                EVX_FACTS.with(|a| a.borrow_mut().push(f));
                            }
                            Then::Respond(v) => respond = Some(*v),
                        }
                    }
                }
            }
        }
        (respond.unwrap_or(!self.has_respond), facts.len())
    }
}

// ---------------------------------------------------------------------------------------------
// The contenders of one evaluation case, each able to run one round (every entity once) and
// answer a checksum.

struct RpCase<'s> {
    /// For a single expression: one compiled condition per entity.
    conditions: Vec<Condition>,
    sheets: Vec<Sheet>,
    contexts: Vec<Context<'s>>,
}

impl RpCase<'_> {
    /// One round with `draws`: for an expression, how many were truthy; for a sheet, responds
    /// + 1e6 × facts (node computes the same).
    fn round(&self, draws: &mut Cycle<'_>) -> u64 {
        if !self.conditions.is_empty() {
            return self
                .conditions
                .iter()
                .zip(&self.contexts)
                .map(|(c, ctx)| u64::from(c.test(ctx, draws).unwrap_or(false)))
                .sum();
        }
        let mut responds = 0;
        let mut facts = 0;
        for (sheet, ctx) in self.sheets.iter().zip(&self.contexts) {
            let d = sheet.decide(ctx, draws);
            responds += u64::from(d.respond);
            facts += d.facts.len() as u64;
        }
        responds + 1_000_000 * facts
    }
}

struct EvxCase {
    /// For a single expression: the tree (evaluated as a condition).
    expr: Option<evalexpr::Node>,
    sheets: Vec<EvxSheet>,
    contexts: Vec<HashMapContext>,
}

impl EvxCase {
    fn round(&self) -> u64 {
        match &self.expr {
            Some(tree) => self
                .contexts
                .iter()
                .map(|c| u64::from(tree.eval_boolean_with_context(c).unwrap_or(false)))
                .sum(),
            None => {
                let mut responds = 0;
                let mut facts = 0;
                for (s, c) in self.sheets.iter().zip(&self.contexts) {
                    let (r, f) = s.decide(c);
                    responds += u64::from(r);
                    facts += f as u64;
                }
                responds + 1_000_000 * facts
            }
        }
    }
}

struct Case<'s> {
    name: &'static str,
    rp: RpCase<'s>,
    evx: EvxCase,
    node: serde_json::Value,
}

fn expr_case<'s>(
    name: &'static str,
    (expr, expr_evx): (&str, &str),
    sits: &'s [Situation],
    cache: &mut RegexCache,
    functions: &[(&str, Function)],
) -> Case<'s> {
    Case {
        name,
        rp: RpCase {
            conditions: sits
                .iter()
                .map(|_| Condition::compile(expr, cache).expect("compiles"))
                .collect(),
            sheets: Vec::new(),
            contexts: sits.iter().map(Situation::context).collect(),
        },
        evx: EvxCase {
            expr: Some(evalexpr::build_operator_tree(expr_evx).expect("evalexpr compiles")),
            sheets: Vec::new(),
            contexts: sits.iter().map(|s| s.evalexpr_context(functions)).collect(),
        },
        node: json!({
            "name": name, "kind": "expr", "expr": expr,
            "entities": sits.iter().map(Situation::json).collect::<Vec<_>>(),
        }),
    }
}

fn sheet_case<'s>(
    sits: &'s [Situation],
    cache: &mut RegexCache,
    functions: &[(&str, Function)],
) -> Case<'s> {
    let sheets: Vec<Vec<Line>> = sits.iter().map(sheet20).collect();
    assert_eq!(sheets[0].len(), 20);
    Case {
        name: "sheet20",
        rp: RpCase {
            conditions: Vec::new(),
            sheets: sheets
                .iter()
                .map(|l| Sheet::compile(&rp_lines(l), cache).expect("compiles"))
                .collect(),
            contexts: sits.iter().map(Situation::context).collect(),
        },
        evx: EvxCase {
            expr: None,
            sheets: sheets.iter().map(|l| EvxSheet::compile(l)).collect(),
            contexts: sits.iter().map(|s| s.evalexpr_context(functions)).collect(),
        },
        node: json!({
            "name": "sheet20", "kind": "sheet",
            "entities": sits.iter().zip(&sheets)
                .map(|(s, l)| json!({"ctx": s.json(), "sheet": sheet_json(l)}))
                .collect::<Vec<_>>(),
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Timing.

/// Process CPU time (this process runs one thread while timing; node's figure is its
/// process CPU time too).
fn cpu_now() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Timed samples, in ns per evaluation: wall clock and CPU.
#[derive(Clone, Debug, Default)]
struct Samples {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Samples {
    fn push(&mut self, (wall, cpu): (f64, f64)) {
        self.wall.push(wall);
        self.cpu.push(cpu);
    }
}

/// Times `round` (every entity once): warmed up, then calibrated so that a sample lasts about
/// `sample` of wall time (node does the same).
struct Timer<F: FnMut() -> u64> {
    round: F,
    iters: usize,
    sink: u64,
}

impl<F: FnMut() -> u64> Timer<F> {
    fn new(mut round: F, warmup: Duration, sample: Duration) -> Timer<F> {
        let mut sink = 0u64;
        let until = Instant::now() + warmup;
        while Instant::now() < until {
            for _ in 0..100 {
                sink = sink.wrapping_add(round());
            }
        }
        let t = Instant::now();
        let mut n = 0u32;
        while t.elapsed() < Duration::from_millis(20) {
            for _ in 0..10 {
                sink = sink.wrapping_add(round());
            }
            n += 10;
        }
        let per_round = t.elapsed().as_secs_f64() / f64::from(n);
        let iters = (sample.as_secs_f64() / per_round).ceil().max(1.0) as usize;
        Timer { round, iters, sink }
    }

    /// One sample: (wall, CPU) ns per evaluation.
    fn sample(&mut self) -> (f64, f64) {
        let c = cpu_now();
        let t = Instant::now();
        for _ in 0..self.iters {
            self.sink = self.sink.wrapping_add((self.round)());
        }
        let wall = t.elapsed();
        let cpu = cpu_now() - c;
        black_box(self.sink);
        let evals = (self.iters * ENTITIES) as f64;
        (
            wall.as_nanos() as f64 / evals,
            cpu.as_nanos() as f64 / evals,
        )
    }
}

/// `samples` samples of `round` alone.
fn timed(
    samples: usize,
    sample: Duration,
    warmup: Duration,
    round: impl FnMut() -> u64,
) -> Samples {
    let mut t = Timer::new(round, warmup, sample);
    let mut out = Samples::default();
    for _ in 0..samples {
        out.push(t.sample());
    }
    out
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The V8 contender: one long-lived `node benches/facts/bench.js`, answering one sample per
/// request so that its samples interleave with rp's and evalexpr's.
struct NodePeer {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
    version: String,
    /// Verification checksum of each case.
    checksums: Vec<(String, u64)>,
}

impl NodePeer {
    /// Starts node on `spec` (it verifies, warms up and calibrates every case); `None`, with a
    /// note, when node is missing or fails.
    fn start(spec: &serde_json::Value) -> Option<NodePeer> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("facts/bench.js");
        let child = Command::new("node")
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                report(format!(
                    "note: node not available ({e}); the V8 column is skipped"
                ));
                return None;
            }
        };
        let mut stdin = child.stdin.take().expect("stdin");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let ready = writeln!(stdin, "{spec}")
            .and_then(|()| stdin.flush())
            .ok()
            .and_then(|()| read_json(&mut out));
        let Some(ready) = ready else {
            report("note: node failed to start the bench; the V8 column is skipped");
            drop(stdin);
            let _ = child.wait();
            return None;
        };
        let checksums = ready["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().expect("name").to_owned(),
                    c["checksum"].as_f64().expect("checksum") as u64,
                )
            })
            .collect();
        Some(NodePeer {
            child,
            stdin: Some(stdin),
            out,
            version: format!(
                "node {} (V8 {})",
                ready["node"].as_str().unwrap_or("?"),
                ready["v8"].as_str().unwrap_or("?")
            ),
            checksums,
        })
    }

    fn checksum(&self, case: &str) -> Option<u64> {
        self.checksums.iter().find(|(k, _)| k == case).map(|c| c.1)
    }

    /// One sample of `case`: (wall, CPU) ns per evaluation.
    fn sample(&mut self, case: &str) -> (f64, f64) {
        let stdin = self.stdin.as_mut().expect("node is running");
        writeln!(stdin, "sample {case}")
            .and_then(|()| stdin.flush())
            .expect("ask node for a sample");
        let v = read_json(&mut self.out).expect("node answers a sample");
        (
            v["wall"].as_f64().expect("wall"),
            v["cpu"].as_f64().expect("cpu"),
        )
    }
}

impl Drop for NodePeer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn read_json(out: &mut impl BufRead) -> Option<serde_json::Value> {
    let mut line = String::new();
    out.read_line(&mut line).ok()?;
    serde_json::from_str(&line).ok()
}

// ---------------------------------------------------------------------------------------------
// Compilation.

const REGEXES: [&str; 5] = [
    "/aria|merchant/i",
    r"/\b(gold|coin|price|trade)\b/i",
    r"/^(hi|hello|hey)\b/i",
    r"/\?\s*$/",
    r"/\b(sword|blade|dagger)s?\b/i",
];

/// A 100-line sheet: 10 `key: value` facts, 45 prose facts, 5 comments, 40 `$if` lines whose
/// regexes are the 5 of `REGEXES`. `k` varies names and numbers, not the regexes.
fn sheet100(k: usize) -> Vec<String> {
    let name = format!("{}{k}", NAMES[k % NAMES.len()]);
    let mut lines = Vec::with_capacity(100);
    let kv = [
        format!("name: {name}"),
        "mood: cheerful".into(),
        format!("greed: 0.{}", k % 10),
        "chatty: true".into(),
        format!("age: {}", 20 + k % 50),
        "home: Lantern Row".into(),
        "fox_tf: 0.3".into(),
        "is_poisoned: false".into(),
        "title: the Lantern-Seller".into(),
        format!("debts: {}", k % 7),
    ];
    lines.extend(kv);
    let conds: [fn(usize, &str) -> String; 5] = [
        |_, r| format!("$if mentioned && content.match({r}): $respond"),
        |i, r| {
            format!(
                "$if random() < 0.{} && content.match({r}): $respond",
                i % 9 + 1
            )
        },
        |i, r| {
            format!(
                "$if !mentioned && response_ms < {} && {r}.test(content): $respond false",
                1000 * i
            )
        },
        |i, r| {
            format!(
                "$if time.is_night && has_fact(\"lantern\") && content.match({r}): speaks of lantern {i}"
            )
        },
        |i, r| {
            format!(
                "$if self.greed > 0.{} && content.match({r}) || author === \"Wren\": haggles hard, step {i}",
                i % 10
            )
        },
    ];
    let mut c = 0;
    for i in 0..85 {
        if i % 17 == 16 {
            lines.push(format!("$# section {i}"));
        } else if i % 2 == 1 && c < 40 {
            let r = REGEXES[c % REGEXES.len()];
            lines.push(conds[(c / REGEXES.len()) % conds.len()](c, r));
            c += 1;
        } else {
            lines.push(format!(
                "{name} remembers the {i}th lantern she sold, on a rainy market day."
            ));
        }
    }
    for i in 0..5 {
        lines.push(format!("{name} keeps spare wicks in pocket {i}."));
    }
    lines
}

fn compile_figures() -> (Vec<f64>, Vec<f64>, usize, Duration, usize) {
    let lines = sheet100(0);
    assert_eq!(lines.len(), 100);
    let ifs = lines.iter().filter(|l| l.starts_with("$if")).count();
    let mut warm = RegexCache::default();
    Sheet::compile(&lines, &mut warm).expect("the 100-line sheet compiles");
    let reps = scaled(300, 3);
    let warm_us = timed_compile(reps, || {
        black_box(Sheet::compile(&lines, &mut warm).expect("compiles"));
    });
    let cold_us = timed_compile(scaled(50, 2), || {
        black_box(Sheet::compile(&lines, &mut RegexCache::default()).expect("compiles"));
    });
    // 1000 sheets of one world share one cache: each distinct regex is compiled once.
    let mut world = RegexCache::default();
    let n = scaled(1000, 20);
    let sheets: Vec<Vec<String>> = (0..n).map(sheet100).collect();
    let t = cpu_now();
    for s in &sheets {
        black_box(Sheet::compile(s, &mut world).expect("compiles"));
    }
    let all = cpu_now() - t;
    assert_eq!(
        world.len(),
        REGEXES.len(),
        "one cached regex per distinct source"
    );
    (warm_us, cold_us, world.len(), all, ifs)
}

/// CPU time of each of `reps` calls of `f`, in µs.
fn timed_compile(reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    f();
    (0..reps)
        .map(|_| {
            let t = cpu_now();
            f();
            (cpu_now() - t).as_nanos() as f64 / 1000.0
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------

/// `RP_FACTS_PROFILE=<case>` (or `compile`): only rp's loop of that case (or of compiling the
/// 100-line sheet with a warm cache), for `seconds`, under a profiler
/// (`perf record -g target/release/deps/facts-* --bench`).
fn profile(case: &Case<'_>, seq: &[f64], seconds: u64) {
    let mut draws = Cycle { seq, pos: 0 };
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut sink = 0u64;
    let mut rounds = 0u64;
    while Instant::now() < until {
        for _ in 0..1000 {
            sink = sink.wrapping_add(case.rp.round(&mut draws));
        }
        rounds += 1000;
    }
    black_box(sink);
    report(format!("profiled {}: {rounds} rounds", case.name));
}

/// Where the time of `expr_mentioned` goes: one-line sheets that add one cost at a time, on
/// the same 10 contexts (mentioned), CPU ns per `decide`.
fn breakdown(
    sits: &[Situation],
    seq: &[f64],
    cache: &mut RegexCache,
    samples: usize,
    sample: Duration,
    warmup: Duration,
) -> Vec<(&'static str, &'static str, f64)> {
    let variants = [
        ("false", "floor: decide() with nothing drawn or fired"),
        (
            "mentioned && random() < -1",
            "+ one random() draw (traced and recorded), never fires",
        ),
        (
            "mentioned && content.match(/aria|merchant/i) && false",
            "+ the regex test on every context, never fires",
        ),
        ("true", "+ firing $respond (trace entry with its text)"),
        (EXPR, "the benchmarked expression"),
    ];
    let contexts: Vec<Context<'_>> = sits.iter().map(Situation::context).collect();
    // The regex alone: `JsRegex::test` (what `match` in a condition calls), the regex crate on
    // JsRegex's translation, and the crate with its own `(?i)`.
    let js = JsRegex::compile("aria|merchant", "i").expect("regex");
    let translated = regex::Regex::new(js.translation()).expect("regex");
    let plain = regex::Regex::new("(?i)aria|merchant").expect("regex");
    let mut out = Vec::new();
    for (name, what, f) in [
        (
            "(JsRegex::test alone)",
            "rp's regex wrapper, /aria|merchant/i, on the same 10 messages",
            &(|s: &str| js.test(s).unwrap_or(false)) as &dyn Fn(&str) -> bool,
        ),
        (
            "(regex crate, translation)",
            "Regex::is_match of JsRegex::translation()",
            &|s: &str| translated.is_match(s),
        ),
        (
            "(regex crate, (?i))",
            "Regex::is_match of (?i)aria|merchant",
            &|s: &str| plain.is_match(s),
        ),
    ] {
        let t = timed(samples, sample, warmup, || {
            sits.iter()
                .map(|s| u64::from(f(black_box(&s.content))))
                .sum()
        });
        out.push((name, what, median(&t.cpu)));
    }
    out.extend(variants.iter().map(|(expr, what)| {
        let line = vec![format!("$if {expr}: $respond")];
        let sheet = Sheet::compile(&line, cache).expect("compiles");
        let mut draws = Cycle { seq, pos: 0 };
        let t = timed(samples, sample, warmup, || {
            contexts
                .iter()
                .map(|c| u64::from(sheet.decide(c, &mut draws).respond))
                .sum()
        });
        (*expr, *what, median(&t.cpu))
    }));
    out
}

/// `a / b` as "0.42".
fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}", a / b)
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(scaled(2, 1)))
        .configure_from_args();
    report(format!("load average before {}", loadavg()));

    let seq = draw_sequence();
    let base = situations();
    let with_mention = |m: bool| -> Vec<Situation> {
        base.iter()
            .cloned()
            .map(|s| Situation { mentioned: m, ..s })
            .collect()
    };
    let (mentioned, unmentioned) = (with_mention(true), with_mention(false));
    let functions = evx_functions();
    let mut cache = RegexCache::default();
    let cases = [
        expr_case(
            "expr_mentioned",
            (EXPR, EXPR_EVX),
            &mentioned,
            &mut cache,
            &functions,
        ),
        expr_case(
            "expr_unmentioned",
            (EXPR, EXPR_EVX),
            &unmentioned,
            &mut cache,
            &functions,
        ),
        // Not a target: the regex alone on every context, to compare the regex engines.
        expr_case(
            "match_only",
            (MATCH, MATCH_EVX),
            &mentioned,
            &mut cache,
            &functions,
        ),
        sheet_case(&base, &mut cache, &functions),
    ];
    if let Ok(which) = std::env::var("RP_FACTS_PROFILE") {
        if which == "compile" {
            let lines = sheet100(0);
            let until = Instant::now() + Duration::from_secs(scaled(10, 1));
            while Instant::now() < until {
                black_box(Sheet::compile(&lines, &mut cache).expect("compiles"));
            }
            return;
        }
        let case = cases.iter().find(|c| c.name == which).expect("a case name");
        profile(case, &seq, scaled(10, 1));
        return;
    }

    let samples = scaled(15, 2);
    let sample = Duration::from_millis(scaled(25, 1));
    let verify_iters = scaled(1000, 5);
    let warmup = Duration::from_millis(scaled(300, 10));

    // V8: one long-lived node process (verifies, warms up and calibrates every case first).
    let spec = json!({
        "draws": seq,
        "sample_ms": sample.as_millis() as u64,
        "warmup_ms": warmup.as_millis() as u64,
        "verify_iters": verify_iters,
        "cases": cases.iter().map(|c| c.node.clone()).collect::<Vec<_>>(),
    });
    let mut node = NodePeer::start(&spec);

    struct Row {
        name: &'static str,
        checksum: u64,
        rp: Samples,
        evx: Samples,
        v8: Option<Samples>,
    }
    let mut rows = Vec::new();
    for case in &cases {
        // Verification from the first draw.
        let mut draws = Cycle { seq: &seq, pos: 0 };
        let rp_sum: u64 = (0..verify_iters).map(|_| case.rp.round(&mut draws)).sum();
        evx_reset_draws(&seq);
        let evx_sum: u64 = (0..verify_iters).map(|_| case.evx.round()).sum();
        assert_eq!(
            rp_sum, evx_sum,
            "{}: rp and evalexpr disagree (checksum)",
            case.name
        );
        if let Some(v8) = node.as_ref().and_then(|n| n.checksum(case.name)) {
            assert_eq!(rp_sum, v8, "{}: rp and V8 disagree (checksum)", case.name);
        }
        // Interleaved samples, rotating who goes first.
        let mut rp = Timer::new(|| case.rp.round(&mut draws), warmup, sample);
        let mut evx = Timer::new(|| case.evx.round(), warmup, sample);
        let mut row = Row {
            name: case.name,
            checksum: rp_sum,
            rp: Samples::default(),
            evx: Samples::default(),
            v8: node.as_ref().map(|_| Samples::default()),
        };
        for s in 0..samples {
            for k in 0..3 {
                match (s + k) % 3 {
                    0 => row.rp.push(rp.sample()),
                    1 => row.evx.push(evx.sample()),
                    _ => {
                        if let (Some(n), Some(v)) = (node.as_mut(), row.v8.as_mut()) {
                            v.push(n.sample(case.name));
                        }
                    }
                }
            }
        }
        rows.push(row);
    }
    let node_version = node
        .as_ref()
        .map_or("V8 skipped".to_owned(), |n| n.version.clone());
    drop(node);

    report(format!(
        "evaluation: ns per evaluation (expr: one condition; sheet20: one 20-line sheet decision), \
         {ENTITIES} entities per round, median of {samples} samples of ~{} ms interleaved rp/evalexpr/V8; CPU time [wall clock]; {}",
        sample.as_millis(),
        node_version
    ));
    report(
        "case              rp               V8               evalexpr           rp/V8  evalexpr/rp  10k conditions rp [V8]",
    );
    for r in &rows {
        let (rc, rw) = (median(&r.rp.cpu), median(&r.rp.wall));
        let (ec, ew) = (median(&r.evx.cpu), median(&r.evx.wall));
        let conds = if r.name == "sheet20" {
            SHEET_CONDITIONS as f64
        } else {
            1.0
        };
        let (v8, v8_ratio, v8_10k) = match &r.v8 {
            Some(v) => {
                let (vc, vw) = (median(&v.cpu), median(&v.wall));
                (
                    format!("{vc:>7.1} [{vw:>6.1}]"),
                    ratio(rc, vc),
                    format!(" [{:.3}]", vc / conds * 10_000.0 / 1e6),
                )
            }
            None => ("       -        ".into(), "-".into(), String::new()),
        };
        report(format!(
            "{:<17} {rc:>7.1} [{rw:>6.1}] {v8} {ec:>8.1} [{ew:>7.1}] {v8_ratio:>6} {:>11} {:>8.3} ms{v8_10k}   (checksum {})",
            r.name,
            format!("{:.1}x", ec / rc),
            rc / conds * 10_000.0 / 1e6,
            r.checksum
        ));
    }
    report(
        "targets: rp/V8 <= 1.0, evalexpr/rp >= 8, 10,000 conditions <= 0.5 ms (sheet20: decision time / 10 conditions)",
    );

    let parts = breakdown(
        &mentioned,
        &seq,
        &mut cache,
        scaled(7, 2),
        sample,
        Duration::from_millis(scaled(100, 10)),
    );
    report(
        "where expr_mentioned's time goes in rp (one-line sheets, CPU ns per decide, same contexts):",
    );
    for (expr, what, ns) in &parts {
        if expr.starts_with('(') {
            report(format!("  {ns:>7.1}  {expr}   ({what})"));
        } else {
            report(format!("  {ns:>7.1}  $if {expr}: $respond   ({what})"));
        }
    }

    let (warm, cold, cached, all, ifs) = compile_figures();
    report(format!(
        "compile a 100-line sheet ({ifs} $if lines, 5 distinct regexes), CPU time median [min]: \
         warm cache {:.1} us [{:.1}], cold cache {:.1} us [{:.1}] (target warm <= 100 us)",
        median(&warm),
        min(&warm),
        median(&cold),
        min(&cold)
    ));
    report(format!(
        "{} different 100-line sheets into one world cache: {cached} regexes cached (5 distinct), {:.1} us per sheet",
        scaled(1000, 20),
        all.as_secs_f64() * 1e6 / scaled(1000.0, 20.0)
    ));

    // Criterion (wall clock): one iteration is one round (every entity once).
    for case in &cases {
        let mut g = c.benchmark_group(format!("facts_{}", case.name));
        g.throughput(Throughput::Elements(ENTITIES as u64));
        let mut draws = Cycle { seq: &seq, pos: 0 };
        g.bench_function("rp", |b| b.iter(|| case.rp.round(&mut draws)));
        g.bench_function("evalexpr", |b| b.iter(|| case.evx.round()));
        g.finish();
    }
    let lines = sheet100(0);
    let mut g = c.benchmark_group("facts_compile_100_lines");
    let mut warm_cache = RegexCache::default();
    Sheet::compile(&lines, &mut warm_cache).expect("compiles");
    g.bench_function("warm_cache", |b| {
        b.iter(|| Sheet::compile(&lines, &mut warm_cache).expect("compiles"))
    });
    g.bench_function("cold_cache", |b| {
        b.iter(|| Sheet::compile(&lines, &mut RegexCache::default()).expect("compiles"))
    });
    g.finish();
    c.final_summary();
}
