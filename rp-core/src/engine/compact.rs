//! Compaction (docs/history.md#compaction): giving back the room a save holds without using
//! it. Snapshots that no branch opens from any more are dropped, then the store compacts its
//! file ([`crate::store::Store::compact`]), so the file shrinks to what it holds.
//!
//! The engine drops superseded snapshots as it writes new ones, and redb reuses the pages they
//! leave, but a file never shrinks on its own: [`Engine::compact`] is the call that makes it.

use super::Engine;
use super::progress::{Meter, Progress};
use crate::error::{Error, Result};
use crate::log::codec::{self, RecordKind};
use crate::model::Seq;
use crate::store::{BranchId, Commit, Store};
use serde::Serialize;
use std::path::Path;

/// What [`Engine::compact`] did: the size of the save's file before and after, and what it
/// dropped. Its JSON (serde) is what the C and Python bindings hand out.
///
/// Sizes are those of the save's file: 0 for a store without one (an engine in memory, a
/// store over a storage backend). `file_bytes_*` is the file's length; `allocated_bytes_*`
/// what the file system has allocated for it (on Unix `st_blocks` × 512, which can be less
/// than the length for a sparse file, or more; elsewhere the length).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Compaction {
    /// The file's length before compacting (after pending commits were made durable).
    pub file_bytes_before: u64,
    /// The file's length after compacting.
    pub file_bytes_after: u64,
    /// The room the file took on disk before compacting.
    pub allocated_bytes_before: u64,
    /// The room the file takes on disk after compacting.
    pub allocated_bytes_after: u64,
    /// Snapshots dropped, over all branches: those no branch opens from any more.
    pub snapshots_dropped: u64,
    /// Whether the store moved or gave back anything ([`crate::store::Store::compact`]).
    pub compacted: bool,
    /// Records of an older format rewritten in the current one (events, snapshots and the
    /// metadata of a save written before format 2: docs/changes.md); 0 once a save is current.
    pub records_upgraded: u64,
}

/// The bytes of upgraded records written per commit: a save of any size is upgraded in
/// bounded memory, each commit whole or not at all.
const UPGRADE_BYTES: usize = 8 << 20;
/// The events read per pass while upgrading.
const UPGRADE_EVENTS: Seq = 20_000;

impl Engine {
    /// Compacts the save: makes pending commits durable (as [`Engine::flush`]), drops on
    /// every branch the snapshots no longer needed (all but the latest of the branch and, for
    /// each branch forked from it, the latest at or before the fork point: the rule the
    /// engine follows when it writes a snapshot), in one durable commit, rewrites the records
    /// of an older format in the current one (a save written before format 2 is about half
    /// the size after), then compacts the store's file so that it shrinks to what it holds.
    /// The world, the branches, their heads and histories do not change, and the save opens
    /// to the same worlds as before; opening costs what it did (every branch keeps the
    /// snapshot it opens from).
    ///
    /// Takes a time proportional to the size of the save (the file is rewritten in place),
    /// during which the engine is busy; reports the phase `compact` to the progress callback
    /// (docs/progress.md). Compacting a compact save is harmless and cheap. An engine in
    /// memory drops its superseded snapshots and reports sizes of 0.
    ///
    /// Refused as any writing call is: [`crate::ErrorKind::Storage`] when the file cannot be
    /// written (a full disk, an I/O error), [`crate::ErrorKind::Corrupt`] when damage is found
    /// on the way. A compaction that fails leaves a save that opens with the same worlds (at
    /// worst its room is not reclaimed, or its superseded snapshots are already dropped), and
    /// the engine usable.
    pub fn compact(&mut self) -> Result<Compaction> {
        let _span = tracing::info_span!("compact", store = self.store.name()).entered();
        let progress = self.options.progress.clone();
        let meter = Meter::start(progress.as_ref(), Progress::COMPACT, 4);
        self.flush()?;
        meter.tick();
        let file = self.store.file();
        let before = FileSize::of(file.as_deref(), self.store.name())?;

        let mut dropped: Vec<(BranchId, Seq)> = Vec::new();
        for branch in self
            .catalog
            .branches
            .iter()
            .map(|b| b.id)
            .collect::<Vec<_>>()
        {
            dropped.extend(self.superseded_snapshots(branch)?);
        }
        let snapshots_dropped = dropped.len() as u64;
        if !dropped.is_empty() {
            self.write(Commit {
                drop_snapshots: dropped,
                durable: true,
                ..Commit::default()
            })?;
        }
        meter.tick();
        let records_upgraded = self.upgrade_records()?;
        meter.tick();

        let compacted = self.store.compact()?;
        let after = FileSize::of(file.as_deref(), self.store.name())?;
        meter.finish();
        Ok(Compaction {
            file_bytes_before: before.length,
            file_bytes_after: after.length,
            allocated_bytes_before: before.allocated,
            allocated_bytes_after: after.allocated,
            snapshots_dropped,
            compacted,
            records_upgraded,
        })
    }

