//! Characters that live between turns (issue 19, item 12).
//!
//! 1. **Nothing due, 10,000 characters.** A world of 10,000 characters in 1,000 rooms (ten to
//!    a room, each knowing three roommates and the room's player). A host that sleeps until
//!    `next_tick_at` and then ticks calls both once per wake-up; when a tick has nothing to do,
//!    that pair is what it pays. Timed: `next_tick_at` plus a tick at a moment before it (which
//!    must ask for nothing and commit nothing). Target ≤ 1 ms. Beside it, in the same run, the
//!    baseline it avoids: the same answer worked out from scratch over every character
//!    (`rp_core::drives::next_tick`, what the engine does once after each change of the world).
//! 2. **A day in the tavern.** `examples/tavern.toml`, 24 game hours played by
//!    `rp_core::tick::advance` with a scripted model: model calls per character per game hour
//!    (every generation request: initiations, replies, state updates, summaries), the engine's
//!    CPU time for the day, and whether every character initiated at least once. Target ≤ 1 call
//!    per character per game hour; printed beside Generative Agents' ~54 calls per agent-hour.
//!
//!    The day also brings each character what a tavern brings: the fire crackling (NORMAL),
//!    glasses clinking (LOW), now and then a note under the door (a HIGH message), a crash in
//!    the kitchen in the afternoon (CRITICAL, to everyone), and late in the afternoon a dozen knocks at
//!    Tobias's door within minutes (a pattern). Reported: where those stimuli stopped (issue 20,
//!    item 6: reflex and rules call no model; classify and think do), and the share that
//!    stopped before any model.
//!
//! `cargo test --benches` runs a smoke version (fewer characters, fewer samples).

use rp_benches::{Latency, ms, report, scaled, setup_options, thread_cpu};
use rp_core::machine::{Step, block_on};
use rp_core::store::MemoryStore;
use rp_core::tick::{TickOptions, advance};
use rp_core::turn::ScriptedGenerator;
use rp_core::*;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

const HOUR: i64 = 3_600_000;

fn at(c: ContainerId) -> Activity {
    Activity {
        position: Some(Position {
            container: c,
            slot: None,
        }),
        ..Default::default()
    }
}

/// `rooms` rooms, each with a player and `per_room` characters who know three roommates and
/// the player.
fn village(rooms: usize, per_room: usize) -> Engine {
    let mut engine = Engine::new_in(
        Box::new(MemoryStore::new()),
        "Village",
        8 * HOUR,
        setup_options(),
    )
    .expect("engine");
    let mut next = engine.world().next_id();
    let mut fresh = || {
        next += 1;
        next - 1
    };
    for r in 0..rooms {
        let room = ContainerId(fresh());
        let player = EntityId(fresh());
        let people: Vec<EntityId> = (0..per_room).map(|_| EntityId(fresh())).collect();
        let mut events = vec![Event::ContainerCreated {
            id: room,
            key: None,
            name: format!("Room {r}"),
            facts: Default::default(),
            parent: None,
            slots: vec![],
            properties: Default::default(),
        }];
        for (i, id) in std::iter::once(&player).chain(&people).enumerate() {
            events.push(Event::EntityCreated {
                id: *id,
                key: None,
                name: format!("Person {r}-{i}"),
                aliases: vec![],
                facts: Default::default(),
                host_controlled: i == 0,
                state: Default::default(),
            });
            events.push(Event::ActivityChanged {
                entity: *id,
                activity: at(room),
            });
        }
        for (i, a) in people.iter().enumerate() {
            for b in (1..=3).map(|k| people[(i + k) % per_room]).chain([player]) {
                events.push(Event::EdgeUpdated {
                    edge: Edge {
                        affinity: ((i % 5) as f64 - 2.0) / 4.0,
                        ..Edge::new(*a, b)
                    },
                });
            }
        }
        engine.append(events).expect("room");
    }
    engine
}

