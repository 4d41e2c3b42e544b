//! The model layers of a stimulus (docs/drives.md, "Layers"): what arithmetic and rules hoist
//! is classified by the fast model (purpose `classify`: intent, tone, confidence,
//! significance); what is still uncertain or significant is thought over by the smart model
//! (purpose `think`), whose thought becomes a memory of the character alone and may move its
//! drives or leave an intention to speak to someone. Both answers are pure JSON, read
//! strictly, retried once with what was wrong.

use crate::drives::layers::Hoist;
use crate::log::{Event, Named, World};
use crate::machine::{ChatMessage, GenerateRequest, Purpose, Role, Sampling};
use crate::model::*;
use serde::Deserialize;
use serde_json::json;

/// The longest thought, in characters.
const MAX_THOUGHT_CHARS: usize = 1_000;
/// How far "more" or "less" in a thought moves task pressure or curiosity: the model says
/// which way, the engine how much (seed 002).
const THOUGHT_STEP: f64 = 0.25;

/// Who `entity` is, for a prompt: its name and its sheet's plain facts.
fn identity(world: &World, entity: EntityId) -> String {
    let Some(me) = world.entity(entity) else {
        return "You are someone.".to_owned();
    };
    let mut out = format!("You are {}.", me.name);
    for line in me.facts.lines().iter().filter(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('$')
    }) {
        out.push('\n');
        out.push_str(line);
    }
    out
}

