//! Rules as data that learn (docs/rules.md): rules from the host, the world file and the model,
//! fired by their time or a stimulus when their condition holds, fading unused and forgotten
//! (back after a rewind); implicit feedback after an initiation (how soon, how much, in what
//! tone) moving the weights that made a character speak, each change recorded with its reason;
//! hostile rules, answers and records refused with nothing applied; replay equal to the live
//! world across all of it.

use proptest::prelude::*;
use rp_core::machine::{GenerateRequest, NoSink, Step, block_on};
use rp_core::tick::{TickOptions, TickOutcome, advance};
use rp_core::turn::{ScriptedGenerator, TurnInput};
use rp_core::*;

mod support;
use support::tavern::{self, intent_only, replay};

const HOUR: i64 = 3_600_000;
const MINUTE: i64 = 60_000;
const DAY: i64 = 24 * HOUR;

struct Tavern {
    engine: Engine,
    wren: EntityId,
    tobias: EntityId,
}

/// The room (tests/support/tavern.rs) at 08:00 with Tobias's drives as `config`.
fn tavern(config: DriveConfig) -> Tavern {
    let (engine, wren, tobias) = tavern::two(EngineOptions::default(), 8 * HOUR, 0.0, config);
    Tavern {
        engine,
        wren,
        tobias,
    }
}

/// Runs a tick at `now`, answering each request with `answer(request)`.
fn tick(e: &mut Engine, now: Millis, answer: impl Fn(&GenerateRequest) -> String) -> TickOutcome {
    let mut tick = e.begin_tick(now, TickOptions::default()).unwrap();
    while let Step::Generate(request) = tick.step(e).unwrap() {
        let text = answer(&request);
        tick.provide(e, GenerateResult::text(text)).unwrap();
    }
    tick.finish(e).unwrap()
}

/// Answers an initiation with `line`, a classification with `sentiment`, anything else empty.
fn answers(line: &'static str, sentiment: &'static str) -> impl Fn(&GenerateRequest) -> String {
    move |r| match r.purpose {
        Purpose::Initiate { .. } => line.to_owned(),
        Purpose::Classify { .. } => format!(r#"{{"sentiment": "{sentiment}"}}"#),
        Purpose::StateUpdate => r#"{"reports": []}"#.to_owned(),
        Purpose::Summary => "They talked.".to_owned(),
        _ => String::new(),
    }
}

/// Wren says `text` at `now`.
fn wren_says(t: &mut Tavern, text: &str, now: Millis) {
    let generator = ScriptedGenerator::new("Mm.");
    t.engine
        .run_turn_blocking(
            TurnInput::say(t.wren, text, now),
            Default::default(),
            &generator,
            &mut NoSink,
        )
        .unwrap();
}

/// Tobias means to ask Wren about the letter at `when`.
fn letter_rule(t: &mut Tavern, when: Millis) -> RuleId {
    let rule = format!(
        r#"{{"description": "ask Wren about the letter", "on": {{"at": {when}}},
            "intent": {{"initiate": "Wren", "about": "the letter"}}, "weight": 1.0}}"#
    );
    let now = t.engine.world().now();
    t.engine.add_rule(t.tobias, &rule, now).unwrap()
}

#[test]
fn a_rule_at_a_time_leaves_an_intention_that_makes_him_speak() {
    let mut t = tavern(intent_only());
    let when = 18 * HOUR;
    let id = letter_rule(&mut t, when);
    let next = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    assert_eq!(
        (next.at, next.reason),
        (when, drives::TickReason::Rule),
        "{next:?}"
    );
    let mut prompts = Vec::new();
    let mut tick = t.engine.begin_tick(when, TickOptions::default()).unwrap();
    while let Step::Generate(request) = tick.step(&mut t.engine).unwrap() {
        prompts.push(request.messages[0].content.clone());
        tick.provide(&mut t.engine, GenerateResult::text("Wren — the letter?"))
            .unwrap();
    }
    let outcome = tick.finish(&mut t.engine).unwrap();
    assert_eq!(outcome.rules_fired, vec![(t.tobias, id)]);
    assert_eq!(outcome.initiations.len(), 1, "{outcome:?}");
    let c = &outcome.initiations[0].candidate;
    assert_eq!(c.about, Drive::Intent);
    assert_eq!(c.rules, vec![id]);
    assert_eq!(c.pushed_over_by.as_deref(), Some("intent"));
    assert!(
        prompts[0].contains("You have in mind: talk with Wren about the letter")
            && prompts[0].contains("you meant to talk with Wren about the letter"),
        "{}",
        prompts[0]
    );
    // Speaking to Wren fulfilled it; the rule is spent but held, used once.
    let d = t.engine.drives(t.tobias, when).unwrap();
    assert!(d.intentions.is_empty());
    assert_eq!(d.awaiting.len(), 1, "the answer is awaited");
    let rules = t.engine.rules(t.tobias, when).unwrap();
    assert_eq!(
        (rules[0].rule.uses, rules[0].rule.last_used),
        (1, Some(when))
    );
    assert_eq!(replay(&t.engine).to_bytes(), t.engine.world().to_bytes());
}

