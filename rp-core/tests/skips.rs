//! Time skips (issue 9, item 5): a jump or an elision runs forward everything due in between,
//! in order, closes and compresses the open scenes (a summary per witness), resets the landing
//! activities, all in one commit; rewinding past it restores the world byte for byte; bad
//! skips change nothing.

use rp_core::log::codec::encode_snapshot;
use rp_core::scene::SceneOptions;
use rp_core::story::EventPlan;
use rp_core::turn::{
    GenerateResult, NoSink, Purpose, ScriptedGenerator, Step, TurnInput, TurnOptions,
};
use rp_core::{
    Action, Activity, ContainerId, ContainerProperties, Engine, EntityId, ErrorKind, Event,
    EventStatus, FactSheet, MemoryKind, Position, Skip,
};

const HOUR: i64 = 3_600_000;

struct Inn {
    engine: Engine,
    room: ContainerId,
    wren: EntityId,
    mira: EntityId,
    tobias: EntityId,
}

/// One room; Wren (the player), Mira and Tobias in it. Mira answers everything.
fn inn() -> Inn {
    let mut engine = Engine::in_memory("Skips", 0).unwrap();
    let mut next = engine.world().next_id();
    let mut id = || {
        next += 1;
        next - 1
    };
    let room = ContainerId(id());
    let (wren, mira, tobias) = (EntityId(id()), EntityId(id()), EntityId(id()));
    let mut events = vec![Event::ContainerCreated {
        id: room,
        key: None,
        name: "Common Room".into(),
        facts: FactSheet::default(),
        parent: None,
        slots: vec![],
        properties: ContainerProperties::default(),
    }];
    for (e, name, host, sheet) in [
        (wren, "Wren", true, ""),
        (mira, "Mira", false, "$respond"),
        (tobias, "Tobias", false, "$respond false"),
    ] {
        events.push(Event::EntityCreated {
            id: e,
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: FactSheet::from_text(sheet),
            host_controlled: host,
            state: Default::default(),
        });
        events.push(Event::ActivityChanged {
            entity: e,
            activity: Activity {
                position: Some(Position {
                    container: room,
                    slot: None,
                }),
                ..Default::default()
            },
        });
    }
    engine.append(events).unwrap();
    Inn {
        engine,
        room,
        wren,
        mira,
        tobias,
    }
}

fn say(engine: &mut Engine, g: &ScriptedGenerator, who: EntityId, text: &str, now: i64) {
    let options = TurnOptions {
        remember_dialogue: false,
        ..TurnOptions::default()
    };
    engine
        .run_turn_blocking(TurnInput::say(who, text, now), options, g, &mut NoSink)
        .unwrap();
}

/// Sets `who` doing `verb` from `started` for `duration_ms`.
fn busy(engine: &mut Engine, who: EntityId, verb: &str, started: i64, duration_ms: Option<u64>) {
    let mut activity = engine.world().entity(who).unwrap().activity.clone();
    activity.action = Some(Action {
        verb: verb.into(),
        started,
        duration_ms,
        interruptible: true,
        attention_required: false,
    });
    activity.status = Some("busy".into());
    activity.posture = Some("sitting".into());
    engine
        .append(vec![Event::ActivityChanged {
            entity: who,
            activity,
        }])
        .unwrap();
}

fn plan_at(
    engine: &mut Engine,
    name: &str,
    who: Vec<EntityId>,
    start_at: i64,
) -> rp_core::ScopedEventId {
    let now = engine.world().now();
    engine
        .plan_event(
            EventPlan {
                name: name.into(),
                participants: who,
                significance: 0.5,
                start_at: Some(start_at),
                ..EventPlan::default()
            },
            now,
        )
        .unwrap()
}

