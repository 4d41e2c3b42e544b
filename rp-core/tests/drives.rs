//! Characters that live between turns (docs/drives.md): drives read at any time, the tick
//! asking for a line only when a pressure crosses its threshold with its gates open, sleep
//! with disturbance, the inbox, and replay equal to the live world across all of it.

use proptest::prelude::*;
use rp_core::machine::Step;
use rp_core::machine::block_on;
use rp_core::tick::{TickOptions, advance};
use rp_core::turn::{ScriptedGenerator, TurnInput};
use rp_core::*;

mod support;
use support::tavern::{self, replay};

const HOUR: i64 = 3_600_000;
const MINUTE: i64 = 60_000;

struct Tavern {
    engine: Engine,
    wren: EntityId,
    tobias: EntityId,
}

/// The room (tests/support/tavern.rs) with Tobias, who likes Wren; Tobias's drives as `config`.
fn tavern(config: DriveConfig) -> Tavern {
    let options = EngineOptions {
        settings: WorldSettings {
            dialogue_window: 16,
            seed: 7,
        },
        ..EngineOptions::default()
    };
    let (engine, wren, tobias) = tavern::two(options, 8 * HOUR, 0.5, config);
    Tavern {
        engine,
        wren,
        tobias,
    }
}

/// The next moment due that is not an initiation's feedback, the feedback ticks before it
/// run (they ask no model: nobody answered).
fn next_but_feedback(engine: &mut Engine) -> drives::NextTick {
    loop {
        let next = engine.next_tick_at(engine.world().now()).unwrap().unwrap();
        if next.reason != drives::TickReason::Feedback {
            return next;
        }
        let mut tick = engine.begin_tick(next.at, TickOptions::default()).unwrap();
        assert_eq!(tick.step(engine).unwrap(), Step::Done, "no model call");
        assert_eq!(tick.finish(engine).unwrap().learned.len(), 1);
    }
}

/// Plays time up to `at` (the ticks due before it run, with `generator` for their lines).
fn play_to(t: &mut Tavern, at: Millis, generator: &ScriptedGenerator) {
    block_on(advance(
        &mut t.engine,
        at,
        &TickOptions::default(),
        generator,
    ))
    .unwrap();
}

/// Wren says `text` at `at`; Tobias answers as the sheet decides, his lines from `generator`.
fn wren_says(t: &mut Tavern, text: &str, at: Millis, generator: &ScriptedGenerator) {
    t.engine
        .run_turn_blocking(
            TurnInput::say(t.wren, text, at),
            Default::default(),
            generator,
            &mut rp_core::machine::NoSink,
        )
        .unwrap();
}

fn chatty() -> DriveConfig {
    DriveConfig {
        social_debt_per_hour: Some(4.0),
        ..Default::default()
    }
}

#[test]
fn drives_are_functions_of_time_without_ticking() {
    let mut t = tavern(DriveConfig::default());
    let start = t.engine.drives(t.tobias, 8 * HOUR).unwrap();
    assert_eq!(start.energy, 1.0);
    assert_eq!(start.social_debt, vec![(t.wren, 0.0)]);
    let later = t.engine.drives(t.tobias, 10 * HOUR).unwrap();
    assert!((later.energy - 0.92).abs() < 1e-9, "{}", later.energy);
    // 0.25 per hour × (1 + affinity 0.5) × (1.5 − patience 0.5), two hours.
    assert!((later.social_debt[0].1 - 0.75).abs() < 1e-9);
    let head = t.engine.head();
    t.engine.drives(t.tobias, 20 * HOUR).unwrap();
    assert_eq!(t.engine.head(), head, "reading drives commits nothing");
}

