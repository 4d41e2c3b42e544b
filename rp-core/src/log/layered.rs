//! `Layered<K, V>`: a persistent (copy-on-write) ordered map in two layers: a sorted array
//! of `(key, value)` loaded in bulk and shared by every clone, and the changes made since, in
//! a persistent map.
//!
//! Why not a persistent map alone: a snapshot of a long campaign holds a million memories,
//! and a persistent B-tree has no bulk construction, so loading one was a million inserts on
//! the thread that opens the save, a third of the open (and building each owner's set of
//! memory ids another third; benches/README.md, "Tables loaded in bulk"). An array is filled
//! by pushing. What changes after the load (a turn's few records) goes into the map, so a
//! clone stays O(1) and a batch applied to a copy of the world costs what it changes.
//!
//! Reads look in the changes first, then in the array (binary search over keys held in the
//! array itself, no pointer followed per probe). Iteration merges the two in key order. A
//! value of the array that is changed is copied into the changes, as a shared node of a
//! persistent map is; one that is removed leaves a tombstone there.

use imbl::OrdMap;
use imbl::ordmap::{DiffItem, RangedIter};
use imbl::shared_ptr::DefaultSharedPtr;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// A persistent ordered map: a shared sorted base and the changes since (see the module's
/// documentation).
#[derive(Clone)]
pub(crate) struct Layered<K: Ord + Clone, V: Clone> {
    /// Entries loaded in bulk, sorted by key, no key twice. A `Vec` behind the `Arc` rather
    /// than a slice: `Arc<[T]>` from a `Vec` copies every entry into a new allocation, which
    /// was a third of loading a snapshot's contacts and beliefs (benches/README.md, "A
    /// table's base kept where it was built").
    base: Arc<Vec<(K, V)>>,
    /// Since the load: a value added or replaced (`Some`), or one of `base` removed (`None`).
    changes: OrdMap<K, Option<V>>,
    /// The number of entries visible.
    len: usize,
}

/// How one entry differs between two maps ([`Layered::diff`]).
#[derive(Debug, PartialEq)]
pub(crate) enum Diff<'a, K, V> {
    /// In the second only.
    Add(&'a K, &'a V),
    /// In both, not equal.
    Update { key: &'a K, old: &'a V, new: &'a V },
    /// In the first only.
    Remove(&'a K, &'a V),
}

impl<K: Ord + Clone, V: Clone> Default for Layered<K, V> {
    fn default() -> Self {
        Layered {
            base: Arc::new(Vec::new()),
            changes: OrdMap::new(),
            len: 0,
        }
    }
}

impl<K: Ord + Clone, V: Clone> Layered<K, V> {
    /// A map of `entries`, in any order; the first key found twice if one is.
    pub fn from_entries(mut entries: Vec<(K, V)>) -> Result<Self, K> {
        if !entries.is_sorted_by(|a, b| a.0 < b.0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(w[0].0.clone());
            }
        }
        Ok(Layered::from_sorted(entries))
    }

    /// A map of `entries` known to be in key order, no key twice.
    pub fn from_sorted(mut entries: Vec<(K, V)>) -> Self {
        debug_assert!(entries.is_sorted_by(|a, b| a.0 < b.0));
        // Kept for as long as the world is: no room left over (shrinking is done in place).
        entries.shrink_to_fit();
        Layered {
            len: entries.len(),
            base: Arc::new(entries),
            changes: OrdMap::new(),
        }
    }

    /// A map of one entry.
    pub fn unit(key: K, value: V) -> Self {
        let mut one = Layered::default();
        one.insert(key, value);
        one
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        match self.changes.get(key) {
            Some(changed) => changed.as_ref(),
            None => self.in_base(key),
        }
    }

    /// True if `key` has a value.
    pub fn contains(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    fn in_base(&self, key: &K) -> Option<&V> {
        let at = self.base.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        Some(&self.base[at].1)
    }

    /// Sets the value of `key`; the one it replaces.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let old = match self.changes.insert(key.clone(), Some(value)) {
            Some(changed) => changed,
            None => self.in_base(&key).cloned(),
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Takes out the value of `key`.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let old = match self.changes.get(key) {
            Some(None) => return None,
            Some(Some(_)) if self.in_base(key).is_some() => {
                self.changes.insert(key.clone(), None).flatten()
            }
            Some(Some(_)) => self.changes.remove(key).flatten(),
            None => {
                let old = self.in_base(key)?.clone();
                self.changes.insert(key.clone(), None);
                Some(old)
            }
        };
        self.len -= 1;
        old
    }

    /// Mutable access to the value of `key` (a value of the base is copied into the changes
    /// first).
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        // The array is searched first (no tree walk; nothing to search in a world that was
        // never loaded), so a key only in the changes costs one walk of them.
        if let Some(loaded) = self.in_base(key)
            && !self.changes.contains_key(key)
        {
            let copy = loaded.clone();
            self.changes.insert(key.clone(), Some(copy));
        }
        self.changes.get_mut(key)?.as_mut()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        self.range(..)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The entries whose keys fall in `range`, in key order.
    pub fn range<R: RangeBounds<K>>(&self, range: R) -> Iter<'_, K, V> {
        let from = match range.start_bound() {
            Bound::Included(k) => self.base.partition_point(|(b, _)| b < k),
            Bound::Excluded(k) => self.base.partition_point(|(b, _)| b <= k),
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(k) => self.base.partition_point(|(b, _)| b <= k),
            Bound::Excluded(k) => self.base.partition_point(|(b, _)| b < k),
            Bound::Unbounded => self.base.len(),
        };
        Iter {
            base: self.base[from..to.max(from)].iter(),
            changes: self.changes.range(range),
            base_front: None,
            base_back: None,
            change_front: None,
            change_back: None,
        }
    }
}

