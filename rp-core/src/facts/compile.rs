//! Compiling a parsed condition into a tree of resolved operations: variables become slots,
//! `self.key` becomes the fact's value, regex literals are compiled (once, through the
//! world's cache), and every call is checked against the allow-list.

use super::eval::Facts;
use super::parser::{Ast, BinOp, LogicOp, Parser, SyntaxError};
use super::regex::{JsRegex, RegexError};
use super::value::{NUMBER_BUILTINS, OBJECT_BUILTINS, STRING_BUILTINS};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The longest condition accepted, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 64 * 1024;

/// A context variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Var {
    Mentioned,
    Content,
    Author,
    ResponseMs,
    RetryMs,
    UnreadCount,
    InteractionType,
    Present,
    Name,
    SelfObj,
    Time,
    Drives,
    NaN,
    Infinity,
}

/// A member of `drives` (docs/drives.md), resolved when compiling `drives.<key>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Drive {
    Energy,
    SocialDebt,
    Task,
    Curiosity,
    Pressure,
    Disturbance,
    Asleep,
    Mode,
}

impl Drive {
    /// The member called `key`, if `drives` has one.
    pub fn of(key: &str) -> Option<Drive> {
        Some(match key {
            "energy" => Drive::Energy,
            "social_debt" => Drive::SocialDebt,
            "task" => Drive::Task,
            "curiosity" => Drive::Curiosity,
            "pressure" => Drive::Pressure,
            "disturbance" => Drive::Disturbance,
            "asleep" => Drive::Asleep,
            "mode" => Drive::Mode,
            _ => return None,
        })
    }

    /// Whether the member is a number (all but `asleep` and `mode`).
    pub fn is_number(self) -> bool {
        !matches!(self, Drive::Asleep | Drive::Mode)
    }
}

/// A value of a `key: value` fact.
#[derive(Clone, Debug, PartialEq)]
pub enum FactValue {
    /// A number (`fox_tf: 0.3`).
    Num(f64),
    /// A boolean (`is_poisoned: true`).
    Bool(bool),
    /// Anything else (`name: Aria`).
    Str(String),
}

/// The `self` of a sheet: its `key: value` facts.
pub type SelfFacts = BTreeMap<String, FactValue>;

/// String methods of the allow-list that take one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method1 {
    Includes,
    StartsWith,
    EndsWith,
}

/// String methods of the allow-list that take none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method0 {
    ToLowerCase,
    ToUpperCase,
    Trim,
}

