//! Random event sequences for property tests: abstract operations turned into events against
//! the current world, so most are valid and some are not (duplicate names, full slots, edges
//! to self, items in two places).

#![allow(dead_code)]

use proptest::prelude::*;
use rp_core::*;

#[derive(Clone, Debug)]
pub enum Op {
    CreateEntity {
        name: u8,
        host: bool,
    },
    EditEntity {
        who: u8,
        name: u8,
    },
    CreateContainer {
        parent: Option<u8>,
        capacity: Option<u8>,
    },
    EditContainer {
        which: u8,
        capacity: Option<u8>,
    },
    Move {
        who: u8,
        to: u8,
        slot: bool,
    },
    Leave {
        who: u8,
    },
    Give {
        carrier: u8,
        item: u8,
    },
    Drop {
        carrier: u8,
    },
    Hold {
        who: u8,
    },
    Feel {
        from: u8,
        to: u8,
        affinity: i8,
    },
    Unfeel {
        from: u8,
        to: u8,
    },
    Mood {
        who: u8,
        mood: u8,
    },
    Say {
        who: u8,
        text: u8,
    },
    /// A character speaks first to another (an initiation; refused for one without a mind).
    Initiate {
        who: u8,
        to: u8,
    },
    Remember {
        who: u8,
        significance: u8,
    },
    Recall {
        which: u8,
        more: u8,
    },
    Forget {
        which: u8,
    },
    Group {
        a: u8,
        b: u8,
        c: u8,
    },
    Time {
        by: u16,
    },
    /// A time skip: a jump (`by` 0 is refused: a skip goes forward) or an elision of someone.
    Skip {
        by: u16,
        who: Option<u8>,
    },
    RemoveEntity {
        who: u8,
    },
    RemoveContainer {
        which: u8,
    },
    Ungroup {
        which: u8,
    },
    Decide {
        who: u8,
        draw: u8,
    },
    Generate {
        who: Option<u8>,
        tokens: u8,
    },
    OpenThread {
        a: u8,
        b: u8,
        empty: bool,
    },
    CloseThread {
        which: u8,
        status: u8,
    },
    Judge {
        n: u8,
    },
    Tools {
        who: u8,
        draw: u8,
    },
    Inject {
        to: Option<u8>,
        text: u8,
    },
    Shown {
        which: u8,
    },
    WorldFile {
        n: u8,
    },
    PlanEvent {
        a: u8,
        b: u8,
        variant: u8,
    },
    StartEvent {
        which: u8,
        draw: u8,
    },
    CloseEvent {
        which: u8,
        status: u8,
        promote: u8,
    },
    OpenScene {
        which: u8,
    },
    CloseScene {
        which: u8,
        early: bool,
    },
    /// A scene summary of a witness (or, to be refused, of nobody there), as a close adds.
    Summarize {
        which: u8,
        who: u8,
    },
    Ask {
        who: Option<u8>,
        empty: bool,
    },
    EndQuery {
        which: u8,
        fail: bool,
        source: u8,
    },
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..12, any::<bool>()).prop_map(|(name, host)| Op::CreateEntity { name, host }),
        1 => (any::<u8>(), 0u8..12).prop_map(|(who, name)| Op::EditEntity { who, name }),
        2 => (proptest::option::of(any::<u8>()), proptest::option::of(0u8..3))
            .prop_map(|(parent, capacity)| Op::CreateContainer { parent, capacity }),
        1 => (any::<u8>(), proptest::option::of(0u8..3)).prop_map(|(which, capacity)| Op::EditContainer { which, capacity }),
        4 => (any::<u8>(), any::<u8>(), any::<bool>()).prop_map(|(who, to, slot)| Op::Move { who, to, slot }),
        1 => any::<u8>().prop_map(|who| Op::Leave { who }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(carrier, item)| Op::Give { carrier, item }),
        1 => any::<u8>().prop_map(|carrier| Op::Drop { carrier }),
        1 => any::<u8>().prop_map(|who| Op::Hold { who }),
        3 => (any::<u8>(), any::<u8>(), any::<i8>()).prop_map(|(from, to, affinity)| Op::Feel { from, to, affinity }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(from, to)| Op::Unfeel { from, to }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(who, mood)| Op::Mood { who, mood }),
        3 => (any::<u8>(), any::<u8>()).prop_map(|(who, text)| Op::Say { who, text }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(who, to)| Op::Initiate { who, to }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(who, significance)| Op::Remember { who, significance }),
        1 => any::<u8>().prop_map(|which| Op::Forget { which }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(which, more)| Op::Recall { which, more }),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c)| Op::Group { a, b, c }),
        1 => any::<u16>().prop_map(|by| Op::Time { by }),
        1 => (any::<u16>(), proptest::option::of(any::<u8>())).prop_map(|(by, who)| Op::Skip { by, who }),
        1 => any::<u8>().prop_map(|who| Op::RemoveEntity { who }),
        1 => any::<u8>().prop_map(|which| Op::RemoveContainer { which }),
        1 => any::<u8>().prop_map(|which| Op::Ungroup { which }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(who, draw)| Op::Decide { who, draw }),
        1 => (proptest::option::of(any::<u8>()), any::<u8>()).prop_map(|(who, tokens)| Op::Generate { who, tokens }),
        1 => (any::<u8>(), any::<u8>(), any::<bool>()).prop_map(|(a, b, empty)| Op::OpenThread { a, b, empty }),
        1 => (any::<u8>(), 0u8..3).prop_map(|(which, status)| Op::CloseThread { which, status }),
        1 => any::<u8>().prop_map(|n| Op::Judge { n }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(who, draw)| Op::Tools { who, draw }),
        1 => (proptest::option::of(any::<u8>()), any::<u8>()).prop_map(|(to, text)| Op::Inject { to, text }),
        1 => any::<u8>().prop_map(|which| Op::Shown { which }),
        1 => any::<u8>().prop_map(|n| Op::WorldFile { n }),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, variant)| Op::PlanEvent { a, b, variant }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(which, draw)| Op::StartEvent { which, draw }),
        1 => (any::<u8>(), 0u8..4, any::<u8>()).prop_map(|(which, status, promote)| Op::CloseEvent { which, status, promote }),
        2 => any::<u8>().prop_map(|which| Op::OpenScene { which }),
        1 => (any::<u8>(), any::<bool>()).prop_map(|(which, early)| Op::CloseScene { which, early }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(which, who)| Op::Summarize { which, who }),
        1 => (proptest::option::of(any::<u8>()), any::<bool>()).prop_map(|(who, empty)| Op::Ask { who, empty }),
        1 => (any::<u8>(), any::<bool>(), any::<u8>()).prop_map(|(which, fail, source)| Op::EndQuery { which, fail, source }),
    ]
}