#[test]
fn a_stimulus_rule_fires_on_its_kind_when_its_condition_holds() {
    let mut t = tavern(intent_only());
    let rule = r#"{"description": "the bell means customers",
        "on": {"stimulus": "sound"}, "condition": "content.includes('bell')",
        "intent": {"drive": "task", "amount": 0.5}, "weight": 0.8}"#;
    let id = t.engine.add_rule(t.tobias, rule, 8 * HOUR).unwrap();
    let now = 8 * HOUR + MINUTE;
    t.engine
        .notify(t.tobias, "sound", Priority::High, "the wind howls", now)
        .unwrap();
    let due = t.engine.next_tick_at(now).unwrap().unwrap();
    let quiet = tick(&mut t.engine, due.at, answers("", "neutral"));
    assert!(quiet.rules_fired.is_empty(), "the condition does not hold");
    let now = due.at + MINUTE;
    t.engine
        .notify(
            t.tobias,
            "sound",
            Priority::High,
            "the door bell rings",
            now,
        )
        .unwrap();
    let due = t.engine.next_tick_at(now).unwrap().unwrap();
    let before = t.engine.drives(t.tobias, due.at).unwrap().task;
    let weight = t.engine.rules(t.tobias, due.at).unwrap()[0].weight_now;
    let rung = tick(&mut t.engine, due.at, answers("", "neutral"));
    assert_eq!(rung.rules_fired, vec![(t.tobias, id)]);
    let after = t.engine.drives(t.tobias, due.at).unwrap().task;
    // amount × the rule's weight then (0.8, faded a little since it was made).
    assert!(
        (after - before - 0.5 * weight).abs() < 1e-9,
        "{before} → {after}"
    );
    assert!(weight < 0.8 && weight > 0.79);
    let events = t.engine.events(1, t.engine.head()).unwrap();
    let fired: Vec<String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::RuleFired { cause, .. } => Some(cause.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        fired,
        vec!["a sound stimulus: the door bell rings".to_owned()]
    );
}

#[test]
fn unused_rules_fade_are_forgotten_and_a_rewind_brings_them_back() {
    let mut t = tavern(intent_only());
    let rule = r#"{"description": "hum when it rains", "on": {"stimulus": "sound"},
        "intent": {"note": "hum a tune"}, "weight": 0.8}"#;
    let id = t.engine.add_rule(t.tobias, rule, 8 * HOUR).unwrap();
    let before = t.engine.head();
    // Half-life 7 days, forgotten below 0.05: 0.8 → 0.05 is four halvings, 28 days.
    let view = &t.engine.rules(t.tobias, 8 * HOUR + 7 * DAY).unwrap()[0];
    assert!((view.weight_now - 0.4).abs() < 1e-9);
    let forgotten = view.forgotten_at.unwrap();
    assert!(
        (forgotten - (8 * HOUR + 28 * DAY)).abs() <= 1,
        "{forgotten}"
    );
    let next = t.engine.next_tick_at(8 * HOUR).unwrap().unwrap();
    assert_eq!(
        (next.at, next.reason),
        (forgotten, drives::TickReason::Rule)
    );
    let outcome = tick(&mut t.engine, forgotten, answers("", "neutral"));
    assert_eq!(outcome.rules_forgotten, vec![(t.tobias, id)]);
    assert!(t.engine.rules(t.tobias, forgotten).unwrap().is_empty());
    t.engine.rewind(before).unwrap();
    assert_eq!(t.engine.rules(t.tobias, 8 * HOUR).unwrap()[0].rule.id, id);
}

