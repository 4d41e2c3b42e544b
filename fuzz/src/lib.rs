//! Shared helpers for the rp-core fuzz targets: record framing, round-trip and consistency
//! checks, and a small structure-aware event generator that draws ids and names from a world
//! so that generated events get past the "no such entity" checks and exercise `World::apply`.

use rp_core::log::JudgedReport;
use rp_core::log::codec::{decode_event, decode_snapshot, encode_event, encode_snapshot};
use rp_core::turn::{GenerateResult, Purpose, ToolRun};
use rp_core::*;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The tavern world file shipped with the examples.
pub const TAVERN_TOML: &str = include_str!("../../examples/tavern.toml");

/// Frames a MessagePack `body` as a record of the current format (magic, version, CRC-32 of
/// version and body), so a structure-aware target gets every input past the checksum.
pub fn wrap(body: &[u8]) -> Vec<u8> {
    rp_core::log::codec::frame(body)
}

/// Splits an input laid out as `record ++ tail ++ [tail_len]` (`tail_len` one byte). An empty
/// input gives two empty halves; a `tail_len` longer than what is there takes all of it.
pub fn split_tail(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((&n, rest)) = data.split_last() else {
        return (data, data);
    };
    let n = usize::from(n).min(rest.len());
    rest.split_at(rest.len() - n)
}

/// Builds an input for [`split_tail`].
pub fn join_tail(record: &[u8], tail: &[u8]) -> Vec<u8> {
    assert!(tail.len() <= 255);
    let mut out = record.to_vec();
    out.extend_from_slice(tail);
    out.push(tail.len() as u8);
    out
}

/// `x == x`: false only for values holding a NaN somewhere.
#[allow(clippy::eq_op)]
pub fn self_eq<T: PartialEq>(x: &T) -> bool {
    x == x
}

/// A decoded event must re-encode to a record that decodes to an equal event, and encoding
/// must be a fixpoint from then on.
pub fn check_event_round_trip(event: &Event) {
    let bytes = encode_event(event);
    let again = decode_event(&bytes, "fuzz-reencoded")
        .unwrap_or_else(|e| panic!("re-encoded event does not decode: {e}\n{event:?}"));
    if self_eq(event) {
        assert_eq!(&again, event, "event changed across a round trip");
    }
    assert_eq!(
        encode_event(&again),
        bytes,
        "event encoding is not a fixpoint"
    );
}

/// A decoded world must re-encode to a snapshot that decodes to a world with the same bytes.
pub fn check_snapshot_round_trip(world: &World) -> World {
    let bytes = world.to_bytes();
    let record = encode_snapshot(world);
    let again = decode_snapshot(&record, "fuzz-reencoded")
        .unwrap_or_else(|e| panic!("re-encoded snapshot does not decode: {e}"));
    assert_eq!(
        again.to_bytes(),
        bytes,
        "snapshot bytes changed across a round trip"
    );
    again
}

/// Like [`check_snapshot_round_trip`] but for worlds that may be inconsistent (a decoded
/// snapshot with events applied): encoding must not panic, and if the snapshot decodes again
/// its bytes must be stable.
pub fn check_snapshot_reencode(world: &World) {
    let bytes = world.to_bytes();
    if let Ok(again) = decode_snapshot(&encode_snapshot(world), "fuzz-reencoded") {
        assert_eq!(
            again.to_bytes(),
            bytes,
            "snapshot bytes changed across a round trip"
        );
    }
}

/// The tavern world, loaded from `examples/tavern.toml` by applying its creation events.
pub fn tavern() -> &'static World {
    static TAVERN: OnceLock<World> = OnceLock::new();
    TAVERN.get_or_init(|| {
        let events = worldfile::creation_events("tavern.toml", TAVERN_TOML, 0, Default::default())
            .expect("tavern.toml loads");
        let mut world = World::new();
        for e in &events {
            world.apply(e).expect("tavern event applies");
        }
        world
    })
}

