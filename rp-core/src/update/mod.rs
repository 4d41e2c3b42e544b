//! Guided state updates (docs/turn.md §5b): after the replies of a turn, the model reads the
//! turn's lines and reports what changed, as pure JSON against a published schema. It reports;
//! the engine computes. Names are resolved against what exists and is present, values are
//! checked against their ranges, affinity and trust move by a bounded step the engine sets, and
//! every change is applied as events in the turn's commit. A malformed answer gets exactly one
//! retry that carries the errors back; reports still bad after it are recorded as rejected,
//! with the reason, and nothing of them is applied.
//!
//! One pass covers every entity that heard a line of the turn, silent witnesses included. It
//! runs once per turn, after the replies, so the first reply is never delayed by it.

pub(crate) mod facts;
mod judge;
pub mod report;
pub mod schema_check;

pub use crate::model::MAX_KNOWLEDGE;
pub use judge::MAX_REPORT_TEXT;
pub use report::{Direction, MAX_ANSWER_BYTES, MAX_REPORTS, Parsed, Raw, Report, parse};

use judge::Judge;

use crate::log::{Event, JudgedReport, World};
pub use crate::machine::ActionCall;
use crate::machine::{ChatMessage, GenerateRequest, Purpose, Role, Sampling};
use crate::model::{EntityId, EventStatus, MAX_BELIEVED_TRAITS, Millis, ThreadStatus, WitnessSet};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How a turn asks for state updates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpdateOptions {
    /// Whether the turn runs a state-update pass. Off by default: the pass is one more model
    /// call per turn (a cheap one: route `Purpose::StateUpdate` to a fast model).
    pub enabled: bool,
    /// How far one `warmer`/`colder` (affinity) or `more`/`less` (trust) moves, in (0, 1].
    pub step: f64,
    /// Sampling for the pass (a low temperature suits reports).
    pub sampling: Sampling,
    /// The host's own report types: game logic a character's story can trigger (give an item,
    /// open a door). Valid ones come back to the host as [`crate::turn::Step::Act`].
    pub actions: Vec<ActionType>,
}

/// A report type of the host's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionType {
    /// Its `type` (lower case letters, digits and `_`, not a built-in type).
    pub name: String,
    /// When the model should report it.
    #[serde(default)]
    pub description: String,
    /// Its fields besides `type` and `who`, as a JSON Schema object (the subset of
    /// [`schema_check`]).
    #[serde(default = "empty_object")]
    pub parameters: Value,
}

fn empty_object() -> Value {
    json!({"type": "object", "properties": {}})
}

const BUILTIN_TYPES: &[&str] = &[
    "feeling",
    "learned",
    "relationship",
    "state",
    "activity",
    "thread_opened",
    "thread_resolved",
    "thread_dropped",
    "event_started",
    "event_completed",
    "significance",
    "belief",
    "person_mentioned",
    "relation",
    "rule",
];

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            enabled: false,
            step: 0.1,
            sampling: Sampling {
                temperature: Some(0.2),
                ..Sampling::default()
            },
            actions: Vec::new(),
        }
    }
}

impl UpdateOptions {
    pub(crate) fn check(&self) -> crate::Result<()> {
        let bad = |why: String| Err(crate::Error::invalid("update options", why));
        if !(self.step > 0.0 && self.step <= 1.0) {
            return bad(format!("step is {}; it must be in (0, 1]", self.step));
        }
        for (i, a) in self.actions.iter().enumerate() {
            let n = &a.name;
            let well_formed = !n.is_empty()
                && n.len() <= 64
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !well_formed {
                return bad(format!(
                    "action {n:?}: a name is 1–64 lower-case letters, digits or _"
                ));
            }
            if BUILTIN_TYPES.contains(&n.as_str()) {
                return bad(format!("action {n:?} is a built-in report type"));
            }
            if self.actions[..i].iter().any(|b| b.name == *n) {
                return bad(format!("action {n:?} is declared twice"));
            }
            if a.parameters.get("type").is_some_and(|t| t != "object") {
                return bad(format!("action {n:?}: parameters describe an object"));
            }
            let props = a.parameters.get("properties").and_then(Value::as_object);
            if props.is_some_and(|p| p.contains_key("type") || p.contains_key("who")) {
                return bad(format!(
                    "action {n:?}: type and who are the engine's fields"
                ));
            }
            schema_check::check_schema(&a.parameters, n)
                .map_err(|e| crate::Error::invalid("update options", format!("action {e}")))?;
        }
        Ok(())
    }
}

