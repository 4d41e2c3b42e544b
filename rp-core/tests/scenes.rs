//! Scenes (issue 9, items 4 and 6): a closed scene leaves one summary per witness, each written
//! from its own point of view and held in its own store only; turns close scenes when a
//! witness leaves or time passes, and later prompts load the summaries instead of the lines;
//! group nodes appear for three or more and show only when all are present; bad input changes
//! nothing.

use rp_core::scene::{CloseReason, SceneOptions};
use rp_core::turn::{
    GenerateResult, Prompt, Purpose, ScriptedGenerator, Section, Step, TurnInput, TurnOptions,
};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Engine, EntityId, ErrorKind, Event, FactSheet,
    MemoryKind, Position, SceneId, World,
};

struct Tavern {
    engine: Engine,
    room: ContainerId,
    hall: ContainerId,
    wren: EntityId,
    mira: EntityId,
    tobias: EntityId,
}

/// A room and a hall (out of earshot of each other); Wren (the player) and Mira in the room,
/// Tobias in the hall. Mira and Tobias always answer.
fn tavern() -> Tavern {
    let mut engine = Engine::in_memory("Scenes", 0).unwrap();
    let mut next = engine.world().next_id();
    let mut id = || {
        next += 1;
        next - 1
    };
    let (room, hall) = (ContainerId(id()), ContainerId(id()));
    let (wren, mira, tobias) = (EntityId(id()), EntityId(id()), EntityId(id()));
    let mut events = Vec::new();
    for (c, name) in [(room, "Common Room"), (hall, "Hall")] {
        events.push(Event::ContainerCreated {
            id: c,
            key: None,
            name: name.into(),
            facts: FactSheet::default(),
            parent: None,
            slots: vec![],
            properties: ContainerProperties::default(),
        });
    }
    for (e, name, host, c) in [
        (wren, "Wren", true, room),
        (mira, "Mira", false, room),
        (tobias, "Tobias", false, hall),
    ] {
        events.push(Event::EntityCreated {
            id: e,
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: FactSheet::from_text("$respond"),
            host_controlled: host,
            state: Default::default(),
        });
        events.push(Event::ActivityChanged {
            entity: e,
            activity: at(c),
        });
    }
    engine.append(events).unwrap();
    Tavern {
        engine,
        room,
        hall,
        wren,
        mira,
        tobias,
    }
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
        .unwrap();
}

fn options() -> TurnOptions {
    TurnOptions {
        remember_dialogue: false,
        outcome_prompts: true,
        ..TurnOptions::default()
    }
}

fn say(
    engine: &mut Engine,
    g: &ScriptedGenerator,
    who: EntityId,
    text: &str,
    now: i64,
) -> rp_core::turn::TurnOutcome {
    engine
        .run_turn_blocking(
            TurnInput::say(who, text, now),
            options(),
            g,
            &mut rp_core::turn::NoSink,
        )
        .unwrap()
}

fn replay(engine: &Engine) -> World {
    let mut w = World::new();
    for (_, e) in engine.events(1, engine.head()).unwrap() {
        w.apply(&e).unwrap();
    }
    w
}

fn summaries(world: &World) -> Vec<&rp_core::Memory> {
    world
        .all_memories()
        .filter(|m| m.kind == MemoryKind::SceneSummary)
        .collect()
}

fn piece_texts(p: &Prompt, section: Section) -> Vec<String> {
    p.pieces
        .iter()
        .filter(|x| x.section == section)
        .map(|x| x.text.clone())
        .collect()
}

/// Closes `scene` through the sans-IO loop, answering each witness's request with `answer`.
fn close_with(
    engine: &mut Engine,
    scene: SceneId,
    now: i64,
    answer: impl Fn(&rp_core::turn::GenerateRequest) -> String,
) -> rp_core::scene::SceneCloseOutcome {
    let mut close = engine
        .begin_scene_close(scene, now, &SceneOptions::default())
        .unwrap();
    while let Step::Generate(request) = close.step(engine).unwrap() {
        assert_eq!(request.purpose, Purpose::Summary);
        close
            .provide(engine, GenerateResult::text(answer(&request)))
            .unwrap();
    }
    close.finish(engine).unwrap()
}

