//! The stored form of every record: a header (magic, format version, checksum) and a
//! MessagePack body with named fields (but a snapshot's memories, edges, contacts and beliefs
//! about availability: see `memory_rows`, `edge_rows`, `chunks` and `pair_rows`),
//! compressed since format 2, decoded with explicit depth and size limits.
//!
//! ```text
//! offset 0  2 bytes  b"rp"
//! offset 2  2 bytes  format version, little-endian
//! offset 4  4 bytes  CRC-32 of the version and the body as stored, little-endian
//! offset 8  ...      format 1: the body, MessagePack (rmp-serde, struct maps)
//!                    format 2: one byte saying how the body is stored (plain, or compressed:
//!                    see `compress`), then the body so stored
//!                    format 3: as format 2; a snapshot's memories are written by position,
//!                    in chunks that decode on every core (`memory_rows`)
//!                    format 4: as format 3; a snapshot's contacts and beliefs about
//!                    availability are packed, fixed-width entries (`pair_rows`)
//!                    format 5: as format 4; a snapshot's edges are written in chunks,
//!                    as its memories are (`edge_rows`, `chunks`)
//!                    format 6: as format 5; a snapshot keeps the lines each entity heard
//!                    (`heard`) apart from what it saw otherwise (`seen`), where it kept
//!                    a contact and a belief per hearer (`World::contact`)
//! ```
//!
//! An event is compressed with a dictionary built in (about 2.5× smaller), a snapshot as
//! independent frames that decompress on every core (about 4× smaller). Records of formats 1
//! and 2, which saves written before hold, read as they always did. Format 3 changed only the
//! body of a snapshot, so a build of format 2 refuses a save of format 3 as written by a newer
//! build (`UnsupportedVersion`) rather than misreading its snapshots as damage.
//! A snapshot's edges are written by position since a change within format 3: serde's derived
//! reader takes a record as a map or as the array of its fields, so builds of format 3 from
//! before read them. Formats 4, 5 and 6, like 3, changed only the body of a snapshot.

use super::compress;
use super::{Event, World};
use crate::error::Error;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::borrow::Cow;

/// The format version this build writes and the newest it reads (it reads every older one).
pub const FORMAT_VERSION: u16 = 6;
/// The largest record this build will decode (an event or the metadata; a snapshot may be
/// larger, up to [`MAX_SNAPSHOT_BYTES`]).
pub const MAX_RECORD_BYTES: usize = 512 * 1024 * 1024;
/// The largest snapshot this build writes and reads: a world of about ten million memories.
/// A larger world is saved without snapshots ([`snapshot_fits`]) and opens by replaying its
/// log, so a save never holds a snapshot it cannot read back. (redb keeps a value's length in
/// 32 bits.)
pub const MAX_SNAPSHOT_BYTES: usize = crate::store::MAX_SNAPSHOT_BYTES;

/// Whether an encoded snapshot may be stored: one larger than [`MAX_SNAPSHOT_BYTES`], as
/// stored or once decompressed, would make the save unopenable from it.
pub fn snapshot_fits(record: &[u8]) -> bool {
    fits_within(record, MAX_SNAPSHOT_BYTES)
}

/// Whether a record is at most `limit` bytes, as stored and once decompressed.
pub(crate) fn fits_within(record: &[u8], limit: usize) -> bool {
    record_sizes(record).is_some_and(|(stored, body)| stored.max(body) <= limit)
}

/// A record's length as stored and its body's length once decompressed, from its header and
/// the lengths its body declares; `None` if it is not a record this build reads.
pub fn record_sizes(record: &[u8]) -> Option<(usize, usize)> {
    if record.len() < HEADER || &record[..2] != MAGIC {
        return None;
    }
    let body = match u16::from_le_bytes([record[2], record[3]]) {
        1 => record.len() - HEADER,
        2..=FORMAT_VERSION => compress::body_len(&record[HEADER..])?,
        _ => return None,
    };
    Some((record.len(), body))
}
/// The deepest nesting accepted in a record body.
pub const MAX_DEPTH: usize = 64;

const MAGIC: &[u8; 2] = b"rp";
const HEADER: usize = 8;

