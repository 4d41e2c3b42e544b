//! Evaluating compiled conditions with JavaScript semantics. Nothing here can fail the caller:
//! a runtime type error is returned as an `Err` message, which the sheet evaluator traces and
//! treats as a false condition.

use super::compile::{Drive, FactValue, Method0, Method1, Node, Num, Rel, SelfFacts, Var};
use super::dice;
use super::number::js_trim;
use super::parser::BinOp;
use super::regex::JsRegex;
use super::value::*;
use super::{Draws, TraceEntry, TraceEvent};
use std::rc::Rc;
use std::sync::Arc;

/// The longest string a condition may build (by `+`), in bytes.
pub const MAX_STRING_BYTES: usize = 1024 * 1024;

/// What a condition can see, besides `self`.
#[derive(Clone, Debug)]
pub struct Context<'c> {
    /// The evaluating entity's name (`name`).
    pub name: &'c str,
    /// The message being considered (`content`).
    pub content: &'c str,
    /// Who wrote it (`author`).
    pub author: &'c str,
    /// Whether it mentions the entity by name or alias (`mentioned`).
    pub mentioned: bool,
    /// Milliseconds since the entity last responded (`response_ms`; infinite if never).
    pub response_ms: f64,
    /// Milliseconds since the message arrived (`retry_ms`).
    pub retry_ms: f64,
    /// Messages since the entity's last reply (`unread_count`).
    pub unread_count: f64,
    /// How an item is being used (`interaction_type`), if it is.
    pub interaction_type: Option<&'c str>,
    /// Names of the entities present (`present`), the entity included.
    pub present: &'c [String],
    /// Hour of the day, 0–23 (`time.hour`); `time.is_day` is 6 ≤ hour < 18.
    pub hour: f64,
    /// The entity's drives now (`drives.energy`, …; docs/drives.md).
    pub drives: DriveValues,
}

/// What `drives` shows a condition: the evaluating entity's drives at the time of evaluation
/// (docs/drives.md). Without drives (a standalone condition, an item): full energy, awake,
/// relaxed, every pressure 0.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriveValues {
    /// `drives.energy`, in [0, 1].
    pub energy: f64,
    /// `drives.social_debt`: the highest social debt toward anyone present, in [0, 1].
    pub social_debt: f64,
    /// `drives.task`: task pressure, in [0, 1].
    pub task: f64,
    /// `drives.curiosity`, in [0, 1].
    pub curiosity: f64,
    /// `drives.pressure`: the highest initiation pressure toward anyone present.
    pub pressure: f64,
    /// `drives.disturbance`: a sleeper's accumulated disturbance.
    pub disturbance: f64,
    /// `drives.asleep`.
    pub asleep: bool,
    /// `drives.mode`: "alert", "normal", "relaxed" or "sleep" (in JSON, one of these strings).
    // `std::primitive::str` spelled out: serde would take a plain `&str` as borrowed from the
    // input (and ask the input to live for `'static`).
    #[serde(deserialize_with = "drive_mode")]
    pub mode: &'static std::primitive::str,
}

/// The values of `drives.mode`.
const DRIVE_MODES: [&str; 4] = ["alert", "normal", "relaxed", "sleep"];

/// `drives.mode` from JSON: one of [`DRIVE_MODES`].
fn drive_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let mode = <String as serde::Deserialize>::deserialize(d)?;
    DRIVE_MODES.into_iter().find(|m| *m == mode).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "`mode` is \"alert\", \"normal\", \"relaxed\" or \"sleep\", not {mode:?}"
        ))
    })
}

impl Default for DriveValues {
    fn default() -> Self {
        DriveValues {
            energy: 1.0,
            social_debt: 0.0,
            task: 0.0,
            curiosity: 0.0,
            pressure: 0.0,
            disturbance: 0.0,
            asleep: false,
            mode: "relaxed",
        }
    }
}

