//! Branches and rewind: nothing is destroyed, every branch keeps its own history, and the
//! catalog survives closing the save.

mod support;

use rp_core::*;

fn tick(engine: &mut Engine, n: usize) {
    for _ in 0..n {
        let to = engine.world().now() + 1;
        engine.append(vec![Event::TimeAdvanced { to }]).unwrap();
    }
}

fn named(engine: &Engine) -> Vec<(String, u64, bool)> {
    engine
        .branches()
        .into_iter()
        .map(|b| (b.name, b.head, b.current))
        .collect()
}

#[test]
fn rewind_keeps_the_abandoned_tail_as_a_branch() {
    let mut e = Engine::in_memory("W", 0).unwrap();
    tick(&mut e, 9); // head 10, now 9
    let at_5 = e.events(1, 5).unwrap();
    let tail = e.rewind(5).unwrap().expect("something was undone");
    assert_eq!(tail, "main~2");
    assert_eq!(e.head(), 5);
    assert_eq!(e.world().now(), 4);
    assert_eq!(e.current_branch(), "main");
    assert_eq!(
        named(&e),
        vec![("main~2".into(), 10, false), ("main".into(), 5, true)]
    );
    assert_eq!(e.events(1, 5).unwrap(), at_5);

    // New history on main does not disturb the tail.
    tick(&mut e, 2);
    assert_eq!(e.head(), 7);
    e.switch_branch("main~2").unwrap();
    assert_eq!((e.head(), e.world().now()), (10, 9));
    e.switch_branch("main").unwrap();
    assert_eq!((e.head(), e.world().now()), (7, 6));

    // A second rewind makes main~3.
    assert_eq!(e.rewind(6).unwrap().as_deref(), Some("main~3"));
    assert_eq!(
        e.rewind(6).unwrap(),
        None,
        "rewinding to the head undoes nothing"
    );
}

#[test]
fn preview_reports_what_a_rewind_would_undo() {
    let mut e = Engine::in_memory("W", 0).unwrap();
    let a = EntityId(e.world().next_id());
    let b = EntityId(a.0 + 1);
    let mk = |id, name: &str| Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: FactSheet::default(),
        host_controlled: false,
        state: EntityState::default(),
    };
    e.append(vec![mk(a, "A"), mk(b, "B")]).unwrap();
    let mark = e.head();
    e.append(vec![
        Event::EdgeUpdated {
            edge: Edge::new(a, b),
        },
        Event::EdgeUpdated {
            edge: Edge::new(b, a),
        },
        Event::TimeAdvanced { to: 5 },
    ])
    .unwrap();
    let before = e.world().to_bytes();
    let p = e.preview_rewind(mark).unwrap();
    assert_eq!(e.world().to_bytes(), before, "a preview changes nothing");
    assert_eq!(p.event_count(), 3);
    assert_eq!(p.events_by_kind.get("edge_updated"), Some(&2));
    assert_eq!(p.events_by_kind.get("time_advanced"), Some(&1));
    assert_eq!(
        p.edges.iter().copied().collect::<Vec<_>>(),
        vec![(a, b), (b, a)]
    );
    assert!(p.memories.is_empty());
    assert!(e.preview_rewind(0).is_err());
    assert!(e.preview_rewind(e.head() + 1).is_err());
}