/// Why a record could not be decoded; the caller adds the file and location.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// Not one of our records at all.
    NotARecord(String),
    /// Written by a newer format.
    Future(u16),
    /// Damaged.
    Corrupt(String),
}

impl DecodeError {
    /// Turns the failure into an [`Error`] naming `file` and `location`.
    pub fn at(self, file: &str, location: impl Into<String>) -> Error {
        match self {
            DecodeError::NotARecord(reason) | DecodeError::Corrupt(reason) => Error::Corrupt {
                file: file.to_owned(),
                location: location.into(),
                message: reason,
            },
            DecodeError::Future(v) => Error::UnsupportedVersion {
                file: file.to_owned(),
                location: location.into(),
                found: v.into(),
                supported: FORMAT_VERSION.into(),
            },
        }
    }
}

/// Encodes an event as the log stores it (header and body, compressed with the built-in
/// dictionary when that is smaller).
pub fn encode_event(event: &Event) -> Vec<u8> {
    record(event, RecordKind::Event)
}

/// An event's MessagePack body before compression: what the built-in dictionary was trained
/// on, and what a tool reading the format sees once it has decompressed a record.
pub fn event_body(event: &Event) -> Vec<u8> {
    encode_payload(event)
}

/// Decodes an event stored by [`encode_event`]; damaged, foreign or future-format input is an
/// error naming `source` (a file name, or anything that helps the reader).
pub fn decode_event(bytes: &[u8], source: &str) -> Result<Event, Error> {
    decode(bytes).map_err(|e| e.at(source, "event record"))
}

/// Encodes a world as a snapshot record (compressed as frames, on every core).
pub fn encode_snapshot(world: &World) -> Vec<u8> {
    record(world, RecordKind::Snapshot)
}

/// Decodes a snapshot record, rebuilding and checking the world's internal references.
pub fn decode_snapshot(bytes: &[u8], source: &str) -> Result<World, Error> {
    let mut world =
        decode_world(Cow::Borrowed(bytes)).map_err(|e| e.at(source, "snapshot record"))?;
    world.reindex().map_err(|e| Error::Corrupt {
        file: source.to_owned(),
        location: "snapshot record".into(),
        message: e.to_string(),
    })?;
    Ok(world)
}

/// The MessagePack body of a value (named fields), without a header.
pub(crate) fn encode_payload<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    encode_into(value, &mut out);
    out
}

fn encode_into<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    let mut ser = rmp_serde::Serializer::new(out).with_struct_map();
    // Our model types serialise infallibly into a Vec: every map key is a string or integer
    // and no type has a fallible Serialize.
    value
        .serialize(&mut ser)
        .expect("serialising into memory cannot fail");
}

/// A full record of any value (the metadata, an exported catalog): header and body, the body
/// compressed as frames when that pays.
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    record(value, RecordKind::Meta)
}

/// A record of `value`, its body stored as the current format stores that kind of record.
fn record<T: Serialize + ?Sized>(value: &T, kind: RecordKind) -> Vec<u8> {
    store_body(&encode_payload(value), kind)
}

/// A record of the current format holding `body`, stored as `kind` is (its codec byte first).
fn store_body(body: &[u8], kind: RecordKind) -> Vec<u8> {
    let mut out = header(FORMAT_VERSION, body.len() / 2 + 16);
    match kind {
        RecordKind::Event => compress::pack_event(body, &mut out),
        RecordKind::Snapshot | RecordKind::Meta => compress::pack_frames(body, &mut out),
    }
    seal(out)
}

/// A record's header of format `version`, its checksum still to be written ([`seal`]), with
/// room for `body` more bytes.
fn header(version: u16, body: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out
}

/// Writes the checksum of a record whose header and body are in place.
fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let crc = checksum(&out);
    out[4..8].copy_from_slice(&crc.to_le_bytes());
    out
}

/// What a record holds, which decides how the current format stores its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordKind {
    /// An event of the log.
    Event,
    /// A snapshot of a world.
    Snapshot,
    /// The metadata record.
    Meta,
}

