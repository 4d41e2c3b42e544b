//! Group commit: commits that need not reach the disk yet are held in memory and written in one
//! transaction with the next commit that must.
//!
//! A commit made without durability (`Commit::durable` false) is lost by a crash either way: a
//! store in a file keeps it in the process's memory until a durable commit follows (redb's
//! `Durability::None`). What differs is the cost: each such commit is a transaction of its own
//! (about 20 µs of a 10-event turn, whatever it holds). [`Grouped`] keeps them instead and
//! writes them with the next durable commit, so a run of eventual turns costs one transaction.
//! What a crash can lose is unchanged, and so is what readers see: reads see the held events
//! as if they were written.

use super::{BranchId, Commit, SnapshotVisitor, Store};
use crate::error::Result;
use crate::model::Seq;

/// Held events are written, without durability, once they weigh this much: the memory a run
/// of eventual commits holds stays bounded whatever its events weigh. (The engine makes a
/// commit durable every [`crate::engine::MAX_UNSYNCED_EVENTS`] events, which writes them
/// sooner at the usual event sizes.)
const MAX_HELD_BYTES: usize = 4 << 20;

/// A store whose eventual commits of events alone are held, then written with the next commit
/// that is durable, or that does more than add events. Reads see the held events.
pub(crate) struct Grouped {
    inner: Box<dyn Store>,
    /// Events committed without durability and not yet written, in commit order: each branch's
    /// follow on from what `inner` holds of that branch.
    held: Vec<(BranchId, Seq, Vec<u8>)>,
    held_bytes: usize,
}

impl Grouped {
    pub fn new(inner: Box<dyn Store>) -> Grouped {
        Grouped {
            inner,
            held: Vec::new(),
            held_bytes: 0,
        }
    }

    /// The store underneath, with the held events written to it (not durably). If that write
    /// fails the store is handed back still grouped: it still holds them.
    pub fn into_inner(mut self) -> Box<dyn Store> {
        match self.write_held() {
            // `Grouped` has a destructor, so its store is taken out by swapping in an empty one.
            Ok(()) => std::mem::replace(&mut self.inner, Box::new(super::MemoryStore::new())),
            Err(_) => Box::new(self),
        }
    }

    /// Writes the held events in a commit of their own, not durably.
    fn write_held(&mut self) -> Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        self.commit_with_held(Commit::default())
    }

    /// Commits `commit` with the held events in front of it: one transaction, so all of them
    /// land or none. Held events that a purge of `commit` drops are never written. Whatever
    /// happens, nothing is held afterwards: on failure the store holds what it held before,
    /// and the engine, which keeps every eventual event until a durable commit, writes them
    /// again or says they are lost.
    fn commit_with_held(&mut self, mut commit: Commit) -> Result<()> {
        let mut held = std::mem::take(&mut self.held);
        self.held_bytes = 0;
        for (branch, after) in &commit.purge {
            held.retain(|(b, s, _)| b != branch || s <= after);
        }
        if !held.is_empty() {
            held.append(&mut commit.events);
            commit.events = held;
        }
        self.inner.commit(commit)
    }
}

/// Whether `commit` only adds events and may wait for the next durable one.
fn may_wait(commit: &Commit) -> bool {
    !commit.durable
        && commit.snapshots.is_empty()
        && commit.meta.is_none()
        && commit.purge.is_empty()
        && commit.drop_snapshots.is_empty()
}

impl Store for Grouped {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn meta(&self) -> Result<Option<Vec<u8>>> {
        self.inner.meta()
    }

    fn commit(&mut self, commit: Commit) -> Result<()> {
        if !may_wait(&commit) {
            return self.commit_with_held(commit);
        }
        self.held_bytes += commit.events.iter().map(|(_, _, b)| b.len()).sum::<usize>();
        self.held.extend(commit.events);
        if self.held_bytes >= MAX_HELD_BYTES {
            return self.write_held();
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
        self.inner.read_events(branch, first, last, visit)?;
        // Held events come after all the store holds of their branch, in seq order.
        for (_, seq, bytes) in self
            .held
            .iter()
            .filter(|(b, s, _)| *b == branch && (first..=last).contains(s))
        {
            visit(*seq, bytes)?;
        }
        Ok(())
    }

    fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>> {
        match self.held.iter().rev().find(|(b, _, _)| *b == branch) {
            Some((_, seq, _)) => Ok(Some(*seq)),
            None => self.inner.last_seq(branch),
        }
    }

    fn sidecar(&self) -> Option<std::path::PathBuf> {
        self.inner.sidecar()
    }

    fn file(&self) -> Option<std::path::PathBuf> {
        self.inner.file()
    }

    fn compact(&mut self) -> Result<bool> {
        self.write_held()?;
        self.inner.compact()
    }

    fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>> {
        self.inner.snapshot_seqs(branch)
    }

    fn prepare_writes(&mut self) -> Result<()> {
        self.inner.prepare_writes()
    }

    fn visit_latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
        visit: &mut SnapshotVisitor<'_>,
    ) -> Result<bool> {
        self.inner.visit_latest_snapshot(branch, min, max, visit)
    }

