//! `Engine`: a world bound to its store. Every mutating call validates events against the
//! world, commits them to the store in one transaction, and only then updates the world, so
//! a failed write leaves the in-memory world as it was.

mod backup;
mod beliefs;
mod branches;
mod catalog;
mod commit;
mod compact;
mod history;
mod memories;
mod memory_files;
mod progress;
mod requirements;
mod rules;
mod schedule;
mod writer;

pub use branches::{BranchInfo, RewindPreview};
pub use compact::Compaction;
pub use history::{BeliefsAt, HistoryOptions, HistoryStats, MemoriesAt};
pub use progress::{Progress, ProgressFn};
pub use requirements::RequirementView;
pub use rules::RuleView;

use crate::error::{Error, Result};
use crate::facts::{Decision, SeededDraws};
use crate::log::codec::{self, DecodeError};
use crate::log::{Event, Message, World, WorldSettings};
use crate::model::{EntityId, Millis, Seq};
use crate::store::{BranchId, Commit, Grouped, MemoryStore, RedbStore, Store};
use catalog::{Catalog, Segment};
use std::collections::BTreeMap;
use std::path::Path;

/// When a commit reaches stable storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Before `append` returns (fsync). A turn reported saved survives power loss.
    #[default]
    Immediate,
    /// With the next immediate commit, [`Engine::flush`], or close. Faster; a crash may lose
    /// the most recent commits, never part of one.
    Eventual,
}

impl Durability {
    /// The name bindings and configuration use: `"immediate"` or `"eventual"`.
    pub fn name(self) -> &'static str {
        match self {
            Durability::Immediate => "immediate",
            Durability::Eventual => "eventual",
        }
    }
}

impl std::str::FromStr for Durability {
    type Err = Error;

    /// A durability by [`Durability::name`]; any other name is [`crate::ErrorKind::Invalid`].
    fn from_str(name: &str) -> Result<Durability> {
        [Durability::Immediate, Durability::Eventual]
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "durability",
                    format!("{name:?} is not \"immediate\" or \"eventual\""),
                )
            })
    }
}

/// How an engine writes, and whom it tells how long work goes.
///
/// `Debug`, `PartialEq` and `Eq` are written out in `progress.rs` (a callback has none).
#[derive(Clone)]
pub struct EngineOptions {
    /// When commits reach stable storage.
    pub durability: Durability,
    /// Write a snapshot of the world every this many events (0: never). Opening replays at
    /// most this many events after the latest snapshot.
    pub snapshot_every: u64,
    /// Settings for a world being created.
    pub settings: WorldSettings,
    /// Hears the progress of long work (docs/progress.md): opening (given to
    /// [`Engine::open_with`]) and the phases of later calls; [`Engine::set_progress`] changes
    /// it. `None`: nobody.
    pub progress: Option<ProgressFn>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            durability: Durability::Immediate,
            snapshot_every: 1000,
            settings: WorldSettings::default(),
            progress: None,
        }
    }
}

/// A world and the store that keeps its log: the handle a game holds.
///
/// ```
/// use rp_core::{Engine, Event, EntityId};
/// let mut engine = Engine::in_memory("Demo", 0)?;
/// let id = EntityId(engine.world().next_id());
/// engine.append(vec![Event::EntityCreated {
///     id, key: None, name: "Mira".into(), aliases: vec![], facts: Default::default(),
///     host_controlled: false, state: Default::default(),
/// }])?;
/// assert_eq!(engine.world().entity(id).unwrap().name, "Mira");
/// # Ok::<(), rp_core::Error>(())
/// ```
pub struct Engine {
    /// Eventual commits are held and written with the next durable one (`store/grouped.rs`).
    store: Grouped,
    options: EngineOptions,
    catalog: Catalog,
    heads: BTreeMap<BranchId, Seq>,
    world: World,
    /// Set when a commit failed: the store may or may not hold it, so re-read before writing.
    stale: bool,
    /// Events committed with eventual durability since the last durable commit, kept so a
    /// storage failure cannot lose them silently.
    unsynced: Vec<(BranchId, Seq, Vec<u8>)>,
    /// What reopening the current branch would cost now (decides when to snapshot).
    cost: LoadCost,
    /// The memory index of the current world, once a recall needed it.
    memory_index: Option<crate::memory::MemoryIndex>,
    /// The entity index of the current world, once a search needed it.
    entity_index: Option<crate::memory::EntityIndex>,
    /// The lore keys of the current world's entities, once a prompt needed them.
    lore_index: Option<std::sync::Arc<crate::lore::LoreIndex>>,
    /// The relationship graph of the current world, once a query needed it.
    relationship_graph: Option<std::sync::Arc<crate::graph::RelationshipGraph>>,
    /// The entity kinds of the current world, once a query needed them.
    definition_index: Option<std::sync::Arc<crate::lore::DefinitionIndex>>,
    /// When each character is next due (docs/drives.md), for the head and epoch it was worked
    /// out at.
    drive_schedule: Option<schedule::Cached>,
    /// The thread that writes durable commits while the engine works on (started when first
    /// needed).
    writer: Option<writer::Writer>,
    /// Counts changes of the world: work prepared on a copy of it (a turn) is still valid
    /// while this is unchanged.
    epoch: u64,
    /// Past worlds kept to answer questions about the past (docs/history.md).
    history: history::History,
}

