//! Time to first prompt, and how it grows with a campaign (issue 23, items 1, 5 and 6): what a
//! player waits for between opening a long save and the first reply being asked for.
//!
//! **Save.** 10,000 entities, ten to a room in 1,000 rooms that do not hear each other; in each
//! room a host-controlled player slot, a character that owns memories, and eight bystanders;
//! edges from each owner to its nine roommates and back. Then `N` memories over the 1,000
//! owners (the recall bench's corpus: 10–40 words from a Zipf vocabulary of 20,000 made-up
//! words, over 1,000 game hours), appended through the engine in batches of 10,000 with
//! `Durability::Eventual`. The save gets one snapshot at its head, as a long campaign's save
//! has; one recall then builds the memory index, kept beside the save (`SAVE.index`); the
//! engine is closed.
//!
//! **Measured in a fresh process** (this binary again, `RP_FIRST_PROMPT_CHILD`), so no cache
//! of ours survives: `Engine::open`, then `Engine::inspect_prompt` for the first room's
//! character on a new line (recall included: the kept index is read and checked), then a few
//! whole turns (the player speaks, the character answers through an instant generator) whose
//! engine time is the turn figure of the scale table. Peak RSS is the child's `VmHWM`.
//! - `warm`: the save's files are in the page cache (they were just read);
//! - `cold`: they are evicted first (`posix_fadvise(DONTNEED)` after a sync; the bench prints
//!   how much stayed resident, which `mincore` measures). The binary and its libraries stay
//!   cached;
//! - `index deleted`: as `warm`, with the memory index beside the save deleted, so the first
//!   recall builds it again (the speaker's memories only: the others' wait for their own first
//!   recall).
//!
//! `N` is 10k, 100k and 1M in a full run; `RP_FIRST_PROMPT_SIZES=10000,100000,1000000,5000000`
//! sets it (5M needs about 8 GB of RAM and 5 GB of disk). `cargo test --benches` runs 2,000.
//! Targets (1M): warm ≤ 300 ms, cold ≤ 1 s; a turn grows ≤ 2× from 100k to 5M; the save ≤ 3×
//! the memories' raw text.

use rp_benches::{
    Latency, Rng, Stopwatch, Vocabulary, WORLD_NAME, add_snapshots, bytes_under, disk_bytes_under,
    evict, file_size, files_under, loadavg, ms, peak_rss_kib, resident, scaled, setup_options,
    wait_for_background,
};
use rp_core::memory::{MemoryIndex, RecallOptions};
use rp_core::turn::{GenerateResult, PromptOptions, Step, TurnInput, TurnOptions};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Edge, Engine, EntityId, EntityState, Event,
    FactSheet, Memory, MemoryId, MemoryKind, Millis, Position, Slot, WitnessSet,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const HOUR: i64 = 3_600_000;
/// The host clock when the world is created; the memories are older, the turns newer.
const START: Millis = 1_700_000_000_000;
const ROOMS: usize = 1_000;
const PER_ROOM: usize = 10;
const CHUNK: usize = 10_000;
const CHILD: &str = "RP_FIRST_PROMPT_CHILD";
const CHILD_TURNS: &str = "RP_FIRST_PROMPT_CHILD_TURNS";
/// Turns timed in each child, after the first prompt.
const TURNS: usize = 20;

fn report(line: impl AsRef<str>) {
    println!("RESULT first_prompt: {}", line.as_ref());
}

