// One file: one bench harness; the 1M-memory save is built once and every measurement runs on it.
//! A whole turn without the model (issue 5, DESIGN §5, §6, §10): `begin_turn_with`, every
//! `step`, an instant generation for each `Step::Generate`, and `finish`, on a save holding
//! 1M memories; and the lore scan of 1,000 entries over a 64 KB window.
//!
//! **World.** 50 entities: a host-controlled player and 49 characters, five to a room in ten
//! rooms that do not hear each other, so exactly five are present with the player (the player
//! and four characters hear each input). The four have sheets with `$if` lines on `mentioned`,
//! regexes over the line, `random()` and `unread_count`: one always answers, one answers about
//! half the time, one when named, one rarely. Edges join every ordered pair of the five.
//! 1,000,000 memories (20,000 per entity, 10–40 words from a Zipf vocabulary of 20,000 made-up
//! words, over 1,000 game hours) are appended through the engine, then the save gets one
//! snapshot at its head, as a long campaign's save would have. Inputs and replies are drawn
//! from the same vocabulary (so recall has hits), and sometimes name an absent character (so
//! lore activates).
//!
//! **Contenders**, each on its own copy of that save, interleaved turn by turn with a rotating
//! first so they share the machine's noise:
//! - `eventual`: the turn on `Durability::Eventual` (redb file, default snapshots);
//! - `immediate`: the same turns on `Durability::Immediate`;
//! - `floor`: the save's durable floor, `Engine::append` of one `TimeAdvanced` event with
//!   `Durability::Immediate` on a third copy (one fsynced redb commit, nothing else);
//! - `disk`: the disk's floor, `pwrite` of that event's bytes + `fdatasync` on a plain file;
//! - `twin`: the turn on `Durability::Eventual` in a twin save with the same world and only
//!   1,000 memories (20 per entity), which separates what grows with the speaker's memories.
//!
//! Each engine call is timed on its own (wall and thread CPU); the turn is their sum, so the
//! generator (a reply text drawn before the turn) is outside it. After each round the phases
//! are also timed alone through the public API on `eventual` and `twin`: response control
//! (`World::decide` for the four), retrieval (`Engine::recall`, with the k the prompt step asks
//! for and with `memories_k`), pinned memories (`Engine::always_loaded`), the lore scan
//! (`LoreIndex::scan` of the speaker's window) and a whole prompt (`Engine::inspect_prompt`);
//! what the prompt costs besides is `inspect − recall (warm) − always_loaded − lore`. The phases
//! summed are a cross-check of the turn, and the twin shows what grows with the memories.
//!
//! `cargo test --benches` runs a small version (5,000 memories, a few turns) as a smoke test.
//! `RP_TURN_SHOW_PROMPT=1` prints the first responder's prompt of the first timed turn.

use rp_benches::{
    Elapsed, FsyncFloor, Latency, Rng, Stopwatch, Vocabulary, WORLD_NAME, add_snapshots, file_size,
    loadavg, ms, scaled, setup_options,
};
use rp_core::facts::SeededDraws;
use rp_core::log::codec::encode_event;
use rp_core::memory::RecallOptions;
use rp_core::turn::{
    GenerateResult, LoreEntry, LoreIndex, Step, TurnInput, TurnOptions, TurnOutcome,
};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Durability, Edge, Engine, EngineOptions, EntityId,
    EntityState, Event, FactSheet, Memory, MemoryId, MemoryKind, Message, Millis, Position, Slot,
    WitnessSet,
};
use std::hint::black_box;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

const HOUR: i64 = 3_600_000;
/// The host clock when the world is created; the memories are older, the turns newer.
const START: Millis = 1_700_000_000_000;
const ROOMS: usize = 10;
const PER_ROOM: usize = 5;
const ENTITIES: usize = ROOMS * PER_ROOM;
/// Memories appended per commit while building the save.
const CHUNK: usize = 10_000;

fn report(line: impl AsRef<str>) {
    println!("RESULT turn: {}", line.as_ref());
}

// ---------------------------------------------------------------------------------------------
// Text.

// Made-up words come from `rp_benches::word` (syllables of the rank in base 70, as in the
// recall bench): each ends in a vowel, so none can be a name below (they all end in a
// consonant) and no line mentions anyone by accident.

/// First names of the 50 entities (every one ends in a consonant).
static FIRST: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "Wren Tobias Maren Orrin Hollis Edwin Corwin Ansel Bram Cedric Dorian Elspeth Fenwick \
     Garrick Haldis Ivor Jessamyn Kestrel Lorcan Merrit Nyles Osric Percival Quill \
     Roderick Sorrel Tamsin Ulric Vivian Wystan Yorick Alaric Brannoch Caspian Declan \
     Emeric Finnian Gideon Hestan Idris Jareth Killian Lysander Morwen Niall Oswin Piran \
     Rowan Silas Thaddeus"
        .split_whitespace()
        .collect()
});
/// Family names of the 50 entities.
static FAMILY: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "Holt Reed Vell Harrow Thorne Ashdown Crane Fletcher Gorse Hatch"
        .split_whitespace()
        .collect()
});
/// Roles: the second alias of each entity ("the innkeeper").
static ROLES: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "innkeeper fisherman ferryman smith chandler priest miller weaver tanner cooper \
     herbalist tinker baker sailor minstrel harbourmaster scribe midwife gravedigger \
     cartographer net-mender lamplighter rope-maker toll-keeper beekeeper"
        .split_whitespace()
        .collect()
});