    /// Rewrites every stored record of an older format in the current one, in durable
    /// commits of at most [`UPGRADE_BYTES`]; returns how many. A crash between commits leaves
    /// records of both formats, which read alike; the next compaction finishes the work.
    fn upgrade_records(&mut self) -> Result<u64> {
        let name = self.store.name().to_owned();
        // A record in the current format (`None`: it is already), damage named where it was.
        let upgrade = |bytes: &[u8], kind: RecordKind, branch: BranchId, seq: Seq| {
            let what = match kind {
                RecordKind::Event => "event",
                RecordKind::Snapshot => "snapshot",
                RecordKind::Meta => "metadata",
            };
            codec::upgrade(bytes, kind)
                .map_err(|e| e.at(&name, format!("{what} at seq {seq} of branch {branch}")))
        };
        let mut upgraded = 0u64;
        let mut batch = Commit {
            durable: true,
            ..Commit::default()
        };
        let mut batch_bytes = 0usize;
        let branches: Vec<BranchId> = self.catalog.branches.iter().map(|b| b.id).collect();
        for branch in branches {
            let last = self.store.last_seq(branch)?.unwrap_or(0);
            let mut first = 1;
            while first <= last {
                let to = last.min(first.saturating_add(UPGRADE_EVENTS - 1));
                self.store
                    .read_events(branch, first, to, &mut |seq, bytes| {
                        if let Some(new) = upgrade(bytes, RecordKind::Event, branch, seq)? {
                            batch_bytes += new.len();
                            batch.events.push((branch, seq, new));
                        }
                        Ok(())
                    })?;
                if batch_bytes >= UPGRADE_BYTES {
                    upgraded += self.write_upgrades(&mut batch, &mut batch_bytes)?;
                }
                first = to + 1;
            }
            for seq in self.store.snapshot_seqs(branch)? {
                // Read where the store holds it: a snapshot may be hundreds of megabytes.
                self.store
                    .visit_latest_snapshot(branch, seq, seq, &mut |seq, bytes| {
                        if let Some(new) = upgrade(&bytes, RecordKind::Snapshot, branch, seq)? {
                            batch_bytes += new.len();
                            batch.snapshots.push((branch, seq, new));
                        }
                        Ok(())
                    })?;
                if !batch.snapshots.is_empty() {
                    upgraded += self.write_upgrades(&mut batch, &mut batch_bytes)?;
                }
            }
        }
        if let Some(meta) = self.store.meta()?
            && let Some(new) =
                codec::upgrade(&meta, RecordKind::Meta).map_err(|e| e.at(&name, "metadata"))?
        {
            batch.meta = Some(new);
        }
        upgraded += self.write_upgrades(&mut batch, &mut batch_bytes)?;
        Ok(upgraded)
    }

    /// Writes the upgraded records gathered in `batch`, durably, and empties it; how many.
    fn write_upgrades(&mut self, batch: &mut Commit, bytes: &mut usize) -> Result<u64> {
        let n = batch.events.len() + batch.snapshots.len() + usize::from(batch.meta.is_some());
        if n > 0 {
            let commit = std::mem::replace(
                batch,
                Commit {
                    durable: true,
                    ..Commit::default()
                },
            );
            self.write(commit)?;
        }
        *bytes = 0;
        Ok(n as u64)
    }
}

/// The size of a file: its length and what the file system allocated for it.
#[derive(Clone, Copy, Debug, Default)]
struct FileSize {
    length: u64,
    allocated: u64,
}

impl FileSize {
    /// The size of `file`; zero without one. `name` is the store's, for errors.
    fn of(file: Option<&Path>, name: &str) -> Result<FileSize> {
        let Some(file) = file else {
            return Ok(FileSize::default());
        };
        let meta = std::fs::metadata(file).map_err(|e| Error::Storage {
            file: name.to_owned(),
            message: format!("reading the file's size: {e}"),
        })?;
        #[cfg(unix)]
        let allocated = std::os::unix::fs::MetadataExt::blocks(&meta) * 512;
        #[cfg(not(unix))]
        let allocated = meta.len();
        Ok(FileSize {
            length: meta.len(),
            allocated,
        })
    }
}
