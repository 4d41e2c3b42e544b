//! What the world was at any point of any branch (docs/history.md): the world as of an
//! [`AsOf`], and what an entity remembered ([`Engine::memories_at`]) and believed
//! ([`Engine::beliefs_at`]) then.
//!
//! **Beliefs: an index of versions** (`belief_index`, docs/history.md "How it is answered").
//! `beliefs_at` reads the versions of what a belief answer reads (names, beliefs held,
//! availability seen and reported, drive settings, edges, the clock), each kept under the
//! event that set it, through the same code as `World::beliefs_of` (`log::BeliefReads`, the
//! one way that code reads a world). The versions are found by diffing the world before and
//! after each event as a replay applies it (`World::belief_changes`), not listed per event
//! kind, so the answer is exact whatever the events do; only the drive settings, kept in the
//! minds every line rewrites, are reached by event kind (`log::settings_reach`, any kind not
//! known to spare them counting for everyone). An answer costs microseconds and no world; the
//! first question about a stretch not recorded yet replays it once (from the last event
//! recorded, rebuilt as below). In the 1M-event bench this meets the 20 ms target
//! (benches/README.md, "What did X believe at time T").
//!
//! **Worlds: checkpoints, spaced.** A past world (for `world_at`, `memories_at`, a query
//! asked as of a point, `beliefs_at` with the index off) is rebuilt from the log: the nearest
//! world already known at or before the point (an in-memory checkpoint, else the nearest
//! persisted snapshot, else nothing), then a replay of the events after it, so it is exactly
//! what a full replay to that point gives, by construction. A [`World`] is built from
//! persistent maps, so a clone is O(1) and shares every node with the world it came from: a
//! checkpoint costs the nodes the events after it copy on write. The spacing bounds a warm
//! answer's work (`checkpoint_every` events at most); the cap (`max_checkpoints`: past it every
//! other one is dropped and the spacing doubles) bounds memory on any log. Both costs grow with
//! the world's churn: in the 1M-event bench a checkpoint holds about 4 MB per thousand events
//! and a replay from one costs about 7 µs an event, so a whole world there is rebuilt in a
//! few hundred ms.
//!
//! Checkpoints and versions are keyed by the stored branch that holds their seq (a branch's
//! history is the stored stretches of its ancestors up to each fork point, then its own), so
//! one serves every branch that shares that stretch, a rewind keeps them all, and a fork
//! starts with its parent's. Checkpoints are taken as past worlds are replayed and, once the
//! past has been asked about, as commits are installed (the live world, once a branch passes a
//! multiple of the spacing: a host that never asks keeps none); versions as past events are
//! replayed, each stretch in order from its first event. A storage failure that makes the
//! engine re-read its store drops them all, and deleting a branch drops those of the events it
//! purges.

use super::catalog::Segment;
use super::{Engine, latest_snapshot_world, visit_range};
use crate::error::{Error, Result};
use crate::log::{BeliefReads, BeliefView, Event, World, settings_reach};
use crate::model::{AsOf, Edge, EntityId, HistoryPoint, Memory, Millis, Seq};
use crate::store::{BranchId, Store};
mod belief_index;
use belief_index::BeliefIndex;
use serde::Serialize;
use std::collections::BTreeMap;

/// How an engine keeps past worlds in memory to answer questions about the past
/// ([`Engine::set_history_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryOptions {
    /// A checkpoint every this many events of a branch's history (at least 1): the most events
    /// a warm answer replays.
    pub checkpoint_every: u64,
    /// The most checkpoints kept (at least 1). Past it, every other one is dropped and the
    /// spacing doubles.
    pub max_checkpoints: usize,
    /// Whether [`Engine::beliefs_at`] answers from an index of the versions of what beliefs
    /// read (docs/history.md), kept as the past is replayed; otherwise from a whole world
    /// rebuilt from the nearest checkpoint, as [`Engine::world_at`] is.
    pub belief_index: bool,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            checkpoint_every: 4096,
            max_checkpoints: 16,
            belief_index: true,
        }
    }
}

