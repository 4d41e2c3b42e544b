//! The tavern demo: loads `examples/tavern.toml` into a save file, prints the world, appends a
//! few events, reopens the file and shows they persisted.
//!
//! Run with `cargo run --release --example tavern` (the save goes to `tavern.rp` in the
//! current directory; pass another path as the first argument).

use rp_core::{
    Activity, Edge, Engine, EngineOptions, EntityId, Event, Position, Utterance, UtteranceId,
    WitnessSet, World,
};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let save = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("tavern.rp"), PathBuf::from);
    let world_file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tavern.toml");
    if save.exists() {
        std::fs::remove_file(&save)?;
    }

    let mut engine =
        Engine::create_from_world_file(&save, &world_file, 0, EngineOptions::default())?;
    println!("Created {} from {}\n", save.display(), world_file.display());
    print_world(engine.world());

    // Wren slides over to the bar and speaks; Mira answers; Mira warms to Wren a little.
    let w = engine.world();
    let wren = w.entity_by_name("Wren").ok_or("no Wren")?.id;
    let mira = w.entity_by_name("Mira Holt").ok_or("no Mira")?.id;
    let bar = w.container_by_key("bar").ok_or("no bar")?.id;
    let at_bar: WitnessSet = [wren, mira].into_iter().collect();
    let first = w.next_id();
    let moved = Activity {
        position: Some(Position {
            container: bar,
            slot: Some("stools".into()),
        }),
        posture: Some("leaning on the counter".into()),
        ..w.entity(wren).ok_or("no Wren")?.activity.clone()
    };
    let warmer = Edge {
        affinity: 0.05,
        summary: "A stranger, but a polite one who tips.".into(),
        last_interaction: Some(61_000),
        ..w.edge(mira, wren)
            .cloned()
            .unwrap_or_else(|| Edge::new(mira, wren))
    };
    let head = engine.append(vec![
        Event::TimeAdvanced { to: 60_000 },
        Event::ActivityChanged {
            entity: wren,
            activity: moved,
        },
        say(
            first,
            wren,
            "I'm looking for the Ferryman.",
            60_000,
            &at_bar,
            true,
        ),
        say(
            first + 1,
            mira,
            "Then you're looking for trouble. Sit, drink, and keep your voice down.",
            61_000,
            &at_bar,
            false,
        ),
        Event::EdgeUpdated { edge: warmer },
    ])?;
    println!("\nAppended 5 events; head is now seq {head}.");
    let before = engine.world().to_bytes();
    drop(engine);

    let engine = Engine::open(&save)?;
    assert_eq!(
        engine.world().to_bytes(),
        before,
        "the reopened world differs"
    );
    println!(
        "Reopened {}: head seq {}, branch {:?}, state identical.\n",
        save.display(),
        engine.head(),
        engine.current_branch()
    );
    println!("Recent dialogue:");
    for u in engine.world().dialogue() {
        let who = engine
            .world()
            .entity(u.speaker)
            .map_or("?", |e| e.name.as_str());
        println!("  [{:>6} ms] {who}: {}", u.at, u.text);
    }
    let edge = engine.world().edge(mira, wren).ok_or("edge missing")?;
    println!(
        "\nMira → Wren now: affinity {:+.2}, \"{}\"",
        edge.affinity, edge.summary
    );
    Ok(())
}

fn say(
    id: u64,
    speaker: EntityId,
    text: &str,
    at: i64,
    witnesses: &WitnessSet,
    user: bool,
) -> Event {
    let utterance = Utterance {
        id: UtteranceId(id),
        speaker,
        text: text.into(),
        at,
        witnesses: witnesses.clone(),
        model: None,
    };
    if user {
        Event::UserTurn { utterance }
    } else {
        Event::AssistantTurn { utterance }
    }
}

fn print_world(w: &World) {
    println!(
        "{} (seq {}, t = {} ms)",
        w.meta().map_or("?", |m| m.name.as_str()),
        w.seq(),
        w.now()
    );
    for c in w.containers() {
        let parent = c
            .parent
            .and_then(|p| w.container(p))
            .map_or(String::new(), |p| format!(" in {}", p.name));
        println!("\n  [{}]{parent}", c.name);
        for e in w.entities_in(c.id) {
            let slot = e
                .activity
                .position
                .as_ref()
                .and_then(|p| p.slot.clone())
                .unwrap_or_default();
            let posture = e.activity.posture.clone().unwrap_or_default();
            let who = if e.host_controlled { " (player)" } else { "" };
            println!(
                "    {}{who}: {posture}, {slot}; mood {}",
                e.name,
                e.state.mood.as_deref().unwrap_or("-")
            );
            for item in &e.inventory {
                println!(
                    "      carries {}",
                    w.entity(*item).map_or("?", |i| i.name.as_str())
                );
            }
        }
    }
    println!("\n  Relationships (directed):");
    for x in w.edges() {
        let name = |id| {
            w.entity(id)
                .map_or("?", |e: &rp_core::Entity| e.name.as_str())
        };
        println!(
            "    {} → {}: affinity {:+.2}, trust {:+.2}: {}",
            name(x.from),
            name(x.to),
            x.affinity,
            x.trust,
            x.summary
        );
    }
}