#[test]
fn a_jump_across_three_scheduled_events_fires_them_in_order_and_rewinding_restores_the_world() {
    let Inn {
        mut engine,
        room,
        wren,
        mira,
        ..
    } = inn();
    let g = ScriptedGenerator::new("Mind the step.");
    say(
        &mut engine,
        &g,
        wren,
        "Is there a room for the night?",
        1_000,
    );
    // Planned in an order that is not their time order.
    let market = plan_at(&mut engine, "the market", vec![mira], 9 * HOUR);
    let dawn = plan_at(&mut engine, "the dawn bell", vec![wren, mira], 6 * HOUR);
    let ferry = plan_at(&mut engine, "the ferry", vec![wren], 7 * HOUR);
    let later = plan_at(&mut engine, "the evening", vec![wren], 20 * HOUR);
    busy(&mut engine, mira, "scrubbing the floor", 1_000, None);

    let before_head = engine.head();
    let before = encode_snapshot(engine.world());
    let scene = engine.world().current_scene(room).unwrap().id;

    let g = ScriptedGenerator::new("The night passed quietly.");
    let outcome = engine
        .time_skip_blocking(Skip::Jump { to: 10 * HOUR }, &SceneOptions::default(), &g)
        .unwrap();
    assert_eq!((outcome.from, outcome.to), (1_000, 10 * HOUR));
    assert_eq!(engine.world().now(), 10 * HOUR);
    // The three due events started in time order; the later one waits.
    assert_eq!(outcome.due.started, vec![dawn, ferry, market]);
    let status = |id| engine.world().scoped_event(id).unwrap().status;
    assert_eq!(status(later), EventStatus::Planned);
    for id in [dawn, ferry, market] {
        assert_eq!(status(id), EventStatus::Active);
    }
    // In the log too, each start at its own time, after the skip moved the clock.
    let log = engine.events(before_head + 1, engine.head()).unwrap();
    let kinds: Vec<&str> = log.iter().map(|(_, e)| e.kind()).collect();
    let skipped = kinds.iter().position(|k| *k == "time_skipped").unwrap();
    let closed = kinds.iter().position(|k| *k == "scene_closed").unwrap();
    assert!(
        closed < skipped,
        "the scene closes when the skip begins: {kinds:?}"
    );
    let starts: Vec<i64> = log
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ScopedEventStarted { at, .. } => Some(*at),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![6 * HOUR, 7 * HOUR, 9 * HOUR]);
    // The scene closed and was compressed: a summary for each witness.
    assert_eq!(outcome.closed_scenes.len(), 1);
    assert_eq!(outcome.closed_scenes[0].scene, scene);
    assert!(engine.world().scene(scene).unwrap().closed.is_some());
    let summaries: Vec<_> = engine
        .world()
        .all_memories()
        .filter(|m| m.kind == MemoryKind::SceneSummary)
        .map(|m| m.owner)
        .collect();
    assert!(
        summaries.contains(&wren) && summaries.contains(&mira),
        "{summaries:?}"
    );
    // Mira's action is over after a jump; her place and posture stay.
    let activity = &engine.world().entity(mira).unwrap().activity;
    assert_eq!(activity.action, None);
    assert_eq!(activity.status, None);
    assert_eq!(activity.posture.as_deref(), Some("sitting"));
    assert_eq!(activity.position.as_ref().unwrap().container, room);
    assert_eq!(outcome.reset, vec![mira]);

    // One commit: rewinding to the seq before it restores the world byte for byte.
    engine.rewind(before_head).unwrap();
    assert_eq!(engine.head(), before_head);
    assert_eq!(encode_snapshot(engine.world()), before);
}

#[test]
fn an_elision_skips_to_the_end_of_an_action_and_ends_only_the_actions_that_are_over() {
    let Inn {
        mut engine,
        wren,
        mira,
        tobias,
        ..
    } = inn();
    let g = ScriptedGenerator::new("Aye.");
    say(&mut engine, &g, wren, "I'll wait while you mend it.", 1_000);
    busy(
        &mut engine,
        mira,
        "mending the net",
        1_000,
        Some(2 * HOUR as u64),
    );
    busy(
        &mut engine,
        tobias,
        "playing dice",
        1_000,
        Some(5 * HOUR as u64),
    );
    busy(&mut engine, wren, "dozing", 1_000, None);

    let mut skip = engine
        .begin_time_skip(Skip::Elision { entity: mira }, &SceneOptions::default())
        .unwrap();
    assert_eq!(skip.to(), 1_000 + 2 * HOUR);
    assert_eq!(skip.scenes().len(), 1);
    let mut asked = Vec::new();
    while let Step::Generate(request) = skip.step(&mut engine).unwrap() {
        assert_eq!(request.purpose, Purpose::Summary);
        asked.push(request.messages[0].content.clone());
        skip.provide(
            &mut engine,
            GenerateResult::text(format!("memory {}", asked.len())),
        )
        .unwrap();
    }
    assert_eq!(asked.len(), 3, "Wren, Mira and Tobias said or heard lines");
    let outcome = skip.finish(&mut engine).unwrap();
    assert_eq!(engine.world().now(), 1_000 + 2 * HOUR);
    // Mira's action ended; Tobias's runs on; Wren's has no known end, so an elision keeps it.
    assert_eq!(outcome.reset, vec![mira]);
    let action = |who| engine.world().entity(who).unwrap().activity.action.clone();
    assert_eq!(action(mira), None);
    assert_eq!(action(tobias).unwrap().verb, "playing dice");
    assert_eq!(action(wren).unwrap().verb, "dozing");
    // Each witness's summary is its own, in its own store.
    for (owner, memory) in &outcome.closed_scenes[0].summaries {
        let m = engine.world().memory(*memory).unwrap();
        assert_eq!(m.owner, *owner);
        assert_eq!(m.kind, MemoryKind::SceneSummary);
    }
}