/// What the history keeps now ([`Engine::history_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HistoryStats {
    /// Past worlds held in memory.
    pub checkpoints: usize,
    /// The spacing in force, in events (`checkpoint_every`, doubled each time the cap was
    /// reached).
    pub spacing: u64,
    /// Versions kept by the index of past beliefs (see [`HistoryOptions::belief_index`]).
    pub belief_versions: usize,
}

/// What an entity could recall at a point of history ([`Engine::memories_at`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoriesAt {
    /// Whose.
    pub entity: EntityId,
    /// The branch asked about.
    pub branch: String,
    /// The point: right after the event of this seq.
    pub seq: Seq,
    /// The world's clock then.
    pub now: Millis,
    /// Its own memories, witnessed and recallable then, oldest first (by creation, then id).
    pub memories: Vec<Memory>,
}

/// What an entity believed at a point of history ([`Engine::beliefs_at`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BeliefsAt {
    /// Whose.
    pub entity: EntityId,
    /// The branch asked about.
    pub branch: String,
    /// The point: right after the event of this seq.
    pub seq: Seq,
    /// The world's clock then: the time the confidences are read at.
    pub now: Millis,
    /// What it believed about each person, as [`World::beliefs_of`] reads it at `now`.
    pub beliefs: Vec<BeliefView>,
    /// Its own edges then (what it felt toward and knew of each entity), by target id.
    pub edges: Vec<Edge>,
}

/// The in-memory checkpoints of past worlds.
#[derive(Debug, Default)]
pub(super) struct History {
    options: HistoryOptions,
    /// The spacing in force.
    every: u64,
    /// By (stored branch holding the seq, seq).
    checkpoints: BTreeMap<(BranchId, Seq), World>,
    /// Whether the past was asked about: only then do commits keep checkpoints (a host that
    /// never asks pays nothing).
    asked: bool,
    /// The versions of what belief answers read (`belief_index`).
    beliefs: BeliefIndex,
    /// Worlds of the recent past, each with the stored branch whose history it is a prefix of:
    /// the world right before each of the last commits, and the last worlds asked for. A world
    /// a few events back (a swipe's, an edit's) replays from the nearest of them instead of a
    /// checkpoint far behind. Kept always: they share nearly all their parts with the live
    /// world.
    recent: std::collections::VecDeque<(BranchId, World)>,
}

/// How many recent worlds [`History`] keeps.
const RECENT: usize = 4;

impl History {
    pub fn new() -> History {
        let options = HistoryOptions::default();
        History {
            every: options.checkpoint_every,
            options,
            checkpoints: BTreeMap::new(),
            asked: false,
            beliefs: BeliefIndex::default(),
            recent: Default::default(),
        }
    }

    /// Drops every checkpoint and version (the store may hold something else than they came
    /// from).
    pub fn clear(&mut self) {
        self.checkpoints.clear();
        self.beliefs.clear();
        self.recent.clear();
    }

    /// Drops the checkpoints of `branch` after `keep` (its events there are purged).
    pub fn forget(&mut self, branch: BranchId, keep: Seq) {
        self.checkpoints
            .retain(|(b, s), _| *b != branch || *s <= keep);
        self.beliefs.forget(branch, keep);
        self.recent.retain(|(b, w)| *b != branch || w.seq() <= keep);
    }

    /// The latest checkpoint at or before `seq` along `segments` (a branch's history).
    fn nearest(&self, segments: &[Segment], seq: Seq) -> Option<&World> {
        segments.iter().rev().find_map(|seg| {
            let last = seg.last.min(seq);
            if seg.first > last {
                return None;
            }
            self.checkpoints
                .range((seg.branch, seg.first)..=(seg.branch, last))
                .next_back()
                .map(|(_, w)| w)
        })
    }

    /// Keeps `world`, a prefix of stored branch `branch`'s history, among the recent worlds.
    fn remember(&mut self, branch: BranchId, world: &World) {
        self.recent
            .retain(|(b, w)| *b != branch || w.seq() != world.seq());
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((branch, world.clone()));
    }

