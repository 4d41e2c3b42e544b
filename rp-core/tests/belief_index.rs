//! The index of past beliefs (docs/history.md, "How it is answered"): `beliefs_at` read from
//! it equals `World::beliefs_of` and `World::edges_from` on a replay of the branch's log from
//! scratch to that point, for sessions that change everything a belief reads (lines heard,
//! beliefs with feelings toward third persons, renames of those persons, people mentioned,
//! host reports, drive settings of one entity and of the world, removals, edges), across
//! rewinds, forks and branch switches, with questions asked midway (the index then extended
//! by the events committed after it) and in any order; the same with the index off.

use proptest::prelude::*;
use rp_core::*;

mod support;
use support::history::{json, logs, person, replayed, seq_at};

const T0: Millis = 1_000;

/// One step of a random session.
#[derive(Clone, Debug)]
enum Op {
    Person,
    Mention {
        by: usize,
    },
    Line {
        speaker: usize,
        hearers: u8,
    },
    Believe {
        observer: usize,
        about: usize,
        toward: usize,
        mood: u8,
        confidence: u8,
    },
    Report {
        about: usize,
        availability: u8,
    },
    Configure {
        who: Option<usize>,
        half_life: u8,
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
    Advance {
        ms: u32,
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
        3 => Just(Op::Person),
        1 => (0..8usize).prop_map(|by| Op::Mention { by }),
        5 => (0..8usize, any::<u8>()).prop_map(|(speaker, hearers)| Op::Line { speaker, hearers }),
        4 => (0..8usize, 0..8usize, 0..10usize, 0..4u8, 1..=10u8).prop_map(|(observer, about, toward, mood, confidence)| Op::Believe { observer, about, toward, mood, confidence }),
        1 => (0..8usize, 0..=10u8).prop_map(|(about, availability)| Op::Report { about, availability }),
        1 => (proptest::option::of(0..8usize), 1..48u8).prop_map(|(who, half_life)| Op::Configure { who, half_life }),
        2 => (0..8usize, 0..10usize, -10..=10i8).prop_map(|(from, to, affinity)| Op::Edge { from, to, affinity }),
        1 => (0..8usize, 0..10usize).prop_map(|(from, to)| Op::Unedge { from, to }),
        3 => (0..20_000_000u32).prop_map(|ms| Op::Advance { ms }),
        1 => (0..10usize, 0..1000u16).prop_map(|(who, tag)| Op::Rename { who, tag }),
        1 => (0..10usize).prop_map(|who| Op::Remove { who }),
        1 => (1..20u8).prop_map(|back| Op::Rewind { back }),
        1 => (0..20u8).prop_map(|back| Op::Fork { back }),
        1 => (0..8usize).prop_map(|nth| Op::Switch { nth }),
    ]
}

/// Who plays: the characters created and the people mentioned, in order.
#[derive(Default)]
struct Cast {
    people: Vec<EntityId>,
    mentioned: Vec<EntityId>,
    forks: usize,
}

impl Cast {
    fn pick(&self, i: usize) -> Option<EntityId> {
        self.people.get(i % self.people.len().max(1)).copied()
    }