impl<K: Ord + Clone, V: Clone + PartialEq> Layered<K, V> {
    /// The entries added, changed or removed from `self` to `other`, in key order. Two maps
    /// that share their base (one a clone of the other, changed since) are compared by their
    /// changes alone, so the cost is what changed.
    pub fn diff<'a>(&'a self, other: &'a Self) -> Vec<Diff<'a, K, V>> {
        let mut out = Vec::new();
        let mut push = |key: &'a K, old: Option<&'a V>, new: Option<&'a V>| match (old, new) {
            (None, Some(new)) => out.push(Diff::Add(key, new)),
            (Some(old), None) => out.push(Diff::Remove(key, old)),
            (Some(old), Some(new)) if old != new => out.push(Diff::Update { key, old, new }),
            _ => {}
        };
        if Arc::ptr_eq(&self.base, &other.base) {
            for item in self.changes.diff(&other.changes) {
                match item {
                    DiffItem::Add(key, new) => push(key, self.in_base(key), new.as_ref()),
                    DiffItem::Remove(key, old) => push(key, old.as_ref(), other.in_base(key)),
                    DiffItem::Update { old, new } => push(new.0, old.1.as_ref(), new.1.as_ref()),
                }
            }
            return out;
        }
        let (mut a, mut b) = (self.iter().peekable(), other.iter().peekable());
        loop {
            let order = match (a.peek(), b.peek()) {
                (None, None) => return out,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some((x, _)), Some((y, _))) => x.cmp(y),
            };
            match order {
                std::cmp::Ordering::Less => {
                    let (k, v) = a.next().expect("peeked");
                    push(k, Some(v), None);
                }
                std::cmp::Ordering::Greater => {
                    let (k, v) = b.next().expect("peeked");
                    push(k, None, Some(v));
                }
                std::cmp::Ordering::Equal => {
                    let ((k, old), (_, new)) =
                        (a.next().expect("peeked"), b.next().expect("peeked"));
                    push(k, Some(old), Some(new));
                }
            }
        }
    }
}

impl<K: Ord + Clone, V: Clone + PartialEq> PartialEq for Layered<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.diff(other).is_empty()
    }
}

impl<K: Ord + Clone + std::fmt::Debug, V: Clone + std::fmt::Debug> std::fmt::Debug
    for Layered<K, V>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

type Change<'a, K, V> = (&'a K, &'a Option<V>);

/// The entries of a [`Layered`] in key order, from either end: the base and the changes
/// merged, each end holding the next entry of each layer it has looked at.
pub(crate) struct Iter<'a, K: Ord + Clone, V: Clone> {
    base: std::slice::Iter<'a, (K, V)>,
    changes: RangedIter<'a, K, Option<V>, DefaultSharedPtr>,
    base_front: Option<&'a (K, V)>,
    base_back: Option<&'a (K, V)>,
    change_front: Option<Change<'a, K, V>>,
    change_back: Option<Change<'a, K, V>>,
}

