//! The examples of `docs/facts.md` (the writers' reference for the fact language), run.
//!
//! The document holds three kinds of fenced blocks that this test reads:
//!
//! - a ` ```sheet ` block (a fact sheet), always followed by an ` ```expect ` block saying what
//!   it compiles to and how it decides in one or more contexts;
//! - ` ```values ` blocks: single expressions and what they evaluate to (`expr ⇒ value`).
//!
//! The format of both is described in the document itself ("How to read the examples"). The
//! test fails on any example that does not hold, on a malformed block, and when the document
//! has fewer than [`MIN_EXAMPLES`] sheet examples, so it cannot pass vacuously.

use rp_core::facts::{
    Context, Decision, DriveValues, FactValue, ReplayDraws, SelfFacts, TraceEvent, compile_sheet,
    evaluate_to_string,
};
use rp_core::{EntityId, EntityState, Event, FactSheet};
use std::path::PathBuf;

/// Fewer sheet examples than this and the test fails.
const MIN_EXAMPLES: usize = 8;

/// A fenced block of the document: its info string, the 1-based line of its opening fence and
/// its lines (with their 1-based line numbers in the document).
struct Block {
    info: String,
    line: usize,
    body: Vec<(usize, String)>,
}

fn blocks(doc: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, text) in doc.lines().enumerate() {
        let n = i + 1;
        match open.take() {
            None => {
                if let Some(info) = text.strip_prefix("```") {
                    open = Some(Block {
                        info: info.trim().to_owned(),
                        line: n,
                        body: Vec::new(),
                    });
                }
            }
            Some(mut b) => {
                if text.trim_end() == "```" {
                    out.push(b);
                } else {
                    b.body.push((n, text.to_owned()));
                    open = Some(b);
                }
            }
        }
    }
    if let Some(b) = open {
        panic!("docs/facts.md:{}: the fenced block is never closed", b.line);
    }
    out
}

/// The `key=value` pairs of a `context:` line. A value is a JSON string (`"…"`) or runs to
/// the next space.
fn pairs(at: usize, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .unwrap_or_else(|| panic!("docs/facts.md:{at}: expected key=value in {rest:?}"));
        let (value, next) = if after.starts_with('"') {
            let mut stream = serde_json::Deserializer::from_str(after).into_iter::<String>();
            let v = stream
                .next()
                .and_then(Result::ok)
                .unwrap_or_else(|| panic!("docs/facts.md:{at}: bad quoted value in {after:?}"));
            let used = stream.byte_offset();
            (v, &after[used..])
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_owned(), &after[end..])
        };
        out.push((key.trim().to_owned(), value));
        rest = next.trim_start();
    }
    out
}

fn number(at: usize, key: &str, v: &str) -> f64 {
    v.parse()
        .unwrap_or_else(|_| panic!("docs/facts.md:{at}: {key}={v:?} is not a number"))
}

fn boolean(at: usize, what: &str, v: &str) -> bool {
    match v {
        "true" => true,
        "false" => false,
        _ => panic!("docs/facts.md:{at}: {what} must be true or false, not {v:?}"),
    }
}

fn list(v: &str) -> Vec<String> {
    if v.is_empty() {
        Vec::new()
    } else {
        v.split(',').map(str::to_owned).collect()
    }
}

/// What a `context:` line describes, owned (a [`Context`] borrows from it).
#[derive(Clone, Debug)]
struct Ctx {
    name: String,
    aliases: Vec<String>,
    content: String,
    author: String,
    mentioned: Option<bool>,
    response_ms: f64,
    retry_ms: f64,
    unread_count: f64,
    interaction_type: Option<String>,
    present: Vec<String>,
    hour: f64,
    drives: DriveValues,
    draws: Vec<f64>,
}

impl Default for Ctx {
    fn default() -> Self {
        let d = Context::default();
        Ctx {
            name: d.name.to_owned(),
            aliases: Vec::new(),
            content: d.content.to_owned(),
            author: d.author.to_owned(),
            mentioned: None,
            response_ms: d.response_ms,
            retry_ms: d.retry_ms,
            unread_count: d.unread_count,
            interaction_type: None,
            present: Vec::new(),
            hour: d.hour,
            drives: d.drives,
            draws: Vec::new(),
        }
    }
}

