//! One event of any kind, drawn from the bytes and the world: [`Gen::event`].

use super::{Gen, Src};
use crate::TAVERN_TOML;
use rp_core::log::JudgedReport;
use rp_core::turn::{GenerateResult, Purpose, ToolRun};
use rp_core::*;

impl Gen<'_> {
    /// One event drawn from `s`.
    pub fn event(&mut self, s: &mut Src<'_>) -> Event {
        let arm = s.u8() % 64;
        match arm {
            0 => Event::WorldCreated {
                name: self.text(s),
                now: self.time(s),
                settings: WorldSettings {
                    dialogue_window: u32::from(s.u8() % 4),
                    ..Default::default()
                },
            },
            1 => Event::EntityCreated {
                id: EntityId(self.fresh(s)),
                key: self.opt_text(s),
                name: self.text(s),
                aliases: self.texts(s),
                facts: self.facts(s),
                host_controlled: s.bool(),
                state: self.state(s),
            },
            2 => Event::EntityEdited {
                id: self.entity(s),
                name: self.opt_text(s),
                aliases: s.bool().then(|| self.texts(s)),
                facts: s.bool().then(|| self.facts(s)),
                host_controlled: s.bool().then(|| s.bool()),
            },
            3 => Event::EntityRemoved { id: self.entity(s) },
            4 => Event::ContainerCreated {
                id: ContainerId(self.fresh(s)),
                key: self.opt_text(s),
                name: self.text(s),
                facts: self.facts(s),
                parent: s.bool().then(|| self.container(s)),
                slots: self.slots(s),
                properties: self.properties(s),
            },
            5 => Event::ContainerEdited {
                id: self.container(s),
                name: self.text(s),
                facts: self.facts(s),
                parent: s.bool().then(|| self.container(s)),
                slots: self.slots(s),
                properties: self.properties(s),
            },
            6 => Event::ContainerRemoved {
                id: self.container(s),
            },
            7 => {
                let entity = self.entity(s);
                Event::ActivityChanged {
                    entity,
                    activity: self.activity(s, entity),
                }
            }
            8 => Event::InventoryChanged {
                entity: self.entity(s),
                inventory: self.entities(s),
            },
            9 => Event::EntityStateChanged {
                entity: self.entity(s),
                state: self.state(s),
            },
            10 => Event::EdgeUpdated {
                edge: Edge {
                    from: self.entity(s),
                    to: self.entity(s),
                    affinity: self.float(s),
                    trust: self.float(s),
                    summary: self.text(s),
                    knowledge: self.texts(s),
                    private_moments: self.texts(s),
                    last_interaction: s.bool().then(|| self.time(s)),
                    imprints: Vec::new(),
                    source: None,
                },
            },
            11 => Event::EdgeRemoved {
                from: self.entity(s),
                to: self.entity(s),
            },
            12 => {
                let known: Vec<u64> = self.groups.iter().map(|x| x.0).collect();
                let id = if s.bool() {
                    GroupId(self.raw_id(s, &known))
                } else {
                    GroupId(self.fresh(s))
                };
                Event::GroupUpdated {
                    group: Group {
                        id,
                        members: self.entities(s).into_iter().collect(),
                        name: self.opt_text(s),
                        summary: self.text(s),
                        shared: self.texts(s),
                    },
                }
            }
            13 => {
                let known: Vec<u64> = self.groups.iter().map(|x| x.0).collect();
                Event::GroupRemoved {
                    id: GroupId(self.raw_id(s, &known)),
                }
            }
            14 => Event::UserTurn {
                utterance: self.utterance(s, true),
            },
            15 => Event::AssistantTurn {
                utterance: self.utterance(s, false),
            },
            16 => {
                let owner = self.entity(s);
                Event::MemoryAdded {
                    memory: Memory {
                        id: MemoryId(self.fresh(s)),
                        owner,
                        witnesses: self.witnesses(s, owner),
                        text: self.text(s),
                        kind: match s.u8() % 4 {
                            0 => MemoryKind::Utterance,
                            1 => MemoryKind::SceneSummary,
                            2 => MemoryKind::EventGist,
                            _ => MemoryKind::Reflection,
                        },
                        significance: self.float(s),
                        created: self.time(s),
                        last_accessed: s.bool().then(|| self.time(s)),
                        access_count: u32::from(s.u8()),
                        decay: match s.u8() % 4 {
                            0 => DecayStage::Full,
                            1 => DecayStage::Summary,
                            2 => DecayStage::Residue,
                            _ => DecayStage::Forgotten,
                        },
                        pinned: s.bool(),
                        embedding: s
                            .bool()
                            .then(|| (0..s.u8() % 8).map(|_| self.float(s) as f32).collect()),
                        scene: (s.u8() > 200).then(|| self.scene(s)),
                        stability: if s.bool() { 0.0 } else { self.float(s) },
                        summary: self.opt_text(s),
                        feeling: self.opt_text(s),
                        about: s.bool().then(|| self.entity(s)),
                        sources: self.memory_ids(s),
                    },
                }
            }
            41 => Event::DrivesConfigured {
                entity: s.bool().then(|| self.entity(s)),
                config: Box::new(DriveConfig {
                    energy_per_line: s.bool().then(|| self.float(s)),
                    social_debt_per_hour: s.bool().then(|| self.float(s)),
                    threshold: s.bool().then(|| self.float(s)),
                    night_start: s.bool().then(|| self.float(s)),
                    sleep_energy: s.bool().then(|| self.float(s)),
                    wake_energy: s.bool().then(|| self.float(s)),
                    inbox_capacity: s.bool().then(|| u32::from(s.u8())),
                    memory_stability_hours: s.bool().then(|| self.float(s)),
                    summary_below: s.bool().then(|| self.float(s)),
                    forget_below: s.bool().then(|| self.float(s)),
                    reflect_threshold: s.bool().then(|| self.float(s)),
                    decay_pass_hours: s.bool().then(|| self.float(s)),
                    stimulus_kinds: s.bool().then(|| self.texts(s)),
                    ..DriveConfig::default()
                }),
            },
            42 => Event::PersonalitySet {
                entity: self.entity(s),
                personality: Personality {
                    curiosity: self.float(s),
                    shyness: self.float(s),
                    ..Personality::default()
                },
            },
            43 => Event::StimulusNotified {
                entity: self.entity(s),
                stimulus: Stimulus {
                    id: self.fresh(s),
                    kind: if s.bool() {
                        "sound".into()
                    } else {
                        self.text(s)
                    },
                    priority: match s.u8() % 5 {
                        0 => Priority::Critical,
                        1 => Priority::High,
                        2 => Priority::Normal,
                        3 => Priority::Low,
                        _ => Priority::Idle,
                    },
                    payload: self.text(s),
                    at: self.time(s),
                    count: u32::from(s.u8()),
                },
            },
            44 => Event::MindTicked {
                entity: self.entity(s),
                at: self.time(s),
                asleep: s.bool().then(|| s.bool()),
                processed: (0..s.u8() % 3).map(|_| s.u64() % 64).collect(),
                filtered: (0..s.u8() % 3).map(|_| s.u64() % 64).collect(),
            },
            45 => Event::Initiated {
                initiation: Initiation {
                    speaker: self.entity(s),
                    to: self.entity(s),
                    about: match s.u8() % 3 {
                        0 => Drive::SocialDebt,
                        1 => Drive::Task,
                        _ => Drive::Curiosity,
                    },
                    score: self.float(s),
                    threshold: self.float(s),
                    shares: (0..s.u8() % 3)
                        .map(|_| (self.term(s), self.float(s)))
                        .collect(),
                    rules: (0..s.u8() % 2).map(|_| self.rule(s).1).collect(),
                },
                at: self.time(s),
            },
            50 => {
                let owner = self.entity(s);
                let at = self.time(s);
                Event::RuleAdded {
                    rule: Rule {
                        id: RuleId(self.fresh(s)),
                        owner,
                        description: self.text(s),
                        trigger: if s.bool() {
                            Trigger::At(self.time(s))
                        } else {
                            Trigger::Stimulus(
                                ["sound", "line", "smell"][usize::from(s.u8() % 3)].into(),
                            )
                        },
                        condition: s.bool().then(|| {
                            ["content.includes('bell')", "drives.energy >", "true"]
                                [usize::from(s.u8() % 3)]
                            .to_owned()
                        }),
                        intent: match s.u8() % 3 {
                            0 => Intent::Initiate {
                                to: self.entity(s),
                                about: self.text(s),
                            },
                            1 => Intent::Note { text: self.text(s) },
                            _ => Intent::Drive {
                                drive: [
                                    Drive::Task,
                                    Drive::Curiosity,
                                    Drive::SocialDebt,
                                    Drive::Intent,
                                ][usize::from(s.u8() % 4)],
                                amount: self.float(s),
                            },
                        },
                        weight: self.float(s),
                        since: if s.u8() < 230 { at } else { self.time(s) },
                        uses: if s.u8() < 230 { 0 } else { 1 },
                        last_used: None,
                        checked: None,
                        created_at: at,
                        source: RuleSource::Host,
                    },
                }
            }
            51 => {
                let (entity, rule) = self.rule(s);
                Event::RuleRemoved {
                    entity,
                    rule,
                    at: self.time(s),
                    forgotten: s.bool(),
                }
            }
            52 => {
                let (entity, rule) = self.rule(s);
                Event::RuleFired {
                    entity,
                    rule,
                    at: self.time(s),
                    held: s.bool(),
                    cause: self.text(s),
                    stimulus: s.bool().then(|| s.u64() % 64),
                }
            }
            54 => {
                let entity = self.entity(s);
                Event::StimulusClassified {
                    entity,
                    at: self.time(s),
                    stimuli: (0..s.u8() % 3).map(|_| s.u64() % 64).collect(),
                    kind: ["sound", "message", "smell"][usize::from(s.u8() % 3)].into(),
                    reason: self.text(s),
                    pattern: s.bool(),
                    classification: s.bool().then(|| Classification {
                        intent: self.text(s),
                        sentiment: Sentiment::Neutral,
                        confidence: self.float(s),
                        significance: self.float(s),
                    }),
                    rejected: s.bool().then(|| self.text(s)),
                }
            }
            55 => {
                let entity = self.entity(s);
                let at = self.time(s);
                let memory = s.bool().then(|| Memory {
                    sources: Vec::new(),
                    ..Memory::new(
                        MemoryId(self.fresh(s)),
                        if s.u8() < 230 { entity } else { self.entity(s) },
                        WitnessSet::from_iter([entity]),
                        self.text(s),
                        if s.u8() < 230 {
                            MemoryKind::Thought
                        } else {
                            MemoryKind::Reflection
                        },
                        self.float(s),
                        if s.u8() < 230 { at } else { self.time(s) },
                    )
                });
                Event::ThoughtFormed {
                    entity,
                    at,
                    stimuli: (0..s.u8() % 3).map(|_| s.u64() % 64).collect(),
                    reason: self.text(s),
                    memory,
                    effects: (0..s.u8() % 3)
                        .map(|_| match s.u8() % 2 {
                            0 => ThoughtEffect::Drive {
                                drive: [Drive::Task, Drive::Curiosity, Drive::Intent]
                                    [usize::from(s.u8() % 3)],
                                amount: self.float(s),
                            },
                            _ => ThoughtEffect::Initiate {
                                to: self.entity(s),
                                about: self.text(s),
                            },
                        })
                        .collect(),
                    rejected: s.bool().then(|| self.text(s)),
                }
            }
            53 => {
                let (entity, rule) = self.rule(s);
                let from = self.entity(s);
                Event::FeedbackLearned {
                    entity,
                    feedback: Feedback {
                        from,
                        initiated_at: self.time(s),
                        latency_ms: s.bool().then(|| self.time(s)),
                        words: u32::from(s.u8()),
                        sentiment: s.bool().then_some(Sentiment::Negative),
                        reward: self.float(s),
                    },
                    changes: (0..s.u8() % 3)
                        .map(|_| WeightChange {
                            target: match s.u8() % 3 {
                                0 => WeightTarget::Term {
                                    to: from,
                                    term: self.term(s),
                                },
                                1 => WeightTarget::Rule { rule },
                                _ => WeightTarget::Trait {
                                    name: "independence".into(),
                                },
                            },
                            from: self.float(s),
                            to: self.float(s),
                        })
                        .collect(),
                    reason: self.text(s),
                    at: self.time(s),
                }
            }
            56 => Event::LorebookAdded {
                id: self.fresh(s),
                owner: s.bool().then(|| self.entity(s)),
                json: match s.u8() % 3 {
                    0 => r#"{"entries": {"0": {"uid": 0, "key": ["bell"], "content": "x", "sticky": 2, "delayUntilRecursion": 1}}}"#.to_owned(),
                    1 => r#"{"entries": [{"keys": ["/be(ll)?/i"], "content": "y", "extensions": {"position": 4, "depth": 1}}]}"#.to_owned(),
                    _ => self.text(s),
                },
            },
            58 => Event::CardAttached {
                entity: self.entity(s),
                card: match s.u8() % 2 {
                    0 => r#"{"spec": "chara_card_v2", "data": {"name": "Aria"}}"#.to_owned(),
                    _ => self.text(s),
                },
            },
            59 => Event::CardAsset {
                entity: self.entity(s),
                path: match s.u8() % 3 {
                    0 => "assets/icon/image/main.png".to_owned(),
                    1 => "../card.json".to_owned(),
                    _ => self.text(s),
                },
                bytes: (0..s.u8() % 16).map(|_| s.u8()).collect(),
            },
            57 => Event::LoreTimersSet {
                entity: self.entity(s),
                timers: (0..s.u8() % 3)
                    .map(|_| {
                        let start = u32::from(s.u8());
                        LoreTimer {
                            book: u64::from(s.u8()),
                            entry: u32::from(s.u8() % 4),
                            kind: if s.bool() { TimerKind::Sticky } else { TimerKind::Cooldown },
                            start,
                            end: start.saturating_add(u32::from(s.u8())),
                            protected: s.bool(),
                        }
                    })
                    .collect(),
            },
            46 => Event::InitiationHeld {
                entity: self.entity(s),
                until: self.time(s),
            },
            47 => Event::AvailabilityReported {
                about: self.entity(s),
                availability: self.float(s),
                at: self.time(s),
            },
            48 => Event::BeliefObserved {
                observation: BeliefObservation {
                    observer: self.entity(s),
                    about: self.entity(s),
                    mood: self.opt_text(s),
                    energy: s.bool().then(|| self.float(s)),
                    availability: s.bool().then(|| self.float(s)),
                    traits: self.texts(s),
                    feelings: (0..s.u8() % 3)
                        .map(|_| Feeling {
                            toward: self.entity(s),
                            sentiment: self.float(s),
                            text: self.text(s),
                        })
                        .collect(),
                    confidence: self.float(s),
                    source: match s.u8() % 4 {
                        0 => BeliefSource::Observed,
                        1 => BeliefSource::ToldBy(self.entity(s)),
                        2 => BeliefSource::Inferred,
                        _ => BeliefSource::Host,
                    },
                    at: self.time(s),
                },
            },
            49 => Event::PersonMentioned {
                id: EntityId(self.fresh(s)),
                key: self.opt_text(s),
                name: self.text(s),
                facts: self.facts(s),
                by: s.bool().then(|| self.entity(s)),
                at: self.time(s),
            },
            38 => Event::DecayPassed {
                at: self.time(s),
                changes: self
                    .memory_ids(s)
                    .into_iter()
                    .map(|id| StageChange {
                        id,
                        stage: self.stage(s),
                    })
                    .collect(),
                next: s.bool().then(|| self.time(s)),
            },
            39 => Event::MemoriesSummarized {
                owner: self.entity(s),
                at: self.time(s),
                summaries: self
                    .memory_ids(s)
                    .into_iter()
                    .map(|id| MemorySummary {
                        id,
                        text: self.text(s),
                        feeling: self.opt_text(s),
                        about: s.bool().then(|| self.entity(s)),
                    })
                    .collect(),
            },
            40 => {
                let entity = self.entity(s);
                let at = self.time(s);
                let insights = (0..s.u8() % 3)
                    .map(|_| Memory {
                        id: MemoryId(self.fresh(s)),
                        owner: if s.u8() < 230 { entity } else { self.entity(s) },
                        witnesses: if s.bool() {
                            WitnessSet::from_iter([entity])
                        } else {
                            self.witnesses(s, entity)
                        },
                        text: self.text(s),
                        kind: MemoryKind::Reflection,
                        significance: self.float(s),
                        created: if s.u8() < 230 { at } else { self.time(s) },
                        last_accessed: None,
                        access_count: 0,
                        decay: DecayStage::Full,
                        pinned: false,
                        embedding: None,
                        scene: None,
                        stability: 0.0,
                        summary: None,
                        feeling: None,
                        about: None,
                        sources: self.memory_ids(s),
                    })
                    .collect();
                Event::Reflected {
                    entity,
                    at,
                    insights,
                    rejected: s.bool().then(|| self.text(s)),
                }
            }
            17 => {
                let known: Vec<u64> = self.memories.iter().map(|x| x.0).collect();
                Event::MemoryRemoved {
                    id: MemoryId(self.raw_id(s, &known)),
                }
            }
            18 => Event::TimeAdvanced { to: self.time(s) },
            37 => Event::TimeSkipped {
                from: self.time(s),
                to: self.time(s),
                skip: if s.bool() {
                    Skip::Elision {
                        entity: self.entity(s),
                    }
                } else {
                    Skip::Jump { to: self.time(s) }
                },
            },
            19 => Event::ResponseDecided {
                entity: self.entity(s),
                respond: s.bool(),
                retry_ms: s.bool().then(|| s.u64()),
                fired: (0..s.u8() % 4).map(|_| u32::from(s.u8())).collect(),
                draws: (0..s.u8() % 4).map(|_| self.float(s).abs()).collect(),
            },
            20 => {
                let known: Vec<u64> = self.memories.iter().map(|x| x.0).collect();
                Event::MemoriesRecalled {
                    ids: (0..s.u8() % 4)
                        .map(|_| MemoryId(self.raw_id(s, &known)))
                        .collect(),
                    at: self.time(s),
                }
            }
            21 => Event::Generated {
                purpose: match s.u8() % 4 {
                    0 => Purpose::Reply {
                        speaker: self.entity(s),
                    },
                    1 => Purpose::StateUpdate,
                    2 => Purpose::Summary,
                    _ => Purpose::Query,
                },
                result: GenerateResult {
                    text: self.text(s),
                    tool_calls: Vec::new(),
                    prompt_tokens: s.bool().then(|| u32::from(s.u8())),
                    completion_tokens: s.bool().then(|| u32::from(s.u8())),
                    model: self.opt_text(s),
                },
            },
            22 => Event::ThreadOpened {
                thread: Thread {
                    id: ThreadId(self.fresh(s)),
                    text: self.text(s),
                    participants: self.entities(s),
                    opened: self.time(s),
                    status: match s.u8() % 8 {
                        0 => ThreadStatus::Resolved,
                        1 => ThreadStatus::Dropped,
                        _ => ThreadStatus::Open,
                    },
                    event: s.bool().then(|| {
                        let known: Vec<u64> = self.world.scoped_events().map(|e| e.id.0).collect();
                        ScopedEventId(self.raw_id(s, &known))
                    }),
                },
            },
            23 => {
                let known: Vec<u64> = self.world.threads().map(|t| t.id.0).collect();
                Event::ThreadClosed {
                    id: ThreadId(self.raw_id(s, &known)),
                    status: match s.u8() % 3 {
                        0 => ThreadStatus::Resolved,
                        1 => ThreadStatus::Dropped,
                        _ => ThreadStatus::Open,
                    },
                }
            }
            24 => Event::ReportsJudged {
                reports: (0..s.u8() % 4)
                    .map(|_| JudgedReport {
                        report: self.text(s),
                        rejected: self.opt_text(s),
                        answer: self.opt_text(s),
                    })
                    .collect(),
            },
            25 => Event::ToolsRun {
                speaker: self.entity(s),
                calls: (0..s.u8() % 3)
                    .map(|_| ToolRun {
                        id: self.text(s),
                        name: self.text(s),
                        arguments: self.text(s),
                        result: self.text(s),
                        draws: (0..s.u8() % 3).map(|_| self.float(s).abs()).collect(),
                    })
                    .collect(),
            },
            26 => Event::SystemLineInjected {
                line: SystemLine {
                    id: self.fresh(s),
                    text: self.text(s),
                    audience: s.bool().then(|| self.entities(s)),
                    at: self.time(s),
                },
            },
            27 => {
                let known: Vec<u64> = self.world.system_lines().map(|l| l.id).collect();
                Event::SystemLinesShown {
                    ids: (0..s.u8() % 3).map(|_| self.raw_id(s, &known)).collect(),
                }
            }
            29 => Event::ScopedEventPlanned {
                event: ScopedEvent {
                    id: ScopedEventId(self.fresh(s)),
                    name: self.text(s),
                    status: match s.u8() % 8 {
                        0 => EventStatus::Active,
                        1 => EventStatus::Completed,
                        _ => EventStatus::Planned,
                    },
                    props: (0..s.u8() % 3)
                        .map(|_| (self.text(s), self.text(s)))
                        .collect(),
                    participants: self.entities(s),
                    preconditions: (0..s.u8() % 3).map(|_| self.condition(s)).collect(),
                    on_start: (0..s.u8() % 3).map(|_| self.effect(s)).collect(),
                    on_complete: (0..s.u8() % 3).map(|_| self.effect(s)).collect(),
                    significance: self.float(s),
                    start_at: s.bool().then(|| self.time(s)),
                    start_when: s.bool().then(|| self.condition(s)),
                    expire_at: s.bool().then(|| self.time(s)),
                    started: None,
                    closed: None,
                },
            },
            30 => Event::ScopedEventStarted {
                id: self.scoped_event(s),
                at: self.time(s),
                draws: (0..s.u8() % 3).map(|_| self.float(s).abs()).collect(),
            },
            31 => Event::ScopedEventClosed {
                id: self.scoped_event(s),
                status: match s.u8() % 5 {
                    0 => EventStatus::Completed,
                    1 => EventStatus::Cancelled,
                    2 => EventStatus::Expired,
                    3 => EventStatus::Active,
                    _ => EventStatus::Planned,
                },
                at: self.time(s),
                promotion: Promotion {
                    items: (0..s.u8() % 2)
                        .map(|_| ItemPromotion {
                            item: self.entity(s),
                            to: self.entity(s),
                        })
                        .collect(),
                    knowledge: (0..s.u8() % 2)
                        .map(|_| KnowledgePromotion {
                            who: self.entity(s),
                            about: self.entity(s),
                            fact: self.text(s),
                        })
                        .collect(),
                    summaries: (0..s.u8() % 2)
                        .map(|_| SummaryPromotion {
                            from: self.entity(s),
                            to: self.entity(s),
                            summary: self.text(s),
                        })
                        .collect(),
                    gists: (0..s.u8() % 3)
                        .map(|_| GistPromotion {
                            witness: self.entity(s),
                            text: self.text(s),
                            significance: s.bool().then(|| self.float(s)),
                        })
                        .collect(),
                },
            },
            32 => Event::SceneOpened {
                scene: Scene {
                    id: SceneId(self.fresh(s)),
                    container: self.container(s),
                    opened: self.time(s),
                    closed: (s.u8() > 240).then(|| self.time(s)),
                    witnesses: self.entities(s).into_iter().collect(),
                    lines: u32::from(s.u8() > 240),
                    last_line: (s.u8() > 240).then(|| self.time(s)),
                },
            },
            33 => Event::SceneClosed {
                id: self.scene(s),
                at: self.time(s),
            },
            34 => Event::QueryAsked {
                id: QueryId(self.fresh(s)),
                text: self.text(s),
                asked_as: s.bool().then(|| self.entity(s)),
                config: query::QueryConfig {
                    max_info_requests: u32::from(s.u8() % 24),
                    max_initial_entities: u32::from(s.u8()),
                    include_relationships: s.bool(),
                    temperature: self.float(s),
                    result_limit: u32::from(s.u8()),
                    as_of: (s.u8() > 200).then(|| rp_core::AsOf::seq(u64::from(s.u8()))),
                },
                at: self.time(s),
            },
            35 | 36 => {
                let known: Vec<u64> = self.world.queries().map(|q| q.id.0).collect();
                let id = QueryId(self.raw_id(s, &known));
                let info_requests = u32::from(s.u8() % 6);
                let rounds = (0..s.u8() % 3)
                    .map(|_| query::QueryRound {
                        forced: self.opt_text(s),
                        output: GenerateResult {
                            text: self.text(s),
                            tool_calls: Vec::new(),
                            prompt_tokens: None,
                            completion_tokens: None,
                            model: self.opt_text(s),
                        },
                        problem: self.opt_text(s),
                        requests: (0..s.u8() % 3)
                            .map(|_| query::RequestRun {
                                request: query::InfoRequest {
                                    capability_id: self.text(s),
                                    params: Default::default(),
                                    reason: self.text(s),
                                },
                                refused: self.opt_text(s),
                                summary: self.text(s),
                                entities: self.entities(s),
                            })
                            .collect(),
                    })
                    .collect();
                let at = self.time(s);
                if arm == 35 {
                    Event::QueryFailed {
                        id,
                        info_requests,
                        rounds,
                        error: self.text(s),
                        at,
                    }
                } else {
                    let context = self.entities(s);
                    let sources = (0..s.u8() % 3)
                        .map(|_| query::AnswerSource {
                            entity_id: self.entity(s),
                            contribution: self.text(s),
                            relevance: self.float(s),
                        })
                        .collect();
                    Event::QueryAnswered {
                        id,
                        info_requests,
                        rounds,
                        context,
                        answer: query::Answer {
                            content: self.text(s),
                            confidence: match s.u8() % 3 {
                                0 => query::Confidence::High,
                                1 => query::Confidence::Medium,
                                _ => query::Confidence::Low,
                            },
                            sources,
                            suggested_follow_ups: self.texts(s),
                            forced: self.opt_text(s),
                        },
                        at,
                    }
                }
            }
            63 => Event::AlternativesSet {
                line: UtteranceId(self.raw_id(s, &[])),
                texts: (0..s.u8() % 4).map(|_| self.text(s)).collect(),
                chosen: u32::from(s.u8() % 4),
            },
            60 => Event::RequirementAdded {
                requirement: Requirement {
                    id: ["fare", "pending", ""][usize::from(s.u8() % 3)].to_owned(),
                    name: self.text(s),
                    subject: s.bool().then(|| self.entity(s)),
                    condition: match s.u8() % 4 {
                        0 => "self.fare_paid".to_owned(),
                        1 => "time.hour > 12".to_owned(),
                        2 => "false".to_owned(),
                        _ => self.text(s),
                    },
                    guards: (0..s.u8() % 4)
                        .map(|_| match s.u8() % 6 {
                            0 => Guard::Leave {
                                container: self.container(s),
                            },
                            1 => Guard::StartEvent {
                                event: s.bool().then(|| ScopedEventId(s.u64() % 64)),
                            },
                            2 => Guard::CompleteEvent { event: None },
                            3 => Guard::TimeSkip,
                            4 => Guard::SceneClose,
                            _ => Guard::Action {
                                name: self.text(s),
                            },
                        })
                        .collect(),
                    text: self.text(s),
                },
            },
            61 => Event::RequirementRemoved {
                id: ["fare", "pending", ""][usize::from(s.u8() % 3)].to_owned(),
            },
            62 => Event::RequirementAnnounced {
                id: ["fare", "pending"][usize::from(s.u8() % 2)].to_owned(),
                line: s.bool().then(|| SystemLine {
                    id: self.fresh(s),
                    text: self.text(s),
                    audience: s.bool().then(|| self.entities(s)),
                    at: self.time(s),
                }),
            },
            _ => Event::WorldFileApplied {
                file: self.text(s),
                text: if s.bool() {
                    TAVERN_TOML.to_owned()
                } else {
                    self.text(s)
                },
            },
        }
    }

    /// Up to three memory ids, mostly of memories of the world.
    fn memory_ids(&mut self, s: &mut Src<'_>) -> Vec<MemoryId> {
        let known: Vec<u64> = self.memories.iter().map(|x| x.0).collect();
        (0..s.u8() % 4)
            .map(|_| MemoryId(self.raw_id(s, &known)))
            .collect()
    }

    /// Any decay stage.
    fn stage(&mut self, s: &mut Src<'_>) -> DecayStage {
        match s.u8() % 4 {
            0 => DecayStage::Full,
            1 => DecayStage::Summary,
            2 => DecayStage::Residue,
            _ => DecayStage::Forgotten,
        }
    }
}