#[test]
fn the_tick_before_the_crossing_does_nothing_and_at_it_asks_for_a_line() {
    let mut t = tavern(chatty());
    let next = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    assert_eq!(
        next.reason,
        drives::TickReason::Pressure { to: t.wren },
        "{next:?}"
    );
    assert!(next.at > 8 * HOUR);
    let head = t.engine.head();
    let mut early = t
        .engine
        .begin_tick(next.at - 1, TickOptions::default())
        .unwrap();
    assert_eq!(early.step(&mut t.engine).unwrap(), Step::Done);
    let outcome = early.finish(&mut t.engine).unwrap();
    assert!(outcome.initiations.is_empty() && outcome.changes.is_empty());
    assert_eq!(
        t.engine.head(),
        head,
        "a tick with nothing due commits nothing"
    );

    let candidates = t.engine.initiation_candidates(t.tobias, next.at).unwrap();
    assert!(candidates[0].score >= candidates[0].threshold - 1e-9);
    let mut tick = t
        .engine
        .begin_tick(next.at, TickOptions::default())
        .unwrap();
    let Step::Generate(request) = tick.step(&mut t.engine).unwrap() else {
        panic!("the crossing asks for a line");
    };
    assert_eq!(request.purpose, Purpose::Initiate { speaker: t.tobias });
    assert!(
        request
            .messages
            .iter()
            .any(|m| m.content.contains("You decide to speak first, to Wren")),
        "the prompt says why it speaks now"
    );
    tick.provide(
        &mut t.engine,
        GenerateResult::text("Quiet night, isn't it?"),
    )
    .unwrap();
    while let Step::Generate(_) = tick.step(&mut t.engine).unwrap() {
        tick.provide(&mut t.engine, GenerateResult::text(""))
            .unwrap();
    }
    let outcome = tick.finish(&mut t.engine).unwrap();
    assert_eq!(outcome.initiations.len(), 1);
    let first = &outcome.initiations[0];
    assert_eq!(
        first.candidate.pushed_over_by.as_deref(),
        Some("social_debt")
    );
    assert!(first.explanation.contains("Tobias → Wren"));
    let line = t.engine.world().dialogue().last().unwrap().clone();
    assert_eq!(line.text, "Quiet night, isn't it?");
    assert!(line.witnesses.contains(t.wren));
    // Speaking relieved the debt.
    let after = t.engine.drives(t.tobias, next.at).unwrap();
    assert_eq!(after.social_debt[0].1, 0.0);
    assert!(
        t.engine
            .next_tick_at(next.at)
            .unwrap()
            .is_none_or(|n| n.at > next.at)
    );
}

#[test]
fn an_initiation_closes_the_scenes_due_around_it_first() {
    // Slow enough that the scene of the first line is over an hour old at the second.
    // Learning off: being ignored would otherwise make him wait longer (docs/rules.md).
    let mut t = tavern(DriveConfig {
        social_debt_per_hour: Some(0.4),
        learn_timing: Some(0.0),
        learn_personality: Some(0.0),
        ..Default::default()
    });
    let mut purposes = Vec::new();
    for _ in 0..2 {
        let next = next_but_feedback(&mut t.engine);
        assert!(
            matches!(next.reason, drives::TickReason::Pressure { .. }),
            "{next:?}"
        );
        let mut tick = t
            .engine
            .begin_tick(next.at, TickOptions::default())
            .unwrap();
        while let Step::Generate(request) = tick.step(&mut t.engine).unwrap() {
            purposes.push(request.purpose.name());
            let text = match request.purpose {
                Purpose::StateUpdate => r#"{"reports": []}"#,
                _ => "The rain, again.",
            };
            tick.provide(&mut t.engine, GenerateResult::text(text))
                .unwrap();
        }
        assert_eq!(tick.finish(&mut t.engine).unwrap().initiations.len(), 1);
    }
    let first = purposes.iter().position(|p| *p == "initiate").unwrap();
    let second = purposes.iter().rposition(|p| *p == "initiate").unwrap();
    assert!(
        purposes[first + 1..second].contains(&"summary"),
        "the first scene is summarised before the second line: {purposes:?}"
    );
    let scenes: Vec<&Scene> = t.engine.world().scenes().collect();
    assert_eq!(scenes.len(), 2);
    assert!(!scenes[0].is_open() && scenes[1].is_open());
}

#[test]
fn an_unanswered_approach_holds_the_next_one_back_until_an_answer() {
    let mut t = tavern(chatty());
    let generator = ScriptedGenerator::new("Evening. ({n})");
    let first = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    play_to(&mut t, first.at, &generator);
    let ignored = t.engine.world().belief(t.tobias, t.wren).unwrap();
    assert_eq!((ignored.availability, ignored.at), (0.0, first.at));
    // Social debt alone would bring him back in ten minutes; the unanswered line makes it
    // longer, until the belief fades (half an hour on, he learns from being ignored:
    // docs/rules.md).
    let second = t.engine.next_tick_at(first.at).unwrap().unwrap();
    assert_eq!(
        (second.at - first.at, second.reason),
        (30 * MINUTE, drives::TickReason::Feedback),
        "nothing before the wait for an answer ends"
    );
    let c = t
        .engine
        .initiation_candidates(t.tobias, first.at + 20 * MINUTE)
        .unwrap();
    assert!(
        c[0].gates
            .iter()
            .any(|g| g.name == "availability" && !g.open)
    );
    // Wren answers: he is available again.
    wren_says(&mut t, "Evening to you.", first.at + MINUTE, &generator);
    let answered = t.engine.world().belief(t.tobias, t.wren).unwrap();
    assert_eq!(answered.availability, 1.0);
}

