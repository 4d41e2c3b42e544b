//! World files: loading the tavern, exporting it back, patching a save with a newer version,
//! and errors that name the file, line and field.

use rp_core::worldfile::{creation_events, export};
use rp_core::*;

const TAVERN: &str = include_str!("../../examples/tavern.toml");

fn load(text: &str) -> Result<Engine> {
    let mut e = Engine::in_memory("scratch", 0)?;
    e.apply_world_file("test.toml", text)?;
    Ok(e)
}

fn world_of(text: &str) -> World {
    let mut w = World::new();
    for ev in creation_events("test.toml", text, 0, WorldSettings::default()).unwrap() {
        w.apply(&ev).unwrap();
    }
    w
}

#[test]
fn the_tavern_loads_as_described() {
    let w = world_of(TAVERN);
    assert_eq!(w.meta().unwrap().name, "The Crooked Lantern");
    assert_eq!(w.containers().count(), 3);
    assert_eq!(w.entities().count(), 4);
    assert_eq!(w.edges().count(), 5);
    let wren = w.entity_by_key("wren").unwrap();
    assert!(wren.host_controlled);
    let booth = w.container_by_key("booth").unwrap();
    assert_eq!(
        wren.activity.position,
        Some(Position {
            container: booth.id,
            slot: Some("bench".into())
        })
    );
    let letter = w.entity_by_key("letter").unwrap();
    assert_eq!(w.carrier_of(letter.id), Some(wren.id));
    assert_eq!(letter.activity.position, None);
    let mira = w.entity_by_name("mira holt").unwrap();
    assert_eq!(mira.facts.lines().len(), 4);
    assert_eq!(mira.facts.lines()[3], "$if mentioned: $respond true");
    assert_eq!(
        mira.activity.action.as_ref().unwrap().verb,
        "polishing tankards"
    );
    let tobias = w.entity_by_key("tobias").unwrap();
    // Asymmetric edges stay two records.
    assert_eq!(w.edge(mira.id, tobias.id).unwrap().trust, -0.2);
    assert_eq!(w.edge(tobias.id, mira.id).unwrap().trust, 0.7);
    // Tobias's eye on the stranger in his booth: one-way, Wren has no edge back.
    let noticed = w.edge(tobias.id, wren.id).unwrap();
    assert_eq!((noticed.affinity, noticed.trust), (0.2, 0.0));
    assert!(
        noticed
            .summary
            .starts_with("The stranger sharing his booth")
    );
    assert!(w.edge(wren.id, tobias.id).is_none());
    // Drives: the world's late nights, the characters' personalities, no drives for the letter.
    assert_eq!(w.drive_config().night_start, Some(2.0));
    assert_eq!(w.mind(tobias.id).unwrap().personality.shyness, 0.7);
    assert_eq!(w.mind(mira.id).unwrap().personality.shyness, 0.1);
    assert_eq!(w.mind(tobias.id).unwrap().config.threshold, Some(0.6));
    assert!(!w.drive_settings(letter.id).enabled);
    assert!(w.mind(wren.id).is_none(), "the player has no mind");
}

#[test]
fn export_round_trips() {
    let w = world_of(TAVERN);
    let text = export(&w);
    let again = world_of(&text);
    assert_eq!(export(&again), text, "export → load → export is a fixpoint");
    // Same content, not just the same text.
    for e in w.entities() {
        let f = again.entity_by_key(e.key.as_deref().unwrap()).unwrap();
        assert_eq!(
            (&f.name, &f.aliases, &f.facts, &f.state, f.host_controlled),
            (&e.name, &e.aliases, &e.facts, &e.state, e.host_controlled)
        );
        assert_eq!(f.activity.position.is_some(), e.activity.position.is_some());
    }
    assert_eq!(again.edges().count(), w.edges().count());
}

#[test]
fn export_escapes_awkward_text() {
    let mut e = Engine::in_memory("W \"quoted\"", 0).unwrap();
    let id = EntityId(e.world().next_id());
    e.append(vec![Event::EntityCreated {
        id,
        key: None,
        name: "O'Brien \"the \\ Blade\"".into(),
        aliases: vec!["x'''y".into()],
        facts: FactSheet(vec![
            "ends with a quote'".into(),
            "has ''' inside".into(),
            "tab\there".into(),
        ]),
        host_controlled: false,
        state: EntityState::default(),
    }])
    .unwrap();
    let text = export(e.world());
    let again = world_of(&text);
    let f = again.entity_by_name("O'Brien \"the \\ Blade\"").unwrap();
    assert_eq!(f.facts, e.world().entity(id).unwrap().facts);
    assert_eq!(f.aliases, vec!["x'''y".to_string()]);
    assert_eq!(again.meta().unwrap().name, "W \"quoted\"");
}

