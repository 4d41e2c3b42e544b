//! Memories and retrieval: a speaker recalls only its own memories, the best first; new ones
//! are found at once; rewinds and branch switches take them away and bring them back; what
//! a player types is only ever words.

use proptest::prelude::*;
use rp_core::memory::{NewMemory, RecallOptions, RecallWeights, Recalled};
use rp_core::{Engine, EntityId, ErrorKind, Event, MemoryId, MemoryKind};

fn entity(engine: &mut Engine, name: &str) -> EntityId {
    let id = EntityId(engine.world().next_id());
    engine
        .append(vec![Event::EntityCreated {
            id,
            key: None,
            name: name.into(),
            aliases: vec![],
            facts: Default::default(),
            host_controlled: false,
            state: Default::default(),
        }])
        .expect("entity");
    id
}

struct Tavern {
    engine: Engine,
    mira: EntityId,
    wren: EntityId,
    oskar: EntityId,
}

fn tavern() -> Tavern {
    let mut engine = Engine::in_memory("The Crooked Lantern", 0).expect("engine");
    let mira = entity(&mut engine, "Mira");
    let wren = entity(&mut engine, "Wren");
    let oskar = entity(&mut engine, "Oskar");
    Tavern {
        engine,
        mira,
        wren,
        oskar,
    }
}

fn remember(engine: &mut Engine, owner: EntityId, text: &str, significance: f64) -> MemoryId {
    engine
        .add_memory(NewMemory {
            significance,
            ..NewMemory::new(owner, text)
        })
        .expect("memory")
}

fn ids(found: &[Recalled]) -> Vec<MemoryId> {
    found.iter().map(|r| r.id).collect()
}

fn relevance_only() -> RecallOptions {
    RecallOptions {
        weights: RecallWeights {
            relevance: 1.0,
            retention: 0.0,
            significance: 0.0,
        },
        ..RecallOptions::default()
    }
}

#[test]
fn a_speaker_recalls_its_own_memories_best_first() {
    let mut t = tavern();
    let e = &mut t.engine;
    let ale = remember(e, t.mira, "Wren ordered a pint of the dark ale", 0.3);
    let ship = remember(e, t.mira, "A ship came in from the south", 0.3);
    let ale_ale = remember(e, t.mira, "The ale ran out; more ale is coming", 0.3);
    let wrens = remember(e, t.wren, "Mira poured me the dark ale", 0.9);

    let found = e
        .recall(t.mira, "dark ale", 0, &relevance_only())
        .expect("recall");
    assert_eq!(ids(&found), vec![ale, ale_ale], "{found:?}");
    assert!(found[0].relevance == 1.0 && found[1].relevance < 1.0);
    assert!(!ids(&found).contains(&ship) && !ids(&found).contains(&wrens));

    // The exact text of a memory Mira does not hold finds nothing of it.
    let found = e
        .recall(
            t.mira,
            "Mira poured me the dark ale",
            0,
            &RecallOptions::default(),
        )
        .expect("recall");
    assert!(!ids(&found).contains(&wrens), "{found:?}");
    // Oskar holds no memories: whatever he asks, nothing.
    for q in ["Mira poured me the dark ale", "ale", ""] {
        assert!(
            e.recall(t.oskar, q, 0, &RecallOptions::default())
                .expect("recall")
                .is_empty()
        );
    }
}

