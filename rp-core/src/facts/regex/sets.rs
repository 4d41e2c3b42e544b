//! Character sets as sorted lists of ranges ([`Ranges`]), their operations, and JavaScript's
//! sets for `\d`, `\w`, `\s` and the line terminators.

/// Sorted, disjoint, non-adjacent inclusive ranges of code points (with `u`) or code units
/// (without).
pub(super) type Ranges = Vec<(u32, u32)>;

pub(super) fn normalize(mut v: Ranges) -> Ranges {
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

pub(super) fn complement(v: &[(u32, u32)], max: u32) -> Ranges {
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

pub(super) fn contains(v: &[(u32, u32)], c: u32) -> bool {
    let i = v.partition_point(|&(_, hi)| hi < c);
    v.get(i).is_some_and(|&(lo, _)| lo <= c)
}

pub(super) const LINE_TERMINATORS: [u32; 4] = [0x0A, 0x0D, 0x2028, 0x2029];

pub(super) fn digit_ranges() -> Ranges {
    vec![(0x30, 0x39)]
}

/// JavaScript's word characters; with `u` and `i` also ſ and K (their case folding is ASCII).
pub(super) fn word_ranges(unicode_ignore_case: bool) -> Ranges {
    let mut v = vec![(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
    if unicode_ignore_case {
        v.push((0x17F, 0x17F));
        v.push((0x212A, 0x212A));
    }
    v
}

/// JavaScript's `\s`: WhiteSpace and LineTerminator.
pub(super) fn space_ranges() -> Ranges {
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
