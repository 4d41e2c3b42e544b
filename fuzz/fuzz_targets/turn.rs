//! The turn: any options JSON, any input text and any model output (texts, vectors) never
//! panic, an error changes nothing beyond the committed input, and no character's prompt ever
//! holds what was said out of its hearing: not a reply's, and not the memory of a scene that
//! closes during the turn (a summary, one per witness).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::turn::{
    GenerateResult, NoSink, Purpose, ScriptedGenerator, Step, TurnInput, TurnMachine, TurnOptions,
};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Engine, EntityId, Event, FactSheet, Position,
};

const SECRET: &str = "zq-secret-zq";

/// The four characters, in the order of their ids.
const NAMES: [&str; 4] = ["Wren", "Ana", "Bo", "Cy"];

fn world() -> (Engine, [EntityId; 4]) {
    let mut engine = Engine::in_memory("fuzz", 0).expect("engine");
    let n = engine.world().next_id();
    let (room, garden) = (ContainerId(n), ContainerId(n + 1));
    let ids = [
        EntityId(n + 2),
        EntityId(n + 3),
        EntityId(n + 4),
        EntityId(n + 5),
    ];
    let mut events = Vec::new();
    for (id, name) in [(room, "Room"), (garden, "Garden")] {
        events.push(Event::ContainerCreated {
            id,
            key: None,
            name: name.into(),
            facts: FactSheet::default(),
            parent: None,
            slots: vec![],
            properties: ContainerProperties::default(),
        });
    }
    let people = [
        ("Wren", true, room, vec![]),
        ("Ana", false, room, vec!["$respond".to_string()]),
        (
            "Bo",
            false,
            room,
            vec![
                "$if mentioned: $respond".into(),
                "$if random() < 0.5: $retry 100".into(),
            ],
        ),
        ("Cy", false, garden, vec!["$respond".to_string()]),
    ];
    for (i, (name, host, at, facts)) in people.into_iter().enumerate() {
        events.push(Event::EntityCreated {
            id: ids[i],
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: FactSheet(facts),
            host_controlled: host,
            state: Default::default(),
        });
        events.push(Event::ActivityChanged {
            entity: ids[i],
            activity: Activity {
                position: Some(Position {
                    container: at,
                    slot: None,
                }),
                ..Default::default()
            },
        });
    }
    engine.append(events).expect("world");
    (engine, ids)
}

fuzz_target!(|data: &[u8]| {
    // The secret is only ever said in the whisper below.
    let text = String::from_utf8_lossy(data).replace(SECRET, "");
    let mut parts = text.split('\u{1}');
    let options = parts.next().unwrap_or_default();
    let input = parts.next().unwrap_or_default();
    let options = if options.trim().is_empty() {
        TurnOptions::default()
    } else {
        match TurnOptions::from_json(options) {
            Ok(o) => o,
            Err(_) => return,
        }
    };
    let (mut engine, ids) = world();
    // Wren whispers a secret to Cy, in the garden, who answers: nobody in the room may ever
    // see it, in the dialogue or in a memory.
    let whisper = TurnInput {
        witnesses: Some(vec![ids[3]]),
        ..TurnInput::say(ids[0], format!("Cy, {SECRET}"), 1)
    };
    engine
        .run_turn_blocking(
            whisper,
            TurnOptions::default(),
            &ScriptedGenerator::default(),
            &mut NoSink,
        )
        .expect("the whisper");
    let head = engine.head();
    let Ok(mut turn) = TurnMachine::begin(&mut engine, TurnInput::say(ids[0], input, 10), options)
    else {
        assert!(
            engine.head() <= head + 2,
            "a refused input commits at most the clock and the input"
        );
        return;
    };
    let mut outputs = parts.map(str::to_string);
    for _ in 0..16 {
        match turn.step(&mut engine) {
            Ok(Step::Generate(request)) => {
                // Whose point of view the prompt is written from: a reply's speaker, or the
                // witness a scene's summary is asked of (named in its last message).
                let asked = request.messages.last().map_or("", |m| m.content.as_str());
                let whose = match request.purpose {
                    Purpose::Reply { speaker } => Some(speaker),
                    Purpose::Summary => NAMES
                        .iter()
                        .position(|n| asked.starts_with(&format!("Write {n}'s memory")))
                        .map(|i| ids[i]),
                    _ => None,
                };
                // Only Wren, who whispered, and Cy, who heard, know the secret.
                if let Some(who) = whose
                    && who != ids[0]
                    && who != ids[3]
                {
                    for m in &request.messages {
                        assert!(
                            !m.content.contains(SECRET),
                            "a prompt leaks what its speaker did not hear"
                        );
                    }
                }
                let before = engine.world().to_bytes();
                // Replies say what the input gives; anything else is answered as the scripted
                // generator would, so that the turn goes on.
                let answer = match request.purpose {
                    Purpose::Reply { .. } => {
                        GenerateResult::text(outputs.next().unwrap_or_default())
                    }
                    _ => ScriptedGenerator::default().answer(&request),
                };
                if turn.provide(&mut engine, answer).is_err() {
                    assert_eq!(engine.world().to_bytes(), before);
                    return;
                }
            }
            Ok(Step::Embed(request)) => {
                let dims = outputs.next().map_or(3, |s| s.len() % 5);
                let vectors = request
                    .texts
                    .iter()
                    .map(|t| (0..dims).map(|i| (t.len() + i) as f32).collect())
                    .collect();
                if turn.provide_embeddings(&mut engine, vectors).is_err() {
                    return;
                }
            }
            Ok(Step::Act(_)) => {
                let refused = Err("no actions in this target".to_owned());
                if turn.provide_action(&mut engine, refused).is_err() {
                    return;
                }
            }
            Ok(Step::Done) => break,
            Err(_) => return,
        }
    }
    let _ = turn.finish(&mut engine);
});
