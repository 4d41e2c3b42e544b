//! Info capabilities: the declarative actions the model may ask for, built from the current
//! context with constraints (the ids it may name, the values an enum takes), rendered for the
//! prompt and as JSON Schema, and the check of a request against them.

use super::context::QueryContext;
use super::response::{InfoRequest, MAX_NOTE_CHARS};
use crate::graph::Direction;
use crate::model::EntityId;
use crate::update::schema_check;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The most hops `GET_RELATIONSHIPS` may walk.
pub const MAX_RELATIONSHIP_HOPS: u32 = 3;

/// Which capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CapabilityId {
    /// The full record of one entity of the context.
    ExpandEntity,
    /// The full records of several.
    ExpandEntities,
    /// Entities matching words (names, aliases, facts).
    SearchEntities,
    /// An entity by name or alias, fuzzy.
    GetEntityByName,
    /// Relationships of entities of the context, by direction.
    GetRelationships,
    /// The entity kinds.
    ListEntityDefinitions,
    /// Entities of one kind.
    GetEntitiesByDefinition,
}

impl CapabilityId {
    /// Every capability.
    pub const ALL: [CapabilityId; 7] = [
        CapabilityId::ExpandEntity,
        CapabilityId::ExpandEntities,
        CapabilityId::SearchEntities,
        CapabilityId::GetEntityByName,
        CapabilityId::GetRelationships,
        CapabilityId::ListEntityDefinitions,
        CapabilityId::GetEntitiesByDefinition,
    ];

    /// The stable name (`"EXPAND_ENTITY"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityId::ExpandEntity => "EXPAND_ENTITY",
            CapabilityId::ExpandEntities => "EXPAND_ENTITIES",
            CapabilityId::SearchEntities => "SEARCH_ENTITIES",
            CapabilityId::GetEntityByName => "GET_ENTITY_BY_NAME",
            CapabilityId::GetRelationships => "GET_RELATIONSHIPS",
            CapabilityId::ListEntityDefinitions => "LIST_ENTITY_DEFINITIONS",
            CapabilityId::GetEntitiesByDefinition => "GET_ENTITIES_BY_DEFINITION",
        }
    }

    /// The capability of that name.
    pub fn parse(name: &str) -> Option<CapabilityId> {
        CapabilityId::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// What a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParameterType {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// One entity id.
    EntityId,
    /// A list of entity ids.
    EntityIds,
    /// One of `enum_values`.
    Enum,
}

/// What values a parameter may take (what keeps the model from naming what is not there).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ParameterConstraints {
    /// The entity ids allowed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub valid_entity_ids: Vec<EntityId>,
    /// The values allowed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enum_values: Vec<String>,
    /// The least number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// The greatest number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// The longest text, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The most items of a list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
}

/// One parameter of a capability.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityParameter {
    /// Its name in `params`.
    pub name: String,
    /// What it means.
    pub description: String,
    /// What it holds.
    #[serde(rename = "type")]
    pub kind: ParameterType,
    /// Whether it must be given.
    pub required: bool,
    /// The values it may take.
    #[serde(default)]
    pub constraints: ParameterConstraints,
}

/// An action the model may ask for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoCapability {
    /// Which.
    pub id: CapabilityId,
    /// A readable name.
    pub name: String,
    /// What it does (shown to the model).
    pub description: String,
    /// Its parameters.
    #[serde(default)]
    pub parameters: Vec<CapabilityParameter>,
    /// A request using it, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

fn param(
    name: &str,
    description: &str,
    kind: ParameterType,
    required: bool,
    constraints: ParameterConstraints,
) -> CapabilityParameter {
    CapabilityParameter {
        name: name.into(),
        description: description.into(),
        kind,
        required,
        constraints,
    }
}

fn ids_param(name: &str, description: &str, ids: Vec<EntityId>, max: u64) -> CapabilityParameter {
    param(
        name,
        description,
        ParameterType::EntityIds,
        true,
        ParameterConstraints {
            valid_entity_ids: ids,
            max_items: Some(max),
            ..Default::default()
        },
    )
}

