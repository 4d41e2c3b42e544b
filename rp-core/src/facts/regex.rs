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

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

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

/// Flags of a JS regex literal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `g`
    pub global: bool,
    /// `i`
    pub ignore_case: bool,
    /// `m`
    pub multiline: bool,
    /// `s`
    pub dot_all: bool,
    /// `u`
    pub unicode: bool,
}

impl Flags {
    /// Parses a flags string: only `g i m s u`, each at most once. Error offsets are
    /// `source_len + 1 + index of the flag`, i.e. they point at the flag in `/source/flags`.
    pub fn parse(flags: &str, source_len: usize) -> Result<Flags, RegexError> {
        let mut f = Flags::default();
        for (i, c) in flags.char_indices() {
            let offset = source_len + 1 + i;
            let slot = match c {
                'g' => &mut f.global,
                'i' => &mut f.ignore_case,
                'm' => &mut f.multiline,
                's' => &mut f.dot_all,
                'u' => &mut f.unicode,
                'y' | 'd' | 'v' => {
                    let what = match c {
                        'y' => "y (sticky)",
                        'd' => "d (match indices)",
                        _ => "v (unicode sets)",
                    };
                    return Err(RegexError::new(
                        offset,
                        format!(
                            "the regex flag {what} is not supported; the flags allowed are g, i, m, s and u"
                        ),
                    ));
                }
                _ => {
                    return Err(RegexError::new(
                        offset,
                        format!("invalid regex flag `{c}`; the flags allowed are g, i, m, s and u"),
                    ));
                }
            };
            if *slot {
                return Err(RegexError::new(
                    offset,
                    format!("duplicate regex flag `{c}`"),
                ));
            }
            *slot = true;
        }
        Ok(f)
    }

