//! Replay and open at 1M events (DESIGN §10).
//!
//! One synthetic log of 1M events (a world of 10k entities, then 10-event turns) is built once,
//! checked event by event, encoded, and written to a save file (no snapshots) and to SQLite.
//!
//! Before criterion, one measured pass each (the breakdown): `decode_event` alone and
//! `World::apply` alone from records in RAM, then apply by event kind; the snapshot's size by
//! part.
//!
//! Replay (`replay_1m`), each a full pass over the log:
//! - `redb_read_raw` / `sqlite_read_raw`: open and read every record, nothing else;
//! - `redb_read_decode_apply` / `sqlite_read_decode_apply`: read, then the same decode + apply;
//! - `engine_open_full_replay`: `Engine::open_with` on the save without snapshots (then, untimed,
//!   waiting for the schedule of what fades when, which is built after the replay).
//!
//! Open (`open_from_snapshot`): `Engine::open_with` on copies of the save holding a snapshot,
//! with `snapshot_every = 10_000` in mind: at the head (tail 0, the best case) and 9,999 events
//! before it (the worst case); plus its parts: `redb_read_snapshot` (open the file and read
//! the snapshot record) and `decode_snapshot` (decode and reindex).
//!
//! All files are in the page cache (just written): these are warm-cache figures.

use criterion::{Criterion, SamplingMode};
use rp_benches::*;
use rp_core::log::codec::{decode_event, decode_snapshot, encode_snapshot};
use rp_core::store::{RedbStore, Store};
use rp_core::{Engine, Event, Seq, World};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SEED: u64 = 0x5eed_0003;

fn apply_record(world: &mut World, bytes: &[u8]) {
    let event = decode_event(bytes, "bench").expect("decode");
    // As the engine replays: by value, so what the world keeps is moved, not copied.
    world.apply_owned(event).expect("apply");
}

fn redb_read(path: &Path, total: Seq, mut visit: impl FnMut(&[u8])) {
    let store = RedbStore::open(path).expect("open");
    let branch = main_branch(&store);
    store
        .read_events(branch, 1, total, &mut |_, b| {
            visit(b);
            Ok(())
        })
        .expect("read");
}

fn sqlite_read(path: &Path, mut visit: impl FnMut(&[u8])) {
    let log = SqliteLog::open(path, SqliteSync::Off);
    log.read(1, |_, b| visit(b));
}

struct Files {
    save: PathBuf,
    sqlite: PathBuf,
    tail0: PathBuf,
    tail_worst: PathBuf,
}

