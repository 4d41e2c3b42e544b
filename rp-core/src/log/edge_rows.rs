//! How a world's edges are written in a snapshot: each edge the array of all its fields in the
//! order `Edge` declares them, rather than a map of named fields.
//!
//! After the memories, a snapshot is mostly edges (the replay bench's world keeps 136k of
//! them, 39 MB of its 95 MB), and reading each field's name and matching it was a good part of
//! decoding one (benches/README.md, "Edges by position, pairs packed"). The fields that
//! are usually empty are still skipped by name in events and in JSON; here every field is
//! written, so that a position always means one field.
//!
//! Nothing else changes: the table is the same array of records, and serde's derived reader
//! takes a record as a map of named fields or as the array of its fields. So a snapshot
//! written before reads as it did, and one written now reads in a build from before.

use super::table::Table;
use crate::model::Edge;
use serde::ser::{Serialize, SerializeTuple, Serializer};
use serde::{Deserialize, Deserializer};

/// Serialises the edges table for a world's snapshot: edges by position for a binary format
/// (rp's MessagePack), by name (as [`Table`] writes every record) for a human-readable one
/// such as JSON.
pub(super) fn serialize<S: Serializer>(table: &Table<Edge>, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return table.serialize(s);
    }
    s.collect_seq(table.iter().map(ByPosition))
}

/// Reads the edges table of a snapshot of any age: each edge by name or by position.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Table<Edge>, D::Error> {
    Table::deserialize(d)
}

/// One edge as the array of its fields.
struct ByPosition<'a>(&'a Edge);

impl Serialize for ByPosition<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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
        } = self.0;
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
        // And it is positional: no field's name is written.
        assert!(
            !bytes.windows(7).any(|w| w == b"summary"),
            "names were written"
        );
        // A build that reads the table as it always did (each record by serde's derived
        // reader) reads it too.
        assert_eq!(codec::decode_payload::<Table<Edge>>(&bytes).unwrap(), t);
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
        let row = written(&table(&[full()]));
        let twice = [&[0x92][..], &row[1..], &row[1..]].concat();
        let e = decode(&twice);
        assert!(e.contains("duplicate record"), "{e}");
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