/// The role alias of entity `i` ("the innkeeper", then "the old innkeeper").
fn role(i: usize) -> String {
    if i < ROLES.len() {
        format!("the {}", ROLES[i])
    } else {
        format!("the old {}", ROLES[i % ROLES.len()])
    }
}

// ---------------------------------------------------------------------------------------------
// The world.

/// The sheets of the four characters present with the player: one always answers, one about
/// half the time, one when named, one rarely (named, and a draw). `w` are common words of the
/// vocabulary the regexes look for.
fn present_sheet(k: usize, i: usize, v: &Vocabulary, rng: &mut Rng) -> Vec<String> {
    let w = |r: usize| v.words[r].as_str();
    let mut lines = vec![
        format!(
            "{} {}, {} of this place for {} years.",
            FIRST[i],
            FAMILY[i % FAMILY.len()],
            &role(i)[4..],
            rng.between(3, 30)
        ),
        format!("summary: {} is {}.", FIRST[i], role(i)),
        v.text(rng, 8, 14),
        v.text(rng, 8, 14),
    ];
    lines.extend(match k {
        0 => vec![
            "mood: watchful".to_string(),
            "greed: 0.7".to_string(),
            "$if content.length > 0: $respond".to_string(),
            format!(
                "$if content.match(/\\b({}|{})\\b/) && self.greed > 0.5: keeps one eye on the coin box",
                w(0),
                w(1)
            ),
            "$if mentioned: answers to her name before anything else".to_string(),
            "$if time.is_night: speaks low, the room is full".to_string(),
        ],
        1 => vec![
            "chatty: true".to_string(),
            "$if random() < 0.5: $respond".to_string(),
            format!(
                "$if self.chatty && content.match(/\\b({}|{})\\b/): $respond",
                w(5),
                w(6)
            ),
            "$if mentioned: $respond".to_string(),
            format!(
                "$if content.includes(\"{}\"): hums under the breath",
                w(2)
            ),
        ],
        2 => vec![
            "$if mentioned: $respond".to_string(),
            "$if unread_count > 40: $respond".to_string(),
            format!(
                "$if has_fact(\"{}\") || content.match(/\\b{}\\b/i): looks up from the cards",
                w(7),
                w(3)
            ),
        ],
        _ => vec![
            "$respond false".to_string(),
            "$if mentioned && random() < 0.5: $respond true".to_string(),
            "$if response_ms > 600000: would rather be left alone".to_string(),
        ],
    });
    lines
}

fn edge(from: EntityId, to: EntityId, v: &Vocabulary, rng: &mut Rng) -> Edge {
    Edge {
        from,
        to,
        affinity: rng.signed(),
        trust: rng.signed(),
        summary: v.text(rng, 6, 12),
        knowledge: (0..2).map(|_| v.text(rng, 3, 6)).collect(),
        private_moments: vec![v.text(rng, 5, 8)],
        last_interaction: Some(START),
        imprints: Vec::new(),
        source: None,
    }
}

/// The rooms, the 50 entities, their places, their edges; `ids[0]` is the player and
/// `ids[1..5]` the characters with it.
fn genesis(first_id: u64, v: &Vocabulary, rng: &mut Rng) -> (Vec<Event>, Vec<EntityId>) {
    assert_eq!(FIRST.len(), ENTITIES, "a first name per entity");
    let mut next = first_id;
    let mut events = Vec::new();
    let slots = ["bar", "hearth", "long table", "window seat", "stairs"];
    let rooms: Vec<ContainerId> = (0..ROOMS)
        .map(|r| {
            let id = ContainerId(next);
            next += 1;
            events.push(Event::ContainerCreated {
                id,
                key: Some(format!("room-{r}")),
                name: if r == 0 {
                    "the common room of the Crooked Lantern".into()
                } else {
                    format!("room {r}")
                },
                facts: FactSheet(vec![v.text(rng, 10, 16)]),
                parent: None,
                slots: slots
                    .iter()
                    .map(|s| Slot {
                        name: (*s).into(),
                        capacity: None,
                    })
                    .collect(),
                properties: ContainerProperties {
                    moving: false,
                    public: true,
                    audible_range: 0,
                },
            });
            id
        })
        .collect();
    let ids: Vec<EntityId> = (next..next + ENTITIES as u64).map(EntityId).collect();
    for (i, id) in ids.iter().enumerate() {
        let facts = if i == 0 {
            vec![v.text(rng, 10, 16), v.text(rng, 10, 16)]
        } else if i < PER_ROOM {
            present_sheet(i - 1, i, v, rng)
        } else {
            vec![
                format!("summary: {} is {}.", FIRST[i], role(i)),
                v.text(rng, 10, 16),
                "$if mentioned: $respond".into(),
            ]
        };
        events.push(Event::EntityCreated {
            id: *id,
            key: Some(format!("e{i}")),
            name: format!("{} {}", FIRST[i], FAMILY[i % FAMILY.len()]),
            aliases: vec![FIRST[i].into(), role(i)],
            facts: FactSheet(facts),
            host_controlled: i == 0,
            state: EntityState {
                mood: Some(["wary", "tired", "curious", "amused"][i % 4].into()),
                goals: vec![v.text(rng, 4, 8)],
                status: None,
            },
        });
    }
    for (i, id) in ids.iter().enumerate() {
        events.push(Event::ActivityChanged {
            entity: *id,
            activity: Activity {
                position: Some(Position {
                    container: rooms[i / PER_ROOM],
                    slot: Some(slots[i % PER_ROOM].into()),
                }),
                posture: Some(["sitting", "standing", "leaning on the bar"][i % 3].into()),
                ..Activity::default()
            },
        });
    }
    for room in 0..ROOMS {
        let members = &ids[room * PER_ROOM..(room + 1) * PER_ROOM];
        for (a, from) in members.iter().enumerate() {
            for (b, to) in members.iter().enumerate() {
                // Every ordered pair among the present; two edges each elsewhere.
                if a != b && (room == 0 || (b + PER_ROOM - a) % PER_ROOM <= 2) {
                    events.push(Event::EdgeUpdated {
                        edge: edge(*from, *to, v, rng),
                    });
                }
            }
        }
    }
    (events, ids)
}

