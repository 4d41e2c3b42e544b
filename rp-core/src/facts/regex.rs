//! JavaScript regular expressions (the `/source/flags` literals of the fact language), matched
//! by the linear-time `regex` crate with JavaScript's semantics.
//!
//! [`JsRegex::compile`] parses the pattern with the ECMAScript 2023 grammar (the Annex B
//! grammar without the `u` flag, the strict grammar with it), builds a small syntax tree and
//! translates it into the `regex` crate's syntax itself: every character set is emitted as an
//! explicit list of ranges, every anchor as an explicit crate assertion, so nothing depends on
//! the two syntaxes happening to coincide. A regex is compiled once and can then be matched any
//! number of times ([`JsRegex::exec`], [`JsRegex::find_all`], [`JsRegex::test`]).
//!
//! # What is exact, what is refused, and what fails at run time
//!
//! The rule is: exact when possible, otherwise a compile error, otherwise (for the few cases
//! that depend on the subject) a runtime error. A successful answer is always JavaScript's
//! answer; the reference is node 20 (V8 11.3, Unicode 17), checked by the differential test
//! `rp-core/tests/regex_vs_node.rs`.
//!
//! ## Exact
//!
//! - Literals and every escape: `\n \t \r \f \v \0 \xHH \uHHHH \cX`, surrogate pairs
//!   `\uD83D\uDE00` and `\u{H…}` with `u`; without `u` the Annex B forms: legacy octal (`\1`
//!   when there is no group 1, `\377`), identity escapes (`\k`, `\p`, `\8`, `\a` are the
//!   letters), `\c` without a letter as a backslash, a lone `]`, `{` or `}` as a literal
//!   (`/a{,2}/`, `/\u{2}/` is `uu`). With `u` only syntax characters and `/` may be escaped.
//! - `.` (anything but `\n \r \u2028 \u2029`, or anything with `s`); classes, negated classes,
//!   ranges, `[\b]`, and without `u` the Annex B classes `[\w-z]` and `[\c1]`.
//! - `\d \w \s \D \W \S` with JavaScript's sets: ASCII digits, ASCII word characters, and
//!   JavaScript's whitespace and line terminators (including U+FEFF), never the crate's Unicode
//!   classes; with `u` and `i`, `\w` also contains `ſ` (U+017F) and `K` (U+212A), which fold to
//!   ASCII letters, as in JavaScript.
//! - `\b \B` with those word characters (`ſ`/`K` under `iu` are matched as `s`/`k`, which case
//!   folding cannot tell apart, so that `\b` sees them as word characters).
//! - `^ $` without `m` (start and end of the text only) and with `m`, where JavaScript's four
//!   line terminators each end a line (`^` also matches between `\r` and `\n`): the subject's
//!   `\r`, U+2028 and U+2029 are given to the crate as `\n` when every character set of the
//!   pattern contains all four terminators or none.
//! - Groups, named groups, alternation, greedy and lazy quantifiers, with JavaScript's
//!   leftmost, priority-ordered ("backtracking") match, which the crate's leftmost-first
//!   semantics reproduces.
//! - Captures inside repetitions: JavaScript clears them at every iteration, so
//!   `/(?:(a)|b)+/` on `"ab"` leaves group 1 undefined where the crate reports `"a"`. Each
//!   repetition that contains groups gets a hidden group capturing its last iteration, and a
//!   group outside its repetition's last iteration is reported as undefined.
//! - Case-insensitive matching. Without `u`, JavaScript canonicalizes with `toUpperCase` (a
//!   character whose uppercase is not one code unit, or a non-ASCII one whose uppercase is ASCII
//!   such as `ſ` and the Kelvin sign, stays itself): the equivalence classes are computed from
//!   the standard library's Unicode 17 tables and every literal and class is expanded into them,
//!   without the crate's case folding. With `u`, JavaScript uses simple case folding, which is
//!   the crate's `(?i)` (Unicode 16 tables) plus the case pairs Unicode 17 added, which are
//!   expanded explicitly. Every character with a case mapping is checked against node.
//! - Characters outside the BMP. With `u` the pattern and the subject are sequences of code
//!   points, as in the crate. Without `u` JavaScript works on UTF-16 code units: an astral
//!   character in the pattern is two code units (`/😀+/` repeats only the low surrogate,
//!   `/[😀]/` is a class of two surrogates, `/[😀-😂]/` is a syntax error), and `.`, a negated
//!   class, a surrogate escape or `\B` can match or stop between the two halves of an astral
//!   character of the subject. When the pattern can tell, it is matched against a copy of the
//!   subject in which each astral character is two private-use characters standing for its
//!   surrogates, so `test` is always exact.
//! - Empty matches in [`JsRegex::find_all`] advance by one code point with `u` and by one code
//!   unit without, as `String.prototype.match` does. An empty match between the two halves of an
//!   astral character (which JavaScript reports, without `u`, and with `u` for `\B`, a V8
//!   quirk) is reported as an empty range at the start of that character: its text, `""`, is
//!   what JavaScript's `match` returns.
//! - Backtracking blow-ups do not exist: the crate matches in linear time (`(a+)+$` on 30 `a`s
//!   and a `b` is answered in microseconds).
//!
//! ## Compile errors
//!
//! Each message names the construct and how to avoid it:
//! - backreferences `\1` and `\k<name>`, lookahead `(?=` `(?!`, lookbehind `(?<=` `(?<!`,
//!   Unicode property escapes `\p{…}` with `u` (the crate has none of them, or not with
//!   JavaScript's exact meaning);
//! - the flags `y`, `d` and `v` (and, as in JavaScript, unknown or repeated flags);
//! - group names that are not ASCII identifiers (JavaScript allows any Unicode identifier);
//! - a repetition whose body can match the empty string and that has optional iterations, like
//!   `(a*)*`, `(a|)+`, `(?:b?)?`, `(x?){0,2}`: JavaScript rejects an empty optional iteration and
//!   backtracks into the body for a longer one (`/(?:|a)*/` matches `"aa"` entirely), which the
//!   crate does not; the fix is to make the repeated part non-empty (`(a+)*`);
//! - limits: a source longer than [`MAX_SOURCE_LEN`] bytes, groups nested deeper than
//!   [`MAX_NESTING`], a repetition count above [`MAX_REPEAT`], a compiled size above
//!   [`SIZE_LIMIT`] bytes;
//! - and every JavaScript syntax error.
//!
//! ## Runtime errors
//!
//! The caller turns these into a traced runtime error (the condition is false):
//! - a match or a capture that begins or ends between the two halves of an astral character
//!   (JavaScript would return half a surrogate pair, which a Rust string cannot hold): without
//!   `u` (`/./` on `"😀"`), and with `u` an `exec` whose answer is V8's empty `\B` match inside
//!   an astral character;
//! - with `m`, `^` or `$`, and a pattern whose character sets treat the line terminators
//!   differently (`/^\n/m`), a subject containing `\r`, U+2028 or U+2029;
//! - in a repetition, a capture that is empty exactly at the start of the last iteration when the
//!   pattern allows it to be empty both at the start and at the end of an iteration (it cannot
//!   be told whether it belongs to the last iteration); a group that every path of the
//!   repeated part goes through never needs this.

