// One file: the story writing a fixture (every event kind) and its replay check change together.
//! Save compatibility: a save file written by an earlier build must keep opening, decoding and
//! replaying to the same world.
//!
//! `tests/fixtures/save-<FORMAT_VERSION>.rp` is a save written through the public API by the
//! build that introduced that record format version, and `save-<FORMAT_VERSION>.expected.json`
//! is what that build saw in it: the current branch, every branch with its head and fork
//! point, the snapshots the file holds, and for each branch every event of its log and the
//! world as projected (`World`'s serde form). The story behind it reaches every [`Event`] kind
//! (see [`story`]); two branches, a rewind tail and snapshots make opening go through
//! snapshot decoding, tail replay and segments stored under several branch ids.
//!
//! [`old_save_opens_and_replays_to_the_recorded_world`] runs on every fixture in the folder: it
//! copies the save to a temporary directory (the fixture itself is never written), opens it,
//! compares each branch's events and world with the expectation, replays each branch's whole
//! log from scratch and compares again, and appends a new turn. Fields added to the model
//! since the fixture was written (with serde defaults) are allowed; every recorded field must
//! read back with the recorded value.
//!
//! Writing a fixture, once per format version, with the build that writes that version:
//!
//! ```text
//! RP_WRITE_FIXTURE=1 cargo test -p rp-core --test compat -- --ignored write_fixture
//! ```
//!
//! It refuses to replace an existing fixture: a fixture records what an older build wrote, and
//! rewriting it with newer code would test nothing. Without `RP_WRITE_FIXTURE=1` the ignored
//! test builds the same save in a temporary directory and only checks it. The save is
//! compacted (redb's own compaction: same records, fewer free pages) before it is copied, which
//! keeps it near 200 KB instead of 1 MB.

