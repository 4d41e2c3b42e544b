//! Beginning a turn: the engine's entry points ([`Engine::begin_turn`], system lines, prompt
//! inspection), the building of a responder's prompt, the commit of the input and the
//! response decisions of everyone who heard it.

use super::{Phase, Turn, TurnDecision, TurnInput, TurnMachine, TurnOptions, Wake};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::facts::SeededDraws;
use crate::log::{Event, Message, World, decision_event};
use crate::model::{
    EntityId, Memory, MemoryId, Millis, Utterance, UtteranceId, WitnessSet, elapsed,
};
use crate::scene::{self, SceneClose};
use crate::turn::prompt::{
    self, CharsPerToken, Gathered, MemoryPick, Prompt, PromptOptions, TokenCounter,
};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Engine {
    /// Injects a system line (docs/turn.md §5c): the next prompts of `audience` (every
    /// character when `None`) carry `[SYSTEM: text]` after their newest line, never trimmed,
    /// until a turn has shown it to a responder. Recorded as an event; returns its id.
    pub fn inject_system_line(
        &mut self,
        text: &str,
        audience: Option<Vec<EntityId>>,
    ) -> Result<u64> {
        let id = self.world().next_id();
        self.append(vec![Event::SystemLineInjected {
            line: crate::model::SystemLine {
                id,
                text: text.trim().to_owned(),
                audience,
                at: self.world().now(),
            },
        }])?;
        Ok(id)
    }

    /// Starts a turn with the default options: see [`Engine::begin_turn_with`].
    pub fn begin_turn(&mut self, input: TurnInput) -> Result<Turn<'_>> {
        self.begin_turn_with(input, TurnOptions::default())
    }

    /// Starts a turn: commits the input (with the clock advanced to `input.now`), then decides
    /// who responds. A crash from here until [`Turn::finish`] leaves the input and nothing
    /// else.
    pub fn begin_turn_with(&mut self, input: TurnInput, options: TurnOptions) -> Result<Turn<'_>> {
        let machine = TurnMachine::begin(self, input, options)?;
        Ok(Turn {
            engine: self,
            machine,
        })
    }

    /// The prompt `speaker` would be given now for `query` (default: the last line it heard),
    /// with every piece and why it is there. Changes nothing.
    pub fn inspect_prompt(
        &mut self,
        speaker: EntityId,
        query: Option<&str>,
        now: Millis,
        options: &PromptOptions,
    ) -> Result<Prompt> {
        options.check()?;
        options.recall.check()?;
        let world = self.world().clone();
        let query = match query {
            Some(q) => q.to_string(),
            None => prompt::witnessed(&world, speaker)
                .last()
                .map(|u| u.text.clone())
                .unwrap_or_default(),
        };
        let counter = CharsPerToken(options.chars_per_token);
        let (prompt, _) = build_prompt(
            self, &world, speaker, &query, None, now, options, &counter, None, None,
        )?;
        Ok(prompt)
    }
}

/// `speaker`'s reply prompt in `world` (a world of the engine's branch, now or as it was),
/// for the last line it heard there, with `options`; recalls from the engine what `world`
/// holds. For a reply asked for again (docs/edits.md, "Swipes").
pub(crate) fn reply_prompt(
    engine: &mut Engine,
    world: &World,
    speaker: EntityId,
    now: Millis,
    options: &PromptOptions,
) -> Result<Prompt> {
    let query = prompt::witnessed(world, speaker)
        .last()
        .map(|u| u.text.clone())
        .unwrap_or_default();
    let counter = CharsPerToken(options.chars_per_token);
    let (prompt, _) = build_prompt(
        engine, world, speaker, &query, None, now, options, &counter, None, None,
    )?;
    Ok(prompt)
}

