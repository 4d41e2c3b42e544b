//! The events of the log. Each records an outcome (the generated text, the new activity, the
//! new edge), never an intention, so replay needs neither the model nor randomness.

use crate::model::{
    Activity, BeliefObservation, Classification, ContainerId, ContainerProperties, DriveConfig,
    Edge, EntityId, EntityState, EventStatus, FactSheet, Feedback, Group, GroupId, Initiation,
    LoreTimer, Memory, MemoryId, MemorySummary, Millis, Personality, Promotion, QueryId, Rule,
    RuleId, Scene, SceneId, ScopedEvent, ScopedEventId, Skip, Slot, StageChange, Stimulus,
    SystemLine, ThoughtEffect, Thread, ThreadId, ThreadStatus, Utterance, UtteranceId,
    WeightChange,
};
use serde::{Deserialize, Serialize};

/// Settings fixed when a world is created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldSettings {
    /// How many recent utterances the world keeps in its state (the full record is the log).
    pub dialogue_window: u32,
    /// The seed of the world's random generator (`random()`, `roll()`). 0 when creating
    /// through [`crate::Engine`] means: derive one from the world's name and creation time.
    #[serde(default)]
    pub seed: u64,
}

impl Default for WorldSettings {
    fn default() -> Self {
        WorldSettings {
            dialogue_window: 64,
            seed: 0,
        }
    }
}

