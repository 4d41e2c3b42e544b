//! Tokens of the expression language, read on demand so that a `$if` line's condition can
//! end at its `:` and leave the rest of the line (the action) untouched.

use super::number::parse_literal;

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok<'s> {
    Num(f64),
    Str(String),
    Ident(&'s str),
    Regex {
        source: &'s str,
        flags: &'s str,
    },
    Punct(P),
    /// Something JavaScript has that the fact language does not (`=`, `++`, `{`, a template
    /// literal...): the parser names it in its error.
    Unsupported(&'s str),
    Eof,
}

/// Punctuators of the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P {
    LParen,
    RParen,
    LBracket,
    RBracket,
    Dot,
    Comma,
    Question,
    Colon,
    Nullish,
    Not,
    Minus,
    Plus,
    Star,
    Slash,
    Percent,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    StrictEq,
    StrictNe,
    And,
    Or,
}

/// A lexing error at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LexError {
    pub offset: usize,
    pub message: String,
}

pub(crate) struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    regex_allowed: bool,
}

/// Characters in JavaScript's ID_Start but not in XID_Start (what `unicode-ident` tables).
const ID_START_NOT_XID: &[char] = &[
    '\u{37A}', '\u{E33}', '\u{EB3}', '\u{309B}', '\u{309C}', '\u{FC5E}', '\u{FC5F}', '\u{FC60}',
    '\u{FC61}', '\u{FC62}', '\u{FC63}', '\u{FDFA}', '\u{FDFB}', '\u{FE70}', '\u{FE72}', '\u{FE74}',
    '\u{FE76}', '\u{FE78}', '\u{FE7A}', '\u{FE7C}', '\u{FE7E}', '\u{FF9E}', '\u{FF9F}',
];

/// IdentifierStart: `$`, `_` and Unicode ID_Start.
fn ident_start(c: char) -> bool {
    c == '$' || c == '_' || unicode_ident::is_xid_start(c) || ID_START_NOT_XID.contains(&c)
}

