//! Requirements: decision points and validators (docs/requirements.md). Each guard refuses
//! its transition while the requirement is pending and allows it once met; a batch that meets
//! it first may then move, one that moves first is refused whole; replay of the log equals the
//! live world, and a requirement added after a transition does not disturb the older events;
//! bad requirements are refused with nothing changed; the prompts of those present carry the
//! warning, and one system line announces each becoming pending; the model's state report
//! settles it; and over random batches, no committed world ever made a guarded transition
//! while its requirement was pending.

use proptest::prelude::*;
use rp_core::story::EventPlan;
use rp_core::turn::prompt::PromptOptions;
use rp_core::turn::{NoSink, Purpose, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::update::UpdateOptions;
use rp_core::*;

const HOUR: i64 = 3_600_000;

const WORLD: &str = r#"
[world]
name = "The Ferry"
now = 28800000

[[containers]]
id = "harbour"
name = "the harbour"

[[containers]]
id = "jetty"
name = "the jetty"
parent = "harbour"

[[containers]]
id = "end"
name = "the end of the jetty"
parent = "jetty"

[[containers]]
id = "boat"
name = "the ferry boat"
parent = "harbour"

[[containers]]
id = "road"
name = "the coast road"

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "jetty"
facts = '''
A traveller with a heavy pack.
fare_paid: false
'''

[[entities]]
id = "bram"
name = "Old Bram"
container = "jetty"
facts = '''
The ferryman. He wants his fare.
$respond
'''

[[entities]]
id = "ana"
name = "Ana"
container = "road"
facts = "Walks the coast road."

[[requirements]]
id = "fare"
name = "The fare"
subject = "wren"
condition = "self.fare_paid == true"
guards = [{ leave = "jetty" }, { time_skip = true }]
text = "Wren must pay the ferryman before leaving the jetty."
"#;

fn engine() -> Engine {
    let mut engine = Engine::in_memory("The Ferry", 0).unwrap();
    engine.apply_world_file("ferry.toml", WORLD).unwrap();
    engine
}

fn id(e: &Engine, name: &str) -> EntityId {
    e.world().find_entity(name).unwrap().id
}

fn place(e: &Engine, key: &str) -> ContainerId {
    e.world().container_by_key(key).unwrap().id
}

/// `who` moved to container `to`.
fn moved(e: &Engine, who: EntityId, to: Option<ContainerId>) -> Event {
    let mut activity = e.world().entity(who).unwrap().activity.clone();
    activity.position = to.map(|container| Position {
        container,
        slot: None,
    });
    Event::ActivityChanged {
        entity: who,
        activity,
    }
}

/// Wren's sheet with `fare_paid: paid`.
fn fare(e: &Engine, paid: bool) -> Event {
    let wren = id(e, "Wren");
    Event::EntityEdited {
        id: wren,
        name: None,
        aliases: None,
        facts: Some(FactSheet(vec![
            "A traveller with a heavy pack.".into(),
            format!("fare_paid: {paid}"),
        ])),
        host_controlled: None,
    }
}

/// Appends `events`, which must be refused as unmet `fare`, changing nothing.
fn refused(e: &mut Engine, events: Vec<Event>) -> Error {
    let before = e.world().to_bytes();
    let head = e.head();
    let err = e.append(events).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RequirementUnmet, "{err}");
    assert_eq!(e.head(), head);
    assert_eq!(e.world().to_bytes(), before);
    err
}

fn replay(e: &Engine) -> World {
    let mut world = World::new();
    for (_, ev) in e.events(1, e.head()).unwrap() {
        world.apply(&ev).unwrap();
    }
    world
}

fn pending(e: &Engine, id: &str) -> bool {
    e.requirements()
        .into_iter()
        .find(|v| v.requirement.id == id)
        .unwrap()
        .pending
}

