//! Memory retrieval (issue 4, DESIGN §10): rp's recall beside SQLite FTS5 on the same corpus,
//! the same owner filter and the same top 10.
//!
//! Corpus: `N` memories (1M in a full run) over 1,000 owners, 10–40 words each, drawn from a
//! Zipf-distributed (s = 1) vocabulary of 20,000 made-up words, created over 1,000 game hours
//! with significance 0–1. Queries: 2–6 words, one of them among the 5 most common; and
//! "common" queries made only of words among the 10 most common.
//!
//! - rp: `Engine::recall` (k = 10, 8 candidates per result: BM25 top 80 with the owner as a
//!   required clause, reranked by relevance + retention + significance);
//! - FTS5: `mem(text, owner)` with the owner as a token of its own column, `MATCH 'owner: oN
//!   AND text: (w1 OR w2 …)'`, ordered by `-bm25(mem, 1.0, 0.0)` plus the same retention and
//!   significance terms, `LIMIT 10`.
//!
//! Also: indexing throughput (building the index from the world), the cost a turn's 50 new
//! memories add to the next recall, and the time to append the corpus to the log. Figures are
//! wall clock and thread CPU time; the machine is shared. `cargo test --benches` runs a small
//! version as a smoke test.

use rp_benches::{Latency, Rng, Zipf, ms, scaled, time, word};
use rp_core::memory::{MemoryIndex, RecallOptions};
use rp_core::{Engine, EntityId, Event, Memory, MemoryId, MemoryKind, WitnessSet};
use rusqlite::Connection;
use std::hint::black_box;
use std::time::Duration;

const HOUR: i64 = 3_600_000;
const K: usize = 10;

fn report(line: impl AsRef<str>) {
    println!("RESULT recall: {}", line.as_ref());
}

struct Corpus {
    owners: usize,
    /// (owner index, text, created, significance)
    memories: Vec<(usize, String, i64, f64)>,
    words: Vec<String>,
    zipf: Zipf,
}

fn corpus(n: usize, owners: usize, vocabulary: usize) -> Corpus {
    let words: Vec<String> = (0..vocabulary).map(word).collect();
    let zipf = Zipf::new(vocabulary);
    let mut rng = Rng::new(0x5eed_4e11);
    let memories = (0..n)
        .map(|i| {
            let len = rng.between(10, 40);
            let text = (0..len)
                .map(|_| words[zipf.sample(&mut rng)].as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let created = (i as i64) * 1000 * HOUR / n as i64;
            (rng.below(owners), text, created, rng.unit())
        })
        .collect();
    Corpus {
        owners,
        memories,
        words,
        zipf,
    }
}

/// (owner index, query words)
fn queries(c: &Corpus, n: usize, common_only: bool, seed: u64) -> Vec<(usize, Vec<String>)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let owner = rng.below(c.owners);
            let len = rng.between(2, 6);
            let words = if common_only {
                (0..2).map(|_| c.words[rng.below(10)].clone()).collect()
            } else {
                let mut w = vec![c.words[rng.below(5)].clone()];
                w.extend((1..len).map(|_| c.words[c.zipf.sample(&mut rng)].clone()));
                w
            };
            (owner, words)
        })
        .collect()
}

/// A world in memory holding `n` entities, the owners of the memories to come.
fn world_of_owners(name: &str, n: usize) -> (Engine, Vec<EntityId>) {
    let mut engine = Engine::in_memory(name, 0).expect("engine");
    let first = engine.world().next_id();
    let owners: Vec<EntityId> = (0..n as u64).map(|i| EntityId(first + i)).collect();
    let created = owners
        .iter()
        .enumerate()
        .map(|(i, id)| Event::EntityCreated {
            id: *id,
            key: None,
            name: format!("owner {i}"),
            aliases: vec![],
            facts: Default::default(),
            host_controlled: false,
            state: Default::default(),
        })
        .collect();
    engine.append(created).expect("owners");
    (engine, owners)
}

fn rp_world(c: &Corpus) -> (Engine, Vec<EntityId>, Duration) {
    let (mut engine, owners) = world_of_owners("recall bench", c.owners);
    let (_, took) = time(|| {
        for chunk in c.memories.chunks(1000) {
            let first = engine.world().next_id();
            let events = chunk
                .iter()
                .enumerate()
                .map(
                    |(i, (owner, text, created, significance))| Event::MemoryAdded {
                        memory: Memory {
                            id: MemoryId(first + i as u64),
                            owner: owners[*owner],
                            witnesses: WitnessSet::from_iter([owners[*owner]]),
                            text: text.clone(),
                            kind: MemoryKind::Utterance,
                            significance: *significance,
                            created: *created,
                            last_accessed: None,
                            access_count: 0,
                            decay: Default::default(),
                            pinned: false,
                            embedding: None,
                            scene: None,
                            stability: 0.0,
                            summary: None,
                            feeling: None,
                            about: None,
                            sources: Vec::new(),
                        },
                    },
                )
                .collect();
            engine.append(events).expect("memories");
        }
    });
    (engine, owners, took)
}