/// Appends `n` memories spread evenly over `owners`, created over the 1,000 game hours before
/// [`START`]; two of each owner's are pinned.
fn add_memories(engine: &mut Engine, owners: &[EntityId], n: usize, v: &Vocabulary, rng: &mut Rng) {
    let mut done = 0;
    while done < n {
        let first = engine.world().next_id();
        let batch = CHUNK.min(n - done);
        let events = (0..batch)
            .map(|i| {
                let k = done + i;
                let owner = owners[k % owners.len()];
                Event::MemoryAdded {
                    memory: Memory {
                        id: MemoryId(first + i as u64),
                        owner,
                        witnesses: WitnessSet::from_iter([owner]),
                        text: v.text(rng, 10, 40),
                        kind: if rng.below(5) == 0 {
                            MemoryKind::Reflection
                        } else {
                            MemoryKind::Utterance
                        },
                        significance: rng.unit(),
                        created: START - 1000 * HOUR + (k as i64) * 1000 * HOUR / n as i64,
                        last_accessed: None,
                        access_count: 0,
                        decay: Default::default(),
                        pinned: k < 2 * owners.len(),
                        embedding: None,
                        scene: None,
                        stability: 0.0,
                        summary: None,
                        feeling: None,
                        about: None,
                        sources: Vec::new(),
                    },
                }
            })
            .collect();
        engine.append(events).expect("memories");
        done += batch;
    }
}

// ---------------------------------------------------------------------------------------------
// Turns.

/// One round's input and the replies the instant generator gives, drawn before timing.
struct Script {
    text: String,
    replies: Vec<String>,
}

/// The input of round `i`: sometimes naming one of the characters (which decides who answers),
/// sometimes an absent one, from `first_absent` on (which activates lore).
fn script(i: usize, first_absent: usize, v: &Vocabulary) -> Script {
    let mut rng = Rng::new(0x7e57_0000 + i as u64);
    let mut text = String::new();
    match rng.below(10) {
        0..=2 => text.push_str(&format!("{}, ", FIRST[3])),
        3 => text.push_str(&format!("{}, ", FIRST[4])),
        _ => {}
    }
    text.push_str(&v.text(&mut rng, 3, 8));
    if rng.below(4) == 0 {
        let absent = rng.between(first_absent, ENTITIES - 1);
        text.push_str(&format!(" {} {}", FIRST[absent], v.text(&mut rng, 1, 4)));
    }
    text.push(if rng.below(2) == 0 { '?' } else { '.' });
    let replies = (0..PER_ROOM)
        .map(|_| {
            let mut r = v.text(&mut rng, 3, 9);
            if rng.below(5) == 0 {
                let absent = rng.between(first_absent, ENTITIES - 1);
                r.push_str(&format!(", {} {}", role(absent), v.text(&mut rng, 1, 4)));
            }
            r.push('.');
            r
        })
        .collect();
    Script { text, replies }
}

/// The clock of round `i` (rounds are 30 game seconds apart, after the warm-up).
fn clock(i: usize) -> Millis {
    START + 60_000 + i as Millis * 30_000
}

/// Wall and CPU samples of one phase.
#[derive(Default)]
struct Samples {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

impl Samples {
    fn push(&mut self, e: Elapsed) {
        self.wall.push(e.wall);
        self.cpu.push(e.cpu);
    }

    fn wall(&self) -> Latency {
        Latency::of(&self.wall)
    }

    fn cpu(&self) -> Latency {
        Latency::of(&self.cpu)
    }

