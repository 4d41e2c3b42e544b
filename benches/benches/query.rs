//! Graph queries and the world query loop (issue 10, item 8).
//!
//! On a world of 10k entities and 100k directed edges: neighbours (both directions), the
//! entities within 2 hops (outgoing) and a shortest path of at most 4 hops, through
//! `rp_core::graph::Relationships`; beside them in the same run, the same three queries as
//! recursive CTEs in SQLite (an in-memory database with the edges indexed both ways).
//! Target: p99 ≤ 0.5 ms for each of rp's.
//!
//! Then the engine time of a three-round world query (expand an entity, walk its
//! relationships, answer), the model left out: `begin`, three `provide`s and `finish` (the
//! commit of the record), timed around the engine's calls only. Target: ≤ 5 ms.
//!
//! `cargo test --benches` runs a smoke version (a small world, few samples).

use rp_benches::{Latency, Rng, ms, report, scaled, setup_options};
use rp_core::graph::{Direction, MAX_RESULTS};
use rp_core::query::{QueryInput, QueryMachine};
use rp_core::turn::{GenerateResult, Step};
use rp_core::{Edge, Engine, EntityId, EntityState, Event, FactSheet, store::MemoryStore};
use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "harbour", "brandy", "silver", "lantern", "storm", "debt", "letter", "pier", "market",
    "chapel", "guard", "mill", "rope", "salt", "candle", "drum",
];

/// An engine holding `entities` entities and `edges` distinct directed edges.
fn world(entities: usize, edges: usize, rng: &mut Rng) -> (Engine, Vec<EntityId>) {
    let mut engine =
        Engine::new_in(Box::new(MemoryStore::new()), "Graph", 0, setup_options()).expect("engine");
    let first = engine.world().next_id();
    let ids: Vec<EntityId> = (0..entities as u64).map(|i| EntityId(first + i)).collect();
    let created: Vec<Event> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Event::EntityCreated {
            id: *id,
            key: None,
            name: format!("Person {i}"),
            aliases: vec![],
            facts: FactSheet(vec![
                if i % 10 == 0 {
                    "is a location"
                } else {
                    "is a character"
                }
                .into(),
                format!(
                    "Knows the {} and the {}.",
                    WORDS[rng.below(WORDS.len())],
                    WORDS[rng.below(WORDS.len())]
                ),
            ]),
            host_controlled: false,
            state: EntityState::default(),
        })
        .collect();
    engine.append(created).expect("entities");
    let mut seen = BTreeSet::new();
    let mut batch = Vec::new();
    while seen.len() < edges {
        let (a, b) = (ids[rng.below(entities)], ids[rng.below(entities)]);
        if a == b || !seen.insert((a, b)) {
            continue;
        }
        batch.push(Event::EdgeUpdated {
            edge: Edge {
                affinity: rng.signed(),
                trust: rng.signed(),
                summary: "knows".into(),
                ..Edge::new(a, b)
            },
        });
        if batch.len() == 10_000 {
            engine.append(std::mem::take(&mut batch)).expect("edges");
        }
    }
    engine.append(batch).expect("edges");
    (engine, ids)
}

fn sqlite(engine: &Engine) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().expect("sqlite");
    conn.execute_batch(
        "CREATE TABLE edges (src INTEGER NOT NULL, dst INTEGER NOT NULL, PRIMARY KEY (src, dst)) WITHOUT ROWID;
         CREATE INDEX edges_in ON edges (dst, src);",
    )
    .expect("schema");
    let txn = conn.unchecked_transaction().expect("begin");
    {
        let mut insert = txn
            .prepare("INSERT INTO edges (src, dst) VALUES (?1, ?2)")
            .expect("prepare");
        for e in engine.world().edges() {
            insert
                .execute([e.from.0 as i64, e.to.0 as i64])
                .expect("insert");
        }
    }
    txn.commit().expect("commit");
    conn
}

fn timed<T>(samples: &mut Vec<Duration>, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = black_box(f());
    samples.push(t.elapsed());
    out
}

