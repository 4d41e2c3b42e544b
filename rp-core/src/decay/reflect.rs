//! Reflection (docs/memory.md, after Generative Agents): once the significance of the memories a
//! character formed since it last reflected reaches its threshold, it reads its most significant
//! recent memories and draws insights, each citing the memories it rests on. The smart model
//! answers (purpose `reflect`) as pure JSON; the insights become memories of kind `reflection`,
//! witnessed by the character alone.

use super::summary::reason;
use crate::log::{Event, World};
use crate::machine::{ChatMessage, GenerateRequest, Purpose, Role, Sampling};
use crate::model::{EntityId, Memory, MemoryId, MemoryKind, Millis, WitnessSet};
use serde::Deserialize;
use serde_json::json;

/// The most insights asked for.
const MAX_ASKED: usize = 5;

/// The answer a reflection request asks for.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReflectionAnswer {
    /// The insights, most important first.
    pub insights: Vec<InsightItem>,
}

/// One insight as the model writes it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsightItem {
    /// The insight, in the character's own words.
    pub text: String,
    /// The ids of the memories it rests on.
    pub sources: Vec<u64>,
    /// How much it matters, 0–1 (default: as much as the most significant of its sources).
    #[serde(default)]
    pub significance: Option<f64>,
}

/// The characters due to reflect at the world's time: those whose significance since they last
/// reflected reached their threshold (`reflect_threshold`, shifted by curiosity), in id order.
pub fn reflections_due(world: &World) -> Vec<EntityId> {
    world
        .minds()
        .filter(|(id, mind)| {
            let s = world.drive_settings(*id);
            s.enabled && mind.unreflected >= s.reflect_at(&mind.personality)
        })
        .map(|(id, _)| id)
        .collect()
}

/// The memories `entity` reflects over: its most significant memories still in mind formed
/// since it last reflected (all of them before its first reflection), at most
/// `reflect_memories`, most significant first (then newest).
fn material(world: &World, entity: EntityId) -> Vec<&Memory> {
    let since = world.mind(entity).and_then(|m| m.reflected_at);
    let mut ms: Vec<&Memory> = world
        .memories_of(entity)
        .filter(|m| m.recallable() && since.is_none_or(|t| m.created >= t))
        .collect();
    ms.sort_by(|a, b| {
        b.significance
            .total_cmp(&a.significance)
            .then(b.created.cmp(&a.created))
            .then(b.id.cmp(&a.id))
    });
    ms.truncate(world.drive_settings(entity).reflect_memories as usize);
    ms
}

/// The reflection request of `entity`: the memories it shows are only its own (what it
/// witnessed).
pub fn reflection_request(world: &World, entity: EntityId) -> GenerateRequest {
    let name = world.entity(entity).map_or("someone", |e| e.name.as_str());
    let shown = material(world, entity);
    let mut system = format!("You are {name}.");
    if let Some(me) = world.entity(entity) {
        for line in me.facts.lines().iter().filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('$')
        }) {
            system.push('\n');
            system.push_str(line);
        }
    }
    system.push_str(&format!(
        "\n\nA quiet moment. Read what you have lived lately and step back: what do you make of \
         it? Give 1 to {MAX_ASKED} insights, high-level conclusions in your own words (about \
         people, about yourself, about what is going on), each citing the ids of the memories \
         it rests on.\n\n# What you remember (most significant first)"
    ));
    for m in &shown {
        system.push_str(&format!("\n- id {}: {}", m.id.0, m.shown_text()));
    }
    let ids: Vec<MemoryId> = shown.iter().map(|m| m.id).collect();
    GenerateRequest {
        purpose: Purpose::Reflect { speaker: entity },
        messages: vec![
            ChatMessage::new(Role::System, system),
            ChatMessage::new(
                Role::User,
                "Answer with the JSON object {\"insights\": [{\"text\": ..., \"sources\": [ids], \
                 \"significance\": 0 to 1}]} and nothing else.",
            ),
        ],
        params: Sampling {
            temperature: Some(0.7),
            ..Sampling::default()
        },
        json_schema: Some(schema(&ids)),
        tools: Vec::new(),
    }
}

fn schema(ids: &[MemoryId]) -> serde_json::Value {
    let ids: Vec<u64> = ids.iter().map(|id| id.0).collect();
    json!({
        "type": "object",
        "properties": {
            "insights": {
                "type": "array",
                "maxItems": MAX_ASKED,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "sources": {
                            "type": "array",
                            "items": {"type": "integer", "enum": ids},
                            "minItems": 1
                        },
                        "significance": {"type": "number", "minimum": 0, "maximum": 1}
                    },
                    "required": ["text", "sources"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["insights"],
        "additionalProperties": false
    })
}

/// Reads an answer to `entity`'s reflection request at `at`: the insights that may be recorded
/// (as memories with the world's next fresh ids), and what was wrong with the rest. An insight
/// that cites a memory not `entity`'s own is refused with the reason; each is checked by the
/// log's own rule, on a copy of the world.
pub(crate) fn read_insights(
    world: &World,
    entity: EntityId,
    at: Millis,
    answer: &str,
) -> (Vec<Memory>, Vec<String>) {
    let parsed: ReflectionAnswer = match super::read_answer(answer) {
        Ok(a) => a,
        Err(problem) => return (Vec::new(), vec![problem]),
    };
    let mut problems = Vec::new();
    if parsed.insights.len() > MAX_ASKED {
        problems.push(format!(
            "{} insights; at most {MAX_ASKED}",
            parsed.insights.len()
        ));
        return (Vec::new(), problems);
    }
    let mut out: Vec<Memory> = Vec::new();
    let mut next_id = world.next_id();
    for (n, item) in parsed.insights.into_iter().enumerate() {
        let mut sources: Vec<MemoryId> = item.sources.iter().map(|id| MemoryId(*id)).collect();
        sources.sort();
        sources.dedup();
        let significance = match item.significance {
            Some(s) => s,
            None => sources
                .iter()
                .filter_map(|id| world.memory(*id))
                .filter(|m| m.owner == entity)
                .map(|m| m.significance)
                .fold(0.0f64, f64::max),
        };
        let memory = Memory {
            sources,
            ..Memory::new(
                MemoryId(next_id),
                entity,
                WitnessSet::from_iter([entity]),
                item.text.trim(),
                MemoryKind::Reflection,
                significance,
                at,
            )
        };
        let trial = Event::Reflected {
            entity,
            at,
            insights: vec![memory.clone()],
            rejected: None,
        };
        match world.clone().apply(&trial) {
            Ok(()) => {
                next_id += 1;
                out.push(memory);
            }
            Err(e) => problems.push(format!("insight {}: {}", n + 1, reason(&e))),
        }
    }
    (out, problems)
}
