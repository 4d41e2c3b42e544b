//! Shared pieces of the rp benches (DESIGN §10): a deterministic generator of valid synthetic
//! event logs, the SQLite peer, the fsync floor, and latency statistics.
//!
//! Every bench binary measures rp beside a peer in the same process, on the same encoded
//! events, so the figures it prints are ratios from one run.

use rp_core::log::codec::{encode_event, encode_snapshot};
use rp_core::store::{BranchId, Commit, MemoryStore, RedbStore, Store};
use rp_core::{
    Action, Activity, ContainerId, ContainerProperties, Durability, Edge, Engine, EngineOptions,
    EntityId, EntityState, Event, FactSheet, Memory, MemoryId, MemoryKind, Millis, Position, Seq,
    Slot, Utterance, UtteranceId, WitnessSet, World,
};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// The name every synthetic world is created with.
pub const WORLD_NAME: &str = "The Crooked Lantern";
/// The host clock when every synthetic world is created.
pub const T0: Millis = 1_700_000_000_000;
/// Events in one synthetic turn.
pub const TURN_EVENTS: usize = 10;

/// True when the binary runs as a benchmark (`cargo bench`), false in test mode
/// (`cargo test --benches`, `cargo bench -- --test`), where the benches shrink to a smoke run.
pub fn full_run() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

/// The full-run value, or the smoke-run one.
pub fn scaled<T>(full: T, smoke: T) -> T {
    if full_run() { full } else { smoke }
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.

/// SplitMix64: small, fast, deterministic; good enough to pick words and entities.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [-1, 1).
    pub fn signed(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A made-up word, unique per rank, letters only (every tokenizer sees one word): syllables of
/// the rank in base 70, each a consonant and a vowel, so every word ends in a vowel.
pub fn word(rank: usize) -> String {
    const C: &[u8] = b"bdfgklmnprstvz"; // 14 consonants
    const V: &[u8] = b"aeiou"; // 5 vowels (70 syllables)
    let mut n = rank;
    let mut out = String::new();
    loop {
        let s = n % 70;
        out.push(C[s / 5] as char);
        out.push(V[s % 5] as char);
        n /= 70;
        if n == 0 {
            break;
        }
    }
    out
}

/// Zipf (s = 1) over `n` ranks, sampled by inverting the cumulative distribution.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over ranks `0..n` (`n > 0`).
    pub fn new(n: usize) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut sum = 0.0;
        for r in 1..=n {
            sum += 1.0 / r as f64;
            cdf.push(sum);
        }
        for c in &mut cdf {
            *c /= sum;
        }
        Zipf { cdf }
    }

    /// A rank.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|c| *c < u).min(self.cdf.len() - 1)
    }
}

/// Made-up words with Zipf (s = 1) frequencies, to write synthetic lines.
pub struct Vocabulary {
    /// The words, by rank (the most frequent first).
    pub words: Vec<String>,
    zipf: Zipf,
}

impl Vocabulary {
    /// `n` made-up words, drawn with Zipf (s = 1) frequencies.
    pub fn new(n: usize) -> Vocabulary {
        Vocabulary {
            words: (0..n).map(word).collect(),
            zipf: Zipf::new(n),
        }
    }

    /// One word.
    pub fn sample(&self, rng: &mut Rng) -> &str {
        &self.words[self.zipf.sample(rng)]
    }

    /// `lo..=hi` words, space-separated.
    pub fn text(&self, rng: &mut Rng, lo: usize, hi: usize) -> String {
        let n = rng.between(lo, hi);
        let mut s = String::with_capacity(n * 6);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.sample(rng));
        }
        s
    }
}

