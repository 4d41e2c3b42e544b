//! Durable append of a 10-event turn (DESIGN §10): one turn, one transaction, on stable storage
//! before the call returns.
//!
//! Contenders, all fed the same turns (the same encoded bytes for the raw ones):
//! - `rp_engine`: `Engine::append` with `Durability::Immediate`, default snapshots (every 1000
//!   events), on a save file in a temp dir;
//! - `rp_engine_nosnap`: the same with snapshots off (isolates the snapshot cost);
//! - `redb_store`: the raw `RedbStore::commit` of the encoded turn (`durable: true`);
//! - `sqlite_full`: SQLite, WAL, `synchronous=FULL`, the turn's rows in one transaction;
//! - `fsync_floor`: one `pwrite` of the turn's bytes to a pre-filled plain file + `fdatasync`.
//!
//! First a latency run: N turns, the contenders interleaved turn by turn (rotating who goes
//! first) so they share the machine's noise, each append timed on its own: p50 / p99 / max.
//! Then criterion measures the mean of each.

use criterion::Criterion;
use rp_benches::*;
use rp_core::store::{BranchId, Commit, RedbStore, Store};
use rp_core::{Durability, Engine, EngineOptions, Event, Seq};
use std::path::Path;
use std::time::{Duration, Instant};

const SEED: u64 = 0x5eed_0001;

struct Contenders {
    engine: Engine,
    engine_nosnap: Engine,
    store: RedbStore,
    branch: BranchId,
    store_seq: Seq,
    sqlite: SqliteLog,
    sqlite_seq: Seq,
    floor: FsyncFloor,
}

const NAMES: [&str; 5] = [
    "rp_engine",
    "rp_engine_nosnap",
    "redb_store",
    "sqlite_full",
    "fsync_floor",
];

impl Contenders {
    fn new(dir: &Path, shape: WorldShape) -> (Contenders, Synth) {
        let synth = create_save(&dir.join("engine.rp"), shape, SEED);
        create_save(&dir.join("engine_nosnap.rp"), shape, SEED);
        create_save(&dir.join("store.rp"), shape, SEED);
        let durable = |snapshot_every| EngineOptions {
            durability: Durability::Immediate,
            snapshot_every,
            ..EngineOptions::default()
        };
        let engine = Engine::open_with(
            dir.join("engine.rp"),
            durable(EngineOptions::default().snapshot_every),
        )
        .expect("open");
        let engine_nosnap =
            Engine::open_with(dir.join("engine_nosnap.rp"), durable(0)).expect("open");
        let store = RedbStore::open(dir.join("store.rp")).expect("open");
        let branch = main_branch(&store);
        let store_seq = store.last_seq(branch).expect("last seq").expect("genesis") + 1;
        // SQLite starts from the same log as the save files.
        let mut sqlite = SqliteLog::open(&dir.join("log.sqlite"), SqliteSync::Full);
        let mut genesis = Synth::new(shape, SEED);
        let mut first = vec![genesis.world_created()];
        first.extend(genesis.genesis());
        sqlite.append(1, 1, &encode_all(&first));
        let sqlite_seq = first.len() as Seq + 1;
        assert_eq!(sqlite_seq, store_seq);
        let floor = FsyncFloor::create(&dir.join("floor.bin"), 64 << 20);
        (
            Contenders {
                engine,
                engine_nosnap,
                store,
                branch,
                store_seq,
                sqlite,
                sqlite_seq,
                floor,
            },
            synth,
        )
    }

    /// Appends `turn` with contender `which`, timing only the append itself.
    fn append(&mut self, which: usize, turn: &[Event], bytes: &[Vec<u8>]) -> Duration {
        match which {
            0 => {
                let t = turn.to_vec();
                let start = Instant::now();
                self.engine.append(t).expect("append");
                start.elapsed()
            }
            1 => {
                let t = turn.to_vec();
                let start = Instant::now();
                self.engine_nosnap.append(t).expect("append");
                start.elapsed()
            }
            2 => {
                let commit = Commit {
                    events: bytes
                        .iter()
                        .zip(self.store_seq..)
                        .map(|(b, s)| (self.branch, s, b.clone()))
                        .collect(),
                    durable: true,
                    ..Commit::default()
                };
                self.store_seq += bytes.len() as Seq;
                let start = Instant::now();
                self.store.commit(commit).expect("commit");
                start.elapsed()
            }
            3 => {
                let start = Instant::now();
                self.sqlite.append(1, self.sqlite_seq, bytes);
                let d = start.elapsed();
                self.sqlite_seq += bytes.len() as Seq;
                d
            }
            _ => {
                let start = Instant::now();
                self.floor.append(bytes);
                start.elapsed()
            }
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(scaled(20, 10))
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let dir = tempfile::tempdir().expect("temp dir");
    let shape = WorldShape::new(scaled(10_000, 200));
    let (mut k, mut synth) = Contenders::new(dir.path(), shape);

    // Latency run: every contender takes the same turns, interleaved.
    let n = scaled(2_000, 20);
    report(format!("durable_append: load average before {}", loadavg()));
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(n); NAMES.len()];
    let mut turn_bytes = 0usize;
    for i in 0..n {
        let turn = synth.turn();
        let bytes = encode_all(&turn);
        turn_bytes += bytes.iter().map(Vec::len).sum::<usize>();
        for j in 0..NAMES.len() {
            let which = (i + j) % NAMES.len();
            samples[which].push(k.append(which, &turn, &bytes));
        }
    }
    let floor = Latency::of(&samples[4]);
    let sqlite = Latency::of(&samples[3]);
    report(format!(
        "durable_append: {n} turns of {TURN_EVENTS} events, world of {} entities, mean turn {} bytes encoded",
        shape.entities,
        turn_bytes / n
    ));
    for (name, s) in NAMES.iter().zip(&samples) {
        let l = Latency::of(s);
        report(format!(
            "durable_append {name:<17} p50 {} ms  p99 {} ms  mean {} ms  max {} ms  | p50 - floor p50 {:+.3} ms  p99 / sqlite p99 {:.2}",
            ms(l.p50),
            ms(l.p99),
            ms(l.mean),
            ms(l.max),
            (l.p50.as_secs_f64() - floor.p50.as_secs_f64()) * 1e3,
            l.p99.as_secs_f64() / sqlite.p99.as_secs_f64(),
        ));
    }

    // Criterion: the mean of each, every contender with its own stream of valid turns.
    let mut g = c.benchmark_group("durable_append_turn");
    g.throughput(criterion::Throughput::Elements(TURN_EVENTS as u64));
    for (which, name) in NAMES.iter().enumerate() {
        // Both engines hold the world `synth` has generated so far; each gets its own copy of
        // the generator so its turns stay valid whatever criterion ran before. The raw
        // contenders take any bytes.
        let mut next = synth.clone();
        g.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let turn = next.turn();
                    let bytes = encode_all(&turn);
                    total += k.append(which, &turn, &bytes);
                }
                total
            })
        });
    }
    g.finish();
    c.final_summary();
    report(format!("durable_append: load average after {}", loadavg()));
}