fn limit_param(result_limit: u32) -> CapabilityParameter {
    param(
        "limit",
        "How many at most (default: all up to the limit)",
        ParameterType::Integer,
        false,
        ParameterConstraints {
            min: Some(1),
            max: Some(u64::from(result_limit)),
            ..Default::default()
        },
    )
}

/// The capabilities open to the model given `context`: expanding only while summaries are
/// left, relationships only of entities in the context, kinds only from `definitions` (the
/// kinds in the asker's reach); `result_limit` bounds every list.
pub fn build_capabilities(
    context: &QueryContext,
    definitions: &[String],
    result_limit: u32,
) -> Vec<InfoCapability> {
    let limit = u64::from(result_limit);
    let mut out = Vec::new();
    let expandable = context.expandable_entity_ids();
    if !expandable.is_empty() {
        let first = expandable[0].0;
        out.push(InfoCapability {
            id: CapabilityId::ExpandEntity,
            name: "Expand entity".into(),
            description: "The full record of an entity shown in brief: facts, state, place, \
                          and its relationships."
                .into(),
            parameters: vec![param(
                "entity_id",
                "The entity to expand",
                ParameterType::EntityId,
                true,
                ParameterConstraints {
                    valid_entity_ids: expandable.clone(),
                    ..Default::default()
                },
            )],
            example: Some(format!(
                r#"{{"capability_id": "EXPAND_ENTITY", "params": {{"entity_id": {first}}}, "reason": "..."}}"#
            )),
        });
        out.push(InfoCapability {
            id: CapabilityId::ExpandEntities,
            name: "Expand entities".into(),
            description: "The full records of several entities shown in brief.".into(),
            parameters: vec![ids_param(
                "entity_ids",
                "The entities to expand",
                expandable,
                limit,
            )],
            example: Some(format!(
                r#"{{"capability_id": "EXPAND_ENTITIES", "params": {{"entity_ids": [{first}]}}, "reason": "..."}}"#
            )),
        });
    }
    out.push(InfoCapability {
        id: CapabilityId::SearchEntities,
        name: "Search entities".into(),
        description: "Entities whose names, aliases or facts match the words of a query; for \
                      what the context does not show yet."
            .into(),
        parameters: vec![
            param(
                "query",
                "Words to look for",
                ParameterType::String,
                true,
                ParameterConstraints {
                    max_length: Some(200),
                    ..Default::default()
                },
            ),
            limit_param(result_limit),
        ],
        example: Some(
            r#"{"capability_id": "SEARCH_ENTITIES", "params": {"query": "smuggler harbour"}, "reason": "..."}"#
                .into(),
        ),
    });
    out.push(InfoCapability {
        id: CapabilityId::GetEntityByName,
        name: "Get entity by name".into(),
        description: "An entity by its name or an alias (close spellings match too).".into(),
        parameters: vec![param(
            "name",
            "The name or alias",
            ParameterType::String,
            true,
            ParameterConstraints {
                max_length: Some(crate::log::MAX_NAME_CHARS as u64),
                ..Default::default()
            },
        )],
        example: Some(
            r#"{"capability_id": "GET_ENTITY_BY_NAME", "params": {"name": "Mira"}, "reason": "..."}"#
                .into(),
        ),
    });
    let all = context.all_entity_ids();
    if !all.is_empty() {
        let first = all[0].0;
        out.push(InfoCapability {
            id: CapabilityId::GetRelationships,
            name: "Get relationships".into(),
            description: "The directed relationships of entities of the context: outgoing (how \
                          they feel about others), incoming (how others feel about them) or \
                          both; with max_hops above 1, also the entities reached that far."
                .into(),
            parameters: vec![
                ids_param("entity_ids", "Whose relationships", all, limit),
                param(
                    "direction",
                    "incoming, outgoing or both (default both)",
                    ParameterType::Enum,
                    false,
                    ParameterConstraints {
                        enum_values: vec!["incoming".into(), "outgoing".into(), "both".into()],
                        ..Default::default()
                    },
                ),
                param(
                    "max_hops",
                    "How far to walk (default 1)",
                    ParameterType::Integer,
                    false,
                    ParameterConstraints {
                        min: Some(1),
                        max: Some(u64::from(MAX_RELATIONSHIP_HOPS)),
                        ..Default::default()
                    },
                ),
            ],
            example: Some(format!(
                r#"{{"capability_id": "GET_RELATIONSHIPS", "params": {{"entity_ids": [{first}], "direction": "both"}}, "reason": "..."}}"#
            )),
        });
    }
    out.push(InfoCapability {
        id: CapabilityId::ListEntityDefinitions,
        name: "List entity kinds".into(),
        description: "The kinds of entity there are (character, location, ...) and how many \
                      of each."
            .into(),
        parameters: vec![],
        example: Some(
            r#"{"capability_id": "LIST_ENTITY_DEFINITIONS", "params": {}, "reason": "..."}"#.into(),
        ),
    });
    if !definitions.is_empty() {
        out.push(InfoCapability {
            id: CapabilityId::GetEntitiesByDefinition,
            name: "Get entities by kind".into(),
            description: "The entities of one kind.".into(),
            parameters: vec![
                param(
                    "definition",
                    "The kind",
                    ParameterType::Enum,
                    true,
                    ParameterConstraints {
                        enum_values: definitions.to_vec(),
                        ..Default::default()
                    },
                ),
                limit_param(result_limit),
            ],
            example: Some(format!(
                r#"{{"capability_id": "GET_ENTITIES_BY_DEFINITION", "params": {{"definition": {}}}, "reason": "..."}}"#,
                Value::String(definitions[0].clone())
            )),
        });
    }
    out
}

