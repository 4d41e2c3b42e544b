//! `Layered<E>`: a persistent (copy-on-write) ordered collection of entries, in two layers: a
//! sorted array loaded in bulk and shared by every clone, and the changes made since, in a
//! persistent map.
//!
//! Why not a persistent map alone: a snapshot of a long campaign holds a million memories,
//! and a persistent B-tree has no bulk construction, so loading one was a million inserts on
//! the thread that opens the save, a third of the open (and building each owner's set of
//! memory ids another third; benches/README.md, "Tables loaded in bulk"). An array is filled
//! by pushing. What changes after the load (a turn's few records) goes into the map, so a
//! clone stays O(1) and a batch applied to a copy of the world costs what it changes.
//!
//! Reads look in the changes first, then in the array (binary search). Iteration merges the
//! two in key order. A record of the array that is changed is copied into the changes, as a
//! shared node of a persistent map is; one that is removed leaves a tombstone there.

use imbl::OrdMap;
use imbl::ordmap::{DiffItem, RangedIter};
use imbl::shared_ptr::DefaultSharedPtr;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// An entry that knows its own key.
pub(crate) trait Entry: Clone + PartialEq {
    /// The key type.
    type Key: Ord + Clone + std::fmt::Debug;
    /// The entry's key.
    fn key(&self) -> Self::Key;
}

/// A persistent ordered collection: a shared sorted base and the changes since (see the
/// module's documentation).
#[derive(Clone)]
pub(crate) struct Layered<E: Entry> {
    /// Entries loaded in bulk, sorted by key, no key twice.
    base: Arc<[E]>,
    /// Since the load: an entry added or replaced (`Some`), or one of `base` removed (`None`).
    changes: OrdMap<E::Key, Option<E>>,
    /// The number of entries visible.
    len: usize,
}