#[test]
fn a_newer_file_patches_only_what_it_changed() {
    let mut e = load(TAVERN).unwrap();
    let w = e.world();
    let (mira, tobias, wren) = (
        w.entity_by_key("mira").unwrap().id,
        w.entity_by_key("tobias").unwrap().id,
        w.entity_by_key("wren").unwrap().id,
    );
    // Play changes Mira's mood and her feelings about Tobias.
    let mut edge = w.edge(mira, tobias).unwrap().clone();
    edge.affinity = 0.9;
    let mut state = w.entity(mira).unwrap().state.clone();
    state.mood = Some("furious".into());
    e.append(vec![
        Event::EdgeUpdated { edge },
        Event::EntityStateChanged {
            entity: mira,
            state,
        },
    ])
    .unwrap();

    // Version 2 of the file: new facts for Mira, a new mood for Tobias, a new summary for
    // Mira → Tobias, a new character, and the letter is gone.
    let v2 = TAVERN
        .replace("Her brother vanished on the marsh ten winters ago.", "Her brother vanished on the marsh twelve winters ago.")
        .replace("mood = \"maudlin\"", "mood = \"hopeful\"")
        .replace("does not believe his stories.", "half believes his stories.")
        .replace("inventory = [\"letter\"]\n", "")
        .replace(
            "[[entities]]\nid = \"letter\"\nname = \"the sealed letter\"\nfacts = '''\nHeavy cream paper, sealed with black wax stamped with a heron.\n'''\n",
            "[[entities]]\nid = \"cat\"\nname = \"Soot\"\ncontainer = \"tavern\"\nslot = \"hearth\"\nfacts = '''\nThe tavern cat.\n'''\n",
        );
    assert_ne!(v2, TAVERN);
    let head = e.head();
    let n = e.apply_world_file("tavern.toml", &v2).unwrap();
    assert!(n >= 5, "{n} events");
    assert_eq!(e.head(), head + n as u64, "one batch");
    let w = e.world();
    let m = w.entity(mira).unwrap();
    assert!(m.facts.lines().iter().any(|l| l.contains("twelve winters")));
    assert_eq!(
        m.state.mood.as_deref(),
        Some("furious"),
        "play's change survives: the file did not touch mood"
    );
    assert_eq!(
        w.entity(tobias).unwrap().state.mood.as_deref(),
        Some("hopeful")
    );
    let edge = w.edge(mira, tobias).unwrap();
    assert_eq!(edge.affinity, 0.9, "play's affinity survives");
    assert!(edge.summary.contains("half believes"));
    assert!(w.entity_by_key("letter").is_none());
    assert!(w.entity(wren).unwrap().inventory.is_empty());
    let cat = w.entity_by_name("Soot").unwrap();
    assert_eq!(
        cat.activity.position.as_ref().unwrap().slot.as_deref(),
        Some("hearth")
    );

    // The same file again changes nothing.
    assert_eq!(e.apply_world_file("tavern.toml", &v2).unwrap(), 0);
    // And the patch is ordinary history: rewind undoes it.
    e.rewind(head).unwrap();
    assert!(e.world().entity_by_key("letter").is_some());
}

const DRIVES: &str = r#"
[world]
name = "Drives"

[drives]
night_start = 1.0
social_debt_per_hour = 0.5

[drives.weights]
social_debt = 0.8

[[containers]]
id = "room"
name = "the room"

[[entities]]
id = "ana"
name = "Ana"
player = true
container = "room"

[[entities]]
id = "bo"
name = "Bo"
container = "room"
personality = { shyness = 0.9, humor = 0.2 }
drives = { threshold = 0.5, stimulus_kinds = ["smell"] }

[[entities]]
id = "cup"
name = "a cup"
drives = { enabled = false }
"#;

