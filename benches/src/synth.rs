//! The synthetic world: its shape, the events that create it, and its turns, all drawn from
//! a seeded generator so every run writes the same log.

use crate::{Rng, T0, WORLD_NAME, setup_options};
use rp_core::log::codec::encode_event;
use rp_core::store::MemoryStore;
use rp_core::{
    Action, Activity, ContainerId, ContainerProperties, Edge, Engine, EntityId, EntityState, Event,
    FactSheet, Memory, MemoryId, MemoryKind, Millis, Position, Slot, Utterance, UtteranceId,
    WitnessSet,
};
use std::collections::BTreeSet;

const WORDS: &[&str] = &[
    "the",
    "lantern",
    "ale",
    "storm",
    "harbour",
    "she",
    "he",
    "they",
    "watched",
    "quietly",
    "laughed",
    "remembered",
    "a",
    "debt",
    "letter",
    "from",
    "the",
    "north",
    "road",
    "was",
    "closed",
    "again",
    "and",
    "nobody",
    "knew",
    "why",
    "captain",
    "innkeeper",
    "stranger",
    "coin",
    "silver",
    "candle",
    "burned",
    "low",
    "rain",
    "hammered",
    "shutters",
    "old",
    "song",
    "about",
    "drowned",
    "bells",
    "promise",
    "kept",
    "broken",
    "map",
    "missing",
    "page",
    "of",
    "with",
    "her",
    "his",
    "their",
    "hands",
    "cold",
    "warm",
    "bread",
    "fire",
    "smoke",
    "door",
    "opened",
    "slowly",
    "whispered",
    "rumour",
    "guard",
    "market",
    "tomorrow",
    "before",
    "dawn",
];

const POSTURES: &[&str] = &[
    "sitting",
    "standing",
    "leaning on the bar",
    "pacing",
    "crouched by the fire",
    "slumped in a chair",
];
const VERBS: &[&str] = &[
    "pouring drinks",
    "playing dice",
    "mending a net",
    "reading a letter",
    "eating stew",
    "sharpening a knife",
    "telling a story",
];
const MOODS: &[&str] = &[
    "wary",
    "delighted",
    "tired",
    "curious",
    "irritated",
    "amused",
    "anxious",
    "calm",
];
const STATUSES: &[&str] = &["idle", "busy", "on shift", "off duty", "distracted"];
const SLOTS: &[&str] = &[
    "bar",
    "hearth",
    "table 1",
    "table 2",
    "table 3",
    "booth",
    "stairs",
    "doorway",
    "window seat",
    "kitchen",
    "cellar door",
    "stage",
];
const PLACES: &[&str] = &[
    "The Crooked Lantern",
    "Harbour Market",
    "North Road",
    "Old Chapel",
    "Guard House",
    "Fish Docks",
    "Mill",
    "Lighthouse",
];

fn sentence(rng: &mut Rng, min_words: usize, max_words: usize) -> String {
    let n = rng.between(min_words, max_words);
    let mut s = String::with_capacity(n * 7);
    for i in 0..n {
        let w = *rng.pick(WORDS);
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(w);
        }
    }
    s.push('.');
    s
}

/// The size of a synthetic world.
#[derive(Clone, Copy, Debug)]
pub struct WorldShape {
    /// Entities (characters; the first `max(containers, entities / 100)` are host-controlled).
    pub entities: usize,
    /// Containers (each with the same slots, none with a capacity limit).
    pub containers: usize,
    /// Slots per container.
    pub slots: usize,
}

impl WorldShape {
    /// `entities` entities in 8 containers of 12 slots.
    pub fn new(entities: usize) -> WorldShape {
        WorldShape {
            entities,
            containers: 8,
            slots: SLOTS.len(),
        }
    }
}

/// The `WorldCreated` event the engine writes for [`WORLD_NAME`] and [`T0`] with default
/// settings (it may fill in settings, such as the world's seed, so ask it rather than guess).
pub fn engine_world_created() -> Event {
    let engine = Engine::new_in(
        Box::new(MemoryStore::new()),
        WORLD_NAME,
        T0,
        setup_options(),
    )
    .expect("in-memory engine");
    let mut first = engine.events(1, 1).expect("seq 1");
    assert_eq!(first.len(), 1);
    first.remove(0).1
}

/// A generator of valid events: a world of N entities in a few containers, then turns that mix
/// user and assistant lines, moves, mood changes, edge updates, memories and the clock.
///
/// Every event it yields applies cleanly to a [`World`] that has applied all earlier ones,
/// starting with [`Synth::world_created`] (which matches what [`Engine::create_with`] writes
/// for [`WORLD_NAME`] and [`T0`] with default settings).
///
/// [`World`]: rp_core::World
#[derive(Clone, Debug)]
pub struct Synth {
    shape: WorldShape,
    rng: Rng,
    next_id: u64,
    now: Millis,
    containers: Vec<ContainerId>,
    entities: Vec<EntityId>,
    /// Host-controlled entities (indices into `entities`).
    hosts: Vec<usize>,
    /// Per container: the entities standing in it.
    members: Vec<Vec<usize>>,
    /// Per container: the engine-controlled entities standing in it.
    npcs_in: Vec<Vec<usize>>,
}