/// How one entry differs between two collections ([`Layered::diff`]).
#[derive(Debug, PartialEq)]
pub(crate) enum Diff<'a, E> {
    /// In the second only.
    Add(&'a E),
    /// In both, not equal.
    Update { old: &'a E, new: &'a E },
    /// In the first only.
    Remove(&'a E),
}

impl<E: Entry> Default for Layered<E> {
    fn default() -> Self {
        Layered {
            base: Arc::from(Vec::new()),
            changes: OrdMap::new(),
            len: 0,
        }
    }
}

impl<E: Entry> Layered<E> {
    /// A collection of `entries`, in any order; the first key found twice if one is.
    pub fn from_entries(mut entries: Vec<E>) -> Result<Self, E::Key> {
        if !entries.is_sorted_by(|a, b| a.key() < b.key()) {
            entries.sort_by_key(E::key);
            if let Some(w) = entries.windows(2).find(|w| w[0].key() == w[1].key()) {
                return Err(w[0].key());
            }
        }
        Ok(Layered {
            len: entries.len(),
            base: Arc::from(entries),
            changes: OrdMap::new(),
        })
    }

    /// A collection of `entries` known to be in key order, no key twice.
    pub fn from_sorted(entries: Vec<E>) -> Self {
        debug_assert!(entries.is_sorted_by(|a, b| a.key() < b.key()));
        Layered {
            len: entries.len(),
            base: Arc::from(entries),
            changes: OrdMap::new(),
        }
    }

    /// A collection of one entry.
    pub fn unit(entry: E) -> Self {
        let mut one = Layered::default();
        one.insert(entry);
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

    /// The entry with that key.
    pub fn get(&self, key: &E::Key) -> Option<&E> {
        match self.changes.get(key) {
            Some(changed) => changed.as_ref(),
            None => self.in_base(key),
        }
    }

    /// True if an entry has that key.
    pub fn contains(&self, key: &E::Key) -> bool {
        self.get(key).is_some()
    }

    fn in_base(&self, key: &E::Key) -> Option<&E> {
        let at = self.base.binary_search_by(|e| e.key().cmp(key)).ok()?;
        Some(&self.base[at])
    }

    /// Adds `entry`, or replaces the one with its key; the one it replaces.
    pub fn insert(&mut self, entry: E) -> Option<E> {
        let key = entry.key();
        let old = match self.changes.insert(key.clone(), Some(entry)) {
            Some(changed) => changed,
            None => self.in_base(&key).cloned(),
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Takes out the entry with that key.
    pub fn remove(&mut self, key: &E::Key) -> Option<E> {
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

    /// Mutable access to the entry with that key (an entry of the base is copied into the
    /// changes first).
    pub fn get_mut(&mut self, key: &E::Key) -> Option<&mut E> {
        if !self.changes.contains_key(key) {
            let copy = self.in_base(key)?.clone();
            self.changes.insert(key.clone(), Some(copy));
        }
        self.changes.get_mut(key)?.as_mut()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_, E> {
        self.range(..)
    }

    /// The entries whose keys fall in `range`, in key order.
    pub fn range<R: RangeBounds<E::Key>>(&self, range: R) -> Iter<'_, E> {
        let from = match range.start_bound() {
            Bound::Included(k) => self.base.partition_point(|e| e.key() < *k),
            Bound::Excluded(k) => self.base.partition_point(|e| e.key() <= *k),
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(k) => self.base.partition_point(|e| e.key() <= *k),
            Bound::Excluded(k) => self.base.partition_point(|e| e.key() < *k),
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

    /// The entries added, changed or removed from `self` to `other`, in key order. Two
    /// collections that share their base (one a clone of the other, changed since) are
    /// compared by their changes alone, so the cost is what changed.
    pub fn diff<'a>(&'a self, other: &'a Self) -> Vec<Diff<'a, E>> {
        let mut out = Vec::new();
        let mut push = |old: Option<&'a E>, new: Option<&'a E>| match (old, new) {
            (None, Some(new)) => out.push(Diff::Add(new)),
            (Some(old), None) => out.push(Diff::Remove(old)),
            (Some(old), Some(new)) if old != new => out.push(Diff::Update { old, new }),
            _ => {}
        };
        if Arc::ptr_eq(&self.base, &other.base) {
            for item in self.changes.diff(&other.changes) {
                match item {
                    DiffItem::Add(key, new) => push(self.in_base(key), new.as_ref()),
                    DiffItem::Remove(key, old) => push(old.as_ref(), other.in_base(key)),
                    DiffItem::Update { old, new } => push(old.1.as_ref(), new.1.as_ref()),
                }
            }
            return out;
        }
        let (mut a, mut b) = (self.iter().peekable(), other.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => return out,
                (Some(_), None) => push(a.next(), None),
                (None, Some(_)) => push(None, b.next()),
                (Some(x), Some(y)) => match x.key().cmp(&y.key()) {
                    std::cmp::Ordering::Less => push(a.next(), None),
                    std::cmp::Ordering::Greater => push(None, b.next()),
                    std::cmp::Ordering::Equal => push(a.next(), b.next()),
                },
            }
        }
    }
}

impl<E: Entry> PartialEq for Layered<E> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.diff(other).is_empty()
    }
}

impl<E: Entry + std::fmt::Debug> std::fmt::Debug for Layered<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, E: Entry> IntoIterator for &'a Layered<E> {
    type Item = &'a E;
    type IntoIter = Iter<'a, E>;
    fn into_iter(self) -> Iter<'a, E> {
        self.iter()
    }
}

type Change<'a, E> = (&'a <E as Entry>::Key, &'a Option<E>);

/// The entries of a [`Layered`] in key order, from either end: the base and the changes
/// merged, each end holding the next entry of each layer it has looked at.
pub(crate) struct Iter<'a, E: Entry> {
    base: std::slice::Iter<'a, E>,
    changes: RangedIter<'a, E::Key, Option<E>, DefaultSharedPtr>,
    base_front: Option<&'a E>,
    base_back: Option<&'a E>,
    change_front: Option<Change<'a, E>>,
    change_back: Option<Change<'a, E>>,
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

impl<'a, E: Entry> Iter<'a, E> {
    /// The next entry of the base at `end` (left in place).
    fn peek_base(&mut self, end: End) -> Option<&'a E> {
        let base = &mut self.base;
        match end {
            End::Front => peek(&mut self.base_front, &mut self.base_back, || base.next()),
            End::Back => peek(&mut self.base_back, &mut self.base_front, || {
                base.next_back()
            }),
        }
    }

    /// The next change at `end` (left in place).
    fn peek_change(&mut self, end: End) -> Option<Change<'a, E>> {
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

    fn step(&mut self, end: End) -> Option<&'a E> {
        loop {
            let base = self.peek_base(end);
            let change = self.peek_change(end);
            // Which layer's next entry comes first from this end.
            let (take_base, take_change) = match (base, change) {
                (None, None) => return None,
                (Some(_), None) => (true, false),
                (None, Some(_)) => (false, true),
                (Some(b), Some((k, _))) => match (b.key().cmp(k), end) {
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
                return base;
            }
            // A change stands for the base's entry of its key: a new value, or none.
            if let Some((_, Some(entry))) = change_slot.take() {
                return Some(entry);
            }
        }
    }
}

impl<'a, E: Entry> Iterator for Iter<'a, E> {
    type Item = &'a E;
    fn next(&mut self) -> Option<&'a E> {
        self.step(End::Front)
    }
}