/// With eventual durability, every this many events a commit is made durable anyway, which
/// bounds both what a crash can lose and the events kept in memory to re-write after a
/// storage failure.
pub const MAX_UNSYNCED_EVENTS: usize = 4096;

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("store", &self.store.name())
            .field("branch", &self.catalog.current)
            .field("seq", &self.world.seq())
            .finish()
    }
}

impl Engine {
    /// Creates a save file at `path` holding a new world. Fails if the file exists.
    pub fn create(path: impl AsRef<Path>, name: &str, now: Millis) -> Result<Engine> {
        Engine::create_with(path, name, now, EngineOptions::default())
    }

    /// [`Engine::create`] with options.
    pub fn create_with(
        path: impl AsRef<Path>,
        name: &str,
        now: Millis,
        options: EngineOptions,
    ) -> Result<Engine> {
        crate::log::check_name("world", name)?;
        let store = RedbStore::create(path.as_ref())?;
        let result = Engine::init(Box::new(store), name, now, options);
        if result.is_err() {
            let _ = std::fs::remove_file(path.as_ref());
        }
        result
    }

    /// Opens an existing save file on its current branch.
    pub fn open(path: impl AsRef<Path>) -> Result<Engine> {
        Engine::open_with(path, EngineOptions::default())
    }

    /// [`Engine::open`] with options; [`EngineOptions::progress`] hears the open
    /// (docs/progress.md).
    pub fn open_with(path: impl AsRef<Path>, options: EngineOptions) -> Result<Engine> {
        Engine::from_store(Box::new(RedbStore::open(path)?), options)
    }

    /// A new world in memory (no file).
    pub fn in_memory(name: &str, now: Millis) -> Result<Engine> {
        Engine::new_in(
            Box::new(MemoryStore::new()),
            name,
            now,
            EngineOptions::default(),
        )
    }

    /// A new world in an empty `store`.
    pub fn new_in(
        store: Box<dyn Store>,
        name: &str,
        now: Millis,
        options: EngineOptions,
    ) -> Result<Engine> {
        if store.meta()?.is_some() {
            return Err(Error::conflict(format!(
                "{} already holds a world",
                store.name()
            )));
        }
        Engine::init(store, name, now, options)
    }

    fn init(
        store: Box<dyn Store>,
        name: &str,
        now: Millis,
        options: EngineOptions,
    ) -> Result<Engine> {
        let catalog = Catalog::new();
        let mut options = options;
        if options.settings.seed == 0 {
            options.settings.seed = derive_seed(name, now);
        }
        let mut engine = Engine {
            store: Grouped::new(store),
            heads: BTreeMap::from([(catalog.current, 0)]),
            catalog,
            options,
            world: World::new(),
            stale: false,
            unsynced: Vec::new(),
            cost: LoadCost::default(),
            memory_index: None,
            entity_index: None,
            lore_index: None,
            relationship_graph: None,
            definition_index: None,
            drive_schedule: None,
            writer: None,
            epoch: 0,
            history: history::History::new(),
        };
        let created = Event::WorldCreated {
            name: name.to_owned(),
            now,
            settings: engine.options.settings.clone(),
        };
        engine.commit_events(&[created], true)?;
        Ok(engine)
    }