/// The next item of a layer at one end: the one this end holds, else the next of the
/// layer's iterator at this end, else (the iterator spent) the one the other end holds, which
/// is then the layer's last.
fn peek<T: Copy>(
    mine: &mut Option<T>,
    theirs: &mut Option<T>,
    next: impl FnOnce() -> Option<T>,
) -> Option<T> {
    if mine.is_none() {
        *mine = next().or_else(|| theirs.take());
    }
    *mine
}

/// Which end of an [`Iter`] moves.
#[derive(Clone, Copy)]
enum End {
    Front,
    Back,
}

impl<'a, K: Ord + Clone, V: Clone> Iter<'a, K, V> {
    /// The next entry of the base at `end` (left in place).
    fn peek_base(&mut self, end: End) -> Option<&'a (K, V)> {
        let base = &mut self.base;
        match end {
            End::Front => peek(&mut self.base_front, &mut self.base_back, || base.next()),
            End::Back => peek(&mut self.base_back, &mut self.base_front, || {
                base.next_back()
            }),
        }
    }

    /// The next change at `end` (left in place).
    fn peek_change(&mut self, end: End) -> Option<Change<'a, K, V>> {
        let changes = &mut self.changes;
        match end {
            End::Front => peek(&mut self.change_front, &mut self.change_back, || {
                changes.next()
            }),
            End::Back => peek(&mut self.change_back, &mut self.change_front, || {
                changes.next_back()
            }),
        }
    }

    fn step(&mut self, end: End) -> Option<(&'a K, &'a V)> {
        loop {
            let base = self.peek_base(end);
            let change = self.peek_change(end);
            // Which layer's next entry comes first from this end.
            let (take_base, take_change) = match (base, change) {
                (None, None) => return None,
                (Some(_), None) => (true, false),
                (None, Some(_)) => (false, true),
                (Some((b, _)), Some((k, _))) => match (b.cmp(k), end) {
                    (std::cmp::Ordering::Equal, _) => (true, true),
                    (std::cmp::Ordering::Less, End::Front)
                    | (std::cmp::Ordering::Greater, End::Back) => (true, false),
                    _ => (false, true),
                },
            };
            let (base_slot, change_slot) = match end {
                End::Front => (&mut self.base_front, &mut self.change_front),
                End::Back => (&mut self.base_back, &mut self.change_back),
            };
            let base = if take_base { base_slot.take() } else { None };
            if !take_change {
                return base.map(|(k, v)| (k, v));
            }
            // A change stands for the base's entry of its key: a new value, or none.
            if let Some((k, Some(v))) = change_slot.take() {
                return Some((k, v));
            }
        }
    }
}

impl<'a, K: Ord + Clone, V: Clone> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);
    fn next(&mut self) -> Option<(&'a K, &'a V)> {
        self.step(End::Front)
    }
}