#[test]
fn fork_rename_switch_and_delete() {
    let mut e = Engine::in_memory("W", 0).unwrap();
    tick(&mut e, 5); // head 6
    let info = e.fork(3, "what-if").unwrap();
    assert_eq!(info.head, 3);
    assert_eq!(info.forked_from, Some((Some("main".into()), 3)));
    assert!(!info.current);
    assert_eq!(e.current_branch(), "main");
    assert_eq!(
        e.fork(2, "what-if").unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(e.fork(99, "x").unwrap_err().kind(), ErrorKind::Invalid);
    assert_eq!(e.fork(2, " ").unwrap_err().kind(), ErrorKind::Invalid);

    e.switch_branch("what-if").unwrap();
    assert_eq!(e.head(), 3);
    tick(&mut e, 4);
    assert_eq!(e.head(), 7);
    e.rename_branch("what-if", "dream").unwrap();
    assert_eq!(e.current_branch(), "dream");
    assert_eq!(
        e.rename_branch("dream", "main").unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(
        e.switch_branch("nope").unwrap_err().kind(),
        ErrorKind::NotFound
    );

    assert_eq!(
        e.delete_branch("dream").unwrap_err().kind(),
        ErrorKind::Conflict
    );
    e.switch_branch("main").unwrap();
    assert_eq!(e.head(), 6);
    e.delete_branch("dream").unwrap();
    assert_eq!(named(&e), vec![("main".into(), 6, true)]);
    assert_eq!(
        e.delete_branch("dream").unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn deleting_a_branch_others_descend_from_keeps_the_shared_events() {
    let mut e = Engine::in_memory("W", 0).unwrap();
    tick(&mut e, 5); // main head 6
    e.rewind(4).unwrap(); // main~2 keeps 5..6, new main shares 1..4
    tick(&mut e, 3); // main head 7
    // main's own history lives partly under the old branch id (now "main~2").
    e.switch_branch("main~2").unwrap();
    e.fork(5, "child").unwrap();
    e.switch_branch("main").unwrap();
    e.delete_branch("main~2").unwrap();
    assert_eq!(named(&e).len(), 2);
    // Both survivors still replay in full.
    let main = e.world().to_bytes();
    e.switch_branch("child").unwrap();
    assert_eq!((e.head(), e.world().now()), (5, 4));
    e.switch_branch("main").unwrap();
    assert_eq!(e.world().to_bytes(), main);
    assert_eq!(e.events(1, 7).unwrap().len(), 7);
}

#[test]
fn branches_survive_closing_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.rp");
    let mut e = Engine::create(&path, "W", 0).unwrap();
    tick(&mut e, 6);
    e.rewind(3).unwrap();
    e.fork(2, "early").unwrap();
    tick(&mut e, 1);
    let branches = named(&e);
    let state = e.world().to_bytes();
    drop(e);
    let mut e = Engine::open(&path).unwrap();
    assert_eq!(named(&e), branches);
    assert_eq!(e.world().to_bytes(), state);
    e.switch_branch("main~2").unwrap();
    assert_eq!(e.head(), 7);
    drop(e);
    // The switch is remembered too.
    let e = Engine::open(&path).unwrap();
    assert_eq!(e.current_branch(), "main~2");
}

#[test]
fn superseded_snapshots_are_dropped_but_forks_keep_theirs() {
    use rp_core::store::MemoryStore;
    let options = EngineOptions {
        snapshot_every: 4,
        ..EngineOptions::default()
    };
    let mut e = Engine::new_in(Box::new(MemoryStore::new()), "W", 0, options.clone()).unwrap();
    tick(&mut e, 9); // head 10: snapshots at 4 and 8
    e.fork(5, "side").unwrap(); // opening "side" starts from the snapshot at 4
    tick(&mut e, 30); // head 40: snapshots at 12, 16, ..., 40
    let store = e.into_store();
    assert_eq!(store.snapshot_seqs(1).unwrap(), vec![4, 36, 40]);
    let mut e = Engine::from_store(store, options).unwrap();
    assert_eq!(e.head(), 40);
    e.switch_branch("side").unwrap();
    assert_eq!((e.head(), e.world().now()), (5, 4));
}

#[test]
fn a_large_world_is_not_snapshotted_at_every_boundary() {
    use rp_core::store::MemoryStore;
    let options = EngineOptions {
        snapshot_every: 2,
        ..EngineOptions::default()
    };
    let mut e = Engine::new_in(Box::new(MemoryStore::new()), "W", 0, options.clone()).unwrap();
    e.append(vec![Event::EntityCreated {
        id: EntityId(e.world().next_id()),
        key: None,
        name: "Tome".into(),
        aliases: vec![],
        // ~200 KB that compression does not shrink.
        facts: FactSheet((0..4).map(|i| support::noise(i, 51_000)).collect()),
        host_controlled: false,
        state: EntityState::default(),
    }])
    .unwrap();
    tick(&mut e, 200); // 100 boundaries, a few KB of events beside a ~200 KB snapshot
    let state = e.world().to_bytes();
    let store = e.into_store();
    assert_eq!(
        store.snapshot_seqs(1).unwrap(),
        vec![2],
        "one snapshot, not a hundred"
    );
    let e = Engine::from_store(store, options).unwrap();
    assert_eq!(e.world().to_bytes(), state);
}
