//! Backups (docs/history.md#backups): `Engine::backup` copies an open save, every branch and
//! snapshot of it, to a new save file while the engine plays on; `Engine::export_branch`
//! copies one branch's history. Each opens as the world it copied; a refused or failed copy
//! changes nothing and leaves no file.

mod support;

use rp_core::store::{RedbStore, Store};
use rp_core::turn::{NoSink, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::*;
use std::path::{Path, PathBuf};

const TAVERN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");

/// Wren says `text`; whoever answers says `reply`.
fn play(engine: &mut Engine, text: &str, reply: &str) {
    let wren = engine.world().entity_by_name("Wren").expect("Wren").id;
    let now = engine.world().now() + 60_000;
    engine
        .run_turn_blocking(
            TurnInput::say(wren, text, now),
            TurnOptions::default(),
            &ScriptedGenerator::new(reply),
            &mut NoSink,
        )
        .expect("a turn");
}

fn tick(engine: &mut Engine, n: usize) {
    for _ in 0..n {
        let to = engine.world().now() + 1_000;
        engine.append(vec![Event::TimeAdvanced { to }]).unwrap();
    }
}

/// The branches as users see them, and the world of each (switching through them, then back).
type Branches = Vec<(BranchInfo, Vec<u8>)>;

fn branches_and_worlds(engine: &mut Engine) -> Branches {
    let current = engine.current_branch().to_owned();
    let out = engine
        .branches()
        .into_iter()
        .map(|b| {
            engine.switch_branch(&b.name).unwrap();
            (b, engine.world().to_bytes())
        })
        .collect();
    engine.switch_branch(&current).unwrap();
    out
}

/// The names in `dir`, sorted.
/// The files in `dir`, without the memory indexes kept beside saves (`SAVE.index`: derived
/// data, docs/memory.md), which a turn's recall makes.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".index"))
        .collect();
    names.sort();
    names
}

fn saved_tavern(dir: &Path, options: EngineOptions) -> (Engine, PathBuf) {
    let save = dir.join("save.rp");
    let engine = Engine::create_from_world_file(&save, TAVERN, 0, options).unwrap();
    (engine, save)
}

#[test]
fn a_backup_made_while_playing_opens_as_the_world_it_copied() {
    let dir = tempfile::tempdir().unwrap();
    let (mut engine, save) = saved_tavern(dir.path(), EngineOptions::default());
    play(&mut engine, "Evening, Mira.", "Evening, Wren.");
    play(&mut engine, "A cider, please.", "Coming up.");
    let (at_backup, head_at_backup) = (engine.world().to_bytes(), engine.head());
    let branches_at_backup = engine.branches();

    let backup = dir.path().join("backup.rp");
    engine.backup(&backup).unwrap();

    // The engine is the same, and plays on.
    assert_eq!(engine.world().to_bytes(), at_backup);
    play(&mut engine, "Is Tobias in?", "In the booth.");
    tick(&mut engine, 3);
    assert!(engine.head() > head_at_backup);
    let (live, live_head) = (engine.world().to_bytes(), engine.head());
    drop(engine);

    // The backup opens as the world at the call; the save as the world played on.
    let copy = Engine::open(&backup).unwrap();
    assert_eq!(copy.head(), head_at_backup);
    assert_eq!(copy.world().to_bytes(), at_backup);
    assert_eq!(copy.branches(), branches_at_backup);
    drop(copy);
    let reopened = Engine::open(&save).unwrap();
    assert_eq!(
        (reopened.head(), reopened.world().to_bytes()),
        (live_head, live)
    );

    // A backup is a save like any other: it plays on by itself.
    let mut copy = Engine::open(&backup).unwrap();
    play(&mut copy, "Another round.", "Right away.");
    assert!(copy.head() > head_at_backup);
    assert_eq!(listing(dir.path()), ["backup.rp", "save.rp"]);
}

#[test]
fn a_backup_holds_what_eventual_commits_have_not_synced_yet() {
    let dir = tempfile::tempdir().unwrap();
    let options = EngineOptions {
        durability: Durability::Eventual,
        ..EngineOptions::default()
    };
    let (mut engine, _) = saved_tavern(dir.path(), options);
    tick(&mut engine, 5);
    play(&mut engine, "Evening.", "Evening.");
    let backup = dir.path().join("backup.rp");
    engine.backup(&backup).unwrap();
    let copy = Engine::open(&backup).unwrap();
    assert_eq!(copy.head(), engine.head());
    assert_eq!(copy.world().to_bytes(), engine.world().to_bytes());
}