const WORDS: &[&str] = &[
    "the",
    "lantern",
    "ale",
    "storm",
    "harbour",
    "she",
    "he",
    "they",
    "watched",
    "quietly",
    "laughed",
    "remembered",
    "a",
    "debt",
    "letter",
    "from",
    "the",
    "north",
    "road",
    "was",
    "closed",
    "again",
    "and",
    "nobody",
    "knew",
    "why",
    "captain",
    "innkeeper",
    "stranger",
    "coin",
    "silver",
    "candle",
    "burned",
    "low",
    "rain",
    "hammered",
    "shutters",
    "old",
    "song",
    "about",
    "drowned",
    "bells",
    "promise",
    "kept",
    "broken",
    "map",
    "missing",
    "page",
    "of",
    "with",
    "her",
    "his",
    "their",
    "hands",
    "cold",
    "warm",
    "bread",
    "fire",
    "smoke",
    "door",
    "opened",
    "slowly",
    "whispered",
    "rumour",
    "guard",
    "market",
    "tomorrow",
    "before",
    "dawn",
];

const POSTURES: &[&str] = &[
    "sitting",
    "standing",
    "leaning on the bar",
    "pacing",
    "crouched by the fire",
    "slumped in a chair",
];
const VERBS: &[&str] = &[
    "pouring drinks",
    "playing dice",
    "mending a net",
    "reading a letter",
    "eating stew",
    "sharpening a knife",
    "telling a story",
];
const MOODS: &[&str] = &[
    "wary",
    "delighted",
    "tired",
    "curious",
    "irritated",
    "amused",
    "anxious",
    "calm",
];
const STATUSES: &[&str] = &["idle", "busy", "on shift", "off duty", "distracted"];
const SLOTS: &[&str] = &[
    "bar",
    "hearth",
    "table 1",
    "table 2",
    "table 3",
    "booth",
    "stairs",
    "doorway",
    "window seat",
    "kitchen",
    "cellar door",
    "stage",
];
const PLACES: &[&str] = &[
    "The Crooked Lantern",
    "Harbour Market",
    "North Road",
    "Old Chapel",
    "Guard House",
    "Fish Docks",
    "Mill",
    "Lighthouse",
];