use rp_core::query::{QueryConfig, QueryInput, QueryStatus};
use rp_core::scene::SceneOptions;
use rp_core::store::{RedbStore, Store};
use rp_core::story::EventPlan;
use rp_core::turn::{
    GenerateResult, NoSink, Purpose, ScriptedGenerator, Step, ToolCall, TurnInput, TurnOptions,
    TurnOutcome,
};
use rp_core::update::{ActionType, UpdateOptions};
use rp_core::{
    Action, Activity, Durability, Edge, Effect, Engine, EngineOptions, EntityId, EntityState,
    Event, FactSheet, GistPromotion, ItemPromotion, KnowledgePromotion, MemoryKind, Millis,
    Position, Promotion, Skip, SummaryPromotion, World, WorldSettings,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

const MINUTE: Millis = 60_000;
const HOUR: Millis = 60 * MINUTE;

/// Every event kind (`Event::kind`) of the format the fixture was written in.
const EVENT_KINDS: [&str; 38] = [
    "world_created",
    "entity_created",
    "entity_edited",
    "entity_removed",
    "container_created",
    "container_edited",
    "container_removed",
    "activity_changed",
    "inventory_changed",
    "entity_state_changed",
    "edge_updated",
    "edge_removed",
    "group_updated",
    "group_removed",
    "user_turn",
    "assistant_turn",
    "memory_added",
    "memory_removed",
    "memories_recalled",
    "time_advanced",
    "time_skipped",
    "thread_opened",
    "thread_closed",
    "scoped_event_planned",
    "scoped_event_started",
    "scoped_event_closed",
    "reports_judged",
    "tools_run",
    "system_line_injected",
    "system_lines_shown",
    "scene_opened",
    "scene_closed",
    "world_file_applied",
    "response_decided",
    "generated",
    "query_asked",
    "query_answered",
    "query_failed",
];

/// Branch ids scanned for snapshots (the fixture's story makes four branches).
const BRANCH_IDS: std::ops::RangeInclusive<u64> = 1..=16;

/// The first version of the world file.
const WORLD_V1: &str = r#"
[world]
name = "Compat Inn"

[[containers]]
id = "tavern"
name = "The Lantern"
public = true
audible_range = 1
slots = [{ name = "floor" }, { name = "hearth", capacity = 3 }]
facts = "A low-beamed tavern at the edge of the salt marsh."

[[containers]]
id = "bar"
name = "the bar"
parent = "tavern"
slots = [{ name = "stools", capacity = 4 }]

[[containers]]
id = "cellar"
name = "the cellar"
facts = "Barrels and damp."

[[containers]]
id = "shed"
name = "the shed"

[[entities]]
id = "wren"
name = "Wren"
aliases = ["the traveller"]
player = true
container = "tavern"
slot = "floor"
posture = "standing"
mood = "curious"
goals = ["find the Ferryman"]
inventory = ["letter"]
facts = "A traveller with ink-stained fingers."

[[entities]]
id = "mira"
name = "Mira Holt"
aliases = ["Mira", "the innkeeper"]
container = "tavern"
posture = "standing"
action = "polishing tankards"
mood = "watchful"
goals = ["keep the peace"]
facts = '''
Keeps the inn and hears every rumour.
$respond
'''

[[entities]]
id = "tobias"
name = "Tobias Reed"
aliases = ["Tobias"]
container = "tavern"
slot = "hearth"
status = "three ciders in"
facts = '''
A fisherman with a bad knee.
$if random() < 0.5: $respond
$if mentioned: $respond
'''

[[entities]]
id = "ana"
name = "Ana"
container = "cellar"
facts = "Counts barrels."

[[entities]]
id = "pete"
name = "Old Pete"
container = "shed"
facts = "Mends nets."

[[entities]]
id = "letter"
name = "the sealed letter"
facts = "Sealed with black wax."

[[entities]]
id = "mug"
name = "a mug"
container = "tavern"
facts = "$respond false"

[[edges]]
from = "mira"
to = "tobias"
affinity = 0.3
trust = -0.2
summary = "Fond of him; does not believe his stories."
knowledge = ["owes her eleven silver"]

[[edges]]
from = "tobias"
to = "mira"
affinity = 0.6
trust = 0.7
summary = "The only one who still listens."

[[edges]]
from = "wren"
to = "mira"
affinity = 0.1
summary = "Looks like someone who knows things."

[[edges]]
from = "pete"
to = "mira"
affinity = 0.2
summary = "Pays late."
"#;

/// The second version: Mira's facts and the tavern edited, Old Pete, his shed and an edge
/// removed, Edda added.
const WORLD_V2: &str = r#"
[world]
name = "Compat Inn"

[[containers]]
id = "tavern"
name = "The Lantern"
public = true
audible_range = 1
slots = [{ name = "floor" }, { name = "hearth", capacity = 3 }]
facts = "A low-beamed tavern at the edge of the salt marsh. The roof leaks."

[[containers]]
id = "bar"
name = "the bar"
parent = "tavern"
slots = [{ name = "stools", capacity = 4 }]

[[containers]]
id = "cellar"
name = "the cellar"
facts = "Barrels and damp."

[[entities]]
id = "wren"
name = "Wren"
aliases = ["the traveller"]
player = true
container = "tavern"
slot = "floor"
posture = "standing"
mood = "curious"
goals = ["find the Ferryman"]
inventory = ["letter"]
facts = "A traveller with ink-stained fingers."

[[entities]]
id = "mira"
name = "Mira Holt"
aliases = ["Mira", "the innkeeper"]
container = "tavern"
posture = "standing"
action = "polishing tankards"
mood = "watchful"
goals = ["keep the peace"]
facts = '''
Keeps the inn and hears every rumour.
Her brother vanished on the marsh.
$respond
'''

[[entities]]
id = "tobias"
name = "Tobias Reed"
aliases = ["Tobias"]
container = "tavern"
slot = "hearth"
status = "three ciders in"
facts = '''
A fisherman with a bad knee.
$if random() < 0.5: $respond
$if mentioned: $respond
'''

[[entities]]
id = "ana"
name = "Ana"
container = "cellar"
facts = "Counts barrels."

[[entities]]
id = "letter"
name = "the sealed letter"
facts = "Sealed with black wax."

[[entities]]
id = "mug"
name = "a mug"
container = "tavern"
facts = "$respond false"

[[entities]]
id = "edda"
name = "Edda"
container = "tavern"
slot = "floor"
facts = "A fisher who owes money."

[[edges]]
from = "mira"
to = "tobias"
affinity = 0.3
trust = -0.2
summary = "Fond of him; does not believe his stories."
knowledge = ["owes her eleven silver"]

[[edges]]
from = "tobias"
to = "mira"
affinity = 0.6
trust = 0.7
summary = "The only one who still listens."
"#;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

fn save_name(version: u16) -> String {
    format!("save-{version}.rp")
}

fn expectation_name(version: u16) -> String {
    format!("save-{version}.expected.json")
}

fn id(engine: &Engine, key: &str) -> EntityId {
    engine
        .world()
        .find_entity(key)
        .unwrap_or_else(|| panic!("no entity {key:?}"))
        .id
}

fn at(engine: &Engine, container: &str, slot: Option<&str>) -> Activity {
    Activity {
        position: Some(Position {
            container: engine
                .world()
                .container_by_key(container)
                .unwrap_or_else(|| panic!("no container {container:?}"))
                .id,
            slot: slot.map(str::to_owned),
        }),
        ..Default::default()
    }
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

/// Runs a turn step by step: reply requests offered tools take the queued tool-call rounds
/// first, every other generation is `g`'s answer, vectors are `g`'s, and host actions answer
/// `pour_cider` (with a system line) and refuse anything else.
fn drive(
    engine: &mut Engine,
    g: &ScriptedGenerator,
    input: TurnInput,
    options: TurnOptions,
    tool_rounds: Vec<Vec<ToolCall>>,
) -> TurnOutcome {
    let mut tool_rounds = VecDeque::from(tool_rounds);
    let mut turn = engine
        .begin_turn_with(input, options)
        .expect("the turn begins");
    loop {
        match turn.step().expect("the turn steps") {
            Step::Generate(request) => {
                let offered =
                    matches!(request.purpose, Purpose::Reply { .. }) && !request.tools.is_empty();
                let result = match tool_rounds.pop_front() {
                    Some(calls) if offered => GenerateResult {
                        tool_calls: calls,
                        ..GenerateResult::default()
                    },
                    other => {
                        if let Some(calls) = other {
                            tool_rounds.push_front(calls);
                        }
                        g.answer(&request)
                    }
                };
                turn.provide(result).expect("the generation is accepted");
            }
            Step::Embed(request) => turn
                .provide_embeddings(g.vectors(&request.texts))
                .expect("the vectors are accepted"),
            Step::Act(action) => {
                let answer = if action.name == "pour_cider" {
                    Ok(json!({"poured": true, "system_line": "A cider lands on the table."}))
                } else {
                    Err("the purse is empty".to_owned())
                };
                turn.provide_action(answer).expect("the answer is accepted");
            }
            Step::Done => return turn.finish().expect("the turn commits"),
        }
    }
}

fn say(engine: &mut Engine, g: &ScriptedGenerator, who: &str, text: &str, now: Millis) {
    let speaker = id(engine, who);
    let outcome = drive(
        engine,
        g,
        TurnInput::say(speaker, text, now),
        TurnOptions {
            remember_dialogue: false,
            ..TurnOptions::default()
        },
        vec![],
    );
    assert!(
        !outcome.replies.is_empty(),
        "someone answers {text:?} (Mira always does)"
    );
}

/// The story of the fixture. Returns the engine, on branch `main`. Every event kind is
/// reached through the engine's calls, except `group_removed`, which only
/// [`Engine::append`] writes.
fn story(path: &Path) -> Engine {
    let options = EngineOptions {
        durability: Durability::Immediate,
        snapshot_every: 40,
        settings: WorldSettings {
            dialogue_window: 16,
            seed: 0x5eed_cafe,
        },
        progress: None,
    };
    let mut engine = Engine::create_with(path, "Compat Inn", 0, options).expect("create");
    let g = ScriptedGenerator::new("{name} nods. ({n})");

    // The world file: containers, entities, positions, an inventory, edges.
    engine
        .apply_world_file("compat.toml", WORLD_V1)
        .expect("the world file applies");
    let (wren, mira, tobias) = (
        id(&engine, "wren"),
        id(&engine, "mira"),
        id(&engine, "tobias"),
    );

    // A turn with the state-update pass, host actions and tool calls: the scene opens, both
    // may answer, the reports change the world.
    g.script(mira, ["Let me roll for the weather first.", "Aye."]);
    g.script_purpose(
        &Purpose::StateUpdate,
        [r#"{"reports": [
            {"type": "feeling", "who": "Mira", "toward": "Wren", "affinity": "warmer", "trust": "less"},
            {"type": "learned", "who": "Mira", "about": "Wren", "fact": "Carries a letter for the Ferryman."},
            {"type": "relationship", "who": "Tobias", "toward": "Wren", "summary": "A stranger who asks too much."},
            {"type": "state", "who": "Tobias", "mood": "uneasy", "goals": ["leave early"]},
            {"type": "activity", "who": "Mira", "slot": "hearth", "posture": "crouching", "action": "stoking the fire", "pick_up": "a mug"},
            {"type": "thread_opened", "text": "Who is the Ferryman?", "participants": ["Mira", "Wren"]},
            {"type": "significance", "who": "Tobias", "line": 1, "significance": 0.9},
            {"type": "pour_cider", "who": "Mira", "size": "large"},
            {"type": "pay_debt", "who": "Tobias", "amount": 3}
        ]}"#],
    );
    let updates = UpdateOptions {
        enabled: true,
        actions: vec![
            ActionType {
                name: "pour_cider".into(),
                description: "someone pours a cider".into(),
                parameters: json!({"properties": {"size": {"enum": ["small", "large"]}}}),
            },
            ActionType {
                name: "pay_debt".into(),
                description: "someone pays what they owe".into(),
                parameters: json!({"properties": {"amount": {"type": "integer", "minimum": 1}}}),
            },
        ],
        ..UpdateOptions::default()
    };
    let first = drive(
        &mut engine,
        &g,
        TurnInput::say(
            wren,
            "Evening, Mira. I carry a letter for the Ferryman.",
            MINUTE,
        ),
        TurnOptions {
            updates: updates.clone(),
            ..TurnOptions::default()
        },
        vec![vec![
            call("a", "roll_dice", json!({"notation": "2d6+1"})),
            call(
                "b",
                "roll_effects",
                json!({"effects": [{"chance": 0.7, "desc": "rain"}, {"chance": 0.2, "desc": "fog"}]}),
            ),
        ]],
    );
    let rejected: Vec<_> = first
        .reports
        .iter()
        .filter_map(|r| r.rejected.as_deref())
        .collect();
    assert_eq!(
        (first.reports.len(), rejected),
        (9, vec!["the purse is empty"]),
        "every report applies but the refused host action"
    );

    // A system line for Mira, shown by the next turn, which asks for vectors too.
    engine
        .inject_system_line("The cellar door slams shut. React to it.", Some(vec![mira]))
        .expect("the line is injected");
    g.script(mira, ["The wind, nothing more."]);
    drive(
        &mut engine,
        &g,
        TurnInput::say(
            wren,
            "Mira, what was that noise? And the letter?",
            2 * MINUTE,
        ),
        TurnOptions {
            semantic: true,
            ..TurnOptions::default()
        },
        vec![],
    );

    // Memories formed, removed and recalled through the engine.
    let pinned = engine
        .add_memory(rp_core::memory::NewMemory {
            owner: mira,
            witnesses: vec![wren],
            text: "The traveller carries a letter sealed with a heron.".into(),
            kind: MemoryKind::Reflection,
            significance: 0.8,
            created: None,
            pinned: true,
            embedding: Some(g.vectors(&["a letter sealed with a heron".into()])[0].clone()),
            sources: vec![],
        })
        .expect("memory");
    let passing = engine
        .add_memory(rp_core::memory::NewMemory {
            owner: tobias,
            witnesses: vec![],
            text: "Spilled a cider.".into(),
            kind: MemoryKind::Utterance,
            significance: 0.1,
            created: Some(2 * MINUTE),
            pinned: false,
            embedding: None,
            sources: vec![],
        })
        .expect("memory");
    engine.remove_memory(passing).expect("remove");
    engine
        .mark_recalled(&[pinned], 3 * MINUTE)
        .expect("recalled");

    // A response decision outside a turn.
    engine
        .decide(
            tobias,
            &rp_core::Message {
                content: "Another cider, Tobias?".into(),
                author: "Wren".into(),
                ..Default::default()
            },
        )
        .expect("decide");

    // Direct edits: a move, an edge, an inventory handed over, a state, a facts edit.
    let ana = id(&engine, "ana");
    let letter = id(&engine, "letter");
    let bar = at(&engine, "bar", Some("stools"));
    let mut mira_carries = engine.world().entity(mira).unwrap().inventory.clone();
    mira_carries.push(letter);
    engine
        .append(vec![
            Event::ActivityChanged {
                entity: ana,
                activity: bar,
            },
            Event::EdgeUpdated {
                edge: Edge {
                    affinity: -0.4,
                    trust: 0.5,
                    summary: "Sharp with the accounts.".into(),
                    knowledge: vec!["waters the ale".into()],
                    private_moments: vec!["the night of the flood".into()],
                    last_interaction: Some(3 * MINUTE),
                    imprints: Vec::new(),
                    source: None,
                    ..Edge::new(ana, mira)
                },
            },
            Event::InventoryChanged {
                entity: wren,
                inventory: vec![],
            },
            Event::InventoryChanged {
                entity: mira,
                inventory: mira_carries,
            },
            Event::EntityStateChanged {
                entity: ana,
                state: EntityState {
                    mood: Some("tired".into()),
                    goals: vec!["finish the count".into()],
                    status: Some("counting".into()),
                },
            },
            Event::EntityEdited {
                id: tobias,
                name: None,
                aliases: Some(vec!["Tobias".into(), "Toby".into()]),
                facts: Some(FactSheet::from_text(
                    "A fisherman with a bad knee.\nClaims to see lights on the marsh.\n\
                     $if random() < 0.5: $respond\n$if mentioned: $respond",
                )),
                host_controlled: None,
            },
        ])
        .expect("direct edits apply");

    // The world file patched: edits, removals, an addition.
    engine
        .apply_world_file("compat.toml", WORLD_V2)
        .expect("the patch applies");

    // Threads resolved and dropped.
    let debt = engine
        .open_thread("The debt to Mira", vec![tobias, mira], 4 * MINUTE)
        .expect("thread");
    engine.resolve_thread(debt, 5 * MINUTE).expect("resolve");
    let lights = engine
        .open_thread("The lights on the marsh", vec![tobias], 6 * MINUTE)
        .expect("thread");
    engine.drop_thread(lights, 7 * MINUTE).expect("drop");

    // Scoped events: one planned, started and completed with hooks and a promotion; one
    // cancelled; one expired.
    let game = engine
        .plan_event(
            EventPlan {
                name: "the card game".into(),
                props: [("deck".to_owned(), "a greasy deck of cards".to_owned())].into(),
                participants: vec![wren, mira, tobias],
                preconditions: vec!["present.includes(\"Tobias Reed\")".into()],
                on_start: vec![
                    Effect::SystemLine {
                        text: "The cards are dealt.".into(),
                    },
                    Effect::OpenThread {
                        text: "Who cheats at cards?".into(),
                    },
                ],
                on_complete: vec![
                    Effect::Memory {
                        text: "A long game of cards.".into(),
                        significance: 0.4,
                    },
                    Effect::TeachFact {
                        who: mira,
                        about: tobias,
                        fact: "cheats at cards".into(),
                    },
                    Effect::ChangeEdge {
                        from: tobias,
                        to: wren,
                        affinity: -0.2,
                        trust: 0.1,
                        summary: Some("Won too easily.".into()),
                    },
                    Effect::CloseThread {
                        thread: None,
                        status: rp_core::ThreadStatus::Resolved,
                    },
                ],
                significance: 0.5,
                ..EventPlan::default()
            },
            8 * MINUTE,
        )
        .expect("plan");
    engine.start_event(game, 9 * MINUTE).expect("start");
    engine
        .complete_event(
            game,
            Promotion {
                items: vec![ItemPromotion {
                    item: letter,
                    to: wren,
                }],
                knowledge: vec![KnowledgePromotion {
                    who: tobias,
                    about: wren,
                    fact: "plays cards badly".into(),
                }],
                summaries: vec![SummaryPromotion {
                    from: wren,
                    to: tobias,
                    summary: "A sore loser.".into(),
                }],
                gists: vec![
                    GistPromotion {
                        witness: wren,
                        text: "I lost three hands and won the letter back.".into(),
                        significance: Some(0.7),
                    },
                    GistPromotion {
                        witness: mira,
                        text: "Tobias cheated again.".into(),
                        significance: None,
                    },
                ],
            },
            10 * MINUTE,
        )
        .expect("complete");
    let duel = engine
        .plan_event(
            EventPlan {
                name: "a duel".into(),
                participants: vec![tobias],
                significance: 0.9,
                ..EventPlan::default()
            },
            11 * MINUTE,
        )
        .expect("plan");
    engine.cancel_event(duel, 12 * MINUTE).expect("cancel");
    let fair = engine
        .plan_event(
            EventPlan {
                name: "the fair".into(),
                participants: vec![mira],
                expire_at: Some(20 * HOUR),
                ..EventPlan::default()
            },
            13 * MINUTE,
        )
        .expect("plan");
    engine.expire_event(fair, 14 * MINUTE).expect("expire");

    // The scene closes with a summary per witness and a group node; the group is removed.
    say(
        &mut engine,
        &g,
        "wren",
        "Tobias, you lost the card game fair and square.",
        15 * MINUTE,
    );
    g.script_purpose(
        &Purpose::Summary,
        [
            "Wren asked about the Ferryman; cards were played.",
            "A stranger with a letter; Tobias lost at cards.",
            "Lost at cards to a stranger.",
        ],
    );
    let tavern = engine.world().container_by_key("tavern").unwrap().id;
    let scene = engine.world().current_scene(tavern).expect("a scene").id;
    let closed = rp_core::turn::block_on(engine.close_scene(
        scene,
        20 * MINUTE,
        &SceneOptions::default(),
        &g,
    ))
    .expect("the scene closes");
    let group = closed
        .group
        .expect("a group node for three or more witnesses");
    engine
        .append(vec![Event::GroupRemoved { id: group }])
        .expect("group removed");

    // A scoped event that starts by itself during a jump; the jump closes the open scene.
    say(
        &mut engine,
        &g,
        "wren",
        "Mira, when does the storm come?",
        30 * MINUTE,
    );
    engine
        .plan_event(
            EventPlan {
                name: "the storm".into(),
                props: [("wind".to_owned(), "a howling east wind".to_owned())].into(),
                participants: vec![mira],
                start_at: Some(4 * HOUR),
                expire_at: Some(30 * HOUR),
                significance: 0.3,
                ..EventPlan::default()
            },
            31 * MINUTE,
        )
        .expect("plan");
    let jump = engine
        .time_skip_blocking(Skip::Jump { to: 8 * HOUR }, &SceneOptions::default(), &g)
        .expect("jump");
    assert_eq!(
        jump.due.started.len(),
        1,
        "the storm starts during the jump"
    );

    // An elision of Tobias's nap.
    say(&mut engine, &g, "wren", "Morning, Mira.", 8 * HOUR + MINUTE);
    let mut nap = engine.world().entity(tobias).unwrap().activity.clone();
    nap.action = Some(Action {
        verb: "napping".into(),
        started: 8 * HOUR + MINUTE,
        duration_ms: Some(40 * 60_000),
        interruptible: true,
        attention_required: false,
    });
    nap.posture = Some("slumped".into());
    engine
        .append(vec![Event::ActivityChanged {
            entity: tobias,
            activity: nap,
        }])
        .expect("nap");
    engine
        .time_skip_blocking(
            Skip::Elision { entity: tobias },
            &SceneOptions::default(),
            &g,
        )
        .expect("elision");

    // World queries: one answered after a round that asks for more, one failed.
    g.script_purpose(
        &Purpose::Query,
        [
            json!({
                "type": "needs_more_info",
                "reason": "who is Tobias?",
                "requests": [{"capability_id": "EXPAND_ENTITY", "params": {"entity_id": tobias.0}, "reason": "to know"}],
            })
            .to_string(),
            json!({
                "type": "answer",
                "content": "Mira runs the Lantern; Tobias owes her.",
                "confidence": "medium",
                "sources": [{"entity_id": mira.0, "contribution": "facts", "relevance": 0.9}],
                "suggested_follow_ups": ["What does Tobias owe?"],
            })
            .to_string(),
        ],
    );
    let answered = engine
        .run_query_blocking(
            QueryInput::new("Who runs the Lantern, and who owes her?", 9 * HOUR).with_config(
                QueryConfig {
                    max_info_requests: 2,
                    ..QueryConfig::default()
                },
            ),
            &g,
            &mut NoSink,
        )
        .expect("query");
    assert_eq!(
        answered.query.status,
        QueryStatus::Completed,
        "{:?}",
        answered.query.error
    );
    let mut failing = engine
        .begin_query(QueryInput::new("What is in the sealed letter?", 9 * HOUR).asked_as(mira))
        .expect("query");
    assert!(matches!(failing.step().expect("step"), Step::Generate(_)));
    failing.fail("the host gave up").expect("fail");
    let failed = failing.finish().expect("the failure commits");
    assert_eq!(failed.query.status, QueryStatus::Failed);

    // Branches: a fork continued on its own, and a rewind whose tail stays as a branch.
    let fork_at = engine.head();
    engine.fork(fork_at, "what-if").expect("fork");
    say(
        &mut engine,
        &g,
        "wren",
        "Mira, I will stay the night.",
        9 * HOUR + MINUTE,
    );
    let before = engine.head();
    say(
        &mut engine,
        &g,
        "wren",
        "A line that is taken back.",
        9 * HOUR + 2 * MINUTE,
    );
    let tail = engine
        .rewind(before)
        .expect("rewind")
        .expect("a tail branch");
    assert_ne!(tail, "main");
    say(
        &mut engine,
        &g,
        "wren",
        "Mira, a room for the night.",
        9 * HOUR + 3 * MINUTE,
    );
    engine.switch_branch("what-if").expect("switch");
    let cellar = at(&engine, "cellar", None);
    engine
        .append(vec![Event::ActivityChanged {
            entity: tobias,
            activity: cellar,
        }])
        .expect("Tobias goes down to the cellar");
    say(
        &mut engine,
        &g,
        "wren",
        "Mira, where did Tobias go?",
        9 * HOUR + 4 * MINUTE,
    );
    engine.switch_branch("main").expect("switch back");

    // A few commits after the last snapshot: opening main replays them after decoding it.
    let floor = at(&engine, "tavern", Some("floor"));
    engine
        .append(vec![Event::ActivityChanged {
            entity: mira,
            activity: floor,
        }])
        .expect("Mira comes back to the floor");
    engine
        .open_thread("Where is the Ferryman?", vec![wren], 9 * HOUR + 5 * MINUTE)
        .expect("thread");
    engine
}

/// The events of the current branch, `1..=head`.
fn log_of(engine: &Engine) -> Vec<(u64, Event)> {
    let events = engine.events(1, engine.head()).expect("the log reads");
    assert_eq!(events.len() as u64, engine.head(), "no event is missing");
    events
}

fn replay(events: &[(u64, Event)]) -> World {
    let mut world = World::new();
    for (seq, event) in events {
        world
            .apply(event)
            .unwrap_or_else(|e| panic!("seq {seq} ({}) does not replay: {e}", event.kind()));
    }
    world
}

/// `value` as JSON text read back: floats go through the same text on both sides of a
/// comparison.
fn as_json(value: &impl serde::Serialize) -> Value {
    let text = serde_json::to_string(value).expect("serialises");
    serde_json::from_str(&text).expect("reads back")
}

/// `world` (JSON) in the form `recorded` was written in: a world recorded before record format
/// 6 keeps every availability seen in `beliefs` and every contact in `contacts`, where format
/// 6 keeps the lines heard (`heard`: hearer, speaker, when) apart from what was seen otherwise
/// (`seen`) and from the contacts the lines heard no longer show (`contacts`). Folded back,
/// they must read as recorded.
fn as_recorded(recorded: &Value, mut world: Value) -> Value {
    if recorded.get("beliefs").is_none() {
        return world;
    }
    let pairs = |v: &Value| -> Vec<(u64, u64, Value)> {
        v.as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|p| {
                (
                    p[0].as_u64().expect("id"),
                    p[1].as_u64().expect("id"),
                    p[2].clone(),
                )
            })
            .collect()
    };
    let heard = pairs(&world["heard"]);
    let mut beliefs: BTreeMap<(u64, u64), Value> = heard
        .iter()
        .map(|(a, b, at)| ((*a, *b), json!({"availability": 1.0, "at": at})))
        .collect();
    beliefs.extend(
        pairs(&world["seen"])
            .into_iter()
            .map(|(a, b, v)| ((a, b), v)),
    );
    let mut contacts: BTreeMap<(u64, u64), Value> = BTreeMap::new();
    for (a, b, at) in heard.into_iter().chain(pairs(&world["contacts"])) {
        let entry = contacts.entry((a.min(b), a.max(b))).or_insert(at.clone());
        if at.as_i64() > entry.as_i64() {
            *entry = at;
        }
    }
    let rows = |m: BTreeMap<(u64, u64), Value>| {
        Value::Array(m.into_iter().map(|((a, b), v)| json!([a, b, v])).collect())
    };
    world["beliefs"] = rows(beliefs);
    world["contacts"] = rows(contacts);
    world
}