// The parts live in `regex/`. The paths are spelled out because `tests/regex_vs_node.rs`
// includes this file with `#[path]`, where a plain `mod x;` would be looked up next to it.
#[path = "regex/ast.rs"]
mod ast;
#[path = "regex/case_fold.rs"]
mod case_fold;
#[path = "regex/emit.rs"]
mod emit;
#[path = "regex/flags.rs"]
mod flags;
#[path = "regex/literals.rs"]
mod literals;
#[path = "regex/parser.rs"]
mod parser;
#[path = "regex/sets.rs"]
mod sets;
#[cfg(test)]
#[path = "regex/tests.rs"]
mod tests;

pub use flags::Flags;

use ast::{mid_nullable, nullable};
use emit::{Emitter, Place};
use literals::Literals;
use parser::Parser;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// Longest accepted pattern source, in bytes.
pub const MAX_SOURCE_LEN: usize = 32 * 1024;
/// Deepest accepted nesting of groups.
pub const MAX_NESTING: usize = 50;
/// Largest accepted repetition count in `{n}`, `{n,}`, `{n,m}`.
pub const MAX_REPEAT: u32 = 10_000;
/// Largest compiled size of a regex, in bytes (the crate's `size_limit`).
pub const SIZE_LIMIT: usize = 2 << 20;
/// The crate's `nest_limit` (the translation nests at most four levels per group, so this is
/// never reached with [`MAX_NESTING`]).
const NEST_LIMIT: u32 = 250;
/// Largest translated pattern, in bytes (case-insensitive classes can grow a lot).
const MAX_TRANSLATED_LEN: usize = 8 << 20;

