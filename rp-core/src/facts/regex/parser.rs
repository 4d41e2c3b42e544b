//! The parser of JavaScript's regex syntax (ECMAScript 2023: the Annex B grammar without `u`,
//! the strict grammar with it) into the syntax tree, with JavaScript's syntax errors and the
//! errors for the constructs that are refused.

use super::ast::{Assertion, CharSet, Node, Repeat, nullable};
use super::case_fold::{add_unicode_17_partners, close_non_unicode};
use super::sets::{
    LINE_TERMINATORS, Ranges, complement, digit_ranges, normalize, space_ranges, word_ranges,
};
use super::{Flags, MAX_NESTING, MAX_REPEAT, RegexError};

/// An atom inside a class: one character or a class escape's set.
enum ClassAtom {
    Char(u32),
    Set(Ranges),
}

pub(super) struct Parser<'a> {
    src: &'a str,
    /// Code points (with `u`) or UTF-16 code units (without), with their byte offsets.
    units: Vec<(usize, u32)>,
    pos: usize,
    flags: Flags,
    /// Capturing groups in the whole pattern (for `\N`).
    total_groups: usize,
    /// The pattern has named groups (JavaScript's `[N]` grammar parameter).
    named: bool,
    pub(super) next_group: usize,
    pub(super) names: Vec<(String, usize)>,
    depth: usize,
}

fn is_syntax_char(c: u32) -> bool {
    matches!(
        char::from_u32(c),
        Some('^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|')
    )
}

fn hex_value(c: u32) -> Option<u32> {
    char::from_u32(c).and_then(|c| c.to_digit(16))
}

fn is_digit(c: Option<u32>) -> bool {
    matches!(c, Some(0x30..=0x39))
}

fn is_octal(c: Option<u32>) -> bool {
    matches!(c, Some(0x30..=0x37))
}

fn show(c: u32) -> String {
    match char::from_u32(c) {
        Some(c) if !c.is_control() => c.to_string(),
        _ => format!("\\u{{{c:X}}}"),
    }
}