/// Builds `speaker`'s prompt in `world`, recalling from the engine. Returns the prompt and the
/// recalled memories.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_prompt(
    engine: &mut Engine,
    world: &World,
    speaker: EntityId,
    query: &str,
    query_vector: Option<&[f32]>,
    now: Millis,
    options: &PromptOptions,
    counter: &dyn TokenCounter,
    facts: Option<Vec<String>>,
    initiative: Option<String>,
) -> Result<(Prompt, Vec<MemoryId>)> {
    let _span = tracing::info_span!("prompt.build", speaker = speaker.0).entered();
    let mut memories = Vec::new();
    let mut recalled = Vec::new();
    // Pinned memories, then the speaker's summaries of its recent scenes (oldest first, in the
    // order they happened), from the world the prompt is built in.
    let pinned = world.always_loaded(speaker, options.recent_scenes)?;
    let (pins, mut scenes): (Vec<&Memory>, Vec<&Memory>) = pinned
        .iter()
        .filter_map(|id| world.memory(*id))
        .partition(|m| m.pinned);
    scenes.reverse();
    for (m, why) in pins
        .into_iter()
        .map(|m| (m, "pinned: always loaded"))
        .chain(scenes.into_iter().map(|m| (m, prompt::SCENE_SUMMARY)))
    {
        memories.push(MemoryPick {
            id: m.id,
            text: prompt::memory_line(m.shown_text()),
            why: why.into(),
            score: None,
        });
    }
    if options.memories_k > 0 && !query.trim().is_empty() {
        // A remembered line still in the dialogue section would say the same thing twice:
        // such memories are left out of the ranking.
        let in_dialogue = prompt::dialogue_lines(world, speaker, options.dialogue_lines);
        let mut recall = options.recall.clone();
        recall.k = options.memories_k;
        recall.query_embedding = query_vector.map(<[f32]>::to_vec);
        let skip =
            |m: &crate::model::Memory| in_dialogue.contains(&m.text) || pinned.contains(&m.id);
        for r in engine.recall_skipping(speaker, query, now, &recall, &skip)? {
            if pinned.contains(&r.id) {
                continue;
            }
            let Some(m) = world.memory(r.id) else {
                continue;
            };
            recalled.push(r.id);
            memories.push(MemoryPick {
                id: r.id,
                text: prompt::memory_line(m.shown_text()),
                why: format!(
                    "recalled for the line heard: score {:.3} (relevance {:.2}, retention {:.2}, significance {:.2})",
                    r.score, r.relevance, r.retention, r.significance
                ),
                score: Some(r.score),
            });
        }
    }
    let lore = engine.lore_index();
    let prompt = prompt::build(
        world,
        speaker,
        now,
        options,
        counter,
        Gathered {
            memories,
            lore: Some(&lore),
            facts,
            initiative,
        },
    )?;
    Ok((prompt, recalled))
}

impl TurnMachine {
    /// Starts a turn on `engine`: see [`Engine::begin_turn_with`].
    pub fn begin(
        engine: &mut Engine,
        input: TurnInput,
        options: TurnOptions,
    ) -> Result<TurnMachine> {
        let counter = Arc::new(CharsPerToken(options.prompt.chars_per_token));
        TurnMachine::begin_counting(engine, input, options, counter)
    }