impl InfoCapability {
    /// The JSON Schema of this capability's `params` (the subset of
    /// [`crate::update::schema_check`]), constraints included.
    pub fn params_schema(&self) -> Value {
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in &self.parameters {
            let c = &p.constraints;
            let mut s = Map::new();
            let ids = || -> Value {
                let mut id = json!({"type": "integer"});
                if !c.valid_entity_ids.is_empty() {
                    id["enum"] = json!(c.valid_entity_ids);
                }
                id
            };
            match p.kind {
                ParameterType::String => {
                    s.insert("type".into(), json!("string"));
                    s.insert("minLength".into(), json!(1));
                    if let Some(m) = c.max_length {
                        s.insert("maxLength".into(), json!(m));
                    }
                }
                ParameterType::Integer => {
                    s.insert("type".into(), json!("integer"));
                    if let Some(m) = c.min {
                        s.insert("minimum".into(), json!(m));
                    }
                    if let Some(m) = c.max {
                        s.insert("maximum".into(), json!(m));
                    }
                }
                ParameterType::EntityId => {
                    if let Value::Object(o) = ids() {
                        s = o;
                    }
                }
                ParameterType::EntityIds => {
                    s.insert("type".into(), json!("array"));
                    s.insert("minItems".into(), json!(1));
                    s.insert("items".into(), ids());
                    if let Some(m) = c.max_items {
                        s.insert("maxItems".into(), json!(m));
                    }
                }
                ParameterType::Enum => {
                    s.insert("type".into(), json!("string"));
                    s.insert("enum".into(), json!(c.enum_values));
                }
            }
            s.insert("description".into(), json!(p.description));
            props.insert(p.name.clone(), Value::Object(s));
            if p.required {
                required.push(p.name.clone());
            }
        }
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": required,
            "properties": props,
        })
    }

    /// The JSON Schema of a whole request for this capability.
    pub fn request_schema(&self) -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["capability_id", "params"],
            "properties": {
                "capability_id": {"type": "string", "const": self.id.as_str()},
                "params": self.params_schema(),
                "reason": {"type": "string", "maxLength": MAX_NOTE_CHARS},
            },
        })
    }
}

