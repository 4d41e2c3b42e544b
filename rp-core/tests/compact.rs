//! Compaction (docs/history.md#compaction): `Engine::compact` drops the snapshots no branch
//! opens from any more and compacts the save's file, which shrinks, while every branch keeps
//! its world, its history and the snapshot it opens from.

mod support;

use rp_core::store::{RedbStore, Store};
use rp_core::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use support::{WORLD_NAME, options};

/// Snapshots every this many events: a long workload writes many, and drops most of them.
const SNAPSHOT_EVERY: u64 = 8;

/// Appends `n` events, each creating an entity with a fact of a few KB: the world grows, so
/// each snapshot is larger than the last and the pages of the ones dropped are left free.
fn grow(engine: &mut Engine, n: u64) {
    for _ in 0..n {
        let next = engine.world().next_id();
        engine
            .append(vec![Event::EntityCreated {
                id: EntityId(next),
                key: None,
                name: format!("e{next}"),
                aliases: vec![],
                facts: FactSheet(vec![format!("{next} ").repeat(400)]),
                host_controlled: false,
                state: EntityState::default(),
            }])
            .expect("append");
    }
}

/// Every branch's world as stored, by name: switching through them, then back.
fn worlds(engine: &mut Engine) -> BTreeMap<String, (Seq, Vec<u8>)> {
    each_branch(engine, |e| (e.head(), e.world().to_bytes()))
}

/// `f` of the engine on each branch, by name: switching through them, then back.
fn each_branch<T>(engine: &mut Engine, mut f: impl FnMut(&Engine) -> T) -> BTreeMap<String, T> {
    let current = engine.current_branch().to_owned();
    let out = engine
        .branches()
        .into_iter()
        .map(|b| {
            engine.switch_branch(&b.name).expect("switch");
            (b.name, f(engine))
        })
        .collect();
    engine.switch_branch(&current).expect("switch back");
    out
}

/// Every branch's world rebuilt from its log alone (no snapshot): a replay of its events
/// from the world's creation.
fn replayed(engine: &mut Engine) -> BTreeMap<String, (Seq, Vec<u8>)> {
    each_branch(engine, |e| {
        let mut world = World::new();
        for (_, event) in e.events(1, e.head()).expect("events") {
            world.apply_owned(event).expect("the log replays");
        }
        (world.seq(), world.to_bytes())
    })
}

/// The snapshot seqs of branches `1..=branches` (ids in creation order), read from the file.
fn snapshot_seqs(path: &Path, branches: u64) -> Vec<Vec<Seq>> {
    let store = RedbStore::open(path).expect("open the store");
    (1..=branches)
        .map(|b| store.snapshot_seqs(b).expect("snapshot seqs"))
        .collect()
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).expect("metadata").len()
}