fn nothing_due() {
    let rooms = scaled(1_000, 20);
    let samples = scaled(2_000, 20);
    let mut engine = village(rooms, 10);
    let characters = engine.world().minds().count();
    let now = engine.world().now();
    // The first call after a change works the schedule out; the rest read it.
    let start = Instant::now();
    let next = engine
        .next_tick_at(now)
        .expect("next")
        .expect("something is due");
    let schedule = start.elapsed();
    assert!(next.at > now);
    let head = engine.head();
    let mut cached = Vec::with_capacity(samples);
    let mut scratch = Vec::with_capacity(samples);
    for i in 0..samples {
        let start = Instant::now();
        let next = engine.next_tick_at(now).expect("next").expect("due");
        let mut tick = engine
            .begin_tick(now + (i as i64 % 1_000), TickOptions::default())
            .expect("tick");
        assert!(matches!(tick.step(&mut engine).expect("step"), Step::Done));
        let outcome = tick.finish(&mut engine).expect("finish");
        cached.push(start.elapsed());
        black_box((next, outcome));
        let start = Instant::now();
        black_box(rp_core::drives::next_tick(engine.world(), now));
        scratch.push(start.elapsed());
    }
    assert_eq!(
        engine.head(),
        head,
        "a tick with nothing due commits nothing"
    );
    let c = Latency::of(&cached);
    let s = Latency::of(&scratch);
    report(format!(
        "drives.noop_tick characters={characters} p50_ms={} p99_ms={} target_ms=1",
        ms(c.p50),
        ms(c.p99)
    ));
    report(format!(
        "drives.next_tick_from_scratch characters={characters} p50_ms={} p99_ms={} ratio_p50={:.0}x first_call_after_change_ms={}",
        ms(s.p50),
        ms(s.p99),
        s.p50.as_secs_f64() / c.p50.as_secs_f64().max(1e-9),
        ms(schedule)
    ));
}

fn tavern_day() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine = Engine::in_memory("Day", 0).expect("engine");
    engine.load_world_file(path).expect("the tavern");
    let start_at = engine.world().now();
    let characters: Vec<EntityId> = engine
        .world()
        .minds()
        .filter(|(id, _)| {
            engine.world().drive_settings(*id).enabled
                && engine
                    .world()
                    .entity(*id)
                    .is_some_and(|e| e.activity.position.is_some())
        })
        .map(|(id, _)| id)
        .collect();
    let generator = ScriptedGenerator::new("{name} looks up. ({n})");
    let hours = scaled(24, 6);
    let options = TickOptions::default();
    let cpu = thread_cpu();
    let wall = Instant::now();
    let stimuli = day_of_stimuli(&engine, &characters, start_at, hours);
    let tobias = engine.world().entity_by_key("tobias").expect("tobias").id;
    let knock = r#"{"description": "a knock means a customer", "on": {"stimulus": "sound"},
        "condition": "content.includes('knock')", "intent": {"drive": "task", "amount": 0.3}}"#;
    engine
        .add_rule(tobias, knock, start_at)
        .expect("Tobias's rule");
    // The morning in the booth with Tobias; at midday Wren takes a stool at the bar, within
    // Mira's earshot (the host's one move of the day).
    let midday = start_at + hours / 2 * HOUR;
    let mut outcomes = play(&mut engine, midday, &stimuli, &options, &generator);
    let w = engine.world();
    let wren = w.entity_by_key("wren").expect("wren");
    let bar = w.container_by_key("bar").expect("the bar").id;
    let mut activity = wren.activity.clone();
    activity.position = Some(Position {
        container: bar,
        slot: Some("stools".into()),
    });
    let wren = wren.id;
    engine
        .append(vec![Event::ActivityChanged {
            entity: wren,
            activity,
        }])
        .expect("Wren moves to the bar");
    outcomes.extend(play(
        &mut engine,
        start_at + hours * HOUR,
        &stimuli,
        &options,
        &generator,
    ));
    let cpu = thread_cpu() - cpu;
    let wall = wall.elapsed();
    let requests = generator.requests();
    let mut by_purpose: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &requests {
        *by_purpose.entry(r.purpose.name()).or_default() += 1;
    }
    let initiators: std::collections::BTreeSet<EntityId> = outcomes
        .iter()
        .flat_map(|o| &o.initiations)
        .map(|i| i.candidate.speaker)
        .collect();
    let all_initiated = characters.iter().all(|c| initiators.contains(c));
    let mut per_character: BTreeMap<String, usize> = BTreeMap::new();
    for i in outcomes.iter().flat_map(|o| &o.initiations) {
        let name = engine
            .world()
            .entity(i.candidate.speaker)
            .map_or_else(|| i.candidate.speaker.to_string(), |e| e.name.clone());
        *per_character.entry(name).or_default() += 1;
    }
    let per_hour = requests.len() as f64 / (characters.len() as f64 * hours as f64);
    let layers = outcomes.iter().fold([0u32; 4], |mut acc, o| {
        let l = o.layers;
        for (slot, n) in acc.iter_mut().zip([l.reflex, l.rules, l.classify, l.think]) {
            *slot += n;
        }
        acc
    });
    let processed: u32 = layers.iter().sum();
    let no_model = f64::from(layers[0] + layers[1]) / f64::from(processed.max(1));
    report(format!(
        "drives.tavern_day hours={hours} characters={} ticks={} model_calls={} calls_per_character_hour={per_hour:.2} target<=1 generative_agents~54 by_purpose={by_purpose:?} every_character_initiated={all_initiated} initiations={per_character:?} stimuli_sent={} stimuli_processed={processed} stopped_reflex={} stopped_rules={} stopped_classify={} stopped_think={} share_without_model={no_model:.3} goal=most engine_cpu_ms={} wall_ms={}",
        characters.len(),
        outcomes.len(),
        requests.len(),
        stimuli.len(),
        layers[0],
        layers[1],
        layers[2],
        layers[3],
        ms(cpu),
        ms(wall),
    ));
}

