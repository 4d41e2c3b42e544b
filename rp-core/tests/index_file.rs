//! The memory index beside the save (docs/memory.md, "The index beside the save"): persisted,
//! reopened and caught up, deleted, truncated, bit-flipped, of another format or of another
//! history: every case recalls exactly what a fresh build recalls, and a damaged index never
//! stops the save from opening.

mod support;

use rp_core::memory::{IndexOrigin, RecallOptions};
use rp_core::turn::{ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::*;
use std::path::{Path, PathBuf};

const QUERIES: &[&str] = &["lights", "letter ferry", "evening", "canary marsh storm"];

/// A save of the booth with `turns` turns, closed; its path.
fn save(dir: &Path, turns: usize) -> PathBuf {
    let path = dir.join("inn.rp");
    let mut e = Engine::create(&path, "Inn", 1_000).unwrap();
    e.apply_world_file("inn.toml", support::tavern::BOOTH)
        .unwrap();
    play(&mut e, 0, turns);
    path
}

fn play(e: &mut Engine, from: usize, turns: usize) {
    let wren = e.world().resolve_entity("wren").unwrap();
    let words = [
        "lights", "letter", "ferry", "evening", "canary", "marsh", "storm",
    ];
    for t in from..from + turns {
        let now = e.world().now() + 60_000;
        let line = format!("{} and {} again, {t}", words[t % 7], words[(t * 3) % 7]);
        e.run_turn_blocking(
            TurnInput::say(wren, line, now),
            TurnOptions::default(),
            &ScriptedGenerator::new("Aye, the {heard}"),
            &mut machine::NoSink,
        )
        .unwrap();
    }
}

/// What Tobias and Wren recall for each query, ids and scores.
fn recalls(e: &mut Engine) -> Vec<Vec<(MemoryId, String)>> {
    let now = e.world().now();
    let who = [
        e.world().resolve_entity("tobias").unwrap(),
        e.world().resolve_entity("wren").unwrap(),
    ];
    let mut out = Vec::new();
    for speaker in who {
        for q in QUERIES {
            let got = e
                .recall(speaker, q, now, &RecallOptions::default())
                .unwrap()
                .into_iter()
                .map(|r| (r.id, format!("{:.4}", r.score)))
                .collect();
            out.push(got);
        }
    }
    out
}

/// The recalls of a fresh build of the save's world (in memory).
fn fresh(path: &Path) -> Vec<Vec<(MemoryId, String)>> {
    let e = Engine::open(path).unwrap();
    let mut copy = Engine::in_memory("copy", 0).unwrap();
    // The same world, in memory: the index there is always built from scratch.
    let events: Vec<Event> = e
        .events(2, e.head())
        .unwrap()
        .into_iter()
        .map(|(_, ev)| ev)
        .collect();
    drop(e);
    copy.append(events).unwrap();
    recalls(&mut copy)
}

fn sidecar(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.index", path.display()))
}

fn origin(e: &Engine) -> IndexOrigin {
    e.memory_index_origin().expect("recalled")
}

#[test]
fn the_index_is_kept_reopened_and_caught_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = save(dir.path(), 6);
    let mut e = Engine::open(&path).unwrap();
    let first = recalls(&mut e);
    // The turns that made the save recalled: the index beside it is read back.
    assert!(
        matches!(origin(&e), IndexOrigin::Loaded { .. }),
        "{:?}",
        origin(&e)
    );
    assert!(sidecar(&path).is_dir());
    play(&mut e, 6, 4);
    let played = recalls(&mut e);
    drop(e);
    // Reopened with a progress callback: the catch-up is reported, no build.
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, u64, u64)>::new()));
    let log = heard.clone();
    let options = EngineOptions {
        progress: Some(std::sync::Arc::new(move |p: &Progress| {
            log.lock()
                .unwrap()
                .push((p.phase.to_owned(), p.done, p.total));
        })),
        ..EngineOptions::default()
    };
    let mut e = Engine::open_with(&path, options).unwrap();
    assert_eq!(recalls(&mut e), played);
    let heard = heard.lock().unwrap().clone();
    let catch_up: Vec<_> = heard.iter().filter(|h| h.0 == "index.catch_up").collect();
    assert!(
        catch_up.last().is_some_and(|h| h.1 == h.2 && h.2 > 0),
        "{heard:?}"
    );
    assert!(!heard.iter().any(|h| h.0 == "index.build"), "{heard:?}");
    match origin(&e) {
        IndexOrigin::Loaded { caught_up } => assert!(caught_up > 0, "four turns to catch up"),
        other => panic!("{other:?}"),
    }
    drop(e);
    assert_eq!(fresh(&path), played);
    assert_ne!(first, played, "the later turns changed what is recalled");
}

