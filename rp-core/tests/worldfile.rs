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
    assert_eq!(w.edges().count(), 4);
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
    assert!(w.edge(tobias.id, wren.id).is_none());
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