#[test]
fn leaving_is_refused_while_pending_and_allowed_once_met() {
    let mut e = engine();
    let wren = id(&e, "Wren");
    assert!(pending(&e, "fare"));
    let boat = place(&e, "boat");
    let evs = vec![moved(&e, wren, Some(boat))];
    let err = refused(&mut e, evs);
    let Error::RequirementUnmet {
        id: rid,
        name,
        text,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (rid.as_str(), name.as_str(), text.as_str()),
        (
            "fare",
            "The fare",
            "Wren must pay the ferryman before leaving the jetty."
        )
    );
    assert!(err.to_string().contains("The fare"), "{err}");
    // Out of the world altogether, too; within the jetty (its end) is not leaving it.
    let evs = vec![moved(&e, wren, None)];
    refused(&mut e, evs);
    let end = place(&e, "end");
    e.append(vec![moved(&e, wren, Some(end))]).unwrap();
    let evs = vec![moved(&e, wren, Some(boat))];
    refused(&mut e, evs);
    // Someone else leaves freely.
    let bram = id(&e, "Old Bram");
    e.append(vec![moved(&e, bram, Some(boat))]).unwrap();
    // Paid: she goes.
    e.append(vec![fare(&e, true)]).unwrap();
    assert!(!pending(&e, "fare"));
    e.append(vec![moved(&e, wren, Some(boat))]).unwrap();
    assert_eq!(
        e.world()
            .entity(wren)
            .unwrap()
            .activity
            .position
            .as_ref()
            .unwrap()
            .container,
        boat
    );
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn a_time_skip_is_refused_while_pending() {
    let mut e = engine();
    let now = e.world().now();
    let skip = Event::TimeSkipped {
        from: now,
        to: now + HOUR,
        skip: Skip::Jump { to: now + HOUR },
    };
    let evs = vec![skip.clone()];
    refused(&mut e, evs);
    // Through the skip machine as well.
    let err = e
        .begin_time_skip(Skip::Jump { to: now + HOUR }, &Default::default())
        .and_then(|skip| run_blind(&mut e, &mut rp_core::job::Job::from(skip)));
    assert!(
        matches!(&err, Err(x) if x.kind() == ErrorKind::RequirementUnmet),
        "{err:?}"
    );
    e.append(vec![fare(&e, true)]).unwrap();
    e.append(vec![skip]).unwrap();
}

/// Runs a job answering every request with an empty summary; the error of its finish.
fn run_blind(e: &mut Engine, job: &mut rp_core::job::Job) -> Result<()> {
    use rp_core::machine::Step;
    loop {
        match job.step(e)? {
            Step::Generate(_) => job.provide(e, GenerateResult::text("They waited."))?,
            Step::Done => break,
            _ => {
                return Err(Error::Conflict {
                    reason: "unexpected step".into(),
                });
            }
        }
    }
    job.finish(e).map(|_| ())
}

#[test]
fn scoped_events_scene_closes_and_actions_are_guarded() {
    let mut e = engine();
    let wren = id(&e, "Wren");
    let bram = id(&e, "Old Bram");
    let now = e.world().now();
    let plan = |name: &str| EventPlan {
        name: name.into(),
        participants: vec![wren, bram],
        ..EventPlan::default()
    };
    let crossing = e.plan_event(plan("the crossing"), now).unwrap();
    let song = e.plan_event(plan("a song"), now).unwrap();
    let jetty = place(&e, "jetty");
    let scene = e.open_scene(jetty, now).unwrap();
    e.add_requirement(
        r#"{"id": "ticket", "name": "A ticket", "subject": "Wren",
            "condition": "self.ticket == true",
            "guards": [{"start_event": "the crossing"}, {"complete_event": true},
                       {"scene_close": true}, {"action": "board"}],
            "text": "Wren needs a ticket."}"#,
    )
    .unwrap();
    // Another event starts freely; the crossing does not.
    e.start_event(song, now).unwrap();
    let err = e.start_event(crossing, now).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RequirementUnmet, "{err}");
    // Completing any event is guarded; cancelling is not.
    let err = e
        .complete_event(song, Promotion::default(), now)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RequirementUnmet, "{err}");
    let evs = vec![Event::SceneClosed { id: scene, at: now }];
    refused(&mut e, evs);
    // A host action, by name and subject.
    let err = e.check_action("board", Some(wren)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RequirementUnmet);
    e.check_action("board", None).unwrap_err();
    e.check_action("board", Some(bram)).unwrap();
    e.check_action("sing", Some(wren)).unwrap();
    // Met: all of it goes.
    let sheet = FactSheet(vec!["ticket: true".into(), "fare_paid: true".into()]);
    e.append(vec![Event::EntityEdited {
        id: wren,
        name: None,
        aliases: None,
        facts: Some(sheet),
        host_controlled: None,
    }])
    .unwrap();
    e.check_action("board", Some(wren)).unwrap();
    e.start_event(crossing, now).unwrap();
    e.complete_event(song, Promotion::default(), now).unwrap();
    e.append(vec![Event::SceneClosed { id: scene, at: now }])
        .unwrap();
    e.cancel_event(crossing, now).unwrap();
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn batching_cannot_bypass_a_requirement() {
    let mut e = engine();
    let wren = id(&e, "Wren");
    let boat = place(&e, "boat");
    // Moving first and paying after, in one batch: refused whole.
    let evs = vec![moved(&e, wren, Some(boat)), fare(&e, true)];
    refused(&mut e, evs);
    // Paying, moving, then unpaying: the move found it met.
    let head = e.head();
    e.append(vec![
        fare(&e, true),
        moved(&e, wren, Some(boat)),
        fare(&e, false),
    ])
    .unwrap();
    assert!(e.head() >= head + 3);
    assert!(pending(&e, "fare"));
    // From a JSON batch, as C and Python give one, the same.
    let mut e = engine();
    let json = format!(
        r#"[{{"activity_changed": {{"entity": {}, "activity": {{"position": {{"container": {}}}}}}}}}]"#,
        wren.0, boat.0
    );
    let events = Event::list_from_json(&json).unwrap();
    refused(&mut e, events);
}

