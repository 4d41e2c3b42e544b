//! Shared helpers for the durability and damage tests (crash.rs, faults.rs, bad_files.rs): a
//! seeded RNG, a deterministic workload of batches ("turns") whose content is derived from the
//! batch number, and a reference replay to check a reopened save against.
#![allow(dead_code)]

pub mod history;
pub mod tavern;

use rp_core::store::MemoryStore;
use rp_core::{
    Durability, Engine, EngineOptions, EntityId, EntityState, Error, Event, FactSheet, Seq, World,
};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// SplitMix64: small, fast and good enough to pick crash points and bits to flip.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next_u64() % n
    }

    /// Uniform in `0..n` as a usize.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// The seed of a test: `RP_TEST_SEED` if set, else a fresh one. Printed so that a failure
/// (libtest shows a failing test's captured output) can be replayed with
/// `RP_TEST_SEED=<seed>`.
pub fn seed(test: &str) -> u64 {
    let seed = match std::env::var("RP_TEST_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("RP_TEST_SEED={s:?} is not a u64")),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            Rng::new(t ^ u64::from(std::process::id()).rotate_left(32)).next_u64()
        }
    };
    eprintln!("{test}: seed {seed} (rerun with RP_TEST_SEED={seed})");
    seed
}

/// Number of events in batch `k`.
pub fn batch_len(k: u64) -> u64 {
    1 + k % 7
}

/// The head of a log holding `WorldCreated` and batches `0..m`.
pub fn head_after(m: u64) -> Seq {
    1 + (0..m).map(batch_len).sum::<u64>()
}

/// The number of whole batches a log with this head holds, or `None` if the head falls inside
/// a batch.
pub fn batches_at(head: Seq) -> Option<u64> {
    let mut m = 0;
    let mut h = 1;
    while h < head {
        h += batch_len(m);
        m += 1;
    }
    (h == head).then_some(m)
}

/// The clock value of event `i` of batch `k` (strictly increasing over the workload).
pub fn time_of(k: u64, i: u64) -> i64 {
    1_000 + (k * 10 + i) as i64
}

/// `len` letters that no compressor shrinks much, a function of `seed` alone.
pub fn noise(seed: u64, len: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            // SplitMix64.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            char::from(b'a' + ((z ^ (z >> 31)) % 26) as u8)
        })
        .collect()
}

/// Batch `k`, built against `world` (for fresh ids). Its content is a function of `k` alone,
/// except for the entity ids. Batch lengths cycle 1..=7; a batch of length 1 is a single
/// `TimeAdvanced`, which the world would accept twice (so a duplicated batch shows in the log
/// instead of being rejected); every fifth batch carries a fact larger than a redb page, and
/// batch 13 (mod 50) ~1.9 MB of facts, so the file grows and snapshots are stored in parts.
pub fn batch(k: u64, world: &World) -> Vec<Event> {
    let mut next = world.next_id();
    (0..batch_len(k))
        .map(|i| {
            if i % 2 == 0 {
                Event::TimeAdvanced { to: time_of(k, i) }
            } else {
                let id = EntityId(next);
                next += 1;
                let facts = if k % 50 == 13 && i == 1 {
                    // ~1.9 MB of letters that compress to ~1.1 MB: the file has to grow, and
                    // the snapshots after it are stored in parts (over 1 MB).
                    (0..32).map(|j| noise(k * 64 + j, 60_000)).collect()
                } else if k % 5 == 2 && i == 1 {
                    vec![
                        format!("batch {k} event {i}, a long fact:"),
                        noise(k, 6_000),
                    ]
                } else {
                    vec![format!("batch {k} event {i}")]
                };
                Event::EntityCreated {
                    id,
                    key: None,
                    name: format!("b{k}.{i}"),
                    aliases: vec![format!("alias {k}/{i}")],
                    facts: FactSheet(facts),
                    host_controlled: false,
                    state: EntityState {
                        mood: Some(format!("mood {k}")),
                        goals: vec![],
                        status: None,
                    },
                }
            }
        })
        .collect()
}

