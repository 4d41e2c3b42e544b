//! Stimuli climbing the processing layers (docs/drives.md, "Layers"): arithmetic and rules
//! handle what they are sure of; what they are not, or a pattern accumulating, goes to the
//! fast model (purpose `classify`), and what is still uncertain or significant to the smart one
//! (purpose `think`), whose thought is a memory of the thinker alone. Every hoist is recorded
//! with its reason; hostile answers are refused with nothing applied; replay equals the live
//! world.

use rp_core::machine::{GenerateRequest, Step};
use rp_core::tick::{TickOptions, TickOutcome};
use rp_core::*;

mod support;
use support::tavern::{self, intent_only, replay};

const HOUR: i64 = 3_600_000;
const MINUTE: i64 = 60_000;

struct Tavern {
    engine: Engine,
    wren: EntityId,
    tobias: EntityId,
}

/// The room (tests/support/tavern.rs): Tobias never pressed to speak by his drives alone.
fn tavern() -> Tavern {
    let (engine, wren, tobias) =
        tavern::two(EngineOptions::default(), 8 * HOUR, 0.0, intent_only());
    Tavern {
        engine,
        wren,
        tobias,
    }
}

/// Notifies Tobias and runs the tick that processes it, answering with `answer`; returns the
/// tick's outcome and the purposes asked, in order.
fn perceive(
    t: &mut Tavern,
    kind: &str,
    priority: Priority,
    payload: &str,
    answer: impl Fn(&GenerateRequest) -> String,
) -> (TickOutcome, Vec<&'static str>) {
    let now = t.engine.world().now() + MINUTE;
    t.engine
        .notify(t.tobias, kind, priority, payload, now)
        .unwrap();
    let due = t.engine.next_tick_at(now).unwrap().unwrap();
    let mut tick = t.engine.begin_tick(due.at, TickOptions::default()).unwrap();
    let mut asked = Vec::new();
    while let Step::Generate(request) = tick.step(&mut t.engine).unwrap() {
        asked.push(request.purpose.name());
        let text = answer(&request);
        tick.provide(&mut t.engine, GenerateResult::text(text))
            .unwrap();
    }
    (tick.finish(&mut t.engine).unwrap(), asked)
}

fn classified(confidence: f64, significance: f64) -> String {
    format!(
        r#"{{"intent": "a customer calling", "sentiment": "neutral", "confidence": {confidence}, "significance": {significance}}}"#
    )
}

#[test]
fn what_arithmetic_and_rules_are_sure_of_calls_no_model() {
    let mut t = tavern();
    let (o, asked) = perceive(&mut t, "sound", Priority::Normal, "a cart rolls by", |r| {
        panic!("no model: {:?}", r.purpose)
    });
    assert!(asked.is_empty());
    assert_eq!(
        (o.layers.reflex, o.layers.rules, o.layers.classify),
        (1, 0, 0)
    );
    // A HIGH message would be hoisted, but a rule handles it.
    let rule = r#"{"description": "letters go on the pile", "on": {"stimulus": "message"},
        "intent": {"note": "a letter to read"}}"#;
    let now = t.engine.world().now();
    t.engine.add_rule(t.tobias, rule, now).unwrap();
    let (o, asked) = perceive(&mut t, "message", Priority::High, "a letter for you", |r| {
        panic!("no model: {:?}", r.purpose)
    });
    assert!(asked.is_empty());
    assert_eq!((o.layers.reflex, o.layers.rules), (0, 1));
}

#[test]
fn an_uncertain_stimulus_is_classified_and_the_hoist_recorded_with_its_reason() {
    let mut t = tavern();
    let tobias = t.tobias;
    let (o, asked) = perceive(
        &mut t,
        "message",
        Priority::High,
        "come to the cellar",
        |r| {
            assert_eq!(r.purpose, Purpose::Classify { speaker: tobias });
            assert!(r.messages[1].content.contains("come to the cellar"));
            classified(0.9, 0.3)
        },
    );
    assert_eq!(
        asked,
        vec!["classify"],
        "certain and of little weight: no thought"
    );
    assert_eq!(
        (o.layers.reflex, o.layers.classify, o.layers.think),
        (0, 1, 0)
    );
    let c = &o.classified[0];
    assert_eq!(c.reason, "arithmetic is not confident: 0.40 below 0.50");
    assert_eq!(
        c.classification.as_ref().unwrap().intent,
        "a customer calling"
    );
    assert!(c.thought.is_none());
    let events = t.engine.events(1, t.engine.head()).unwrap();
    assert!(events.iter().any(|(_, e)| matches!(e,
        Event::StimulusClassified { reason, classification: Some(_), .. } if reason == &c.reason)));
}

