//! How events reach the store: validate against a copy of the world, write one transaction,
//! then install the copy. [`Engine::append_overlapped`] lets work that only needs the new world
//! run while a durable commit waits on the disk.

use super::writer::{self, Done, Job, Writer};
use super::{Engine, LoadCost, MAX_UNSYNCED_EVENTS};
use crate::error::{Error, Result};
use crate::log::{Event, World, codec};
use crate::model::Seq;
use crate::store::{BranchId, Commit, Grouped, Store};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// A validated batch: the world after it, and the transaction that records it.
struct Prepared {
    next: World,
    commit: Commit,
    cost: LoadCost,
    branch: BranchId,
    new_head: Seq,
    /// The commit takes a snapshot of `next`, not yet encoded.
    snapshot: bool,
}

/// What a commit written by the writer may have to go back to.
type Before = (World, LoadCost, std::collections::BTreeMap<BranchId, Seq>);

/// What an engine's store is while its commit runs on another thread: anything that reaches
/// for it meanwhile gets an error, never a half-written file. It still names the store and
/// where the store keeps what is derived from it.
struct Busy(String, Option<std::path::PathBuf>);

impl Store for Busy {
    fn name(&self) -> &str {
        &self.0
    }
    fn sidecar(&self) -> Option<std::path::PathBuf> {
        self.1.clone()
    }
    fn meta(&self) -> Result<Option<Vec<u8>>> {
        Err(busy(&self.0))
    }
    fn commit(&mut self, _: Commit) -> Result<()> {
        Err(busy(&self.0))
    }
    fn read_events(
        &self,
        _: BranchId,
        _: Seq,
        _: Seq,
        _: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
    ) -> Result<()> {
        Err(busy(&self.0))
    }
    fn last_seq(&self, _: BranchId) -> Result<Option<Seq>> {
        Err(busy(&self.0))
    }
    fn snapshot_seqs(&self, _: BranchId) -> Result<Vec<Seq>> {
        Err(busy(&self.0))
    }
    fn latest_snapshot(&self, _: BranchId, _: Seq, _: Seq) -> Result<Option<(Seq, Vec<u8>)>> {
        Err(busy(&self.0))
    }
}

fn busy(name: &str) -> Error {
    Error::conflict(format!(
        "{name} is busy with a commit; work overlapped with a commit cannot read the store"
    ))
}

impl Engine {
    pub(super) fn commit_events(&mut self, events: &[Event], durable: bool) -> Result<Seq> {
        self.commit_events_applied(events, durable, None)
    }

    /// [`Engine::commit_events`] of `events` already applied, in order, to a copy of this
    /// engine's world as it is now: `applied` is the world after them, which then need not be
    /// validated again.
    pub(super) fn commit_events_applied(
        &mut self,
        events: &[Event],
        durable: bool,
        applied: Option<World>,
    ) -> Result<Seq> {
        let _span = tracing::info_span!("commit", events = events.len()).entered();
        self.resync_if_stale()?;
        let Some(prepared) = self.prepare(events, durable, applied)? else {
            return Ok(self.head());
        };
        self.write_now(prepared, events)
    }

    /// [`Engine::append`], running `work` on the engine as it is after `events` while the
    /// commit is written. A durable commit waits on the disk; `work` runs meanwhile on this
    /// thread, and the store's write on another, so the caller waits for the longer of the
    /// two instead of their sum. When this returns the commit is as durable as `append` would
    /// have made it.
    ///
    /// `work` must not read the store (it gets an error if it does): the world and the
    /// indexes are what it has. If the commit fails, the engine goes back to the world before
    /// `events` (its indexes are rebuilt when next needed), `work`'s answer is dropped, and
    /// the storage error is returned. Nothing to commit: `work` just runs.
    pub(crate) fn append_overlapped<R>(
        &mut self,
        events: Vec<Event>,
        work: impl FnOnce(&mut Engine) -> R,
    ) -> Result<(Seq, R)> {
        self.append_applied(events, None, work)
    }

