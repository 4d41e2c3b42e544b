//! Lorebook timed effects and placement through turns (docs/cards.md, "Timed effects" and
//! "Lorebooks"): sticky entries stay in a character's prompt for the messages it hears after
//! they activate, cooldown entries stay out, the timers are recorded by the turn that used the
//! prompt (so replay, rewind and inspection agree); entries at a depth sit among the lines.

mod support;

use rp_core::turn::{ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::*;

fn inn(book: &str) -> (Engine, EntityId, EntityId) {
    let (mut e, wren, tobias) = support::tavern::booth();
    e.import_lorebook(book.as_bytes(), None, 2_000).unwrap();
    (e, wren, tobias)
}

/// Wren says `line`; returns the text of Tobias's prompt in that turn (empty if he was not
/// asked to reply).
fn say(e: &mut Engine, wren: EntityId, tobias: EntityId, line: &str) -> String {
    let now = e.world().now() + 60_000;
    let options = TurnOptions {
        outcome_prompts: true,
        ..Default::default()
    };
    let outcome = e
        .run_turn_blocking(
            TurnInput::say(wren, line, now),
            options,
            &ScriptedGenerator::new("Mm."),
            &mut machine::NoSink,
        )
        .unwrap();
    outcome
        .prompts
        .iter()
        .filter(|p| p.speaker == tobias)
        .map(|p| p.text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_sticky_entry_stays_for_the_messages_it_is_sticky() {
    // Sticky for 4 messages: Tobias hears Wren's line and his own reply each turn, so the
    // entry named in turn 1 holds in turn 2 (2 messages on) and is gone by turn 3 (4 on).
    let (mut e, wren, tobias) = inn(
        r#"{"entries": {"0": {"uid": 0, "key": ["bell"], "content": "The bell is cracked.", "sticky": 4}}}"#,
    );
    let first = say(&mut e, wren, tobias, "Did you hear the bell?");
    assert!(first.contains("The bell is cracked."), "{first}");
    assert_eq!(
        e.world().lore_timers(tobias).len(),
        1,
        "the turn recorded it"
    );
    let second = say(&mut e, wren, tobias, "Anyway. Any soup?");
    assert!(second.contains("The bell is cracked."), "sticky: {second}");
    assert!(
        e.inspect_prompt(tobias, None, e.world().now(), &Default::default())
            .unwrap()
            .pieces
            .iter()
            .any(|p| p.why.starts_with("sticky")),
        "inspection sees the same timers, and says why"
    );
    let third = say(&mut e, wren, tobias, "What about bread?");
    assert!(!third.contains("The bell is cracked."), "over: {third}");
    assert!(e.world().lore_timers(tobias).is_empty());
    assert_eq!(support::tavern::replay(&e).to_bytes(), e.world().to_bytes());
}

#[test]
fn a_cooldown_keeps_an_entry_out_and_a_rewind_brings_its_timers_back() {
    let (mut e, wren, tobias) = inn(
        r#"{"entries": {"0": {"uid": 0, "key": ["bell"], "content": "The bell is cracked.", "cooldown": 3}}}"#,
    );
    assert!(say(&mut e, wren, tobias, "The bell!").contains("cracked"));
    let after_first = e.head();
    let timers = e.world().lore_timers(tobias).to_vec();
    assert_eq!(timers.len(), 1);
    assert_eq!(timers[0].kind, TimerKind::Cooldown);
    // Two messages on (his reply, her line): still cooling.
    assert!(!say(&mut e, wren, tobias, "The bell again!").contains("cracked"));
    // Four on: it may activate again.
    assert!(say(&mut e, wren, tobias, "That bell.").contains("cracked"));
    assert_eq!(support::tavern::replay(&e).to_bytes(), e.world().to_bytes());
    e.rewind(after_first).unwrap();
    assert_eq!(e.world().lore_timers(tobias), timers.as_slice());
}

#[test]
fn timers_that_end_before_they_start_or_belong_to_no_one_are_refused() {
    let (mut e, _, tobias) = inn(r#"{"entries": [{"keys": ["bell"], "content": "x"}]}"#);
    let head = e.head();
    let timer = LoreTimer {
        book: 1,
        entry: 0,
        kind: TimerKind::Sticky,
        start: 5,
        end: 5,
        protected: false,
    };
    let err = e
        .append(vec![Event::LoreTimersSet {
            entity: tobias,
            timers: vec![timer],
        }])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid, "{err}");
    let err = e
        .append(vec![Event::LoreTimersSet {
            entity: EntityId(999),
            timers: Vec::new(),
        }])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert_eq!(e.head(), head, "nothing changed");
}

#[test]
fn an_entry_at_a_depth_sits_among_the_lines() {
    // Depth 1: before the newest line Tobias heard; depth 0: after it.
    let (mut e, wren, tobias) = inn(r#"{"entries": {
            "0": {"uid": 0, "key": ["bell"], "content": "Deep note.", "position": 4, "depth": 1},
            "1": {"uid": 1, "key": ["bell"], "content": "Last note.", "position": 4, "depth": 0}}}"#);
    say(&mut e, wren, tobias, "The bell rang at noon.");
    say(&mut e, wren, tobias, "And again, the bell.");
    let prompt = e
        .inspect_prompt(tobias, None, e.world().now(), &Default::default())
        .unwrap();
    let dialogue: Vec<&str> = prompt
        .pieces
        .iter()
        .filter(|p| p.section == turn::Section::Dialogue)
        .map(|p| p.text.as_str())
        .collect();
    let at = |t: &str| dialogue.iter().position(|d| d.contains(t)).unwrap();
    let newest = dialogue.len() - 2; // the last line, then "Last note."
    assert!(dialogue[newest].starts_with("Tobias: Mm."), "{dialogue:?}");
    assert_eq!(at("Deep note."), newest - 1, "{dialogue:?}");
    assert_eq!(at("Last note."), newest + 1, "{dialogue:?}");
    assert_eq!(dialogue[at("Deep note.")], "[Deep note.]");
}