/// A line heard is one entry per hearer (docs/drives.md, "Events"): what the hearer saw of
/// the speaker and their contact. An approach unanswered stands over what was seen, not over
/// the contact; replay and a snapshot give the world as played.
#[test]
fn an_approach_unanswered_changes_what_was_seen_not_the_contact() {
    let mut t = tavern(chatty());
    let generator = ScriptedGenerator::new("Evening. ({n})");
    let said = 8 * HOUR + MINUTE;
    wren_says(&mut t, "Quiet tonight.", said, &generator);
    assert_eq!(t.engine.world().contact(t.tobias, t.wren), Some(said));
    let first = next_but_feedback(&mut t.engine);
    assert!(matches!(first.reason, drives::TickReason::Pressure { .. }));
    play_to(&mut t, first.at, &generator);
    let world = t.engine.world();
    let ignored = world.belief(t.tobias, t.wren).unwrap();
    assert_eq!((ignored.availability, ignored.at), (0.0, first.at));
    // Wren heard his approach: they were in contact then, both ways.
    assert_eq!(world.contact(t.tobias, t.wren), Some(first.at));
    assert_eq!(world.contact(t.wren, t.tobias), Some(first.at));
    let snapshot = rp_core::log::codec::encode_snapshot(world);
    let loaded = rp_core::log::codec::decode_snapshot(&snapshot, "test").unwrap();
    assert_eq!(loaded.to_bytes(), world.to_bytes());
    assert_eq!(replay(&t.engine).to_bytes(), world.to_bytes());

    let answered_at = first.at + MINUTE;
    wren_says(&mut t, "Evening to you.", answered_at, &generator);
    let world = t.engine.world();
    let answered = world.belief(t.tobias, t.wren).unwrap();
    assert_eq!((answered.availability, answered.at), (1.0, answered_at));
    assert!(world.contact(t.tobias, t.wren) >= Some(answered_at));
    assert_eq!(replay(&t.engine).to_bytes(), world.to_bytes());
}

#[test]
fn the_sheet_can_hold_an_initiation_back() {
    let mut t = tavern(chatty());
    t.engine
        .append(vec![Event::EntityEdited {
            id: t.tobias,
            name: None,
            aliases: None,
            facts: Some(FactSheet::from_text("$initiate false")),
            host_controlled: None,
        }])
        .unwrap();
    let next = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    let mut tick = t
        .engine
        .begin_tick(next.at, TickOptions::default())
        .unwrap();
    assert_eq!(tick.step(&mut t.engine).unwrap(), Step::Done);
    let outcome = tick.finish(&mut t.engine).unwrap();
    assert!(outcome.initiations.is_empty());
    assert_eq!(outcome.held.len(), 1);
    assert!(
        outcome.held[0]
            .1
            .iter()
            .any(|g| g.name == "sheet" && !g.open)
    );
    // Held for a processing interval: the next tick is later, not the same moment again.
    let again = t.engine.next_tick_at(next.at).unwrap().unwrap();
    assert!(again.at > next.at);
}

#[test]
fn a_sheet_reads_the_drives_in_response_control() {
    let mut t = tavern(DriveConfig {
        social_debt_per_hour: Some(0.0),
        sleep_energy: Some(0.0),
        ..Default::default()
    });
    t.engine
        .append(vec![Event::EntityEdited {
            id: t.tobias,
            name: None,
            aliases: None,
            facts: Some(FactSheet::from_text(
                "A fisherman.\n$if drives.energy < 0.5: $respond false",
            )),
            host_controlled: None,
        }])
        .unwrap();
    let generator = ScriptedGenerator::default();
    let say = |t: &mut Tavern, at| {
        t.engine
            .run_turn_blocking(
                TurnInput::say(t.wren, "Tobias, still up?", at),
                Default::default(),
                &generator,
                &mut rp_core::machine::NoSink,
            )
            .unwrap()
    };
    // Fresh at 9:00 (energy ~0.96): he answers. After fourteen hours awake (~0.4): he doesn't.
    assert_eq!(say(&mut t, 9 * HOUR).replies.len(), 1);
    let tired = say(&mut t, 23 * HOUR);
    assert!(tired.replies.is_empty(), "{:?}", tired.decisions);
    assert!(
        tired.decisions[0]
            .decision
            .explain()
            .contains("$respond false")
    );
}

