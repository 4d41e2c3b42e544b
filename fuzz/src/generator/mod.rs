//! The structure-aware event generator: bytes read by a [`Src`], turned by a [`Gen`] into
//! fields that mostly exist in the world (ids, names, slots) and sometimes sit on a boundary.
//! The events themselves are drawn in `event`.

mod event;

use rp_core::*;
use std::collections::BTreeSet;

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
    rules: Vec<(EntityId, RuleId)>,
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
            rules: world.rules().map(|r| (r.owner, r.id)).collect(),
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

    /// A rule and its owner: mostly one that exists.
    fn rule(&mut self, s: &mut Src<'_>) -> (EntityId, RuleId) {
        if s.u8() < 200 && !self.rules.is_empty() {
            let i = usize::from(s.u8()) % self.rules.len();
            return self.rules[i];
        }
        (self.entity(s), RuleId(self.raw_id(s, &[])))
    }

    /// A pressure term's name, or one that is not.
    fn term(&mut self, s: &mut Src<'_>) -> String {
        [
            "social_debt",
            "task",
            "curiosity",
            "availability",
            "intent",
            "charm",
        ][usize::from(s.u8() % 6)]
        .to_owned()
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
        w.into_iter().collect()
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
