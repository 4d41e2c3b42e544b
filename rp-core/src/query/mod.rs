//! The world query (docs/architecture.md): natural-language questions over the world, answered by
//! the host's model in an iterative loop. The model sees a [`QueryContext`] (entities in full or in
//! brief, relationships, kinds, and for a query asked as an entity its own memories) and either
//! answers ([`Answer`]: content, confidence, sources, follow-ups) or asks for more
//! ([`NeedsMoreInfo`]) through the [`InfoCapability`]s built from the context, whose constraints
//! keep it from naming what is not there. The loop is a sans-IO machine ([`QueryMachine`],
//! docs/architecture.md); every query is recorded in the log (`QueryAsked`, `QueryAnswered` /
//! `QueryFailed`), so [`crate::World::query`] and [`crate::World::recent_queries`] read it after a
//! restart, and replay never calls the model.
//!
//! A query may be asked about the past ([`QueryConfig::as_of`], docs/history.md): its context is
//! built from the world as it was then (`past.rs` holds that world's indexes), and its record is
//! committed today, noting the point it asked about.
//!
//! A query asked as an entity sees only what that entity could know (docs/architecture.md, "What an
//! entity may know"): see `scope.rs` for the rules.

mod capability;
mod context;
mod machine;
mod past;
mod prompt;
mod response;
mod scope;

pub use crate::lore::{DefinitionIndex, definitions_of};
pub use capability::{
    CapabilityId, CapabilityParameter, InfoCapability, MAX_RELATIONSHIP_HOPS, ParameterConstraints,
    ParameterType, build_capabilities, format_capabilities_for_prompt, response_schema,
    validate_info_request,
};
pub use context::{
    ContextEntity, ContextMemory, ContextStats, DefinitionSummary, EntitySummary, QueryContext,
    RelationshipSummary,
};
pub use machine::{Query, QueryInput, QueryMachine, QueryOutcome};
pub use response::{
    Answer, AnswerSource, Confidence, InfoRequest, MAX_ANSWER_CHARS, MAX_FOLLOW_UPS,
    MAX_NOTE_CHARS, MAX_OUTPUT_BYTES, MAX_REQUESTS, MAX_SOURCES, NeedsMoreInfo, QueryResponse,
    answer_schema, parse_response,
};
// The records of a query, where its host finds them (they live in `crate::model`).
pub use crate::model::{
    MAX_INFO_REQUESTS, MAX_INITIAL_ENTITIES, MAX_QUERY_CHARS, MAX_RESULT_LIMIT, MAX_ROUNDS,
    QueryConfig, QueryRound, QueryStatus, RequestRun, WorldQuery, check_query_text,
};
