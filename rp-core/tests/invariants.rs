//! Property tests for the invariants of DESIGN §2 that concern the log: state is a projection
//! of the log (replay == live, byte for byte), snapshot + tail == full replay, rewind lands on
//! the state at that seq and destroys nothing, invalid events change nothing, a world loaded
//! from a snapshot keeps its derived lookups as `apply` does, and a save file closed and
//! reopened holds everything.

mod sim;

use proptest::prelude::*;
use rp_core::store::MemoryStore;
use rp_core::*;

fn options(snapshot_every: u64) -> EngineOptions {
    EngineOptions {
        snapshot_every,
        settings: WorldSettings {
            dialogue_window: 8,
            seed: 42,
        },
        ..EngineOptions::default()
    }
}

fn all_events(engine: &Engine) -> Vec<Event> {
    engine
        .events(1, engine.head())
        .unwrap()
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

/// Runs `ops` through an in-memory engine; returns it with the batches it committed.
fn play(ops: &[sim::Op], sizes: &[usize], snapshot_every: u64) -> (Engine, usize) {
    let mut engine = Engine::new_in(
        Box::new(MemoryStore::new()),
        "World",
        0,
        options(snapshot_every),
    )
    .unwrap();
    let (batches, rejected) = sim::valid_batches(engine.world(), ops, sizes);
    for batch in batches {
        engine.append(batch).unwrap();
    }
    (engine, rejected)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn replay_of_the_log_equals_the_live_state(
        ops in prop::collection::vec(sim::op(), 1..120),
        sizes in prop::collection::vec(1usize..6, 1..8),
    ) {
        let (engine, _) = play(&ops, &sizes, 0);
        let replayed = sim::replay(&all_events(&engine));
        prop_assert_eq!(replayed.to_bytes(), engine.world().to_bytes());
        prop_assert_eq!(replayed.seq(), engine.head());
    }

    #[test]
    fn snapshot_plus_tail_equals_full_replay(
        ops in prop::collection::vec(sim::op(), 1..120),
        sizes in prop::collection::vec(1usize..6, 1..8),
        every in 1u64..12,
    ) {
        let (engine, _) = play(&ops, &sizes, every);
        let live = engine.world().to_bytes();
        let full = sim::replay(&all_events(&engine)).to_bytes();
        let reopened = Engine::from_store(engine.into_store(), options(every)).unwrap();
        prop_assert_eq!(reopened.world().to_bytes(), live.clone());
        prop_assert_eq!(full, live);
    }

    #[test]
    fn rewind_gives_the_state_at_that_seq_and_keeps_the_tail(
        ops in prop::collection::vec(sim::op(), 1..100),
        sizes in prop::collection::vec(1usize..6, 1..8),
        every in 0u64..6,
        at in any::<prop::sample::Index>(),
    ) {
        let (mut engine, _) = play(&ops, &sizes, every);
        let head = engine.head();
        let events = all_events(&engine);
        let live = engine.world().to_bytes();
        let to = 1 + at.index(head as usize) as u64;
        let preview = engine.preview_rewind(to).unwrap();
        prop_assert_eq!(preview.event_count() as u64, head - to);
        let tail = engine.rewind(to).unwrap();
        prop_assert_eq!(engine.head(), to);
        prop_assert_eq!(engine.world().to_bytes(), sim::replay(&events[..to as usize]).to_bytes());
        // Nothing was destroyed: the abandoned tail is a branch holding the old head.
        if let Some(tail) = tail {
            engine.switch_branch(&tail).unwrap();
            prop_assert_eq!(engine.head(), head);
            prop_assert_eq!(engine.world().to_bytes(), live);
        } else {
            prop_assert_eq!(to, head);
        }
    }

    #[test]
    fn an_invalid_event_leaves_the_world_byte_identical(
        ops in prop::collection::vec(sim::op(), 1..80),
        bad in prop::collection::vec(sim::op(), 1..40),
    ) {
        let (mut engine, _) = play(&ops, &[3], 0);
        let mut rejected = 0;
        for op in &bad {
            let Some(ev) = sim::event(engine.world(), op) else { continue };
            // Append the event after a valid one: a failing batch must leave no trace at all.
            let tick = Event::TimeAdvanced { to: engine.world().now() + 1 };
            let before = engine.world().to_bytes();
            let head = engine.head();
            if engine.append(vec![tick, ev]).is_err() {
                rejected += 1;
                prop_assert_eq!(engine.world().to_bytes(), before);
                prop_assert_eq!(engine.head(), head);
                prop_assert_eq!(engine.events(head + 1, u64::MAX).unwrap().len(), 0);
            }
        }
        let _ = rejected;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Replay applies events by value (`apply_owned`); it must accept, refuse and change
    /// exactly what `apply` does, for valid and invalid events alike.
    #[test]
    fn applying_by_value_is_applying_by_reference(
        ops in prop::collection::vec(sim::op(), 1..160),
    ) {
        let mut by_ref = World::new();
        by_ref
            .apply(&Event::WorldCreated {
                name: "World".into(),
                now: 0,
                settings: options(0).settings,
            })
            .unwrap();
        let mut by_value = by_ref.clone();
        for op in &ops {
            let Some(event) = sim::event(&by_ref, op) else { continue };
            let a = by_ref.apply(&event).map_err(|e| e.to_string());
            let b = by_value.apply_owned(event).map_err(|e| e.to_string());
            prop_assert_eq!(a, b);
            prop_assert_eq!(by_ref.to_bytes(), by_value.to_bytes());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// A world decoded from a snapshot schedules what fades when on another thread, noting the
    /// changes made meanwhile: its lookups must be the ones `apply` keeps on the world that was
    /// never saved, whatever is applied while the schedule is still being built.
    #[test]
    fn a_loaded_world_keeps_its_lookups_as_apply_does(
        before in prop::collection::vec(sim::op(), 1..80),
        after in prop::collection::vec(sim::op(), 1..80),
    ) {
        let (engine, _) = play(&before, &[3], 0);
        let mut live = engine.world().clone();
        let mut loaded = rp_core::log::codec::decode_snapshot(
            &rp_core::log::codec::encode_snapshot(&live),
            "snapshot",
        )
        .unwrap();
        for op in &after {
            let Some(event) = sim::event(&live, op) else { continue };
            let a = live.apply(&event).map_err(|e| e.to_string());
            let b = loaded.apply(&event).map_err(|e| e.to_string());
            prop_assert_eq!(a, b);
        }
        prop_assert!(loaded.index_is_consistent());
        prop_assert_eq!(loaded.to_bytes(), live.to_bytes());
        for t in [live.now(), live.now() + 86_400_000, i64::MAX / 2] {
            prop_assert_eq!(loaded.fading_by(t), live.fading_by(t));
            prop_assert_eq!(loaded.next_fading_after(t), live.next_fading_after(t));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn close_and_reopen_preserves_everything(
        ops in prop::collection::vec(sim::op(), 1..80),
        sizes in prop::collection::vec(1usize..6, 1..8),
        every in 0u64..8,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.rp");
        let mut engine = Engine::create_with(&path, "World", 0, options(every)).unwrap();
        let (batches, _) = sim::valid_batches(engine.world(), &ops, &sizes);
        for b in batches {
            engine.append(b).unwrap();
        }
        let head = engine.head();
        if head > 2 {
            engine.fork(head / 2, "side").unwrap();
        }
        let live = engine.world().to_bytes();
        let branches = engine.branches();
        drop(engine);
        let engine = Engine::open_with(&path, options(every)).unwrap();
        prop_assert_eq!(engine.world().to_bytes(), live);
        prop_assert_eq!(engine.branches(), branches);
    }
}

#[test]
fn the_generator_produces_rejections_too() {
    // Guards the properties above against a generator that only ever makes valid events.
    let ops: Vec<sim::Op> = (0..60u8)
        .map(|i| match i % 4 {
            0 => sim::Op::CreateEntity {
                name: i % 3,
                host: false,
            },
            1 => sim::Op::CreateContainer {
                parent: None,
                capacity: Some(1),
            },
            2 => sim::Op::Move {
                who: i,
                to: 0,
                slot: true,
            },
            _ => sim::Op::Feel {
                from: i,
                to: i,
                affinity: 10,
            },
        })
        .collect();
    let (engine, rejected) = play(&ops, &[2], 0);
    assert!(rejected > 10, "only {rejected} rejections");
    assert!(engine.head() > 20);
}

#[test]
fn the_generator_reaches_every_event_kind() {
    // Guards the properties above against kinds they never exercise: random ops must produce
    // an accepted event of every kind the log has (the world's creation is the engine's).
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let ops: Vec<sim::Op> = (0..4000)
        .map(|_| sim::op().new_tree(&mut runner).unwrap().current())
        .collect();
    let (engine, _) = play(&ops, &[3], 0);
    let seen: std::collections::BTreeSet<&str> =
        all_events(&engine).iter().map(Event::kind).collect();
    let all = [
        "world_created",
        "entity_created",
        "entity_edited",
        "entity_removed",
        "container_created",
        "container_edited",
        "container_removed",
        "activity_changed",
        "inventory_changed",
        "entity_state_changed",
        "edge_updated",
        "edge_removed",
        "group_updated",
        "group_removed",
        "user_turn",
        "assistant_turn",
        "memory_added",
        "memory_removed",
        "memories_recalled",
        "time_advanced",
        "time_skipped",
        "response_decided",
        "generated",
        "thread_opened",
        "thread_closed",
        "reports_judged",
        "tools_run",
        "system_line_injected",
        "system_lines_shown",
        "world_file_applied",
        "scoped_event_planned",
        "scoped_event_started",
        "scoped_event_closed",
        "scene_opened",
        "scene_closed",
        "query_asked",
        "query_answered",
        "query_failed",
        "initiated",
    ];
    let missing: Vec<&str> = all.iter().copied().filter(|k| !seen.contains(k)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}