    /// [`Engine::append_overlapped`] of `events` already applied, in order, to a copy of this
    /// engine's world taken at `epoch`: `applied.0` is the world after them, which then need not
    /// be validated again. If the world changed since `epoch`, they are validated as usual.
    pub(crate) fn append_applied<R>(
        &mut self,
        mut events: Vec<Event>,
        mut applied: Option<(World, u64)>,
        work: impl FnOnce(&mut Engine) -> R,
    ) -> Result<(Seq, R)> {
        let _span = tracing::info_span!("commit", events = events.len()).entered();
        self.resync_if_stale()?;
        self.add_announcements(&mut events, applied.as_mut())?;
        let durable = self.options.durability == super::Durability::Immediate;
        let applied = applied
            .filter(|(_, epoch)| *epoch == self.epoch)
            .map(|(next, _)| next);
        let Some(prepared) = self.prepare(&events, durable, applied)? else {
            let r = work(self);
            return Ok((self.head(), r));
        };
        if !prepared.commit.durable {
            // Nothing to wait for: an eventual commit costs less than a thread.
            let new_head = self.write_now(prepared, &events)?;
            let r = work(self);
            return Ok((new_head, r));
        }
        let Prepared {
            next,
            commit,
            cost,
            branch,
            new_head,
            snapshot,
        } = prepared;
        let before = (self.world.clone(), self.cost, self.heads.clone());
        let name = self.store.name().to_owned();
        let sidecar = self.store.sidecar();
        let store = std::mem::replace(
            &mut self.store,
            Grouped::new(Box::new(Busy(name.clone(), sidecar))),
        );
        let job = Box::new(Job {
            store,
            commit,
            // The writer also encodes the snapshot, if this commit takes one.
            snapshot: snapshot.then(|| (branch, new_head, next.clone())),
            cost,
        });
        let started = match &self.writer {
            Some(writer) => writer.start(job),
            None => match Writer::spawn() {
                Ok(writer) => writer.start(job).map(|()| self.writer = Some(writer)),
                Err(_) => Err(job),
            },
        };
        if let Err(job) = started {
            // No thread to be had: write here, then work.
            let Done { store, result } = writer::run(job);
            self.store = store;
            self.install(next, cost, branch, new_head, &events);
            self.settle(result, before)?;
            return Ok((new_head, work(self)));
        }
        // The indexes catch up while the commit is written.
        self.install(next, cost, branch, new_head, &events);
        let done = catch_unwind(AssertUnwindSafe(|| work(self)));
        let Some(Done { store, result }) = self.writer.as_ref().and_then(Writer::wait) else {
            // The store went down with the thread: nothing can be written again.
            self.writer = None;
            let lost = Error::Storage {
                file: name,
                message: "the writer thread stopped; reopen the save".into(),
            };
            return Err(self.roll_back(before, lost));
        };
        self.store = store;
        self.settle(result, before)?;
        match done {
            Ok(r) => Ok((new_head, r)),
            Err(panic) => resume_unwind(panic),
        }
    }

    /// After a durable commit written by the writer: keep the world installed for it, or, if
    /// it failed, go back to the world `before` it.
    fn settle(&mut self, result: Result<LoadCost>, before: Before) -> Result<()> {
        match result {
            Ok(cost) => {
                self.cost = cost;
                self.unsynced.clear();
                Ok(())
            }
            Err(e) => Err(self.roll_back(before, e)),
        }
    }

    /// Goes back to the world `before` a commit that failed with `error` (its indexes are
    /// rebuilt when next needed), and returns the error.
    fn roll_back(&mut self, before: Before, error: Error) -> Error {
        (self.world, self.cost, self.heads) = before;
        self.drop_memory_index();
        self.history.clear();
        self.stale = true;
        error
    }

    /// Writes a prepared batch on this thread (its snapshot encoded first) and installs it.
    fn write_now(&mut self, prepared: Prepared, events: &[Event]) -> Result<Seq> {
        let Prepared {
            next,
            mut commit,
            mut cost,
            branch,
            new_head,
            snapshot,
        } = prepared;
        let at = snapshot.then_some((branch, new_head, &next));
        writer::encode_snapshot(&mut commit, &mut cost, at);
        self.write(commit)?;
        self.install(next, cost, branch, new_head, events);
        Ok(new_head)
    }

