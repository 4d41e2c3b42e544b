//! Memory that fades and reflects (issue 20, item 10; docs/memory.md).
//!
//! 1. **The decay pass over 1M memories.** 1,000 owners holding 1,000 memories each, formed
//!    over 30 game days with significances spread 0–1, each at the stage the passes of those
//!    days left it in; the pass of the next game day (`rp_core::decay::pass`: which memories
//!    move on, which need a summary, when the next pass is due). Timed alone (p50 and max of a
//!    few runs), beside the floor of a pass that would visit every memory, then once through
//!    the tick that commits it. Target ≤ 50 ms. Then the same for a save whose memories never
//!    faded (every one still whole: the first pass's backlog).
//! 2. **A week in the tavern.** `examples/tavern.toml` played for seven game days, a tick at
//!    each `next_tick_at`, with the scripted model (whose unscripted summaries, reflections and
//!    classifications are valid JSON); Wren answers each first line addressed to her a minute
//!    later, curtly one time in three ("ok"), warmly otherwise (a player who ignored them all
//!    week would teach the characters to stop speaking to her: docs/rules.md). Memory
//!    summaries and reflections per character per game day, printed beside Generative Agents'
//!    2–3 reflections per agent-day, and what faded.
//!
//! `cargo test --benches` runs a smoke version (fewer memories, two days).

use rp_benches::{Latency, Rng, ms, report, scaled, thread_cpu, time};
use rp_core::machine::{NoSink, block_on};
use rp_core::tick::TickOptions;
use rp_core::turn::{ScriptedGenerator, TurnInput};
use rp_core::*;
use std::collections::BTreeMap;
use std::hint::black_box;

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

/// A world of `owners` × `per_owner` memories formed over the 30 days before `day`, with
/// significances spread 0–1. `steady`: each memory at the stage the passes of those 30 days
/// left it in (summaries, residues, forgotten ones as their retention fell); else every memory
/// still whole, as in a save whose memories never faded (the first pass's backlog).
fn world(owners: usize, per_owner: usize, day: Millis, steady: bool) -> Engine {
    let mut engine = Engine::in_memory("Decay", 0).expect("engine");
    let first = engine.world().next_id();
    let people: Vec<EntityId> = (0..owners as u64).map(|i| EntityId(first + i)).collect();
    engine
        .append(
            people
                .iter()
                .map(|id| Event::EntityCreated {
                    id: *id,
                    key: None,
                    name: format!("P{}", id.0),
                    aliases: vec![],
                    facts: Default::default(),
                    host_controlled: false,
                    state: Default::default(),
                })
                .collect(),
        )
        .expect("people");
    let rule = FadeRule::of(&DriveSettings::default());
    let mut rng = Rng::new(20);
    for (o, owner) in people.iter().enumerate() {
        let other = people[(o + 1) % owners];
        let mut next = engine.world().next_id();
        let events: Vec<Event> = (0..per_owner)
            .map(|_| {
                let id = MemoryId(next);
                next += 1;
                let mut memory = Memory {
                    id,
                    owner: *owner,
                    witnesses: WitnessSet::from_iter([*owner, other]),
                    text: "Wren paid for the ale in silver and asked about the road north".into(),
                    kind: MemoryKind::Utterance,
                    significance: rng.unit(),
                    created: day - 30 * DAY + rng.below(30 * DAY as usize) as Millis,
                    last_accessed: None,
                    access_count: 0,
                    decay: DecayStage::Full,
                    pinned: false,
                    embedding: None,
                    scene: None,
                    stability: 0.0,
                    summary: None,
                    feeling: None,
                    about: None,
                    sources: vec![],
                };
                while steady
                    && let Some((stage, at)) = memory.fading(&rule)
                    && at <= day
                {
                    memory.decay = stage;
                    if stage == DecayStage::Summary {
                        memory.summary = Some("Wren paid".into());
                        memory.feeling = Some("warm".into());
                        memory.about = Some(other);
                    }
                }
                Event::MemoryAdded { memory }
            })
            .collect();
        engine.append(events).expect("memories");
    }
    engine
}