    /// Opens the world held by `store` on its current branch.
    /// Reports `open.snapshot` and `open.replay` to [`EngineOptions::progress`].
    pub fn from_store(mut store: Box<dyn Store>, options: EngineOptions) -> Result<Engine> {
        let _span = tracing::info_span!("open", store = store.name()).entered();
        let catalog = load_catalog(store.as_ref())?;
        let heads = load_heads(store.as_ref(), &catalog)?;
        let head = heads[&catalog.current];
        let progress = options.progress.as_ref();
        let (world, cost) =
            load_world_reporting(store.as_ref(), &catalog, catalog.current, head, progress)?;
        store.prepare_writes()?;
        Ok(Engine {
            store: Grouped::new(store),
            options,
            catalog,
            heads,
            world,
            stale: false,
            unsynced: Vec::new(),
            cost,
            memory_index: None,
            entity_index: None,
            lore_index: None,
            relationship_graph: None,
            definition_index: None,
            drive_schedule: None,
            writer: None,
            epoch: 0,
            history: history::History::new(),
        })
    }

    /// The world as of the head of the current branch.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Changes whenever the world does (a commit, a rewind, a branch switch).
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The seq of the last event on the current branch.
    pub fn head(&self) -> Seq {
        self.world.seq()
    }

    /// The options in force.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Closes the engine and hands back its store (to reopen it, or inspect it), with every
    /// commit written to it (eventual ones not yet durably, as closing would leave them).
    pub fn into_store(self) -> Box<dyn Store> {
        self.store.into_inner()
    }

    /// The store's name (the file path, or `":memory:"`).
    pub fn store_name(&self) -> &str {
        self.store.name()
    }

    /// Validates `events` in order against the world, commits them in one transaction and
    /// applies them. Returns the new head. If any event is invalid or the write fails, nothing
    /// changes (in memory or on disk) and the error says why. With
    /// [`Durability::Immediate`] the events are on stable storage when this returns.
    pub fn append(&mut self, mut events: Vec<Event>) -> Result<Seq> {
        self.resync_if_stale()?;
        // In a world with requirements the batch is applied once, to find the announcements
        // it calls for, and that world is what the commit keeps (not applied a second time).
        let mut applied = self
            .announces(&events)
            .then(|| {
                let mut next = self.world.clone();
                events.iter().try_for_each(|e| next.apply(e))?;
                Ok::<_, crate::Error>((next, self.epoch))
            })
            .transpose()?;
        self.add_announcements(&mut events, applied.as_mut())?;
        let durable = self.options.durability == Durability::Immediate;
        self.commit_events_applied(&events, durable, applied.map(|(next, _)| next))
    }

    /// Decides whether `entity` responds to `message` (response control): evaluates its fact
    /// sheet with the world's random generator and records the decision (outcome, lines
    /// fired, every draw) as an event, so replay reproduces it without evaluating again.
    pub fn decide(&mut self, entity: EntityId, message: &Message) -> Result<Decision> {
        self.resync_if_stale()?;
        let seed = self.world.meta().map_or(0, |m| m.settings.seed);
        let mut draws = SeededDraws::new(seed, self.world.draws_taken());
        let message = Message {
            drives: crate::drives::values(&self.world, entity, self.world.now()),
            ..message.clone()
        };
        let decision = self.world.decide(entity, &message, &mut draws)?;
        self.append(vec![crate::log::decision_event(entity, &decision)])?;
        Ok(decision)
    }

    /// Sets when the next commits reach stable storage. Going back to
    /// [`Durability::Immediate`] makes every earlier commit durable first ([`Engine::flush`]);
    /// if that fails the durability is unchanged and the error says why.
    ///
    /// With [`Durability::Eventual`], consecutive commits are written together: one
    /// transaction, with the next durable commit ([`Engine::flush`], every
    /// 4,096 events (`MAX_UNSYNCED_EVENTS`), or closing), so a crash loses at most those.
    pub fn set_durability(&mut self, durability: Durability) -> Result<()> {
        if durability == Durability::Immediate {
            self.flush()?;
        }
        self.options.durability = durability;
        Ok(())
    }

    /// Makes every earlier commit durable (a no-op with [`Durability::Immediate`]).
    pub fn flush(&mut self) -> Result<()> {
        self.resync_if_stale()?;
        self.write(Commit {
            durable: true,
            ..Commit::default()
        })
    }