fn parse_ctx(at: usize, text: &str) -> Ctx {
    let mut c = Ctx::default();
    for (k, v) in pairs(at, text) {
        match k.as_str() {
            "name" => c.name = v,
            "aliases" => c.aliases = list(&v),
            "content" => c.content = v,
            "author" => c.author = v,
            "mentioned" => c.mentioned = Some(boolean(at, "mentioned", &v)),
            "response_ms" => c.response_ms = number(at, &k, &v),
            "retry_ms" => c.retry_ms = number(at, &k, &v),
            "unread_count" => c.unread_count = number(at, &k, &v),
            "interaction_type" => c.interaction_type = Some(v),
            "present" => c.present = list(&v),
            "hour" => c.hour = number(at, &k, &v),
            "drives.energy" => c.drives.energy = number(at, &k, &v),
            "drives.social_debt" => c.drives.social_debt = number(at, &k, &v),
            "drives.task" => c.drives.task = number(at, &k, &v),
            "drives.curiosity" => c.drives.curiosity = number(at, &k, &v),
            "drives.pressure" => c.drives.pressure = number(at, &k, &v),
            "drives.disturbance" => c.drives.disturbance = number(at, &k, &v),
            "drives.asleep" => c.drives.asleep = boolean(at, "drives.asleep", &v),
            "drives.mode" => {
                c.drives.mode = match v.as_str() {
                    "alert" => "alert",
                    "normal" => "normal",
                    "relaxed" => "relaxed",
                    "sleep" => "sleep",
                    _ => panic!("docs/facts.md:{at}: drives.mode={v:?} is not a mode"),
                }
            }
            "draws" => c.draws = list(&v).iter().map(|d| number(at, "draws", d)).collect(),
            other => panic!("docs/facts.md:{at}: unknown context key {other:?}"),
        }
    }
    c
}

/// Whether `content` mentions an entity called `name` with `aliases`, as the engine decides
/// when the host does not say (a world holding just that entity).
fn engine_mentions(name: &str, aliases: &[String], content: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let mut engine = rp_core::Engine::in_memory("Docs", 0).expect("a world in memory");
    let id = EntityId(engine.world().next_id());
    engine
        .append(vec![Event::EntityCreated {
            id,
            key: None,
            name: name.to_owned(),
            aliases: aliases.to_vec(),
            facts: FactSheet::default(),
            host_controlled: false,
            state: EntityState::default(),
        }])
        .expect("the entity is valid");
    engine.world().mentions(id, content)
}

impl Ctx {
    fn mentioned(&self) -> bool {
        self.mentioned
            .unwrap_or_else(|| engine_mentions(&self.name, &self.aliases, &self.content))
    }

    fn context(&self) -> Context<'_> {
        Context {
            name: &self.name,
            content: &self.content,
            author: &self.author,
            mentioned: self.mentioned(),
            response_ms: self.response_ms,
            retry_ms: self.retry_ms,
            unread_count: self.unread_count,
            interaction_type: self.interaction_type.as_deref(),
            present: &self.present,
            hour: self.hour,
            drives: self.drives,
        }
    }
}

fn show_fact_value(v: Option<&FactValue>) -> String {
    match v {
        None => "undefined".into(),
        Some(FactValue::Num(n)) => rp_core::facts::number::to_js_string(*n),
        Some(FactValue::Bool(b)) => b.to_string(),
        Some(FactValue::Str(s)) => serde_json::to_string(s).expect("a string serialises"),
    }
}

fn split_list(v: &str, sep: char) -> Vec<String> {
    if v.trim().is_empty() {
        Vec::new()
    } else {
        v.split(sep).map(|s| s.trim().to_owned()).collect()
    }
}