#[test]
fn twenty_low_stimuli_wake_a_rested_sleeper() {
    // No drain: energy stays 1.0, so the wake threshold is 0.5 (seed 004). No social debt
    // either: nothing but the night is due.
    let mut t = tavern(DriveConfig {
        energy_drain_per_hour: Some(0.0),
        social_debt_per_hour: Some(0.0),
        ..Default::default()
    });
    let night = 22 * HOUR;
    let next = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    assert_eq!(next.reason, drives::TickReason::Sleep, "{next:?}");
    assert_eq!(next.at, night, "{next:?}");
    let mut tick = t.engine.begin_tick(night, TickOptions::default()).unwrap();
    assert_eq!(tick.step(&mut t.engine).unwrap(), Step::Done);
    tick.finish(&mut t.engine).unwrap();
    assert!(t.engine.world().mind(t.tobias).unwrap().asleep);
    let mut woke_at = None;
    for i in 1..=20 {
        let now = night + i * MINUTE;
        t.engine
            .notify(t.tobias, "sound", Priority::Low, "a drip", now)
            .unwrap();
        if woke_at.is_none() && !t.engine.world().mind(t.tobias).unwrap().asleep {
            woke_at = Some(i);
        }
    }
    let woke_at = woke_at.expect("twenty LOW stimuli wake a sleeper with energy 1.0");
    assert!(woke_at > 1, "one LOW stimulus does not");
    let notes = t
        .engine
        .drives(t.tobias, night + 20 * MINUTE)
        .unwrap()
        .notes;
    assert!(notes.iter().any(|n| n.fate == InboxFate::Woke));
}

#[test]
fn a_sleeper_neither_hears_nor_answers_unless_the_line_wakes_it() {
    let mut t = tavern(DriveConfig {
        energy_drain_per_hour: Some(0.0),
        ..Default::default()
    });
    let night = 23 * HOUR;
    let mut tick = t.engine.begin_tick(night, TickOptions::default()).unwrap();
    assert_eq!(tick.step(&mut t.engine).unwrap(), Step::Done);
    tick.finish(&mut t.engine).unwrap();
    assert!(t.engine.world().mind(t.tobias).unwrap().asleep);
    let generator = ScriptedGenerator::default();
    let outcome = t
        .engine
        .run_turn_blocking(
            TurnInput::say(t.wren, "The rain again.", night + MINUTE),
            Default::default(),
            &generator,
            &mut rp_core::machine::NoSink,
        )
        .unwrap();
    assert!(outcome.replies.is_empty());
    let line = t.engine.world().dialogue().last().unwrap().clone();
    assert!(!line.witnesses.contains(t.tobias), "asleep: not a witness");
    // Still there to be seen: a prompt shows him, asleep.
    assert!(t.engine.world().within_earshot(t.wren).contains(t.tobias));
    assert!(!t.engine.world().hearers(t.wren).contains(t.tobias));
    assert!(t.engine.world().memories_of(t.tobias).next().is_none());
    // Named three times, loudly enough to cross the threshold: the third line wakes him.
    for i in 2..5 {
        t.engine
            .run_turn_blocking(
                TurnInput::say(t.wren, "Tobias! Tobias, wake up.", night + i * MINUTE),
                Default::default(),
                &generator,
                &mut rp_core::machine::NoSink,
            )
            .unwrap();
    }
    assert!(!t.engine.world().mind(t.tobias).unwrap().asleep);
    let line = t.engine.world().dialogue().last().unwrap().clone();
    assert!(line.witnesses.contains(t.tobias) || line.speaker == t.tobias);
}

