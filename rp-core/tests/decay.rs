//! Memory that fades and reflects (docs/memory.md): retention on FSRS's curve, read at any time;
//! the tick moving memories full → summary (the fast model's text) → residue (a feeling on an
//! edge) → forgotten (out of recall and prompts, back after a rewind); pinned memories and gists
//! never fading; reflections citing only the owner's own memories; hostile answers refused with
//! nothing applied; replay equal to the live world across all of it.

use proptest::prelude::*;
use rp_core::machine::{GenerateRequest, Step};
use rp_core::memory::{NewMemory, RecallOptions};
use rp_core::store::MemoryStore;
use rp_core::tick::{TickOptions, TickOutcome};
use rp_core::turn::PromptOptions;
use rp_core::*;

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

struct Tavern {
    engine: Engine,
    wren: EntityId,
    tobias: EntityId,
    mira: EntityId,
}

fn at(c: ContainerId) -> Activity {
    Activity {
        position: Some(Position {
            container: c,
            slot: None,
        }),
        ..Default::default()
    }
}

/// Drives that never push anyone to speak, sleep or tire: only memory work is ever due.
fn quiet(config: DriveConfig) -> DriveConfig {
    DriveConfig {
        weights: Some(Weights {
            social_debt: 0.0,
            task: 0.0,
            curiosity: 0.0,
            availability: 0.0,
            intent: 0.0,
        }),
        energy_drain_per_hour: Some(0.0),
        night_start: Some(0.0),
        night_end: Some(0.0),
        ..config
    }
}

/// A room with the player (Wren) and two characters, Tobias and Mira; the world's drive
/// settings as `config` (made quiet).
fn tavern(config: DriveConfig) -> Tavern {
    let mut engine = Engine::new_in(
        Box::new(MemoryStore::new()),
        "Tavern",
        0,
        EngineOptions::default(),
    )
    .unwrap();
    let w = engine.world();
    let room = ContainerId(w.next_id());
    let wren = EntityId(room.0 + 1);
    let tobias = EntityId(room.0 + 2);
    let mira = EntityId(room.0 + 3);
    let entity = |id, name: &str, host| Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: Default::default(),
        host_controlled: host,
        state: Default::default(),
    };
    let mut events = vec![
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
        entity(mira, "Mira", false),
        Event::DrivesConfigured {
            entity: None,
            config: Box::new(quiet(config)),
        },
    ];
    for e in [wren, tobias, mira] {
        events.push(Event::ActivityChanged {
            entity: e,
            activity: at(room),
        });
    }
    engine.append(events).unwrap();
    Tavern {
        engine,
        wren,
        tobias,
        mira,
    }
}

fn remember(e: &mut Engine, owner: EntityId, with: &[EntityId], text: &str, sig: f64) -> MemoryId {
    e.add_memory(NewMemory {
        witnesses: with.to_vec(),
        significance: sig,
        ..NewMemory::new(owner, text)
    })
    .unwrap()
}

/// The world the engine's log replays to.
fn replay(engine: &Engine) -> World {
    let mut world = World::new();
    for (_, e) in engine.events(1, engine.head()).unwrap() {
        world.apply(&e).unwrap();
    }
    world
}

/// Runs the tick at `now`, answering each request with `answer`; returns the outcome and the
/// requests asked.
fn tick(
    e: &mut Engine,
    now: Millis,
    answer: &mut dyn FnMut(&GenerateRequest) -> String,
) -> (TickOutcome, Vec<GenerateRequest>) {
    let mut asked = Vec::new();
    let mut tick = e.begin_tick(now, TickOptions::default()).unwrap();
    while let Step::Generate(request) = tick.step(e).unwrap() {
        let text = answer(&request);
        asked.push(request);
        tick.provide(e, GenerateResult::text(text)).unwrap();
    }
    (tick.finish(e).unwrap(), asked)
}