/// A compile error: byte offset into the pattern source and a message that names what is not
/// allowed and how to fix it. Offsets past the source point into the flags (see
/// [`Flags::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError {
    /// Byte offset into the pattern source.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl RegexError {
    fn new(offset: usize, message: impl Into<String>) -> RegexError {
        RegexError {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for RegexError {}

/// A JS regex literal (`/source/flags`) compiled once.
#[derive(Debug)]
pub struct JsRegex {
    /// JavaScript's `source` (escaped as `RegExp.prototype.source` does).
    source: String,
    flags: Flags,
    flags_str: String,
    re: ::regex::Regex,
    /// The translation given to the crate (for diagnostics).
    translated: String,
    /// For JavaScript group `i` (0 = whole match), the crate's group index.
    slots: Vec<usize>,
    /// For each crate group index: where it sits relative to the innermost enclosing repetition
    /// (to apply JavaScript's capture reset). `None` for groups outside repetitions.
    parents: Vec<Option<Parent>>,
    /// Named groups: name and JavaScript group number.
    names: Vec<(String, usize)>,
    /// Without `u`: the subject must be rewritten in UTF-16 code units when it has astral
    /// characters.
    needs_units: bool,
    /// `m` and `^`/`$` are used.
    multiline_anchors: bool,
    /// Every character set contains all of `\n \r \u2028 \u2029` or none.
    lt_uniform: bool,
    /// `u`, `i` and `\b`/`\B`.
    unicode_word_boundary: bool,
    /// With `u`, the pattern can match the empty string using only `\B` assertions: V8 then also
    /// finds an empty match between the two surrogates of an astral character.
    unicode_mid_empty: bool,
    /// The regex is a small set of literal words, which `test` looks for itself.
    literals: Option<Literals>,
}

/// A group's span in the crate's text, as JavaScript reports it (`None`: undefined), or why it
/// cannot be told.
type Resolved = Result<Option<(usize, usize)>, String>;

/// The position of a crate group relative to the innermost enclosing repetition (with more than
/// one iteration) whose last iteration is captured by the hidden group `hidden`.
#[derive(Clone, Copy, Debug)]
struct Parent {
    hidden: usize,
    /// The group can be empty at the start of an iteration.
    empty_at_start: bool,
    /// The group can be empty at the end of an iteration.
    empty_at_end: bool,
    /// Every path through an iteration sets the group.
    mandatory: bool,
}

impl JsRegex {
    /// Compiles `/source/flags`. `flags`: only `i m s g u`, each at most once; others (`y`, `d`,
    /// `v`) and duplicates are errors.
    pub fn compile(source: &str, flags: &str) -> Result<JsRegex, RegexError> {
        let f = Flags::parse(flags, source.len())?;
        if source.len() > MAX_SOURCE_LEN {
            return Err(RegexError::new(
                0,
                format!(
                    "the regex is too long ({} bytes; the limit is {MAX_SOURCE_LEN})",
                    source.len()
                ),
            ));
        }
        let mut parser = Parser::new(source, f);
        let ast = parser.parse()?;
        let group_count = parser.next_group - 1;
        let names = std::mem::take(&mut parser.names);
        let mut em = Emitter {
            flags: f,
            out: String::new(),
            next_crate: 1,
            slots: vec![0; group_count + 1],
            parents: vec![None],
            has_surrogates: false,
            has_not_word_boundary: false,
            has_word_boundary: false,
            multiline_anchors: false,
            lt_uniform: true,
        };
        if f.unicode && f.ignore_case {
            em.out.push_str("(?i)");
        }
        em.emit(&ast, Place::default(), None)?;
        let needs_units =
            !f.unicode && (em.has_surrogates || em.has_not_word_boundary || nullable(&ast));
        let re = ::regex::RegexBuilder::new(&em.out)
            .size_limit(SIZE_LIMIT)
            .nest_limit(NEST_LIMIT)
            .build()
            .map_err(|e| match e {
                ::regex::Error::CompiledTooBig(limit) => RegexError::new(
                    0,
                    format!(
                        "the regex is too large: compiled, it exceeds the limit of {limit} bytes; \
                         use fewer or smaller repetitions or classes"
                    ),
                ),
                other => RegexError::new(0, format!("the regex cannot be compiled: {other}")),
            })?;
        Ok(JsRegex {
            source: escape_source(source),
            flags: f,
            flags_str: f.to_js_string(),
            re,
            translated: em.out,
            slots: em.slots,
            parents: em.parents,
            names,
            needs_units,
            multiline_anchors: em.multiline_anchors,
            lt_uniform: em.lt_uniform,
            unicode_word_boundary: f.unicode
                && f.ignore_case
                && (em.has_word_boundary || em.has_not_word_boundary),
            unicode_mid_empty: f.unicode && em.has_not_word_boundary && mid_nullable(&ast),
            // With `u` and `i` a set is closed under Unicode case folding by the crate (`ſ` is an
            // `s`): never read as words.
            literals: if f.unicode && f.ignore_case {
                None
            } else {
                Literals::of(&ast)
            },
        })
    }

    /// JavaScript's `source`: the pattern, with `/` outside classes and line terminators escaped
    /// as `RegExp.prototype.source` does (`(?:)` for an empty pattern).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The flags in JavaScript's canonical order (`RegExp.prototype.flags`, "gimsu" order).
    pub fn flags(&self) -> &str {
        &self.flags_str
    }

    /// The parsed flags.
    pub fn flag_set(&self) -> Flags {
        self.flags
    }

    /// `"/source/flags"` as JavaScript's `toString`.
    pub fn to_js_string(&self) -> String {
        format!("/{}/{}", self.source, self.flags_str)
    }

    /// The number of capture groups, excluding group 0.
    pub fn group_count(&self) -> usize {
        self.slots.len() - 1
    }

    /// Named groups, in order of their opening parenthesis: name and group number.
    pub fn group_names(&self) -> &[(String, usize)] {
        &self.names
    }

    /// Whether the pattern has named groups (JavaScript's match result then has `groups`).
    pub fn has_named_groups(&self) -> bool {
        !self.names.is_empty()
    }

    /// The pattern given to the `regex` crate (for diagnostics).
    pub fn translation(&self) -> &str {
        &self.translated
    }

    /// First match from the start (JS `exec` with `lastIndex` 0): byte ranges of groups
    /// `0..=n` (`None` = the group did not participate).
    pub fn exec(&self, subject: &str) -> Result<Option<Vec<Option<Range<usize>>>>, String> {
        let p = self.prepare(subject)?;
        if self.parents.len() == 1 {
            let m = self.re.find(&p.text);
            self.check_mid_empty(&p.text, 0, m.map(|m| m.start()))?;
            let Some(m) = m else {
                return Ok(None);
            };
            return Ok(Some(vec![Some(p.range(m.start(), m.end())?)]));
        }
        let caps = self.re.captures(&p.text);
        self.check_mid_empty(
            &p.text,
            0,
            caps.as_ref().and_then(|c| c.get(0)).map(|m| m.start()),
        )?;
        let Some(caps) = caps else {
            return Ok(None);
        };
        let spans: Vec<Option<(usize, usize)>> = caps
            .iter()
            .map(|m| m.map(|m| (m.start(), m.end())))
            .collect();
        let mut memo: Vec<Option<Resolved>> = vec![None; self.parents.len()];
        let mut out = Vec::with_capacity(self.slots.len());
        for &slot in &self.slots {
            let span = self.resolve(slot, &spans, &mut memo)?;
            out.push(match span {
                Some((s, e)) => Some(p.range(s, e)?),
                None => None,
            });
        }
        Ok(Some(out))
    }

    /// With [`JsRegex::unicode_mid_empty`]: the position of the first astral character at or after
    /// `from` when V8 would find an empty match inside it before the crate's match at `found`.
    fn mid_empty_before(&self, text: &str, from: usize, found: Option<usize>) -> Option<usize> {
        if !self.unicode_mid_empty {
            return None;
        }
        let q = from + text.get(from..)?.bytes().position(|b| b >= 0xF0)?;
        found.is_none_or(|f| f > q).then_some(q)
    }

    fn check_mid_empty(&self, text: &str, from: usize, found: Option<usize>) -> Result<(), String> {
        match self.mid_empty_before(text, from, found) {
            None => Ok(()),
            Some(_) => Err(format!(
                "the regex {} matches the empty string between the two UTF-16 halves of a character outside \
                 the Basic Multilingual Plane (V8 lets \\B match there even with the u flag), which a Rust \
                 string cannot represent",
                self.to_js_string()
            )),
        }
    }

    /// The span of crate group `idx` as JavaScript reports it: `None` when JavaScript's capture
    /// reset has cleared it (it was set in an earlier iteration of an enclosing repetition).
    fn resolve(
        &self,
        idx: usize,
        spans: &[Option<(usize, usize)>],
        memo: &mut [Option<Resolved>],
    ) -> Result<Option<(usize, usize)>, String> {
        if let Some(Some(r)) = memo.get(idx) {
            return r.clone();
        }
        let r = self.resolve_uncached(idx, spans, memo);
        if let Some(m) = memo.get_mut(idx) {
            *m = Some(r.clone());
        }
        r
    }

    fn resolve_uncached(
        &self,
        idx: usize,
        spans: &[Option<(usize, usize)>],
        memo: &mut [Option<Resolved>],
    ) -> Result<Option<(usize, usize)>, String> {
        let Some(&Some((s, e))) = spans.get(idx) else {
            return Ok(None);
        };
        let Some(Some(parent)) = self.parents.get(idx) else {
            return Ok(Some((s, e)));
        };
        // Parents have smaller indices (they open first), so this recursion terminates.
        if parent.hidden >= idx {
            return Err("internal error: bad capture nesting".into());
        }
        let Some((ps, _)) = self.resolve(parent.hidden, spans, memo)? else {
            return Ok(None);
        };
        if parent.mandatory {
            return Ok(Some((s, e)));
        }
        if s < ps {
            return Ok(None);
        }
        if s == e && s == ps {
            return match (parent.empty_at_start, parent.empty_at_end) {
                (true, false) => Ok(Some((s, e))),
                (false, true) => Ok(None),
                _ => Err(format!(
                    "the regex {} cannot tell whether an empty capture belongs to the last repetition \
                     (JavaScript resets captures at each repetition); make the group non-empty",
                    self.to_js_string()
                )),
            };
        }
        Ok(Some((s, e)))
    }

    /// All matches, for `String.prototype.match` with the `g` flag: byte ranges of whole
    /// matches, with JavaScript's empty-match advancing (one code point with `u`, one code unit
    /// without). Without `u`, an empty match between the two UTF-16 halves of an astral
    /// character is reported as an empty range at the start of that character.
    pub fn find_all(&self, subject: &str) -> Result<Vec<Range<usize>>, String> {
        let p = self.prepare(subject)?;
        let t: &str = &p.text;
        let mut out = Vec::new();
        let mut pos = 0;
        while pos <= t.len() {
            let m = self.re.find_at(t, pos);
            if let Some(q) = self.mid_empty_before(t, pos, m.map(|m| m.start())) {
                out.push(p.empty(q));
                pos = q + 4;
                continue;
            }
            let Some(m) = m else {
                break;
            };
            let (s, e) = (m.start(), m.end());
            if s == e {
                out.push(p.empty(s));
                match t.get(e..).and_then(|rest| rest.chars().next()) {
                    Some(c) => pos = e + c.len_utf8(),
                    None => break,
                }
            } else {
                out.push(p.range(s, e)?);
                pos = e;
            }
        }
        Ok(out)
    }

    /// Whether the regex matches (JS `test` on a fresh regex object).
    pub fn test(&self, subject: &str) -> Result<bool, String> {
        if let Some(words) = &self.literals {
            return Ok(words.test(subject));
        }
        if !(self.needs_units
            || self.multiline_anchors
            || self.unicode_word_boundary
            || self.unicode_mid_empty)
        {
            // Nothing about the subject can change how the crate sees it (what `prepare`
            // checks for): ask the crate directly.
            return Ok(self.re.is_match(subject));
        }
        let p = self.prepare(subject)?;
        Ok(self.re.is_match(&p.text) || self.mid_empty_before(&p.text, 0, None).is_some())
    }

    /// The text the crate matches: the subject, or a rewritten copy (astral characters as two
    /// surrogate stand-ins; line terminators as `\n`), with the offset map back.
    fn prepare<'s>(&self, subject: &'s str) -> Result<Prepared<'s>, String> {
        // `is_ascii` runs a word at a time: most messages skip the byte scan.
        let astral = self.needs_units && !subject.is_ascii() && subject.bytes().any(|b| b >= 0xF0);
        let lines = self.multiline_anchors && subject.contains(['\r', '\u{2028}', '\u{2029}']);
        if lines && !self.lt_uniform {
            return Err(format!(
                "the regex {} treats line terminators differently from each other and uses ^ or $ with the m flag, \
                 and the text contains \\r, U+2028 or U+2029; rp cannot match this exactly like JavaScript",
                self.to_js_string()
            ));
        }
        // With `u` and `i`, ſ and K are word characters for \b; as they are case-insensitively
        // equal to s and k, matching s and k instead is indistinguishable for everything else.
        let word = self.unicode_word_boundary && subject.contains(['\u{17F}', '\u{212A}']);
        if !astral && !lines && !word {
            return Ok(Prepared {
                text: Cow::Borrowed(subject),
                shifts: Vec::new(),
            });
        }
        let mut text = String::with_capacity(subject.len() + 16);
        let mut shifts = Vec::new();
        for (o, c) in subject.char_indices() {
            let t = text.len();
            match c {
                '\r' if lines => text.push('\n'),
                '\u{2028}' | '\u{2029}' if lines => {
                    text.push('\n');
                    shifts.push(Shift {
                        t,
                        t_len: 1,
                        o,
                        o_len: 3,
                    });
                }
                '\u{17F}' | '\u{212A}' if word => {
                    text.push(if c == '\u{17F}' { 's' } else { 'k' });
                    shifts.push(Shift {
                        t,
                        t_len: 1,
                        o,
                        o_len: c.len_utf8(),
                    });
                }
                c if astral && c as u32 > 0xFFFF => {
                    let v = c as u32 - 0x1_0000;
                    text.push(unit_char(0xD800 + (v >> 10)));
                    text.push(unit_char(0xDC00 + (v & 0x3FF)));
                    shifts.push(Shift {
                        t,
                        t_len: 8,
                        o,
                        o_len: 4,
                    });
                }
                c => text.push(c),
            }
        }
        Ok(Prepared {
            text: Cow::Owned(text),
            shifts,
        })
    }
}