const BS: u32 = '\\' as u32;

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, flags: Flags) -> Parser<'a> {
        let mut units = Vec::with_capacity(src.len());
        for (i, c) in src.char_indices() {
            let c = c as u32;
            if c > 0xFFFF && !flags.unicode {
                let v = c - 0x1_0000;
                units.push((i, 0xD800 + (v >> 10)));
                units.push((i, 0xDC00 + (v & 0x3FF)));
            } else {
                units.push((i, c));
            }
        }
        let (total_groups, named) = prescan(&units);
        Parser {
            src,
            units,
            pos: 0,
            flags,
            total_groups,
            named,
            next_group: 1,
            names: Vec::new(),
            depth: 0,
        }
    }

    fn peek(&self) -> Option<u32> {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> Option<u32> {
        self.units.get(self.pos + k).map(|u| u.1)
    }

    fn is(&self, k: usize, c: char) -> bool {
        self.peek_at(k) == Some(c as u32)
    }

    fn offset_of(&self, pos: usize) -> usize {
        self.units.get(pos).map_or(self.src.len(), |u| u.0)
    }

    fn err<T>(&self, pos: usize, message: impl Into<String>) -> Result<T, RegexError> {
        Err(RegexError::new(self.offset_of(pos), message))
    }

    fn universe(&self) -> u32 {
        if self.flags.unicode {
            0x10_FFFF
        } else {
            0xFFFF
        }
    }

    pub(super) fn parse(&mut self) -> Result<Node, RegexError> {
        let n = self.disjunction()?;
        if self.pos < self.units.len() {
            // Only `)` stops a disjunction early.
            return self.err(
                self.pos,
                "unmatched `)` in the regex; remove it or escape it as `\\)`",
            );
        }
        Ok(n)
    }

    fn disjunction(&mut self) -> Result<Node, RegexError> {
        let mut branches = vec![self.alternative()?];
        while self.is(0, '|') {
            self.pos += 1;
            branches.push(self.alternative()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn alternative(&mut self) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        loop {
            let start = self.pos;
            let Some(c) = self.peek() else { break };
            let atom = match char::from_u32(c) {
                Some('|' | ')') => break,
                Some('^') => {
                    self.pos += 1;
                    items.push(Node::Assert(Assertion::Start));
                    continue;
                }
                Some('$') => {
                    self.pos += 1;
                    items.push(Node::Assert(Assertion::End));
                    continue;
                }
                Some('\\') if self.is(1, 'b') || self.is(1, 'B') => {
                    let a = if self.is(1, 'b') {
                        Assertion::WordBoundary
                    } else {
                        Assertion::NotWordBoundary
                    };
                    self.pos += 2;
                    items.push(Node::Assert(a));
                    continue;
                }
                Some('(') => self.group()?,
                Some('[') => self.class()?,
                Some('.') => {
                    self.pos += 1;
                    let mut v = if self.flags.dot_all {
                        Vec::new()
                    } else {
                        LINE_TERMINATORS.iter().map(|&c| (c, c)).collect()
                    };
                    v = complement(&normalize(v), self.universe());
                    Node::Set(CharSet::closed(
                        v,
                        self.flags.unicode && self.flags.ignore_case,
                    ))
                }
                Some('*' | '+' | '?') => {
                    return self.err(
                        start,
                        format!(
                            "nothing to repeat before `{}`; escape it as `\\{}` to match it",
                            show(c),
                            show(c)
                        ),
                    );
                }
                Some('{') => {
                    if self.interval(1).is_some() {
                        return self.err(start, "nothing to repeat before the `{…}` quantifier");
                    }
                    if self.flags.unicode {
                        return self.err(
                            start,
                            "lone `{` in a regex with the u flag; escape it as `\\{`",
                        );
                    }
                    self.pos += 1;
                    self.literal(c)
                }
                Some('}' | ']') if self.flags.unicode => {
                    return self.err(
                        start,
                        format!(
                            "lone `{}` in a regex with the u flag; escape it as `\\{}`",
                            show(c),
                            show(c)
                        ),
                    );
                }
                Some('\\') => self.atom_escape()?,
                _ => {
                    self.pos += 1;
                    self.literal(c)
                }
            };
            let atom = self.quantifier(atom, start)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Seq(items),
        })
    }

    /// Parses `{n}`, `{n,}` or `{n,m}` starting `k` units after the current position (which
    /// holds `{`). Returns (min, max, units consumed) with counts saturated.
    fn interval(&self, k: usize) -> Option<(u64, Option<u64>, usize)> {
        let mut i = k;
        let digits = |i: &mut usize| -> Option<u64> {
            let start = *i;
            let mut v: u64 = 0;
            while let Some(d @ 0x30..=0x39) = self.peek_at(*i) {
                v = v.saturating_mul(10).saturating_add(u64::from(d - 0x30));
                *i += 1;
            }
            (*i > start).then_some(v)
        };
        let min = digits(&mut i)?;
        let max = if self.peek_at(i) == Some(',' as u32) {
            i += 1;
            if self.peek_at(i) == Some('}' as u32) {
                None
            } else {
                Some(digits(&mut i)?)
            }
        } else {
            Some(min)
        };
        if self.peek_at(i) != Some('}' as u32) {
            return None;
        }
        Some((min, max, i + 1))
    }

    fn quantifier(&mut self, atom: Node, atom_start: usize) -> Result<Node, RegexError> {
        let qstart = self.pos;
        let (min, max) = match self.peek().and_then(char::from_u32) {
            Some('*') => {
                self.pos += 1;
                (0, None)
            }
            Some('+') => {
                self.pos += 1;
                (1, None)
            }
            Some('?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some('{') => match self.interval(1) {
                Some((min, max, len)) => {
                    if max.is_some_and(|m| m < min) {
                        return self.err(qstart, "numbers out of order in the `{…}` quantifier");
                    }
                    self.pos += len;
                    let too_big = |v: u64| v > u64::from(MAX_REPEAT);
                    if too_big(min) || max.is_some_and(too_big) {
                        return self.err(
                            qstart,
                            format!(
                                "the repetition count is too large (the limit is {MAX_REPEAT})"
                            ),
                        );
                    }
                    (min as u32, max.map(|m| m as u32))
                }
                None if self.flags.unicode => {
                    return self.err(
                        qstart,
                        "incomplete quantifier `{`; escape it as `\\{` to match it",
                    );
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        let greedy = if self.is(0, '?') {
            self.pos += 1;
            false
        } else {
            true
        };
        if max.is_none_or(|m| m > min) && nullable(&atom) {
            let text = self
                .src
                .get(self.offset_of(atom_start)..self.offset_of(self.pos))
                .unwrap_or("");
            return self.err(
                qstart,
                format!(
                    "`{text}` repeats something that can match the empty string; JavaScript skips empty \
                     optional repetitions and backtracks, which rp's regex engine cannot reproduce; \
                     write the repeated part so that it cannot be empty (e.g. `(a+)*` instead of `(a*)*`)"
                ),
            );
        }
        Ok(Node::Repeat(Box::new(Repeat {
            node: atom,
            min,
            max,
            greedy,
        })))
    }

    fn literal(&self, c: u32) -> Node {
        let mut v = vec![(c, c)];
        if self.flags.ignore_case {
            v = if self.flags.unicode {
                add_unicode_17_partners(v)
            } else {
                close_non_unicode(v)
            };
        }
        Node::Set(CharSet::new(v))
    }

    fn group(&mut self) -> Result<Node, RegexError> {
        let start = self.pos;
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err(
                start,
                format!("the regex nests groups too deeply (the limit is {MAX_NESTING})"),
            );
        }
        let mut index = None;
        if self.is(1, '?') {
            match self.peek_at(2).and_then(char::from_u32) {
                Some(':') => self.pos += 3,
                Some('=' | '!') => {
                    return self.err(
                        start,
                        "lookahead `(?=…)` / `(?!…)` is not supported (rp's regex engine has no lookaround); \
                         test the text with a second regex and && or || instead",
                    );
                }
                Some('<') if self.is(3, '=') || self.is(3, '!') => {
                    return self.err(
                        start,
                        "lookbehind `(?<=…)` / `(?<!…)` is not supported (rp's regex engine has no lookaround); \
                         test the text with a second regex and && or || instead",
                    );
                }
                Some('<') => {
                    self.pos += 3;
                    let name = self.group_name()?;
                    if self.names.iter().any(|(n, _)| *n == name) {
                        return self.err(start, format!("duplicate capture group name `{name}`"));
                    }
                    index = Some(self.next_group);
                    self.names.push((name, self.next_group));
                    self.next_group += 1;
                }
                _ => {
                    return self.err(
                        start,
                        "invalid group `(?`; use `(?:…)` for a group, `(?<name>…)` for a named group",
                    );
                }
            }
        } else {
            self.pos += 1;
            index = Some(self.next_group);
            self.next_group += 1;
        }
        let body = self.disjunction()?;
        if !self.is(0, ')') {
            return self.err(start, "unterminated group: `(` without `)`");
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(Node::Group(index, Box::new(body)))
    }

    /// After `(?<`: an ASCII identifier and `>`.
    fn group_name(&mut self) -> Result<String, RegexError> {
        let start = self.pos;
        let mut name = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err(
                    start,
                    "unterminated capture group name: `(?<name>` needs `>`",
                );
            };
            if c == '>' as u32 {
                self.pos += 1;
                break;
            }
            let ok = match char::from_u32(c) {
                Some(ch @ ('a'..='z' | 'A'..='Z' | '_' | '$')) => {
                    name.push(ch);
                    true
                }
                Some(ch @ '0'..='9') if !name.is_empty() => {
                    name.push(ch);
                    true
                }
                _ => false,
            };
            if !ok {
                return self.err(
                    self.pos,
                    "invalid capture group name: rp accepts names made of ASCII letters, digits, `_` and `$` \
                     (not starting with a digit)",
                );
            }
            self.pos += 1;
        }
        if name.is_empty() {
            return self.err(start, "empty capture group name");
        }
        Ok(name)
    }

    /// An escape in atom position (not `\b`, `\B`).
    fn atom_escape(&mut self) -> Result<Node, RegexError> {
        let start = self.pos;
        let Some(c) = self.peek_at(1) else {
            return self.err(
                start,
                "`\\` at the end of the regex; write `\\\\` to match a backslash",
            );
        };
        match char::from_u32(c) {
            Some(d @ '1'..='9') => {
                // A backreference when the number is at most the number of groups.
                let mut i = 1;
                let mut v: u64 = 0;
                while let Some(x @ 0x30..=0x39) = self.peek_at(i) {
                    v = v.saturating_mul(10).saturating_add(u64::from(x - 0x30));
                    i += 1;
                }
                if v <= self.total_groups as u64 {
                    return self.err(
                        start,
                        format!("backreference `\\{v}` is not supported (rp's regex engine has no backreferences)"),
                    );
                }
                if self.flags.unicode {
                    return self.err(start, format!("invalid escape `\\{v}`: there is no group {v}"));
                }
                if d == '8' || d == '9' {
                    self.pos += 2;
                    return Ok(self.literal(c));
                }
                self.pos += 1;
                let v = self.legacy_octal();
                Ok(self.literal(v))
            }
            Some('k') if self.flags.unicode || self.named => self.err(
                start,
                "named backreference `\\k<name>` is not supported (rp's regex engine has no backreferences)",
            ),
            Some('d' | 'D' | 's' | 'S' | 'w' | 'W') => {
                self.pos += 2;
                Ok(Node::Set(CharSet::closed(
                    self.class_escape_set(c),
                    self.flags.unicode && self.flags.ignore_case,
                )))
            }
            _ => {
                let v = self.character_escape(false)?;
                Ok(self.literal(v))
            }
        }
    }

    /// Legacy octal (without `u`), at the first digit: up to `\377`.
    fn legacy_octal(&mut self) -> u32 {
        let mut v = self.peek().map_or(0, |d| d.saturating_sub(0x30));
        self.pos += 1;
        if is_octal(self.peek()) {
            v = v * 8 + self.peek().map_or(0, |d| d.saturating_sub(0x30));
            self.pos += 1;
            if v < 32 && is_octal(self.peek()) {
                v = v * 8 + self.peek().map_or(0, |d| d.saturating_sub(0x30));
                self.pos += 1;
            }
        }
        v
    }

    fn class_escape_set(&self, c: u32) -> Ranges {
        let ui = self.flags.unicode && self.flags.ignore_case;
        let (set, negate) = match char::from_u32(c) {
            Some('d') => (digit_ranges(), false),
            Some('D') => (digit_ranges(), true),
            Some('s') => (space_ranges(), false),
            Some('S') => (space_ranges(), true),
            Some('w') => (normalize(word_ranges(ui)), false),
            _ => (normalize(word_ranges(ui)), true),
        };
        if negate {
            complement(&set, self.universe())
        } else {
            set
        }
    }

    /// A character escape at `\` (the escapes shared by atoms and classes); returns the
    /// character (code unit without `u`). In a class, `\b`, `\-` and `\cN` have been handled.
    fn character_escape(&mut self, in_class: bool) -> Result<u32, RegexError> {
        let start = self.pos;
        let u = self.flags.unicode;
        let Some(c) = self.peek_at(1) else {
            return self.err(
                start,
                "`\\` at the end of the regex; write `\\\\` to match a backslash",
            );
        };
        let simple = |v: u32| Ok::<u32, RegexError>(v);
        let ch = char::from_u32(c);
        let r = match ch {
            Some('f') => simple(0x0C),
            Some('n') => simple(0x0A),
            Some('r') => simple(0x0D),
            Some('t') => simple(0x09),
            Some('v') => simple(0x0B),
            Some('c') => {
                match self.peek_at(2) {
                    Some(l @ (0x41..=0x5A | 0x61..=0x7A)) => {
                        self.pos += 3;
                        return Ok(l % 32);
                    }
                    Some(l @ (0x30..=0x39 | 0x5F)) if in_class && !u => {
                        self.pos += 3;
                        return Ok(l % 32);
                    }
                    _ if u => {
                        return self.err(
                            start,
                            "invalid escape `\\c`: it must be followed by a letter A–Z",
                        );
                    }
                    _ => {
                        // Annex B: the backslash is a literal and `c` is read next.
                        self.pos += 1;
                        return Ok(BS);
                    }
                }
            }
            Some('0') if !is_digit(self.peek_at(2)) => {
                self.pos += 2;
                return Ok(0);
            }
            Some('0'..='7') if !u => {
                self.pos += 1;
                return Ok(self.legacy_octal());
            }
            Some('0'..='9') if u => {
                return self.err(
                    start,
                    "invalid escape: a digit escape is not allowed here with the u flag",
                );
            }
            Some('x') => {
                if let (Some(a), Some(b)) = (
                    self.peek_at(2).and_then(hex_value),
                    self.peek_at(3).and_then(hex_value),
                ) {
                    self.pos += 4;
                    return Ok(a * 16 + b);
                }
                if u {
                    return self.err(
                        start,
                        "invalid escape `\\x`: it must be followed by two hex digits",
                    );
                }
                simple(c)
            }
            Some('u') => {
                if let Some(v) = self.unicode_escape()? {
                    return Ok(v);
                }
                if u {
                    return self.err(
                        start,
                        "invalid Unicode escape: use `\\uHHHH` or `\\u{H…}` with at most 10FFFF",
                    );
                }
                simple(c)
            }
            Some('k') if u || self.named => {
                return self.err(
                    start,
                    "named backreference `\\k<name>` is not supported (rp's regex engine has no backreferences)",
                );
            }
            Some('p' | 'P') if u => {
                return self.err(
                    start,
                    "Unicode property escapes `\\p{…}` / `\\P{…}` are not supported; use an explicit class \
                     such as `[a-zA-Z\\u00C0-\\u024F]`",
                );
            }
            _ if u => {
                if is_syntax_char(c) || c == '/' as u32 || (in_class && c == '-' as u32) {
                    simple(c)
                } else {
                    return self.err(
                        start,
                        format!(
                            "invalid escape `\\{}` in a regex with the u flag: only ^ $ \\ . * + ? ( ) [ ] {{ }} | / \
                             can be escaped",
                            show(c)
                        ),
                    );
                }
            }
            _ => simple(c),
        };
        self.pos += 2;
        r
    }

    /// At `\u`: `\uHHHH` (with `u`, a surrogate pair `\uHHHH\uHHHH` is one code point) or, with
    /// `u`, `\u{H…}`. `None` when the syntax does not match (no characters consumed).
    fn unicode_escape(&mut self) -> Result<Option<u32>, RegexError> {
        let start = self.pos;
        let hex4 = |p: &Self, k: usize| -> Option<u32> {
            let mut v = 0;
            for j in 0..4 {
                v = v * 16 + p.peek_at(k + j).and_then(hex_value)?;
            }
            Some(v)
        };
        if let Some(v) = hex4(self, 2) {
            self.pos += 6;
            if self.flags.unicode
                && (0xD800..0xDC00).contains(&v)
                && self.is(0, '\\')
                && self.is(1, 'u')
                && let Some(t) = hex4(self, 2)
                && (0xDC00..0xE000).contains(&t)
            {
                self.pos += 6;
                return Ok(Some(0x1_0000 + ((v - 0xD800) << 10) + (t - 0xDC00)));
            }
            return Ok(Some(v));
        }
        if self.flags.unicode && self.is(2, '{') {
            let mut i = 3;
            let mut v: u32 = 0;
            while let Some(h) = self.peek_at(i).and_then(hex_value) {
                v = v.saturating_mul(16).saturating_add(h);
                i += 1;
            }
            if i > 3 && self.is(i, '}') {
                if v > 0x10_FFFF {
                    return self.err(
                        start,
                        "invalid Unicode escape: the code point is above 10FFFF",
                    );
                }
                self.pos += i + 1;
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    fn class(&mut self) -> Result<Node, RegexError> {
        let start = self.pos;
        self.pos += 1;
        let negated = if self.is(0, '^') {
            self.pos += 1;
            true
        } else {
            false
        };
        // Characters and ranges, and class escapes.
        let mut v: Ranges = Vec::new();
        let mut escapes: Ranges = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err(start, "unterminated character class: `[` without `]`");
            };
            if c == ']' as u32 {
                self.pos += 1;
                break;
            }
            let first_pos = self.pos;
            let first = self.class_atom()?;
            if self.is(0, '-') && self.peek_at(1).is_some() && !self.is(1, ']') {
                self.pos += 1;
                let second = self.class_atom()?;
                match (first, second) {
                    (ClassAtom::Char(a), ClassAtom::Char(b)) => {
                        if a > b {
                            return self.err(first_pos, "range out of order in character class");
                        }
                        v.push((a, b));
                    }
                    (first, second) => {
                        if self.flags.unicode {
                            return self.err(
                                first_pos,
                                "invalid character class range: a class escape like \\d cannot be a range end \
                                 with the u flag; escape the `-` as `\\-`",
                            );
                        }
                        for a in [first, ClassAtom::Char('-' as u32), second] {
                            match a {
                                ClassAtom::Char(c) => v.push((c, c)),
                                ClassAtom::Set(s) => escapes.extend(s),
                            }
                        }
                    }
                }
            } else {
                match first {
                    ClassAtom::Char(c) => v.push((c, c)),
                    ClassAtom::Set(s) => escapes.extend(s),
                }
            }
        }
        let mut v = normalize(v);
        let f = self.flags;
        let set = if f.unicode && f.ignore_case {
            CharSet {
                ranges: add_unicode_17_partners(v),
                closed: normalize(escapes),
                negated,
            }
        } else {
            if f.ignore_case {
                v = close_non_unicode(v);
            }
            v.extend(escapes);
            v = normalize(v);
            if negated {
                v = complement(&v, self.universe());
            }
            CharSet::new(v)
        };
        Ok(Node::Set(set))
    }

    fn class_atom(&mut self) -> Result<ClassAtom, RegexError> {
        let Some(c) = self.peek() else {
            return self.err(self.pos, "unterminated character class: `[` without `]`");
        };
        if c != BS {
            self.pos += 1;
            return Ok(ClassAtom::Char(c));
        }
        let start = self.pos;
        let Some(e) = self.peek_at(1) else {
            return self.err(
                start,
                "`\\` at the end of the regex; write `\\\\` to match a backslash",
            );
        };
        match char::from_u32(e) {
            Some('b') => {
                self.pos += 2;
                Ok(ClassAtom::Char(0x08))
            }
            Some('-') => {
                self.pos += 2;
                Ok(ClassAtom::Char(e))
            }
            Some('d' | 'D' | 's' | 'S' | 'w' | 'W') => {
                self.pos += 2;
                Ok(ClassAtom::Set(self.class_escape_set(e)))
            }
            Some('8' | '9') if !self.flags.unicode => {
                self.pos += 2;
                Ok(ClassAtom::Char(e))
            }
            Some('B') if self.flags.unicode => {
                self.err(start, "invalid escape `\\B` in a character class")
            }
            _ => Ok(ClassAtom::Char(self.character_escape(true)?)),
        }
    }
}

/// Counts the capturing groups of the whole pattern and whether any is named (as V8 does).
fn prescan(units: &[(usize, u32)]) -> (usize, bool) {
    let at = |i: usize| units.get(i).map(|u| u.1);
    let (mut count, mut named, mut in_class) = (0, false, false);
    let mut i = 0;
    while let Some(c) = at(i) {
        i += 1;
        match char::from_u32(c) {
            Some('\\') => i += 1,
            Some('[') => in_class = true,
            Some(']') => in_class = false,
            Some('(') if !in_class => {
                if at(i) == Some('?' as u32) {
                    if at(i + 1) != Some('<' as u32) || matches!(at(i + 2), Some(0x3D | 0x21)) {
                        continue;
                    }
                    named = true;
                }
                count += 1;
            }
            _ => {}
        }
    }
    (count, named)
}
