//! Each kind of invalid event gets a clear error and leaves the world byte-for-byte unchanged.

use rp_core::*;

struct Fixture {
    world: World,
    mira: EntityId,
    wren: EntityId,
    key: EntityId,
    booth: ContainerId,
}

fn entity(id: u64, name: &str, host: bool) -> Event {
    Event::EntityCreated {
        id: EntityId(id),
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: FactSheet::from_text("A person."),
        host_controlled: host,
        state: EntityState::default(),
    }
}

fn at(container: ContainerId, slot: &str) -> Activity {
    Activity {
        position: Some(Position {
            container,
            slot: Some(slot.into()),
        }),
        ..Activity::default()
    }
}

fn fixture() -> Fixture {
    let mut w = World::new();
    let booth = ContainerId(1);
    for e in [
        Event::WorldCreated {
            name: "W".into(),
            now: 0,
            settings: WorldSettings::default(),
        },
        Event::ContainerCreated {
            id: booth,
            key: Some("booth".into()),
            name: "booth".into(),
            facts: FactSheet::default(),
            parent: None,
            slots: vec![Slot {
                name: "bench".into(),
                capacity: Some(1),
            }],
            properties: ContainerProperties::default(),
        },
        entity(2, "Mira", false),
        entity(3, "Wren", true),
        entity(4, "key", false),
        Event::ActivityChanged {
            entity: EntityId(2),
            activity: at(booth, "bench"),
        },
        Event::InventoryChanged {
            entity: EntityId(3),
            inventory: vec![EntityId(4)],
        },
    ] {
        w.apply(&e).unwrap();
    }
    Fixture {
        world: w,
        mira: EntityId(2),
        wren: EntityId(3),
        key: EntityId(4),
        booth,
    }
}

/// Applies `event`, expects an error of `kind` whose message contains `says`, and checks the
/// world did not change.
fn rejects(event: Event, kind: ErrorKind, says: &str) {
    let mut f = fixture();
    let before = f.world.to_bytes();
    let err = f
        .world
        .apply(&event)
        .expect_err("the event should be rejected");
    assert_eq!(err.kind(), kind, "{err}");
    assert!(
        err.to_string().contains(says),
        "{err:?} does not mention {says:?}"
    );
    assert_eq!(
        f.world.to_bytes(),
        before,
        "a rejected event changed the world"
    );
    assert_eq!(f.world.seq(), 7);
}

#[test]
fn unknown_ids_are_not_found() {
    let f = fixture();
    rejects(
        Event::EntityRemoved { id: EntityId(99) },
        ErrorKind::NotFound,
        "entity#99",
    );
    rejects(
        Event::ActivityChanged {
            entity: f.mira,
            activity: at(ContainerId(77), "bench"),
        },
        ErrorKind::NotFound,
        "container#77",
    );
    rejects(
        Event::EdgeUpdated {
            edge: Edge::new(f.mira, EntityId(50)),
        },
        ErrorKind::NotFound,
        "entity#50",
    );
    rejects(
        Event::ActivityChanged {
            entity: f.mira,
            activity: at(f.booth, "roof"),
        },
        ErrorKind::NotFound,
        "roof",
    );
}

#[test]
fn a_full_slot_is_a_capacity_error() {
    let f = fixture();
    rejects(
        Event::ActivityChanged {
            entity: f.wren,
            activity: at(f.booth, "bench"),
        },
        ErrorKind::Capacity,
        "bench",
    );
}

#[test]
fn staying_in_a_full_slot_is_not_moving_into_it() {
    let mut f = fixture();
    let posture = Activity {
        posture: Some("sitting".into()),
        ..at(f.booth, "bench")
    };
    f.world
        .apply(&Event::ActivityChanged {
            entity: f.mira,
            activity: posture,
        })
        .unwrap();
}

#[test]
fn an_entity_cannot_be_in_two_places() {
    let f = fixture();
    // The key is in Wren's inventory: it cannot also stand in the booth...
    rejects(
        Event::ActivityChanged {
            entity: f.key,
            activity: at(f.booth, "bench"),
        },
        ErrorKind::Conflict,
        "two places",
    );
    // ...nor be carried by Mira too...
    rejects(
        Event::InventoryChanged {
            entity: f.mira,
            inventory: vec![f.key],
        },
        ErrorKind::Conflict,
        "two places",
    );
    // ...and Mira, standing in the booth, cannot be carried.
    rejects(
        Event::InventoryChanged {
            entity: f.wren,
            inventory: vec![f.key, f.mira],
        },
        ErrorKind::Conflict,
        "two places",
    );
}

#[test]
fn duplicate_names_are_conflicts_whatever_the_case() {
    rejects(
        entity(10, "mIRA", false),
        ErrorKind::Conflict,
        "already exists",
    );
    let f = fixture();
    rejects(
        Event::EntityEdited {
            id: f.wren,
            name: Some("Mira".into()),
            aliases: None,
            facts: None,
            host_controlled: None,
        },
        ErrorKind::Conflict,
        "already exists",
    );
}

#[test]
fn an_edge_to_itself_is_invalid() {
    let f = fixture();
    rejects(
        Event::EdgeUpdated {
            edge: Edge::new(f.mira, f.mira),
        },
        ErrorKind::Invalid,
        "itself",
    );
}