    /// [`TurnMachine::begin`] with a token counter of the host's (instead of
    /// `options.prompt.chars_per_token`).
    pub fn begin_counting(
        engine: &mut Engine,
        input: TurnInput,
        options: TurnOptions,
        counter: Arc<dyn TokenCounter>,
    ) -> Result<TurnMachine> {
        let _span = tracing::info_span!("turn.begin").entered();
        options.check()?;
        let world = engine.world();
        let speaker = world
            .entity(input.speaker)
            .ok_or_else(|| Error::not_found("entity", input.speaker))?;
        if !speaker.host_controlled {
            return Err(Error::invalid(
                "turn input",
                format!(
                    "{} is not host-controlled; only the host's entities start turns",
                    speaker.name
                ),
            ));
        }
        if input.now < world.now() {
            return Err(Error::invalid(
                "turn input",
                format!(
                    "now ({}) is before the world's clock ({})",
                    input.now,
                    world.now()
                ),
            ));
        }
        let author = speaker.name.clone();
        let now = input.now;
        // Commit the input (and the clock) first: it is never lost. Scoped events due by now
        // (starts, expiries) run in the same commit, before the line, so this turn's prompts
        // see them.
        let mut events = Vec::new();
        let due_world;
        let world = if crate::story::any_open(world) {
            let from = world.now();
            let mut batch = crate::story::Batch::new(world);
            batch.advance_to(input.now, "turn input")?;
            crate::story::run_due(&mut batch, from, input.now);
            events = batch.events;
            due_world = batch.world;
            &due_world
        } else {
            if input.now > world.now() {
                events.push(Event::TimeAdvanced { to: input.now });
            }
            world
        };
        // Sleepers within earshot are disturbed by the line, and those it wakes hear it.
        let woke_world;
        let world = if input.witnesses.is_none()
            && !input.text.trim().is_empty()
            && !world.sleepers_near(input.speaker).is_empty()
        {
            let mut w = world.clone();
            if w.now() < input.now {
                w.apply(&Event::TimeAdvanced { to: input.now })?;
            }
            let (woken, _) =
                super::step::witnesses_waking(&mut w, input.speaker, &input.text, input.now)?;
            events.extend(woken);
            woke_world = w;
            &woke_world
        } else {
            world
        };
        let mut input_utterance = None;
        let mut lines = Vec::new();
        let closing = if options.scenes.enabled {
            let hearers = match &input.witnesses {
                Some(w) => w.iter().copied().chain([input.speaker]).collect(),
                None => world.hearers(input.speaker),
            };
            scene::due_for_turn(world, input.speaker, &hearers, input.now, &options.scenes)
        } else {
            Vec::new()
        };
        if !input.text.trim().is_empty() {
            let witnesses: WitnessSet = match &input.witnesses {
                Some(w) => w.iter().copied().chain([input.speaker]).collect(),
                None => world.hearers(input.speaker),
            };
            let (opened, scene) = if options.scenes.enabled {
                scene::scene_for_line(world, input.speaker, input.now, &closing)
            } else {
                (None, None)
            };
            let next_id = world.next_id() + u64::from(opened.is_some());
            if let Some(scene) = opened {
                events.push(Event::SceneOpened { scene });
            }
            let id = UtteranceId(next_id);
            input_utterance = Some(id);
            lines.push((
                input.speaker,
                format!("{author}: {}", input.text),
                witnesses.clone(),
                None,
                scene,
            ));
            events.push(Event::UserTurn {
                utterance: Utterance {
                    id,
                    speaker: input.speaker,
                    text: input.text.clone(),
                    at: input.now,
                    witnesses,
                    model: None,
                    scene,
                },
            });
        } else if input.witnesses.is_some() {
            return Err(Error::invalid(
                "turn input",
                "witnesses are for what is said; a wake-up turn says nothing",
            ));
        }
        // The input's commit is written while response control and the first prompt are
        // worked out: with durable commits the disk's wait hides behind that work.
        let make = move |engine: &mut Engine| -> Result<TurnMachine> {
            let query = input.text.clone();
            let mut m = TurnMachine::fresh(engine, input, options, counter, query, None);
            m.input_utterance = input_utterance;
            m.lines = lines;
            m.decide_responders()?;
            for id in &closing {
                let close = SceneClose::plan(&m.scratch, *id, now, &m.options.scenes)?;
                m.closing.push(close);
            }
            if !m.closing.is_empty() {
                m.phase = Phase::Summarizing;
                m.settle_scenes()?;
            } else {
                m.phase = m.after_scenes();
                if m.phase == Phase::NextResponder && m.next < m.responders.len() {
                    // Ahead of the first step, while the input's commit is written. The store
                    // is busy meanwhile (a read is refused as a conflict), so a prompt that
                    // needs it fails: the first step then builds it again, with the store back,
                    // and reports what still fails. Any other error is the turn's.
                    match m.ask_next_responder(engine) {
                        Err(e)
                            if !matches!(
                                e.kind(),
                                crate::ErrorKind::Conflict | crate::ErrorKind::Storage
                            ) =>
                        {
                            return Err(e);
                        }
                        _ => {}
                    }
                }
            }
            Ok(m)
        };
        engine.append_overlapped(events, make)?.1
    }

