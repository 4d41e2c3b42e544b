//! Translation of the syntax tree into the `regex` crate's syntax: every set as an explicit
//! class of ranges, every anchor as an explicit crate assertion, and the hidden groups that
//! apply JavaScript's capture reset in repetitions.

use super::ast::{Assertion, CharSet, Node, has_capture, nullable};
use super::sets::{LINE_TERMINATORS, Ranges, complement, contains, normalize};
use super::{Flags, MAX_TRANSLATED_LEN, Parent, RegexError};

/// Where a node sits in the current iteration of the innermost enclosing repetition (or in the
/// whole pattern): whether everything before / after it can be empty, and whether every path
/// through the iteration goes through it.
#[derive(Clone, Copy)]
pub(super) struct Place {
    pub(super) prefix: bool,
    pub(super) suffix: bool,
    pub(super) mandatory: bool,
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

pub(super) struct Emitter {
    pub(super) flags: Flags,
    pub(super) out: String,
    pub(super) next_crate: usize,
    pub(super) slots: Vec<usize>,
    pub(super) parents: Vec<Option<Parent>>,
    pub(super) has_surrogates: bool,
    pub(super) has_not_word_boundary: bool,
    pub(super) has_word_boundary: bool,
    pub(super) multiline_anchors: bool,
    pub(super) lt_uniform: bool,
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
    pub(super) fn emit(
        &mut self,
        n: &Node,
        place: Place,
        parent: Option<usize>,
    ) -> Result<(), RegexError> {
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
