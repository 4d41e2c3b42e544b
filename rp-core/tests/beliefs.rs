//! Beliefs about people (docs/beliefs.md, issue 20 item 4): what a character believes of
//! another, each aspect with a confidence that halves every half-life; set by the host and by
//! the state-update pass, only from lines the believer heard; people only mentioned as
//! lightweight entities with edges that say where they come from; shown in the believer's
//! prompt and no one else's; replay equal to the live world.

use proptest::prelude::*;
use rp_core::turn::{NoSink, Purpose, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::update::{Pass, UpdateOptions, judge_answer};
use rp_core::*;
use serde_json::json;

const HOUR: i64 = 3_600_000;
const MINUTE: i64 = 60_000;

const WORLD: &str = r#"
[world]
name = "Inn"

[[containers]]
id = "inn"
name = "The Inn"

[[containers]]
id = "cellar"
name = "the cellar"

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "inn"

[[entities]]
id = "mira"
name = "Mira"
container = "inn"
facts = '''
Keeps the inn.
$respond
'''

[[entities]]
id = "tobias"
name = "Tobias"
container = "inn"
facts = '''
A fisherman.
$respond false
'''

[[entities]]
id = "ana"
name = "Ana"
container = "cellar"
facts = "Counts barrels."
"#;

fn engine() -> Engine {
    let mut engine = Engine::in_memory("Inn", 0).unwrap();
    engine.apply_world_file("inn.toml", WORLD).unwrap();
    engine
}

fn id(engine: &Engine, name: &str) -> EntityId {
    engine.world().find_entity(name).unwrap().id
}

fn replayed(engine: &Engine) -> World {
    let mut world = World::new();
    for (_, e) in engine.events(1, engine.head()).unwrap() {
        world.apply(&e).unwrap();
    }
    world
}

fn update_options() -> TurnOptions {
    TurnOptions {
        updates: UpdateOptions {
            enabled: true,
            ..UpdateOptions::default()
        },
        ..TurnOptions::default()
    }
}

/// One turn: Wren says `text`, Mira answers `reply`, the state-update pass answers `answer`.
fn turn(engine: &mut Engine, text: &str, reply: &str, answer: &str) -> ScriptedGenerator {
    let generator = ScriptedGenerator::new(reply);
    generator.script_purpose(&Purpose::StateUpdate, [answer]);
    let wren = id(engine, "Wren");
    let now = engine.world().now() + MINUTE;
    engine
        .run_turn_blocking(
            TurnInput::say(wren, text, now),
            update_options(),
            &generator,
            &mut NoSink,
        )
        .unwrap();
    generator
}

fn view(views: &[BeliefView], about: EntityId) -> &BeliefView {
    views
        .iter()
        .find(|v| v.about == about)
        .unwrap_or_else(|| panic!("no belief about {about}: {views:?}"))
}

#[test]
fn confidence_halves_every_half_life_and_reading_changes_nothing() {
    let mut e = engine();
    let (mira, wren) = (id(&e, "Mira"), id(&e, "Wren"));
    e.configure_drives(
        None,
        DriveConfig {
            belief_half_life_hours: Some(4.0),
            trait_half_life_hours: Some(100.0),
            ..Default::default()
        },
    )
    .unwrap();
    let t0 = e.world().now() + HOUR;
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "Wren", "mood": "tired", "energy": 0.2,
            "traits": ["stubborn"], "confidence": 0.8, "source": "observed"}"#,
        t0,
    )
    .unwrap();
    let head = e.head();
    for hours in [0.0, 1.0, 4.0, 10.0, 250.0] {
        let now = t0 + (hours * HOUR as f64) as i64;
        let b = e.beliefs(mira, now).unwrap();
        let w = view(&b, wren);
        let mood = w.mood.as_ref().unwrap();
        let expected = 0.8 * 0.5f64.powf(hours / 4.0);
        assert!(
            (mood.confidence - expected).abs() < 1e-12,
            "{hours}h: {mood:?}"
        );
        assert_eq!(mood.observed_confidence, 0.8);
        assert_eq!(mood.value, "tired");
        assert_eq!(mood.source, BeliefSource::Observed);
        let energy = w.energy.as_ref().unwrap();
        assert!((energy.confidence - expected).abs() < 1e-12);
        let traits = &w.traits[0];
        let expected = 0.8 * 0.5f64.powf(hours / 100.0);
        assert!(
            (traits.confidence - expected).abs() < 1e-12,
            "{hours}h: {traits:?}"
        );
    }
    // Before the observation: the confidence observed (reading the past never extrapolates).
    let before = e.beliefs(mira, t0 - HOUR).unwrap();
    assert_eq!(view(&before, wren).mood.as_ref().unwrap().confidence, 0.8);
    assert_eq!(e.head(), head, "reading beliefs commits nothing");
    // The World reads the same at any time, without the engine.
    assert_eq!(
        e.world().beliefs_of(mira, t0 + 3 * HOUR),
        e.beliefs(mira, t0 + 3 * HOUR).unwrap()
    );
    // Tobias believes nothing of Wren's mood: beliefs are per observer.
    let tobias = e.beliefs(id(&e, "Tobias"), t0).unwrap();
    assert!(tobias.iter().all(|v| v.mood.is_none()), "{tobias:?}");
}