impl<'a, E: Entry> DoubleEndedIterator for Iter<'a, E> {
    fn next_back(&mut self) -> Option<&'a E> {
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

    impl Entry for Kv {
        type Key = u8;
        fn key(&self) -> u8 {
            self.0
        }
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

    fn as_triples(diff: Vec<Diff<'_, Kv>>) -> Vec<(u8, Option<u8>, Option<u8>)> {
        diff.into_iter()
            .map(|d| match d {
                Diff::Add(n) => (n.0, None, Some(n.1)),
                Diff::Remove(o) => (o.0, Some(o.1), None),
                Diff::Update { old, new } => (old.0, Some(old.1), Some(new.1)),
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
            let mut under = Layered::from_entries(entries(&loaded).into_iter().rev().collect())
                .unwrap();
            let mut fork = (model.clone(), under.clone());
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let old = under.insert(Kv(k, v)).map(|e| e.1);
                        prop_assert_eq!(old, model.insert(k, v));
                    }
                    Op::Remove(k) => {
                        prop_assert_eq!(under.remove(&k).map(|e| e.1), model.remove(&k));
                    }
                    Op::Bump(k) => {
                        let got = under.get_mut(&k).map(|e| { e.1 = e.1.wrapping_add(1); e.1 });
                        let want = model.get_mut(&k).map(|v| { *v = v.wrapping_add(1); *v });
                        prop_assert_eq!(got, want);
                    }
                    Op::Fork => fork = (model.clone(), under.clone()),
                }
                prop_assert_eq!(under.len(), model.len());
                prop_assert_eq!(under.iter().cloned().collect::<Vec<_>>(), entries(&model));
            }
            for k in 0..45u8 {
                prop_assert_eq!(under.get(&k).map(|e| e.1), model.get(&k).copied());
            }
            let want: Vec<Kv> = entries(&model).into_iter().rev().collect();
            prop_assert_eq!(under.iter().rev().cloned().collect::<Vec<_>>(), want);
            // Both ends at once: front `split` entries, then the rest from the back.
            let mut it = under.iter();
            let mut front: Vec<Kv> = it.by_ref().take(split).cloned().collect();
            let mut back: Vec<Kv> = it.rev().cloned().collect();
            back.reverse();
            front.extend(back);
            prop_assert_eq!(front, entries(&model));
            if lo <= hi {
                let got: Vec<u8> = under.range(lo..hi).map(|e| e.0).collect();
                let want: Vec<u8> = model.range(lo..hi).map(|(k, _)| *k).collect();
                prop_assert_eq!(got, want);
                let got: Vec<u8> = under.range(lo..=hi).rev().map(|e| e.0).collect();
                let want: Vec<u8> = model.range(lo..=hi).rev().map(|(k, _)| *k).collect();
                prop_assert_eq!(got, want);
            }
            let (old_model, old) = fork;
            prop_assert_eq!(as_triples(old.diff(&under)), model_diff(&old_model, &model));
            let reloaded = Layered::from_entries(entries(&model)).unwrap();
            prop_assert_eq!(as_triples(old.diff(&reloaded)), model_diff(&old_model, &model));
            prop_assert!(reloaded == under);
            prop_assert_eq!(old == under, old_model == model);
        }
    }

    #[test]
    fn a_key_loaded_twice_is_named() {
        let twice = vec![Kv(3, 0), Kv(1, 0), Kv(3, 1)];
        assert_eq!(Layered::from_entries(twice).unwrap_err(), 3);
        let sorted = vec![Kv(1, 0), Kv(2, 0), Kv(2, 1)];
        assert_eq!(Layered::from_entries(sorted).unwrap_err(), 2);
    }
}