/// The record rewritten in the current format when it is of format 1 (the same body, stored
/// as this build stores that kind of record: compressed, about half the size); `None` when it
/// is of format 2 or later. A record of format 2 or 3 is left as it is: its body is what the
/// later formats read, stored as they store it, and rewriting every record of a long save would
/// gain nothing. Damage found on the way is an error, as decoding it would be.
pub(crate) fn upgrade(record: &[u8], kind: RecordKind) -> Result<Option<Vec<u8>>, DecodeError> {
    Ok(match open(record, MAX_SNAPSHOT_BYTES)? {
        (1, body) => Some(store_body(body, kind)),
        _ => None,
    })
}

/// CRC-32 over the version field and the body: a damaged version reads as damage, not as a
/// newer format. (Every format version keeps this 8-byte header.)
fn checksum(record: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&record[2..4]);
    h.update(&record[HEADER..]);
    h.finalize()
}

/// Decodes a record written by [`encode`], checking magic, version, checksum and limits.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, DecodeError> {
    decode_within(Cow::Borrowed(bytes), MAX_RECORD_BYTES)
}

/// Decodes a snapshot record's world (not reindexed), within [`MAX_SNAPSHOT_BYTES`]. A record
/// given by value is freed as soon as its body is decompressed, before the body is decoded:
/// a long campaign's snapshot is tens of megabytes, which the decode would otherwise hold
/// while the world it builds grows (benches/README.md, "A snapshot freed once decompressed").
pub(crate) fn decode_world(record: Cow<'_, [u8]>) -> Result<World, DecodeError> {
    decode_within(record, MAX_SNAPSHOT_BYTES)
}

/// [`decode`] of a record of at most `limit` bytes.
fn decode_within<T: DeserializeOwned>(
    record: Cow<'_, [u8]>,
    limit: usize,
) -> Result<T, DecodeError> {
    let body = match open(&record, limit)? {
        (1, body) => return decode_payload(body).map_err(DecodeError::Corrupt),
        (_, stored) => compress::unpack(stored, limit).map_err(DecodeError::Corrupt)?,
    };
    match body {
        Cow::Owned(body) => {
            drop(record);
            decode_payload(&body)
        }
        Cow::Borrowed(body) => decode_payload(body),
    }
    .map_err(DecodeError::Corrupt)
}

/// A record's format version and what follows its header, once its magic, size, checksum and
/// version are checked (a version this build reads).
fn open(bytes: &[u8], limit: usize) -> Result<(u16, &[u8]), DecodeError> {
    if bytes.len() < HEADER || &bytes[..2] != MAGIC {
        return Err(DecodeError::NotARecord("not an rp record".into()));
    }
    if bytes.len() > limit {
        return Err(DecodeError::Corrupt(format!(
            "record of {} bytes exceeds the limit",
            bytes.len()
        )));
    }
    let crc = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if checksum(bytes) != crc {
        return Err(DecodeError::Corrupt("checksum mismatch".into()));
    }
    match u16::from_le_bytes([bytes[2], bytes[3]]) {
        0 => Err(DecodeError::Corrupt("format version 0".into())),
        future if future > FORMAT_VERSION => Err(DecodeError::Future(future)),
        version => Ok((version, &bytes[HEADER..])),
    }
}

/// Decodes a bare MessagePack body with the depth limit, rejecting trailing bytes.
pub(crate) fn decode_payload<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    // Walk the structure first: a header that claims more elements than there are bytes left
    // is refused here, before any decoder sizes an allocation from it.
    let used = value_len(body).ok_or("the record body is malformed")?;
    if used != body.len() {
        return Err(format!(
            "{} trailing bytes after the record",
            body.len() - used
        ));
    }
    let mut de = rmp_serde::Deserializer::from_read_ref(body);
    de.set_max_depth(MAX_DEPTH);
    T::deserialize(&mut de).map_err(|e| e.to_string())
}

/// Frames a raw MessagePack body as a record of the current format (header with version and
/// checksum, the body stored plain). For tools and fuzzers that build records by hand.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = header(FORMAT_VERSION, body.len() + 1);
    out.push(compress::PLAIN);
    out.extend_from_slice(body);
    seal(out)
}

/// Frames a raw MessagePack body as a record of format 1, as saves written before format 2
/// hold. For tests of reading old saves.
#[cfg(test)]
pub(crate) fn frame_v1(body: &[u8]) -> Vec<u8> {
    let mut out = header(1, body.len());
    out.extend_from_slice(body);
    seal(out)
}