    /// The flags in JavaScript's canonical order (`RegExp.prototype.flags`).
    pub fn to_js_string(self) -> String {
        let mut s = String::new();
        for (on, c) in [
            (self.global, 'g'),
            (self.ignore_case, 'i'),
            (self.multiline, 'm'),
            (self.dot_all, 's'),
            (self.unicode, 'u'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }
}

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

// ---------------------------------------------------------------------------------------------
// Character sets

/// Sorted, disjoint, non-adjacent inclusive ranges of code points (with `u`) or code units
/// (without).
type Ranges = Vec<(u32, u32)>;

fn normalize(mut v: Ranges) -> Ranges {
    v.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn complement(v: &[(u32, u32)], max: u32) -> Ranges {
    let mut out = Vec::with_capacity(v.len() + 1);
    let mut next = 0u32;
    for &(lo, hi) in v {
        if lo > max {
            break;
        }
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi.saturating_add(1);
    }
    if next <= max {
        out.push((next, max));
    }
    out
}

fn contains(v: &[(u32, u32)], c: u32) -> bool {
    let i = v.partition_point(|&(_, hi)| hi < c);
    v.get(i).is_some_and(|&(lo, _)| lo <= c)
}

const LINE_TERMINATORS: [u32; 4] = [0x0A, 0x0D, 0x2028, 0x2029];

fn digit_ranges() -> Ranges {
    vec![(0x30, 0x39)]
}

/// JavaScript's word characters; with `u` and `i` also ſ and K (their case folding is ASCII).
fn word_ranges(unicode_ignore_case: bool) -> Ranges {
    let mut v = vec![(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
    if unicode_ignore_case {
        v.push((0x17F, 0x17F));
        v.push((0x212A, 0x212A));
    }
    v
}

/// JavaScript's `\s`: WhiteSpace and LineTerminator.
fn space_ranges() -> Ranges {
    vec![
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ]
}

/// The case-insensitive equivalence classes of JavaScript without `u`: code units `a` and `b`
/// match when `Canonicalize(a) == Canonicalize(b)`, where Canonicalize is `toUpperCase` unless
/// that gives more than one code unit or maps a non-ASCII unit to ASCII.
struct CaseClasses {
    /// For each BMP code unit, the index of its class in `classes` (or `u16::MAX`: alone).
    class_of: Vec<u16>,
    /// The classes with at least two members.
    classes: Vec<Vec<u32>>,
}

fn canonicalize_non_unicode(c: u32) -> u32 {
    let Some(ch) = char::from_u32(c) else {
        return c; // a surrogate
    };
    let mut up = ch.to_uppercase();
    let (Some(u), None) = (up.next(), up.next()) else {
        return c;
    };
    let u = u as u32;
    if u > 0xFFFF || (c >= 128 && u < 128) {
        return c;
    }
    u
}

fn case_classes() -> &'static CaseClasses {
    static TABLE: OnceLock<CaseClasses> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_canon: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for c in 0..=0xFFFFu32 {
            let k = canonicalize_non_unicode(c);
            if k != c || by_canon.contains_key(&c) {
                by_canon.entry(k).or_default().push(c);
            }
        }
        // Each entry lists the units with that canonical value other than (possibly) the value
        // itself; add the value when it canonicalizes to itself.
        let mut class_of = vec![u16::MAX; 0x1_0000];
        let mut classes = Vec::new();
        for (k, mut members) in by_canon {
            if canonicalize_non_unicode(k) == k && !members.contains(&k) {
                members.push(k);
            }
            members.sort_unstable();
            members.dedup();
            if members.len() < 2 {
                continue;
            }
            let id = classes.len() as u16;
            for &m in &members {
                if let Some(slot) = class_of.get_mut(m as usize) {
                    *slot = id;
                }
            }
            classes.push(members);
        }
        CaseClasses { class_of, classes }
    })
}

/// Closes a set of code units under JavaScript's non-`u` case-insensitive equivalence.
fn close_non_unicode(v: Ranges) -> Ranges {
    let t = case_classes();
    let mut extra = Vec::new();
    if let [(lo, hi)] = v[..]
        && lo == hi
    {
        if let Some(&id) = t.class_of.get(lo as usize)
            && let Some(members) = t.classes.get(id as usize)
        {
            extra.extend(members.iter().map(|&m| (m, m)));
        }
    } else {
        for members in &t.classes {
            if members.iter().any(|&m| contains(&v, m)) {
                extra.extend(members.iter().map(|&m| (m, m)));
            }
        }
    }
    if extra.is_empty() {
        return v;
    }
    extra.extend(v);
    normalize(extra)
}

/// Case pairs that Unicode 17 added (JavaScript's tables) and the crate's Unicode 16 tables
/// lack; with `u` and `i` the partners are added explicitly.
const UNICODE_17_CASED: [(u32, u32); 4] = [
    (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D5),
    (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3),
];

fn add_unicode_17_partners(v: Ranges) -> Ranges {
    let mut extra = Vec::new();
    for &(lo, hi) in &UNICODE_17_CASED {
        for c in lo..=hi {
            if contains(&v, c)
                && let Some(ch) = char::from_u32(c)
            {
                for p in ch.to_lowercase().chain(ch.to_uppercase()) {
                    extra.push((p as u32, p as u32));
                }
            }
        }
    }
    if extra.is_empty() {
        return v;
    }
    extra.extend(v);
    normalize(extra)
}

// ---------------------------------------------------------------------------------------------
// Literal words

/// Most words a regex may be read as for [`Literals`].
const MAX_WORDS: usize = 32;
/// Longest such word, in bytes.
const MAX_WORD_LEN: usize = 64;
/// Most strings the prefilter of [`Literals`] looks for (its SIMD search handles up to 64).
const MAX_NEEDLES: usize = 64;
/// Longest prefix of a word the prefilter looks for.
const MAX_NEEDLE_LEN: usize = 3;

/// A regex that is a small set of literal words: each one ASCII characters, a letter possibly
/// matching both its cases, with `\b` possibly at either end (`/aria|merchant/i`,
/// `/\b(gold|coin)\b/i`, the usual keyword tests of a sheet). JavaScript's `test` is then
/// whether any word occurs, which [`Literals::test`] answers with a SIMD search for the words'
/// first bytes (in all their cases) and a check of each candidate, much faster than the crate:
/// for case-insensitive words, its own prefilter only finds candidates that its lazy DFA then
/// has to confirm.
///
/// Only without `u` and `i` together (with both, the crate folds case over Unicode, and `ſ`
/// matches `s`). An ASCII byte of UTF-8 text is always a whole character, and without `u` a
/// whole code unit, so the words match where JavaScript's would.
#[derive(Debug)]
struct Literals {
    words: Vec<Word>,
    /// Finds where a word may start: every case variant of each word's prefix.
    prefilter: aho_corasick::packed::Searcher,
}

#[derive(Debug)]
struct Word {
    /// The bytes, a letter that matches both its cases in lower case.
    bytes: Box<[u8]>,
    /// For each byte, `0x20` where a letter matches both cases, or 0: a subject's byte `b`
    /// matches when `b | fold == byte`.
    fold: Box<[u8]>,
    /// `\b` before the first byte.
    boundary_before: bool,
    /// `\b` after the last byte.
    boundary_after: bool,
}

/// One position of a word while reading the syntax tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    /// A byte and its fold (see [`Word::fold`]).
    Byte(u8, u8),
    /// `\b`.
    Boundary,
}

impl Literals {
    /// The words `ast` matches, if it is such a set.
    fn of(ast: &Node) -> Option<Literals> {
        let words = words(ast)?
            .iter()
            .map(|atoms| Word::of(atoms))
            .collect::<Option<Vec<_>>>()?;
        let needles = (1..=MAX_NEEDLE_LEN).rev().find_map(|len| {
            let mut needles = Vec::new();
            for w in &words {
                w.prefix_variants(len, &mut needles);
                if needles.len() > MAX_NEEDLES {
                    return None;
                }
            }
            Some(needles)
        })?;
        let mut needles = needles;
        needles.sort_unstable();
        needles.dedup();
        let prefilter = aho_corasick::packed::Config::new()
            .builder()
            .extend(&needles)
            .build()?;
        Some(Literals { words, prefilter })
    }

