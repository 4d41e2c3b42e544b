//! The player's hand on the story (docs/edits.md): past lines edited and deleted with the rest
//! of the story kept, the preview of what an edit does, and swipes. After every edit, replaying
//! the new branch from scratch equals the live world, no memory holds the text of a deleted
//! line or an unchosen alternative, and the old branch is intact.

mod support;

use proptest::prelude::*;
use rp_core::edit::{EditOptions, OnInvalid};
use rp_core::turn::{ScriptedGenerator, TurnInput, TurnOptions, TurnOutcome};
use rp_core::*;

struct Inn {
    e: Engine,
    wren: EntityId,
    tobias: EntityId,
}

fn inn() -> Inn {
    let (e, wren, tobias) = support::tavern::booth();
    Inn { e, wren, tobias }
}

impl Inn {
    /// Wren says `line`, Tobias answers `reply`.
    fn say(&mut self, line: &str, reply: &str) -> TurnOutcome {
        let now = self.e.world().now() + 60_000;
        self.e
            .run_turn_blocking(
                TurnInput::say(self.wren, line, now),
                TurnOptions::default(),
                &ScriptedGenerator::new(reply),
                &mut machine::NoSink,
            )
            .unwrap()
    }

    /// Every memory text in the world.
    fn memories(&self) -> Vec<String> {
        self.e
            .world()
            .all_memories()
            .map(|m| m.text.clone())
            .collect()
    }

    fn replayed(&self) -> Vec<u8> {
        support::tavern::replay(&self.e).to_bytes()
    }

    fn prompt(&mut self) -> String {
        let now = self.e.world().now();
        self.e
            .inspect_prompt(self.tobias, None, now, &Default::default())
            .unwrap()
            .text()
    }
}

#[test]
fn a_players_line_is_edited_and_the_story_after_it_kept() {
    let mut inn = inn();
    let first = inn.say("I carry a sealed letter.", "A letter? For whom?");
    inn.say("For the ferryman.", "He crosses at dawn.");
    inn.say("Then I wait.", "Sit, then.");
    let line = first.input.unwrap();
    let before = inn.e.world().to_bytes();
    let head = inn.e.head();

    let preview = inn
        .e
        .preview_edit(line, Some("I carry a wet letter."), &EditOptions::default())
        .unwrap();
    assert!(preview.invalid.is_empty(), "{preview:?}");
    assert!(preview.edited.iter().any(|n| n.kind == "user_turn"));
    assert_eq!(
        preview
            .edited
            .iter()
            .filter(|n| n.kind == "memory_added")
            .count(),
        2,
        "both witnesses' memories: {preview:?}"
    );
    assert_eq!(inn.e.head(), head, "a preview changes nothing");

    let done = inn
        .e
        .edit_line(line, "I carry a wet letter.", &EditOptions::default())
        .unwrap();
    let memories = inn.memories();
    assert!(memories.iter().any(|m| m == "Wren: I carry a wet letter."));
    assert!(!memories.iter().any(|m| m.contains("sealed letter")));
    assert!(
        memories.iter().any(|m| m == "Tobias: Sit, then."),
        "the rest is kept"
    );
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    // The old history is a branch, intact.
    let old = done.old_branch.unwrap();
    inn.e.switch_branch(&old).unwrap();
    assert_eq!(inn.e.world().to_bytes(), before);
    assert_eq!(inn.e.head(), head);
}

#[test]
fn a_deleted_line_leaves_no_trace_in_memories_or_prompts() {
    let mut inn = inn();
    inn.say("Evening.", "Evening.");
    let second = inn.say("The canary sings at midnight.", "Does it now.");
    inn.say("Bread?", "Bread.");
    // Delete Tobias's reply in the second turn, then Wren's line with its replies.
    let reply = second.replies[0].utterance;
    inn.e.delete_line(reply, &EditOptions::default()).unwrap();
    assert!(!inn.memories().iter().any(|m| m.contains("Does it now")));
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    let with_replies = EditOptions {
        with_replies: true,
        ..Default::default()
    };
    inn.e
        .delete_line(second.input.unwrap(), &with_replies)
        .unwrap();
    assert!(!inn.memories().iter().any(|m| m.contains("canary")));
    assert!(!inn.prompt().contains("canary"));
    assert!(inn.prompt().contains("Bread"), "later turns are kept");
    // The record of the deleted reply's generation went with it.
    let events = inn.e.events(1, inn.e.head()).unwrap();
    assert!(!format!("{events:?}").contains("Does it now"));
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    // Both old histories are branches.
    assert!(inn.e.branches().len() >= 3);
}

