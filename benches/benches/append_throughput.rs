//! Non-durable append throughput (DESIGN §10): 10-event turns, one transaction per turn, no
//! fsync per commit. Events per second.
//!
//! Contenders, all fed the same turns (the same encoded bytes for the raw ones):
//! - `rp_engine`: `Engine::append` with `Durability::Eventual` and the default snapshots
//!   (every 1000 events), on a save file;
//! - `rp_engine_nosnap`: the same with snapshots off;
//! - `rp_engine_memory`: the engine over a `MemoryStore`, snapshots off (validation on a copy
//!   of the world, encoding, apply; no file);
//! - `world_apply`: `World::apply` of each event in place (validation and apply only);
//! - `redb_store`: the raw `RedbStore::commit` of the encoded turn (`durable: false`);
//! - `sqlite_off`: SQLite, WAL, `synchronous=OFF`, the turn's rows in one transaction.
//!
//! First a fixed run of T turns per contender timed as a whole (wall and thread CPU time);
//! then criterion, one iteration per turn.

use criterion::{Criterion, Throughput};
use rp_benches::*;
use rp_core::store::{BranchId, Commit, MemoryStore, RedbStore, Store};
use rp_core::{Durability, Engine, EngineOptions, Event, Seq, World};
use std::path::Path;
use std::time::Duration;

const SEED: u64 = 0x5eed_0002;

const NAMES: [&str; 6] = [
    "rp_engine",
    "rp_engine_nosnap",
    "rp_engine_memory",
    "world_apply",
    "redb_store",
    "sqlite_off",
];
const SQLITE: usize = 5;

struct Contenders {
    engines: [Engine; 3],
    world: World,
    store: RedbStore,
    branch: BranchId,
    store_seq: Seq,
    sqlite: SqliteLog,
    sqlite_seq: Seq,
}

fn eventual(snapshot_every: u64) -> EngineOptions {
    EngineOptions {
        durability: Durability::Eventual,
        snapshot_every,
        ..EngineOptions::default()
    }
}

impl Contenders {
    fn new(dir: &Path, shape: WorldShape) -> (Contenders, Synth) {
        let synth = create_save(&dir.join("engine.rp"), shape, SEED);
        create_save(&dir.join("engine_nosnap.rp"), shape, SEED);
        create_save(&dir.join("store.rp"), shape, SEED);
        let default_every = EngineOptions::default().snapshot_every;
        let engine =
            Engine::open_with(dir.join("engine.rp"), eventual(default_every)).expect("open");
        let engine_nosnap =
            Engine::open_with(dir.join("engine_nosnap.rp"), eventual(0)).expect("open");
        let mut engine_memory =
            Engine::new_in(Box::new(MemoryStore::new()), WORLD_NAME, T0, eventual(0))
                .expect("memory engine");
        let mut genesis = Synth::new(shape, SEED);
        let mut first = vec![genesis.world_created()];
        first.extend(genesis.genesis());
        engine_memory
            .append(first[1..].to_vec())
            .expect("genesis applies");
        let mut world = World::new();
        for e in &first {
            world.apply(e).expect("genesis applies");
        }
        let store = RedbStore::open(dir.join("store.rp")).expect("open");
        let branch = main_branch(&store);
        let store_seq = store.last_seq(branch).expect("last seq").expect("genesis") + 1;
        let mut sqlite = SqliteLog::open(&dir.join("log.sqlite"), SqliteSync::Off);
        sqlite.append(1, 1, &encode_all(&first));
        (
            Contenders {
                engines: [engine, engine_nosnap, engine_memory],
                world,
                store,
                branch,
                store_seq,
                sqlite,
                sqlite_seq: first.len() as Seq + 1,
            },
            synth,
        )
    }

    /// Appends every turn with contender `which`; returns the time the appends took.
    fn run(&mut self, which: usize, turns: Vec<Vec<Event>>, bytes: &[Vec<Vec<u8>>]) -> Elapsed {
        match which {
            0..=2 => {
                let engine = &mut self.engines[which];
                let sw = Stopwatch::start();
                for t in turns {
                    engine.append(t).expect("append");
                }
                sw.stop()
            }
            3 => {
                let sw = Stopwatch::start();
                for t in &turns {
                    for e in t {
                        self.world.apply(e).expect("apply");
                    }
                }
                sw.stop()
            }
            4 => {
                let commits: Vec<Commit> = bytes
                    .iter()
                    .map(|turn| {
                        let c = Commit {
                            events: turn
                                .iter()
                                .zip(self.store_seq..)
                                .map(|(b, s)| (self.branch, s, b.clone()))
                                .collect(),
                            durable: false,
                            ..Commit::default()
                        };
                        self.store_seq += turn.len() as Seq;
                        c
                    })
                    .collect();
                let sw = Stopwatch::start();
                for c in commits {
                    self.store.commit(c).expect("commit");
                }
                sw.stop()
            }
            _ => {
                let sw = Stopwatch::start();
                for turn in bytes {
                    self.sqlite.append(1, self.sqlite_seq, turn);
                    self.sqlite_seq += turn.len() as Seq;
                }
                sw.stop()
            }
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let dir = tempfile::tempdir().expect("temp dir");
    let shape = WorldShape::new(scaled(10_000, 200));
    let (mut k, mut synth) = Contenders::new(dir.path(), shape);

    // Fixed run: the same T turns through every contender.
    let t = scaled(10_000, 20);
    let turns: Vec<Vec<Event>> = (0..t).map(|_| synth.turn()).collect();
    let bytes: Vec<Vec<Vec<u8>>> = turns.iter().map(|t| encode_all(t)).collect();
    let events = (t * TURN_EVENTS) as f64;
    report(format!(
        "append_throughput: load average before {}",
        loadavg()
    ));
    let mut rates = Vec::new();
    for which in 0..NAMES.len() {
        let d = k.run(which, turns.clone(), &bytes);
        rates.push((events / d.wall.as_secs_f64(), events / d.cpu.as_secs_f64()));
    }
    report(format!(
        "append_throughput: {t} turns of {TURN_EVENTS} events, world of {} entities, one transaction per turn",
        shape.entities
    ));
    let sqlite = rates[SQLITE];
    for (name, (wall, cpu)) in NAMES.iter().zip(&rates) {
        report(format!(
            "append_throughput {name:<17} {:>8.0} events/s ({:>8.0} by thread cpu)  {:>8.2} us/turn  | / sqlite_off {:.2} (cpu {:.2})",
            wall,
            cpu,
            TURN_EVENTS as f64 / wall * 1e6,
            wall / sqlite.0,
            cpu / sqlite.1
        ));
    }

    // Criterion: one iteration = one turn.
    let mut g = c.benchmark_group("append_turn_eventual");
    g.throughput(Throughput::Elements(TURN_EVENTS as u64));
    for (which, name) in NAMES.iter().enumerate() {
        // Each engine (and the bare world) holds the world `synth` has generated so far; each
        // gets its own copy of the generator. The raw contenders take any bytes.
        let mut next = synth.clone();
        g.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                let turns: Vec<Vec<Event>> = (0..iters).map(|_| next.turn()).collect();
                let bytes: Vec<Vec<Vec<u8>>> = if which >= 4 {
                    turns.iter().map(|t| encode_all(t)).collect()
                } else {
                    Vec::new()
                };
                k.run(which, turns, &bytes).wall
            })
        });
    }
    g.finish();
    c.final_summary();
    report(format!(
        "append_throughput: load average after {}",
        loadavg()
    ));
}