    /// "p50 a p99 b max c ms | CPU p50 d p99 e ms (n)".
    fn line(&self) -> String {
        if self.wall.is_empty() {
            return "no samples".into();
        }
        let (w, c) = (self.wall(), self.cpu());
        format!(
            "p50 {} p99 {} mean {} max {} ms | CPU p50 {} p99 {} ms (n = {})",
            ms(w.p50),
            ms(w.p99),
            ms(w.mean),
            ms(w.max),
            ms(c.p50),
            ms(c.p99),
            w.n
        )
    }
}

fn plus(a: Elapsed, b: Elapsed) -> Elapsed {
    Elapsed {
        wall: a.wall + b.wall,
        cpu: a.cpu + b.cpu,
    }
}

/// The phases of every turn of one contender.
#[derive(Default)]
struct TurnSamples {
    /// `begin_turn_with`: input commit + response control.
    begin: Samples,
    /// Each `step()` that returned a prompt (recall, lore, assembly).
    prompt: Samples,
    /// All the prompt steps of a turn.
    prompts: Samples,
    /// Each `provide()`.
    provide: Samples,
    /// The `step()` that returned `Done`.
    done: Samples,
    /// `finish()`: the turn's commit.
    finish: Samples,
    /// The sum of the above: the turn without the model.
    turn: Samples,
    /// The turn by responder count.
    by_responders: [Samples; PER_ROOM],
    prompt_bytes: Vec<usize>,
    prompt_tokens: Vec<usize>,
    prompt_trimmed: usize,
}

/// Runs one turn on `engine`, answering each generation with the next of `replies`.
fn run_turn(
    engine: &mut Engine,
    input: TurnInput,
    options: TurnOptions,
    replies: &[String],
    out: &mut TurnSamples,
) -> TurnOutcome {
    let sw = Stopwatch::start();
    let mut turn = engine.begin_turn_with(input, options).expect("begin");
    let begin = sw.stop();
    let mut prompts = Elapsed::default();
    let mut total = begin;
    let mut n = 0;
    loop {
        let sw = Stopwatch::start();
        let step = turn.step().expect("step");
        let e = sw.stop();
        total = plus(total, e);
        match step {
            Step::Generate(request) => {
                out.prompt.push(e);
                prompts = plus(prompts, e);
                // The instant generator: a text drawn before the turn.
                let result = GenerateResult::text(replies[n % replies.len()].clone());
                n += 1;
                drop(request);
                let sw = Stopwatch::start();
                turn.provide(result).expect("provide");
                let e = sw.stop();
                out.provide.push(e);
                total = plus(total, e);
            }
            Step::Done => {
                out.done.push(e);
                break;
            }
            Step::Embed(_) => unreachable!("no semantic recall in this bench"),
            Step::Act(_) => unreachable!("no host actions in this bench"),
        }
    }
    let sw = Stopwatch::start();
    let outcome = turn.finish().expect("finish");
    let finish = sw.stop();
    total = plus(total, finish);
    out.begin.push(begin);
    out.prompts.push(prompts);
    out.finish.push(finish);
    out.turn.push(total);
    out.by_responders[outcome.prompts.len().min(PER_ROOM - 1)].push(total);
    for p in &outcome.prompts {
        out.prompt_bytes.push(p.text().len());
        out.prompt_tokens.push(p.tokens);
        out.prompt_trimmed += p.trimmed.len();
    }
    outcome
}

/// The phases alone, through the public API.
#[derive(Default)]
struct PhaseSamples {
    /// `World::decide` for the four characters present, as `begin_turn` runs it.
    response_control: Samples,
    /// `Engine::recall` as the prompt step asks for it (k = `memories_k`), for the first
    /// responder.
    recall: Samples,
    /// `recall` again, right after: warm caches, as inside `inspect_prompt`.
    recall_warm: Samples,
    /// `Engine::always_loaded`: its pinned memories.
    pinned: Samples,
    /// `LoreIndex::scan` of its lore window.
    lore: Samples,
    /// `Engine::inspect_prompt`: a whole prompt (recall, pinned, lore, assembly).
    inspect: Samples,
    /// `inspect − recall (warm) − pinned − lore`, per round: assembly and the rest.
    assembly: Samples,
    window_bytes: Vec<usize>,
}

fn minus(a: Elapsed, b: Elapsed) -> Elapsed {
    Elapsed {
        wall: a.wall.saturating_sub(b.wall),
        cpu: a.cpu.saturating_sub(b.cpu),
    }
}

/// What [`time_phases`] needs besides the engine.
struct PhaseInput<'a> {
    lore: &'a LoreIndex,
    /// The player, then the four characters present.
    ids: &'a [EntityId],
    speaker: EntityId,
    text: &'a str,
    now: Millis,
    options: &'a TurnOptions,
}