fn sentence(rng: &mut Rng, min_words: usize, max_words: usize) -> String {
    let n = rng.between(min_words, max_words);
    let mut s = String::with_capacity(n * 7);
    for i in 0..n {
        let w = *rng.pick(WORDS);
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

// ---------------------------------------------------------------------------------------------
// The synthetic world.

/// The size of a synthetic world.
#[derive(Clone, Copy, Debug)]
pub struct WorldShape {
    /// Entities (characters; the first `max(containers, entities / 100)` are host-controlled).
    pub entities: usize,
    /// Containers (each with the same slots, none with a capacity limit).
    pub containers: usize,
    /// Slots per container.
    pub slots: usize,
}

impl WorldShape {
    /// `entities` entities in 8 containers of 12 slots.
    pub fn new(entities: usize) -> WorldShape {
        WorldShape {
            entities,
            containers: 8,
            slots: SLOTS.len(),
        }
    }
}

/// The `WorldCreated` event the engine writes for [`WORLD_NAME`] and [`T0`] with default
/// settings (it may fill in settings, such as the world's seed, so ask it rather than guess).
pub fn engine_world_created() -> Event {
    let engine = Engine::new_in(
        Box::new(MemoryStore::new()),
        WORLD_NAME,
        T0,
        setup_options(),
    )
    .expect("in-memory engine");
    let mut first = engine.events(1, 1).expect("seq 1");
    assert_eq!(first.len(), 1);
    first.remove(0).1
}

/// A generator of valid events: a world of N entities in a few containers, then turns that mix
/// user and assistant lines, moves, mood changes, edge updates, memories and the clock.
///
/// Every event it yields applies cleanly to a [`World`] that has applied all earlier ones,
/// starting with [`Synth::world_created`] (which matches what [`Engine::create_with`] writes
/// for [`WORLD_NAME`] and [`T0`] with default settings).
#[derive(Clone, Debug)]
pub struct Synth {
    shape: WorldShape,
    rng: Rng,
    next_id: u64,
    now: Millis,
    containers: Vec<ContainerId>,
    entities: Vec<EntityId>,
    /// Host-controlled entities (indices into `entities`).
    hosts: Vec<usize>,
    /// Per container: the entities standing in it.
    members: Vec<Vec<usize>>,
    /// Per container: the engine-controlled entities standing in it.
    npcs_in: Vec<Vec<usize>>,
}

impl Synth {
    /// A generator for a world of `shape`, deterministic in `seed`.
    pub fn new(shape: WorldShape, seed: u64) -> Synth {
        assert!(shape.containers >= 1 && shape.slots >= 1 && shape.slots <= SLOTS.len());
        assert!(
            shape.entities >= 2 * shape.containers,
            "every container needs a host and an engine-controlled character"
        );
        Synth {
            shape,
            rng: Rng::new(seed),
            next_id: 1,
            now: T0,
            containers: Vec::new(),
            entities: Vec::new(),
            hosts: Vec::new(),
            members: vec![Vec::new(); shape.containers],
            npcs_in: vec![Vec::new(); shape.containers],
        }
    }

    /// The first event of the world, exactly as [`Engine::create_with`] writes it.
    pub fn world_created(&self) -> Event {
        engine_world_created()
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn slot(&mut self) -> String {
        SLOTS[self.rng.below(self.shape.slots)].to_owned()
    }

    /// The containers, the entities and their first positions (everything after
    /// `world_created` and before the first turn).
    pub fn genesis(&mut self) -> Vec<Event> {
        assert!(self.entities.is_empty(), "genesis runs once");
        let shape = self.shape;
        let mut out = Vec::with_capacity(shape.containers + 2 * shape.entities);
        for c in 0..shape.containers {
            let id = ContainerId(self.take_id());
            self.containers.push(id);
            out.push(Event::ContainerCreated {
                id,
                key: Some(format!("place-{c}")),
                name: format!("{} {}", PLACES[c % PLACES.len()], c / PLACES.len() + 1),
                facts: FactSheet(vec![sentence(&mut self.rng, 6, 12)]),
                parent: None,
                slots: SLOTS[..shape.slots]
                    .iter()
                    .map(|s| Slot {
                        name: (*s).to_owned(),
                        capacity: None,
                    })
                    .collect(),
                properties: ContainerProperties {
                    moving: false,
                    public: true,
                    audible_range: 0,
                },
            });
        }
        let host_count = shape.containers.max(shape.entities / 100);
        for i in 0..shape.entities {
            let id = EntityId(self.take_id());
            let host = i < host_count;
            self.entities.push(id);
            let c = i % shape.containers;
            self.members[c].push(i);
            if host {
                self.hosts.push(i);
            } else {
                self.npcs_in[c].push(i);
            }
            out.push(Event::EntityCreated {
                id,
                key: Some(format!("e{i}")),
                name: format!("{} {i}", if host { "Player" } else { "Townsfolk" }),
                aliases: vec![],
                facts: FactSheet(vec![
                    sentence(&mut self.rng, 6, 14),
                    sentence(&mut self.rng, 6, 14),
                ]),
                host_controlled: host,
                state: EntityState {
                    mood: Some((*self.rng.pick(MOODS)).to_owned()),
                    goals: vec![sentence(&mut self.rng, 3, 6)],
                    status: None,
                },
            });
        }
        for i in 0..shape.entities {
            let c = i % shape.containers;
            let slot = self.slot();
            out.push(Event::ActivityChanged {
                entity: self.entities[i],
                activity: Activity {
                    position: Some(Position {
                        container: self.containers[c],
                        slot: Some(slot),
                    }),
                    posture: Some((*self.rng.pick(POSTURES)).to_owned()),
                    ..Activity::default()
                },
            });
        }
        out
    }

    /// Up to `extra` bystanders from container `c`, plus `always`.
    fn witnesses(&mut self, c: usize, always: &[usize], extra: usize) -> WitnessSet {
        let mut set: BTreeSet<EntityId> = always.iter().map(|i| self.entities[*i]).collect();
        let members = &self.members[c];
        for _ in 0..extra {
            let i = members[self.rng.below(members.len())];
            set.insert(self.entities[i]);
        }
        WitnessSet(set)
    }

    fn edge(&mut self, from: usize, to: usize) -> Edge {
        let knowledge = (0..self.rng.between(1, 3))
            .map(|_| sentence(&mut self.rng, 4, 8))
            .collect();
        let private_moments = (0..self.rng.below(2))
            .map(|_| sentence(&mut self.rng, 6, 12))
            .collect();
        Edge {
            from: self.entities[from],
            to: self.entities[to],
            affinity: self.rng.signed(),
            trust: self.rng.signed(),
            summary: sentence(&mut self.rng, 8, 16),
            knowledge,
            private_moments,
            last_interaction: Some(self.now),
        }
    }

    fn memory(&mut self, owner: usize, witnesses: &WitnessSet) -> Memory {
        let id = MemoryId(self.take_id());
        Memory {
            id,
            owner: self.entities[owner],
            witnesses: witnesses.clone(),
            text: sentence(&mut self.rng, 10, 25),
            kind: if self.rng.below(4) == 0 {
                MemoryKind::Reflection
            } else {
                MemoryKind::Utterance
            },
            significance: self.rng.unit(),
            created: self.now,
            last_accessed: None,
            access_count: 0,
            decay: Default::default(),
            pinned: false,
            embedding: None,
            scene: None,
        }
    }

    /// One turn of [`TURN_EVENTS`] events: a player speaks, a character answers and reacts
    /// (moves, changes mood, updates both edges, remembers), a bystander chimes in and
    /// remembers, and the clock moves on.
    pub fn turn(&mut self) -> Vec<Event> {
        assert!(!self.entities.is_empty(), "run genesis first");
        let host = *self.rng.pick(&self.hosts);
        let c = host % self.shape.containers;
        let npcs = &self.npcs_in[c];
        let a = npcs[self.rng.below(npcs.len())];
        let b = npcs[self.rng.below(npcs.len())];
        let witnesses = self.witnesses(c, &[host, a, b], 3);
        let user_id = UtteranceId(self.take_id());
        let user = Utterance {
            id: user_id,
            speaker: self.entities[host],
            text: sentence(&mut self.rng, 6, 20),
            at: self.now,
            witnesses: witnesses.clone(),
            model: None,
            scene: None,
        };
        let reply_id = UtteranceId(self.take_id());
        let reply = Utterance {
            id: reply_id,
            speaker: self.entities[a],
            text: sentence(&mut self.rng, 25, 70),
            at: self.now + 1,
            witnesses: witnesses.clone(),
            model: Some("synthetic-8b".into()),
            scene: None,
        };
        let slot = self.slot();
        let activity = Activity {
            position: Some(Position {
                container: self.containers[c],
                slot: Some(slot),
            }),
            posture: Some((*self.rng.pick(POSTURES)).to_owned()),
            action: Some(Action {
                verb: (*self.rng.pick(VERBS)).to_owned(),
                started: self.now,
                duration_ms: Some(self.rng.between(1_000, 600_000) as u64),
                interruptible: true,
                attention_required: false,
            }),
            holding: vec![],
            attention: Some(self.entities[host]),
            status: Some((*self.rng.pick(STATUSES)).to_owned()),
        };
        let state = EntityState {
            mood: Some((*self.rng.pick(MOODS)).to_owned()),
            goals: (0..self.rng.between(1, 3))
                .map(|_| sentence(&mut self.rng, 3, 7))
                .collect(),
            status: Some((*self.rng.pick(STATUSES)).to_owned()),
        };
        let edge_out = self.edge(a, host);
        let edge_in = self.edge(host, a);
        let memory_a = self.memory(a, &witnesses);
        let chime_id = UtteranceId(self.take_id());
        let chime = Utterance {
            id: chime_id,
            speaker: self.entities[b],
            text: sentence(&mut self.rng, 8, 30),
            at: self.now + 2,
            witnesses: witnesses.clone(),
            model: Some("synthetic-8b".into()),
            scene: None,
        };
        let memory_b = self.memory(b, &witnesses);
        self.now += self.rng.between(1_000, 60_000) as Millis;
        vec![
            Event::UserTurn { utterance: user },
            Event::AssistantTurn { utterance: reply },
            Event::ActivityChanged {
                entity: self.entities[a],
                activity,
            },
            Event::EntityStateChanged {
                entity: self.entities[a],
                state,
            },
            Event::EdgeUpdated { edge: edge_out },
            Event::EdgeUpdated { edge: edge_in },
            Event::MemoryAdded { memory: memory_a },
            Event::AssistantTurn { utterance: chime },
            Event::MemoryAdded { memory: memory_b },
            Event::TimeAdvanced { to: self.now },
        ]
    }

    /// The whole log from `world_created` on, one event at a time, `total` events in all.
    pub fn log(mut self, total: usize) -> impl Iterator<Item = Event> {
        let mut pending: std::collections::VecDeque<Event> = std::iter::once(self.world_created())
            .chain(self.genesis())
            .collect();
        std::iter::from_fn(move || {
            if pending.is_empty() {
                pending.extend(self.turn());
            }
            pending.pop_front()
        })
        .take(total)
    }
}

/// Encodes events as the log stores them.
pub fn encode_all(events: &[Event]) -> Vec<Vec<u8>> {
    events.iter().map(encode_event).collect()
}

// ---------------------------------------------------------------------------------------------
// Building save files.

/// Engine options for fast setup: no fsync per commit, no snapshots.
pub fn setup_options() -> EngineOptions {
    EngineOptions {
        durability: Durability::Eventual,
        snapshot_every: 0,
        ..EngineOptions::default()
    }
}

/// A save file at `path` holding the world of `synth` after its genesis (appended with
/// [`setup_options`], then flushed). Returns the generator, ready for turns.
pub fn create_save(path: &Path, shape: WorldShape, seed: u64) -> Synth {
    let mut synth = Synth::new(shape, seed);
    let mut engine =
        Engine::create_with(path, WORLD_NAME, T0, setup_options()).expect("create the save");
    engine.append(synth.genesis()).expect("genesis applies");
    engine.flush().expect("flush");
    synth
}

/// The id of the branch that holds seq 1 (the main branch of a fresh save). The branch ids
/// are internal to rp-core; this finds it through the public `Store` API.
pub fn main_branch(store: &dyn Store) -> BranchId {
    (0..64)
        .find(|b| matches!(store.last_seq(*b), Ok(Some(_))))
        .expect("a save file with events")
}

/// A synthetic log, encoded, with the worlds at chosen seqs (for snapshots).
pub struct BigLog {
    /// `records[i]` is the encoded event of seq `i + 1`.
    pub records: Vec<Vec<u8>>,
    /// Total encoded bytes.
    pub bytes: usize,
    /// The world as of each requested seq, in request order.
    pub worlds: Vec<(Seq, World)>,
    /// The world after the last event.
    pub last: World,
}

/// Generates `total` events of a world of `shape`, checking each applies, and encodes them.
pub fn build_log(shape: WorldShape, total: usize, seed: u64, snapshot_at: &[Seq]) -> BigLog {
    let mut world = World::new();
    let mut records = Vec::with_capacity(total);
    let mut bytes = 0;
    let mut worlds = Vec::new();
    for event in Synth::new(shape, seed).log(total) {
        world
            .apply(&event)
            .unwrap_or_else(|e| panic!("synthetic event {} is invalid: {e}", world.seq() + 1));
        let r = encode_event(&event);
        bytes += r.len();
        records.push(r);
        if snapshot_at.contains(&world.seq()) {
            worlds.push((world.seq(), world.clone()));
        }
    }
    BigLog {
        records,
        bytes,
        worlds,
        last: world,
    }
}

/// Writes `log` to a new save file at `path`: `Engine::create_with` writes seq 1 and the
/// metadata, then the raw store takes the rest in large non-durable batches, flushed at the
/// end. No snapshots (see [`add_snapshots`]).
pub fn write_save(path: &Path, log: &BigLog) {
    drop(Engine::create_with(path, WORLD_NAME, T0, setup_options()).expect("create the save"));
    let mut store = RedbStore::open(path).expect("open the save");
    let branch = main_branch(&store);
    store
        .read_events(branch, 1, 1, &mut |_, b| {
            assert_eq!(
                b, log.records[0],
                "the engine wrote a different world_created"
            );
            Ok(())
        })
        .expect("read seq 1");
    for (i, chunk) in log.records[1..].chunks(50_000).enumerate() {
        let first = 2 + (i * 50_000) as Seq;
        store
            .commit(Commit {
                events: chunk
                    .iter()
                    .zip(first..)
                    .map(|(r, s)| (branch, s, r.clone()))
                    .collect(),
                durable: false,
                ..Commit::default()
            })
            .expect("commit");
    }
    store
        .commit(Commit {
            durable: true,
            ..Commit::default()
        })
        .expect("commit");
}

/// Adds snapshots (seq, world) to the save file at `path`, as the engine would store them.
/// Returns the size in bytes of each encoded snapshot.
pub fn add_snapshots(path: &Path, snapshots: &[(Seq, &World)]) -> Vec<usize> {
    let mut store = RedbStore::open(path).expect("open the save");
    let branch = main_branch(&store);
    let records: Vec<_> = snapshots
        .iter()
        .map(|(s, w)| (branch, *s, encode_snapshot(w)))
        .collect();
    let sizes = records.iter().map(|r| r.2.len()).collect();
    store
        .commit(Commit {
            snapshots: records,
            durable: true,
            ..Commit::default()
        })
        .expect("commit");
    sizes
}

// ---------------------------------------------------------------------------------------------
// The SQLite peer.

/// How SQLite syncs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqliteSync {
    /// `journal_mode=WAL`, `synchronous=FULL`: the WAL is fsynced at every commit.
    Full,
    /// `journal_mode=WAL`, `synchronous=OFF`: no fsync.
    Off,
}

/// The same log in SQLite: `events(branch, seq, data)` keyed by (branch, seq), one
/// transaction per append.
pub struct SqliteLog {
    conn: rusqlite::Connection,
}

impl SqliteLog {
    /// Opens (creating if needed) the log at `path`.
    pub fn open(path: &Path, sync: SqliteSync) -> SqliteLog {
        let conn = rusqlite::Connection::open(path).expect("open sqlite");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("wal");
        conn.pragma_update(
            None,
            "synchronous",
            match sync {
                SqliteSync::Full => "FULL",
                SqliteSync::Off => "OFF",
            },
        )
        .expect("synchronous");
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS events (
                branch INTEGER NOT NULL,
                seq INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (branch, seq)
            ) WITHOUT ROWID;",
        )
        .expect("schema");
        SqliteLog { conn }
    }

    /// Inserts `records` as seqs `first..` of `branch` in one transaction.
    pub fn append(&mut self, branch: u64, first: Seq, records: &[Vec<u8>]) {
        let txn = self.conn.transaction().expect("begin");
        {
            let mut stmt = txn
                .prepare_cached("INSERT INTO events (branch, seq, data) VALUES (?1, ?2, ?3)")
                .expect("prepare");
            for (r, s) in records.iter().zip(first..) {
                stmt.execute(rusqlite::params![branch as i64, s as i64, r.as_slice()])
                    .expect("insert");
            }
        }
        txn.commit().expect("commit");
    }

    /// Calls `visit` for each event of `branch` in seq order.
    pub fn read(&self, branch: u64, mut visit: impl FnMut(Seq, &[u8])) {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, data FROM events WHERE branch = ?1 ORDER BY seq")
            .expect("prepare");
        let mut rows = stmt.query([branch as i64]).expect("query");
        while let Some(row) = rows.next().expect("row") {
            let seq: i64 = row.get(0).expect("seq");
            let data = row.get_ref(1).expect("data").as_blob().expect("blob");
            visit(seq as Seq, data);
        }
    }

    /// Checkpoints the WAL into the main file.
    pub fn checkpoint(&self) {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .expect("checkpoint");
    }
}

// ---------------------------------------------------------------------------------------------
// The disk's floor.

/// A plain file, zero-filled and synced ahead of time, that takes each turn's bytes with one
/// `pwrite` at the next offset and one `fdatasync`: what any durable append must at least pay.
pub struct FsyncFloor {
    file: File,
    at: u64,
    len: u64,
}

impl FsyncFloor {
    /// A floor file of `len` bytes at `path`.
    pub fn create(path: &Path, len: u64) -> FsyncFloor {
        let mut file = File::create(path).expect("create floor file");
        let zeros = vec![0u8; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            file.write_all(&zeros[..n]).expect("fill");
            left -= n as u64;
        }
        file.sync_all().expect("sync");
        FsyncFloor { file, at: 0, len }
    }

    /// Writes `records` back to back at the next offset (wrapping), then `fdatasync`.
    pub fn append(&mut self, records: &[Vec<u8>]) {
        use std::os::unix::fs::FileExt;
        let buf: Vec<u8> = records.concat();
        if self.at + buf.len() as u64 > self.len {
            self.at = 0;
        }
        self.file.write_all_at(&buf, self.at).expect("pwrite");
        self.at += buf.len() as u64;
        // SAFETY: the descriptor is open for as long as `self.file` lives.
        let r = unsafe { libc::fdatasync(std::os::unix::io::AsRawFd::as_raw_fd(&self.file)) };
        assert_eq!(
            r,
            0,
            "fdatasync failed: {}",
            std::io::Error::last_os_error()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics and reporting.

/// Latency percentiles of a set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Latency {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Mean.
    pub mean: Duration,
    /// Worst.
    pub max: Duration,
}

impl Latency {
    /// The percentiles of `samples` (nearest-rank).
    pub fn of(samples: &[Duration]) -> Latency {
        assert!(!samples.is_empty());
        let mut s = samples.to_vec();
        s.sort_unstable();
        let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        Latency {
            n: s.len(),
            p50: rank(0.50),
            p99: rank(0.99),
            mean: s.iter().sum::<Duration>() / s.len() as u32,
            max: s[s.len() - 1],
        }
    }
}

/// Milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Times `f` once.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// CPU time consumed so far by the calling thread. On a shared machine the wall clock also
/// counts time spent waiting for a core; this does not.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock and thread CPU time of one measurement.
#[derive(Clone, Copy, Debug, Default)]
pub struct Elapsed {
    /// Wall clock.
    pub wall: Duration,
    /// CPU time of the measuring thread.
    pub cpu: Duration,
}

/// A running measurement of wall and CPU time.
pub struct Stopwatch {
    wall: Instant,
    cpu: Duration,
}

impl Stopwatch {
    /// Starts measuring.
    pub fn start() -> Stopwatch {
        Stopwatch {
            cpu: thread_cpu(),
            wall: Instant::now(),
        }
    }

    /// The time since [`Stopwatch::start`].
    pub fn stop(&self) -> Elapsed {
        let wall = self.wall.elapsed();
        Elapsed {
            wall,
            cpu: thread_cpu().saturating_sub(self.cpu),
        }
    }
}

/// The machine's load averages (1, 5, 15 minutes), to print beside the figures.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Prints one result line, prefixed so it is easy to grep from the bench output.
pub fn report(line: impl AsRef<str>) {
    println!("RESULT {}", line.as_ref());
}

/// Size of a file in bytes.
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_log_applies_in_order() {
        let log = build_log(WorldShape::new(200), 5_000, 7, &[1_000]);
        assert_eq!(log.records.len(), 5_000);
        assert_eq!(log.last.seq(), 5_000);
        assert_eq!(log.last.entities().count(), 200);
        assert_eq!(log.worlds.len(), 1);
        assert_eq!(log.worlds[0].0, 1_000);
    }

    #[test]
    fn synthetic_turns_apply_through_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rp");
        let mut synth = create_save(&path, WorldShape::new(50), 1);
        let mut engine = Engine::open_with(&path, setup_options()).unwrap();
        for _ in 0..100 {
            let turn = synth.turn();
            assert_eq!(turn.len(), TURN_EVENTS);
            engine.append(turn).unwrap();
        }
        assert_eq!(engine.head(), 1 + 8 + 50 + 50 + 100 * TURN_EVENTS as Seq);
    }

    #[test]
    fn latency_percentiles() {
        let s: Vec<_> = (1..=100).map(Duration::from_millis).collect();
        let l = Latency::of(&s);
        assert_eq!(l.p50, Duration::from_millis(50));
        assert_eq!(l.p99, Duration::from_millis(99));
        assert_eq!(l.max, Duration::from_millis(100));
    }
}