#[test]
fn a_backup_keeps_every_branch_the_current_one_and_shared_history() {
    // In memory: the backup is still a file.
    let mut engine = Engine::in_memory("Branches", 0).unwrap();
    engine.load_world_file(TAVERN).unwrap();
    let start = engine.head();
    tick(&mut engine, 4);
    engine.rewind(start + 2).unwrap(); // main~2 keeps the tail
    tick(&mut engine, 3);
    engine.fork(start + 1, "side").unwrap();
    engine.switch_branch("side").unwrap();
    tick(&mut engine, 2);
    engine.switch_branch("main").unwrap();
    // main~2 loses its name; main still shares its early events.
    engine.delete_branch("main~2").unwrap();
    engine.fork(engine.head(), "late").unwrap();
    engine.switch_branch("side").unwrap();
    let before = branches_and_worlds(&mut engine);
    assert_eq!(before.len(), 3);

    let dir = tempfile::tempdir().unwrap();
    let backup = dir.path().join("branches.rp");
    engine.backup(&backup).unwrap();
    assert_eq!(
        branches_and_worlds(&mut engine),
        before,
        "the engine is unchanged"
    );

    let mut copy = Engine::open(&backup).unwrap();
    assert_eq!(copy.current_branch(), "side");
    assert_eq!(branches_and_worlds(&mut copy), before);
    for b in engine.branches() {
        engine.switch_branch(&b.name).unwrap();
        copy.switch_branch(&b.name).unwrap();
        assert_eq!(
            copy.events(1, copy.head()).unwrap(),
            engine.events(1, engine.head()).unwrap()
        );
    }
}

#[test]
fn an_exported_branch_holds_only_its_own_history() {
    let dir = tempfile::tempdir().unwrap();
    let (mut engine, save) = saved_tavern(dir.path(), EngineOptions::default());
    let start = engine.head();
    play(&mut engine, "Evening, Mira.", "Evening.");
    let fork_at = engine.head();
    play(&mut engine, "Where is Tobias?", "Gone home.");
    engine.fork(fork_at, "what-if").unwrap();
    engine.switch_branch("what-if").unwrap();
    play(&mut engine, "Tell me a story.", "Once, on the river...");
    tick(&mut engine, 2);
    let (side_world, side_head) = (engine.world().to_bytes(), engine.head());
    let side_events = engine.events(1, side_head).unwrap();
    engine.switch_branch("main").unwrap();
    tick(&mut engine, 5);
    let main_world = engine.world().to_bytes();
    let main_branches = engine.branches();

    let export = dir.path().join("what-if.rp");
    engine.export_branch("what-if", &export).unwrap();
    // The engine did not move.
    assert_eq!(engine.current_branch(), "main");
    assert_eq!(engine.world().to_bytes(), main_world);
    assert_eq!(engine.branches(), main_branches);

    // One branch, named as it was, with the branch's events from the world's creation on
    // (those shared with main included) and none of main's own.
    let copy = Engine::open(&export).unwrap();
    assert_eq!(
        copy.branches(),
        [BranchInfo {
            name: "what-if".into(),
            head: side_head,
            forked_from: None,
            current: true,
        }]
    );
    assert_eq!(copy.world().to_bytes(), side_world);
    assert_eq!(copy.events(1, side_head).unwrap(), side_events);
    assert!(side_head > fork_at && fork_at > start);
    drop(copy);
    // A snapshot at its head: opening replays nothing.
    let store = RedbStore::open(&export).unwrap();
    assert_eq!(store.snapshot_seqs(1).unwrap(), [side_head]);
    assert_eq!(store.last_seq(1).unwrap(), Some(side_head));
    drop(store);

    // The current branch exports too, from the live world; the export plays on.
    let main_export = dir.path().join("main.rp");
    engine.export_branch("main", &main_export).unwrap();
    let mut copy = Engine::open(&main_export).unwrap();
    assert_eq!(copy.world().to_bytes(), main_world);
    assert_eq!(copy.current_branch(), "main");
    play(&mut copy, "Goodnight.", "Goodnight, Wren.");
    drop(engine);
    assert_eq!(Engine::open(&save).unwrap().world().to_bytes(), main_world);
}

