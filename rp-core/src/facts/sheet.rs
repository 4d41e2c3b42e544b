//! Fact sheets: classifying lines, compiling their conditions once, and deciding.

use super::compile::{FactValue, Node, RegexSource, SelfFacts, compile_condition};
use super::eval::{self, Context, Eval, Facts, Traced};
use super::{Draws, TraceEvent};
use std::sync::Arc;

/// A sheet error: 1-based line and column (in characters), and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SheetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for SheetError {}

/// What a fired `$if` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Adds a fact.
    Fact(String),
    /// Sets the respond flag.
    Respond(bool),
    /// Allows (`true`) or forbids (`false`) starting a conversation unprompted.
    Initiate(bool),
    /// Stops evaluation and asks to be evaluated again after this many ms.
    Retry(u64),
}

#[derive(Debug)]
enum Kind {
    /// A plain fact: its trimmed text.
    Fact(Arc<str>),
    Comment,
    /// `$respond`: the value, and the trace's text for it.
    Respond(bool, Arc<str>),
    /// `$initiate`: the value, and the trace's text for it.
    Initiate(bool, Arc<str>),
    If {
        condition: Node,
        action: Action,
        /// What the trace says when the line fires (`$respond true`, `$retry 500`, the fact),
        /// and for a fact, its lower-case form for `has_fact`.
        fired: Arc<str>,
        fired_lower: Box<str>,
    },
}

#[derive(Debug)]
struct Line {
    number: usize,
    kind: Kind,
}

/// A compiled fact sheet: every line classified, every condition compiled.
#[derive(Debug)]
pub struct Sheet {
    lines: Vec<Line>,
    /// The unconditional facts, trimmed, and their lower-case forms (for `has_fact`).
    plain: Vec<Arc<str>>,
    plain_lower: Vec<Box<str>>,
    self_facts: SelfFacts,
    /// Whether any line can turn responding on (`$respond` / `$respond true`).
    has_respond: bool,
    /// Whether any condition may read `drives` (conservatively: its text names it).
    reads_drives: bool,
}

/// One entry of a decision's trace.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TraceEntry {
    /// The 1-based line of the sheet.
    pub line: usize,
    /// What happened there.
    #[serde(flatten)]
    pub event: TraceEvent,
}

/// The outcome of evaluating a sheet. Serialises (JSON) with the field names below.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Decision {
    /// Whether the entity responds now.
    pub respond: bool,
    /// When a `$retry` fired: evaluate again after this many ms (and do not respond now).
    pub retry_ms: Option<u64>,
    /// What the last `$initiate` line that fired said: whether the entity may start a
    /// conversation on its own (docs/drives.md); `None` when none fired (which allows it).
    /// Independent of `respond`.
    #[serde(default)]
    pub initiate: Option<bool>,
    /// The facts that apply: plain lines and the text of conditional lines that fired.
    /// (Shared with the sheet: a decision copies no fact text.)
    pub facts: Vec<Arc<str>>,
    /// Each line that fired, each random draw, each runtime error.
    pub trace: Vec<TraceEntry>,
    /// Every uniform draw taken, in order (what a replay needs).
    pub draws: Vec<f64>,
}

impl Decision {
    /// The trace as text a writer can read ("line 3: fired: $respond true"), then the
    /// outcome ("→ responds"), then, if a `$initiate` line fired, what it allows.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        for t in &self.trace {
            out.push_str(&format!("line {}: {}\n", t.line, t.event));
        }
        out.push_str(&match (self.respond, self.retry_ms) {
            (_, Some(ms)) => format!("→ not now; evaluate again in {ms} ms\n"),
            (true, None) => "→ responds\n".into(),
            (false, None) => "→ stays silent\n".into(),
        });
        match self.initiate {
            Some(true) => out.push_str("→ may start a conversation on its own\n"),
            Some(false) => out.push_str("→ will not start a conversation on its own\n"),
            None => {}
        }
        out
    }
}