/// A compiled condition.
#[derive(Debug)]
pub(crate) enum Node {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(Box<str>),
    Var(Var),
    SelfIndex(Box<Node>),
    /// `drives.<key>` for a key `drives` has.
    Drive(Drive),
    Member(Box<Node>, Box<str>),
    Index(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// A relational operator (`<`, `>`, `<=`, `>=`) between a number operand and a constant,
    /// as one comparison: `bound < x` (with the sign of `x` flipped by `sign`, `0` or the sign
    /// bit). `random() < 0.1` is `-0.1 < -random()`, `response_ms >= 60000` is
    /// `59999.999999999993 < response_ms` (the largest number below 60000); any comparison
    /// with NaN stays false, and `-0` still equals `0`. Used whenever this is exact (all but
    /// `x <= Infinity` and `x >= -Infinity`).
    Greater {
        x: Num,
        sign: u64,
        bound: f64,
    },
    /// A relational operator (`<`, `>`, `<=`, `>=`) between two operands that are numbers
    /// without building a value (`random() < response_ms`), or one and a constant where
    /// [`Node::Greater`] would not be exact. `k` is the constant operand, if there is one:
    /// only `right` can be [`Num::Const`] (a constant on the left is moved to the right, with
    /// the operator turned around; two constants are folded).
    Compare {
        rel: Rel,
        left: Num,
        right: Num,
        k: f64,
    },
    /// `a && b && ...`: two or more operands, evaluated in order.
    All(Box<[Node]>),
    /// `a || b || ...`.
    Any(Box<[Node]>),
    /// `a ?? b ?? ...`.
    Nullish(Box<[Node]>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Random,
    Chance(Box<Node>),
    Roll(Box<Node>),
    /// `has_fact(x)` with a computed pattern.
    HasFact(Box<Node>),
    /// `has_fact("text")`: the pattern lower-cased, and whether a plain fact of the sheet
    /// contains it (known when compiling, as plain facts are part of the sheet).
    HasFactText {
        lower: Box<str>,
        in_plain: bool,
    },
    /// `has_fact(/re/)`, and whether a plain fact matches it (`None`: testing them failed at
    /// compile time, so the error is left for evaluation to trace).
    HasFactRegex(Arc<JsRegex>, Option<bool>),
    Regex(Arc<JsRegex>),
    Match(Box<Node>, Arc<JsRegex>),
    /// `content.match(re)`, `author.match(re)` or `name.match(re)`: a variable that is always a
    /// string.
    MatchVar(Var, Arc<JsRegex>),
    Test(Arc<JsRegex>, Box<Node>),
    Method1(Box<Node>, Method1, Box<Node>),
    Method0(Box<Node>, Method0),
}

/// A relational operator on numbers, as the set of outcomes of comparing `x` with `y` that it
/// accepts: bit 1 `x < y`, bit 2 `x > y`, bit 4 `x == y`. Bit 0, the outcome when either is
/// NaN, is never set: every relational operator is then false, as in JavaScript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rel(u8);

impl Rel {
    const LT: Rel = Rel(1 << 1);
    const GT: Rel = Rel(1 << 2);
    const LE: Rel = Rel(1 << 1 | 1 << 4);
    const GE: Rel = Rel(1 << 2 | 1 << 4);

    /// `op`, one of `<`, `>`, `<=`, `>=`.
    fn of(op: BinOp) -> Rel {
        match op {
            BinOp::Lt => Rel::LT,
            BinOp::Gt => Rel::GT,
            BinOp::Le => Rel::LE,
            BinOp::Ge => Rel::GE,
            _ => unreachable!("only relational operators compare numbers"),
        }
    }

    /// `x REL k` as a [`Node::Greater`], if that is exact.
    fn greater(self, x: Num, k: f64) -> Option<Node> {
        const SIGN: u64 = 1 << 63;
        let (sign, bound) = match self {
            Rel::LT => (SIGN, -k),
            Rel::GT => (0, k),
            // No number lies between k and the next one up (NaN stays NaN).
            Rel::LE if k != f64::INFINITY => (SIGN, -k.next_up()),
            Rel::GE if k != f64::NEG_INFINITY => (0, k.next_down()),
            _ => return None,
        };
        Some(Node::Greater { x, sign, bound })
    }

    /// The same test with its operands swapped (`k < x` is `x > k`).
    fn swapped(self) -> Rel {
        Rel(self.0 & 1 << 4 | (self.0 & 1 << 1) << 1 | (self.0 & 1 << 2) >> 1)
    }

    /// Whether `x` and `y` compare as the operator asks, without a branch.
    #[inline(always)]
    pub fn test(self, x: f64, y: f64) -> bool {
        let outcome = u8::from(x < y) << 1 | u8::from(x > y) << 2 | u8::from(x == y) << 4;
        self.0 & outcome != 0
    }
}

/// An operand of [`Node::Compare`]: something that is always a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Num {
    /// The comparison's constant `k`.
    Const,
    /// `random()`.
    Random,
    ResponseMs,
    RetryMs,
    UnreadCount,
    /// A numeric member of `drives` (`drives.energy`, …).
    Drive(Drive),
}

/// A compile error at a byte offset of the condition.
pub type CompileError = SyntaxError;

/// Compiles regexes, through a cache so each distinct regex is compiled once.
pub trait RegexSource {
    /// The compiled form of `/source/flags`.
    fn regex(&mut self, source: &str, flags: &str) -> Result<Arc<JsRegex>, RegexError>;
}

/// Compiles without caching (each call compiles anew).
#[cfg(test)]
pub(crate) struct NoCache;

#[cfg(test)]
impl RegexSource for NoCache {
    fn regex(&mut self, source: &str, flags: &str) -> Result<Arc<JsRegex>, RegexError> {
        JsRegex::compile(source, flags).map(Arc::new)
    }
}

const METHODS: &str = "match, test, includes, startsWith, endsWith, toLowerCase, toUpperCase, trim";

struct Compiler<'c> {
    self_facts: &'c SelfFacts,
    /// The sheet's unconditional facts, which `has_fact` with a literal pattern is resolved
    /// against once, here.
    plain: Facts<'c>,
    regexes: &'c mut dyn RegexSource,
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, CompileError> {
    Err(SyntaxError {
        offset,
        message: message.into(),
    })
}

/// Compiles a whole expression (conditions outside sheets; sheets use
/// [`compile_condition`]).
pub(crate) fn compile_expression(
    src: &str,
    self_facts: &SelfFacts,
    plain: Facts<'_>,
    regexes: &mut dyn RegexSource,
) -> Result<Node, CompileError> {
    check_size(src)?;
    let ast = Parser::new(src).expression()?;
    Compiler {
        self_facts,
        plain,
        regexes,
    }
    .node(&ast)
}

/// Compiles a `$if` condition; returns it and the byte offset just after its `:`.
pub(crate) fn compile_condition(
    src: &str,
    self_facts: &SelfFacts,
    plain: Facts<'_>,
    regexes: &mut dyn RegexSource,
) -> Result<(Node, usize), CompileError> {
    check_size(src)?;
    let (ast, end) = Parser::new(src).condition()?;
    Ok((
        Compiler {
            self_facts,
            plain,
            regexes,
        }
        .node(&ast)?,
        end,
    ))
}

fn check_size(src: &str) -> Result<(), CompileError> {
    if src.len() > MAX_EXPRESSION_BYTES {
        return err(
            0,
            format!("the condition is longer than {MAX_EXPRESSION_BYTES} bytes"),
        );
    }
    Ok(())
}

/// `n` as an operand of [`Node::Compare`], if it is always a number and reading it builds
/// nothing.
fn num(n: &Node) -> Option<Num> {
    Some(match n {
        Node::Num(_) => Num::Const,
        Node::Random => Num::Random,
        Node::Var(Var::ResponseMs) => Num::ResponseMs,
        Node::Var(Var::RetryMs) => Num::RetryMs,
        Node::Var(Var::UnreadCount) => Num::UnreadCount,
        Node::Drive(d) if d.is_number() => Num::Drive(*d),
        _ => return None,
    })
}

fn fact_node(v: &FactValue) -> Node {
    match v {
        FactValue::Num(n) => Node::Num(*n),
        FactValue::Bool(b) => Node::Bool(*b),
        FactValue::Str(s) => Node::Str(s.as_str().into()),
    }
}

impl Compiler<'_> {
    fn regex(
        &mut self,
        source: &str,
        flags: &str,
        offset: usize,
    ) -> Result<Arc<JsRegex>, CompileError> {
        self.regexes.regex(source, flags).map_err(|e| SyntaxError {
            // Point into the literal: past the opening `/`.
            offset: offset + 1 + e.offset.min(source.len()),
            message: format!("in the regex /{source}/{flags}: {}", e.message),
        })
    }

