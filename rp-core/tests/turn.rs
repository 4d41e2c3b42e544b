// One file: one suite of the turn, every scenario on the same scripted session and helpers.
//! The turn (issue 5, item 7): a scripted three-party session where one character leaves and
//! comes back, replay of the log against the live world, a crash between `begin_turn` and
//! `finish`, the unhappy paths of the machine, and the canary property: no character ever
//! sees, in a prompt or a recall, a line it did not witness.

use proptest::prelude::*;
use rp_core::memory::RecallOptions;
use rp_core::turn::{GenerateResult, Purpose, ScriptedGenerator, Step, TurnInput, TurnOptions};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Engine, EngineOptions, EntityId, ErrorKind, Event,
    FactSheet, Position, World,
};
use std::collections::{BTreeMap, BTreeSet};

/// Builds rooms (name, parent index, audible range) and entities (name, host-controlled, room
/// index, sheet lines), returning their ids in order.
fn build(
    engine: &mut Engine,
    rooms: &[(&str, Option<usize>, u32)],
    people: &[(&str, bool, usize, &[&str])],
) -> (Vec<ContainerId>, Vec<EntityId>) {
    let mut next = engine.world().next_id();
    let mut events = Vec::new();
    let mut room_ids = Vec::new();
    for (name, parent, range) in rooms {
        let id = ContainerId(next);
        next += 1;
        events.push(Event::ContainerCreated {
            id,
            key: None,
            name: (*name).into(),
            facts: FactSheet::default(),
            parent: parent.map(|p| room_ids[p]),
            slots: vec![],
            properties: ContainerProperties {
                audible_range: *range,
                ..Default::default()
            },
        });
        room_ids.push(id);
    }
    let mut ids = Vec::new();
    for (name, host, room, sheet) in people {
        let id = EntityId(next);
        next += 1;
        events.push(Event::EntityCreated {
            id,
            key: None,
            name: (*name).into(),
            aliases: vec![],
            facts: FactSheet(sheet.iter().map(|s| s.to_string()).collect()),
            host_controlled: *host,
            state: Default::default(),
        });
        events.push(Event::ActivityChanged {
            entity: id,
            activity: at(room_ids[*room]),
        });
        ids.push(id);
    }
    engine.append(events).expect("the world builds");
    (room_ids, ids)
}

fn at(room: ContainerId) -> Activity {
    Activity {
        position: Some(Position {
            container: room,
            slot: None,
        }),
        ..Default::default()
    }
}

fn move_to(engine: &mut Engine, who: EntityId, room: ContainerId) {
    engine
        .append(vec![Event::ActivityChanged {
            entity: who,
            activity: at(room),
        }])
        .expect("the move applies");
}