    /// Whether any word occurs in `subject`.
    fn test(&self, subject: &str) -> bool {
        let h = subject.as_bytes();
        let mut at = 0;
        while let Some(m) = self
            .prefilter
            .find_in(h, aho_corasick::Span::from(at..h.len()))
        {
            let p = m.start();
            if self.words.iter().any(|w| w.is_at(h, p)) {
                return true;
            }
            at = p + 1;
        }
        false
    }
}

impl Word {
    /// A word of `\b`s around bytes; `None` for any other shape (a `\b` inside, no bytes).
    fn of(atoms: &[Atom]) -> Option<Word> {
        let boundary_before = atoms.first() == Some(&Atom::Boundary);
        let boundary_after = atoms.last() == Some(&Atom::Boundary);
        let inner = atoms
            .iter()
            .skip_while(|a| **a == Atom::Boundary)
            .collect::<Vec<_>>();
        let end = inner.len()
            - inner
                .iter()
                .rev()
                .take_while(|a| ***a == Atom::Boundary)
                .count();
        let mut bytes = Vec::with_capacity(end);
        let mut fold = Vec::with_capacity(end);
        for a in &inner[..end] {
            let Atom::Byte(b, f) = **a else {
                return None;
            };
            bytes.push(b);
            fold.push(f);
        }
        if bytes.is_empty() {
            return None;
        }
        Some(Word {
            bytes: bytes.into(),
            fold: fold.into(),
            boundary_before,
            boundary_after,
        })
    }

    /// Appends every case variant of the first `len` bytes (or all, if fewer).
    fn prefix_variants(&self, len: usize, out: &mut Vec<Vec<u8>>) {
        let mut variants = vec![Vec::new()];
        for (&b, &f) in self.bytes.iter().zip(self.fold.iter()).take(len) {
            let mut next = Vec::with_capacity(variants.len() * 2);
            for v in &variants {
                for c in [b, b & !f] {
                    let mut v = v.clone();
                    v.push(c);
                    next.push(v);
                    if f == 0 {
                        break;
                    }
                }
            }
            variants = next;
        }
        out.extend(variants);
    }

