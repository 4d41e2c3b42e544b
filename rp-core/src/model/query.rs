//! `WorldQuery`: the record of a question asked about the world: its configuration, its
//! lifecycle `pending → processing → completed | failed` with every transition checked, its
//! rounds and its [`Answer`]. The log records these as they are; the query loop that produces
//! them is [`crate::query`].

use crate::error::{Error, Result};
use crate::model::GenerateResult;
use crate::model::{EntityId, Millis, QueryId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest question, in characters.
pub const MAX_QUERY_CHARS: usize = 10_000;
/// The most info requests (NeedsMoreInfo rounds) a configuration may allow.
pub const MAX_INFO_REQUESTS: u32 = 20;
/// The most entities a configuration may put in the first context.
pub const MAX_INITIAL_ENTITIES: u32 = 100;
/// The largest `result_limit` a configuration may set.
pub const MAX_RESULT_LIMIT: u32 = 200;
/// The most generations one query records: each round and its one retry, plus the forced one.
pub const MAX_ROUNDS: usize = 2 * (MAX_INFO_REQUESTS as usize + 2);

/// How a query runs. Reads from JSON with these field names, every one optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueryConfig {
    /// How many times the model may ask for more information before it must answer
    /// (0 to [`MAX_INFO_REQUESTS`]).
    pub max_info_requests: u32,
    /// How many entities the first context holds (1 to [`MAX_INITIAL_ENTITIES`]).
    pub max_initial_entities: u32,
    /// Whether contexts carry the relationships (directed edges) of their entities.
    pub include_relationships: bool,
    /// Sampling temperature of the query's generations (0 to 2).
    pub temperature: f64,
    /// The most entities or relationships one info request adds (1 to [`MAX_RESULT_LIMIT`]).
    pub result_limit: u32,
    /// Asked about the past: the context is built from the world as it was at this point
    /// (docs/history.md), seen from `asked_as` as it was then. The query itself is recorded
    /// in the log as of when it is asked, with this field as the host gave it. `None`: now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<super::AsOf>,
}

impl Default for QueryConfig {
    fn default() -> Self {
        QueryConfig {
            max_info_requests: 3,
            max_initial_entities: 10,
            include_relationships: true,
            temperature: 0.7,
            result_limit: 20,
            as_of: None,
        }
    }
}

impl QueryConfig {
    /// Reads a configuration from a JSON object (unknown fields refused) and checks it.
    pub fn from_json(json: &str) -> Result<QueryConfig> {
        let c: QueryConfig = crate::json::json_object("query config", json)?;
        c.check()?;
        Ok(c)
    }

    /// Refuses values out of range.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::invalid("query config", m));
        if self.max_info_requests > MAX_INFO_REQUESTS {
            return bad(format!(
                "max_info_requests must be 0 to {MAX_INFO_REQUESTS}, not {}",
                self.max_info_requests
            ));
        }
        if !(1..=MAX_INITIAL_ENTITIES).contains(&self.max_initial_entities) {
            return bad(format!(
                "max_initial_entities must be 1 to {MAX_INITIAL_ENTITIES}, not {}",
                self.max_initial_entities
            ));
        }
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return bad(format!(
                "temperature must be 0 to 2, not {}",
                self.temperature
            ));
        }
        if !(1..=MAX_RESULT_LIMIT).contains(&self.result_limit) {
            return bad(format!(
                "result_limit must be 1 to {MAX_RESULT_LIMIT}, not {}",
                self.result_limit
            ));
        }
        Ok(())
    }
}

/// Where a query is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryStatus {
    /// Created, not started.
    Pending,
    /// The model is working on it.
    Processing,
    /// Answered (possibly a forced answer).
    Completed,
    /// Ended without an answer.
    Failed,
}

impl QueryStatus {
    /// The stable name (`"pending"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            QueryStatus::Pending => "pending",
            QueryStatus::Processing => "processing",
            QueryStatus::Completed => "completed",
            QueryStatus::Failed => "failed",
        }
    }
}

/// One info request the model made and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRun {
    /// The request as the model wrote it.
    pub request: InfoRequest,
    /// Why it was refused (a constraint it broke); `None`: fulfilled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What it added to the context, in words.
    #[serde(default)]
    pub summary: String,
    /// The entities it added (in full or as summaries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<EntityId>,
}

/// One generation of a query: what the model said, and what the engine made of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryRound {
    /// Why this generation could only answer (the limit was reached or a request broke the
    /// constraints); `None`: the model could also ask for more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<String>,
    /// The generation as the host's model gave it (its text cut at
    /// [`crate::log::MAX_TEXT_BYTES`]).
    pub output: GenerateResult,
    /// Why the output could not be read (the next round is its retry, or the query failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The info requests it made, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRun>,
}