/// Checks that the lookups `apply` maintains incrementally agree with a world rebuilt from
/// the snapshot form (which re-derives them from scratch and checks every reference). Only
/// meaningful for worlds built by `apply` from `World::new()`.
pub fn check_consistent(world: &World) {
    let rebuilt =
        decode_snapshot(&encode_snapshot(world), "fuzz-consistency").unwrap_or_else(|e| {
            panic!("a world built by apply does not survive a snapshot reload: {e}")
        });
    assert_eq!(rebuilt.to_bytes(), world.to_bytes());
    for e in rebuilt.entities() {
        assert_eq!(
            world.entity_by_name(&e.name).map(|x| x.id),
            Some(e.id),
            "name index out of step for {:?}",
            e.name
        );
        if let Some(k) = &e.key {
            assert_eq!(
                world.entity_by_key(k).map(|x| x.id),
                Some(e.id),
                "entity key index out of step for {k:?}"
            );
        }
        assert_eq!(
            world.carrier_of(e.id),
            rebuilt.carrier_of(e.id),
            "carrier index out of step for {}",
            e.id
        );
    }
    for c in rebuilt.containers() {
        if let Some(k) = &c.key {
            assert_eq!(
                world.container_by_key(k).map(|x| x.id),
                Some(c.id),
                "container key index out of step for {k:?}"
            );
        }
        for s in &c.slots {
            assert_eq!(
                world.occupancy(c.id, &s.name),
                rebuilt.occupancy(c.id, &s.name),
                "slot count out of step for {:?} in {}",
                s.name,
                c.id
            );
        }
    }
}

/// Applies `event` to a world built by `apply` and checks the contract: on error the world is
/// unchanged; either way its lookups stay consistent.
pub fn apply_checked(world: &mut World, event: &Event) -> bool {
    let before = world.to_bytes();
    let seq = world.seq();
    let ok = match world.apply(event) {
        Ok(()) => {
            assert_eq!(world.seq(), seq + 1);
            true
        }
        Err(_) => {
            assert_eq!(
                world.to_bytes(),
                before,
                "a rejected event changed the world"
            );
            false
        }
    };
    check_consistent(world);
    ok
}

/// Reads bytes for the event generator, yielding zeros once exhausted.
pub struct Src<'a> {
    bytes: &'a [u8],
}

impl<'a> Src<'a> {
    /// Reads from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Src { bytes }
    }

    /// True once every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next byte (0 once exhausted).
    pub fn u8(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// The low bit of the next byte.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// The next eight bytes, big-endian.
    pub fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = (v << 8) | u64::from(self.u8());
        }
        v
    }

    fn pick<'s, T>(&mut self, items: &'s [T]) -> Option<&'s T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[usize::from(self.u8()) % items.len()])
        }
    }
}

/// Draws event fields from a [`Src`] and a world: mostly ids and names that exist, sometimes
/// boundary values.
pub struct Gen<'w> {
    entities: Vec<EntityId>,
    containers: Vec<ContainerId>,
    groups: Vec<GroupId>,
    memories: Vec<MemoryId>,
    names: Vec<String>,
    slots: Vec<String>,
    next_id: u64,
    now: Millis,
    world: &'w World,
}

const WORDS: &[&str] = &[
    "",
    " ",
    "x",
    " x",
    "Wren",
    "wren",
    "WREN",
    "the traveller",
    "floor",
    "bench",
    "stools",
    "a\nb",
    "a\rb",
    "\u{0}",
    "\u{7f}",
    "İ",
    "ẞ",
    "K",
    "ﬀ",
    "tavern",
    "booth",
    "bar",
    "entity-1",
    "container-1",
    "'''",
    "\"",
    "\\",
    "#",
    "[x]",
    "a = 1",
    // Fact-language lines (DESIGN §4).
    "hp: 10",
    "mood: \"calm\"",
    "$# a comment",
    "$respond",
    "$respond false",
    "$if self.hp > 3: angry",
    "$if random() < 0.5: $respond true",
    "$if roll(\"2d6+1\") > 7: lucky",
    "$if /a+b/i.test(content): $retry 500",
    "$if content.includes(\"x\") && !mentioned: $respond false",
    "$if (((((1))))): x",
    "$if a ?? b ? c : d: e",
    "$if \"\u{1F600}\".length == 2: y",
    "$if roll(\"999999d999999\") > 1: z",
    "$if /(a*)*b/.test(content): w",
    "$if : x",
    "$if",
];

