//! The reports a state-update pass asks for, and how an answer is read: strictly, as one JSON
//! object `{"reports": [...]}` and nothing else. Each report is read on its own, so one bad
//! report is rejected without losing the others.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// The largest answer read (bytes); a longer one is refused unread.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// The most reports one answer may carry.
pub const MAX_REPORTS: usize = 64;

/// Warmer or colder (affinity), more or less (trust).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Affinity up.
    Warmer,
    /// Affinity down.
    Colder,
    /// Trust up.
    More,
    /// Trust down.
    Less,
}

/// One change the model reports. Entities, containers and items are named as the prompt names
/// them; the engine resolves names and computes every value.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Report {
    /// `who` feels warmer or colder toward `toward`, trusts it more or less.
    Feeling {
        /// A present entity.
        who: String,
        /// Any entity.
        toward: String,
        /// `warmer` or `colder`.
        #[serde(default)]
        affinity: Option<Direction>,
        /// `more` or `less`.
        #[serde(default)]
        trust: Option<Direction>,
    },
    /// `who` learned a fact about `about`.
    Learned {
        /// A present entity.
        who: String,
        /// Any entity.
        about: String,
        /// The fact, in prose.
        fact: String,
    },
    /// `who` now sums up its relationship with `toward` so.
    Relationship {
        /// A present entity.
        who: String,
        /// Any entity.
        toward: String,
        /// The new summary.
        summary: String,
    },
    /// `who`'s mood, goals or status changed (an empty text clears mood or status).
    State {
        /// A present entity.
        who: String,
        /// The new mood.
        #[serde(default)]
        mood: Option<String>,
        /// The new goals, most important first.
        #[serde(default)]
        goals: Option<Vec<String>>,
        /// The new status.
        #[serde(default)]
        status: Option<String>,
        /// `key: value` facts of `who` set (`self.key` in conditions; docs/requirements.md):
        /// a boolean, a number or a short text each.
        #[serde(default)]
        facts: Option<BTreeMap<String, serde_json::Value>>,
    },
    /// `who` moved, changed posture, started or stopped an action, picked up or put down an
    /// item.
    Activity {
        /// A present entity.
        who: String,
        /// A place, by name.
        #[serde(default)]
        move_to: Option<String>,
        /// A slot of that place (or of the current one).
        #[serde(default)]
        slot: Option<String>,
        /// The new posture (empty: none).
        #[serde(default)]
        posture: Option<String>,
        /// An action started ("pouring ale").
        #[serde(default)]
        action: Option<String>,
        /// True: the current action stopped.
        #[serde(default)]
        stop_action: Option<bool>,
        /// An item picked up, by name.
        #[serde(default)]
        pick_up: Option<String>,
        /// An item put down, by name.
        #[serde(default)]
        put_down: Option<String>,
    },
    /// A tension opened that the story has to come back to.
    ThreadOpened {
        /// What is unresolved.
        text: String,
        /// Who is involved: present entities.
        participants: Vec<String>,
    },
    /// An open thread was resolved.
    ThreadResolved {
        /// The thread's number, as the prompt lists it.
        thread: u64,
    },
    /// An open thread was dropped.
    ThreadDropped {
        /// The thread's number, as the prompt lists it.
        thread: u64,
    },
    /// A planned scoped event began in the lines (its preconditions must hold).
    EventStarted {
        /// The event's number, as the prompt lists it.
        event: u64,
    },
    /// An active scoped event ended as intended. Its props are gone from then on; what each
    /// present participant keeps of it is `gist`, if given (one memory each).
    EventCompleted {
        /// The event's number, as the prompt lists it.
        event: u64,
        /// What it came to, in a sentence.
        #[serde(default)]
        gist: Option<String>,
    },
    /// How much line `line` of the turn matters to `who` (0–1): the significance of the
    /// memory `who` keeps of it.
    Significance {
        /// A present entity that heard the line.
        who: String,
        /// The line's number in the turn (from 1).
        line: u32,
        /// 0–1.
        significance: f64,
    },
    /// What `who` came to believe about `about` from line `line` of the turn (docs/beliefs.md):
    /// their mood, energy, availability or traits. The engine works out the source (`about`
    /// said or showed it, someone else told it, or `who` inferred it) and caps the confidence
    /// by it.
    Belief {
        /// A present entity that heard the line.
        who: String,
        /// Anyone else, a person only mentioned included.
        about: String,
        /// The line's number in the turn (from 1).
        line: u32,
        /// Their mood, in a few words.
        #[serde(default)]
        mood: Option<String>,
        /// Their energy, 0–1.
        #[serde(default)]
        energy: Option<f64>,
        /// Their availability, 0–1.
        #[serde(default)]
        availability: Option<f64>,
        /// Their traits.
        #[serde(default)]
        traits: Option<Vec<String>>,
        /// How sure, 0–1 (capped by the source).
        #[serde(default)]
        confidence: Option<f64>,
        /// True: worked out by `who`, not said.
        #[serde(default)]
        inferred: Option<bool>,
    },
    /// Someone not in the world yet (a mother, a boss) was talked about in line `line`: a
    /// lightweight person, so beliefs and relations can name it.
    PersonMentioned {
        /// A name for them ("Wren's mother" when no name is given).
        name: String,
        /// The line's number in the turn (from 1).
        line: u32,
        /// What was said of them, in a sentence.
        #[serde(default)]
        description: Option<String>,
    },
    /// How `from` feels about `to`, as `who` heard it in line `line`: `who` believes it; an
    /// edge of a person only mentioned is recorded in the world with its source.
    Relation {
        /// A present entity that heard the line.
        who: String,
        /// Whose feeling (not `who`).
        from: String,
        /// About whom.
        to: String,
        /// The line's number in the turn (from 1).
        line: u32,
        /// −1 to 1.
        sentiment: f64,
        /// What they are to each other, in a few words ("mother", "boss", "rivals").
        #[serde(default)]
        relation: Option<String>,
        /// True: worked out by `who`, not said.
        #[serde(default)]
        inferred: Option<bool>,
    },
    /// Something `who` means to do later ("remember to ask Wren about the letter tomorrow
    /// evening"): a rule of `who`'s, read as the host's rules are (docs/rules.md).
    Rule {
        /// A present character.
        who: String,
        /// What, in words.
        description: String,
        /// When: `{"in_hours": h}`, `{"day": d, "hour": h}`, `{"at": ms}` or
        /// `{"stimulus": kind}`.
        on: serde_json::Value,
        /// What: `{"initiate": who, "about": text}` or `{"note": text}` (the engine moves
        /// drives: a drive intent is the host's and the world file's).
        intent: serde_json::Value,
        /// A condition in the `$if` language.
        #[serde(default)]
        condition: Option<String>,
        /// 0–1.
        #[serde(default)]
        weight: Option<f64>,
    },
}