#[test]
fn a_significant_stimulus_becomes_a_thought_of_the_thinker_alone() {
    let mut t = tavern();
    let (o, asked) = perceive(
        &mut t,
        "sound",
        Priority::Critical,
        "a scream outside",
        |r| match r.purpose {
            Purpose::Classify { .. } => classified(0.9, 0.9),
            Purpose::Think { .. } => {
                assert!(r.messages[0].content.contains("a scream outside"));
                r#"{"thought": "That scream... Wren should know.", "task": "more",
                    "speak_to": "Wren", "about": "the scream"}"#
                    .to_owned()
            }
            Purpose::Initiate { .. } => "Wren, did you hear that?".to_owned(),
            _ => r#"{"reports": []}"#.to_owned(),
        },
    );
    assert_eq!(&asked[..2], &["classify", "think"]);
    assert_eq!((o.layers.classify, o.layers.think), (0, 1));
    assert!(
        o.classified[0]
            .thought
            .as_deref()
            .unwrap()
            .starts_with("it matters: significance 0.90")
    );
    let (owner, id) = o.thoughts[0];
    assert_eq!(owner, t.tobias);
    let m = t.engine.world().memory(id).unwrap();
    assert_eq!(
        (m.kind, m.text.as_str()),
        (MemoryKind::Thought, "That scream... Wren should know.")
    );
    assert_eq!(
        m.witnesses.iter().collect::<Vec<_>>(),
        vec![t.tobias],
        "his alone"
    );
    let d = t.engine.drives(t.tobias, t.engine.world().now()).unwrap();
    assert!(
        d.intentions
            .iter()
            .any(|i| i.to == Some(t.wren) && i.text == "the scream")
            || !o.initiations.is_empty()
    );
    assert_eq!(replay(&t.engine).to_bytes(), t.engine.world().to_bytes());
}

/// Knocks at Tobias's door, `n` of them half a minute apart from a minute after the clock,
/// then the tick that processes them; returns what it hoisted.
fn knocks(t: &mut Tavern, n: i64) -> Vec<rp_core::tick::ClassifiedOutcome> {
    let start = t.engine.world().now() + MINUTE;
    for k in 0..n {
        let at = start + k * 30_000;
        t.engine
            .notify(
                t.tobias,
                "sound",
                Priority::Normal,
                "a knock at the door",
                at,
            )
            .unwrap();
    }
    let due = t
        .engine
        .next_tick_at(t.engine.world().now())
        .unwrap()
        .unwrap();
    let mut tick = t.engine.begin_tick(due.at, TickOptions::default()).unwrap();
    while let Step::Generate(r) = tick.step(&mut t.engine).unwrap() {
        assert!(
            matches!(r.purpose, Purpose::Classify { .. }),
            "{:?}",
            r.purpose
        );
        tick.provide(&mut t.engine, GenerateResult::text(classified(0.9, 0.2)))
            .unwrap();
    }
    tick.finish(&mut t.engine).unwrap().classified
}

#[test]
fn a_pattern_accumulating_is_hoisted_once_in_its_window() {
    let mut t = tavern();
    // One knock is nothing; nine are not yet a pattern.
    assert!(knocks(&mut t, 1).is_empty());
    let mut t = tavern();
    assert!(knocks(&mut t, 9).is_empty());
    let mut t = tavern();
    let hoisted = knocks(&mut t, 12);
    assert_eq!(hoisted.len(), 1, "{hoisted:?}");
    assert_eq!(
        hoisted[0].reason,
        "a pattern: 12 sound stimuli within 10 min"
    );
    // More knocks within the window are the same pattern, already thought of.
    assert!(knocks(&mut t, 3).is_empty());
}

#[test]
fn hostile_answers_are_refused_with_reasons_and_nothing_applied() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let huge = format!(
        r#"{{"intent": "{}", "sentiment": "neutral", "confidence": 1, "significance": 1}}"#,
        "a".repeat(10 << 20)
    );
    for bad in [
        classified(1.5, 0.2),
        classified(0.9, f64::NAN).replace("NaN", "\"NaN\""),
        r#"{"intent": "", "sentiment": "neutral", "confidence": 1, "significance": 1}"#.to_owned(),
        r#"{"intent": "x", "sentiment": "furious", "confidence": 1, "significance": 1}"#.to_owned(),
        deep.clone(),
        huge,
    ] {
        let mut t = tavern();
        let head_memories = t.engine.world().all_memories().count();
        let (o, asked) = perceive(&mut t, "message", Priority::High, "psst", |_| bad.clone());
        assert_eq!(asked, vec!["classify", "classify"], "one retry");
        assert!(o.classified[0].classification.is_none());
        assert!(o.thoughts.is_empty());
        assert_eq!(t.engine.world().all_memories().count(), head_memories);
    }
    for bad in [
        r#"{"thought": "x", "task": 5}"#.to_owned(),
        r#"{"thought": "x", "task": 0.5}"#.to_owned(),
        r#"{"thought": "x", "curiosity": "lots"}"#.to_owned(),
        r#"{"thought": "x", "speak_to": "Nobody"}"#.to_owned(),
        r#"{"thought": "x", "speak_to": "Tobias"}"#.to_owned(),
        r#"{"thought": "", "task": "more"}"#.to_owned(),
        r#"{"thought": "x", "about": "y"}"#.to_owned(),
        r#"{"thought": "x", "weight": 1}"#.to_owned(),
        deep.clone(),
    ] {
        let mut t = tavern();
        let (o, asked) = perceive(&mut t, "sound", Priority::Critical, "a crash", |r| match r
            .purpose
        {
            Purpose::Classify { .. } => classified(0.9, 0.9),
            _ => bad.clone(),
        });
        assert_eq!(asked, vec!["classify", "think", "think"], "{bad}");
        assert!(o.thoughts.is_empty(), "{bad}");
        let d = t.engine.drives(t.tobias, t.engine.world().now()).unwrap();
        assert!(d.intentions.is_empty() && d.task == 0.0, "{bad}");
        let events = t.engine.events(1, t.engine.head()).unwrap();
        assert!(events.iter().any(|(_, e)| matches!(e,
            Event::ThoughtFormed { rejected: Some(r), memory: None, .. } if r.starts_with("the thought was rejected"))));
    }
}