fn time_phases(engine: &mut Engine, input: PhaseInput<'_>, out: &mut PhaseSamples) {
    let PhaseInput {
        lore,
        ids,
        speaker,
        text,
        now,
        options,
    } = input;
    // Response control: the four characters decide on `text`, as the machine does at begin.
    let world = engine.world().clone();
    let author = world.entity(ids[0]).map(|e| e.name.clone()).unwrap();
    let seed = world.meta().map_or(0, |m| m.settings.seed);
    let sw = Stopwatch::start();
    for &entity in &ids[1..PER_ROOM] {
        let speech = world.speech(entity);
        let message = Message {
            content: text.to_string(),
            author: author.clone(),
            mentioned: Some(world.mentions(entity, text)),
            response_ms: speech.last_spoke.map(|t| (now - t) as f64),
            retry_ms: 0.0,
            unread_count: speech.unread,
            interaction_type: None,
            hour: None,
            drives: rp_core::drives::values(&world, entity, now),
        };
        let mut draws = SeededDraws::new(seed, world.draws_taken());
        black_box(world.decide(entity, &message, &mut draws).expect("decide"));
    }
    out.response_control.push(sw.stop());

    // Recall as the prompt step runs it: the top `memories_k` (the step leaves the lines still
    // shown in the dialogue section out of the ranking, which costs nothing measurable).
    let heard = rp_core::turn::prompt::witnessed(&world, speaker);
    let mut recall = options.prompt.recall.clone();
    recall.k = options.prompt.memories_k;
    let sw = Stopwatch::start();
    black_box(engine.recall(speaker, text, now, &recall).expect("recall"));
    out.recall.push(sw.stop());
    // Again, warm (as it runs inside `inspect_prompt` below, after these).
    let sw = Stopwatch::start();
    black_box(engine.recall(speaker, text, now, &recall).expect("recall"));
    let r = sw.stop();
    out.recall_warm.push(r);

    // Once untimed first: the scan inside `inspect_prompt` below runs as warm as this one,
    // so the difference of the two is the rest of the prompt.
    black_box(engine.always_loaded(speaker, 0).expect("pinned"));
    let sw = Stopwatch::start();
    black_box(engine.always_loaded(speaker, 0).expect("pinned"));
    let p = sw.stop();
    out.pinned.push(p);

    let from = heard.len().saturating_sub(options.prompt.lore_lines);
    let window = heard[from..]
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    out.window_bytes.push(window.len());
    let sw = Stopwatch::start();
    black_box(lore.scan(&window));
    let l = sw.stop();
    out.lore.push(l);

    let sw = Stopwatch::start();
    black_box(
        engine
            .inspect_prompt(speaker, Some(text), now, &options.prompt)
            .expect("inspect"),
    );
    let i = sw.stop();
    out.inspect.push(i);
    out.assembly.push(minus(minus(minus(i, r), p), l));
}

// ---------------------------------------------------------------------------------------------
// Lore: 1,000 entries over a 64 KB window.

/// First syllables of the given names of lore entries.
static GIVEN_A: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "Al Bran Cor Dun El Fen Gar Hal Is Jor Kel Lor Mor Nor Or Pel Quen Ros Sar Tor Ul Var \
     Wy Yr"
        .split_whitespace()
        .collect()
});
/// Second syllables of the given names of lore entries.
static GIVEN_B: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "ric wen dan mir os ith ad en gar is ward ett bryn iel uin"
        .split_whitespace()
        .collect()
});
/// Family names of lore entries.
static FAMILIES: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "Ashford Blackwater Cole Dunmere Everly Fairholm Greaves Hawkins Ironside Jessop \
     Kettering Longmire Marlow Northcott Oakley Penrose Redfern Stroud Tallis Underhill"
        .split_whitespace()
        .collect()
});
/// Epithets of lore entries ("the grey heron"): adjectives.
static ADJECTIVES: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "grey salt drowned black silver hollow broken iron red quiet sunken white crooked \
     burning lost old bitter green high last"
        .split_whitespace()
        .collect()
});
/// Epithets of lore entries: nouns.
static NOUNS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "heron tower bell lantern chapel mill ferry road market gate bridge well harbour \
     marsh crown blade ledger compact shrine fleet lighthouse quarry orchard barrow \
     causeway watch guild charter seal anchor beacon cistern granary manor abbey pier \
     wharf kiln forge tannery weir sluice dyke fen moor tor cairn henge grove hythe"
        .split_whitespace()
        .collect()
});
/// Prose around the lore keys.
static FILLER: LazyLock<Vec<&str>> = LazyLock::new(|| {
    "the a and of to in was that he she they it for on with as at by from but not had \
     were said one all would there their what so up out if about who them then when could \
     into only over night rain wind door ale coin boat water fire light road hands voice \
     story letter debt storm tide shore cart horse bread cold warm slowly quietly again \
     never always before after under behind across laughed whispered remembered watched \
     waited promised carried lost found opened closed heard knew thought asked told left \
     came went still long little old young dark bright heavy wet tired quiet loud \
     Holloway Tomlin Aldermen Corbett"
        .split_whitespace()
        .collect()
});

/// 1,000 entries (or `n`): a name, the given name alone and an epithet ("the grey heron").
fn lore_entries(n: usize) -> Vec<(LoreEntry, Vec<String>)> {
    (0..n)
        .map(|i| {
            let given = format!(
                "{}{}",
                GIVEN_A[i % GIVEN_A.len()],
                GIVEN_B[(i / GIVEN_A.len()) % GIVEN_B.len()]
            );
            let name = format!("{given} {}", FAMILIES[(i * 7) % FAMILIES.len()]);
            let epithet = format!(
                "the {} {}",
                ADJECTIVES[i % ADJECTIVES.len()],
                NOUNS[(i / ADJECTIVES.len()) % NOUNS.len()]
            );
            (
                LoreEntry {
                    entity: EntityId(1_000 + i as u64),
                    name: name.clone(),
                    summary: format!("{name}, known as {epithet}, keeps to the old roads."),
                },
                vec![name, given, epithet],
            )
        })
        .collect()
}