#[test]
fn retention_and_significance_weigh_in() {
    let mut t = tavern();
    let e = &mut t.engine;
    let hour = 3_600_000;
    let old = e
        .add_memory(NewMemory {
            created: Some(0),
            significance: 0.1,
            ..NewMemory::new(t.mira, "the bard sang of the sea")
        })
        .expect("memory");
    let new = e
        .add_memory(NewMemory {
            created: Some(500 * hour),
            significance: 0.1,
            ..NewMemory::new(t.mira, "the bard sang of the sea again")
        })
        .expect("memory");
    let grave = e
        .add_memory(NewMemory {
            created: Some(0),
            significance: 1.0,
            ..NewMemory::new(t.mira, "the bard owes me forty silver")
        })
        .expect("memory");
    let now = 500 * hour;
    let retention_only = RecallOptions {
        weights: RecallWeights {
            relevance: 0.0,
            retention: 1.0,
            significance: 0.0,
        },
        ..RecallOptions::default()
    };
    let found = e
        .recall(t.mira, "bard", now, &retention_only)
        .expect("recall");
    assert_eq!(found[0].id, new);
    assert!((found[0].retention - 1.0).abs() < 1e-12);
    // 500 hours on FSRS's curve, from the stability significance 0.1 gives.
    let base = rp_core::DriveSettings::default().memory_stability_ms();
    let s = rp_core::retention::initial_stability(base, 0.1);
    let expected = (1.0 + 19.0 / 81.0 * (500 * hour) as f64 / s).powf(-0.5);
    let old_one = found.iter().find(|r| r.id == old).expect("old");
    assert!((old_one.retention - expected).abs() < 1e-12, "{old_one:?}");
    assert_eq!(e.retention(old, now).expect("retention"), old_one.retention);
    // Significance makes a memory last: the grave one, as old, is better kept.
    let grave_one = found.iter().find(|r| r.id == grave).expect("grave");
    assert!(grave_one.retention > old_one.retention);

    let significance_only = RecallOptions {
        weights: RecallWeights {
            relevance: 0.0,
            retention: 0.0,
            significance: 1.0,
        },
        ..RecallOptions::default()
    };
    let found = e
        .recall(t.mira, "bard", now, &significance_only)
        .expect("recall");
    assert_eq!(found[0].id, grave);

    // Recalling reinforces: the old memory, recalled now, is as fresh as the new one.
    e.mark_recalled(&[old], now).expect("mark");
    let m = e.world().memory(old).expect("old");
    assert_eq!((m.last_accessed, m.access_count), (Some(now), 1));
    assert!(m.stability > s, "a recall raises the stability");
    let found = e
        .recall(t.mira, "bard sea", now, &retention_only)
        .expect("recall");
    let r = |id| found.iter().find(|r| r.id == id).expect("found").retention;
    assert_eq!(r(old), r(new));
}

#[test]
fn a_reinforced_old_memory_beats_a_weak_recent_one() {
    let mut t = tavern();
    let e = &mut t.engine;
    let day = 24 * 3_600_000;
    // Formed 60 days ago and recalled now and then, spaced out, for a month.
    let old = e
        .add_memory(NewMemory {
            created: Some(0),
            significance: 0.5,
            ..NewMemory::new(t.mira, "the bard sang of the sea")
        })
        .expect("memory");
    for at in [1, 3, 7, 15, 30] {
        e.mark_recalled(&[old], at * day).expect("mark");
    }
    // Formed three days ago, of little weight, never recalled.
    let recent = e
        .add_memory(NewMemory {
            created: Some(57 * day),
            significance: 0.5,
            ..NewMemory::new(t.mira, "the bard sang of the hills")
        })
        .expect("memory");
    let now = 60 * day;
    let found = e
        .recall(t.mira, "bard sang", now, &RecallOptions::default())
        .expect("recall");
    assert_eq!(ids(&found), vec![old, recent], "{found:?}");
    let r = |id| found.iter().find(|r| r.id == id).expect("found");
    assert_eq!(r(old).relevance, r(recent).relevance);
    assert!(
        r(old).retention > 0.9 && r(recent).retention < 0.9,
        "{found:?}"
    );
}

#[test]
fn reinforcement_needs_spacing_and_recalls_in_one_record_are_independent() {
    let mut t = tavern();
    let e = &mut t.engine;
    let hour = 3_600_000;
    let memory = |e: &mut Engine, text: &str| {
        e.add_memory(NewMemory {
            created: Some(0),
            significance: 0.5,
            ..NewMemory::new(t.mira, text)
        })
        .expect("memory")
    };
    let massed = memory(e, "the bard sang of the sea");
    let spaced = memory(e, "the bard sang of the hills");
    let other = memory(e, "the bard sang of the plains");
    // Five recalls within a minute barely add to five spaced a day apart.
    for k in 0..5 {
        e.mark_recalled(&[massed], 24 * hour + k * 10_000)
            .expect("mark");
        e.mark_recalled(&[spaced], (k + 1) * 24 * hour)
            .expect("mark");
    }
    let (a, b) = (
        e.world().memory(massed).unwrap(),
        e.world().memory(spaced).unwrap(),
    );
    assert_eq!((a.access_count, b.access_count), (5, 5));
    assert!(
        b.stability > 3.0 * a.stability,
        "{} vs {}",
        b.stability,
        a.stability
    );
    // The order of the ids in one record changes nothing.
    let mut forward = e.world().clone();
    let mut backward = e.world().clone();
    forward
        .apply(&Event::MemoriesRecalled {
            ids: vec![massed, spaced, other],
            at: 300 * hour,
        })
        .expect("recall");
    backward
        .apply(&Event::MemoriesRecalled {
            ids: vec![other, spaced, massed],
            at: 300 * hour,
        })
        .expect("recall");
    assert_eq!(forward.to_bytes(), backward.to_bytes());
}

