//! Response control against the world: building a sheet's context from the world (who is
//! present, whether the message mentions the entity, the hour) and deciding.

use super::{Event, World};
use crate::error::{Error, Result};
use crate::facts::{Context, Decision, Draws, TraceEvent};
use crate::model::{EntityId, Millis};

/// A message a character might respond to, with what the host knows about timing.
/// Deserialises from JSON with these field names, every one optional.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Message {
    /// The text (`content`).
    pub content: String,
    /// Who wrote it (`author`).
    pub author: String,
    /// Whether it mentions the entity; `None`: the engine checks the entity's name and
    /// aliases as whole words, case-insensitively.
    pub mentioned: Option<bool>,
    /// Milliseconds since the entity last responded (`response_ms`); `None`: never.
    pub response_ms: Option<f64>,
    /// Milliseconds since the message arrived (`retry_ms`).
    pub retry_ms: f64,
    /// Messages since the entity's last reply (`unread_count`).
    pub unread_count: u32,
    /// How an item is being used (`interaction_type`).
    pub interaction_type: Option<String>,
    /// Hour of day (`time.hour`); `None`: from the world clock, as hours since 0 modulo 24.
    pub hour: Option<f64>,
    /// The entity's drives (`drives.*`); the engine fills them in from the world when it
    /// decides in a turn.
    #[serde(skip)]
    pub drives: crate::facts::DriveValues,
}

impl Message {
    /// Reads a message from a JSON object (every field optional, unknown fields refused).
    pub fn from_json(json: &str) -> Result<Message> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| Error::invalid("message", format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(Error::invalid("message", "a message is a JSON object"));
        }
        serde_json::from_value(value).map_err(|e| Error::invalid("message", e.to_string()))
    }
}

/// True if `text` contains `word` as a whole word, ignoring case.
fn contains_word(text: &str, word: &str) -> bool {
    let word = word.trim().to_lowercase();
    if word.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    let mut from = 0;
    while let Some(at) = text[from..].find(&word) {
        let start = from + at;
        let end = start + word.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return true;
        }
        from = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The hour of day of a host clock reading.
pub fn hour_of(now: Millis) -> f64 {
    (now.rem_euclid(24 * 3_600_000) / 3_600_000) as f64
}

impl World {
    /// Whether `text` mentions the entity by name or alias (whole words, any case).
    pub fn mentions(&self, entity: EntityId, text: &str) -> bool {
        self.entity(entity).is_some_and(|e| {
            contains_word(text, &e.name) || e.aliases.iter().any(|a| contains_word(text, a))
        })
    }

    /// Names of the entities in the same container as `entity` (itself included).
    pub fn present_names(&self, entity: EntityId) -> Vec<String> {
        let Some(e) = self.entity(entity) else {
            return Vec::new();
        };
        match &e.activity.position {
            Some(p) => self
                .entities_in(p.container)
                .map(|x| x.name.clone())
                .collect(),
            None => vec![e.name.clone()],
        }
    }

    /// Evaluates `entity`'s fact sheet for `message`, drawing randomness from `draws`. Changes
    /// nothing: [`crate::Engine::decide`] records the decision and advances the world's
    /// generator.
    pub fn decide(
        &self,
        entity: EntityId,
        message: &Message,
        draws: &mut dyn Draws,
    ) -> Result<Decision> {
        let e = self
            .entity(entity)
            .ok_or_else(|| Error::not_found("entity", entity))?;
        let sheet = self
            .sheets
            .compiled
            .get(&entity)
            .ok_or_else(|| Error::not_found("fact sheet", entity))?;
        let present = self.present_names(entity);
        let ctx = Context {
            name: &e.name,
            content: &message.content,
            author: &message.author,
            mentioned: message
                .mentioned
                .unwrap_or_else(|| self.mentions(entity, &message.content)),
            response_ms: message.response_ms.unwrap_or(f64::INFINITY),
            retry_ms: message.retry_ms,
            unread_count: f64::from(message.unread_count),
            interaction_type: message.interaction_type.as_deref(),
            present: &present,
            hour: message.hour.unwrap_or_else(|| hour_of(self.now)),
            drives: message.drives,
        };
        Ok(sheet.decide(&ctx, draws))
    }
}

/// The event recording `decision` of `entity`.
pub(crate) fn decision_event(entity: EntityId, decision: &Decision) -> Event {
    let mut fired: Vec<u32> = decision
        .trace
        .iter()
        .filter(|t| matches!(t.event, TraceEvent::Fired { .. }))
        .map(|t| u32::try_from(t.line).unwrap_or(u32::MAX))
        .collect();
    fired.dedup();
    Event::ResponseDecided {
        entity,
        respond: decision.respond,
        retry_ms: decision.retry_ms,
        fired,
        draws: decision.draws.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_whole_words_in_any_case() {
        assert!(contains_word("Hey ARIA, over here", "aria"));
        assert!(contains_word("aria", "Aria"));
        assert!(!contains_word("Mariana", "aria"));
        assert!(!contains_word("arias", "aria"));
        assert!(contains_word("ask the innkeeper!", "the innkeeper"));
        assert!(contains_word("é aria é", "aria"));
        assert!(!contains_word("anything", ""));
    }

    #[test]
    fn messages_are_json_objects() {
        let m = Message::from_json(r#"{"content": "hi", "mentioned": true}"#).unwrap();
        assert_eq!((m.content.as_str(), m.mentioned), ("hi", Some(true)));
        assert!(Message::from_json("[]").is_err());
        assert!(Message::from_json(r#"{"contnet": "typo"}"#).is_err());
        assert!(Message::from_json("{").is_err());
    }

    #[test]
    fn hours_wrap() {
        assert_eq!(hour_of(0), 0.0);
        assert_eq!(hour_of(25 * 3_600_000), 1.0);
        assert_eq!(hour_of(-3_600_000), 23.0);
    }
}
