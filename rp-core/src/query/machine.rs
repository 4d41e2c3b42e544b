//! The sans-IO query machine: `begin_query` builds the first context, `step` asks for a
//! generation, `provide` feeds it (an answer ends the loop; a NeedsMoreInfo is checked against
//! the capabilities, fulfilled and asked again), `finish` commits the query's record.
//!
//! Nothing is committed before `finish`: a query changes nothing in the world but its own
//! record, so a crash mid-query loses only the question and the model's work, never half a
//! record, and the host asks again. `finish` writes `QueryAsked` and `QueryAnswered` (or
//! `QueryFailed`) in one transaction. Like a turn, the machine works on the world as it was
//! when the query began and refuses to go on once the engine has moved.
//!
//! ```
//! use rp_core::{Engine, EntityId, Event, turn::{GenerateResult, Step}};
//! use rp_core::query::QueryInput;
//! let mut engine = Engine::in_memory("Demo", 0)?;
//! let mira = EntityId(engine.world().next_id());
//! engine.append(vec![Event::EntityCreated { id: mira, key: None, name: "Mira".into(),
//!     aliases: vec![], facts: rp_core::FactSheet::from_text("is a character\nRuns the bar."),
//!     host_controlled: false, state: Default::default() }])?;
//! let mut query = engine.begin_query(QueryInput::new("Who runs the bar?", 1_000))?;
//! while let Step::Generate(_request) = query.step()? {
//!     let reply = format!(r#"{{"type": "answer", "content": "Mira.", "confidence": "high",
//!         "sources": [{{"entity_id": {}, "contribution": "her facts", "relevance": 1}}]}}"#, mira.0);
//!     query.provide(GenerateResult::text(reply))?;
//! }
//! let outcome = query.finish()?; // the record, committed
//! assert_eq!(outcome.query.answer.unwrap().content, "Mira.");
//! # Ok::<(), rp_core::Error>(())
//! ```

use super::capability::{InfoCapability, build_capabilities, check_request};
use super::context::QueryContext;
use super::past::PastIndexes;
use super::prompt;
use super::response::{QueryResponse, parse_response};
use super::scope::Scope;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::graph::RelationshipGraph;
use crate::log::{Event, World};
use crate::lore::DefinitionIndex;
use crate::machine::{Generate, GenerateRequest, GenerateResult, Step, TokenSink, block_on};
use crate::model::{EntityId, Millis, QueryId, Seq};
use crate::model::{
    QueryConfig, QueryRound, QueryStatus, RequestRun, WorldQuery, check_query_text,
};
use crate::update::cut_at;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What starts a query. Reads from JSON with these field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryInput {
    /// The question (1 to [`super::MAX_QUERY_CHARS`] characters).
    pub text: String,
    /// Ask as this entity: the answer may use only what it could know. `None`: the host asks,
    /// over the whole world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_as: Option<EntityId>,
    /// The host clock (for the recency of recalled memories, and the record's times).
    pub now: Millis,
    /// How it runs.
    #[serde(default)]
    pub config: QueryConfig,
}

impl QueryInput {
    /// The host asks `text` at `now`, with the default configuration.
    pub fn new(text: impl Into<String>, now: Millis) -> QueryInput {
        QueryInput {
            text: text.into(),
            asked_as: None,
            now,
            config: QueryConfig::default(),
        }
    }

    /// The same question asked as `entity`.
    pub fn asked_as(mut self, entity: EntityId) -> QueryInput {
        self.asked_as = Some(entity);
        self
    }

    /// The same question with `config`.
    pub fn with_config(mut self, config: QueryConfig) -> QueryInput {
        self.config = config;
        self
    }

    /// The same question asked about the past: its context is built from the world as of
    /// `at`, seen by `asked_as` as it was then (docs/history.md); the record is committed
    /// today, its configuration noting `at` ([`QueryConfig::as_of`]).
    pub fn as_of(mut self, at: crate::model::AsOf) -> QueryInput {
        self.config.as_of = Some(at);
        self
    }

    /// Reads an input from a JSON object (unknown fields refused).
    pub fn from_json(json: &str) -> Result<QueryInput> {
        crate::json::json_object("query input", json)
    }
}

