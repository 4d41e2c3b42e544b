//! Long work shows its progress (docs/progress.md): opening a save reports the snapshot and
//! the replay of the tail, a replay to a past point and the memory index's build report
//! theirs, in order, with `done <= total` and a last report of `done == total`; and the
//! engine's phases carry tracing spans a host's subscriber sees.

use rp_core::memory::{NewMemory, RecallOptions};
use rp_core::turn::{NoSink, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::{AsOf, Engine, EngineOptions, EntityId, Event, Progress, ProgressFn};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A callback that keeps every report, and what it kept.
fn recorder() -> (ProgressFn, Arc<Mutex<Vec<Progress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = seen.clone();
    let f: ProgressFn = Arc::new(move |p: &Progress| into.lock().unwrap().push(*p));
    (f, seen)
}

fn taken(seen: &Mutex<Vec<Progress>>) -> Vec<Progress> {
    std::mem::take(&mut *seen.lock().unwrap())
}

/// The phases of `reports` in the order they came, each once.
fn phases(reports: &[Progress]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in reports {
        if out.last() != Some(&r.phase) {
            out.push(r.phase);
        }
    }
    out
}

/// Checks each phase's reports: they start at 0, never go back, stay within the total, and
/// the last is `done == total`. Returns each phase's total.
fn check_each(reports: &[Progress]) -> Vec<(&'static str, u64)> {
    let mut totals = Vec::new();
    let mut i = 0;
    while i < reports.len() {
        let phase = reports[i].phase;
        let run: Vec<&Progress> = reports[i..]
            .iter()
            .take_while(|r| r.phase == phase)
            .collect();
        let total = run[0].total;
        assert_eq!(run[0].done, 0, "{phase} starts at 0: {run:?}");
        assert!(run.len() >= 2, "{phase} reports its start and end: {run:?}");
        for w in run.windows(2) {
            assert!(w[0].done <= w[1].done, "{phase} goes back: {run:?}");
        }
        for r in &run {
            assert_eq!(r.total, total, "{phase}'s total changed: {run:?}");
            assert!(r.done <= r.total, "{phase}: done past total: {run:?}");
        }
        let last = run.last().unwrap();
        assert_eq!(last.done, total, "{phase} ends with done == total: {run:?}");
        // Never per item: about a hundred reports at most, whatever the total.
        assert!(run.len() <= 103, "{phase} reported {} times", run.len());
        totals.push((phase, total));
        i += run.len();
    }
    totals
}

fn entity(engine: &mut Engine, name: &str, host: bool) -> EntityId {
    let id = EntityId(engine.world().next_id());
    engine
        .append(vec![Event::EntityCreated {
            id,
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: Default::default(),
            host_controlled: host,
            state: Default::default(),
        }])
        .expect("entity");
    id
}

/// A save at `path` whose snapshots come every `every` events (0: never) holding one
/// character and `memories` memories of hers; returns her id and the head.
fn save(path: &Path, every: u64, memories: usize) -> (EntityId, u64) {
    let options = EngineOptions {
        snapshot_every: every,
        ..EngineOptions::default()
    };
    let mut engine = Engine::create_with(path, "The Crooked Lantern", 0, options).expect("create");
    let mira = entity(&mut engine, "Mira", false);
    for n in 0..memories {
        engine
            .add_memory(NewMemory::new(
                mira,
                format!("the lights on the marsh, night {n}"),
            ))
            .expect("memory");
    }
    (mira, engine.head())
}

fn open_reporting(path: &Path) -> (Engine, Arc<Mutex<Vec<Progress>>>) {
    let (f, seen) = recorder();
    let options = EngineOptions {
        progress: Some(f),
        ..EngineOptions::default()
    };
    (Engine::open_with(path, options).expect("open"), seen)
}

#[test]
fn opening_reports_the_snapshot_then_the_replay_of_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.rp");
    let (_, head) = save(&path, 50, 230);
    let (engine, seen) = open_reporting(&path);
    assert_eq!(engine.head(), head);
    let reports = taken(&seen);
    assert_eq!(
        phases(&reports),
        [Progress::OPEN_SNAPSHOT, Progress::OPEN_REPLAY],
        "{reports:?}"
    );
    let totals = check_each(&reports);
    assert_eq!(totals[0], (Progress::OPEN_SNAPSHOT, 1));
    // A snapshot was used: only the tail after it is replayed, never more than the spacing.
    let tail = totals[1].1;
    assert!(
        tail > 0 && tail < 50 && tail < head,
        "tail {tail} of {head}"
    );
}

#[test]
fn without_a_snapshot_opening_replays_every_event_and_reports_each_hundredth() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.rp");
    let (_, head) = save(&path, 0, 400);
    let (_, seen) = open_reporting(&path);
    let reports = taken(&seen);
    let totals = check_each(&reports);
    assert_eq!(
        totals,
        [(Progress::OPEN_SNAPSHOT, 1), (Progress::OPEN_REPLAY, head)]
    );
    let replay: Vec<_> = reports
        .iter()
        .filter(|r| r.phase == Progress::OPEN_REPLAY)
        .collect();
    // The start, every 1% (5 events of ~402), the end.
    assert!(replay.len() > 50, "{}", replay.len());
}

