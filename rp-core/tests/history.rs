//! What did X believe at time T (issue 20, item 7; docs/history.md): `memories_at`,
//! `beliefs_at` and `world_at` answer exactly what a replay of the branch's log from scratch
//! to that point gives, on the current branch, on others and across rewinds, with checkpoints
//! of any spacing, from a cold reopened save; bad points are refused with the same error kinds
//! everywhere; a world query asked about the past reads that past.

use proptest::prelude::*;
use rp_core::memory::NewMemory;
use rp_core::query::{QueryConfig, QueryInput};
use rp_core::turn::{GenerateResult, Step};
use rp_core::*;

mod support;
use support::history::{json, logs, person, replayed, seq_at};

const T0: Millis = 1_000;

/// One step of a random session.
#[derive(Clone, Debug)]
enum Op {
    Person,
    Memory {
        owner: usize,
        witness: usize,
        significance: u8,
    },
    Forget {
        nth: usize,
    },
    Recall {
        nth: usize,
    },
    Edge {
        from: usize,
        to: usize,
        affinity: i8,
    },
    Unedge {
        from: usize,
        to: usize,
    },
    Believe {
        observer: usize,
        about: usize,
        mood: u8,
        confidence: u8,
    },
    Report {
        about: usize,
        availability: u8,
    },
    Advance {
        ms: u16,
    },
    Rename {
        who: usize,
        tag: u16,
    },
    Remove {
        who: usize,
    },
    Rewind {
        back: u8,
    },
    Fork {
        back: u8,
    },
    Switch {
        nth: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Person),
        4 => (0..8usize, 0..8usize, 0..=10u8).prop_map(|(owner, witness, significance)| Op::Memory { owner, witness, significance }),
        1 => (0..64usize).prop_map(|nth| Op::Forget { nth }),
        1 => (0..64usize).prop_map(|nth| Op::Recall { nth }),
        3 => (0..8usize, 0..8usize, -10..=10i8).prop_map(|(from, to, affinity)| Op::Edge { from, to, affinity }),
        1 => (0..8usize, 0..8usize).prop_map(|(from, to)| Op::Unedge { from, to }),
        3 => (0..8usize, 0..8usize, 0..4u8, 1..=10u8).prop_map(|(observer, about, mood, confidence)| Op::Believe { observer, about, mood, confidence }),
        1 => (0..8usize, 0..=10u8).prop_map(|(about, availability)| Op::Report { about, availability }),
        3 => (0..5000u16).prop_map(|ms| Op::Advance { ms }),
        1 => (0..8usize, 0..1000u16).prop_map(|(who, tag)| Op::Rename { who, tag }),
        1 => (0..8usize).prop_map(|who| Op::Remove { who }),
        1 => (1..20u8).prop_map(|back| Op::Rewind { back }),
        1 => (0..20u8).prop_map(|back| Op::Fork { back }),
        1 => (0..8usize).prop_map(|nth| Op::Switch { nth }),
    ]
}

