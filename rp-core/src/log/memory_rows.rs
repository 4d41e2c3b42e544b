//! How a world's memories are written in a snapshot: each memory as an array of all its
//! fields in the order `Memory` declares them, not as a map of named fields.
//!
//! A long campaign's snapshot is mostly memories (a million of them at 1M memories), and
//! decoding is most of opening it: reading each field's name and matching it costs a third of
//! a memory's decoding (measured in benches/README.md, "Memories written by position"). A
//! memory's fields that are usually empty are still skipped by name in events and in JSON;
//! here every field is written, so that a position always means the same field.
//!
//! Reading needs nothing of its own: `Memory`'s derived `Deserialize` reads an array by
//! position as it reads a map by name, so a snapshot of either kind (and one written before
//! this, by name) loads with the same code.

use super::table::Table;
use crate::model::Memory;
use serde::ser::{Serialize, SerializeSeq, SerializeTuple, Serializer};

/// Serialises the memories table for a world's snapshot: by position for a binary format,
/// by name (as [`Table`] writes every record) for a human-readable one such as JSON.
pub(super) fn serialize<S: Serializer>(table: &Table<Memory>, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return table.serialize(s);
    }
    let mut seq = s.serialize_seq(Some(table.len()))?;
    for memory in table.iter() {
        seq.serialize_element(&ByPosition(memory))?;
    }
    seq.end()
}

/// One memory as the array of its fields.
struct ByPosition<'a>(&'a Memory);

impl Serialize for ByPosition<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Named without `..`: a field added to `Memory` does not compile until it is written
        // here too, in its place (the order is `Memory`'s declaration order, which the
        // derived reader follows; `tests::every_field_keeps_its_place` checks it).
        let Memory {
            id,
            owner,
            witnesses,
            text,
            kind,
            significance,
            created,
            last_accessed,
            access_count,
            decay,
            pinned,
            embedding,
            scene,
            stability,
            summary,
            feeling,
            about,
            sources,
        } = self.0;
        let mut t = s.serialize_tuple(18)?;
        t.serialize_element(id)?;
        t.serialize_element(owner)?;
        t.serialize_element(witnesses)?;
        t.serialize_element(text)?;
        t.serialize_element(kind)?;
        t.serialize_element(significance)?;
        t.serialize_element(created)?;
        t.serialize_element(last_accessed)?;
        t.serialize_element(access_count)?;
        t.serialize_element(decay)?;
        t.serialize_element(pinned)?;
        t.serialize_element(embedding)?;
        t.serialize_element(scene)?;
        t.serialize_element(stability)?;
        t.serialize_element(summary)?;
        t.serialize_element(feeling)?;
        t.serialize_element(about)?;
        t.serialize_element(sources)?;
        t.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::codec;
    use crate::model::*;

    /// A memory with every field set, each to a value no other field of its type holds.
    fn full() -> Memory {
        Memory {
            id: MemoryId(7),
            owner: EntityId(3),
            witnesses: [EntityId(3), EntityId(4)].into_iter().collect(),
            text: "the text".into(),
            kind: MemoryKind::Reflection,
            significance: 0.25,
            created: 1_000,
            last_accessed: Some(2_000),
            access_count: 5,
            decay: DecayStage::Summary,
            pinned: true,
            embedding: Some(vec![0.5, -1.0]),
            scene: Some(SceneId(9)),
            stability: 0.75,
            summary: Some("the summary".into()),
            feeling: Some("fond".into()),
            about: Some(EntityId(4)),
            sources: vec![MemoryId(1), MemoryId(2)],
        }
    }

    fn table(memories: &[Memory]) -> Table<Memory> {
        let mut t = Table::default();
        for m in memories {
            t.insert(m.clone());
        }
        t
    }

    fn by_position(t: &Table<Memory>) -> Vec<u8> {
        let mut out = Vec::new();
        serialize(
            t,
            &mut rmp_serde::Serializer::new(&mut out).with_struct_map(),
        )
        .unwrap();
        out
    }

    #[test]
    fn every_field_keeps_its_place() {
        let mut sparse = full();
        sparse.id = MemoryId(8);
        (sparse.embedding, sparse.scene, sparse.summary) = (None, None, None);
        (sparse.feeling, sparse.about, sparse.last_accessed) = (None, None, None);
        (sparse.sources, sparse.stability, sparse.pinned) = (Vec::new(), 0.0, false);
        let t = table(&[full(), sparse]);
        let bytes = by_position(&t);
        let back: Table<Memory> = codec::decode_payload(&bytes).unwrap();
        assert_eq!(back, t);
        // And it is positional: no field's name is written.
        assert!(
            !bytes.windows(12).any(|w| w == b"significance"),
            "names were written"
        );
    }

    #[test]
    fn named_and_positional_records_load_side_by_side() {
        // A snapshot written before memories went by position holds maps; one table may
        // even mix them (as a hand-made record could): both read the same.
        let a = full();
        let mut b = full();
        b.id = MemoryId(9);
        let mut body = vec![0x92]; // an array of two
        body.extend(codec::encode_payload(&a));
        let positional = by_position(&table(std::slice::from_ref(&b)));
        body.extend(&positional[1..]); // past its own one-element array header
        let back: Table<Memory> = codec::decode_payload(&body).unwrap();
        assert_eq!(back, table(&[a, b]));
    }

    #[test]
    fn a_short_or_mistyped_row_is_an_error() {
        // A table of one row: [id 7, owner 3, witnesses [], ...]. MessagePack: 0x91 an array of
        // one, 0x9n an array of n, small integers as themselves, 0xa1 a string of one byte.
        let decode = |row: &[u8]| {
            let mut body = vec![0x91];
            body.extend_from_slice(row);
            codec::decode_payload::<Table<Memory>>(&body).unwrap_err()
        };
        // Three fields: the text (which has no default) is missing.
        let e = decode(&[0x93, 7, 3, 0x90]);
        assert!(e.contains("invalid length"), "{e}");
        // The text given as a number.
        let e = decode(&[0x94, 7, 3, 0x90, 5]);
        assert!(e.contains("invalid type"), "{e}");
        // The owner given as a string.
        let e = decode(&[0x94, 7, 0xa1, b'x', 0x90, 0xa1, b't']);
        assert!(e.contains("marker"), "{e}");
    }

    #[test]
    fn json_keeps_the_names() {
        let v = serde_json::to_value(crate::log::World::default()).unwrap();
        assert!(v["memories"].is_array());
        let t = table(&[full()]);
        let mut out = Vec::new();
        serialize(&t, &mut serde_json::Serializer::new(&mut out)).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[0]["text"], "the text");
    }
}