/// What a finished query did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    /// The head after the commit.
    pub seq: Seq,
    /// The record as committed: status, rounds, answer or error.
    pub query: WorldQuery,
    /// The final context.
    pub context: QueryContext,
    /// NeedsMoreInfo rounds fulfilled.
    pub iterations: u32,
}

#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// Waiting for a generation.
    Asking {
        request: Box<GenerateRequest>,
        /// The capabilities this request offers.
        offered: Vec<InfoCapability>,
        /// Whether this is the retry of an unreadable output.
        retried: bool,
        /// Why only an answer may come back.
        forced: Option<String>,
    },
    /// Answered or failed: ready to commit.
    Done,
}

/// A query in progress. It borrows nothing: every call takes the engine, so a binding can keep
/// it beside the engine. [`Query`] is the same machine holding the engine.
#[derive(Debug)]
pub struct QueryMachine {
    query: WorldQuery,
    world: World,
    base: Seq,
    epoch: u64,
    scope: Scope,
    context: QueryContext,
    asker: Option<String>,
    phase: Phase,
}

impl QueryMachine {
    /// Starts a query on `engine`: checks the input, builds the first context and the first
    /// request. Commits nothing.
    pub fn begin(engine: &mut Engine, input: QueryInput) -> Result<QueryMachine> {
        check_query_text(&input.text)?;
        input.config.check()?;
        // Asked about the past: the context comes from the world as it was (docs/history.md);
        // the record is made today, with a fresh id of today's world.
        let id = QueryId(engine.world().next_id());
        let world = match &input.config.as_of {
            Some(at) => engine.world_at(at)?,
            None => engine.world().clone(),
        };
        let asker = match input.asked_as {
            Some(id) => Some(
                world
                    .entity(id)
                    .ok_or_else(|| Error::not_found("entity", id))?
                    .name
                    .clone(),
            ),
            None => None,
        };
        let mut query = WorldQuery::new(id, input.text, input.asked_as, input.config, input.now)?;
        query.start_processing()?;
        let scope = match &query.config.as_of {
            None => Scope::new(
                &world,
                input.asked_as,
                engine.relationship_graph(),
                engine.definition_index(),
            ),
            Some(_) => Scope::new(
                &world,
                input.asked_as,
                Arc::new(RelationshipGraph::build(&world)),
                Arc::new(DefinitionIndex::build(world.entities())),
            )
            .looking_back(Arc::new(PastIndexes::build(&world)?)),
        };
        let context = scope.initial(engine, &world, &query.text, input.now, &query.config)?;
        let mut m = QueryMachine {
            query,
            base: engine.head(),
            epoch: engine.epoch(),
            world,
            scope,
            context,
            asker,
            phase: Phase::Done,
        };
        m.phase = m.ask(None);
        Ok(m)
    }

    /// The next request: with capabilities while info requests are left and nothing forces an
    /// answer.
    fn ask(&self, forced: Option<String>) -> Phase {
        let offered = if forced.is_none() && self.query.can_request_more_info() {
            build_capabilities(
                &self.context,
                &self.scope.definitions(),
                self.query.config.result_limit,
            )
        } else {
            Vec::new()
        };
        let request = prompt::request(
            &self.query,
            &self.context,
            &offered,
            forced.as_deref(),
            self.asker.as_deref(),
        );
        Phase::Asking {
            request: Box::new(request),
            offered,
            retried: false,
            forced,
        }
    }

