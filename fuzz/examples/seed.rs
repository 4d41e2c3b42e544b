//! Writes seed corpora for every fuzz target into `fuzz/corpus/<target>/`:
//! encoded events of every kind, snapshots of the tavern world (as loaded from
//! `examples/tavern.toml`, and after some play), and world files.
//!
//! Run with `cargo run --manifest-path fuzz/Cargo.toml --example seed` (any toolchain).

use rp_core::log::codec::{encode_event, encode_snapshot, event_body};
use rp_core::*;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("create corpus dir");
    std::fs::write(dir.join(name), bytes).expect("write seed");
}

fn id(world: &World, name: &str) -> EntityId {
    world.entity_by_name(name).expect(name).id
}

/// Events of every kind, valid against the tavern world in order (where possible).
fn play(world: &mut World) -> Vec<Event> {
    let wren = id(world, "Wren");
    let mira = id(world, "Mira Holt");
    let third = world
        .entities()
        .map(|e| e.id)
        .find(|x| *x != wren && *x != mira)
        .expect("a third entity");
    let bar = world.container_by_key("bar").expect("bar").id;
    let mut next = world.next_id();
    let mut fresh = || {
        next += 1;
        next - 1
    };
    let item = EntityId(fresh());
    let room = ContainerId(fresh());
    let group = GroupId(fresh());
    let u1 = UtteranceId(fresh());
    let u2 = UtteranceId(fresh());
    let memory = MemoryId(fresh());
    let both: WitnessSet = [wren, mira].into_iter().collect();
    let events = vec![
        Event::TimeAdvanced { to: 60_000 },
        Event::ResponseDecided {
            entity: mira,
            respond: true,
            retry_ms: Some(500),
            fired: vec![1, 3],
            draws: vec![0.25, 0.75],
        },
        Event::Generated {
            purpose: rp_core::turn::Purpose::Reply { speaker: mira },
            result: rp_core::turn::GenerateResult {
                text: "Sit, drink.".into(),
                prompt_tokens: Some(812),
                completion_tokens: Some(4),
                model: Some("scripted".into()),
                ..Default::default()
            },
        },
        Event::MemoriesRecalled {
            ids: vec![],
            at: 1_000,
        },
        Event::EntityCreated {
            id: item,
            key: Some("lantern".into()),
            name: "a brass lantern".into(),
            aliases: vec!["the lantern".into()],
            facts: FactSheet(vec![
                "Dented, still warm.".into(),
                "fuel: 3".into(),
                "$if self.fuel > 2 && random() < 0.5: It flickers.".into(),
                "$if /lamp|light/i.test(content): $respond true".into(),
            ]),
            host_controlled: false,
            state: EntityState::default(),
        },
        Event::EntityEdited {
            id: item,
            name: Some("a dented lantern".into()),
            aliases: None,
            facts: Some(FactSheet(vec!["It smells of whale oil.".into()])),
            host_controlled: Some(false),
        },
        Event::InventoryChanged {
            entity: wren,
            inventory: vec![item],
        },
        Event::ActivityChanged {
            entity: wren,
            activity: Activity {
                position: Some(Position {
                    container: bar,
                    slot: Some("stools".into()),
                }),
                posture: Some("leaning on the counter".into()),
                action: Some(Action {
                    verb: "drinking".into(),
                    started: 60_000,
                    duration_ms: Some(5_000),
                    interruptible: true,
                    attention_required: false,
                }),
                holding: vec![item],
                attention: Some(mira),
                status: Some("tired".into()),
            },
        },
        Event::EntityStateChanged {
            entity: mira,
            state: EntityState {
                mood: Some("wary".into()),
                goals: vec!["keep the peace".into()],
                status: None,
            },
        },
        Event::ContainerCreated {
            id: room,
            key: Some("cellar".into()),
            name: "the cellar".into(),
            facts: FactSheet(vec!["Damp.".into()]),
            parent: Some(bar),
            slots: vec![Slot {
                name: "barrels".into(),
                capacity: Some(2),
            }],
            properties: ContainerProperties {
                moving: false,
                public: false,
                audible_range: 0,
            },
        },
        Event::ContainerEdited {
            id: room,
            name: "the wine cellar".into(),
            facts: FactSheet::default(),
            parent: None,
            slots: vec![],
            properties: ContainerProperties::default(),
        },
        Event::EdgeUpdated {
            edge: Edge {
                affinity: 0.25,
                trust: -0.5,
                summary: "A polite stranger.".into(),
                knowledge: vec!["tips well".into()],
                private_moments: vec![],
                last_interaction: Some(60_000),
                imprints: Vec::new(),
                source: None,
                ..Edge::new(mira, wren)
            },
        },
        Event::GroupUpdated {
            group: Group {
                id: group,
                members: [wren, mira, third].into_iter().collect(),
                name: Some("the conspirators".into()),
                summary: "They share a secret.".into(),
                shared: vec!["the Ferryman".into()],
            },
        },
        Event::UserTurn {
            utterance: Utterance {
                id: u1,
                speaker: wren,
                text: "I'm looking for the Ferryman.".into(),
                at: 60_000,
                witnesses: both.clone(),
                model: None,
                scene: None,
            },
        },
        Event::AssistantTurn {
            utterance: Utterance {
                id: u2,
                speaker: mira,
                text: "Never heard of him.".into(),
                at: 61_000,
                witnesses: both.clone(),
                model: Some("test-model".into()),
                scene: None,
            },
        },
        Event::MemoryAdded {
            memory: Memory {
                id: memory,
                owner: mira,
                witnesses: both,
                text: "A stranger asked about the Ferryman.".into(),
                kind: MemoryKind::Utterance,
                significance: 0.7,
                created: 61_000,
                last_accessed: Some(61_000),
                access_count: 1,
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
        Event::WorldFileApplied {
            file: "tavern.toml".into(),
            text: "[world]\nname = \"x\"\n".into(),
        },
        // Removals last, after the snapshot is taken (see below).
        Event::EdgeRemoved {
            from: mira,
            to: wren,
        },
        Event::GroupRemoved { id: group },
        Event::MemoryRemoved { id: memory },
        Event::ContainerRemoved { id: room },
        Event::EntityRemoved { id: mira },
    ];
    events
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let tavern = rp_fuzz::tavern().clone();
    let creation =
        worldfile::creation_events("tavern.toml", rp_fuzz::TAVERN_TOML, 0, Default::default())
            .expect("tavern loads");

    // A world after some play (everything but the removals applied), for snapshots.
    let mut played = tavern.clone();
    let events = play(&mut played);
    let removals = 5;
    for e in &events[..events.len() - removals] {
        played.apply(e).unwrap_or_else(|err| panic!("{err}: {e:?}"));
    }
    let mut all = creation.clone();
    all.extend(events.iter().cloned());
    all.push(Event::WorldCreated {
        name: "Another".into(),
        now: 0,
        settings: WorldSettings {
            dialogue_window: 2,
            ..Default::default()
        },
    });

    // Events: every kind, as records and as bare bodies.
    let mut kinds = std::collections::BTreeSet::new();
    for (i, e) in all.iter().enumerate() {
        let record = encode_event(e);
        let name = format!("{i:03}-{}", e.kind());
        kinds.insert(e.kind());
        write(&root.join("decode_event"), &name, &record);
        // The body before compression (a record's stored body is compressed since format 2).
        write(&root.join("decode_event_body"), &name, &event_body(e));
    }
    println!("event kinds seeded: {}", kinds.len());

    // Snapshots: empty, just created, tavern, after play; each with a few event tails.
    let mut created = World::new();
    created.apply(&creation[0]).expect("world_created");
    let tails: [&[u8]; 4] = [
        &[],
        &[7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        &[1, 0, 5, 5, 5, 5, 5, 8, 0, 1, 2, 3, 15, 0, 1, 2, 3, 4, 5, 6],
        &[
            5, 1, 2, 3, 4, 5, 6, 7, 8, 6, 1, 3, 1, 11, 1, 2, 16, 1, 2, 3, 4, 5, 6, 7,
        ],
    ];
    for (wname, w) in [
        ("empty", World::new()),
        ("created", created),
        ("tavern", tavern.clone()),
        ("played", played.clone()),
    ] {
        let record = encode_snapshot(&w);
        for (t, tail) in tails.iter().enumerate() {
            let name = format!("{wname}-{t}");
            write(
                &root.join("decode_snapshot"),
                &name,
                &rp_fuzz::join_tail(&record, tail),
            );
            write(
                &root.join("decode_snapshot_body"),
                &name,
                &rp_fuzz::join_tail(&w.to_bytes(), tail),
            );
        }
    }

    // World files.
    let dir = root.join("world_file");
    write(&dir, "tavern.toml", rp_fuzz::TAVERN_TOML.as_bytes());
    write(
        &dir,
        "tavern-export.toml",
        worldfile::export(&tavern).as_bytes(),
    );
    write(
        &dir,
        "played-export.toml",
        worldfile::export(&played).as_bytes(),
    );
    write(&dir, "minimal.toml", b"[world]\nname = \"x\"\n");
    write(
        &dir,
        "module-doc.toml",
        br#"[world]
name = "The Crooked Lantern"

[[containers]]
id = "tavern"
name = "The Crooked Lantern"
audible_range = 1
slots = [{ name = "floor" }]

[[containers]]
id = "booth"
name = "the corner booth"
parent = "tavern"
slots = [{ name = "bench", capacity = 4 }]

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "booth"
slot = "bench"
facts = """
A traveller with ink-stained fingers.
hp: 10
$# only in column 0
$if self.hp > 3 && mentioned: $respond true
$if roll("2d6+1") >= 9 || /ferry(man)?/i.test(content): Wren leans in.
$if time.is_night ? unread_count > 2 : false: $retry 1500
$respond false
"""

[[entities]]
id = "tavern-keeper"
name = "Mira"
container = "tavern"
slot = "floor"

[[edges]]
from = "wren"
to = "tavern-keeper"
affinity = 0.2
"#,
    );
    // Every world-file seed must load, so the fuzzer starts from the deep end. (Only the seeds:
    // the directory also holds what earlier campaigns found.)
    for f in std::fs::read_dir(&dir).expect("world_file seeds") {
        let path = f.expect("dir entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read seed");
        worldfile::creation_events("seed.toml", &text, 0, Default::default())
            .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    }
    // Turns: options JSON, the input, then model outputs, separated by U+0001.
    let turn = root.join("turn");
    for (name, seed) in [
        ("plain", "\u{1}Ana, a cider?\u{1}Coming up.\u{1}Bo here."),
        (
            "named",
            "{}\u{1}Bo! Ana! Wren here.\u{1}Ana: hello\u{1}  \u{1}Bo: x",
        ),
        (
            "semantic",
            concat!(
                r#"{"semantic": true, "prompt": {"memories_k": 3}}"#,
                "\u{1}Ana, ale or beer?\u{1}Beer.\u{1}abc\u{1}Bo: ale\u{1}abcd"
            ),
        ),
        (
            "tight",
            concat!(
                r#"{"prompt": {"budget_tokens": 5, "dialogue_lines": 1, "template": {"system": "{{name}} {{dialogue}}", "user": ""}}}"#,
                "\u{1}Bo, Ana: the heron seal\u{1}Bo: ok"
            ),
        ),
        ("wake", "{\"max_responders\": 1}\u{1}\u{1}\u{1}"),
    ] {
        write(&turn, name, seed.as_bytes());
    }
    for t in [
        "decode_event",
        "decode_event_body",
        "decode_snapshot",
        "decode_snapshot_body",
        "world_file",
        "turn",
    ] {
        let n = std::fs::read_dir(root.join(t)).map_or(0, |d| d.count());
        println!("{t}: {n} seeds");
    }
}