    fn latest_snapshot(
        &self,
        branch: BranchId,
        min: Seq,
        max: Seq,
    ) -> Result<Option<(Seq, Vec<u8>)>> {
        self.inner.latest_snapshot(branch, min, max)
    }
}

impl Drop for Grouped {
    /// Closing writes what is held, as it was committed: not durably (a store in a file makes
    /// it durable as it closes). A failure here cannot be reported; it loses what a crash at
    /// this moment would.
    fn drop(&mut self) {
        let _ = self.write_held();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::store::MemoryStore;

    /// A store in memory that counts its commits and can be told to fail the next one.
    #[derive(Default)]
    pub(crate) struct Counting {
        store: MemoryStore,
        pub commits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        pub fail_next: bool,
    }

    impl Store for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        fn meta(&self) -> Result<Option<Vec<u8>>> {
            self.store.meta()
        }
        fn commit(&mut self, commit: Commit) -> Result<()> {
            if std::mem::take(&mut self.fail_next) {
                return Err(crate::Error::Storage {
                    file: "counting".into(),
                    message: "injected".into(),
                });
            }
            self.commits
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.store.commit(commit)
        }
        fn read_events(
            &self,
            branch: BranchId,
            first: Seq,
            last: Seq,
            visit: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
        ) -> Result<()> {
            self.store.read_events(branch, first, last, visit)
        }
        fn last_seq(&self, branch: BranchId) -> Result<Option<Seq>> {
            self.store.last_seq(branch)
        }
        fn snapshot_seqs(&self, branch: BranchId) -> Result<Vec<Seq>> {
            self.store.snapshot_seqs(branch)
        }
        fn latest_snapshot(
            &self,
            branch: BranchId,
            min: Seq,
            max: Seq,
        ) -> Result<Option<(Seq, Vec<u8>)>> {
            self.store.latest_snapshot(branch, min, max)
        }
    }

    fn events(branch: BranchId, seqs: std::ops::RangeInclusive<Seq>) -> Commit {
        Commit {
            events: seqs.map(|s| (branch, s, vec![s as u8; 3])).collect(),
            ..Commit::default()
        }
    }

    fn seqs(store: &dyn Store, branch: BranchId) -> Vec<Seq> {
        let mut out = Vec::new();
        store
            .read_events(branch, 1, Seq::MAX, &mut |s, b| {
                assert_eq!(b, [s as u8; 3]);
                out.push(s);
                Ok(())
            })
            .expect("read");
        out
    }

    fn grouped() -> (Grouped, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let inner = Counting::default();
        let commits = inner.commits.clone();
        (Grouped::new(Box::new(inner)), commits)
    }

    fn count(c: &std::sync::atomic::AtomicUsize) -> usize {
        c.load(std::sync::atomic::Ordering::SeqCst)
    }

    #[test]
    fn eventual_commits_wait_for_the_next_durable_one_and_are_read_meanwhile() {
        let (mut store, commits) = grouped();
        store.commit(events(1, 1..=3)).expect("commit");
        store.commit(events(1, 4..=5)).expect("commit");
        store.commit(events(2, 1..=2)).expect("commit");
        assert_eq!(count(&commits), 0, "nothing written yet");
        assert_eq!(seqs(&store, 1), [1, 2, 3, 4, 5]);
        assert_eq!(seqs(&store, 2), [1, 2]);
        assert_eq!(store.last_seq(1).expect("last"), Some(5));
        let mut within = Vec::new();
        store
            .read_events(1, 2, 4, &mut |s, _| {
                within.push(s);
                Ok(())
            })
            .expect("read");
        assert_eq!(within, [2, 3, 4]);

        let mut durable = events(1, 6..=6);
        durable.durable = true;
        store.commit(durable).expect("durable");
        assert_eq!(count(&commits), 1, "one transaction for all of them");
        assert_eq!(seqs(store.inner.as_ref(), 1), [1, 2, 3, 4, 5, 6]);
        assert_eq!(seqs(store.inner.as_ref(), 2), [1, 2]);
    }

