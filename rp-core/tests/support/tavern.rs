//! A room with the player (Wren) and one character (Tobias, who knows Wren): the world the
//! drives, rules and stimuli tests play in; and the world a log replays to.

use rp_core::{
    Activity, ContainerId, DriveConfig, Edge, Engine, EngineOptions, EntityId, Event, Millis,
    Position, Weights, World,
};

/// Drives where only an intention pushes Tobias to speak (its weight 1, his threshold 0.75),
/// with no night and no tiring: what a test sees is the rules' doing.
pub fn intent_only() -> DriveConfig {
    DriveConfig {
        weights: Some(Weights {
            social_debt: 0.0,
            task: 0.0,
            curiosity: 0.0,
            availability: 0.0,
            intent: 1.0,
        }),
        energy_drain_per_hour: Some(0.0),
        night_start: Some(0.0),
        night_end: Some(0.0),
        ..Default::default()
    }
}

/// Standing in `c`.
pub fn at(c: ContainerId) -> Activity {
    Activity {
        position: Some(Position {
            container: c,
            slot: None,
        }),
        ..Default::default()
    }
}

/// The room at host time `start`: Wren (host-controlled), Tobias (the engine's, his drives as
/// `config`), Tobias's edge to Wren with `affinity`. Returns the engine, Wren and Tobias.
pub fn two(
    options: EngineOptions,
    start: Millis,
    affinity: f64,
    config: DriveConfig,
) -> (Engine, EntityId, EntityId) {
    let mut engine = Engine::new_in(
        Box::new(rp_core::store::MemoryStore::new()),
        "Tavern",
        start,
        options,
    )
    .unwrap();
    let room = ContainerId(engine.world().next_id());
    let wren = EntityId(room.0 + 1);
    let tobias = EntityId(room.0 + 2);
    let entity = |id, name: &str, host| Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: Default::default(),
        host_controlled: host,
        state: Default::default(),
    };
    engine
        .append(vec![
            Event::ContainerCreated {
                id: room,
                key: None,
                name: "Room".into(),
                facts: Default::default(),
                parent: None,
                slots: vec![],
                properties: Default::default(),
            },
            entity(wren, "Wren", true),
            entity(tobias, "Tobias", false),
            Event::ActivityChanged {
                entity: wren,
                activity: at(room),
            },
            Event::ActivityChanged {
                entity: tobias,
                activity: at(room),
            },
            Event::EdgeUpdated {
                edge: Edge {
                    affinity,
                    ..Edge::new(tobias, wren)
                },
            },
            Event::DrivesConfigured {
                entity: Some(tobias),
                config: Box::new(config),
            },
        ])
        .unwrap();
    (engine, wren, tobias)
}

/// The world the engine's log replays to.
pub fn replay(engine: &Engine) -> World {
    let mut world = World::new();
    for (_, e) in engine.events(1, engine.head()).unwrap() {
        world.apply(&e).unwrap();
    }
    world
}

/// A world file of Wren (the player) and Tobias in a booth: the world the card, lorebook and
/// edit tests play turns in.
pub const BOOTH: &str = r#"
[world]
name = "Inn"
[[containers]]
id = "booth"
name = "the booth"
[[entities]]
id = "wren"
name = "Wren"
player = true
container = "booth"
[[entities]]
id = "tobias"
name = "Tobias"
container = "booth"
"#;

/// An engine of [`BOOTH`] at 1 s, with Wren's and Tobias's ids.
pub fn booth() -> (Engine, EntityId, EntityId) {
    let mut e = Engine::in_memory("Inn", 1_000).unwrap();
    e.apply_world_file("inn.toml", BOOTH).unwrap();
    let wren = e.world().resolve_entity("wren").unwrap();
    let tobias = e.world().resolve_entity("tobias").unwrap();
    (e, wren, tobias)
}