#[test]
fn a_past_world_and_the_memory_index_report_their_phases() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.rp");
    let (mira, head) = save(&path, 0, 120);
    let (mut engine, seen) = open_reporting(&path);
    taken(&seen);

    // A replay to a past point.
    let past = engine.world_at(&AsOf::seq(100)).expect("world_at");
    assert_eq!(past.seq(), 100);
    let reports = taken(&seen);
    assert_eq!(phases(&reports), [Progress::HISTORY_REPLAY], "{reports:?}");
    assert_eq!(check_each(&reports), [(Progress::HISTORY_REPLAY, 100)]);

    // The first recall builds the memory index: one item per recallable memory.
    let found = engine
        .recall(mira, "marsh", 0, &RecallOptions::default())
        .expect("recall");
    assert!(!found.is_empty());
    let reports = taken(&seen);
    assert_eq!(check_each(&reports), [(Progress::INDEX_BUILD, 120)]);
    // Kept after that: a second recall builds nothing.
    engine
        .recall(mira, "marsh", 0, &RecallOptions::default())
        .expect("recall");
    assert_eq!(taken(&seen), []);

    // Replaced, then removed.
    let (other, seen_by_other) = recorder();
    engine.set_progress(Some(other));
    engine.world_at(&AsOf::seq(head - 5)).expect("world_at");
    assert_eq!(phases(&taken(&seen_by_other)), [Progress::HISTORY_REPLAY]);
    engine.set_progress(None);
    engine.world_at(&AsOf::seq(3)).expect("world_at");
    assert_eq!(taken(&seen_by_other), []);
    assert_eq!(taken(&seen), []);
}

#[test]
fn an_engine_in_memory_reports_its_index_build() {
    let mut engine = Engine::in_memory("Inn", 0).expect("engine");
    let mira = entity(&mut engine, "Mira", false);
    for n in 0..7 {
        engine
            .add_memory(NewMemory::new(mira, format!("a quiet night {n}")))
            .expect("memory");
    }
    let (f, seen) = recorder();
    engine.set_progress(Some(f));
    engine
        .recall(mira, "night", 0, &RecallOptions::default())
        .expect("recall");
    assert_eq!(check_each(&taken(&seen)), [(Progress::INDEX_BUILD, 7)]);
}

#[test]
fn options_with_the_same_callback_are_equal() {
    let (f, _) = recorder();
    let a = EngineOptions {
        progress: Some(f.clone()),
        ..EngineOptions::default()
    };
    assert_eq!(a, a.clone());
    assert_ne!(a, EngineOptions::default());
    let (g, _) = recorder();
    assert_ne!(
        a,
        EngineOptions {
            progress: Some(g),
            ..EngineOptions::default()
        }
    );
    assert!(format!("{a:?}").contains("progress"));
}

/// A tracing subscriber that keeps the name of every span made.
mod spans {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    #[derive(Clone, Default)]
    pub struct Names {
        pub seen: Arc<Mutex<Vec<&'static str>>>,
        next: Arc<AtomicU64>,
    }

    impl Subscriber for Names {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            self.seen.lock().unwrap().push(span.metadata().name());
            Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

#[test]
fn opening_a_save_and_running_a_turn_make_the_engines_spans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("save.rp");
    let tavern = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tavern.toml");
    let options = EngineOptions {
        snapshot_every: 5,
        ..EngineOptions::default()
    };
    let (wren, tobias, now) = {
        let engine = Engine::create_from_world_file(&path, &tavern, 0, options).expect("create");
        let world = engine.world();
        (
            world.resolve_entity("Wren").expect("Wren"),
            world.resolve_entity("Tobias Reed").expect("Tobias"),
            world.now() + 1_000,
        )
    };
    let names = spans::Names::default();
    tracing::subscriber::with_default(names.clone(), || {
        let mut engine = Engine::open(&path).expect("open");
        let g = ScriptedGenerator::new("{name} nods. ({n})");
        let outcome = engine
            .run_turn_blocking(
                TurnInput::say(wren, "Tobias, what about the marsh?", now),
                TurnOptions::default(),
                &g,
                &mut NoSink,
            )
            .expect("turn");
        assert!(
            outcome.replies.iter().any(|r| r.speaker == tobias),
            "Tobias answers"
        );
    });
    let seen = names.seen.lock().unwrap().clone();
    for name in [
        "open",
        "snapshot.load",
        "replay",
        "turn.begin",
        "commit",
        "turn.step",
        "prompt.build",
        "recall",
        "index.build",
        "turn.finish",
    ] {
        assert!(seen.contains(&name), "no span {name:?} in {seen:?}");
    }
    // Opening comes first, its parts after it.
    assert_eq!(seen[0], "open");
}