    /// The recent world of `branch` nearest at or before `seq`.
    fn recent_at(&self, branch: BranchId, seq: Seq) -> Option<&World> {
        self.recent
            .iter()
            .filter(|(b, w)| *b == branch && w.seq() <= seq)
            .map(|(_, w)| w)
            .max_by_key(|w| w.seq())
    }

    /// Whether a checkpoint lies within half the spacing of `seq` in `branch`'s stretch.
    fn near(&self, branch: BranchId, seq: Seq) -> bool {
        let half = (self.every / 2).max(1);
        self.checkpoints
            .range((branch, seq.saturating_sub(half - 1))..=(branch, seq.saturating_add(half - 1)))
            .next()
            .is_some()
    }

    /// Keeps `world` (of the stored branch `branch`), then keeps the count under the cap.
    fn keep(&mut self, branch: BranchId, world: &World) {
        self.checkpoints
            .insert((branch, world.seq()), world.clone());
        while self.checkpoints.len() > self.options.max_checkpoints {
            self.every = self.every.saturating_mul(2);
            self.thin();
        }
    }

    /// Keeps, on each stored branch, only checkpoints at least the spacing apart.
    fn thin(&mut self) {
        let mut last: Option<(BranchId, Seq)> = None;
        let every = self.every;
        self.checkpoints.retain(|(b, s), _| match last {
            Some((lb, ls)) if lb == *b && s - ls < every => false,
            _ => {
                last = Some((*b, *s));
                true
            }
        });
        if self.checkpoints.len() > self.options.max_checkpoints {
            // Spaced already, still too many: drop the oldest.
            let excess = self.checkpoints.len() - self.options.max_checkpoints;
            let drop: Vec<_> = self.checkpoints.keys().take(excess).copied().collect();
            for k in drop {
                self.checkpoints.remove(&k);
            }
        }
    }

    /// Before a commit of `events` to the stored branch `branch` (whose stretch starts after
    /// `base`) is installed over `live`: records them in the index of past beliefs, re-applied
    /// one by one to a copy of `live`, when the index is in use (the past was asked about) and
    /// has recorded the stretch up to `live`, so the next question needs no replay.
    pub fn record_commit(&mut self, branch: BranchId, base: Seq, live: &World, events: &[Event]) {
        self.remember(branch, live);
        let first = live.seq() + 1;
        let stretch = Segment {
            branch,
            first: base + 1,
            last: live.seq() + events.len() as Seq,
        };
        if !self.asked || !self.options.belief_index || !self.beliefs.wants(&stretch, first) {
            return;
        }
        let mut world = live.clone();
        for (seq, event) in (first..).zip(events) {
            let (now, maps, reach) = (world.now(), world.belief_maps(), settings_reach(event));
            if world.apply(event).is_err() {
                // Not reached (the commit applied them); the rest is replayed when asked.
                return;
            }
            self.beliefs.record(branch, seq, now, &maps, reach, &world);
        }
    }

    /// After a commit moved the stored branch `branch` from `old` to the live world's seq:
    /// keeps the live world if it passed a multiple of the spacing.
    pub fn committed(&mut self, branch: BranchId, old: Seq, live: &World) {
        let every = self.every.max(1);
        if self.asked && old / every < live.seq() / every && !self.near(branch, live.seq()) {
            self.keep(branch, live);
        }
    }
}

/// The stretch holding `seq` in a branch's history.
fn stretch(segments: &[Segment], seq: Seq) -> Option<&Segment> {
    segments.iter().find(|s| s.first <= seq && seq <= s.last)
}

/// The clock after `event` on a world whose clock is `now`: only these events move it
/// (`World::apply`); a guess checked after the event is applied.
fn clock_after(event: &Event, now: Millis) -> Millis {
    match event {
        Event::WorldCreated { now, .. } => *now,
        Event::TimeAdvanced { to } | Event::TimeSkipped { to, .. } => *to,
        _ => now,
    }
}

