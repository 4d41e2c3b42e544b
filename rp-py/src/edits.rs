//! Editing the world from Python: the events behind `World.append` and the
//! named edits (`create_entity`, `move_entity`, `set_edge`, ...), and the
//! host's own state-update reports (`World.apply_reports`).
//!
//! Every edit is a batch of events that `Engine::append` validates in order,
//! commits in one transaction and only then applies: an edit the world
//! refuses raises and changes nothing. The named edits only compose events
//! from the current state (a move keeps the posture, an edge edit keeps what
//! is not given), so what they can do is exactly what `append` can.
//!
//! Events cross as dicts of rp-core's one JSON shape of an event (its kind
//! as the key of its fields: ``{"time_advanced": {"to": 60000}}``; read back
//! by `World.events` with its seq: ``{"seq": 41, "event": {...}}``), read
//! strictly by rp-core (`Event::list_from_json_values`).

use pyo3::prelude::*;
use rp_core::model::{Activity, ContainerProperties, FactSheet, Position};
use rp_core::{ContainerId, Engine, EntityId, EntityState, Event, Seq};
use serde_json::Value;

use crate::model::{Named, container_id, entity_id};

fn invalid(what: &'static str, reason: impl Into<String>) -> rp_core::Error {
    rp_core::Error::Invalid {
        what,
        reason: reason.into(),
    }
}

/// A slot as `create_container` takes it: a name, or a name and a capacity.
#[derive(FromPyObject)]
pub(crate) enum SlotArg {
    /// A slot with no limit.
    Name(String),
    /// A slot and how many fit (None: no limit).
    Sized(String, Option<u32>),
}

fn slots(args: Vec<SlotArg>) -> Vec<rp_core::Slot> {
    args.into_iter()
        .map(|arg| match arg {
            SlotArg::Name(name) => rp_core::Slot {
                name,
                capacity: None,
            },
            SlotArg::Sized(name, capacity) => rp_core::Slot { name, capacity },
        })
        .collect()
}