/// Tobias starts a conversation with Wren at `when` (a rule's intention), and Wren answers
/// `reply` a minute later (nothing: no answer); the tone is classified as `sentiment`.
fn approach(
    t: &mut Tavern,
    when: Millis,
    reply: Option<&str>,
    sentiment: &'static str,
) -> TickOutcome {
    letter_rule(t, when);
    let first = tick(
        &mut t.engine,
        when,
        answers("About that letter, Wren?", sentiment),
    );
    assert_eq!(first.initiations.len(), 1, "{first:?}");
    if let Some(reply) = reply {
        wren_says(t, reply, when + MINUTE);
    }
    let due = t
        .engine
        .next_tick_at(t.engine.world().now())
        .unwrap()
        .unwrap();
    assert_eq!(due.reason, drives::TickReason::Feedback, "{due:?}");
    tick(&mut t.engine, due.at, answers("", sentiment))
}

#[test]
fn curt_answers_make_him_speak_up_less_and_why_says_so() {
    let mut t = tavern(intent_only());
    let learned = approach(&mut t, 10 * HOUR, Some("ok"), "negative");
    let l = &learned.learned[0];
    assert_eq!((l.entity, l.from), (t.tobias, t.wren));
    assert!(
        l.reason
            .starts_with("Wren answered curtly: 1 words after 1 min, negative"),
        "{}",
        l.reason
    );
    let intent_factor =
        t.engine
            .world()
            .learned_factor(t.tobias, t.wren, "intent", t.engine.world().now());
    assert!(intent_factor < 1.0, "{intent_factor}");
    // Every weight change is recorded with its old and new value.
    assert!(l.changes.iter().any(|c| matches!(&c.target,
        WeightTarget::Term { term, .. } if term == "intent")
        && c.to < c.from));
    assert!(
        l.changes
            .iter()
            .any(|c| matches!(&c.target, WeightTarget::Rule { .. }) && c.to < c.from)
    );
    assert!(l.changes.iter().any(|c| {
        matches!(&c.target, WeightTarget::Trait { name } if name == "independence")
            && (c.from - c.to
                + 0.01
                    * drives::learn::reward(
                        Some(MINUTE),
                        1,
                        Some(Sentiment::Negative),
                        30.0 * MINUTE as f64,
                    ))
            .abs()
                < 1e-12
    }));
    approach(&mut t, 12 * HOUR, Some("busy"), "negative");
    let now = t.engine.world().now();
    letter_rule(&mut t, now + HOUR);
    let c = &t
        .engine
        .initiation_candidates(t.tobias, now + HOUR + 1)
        .unwrap()[0];
    let why = c.learned.as_deref().unwrap();
    assert!(
        why.starts_with("Tobias speaks up less to Wren (learned × 0.")
            && why.ends_with("since Wren twice answered curtly"),
        "{why}"
    );
    assert!(c.explain(t.engine.world()).contains(why));
    assert_eq!(replay(&t.engine).to_bytes(), t.engine.world().to_bytes());
}

#[test]
fn warm_answers_make_him_speak_up_more() {
    let mut t = tavern(intent_only());
    approach(
        &mut t,
        10 * HOUR,
        Some("Oh, the letter! I read it twice, let me tell you everything about it."),
        "positive",
    );
    assert!(
        t.engine
            .world()
            .learned_factor(t.tobias, t.wren, "intent", t.engine.world().now())
            > 1.0
    );
    let d = t.engine.drives(t.tobias, t.engine.world().now()).unwrap();
    assert!(d.personality.independence > 0.5);
    assert_eq!(d.feedback[0].label(), "answered warmly");
}

#[test]
fn an_ignored_initiation_teaches_in_arithmetic_without_a_model() {
    let mut t = tavern(intent_only());
    letter_rule(&mut t, 10 * HOUR);
    tick(&mut t.engine, 10 * HOUR, answers("Wren?", "neutral"));
    let due = t.engine.next_tick_at(10 * HOUR).unwrap().unwrap();
    assert_eq!(
        (due.at, due.reason),
        (10 * HOUR + 30 * MINUTE, drives::TickReason::Feedback)
    );
    let outcome = tick(&mut t.engine, due.at, |r| {
        panic!("no model call: {:?}", r.purpose)
    });
    assert_eq!(outcome.learned.len(), 1);
    assert_eq!(
        outcome.learned[0].reason,
        "Wren did not answer within 30 min"
    );
    let d = t.engine.drives(t.tobias, due.at).unwrap();
    assert_eq!(
        (d.feedback[0].reward, d.feedback[0].label()),
        (-1.0, "did not answer")
    );
    assert!(d.awaiting.is_empty());
}