/// What a pass judges an answer against.
#[derive(Clone, Copy, Debug)]
pub struct Pass<'a> {
    /// Who was present: every witness of the turn's lines.
    pub present: &'a WitnessSet,
    /// The turn's lines: (speaker, witnesses), in order (line 1 first).
    pub lines: &'a [(EntityId, WitnessSet)],
    /// Whether the lines become memories (a significance report needs them).
    pub remembered: bool,
    /// The step of one `warmer`/`colder` or `more`/`less`.
    pub step: f64,
    /// The host clock.
    pub now: Millis,
}

/// What an answer comes to.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// The events of the valid reports, in order, already applied to the world judged.
    pub events: Vec<Event>,
    /// Every report with its fate (the whole answer, if it could not be read).
    pub reports: Vec<JudgedReport>,
    /// What was wrong, one line each, as a retry would feed it back (empty: all valid).
    pub problems: Vec<String>,
    /// Significance by (line index from 0, owner) for the memories the turn forms.
    pub significance: BTreeMap<(usize, EntityId), f64>,
    /// The valid host actions, in order, for the host to carry out.
    pub actions: Vec<ActionCall>,
}

/// Reads and judges a pass's `answer` against `world`, applying every valid report's events to
/// it. Invalid reports change nothing; they are listed with their reasons. Valid host actions
/// (of `actions`) are listed for the host.
pub fn judge_answer(
    world: &mut World,
    pass: &Pass<'_>,
    actions: &[ActionType],
    answer: &str,
) -> Verdict {
    let mut verdict = Verdict::default();
    let names: Vec<&str> = actions.iter().map(|a| a.name.as_str()).collect();
    let raws = match parse(answer, &names) {
        Ok(raws) => raws,
        Err(whole) => {
            let whole = cut_at(&whole, 1000).to_owned();
            verdict.problems.push(whole.clone());
            verdict.reports.push(JudgedReport {
                report: cut_at(answer, 2000).to_owned(),
                rejected: Some(whole),
                answer: None,
            });
            return verdict;
        }
    };
    let mut judge = Judge {
        world,
        present: pass.present,
        lines: pass.lines,
        remembered: pass.remembered,
        step: pass.step,
        now: pass.now,
        significance: &mut verdict.significance,
    };
    for (index, raw) in raws.into_iter().enumerate() {
        let outcome = match &raw.parsed {
            Ok(Parsed::Builtin(report)) => judge.judge(report),
            Ok(Parsed::Action { name, args }) => {
                let declared = actions.iter().find(|a| a.name == *name);
                match declared.map(|a| judge.action(a, args)) {
                    Some(Ok((who, arguments))) => {
                        // A pending requirement guarding the action refuses it before the
                        // host is asked (docs/requirements.md).
                        if let Err(e) = judge.world.check_action(name, Some(who)) {
                            Err(e.to_string())
                        } else {
                            verdict.actions.push(ActionCall {
                                name: name.clone(),
                                who,
                                arguments,
                                report: index,
                            });
                            Ok(Vec::new())
                        }
                    }
                    Some(Err(e)) => Err(e),
                    None => Err(format!("\"{name}\" is not a report type of this turn")),
                }
            }
            Err(e) => Err(e.clone()),
        };
        let rejected = match outcome {
            Ok(events) => {
                verdict.events.extend(events);
                None
            }
            Err(reason) => {
                let reason = cut_at(&reason, 1000).to_owned();
                verdict
                    .problems
                    .push(format!("{}: {reason}", cut_at(&raw.json, 1000)));
                Some(reason)
            }
        };
        verdict.reports.push(JudgedReport {
            report: cut_at(&raw.json, 4000).to_owned(),
            rejected,
            answer: None,
        });
    }
    verdict
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut_at(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// How many names the schema lists as `toward`/`about` choices at most.
const MAX_NAMED: usize = 200;

/// The largest integer every JSON reader keeps exact (2^53 − 1).
const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

/// The request of a pass over `lines` (speaker, text as shown, witnesses) heard by `present`.
pub(crate) fn request(
    world: &World,
    present: &WitnessSet,
    lines: &[(EntityId, String, WitnessSet)],
    options: &UpdateOptions,
) -> GenerateRequest {
    let name = |id: EntityId| world.entity(id).map_or("someone", |e| e.name.as_str());
    let mut s = String::from(
        "You keep the state of a story world. Read the lines just spoken and report what \
         changed, as JSON only: one object {\"reports\": [...]}, with no other text and no code \
         fences. Report only what the lines show; {\"reports\": []} is a fine answer. Name \
         people, places and items exactly as listed here. Never compute numbers: say warmer or \
         colder, more or less, and the engine does the rest.\n\nReport types:\n\
         - {\"type\": \"feeling\", \"who\", \"toward\", \"affinity\": \"warmer\"|\"colder\", \"trust\": \"more\"|\"less\"} (either or both)\n\
         - {\"type\": \"learned\", \"who\", \"about\", \"fact\"}: who learned a fact about someone\n\
         - {\"type\": \"relationship\", \"who\", \"toward\", \"summary\"}: how who now sums up the relationship\n\
         - {\"type\": \"state\", \"who\", \"mood\", \"goals\": [...], \"status\", \"facts\": {\"key\": true|number|text}} (any of them; \"\" clears; facts set who's key: value facts, which is how a pending decision gets settled)\n\
         - {\"type\": \"activity\", \"who\", \"move_to\": place, \"slot\", \"posture\", \"action\", \"stop_action\": true, \"pick_up\": item, \"put_down\": item} (any of them)\n\
         - {\"type\": \"thread_opened\", \"text\", \"participants\": [...]}: a tension the story must come back to\n\
         - {\"type\": \"thread_resolved\", \"thread\": number} or {\"type\": \"thread_dropped\", \"thread\": number}\n\
         - {\"type\": \"event_started\", \"event\": number}: a planned event listed below began\n\
         - {\"type\": \"event_completed\", \"event\": number, \"gist\": text}: an active event listed below ended; gist: what it came to\n\
         - {\"type\": \"significance\", \"who\", \"line\": number, \"significance\": 0 to 1}: how much a line matters to who\n\
         - {\"type\": \"belief\", \"who\", \"about\", \"line\": number, \"mood\", \"energy\": 0 to 1, \"availability\": 0 to 1, \"traits\": [...], \"confidence\": 0 to 1, \"inferred\": true} (any of mood, energy, availability, traits): what who, who heard that line, now believes about someone\n\
         - {\"type\": \"person_mentioned\", \"name\", \"line\": number, \"description\"}: someone talked about in that line who is not listed here (\"Wren's mother\" when unnamed)\n\
         - {\"type\": \"relation\", \"who\", \"from\", \"to\", \"line\": number, \"sentiment\": -1 to 1, \"relation\": \"mother\"|\"boss\"|..., \"inferred\": true}: how from feels about to, as who heard it in that line\n\
         - {\"type\": \"rule\", \"who\", \"description\", \"on\": {\"in_hours\": h} or {\"day\": days from today, \"hour\": 0 to 23}, \"intent\": {\"initiate\": person, \"about\": text} or {\"note\": text}}: something who means to do later (\"remember to ask Wren about the letter tomorrow evening\")\n\
         \"who\" is always one of the people present.\n",
    );
    // Pending decisions of those present (docs/requirements.md): a state report's facts
    // settle them.
    for r in world.pending_requirements() {
        if let Some(subject) = r.subject.filter(|s| present.contains(*s)) {
            s.push_str(&format!(
                "Pending decision for {}: {} ({}; settled when `{}` holds, self being {0}'s facts)\n",
                name(subject),
                r.name,
                r.text,
                r.condition
            ));
        }
    }
    if !options.actions.is_empty() {
        s.push_str(
            "\nActions (the game carries them out; report one only when the lines show it):\n",
        );
        for a in &options.actions {
            let fields: Vec<String> = a
                .parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| format!("\"{k}\"")).collect())
                .unwrap_or_default();
            let mut fields_text = String::new();
            for f in &fields {
                fields_text.push_str(", ");
                fields_text.push_str(f);
            }
            s.push_str(&format!(
                "- {{\"type\": \"{}\", \"who\"{fields_text}}}: {}\n",
                a.name, a.description
            ));
        }
    }
    s.push_str("\nPresent:\n");
    for id in present.iter() {
        let Some(e) = world.entity(id) else { continue };
        s.push_str(&format!("- {}", e.name));
        if let Some(m) = &e.state.mood {
            s.push_str(&format!("; mood: {m}"));
        }
        if let Some(p) = &e.activity.position
            && let Some(c) = world.container(p.container)
        {
            s.push_str(&format!("; at {}", c.name));
            if let Some(slot) = &p.slot {
                s.push_str(&format!(" ({slot})"));
            }
        }
        if let Some(p) = &e.activity.posture {
            s.push_str(&format!("; {p}"));
        }
        if let Some(a) = &e.activity.action {
            s.push_str(&format!("; {}", a.verb));
        }
        if !e.inventory.is_empty() {
            let items: Vec<&str> = e.inventory.iter().map(|i| name(*i)).collect();
            s.push_str(&format!("; carries {}", items.join(", ")));
        }
        s.push('\n');
    }
    let places: Vec<String> = world
        .containers()
        .take(MAX_NAMED)
        .map(|c| {
            if c.slots.is_empty() {
                c.name.clone()
            } else {
                let slots: Vec<&str> = c.slots.iter().map(|x| x.name.as_str()).collect();
                format!("{} (slots: {})", c.name, slots.join(", "))
            }
        })
        .collect();
    s.push_str(&format!("\nPlaces: {}\n", places.join("; ")));
    let threads: Vec<String> = world
        .threads()
        .filter(|t| {
            t.status == ThreadStatus::Open && t.participants.iter().any(|p| present.contains(*p))
        })
        .map(|t| format!("- thread {}: {}", t.id.0, t.text))
        .collect();
    if !threads.is_empty() {
        s.push_str(&format!("\nOpen threads:\n{}\n", threads.join("\n")));
    }
    let events: Vec<String> = world
        .scoped_events()
        .filter(|e| {
            matches!(e.status, EventStatus::Planned | EventStatus::Active)
                && e.participants.iter().any(|p| present.contains(*p))
        })
        .map(|e| {
            let status = if e.status == EventStatus::Active {
                "active"
            } else {
                "planned"
            };
            format!("- event {} ({status}): {}", e.id.0, e.name)
        })
        .collect();
    if !events.is_empty() {
        s.push_str(&format!("\nEvents:\n{}\n", events.join("\n")));
    }
    s.push_str("\nLines of this turn:\n");
    for (i, (speaker, text, _)) in lines.iter().enumerate() {
        let _ = speaker;
        s.push_str(&format!("{}. {text}\n", i + 1));
    }
    GenerateRequest {
        purpose: Purpose::StateUpdate,
        messages: vec![
            ChatMessage::new(Role::System, s),
            ChatMessage::new(Role::User, "What changed? Answer with the JSON object."),
        ],
        params: options.sampling.clone(),
        json_schema: Some(schema(world, present, lines.len(), &options.actions)),
        tools: Vec::new(),
    }
}