#[test]
fn bad_skips_are_refused_and_change_nothing() {
    let Inn {
        mut engine,
        wren,
        mira,
        ..
    } = inn();
    let g = ScriptedGenerator::new("Aye.");
    say(&mut engine, &g, wren, "Evening.", 5_000);
    busy(&mut engine, mira, "sweeping", 5_000, None);
    let head = engine.head();
    let before = encode_snapshot(engine.world());
    let options = SceneOptions::default();
    let refused =
        |engine: &mut Engine, skip: Skip| engine.begin_time_skip(skip, &options).unwrap_err();
    let e = refused(&mut engine, Skip::Jump { to: 5_000 });
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("goes forward"), "{e}");
    assert_eq!(
        refused(&mut engine, Skip::Jump { to: 10 }).kind(),
        ErrorKind::Invalid
    );
    assert_eq!(
        refused(
            &mut engine,
            Skip::Elision {
                entity: EntityId(999)
            }
        )
        .kind(),
        ErrorKind::NotFound
    );
    let e = refused(&mut engine, Skip::Elision { entity: wren });
    assert!(e.to_string().contains("doing nothing"), "{e}");
    let e = refused(&mut engine, Skip::Elision { entity: mira });
    assert!(e.to_string().contains("no duration"), "{e}");

    // Finishing before the summaries, or after the world moved, is refused.
    let mut skip = engine
        .begin_time_skip(Skip::Jump { to: HOUR }, &options)
        .unwrap();
    assert!(matches!(skip.step(&mut engine).unwrap(), Step::Generate(_)));
    assert_eq!(
        skip.clone().finish(&mut engine).unwrap_err().kind(),
        ErrorKind::Conflict
    );
    let mut empty = skip.clone();
    assert_eq!(
        empty
            .provide(&mut engine, GenerateResult::text("  "))
            .unwrap_err()
            .kind(),
        ErrorKind::Invalid
    );
    assert_eq!(engine.head(), head);
    assert_eq!(encode_snapshot(engine.world()), before);

    // A generator that fails commits nothing.
    struct Failing;
    #[async_trait::async_trait]
    impl rp_core::turn::Generate for Failing {
        async fn generate(
            &self,
            _: &rp_core::turn::GenerateRequest,
            _: &mut dyn rp_core::turn::TokenSink,
        ) -> Result<GenerateResult, String> {
            Err("the model is down".into())
        }
    }
    let e = engine
        .time_skip_blocking(Skip::Jump { to: HOUR }, &options, &Failing)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert_eq!(engine.head(), head);

    // A skip begun before another commit is refused at its next call.
    let mut stale = engine
        .begin_time_skip(Skip::Jump { to: HOUR }, &options)
        .unwrap();
    say(&mut engine, &g, wren, "Still here?", 6_000);
    assert_eq!(
        stale.step(&mut engine).unwrap_err().kind(),
        ErrorKind::Conflict
    );
}

#[test]
fn a_skip_with_scenes_left_to_the_host_closes_none() {
    let Inn {
        mut engine,
        room,
        wren,
        ..
    } = inn();
    let g = ScriptedGenerator::new("Aye.");
    say(&mut engine, &g, wren, "Evening.", 1_000);
    let options = SceneOptions {
        enabled: false,
        ..SceneOptions::default()
    };
    let outcome = engine
        .time_skip_blocking(Skip::Jump { to: 2 * HOUR }, &options, &g)
        .unwrap();
    assert!(outcome.closed_scenes.is_empty());
    assert!(engine.world().current_scene(room).is_some());
    assert_eq!(engine.world().now(), 2 * HOUR);
}