/// The length in bytes of the first MessagePack value in `b`, walked iteratively (no
/// recursion, so hostile nesting cannot exhaust the stack).
fn value_len(b: &[u8]) -> Option<usize> {
    let be = |at: usize, n: usize| -> Option<usize> {
        let bytes = b.get(at..at.checked_add(n)?)?;
        Some(
            bytes
                .iter()
                .fold(0usize, |acc, x| (acc << 8) | usize::from(*x)),
        )
    };
    let mut pos = 0usize;
    let mut pending: usize = 1;
    while pending > 0 {
        pending -= 1;
        let m = *b.get(pos)?;
        pos += 1;
        // (bytes of payload to skip, child values that follow)
        let (skip, children) = match m {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => (0, usize::from(m & 0x0f) * 2),
            0x90..=0x9f => (0, usize::from(m & 0x0f)),
            0xa0..=0xbf => (usize::from(m & 0x1f), 0),
            0xc4 | 0xd9 => (1 + be(pos, 1)?, 0),
            0xc5 | 0xda => (2 + be(pos, 2)?, 0),
            0xc6 | 0xdb => (4 + be(pos, 4)?, 0),
            0xc7 => (2 + be(pos, 1)?, 0),
            0xc8 => (3 + be(pos, 2)?, 0),
            0xc9 => (5 + be(pos, 4)?, 0),
            0xca => (4, 0),
            0xcb => (8, 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xce | 0xd2 => (4, 0),
            0xcf | 0xd3 => (8, 0),
            0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xd6 => (5, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xdc => (2, be(pos, 2)?),
            0xdd => (4, be(pos, 4)?),
            0xde => (2, be(pos, 2)?.checked_mul(2)?),
            0xdf => (4, be(pos, 4)?.checked_mul(2)?),
            0xc1 => return None,
        };
        pos = pos.checked_add(skip)?;
        if pos > b.len() {
            return None;
        }
        pending = pending.checked_add(children)?;
        // Every pending value needs at least one byte.
        if pending > b.len() - pos {
            return None;
        }
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::Event;

    fn sample() -> Event {
        Event::TimeAdvanced { to: 42 }
    }

    /// An event large enough to be stored compressed.
    fn memory() -> Event {
        use crate::model::{EntityId, Memory, MemoryId, MemoryKind, WitnessSet};
        Event::MemoryAdded {
            memory: Memory::new(
                MemoryId(7),
                EntityId(3),
                WitnessSet::from_iter([EntityId(3), EntityId(4)]),
                "Mara watched the lantern swing over the harbour road while the storm came in",
                MemoryKind::EventGist,
                0.6,
                1_000,
            ),
        }
    }

    #[test]
    fn an_event_is_stored_compressed_and_reads_back() {
        let e = memory();
        let bytes = encode_event(&e);
        assert_eq!(bytes[HEADER], compress::EVENT_DICT_1);
        assert!(
            bytes.len() < event_body(&e).len(),
            "{} bytes stored for a body of {}",
            bytes.len(),
            event_body(&e).len()
        );
        assert_eq!(decode::<Event>(&bytes).unwrap(), e);
        assert_eq!(
            record_sizes(&bytes),
            Some((bytes.len(), event_body(&e).len()))
        );
    }

    #[test]
    fn a_format_1_record_is_upgraded_to_the_same_value() {
        for (e, kind) in [(sample(), RecordKind::Meta), (memory(), RecordKind::Event)] {
            let old = frame_v1(&encode_payload(&e));
            let new = upgrade(&old, kind).unwrap().expect("format 1 is upgraded");
            assert_eq!(u16::from_le_bytes([new[2], new[3]]), FORMAT_VERSION);
            assert_eq!(decode::<Event>(&new).unwrap(), e);
            assert_eq!(upgrade(&new, kind).unwrap(), None, "current records stay");
        }
        let ev = encode_event(&memory());
        let old = frame_v1(&encode_payload(&memory()));
        assert_eq!(upgrade(&old, RecordKind::Event).unwrap().unwrap(), ev);
        let mut damaged = old;
        damaged[12] ^= 1;
        assert!(matches!(
            upgrade(&damaged, RecordKind::Event),
            Err(DecodeError::Corrupt(_))
        ));
    }

    #[test]
    fn a_format_2_record_reads_and_stays_as_it_is() {
        // Format 3 changed only how a snapshot's memories are written: a record of format 2
        // (the same stored body under version 2) reads to the same value, and is not rewritten.
        for (record, kind) in [
            (encode_event(&memory()), RecordKind::Event),
            (encode(&sample()), RecordKind::Meta),
        ] {
            let mut old = record.clone();
            old[2..4].copy_from_slice(&2u16.to_le_bytes());
            let old = seal(old);
            assert_eq!(
                decode::<Event>(&old).unwrap(),
                decode::<Event>(&record).unwrap()
            );
            assert_eq!(record_sizes(&old), record_sizes(&record));
            assert_eq!(upgrade(&old, kind).unwrap(), None);
        }
        let world = World::default();
        let mut old = encode_snapshot(&world);
        old[2..4].copy_from_slice(&2u16.to_le_bytes());
        assert_eq!(
            decode_snapshot(&seal(old), "test").unwrap().to_bytes(),
            world.to_bytes()
        );
    }

    proptest::proptest! {
        /// A memory of any text and numbers: its record decodes to it, and the same event
        /// written by format 1 and upgraded is the very record this build writes.
        #[test]
        fn any_memory_round_trips_and_upgrades_to_the_same_record(
            text in "\\PC{0,400}",
            owner in 1u64..1_000_000,
            id in 1u64..u64::MAX / 2,
            significance in 0.0f64..=1.0,
            created in proptest::prelude::any::<i64>(),
        ) {
            use crate::model::{EntityId, Memory, MemoryId, MemoryKind, WitnessSet};
            let e = Event::MemoryAdded {
                memory: Memory::new(
                    MemoryId(id),
                    EntityId(owner),
                    WitnessSet::from_iter([EntityId(owner)]),
                    text,
                    MemoryKind::Utterance,
                    significance,
                    created,
                ),
            };
            let record = encode_event(&e);
            proptest::prop_assert_eq!(decode::<Event>(&record).ok(), Some(e.clone()));
            let old = frame_v1(&encode_payload(&e));
            proptest::prop_assert_eq!(upgrade(&old, RecordKind::Event).ok().flatten(), Some(record));
        }
    }

    #[test]
    fn a_format_1_record_reads_as_it_always_did() {
        for e in [sample(), memory()] {
            let old = frame_v1(&encode_payload(&e));
            assert_eq!(decode::<Event>(&old).unwrap(), e);
            assert_eq!(record_sizes(&old), Some((old.len(), old.len() - HEADER)));
        }
    }

    #[test]
    fn a_snapshot_is_stored_as_frames_and_its_size_is_known() {
        use crate::log::WorldSettings;
        use crate::model::{EntityId, EntityState, FactSheet};
        let mut world = World::new();
        let created = Event::WorldCreated {
            name: "W".into(),
            now: 0,
            settings: WorldSettings::default(),
        };
        world.apply(&created).unwrap();
        for id in 1..300 {
            let e = Event::EntityCreated {
                id: EntityId(id),
                key: None,
                name: format!("Guest {id} of the Lantern"),
                aliases: vec![],
                facts: FactSheet::default(),
                host_controlled: false,
                state: EntityState::default(),
            };
            world.apply(&e).unwrap();
        }
        let bytes = encode_snapshot(&world);
        assert_eq!(bytes[HEADER], compress::FRAMES);
        let body = world.to_bytes().len();
        assert_eq!(record_sizes(&bytes), Some((bytes.len(), body)));
        assert!(snapshot_fits(&bytes));
        assert_eq!(
            decode_snapshot(&bytes, "test").unwrap().to_bytes(),
            world.to_bytes()
        );
        // Given rather than lent (freed once decompressed): the same world, and the same
        // refusal of a damaged one.
        let given = decode_world(Cow::Owned(bytes.clone())).unwrap();
        assert_eq!(given.to_bytes(), world.to_bytes());
        let mut damaged = bytes.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        for record in [Cow::Owned(damaged.clone()), Cow::Borrowed(&damaged[..])] {
            let refused = decode_world(record);
            assert!(matches!(&refused, Err(DecodeError::Corrupt(m)) if m.contains("checksum")));
        }
        // Damaged inside its last frame, under a checksum made for the damage: refused when
        // its frames decompress, whether given or lent.
        let forged = seal(damaged);
        for record in [Cow::Owned(forged.clone()), Cow::Borrowed(&forged[..])] {
            assert!(matches!(decode_world(record), Err(DecodeError::Corrupt(_))));
        }
    }

    #[test]
    fn every_single_bit_flip_of_a_compressed_event_is_detected() {
        let bytes = encode_event(&memory());
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            assert!(decode::<Event>(&b).is_err(), "bit {i} flip went unnoticed");
        }
        for n in 0..bytes.len() {
            assert!(decode::<Event>(&bytes[..n]).is_err(), "cut at {n}");
        }
    }

    #[test]
    fn an_unknown_body_encoding_is_damage() {
        let mut b = encode_event(&memory());
        b[HEADER] = 77;
        let b = seal(b);
        match decode::<Event>(&b) {
            Err(DecodeError::Corrupt(m)) => assert!(m.contains("unknown body encoding 77"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(record_sizes(&b), None);
    }

    #[test]
    fn a_record_over_its_limit_is_refused_before_it_is_read() {
        let bytes = encode(&sample());
        assert_eq!(
            decode_within::<Event>(Cow::Borrowed(&bytes), bytes.len()).unwrap(),
            sample()
        );
        match decode_within::<Event>(Cow::Borrowed(&bytes), bytes.len() - 1) {
            Err(DecodeError::Corrupt(m)) => assert!(m.contains("exceeds the limit"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&sample());
        assert_eq!(decode::<Event>(&bytes).unwrap(), sample());
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let bytes = encode(&sample());
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            assert!(decode::<Event>(&b).is_err(), "bit {i} flip went unnoticed");
        }
    }

    #[test]
    fn truncation_is_an_error_at_every_length() {
        let bytes = encode(&sample());
        for n in 0..bytes.len() {
            assert!(decode::<Event>(&bytes[..n]).is_err());
        }
    }

    #[test]
    fn a_snapshot_claiming_four_billion_utterances_is_refused_without_allocating() {
        // A world map whose `dialogue` array claims 2^32-1 elements in a tiny record.
        let mut body = vec![0x81, 0xa8];
        body.extend_from_slice(b"dialogue");
        body.extend_from_slice(&[0xdd, 0xff, 0xff, 0xff, 0xff]);
        let e = decode::<World>(&frame(&body)).expect_err("refused");
        assert!(matches!(e, DecodeError::Corrupt(_)), "{e:?}");
    }

    #[test]
    fn frame_makes_records_decode_reads() {
        let body = encode_payload(&sample());
        assert_eq!(decode::<Event>(&frame(&body)).unwrap(), sample());
    }

    #[test]
    fn trailing_bytes_are_rejected() {
        let mut body = encode_payload(&sample());
        assert!(decode_payload::<Event>(&body).is_ok());
        body.push(0xc0);
        assert!(decode_payload::<Event>(&body).is_err());
    }

    #[test]
    fn future_version_is_named() {
        let mut b = encode(&sample());
        b[2] = 9;
        let crc = checksum(&b);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
        match decode::<Event>(&b) {
            Err(DecodeError::Future(9)) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_rejected_not_a_stack_overflow() {
        // 100k nested one-element arrays: would overflow a naive recursive decoder.
        let mut body = vec![0x91u8; 100_000];
        body.push(0xc0);
        assert!(decode_payload::<serde_json::Value>(&body).is_err());
    }

    #[test]
    fn length_bombs_fail_without_allocating_the_claimed_size() {
        // An array and a string that claim 4 GiB of elements/bytes but have none.
        for body in [
            vec![0xdd, 0xff, 0xff, 0xff, 0xff],
            vec![0xdb, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert!(decode_payload::<Event>(&body).is_err());
            assert!(decode_payload::<serde_json::Value>(&body).is_err());
        }
    }
}