#[test]
fn a_scene_closed_with_two_witnesses_yields_two_different_summaries_each_in_its_own_store() {
    let Tavern {
        mut engine,
        room,
        wren,
        mira,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("The ale is sour tonight.");
    say(
        &mut engine,
        &g,
        wren,
        "Evening. Anything good on tap?",
        1_000,
    );
    let scene = engine.world().current_scene(room).unwrap().clone();
    assert_eq!(scene.witnesses.iter().collect::<Vec<_>>(), vec![wren, mira]);
    assert_eq!(scene.lines, 2);

    // The host closes the current scene of the room; each witness is asked from its own view.
    let mut close = engine
        .begin_close_current_scene(room, 5_000, &SceneOptions::default())
        .unwrap();
    assert_eq!(close.scene(), scene.id);
    assert_eq!(close.witnesses(), vec![wren, mira]);
    let mut asked = Vec::new();
    while let Step::Generate(request) = close.step(&mut engine).unwrap() {
        let system = &request.messages[0].content;
        let text = if system.starts_with("You are Wren.") {
            "I asked Mira what was on tap; she warned me off the ale."
        } else {
            assert!(system.starts_with("You are Mira."), "{system}");
            "A stranger called Wren wanted ale; I told the truth about it."
        };
        assert!(system.contains("Wren: Evening. Anything good on tap?"));
        asked.push(system.clone());
        close
            .provide(&mut engine, GenerateResult::text(text))
            .unwrap();
    }
    assert_eq!(asked.len(), 2);
    let outcome = close.finish(&mut engine).unwrap();
    assert_eq!(outcome.scene, scene.id);
    assert_eq!(outcome.group, None, "two witnesses make no group");

    let world = engine.world();
    let closed = world.scene(scene.id).unwrap();
    assert_eq!(closed.closed, Some(5_000));
    assert!(world.current_scene(room).is_none());
    let all = summaries(world);
    assert_eq!(all.len(), 2);
    assert_ne!(all[0].text, all[1].text, "each writes its own");
    for (owner, memory) in &outcome.summaries {
        let m = world.memory(*memory).unwrap();
        assert_eq!(m.owner, *owner);
        assert_eq!(m.kind, MemoryKind::SceneSummary);
        assert_eq!(
            m.witnesses, closed.witnesses,
            "the witness set is the scene's"
        );
        assert_eq!(m.created, 5_000);
        // In its owner's store, and in no one else's.
        assert!(world.memories_of(*owner).any(|x| x.id == m.id));
        let other = if *owner == wren { mira } else { wren };
        assert!(!world.memories_of(other).any(|x| x.id == m.id));
    }
    let of = |who: EntityId| -> String {
        outcome
            .summaries
            .iter()
            .find(|(o, _)| *o == who)
            .map(|(_, m)| world.memory(*m).unwrap().text.clone())
            .unwrap()
    };
    let (wren_text, mira_text) = (of(wren), of(mira));

    // Each prompt loads its own summary, never the other's; recall never returns the other's.
    for (who, mine, theirs) in [
        (mira, &mira_text, &wren_text),
        (wren, &wren_text, &mira_text),
    ] {
        let p = engine
            .inspect_prompt(who, Some(theirs), 6_000, &Default::default())
            .unwrap();
        let memories = piece_texts(&p, Section::Memories);
        assert!(memories.contains(mine), "{memories:?}");
        // The closed scene's lines are its summary now, not dialogue.
        assert!(piece_texts(&p, Section::Dialogue).is_empty());
        assert!(!p.text().contains("Anything good on tap?"));
        assert!(!p.text().contains(theirs.as_str()));
        let recalled = engine
            .recall(who, theirs, 6_000, &Default::default())
            .unwrap();
        assert!(
            recalled
                .iter()
                .all(|r| engine.world().memory(r.id).unwrap().owner == who)
        );
    }
    assert_eq!(replay(&engine).to_bytes(), engine.world().to_bytes());
}

#[test]
fn a_summary_prompt_carries_only_the_lines_its_witness_heard() {
    let Tavern {
        mut engine,
        room,
        wren,
        mira,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("Mm.");
    say(&mut engine, &g, wren, "Evening.", 1_000);
    // A line muttered so that only Wren hears it, in the same scene.
    let mutter = TurnInput {
        witnesses: Some(vec![]),
        ..TurnInput::say(wren, "(to himself) I'm not who she thinks.", 2_000)
    };
    engine
        .run_turn_blocking(mutter, options(), &g, &mut rp_core::turn::NoSink)
        .unwrap();
    let scene = engine.world().current_scene(room).unwrap().id;
    let mut close = engine
        .begin_scene_close(scene, 3_000, &SceneOptions::default())
        .unwrap();
    let mut prompts = Vec::new();
    while let Step::Generate(request) = close.step(&mut engine).unwrap() {
        prompts.push(request.messages[0].content.clone());
        close
            .provide(&mut engine, GenerateResult::text("Remembered."))
            .unwrap();
    }
    assert_eq!(prompts.len(), 2);
    assert!(prompts[0].starts_with("You are Wren.") && prompts[0].contains("not who she"));
    assert!(prompts[1].starts_with("You are Mira.") && !prompts[1].contains("not who she"));
    assert!(prompts[1].contains("Wren: Evening."));
    let witnesses = &engine.world().scene(scene).unwrap().witnesses;
    assert!(witnesses.contains(wren) && witnesses.contains(mira));
}

#[test]
fn a_turn_after_a_witness_leaves_closes_the_scene_and_prompts_load_the_summary_not_the_lines() {
    let Tavern {
        mut engine,
        room,
        hall,
        wren,
        mira,
        tobias,
    } = tavern();
    let g = ScriptedGenerator::new("{name} nods. ({n})");
    say(
        &mut engine,
        &g,
        wren,
        "The cellar door is open, canary-old.",
        1_000,
    );
    let old = engine.world().current_scene(room).unwrap().id;
    // Mira leaves for the hall, and Wren follows: the room's scene is due.
    move_to(&mut engine, mira, hall);
    assert_eq!(
        engine.due_scenes(1_500, &SceneOptions::default()),
        vec![(old, CloseReason::Departure { entity: mira })]
    );
    move_to(&mut engine, wren, hall);
    g.script_purpose(
        &Purpose::Summary,
        [
            "I told Mira about the cellar door.",
            "Wren told me the cellar door was open.",
        ],
    );
    let before = g.requests().len();
    let outcome = say(
        &mut engine,
        &g,
        wren,
        "Tobias, have you seen the key?",
        2_000,
    );
    assert_eq!(outcome.closed_scenes, vec![old]);
    let world = engine.world();
    assert!(world.scene(old).unwrap().closed.is_some());
    let new = world.current_scene(hall).unwrap();
    assert!(new.witnesses.contains(tobias) && new.witnesses.contains(mira));
    // Summaries came before the replies, and the replies' prompts carry them.
    let kinds: Vec<Purpose> = g.requests()[before..].iter().map(|r| r.purpose).collect();
    assert_eq!(kinds[..2], [Purpose::Summary, Purpose::Summary]);
    assert!(kinds[2..].iter().all(|p| *p != Purpose::Summary));
    assert!(kinds[2..].contains(&Purpose::Reply { speaker: mira }));
    let mira_prompt = outcome.prompts.iter().find(|p| p.speaker == mira).unwrap();
    let dialogue = piece_texts(mira_prompt, Section::Dialogue);
    assert_eq!(dialogue[0], "Wren: Tobias, have you seen the key?");
    assert!(
        piece_texts(mira_prompt, Section::Memories)
            .contains(&"Wren told me the cellar door was open.".to_string())
    );
    assert!(
        !mira_prompt.text().contains("canary-old"),
        "the old lines are gone"
    );
    assert!(!mira_prompt.text().contains("I told Mira about"));
    // Tobias was not there: no summary, and nothing of it in his prompt.
    let tobias_prompt = outcome
        .prompts
        .iter()
        .find(|p| p.speaker == tobias)
        .unwrap();
    assert!(!tobias_prompt.text().contains("cellar"));
    assert!(summaries(engine.world()).iter().all(|m| m.owner != tobias));
    assert_eq!(replay(&engine).to_bytes(), engine.world().to_bytes());
}

#[test]
fn a_long_silence_closes_the_scene_at_the_next_turn() {
    let Tavern {
        mut engine,
        room,
        wren,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("{name} nods. ({n})");
    say(&mut engine, &g, wren, "Quiet night.", 1_000);
    let first = engine.world().current_scene(room).unwrap().id;
    let options = SceneOptions::default();
    let gap = options.max_gap_ms as i64;
    // One line later, within the gap: same scene.
    say(&mut engine, &g, wren, "Very quiet.", 1_000 + gap - 1);
    assert_eq!(engine.world().current_scene(room).unwrap().id, first);
    let last = engine.world().scene(first).unwrap().last_line.unwrap();
    assert!(engine.due_scenes(last + gap - 1, &options).is_empty());
    assert_eq!(
        engine.due_scenes(last + gap, &options),
        vec![(first, CloseReason::Gap { since: last })]
    );
    let outcome = say(&mut engine, &g, wren, "Morning already?", last + gap);
    assert_eq!(outcome.closed_scenes, vec![first]);
    let current = engine.world().current_scene(room).unwrap();
    assert_ne!(current.id, first);
    assert_eq!(current.lines, 2, "the input and the reply");
    // A threshold of 0 never closes by time.
    let never = SceneOptions {
        max_gap_ms: 0,
        ..SceneOptions::default()
    };
    assert!(engine.due_scenes(i64::MAX / 2, &never).is_empty());
}

#[test]
fn bad_closes_are_refused_and_change_nothing() {
    let Tavern {
        mut engine,
        room,
        hall,
        wren,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("Mm.");
    let o = SceneOptions::default();
    let e = engine.begin_scene_close(SceneId(9_999), 1, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let e = engine.begin_close_current_scene(hall, 1, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    say(&mut engine, &g, wren, "Hello.", 1_000);
    let scene = engine.world().current_scene(room).unwrap().id;
    let e = engine.begin_scene_close(scene, 500, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "before the clock: {e}");
    let bad = SceneOptions {
        summary_lines: 0,
        ..SceneOptions::default()
    };
    assert_eq!(
        engine
            .begin_scene_close(scene, 2_000, &bad)
            .unwrap_err()
            .kind(),
        ErrorKind::Invalid
    );
    let e = engine.open_scene(room, 2_000).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "already open: {e}");

    let before = engine.world().to_bytes();
    let mut close = engine.begin_scene_close(scene, 2_000, &o).unwrap();
    let Step::Generate(first) = close.step(&mut engine).unwrap() else {
        panic!("a summary is needed");
    };
    // An empty summary is refused; the same request is asked again.
    for empty in ["", "   \n"] {
        let e = close
            .provide(&mut engine, GenerateResult::text(empty))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid, "{e}");
        assert_eq!(
            close.step(&mut engine).unwrap(),
            Step::Generate(first.clone())
        );
    }
    // Finishing early is refused and commits nothing.
    let early = close.clone();
    assert_eq!(
        early.finish(&mut engine).unwrap_err().kind(),
        ErrorKind::Conflict
    );
    assert_eq!(engine.world().to_bytes(), before);
    // A world that moved on makes the machine refuse.
    let mut stale = close.clone();
    engine
        .append(vec![Event::TimeAdvanced { to: 1_500 }])
        .unwrap();
    assert_eq!(
        stale
            .provide(&mut engine, GenerateResult::text("x"))
            .unwrap_err()
            .kind(),
        ErrorKind::Conflict
    );
    // Closing a closed scene.
    close_with(&mut engine, scene, 2_000, |_| "Done.".into());
    let e = engine.begin_scene_close(scene, 3_000, &o).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    let head = engine.head();
    let e = engine
        .append(vec![Event::SceneClosed {
            id: scene,
            at: 3_000,
        }])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    // A line naming a closed scene is refused.
    let u = rp_core::Utterance {
        id: rp_core::UtteranceId(engine.world().next_id()),
        speaker: wren,
        text: "Late.".into(),
        at: 3_000,
        witnesses: [wren].into_iter().collect(),
        model: None,
        scene: Some(scene),
    };
    let e = engine
        .append(vec![Event::UserTurn { utterance: u }])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(engine.head(), head);
}

#[test]
fn an_empty_scene_closes_without_summaries_and_an_open_scene_keeps_its_room() {
    let Tavern { mut engine, .. } = tavern();
    let cellar = ContainerId(engine.world().next_id());
    engine
        .append(vec![Event::ContainerCreated {
            id: cellar,
            key: None,
            name: "Cellar".into(),
            facts: FactSheet::default(),
            parent: None,
            slots: vec![],
            properties: ContainerProperties::default(),
        }])
        .unwrap();
    let scene = engine.open_scene(cellar, 10).unwrap();
    let e = engine
        .append(vec![Event::ContainerRemoved { id: cellar }])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains("open scene"), "{e}");
    let mut close = engine
        .begin_scene_close(scene, 20, &SceneOptions::default())
        .unwrap();
    assert!(close.witnesses().is_empty() && close.is_done());
    assert_eq!(close.step(&mut engine).unwrap(), Step::Done);
    let outcome = close.finish(&mut engine).unwrap();
    assert!(outcome.summaries.is_empty());
    assert!(summaries(engine.world()).is_empty());
    assert_eq!(engine.world().scene(scene).unwrap().closed, Some(20));
    engine
        .append(vec![Event::ContainerRemoved { id: cellar }])
        .unwrap();
}

#[test]
fn a_turn_that_never_finishes_leaves_the_old_scene_open_for_the_next_turn() {
    let Tavern {
        mut engine,
        room,
        wren,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("Mm.");
    say(&mut engine, &g, wren, "Hello.", 1_000);
    let old = engine.world().current_scene(room).unwrap().id;
    let gap = SceneOptions::default().max_gap_ms as i64;
    {
        let mut turn = engine
            .begin_turn_with(TurnInput::say(wren, "Anyone?", 1_000 + gap), options())
            .unwrap();
        let Step::Generate(r) = turn.step().unwrap() else {
            panic!("a summary first");
        };
        assert_eq!(r.purpose, Purpose::Summary);
        // Dropped: the input (in a new scene) survives, the old scene stays open.
    }
    let world = engine.world();
    assert!(world.scene(old).unwrap().is_open());
    let new = world.current_scene(room).unwrap().id;
    assert_ne!(new, old);
    assert!(summaries(world).is_empty());
    assert_eq!(
        engine.due_scenes(2_000 + gap, &SceneOptions::default())[0],
        (old, CloseReason::Superseded { by: new })
    );
    let outcome = say(&mut engine, &g, wren, "Hello?", 2_000 + gap);
    assert_eq!(outcome.closed_scenes, vec![old]);
    assert_eq!(engine.world().current_scene(room).unwrap().id, new);
    assert_eq!(summaries(engine.world()).len(), 2);
}

#[test]
fn three_witnesses_get_a_group_node_shown_only_when_all_are_present() {
    let Tavern {
        mut engine,
        room,
        hall,
        wren,
        mira,
        tobias,
    } = tavern();
    move_to(&mut engine, tobias, room);
    let g = ScriptedGenerator::new("{name} nods. ({n})");
    say(&mut engine, &g, wren, "All three of us, then.", 1_000);
    let scene = engine.world().current_scene(room).unwrap().id;
    let outcome = close_with(&mut engine, scene, 2_000, |_| "We three met.".into());
    assert_eq!(outcome.summaries.len(), 3);
    let group_id = outcome.group.expect("a group node for the three");
    let mut group = engine.world().group(group_id).unwrap().clone();
    assert_eq!(
        group.members,
        [wren, mira, tobias].into_iter().collect(),
        "exactly the witnesses"
    );
    group.summary = "Old friends with a grudge.".into();
    group.shared = vec!["the flooded cellar".into()];
    engine
        .append(vec![Event::GroupUpdated {
            group: group.clone(),
        }])
        .unwrap();
    let inspect = |engine: &mut Engine, who| {
        engine
            .inspect_prompt(who, Some("hello"), 3_000, &Default::default())
            .unwrap()
    };
    let all_there = inspect(&mut engine, mira);
    let shown = piece_texts(&all_there, Section::Group);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(shown[0].contains("Old friends with a grudge."));
    assert!(shown[1].contains("the flooded cellar"));
    // One member away: neither the summary nor the shared history.
    move_to(&mut engine, tobias, hall);
    let missing = inspect(&mut engine, mira);
    assert!(piece_texts(&missing, Section::Group).is_empty());
    assert!(!missing.text().contains("flooded cellar"));
    // Another close of the same three makes no second node.
    move_to(&mut engine, tobias, room);
    say(&mut engine, &g, wren, "Back together.", 4_000);
    let scene = engine.world().current_scene(room).unwrap().id;
    let outcome = close_with(&mut engine, scene, 5_000, |_| "Again.".into());
    assert_eq!(outcome.group, None);
    assert_eq!(engine.world().groups().count(), 1);
}

#[test]
fn scenes_can_be_left_to_the_host() {
    let Tavern {
        mut engine,
        room,
        wren,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("Mm.");
    let off = TurnOptions {
        scenes: SceneOptions {
            enabled: false,
            ..SceneOptions::default()
        },
        ..options()
    };
    engine
        .run_turn_blocking(
            TurnInput::say(wren, "Hello.", 1_000),
            off,
            &g,
            &mut rp_core::turn::NoSink,
        )
        .unwrap();
    assert_eq!(engine.world().scenes().count(), 0);
    assert!(engine.world().dialogue().all(|u| u.scene.is_none()));
    let scene = engine.open_scene(room, 2_000).unwrap();
    assert_eq!(engine.world().current_scene(room).unwrap().id, scene);
    assert_eq!(engine.world().now(), 2_000);
    // Lines said before the scene opened are out of the dialogue of those in it.
    let p = engine
        .inspect_prompt(wren, None, 2_000, &Default::default())
        .unwrap();
    assert!(piece_texts(&p, Section::Dialogue).is_empty());
}

#[test]
fn a_closed_scene_compresses_its_line_memories_out_of_recall() {
    let Tavern {
        mut engine,
        room,
        wren,
        mira,
        ..
    } = tavern();
    let g = ScriptedGenerator::new("Aye, the zephyr lantern.");
    // The turn's defaults remember each line as a memory of each witness.
    engine
        .run_turn_blocking(
            TurnInput::say(wren, "Where is the ZEPHYR lantern?", 1_000),
            TurnOptions::default(),
            &g,
            &mut rp_core::turn::NoSink,
        )
        .unwrap();
    let scene = engine.world().current_scene(room).unwrap().id;
    let recall = |engine: &mut Engine| -> Vec<rp_core::MemoryId> {
        engine
            .recall(mira, "zephyr lantern", 2_000, &Default::default())
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    let lines: Vec<rp_core::MemoryId> = engine
        .world()
        .scene_memories(scene)
        .filter(|m| m.owner == mira)
        .map(|m| m.id)
        .collect();
    assert_eq!(lines.len(), 2, "Mira remembers both lines of the scene");
    let before = recall(&mut engine);
    assert!(lines.iter().all(|m| before.contains(m)), "{before:?}");

    close_with(&mut engine, scene, 2_000, |_| {
        "We spoke of a lantern.".into()
    });
    for m in &lines {
        let memory = engine.world().memory(*m).unwrap();
        assert_eq!(memory.decay, rp_core::DecayStage::Summary);
        assert!(!memory.recallable());
    }
    let after = recall(&mut engine);
    assert!(lines.iter().all(|m| !after.contains(m)), "{after:?}");
    // The log says the same: a replay compresses them too.
    let replayed = replay(&engine);
    assert_eq!(
        replayed.memory(lines[0]).unwrap().decay,
        rp_core::DecayStage::Summary
    );
}