/// About `bytes` of prose with a key of `entries` every 100 words on average (in its case, or
/// lower-cased), and near misses (a given name inside a longer word) every 200.
fn lore_window(entries: &[(LoreEntry, Vec<String>)], bytes: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut s = String::with_capacity(bytes + 64);
    let mut sentence = 0;
    while s.len() < bytes {
        let r = rng.below(200);
        let w = if r < 2 {
            let (_, keys) = rng.pick(entries);
            let k = rng.pick(keys);
            if rng.below(3) == 0 {
                k.to_lowercase()
            } else {
                k.clone()
            }
        } else if r == 2 {
            let (_, keys) = rng.pick(entries);
            format!("{}son", keys[1])
        } else {
            (*rng.pick(&FILLER)).to_string()
        };
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&w);
        sentence += 1;
        if sentence >= rng.between(8, 20) {
            s.push_str(if rng.below(3) == 0 { ".\n" } else { "." });
            sentence = 0;
        }
    }
    s.truncate(bytes);
    while !s.is_char_boundary(s.len()) {
        s.pop();
    }
    s
}

fn lore_bench() {
    let n = scaled(1_000, 100);
    let bytes = scaled(64 * 1024, 8 * 1024);
    let entries = lore_entries(n);
    let mut builds = Samples::default();
    let mut index = None;
    for _ in 0..scaled(20, 3) {
        let e = entries.clone();
        let sw = Stopwatch::start();
        let ix = LoreIndex::from_entries(e);
        builds.push(sw.stop());
        index = Some(ix);
    }
    let index = index.expect("built");
    report(format!(
        "lore: LoreIndex::from_entries of {n} entries ({} keys: name, given name, epithet): {}",
        index.key_count(),
        builds.line()
    ));
    let windows: Vec<String> = (0..8)
        .map(|i| lore_window(&entries, bytes, 0x10fe + i))
        .collect();
    let mut scans = Samples::default();
    let mut hits = 0usize;
    let rounds = scaled(50, 3);
    for _ in 0..rounds {
        for w in &windows {
            let sw = Stopwatch::start();
            let found = black_box(index.scan(black_box(w)));
            scans.push(sw.stop());
            hits += found.len();
        }
    }
    let l = scans.wall();
    report(format!(
        "lore: scan of a {} byte window ({} windows, {:.0} entries activated per scan): {} | {:.0} MB/s at p50 (target p50 <= 1 ms)",
        windows[0].len(),
        windows.len(),
        hits as f64 / (rounds * windows.len()) as f64,
        scans.line(),
        windows[0].len() as f64 / l.p50.as_secs_f64() / 1e6
    ));
}

// ---------------------------------------------------------------------------------------------

fn open(path: &Path, durability: Durability) -> Engine {
    Engine::open_with(
        path,
        EngineOptions {
            durability,
            ..EngineOptions::default()
        },
    )
    .expect("open the save")
}

/// Writes the save at `path`: the world of [`genesis`] (the same in every save: its generator
/// starts from the same seed), `n` memories, and one snapshot at the head. Returns the entities and the number of memories.
fn build_save(path: &Path, n: usize, v: &Vocabulary) -> (Vec<EntityId>, usize) {
    let mut rng = Rng::new(0x7e57_5eed);
    let sw = Stopwatch::start();
    let mut engine = Engine::create_with(path, WORLD_NAME, START, setup_options()).expect("create");
    let (events, ids) = genesis(engine.world().next_id(), v, &mut rng);
    engine.append(events).expect("genesis");
    add_memories(&mut engine, &ids, n, v, &mut rng);
    engine.flush().expect("flush");
    let world = engine.world().clone();
    drop(engine);
    let built = sw.stop();
    let sw = Stopwatch::start();
    let snapshot = add_snapshots(path, &[(world.seq(), &world)])[0];
    let snapped = sw.stop();
    let memories: usize = ids.iter().map(|id| world.memories_of(*id).count()).sum();
    report(format!(
        "save: {ENTITIES} entities in {ROOMS} rooms of {PER_ROOM}, {memories} memories ({} per entity, vocabulary {}); appended in {:.1} s, snapshot of {:.1} MB written in {:.1} s, file {:.0} MB",
        memories / ENTITIES,
        v.words.len(),
        built.wall.as_secs_f64(),
        snapshot as f64 / 1e6,
        snapped.wall.as_secs_f64(),
        file_size(path) as f64 / 1e6
    ));
    (ids, memories)
}

/// Builds the memory index of `engine` (its first recall), reporting how long it took.
fn build_index(engine: &mut Engine, speaker: EntityId, memories: usize, v: &Vocabulary) {
    let (_, took) = rp_benches::time(|| {
        engine
            .recall(speaker, &v.words[0], START, &RecallOptions::default())
            .expect("recall")
    });
    report(format!(
        "first recall (builds the memory index of {memories} memories): {:.1} s",
        took.as_secs_f64()
    ));
}

