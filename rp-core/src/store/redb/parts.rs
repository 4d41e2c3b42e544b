//! Snapshots stored in parts.
//!
//! redb keeps a value larger than a page in one allocation of a power-of-two number of pages,
//! and writes all of it: a snapshot of 76 MB took 128 MB of disk, the rest zeros. A snapshot
//! larger than [`PART_BYTES`] is therefore stored as parts of at most that size in their own
//! table, keyed (branch, seq, part), each filling most of a 1 MiB allocation; its row in
//! `rp_snapshots` holds a manifest (the number of parts and the snapshot's length) instead of
//! the bytes. Smaller snapshots are stored as before, so saves written before parts existed
//! read the same.

use redb::{ReadableTable, Table, TableDefinition};

/// The parts of large snapshots, keyed (branch, seq, part from 0).
pub(super) const PARTS: TableDefinition<(u64, u64, u32), &[u8]> =
    TableDefinition::new("rp_snapshot_parts");

/// The largest part: with its key and the leaf's header it fits a 1 MiB allocation.
pub(super) const PART_BYTES: usize = (1 << 20) - 8192;

/// What a manifest starts with; a record never does (records start with `rp`).
const MANIFEST: &[u8; 8] = b"RPPARTS\0";

/// The manifest of a snapshot of `len` bytes stored in `count` parts.
pub(super) fn manifest(count: u32, len: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(20);
    out.extend_from_slice(MANIFEST);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out
}

/// The part count and length a manifest records; `None` when `value` is a snapshot itself.
pub(super) fn read_manifest(value: &[u8]) -> Option<Result<(u32, u64), String>> {
    let rest = value.strip_prefix(MANIFEST)?;
    Some(match rest {
        [c0, c1, c2, c3, l @ ..] if l.len() == 8 => {
            let count = u32::from_le_bytes([*c0, *c1, *c2, *c3]);
            let len = u64::from_le_bytes(l.try_into().expect("8 bytes"));
            Ok((count, len))
        }
        _ => Err("a damaged manifest of snapshot parts".to_owned()),
    })
}

/// The snapshot `(branch, seq)` put together from its `count` parts, which must make
/// `len` bytes (checked before anything is allocated for them).
///
/// A large snapshot's two halves are read on two threads, each into its place. Reading the
/// parts is copying them twice (redb's read of each part, then into the whole) into memory the
/// kernel must first clear, and at a million memories it took the thread that opens the save
/// about 130 ms while the other core waited (benches/README.md, "Parts read on two threads").
pub(super) fn assemble<T>(
    parts: &T,
    (branch, seq): (u64, u64),
    (count, len): (u32, u64),
) -> Result<Result<Vec<u8>, String>, redb::StorageError>
where
    T: ReadableTable<(u64, u64, u32), &'static [u8]> + Sync,
{
    /// Parts below which one thread reads them all: a thread costs more than a few copies.
    const SPLIT_FROM: u32 = 8;
    let fits = usize::try_from(len)
        .ok()
        .filter(|l| *l <= super::super::MAX_SNAPSHOT_BYTES)
        .filter(|l| l.div_ceil(PART_BYTES) == count as usize);
    let Some(len) = fits else {
        return Ok(Err(format!(
            "a manifest of {count} parts and {len} bytes: not a snapshot this build stores"
        )));
    };
    let mut out = vec![0u8; len];
    // Parts `from..to` into `into`, which is where they go.
    let read =
        |from: u32, to: u32, into: &mut [u8]| -> Result<Result<(), String>, redb::StorageError> {
            let mut next = from;
            let mut at = 0;
            if from < to {
                for row in parts.range((branch, seq, from)..=(branch, seq, to - 1))? {
                    let (k, v) = row?;
                    let (_, _, part) = k.value();
                    let v = v.value();
                    let size = PART_BYTES.min(into.len() - at);
                    if part != next || v.len() != size {
                        return Ok(Err(format!(
                            "part {part} of {} bytes where part {next} of {size} was due",
                            v.len()
                        )));
                    }
                    into[at..at + size].copy_from_slice(v);
                    at += size;
                    next += 1;
                }
            }
            if next != to {
                return Ok(Err(format!("{next} of {count} parts found")));
            }
            Ok(Ok(()))
        };
    let half = if count < SPLIT_FROM { count } else { count / 2 };
    let (first, second) = out.split_at_mut((half as usize * PART_BYTES).min(len));
    let (first, second) = std::thread::scope(|s| {
        let second = (half < count).then(|| s.spawn(|| read(half, count, second)));
        let first = read(0, half, first);
        let second = second.map_or(Ok(Ok(())), |t| {
            t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        });
        (first, second)
    });
    // The first half's error first, as one thread reading them in order would find it.
    match first? {
        Ok(()) => Ok(second?.map(|()| out)),
        damaged => Ok(damaged.map(|()| out)),
    }
}

/// Removes the parts of the snapshot `(branch, seq)`, giving each to `removed`.
pub(super) fn remove(
    parts: &mut Table<(u64, u64, u32), &'static [u8]>,
    (branch, seq): (u64, u64),
    removed: &mut dyn FnMut(u32, &[u8]),
) -> Result<(), redb::StorageError> {
    parts.retain_in(
        (branch, seq, 0)..=(branch, seq, u32::MAX),
        |(_, _, i), v| {
            removed(i, v);
            false
        },
    )
}

/// The parts of `bytes` (stored as such when there is more than one).
pub(super) fn split(bytes: &[u8]) -> Option<std::slice::Chunks<'_, u8>> {
    (bytes.len() > PART_BYTES).then(|| bytes.chunks(PART_BYTES))
}