    fn boxed(&mut self, ast: &Ast<'_>) -> Result<Box<Node>, CompileError> {
        self.node(ast).map(Box::new)
    }

    /// A chain of one logical operator (`a && b && c`, which parses as `(a && b) && c`),
    /// compiled as one node holding its operands in order (a parenthesised chain of the same
    /// operator is spliced in: `a && (b && c)` evaluates the same operands in the same order to
    /// the same value, for `&&`, `||` and `??` alike). Evaluation walks the operands in a loop;
    /// compiling is iterative, so long chains cost neither time nor stack.
    fn chain(&mut self, op: LogicOp, ast: &Ast<'_>) -> Result<Node, CompileError> {
        let mut operands = Vec::new();
        let mut left = ast;
        while let Ast::Logic(o, a, b) = left {
            if *o != op {
                break;
            }
            operands.push(&**b);
            left = a;
        }
        operands.push(left);
        let mut nodes = Vec::with_capacity(operands.len());
        for a in operands.iter().rev() {
            match (op, self.node(a)?) {
                (LogicOp::And, Node::All(inner))
                | (LogicOp::Or, Node::Any(inner))
                | (LogicOp::Nullish, Node::Nullish(inner)) => nodes.extend(inner),
                (_, n) => nodes.push(n),
            }
        }
        let nodes = nodes.into_boxed_slice();
        Ok(match op {
            LogicOp::And => Node::All(nodes),
            LogicOp::Or => Node::Any(nodes),
            LogicOp::Nullish => Node::Nullish(nodes),
        })
    }