#[test]
fn replay_refuses_an_old_log_that_moved_while_pending() {
    // A log recorded without the requirement replays fine; the same events after a
    // requirement was added are refused on replay too.
    let e = engine();
    let wren = id(&e, "Wren");
    let boat = place(&e, "boat");
    let mut events: Vec<Event> = e
        .events(1, e.head())
        .unwrap()
        .into_iter()
        .map(|(_, ev)| ev)
        .collect();
    events.push(moved(&e, wren, Some(boat)));
    let mut world = World::new();
    let mut last = Ok(());
    for ev in &events {
        last = world.apply(ev);
        if last.is_err() {
            break;
        }
    }
    assert_eq!(last.unwrap_err().kind(), ErrorKind::RequirementUnmet);
}

#[test]
fn a_requirement_added_after_a_transition_leaves_older_events_alone() {
    let mut e = Engine::in_memory("The Ferry", 0).unwrap();
    let text = WORLD.split("[[requirements]]").next().unwrap();
    e.apply_world_file("ferry.toml", text).unwrap();
    let wren = id(&e, "Wren");
    let boat = place(&e, "boat");
    let jetty = place(&e, "jetty");
    e.append(vec![moved(&e, wren, Some(boat))]).unwrap();
    e.append(vec![moved(&e, wren, Some(jetty))]).unwrap();
    let fare = e
        .add_requirement(
            r#"{"id": "fare", "name": "The fare", "subject": "wren",
                "condition": "self.fare_paid", "guards": [{"leave": "jetty"}],
                "text": "Pay first."}"#,
        )
        .unwrap();
    assert_eq!(fare.subject, Some(wren));
    assert_eq!(fare.guards, vec![Guard::Leave { container: jetty }]);
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
    let evs = vec![moved(&e, wren, Some(boat))];
    refused(&mut e, evs);
    // Removed: free again, and a rewind before the removal brings it back.
    let before_removal = e.head();
    e.remove_requirement("fare").unwrap();
    e.append(vec![moved(&e, wren, Some(boat))]).unwrap();
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
    assert_eq!(
        e.remove_requirement("fare").unwrap_err().kind(),
        ErrorKind::NotFound
    );
    e.rewind(before_removal).unwrap();
    assert!(e.world().requirement("fare").is_some());
}