impl Engine {
    /// Sets how past worlds are kept in memory (see [`HistoryOptions`]); drops the checkpoints
    /// and the versions kept so far. `checkpoint_every` and `max_checkpoints` must be at least 1.
    pub fn set_history_options(&mut self, options: HistoryOptions) -> Result<()> {
        if options.checkpoint_every == 0 || options.max_checkpoints == 0 {
            return Err(Error::invalid(
                "history options",
                "checkpoint_every and max_checkpoints must be at least 1",
            ));
        }
        self.history = History {
            every: options.checkpoint_every,
            options,
            checkpoints: BTreeMap::new(),
            asked: self.history.asked,
            beliefs: BeliefIndex::default(),
            recent: std::mem::take(&mut self.history.recent),
        };
        Ok(())
    }

    /// What the history keeps in memory now.
    pub fn history_stats(&self) -> HistoryStats {
        HistoryStats {
            checkpoints: self.history.checkpoints.len(),
            spacing: self.history.every,
            belief_versions: self.history.beliefs.len(),
        }
    }

    /// The branch and seq `at` names: an error (the same kind from Rust, C and Python) for an
    /// unknown branch ([`crate::ErrorKind::NotFound`]), a seq outside the branch or a time
    /// before the world ([`crate::ErrorKind::Invalid`]).
    pub fn resolve_as_of(&mut self, at: &AsOf) -> Result<(String, Seq)> {
        self.resync_if_stale()?;
        let (branch, name) = self.branch_of(at)?;
        let head = self.heads.get(&branch).copied().unwrap_or(0);
        let seq = match at.point {
            HistoryPoint::Seq(seq) => {
                if seq < 1 || seq > head {
                    return Err(Error::invalid(
                        "as_of",
                        format!("seq {seq} is outside branch {name:?} (1..={head})"),
                    ));
                }
                seq
            }
            HistoryPoint::Time(time) => self.seq_at_time(branch, &name, head, time)?.0,
        };
        Ok((name, seq))
    }

    /// The world as it was at `at`: exactly what replaying its branch's log up to that point
    /// gives. Reading only; the engine keeps checkpoints of what it replays (see
    /// [`HistoryOptions`]), which is why it takes `&mut self`. Errors as
    /// [`Engine::resolve_as_of`].
    pub fn world_at(&mut self, at: &AsOf) -> Result<World> {
        self.world_at_named(at).map(|(_, w)| w)
    }

    fn world_at_named(&mut self, at: &AsOf) -> Result<(String, World)> {
        self.resync_if_stale()?;
        let (branch, name) = self.branch_of(at)?;
        let head = self.heads.get(&branch).copied().unwrap_or(0);
        match at.point {
            HistoryPoint::Time(time) => {
                let (_, world) = self.seq_at_time(branch, &name, head, time)?;
                Ok((name, world))
            }
            HistoryPoint::Seq(_) => {
                let (name, seq) = self.resolve_as_of(at)?;
                Ok((name, self.world_of(branch, seq)?))
            }
        }
    }

    /// What `entity` could recall at `at`: its own memories that it witnessed (the witness
    /// filter) and that were recallable then ([`Memory::recallable`]: not forgotten, not a
    /// residue, not the line of a closed scene). An entity that did not exist then is a
    /// [`crate::ErrorKind::NotFound`] error; other errors as [`Engine::resolve_as_of`].
    pub fn memories_at(&mut self, entity: EntityId, at: &AsOf) -> Result<MemoriesAt> {
        let (branch, world) = self.world_at_named(at)?;
        existed(&world, entity, &branch)?;
        let mut memories: Vec<Memory> = world
            .memories_of(entity)
            .filter(|m| m.recallable())
            .cloned()
            .collect();
        memories.sort_by_key(|m| (m.created, m.id));
        Ok(MemoriesAt {
            entity,
            branch,
            seq: world.seq(),
            now: world.now(),
            memories,
        })
    }