const FLOATS: &[f64] = &[
    0.0,
    1.0,
    -1.0,
    0.5,
    -0.0,
    1.000_000_1,
    -1.000_000_1,
    2.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    1e-300,
];

impl<'w> Gen<'w> {
    /// A generator drawing ids and names from `world`.
    pub fn new(world: &'w World) -> Self {
        let mut names: Vec<String> = WORDS.iter().map(|s| s.to_string()).collect();
        let mut slots = Vec::new();
        for e in world.entities() {
            names.push(e.name.clone());
            names.extend(e.aliases.iter().cloned());
            names.extend(e.key.iter().cloned());
        }
        for c in world.containers() {
            names.push(c.name.clone());
            names.extend(c.key.iter().cloned());
            slots.extend(c.slots.iter().map(|s| s.name.clone()));
        }
        Gen {
            entities: world.entities().map(|e| e.id).collect(),
            containers: world.containers().map(|c| c.id).collect(),
            groups: world.groups().map(|g| g.id).collect(),
            memories: world.all_memories().map(|m| m.id).collect(),
            names,
            slots,
            next_id: world.next_id(),
            now: world.now(),
            world,
        }
    }

    fn raw_id(&mut self, s: &mut Src<'_>, known: &[u64]) -> u64 {
        let b = s.u8();
        match b {
            0..=199 if !known.is_empty() => known[usize::from(b) % known.len()],
            200..=219 => self.next_id,
            220..=229 => self.next_id.saturating_sub(1),
            230..=234 => 0,
            235..=239 => u64::MAX,
            240..=244 => u64::MAX - 1,
            245..=249 => s.u64(),
            _ => u64::from(b % 32),
        }
    }

    fn fresh(&mut self, s: &mut Src<'_>) -> u64 {
        if s.u8() < 224 {
            let id = self.next_id;
            self.next_id = self.next_id.saturating_add(1);
            id
        } else {
            self.raw_id(s, &[])
        }
    }

    fn entity(&mut self, s: &mut Src<'_>) -> EntityId {
        let known: Vec<u64> = self.entities.iter().map(|x| x.0).collect();
        EntityId(self.raw_id(s, &known))
    }

    fn container(&mut self, s: &mut Src<'_>) -> ContainerId {
        let known: Vec<u64> = self.containers.iter().map(|x| x.0).collect();
        ContainerId(self.raw_id(s, &known))
    }

    fn entities(&mut self, s: &mut Src<'_>) -> Vec<EntityId> {
        let n = usize::from(s.u8() % 5);
        (0..n).map(|_| self.entity(s)).collect()
    }