/// Damages the index beside `path` with `damage`, then checks the save opens, recalls what a
/// fresh build does, and says the index was built again.
fn damaged(damage: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let path = save(dir.path(), 5);
    // Built afresh on the first recall, so its segments hold every memory (the one the first
    // turn built held none; later memories wait in memory for a commit).
    std::fs::remove_dir_all(sidecar(&path)).unwrap();
    let mut e = Engine::open(&path).unwrap();
    let expected = recalls(&mut e);
    drop(e);
    assert!(
        segment_files(&sidecar(&path))
            .iter()
            .any(|f| std::fs::metadata(f).unwrap().len() > 200),
        "segments with data"
    );
    damage(&sidecar(&path));
    let mut e = Engine::open(&path).unwrap();
    assert_eq!(recalls(&mut e), expected);
    assert!(
        matches!(origin(&e), IndexOrigin::Built { .. }),
        "{:?}",
        origin(&e)
    );
    drop(e);
    // And the one built again is used next time.
    let mut e = Engine::open(&path).unwrap();
    assert_eq!(recalls(&mut e), expected);
    assert!(matches!(origin(&e), IndexOrigin::Loaded { .. }));
}

/// The files of the index (not the lock or the meta).
fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            !name.starts_with('.') && !name.ends_with(".json") && !name.ends_with(".lock")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_deleted_index_is_built_again() {
    damaged(|dir| std::fs::remove_dir_all(dir).unwrap());
}

#[test]
fn a_truncated_index_is_built_again() {
    damaged(|dir| {
        let file = segment_files(dir)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).unwrap().len());
        let file = file.expect("a segment file");
        let len = std::fs::metadata(&file).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    });
}

#[test]
fn a_bit_flipped_index_is_built_again() {
    damaged(|dir| {
        for file in segment_files(dir) {
            let mut bytes = std::fs::read(&file).unwrap();
            if bytes.len() > 16 {
                let at = bytes.len() / 3;
                bytes[at] ^= 0x10;
                std::fs::write(&file, bytes).unwrap();
            }
        }
    });
}

#[test]
fn an_index_of_another_format_or_a_broken_meta_is_built_again() {
    damaged(|dir| {
        let meta = dir.join("meta.json");
        let text = std::fs::read_to_string(&meta).unwrap();
        // The format before (it kept no owner of each memory).
        assert!(text.contains("rp-memory-index/2"), "{text}");
        std::fs::write(
            &meta,
            text.replace("rp-memory-index/2", "rp-memory-index/1"),
        )
        .unwrap();
    });
    damaged(|dir| std::fs::write(dir.join("meta.json"), b"{\"half a file").unwrap());
    // A crash while the index was written can leave anything: an empty directory too.
    damaged(|dir| {
        std::fs::remove_dir_all(dir).unwrap();
        std::fs::create_dir(dir).unwrap();
    });
}

#[test]
fn after_a_rewind_or_on_another_branch_the_index_is_of_that_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = save(dir.path(), 6);
    let mut e = Engine::open(&path).unwrap();
    recalls(&mut e);
    let head = e.head();
    e.rewind(head - 20).unwrap();
    let rewound = recalls(&mut e);
    drop(e);
    let mut e = Engine::open(&path).unwrap();
    assert_eq!(recalls(&mut e), rewound);
    drop(e);
    assert_eq!(fresh(&path), rewound);
    // The old branch: its own history, not the index kept for the other.
    let mut e = Engine::open(&path).unwrap();
    let old = e
        .branches()
        .into_iter()
        .find(|b| b.name.starts_with("main~"))
        .unwrap()
        .name;
    e.switch_branch(&old).unwrap();
    let there = recalls(&mut e);
    drop(e);
    assert_eq!(fresh(&path), there);
}