    /// Validates `events` on a copy of the world and builds their transaction; `None` if
    /// there are none.
    fn prepare(
        &self,
        events: &[Event],
        durable: bool,
        applied: Option<World>,
    ) -> Result<Option<Prepared>> {
        let head = self.head();
        if events.is_empty() {
            return Ok(None);
        }
        let next = match applied {
            Some(next) if next.seq() == head + events.len() as u64 => next,
            _ => {
                let mut next = self.world.clone();
                for e in events {
                    next.apply(e)?;
                }
                next
            }
        };
        let branch = self.catalog.current;
        let new_head = next.seq();
        let durable = durable || self.unsynced.len() + events.len() > MAX_UNSYNCED_EVENTS;
        let mut commit = Commit {
            events: events
                .iter()
                .zip(head + 1..)
                .map(|(e, s)| (branch, s, codec::encode_event(e)))
                .collect(),
            durable,
            ..Commit::default()
        };
        let appended: u64 = commit.events.iter().map(|(_, _, b)| b.len() as u64).sum();
        let mut cost = LoadCost {
            tail_bytes: self.cost.tail_bytes + appended,
            ..self.cost
        };
        let every = self.options.snapshot_every;
        // Snapshot at every `snapshot_every` boundary once the events replayed after the last
        // snapshot weigh at least a quarter of it: opening stays cheap, and a large world is
        // not rewritten on every boundary (write amplification stays under 4×).
        let snapshot = every > 0
            && head / every < new_head / every
            && cost.tail_bytes >= cost.snapshot_bytes / 4;
        if snapshot {
            // Its size is known once it is encoded.
            cost.tail_bytes = 0;
            commit.drop_snapshots = self.superseded_snapshots(branch)?;
        }
        if head == 0 {
            commit.meta = Some(codec::encode(&self.catalog));
        }
        Ok(Some(Prepared {
            next,
            commit,
            cost,
            branch,
            new_head,
            snapshot,
        }))
    }

    /// Makes the prepared world current, once its commit is written (or being written).
    fn install(
        &mut self,
        next: World,
        cost: LoadCost,
        branch: BranchId,
        new_head: Seq,
        events: &[Event],
    ) {
        let old = self.heads.get(&branch).copied().unwrap_or(0);
        let base = self.catalog.get(branch).map_or(0, |b| b.base());
        self.history
            .record_commit(branch, base, &self.world, events);
        self.world = next;
        self.epoch += 1;
        self.cost = cost;
        self.heads.insert(branch, new_head);
        self.history.committed(branch, old, &self.world);
        self.index_events(events);
    }

    /// Snapshots of `branch` that a new one makes useless: all but the latest (kept in case
    /// the new one is ever unreadable) and, for each branch forked from this one, the latest
    /// at or before its fork point (what opening that branch starts from).
    pub(super) fn superseded_snapshots(&self, branch: BranchId) -> Result<Vec<(BranchId, Seq)>> {
        let seqs = self.store.snapshot_seqs(branch)?;
        let latest_at_or_before = |seq: Seq| seqs.iter().rev().find(|s| **s <= seq).copied();
        let mut keep: Vec<Seq> = seqs.last().copied().into_iter().collect();
        keep.extend(
            self.catalog
                .children(branch)
                .filter_map(|c| latest_at_or_before(c.base())),
        );
        Ok(seqs
            .iter()
            .filter(|s| !keep.contains(s))
            .map(|s| (branch, *s))
            .collect())
    }