/// An event of the log. [`crate::World::apply`] validates it and applies it, or rejects it
/// and changes nothing.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// The first event of every world.
    WorldCreated {
        /// The world's name.
        name: String,
        /// The host clock at creation.
        now: Millis,
        /// Fixed settings.
        #[serde(default)]
        settings: WorldSettings,
    },
    /// A new entity (no position yet: follow with [`Event::ActivityChanged`]).
    EntityCreated {
        /// The new id (unused so far).
        id: EntityId,
        /// The world-file key, if any.
        #[serde(default)]
        key: Option<String>,
        /// Unique name.
        name: String,
        /// Other names.
        #[serde(default)]
        aliases: Vec<String>,
        /// Fact sheet.
        #[serde(default)]
        facts: FactSheet,
        /// Spoken for by the host.
        #[serde(default)]
        host_controlled: bool,
        /// Initial state.
        #[serde(default)]
        state: EntityState,
    },
    /// An entity's identity edited; `None` fields are unchanged.
    EntityEdited {
        /// Which entity.
        id: EntityId,
        /// New name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// New aliases.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        aliases: Option<Vec<String>>,
        /// New fact sheet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        facts: Option<FactSheet>,
        /// New host-controlled flag.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host_controlled: Option<bool>,
    },
    /// An entity removed with its edges, group memberships and memories. It must hold no
    /// items, and no other entity may hold it.
    EntityRemoved {
        /// Which entity.
        id: EntityId,
    },
    /// A new container.
    ContainerCreated {
        /// The new id.
        id: ContainerId,
        /// The world-file key, if any.
        #[serde(default)]
        key: Option<String>,
        /// Its name.
        name: String,
        /// Facts.
        #[serde(default)]
        facts: FactSheet,
        /// Enclosing container.
        #[serde(default)]
        parent: Option<ContainerId>,
        /// Slots.
        #[serde(default)]
        slots: Vec<Slot>,
        /// Properties.
        #[serde(default)]
        properties: ContainerProperties,
    },
    /// A container redefined (every field is the new value).
    ContainerEdited {
        /// Which container.
        id: ContainerId,
        /// Name.
        name: String,
        /// Facts.
        #[serde(default)]
        facts: FactSheet,
        /// Enclosing container.
        #[serde(default)]
        parent: Option<ContainerId>,
        /// Slots.
        #[serde(default)]
        slots: Vec<Slot>,
        /// Properties.
        #[serde(default)]
        properties: ContainerProperties,
    },
    /// A container removed; it must be empty (no entities, no child containers).
    ContainerRemoved {
        /// Which container.
        id: ContainerId,
    },
    /// An entity's activity replaced: a move to a container and slot, a posture, an action,
    /// what it holds.
    ActivityChanged {
        /// Whose.
        entity: EntityId,
        /// The new activity record.
        activity: Activity,
    },
    /// An entity's inventory replaced.
    InventoryChanged {
        /// Whose.
        entity: EntityId,
        /// The items it now carries.
        inventory: Vec<EntityId>,
    },
    /// An entity's mood, goals and status replaced.
    EntityStateChanged {
        /// Whose.
        entity: EntityId,
        /// The new state.
        state: EntityState,
    },
    /// A directed edge created or replaced.
    EdgeUpdated {
        /// The new edge.
        edge: Edge,
    },
    /// A directed edge removed.
    EdgeRemoved {
        /// From.
        from: EntityId,
        /// To.
        to: EntityId,
    },
    /// A group node created or replaced.
    GroupUpdated {
        /// The group.
        group: Group,
    },
    /// A group node removed.
    GroupRemoved {
        /// Which group.
        id: GroupId,
    },
    /// The host's player said something.
    UserTurn {
        /// What was said; the speaker must be host-controlled.
        utterance: Utterance,
    },
    /// An engine-controlled character said something.
    AssistantTurn {
        /// What was said; the speaker must not be host-controlled.
        utterance: Utterance,
    },
    /// A memory formed.
    MemoryAdded {
        /// The memory.
        memory: Memory,
    },
    /// A memory removed.
    MemoryRemoved {
        /// Which memory.
        id: MemoryId,
    },
    /// Memories were recalled (retrieved into a prompt) at `at`: each one's last-accessed time
    /// becomes `at` and its access count goes up by one (reinforcement: docs/architecture.md,
    /// "Memory").
    MemoriesRecalled {
        /// Which memories, each once.
        ids: Vec<MemoryId>,
        /// When (host clock).
        at: Millis,
    },
    /// The host clock moved forward.
    TimeAdvanced {
        /// The new time; never earlier than the current one.
        to: Millis,
    },
    /// A time skip ([`crate::skip`]): the clock jumps from `from` (the world's time) to `to`.
    /// The events of the skip (scene closes before it; due transitions and activity resets
    /// after it) share its commit.
    TimeSkipped {
        /// The world's time when the skip began.
        from: Millis,
        /// The time landed at; later than `from`.
        to: Millis,
        /// Which skip.
        skip: Skip,
    },
    /// Response control decided for an entity; the outcome and every random draw it took.
    ResponseDecided {
        /// Whose sheet was evaluated.
        entity: EntityId,
        /// Whether it responds.
        respond: bool,
        /// A `$retry` delay, if one fired.
        #[serde(default)]
        retry_ms: Option<u64>,
        /// The 1-based sheet lines that fired.
        #[serde(default)]
        fired: Vec<u32>,
        /// Every uniform draw taken from the world's generator, in order.
        #[serde(default)]
        draws: Vec<f64>,
    },
    /// A generation made for a turn, as the host's model gave it (text, tool calls, token
    /// counts, model id): the record of what was asked of the model and what it cost. Replay
    /// changes nothing for it.
    Generated {
        /// Why it was asked.
        purpose: crate::model::Purpose,
        /// What came back.
        result: crate::model::GenerateResult,
    },
    /// A thread opened: an unresolved tension, sticky in its participants' prompts.
    ThreadOpened {
        /// The thread (status open).
        thread: Thread,
    },
    /// An open thread resolved or dropped.
    ThreadClosed {
        /// Which thread.
        id: ThreadId,
        /// `resolved` or `dropped`.
        status: ThreadStatus,
    },
    /// A scoped event planned (status planned). Its conditions compile and every entity it
    /// names exists.
    ScopedEventPlanned {
        /// The event.
        event: ScopedEvent,
    },
    /// A planned scoped event started. Its preconditions held when it was recorded (replay
    /// does not evaluate them again); the outcomes of its `on_start` effects follow in the
    /// same commit.
    ScopedEventStarted {
        /// Which event.
        id: ScopedEventId,
        /// When (host clock; never after the world's clock).
        at: Millis,
        /// Every draw its conditions took from the world's generator, in order.
        #[serde(default)]
        draws: Vec<f64>,
    },
    /// A scoped event closed: completed, cancelled or expired. Its props leave every prompt.
    /// Only a completed event promotes; the outcomes of its `on_complete` effects and of the
    /// promotion (inventory, edge, memory events) follow in the same commit.
    ScopedEventClosed {
        /// Which event.
        id: ScopedEventId,
        /// `completed`, `cancelled` or `expired`.
        status: EventStatus,
        /// When (host clock; never after the world's clock).
        at: Millis,
        /// What survives it (empty unless completed).
        #[serde(default)]
        promotion: Promotion,
    },
    /// The reports of a state-update pass, as judged: each applied (its changes are the
    /// events that follow in the same commit) or rejected with the reason. Host actions carry
    /// the host's answer, so replay never asks the host again.
    ReportsJudged {
        /// In the order the model gave them.
        reports: Vec<JudgedReport>,
    },
    /// Tools a reply generation called, run by the engine: each call's arguments, result and
    /// the draws it took, so replay reads them and never rolls again.
    ToolsRun {
        /// Whose reply called them.
        speaker: EntityId,
        /// The calls, in order.
        calls: Vec<crate::model::ToolRun>,
    },
    /// A system line injected for the next generation to process.
    SystemLineInjected {
        /// The line.
        line: SystemLine,
    },
    /// System lines shown to a responder: they leave the prompts.
    SystemLinesShown {
        /// Which lines.
        ids: Vec<u64>,
    },
    /// A scene opened in a container. Lines that name it join it (see
    /// [`Utterance::scene`]); a container may hold more than one open scene while an older
    /// one waits for its summaries, and its newest open scene is its current one.
    SceneOpened {
        /// The scene: a fresh id, an existing container, not closed, no lines yet; its
        /// witnesses are those present when it opened.
        scene: Scene,
    },
    /// An open scene closed. The same commit carries each witness's own summary of it (a
    /// [`crate::MemoryKind::SceneSummary`] memory owned by that witness): see
    /// [`crate::scene`].
    SceneClosed {
        /// Which scene.
        id: SceneId,
        /// When (host clock); not before it opened.
        at: Millis,
    },
    /// A world file was applied; its text is the base the next patch is compared with.
    WorldFileApplied {
        /// The file name as given.
        file: String,
        /// The file's text.
        text: String,
    },
    /// A question was asked about the world (a [`crate::model::WorldQuery`] starts
    /// processing). Always committed with the `QueryAnswered` or `QueryFailed` that ends it.
    QueryAsked {
        /// The new query's id.
        id: QueryId,
        /// The question.
        text: String,
        /// Asked as this entity; `None`: by the host.
        #[serde(default)]
        asked_as: Option<EntityId>,
        /// How it ran.
        config: crate::model::QueryConfig,
        /// The host clock.
        at: Millis,
    },
    /// A query answered: every round (the model's outputs, the requests and what they
    /// fetched), the final context's entities and the answer.
    QueryAnswered {
        /// Which query (processing).
        id: QueryId,
        /// NeedsMoreInfo rounds fulfilled.
        info_requests: u32,
        /// Every generation, in order.
        rounds: Vec<crate::model::QueryRound>,
        /// The entities of the final context; every source is one of them.
        context: Vec<EntityId>,
        /// The answer.
        answer: crate::model::Answer,
        /// The host clock.
        at: Millis,
    },
    /// A query ended without an answer.
    QueryFailed {
        /// Which query (processing).
        id: QueryId,
        /// NeedsMoreInfo rounds fulfilled.
        info_requests: u32,
        /// Every generation, in order.
        rounds: Vec<crate::model::QueryRound>,
        /// Why.
        error: String,
        /// The host clock.
        at: Millis,
    },
    /// Drive settings set (docs/drives.md): the world's (no `entity`) or one entity's, laid
    /// over the world's. Each replaces the previous settings of the same scope.
    DrivesConfigured {
        /// Whose; `None`: the world's.
        #[serde(default)]
        entity: Option<EntityId>,
        /// The settings.
        config: Box<DriveConfig>,
    },
    /// An entity's personality set (docs/drives.md).
    PersonalitySet {
        /// Whose.
        entity: EntityId,
        /// The traits.
        personality: Personality,
    },
    /// A stimulus delivered to a character's inbox. Applying it queues, merges, drops or
    /// filters it by the inbox's rules (a sleeper's disturbance grows, and may wake it).
    StimulusNotified {
        /// To whom.
        entity: EntityId,
        /// The stimulus (a fresh id, arriving at the world's time).
        stimulus: Stimulus,
    },
    /// What a tick did to one character: fell asleep or woke, processed stimuli from its inbox
    /// (they raise curiosity and reach its next prompt), filtered others out by its mode.
    MindTicked {
        /// Whose.
        entity: EntityId,
        /// When (the world's time).
        at: Millis,
        /// `Some(true)`: fell asleep; `Some(false)`: woke.
        #[serde(default)]
        asleep: Option<bool>,
        /// Stimuli processed.
        #[serde(default)]
        processed: Vec<u64>,
        /// Stimuli filtered out.
        #[serde(default)]
        filtered: Vec<u64>,
    },
    /// A character started a conversation; its line follows in the same commit.
    Initiated {
        /// Who, to whom, about what, with what pressure.
        initiation: Initiation,
        /// When (the world's time).
        at: Millis,
    },
    /// A character's initiations wait until `until` (its line could not be generated).
    InitiationHeld {
        /// Whose.
        entity: EntityId,
        /// Until when.
        until: Millis,
    },
    /// The host reported an entity's availability (the player idle or away): every
    /// character believes it, with a confidence that decays from `at`.
    AvailabilityReported {
        /// About whom.
        about: EntityId,
        /// In [0, 1]: 0 away, 1 present and attentive.
        availability: f64,
        /// When (the world's time).
        at: Millis,
    },
    /// A character came to believe something about a person (docs/beliefs.md): the aspects
    /// given replace what it believed, each with the observation's confidence and time.
    BeliefObserved {
        /// Who believes what about whom, how surely, from what source, when (the world's time).
        observation: BeliefObservation,
    },
    /// A person who is only talked about (a mother, a boss) became a lightweight entity
    /// (docs/beliefs.md): no place, no mind, no lines; beliefs and edges may name it.
    PersonMentioned {
        /// The new id (unused so far).
        id: EntityId,
        /// The world-file key, if any (a world file's `mentioned = true` entity).
        #[serde(default)]
        key: Option<String>,
        /// Unique name ("Wren's mother" until a name is known).
        name: String,
        /// What was said of it, one fact per line.
        #[serde(default)]
        facts: FactSheet,
        /// Who mentioned it first, if anyone did (the host may mention people too).
        #[serde(default)]
        by: Option<EntityId>,
        /// When (the world's time).
        at: Millis,
    },
    /// A decay pass (docs/memory.md): the memories whose retention at `at` fell below their
    /// stage's threshold moved on without a model (a summary to a residue, whose feeling goes
    /// onto its owner's edge toward whom it was about; a residue to forgotten). Whole memories
    /// due for a summary follow as [`Event::MemoriesSummarized`].
    DecayPassed {
        /// When (the world's time).
        at: Millis,
        /// The memories moved on.
        #[serde(default)]
        changes: Vec<StageChange>,
        /// The earliest moment a memory's retention can next cross a threshold, as this pass
        /// saw it (`None`: none ever will).
        #[serde(default)]
        next: Option<Millis>,
    },
    /// Whole memories of one owner reduced to summaries (the fast model's texts, purpose
    /// `summary`): each must have fallen below the summary threshold by `at`.
    MemoriesSummarized {
        /// Whose memories.
        owner: EntityId,
        /// When (the world's time).
        at: Millis,
        /// The summaries.
        summaries: Vec<MemorySummary>,
    },
    /// A character reflected (docs/memory.md): the insights the smart model drew from its own
    /// memories, each citing the memories it rests on (reinforced as if recalled). Its
    /// accumulated significance starts again from 0, also when the answer was rejected.
    Reflected {
        /// Who.
        entity: EntityId,
        /// When (the world's time).
        at: Millis,
        /// The insights: memories of kind `reflection`, witnessed by the owner alone.
        #[serde(default)]
        insights: Vec<Memory>,
        /// Why the answer was rejected after its retry (nothing of it applied).
        #[serde(default)]
        rejected: Option<String>,
    },
    /// A character came to hold a rule (docs/rules.md): from the world file, the host or the
    /// model. Its id is the world's next.
    RuleAdded {
        /// The rule, as made (`created_at` and `since` the world's time).
        rule: Rule,
    },
    /// A rule was let go: removed by the host, or forgotten when its weight fell below
    /// `rule_forget_below` (still in the log: a rewind brings it back).
    RuleRemoved {
        /// Whose rule.
        entity: EntityId,
        /// Which.
        rule: RuleId,
        /// When (the world's time).
        at: Millis,
        /// `true`: its weight faded below the threshold; `false`: removed by the host.
        #[serde(default)]
        forgotten: bool,
    },
    /// A rule was triggered: it fired (its intent applied, its weight rebased and its clock
    /// reset), or its condition did not hold (`held`; an `at` rule is then spent).
    RuleFired {
        /// Whose rule.
        entity: EntityId,
        /// Which.
        rule: RuleId,
        /// When (the world's time).
        at: Millis,
        /// Its condition did not hold: nothing done.
        #[serde(default)]
        held: bool,
        /// What triggered it, in words.
        cause: String,
        /// The stimulus it fired on, for a stimulus rule.
        #[serde(default)]
        stimulus: Option<u64>,
    },
    /// A character learned from the answer to its initiation (or the lack of one): the
    /// weights that made it speak moved, each change with its old and new value. A rejected
    /// classification changes no weight (`changes` empty) but ends the wait.
    FeedbackLearned {
        /// Who learned.
        entity: EntityId,
        /// What it read from the answer.
        feedback: Feedback,
        /// The weights moved.
        #[serde(default)]
        changes: Vec<WeightChange>,
        /// Why, in words ("Wren answered curtly: 2 words after 4 min, negative").
        reason: String,
        /// When (the world's time).
        at: Millis,
    },
    /// A lorebook was added (docs/cards.md, "Lorebooks"): its JSON as given (World Info, a
    /// `lorebook_v3` or a card's `character_book`), for the world or for one character.
    LorebookAdded {
        /// Its id (the world's next).
        id: u64,
        /// The character whose book it is (`None`: every character's).
        #[serde(default)]
        owner: Option<EntityId>,
        /// Its JSON, as given.
        json: String,
    },
    /// The alternatives of a line (docs/edits.md, "Swipes"): every text the model gave for it,
    /// and which one is the line. Prompts and memories hold only the line (the chosen one).
    AlternativesSet {
        /// The line.
        line: UtteranceId,
        /// Every alternative, in the order they were generated.
        texts: Vec<String>,
        /// Which is the line.
        chosen: u32,
    },
    /// A character's lorebook timers after a turn's prompt (docs/cards.md, "Timed effects"):
    /// the sticky and cooldown effects it holds, replacing those it held.
    LoreTimersSet {
        /// Whose timers.
        entity: EntityId,
        /// Every timer it now holds.
        #[serde(default)]
        timers: Vec<LoreTimer>,
    },
    /// A character card (docs/cards.md) was attached to an entity: its JSON as given, kept
    /// for export; the entity's facts were made from it by the event before.
    CardAttached {
        /// The entity.
        entity: EntityId,
        /// The card's JSON, as given.
        card: String,
    },
    /// A file of an entity's card (docs/cards.md, "Assets"): a CHARX's file at its path in the
    /// archive, or the card's image. Replaces the file at that path; [`Event::CardAttached`]
    /// clears them. An event of its own rather than a field of `CardAttached`: the host sets an
    /// image on an entity made without a card, and one record per file keeps each record within
    /// the asset's bounds.
    CardAsset {
        /// The entity.
        entity: EntityId,
        /// Its path in the card's archive (`assets/icon/image/main.png`).
        path: String,
        /// Its bytes (MessagePack `bin` in the log, base64 in JSON).
        #[serde(with = "crate::model::card::bytes")]
        bytes: Vec<u8>,
    },
    /// Stimuli a character processed went past arithmetic and rules to the fast model
    /// (docs/drives.md, "Layers"): one whose arithmetic was not confident, or a pattern of one
    /// kind accumulating. Records why, and the classification (or why it could not be had).
    StimulusClassified {
        /// Whose stimuli.
        entity: EntityId,
        /// When (the world's time).
        at: Millis,
        /// The stimuli's ids.
        stimuli: Vec<u64>,
        /// Their kind.
        kind: String,
        /// Why they were hoisted, in words.
        reason: String,
        /// A pattern (many of one kind within the window) rather than one stimulus.
        #[serde(default)]
        pattern: bool,
        /// What the fast model made of them.
        #[serde(default)]
        classification: Option<Classification>,
        /// Why no classification was had (nothing else applied).
        #[serde(default)]
        rejected: Option<String>,
    },
    /// A character thought about stimuli the fast model hoisted (the smart model, purpose
    /// `think`): the thought is a memory of its own, and may move a drive or leave an
    /// intention to speak to someone.
    ThoughtFormed {
        /// Who.
        entity: EntityId,
        /// When (the world's time).
        at: Millis,
        /// The stimuli it was about.
        stimuli: Vec<u64>,
        /// Why it was hoisted to thought, in words.
        reason: String,
        /// The thought (kind `thought`, witnessed by its owner alone); `None` when rejected.
        #[serde(default)]
        memory: Option<Memory>,
        /// What it does besides.
        #[serde(default)]
        effects: Vec<ThoughtEffect>,
        /// Why the answer was rejected after its retry (nothing of it applied).
        #[serde(default)]
        rejected: Option<String>,
    },
    /// A requirement added (docs/requirements.md): a condition that guards transitions.
    RequirementAdded {
        /// The requirement (a fresh id; its condition compiles, its names exist).
        requirement: crate::model::Requirement,
    },
    /// A requirement removed.
    RequirementRemoved {
        /// Which requirement.
        id: String,
    },
    /// A requirement's being pending announced (`line`: the system line injected, once each
    /// time it becomes pending), or its being met again noted (`line` `None`: the next time it
    /// becomes pending is announced again). Checked against the world when applied.
    RequirementAnnounced {
        /// Which requirement.
        id: String,
        /// The system line announcing it.
        #[serde(default)]
        line: Option<SystemLine>,
    },
}