#[test]
fn bad_requirements_are_refused_changing_nothing() {
    let mut e = engine();
    let before = e.world().to_bytes();
    let head = e.head();
    let bad = [
        ("not json", ErrorKind::Invalid),
        ("[1]", ErrorKind::Invalid),
        (
            r#"{"id": "x", "name": "X", "subject": "wren", "condition": "self.a ===",
                "guards": [{"time_skip": true}], "text": "t"}"#,
            ErrorKind::FactSyntax,
        ),
        (
            r#"{"id": "x", "name": "X", "subject": "nobody", "condition": "true",
                "guards": [{"time_skip": true}], "text": "t"}"#,
            ErrorKind::NotFound,
        ),
        (
            r#"{"id": "x", "name": "X", "subject": "wren", "condition": "true",
                "guards": [{"leave": "nowhere"}], "text": "t"}"#,
            ErrorKind::NotFound,
        ),
        (
            r#"{"id": "x", "name": "X", "subject": "wren", "condition": "true",
                "guards": [{"start_event": "no such event"}], "text": "t"}"#,
            ErrorKind::NotFound,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "self.paid",
                "guards": [{"time_skip": true}], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "true",
                "guards": [{"leave": "jetty"}], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "true", "guards": [], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "true",
                "guards": [{"time_skip": true, "scene_close": true}], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "true",
                "guards": [{"time_skip": false}], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "", "condition": "true",
                "guards": [{"time_skip": true}], "text": "t"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "x", "name": "X", "condition": "true",
                "guards": [{"time_skip": true}], "text": "t", "colour": "red"}"#,
            ErrorKind::Invalid,
        ),
        (
            r#"{"id": "fare", "name": "X", "condition": "true",
                "guards": [{"time_skip": true}], "text": "t"}"#,
            ErrorKind::Conflict,
        ),
    ];
    for (json, kind) in bad {
        let err = e.add_requirement(json).unwrap_err();
        assert_eq!(err.kind(), kind, "{json}: {err}");
        assert_eq!(e.head(), head);
        assert_eq!(e.world().to_bytes(), before);
    }
    assert_eq!(
        e.remove_requirement("nope").unwrap_err().kind(),
        ErrorKind::NotFound
    );
    // A forged announcement: it is pending and announced already; a "met" note is false.
    for line in [
        None,
        Some(SystemLine {
            id: e.world().next_id(),
            text: "⚠️ DECISION REQUIRED: The fare: Wren must pay the ferryman before leaving the jetty.".into(),
            audience: None,
            at: e.world().now(),
        }),
    ] {
        let err = e
            .append(vec![Event::RequirementAnnounced {
                id: "fare".into(),
                line,
            }])
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    }
    assert_eq!(e.world().to_bytes(), before);
    // A world file with a bad requirement: an error at its table, nothing applied.
    let mut fresh = Engine::in_memory("The Ferry", 0).unwrap();
    let broken = WORLD.replace("leave = \"jetty\"", "leave = \"pier\"");
    let err = fresh.apply_world_file("ferry.toml", &broken).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WorldFile, "{err}");
    assert!(err.to_string().contains("requirements"), "{err}");
    assert_eq!(fresh.head(), 1);
}

#[test]
fn prompts_of_those_present_carry_the_warning() {
    let mut e = engine();
    let (bram, ana, wren) = (id(&e, "Old Bram"), id(&e, "Ana"), id(&e, "Wren"));
    let warning =
        "⚠️ DECISION REQUIRED: The fare: Wren must pay the ferryman before leaving the jetty.";
    let now = e.world().now();
    let prompt = |e: &mut Engine, who: EntityId, budget: usize| {
        let options = PromptOptions {
            budget_tokens: budget,
            ..PromptOptions::default()
        };
        e.inspect_prompt(who, Some("hello"), now, &options).unwrap()
    };
    let p = prompt(&mut e, bram, 100_000);
    let text: String = p.messages.iter().map(|m| m.content.clone()).collect();
    assert!(text.contains(warning), "{text}");
    // Not for someone away on the road.
    let p = prompt(&mut e, ana, 100_000);
    assert!(!p.messages.iter().any(|m| m.content.contains(warning)));
    // Never trimmed: a tight budget keeps it.
    let p = prompt(&mut e, bram, 60);
    assert!(p.pieces.iter().any(|x| x.text == warning));
    assert!(!p.trimmed.iter().any(|x| x.text == warning));
    // A world-wide one reaches everyone.
    e.add_requirement(
        r#"{"id": "storm", "name": "Storm", "condition": "time.hour > 20",
            "guards": [{"time_skip": true}], "text": "Nobody sails before the storm passes."}"#,
    )
    .unwrap();
    let p = prompt(&mut e, ana, 100_000);
    assert!(
        p.messages
            .iter()
            .any(|m| m.content.contains("DECISION REQUIRED: Storm"))
    );
    // Met: gone.
    e.append(vec![fare(&e, true)]).unwrap();
    let p = prompt(&mut e, bram, 100_000);
    assert!(!p.messages.iter().any(|m| m.content.contains(warning)));
    let _ = wren;
}