/// One report of an answer: its JSON text, and the report or why it cannot be read.
#[derive(Clone, Debug)]
pub struct Raw {
    /// The report's JSON, as written.
    pub json: String,
    /// The report, or what is wrong with it.
    pub parsed: Result<Parsed, String>,
}

/// A report read: one of the engine's kinds, or a host action (its name and arguments).
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// One of the built-in kinds.
    Builtin(Report),
    /// A host action: its `type`, `who`, and the whole object.
    Action {
        /// The action's name.
        name: String,
        /// The report's object.
        args: serde_json::Value,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow)]
    reports: Vec<&'a RawValue>,
}

/// Reads an answer. `Err` when the answer as a whole cannot be read (not one JSON object with
/// a `reports` array, or too large); otherwise each report, read or not. `actions` are the
/// names of the host's report types.
pub fn parse(answer: &str, actions: &[&str]) -> Result<Vec<Raw>, String> {
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer is {} bytes; at most {MAX_ANSWER_BYTES} are read",
            answer.len()
        ));
    }
    let text = answer.trim();
    if text.starts_with("```") {
        return Err(
            "the JSON is wrapped in a code fence; answer with the JSON object alone".into(),
        );
    }
    if !text.starts_with('{') {
        return Err(match text.find('{') {
            Some(_) => {
                "there is text before the JSON object; answer with the JSON object alone".into()
            }
            None => "the answer is not a JSON object; answer with {\"reports\": [...]}".into(),
        });
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            format!("the JSON ends early ({e})")
        } else if e.is_syntax() && e.line() > 0 && trailing_text(text, &e) {
            "there is text after the JSON object; answer with the JSON object alone".into()
        } else {
            format!("the JSON cannot be read: {e}")
        }
    })?;
    if envelope.reports.len() > MAX_REPORTS {
        return Err(format!(
            "{} reports; at most {MAX_REPORTS} are read",
            envelope.reports.len()
        ));
    }
    Ok(envelope
        .reports
        .into_iter()
        .map(|raw| Raw {
            json: raw.get().to_owned(),
            parsed: parse_one(raw.get(), actions),
        })
        .collect())
}

/// Whether serde stopped at trailing characters after a complete value.
fn trailing_text(text: &str, e: &serde_json::Error) -> bool {
    e.to_string().contains("trailing characters") && text.starts_with('{')
}

fn parse_one(json: &str, actions: &[&str]) -> Result<Parsed, String> {
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    // Duplicate keys and out-of-range numbers are errors here, not silently last-wins or
    // infinity: the typed reading below sees every key.
    let kind: Kind = serde_json::from_str(json).map_err(|e| format!("not a report: {e}"))?;
    let Some(kind) = kind.kind else {
        return Err("a report needs a \"type\"".into());
    };
    if actions.contains(&kind.as_str()) {
        let args: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        check_no_duplicates(json)?;
        return Ok(Parsed::Action { name: kind, args });
    }
    serde_json::from_str::<Report>(json)
        .map(Parsed::Builtin)
        .map_err(|e| format!("{kind}: {e}"))
}