impl Event {
    /// The event's kind, as a stable snake_case name.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::WorldCreated { .. } => "world_created",
            Event::EntityCreated { .. } => "entity_created",
            Event::EntityEdited { .. } => "entity_edited",
            Event::EntityRemoved { .. } => "entity_removed",
            Event::ContainerCreated { .. } => "container_created",
            Event::ContainerEdited { .. } => "container_edited",
            Event::ContainerRemoved { .. } => "container_removed",
            Event::ActivityChanged { .. } => "activity_changed",
            Event::InventoryChanged { .. } => "inventory_changed",
            Event::EntityStateChanged { .. } => "entity_state_changed",
            Event::EdgeUpdated { .. } => "edge_updated",
            Event::EdgeRemoved { .. } => "edge_removed",
            Event::GroupUpdated { .. } => "group_updated",
            Event::GroupRemoved { .. } => "group_removed",
            Event::UserTurn { .. } => "user_turn",
            Event::AssistantTurn { .. } => "assistant_turn",
            Event::MemoryAdded { .. } => "memory_added",
            Event::MemoryRemoved { .. } => "memory_removed",
            Event::MemoriesRecalled { .. } => "memories_recalled",
            Event::TimeAdvanced { .. } => "time_advanced",
            Event::TimeSkipped { .. } => "time_skipped",
            Event::ThreadOpened { .. } => "thread_opened",
            Event::ThreadClosed { .. } => "thread_closed",
            Event::ScopedEventPlanned { .. } => "scoped_event_planned",
            Event::ScopedEventStarted { .. } => "scoped_event_started",
            Event::ScopedEventClosed { .. } => "scoped_event_closed",
            Event::ReportsJudged { .. } => "reports_judged",
            Event::ToolsRun { .. } => "tools_run",
            Event::SystemLineInjected { .. } => "system_line_injected",
            Event::SystemLinesShown { .. } => "system_lines_shown",
            Event::SceneOpened { .. } => "scene_opened",
            Event::SceneClosed { .. } => "scene_closed",
            Event::WorldFileApplied { .. } => "world_file_applied",
            Event::ResponseDecided { .. } => "response_decided",
            Event::Generated { .. } => "generated",
            Event::QueryAsked { .. } => "query_asked",
            Event::QueryAnswered { .. } => "query_answered",
            Event::QueryFailed { .. } => "query_failed",
            Event::DrivesConfigured { .. } => "drives_configured",
            Event::PersonalitySet { .. } => "personality_set",
            Event::StimulusNotified { .. } => "stimulus_notified",
            Event::MindTicked { .. } => "mind_ticked",
            Event::Initiated { .. } => "initiated",
            Event::InitiationHeld { .. } => "initiation_held",
            Event::AvailabilityReported { .. } => "availability_reported",
            Event::BeliefObserved { .. } => "belief_observed",
            Event::PersonMentioned { .. } => "person_mentioned",
            Event::DecayPassed { .. } => "decay_passed",
            Event::MemoriesSummarized { .. } => "memories_summarized",
            Event::Reflected { .. } => "reflected",
            Event::RuleAdded { .. } => "rule_added",
            Event::RuleRemoved { .. } => "rule_removed",
            Event::RuleFired { .. } => "rule_fired",
            Event::FeedbackLearned { .. } => "feedback_learned",
            Event::CardAttached { .. } => "card_attached",
            Event::CardAsset { .. } => "card_asset",
            Event::LorebookAdded { .. } => "lorebook_added",
            Event::LoreTimersSet { .. } => "lore_timers_set",
            Event::AlternativesSet { .. } => "alternatives_set",
            Event::StimulusClassified { .. } => "stimulus_classified",
            Event::ThoughtFormed { .. } => "thought_formed",
            Event::RequirementAdded { .. } => "requirement_added",
            Event::RequirementRemoved { .. } => "requirement_removed",
            Event::RequirementAnnounced { .. } => "requirement_announced",
        }
    }

    /// What the event touches, for rewind previews.
    pub fn touched(&self) -> Touched {
        let mut t = Touched::default();
        match self {
            Event::WorldCreated { .. }
            | Event::TimeAdvanced { .. }
            | Event::WorldFileApplied { .. } => {}
            Event::ResponseDecided { entity, .. } => t.entities.push(*entity),
            Event::TimeSkipped { skip, .. } => {
                if let Skip::Elision { entity } = skip {
                    t.entities.push(*entity)
                }
            }
            Event::Generated { .. } | Event::ReportsJudged { .. } => {}
            Event::SystemLineInjected { line } => {
                t.entities.extend(line.audience.iter().flatten().copied())
            }
            Event::SystemLinesShown { .. } => {}
            Event::ToolsRun { speaker, .. } => t.entities.push(*speaker),
            Event::ThreadOpened { thread } => {
                t.entities.extend(thread.participants.iter().copied())
            }
            Event::ThreadClosed { .. } | Event::ScopedEventStarted { .. } => {}
            Event::ScopedEventPlanned { event } => {
                t.entities.extend(event.participants.iter().copied())
            }
            Event::ScopedEventClosed { promotion, .. } => {
                let p = promotion;
                t.entities
                    .extend(p.items.iter().flat_map(|i| [i.item, i.to]));
                t.edges.extend(p.knowledge.iter().map(|k| (k.who, k.about)));
                t.edges.extend(p.summaries.iter().map(|s| (s.from, s.to)));
                t.entities.extend(p.gists.iter().map(|g| g.witness));
            }
            Event::SceneOpened { scene } => {
                t.scenes.push(scene.id);
                t.containers.push(scene.container);
                t.entities.extend(scene.witnesses.iter());
            }
            Event::SceneClosed { id, .. } => t.scenes.push(*id),
            Event::EntityCreated { id, .. }
            | Event::EntityEdited { id, .. }
            | Event::EntityRemoved { id } => t.entities.push(*id),
            Event::ContainerCreated { id, .. }
            | Event::ContainerEdited { id, .. }
            | Event::ContainerRemoved { id } => t.containers.push(*id),
            Event::ActivityChanged { entity, .. }
            | Event::InventoryChanged { entity, .. }
            | Event::EntityStateChanged { entity, .. } => t.entities.push(*entity),
            Event::EdgeUpdated { edge } => t.edges.push((edge.from, edge.to)),
            Event::EdgeRemoved { from, to } => t.edges.push((*from, *to)),
            Event::GroupUpdated { group } => t.groups.push(group.id),
            Event::GroupRemoved { id } => t.groups.push(*id),
            Event::UserTurn { utterance } | Event::AssistantTurn { utterance } => {
                t.entities.push(utterance.speaker);
                t.scenes.extend(utterance.scene);
            }
            Event::MemoryAdded { memory } => t.memories.push(memory.id),
            Event::MemoryRemoved { id } => t.memories.push(*id),
            Event::MemoriesRecalled { ids, .. } => t.memories.extend(ids.iter().copied()),
            Event::QueryAsked { asked_as, .. } => t.entities.extend(asked_as.iter().copied()),
            Event::QueryAnswered { .. } | Event::QueryFailed { .. } => {}
            Event::DrivesConfigured { entity, .. } => t.entities.extend(entity.iter().copied()),
            Event::PersonalitySet { entity, .. }
            | Event::StimulusNotified { entity, .. }
            | Event::MindTicked { entity, .. }
            | Event::InitiationHeld { entity, .. } => t.entities.push(*entity),
            Event::Initiated { initiation, .. } => {
                t.entities.extend([initiation.speaker, initiation.to])
            }
            Event::AvailabilityReported { about, .. } => t.entities.push(*about),
            Event::BeliefObserved { observation: o } => t.entities.extend([o.observer, o.about]),
            Event::PersonMentioned { id, .. } => t.entities.push(*id),
            Event::DecayPassed { changes, .. } => t.memories.extend(changes.iter().map(|c| c.id)),
            Event::MemoriesSummarized { summaries, .. } => {
                t.memories.extend(summaries.iter().map(|s| s.id))
            }
            Event::Reflected {
                entity, insights, ..
            } => {
                t.entities.push(*entity);
                t.memories.extend(insights.iter().map(|m| m.id));
            }
            Event::RuleAdded { rule } => t.entities.push(rule.owner),
            Event::RuleRemoved { entity, .. } | Event::RuleFired { entity, .. } => {
                t.entities.push(*entity)
            }
            Event::FeedbackLearned {
                entity, feedback, ..
            } => t.entities.extend([*entity, feedback.from]),
            Event::StimulusClassified { entity, .. }
            | Event::CardAttached { entity, .. }
            | Event::CardAsset { entity, .. } => t.entities.push(*entity),
            Event::LorebookAdded { owner, .. } => t.entities.extend(owner.iter().copied()),
            Event::LoreTimersSet { entity, .. } => t.entities.push(*entity),
            Event::AlternativesSet { .. } => {}
            Event::ThoughtFormed { entity, memory, .. } => {
                t.entities.push(*entity);
                t.memories.extend(memory.iter().map(|m| m.id));
            }
            Event::RequirementAdded { requirement } => {
                t.entities.extend(requirement.subject);
                t.containers
                    .extend(requirement.guards.iter().filter_map(|g| match g {
                        crate::model::Guard::Leave { container } => Some(*container),
                        _ => None,
                    }));
            }
            Event::RequirementRemoved { .. } => {}
            Event::RequirementAnnounced { line, .. } => t.entities.extend(
                line.iter()
                    .flat_map(|l| l.audience.iter().flatten())
                    .copied(),
            ),
        }
        t
    }
}

/// The ids an event touches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Entities.
    pub entities: Vec<EntityId>,
    /// Containers.
    pub containers: Vec<ContainerId>,
    /// Directed edges as (from, to).
    pub edges: Vec<(EntityId, EntityId)>,
    /// Groups.
    pub groups: Vec<GroupId>,
    /// Memories.
    pub memories: Vec<MemoryId>,
    /// Scenes.
    pub scenes: Vec<SceneId>,
}

/// One report of a state-update pass and what became of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedReport {
    /// The report as the model wrote it (JSON), or the whole answer when it could not be read.
    pub report: String,
    /// `None`: applied. Otherwise why it was rejected; nothing of it was applied.
    #[serde(default)]
    pub rejected: Option<String>,
    /// For a host action: the host's answer (JSON).
    #[serde(default)]
    pub answer: Option<String>,
}