    /// Response control for every engine-controlled entity that heard the input (in a wake-up
    /// turn: every one near the speaker), in id order; responders are those mentioned first.
    fn decide_responders(&mut self) -> Result<()> {
        let w = &self.scratch;
        let now = self.input.now;
        let candidates: Vec<EntityId> = match self.input_utterance {
            Some(id) => w
                .dialogue()
                .rev()
                .find(|u| u.id == id)
                .map(|u| u.witnesses.iter().collect())
                .unwrap_or_default(),
            None => w.hearers(self.input.speaker).iter().collect(),
        };
        let mut mentioned_first = Vec::new();
        for entity in candidates {
            let Some(e) = self.scratch.entity(entity) else {
                continue;
            };
            if e.host_controlled {
                continue;
            }
            // The line it answers: the input, or in a wake-up turn the last line it heard
            // from someone else.
            let (content, author, arrived) = if self.input_utterance.is_some() {
                let author = self
                    .scratch
                    .entity(self.input.speaker)
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                (self.input.text.clone(), author, now)
            } else if self.scratch.speech(entity).unread == 0 {
                // A wake-up turn is for lines not yet answered: it has spoken since.
                continue;
            } else {
                match prompt::witnessed(&self.scratch, entity)
                    .into_iter()
                    .rev()
                    .find(|u| u.speaker != entity)
                {
                    Some(u) => (
                        u.text.clone(),
                        self.scratch
                            .entity(u.speaker)
                            .map(|s| s.name.clone())
                            .unwrap_or_default(),
                        u.at,
                    ),
                    None => continue,
                }
            };
            let (mentioned, respond) = self.decide_one(entity, &content, author, arrived)?;
            if respond {
                mentioned_first.push((!mentioned, entity));
                if self.query.is_empty() {
                    // A wake-up turn answers the line each heard; recall uses the first.
                    self.query = content;
                }
            }
        }
        mentioned_first.sort();
        self.responders = mentioned_first
            .into_iter()
            .map(|(_, e)| e)
            .take(self.options.max_responders)
            .collect();
        Ok(())
    }
}

impl TurnMachine {
    /// A machine for a turn on `engine` as it is now, nothing decided or asked yet.
    pub(super) fn fresh(
        engine: &Engine,
        input: TurnInput,
        options: TurnOptions,
        counter: Arc<dyn TokenCounter>,
        query: String,
        initiation: Option<super::Initiating>,
    ) -> TurnMachine {
        TurnMachine {
            options,
            query,
            input,
            base: engine.head(),
            input_utterance: None,
            scratch: engine.world().clone(),
            pending: Vec::new(),
            epoch: engine.epoch(),
            decisions: Vec::new(),
            responders: Vec::new(),
            next: 0,
            phase: Phase::NextResponder,
            query_vector: None,
            replies: Vec::new(),
            silent: Vec::new(),
            wake: Vec::new(),
            prompts: Vec::new(),
            recalled: Vec::new(),
            lines: Vec::new(),
            counter,
            updated: false,
            shown_system: Vec::new(),
            tool_rounds: 0,
            reports: Vec::new(),
            significance: BTreeMap::new(),
            closing: Vec::new(),
            initiation,
        }
    }