/// The decay pass as a scan of every memory would find it, from the public rule of each
/// memory: the oracle of the pass, which visits only the memories the world keeps as due.
fn scan_pass(w: &World, now: Millis) -> decay::Pass {
    let mut due: Vec<(Millis, MemoryId, DecayStage)> = Vec::new();
    let mut next: Option<Millis> = None;
    let mut later = |at: Millis| next = Some(next.map_or(at, |n| n.min(at)));
    for m in w.all_memories() {
        let rule = FadeRule::of(&w.drive_settings(m.owner));
        match m.fading(&rule) {
            Some((stage, at)) if at <= now => {
                due.push((at, m.id, stage));
                if stage != DecayStage::Summary
                    && let Some((_, at)) = m.fading_from(stage, &rule)
                {
                    later(at);
                }
            }
            Some((_, at)) => later(at),
            None => {}
        }
    }
    due.sort_by_key(|(at, id, _)| (*at, *id));
    let mut pass = decay::Pass::default();
    for (_, id, stage) in due {
        let m = w.memory(id).unwrap();
        if stage == DecayStage::Summary {
            let batch = w.drive_settings(m.owner).summary_batch as usize;
            let waiting = pass.summaries.entry(m.owner).or_default();
            if waiting.len() < batch {
                waiting.push(id);
            }
        } else {
            pass.changes.push(StageChange { id, stage });
        }
    }
    pass.next = next.map(|n| n.max(now));
    pass
}

