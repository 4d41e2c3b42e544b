//! `World::apply`: validation first, then mutation. An event that fails validation returns an
//! error before anything is touched, so the world stays byte-for-byte what it was.

use super::index::bump;
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

fn check_slots(slots: &[Slot]) -> Result<()> {
    for (i, s) in slots.iter().enumerate() {
        check_name("slot", &s.name)?;
        if slots[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::invalid(
                "container",
                format!("the slot {:?} is defined twice", s.name),
            ));
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
        Ok(())
    }

    /// The event's own checks and changes (the sequence number aside).
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
            }
            Event::EntityCreated {
                id,
                key,
                name,
                aliases,
                facts,
                host_controlled,
                state,
            } => {
                self.check_fresh(id.0)?;
                self.check_entity_identity(None, name, aliases, facts)?;
                self.check_state(state)?;
                let sheet = self.sheets.compile(name, facts)?;
                if let Some(k) = key {
                    check_name("entity key", k)?;
                    if self.index.entity_keys.contains_key(k) {
                        return Err(Error::conflict(format!(
                            "an entity with the key {k:?} already exists"
                        )));
                    }
                    self.index.entity_keys.insert(k.clone(), *id);
                }
                self.index.names.insert(name.to_lowercase(), *id);
                self.sheets.compiled.insert(*id, sheet);
                self.take_id(id.0);
                self.entities.insert(Entity {
                    id: *id,
                    key: key.clone(),
                    name: name.clone(),
                    aliases: aliases.clone(),
                    facts: facts.clone(),
                    host_controlled: *host_controlled,
                    state: state.clone(),
                    activity: Activity::default(),
                    inventory: Vec::new(),
                });
            }
            Event::EntityEdited {
                id,
                name,
                aliases,
                facts,
                host_controlled,
            } => {
                let current = self.get_entity(*id)?;
                let new_name = name.as_ref().unwrap_or(&current.name);
                let new_aliases = aliases.as_ref().unwrap_or(&current.aliases);
                let new_facts = facts.as_ref().unwrap_or(&current.facts);
                self.check_entity_identity(Some(*id), new_name, new_aliases, new_facts)?;
                let sheet = match facts {
                    Some(f) => Some(self.sheets.compile(new_name, f)?),
                    None => None,
                };
                let old_name = current.name.to_lowercase();
                if let Some(sheet) = sheet {
                    self.sheets.compiled.insert(*id, sheet);
                }
                if let Some(n) = name {
                    self.index.names.remove(&old_name);
                    self.index.names.insert(n.to_lowercase(), *id);
                }
                let e = self.entity_mut(*id)?;
                if let Some(n) = name {
                    e.name = n.clone();
                }
                if let Some(a) = aliases {
                    e.aliases = a.clone();
                }
                if let Some(f) = facts {
                    e.facts = f.clone();
                }
                if let Some(h) = host_controlled {
                    e.host_controlled = *h;
                }
            }
            Event::EntityRemoved { id } => self.remove_entity(*id)?,
            Event::ContainerCreated {
                id,
                key,
                name,
                facts,
                parent,
                slots,
                properties,
            } => {
                self.check_fresh(id.0)?;
                check_name("container", name)?;
                check_facts("container", facts)?;
                check_slots(slots)?;
                self.sheets.compile(name, facts)?;
                if let Some(p) = parent {
                    self.get_container(*p)?;
                }
                if let Some(k) = key {
                    check_name("container key", k)?;
                    if self.index.container_keys.contains_key(k) {
                        return Err(Error::conflict(format!(
                            "a container with the key {k:?} already exists"
                        )));
                    }
                }
                if let Some(k) = key {
                    self.index.container_keys.insert(k.clone(), *id);
                }
                if let Some(p) = parent {
                    bump(&mut self.index.children, *p, true);
                }
                self.take_id(id.0);
                self.containers.insert(Container {
                    id: *id,
                    key: key.clone(),
                    name: name.clone(),
                    facts: facts.clone(),
                    parent: *parent,
                    slots: slots.clone(),
                    properties: properties.clone(),
                });
            }
            Event::ContainerEdited {
                id,
                name,
                facts,
                parent,
                slots,
                properties,
            } => {
                let current = self.get_container(*id)?;
                check_name("container", name)?;
                check_facts("container", facts)?;
                check_slots(slots)?;
                if *facts != current.facts {
                    self.sheets.compile(name, facts)?;
                }
                if let Some(p) = parent {
                    self.check_no_cycle(*id, *p)?;
                }
                for old in &current.slots {
                    let used = self.occupancy(*id, &old.name);
                    if used == 0 {
                        continue;
                    }
                    match slots.iter().find(|s| s.name == old.name) {
                        None => {
                            return Err(Error::conflict(format!(
                                "the slot {:?} of {} is occupied and cannot be removed",
                                old.name, current.name
                            )));
                        }
                        Some(s) if s.capacity.is_some_and(|c| c < used) => {
                            return Err(Error::conflict(format!(
                                "the slot {:?} of {} holds {used}, more than the new capacity",
                                old.name, current.name
                            )));
                        }
                        _ => {}
                    }
                }
                let old_parent = current.parent;
                if let Some(p) = old_parent {
                    bump(&mut self.index.children, p, false);
                }
                if let Some(p) = parent {
                    bump(&mut self.index.children, *p, true);
                }
                let c = self.containers.get_mut(id).expect("checked above");
                c.name = name.clone();
                c.facts = facts.clone();
                c.parent = *parent;
                c.slots = slots.clone();
                c.properties = properties.clone();
            }
            Event::ContainerRemoved { id } => {
                let c = self.get_container(*id)?;
                if self.index.container_counts.contains_key(id) {
                    return Err(Error::conflict(format!(
                        "{} ({id}) still holds entities; move them out first",
                        c.name
                    )));
                }
                if self.index.children.contains_key(id) {
                    return Err(Error::conflict(format!(
                        "{} ({id}) still holds containers; remove them first",
                        c.name
                    )));
                }
                if let Some(scene) = self.index.open_scenes.get(id).and_then(|s| s.get_min()) {
                    return Err(Error::conflict(format!(
                        "{} ({id}) has an open scene ({scene}); close it first",
                        c.name
                    )));
                }
                let c = self.containers.remove(id).expect("checked above");
                if let Some(p) = c.parent {
                    bump(&mut self.index.children, p, false);
                }
                if let Some(k) = &c.key {
                    self.index.container_keys.remove(k);
                }
            }
            Event::ActivityChanged { entity, activity } => {
                self.change_activity(*entity, Cow::Borrowed(activity))?
            }
            Event::InventoryChanged { entity, inventory } => {
                self.check_inventory(*entity, inventory)?;
                let old = std::mem::take(&mut self.entity_mut(*entity)?.inventory);
                for item in &old {
                    self.index.carried_by.remove(item);
                }
                for item in inventory {
                    self.index.carried_by.insert(*item, *entity);
                }
                self.entity_mut(*entity)?.inventory = inventory.clone();
            }
            Event::EntityStateChanged { entity, state } => {
                self.change_state(*entity, Cow::Borrowed(state))?
            }
            Event::EdgeUpdated { edge } => self.update_edge(Cow::Borrowed(edge))?,
            Event::EdgeRemoved { from, to } => {
                if self.edges.remove(&(*from, *to)).is_none() {
                    return Err(Error::not_found("edge", format!("{from} → {to}")));
                }
            }
            Event::GroupUpdated { group } => {
                if !self.groups.contains(&group.id) {
                    self.check_fresh(group.id.0)?;
                }
                if group.members.len() < MIN_GROUP_SIZE {
                    return Err(Error::invalid(
                        "group",
                        format!("a group node needs at least {MIN_GROUP_SIZE} members"),
                    ));
                }
                for m in &group.members {
                    self.get_entity(*m)?;
                }
                if let Some(n) = &group.name {
                    check_name("group", n)?;
                }
                check_text("group", &group.summary)?;
                check_texts("group", &group.shared)?;
                self.take_id(group.id.0);
                self.groups.insert(group.clone());
            }
            Event::GroupRemoved { id } => {
                if self.groups.remove(id).is_none() {
                    return Err(Error::not_found("group", id));
                }
            }
            Event::UserTurn { utterance } => self.add_utterance(Cow::Borrowed(utterance), true)?,
            Event::AssistantTurn { utterance } => {
                self.add_utterance(Cow::Borrowed(utterance), false)?
            }
            Event::MemoryAdded { memory } => self.add_memory(Cow::Borrowed(memory))?,
            Event::MemoryRemoved { id } => {
                let Some(memory) = self.memories.remove(id) else {
                    return Err(Error::not_found("memory", id));
                };
                self.index.own_memory(&memory, false);
            }
            Event::MemoriesRecalled { ids, at } => {
                let mut seen = std::collections::BTreeSet::new();
                for id in ids {
                    if !seen.insert(*id) {
                        return Err(Error::invalid(
                            "memories recalled",
                            format!("{id} is listed twice"),
                        ));
                    }
                    if self.memories.get(id).is_none() {
                        return Err(Error::not_found("memory", id));
                    }
                }
                for id in ids {
                    if let Some(m) = self.memories.get(id) {
                        let mut m = m.clone();
                        m.last_accessed = Some(m.last_accessed.map_or(*at, |t| t.max(*at)));
                        m.access_count = m.access_count.saturating_add(1);
                        self.memories.insert(m);
                    }
                }
            }
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
            Event::ResponseDecided { entity, draws, .. } => {
                self.get_entity(*entity)?;
                if let Some(d) = draws.iter().find(|d| !(0.0..1.0).contains(*d)) {
                    return Err(Error::invalid(
                        "event",
                        format!("a random draw of {d} is outside [0, 1)"),
                    ));
                }
                self.draws_taken = self
                    .draws_taken
                    .checked_add(draws.len() as u64)
                    .ok_or_else(|| {
                        Error::invalid("event", "the random generator's counter is exhausted")
                    })?;
            }
            Event::Generated { purpose, result } => {
                if let Some(speaker) = purpose.speaker() {
                    self.get_entity(speaker)?;
                }
                check_text("generation", &result.text)?;
                check_texts("generation", result.model.iter())?;
            }
            Event::ThreadOpened { thread } => {
                self.check_fresh(thread.id.0)?;
                check_text("thread", &thread.text)?;
                if thread.text.trim().is_empty() {
                    return Err(Error::invalid("event", "a thread's text is empty"));
                }
                if thread.status != ThreadStatus::Open {
                    return Err(Error::invalid("event", "a thread opens as open"));
                }
                for p in &thread.participants {
                    self.get_entity(*p)?;
                }
                if let Some(ev) = thread.event
                    && self.scoped_event(ev).is_none()
                {
                    return Err(Error::not_found("scoped event", ev));
                }
                self.take_id(thread.id.0);
                self.threads.insert(thread.clone());
            }
            Event::ThreadClosed { id, status } => {
                let thread = self
                    .threads
                    .get(id)
                    .ok_or_else(|| Error::not_found("thread", id))?;
                if thread.status != ThreadStatus::Open {
                    return Err(Error::conflict(format!("thread {id} is already closed")));
                }
                if *status == ThreadStatus::Open {
                    return Err(Error::invalid(
                        "event",
                        "a thread closes as resolved or dropped",
                    ));
                }
                if let Some(t) = self.threads.get_mut(id) {
                    t.status = *status;
                }
            }
            Event::ReportsJudged { reports } => {
                for r in reports {
                    check_text("report", &r.report)?;
                    check_texts("report", r.rejected.iter().chain(r.answer.iter()))?;
                }
            }
            Event::ToolsRun { speaker, calls } => {
                self.get_entity(*speaker)?;
                let mut taken: u64 = 0;
                for c in calls {
                    check_texts("tool call", [&c.id, &c.name, &c.arguments, &c.result])?;
                    if let Some(d) = c.draws.iter().find(|d| !(0.0..1.0).contains(*d)) {
                        return Err(Error::invalid(
                            "event",
                            format!("a random draw of {d} is outside [0, 1)"),
                        ));
                    }
                    taken = taken.saturating_add(c.draws.len() as u64);
                }
                self.draws_taken = self.draws_taken.checked_add(taken).ok_or_else(|| {
                    Error::invalid("event", "the random generator's counter is exhausted")
                })?;
            }
            Event::SystemLineInjected { line } => {
                self.check_fresh(line.id)?;
                check_text("system line", &line.text)?;
                if line.text.trim().is_empty() {
                    return Err(Error::invalid("event", "a system line is empty"));
                }
                if line.audience.as_ref().is_some_and(Vec::is_empty) {
                    return Err(Error::invalid(
                        "event",
                        "a system line's audience is empty: no prompt would ever carry it",
                    ));
                }
                for e in line.audience.iter().flatten() {
                    self.get_entity(*e)?;
                }
                self.take_id(line.id);
                self.system_lines.push_back(line.clone());
            }
            Event::SystemLinesShown { ids } => {
                for id in ids {
                    if !self.system_lines.iter().any(|l| l.id == *id) {
                        return Err(Error::not_found("system line", id));
                    }
                }
                self.system_lines.retain(|l| !ids.contains(&l.id));
            }
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
            Event::SceneClosed { id, at } => {
                let scene = self
                    .scenes
                    .get(id)
                    .ok_or_else(|| Error::not_found("scene", id))?;
                if let Some(closed) = scene.closed {
                    return Err(Error::conflict(format!(
                        "{id} is already closed (at {closed})"
                    )));
                }
                if *at < scene.opened {
                    return Err(Error::invalid(
                        "scene",
                        format!(
                            "{id} cannot close at {at}, before it opened ({})",
                            scene.opened
                        ),
                    ));
                }
                let container = scene.container;
                self.index.open_scene(container, *id, false);
                if let Some(scene) = self.scenes.get_mut(id) {
                    scene.closed = Some(*at);
                }
                // Its witnesses' summaries stand for its lines from now on.
                let lines = self.index.memories_by_scene.get(id).cloned();
                for m in lines.iter().flatten() {
                    if let Some(memory) = self.memories.get_mut(m)
                        && memory.decay == DecayStage::Full
                    {
                        memory.decay = DecayStage::Summary;
                    }
                }
            }
            Event::QueryAsked {
                id,
                text,
                asked_as,
                config,
                at,
            } => {
                self.check_fresh(id.0)?;
                if let Some(e) = asked_as {
                    self.get_entity(*e)?;
                }
                let mut query = crate::model::WorldQuery::new(
                    *id,
                    text.clone(),
                    *asked_as,
                    config.clone(),
                    *at,
                )?;
                query.start_processing()?;
                self.take_id(id.0);
                self.queries.insert(query);
            }
            Event::QueryAnswered {
                id,
                info_requests,
                rounds,
                context,
                answer,
                at,
            } => {
                let mut query = self.query_ending(*id, *info_requests, rounds, *at)?;
                distinct("query context", context)?;
                for e in context {
                    self.get_entity(*e)?;
                }
                answer
                    .check(&|e| context.contains(&e))
                    .map_err(|m| Error::invalid("query answer", m))?;
                query.context = context.clone();
                query.complete(answer.clone(), *at)?;
                self.queries.insert(query);
            }
            Event::QueryFailed {
                id,
                info_requests,
                rounds,
                error,
                at,
            } => {
                let mut query = self.query_ending(*id, *info_requests, rounds, *at)?;
                if error.trim().is_empty() {
                    return Err(Error::invalid("query", "a failure needs its reason"));
                }
                check_text("query", error)?;
                query.fail(error.clone(), *at)?;
                self.queries.insert(query);
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

    // The common events, by reference or by value (see `apply_owned`).

    fn add_utterance(&mut self, utterance: Cow<'_, Utterance>, user: bool) -> Result<()> {
        self.check_utterance(&utterance, user)?;
        if let Some(id) = utterance.scene {
            let scene = self
                .scenes
                .get(&id)
                .ok_or_else(|| Error::not_found("scene", id))?;
            if !scene.is_open() {
                return Err(Error::conflict(format!(
                    "{id} is closed; a line cannot join it"
                )));
            }
            let scene = self.scenes.get_mut(&id).expect("checked above");
            scene.lines = scene.lines.saturating_add(1);
            scene.last_line = Some(
                scene
                    .last_line
                    .map_or(utterance.at, |t| t.max(utterance.at)),
            );
            scene.witnesses.0.extend(utterance.witnesses.iter());
        }
        self.take_id(utterance.id.0);
        self.note_utterance(utterance.speaker, utterance.at, &utterance.witnesses);
        self.dialogue.push_back(utterance.into_owned());
        let window = self
            .meta
            .as_ref()
            .map_or(0, |m| m.settings.dialogue_window as usize);
        while self.dialogue.len() > window {
            self.dialogue.pop_front();
        }
        Ok(())
    }

    fn open_scene(&mut self, scene: &Scene) -> Result<()> {
        self.check_fresh(scene.id.0)?;
        self.get_container(scene.container)?;
        if scene.closed.is_some() || scene.lines != 0 || scene.last_line.is_some() {
            return Err(Error::invalid(
                "scene",
                "a scene opens open, with no lines yet",
            ));
        }
        for w in scene.witnesses.iter() {
            self.get_entity(w)?;
        }
        self.take_id(scene.id.0);
        self.index.open_scene(scene.container, scene.id, true);
        self.scenes.insert(scene.clone());
        Ok(())
    }

    fn add_memory(&mut self, memory: Cow<'_, Memory>) -> Result<()> {
        self.check_fresh(memory.id.0)?;
        self.get_entity(memory.owner)?;
        if !memory.witnesses.contains(memory.owner) {
            return Err(Error::invalid(
                "memory",
                "the owner must be among the witnesses",
            ));
        }
        for w in memory.witnesses.iter() {
            self.get_entity(w)?;
        }
        if memory.text.trim().is_empty() {
            return Err(Error::invalid("memory", "the text is empty"));
        }
        check_text("memory", &memory.text)?;
        check_unit("memory", "significance", memory.significance, 0.0)?;
        if let Some(v) = &memory.embedding {
            crate::model::check_embedding(v).map_err(|m| Error::invalid("memory", m))?;
        }
        if let Some(scene) = memory.scene
            && self.scenes.get(&scene).is_none()
        {
            return Err(Error::not_found("scene", scene));
        }
        self.take_id(memory.id.0);
        self.index.own_memory(&memory, true);
        self.memories.insert(memory.into_owned());
        Ok(())
    }

    fn update_edge(&mut self, edge: Cow<'_, Edge>) -> Result<()> {
        self.check_edge(&edge)?;
        self.edges.insert(edge.into_owned());
        Ok(())
    }

    fn change_activity(&mut self, entity: EntityId, activity: Cow<'_, Activity>) -> Result<()> {
        self.check_activity(entity, &activity)?;
        let old = self.get_entity(entity)?.activity.position.clone();
        self.track_position(old.as_ref(), false);
        self.track_position(activity.position.as_ref(), true);
        self.entity_mut(entity)?.activity = activity.into_owned();
        Ok(())
    }

    fn change_state(&mut self, entity: EntityId, state: Cow<'_, EntityState>) -> Result<()> {
        self.get_entity(entity)?;
        self.check_state(&state)?;
        self.entity_mut(entity)?.state = state.into_owned();
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

    fn entity_mut(&mut self, id: EntityId) -> Result<&mut Entity> {
        self.entities
            .get_mut(&id)
            .ok_or_else(|| Error::not_found("entity", id))
    }

    fn get_container(&self, id: ContainerId) -> Result<&Container> {
        self.containers
            .get(&id)
            .ok_or_else(|| Error::not_found("container", id))
    }

    fn check_entity_identity(
        &self,
        id: Option<EntityId>,
        name: &str,
        aliases: &[String],
        facts: &FactSheet,
    ) -> Result<()> {
        check_name("entity", name)?;
        if let Some(other) = self.index.names.get(&name.to_lowercase())
            && Some(*other) != id
        {
            return Err(Error::conflict(format!(
                "an entity named {name:?} already exists ({other})"
            )));
        }
        for a in aliases {
            check_name("alias", a)?;
        }
        check_facts("entity", facts)
    }

    fn check_state(&self, state: &EntityState) -> Result<()> {
        check_texts("state", state.mood.iter())?;
        check_texts("state", state.status.iter())?;
        check_texts("state", &state.goals)
    }

    fn check_no_cycle(&self, id: ContainerId, parent: ContainerId) -> Result<()> {
        let mut at = Some(parent);
        while let Some(c) = at {
            if c == id {
                return Err(Error::invalid(
                    "container",
                    format!("{id} cannot be inside itself"),
                ));
            }
            at = self.get_container(c)?.parent;
        }
        Ok(())
    }

    fn check_activity(&self, id: EntityId, activity: &Activity) -> Result<()> {
        let entity = self.get_entity(id)?;
        if let Some(pos) = &activity.position {
            if let Some(carrier) = self.carrier_of(id) {
                return Err(Error::conflict(format!(
                    "{} is carried by {carrier}; an entity cannot be in two places",
                    entity.name
                )));
            }
            let c = self.get_container(pos.container)?;
            if let Some(slot_name) = &pos.slot {
                let slot = c.slot(slot_name).ok_or_else(|| {
                    Error::not_found("slot", format!("{slot_name:?} in {}", c.name))
                })?;
                let already_there = entity.activity.position.as_ref() == Some(pos);
                if let Some(cap) = slot.capacity
                    && !already_there
                    && self.occupancy(pos.container, slot_name) >= cap
                {
                    return Err(Error::SlotFull {
                        container: c.name.clone(),
                        slot: slot_name.clone(),
                        capacity: cap,
                    });
                }
            }
        }
        distinct("activity", &activity.holding)?;
        for item in &activity.holding {
            if !entity.inventory.contains(item) {
                return Err(Error::invalid(
                    "activity",
                    format!(
                        "{} cannot hold {item}: it is not in its inventory",
                        entity.name
                    ),
                ));
            }
        }
        if let Some(a) = activity.attention {
            self.get_entity(a)?;
        }
        if let Some(action) = &activity.action {
            if action.verb.trim().is_empty() {
                return Err(Error::invalid("activity", "the action has no verb"));
            }
            check_text("activity", &action.verb)?;
        }
        check_texts("activity", activity.posture.iter())?;
        check_texts("activity", activity.status.iter())
    }

    fn track_position(&mut self, pos: Option<&Position>, up: bool) {
        if let Some(p) = pos {
            bump(&mut self.index.container_counts, p.container, up);
            if let Some(slot) = &p.slot {
                bump(&mut self.index.slot_counts, (p.container, slot.clone()), up);
            }
        }
    }

    fn check_inventory(&self, id: EntityId, inventory: &[EntityId]) -> Result<()> {
        let entity = self.get_entity(id)?;
        distinct("inventory", inventory)?;
        for item in inventory {
            let it = self.get_entity(*item)?;
            if *item == id {
                return Err(Error::invalid(
                    "inventory",
                    format!("{} cannot carry itself", entity.name),
                ));
            }
            if let Some(carrier) = self.carrier_of(*item)
                && carrier != id
            {
                return Err(Error::conflict(format!(
                    "{} is already carried by {carrier}; an entity cannot be in two places",
                    it.name
                )));
            }
            if it.activity.position.is_some() {
                return Err(Error::conflict(format!(
                    "{} stands in a container; an entity cannot be in two places (move it out first)",
                    it.name
                )));
            }
            // Carrying an entity that (transitively) carries us would make a loop.
            let mut at = self.carrier_of(id);
            while let Some(c) = at {
                if c == *item {
                    return Err(Error::conflict(format!(
                        "{} carries {} already",
                        it.name, entity.name
                    )));
                }
                at = self.carrier_of(c);
            }
        }
        for held in &entity.activity.holding {
            if !inventory.contains(held) {
                return Err(Error::conflict(format!(
                    "{} still holds {held}; put it down before removing it from the inventory",
                    entity.name
                )));
            }
        }
        Ok(())
    }

    fn check_edge(&self, edge: &Edge) -> Result<()> {
        if edge.from == edge.to {
            return Err(Error::invalid(
                "edge",
                format!("an edge cannot point from {} to itself", edge.from),
            ));
        }
        self.get_entity(edge.from)?;
        self.get_entity(edge.to)?;
        check_unit("edge", "affinity", edge.affinity, -1.0)?;
        check_unit("edge", "trust", edge.trust, -1.0)?;
        check_text("edge", &edge.summary)?;
        check_texts("edge", &edge.knowledge)?;
        check_texts("edge", &edge.private_moments)
    }

    fn check_utterance(&self, u: &Utterance, user: bool) -> Result<()> {
        self.check_fresh(u.id.0)?;
        let speaker = self.get_entity(u.speaker)?;
        if speaker.host_controlled != user {
            return Err(Error::invalid(
                "utterance",
                if user {
                    format!(
                        "{} is not host-controlled; its lines are assistant turns",
                        speaker.name
                    )
                } else {
                    format!(
                        "{} is host-controlled; the engine never speaks for it",
                        speaker.name
                    )
                },
            ));
        }
        if !u.witnesses.contains(u.speaker) {
            return Err(Error::invalid(
                "utterance",
                "the speaker must be among the witnesses",
            ));
        }
        for w in u.witnesses.iter() {
            self.get_entity(w)?;
        }
        check_text("utterance", &u.text)?;
        check_texts("utterance", u.model.iter())
    }

    fn remove_entity(&mut self, id: EntityId) -> Result<()> {
        let e = self.get_entity(id)?;
        if !e.inventory.is_empty() {
            return Err(Error::conflict(format!(
                "{} still carries items; move them out first",
                e.name
            )));
        }
        if let Some(carrier) = self.carrier_of(id) {
            return Err(Error::conflict(format!(
                "{} is carried by {carrier}; take it out of the inventory first",
                e.name
            )));
        }
        let e = self.entities.remove(&id).expect("checked above");
        self.sheets.compiled.remove(&id);
        self.speech.remove(&id);
        self.index.names.remove(&e.name.to_lowercase());
        if let Some(k) = &e.key {
            self.index.entity_keys.remove(k);
        }
        self.track_position(e.activity.position.as_ref(), false);
        let edges: Vec<_> = self
            .edges
            .iter()
            .filter(|x| x.from == id || x.to == id)
            .map(|x| (x.from, x.to))
            .collect();
        for k in edges {
            self.edges.remove(&k);
        }
        let groups: Vec<_> = self
            .groups
            .iter()
            .filter(|g| g.members.contains(&id))
            .map(|g| g.id)
            .collect();
        for g in groups {
            let group = self.groups.get_mut(&g).expect("listed above");
            group.members.remove(&id);
            if group.members.len() < MIN_GROUP_SIZE {
                self.groups.remove(&g);
            }
        }
        let memories: Vec<_> = self
            .memories
            .iter()
            .filter(|m| m.owner == id)
            .map(|m| m.id)
            .collect();
        for m in memories {
            if let Some(memory) = self.memories.remove(&m)
                && let Some(scene) = memory.scene
            {
                super::index::drop_from_set(&mut self.index.memories_by_scene, scene, m);
            }
        }
        let scenes: Vec<_> = self
            .scenes
            .iter()
            .filter(|s| s.witnesses.contains(id))
            .map(|s| s.id)
            .collect();
        for s in scenes {
            if let Some(scene) = self.scenes.get_mut(&s) {
                scene.witnesses.0.remove(&id);
            }
        }
        self.index.memories_by_owner.remove(&id);
        self.index.always_by_owner.remove(&id);
        let attending: Vec<_> = self
            .entities
            .iter()
            .filter(|x| x.activity.attention == Some(id))
            .map(|x| x.id)
            .collect();
        for x in attending {
            self.entity_mut(x)?.activity.attention = None;
        }
        Ok(())
    }
}