/// Which batch and position an event of the workload belongs to, for diagnostics.
pub fn label(e: &Event) -> String {
    match e {
        Event::WorldCreated { .. } => "world_created".into(),
        Event::TimeAdvanced { to } => {
            let x = (*to - 1_000) as u64;
            format!("batch {} event {}", x / 10, x % 10)
        }
        Event::EntityCreated { name, .. } => format!("entity {name}"),
        other => format!("unexpected {}", other.kind()),
    }
}

/// Options used by the workload writers: durable commits and frequent snapshots, so recovery
/// goes through the snapshot path too.
pub fn options(snapshot_every: u64) -> EngineOptions {
    EngineOptions {
        durability: Durability::Immediate,
        snapshot_every,
        ..EngineOptions::default()
    }
}

pub const WORLD_NAME: &str = "Crash Test Inn";

fn digest(bytes: &[u8]) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    (bytes.len(), h.finish())
}

/// A fresh in-memory replay of batches `0..m`, grown on demand, to compare reopened saves with.
pub struct Reference {
    engine: Engine,
    /// `worlds[m]`: digest of the world after `m` batches.
    worlds: Vec<(usize, u64)>,
    /// Every event appended so far (seq 1 first).
    events: Vec<Event>,
}

impl Default for Reference {
    fn default() -> Self {
        Reference::new()
    }
}

impl Reference {
    pub fn new() -> Reference {
        let engine = Engine::new_in(Box::new(MemoryStore::new()), WORLD_NAME, 0, options(0))
            .expect("in-memory world");
        let events = engine
            .events(1, 1)
            .expect("read")
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        Reference {
            worlds: vec![digest(&engine.world().to_bytes())],
            engine,
            events,
        }
    }

    /// The batches replayed so far.
    pub fn batches(&self) -> u64 {
        self.worlds.len() as u64 - 1
    }

    /// Replays batches up to `m` (exclusive).
    pub fn extend_to(&mut self, m: u64) {
        while self.batches() < m {
            let k = self.batches();
            let events = batch(k, self.engine.world());
            self.events.extend(events.iter().cloned());
            self.engine.append(events).expect("reference append");
            self.worlds.push(digest(&self.engine.world().to_bytes()));
        }
    }

    /// Checks that `engine` holds exactly `WorldCreated` and whole batches `0..m` with the
    /// content the workload wrote, and the same world as a fresh replay; returns `m`.
    /// Panics with `context` and a description of the mismatch otherwise.
    pub fn check(&mut self, engine: &Engine, context: &str) -> u64 {
        self.try_check(engine)
            .unwrap_or_else(|e| panic!("{context}: {e}"))
    }

    /// [`Reference::check`] returning the mismatch instead of panicking.
    pub fn try_check(&mut self, engine: &Engine) -> Result<u64, String> {
        let head = engine.head();
        let events = engine
            .events(1, head)
            .map_err(|e| format!("reading events 1..={head} failed: {e}"))?;
        if events.len() as u64 != head {
            return Err(format!(
                "events(1, {head}) returned {} events",
                events.len()
            ));
        }
        let Some(m) = batches_at(head) else {
            let last = events.last().map(|(_, e)| label(e)).unwrap_or_default();
            return Err(format!(
                "head {head} falls inside a batch (last event: {last}): part of a batch was kept"
            ));
        };
        self.extend_to(m);
        for (i, (seq, e)) in events.iter().enumerate() {
            if *seq != i as u64 + 1 {
                return Err(format!("event {i} has seq {seq}"));
            }
            if *e != self.events[i] {
                return Err(format!(
                    "seq {seq} holds {} where the workload wrote {}: {e:?}",
                    label(e),
                    label(&self.events[i])
                ));
            }
        }
        let got = digest(&engine.world().to_bytes());
        if got != self.worlds[m as usize] {
            return Err(format!(
                "the world after {m} batches differs from a fresh replay ({got:?} vs {:?})",
                self.worlds[m as usize]
            ));
        }
        Ok(m)
    }
}

/// Asserts that the message of `err` names `file`.
pub fn assert_names_file(err: &Error, file: &str, context: &str) {
    let msg = err.to_string();
    assert!(
        msg.contains(file),
        "{context}: the error does not name the file {file:?}: {msg}"
    );
}