#[test]
fn hostile_classifications_are_refused_with_reasons_and_nothing_learned() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let huge = format!(r#"{{"sentiment": "{}"}}"#, "a".repeat(10 << 20));
    for bad in [
        r#"{"sentiment": "furious"}"#.to_owned(),
        r#"{"sentiment": "positive", "weight": 50}"#.to_owned(),
        r#"{"sentiment": 7}"#.to_owned(),
        "positive".to_owned(),
        deep,
        huge,
    ] {
        let mut t = tavern(intent_only());
        letter_rule(&mut t, 10 * HOUR);
        tick(&mut t.engine, 10 * HOUR, answers("Wren?", "neutral"));
        wren_says(&mut t, "ok", 10 * HOUR + MINUTE);
        let due = t.engine.next_tick_at(10 * HOUR + MINUTE).unwrap().unwrap();
        let asked = std::cell::Cell::new(0);
        let outcome = tick(&mut t.engine, due.at, |r| {
            assert_eq!(r.purpose, Purpose::Classify { speaker: t.tobias });
            asked.set(asked.get() + 1);
            if asked.get() == 2 {
                let retry = &r.messages.last().unwrap().content;
                assert!(
                    retry.contains("sentiment"),
                    "the retry says what was wrong: {retry}"
                );
            }
            bad.clone()
        });
        assert_eq!(asked.get(), 2, "one retry with what was wrong");
        let l = &outcome.learned[0];
        assert!(l.changes.is_empty(), "{l:?}");
        assert!(
            l.reason
                .starts_with("nothing learned: the classification was rejected"),
            "{}",
            l.reason
        );
        let d = t.engine.drives(t.tobias, due.at).unwrap();
        assert!(d.learned.is_empty() && d.awaiting.is_empty());
        assert_eq!(d.personality.independence, 0.5);
    }
}

#[test]
fn bad_rules_are_clear_errors_that_change_nothing() {
    let mut t = tavern(intent_only());
    let head = t.engine.head();
    let deep = format!(
        r#"{{"description": {}1{}}}"#,
        "[".repeat(5_000),
        "]".repeat(5_000)
    );
    let long = format!(
        r#"{{"description": "{}", "on": {{"in_hours": 1}}, "intent": {{"note": "x"}}}}"#,
        "a".repeat(10 << 20)
    );
    let cases: Vec<(EntityId, String, ErrorKind)> = vec![
        (t.tobias, "[]".into(), ErrorKind::Invalid),
        (t.tobias, "{".into(), ErrorKind::Invalid),
        (t.tobias, deep, ErrorKind::Invalid),
        (t.tobias, long, ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}, "weight": 5}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"stimulus": "smell"}, "intent": {"note": "y"}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1, "at": 5}, "intent": {"note": "y"}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"day": 0, "hour": 1}, "intent": {"note": "y"}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}, "condition": "content.("}"#.into(), ErrorKind::FactSyntax),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"initiate": "Tobias"}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"initiate": "Nobody"}}"#.into(), ErrorKind::NotFound),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"drive": "social_debt", "amount": 1}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"drive": "task", "amount": 2}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "", "on": {"in_hours": 1}, "intent": {"note": "y"}}"#.into(), ErrorKind::Invalid),
        (t.tobias, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}, "typo": 1}"#.into(), ErrorKind::Invalid),
        (t.wren, r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}}"#.into(), ErrorKind::Invalid),
        (EntityId(999), r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}}"#.into(), ErrorKind::NotFound),
    ];
    for (owner, rule, kind) in cases {
        let err = t.engine.add_rule(owner, &rule, 8 * HOUR).unwrap_err();
        assert_eq!(
            err.kind(),
            kind,
            "{}: {err}",
            rule.chars().take(120).collect::<String>()
        );
    }
    assert_eq!(
        t.engine
            .add_rule(
                t.tobias,
                r#"{"description": "x", "on": {"in_hours": 1}, "intent": {"note": "y"}}"#,
                HOUR
            )
            .unwrap_err()
            .kind(),
        ErrorKind::Invalid,
        "before the clock"
    );
    assert_eq!(
        t.engine
            .remove_rule(RuleId(12345), 8 * HOUR)
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert_eq!(t.engine.head(), head, "nothing was recorded");
    // A character holds at most MAX_RULES.
    for n in 0..MAX_RULES {
        let rule = format!(
            r#"{{"description": "rule {n}", "on": {{"in_hours": 1}}, "intent": {{"note": "y"}}}}"#
        );
        t.engine.add_rule(t.tobias, &rule, 8 * HOUR).unwrap();
    }
    let err = t
        .engine
        .add_rule(
            t.tobias,
            r#"{"description": "one more", "on": {"in_hours": 1}, "intent": {"note": "y"}}"#,
            8 * HOUR,
        )
        .unwrap_err();
    assert!(err.to_string().contains("already holds 64 rules"), "{err}");
}