/// Waits, untimed, for what a loaded world builds on another thread after its open (what
/// fades when), so it does not run into the next pass's timing.
fn settle(world: &World) {
    std::hint::black_box(world.next_fading_after(0));
    wait_for_background();
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(scaled(5, 1)))
        .configure_from_args();
    let dir = tempfile::tempdir().expect("temp dir");
    let total: usize = scaled(1_000_000, 20_000);
    let every: Seq = scaled(10_000, 1_000);
    let shape = WorldShape::new(scaled(10_000, 200));
    let worst_seq = total as Seq - (every - 1);

    // Setup, once.
    let (log, t_gen) = time(|| build_log(shape, total, SEED, &[worst_seq]));
    let files = Files {
        save: dir.path().join("replay.rp"),
        sqlite: dir.path().join("replay.sqlite"),
        tail0: dir.path().join("tail0.rp"),
        tail_worst: dir.path().join("tail_worst.rp"),
    };
    let (_, t_redb) = time(|| write_save(&files.save, &log));
    let (_, t_sqlite) = time(|| {
        let mut s = SqliteLog::open(&files.sqlite, SqliteSync::Off);
        for (i, chunk) in log.records.chunks(50_000).enumerate() {
            s.append(1, 1 + (i * 50_000) as Seq, chunk);
        }
        s.checkpoint();
    });
    std::fs::copy(&files.save, &files.tail0).expect("copy");
    std::fs::copy(&files.save, &files.tail_worst).expect("copy");
    let size_tail0 = add_snapshots(&files.tail0, &[(total as Seq, &log.last)])[0];
    let worst_world = &log.worlds[0].1;
    let size_worst = add_snapshots(&files.tail_worst, &[(worst_seq, worst_world)])[0];
    let snapshot = encode_snapshot(&log.last);
    let world = &log.last;
    report(format!(
        "replay setup: {total} events ({} bytes encoded, mean {} bytes/event), world of {} entities, {} edges, {} memories",
        log.bytes,
        log.bytes / total,
        world.entities().count(),
        world.edges().count(),
        world.all_memories().count(),
    ));
    report(format!(
        "replay setup: generate+check+encode {:.2} s, write save {:.2} s ({} bytes), write sqlite {:.2} s ({} bytes)",
        t_gen.as_secs_f64(),
        t_redb.as_secs_f64(),
        file_size(&files.save),
        t_sqlite.as_secs_f64(),
        file_size(&files.sqlite),
    ));
    report(format!(
        "snapshot size: {size_tail0} bytes at seq {total} (head); {size_worst} bytes at seq {worst_seq}"
    ));

    snapshot_parts(&log.last);
    report(format!("replay: load average before {}", loadavg()));
    breakdown(&log.records);

    let total_seq = total as Seq;
    type Pass<'a> = Box<dyn Fn() -> Elapsed + 'a>;
    let passes: Vec<(&'static str, Pass)> = vec![
        (
            "redb_read_raw",
            Box::new(|| {
                let sw = Stopwatch::start();
                let mut n = 0usize;
                redb_read(&files.save, total_seq, |b| n += b.len());
                let d = sw.stop();
                assert_eq!(n, log.bytes);
                d
            }),
        ),
        (
            "redb_read_decode_apply",
            Box::new(|| {
                let sw = Stopwatch::start();
                let mut w = World::new();
                redb_read(&files.save, total_seq, |b| apply_record(&mut w, b));
                let d = sw.stop();
                assert_eq!(w.seq(), total_seq);
                d
            }),
        ),
        (
            "sqlite_read_raw",
            Box::new(|| {
                let sw = Stopwatch::start();
                let mut n = 0usize;
                sqlite_read(&files.sqlite, |b| n += b.len());
                let d = sw.stop();
                assert_eq!(n, log.bytes);
                d
            }),
        ),
        (
            "sqlite_read_decode_apply",
            Box::new(|| {
                let sw = Stopwatch::start();
                let mut w = World::new();
                sqlite_read(&files.sqlite, |b| apply_record(&mut w, b));
                let d = sw.stop();
                assert_eq!(w.seq(), total_seq);
                d
            }),
        ),
        (
            "engine_open_full_replay",
            Box::new(|| {
                let sw = Stopwatch::start();
                let e = Engine::open_with(&files.save, setup_options()).expect("open");
                let d = sw.stop();
                assert_eq!(e.head(), total_seq);
                settle(e.world());
                d
            }),
        ),
    ];
    let opens: Vec<(&'static str, Pass)> = vec![
        (
            "engine_open_tail0",
            Box::new(|| {
                let sw = Stopwatch::start();
                let e = Engine::open_with(&files.tail0, setup_options()).expect("open");
                let d = sw.stop();
                assert_eq!(e.head(), total_seq);
                settle(e.world());
                d
            }),
        ),
        (
            "engine_open_tail_worst",
            Box::new(|| {
                let sw = Stopwatch::start();
                let e = Engine::open_with(&files.tail_worst, setup_options()).expect("open");
                let d = sw.stop();
                assert_eq!(e.head(), total_seq);
                settle(e.world());
                d
            }),
        ),
        (
            "redb_read_snapshot",
            Box::new(|| {
                let sw = Stopwatch::start();
                let store = RedbStore::open(&files.tail0).expect("open");
                let branch = main_branch(&store);
                let snap = store
                    .latest_snapshot(branch, 0, Seq::MAX)
                    .expect("read")
                    .expect("a snapshot");
                let d = sw.stop();
                assert_eq!(snap.1.len(), snapshot.len());
                d
            }),
        ),
        (
            "decode_snapshot",
            Box::new(|| {
                let sw = Stopwatch::start();
                let w = decode_snapshot(&snapshot, "bench").expect("decode");
                let d = sw.stop();
                assert_eq!(w.seq(), total_seq);
                settle(&w);
                d
            }),
        ),
    ];

    // Criterion runs each pass; every run is also kept, wall and CPU, for the medians.
    let mut medians: BTreeMap<&'static str, (Duration, Duration)> = BTreeMap::new();
    for (group, list, flat) in [
        ("replay_1m", &passes, true),
        ("open_from_snapshot", &opens, false),
    ] {
        let mut g = c.benchmark_group(group);
        if flat {
            g.sampling_mode(SamplingMode::Flat);
        }
        for (name, pass) in list.iter() {
            let mut samples: Vec<Elapsed> = Vec::new();
            g.bench_function(*name, |b| {
                b.iter_custom(|iters| {
                    let mut sum = Duration::ZERO;
                    for _ in 0..iters {
                        let d = pass();
                        samples.push(d);
                        sum += d.wall;
                    }
                    sum
                })
            });
            if !samples.is_empty() {
                let wall: Vec<_> = samples.iter().map(|e| e.wall).collect();
                let cpu: Vec<_> = samples.iter().map(|e| e.cpu).collect();
                medians.insert(name, (Latency::of(&wall).p50, Latency::of(&cpu).p50));
            }
        }
        g.finish();
    }
    c.final_summary();
    report(format!("replay: load average after {}", loadavg()));

    let per_event = |d: Duration| d.as_secs_f64() * 1e9 / total as f64;
    let ratio = |a: &str, b: &str| match (medians.get(a), medians.get(b)) {
        (Some(x), Some(y)) => format!(
            "{:.2} (cpu {:.2})",
            x.0.as_secs_f64() / y.0.as_secs_f64(),
            x.1.as_secs_f64() / y.1.as_secs_f64()
        ),
        _ => "n/a".into(),
    };
    report(format!(
        "replay_1m: {total} events, median of the criterion samples, wall (thread cpu)"
    ));
    for (name, _) in &passes {
        if let Some((wall, cpu)) = medians.get(name) {
            report(format!(
                "replay_1m {name:<25} {:>9} ms ({:>9} ms cpu)  {:>6.0} ns/event ({:>6.0} cpu)",
                ms(*wall),
                ms(*cpu),
                per_event(*wall),
                per_event(*cpu)
            ));
        }
    }
    report(format!(
        "replay_1m ratios: redb/sqlite raw read {}; redb/sqlite read+decode+apply {}; engine open / redb read+decode+apply {}",
        ratio("redb_read_raw", "sqlite_read_raw"),
        ratio("redb_read_decode_apply", "sqlite_read_decode_apply"),
        ratio("engine_open_full_replay", "redb_read_decode_apply"),
    ));
    for (name, _) in &opens {
        if let Some((wall, cpu)) = medians.get(name) {
            report(format!(
                "open_from_snapshot {name:<25} {:>9} ms ({:>9} ms cpu)",
                ms(*wall),
                ms(*cpu)
            ));
        }
    }
    report(format!(
        "open_from_snapshot: snapshot {size_tail0} bytes (tail 0), {size_worst} bytes (tail {} events, snapshot_every {every})",
        every - 1
    ));
}