#[test]
fn one_system_line_announces_each_becoming_pending() {
    let mut e = engine();
    let wren = id(&e, "Wren");
    // The announcements the log made (a met requirement withdraws its unshown line).
    let lines = |e: &Engine| -> Vec<SystemLine> {
        e.events(1, e.head())
            .unwrap()
            .into_iter()
            .filter_map(|(_, ev)| match ev {
                Event::RequirementAnnounced { line, .. } => line,
                _ => None,
            })
            .collect()
    };
    let announced = lines(&e);
    assert_eq!(announced.len(), 1, "{announced:?}");
    let mut audience = announced[0].audience.clone().unwrap();
    audience.sort();
    let mut expected = vec![wren, id(&e, "Old Bram")];
    expected.sort();
    assert_eq!(audience, expected);
    // More commits while still pending: no more lines.
    let now = e.world().now();
    e.append(vec![Event::TimeAdvanced { to: now + 1 }]).unwrap();
    e.append(vec![fare(&e, false)]).unwrap();
    assert_eq!(lines(&e).len(), 1);
    // Met (noted), then unmet again: announced once more.
    e.append(vec![fare(&e, true)]).unwrap();
    assert!(!e.requirements()[0].announced);
    e.append(vec![fare(&e, false)]).unwrap();
    assert_eq!(lines(&e).len(), 2);
    assert!(e.requirements()[0].announced);
    // A batch that passes through pending and back announces nothing.
    e.append(vec![fare(&e, true)]).unwrap();
    let n = lines(&e).len();
    e.append(vec![fare(&e, false), fare(&e, true)]).unwrap();
    assert_eq!(lines(&e).len(), n);
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
    // Adding a pending requirement announces it in the same commit.
    let head = e.head();
    e.add_requirement(
        r#"{"id": "pack", "name": "The pack", "subject": "Wren", "condition": "self.pack_stowed",
            "guards": [{"action": "board"}], "text": "Wren must stow the pack."}"#,
    )
    .unwrap();
    assert_eq!(e.head(), head + 2);
    assert!(lines(&e).iter().any(|l| l.text.contains("The pack")));
}