fn main() {
    if let Ok(path) = std::env::var(CHILD) {
        child(Path::new(&path));
        return;
    }
    let sizes: Vec<usize> = match std::env::var("RP_FIRST_PROMPT_SIZES") {
        Ok(s) => s
            .split(',')
            .map(|n| n.trim().parse().expect("RP_FIRST_PROMPT_SIZES: numbers"))
            .collect(),
        Err(_) => scaled(vec![10_000, 100_000, 1_000_000], vec![2_000]),
    };
    let runs = std::env::var("RP_FIRST_PROMPT_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(scaled(5, 1));
    report(format!("load average before: {}", loadavg()));
    let mut rows = Vec::new();
    let mut kept = Vec::new();
    for n in sizes {
        let dir = tempfile::tempdir_in(env_dir()).expect("temp dir");
        let save = dir.path().join("campaign.rp");
        let built = build(&save, n);
        let index = index_dir(&save);
        let (mut warm, mut cold, mut rebuilt) = (Vec::new(), Vec::new(), Vec::new());
        // Each child works on a copy (its turns write to the save).
        let copy = dir.path().join("run.rp");
        let copy_index = index_dir(&copy);
        for run in 0..runs {
            // Rotate which goes first, so none always follows another.
            let mut order = [Mode::Warm, Mode::Cold, Mode::Rebuilt];
            order.rotate_left(run % 3);
            for mode in order {
                copy_save(&save, &copy);
                // On disk before the run, so no writeback competes with the child.
                sync(&[&copy, &copy_index]);
                if mode == Mode::Cold {
                    evict(&[&copy, &copy_index]);
                } else {
                    // Opened once before (no turns), as a save the player just closed.
                    spawn(&copy, 1.0, false);
                }
                if mode == Mode::Rebuilt {
                    std::fs::remove_dir_all(&copy_index).expect("delete the index");
                }
                let cached = resident(&[&copy, &copy_index]);
                let r = spawn(&copy, cached, true);
                assert_eq!(
                    r.loaded,
                    mode != Mode::Rebuilt,
                    "the kept index is read back, a deleted one built again"
                );
                if std::env::var_os("RP_FIRST_PROMPT_EACH").is_some() {
                    report(format!(
                        "  run {run} {mode:?}: {}",
                        Summary::of(&[r]).line()
                    ));
                }
                match mode {
                    Mode::Warm => warm.push(r),
                    Mode::Cold => cold.push(r),
                    Mode::Rebuilt => rebuilt.push(r),
                }
            }
        }
        let row = Row::of(n, &built, &save, &index, [&warm, &cold, &rebuilt]);
        row.print();
        rows.push(row);
        kept.push(dir);
    }
    table(&rows);
    if std::env::var_os("RP_FIRST_PROMPT_KEEP").is_some() {
        for dir in kept {
            report(format!("kept {}", dir.keep().display()));
        }
    }
    report(format!("load average after: {}", loadavg()));
}

/// How the save is found by the measured child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Its files in the page cache (it was just opened).
    Warm,
    /// Its files evicted from the page cache.
    Cold,
    /// As `Warm`, its memory index deleted: built again for the speaker by the first recall.
    Rebuilt,
}

/// Where the saves are made: `RP_BENCH_DIR`, or the system's temporary directory (a tmpfs there
/// makes `cold` the same as `warm`; the bench says how much stayed resident).
fn env_dir() -> PathBuf {
    std::env::var_os("RP_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

fn index_dir(save: &Path) -> PathBuf {
    let mut name = save.as_os_str().to_owned();
    name.push(".index");
    PathBuf::from(name)
}

/// Replaces `to` (and its index) with a copy of `from` (and its index).
fn copy_save(from: &Path, to: &Path) {
    let (from_index, to_index) = (index_dir(from), index_dir(to));
    let _ = std::fs::remove_file(to);
    let _ = std::fs::remove_dir_all(&to_index);
    std::fs::copy(from, to).expect("copy the save");
    std::fs::create_dir(&to_index).expect("index directory");
    for file in files_under(&from_index) {
        let rel = file.strip_prefix(&from_index).expect("under the index");
        let dest = to_index.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).expect("index directory");
        }
        std::fs::copy(&file, dest).expect("copy the index");
    }
}

