//! State-update answers: any text, read and judged against a small world, never panics or
//! hangs; an answer with problems changes nothing it reports as rejected, the world stays
//! valid (the events of the applied reports replay onto the world they were judged against),
//! and judging is deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::update::{Pass, judge_answer, parse};
use rp_core::{Engine, WitnessSet, World};
use std::sync::LazyLock;

const WORLD: &str = r#"
[world]
name = "Fuzz"

[[containers]]
id = "inn"
name = "The Inn"
slots = [{ name = "hearth", capacity = 1 }]

[[containers]]
id = "cellar"
name = "the cellar"

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "inn"
inventory = ["letter"]

[[entities]]
id = "mira"
name = "Mira"
aliases = ["the innkeeper"]
container = "inn"

[[entities]]
id = "ana"
name = "Ana"
container = "cellar"

[[entities]]
id = "letter"
name = "the letter"

[[entities]]
id = "mug"
name = "a mug"
container = "inn"
"#;

static BASE: LazyLock<World> = LazyLock::new(|| {
    let mut engine = Engine::in_memory("Fuzz", 0).expect("engine");
    engine.apply_world_file("fuzz.toml", WORLD).expect("world");
    engine.world().clone()
});

fuzz_target!(|data: &[u8]| {
    let Ok(answer) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse(answer, &["open_door"]);
    let base = &*BASE;
    let present: WitnessSet = ["Wren", "Mira", "a mug"]
        .iter()
        .filter_map(|n| base.find_entity(n).map(|e| e.id))
        .collect();
    let speaker = present.iter().next().expect("present");
    let lines = vec![(speaker, present.clone())];
    let pass = Pass {
        present: &present,
        lines: &lines,
        remembered: true,
        step: 0.1,
        now: 1000,
    };
    let mut world = base.clone();
    let verdict = judge_answer(&mut world, &pass, &[], answer);
    let applied = verdict
        .reports
        .iter()
        .filter(|r| r.rejected.is_none())
        .count();
    if applied == 0 {
        assert!(verdict.events.is_empty(), "nothing applied, yet events");
    }
    // The applied events replay onto the base world and give the same world.
    let mut replay = base.clone();
    for e in &verdict.events {
        replay.apply(e).expect("an applied report's event replays");
    }
    assert!(replay.to_bytes() == world.to_bytes(), "replay differs");
    let mut again = base.clone();
    let second = judge_answer(&mut again, &pass, &[], answer);
    assert_eq!(
        second.events, verdict.events,
        "judging is not deterministic"
    );
});
