//! Tools offered to a reply generation (randomness through tools: docs/turn.md §5a). A model
//! cannot roll dice; it asks, and the engine rolls with the world's seeded generator. Every roll
//! is recorded with its draws, so replay reads the results and never rolls again.

use crate::facts::{Draws, SeededDraws};
use crate::machine::{ToolCall, ToolDef};
pub use crate::model::ToolRun;
use serde_json::{Value, json};

/// Rolls dice in notation (`d20`, `2d6+1`, `4d6kh3`).
pub const ROLL_DICE: &str = "roll_dice";
/// Rolls each of a list of chances (`{"chance": 0.3, "desc": "..."}`).
pub const ROLL_EFFECTS: &str = "roll_effects";
/// The most effects one `roll_effects` call may roll.
pub const MAX_EFFECTS: usize = 32;
/// The most rounds of tool calls one reply may take before it must answer.
pub const MAX_TOOL_ROUNDS: usize = 3;

/// The tools a reply is offered.
pub fn definitions() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: ROLL_DICE.into(),
            description: "Roll dice for a chance-based outcome. Never invent a roll: call this \
                          and use its total."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "notation": {"type": "string", "description": "d20, 2d6+1, 4d6kh3"},
                    "reason": {"type": "string"}
                },
                "required": ["notation"],
                "additionalProperties": false
            }),
        },
        ToolDef {
            name: ROLL_EFFECTS.into(),
            description: "Roll whether each effect happens, each with its own chance (0 to 1). \
                          Apply the effects whose result is true."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "effects": {
                        "type": "array",
                        "maxItems": MAX_EFFECTS,
                        "items": {
                            "type": "object",
                            "properties": {
                                "chance": {"type": "number", "minimum": 0, "maximum": 1},
                                "desc": {"type": "string"}
                            },
                            "required": ["chance", "desc"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["effects"],
                "additionalProperties": false
            }),
        },
    ]
}

/// Records the draws a call takes.
struct Recording {
    inner: SeededDraws,
    taken: Vec<f64>,
}

impl Draws for Recording {
    fn draw(&mut self) -> f64 {
        let d = self.inner.draw();
        self.taken.push(d);
        d
    }
}

/// Runs `calls` with the world's generator (`seed`, after `position` draws).
pub(crate) fn run(calls: &[ToolCall], seed: u64, position: u64) -> Vec<ToolRun> {
    let mut position = position;
    calls
        .iter()
        .map(|call| {
            let mut draws = Recording {
                inner: SeededDraws::new(seed, position),
                taken: Vec::new(),
            };
            let args = arguments(&call.arguments);
            let result = match args {
                Ok(args) => match call.name.as_str() {
                    ROLL_DICE => roll_dice(&args, &mut draws),
                    ROLL_EFFECTS => roll_effects(&args, &mut draws),
                    other => Err(format!(
                        "there is no tool \"{other}\"; the tools are {ROLL_DICE} and {ROLL_EFFECTS}"
                    )),
                },
                Err(e) => Err(e),
            };
            position += draws.taken.len() as u64;
            ToolRun {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: shown(&call.arguments),
                result: result.unwrap_or_else(|e| json!({ "error": e })).to_string(),
                draws: draws.taken,
            }
        })
        .collect()
}

/// The arguments as an object: servers send a JSON object, or a string holding one.
fn arguments(raw: &Value) -> Result<Value, String> {
    let value = match raw {
        Value::String(s) => serde_json::from_str::<Value>(s)
            .map_err(|e| format!("the arguments are not JSON: {e}"))?,
        other => other.clone(),
    };
    if !value.is_object() {
        return Err("the arguments are not a JSON object".into());
    }
    Ok(value)
}

fn shown(raw: &Value) -> String {
    let s = match raw {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    super::super::update::cut_at(&s, 4000).to_owned()
}

fn roll_dice(args: &Value, draws: &mut dyn Draws) -> Result<Value, String> {
    let notation = args
        .get("notation")
        .and_then(Value::as_str)
        .ok_or("roll_dice needs \"notation\", a text like 2d6+1")?;
    let roll = crate::facts::roll(notation, draws)?;
    Ok(json!({"notation": notation, "dice": roll.dice, "total": roll.total}))
}

fn roll_effects(args: &Value, draws: &mut dyn Draws) -> Result<Value, String> {
    let effects = args
        .get("effects")
        .and_then(Value::as_array)
        .ok_or("roll_effects needs \"effects\", a list of {chance, desc}")?;
    if effects.len() > MAX_EFFECTS {
        return Err(format!("at most {MAX_EFFECTS} effects"));
    }
    // Checked before any draw: a bad list takes none.
    let mut parsed = Vec::with_capacity(effects.len());
    for e in effects {
        let chance = e
            .get("chance")
            .and_then(Value::as_f64)
            .filter(|c| (0.0..=1.0).contains(c))
            .ok_or("each effect needs a \"chance\" from 0 to 1")?;
        let desc = e.get("desc").and_then(Value::as_str).unwrap_or("");
        parsed.push((chance, desc));
    }
    let rolled: Vec<Value> = parsed
        .into_iter()
        .map(|(chance, desc)| json!({"desc": desc, "happened": draws.draw() < chance}))
        .collect();
    let results: Vec<bool> = rolled
        .iter()
        .map(|r| r["happened"].as_bool().unwrap_or(false))
        .collect();
    Ok(json!({"results": results, "effects": rolled}))
}
