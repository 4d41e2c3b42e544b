//! Damaged, foreign and future save files. Opening one must give a clear error (never a panic
//! or an abort) naming the file, and the seq where a record is at fault, and must leave the
//! file on disk byte for byte as it was. Damage that happens to hit unused space may open, but
//! then the save must read back exactly as written.

mod support;

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use rp_core::log::FORMAT_VERSION;
use rp_core::{Engine, Error, ErrorKind};
use std::path::{Path, PathBuf};
use support::{Reference, Rng, WORLD_NAME, batch, options};

const EVENTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_events");
const SNAPSHOTS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("rp_snapshots");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("rp_meta");
const PARTS: TableDefinition<(u64, u64, u32), &[u8]> = TableDefinition::new("rp_snapshot_parts");
const MAIN_BRANCH: u64 = 1;

/// Turns in the sample save.
const TURNS: u64 = 16;

/// Writes a save holding batches `0..TURNS` (with snapshots every `snapshot_every` events, 0:
/// none) at `dir/name` and returns its path.
fn sample_save(dir: &Path, name: &str, snapshot_every: u64) -> PathBuf {
    let path = dir.join(name);
    let mut engine =
        Engine::create_with(&path, WORLD_NAME, 0, options(snapshot_every)).expect("create");
    for k in 0..TURNS {
        let events = batch(k, engine.world());
        engine.append(events).expect("append");
    }
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read the file")
}

/// What opening a damaged file came to.
enum Outcome {
    /// A clean error.
    Error(Error),
    /// The damage missed everything that matters: the save reads back as written.
    Intact,
}

/// Opens `path` with `Engine::open` and reads everything in it, comparing with `reference`
/// (which must hold `TURNS` batches). Checks that any error names the file, that the content,
/// if it opens, is exactly what was written, and that the file is untouched.
fn open_damaged(path: &Path, reference: &mut Reference, ctx: &str) -> Outcome {
    let before = read(path);
    let name = path.display().to_string();
    let outcome = match Engine::open(path) {
        Err(e) => Outcome::Error(e),
        Ok(engine) => match engine.events(1, engine.head()) {
            Err(e) => Outcome::Error(e),
            Ok(_) => {
                // Opened and readable: then it must be exactly the save that was written.
                match reference.try_check(&engine) {
                    Ok(TURNS) => Outcome::Intact,
                    Ok(m) => panic!(
                        "{ctx}: the damaged file opened holding {m} batches instead of {TURNS}"
                    ),
                    Err(e) => panic!("{ctx}: the damaged file opened with wrong content: {e}"),
                }
            }
        },
    };
    // A rejected file is never modified. A file that opens is the engine's to write (it takes
    // write access and its lock when it accepts a save), and its content was checked above.
    if let Outcome::Error(e) = &outcome {
        support::assert_names_file(e, &name, ctx);
        assert!(
            read(path) == before,
            "{ctx}: opening the file modified it (the open failed: {e})"
        );
    }
    outcome
}

/// Opens a file that must be rejected with one of `kinds`; returns the error.
fn open_rejected(path: &Path, kinds: &[ErrorKind], ctx: &str) -> Error {
    let before = read(path);
    let name = path.display().to_string();
    let e = match Engine::open(path) {
        Ok(engine) => panic!("{ctx}: opened (head {})", engine.head()),
        Err(e) => e,
    };
    assert!(kinds.contains(&e.kind()), "{ctx}: wrong kind: {e}");
    support::assert_names_file(&e, &name, ctx);
    assert!(
        read(path) == before,
        "{ctx}: opening the file modified it (the open failed: {e})"
    );
    e
}