    /// The events of the current branch with `first <= seq <= last`, in order.
    pub fn events(&self, first: Seq, last: Seq) -> Result<Vec<(Seq, Event)>> {
        let last = last.min(self.head());
        let mut out = Vec::new();
        self.visit_events(self.catalog.current, first.max(1), last, &mut |s, e| {
            out.push((s, e));
            Ok(())
        })?;
        Ok(out)
    }

    fn visit_events(
        &self,
        branch: BranchId,
        first: Seq,
        last: Seq,
        f: &mut dyn FnMut(Seq, Event) -> Result<()>,
    ) -> Result<()> {
        visit_range(&self.store, &self.catalog, branch, first, last, f).map(drop)
    }

    fn resync_if_stale(&mut self) -> Result<()> {
        if !self.stale {
            return Ok(());
        }
        let catalog = load_catalog(&self.store)?;
        let heads = load_heads(&self.store, &catalog)?;
        let head = heads[&catalog.current];
        let same_branch = catalog.current == self.catalog.current;
        if same_branch && head < self.head() {
            // Events committed with eventual durability that the failure took with it: the
            // engine still holds them, so it writes them again, durably.
            let branch = self.catalog.current;
            let missing: Vec<_> = self
                .unsynced
                .iter()
                .filter(|(b, s, _)| *b == branch && *s > head)
                .cloned()
                .collect();
            if missing.len() as u64 == self.head() - head {
                self.store.commit(Commit {
                    events: missing,
                    durable: true,
                    ..Commit::default()
                })?;
                self.unsynced.clear();
                self.heads = heads;
                self.heads.insert(branch, self.head());
                self.stale = false;
                return Ok(());
            }
        }
        let world = if same_branch && head == self.head() {
            self.world.clone()
        } else {
            load_world(&self.store, &catalog, catalog.current, head)?
        };
        let lost = (same_branch && head < self.head()).then(|| (head + 1, self.head()));
        self.catalog = catalog;
        self.heads = heads;
        self.world = world;
        self.drop_memory_index();
        // The store may not hold what the checkpoints were replayed from.
        self.history.clear();
        self.stale = false;
        match lost {
            // Commits made with Durability::Eventual that never reached the disk: the world
            // is back to what the file holds, and the caller hears which seqs are gone.
            Some((first, last)) => Err(Error::Storage {
                file: self.store.name().to_owned(),
                message: format!(
                    "events {first}..={last}, committed with eventual durability, were lost in an \
                     earlier storage failure; the world is back at seq {}",
                    first - 1
                ),
            }),
            None => Ok(()),
        }
    }
}

/// A seed from the world's name and creation time (FNV-1a), for worlds created without one.
fn derive_seed(name: &str, now: Millis) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(now.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.max(1)
}

fn corrupt(store: &dyn Store, location: impl Into<String>) -> impl FnOnce(DecodeError) -> Error {
    let name = store.name().to_owned();
    let location = location.into();
    move |e| e.at(&name, location)
}

fn load_catalog(store: &dyn Store) -> Result<Catalog> {
    let bytes = store.meta()?.ok_or_else(|| Error::NotASave {
        file: store.name().to_owned(),
        reason: "it holds no rp world".into(),
    })?;
    let catalog: Catalog = codec::decode(&bytes).map_err(corrupt(store, "metadata"))?;
    catalog.validate().map_err(|e| Error::Corrupt {
        file: store.name().to_owned(),
        location: "metadata".into(),
        message: e.to_string(),
    })?;
    Ok(catalog)
}

fn load_heads(store: &dyn Store, catalog: &Catalog) -> Result<BTreeMap<BranchId, Seq>> {
    catalog
        .branches
        .iter()
        .map(|b| Ok((b.id, store.last_seq(b.id)?.unwrap_or(0).max(b.base()))))
        .collect()
}