/// Plays `ops` on `engine`; refused steps (an entity gone, an edge missing) change nothing.
fn play(engine: &mut Engine, ops: &[Op]) {
    let mut people: Vec<EntityId> = Vec::new();
    let mut forks = 0;
    for op in ops {
        let now = engine.world().now();
        let pick = |people: &[EntityId], i: usize| people.get(i % people.len().max(1)).copied();
        let mems: Vec<MemoryId> = engine.world().all_memories().map(|m| m.id).collect();
        let _ = match op {
            Op::Person => {
                let id = EntityId(engine.world().next_id());
                let name = format!("P{}", id.0);
                people.push(id);
                engine.append(vec![person(id, &name)]).map(drop)
            }
            Op::Memory {
                owner,
                witness,
                significance,
            } => match (pick(&people, *owner), pick(&people, *witness)) {
                (Some(o), Some(w)) => {
                    let mut m = NewMemory::new(o, format!("memory of {} at {now}", o.0));
                    m.witnesses = vec![w];
                    m.significance = f64::from(*significance) / 10.0;
                    engine.add_memory(m).map(drop)
                }
                _ => Ok(()),
            },
            Op::Forget { nth } if !mems.is_empty() => {
                engine.remove_memory(mems[nth % mems.len()]).map(drop)
            }
            Op::Recall { nth } if !mems.is_empty() => engine
                .mark_recalled(&[mems[nth % mems.len()]], now)
                .map(drop),
            Op::Edge { from, to, affinity } => match (pick(&people, *from), pick(&people, *to)) {
                (Some(f), Some(t)) if f != t => engine
                    .append(vec![Event::EdgeUpdated {
                        edge: Edge {
                            affinity: f64::from(*affinity) / 10.0,
                            summary: format!("seen at {now}"),
                            ..Edge::new(f, t)
                        },
                    }])
                    .map(drop),
                _ => Ok(()),
            },
            Op::Unedge { from, to } => match (pick(&people, *from), pick(&people, *to)) {
                (Some(from), Some(to)) => engine
                    .append(vec![Event::EdgeRemoved { from, to }])
                    .map(drop),
                _ => Ok(()),
            },
            Op::Believe {
                observer,
                about,
                mood,
                confidence,
            } => match (pick(&people, *observer), pick(&people, *about)) {
                (Some(o), Some(a)) if o != a => {
                    let mood = ["calm", "tired", "cross", "merry"][usize::from(*mood)];
                    let json = format!(
                        r#"{{"observer": {}, "about": {}, "mood": "{mood}", "confidence": {}}}"#,
                        o.0,
                        a.0,
                        f64::from(*confidence) / 10.0
                    );
                    engine.observe_belief_json(&json, now + 10).map(drop)
                }
                _ => Ok(()),
            },
            Op::Report {
                about,
                availability,
            } => match pick(&people, *about) {
                Some(about) => engine
                    .append(vec![Event::AvailabilityReported {
                        about,
                        availability: f64::from(*availability) / 10.0,
                        at: now,
                    }])
                    .map(drop),
                None => Ok(()),
            },
            Op::Advance { ms } => engine
                .append(vec![Event::TimeAdvanced {
                    to: now + Millis::from(*ms),
                }])
                .map(drop),
            Op::Rename { who, tag } => match pick(&people, *who) {
                Some(id) => engine
                    .append(vec![Event::EntityEdited {
                        id,
                        name: Some(format!("Renamed {tag} {}", id.0)),
                        aliases: None,
                        facts: None,
                        host_controlled: None,
                    }])
                    .map(drop),
                None => Ok(()),
            },
            Op::Remove { who } => match pick(&people, *who) {
                Some(id) => engine.append(vec![Event::EntityRemoved { id }]).map(drop),
                None => Ok(()),
            },
            Op::Rewind { back } => {
                let to = engine.head().saturating_sub(u64::from(*back)).max(1);
                engine.rewind(to).map(drop)
            }
            Op::Fork { back } => {
                forks += 1;
                let at = engine.head().saturating_sub(u64::from(*back)).max(1);
                engine.fork(at, &format!("fork{forks}")).map(drop)
            }
            Op::Switch { nth } => {
                let names: Vec<String> = engine.branches().into_iter().map(|b| b.name).collect();
                engine.switch_branch(&names[nth % names.len()])
            }
            _ => Ok(()),
        };
    }
}

fn expected_memories(w: &World, who: EntityId) -> Vec<Memory> {
    let mut m: Vec<Memory> = w
        .memories_of(who)
        .filter(|m| m.recallable())
        .cloned()
        .collect();
    m.sort_by_key(|m| (m.created, m.id));
    m
}