#[test]
fn truncated_saves_are_rejected_at_every_length() {
    let seed = support::seed("truncated_saves_are_rejected_at_every_length");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let original = read(&sample_save(dir.path(), "whole.rp", 20));
    let len = original.len();
    let mut lengths: Vec<usize> = vec![0, 1, 8, 9, 100, 511, 512, 513, len - 1, len - 4096];
    lengths.extend((4096..len).step_by(4096));
    lengths.extend((0..40).map(|_| rng.index(len)));
    lengths.sort_unstable();
    lengths.dedup();
    let mut reference = Reference::new();
    let mut errors = std::collections::BTreeMap::<String, usize>::new();
    for (i, &n) in lengths.iter().enumerate() {
        let path = dir.path().join(format!("truncated-{i}.rp"));
        std::fs::write(&path, &original[..n]).expect("write");
        let ctx = format!("seed {seed}: save truncated to {n} of {len} bytes");
        match open_damaged(&path, &mut reference, &ctx) {
            Outcome::Error(e) => {
                // Damaged (or, cut before the signature ends, not a save at all): not an I/O
                // failure, which would send the user looking for a disk problem.
                assert!(
                    matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::NotASave),
                    "{ctx}: wrong kind: {e}"
                );
                *errors.entry(e.kind().to_string()).or_default() += 1
            }
            Outcome::Intact => panic!("{ctx}: a truncated save opened as if whole"),
        }
        std::fs::remove_file(&path).expect("remove");
    }
    eprintln!("{} lengths: {errors:?}", lengths.len());
}

/// Where each stored event record of the sample save sits in the file: (offset, length, seq).
fn record_spans(bytes: &[u8], path: &Path) -> Vec<(usize, usize, u64)> {
    let engine = Engine::open(path).expect("open the sample");
    let events = engine.events(1, engine.head()).expect("events");
    drop(engine);
    let mut spans = Vec::new();
    for (seq, e) in events {
        let record = rp_core::log::codec::encode_event(&e);
        // Long records span pages (possibly not contiguously); their first 256 bytes will do.
        let needle = &record[..record.len().min(256)];
        if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
            spans.push((at, needle.len(), seq));
        }
    }
    spans
}

#[test]
fn bit_flips_give_a_clean_error_or_an_intact_save() {
    let seed = support::seed("bit_flips_give_a_clean_error_or_an_intact_save");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    // No snapshots: every event record is read when the save opens.
    let sample = sample_save(dir.path(), "sample.rp", 0);
    let original = read(&sample);
    let spans = record_spans(&original, &sample);
    assert!(
        spans.len() as u64 > TURNS,
        "found only {} of the records in the file",
        spans.len()
    );
    // Pages in use (any non-zero byte).
    let used: Vec<usize> = (0..original.len() / 4096)
        .filter(|p| original[p * 4096..(p + 1) * 4096].iter().any(|b| *b != 0))
        .collect();

    // (bit, what, the seq of the record it is in)
    let mut flips: Vec<(usize, String, Option<u64>)> = Vec::new();
    // In our records: every one of them, header and body.
    for &(at, len, seq) in &spans {
        for _ in 0..3 {
            let bit = rng.index(len * 8);
            let what = format!("the record of seq {seq}, byte {}", bit / 8);
            flips.push((at * 8 + bit, what, Some(seq)));
        }
    }
    // In the redb header and the pages in use.
    for _ in 0..40 {
        flips.push((rng.index(512 * 8), "the redb header".into(), None));
    }
    for _ in 0..150 {
        let page = used[rng.index(used.len())];
        let bit = page * 4096 * 8 + rng.index(4096 * 8);
        flips.push((bit, format!("page {page}"), None));
    }

    let mut reference = Reference::new();
    let mut errors = std::collections::BTreeMap::<String, usize>::new();
    let mut intact = 0;
    for (i, (bit, what, seq)) in flips.iter().enumerate() {
        let mut bytes = original.clone();
        bytes[bit / 8] ^= 1 << (bit % 8);
        let path = dir.path().join(format!("flip-{i}.rp"));
        std::fs::write(&path, &bytes).expect("write");
        let ctx = format!(
            "seed {seed}: bit {} of byte {} ({what}) flipped",
            bit % 8,
            bit / 8
        );
        match open_damaged(&path, &mut reference, &ctx) {
            Outcome::Error(e) => {
                if let Some(seq) = seq {
                    // Our checksum catches it, and says where.
                    let msg = e.to_string();
                    assert!(
                        msg.contains(&format!("seq {seq}")),
                        "{ctx}: the error does not name seq {seq}: {msg}"
                    );
                }
                *errors.entry(e.kind().to_string()).or_default() += 1;
            }
            Outcome::Intact => {
                assert!(seq.is_none(), "{ctx}: a damaged record went unnoticed");
                intact += 1;
            }
        }
        std::fs::remove_file(&path).expect("remove");
    }
    eprintln!(
        "{} flips: {intact} harmless, errors {errors:?}",
        flips.len()
    );
}