/// A question about the world: the text, who asks (the host, or an entity whose point of view
/// bounds what the answer may use), the configuration, the lifecycle and, once finished, the
/// rounds, the context's entities and the answer or the error. The world keeps one per query
/// asked ([`crate::World::query`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldQuery {
    /// The query's id.
    pub id: QueryId,
    /// The question.
    pub text: String,
    /// Asked as this entity (its own memories, its own edges, the entities it has met); `None`:
    /// asked by the host, over the whole world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_as: Option<EntityId>,
    /// How it runs.
    pub config: QueryConfig,
    /// Where it is.
    pub status: QueryStatus,
    /// When it was asked (host clock).
    pub created: Millis,
    /// When it completed or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Millis>,
    /// NeedsMoreInfo rounds fulfilled.
    #[serde(default)]
    pub info_requests: u32,
    /// Every generation, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<QueryRound>,
    /// The entities of the final context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<EntityId>,
    /// The answer, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Refuses a question that is blank or longer than [`MAX_QUERY_CHARS`].
pub fn check_query_text(text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::invalid("query", "the question is empty"));
    }
    let n = text.chars().count();
    if n > MAX_QUERY_CHARS {
        return Err(Error::invalid(
            "query",
            format!("the question has {n} characters; the most is {MAX_QUERY_CHARS}"),
        ));
    }
    Ok(())
}

impl WorldQuery {
    /// A pending query. Refuses a blank or too long question and a configuration out of range.
    pub fn new(
        id: QueryId,
        text: impl Into<String>,
        asked_as: Option<EntityId>,
        config: QueryConfig,
        created: Millis,
    ) -> Result<WorldQuery> {
        let text = text.into();
        check_query_text(&text)?;
        config.check()?;
        Ok(WorldQuery {
            id,
            text,
            asked_as,
            config,
            status: QueryStatus::Pending,
            created,
            completed_at: None,
            info_requests: 0,
            rounds: Vec::new(),
            context: Vec::new(),
            answer: None,
            error: None,
        })
    }

    fn expect(&self, status: QueryStatus, doing: &str) -> Result<()> {
        if self.status != status {
            return Err(Error::conflict(format!(
                "{} is {}; it cannot {doing}",
                self.id,
                self.status.as_str()
            )));
        }
        Ok(())
    }

    /// `pending → processing`.
    pub fn start_processing(&mut self) -> Result<()> {
        self.expect(QueryStatus::Pending, "start processing")?;
        self.status = QueryStatus::Processing;
        Ok(())
    }

    /// Whether the model may still ask for more information.
    pub fn can_request_more_info(&self) -> bool {
        self.status == QueryStatus::Processing && self.info_requests < self.config.max_info_requests
    }

    /// Counts a NeedsMoreInfo round; refused past the configured limit.
    pub fn record_info_request(&mut self) -> Result<()> {
        self.expect(QueryStatus::Processing, "record an info request")?;
        if !self.can_request_more_info() {
            return Err(Error::conflict(format!(
                "{} has used all {} of its info requests",
                self.id, self.config.max_info_requests
            )));
        }
        self.info_requests += 1;
        Ok(())
    }

    /// `processing → completed` with `answer` at `at`.
    pub fn complete(&mut self, answer: Answer, at: Millis) -> Result<()> {
        self.expect(QueryStatus::Processing, "complete")?;
        self.status = QueryStatus::Completed;
        self.answer = Some(answer);
        self.completed_at = Some(at);
        Ok(())
    }

    /// `processing → failed` with `error` at `at`.
    pub fn fail(&mut self, error: impl Into<String>, at: Millis) -> Result<()> {
        self.expect(QueryStatus::Processing, "fail")?;
        self.status = QueryStatus::Failed;
        self.error = Some(error.into());
        self.completed_at = Some(at);
        Ok(())
    }

    /// Completed or failed.
    pub fn is_finished(&self) -> bool {
        matches!(self.status, QueryStatus::Completed | QueryStatus::Failed)
    }
}

/// The longest answer, in characters.
pub const MAX_ANSWER_CHARS: usize = 8_000;
/// The longest short text of a response (a reason, a contribution, a follow-up), in characters.
pub const MAX_NOTE_CHARS: usize = 500;
/// The most sources of an answer.
pub const MAX_SOURCES: usize = 50;
/// The most suggested follow-ups of an answer.
pub const MAX_FOLLOW_UPS: usize = 5;
/// The most info requests of one NeedsMoreInfo.
pub const MAX_REQUESTS: usize = 8;
/// How sure an answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Well supported by the context.
    High,
    /// Partly supported.
    Medium,
    /// Little support (every forced answer).
    Low,
}

/// An entity an answer drew on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSource {
    /// The entity (one of the context's).
    pub entity_id: EntityId,
    /// How it contributed.
    pub contribution: String,
    /// How much it mattered, 0–1.
    pub relevance: f64,
}

/// The answer to a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The answer in prose.
    pub content: String,
    /// How sure it is.
    pub confidence: Confidence,
    /// The entities it drew on.
    #[serde(default)]
    pub sources: Vec<AnswerSource>,
    /// Questions worth asking next.
    #[serde(default)]
    pub suggested_follow_ups: Vec<String>,
    /// Set by the engine when the answer was forced (the info-request limit, or a request
    /// that broke the constraints): why. A forced answer always has low confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<String>,
}

