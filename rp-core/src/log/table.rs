//! `Table<V>`: a persistent (copy-on-write) ordered map from a record's own key to the record.
//!
//! Cloning a table is O(1) and shares structure, so a batch of events can be applied to a copy
//! of the world and thrown away on failure. A table serialises as the sequence of its records
//! in key order, which is deterministic and readable as JSON.

use super::layered::{Diff, Layered};
use serde::de::{Deserialize, Deserializer, Error as _, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::sync::Arc;

/// A record that knows its own key.
pub trait Keyed: Clone {
    /// The key type.
    type Key: Ord + Clone + std::fmt::Debug;
    /// The record's key.
    fn key(&self) -> Self::Key;
}

/// An ordered, copy-on-write map of records by their own key. A table loaded from a snapshot
/// keeps its records in one sorted array and what changes since in a persistent map
/// (`log::layered`).
#[derive(Clone, Debug)]
pub struct Table<V: Keyed>(Layered<V::Key, Arc<V>>);

impl<V: Keyed> Default for Table<V> {
    fn default() -> Self {
        Table(Layered::default())
    }
}

impl<V: Keyed> Table<V> {
    /// The record with that key.
    pub fn get(&self, key: &V::Key) -> Option<&V> {
        self.0.get(key).map(Arc::as_ref)
    }

    /// True if a record has that key.
    pub fn contains(&self, key: &V::Key) -> bool {
        self.0.contains(key)
    }

    /// The records in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.0.iter().map(|(_, v)| v.as_ref())
    }

    /// The records whose keys fall in `range`, in key order.
    pub fn range<R: std::ops::RangeBounds<V::Key>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.0.range(range).map(|(_, v)| v.as_ref())
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn insert(&mut self, value: V) {
        self.0.insert(value.key(), Arc::new(value));
    }

    pub(crate) fn remove(&mut self, key: &V::Key) -> Option<V> {
        self.0.remove(key).map(Arc::unwrap_or_clone)
    }

    /// The records added, changed or removed from `self` to `other`, in key order (a table
    /// compared with an earlier clone of itself costs what changed since).
    pub(crate) fn diff<'a>(&'a self, other: &'a Self) -> Vec<Diff<'a, V::Key, Arc<V>>>
    where
        V: PartialEq,
    {
        self.0.diff(&other.0)
    }

    /// Mutable access, copying the record only if a clone of the table still shares it.
    pub(crate) fn get_mut(&mut self, key: &V::Key) -> Option<&mut V> {
        self.0.get_mut(key).map(Arc::make_mut)
    }
}

impl<V: Keyed + PartialEq> PartialEq for Table<V> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<V: Keyed + Serialize> Serialize for Table<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for (_, v) in self.0.iter() {
            seq.serialize_element(v.as_ref())?;
        }
        seq.end()
    }
}

impl<'de, V: Keyed + Deserialize<'de>> Deserialize<'de> for Table<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Records<V>(std::marker::PhantomData<V>);
        impl<'de, V: Keyed + Deserialize<'de>> Visitor<'de> for Records<V> {
            type Value = Table<V>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence of records")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Table<V>, A::Error> {
                let mut loading = Loading::default();
                while let Some(v) = seq.next_element::<V>()? {
                    loading.insert(Arc::new(v));
                }
                loading.finish().map_err(A::Error::custom)
            }
        }
        deserializer.deserialize_seq(Records(std::marker::PhantomData))
    }
}

/// A table being loaded from records (in key order as a table writes them, or in any order).
pub(crate) struct Loading<V: Keyed> {
    records: Vec<(V::Key, Arc<V>)>,
}

impl<V: Keyed> Default for Loading<V> {
    fn default() -> Self {
        Loading {
            records: Vec::new(),
        }
    }
}

impl<V: Keyed> Loading<V> {
    /// Adds a record.
    pub(crate) fn insert(&mut self, v: Arc<V>) {
        self.records.push((v.key(), v));
    }

    /// Adds records, each beside its key.
    pub(crate) fn extend(&mut self, keyed: Vec<(V::Key, Arc<V>)>) {
        self.records.extend(keyed);
    }

    /// [`Loading::finish`], and whether the records were added in key order (then they are
    /// taken as they are, not checked again).
    pub(crate) fn finish_in_order(self) -> Result<(Table<V>, bool), String> {
        if self.records.is_sorted_by(|a, b| a.0 < b.0) {
            return Ok((Table(Layered::from_sorted(self.records)), true));
        }
        self.finish().map(|table| (table, false))
    }

    /// The table of the records added; an error naming a record whose key was added twice.
    pub(crate) fn finish(self) -> Result<Table<V>, String> {
        Layered::from_entries(self.records)
            .map(Table)
            .map_err(|key| format!("duplicate record {key:?}"))
    }
}

macro_rules! keyed {
    ($ty:ty, $key:ty, |$v:ident| $e:expr) => {
        impl Keyed for $ty {
            type Key = $key;
            fn key(&self) -> $key {
                let $v = self;
                $e
            }
        }
    };
}

use crate::model::*;
keyed!(Entity, EntityId, |v| v.id);
keyed!(Container, ContainerId, |v| v.id);
keyed!(Edge, (EntityId, EntityId), |v| (v.from, v.to));
keyed!(Group, GroupId, |v| v.id);
keyed!(Memory, MemoryId, |v| v.id);
keyed!(ScopedEvent, ScopedEventId, |v| v.id);
keyed!(Thread, ThreadId, |v| v.id);
keyed!(Scene, SceneId, |v| v.id);
keyed!(crate::model::WorldQuery, QueryId, |v| v.id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Group, GroupId};

    fn group(id: u64) -> serde_json::Value {
        serde_json::to_value(Group {
            id: GroupId(id),
            members: Default::default(),
            name: None,
            summary: String::new(),
            shared: Vec::new(),
        })
        .unwrap()
    }

    fn table(ids: &[u64]) -> Result<Table<Group>, serde_json::Error> {
        serde_json::from_value(ids.iter().map(|id| group(*id)).collect())
    }

    #[test]
    fn records_load_in_any_order_and_twice_is_refused() {
        let ids = |t: &Table<Group>| t.iter().map(|g| g.id.0).collect::<Vec<_>>();
        assert_eq!(ids(&table(&[1, 2, 5]).unwrap()), [1, 2, 5]);
        assert_eq!(ids(&table(&[5, 1, 2]).unwrap()), [1, 2, 5]);
        for twice in [&[1, 2, 2][..], &[2, 1, 2], &[3, 1, 2, 1]] {
            let e = table(twice).unwrap_err().to_string();
            assert!(e.contains("duplicate record"), "{e}");
        }
    }
}