    /// Commits to the store; on failure marks the engine stale so the next call re-reads
    /// what the store actually holds.
    pub(super) fn write(&mut self, commit: Commit) -> Result<()> {
        let durable = commit.durable;
        let pending = if durable {
            Vec::new()
        } else {
            commit.events.clone()
        };
        let r = self.store.commit(commit);
        match &r {
            Ok(()) if durable => self.unsynced.clear(),
            Ok(()) => self.unsynced.extend(pending),
            Err(_) => self.stale = true,
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Millis;

    fn durable_engine(dir: &tempfile::TempDir) -> Engine {
        Engine::create(dir.path().join("save.rp"), "Overlap", 0).expect("create")
    }

    fn tick(to: Millis) -> Vec<Event> {
        vec![Event::TimeAdvanced { to }]
    }

    #[test]
    fn overlapped_work_sees_the_new_world_but_not_the_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut engine = durable_engine(&dir);
        let (head, (now, read)) = engine
            .append_overlapped(tick(5), |e| {
                (e.world().now(), e.events(1, 1).map(|v| v.len()))
            })
            .expect("append");
        assert_eq!(head, engine.head());
        assert_eq!(now, 5, "work sees the world after the events");
        let err = read.expect_err("the store is busy while it commits");
        assert_eq!(err.kind(), crate::ErrorKind::Conflict, "{err}");
        // Afterwards the store is back, and the events are on it.
        assert_eq!(engine.events(1, head).expect("events").len() as u64, head);
        let reopened = {
            drop(engine);
            Engine::open(dir.path().join("save.rp")).expect("open")
        };
        assert_eq!(reopened.world().now(), 5);
    }

    #[test]
    fn a_panic_in_overlapped_work_leaves_the_engine_usable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut engine = durable_engine(&dir);
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            engine.append_overlapped(tick(7), |_| panic!("work failed"))
        }));
        assert!(r.is_err(), "the panic reaches the caller");
        // The commit itself went through, and the store is back in place.
        assert_eq!(engine.world().now(), 7);
        engine.append(tick(9)).expect("append after the panic");
        drop(engine);
        let reopened = Engine::open(dir.path().join("save.rp")).expect("open");
        assert_eq!(reopened.world().now(), 9);
    }

    #[test]
    fn eventual_commits_are_written_together_with_the_next_durable_one() {
        let store = crate::store::grouped::tests::Counting::default();
        let commits = store.commits.clone();
        let written = || commits.load(std::sync::atomic::Ordering::SeqCst);
        let options = super::super::EngineOptions {
            durability: super::super::Durability::Eventual,
            snapshot_every: 0,
            ..Default::default()
        };
        let mut engine = Engine::new_in(Box::new(store), "Grouped", 0, options).expect("create");
        let created = written();
        for to in 1..=50 {
            engine.append(tick(to)).expect("append");
        }
        assert_eq!(written(), created, "eventual commits are held");
        assert_eq!(engine.events(1, engine.head()).expect("read").len(), 51);
        engine.flush().expect("flush");
        assert_eq!(written(), created + 1, "one transaction for the fifty");
        // Going back to immediate flushes; every commit is then written as it is made.
        engine.append(tick(60)).expect("append");
        engine
            .set_durability(super::super::Durability::Immediate)
            .expect("immediate");
        assert_eq!(written(), created + 2);
        engine.append(tick(61)).expect("append");
        assert_eq!(written(), created + 3);
        let store = engine.into_store();
        assert_eq!(store.last_seq(1).expect("last"), Some(53));
    }

    #[test]
    fn durability_names_parse_and_a_bad_one_is_invalid() {
        use super::super::Durability;
        for d in [Durability::Immediate, Durability::Eventual] {
            assert_eq!(d.name().parse::<Durability>().expect("a name"), d);
        }
        let err = "sometimes".parse::<Durability>().expect_err("not a name");
        assert_eq!(err.kind(), crate::ErrorKind::Invalid, "{err}");
        assert!(err.to_string().contains("\"sometimes\""), "{err}");
    }

    #[test]
    fn an_invalid_batch_is_refused_before_work_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut engine = durable_engine(&dir);
        let head = engine.head();
        let mut ran = false;
        let err = engine
            .append_overlapped(
                vec![Event::EntityRemoved {
                    id: crate::EntityId(999),
                }],
                |_| {
                    ran = true;
                },
            )
            .expect_err("unknown entity");
        assert_eq!(err.kind(), crate::ErrorKind::NotFound, "{err}");
        assert!(!ran, "work runs only for a valid batch");
        assert_eq!(engine.head(), head);
    }
}