fn branches_json(engine: &Engine) -> Value {
    Value::Array(
        engine
            .branches()
            .into_iter()
            .map(|b| {
                json!({
                    "name": b.name,
                    "head": b.head,
                    "forked_from": b.forked_from,
                    "current": b.current,
                })
            })
            .collect(),
    )
}

/// The snapshots `path` holds, as `[[branch id, [seq, ...]], ...]`.
fn snapshots_json(path: &Path) -> Value {
    let store = RedbStore::open(path).expect("the store opens");
    let mut out = Vec::new();
    for branch in BRANCH_IDS {
        let seqs = store.snapshot_seqs(branch).expect("snapshot seqs");
        if !seqs.is_empty() {
            out.push(json!([branch, seqs]));
        }
    }
    Value::Array(out)
}

/// What the fixture holds, as the expectation file records it (but for its snapshots, which
/// the store is read for once the engine is closed). Visits every branch, and leaves the
/// engine on the branch it was on.
fn expectation(engine: &mut Engine) -> Value {
    let current = engine.current_branch().to_owned();
    let branches = branches_json(engine);
    let current_events = log_of(engine);
    let mut worlds = serde_json::Map::new();
    let mut kinds: BTreeMap<&str, u64> = BTreeMap::new();
    for b in engine.branches() {
        engine.switch_branch(&b.name).expect("switch");
        let events = log_of(engine);
        // The events a branch shares with the current one are recorded once, there.
        let shared = events
            .iter()
            .zip(&current_events)
            .take_while(|(a, b)| a == b)
            .count();
        let own = &events[if b.name == current { 0 } else { shared }..];
        for (_, e) in own {
            *kinds.entry(e.kind()).or_default() += 1;
        }
        worlds.insert(
            b.name.clone(),
            json!({
                "head": engine.head(),
                "shared_with_current": events.len() - own.len(),
                "events": as_json(&own),
                "world": as_json(engine.world()),
            }),
        );
    }
    engine.switch_branch(&current).expect("switch back");
    json!({
        "format_version": rp_core::log::FORMAT_VERSION,
        "current_branch": current,
        "branches": branches,
        "event_kinds": kinds,
        "worlds": worlds,
    })
}

