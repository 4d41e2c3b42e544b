//! The fast path of `test` for regexes that are a small set of literal ASCII words
//! ([`Literals`]), read from the syntax tree and searched with a SIMD prefilter.

use super::ast::{Assertion, CharSet, Node};

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
pub(super) struct Literals {
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
    pub(super) fn of(ast: &Node) -> Option<Literals> {
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
    pub(super) fn test(&self, subject: &str) -> bool {
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