#[test]
fn the_models_state_report_settles_it_and_then_the_move_goes() {
    let mut e = engine();
    let wren = id(&e, "Wren");
    // The model first tries to move Wren to the boat: rejected with the requirement's reason.
    let generator = ScriptedGenerator::new("Fare, please.");
    generator.script_purpose(
        &Purpose::StateUpdate,
        [
            r#"{"reports": [{"type": "activity", "who": "Wren", "move_to": "the ferry boat"}]}"#,
            // Sent back with the reason, the model tries again with nothing.
            r#"{"reports": []}"#,
            r#"{"reports": [{"type": "state", "who": "Wren", "facts": {"fare_paid": true}},
                            {"type": "activity", "who": "Wren", "move_to": "the ferry boat"}]}"#,
        ],
    );
    let options = TurnOptions {
        updates: UpdateOptions {
            enabled: true,
            ..UpdateOptions::default()
        },
        ..TurnOptions::default()
    };
    let now = e.world().now() + 1000;
    let outcome = e
        .run_turn_blocking(
            TurnInput::say(wren, "Can I board?", now),
            options.clone(),
            &generator,
            &mut NoSink,
        )
        .unwrap();
    let _ = outcome;
    let boat = place(&e, "boat");
    let at = |e: &Engine| {
        e.world()
            .entity(wren)
            .unwrap()
            .activity
            .position
            .as_ref()
            .map(|p| p.container)
    };
    assert_ne!(at(&e), Some(boat));
    // The move was sent back to the model with the requirement's reason.
    let retry = generator
        .requests()
        .into_iter()
        .filter(|r| r.purpose == Purpose::StateUpdate)
        .nth(1)
        .unwrap();
    let retry: String = retry.messages.iter().map(|m| m.content.clone()).collect();
    assert!(retry.contains("The fare"), "{retry}");
    // The state-update request told the model of the pending decision.
    let asked = generator
        .requests()
        .into_iter()
        .find(|r| r.purpose == Purpose::StateUpdate)
        .unwrap();
    let asked: String = asked.messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        asked.contains("Pending decision for Wren: The fare"),
        "{asked}"
    );
    // The model says she paid; in the same pass she boards.
    e.run_turn_blocking(
        TurnInput::say(wren, "Here is your coin.", now + 1000),
        options,
        &generator,
        &mut NoSink,
    )
    .unwrap();
    assert!(!pending(&e, "fare"));
    assert_eq!(at(&e), Some(boat));
    assert!(
        e.world()
            .entity(wren)
            .unwrap()
            .facts
            .lines()
            .contains(&"fare_paid: true".to_owned())
    );
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn a_guarded_host_action_in_a_state_report_is_refused_before_the_host_is_asked() {
    use rp_core::update::{ActionType, Pass, judge_answer};
    let e = engine();
    let board = ActionType {
        name: "board".into(),
        description: "someone boards the ferry".into(),
        parameters: serde_json::json!({"type": "object", "properties": {}}),
    };
    let present: WitnessSet = e.world().entities().map(|x| x.id).collect();
    let pass = Pass {
        present: &present,
        lines: &[],
        remembered: false,
        step: 0.1,
        now: e.world().now(),
    };
    let mut world = e.world().clone();
    world
        .apply(&Event::RequirementAdded {
            requirement: Requirement {
                id: "ticket".into(),
                name: "A ticket".into(),
                subject: Some(id(&e, "Wren")),
                condition: "self.ticket".into(),
                guards: vec![Guard::Action {
                    name: "board".into(),
                }],
                text: "Wren needs a ticket.".into(),
            },
        })
        .unwrap();
    let answer =
        r#"{"reports": [{"type": "board", "who": "Wren"}, {"type": "board", "who": "Old Bram"}]}"#;
    let verdict = judge_answer(&mut world, &pass, std::slice::from_ref(&board), answer);
    assert_eq!(verdict.actions.len(), 1, "{verdict:?}");
    assert_eq!(verdict.actions[0].who, id(&e, "Old Bram"));
    let reason = verdict.reports[0].rejected.clone().unwrap_or_default();
    assert!(reason.contains("A ticket"), "{reason}");
}

#[test]
fn world_files_plan_three_way_and_export_back() {
    let mut e = engine();
    // Exported, the requirement comes back as it was.
    let text = e.export_world_file();
    assert!(text.contains("[[requirements]]"), "{text}");
    let mut again = Engine::in_memory("The Ferry", 0).unwrap();
    again.apply_world_file("export.toml", &text).unwrap();
    assert_eq!(
        again.world().requirement("fare"),
        e.world().requirement("fare")
    );
    // A host requirement survives a new version of the file; the file's changed one is
    // replaced, an unchanged file changes nothing.
    e.add_requirement(
        r#"{"id": "host", "name": "Host's", "condition": "true",
            "guards": [{"time_skip": true}], "text": "t"}"#,
    )
    .unwrap();
    let v2 = WORLD.replace("Wren must pay", "Wren has to pay");
    e.apply_world_file("ferry.toml", &v2).unwrap();
    assert!(e.world().requirement("host").is_some());
    assert!(
        e.world()
            .requirement("fare")
            .unwrap()
            .text
            .starts_with("Wren has to pay")
    );
    let head = e.head();
    let v3 = v2.replace("A traveller with", "A traveller carrying");
    e.apply_world_file("ferry.toml", &v3).unwrap();
    assert!(e.head() > head);
    assert!(e.world().requirement("fare").is_some());
    // Dropped from the file: removed.
    let v4 = v3.split("[[requirements]]").next().unwrap().to_owned();
    e.apply_world_file("ferry.toml", &v4).unwrap();
    assert!(e.world().requirement("fare").is_none());
    assert!(e.world().requirement("host").is_some());
    assert_eq!(replay(&e).to_bytes(), e.world().to_bytes());
}