/// Where replay time goes: decode alone, apply alone (by reference, and by value as replay
/// does), and apply by event kind (each apply by value timed on its own, so the per-kind
/// figures carry ~20-40 ns of timer overhead each).
fn breakdown(records: &[Vec<u8>]) {
    let n = records.len() as f64;
    let sw = Stopwatch::start();
    let events: Vec<Event> = records
        .iter()
        .map(|r| decode_event(r, "bench").expect("decode"))
        .collect();
    let decode = sw.stop();
    let mut w = World::new();
    let sw = Stopwatch::start();
    for e in &events {
        w.apply(e).expect("apply");
    }
    let apply = sw.stop();
    drop(w);
    let mut w = World::new();
    let mut kinds: BTreeMap<&'static str, (usize, Duration)> = BTreeMap::new();
    let sw = Stopwatch::start();
    for e in events {
        let kind = e.kind();
        let start = Instant::now();
        w.apply_owned(e).expect("apply");
        let d = start.elapsed();
        let k = kinds.entry(kind).or_default();
        k.0 += 1;
        k.1 += d;
    }
    let owned = sw.stop();
    report(format!(
        "replay breakdown: decode only {:.0} ns/event ({:.0} cpu); apply only, by reference {:.0} ns/event ({:.0} cpu), by value (as replay does, timer per event included) {:.0} ns/event ({:.0} cpu)",
        decode.wall.as_secs_f64() * 1e9 / n,
        decode.cpu.as_secs_f64() * 1e9 / n,
        apply.wall.as_secs_f64() * 1e9 / n,
        apply.cpu.as_secs_f64() * 1e9 / n,
        owned.wall.as_secs_f64() * 1e9 / n,
        owned.cpu.as_secs_f64() * 1e9 / n,
    ));
    let timed: Duration = kinds.values().map(|k| k.1).sum();
    for (kind, (count, d)) in kinds {
        report(format!(
            "replay breakdown: apply {kind:<22} {count:>8} events {:>7.0} ns/event {:>5.1}% of apply",
            d.as_secs_f64() * 1e9 / count as f64,
            d.as_secs_f64() / timed.as_secs_f64() * 100.0
        ));
    }
}

/// What a snapshot is made of: the encoded size of each kind of record, and the time to
/// compile every entity's fact sheet (which loading a snapshot redoes).
fn snapshot_parts(world: &World) {
    macro_rules! size {
        ($items:expr) => {
            rmp_serde::to_vec_named(&$items.collect::<Vec<_>>())
                .expect("encode")
                .len()
        };
    }
    report(format!(
        "snapshot parts (bytes): entities {}, edges {}, memories {}, dialogue {}, containers {}",
        size!(world.entities()),
        size!(world.edges()),
        size!(world.all_memories()),
        size!(world.dialogue()),
        size!(world.containers()),
    ));
    let sw = Stopwatch::start();
    for e in world.entities() {
        rp_core::facts::compile_sheet(e.facts.lines()).expect("sheet");
    }
    let d = sw.stop();
    report(format!(
        "snapshot load redoes: compiling {} fact sheets {} ms ({} ms cpu)",
        world.entities().count(),
        ms(d.wall),
        ms(d.cpu)
    ));
}
