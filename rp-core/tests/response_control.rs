//! Response control against a world: sheets are checked when entities are created or
//! edited, decisions draw from the world's seeded generator, and every decision is recorded
//! so replay reproduces it.

use rp_core::*;

const TAVERN: &str = include_str!("../../examples/tavern.toml");

fn tavern() -> Engine {
    let mut e = Engine::in_memory("Tavern", 0).unwrap();
    e.apply_world_file("tavern.toml", TAVERN).unwrap();
    e
}

fn id(e: &Engine, key: &str) -> EntityId {
    e.world().entity_by_key(key).unwrap().id
}

#[test]
fn a_bad_sheet_is_rejected_at_edit_time_with_line_and_column() {
    let mut e = tavern();
    let mira = id(&e, "mira");
    let before = e.world().to_bytes();
    let head = e.head();
    let err = e
        .append(vec![Event::EntityEdited {
            id: mira,
            name: None,
            aliases: None,
            facts: Some(FactSheet::from_text("fine\n$if mentioned &&: $respond")),
            host_controlled: None,
        }])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::FactSyntax);
    match &err {
        Error::FactSyntax {
            owner,
            line,
            column,
            ..
        } => {
            assert_eq!((owner.as_str(), *line, *column), ("Mira Holt", 2, 17));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.world().to_bytes(), before);
    assert_eq!(e.head(), head);
    let created = Event::EntityCreated {
        id: EntityId(e.world().next_id()),
        key: None,
        name: "Ghost".into(),
        aliases: vec![],
        facts: FactSheet::from_text("$if random(: boo"),
        host_controlled: false,
        state: EntityState::default(),
    };
    assert_eq!(
        e.append(vec![created]).unwrap_err().kind(),
        ErrorKind::FactSyntax
    );
    assert_eq!(e.world().to_bytes(), before);
}

#[test]
fn a_bad_sheet_in_a_world_file_names_the_file() {
    let bad = TAVERN.replace(
        "$if mentioned: $respond true",
        "$if mentioned: $respond perhaps",
    );
    let mut e = Engine::in_memory("x", 0).unwrap();
    let err = e.apply_world_file("tavern.toml", &bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WorldFile);
    assert!(err.to_string().contains("true or false"), "{err}");
}

#[test]
fn decisions_use_the_world_generator_and_are_recorded() {
    let mut e = tavern();
    let mira = id(&e, "mira");
    let tobias = id(&e, "tobias");
    // Mira responds when mentioned (by alias, any case); Tobias has no $respond line.
    let msg = |text: &str| Message {
        content: text.into(),
        author: "Wren".into(),
        ..Message::default()
    };
    let d = e.decide(mira, &msg("Evening, MIRA.")).unwrap();
    assert!(d.respond, "{}", d.explain());
    assert!(!e.decide(mira, &msg("Evening, all.")).unwrap().respond);
    assert!(e.decide(tobias, &msg("Evening, all.")).unwrap().respond);
    let events = e.events(1, e.head()).unwrap();
    let decided = events
        .iter()
        .filter(|(_, ev)| matches!(ev, Event::ResponseDecided { .. }))
        .count();
    assert_eq!(decided, 3);
}

#[test]
fn random_decisions_replay_identically() {
    let mut e = Engine::in_memory("W", 0).unwrap();
    let who = EntityId(e.world().next_id());
    e.append(vec![Event::EntityCreated {
        id: who,
        key: None,
        name: "Chatter".into(),
        aliases: vec![],
        facts: FactSheet::from_text("$if random() < 0.5: $respond\n$if roll(\"d20\") == 20: crits"),
        host_controlled: false,
        state: EntityState::default(),
    }])
    .unwrap();
    let outcomes: Vec<bool> = (0..40)
        .map(|_| e.decide(who, &Message::default()).unwrap().respond)
        .collect();
    assert!(
        outcomes.iter().any(|r| *r) && outcomes.iter().any(|r| !*r),
        "{outcomes:?}"
    );
    assert_eq!(e.world().draws_taken(), 80);
    // Replay applies the recorded outcomes without evaluating anything.
    let mut replayed = World::new();
    for (_, ev) in e.events(1, e.head()).unwrap() {
        replayed.apply(&ev).unwrap();
    }
    assert_eq!(replayed.to_bytes(), e.world().to_bytes());
    // The same seed gives the same decisions from the same position; preview draws nothing.
    let mut preview = facts::SeededDraws::new(e.world().meta().unwrap().settings.seed, 0);
    let first = e
        .world()
        .decide(who, &Message::default(), &mut preview)
        .unwrap();
    assert_eq!(first.respond, outcomes[0]);
    assert_eq!(e.world().draws_taken(), 80);
}

#[test]
fn present_and_time_come_from_the_world() {
    let mut e = tavern();
    let tobias = id(&e, "tobias");
    e.append(vec![Event::EntityEdited {
        id: tobias,
        name: None,
        aliases: None,
        facts: Some(FactSheet::from_text(
            "$if present.includes(\"Wren\") && !present.includes(\"Mira Holt\"): $respond\n$if time.is_night: dozing",
        )),
        host_controlled: None,
    }])
    .unwrap();
    let d = e.decide(tobias, &Message::default()).unwrap();
    assert!(d.respond, "Wren shares the booth; Mira is at the bar");
    assert!(
        d.facts.iter().any(|f| &**f == "dozing"),
        "hour 0 of the world clock is night"
    );
    let d = e
        .decide(
            tobias,
            &Message {
                hour: Some(12.0),
                ..Message::default()
            },
        )
        .unwrap();
    assert!(!d.facts.iter().any(|f| &**f == "dozing"));
}

#[test]
fn a_sheet_error_in_a_world_file_points_at_its_line_in_the_file() {
    let bad = TAVERN.replace(
        "Her brother vanished on the marsh ten winters ago.",
        "$if mentioned &&: $respond",
    );
    let expected_line = TAVERN
        .lines()
        .position(|l| l.starts_with("Her brother vanished"))
        .unwrap()
        + 1;
    let mut e = Engine::in_memory("x", 0).unwrap();
    match e.apply_world_file("tavern.toml", &bad).unwrap_err() {
        Error::WorldFile {
            file,
            line,
            column,
            field,
            message,
        } => {
            assert_eq!(
                (file.as_str(), line, column, field.as_str()),
                ("tavern.toml", expected_line, 17, "entities.facts")
            );
            assert!(message.contains("line 3 of the fact sheet"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn check_sheet_counts_every_line() {
    let e = facts::check_sheet("is a character\n\n$if nope: x").unwrap_err();
    assert_eq!((e.line, e.column), (3, 5));
    assert!(
        e.to_string()
            .starts_with("line 3, column 5: unknown variable")
    );
    assert!(facts::check_sheet("is a character\n\n$if mentioned: $respond\n").is_ok());
}
