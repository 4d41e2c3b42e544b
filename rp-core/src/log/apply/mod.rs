//! `World::apply`: validation first, then mutation. An event that fails validation returns an
//! error before anything is touched, so the world stays byte-for-byte what it was.
//!
//! The event kinds are applied in the file of what they change: `entities` (entities, where
//! they stand, what they carry), `containers`, `edges` (edges and groups), `dialogue` (lines,
//! scenes, system lines), `memories`, `threads`, `generations` (decisions, generations, tool
//! runs, judged reports) and `queries`; the world itself, its clock and its world file here.
//! Scoped events are in `apply_story`.

mod alternatives;
mod beliefs;
mod books;
mod card_assets;
mod containers;
mod dialogue;
mod edges;
mod entities;
mod generations;
mod memories;
mod minds;
mod queries;
mod requirements;
mod rules;
mod thoughts;

pub(crate) use rules::TERM_NAMES;
mod threads;

use super::{Event, World, WorldFileBase, WorldMeta};
use crate::error::{Error, Result};
use crate::model::*;
use std::borrow::Cow;

/// Longest name (entity, container, slot, branch), in characters.
pub const MAX_NAME_CHARS: usize = 256;
pub use crate::model::MAX_TEXT_BYTES;
/// Longest world file kept as a patch base, in bytes.
pub const MAX_WORLD_FILE_BYTES: usize = 16 * 1024 * 1024;

pub(crate) fn check_name(what: &'static str, name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::invalid(what, "the name is empty"));
    }
    if name.trim() != name {
        return Err(Error::invalid(
            what,
            format!("the name {name:?} has leading or trailing whitespace"),
        ));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid(
            what,
            format!("the name is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid(
            what,
            format!("the name {name:?} has control characters"),
        ));
    }
    Ok(())
}

pub(super) fn check_text(what: &'static str, text: &str) -> Result<()> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(Error::invalid(
            what,
            format!("a text is longer than {MAX_TEXT_BYTES} bytes"),
        ));
    }
    Ok(())
}

fn check_texts<'a>(what: &'static str, texts: impl IntoIterator<Item = &'a String>) -> Result<()> {
    texts.into_iter().try_for_each(|t| check_text(what, t))
}

pub(super) fn check_unit(what: &'static str, field: &str, v: f64, lo: f64) -> Result<()> {
    if !v.is_finite() || v < lo || v > 1.0 {
        return Err(Error::invalid(
            what,
            format!("{field} must be a number in [{lo}, 1], not {v}"),
        ));
    }
    Ok(())
}

fn check_facts(what: &'static str, facts: &FactSheet) -> Result<()> {
    for line in facts.lines() {
        check_text(what, line)?;
        if line.contains('\n') || line.contains('\r') {
            return Err(Error::invalid(what, "a fact line contains a line break"));
        }
    }
    Ok(())
}

pub(super) fn distinct<T: PartialEq + std::fmt::Display>(
    what: &'static str,
    items: &[T],
) -> Result<()> {
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            return Err(Error::invalid(what, format!("{x} is listed twice")));
        }
    }
    Ok(())
}

impl World {
    /// Validates `event` against the current state and applies it. On error nothing changes.
    pub fn apply(&mut self, event: &Event) -> Result<()> {
        self.check_next(event)?;
        self.apply_variant(event)?;
        self.seq += 1;
        Ok(())
    }

    /// [`World::apply`] of an event the caller gives up: what the world keeps of the common
    /// events (lines, memories, edges, activities, states) is moved into it instead of copied.
    /// Replay uses it. Validation and outcome are exactly those of `apply`.
    pub fn apply_owned(&mut self, event: Event) -> Result<()> {
        self.check_next(&event)?;
        match event {
            Event::UserTurn { utterance } => self.add_utterance(Cow::Owned(utterance), true)?,
            Event::AssistantTurn { utterance } => {
                self.add_utterance(Cow::Owned(utterance), false)?
            }
            Event::MemoryAdded { memory } => self.add_memory(Cow::Owned(memory))?,
            Event::EdgeUpdated { edge } => self.update_edge(Cow::Owned(edge))?,
            Event::ActivityChanged { entity, activity } => {
                self.change_activity(entity, Cow::Owned(activity))?
            }
            Event::EntityStateChanged { entity, state } => {
                self.change_state(entity, Cow::Owned(state))?
            }
            other => self.apply_variant(&other)?,
        }
        self.seq += 1;
        Ok(())
    }

    /// What every event must pass before its own checks.
    fn check_next(&self, event: &Event) -> Result<()> {
        if self.seq == u64::MAX {
            return Err(Error::invalid(
                "event",
                "the world's sequence counter is exhausted",
            ));
        }
        if self.meta.is_none() && !matches!(event, Event::WorldCreated { .. }) {
            return Err(Error::invalid(
                "event",
                format!(
                    "the first event must be world_created, not {}",
                    event.kind()
                ),
            ));
        }
        self.check_guards(event)?;
        Ok(())
    }