/// Records the draws it passes on.
struct Recording<'d> {
    inner: &'d mut dyn Draws,
    drawn: Vec<f64>,
}

impl Draws for Recording<'_> {
    fn draw(&mut self) -> f64 {
        let d = self.inner.draw();
        self.drawn.push(d);
        d
    }
}

fn respond_text(v: bool) -> &'static str {
    if v { "$respond true" } else { "$respond false" }
}

fn initiate_text(v: bool) -> &'static str {
    if v {
        "$initiate true"
    } else {
        "$initiate false"
    }
}

/// The plain facts of `lines`: neither comments, blank nor directives.
fn find_plain(lines: &[String]) -> Vec<Arc<str>> {
    lines
        .iter()
        .filter(|raw| {
            let t = raw.trim_start();
            !raw.starts_with("$#") && !t.is_empty() && directive_word(t).is_none()
        })
        .map(|raw| Arc::from(raw.trim()))
        .collect()
}

fn chars(s: &str, byte: usize) -> usize {
    s[..byte.min(s.len())].chars().count()
}

fn key_value(line: &str) -> Option<(&str, FactValue)> {
    let (key, value) = line.split_once(':')?;
    let mut k = key.chars();
    let first = k.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !k.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let numeric = value
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        && value.bytes().any(|b| b.is_ascii_digit());
    let v = match value {
        "true" => FactValue::Bool(true),
        "false" => FactValue::Bool(false),
        _ => match value.parse::<f64>() {
            Ok(n) if numeric => FactValue::Num(n),
            _ => FactValue::Str(value.to_owned()),
        },
    };
    Some((key, v))
}