/// Writes `value` as JSON for review: the outer objects spread over lines, and long arrays
/// one item (an event, an entity, a memory) per line.
fn layout(value: &Value, depth: usize, out: &mut String) {
    let indent = |out: &mut String, depth: usize| out.extend(std::iter::repeat_n("  ", depth));
    let compact = |v: &Value| serde_json::to_string(v).expect("json");
    match value {
        Value::Object(map) if depth <= 3 && !map.is_empty() => {
            out.push_str("{\n");
            for (i, (k, v)) in map.iter().enumerate() {
                indent(out, depth + 1);
                out.push_str(&compact(&Value::String(k.clone())));
                out.push_str(": ");
                layout(v, depth + 1, out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if depth <= 4 && compact(value).len() > 100 => {
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                indent(out, depth + 1);
                out.push_str(&compact(v));
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push(']');
        }
        _ => out.push_str(&compact(value)),
    }
}

/// Why `actual` does not hold everything `expected` records, if it does not: objects may have
/// gained fields, every other difference counts.
fn mismatch(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().find_map(|(k, ev)| match a.get(k) {
            None => Some(format!("{path}.{k}: missing (expected {ev})")),
            Some(av) => mismatch(&format!("{path}.{k}"), ev, av),
        }),
        (Value::Array(e), Value::Array(a)) if e.len() != a.len() => Some(format!(
            "{path}: {} items where {} were recorded",
            a.len(),
            e.len()
        )),
        (Value::Array(e), Value::Array(a)) => e
            .iter()
            .zip(a)
            .enumerate()
            .find_map(|(i, (ev, av))| mismatch(&format!("{path}[{i}]"), ev, av)),
        _ if expected == actual => None,
        _ => Some(format!("{path}: expected {expected}, found {actual}")),
    }
}

fn assert_holds(what: &str, expected: &Value, actual: &Value) {
    if let Some(m) = mismatch(what, expected, actual) {
        panic!("{m}");
    }
}

#[test]
#[ignore = "writes the fixture: RP_WRITE_FIXTURE=1 cargo test -p rp-core --test compat -- --ignored write_fixture"]
fn write_fixture() {
    let version = rp_core::log::FORMAT_VERSION;
    let write = std::env::var("RP_WRITE_FIXTURE").is_ok_and(|v| v == "1");
    let scratch = tempfile::tempdir().expect("tempdir");
    let built = scratch.path().join("save.rp");
    let mut engine = story(&built);

    // The story reaches what the fixture is for.
    let mut expected = expectation(&mut engine);
    let kinds = expected["event_kinds"].as_object().expect("kinds");
    let missing: Vec<_> = EVENT_KINDS
        .iter()
        .filter(|k| !kinds.contains_key(**k))
        .collect();
    assert!(missing.is_empty(), "event kinds not reached: {missing:?}");
    assert!(
        replay(&log_of(&engine)).to_bytes() == engine.world().to_bytes(),
        "replay from scratch gives the live world"
    );
    let head = engine.head();
    drop(engine);
    // The file as written holds mostly free pages: compacted, it says the same in less room.
    let mut db = redb::Database::open(&built).expect("the save opens as a redb database");
    while db.compact().expect("compaction") {}
    drop(db);
    expected["snapshots"] = snapshots_json(&built);
    let snapshots = expected["snapshots"].as_array().expect("snapshots");
    let seqs: Vec<u64> = snapshots
        .iter()
        .flat_map(|s| s[1].as_array().expect("seqs"))
        .filter_map(Value::as_u64)
        .collect();
    assert!(
        seqs.iter().any(|s| *s < head) && !seqs.contains(&head),
        "a snapshot before the head and none at it (opening decodes one and replays a tail): \
         head {head}, {snapshots:?}"
    );

    let dir = fixtures_dir();
    let save = dir.join(save_name(version));
    let expectation_file = dir.join(expectation_name(version));
    if !write {
        eprintln!(
            "built and checked the fixture in {} without writing it; \
             set RP_WRITE_FIXTURE=1 to write {}",
            built.display(),
            save.display()
        );
        return;
    }
    assert!(
        !save.exists() && !expectation_file.exists(),
        "{} already exists: a fixture records what the build that wrote it saw, and is never \
         rewritten (delete it first only if that build is the current one)",
        save.display()
    );
    std::fs::create_dir_all(&dir).expect("the fixtures folder");
    std::fs::copy(&built, &save).expect("the save is written");
    let mut text = String::new();
    layout(&expected, 0, &mut text);
    text.push('\n');
    assert_eq!(
        serde_json::from_str::<Value>(&text).expect("the layout is JSON"),
        expected
    );
    std::fs::write(&expectation_file, text).expect("the expectation is written");
    let size = std::fs::metadata(&save).expect("size").len();
    eprintln!("wrote {} ({size} bytes)", save.display());
}

/// The fixtures in the folder: (save, expectation) for each format version written.
fn fixtures() -> Vec<(PathBuf, PathBuf)> {
    let dir = fixtures_dir();
    let mut out: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rp"))
        .map(|save| {
            let stem = save.file_stem().expect("a name").to_string_lossy();
            let expectation = dir.join(format!("{stem}.expected.json"));
            (save, expectation)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn old_save_opens_and_replays_to_the_recorded_world() {
    let all = fixtures();
    assert!(
        all.iter().any(|(save, _)| save.ends_with(save_name(1))),
        "the format 1 fixture is there: {all:?}"
    );
    for (fixture, expectation_file) in all {
        check_fixture(&fixture, &expectation_file);
    }
}

fn check_fixture(fixture: &Path, expectation_file: &Path) {
    let original = std::fs::read(fixture).expect("the fixture reads");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(expectation_file)
            .unwrap_or_else(|e| panic!("{}: {e}", expectation_file.display())),
    )
    .expect("the expectation is JSON");
    let name = fixture.display().to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("save.rp");
    std::fs::write(&path, &original).expect("the copy is written");

    // The store layout: the snapshots are where they were written.
    assert_holds(
        &format!("{name}: snapshots"),
        &expected["snapshots"],
        &snapshots_json(&path),
    );

    let mut engine = Engine::open(&path).unwrap_or_else(|e| panic!("{name} does not open: {e}"));
    assert_eq!(
        Some(engine.current_branch()),
        expected["current_branch"].as_str(),
        "{name}: the current branch"
    );
    assert_holds(
        &format!("{name}: branches"),
        &expected["branches"],
        &branches_json(&engine),
    );
    let current = engine.current_branch().to_owned();
    let worlds = expected["worlds"].as_object().expect("worlds");
    let names: BTreeSet<String> = engine.branches().into_iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        worlds.keys().cloned().collect::<BTreeSet<_>>(),
        "{name}: every branch recorded"
    );
    // The current branch first, as opened (snapshot and tail), then the others.
    let mut order = vec![current.clone()];
    order.extend(names.into_iter().filter(|n| *n != current));
    let mut current_events = Vec::new();
    for branch in &order {
        engine
            .switch_branch(branch)
            .unwrap_or_else(|e| panic!("{name}: branch {branch} does not load: {e}"));
        let recorded = &worlds[branch.as_str()];
        let what = format!("{name}: branch {branch}");
        assert_eq!(
            Some(engine.head()),
            recorded["head"].as_u64(),
            "{what}: head"
        );
        let events = log_of(&engine);
        if *branch == current {
            current_events = events.clone();
        }
        let shared = recorded["shared_with_current"]
            .as_u64()
            .expect("shared_with_current") as usize;
        assert!(
            shared <= events.len() && events[..shared] == current_events[..shared],
            "{what}: the first {shared} events are those of {current}"
        );
        assert_holds(
            &format!("{what}: events"),
            &recorded["events"],
            &as_json(&events[shared..].to_vec()),
        );
        assert_holds(
            &format!("{what}: world"),
            &recorded["world"],
            &as_recorded(&recorded["world"], as_json(engine.world())),
        );
        let replayed = replay(&events);
        assert_holds(
            &format!("{what}: replayed world"),
            &recorded["world"],
            &as_recorded(&recorded["world"], as_json(&replayed)),
        );
        assert!(
            replayed.to_bytes() == engine.world().to_bytes(),
            "{what}: replaying the whole log gives the world as opened"
        );
    }
    engine.switch_branch(&current).expect("switch back");

    // Play goes on: a new turn is appended, and survives reopening.
    let head = engine.head();
    let wren = id(&engine, "wren");
    let now = engine.world().now() + MINUTE;
    let g = ScriptedGenerator::new("{name} nods. ({n})");
    let outcome = engine
        .run_turn_blocking(
            TurnInput::say(wren, "Mira, is the storm over?", now),
            TurnOptions::default(),
            &g,
            &mut NoSink,
        )
        .unwrap_or_else(|e| panic!("{name}: a new turn fails: {e}"));
    assert!(outcome.seq > head, "{name}: the turn is appended");
    assert!(
        outcome
            .replies
            .iter()
            .any(|r| r.speaker == id(&engine, "mira")),
        "{name}: Mira answers"
    );
    let world = engine.world().to_bytes();
    let head = engine.head();
    drop(engine);
    let engine = Engine::open(&path).unwrap_or_else(|e| panic!("{name} does not reopen: {e}"));
    assert_eq!(engine.head(), head, "{name}: the new turn is saved");
    assert!(
        engine.world().to_bytes() == world,
        "{name}: the world reopens as it was"
    );
    assert!(
        replay(&log_of(&engine)).to_bytes() == world,
        "{name}: the extended log replays to the same world"
    );
    drop(engine);
    assert!(
        std::fs::read(fixture).expect("the fixture reads") == original,
        "{name}: the fixture itself is unchanged"
    );
}