    /// A character or, past their count, a person mentioned.
    fn anyone(&self, i: usize) -> Option<EntityId> {
        let all: Vec<EntityId> = self.people.iter().chain(&self.mentioned).copied().collect();
        all.get(i % all.len().max(1)).copied()
    }
}

/// Plays `ops` on `engine`; refused steps (an entity gone, an edge missing) change nothing.
fn play(engine: &mut Engine, cast: &mut Cast, ops: &[Op]) {
    for op in ops {
        let now = engine.world().now();
        let _ = match op {
            Op::Person => {
                let id = EntityId(engine.world().next_id());
                cast.people.push(id);
                engine
                    .append(vec![person(id, &format!("P{}", id.0))])
                    .map(drop)
            }
            Op::Mention { by } => {
                let name = format!("Someone {}", engine.world().next_id());
                engine
                    .mention_person(&name, FactSheet::default(), cast.pick(*by), now)
                    .map(|id| cast.mentioned.push(id))
            }
            Op::Line { speaker, hearers } => match cast.pick(*speaker) {
                Some(speaker) => {
                    let mut witnesses: Vec<EntityId> = (0..8)
                        .filter(|i| hearers & (1 << i) != 0)
                        .filter_map(|i| cast.pick(i))
                        .collect();
                    witnesses.push(speaker);
                    let utterance = Utterance {
                        id: UtteranceId(engine.world().next_id()),
                        speaker,
                        text: format!("line at {now}"),
                        at: now,
                        witnesses: witnesses.into_iter().collect(),
                        model: None,
                        scene: None,
                    };
                    engine
                        .append(vec![Event::AssistantTurn { utterance }])
                        .map(drop)
                }
                None => Ok(()),
            },
            Op::Believe {
                observer,
                about,
                toward,
                mood,
                confidence,
            } => match (cast.pick(*observer), cast.anyone(*about)) {
                (Some(o), Some(a)) if o != a => {
                    let mood = ["calm", "tired", "cross", "merry"][usize::from(*mood)];
                    let feelings = match cast.anyone(*toward) {
                        Some(t) if t != a => format!(
                            r#", "feelings": [{{"toward": {}, "sentiment": 0.5, "text": "likes"}}]"#,
                            t.0
                        ),
                        _ => String::new(),
                    };
                    let json = format!(
                        r#"{{"observer": {}, "about": {}, "mood": "{mood}", "traits": ["t{mood}"], "confidence": {}{feelings}}}"#,
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
            } => match cast.pick(*about) {
                Some(about) => engine
                    .append(vec![Event::AvailabilityReported {
                        about,
                        availability: f64::from(*availability) / 10.0,
                        at: now,
                    }])
                    .map(drop),
                None => Ok(()),
            },
            Op::Configure { who, half_life } => {
                let config = DriveConfig {
                    belief_half_life_hours: Some(f64::from(*half_life)),
                    trait_half_life_hours: Some(f64::from(*half_life) * 10.0),
                    ..Default::default()
                };
                let entity = who.and_then(|w| cast.pick(w));
                engine
                    .append(vec![Event::DrivesConfigured {
                        entity,
                        config: Box::new(config),
                    }])
                    .map(drop)
            }
            Op::Edge { from, to, affinity } => match (cast.pick(*from), cast.anyone(*to)) {
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
            Op::Unedge { from, to } => match (cast.pick(*from), cast.anyone(*to)) {
                (Some(from), Some(to)) => engine
                    .append(vec![Event::EdgeRemoved { from, to }])
                    .map(drop),
                _ => Ok(()),
            },
            Op::Advance { ms } => engine
                .append(vec![Event::TimeAdvanced {
                    to: now + Millis::from(*ms),
                }])
                .map(drop),
            Op::Rename { who, tag } => match cast.anyone(*who) {
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
            Op::Remove { who } => match cast.anyone(*who) {
                Some(id) => engine.append(vec![Event::EntityRemoved { id }]).map(drop),
                None => Ok(()),
            },
            Op::Rewind { back } => {
                let to = engine.head().saturating_sub(u64::from(*back)).max(1);
                engine.rewind(to).map(drop)
            }
            Op::Fork { back } => {
                cast.forks += 1;
                let at = engine.head().saturating_sub(u64::from(*back)).max(1);
                engine.fork(at, &format!("fork{}", cast.forks)).map(drop)
            }
            Op::Switch { nth } => {
                let names: Vec<String> = engine.branches().into_iter().map(|b| b.name).collect();
                engine.switch_branch(&names[nth % names.len()])
            }
        };
    }
}

/// Asks `engine` what `who` believed at `at` and checks it against a replay of `log`.
fn check_beliefs(engine: &mut Engine, log: &[Event], at: &AsOf, who: EntityId) {
    let seq = match at.point {
        HistoryPoint::Seq(s) => Some(s as usize),
        HistoryPoint::Time(t) => seq_at(log, t),
    };
    let Some(seq) = seq else {
        let e = engine
            .beliefs_at(who, at)
            .expect_err("a time before the world");
        assert_eq!(e.kind(), ErrorKind::Invalid, "{at}: {e}");
        return;
    };
    let reference = replayed(log, seq);
    if reference.entity(who).is_none() {
        let e = engine.beliefs_at(who, at).expect_err("no such entity then");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{at}: {e}");
        return;
    }
    let b = engine.beliefs_at(who, at).expect("beliefs_at");
    assert_eq!(b.seq as usize, seq, "{at}");
    assert_eq!(b.now, reference.now(), "{at}");
    assert_eq!(
        json(&b.beliefs),
        json(&reference.beliefs_of(who, reference.now())),
        "beliefs of {who} at {at}"
    );
    let edges: Vec<Edge> = reference.edges_from(who).cloned().collect();
    assert_eq!(b.edges, edges, "edges of {who} at {at}");
}

/// Asks about random points of every branch (by seq or time, on the branch named or the
/// current one) and checks each answer.
fn probe(engine: &mut Engine, probes: &[(usize, usize, bool, usize)]) {
    let logs = logs(engine);
    let names: Vec<&String> = logs.keys().collect();
    for &(b, point, by_time, who) in probes {
        let name = names[b % names.len()];
        let log = &logs[name];
        let at = if by_time {
            let end = replayed(log, log.len()).now();
            AsOf::time(T0 - 50 + (point as Millis * (end - T0 + 100)) / 1000)
        } else {
            AsOf::seq(1 + (point * log.len() / 1000) as Seq)
        };
        let at = if name == engine.current_branch() && b % 2 == 0 {
            at
        } else {
            at.on_branch(name.as_str())
        };
        let everyone: Vec<EntityId> = replayed(log, log.len()).entities().map(|e| e.id).collect();
        let who = everyone
            .get(who % everyone.len().max(1))
            .copied()
            .unwrap_or(EntityId(999));
        check_beliefs(engine, log, &at, who);
    }
}

fn probes() -> impl Strategy<Value = Vec<(usize, usize, bool, usize)>> {
    proptest::collection::vec((0usize..8, 0usize..1000, any::<bool>(), 0usize..12), 1..12)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    /// For random sessions played in two halves, with questions after each (so the index is
    /// built, then extended by the events committed, rewound and forked after it), every
    /// answer equals a replay from scratch, with the index on or off and checkpoints of any
    /// spacing.
    #[test]
    fn indexed_beliefs_equal_a_replay_from_scratch(
        first in proptest::collection::vec(op(), 1..60),
        then in proptest::collection::vec(op(), 0..60),
        early in probes(),
        late in probes(),
        every in 1u64..24,
        index in any::<bool>(),
    ) {
        let mut engine = Engine::in_memory("Index", T0).expect("engine");
        engine
            .set_history_options(HistoryOptions { checkpoint_every: every, max_checkpoints: 4, belief_index: index })
            .expect("options");
        let mut cast = Cast::default();
        play(&mut engine, &mut cast, &first);
        probe(&mut engine, &early);
        play(&mut engine, &mut cast, &then);
        probe(&mut engine, &late);
        // Never used when off. (When on, a session whose questions all fall before the world
        // or name no one there never needs it.)
        prop_assert!(index || engine.history_stats().belief_versions == 0);
    }
}

/// A fork and a rewind after the index was built: each branch answers its own past, and the
/// abandoned tail keeps its own.
#[test]
fn a_fork_and_a_rewind_answer_their_own_past() {
    let mut engine = Engine::in_memory("Index", T0).expect("engine");
    let mira = EntityId(engine.world().next_id());
    let wren = EntityId(mira.0 + 1);
    engine
        .append(vec![person(mira, "Mira"), person(wren, "Wren")])
        .expect("people");
    let believe = |engine: &mut Engine, mood: &str| {
        let now = engine.world().now() + 1_000;
        let json = format!(
            r#"{{"observer": {}, "about": {}, "mood": "{mood}"}}"#,
            mira.0, wren.0
        );
        engine.observe_belief_json(&json, now).expect("belief");
    };
    believe(&mut engine, "calm");
    let calm = engine.head();
    believe(&mut engine, "cross");
    let mood = |engine: &mut Engine, at: AsOf| {
        let b = engine.beliefs_at(mira, &at).expect("beliefs_at");
        b.beliefs[0].mood.as_ref().expect("a mood").value.clone()
    };
    let crossed = engine.head();
    assert_eq!(mood(&mut engine, AsOf::seq(crossed)), "cross");
    assert!(engine.history_stats().belief_versions > 0, "indexed");
    engine.fork(calm, "what-if").expect("fork");
    engine.rewind(calm).expect("rewind");
    let kept = engine.history_stats().belief_versions;
    believe(&mut engine, "merry");
    assert!(
        engine.history_stats().belief_versions > kept,
        "a commit is recorded as it is installed, once the index is in use"
    );
    let head = engine.head();
    assert_eq!(mood(&mut engine, AsOf::seq(head)), "merry");
    assert_eq!(mood(&mut engine, AsOf::seq(calm)), "calm");
    assert_eq!(
        mood(&mut engine, AsOf::seq(crossed).on_branch("main~2")),
        "cross"
    );
    assert_eq!(
        mood(&mut engine, AsOf::seq(calm).on_branch("what-if")),
        "calm"
    );
    engine.switch_branch("what-if").expect("switch");
    believe(&mut engine, "tired");
    let tired = engine.head();
    assert_eq!(
        mood(&mut engine, AsOf::seq(tired).on_branch("what-if")),
        "tired"
    );
    assert_eq!(
        mood(&mut engine, AsOf::seq(head).on_branch("main")),
        "merry"
    );
    assert_eq!(mood(&mut engine, AsOf::seq(calm).on_branch("main")), "calm");
}