/// The JSON Schema of an answer, with the names of this world as choices.
pub fn schema(world: &World, present: &WitnessSet, lines: usize, actions: &[ActionType]) -> Value {
    let present_names: Vec<&str> = present
        .iter()
        .filter_map(|id| world.entity(id).map(|e| e.name.as_str()))
        .collect();
    let all_names: Vec<&str> = world
        .entities()
        .take(MAX_NAMED)
        .map(|e| e.name.as_str())
        .collect();
    let places: Vec<&str> = world
        .containers()
        .take(MAX_NAMED)
        .map(|c| c.name.as_str())
        .collect();
    // What `pick_up` and `put_down` name: things, not people. The model has no kind of entity,
    // so a thing is any entity no host speaks for that stands where someone present is, or
    // that someone present carries (it may be put down, then picked up, in one answer).
    let here: std::collections::BTreeSet<_> = present
        .iter()
        .filter_map(|id| world.entity(id)?.activity.position.as_ref())
        .map(|p| p.container)
        .collect();
    let items: Vec<&str> = world
        .entities()
        .filter(|e| !e.host_controlled)
        .filter(|e| {
            let at_hand = e
                .activity
                .position
                .as_ref()
                .is_some_and(|p| here.contains(&p.container));
            at_hand || world.carrier_of(e.id).is_some_and(|c| present.contains(c))
        })
        .take(MAX_NAMED)
        .map(|e| e.name.as_str())
        .collect();
    let mut slots: Vec<&str> = world
        .containers()
        .flat_map(|c| c.slots.iter().map(|s| s.name.as_str()))
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots.truncate(MAX_NAMED);
    let who = json!({"type": "string", "enum": present_names});
    let anyone = json!({"type": "string", "enum": all_names});
    let item = json!({"type": "string", "enum": items});
    let text = json!({"type": "string", "minLength": 1, "maxLength": MAX_REPORT_TEXT});
    let short = json!({"type": "string", "maxLength": 100});
    let unit = json!({"type": "number", "minimum": 0, "maximum": 1});
    let line = json!({"type": "integer", "minimum": 1, "maximum": lines.max(1)});
    // Anyone listed, or a person mentioned earlier in the same answer (not listed yet).
    let person = json!({"type": "string", "minLength": 1, "maxLength": 100});
    let named = json!({"type": "string", "minLength": 1, "maxLength": 100});
    // Thread and event numbers are ids: below 2^53, so every JSON reader keeps them exact.
    let number = json!({"type": "integer", "minimum": 0, "maximum": MAX_EXACT_INTEGER});
    let report = |kind: &str, required: &[&str], props: &Value| {
        let mut properties = props.clone();
        properties["type"] = json!({"const": kind});
        let mut req = vec!["type"];
        req.extend_from_slice(required);
        json!({"type": "object", "additionalProperties": false, "required": req, "properties": properties})
    };
    // A report that must carry at least one of `changes`: one form per change, each
    // requiring it (with `props` overridden by the form's own schema of it, if any).
    let at_least_one = |kind: &str, required: &[&str], props: &Value, changes: &[(&str, Value)]| {
        let forms: Vec<Value> = changes
            .iter()
            .map(|(field, form)| {
                let mut props = props.clone();
                if !form.is_null() {
                    props[*field] = form.clone();
                }
                let mut req = required.to_vec();
                req.push(field);
                report(kind, &req, &props)
            })
            .collect();
        json!({"anyOf": forms})
    };
    let mut reports = vec![
        at_least_one(
            "feeling",
            &["who", "toward"],
            &json!({"who": who, "toward": anyone,
            "affinity": {"enum": ["warmer", "colder"]}, "trust": {"enum": ["more", "less"]}}),
            &[("affinity", Value::Null), ("trust", Value::Null)],
        ),
        report(
            "learned",
            &["who", "about", "fact"],
            &json!({"who": who, "about": anyone, "fact": text}),
        ),
        report(
            "relationship",
            &["who", "toward", "summary"],
            &json!({"who": who, "toward": anyone, "summary": text}),
        ),
        at_least_one(
            "state",
            &["who"],
            &json!({"who": who, "mood": short, "status": short,
            "goals": {"type": "array", "maxItems": 8, "items": text},
            "facts": {"type": "object"}}),
            &[
                ("mood", Value::Null),
                ("goals", Value::Null),
                ("status", Value::Null),
                ("facts", Value::Null),
            ],
        ),
        at_least_one(
            "activity",
            &["who"],
            &json!({"who": who, "move_to": {"type": "string", "enum": places},
            "slot": {"type": "string", "enum": slots}, "posture": short, "action": text, "stop_action": {"type": "boolean"},
            "pick_up": item, "put_down": item}),
            &[
                ("move_to", Value::Null),
                ("slot", Value::Null),
                ("posture", Value::Null),
                ("action", Value::Null),
                ("stop_action", json!({"const": true})),
                ("pick_up", Value::Null),
                ("put_down", Value::Null),
            ],
        ),
        report(
            "thread_opened",
            &["text", "participants"],
            &json!({"text": text,
            "participants": {"type": "array", "minItems": 1, "items": who}}),
        ),
        report("thread_resolved", &["thread"], &json!({"thread": number})),
        report("thread_dropped", &["thread"], &json!({"thread": number})),
        report("event_started", &["event"], &json!({"event": number})),
        report(
            "event_completed",
            &["event"],
            &json!({"event": number, "gist": text}),
        ),
        report(
            "significance",
            &["who", "line", "significance"],
            &json!({"who": who,
            "line": line,
            "significance": unit}),
        ),
        at_least_one(
            "belief",
            &["who", "about", "line"],
            &json!({"who": who, "about": person, "line": line, "mood": named,
            "energy": unit, "availability": unit,
            "traits": {"type": "array", "minItems": 1, "maxItems": MAX_BELIEVED_TRAITS, "items": named},
            "confidence": unit, "inferred": {"type": "boolean"}}),
            &[
                ("mood", Value::Null),
                ("energy", Value::Null),
                ("availability", Value::Null),
                ("traits", Value::Null),
            ],
        ),
        report(
            "person_mentioned",
            &["name", "line"],
            &json!({"name": named, "line": line, "description": text}),
        ),
        report(
            "relation",
            &["who", "from", "to", "line", "sentiment"],
            &json!({"who": who, "from": person, "to": person, "line": line,
            "sentiment": {"type": "number", "minimum": -1, "maximum": 1},
            "relation": short, "inferred": {"type": "boolean"}}),
        ),
        report(
            "rule",
            &["who", "description", "on", "intent"],
            &json!({"who": who, "description": text,
            "on": {"anyOf": [
                {"type": "object", "properties": {"in_hours": {"type": "number", "minimum": 0.01, "maximum": 8784}},
                 "required": ["in_hours"], "additionalProperties": false},
                {"type": "object", "properties": {
                    "day": {"type": "integer", "minimum": 0, "maximum": 366},
                    "hour": {"type": "number", "minimum": 0, "maximum": 23.99}},
                 "required": ["hour"], "additionalProperties": false},
                {"type": "object", "properties": {"stimulus": short},
                 "required": ["stimulus"], "additionalProperties": false}]},
            "intent": {"anyOf": [
                {"type": "object", "properties": {"initiate": person, "about": text},
                 "required": ["initiate"], "additionalProperties": false},
                {"type": "object", "properties": {"note": text},
                 "required": ["note"], "additionalProperties": false}]},
            "condition": text, "weight": unit}),
        ),
    ];
    for a in actions {
        let mut props = a
            .parameters
            .get("properties")
            .cloned()
            .unwrap_or_else(|| json!({}));
        props["who"] = who.clone();
        let mut required: Vec<String> = vec!["who".into()];
        required.extend(
            a.parameters
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_owned)),
        );
        let required: Vec<&str> = required.iter().map(String::as_str).collect();
        reports.push(report(&a.name, &required, &props));
    }
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reports"],
        "properties": {"reports": {"type": "array", "maxItems": MAX_REPORTS, "items": {"anyOf": reports}}}
    })
}
