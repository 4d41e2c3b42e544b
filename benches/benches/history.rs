//! What did X believe at time T (issue 20, items 7 and 10; docs/history.md): `beliefs_at` and
//! `memories_at` at random points of a 1M-event log; target p99 ≤ 20 ms for `beliefs_at`.
//!
//! Setup: the synthetic log of `replay_open` (a world of 10k entities, then 10-event turns in
//! which lines are heard, so every character's beliefs about who it heard move), written to a
//! save with one snapshot at the head (what the engine would keep), opened with
//! `Engine::open_with`.
//!
//! Then, for each history configuration (the default `HistoryOptions`, whose `beliefs_at`
//! reads the index of past beliefs, and the same without the index, the baseline, whose
//! `beliefs_at` rebuilds the world from a checkpoint as `memories_at` does):
//! - `cold`: the first question about the past, at the seq before the head: nothing is kept yet,
//!   so it replays the log from the start (no snapshot lies before it) and keeps checkpoints
//!   (and, with the index, the versions of every event) on the way; every later question is
//!   answered from them;
//! - `beliefs_at` and `memories_at` at uniformly random seqs and random entities (the same
//!   points for both), and `beliefs_at` at random host times: p50, p99, max, one call each;
//! - the memory the history holds: the bytes live after the cold question and the timed ones
//!   minus the bytes live before them (a counting allocator wraps the system's), how many
//!   checkpoints there are and how many versions the index keeps; the same right after the cold
//!   question, which keeps the same checkpoints in both configurations: the difference there is
//!   the index's own bytes.
//!
//! `cargo test --benches` runs it small (20k events, 200 entities) as a smoke test.

use rp_benches::*;
use rp_core::{AsOf, Engine, EntityId, HistoryOptions, Millis, Seq};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is the one `System.alloc` needs.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout` (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: `ptr` was allocated by `System` with `layout`; the caller's contract holds.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

const SEED: u64 = 0x5eed_0007;

/// One random question: a seq of the log and an entity that existed then.
#[derive(Clone, Copy)]
struct Point {
    seq: Seq,
    entity: EntityId,
}

fn latency(name: &str, config: &str, samples: &[Duration]) {
    let l = Latency::of(samples);
    report(format!(
        "history {config}: {name} n={} p50 {} ms, p99 {} ms, max {} ms, mean {} ms",
        l.n,
        ms(l.p50),
        ms(l.p99),
        ms(l.max),
        ms(l.mean)
    ));
}

fn run(
    engine: &mut Engine,
    config: &str,
    options: HistoryOptions,
    points: &[Point],
    times: &[(Millis, EntityId)],
) {
    engine
        .set_history_options(options)
        .expect("history options");
    let before = live_bytes();
    let head = engine.head();
    let any = points[0].entity;
    let (cold, t_cold) = time(|| engine.beliefs_at(any, &AsOf::seq(head - 1)).expect("cold"));
    assert_eq!(cold.seq, head - 1);
    let after_cold = live_bytes() - before;
    report(format!(
        "history {config}: cold (first question, replays {} events and keeps checkpoints) {:.3} s, then holding {:.1} MB ({} checkpoints, {} belief versions)",
        head - 1,
        t_cold.as_secs_f64(),
        after_cold as f64 / 1e6,
        engine.history_stats().checkpoints,
        engine.history_stats().belief_versions,
    ));
    let mut beliefs = Vec::with_capacity(points.len());
    let mut believed = 0usize;
    for p in points {
        let (b, d) = time(|| {
            engine
                .beliefs_at(p.entity, &AsOf::seq(p.seq))
                .expect("beliefs_at")
        });
        assert_eq!(b.seq, p.seq);
        believed += b.beliefs.len() + b.edges.len();
        beliefs.push(d);
    }
    let mut memories = Vec::with_capacity(points.len());
    let mut remembered = 0usize;
    for p in points {
        let (m, d) = time(|| {
            engine
                .memories_at(p.entity, &AsOf::seq(p.seq))
                .expect("memories_at")
        });
        remembered += m.memories.len();
        memories.push(d);
    }
    let mut by_time = Vec::with_capacity(times.len());
    for (t, entity) in times {
        let (b, d) = time(|| engine.beliefs_at(*entity, &AsOf::time(*t)));
        b.expect("beliefs_at by time");
        by_time.push(d);
    }
    let held = live_bytes() - before;
    let stats = engine.history_stats();
    latency("beliefs_at (seq)", config, &beliefs);
    latency("memories_at (seq)", config, &memories);
    latency("beliefs_at (time)", config, &by_time);
    report(format!(
        "history {config}: {} checkpoints, spacing {} events, {} belief versions, holding {:.1} MB in all; answers held {believed} beliefs and edges, {remembered} memories",
        stats.checkpoints,
        stats.spacing,
        stats.belief_versions,
        held as f64 / 1e6,
    ));
}

fn main() {
    let total: usize = scaled(1_000_000, 20_000);
    let shape = WorldShape::new(scaled(10_000, 200));
    let questions: usize = scaled(500, 50);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.rp");

    // Setup, once: the log, the save with a snapshot at its head, and the engine.
    let (log, t_gen) = time(|| build_log(shape, total, SEED, &[]));
    let bytes = log.bytes;
    let (_, t_write) = time(|| {
        write_save(&path, &log);
        add_snapshots(&path, &[(total as Seq, &log.last)]);
    });
    drop(log);
    let (engine, t_open) = time(|| Engine::open_with(&path, setup_options()).expect("open"));
    let mut engine = engine;
    let head = engine.head();
    let start = engine.world().meta().expect("created").created;
    let end = engine.world().now();
    report(format!(
        "history setup: {total} events ({bytes} bytes), {} entities; generate {:.1} s, write {:.1} s, open from the snapshot {:.3} s; load average {}",
        engine.world().entities().count(),
        t_gen.as_secs_f64(),
        t_write.as_secs_f64(),
        t_open.as_secs_f64(),
        loadavg()
    ));

    // The points: random seqs after the genesis, and characters (every entity exists from
    // the genesis on); random host times over the log's span.
    let genesis = (1 + shape.containers + 2 * shape.entities) as Seq;
    let people: Vec<EntityId> = engine.world().entities().map(|e| e.id).collect();
    let mut rng = Rng::new(SEED);
    let points: Vec<Point> = (0..questions)
        .map(|_| Point {
            seq: genesis + 1 + rng.below((head - genesis) as usize) as Seq,
            entity: *rng.pick(&people),
        })
        .collect();
    let times: Vec<(Millis, EntityId)> = (0..questions / 4)
        .map(|_| {
            let t = start + (rng.unit() * (end - start) as f64) as Millis;
            (t, *rng.pick(&people))
        })
        .collect();

    let default = HistoryOptions::default();
    run(&mut engine, "default (index)", default, &points, &times);
    run(
        &mut engine,
        "baseline (no index)",
        HistoryOptions {
            belief_index: false,
            ..default
        },
        &points,
        &times,
    );
}
