//! Reading a branch's past the slow, sure way, for the history tests (history.rs,
//! belief_index.rs): every branch's log, a world replayed from scratch to a seq, the seq a
//! time names.

use rp_core::{Engine, EntityId, EntityState, Event, FactSheet, Millis, World};
use std::collections::BTreeMap;

/// A person (the engine's) named `name`, not placed anywhere.
pub fn person(id: EntityId, name: &str) -> Event {
    Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: FactSheet::from_text("is a character"),
        host_controlled: false,
        state: EntityState::default(),
    }
}

/// Every branch's events, read on it (the engine ends on the branch it was on).
pub fn logs(engine: &mut Engine) -> BTreeMap<String, Vec<Event>> {
    let back = engine.current_branch().to_owned();
    let mut out = BTreeMap::new();
    for b in engine.branches() {
        engine.switch_branch(&b.name).expect("switch");
        let events = engine.events(1, engine.head()).expect("events");
        out.insert(b.name, events.into_iter().map(|(_, e)| e).collect());
    }
    engine.switch_branch(&back).expect("switch back");
    out
}

/// The world after the first `seq` events of `log`, replayed from scratch.
pub fn replayed(log: &[Event], seq: usize) -> World {
    let mut w = World::new();
    for e in &log[..seq] {
        w.apply(e).expect("a logged event applies");
    }
    w
}

/// The seq a time names in `log`: the last event whose clock is at or before it.
pub fn seq_at(log: &[Event], time: Millis) -> Option<usize> {
    let mut w = World::new();
    let mut found = None;
    for (i, e) in log.iter().enumerate() {
        w.apply(e).expect("applies");
        if w.now() <= time {
            found = Some(i + 1);
        } else {
            break;
        }
    }
    found
}

pub fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("json")
}