/// Checks every answer of `engine` about `at` against a replay of `log` (the branch's).
fn check_point(engine: &mut Engine, log: &[Event], at: &AsOf, who: EntityId) {
    let seq = match at.point {
        HistoryPoint::Seq(s) => Some(s as usize),
        HistoryPoint::Time(t) => seq_at(log, t),
    };
    let Some(seq) = seq else {
        let e = engine
            .memories_at(who, at)
            .expect_err("a time before the world");
        assert_eq!(e.kind(), ErrorKind::Invalid, "{at}: {e}");
        return;
    };
    let reference = replayed(log, seq);
    let world = engine.world_at(at).expect("world_at");
    assert_eq!(world.seq() as usize, seq, "{at}");
    assert!(
        world.to_bytes() == reference.to_bytes(),
        "the world as of {at} differs from a replay to seq {seq}"
    );
    if reference.entity(who).is_none() {
        let e = engine
            .memories_at(who, at)
            .expect_err("no such entity then");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        let e = engine.beliefs_at(who, at).expect_err("no such entity then");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        return;
    }
    let m = engine.memories_at(who, at).expect("memories_at");
    assert_eq!(m.seq as usize, seq);
    assert_eq!(m.now, reference.now());
    assert_eq!(m.memories, expected_memories(&reference, who), "{at}");
    assert!(
        m.memories
            .iter()
            .all(|x| x.owner == who && x.witnesses.contains(who))
    );
    let b = engine.beliefs_at(who, at).expect("beliefs_at");
    assert_eq!(b.seq as usize, seq);
    assert_eq!(
        json(&b.beliefs),
        json(&reference.beliefs_of(who, reference.now())),
        "{at}"
    );
    let edges: Vec<Edge> = reference.edges_from(who).cloned().collect();
    assert_eq!(b.edges, edges, "{at}");
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    /// For random sessions (memories formed, recalled and removed; edges; beliefs; reports;
    /// renames and removals; rewinds, forks and branch switches) and random points of every
    /// branch, by seq and by time, the answers equal a replay from scratch to that point,
    /// whatever the checkpoint spacing and cap, with the index of past beliefs on or off.
    #[test]
    fn answers_equal_a_replay_from_scratch(
        ops in proptest::collection::vec(op(), 1..80),
        every in 1u64..24,
        cap in 1usize..6,
        index in any::<bool>(),
        probes in proptest::collection::vec((0usize..8, 0usize..1000, any::<bool>(), 0usize..8), 1..16),
    ) {
        let mut engine = Engine::in_memory("History", T0).expect("engine");
        engine.set_history_options(HistoryOptions { checkpoint_every: every, max_checkpoints: cap, belief_index: index }).expect("options");
        play(&mut engine, &ops);
        let logs = logs(&mut engine);
        let names: Vec<&String> = logs.keys().collect();
        for (b, point, by_time, who) in probes {
            let name = names[b % names.len()];
            let log = &logs[name];
            let at = if by_time {
                let end = replayed(log, log.len()).now();
                // Some before the world, most within it, some after its end.
                AsOf::time(T0 - 50 + (point as Millis * (end - T0 + 100)) / 1000)
            } else {
                AsOf::seq(1 + (point * log.len() / 1000) as Seq)
            };
            let at = if name == engine.current_branch() && b % 2 == 0 { at } else { at.on_branch(name.as_str()) };
            let people: Vec<EntityId> = replayed(log, log.len()).entities().map(|e| e.id).collect();
            let who = people.get(who % people.len().max(1)).copied().unwrap_or(EntityId(999));
            check_point(&mut engine, log, &at, who);
        }
        prop_assert!(engine.history_stats().checkpoints <= cap);
    }
}

/// A small world: Mira and Tobias, a memory Mira later loses, a belief that changes.
struct Story {
    engine: Engine,
    mira: EntityId,
    tobias: EntityId,
    /// The head when Mira still held the note and believed Tobias calm.
    before: Seq,
    /// The clock then.
    before_time: Millis,
}