fn main() {
    let entities = scaled(10_000, 400);
    let edges = scaled(100_000, 4_000);
    let samples = scaled(2_000, 40);
    let mut rng = Rng::new(10);
    let (mut engine, ids) = world(entities, edges, &mut rng);
    let conn = sqlite(&engine);

    let neighbours_sql =
        "SELECT dst FROM edges WHERE src = ?1 UNION SELECT src FROM edges WHERE dst = ?1";
    let hops_sql = "WITH RECURSIVE r(node, depth) AS (
            SELECT ?1, 0
            UNION
            SELECT e.dst, r.depth + 1 FROM r JOIN edges e ON e.src = r.node WHERE r.depth < 2
        )
        SELECT node, min(depth) FROM r WHERE node <> ?1 GROUP BY node";
    let path_sql = "WITH RECURSIVE r(node, depth, path) AS (
            SELECT ?1, 0, ',' || ?1 || ','
            UNION ALL
            SELECT e.dst, r.depth + 1, r.path || e.dst || ','
            FROM r JOIN edges e ON e.src = r.node
            WHERE r.depth < 4 AND r.node <> ?2 AND instr(r.path, ',' || e.dst || ',') = 0
        )
        SELECT path FROM r WHERE node = ?2 ORDER BY depth LIMIT 1";
    let mut stmt_n = conn.prepare(neighbours_sql).expect("prepare");
    let mut stmt_h = conn.prepare(hops_sql).expect("prepare");
    let mut stmt_p = conn.prepare(path_sql).expect("prepare");

    let rel = engine.relationships();
    let mut times: [Vec<Duration>; 6] = Default::default();
    for _ in 0..samples {
        let a = ids[rng.below(ids.len())];
        let b = ids[rng.below(ids.len())];
        let n_rp = timed(&mut times[0], || {
            rel.connected(a, 1, Direction::Both, MAX_RESULTS)
                .expect("neighbours")
                .len()
        });
        let n_sql = timed(&mut times[1], || {
            stmt_n
                .query_map([a.0 as i64], |r| r.get::<_, i64>(0))
                .expect("query")
                .count()
        });
        assert_eq!(n_rp, n_sql, "neighbours of {a}");
        let h_rp = timed(&mut times[2], || {
            rel.connected(a, 2, Direction::Outgoing, MAX_RESULTS)
                .expect("2 hops")
                .len()
        });
        let h_sql = timed(&mut times[3], || {
            stmt_h
                .query_map([a.0 as i64], |r| r.get::<_, i64>(0))
                .expect("query")
                .count()
        });
        assert_eq!(h_rp, h_sql, "2 hops from {a}");
        let p_rp = timed(&mut times[4], || rel.path_within(a, b, 4).expect("path"));
        // The CTE enumerates every simple path of up to 4 hops (tens of ms each): a tenth of
        // the samples is enough for its figures.
        if times[5].len() * 10 < times[4].len() {
            let p_sql: Option<String> = timed(&mut times[5], || {
                stmt_p
                    .query_row([a.0 as i64, b.0 as i64], |r| r.get(0))
                    .ok()
            });
            assert_eq!(
                p_rp.as_ref().map(|p| p.len()),
                p_sql.map(|s| s.trim_matches(',').split(',').count()),
                "path length {a} → {b}"
            );
        }
    }
    let names = ["neighbours", "2-hop", "path (≤ 4 hops)"];
    for (i, name) in names.iter().enumerate() {
        let (r, s) = (Latency::of(&times[2 * i]), Latency::of(&times[2 * i + 1]));
        report(format!(
            "query graph {name}, {entities} entities, {edges} edges: rp p50 {} ms p99 {} ms | sqlite CTE p50 {} ms p99 {} ms | sqlite / rp (p50) = {:.1}x | target rp p99 <= 0.500 ms",
            ms(r.p50),
            ms(r.p99),
            ms(s.p50),
            ms(s.p99),
            s.p50.as_secs_f64() / r.p50.as_secs_f64().max(1e-9)
        ));
    }
    let stats = rel.stats();
    report(format!(
        "query graph stats: {} entities, {} edges, {} mutual pairs, max out {}, max in {}",
        stats.entities, stats.edges, stats.mutual_pairs, stats.max_outgoing, stats.max_incoming
    ));

    // The engine's share of a three-round query.
    let rounds = scaled(200, 10);
    let mut engine_times = Vec::with_capacity(rounds);
    // The first query builds the entity index, the graph and the kinds (kept afterwards).
    for i in 0..=rounds {
        let mut spent = Duration::ZERO;
        let mut clock = |f: &mut dyn FnMut()| {
            let t = Instant::now();
            f();
            spent += t.elapsed();
        };
        let input = QueryInput::new("Who knows the harbour and the brandy?", 1_000 + i as i64);
        let mut machine = None;
        clock(&mut || {
            machine = Some(QueryMachine::begin(&mut engine, input.clone()).expect("begin"))
        });
        let mut m = machine.expect("machine");
        let target = m.context().expandable_entity_ids()[0];
        let replies = [
            format!(
                r#"{{"type": "needs_more_info", "reason": "details", "requests": [{{"capability_id": "EXPAND_ENTITY", "params": {{"entity_id": {}}}, "reason": "who"}}]}}"#,
                target.0
            ),
            format!(
                r#"{{"type": "needs_more_info", "reason": "ties", "requests": [{{"capability_id": "GET_RELATIONSHIPS", "params": {{"entity_ids": [{}], "direction": "both", "max_hops": 2}}, "reason": "who they know"}}]}}"#,
                target.0
            ),
            format!(
                r#"{{"type": "answer", "content": "Person {} does.", "confidence": "medium", "sources": [{{"entity_id": {}, "contribution": "facts", "relevance": 0.8}}]}}"#,
                target.0, target.0
            ),
        ];
        for reply in replies {
            let mut step = None;
            clock(&mut || step = Some(m.step(&mut engine).expect("step")));
            assert!(matches!(step, Some(Step::Generate(_))));
            let result = GenerateResult::text(reply);
            let mut result = Some(result);
            clock(&mut || {
                m.provide(&mut engine, result.take().expect("once"))
                    .expect("provide")
            });
        }
        let mut done = None;
        let mut m = Some(m);
        clock(&mut || done = Some(m.take().expect("once").finish(&mut engine).expect("finish")));
        let outcome = done.expect("outcome");
        assert_eq!(outcome.iterations, 2);
        assert!(outcome.query.answer.is_some());
        if i > 0 {
            engine_times.push(spent);
        }
    }
    let q = Latency::of(&engine_times);
    report(format!(
        "query loop, three rounds, engine only, {entities} entities, {edges} edges: p50 {} ms p99 {} ms (n = {}) | target <= 5 ms",
        ms(q.p50),
        ms(q.p99),
        q.n
    ));
}