    /// A binary operator; a relational one between two numbers becomes [`Node::Compare`].
    fn binary(&mut self, op: BinOp, a: &Ast<'_>, b: &Ast<'_>) -> Result<Node, CompileError> {
        let (x, y) = (self.node(a)?, self.node(b)?);
        let relational = matches!(op, BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge);
        let (Some(left), Some(right), true) = (num(&x), num(&y), relational) else {
            return Ok(Node::Bin(op, Box::new(x), Box::new(y)));
        };
        let rel = Rel::of(op);
        Ok(match (&x, &y) {
            (Node::Num(i), Node::Num(j)) => Node::Bool(rel.test(*i, *j)),
            // Reading a constant has no effect, so the order of the operands can change.
            (Node::Num(k), _) => rel.swapped().greater(right, *k).unwrap_or(Node::Compare {
                rel: rel.swapped(),
                left: right,
                right: left,
                k: *k,
            }),
            (_, Node::Num(k)) => rel.greater(left, *k).unwrap_or(Node::Compare {
                rel,
                left,
                right,
                k: *k,
            }),
            _ => Node::Compare {
                rel,
                left,
                right,
                k: 0.0,
            },
        })
    }

    fn node(&mut self, ast: &Ast<'_>) -> Result<Node, CompileError> {
        Ok(match ast {
            Ast::Num(n) => Node::Num(*n),
            Ast::Str(s) => Node::Str(s.as_str().into()),
            Ast::Bool(b) => Node::Bool(*b),
            Ast::Null => Node::Null,
            Ast::Paren(inner) => self.node(inner)?,
            Ast::Ident("undefined", _) => Node::Undefined,
            Ast::Ident(name, offset) => Node::Var(self.variable(name, *offset)?),
            Ast::Regex {
                source,
                flags,
                offset,
            } => Node::Regex(self.regex(source, flags, *offset)?),
            Ast::Member(obj, name, offset) => self.member(obj, name, *offset)?,
            Ast::Index(obj, key) => {
                if matches!(**obj, Ast::Ident("self", _)) {
                    Node::SelfIndex(self.boxed(key)?)
                } else {
                    Node::Index(self.boxed(obj)?, self.boxed(key)?)
                }
            }
            Ast::Call(callee, args, offset) => self.call(callee, args, *offset)?,
            Ast::Not(a) => Node::Not(self.boxed(a)?),
            // A negative literal (`-1`) is a number, which comparisons compile better.
            Ast::Neg(a) => match self.node(a)? {
                Node::Num(x) => Node::Num(-x),
                other => Node::Neg(Box::new(other)),
            },
            Ast::Binary(op, a, b) => self.binary(*op, a, b)?,
            Ast::Logic(op, _, _) => self.chain(*op, ast)?,
            Ast::Cond(t, y, n) => Node::Cond(self.boxed(t)?, self.boxed(y)?, self.boxed(n)?),
        })
    }