fn report_turns(name: &str, t: &TurnSamples) {
    let rows: [(&str, &Samples); 7] = [
        ("turn (engine calls summed)", &t.turn),
        ("  begin_turn_with", &t.begin),
        ("  step -> Generate", &t.prompt),
        ("  prompt steps per turn", &t.prompts),
        ("  provide", &t.provide),
        ("  step -> Done", &t.done),
        ("  finish", &t.finish),
    ];
    for (what, samples) in rows {
        report(format!("{name:<9} {what:<28} {}", samples.line()));
    }
    for (k, s) in t.by_responders.iter().enumerate() {
        if !s.wall.is_empty() {
            let what = format!("  turns with {k} responders");
            report(format!("{name:<9} {what:<28} {}", s.line()));
        }
    }
}

fn report_phases(name: &str, p: &PhaseSamples, options: &TurnOptions) {
    report(format!(
        "{name}: phases alone (public API, the first responder; lore window {:.0} bytes on average):",
        p.window_bytes.iter().sum::<usize>() as f64 / p.window_bytes.len().max(1) as f64
    ));
    let recall = format!(
        "Engine::recall (k = {}, as asked)",
        options.prompt.memories_k
    );
    let rows: [(&str, &Samples); 7] = [
        ("response control, 4 decisions", &p.response_control),
        (&recall, &p.recall),
        ("the same again (warm)", &p.recall_warm),
        ("Engine::always_loaded", &p.pinned),
        ("LoreIndex::scan (50 entities)", &p.lore),
        ("Engine::inspect_prompt", &p.inspect),
        ("inspect - warm recall - pinned - lore", &p.assembly),
    ];
    for (what, samples) in rows {
        report(format!("  {what:<37} {}", samples.line()));
    }
}