/// An optional text where "" means none.
fn clearable(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// What `World.create_entity` was given.
pub(crate) struct NewEntity {
    pub name: String,
    pub key: Option<String>,
    pub aliases: Vec<String>,
    pub facts: String,
    pub host_controlled: bool,
    pub container: Option<Named>,
    pub slot: Option<String>,
    pub posture: Option<String>,
    pub mood: Option<String>,
    pub goals: Vec<String>,
    pub status: Option<String>,
}

/// Creates an entity (and places it, when a container is given) in one
/// commit; returns its id.
pub(crate) fn create_entity(engine: &mut Engine, new: NewEntity) -> rp_core::Result<EntityId> {
    let world = engine.world();
    let id = EntityId(world.next_id());
    let mut events = vec![Event::EntityCreated {
        id,
        key: new.key,
        name: new.name,
        aliases: new.aliases,
        facts: FactSheet::from_text(&new.facts),
        host_controlled: new.host_controlled,
        state: EntityState {
            mood: new.mood,
            goals: new.goals,
            status: new.status,
        },
    }];
    match new.container {
        Some(container) => events.push(Event::ActivityChanged {
            entity: id,
            activity: Activity {
                position: Some(Position {
                    container: container_id(world, &container)?,
                    slot: new.slot,
                }),
                posture: new.posture,
                ..Activity::default()
            },
        }),
        None if new.slot.is_some() || new.posture.is_some() => {
            return Err(invalid(
                "entity",
                "a slot or a posture needs a container to be in",
            ));
        }
        None => {}
    }
    engine.append(events)?;
    Ok(id)
}

/// Edits an entity's identity; `None` leaves a field as it is.
pub(crate) fn edit_entity(
    engine: &mut Engine,
    entity: &Named,
    name: Option<String>,
    aliases: Option<Vec<String>>,
    facts: Option<String>,
    host_controlled: Option<bool>,
) -> rp_core::Result<EntityId> {
    let id = entity_id(engine.world(), entity)?;
    if name.is_none() && aliases.is_none() && facts.is_none() && host_controlled.is_none() {
        return Ok(id);
    }
    engine.append(vec![Event::EntityEdited {
        id,
        name,
        aliases,
        facts: facts.map(|text| FactSheet::from_text(&text)),
        host_controlled,
    }])?;
    Ok(id)
}

/// Replaces parts of an entity's mood, goals and status ("" clears mood or
/// status; `None` keeps).
pub(crate) fn set_entity_state(
    engine: &mut Engine,
    entity: &Named,
    mood: Option<String>,
    goals: Option<Vec<String>>,
    status: Option<String>,
) -> rp_core::Result<EntityId> {
    let world = engine.world();
    let id = entity_id(world, entity)?;
    let mut state = world
        .entity(id)
        .map(|e| e.state.clone())
        .unwrap_or_default();
    if let Some(mood) = mood {
        state.mood = clearable(mood);
    }
    if let Some(goals) = goals {
        state.goals = goals;
    }
    if let Some(status) = status {
        state.status = clearable(status);
    }
    engine.append(vec![Event::EntityStateChanged { entity: id, state }])?;
    Ok(id)
}

/// Moves an entity to `container` (and `slot`), keeping the rest of its
/// activity; `posture` replaces its posture ("" clears it).
pub(crate) fn move_entity(
    engine: &mut Engine,
    entity: &Named,
    container: &Named,
    slot: Option<String>,
    posture: Option<String>,
) -> rp_core::Result<EntityId> {
    let world = engine.world();
    let id = entity_id(world, entity)?;
    let container = container_id(world, container)?;
    let mut activity = world
        .entity(id)
        .map(|e| e.activity.clone())
        .unwrap_or_default();
    activity.position = Some(Position { container, slot });
    if let Some(posture) = posture {
        activity.posture = clearable(posture);
    }
    engine.append(vec![Event::ActivityChanged {
        entity: id,
        activity,
    }])?;
    Ok(id)
}

/// Removes an entity, with its edges, group memberships and memories.
pub(crate) fn remove_entity(engine: &mut Engine, entity: &Named) -> rp_core::Result<Seq> {
    let id = entity_id(engine.world(), entity)?;
    engine.append(vec![Event::EntityRemoved { id }])
}

/// What `World.create_container` was given.
pub(crate) struct NewContainer {
    pub name: String,
    pub key: Option<String>,
    pub parent: Option<Named>,
    pub slots: Vec<SlotArg>,
    pub facts: String,
    pub public: bool,
    pub moving: bool,
    pub audible_range: u32,
}

/// Creates a container; returns its id.
pub(crate) fn create_container(
    engine: &mut Engine,
    new: NewContainer,
) -> rp_core::Result<ContainerId> {
    let world = engine.world();
    let id = ContainerId(world.next_id());
    let parent = new
        .parent
        .map(|parent| container_id(world, &parent))
        .transpose()?;
    engine.append(vec![Event::ContainerCreated {
        id,
        key: new.key,
        name: new.name,
        facts: FactSheet::from_text(&new.facts),
        parent,
        slots: slots(new.slots),
        properties: ContainerProperties {
            moving: new.moving,
            public: new.public,
            audible_range: new.audible_range,
        },
    }])?;
    Ok(id)
}

/// What `World.edit_container` was given: `None` keeps a field.
pub(crate) struct ContainerEdit {
    pub name: Option<String>,
    pub parent: Option<Named>,
    pub slots: Option<Vec<SlotArg>>,
    pub facts: Option<String>,
    pub public: Option<bool>,
    pub moving: Option<bool>,
    pub audible_range: Option<u32>,
}

/// Redefines a container from its current record and the fields given.
pub(crate) fn edit_container(
    engine: &mut Engine,
    container: &Named,
    edit: ContainerEdit,
) -> rp_core::Result<ContainerId> {
    let world = engine.world();
    let id = container_id(world, container)?;
    let Some(current) = world.container(id) else {
        return Err(rp_core::Error::NotFound {
            what: "container",
            id: id.0.to_string(),
        });
    };
    let parent = match edit.parent {
        Some(parent) => Some(container_id(world, &parent)?),
        None => current.parent,
    };
    let properties = ContainerProperties {
        moving: edit.moving.unwrap_or(current.properties.moving),
        public: edit.public.unwrap_or(current.properties.public),
        audible_range: edit
            .audible_range
            .unwrap_or(current.properties.audible_range),
    };
    let event = Event::ContainerEdited {
        id,
        name: edit.name.unwrap_or_else(|| current.name.clone()),
        facts: edit
            .facts
            .map_or_else(|| current.facts.clone(), |text| FactSheet::from_text(&text)),
        parent,
        slots: edit.slots.map_or_else(|| current.slots.clone(), slots),
        properties,
    };
    engine.append(vec![event])?;
    Ok(id)
}

/// Removes an empty container.
pub(crate) fn remove_container(engine: &mut Engine, container: &Named) -> rp_core::Result<Seq> {
    let id = container_id(engine.world(), container)?;
    engine.append(vec![Event::ContainerRemoved { id }])
}

/// What `World.set_edge` was given: `None` keeps a field (or takes the
/// neutral value of a new edge).
pub(crate) struct EdgeEdit {
    pub affinity: Option<f64>,
    pub trust: Option<f64>,
    pub summary: Option<String>,
    pub knowledge: Option<Vec<String>>,
    pub private_moments: Option<Vec<String>>,
    pub last_interaction: Option<i64>,
}

/// Creates or edits the edge `from → to`; returns its ends.
pub(crate) fn set_edge(
    engine: &mut Engine,
    from: &Named,
    to: &Named,
    edit: EdgeEdit,
) -> rp_core::Result<(EntityId, EntityId)> {
    let world = engine.world();
    let (from, to) = (entity_id(world, from)?, entity_id(world, to)?);
    let mut edge = world
        .edge(from, to)
        .cloned()
        .unwrap_or_else(|| rp_core::Edge::new(from, to));
    if let Some(affinity) = edit.affinity {
        edge.affinity = affinity;
    }
    if let Some(trust) = edit.trust {
        edge.trust = trust;
    }
    if let Some(summary) = edit.summary {
        edge.summary = summary;
    }
    if let Some(knowledge) = edit.knowledge {
        edge.knowledge = knowledge;
    }
    if let Some(moments) = edit.private_moments {
        edge.private_moments = moments;
    }
    if let Some(at) = edit.last_interaction {
        edge.last_interaction = Some(at);
    }
    engine.append(vec![Event::EdgeUpdated { edge }])?;
    Ok((from, to))
}

/// Removes the edge `from → to`.
pub(crate) fn remove_edge(engine: &mut Engine, from: &Named, to: &Named) -> rp_core::Result<Seq> {
    let world = engine.world();
    let (from, to) = (entity_id(world, from)?, entity_id(world, to)?);
    engine.append(vec![Event::EdgeRemoved { from, to }])
}

/// Why `World.apply_reports` refused: each report's reason (None: it was
/// valid), in order.
pub(crate) struct Refused {
    pub message: String,
    pub reasons: Vec<Option<String>>,
}

/// Judges the host's reports as a state-update pass would, against the
/// world with `present` present, and commits their changes (and the record
/// of the pass) when every one is valid. `Err(Ok(refused))` when a report is
/// refused (nothing is applied); `Err(Err(error))` for any other failure.
pub(crate) fn apply_reports(
    engine: &mut Engine,
    reports: Vec<Value>,
    present: Option<Vec<Named>>,
    step: f64,
) -> Result<Seq, Result<Refused, rp_core::Error>> {
    if !(step > 0.0 && step <= 1.0) {
        return Err(Err(invalid("step", format!("{step} is outside (0, 1]"))));
    }
    let world = engine.world();
    let present: rp_core::WitnessSet = match present {
        Some(named) => named
            .iter()
            .map(|n| entity_id(world, n))
            .collect::<Result<_, _>>()
            .map_err(Err)?,
        None => world.entities().map(|e| e.id).collect(),
    };
    let answer = serde_json::json!({ "reports": reports }).to_string();
    let pass = rp_core::update::Pass {
        present: &present,
        lines: &[],
        remembered: false,
        step,
        now: world.now(),
    };
    let mut scratch = world.clone();
    let verdict = rp_core::update::judge_answer(&mut scratch, &pass, &[], &answer);
    if !verdict.problems.is_empty() {
        return Err(Ok(Refused {
            message: verdict.problems.join("; "),
            reasons: verdict.reports.into_iter().map(|r| r.rejected).collect(),
        }));
    }
    let mut events = verdict.events;
    events.push(Event::ReportsJudged {
        reports: verdict.reports,
    });
    engine.append(events).map_err(Err)
}
