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
