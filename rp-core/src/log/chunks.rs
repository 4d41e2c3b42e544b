//! A snapshot's table written in chunks: each chunk a MessagePack `bin` holding an array of
//! some of its records, each record the array of its fields (by position). The memories are
//! written so since format 3 (`memory_rows`), the edges since format 5 (`edge_rows`).
//!
//! A chunk is a self-contained value whose length is known before it is read, so the chunks of
//! a table decode on every core (as the snapshot's frames decompress), and the table is filled
//! from them in order, each chunk as soon as it is decoded. Before, a table of many records
//! decoded on one thread while the other cores waited.
//!
//! A table written record by record (by name, or by position), as builds before wrote them,
//! reads as it did: a table may hold chunks and single records, in any order, and a record is
//! refused if its key was read before.

use super::compress::{in_order, in_parallel};
use super::table::{Keyed, Loading, Table};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{
    Deserialize, DeserializeOwned, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};
use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

/// A record a chunk holds as the array of its fields.
pub(super) trait Positional {
    /// Writes the record as the array of all its fields, in the order its type declares them
    /// (which serde's derived reader follows).
    fn serialize_fields<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

/// A record written as the array of its fields.
pub(super) struct ByPosition<'a, V>(pub &'a V);

impl<V: Positional> Serialize for ByPosition<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_fields(s)
    }
}

/// Writes `table` as chunks of `per_chunk` records, each by position. The chunks are encoded
/// on every core.
pub(super) fn write<S, V>(table: &Table<V>, per_chunk: usize, s: S) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    V: Keyed + Positional + Sync,
{
    let rows: Vec<&V> = table.iter().collect();
    let chunks = in_parallel(rows.chunks(per_chunk).collect(), |chunk: &[&V]| {
        let mut out = Vec::with_capacity(chunk.len() * 160);
        let mut ser = rmp_serde::Serializer::new(&mut out).with_struct_map();
        // A record serialises infallibly into a Vec (as every model type does).
        ser.collect_seq(chunk.iter().map(|v| ByPosition(*v)))
            .expect("serialising into memory cannot fail");
        out
    });
    let mut seq = s.serialize_seq(Some(chunks.len()))?;
    for chunk in &chunks {
        seq.serialize_element(&Bytes(chunk))?;
    }
    seq.end()
}

/// A table read from its chunks and single records.
pub(super) struct Read<V: Keyed, G> {
    pub table: Table<V>,
    /// What `gather` made of each chunk, joined in order; `None` unless every record came in
    /// a chunk and the chunks in key order (so it describes the whole table, in order).
    pub gathered: Option<G>,
}

/// Reads the elements of a table of any age: chunks, decoded on every core, and single records
/// by name or by position. The thread that decodes a chunk also runs `gather` over its records
/// while they are still in its cache; the calling thread joins what each chunk gave into
/// `joined`, in order. `what` names the records in errors ("memories").
pub(super) fn read<'de, A, V, G>(
    mut seq: A,
    what: &str,
    gather: impl Fn(&[Arc<V>]) -> G + Sync,
    mut joined: G,
    mut join: impl FnMut(&mut G, G),
) -> Result<Read<V, G>, A::Error>
where
    A: SeqAccess<'de>,
    V: Keyed + DeserializeOwned + Send + Sync,
    V::Key: Send,
    G: Send,
{
    let mut loading = Loading::default();
    let mut chunks = Vec::new();
    let mut singles = false;
    while let Some(item) = seq.next_element::<Item<'de, V>>()? {
        match item {
            Item::One(record) => {
                singles = true;
                loading.insert(record);
            }
            Item::Chunk(bytes) => chunks.push(bytes),
        }
    }
    // Each record into its own `Arc` (serde's `rc`, which decodes a `Box` and moves it into
    // the `Arc`; one allocation instead of the two measured the same: benches/README.md,
    // "A snapshot freed once decompressed").
    in_order(
        chunks,
        |bytes| {
            let records = super::codec::decode_payload::<Vec<Arc<V>>>(&bytes)?;
            let gathered = gather(&records);
            let keyed: Vec<(V::Key, Arc<V>)> = records.into_iter().map(|v| (v.key(), v)).collect();
            Ok((keyed, gathered))
        },
        |decoded: Result<_, String>| {
            let (keyed, gathered) = decoded.map_err(|e| format!("a chunk of {what}: {e}"))?;
            loading.extend(keyed);
            join(&mut joined, gathered);
            Ok::<(), String>(())
        },
    )
    .map_err(A::Error::custom)?;
    let (table, in_order) = loading.finish_in_order().map_err(A::Error::custom)?;
    Ok(Read {
        table,
        gathered: (!singles && in_order).then_some(joined),
    })
}