/// Rewrites one record of a save directly with redb.
fn rewrite_record(path: &Path, table: &str, edit: impl FnOnce(&mut Vec<u8>)) {
    let db = redb::Database::open(path).expect("open with redb");
    let txn = db.begin_write().expect("write txn");
    {
        match table {
            "rp_meta" => {
                let mut t = txn.open_table(META).expect("rp_meta");
                let mut bytes = t.get("meta").expect("get").expect("meta").value().to_vec();
                edit(&mut bytes);
                t.insert("meta", bytes.as_slice()).expect("insert");
            }
            events_or_snapshots => {
                let def = if events_or_snapshots == "rp_events" {
                    EVENTS
                } else {
                    SNAPSHOTS
                };
                let mut t = txn.open_table(def).expect("table");
                let (key, mut bytes) = {
                    let (k, v) = t.last().expect("last").expect("a record");
                    (k.value(), v.value().to_vec())
                };
                if bytes.starts_with(b"RPPARTS\0") {
                    // A large snapshot, stored in parts: the record is their concatenation.
                    let mut parts = txn.open_table(PARTS).expect("parts");
                    let range = (key.0, key.1, 0)..=(key.0, key.1, u32::MAX);
                    let old: Vec<Vec<u8>> = parts
                        .range(range)
                        .expect("range")
                        .map(|r| r.expect("part").1.value().to_vec())
                        .collect();
                    let mut record = old.concat();
                    edit(&mut record);
                    assert_eq!(record.len(), old.iter().map(Vec::len).sum::<usize>());
                    let mut at = 0;
                    for (i, part) in (0u32..).zip(&old) {
                        let new = &record[at..at + part.len()];
                        parts.insert((key.0, key.1, i), new).expect("insert");
                        at += part.len();
                    }
                } else {
                    edit(&mut bytes);
                    t.insert(key, bytes.as_slice()).expect("insert");
                }
            }
        }
    }
    txn.commit().expect("commit");
}

/// Replaces the record of `seq` in `rp_events` with `bytes`.
fn replace_event(path: &Path, seq: u64, bytes: &[u8]) {
    let db = redb::Database::open(path).expect("open with redb");
    let txn = db.begin_write().expect("write txn");
    {
        let mut t = txn.open_table(EVENTS).expect("rp_events");
        assert!(t.get((MAIN_BRANCH, seq)).expect("get").is_some());
        t.insert((MAIN_BRANCH, seq), bytes).expect("insert");
    }
    txn.commit().expect("commit");
}

fn head_of(path: &Path) -> u64 {
    let db = redb::ReadOnlyDatabase::open(path).expect("open with redb");
    let txn = db.begin_read().expect("read txn");
    let t = txn.open_table(EVENTS).expect("rp_events");
    let last = t.last().expect("last").expect("a record");
    last.0.value().1
}

