//! The host's calls for requirements (docs/requirements.md): adding one, removing it, reading
//! them with whether each is pending, checking a host action; and the announcements every
//! commit carries when it makes a requirement pending (one system line each time). The JSON
//! form of a requirement is read by the log ([`World::requirement_from_value`]), once, for
//! Rust, C, Python and world files alike.

use super::Engine;
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::model::{EntityId, Requirement};
use serde::Serialize;

/// A requirement as read now: the requirement, whether it is pending, and whether its being
/// pending was announced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequirementView {
    /// The requirement.
    pub requirement: Requirement,
    /// Its condition is false now: its guarded transitions are refused.
    pub pending: bool,
    /// A system line announced it pending (since it was added or last met).
    pub announced: bool,
}

impl Engine {
    /// Adds a requirement read from its JSON form (docs/requirements.md):
    ///
    /// ```json
    /// {"id": "fare", "name": "Fare", "subject": "Wren", "condition": "self.fare_paid",
    ///  "guards": [{"leave": "The Jetty"}, {"time_skip": true}],
    ///  "text": "Wren must pay the ferryman before leaving the jetty."}
    /// ```
    ///
    /// If it is pending, the same commit announces it (a system line to those concerned).
    /// Refused, changing nothing, when the JSON is not a requirement, the id is taken, a name
    /// is unknown (`not_found`) or the condition does not compile (`fact_syntax`).
    pub fn add_requirement(&mut self, requirement: &str) -> Result<Requirement> {
        let value = crate::json::json_value("requirement", requirement)?;
        self.add_requirement_value(value)
    }

    /// [`Engine::add_requirement`] of a JSON value already parsed (Python's dicts, world
    /// files).
    pub fn add_requirement_value(&mut self, requirement: serde_json::Value) -> Result<Requirement> {
        let requirement = self.world().requirement_from_value(requirement)?;
        self.append(vec![Event::RequirementAdded {
            requirement: requirement.clone(),
        }])?;
        Ok(requirement)
    }

    /// Removes requirement `id` (recorded; a rewind brings it back). An unknown id is a
    /// `not_found` error.
    pub fn remove_requirement(&mut self, id: &str) -> Result<()> {
        if self.world().requirement(id).is_none() {
            return Err(Error::not_found("requirement", id));
        }
        self.append(vec![Event::RequirementRemoved { id: id.to_owned() }])?;
        Ok(())
    }

    /// Every requirement, by id, with whether it is pending now.
    pub fn requirements(&self) -> Vec<RequirementView> {
        let world = self.world();
        world
            .requirements()
            .map(|h| RequirementView {
                requirement: h.requirement.clone(),
                pending: world.requirement_pending(&h.requirement),
                announced: h.announced,
            })
            .collect()
    }

    /// Checks host action `name` (of `subject`, if given): `Err` with
    /// [`crate::ErrorKind::RequirementUnmet`] (the requirement's id, name and text) while a
    /// requirement guarding it (`{"action": name}`) is pending. Changes nothing.
    pub fn check_action(&self, name: &str, subject: Option<EntityId>) -> Result<()> {
        self.world().check_action(name, subject)
    }

    /// Whether `events` may call for announcements: the world has requirements or they add
    /// one (and there are events).
    pub(super) fn announces(&self, events: &[Event]) -> bool {
        let adds = |e: &Event| matches!(e, Event::RequirementAdded { .. });
        !events.is_empty()
            && (self.world.requirements().next().is_some() || events.iter().any(adds))
    }

    /// Adds to `events` the announcements the world after them calls for
    /// ([`World::requirement_announcements`]), so that a commit that makes a requirement
    /// pending announces it in the same transaction. `applied` is the world after `events`
    /// with the epoch it was built at, if the caller has it (it is brought up to date too).
    /// Nothing to do, and no cost, in a world without requirements.
    pub(super) fn add_announcements(
        &self,
        events: &mut Vec<Event>,
        applied: Option<&mut (World, u64)>,
    ) -> Result<()> {
        if !self.announces(events) {
            return Ok(());
        }
        let extra = match applied.filter(|(w, epoch)| {
            *epoch == self.epoch && w.seq() == self.world.seq() + events.len() as u64
        }) {
            Some((next, _)) => {
                let extra = next.requirement_announcements();
                for e in &extra {
                    next.apply(e)?;
                }
                extra
            }
            None => {
                let mut next = self.world.clone();
                for e in events.iter() {
                    next.apply(e)?;
                }
                next.requirement_announcements()
            }
        };
        events.extend(extra);
        Ok(())
    }
}