#[test]
fn drive_settings_and_personalities_load_into_the_world() {
    let e = load(DRIVES).unwrap();
    let w = e.world();
    let config = w.drive_config();
    assert_eq!(config.night_start, Some(1.0));
    assert_eq!(config.social_debt_per_hour, Some(0.5));
    assert_eq!(config.weights.unwrap().social_debt, 0.8);
    assert_eq!(
        config.weights.unwrap().task,
        0.5,
        "weights not given keep their default"
    );
    let bo = w.entity_by_key("bo").unwrap().id;
    let mind = w.mind(bo).unwrap();
    assert_eq!(mind.personality.shyness, 0.9);
    assert_eq!(mind.personality.humor, 0.2);
    assert_eq!(mind.personality.patience, 0.5, "a trait not given is 0.5");
    assert_eq!(mind.config.threshold, Some(0.5));
    let s = w.drive_settings(bo);
    assert_eq!(
        (s.threshold, s.social_debt_per_hour, s.night_start),
        (0.5, 0.5, 1.0),
        "Bo's settings over the world's over the defaults"
    );
    assert!(DriveSettings::knows_kind(
        "smell",
        w.drive_config(),
        Some(&mind.config)
    ));
    assert!(!w.drive_settings(w.entity_by_key("cup").unwrap().id).enabled);
    // The drives read from the file are the engine's: Bo's threshold shows in its drives.
    let mut e = e;
    assert!(e.drives(bo, 0).unwrap().threshold < 0.75);
}

#[test]
fn a_patch_that_changes_only_a_personality_records_only_that() {
    let mut e = load(TAVERN).unwrap();
    let (mira, tobias) = (
        e.world().resolve_entity("mira").unwrap(),
        e.world().resolve_entity("tobias").unwrap(),
    );
    // Play changes Mira's personality and the world's settings; the file does not touch them.
    let mut warmer = e.world().mind(mira).unwrap().personality;
    warmer.humor = 0.9;
    e.set_personality(mira, warmer).unwrap();
    e.configure_drives(
        None,
        DriveConfig {
            night_start: Some(3.0),
            ..Default::default()
        },
    )
    .unwrap();
    let v2 = TAVERN.replace("shyness = 0.7", "shyness = 0.9");
    assert_ne!(v2, TAVERN);
    let doc = rp_core::worldfile::parse("tavern.toml", &v2).unwrap();
    let events = rp_core::worldfile::plan(e.world(), "tavern.toml", &v2, &doc).unwrap();
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(kinds, ["personality_set", "world_file_applied"]);
    assert!(matches!(
        &events[0],
        Event::PersonalitySet { entity, personality } if *entity == tobias && personality.shyness == 0.9
    ));
    e.apply_world_file("tavern.toml", &v2).unwrap();
    let w = e.world();
    assert_eq!(w.mind(tobias).unwrap().personality.shyness, 0.9);
    assert_eq!(w.mind(tobias).unwrap().personality.humor, 0.6);
    assert_eq!(
        w.mind(mira).unwrap().personality.humor,
        0.9,
        "play's change survives"
    );
    assert_eq!(
        w.drive_config().night_start,
        Some(3.0),
        "play's change survives"
    );

    // A version that changes the world's settings and Tobias's drives patches those.
    let v3 = v2
        .replace("night_start = 2.0", "night_start = 1.0")
        .replace("threshold = 0.6", "threshold = 0.65");
    let doc = rp_core::worldfile::parse("tavern.toml", &v3).unwrap();
    let events = rp_core::worldfile::plan(e.world(), "tavern.toml", &v3, &doc).unwrap();
    let kinds: Vec<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(
        kinds,
        [
            "drives_configured",
            "drives_configured",
            "world_file_applied"
        ]
    );
    e.apply_world_file("tavern.toml", &v3).unwrap();
    let w = e.world();
    assert_eq!(w.drive_config().night_start, Some(1.0));
    assert_eq!(w.mind(tobias).unwrap().config.threshold, Some(0.65));
    assert_eq!(
        w.mind(tobias).unwrap().config.social_debt_per_hour,
        Some(3.0)
    );
    // Taking the settings out of the file takes them out of the world.
    let v4 = v3.replace(
        "[entities.drives]\nsocial_debt_per_hour = 3.0\nthreshold = 0.65\n",
        "",
    );
    assert_ne!(v4, v3);
    e.apply_world_file("tavern.toml", &v4).unwrap();
    assert_eq!(
        e.world().mind(tobias).unwrap().config,
        DriveConfig::default()
    );
}