/// Visits the events `first..=last` of `branch` in order; returns how many bytes they took.
fn visit_range(
    store: &dyn Store,
    catalog: &Catalog,
    branch: BranchId,
    first: Seq,
    last: Seq,
    f: &mut dyn FnMut(Seq, Event) -> Result<()>,
) -> Result<u64> {
    let mut expect = first;
    let mut bytes_read = 0u64;
    for Segment {
        branch: b,
        first: sf,
        last: sl,
    } in catalog.segments(branch, last)?
    {
        let (lo, hi) = (sf.max(first), sl);
        if lo > hi {
            continue;
        }
        store.read_events(b, lo, hi, &mut |seq, bytes| {
            let location = || format!("seq {seq} of branch {b}");
            if seq != expect {
                return Err(Error::Corrupt {
                    file: store.name().to_owned(),
                    location: location(),
                    message: format!("expected seq {expect}; events are missing"),
                });
            }
            let event: Event = codec::decode(bytes).map_err(|e| e.at(store.name(), location()))?;
            expect += 1;
            bytes_read += bytes.len() as u64;
            f(seq, event)
        })?;
    }
    if first <= last && expect != last + 1 {
        return Err(Error::Corrupt {
            file: store.name().to_owned(),
            location: format!("seq {expect}"),
            message: "events are missing".into(),
        });
    }
    Ok(bytes_read)
}

/// What opening a branch costs: the size of the snapshot it starts from and of the events
/// replayed after it (the engine snapshots again once the tail grows large beside the
/// snapshot).
#[derive(Clone, Copy, Debug, Default)]
struct LoadCost {
    snapshot_bytes: u64,
    tail_bytes: u64,
}

/// The world of `branch` as of `head`: the latest snapshot at or before `head`, then replay.
fn load_world(store: &dyn Store, catalog: &Catalog, branch: BranchId, head: Seq) -> Result<World> {
    load_world_costed(store, catalog, branch, head).map(|(w, _)| w)
}

fn load_world_costed(
    store: &dyn Store,
    catalog: &Catalog,
    branch: BranchId,
    head: Seq,
) -> Result<(World, LoadCost)> {
    load_world_reporting(store, catalog, branch, head, None)
}

/// [`load_world_costed`], reporting the phases `open.snapshot` (one item: the latest
/// snapshot found and decoded, or none found) and `open.replay` (the events after it).
fn load_world_reporting(
    store: &dyn Store,
    catalog: &Catalog,
    branch: BranchId,
    head: Seq,
    progress: Option<&ProgressFn>,
) -> Result<(World, LoadCost)> {
    let mut cost = LoadCost::default();
    let meter = progress::Meter::start(progress, Progress::OPEN_SNAPSHOT, 1);
    let mut world = match latest_snapshot_world(store, catalog, branch, head, 0)? {
        Some((snap, bytes)) => {
            cost.snapshot_bytes = bytes;
            snap
        }
        None => World::new(),
    };
    meter.finish();
    let from = world.seq() + 1;
    let _span = tracing::info_span!("replay", from, to = head).entered();
    let tail = (head + 1).saturating_sub(from);
    let meter = progress::Meter::start(progress, Progress::OPEN_REPLAY, tail);
    let deferred = tail >= REPLAY_DEFERS_FADING && world.defer_fading();
    cost.tail_bytes = visit_range(store, catalog, branch, from, head, &mut |seq, event| {
        let kind = event.kind();
        meter.tick();
        world.apply_owned(event).map_err(|e| Error::Corrupt {
            file: store.name().to_owned(),
            location: format!("seq {seq}"),
            message: format!("the stored {kind} event does not apply: {e}"),
        })
    })?;
    if deferred {
        world.schedule_fading();
    }
    meter.finish();
    Ok((world, cost))
}

/// The events of a replay past which the schedule of what fades when is built once at its
/// end rather than kept up to date through it ([`World::defer_fading`]): about what a
/// snapshot's tail may hold, so an open from a recent snapshot keeps the schedule its load
/// started, and a replay of the whole log builds one.
const REPLAY_DEFERS_FADING: u64 = 4_096;

/// What loading `branch` as of `head` costs ([`load_world_costed`]'s measure), read from the
/// store's bytes without decoding them: for a world the caller already has.
fn load_cost(
    store: &dyn Store,
    catalog: &Catalog,
    branch: BranchId,
    head: Seq,
) -> Result<LoadCost> {
    let mut cost = LoadCost::default();
    let mut from = 1;
    for seg in catalog.segments(branch, head)?.iter().rev() {
        if let Some((seq, bytes)) =
            store.latest_snapshot(seg.branch, seg.first, seg.last.min(head))?
        {
            cost.snapshot_bytes = bytes.len() as u64;
            from = seq + 1;
            break;
        }
    }
    for seg in catalog.segments(branch, head)? {
        let (lo, hi) = (seg.first.max(from), seg.last.min(head));
        if lo <= hi {
            store.read_events(seg.branch, lo, hi, &mut |_, bytes| {
                cost.tail_bytes += bytes.len() as u64;
                Ok(())
            })?;
        }
    }
    Ok(cost)
}