/// Rewrites a record as a newer build would write it: the next format version, with the
/// header's checksum (over version and body) recomputed.
fn bump_version(bytes: &mut [u8]) {
    assert_eq!(&bytes[..2], b"rp");
    let v = u16::from_le_bytes([bytes[2], bytes[3]]);
    assert_eq!(v, FORMAT_VERSION);
    bytes[2..4].copy_from_slice(&(v + 1).to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[2..4]);
    h.update(&bytes[8..]);
    let crc = h.finalize();
    bytes[4..8].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn a_future_format_version_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let future = FORMAT_VERSION + 1;

    // The last event (replayed when the save opens).
    let path = sample_save(dir.path(), "future-event.rp", 0);
    let head = head_of(&path);
    rewrite_record(&path, "rp_events", |b| bump_version(b));
    let e = open_rejected(&path, &[ErrorKind::UnsupportedVersion], "future event");
    let msg = e.to_string();
    assert!(msg.contains(&future.to_string()), "no version in: {msg}");
    assert!(
        msg.contains(&format!("seq {head}")),
        "the error does not name seq {head}: {msg}"
    );

    // The metadata record.
    let path = sample_save(dir.path(), "future-meta.rp", 0);
    rewrite_record(&path, "rp_meta", |b| bump_version(b));
    let e = open_rejected(&path, &[ErrorKind::UnsupportedVersion], "future metadata");
    assert!(e.to_string().contains(&future.to_string()), "{e}");

    // The latest snapshot.
    let path = sample_save(dir.path(), "future-snapshot.rp", 10);
    rewrite_record(&path, "rp_snapshots", |b| bump_version(b));
    let e = open_rejected(&path, &[ErrorKind::UnsupportedVersion], "future snapshot");
    assert!(e.to_string().contains(&future.to_string()), "{e}");

    // An event covered by a snapshot: the save opens, reading that event fails.
    let path = sample_save(dir.path(), "future-old-event.rp", 10);
    let before = {
        let db = redb::Database::open(&path).expect("open with redb");
        let txn = db.begin_write().expect("write txn");
        {
            let mut t = txn.open_table(EVENTS).expect("rp_events");
            let mut bytes = t
                .get((MAIN_BRANCH, 3))
                .expect("get")
                .expect("seq 3")
                .value()
                .to_vec();
            bump_version(&mut bytes);
            t.insert((MAIN_BRANCH, 3), bytes.as_slice())
                .expect("insert");
        }
        txn.commit().expect("commit");
        drop(db);
        read(&path)
    };
    let engine = Engine::open(&path).expect("the snapshot covers seq 3");
    let e = engine
        .events(1, engine.head())
        .expect_err("reading seq 3 must fail");
    assert_eq!(e.kind(), ErrorKind::UnsupportedVersion, "{e}");
    support::assert_names_file(&e, &path.display().to_string(), "future old event");
    assert!(
        e.to_string().contains("seq 3"),
        "the error does not name seq 3: {e}"
    );
    let head = engine.head();
    drop(engine);
    // The save was accepted (its snapshot covers the unreadable record), so the engine took
    // write access; the file still opens the same way.
    let _ = before;
    let again = Engine::open(&path).expect("reopen");
    assert_eq!(again.head(), head);
    assert_eq!(
        again.events(1, head).unwrap_err().kind(),
        ErrorKind::UnsupportedVersion
    );
}

#[test]
fn files_that_are_not_saves_are_rejected() {
    let seed = support::seed("files_that_are_not_saves_are_rejected");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let not_a_save = [ErrorKind::NotASave];

    let path = dir.path().join("empty.rp");
    std::fs::write(&path, b"").expect("write");
    open_rejected(&path, &not_a_save, "an empty file");

    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "Dear diary,\nthe tavern was quiet tonight.\n").expect("write");
    open_rejected(&path, &not_a_save, "a text file");

    for (i, len) in [3usize, 9, 4096, 70_000].into_iter().enumerate() {
        let path = dir.path().join(format!("random-{i}.rp"));
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        std::fs::write(&path, &bytes).expect("write");
        open_rejected(
            &path,
            &not_a_save,
            &format!("seed {seed}: {len} random bytes"),
        );
    }

    // A redb database of someone else's.
    let path = dir.path().join("other.redb");
    {
        let db = redb::Database::create(&path).expect("create");
        let txn = db.begin_write().expect("write txn");
        {
            let def: TableDefinition<u64, &str> = TableDefinition::new("inventory");
            let mut t = txn.open_table(def).expect("table");
            t.insert(1, "a lantern").expect("insert");
        }
        txn.commit().expect("commit");
    }
    open_rejected(&path, &not_a_save, "a redb database without our tables");

    // An empty redb database.
    let path = dir.path().join("empty.redb");
    drop(redb::Database::create(&path).expect("create"));
    open_rejected(&path, &not_a_save, "an empty redb database");

    // A file that does not exist.
    let path = dir.path().join("missing.rp");
    let e = Engine::open(&path).expect_err("no such file");
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    support::assert_names_file(&e, &path.display().to_string(), "a missing file");
    assert!(!path.exists(), "opening a missing file created it");
}

