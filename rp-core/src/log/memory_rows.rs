//! How a world's memories are written in a snapshot: in chunks of [`CHUNK`] memories, each
//! chunk a MessagePack `bin` holding an array of memories, and each memory the array of all
//! its fields in the order `Memory` declares them rather than a map of named fields.
//!
//! A long campaign's snapshot is mostly memories (a million of them at 1M memories), and
//! decoding them is most of opening it (benches/README.md, "Memories written by position"):
//! - **by position**, because reading each field's name and matching it cost a third of a
//!   memory's decoding. The fields that are usually empty are still skipped by name in events
//!   and in JSON; here every field is written, so that a position always means one field;
//! - **in chunks** (`chunks`), because a chunk is a self-contained value whose length is known
//!   before it is read: the chunks decode on every core (as the snapshot's frames decompress),
//!   and the table is filled from them in order, each chunk as soon as it is decoded.
//!
//! A snapshot written before, one memory after the other by name, reads as it did: a table of
//! memories may hold chunks and single memories (by name or by position), in any order, and a
//! memory is refused if its id was read before.
//!
//! The thread that decodes a chunk also gathers its memories by owner and by scene
//! ([`MemoryRuns`]) while they are still in cache: the world's memory lookups are built from
//! these runs when the load reindexes ([`Memories`]), not by reading every memory again.

use super::chunks::{self, Positional};
use super::index::MemoryRuns;
use super::table::Table;
use crate::model::Memory;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTuple, Serializer};
use std::sync::Arc;

/// Memories per chunk: about 3 MB of a campaign's memories, so that a million of them make
/// sixty chunks to share between cores, and a small world one.
const CHUNK: usize = 16_384;

/// A world's memories, and just after a snapshot's load, the runs its chunks were gathered
/// into, for the reindex that follows the load ([`Memories::take_runs`]). Any change to the
/// table, and any clone, drops the runs first, so runs that are there always describe the
/// table.
#[derive(Debug, Default)]
pub(crate) struct Memories {
    table: Table<Memory>,
    runs: Option<MemoryRuns>,
}

impl Memories {
    /// The runs the load gathered, if it gathered them (every memory in chunks, in id order).
    pub(crate) fn take_runs(&mut self) -> Option<MemoryRuns> {
        self.runs.take()
    }
}

impl Clone for Memories {
    fn clone(&self) -> Self {
        Memories {
            table: self.table.clone(),
            runs: None,
        }
    }
}

impl std::ops::Deref for Memories {
    type Target = Table<Memory>;

    fn deref(&self) -> &Table<Memory> {
        &self.table
    }
}

impl std::ops::DerefMut for Memories {
    fn deref_mut(&mut self) -> &mut Table<Memory> {
        self.runs = None;
        &mut self.table
    }
}

/// Serialises the memories table for a world's snapshot: in chunks of memories by position
/// for a binary format (rp's MessagePack, which the chunks are written in whatever the
/// serializer), by name (as [`Table`] writes every record) for a human-readable one such as
/// JSON.
pub(super) fn serialize<S: Serializer>(table: &Table<Memory>, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return table.serialize(s);
    }
    chunks::write(table, CHUNK, s)
}

/// Reads the memories table of a snapshot of any age (see the module's documentation).
pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Memories, D::Error> {
    d.deserialize_seq(Rows)
}

/// The visitor of a memories table.
struct Rows;

impl<'de> Visitor<'de> for Rows {
    type Value = Memories;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence of memories or chunks of memories")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Memories, A::Error> {
        // The thread that decodes a chunk gathers its memories' runs; they are kept only if
        // they hold every memory, each run in id order.
        let read = chunks::read(
            seq,
            "memories",
            |memories: &[Arc<Memory>]| MemoryRuns::of(memories.iter().map(AsRef::as_ref)),
            MemoryRuns::default(),
            MemoryRuns::join,
        )?;
        Ok(Memories {
            table: read.table,
            runs: read.gathered,
        })
    }
}