    #[test]
    fn a_purge_drops_held_events_past_it_in_the_same_transaction() {
        let (mut store, commits) = grouped();
        store.commit(events(1, 1..=4)).expect("commit");
        let rewind = Commit {
            purge: vec![(1, 2)],
            meta: Some(b"catalog".to_vec()),
            ..events(1, 3..=3)
        };
        store.commit(rewind).expect("rewind");
        assert_eq!(count(&commits), 1);
        assert_eq!(seqs(&store, 1), [1, 2, 3]);
        assert_eq!(store.last_seq(1).expect("last"), Some(3));
    }

    #[test]
    fn a_failed_commit_writes_nothing_and_holds_nothing() {
        let inner = Counting {
            fail_next: true,
            ..Counting::default()
        };
        let mut store = Grouped::new(Box::new(inner));
        store.commit(events(1, 1..=2)).expect("held");
        let mut durable = events(1, 3..=3);
        durable.durable = true;
        store.commit(durable).expect_err("injected");
        assert_eq!(seqs(&store, 1), Vec::<Seq>::new());
        assert_eq!(store.last_seq(1).expect("last"), None);
    }

    #[test]
    fn held_events_are_written_past_the_byte_bound_on_compaction_and_when_handed_back() {
        let (mut store, commits) = grouped();
        let big = Commit {
            events: vec![(1, 1, vec![1; MAX_HELD_BYTES])],
            ..Commit::default()
        };
        store.commit(big).expect("commit");
        assert_eq!(count(&commits), 1, "written once past the bound");
        store.commit(events(1, 2..=2)).expect("commit");
        store.compact().expect("compact");
        assert_eq!(count(&commits), 2, "compaction writes what is held first");
        store.commit(events(1, 3..=3)).expect("commit");
        let inner = store.into_inner();
        assert_eq!(
            count(&commits),
            3,
            "handing the store back writes what is held"
        );
        assert_eq!(inner.last_seq(1).expect("last"), Some(3));
    }

    /// A branch as reads see it: its last seq, its events, its snapshots' seqs.
    type Branch = (BranchId, Option<Seq>, Vec<(Seq, Vec<u8>)>, Vec<Seq>);

    /// What a store holds, as its reads see it, branch by branch.
    fn contents(store: &dyn Store) -> Vec<Branch> {
        (1..=2)
            .map(|branch| {
                let mut events = Vec::new();
                store
                    .read_events(branch, 0, Seq::MAX, &mut |s, b| {
                        events.push((s, b.to_vec()));
                        Ok(())
                    })
                    .expect("read");
                let last = store.last_seq(branch).expect("last");
                let snapshots = store.snapshot_seqs(branch).expect("snapshots");
                (branch, last, events, snapshots)
            })
            .collect()
    }

    proptest::proptest! {
        /// Whatever commits it is given (eventual, durable, rewinds, snapshots, on two
        /// branches), a grouped store reads at every step as the store it wraps would read
        /// given them directly, and holds the same once handed back.
        #[test]
        fn a_grouped_store_reads_as_the_store_it_wraps(
            ops in proptest::collection::vec((1u64..=2, 0u8..6, 1u64..4), 1..60)
        ) {
            let mut plain = MemoryStore::new();
            let mut store = Grouped::new(Box::new(MemoryStore::new()));
            let mut heads = [0u64; 3];
            for (branch, kind, n) in ops {
                let head = &mut heads[branch as usize];
                let commit = match kind {
                    // Events, mostly eventual.
                    0..=2 => {
                        let c = events(branch, *head + 1..=*head + n);
                        *head += n;
                        Commit { durable: kind == 2, ..c }
                    }
                    // A rewind of n events, with a new one after it.
                    3 => {
                        let after = head.saturating_sub(n);
                        *head = after + 1;
                        Commit { purge: vec![(branch, after)], ..events(branch, after + 1..=after + 1) }
                    }
                    // A snapshot at the head.
                    4 => Commit { snapshots: vec![(branch, *head, vec![7])], ..Commit::default() },
                    _ => Commit { durable: true, ..Commit::default() },
                };
                let copy = Commit {
                    events: commit.events.clone(),
                    snapshots: commit.snapshots.clone(),
                    meta: commit.meta.clone(),
                    purge: commit.purge.clone(),
                    drop_snapshots: commit.drop_snapshots.clone(),
                    durable: commit.durable,
                };
                plain.commit(copy).expect("plain");
                store.commit(commit).expect("grouped");
                proptest::prop_assert_eq!(contents(&store), contents(&plain));
            }
            let inner = store.into_inner();
            proptest::prop_assert_eq!(contents(inner.as_ref()), contents(&plain));
        }
    }

    #[test]
    fn dropping_writes_what_is_held() {
        let (mut store, commits) = grouped();
        store.commit(events(1, 1..=2)).expect("commit");
        drop(store);
        assert_eq!(count(&commits), 1);
    }
}