#[test]
fn later_events_that_no_longer_apply_are_previewed_and_the_host_chooses() {
    let mut inn = inn();
    let first = inn.say("The canary sings.", "Aye.");
    inn.say("Second.", "Two.");
    // Later, Tobias's memory of the first line was summarized (as a decay pass does).
    let line = first.input.unwrap();
    let memory = inn
        .e
        .world()
        .all_memories()
        .find(|m| m.owner == inn.tobias && m.text == "Wren: The canary sings.")
        .unwrap()
        .id;
    let now = inn.e.world().now() + 90 * 86_400_000;
    inn.e
        .append(vec![
            Event::TimeAdvanced { to: now },
            Event::MemoriesSummarized {
                owner: inn.tobias,
                at: now,
                summaries: vec![MemorySummary {
                    id: memory,
                    text: "a bird".into(),
                    feeling: None,
                    about: None,
                }],
            },
        ])
        .unwrap();
    inn.say("Third.", "Three.");
    let head = inn.e.head();
    let preview = inn
        .e
        .preview_edit(line, None, &EditOptions::default())
        .unwrap();
    assert_eq!(preview.invalid.len(), 1, "{preview:?}");
    assert_eq!(preview.invalid[0].kind, "memories_summarized");
    // Cancel (the default): refused, nothing changes.
    let err = inn
        .e
        .delete_line(line, &EditOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains("memories_summarized"), "{err}");
    assert_eq!(inn.e.head(), head);
    // Regenerate: the new history stops before the turn of the invalid event; its input comes
    // back to be run again.
    let regen = EditOptions {
        on_invalid: OnInvalid::Regenerate,
        ..Default::default()
    };
    let done = inn.e.delete_line(line, &regen).unwrap();
    let input = done.regenerate.clone().expect("a turn to run again");
    assert_eq!(input.text, "Second.");
    assert!(!inn.memories().iter().any(|m| m.contains("Second.")));
    inn.e
        .run_turn_blocking(
            input,
            TurnOptions::default(),
            &ScriptedGenerator::new("Two again."),
            &mut machine::NoSink,
        )
        .unwrap();
    assert!(inn.memories().iter().any(|m| m == "Tobias: Two again."));
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    // Drop, on the old history: everything but the summary is kept.
    inn.e
        .switch_branch(done.old_branch.as_deref().unwrap())
        .unwrap();
    let drop = EditOptions {
        on_invalid: OnInvalid::Drop,
        ..Default::default()
    };
    let dropped = inn.e.delete_line(line, &drop).unwrap();
    assert_eq!(dropped.preview.invalid.len(), 1);
    assert!(inn.memories().iter().any(|m| m == "Tobias: Three."));
    assert!(!inn.memories().iter().any(|m| m.contains("canary")));
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
}

#[test]
fn a_planned_edit_is_made_as_previewed_unless_the_story_moved() {
    let mut inn = inn();
    let first = inn.say("Evening.", "Evening.");
    let line = first.input.unwrap();
    let plan = inn
        .e
        .begin_edit(line, Some("Good evening."), &EditOptions::default())
        .unwrap();
    assert_eq!(plan.preview().edited.len(), 3, "{:?}", plan.preview());
    let done = inn.e.finish_edit(plan).unwrap();
    assert!(done.old_branch.is_some());
    assert!(inn.memories().iter().any(|m| m == "Wren: Good evening."));
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    // Planned, then the story moves on: refused.
    let plan = inn
        .e
        .begin_edit(line, None, &EditOptions::default())
        .unwrap();
    inn.say("And now?", "Now.");
    let head = inn.e.head();
    let err = inn.e.finish_edit(plan).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(inn.e.head(), head);
}