impl Positional for Memory {
    fn serialize_fields<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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
        } = self;
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
    use crate::log::chunks::by_hand::{bin, damaged, mixed, row};
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

    /// The table as a snapshot writes it.
    fn written(t: &Table<Memory>) -> Vec<u8> {
        let mut out = Vec::new();
        serialize(
            t,
            &mut rmp_serde::Serializer::new(&mut out).with_struct_map(),
        )
        .unwrap();
        out
    }

    /// The memories read back as a snapshot reads them (the walk and limits of any record
    /// first).
    fn loaded(bytes: &[u8]) -> Result<Memories, String> {
        #[derive(serde::Deserialize)]
        struct Snapshot(#[serde(with = "super")] Memories);
        codec::decode_payload::<Snapshot>(bytes).map(|s| s.0)
    }

    /// The table read back as a snapshot reads it.
    fn read(bytes: &[u8]) -> Result<Table<Memory>, String> {
        loaded(bytes).map(|m| m.table)
    }

    #[test]
    fn every_field_keeps_its_place() {
        let mut sparse = full();
        sparse.id = MemoryId(8);
        (sparse.embedding, sparse.scene, sparse.summary) = (None, None, None);
        (sparse.feeling, sparse.about, sparse.last_accessed) = (None, None, None);
        (sparse.sources, sparse.stability, sparse.pinned) = (Vec::new(), 0.0, false);
        let t = table(&[full(), sparse]);
        let bytes = written(&t);
        assert_eq!(read(&bytes).unwrap(), t);
        // And it is positional: no field's name is written.
        assert!(
            !bytes.windows(12).any(|w| w == b"significance"),
            "names were written"
        );
    }

    #[test]
    fn a_large_table_goes_in_chunks_and_comes_back_whole() {
        let memories: Vec<Memory> = (0..CHUNK as u64 * 2 + 5)
            .map(|i| Memory {
                id: MemoryId(i * 3 + 1),
                text: format!("memory {i}"),
                ..full()
            })
            .collect();
        let t = table(&memories);
        let bytes = written(&t);
        // An array of three chunks, each a bin.
        assert_eq!(bytes[0], 0x93);
        assert_eq!(bytes[1], 0xc6);
        assert_eq!(read(&bytes).unwrap(), t);
        // The same world, the same bytes.
        assert_eq!(written(&table(&memories)), bytes);
    }

    #[test]
    fn named_positional_and_chunked_memories_load_side_by_side() {
        // A snapshot written before memories went by position holds maps, one per memory; a
        // hand-made one may mix every form: all read the same.
        let [a, b, c, d] = [7, 9, 11, 2].map(|id| Memory {
            id: MemoryId(id),
            ..full()
        });
        let body = mixed([&a, &b, &c, &d]);
        assert_eq!(read(&body).unwrap(), table(&[a, b, c, d]));
        // The old form as the old table wrote it.
        let t = table(&[full()]);
        assert_eq!(read(&codec::encode_payload(&t)).unwrap(), t);
    }

    #[test]
    fn a_memory_twice_is_refused_wherever_it_comes() {
        let m = full();
        let chunk = bin(&[&[0x91][..], &row(&m)].concat());
        for body in [
            [&[0x92][..], &row(&m), &chunk].concat(),
            [&[0x92][..], &chunk, &chunk].concat(),
            [&[0x92][..], &row(&m), &codec::encode_payload(&m)].concat(),
        ] {
            let e = read(&body).unwrap_err();
            assert!(e.contains("duplicate record"), "{e}");
        }
    }

    #[test]
    fn a_damaged_chunk_is_an_error() {
        // A memory short of its text, beside the damage any chunk can have.
        let short = [&[0x91][..], &bin(&[0x91, 0x93, 7, 3, 0x90])].concat();
        let cases = damaged(&full(), "memories");
        for (body, says) in cases.into_iter().chain([(short, "invalid length".into())]) {
            let err = read(&body).unwrap_err();
            assert!(err.contains(&says), "{says}: {err}");
        }
    }

    #[test]
    fn a_short_or_mistyped_row_is_an_error() {
        // A table of one row: [id 7, owner 3, witnesses [], ...]. MessagePack: 0x91 an array of
        // one, 0x9n an array of n, small integers as themselves, 0xa1 a string of one byte.
        let decode = |row: &[u8]| {
            let mut body = vec![0x91];
            body.extend_from_slice(row);
            read(&body).unwrap_err()
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
        // Neither a memory nor a chunk.
        let e = decode(&[5]);
        assert!(e.contains("a record or a chunk of records"), "{e}");
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

    /// Memories of three owners interleaved, some pinned, some scene summaries, some of a
    /// scene, in three chunks.
    fn interleaved() -> Vec<Memory> {
        (0..CHUNK as u64 * 2 + 5)
            .map(|i| Memory {
                id: MemoryId(i * 3 + 1),
                owner: EntityId(3 + i % 3),
                pinned: i % 11 == 0,
                kind: if i % 13 == 0 {
                    MemoryKind::SceneSummary
                } else {
                    MemoryKind::Utterance
                },
                scene: (i % 4 != 0).then_some(SceneId(i % 5)),
                ..full()
            })
            .collect()
    }

    #[test]
    fn chunks_are_gathered_into_runs_as_they_decode() {
        let t = table(&interleaved());
        let mut memories = loaded(&written(&t)).unwrap();
        assert_eq!(*memories, t);
        let runs = memories.take_runs().expect("gathered while decoding");
        assert_eq!(runs, MemoryRuns::of(t.iter()));
        // Taken once: the reindex that follows the load has them.
        assert!(memories.take_runs().is_none());
    }

    #[test]
    fn runs_are_kept_only_when_they_hold_every_memory_in_id_order() {
        let [a, b, c] = [2, 7, 9].map(|id| Memory {
            id: MemoryId(id),
            ..full()
        });
        let chunk = |ms: &[&Memory]| {
            let mut rows = vec![0x90 | ms.len() as u8];
            ms.iter().for_each(|m| rows.extend(row(*m)));
            bin(&rows)
        };
        // A memory outside the chunks (an older snapshot's form).
        let mixed = [&[0x92][..], &codec::encode_payload(&a), &chunk(&[&b, &c])].concat();
        // Chunks out of id order (a hand-made snapshot).
        let backwards = [&[0x92][..], &chunk(&[&c]), &chunk(&[&a, &b])].concat();
        for body in [mixed, backwards] {
            let mut memories = loaded(&body).unwrap();
            assert_eq!(*memories, table(&[a.clone(), b.clone(), c.clone()]));
            assert!(memories.take_runs().is_none());
        }
    }

    #[test]
    fn a_change_or_a_clone_drops_the_runs() {
        let t = table(&interleaved());
        let bytes = written(&t);
        let memories = loaded(&bytes).unwrap();
        assert!(memories.clone().take_runs().is_none());
        let mut memories = loaded(&bytes).unwrap();
        memories.insert(Memory {
            id: MemoryId(2),
            ..full()
        });
        assert!(memories.take_runs().is_none());
        // Reading does not.
        let mut memories = loaded(&bytes).unwrap();
        assert!(memories.get(&MemoryId(1)).is_some());
        assert!(memories.take_runs().is_some());
    }
}