/// A record with a valid header and checksum around `body`.
fn record(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(b"rp");
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

fn fixstr(s: &str) -> Vec<u8> {
    assert!(s.len() < 32);
    let mut out = vec![0xa0 | s.len() as u8];
    out.extend_from_slice(s.as_bytes());
    out
}

/// Hostile MessagePack bodies, each with a name.
fn hostile_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let mut deep = vec![0x91u8; 200_000];
    deep.push(0xc0);
    let mut deep_maps = Vec::new();
    for _ in 0..100_000 {
        deep_maps.push(0x81);
        deep_maps.extend(fixstr("a"));
    }
    deep_maps.push(0xc0);
    // { "time_advanced": [[[[...]]]] }
    let mut deep_in_event = vec![0x81];
    deep_in_event.extend(fixstr("time_advanced"));
    deep_in_event.extend(std::iter::repeat_n(0x91u8, 100_000));
    deep_in_event.push(0x01);
    // { "entity_created": { "name": <str32 of 4 GiB> } }
    let mut str_bomb_in_event = vec![0x81];
    str_bomb_in_event.extend(fixstr("entity_created"));
    str_bomb_in_event.push(0x81);
    str_bomb_in_event.extend(fixstr("name"));
    str_bomb_in_event.extend([0xdb, 0xff, 0xff, 0xff, 0xff]);
    // { "entity_created": { "aliases": <array32 of 4G elements> } }
    let mut array_bomb_in_event = vec![0x81];
    array_bomb_in_event.extend(fixstr("entity_created"));
    array_bomb_in_event.push(0x81);
    array_bomb_in_event.extend(fixstr("aliases"));
    array_bomb_in_event.extend([0xdd, 0xff, 0xff, 0xff, 0xff, 0xa1, b'x']);
    vec![
        ("200k nested arrays", deep),
        ("100k nested maps", deep_maps),
        ("100k nested arrays inside an event", deep_in_event),
        (
            "an array claiming 4G elements",
            vec![0xdd, 0xff, 0xff, 0xff, 0xff],
        ),
        (
            "a map claiming 4G entries",
            vec![0xdf, 0xff, 0xff, 0xff, 0xff],
        ),
        (
            "a string claiming 4 GiB",
            vec![0xdb, 0xff, 0xff, 0xff, 0xff],
        ),
        ("binary claiming 4 GiB", vec![0xc6, 0xff, 0xff, 0xff, 0xff]),
        (
            "an ext claiming 4 GiB",
            vec![0xc9, 0xff, 0xff, 0xff, 0xff, 0x01],
        ),
        ("a 4 GiB name inside an event", str_bomb_in_event),
        ("4G aliases inside an event", array_bomb_in_event),
        ("the reserved marker 0xc1", vec![0xc1]),
        ("nothing at all", vec![]),
    ]
}

#[test]
fn hostile_msgpack_in_a_well_formed_record_is_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let template = sample_save(dir.path(), "template.rp", 0);
    let head = head_of(&template);
    for (i, (what, body)) in hostile_bodies().into_iter().enumerate() {
        for seq in [2, head] {
            let path = dir.path().join(format!("hostile-{i}-{seq}.rp"));
            std::fs::copy(&template, &path).expect("copy");
            replace_event(&path, seq, &record(&body));
            let ctx = format!("{what} as the record of seq {seq}");
            let e = open_rejected(&path, &[ErrorKind::Corrupt], &ctx);
            assert!(
                e.to_string().contains(&format!("seq {seq}")),
                "{ctx}: the error does not name seq {seq}: {e}"
            );
            std::fs::remove_file(&path).expect("remove");
        }
        // As the metadata record.
        let path = dir.path().join(format!("hostile-{i}-meta.rp"));
        std::fs::copy(&template, &path).expect("copy");
        rewrite_record(&path, "rp_meta", |bytes| *bytes = record(&body));
        open_rejected(
            &path,
            &[ErrorKind::Corrupt],
            &format!("{what} as the metadata"),
        );
        std::fs::remove_file(&path).expect("remove");
    }
}

/// Damage can make redb lose the last entries of a table without any error of its own (a
/// leaf's entry count, say). The save keeps each branch's head apart from the log, so a log
/// that lost its end is reported, not opened as an earlier save.
#[test]
fn a_log_that_lost_its_end_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = sample_save(dir.path(), "lost-end.rp", 0);
    let head = Engine::open(&path).expect("open").head();
    {
        let db = redb::Database::open(&path).expect("redb open");
        let txn = db.begin_write().expect("write");
        {
            let mut events = txn.open_table(EVENTS).expect("events");
            for seq in head - 2..=head {
                events.remove((MAIN_BRANCH, seq)).expect("remove");
            }
        }
        txn.commit().expect("commit");
    }
    let e = open_rejected(&path, &[ErrorKind::Corrupt], "three events cut off the end");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("written up to seq {head}"))
            && msg.contains(&format!("holds seq {}", head - 3)),
        "{msg}"
    );
}