#[test]
fn a_newer_observation_replaces_an_aspect_and_traits_accumulate() {
    let mut e = engine();
    let (mira, wren) = (id(&e, "Mira"), id(&e, "Wren"));
    let t0 = e.world().now();
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "Wren", "mood": "tired", "traits": ["stubborn"]}"#,
        t0,
    )
    .unwrap();
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "Wren", "mood": "cheerful", "traits": ["Stubborn", "kind"],
            "confidence": 0.5, "source": {"told_by": "Tobias"}}"#,
        t0 + HOUR,
    )
    .unwrap();
    let b = e.beliefs(mira, t0 + HOUR).unwrap();
    let w = view(&b, wren);
    assert_eq!(w.mood.as_ref().unwrap().value, "cheerful");
    assert_eq!(
        w.mood.as_ref().unwrap().source,
        BeliefSource::ToldBy(id(&e, "Tobias"))
    );
    let traits: Vec<&str> = w.traits.iter().map(|t| t.value.as_str()).collect();
    assert_eq!(
        traits,
        ["Stubborn", "kind"],
        "a trait observed again is refreshed"
    );
    assert_eq!(w.traits[0].at, t0 + HOUR);
}

#[test]
fn a_believed_availability_reaches_the_drives_shrunk_by_its_confidence() {
    let mut e = engine();
    let (tobias, wren) = (id(&e, "Tobias"), id(&e, "Wren"));
    let t0 = e.world().now() + MINUTE;
    e.observe_belief_json(
        r#"{"observer": "Tobias", "about": "Wren", "availability": 0.0, "confidence": 0.8}"#,
        t0,
    )
    .unwrap();
    let b = e.world().belief(tobias, wren).unwrap();
    assert!(
        (b.availability - 0.1).abs() < 1e-12,
        "0.5 + (0 − 0.5) × 0.8"
    );
    assert_eq!(b.at, t0);
    // A later report from the host wins, as before.
    e.report_availability(wren, 1.0, t0 + MINUTE).unwrap();
    assert_eq!(e.world().belief(tobias, wren).unwrap().availability, 1.0);
    let v = e.beliefs(tobias, t0 + MINUTE).unwrap();
    let a = view(&v, wren).availability.as_ref().unwrap();
    assert_eq!((a.value, a.source), (1.0, BeliefSource::Host));
}

