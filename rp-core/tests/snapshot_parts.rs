//! Large snapshots in a save are stored in parts (`store/redb/parts.rs`): they read back whole
//! (and are given to a visitor, which may free them once read, where a small one is lent),
//! they take about their own size on disk (not the next power of two), replacing, purging and
//! dropping them leaves no part behind, and a missing or damaged part is a corrupt save, named
//! (in either half of a snapshot large enough to be read on two threads).

mod support;

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use rp_core::store::{Commit, RedbStore, Store};
use rp_core::*;
use std::borrow::Cow;
use std::path::Path;

const PARTS: TableDefinition<(u64, u64, u32), &[u8]> = TableDefinition::new("rp_snapshot_parts");
const SNAPSHOTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_snapshots");

/// `len` bytes that do not compress (the store sees bytes, not records).
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    support::noise(seed, len).into_bytes()
}

fn commit(store: &mut RedbStore, c: Commit) {
    store.commit(Commit { durable: true, ..c }).expect("commit");
}

fn part_count(path: &Path) -> u64 {
    let db = redb::ReadOnlyDatabase::open(path).expect("open with redb");
    let txn = db.begin_read().expect("read");
    match txn.open_table(PARTS) {
        Ok(t) => t.len().expect("len"),
        Err(_) => 0,
    }
}

fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("metadata").blocks() * 512
}

#[test]
fn a_large_snapshot_reads_back_whole_and_takes_its_own_size_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.rp");
    let mut store = RedbStore::create(&path).expect("create");
    // 2.2 MB: one allocation would round it up to 4 MB.
    let big = bytes(1, 2_200_000);
    let small = bytes(2, 3_000);
    commit(
        &mut store,
        Commit {
            snapshots: vec![(1, 10, big.clone()), (1, 5, small.clone())],
            ..Commit::default()
        },
    );
    assert_eq!(store.snapshot_seqs(1).unwrap(), vec![5, 10]);
    assert_eq!(
        store.latest_snapshot(1, 0, 100).unwrap(),
        Some((10, big.clone()))
    );
    assert_eq!(
        store.latest_snapshot(1, 0, 9).unwrap(),
        Some((5, small.clone()))
    );
    drop(store);
    assert_eq!(part_count(&path), 3);
    let on_disk = allocated(&path);
    assert!(
        on_disk < 3_300_000,
        "{on_disk} bytes on disk for a snapshot of 2.2 MB"
    );
    // A snapshot put together from its parts is given to the visitor, which may free it as
    // soon as it has read it (an open frees it once decompressed); one held whole is lent.
    let store = RedbStore::open(&path).expect("open");
    let mut seen = Vec::new();
    for max in [100, 9] {
        assert!(
            store
                .visit_latest_snapshot(1, 0, max, &mut |seq, b| {
                    seen.push((seq, matches!(b, Cow::Owned(_)), b.into_owned()));
                    Ok(())
                })
                .unwrap()
        );
    }
    assert_eq!(seen, vec![(10, true, big), (5, false, small)]);
}

#[test]
fn replacing_purging_and_dropping_leave_no_part_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.rp");
    let mut store = RedbStore::create(&path).expect("create");
    let put = |store: &mut RedbStore, seq, b: Vec<u8>| {
        commit(
            store,
            Commit {
                snapshots: vec![(1, seq, b)],
                ..Commit::default()
            },
        )
    };
    put(&mut store, 10, bytes(1, 3_500_000));
    // Replaced by a smaller one in parts, then by one stored whole.
    put(&mut store, 10, bytes(2, 1_500_000));
    assert_eq!(
        store.latest_snapshot(1, 10, 10).unwrap().unwrap().1,
        bytes(2, 1_500_000)
    );
    put(&mut store, 10, bytes(3, 100));
    assert_eq!(
        store.latest_snapshot(1, 10, 10).unwrap().unwrap().1,
        bytes(3, 100)
    );
    drop(store);
    assert_eq!(part_count(&path), 0);

    let mut store = RedbStore::open(&path).expect("open");
    put(&mut store, 10, bytes(4, 2_000_000));
    put(&mut store, 20, bytes(5, 2_000_000));
    put(&mut store, 30, bytes(6, 2_000_000));
    commit(
        &mut store,
        Commit {
            drop_snapshots: vec![(1, 10)],
            purge: vec![(1, 25)],
            ..Commit::default()
        },
    );
    assert_eq!(store.snapshot_seqs(1).unwrap(), vec![20]);
    assert_eq!(
        store.latest_snapshot(1, 0, 100).unwrap().unwrap().1,
        bytes(5, 2_000_000)
    );
    drop(store);
    assert_eq!(part_count(&path), 2, "only the parts of the snapshot at 20");
}

/// Edits the parts table or the manifest of the snapshot at (1, 10) with redb directly.
fn damage(
    path: &Path,
    edit: impl FnOnce(&mut redb::Table<(u64, u64), &[u8]>, &mut redb::Table<(u64, u64, u32), &[u8]>),
) {
    let db = redb::Database::open(path).expect("open with redb");
    let txn = db.begin_write().expect("write");
    {
        let mut snapshots = txn.open_table(SNAPSHOTS).expect("snapshots");
        let mut parts = txn.open_table(PARTS).expect("parts");
        edit(&mut snapshots, &mut parts);
    }
    txn.commit().expect("commit");
}