fn recalled(e: &mut Engine, who: EntityId, query: &str, now: Millis) -> Vec<MemoryId> {
    e.recall(who, query, now, &RecallOptions::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect()
}

fn prompt_text(e: &mut Engine, who: EntityId, query: &str, now: Millis) -> String {
    e.inspect_prompt(who, Some(query), now, &PromptOptions::default())
        .unwrap()
        .pieces
        .iter()
        .map(|p| p.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn retention_follows_fsrs_and_is_read_without_ticking() {
    let mut t = tavern(DriveConfig::default());
    let e = &mut t.engine;
    let m = remember(
        e,
        t.tobias,
        &[t.wren],
        "Wren paid for the ale in silver",
        0.5,
    );
    let head = e.head();
    let s = 24.0 * HOUR as f64;
    for days in [0.0, 0.5, 1.0, 7.0, 30.0, 90.0] {
        let now = (days * DAY as f64) as Millis;
        let expected = (1.0 + 19.0 / 81.0 * now as f64 / s).powf(-0.5);
        let r = e.retention(m, now).unwrap();
        assert!(
            (r - expected).abs() < 1e-12,
            "day {days}: {r} vs {expected}"
        );
    }
    assert!(
        (e.retention(m, DAY).unwrap() - 0.9).abs() < 1e-12,
        "R = 0.9 at t = S"
    );
    assert_eq!(e.head(), head, "reading retention records nothing");
    // Significance sets the curve: a grave memory is better kept.
    let grave = remember(e, t.tobias, &[t.wren], "Wren saved my life", 1.0);
    assert!(e.retention(grave, 30 * DAY).unwrap() > e.retention(m, 30 * DAY).unwrap());
    assert_eq!(
        e.retention(MemoryId(999_999), 0).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn a_memory_fades_in_stages_and_a_rewind_brings_it_back() {
    let mut t = tavern(DriveConfig::default());
    let e = &mut t.engine;
    let m = remember(
        e,
        t.tobias,
        &[t.wren],
        "Wren told me about the shipwreck off the northern cape, and the cargo of silver bells",
        0.5,
    );
    let before_decay = e.head();
    // Due when retention falls below 0.6: S/(19/81) × (1/0.36 − 1) after it formed.
    let s = 24.0 * HOUR as f64;
    // The first whole millisecond at which retention is below the threshold.
    let due = |r: f64| (s * retention::time_to(r, 1.0).unwrap()).floor() as Millis + 1;
    let summary_at = due(0.6);
    assert!((summary_at as f64 - s / (19.0 / 81.0) * (1.0 / 0.36 - 1.0)).abs() <= 1.0);
    assert!(e.retention(m, summary_at).unwrap() < 0.6);
    assert!(e.retention(m, summary_at - 1).unwrap() >= 0.6 - 1e-9);
    let next = e.next_tick_at(0).unwrap().unwrap();
    assert_eq!(next.reason, drives::TickReason::Decay);
    assert_eq!(next.at, summary_at);
    // Before then a tick asks for nothing.
    let (early, asked) = tick(e, summary_at - 1, &mut |_| unreachable!());
    assert!(asked.is_empty() && early.faded.is_empty() && early.summarized.is_empty());

    let (out, asked) = tick(e, summary_at, &mut |r| {
        assert_eq!(r.purpose, Purpose::Summary);
        assert!(r.json_schema.is_some());
        assert!(r.messages[0].content.contains("shipwreck"));
        format!(
            r#"{{"summaries": [{{"id": {}, "summary": "Wren told me of a wreck full of silver", "feeling": "fond", "about": "Wren"}}]}}"#,
            m.0
        )
    });
    assert_eq!(asked.len(), 1);
    assert_eq!(out.summarized, vec![m]);
    let mem = e.world().memory(m).unwrap().clone();
    assert_eq!(mem.decay, DecayStage::Summary);
    assert_eq!(
        mem.summary.as_deref(),
        Some("Wren told me of a wreck full of silver")
    );
    assert_eq!(
        (mem.feeling.as_deref(), mem.about),
        (Some("fond"), Some(t.wren))
    );
    // Still recalled (by what it was about), shown as its summary.
    assert_eq!(recalled(e, t.tobias, "shipwreck", summary_at), vec![m]);
    let p = prompt_text(e, t.tobias, "shipwreck silver", summary_at);
    assert!(
        p.contains("a wreck full of silver") && !p.contains("northern cape"),
        "{p}"
    );

    // Then a residue: only the feeling, on Tobias's edge toward Wren.
    let next = e.next_tick_at(summary_at).unwrap().unwrap();
    assert_eq!(next.reason, drives::TickReason::Decay);
    let residue_at = due(0.35);
    assert_eq!(next.at, residue_at);
    let (out, asked) = tick(e, residue_at, &mut |_| unreachable!());
    assert!(asked.is_empty(), "a residue needs no model");
    assert_eq!(
        out.faded,
        vec![StageChange {
            id: m,
            stage: DecayStage::Residue
        }]
    );
    assert_eq!(
        e.world().edge(t.tobias, t.wren).unwrap().imprints,
        vec!["fond"]
    );
    assert!(recalled(e, t.tobias, "shipwreck", residue_at).is_empty());
    assert!(!prompt_text(e, t.tobias, "shipwreck silver", residue_at).contains("wreck"));

    // Then forgotten.
    let next = e.next_tick_at(residue_at).unwrap().unwrap();
    let (out, _) = tick(e, next.at, &mut |_| unreachable!());
    assert_eq!(out.faded[0].stage, DecayStage::Forgotten);
    assert_eq!(e.world().memory(m).unwrap().decay, DecayStage::Forgotten);
    assert!(recalled(e, t.tobias, "shipwreck", next.at).is_empty());
    assert!(
        e.next_tick_at(next.at).unwrap().is_none(),
        "nothing more can fade"
    );
    assert_eq!(replay(e).to_bytes(), e.world().to_bytes());

    // Still in the log: a rewind brings it back whole.
    e.rewind(before_decay).unwrap();
    assert_eq!(e.world().memory(m).unwrap().decay, DecayStage::Full);
    assert_eq!(recalled(e, t.tobias, "shipwreck", 0), vec![m]);
}

#[test]
fn passes_gather_what_crossed_within_an_hour() {
    let mut t = tavern(DriveConfig::default());
    let e = &mut t.engine;
    // Two memories whose retention crosses 0.6 ten minutes apart.
    let first = e
        .add_memory(NewMemory {
            created: Some(0),
            ..NewMemory::new(t.tobias, "the first")
        })
        .unwrap();
    let second = e
        .add_memory(NewMemory {
            created: Some(10 * 60_000),
            ..NewMemory::new(t.tobias, "the second")
        })
        .unwrap();
    let rule = FadeRule::of(&e.world().drive_settings(t.tobias));
    let at = |id| e.world().memory(id).unwrap().fading(&rule).unwrap().1;
    let (a, b) = (at(first), at(second));
    assert_eq!(b - a, 10 * 60_000);
    assert_eq!(e.next_tick_at(0).unwrap().unwrap().at, a);
    let (out, _) = tick(e, a, &mut |r| {
        let id = listed_id(r);
        format!(r#"{{"summaries": [{{"id": {id}, "summary": "one"}}]}}"#)
    });
    assert_eq!(out.summarized, vec![first]);
    // The second is due ten minutes on, but the next pass waits for the hour.
    let next = e.next_tick_at(a).unwrap().unwrap();
    assert_eq!(
        (next.at, next.reason),
        (a + HOUR, drives::TickReason::Decay)
    );
    let (out, _) = tick(e, next.at, &mut |r| {
        let id = listed_id(r);
        format!(r#"{{"summaries": [{{"id": {id}, "summary": "two"}}]}}"#)
    });
    assert_eq!(out.summarized, vec![second]);
}

/// The id of the first memory a summary request lists.
fn listed_id(r: &GenerateRequest) -> u64 {
    let text = &r.messages[0].content;
    let at = text.find("- id ").unwrap() + 5;
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn pinned_memories_gists_and_consolidated_ones_never_fade() {
    let mut t = tavern(DriveConfig {
        consolidated_days: Some(3.0),
        ..Default::default()
    });
    let e = &mut t.engine;
    let pinned = e
        .add_memory(NewMemory {
            pinned: true,
            ..NewMemory::new(t.tobias, "I swore never to sail again")
        })
        .unwrap();
    let gist = e
        .add_memory(NewMemory {
            kind: MemoryKind::EventGist,
            ..NewMemory::new(t.tobias, "The festival ended in rain")
        })
        .unwrap();
    let often = remember(e, t.tobias, &[], "the lighthouse keeper's dog", 0.5);
    // Recalled, spaced, until its stability passes three days: consolidated.
    for d in [1, 3, 8] {
        e.mark_recalled(&[often], d * DAY).unwrap();
    }
    assert!(e.world().memory(often).unwrap().stability > 3.0 * DAY as f64);
    let rule = FadeRule::of(&e.world().drive_settings(t.tobias));
    for id in [pinned, gist, often] {
        let m = e.world().memory(id).unwrap();
        assert_eq!(m.fading(&rule), None);
    }
    assert_eq!(e.retention(pinned, 1000 * DAY).unwrap(), 1.0);
    assert_eq!(e.retention(gist, 1000 * DAY).unwrap(), 1.0);
    // A pass a thousand days on moves none of them.
    let (out, _) = tick(e, 1000 * DAY, &mut |_| unreachable!());
    assert!(out.faded.is_empty() && out.summarized.is_empty());
    for id in [pinned, gist, often] {
        assert_eq!(e.world().memory(id).unwrap().decay, DecayStage::Full);
    }
}

#[test]
fn a_summary_recalled_often_enough_keeps_its_stage() {
    let mut t = tavern(DriveConfig {
        keep_recalls: Some(2),
        ..Default::default()
    });
    let e = &mut t.engine;
    let m = remember(
        e,
        t.tobias,
        &[t.wren],
        "Wren hummed the old ferry song",
        0.5,
    );
    let due = e.next_tick_at(0).unwrap().unwrap().at;
    tick(e, due, &mut |_| {
        format!(
            r#"{{"summaries": [{{"id": {}, "summary": "Wren hummed"}}]}}"#,
            m.0
        )
    });
    assert_eq!(e.world().memory(m).unwrap().decay, DecayStage::Summary);
    e.mark_recalled(&[m], due + 1).unwrap();
    e.mark_recalled(&[m], due + 2).unwrap();
    let far = 10_000 * DAY;
    let (out, _) = tick(e, far, &mut |_| unreachable!());
    assert!(out.faded.is_empty());
    assert_eq!(e.world().memory(m).unwrap().decay, DecayStage::Summary);
}

#[test]
fn a_decay_record_out_of_turn_is_refused_and_changes_nothing() {
    let mut t = tavern(DriveConfig::default());
    let e = &mut t.engine;
    let m = remember(e, t.tobias, &[t.wren], "Wren laughed at the bard", 0.5);
    let other = remember(e, t.mira, &[t.wren], "Wren laughed at me", 0.5);
    let head = e.head();
    let bytes = e.world().to_bytes();
    let summary = |id, text: &str| MemorySummary {
        id,
        text: text.into(),
        feeling: None,
        about: None,
    };
    let bad: Vec<Event> = vec![
        // Not yet faded.
        Event::MemoriesSummarized {
            owner: t.tobias,
            at: HOUR,
            summaries: vec![summary(m, "laughter")],
        },
        Event::DecayPassed {
            at: HOUR,
            changes: vec![StageChange {
                id: m,
                stage: DecayStage::Forgotten,
            }],
            next: None,
        },
        // Another's memory under Tobias's name.
        Event::MemoriesSummarized {
            owner: t.tobias,
            at: 100 * DAY,
            summaries: vec![summary(other, "laughter")],
        },
        // Longer than the memory.
        Event::MemoriesSummarized {
            owner: t.tobias,
            at: 100 * DAY,
            summaries: vec![summary(m, &"laughter ".repeat(40))],
        },
        // About someone who was not there.
        Event::MemoriesSummarized {
            owner: t.tobias,
            at: 100 * DAY,
            summaries: vec![MemorySummary {
                about: Some(t.mira),
                ..summary(m, "laughter")
            }],
        },
        // A summary skips no stage: from whole straight to a residue.
        Event::DecayPassed {
            at: 100 * DAY,
            changes: vec![StageChange {
                id: m,
                stage: DecayStage::Residue,
            }],
            next: None,
        },
        // A reflection citing another's memory.
        Event::Reflected {
            entity: t.tobias,
            at: HOUR,
            insights: vec![Memory {
                id: MemoryId(e.world().next_id()),
                owner: t.tobias,
                witnesses: WitnessSet::from_iter([t.tobias]),
                text: "Wren mocks people".into(),
                kind: MemoryKind::Reflection,
                significance: 0.5,
                created: HOUR,
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
                sources: vec![m, other],
            }],
            rejected: None,
        },
    ];
    for event in bad {
        let err = e.append(vec![event.clone()]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Invalid, "{event:?}: {err}");
        assert_eq!(e.head(), head);
        assert_eq!(e.world().to_bytes(), bytes);
    }
}

fn reflective() -> Tavern {
    tavern(DriveConfig {
        reflect_threshold: Some(1.0),
        ..Default::default()
    })
}

#[test]
fn a_reopened_save_knows_what_is_due_as_the_live_world_did() {
    reopened_knows_what_is_due(
        EngineOptions {
            snapshot_every: 5,
            ..EngineOptions::default()
        },
        40,
    );
}

#[test]
fn a_save_replayed_whole_knows_what_is_due_as_the_live_world_did() {
    // No snapshot, and more events than a replay keeps what fades when up to date through:
    // the schedule is built once the replay is done.
    reopened_knows_what_is_due(
        EngineOptions {
            snapshot_every: 0,
            durability: Durability::Eventual,
            ..EngineOptions::default()
        },
        4_200,
    );
}

/// A save of `memories` memories of two owners, some recalled, one owner's fading faster:
/// reopened, it finds the decay passes the live world found at four moments, and so does a
/// scan of every memory.
fn reopened_knows_what_is_due(options: EngineOptions, memories: i64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decay.rp");
    let mut e = Engine::create_with(&path, "Tavern", 0, options.clone()).unwrap();
    let room = ContainerId(e.world().next_id());
    let (a, b) = (EntityId(room.0 + 1), EntityId(room.0 + 2));
    let entity = |id, name: &str| Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: Default::default(),
        host_controlled: false,
        state: Default::default(),
    };
    e.append(vec![entity(a, "Ana"), entity(b, "Bo")]).unwrap();
    e.configure_drives(
        Some(b),
        DriveConfig {
            memory_stability_hours: Some(2.0),
            ..Default::default()
        },
    )
    .unwrap();
    for k in 0..memories {
        let owner = if k % 3 == 0 { b } else { a };
        e.add_memory(NewMemory {
            significance: (k % 10) as f64 / 10.0,
            created: Some(k * HOUR),
            ..NewMemory::new(owner, format!("memory {k}"))
        })
        .unwrap();
        if k % 7 == 0 {
            e.mark_recalled(&[MemoryId(e.world().next_id() - 1)], (k + 5) * HOUR)
                .unwrap();
        }
    }
    let live: Vec<decay::Pass> = [0, 10, 50, 400]
        .iter()
        .map(|d| decay::pass(e.world(), d * DAY))
        .collect();
    drop(e);
    let reopened = Engine::open_with(&path, options).unwrap();
    for (pass, d) in live.iter().zip([0, 10, 50, 400]) {
        assert_eq!(&decay::pass(reopened.world(), d * DAY), pass);
        assert_eq!(pass, &scan_pass(reopened.world(), d * DAY));
    }
    assert!(!live[2].changes.is_empty() || !live[2].summaries.is_empty());
}

#[test]
fn a_character_reflects_once_its_memories_weigh_enough() {
    let mut t = reflective();
    let e = &mut t.engine;
    let a = remember(e, t.tobias, &[t.wren], "Wren asked about my brother", 0.4);
    assert!(
        e.next_tick_at(0).unwrap().unwrap().reason != drives::TickReason::Reflect,
        "0.4 is below the threshold"
    );
    let b = remember(e, t.tobias, &[t.wren], "Wren asked about the harbour", 0.7);
    let wrens = remember(e, t.wren, &[t.tobias], "Tobias went quiet", 0.9);
    let next = e.next_tick_at(0).unwrap().unwrap();
    assert_eq!(
        (next.reason, next.entity),
        (drives::TickReason::Reflect, Some(t.tobias))
    );
    let (out, asked) = tick(e, next.at, &mut |r| {
        assert_eq!(r.purpose, Purpose::Reflect { speaker: t.tobias });
        let prompt = &r.messages[0].content;
        assert!(prompt.contains("my brother") && prompt.contains("harbour"));
        assert!(!prompt.contains("went quiet"), "only Tobias's own memories");
        format!(
            r#"{{"insights": [{{"text": "Wren is curious about my past", "sources": [{}, {}], "significance": 0.8}}]}}"#,
            a.0, b.0
        )
    });
    assert_eq!(asked.len(), 1);
    assert_eq!(out.reflections.len(), 1);
    let insight = out.reflections[0].insights[0];
    let m = e.world().memory(insight).unwrap();
    assert_eq!(m.kind, MemoryKind::Reflection);
    assert_eq!(m.sources, vec![a, b]);
    assert_eq!(m.witnesses, WitnessSet::from_iter([t.tobias]));
    assert_eq!(m.significance, 0.8);
    // The sources are reinforced, the count starts again.
    assert_eq!(e.world().memory(a).unwrap().access_count, 1);
    assert_eq!(e.world().mind(t.tobias).unwrap().unreflected, 0.0);
    assert_eq!(e.world().memory(wrens).unwrap().access_count, 0);
    // It is recalled like any memory of his.
    assert!(recalled(e, t.tobias, "curious past", next.at).contains(&insight));
    assert_eq!(replay(e).to_bytes(), e.world().to_bytes());
}

#[test]
fn hostile_reflections_are_refused_with_reasons_and_nothing_applied() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = format!(
        r#"{{"insights": [{{"text": "{}", "sources": []}}]}}"#,
        "x".repeat(10 << 20)
    );
    for (label, answer) in [
        ("another's memory", "OTHER"),
        ("out of range", "RANGE"),
        (
            "no source",
            r#"{"insights": [{"text": "hm", "sources": []}]}"#,
        ),
        ("unknown field", r#"{"insights": [], "mood": "x"}"#),
        ("not JSON", "I think Wren likes me."),
        ("deep", deep.as_str()),
        ("10 MB", huge.as_str()),
    ] {
        let mut t = reflective();
        let e = &mut t.engine;
        let own = remember(e, t.tobias, &[t.wren], "Wren asked about my brother", 0.6);
        remember(e, t.tobias, &[t.wren], "Wren asked about the harbour", 0.6);
        let other = remember(e, t.mira, &[t.wren], "Mira's secret recipe", 0.6);
        let answer = match answer {
            "OTHER" => format!(
                r#"{{"insights": [{{"text": "the recipe", "sources": [{}, {}]}}]}}"#,
                own.0, other.0
            ),
            "RANGE" => format!(
                r#"{{"insights": [{{"text": "hm", "sources": [{}], "significance": 5}}]}}"#,
                own.0
            ),
            a => a.to_owned(),
        };
        let memories = e.world().all_memories().count();
        let now = e.next_tick_at(0).unwrap().unwrap().at;
        let (out, asked) = tick(e, now, &mut |_| answer.clone());
        assert_eq!(asked.len(), 2, "{label}: exactly one retry");
        let feedback = &asked[1].messages.last().unwrap().content;
        assert!(
            feedback.contains("could not be used"),
            "{label}: {feedback}"
        );
        if label == "another's memory" {
            assert!(
                feedback.contains(&format!("{other} is not a memory of")),
                "{feedback}"
            );
            assert!(!feedback.contains("recipe"), "the reason names no content");
        }
        assert_eq!(out.reflections.len(), 1);
        assert!(out.reflections[0].insights.is_empty(), "{label}");
        assert!(out.reflections[0].rejected.is_some(), "{label}");
        assert_eq!(e.world().all_memories().count(), memories, "{label}");
        // Rejected is recorded: the character is not asked again at once.
        assert_eq!(e.world().mind(t.tobias).unwrap().unreflected, 0.0);
        assert_eq!(e.world().memory(other).unwrap().access_count, 0);
    }
}

#[test]
fn hostile_summaries_are_refused_with_reasons() {
    let mut t = tavern(DriveConfig::default());
    let e = &mut t.engine;
    let m = remember(e, t.tobias, &[t.wren], "Wren sang by the fire", 0.5);
    // Graver: not yet due when Tobias's is.
    let other = remember(e, t.mira, &[t.wren], "Mira burned the bread", 1.0);
    let due = e.next_tick_at(0).unwrap().unwrap().at;
    let bad = [
        format!(
            r#"{{"summaries": [{{"id": {}, "summary": "{}"}}]}}"#,
            m.0,
            "la ".repeat(50)
        ),
        format!(
            r#"{{"summaries": [{{"id": {}, "summary": "bread"}}]}}"#,
            other.0
        ),
        format!(
            r#"{{"summaries": [{{"id": {}, "summary": "song", "about": "Mira"}}]}}"#,
            m.0
        ),
    ];
    for answer in bad {
        let mut t2 = tavern(DriveConfig::default());
        let e2 = &mut t2.engine;
        let m2 = remember(e2, t2.tobias, &[t2.wren], "Wren sang by the fire", 0.5);
        remember(e2, t2.mira, &[t2.wren], "Mira burned the bread", 1.0);
        assert_eq!(m2, m);
        let (out, asked) = tick(e2, due, &mut |_| answer.clone());
        assert_eq!(asked.len(), 2, "one request and exactly one retry");
        assert!(
            asked[1]
                .messages
                .last()
                .unwrap()
                .content
                .contains("could not be used")
        );
        assert!(out.summarized.is_empty(), "{answer}");
        assert_eq!(e2.world().memory(m2).unwrap().decay, DecayStage::Full);
        // Asked again in an hour, not in a loop.
        let next = e2.next_tick_at(due).unwrap().unwrap();
        assert_eq!(
            (next.at, next.reason),
            (due + HOUR, drives::TickReason::Decay)
        );
    }
    let _ = e;
}

#[test]
fn a_failed_reflection_is_recorded_and_the_tick_reports_it() {
    let mut t = reflective();
    let e = &mut t.engine;
    remember(e, t.tobias, &[t.wren], "Wren asked about my brother", 0.6);
    remember(e, t.tobias, &[t.wren], "Wren asked about the harbour", 0.6);
    let now = e.next_tick_at(0).unwrap().unwrap().at;
    let mut tick = e.begin_tick(now, TickOptions::default()).unwrap();
    assert!(matches!(tick.step(e).unwrap(), Step::Generate(_)));
    tick.fail(e, "the model is down").unwrap();
    assert_eq!(tick.finish(e).unwrap_err().kind(), ErrorKind::Generation);
    assert_eq!(e.world().mind(t.tobias).unwrap().unreflected, 0.0);
    assert!(
        e.next_tick_at(now).unwrap().is_none_or(|n| n.at > now),
        "the host is not asked again at once"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    /// Over random memories, days and answers (citing any memory, naming anyone): no
    /// reflection rests on a memory its owner does not hold, no memory is about someone who
    /// did not witness it, nothing faded is recalled, and replay equals the live world.
    #[test]
    fn decay_and_reflection_never_reach_past_what_a_character_witnessed(
        memories in prop::collection::vec((0usize..3, prop::collection::vec(0usize..3, 0..3), 0u8..=10, 0i64..40), 1..24),
        ticks in prop::collection::vec((1i64..20, any::<u64>()), 1..8),
        back in any::<prop::sample::Index>(),
    ) {
        let mut t = reflective();
        let people = [t.wren, t.tobias, t.mira];
        let names = ["Wren", "Tobias", "Mira"];
        let e = &mut t.engine;
        let mut now = 0;
        for (owner, with, sig, day) in memories {
            let with: Vec<EntityId> = with.iter().map(|i| people[*i]).collect();
            let sig = f64::from(sig) / 10.0;
            e.add_memory(NewMemory {
                witnesses: with,
                significance: sig,
                created: Some(day * HOUR),
                ..NewMemory::new(people[owner], format!("memory of day {day} weighing {sig} by {}", names[owner]))
            })
            .unwrap();
        }
        for (days, seed) in ticks {
            now += days * DAY;
            let all: Vec<u64> = e.world().all_memories().map(|m| m.id.0).collect();
            let mut n = seed;
            let mut pick = move |k: usize| {
                n = n.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (n >> 33) as usize % k
            };
            let mut answer = |r: &GenerateRequest| -> String {
                match r.purpose {
                    Purpose::Reflect { .. } => format!(
                        r#"{{"insights": [{{"text": "so it goes", "sources": [{}, {}]}}]}}"#,
                        all[pick(all.len())], all[pick(all.len())]
                    ),
                    _ => format!(
                        r#"{{"summaries": [{{"id": {}, "summary": "gist", "feeling": "wistful", "about": "{}"}}]}}"#,
                        all[pick(all.len())], names[pick(3)]
                    ),
                }
            };
            while let Some(next) = e.next_tick_at(e.world().now()).unwrap() {
                if next.at > now {
                    break;
                }
                tick(e, next.at, &mut answer);
            }
            let w = e.world();
            // The pass visits only what the world keeps as due, and finds what a scan finds,
            // now and days on.
            for later in [now, now + 10 * DAY, now + 100 * DAY] {
                prop_assert_eq!(decay::pass(w, later), scan_pass(w, later));
            }
            for m in w.all_memories() {
                prop_assert!(m.witnesses.contains(m.owner));
                for s in &m.sources {
                    prop_assert_eq!(w.memory(*s).map(|s| s.owner), Some(m.owner));
                }
                if let Some(about) = m.about {
                    prop_assert!(about != m.owner && m.witnesses.contains(about));
                }
            }
            for who in people {
                for r in e.recall(who, "memory day gist so it goes", now, &RecallOptions::default()).unwrap() {
                    let m = e.world().memory(r.id).unwrap();
                    prop_assert_eq!(m.owner, who);
                    prop_assert!(m.recallable());
                }
                // Nothing faded past a summary reaches a prompt.
                let prompt = e
                    .inspect_prompt(who, Some("memory day weighing gist so it goes"), now, &PromptOptions::default())
                    .unwrap();
                for piece in prompt.pieces.iter().chain(&prompt.trimmed) {
                    if let Some(id) = piece.memory {
                        let m = e.world().memory(id).unwrap();
                        prop_assert_eq!(m.owner, who);
                        prop_assert!(m.recallable(), "{:?} in {}'s prompt", m, who);
                    }
                }
            }
        }
        prop_assert_eq!(replay(e).to_bytes(), e.world().to_bytes());
        // A rewind brings back what faded since: the world is the log's up to there.
        let first_decay = e
            .events(1, e.head())
            .unwrap()
            .into_iter()
            .find(|(_, ev)| matches!(ev, Event::DecayPassed { .. } | Event::MemoriesSummarized { .. }))
            .map(|(seq, _)| seq);
        if let Some(first) = first_decay {
            let to = first - 1 - back.index((first - 1) as usize).min(3) as u64;
            e.rewind(to).unwrap();
            let mut w = World::new();
            for (_, ev) in e.events(1, to).unwrap() {
                w.apply(&ev).unwrap();
            }
            prop_assert_eq!(w.to_bytes(), e.world().to_bytes());
            prop_assert!(e.world().all_memories().all(|m| m.decay == DecayStage::Full));
        }
    }
}