#[test]
fn an_index_built_again_takes_in_each_speaker_on_its_first_recall() {
    let dir = tempfile::tempdir().unwrap();
    let path = save(dir.path(), 6);
    std::fs::remove_dir_all(sidecar(&path)).unwrap();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, u64, u64)>::new()));
    let log = heard.clone();
    let options = || {
        let log = log.clone();
        EngineOptions {
            progress: Some(std::sync::Arc::new(move |p: &Progress| {
                log.lock()
                    .unwrap()
                    .push((p.phase.to_owned(), p.done, p.total));
            })),
            ..EngineOptions::default()
        }
    };
    let builds = || -> Vec<u64> {
        let mut h = heard.lock().unwrap();
        let totals = h
            .iter()
            .filter(|p| p.0 == "index.build" && p.1 == 0)
            .map(|p| p.2)
            .collect();
        h.clear();
        totals
    };
    let payload = || std::fs::read_to_string(sidecar(&path).join("meta.json")).unwrap();
    let mut e = Engine::open_with(&path, options()).unwrap();
    let (tobias, wren) = (
        e.world().resolve_entity("tobias").unwrap(),
        e.world().resolve_entity("wren").unwrap(),
    );
    let now = e.world().now();
    e.recall(tobias, "lights", now, &RecallOptions::default())
        .unwrap();
    assert!(matches!(origin(&e), IndexOrigin::Built { .. }));
    // Only Tobias's memories were taken in, and the index beside the save says so.
    assert_eq!(builds(), [e.world().memory_count(tobias)]);
    assert!(
        payload().contains(&format!(" owners={}\"", tobias.0)),
        "{}",
        payload()
    );
    e.recall(tobias, "ferry", now, &RecallOptions::default())
        .unwrap();
    assert!(builds().is_empty(), "taken in once");
    drop(e);
    // Reopened: read back as it was, and Wren's taken in on Wren's first recall.
    let mut e = Engine::open_with(&path, options()).unwrap();
    e.recall(wren, "lights", now, &RecallOptions::default())
        .unwrap();
    assert!(
        matches!(origin(&e), IndexOrigin::Loaded { .. }),
        "{:?}",
        origin(&e)
    );
    assert_eq!(builds(), [e.world().memory_count(wren)]);
    let (low, high) = (tobias.0.min(wren.0), tobias.0.max(wren.0));
    assert!(
        payload().contains(&format!(" owners={low},{high}\"")),
        "{}",
        payload()
    );
    let got = recalls(&mut e);
    drop(e);
    assert_eq!(got, fresh(&path));
}

#[test]
fn vectors_are_found_the_same_after_the_index_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = save(dir.path(), 2);
    let mut e = Engine::open(&path).unwrap();
    let tobias = e.world().resolve_entity("tobias").unwrap();
    let vector = |i: usize| -> Vec<f32> { (0..4).map(|k| ((i * 7 + k * 3) % 5) as f32).collect() };
    for i in 0..12 {
        let mut m = memory::NewMemory::new(tobias, format!("a thought of the marsh, {i}"));
        // Every other memory has a vector.
        m.embedding = (i % 2 == 0).then(|| vector(i));
        e.add_memory(m).unwrap();
    }
    let options = RecallOptions {
        query_embedding: Some(vector(4)),
        ..RecallOptions::default()
    };
    let now = e.world().now();
    let ids = |e: &mut Engine| -> Vec<MemoryId> {
        e.recall(tobias, "marsh", now, &options)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    let before = ids(&mut e);
    assert!(!before.is_empty());
    drop(e);
    let mut e = Engine::open(&path).unwrap();
    assert_eq!(ids(&mut e), before);
    assert!(matches!(origin(&e), IndexOrigin::Loaded { .. }));
    // One more, with the vector nearest the query: found at once.
    let mut m = memory::NewMemory::new(tobias, "the marsh again");
    m.embedding = Some(vector(4));
    let id = e.add_memory(m).unwrap();
    assert_eq!(ids(&mut e)[0], id);
}
