//! Validation and application of a state-update pass (issue 6, item 8): an answer of 20
//! reports of every kind, judged against a world of 50 entities with 10 present, through
//! `rp_core::update::judge_answer` (strict parse, name resolution, range checks, the engine's
//! own arithmetic, and each report's events applied to a copy of the world). Target: ≤ 200 µs.
//!
//! Baseline in the same run: `serde_json::from_str::<Value>` of the same answer, the least any
//! reader of it pays. `cargo test --benches` runs a smoke version.

use rp_benches::{Latency, ms, scaled};
use rp_core::update::{Pass, judge_answer};
use rp_core::{Engine, EntityId, WitnessSet};
use std::hint::black_box;
use std::time::Instant;

fn world_file() -> String {
    let mut s = String::from("[world]\nname = \"Bench\"\n\n");
    for r in 0..5 {
        s.push_str(&format!(
            "[[containers]]\nid = \"room{r}\"\nname = \"room {r}\"\nslots = [{{ name = \"bench\", capacity = 4 }}]\n\n"
        ));
    }
    for i in 0..50 {
        s.push_str(&format!(
            "[[entities]]\nid = \"e{i}\"\nname = \"Person {i}\"\ncontainer = \"room{}\"\nmood = \"calm\"\nfacts = \"$respond false\"\n\n",
            i / 10
        ));
    }
    for i in 0..10 {
        s.push_str(&format!("[[entities]]\nid = \"item{i}\"\nname = \"cup {i}\"\ncontainer = \"room0\"\nfacts = \"$respond false\"\n\n"));
    }
    s
}

fn answer() -> String {
    let mut reports = Vec::new();
    for i in 0..20usize {
        let who = format!("Person {}", i % 10);
        let other = format!("Person {}", (i + 3) % 10);
        reports.push(match i % 7 {
            0 => format!(r#"{{"type": "feeling", "who": "{who}", "toward": "{other}", "affinity": "warmer", "trust": "less"}}"#),
            1 => format!(r#"{{"type": "learned", "who": "{who}", "about": "{other}", "fact": "Knows the tide tables by heart ({i})."}}"#),
            2 => format!(r#"{{"type": "relationship", "who": "{who}", "toward": "{other}", "summary": "An old friend who owes a favour ({i})."}}"#),
            3 => format!(r#"{{"type": "state", "who": "{who}", "mood": "restless", "goals": ["find the ferry", "pay the debt"]}}"#),
            4 => format!(r#"{{"type": "activity", "who": "{who}", "slot": "bench", "posture": "sitting", "action": "mending a net"}}"#),
            5 => format!(r#"{{"type": "activity", "who": "{who}", "pick_up": "cup {}"}}"#, i % 10),
            _ => format!(r#"{{"type": "significance", "who": "{who}", "line": 1, "significance": 0.8}}"#),
        });
    }
    format!("{{\"reports\": [{}]}}", reports.join(",\n"))
}

fn main() {
    let mut engine = Engine::in_memory("Bench", 0).expect("engine");
    engine
        .apply_world_file("bench.toml", &world_file())
        .expect("world");
    let world = engine.world().clone();
    let present: WitnessSet = (0..10)
        .map(|i| {
            world
                .find_entity(&format!("Person {i}"))
                .expect("person")
                .id
        })
        .collect();
    let speaker: EntityId = present.iter().next().expect("someone");
    let lines = vec![(speaker, present.clone()), (speaker, present.clone())];
    let pass = Pass {
        present: &present,
        lines: &lines,
        remembered: true,
        step: 0.1,
        now: 1000,
    };
    let answer = answer();
    // Check once: every report is valid.
    let mut w = world.clone();
    let v = judge_answer(&mut w, &pass, &[], &answer);
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    assert_eq!(v.reports.len(), 20);

    let rounds = scaled(20_000, 50);
    let mut judged = Vec::with_capacity(rounds);
    let mut parsed = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let mut w = world.clone();
        let v = judge_answer(&mut w, &pass, &[], black_box(&answer));
        black_box((w, v));
        judged.push(t.elapsed());
        let t = Instant::now();
        black_box(serde_json::from_str::<serde_json::Value>(black_box(&answer)).expect("json"));
        parsed.push(t.elapsed());
    }
    let (j, p) = (Latency::of(&judged), Latency::of(&parsed));
    println!(
        "RESULT updates: judge_answer, 20 reports, 50 entities, 10 present: p50 {} ms p99 {} ms (n = {}) | target p50 <= 0.200 ms",
        ms(j.p50),
        ms(j.p99),
        j.n
    );
    println!(
        "RESULT updates: baseline serde_json::Value parse of the same {} bytes: p50 {} ms | judge / parse = {:.1}x",
        answer.len(),
        ms(p.p50),
        j.p50.as_secs_f64() / p.p50.as_secs_f64()
    );
}