/// IdentifierPart: IdentifierStart, Unicode ID_Continue, ZWNJ and ZWJ.
fn ident_continue(c: char) -> bool {
    ident_start(c) || unicode_ident::is_xid_continue(c) || c == '\u{200C}' || c == '\u{200D}'
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Lexer<'s> {
        Lexer {
            src,
            pos: 0,
            regex_allowed: true,
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_char_at(&self, n: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(n)
    }

    fn err<T>(&self, offset: usize, message: impl Into<String>) -> Result<T, LexError> {
        Err(LexError {
            offset,
            message: message.into(),
        })
    }

    /// The next token and its starting byte offset.
    pub fn next(&mut self) -> Result<(usize, Tok<'s>), LexError> {
        while let Some(c) = self.peek_char() {
            if super::number::is_js_space(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        let start = self.pos;
        let Some(c) = self.peek_char() else {
            return Ok((start, Tok::Eof));
        };
        let tok = if c.is_ascii_digit()
            || (c == '.' && self.peek_char_at(1).is_some_and(|d| d.is_ascii_digit()))
        {
            self.number()?
        } else if c == '"' || c == '\'' {
            self.string(c)?
        } else if ident_start(c) {
            let mut end = self.pos;
            for ch in self.src[self.pos..].chars() {
                if !ident_continue(ch) {
                    break;
                }
                end += ch.len_utf8();
            }
            if self.src[end..].starts_with('\\') {
                return self.err(end, "escapes in identifiers are not allowed");
            }
            let ident = &self.src[self.pos..end];
            self.pos = end;
            Tok::Ident(ident)
        } else if c == '/' && self.src[self.pos..].starts_with("//")
            || self.src[self.pos..].starts_with("/*")
        {
            return self.err(start, "comments are not allowed in conditions");
        } else if c == '/' && self.regex_allowed {
            self.regex()?
        } else {
            self.punct()?
        };
        self.regex_allowed = !matches!(
            tok,
            Tok::Num(_)
                | Tok::Str(_)
                | Tok::Ident(_)
                | Tok::Regex { .. }
                | Tok::Punct(P::RParen | P::RBracket)
        );
        Ok((start, tok))
    }

    fn number(&mut self) -> Result<Tok<'s>, LexError> {
        let start = self.pos;
        let b = self.src.as_bytes();
        let mut i = self.pos;
        let radix =
            b.len() > i + 1 && b[i] == b'0' && matches!(b[i + 1] | 0x20, b'x' | b'o' | b'b');
        if radix {
            i += 2;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'.' {
                i += 1;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                    i += 1;
                }
            }
            if i < b.len() && (b[i] | 0x20) == b'e' {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                        i += 1;
                    }
                }
            }
            if i < b.len() && b[i] == b'n' {
                i += 1;
            }
        }
        let text = &self.src[start..i];
        self.pos = i;
        if self
            .peek_char()
            .is_some_and(|c| ident_start(c) || c.is_ascii_digit())
        {
            return self.err(
                i,
                format!("unexpected character right after the number {text}"),
            );
        }
        match parse_literal(text) {
            Ok(v) => Ok(Tok::Num(v)),
            Err(m) => self.err(start, m),
        }
    }

    fn hex(&self, at: usize, digits: &str, what: &str) -> Result<u32, LexError> {
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return self.err(at, format!("malformed {what} escape"));
        }
        u32::from_str_radix(digits, 16)
            .or_else(|_| self.err(at, format!("malformed {what} escape")))
    }

    fn string(&mut self, quote: char) -> Result<Tok<'s>, LexError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek_char() else {
                return self.err(start, "unterminated string");
            };
            let at = self.pos;
            self.pos += c.len_utf8();
            match c {
                c if c == quote => return Ok(Tok::Str(out)),
                '\n' | '\r' => return self.err(at, "unterminated string"),
                '\\' => {
                    let Some(e) = self.peek_char() else {
                        return self.err(start, "unterminated string");
                    };
                    self.pos += e.len_utf8();
                    match e {
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'v' => out.push('\u{b}'),
                        '0' if !self.peek_char().is_some_and(|d| d.is_ascii_digit()) => {
                            out.push('\0')
                        }
                        '0'..='9' => return self.err(at, "octal escapes like \\1 are not allowed"),
                        'x' => {
                            let digits = self.src.get(self.pos..self.pos + 2).unwrap_or("");
                            let v = self.hex(at, digits, "\\x")?;
                            self.pos += 2;
                            out.push(char::from_u32(v).expect("two hex digits are a char"));
                        }
                        'u' => {
                            let v = if self.peek_char() == Some('{') {
                                let close = self.src[self.pos..].find('}').ok_or(LexError {
                                    offset: at,
                                    message: "malformed \\u{...} escape".into(),
                                })?;
                                let digits = &self.src[self.pos + 1..self.pos + close];
                                let v = self.hex(at, digits, "\\u{...}")?;
                                self.pos += close + 1;
                                if v > 0x10FFFF {
                                    return self.err(at, "\\u{...} escape beyond U+10FFFF");
                                }
                                v
                            } else {
                                let digits = self.src.get(self.pos..self.pos + 4).unwrap_or("");
                                let v = self.hex(at, digits, "\\u")?;
                                self.pos += 4;
                                if (0xD800..0xDC00).contains(&v)
                                    && self.src[self.pos..].starts_with("\\u")
                                {
                                    let digits =
                                        self.src.get(self.pos + 2..self.pos + 6).unwrap_or("");
                                    let lo = self.hex(at, digits, "\\u")?;
                                    if (0xDC00..0xE000).contains(&lo) {
                                        self.pos += 6;
                                        0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)
                                    } else {
                                        v
                                    }
                                } else {
                                    v
                                }
                            };
                            match char::from_u32(v) {
                                Some(ch) => out.push(ch),
                                None => {
                                    return self
                                        .err(at, "lone surrogates in strings are not supported");
                                }
                            }
                        }
                        '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                            return self.err(at, "line continuations are not allowed");
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn regex(&mut self) -> Result<Tok<'s>, LexError> {
        let start = self.pos;
        self.pos += 1;
        let body_start = self.pos;
        let mut in_class = false;
        loop {
            let Some(c) = self.peek_char() else {
                return self.err(start, "unterminated regex literal");
            };
            match c {
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => {
                    return self.err(start, "unterminated regex literal");
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek_char() {
                        None | Some('\n' | '\r' | '\u{2028}' | '\u{2029}') => {
                            return self.err(start, "unterminated regex literal");
                        }
                        Some(e) => self.pos += e.len_utf8(),
                    }
                    continue;
                }
                '[' => in_class = true,
                ']' => in_class = false,
                '/' if !in_class => break,
                _ => {}
            }
            self.pos += c.len_utf8();
        }
        let source = &self.src[body_start..self.pos];
        self.pos += 1;
        let flags_start = self.pos;
        while self.peek_char().is_some_and(ident_continue) {
            self.pos += self.peek_char().map_or(0, char::len_utf8);
        }
        Ok(Tok::Regex {
            source,
            flags: &self.src[flags_start..self.pos],
        })
    }

    fn punct(&mut self) -> Result<Tok<'s>, LexError> {
        const TABLE: &[(&str, Option<P>)] = &[
            (">>>=", None),
            ("===", Some(P::StrictEq)),
            ("!==", Some(P::StrictNe)),
            ("**=", None),
            ("<<=", None),
            (">>=", None),
            (">>>", None),
            ("...", None),
            ("&&=", None),
            ("||=", None),
            ("??=", None),
            ("=>", None),
            ("==", Some(P::Eq)),
            ("!=", Some(P::Ne)),
            ("<=", Some(P::Le)),
            (">=", Some(P::Ge)),
            ("&&", Some(P::And)),
            ("||", Some(P::Or)),
            ("??", Some(P::Nullish)),
            ("?.", None),
            ("**", None),
            ("++", None),
            ("--", None),
            ("+=", None),
            ("-=", None),
            ("*=", None),
            ("/=", None),
            ("%=", None),
            ("&=", None),
            ("|=", None),
            ("^=", None),
            ("<<", None),
            (">>", None),
            ("(", Some(P::LParen)),
            (")", Some(P::RParen)),
            ("[", Some(P::LBracket)),
            ("]", Some(P::RBracket)),
            (".", Some(P::Dot)),
            (",", Some(P::Comma)),
            ("?", Some(P::Question)),
            (":", Some(P::Colon)),
            ("!", Some(P::Not)),
            ("-", Some(P::Minus)),
            ("+", Some(P::Plus)),
            ("*", Some(P::Star)),
            ("/", Some(P::Slash)),
            ("%", Some(P::Percent)),
            ("<", Some(P::Lt)),
            (">", Some(P::Gt)),
            ("=", None),
            ("&", None),
            ("|", None),
            ("^", None),
            ("~", None),
            ("{", None),
            ("}", None),
            (";", None),
            ("`", None),
            ("#", None),
            ("@", None),
        ];
        let rest = &self.src[self.pos..];
        // `?.5` is `? .5`, not optional chaining.
        if rest.starts_with("?.") && rest[2..].starts_with(|c: char| c.is_ascii_digit()) {
            self.pos += 1;
            return Ok(Tok::Punct(P::Question));
        }
        let bytes = rest.as_bytes();
        // Longest first. Tokens are 1 to 4 bytes: compare them inline (a call to memcmp
        // per entry would cost more than the comparison).
        let starts = |t: &[u8]| bytes.len() >= t.len() && t.iter().zip(bytes).all(|(a, b)| a == b);
        for (text, p) in TABLE {
            if text.as_bytes()[0] == bytes[0] && starts(text.as_bytes()) {
                self.pos += text.len();
                return Ok(match p {
                    Some(p) => Tok::Punct(*p),
                    None => Tok::Unsupported(&self.src[self.pos - text.len()..self.pos]),
                });
            }
        }
        let c = rest.chars().next().expect("not at the end");
        self.err(self.pos, format!("unexpected character {c:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        let mut l = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            match l.next().unwrap().1 {
                Tok::Eof => return out,
                t => out.push(t),
            }
        }
    }

    #[test]
    fn regex_versus_division() {
        assert_eq!(
            toks("a / b / c"),
            vec![
                Tok::Ident("a"),
                Tok::Punct(P::Slash),
                Tok::Ident("b"),
                Tok::Punct(P::Slash),
                Tok::Ident("c")
            ]
        );
        assert_eq!(
            toks("x.match(/a[/]b/i)")[4],
            Tok::Regex {
                source: "a[/]b",
                flags: "i"
            }
        );
        assert_eq!(toks("(1) / 2")[3], Tok::Punct(P::Slash));
    }

    #[test]
    fn strings_and_numbers() {
        assert_eq!(
            toks(r#"'it\'s' "\u{1F600}\x41\uD83D\uDE00""#),
            vec![Tok::Str("it's".into()), Tok::Str("😀A😀".into())]
        );
        assert_eq!(
            toks("0x10 .5 1e3"),
            vec![Tok::Num(16.0), Tok::Num(0.5), Tok::Num(1000.0)]
        );
        assert!(Lexer::new("3in").next().is_err());
        assert!(Lexer::new("'\\1'").next().is_err());
        assert!(Lexer::new("'open").next().is_err());
    }

    #[test]
    fn unsupported_operators_are_tokens_the_parser_names() {
        assert_eq!(toks("a = 1")[1], Tok::Unsupported("="));
        assert_eq!(toks("a?.b")[1], Tok::Unsupported("?."));
        assert_eq!(toks("a?.5:1")[1], Tok::Punct(P::Question));
    }
}
