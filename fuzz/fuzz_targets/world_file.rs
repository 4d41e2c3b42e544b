//! World files: `creation_events` on any UTF-8 text never panics; the events it returns all
//! apply to an empty world; the export of that world loads again and exports to the identical
//! text (a fixpoint); and re-applying the export to the world as a patch changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::{World, worldfile};

fn load(text: &str) -> rp_core::Result<World> {
    let events = worldfile::creation_events("fuzz.toml", text, 0, Default::default())?;
    let mut world = World::new();
    for (i, e) in events.iter().enumerate() {
        if let Err(err) = world.apply(e) {
            panic!(
                "creation event {i} of {} was rejected: {err}\n{e:?}",
                events.len()
            );
        }
    }
    rp_fuzz::check_consistent(&world);
    Ok(world)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(world) = load(text) else {
        return;
    };
    let exported = worldfile::export(&world);
    let reloaded = load(&exported)
        .unwrap_or_else(|e| panic!("the export does not load: {e}\n--- export ---\n{exported}"));
    let again = worldfile::export(&reloaded);
    assert_eq!(again, exported, "export is not a fixpoint");

    // The world's own export, applied as a patch, must plan only events that apply and
    // leave the exported form unchanged.
    let doc = worldfile::parse("fuzz.toml", &exported).expect("the export parses");
    let events = worldfile::plan(&world, "fuzz.toml", &exported, &doc)
        .unwrap_or_else(|e| panic!("patching with the world's own export fails: {e}"));
    let mut patched = world.clone();
    for e in &events {
        patched
            .apply(e)
            .unwrap_or_else(|err| panic!("a planned patch event was rejected: {err}\n{e:?}"));
    }
    assert_eq!(
        worldfile::export(&patched),
        exported,
        "patching with the world's own export changed the world"
    );
});