#[test]
fn forged_records_are_refused() {
    let mut t = tavern(intent_only());
    let id = letter_rule(&mut t, 10 * HOUR);
    let now = t.engine.world().now();
    let head = t.engine.head();
    let feedback = Feedback {
        from: t.wren,
        initiated_at: now,
        latency_ms: Some(0),
        words: 3,
        sentiment: Some(Sentiment::Positive),
        reward: 0.5,
    };
    let forged = [
        // Nothing was awaited.
        Event::FeedbackLearned {
            entity: t.tobias,
            feedback: feedback.clone(),
            changes: vec![],
            reason: "x".into(),
            at: now,
        },
        // A strong rule cannot be "forgotten".
        Event::RuleRemoved {
            entity: t.tobias,
            rule: id,
            at: now,
            forgotten: true,
        },
        // Another's rule, or one that does not exist.
        Event::RuleFired {
            entity: t.wren,
            rule: id,
            at: now,
            held: false,
            cause: "x".into(),
            stimulus: None,
        },
        Event::RuleFired {
            entity: t.tobias,
            rule: RuleId(4242),
            at: now,
            held: false,
            cause: "x".into(),
            stimulus: None,
        },
        // Out of turn.
        Event::RuleFired {
            entity: t.tobias,
            rule: id,
            at: now + 1,
            held: false,
            cause: "x".into(),
            stimulus: None,
        },
    ];
    for e in forged {
        assert!(t.engine.append(vec![e.clone()]).is_err(), "{e:?}");
    }
    assert_eq!(t.engine.head(), head);
    // Out-of-range and stale weights in feedback that was awaited.
    tick(&mut t.engine, 10 * HOUR, answers("Wren?", "neutral"));
    let at = 10 * HOUR;
    let awaited = Feedback {
        initiated_at: at,
        ..feedback
    };
    let term = |from: f64, to: f64| WeightChange {
        target: WeightTarget::Term {
            to: t.wren,
            term: "intent".into(),
        },
        from,
        to,
    };
    let head = t.engine.head();
    for changes in [
        vec![term(1.0, 50.0)],
        vec![term(1.0, f64::NAN)],
        vec![term(0.7, 0.5)],
        vec![WeightChange {
            target: WeightTarget::Trait {
                name: "charm".into(),
            },
            from: 0.5,
            to: 0.6,
        }],
        vec![WeightChange {
            target: WeightTarget::Rule { rule: id },
            from: 1.0,
            to: 1.5,
        }],
    ] {
        let e = Event::FeedbackLearned {
            entity: t.tobias,
            feedback: awaited.clone(),
            changes,
            reason: "x".into(),
            at,
        };
        assert!(t.engine.append(vec![e]).is_err());
    }
    let e = Event::FeedbackLearned {
        entity: t.tobias,
        feedback: Feedback {
            reward: 3.0,
            ..awaited
        },
        changes: vec![],
        reason: "x".into(),
        at,
    };
    assert!(t.engine.append(vec![e]).is_err());
    assert_eq!(t.engine.head(), head);
}