#[test]
fn bad_edits_are_refused_and_change_nothing() {
    let mut inn = inn();
    let first = inn.say("Evening.", "Evening.");
    let head = inn.e.head();
    let line = first.input.unwrap();
    let err = inn
        .e
        .edit_line(UtteranceId(99_999), "x", &EditOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = inn
        .e
        .edit_line(line, "   ", &EditOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = inn
        .e
        .edit_line(line, &"x".repeat(1 << 20), &EditOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    assert!(err.to_string().contains("longer than"), "{err}");
    let err = EditOptions::from_json(r#"{"on_invalid": "explode"}"#).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = EditOptions::from_json(r#"{"with_replys": true}"#).unwrap_err();
    assert!(err.to_string().contains("with_replys"), "{err}");
    assert_eq!(inn.e.head(), head);
}

#[test]
fn swipes_keep_every_alternative_and_the_chosen_one_is_the_line() {
    let mut inn = inn();
    inn.say("Evening.", "Evening.");
    let turn = inn.say("Seen the canary?", "No canary here.");
    let line = turn.replies[0].utterance;
    let options = TurnOptions::default();
    // The request is the prompt Tobias was given.
    let swipe = inn.e.swipe_request(None, &options).unwrap();
    assert_eq!(swipe.line, line);
    assert!(
        swipe
            .request
            .messages
            .iter()
            .any(|m| m.content.contains("Seen the canary?")),
        "{:?}",
        swipe.request.messages
    );
    let one = inn
        .e
        .swipe_blocking(
            None,
            &options,
            &ScriptedGenerator::new("Tobias: A yellow one, once."),
        )
        .unwrap();
    let two = inn
        .e
        .swipe_blocking(Some(line), &options, &ScriptedGenerator::new("Ask Mira."))
        .unwrap();
    assert_eq!((one, two), (1, 2));
    let (texts, chosen) = inn.e.world().alternatives(line).unwrap();
    assert_eq!(
        texts,
        ["No canary here.", "A yellow one, once.", "Ask Mira."]
    );
    assert_eq!(chosen, 0);
    // Unchosen alternatives are in no prompt and no memory.
    assert!(!inn.prompt().contains("yellow") && !inn.prompt().contains("Ask Mira"));
    assert!(!inn.memories().iter().any(|m| m.contains("yellow")));
    // Choose the second: the line and its memories follow.
    let outcome = inn
        .e
        .choose_blocking(
            line,
            2,
            options.clone(),
            &ScriptedGenerator::new("-"),
            &mut machine::NoSink,
        )
        .unwrap();
    assert!(outcome.replies.is_empty());
    assert!(inn.prompt().contains("Ask Mira."));
    assert!(!inn.prompt().contains("No canary here."));
    assert!(inn.memories().iter().any(|m| m == "Tobias: Ask Mira."));
    assert!(!inn.memories().iter().any(|m| m.contains("No canary")));
    let (texts, chosen) = inn.e.world().alternatives(line).unwrap();
    assert_eq!((texts.len(), chosen), (3, 2), "every alternative survives");
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    // Alternatives survive a branch switch and back.
    let branch = inn.e.current_branch().to_owned();
    inn.e.fork(inn.e.head(), "elsewhere").unwrap();
    inn.e.switch_branch("elsewhere").unwrap();
    inn.e.switch_branch(&branch).unwrap();
    assert_eq!(inn.e.world().alternatives(line).unwrap().1, 2);
    // Only the last reply takes swipes.
    inn.say("Fine.", "Fine.");
    let err = inn.e.swipe_request(Some(line), &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let err = inn.e.begin_choose(line, 0, options.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
}

#[test]
fn a_swipe_cannot_add_an_empty_or_unknown_alternative() {
    let mut inn = inn();
    let turn = inn.say("Evening.", "Evening.");
    let line = turn.replies[0].utterance;
    let head = inn.e.head();
    let err = inn
        .e
        .swipe_blocking(None, &TurnOptions::default(), &ScriptedGenerator::new("  "))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let err = inn
        .e
        .begin_choose(line, 5, TurnOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert_eq!(inn.e.head(), head);
}

/// Cases of the property (`PROPTEST_CASES` for a long run).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// After any edit or delete of any line of a random session, replaying the new branch from
    /// scratch equals the live world, no memory holds a deleted line's text, and the old branch
    /// is intact.
    #[test]
    fn edits_replay_exactly_and_leave_no_trace(
        turns in 2usize..6,
        pick in 0usize..100,
        player in any::<bool>(),
        delete in any::<bool>(),
        with_replies in any::<bool>(),
    ) {
        let mut inn = inn();
        let mut lines = Vec::new();
        for t in 0..turns {
            let out = inn.say(&format!("line{t} from wren"), &format!("reply{t} from tobias"));
            lines.push((out.input.unwrap(), format!("line{t} from wren")));
            lines.push((out.replies[0].utterance, format!("reply{t} from tobias")));
        }
        let i = (pick % turns) * 2 + usize::from(!player);
        let (line, text) = lines[i].clone();
        let before = inn.e.world().to_bytes();
        let options = EditOptions { with_replies, on_invalid: OnInvalid::Drop };
        let done = if delete {
            inn.e.delete_line(line, &options).unwrap()
        } else {
            inn.e.edit_line(line, "an edited line", &options).unwrap()
        };
        prop_assert_eq!(inn.replayed(), inn.e.world().to_bytes());
        if delete {
            prop_assert!(!inn.memories().iter().any(|m| m.contains(&text)));
            prop_assert!(!inn.prompt().contains(&text));
        } else {
            prop_assert!(inn.memories().iter().any(|m| m.ends_with(": an edited line")));
        }
        inn.e.switch_branch(done.old_branch.as_deref().unwrap()).unwrap();
        prop_assert_eq!(inn.e.world().to_bytes(), before);
    }
}

#[test]
fn choosing_an_alternative_asks_for_its_turns_state_update_again() {
    let mut inn = inn();
    let mut options = TurnOptions {
        outcome_prompts: true,
        ..TurnOptions::default()
    };
    options.updates.enabled = true;
    let colder = r#"{"reports": [{"type": "feeling", "who": "Tobias", "toward": "Wren", "affinity": "colder"}]}"#;
    let warmer = r#"{"reports": [{"type": "feeling", "who": "Tobias", "toward": "Wren", "affinity": "warmer"}]}"#;
    let generator = ScriptedGenerator::new("Get out.");
    generator.script_purpose(&machine::Purpose::StateUpdate, [colder, warmer]);
    let now = inn.e.world().now() + 60_000;
    let turn = inn
        .e
        .run_turn_blocking(
            TurnInput::say(inn.wren, "May I sit?", now),
            options.clone(),
            &generator,
            &mut machine::NoSink,
        )
        .unwrap();
    let line = turn.replies[0].utterance;
    let affinity = |e: &Engine| {
        e.world()
            .edge(inn.tobias, inn.wren)
            .map_or(0.0, |edge| edge.affinity)
    };
    let cold = affinity(&inn.e);
    // The same prompt as the reply was given.
    let swipe = inn.e.swipe_request(Some(line), &options).unwrap();
    assert_eq!(swipe.request.messages, turn.prompts[0].messages);
    let n = inn
        .e
        .swipe_blocking(
            Some(line),
            &options,
            &ScriptedGenerator::new("Of course, sit."),
        )
        .unwrap();
    assert_eq!(affinity(&inn.e), cold, "an alternative changes nothing yet");
    let outcome = inn
        .e
        .choose_blocking(line, n, options.clone(), &generator, &mut machine::NoSink)
        .unwrap();
    assert_eq!(
        outcome.reports.len(),
        1,
        "the pass asked again: {outcome:?}"
    );
    assert!(affinity(&inn.e) > cold, "judged on the line that stands");
    assert_eq!(inn.replayed(), inn.e.world().to_bytes());
}

#[test]
fn alternatives_and_edits_survive_reopening_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inn.rp");
    let (line, edited) = {
        let mut e = Engine::create(&path, "Inn", 1_000).unwrap();
        e.apply_world_file("inn.toml", support::tavern::BOOTH)
            .unwrap();
        let mut inn = Inn {
            wren: e.world().resolve_entity("wren").unwrap(),
            tobias: e.world().resolve_entity("tobias").unwrap(),
            e,
        };
        let first = inn.say("Evening.", "Evening.");
        let turn = inn.say("Seen the canary?", "No canary here.");
        let line = turn.replies[0].utterance;
        inn.e
            .swipe_blocking(
                None,
                &TurnOptions::default(),
                &ScriptedGenerator::new("Ask Mira."),
            )
            .unwrap();
        inn.e
            .edit_line(
                first.input.unwrap(),
                "Good evening.",
                &EditOptions::default(),
            )
            .unwrap();
        (line, inn.e.world().to_bytes())
    };
    let e = Engine::open(&path).unwrap();
    assert_eq!(e.world().to_bytes(), edited);
    let (texts, chosen) = e.world().alternatives(line).unwrap();
    assert_eq!((texts.len(), chosen), (2, 0));
    assert!(e.branches().iter().any(|b| b.name.starts_with("main~")));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Whatever is swiped and chosen, no prompt and no memory ever holds an alternative that is
    /// not the line, and replay equals the live world.
    #[test]
    fn unchosen_alternatives_never_leak(
        swipes in 1usize..4,
        choice in 0usize..4,
        more_turns in 0usize..2,
    ) {
        let mut inn = inn();
        let turn = inn.say("Seen the canary?", "reply zero");
        let line = turn.replies[0].utterance;
        for k in 0..swipes {
            let text = format!("alternative {} unique{k}", k + 1);
            inn.e
                .swipe_blocking(None, &TurnOptions::default(), &ScriptedGenerator::new(text))
                .unwrap();
        }
        let n = choice % (swipes + 1);
        inn.e
            .choose_blocking(line, n, TurnOptions::default(), &ScriptedGenerator::default(), &mut machine::NoSink)
            .unwrap();
        for t in 0..more_turns {
            inn.say(&format!("more {t}"), &format!("more reply {t}"));
        }
        let (texts, chosen) = inn.e.world().alternatives(line).unwrap();
        let texts = texts.to_vec();
        prop_assert_eq!(chosen, n);
        let prompt = inn.prompt();
        let memories = inn.memories().join("\n");
        for (i, t) in texts.iter().enumerate() {
            if i != n {
                prop_assert!(!prompt.contains(t.as_str()), "{} in {}", t, prompt);
                prop_assert!(!memories.contains(t.as_str()), "{} in {}", t, memories);
            }
        }
        prop_assert!(memories.contains(texts[n].as_str()));
        prop_assert_eq!(inn.replayed(), inn.e.world().to_bytes());
    }
}