/// One step of the random walk.
#[derive(Clone, Debug)]
enum Step {
    Pay(bool),
    Move(u8),
    Skip,
    Wait,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        any::<bool>().prop_map(Step::Pay),
        (0u8..5).prop_map(Step::Move),
        Just(Step::Skip),
        Just(Step::Wait),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random batches of pays, moves, skips and waits: whatever commits, no committed world
    /// made a guarded transition while its requirement was pending (checked by replaying each
    /// committed batch event by event against an independent reading of the guard), and
    /// replay equals the live world.
    #[test]
    fn no_committed_world_moves_while_pending(
        batches in proptest::collection::vec(proptest::collection::vec(step(), 1..4), 1..8)
    ) {
        let mut e = engine();
        let wren = id(&e, "Wren");
        let places: Vec<Option<ContainerId>> = vec![
            Some(place(&e, "jetty")),
            Some(place(&e, "end")),
            Some(place(&e, "boat")),
            Some(place(&e, "road")),
            None,
        ];
        let jetty = place(&e, "jetty");
        let end = place(&e, "end");
        for batch in batches {
            let mut scratch = e.world().clone();
            let mut events = Vec::new();
            for s in batch {
                let now = scratch.now();
                let ev = match s {
                    Step::Pay(p) => {
                        let lines = vec![format!("fare_paid: {p}")];
                        Event::EntityEdited { id: wren, name: None, aliases: None,
                            facts: Some(FactSheet(lines)), host_controlled: None }
                    }
                    Step::Move(i) => {
                        let mut activity = scratch.entity(wren).unwrap().activity.clone();
                        activity.position = places[usize::from(i)].map(|container| Position {
                            container, slot: None });
                        Event::ActivityChanged { entity: wren, activity }
                    }
                    Step::Skip => Event::TimeSkipped { from: now, to: now + HOUR,
                        skip: Skip::Jump { to: now + HOUR } },
                    Step::Wait => Event::TimeAdvanced { to: now + 1000 },
                };
                // Build on the scratch world when it takes the event (so batches stay
                // plausible); keep the refused ones too, to try to smuggle them in.
                let _ = scratch.apply(&ev);
                events.push(ev);
            }
            let _ = e.append(events);
        }
        // Walk the committed log: before each guarded transition, the requirement was met.
        let mut world = World::new();
        for (_, ev) in e.events(1, e.head()).unwrap() {
            let paid = world.entity(wren).is_some_and(|x| {
                x.facts.lines().iter().any(|l| l == "fare_paid: true")
            });
            let guarded = world.requirement("fare").is_some();
            match &ev {
                Event::ActivityChanged { entity, activity } if *entity == wren && guarded => {
                    let from = world.entity(wren).unwrap().activity.position.as_ref()
                        .map(|p| p.container);
                    let to = activity.position.as_ref().map(|p| p.container);
                    let inside = |c: Option<ContainerId>| c == Some(jetty) || c == Some(end);
                    if inside(from) && !inside(to) {
                        prop_assert!(paid, "left the jetty unpaid: {ev:?}");
                    }
                }
                Event::TimeSkipped { .. } if guarded => prop_assert!(paid, "skipped unpaid"),
                _ => {}
            }
            world.apply(&ev).unwrap();
        }
        prop_assert_eq!(world.to_bytes(), e.world().to_bytes());
    }
}

#[test]
fn a_save_reopens_with_its_requirements_from_a_snapshot_or_the_log() {
    let dir = tempfile::tempdir().unwrap();
    for every in [0, 3] {
        let path = dir.path().join(format!("ferry-{every}.rp"));
        let options = EngineOptions {
            snapshot_every: every,
            ..EngineOptions::default()
        };
        let mut e = Engine::create_with(&path, "The Ferry", 0, options.clone()).unwrap();
        e.apply_world_file("ferry.toml", WORLD).unwrap();
        let wren = id(&e, "Wren");
        e.append(vec![fare(&e, true)]).unwrap();
        e.append(vec![fare(&e, false)]).unwrap();
        let live = e.world().to_bytes();
        drop(e);
        let mut e = Engine::open_with(&path, options).unwrap();
        assert_eq!(e.world().to_bytes(), live);
        assert!(pending(&e, "fare"));
        let boat = place(&e, "boat");
        let evs = vec![moved(&e, wren, Some(boat))];
        refused(&mut e, evs);
    }
}