fn fts5(c: &Corpus) -> (Connection, Duration) {
    let db = Connection::open_in_memory().expect("sqlite");
    // The bundled SQLite has no math functions: retention (docs/memory.md) as a Rust scalar
    // function, the same arithmetic as rp's for a memory never recalled.
    db.create_scalar_function(
        "retention",
        2,
        rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let age: f64 = ctx.get(0)?;
            let sig: f64 = ctx.get(1)?;
            let base = rp_core::DriveSettings::default().memory_stability_ms();
            let stability = rp_core::retention::initial_stability(base, sig);
            Ok(rp_core::retention::retention(age, stability))
        },
    )
    .expect("function");
    db.execute_batch(
        "CREATE VIRTUAL TABLE mem USING fts5(text, owner, created UNINDEXED, sig UNINDEXED);",
    )
    .expect("fts5");
    let (_, took) = time(|| {
        let tx = db.unchecked_transaction().expect("tx");
        {
            let mut insert = tx
                .prepare("INSERT INTO mem(text, owner, created, sig) VALUES (?1, ?2, ?3, ?4)")
                .expect("insert");
            for (owner, text, created, sig) in &c.memories {
                insert
                    .execute(rusqlite::params![text, format!("o{owner}"), created, sig])
                    .expect("row");
            }
        }
        tx.commit().expect("commit");
    });
    (db, took)
}

/// FTS5's top 10 for (owner, words): BM25 on the text column plus the same retention and
/// significance terms as rp.
fn fts5_query(db: &Connection, owner: usize, words: &[String], now: i64) -> usize {
    let matched = format!("owner : o{owner} AND text : ({})", words.join(" OR "));
    let mut q = db
        .prepare_cached(
            "SELECT rowid, -bm25(mem, 1.0, 0.0) \
               + retention(?2 - created, sig) + sig AS score \
             FROM mem WHERE mem MATCH ?1 ORDER BY score DESC LIMIT 10",
        )
        .expect("query");
    let rows = q
        .query_map(rusqlite::params![matched, now], |r| r.get::<_, i64>(0))
        .expect("rows");
    rows.count()
}

/// Semantic recall: exact cosine over the speaker's memories (no vector index). A world of
/// owners holding 1,000 memories each (as in the main corpus) with 384-dimension vectors;
/// recall with a query vector, p50/p99.
fn semantic(c: &Corpus) {
    const DIMS: usize = 384;
    let owners = scaled(20, 4);
    let per_owner = scaled(1000, 100);
    let mut rng = Rng::new(0x5e3a);
    let vector = |rng: &mut Rng| -> Vec<f32> { (0..DIMS).map(|_| rng.signed() as f32).collect() };
    let (mut engine, ids) = world_of_owners("semantic", owners);
    for (o, owner) in ids.iter().enumerate() {
        let first = engine.world().next_id();
        let events = (0..per_owner)
            .map(|i| Event::MemoryAdded {
                memory: Memory {
                    id: MemoryId(first + i as u64),
                    owner: *owner,
                    witnesses: WitnessSet::from_iter([*owner]),
                    text: c.memories[(o * per_owner + i) % c.memories.len()].1.clone(),
                    kind: MemoryKind::Utterance,
                    significance: 0.5,
                    created: 0,
                    last_accessed: None,
                    access_count: 0,
                    decay: Default::default(),
                    pinned: false,
                    embedding: Some(vector(&mut rng)),
                    scene: None,
                    stability: 0.0,
                    summary: None,
                    feeling: None,
                    about: None,
                    sources: Vec::new(),
                },
            })
            .collect();
        engine.append(events).expect("memories");
    }
    let mut options = RecallOptions {
        k: K,
        ..RecallOptions::default()
    };
    engine.recall(ids[0], "warm", 0, &options).expect("warm");
    let mut times = Vec::new();
    for q in 0..scaled(200, 20) {
        options.query_embedding = Some(vector(&mut rng));
        let owner = ids[q % ids.len()];
        let text = format!("{} {}", c.words[0], c.words[q % c.words.len()]);
        let (found, t) = time(|| engine.recall(owner, &text, 0, &options).expect("recall"));
        assert_eq!(found.len(), K);
        times.push(t);
    }
    let l = Latency::of(&times);
    report(format!(
        "semantic recall, exact cosine over {per_owner} memories of {DIMS} dimensions per speaker: p50 {} ms p99 {} ms",
        ms(l.p50),
        ms(l.p99)
    ));
}

