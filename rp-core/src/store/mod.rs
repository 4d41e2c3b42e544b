//! Where the log lives. A [`Store`] is a dumb, ordered key-value home for encoded records:
//! events keyed by (branch, seq), snapshots keyed the same way, and one metadata record. All
//! meaning (branches, replay, validation) lives in [`crate::Engine`], so both stores behave
//! identically by construction.
//!
//! [`RedbStore`] is the save game: one redb file. [`MemoryStore`] keeps everything in RAM.

pub(crate) mod grouped;
mod memory;
pub(crate) mod redb;

pub(crate) use self::grouped::Grouped;
pub use self::memory::MemoryStore;
pub use self::redb::{BackendFactory, RedbStore};

use crate::error::Result;
use crate::model::Seq;
use std::borrow::Cow;

/// The largest snapshot a store keeps and hands back: a world of about ten million memories.
/// (The log encodes and decodes within it: [`crate::log::codec::MAX_SNAPSHOT_BYTES`].)
pub const MAX_SNAPSHOT_BYTES: usize = 3 << 30;

/// [`Store::latest_snapshot`] of a store that lends its snapshots
/// ([`Store::visit_latest_snapshot`]): a copy of what it lends.
fn copy_latest_snapshot(
    store: &(impl Store + ?Sized),
    branch: BranchId,
    min: Seq,
    max: Seq,
) -> Result<Option<(Seq, Vec<u8>)>> {
    let mut out = None;
    store.visit_latest_snapshot(branch, min, max, &mut |seq, bytes| {
        out = Some((seq, bytes.into_owned()));
        Ok(())
    })?;
    Ok(out)
}

/// What [`Store::visit_latest_snapshot`] calls with the snapshot it found: its seq and its
/// bytes, lent (`Cow::Borrowed`) or given (`Cow::Owned`).
pub type SnapshotVisitor<'a> = dyn FnMut(Seq, Cow<'_, [u8]>) -> Result<()> + 'a;

/// The internal id of a branch. Names are for users; ids never change or get reused.
pub type BranchId = u64;

/// One atomic write: everything in it lands, or nothing does.
#[derive(Debug, Default)]
pub struct Commit {
    /// Encoded events, keyed by (branch, seq).
    pub events: Vec<(BranchId, Seq, Vec<u8>)>,
    /// Encoded snapshots, keyed by (branch, seq of the last event they include).
    pub snapshots: Vec<(BranchId, Seq, Vec<u8>)>,
    /// The new metadata record, if it changed.
    pub meta: Option<Vec<u8>>,
    /// Delete every event and snapshot of the branch with a seq greater than the given one.
    pub purge: Vec<(BranchId, Seq)>,
    /// Delete these snapshots (superseded ones).
    pub drop_snapshots: Vec<(BranchId, Seq)>,
    /// Whether the commit must be on stable storage before `commit` returns.
    pub durable: bool,
}

/// Storage for the log. Implementations must make [`Store::commit`] atomic: after a crash the
/// store holds every earlier commit whole and this one whole or not at all.
pub trait Store: Send {
    /// A name for errors: the file path, or `":memory:"`.
    fn name(&self) -> &str;

    /// The metadata record, or `None` for a store that was never written.
    fn meta(&self) -> Result<Option<Vec<u8>>>;

    /// Applies `commit` atomically.
    fn commit(&mut self, commit: Commit) -> Result<()>;

    /// Calls `visit` for each event of `branch` with `first <= seq <= last`, in seq order.
    fn read_events(
        &self,
        branch: BranchId,
        first: Seq,
        last: Seq,
        visit: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
    ) -> Result<()>;

    /// The highest seq stored for `branch`, if any.
    fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>>;

    /// Where data derived from the log is kept beside it (the memory index), for a store in a
    /// file: the save's path with `.index` added. `None`: kept in memory only.
    fn sidecar(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The file that holds the store, for a store in one: what [`Store::compact`] shrinks.
    /// `None`: the store keeps its records elsewhere (in memory, in a storage backend).
    fn file(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// Gives back the space the store holds without using it (the pages that dropped
    /// snapshots and replaced records left free): afterwards the store holds the same records
    /// in less room. Returns whether anything was moved or given back.
    ///
    /// Nothing may be reading the store meanwhile (`&mut self` sees to that within a process).
    /// A compaction that fails leaves the records as they were: at worst the room is not
    /// reclaimed.
    ///
    /// The default does nothing and returns `false`: a store in memory, such as
    /// [`MemoryStore`], frees what it drops at once.
    fn compact(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// The seqs at which `branch` has snapshots, ascending.
    fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>>;

    /// Called once the engine has loaded and accepted the store's content, before it writes:
    /// a store that opened read-only (so that rejecting a file never modifies it) takes its
    /// write access and lock here.
    fn prepare_writes(&mut self) -> Result<()> {
        Ok(())
    }

    /// Calls `visit` with the snapshot of `branch` with the highest seq in `min..=max`, if
    /// any; returns whether there was one. A store that can lends the bytes where it holds
    /// them, without a copy (`Cow::Borrowed`: a long campaign's snapshot is tens of
    /// megabytes); one that had to put them together gives them (`Cow::Owned`), so that the
    /// visitor may free them once it has read them, before it returns (an open frees a
    /// snapshot once it is decompressed). The default gives [`Store::latest_snapshot`]'s copy.
    fn visit_latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
        visit: &mut SnapshotVisitor<'_>,
    ) -> Result<bool> {
        match self.latest_snapshot(branch, min, max)? {
            Some((seq, bytes)) => visit(seq, Cow::Owned(bytes)).map(|()| true),
            None => Ok(false),
        }
    }

    /// The snapshot of `branch` with the highest seq in `min..=max`, if any.
    fn latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
    ) -> Result<Option<(Seq, Vec<u8>)>>;
}
