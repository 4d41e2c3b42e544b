//! The parser: JavaScript's grammar and precedence for the subset, with an error naming
//! anything outside it.

use super::lexer::{LexError, Lexer, P, Tok};

/// The deepest nesting accepted: parentheses, unary operators, calls and ternaries, and each
/// operator of a chain (`a || b || c` nests twice) count one level. Parsing, compiling and
/// evaluating a condition at this limit needs under 256 KiB of stack in an optimised build
/// and about 1 MiB in a debug build.
pub const MAX_NESTING: usize = 64;

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    StrictEq,
    StrictNe,
}

/// Short-circuit operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogicOp {
    And,
    Or,
    Nullish,
}

/// The syntax tree, with byte offsets for errors.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ast<'s> {
    Num(f64),
    Str(String),
    Bool(bool),
    Null,
    Ident(&'s str, usize),
    Regex {
        source: &'s str,
        flags: &'s str,
        offset: usize,
    },
    Member(Box<Ast<'s>>, &'s str, usize),
    Index(Box<Ast<'s>>, Box<Ast<'s>>),
    Call(Box<Ast<'s>>, Vec<Ast<'s>>, usize),
    Not(Box<Ast<'s>>),
    Neg(Box<Ast<'s>>),
    Binary(BinOp, Box<Ast<'s>>, Box<Ast<'s>>),
    Logic(LogicOp, Box<Ast<'s>>, Box<Ast<'s>>),
    Cond(Box<Ast<'s>>, Box<Ast<'s>>, Box<Ast<'s>>),
    /// Parentheses, kept for the rule that `??` cannot mix with `&&`/`||` without them.
    Paren(Box<Ast<'s>>),
}

/// A syntax error at a byte offset of the expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset into the expression source.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl From<LexError> for SyntaxError {
    fn from(e: LexError) -> Self {
        SyntaxError {
            offset: e.offset,
            message: e.message,
        }
    }
}

enum Op {
    Logic(LogicOp),
    Bin(BinOp),
}

/// The precedence of equality operators (the operands of `??` bind at least this tightly).
const EQUALITY: u8 = 3;

/// Binary operators with their precedence (higher binds tighter), as in JavaScript.
fn binary_op(p: P) -> Option<(u8, Op)> {
    Some(match p {
        P::Or => (1, Op::Logic(LogicOp::Or)),
        P::And => (2, Op::Logic(LogicOp::And)),
        P::Eq => (EQUALITY, Op::Bin(BinOp::Eq)),
        P::Ne => (EQUALITY, Op::Bin(BinOp::Ne)),
        P::StrictEq => (EQUALITY, Op::Bin(BinOp::StrictEq)),
        P::StrictNe => (EQUALITY, Op::Bin(BinOp::StrictNe)),
        P::Lt => (4, Op::Bin(BinOp::Lt)),
        P::Gt => (4, Op::Bin(BinOp::Gt)),
        P::Le => (4, Op::Bin(BinOp::Le)),
        P::Ge => (4, Op::Bin(BinOp::Ge)),
        P::Plus => (5, Op::Bin(BinOp::Add)),
        P::Minus => (5, Op::Bin(BinOp::Sub)),
        P::Star => (6, Op::Bin(BinOp::Mul)),
        P::Slash => (6, Op::Bin(BinOp::Div)),
        P::Percent => (6, Op::Bin(BinOp::Rem)),
        _ => return None,
    })
}

const RESERVED: &[&str] = &[
    "new",
    "function",
    "this",
    "typeof",
    "void",
    "delete",
    "in",
    "instanceof",
    "class",
    "let",
    "var",
    "const",
    "if",
    "else",
    "return",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "break",
    "continue",
    "throw",
    "try",
    "catch",
    "finally",
    "yield",
    "await",
    "async",
    "import",
    "export",
    "super",
    "with",
    "debugger",
    "default",
    "extends",
    "enum",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
];

fn describe_unsupported(text: &str) -> String {
    let what = match text {
        "=" => "assignment (`=`; compare with `==` or `===`)",
        "++" | "--" => "increment and decrement",
        "**" => "exponentiation (`**`)",
        "?." => "optional chaining (`?.`)",
        "&" | "|" | "^" | "~" | "<<" | ">>" | ">>>" => "bitwise operators",
        "=>" => "arrow functions",
        "{" | "}" => "object literals and blocks",
        ";" => "statements (`;`)",
        "`" => "template literals",
        "..." => "spread (`...`)",
        "#" => "private names",
        "@" => "decorators",
        t if t.ends_with('=') => "compound assignment",
        _ => "this operator",
    };
    format!("`{text}` is not allowed: {what} is not part of the condition language")
}

pub(crate) struct Parser<'s> {
    lexer: Lexer<'s>,
    peeked: Option<(usize, Tok<'s>)>,
    depth: usize,
}

impl<'s> Parser<'s> {
    pub fn new(src: &'s str) -> Parser<'s> {
        Parser {
            lexer: Lexer::new(src),
            peeked: None,
            depth: 0,
        }
    }

    fn peek(&mut self) -> Result<&(usize, Tok<'s>), SyntaxError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(self.peeked.as_ref().expect("filled above"))
    }

    fn bump(&mut self) -> Result<(usize, Tok<'s>), SyntaxError> {
        self.peek()?;
        Ok(self.peeked.take().expect("peeked above"))
    }

    fn at(&mut self, p: P) -> Result<bool, SyntaxError> {
        Ok(matches!(self.peek()?.1, Tok::Punct(q) if q == p))
    }

    fn expect(&mut self, p: P, what: &str) -> Result<usize, SyntaxError> {
        let (offset, tok) = self.bump()?;
        match tok {
            Tok::Punct(q) if q == p => Ok(offset),
            other => Err(self.unexpected(offset, &other, what)),
        }
    }

    fn unexpected(&self, offset: usize, tok: &Tok<'s>, expected: &str) -> SyntaxError {
        let message = match tok {
            Tok::Unsupported(t) => describe_unsupported(t),
            Tok::Eof => format!("the condition ends where {expected} was expected"),
            Tok::Ident(w) if *w == "in" || *w == "instanceof" => {
                format!("the `{w}` operator is not allowed")
            }
            Tok::Punct(P::Comma) => "the comma operator is not allowed".into(),
            other => format!("expected {expected}, found {}", show(other)),
        };
        SyntaxError { offset, message }
    }

    fn enter(&mut self, offset: usize) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(SyntaxError {
                offset,
                message: format!("the condition is nested too deeply (limit {MAX_NESTING})"),
            });
        }
        Ok(())
    }

    /// Parses a whole expression: nothing may follow it.
    pub fn expression(mut self) -> Result<Ast<'s>, SyntaxError> {
        let ast = self.cond()?;
        let (offset, tok) = self.bump()?;
        if tok != Tok::Eof {
            return Err(self.unexpected(offset, &tok, "the end of the condition"));
        }
        Ok(ast)
    }

    /// Parses a `$if` condition: an expression followed by `:`. Returns it and the byte offset
    /// just after the colon.
    pub fn condition(mut self) -> Result<(Ast<'s>, usize), SyntaxError> {
        let ast = self.cond()?;
        let (offset, tok) = self.bump()?;
        match tok {
            Tok::Punct(P::Colon) => Ok((ast, offset + 1)),
            other => Err(self.unexpected(offset, &other, "`:` after the condition")),
        }
    }

    fn cond(&mut self) -> Result<Ast<'s>, SyntaxError> {
        let offset = self.peek()?.0;
        self.enter(offset)?;
        let test = self.short_circuit()?;
        let r = if self.at(P::Question)? {
            self.bump()?;
            let yes = self.cond()?;
            self.expect(P::Colon, "`:` of the `? :` operator")?;
            let no = self.cond()?;
            Ast::Cond(Box::new(test), Box::new(yes), Box::new(no))
        } else {
            test
        };
        self.depth -= 1;
        Ok(r)
    }

    /// `||`/`&&` chains, or a `??` chain whose operands contain neither unparenthesised.
    fn short_circuit(&mut self) -> Result<Ast<'s>, SyntaxError> {
        let left = self.binary(1)?;
        if !self.at(P::Nullish)? {
            return Ok(left);
        }
        let mixing = |offset| SyntaxError {
            offset,
            message: "`??` cannot be mixed with `&&` or `||` without parentheses".into(),
        };
        if matches!(left, Ast::Logic(LogicOp::And | LogicOp::Or, ..)) {
            let offset = self.peek()?.0;
            return Err(mixing(offset));
        }
        let mut left = left;
        let mut chain = 0;
        while self.at(P::Nullish)? {
            let (offset, _) = self.bump()?;
            self.enter(offset)?;
            chain += 1;
            let right = self.binary(EQUALITY)?;
            left = Ast::Logic(LogicOp::Nullish, Box::new(left), Box::new(right));
        }
        self.depth -= chain;
        if self.at(P::And)? || self.at(P::Or)? {
            let offset = self.peek()?.0;
            return Err(mixing(offset));
        }
        Ok(left)
    }

    /// Binary operators by precedence climbing: one loop for `||`, `&&`, equality,
    /// relational, additive and multiplicative operators (recursing only to bind tighter
    /// operators, so nesting costs few stack frames).
    fn binary(&mut self, min: u8) -> Result<Ast<'s>, SyntaxError> {
        let mut left = self.unary()?;
        let mut chain = 0;
        loop {
            let op = match &self.peek()?.1 {
                Tok::Punct(p) => binary_op(*p).filter(|(prec, _)| *prec >= min),
                _ => None,
            };
            let Some((prec, op)) = op else {
                self.depth -= chain;
                return Ok(left);
            };
            let (offset, _) = self.bump()?;
            self.enter(offset)?;
            chain += 1;
            let right = self.binary(prec + 1)?;
            left = match op {
                Op::Logic(l) => Ast::Logic(l, Box::new(left), Box::new(right)),
                Op::Bin(b) => Ast::Binary(b, Box::new(left), Box::new(right)),
            };
        }
    }

    fn unary(&mut self) -> Result<Ast<'s>, SyntaxError> {
        let (offset, tok) = self.peek()?.clone();
        match tok {
            Tok::Punct(P::Not | P::Minus) => {
                self.bump()?;
                self.enter(offset)?;
                let operand = self.unary()?;
                self.depth -= 1;
                Ok(if tok == Tok::Punct(P::Not) {
                    Ast::Not(Box::new(operand))
                } else {
                    Ast::Neg(Box::new(operand))
                })
            }
            Tok::Punct(P::Plus) => Err(SyntaxError {
                offset,
                message: "unary `+` is not allowed (numbers convert on their own in `<`, `-`, `*`)"
                    .into(),
            }),
            _ => self.postfix(),
        }
    }

    fn postfix(&mut self) -> Result<Ast<'s>, SyntaxError> {
        let mut e = self.primary()?;
        let mut chain = 0;
        loop {
            let (offset, tok) = self.peek()?.clone();
            if matches!(tok, Tok::Punct(P::Dot | P::LBracket | P::LParen)) {
                self.enter(offset)?;
                chain += 1;
            }
            match tok {
                Tok::Punct(P::Dot) => {
                    self.bump()?;
                    let (at, name) = self.bump()?;
                    match name {
                        Tok::Ident(n) => e = Ast::Member(Box::new(e), n, at),
                        other => {
                            return Err(self.unexpected(at, &other, "a property name after `.`"));
                        }
                    }
                }
                Tok::Punct(P::LBracket) => {
                    self.bump()?;
                    let key = self.cond()?;
                    self.expect(P::RBracket, "`]`")?;
                    e = Ast::Index(Box::new(e), Box::new(key));
                }
                Tok::Punct(P::LParen) => {
                    self.bump()?;
                    let mut args = Vec::new();
                    if !self.at(P::RParen)? {
                        loop {
                            args.push(self.cond()?);
                            if self.at(P::Comma)? {
                                self.bump()?;
                                if self.at(P::RParen)? {
                                    break;
                                }
                            } else {
                                break;
                            }
                        }
                    }
                    self.expect(P::RParen, "`)` or `,` in the argument list")?;
                    e = Ast::Call(Box::new(e), args, offset);
                }
                _ => {
                    self.depth -= chain;
                    return Ok(e);
                }
            }
        }
    }

    fn primary(&mut self) -> Result<Ast<'s>, SyntaxError> {
        let (offset, tok) = self.bump()?;
        match tok {
            Tok::Num(n) => Ok(Ast::Num(n)),
            Tok::Str(s) => Ok(Ast::Str(s)),
            Tok::Regex { source, flags } => Ok(Ast::Regex {
                source,
                flags,
                offset,
            }),
            Tok::Ident("true") => Ok(Ast::Bool(true)),
            Tok::Ident("false") => Ok(Ast::Bool(false)),
            Tok::Ident("null") => Ok(Ast::Null),
            Tok::Ident(w) if RESERVED.contains(&w) => Err(SyntaxError {
                offset,
                message: format!("`{w}` is not allowed in conditions"),
            }),
            Tok::Ident(w) => Ok(Ast::Ident(w, offset)),
            Tok::Punct(P::LParen) => {
                let inner = self.cond()?;
                self.expect(P::RParen, "`)`")?;
                Ok(Ast::Paren(Box::new(inner)))
            }
            Tok::Punct(P::LBracket) => Err(SyntaxError {
                offset,
                message: "array literals are not allowed".into(),
            }),
            other => Err(self.unexpected(offset, &other, "a value")),
        }
    }
}