/// `serde_json::Value` keeps the last of duplicate keys; a host action's report must not
/// have any.
fn check_no_duplicates(json: &str) -> Result<(), String> {
    struct Check;
    impl<'de> serde::de::Visitor<'de> for Check {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key.clone()) {
                    return Err(serde::de::Error::custom(format!("duplicate key \"{key}\"")));
                }
                map.next_value::<Nested>()?;
            }
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element::<Nested>()?.is_some() {}
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    struct Nested;
    impl<'de> Deserialize<'de> for Nested {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Nested, D::Error> {
            d.deserialize_any(Check).map(|()| Nested)
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    serde::Deserializer::deserialize_any(&mut de, Check).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(json: &str) -> Result<Parsed, String> {
        let mut all = parse(&format!("{{\"reports\": [{json}]}}"), &["open_door"])?;
        all.remove(0).parsed
    }

    #[test]
    fn a_clean_answer_is_read() {
        let r = parse(
            r#"{"reports": [{"type": "feeling", "who": "Mira", "toward": "Wren", "affinity": "warmer"}]}"#,
            &[],
        )
        .unwrap();
        assert_eq!(
            r[0].parsed,
            Ok(Parsed::Builtin(Report::Feeling {
                who: "Mira".into(),
                toward: "Wren".into(),
                affinity: Some(Direction::Warmer),
                trust: None,
            }))
        );
        assert!(parse(r#"  {"reports": []}  "#, &[]).unwrap().is_empty());
    }

    #[test]
    fn hostile_answers_are_refused_with_a_reason() {
        let cases = [
            ("```json\n{\"reports\": []}\n```", "code fence"),
            ("Sure! {\"reports\": []}", "text before"),
            ("{\"reports\": []} Hope this helps.", "text after"),
            ("{\"reports\": [", "ends early"),
            ("[]", "not a JSON object"),
            ("{\"reports\": [], \"reports\": []}", "duplicate"),
            ("{\"reports\": [], \"extra\": 1}", "unknown field"),
            ("just prose", "not a JSON object"),
        ];
        for (answer, why) in cases {
            let e = parse(answer, &[]).expect_err(answer);
            assert!(e.contains(why), "{answer:?}: {e}");
        }
        // Deep nesting: the report is refused (never a stack overflow).
        for depth in [200, 100_000] {
            let deep = format!(
                "{{\"reports\": [{}{}]}}",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            match parse(&deep, &[]) {
                Err(_) => {}
                Ok(all) => assert!(all[0].parsed.is_err(), "depth {depth}"),
            }
            let deep = format!(
                "{{\"reports\": [{{\"type\": \"state\", \"who\": {}1{}}}]}}",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            match parse(&deep, &[]) {
                Err(_) => {}
                Ok(all) => assert!(all[0].parsed.is_err(), "depth {depth}"),
            }
        }
        let huge = format!("{{\"reports\": [\"{}\"]}}", "x".repeat(10 << 20));
        assert!(parse(&huge, &[]).unwrap_err().contains("bytes"));
    }

    #[test]
    fn each_bad_report_is_rejected_alone() {
        let e = |json: &str| one(json).expect_err(json);
        assert!(e(r#"{"who": "Mira"}"#).contains("type"));
        assert!(e(r#"{"type": "teleport", "who": "Mira"}"#).contains("unknown variant"));
        assert!(
            e(r#"{"type": "feeling", "who": "Mira", "toward": "Wren", "who": "Ana"}"#)
                .contains("duplicate")
        );
        assert!(
            e(r#"{"type": "significance", "who": "Mira", "line": 1, "significance": 1e400}"#)
                .contains("number out of range")
        );
        assert!(
            e(r#"{"type": "feeling", "who": "Mira", "toward": "Wren", "love": 3}"#)
                .contains("unknown field")
        );
        assert!(e(r#"{"type": "feeling", "who": 7, "toward": "Wren"}"#).contains("invalid type"));
        assert!(e(r#"{"type": "open_door", "who": "Mira", "who": "Ana"}"#).contains("duplicate"));
        assert!(matches!(
            one(r#"{"type": "open_door", "who": "Mira", "door": "cellar"}"#),
            Ok(Parsed::Action { name, .. }) if name == "open_door"
        ));
        // The others of the same answer are still read.
        let all = parse(
            r#"{"reports": [{"type": "nope"}, {"type": "thread_resolved", "thread": 4}]}"#,
            &[],
        )
        .unwrap();
        assert!(all[0].parsed.is_err());
        assert_eq!(
            all[1].parsed,
            Ok(Parsed::Builtin(Report::ThreadResolved { thread: 4 }))
        );
    }
}