fn sync(paths: &[&Path]) {
    for path in paths {
        for file in files_under(path) {
            std::fs::File::open(file)
                .and_then(|f| f.sync_all())
                .expect("sync");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The save.

/// What building the save produced.
struct Built {
    events: u64,
    /// Bytes of memory text.
    text_bytes: u64,
    /// Bytes of the encoded events.
    log_bytes: u64,
    snapshot_bytes: u64,
}

/// The entities of room `r`: the player slot, the owner, the bystanders.
fn room_entity(first: u64, r: usize, k: usize) -> EntityId {
    EntityId(first + (ROOMS + r * PER_ROOM + k) as u64)
}

fn build(save: &Path, n: usize) -> Built {
    let v = Vocabulary::new(20_000);
    let mut rng = Rng::new(0x5eed_f157);
    let mut engine =
        Engine::create_with(save, WORLD_NAME, START - 1001 * HOUR, setup_options()).expect("save");
    let first = engine.world().next_id();
    let genesis = genesis(first, &v, &mut rng);
    let mut log_bytes: u64 = genesis
        .iter()
        .map(|e| rp_core::log::codec::encode_event(e).len() as u64)
        .sum();
    for chunk in genesis.chunks(CHUNK) {
        engine.append(chunk.to_vec()).expect("genesis");
    }
    let owners: Vec<EntityId> = (0..ROOMS).map(|r| room_entity(first, r, 1)).collect();
    let mut text_bytes = 0;
    let mut done = 0;
    while done < n {
        let id0 = engine.world().next_id();
        let batch: Vec<Event> = (0..CHUNK.min(n - done))
            .map(|i| {
                let k = done + i;
                let owner = owners[rng.below(owners.len())];
                let text = v.text(&mut rng, 10, 40);
                text_bytes += text.len() as u64;
                Event::MemoryAdded {
                    memory: Memory::new(
                        MemoryId(id0 + i as u64),
                        owner,
                        WitnessSet::from_iter([owner]),
                        text,
                        MemoryKind::Utterance,
                        rng.unit(),
                        START - 1000 * HOUR + (k as i64) * 1000 * HOUR / n as i64,
                    ),
                }
            })
            .collect();
        log_bytes += batch
            .iter()
            .map(|e| rp_core::log::codec::encode_event(e).len() as u64)
            .sum::<u64>();
        done += batch.len();
        engine.append(batch).expect("memories");
    }
    engine.flush().expect("flush");
    let world = engine.world().clone();
    let events = engine.head();
    drop(engine);
    let snapshot_bytes = add_snapshots(save, &[(events, &world)])[0] as u64;
    drop(world);
    // Build the kept index, as the campaign's last session did.
    let mut engine = Engine::open(save).expect("reopen");
    let speaker = room_entity(first, 0, 1);
    engine
        .recall(speaker, "warm up", START, &RecallOptions::default())
        .expect("recall");
    drop(engine);
    Built {
        events,
        text_bytes,
        log_bytes,
        snapshot_bytes,
    }
}

/// The rooms, the entities, where they stand and the owners' edges.
fn genesis(first: u64, v: &Vocabulary, rng: &mut Rng) -> Vec<Event> {
    let mut events = Vec::new();
    let slots = ["bar", "hearth", "long table", "window seat", "stairs"];
    for r in 0..ROOMS {
        events.push(Event::ContainerCreated {
            id: ContainerId(first + r as u64),
            key: Some(format!("room-{r}")),
            name: format!("room {r}"),
            facts: FactSheet(vec![v.text(rng, 8, 14)]),
            parent: None,
            slots: slots
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
    for r in 0..ROOMS {
        for k in 0..PER_ROOM {
            let id = room_entity(first, r, k);
            let mut facts = vec![
                format!("Person {r}-{k}, one of the folk of room {r}."),
                v.text(rng, 8, 14),
                v.text(rng, 8, 14),
            ];
            // The owner answers every line; the bystanders listen.
            facts.push(
                if k == 1 {
                    "$if content.length > 0: $respond"
                } else {
                    "$respond false"
                }
                .into(),
            );
            events.push(Event::EntityCreated {
                id,
                key: Some(format!("p{r}-{k}")),
                name: format!("Person {r}-{k}"),
                aliases: vec![],
                facts: FactSheet(facts),
                host_controlled: k == 0,
                state: EntityState {
                    mood: Some("calm".into()),
                    goals: vec![v.text(rng, 3, 6)],
                    status: None,
                },
            });
            events.push(Event::ActivityChanged {
                entity: id,
                activity: Activity {
                    position: Some(Position {
                        container: ContainerId(first + r as u64),
                        slot: Some(slots[k % slots.len()].into()),
                    }),
                    ..Activity::default()
                },
            });
        }
        let owner = room_entity(first, r, 1);
        for k in (0..PER_ROOM).filter(|k| *k != 1) {
            let other = room_entity(first, r, k);
            for (from, to) in [(owner, other), (other, owner)] {
                events.push(Event::EdgeUpdated {
                    edge: Edge {
                        from,
                        to,
                        affinity: rng.signed(),
                        trust: rng.signed(),
                        summary: v.text(rng, 6, 12),
                        knowledge: vec![v.text(rng, 3, 6)],
                        private_moments: Vec::new(),
                        last_interaction: Some(START - 1000 * HOUR),
                        imprints: Vec::new(),
                        source: None,
                    },
                });
            }
        }
    }
    events
}

// ---------------------------------------------------------------------------------------------
// The fresh process.

/// One child's figures.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    open: Duration,
    prompt: Duration,
    /// Open and prompt, measured in the child from its first instruction.
    first_prompt: Duration,
    /// From the child's first instruction until what a loaded world builds on another thread
    /// after the open (what fades when) is ready.
    settled: Duration,
    /// From spawning the child to its exit, as the parent sees it (process start included).
    wall: Duration,
    turn_p50: Duration,
    /// Building the whole memory index in the child (only where it was deleted).
    whole_index: Duration,
    rss_kib: u64,
    /// The fraction of the save's files in the page cache when the child started.
    resident: f64,
    /// Whether the kept memory index was read back (not built again).
    loaded: bool,
}

/// Runs the child on `save`; without `turns` it only opens and builds the prompt (which
/// writes nothing to the save).
fn spawn(save: &Path, resident: f64, turns: bool) -> Run {
    let exe = std::env::current_exe().expect("this binary");
    let sw = Stopwatch::start();
    let out = Command::new(exe)
        .env(CHILD, save)
        .env(CHILD_TURNS, if turns { TURNS } else { 0 }.to_string())
        .output()
        .expect("run the child");
    let wall = sw.stop().wall;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("CHILD "))
        .expect("the child's figures");
    let field = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    Run {
        open: Duration::from_micros(field("open_us")),
        prompt: Duration::from_micros(field("prompt_us")),
        first_prompt: Duration::from_micros(field("first_prompt_us")),
        settled: Duration::from_micros(field("settled_us")),
        wall,
        turn_p50: Duration::from_micros(field("turn_p50_us")),
        whole_index: Duration::from_micros(field("whole_index_us")),
        rss_kib: field("rss_kib"),
        resident,
        loaded: line.contains("origin=\"Some(Loaded"),
    }
}

/// In the fresh process: open, the first prompt, then a few turns.
fn child(save: &Path) {
    let sw = Stopwatch::start();
    let mut engine = Engine::open(save).expect("open");
    let open = sw.stop().wall;
    let world = engine.world();
    let first = world.entities().map(|e| e.id.0).min().expect("entities") - ROOMS as u64;
    let (player, speaker) = (room_entity(first, 0, 0), room_entity(first, 0, 1));
    let v = Vocabulary::new(20_000);
    let mut rng = Rng::new(7);
    let line = v.text(&mut rng, 8, 16);
    let t0 = sw.stop().wall;
    let prompt = engine
        .inspect_prompt(speaker, Some(&line), START, &PromptOptions::default())
        .expect("prompt");
    let first_prompt = sw.stop().wall;
    assert!(prompt.text().len() > 100, "a prompt was built");
    // The world's schedule of what fades when, built on another thread after the open (a
    // decay pass in the meantime builds it itself, as this read does); then waits for that
    // thread, so the turns below are not timed beside it.
    std::hint::black_box(engine.world().next_fading_after(0));
    wait_for_background();
    let settled = sw.stop().wall;
    let origin = format!("{:?}", engine.memory_index_origin());
    let count: usize = std::env::var(CHILD_TURNS)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(TURNS);
    let mut turns = Vec::with_capacity(count);
    for t in 0..count {
        let input = TurnInput::say(
            player,
            v.text(&mut rng, 8, 16),
            START + (t as i64 + 1) * 60_000,
        );
        let reply = v.text(&mut rng, 10, 30);
        let sw = Stopwatch::start();
        let mut turn = engine
            .begin_turn_with(input, TurnOptions::default())
            .expect("begin");
        loop {
            match turn.step().expect("step") {
                Step::Generate(_) => turn
                    .provide(GenerateResult::text(reply.clone()))
                    .expect("provide"),
                Step::Done => break,
                other => panic!("unexpected step {other:?}"),
            }
        }
        let outcome = turn.finish().expect("finish");
        turns.push(sw.stop().wall);
        assert_eq!(
            outcome.replies.len(),
            1,
            "the character answers: {outcome:?}"
        );
    }
    let rss = peak_rss_kib().unwrap_or(0);
    // The baseline of a deleted index: building it whole, as before it was built one speaker
    // at a time (after the figures above, so it weighs on none of them).
    let whole = if origin.contains("Built") {
        let sw = Stopwatch::start();
        std::hint::black_box(MemoryIndex::build(engine.world()).expect("build"));
        sw.stop().wall
    } else {
        Duration::ZERO
    };
    println!(
        "CHILD open_us={} prompt_us={} first_prompt_us={} settled_us={} turn_p50_us={} whole_index_us={} rss_kib={rss} origin={origin:?}",
        open.as_micros(),
        (first_prompt - t0).as_micros(),
        first_prompt.as_micros(),
        settled.as_micros(),
        // No turns (a run that only opens): none to report.
        if turns.is_empty() {
            0
        } else {
            Latency::of(&turns).p50.as_micros()
        },
        whole.as_micros(),
    );
}

// ---------------------------------------------------------------------------------------------
// Figures.

struct Row {
    memories: usize,
    events: u64,
    save_bytes: u64,
    /// What the save takes on disk (a redb file is sparse where it has grown but not written).
    save_disk: u64,
    index_bytes: u64,
    text_bytes: u64,
    log_bytes: u64,
    snapshot_bytes: u64,
    warm: Summary,
    cold: Summary,
    rebuilt: Summary,
}

/// Medians of a set of runs.
#[derive(Default)]
struct Summary {
    open: Duration,
    prompt: Duration,
    first_prompt: Duration,
    settled: Duration,
    wall: Duration,
    turn: Duration,
    whole_index: Duration,
    rss_kib: u64,
    resident: f64,
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

impl Summary {
    fn of(runs: &[Run]) -> Summary {
        let m = |f: fn(&Run) -> Duration| median(runs.iter().map(f).collect());
        Summary {
            open: m(|r| r.open),
            prompt: m(|r| r.prompt),
            first_prompt: m(|r| r.first_prompt),
            settled: m(|r| r.settled),
            wall: m(|r| r.wall),
            turn: m(|r| r.turn_p50),
            whole_index: m(|r| r.whole_index),
            rss_kib: runs.iter().map(|r| r.rss_kib).max().unwrap_or(0),
            resident: median(runs.iter().map(|r| r.resident).collect()),
        }
    }

    fn line(&self) -> String {
        format!(
            "open {} + prompt {} = {} (every lookup built at {}; process wall {}); turn p50 {}; peak RSS {} MB; {:.0}% of the files cached at start",
            ms(self.open),
            ms(self.prompt),
            ms(self.first_prompt),
            ms(self.settled),
            ms(self.wall),
            ms(self.turn),
            self.rss_kib / 1024,
            self.resident * 100.0
        )
    }
}

impl Row {
    fn of(n: usize, b: &Built, save: &Path, index: &Path, runs: [&[Run]; 3]) -> Row {
        let [warm, cold, rebuilt] = runs;
        Row {
            memories: n,
            events: b.events,
            save_bytes: file_size(save),
            save_disk: disk_bytes_under(save),
            index_bytes: bytes_under(index),
            text_bytes: b.text_bytes,
            log_bytes: b.log_bytes,
            snapshot_bytes: b.snapshot_bytes,
            warm: Summary::of(warm),
            cold: Summary::of(cold),
            rebuilt: Summary::of(rebuilt),
        }
    }

    fn print(&self) {
        let mb = |b: u64| b as f64 / 1e6;
        report(format!(
            "{} memories, {} events: save {:.1} MB on disk, {:.1} MB long (log {:.1} MB encoded, snapshot {:.1} MB), index {:.1} MB, memory text {:.1} MB",
            self.memories,
            self.events,
            mb(self.save_disk),
            mb(self.save_bytes),
            mb(self.log_bytes),
            mb(self.snapshot_bytes),
            mb(self.index_bytes),
            mb(self.text_bytes),
        ));
        report(format!("  warm: {}", self.warm.line()));
        report(format!("  cold: {}", self.cold.line()));
        report(format!("  index deleted: {}", self.rebuilt.line()));
        report(format!(
            "  index deleted, built whole instead (the baseline): {} more, {} in all",
            ms(self.rebuilt.whole_index),
            ms(self.rebuilt.open + self.rebuilt.whole_index + self.rebuilt.prompt)
        ));
    }
}

/// The scale table, with the growth factor per 10× of memories (from the row 10× smaller).
fn table(rows: &[Row]) {
    report("");
    report(
        "| memories | events | warm first prompt | cold first prompt | index deleted | turn (p50) | peak RSS | save on disk | save / text | bytes per memory | bytes per event |",
    );
    report("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (i, r) in rows.iter().enumerate() {
        let tenth = rows[..i].iter().find(|p| p.memories * 10 == r.memories);
        let grow = |f: fn(&Row) -> f64| match tenth {
            Some(p) => format!(" (×{:.2})", f(r) / f(p)),
            None => String::new(),
        };
        report(format!(
            "| {} | {} | {}{} | {}{} | {}{} | {}{} | {} MB{} | {:.0} MB{} | {:.2} | {:.0} | {:.0} |",
            r.memories,
            r.events,
            ms(r.warm.first_prompt),
            grow(|r| r.warm.first_prompt.as_secs_f64()),
            ms(r.cold.first_prompt),
            grow(|r| r.cold.first_prompt.as_secs_f64()),
            ms(r.rebuilt.first_prompt),
            grow(|r| r.rebuilt.first_prompt.as_secs_f64()),
            ms(r.warm.turn),
            grow(|r| r.warm.turn.as_secs_f64()),
            r.warm.rss_kib.max(r.cold.rss_kib) / 1024,
            grow(|r| r.warm.rss_kib.max(r.cold.rss_kib) as f64),
            r.save_disk as f64 / 1e6,
            grow(|r| r.save_disk as f64),
            r.save_disk as f64 / r.text_bytes as f64,
            r.save_disk as f64 / r.memories as f64,
            r.save_disk as f64 / r.events as f64,
        ));
    }
    if let (Some(a), Some(b)) = (
        rows.iter().find(|r| r.memories == 100_000),
        rows.iter().find(|r| r.memories == 5_000_000),
    ) {
        report(format!(
            "turn from 100k to 5M memories: ×{:.2} (target ≤ 2)",
            b.warm.turn.as_secs_f64() / a.warm.turn.as_secs_f64()
        ));
    }
}