impl Answer {
    /// Marks the answer forced for `reason`: low confidence, whatever the model said.
    pub fn force(&mut self, reason: impl Into<String>) {
        self.confidence = Confidence::Low;
        self.forced = Some(reason.into());
    }

    /// Checks the answer against the context's entity ids: content present and bounded,
    /// every source in `context_ids`, relevances in [0, 1].
    pub fn check(&self, has_entity: &dyn Fn(EntityId) -> bool) -> Result<(), String> {
        if self.content.trim().is_empty() {
            return Err("the answer's content is empty".into());
        }
        if self.content.chars().count() > MAX_ANSWER_CHARS {
            return Err(format!(
                "the answer is longer than {MAX_ANSWER_CHARS} characters"
            ));
        }
        if self.sources.len() > MAX_SOURCES {
            return Err(format!("an answer has at most {MAX_SOURCES} sources"));
        }
        for (i, s) in self.sources.iter().enumerate() {
            if !has_entity(s.entity_id) {
                return Err(format!(
                    "sources[{i}].entity_id {} is not an entity of the context",
                    s.entity_id.0
                ));
            }
            if !(s.relevance.is_finite() && (0.0..=1.0).contains(&s.relevance)) {
                return Err(format!("sources[{i}].relevance must be 0 to 1"));
            }
            if s.contribution.chars().count() > MAX_NOTE_CHARS {
                return Err(format!("sources[{i}].contribution is too long"));
            }
        }
        if self.suggested_follow_ups.len() > MAX_FOLLOW_UPS {
            return Err(format!("an answer has at most {MAX_FOLLOW_UPS} follow-ups"));
        }
        if self
            .suggested_follow_ups
            .iter()
            .any(|f| f.chars().count() > MAX_NOTE_CHARS)
        {
            return Err("a follow-up is too long".into());
        }
        if let Some(r) = &self.forced {
            if r.len() > crate::model::MAX_TEXT_BYTES {
                return Err("the forced reason is too long".into());
            }
            if self.confidence != Confidence::Low {
                return Err("a forced answer has low confidence".into());
            }
        }
        Ok(())
    }
}

/// One piece of information the model asks for: a capability and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoRequest {
    /// The capability (`"EXPAND_ENTITY"`, ...), as the model wrote it.
    pub capability_id: String,
    /// Its parameters (a JSON object).
    #[serde(default = "empty_object")]
    pub params: Value,
    /// Why it asks.
    #[serde(default)]
    pub reason: String,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Answer {
        Answer {
            content: "Mira.".into(),
            confidence: Confidence::High,
            sources: vec![],
            suggested_follow_ups: vec![],
            forced: None,
        }
    }

    #[test]
    fn transitions_are_checked() {
        let mut q = WorldQuery::new(QueryId(1), "Who?", None, QueryConfig::default(), 5).unwrap();
        assert_eq!(q.status, QueryStatus::Pending);
        assert!(q.complete(answer(), 6).is_err(), "pending cannot complete");
        assert!(q.record_info_request().is_err());
        q.start_processing().unwrap();
        assert!(q.start_processing().is_err());
        for _ in 0..3 {
            q.record_info_request().unwrap();
        }
        assert!(!q.can_request_more_info());
        assert!(q.record_info_request().is_err());
        q.complete(answer(), 7).unwrap();
        assert_eq!(q.completed_at, Some(7));
        assert!(q.complete(answer(), 8).is_err(), "cannot complete twice");
        assert!(q.fail("late", 8).is_err());
        assert!(q.is_finished());
    }

    #[test]
    fn text_and_config_are_bounded() {
        let new = |t: &str, c: QueryConfig| WorldQuery::new(QueryId(1), t, None, c, 0);
        assert!(new("  ", QueryConfig::default()).is_err());
        assert!(new(&"x".repeat(MAX_QUERY_CHARS), QueryConfig::default()).is_ok());
        assert!(new(&"é".repeat(MAX_QUERY_CHARS + 1), QueryConfig::default()).is_err());
        for bad in [
            QueryConfig {
                max_info_requests: MAX_INFO_REQUESTS + 1,
                ..Default::default()
            },
            QueryConfig {
                max_initial_entities: 0,
                ..Default::default()
            },
            QueryConfig {
                temperature: f64::NAN,
                ..Default::default()
            },
            QueryConfig {
                temperature: 2.5,
                ..Default::default()
            },
            QueryConfig {
                result_limit: 0,
                ..Default::default()
            },
        ] {
            assert!(new("Who?", bad).is_err());
        }
        let c = QueryConfig::from_json(r#"{"max_info_requests": 1}"#).unwrap();
        assert_eq!((c.max_info_requests, c.max_initial_entities), (1, 10));
        assert!(QueryConfig::from_json(r#"{"max_info": 1}"#).is_err());
        assert!(QueryConfig::from_json(r#"{"temperature": -1}"#).is_err());
    }
}