/// Checks one decision against the assertion lines that follow its `context:` line.
fn check_case(at: usize, ctx: &Ctx, d: &Decision, asserts: &[(usize, String)]) {
    let where_ = |n: usize| format!("docs/facts.md:{n} (context of line {at})\n{}", d.explain());
    assert_eq!(
        d.draws, ctx.draws,
        "docs/facts.md:{at}: the sheet took other random draws than the context gives"
    );
    let mut explain = Vec::new();
    let mut explain_at = at;
    for (n, line) in asserts {
        let (key, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("docs/facts.md:{n}: expected `key: value`"));
        let value = value.trim();
        match key.trim() {
            "respond" => assert_eq!(d.respond, boolean(*n, "respond", value), "{}", where_(*n)),
            "initiate" => {
                let want = (value != "none").then(|| boolean(*n, "initiate", value));
                assert_eq!(d.initiate, want, "{}", where_(*n));
            }
            "retry" => {
                let want = (value != "none").then(|| {
                    value
                        .parse::<u64>()
                        .unwrap_or_else(|_| panic!("docs/facts.md:{n}: retry: none or a number"))
                });
                assert_eq!(d.retry_ms, want, "{}", where_(*n));
            }
            "facts" => assert_eq!(
                d.facts.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
                split_list(value, '|'),
                "{}",
                where_(*n)
            ),
            "fired" => {
                let fired: Vec<String> = d
                    .trace
                    .iter()
                    .filter(|t| matches!(t.event, TraceEvent::Fired { .. }))
                    .map(|t| t.line.to_string())
                    .collect();
                assert_eq!(fired, split_list(value, ','), "{}", where_(*n));
            }
            "mentioned" => {
                assert_eq!(
                    ctx.mentioned(),
                    boolean(*n, "mentioned", value),
                    "{}",
                    where_(*n)
                );
            }
            "explain" => {
                explain_at = *n;
                // The line as written after `explain: ` (leading spaces of the rest are kept).
                let raw = line.split_once(':').map_or("", |(_, r)| r);
                explain.push(raw.strip_prefix(' ').unwrap_or(raw).to_owned());
            }
            other => panic!("docs/facts.md:{n}: unknown expectation {other:?}"),
        }
    }
    if !explain.is_empty() {
        let got: Vec<String> = d.explain().lines().map(str::to_owned).collect();
        assert_eq!(
            got, explain,
            "docs/facts.md:{explain_at}: Decision::explain differs"
        );
    }
}

/// Runs one sheet example. Returns how many contexts it checked.
fn run_example(sheet: &Block, expect: &Block) -> usize {
    let text: String = sheet.body.iter().map(|(_, l)| format!("{l}\n")).collect();
    let facts = FactSheet::from_text(&text);
    let compiled = compile_sheet(facts.lines());
    let mut cases = 0;
    let mut self_checks = 0;
    let mut error_checked = false;
    let mut i = 0;
    let body = &expect.body;
    while i < body.len() {
        let (n, line) = &body[i];
        let trimmed = line.trim();
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        if let Some(want) = trimmed.strip_prefix("error:") {
            let e = match &compiled {
                Err(e) => e,
                Ok(_) => panic!("docs/facts.md:{n}: the sheet compiled, but an error was expected"),
            };
            let got = format!("line {}, column {}: {}", e.line, e.column, e.message);
            assert!(
                got.contains(want.trim()),
                "docs/facts.md:{n}: the error is\n  {got}\nnot\n  {}",
                want.trim()
            );
            error_checked = true;
            i += 1;
            continue;
        }
        let sheet_ok = compiled.as_ref().unwrap_or_else(|e| {
            panic!(
                "docs/facts.md:{}: line {}, column {}: {}",
                sheet.line, e.line, e.column, e.message
            )
        });
        if let Some((key, want)) = trimmed
            .strip_prefix("self.")
            .and_then(|r| r.split_once(':'))
        {
            let got = show_fact_value(sheet_ok.self_facts().get(key.trim()));
            assert_eq!(got, want.trim(), "docs/facts.md:{n}: self.{}", key.trim());
            self_checks += 1;
            i += 1;
            continue;
        }
        if trimmed == "self: {}" {
            assert!(
                sheet_ok.self_facts().is_empty(),
                "docs/facts.md:{n}: {:?}",
                sheet_ok.self_facts()
            );
            self_checks += 1;
            i += 1;
            continue;
        }
        let Some(ctx_text) = trimmed.strip_prefix("context:") else {
            panic!(
                "docs/facts.md:{n}: expected `context:`, `self.<key>:` or `error:`, found {line:?}"
            );
        };
        let ctx = parse_ctx(*n, ctx_text);
        let mut j = i + 1;
        while j < body.len() && !body[j].1.trim_start().starts_with("context:") {
            j += 1;
        }
        let asserts: Vec<(usize, String)> = body[i + 1..j]
            .iter()
            .filter(|(_, l)| !l.trim().is_empty())
            .cloned()
            .collect();
        assert!(
            !asserts.is_empty(),
            "docs/facts.md:{n}: a context without expectations"
        );
        let d = sheet_ok.decide(&ctx.context(), &mut ReplayDraws::new(ctx.draws.clone()));
        check_case(*n, &ctx, &d, &asserts);
        // Deciding is a pure function of the sheet, the context and the draws.
        let again = sheet_ok.decide(&ctx.context(), &mut ReplayDraws::new(ctx.draws.clone()));
        assert_eq!(d, again, "docs/facts.md:{n}: deciding twice differs");
        cases += 1;
        i = j;
    }
    if let Err(e) = &compiled {
        assert!(
            error_checked,
            "docs/facts.md:{}: unexpected error: line {}, column {}: {}",
            sheet.line, e.line, e.column, e.message
        );
    }
    assert!(
        cases + self_checks > 0 || error_checked,
        "docs/facts.md:{}: an expect block that checks nothing",
        expect.line
    );
    cases.max(1)
}