    fn variable(&self, name: &str, offset: usize) -> Result<Var, CompileError> {
        Ok(match name {
            "mentioned" => Var::Mentioned,
            "content" => Var::Content,
            "author" => Var::Author,
            "response_ms" => Var::ResponseMs,
            "retry_ms" => Var::RetryMs,
            "unread_count" => Var::UnreadCount,
            "interaction_type" => Var::InteractionType,
            "present" => Var::Present,
            "name" => Var::Name,
            "self" => Var::SelfObj,
            "time" => Var::Time,
            "drives" => Var::Drives,
            "NaN" => Var::NaN,
            "Infinity" => Var::Infinity,
            "random" | "roll" | "has_fact" => {
                return err(
                    offset,
                    format!("`{name}` is a function: call it, as in `{name}(...)`"),
                );
            }
            _ => {
                return err(
                    offset,
                    format!(
                        "unknown variable `{name}`; the variables are self, time, drives, mentioned, content, \
                         author, response_ms, retry_ms, unread_count, interaction_type, present, name, NaN, Infinity, undefined"
                    ),
                );
            }
        })
    }

    fn member(&mut self, obj: &Ast<'_>, name: &str, offset: usize) -> Result<Node, CompileError> {
        if let Ast::Ident("self", _) = obj {
            if let Some(v) = self.self_facts.get(name) {
                return Ok(fact_node(v));
            }
            if OBJECT_BUILTINS.contains(&name) {
                return err(
                    offset,
                    format!("`self.{name}` is a built-in method, not a fact"),
                );
            }
            return Ok(Node::Undefined);
        }
        if let Ast::Ident("drives", _) = obj
            && let Some(d) = Drive::of(name)
        {
            return Ok(Node::Drive(d));
        }
        if let Ast::Regex { .. } = obj {
            // Regex properties are computed at run time from the compiled literal.
        } else if METHODS.split(", ").any(|m| m == name)
            || (STRING_BUILTINS.contains(&name) && name != "length")
        {
            return err(
                offset,
                format!("`{name}` is a method: call it, as in `.{name}(...)`"),
            );
        }
        Ok(Node::Member(self.boxed(obj)?, name.into()))
    }