/// The capabilities as prompt text: one block each, with parameters, the values they may take,
/// and an example.
pub fn format_capabilities_for_prompt(capabilities: &[InfoCapability]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for c in capabilities {
        let _ = writeln!(s, "{}: {}", c.id.as_str(), c.description);
        for p in &c.parameters {
            let k = &p.constraints;
            let kind = match p.kind {
                ParameterType::String => "text",
                ParameterType::Integer => "integer",
                ParameterType::EntityId => "entity id",
                ParameterType::EntityIds => "list of entity ids",
                ParameterType::Enum => "one of the values",
            };
            let _ = write!(
                s,
                "  - {} ({kind}, {}): {}",
                p.name,
                if p.required { "required" } else { "optional" },
                p.description
            );
            if !k.valid_entity_ids.is_empty() {
                let ids: Vec<String> = k.valid_entity_ids.iter().map(|i| i.0.to_string()).collect();
                let _ = write!(s, "; ids: {}", ids.join(", "));
            }
            if !k.enum_values.is_empty() {
                let _ = write!(s, "; values: {}", k.enum_values.join(", "));
            }
            if let (Some(lo), Some(hi)) = (k.min, k.max) {
                let _ = write!(s, "; {lo} to {hi}");
            }
            s.push('\n');
        }
        if let Some(e) = &c.example {
            let _ = writeln!(s, "  example: {e}");
        }
    }
    s
}

/// The JSON Schema of the model's whole output, for constrained decoding: an answer (sources
/// among the context's ids), or, when `capabilities` is not empty, a NeedsMoreInfo whose
/// requests are each one of the capabilities with its constraints. (`anyOf` is used here for
/// backends; the engine checks the output piece by piece, with the same constraints.)
pub fn response_schema(context: &QueryContext, capabilities: &[InfoCapability]) -> Value {
    let answer = super::response::answer_schema(&context.all_entity_ids());
    if capabilities.is_empty() {
        return answer;
    }
    let mut more = super::response::needs_more_info_schema();
    more["properties"]["requests"]["items"] = json!({
        "anyOf": capabilities.iter().map(InfoCapability::request_schema).collect::<Vec<_>>(),
    });
    json!({"anyOf": [answer, more]})
}

/// A request checked against its capability, ready to fulfil.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Checked {
    Expand(Vec<EntityId>),
    Search {
        query: String,
        limit: usize,
    },
    ByName(String),
    Relationships {
        ids: Vec<EntityId>,
        direction: Direction,
        max_hops: u32,
    },
    ListDefinitions,
    ByDefinition {
        definition: String,
        limit: usize,
    },
}

/// Checks `request` against the capabilities offered: a known capability, among those
/// offered, with parameters that keep its constraints. The error lists what is wrong.
pub fn validate_info_request(
    request: &InfoRequest,
    capabilities: &[InfoCapability],
) -> Result<(), Vec<String>> {
    check_request(request, capabilities, u32::MAX).map(drop)
}