impl Default for Context<'_> {
    fn default() -> Self {
        Context {
            name: "",
            content: "",
            author: "",
            mentioned: false,
            response_ms: f64::INFINITY,
            retry_ms: 0.0,
            unread_count: 0.0,
            interaction_type: None,
            present: &[],
            hour: 12.0,
            drives: DriveValues::default(),
        }
    }
}

/// A runtime type error. Boxed so that a result stays two words and comes back in registers:
/// evaluation is a deep chain of small calls, and errors are rare.
#[derive(Debug)]
pub(crate) struct Fault(Box<str>);

impl Fault {
    /// The message.
    pub fn into_message(self) -> String {
        self.0.into()
    }
}

impl From<String> for Fault {
    fn from(message: String) -> Fault {
        Fault(message.into())
    }
}

type R<T> = Result<T, Fault>;

/// The fact lines `has_fact` searches: the sheet's unconditional facts (with their lower-case
/// forms, computed once per sheet) and the conditional facts fired so far.
#[derive(Clone, Copy, Default)]
pub(crate) struct Facts<'a> {
    pub plain: &'a [Arc<str>],
    pub plain_lower: &'a [Box<str>],
    /// Each fired fact and its lower-case form.
    pub fired: &'a [(&'a str, &'a str)],
}

/// Where an evaluation traces its draws and rolls: nowhere ([`NoTrace`], which costs
/// nothing) or a sheet's trace ([`Traced`]).
pub(crate) trait Trace {
    /// Records `event` (made only if it is recorded).
    fn push(&mut self, event: impl FnOnce() -> TraceEvent);
}

/// Traces nothing.
pub(crate) struct NoTrace;

impl Trace for NoTrace {
    #[inline(always)]
    fn push(&mut self, _: impl FnOnce() -> TraceEvent) {}
}

/// Appends to a trace, as events of sheet line `line`.
pub(crate) struct Traced<'r> {
    pub entries: &'r mut Vec<TraceEntry>,
    pub line: usize,
}

impl Trace for Traced<'_> {
    fn push(&mut self, event: impl FnOnce() -> TraceEvent) {
        self.entries.push(TraceEntry {
            line: self.line,
            event: event(),
        });
    }
}

/// One evaluation of one condition, drawing from a `D` (a concrete generator, whose draws
/// then inline, or `dyn Draws`) and tracing to a `T`.
pub(crate) struct Eval<'a, 'r, D: Draws + ?Sized, T: Trace> {
    pub ctx: &'a Context<'a>,
    pub self_facts: &'a SelfFacts,
    pub facts: Facts<'a>,
    pub draws: &'r mut D,
    pub trace: T,
    present: Option<Rc<JsArray<'a>>>,
}

fn type_error<T>(message: impl Into<String>) -> R<T> {
    Err(Fault(message.into().into()))
}

fn fact_value<'a>(v: &'a FactValue) -> Value<'a> {
    match v {
        FactValue::Num(n) => Value::Num(*n),
        FactValue::Bool(b) => Value::Bool(*b),
        FactValue::Str(s) => Value::Str(JsStr::Borrowed(s)),
    }
}

fn describe(v: &Value<'_>) -> &'static str {
    match v {
        Value::Undefined => "undefined",
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Num(_) => "a number",
        Value::Str(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
        Value::Regex(_) => "a regex",
    }
}

fn builtin(key: &str, list: &[&str]) -> R<()> {
    if list.contains(&key) {
        return type_error(format!("`{key}` is a built-in method, not a value"));
    }
    Ok(())
}

/// A slice of `subject` as a string value, borrowed when the subject is.
fn substring<'a>(subject: &JsStr<'a>, range: std::ops::Range<usize>) -> Value<'a> {
    match subject {
        JsStr::Borrowed(s) => Value::Str(JsStr::Borrowed(&s[range])),
        JsStr::Owned(s) => Value::string(s[range].to_owned()),
    }
}