fn story() -> Story {
    let mut engine = Engine::in_memory("History", T0).expect("engine");
    let mira = EntityId(engine.world().next_id());
    let tobias = EntityId(mira.0 + 1);
    engine
        .append(vec![person(mira, "Mira"), person(tobias, "Tobias")])
        .expect("people");
    let note = engine
        .add_memory(NewMemory::new(mira, "The key is under the blue mat"))
        .expect("memory");
    engine
        .observe_belief_json(
            &format!(
                r#"{{"observer": {}, "about": {}, "mood": "calm"}}"#,
                mira.0, tobias.0
            ),
            T0 + 1_000,
        )
        .expect("belief");
    let before = engine.head();
    let before_time = engine.world().now();
    engine
        .append(vec![Event::TimeAdvanced { to: T0 + 60_000 }])
        .expect("time");
    engine.remove_memory(note).expect("forget");
    engine
        .observe_belief_json(
            &format!(
                r#"{{"observer": {}, "about": {}, "mood": "furious"}}"#,
                mira.0, tobias.0
            ),
            T0 + 70_000,
        )
        .expect("belief");
    Story {
        engine,
        mira,
        tobias,
        before,
        before_time,
    }
}

#[test]
fn the_past_is_answered_as_it_was_and_the_present_as_it_is() {
    let Story {
        mut engine,
        mira,
        tobias,
        before,
        before_time,
    } = story();
    let then = engine.memories_at(mira, &AsOf::seq(before)).expect("then");
    assert_eq!(then.memories.len(), 1);
    assert_eq!(then.memories[0].text, "The key is under the blue mat");
    assert_eq!(
        (then.seq, then.now, then.branch.as_str()),
        (before, before_time, "main")
    );
    let now = engine
        .memories_at(mira, &AsOf::seq(engine.head()))
        .expect("now");
    assert!(now.memories.is_empty());
    // By time: the last event at or before it.
    let by_time = engine
        .beliefs_at(mira, &AsOf::time(T0 + 59_999))
        .expect("by time");
    assert_eq!(by_time.seq, before);
    let mood = |b: &BeliefsAt| b.beliefs[0].mood.as_ref().map(|m| m.value.clone());
    assert_eq!(by_time.beliefs[0].about, tobias);
    assert_eq!(mood(&by_time).as_deref(), Some("calm"));
    let latest = engine
        .beliefs_at(mira, &AsOf::time(Millis::MAX))
        .expect("latest");
    assert_eq!(latest.seq, engine.head());
    assert_eq!(mood(&latest).as_deref(), Some("furious"));
    // Tobias believes nothing and remembers nothing, then as now.
    assert!(
        engine
            .beliefs_at(tobias, &AsOf::seq(before))
            .expect("b")
            .beliefs
            .is_empty()
    );
}

#[test]
fn bad_points_are_refused_with_their_kinds_and_change_nothing() {
    let Story {
        mut engine, mira, ..
    } = story();
    let head = engine.head();
    let cases: Vec<(AsOf, EntityId, ErrorKind)> = vec![
        (AsOf::seq(1).on_branch("nowhere"), mira, ErrorKind::NotFound),
        (AsOf::seq(head + 1), mira, ErrorKind::Invalid),
        (AsOf::seq(0), mira, ErrorKind::Invalid),
        (AsOf::time(T0 - 1), mira, ErrorKind::Invalid),
        (AsOf::seq(head), EntityId(4242), ErrorKind::NotFound),
        // Mira did not exist yet at seq 1.
        (AsOf::seq(1), mira, ErrorKind::NotFound),
    ];
    for (at, who, kind) in cases {
        let e = engine.memories_at(who, &at).expect_err("refused");
        assert_eq!(e.kind(), kind, "memories_at {at}: {e}");
        let e = engine.beliefs_at(who, &at).expect_err("refused");
        assert_eq!(e.kind(), kind, "beliefs_at {at}: {e}");
    }
    assert_eq!(engine.head(), head);
    assert!(
        engine
            .set_history_options(HistoryOptions {
                checkpoint_every: 0,
                max_checkpoints: 4,
                belief_index: true,
            })
            .is_err()
    );
    for json in [
        r#"{"seq": 1, "time": 1}"#,
        r#"{}"#,
        r#"{"seq": "1"}"#,
        r#"{"sec": 1}"#,
    ] {
        assert_eq!(
            AsOf::from_json(json).expect_err(json).kind(),
            ErrorKind::Invalid
        );
    }
}