#[test]
fn a_state_update_creates_a_mentioned_person_with_an_edge_and_beliefs() {
    let mut e = engine();
    let (mira, tobias, wren) = (id(&e, "Mira"), id(&e, "Tobias"), id(&e, "Wren"));
    let answer = json!({"reports": [
        {"type": "person_mentioned", "name": "Wren's mother", "line": 1,
         "description": "A seamstress in the capital."},
        {"type": "relation", "who": "Mira", "from": "Wren's mother", "to": "Wren", "line": 1,
         "sentiment": -0.6, "relation": "mother"},
        {"type": "relation", "who": "Tobias", "from": "Wren", "to": "Wren's mother", "line": 1,
         "sentiment": 0.3, "relation": "daughter", "inferred": true},
        {"type": "belief", "who": "Mira", "about": "Wren", "line": 1, "mood": "homesick",
         "energy": 0.3, "confidence": 0.95},
        {"type": "belief", "who": "Tobias", "about": "Wren's mother", "line": 1,
         "traits": ["strict"]}
    ]})
    .to_string();
    turn(
        &mut e,
        "My mother never forgave me for leaving. I am so tired.",
        "Mothers rarely do.",
        &answer,
    );
    let world = e.world();
    let mother = world
        .find_entity("Wren's mother")
        .expect("the person is in the world");
    assert!(mother.mentioned);
    assert_eq!(mother.facts.lines(), ["A seamstress in the capital."]);
    assert!(mother.activity.position.is_none());
    assert!(
        world.mind(mother.id).is_none(),
        "no drives tick for a mentioned person"
    );
    assert!(!world.hearers(wren).contains(mother.id));
    let mother = mother.id;
    // Rejected nothing.
    let judged = e
        .events(1, e.head())
        .unwrap()
        .into_iter()
        .rev()
        .find_map(|(_, ev)| match ev {
            Event::ReportsJudged { reports } => Some(reports),
            _ => None,
        })
        .unwrap();
    assert!(judged.iter().all(|r| r.rejected.is_none()), "{judged:?}");

    // The mentioned person's edge is in the world, with its source (Wren said line 1).
    let edge = world.edge(mother, wren).unwrap();
    assert_eq!(edge.affinity, -0.6);
    assert_eq!(edge.summary, "mother");
    assert_eq!(edge.source, Some(BeliefSource::ToldBy(wren)));
    // Wren is a character: her feelings are not set from what Tobias inferred.
    assert!(world.edge(wren, mother).is_none());

    let now = world.now();
    let m = e.beliefs(mira, now).unwrap();
    let about_mother = view(&m, mother);
    assert!(about_mother.mentioned);
    let felt = &about_mother.feelings[0];
    assert_eq!(
        (
            felt.value.toward,
            felt.value.sentiment,
            felt.value.text.as_str()
        ),
        (wren, -0.6, "mother")
    );
    assert_eq!(felt.source, BeliefSource::ToldBy(wren));
    assert_eq!(felt.observed_confidence, 0.7, "told: capped at 0.7");
    let about_wren = view(&m, wren);
    let mood = about_wren.mood.as_ref().unwrap();
    assert_eq!(mood.value, "homesick");
    assert_eq!(
        (mood.source, mood.observed_confidence),
        (BeliefSource::Observed, 0.9),
        "Wren said it of herself: observed, 0.95 capped at 0.9"
    );
    let t = e.beliefs(tobias, now).unwrap();
    let tw = view(&t, wren);
    assert_eq!(tw.feelings[0].source, BeliefSource::Inferred);
    assert_eq!(tw.feelings[0].observed_confidence, 0.5);
    assert_eq!(view(&t, mother).traits[0].value, "strict");
    assert!(tw.mood.is_none(), "Mira's belief is not Tobias's");

    // The mentioned person cannot be put anywhere nor speak.
    let mut placed = e.world().find_entity("Wren").unwrap().activity.clone();
    placed.action = None;
    let err = e
        .append(vec![Event::ActivityChanged {
            entity: mother,
            activity: placed,
        }])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert!(err.to_string().contains("only mentioned"), "{err}");
    assert_eq!(replayed(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn the_believer_sees_its_beliefs_in_its_prompt_and_no_one_else_does() {
    let mut e = engine();
    let t0 = e.world().now() + MINUTE;
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "Wren", "mood": "tired", "confidence": 0.7,
            "source": "observed"}"#,
        t0,
    )
    .unwrap();
    e.observe_belief_json(
        r#"{"observer": "Tobias", "about": "Wren", "mood": "grumpy", "confidence": 1}"#,
        t0,
    )
    .unwrap();
    let wren = id(&e, "Wren");
    let generator = ScriptedGenerator::new("Evening.");
    e.run_turn_blocking(
        TurnInput::say(wren, "Hello.", t0 + 2 * HOUR),
        TurnOptions::default(),
        &generator,
        &mut NoSink,
    )
    .unwrap();
    let mira = id(&e, "Mira");
    let prompts: Vec<String> = generator
        .requests()
        .into_iter()
        .filter(|r| r.purpose == Purpose::Reply { speaker: mira })
        .map(|r| {
            r.messages
                .iter()
                .map(|m| m.content.clone())
                .collect::<String>()
        })
        .collect();
    assert_eq!(prompts.len(), 1);
    // 0.7 × 0.5^(2 h / 6 h) ≈ 0.556: fairly sure.
    assert!(
        prompts[0].contains("You believe Wren is tired (fairly sure, 2 hours ago)."),
        "{}",
        prompts[0]
    );
    assert!(!prompts[0].contains("grumpy"), "Tobias's belief leaked");
}

#[test]
fn a_character_that_did_not_hear_the_line_cannot_come_to_believe_it() {
    let e = engine();
    let world = e.world();
    let (wren, mira, tobias) = (id(&e, "Wren"), id(&e, "Mira"), id(&e, "Tobias"));
    let present: WitnessSet = [wren, mira, tobias].into_iter().collect();
    // Line 1 (Wren's) is heard by Wren and Mira; Tobias heard only line 2.
    let lines = vec![
        (wren, [wren, mira].into_iter().collect::<WitnessSet>()),
        (mira, present.clone()),
    ];
    let pass = Pass {
        present: &present,
        lines: &lines,
        remembered: true,
        step: 0.1,
        now: world.now(),
    };
    let answer = json!({"reports": [
        {"type": "belief", "who": "Tobias", "about": "Wren", "line": 1, "mood": "sad"},
        {"type": "relation", "who": "Tobias", "from": "Wren", "to": "Mira", "line": 1,
         "sentiment": 0.5},
        {"type": "belief", "who": "Ana", "about": "Wren", "line": 1, "mood": "sad"},
        {"type": "belief", "who": "Mira", "about": "Wren", "line": 1, "mood": "sad"}
    ]})
    .to_string();
    let mut judged = world.clone();
    let verdict = judge_answer(&mut judged, &pass, &[], &answer);
    let why: Vec<Option<&str>> = verdict
        .reports
        .iter()
        .map(|r| r.rejected.as_deref())
        .collect();
    assert_eq!(
        why,
        [
            Some("Tobias did not hear line 1"),
            Some("Tobias did not hear line 1"),
            Some("Ana is not present"),
            None
        ]
    );
    assert!(judged.person_belief(tobias, wren).is_none());
    assert_eq!(
        judged
            .person_belief(mira, wren)
            .unwrap()
            .mood
            .as_ref()
            .unwrap()
            .value,
        "sad"
    );
}

#[test]
fn hostile_beliefs_are_refused_and_change_nothing() {
    let mut e = engine();
    let mother = e
        .mention_person("Wren's mother", FactSheet::default(), None, e.world().now())
        .unwrap();
    let now = e.world().now();
    let before = e.world().to_bytes();
    let head = e.head();
    let long = "x".repeat(201);
    let huge = "y".repeat(10 << 20);
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(String, ErrorKind, &str)> = vec![
        (json!({"observer": "Mira", "about": "Wren", "mood": "ok", "confidence": 1.5}).to_string(), ErrorKind::Invalid, "confidence"),
        (json!({"observer": "Mira", "about": "Wren", "energy": -0.1}).to_string(), ErrorKind::Invalid, "energy"),
        (json!({"observer": "Mira", "about": "Wren", "availability": 2}).to_string(), ErrorKind::Invalid, "availability"),
        (json!({"observer": "Mira", "about": "Wren", "feelings": [{"toward": "Tobias", "sentiment": 1.5}]}).to_string(), ErrorKind::Invalid, "sentiment"),
        (json!({"observer": "Mira", "about": "Wren", "feelings": [{"toward": "Wren", "sentiment": 0.5}]}).to_string(), ErrorKind::Invalid, "third person"),
        (json!({"observer": "Mira", "about": "Wren", "feelings": [{"toward": "Tobias", "sentiment": 0.5}, {"toward": "Tobias", "sentiment": 0.1}]}).to_string(), ErrorKind::Invalid, "twice"),
        (json!({"observer": "Mira", "about": "Wren", "mood": long}).to_string(), ErrorKind::Invalid, "longer than"),
        (json!({"observer": "Mira", "about": "Wren", "mood": "a\nb"}).to_string(), ErrorKind::Invalid, "line break"),
        (json!({"observer": "Mira", "about": "Wren", "mood": "  "}).to_string(), ErrorKind::Invalid, "empty"),
        (json!({"observer": "Mira", "about": "Wren", "mood": huge}).to_string(), ErrorKind::Invalid, "longer than"),
        (json!({"observer": "Mira", "about": "Wren", "traits": vec!["t"; 17]}).to_string(), ErrorKind::Invalid, "at most"),
        (json!({"observer": "Mira", "about": "Wren"}).to_string(), ErrorKind::Invalid, "needs"),
        (json!({"observer": "Mira", "about": "Mira", "mood": "ok"}).to_string(), ErrorKind::Invalid, "someone else"),
        (json!({"observer": "Mira", "about": "Wren", "mood": "ok", "source": {"told_by": "Mira"}}).to_string(), ErrorKind::Invalid, "told by itself"),
        (json!({"observer": "Wren's mother", "about": "Wren", "mood": "ok"}).to_string(), ErrorKind::Invalid, "only mentioned"),
        (json!({"observer": "Nobody", "about": "Wren", "mood": "ok"}).to_string(), ErrorKind::NotFound, "Nobody"),
        (json!({"observer": 999_999, "about": "Wren", "mood": "ok"}).to_string(), ErrorKind::NotFound, "999999"),
        (json!({"observer": "Mira", "about": "Wren", "mood": "ok", "love": 1}).to_string(), ErrorKind::Invalid, "unknown field"),
        (json!({"observer": "Mira", "about": "Wren", "mood": "ok", "source": "rumour"}).to_string(), ErrorKind::Invalid, "source"),
        (format!(r#"{{"observer": "Mira", "about": "Wren", "mood": {deep}}}"#), ErrorKind::Invalid, "belief"),
        ("[1]".to_owned(), ErrorKind::Invalid, "object"),
        ("not json".to_owned(), ErrorKind::Invalid, "JSON"),
    ];
    for (json, kind, why) in cases {
        let err = e.observe_belief_json(&json, now).unwrap_err();
        assert_eq!(err.kind(), kind, "{}: {err}", &json[..json.len().min(120)]);
        assert!(
            err.to_string().contains(why),
            "{}: {err}",
            &json[..json.len().min(120)]
        );
        assert_eq!(e.head(), head);
        assert_eq!(e.world().to_bytes(), before);
    }
    // Time never goes back.
    let err = e
        .observe_belief_json(
            r#"{"observer": "Mira", "about": "Wren", "mood": "ok"}"#,
            now - 1,
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    // An event straight into the log is checked the same way.
    let (mira, wren) = (id(&e, "Mira"), id(&e, "Wren"));
    let event = Event::BeliefObserved {
        observation: BeliefObservation {
            observer: mira,
            about: wren,
            mood: None,
            energy: Some(f64::NAN),
            availability: None,
            traits: vec![],
            feelings: vec![],
            confidence: 1.0,
            source: BeliefSource::Host,
            at: now,
        },
    };
    assert_eq!(
        e.append(vec![event]).unwrap_err().kind(),
        ErrorKind::Invalid
    );
    // A mentioned person is never heard nor speaks.
    assert!(e.world().mind(mother).is_none());
    assert_eq!(e.head(), head);
    assert_eq!(
        e.beliefs(EntityId(999_999), now).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn removing_a_person_forgets_the_beliefs_about_them() {
    let mut e = engine();
    let now = e.world().now();
    // The entity index, built before, is kept in step with a person mentioned.
    assert!(e.search_entities("harbourmaster", 5).unwrap().is_empty());
    let boss = e
        .mention_person("the harbourmaster", FactSheet::default(), None, now)
        .unwrap();
    assert_eq!(e.search_entities("harbourmaster", 5).unwrap()[0].0, boss);
    let (mira, wren) = (id(&e, "Mira"), id(&e, "Wren"));
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "Wren", "feelings": [{"toward": "the harbourmaster", "sentiment": -0.5, "text": "fears him"}]}"#,
        now,
    )
    .unwrap();
    e.observe_belief_json(
        r#"{"observer": "Mira", "about": "the harbourmaster", "traits": ["greedy"]}"#,
        now,
    )
    .unwrap();
    e.append(vec![Event::EntityRemoved { id: boss }]).unwrap();
    assert!(e.beliefs(mira, now).unwrap().is_empty());
    assert!(e.world().person_belief(mira, wren).is_none());
    assert_eq!(replayed(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn replay_equals_the_live_world_across_beliefs_reports_and_mentions() {
    let mut e = engine();
    let now = e.world().now() + MINUTE;
    e.observe_belief_json(
        r#"{"observer": "Tobias", "about": "Wren", "mood": "wary", "availability": 0.2,
            "traits": ["quiet"], "confidence": 0.6, "source": "inferred"}"#,
        now,
    )
    .unwrap();
    turn(
        &mut e,
        "My boss at the docks hates Mira.",
        "Does he now.",
        r#"{"reports": [
            {"type": "person_mentioned", "name": "the dock boss", "line": 1},
            {"type": "relation", "who": "Mira", "from": "the dock boss", "to": "Mira", "line": 1, "sentiment": -0.9, "relation": "grudge"},
            {"type": "belief", "who": "Tobias", "about": "Mira", "line": 2, "mood": "amused"}
        ]}"#,
    );
    e.mention_person(
        "Ana's brother",
        FactSheet::from_text("A sailor."),
        None,
        e.world().now(),
    )
    .unwrap();
    let live = e.world().to_bytes();
    assert_eq!(replayed(&e).to_bytes(), live);
    let tobias = id(&e, "Tobias");
    let at = e.world().now() + 5 * HOUR;
    assert_eq!(
        replayed(&e).beliefs_of(tobias, at),
        e.beliefs(tobias, at).unwrap()
    );
    assert!(!e.beliefs(tobias, at).unwrap().is_empty());
}

/// A report of the proptest: who, about whom, which line, which kind.
#[derive(Clone, Debug)]
struct Said {
    who: usize,
    about: usize,
    line: u32,
    relation: bool,
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    /// Whatever the model reports, a belief reaches only a character that heard the line it
    /// rests on.
    #[test]
    fn no_belief_reaches_a_character_that_did_not_hear_its_line(
        hearing in prop::collection::vec((0usize..3, 0u8..8), 1..5),
        said in prop::collection::vec(
            (0usize..4, 0usize..4, 0u32..6, any::<bool>())
                .prop_map(|(who, about, line, relation)| Said { who, about, line, relation }),
            0..12,
        ),
    ) {
        let e = engine();
        let world = e.world();
        let people = [id(&e, "Wren"), id(&e, "Mira"), id(&e, "Tobias"), id(&e, "Ana")];
        let names = ["Wren", "Mira", "Tobias", "Ana"];
        let present: WitnessSet = people[..3].iter().copied().collect();
        // Each line: its speaker and who of the three heard it (the speaker always does).
        let lines: Vec<(EntityId, WitnessSet)> = hearing
            .iter()
            .map(|(speaker, mask)| {
                let heard = (0..3)
                    .filter(|i| *i == *speaker || mask & (1 << i) != 0)
                    .map(|i| people[i])
                    .collect();
                (people[*speaker], heard)
            })
            .collect();
        let pass = Pass { present: &present, lines: &lines, remembered: true, step: 0.1, now: world.now() };
        let reports: Vec<serde_json::Value> = said
            .iter()
            .map(|s| if s.relation {
                json!({"type": "relation", "who": names[s.who], "from": names[s.about],
                       "to": names[(s.about + 1) % 4], "line": s.line, "sentiment": 0.5})
            } else {
                json!({"type": "belief", "who": names[s.who], "about": names[s.about],
                       "line": s.line, "mood": "wary"})
            })
            .collect();
        let answer = json!({ "reports": reports }).to_string();
        let mut judged = world.clone();
        let verdict = judge_answer(&mut judged, &pass, &[], &answer);
        for (s, r) in said.iter().zip(&verdict.reports) {
            let heard = (s.line as usize)
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .is_some_and(|(_, w)| w.contains(people[s.who]));
            if r.rejected.is_none() {
                prop_assert!(heard, "{s:?} was applied");
            }
        }
        // And in the world: whoever holds a belief heard a line of an applied report of theirs.
        for (o, observer) in people.iter().enumerate() {
            let holds = people.iter().any(|a| judged.person_belief(*observer, *a).is_some());
            let earned = said.iter().zip(&verdict.reports).any(|(s, r)| {
                r.rejected.is_none() && s.who == o
            });
            prop_assert_eq!(holds, earned, "{}", names[o]);
            if holds {
                prop_assert!(present.contains(*observer));
            }
        }
    }
}

#[test]
fn a_world_file_marks_people_only_mentioned_and_exports_them_so() {
    let mut e = engine();
    let with_boss = format!(
        "{WORLD}\n[[entities]]\nid = \"boss\"\nname = \"the harbourmaster\"\nmentioned = true\n\
         aliases = [\"Harlan\"]\nmood = \"greedy\"\nfacts = \"Runs the docks.\"\n"
    );
    e.apply_world_file("inn.toml", &with_boss).unwrap();
    let boss = e.world().find_entity("boss").unwrap();
    assert!(boss.mentioned);
    assert_eq!(boss.aliases, ["Harlan"]);
    assert!(e.world().mind(boss.id).is_none());
    let exported = e.export_world_file();
    assert!(exported.contains("mentioned = true"), "{exported}");
    // The export opens as the same world: the person is still only mentioned.
    let mut again = Engine::in_memory("Inn", 0).unwrap();
    again.apply_world_file("export.toml", &exported).unwrap();
    let boss = again.world().find_entity("boss").unwrap();
    assert!(boss.mentioned);
    assert!(again.world().mind(boss.id).is_none());
    // A patch cannot turn a mentioned person into a character, nor give it a place.
    let head = e.head();
    let err = e
        .apply_world_file("inn.toml", &with_boss.replace("mentioned = true\n", ""))
        .unwrap_err();
    assert!(err.to_string().contains("only mentioned"), "{err}");
    let placed = with_boss.replace(
        "mentioned = true\n",
        "mentioned = true\ncontainer = \"inn\"\n",
    );
    let mut fresh = Engine::in_memory("Inn", 0).unwrap();
    let err = fresh.apply_world_file("inn.toml", &placed).unwrap_err();
    assert!(err.to_string().contains("only mentioned"), "{err}");
    assert_eq!(e.head(), head);
    assert_eq!(replayed(&e).to_bytes(), e.world().to_bytes());
}