/// A save with much snapshot churn on three branches: `main` (id 1), `side` forked from it at
/// `fork` (id 2), `deep` forked from `side` (id 3). Returns the fork point of `side`.
fn churned_save(path: &Path) -> Seq {
    let mut engine =
        Engine::create_with(path, WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create");
    grow(&mut engine, 150);
    let fork = engine.head() - 3; // not on a snapshot boundary
    engine.fork(fork, "side").expect("fork");
    grow(&mut engine, 150);
    engine.switch_branch("side").expect("switch");
    grow(&mut engine, 100);
    let deep = engine.head() - 5;
    engine.fork(deep, "deep").expect("fork");
    grow(&mut engine, 50);
    engine.switch_branch("deep").expect("switch");
    grow(&mut engine, 30);
    engine.switch_branch("main").expect("switch");
    fork
}

/// What the engine's rule keeps of `seqs`: the latest, and the latest at or before each
/// child's fork point.
fn kept(seqs: &[Seq], forks: &[Seq]) -> Vec<Seq> {
    let latest_at_or_before = |at: Seq| seqs.iter().rev().find(|s| **s <= at).copied();
    let mut keep: Vec<Seq> = seqs.last().copied().into_iter().collect();
    keep.extend(forks.iter().filter_map(|f| latest_at_or_before(*f)));
    keep.sort_unstable();
    keep.dedup();
    keep
}

#[test]
fn compaction_shrinks_the_file_and_keeps_every_branch_s_world() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("save.rp");
    let fork = churned_save(&path);

    let mut engine = Engine::open_with(&path, options(SNAPSHOT_EVERY)).expect("open");
    let before = worlds(&mut engine);
    assert_eq!(before.len(), 3);
    assert_eq!(
        replayed(&mut engine),
        before,
        "the snapshots agree with the log"
    );
    let side_fork = engine
        .branches()
        .into_iter()
        .find(|b| b.name == "deep")
        .and_then(|b| b.forked_from)
        .expect("deep forked from side")
        .1;
    drop(engine);

    let seqs_before = snapshot_seqs(&path, 3);
    let expected = [
        kept(&seqs_before[0], &[fork]),
        kept(&seqs_before[1], &[side_fork]),
        kept(&seqs_before[2], &[]),
    ];
    let superseded: usize = seqs_before
        .iter()
        .zip(&expected)
        .map(|(all, keep)| all.len() - keep.len())
        .sum();
    assert!(superseded > 0, "the workload leaves superseded snapshots");
    let fork_snapshot = seqs_before[0]
        .iter()
        .rev()
        .find(|s| **s <= fork)
        .copied()
        .expect("main has a snapshot before side's fork point");
    assert!(
        seqs_before[0].last() != Some(&fork_snapshot),
        "main's fork-point snapshot is not its latest"
    );

    let len_before = file_len(&path);
    let mut engine = Engine::open_with(&path, options(SNAPSHOT_EVERY)).expect("open");
    let head = engine.head();
    let done = engine.compact().expect("compact");
    assert_eq!(engine.head(), head);
    assert_eq!(done.file_bytes_before, len_before);
    assert_eq!(done.file_bytes_after, file_len(&path));
    assert!(
        done.file_bytes_after < done.file_bytes_before,
        "the file shrinks: {done:?}"
    );
    assert!(
        done.allocated_bytes_after <= done.allocated_bytes_before,
        "{done:?}"
    );
    assert_eq!(done.snapshots_dropped, superseded as u64);
    assert!(done.compacted, "{done:?}");
    // The engine plays on, its branches as they were.
    assert_eq!(worlds(&mut engine), before);
    drop(engine);

    // Only the snapshots the branches open from are left; main keeps the one side forks from.
    let seqs_after = snapshot_seqs(&path, 3);
    assert_eq!(seqs_after, expected);
    assert!(seqs_after[0].contains(&fork_snapshot));

    // Reopened, every branch has its world, equal to a replay of its log.
    let mut engine = Engine::open_with(&path, options(SNAPSHOT_EVERY)).expect("reopen");
    assert_eq!(worlds(&mut engine), before);
    assert_eq!(replayed(&mut engine), before);

    // Compacting again is harmless: nothing more to drop, the file no larger.
    let again = engine.compact().expect("compact again");
    assert_eq!(again.snapshots_dropped, 0);
    assert!(
        again.file_bytes_after <= again.file_bytes_before,
        "{again:?}"
    );
    assert_eq!(worlds(&mut engine), before);

    // ... and the save plays on, and opens.
    grow(&mut engine, 20);
    let played = engine.world().to_bytes();
    drop(engine);
    let engine = Engine::open(&path).expect("open after playing on");
    assert_eq!(engine.world().to_bytes(), played);
}

#[test]
fn compaction_makes_eventual_commits_durable_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("save.rp");
    let eventual = EngineOptions {
        durability: Durability::Eventual,
        ..options(SNAPSHOT_EVERY)
    };
    let mut engine = Engine::create_with(&path, WORLD_NAME, 0, eventual).expect("create");
    grow(&mut engine, 60);
    let world = engine.world().to_bytes();
    let done = engine.compact().expect("compact");
    assert!(done.snapshots_dropped > 0, "{done:?}");
    assert_eq!(engine.world().to_bytes(), world);
    drop(engine);
    assert_eq!(Engine::open(&path).expect("open").world().to_bytes(), world);
}

#[test]
fn compacting_an_engine_in_memory_reports_zeros() {
    let mut engine = Engine::in_memory("Inn", 0).expect("engine");
    engine
        .append(vec![Event::TimeAdvanced { to: 5 }])
        .expect("append");
    let world = engine.world().to_bytes();
    assert_eq!(engine.compact().expect("compact"), Compaction::default());
    assert_eq!(engine.world().to_bytes(), world);
    let json = serde_json::to_value(Compaction::default()).expect("JSON");
    assert_eq!(
        json,
        serde_json::json!({
            "file_bytes_before": 0, "file_bytes_after": 0,
            "allocated_bytes_before": 0, "allocated_bytes_after": 0,
            "snapshots_dropped": 0, "compacted": false, "records_upgraded": 0,
        })
    );
}

#[test]
fn compaction_drops_superseded_snapshots_of_a_store_in_memory_too() {
    let store = rp_core::store::MemoryStore::new();
    let mut engine =
        Engine::new_in(Box::new(store), WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("new");
    grow(&mut engine, 60);
    let world = engine.world().to_bytes();
    let done = engine.compact().expect("compact");
    assert!(done.snapshots_dropped > 0, "{done:?}");
    assert!(!done.compacted);
    assert_eq!(done.file_bytes_before + done.file_bytes_after, 0);
    let store = engine.into_store();
    assert_eq!(store.snapshot_seqs(1).expect("seqs").len(), 1);
    let engine = Engine::from_store(store, options(SNAPSHOT_EVERY)).expect("reopen");
    assert_eq!(engine.world().to_bytes(), world);
}

#[test]
fn compaction_reports_the_compact_phase() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("save.rp");
    let mut engine =
        Engine::create_with(&path, WORLD_NAME, 0, options(SNAPSHOT_EVERY)).expect("create");
    grow(&mut engine, 20);
    let heard = Arc::new(Mutex::new(Vec::new()));
    let into = heard.clone();
    engine.set_progress(Some(Arc::new(move |p: &Progress| {
        into.lock().unwrap().push((p.phase, p.done, p.total));
    })));
    engine.compact().expect("compact");
    assert!(Progress::PHASES.contains(&Progress::COMPACT));
    assert_eq!(
        *heard.lock().unwrap(),
        [
            ("compact", 0, 4),
            ("compact", 1, 4),
            ("compact", 2, 4),
            ("compact", 3, 4),
            ("compact", 4, 4)
        ]
    );
}

