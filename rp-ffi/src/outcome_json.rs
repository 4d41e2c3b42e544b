//! The JSON of a turn's outcome, as `rp_engine_run_turn` and `rp_turn_finish`
//! hand it to C: byte for byte rp-core's serialisation of a `TurnOutcome`,
//! written faster.
//!
//! An outcome is a few hundred bytes of ids, flags and texts (the facts that
//! applied, the replies). serde_json writes it through its generic machinery,
//! each key escaped a byte at a time; here the keys are constants, the texts
//! go through [`escape_into`], and only the rarely filled parts (traces,
//! draws, wake-ups, reports, prompts) go through serde_json.

use std::ffi::CString;

use rp_core::facts::Decision;
use rp_core::turn::{Reply, TurnDecision, TurnOutcome};

use crate::request_json::{c_string, escape_into, serde_into};

/// An outcome's JSON as a C string.
pub(crate) fn outcome_c_json(outcome: &TurnOutcome) -> CString {
    let texts: usize = outcome.replies.iter().map(|r| r.text.len()).sum();
    let mut bytes = Vec::with_capacity(texts + 1024);
    write_outcome(&mut bytes, outcome);
    c_string(bytes)
}

/// Writes `outcome` as rp-core's serialisation of it would, into `out`.
pub(crate) fn write_outcome(out: &mut Vec<u8>, outcome: &TurnOutcome) {
    // Destructured, so a field added to the outcome cannot be missed here.
    let TurnOutcome {
        seq,
        input,
        decisions,
        replies,
        silent,
        wake,
        prompts,
        reports,
        closed_scenes,
    } = outcome;
    out.extend_from_slice(br#"{"seq":"#);
    number(out, *seq);
    out.extend_from_slice(br#","input":"#);
    match input {
        Some(id) => number(out, id.0),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","decisions":"#);
    array(out, decisions, write_decision);
    out.extend_from_slice(br#","replies":"#);
    array(out, replies, |out, r| {
        let Reply {
            speaker,
            utterance,
            text,
        } = r;
        out.extend_from_slice(br#"{"speaker":"#);
        number(out, speaker.0);
        out.extend_from_slice(br#","utterance":"#);
        number(out, utterance.0);
        out.extend_from_slice(br#","text":"#);
        escape_into(out, text);
        out.push(b'}');
    });
    out.extend_from_slice(br#","silent":"#);
    array(out, silent, |out, id| number(out, id.0));
    out.extend_from_slice(br#","wake":"#);
    list_into(out, wake);
    out.extend_from_slice(br#","prompts":"#);
    list_into(out, prompts);
    out.extend_from_slice(br#","reports":"#);
    list_into(out, reports);
    out.extend_from_slice(br#","closed_scenes":"#);
    array(out, closed_scenes, |out, id| number(out, id.0));
    out.push(b'}');
}

/// A JSON array of `items`, each written by `write`.
fn array<T>(out: &mut Vec<u8>, items: &[T], write: impl Fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

fn write_decision(out: &mut Vec<u8>, d: &TurnDecision) {
    let TurnDecision {
        entity,
        mentioned,
        decision,
    } = d;
    let Decision {
        respond,
        retry_ms,
        facts,
        trace,
        draws,
    } = decision;
    out.extend_from_slice(br#"{"entity":"#);
    number(out, entity.0);
    out.extend_from_slice(br#","mentioned":"#);
    boolean(out, *mentioned);
    out.extend_from_slice(br#","decision":{"respond":"#);
    boolean(out, *respond);
    out.extend_from_slice(br#","retry_ms":"#);
    match retry_ms {
        Some(ms) => number(out, *ms),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","facts":"#);
    array(out, facts, |out, fact| escape_into(out, fact));
    out.extend_from_slice(br#","trace":"#);
    list_into(out, trace);
    out.extend_from_slice(br#","draws":"#);
    list_into(out, draws);
    out.extend_from_slice(b"}}");
}

/// A list through serde_json, or `[]` at once when it is empty (as it
/// mostly is).
fn list_into<T: serde::Serialize>(out: &mut Vec<u8>, list: &[T]) {
    if list.is_empty() {
        out.extend_from_slice(b"[]");
    } else {
        serde_into(out, &list);
    }
}

fn number(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn boolean(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

#[cfg(test)]
mod tests {
    use rp_core::Engine;
    use rp_core::facts::{TraceEntry, TraceEvent};
    use rp_core::model::{EntityId, SceneId, UtteranceId};
    use rp_core::turn::{NoSink, ScriptedGenerator, TurnInput, TurnOptions, Wake};

    use super::*;

    /// A real turn's outcome from the tavern, with prompts.
    fn tavern_outcome() -> TurnOutcome {
        let mut engine = Engine::in_memory("t", 0).expect("engine");
        engine
            .load_world_file(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../examples/tavern.toml"
            ))
            .expect("tavern");
        let wren = engine.world().find_entity("Wren").expect("Wren").id;
        let input = TurnInput::say(wren, "Tobias, Mira, what news tonight?", 60_000);
        let generator = ScriptedGenerator::new("Lights on the marsh again.");
        engine
            .run_turn_blocking(
                input,
                TurnOptions {
                    outcome_prompts: true,
                    ..TurnOptions::default()
                },
                &generator,
                &mut NoSink,
            )
            .expect("turn")
    }

    fn written(outcome: &TurnOutcome) -> String {
        let mut out = Vec::new();
        write_outcome(&mut out, outcome);
        String::from_utf8(out).expect("UTF-8")
    }

    fn serde(outcome: &TurnOutcome) -> String {
        serde_json::to_string(outcome).expect("outcome JSON")
    }

    #[test]
    fn outcomes_are_written_exactly_as_rp_core_writes_them() {
        let real = tavern_outcome();
        assert!(!real.prompts.is_empty() && !real.decisions.is_empty());
        assert_eq!(written(&real), serde(&real));
        let mut without = real.clone();
        without.prompts.clear();
        assert_eq!(written(&without), serde(&without));

        // Every part filled, and texts that need escaping.
        let mut full = real.clone();
        full.input = None;
        full.seq = u64::MAX;
        full.silent = vec![EntityId(0), EntityId(12_345)];
        full.wake = vec![Wake {
            entity: EntityId(3),
            at: 90_000,
        }];
        full.closed_scenes = vec![SceneId(4), SceneId(9)];
        full.replies[0].text = "\"Quoted\", a tab\t, a \u{7} bell and \u{1F600}\\".into();
        let d = &mut full.decisions[0].decision;
        d.retry_ms = Some(1500);
        d.respond = false;
        d.facts.push("line\nbreak".into());
        d.draws = vec![0.5, 0.123_456_789_012_345_67, 1e-9];
        d.trace = vec![TraceEntry {
            line: 3,
            event: TraceEvent::Fired {
                action: "$respond true".into(),
            },
        }];
        full.decisions[0].mentioned = !full.decisions[0].mentioned;
        assert_eq!(written(&full), serde(&full));

        // Nothing at all.
        let empty = TurnOutcome {
            seq: 0,
            input: Some(UtteranceId(1)),
            decisions: Vec::new(),
            replies: Vec::new(),
            silent: Vec::new(),
            wake: Vec::new(),
            prompts: Vec::new(),
            reports: Vec::new(),
            closed_scenes: Vec::new(),
        };
        assert_eq!(written(&empty), serde(&empty));
        assert_eq!(
            outcome_c_json(&full).to_str().expect("UTF-8"),
            serde(&TurnOutcome { ..full.clone() })
        );
    }
}
