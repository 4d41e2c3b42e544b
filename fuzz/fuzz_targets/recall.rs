//! Recall: any query text, any options JSON, any memory text never panics, and what comes back
//! is always the speaker's own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::memory::{NewMemory, RecallOptions};
use rp_core::{Engine, EntityId, Event};
use std::cell::RefCell;

fn world() -> (Engine, Vec<EntityId>) {
    let mut engine = Engine::in_memory("fuzz", 0).expect("engine");
    let people: Vec<EntityId> = (0..3u64)
        .map(|i| EntityId(engine.world().next_id() + i))
        .collect();
    let created = people
        .iter()
        .enumerate()
        .map(|(i, id)| Event::EntityCreated {
            id: *id,
            key: None,
            name: format!("person {i}"),
            aliases: vec![],
            facts: Default::default(),
            host_controlled: false,
            state: Default::default(),
        })
        .collect();
    engine.append(created).expect("people");
    for (i, text) in [
        "the dark ale",
        "a ship came in",
        "AND \"duke\" said: (nothing)",
    ]
    .iter()
    .enumerate()
    {
        let owner = people[i % people.len()];
        engine
            .add_memory(NewMemory::new(owner, *text))
            .expect("memory");
    }
    (engine, people)
}

thread_local! {
    static WORLD: RefCell<(Engine, Vec<EntityId>)> = RefCell::new(world());
    static RUNS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let split = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
    let query = String::from_utf8_lossy(&rest[..split]);
    let options_json = String::from_utf8_lossy(rest.get(split + 1..).unwrap_or_default());
    let options = RecallOptions::from_json(&options_json).unwrap_or_default();
    // A fresh world now and then, so the log does not grow for the whole campaign.
    let runs = RUNS.with(|r| {
        r.set(r.get().wrapping_add(1));
        r.get()
    });
    WORLD.with(|w| {
        if runs.is_multiple_of(5000) {
            *w.borrow_mut() = world();
        }
        let (engine, people) = &mut *w.borrow_mut();
        let speaker = people[usize::from(head.first().copied().unwrap_or(0)) % people.len()];
        // The fuzzed text as a memory too, for as long as this input runs.
        let added = engine
            .add_memory(NewMemory::new(speaker, query.as_ref()))
            .ok();
        if let Ok(found) = engine.recall(speaker, &query, 0, &options) {
            for r in found {
                let m = engine
                    .world()
                    .memory(r.id)
                    .expect("a recalled memory exists");
                assert_eq!(m.owner, speaker, "recalled another's memory");
            }
        }
        let _ = engine.search_entities(&query, 5);
        if let Some(id) = added {
            engine.remove_memory(id).expect("remove what was added");
        }
    });
});