/// The world of the latest usable snapshot of `branch` at or before `head`, with its size in
/// bytes; `None` when there is none after seq `after` (replay from the start, or from a world
/// the caller has).
fn latest_snapshot_world(
    store: &dyn Store,
    catalog: &Catalog,
    branch: BranchId,
    head: Seq,
    after: Seq,
) -> Result<Option<(World, u64)>> {
    let _span = tracing::info_span!("snapshot.load").entered();
    for seg in catalog.segments(branch, head)?.iter().rev() {
        // Decoded where the store holds it: a long campaign's snapshot is hundreds of
        // megabytes, not worth a copy.
        let mut found = None;
        store.visit_latest_snapshot(seg.branch, seg.first, seg.last, &mut |seq, bytes| {
            let len = bytes.len();
            // Not nearer than what the caller has: not worth decoding.
            let decoded = (seq > after).then(|| codec::decode_world(bytes));
            found = Some((seq, decoded, len));
            Ok(())
        })?;
        if let Some((seq, decoded, len)) = found {
            let Some(decoded) = decoded else {
                return Ok(None);
            };
            let location = format!("snapshot at seq {seq} of branch {}", seg.branch);
            let mut snap = decoded.map_err(corrupt(store, location.clone()))?;
            if snap.seq() != seq {
                return Err(Error::Corrupt {
                    file: store.name().to_owned(),
                    location,
                    message: format!("it claims seq {}", snap.seq()),
                });
            }
            if !snap.keeps_minds() {
                // Written before drives: its minds are missing. Replay the log instead (the
                // next snapshot has them).
                return Ok(None);
            }
            snap.reindex().map_err(|e| Error::Corrupt {
                file: store.name().to_owned(),
                location,
                message: e.to_string(),
            })?;
            return Ok(Some((snap, len as u64)));
        }
    }
    Ok(None)
}

/// An engine's head as of the end of the last completed call on it, readable from any thread
/// without waiting for a call in progress: what a binding shows as the head of a world that
/// several threads share (Python's `World.head`, C's `rp_engine_head`). The holder of the engine
/// [`PublishedHead::publish`]es at the end of every call, under the lock that serialises the
/// calls; a reader that then sees a call's effects also sees its head or a later one.
#[derive(Debug, Default)]
pub struct PublishedHead(std::sync::atomic::AtomicU64);

impl PublishedHead {
    /// The head of `engine`, published.
    pub fn new(engine: &Engine) -> PublishedHead {
        PublishedHead(std::sync::atomic::AtomicU64::new(engine.head()))
    }

    /// Publishes `engine`'s head: call it at the end of every call on the engine.
    pub fn publish(&self, engine: &Engine) {
        self.0
            .store(engine.head(), std::sync::atomic::Ordering::Release);
    }

    /// The head last published.
    pub fn get(&self) -> Seq {
        self.0.load(std::sync::atomic::Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::Engine;

    #[test]
    fn a_failed_directory_sync_fails_the_creation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("save.rp");
        crate::store::redb::tests::FAIL_DIR_SYNC.with(|f| f.set(true));
        let result = Engine::create(&path, "Inn", 0);
        crate::store::redb::tests::FAIL_DIR_SYNC.with(|f| f.set(false));
        let e = result.expect_err("created although the directory sync failed");
        assert_eq!(e.kind(), crate::ErrorKind::Storage, "{e}");
        assert!(e.to_string().contains("could not be synced"), "{e}");
        assert!(
            !path.exists(),
            "a save whose creation failed is left behind"
        );

        // Without the fault, the same path makes a save that opens.
        drop(Engine::create(&path, "Inn", 0).expect("create"));
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, [std::ffi::OsString::from("save.rp")]);
        Engine::open(&path).expect("open");
    }
}

/// Reading a range of the log: every event in order, and the first error after every event
/// before it.
#[cfg(test)]
mod visit_range_tests {
    use super::*;
    use crate::log::Event;
    use crate::log::codec::encode_event;
    use crate::store::{Commit, MemoryStore};

