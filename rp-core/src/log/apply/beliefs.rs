//! Applying what characters come to believe about people (docs/beliefs.md): belief
//! observations, checked aspect by aspect, and people who are only mentioned, created as
//! lightweight entities.

use super::check_unit;
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::*;

impl World {
    /// `belief_observed`: the aspects given replace what `observer` believed of `about`.
    pub(super) fn observe_belief(&mut self, o: &BeliefObservation) -> Result<()> {
        self.check_observation(o)?;
        let held = |value| Held {
            value,
            confidence: o.confidence,
            at: o.at,
            source: o.source,
        };
        let mut belief = self
            .people
            .get(&(o.observer, o.about))
            .cloned()
            .unwrap_or_default();
        if let Some(m) = &o.mood {
            belief.mood = Some(held(m.trim().to_owned()));
        }
        if let Some(e) = o.energy {
            belief.energy = Some(Held {
                value: e,
                confidence: o.confidence,
                at: o.at,
                source: o.source,
            });
        }
        if let Some(a) = o.availability {
            belief.availability = Some(Held {
                value: a,
                confidence: o.confidence,
                at: o.at,
                source: o.source,
            });
        }
        for t in &o.traits {
            let t = t.trim();
            belief.traits.retain(|h| !h.value.eq_ignore_ascii_case(t));
            belief.traits.push(held(t.to_owned()));
        }
        let over = belief.traits.len().saturating_sub(MAX_BELIEVED_TRAITS);
        belief.traits.drain(..over);
        for f in &o.feelings {
            belief.feelings.retain(|h| h.value.toward != f.toward);
            belief.feelings.push(Held {
                value: Feeling {
                    toward: f.toward,
                    sentiment: f.sentiment,
                    text: f.text.trim().to_owned(),
                },
                confidence: o.confidence,
                at: o.at,
                source: o.source,
            });
        }
        let over = belief.feelings.len().saturating_sub(MAX_BELIEVED_FEELINGS);
        belief.feelings.drain(..over);
        self.people.insert((o.observer, o.about), belief);
        Ok(())
    }

    fn check_observation(&self, o: &BeliefObservation) -> Result<()> {
        const WHAT: &str = "belief";
        let observer = self.get_entity(o.observer)?;
        if observer.mentioned {
            return Err(Error::invalid(
                WHAT,
                format!("{} is only mentioned; it holds no beliefs", observer.name),
            ));
        }
        self.get_entity(o.about)?;
        if o.observer == o.about {
            return Err(Error::invalid(
                WHAT,
                "a belief is about someone else; a character's own state is its state",
            ));
        }
        if o.at != self.now {
            return Err(Error::invalid(
                WHAT,
                format!(
                    "a belief is observed at the world's time {}, not {}",
                    self.now, o.at
                ),
            ));
        }
        check_unit(WHAT, "confidence", o.confidence, 0.0)?;
        if let Some(e) = o.energy {
            check_unit(WHAT, "energy", e, 0.0)?;
        }
        if let Some(a) = o.availability {
            check_unit(WHAT, "availability", a, 0.0)?;
        }
        if let BeliefSource::ToldBy(by) = o.source {
            self.get_entity(by)?;
            if by == o.observer {
                return Err(Error::invalid(
                    WHAT,
                    "a character is not told by itself; use observed or inferred",
                ));
            }
        }
        if o.mood.is_none()
            && o.energy.is_none()
            && o.availability.is_none()
            && o.traits.is_empty()
            && o.feelings.is_empty()
        {
            return Err(Error::invalid(
                WHAT,
                "a belief needs mood, energy, availability, traits or feelings",
            ));
        }
        if let Some(m) = &o.mood {
            check_belief_text("mood", m, false)?;
        }
        if o.traits.len() > MAX_BELIEVED_TRAITS {
            return Err(Error::invalid(
                WHAT,
                format!("at most {MAX_BELIEVED_TRAITS} traits at once"),
            ));
        }
        for t in &o.traits {
            check_belief_text("trait", t, false)?;
        }
        if o.feelings.len() > MAX_BELIEVED_FEELINGS {
            return Err(Error::invalid(
                WHAT,
                format!("at most {MAX_BELIEVED_FEELINGS} feelings at once"),
            ));
        }
        for (i, f) in o.feelings.iter().enumerate() {
            self.get_entity(f.toward)?;
            if f.toward == o.about {
                return Err(Error::invalid(
                    WHAT,
                    "a feeling is about a third person, not the one it is believed of",
                ));
            }
            if o.feelings[..i].iter().any(|g| g.toward == f.toward) {
                return Err(Error::invalid(
                    WHAT,
                    format!("the feeling toward {} is given twice", f.toward),
                ));
            }
            check_unit(WHAT, "sentiment", f.sentiment, -1.0)?;
            check_belief_text("feeling", &f.text, true)?;
        }
        Ok(())
    }

    /// `person_mentioned`: a lightweight entity, with no place and no mind.
    pub(super) fn mention_person(
        &mut self,
        id: EntityId,
        key: &Option<String>,
        name: &str,
        facts: &FactSheet,
        by: Option<EntityId>,
        at: Millis,
    ) -> Result<()> {
        if at != self.now {
            return Err(Error::invalid(
                "person",
                format!(
                    "a person is mentioned at the world's time {}, not {at}",
                    self.now
                ),
            ));
        }
        if let Some(by) = by {
            self.get_entity(by)?;
        }
        self.create_entity(id, key, name, &[], facts, false, &EntityState::default())?;
        self.minds.remove(&id);
        self.entity_mut(id)?.mentioned = true;
        Ok(())
    }

    /// Forgets what anyone believed of a removed entity, and what it believed.
    pub(super) fn remove_beliefs(&mut self, entity: EntityId) {
        let gone: Vec<_> = self
            .people
            .keys()
            .filter(|(a, b)| *a == entity || *b == entity)
            .copied()
            .collect();
        for k in gone {
            self.people.remove(&k);
        }
        let touched: Vec<_> = self
            .people
            .iter()
            .filter(|(_, b)| b.feelings.iter().any(|f| f.value.toward == entity))
            .map(|(k, _)| *k)
            .collect();
        for k in touched {
            if let Some(b) = self.people.get_mut(&k) {
                b.feelings.retain(|f| f.value.toward != entity);
                if b.is_empty() {
                    self.people.remove(&k);
                }
            }
        }
    }

    /// Refuses a mentioned person where only a person in the world may be (a place, a line).
    pub(super) fn check_not_mentioned(&self, entity: EntityId, what: &'static str) -> Result<()> {
        if let Some(e) = self.entity(entity)
            && e.mentioned
        {
            return Err(Error::invalid(
                what,
                format!(
                    "{} is only mentioned: it has no place in the world and says nothing",
                    e.name
                ),
            ));
        }
        Ok(())
    }
}

/// A believed text: at most [`MAX_BELIEF_TEXT_CHARS`] characters, one line; empty only where
/// allowed.
fn check_belief_text(field: &str, text: &str, may_be_empty: bool) -> Result<()> {
    let t = text.trim();
    if t.is_empty() && !may_be_empty {
        return Err(Error::invalid("belief", format!("the {field} is empty")));
    }
    if t.chars().count() > MAX_BELIEF_TEXT_CHARS {
        return Err(Error::invalid(
            "belief",
            format!("the {field} is longer than {MAX_BELIEF_TEXT_CHARS} characters"),
        ));
    }
    if t.contains(['\n', '\r']) {
        return Err(Error::invalid(
            "belief",
            format!("the {field} contains a line break"),
        ));
    }
    Ok(())
}