    fn one_arg<'a, 'b>(
        &self,
        name: &str,
        args: &'a [Ast<'b>],
        offset: usize,
    ) -> Result<&'a Ast<'b>, CompileError> {
        match args {
            [a] => Ok(a),
            _ => err(offset, format!("`{name}` takes exactly one argument")),
        }
    }

    fn call(
        &mut self,
        callee: &Ast<'_>,
        args: &[Ast<'_>],
        offset: usize,
    ) -> Result<Node, CompileError> {
        match callee {
            Ast::Ident("random", _) => match args {
                [] => Ok(Node::Random),
                [p] => Ok(Node::Chance(self.boxed(p)?)),
                _ => err(offset, "`random` takes no argument, or one probability"),
            },
            Ast::Ident("roll", _) => {
                let a = self.one_arg("roll", args, offset)?;
                if let Ast::Str(notation) = a {
                    // A literal is checked now rather than failing every evaluation.
                    super::dice::parse(notation).map_err(|m| SyntaxError { offset, message: m })?;
                }
                Ok(Node::Roll(self.boxed(a)?))
            }
            Ast::Ident("has_fact", _) => match self.one_arg("has_fact", args, offset)? {
                Ast::Regex {
                    source,
                    flags,
                    offset,
                } => {
                    let re = self.regex(source, flags, *offset)?;
                    let mut in_plain = Some(false);
                    for fact in self.plain.plain {
                        match re.test(fact) {
                            Ok(false) => {}
                            Ok(true) => {
                                in_plain = Some(true);
                                break;
                            }
                            Err(_) => {
                                in_plain = None;
                                break;
                            }
                        }
                    }
                    Ok(Node::HasFactRegex(re, in_plain))
                }
                a => match self.node(a)? {
                    Node::Str(text) => {
                        let lower: Box<str> = text.to_lowercase().into();
                        let in_plain = self.plain.plain_lower.iter().any(|f| f.contains(&*lower));
                        Ok(Node::HasFactText { lower, in_plain })
                    }
                    other => Ok(Node::HasFact(Box::new(other))),
                },
            },
            Ast::Ident(name, at) => err(
                *at,
                format!("`{name}` is not a function; the functions are random, roll and has_fact"),
            ),
            Ast::Member(recv, name, at) => self.method(recv, name, args, *at),
            _ => err(
                offset,
                "only random, roll, has_fact and string methods can be called",
            ),
        }
    }

    fn method(
        &mut self,
        recv: &Ast<'_>,
        name: &str,
        args: &[Ast<'_>],
        offset: usize,
    ) -> Result<Node, CompileError> {
        let one = |m| -> Result<_, CompileError> { Ok(m) };
        match name {
            "match" => {
                let r = match self.one_arg("match", args, offset)? {
                    Ast::Regex {
                        source,
                        flags,
                        offset,
                    } => self.regex(source, flags, *offset)?,
                    Ast::Str(s) => self.regex(s, "", offset)?,
                    _ => {
                        return err(
                            offset,
                            "`match` takes a regex literal like /word/i or a string literal",
                        );
                    }
                };
                Ok(match self.node(recv)? {
                    Node::Var(v @ (Var::Content | Var::Author | Var::Name)) => Node::MatchVar(v, r),
                    other => Node::Match(Box::new(other), r),
                })
            }
            "test" => {
                let Ast::Regex {
                    source,
                    flags,
                    offset: at,
                } = recv
                else {
                    return err(
                        offset,
                        "`test` is called on a regex literal, as in /word/i.test(content)",
                    );
                };
                let r = self.regex(source, flags, *at)?;
                let a = self.one_arg("test", args, offset)?;
                Ok(Node::Test(r, self.boxed(a)?))
            }
            "includes" | "startsWith" | "endsWith" => {
                let m = one(match name {
                    "includes" => Method1::Includes,
                    "startsWith" => Method1::StartsWith,
                    _ => Method1::EndsWith,
                })?;
                let a = self.one_arg(name, args, offset)?;
                Ok(Node::Method1(self.boxed(recv)?, m, self.boxed(a)?))
            }
            "toLowerCase" | "toUpperCase" | "trim" => {
                if !args.is_empty() {
                    return err(offset, format!("`{name}` takes no arguments"));
                }
                let m = match name {
                    "toLowerCase" => Method0::ToLowerCase,
                    "toUpperCase" => Method0::ToUpperCase,
                    _ => Method0::Trim,
                };
                Ok(Node::Method0(self.boxed(recv)?, m))
            }
            _ if STRING_BUILTINS.contains(&name) || NUMBER_BUILTINS.contains(&name) => err(
                offset,
                format!("`{name}` is not available in conditions; the methods are {METHODS}"),
            ),
            _ => err(
                offset,
                format!("`{name}` is not a method; the methods are {METHODS}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(src: &str) -> Result<Node, CompileError> {
        let mut facts = SelfFacts::new();
        facts.insert("fox_tf".into(), FactValue::Num(0.3));
        compile_expression(src, &facts, Facts::default(), &mut NoCache)
    }

    #[test]
    fn a_comparison_with_a_constant_is_one_exact_comparison() {
        let edges = [
            0.0,
            -0.0,
            0.1,
            -0.1,
            1.0,
            60000.0,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for op in [BinOp::Lt, BinOp::Gt, BinOp::Le, BinOp::Ge] {
            for k in edges {
                let rel = Rel::of(op);
                for (rel, flipped) in [(rel, false), (rel.swapped(), true)] {
                    let Some(Node::Greater { sign, bound, .. }) = rel.greater(Num::Random, k)
                    else {
                        // Only `x <= Infinity` and `x >= -Infinity` are left to `Compare`.
                        assert!(
                            rel == Rel::LE && k == f64::INFINITY
                                || rel == Rel::GE && k == f64::NEG_INFINITY,
                            "{op:?} {k}"
                        );
                        continue;
                    };
                    for x in edges.iter().chain(&[k.next_up(), k.next_down()]) {
                        let want = if flipped {
                            Rel::of(op).test(k, *x)
                        } else {
                            Rel::of(op).test(*x, k)
                        };
                        let got = bound < f64::from_bits(x.to_bits() ^ sign);
                        assert_eq!(got, want, "{op:?} flipped {flipped}: x {x}, k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn negative_literals_are_numbers() {
        assert!(matches!(compile("-1").unwrap(), Node::Num(n) if n == -1.0));
        assert!(
            matches!(compile("-(-0)").unwrap(), Node::Num(n) if n == 0.0 && n.is_sign_positive())
        );
        assert!(matches!(compile("-self.fox_tf").unwrap(), Node::Num(n) if n == -0.3));
        assert!(matches!(
            compile("random() < -1").unwrap(),
            Node::Greater { .. }
        ));
        assert!(matches!(compile("-content").unwrap(), Node::Neg(_)));
    }

    #[test]
    fn self_facts_are_resolved_at_compile_time() {
        assert!(matches!(compile("self.fox_tf").unwrap(), Node::Num(n) if n == 0.3));
        assert!(matches!(compile("self.missing").unwrap(), Node::Undefined));
        assert!(compile("self.toString").is_err());
    }

    #[test]
    fn drives_members_are_resolved_at_compile_time() {
        assert!(matches!(
            compile("drives.energy").unwrap(),
            Node::Drive(Drive::Energy)
        ));
        assert!(matches!(
            compile("drives.mode").unwrap(),
            Node::Drive(Drive::Mode)
        ));
        // A numeric member compared with a constant is one comparison, like `response_ms`.
        assert!(matches!(
            compile("drives.energy < 0.3").unwrap(),
            Node::Greater {
                x: Num::Drive(Drive::Energy),
                ..
            }
        ));
        assert!(matches!(
            compile("drives.social_debt >= drives.pressure").unwrap(),
            Node::Compare {
                left: Num::Drive(Drive::SocialDebt),
                right: Num::Drive(Drive::Pressure),
                ..
            }
        ));
        // `asleep` and `mode` are not numbers: compared as values.
        assert!(matches!(
            compile("drives.asleep < 1").unwrap(),
            Node::Bin(..)
        ));
        // Any other member is read at run time (and is undefined).
        assert!(matches!(
            compile("drives.hunger").unwrap(),
            Node::Member(..)
        ));
        let e = compile("drive").unwrap_err();
        assert!(e.message.contains("drives"), "{}", e.message);
    }

    #[test]
    fn calls_are_checked_against_the_allow_list() {
        for (src, says) in [
            ("foo()", "not a function"),
            ("content.slice(1)", "not available"),
            ("content.frobnicate()", "not a method"),
            ("random", "call it"),
            ("content.match", "is a method"),
            ("content.match(author)", "regex literal"),
            ("x", "unknown variable"),
            ("random(1, 2)", "probability"),
            ("roll()", "exactly one"),
            ("content.trim(1)", "no arguments"),
            ("content.test(/a/)", "regex literal"),
            ("content.match(/(?=a)/)", "in the regex"),
        ] {
            let e = compile(src).unwrap_err();
            assert!(e.message.contains(says), "{src}: {}", e.message);
        }
        assert!(
            compile("content.match(/a/i) && /b/.test(author) && present.includes(name)").is_ok()
        );
    }
}