#[test]
fn the_model_and_the_world_file_give_rules_too() {
    let mut engine = Engine::in_memory("Inn", 8 * HOUR).unwrap();
    let file = r#"
[world]
name = "Inn"
[[containers]]
id = "room"
name = "Room"
[[entities]]
id = "wren"
name = "Wren"
player = true
container = "room"
[[entities]]
id = "tobias"
name = "Tobias"
container = "room"
rules = [
  { description = "greet the bell", on = { stimulus = "sound" }, intent = { note = "someone came in" } },
]
[[edges]]
from = "tobias"
to = "wren"
"#;
    engine.apply_world_file("inn.toml", file).unwrap();
    let tobias = engine.world().resolve_entity("tobias").unwrap();
    let rules = engine.rules(tobias, 8 * HOUR).unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        (rules[0].rule.source, rules[0].rule.weight),
        (RuleSource::World, DEFAULT_RULE_WEIGHT)
    );
    // Applying the same file again keeps it (and its use); a file without it removes it.
    engine.apply_world_file("inn.toml", file).unwrap();
    assert_eq!(
        engine.rules(tobias, 8 * HOUR).unwrap()[0].rule.id,
        rules[0].rule.id
    );
    let bad = file.replace("stimulus = \"sound\"", "stimulus = \"smell\"");
    let err = engine.apply_world_file("inn.toml", &bad).unwrap_err();
    assert!(err.to_string().contains("entities.rules"), "{err}");
    engine.apply_world_file("inn.toml", &file.replace("rules = [\n  { description = \"greet the bell\", on = { stimulus = \"sound\" }, intent = { note = \"someone came in\" } },\n]\n", "")).unwrap();
    assert!(engine.rules(tobias, 8 * HOUR).unwrap().is_empty());

    // The model: "remember to ask Wren about the letter tomorrow evening".
    let wren = engine.world().resolve_entity("wren").unwrap();
    let generator = ScriptedGenerator::new("Tomorrow, then.");
    let good = r#"{"type": "rule", "who": "Tobias", "description": "ask Wren about the letter",
        "on": {"day": 1, "hour": 18}, "intent": {"initiate": "Wren", "about": "the letter"}}"#;
    let bad = r#"{"type": "rule", "who": "Tobias", "description": "x", "on": {"day": 1, "hour": 18},
        "intent": {"initiate": "Tobias"}}"#;
    // A bad rule is sent back with its reason; the corrected answer keeps the good one.
    generator.script_purpose(
        &Purpose::StateUpdate,
        [
            format!(r#"{{"reports": [{good}, {bad}]}}"#),
            format!(r#"{{"reports": [{good}]}}"#),
        ],
    );
    let options: turn::TurnOptions =
        turn::TurnOptions::from_json(r#"{"updates": {"enabled": true}}"#).unwrap();
    engine
        .run_turn_blocking(
            TurnInput::say(
                wren,
                "Remind me about the letter tomorrow evening.",
                9 * HOUR,
            ),
            options,
            &generator,
            &mut NoSink,
        )
        .unwrap();
    let rules = engine.rules(tobias, 9 * HOUR).unwrap();
    assert_eq!(rules.len(), 1, "{rules:?}");
    let requests = generator.requests();
    let retry = &requests.last().unwrap().messages.last().unwrap().content;
    assert!(
        retry.contains("a character initiates with someone else"),
        "{retry}"
    );
    let r = &rules[0].rule;
    assert_eq!(r.source, RuleSource::Model);
    assert_eq!(r.trigger, Trigger::At(DAY + 18 * HOUR));
    assert_eq!(
        r.intent,
        Intent::Initiate {
            to: wren,
            about: "the letter".into()
        }
    );
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Whatever rules fire, whatever the answers and whatever stimuli climb to thoughts,
    /// replay equals the live world, every learned factor stays in range, and a thought is
    /// only its thinker's.
    #[test]
    fn replay_equals_live_across_rules_and_learning(
        steps in prop::collection::vec((0u8..5, 1u8..90, 0u8..3), 1..8),
    ) {
        let mut t = tavern(intent_only());
        let generator = ScriptedGenerator::new("Wren?");
        for (what, minutes, tone) in steps {
            let now = t.engine.world().now() + i64::from(minutes) * MINUTE;
            match what {
                0 => { letter_rule(&mut t, now); }
                1 => {
                    let reply = ["ok", "Fine, and you?", "Oh! The letter, yes, I have so much to tell you about it."][tone as usize];
                    wren_says(&mut t, reply, now);
                }
                2 => { t.engine.notify(t.tobias, "sound", Priority::High, "a bell", now).unwrap(); }
                3 => { t.engine.notify(t.tobias, "sound", Priority::Critical, "a crash", now).unwrap(); }
                _ => {}
            }
            let until = t.engine.world().now() + HOUR;
            block_on(advance(&mut t.engine, until, &TickOptions::default(), &generator)).unwrap();
        }
        let (lo, hi) = LEARNED_FACTOR_RANGE;
        let d = t.engine.drives(t.tobias, t.engine.world().now()).unwrap();
        prop_assert!(d.learned.iter().all(|l| (lo..=hi).contains(&l.factor)));
        prop_assert!(t.engine.world().mind(t.wren).is_none(), "the player keeps no mind");
        // A thought is its thinker's alone.
        for m in t.engine.world().all_memories().filter(|m| m.kind == MemoryKind::Thought) {
            prop_assert_eq!(m.witnesses.iter().collect::<Vec<_>>(), vec![m.owner]);
        }
        prop_assert_eq!(replay(&t.engine).to_bytes(), t.engine.world().to_bytes());
    }
}