impl<'a, 'r, D: Draws + ?Sized, T: Trace> Eval<'a, 'r, D, T> {
    pub fn new(
        ctx: &'a Context<'a>,
        self_facts: &'a SelfFacts,
        facts: Facts<'a>,
        draws: &'r mut D,
        trace: T,
    ) -> Self {
        Eval {
            ctx,
            self_facts,
            facts,
            draws,
            trace,
            present: None,
        }
    }

    /// ToBoolean of `n`, without building values where the answer is a boolean anyway.
    ///
    /// Kept small: the operands of a `&&` or `||` chain (one node, see `compile`) are walked
    /// in a loop, the usual operands are answered inline ([`quick`]), and everything else goes
    /// to [`Eval::truthy_other`], out of line. (A condition's top-level chain is walked by
    /// [`condition`] first, without an `Eval`.)
    #[inline]
    pub fn truthy(&mut self, n: &'a Node) -> R<bool> {
        match n {
            Node::All(operands) => {
                for o in operands.iter() {
                    if !self.operand(o)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Node::Any(operands) => {
                for o in operands.iter() {
                    if self.operand(o)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => self.operand(n),
        }
    }

    #[inline(always)]
    fn operand(&mut self, n: &'a Node) -> R<bool> {
        match quick(n, self.ctx, self.draws, &mut self.trace) {
            Some(answer) => answer,
            None => self.truthy_other(n),
        }
    }

    /// The operands of a chain from the first one [`quick`] did not answer: ToBoolean of
    /// `operands` joined by `&&` (`all`) or `||` (see [`condition`]).
    #[inline(never)]
    pub fn rest(mut self, operands: &'a [Node], all: bool) -> R<bool> {
        for o in operands {
            if self.truthy(o)? != all {
                return Ok(!all);
            }
        }
        Ok(all)
    }

    #[inline(never)]
    fn truthy_other(&mut self, n: &'a Node) -> R<bool> {
        Ok(match n {
            Node::Bool(b) => *b,
            Node::All(_) | Node::Any(_) => self.truthy(n)?,
            Node::Greater { x, sign, bound } => {
                greater(self.ctx, self.draws, &mut self.trace, (*x, *sign, *bound))
            }
            Node::Compare {
                rel,
                left,
                right,
                k,
            } => self.compare(*rel, *left, *right, *k),
            Node::Not(a) => !self.truthy(a)?,
            Node::Cond(t, y, no) => {
                if self.truthy(t)? {
                    self.truthy(y)?
                } else {
                    self.truthy(no)?
                }
            }
            Node::Bin(op @ (BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge), a, b) => {
                // The left side a plain number: compare without building its value.
                if let Some(x) = self.number(a) {
                    return Ok(compare(*op, &Value::Num(x), &self.value(b)?));
                }
                let (x, y) = (self.value(a)?, self.value(b)?);
                compare(*op, &x, &y)
            }
            Node::Match(recv, re) => {
                let subject = self.value(recv)?;
                let Value::Str(s) = subject else {
                    return type_error(format!(
                        "`match` needs a string, not {}",
                        describe(&subject)
                    ));
                };
                re.test(&s)?
            }
            other => self.value(other)?.truthy(),
        })
    }

    /// A [`Node::Compare`]: its left operand first, then its right.
    #[inline(always)]
    fn compare(&mut self, rel: Rel, left: Num, right: Num, k: f64) -> bool {
        let x = self.num(left, k);
        let y = if right == Num::Const {
            k
        } else {
            self.num(right, k)
        };
        rel.test(x, y)
    }

    /// An operand of [`Node::Compare`] (`k`: the comparison's constant).
    #[inline(always)]
    fn num(&mut self, n: Num, k: f64) -> f64 {
        if n == Num::Random {
            return self.random();
        }
        let c = self.ctx;
        match n {
            Num::Const => k,
            Num::ResponseMs => c.response_ms,
            Num::RetryMs => c.retry_ms,
            Num::Drive(d) => drive_number(&c.drives, d),
            _ => c.unread_count,
        }
    }

    pub fn value(&mut self, n: &'a Node) -> R<Value<'a>> {
        Ok(match n {
            Node::Undefined => Value::Undefined,
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Num(x) => Value::Num(*x),
            Node::Str(s) => Value::Str(JsStr::Borrowed(s)),
            Node::Var(v) => self.var(*v),
            Node::Drive(d) => drive_value(&self.ctx.drives, *d),
            Node::SelfIndex(key) => {
                let k = self.value(key)?.to_js_string();
                self.self_property(&k)?
            }
            Node::Member(obj, name) => {
                let o = self.value(obj)?;
                self.property(&o, name)?
            }
            Node::Index(obj, key) => {
                let o = self.value(obj)?;
                let k = self.value(key)?.to_js_string();
                self.property(&o, &k)?
            }
            Node::Not(a) => Value::Bool(!self.truthy(a)?),
            Node::Neg(a) => Value::Num(-self.value(a)?.to_number()),
            Node::Bin(op, a, b) => {
                let (x, y) = (self.value(a)?, self.value(b)?);
                binary(*op, &x, &y)?
            }
            Node::Greater { x, sign, bound } => Value::Bool(greater(
                self.ctx,
                self.draws,
                &mut self.trace,
                (*x, *sign, *bound),
            )),
            Node::Compare {
                rel,
                left,
                right,
                k,
            } => Value::Bool(self.compare(*rel, *left, *right, *k)),
            Node::All(operands) => self.chain_value(operands, |x| !x.truthy())?,
            Node::Any(operands) => self.chain_value(operands, Value::truthy)?,
            Node::Nullish(operands) => self.chain_value(operands, |x| !x.is_nullish())?,
            Node::Cond(t, y, no) => {
                if self.truthy(t)? {
                    self.value(y)?
                } else {
                    self.value(no)?
                }
            }
            Node::Random => Value::Num(self.random()),
            Node::Chance(p) => {
                let probability = self.value(p)?.to_number();
                let value = self.draws.draw();
                let result = value < probability;
                self.trace.push(|| TraceEvent::Chance {
                    probability,
                    value,
                    result,
                });
                Value::Bool(result)
            }
            Node::Roll(x) => {
                let notation = self.value(x)?.to_js_string().to_string();
                let r = dice::roll(&notation, self.draws)?;
                let total = r.total;
                self.trace.push(|| TraceEvent::Roll {
                    notation,
                    dice: r.dice,
                    total,
                });
                Value::Num(total)
            }
            Node::HasFact(x) => {
                let pattern = self.value(x)?.to_js_string().to_lowercase();
                let f = self.facts;
                Value::Bool(
                    f.plain_lower.iter().any(|l| l.contains(&pattern))
                        || f.fired.iter().any(|(_, l)| l.contains(&pattern)),
                )
            }
            Node::HasFactText { lower, in_plain } => {
                Value::Bool(*in_plain || self.facts.fired.iter().any(|(_, l)| l.contains(&**lower)))
            }
            Node::HasFactRegex(re, in_plain) => {
                let f = self.facts;
                let mut found = match in_plain {
                    Some(known) => *known,
                    None => {
                        let mut hit = false;
                        for line in f.plain {
                            if re.test(line)? {
                                hit = true;
                                break;
                            }
                        }
                        hit
                    }
                };
                if !found {
                    for (line, _) in f.fired {
                        if re.test(line)? {
                            found = true;
                            break;
                        }
                    }
                }
                Value::Bool(found)
            }
            Node::Regex(re) => Value::Regex(re),
            Node::MatchVar(v, re) => {
                self.match_value(&JsStr::Borrowed(string_var(self.ctx, *v)), re)?
            }
            Node::Match(recv, re) => {
                let subject = self.value(recv)?;
                let Value::Str(s) = subject else {
                    return type_error(format!(
                        "`match` needs a string, not {}",
                        describe(&subject)
                    ));
                };
                self.match_value(&s, re)?
            }
            Node::Test(re, arg) => {
                let s = self.value(arg)?.to_js_string();
                Value::Bool(re.test(&s)?)
            }
            Node::Method1(recv, m, arg) => {
                let r = self.value(recv)?;
                let a = self.value(arg)?;
                method1(&r, *m, &a)?
            }
            Node::Method0(recv, m) => {
                let r = self.value(recv)?;
                let Value::Str(s) = &r else {
                    return type_error(format!("this method needs a string, not {}", describe(&r)));
                };
                let out = match m {
                    Method0::ToLowerCase => s.to_lowercase(),
                    Method0::ToUpperCase => s.to_uppercase(),
                    Method0::Trim => return Ok(substring(s, trim_range(s))),
                };
                Value::string(out)
            }
        })
    }

    /// The value of a chain: the first operand's value for which `stop` holds, or the last's.
    fn chain_value(
        &mut self,
        operands: &'a [Node],
        stop: impl Fn(&Value<'a>) -> bool,
    ) -> R<Value<'a>> {
        let (last, init) = operands.split_last().expect("a chain has operands");
        for o in init {
            let x = self.value(o)?;
            if stop(&x) {
                return Ok(x);
            }
        }
        self.value(last)
    }

    /// `random()`: a draw, traced.
    #[inline]
    fn random(&mut self) -> f64 {
        random(self.draws, &mut self.trace)
    }

    /// The value of `n` when it is certainly a number that needs no [`Value`] (a literal, a
    /// numeric context variable, `random()`), evaluating it; `None` (evaluating nothing)
    /// otherwise.
    #[inline]
    fn number(&mut self, n: &'a Node) -> Option<f64> {
        match n {
            Node::Num(x) => Some(*x),
            Node::Random => Some(self.random()),
            Node::Var(Var::ResponseMs) => Some(self.ctx.response_ms),
            Node::Var(Var::RetryMs) => Some(self.ctx.retry_ms),
            Node::Var(Var::UnreadCount) => Some(self.ctx.unread_count),
            Node::Drive(d) if d.is_number() => Some(drive_number(&self.ctx.drives, *d)),
            _ => None,
        }
    }

    fn var(&mut self, v: Var) -> Value<'a> {
        let c = self.ctx;
        match v {
            Var::Mentioned => Value::Bool(c.mentioned),
            Var::Content => Value::Str(JsStr::Borrowed(c.content)),
            Var::Author => Value::Str(JsStr::Borrowed(c.author)),
            Var::Name => Value::Str(JsStr::Borrowed(c.name)),
            Var::ResponseMs => Value::Num(c.response_ms),
            Var::RetryMs => Value::Num(c.retry_ms),
            Var::UnreadCount => Value::Num(c.unread_count),
            Var::InteractionType => c
                .interaction_type
                .map_or(Value::Undefined, |s| Value::Str(JsStr::Borrowed(s))),
            Var::Present => {
                let arr = self.present.get_or_insert_with(|| {
                    Rc::new(JsArray {
                        items: c
                            .present
                            .iter()
                            .map(|s| Value::Str(JsStr::Borrowed(s)))
                            .collect(),
                        index: None,
                        input: None,
                        named_groups: false,
                    })
                });
                Value::Array(arr.clone())
            }
            Var::SelfObj => Value::Object(Obj::SelfFacts),
            Var::Time => Value::Object(Obj::Time),
            Var::Drives => Value::Object(Obj::Drives),
            Var::NaN => Value::Num(f64::NAN),
            Var::Infinity => Value::Num(f64::INFINITY),
        }
    }

    fn self_property(&self, key: &str) -> R<Value<'a>> {
        if let Some(v) = self.self_facts.get(key) {
            return Ok(fact_value(v));
        }
        builtin(key, OBJECT_BUILTINS)?;
        Ok(Value::Undefined)
    }

    fn property(&self, v: &Value<'a>, key: &str) -> R<Value<'a>> {
        match v {
            Value::Undefined | Value::Null => {
                type_error(format!("cannot read `{key}` of {}", describe(v)))
            }
            Value::Str(s) => {
                if key == "length" {
                    return Ok(Value::Num(utf16_len(s) as f64));
                }
                if let Some(i) = array_index(key) {
                    return code_unit(s, i);
                }
                builtin(key, STRING_BUILTINS)?;
                Ok(Value::Undefined)
            }
            Value::Array(a) => {
                if key == "length" {
                    return Ok(Value::Num(a.items.len() as f64));
                }
                if let Some(i) = array_index(key) {
                    return Ok(a.items.get(i).cloned().unwrap_or(Value::Undefined));
                }
                if a.input.is_some() {
                    match key {
                        "index" => return Ok(a.index.map_or(Value::Undefined, Value::Num)),
                        "input" => return Ok(a.input.clone().map_or(Value::Undefined, Value::Str)),
                        "groups" if a.named_groups => {
                            return type_error("named groups of a match are not supported");
                        }
                        "groups" => return Ok(Value::Undefined),
                        _ => {}
                    }
                }
                builtin(key, ARRAY_BUILTINS)?;
                Ok(Value::Undefined)
            }
            Value::Object(Obj::SelfFacts) => self.self_property(key),
            Value::Object(Obj::Time) => {
                let hour = self.ctx.hour;
                let day = (6.0..18.0).contains(&hour);
                match key {
                    "hour" => Ok(Value::Num(hour)),
                    "is_day" => Ok(Value::Bool(day)),
                    "is_night" => Ok(Value::Bool(!day)),
                    _ => {
                        builtin(key, OBJECT_BUILTINS)?;
                        Ok(Value::Undefined)
                    }
                }
            }
            Value::Object(Obj::Drives) => match Drive::of(key) {
                Some(d) => Ok(drive_value(&self.ctx.drives, d)),
                None => {
                    builtin(key, OBJECT_BUILTINS)?;
                    Ok(Value::Undefined)
                }
            },
            Value::Num(_) | Value::Bool(_) => {
                builtin(key, NUMBER_BUILTINS)?;
                Ok(Value::Undefined)
            }
            Value::Regex(r) => {
                let flags = r.flags();
                Ok(match key {
                    "source" => Value::string(r.source().to_owned()),
                    "flags" => Value::string(flags.to_owned()),
                    "global" => Value::Bool(flags.contains('g')),
                    "ignoreCase" => Value::Bool(flags.contains('i')),
                    "multiline" => Value::Bool(flags.contains('m')),
                    "dotAll" => Value::Bool(flags.contains('s')),
                    "unicode" => Value::Bool(flags.contains('u')),
                    "sticky" | "hasIndices" | "unicodeSets" => Value::Bool(false),
                    "lastIndex" => Value::Num(0.0),
                    _ => {
                        builtin(key, REGEX_BUILTINS)?;
                        Value::Undefined
                    }
                })
            }
        }
    }

    fn match_value(&self, s: &JsStr<'a>, re: &JsRegex) -> R<Value<'a>> {
        if re.flags().contains('g') {
            let all = re.find_all(s)?;
            if all.is_empty() {
                return Ok(Value::Null);
            }
            let items = all.into_iter().map(|r| substring(s, r)).collect();
            return Ok(Value::Array(Rc::new(JsArray {
                items,
                index: None,
                input: None,
                named_groups: false,
            })));
        }
        let Some(groups) = re.exec(s)? else {
            return Ok(Value::Null);
        };
        let index = groups
            .first()
            .and_then(|g| g.as_ref())
            .map(|g| utf16_index(s, g.start) as f64);
        let items = groups
            .into_iter()
            .map(|g| g.map_or(Value::Undefined, |r| substring(s, r)))
            .collect();
        Ok(Value::Array(Rc::new(JsArray {
            items,
            index,
            input: Some(s.clone()),
            named_groups: re.has_named_groups(),
        })))
    }
}

/// ToBoolean of the condition `n`. The operands of a top-level `&&` or `||` chain (or `n`
/// itself) that need only the context and the draws (see [`quick`]) are answered here,
/// without setting up an [`Eval`]: a usual condition (`mentioned && random() < 0.1 &&
/// content.match(/aria/i)`) never sets one up, and [`super::Condition::test`] inlines this
/// loop into its caller. From the first operand that needs more, `rest` (which sets one up
/// and calls [`Eval::rest`]) answers the remaining ones.
#[inline(always)]
pub(crate) fn condition<'a, 'r, D: Draws + ?Sized, T: Trace>(
    n: &'a Node,
    ctx: &'a Context<'a>,
    draws: &'r mut D,
    mut trace: T,
    rest: impl FnOnce(&'r mut D, T, &'a [Node], bool) -> R<bool>,
) -> R<bool> {
    let (operands, all) = match n {
        Node::All(operands) => (&operands[..], true),
        Node::Any(operands) => (&operands[..], false),
        _ => (std::slice::from_ref(n), true),
    };
    for (i, o) in operands.iter().enumerate() {
        match quick(o, ctx, draws, &mut trace) {
            Some(answer) => {
                if answer? != all {
                    return Ok(!all);
                }
            }
            None => return rest(draws, trace, &operands[i..], all),
        }
    }
    Ok(all)
}

/// ToBoolean of an operand that needs only the context and the draws: `mentioned`, a draw
/// compared with a constant (`random() < 0.1`, a [`Node::Greater`]), a regex test of a string
/// variable (`content.match(...)`, which needs no value for its subject); `None` (evaluating
/// nothing) for any other. Few cases, so the dispatch is a chain of well-predicted branches
/// rather than an indirect jump through a table; and nothing here reads a numeric context
/// variable, so that, inlined into a caller's loop, it keeps none of them in a register or
/// on the stack (a [`Node::Greater`] of `response_ms` goes to [`Eval::truthy_other`]).
#[inline(always)]
fn quick<D: Draws + ?Sized, T: Trace>(
    n: &Node,
    ctx: &Context<'_>,
    draws: &mut D,
    trace: &mut T,
) -> Option<R<bool>> {
    Some(match n {
        Node::Var(Var::Mentioned) => Ok(ctx.mentioned),
        Node::Greater {
            x: Num::Random,
            sign,
            bound,
        } => Ok(*bound < f64::from_bits(random(draws, trace).to_bits() ^ sign)),
        Node::MatchVar(v, re) => re.test(string_var(ctx, *v)).map_err(Fault::from),
        _ => return None,
    })
}

/// `random()`: a draw, traced.
#[inline(always)]
fn random<D: Draws + ?Sized, T: Trace>(draws: &mut D, trace: &mut T) -> f64 {
    let value = draws.draw();
    trace.push(|| TraceEvent::Random { value });
    value
}

/// A [`Node::Greater`] (operand, sign, bound).
#[inline(always)]
fn greater<D: Draws + ?Sized, T: Trace>(
    ctx: &Context<'_>,
    draws: &mut D,
    trace: &mut T,
    (x, sign, bound): (Num, u64, f64),
) -> bool {
    let x = match x {
        Num::Random => random(draws, trace),
        Num::ResponseMs => ctx.response_ms,
        Num::RetryMs => ctx.retry_ms,
        Num::Drive(d) => drive_number(&ctx.drives, d),
        _ => ctx.unread_count,
    };
    bound < f64::from_bits(x.to_bits() ^ sign)
}

/// A numeric member of `drives` (NaN for `asleep` and `mode`, which are not numbers and
/// never reach here).
#[inline(always)]
fn drive_number(d: &DriveValues, key: Drive) -> f64 {
    match key {
        Drive::Energy => d.energy,
        Drive::SocialDebt => d.social_debt,
        Drive::Task => d.task,
        Drive::Curiosity => d.curiosity,
        Drive::Pressure => d.pressure,
        Drive::Disturbance => d.disturbance,
        Drive::Asleep | Drive::Mode => f64::NAN,
    }
}

/// The value of `drives.<key>`.
fn drive_value(d: &DriveValues, key: Drive) -> Value<'static> {
    match key {
        Drive::Asleep => Value::Bool(d.asleep),
        Drive::Mode => Value::Str(JsStr::Borrowed(d.mode)),
        number => Value::Num(drive_number(d, number)),
    }
}

/// The subject of a [`Node::MatchVar`]: `content`, `author` or `name`.
#[inline(always)]
fn string_var<'a>(ctx: &Context<'a>, v: Var) -> &'a str {
    match v {
        Var::Author => ctx.author,
        Var::Name => ctx.name,
        _ => ctx.content,
    }
}

fn trim_range(s: &str) -> std::ops::Range<usize> {
    let t = js_trim(s);
    let start = t.as_ptr() as usize - s.as_ptr() as usize;
    start..start + t.len()
}

fn code_unit<'a>(s: &str, i: usize) -> R<Value<'a>> {
    match s.encode_utf16().nth(i) {
        None => Ok(Value::Undefined),
        Some(u) => match char::from_u32(u32::from(u)) {
            Some(c) => Ok(Value::string(c.to_string())),
            None => type_error("indexing splits a character outside the Basic Multilingual Plane"),
        },
    }
}

fn compare(op: BinOp, x: &Value<'_>, y: &Value<'_>) -> bool {
    match op {
        BinOp::Lt => less_than(x, y) == Some(true),
        BinOp::Gt => less_than(y, x) == Some(true),
        BinOp::Le => less_than(y, x) == Some(false),
        BinOp::Ge => less_than(x, y) == Some(false),
        _ => unreachable!("only relational operators reach compare"),
    }
}

fn binary<'a>(op: BinOp, x: &Value<'a>, y: &Value<'a>) -> R<Value<'a>> {
    Ok(match op {
        BinOp::Add => {
            let (px, py) = (x.to_primitive(), y.to_primitive());
            if matches!(px, Value::Str(_)) || matches!(py, Value::Str(_)) {
                let (a, b) = (px.to_js_string(), py.to_js_string());
                if a.len() + b.len() > MAX_STRING_BYTES {
                    return type_error(format!("a string longer than {MAX_STRING_BYTES} bytes"));
                }
                if b.is_empty() {
                    return Ok(Value::Str(a));
                }
                Value::string(format!("{}{}", &*a, &*b))
            } else {
                Value::Num(px.to_number() + py.to_number())
            }
        }
        BinOp::Sub => Value::Num(x.to_number() - y.to_number()),
        BinOp::Mul => Value::Num(x.to_number() * y.to_number()),
        BinOp::Div => Value::Num(x.to_number() / y.to_number()),
        BinOp::Rem => Value::Num(x.to_number() % y.to_number()),
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => Value::Bool(compare(op, x, y)),
        BinOp::Eq => Value::Bool(x.loose_eq(y)),
        BinOp::Ne => Value::Bool(!x.loose_eq(y)),
        BinOp::StrictEq => Value::Bool(x.strict_eq(y)),
        BinOp::StrictNe => Value::Bool(!x.strict_eq(y)),
    })
}

fn method1<'a>(recv: &Value<'a>, m: Method1, arg: &Value<'a>) -> R<Value<'a>> {
    match (recv, m) {
        (Value::Str(s), _) => {
            if matches!(arg, Value::Regex(_)) {
                return type_error("the argument must not be a regex (use `match` or `test`)");
            }
            let needle = arg.to_js_string();
            Ok(Value::Bool(match m {
                Method1::Includes => s.contains(&*needle),
                Method1::StartsWith => s.starts_with(&*needle),
                Method1::EndsWith => s.ends_with(&*needle),
            }))
        }
        (Value::Array(a), Method1::Includes) => {
            // SameValueZero: like === but NaN equals NaN.
            let nan = matches!(arg, Value::Num(n) if n.is_nan());
            Ok(Value::Bool(a.items.iter().any(|v| {
                v.strict_eq(arg) || (nan && matches!(v, Value::Num(n) if n.is_nan()))
            })))
        }
        _ => type_error(format!(
            "this method is not available on {}",
            describe(recv)
        )),
    }
}
