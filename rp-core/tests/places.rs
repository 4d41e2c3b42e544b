//! What a container's properties do: `public` opens it to the space around it (who hears a
//! line), `moving` is said in the prompts of those inside it.

use rp_core::turn::NoSink;
use rp_core::turn::{Purpose, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::{Engine, EntityId};
use std::collections::BTreeSet;

/// A market square with two open stalls, a closed booth, and a cellar under the first stall.
/// `{public}` is the stalls' `public` flag; `{booth_range}` the booth's audible range.
const MARKET: &str = r#"
[world]
name = "Market"

[[containers]]
id = "square"
name = "the square"

[[containers]]
id = "stall-a"
name = "the fishmonger's stall"
parent = "square"
public = {public}

[[containers]]
id = "stall-b"
name = "the baker's stall"
parent = "square"
public = {public}

[[containers]]
id = "booth"
name = "the scribe's booth"
parent = "square"
audible_range = {booth_range}

[[containers]]
id = "cellar"
name = "the cellar"
parent = "stall-a"

[[entities]]
id = "ann"
name = "Ann"
container = "stall-a"

[[entities]]
id = "bea"
name = "Bea"
container = "square"

[[entities]]
id = "cid"
name = "Cid"
container = "stall-b"

[[entities]]
id = "dan"
name = "Dan"
container = "booth"

[[entities]]
id = "eve"
name = "Eve"
container = "cellar"
"#;

fn market(public: bool, booth_range: u32) -> Engine {
    let text = MARKET
        .replace("{public}", &public.to_string())
        .replace("{booth_range}", &booth_range.to_string());
    let mut engine = Engine::in_memory("Market", 0).unwrap();
    engine.apply_world_file("market.toml", &text).unwrap();
    engine
}

fn id(engine: &Engine, name: &str) -> EntityId {
    engine.world().find_entity(name).unwrap().id
}

/// The names of those who hear `speaker`.
fn hearers(engine: &Engine, speaker: &str) -> BTreeSet<String> {
    let w = engine.world();
    w.hearers(id(engine, speaker))
        .iter()
        .map(|e| w.entity(e).unwrap().name.clone())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_public_container_is_part_of_the_space_around_it() {
    let open = market(true, 0);
    // A line in an open stall carries to the square and the other open stall, not into the
    // closed booth nor down into the cellar.
    assert_eq!(hearers(&open, "Ann"), names(&["Ann", "Bea", "Cid"]));
    // And what is said in the square is heard in the open stalls.
    assert_eq!(hearers(&open, "Bea"), names(&["Ann", "Bea", "Cid"]));
    // The booth is closed and its range is 0.
    assert_eq!(hearers(&open, "Dan"), names(&["Dan"]));
    // The cellar is closed: nothing leaves it.
    assert_eq!(hearers(&open, "Eve"), names(&["Eve"]));

    // The same market with closed stalls: every line stays where it is said.
    let closed = market(false, 0);
    for who in ["Ann", "Bea", "Cid", "Dan", "Eve"] {
        assert_eq!(hearers(&closed, who), names(&[who]), "{who}");
    }
}

#[test]
fn an_audible_range_reaches_through_open_stalls() {
    // One step out of the booth reaches the square, and the open stalls with it (no step
    // more), but the cellar is a step further down.
    let open = market(true, 1);
    assert_eq!(hearers(&open, "Dan"), names(&["Ann", "Bea", "Cid", "Dan"]));
    let closed = market(false, 1);
    assert_eq!(hearers(&closed, "Dan"), names(&["Bea", "Dan"]));
    // With two steps the closed stalls are reached (square, then each stall); the cellar
    // would need three.
    let two = market(false, 2);
    assert_eq!(hearers(&two, "Dan"), names(&["Ann", "Bea", "Cid", "Dan"]));
}

const COACH: &str = r#"
[world]
name = "Road"

[[containers]]
id = "road"
name = "the king's road"

[[containers]]
id = "coach"
name = "the mail coach"
parent = "road"
moving = true

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "coach"

[[entities]]
id = "mira"
name = "Mira"
container = "coach"
facts = "$respond"
"#;

/// Mira's reply prompt after Wren speaks in the coach, with the coach `moving` or not.
fn coach_prompt(moving: bool) -> String {
    let mut engine = Engine::in_memory("Road", 0).unwrap();
    let text = COACH.replace("moving = true", &format!("moving = {moving}"));
    engine.apply_world_file("road.toml", &text).unwrap();
    let (wren, mira) = (id(&engine, "Wren"), id(&engine, "Mira"));
    let g = ScriptedGenerator::new("Aye.");
    engine
        .run_turn_blocking(
            TurnInput::say(wren, "Are we there yet?", 1000),
            TurnOptions::default(),
            &g,
            &mut NoSink,
        )
        .unwrap();
    let request = g
        .requests()
        .into_iter()
        .find(|r| r.purpose == Purpose::Reply { speaker: mira })
        .expect("Mira was asked");
    request
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_moving_container_is_said_to_move() {
    let moving = coach_prompt(true);
    assert!(
        moving.contains("You are in the mail coach, in the king's road. The mail coach is moving."),
        "{moving}"
    );
    let still = coach_prompt(false);
    assert!(still.contains("You are in the mail coach"), "{still}");
    assert!(!still.contains("moving"), "{still}");
}

#[test]
fn a_public_place_is_said_to_be_public() {
    let mut engine = Engine::in_memory("Road", 0).unwrap();
    let text = COACH.replace("moving = true", "public = true");
    engine.apply_world_file("road.toml", &text).unwrap();
    let (wren, mira) = (id(&engine, "Wren"), id(&engine, "Mira"));
    let g = ScriptedGenerator::new("Aye.");
    engine
        .run_turn_blocking(
            TurnInput::say(wren, "Fares, please.", 1000),
            TurnOptions::default(),
            &g,
            &mut NoSink,
        )
        .unwrap();
    let prompt: String = g
        .requests()
        .into_iter()
        .filter(|r| r.purpose == Purpose::Reply { speaker: mira })
        .flat_map(|r| r.messages.into_iter().map(|m| m.content))
        .collect();
    assert!(
        prompt.contains(
            "The mail coach is public: people around it see and hear what happens there."
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("is moving"), "{prompt}");
}