impl<'a, K: Ord + Clone, V: Clone> DoubleEndedIterator for Iter<'a, K, V> {
    fn next_back(&mut self) -> Option<(&'a K, &'a V)> {
        self.step(End::Back)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A test entry: a key and a value.
    #[derive(Clone, Debug, PartialEq)]
    struct Kv(u8, u8);

    type Map = Layered<u8, u8>;

    fn load(entries: Vec<Kv>) -> Result<Map, u8> {
        Map::from_entries(entries.into_iter().map(|Kv(k, v)| (k, v)).collect())
    }

    fn listed<'a>(it: impl Iterator<Item = (&'a u8, &'a u8)>) -> Vec<Kv> {
        it.map(|(k, v)| Kv(*k, *v)).collect()
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, u8),
        Remove(u8),
        Bump(u8),
        /// Keep a clone to diff against later.
        Fork,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..40u8, any::<u8>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0..40u8).prop_map(Op::Remove),
            (0..40u8).prop_map(Op::Bump),
            Just(Op::Fork),
        ]
    }

    fn entries(model: &BTreeMap<u8, u8>) -> Vec<Kv> {
        model.iter().map(|(k, v)| Kv(*k, *v)).collect()
    }

    /// What `diff` must say, from the two models.
    fn model_diff(a: &BTreeMap<u8, u8>, b: &BTreeMap<u8, u8>) -> Vec<(u8, Option<u8>, Option<u8>)> {
        let keys: std::collections::BTreeSet<u8> = a.keys().chain(b.keys()).copied().collect();
        keys.into_iter()
            .map(|k| (k, a.get(&k).copied(), b.get(&k).copied()))
            .filter(|(_, x, y)| x != y)
            .collect()
    }

    fn as_triples(diff: Vec<Diff<'_, u8, u8>>) -> Vec<(u8, Option<u8>, Option<u8>)> {
        diff.into_iter()
            .map(|d| match d {
                Diff::Add(k, n) => (*k, None, Some(*n)),
                Diff::Remove(k, o) => (*k, Some(*o), None),
                Diff::Update { key, old, new } => (*key, Some(*old), Some(*new)),
            })
            .collect()
    }

    proptest! {
        /// A layered collection, loaded from any entries and changed in any way, reads at
        /// every step as an ordinary ordered map given the same changes: lookups, length,
        /// iteration from both ends and meeting in the middle, ranges, and the diff against
        /// an earlier clone (sharing the base) or another load (not sharing it).
        #[test]
        fn a_layered_collection_reads_as_an_ordered_map(
            loaded in proptest::collection::btree_map(0..40u8, any::<u8>(), 0..30),
            ops in proptest::collection::vec(op(), 0..60),
            lo in 0..45u8,
            hi in 0..45u8,
            split in 0..50usize,
        ) {
            let mut model = loaded.clone();
            let mut under = load(entries(&loaded).into_iter().rev().collect()).unwrap();
            let mut fork = (model.clone(), under.clone());
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let old = under.insert(k, v);
                        prop_assert_eq!(old, model.insert(k, v));
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(under.remove(&k), model.remove(&k));
                    }
                    Op::Bump(k) => {
                        let got = under.get_mut(&k).map(|v| { *v = v.wrapping_add(1); *v });
                        let want = model.get_mut(&k).map(|v| { *v = v.wrapping_add(1); *v });
                        prop_assert_eq!(got, want);
                    }
                    Op::Fork => fork = (model.clone(), under.clone()),
                }
                prop_assert_eq!(under.len(), model.len());
                prop_assert_eq!(listed(under.iter()), entries(&model));
            }
            for k in 0..45u8 {
                prop_assert_eq!(under.get(&k).copied(), model.get(&k).copied());
            }
            let want: Vec<Kv> = entries(&model).into_iter().rev().collect();
            prop_assert_eq!(listed(under.iter().rev()), want);
            // Both ends at once: front `split` entries, then the rest from the back.
            let mut it = under.iter();
            let mut front: Vec<Kv> = listed(it.by_ref().take(split));
            let mut back: Vec<Kv> = listed(it.rev());
            back.reverse();
            front.extend(back);
            prop_assert_eq!(front, entries(&model));
            if lo <= hi {
                let got: Vec<u8> = under.range(lo..hi).map(|(k, _)| *k).collect();
                let want: Vec<u8> = model.range(lo..hi).map(|(k, _)| *k).collect();
                prop_assert_eq!(got, want);
                let got: Vec<u8> = under.range(lo..=hi).rev().map(|(k, _)| *k).collect();
                let want: Vec<u8> = model.range(lo..=hi).rev().map(|(k, _)| *k).collect();
                prop_assert_eq!(got, want);
            }
            let (old_model, old) = fork;
            prop_assert_eq!(as_triples(old.diff(&under)), model_diff(&old_model, &model));
            let reloaded = load(entries(&model)).unwrap();
            prop_assert_eq!(as_triples(old.diff(&reloaded)), model_diff(&old_model, &model));
            prop_assert!(reloaded == under);
            prop_assert_eq!(old == under, old_model == model);
        }
    }

    #[test]
    fn a_key_loaded_twice_is_named() {
        let twice = vec![Kv(3, 0), Kv(1, 0), Kv(3, 1)];
        assert_eq!(load(twice).unwrap_err(), 3);
        let sorted = vec![Kv(1, 0), Kv(2, 0), Kv(2, 1)];
        assert_eq!(load(sorted).unwrap_err(), 2);
    }
}