/// One stimulus the day brings: when, to whom, of what kind and priority, what.
type Sent = (Millis, EntityId, &'static str, Priority, String);

/// What a day in a tavern brings each character (see the module's docs), in time order.
fn day_of_stimuli(
    engine: &Engine,
    characters: &[EntityId],
    start: Millis,
    hours: i64,
) -> Vec<Sent> {
    let mut out: Vec<Sent> = Vec::new();
    for h in 0..hours {
        for (i, c) in characters.iter().enumerate() {
            let t = start + h * HOUR + (7 + 11 * i as i64) * 60_000;
            out.push((t, *c, "sound", Priority::Normal, "the fire crackles".into()));
            if h % 3 == 1 {
                out.push((
                    t + 20 * 60_000,
                    *c,
                    "sound",
                    Priority::Low,
                    "a glass clinks".into(),
                ));
            }
            if h % 6 == 2 {
                let note = "a note slipped under the door: meet me at the well";
                out.push((t + 30 * 60_000, *c, "message", Priority::High, note.into()));
            }
        }
        if h == hours * 5 / 8 {
            for c in characters {
                let t = start + h * HOUR + 45 * 60_000;
                out.push((
                    t,
                    *c,
                    "sound",
                    Priority::Critical,
                    "a crash in the kitchen".into(),
                ));
            }
        }
    }
    if let Some(tobias) = engine.world().entity_by_key("tobias").map(|e| e.id) {
        let evening = start + (hours * 2 / 3) * HOUR;
        for k in 0..12 {
            let t = evening + k * 30_000;
            out.push((
                t,
                tobias,
                "sound",
                Priority::Normal,
                "a knock at the door".into(),
            ));
        }
    }
    out.sort_by_key(|s| (s.0, s.1));
    out
}

/// Plays the day from the world's clock to `until`, delivering each of `stimuli` due on the
/// way at its time.
fn play(
    engine: &mut Engine,
    until: Millis,
    stimuli: &[Sent],
    options: &TickOptions,
    generator: &ScriptedGenerator,
) -> Vec<rp_core::tick::TickOutcome> {
    let mut outcomes = Vec::new();
    let from = engine.world().now();
    for (at, who, kind, priority, payload) in stimuli.iter().filter(|s| s.0 > from && s.0 <= until)
    {
        outcomes.extend(block_on(advance(engine, *at, options, generator)).expect("the day"));
        engine
            .notify(*who, kind, *priority, payload, *at)
            .expect("a stimulus");
    }
    outcomes.extend(block_on(advance(engine, until, options, generator)).expect("the day"));
    outcomes
}

fn main() {
    nothing_due();
    tavern_day();
}