#[test]
fn the_inbox_merges_drops_and_never_drops_critical() {
    let mut t = tavern(DriveConfig {
        inbox_capacity: Some(2),
        ..Default::default()
    });
    let now = 9 * HOUR;
    let a = t
        .engine
        .notify(t.tobias, "sound", Priority::Low, "a knock", now)
        .unwrap();
    t.engine
        .notify(
            t.tobias,
            "sound",
            Priority::Low,
            "another knock",
            now + 1_000,
        )
        .unwrap();
    let d = t.engine.drives(t.tobias, now + 1_000).unwrap();
    assert_eq!(d.inbox.len(), 1);
    assert_eq!(d.inbox[0].count, 2);
    assert!(d.notes.iter().any(|n| n.fate == InboxFate::Merged(a)));
    t.engine
        .notify(t.tobias, "sight", Priority::Critical, "fire!", now + 2_000)
        .unwrap();
    t.engine
        .notify(t.tobias, "message", Priority::Critical, "help", now + 3_000)
        .unwrap();
    let d = t.engine.drives(t.tobias, now + 3_000).unwrap();
    assert!(d.inbox.iter().all(|s| s.priority == Priority::Critical));
    assert!(d.notes.iter().any(|n| n.fate == InboxFate::Overflow));
    // Critical stimuli are due at once; the tick processes them into the next prompt.
    let next = t.engine.next_tick_at(now + 3_000).unwrap().unwrap();
    assert_eq!(next.reason, drives::TickReason::Inbox);
    let mut tick = t
        .engine
        .begin_tick(next.at, TickOptions::default())
        .unwrap();
    while let Step::Generate(_) = tick.step(&mut t.engine).unwrap() {
        tick.provide(&mut t.engine, GenerateResult::text(""))
            .unwrap();
    }
    let outcome = tick.finish(&mut t.engine).unwrap();
    assert_eq!(outcome.changes[0].processed.len(), 2);
    let prompt = t
        .engine
        .inspect_prompt(t.tobias, Some("?"), next.at, &Default::default())
        .unwrap();
    assert!(prompt.text().contains("fire!"));
}