fn show(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Num(n) => format!("the number {n}"),
        Tok::Str(s) => format!("the string {s:?}"),
        Tok::Ident(i) => format!("`{i}`"),
        Tok::Regex { source, flags } => format!("the regex /{source}/{flags}"),
        Tok::Punct(p) => format!("`{}`", punct_text(*p)),
        Tok::Unsupported(t) => format!("`{t}`"),
        Tok::Eof => "the end of the condition".into(),
    }
}

fn punct_text(p: P) -> &'static str {
    match p {
        P::LParen => "(",
        P::RParen => ")",
        P::LBracket => "[",
        P::RBracket => "]",
        P::Dot => ".",
        P::Comma => ",",
        P::Question => "?",
        P::Colon => ":",
        P::Nullish => "??",
        P::Not => "!",
        P::Minus => "-",
        P::Plus => "+",
        P::Star => "*",
        P::Slash => "/",
        P::Percent => "%",
        P::Lt => "<",
        P::Gt => ">",
        P::Le => "<=",
        P::Ge => ">=",
        P::Eq => "==",
        P::Ne => "!=",
        P::StrictEq => "===",
        P::StrictNe => "!==",
        P::And => "&&",
        P::Or => "||",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Ast<'_>, SyntaxError> {
        Parser::new(s).expression()
    }

    #[test]
    fn precedence_follows_javascript() {
        let a = parse("1 + 2 * 3 < 4 == !x && y || z").unwrap();
        let Ast::Logic(LogicOp::Or, l, _) = a else {
            panic!("{a:?}")
        };
        let Ast::Logic(LogicOp::And, eq, _) = *l else {
            panic!()
        };
        let Ast::Binary(BinOp::Eq, lt, _) = *eq else {
            panic!()
        };
        let Ast::Binary(BinOp::Lt, sum, _) = *lt else {
            panic!()
        };
        assert!(matches!(*sum, Ast::Binary(BinOp::Add, _, _)));
        // Ternaries nest to the right.
        let t = parse("a ? b : c ? d : e").unwrap();
        let Ast::Cond(_, _, no) = t else { panic!() };
        assert!(matches!(*no, Ast::Cond(..)));
    }

    #[test]
    fn nullish_cannot_mix_without_parentheses() {
        assert!(parse("a ?? b || c").is_err());
        assert!(parse("a || b ?? c").is_err());
        assert!(parse("a && b ?? c").is_err());
        assert!(parse("(a || b) ?? c").is_ok());
        assert!(parse("a ?? (b && c)").is_ok());
        assert!(parse("a ?? b ?? c").is_ok());
    }

    #[test]
    fn conditions_end_at_their_colon() {
        let src = "mentioned && x ? 1 : 2: she's tall: really";
        let (_, end) = Parser::new(src).condition().unwrap();
        assert_eq!(&src[end..], " she's tall: really");
    }

    #[test]
    fn outside_the_subset_is_named() {
        for (src, says) in [
            ("a = 1", "assignment"),
            ("a++", "increment"),
            ("new Date()", "`new`"),
            ("a in b", "`in`"),
            ("x => 1", "arrow"),
            ("a, b", "comma"),
            ("+a", "unary `+`"),
            ("2 ** 3", "exponentiation"),
            ("a?.b", "optional chaining"),
            ("[1, 2]", "array literals"),
            ("{}", "object literals"),
            ("a & b", "bitwise"),
            ("`x`", "template"),
            ("typeof a", "`typeof`"),
        ] {
            let e = parse(src).unwrap_err();
            assert!(e.message.contains(says), "{src}: {}", e.message);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(
            parse(&deep)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
        let nots = format!("{}x", "!".repeat(100_000));
        assert!(
            parse(&nots)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
        let chain = vec!["1"; 50_000].join(" + ");
        assert!(
            parse(&chain)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
        let members = format!("a{}", ".b".repeat(50_000));
        assert!(
            parse(&members)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
        assert!(parse(&vec!["x"; 60].join(" || ")).is_ok());
    }

    #[test]
    fn the_deepest_accepted_condition_fits_a_small_stack() {
        // Parsing at the nesting limit must fit well inside the thread stacks hosts use:
        // 256 KiB optimised; debug builds have far larger frames.
        let nested = format!(
            "{}content{}",
            "(".repeat(MAX_NESTING - 1),
            ")".repeat(MAX_NESTING - 1)
        );
        let nots = format!("{}mentioned", "!".repeat(MAX_NESTING - 1));
        let chain = vec!["content"; MAX_NESTING - 1].join(" + ");
        let mixed = format!(
            "{}1{}",
            "(-".repeat(MAX_NESTING / 2 - 1),
            ")".repeat(MAX_NESTING / 2 - 1)
        );
        std::thread::Builder::new()
            .stack_size(if cfg!(debug_assertions) { 1536 } else { 256 } * 1024)
            .spawn(move || {
                for src in [nested, nots, chain, mixed] {
                    let ctx = crate::facts::Context::default();
                    let mut draws = crate::facts::SeededDraws::new(1, 0);
                    let r = crate::facts::evaluate_to_string(
                        &src,
                        &Default::default(),
                        &ctx,
                        &mut draws,
                    );
                    assert!(matches!(r, Ok(Ok(_))), "{}: {r:?}", &src[..20]);
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
