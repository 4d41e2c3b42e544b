//! How a world's edges are written in a snapshot: in chunks of [`CHUNK`] edges (`chunks`), each
//! edge the array of all its fields in the order `Edge` declares them, rather than a map of
//! named fields.
//!
//! After the memories, a snapshot is mostly edges (the replay bench's world keeps 136k of
//! them, 39 MB of its 95 MB):
//! - **by position** (since a change within format 3), because reading each field's name and
//!   matching it was a good part of decoding one (benches/README.md, "Edges by position, pairs
//!   packed"). The fields that are usually empty are still skipped by name in events and in
//!   JSON; here every field is written, so that a position always means one field;
//! - **in chunks** (since format 5), because the edges decoded on one thread while the other
//!   cores waited (benches/README.md, "Edges in chunks").
//!
//! A snapshot written before, one edge after the other by name or by position, reads as it did.

use super::chunks::{self, Positional};
use super::table::Table;
use crate::model::Edge;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTuple, Serializer};
use std::sync::Arc;

/// Edges per chunk: about 2.5 MB of the replay bench's edges, so that its 136k edges make
/// seventeen chunks to share between cores, and a small world one.
const CHUNK: usize = 8_192;

/// Serialises the edges table for a world's snapshot: in chunks of edges by position for a
/// binary format (rp's MessagePack), by name (as [`Table`] writes every record) for a
/// human-readable one such as JSON.
pub(super) fn serialize<S: Serializer>(table: &Table<Edge>, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return table.serialize(s);
    }
    chunks::write(table, CHUNK, s)
}

/// Reads the edges table of a snapshot of any age: chunks, and single edges by name or by
/// position.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Table<Edge>, D::Error> {
    d.deserialize_seq(Rows)
}

/// The visitor of an edges table.
struct Rows;

impl<'de> Visitor<'de> for Rows {
    type Value = Table<Edge>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence of edges or chunks of edges")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Table<Edge>, A::Error> {
        let read = chunks::read(seq, "edges", |_: &[Arc<Edge>]| (), (), |_, ()| ())?;
        Ok(read.table)
    }
}

impl Positional for Edge {
    fn serialize_fields<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Named without `..`: a field added to `Edge` does not compile until it is written here
        // too, in its place (the order is `Edge`'s declaration order, which the derived reader
        // follows; `tests::every_field_keeps_its_place` checks it).
        let Edge {
            from,
            to,
            affinity,
            trust,
            summary,
            knowledge,
            private_moments,
            last_interaction,
            imprints,
            source,
        } = self;
        let mut t = s.serialize_tuple(10)?;
        t.serialize_element(from)?;
        t.serialize_element(to)?;
        t.serialize_element(affinity)?;
        t.serialize_element(trust)?;
        t.serialize_element(summary)?;
        t.serialize_element(knowledge)?;
        t.serialize_element(private_moments)?;
        t.serialize_element(last_interaction)?;
        t.serialize_element(imprints)?;
        t.serialize_element(source)?;
        t.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::chunks::by_hand::{damaged, mixed, row};
    use crate::log::codec;
    use crate::model::{BeliefSource, EntityId};

    /// An edge with every field set, each to a value no other field of its type holds.
    fn full() -> Edge {
        Edge {
            from: EntityId(3),
            to: EntityId(4),
            affinity: 0.25,
            trust: -0.5,
            summary: "fond of him".into(),
            knowledge: vec!["knows a".into()],
            private_moments: vec!["a moment".into()],
            last_interaction: Some(2_000),
            imprints: vec!["an imprint".into()],
            source: Some(BeliefSource::ToldBy(EntityId(9))),
        }
    }

    fn table(edges: &[Edge]) -> Table<Edge> {
        let mut t = Table::default();
        for e in edges {
            t.insert(e.clone());
        }
        t
    }

    /// The table as a snapshot writes it.
    fn written(t: &Table<Edge>) -> Vec<u8> {
        let mut out = Vec::new();
        serialize(
            t,
            &mut rmp_serde::Serializer::new(&mut out).with_struct_map(),
        )
        .unwrap();
        out
    }