#[test]
fn bad_input_is_a_clear_error_that_changes_nothing() {
    let mut t = tavern(DriveConfig::default());
    let head = t.engine.head();
    let bytes = t.engine.world().to_bytes();
    let negative = DriveConfig {
        energy_drain_per_hour: Some(-1.0),
        ..Default::default()
    };
    let e = t
        .engine
        .configure_drives(Some(t.tobias), negative)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("energy_drain_per_hour"), "{e}");
    let shy = Personality {
        shyness: 1.5,
        ..Default::default()
    };
    let e = t.engine.set_personality(t.tobias, shy).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("shyness"));
    let e = t
        .engine
        .notify(t.tobias, "smell", Priority::Low, "", 9 * HOUR)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("unknown stimulus kind"), "{e}");
    // Bad options are refused even when no tick would run to see them.
    let mut bad = TickOptions::default();
    bad.turn.max_responders = 0;
    let nothing = ScriptedGenerator::default();
    let e = block_on(advance(&mut t.engine, 9 * HOUR, &bad, &nothing)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert!(e.to_string().contains("max_responders"), "{e}");
    let e = t
        .engine
        .initiation_candidates(t.wren, 9 * HOUR)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "the player has no candidates");
    let e = t.engine.next_tick_at(HOUR).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let e = t
        .engine
        .begin_tick(HOUR, TickOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    let e = t
        .engine
        .set_personality(t.wren, Personality::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid, "the player has no drives");
    assert!(Personality::from_json(r#"{"shyness": 0.2, "boldness": 1}"#).is_err());
    assert!(DriveConfig::from_json(r#"{"threshold": 2}"#).is_err());
    let restless = DriveConfig {
        sleep_energy: Some(0.5),
        wake_energy: Some(0.4),
        ..Default::default()
    };
    let e = t.engine.configure_drives(None, restless).unwrap_err();
    assert!(e.to_string().contains("wake_energy"), "{e}");
    assert_eq!(t.engine.head(), head);
    assert_eq!(t.engine.world().to_bytes(), bytes);
}

#[test]
fn personality_changes_behaviour_not_just_tone() {
    let mut bold = tavern(chatty());
    let mut shy = tavern(chatty());
    let traits = |shyness, independence| Personality {
        shyness,
        independence,
        ..Default::default()
    };
    bold.engine
        .set_personality(bold.tobias, traits(0.0, 1.0))
        .unwrap();
    shy.engine
        .set_personality(shy.tobias, traits(1.0, 0.0))
        .unwrap();
    let b = bold.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    let s = shy.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    assert!(
        b.at < s.at,
        "the bold one speaks up sooner: {} vs {}",
        b.at,
        s.at
    );
    let d = shy.engine.drives(shy.tobias, 8 * HOUR).unwrap();
    assert!(d.threshold > bold.engine.drives(bold.tobias, 8 * HOUR).unwrap().threshold);
}

#[test]
fn advance_plays_time_and_replay_equals_live() {
    let mut t = tavern(DriveConfig::default());
    t.engine
        .set_personality(t.tobias, Personality::default())
        .unwrap();
    t.engine
        .notify(
            t.tobias,
            "sound",
            Priority::High,
            "a door slams",
            8 * HOUR + 1,
        )
        .unwrap();
    let generator = ScriptedGenerator::new("Evening, {name} here. ({n})");
    let outcomes = block_on(advance(
        &mut t.engine,
        32 * HOUR,
        &TickOptions::default(),
        &generator,
    ))
    .unwrap();
    assert_eq!(t.engine.world().now(), 32 * HOUR);
    let initiations: usize = outcomes.iter().map(|o| o.initiations.len()).sum();
    assert!(initiations >= 1);
    let slept = outcomes
        .iter()
        .flat_map(|o| &o.changes)
        .any(|c| c.asleep == Some(true));
    assert!(slept, "night came");
    // Fewer than one model call per game hour.
    assert!(
        generator.requests().len() <= 24,
        "{}",
        generator.requests().len()
    );
    assert_eq!(replay(&t.engine).to_bytes(), t.engine.world().to_bytes());
}

/// Cases per property: `PROPTEST_CASES` for a long run, else 24 (the CI default).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// No generation request is ever yielded before `next_tick_at`, whatever the rates,
    /// weights, personality and affinity: ticking one millisecond before it (or anywhere
    /// before it) asks for nothing and commits nothing, and ticking at it acts (asks for a
    /// line, or commits what it does).
    #[test]
    fn no_request_before_next_tick_at(
        rate in 0.0f64..6.0,
        threshold in 0.3f64..1.0,
        shyness in 0.0f64..1.0,
        patience in 0.0f64..1.0,
        affinity in -1.0f64..1.0,
        drain in 0.0f64..0.5,
        stimulus in prop::option::of(0usize..5),
        probe in 0.0f64..1.0,
    ) {
        let mut t = tavern(DriveConfig {
            social_debt_per_hour: Some(rate),
            threshold: Some(threshold),
            energy_drain_per_hour: Some(drain),
            ..Default::default()
        });
        t.engine.set_personality(t.tobias, Personality { shyness, patience, ..Default::default() }).unwrap();
        let mut edge = t.engine.world().edge(t.tobias, t.wren).unwrap().clone();
        edge.affinity = affinity;
        t.engine.append(vec![Event::EdgeUpdated { edge }]).unwrap();
        let priorities = [Priority::Critical, Priority::High, Priority::Normal, Priority::Low, Priority::Idle];
        if let Some(p) = stimulus {
            t.engine.notify(t.tobias, "sound", priorities[p], "a knock", 8 * HOUR + 1).unwrap();
        }
        for _ in 0..4 {
            let now = t.engine.world().now();
            let Some(next) = t.engine.next_tick_at(now).unwrap() else {
                return Ok(());
            };
            for before in [next.at - 1, now + ((next.at - now) as f64 * probe) as i64] {
                if before < now || before >= next.at {
                    continue;
                }
                let head = t.engine.head();
                let mut tick = t.engine.begin_tick(before, TickOptions::default()).unwrap();
                prop_assert_eq!(tick.step(&mut t.engine).unwrap(), Step::Done);
                prop_assert_eq!(t.engine.head(), head);
                // Every candidate is below its threshold or gated.
                for c in t.engine.initiation_candidates(t.tobias, before).unwrap() {
                    prop_assert!(!c.is_due(), "{}", c.explain(t.engine.world()));
                }
            }
            let head = t.engine.head();
            let mut tick = t.engine.begin_tick(next.at, TickOptions::default()).unwrap();
            let mut asked = false;
            while let Step::Generate(_) = tick.step(&mut t.engine).unwrap() {
                asked = true;
                tick.provide(&mut t.engine, GenerateResult::text("Evening.")).unwrap();
            }
            tick.finish(&mut t.engine).unwrap();
            prop_assert!(asked || t.engine.head() > head, "the tick at {:?} acted", next);
        }
    }

    /// Replay equals the live world across ticks, sleeps, stimuli and initiations.
    #[test]
    fn replay_equals_live_across_days(
        rate in 0.0f64..2.0,
        drain in 0.0f64..0.3,
        knocks in prop::collection::vec((0i64..30 * HOUR, 0usize..5), 0..6),
        hours in 2i64..40,
    ) {
        let mut t = tavern(DriveConfig {
            social_debt_per_hour: Some(rate),
            energy_drain_per_hour: Some(drain),
            ..Default::default()
        });
        let priorities = [Priority::Critical, Priority::High, Priority::Normal, Priority::Low, Priority::Idle];
        let mut knocks = knocks;
        knocks.sort();
        let generator = ScriptedGenerator::new("{name}: well then. ({n})");
        let end = 8 * HOUR + hours * HOUR;
        for (at, p) in knocks {
            let at = 8 * HOUR + at;
            if at > end || at < t.engine.world().now() {
                continue;
            }
            block_on(advance(&mut t.engine, at, &TickOptions::default(), &generator)).unwrap();
            t.engine.notify(t.tobias, "sound", priorities[p], "a knock", at).unwrap();
        }
        block_on(advance(&mut t.engine, end, &TickOptions::default(), &generator)).unwrap();
        let replayed = replay(&t.engine);
        prop_assert_eq!(replayed.to_bytes(), t.engine.world().to_bytes());
        let reopened = Engine::from_store(t.engine.into_store(), EngineOptions::default()).unwrap();
        prop_assert_eq!(reopened.world().to_bytes(), replayed.to_bytes());
    }
}

/// A change a host may try on Tobias.
type Attempt = dyn Fn(&mut Engine, EntityId) -> Result<u64>;

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Hostile settings, traits and stimuli (any float, NaN and infinities included; any kind
    /// name): either a clear error that changes nothing, or accepted, and then reading drives,
    /// solving `next_tick_at` and ticking never panic.
    #[test]
    fn hostile_drive_input_is_refused_or_harmless(
        rate in prop::num::f64::ANY,
        threshold in prop::num::f64::ANY,
        interval in prop::num::f64::ANY,
        night in prop::num::f64::ANY,
        trait_value in prop::num::f64::ANY,
        kind in "[a-z]{0,6}|line|sound",
        later in 0i64..100 * HOUR,
    ) {
        let mut t = tavern(DriveConfig::default());
        let attempts: Vec<Box<Attempt>> = vec![
            Box::new(move |e, who| e.configure_drives(Some(who), DriveConfig {
                social_debt_per_hour: Some(rate),
                threshold: Some(threshold),
                interval_alert_s: Some(interval),
                night_start: Some(night),
                ..Default::default()
            })),
            Box::new(move |e, _| e.configure_drives(None, DriveConfig {
                energy_drain_per_hour: Some(rate),
                energy_recharge_per_hour: Some(interval),
                ..Default::default()
            })),
            Box::new(move |e, who| e.set_personality(who, Personality {
                patience: trait_value,
                ..Default::default()
            })),
            Box::new(move |e, who| {
                let now = e.world().now();
                e.notify(who, &kind, Priority::Low, "?", now)
            }),
            Box::new(move |e, who| {
                let now = e.world().now();
                e.report_availability(who, trait_value, now)
            }),
        ];
        for attempt in &attempts {
            let before = t.engine.world().to_bytes();
            if attempt(&mut t.engine, t.tobias).is_err() {
                prop_assert_eq!(t.engine.world().to_bytes(), before);
            }
        }
        let at = t.engine.world().now() + later;
        t.engine.drives(t.tobias, at).unwrap();
        t.engine.initiation_candidates(t.tobias, at).unwrap();
        if let Some(next) = t.engine.next_tick_at(at).unwrap() {
            prop_assert!(next.at >= at);
            let mut tick = t.engine.begin_tick(next.at, TickOptions::default()).unwrap();
            while let Step::Generate(_) = tick.step(&mut t.engine).unwrap() {
                tick.provide(&mut t.engine, GenerateResult::text("Hm.")).unwrap();
            }
            tick.finish(&mut t.engine).unwrap();
        }
    }
}