#[test]
fn a_missing_or_damaged_part_is_a_corrupt_save() {
    let dir = tempfile::tempdir().expect("tempdir");
    type Edit = fn(&mut redb::Table<(u64, u64), &[u8]>, &mut redb::Table<(u64, u64, u32), &[u8]>);
    let cases: [(&str, Edit); 4] = [
        ("a part missing", |_, p| {
            p.remove((1, 10, 1)).expect("remove");
        }),
        ("the last part cut short", |_, p| {
            let v = p
                .get((1, 10, 2))
                .expect("get")
                .expect("part")
                .value()
                .to_vec();
            p.insert((1, 10, 2), &v[..v.len() - 1]).expect("insert");
        }),
        ("every part gone", |_, p| {
            p.retain(|_, _| false).expect("retain");
        }),
        ("the manifest damaged", |s, _| {
            let v = s.get((1, 10)).expect("get").expect("row").value().to_vec();
            s.insert((1, 10), &v[..v.len() - 3]).expect("insert");
        }),
    ];
    for (i, (what, edit)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("s{i}.rp"));
        let mut store = RedbStore::create(&path).expect("create");
        commit(
            &mut store,
            Commit {
                snapshots: vec![(1, 10, bytes(1, 2_500_000))],
                ..Commit::default()
            },
        );
        drop(store);
        damage(&path, edit);
        let store = RedbStore::open(&path).expect("open");
        let e = store.latest_snapshot(1, 0, 100).expect_err(what);
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{what}: {e}");
        assert!(e.to_string().contains("snapshot at seq 10"), "{what}: {e}");
    }
}

#[test]
fn a_world_with_a_large_snapshot_reopens_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.rp");
    let options = EngineOptions {
        snapshot_every: 4,
        ..EngineOptions::default()
    };
    let mut engine = Engine::create_with(&path, "W", 0, options.clone()).expect("create");
    for i in 0..8 {
        let id = EntityId(engine.world().next_id());
        engine
            .append(vec![Event::EntityCreated {
                id,
                key: None,
                name: format!("Tome {i}"),
                aliases: vec![],
                facts: FactSheet((0..6).map(|j| support::noise(i * 8 + j, 60_000)).collect()),
                host_controlled: false,
                state: EntityState::default(),
            }])
            .expect("append");
    }
    let world = engine.world().to_bytes();
    let head = engine.head();
    drop(engine);
    let parts = part_count(&path);
    let seqs = RedbStore::open(&path).unwrap().snapshot_seqs(1).unwrap();
    assert!(parts >= 2, "in parts: {parts} parts, snapshots at {seqs:?}");
    assert!(seqs.contains(&8), "{seqs:?}");
    let engine = Engine::open_with(&path, options).expect("reopen");
    assert_eq!((engine.head(), engine.world().to_bytes()), (head, world));
}

#[test]
fn a_snapshot_read_in_two_halves_comes_back_whole_and_damage_in_either_half_is_found() {
    // Ten parts: the store reads parts 0-4 and 5-9 on two threads.
    let dir = tempfile::tempdir().expect("tempdir");
    let big = bytes(3, 10_000_000);
    let save = |name: &str| {
        let path = dir.path().join(name);
        let mut store = RedbStore::create(&path).expect("create");
        commit(
            &mut store,
            Commit {
                snapshots: vec![(1, 10, big.clone())],
                ..Commit::default()
            },
        );
        drop(store);
        assert_eq!(part_count(&path), 10);
        path
    };
    let whole = save("whole.rp");
    let store = RedbStore::open(&whole).expect("open");
    assert_eq!(
        store.latest_snapshot(1, 0, 100).unwrap(),
        Some((10, big.clone()))
    );
    type Edit = fn(&mut redb::Table<(u64, u64), &[u8]>, &mut redb::Table<(u64, u64, u32), &[u8]>);
    let cases: [(&str, Edit, &str); 4] = [
        (
            "a part of the second half missing",
            |_, p| {
                p.remove((1, 10, 7)).expect("remove");
            },
            "part 8 of 1040384 bytes where part 7 of 1040384 was due",
        ),
        (
            "a part of each half missing: the first is named",
            |_, p| {
                p.remove((1, 10, 2)).expect("remove");
                p.remove((1, 10, 7)).expect("remove");
            },
            "part 3 of 1040384 bytes where part 2 of 1040384 was due",
        ),
        (
            "the last part missing",
            |_, p| {
                p.remove((1, 10, 9)).expect("remove");
            },
            "9 of 10 parts found",
        ),
        (
            "the last part of the first half cut short",
            |_, p| {
                let v = p
                    .get((1, 10, 4))
                    .expect("get")
                    .expect("part")
                    .value()
                    .to_vec();
                p.insert((1, 10, 4), &v[..v.len() - 1]).expect("insert");
            },
            "part 4 of 1040383 bytes where part 4 of 1040384 was due",
        ),
    ];
    for (i, (what, edit, message)) in cases.into_iter().enumerate() {
        let path = save(&format!("d{i}.rp"));
        damage(&path, edit);
        let store = RedbStore::open(&path).expect("open");
        let e = store.latest_snapshot(1, 0, 100).expect_err(what);
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{what}: {e}");
        assert!(e.to_string().contains(message), "{what}: {e}");
    }
}
