//! The fact language (docs/facts.md): fact sheets with prose facts, `key: value` facts,
//! `$if` conditions in a restricted JavaScript subset with JavaScript's semantics, `$respond`,
//! `$initiate`, `$retry` and `$#` comments; and response control, the decision whether a
//! character speaks (and whether it may start a conversation), with a trace of why.
//!
//! A sheet is compiled once per version ([`Sheet::compile`]): lines are classified, conditions
//! parsed with JavaScript's precedence and compiled into a tree of resolved operations (no
//! strings are looked at again when evaluating), regex literals compiled once per world. The
//! reference for writers is `docs/facts.md`.
//!
//! ```
//! use rp_core::facts::{compile_sheet, Context, SeededDraws};
//! let sheet = compile_sheet(&[
//!     "is a character".into(),
//!     "$if mentioned: $respond".into(),
//!     "$if random() < 0.1: $respond".into(),
//! ]).unwrap();
//! let ctx = Context { mentioned: true, ..Context::default() };
//! let decision = sheet.decide(&ctx, &mut SeededDraws::new(7, 0));
//! assert!(decision.respond);
//! # Ok::<(), rp_core::Error>(())
//! ```

mod compile;
mod condition;
mod dice;
mod eval;
mod lexer;
pub mod number;
mod parser;
pub(crate) mod regex;
mod sheet;
mod value;

pub use compile::{FactValue, MAX_EXPRESSION_BYTES, RegexSource, SelfFacts};
pub use condition::{Condition, ContextData, Tested};
pub use dice::{MAX_DICE, MAX_SIDES, Roll, roll};
pub use eval::{Context, DriveValues, MAX_STRING_BYTES};
pub use parser::{MAX_NESTING, SyntaxError};
pub use regex::JsRegex;
pub use sheet::{Action, Decision, Sheet, SheetError, TraceEntry};

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A source of uniform random numbers in [0, 1).
pub trait Draws {
    /// The next number.
    fn draw(&mut self) -> f64;
}

/// The world's generator: counter-based (SplitMix64 of seed and position), so a world's
/// randomness is fully described by its seed and how many numbers were drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededDraws {
    seed: u64,
    position: u64,
}

impl SeededDraws {
    /// The generator of `seed`, positioned after `position` draws.
    pub fn new(seed: u64, position: u64) -> SeededDraws {
        SeededDraws { seed, position }
    }

    /// How many numbers have been drawn.
    pub fn position(&self) -> u64 {
        self.position
    }
}

impl Draws for SeededDraws {
    fn draw(&mut self) -> f64 {
        let mut z = self.seed.wrapping_add(
            self.position
                .wrapping_add(1)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        self.position += 1;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Replays recorded draws (then continues with zeros, which a replay never reaches).
#[derive(Clone, Debug, Default)]
pub struct ReplayDraws {
    recorded: Vec<f64>,
    next: usize,
}

impl ReplayDraws {
    /// Replays `recorded` in order.
    pub fn new(recorded: Vec<f64>) -> ReplayDraws {
        ReplayDraws { recorded, next: 0 }
    }
}

impl Draws for ReplayDraws {
    fn draw(&mut self) -> f64 {
        let d = self.recorded.get(self.next).copied().unwrap_or(0.0);
        self.next += 1;
        d
    }
}

/// Something that happened while evaluating a line. Serialises (JSON) as
/// `{"kind": "fired", "action": ...}`, `{"kind": "random", "value": ...}`, ...
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// The line fired; `action` is what it did (`$respond true`, `$initiate false`,
    /// `$retry 5000`, or a fact).
    Fired {
        /// What the line did.
        action: Arc<str>,
    },
    /// `random()` drew `value`.
    Random {
        /// The number drawn.
        value: f64,
    },
    /// `random(p)` drew `value` and answered `value < p`.
    Chance {
        /// The probability asked for.
        probability: f64,
        /// The number drawn.
        value: f64,
        /// The answer.
        result: bool,
    },
    /// `roll(notation)` threw `dice` for `total`.
    Roll {
        /// The notation.
        notation: String,
        /// Every die thrown.
        dice: Vec<u32>,
        /// The total.
        total: f64,
    },
    /// A runtime type error: the condition counted as false.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Fired { action } => write!(f, "fired: {action}"),
            TraceEvent::Random { value } => write!(f, "random() drew {value}"),
            TraceEvent::Chance {
                probability,
                value,
                result,
            } => {
                write!(f, "random({probability}) drew {value}: {result}")
            }
            TraceEvent::Roll {
                notation,
                dice,
                total,
            } => {
                write!(f, "roll({notation:?}) threw {dice:?} = {total}")
            }
            TraceEvent::Error { message } => write!(f, "error (condition is false): {message}"),
        }
    }
}

/// Compiled regexes by source and flags, shared by every sheet of a world, so each distinct
/// regex is compiled once.
#[derive(Clone, Debug, Default)]
pub struct RegexCache(Arc<Mutex<RegexMap>>);

/// Compiled regexes by (source, flags).
type RegexMap = HashMap<(String, String), Arc<JsRegex>>;

impl RegexCache {
    /// How many distinct regexes are cached.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |m| m.len())
    }

    /// True when none are.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RegexSource for RegexCache {
    fn regex(&mut self, source: &str, flags: &str) -> Result<Arc<JsRegex>, regex::RegexError> {
        let key = (source.to_owned(), flags.to_owned());
        if let Some(r) = self.0.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(r);
        }
        let r = Arc::new(JsRegex::compile(source, flags)?);
        if let Ok(mut m) = self.0.lock() {
            m.insert(key, r.clone());
        }
        Ok(r)
    }
}

/// Compiles a sheet with a fresh regex cache.
pub fn compile_sheet(lines: &[String]) -> Result<Sheet, SheetError> {
    Sheet::compile(lines, &mut RegexCache::default())
}

/// Checks a sheet written as one text (as an editor holds it): the error's line and column
/// count every line of `text`, blank ones included, exactly as the engine reports them.
pub fn check_sheet(text: &str) -> Result<(), SheetError> {
    compile_sheet(crate::model::FactSheet::from_text(text).lines()).map(drop)
}

/// Evaluates one expression (not a sheet) and renders its value as JavaScript would show it
/// with `JSON.stringify` for primitives and arrays (`undefined` as `undefined`, NaN and
/// infinities by name). For tools and the differential tests against JavaScript.
pub fn evaluate_to_string(
    expression: &str,
    self_facts: &SelfFacts,
    ctx: &Context<'_>,
    draws: &mut dyn Draws,
) -> Result<Result<String, String>, SyntaxError> {
    let node = compile::compile_expression(
        expression,
        self_facts,
        eval::Facts::default(),
        &mut RegexCache::default(),
    )?;
    let mut ev = eval::Eval::new(
        ctx,
        self_facts,
        eval::Facts::default(),
        draws,
        eval::NoTrace,
    );
    Ok(ev
        .value(&node)
        .map(|v| render(&v))
        .map_err(eval::Fault::into_message))
}

fn render(v: &value::Value<'_>) -> String {
    use value::Value;
    match v {
        Value::Undefined => "undefined".into(),
        Value::Num(n) if !n.is_finite() => number::to_js_string(*n),
        Value::Num(n) if *n == 0.0 && n.is_sign_negative() => "-0".into(),
        Value::Num(n) => number::to_js_string(*n),
        Value::Str(s) => serde_json::to_string(&**s).unwrap_or_default(),
        Value::Array(a) => {
            let items: Vec<String> = a.items.iter().map(render).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_js_string().to_string(),
    }
}
