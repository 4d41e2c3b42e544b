//! Applying the records of world queries: asked, answered, failed.

use super::{check_text, check_texts, distinct};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{Answer, EntityId, MAX_TEXT_BYTES, Millis, QueryConfig, QueryId, QueryRound};

impl World {
    /// `query_asked`: a new query, processing from the start.
    pub(super) fn ask_query(
        &mut self,
        id: QueryId,
        text: &str,
        asked_as: Option<EntityId>,
        config: &QueryConfig,
        at: Millis,
    ) -> Result<()> {
        self.check_fresh(id.0)?;
        if let Some(e) = asked_as {
            self.get_entity(e)?;
        }
        let mut query =
            crate::model::WorldQuery::new(id, text.to_owned(), asked_as, config.clone(), at)?;
        query.start_processing()?;
        self.take_id(id.0);
        self.queries.insert(query);
        Ok(())
    }

    /// `query_answered`: a processing query completed with its rounds, context and answer.
    pub(super) fn answer_query(
        &mut self,
        id: QueryId,
        info_requests: u32,
        rounds: &[QueryRound],
        context: &[EntityId],
        answer: &Answer,
        at: Millis,
    ) -> Result<()> {
        let mut query = self.query_ending(id, info_requests, rounds, at)?;
        distinct("query context", context)?;
        for e in context {
            self.get_entity(*e)?;
        }
        answer
            .check(&|e| context.contains(&e))
            .map_err(|m| Error::invalid("query answer", m))?;
        query.context = context.to_vec();
        query.complete(answer.clone(), at)?;
        self.queries.insert(query);
        Ok(())
    }

    /// `query_failed`: a processing query failed with its rounds and the reason.
    pub(super) fn fail_query(
        &mut self,
        id: QueryId,
        info_requests: u32,
        rounds: &[QueryRound],
        error: &str,
        at: Millis,
    ) -> Result<()> {
        let mut query = self.query_ending(id, info_requests, rounds, at)?;
        if error.trim().is_empty() {
            return Err(Error::invalid("query", "a failure needs its reason"));
        }
        check_text("query", error)?;
        query.fail(error.to_owned(), at)?;
        self.queries.insert(query);
        Ok(())
    }

    /// A copy of the processing query `id` with its rounds, checked, ready to complete or fail.
    fn query_ending(
        &self,
        id: QueryId,
        info_requests: u32,
        rounds: &[crate::model::QueryRound],
        at: Millis,
    ) -> Result<crate::model::WorldQuery> {
        let query = self
            .queries
            .get(&id)
            .ok_or_else(|| Error::not_found("query", id))?;
        if query.is_finished() {
            return Err(Error::conflict(format!(
                "{id} is already {}",
                query.status.as_str()
            )));
        }
        if info_requests > query.config.max_info_requests {
            return Err(Error::invalid(
                "query",
                format!(
                    "{info_requests} info requests, more than the {} allowed",
                    query.config.max_info_requests
                ),
            ));
        }
        if rounds.len() > crate::model::MAX_ROUNDS {
            return Err(Error::invalid(
                "query",
                format!("more than {} rounds", crate::model::MAX_ROUNDS),
            ));
        }
        for r in rounds {
            check_text("query round", &r.output.text)?;
            check_texts("query round", r.forced.iter().chain(&r.problem))?;
            check_texts("query round", r.output.model.iter())?;
            for q in &r.requests {
                check_text("query request", &q.request.capability_id)?;
                check_text("query request", &q.request.reason)?;
                check_text("query request", &q.summary)?;
                check_texts("query request", q.refused.iter())?;
                if q.request.params.to_string().len() > MAX_TEXT_BYTES {
                    return Err(Error::invalid(
                        "query request",
                        "the parameters are too long",
                    ));
                }
            }
        }
        if at < query.created {
            return Err(Error::invalid(
                "query",
                format!("it ends at {at}, before it was asked ({})", query.created),
            ));
        }
        let mut query = query.clone();
        query.info_requests = info_requests;
        query.rounds = rounds.to_vec();
        Ok(query)
    }
}