    /// What `entity` believed at `at`: [`World::beliefs_of`] on the world as it was then, read
    /// at that world's clock, and its own edges then. Errors as [`Engine::memories_at`].
    ///
    /// Read from the index of past beliefs (docs/history.md), after replaying once what it
    /// has not recorded yet; with [`HistoryOptions::belief_index`] off, from the world
    /// rebuilt. Both give the same answer.
    pub fn beliefs_at(&mut self, entity: EntityId, at: &AsOf) -> Result<BeliefsAt> {
        if !self.history.options.belief_index {
            return self.beliefs_at_rebuilt(entity, at);
        }
        self.resync_if_stale()?;
        let (branch, name) = self.branch_of(at)?;
        let head = self.heads.get(&branch).copied().unwrap_or(0);
        let seq = match at.point {
            HistoryPoint::Seq(_) => self.resolve_as_of(at)?.1,
            HistoryPoint::Time(time) => self.indexed_seq_at_time(branch, &name, head, time)?,
        };
        let segments = self.index_through(branch, seq)?;
        let point = self.history.beliefs.at(&segments);
        if point.named(entity).is_none() {
            return Err(Error::not_found(
                "entity",
                format!("{entity} (at seq {seq} of branch {name:?})"),
            ));
        }
        let now = point.now();
        Ok(BeliefsAt {
            entity,
            seq,
            now,
            beliefs: point.beliefs_of(entity, now),
            edges: point.edges_from(entity),
            branch: name,
        })
    }

    /// Records in the index of past beliefs every event of `branch` up to `seq` it lacks
    /// (replaying them from the world after the last one it has) and returns the stretches of
    /// the branch up to `seq`, all recorded.
    fn index_through(&mut self, branch: BranchId, seq: Seq) -> Result<Vec<Segment>> {
        let segments = self.catalog.segments(branch, seq)?;
        if let Some(from) = self.history.beliefs.missing_after(&segments) {
            let mut world = if from == 0 {
                World::new()
            } else {
                self.world_of(branch, from)?
            };
            self.replay_onto(&mut world, branch, &segments, from + 1, seq, &mut |_, _| {
                Ok(true)
            })?;
        }
        debug_assert!(self.history.beliefs.missing_after(&segments).is_none());
        Ok(segments)
    }

    /// [`Engine::seq_at_time`] read from the index's clock: the seq before the first event of
    /// the branch that moved the clock past `time` (its head if none did).
    fn indexed_seq_at_time(
        &mut self,
        branch: BranchId,
        name: &str,
        head: Seq,
        time: Millis,
    ) -> Result<Seq> {
        let created = self.world.meta().map_or(Millis::MIN, |m| m.created);
        if time < created {
            return Err(Error::invalid(
                "as_of",
                format!("time {time} is before the world (created at {created})"),
            ));
        }
        if branch == self.catalog.current && self.world.now() <= time {
            return Ok(self.head());
        }
        // The first event past `time` may lie in what is recorded already: then nothing need
        // be replayed. Otherwise the branch is recorded to its head and read again.
        let all = self.catalog.segments(branch, head)?;
        let recorded = self.history.beliefs.missing_after(&all).unwrap_or(head);
        let known: Vec<Segment> = all
            .iter()
            .filter(|seg| seg.first <= recorded)
            .map(|seg| Segment {
                last: seg.last.min(recorded),
                ..*seg
            })
            .collect();
        let after = match self.history.beliefs.first_after(&known, time) {
            Some(s) => Some(s),
            None => {
                let segments = self.index_through(branch, head)?;
                self.history.beliefs.first_after(&segments, time)
            }
        };
        let found = after.map_or(head, |s| s - 1);
        if found == 0 {
            return Err(Error::invalid(
                "as_of",
                format!("time {time} is before the first event of branch {name:?}"),
            ));
        }
        Ok(found)
    }