impl Synth {
    /// A generator for a world of `shape`, deterministic in `seed`.
    pub fn new(shape: WorldShape, seed: u64) -> Synth {
        assert!(shape.containers >= 1 && shape.slots >= 1 && shape.slots <= SLOTS.len());
        assert!(
            shape.entities >= 2 * shape.containers,
            "every container needs a host and an engine-controlled character"
        );
        Synth {
            shape,
            rng: Rng::new(seed),
            next_id: 1,
            now: T0,
            containers: Vec::new(),
            entities: Vec::new(),
            hosts: Vec::new(),
            members: vec![Vec::new(); shape.containers],
            npcs_in: vec![Vec::new(); shape.containers],
        }
    }

    /// The first event of the world, exactly as [`Engine::create_with`] writes it.
    pub fn world_created(&self) -> Event {
        engine_world_created()
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn slot(&mut self) -> String {
        SLOTS[self.rng.below(self.shape.slots)].to_owned()
    }

    /// The containers, the entities and their first positions (everything after
    /// `world_created` and before the first turn).
    pub fn genesis(&mut self) -> Vec<Event> {
        assert!(self.entities.is_empty(), "genesis runs once");
        let shape = self.shape;
        let mut out = Vec::with_capacity(shape.containers + 2 * shape.entities);
        for c in 0..shape.containers {
            let id = ContainerId(self.take_id());
            self.containers.push(id);
            out.push(Event::ContainerCreated {
                id,
                key: Some(format!("place-{c}")),
                name: format!("{} {}", PLACES[c % PLACES.len()], c / PLACES.len() + 1),
                facts: FactSheet(vec![sentence(&mut self.rng, 6, 12)]),
                parent: None,
                slots: SLOTS[..shape.slots]
                    .iter()
                    .map(|s| Slot {
                        name: (*s).to_owned(),
                        capacity: None,
                    })
                    .collect(),
                properties: ContainerProperties {
                    moving: false,
                    public: true,
                    audible_range: 0,
                },
            });
        }
        let host_count = shape.containers.max(shape.entities / 100);
        for i in 0..shape.entities {
            let id = EntityId(self.take_id());
            let host = i < host_count;
            self.entities.push(id);
            let c = i % shape.containers;
            self.members[c].push(i);
            if host {
                self.hosts.push(i);
            } else {
                self.npcs_in[c].push(i);
            }
            out.push(Event::EntityCreated {
                id,
                key: Some(format!("e{i}")),
                name: format!("{} {i}", if host { "Player" } else { "Townsfolk" }),
                aliases: vec![],
                facts: FactSheet(vec![
                    sentence(&mut self.rng, 6, 14),
                    sentence(&mut self.rng, 6, 14),
                ]),
                host_controlled: host,
                state: EntityState {
                    mood: Some((*self.rng.pick(MOODS)).to_owned()),
                    goals: vec![sentence(&mut self.rng, 3, 6)],
                    status: None,
                },
            });
        }
        for i in 0..shape.entities {
            let c = i % shape.containers;
            let slot = self.slot();
            out.push(Event::ActivityChanged {
                entity: self.entities[i],
                activity: Activity {
                    position: Some(Position {
                        container: self.containers[c],
                        slot: Some(slot),
                    }),
                    posture: Some((*self.rng.pick(POSTURES)).to_owned()),
                    ..Activity::default()
                },
            });
        }
        out
    }

    /// Up to `extra` bystanders from container `c`, plus `always`.
    fn witnesses(&mut self, c: usize, always: &[usize], extra: usize) -> WitnessSet {
        let mut set: BTreeSet<EntityId> = always.iter().map(|i| self.entities[*i]).collect();
        let members = &self.members[c];
        for _ in 0..extra {
            let i = members[self.rng.below(members.len())];
            set.insert(self.entities[i]);
        }
        set.into_iter().collect()
    }

    fn edge(&mut self, from: usize, to: usize) -> Edge {
        let knowledge = (0..self.rng.between(1, 3))
            .map(|_| sentence(&mut self.rng, 4, 8))
            .collect();
        let private_moments = (0..self.rng.below(2))
            .map(|_| sentence(&mut self.rng, 6, 12))
            .collect();
        Edge {
            from: self.entities[from],
            to: self.entities[to],
            affinity: self.rng.signed(),
            trust: self.rng.signed(),
            summary: sentence(&mut self.rng, 8, 16),
            knowledge,
            private_moments,
            last_interaction: Some(self.now),
            imprints: Vec::new(),
            source: None,
        }
    }

    fn memory(&mut self, owner: usize, witnesses: &WitnessSet) -> Memory {
        let id = MemoryId(self.take_id());
        Memory {
            id,
            owner: self.entities[owner],
            witnesses: witnesses.clone(),
            text: sentence(&mut self.rng, 10, 25),
            kind: if self.rng.below(4) == 0 {
                MemoryKind::Reflection
            } else {
                MemoryKind::Utterance
            },
            significance: self.rng.unit(),
            created: self.now,
            last_accessed: None,
            access_count: 0,
            decay: Default::default(),
            pinned: false,
            embedding: None,
            scene: None,
            stability: 0.0,
            summary: None,
            feeling: None,
            about: None,
            sources: Vec::new(),
        }
    }

    /// One turn of [`TURN_EVENTS`] events: a player speaks, a character answers and reacts
    /// (moves, changes mood, updates both edges, remembers), a bystander chimes in and
    /// remembers, and the clock moves on.
    ///
    /// [`TURN_EVENTS`]: crate::TURN_EVENTS
    pub fn turn(&mut self) -> Vec<Event> {
        assert!(!self.entities.is_empty(), "run genesis first");
        let host = *self.rng.pick(&self.hosts);
        let c = host % self.shape.containers;
        let npcs = &self.npcs_in[c];
        let a = npcs[self.rng.below(npcs.len())];
        let b = npcs[self.rng.below(npcs.len())];
        let witnesses = self.witnesses(c, &[host, a, b], 3);
        let user_id = UtteranceId(self.take_id());
        let user = Utterance {
            id: user_id,
            speaker: self.entities[host],
            text: sentence(&mut self.rng, 6, 20),
            at: self.now,
            witnesses: witnesses.clone(),
            model: None,
            scene: None,
        };
        let reply_id = UtteranceId(self.take_id());
        let reply = Utterance {
            id: reply_id,
            speaker: self.entities[a],
            text: sentence(&mut self.rng, 25, 70),
            at: self.now + 1,
            witnesses: witnesses.clone(),
            model: Some("synthetic-8b".into()),
            scene: None,
        };
        let slot = self.slot();
        let activity = Activity {
            position: Some(Position {
                container: self.containers[c],
                slot: Some(slot),
            }),
            posture: Some((*self.rng.pick(POSTURES)).to_owned()),
            action: Some(Action {
                verb: (*self.rng.pick(VERBS)).to_owned(),
                started: self.now,
                duration_ms: Some(self.rng.between(1_000, 600_000) as u64),
                interruptible: true,
                attention_required: false,
            }),
            holding: vec![],
            attention: Some(self.entities[host]),
            status: Some((*self.rng.pick(STATUSES)).to_owned()),
        };
        let state = EntityState {
            mood: Some((*self.rng.pick(MOODS)).to_owned()),
            goals: (0..self.rng.between(1, 3))
                .map(|_| sentence(&mut self.rng, 3, 7))
                .collect(),
            status: Some((*self.rng.pick(STATUSES)).to_owned()),
        };
        let edge_out = self.edge(a, host);
        let edge_in = self.edge(host, a);
        let memory_a = self.memory(a, &witnesses);
        let chime_id = UtteranceId(self.take_id());
        let chime = Utterance {
            id: chime_id,
            speaker: self.entities[b],
            text: sentence(&mut self.rng, 8, 30),
            at: self.now + 2,
            witnesses: witnesses.clone(),
            model: Some("synthetic-8b".into()),
            scene: None,
        };
        let memory_b = self.memory(b, &witnesses);
        self.now += self.rng.between(1_000, 60_000) as Millis;
        vec![
            Event::UserTurn { utterance: user },
            Event::AssistantTurn { utterance: reply },
            Event::ActivityChanged {
                entity: self.entities[a],
                activity,
            },
            Event::EntityStateChanged {
                entity: self.entities[a],
                state,
            },
            Event::EdgeUpdated { edge: edge_out },
            Event::EdgeUpdated { edge: edge_in },
            Event::MemoryAdded { memory: memory_a },
            Event::AssistantTurn { utterance: chime },
            Event::MemoryAdded { memory: memory_b },
            Event::TimeAdvanced { to: self.now },
        ]
    }

    /// The whole log from `world_created` on, one event at a time, `total` events in all.
    pub fn log(mut self, total: usize) -> impl Iterator<Item = Event> {
        let mut pending: std::collections::VecDeque<Event> = std::iter::once(self.world_created())
            .chain(self.genesis())
            .collect();
        std::iter::from_fn(move || {
            if pending.is_empty() {
                pending.extend(self.turn());
            }
            pending.pop_front()
        })
        .take(total)
    }
}

/// Encodes events as the log stores them.
pub fn encode_all(events: &[Event]) -> Vec<Vec<u8>> {
    events.iter().map(encode_event).collect()
}
