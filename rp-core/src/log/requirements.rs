//! Requirements (docs/requirements.md): reading them from JSON, once, for Rust, C, Python and
//! world files; whether one is pending; and the check every event passes before it is applied,
//! so no batch, replay or binding can make a guarded transition while its requirement is
//! pending.

use super::{Event, Named, World, hour_of};
use crate::error::{Error, Result};
use crate::facts::{Condition, Context, RegexCache, SeededDraws};
use crate::model::*;
use serde::Deserialize;

impl World {
    /// Every requirement, by id, with whether it was announced.
    pub fn requirements(&self) -> impl Iterator<Item = &HeldRequirement> + '_ {
        self.requirements.values()
    }

    /// Requirement `id`.
    pub fn requirement(&self, id: &str) -> Option<&Requirement> {
        self.requirements.get(id).map(|h| &h.requirement)
    }

    /// Whether `r` is pending now: its condition is false (or cannot be evaluated) with `self`
    /// reading its subject's facts. A requirement whose subject was removed is not pending.
    /// `random()` draws from the world's generator without advancing it, so the answer is the
    /// same for the same world.
    pub fn requirement_pending(&self, r: &Requirement) -> bool {
        let mut regexes = RegexCache::default();
        let (name, present, compiled) = match r.subject {
            Some(s) => {
                let Some(e) = self.entity(s) else {
                    return false;
                };
                let compiled = match self.sheet(s) {
                    Some(sheet) => Condition::compile_for(&r.condition, sheet, &mut regexes),
                    None => Condition::compile(&r.condition, &mut regexes),
                };
                (e.name.as_str(), self.present_names(s), compiled)
            }
            None => (
                "",
                Vec::new(),
                Condition::compile(&r.condition, &mut regexes),
            ),
        };
        let Ok(condition) = compiled else {
            return true;
        };
        let ctx = Context {
            name,
            present: &present,
            hour: hour_of(self.now),
            ..Context::default()
        };
        let seed = self.meta().map_or(0, |m| m.settings.seed);
        let mut draws = SeededDraws::new(seed, self.draws_taken());
        !matches!(condition.test(&ctx, &mut draws), Ok(true))
    }

    /// The requirements pending now, by id.
    pub fn pending_requirements(&self) -> impl Iterator<Item = &Requirement> + '_ {
        self.requirements
            .values()
            .map(|h| &h.requirement)
            .filter(|r| self.requirement_pending(r))
    }

    /// The pending requirements `entity`'s prompt warns of: world-wide ones, and those whose
    /// subject is within earshot of it (itself included).
    pub fn pending_requirements_for(&self, entity: EntityId) -> Vec<&Requirement> {
        let near = self.within_earshot(entity);
        self.pending_requirements()
            .filter(|r| r.subject.is_none_or(|s| near.contains(s)))
            .collect()
    }

    /// Refuses host action `name` (of `subject`, if given) while a requirement guarding it is
    /// pending: a [`Error::RequirementUnmet`]. A requirement with a subject guards the action
    /// of that subject, or of no one in particular.
    pub fn check_action(&self, name: &str, subject: Option<EntityId>) -> Result<()> {
        match self
            .pending_guarding(|r, g| {
                matches!(g, Guard::Action { name: n } if n == name)
                    && (r.subject.is_none() || subject.is_none() || r.subject == subject)
            })
            .next()
        {
            Some(r) => Err(unmet(r, format!("the action {name:?}"))),
            None => Ok(()),
        }
    }

    /// The pending requirements with a guard that `matches`.
    fn pending_guarding<'a>(
        &'a self,
        matches: impl Fn(&Requirement, &Guard) -> bool + 'a,
    ) -> impl Iterator<Item = &'a Requirement> + 'a {
        self.requirements
            .values()
            .map(|h| &h.requirement)
            .filter(move |r| r.guards.iter().any(|g| matches(r, g)))
            .filter(|r| self.requirement_pending(r))
    }

    /// Refuses `event` if it makes a transition a pending requirement guards (checked on the
    /// world as the event finds it, so a batch that first meets the requirement may then move).
    pub(super) fn check_guards(&self, event: &Event) -> Result<()> {
        if self.requirements.is_empty() {
            return Ok(());
        }
        let refused =
            |transition: String, matches: &dyn Fn(&Requirement, &Guard) -> bool| match self
                .pending_guarding(matches)
                .next()
            {
                Some(r) => Err(unmet(r, transition)),
                None => Ok(()),
            };
        match event {
            Event::ActivityChanged { entity, activity } => {
                let Some(from) = self
                    .entity(*entity)
                    .and_then(|e| e.activity.position.as_ref())
                    .map(|p| p.container)
                else {
                    return Ok(());
                };
                let to = activity.position.as_ref().map(|p| p.container);
                let name = self.entity(*entity).map_or("", |e| e.name.as_str());
                refused(format!("{name} leaving"), &|r, g| {
                    matches!(g, Guard::Leave { container }
                        if r.subject == Some(*entity)
                            && self.within(from, *container)
                            && !to.is_some_and(|t| self.within(t, *container)))
                })
            }
            Event::ScopedEventStarted { id, .. } => refused(
                format!("starting scoped event {id}"),
                &|_, g| matches!(g, Guard::StartEvent { event } if event.is_none_or(|e| e == *id)),
            ),
            Event::ScopedEventClosed {
                id,
                status: EventStatus::Completed,
                ..
            } => refused(
                format!("completing scoped event {id}"),
                &|_, g| matches!(g, Guard::CompleteEvent { event } if event.is_none_or(|e| e == *id)),
            ),
            Event::TimeSkipped { .. } => refused("a time skip".to_owned(), &|_, g| {
                matches!(g, Guard::TimeSkip)
            }),
            Event::SceneClosed { id, .. } => {
                let witnesses = self.scene(*id).map(|s| s.witnesses.clone());
                refused(format!("closing scene {id}"), &|r, g| {
                    matches!(g, Guard::SceneClose)
                        && r.subject
                            .is_none_or(|s| witnesses.as_ref().is_none_or(|w| w.contains(s)))
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether container `c` is `outer` or inside it.
    fn within(&self, c: ContainerId, outer: ContainerId) -> bool {
        let mut at = Some(c);
        let mut steps = 0;
        while let Some(x) = at {
            if x == outer {
                return true;
            }
            steps += 1;
            if steps > 10_000 {
                return false;
            }
            at = self.container(x).and_then(|c| c.parent);
        }
        false
    }

    /// The events that bring the world's announcements up to date: for each requirement
    /// pending and not announced, a system line to those it concerns; for each announced one
    /// now met, a note that its next becoming pending is announced again. Empty when nothing
    /// changed. Ids of the lines are taken from `next_id` on.
    pub fn requirement_announcements(&self) -> Vec<Event> {
        let mut out = Vec::new();
        let mut next = self.next_id();
        for h in self.requirements.values() {
            let r = &h.requirement;
            let pending = self.requirement_pending(r);
            if pending && !h.announced {
                out.push(Event::RequirementAnnounced {
                    id: r.id.clone(),
                    line: Some(SystemLine {
                        id: next,
                        text: announcement_text(r),
                        audience: self.announcement_audience(r),
                        at: self.now,
                    }),
                });
                next += 1;
            } else if !pending && h.announced {
                out.push(Event::RequirementAnnounced {
                    id: r.id.clone(),
                    line: None,
                });
            }
        }
        out
    }

    /// Who an announcement of `r` reaches: those within earshot of its subject; everyone for
    /// a world-wide one.
    pub(super) fn announcement_audience(&self, r: &Requirement) -> Option<Vec<EntityId>> {
        r.subject
            .map(|s| self.within_earshot(s).iter().collect::<Vec<_>>())
    }

    /// Reads a requirement from its JSON form (docs/requirements.md): names resolved, the
    /// condition compiled, every value checked.
    ///
    /// ```json
    /// {"id": "fare", "name": "Fare", "subject": "Wren", "condition": "self.fare_paid",
    ///  "guards": [{"leave": "The Jetty"}, {"time_skip": true}],
    ///  "text": "Wren must pay the ferryman before leaving the jetty."}
    /// ```
    pub fn requirement_from_value(&self, value: serde_json::Value) -> Result<Requirement> {
        if !value.is_object() {
            return Err(Error::invalid(
                "requirement",
                "a requirement is a JSON object",
            ));
        }
        let input: RequirementInput = crate::json::from_value("requirement", value)?;
        let subject = match &input.subject {
            None => None,
            Some(NameInput::Id(id)) => Some(self.resolve_entity(Named::Id(*id))?),
            Some(NameInput::Text(t)) => Some(self.resolve_entity(Named::Text(t))?),
        };
        let guards = input
            .guards
            .iter()
            .map(|g| g.resolve(self))
            .collect::<Result<Vec<_>>>()?;
        let r = Requirement {
            id: input.id,
            name: input.name,
            subject,
            condition: input.condition,
            guards,
            text: input.text,
        };
        self.check_requirement(&r)?;
        Ok(r)
    }

    /// Whether `r` can be added: a fresh id, texts within bounds, a subject that exists, a
    /// condition that compiles for it (and reads no `self` without one), guards naming what
    /// exists (a `leave` needs a subject).
    pub(crate) fn check_requirement(&self, r: &Requirement) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid("requirement", reason));
        check_key(&r.id)?;
        check_words("name", &r.name, MAX_REQUIREMENT_NAME_CHARS)?;
        check_words("text", &r.text, MAX_REQUIREMENT_TEXT_CHARS)?;
        if r.condition.chars().count() > MAX_REQUIREMENT_TEXT_CHARS {
            return bad(format!(
                "the condition is longer than {MAX_REQUIREMENT_TEXT_CHARS} characters"
            ));
        }
        if self.requirements.contains_key(&r.id) {
            return Err(Error::conflict(format!(
                "a requirement {:?} exists already; remove it first",
                r.id
            )));
        }
        if self.requirements.len() >= MAX_REQUIREMENTS {
            return bad(format!(
                "the world holds {MAX_REQUIREMENTS} requirements; remove one first"
            ));
        }
        let mut regexes = RegexCache::default();
        match r.subject {
            Some(s) => {
                if self.entity(s).is_none() {
                    return Err(Error::not_found("entity", s));
                }
                super::compile_condition(self, s, &r.condition)?;
            }
            None => {
                Condition::compile(&r.condition, &mut regexes)
                    .map_err(|e| e.to_error(&r.condition, "requirement condition"))?;
                if reads_self(&r.condition) {
                    return bad(
                        "a world-wide requirement (no subject) has no `self` to read; give it a subject"
                            .into(),
                    );
                }
            }
        }
        if r.guards.is_empty() {
            return bad("it guards nothing; give at least one guard".into());
        }
        if r.guards.len() > MAX_GUARDS {
            return bad(format!("more than {MAX_GUARDS} guards"));
        }
        for (i, g) in r.guards.iter().enumerate() {
            if r.guards[..i].contains(g) {
                return bad(format!("the guard {g:?} is listed twice"));
            }
            match g {
                Guard::Leave { container } => {
                    if self.container(*container).is_none() {
                        return Err(Error::not_found("container", container));
                    }
                    if r.subject.is_none() {
                        return bad("a leave guard needs a subject (who leaves)".into());
                    }
                }
                Guard::StartEvent { event: Some(e) } | Guard::CompleteEvent { event: Some(e) }
                    if self.scoped_event(*e).is_none() =>
                {
                    return Err(Error::not_found("scoped event", e));
                }
                Guard::Action { name } => check_key(name)?,
                _ => {}
            }
        }
        Ok(())
    }
}

/// The error refusing `transition` because `r` is pending.
fn unmet(r: &Requirement, transition: String) -> Error {
    Error::RequirementUnmet {
        id: r.id.clone(),
        name: r.name.clone(),
        text: r.text.clone(),
        transition,
    }
}

/// Why a prompt carries a pending requirement's warning (its piece's `why`; the piece is never
/// trimmed).
pub const DECISION_REQUIRED: &str = "a pending requirement of someone present";

/// The warning the prompts of those concerned carry, and the system line's text.
pub fn announcement_text(r: &Requirement) -> String {
    format!("⚠️ DECISION REQUIRED: {}: {}", r.name, r.text)
}

/// Whether `source` reads `self` (a word `self` outside string literals, roughly: a condition
/// with `"self"` in a string is refused too, which a world-wide requirement has no need of).
fn reads_self(source: &str) -> bool {
    let b = source.as_bytes();
    source.match_indices("self").any(|(i, _)| {
        let before = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let j = i + 4;
        let after = j >= b.len() || !(b[j].is_ascii_alphanumeric() || b[j] == b'_');
        before && after
    })
}

fn check_key(key: &str) -> Result<()> {
    super::check_name("requirement", key)?;
    if key.chars().count() > MAX_REQUIREMENT_NAME_CHARS {
        return Err(Error::invalid(
            "requirement",
            format!("{key:?} is longer than {MAX_REQUIREMENT_NAME_CHARS} characters"),
        ));
    }
    Ok(())
}

fn check_words(what: &str, text: &str, max: usize) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::invalid(
            "requirement",
            format!("the {what} is empty"),
        ));
    }
    if text.chars().count() > max {
        return Err(Error::invalid(
            "requirement",
            format!("the {what} is longer than {max} characters"),
        ));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(Error::invalid(
            "requirement",
            format!("the {what} has control characters"),
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementInput {
    id: String,
    name: String,
    #[serde(default)]
    subject: Option<NameInput>,
    condition: String,
    guards: Vec<GuardInput>,
    text: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NameInput {
    Id(u64),
    Text(String),
}

/// An event: its id or name; `true`: any.
#[derive(Deserialize)]
#[serde(untagged)]
enum EventInput {
    Any(bool),
    Id(u64),
    Text(String),
}

/// One guard: an object with one key (`{"leave": "The Jetty"}`, `{"start_event": true}`,
/// `{"complete_event": "the crossing"}`, `{"time_skip": true}`, `{"scene_close": true}`,
/// `{"action": "board"}`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardInput {
    #[serde(default)]
    leave: Option<NameInput>,
    #[serde(default)]
    start_event: Option<EventInput>,
    #[serde(default)]
    complete_event: Option<EventInput>,
    #[serde(default)]
    time_skip: Option<bool>,
    #[serde(default)]
    scene_close: Option<bool>,
    #[serde(default)]
    action: Option<String>,
}

impl GuardInput {
    fn resolve(&self, world: &World) -> Result<Guard> {
        let event = |e: &EventInput| -> Result<Option<ScopedEventId>> {
            match e {
                EventInput::Any(true) => Ok(None),
                EventInput::Any(false) => Err(Error::invalid(
                    "requirement",
                    "an event guard names an event, or is true for any",
                )),
                EventInput::Id(id) => {
                    let id = ScopedEventId(*id);
                    world
                        .scoped_event(id)
                        .map(|e| Some(e.id))
                        .ok_or_else(|| Error::not_found("scoped event", id))
                }
                EventInput::Text(t) => world
                    .scoped_events()
                    .find(|e| e.name == *t || e.name.eq_ignore_ascii_case(t))
                    .map(|e| Some(e.id))
                    .ok_or_else(|| Error::not_found("scoped event", t)),
            }
        };
        let set = [
            self.leave.is_some(),
            self.start_event.is_some(),
            self.complete_event.is_some(),
            self.time_skip.is_some(),
            self.scene_close.is_some(),
            self.action.is_some(),
        ];
        if set.iter().filter(|x| **x).count() != 1
            || self.time_skip == Some(false)
            || self.scene_close == Some(false)
        {
            return Err(Error::invalid(
                "requirement",
                "a guard is one of {\"leave\": container}, {\"start_event\": event or true}, {\"complete_event\": event or true}, {\"time_skip\": true}, {\"scene_close\": true}, {\"action\": name}",
            ));
        }
        Ok(if let Some(c) = &self.leave {
            Guard::Leave {
                container: world.resolve_container(match c {
                    NameInput::Id(id) => Named::Id(*id),
                    NameInput::Text(t) => Named::Text(t),
                })?,
            }
        } else if let Some(e) = &self.start_event {
            Guard::StartEvent { event: event(e)? }
        } else if let Some(e) = &self.complete_event {
            Guard::CompleteEvent { event: event(e)? }
        } else if self.time_skip.is_some() {
            Guard::TimeSkip
        } else if self.scene_close.is_some() {
            Guard::SceneClose
        } else {
            Guard::Action {
                name: self.action.clone().unwrap_or_default(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::reads_self;

    #[test]
    fn self_is_a_word() {
        assert!(reads_self("self.x"));
        assert!(reads_self("!self.paid"));
        assert!(!reads_self("myself == 1"));
        assert!(!reads_self("time.hour > 3"));
    }
}