    fn text(&mut self, s: &mut Src<'_>) -> String {
        let b = s.u8();
        match b {
            0..=239 => s.pick(&self.names).cloned().unwrap_or_default(),
            240..=243 => "y".repeat(rp_core::log::MAX_TEXT_BYTES),
            244..=247 => "y".repeat(rp_core::log::MAX_TEXT_BYTES + 1),
            248..=251 => "n".repeat(rp_core::log::MAX_NAME_CHARS + usize::from(b & 1)),
            _ => {
                let n = usize::from(s.u8() % 16);
                let bytes: Vec<u8> = (0..n).map(|_| s.u8()).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
        }
    }

    fn scoped_event(&mut self, s: &mut Src<'_>) -> ScopedEventId {
        let known: Vec<u64> = self.world.scoped_events().map(|e| e.id.0).collect();
        ScopedEventId(self.raw_id(s, &known))
    }

    /// A `$if` expression: mostly valid, some not.
    fn condition(&mut self, s: &mut Src<'_>) -> String {
        match s.u8() % 6 {
            0 => "time.is_day".into(),
            1 => "present.length >= 1 && random() < 0.5".into(),
            2 => "self.mood == \"calm\"".into(),
            3 => "has_fact(/bask/i)".into(),
            4 => "((".into(),
            _ => self.text(s),
        }
    }

    fn effect(&mut self, s: &mut Src<'_>) -> Effect {
        match s.u8() % 7 {
            0 => Effect::SystemLine { text: self.text(s) },
            1 => Effect::Memory {
                text: self.text(s),
                significance: self.float(s),
            },
            2 => Effect::GiveItem {
                item: self.entity(s),
                to: self.entity(s),
            },
            3 => Effect::TeachFact {
                who: self.entity(s),
                about: self.entity(s),
                fact: self.text(s),
            },
            4 => Effect::ChangeEdge {
                from: self.entity(s),
                to: self.entity(s),
                affinity: self.float(s),
                trust: self.float(s),
                summary: self.opt_text(s),
            },
            5 => Effect::OpenThread { text: self.text(s) },
            _ => Effect::CloseThread {
                thread: s.bool().then(|| {
                    let known: Vec<u64> = self.world.threads().map(|t| t.id.0).collect();
                    ThreadId(self.raw_id(s, &known))
                }),
                status: match s.u8() % 3 {
                    0 => ThreadStatus::Resolved,
                    1 => ThreadStatus::Dropped,
                    _ => ThreadStatus::Open,
                },
            },
        }
    }

    fn opt_text(&mut self, s: &mut Src<'_>) -> Option<String> {
        s.bool().then(|| self.text(s))
    }

    fn texts(&mut self, s: &mut Src<'_>) -> Vec<String> {
        let n = usize::from(s.u8() % 4);
        (0..n).map(|_| self.text(s)).collect()
    }

    fn slot_name(&mut self, s: &mut Src<'_>) -> String {
        if s.u8() < 200 && !self.slots.is_empty() {
            s.pick(&self.slots).cloned().unwrap_or_default()
        } else {
            self.text(s)
        }
    }

    fn float(&mut self, s: &mut Src<'_>) -> f64 {
        let b = s.u8();
        if b < 128 {
            f64::from(b) / 127.0 * 2.0 - 1.0
        } else {
            FLOATS[usize::from(b) % FLOATS.len()]
        }
    }

    fn time(&mut self, s: &mut Src<'_>) -> Millis {
        match s.u8() % 6 {
            0 => self.now,
            1 => self.now.saturating_add(1000),
            2 => self.now.saturating_sub(1),
            3 => i64::MAX,
            4 => i64::MIN,
            _ => s.u64() as i64,
        }
    }

    fn facts(&mut self, s: &mut Src<'_>) -> FactSheet {
        FactSheet(self.texts(s))
    }

    fn slots(&mut self, s: &mut Src<'_>) -> Vec<Slot> {
        let n = usize::from(s.u8() % 4);
        (0..n)
            .map(|_| Slot {
                name: self.slot_name(s),
                capacity: match s.u8() % 4 {
                    0 => None,
                    1 => Some(0),
                    2 => Some(1),
                    _ => Some(u32::from(s.u8())),
                },
            })
            .collect()
    }

    fn properties(&mut self, s: &mut Src<'_>) -> ContainerProperties {
        let b = s.u8();
        ContainerProperties {
            moving: b & 1 != 0,
            public: b & 2 != 0,
            audible_range: u32::from(b >> 2),
        }
    }

    fn state(&mut self, s: &mut Src<'_>) -> EntityState {
        EntityState {
            mood: self.opt_text(s),
            goals: self.texts(s),
            status: self.opt_text(s),
        }
    }

    fn witnesses(&mut self, s: &mut Src<'_>, must: EntityId) -> WitnessSet {
        let mut w: BTreeSet<EntityId> = self.entities(s).into_iter().collect();
        if s.u8() < 240 {
            w.insert(must);
        }
        WitnessSet(w)
    }

    fn activity(&mut self, s: &mut Src<'_>, who: EntityId) -> Activity {
        let current = self
            .world
            .entity(who)
            .map(|e| e.activity.clone())
            .unwrap_or_default();
        let inventory = self
            .world
            .entity(who)
            .map(|e| e.inventory.clone())
            .unwrap_or_default();
        let b = s.u8();
        Activity {
            position: match b % 4 {
                0 => current.position,
                1 => None,
                _ => Some(Position {
                    container: self.container(s),
                    slot: if s.u8() < 200 {
                        Some(self.slot_name(s))
                    } else {
                        None
                    },
                }),
            },
            posture: self.opt_text(s),
            action: s.bool().then(|| Action {
                verb: self.text(s),
                started: self.time(s),
                duration_ms: s.bool().then(|| s.u64()),
                interruptible: s.bool(),
                attention_required: s.bool(),
            }),
            holding: if s.bool() {
                inventory.into_iter().filter(|_| s.bool()).collect()
            } else {
                self.entities(s)
            },
            attention: s.bool().then(|| self.entity(s)),
            status: self.opt_text(s),
        }
    }

    fn utterance(&mut self, s: &mut Src<'_>, user: bool) -> Utterance {
        // Prefer a speaker of the right kind.
        let speakers: Vec<u64> = self
            .world
            .entities()
            .filter(|e| e.host_controlled == user)
            .map(|e| e.id.0)
            .collect();
        let speaker = if s.u8() < 230 && !speakers.is_empty() {
            EntityId(speakers[usize::from(s.u8()) % speakers.len()])
        } else {
            self.entity(s)
        };
        Utterance {
            id: UtteranceId(self.fresh(s)),
            speaker,
            text: self.text(s),
            at: self.time(s),
            witnesses: self.witnesses(s, speaker),
            model: self.opt_text(s),
            scene: s.bool().then(|| self.scene(s)),
        }
    }

    fn scene(&mut self, s: &mut Src<'_>) -> SceneId {
        let known: Vec<u64> = self.world.scenes().map(|x| x.id.0).collect();
        SceneId(self.raw_id(s, &known))
    }

    /// One event drawn from `s`.
    pub fn event(&mut self, s: &mut Src<'_>) -> Event {
        let arm = s.u8() % 38;
        match arm {
            0 => Event::WorldCreated {
                name: self.text(s),
                now: self.time(s),
                settings: WorldSettings {
                    dialogue_window: u32::from(s.u8() % 4),
                    ..Default::default()
                },
            },
            1 => Event::EntityCreated {
                id: EntityId(self.fresh(s)),
                key: self.opt_text(s),
                name: self.text(s),
                aliases: self.texts(s),
                facts: self.facts(s),
                host_controlled: s.bool(),
                state: self.state(s),
            },
            2 => Event::EntityEdited {
                id: self.entity(s),
                name: self.opt_text(s),
                aliases: s.bool().then(|| self.texts(s)),
                facts: s.bool().then(|| self.facts(s)),
                host_controlled: s.bool().then(|| s.bool()),
            },
            3 => Event::EntityRemoved { id: self.entity(s) },
            4 => Event::ContainerCreated {
                id: ContainerId(self.fresh(s)),
                key: self.opt_text(s),
                name: self.text(s),
                facts: self.facts(s),
                parent: s.bool().then(|| self.container(s)),
                slots: self.slots(s),
                properties: self.properties(s),
            },
            5 => Event::ContainerEdited {
                id: self.container(s),
                name: self.text(s),
                facts: self.facts(s),
                parent: s.bool().then(|| self.container(s)),
                slots: self.slots(s),
                properties: self.properties(s),
            },
            6 => Event::ContainerRemoved {
                id: self.container(s),
            },
            7 => {
                let entity = self.entity(s);
                Event::ActivityChanged {
                    entity,
                    activity: self.activity(s, entity),
                }
            }
            8 => Event::InventoryChanged {
                entity: self.entity(s),
                inventory: self.entities(s),
            },
            9 => Event::EntityStateChanged {
                entity: self.entity(s),
                state: self.state(s),
            },
            10 => Event::EdgeUpdated {
                edge: Edge {
                    from: self.entity(s),
                    to: self.entity(s),
                    affinity: self.float(s),
                    trust: self.float(s),
                    summary: self.text(s),
                    knowledge: self.texts(s),
                    private_moments: self.texts(s),
                    last_interaction: s.bool().then(|| self.time(s)),
                },
            },
            11 => Event::EdgeRemoved {
                from: self.entity(s),
                to: self.entity(s),
            },
            12 => {
                let known: Vec<u64> = self.groups.iter().map(|x| x.0).collect();
                let id = if s.bool() {
                    GroupId(self.raw_id(s, &known))
                } else {
                    GroupId(self.fresh(s))
                };
                Event::GroupUpdated {
                    group: Group {
                        id,
                        members: self.entities(s).into_iter().collect(),
                        name: self.opt_text(s),
                        summary: self.text(s),
                        shared: self.texts(s),
                    },
                }
            }
            13 => {
                let known: Vec<u64> = self.groups.iter().map(|x| x.0).collect();
                Event::GroupRemoved {
                    id: GroupId(self.raw_id(s, &known)),
                }
            }
            14 => Event::UserTurn {
                utterance: self.utterance(s, true),
            },
            15 => Event::AssistantTurn {
                utterance: self.utterance(s, false),
            },
            16 => {
                let owner = self.entity(s);
                Event::MemoryAdded {
                    memory: Memory {
                        id: MemoryId(self.fresh(s)),
                        owner,
                        witnesses: self.witnesses(s, owner),
                        text: self.text(s),
                        kind: match s.u8() % 4 {
                            0 => MemoryKind::Utterance,
                            1 => MemoryKind::SceneSummary,
                            2 => MemoryKind::EventGist,
                            _ => MemoryKind::Reflection,
                        },
                        significance: self.float(s),
                        created: self.time(s),
                        last_accessed: s.bool().then(|| self.time(s)),
                        access_count: u32::from(s.u8()),
                        decay: match s.u8() % 4 {
                            0 => DecayStage::Full,
                            1 => DecayStage::Summary,
                            2 => DecayStage::Residue,
                            _ => DecayStage::Forgotten,
                        },
                        pinned: s.bool(),
                        embedding: s
                            .bool()
                            .then(|| (0..s.u8() % 8).map(|_| self.float(s) as f32).collect()),
                        scene: (s.u8() > 200).then(|| self.scene(s)),
                    },
                }
            }
            17 => {
                let known: Vec<u64> = self.memories.iter().map(|x| x.0).collect();
                Event::MemoryRemoved {
                    id: MemoryId(self.raw_id(s, &known)),
                }
            }
            18 => Event::TimeAdvanced { to: self.time(s) },
            37 => Event::TimeSkipped {
                from: self.time(s),
                to: self.time(s),
                skip: if s.bool() {
                    Skip::Elision {
                        entity: self.entity(s),
                    }
                } else {
                    Skip::Jump { to: self.time(s) }
                },
            },
            19 => Event::ResponseDecided {
                entity: self.entity(s),
                respond: s.bool(),
                retry_ms: s.bool().then(|| s.u64()),
                fired: (0..s.u8() % 4).map(|_| u32::from(s.u8())).collect(),
                draws: (0..s.u8() % 4).map(|_| self.float(s).abs()).collect(),
            },
            20 => {
                let known: Vec<u64> = self.memories.iter().map(|x| x.0).collect();
                Event::MemoriesRecalled {
                    ids: (0..s.u8() % 4)
                        .map(|_| MemoryId(self.raw_id(s, &known)))
                        .collect(),
                    at: self.time(s),
                }
            }
            21 => Event::Generated {
                purpose: match s.u8() % 4 {
                    0 => Purpose::Reply {
                        speaker: self.entity(s),
                    },
                    1 => Purpose::StateUpdate,
                    2 => Purpose::Summary,
                    _ => Purpose::Query,
                },
                result: GenerateResult {
                    text: self.text(s),
                    tool_calls: Vec::new(),
                    prompt_tokens: s.bool().then(|| u32::from(s.u8())),
                    completion_tokens: s.bool().then(|| u32::from(s.u8())),
                    model: self.opt_text(s),
                },
            },
            22 => Event::ThreadOpened {
                thread: Thread {
                    id: ThreadId(self.fresh(s)),
                    text: self.text(s),
                    participants: self.entities(s),
                    opened: self.time(s),
                    status: match s.u8() % 8 {
                        0 => ThreadStatus::Resolved,
                        1 => ThreadStatus::Dropped,
                        _ => ThreadStatus::Open,
                    },
                    event: s.bool().then(|| {
                        let known: Vec<u64> = self.world.scoped_events().map(|e| e.id.0).collect();
                        ScopedEventId(self.raw_id(s, &known))
                    }),
                },
            },
            23 => {
                let known: Vec<u64> = self.world.threads().map(|t| t.id.0).collect();
                Event::ThreadClosed {
                    id: ThreadId(self.raw_id(s, &known)),
                    status: match s.u8() % 3 {
                        0 => ThreadStatus::Resolved,
                        1 => ThreadStatus::Dropped,
                        _ => ThreadStatus::Open,
                    },
                }
            }
            24 => Event::ReportsJudged {
                reports: (0..s.u8() % 4)
                    .map(|_| JudgedReport {
                        report: self.text(s),
                        rejected: self.opt_text(s),
                        answer: self.opt_text(s),
                    })
                    .collect(),
            },
            25 => Event::ToolsRun {
                speaker: self.entity(s),
                calls: (0..s.u8() % 3)
                    .map(|_| ToolRun {
                        id: self.text(s),
                        name: self.text(s),
                        arguments: self.text(s),
                        result: self.text(s),
                        draws: (0..s.u8() % 3).map(|_| self.float(s).abs()).collect(),
                    })
                    .collect(),
            },
            26 => Event::SystemLineInjected {
                line: SystemLine {
                    id: self.fresh(s),
                    text: self.text(s),
                    audience: s.bool().then(|| self.entities(s)),
                    at: self.time(s),
                },
            },
            27 => {
                let known: Vec<u64> = self.world.system_lines().map(|l| l.id).collect();
                Event::SystemLinesShown {
                    ids: (0..s.u8() % 3).map(|_| self.raw_id(s, &known)).collect(),
                }
            }
            29 => Event::ScopedEventPlanned {
                event: ScopedEvent {
                    id: ScopedEventId(self.fresh(s)),
                    name: self.text(s),
                    status: match s.u8() % 8 {
                        0 => EventStatus::Active,
                        1 => EventStatus::Completed,
                        _ => EventStatus::Planned,
                    },
                    props: (0..s.u8() % 3)
                        .map(|_| (self.text(s), self.text(s)))
                        .collect(),
                    participants: self.entities(s),
                    preconditions: (0..s.u8() % 3).map(|_| self.condition(s)).collect(),
                    on_start: (0..s.u8() % 3).map(|_| self.effect(s)).collect(),
                    on_complete: (0..s.u8() % 3).map(|_| self.effect(s)).collect(),
                    significance: self.float(s),
                    start_at: s.bool().then(|| self.time(s)),
                    start_when: s.bool().then(|| self.condition(s)),
                    expire_at: s.bool().then(|| self.time(s)),
                    started: None,
                    closed: None,
                },
            },
            30 => Event::ScopedEventStarted {
                id: self.scoped_event(s),
                at: self.time(s),
                draws: (0..s.u8() % 3).map(|_| self.float(s).abs()).collect(),
            },
            31 => Event::ScopedEventClosed {
                id: self.scoped_event(s),
                status: match s.u8() % 5 {
                    0 => EventStatus::Completed,
                    1 => EventStatus::Cancelled,
                    2 => EventStatus::Expired,
                    3 => EventStatus::Active,
                    _ => EventStatus::Planned,
                },
                at: self.time(s),
                promotion: Promotion {
                    items: (0..s.u8() % 2)
                        .map(|_| ItemPromotion {
                            item: self.entity(s),
                            to: self.entity(s),
                        })
                        .collect(),
                    knowledge: (0..s.u8() % 2)
                        .map(|_| KnowledgePromotion {
                            who: self.entity(s),
                            about: self.entity(s),
                            fact: self.text(s),
                        })
                        .collect(),
                    summaries: (0..s.u8() % 2)
                        .map(|_| SummaryPromotion {
                            from: self.entity(s),
                            to: self.entity(s),
                            summary: self.text(s),
                        })
                        .collect(),
                    gists: (0..s.u8() % 3)
                        .map(|_| GistPromotion {
                            witness: self.entity(s),
                            text: self.text(s),
                            significance: s.bool().then(|| self.float(s)),
                        })
                        .collect(),
                },
            },
            32 => Event::SceneOpened {
                scene: Scene {
                    id: SceneId(self.fresh(s)),
                    container: self.container(s),
                    opened: self.time(s),
                    closed: (s.u8() > 240).then(|| self.time(s)),
                    witnesses: self.entities(s).into_iter().collect(),
                    lines: u32::from(s.u8() > 240),
                    last_line: (s.u8() > 240).then(|| self.time(s)),
                },
            },
            33 => Event::SceneClosed {
                id: self.scene(s),
                at: self.time(s),
            },
            34 => Event::QueryAsked {
                id: QueryId(self.fresh(s)),
                text: self.text(s),
                asked_as: s.bool().then(|| self.entity(s)),
                config: query::QueryConfig {
                    max_info_requests: u32::from(s.u8() % 24),
                    max_initial_entities: u32::from(s.u8()),
                    include_relationships: s.bool(),
                    temperature: self.float(s),
                    result_limit: u32::from(s.u8()),
                },
                at: self.time(s),
            },
            35 | 36 => {
                let known: Vec<u64> = self.world.queries().map(|q| q.id.0).collect();
                let id = QueryId(self.raw_id(s, &known));
                let info_requests = u32::from(s.u8() % 6);
                let rounds = (0..s.u8() % 3)
                    .map(|_| query::QueryRound {
                        forced: self.opt_text(s),
                        output: GenerateResult {
                            text: self.text(s),
                            tool_calls: Vec::new(),
                            prompt_tokens: None,
                            completion_tokens: None,
                            model: self.opt_text(s),
                        },
                        problem: self.opt_text(s),
                        requests: (0..s.u8() % 3)
                            .map(|_| query::RequestRun {
                                request: query::InfoRequest {
                                    capability_id: self.text(s),
                                    params: Default::default(),
                                    reason: self.text(s),
                                },
                                refused: self.opt_text(s),
                                summary: self.text(s),
                                entities: self.entities(s),
                            })
                            .collect(),
                    })
                    .collect();
                let at = self.time(s);
                if arm == 35 {
                    Event::QueryFailed {
                        id,
                        info_requests,
                        rounds,
                        error: self.text(s),
                        at,
                    }
                } else {
                    let context = self.entities(s);
                    let sources = (0..s.u8() % 3)
                        .map(|_| query::AnswerSource {
                            entity_id: self.entity(s),
                            contribution: self.text(s),
                            relevance: self.float(s),
                        })
                        .collect();
                    Event::QueryAnswered {
                        id,
                        info_requests,
                        rounds,
                        context,
                        answer: query::Answer {
                            content: self.text(s),
                            confidence: match s.u8() % 3 {
                                0 => query::Confidence::High,
                                1 => query::Confidence::Medium,
                                _ => query::Confidence::Low,
                            },
                            sources,
                            suggested_follow_ups: self.texts(s),
                            forced: self.opt_text(s),
                        },
                        at,
                    }
                }
            }
            _ => Event::WorldFileApplied {
                file: self.text(s),
                text: if s.bool() {
                    TAVERN_TOML.to_owned()
                } else {
                    self.text(s)
                },
            },
        }
    }
}

/// Up to `max` events drawn from `bytes`, each generated against the world as it stands
/// after the previous one, applied with `apply` (which returns whether the event applied).
pub fn drive(
    world: &mut World,
    bytes: &[u8],
    max: usize,
    mut apply: impl FnMut(&mut World, &Event),
) {
    let mut s = Src::new(bytes);
    for _ in 0..max {
        if s.is_empty() {
            break;
        }
        let event = Gen::new(world).event(&mut s);
        apply(world, &event);
    }
}
