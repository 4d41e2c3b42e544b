//! The world model (docs/architecture.md): ids, entities, containers, activities, directed edges,
//! group nodes, memories, scoped events, threads, scenes and utterances. Plain serialisable data;
//! the rules that change them live in [`crate::log`].

mod activity;
mod belief;
pub mod card;
mod container;
mod drives;
mod edge;
mod effect;
mod entity;
mod facts;
mod feedback;
mod generation;
mod group;
mod history;
mod ids;
mod lorebook;
mod memory;
mod query;
mod requirement;
pub mod retention;
mod rule;
mod stimulus;
mod story;
mod thought;
mod utterance;

pub use activity::{Action, Activity, Position};
pub use belief::{
    BeliefObservation, BeliefSource, Feeling, Held, MAX_BELIEF_TEXT_CHARS, MAX_BELIEVED_FEELINGS,
    MAX_BELIEVED_TRAITS, PersonBelief, decayed,
};
pub use card::{Card, Greetings, Spec};
pub use container::{Container, ContainerProperties, Slot};
pub use drives::{
    Belief, Drive, DriveConfig, DriveSettings, HOUR_MS, Initiation, Mind, Mode, Personality,
    Weights,
};
pub use edge::{Edge, MAX_IMPRINTS, MAX_KNOWLEDGE};
pub use effect::{
    Effect, GistPromotion, ItemPromotion, KnowledgePromotion, Promotion, SummaryPromotion,
};
pub use entity::{Entity, EntityState};
pub use facts::FactSheet;
pub use feedback::{
    Awaiting, Feedback, LEARNED_FACTOR_RANGE, LEARNED_STEPS, Learned, MAX_FEEDBACK_NOTES,
    MAX_REPLY_CHARS, Reply, Sentiment, WeightChange, WeightTarget,
};
pub use generation::{GenerateResult, Purpose, ToolCall, ToolRun};
pub use group::{Group, MIN_GROUP_SIZE};
pub use history::{AsOf, HistoryPoint};
pub(crate) use ids::elapsed;
pub use ids::{
    ContainerId, EntityId, GroupId, MemoryId, Millis, QueryId, RuleId, SceneId, ScopedEventId, Seq,
    ThreadId, UtteranceId,
};
pub use lorebook::{
    BookEntry, LoreTimer, Lorebook, MAX_BOOK_BYTES, MAX_BOOK_ENTRIES, MAX_ENTRY_KEYS,
    SelectiveLogic, TimerKind, regex_key,
};
pub use memory::{
    DecayStage, FadeRule, MAX_EMBEDDING_DIMENSIONS, MAX_FEELING_BYTES, Memory, MemoryKind,
    MemorySummary, StageChange, WitnessSet, check_embedding,
};
pub use query::{
    Answer, AnswerSource, Confidence, InfoRequest, MAX_ANSWER_CHARS, MAX_FOLLOW_UPS,
    MAX_INFO_REQUESTS, MAX_INITIAL_ENTITIES, MAX_NOTE_CHARS, MAX_QUERY_CHARS, MAX_REQUESTS,
    MAX_RESULT_LIMIT, MAX_ROUNDS, MAX_SOURCES, QueryConfig, QueryRound, QueryStatus, RequestRun,
    WorldQuery, check_query_text,
};
pub use requirement::{
    Guard, HeldRequirement, MAX_GUARDS, MAX_REQUIREMENT_NAME_CHARS, MAX_REQUIREMENT_TEXT_CHARS,
    MAX_REQUIREMENTS, Requirement,
};
pub use rule::{
    DEFAULT_RULE_WEIGHT, Intent, Intention, MAX_INTENTIONS, MAX_RULE_TEXT_CHARS, MAX_RULES, Rule,
    RuleSource, Trigger,
};
pub use stimulus::{
    BUILTIN_STIMULUS_KINDS, InboxFate, InboxNote, MAX_INBOX_NOTES, MAX_NOTICED, MAX_PAYLOAD_BYTES,
    Priority, Stimulus,
};
pub use story::{EventStatus, Scene, ScopedEvent, Skip, SystemLine, Thread, ThreadStatus};
pub use thought::{Classification, Layer, MAX_INTENT_LABEL_CHARS, ThoughtEffect};
pub use utterance::Utterance;

/// Longest text field (a fact line, an utterance, a summary), in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