#[test]
fn bad_drive_settings_and_traits_are_errors_at_their_key_and_apply_nothing() {
    let mut e = load(TAVERN).unwrap();
    let before = e.world().to_bytes();
    let head = e.head();
    let line_of = |text: &str, needle: &str| text.lines().position(|l| l == needle).unwrap() + 1;
    let patch_error = |e: &mut Engine, text: &str| match e.apply_world_file("test.toml", text) {
        Err(Error::WorldFile {
            line,
            field,
            message,
            ..
        }) => (line, field, message),
        other => panic!("expected a world-file error, got {other:?}"),
    };
    // A trait out of [0, 1]: the error names the trait, at its line.
    let bad = TAVERN.replace("shyness = 0.7", "shyness = 1.5");
    let (line, field, message) = patch_error(&mut e, &bad);
    assert_eq!(line, line_of(&bad, "shyness = 1.5"));
    assert_eq!(field, "entities.personality.shyness");
    assert!(
        message.contains("shyness is 1.5") && message.contains("[0, 1]"),
        "{message}"
    );
    // A negative rate in the world's settings.
    let bad = TAVERN.replace(
        "night_end = 7.0",
        "night_end = 7.0\nsocial_debt_per_hour = -0.5",
    );
    let (line, field, message) = patch_error(&mut e, &bad);
    assert_eq!(line, line_of(&bad, "social_debt_per_hour = -0.5"));
    assert_eq!(field, "drives.social_debt_per_hour");
    assert!(message.contains("not negative"), "{message}");
    // In an inline table, and in a weight.
    let bad = DRIVES.replace("threshold = 0.5", "threshold = 1.2");
    let (line, _, field, _) = file_error(&bad);
    assert_eq!(field, "entities.drives.threshold");
    assert_eq!(
        line,
        line_of(
            &bad,
            "drives = { threshold = 1.2, stimulus_kinds = [\"smell\"] }"
        )
    );
    let (_, _, field, message) =
        file_error(&DRIVES.replace("social_debt = 0.8", "social_debt = 11.0"));
    assert_eq!(field, "drives.weights.social_debt", "{message}");
    // An unknown setting is named like any unknown field.
    let (_, _, field, _) = file_error(&DRIVES.replace("threshold = 0.5", "treshold = 0.5"));
    assert_eq!(field, "treshold");
    // A player has no drives.
    let bad = DRIVES.replace(
        "player = true\n",
        "player = true\npersonality = { humor = 0.9 }\n",
    );
    let (line, _, field, message) = file_error(&bad);
    assert_eq!(line, line_of(&bad, "personality = { humor = 0.9 }"));
    assert_eq!(field, "entities.personality");
    assert!(message.contains("players have no drives"), "{message}");
    let (_, _, field, message) = file_error(&DRIVES.replace(
        "player = true\n",
        "player = true\ndrives = { enabled = true }\n",
    ));
    assert_eq!(field, "entities.drives");
    assert!(message.contains("players have no drives"), "{message}");
    // Nothing of any of them applied.
    assert_eq!(e.world().to_bytes(), before);
    assert_eq!(e.head(), head);
}

#[test]
fn drive_settings_and_personalities_export_and_load_back() {
    let w = world_of(DRIVES);
    let text = export(&w);
    assert!(
        text.contains("\n[drives]\nsocial_debt_per_hour = 0.5\nnight_start = 1.0\n"),
        "{text}"
    );
    assert!(
        text.contains("\n[drives.weights]\nsocial_debt = 0.8\n"),
        "{text}"
    );
    assert!(
        text.contains("drives = { threshold = 0.5, stimulus_kinds = [\"smell\"] }\n"),
        "{text}"
    );
    assert!(
        text.contains("personality = { humor = 0.2, shyness = 0.9 }\n"),
        "{text}"
    );
    assert!(text.contains("drives = { enabled = false }\n"), "{text}");
    let again = world_of(&text);
    assert_eq!(export(&again), text, "export → load → export is a fixpoint");
    assert_eq!(again.drive_config(), w.drive_config());
    for e in w.entities() {
        let f = again.entity_by_key(e.key.as_deref().unwrap()).unwrap();
        assert_eq!(
            again.mind(f.id).map(|m| (&m.config, m.personality)),
            w.mind(e.id).map(|m| (&m.config, m.personality)),
            "{}",
            e.name
        );
    }
    // A world without drive settings or personalities exports none.
    let plain = export(&world_of(
        "[world]\nname = \"x\"\n[[entities]]\nid = \"a\"\nname = \"A\"\n",
    ));
    assert!(
        !plain.contains("drives") && !plain.contains("personality"),
        "{plain}"
    );
}

fn file_error(text: &str) -> (usize, usize, String, String) {
    match load(text).unwrap_err() {
        Error::WorldFile {
            file,
            line,
            column,
            field,
            message,
        } => {
            assert_eq!(file, "test.toml");
            (line, column, field, message)
        }
        other => panic!("expected a world-file error, got {other:?}"),
    }
}