fn main() {
    let n = scaled(1_000_000, 20_000);
    let owners = scaled(1000, 100);
    let vocabulary = scaled(20_000, 2000);
    let nq = scaled(400, 40);
    report(format!(
        "corpus: {n} memories, {owners} owners, 10-40 words, Zipf vocabulary of {vocabulary}"
    ));
    let c = corpus(n, owners, vocabulary);

    let (mut engine, ids, append) = rp_world(&c);
    report(format!(
        "appending the corpus to the log (1000 MemoryAdded per batch): {:.1} s, {:.0} memories/s",
        append.as_secs_f64(),
        n as f64 / append.as_secs_f64()
    ));
    let (index, build) = time(|| MemoryIndex::build(engine.world()).expect("index"));
    drop(index);
    report(format!(
        "indexing (MemoryIndex::build from the world): {:.1} s, {:.0} memories/s (target >= 50k/s; rebuild of 1M <= 30 s)",
        build.as_secs_f64(),
        n as f64 / build.as_secs_f64()
    ));
    let (db, fts_build) = fts5(&c);
    report(format!(
        "FTS5 insert of the same corpus: {:.1} s, {:.0} memories/s",
        fts_build.as_secs_f64(),
        n as f64 / fts_build.as_secs_f64()
    ));

    let options = RecallOptions {
        k: K,
        ..RecallOptions::default()
    };
    let now = 1000 * HOUR;
    // The first recall builds the engine's index.
    let (_, first) = time(|| {
        engine
            .recall(ids[0], "warm", now, &options)
            .expect("recall")
    });
    report(format!(
        "first recall (builds the in-memory index): {:.1} s",
        first.as_secs_f64()
    ));

    for (label, common, seed) in [("mixed", false, 1u64), ("common words only", true, 2)] {
        let qs = queries(&c, nq, common, seed);
        let mut rp = Vec::with_capacity(qs.len());
        let mut sq = Vec::with_capacity(qs.len());
        let mut rp_found = 0usize;
        let mut sq_found = 0usize;
        for (owner, words) in &qs {
            let text = words.join(" ");
            let (found, t) = time(|| {
                engine
                    .recall(ids[*owner], black_box(&text), now, &options)
                    .expect("recall")
            });
            rp_found += found.len();
            rp.push(t);
            let (count, t) = time(|| fts5_query(&db, *owner, words, now));
            sq_found += count;
            sq.push(t);
        }
        let (a, b) = (Latency::of(&rp), Latency::of(&sq));
        report(format!(
            "{label} queries ({nq}): rp p50 {} ms p99 {} ms max {} ms | FTS5 p50 {} ms p99 {} ms max {} ms | FTS5/rp at p99 {:.1}x | results {} vs {}",
            ms(a.p50),
            ms(a.p99),
            ms(a.max),
            ms(b.p50),
            ms(b.p99),
            ms(b.max),
            b.p99.as_secs_f64() / a.p99.as_secs_f64(),
            rp_found,
            sq_found
        ));
    }

    semantic(&c);

    // A turn's cost: 50 new memories, then the next recall sees them.
    let mut rng = Rng::new(7);
    let mut plain = Vec::new();
    let mut with_new = Vec::new();
    for round in 0..scaled(20, 3) {
        let owner = ids[rng.below(ids.len())];
        let (_, t) = time(|| {
            engine
                .recall(owner, "zo ba", now, &options)
                .expect("recall")
        });
        plain.push(t);
        let events: Vec<Event> = (0..50)
            .map(|i| {
                let id = MemoryId(engine.world().next_id() + i);
                Event::MemoryAdded {
                    memory: Memory {
                        id,
                        owner,
                        witnesses: WitnessSet::from_iter([owner]),
                        text: format!("round {round} brand new memory number {i} zo ba"),
                        kind: MemoryKind::Utterance,
                        significance: 0.5,
                        created: now,
                        last_accessed: None,
                        access_count: 0,
                        decay: Default::default(),
                        pinned: false,
                        embedding: None,
                        scene: None,
                        stability: 0.0,
                        summary: None,
                        feeling: None,
                        about: None,
                        sources: Vec::new(),
                    },
                }
            })
            .collect();
        let (found, t) = time(|| {
            engine.append(events).expect("append");
            engine
                .recall(owner, "zo ba", now, &options)
                .expect("recall")
        });
        assert!(found.iter().any(|r| {
            engine
                .world()
                .memory(r.id)
                .is_some_and(|m| m.text.contains("brand new"))
        }));
        with_new.push(t);
    }
    let (a, b) = (Latency::of(&plain), Latency::of(&with_new));
    report(format!(
        "a turn with 50 new memories: append + recall p50 {} ms (recall alone {} ms): {} ms added (target <= 1 ms)",
        ms(b.p50),
        ms(a.p50),
        ms(b.p50.saturating_sub(a.p50))
    ));
}