    /// Whether the word occurs at byte `p` of `h`.
    #[inline]
    fn is_at(&self, h: &[u8], p: usize) -> bool {
        let n = self.bytes.len();
        let Some(s) = h.get(p..p + n) else {
            return false;
        };
        if !s
            .iter()
            .zip(self.fold.iter())
            .zip(self.bytes.iter())
            .all(|((&c, &f), &b)| c | f == b)
        {
            return false;
        }
        // JavaScript's `\b` (without `u` and `i`): ASCII word characters on one side only. A
        // byte of a character outside ASCII is not one.
        let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        let before = p.checked_sub(1).and_then(|i| h.get(i));
        !(self.boundary_before && word(before) == word(s.first())
            || self.boundary_after && word(s.last()) == word(h.get(p + n)))
    }
}

impl Atom {
    /// A set of one ASCII character, or of an ASCII letter in both cases.
    fn of(set: &CharSet) -> Option<Atom> {
        if set.negated || !set.closed.is_empty() {
            return None;
        }
        match set.ranges[..] {
            [(c, d)] if c == d && c < 0x80 => Some(Atom::Byte(c as u8, 0)),
            [(u, v), (l, m)] if u == v && l == m && (0x41..=0x5A).contains(&u) && l == u + 0x20 => {
                Some(Atom::Byte(l as u8, 0x20))
            }
            _ => None,
        }
    }
}

/// Every string of atoms `n` matches, if it matches only a few strings of ASCII characters and
/// `\b`s (see [`MAX_WORDS`], [`MAX_WORD_LEN`]).
fn words(n: &Node) -> Option<Vec<Vec<Atom>>> {
    Some(match n {
        Node::Empty => vec![Vec::new()],
        Node::Set(set) => vec![vec![Atom::of(set)?]],
        Node::Assert(Assertion::WordBoundary) => vec![vec![Atom::Boundary]],
        Node::Assert(_) | Node::Repeat(_) => return None,
        Node::Group(_, inner) => words(inner)?,
        Node::Alt(v) => {
            let mut out = Vec::new();
            for a in v {
                out.extend(words(a)?);
                if out.len() > MAX_WORDS {
                    return None;
                }
            }
            out
        }
        Node::Seq(v) => {
            let mut out = vec![Vec::new()];
            for a in v {
                let tails = words(a)?;
                if out.len() * tails.len() > MAX_WORDS {
                    return None;
                }
                out = out
                    .iter()
                    .flat_map(|head| tails.iter().map(move |t| [&head[..], &t[..]].concat()))
                    .collect();
                if out.iter().any(|w| w.len() > MAX_WORD_LEN) {
                    return None;
                }
            }
            out
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

#[derive(Debug)]
enum Node {
    Empty,
    /// One code unit (without `u`) or code point (with `u`) from the set.
    Set(CharSet),
    Seq(Vec<Node>),
    Alt(Vec<Node>),
    /// A group: capturing (JavaScript group number) or not.
    Group(Option<usize>, Box<Node>),
    Repeat(Box<Repeat>),
    Assert(Assertion),
}

#[derive(Debug)]
struct Repeat {
    node: Node,
    min: u32,
    max: Option<u32>,
    greedy: bool,
}

/// A final character set. `closed` and `negated` are only used with `u` and `i`, where the
/// crate folds case: `ranges` must be folded, `closed` is already closed under case folding
/// (class escapes and `.`; folding their large ranges would make the crate slow), and the set is
/// the complement of both when `negated`. Otherwise `ranges` is the whole set.
#[derive(Debug)]
struct CharSet {
    ranges: Ranges,
    closed: Ranges,
    negated: bool,
}

impl CharSet {
    fn new(ranges: Ranges) -> CharSet {
        CharSet {
            ranges,
            closed: Vec::new(),
            negated: false,
        }
    }

    /// A set closed under case folding.
    fn closed(ranges: Ranges, unicode_ignore_case: bool) -> CharSet {
        if unicode_ignore_case {
            CharSet {
                ranges: Vec::new(),
                closed: ranges,
                negated: false,
            }
        } else {
            CharSet::new(ranges)
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Assertion {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

/// Whether the node has a path that consumes nothing (assertions count as consuming nothing).
fn nullable(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Assert(_) => true,
        Node::Set(_) => false,
        Node::Seq(v) => v.iter().all(nullable),
        Node::Alt(v) => v.iter().any(nullable),
        Node::Group(_, n) => nullable(n),
        Node::Repeat(r) => r.min == 0 || nullable(&r.node),
    }
}

/// Whether the node can match the empty string between the two halves of a surrogate pair as V8
/// sees it with `u`: a path that consumes nothing and asserts only `\B`.
fn mid_nullable(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Assert(Assertion::NotWordBoundary) => true,
        Node::Assert(_) | Node::Set(_) => false,
        Node::Seq(v) => v.iter().all(mid_nullable),
        Node::Alt(v) => v.iter().any(mid_nullable),
        Node::Group(_, n) => mid_nullable(n),
        Node::Repeat(r) => r.min == 0 || mid_nullable(&r.node),
    }
}

fn has_capture(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Assert(_) | Node::Set(_) => false,
        Node::Seq(v) | Node::Alt(v) => v.iter().any(has_capture),
        Node::Group(i, n) => i.is_some() || has_capture(n),
        Node::Repeat(r) => has_capture(&r.node),
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

/// An atom inside a class: one character or a class escape's set.
enum ClassAtom {
    Char(u32),
    Set(Ranges),
}

struct Parser<'a> {
    src: &'a str,
    /// Code points (with `u`) or UTF-16 code units (without), with their byte offsets.
    units: Vec<(usize, u32)>,
    pos: usize,
    flags: Flags,
    /// Capturing groups in the whole pattern (for `\N`).
    total_groups: usize,
    /// The pattern has named groups (JavaScript's `[N]` grammar parameter).
    named: bool,
    next_group: usize,
    names: Vec<(String, usize)>,
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
    fn new(src: &'a str, flags: Flags) -> Parser<'a> {
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

    fn parse(&mut self) -> Result<Node, RegexError> {
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

// ---------------------------------------------------------------------------------------------
// Translation to the regex crate's syntax

/// Where a node sits in the current iteration of the innermost enclosing repetition (or in the
/// whole pattern): whether everything before / after it can be empty, and whether every path
/// through the iteration goes through it.
#[derive(Clone, Copy)]
struct Place {
    prefix: bool,
    suffix: bool,
    mandatory: bool,
}

impl Default for Place {
    fn default() -> Place {
        Place {
            prefix: true,
            suffix: true,
            mandatory: true,
        }
    }
}

struct Emitter {
    flags: Flags,
    out: String,
    next_crate: usize,
    slots: Vec<usize>,
    parents: Vec<Option<Parent>>,
    has_surrogates: bool,
    has_not_word_boundary: bool,
    has_word_boundary: bool,
    multiline_anchors: bool,
    lt_uniform: bool,
}

impl Emitter {
    fn check_size(&self) -> Result<(), RegexError> {
        if self.out.len() > MAX_TRANSLATED_LEN {
            return Err(RegexError::new(
                0,
                "the regex is too large once case-insensitive classes are expanded; make it simpler",
            ));
        }
        Ok(())
    }

    fn open_capture(&mut self, parent: Option<Parent>) -> usize {
        let idx = self.next_crate;
        self.next_crate += 1;
        self.parents.push(parent);
        self.out.push('(');
        idx
    }

    /// Emits `n` at `place` in the current iteration of the innermost enclosing repetition
    /// (whose hidden group is `parent`).
    fn emit(&mut self, n: &Node, place: Place, parent: Option<usize>) -> Result<(), RegexError> {
        let Place {
            prefix,
            suffix,
            mandatory,
        } = place;
        match n {
            Node::Empty => self.out.push_str("(?:)"),
            Node::Set(s) => {
                self.emit_set(s);
                self.check_size()?;
            }
            Node::Seq(items) => {
                let null: Vec<bool> = items.iter().map(nullable).collect();
                for (i, item) in items.iter().enumerate() {
                    let place = Place {
                        prefix: prefix && null.get(..i).is_some_and(|v| v.iter().all(|&b| b)),
                        suffix: suffix && null.get(i + 1..).is_some_and(|v| v.iter().all(|&b| b)),
                        mandatory,
                    };
                    self.emit(item, place, parent)?;
                }
            }
            Node::Alt(branches) => {
                self.out.push_str("(?:");
                for (i, b) in branches.iter().enumerate() {
                    if i > 0 {
                        self.out.push('|');
                    }
                    let place = Place {
                        mandatory: false,
                        ..place
                    };
                    self.emit(b, place, parent)?;
                }
                self.out.push(')');
            }
            Node::Group(Some(js), body) => {
                let empty = nullable(body);
                let info = parent.map(|hidden| Parent {
                    hidden,
                    empty_at_start: prefix && empty,
                    empty_at_end: suffix && empty,
                    mandatory,
                });
                let idx = self.open_capture(info);
                if let Some(slot) = self.slots.get_mut(*js) {
                    *slot = idx;
                }
                self.emit(body, place, parent)?;
                self.out.push(')');
            }
            Node::Group(None, body) => {
                self.out.push_str("(?:");
                self.emit(body, place, parent)?;
                self.out.push(')');
            }
            Node::Repeat(r) => {
                let looping = r.max.is_none_or(|m| m > 1);
                if looping && has_capture(&r.node) {
                    // A hidden group captures the last iteration, to apply JavaScript's reset of
                    // the captures inside the body at each iteration.
                    let empty = nullable(&r.node);
                    let info = parent.map(|hidden| Parent {
                        hidden,
                        empty_at_start: prefix && empty,
                        empty_at_end: suffix && empty,
                        mandatory: mandatory && r.min > 0,
                    });
                    self.out.push_str("(?:");
                    let idx = self.open_capture(info);
                    self.emit(&r.node, Place::default(), Some(idx))?;
                    self.out.push_str("))");
                } else {
                    self.out.push_str("(?:");
                    let place = Place {
                        mandatory: mandatory && r.min > 0,
                        ..place
                    };
                    self.emit(&r.node, place, parent)?;
                    self.out.push(')');
                }
                match r.max {
                    Some(max) => self.out.push_str(&format!("{{{},{}}}", r.min, max)),
                    None => self.out.push_str(&format!("{{{},}}", r.min)),
                }
                if !r.greedy {
                    self.out.push('?');
                }
            }
            Node::Assert(a) => {
                let m = self.flags.multiline;
                self.out.push_str(match a {
                    Assertion::Start if m => "(?m:^)",
                    Assertion::Start => r"\A",
                    Assertion::End if m => "(?m:$)",
                    Assertion::End => r"\z",
                    Assertion::WordBoundary => r"(?-u:\b)",
                    Assertion::NotWordBoundary => r"(?-u:\B)",
                });
                match a {
                    Assertion::Start | Assertion::End => self.multiline_anchors |= m,
                    Assertion::WordBoundary => self.has_word_boundary = true,
                    Assertion::NotWordBoundary => self.has_not_word_boundary = true,
                }
            }
        }
        Ok(())
    }

    fn emit_set(&mut self, s: &CharSet) {
        let lts = LINE_TERMINATORS
            .iter()
            .filter(|&&c| contains(&s.ranges, c) || contains(&s.closed, c))
            .count();
        if lts != 0 && lts != LINE_TERMINATORS.len() {
            self.lt_uniform = false;
        }
        let open = self.scalar_ranges(&s.ranges);
        let closed = self.scalar_ranges(&s.closed);
        if closed.is_empty() {
            push_class(&mut self.out, &open, s.negated);
            return;
        }
        // With `u` and `i` only. The crate folds case by visiting every code point of a range
        // that meets a cased letter, so large closed sets are kept out of its folding.
        let big = closed
            .iter()
            .map(|&(lo, hi)| u64::from(hi - lo) + 1)
            .sum::<u64>()
            > 5_000;
        let rest = if s.negated && big {
            self.scalar_ranges(&complement(&s.closed, 0x10_FFFF))
        } else {
            Vec::new()
        };
        let out = &mut self.out;
        match (s.negated, big, open.is_empty()) {
            (false, false, _) | (true, false, _) => {
                let all = normalize(open.into_iter().chain(closed).collect());
                push_class(out, &all, s.negated);
            }
            (false, true, true) => {
                out.push_str("(?-i:");
                push_class(out, &closed, false);
                out.push(')');
            }
            (false, true, false) => {
                out.push_str("(?:");
                push_class(out, &open, false);
                out.push_str("|(?-i:");
                push_class(out, &closed, false);
                out.push_str("))");
            }
            (true, true, empty) => {
                // Not in the folded `open` and not in `closed` (whose complement is small and
                // closed too).
                if empty {
                    out.push_str("(?-i:");
                    push_class(out, &rest, false);
                    out.push(')');
                } else {
                    out.push('[');
                    push_class_brackets(out, &open, true);
                    out.push_str("&&");
                    push_class_brackets(out, &rest, false);
                    out.push(']');
                }
            }
        }
    }

    /// The ranges the crate can match: with `u`, surrogates are unmatchable in a Rust string;
    /// without `u`, they stand for the halves of astral characters (see `unit_char`).
    fn scalar_ranges(&mut self, v: &[(u32, u32)]) -> Ranges {
        let mut ranges: Ranges = Vec::with_capacity(v.len() + 1);
        for &(lo, hi) in v {
            if lo < 0xD800 {
                ranges.push((lo, hi.min(0xD7FF)));
            }
            if hi >= 0xD800 && lo <= 0xDFFF && !self.flags.unicode {
                self.has_surrogates = true;
                let (a, b) = (lo.max(0xD800), hi.min(0xDFFF));
                ranges.push((0xF_0000 + (a - 0xD800), 0xF_0000 + (b - 0xD800)));
            }
            if hi > 0xDFFF {
                ranges.push((lo.max(0xE000), hi));
            }
        }
        ranges
    }
}

/// A class (or a single character) in the crate's syntax; the empty and full classes are
/// written as ranges, since the crate reads `[]` and `[^]` differently from JavaScript.
fn push_class(out: &mut String, ranges: &[(u32, u32)], negated: bool) {
    if !negated
        && let [(lo, hi)] = ranges[..]
        && lo == hi
    {
        push_char(out, lo);
        return;
    }
    push_class_brackets(out, ranges, negated);
}

fn push_class_brackets(out: &mut String, ranges: &[(u32, u32)], negated: bool) {
    if ranges.is_empty() {
        out.push_str(if negated {
            "[\\x{0}-\\x{10FFFF}]"
        } else {
            "[^\\x{0}-\\x{10FFFF}]"
        });
        return;
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    for &(lo, hi) in ranges {
        push_char(out, lo);
        if hi > lo {
            out.push('-');
            push_char(out, hi);
        }
    }
    out.push(']');
}

fn push_char(out: &mut String, c: u32) {
    match char::from_u32(c) {
        Some(ch) if ch.is_ascii_alphanumeric() => out.push(ch),
        _ => out.push_str(&format!("\\x{{{c:X}}}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_words_answer_test_like_the_crate() {
        // (pattern, read as words with `i`)
        let patterns = [
            ("aria|merchant", true),
            (r"\b(gold|coin|price|trade)\b", true),
            ("a", true),
            ("AB|cd|", false),
            (r"x\b", true),
            (r"\bfoo", true),
            (r"\b-\b|\b_", true),
            ("k|s|i", true),
            ("(a|b)(c|d)e", true),
            ("[Aa]ria|x.y", false),
            ("é|a", false),
            (r"a\bb", false),
            ("a{2}", false),
            (r"\Bab", false),
            ("^ab", false),
        ];
        let subjects = [
            "",
            "a",
            "ARIA",
            "Merchant's",
            "the merchant",
            "mercha",
            "ſ",
            "\u{212A}",
            "İ ı",
            "goldsmith",
            "a gold coin",
            "_gold_",
            "égold",
            "é gold é",
            "x-y",
            "-",
            "foo",
            "afoo",
            "a-foo",
            "😀gold😀",
            "ace BDE",
            "ab",
            "aB",
            "AA",
            "Trade.",
            "x",
            "xy x",
        ];
        for (src, words) in patterns {
            for flags in ["", "i", "u", "g", "im", "iu", "su"] {
                let mut re = JsRegex::compile(src, flags).unwrap();
                let literal = re.literals.is_some();
                if flags.contains('i') && !flags.contains('u') {
                    assert_eq!(literal, words, "/{src}/{flags}");
                }
                assert!(!(flags.contains('i') && flags.contains('u') && literal));
                for s in subjects {
                    let fast = re.test(s).unwrap();
                    re.literals = None;
                    let slow = re.test(s).unwrap();
                    assert_eq!(fast, slow, "/{src}/{flags} on {s:?}");
                    re = JsRegex::compile(src, flags).unwrap();
                }
            }
        }
    }

    fn exec(src: &str, flags: &str, s: &str) -> Option<Vec<Option<Range<usize>>>> {
        JsRegex::compile(src, flags)
            .unwrap_or_else(|e| panic!("/{src}/{flags}: {e}"))
            .exec(s)
            .unwrap()
    }

    fn texts<'s>(src: &str, flags: &str, s: &'s str) -> Option<Vec<Option<&'s str>>> {
        exec(src, flags, s).map(|v| v.into_iter().map(|r| r.map(|r| &s[r])).collect())
    }

    fn all<'s>(src: &str, flags: &str, s: &'s str) -> Vec<&'s str> {
        JsRegex::compile(src, flags)
            .unwrap()
            .find_all(s)
            .unwrap()
            .into_iter()
            .map(|r| &s[r])
            .collect()
    }

    fn test(src: &str, flags: &str, s: &str) -> bool {
        JsRegex::compile(src, flags)
            .unwrap_or_else(|e| panic!("/{src}/{flags}: {e}"))
            .test(s)
            .unwrap()
    }

    fn err(src: &str, flags: &str) -> RegexError {
        match JsRegex::compile(src, flags) {
            Ok(r) => panic!("/{src}/{flags} compiled to {}", r.translation()),
            Err(e) => e,
        }
    }

    #[test]
    fn basics() {
        assert_eq!(exec("", "", ""), Some(vec![Some(0..0)]));
        assert_eq!(texts("b(c)?", "", "abd"), Some(vec![Some("b"), None]));
        assert_eq!(
            texts("aria|merchant", "i", "The MERCHANT"),
            Some(vec![Some("MERCHANT")])
        );
        assert!(test("^a.c$", "", "abc"));
        assert!(!test("^a.c$", "", "a\nc"));
        assert!(test("^a.c$", "s", "a\nc"));
        assert_eq!(all("a*", "g", "baa"), vec!["", "aa", ""]);
        assert_eq!(all("\\w+", "", "hi, you"), vec!["hi", "you"]);
    }

    #[test]
    fn api() {
        let r = JsRegex::compile("a/b", "uigm").unwrap();
        assert_eq!(r.flags(), "gimu");
        assert_eq!(r.source(), "a\\/b");
        assert_eq!(r.to_js_string(), "/a\\/b/gimu");
        assert_eq!(JsRegex::compile("", "").unwrap().to_js_string(), "/(?:)/");
        assert_eq!(JsRegex::compile("[/]", "").unwrap().source(), "[/]");
        let r = JsRegex::compile("(?<year>\\d+)-(\\d+)", "").unwrap();
        assert_eq!(r.group_count(), 2);
        assert_eq!(r.group_names(), &[("year".to_string(), 1)]);
        assert!(r.has_named_groups());
    }

    #[test]
    fn flags_errors() {
        assert_eq!(err("a", "gg").offset, 3);
        assert!(err("a", "y").message.contains("sticky"));
        assert!(err("a", "x").message.contains("invalid regex flag"));
        assert!(err("a", "v").message.contains("not supported"));
    }

    #[test]
    fn unsupported_constructs_are_named() {
        assert!(err("(a)\\1", "").message.contains("backreference"));
        assert!(err("\\1(a)", "").message.contains("backreference"));
        assert!(
            err("(?<n>a)\\k<n>", "")
                .message
                .contains("named backreference")
        );
        assert!(err("a(?=b)", "").message.contains("lookahead"));
        assert!(err("a(?!b)", "").message.contains("lookahead"));
        assert!(err("(?<=b)a", "").message.contains("lookbehind"));
        assert!(err("(?<!b)a", "").message.contains("lookbehind"));
        assert!(err("\\p{L}", "u").message.contains("property"));
        assert!(err("(a*)*", "").message.contains("empty"));
        assert_eq!(err("ab(?=c)", "").offset, 2);
    }

    #[test]
    fn annex_b() {
        // Without u, \1 with no group is an octal escape, \8 the digit, \k the letter, \p the
        // letter, a lone { } ] a literal, \c without a letter a backslash.
        assert!(test("\\1", "", "\u{1}"));
        assert!(test("^\\8$", "", "8"));
        assert!(test("^\\k$", "", "k"));
        assert!(test("^\\p{L}$", "", "p{L}"));
        assert!(test("^a{$", "", "a{"));
        assert!(test("^}]$", "", "}]"));
        assert!(test("^\\c1$", "", "\\c1"));
        assert!(test("^[\\c1]$", "", "\u{11}"));
        assert!(test("^[\\w-z]+$", "", "a-z_"));
        assert!(test("^\\u{2}$", "", "uu"));
        assert!(test("^\\377\\400$", "", "\u{FF}\u{20}0"));
        assert!(err("{1}", "").message.contains("nothing to repeat"));
        assert!(err("a{", "u").message.contains("incomplete"));
        assert!(err("]", "u").message.contains("lone"));
        assert!(err("\\q", "u").message.contains("invalid escape"));
        assert!(err("[\\w-z]", "u").message.contains("range"));
        assert!(err("[😀-😂]", "").message.contains("out of order"));
        assert!(test("[😀-😂]", "u", "😁"));
    }

    #[test]
    fn case_insensitive() {
        // Without u: toUpperCase canonicalization; ſ and the Kelvin sign stay themselves.
        assert!(!test("s", "i", "ſ"));
        assert!(!test("k", "i", "\u{212A}"));
        assert!(test("ß", "i", "ß"));
        assert!(!test("ß", "i", "ẞ"));
        assert!(test("σ", "i", "ς"));
        assert!(test("µ", "i", "Μ"));
        // With u: simple case folding.
        assert!(test("s", "iu", "ſ"));
        assert!(test("k", "iu", "\u{212A}"));
        assert!(test("ß", "iu", "ẞ"));
        assert!(test("^\\w$", "iu", "ſ"));
        assert!(!test("^\\W$", "iu", "ſ"));
        assert!(!test("^\\w$", "i", "ſ"));
        assert!(test("[^a]", "i", "b"));
        assert!(!test("[^a]", "i", "A"));
        assert!(!test("[^a]", "iu", "A"));
    }

    #[test]
    fn astral_without_u() {
        assert!(!test("^.$", "", "😀"));
        assert!(test("^..$", "", "😀"));
        assert!(test("^.$", "u", "😀"));
        assert!(!test("^😀+$", "", "😀😀"));
        assert!(test("^😀+$", "u", "😀😀"));
        assert!(test("^[😀]$", "u", "😀"));
        assert!(!test("^[😀]$", "", "😀"));
        assert!(test("\\ud83d", "", "😀"));
        assert!(!test("\\ud83d", "u", "😀"));
        assert!(test("\\ud83d\\ude00", "u", "😀"));
        assert!(JsRegex::compile(".", "").unwrap().exec("😀").is_err());
        assert_eq!(all("x*", "g", "😀"), vec!["", "", ""]);
        assert_eq!(all("x*", "gu", "😀"), vec!["", ""]);
        assert_eq!(texts("a.b", "", "a😀b a-b"), Some(vec![Some("a-b")]));
        // V8 lets \B match between the surrogates even with u.
        assert!(test("\\B", "u", "a😀b"));
        assert_eq!(all("\\B|a", "gu", "a😀b"), vec!["a", ""]);
        let re = JsRegex::compile("\\B|a", "gu").unwrap();
        assert_eq!(re.find_all("a😀b").unwrap(), vec![0..1, 1..1]);
        assert!(JsRegex::compile("\\B", "u").unwrap().exec("a😀b").is_err());
    }

    #[test]
    fn multiline() {
        assert_eq!(
            all("^\\w", "gm", "a\nb\rc\u{2028}d\r\ne"),
            vec!["a", "b", "c", "d", "e"]
        );
        assert_eq!(
            all("\\w$", "gm", "a\nb\rc\u{2028}d\r\ne"),
            vec!["a", "b", "c", "d", "e"]
        );
        assert_eq!(all("^", "gm", "\r\n").len(), 3);
        assert!(JsRegex::compile("^\\n", "m").unwrap().test("\r").is_err());
        assert!(JsRegex::compile("^\\n", "m").unwrap().test("\n").unwrap());
        assert!(!test("^b", "", "a\nb"));
        assert!(!test("a$", "", "a\n"));
    }

    #[test]
    fn capture_reset() {
        assert_eq!(texts("(?:(a)|b)+", "", "ab"), Some(vec![Some("ab"), None]));
        assert_eq!(
            texts("(?:(a)|(b))+", "", "ab"),
            Some(vec![Some("ab"), None, Some("b")])
        );
        assert_eq!(
            texts("(?:(a)|b){2}", "", "ab"),
            Some(vec![Some("ab"), None])
        );
        assert_eq!(
            texts("((a)|b)+", "", "ab"),
            Some(vec![Some("ab"), Some("b"), None])
        );
        assert_eq!(
            texts("(?:a(x*)|b)+", "", "ab"),
            Some(vec![Some("ab"), None])
        );
        assert_eq!(
            texts("(?:(x*)b|c)+", "", "bb"),
            Some(vec![Some("bb"), Some("")])
        );
    }

    #[test]
    fn limits() {
        let re = JsRegex::compile("(a+)+$", "").unwrap();
        let s = format!("{}b", "a".repeat(30));
        let t = std::time::Instant::now();
        assert!(!re.test(&s).unwrap());
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        assert!(err(&"(".repeat(1000), "").message.contains("nests"));
        assert!(err(&"(".repeat(100_000), "").message.contains("too long"));
        assert!(err("a{100000}", "").message.contains("too large"));
        assert!(
            err(&"a".repeat(MAX_SOURCE_LEN + 1), "")
                .message
                .contains("too long")
        );
        assert!(err("(?:\\w{1000}){1000}", "").message.contains("too large"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2000,
            failure_persistence: None,
            ..Default::default()
        })]
        /// Arbitrary patterns over the regex syntax: compiling and matching never panics.
        #[test]
        fn arbitrary_patterns_never_panic(
            pattern in "[-\\\\()\\[\\]{}?*+|^$.,:=!<>a-dkpuxcBbDdSsWw0-9_😀\\n\\r\\u{2028}ſ]{0,24}",
            flags in "[gimsuy]{0,3}",
            subject in "[a-c_ \\n\\r\\u{2028}😀ſ\\u{212A}Kk0-9{}-]{0,12}",
        ) {
            if let Ok(re) = JsRegex::compile(&pattern, &flags) {
                let _ = re.test(&subject);
                let _ = re.exec(&subject);
                if let Ok(all) = re.find_all(&subject) {
                    for r in all {
                        proptest::prop_assert!(subject.get(r).is_some());
                    }
                }
                let _ = (re.source(), re.to_js_string(), re.group_count());
            }
        }
    }

    #[test]
    fn never_panics_on_odd_input() {
        for s in [
            "\\",
            "[",
            "(",
            ")",
            "[\\",
            "\\u{",
            "\\u{110000}",
            "\\x",
            "\\c",
            "[\\c",
            "(?<",
            "(?<a",
            "(?<>a)",
            "(?<a>)(?<a>)",
            "a{2,1}",
            "a{99999999999999999999}",
            "\\u{FFFFFFFFFFFFFFFFFFFF}",
            "[z-a]",
            "[\\d-a]",
            "(?",
            "(?:",
            "\\k<a",
            "x**",
            "a|*",
        ] {
            for f in ["", "u", "i", "iu", "m"] {
                let _ = JsRegex::compile(s, f).map(|r| r.test("abc"));
            }
        }
    }
}