#[test]
fn a_type_error_names_the_line_and_field() {
    let text = TAVERN.replace(
        "{ name = \"bench\", capacity = 2 }",
        "{ name = \"bench\", capacity = \"two\" }",
    );
    let (line, _, field, message) = file_error(&text);
    let expected = TAVERN
        .lines()
        .position(|l| l.contains("capacity = 2 }"))
        .unwrap()
        + 1;
    assert_eq!(line, expected);
    assert!(field.contains("capacity"), "{field}");
    assert!(
        message.contains("integer") || message.contains("u32"),
        "{message}"
    );
}

#[test]
fn unknown_and_missing_fields_are_named() {
    let (line, _, field, _) =
        file_error("[world]\nname = \"x\"\n\n[[entities]]\nid = \"a\"\nnmae = \"A\"\n");
    assert_eq!(field, "nmae");
    assert!(line >= 4, "{line}");
    let (_, _, field, message) = file_error("[world]\nname = \"x\"\n\n[[entities]]\nid = \"a\"\n");
    assert_eq!(field, "name", "{message}");
}

#[test]
fn bad_references_name_their_line() {
    let text = TAVERN.replace("container = \"bar\"", "container = \"cellar\"");
    let (line, _, field, message) = file_error(&text);
    assert_eq!(
        line,
        TAVERN
            .lines()
            .position(|l| l == "container = \"bar\"")
            .unwrap()
            + 1
    );
    assert_eq!(field, "entities.container");
    assert!(message.contains("cellar"));
    let (_, _, field, _) = file_error(&TAVERN.replace("id = \"tobias\"", "id = \"mira\""));
    assert_eq!(field, "entities.id");
}

#[test]
fn rule_violations_in_a_file_name_the_line() {
    // Three on a bench for two.
    let text = TAVERN.replace("slot = \"window seat\"", "slot = \"bench\"").replace(
        "[[entities]]\nid = \"letter\"",
        "[[entities]]\nid = \"third\"\nname = \"Third\"\ncontainer = \"booth\"\nslot = \"bench\"\n\n[[entities]]\nid = \"letter\"",
    );
    let (line, _, _, message) = file_error(&text);
    assert!(message.contains("full"), "{message}");
    assert!(
        text.lines()
            .nth(line - 1)
            .unwrap()
            .starts_with("container = \"booth\"")
    );
    // An edge to itself.
    let text = TAVERN.replace(
        "from = \"wren\"\nto = \"mira\"",
        "from = \"wren\"\nto = \"wren\"",
    );
    let (_, _, field, message) = file_error(&text);
    assert_eq!(field, "edges");
    assert!(message.contains("itself"));
}

#[test]
fn syntax_errors_are_world_file_errors() {
    let (line, column, _, _) = file_error("[world]\nname = \"x\n");
    assert_eq!((line, column > 0), (2, true));
}

#[test]
fn a_bad_file_creates_no_save() {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join("bad.toml");
    std::fs::write(&wf, "[world]\nname = 3\n").unwrap();
    let save = dir.path().join("bad.rp");
    let err = Engine::create_from_world_file(&save, &wf, 0, EngineOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WorldFile);
    assert!(err.to_string().contains("bad.toml:2:"), "{err}");
    assert!(!save.exists());
    let missing = Engine::create_from_world_file(
        &save,
        dir.path().join("nope.toml"),
        0,
        EngineOptions::default(),
    );
    assert_eq!(missing.unwrap_err().kind(), ErrorKind::WorldFile);
}

#[test]
fn a_failed_patch_changes_nothing() {
    let mut e = load(TAVERN).unwrap();
    let before = e.world().to_bytes();
    let head = e.head();
    let bad = TAVERN.replace("affinity = 0.6", "affinity = 6.0");
    assert_eq!(
        e.apply_world_file("t.toml", &bad).unwrap_err().kind(),
        ErrorKind::WorldFile
    );
    assert_eq!(e.world().to_bytes(), before);
    assert_eq!(e.head(), head);
}

mod sim;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Any reachable world exports to a file that loads back and exports to the same text.
    #[test]
    fn export_load_export_is_a_fixpoint_for_random_worlds(
        ops in proptest::collection::vec(sim::op(), 1..100),
    ) {
        let mut e = Engine::in_memory("Random", 0).unwrap();
        let (batches, _) = sim::valid_batches(e.world(), &ops, &[4]);
        for b in batches {
            e.append(b).unwrap();
        }
        let text = export(e.world());
        let again = world_of(&text);
        proptest::prop_assert_eq!(export(&again), text);
        proptest::prop_assert_eq!(again.entities().count(), e.world().entities().count());
        proptest::prop_assert_eq!(again.edges().count(), e.world().edges().count());
    }
}
