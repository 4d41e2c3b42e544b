//! Case-insensitive character sets: the equivalence classes of JavaScript's non-`u`
//! canonicalization (`toUpperCase`), computed once from the standard library's Unicode tables,
//! and the case pairs Unicode 17 added that the crate's `(?i)` lacks.

use super::sets::{Ranges, contains, normalize};
use std::sync::OnceLock;

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
pub(super) fn close_non_unicode(v: Ranges) -> Ranges {
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

pub(super) fn add_unicode_17_partners(v: Ranges) -> Ranges {
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