    /// What the query needs next: a generation, or nothing ([`Step::Done`]: finish). Calling
    /// it again without providing returns the same request.
    pub fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        self.check_engine(engine)?;
        Ok(match &self.phase {
            Phase::Asking { request, .. } => Step::Generate(request.as_ref().clone()),
            Phase::Done => Step::Done,
        })
    }

    /// Feeds the generation asked for by the last [`Step::Generate`]. Its text is read
    /// strictly ([`super::parse_response`]); one unreadable output is retried with the problem
    /// fed back, a second fails the query. A NeedsMoreInfo is checked against the capabilities
    /// offered: the requests are fulfilled in order, and one that breaks a constraint ends the
    /// fetching and forces an answer (low confidence), as does the info-request limit. An
    /// error (the engine moved, the query is not waiting) changes nothing.
    pub fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        self.check_engine(engine)?;
        let Phase::Asking {
            request,
            offered,
            retried,
            forced,
        } = &self.phase
        else {
            return Err(Error::conflict("the query is not waiting for a generation"));
        };
        let output = result.text.clone();
        let mut round = QueryRound {
            forced: forced.clone(),
            output: GenerateResult {
                text: cut_at(&result.text, crate::log::MAX_TEXT_BYTES).to_owned(),
                ..result
            },
            problem: None,
            requests: Vec::new(),
        };
        let now = self.query.created;
        let mut query = self.query.clone();
        match parse_response(&output, &self.context, offered.is_empty()) {
            Err(problem) => {
                let problem = cut_at(&problem, 2000).to_owned();
                round.problem = Some(problem.clone());
                query.rounds.push(round);
                if *retried {
                    query.fail(
                        format!("the model's reply could not be read, twice: {problem}"),
                        now,
                    )?;
                    self.query = query;
                    self.phase = Phase::Done;
                } else {
                    let again = prompt::retry(request, &output, &problem);
                    let (offered, forced) = (offered.clone(), forced.clone());
                    self.query = query;
                    self.phase = Phase::Asking {
                        request: Box::new(again),
                        offered,
                        retried: true,
                        forced,
                    };
                }
            }
            Ok(QueryResponse::Answer(mut answer)) => {
                if let Some(reason) = forced {
                    answer.force(reason.clone());
                }
                query.rounds.push(round);
                query.complete(answer, now)?;
                self.query = query;
                self.phase = Phase::Done;
            }
            Ok(QueryResponse::NeedsMoreInfo(more)) => {
                query.record_info_request()?;
                let mut context = self.context.clone();
                let mut violation = None;
                for req in more.requests {
                    match check_request(&req, offered, query.config.result_limit) {
                        Ok(checked) => {
                            let (summary, entities) = self.scope.fulfil(
                                engine,
                                &self.world,
                                &mut context,
                                &checked,
                                &query.config,
                            )?;
                            round.requests.push(RequestRun {
                                request: req,
                                refused: None,
                                summary,
                                entities,
                            });
                        }
                        Err(problems) => {
                            let why = cut_at(&problems.join("; "), 2000).to_owned();
                            round.requests.push(RequestRun {
                                request: req,
                                refused: Some(why.clone()),
                                summary: String::new(),
                                entities: Vec::new(),
                            });
                            violation = Some(why);
                            break;
                        }
                    }
                }
                query.rounds.push(round);
                let forced = match violation {
                    Some(why) => Some(format!("a request broke the constraints: {why}")),
                    None => (!query.can_request_more_info()).then(|| {
                        format!(
                            "the limit of {} info requests was reached",
                            query.config.max_info_requests
                        )
                    }),
                };
                self.query = query;
                self.context = context;
                self.phase = self.ask(forced);
            }
        }
        Ok(())
    }

    /// Ends the query as failed (the host's model could not answer, the host gave up):
    /// `finish` then commits it as such.
    pub fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        self.check_engine(engine)?;
        if self.phase == Phase::Done {
            return Err(Error::conflict("the query has already ended"));
        }
        let reason = if reason.trim().is_empty() {
            "the host ended the query"
        } else {
            cut_at(reason, 2000)
        };
        self.query.fail(reason, self.query.created)?;
        self.phase = Phase::Done;
        Ok(())
    }

    /// Whether [`QueryMachine::finish`] would commit now.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The query as it stands (status, rounds so far).
    pub fn query(&self) -> &WorldQuery {
        &self.query
    }

    /// The context as it stands.
    pub fn context(&self) -> &QueryContext {
        &self.context
    }

    /// The capabilities the pending request offers.
    pub fn capabilities(&self) -> &[InfoCapability] {
        match &self.phase {
            Phase::Asking { offered, .. } => offered,
            Phase::Done => &[],
        }
    }

    /// Commits the query's record (`QueryAsked`, then `QueryAnswered` or `QueryFailed`) in one
    /// transaction. Refused while a generation is still needed.
    pub fn finish(self, engine: &mut Engine) -> Result<QueryOutcome> {
        self.check_engine(engine)?;
        if self.phase != Phase::Done {
            return Err(Error::conflict(
                "the query still needs a generation; provide it (or fail the query) first",
            ));
        }
        let q = self.query;
        let at = q.created;
        let asked = Event::QueryAsked {
            id: q.id,
            text: q.text.clone(),
            asked_as: q.asked_as,
            config: q.config.clone(),
            at,
        };
        let end = match (q.status, q.answer.clone(), q.error.clone()) {
            (QueryStatus::Completed, Some(answer), _) => Event::QueryAnswered {
                id: q.id,
                info_requests: q.info_requests,
                rounds: q.rounds.clone(),
                context: self.context.all_entity_ids(),
                answer,
                at,
            },
            (_, _, error) => Event::QueryFailed {
                id: q.id,
                info_requests: q.info_requests,
                rounds: q.rounds.clone(),
                error: error.unwrap_or_else(|| "the query ended without an answer".into()),
                at,
            },
        };
        let seq = engine.append(vec![asked, end])?;
        let query = engine
            .world()
            .query(q.id)
            .cloned()
            .ok_or_else(|| Error::not_found("query", q.id))?;
        Ok(QueryOutcome {
            seq,
            iterations: query.info_requests,
            query,
            context: self.context,
        })
    }

    fn check_engine(&self, engine: &Engine) -> Result<()> {
        if engine.head() != self.base || engine.epoch() != self.epoch {
            return Err(Error::conflict(
                "the world changed since the query began; begin a new query",
            ));
        }
        Ok(())
    }
}