    /// The event's own checks and changes (the sequence number aside). Each kind of record is
    /// applied in the file of what it changes.
    fn apply_variant(&mut self, event: &Event) -> Result<()> {
        match event {
            Event::WorldCreated {
                name,
                now,
                settings,
            } => {
                if self.meta.is_some() {
                    return Err(Error::conflict("the world has already been created"));
                }
                check_name("world", name)?;
                self.meta = Some(WorldMeta {
                    name: name.clone(),
                    created: *now,
                    settings: settings.clone(),
                });
                self.now = *now;
                self.minds_kept = true;
            }
            Event::EntityCreated {
                id,
                key,
                name,
                aliases,
                facts,
                host_controlled,
                state,
            } => self.create_entity(*id, key, name, aliases, facts, *host_controlled, state)?,
            Event::EntityEdited {
                id,
                name,
                aliases,
                facts,
                host_controlled,
            } => self.edit_entity(*id, name, aliases, facts, *host_controlled)?,
            Event::EntityRemoved { id } => self.remove_entity(*id)?,
            Event::ContainerCreated {
                id,
                key,
                name,
                facts,
                parent,
                slots,
                properties,
            } => self.create_container(*id, key, name, facts, *parent, slots, properties)?,
            Event::ContainerEdited {
                id,
                name,
                facts,
                parent,
                slots,
                properties,
            } => self.edit_container(*id, name, facts, *parent, slots, properties)?,
            Event::ContainerRemoved { id } => self.remove_container(*id)?,
            Event::ActivityChanged { entity, activity } => {
                self.change_activity(*entity, Cow::Borrowed(activity))?
            }
            Event::InventoryChanged { entity, inventory } => {
                self.change_inventory(*entity, inventory)?
            }
            Event::EntityStateChanged { entity, state } => {
                self.change_state(*entity, Cow::Borrowed(state))?
            }
            Event::EdgeUpdated { edge } => self.update_edge(Cow::Borrowed(edge))?,
            Event::EdgeRemoved { from, to } => self.remove_edge(*from, *to)?,
            Event::GroupUpdated { group } => self.update_group(group)?,
            Event::GroupRemoved { id } => self.remove_group(*id)?,
            Event::UserTurn { utterance } => self.add_utterance(Cow::Borrowed(utterance), true)?,
            Event::AssistantTurn { utterance } => {
                self.add_utterance(Cow::Borrowed(utterance), false)?
            }
            Event::MemoryAdded { memory } => self.add_memory(Cow::Borrowed(memory))?,
            Event::MemoryRemoved { id } => self.remove_memory(*id)?,
            Event::MemoriesRecalled { ids, at } => self.recall_memories(ids, *at)?,
            Event::TimeAdvanced { to } => {
                if *to < self.now {
                    return Err(Error::invalid(
                        "event",
                        format!("time cannot go back from {} to {to}", self.now),
                    ));
                }
                self.now = *to;
            }
            Event::TimeSkipped { from, to, skip } => {
                if *from != self.now {
                    return Err(Error::invalid(
                        "event",
                        format!("a skip begins at the world's time {}, not {from}", self.now),
                    ));
                }
                if *to <= *from {
                    return Err(Error::invalid(
                        "event",
                        format!("a skip goes forward: from {from} to {to}"),
                    ));
                }
                if let Skip::Elision { entity } = skip {
                    self.get_entity(*entity)?;
                }
                self.now = *to;
            }
            Event::ResponseDecided {
                entity,
                draws,
                retry_ms,
                ..
            } => {
                self.record_decision(*entity, draws)?;
                self.note_retry(*entity, *retry_ms);
            }
            Event::Generated { purpose, result } => self.record_generation(purpose, result)?,
            Event::ThreadOpened { thread } => self.open_thread(thread)?,
            Event::ThreadClosed { id, status } => self.close_thread(*id, *status)?,
            Event::ReportsJudged { reports } => self.record_reports(reports)?,
            Event::ToolsRun { speaker, calls } => self.record_tool_runs(*speaker, calls)?,
            Event::SystemLineInjected { line } => self.add_system_line(line)?,
            Event::SystemLinesShown { ids } => self.clear_shown_system_lines(ids)?,
            Event::ScopedEventPlanned { event } => self.plan_scoped_event(event)?,
            Event::ScopedEventStarted { id, at, draws } => {
                self.start_scoped_event(*id, *at, draws)?
            }
            Event::ScopedEventClosed {
                id,
                status,
                at,
                promotion,
            } => self.close_scoped_event(*id, *status, *at, promotion)?,
            Event::SceneOpened { scene } => self.open_scene(scene)?,
            Event::SceneClosed { id, at } => self.close_scene(*id, *at)?,
            Event::QueryAsked {
                id,
                text,
                asked_as,
                config,
                at,
            } => self.ask_query(*id, text, *asked_as, config, *at)?,
            Event::QueryAnswered {
                id,
                info_requests,
                rounds,
                context,
                answer,
                at,
            } => self.answer_query(*id, *info_requests, rounds, context, answer, *at)?,
            Event::QueryFailed {
                id,
                info_requests,
                rounds,
                error,
                at,
            } => self.fail_query(*id, *info_requests, rounds, error, *at)?,
            Event::DrivesConfigured { entity, config } => self.configure_drives(*entity, config)?,
            Event::PersonalitySet {
                entity,
                personality,
            } => self.set_personality(*entity, personality)?,
            Event::StimulusNotified { entity, stimulus } => {
                self.notify_stimulus(*entity, stimulus)?
            }
            Event::MindTicked {
                entity,
                at,
                asleep,
                processed,
                filtered,
            } => self.tick_mind(*entity, *at, *asleep, processed, filtered)?,
            Event::Initiated { initiation, at } => self.record_initiation(initiation, *at)?,
            Event::InitiationHeld { entity, until } => self.hold_initiation(*entity, *until)?,
            Event::AvailabilityReported {
                about,
                availability,
                at,
            } => self.report_availability(*about, *availability, *at)?,
            Event::BeliefObserved { observation } => self.observe_belief(observation)?,
            Event::PersonMentioned {
                id,
                key,
                name,
                facts,
                by,
                at,
            } => self.mention_person(*id, key, name, facts, *by, *at)?,
            Event::DecayPassed { at, changes, next } => self.pass_decay(*at, changes, *next)?,
            Event::MemoriesSummarized {
                owner,
                at,
                summaries,
            } => self.summarize_memories(*owner, *at, summaries)?,
            Event::Reflected {
                entity,
                at,
                insights,
                rejected,
            } => self.reflect(*entity, *at, insights, rejected.as_deref())?,
            Event::RuleAdded { rule } => self.add_rule(rule)?,
            Event::RuleRemoved {
                entity,
                rule,
                at,
                forgotten,
            } => self.remove_rule(*entity, *rule, *at, *forgotten)?,
            Event::RuleFired {
                entity,
                rule,
                at,
                held,
                cause,
                ..
            } => self.fire_rule(*entity, *rule, *at, *held, cause)?,
            Event::LorebookAdded { id, owner, json } => self.add_lorebook(*id, *owner, json)?,
            Event::LoreTimersSet { entity, timers } => self.set_lore_timers(*entity, timers)?,
            Event::AlternativesSet {
                line,
                texts,
                chosen,
            } => self.set_alternatives(*line, texts, *chosen)?,
            Event::CardAttached { entity, card } => {
                self.get_entity(*entity)?;
                Card::from_json(card)?;
                self.cards.insert(*entity, card.clone());
                // A new card brings its own files (the `CardAsset` events after it).
                self.card_assets.remove(entity);
            }
            Event::CardAsset {
                entity,
                path,
                bytes,
            } => self.add_card_asset(*entity, path, bytes)?,
            Event::StimulusClassified {
                entity,
                at,
                stimuli,
                kind,
                reason,
                pattern,
                classification,
                rejected,
            } => self.classify_stimuli(
                *entity,
                *at,
                stimuli,
                kind,
                reason,
                *pattern,
                classification.as_ref(),
                rejected.as_deref(),
            )?,
            Event::ThoughtFormed {
                entity,
                at,
                stimuli,
                reason,
                memory,
                effects,
                rejected,
            } => self.form_thought(
                *entity,
                *at,
                stimuli,
                reason,
                memory.as_ref(),
                effects,
                rejected.as_deref(),
            )?,
            Event::FeedbackLearned {
                entity,
                feedback,
                changes,
                reason,
                at,
            } => self.learn_feedback(*entity, feedback, changes, reason, *at)?,
            Event::RequirementAdded { requirement } => self.add_requirement(requirement)?,
            Event::RequirementRemoved { id } => self.remove_requirement(id)?,
            Event::RequirementAnnounced { id, line } => {
                self.announce_requirement(id, line.as_ref())?
            }
            Event::WorldFileApplied { file, text } => {
                if text.len() > MAX_WORLD_FILE_BYTES {
                    return Err(Error::invalid("event", "the world file is too large"));
                }
                self.world_file = Some(WorldFileBase {
                    file: file.clone(),
                    text: text.clone(),
                });
            }
        }
        Ok(())
    }

    pub(super) fn check_fresh(&self, id: u64) -> Result<()> {
        if id < self.next_id() {
            return Err(Error::conflict(format!(
                "id {id} is already taken; new ids start at {}",
                self.next_id()
            )));
        }
        if id == u64::MAX {
            return Err(Error::invalid("event", "id out of range"));
        }
        Ok(())
    }

    pub(super) fn take_id(&mut self, id: u64) {
        self.next_id = self.next_id.max(id + 1);
    }

    pub(super) fn get_entity(&self, id: EntityId) -> Result<&Entity> {
        self.entities
            .get(&id)
            .ok_or_else(|| Error::not_found("entity", id))
    }
}
