//! `PairMap<V>`: what the world keeps of each pair of entities (contacts, what one saw of
//! another's availability, what one believes of another), as a persistent map in two layers
//! ([`Layered`]): the pairs a snapshot loaded in one sorted array, and the changes since.
//!
//! A world of 10,000 characters keeps hundreds of thousands of pairs, and a snapshot's load
//! inserted each into a persistent B-tree one at a time: 40 % of the thread that opens the
//! replay bench's world (benches/README.md, "Tables loaded in bulk"). Loaded in bulk, they
//! are an array filled by pushing.

use super::layered::{Diff, Layered};
use crate::model::EntityId;
use std::ops::RangeBounds;

/// Two entities, in the order the map's meaning gives them (observer, observed), or for a
/// contact (lower id, higher id).
pub(crate) type Pair = (EntityId, EntityId);

/// A persistent map from a [`Pair`] to what is kept of it (see the module's documentation).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PairMap<V: Clone>(Layered<Pair, V>);

impl<V: Clone> Default for PairMap<V> {
    fn default() -> Self {
        PairMap(Layered::default())
    }
}

impl<V: Clone> PairMap<V> {
    /// The map of `entries`, in any order; the first pair found twice if one is.
    pub(crate) fn from_entries(entries: Vec<(Pair, V)>) -> Result<Self, Pair> {
        Layered::from_entries(entries).map(PairMap)
    }

    /// The map of `entries`, known to be in pair order, no pair twice.
    pub(crate) fn from_sorted(entries: Vec<(Pair, V)>) -> Self {
        PairMap(Layered::from_sorted(entries))
    }

    /// What is kept of `pair`.
    pub fn get(&self, pair: &Pair) -> Option<&V> {
        self.0.get(pair)
    }

    /// True if something is kept of `pair`.
    pub(crate) fn contains(&self, pair: &Pair) -> bool {
        self.0.contains(pair)
    }

    /// Mutable access to what is kept of `pair`.
    pub(crate) fn get_mut(&mut self, pair: &Pair) -> Option<&mut V> {
        self.0.get_mut(pair)
    }

    /// Keeps `value` for `pair`, replacing what was kept.
    pub(crate) fn insert(&mut self, pair: Pair, value: V) {
        self.0.insert(pair, value);
    }

    /// Forgets `pair`; what was kept of it.
    pub(crate) fn remove(&mut self, pair: &Pair) -> Option<V> {
        self.0.remove(pair)
    }

    /// Forgets every pair `entity` is one of.
    pub(crate) fn forget(&mut self, entity: EntityId) {
        let gone: Vec<Pair> = self
            .keys()
            .filter(|(a, b)| *a == entity || *b == entity)
            .copied()
            .collect();
        for pair in gone {
            self.remove(&pair);
        }
    }

    /// The number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no pair is kept.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every pair and what is kept of it, in pair order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Pair, &V)> + '_ {
        self.0.iter()
    }

    /// Every pair, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Pair> + '_ {
        self.0.keys()
    }

    /// The pairs in `range`, in order, with what is kept of each.
    pub fn range<R: RangeBounds<Pair>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = (&Pair, &V)> + '_ {
        self.0.range(range)
    }

    /// The pairs added, changed or removed from `self` to `other`, in pair order (a map
    /// compared with an earlier clone of itself costs what changed since).
    pub(crate) fn diff<'a>(&'a self, other: &'a Self) -> Vec<Diff<'a, Pair, V>>
    where
        V: PartialEq,
    {
        self.0.diff(&other.0)
    }
}