#[test]
fn a_store_compacts_only_what_it_can_and_a_memory_store_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("save.rp");
    churned_save(&path);
    // Opened read-only, the store takes write access to compact, and the file opens after.
    let mut store = RedbStore::open(&path).expect("open");
    assert_eq!(store.file().as_deref(), Some(path.as_path()));
    let before = (
        store.meta().expect("meta"),
        store.last_seq(1).expect("head"),
    );
    assert!(
        store.compact().expect("compact"),
        "a churned file has room to give back"
    );
    assert!(
        !store.compact().expect("compact again"),
        "nothing left to do"
    );
    assert_eq!(
        (
            store.meta().expect("meta"),
            store.last_seq(1).expect("head")
        ),
        before
    );
    drop(store);
    Engine::open(&path).expect("the compacted save opens");

    let mut memory = rp_core::store::MemoryStore::new();
    assert!(!memory.compact().expect("compact"));
    assert_eq!(memory.file(), None);
}

/// A tracing subscriber that keeps the name of every span made.
#[derive(Clone, Default)]
struct SpanNames(Arc<Mutex<Vec<&'static str>>>);

impl tracing::Subscriber for SpanNames {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut seen = self.0.lock().unwrap();
        seen.push(span.metadata().name());
        tracing::span::Id::from_u64(seen.len() as u64)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn compaction_makes_a_compact_span() {
    let mut engine = Engine::in_memory("Inn", 0).expect("engine");
    let names = SpanNames::default();
    tracing::subscriber::with_default(names.clone(), || {
        engine.compact().expect("compact");
    });
    assert_eq!(names.0.lock().unwrap().first(), Some(&"compact"));
}

/// The format version of every record in the save at `path`: events, snapshots, metadata.
fn record_versions(path: &Path) -> BTreeMap<&'static str, std::collections::BTreeSet<u16>> {
    use redb::{ReadableDatabase, ReadableTable, TableDefinition};
    const EVENTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_events");
    const SNAPSHOTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_snapshots");
    const META: TableDefinition<&str, &[u8]> = TableDefinition::new("rp_meta");
    fn versions<K: redb::Key + 'static>(
        txn: &redb::ReadTransaction,
        table: TableDefinition<K, &[u8]>,
    ) -> std::collections::BTreeSet<u16> {
        let t = txn.open_table(table).expect("table");
        t.iter()
            .expect("iter")
            .map(|r| {
                let (_, v) = r.expect("record");
                let b = v.value();
                u16::from_le_bytes([b[2], b[3]])
            })
            .collect()
    }
    let db = redb::ReadOnlyDatabase::open(path).expect("open with redb");
    let txn = db.begin_read().expect("read");
    BTreeMap::from([
        ("events", versions(&txn, EVENTS)),
        ("snapshots", versions(&txn, SNAPSHOTS)),
        ("meta", versions(&txn, META)),
    ])
}

/// Every branch's log, by name: switching through them, then back.
fn logs(engine: &mut Engine) -> BTreeMap<String, Vec<(Seq, Event)>> {
    each_branch(engine, |e| e.events(1, e.head()).expect("events"))
}

#[test]
fn compaction_upgrades_a_save_of_format_1() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/save-1.rp");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.rp");
    std::fs::copy(&fixture, &path).expect("copy the fixture");
    let old: std::collections::BTreeSet<u16> = [1].into();
    assert!(record_versions(&path).values().all(|v| *v == old));

    let mut engine = Engine::open(&path).expect("a format 1 save opens");
    let before = worlds(&mut engine);
    let before_logs = logs(&mut engine);
    let done = engine.compact().expect("compact");
    // Every record is rewritten: every event of every stored branch, the snapshots and the
    // metadata; the file shrinks.
    assert!(done.records_upgraded > 100, "{done:?}");
    assert!(
        done.allocated_bytes_after < done.allocated_bytes_before,
        "{done:?}"
    );
    assert_eq!(worlds(&mut engine), before);
    drop(engine);
    let current: std::collections::BTreeSet<u16> = [rp_core::log::FORMAT_VERSION].into();
    let versions = record_versions(&path);
    assert!(versions.values().all(|v| *v == current), "{versions:?}");

    // Reopened, the same worlds and logs, equal to a replay; compacting again upgrades none.
    let mut engine = Engine::open(&path).expect("the upgraded save opens");
    assert_eq!(worlds(&mut engine), before);
    assert_eq!(replayed(&mut engine), before);
    assert_eq!(logs(&mut engine), before_logs);
    assert_eq!(engine.compact().expect("again").records_upgraded, 0);
}