#[test]
fn a_new_memory_is_found_at_once_and_a_removed_one_is_gone() {
    let mut t = tavern();
    let e = &mut t.engine;
    remember(e, t.mira, "the cellar door sticks", 0.5);
    assert_eq!(
        e.recall(t.mira, "lantern", 0, &RecallOptions::default())
            .unwrap()
            .len(),
        0
    );
    let lantern = remember(e, t.mira, "a blue lantern hangs by the door", 0.5);
    let found = e
        .recall(t.mira, "lantern", 0, &RecallOptions::default())
        .unwrap();
    assert_eq!(ids(&found), vec![lantern]);
    e.remove_memory(lantern).expect("remove");
    assert!(
        e.recall(t.mira, "lantern", 0, &RecallOptions::default())
            .unwrap()
            .is_empty()
    );
    // Recall marks need memories that exist, each once.
    assert_eq!(
        e.mark_recalled(&[lantern], 0).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let door = remember(e, t.mira, "the door", 0.5);
    assert_eq!(
        e.mark_recalled(&[door, door], 0).unwrap_err().kind(),
        ErrorKind::Invalid
    );
    let head = e.head();
    assert_eq!(e.mark_recalled(&[], 0).unwrap(), head);
}

#[test]
fn rewinding_takes_memories_away_and_switching_back_returns_them() {
    let mut t = tavern();
    let e = &mut t.engine;
    remember(e, t.mira, "the harbour bell rang twice", 0.5);
    let before = e.head();
    let secret = remember(e, t.mira, "Wren hid a letter under the harbour stones", 0.5);
    let q = "harbour letter";
    assert!(ids(&e.recall(t.mira, q, 0, &RecallOptions::default()).unwrap()).contains(&secret));

    let tail = e.rewind(before).expect("rewind").expect("a tail branch");
    let found = e.recall(t.mira, q, 0, &RecallOptions::default()).unwrap();
    assert!(!ids(&found).contains(&secret), "{found:?}");
    assert_eq!(found.len(), 1);

    // A new memory on the new timeline, with the id the abandoned one had.
    let other = remember(e, t.mira, "the harbour was quiet", 0.5);
    assert_eq!(other, secret, "ids are per timeline");
    let found = e
        .recall(t.mira, "letter", 0, &RecallOptions::default())
        .unwrap();
    assert!(found.is_empty(), "{found:?}");

    e.switch_branch(&tail).expect("switch");
    let found = e
        .recall(t.mira, "letter", 0, &RecallOptions::default())
        .unwrap();
    assert_eq!(ids(&found), vec![secret]);
    assert_eq!(
        e.world().memory(secret).unwrap().text,
        "Wren hid a letter under the harbour stones"
    );
}

#[test]
fn what_a_player_types_is_only_words() {
    let mut t = tavern();
    let e = &mut t.engine;
    let m = remember(
        e,
        t.mira,
        "AND then the \"Duke\" said: (nothing) OR maybe NOT",
        0.5,
    );
    let huge = "ale ".repeat(256 * 1024) + "duke";
    for q in [
        "\"",
        "\"duke",
        "said:",
        "title:duke",
        "(nothing",
        "AND",
        "NOT duke",
        "duke~2",
        "du*",
        "+duke -said",
        "[a TO z]",
        "\\",
        "\u{0}",
        "😀 duke",
        "",
        "   ",
        huge.as_str(),
    ] {
        let found = e
            .recall(t.mira, q, 0, &RecallOptions::default())
            .unwrap_or_else(|err| panic!("{q:.40?}: {err}"));
        assert!(found.iter().all(|r| r.id == m), "{q:.40?}");
    }
    // Words are matched as words, case aside.
    let found = e.recall(t.mira, "DUKE", 0, &relevance_only()).unwrap();
    assert_eq!(ids(&found), vec![m]);
}

#[test]
fn bad_options_and_unknown_speakers_are_refused() {
    let mut t = tavern();
    let e = &mut t.engine;
    for bad in [
        RecallOptions {
            k: 0,
            ..RecallOptions::default()
        },
        RecallOptions {
            candidates: 0,
            ..RecallOptions::default()
        },
        RecallOptions {
            weights: RecallWeights {
                retention: f64::NAN,
                ..RecallWeights::default()
            },
            ..RecallOptions::default()
        },
    ] {
        let err = e.recall(t.mira, "ale", 0, &bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{bad:?}");
    }
    let err = e
        .recall(EntityId(999), "ale", 0, &RecallOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    // Bad memories change nothing.
    let head = e.head();
    for bad in [
        NewMemory::new(EntityId(999), "x"),
        NewMemory::new(t.mira, "   "),
        NewMemory {
            significance: 1.5,
            ..NewMemory::new(t.mira, "x")
        },
        NewMemory {
            witnesses: vec![EntityId(999)],
            ..NewMemory::new(t.mira, "x")
        },
    ] {
        assert!(e.add_memory(bad).is_err());
    }
    assert_eq!(e.head(), head);
    assert!(NewMemory::from_json(r#"{"owner": 1}"#).is_err());
    assert!(NewMemory::from_json(r#"{"owner": 1, "text": "x", "colour": 2}"#).is_err());
    let n = NewMemory::from_json(r#"{"owner": 1, "text": "x", "kind": "reflection"}"#).unwrap();
    assert_eq!((n.kind, n.significance), (MemoryKind::Reflection, 0.5));
    assert!(RecallOptions::from_json(r#"{"k": 0}"#).is_err());
    assert_eq!(
        RecallOptions::from_json("{}").unwrap(),
        RecallOptions::default()
    );
}

const WORDS: &[&str] = &[
    "ale", "ship", "harbour", "letter", "bard", "silver", "duke", "door", "lantern", "rain", "the",
    "a", "of",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// DESIGN §2.7 for retrieval: for random memories of random owners and random queries,
    /// what a speaker recalls is exactly its own memories sharing a word with the query (with
    /// room for all of them), never another's, and none of a memory it does not hold even when
    /// queried with that memory's exact text. After a rewind, the memories of the abandoned
    /// tail are gone, and switching to that branch brings them back. In a save file, the index
    /// kept beside it (docs/memory.md, "The index beside the save") and read back after reopening
    /// finds the same.
    #[test]
    fn retrieval_is_witness_safe(
        memories in prop::collection::vec((0usize..4, text()), 1..40),
        queries in prop::collection::vec((0usize..4, text()), 1..8),
        cut in 0usize..40,
        on_file in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.rp");
        let mut engine = if on_file {
            Engine::create(&path, "w", 0).unwrap()
        } else {
            Engine::in_memory("w", 0).unwrap()
        };
        let people: Vec<EntityId> =
            ["A", "B", "C", "D"].iter().map(|n| entity(&mut engine, n)).collect();
        let mut made = Vec::new();
        let mut head_at_cut = engine.head();
        for (i, (owner, text)) in memories.iter().enumerate() {
            if i == cut {
                head_at_cut = engine.head();
            }
            let id = remember(&mut engine, people[*owner], text, 0.5);
            made.push((id, people[*owner], text.clone()));
        }
        let all = RecallOptions { k: 1000, candidates: 1, ..RecallOptions::default() };
        // Half the memories go into the index when it is built (first recall), the rest into
        // its in-memory delta.
        let first_made = made.len();
        let half = first_made / 2;
        let later: Vec<(usize, String)> = memories[..half].to_vec();
        engine.recall(people[0], "ale", 0, &all).unwrap();
        for (owner, text) in later {
            let id = remember(&mut engine, people[owner], &text, 0.5);
            made.push((id, people[owner], text));
        }
        let check = |engine: &mut Engine, made: &[(MemoryId, EntityId, String)]| {
            for (who, q) in &queries {
                let speaker = people[*who];
                let found = engine.recall(speaker, q, 0, &all).unwrap();
                let mut got = ids(&found);
                got.sort();
                let words: Vec<&str> = q.split(' ').collect();
                let mut want: Vec<MemoryId> = made
                    .iter()
                    .filter(|(_, o, t)| *o == speaker && t.split(' ').any(|w| words.contains(&w)))
                    .map(|(id, _, _)| *id)
                    .collect();
                want.sort();
                prop_assert_eq!(&got, &want, "speaker {:?}, query {:?}", speaker, q);
                // Another's memory, queried by its exact text: never returned.
                for (id, owner, t) in made {
                    if *owner != speaker {
                        let found = engine.recall(speaker, t, 0, &all).unwrap();
                        prop_assert!(!ids(&found).contains(id));
                    }
                }
            }
            Ok(())
        };
        check(&mut engine, &made)?;
        // The index kept in step with the events finds what one rebuilt from the world does.
        let mut fresh = rp_core::memory::MemoryIndex::build(engine.world()).unwrap();
        for (who, q) in &queries {
            let speaker = people[*who];
            let kept = engine.recall(speaker, q, 0, &all).unwrap();
            let rebuilt =
                rp_core::memory::recall(engine.world(), &mut fresh, speaker, q, 0, &all).unwrap();
            let mut a = ids(&kept);
            let mut b = ids(&rebuilt);
            a.sort();
            b.sort();
            prop_assert_eq!(a, b);
        }
        if cut < first_made {
            let tail = engine.rewind(head_at_cut).unwrap().expect("a tail branch");
            check(&mut engine, &made[..cut])?;
            // Switching to the abandoned branch brings them all back.
            engine.switch_branch(&tail).unwrap();
            check(&mut engine, &made)?;
        }
        if on_file {
            // Reopened, the index beside the save is read back and caught up.
            drop(engine);
            let mut engine = Engine::open(&path).unwrap();
            check(&mut engine, &made)?;
        }
    }
}

#[test]
fn entities_are_found_by_name_alias_and_facts() {
    let world_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
    let mut engine = Engine::in_memory("The Crooked Lantern", 0).expect("engine");
    engine.load_world_file(world_file).expect("tavern");
    let mira = engine.world().entity_by_name("Mira Holt").expect("Mira").id;
    let wren = engine.world().entity_by_name("Wren").expect("Wren").id;

    let found = engine.search_entities("mira", 5).expect("search");
    assert_eq!(found[0].0, mira, "{found:?}");
    let found = engine.search_entities("wren", 5).expect("search");
    assert_eq!(found[0].0, wren, "{found:?}");
    // Query syntax is only words (another's facts mention Mira: she still comes first).
    for q in ["\"mira", "names:mira", "(mira AND", "mira~1"] {
        let found = engine.search_entities(q, 5).expect("search");
        assert_eq!(found.first().map(|f| f.0), Some(mira), "{q}: {found:?}");
    }
    assert!(engine.search_entities("", 5).unwrap().is_empty());
    assert!(engine.search_entities("zzyzx", 5).unwrap().is_empty());

    // Edits and new entities are seen at once; removals too.
    let mut facts = engine.world().entity(wren).unwrap().facts.clone();
    facts = rp_core::FactSheet::from_text(&format!(
        "{}\ncollects brass astrolabes",
        facts.lines().join("\n")
    ));
    engine
        .append(vec![Event::EntityEdited {
            id: wren,
            name: None,
            aliases: Some(vec!["the Sparrow".into()]),
            facts: Some(facts),
            host_controlled: None,
        }])
        .expect("edit");
    assert_eq!(engine.search_entities("astrolabes", 5).unwrap()[0].0, wren);
    assert_eq!(engine.search_entities("sparrow", 5).unwrap()[0].0, wren);
    let oskar = entity(&mut engine, "Oskar the Brass");
    let found = engine.search_entities("brass", 5).unwrap();
    assert_eq!(
        found[0].0, oskar,
        "a name weighs more than a fact: {found:?}"
    );
    engine
        .append(vec![Event::EntityRemoved { id: oskar }])
        .expect("remove");
    let found = engine.search_entities("brass", 5).unwrap();
    assert_eq!(
        found.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        vec![wren]
    );
    assert_eq!(
        engine.search_entities("brass", 0).unwrap_err().kind(),
        ErrorKind::Invalid
    );
}

#[test]
fn pinned_memories_and_recent_scenes_are_always_loaded() {
    let mut t = tavern();
    let e = &mut t.engine;
    let vow = e
        .add_memory(NewMemory {
            pinned: true,
            created: Some(5),
            ..NewMemory::new(t.mira, "I swore to keep the lantern lit")
        })
        .unwrap();
    let name = e
        .add_memory(NewMemory {
            pinned: true,
            created: Some(1),
            ..NewMemory::new(t.mira, "my mother's name was Ilse")
        })
        .unwrap();
    let scenes: Vec<MemoryId> = (0..4)
        .map(|i| {
            e.add_memory(NewMemory {
                kind: MemoryKind::SceneSummary,
                created: Some(100 + i),
                ..NewMemory::new(t.mira, format!("scene {i}"))
            })
            .unwrap()
        })
        .collect();
    remember(e, t.mira, "an ordinary memory", 0.5);
    e.add_memory(NewMemory {
        pinned: true,
        ..NewMemory::new(t.wren, "Wren's own vow")
    })
    .unwrap();

    let loaded = e.always_loaded(t.mira, 2).unwrap();
    assert_eq!(loaded, vec![name, vow, scenes[3], scenes[2]]);
    assert_eq!(e.always_loaded(t.mira, 0).unwrap(), vec![name, vow]);
    assert!(e.always_loaded(t.oskar, 5).unwrap().is_empty());
    assert_eq!(
        e.always_loaded(EntityId(999), 1).unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert!(
        NewMemory::from_json(r#"{"owner": 1, "text": "x", "pinned": true}"#)
            .unwrap()
            .pinned
    );
}

/// A deterministic stand-in for a sentence-embedding model: words of one concept share a
/// dimension (so "beer" and "ale" point the same way), other words get one of their own.
fn embed(text: &str) -> Vec<f32> {
    const CONCEPTS: &[&[&str]] = &[
        &["ale", "beer", "cider", "drink", "pint"],
        &["ship", "boat", "harbour", "sail"],
        &["silver", "coin", "gold", "money"],
    ];
    let mut v = vec![0.0f32; 16];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = word.to_lowercase();
        let dim = CONCEPTS
            .iter()
            .position(|c| c.contains(&w.as_str()))
            .unwrap_or_else(|| 3 + w.bytes().map(usize::from).sum::<usize>() % 13);
        v[dim] += 1.0;
    }
    v
}

#[test]
fn with_vectors_beer_finds_the_memory_about_ale() {
    let mut t = tavern();
    let e = &mut t.engine;
    let with_vector = |owner, text: &str| NewMemory {
        embedding: Some(embed(text)),
        ..NewMemory::new(owner, text)
    };
    let ale = e
        .add_memory(with_vector(t.mira, "Wren ordered the dark ale"))
        .unwrap();
    let ship = e.add_memory(with_vector(t.mira, "a ship came in")).unwrap();
    let wrens = e.add_memory(with_vector(t.wren, "I drank a beer")).unwrap();
    remember(e, t.mira, "no vector here: beer", 0.5);

    // Words alone: "beer" finds only the memory with the word.
    let words = e.recall(t.mira, "beer", 0, &relevance_only()).unwrap();
    assert!(!ids(&words).contains(&ale));
    // With the query's vector, the memory about ale comes first; never Wren's.
    let options = RecallOptions {
        query_embedding: Some(embed("beer")),
        semantic: 1.0,
        ..relevance_only()
    };
    let found = e.recall(t.mira, "beer", 0, &options).unwrap();
    assert_eq!(found[0].id, ale, "{found:?}");
    assert!(!ids(&found).contains(&wrens));
    let ship_rank = found
        .iter()
        .find(|r| r.id == ship)
        .map_or(0.0, |r| r.relevance);
    assert!(ship_rank < found[0].relevance);

    // Vectors are recorded with the memory: replay and reopening never embed again.
    assert_eq!(
        e.world().memory(ale).unwrap().embedding,
        Some(embed("Wren ordered the dark ale"))
    );

    // Bad vectors change nothing.
    let head = e.head();
    for bad in [vec![], vec![0.0; 4], vec![f32::NAN, 1.0]] {
        let err = e
            .add_memory(NewMemory {
                embedding: Some(bad.clone()),
                ..NewMemory::new(t.mira, "x")
            })
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{bad:?}");
        let err = e
            .recall(
                t.mira,
                "x",
                0,
                &RecallOptions {
                    query_embedding: Some(bad),
                    ..RecallOptions::default()
                },
            )
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid);
    }
    assert_eq!(e.head(), head);
    let bad_blend = RecallOptions {
        semantic: 1.5,
        ..RecallOptions::default()
    };
    assert_eq!(
        e.recall(t.mira, "x", 0, &bad_blend).unwrap_err().kind(),
        ErrorKind::Invalid
    );
}