    /// A table read back as a snapshot reads it (the walk and limits of any record first).
    fn read(bytes: &[u8]) -> Result<Table<Edge>, String> {
        #[derive(serde::Deserialize)]
        struct Snapshot(#[serde(with = "super")] Table<Edge>);
        codec::decode_payload::<Snapshot>(bytes).map(|s| s.0)
    }

    #[test]
    fn every_field_keeps_its_place() {
        let sparse = Edge::new(EntityId(5), EntityId(3));
        let t = table(&[full(), sparse]);
        let bytes = written(&t);
        assert_eq!(read(&bytes).unwrap(), t);
        // One chunk (an array of one bin: 0xc4 to 0xc6 by its length), and positional: no
        // field's name is written.
        assert_eq!(bytes[0], 0x91);
        assert!(matches!(bytes[1], 0xc4..=0xc6), "{:#x}", bytes[1]);
        assert!(
            !bytes.windows(7).any(|w| w == b"summary"),
            "names were written"
        );
        // Each row is what serde's derived reader takes as an edge.
        let row = row(&full());
        assert_eq!(codec::decode_payload::<Edge>(&row).unwrap(), full());
    }

    #[test]
    fn a_large_table_goes_in_chunks_and_comes_back_whole() {
        let edges: Vec<Edge> = (0..CHUNK as u64 * 2 + 5)
            .map(|i| Edge {
                from: EntityId(i / 7),
                to: EntityId(1_000 + i % 7),
                summary: format!("edge {i}"),
                ..full()
            })
            .collect();
        let t = table(&edges);
        let bytes = written(&t);
        // An array of three chunks, each a bin.
        assert_eq!(&bytes[..2], &[0x93, 0xc6]);
        assert_eq!(read(&bytes).unwrap(), t);
        // The same world, the same bytes.
        assert_eq!(written(&table(&edges)), bytes);
    }

    #[test]
    fn named_positional_and_chunked_edges_load_side_by_side() {
        // Snapshots of format 3 and 4 hold rows by position, older ones maps by name; a
        // hand-made one may mix every form with chunks: all read the same.
        let [a, b, c, d] = [(1, 2), (1, 3), (2, 1), (0, 9)].map(|(from, to)| Edge {
            from: EntityId(from),
            to: EntityId(to),
            ..full()
        });
        let body = mixed([&a, &b, &c, &d]);
        assert_eq!(read(&body).unwrap(), table(&[a, b, c, d]));
        // Format 4's form: every edge by position.
        let rows = [
            &[0x92][..],
            &row(&full()),
            &row(&Edge::new(EntityId(1), EntityId(2))),
        ]
        .concat();
        assert_eq!(
            read(&rows).unwrap(),
            table(&[full(), Edge::new(EntityId(1), EntityId(2))])
        );
    }

    #[test]
    fn a_damaged_chunk_is_an_error() {
        for (body, says) in damaged(&full(), "edges") {
            let err = read(&body).unwrap_err();
            assert!(err.contains(&says), "{says}: {err}");
        }
    }

    #[test]
    fn edges_by_name_as_older_snapshots_hold_them_still_read() {
        let t = table(&[full(), Edge::new(EntityId(1), EntityId(2))]);
        let by_name = codec::encode_payload(&t);
        assert!(by_name.windows(7).any(|w| w == b"summary"));
        assert_eq!(read(&by_name).unwrap(), t);
    }

    #[test]
    fn a_short_or_mistyped_edge_is_an_error_and_an_edge_twice_is_refused() {
        // MessagePack: 0x91 an array of one, 0x9n an array of n, small integers as themselves.
        let decode = |body: &[u8]| read(body).unwrap_err();
        // Only `from`: `to` has no default.
        let e = decode(&[0x91, 0x91, 3]);
        assert!(e.contains("invalid length"), "{e}");
        // The affinity given as a string.
        let e = decode(&[0x91, 0x93, 3, 4, 0xa1, b'x']);
        assert!(e.contains("marker"), "{e}");
        // An edge twice: in two chunks, or in a chunk and as a row.
        let chunk = written(&table(&[full()]));
        let twice = [&[0x92][..], &chunk[1..], &chunk[1..]].concat();
        let e = decode(&twice);
        assert!(e.contains("duplicate record"), "{e}");
        let twice = [&[0x92][..], &chunk[1..], &row(&full())].concat();
        let e = decode(&twice);
        assert!(e.contains("duplicate record"), "{e}");
        // Neither an edge nor a chunk.
        let e = decode(&[0x91, 5]);
        assert!(e.contains("a record or a chunk of records"), "{e}");
    }

    #[test]
    fn json_keeps_the_names() {
        let t = table(&[full()]);
        let mut out = Vec::new();
        serialize(&t, &mut serde_json::Serializer::new(&mut out)).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["summary"], "fond of him");
    }
}