pub(crate) fn check_request(
    request: &InfoRequest,
    capabilities: &[InfoCapability],
    result_limit: u32,
) -> Result<Checked, Vec<String>> {
    let name = &request.capability_id;
    let Some(id) = CapabilityId::parse(name) else {
        return Err(vec![format!("{name:?} is not a capability")]);
    };
    let Some(cap) = capabilities.iter().find(|c| c.id == id) else {
        return Err(vec![format!("{name} is not offered now")]);
    };
    let at = format!("{name}.params");
    schema_check::validate(&request.params, &cap.params_schema(), &at).map_err(|e| vec![e])?;
    let p = &request.params;
    let ids = |key: &str| -> Vec<EntityId> {
        match p.get(key) {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_u64).map(EntityId).collect(),
            Some(v) => v.as_u64().map(EntityId).into_iter().collect(),
            None => Vec::new(),
        }
    };
    let text = |key: &str| p.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let number = |key: &str, default: u64| p.get(key).and_then(Value::as_u64).unwrap_or(default);
    let limit = number("limit", u64::from(result_limit)) as usize;
    Ok(match id {
        CapabilityId::ExpandEntity => Checked::Expand(ids("entity_id")),
        CapabilityId::ExpandEntities => {
            let mut v = ids("entity_ids");
            v.dedup();
            Checked::Expand(v)
        }
        CapabilityId::SearchEntities => Checked::Search {
            query: text("query"),
            limit,
        },
        CapabilityId::GetEntityByName => Checked::ByName(text("name")),
        CapabilityId::GetRelationships => Checked::Relationships {
            ids: ids("entity_ids"),
            direction: match p.get("direction").and_then(Value::as_str) {
                Some("incoming") => Direction::Incoming,
                Some("outgoing") => Direction::Outgoing,
                _ => Direction::Both,
            },
            max_hops: number("max_hops", 1) as u32,
        },
        CapabilityId::ListEntityDefinitions => Checked::ListDefinitions,
        CapabilityId::GetEntitiesByDefinition => Checked::ByDefinition {
            definition: text("definition"),
            limit,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::context::EntitySummary;

    fn context() -> QueryContext {
        let mut c = QueryContext::new(None);
        for (id, name) in [(3, "Mira"), (5, "Tobias")] {
            c.add_entity_summary(EntitySummary {
                id: EntityId(id),
                name: name.into(),
                definitions: vec![],
                summary: String::new(),
            });
        }
        c
    }

    fn request(cap: &str, params: Value) -> InfoRequest {
        InfoRequest {
            capability_id: cap.into(),
            params,
            reason: "because".into(),
        }
    }

    #[test]
    fn capabilities_follow_the_context_and_constrain_ids() {
        let c = context();
        let caps = build_capabilities(&c, &["character".into()], 20);
        let ids: Vec<CapabilityId> = caps.iter().map(|c| c.id).collect();
        assert_eq!(ids, CapabilityId::ALL.to_vec());
        for cap in &caps {
            schema_check::check_schema(&cap.params_schema(), cap.id.as_str()).unwrap();
        }
        let ok = |r: InfoRequest| check_request(&r, &caps, 20);
        assert_eq!(
            ok(request("EXPAND_ENTITY", json!({"entity_id": 3}))).unwrap(),
            Checked::Expand(vec![EntityId(3)])
        );
        for (bad, says) in [
            (request("EXPAND_ENTITY", json!({"entity_id": 4})), "one of"),
            (
                request("EXPAND_ENTITIES", json!({"entity_ids": []})),
                "fewer than 1",
            ),
            (
                request(
                    "GET_RELATIONSHIPS",
                    json!({"entity_ids": [3], "direction": "sideways"}),
                ),
                "one of",
            ),
            (
                request(
                    "GET_RELATIONSHIPS",
                    json!({"entity_ids": [3], "max_hops": 9}),
                ),
                "above",
            ),
            (
                request(
                    "GET_ENTITIES_BY_DEFINITION",
                    json!({"definition": "dragon"}),
                ),
                "one of",
            ),
            (
                request("SEARCH_ENTITIES", json!({"query": "x", "limit": 21})),
                "above",
            ),
            (request("SEARCH_ENTITIES", json!({"q": "x"})), "missing"),
            (request("READ_MINDS", json!({})), "not a capability"),
        ] {
            let e = ok(bad.clone()).unwrap_err().join("; ");
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let mut all = context();
        all.mark_expanded(EntityId(3));
        all.mark_expanded(EntityId(5));
        let fewer = build_capabilities(&all, &[], 20);
        assert!(!fewer.iter().any(|c| c.id == CapabilityId::ExpandEntity));
        assert!(
            !fewer
                .iter()
                .any(|c| c.id == CapabilityId::GetEntitiesByDefinition)
        );
        let e = check_request(
            &request("EXPAND_ENTITY", json!({"entity_id": 3})),
            &fewer,
            20,
        )
        .unwrap_err();
        assert!(e[0].contains("not offered"));
        let prompt = format_capabilities_for_prompt(&caps);
        assert!(prompt.contains("GET_RELATIONSHIPS") && prompt.contains("ids: 3, 5"));
        let schema = response_schema(&c, &caps);
        assert_eq!(schema["anyOf"].as_array().map(Vec::len), Some(2));
    }
}
