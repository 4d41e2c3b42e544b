//! Whole memories reduced to summaries (docs/memory.md): one request per owner for its memories
//! that fell below the summary threshold, answered by the fast model (purpose `summary`) as pure
//! JSON, and read strictly.

use crate::log::{Event, World};
use crate::machine::{ChatMessage, GenerateRequest, Purpose, Role, Sampling};
use crate::model::{EntityId, MemoryId, MemorySummary, Millis};
use serde::Deserialize;
use serde_json::json;

/// The answer a summary request asks for.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryAnswer {
    /// One entry per memory.
    pub summaries: Vec<SummaryItem>,
}

/// One memory's summary as the model writes it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryItem {
    /// The memory's id, as the request lists it.
    pub id: u64,
    /// The shorter text.
    pub summary: String,
    /// The feeling it left.
    #[serde(default)]
    pub feeling: Option<String>,
    /// Whom it was mostly about: one of the names listed with it.
    #[serde(default)]
    pub about: Option<String>,
}

/// The request that asks for summaries of `owner`'s memories `ids`: the memories in its own
/// words, with who else was there (only what it witnessed: its own memories).
pub fn summary_request(world: &World, owner: EntityId, ids: &[MemoryId]) -> GenerateRequest {
    let name_of = |id: EntityId| world.entity(id).map_or("someone", |e| e.name.as_str());
    let name = name_of(owner);
    let mut system = format!(
        "You keep {name}'s memories. Time has passed and these have begun to fade. Rewrite each \
         as its gist, in {name}'s own words and shorter than it is now: who, what, and why it \
         mattered, without the details. Give each the feeling it left ({name}'s, in a word or \
         a few) and whom it was mostly about (one of the names listed with it, or null).\n\n\
         # The memories"
    );
    for id in ids {
        let Some(m) = world.memory(*id) else { continue };
        let others: Vec<&str> = m
            .witnesses
            .iter()
            .filter(|w| *w != owner)
            .map(name_of)
            .collect();
        let with = if others.is_empty() {
            String::new()
        } else {
            format!(" (with {})", others.join(", "))
        };
        system.push_str(&format!("\n- id {}{with}: {}", m.id.0, m.text));
    }
    GenerateRequest {
        purpose: Purpose::Summary,
        messages: vec![
            ChatMessage::new(Role::System, system),
            ChatMessage::new(
                Role::User,
                "Answer with the JSON object {\"summaries\": [...]}, one entry per memory, and \
                 nothing else.",
            ),
        ],
        params: Sampling {
            temperature: Some(0.2),
            ..Sampling::default()
        },
        json_schema: Some(schema(ids)),
        tools: Vec::new(),
    }
}

fn schema(ids: &[MemoryId]) -> serde_json::Value {
    let ids: Vec<u64> = ids.iter().map(|id| id.0).collect();
    json!({
        "type": "object",
        "properties": {
            "summaries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "enum": ids},
                        "summary": {"type": "string"},
                        "feeling": {"type": ["string", "null"]},
                        "about": {"type": ["string", "null"]}
                    },
                    "required": ["id", "summary"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["summaries"],
        "additionalProperties": false
    })
}

/// Reads an answer to the summary request for `owner`'s memories `ids` at `at`: the summaries
/// that may be recorded, and what was wrong with the rest (one line each, as a retry feeds it
/// back). Each summary is checked by the log's own rule, on a copy of the world.
pub(crate) fn read_summaries(
    world: &World,
    owner: EntityId,
    ids: &[MemoryId],
    at: Millis,
    answer: &str,
) -> (Vec<MemorySummary>, Vec<String>) {
    let parsed: SummaryAnswer = match super::read_answer(answer) {
        Ok(a) => a,
        Err(problem) => return (Vec::new(), vec![problem]),
    };
    let mut problems = Vec::new();
    let mut out: Vec<MemorySummary> = Vec::new();
    for item in parsed.summaries {
        let id = MemoryId(item.id);
        if !ids.contains(&id) {
            problems.push(format!("id {}: not one of the memories listed", item.id));
            continue;
        }
        if out.iter().any(|s| s.id == id) {
            problems.push(format!("id {}: given twice", item.id));
            continue;
        }
        let Some(m) = world.memory(id) else { continue };
        let about = match item.about.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(name) => {
                // Named as anywhere else (a name, an alias), then it must have been there.
                match world.resolve_entity(name) {
                    Ok(w) if w != owner && m.witnesses.contains(w) => Some(w),
                    _ => {
                        problems.push(format!(
                            "id {}: about {name:?} is not one of the names listed with it",
                            item.id
                        ));
                        continue;
                    }
                }
            }
        };
        let summary = MemorySummary {
            id,
            text: item.summary.trim().to_owned(),
            feeling: item
                .feeling
                .map(|f| f.trim().to_owned())
                .filter(|f| !f.is_empty()),
            about,
        };
        let trial = Event::MemoriesSummarized {
            owner,
            at,
            summaries: vec![summary.clone()],
        };
        match world.clone().apply(&trial) {
            Ok(()) => out.push(summary),
            Err(e) => problems.push(format!("id {}: {}", item.id, reason(&e))),
        }
    }
    (out, problems)
}

/// The reason of a refusal, without the kind's prefix.
pub(super) fn reason(e: &crate::Error) -> String {
    match e {
        crate::Error::Invalid { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