#[test]
fn a_rewound_tail_and_a_fork_keep_their_own_past() {
    let Story {
        mut engine,
        mira,
        before,
        ..
    } = story();
    let head = engine.head();
    let tail = engine.rewind(before).expect("rewind").expect("a tail");
    // On the new main the note was never lost; on the tail it was.
    engine
        .add_memory(NewMemory::new(mira, "A second note"))
        .expect("memory");
    let main_now = engine
        .memories_at(mira, &AsOf::seq(engine.head()))
        .expect("main");
    assert_eq!(main_now.memories.len(), 2);
    let tail_end = engine
        .memories_at(mira, &AsOf::seq(head).on_branch(tail.as_str()))
        .expect("tail");
    assert!(tail_end.memories.is_empty());
    assert_eq!(tail_end.branch, tail);
    // Seq `head` does not exist on the new main.
    assert_eq!(
        engine
            .memories_at(mira, &AsOf::seq(head))
            .expect_err("past the head")
            .kind(),
        ErrorKind::Invalid
    );
    // A fork shares the past up to its fork point.
    engine.fork(before, "what-if").expect("fork");
    let shared = engine
        .memories_at(mira, &AsOf::seq(before).on_branch("what-if"))
        .expect("fork");
    assert_eq!(shared.memories.len(), 1);
}

#[test]
fn a_reopened_save_answers_from_its_snapshots_and_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("history.rp");
    let options = EngineOptions {
        snapshot_every: 16,
        ..EngineOptions::default()
    };
    let mut engine = Engine::create_with(&path, "History", T0, options.clone()).expect("create");
    let ops: Vec<Op> = (0..120)
        .map(|i| match i % 6 {
            0 if i < 30 => Op::Person,
            1 => Op::Memory {
                owner: i,
                witness: i / 2,
                significance: 5,
            },
            2 => Op::Believe {
                observer: i,
                about: i + 1,
                mood: (i % 4) as u8,
                confidence: 7,
            },
            3 => Op::Advance { ms: 700 },
            4 => Op::Forget { nth: i },
            _ => Op::Edge {
                from: i,
                to: i + 2,
                affinity: 3,
            },
        })
        .collect();
    play(&mut engine, &ops);
    let log = logs(&mut engine).remove("main").expect("main");
    drop(engine);
    let mut engine = Engine::open_with(&path, options).expect("open");
    assert_eq!(engine.history_stats().checkpoints, 0, "nothing kept yet");
    engine
        .set_history_options(HistoryOptions {
            checkpoint_every: 8,
            max_checkpoints: 100,
            belief_index: true,
        })
        .expect("options");
    let people: Vec<EntityId> = engine.world().entities().map(|e| e.id).collect();
    for (i, seq) in [log.len(), 3, log.len() / 2, 40, log.len() - 1, 7]
        .into_iter()
        .enumerate()
    {
        check_point(
            &mut engine,
            &log,
            &AsOf::seq(seq as Seq),
            people[i % people.len()],
        );
    }
    let end = engine.world().now();
    for t in [T0, T0 + 5_000, end - 1, end] {
        check_point(&mut engine, &log, &AsOf::time(t), people[0]);
    }
    assert!(
        engine.history_stats().checkpoints > 0,
        "replays keep checkpoints"
    );
}

/// A scripted answer naming no sources.
fn answer(text: &str) -> GenerateResult {
    GenerateResult::text(format!(
        r#"{{"type": "answer", "content": "{text}", "confidence": "high", "sources": []}}"#
    ))
}

