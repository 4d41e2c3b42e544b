//! The README's Rust example, kept compiling and passing.

use rp_core::{Engine, EngineOptions, Event};

#[test]
fn readme_embedding_example() -> rp_core::Result<()> {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("save.rp");
    let world_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine =
        Engine::create_from_world_file(&save, world_file, 0, EngineOptions::default())?;
    let start = engine.head();
    engine.append(vec![Event::TimeAdvanced { to: 60_000 }])?;
    let mira = engine
        .world()
        .entity_by_name("Mira Holt")
        .expect("in the tavern");
    assert_eq!(mira.activity.posture.as_deref(), Some("standing"));
    assert_eq!(engine.preview_rewind(start)?.event_count(), 1);
    engine.rewind(start)?;
    drop(engine);
    let engine = Engine::open(&save)?;
    assert_eq!(engine.branches().len(), 2);
    assert_eq!(engine.head(), start);
    Ok(())
}

#[test]
fn readme_memory_example() -> rp_core::Result<()> {
    use rp_core::memory::{NewMemory, RecallOptions};
    let world_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine = Engine::in_memory("The Crooked Lantern", 0)?;
    engine.load_world_file(world_file)?;
    let now = 0;

    let mira = engine
        .world()
        .entity_by_name("Mira Holt")
        .expect("in the tavern")
        .id;
    let ale = engine.add_memory(NewMemory::new(mira, "Wren ordered the dark ale"))?;
    let found = engine.recall(
        mira,
        "what did Wren drink? ale?",
        now,
        &RecallOptions::default(),
    )?;
    assert_eq!(found[0].id, ale);
    engine.mark_recalled(&[ale], now)?; // reinforcement, recorded as an event
    assert_eq!(engine.world().memory(ale).unwrap().access_count, 1);
    Ok(())
}

#[test]
fn readme_turn_example() -> rp_core::Result<()> {
    use rp_core::turn::{ChatMessage, GenerateResult, Step, TurnInput, TurnOptions};
    let world_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine = Engine::in_memory("The Crooked Lantern", 0)?;
    engine.load_world_file(world_file)?;
    let wren = engine
        .world()
        .entity_by_name("Wren")
        .expect("the player")
        .id;

    let model = |_prompt: &[ChatMessage]| "Lights on the marsh, I tell you.".to_string(); // the host's
    let input = TurnInput::say(wren, "Tobias, what lights?", 60_000);
    let mut turn = engine.begin_turn_with(input, TurnOptions::default())?; // input committed
    while let Step::Generate(request) = turn.step()? {
        // request.purpose says who speaks; request.messages is that speaker's own prompt
        turn.provide(GenerateResult::text(model(&request.messages)))?;
    }
    let outcome = turn.finish()?; // replies, decisions, memories: one transaction
    for reply in &outcome.replies {
        let who = &engine.world().entity(reply.speaker).expect("speaker").name;
        println!("{who}: {}", reply.text);
    }
    assert_eq!(
        outcome.replies.len(),
        1,
        "Tobias answers; Mira at the bar did not hear"
    );
    assert_eq!(
        engine
            .world()
            .entity(outcome.replies[0].speaker)
            .unwrap()
            .name,
        "Tobias Reed"
    );
    Ok(())
}