/// A query holding its engine: the machine of [`QueryMachine`] with the engine passed for you.
#[derive(Debug)]
pub struct Query<'e> {
    engine: &'e mut Engine,
    machine: QueryMachine,
}

impl Query<'_> {
    /// What the query needs next: see [`QueryMachine::step`].
    pub fn step(&mut self) -> Result<Step> {
        self.machine.step(self.engine)
    }

    /// Feeds a generation: see [`QueryMachine::provide`].
    pub fn provide(&mut self, result: GenerateResult) -> Result<()> {
        self.machine.provide(self.engine, result)
    }

    /// Ends the query as failed: see [`QueryMachine::fail`].
    pub fn fail(&mut self, reason: &str) -> Result<()> {
        self.machine.fail(self.engine, reason)
    }

    /// Commits the record: see [`QueryMachine::finish`].
    pub fn finish(self) -> Result<QueryOutcome> {
        self.machine.finish(self.engine)
    }

    /// The machine (query, context, capabilities).
    pub fn machine(&self) -> &QueryMachine {
        &self.machine
    }
}

impl crate::machine::Machine for QueryMachine {
    type Outcome = QueryOutcome;

    fn step(&mut self, engine: &mut Engine) -> Result<Step> {
        QueryMachine::step(self, engine)
    }

    fn provide(&mut self, engine: &mut Engine, result: GenerateResult) -> Result<()> {
        QueryMachine::provide(self, engine, result)
    }

    fn fail(&mut self, engine: &mut Engine, reason: &str) -> Result<()> {
        QueryMachine::fail(self, engine, reason)
    }

    fn finish(self, engine: &mut Engine) -> Result<QueryOutcome> {
        QueryMachine::finish(self, engine)
    }
}

impl Engine {
    /// Starts a query: see [`QueryMachine::begin`].
    pub fn begin_query(&mut self, input: QueryInput) -> Result<Query<'_>> {
        let machine = QueryMachine::begin(self, input)?;
        Ok(Query {
            engine: self,
            machine,
        })
    }

    /// Runs a whole query through `generator`. If the generator fails, the query is recorded
    /// as failed and the generation error returned.
    pub async fn run_query(
        &mut self,
        input: QueryInput,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<QueryOutcome> {
        let machine = QueryMachine::begin(self, input)?;
        crate::machine::run(self, machine, generator, sink).await
    }

    /// [`Engine::run_query`] on the calling thread, without an async runtime.
    pub fn run_query_blocking(
        &mut self,
        input: QueryInput,
        generator: &dyn Generate,
        sink: &mut dyn TokenSink,
    ) -> Result<QueryOutcome> {
        block_on(self.run_query(input, generator, sink))
    }

    /// The query with that id, on the current branch.
    pub fn get_query(&self, id: QueryId) -> Option<&WorldQuery> {
        self.world().query(id)
    }

    /// The `limit` most recent queries, newest first.
    pub fn recent_queries(&self, limit: usize) -> Vec<&WorldQuery> {
        self.world().recent_queries(limit).collect()
    }
}