    /// Starts a conversation for `candidate.speaker` (docs/drives.md): its line is asked for
    /// first, with the same prompt as a reply plus `reason`; once it is said, those who heard it
    /// decide through response control whether to answer, and the turn goes on as any other.
    /// Commits the clock's move to `now` if it moves.
    pub(crate) fn begin_initiation(
        engine: &mut Engine,
        candidate: crate::drives::Candidate,
        reason: String,
        now: Millis,
        options: TurnOptions,
    ) -> Result<TurnMachine> {
        options.check()?;
        if now < engine.world().now() {
            return Err(Error::invalid(
                "tick",
                format!(
                    "now ({now}) is before the world's clock ({})",
                    engine.world().now()
                ),
            ));
        }
        if now > engine.world().now() {
            engine.append(vec![Event::TimeAdvanced { to: now }])?;
        }
        let counter = Arc::new(CharsPerToken(options.prompt.chars_per_token));
        let speaker = candidate.speaker;
        // As in any turn, the scenes due around the speaker close first (their summaries
        // asked for before its line), so the line opens a fresh scene rather than join one.
        let closing = if options.scenes.enabled {
            let world = engine.world();
            scene::due_for_turn(
                world,
                speaker,
                &world.hearers(speaker),
                now,
                &options.scenes,
            )
        } else {
            Vec::new()
        };
        let input = TurnInput::wake(speaker, now);
        let initiating = super::Initiating { candidate, reason };
        let mut m = TurnMachine::fresh(
            engine,
            input,
            options,
            counter,
            String::new(),
            Some(initiating),
        );
        m.responders = vec![speaker];
        for id in &closing {
            let close = SceneClose::plan(&m.scratch, *id, now, &m.options.scenes)?;
            m.closing.push(close);
        }
        if !m.closing.is_empty() {
            m.phase = Phase::Summarizing;
            m.settle_scenes()?;
        }
        Ok(m)
    }

    /// Response control for `entity` to `content` by `author`, said at `arrived`: the
    /// decision recorded (on the scratch world, and a `$retry` noted as a wake-up). Returns
    /// whether the line mentions it and whether it responds now.
    fn decide_one(
        &mut self,
        entity: EntityId,
        content: &str,
        author: String,
        arrived: Millis,
    ) -> Result<(bool, bool)> {
        let now = self.input.now;
        let speech = self.scratch.speech(entity);
        let mentioned = self.scratch.mentions(entity, content);
        let message = Message {
            content: content.to_owned(),
            author,
            mentioned: Some(mentioned),
            response_ms: speech.last_spoke.map(|t| elapsed(t, now) as f64),
            retry_ms: elapsed(arrived, now) as f64,
            unread_count: speech.unread,
            interaction_type: None,
            hour: None,
            drives: crate::drives::values(&self.scratch, entity, now),
        };
        let seed = self.scratch.meta().map_or(0, |m| m.settings.seed);
        let mut draws = SeededDraws::new(seed, self.scratch.draws_taken());
        let decision = self.scratch.decide(entity, &message, &mut draws)?;
        let event = decision_event(entity, &decision);
        self.scratch.apply(&event)?;
        self.pending.push(event);
        let respond = match decision.retry_ms {
            Some(ms) => {
                self.wake.push(Wake {
                    entity,
                    at: now.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX)),
                });
                false
            }
            None => decision.respond,
        };
        self.decisions.push(TurnDecision {
            entity,
            mentioned,
            decision,
        });
        Ok((mentioned, respond))
    }

    /// Response control for `candidates` (engine-controlled ones, in id order) to `content`
    /// by `author`, said at `at`: those who respond are added to the responders, mentioned
    /// first, up to the turn's limit.
    pub(super) fn decide_for(
        &mut self,
        candidates: Vec<EntityId>,
        content: &str,
        author: &str,
        at: Millis,
    ) -> Result<()> {
        let mut mentioned_first = Vec::new();
        for entity in candidates {
            if self
                .scratch
                .entity(entity)
                .is_none_or(|e| e.host_controlled)
            {
                continue;
            }
            let (mentioned, respond) = self.decide_one(entity, content, author.to_owned(), at)?;
            if respond && !self.responders.contains(&entity) {
                mentioned_first.push((!mentioned, entity));
            }
        }
        mentioned_first.sort();
        let room = self
            .options
            .max_responders
            .saturating_sub(self.responders.len() - 1);
        self.responders
            .extend(mentioned_first.into_iter().map(|(_, e)| e).take(room));
        Ok(())
    }
}