#[test]
fn refusals_change_nothing_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut engine, save) = saved_tavern(dir.path(), EngineOptions::default());
    play(&mut engine, "Evening.", "Evening.");
    engine.fork(2, "early").unwrap();
    let taken = dir.path().join("taken.rp");
    std::fs::write(&taken, b"not yours").unwrap();
    let plain = dir.path().join("plain.txt");
    std::fs::write(&plain, b"a file").unwrap();
    let (world, branches) = (engine.world().to_bytes(), engine.branches());
    let files = listing(dir.path());
    let save_bytes = std::fs::read(&save).unwrap();

    let cases: Vec<(PathBuf, ErrorKind, &str)> = vec![
        (taken.clone(), ErrorKind::Conflict, "exists"),
        (save.clone(), ErrorKind::Conflict, "own file"),
        (
            dir.path().join(".").join("save.rp"),
            ErrorKind::Conflict,
            "own file",
        ),
        (dir.path().to_owned(), ErrorKind::Conflict, "exists"),
        (
            dir.path().join("missing").join("b.rp"),
            ErrorKind::Storage,
            "b.rp",
        ),
        (plain.join("b.rp"), ErrorKind::Storage, "b.rp"),
        (PathBuf::new(), ErrorKind::Invalid, "names no file"),
        (dir.path().join(".."), ErrorKind::Invalid, "names no file"),
    ];
    for (path, kind, says) in &cases {
        let e = engine.backup(path).expect_err("refused");
        assert_eq!(e.kind(), *kind, "backup to {path:?}: {e}");
        assert!(e.to_string().contains(says), "backup to {path:?}: {e}");
        let e = engine.export_branch("early", path).expect_err("refused");
        assert_eq!(e.kind(), *kind, "export to {path:?}: {e}");
    }
    let e = engine
        .export_branch("nowhere", dir.path().join("n.rp"))
        .expect_err("no such branch");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains("nowhere"), "{e}");

    assert_eq!(listing(dir.path()), files, "no file made, none left behind");
    assert_eq!(std::fs::read(&taken).unwrap(), b"not yours");
    assert_eq!(engine.world().to_bytes(), world);
    assert_eq!(engine.branches(), branches);
    // The engine plays on, and its save is untouched by the refusals.
    play(&mut engine, "Still here?", "Always.");
    drop(engine);
    let reopened = Engine::open(&save).unwrap();
    assert!(reopened.head() > 0);
    assert_ne!(std::fs::read(&save).unwrap(), save_bytes, "it played on");
}

#[test]
fn a_backup_of_a_long_history_is_whole() {
    // Thousands of events and several MB (some entities carry ~1.9 MB of facts), so the copy
    // is written in several commits; snapshots along the way.
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("long.rp");
    let options = EngineOptions {
        durability: Durability::Eventual,
        snapshot_every: 500,
        ..EngineOptions::default()
    };
    let mut engine = Engine::create_with(&save, support::WORLD_NAME, 0, options).unwrap();
    for k in 0..1200 {
        let batch = support::batch(k, engine.world());
        engine.append(batch).unwrap();
    }
    engine.fork(engine.head() / 2, "halfway").unwrap();
    let head = engine.head();
    assert_eq!(head, support::head_after(1200));
    let world = engine.world().to_bytes();

    let backup = dir.path().join("long-backup.rp");
    engine.backup(&backup).unwrap();
    let export = dir.path().join("long-export.rp");
    engine.export_branch("main", &export).unwrap();
    let events = engine.events(1, head).unwrap();
    let snapshots = RedbStore::open(dir.path().join("long-backup.rp"))
        .unwrap()
        .snapshot_seqs(1)
        .unwrap();
    assert!(!snapshots.is_empty(), "the save's snapshots are copied");
    drop(engine);
    assert!(std::fs::metadata(&backup).unwrap().len() > 4 << 20);

    for path in [&backup, &export] {
        let copy = Engine::open(path).unwrap();
        assert_eq!(copy.head(), head, "{path:?}");
        assert_eq!(copy.world().to_bytes(), world, "{path:?}");
        assert_eq!(copy.events(1, head).unwrap(), events, "{path:?}");
    }
    let copy = Engine::open(&backup).unwrap();
    assert_eq!(copy.branches().len(), 2);
    let original = Engine::open(&save).unwrap();
    assert_eq!(copy.branches(), original.branches());
    assert_eq!(
        listing(dir.path()),
        ["long-backup.rp", "long-export.rp", "long.rp"]
    );
}

#[test]
fn an_old_save_backs_up_as_it_is() {
    // The format 1 fixture (docs/changes.md): its records are copied as stored, and the copy
    // opens as the original does, on every branch.
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/save-1.rp");
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("save-1.rp");
    std::fs::copy(fixture, &save).unwrap();
    let mut engine = Engine::open(&save).unwrap();
    let before = branches_and_worlds(&mut engine);
    let backup = dir.path().join("copy.rp");
    engine.backup(&backup).unwrap();
    let mut copy = Engine::open(&backup).unwrap();
    assert_eq!(copy.current_branch(), engine.current_branch());
    assert_eq!(branches_and_worlds(&mut copy), before);
    for (i, (branch, world)) in before.iter().enumerate() {
        let export = dir.path().join(format!("export-{i}.rp"));
        engine.export_branch(&branch.name, &export).unwrap();
        let one = Engine::open(&export).unwrap();
        assert_eq!(&one.world().to_bytes(), world, "{}", branch.name);
        assert_eq!(one.current_branch(), branch.name);
    }
}