    /// A store whose main branch holds events 1..=n, each the clock moved to its seq (the
    /// record of `damaged` replaced by garbage, `missing` left out).
    fn log(n: Seq, damaged: Option<Seq>, missing: Option<Seq>) -> MemoryStore {
        let mut store = MemoryStore::new();
        let events = (1..=n)
            .filter(|seq| Some(*seq) != missing)
            .map(|seq| {
                let record = if Some(seq) == damaged {
                    b"not a record at all".to_vec()
                } else {
                    encode_event(&Event::TimeAdvanced { to: seq as i64 })
                };
                (1, seq, record)
            })
            .collect();
        store
            .commit(Commit {
                events,
                ..Commit::default()
            })
            .unwrap();
        store
    }

    /// The seqs visited (each checked against its event) and the visit's outcome; the visit
    /// fails at `stop_at`.
    fn visit(
        store: &MemoryStore,
        (first, last): (Seq, Seq),
        stop_at: Option<Seq>,
    ) -> (Vec<Seq>, Result<u64>) {
        let mut seen = Vec::new();
        let result = visit_range(store, &Catalog::new(), 1, first, last, &mut |seq, event| {
            assert_eq!(event, Event::TimeAdvanced { to: seq as i64 });
            seen.push(seq);
            if Some(seq) == stop_at {
                return Err(Error::conflict("the visit stops here"));
            }
            Ok(())
        });
        (seen, result)
    }

    fn corrupt_at(result: Result<u64>) -> (String, String) {
        match result {
            Err(Error::Corrupt {
                location, message, ..
            }) => (location, message),
            other => panic!("expected a corrupt log, got {other:?}"),
        }
    }

    #[test]
    fn a_range_visits_every_event_in_order() {
        let store = log(3000, None, None);
        for range in [(1, 1), (1, 10), (5, 600), (1, 3000), (7, 2990)] {
            let (seen, result) = visit(&store, range, None);
            assert_eq!(seen, (range.0..=range.1).collect::<Vec<_>>(), "{range:?}");
            let bytes: usize = (range.0..=range.1)
                .map(|seq| encode_event(&Event::TimeAdvanced { to: seq as i64 }).len())
                .sum();
            assert_eq!(result.unwrap(), bytes as u64, "{range:?}");
        }
        let (seen, result) = visit(&store, (10, 9), None);
        assert!(seen.is_empty());
        assert_eq!(result.unwrap(), 0);
    }

    #[test]
    fn a_damaged_record_ends_the_visit_after_every_event_before_it() {
        for damaged in [1, 5, 1000, 2999, 3000] {
            let store = log(3000, Some(damaged), None);
            for range in [(1, 3000), (damaged.saturating_sub(3).max(1), damaged)] {
                let (seen, result) = visit(&store, range, None);
                assert_eq!(
                    seen,
                    (range.0..damaged).collect::<Vec<_>>(),
                    "{damaged} in {range:?}"
                );
                let (location, _) = corrupt_at(result);
                assert_eq!(location, format!("seq {damaged} of branch 1"));
            }
        }
    }

    #[test]
    fn a_missing_record_ends_the_visit_after_every_event_before_it() {
        for missing in [2, 1500, 3000] {
            let store = log(3000, None, Some(missing));
            let (seen, result) = visit(&store, (1, 3000), None);
            assert_eq!(seen, (1..missing).collect::<Vec<_>>(), "{missing}");
            let (_, message) = corrupt_at(result);
            assert!(message.contains("missing"), "{message}");
        }
        // Past the end of the log.
        let store = log(1000, None, None);
        let (seen, result) = visit(&store, (1, 1200), None);
        assert_eq!(seen, (1..=1000).collect::<Vec<_>>());
        assert_eq!(corrupt_at(result).0, "seq 1001");
    }

    #[test]
    fn the_visits_own_error_ends_it_at_once() {
        let store = log(3000, Some(2500), None);
        for stop in [1, 1000, 2499] {
            let (seen, result) = visit(&store, (1, 3000), Some(stop));
            assert_eq!(seen, (1..=stop).collect::<Vec<_>>(), "{stop}");
            assert!(matches!(result, Err(Error::Conflict { .. })), "{result:?}");
        }
    }
}