fn main() {
    report(format!("load average before {}", loadavg()));
    lore_bench();

    let n_memories = scaled(1_000_000, 5_000);
    let n_twin = 1_000;
    let rounds = scaled(1_000, 12);
    let warm_up = scaled(40, 8);
    let v = Vocabulary::new(scaled(20_000, 2_000));

    // The save (1M memories) in three copies, and its twin with 1,000 memories.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("eventual.rp");
    let (ids, memories) = build_save(&path, n_memories, &v);
    let durable_path = dir.path().join("immediate.rp");
    let floor_path = dir.path().join("floor.rp");
    std::fs::copy(&path, &durable_path).expect("copy");
    std::fs::copy(&path, &floor_path).expect("copy");
    let twin_path = dir.path().join("twin.rp");
    let (twin_ids, twin_memories) = build_save(&twin_path, n_twin, &v);
    assert_eq!(ids, twin_ids, "the twin has the same entities");

    let (mut eventual, open_took) = rp_benches::time(|| open(&path, Durability::Eventual));
    report(format!(
        "open from the snapshot: {:.2} s",
        open_took.as_secs_f64()
    ));
    let mut immediate = open(&durable_path, Durability::Immediate);
    let mut floor = open(&floor_path, Durability::Immediate);
    let mut twin = open(&twin_path, Durability::Eventual);
    let mut disk = FsyncFloor::create(&dir.path().join("disk.bin"), 64 << 20);
    build_index(&mut eventual, ids[1], memories, &v);
    build_index(&mut immediate, ids[1], memories, &v);
    build_index(&mut twin, ids[1], twin_memories, &v);
    let lore = LoreIndex::build(eventual.world());
    // The prompts stay in the outcome: the bench reports their size.
    let options = TurnOptions {
        outcome_prompts: true,
        ..TurnOptions::default()
    };

    // Warm-up: fills the dialogue window (64 lines) so prompts have their full size.
    let mut ignored = TurnSamples::default();
    for i in 0..warm_up {
        let s = script(1_000_000 + i, PER_ROOM, &v);
        let now = START + 1_000 * (i as Millis + 1);
        for e in [&mut eventual, &mut immediate, &mut twin] {
            let input = TurnInput::say(ids[0], s.text.clone(), now);
            run_turn(e, input, options.clone(), &s.replies, &mut ignored);
        }
    }

    report(format!("timed rounds start (load average {})", loadavg()));
    let mut ev = TurnSamples::default();
    let mut im = TurnSamples::default();
    let mut tw = TurnSamples::default();
    let mut floor_s = Samples::default();
    let mut disk_s = Samples::default();
    let mut phases = PhaseSamples::default();
    let mut twin_phases = PhaseSamples::default();
    let mut floor_now = START;
    let mut same = 0usize;
    const CONTENDERS: usize = 5;
    for i in 0..rounds {
        let s = script(i, PER_ROOM, &v);
        let now = clock(i);
        let mut speaker = None;
        let mut replies = [0usize; 3];
        for j in 0..CONTENDERS {
            let input = TurnInput::say(ids[0], s.text.clone(), now);
            match (i + j) % CONTENDERS {
                0 => {
                    let o = run_turn(&mut eventual, input, options.clone(), &s.replies, &mut ev);
                    if i == 0
                        && std::env::var_os("RP_TURN_SHOW_PROMPT").is_some()
                        && let Some(p) = o.prompts.first()
                    {
                        println!("{}", p.text());
                    }
                    speaker = o.replies.first().map(|r| r.speaker);
                    replies[0] = o.replies.len();
                }
                1 => {
                    let o = run_turn(&mut immediate, input, options.clone(), &s.replies, &mut im);
                    replies[1] = o.replies.len();
                }
                2 => {
                    let o = run_turn(&mut twin, input, options.clone(), &s.replies, &mut tw);
                    replies[2] = o.replies.len();
                }
                3 => {
                    floor_now += 1;
                    let event = vec![Event::TimeAdvanced { to: floor_now }];
                    let sw = Stopwatch::start();
                    floor.append(event).expect("append");
                    floor_s.push(sw.stop());
                }
                _ => {
                    let bytes = [encode_event(&Event::TimeAdvanced { to: floor_now })];
                    let sw = Stopwatch::start();
                    disk.append(&bytes);
                    disk_s.push(sw.stop());
                }
            }
        }
        same += usize::from(replies[0] == replies[1] && replies[1] == replies[2]);
        let speaker = speaker.unwrap_or(ids[1]);
        for (engine, out) in [(&mut eventual, &mut phases), (&mut twin, &mut twin_phases)] {
            let input = PhaseInput {
                lore: &lore,
                ids: &ids,
                speaker,
                text: &s.text,
                now,
                options: &options,
            };
            time_phases(engine, input, out);
        }
    }
    report(format!("timed rounds end (load average {})", loadavg()));
    assert_eq!(same, rounds, "every engine must see the same turns");

    // Results.
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
    let (lo, hi) = (
        ev.prompt_bytes.iter().min().copied().unwrap_or(0),
        ev.prompt_bytes.iter().max().copied().unwrap_or(0),
    );
    let n = ev.prompt_bytes.len() as f64 / rounds as f64;
    report(format!(
        "{rounds} rounds; prompts: {} built, {:.0} bytes on average (min {lo}, max {hi}), {:.0} tokens (4 chars/token), {} pieces trimmed; responders per turn {n:.2} on average, turns with 0/1/2/3/4 responders: {:?}",
        ev.prompt_bytes.len(),
        mean(&ev.prompt_bytes),
        mean(&ev.prompt_tokens),
        ev.prompt_trimmed,
        ev.by_responders
            .iter()
            .map(|s| s.wall.len())
            .collect::<Vec<_>>()
    ));
    report_turns("eventual", &ev);
    report_turns("immediate", &im);
    report_turns("twin", &tw);
    report(format!(
        "floor     Engine::append(1 event), Immediate {}",
        floor_s.line()
    ));
    report(format!(
        "disk      pwrite + fdatasync                {}",
        disk_s.line()
    ));
    report_phases("eventual", &phases, &options);
    report_phases("twin (1,000 memories)", &twin_phases, &options);

    // The targets, what the two durable commits add, and the turn without the scan of the
    // speaker's memories for pinned ones (`Engine::always_loaded`, in every prompt step):
    // the twin's turn plus what recall costs more at 1M memories.
    let wall = |s: &Samples| s.wall().p50.as_secs_f64() * 1e3;
    let cpu = |s: &Samples| s.cpu().p50.as_secs_f64() * 1e3;
    report(format!(
        "eventual turn p50 {:.3} ms (target <= 2.5 ms) | immediate p50 - floor p50 {:+.3} ms (target <= 2 ms); - 2 x floor {:+.3} ms; - disk {:+.3} ms",
        wall(&ev.turn),
        wall(&im.turn) - wall(&floor_s),
        wall(&im.turn) - 2.0 * wall(&floor_s),
        wall(&im.turn) - wall(&disk_s),
    ));
    report(format!(
        "durable commits over eventual at p50: begin_turn_with {:+.3} ms, finish {:+.3} ms (floor p50 {:.3} ms, disk p50 {:.3} ms)",
        wall(&im.begin) - wall(&ev.begin),
        wall(&im.finish) - wall(&ev.finish),
        wall(&floor_s),
        wall(&disk_s)
    ));
    // The turn again, as the sum of its phases timed alone (a cross-check), and what the
    // 1M memories add over the twin's 1,000.
    let summed = |p50: &dyn Fn(&Samples) -> f64| {
        p50(&ev.begin)
            + n * (p50(&phases.recall)
                + p50(&phases.pinned)
                + p50(&phases.lore)
                + p50(&phases.assembly)
                + p50(&ev.provide))
            + p50(&ev.finish)
    };
    report(format!(
        "sum of the phases alone: begin + {n:.2} x (recall + always_loaded + lore + assembly + provide) + finish = {:.3} ms wall, {:.3} ms CPU (the turn: {:.3}, {:.3})",
        summed(&wall),
        summed(&cpu),
        wall(&ev.turn),
        cpu(&ev.turn)
    ));
    report(format!(
        "{memories} memories over {twin_memories} (p50 wall): turn {:+.3} ms, prompt step {:+.3} ms, recall as the step asks {:+.3} ms, assembly {:+.3} ms, finish {:+.3} ms",
        wall(&ev.turn) - wall(&tw.turn),
        wall(&ev.prompt) - wall(&tw.prompt),
        wall(&phases.recall) - wall(&twin_phases.recall),
        wall(&phases.assembly) - wall(&twin_phases.assembly),
        wall(&ev.finish) - wall(&tw.finish),
    ));
    report(format!("load average after {}", loadavg()));
}