/// The stimuli of a hoist in words, one per line.
fn perceived(stimuli: &[Stimulus]) -> String {
    stimuli
        .iter()
        .map(|s| {
            let what = if s.payload.is_empty() {
                "(nothing more)"
            } else {
                &s.payload
            };
            let times = if s.count > 1 {
                format!(" (×{})", s.count)
            } else {
                String::new()
            };
            format!("- a {} ({}): {what}{times}", s.kind, s.priority.name())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fast model's request for `hoist` of `entity`.
pub(super) fn classify_request(world: &World, entity: EntityId, hoist: &Hoist) -> GenerateRequest {
    let user = format!(
        "What you just perceived:\n{}\n\nJudge it quickly. Answer with the JSON object \
         {{\"intent\": \"what it means, in a few words\", \"sentiment\": \"positive\" | \
         \"neutral\" | \"negative\", \"confidence\": 0 to 1 (how sure you are), \
         \"significance\": 0 to 1 (how much it matters to you)}} and nothing else.",
        perceived(&hoist.stimuli)
    );
    json_request(
        Purpose::Classify { speaker: entity },
        identity(world, entity),
        user,
        0.0,
        json!({
            "type": "object",
            "properties": {
                "intent": {"type": "string", "minLength": 1, "maxLength": MAX_INTENT_LABEL_CHARS},
                "sentiment": {"type": "string", "enum": ["positive", "neutral", "negative"]},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "significance": {"type": "number", "minimum": 0, "maximum": 1}
            },
            "required": ["intent", "sentiment", "confidence", "significance"],
            "additionalProperties": false
        }),
    )
}

/// Reads the fast model's classification.
pub(super) fn read_classification(answer: &str) -> Result<Classification, String> {
    let c: Classification = crate::decay::read_answer(answer)?;
    let c = Classification {
        intent: c.intent.trim().to_owned(),
        ..c
    };
    if c.intent.is_empty() || c.intent.chars().count() > MAX_INTENT_LABEL_CHARS {
        return Err(format!(
            "the intent is a label of 1 to {MAX_INTENT_LABEL_CHARS} characters"
        ));
    }
    for (name, v) in [
        ("confidence", c.confidence),
        ("significance", c.significance),
    ] {
        if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
            return Err(format!("the {name} is {v}; it is 0 to 1"));
        }
    }
    Ok(c)
}

/// Why a classification goes on to thought, if it does: the model is not sure enough, or it
/// matters enough.
pub(super) fn think_reason(world: &World, entity: EntityId, c: &Classification) -> Option<String> {
    let s = world.drive_settings(entity);
    if c.confidence < s.hoist_below {
        Some(format!(
            "the fast model is not sure: {:.2} below {:.2} ({})",
            c.confidence, s.hoist_below, c.intent
        ))
    } else if c.significance >= s.think_from {
        Some(format!(
            "it matters: significance {:.2} from {:.2} ({})",
            c.significance, s.think_from, c.intent
        ))
    } else {
        None
    }
}

/// The smart model's request: `entity` thinks over `stimuli`, as the fast model read them.
pub(super) fn think_request(
    world: &World,
    entity: EntityId,
    stimuli: &[Stimulus],
    c: &Classification,
) -> GenerateRequest {
    let present: Vec<String> = world
        .present_names(entity)
        .into_iter()
        .filter(|n| world.entity(entity).is_none_or(|e| e.name != *n))
        .collect();
    let system = format!(
        "{}\n\nSomething caught your attention:\n{}\nAt first it seemed: {} ({}).",
        identity(world, entity),
        perceived(stimuli),
        c.intent,
        c.sentiment.name()
    );
    let user = format!(
        "Think it over, in a sentence or two in your own voice. If it makes you want to do \
         something, say so. Answer with the JSON object {{\"thought\": text, \"task\": \
         \"more\" | \"less\" (optional: whether your tasks now press more or less), \
         \"curiosity\": \"more\" | \"less\" (optional), \"speak_to\": a name (optional: \
         someone you now mean to talk to{}), \"about\": text (with speak_to)}} and nothing \
         else.",
        if present.is_empty() {
            String::new()
        } else {
            format!("; here: {}", present.join(", "))
        }
    );
    json_request(
        Purpose::Think { speaker: entity },
        system,
        user,
        0.7,
        json!({
            "type": "object",
            "properties": {
                "thought": {"type": "string", "minLength": 1, "maxLength": MAX_THOUGHT_CHARS},
                "task": {"type": "string", "enum": ["more", "less"]},
                "curiosity": {"type": "string", "enum": ["more", "less"]},
                "speak_to": {"type": "string"},
                "about": {"type": "string", "maxLength": MAX_RULE_TEXT_CHARS}
            },
            "required": ["thought"],
            "additionalProperties": false
        }),
    )
}

/// A request for a pure JSON answer: a system message, a user message, the sampling
/// temperature and the answer's schema.
pub(super) fn json_request(
    purpose: Purpose,
    system: String,
    user: String,
    temperature: f64,
    schema: serde_json::Value,
) -> GenerateRequest {
    GenerateRequest {
        purpose,
        messages: vec![
            ChatMessage::new(Role::System, system),
            ChatMessage::new(Role::User, user),
        ],
        params: Sampling {
            temperature: Some(temperature),
            ..Sampling::default()
        },
        json_schema: Some(schema),
        tools: Vec::new(),
    }
}

/// Which way a thought moves a drive.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Way {
    More,
    Less,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThoughtAnswer {
    thought: String,
    #[serde(default)]
    task: Option<Way>,
    #[serde(default)]
    curiosity: Option<Way>,
    #[serde(default)]
    speak_to: Option<String>,
    #[serde(default)]
    about: Option<String>,
}

/// Reads the smart model's thought for `entity` at `at`: the record to commit (checked by the
/// log's own rule on a copy of the world), or what was wrong.
pub(super) fn read_thought(
    world: &World,
    entity: EntityId,
    at: Millis,
    stimuli: &[Stimulus],
    reason: &str,
    significance: f64,
    answer: &str,
) -> Result<Event, String> {
    let a: ThoughtAnswer = crate::decay::read_answer(answer)?;
    let text = a.thought.trim();
    if text.is_empty() || text.chars().count() > MAX_THOUGHT_CHARS {
        return Err(format!(
            "the thought is 1 to {MAX_THOUGHT_CHARS} characters"
        ));
    }
    let mut effects = Vec::new();
    // One effect on the drives (task pressure first), one step either way.
    let moved = [(Drive::Task, a.task), (Drive::Curiosity, a.curiosity)]
        .into_iter()
        .find_map(|(drive, way)| way.map(|w| (drive, w)));
    if let Some((drive, way)) = moved {
        let amount = match way {
            Way::More => THOUGHT_STEP,
            Way::Less => -THOUGHT_STEP,
        };
        effects.push(ThoughtEffect::Drive { drive, amount });
    }
    match (&a.speak_to, &a.about) {
        (Some(who), about) => {
            let to = world
                .resolve_entity(Named::Text(who))
                .map_err(|_| format!("speak_to: nobody here is called {who:?}"))?;
            let about = about.as_deref().unwrap_or("what is on my mind").trim();
            effects.push(ThoughtEffect::Initiate {
                to,
                about: about.to_owned(),
            });
        }
        (None, Some(_)) => return Err("about is only given with speak_to".into()),
        (None, None) => {}
    }
    let memory = Memory::new(
        MemoryId(world.next_id()),
        entity,
        WitnessSet::from_iter([entity]),
        text,
        MemoryKind::Thought,
        significance,
        at,
    );
    let event = Event::ThoughtFormed {
        entity,
        at,
        stimuli: stimuli.iter().map(|s| s.id).collect(),
        reason: reason.to_owned(),
        memory: Some(memory),
        effects,
        rejected: None,
    };
    world.clone().apply(&event).map_err(|e| match e {
        crate::Error::Invalid { reason, .. } => reason,
        other => other.to_string(),
    })?;
    Ok(event)
}
