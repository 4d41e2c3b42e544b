//! What the world was at any point of any branch (docs/history.md): the world as of an
//! [`AsOf`], and what an entity remembered ([`Engine::memories_at`]) and believed
//! ([`Engine::beliefs_at`]) then.
//!
//! A past world is rebuilt from the log: the nearest world already known at or before the
//! point (an in-memory checkpoint, else the nearest persisted snapshot, else nothing), then a
//! replay of the events after it. The answer is therefore exactly what a full replay to that
//! point gives, by construction: it runs the same `apply` over the same events.
//!
//! **Why checkpoints of whole worlds, and why they are spaced** (docs/history.md, "How it is
//! answered"). A [`World`] is built from persistent maps, so a clone is O(1) and shares every
//! node with the world it came from: a checkpoint costs the nodes the events after it copy on
//! write. The spacing bounds a warm answer's work (`checkpoint_every` events at most); the cap
//! (`max_checkpoints`: past it every other one is dropped and the spacing doubles) bounds
//! memory on any log. Both costs grow with the world's churn: in the 1M-event bench, where
//! every line heard rewrites the hearers' minds, contacts and beliefs, a checkpoint holds about
//! 4 MB per thousand events and a replay from one costs about 7 µs an event (the node paths it
//! shares are copied on first touch), so `beliefs_at` there misses the 20 ms target (measured in
//! benches/README.md, "What did X believe at time T"). A per-entity index of the versions of
//! what an answer reads would meet it, but would be exact only while its list of what
//! `World::beliefs_of` reads is complete (the host's reports about anyone, the names of the
//! people believed about, the drive settings, the availability seen in lines heard, ...);
//! whole-world checkpoints are exact by construction, with no list to keep in step.
//!
//! Checkpoints are keyed by the stored branch that holds their seq (a branch's history is the
//! stored stretches of its ancestors up to each fork point, then its own), so one checkpoint
//! serves every branch that shares that stretch, a rewind keeps them all, and a fork starts
//! with its parent's. They are taken as past worlds are replayed and, once the past has been
//! asked about, as commits are installed (the live world, once a branch passes a multiple of
//! the spacing: a host that never asks keeps none); a storage failure that
//! makes the engine re-read its store drops them all, and deleting a branch drops those of
//! the events it purges.

use super::catalog::Segment;
use super::{Engine, latest_snapshot_world, visit_range};
use crate::error::{Error, Result};
use crate::log::{BeliefView, Event, World};
use crate::model::{AsOf, Edge, EntityId, HistoryPoint, Memory, Millis, Seq};
use crate::store::BranchId;
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
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            checkpoint_every: 4096,
            max_checkpoints: 16,
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
}

impl History {
    pub fn new() -> History {
        let options = HistoryOptions::default();
        History {
            every: options.checkpoint_every,
            options,
            checkpoints: BTreeMap::new(),
            asked: false,
        }
    }

    /// Drops every checkpoint (the store may hold something else than they came from).
    pub fn clear(&mut self) {
        self.checkpoints.clear();
    }

    /// Drops the checkpoints of `branch` after `keep` (its events there are purged).
    pub fn forget(&mut self, branch: BranchId, keep: Seq) {
        self.checkpoints
            .retain(|(b, s), _| *b != branch || *s <= keep);
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

    /// After a commit moved the stored branch `branch` from `old` to the live world's seq:
    /// keeps the live world if it passed a multiple of the spacing.
    pub fn committed(&mut self, branch: BranchId, old: Seq, live: &World) {
        let every = self.every.max(1);
        if self.asked && old / every < live.seq() / every && !self.near(branch, live.seq()) {
            self.keep(branch, live);
        }
    }
}

/// The stored branch holding `seq` in a branch's history.
fn holder(segments: &[Segment], seq: Seq) -> Option<BranchId> {
    segments
        .iter()
        .find(|s| s.first <= seq && seq <= s.last)
        .map(|s| s.branch)
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
    /// kept so far. `checkpoint_every` and `max_checkpoints` must be at least 1.
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
        };
        Ok(())
    }

    /// What the history keeps in memory now.
    pub fn history_stats(&self) -> HistoryStats {
        HistoryStats {
            checkpoints: self.history.checkpoints.len(),
            spacing: self.history.every,
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
    pub fn beliefs_at(&mut self, entity: EntityId, at: &AsOf) -> Result<BeliefsAt> {
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
            self.store.as_ref(),
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
        let from = world.as_ref().map_or(0, World::seq);
        if seq - from > self.history.every {
            // Far from any checkpoint: the nearest persisted snapshot may be nearer.
            if let Some((snap, _)) =
                latest_snapshot_world(self.store.as_ref(), &self.catalog, branch, seq, from)?
            {
                world = Some(snap);
            }
        }
        let mut world = world.unwrap_or_default();
        let first = world.seq() + 1;
        self.replay_onto(&mut world, branch, &segments, first, seq, &mut |_, _| {
            Ok(true)
        })?;
        Ok(world)
    }

    /// Applies the events `first..=last` of `branch` to `world` while `go` says so (asked with
    /// each event before it is applied), keeping a checkpoint at each multiple of the spacing
    /// that has none near it. Hands the world back for a last look.
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
        let read = visit_range(
            self.store.as_ref(),
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
                world.apply_owned(event).map_err(|e| Error::Corrupt {
                    file: file.to_owned(),
                    location: format!("seq {seq}"),
                    message: format!("the stored {kind} event does not apply: {e}"),
                })?;
                let every = history.every.max(1);
                if seq % every == 0
                    && let Some(holder) = holder(segments, seq)
                    && !history.near(holder, seq)
                {
                    history.keep(holder, world);
                }
                Ok(())
            },
        );
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