const NAMES: [&str; 12] = [
    "Mira", "Tobias", "Wren", "Ash", "Bram", "Cass", "Dov", "Edda", "Finn", "Gil", "Hal", "Ida",
];

fn nth_entity(w: &World, n: u8) -> Option<&Entity> {
    let count = w.entities().count();
    (count > 0)
        .then(|| w.entities().nth(n as usize % count))
        .flatten()
}

fn nth_container(w: &World, n: u8) -> Option<&Container> {
    let count = w.containers().count();
    (count > 0)
        .then(|| w.containers().nth(n as usize % count))
        .flatten()
}

fn nth_scene(w: &World, n: u8) -> Option<SceneId> {
    let count = w.scenes().count();
    (count > 0)
        .then(|| w.scenes().nth(n as usize % count).map(|s| s.id))
        .flatten()
}

/// The event an op means in `w`, or `None` when it cannot be expressed (nothing to pick).
pub fn event(w: &World, op: &Op) -> Option<Event> {
    let id = w.next_id();
    Some(match op {
        Op::CreateEntity { name, host } => {
            let base = NAMES[*name as usize];
            Event::EntityCreated {
                id: EntityId(id),
                key: None,
                name: if id.is_multiple_of(3) {
                    format!("{base} {id}")
                } else {
                    base.to_owned()
                },
                aliases: vec![format!("{base}-alias")],
                facts: FactSheet::from_text(&format!("{base} is someone.\nknown_since: {id}")),
                host_controlled: *host,
                state: EntityState::default(),
            }
        }
        Op::EditEntity { who, name } => Event::EntityEdited {
            id: nth_entity(w, *who)?.id,
            name: Some(NAMES[*name as usize].to_owned()),
            aliases: None,
            facts: Some(FactSheet::from_text("edited")),
            host_controlled: None,
        },
        Op::CreateContainer { parent, capacity } => Event::ContainerCreated {
            id: ContainerId(id),
            key: Some(format!("c{id}")),
            name: format!("room {id}"),
            facts: FactSheet::default(),
            parent: parent.and_then(|p| nth_container(w, p)).map(|c| c.id),
            slots: vec![
                Slot {
                    name: "seat".into(),
                    capacity: capacity.map(u32::from),
                },
                Slot {
                    name: "floor".into(),
                    capacity: None,
                },
            ],
            properties: ContainerProperties {
                audible_range: (id % 3) as u32,
                ..Default::default()
            },
        },
        Op::EditContainer { which, capacity } => {
            let c = nth_container(w, *which)?;
            Event::ContainerEdited {
                id: c.id,
                name: format!("{} (edited)", c.name),
                facts: c.facts.clone(),
                parent: c.parent,
                slots: vec![Slot {
                    name: "seat".into(),
                    capacity: capacity.map(u32::from),
                }],
                properties: c.properties.clone(),
            }
        }
        Op::Move { who, to, slot } => {
            let e = nth_entity(w, *who)?;
            let c = nth_container(w, *to)?;
            Event::ActivityChanged {
                entity: e.id,
                activity: Activity {
                    position: Some(Position {
                        container: c.id,
                        slot: slot.then(|| "seat".to_owned()),
                    }),
                    posture: Some("standing".into()),
                    ..e.activity.clone()
                },
            }
        }
        Op::Leave { who } => {
            let e = nth_entity(w, *who)?;
            Event::ActivityChanged {
                entity: e.id,
                activity: Activity {
                    position: None,
                    ..e.activity.clone()
                },
            }
        }
        Op::Give { carrier, item } => {
            let c = nth_entity(w, *carrier)?;
            let i = nth_entity(w, *item)?;
            let mut inventory = c.inventory.clone();
            inventory.push(i.id);
            Event::InventoryChanged {
                entity: c.id,
                inventory,
            }
        }
        Op::Drop { carrier } => {
            let c = nth_entity(w, *carrier)?;
            let mut inventory = c.inventory.clone();
            inventory.pop();
            Event::InventoryChanged {
                entity: c.id,
                inventory,
            }
        }
        Op::Hold { who } => {
            let e = nth_entity(w, *who)?;
            Event::ActivityChanged {
                entity: e.id,
                activity: Activity {
                    holding: e.inventory.iter().take(1).copied().collect(),
                    ..e.activity.clone()
                },
            }
        }
        Op::Feel { from, to, affinity } => {
            let a = nth_entity(w, *from)?.id;
            let b = nth_entity(w, *to)?.id;
            Event::EdgeUpdated {
                edge: Edge {
                    affinity: f64::from(*affinity) / 100.0,
                    trust: 0.5,
                    summary: format!("{a} about {b}"),
                    knowledge: vec!["a fact".into()],
                    ..Edge::new(a, b)
                },
            }
        }
        Op::Unfeel { from, to } => Event::EdgeRemoved {
            from: nth_entity(w, *from)?.id,
            to: nth_entity(w, *to)?.id,
        },
        Op::Mood { who, mood } => Event::EntityStateChanged {
            entity: nth_entity(w, *who)?.id,
            state: EntityState {
                mood: Some(format!("mood {mood}")),
                goals: vec!["g".into()],
                status: None,
            },
        },
        Op::Say { who, text } => {
            let e = nth_entity(w, *who)?;
            let witnesses: WitnessSet = w
                .entities()
                .map(|x| x.id)
                .filter(|x| x.0 % 2 == 0 || *x == e.id)
                .collect();
            let utterance = Utterance {
                id: UtteranceId(id),
                speaker: e.id,
                text: format!("line {text}"),
                at: w.now(),
                witnesses,
                model: None,
                // Mostly the current scene of the speaker's place; now and then any scene
                // (a closed one is refused).
                scene: if text % 5 == 0 {
                    nth_scene(w, *text)
                } else {
                    e.activity
                        .position
                        .as_ref()
                        .and_then(|p| w.current_scene(p.container))
                        .map(|s| s.id)
                },
            };
            if e.host_controlled {
                Event::UserTurn { utterance }
            } else {
                Event::AssistantTurn { utterance }
            }
        }
        Op::Initiate { who, to } => Event::Initiated {
            initiation: Initiation {
                speaker: nth_entity(w, *who)?.id,
                to: nth_entity(w, *to)?.id,
                about: Drive::SocialDebt,
                score: 1.0,
                threshold: 0.5,
                shares: vec![],
                rules: vec![],
            },
            at: w.now(),
        },
        Op::Remember { who, significance } => {
            let e = nth_entity(w, *who)?;
            Event::MemoryAdded {
                memory: Memory {
                    id: MemoryId(id),
                    owner: e.id,
                    witnesses: [e.id].into_iter().collect(),
                    text: format!("remembered {id}"),
                    kind: MemoryKind::Reflection,
                    significance: f64::from(*significance) / 200.0,
                    created: w.now(),
                    last_accessed: None,
                    access_count: 0,
                    decay: DecayStage::Full,
                    pinned: false,
                    embedding: None,
                    // Half of them remember a line of the scene where they are (compressed
                    // when it closes).
                    scene: if significance % 2 == 0 {
                        w.scene_of(e.id).map(|s| s.id)
                    } else {
                        None
                    },
                    stability: 0.0,
                    summary: None,
                    feeling: None,
                    about: None,
                    sources: Vec::new(),
                },
            }
        }
        Op::Recall { which, more } => {
            let count = w.all_memories().count();
            if count == 0 {
                return None;
            }
            let start = *which as usize % count;
            let ids = w
                .all_memories()
                .skip(start)
                .take(1 + *more as usize % 3)
                .map(|m| m.id)
                .collect();
            Event::MemoriesRecalled { ids, at: w.now() }
        }
        Op::Forget { which } => {
            let count = w.all_memories().count();
            if count == 0 {
                return None;
            }
            Event::MemoryRemoved {
                id: w.all_memories().nth(*which as usize % count)?.id,
            }
        }
        Op::Group { a, b, c } => Event::GroupUpdated {
            group: Group {
                id: GroupId(id),
                members: [a, b, c]
                    .iter()
                    .filter_map(|n| nth_entity(w, **n))
                    .map(|e| e.id)
                    .collect(),
                name: None,
                summary: "together".into(),
                shared: vec![],
            },
        },
        Op::Time { by } => Event::TimeAdvanced {
            to: w.now() + i64::from(*by),
        },
        Op::Skip { by, who } => Event::TimeSkipped {
            from: w.now(),
            to: w.now() + i64::from(*by),
            skip: match who {
                Some(n) => Skip::Elision {
                    entity: nth_entity(w, *n)?.id,
                },
                None => Skip::Jump {
                    to: w.now() + i64::from(*by),
                },
            },
        },
        Op::RemoveEntity { who } => Event::EntityRemoved {
            id: nth_entity(w, *who)?.id,
        },
        Op::RemoveContainer { which } => Event::ContainerRemoved {
            id: nth_container(w, *which)?.id,
        },
        Op::Ungroup { which } => {
            let count = w.groups().count();
            if count == 0 {
                return None;
            }
            Event::GroupRemoved {
                id: w.groups().nth(*which as usize % count)?.id,
            }
        }
        // A draw of 1.0 and more is out of range: some of these are refused.
        Op::Decide { who, draw } => Event::ResponseDecided {
            entity: nth_entity(w, *who)?.id,
            respond: draw % 2 == 0,
            retry_ms: (draw % 3 == 0).then_some(u64::from(*draw) * 10),
            fired: vec![1],
            draws: vec![f64::from(*draw) / 250.0],
        },
        Op::Generate { who, tokens } => Event::Generated {
            purpose: match who {
                Some(n) => turn::Purpose::Reply {
                    speaker: nth_entity(w, *n)?.id,
                },
                None => turn::Purpose::StateUpdate,
            },
            result: turn::GenerateResult {
                text: format!("generated {tokens}"),
                completion_tokens: Some(u32::from(*tokens)),
                model: Some("scripted".into()),
                ..Default::default()
            },
        },
        Op::OpenThread { a, b, empty } => Event::ThreadOpened {
            thread: Thread {
                id: ThreadId(id),
                text: if *empty {
                    " ".into()
                } else {
                    format!("thread {id}")
                },
                participants: [a, b]
                    .iter()
                    .filter_map(|n| nth_entity(w, **n))
                    .map(|e| e.id)
                    .collect(),
                opened: w.now(),
                status: ThreadStatus::Open,
                event: None,
            },
        },
        Op::CloseThread { which, status } => {
            let count = w.threads().count();
            if count == 0 {
                return None;
            }
            Event::ThreadClosed {
                id: w.threads().nth(*which as usize % count)?.id,
                status: [
                    ThreadStatus::Resolved,
                    ThreadStatus::Dropped,
                    ThreadStatus::Open,
                ][*status as usize % 3],
            }
        }
        Op::Judge { n } => Event::ReportsJudged {
            reports: (0..n % 3)
                .map(|i| log::JudgedReport {
                    report: format!("{{\"type\":\"mood\",\"n\":{i}}}"),
                    rejected: (i % 2 == 1).then(|| "unknown name".into()),
                    answer: None,
                })
                .collect(),
        },
        Op::Tools { who, draw } => Event::ToolsRun {
            speaker: nth_entity(w, *who)?.id,
            calls: vec![turn::ToolRun {
                id: format!("call {id}"),
                name: "roll_dice".into(),
                arguments: "{\"dice\":\"1d6\"}".into(),
                result: format!("{}", 1 + draw % 6),
                draws: vec![f64::from(*draw) / 250.0],
            }],
        },
        Op::Inject { to, text } => Event::SystemLineInjected {
            line: SystemLine {
                id,
                text: format!("[SYSTEM: line {text}]"),
                audience: match to {
                    Some(n) => Some(vec![nth_entity(w, *n)?.id]),
                    None => None,
                },
                at: w.now(),
            },
        },
        Op::Shown { which } => {
            let lines: Vec<u64> = w.system_lines().map(|l| l.id).collect();
            if lines.is_empty() {
                return None;
            }
            Event::SystemLinesShown {
                ids: vec![lines[*which as usize % lines.len()]],
            }
        }
        Op::PlanEvent { a, b, variant } => {
            let participants: Vec<EntityId> = [a, b]
                .iter()
                .filter_map(|n| nth_entity(w, **n))
                .map(|e| e.id)
                .collect();
            participants.first()?;
            // Some plans are refused: a condition that does not parse, a participant twice.
            let preconditions = match variant % 5 {
                0 => vec!["time.hour >= 0".into()],
                1 => vec!["present.length > (".into()],
                _ => vec![],
            };
            Event::ScopedEventPlanned {
                event: ScopedEvent {
                    id: ScopedEventId(id),
                    name: format!("event {id}"),
                    status: EventStatus::Planned,
                    props: [("basket".to_owned(), format!("a basket {variant}"))].into(),
                    participants,
                    preconditions,
                    on_start: vec![Effect::SystemLine {
                        text: format!("event {id} begins"),
                    }],
                    on_complete: if variant % 3 == 0 {
                        vec![Effect::Memory {
                            text: format!("event {id} ended"),
                            significance: 0.5,
                        }]
                    } else {
                        vec![Effect::OpenThread {
                            text: format!("after event {id}"),
                        }]
                    },
                    significance: f64::from(*variant) / 255.0,
                    start_at: (variant % 2 == 0).then(|| w.now() + i64::from(*variant)),
                    start_when: None,
                    expire_at: None,
                    started: None,
                    closed: None,
                },
            }
        }
        Op::StartEvent { which, draw } => {
            let count = w.scoped_events().count();
            if count == 0 {
                return None;
            }
            Event::ScopedEventStarted {
                id: w.scoped_events().nth(*which as usize % count)?.id,
                at: w.now(),
                draws: vec![f64::from(*draw) / 250.0],
            }
        }
        Op::CloseEvent {
            which,
            status,
            promote,
        } => {
            let count = w.scoped_events().count();
            if count == 0 {
                return None;
            }
            let ev = w.scoped_events().nth(*which as usize % count)?;
            let first = *ev.participants.first()?;
            let promotion = if promote % 2 == 0 {
                Promotion::default()
            } else {
                Promotion {
                    gists: vec![GistPromotion {
                        witness: first,
                        text: format!("{} was nice", ev.name),
                        significance: None,
                    }],
                    ..Promotion::default()
                }
            };
            Event::ScopedEventClosed {
                id: ev.id,
                status: [
                    EventStatus::Completed,
                    EventStatus::Cancelled,
                    EventStatus::Expired,
                    EventStatus::Active,
                ][*status as usize % 4],
                at: w.now(),
                promotion,
            }
        }
        Op::WorldFile { n } => Event::WorldFileApplied {
            file: format!("world{n}.toml"),
            text: format!("# version {n}\n"),
        },
        Op::OpenScene { which } => {
            let c = nth_container(w, *which)?;
            Event::SceneOpened {
                scene: Scene {
                    id: SceneId(id),
                    container: c.id,
                    opened: w.now(),
                    closed: None,
                    witnesses: w.entities_in(c.id).map(|e| e.id).collect(),
                    lines: 0,
                    last_line: None,
                },
            }
        }
        Op::CloseScene { which, early } => {
            let scene = w.scene(nth_scene(w, *which)?)?;
            Event::SceneClosed {
                id: scene.id,
                // Before it opened: refused.
                at: if *early { scene.opened - 1 } else { w.now() },
            }
        }
        Op::Summarize { which, who } => {
            let scene = w.scene(nth_scene(w, *which)?)?;
            let owner = nth_entity(w, *who)?.id;
            let mut witnesses = scene.witnesses.clone();
            witnesses.insert(owner);
            Event::MemoryAdded {
                memory: Memory {
                    id: MemoryId(id),
                    owner,
                    witnesses,
                    text: format!("{owner}'s summary of {}", scene.id),
                    kind: MemoryKind::SceneSummary,
                    significance: 0.6,
                    created: w.now(),
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
            }
        }
        Op::Ask { who, empty } => Event::QueryAsked {
            id: QueryId(id),
            text: if *empty {
                " ".into()
            } else {
                format!("Who is {id}?")
            },
            asked_as: match who {
                Some(n) => Some(nth_entity(w, *n)?.id),
                None => None,
            },
            config: query::QueryConfig::default(),
            at: w.now(),
        },
        Op::EndQuery {
            which,
            fail,
            source,
        } => {
            // Mostly queries still processing; some already ended (refused).
            let queries: Vec<&query::WorldQuery> = w.queries().collect();
            if queries.is_empty() {
                return None;
            }
            let q = queries[*which as usize % queries.len()];
            let round = query::QueryRound {
                forced: None,
                output: turn::GenerateResult::text(format!("output {which}")),
                problem: None,
                requests: vec![query::RequestRun {
                    request: query::InfoRequest {
                        capability_id: "LIST_ENTITY_DEFINITIONS".into(),
                        params: serde_json::json!({}),
                        reason: "kinds".into(),
                    },
                    refused: None,
                    summary: "2 entity kinds".into(),
                    entities: vec![],
                }],
            };
            if *fail {
                Event::QueryFailed {
                    id: q.id,
                    info_requests: 1,
                    rounds: vec![round],
                    error: "the model's reply could not be read".into(),
                    at: w.now(),
                }
            } else {
                let context: Vec<EntityId> =
                    nth_entity(w, *source).map(|e| e.id).into_iter().collect();
                // An odd source names an entity outside the context: refused.
                let cited = if source % 2 == 1 {
                    EntityId(u64::from(*source) + 1_000_000)
                } else {
                    *context.first()?
                };
                Event::QueryAnswered {
                    id: q.id,
                    info_requests: 0,
                    rounds: vec![round],
                    context,
                    answer: query::Answer {
                        content: format!("answer {which}"),
                        confidence: query::Confidence::Medium,
                        sources: vec![query::AnswerSource {
                            entity_id: cited,
                            contribution: "facts".into(),
                            relevance: 0.5,
                        }],
                        suggested_follow_ups: vec!["and then?".into()],
                        forced: None,
                    },
                    at: w.now(),
                }
            }
        }
    })
}

/// Turns ops into batches of events valid in sequence, starting from `w`. Ops that do not
/// apply are checked to leave the scratch world byte-identical, then skipped.
pub fn valid_batches(w: &World, ops: &[Op], batch_sizes: &[usize]) -> (Vec<Vec<Event>>, usize) {
    let mut scratch = w.clone();
    let mut batches = Vec::new();
    let mut rejected = 0;
    let mut sizes = batch_sizes.iter().cycle();
    let mut it = ops.iter().peekable();
    while it.peek().is_some() {
        let n = *sizes.next().unwrap_or(&1);
        let mut batch = Vec::new();
        for op in it.by_ref().take(n.max(1)) {
            let Some(ev) = event(&scratch, op) else {
                continue;
            };
            let before = scratch.to_bytes();
            match scratch.apply(&ev) {
                Ok(()) => {
                    assert!(
                        scratch.index_is_consistent(),
                        "index out of step after {ev:?}"
                    );
                    batch.push(ev)
                }
                Err(_) => {
                    assert_eq!(
                        scratch.to_bytes(),
                        before,
                        "rejected {ev:?} changed the world"
                    );
                    rejected += 1;
                }
            }
        }
        if !batch.is_empty() {
            batches.push(batch);
        }
    }
    (batches, rejected)
}

/// The world after replaying `events` from nothing.
pub fn replay(events: &[Event]) -> World {
    let mut w = World::new();
    for (i, e) in events.iter().enumerate() {
        w.apply(e)
            .unwrap_or_else(|err| panic!("replay of event {i} failed: {err}"));
    }
    w
}