    /// [`Engine::beliefs_at`] read from the world rebuilt.
    fn beliefs_at_rebuilt(&mut self, entity: EntityId, at: &AsOf) -> Result<BeliefsAt> {
        let (branch, world) = self.world_at_named(at)?;
        existed(&world, entity, &branch)?;
        Ok(BeliefsAt {
            entity,
            branch,
            seq: world.seq(),
            now: world.now(),
            beliefs: world.beliefs_of(entity, world.now()),
            edges: world.edges_from(entity).cloned().collect(),
        })
    }

    fn branch_of(&self, at: &AsOf) -> Result<(BranchId, String)> {
        match &at.branch {
            None => Ok((self.catalog.current, self.current_branch().to_owned())),
            Some(name) => Ok((self.catalog.by_name(name)?.id, name.clone())),
        }
    }

    /// The world of `branch` (whose head is `head`) after the last event whose clock is at or
    /// before `time`, and its seq.
    fn seq_at_time(
        &mut self,
        branch: BranchId,
        name: &str,
        head: Seq,
        time: Millis,
    ) -> Result<(Seq, World)> {
        let created = self.world.meta().map_or(Millis::MIN, |m| m.created);
        if time < created {
            return Err(Error::invalid(
                "as_of",
                format!("time {time} is before the world (created at {created})"),
            ));
        }
        if branch == self.catalog.current && self.world.now() <= time {
            return Ok((self.head(), self.world.clone()));
        }
        let segments = self.catalog.segments(branch, head)?;
        // The checkpoints along the branch, oldest first; their clocks only grow.
        let known: Vec<&World> = segments
            .iter()
            .flat_map(|seg| {
                self.history
                    .checkpoints
                    .range((seg.branch, seg.first)..=(seg.branch, seg.last))
                    .map(|(_, w)| w)
            })
            .collect();
        let after = known.partition_point(|w| w.now() <= time);
        let start = after.checked_sub(1).map(|i| known[i].clone());
        let last = known.get(after).map_or(head, |w| w.seq() - 1);
        let mut world = start.unwrap_or_default();
        if world.now() > time {
            // Unreachable with clocks that only grow; replay from the start to be sure.
            world = World::new();
        }
        let first = world.seq() + 1;
        let reached =
            self.replay_onto(&mut world, branch, &segments, first, last, &mut |e, w| {
                Ok(clock_after(e, w.now()) <= time)
            })?;
        let (found, guessed_wrong) = (reached.seq(), reached.now() > time);
        if guessed_wrong {
            // An event moved the clock although `clock_after` said it would not: find the seq
            // the slow way, one event at a time, from the start of the stretch.
            return self.seq_at_time_slowly(branch, name, head, time);
        }
        if found == 0 {
            return Err(Error::invalid(
                "as_of",
                format!("time {time} is before the first event of branch {name:?}"),
            ));
        }
        Ok((found, world))
    }

    /// [`Engine::seq_at_time`] without guessing clocks: replays the branch from the start and
    /// stops at the first event that moves the clock past `time`.
    fn seq_at_time_slowly(
        &mut self,
        branch: BranchId,
        name: &str,
        head: Seq,
        time: Millis,
    ) -> Result<(Seq, World)> {
        let mut found = None;
        let mut world = World::new();
        visit_range(
            &self.store,
            &self.catalog,
            branch,
            1,
            head,
            &mut |seq, event| {
                if found.is_some() {
                    return Ok(());
                }
                world
                    .apply_owned(event)
                    .map_err(|e| self.corrupt_event(seq, e))?;
                if world.now() > time {
                    found = Some(seq - 1);
                }
                Ok(())
            },
        )?;
        let found = found.unwrap_or(head);
        if found == 0 {
            return Err(Error::invalid(
                "as_of",
                format!("time {time} is before the first event of branch {name:?}"),
            ));
        }
        Ok((found, self.world_of(branch, found)?))
    }

    fn corrupt_event(&self, seq: Seq, e: Error) -> Error {
        Error::Corrupt {
            file: self.store.name().to_owned(),
            location: format!("seq {seq}"),
            message: format!("a stored event does not apply: {e}"),
        }
    }

