//! The engine's writer thread: it takes the store and a commit, writes it (encoding the
//! snapshot first, if the commit takes one) and hands the store back, so that the engine's own
//! thread can work while a durable commit waits on the disk. One long-lived thread per engine,
//! started when first needed: a thread made per commit starts cold (its allocator arena, its
//! caches) and took three times as long to commit.

use super::LoadCost;
use crate::error::{Error, Result};
use crate::log::{World, codec};
use crate::model::Seq;
use crate::store::{BranchId, Commit, Grouped, Store};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// A commit for the writer.
pub(super) struct Job {
    pub store: Grouped,
    pub commit: Commit,
    /// The world to snapshot, and where, if the commit takes a snapshot.
    pub snapshot: Option<(BranchId, Seq, World)>,
    /// The load cost after the commit; the snapshot's size is filled in once encoded.
    pub cost: LoadCost,
}

/// What the writer hands back: always the store, and how the commit went.
pub(super) struct Done {
    pub store: Grouped,
    pub result: Result<LoadCost>,
}

pub(super) struct Writer {
    jobs: Option<Sender<Box<Job>>>,
    done: Receiver<Done>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    pub fn spawn() -> std::io::Result<Writer> {
        let (jobs, inbox) = channel::<Box<Job>>();
        let (outbox, done) = channel::<Done>();
        let thread = std::thread::Builder::new()
            .name("rp-writer".into())
            .spawn(move || {
                for job in inbox {
                    if outbox.send(run(job)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Writer {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        })
    }

    /// Hands `job` to the thread; gives it back if the thread is gone.
    pub fn start(&self, job: Box<Job>) -> std::result::Result<(), Box<Job>> {
        match &self.jobs {
            Some(jobs) => jobs.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }

    /// Waits for the job started last. `None` only if the thread died holding it (it cannot
    /// panic: the commit runs inside a panic boundary).
    pub fn wait(&self) -> Option<Done> {
        self.done.recv().ok()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Writes one job (also used on the caller's thread when no writer thread can be had).
pub(super) fn run(job: Box<Job>) -> Done {
    let Job {
        mut store,
        mut commit,
        snapshot,
        mut cost,
    } = *job;
    let result = catch_unwind(AssertUnwindSafe(|| {
        let at = snapshot.as_ref().map(|(b, s, w)| (*b, *s, w));
        encode_snapshot(&mut commit, &mut cost, at);
        store.commit(commit).map(|()| cost)
    }))
    .unwrap_or_else(|_| {
        Err(Error::Storage {
            file: store.name().to_owned(),
            message: "the commit panicked".into(),
        })
    });
    Done { store, result }
}

/// Encodes the snapshot, if the commit takes one, into the commit, and notes its size.
pub(super) fn encode_snapshot(
    commit: &mut Commit,
    cost: &mut LoadCost,
    at: Option<(BranchId, Seq, &World)>,
) {
    encode_snapshot_within(commit, cost, at, codec::MAX_SNAPSHOT_BYTES);
}

/// [`encode_snapshot`], storing a snapshot of at most `limit` bytes.
fn encode_snapshot_within(
    commit: &mut Commit,
    cost: &mut LoadCost,
    at: Option<(BranchId, Seq, &World)>,
    limit: usize,
) {
    if let Some((branch, seq, world)) = at {
        let bytes = codec::encode_snapshot(world);
        // Its size is what the next snapshot waits for, stored or not: one too large to read
        // back is not stored (the save opens from the snapshot before and the log after it),
        // and the next is tried once a quarter of its size has been appended since.
        cost.snapshot_bytes = bytes.len() as u64;
        if codec::fits_within(&bytes, limit) {
            commit.snapshots.push((branch, seq, bytes));
        } else {
            commit.drop_snapshots.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_too_large_to_read_back_is_not_stored() {
        let world = World::new();
        let bytes = codec::encode_snapshot(&world);
        let len = bytes.len();
        let body = codec::record_sizes(&bytes).expect("a record").1;
        for (limit, stored) in [(len.max(body), true), (len.max(body) - 1, false)] {
            let mut commit = Commit {
                drop_snapshots: vec![(1, 5)],
                ..Commit::default()
            };
            let mut cost = LoadCost::default();
            encode_snapshot_within(&mut commit, &mut cost, Some((1, 9, &world)), limit);
            assert_eq!(commit.snapshots.len(), usize::from(stored));
            // Stored or not, its size paces the next; nothing is dropped for one not stored.
            assert_eq!(cost.snapshot_bytes, len as u64);
            assert_eq!(commit.drop_snapshots.is_empty(), !stored);
        }
        const { assert!(codec::MAX_SNAPSHOT_BYTES > codec::MAX_RECORD_BYTES) };
    }
}
