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
