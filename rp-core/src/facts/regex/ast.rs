//! The syntax tree of a parsed pattern ([`Node`]), its character sets ([`CharSet`]) and the
//! questions the translation asks of it (can a node match the empty string, does it hold a
//! capture).

use super::sets::Ranges;

#[derive(Debug)]
pub(super) enum Node {
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
pub(super) struct Repeat {
    pub(super) node: Node,
    pub(super) min: u32,
    pub(super) max: Option<u32>,
    pub(super) greedy: bool,
}

/// A final character set. `closed` and `negated` are only used with `u` and `i`, where the
/// crate folds case: `ranges` must be folded, `closed` is already closed under case folding
/// (class escapes and `.`; folding their large ranges would make the crate slow), and the set is
/// the complement of both when `negated`. Otherwise `ranges` is the whole set.
#[derive(Debug)]
pub(super) struct CharSet {
    pub(super) ranges: Ranges,
    pub(super) closed: Ranges,
    pub(super) negated: bool,
}

impl CharSet {
    pub(super) fn new(ranges: Ranges) -> CharSet {
        CharSet {
            ranges,
            closed: Vec::new(),
            negated: false,
        }
    }

    /// A set closed under case folding.
    pub(super) fn closed(ranges: Ranges, unicode_ignore_case: bool) -> CharSet {
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
pub(super) enum Assertion {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

/// Whether the node has a path that consumes nothing (assertions count as consuming nothing).
pub(super) fn nullable(n: &Node) -> bool {
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
pub(super) fn mid_nullable(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Assert(Assertion::NotWordBoundary) => true,
        Node::Assert(_) | Node::Set(_) => false,
        Node::Seq(v) => v.iter().all(mid_nullable),
        Node::Alt(v) => v.iter().any(mid_nullable),
        Node::Group(_, n) => mid_nullable(n),
        Node::Repeat(r) => r.min == 0 || mid_nullable(&r.node),
    }
}

pub(super) fn has_capture(n: &Node) -> bool {
    match n {
        Node::Empty | Node::Assert(_) | Node::Set(_) => false,
        Node::Seq(v) | Node::Alt(v) => v.iter().any(has_capture),
        Node::Group(i, n) => i.is_some() || has_capture(n),
        Node::Repeat(r) => has_capture(&r.node),
    }
}
