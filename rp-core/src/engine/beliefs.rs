//! The host's calls for beliefs about people (docs/beliefs.md): reading what a character
//! believes at any time, recording a belief, and mentioning a person who is only talked about.
//! The host's JSON form of a belief is read here, once, for Rust, C and Python alike.

use super::Engine;
use crate::error::{Error, Result};
use crate::log::{BeliefView, Event, Named};
use crate::model::{BeliefObservation, BeliefSource, EntityId, FactSheet, Feeling, Millis, Seq};
use serde::Deserialize;

/// An entity as the host's JSON names it: an id, or a key, name or alias.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Who {
    Id(u64),
    Text(String),
}

impl Who {
    fn resolve(&self, engine: &Engine) -> Result<EntityId> {
        engine.world().resolve_entity(match self {
            Who::Id(id) => Named::Id(*id),
            Who::Text(t) => Named::Text(t),
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum SourceInput {
    Observed,
    Inferred,
    Host,
    ToldBy(Who),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeelingInput {
    toward: Who,
    sentiment: f64,
    #[serde(default)]
    text: String,
}

/// A belief as a host gives it in JSON (see [`Engine::observe_belief_value`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BeliefInput {
    observer: Who,
    about: Who,
    #[serde(default)]
    mood: Option<String>,
    #[serde(default)]
    energy: Option<f64>,
    #[serde(default)]
    availability: Option<f64>,
    #[serde(default)]
    traits: Vec<String>,
    #[serde(default)]
    feelings: Vec<FeelingInput>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    source: Option<SourceInput>,
}

impl Engine {
    /// What `observer` believes about each person at `now`, each aspect with its confidence at
    /// that time (see [`crate::World::beliefs_of`]). Any `now` may be asked. Changes nothing;
    /// an unknown observer is a `not_found` error.
    pub fn beliefs(&self, observer: EntityId, now: Millis) -> Result<Vec<BeliefView>> {
        if self.world().entity(observer).is_none() {
            return Err(Error::not_found("entity", observer.0));
        }
        Ok(self.world().beliefs_of(observer, now))
    }

    /// Records a belief at `now` (never before the world's clock; the clock moves to `now`):
    /// `observation.at` is set to `now`. Refused, changing nothing, when an entity does not
    /// exist, a value is out of range or a text too long (docs/beliefs.md).
    pub fn observe_belief(
        &mut self,
        mut observation: BeliefObservation,
        now: Millis,
    ) -> Result<Seq> {
        self.check_belief_now(now, "observe_belief")?;
        observation.at = now;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::BeliefObserved { observation });
        self.append(events)
    }

    /// Records a belief the host gives as a JSON object (what C and Python hand in):
    ///
    /// ```json
    /// {"observer": "Tobias", "about": 3, "mood": "tired", "energy": 0.3, "availability": 0.5,
    ///  "traits": ["stubborn"], "feelings": [{"toward": "Mira", "sentiment": -0.5, "text": "distrusts"}],
    ///  "confidence": 0.8, "source": "host"}
    /// ```
    ///
    /// Entities by id, key, name or alias; `confidence` defaults to 1; `source` is `"host"`
    /// (the default), `"observed"`, `"inferred"` or `{"told_by": <entity>}`.
    pub fn observe_belief_json(&mut self, json: &str, now: Millis) -> Result<Seq> {
        let value = crate::json::json_value("belief", json)?;
        self.observe_belief_value(value, now)
    }

    /// [`Engine::observe_belief_json`] of a JSON value already parsed (Python's dicts).
    pub fn observe_belief_value(&mut self, value: serde_json::Value, now: Millis) -> Result<Seq> {
        if !value.is_object() {
            return Err(Error::invalid("belief", "expected a JSON object"));
        }
        let input: BeliefInput = crate::json::from_value("belief", value)?;
        let source = match &input.source {
            None | Some(SourceInput::Host) => BeliefSource::Host,
            Some(SourceInput::Observed) => BeliefSource::Observed,
            Some(SourceInput::Inferred) => BeliefSource::Inferred,
            Some(SourceInput::ToldBy(w)) => BeliefSource::ToldBy(w.resolve(self)?),
        };
        let feelings = input
            .feelings
            .iter()
            .map(|f| {
                Ok(Feeling {
                    toward: f.toward.resolve(self)?,
                    sentiment: f.sentiment,
                    text: f.text.clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let observation = BeliefObservation {
            observer: input.observer.resolve(self)?,
            about: input.about.resolve(self)?,
            mood: input.mood,
            energy: input.energy,
            availability: input.availability,
            traits: input.traits,
            feelings,
            confidence: input.confidence.unwrap_or(1.0),
            source,
            at: now,
        };
        self.observe_belief(observation, now)
    }

    /// Mentions a person who is only talked about (a mother, a boss) at `now`: a new
    /// lightweight entity with no place, no mind and no lines (docs/beliefs.md), `facts` what
    /// is said of it, `by` who mentioned it. Returns its id.
    pub fn mention_person(
        &mut self,
        name: &str,
        facts: FactSheet,
        by: Option<EntityId>,
        now: Millis,
    ) -> Result<EntityId> {
        self.check_belief_now(now, "mention_person")?;
        let id = EntityId(self.world().next_id());
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::PersonMentioned {
            id,
            key: None,
            name: name.to_owned(),
            facts,
            by,
            at: now,
        });
        self.append(events)?;
        Ok(id)
    }

    fn check_belief_now(&self, now: Millis, what: &str) -> Result<()> {
        if now < self.world().now() {
            return Err(Error::invalid(
                "time",
                format!(
                    "{what}: now ({now}) is before the world's clock ({}); time never goes back",
                    self.world().now()
                ),
            ));
        }
        Ok(())
    }
}