/// The stand-in for a surrogate code unit (without `u`): U+F0000 + (unit − 0xD800).
fn unit_char(unit: u32) -> char {
    char::from_u32(0xF_0000 + (unit - 0xD800)).unwrap_or('\u{FFFD}')
}

/// A rewritten subject: the text and where its replacements changed lengths.
struct Prepared<'s> {
    text: Cow<'s, str>,
    shifts: Vec<Shift>,
}

/// A replacement: `t_len` bytes at `t` of the text stand for `o_len` bytes at `o` of the subject.
struct Shift {
    t: usize,
    t_len: usize,
    o: usize,
    o_len: usize,
}

/// A text offset mapped back to the subject.
enum Pos {
    At(usize),
    /// Inside the character that starts at this subject offset.
    Inside(usize),
}

impl Prepared<'_> {
    fn pos(&self, x: usize) -> Pos {
        let i = self.shifts.partition_point(|s| s.t <= x);
        let Some(s) = i.checked_sub(1).and_then(|i| self.shifts.get(i)) else {
            return Pos::At(x);
        };
        if x == s.t {
            Pos::At(s.o)
        } else if x < s.t + s.t_len {
            Pos::Inside(s.o)
        } else {
            Pos::At(s.o + s.o_len + (x - s.t - s.t_len))
        }
    }

    fn range(&self, s: usize, e: usize) -> Result<Range<usize>, String> {
        match (self.pos(s), self.pos(e)) {
            (Pos::At(s), Pos::At(e)) => Ok(s..e),
            _ => Err("the match begins or ends between the two UTF-16 halves of a character outside the \
                      Basic Multilingual Plane (like an emoji), which a Rust string cannot represent; \
                      add the u flag to the regex"
                .into()),
        }
    }

    fn empty(&self, x: usize) -> Range<usize> {
        match self.pos(x) {
            Pos::At(o) | Pos::Inside(o) => o..o,
        }
    }
}

/// `RegExp.prototype.source`: escapes `/` outside classes and line terminators, as V8 does.
fn escape_source(src: &str) -> String {
    if src.is_empty() {
        return "(?:)".into();
    }
    let mut out = String::with_capacity(src.len());
    let mut in_class = false;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                match chars.peek() {
                    // The escaped line terminator is written as an escape itself.
                    Some('\n' | '\r' | '\u{2028}' | '\u{2029}') => continue,
                    Some(&n) => {
                        out.push('\\');
                        out.push(n);
                        chars.next();
                    }
                    None => out.push('\\'),
                }
                continue;
            }
            '/' if !in_class => out.push_str("\\/"),
            '[' => {
                in_class = true;
                out.push('[');
            }
            ']' => {
                in_class = false;
                out.push(']');
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