/// Bytes written as a MessagePack `bin`.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// An element of a table: a chunk, or one record (by name or by position).
enum Item<'de, V> {
    Chunk(Cow<'de, [u8]>),
    One(Arc<V>),
}

impl<'de, V: DeserializeOwned> Deserialize<'de> for Item<'de, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor(PhantomData))
    }
}

struct ItemVisitor<V>(PhantomData<V>);

impl<'de, V: DeserializeOwned> Visitor<'de> for ItemVisitor<V> {
    type Value = Item<'de, V>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a record or a chunk of records")
    }

    fn visit_borrowed_bytes<E: serde::de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        Ok(Item::Chunk(Cow::Borrowed(v)))
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(Item::Chunk(Cow::Owned(v.to_vec())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        V::deserialize(SeqAccessDeserializer::new(seq)).map(|v| Item::One(Arc::new(v)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        V::deserialize(MapAccessDeserializer::new(map)).map(|v| Item::One(Arc::new(v)))
    }
}

/// Bytes as the tests of the tables written in chunks build them by hand.
#[cfg(test)]
pub(super) mod by_hand {
    use super::*;

    /// One record by position, as a chunk holds it.
    pub fn row<V: Positional>(v: &V) -> Vec<u8> {
        let mut out = Vec::new();
        ByPosition(v)
            .serialize(&mut rmp_serde::Serializer::new(&mut out).with_struct_map())
            .unwrap();
        out
    }

    /// `bytes` as a MessagePack `bin` (of 32-bit length, whatever its length).
    pub fn bin(bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![0xc6];
        out.extend((bytes.len() as u32).to_be_bytes());
        out.extend(bytes);
        out
    }

    /// Tables of one chunk holding `v`, the chunk damaged in each way any chunk can be, each
    /// with what its error says (`what` names the records, as [`read`] does: "edges").
    pub fn damaged<V: Positional>(v: &V, what: &str) -> Vec<(Vec<u8>, String)> {
        let good = [&[0x91][..], &row(v)].concat();
        let named = format!("a chunk of {what}");
        [
            // Claims two records, holds one.
            ([&[0x92][..], &row(v)].concat(), named.clone()),
            // Bytes after its array.
            ([&good[..], &[0xc0]].concat(), "trailing".to_owned()),
            // Not MessagePack at all.
            (vec![0xc1, 0xc1], named),
        ]
        .into_iter()
        .map(|(chunk, says)| ([&[0x91][..], &bin(&chunk)].concat(), says))
        .collect()
    }

    /// A table of four records in every form it may hold: the first and the last by name (as
    /// snapshots before records went by position hold them), the second by position, the
    /// third in a chunk.
    pub fn mixed<V: Positional + Serialize>([a, b, c, d]: [&V; 4]) -> Vec<u8> {
        let mut body = vec![0x94]; // an array of four
        body.extend(crate::log::codec::encode_payload(a));
        body.extend(row(b));
        body.extend(bin(&[&[0x91][..], &row(c)].concat()));
        body.extend(crate::log::codec::encode_payload(d));
        body
    }
}