#[test]
fn a_query_asked_about_the_past_reads_that_past_and_is_recorded_today() {
    let Story {
        mut engine,
        mira,
        before,
        ..
    } = story();
    let head = engine.head();
    let ask = |engine: &mut Engine, input: QueryInput| {
        let mut q = engine.begin_query(input).expect("begin");
        let context = q.machine().context().clone();
        while let Step::Generate(_) = q.step().expect("step") {
            q.provide(answer("Under the mat.")).expect("provide");
        }
        (context, q.finish().expect("finish"))
    };
    let now = T0 + 100_000;
    let question = "Where is the key?";
    let (then, outcome) = ask(
        &mut engine,
        QueryInput::new(question, now)
            .asked_as(mira)
            .as_of(AsOf::seq(before)),
    );
    let texts = |c: &rp_core::query::QueryContext| -> Vec<String> {
        serde_json::to_value(c).expect("json")["memories"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| m["text"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(texts(&then), ["The key is under the blue mat"]);
    // Recorded today, noting the past it asked about.
    assert_eq!(outcome.seq, head + 2);
    assert_eq!(outcome.query.config.as_of, Some(AsOf::seq(before)));
    assert_eq!(
        engine
            .get_query(outcome.query.id)
            .expect("record")
            .config
            .as_of,
        Some(AsOf::seq(before))
    );
    // Asked about today, the note is gone.
    let (today, _) = ask(&mut engine, QueryInput::new(question, now).asked_as(mira));
    assert!(texts(&today).is_empty());
    // Bad points are refused before anything is asked, with the kinds of memories_at.
    for (at, kind) in [
        (AsOf::seq(1).on_branch("nowhere"), ErrorKind::NotFound),
        (AsOf::time(0), ErrorKind::Invalid),
        (AsOf::seq(1), ErrorKind::NotFound), // Mira did not exist yet
    ] {
        let e = engine
            .begin_query(QueryInput::new(question, now).asked_as(mira).as_of(at))
            .expect_err("refused");
        assert_eq!(e.kind(), kind, "{e}");
    }
    // The configuration reads `as_of` from JSON like every other field.
    let input = QueryInput::from_json(
        r#"{"text": "Who?", "now": 5, "config": {"as_of": {"time": 1000, "branch": "main"}}}"#,
    )
    .expect("input");
    assert_eq!(
        input.config,
        QueryConfig {
            as_of: Some(AsOf::time(1000).on_branch("main")),
            ..QueryConfig::default()
        }
    );
}

#[test]
fn commits_keep_checkpoints_only_once_the_past_was_asked_about() {
    let mut engine = Engine::in_memory("History", T0).expect("engine");
    engine
        .set_history_options(HistoryOptions {
            checkpoint_every: 4,
            max_checkpoints: 3,
            belief_index: true,
        })
        .expect("options");
    let tick = |engine: &mut Engine, n: Millis| {
        for i in 0..n {
            let to = engine.world().now() + 1 + i;
            engine
                .append(vec![Event::TimeAdvanced { to }])
                .expect("time");
        }
    };
    tick(&mut engine, 40);
    assert_eq!(
        engine.history_stats().checkpoints,
        0,
        "a host that never asks pays nothing"
    );
    engine.world_at(&AsOf::seq(10)).expect("the past");
    let asked = engine.history_stats();
    assert!(asked.checkpoints >= 1);
    tick(&mut engine, 40);
    let later = engine.history_stats();
    assert!(later.checkpoints <= 3, "the cap holds: {later:?}");
    assert!(
        later.spacing >= asked.spacing,
        "past the cap the spacing grows: {later:?}"
    );
    assert!(
        engine
            .world_at(&AsOf::seq(engine.head() - 1))
            .expect("near the head")
            .seq()
            == engine.head() - 1
    );
}

#[test]
fn a_query_about_the_past_sees_what_a_query_asked_then_saw() {
    for asked_as in [true, false] {
        let Story {
            mut engine,
            mira,
            before,
            before_time,
            ..
        } = story();
        let input = || {
            let q = QueryInput::new("Where is the key Mira hid?", before_time);
            if asked_as { q.asked_as(mira) } else { q }
        };
        let then = engine
            .begin_query(input().as_of(AsOf::seq(before)))
            .expect("as of")
            .machine()
            .context()
            .clone();
        engine.rewind(before).expect("rewind");
        let asked_then = engine
            .begin_query(input())
            .expect("then")
            .machine()
            .context()
            .clone();
        assert_eq!(then, asked_then, "asked as Mira: {asked_as}");
    }
}