fn directive_word(t: &str) -> Option<&str> {
    let rest = t.strip_prefix('$')?;
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn parse_action(text: &str) -> Result<Action, String> {
    let Some(word) = directive_word(text) else {
        if text.is_empty() {
            return Err("nothing follows the condition's `:`".into());
        }
        return Ok(Action::Fact(text.to_owned()));
    };
    let arg = text[1 + word.len()..].trim();
    match word {
        "respond" => parse_flag("respond", arg).map(Action::Respond),
        "initiate" => parse_flag("initiate", arg).map(Action::Initiate),
        "retry" => arg
            .parse::<u64>()
            .map(Action::Retry)
            .map_err(|_| format!("`$retry` needs a whole number of milliseconds, not {arg:?}")),
        other => Err(unknown_directive(other)),
    }
}

/// The argument of `$respond` or `$initiate` (`directive`): nothing or `true`, or `false`.
fn parse_flag(directive: &str, arg: &str) -> Result<bool, String> {
    match arg {
        "" | "true" => Ok(true),
        "false" => Ok(false),
        other => Err(format!("`${directive}` takes true or false, not {other:?}")),
    }
}

fn unknown_directive(word: &str) -> String {
    format!(
        "unknown directive `${word}`; the directives are $if, $respond, $initiate, $retry and $# comments"
    )
}

impl Sheet {
    /// Compiles `lines` (a sheet's lines, in order).
    pub fn compile(lines: &[String], regexes: &mut dyn RegexSource) -> Result<Sheet, SheetError> {
        let mut self_facts = SelfFacts::new();
        for raw in lines {
            let t = raw.trim_start();
            if !raw.starts_with("$#")
                && !t.starts_with('$')
                && let Some((k, v)) = key_value(t)
            {
                self_facts.insert(k.to_owned(), v);
            }
        }
        let plain = find_plain(lines);
        let plain_lower: Vec<Box<str>> = plain.iter().map(|f| f.to_lowercase().into()).collect();
        let known = Facts {
            plain: &plain,
            plain_lower: &plain_lower,
            fired: &[],
        };
        let mut next_plain = plain.iter();
        let mut out = Vec::with_capacity(lines.len());
        let mut has_respond = false;
        for (i, raw) in lines.iter().enumerate() {
            let number = i + 1;
            let at = |byte: usize, message: String| SheetError {
                line: number,
                column: chars(raw, byte) + 1,
                message,
            };
            let indent = raw.len() - raw.trim_start().len();
            let t = &raw[indent..];
            let kind = if raw.starts_with("$#") || t.is_empty() {
                Kind::Comment
            } else if let Some(word) = directive_word(t) {
                match word {
                    "if" if t[3..].starts_with(|c: char| c.is_whitespace() || c == '(') => {
                        let src = &t[3..];
                        let base = indent + 3;
                        let (condition, end) = compile_condition(src, &self_facts, known, regexes)
                            .map_err(|e| at(base + e.offset, e.message))?;
                        let action_src = &src[end..];
                        let action_at =
                            base + end + (action_src.len() - action_src.trim_start().len());
                        let action =
                            parse_action(action_src.trim()).map_err(|m| at(action_at, m))?;
                        has_respond |= matches!(action, Action::Respond(true));
                        let fired: Arc<str> = match &action {
                            Action::Fact(f) => f.as_str().into(),
                            Action::Respond(v) => respond_text(*v).into(),
                            Action::Initiate(v) => initiate_text(*v).into(),
                            Action::Retry(ms) => format!("$retry {ms}").into(),
                        };
                        let fired_lower = match &action {
                            Action::Fact(f) => f.to_lowercase().into(),
                            _ => Box::default(),
                        };
                        Kind::If {
                            condition,
                            action,
                            fired,
                            fired_lower,
                        }
                    }
                    "respond" => {
                        let v = parse_flag("respond", t["$respond".len()..].trim())
                            .map_err(|m| at(indent, m))?;
                        has_respond |= v;
                        Kind::Respond(v, respond_text(v).into())
                    }
                    "initiate" => {
                        let v = parse_flag("initiate", t["$initiate".len()..].trim())
                            .map_err(|m| at(indent, m))?;
                        Kind::Initiate(v, initiate_text(v).into())
                    }
                    "retry" => {
                        return Err(at(
                            indent,
                            "`$retry` needs a condition: `$if <condition>: $retry <ms>`".into(),
                        ));
                    }
                    "if" => {
                        return Err(at(
                            indent + 3,
                            "`$if` needs a space, then a condition and `:`".into(),
                        ));
                    }
                    other => return Err(at(indent, unknown_directive(other))),
                }
            } else {
                // The same lines, in the same order, as `find_plain` found.
                Kind::Fact(
                    next_plain
                        .next()
                        .cloned()
                        .unwrap_or_else(|| t.trim().into()),
                )
            };
            out.push(Line { number, kind });
        }
        // The variable can only be reached by its name, so a condition that does not spell it
        // cannot read it: the engine works the drives out only for sheets that may.
        let reads_drives = lines
            .iter()
            .any(|l| directive_word(l.trim_start()) == Some("if") && l.contains("drives"));
        Ok(Sheet {
            lines: out,
            plain,
            plain_lower,
            self_facts,
            has_respond,
            reads_drives,
        })
    }

    /// The unconditional facts (prose and `key: value` lines), trimmed, in order.
    pub fn plain_facts(&self) -> &[Arc<str>] {
        &self.plain
    }

    /// The sheet's `self`: its unconditional `key: value` facts.
    pub fn self_facts(&self) -> &SelfFacts {
        &self.self_facts
    }

    /// Whether any line can turn responding on (`$respond` or `$respond true`, conditional
    /// or not). Without one, an entity responds unless a `$respond false` fires; with one, it
    /// responds only if the last `$respond` that fired says so.
    pub fn has_respond(&self) -> bool {
        self.has_respond
    }

    /// Whether a condition of the sheet may read `drives` (when not, the drives need not be
    /// worked out to evaluate it).
    pub fn reads_drives(&self) -> bool {
        self.reads_drives
    }

    /// Evaluates the sheet top to bottom against `ctx`, drawing randomness from `draws`.
    pub fn decide(&self, ctx: &Context<'_>, draws: &mut dyn Draws) -> Decision {
        let mut rec = Recording {
            inner: draws,
            drawn: Vec::new(),
        };
        // The conditional facts fired so far, with their lower-case forms (for `has_fact`).
        let mut fired: Vec<(&str, &str)> = Vec::new();
        let mut facts = Vec::with_capacity(self.plain.len());
        let mut trace = Vec::new();
        let mut respond: Option<bool> = None;
        let mut initiate: Option<bool> = None;
        let mut retry_ms = None;
        for line in &self.lines {
            match &line.kind {
                Kind::Comment => {}
                Kind::Fact(text) => facts.push(text.clone()),
                Kind::Respond(v, text) => {
                    respond = Some(*v);
                    trace.push(TraceEntry {
                        line: line.number,
                        event: TraceEvent::Fired {
                            action: text.clone(),
                        },
                    });
                }
                Kind::Initiate(v, text) => {
                    initiate = Some(*v);
                    trace.push(TraceEntry {
                        line: line.number,
                        event: TraceEvent::Fired {
                            action: text.clone(),
                        },
                    });
                }
                Kind::If {
                    condition,
                    action,
                    fired: text,
                    fired_lower,
                } => {
                    let result = {
                        let facts = Facts {
                            plain: &self.plain,
                            plain_lower: &self.plain_lower,
                            fired: &fired,
                        };
                        let traced = Traced {
                            entries: &mut trace,
                            line: line.number,
                        };
                        eval::condition(
                            condition,
                            ctx,
                            &mut rec,
                            traced,
                            |draws, trace, rest, all| {
                                Eval::new(ctx, &self.self_facts, facts, draws, trace)
                                    .rest(rest, all)
                            },
                        )
                    };
                    let hit = match result {
                        Ok(b) => b,
                        Err(message) => {
                            trace.push(TraceEntry {
                                line: line.number,
                                event: TraceEvent::Error {
                                    message: message.into_message(),
                                },
                            });
                            false
                        }
                    };
                    if !hit {
                        continue;
                    }
                    trace.push(TraceEntry {
                        line: line.number,
                        event: TraceEvent::Fired {
                            action: text.clone(),
                        },
                    });
                    match action {
                        Action::Fact(_) => {
                            facts.push(text.clone());
                            fired.push((text, fired_lower));
                        }
                        Action::Respond(v) => respond = Some(*v),
                        Action::Initiate(v) => initiate = Some(*v),
                        Action::Retry(ms) => {
                            retry_ms = Some(*ms);
                            break;
                        }
                    }
                }
            }
        }
        let respond = retry_ms.is_none() && respond.unwrap_or(!self.has_respond);
        Decision {
            respond,
            retry_ms,
            initiate,
            facts,
            trace,
            draws: rec.drawn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{DriveValues, ReplayDraws, compile_sheet};

    fn sheet(text: &str) -> Sheet {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        compile_sheet(&lines).unwrap_or_else(|e| panic!("{e}"))
    }

    fn with_energy(energy: f64) -> Context<'static> {
        Context {
            drives: DriveValues {
                energy,
                ..DriveValues::default()
            },
            ..Context::default()
        }
    }

    fn fired(d: &Decision) -> Vec<String> {
        d.trace
            .iter()
            .filter_map(|t| match &t.event {
                TraceEvent::Fired { action } => Some(format!("{}: {action}", t.line)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn initiate_false_under_if_forbids_initiating_and_leaves_respond_alone() {
        let s = sheet("$if mentioned: $respond\n$if drives.energy < 0.3: $initiate false");
        let tired = s.decide(&with_energy(0.2), &mut ReplayDraws::new(vec![]));
        assert_eq!(tired.initiate, Some(false));
        assert!(
            !tired.respond,
            "the sheet has a $respond line, and it did not fire"
        );
        assert_eq!(fired(&tired), ["2: $initiate false"]);
        assert!(
            tired
                .explain()
                .ends_with("→ stays silent\n→ will not start a conversation on its own\n"),
            "{}",
            tired.explain()
        );
        let rested = s.decide(&with_energy(0.9), &mut ReplayDraws::new(vec![]));
        assert_eq!(rested.initiate, None);
        assert!(!rested.explain().contains("conversation"));
        // `$initiate` is not a `$respond` line: a sheet with only `$initiate` lines responds.
        let only = sheet("$if drives.energy < 0.3: $initiate false\n$initiate");
        for energy in [0.2, 0.9] {
            let d = only.decide(&with_energy(energy), &mut ReplayDraws::new(vec![]));
            assert!(d.respond, "energy {energy}");
            assert_eq!(d.initiate, Some(true), "the last fired wins");
        }
        let mentioned = Context {
            mentioned: true,
            ..with_energy(0.2)
        };
        let d = s.decide(&mentioned, &mut ReplayDraws::new(vec![]));
        assert!(d.respond);
        assert_eq!(d.initiate, Some(false));
    }

    #[test]
    fn the_last_fired_initiate_wins_and_bare_initiate_means_true() {
        for (text, want) in [
            ("$initiate", Some(true)),
            ("  $initiate true", Some(true)),
            ("$initiate false", Some(false)),
            ("$initiate\n$initiate false", Some(false)),
            ("$initiate false\n$if true: $initiate", Some(true)),
            ("$initiate false\n$if false: $initiate", Some(false)),
            ("$if true: $initiate false\n$initiate true", Some(true)),
            ("is a character", None),
            (
                "$initiate false\n$if true: $retry 100\n$initiate",
                Some(false),
            ),
        ] {
            let d = sheet(text).decide(&Context::default(), &mut ReplayDraws::new(vec![]));
            assert_eq!(d.initiate, want, "{text:?}");
            assert!(d.facts.iter().all(|f| !f.contains("initiate")), "{text:?}");
        }
        let d = sheet("$initiate").decide(&Context::default(), &mut ReplayDraws::new(vec![]));
        assert_eq!(fired(&d), ["1: $initiate true"]);
        assert_eq!(
            d.explain(),
            "line 1: fired: $initiate true\n→ responds\n→ may start a conversation on its own\n"
        );
    }

    #[test]
    fn a_bad_initiate_is_a_compile_error_naming_it() {
        for (text, column) in [
            ("$initiate maybe", 1),
            ("  $initiate TRUE", 3),
            ("$if true: $initiate maybe", 11),
            ("$if true: $initiate 1", 11),
        ] {
            let lines = vec![text.to_owned()];
            let e = compile_sheet(&lines).unwrap_err();
            assert!(
                e.message
                    .starts_with("`$initiate` takes true or false, not"),
                "{text:?}: {e}"
            );
            assert_eq!((e.line, e.column), (1, column), "{text:?}: {e}");
        }
        let e = compile_sheet(&["$initiatex".to_owned()]).unwrap_err();
        assert!(e.message.contains("$initiate,"), "{e}");
    }

    #[test]
    fn a_decision_reads_json_without_initiate() {
        let d = sheet("$if drives.mode == \"sleep\": $initiate false").decide(
            &Context {
                drives: DriveValues {
                    mode: "sleep",
                    asleep: true,
                    ..DriveValues::default()
                },
                ..Context::default()
            },
            &mut ReplayDraws::new(vec![]),
        );
        assert_eq!(d.initiate, Some(false));
        let json = serde_json::to_value(&d).expect("writes");
        assert_eq!(json["initiate"], serde_json::json!(false));
        let back: Decision = serde_json::from_value(json.clone()).expect("reads");
        assert_eq!(back, d);
        // A decision written before `$initiate` existed.
        let mut old = json;
        old.as_object_mut().expect("an object").remove("initiate");
        let back: Decision = serde_json::from_value(old).expect("reads");
        assert_eq!(back.initiate, None);
    }
}
