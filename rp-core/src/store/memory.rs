//! An in-memory store: the same records as the save file, kept in ordered maps.

use super::{BranchId, Commit, SnapshotVisitor, Store};
use crate::error::Result;
use crate::model::Seq;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A store that lives in RAM and vanishes with the process. Useful for tests, tools and
/// worlds that are loaded fresh each run.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    meta: Option<Vec<u8>>,
    events: BTreeMap<(BranchId, Seq), Vec<u8>>,
    snapshots: BTreeMap<(BranchId, Seq), Vec<u8>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl Store for MemoryStore {
    fn name(&self) -> &str {
        ":memory:"
    }

    fn meta(&self) -> Result<Option<Vec<u8>>> {
        Ok(self.meta.clone())
    }

    fn commit(&mut self, commit: Commit) -> Result<()> {
        for (branch, after) in commit.purge {
            self.events.retain(|(b, s), _| *b != branch || *s <= after);
            self.snapshots
                .retain(|(b, s), _| *b != branch || *s <= after);
        }
        for key in commit.drop_snapshots {
            self.snapshots.remove(&key);
        }
        for (b, s, bytes) in commit.events {
            self.events.insert((b, s), bytes);
        }
        for (b, s, bytes) in commit.snapshots {
            self.snapshots.insert((b, s), bytes);
        }
        if let Some(meta) = commit.meta {
            self.meta = Some(meta);
        }
        Ok(())
    }

    fn read_events(
        &self,
        branch: BranchId,
        first: Seq,
        last: Seq,
        visit: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
    ) -> Result<()> {
        if first > last {
            return Ok(());
        }
        for ((_, s), bytes) in self.events.range((branch, first)..=(branch, last)) {
            visit(*s, bytes)?;
        }
        Ok(())
    }

    fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>> {
        Ok(self
            .events
            .range((branch, 0)..=(branch, Seq::MAX))
            .next_back()
            .map(|((_, s), _)| *s))
    }

    fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>> {
        Ok(self
            .snapshots
            .range((branch, 0)..=(branch, Seq::MAX))
            .map(|((_, s), _)| *s)
            .collect())
    }

    fn latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
    ) -> Result<Option<(Seq, Vec<u8>)>> {
        super::copy_latest_snapshot(self, branch, min, max)
    }

    fn visit_latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
        visit: &mut SnapshotVisitor<'_>,
    ) -> Result<bool> {
        if min > max {
            return Ok(false);
        }
        match self
            .snapshots
            .range((branch, min)..=(branch, max))
            .next_back()
        {
            Some(((_, s), b)) => visit(*s, Cow::Borrowed(b)).map(|()| true),
            None => Ok(false),
        }
    }
}