fn decay_pass() {
    let owners = scaled(1_000usize, 20);
    let per_owner = scaled(1_000usize, 100);
    let memories = owners * per_owner;
    let runs = scaled(7, 2);
    let day = 31 * DAY;
    for steady in [true, false] {
        let (mut engine, built) = time(|| world(owners, per_owner, day - DAY, steady));
        let mut samples = Vec::with_capacity(runs);
        let mut pass = decay::Pass::default();
        for _ in 0..runs {
            let (p, t) = time(|| decay::pass(black_box(engine.world()), day));
            samples.push(t);
            pass = p;
        }
        let l = Latency::of(&samples);
        // The floor of a pass that would visit every memory: a visit that reads one field.
        let mut floor = Vec::with_capacity(runs);
        for _ in 0..runs {
            let (n, t) = time(|| {
                engine
                    .world()
                    .all_memories()
                    .filter(|m| black_box(m.decay) == DecayStage::Full)
                    .count()
            });
            black_box(n);
            floor.push(t);
        }
        let floor = Latency::of(&floor);
        let summaries: usize = pass.summaries.values().map(Vec::len).sum();
        // Its record applied to a copy of the world (validated, the memories moved, each one's
        // next moment worked out again, feelings onto edges).
        let record = Event::DecayPassed {
            at: day,
            changes: pass.changes.clone(),
            next: pass.next,
        };
        let mut copy = engine.world().clone();
        copy.apply(&Event::TimeAdvanced { to: day }).expect("time");
        let ((), applied) = time(|| copy.apply(&record).expect("the record"));
        drop(copy);
        // The same pass through the tick, which commits its arithmetic (one `decay_passed`).
        let (tick, committed) = time(|| {
            engine
                .begin_tick(day, TickOptions::default())
                .expect("the tick")
        });
        let case = if steady {
            "a_game_day target<=50"
        } else {
            "first_pass_of_a_save_that_never_faded"
        };
        report(format!(
            "decay.pass {case} memories={memories} owners={owners} p50_ms={} max_ms={} visit_every_memory_p50_ms={} moved={} summaries_asked={summaries} next_in_h={:.1} | its record applied ms={} | through the tick (pass and commit) ms={} faded={} | built in {} ms",
            ms(l.p50),
            ms(l.max),
            ms(floor.p50),
            pass.changes.len(),
            pass.next
                .map_or(f64::NAN, |n| (n - day) as f64 / HOUR as f64),
            ms(applied),
            ms(committed),
            tick.outcome().faded.len(),
            ms(built),
        ));
    }
}

fn tavern_week() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine = Engine::in_memory("Week", 0).expect("engine");
    engine.load_world_file(path).expect("the tavern");
    let start = engine.world().now();
    let characters = engine
        .world()
        .minds()
        .filter(|(id, _)| engine.world().drive_settings(*id).enabled)
        .count();
    let generator = ScriptedGenerator::new("{name} looks up. ({n})");
    let days = scaled(7, 2);
    let wren = engine.world().entity_by_key("wren").expect("wren").id;
    let until = start + days * DAY;
    let cpu = thread_cpu();
    let mut outcomes = Vec::new();
    let mut answered = 0;
    while let Some(next) = engine
        .next_tick_at(engine.world().now())
        .expect("next tick")
    {
        if next.at > until {
            break;
        }
        let tick = engine
            .begin_tick(next.at, TickOptions::default())
            .expect("a tick");
        let outcome = block_on(rp_core::machine::run(
            &mut engine,
            tick,
            &generator,
            &mut NoSink,
        ))
        .expect("the tick");
        let spoken_to = outcome.initiations.iter().any(|i| i.candidate.to == wren);
        outcomes.push(outcome);
        if spoken_to {
            answered += 1;
            let line = if answered % 3 == 0 {
                "ok"
            } else {
                "Aye, go on. Tell me more about it, I am listening."
            };
            let at = engine.world().now().max(next.at + 60_000);
            engine
                .run_turn_blocking(
                    TurnInput::say(wren, line, at),
                    Default::default(),
                    &generator,
                    &mut NoSink,
                )
                .expect("Wren answers");
        }
    }
    let cpu = thread_cpu() - cpu;
    let requests = generator.requests();
    let mut by_purpose: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &requests {
        let name = match r.purpose {
            Purpose::Summary if r.json_schema.is_some() => "memory_summary",
            Purpose::Summary => "scene_summary",
            p => p.name(),
        };
        *by_purpose.entry(name).or_default() += 1;
    }
    let per_day = |n: usize| n as f64 / (characters as f64 * days as f64);
    let reflections: usize = outcomes.iter().map(|o| o.reflections.len()).sum();
    let insights: usize = outcomes
        .iter()
        .flat_map(|o| &o.reflections)
        .map(|r| r.insights.len())
        .sum();
    let summarized: usize = outcomes.iter().map(|o| o.summarized.len()).sum();
    let faded: usize = outcomes.iter().map(|o| o.faded.len()).sum();
    let memories = engine.world().all_memories().count();
    report(format!(
        "decay.tavern_week days={days} characters={characters} wren_answered={answered} memories={memories} reflections_per_character_day={:.2} generative_agents=2-3 insights={insights} memory_summary_calls_per_character_day={:.2} summarized={summarized} faded={faded} model_calls_per_character_hour={:.2} by_purpose={by_purpose:?} engine_cpu_ms={}",
        per_day(reflections),
        per_day(*by_purpose.get("memory_summary").unwrap_or(&0)),
        requests.len() as f64 / (characters as f64 * days as f64 * 24.0),
        ms(cpu),
    ));
}

fn main() {
    decay_pass();
    tavern_week();
}