fn all_events(engine: &Engine) -> Vec<Event> {
    engine
        .events(1, engine.head())
        .unwrap()
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

fn replay(events: &[Event]) -> World {
    let mut w = World::new();
    for e in events {
        w.apply(e).expect("replay applies every event");
    }
    w
}

/// Every reply prompt `speaker` was given by `generator`, as one text.
fn prompts_of(generator: &ScriptedGenerator, speaker: EntityId) -> Vec<String> {
    generator
        .requests()
        .into_iter()
        .filter(|r| r.purpose == Purpose::Reply { speaker })
        .map(|r| {
            r.messages
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

fn turn(
    engine: &mut Engine,
    g: &ScriptedGenerator,
    who: EntityId,
    text: &str,
    now: i64,
) -> rp_core::turn::TurnOutcome {
    run(engine, g, TurnInput::say(who, text, now))
}

/// A whole turn of `input` with the default options, answered by `g`.
fn run(engine: &mut Engine, g: &ScriptedGenerator, input: TurnInput) -> rp_core::turn::TurnOutcome {
    engine
        .run_turn_blocking(input, TurnOptions::default(), g, &mut rp_core::turn::NoSink)
        .expect("the turn runs")
}

#[test]
fn an_absent_character_never_sees_what_was_said_while_it_was_away() {
    let mut engine = Engine::in_memory("Three", 0).unwrap();
    let (rooms, ids) = build(
        &mut engine,
        &[("Parlour", None, 0), ("Garden", None, 0)],
        &[
            ("Wren", true, 0, &[]),
            (
                "Ana",
                false,
                0,
                &["A retired smuggler.", "$if mentioned: $respond"],
            ),
            ("Bo", false, 0, &["A gossip.", "$respond"]),
        ],
    );
    let (wren, ana, bo) = (ids[0], ids[1], ids[2]);
    let g = ScriptedGenerator::new("{name} listens. ({n})");
    g.script(
        ana,
        [
            "The tide turns at midnight.",
            "Nothing happened, dear.",
            "Welcome back.",
        ],
    );
    g.script(bo, ["I heard the cellar creak.", "What did I miss?"]);

    let first = turn(&mut engine, &g, wren, "Evening, Ana and Bo.", 1_000);
    // Ana is mentioned: she answers first; Bo always responds.
    let speakers: Vec<_> = first.replies.iter().map(|r| r.speaker).collect();
    assert_eq!(speakers, vec![ana, bo]);

    // Bo leaves for the garden; a secret is told.
    move_to(&mut engine, bo, rooms[1]);
    let secret = turn(
        &mut engine,
        &g,
        wren,
        "Ana, the key is under the SAPPHIRE stone.",
        2_000,
    );
    assert_eq!(secret.replies.len(), 1, "only Ana heard and answered");
    assert_eq!(secret.replies[0].speaker, ana);
    let bo_decided = secret.decisions.iter().any(|d| d.entity == bo);
    assert!(!bo_decided, "Bo did not hear, so he did not even decide");

    // Bo comes back and is spoken to.
    move_to(&mut engine, bo, rooms[0]);
    let back = turn(
        &mut engine,
        &g,
        wren,
        "Bo! Ana, tell him about the garden party.",
        3_000,
    );
    assert!(back.replies.iter().any(|r| r.speaker == bo));

    // Nothing of the secret, nor Ana's answer to it, in any prompt Bo was given...
    let ana_answer = &secret.replies[0].text;
    let bo_prompts = prompts_of(&g, bo);
    assert_eq!(bo_prompts.len(), 2);
    for p in &bo_prompts {
        assert!(
            !p.contains("SAPPHIRE"),
            "Bo's prompt leaks the secret:\n{p}"
        );
        assert!(
            !p.contains(ana_answer.as_str()),
            "Bo's prompt leaks Ana's answer:\n{p}"
        );
    }
    // ...while Ana's later prompt has it, as dialogue she heard.
    let ana_prompts = prompts_of(&g, ana);
    assert!(ana_prompts.last().unwrap().contains("SAPPHIRE"));
    // Bo remembers what he heard: the scene closed when he left, and his own summary of it
    // stands for its lines (which recall no longer returns).
    let bo_summary = engine
        .world()
        .always_loaded_of(bo)
        .filter(|m| m.kind == rp_core::MemoryKind::SceneSummary)
        .max_by_key(|m| m.id)
        .expect("Bo has a summary of the first scene");
    assert!(
        bo_prompts[1].contains(&bo_summary.text),
        "Bo remembers what he heard, through his summary:\n{}",
        bo_prompts[1]
    );

    // Nor in what Bo can recall or an inspected prompt of his, even when asked directly.
    let recalled = engine
        .recall(
            bo,
            "sapphire stone key",
            4_000,
            &RecallOptions {
                k: 50,
                ..Default::default()
            },
        )
        .unwrap();
    for r in &recalled {
        let m = engine.world().memory(r.id).unwrap();
        assert_eq!(m.owner, bo);
        assert!(
            !m.text.contains("SAPPHIRE"),
            "Bo recalls the secret: {}",
            m.text
        );
    }
    let inspected = engine
        .inspect_prompt(bo, Some("sapphire stone key"), 4_000, &Default::default())
        .unwrap();
    assert!(!inspected.text().contains("SAPPHIRE"));
    let ana_recalls = engine
        .recall(ana, "sapphire", 4_000, &RecallOptions::default())
        .unwrap();
    assert!(
        ana_recalls.iter().any(|r| engine
            .world()
            .memory(r.id)
            .unwrap()
            .text
            .contains("SAPPHIRE")),
        "Ana remembers the secret"
    );

    // Replay of the log equals the live world, byte for byte.
    let replayed = replay(&all_events(&engine));
    assert_eq!(replayed.to_bytes(), engine.world().to_bytes());
}

#[test]
fn a_crash_between_begin_and_finish_leaves_the_input_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.rp");
    let mut engine = Engine::create_with(&path, "Crash", 0, EngineOptions::default()).unwrap();
    let (_, ids) = build(
        &mut engine,
        &[("Room", None, 0)],
        &[("Wren", true, 0, &[]), ("Ana", false, 0, &["$respond"])],
    );
    let before = engine.head();
    let before_world = engine.world().to_bytes();
    {
        let mut turn = engine
            .begin_turn(TurnInput::say(ids[0], "Is anyone there?", 5_000))
            .unwrap();
        let Step::Generate(request) = turn.step().unwrap() else {
            panic!("Ana should be asked to answer");
        };
        assert_eq!(request.purpose, Purpose::Reply { speaker: ids[1] });
        assert!(!turn.machine().is_done());
        turn.provide(GenerateResult::text("Only me.")).unwrap();
        assert!(turn.machine().is_done());
        assert_eq!(turn.step().unwrap(), Step::Done);
        // The process dies here: the turn is dropped without finish.
    }
    drop(engine);
    let engine = Engine::open(&path).unwrap();
    let events: Vec<Event> = engine
        .events(before + 1, engine.head())
        .unwrap()
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        ["time_advanced", "scene_opened", "user_turn"],
        "only the input (and the scene it opens) survives"
    );
    assert_ne!(engine.world().to_bytes(), before_world);
    assert_eq!(engine.world().dialogue().count(), 1);
    assert_eq!(engine.world().all_memories().count(), 0);
}

#[test]
fn the_machine_refuses_out_of_order_calls_and_bad_input_without_changing_anything() {
    let mut engine = Engine::in_memory("Rules", 0).unwrap();
    let (rooms, ids) = build(
        &mut engine,
        &[("Room", None, 0), ("Hall", None, 0)],
        &[("Wren", true, 0, &[]), ("Ana", false, 0, &["$respond"])],
    );
    let (wren, ana) = (ids[0], ids[1]);
    let head = engine.head();
    // A character cannot start a turn; an unknown speaker is not found; time cannot go back.
    let e = engine
        .begin_turn(TurnInput::say(ana, "hi", 10))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let e = engine
        .begin_turn(TurnInput::say(EntityId(999), "hi", 10))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    engine
        .append(vec![Event::TimeAdvanced { to: 100 }])
        .unwrap();
    let e = engine
        .begin_turn(TurnInput::say(wren, "hi", 50))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let e = TurnOptions::from_json(r#"{"max_responders": 0}"#)
        .and_then(|o| {
            engine
                .begin_turn_with(TurnInput::say(wren, "hi", 200), o)
                .map(drop)
        })
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(
        TurnOptions::from_json(r#"{"budget": 3}"#).is_err(),
        "unknown fields are refused"
    );
    assert!(
        TurnOptions::from_json("[]").is_err(),
        "options are an object"
    );
    assert!(
        TurnInput::from_json("[1, \"hi\", 5]").is_err(),
        "an input is an object"
    );
    assert!(rp_core::turn::PromptOptions::from_json("{\"budget_tokens\": 10}").is_ok());
    assert!(
        TurnInput::from_json(r#"{"speaker": 1}"#).is_err(),
        "now is required"
    );
    assert_eq!(engine.head(), head + 1, "nothing but the clock moved");

    let mut turn = engine
        .begin_turn(TurnInput::say(wren, "Ana?", 200))
        .unwrap();
    // Embeddings were not asked for; finishing is too early.
    assert_eq!(
        turn.provide_embeddings(vec![vec![1.0]]).unwrap_err().kind(),
        ErrorKind::Conflict
    );
    let req = turn.step().unwrap();
    assert_eq!(
        turn.step().unwrap(),
        req,
        "step repeats its question until answered"
    );
    let over = "x".repeat(rp_core::log::MAX_TEXT_BYTES + 1);
    assert_eq!(
        turn.provide(GenerateResult::text(over)).unwrap_err().kind(),
        ErrorKind::Invalid
    );
    assert_eq!(
        turn.step().unwrap(),
        req,
        "a refused result changes nothing"
    );
    turn.provide(GenerateResult::text("  Ana: Yes?  ")).unwrap();
    assert_eq!(
        turn.provide(GenerateResult::text("again"))
            .unwrap_err()
            .kind(),
        ErrorKind::Conflict
    );
    let outcome = turn.finish().unwrap();
    assert_eq!(
        outcome.replies[0].text, "Yes?",
        "the echoed name is dropped"
    );

    // The engine moved under a turn: the turn refuses to go on.
    let mut engine2 = engine;
    let mut machine = rp_core::turn::TurnMachine::begin(
        &mut engine2,
        TurnInput::say(wren, "Ana, wait.", 300),
        TurnOptions::default(),
    )
    .unwrap();
    move_to(&mut engine2, ana, rooms[1]);
    assert_eq!(
        machine.step(&mut engine2).unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(
        machine.finish(&mut engine2).unwrap_err().kind(),
        ErrorKind::Conflict
    );

    // Rewound and brought back to the same head by other events: still another world.
    let machine = rp_core::turn::TurnMachine::begin(
        &mut engine2,
        TurnInput::say(wren, "Ana, one more thing.", 400),
        TurnOptions::default(),
    )
    .unwrap();
    let head = engine2.head();
    engine2.rewind(head - 1).unwrap();
    engine2
        .append(vec![Event::TimeAdvanced { to: 450 }])
        .unwrap();
    assert_eq!(engine2.head(), head, "the same head, a different world");
    assert_eq!(
        machine.finish(&mut engine2).unwrap_err().kind(),
        ErrorKind::Conflict,
        "a turn never commits what it worked out on a world that is gone"
    );
}

#[test]
fn retry_and_silence_come_back_to_the_host_and_a_wake_up_turn_answers_later() {
    let mut engine = Engine::in_memory("Retry", 0).unwrap();
    let (_, ids) = build(
        &mut engine,
        &[("Room", None, 0)],
        &[
            ("Wren", true, 0, &[]),
            (
                "Ana",
                false,
                0,
                &["$if retry_ms < 5000: $retry 5000", "$respond"],
            ),
            ("Bo", false, 0, &["$respond false"]),
            (
                "Cy",
                false,
                0,
                &["$respond false", "$if mentioned: $respond"],
            ),
        ],
    );
    let (wren, ana, bo, cy) = (ids[0], ids[1], ids[2], ids[3]);
    let g = ScriptedGenerator::new("{name} answers late. ({n})");
    let first = turn(&mut engine, &g, wren, "Anyone?", 1_000);
    assert!(first.replies.is_empty());
    assert_eq!(
        first.wake,
        vec![rp_core::turn::Wake {
            entity: ana,
            at: 6_000
        }]
    );
    assert!(
        first
            .decisions
            .iter()
            .any(|d| d.entity == bo && !d.decision.respond)
    );
    // The host wakes the world at the asked time: Ana now answers the line she heard.
    let woke = run(&mut engine, &g, TurnInput::wake(wren, 6_000));
    assert_eq!(woke.input, None);
    assert_eq!(woke.replies.len(), 1);
    assert_eq!(woke.replies[0].speaker, ana);
    assert!(prompts_of(&g, ana)[0].contains("Wren: Anyone?"));
    // Woken again, nobody reconsiders: Ana has answered since.
    let again = run(&mut engine, &g, TurnInput::wake(wren, 7_000));
    assert!(
        again.decisions.iter().all(|d| d.entity != ana),
        "Ana already answered"
    );
    assert!(again.replies.is_empty());
    // An empty generation is silence, recorded but not said.
    let g2 = ScriptedGenerator::new("");
    let quiet = turn(&mut engine, &g2, wren, "Cy, still there?", 20_000);
    assert_eq!(quiet.silent, vec![cy]);
    assert!(quiet.replies.is_empty());
    let generated = all_events(&engine)
        .iter()
        .filter(|e| e.kind() == "generated")
        .count();
    assert_eq!(generated, 2);
    assert_eq!(
        replay(&all_events(&engine)).to_bytes(),
        engine.world().to_bytes()
    );
}

#[test]
fn streamed_tokens_reach_the_sink_in_order_and_conversation_timing_is_kept() {
    let mut engine = Engine::in_memory("Stream", 0).unwrap();
    let (_, ids) = build(
        &mut engine,
        &[("Room", None, 0)],
        &[
            ("Wren", true, 0, &[]),
            (
                "Ana",
                false,
                0,
                &["$respond false", "$if unread_count >= 2: $respond"],
            ),
        ],
    );
    let (wren, ana) = (ids[0], ids[1]);
    let g = ScriptedGenerator::new("unused");
    g.script(ana, ["Two words at once, then."]);
    let mut streamed = String::new();
    let mut sink = |p: &Purpose, t: &str| {
        assert_eq!(*p, Purpose::Reply { speaker: ana });
        streamed.push_str(t);
    };
    let one = engine
        .run_turn_blocking(
            TurnInput::say(wren, "One.", 1_000),
            TurnOptions::default(),
            &g,
            &mut sink,
        )
        .unwrap();
    assert!(
        one.replies.is_empty(),
        "one unread line is not enough for Ana"
    );
    assert_eq!(engine.world().speech(ana).unread, 1);
    let two = engine
        .run_turn_blocking(
            TurnInput::say(wren, "Two.", 2_000),
            TurnOptions::default(),
            &g,
            &mut sink,
        )
        .unwrap();
    assert_eq!(two.replies.len(), 1);
    assert_eq!(streamed, "Two words at once, then.");
    let s = engine.world().speech(ana);
    assert_eq!(
        (s.unread, s.last_spoke, s.last_heard),
        (0, Some(2_000), Some(2_000))
    );
    assert_eq!(engine.world().speech(wren).unread, 1);
}

#[test]
fn semantic_turns_ask_the_host_for_vectors() {
    let mut engine = Engine::in_memory("Vectors", 0).unwrap();
    let (_, ids) = build(
        &mut engine,
        &[("Room", None, 0)],
        &[("Wren", true, 0, &[]), ("Ana", false, 0, &["$respond"])],
    );
    let options = TurnOptions {
        semantic: true,
        ..Default::default()
    };
    let g = ScriptedGenerator::default();
    let mut turn = engine
        .begin_turn_with(
            TurnInput::say(ids[0], "Ale or beer?", 1_000),
            options.clone(),
        )
        .unwrap();
    let Step::Embed(q) = turn.step().unwrap() else {
        panic!("a query vector first")
    };
    assert_eq!(q.texts, ["Ale or beer?"]);
    let e = turn
        .provide_embeddings(vec![vec![1.0], vec![1.0]])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "one vector per text");
    turn.provide_embeddings(g.vectors(&q.texts)).unwrap();
    let Step::Generate(r) = turn.step().unwrap() else {
        panic!("then the reply")
    };
    turn.provide(g.answer(&r)).unwrap();
    let Step::Embed(lines) = turn.step().unwrap() else {
        panic!("then the lines' vectors")
    };
    assert_eq!(lines.texts.len(), 2);
    turn.provide_embeddings(g.vectors(&lines.texts)).unwrap();
    turn.finish().unwrap();
    assert!(engine.world().all_memories().all(|m| m.embedding.is_some()));
    // Through Generate, the same turn runs by itself.
    engine
        .run_turn_blocking(
            TurnInput::say(ids[0], "Cider then.", 2_000),
            options,
            &g,
            &mut rp_core::turn::NoSink,
        )
        .unwrap();
    assert_eq!(engine.world().all_memories().count(), 8);
}

#[test]
fn a_failing_generator_abandons_the_turn_and_keeps_the_input() {
    struct Broken;
    #[async_trait::async_trait]
    impl rp_core::turn::Generate for Broken {
        async fn generate(
            &self,
            _: &rp_core::turn::GenerateRequest,
            _: &mut dyn rp_core::turn::TokenSink,
        ) -> Result<GenerateResult, String> {
            Err("the model server is down".into())
        }
    }
    let mut engine = Engine::in_memory("Broken", 0).unwrap();
    let (_, ids) = build(
        &mut engine,
        &[("Room", None, 0)],
        &[("Wren", true, 0, &[]), ("Ana", false, 0, &["$respond"])],
    );
    let head = engine.head();
    let e = engine
        .run_turn_blocking(
            TurnInput::say(ids[0], "Hello?", 1_000),
            TurnOptions::default(),
            &Broken,
            &mut rp_core::turn::NoSink,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert!(e.to_string().contains("model server is down"));
    assert_eq!(
        engine.head(),
        head + 3,
        "the clock, the scene the input opens and the input, nothing else"
    );
}

#[test]
fn prompts_follow_the_seed_order_and_trim_memories_first() {
    let mut engine = Engine::in_memory("Order", 0).unwrap();
    let (rooms, ids) = build(
        &mut engine,
        &[("Inn", None, 0)],
        &[
            ("Wren", true, 0, &[]),
            ("Ana", false, 0, &["A retired smuggler.", "mood: wary"]),
            ("Bo", false, 0, &[]),
            (
                "Ferryman",
                false,
                0,
                &[
                    "keywords: heron seal, ferry",
                    "summary: Poles the marsh ferry.",
                ],
            ),
        ],
    );
    let _ = rooms;
    let (wren, ana, bo, ferryman) = (ids[0], ids[1], ids[2], ids[3]);
    // The ferryman is off stage: lore, not presence.
    engine
        .append(vec![Event::ActivityChanged {
            entity: ferryman,
            activity: rp_core::Activity::default(),
        }])
        .unwrap();
    let mut edge = rp_core::Edge::new(ana, wren);
    edge.summary = "Owes her a favour.".into();
    engine.append(vec![Event::EdgeUpdated { edge }]).unwrap();
    let guild = engine
        .add_memory(rp_core::memory::NewMemory::new(
            ana,
            "The heron seal belongs to the ferrymen's guild.",
        ))
        .unwrap();
    let g = ScriptedGenerator::default();
    turn(
        &mut engine,
        &g,
        wren,
        "Who carries the letter with the heron seal?",
        1_000,
    );
    let asked = Some("Who carries the letter with the heron seal?");
    let p = engine
        .inspect_prompt(ana, asked, 2_000, &Default::default())
        .unwrap();
    use rp_core::turn::Section::*;
    // Remembered lines still in the dialogue section are not shown twice.
    let remembered: Vec<_> = p.pieces.iter().filter(|x| x.section == Memories).collect();
    assert_eq!(remembered.len(), 1, "{remembered:?}");
    assert_eq!(remembered[0].memory, Some(guild));
    let sections: Vec<_> = p.pieces.iter().map(|x| x.section).collect();
    let mut dedup = sections.clone();
    dedup.dedup();
    let order = [Identity, Edges, World, Activity, Dialogue, Memories, Lore];
    assert_eq!(dedup, order, "sections in seed-003 order");
    let lore = p.pieces.iter().find(|x| x.section == Lore).unwrap();
    assert_eq!(lore.entity, Some(ferryman));
    assert!(lore.why.contains("heron seal"), "{}", lore.why);
    assert!(p.text().contains("Owes her a favour."));
    assert!(
        p.pieces
            .iter()
            .any(|x| x.section == Edges && x.entity == Some(bo) && x.text.contains("no history"))
    );
    let recalled = p.pieces.iter().filter(|x| x.section == Memories).count();
    assert!(
        recalled > 0
            && p.pieces
                .iter()
                .filter(|x| x.section == Memories)
                .all(|x| x.score.is_some() && x.why.contains("score"))
    );
    // A tight budget drops recalled memories first, then lore, then old dialogue.
    let tight = rp_core::turn::PromptOptions {
        budget_tokens: p.tokens - 10,
        ..Default::default()
    };
    let t = engine.inspect_prompt(ana, asked, 2_000, &tight).unwrap();
    assert!(!t.trimmed.is_empty());
    assert!(
        t.trimmed.iter().all(|x| x.section == Memories),
        "{:?}",
        t.trimmed
    );
    assert!(t.tokens <= t.budget_tokens);
    // Counting two characters per token doubles the count of the same prompt, about.
    let two = rp_core::turn::PromptOptions {
        chars_per_token: 2,
        budget_tokens: 100_000,
        ..Default::default()
    };
    let t = engine.inspect_prompt(ana, asked, 2_000, &two).unwrap();
    assert!(t.tokens >= 2 * p.tokens - 2 && t.tokens <= 2 * p.tokens + 2);
    let zero = rp_core::turn::PromptOptions {
        chars_per_token: 0,
        ..Default::default()
    };
    assert!(engine.inspect_prompt(ana, asked, 2_000, &zero).is_err());
    let tiny = rp_core::turn::PromptOptions {
        budget_tokens: 1,
        ..Default::default()
    };
    let t = engine.inspect_prompt(ana, asked, 2_000, &tiny).unwrap();
    assert!(
        t.tokens > t.budget_tokens,
        "identity and presence are never dropped"
    );
    assert!(
        t.pieces.iter().any(|x| x.section == Dialogue),
        "the newest line stays"
    );
    assert!(
        t.pieces
            .iter()
            .all(|x| x.section != Memories && x.section != Lore)
    );
}

// ---------------------------------------------------------------------------------------------
// The canary property: random worlds, random sessions, a unique token in every utterance and in
// every scene summary; no character ever sees a token it did not witness, in a prompt (reply or
// summary) or a recall. Witnessing is computed here from the positions the test itself set,
// independently of the engine; a summary's token is witnessed by its owner alone, so no
// character ever sees another's scene summary. Moves close scenes (their witnesses leave).

#[derive(Clone, Debug)]
enum Op {
    Say { player: usize },
    Move { who: usize, room: usize },
}

#[derive(Clone, Debug)]
struct Case {
    /// Per room: parent (an earlier room) and audible range.
    rooms: Vec<(Option<usize>, u32)>,
    /// Per character: starting room and whether its sheet always responds.
    characters: Vec<(usize, bool)>,
    /// Per player: starting room.
    players: Vec<usize>,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..5, 2usize..6, 1usize..3)
        .prop_flat_map(|(rooms, chars, players)| {
            let room = 0..rooms;
            let people = chars + players;
            (
                proptest::collection::vec((any::<prop::sample::Index>(), 0u32..3), rooms),
                proptest::collection::vec((room.clone(), any::<bool>()), chars),
                proptest::collection::vec(room.clone(), players),
                proptest::collection::vec(
                    prop_oneof![
                        3 => (0..players).prop_map(|player| Op::Say { player }),
                        1 => (0..people, room).prop_map(|(who, room)| Op::Move { who, room }),
                    ],
                    1..12,
                ),
            )
        })
        .prop_map(|(rooms, characters, players, ops)| Case {
            rooms: rooms
                .into_iter()
                .enumerate()
                .map(|(i, (p, r))| ((i > 0).then(|| p.index(i)), r))
                .collect(),
            characters,
            players,
            ops,
        })
}

/// Rooms within `range` steps of `from` in the tree of `parents`.
fn reach(parents: &[Option<usize>], from: usize, range: u32) -> BTreeSet<usize> {
    let mut seen = BTreeSet::from([from]);
    let mut frontier = vec![from];
    for _ in 0..range {
        let mut next = Vec::new();
        for &r in &frontier {
            let mut near: Vec<usize> = parents[r].into_iter().collect();
            near.extend((0..parents.len()).filter(|&c| parents[c] == Some(r)));
            for n in near {
                if seen.insert(n) {
                    next.push(n);
                }
            }
        }
        frontier = next;
    }
    seen
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let mut engine = Engine::in_memory("Canary", 0).unwrap();
    let rooms: Vec<(String, Option<usize>, u32)> = c
        .rooms
        .iter()
        .enumerate()
        .map(|(i, (p, r))| (format!("Room{i}"), *p, *r))
        .collect();
    let room_refs: Vec<(&str, Option<usize>, u32)> =
        rooms.iter().map(|(n, p, r)| (n.as_str(), *p, *r)).collect();
    let names: Vec<String> = (0..c.characters.len() + c.players.len())
        .map(|i| format!("P{i}x"))
        .collect();
    let always: &[&str] = &["$respond"];
    let mentioned: &[&str] = &["$if mentioned: $respond", "$respond false"];
    let mut people: Vec<(&str, bool, usize, &[&str])> = Vec::new();
    for (i, (room, eager)) in c.characters.iter().enumerate() {
        people.push((
            &names[i],
            false,
            *room,
            if *eager { always } else { mentioned },
        ));
    }
    for (j, room) in c.players.iter().enumerate() {
        people.push((&names[c.characters.len() + j], true, *room, &[]));
    }
    let (room_ids, ids) = build(&mut engine, &room_refs, &people);
    let parents: Vec<Option<usize>> = c.rooms.iter().map(|r| r.0).collect();
    let mut position: Vec<usize> = people.iter().map(|p| p.2).collect();
    // token → who witnessed it (by the test's own reckoning)
    let mut heard_by: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let g = ScriptedGenerator::new("{name} says canary-r{n}-z.");
    let mut now = 1_000;
    let mut said = 0;
    for op in &c.ops {
        match *op {
            Op::Move { who, room } => {
                move_to(&mut engine, ids[who], room_ids[room]);
                position[who] = room;
            }
            Op::Say { player } => {
                let who = c.characters.len() + player;
                said += 1;
                let token = format!("canary-u{said}-z");
                // Name a character now and then, so "mentioned" sheets answer too.
                let named = names[said % c.characters.len()].clone();
                let text = format!("{named}, {token}!");
                let before = g.requests().len();
                let outcome = run(&mut engine, &g, TurnInput::say(ids[who], &text, now));
                let hearers = |speaker: usize, pos: &[usize]| -> BTreeSet<usize> {
                    let room = pos[speaker];
                    let near = reach(&parents, room, c.rooms[room].1);
                    (0..pos.len()).filter(|&p| near.contains(&pos[p])).collect()
                };
                heard_by.insert(token, hearers(who, &position));
                let requests = g.requests();
                let replies = requests[before..]
                    .iter()
                    .filter(|r| matches!(r.purpose, Purpose::Reply { .. }));
                for (reply, request) in outcome.replies.iter().zip(replies) {
                    let speaker = ids.iter().position(|&i| i == reply.speaker).unwrap();
                    let token = reply
                        .text
                        .split_whitespace()
                        .find(|w| w.starts_with("canary-r"))
                        .unwrap()
                        .trim_end_matches('.')
                        .to_string();
                    prop_assert_eq!(
                        request.purpose,
                        Purpose::Reply {
                            speaker: reply.speaker
                        }
                    );
                    heard_by.insert(token, hearers(speaker, &position));
                }
                // Each scene summary written in the turn: its token is its owner's alone.
                for m in engine.world().all_memories() {
                    if m.kind == rp_core::MemoryKind::SceneSummary {
                        let owner = ids.iter().position(|&i| i == m.owner).unwrap();
                        for t in m
                            .text
                            .split_whitespace()
                            .filter(|w| w.starts_with("canary-r"))
                        {
                            let t = t.trim_end_matches('.').to_string();
                            let known =
                                heard_by.entry(t).or_insert_with(|| BTreeSet::from([owner]));
                            prop_assert!(known.contains(&owner));
                        }
                    }
                }
                now += 1_000;
            }
        }
    }
    // Every prompt each character was given, and everything it can recall or be shown.
    let tokens_in = |text: &str| -> Vec<String> {
        text.split(|ch: char| !(ch.is_alphanumeric() || ch == '-'))
            .filter(|w| w.starts_with("canary-") && w.ends_with("-z"))
            .map(str::to_string)
            .collect()
    };
    // A scene summary is only in its owner's store, and its owner witnessed the scene.
    for m in engine.world().all_memories() {
        if m.kind == rp_core::MemoryKind::SceneSummary {
            prop_assert!(
                engine.world().scenes().any(|s| s.closed == Some(m.created)
                    && s.witnesses.contains(m.owner)
                    && s.witnesses == m.witnesses),
                "{} has a summary of no scene it witnessed",
                m.owner
            );
        }
    }
    for (i, &id) in ids.iter().enumerate() {
        let mut seen: Vec<String> = Vec::new();
        for p in prompts_of(&g, id) {
            seen.extend(tokens_in(&p));
        }
        // The summary prompts written for it.
        let me = format!("You are {}.", names[i]);
        for r in g.requests() {
            if r.purpose == Purpose::Summary && r.messages[0].content.lines().next() == Some(&me) {
                for m in &r.messages {
                    seen.extend(tokens_in(&m.content));
                }
            }
        }
        let all: Vec<&String> = heard_by.keys().collect();
        let query = all.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" ");
        for r in engine
            .recall(
                id,
                &query,
                now,
                &RecallOptions {
                    k: 1000,
                    ..Default::default()
                },
            )
            .unwrap()
        {
            let m = engine.world().memory(r.id).unwrap();
            prop_assert_eq!(m.owner, id);
            seen.extend(tokens_in(&m.text));
        }
        let inspected = engine
            .inspect_prompt(id, Some(&query), now, &Default::default())
            .unwrap();
        seen.extend(tokens_in(&inspected.text()));
        for t in seen {
            let who = heard_by.get(&t);
            prop_assert!(who.is_some(), "unknown token {}", t);
            prop_assert!(
                who.unwrap().contains(&i),
                "{} saw {} but did not witness it",
                names[i],
                t
            );
        }
    }
    prop_assert_eq!(
        replay(&all_events(&engine)).to_bytes(),
        engine.world().to_bytes()
    );
    Ok(())
}

fn cases() -> u32 {
    std::env::var("RP_CANARY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn no_character_ever_sees_a_line_it_did_not_witness(c in case()) {
        run_case(&c)?;
    }
}