/// Runs one ` ```values ` block. Returns how many expressions it checked.
fn run_values(block: &Block) -> usize {
    let mut ctx = Ctx::default();
    let mut count = 0;
    for (n, line) in &block.body {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = t.strip_prefix("context:") {
            ctx = parse_ctx(*n, c);
            continue;
        }
        let (expr, want) = t
            .split_once(" ⇒ ")
            .unwrap_or_else(|| panic!("docs/facts.md:{n}: expected `expression ⇒ value`"));
        let (expr, want) = (expr.trim(), want.trim());
        let context = ctx.context();
        let mut draws = ReplayDraws::new(ctx.draws.clone());
        let got = match evaluate_to_string(expr, &SelfFacts::new(), &context, &mut draws) {
            Ok(Ok(v)) => v,
            Ok(Err(m)) => format!("runtime error: {m}"),
            Err(e) => format!("compile error: {}", e.message),
        };
        let ok = if want.starts_with("runtime error:") || want.starts_with("compile error:") {
            got.starts_with(&want[..14]) && got.contains(want[14..].trim())
        } else {
            got == want
        };
        assert!(
            ok,
            "docs/facts.md:{n}: {expr}\n  gives {got}\n  not   {want}"
        );
        count += 1;
    }
    count
}

#[test]
fn every_example_of_the_reference_holds() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/facts.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let blocks = blocks(&doc);
    let mut examples = 0;
    let mut cases = 0;
    let mut values = 0;
    let mut i = 0;
    while i < blocks.len() {
        let b = &blocks[i];
        match b.info.as_str() {
            "sheet" => {
                let expect = blocks
                    .get(i + 1)
                    .filter(|e| e.info == "expect")
                    .unwrap_or_else(|| {
                        panic!(
                            "docs/facts.md:{}: a sheet block must be followed by an expect block",
                            b.line
                        )
                    });
                cases += run_example(b, expect);
                examples += 1;
                i += 2;
            }
            "expect" => panic!(
                "docs/facts.md:{}: an expect block without a sheet block before it",
                b.line
            ),
            "values" => {
                values += run_values(b);
                i += 1;
            }
            _ => i += 1,
        }
    }
    println!("{examples} sheet examples ({cases} decisions), {values} expressions");
    assert!(
        examples >= MIN_EXAMPLES,
        "docs/facts.md has {examples} sheet examples; at least {MIN_EXAMPLES} are expected"
    );
}