#[test]
fn out_of_range_values_are_invalid() {
    let f = fixture();
    let hot = Edge {
        affinity: 1.5,
        ..Edge::new(f.mira, f.wren)
    };
    rejects(
        Event::EdgeUpdated { edge: hot },
        ErrorKind::Invalid,
        "affinity",
    );
    let nan = Edge {
        trust: f64::NAN,
        ..Edge::new(f.mira, f.wren)
    };
    rejects(
        Event::EdgeUpdated { edge: nan },
        ErrorKind::Invalid,
        "trust",
    );
    rejects(
        Event::TimeAdvanced { to: -1 },
        ErrorKind::Invalid,
        "time cannot go back",
    );
}

#[test]
fn reused_ids_are_conflicts() {
    rejects(
        entity(2, "Someone", false),
        ErrorKind::Conflict,
        "already taken",
    );
    rejects(
        entity(4, "Someone", false),
        ErrorKind::Conflict,
        "already taken",
    );
}

#[test]
fn speakers_must_match_their_turn_kind() {
    let f = fixture();
    let u = |speaker| Utterance {
        id: UtteranceId(20),
        speaker,
        text: "hello".into(),
        at: 0,
        witnesses: [speaker].into_iter().collect(),
        model: None,
        scene: None,
    };
    rejects(
        Event::UserTurn {
            utterance: u(f.mira),
        },
        ErrorKind::Invalid,
        "not host-controlled",
    );
    rejects(
        Event::AssistantTurn {
            utterance: u(f.wren),
        },
        ErrorKind::Invalid,
        "never speaks for it",
    );
    let unheard = Utterance {
        witnesses: [f.mira].into_iter().collect(),
        ..u(f.wren)
    };
    rejects(
        Event::UserTurn { utterance: unheard },
        ErrorKind::Invalid,
        "witnesses",
    );
}

#[test]
fn removals_that_would_orphan_things_are_refused() {
    let f = fixture();
    rejects(
        Event::ContainerRemoved { id: f.booth },
        ErrorKind::Conflict,
        "still holds entities",
    );
    rejects(
        Event::EntityRemoved { id: f.wren },
        ErrorKind::Conflict,
        "carries items",
    );
    rejects(
        Event::EntityRemoved { id: f.key },
        ErrorKind::Conflict,
        "carried by",
    );
}

#[test]
fn a_container_cannot_contain_itself() {
    let f = fixture();
    rejects(
        Event::ContainerEdited {
            id: f.booth,
            name: "booth".into(),
            facts: FactSheet::default(),
            parent: Some(f.booth),
            slots: vec![Slot {
                name: "bench".into(),
                capacity: Some(1),
            }],
            properties: ContainerProperties::default(),
        },
        ErrorKind::Invalid,
        "inside itself",
    );
}

#[test]
fn only_the_first_event_creates_the_world() {
    let mut w = World::new();
    let err = w.apply(&Event::TimeAdvanced { to: 1 }).unwrap_err();
    assert!(err.to_string().contains("world_created"));
    assert_eq!(w.to_bytes(), World::new().to_bytes());
    rejects(
        Event::WorldCreated {
            name: "Again".into(),
            now: 0,
            settings: WorldSettings::default(),
        },
        ErrorKind::Conflict,
        "already been created",
    );
}

#[test]
fn removing_an_entity_takes_its_edges_groups_and_memories_with_it() {
    let mut f = fixture();
    let extra = [entity(10, "Ash", false), entity(11, "Bram", false)];
    for e in &extra {
        f.world.apply(e).unwrap();
    }
    let group: std::collections::BTreeSet<_> =
        [f.mira, EntityId(10), EntityId(11)].into_iter().collect();
    for e in [
        Event::EdgeUpdated {
            edge: Edge::new(f.mira, f.wren),
        },
        Event::EdgeUpdated {
            edge: Edge::new(f.wren, f.mira),
        },
        Event::GroupUpdated {
            group: Group {
                id: GroupId(12),
                members: group,
                name: None,
                summary: String::new(),
                shared: vec![],
            },
        },
        Event::MemoryAdded {
            memory: Memory {
                id: MemoryId(13),
                owner: f.mira,
                witnesses: [f.mira].into_iter().collect(),
                text: "a memory".into(),
                kind: MemoryKind::Reflection,
                significance: 0.5,
                created: 0,
                last_accessed: None,
                access_count: 0,
                decay: DecayStage::Full,
                pinned: false,
                embedding: None,
                scene: None,
                stability: 0.0,
                summary: None,
                feeling: None,
                about: None,
                sources: Vec::new(),
            },
        },
        Event::ActivityChanged {
            entity: f.mira,
            activity: Activity::default(),
        },
        Event::EntityRemoved { id: f.mira },
    ] {
        f.world.apply(&e).unwrap();
    }
    assert_eq!(f.world.edges().count(), 0);
    assert_eq!(f.world.groups().count(), 0);
    assert_eq!(f.world.all_memories().count(), 0);
    assert!(f.world.entity_by_name("mira").is_none());
    // The name is free again.
    f.world.apply(&entity(20, "Mira", false)).unwrap();
}