    /// The world of `branch` right after `seq` (checked to be on it).
    fn world_of(&mut self, branch: BranchId, seq: Seq) -> Result<World> {
        if branch == self.catalog.current && seq == self.head() {
            return Ok(self.world.clone());
        }
        let segments = self.catalog.segments(branch, seq)?;
        let mut world = self.history.nearest(&segments, seq).cloned();
        // A recent world, when it is on the way and nearer.
        if let Some(before) = self.history.recent_at(branch, seq)
            && world.as_ref().is_none_or(|w| w.seq() < before.seq())
        {
            world = Some(before.clone());
        }
        let from = world.as_ref().map_or(0, World::seq);
        if seq - from > self.history.every {
            // Far from any checkpoint: the nearest persisted snapshot may be nearer.
            if let Some((snap, _)) =
                latest_snapshot_world(&self.store, &self.catalog, branch, seq, from)?
            {
                world = Some(snap);
            }
        }
        let mut world = world.unwrap_or_default();
        let first = world.seq() + 1;
        self.replay_onto(&mut world, branch, &segments, first, seq, &mut |_, _| {
            Ok(true)
        })?;
        self.history.remember(branch, &world);
        Ok(world)
    }

    /// Applies the events `first..=last` of `branch` to `world` while `go` says so (asked with
    /// each event before it is applied), keeping a checkpoint at each multiple of the spacing
    /// that has none near it, and recording in the index of past beliefs each event that is
    /// the next one of its stretch to record. Hands the world back for a last look.
    fn replay_onto<'w>(
        &mut self,
        world: &'w mut World,
        branch: BranchId,
        segments: &[Segment],
        first: Seq,
        last: Seq,
        go: &mut dyn FnMut(&Event, &World) -> Result<bool>,
    ) -> Result<&'w World> {
        if first > last {
            return Ok(world);
        }
        let history = &mut self.history;
        history.asked = true;
        let file = self.store.name();
        let mut stopped = false;
        let _span = tracing::info_span!("history.replay", first, last).entered();
        let meter = super::progress::Meter::start(
            self.options.progress.as_ref(),
            super::Progress::HISTORY_REPLAY,
            last - first + 1,
        );
        let read = visit_range(
            &self.store,
            &self.catalog,
            branch,
            first,
            last,
            &mut |seq, event| {
                if !go(&event, world)? {
                    // Ends the reading: the error is dropped below.
                    stopped = true;
                    return Err(Error::conflict("the replay stopped here"));
                }
                let kind = event.kind();
                meter.tick();
                let held = stretch(segments, seq);
                // What the index needs to find this event's changes, if it records it.
                let before = held
                    .filter(|seg| history.options.belief_index && history.beliefs.wants(seg, seq))
                    .map(|seg| {
                        (
                            seg.branch,
                            world.now(),
                            world.belief_maps(),
                            settings_reach(&event),
                        )
                    });
                world.apply_owned(event).map_err(|e| Error::Corrupt {
                    file: file.to_owned(),
                    location: format!("seq {seq}"),
                    message: format!("the stored {kind} event does not apply: {e}"),
                })?;
                if let Some((branch, now, maps, reach)) = before {
                    history
                        .beliefs
                        .record(branch, seq, now, &maps, reach, world);
                }
                let every = history.every.max(1);
                if seq % every == 0
                    && let Some(seg) = held
                    && !history.near(seg.branch, seq)
                {
                    history.keep(seg.branch, world);
                }
                Ok(())
            },
        );
        if read.is_ok() || stopped {
            meter.finish();
        }
        match read {
            Err(_) if stopped => Ok(world),
            Err(e) => Err(e),
            Ok(_) => Ok(world),
        }
    }
}

/// Refuses an entity that did not exist in `world`.
fn existed(world: &World, entity: EntityId, branch: &str) -> Result<()> {
    if world.entity(entity).is_none() {
        return Err(Error::not_found(
            "entity",
            format!("{entity} (at seq {} of branch {branch:?})", world.seq()),
        ));
    }
    Ok(())
}
