//! Judging a report: every name resolved against what exists and is present, every value
//! checked against its range, the change computed by the engine, and the resulting events
//! applied to a copy of the world. A report whose events the world refuses is rejected with
//! the world's reason; nothing of it is applied.

use super::report::{Direction, Report};
use crate::log::{Event, World};
use crate::model::MAX_KNOWLEDGE;
use crate::model::{
    Action, BeliefObservation, BeliefSource, ContainerId, Edge, EntityId, EventStatus, FactSheet,
    Feeling, GistPromotion, Millis, Position, Promotion, RuleId, RuleSource, ScopedEventId, Thread,
    ThreadId, ThreadStatus, WitnessSet,
};
use crate::story::{self, Batch};
use std::collections::BTreeMap;

/// The longest fact, summary or thread text a report may carry (characters).
pub const MAX_REPORT_TEXT: usize = 1000;
/// What a pass judges against.
pub(super) struct Judge<'a> {
    /// The world as the turn left it; accepted reports are applied to it.
    pub world: &'a mut World,
    /// Who was present: the witnesses of the turn's lines.
    pub present: &'a WitnessSet,
    /// The turn's lines: (speaker, witnesses), in order.
    pub lines: &'a [(EntityId, WitnessSet)],
    /// Whether the turn's lines become memories (a significance report needs them).
    pub remembered: bool,
    /// The step of one `warmer`/`colder` or `more`/`less`.
    pub step: f64,
    pub now: Millis,
    /// Significance by (line index, owner), for the memories the turn forms.
    pub significance: &'a mut BTreeMap<(usize, EntityId), f64>,
}

impl Judge<'_> {
    /// Judges `report`: its events applied to the world, or why not.
    pub fn judge(&mut self, report: &Report) -> Result<Vec<Event>, String> {
        let events = self.events(report)?;
        let mut next = self.world.clone();
        for e in &events {
            next.apply(e).map_err(|e| e.to_string())?;
        }
        *self.world = next;
        Ok(events)
    }

    fn events(&mut self, report: &Report) -> Result<Vec<Event>, String> {
        match report {
            Report::Feeling {
                who,
                toward,
                affinity,
                trust,
            } => {
                let who = self.present_one(who)?;
                let toward = self.other(toward, who)?;
                let mut edge = self.edge(who, toward);
                let step = |d: Direction, up: Direction, down: Direction, what: &str| {
                    if d == up {
                        Ok(self.step)
                    } else if d == down {
                        Ok(-self.step)
                    } else {
                        Err(format!("{what} is {up:?} or {down:?}").to_lowercase())
                    }
                };
                if affinity.is_none() && trust.is_none() {
                    return Err(
                        "a feeling needs affinity (warmer/colder) or trust (more/less)".into(),
                    );
                }
                if let Some(d) = affinity {
                    let s = step(*d, Direction::Warmer, Direction::Colder, "affinity")?;
                    edge.affinity = (edge.affinity + s).clamp(-1.0, 1.0);
                }
                if let Some(d) = trust {
                    let s = step(*d, Direction::More, Direction::Less, "trust")?;
                    edge.trust = (edge.trust + s).clamp(-1.0, 1.0);
                }
                Ok(vec![Event::EdgeUpdated { edge }])
            }
            Report::Learned { who, about, fact } => {
                let who = self.present_one(who)?;
                let about = self.other(about, who)?;
                let fact = text("fact", fact)?;
                let mut edge = self.edge(who, about);
                if edge.knowledge.iter().any(|k| k.eq_ignore_ascii_case(&fact)) {
                    return Err("already known".into());
                }
                edge.knowledge.push(fact);
                if edge.knowledge.len() > MAX_KNOWLEDGE {
                    edge.knowledge.remove(0);
                }
                Ok(vec![Event::EdgeUpdated { edge }])
            }
            Report::Relationship {
                who,
                toward,
                summary,
            } => {
                let who = self.present_one(who)?;
                let toward = self.other(toward, who)?;
                let mut edge = self.edge(who, toward);
                edge.summary = text("summary", summary)?;
                Ok(vec![Event::EdgeUpdated { edge }])
            }
            Report::State {
                who,
                mood,
                goals,
                status,
                facts,
            } => {
                let who = self.present_one(who)?;
                if mood.is_none() && goals.is_none() && status.is_none() && facts.is_none() {
                    return Err("a state report needs mood, goals, status or facts".into());
                }
                let mut events = Vec::new();
                if let Some(facts) = facts {
                    let sheet = crate::update::facts::set_facts(&self.entity(who).facts, facts)?;
                    events.push(Event::EntityEdited {
                        id: who,
                        name: None,
                        aliases: None,
                        facts: Some(sheet),
                        host_controlled: None,
                    });
                    if mood.is_none() && goals.is_none() && status.is_none() {
                        return Ok(events);
                    }
                }
                let mut state = self.entity(who).state.clone();
                if let Some(m) = mood {
                    state.mood = short("mood", m)?;
                }
                if let Some(s) = status {
                    state.status = short("status", s)?;
                }
                if let Some(g) = goals {
                    if g.len() > 8 {
                        return Err("at most 8 goals".into());
                    }
                    state.goals = g
                        .iter()
                        .map(|g| text("goal", g))
                        .collect::<Result<_, _>>()?;
                }
                events.push(Event::EntityStateChanged { entity: who, state });
                Ok(events)
            }
            Report::Activity {
                who,
                move_to,
                slot,
                posture,
                action,
                stop_action,
                pick_up,
                put_down,
            } => self.activity(
                who,
                move_to.as_deref(),
                slot.as_deref(),
                posture.as_deref(),
                action.as_deref(),
                stop_action.unwrap_or(false),
                pick_up.as_deref(),
                put_down.as_deref(),
            ),
            Report::ThreadOpened {
                text: t,
                participants,
            } => {
                if participants.is_empty() {
                    return Err("a thread needs at least one participant".into());
                }
                let mut ids = Vec::new();
                for p in participants {
                    let id = self.present_one(p)?;
                    if !ids.contains(&id) {
                        ids.push(id);
                    }
                }
                Ok(vec![Event::ThreadOpened {
                    thread: Thread {
                        id: ThreadId(self.world.next_id()),
                        text: text("thread", t)?,
                        participants: ids,
                        opened: self.now,
                        status: ThreadStatus::Open,
                        event: None,
                    },
                }])
            }
            Report::ThreadResolved { thread } | Report::ThreadDropped { thread } => {
                let id = ThreadId(*thread);
                let t = self
                    .world
                    .threads()
                    .find(|t| t.id == id && t.status == ThreadStatus::Open)
                    .ok_or_else(|| format!("there is no open thread {thread}"))?;
                if !t.participants.iter().any(|p| self.present.contains(*p)) {
                    return Err(format!("no participant of thread {thread} is present"));
                }
                let status = if matches!(report, Report::ThreadResolved { .. }) {
                    ThreadStatus::Resolved
                } else {
                    ThreadStatus::Dropped
                };
                Ok(vec![Event::ThreadClosed { id, status }])
            }
            Report::EventStarted { event } => {
                let id = self.listed_event(*event, EventStatus::Planned)?;
                let mut batch = Batch::new(self.world);
                story::start(&mut batch, id, self.now, false).map_err(|e| e.to_string())?;
                Ok(batch.events)
            }
            Report::EventCompleted { event, gist } => {
                let id = self.listed_event(*event, EventStatus::Active)?;
                let mut promotion = Promotion::default();
                if let Some(g) = gist {
                    let g = text("gist", g)?;
                    let participants = self
                        .world
                        .scoped_event(id)
                        .map(|e| e.participants.clone())
                        .unwrap_or_default();
                    for p in participants
                        .into_iter()
                        .filter(|p| self.present.contains(*p))
                    {
                        promotion.gists.push(GistPromotion {
                            witness: p,
                            text: g.clone(),
                            significance: None,
                        });
                    }
                }
                let mut batch = Batch::new(self.world);
                story::close(&mut batch, id, EventStatus::Completed, self.now, promotion)
                    .map_err(|e| e.to_string())?;
                Ok(batch.events)
            }
            Report::Significance {
                who,
                line,
                significance,
            } => {
                let who_id = self.present_one(who)?;
                if !self.remembered {
                    return Err("this turn's lines are not remembered".into());
                }
                let index = (*line as usize)
                    .checked_sub(1)
                    .filter(|i| *i < self.lines.len())
                    .ok_or_else(|| {
                        format!("there is no line {line}; the turn has {}", self.lines.len())
                    })?;
                if !self.lines[index].1.contains(who_id) {
                    return Err(format!("{who} did not hear line {line}"));
                }
                if !(0.0..=1.0).contains(significance) {
                    return Err(format!("significance {significance} is outside 0–1"));
                }
                self.significance.insert((index, who_id), *significance);
                Ok(Vec::new())
            }
            Report::Belief {
                who,
                about,
                line,
                mood,
                energy,
                availability,
                traits,
                confidence,
                inferred,
            } => {
                let who_id = self.present_one(who)?;
                let speaker = self.heard(who_id, who, *line)?;
                let about = self.other(about, who_id)?;
                let (source, confidence) =
                    self.source(who_id, about, speaker, *inferred, *confidence)?;
                let traits = traits.clone().unwrap_or_default();
                if mood.is_none() && energy.is_none() && availability.is_none() && traits.is_empty()
                {
                    return Err("a belief needs mood, energy, availability or traits".into());
                }
                for (field, v) in [("energy", energy), ("availability", availability)] {
                    if let Some(v) = v
                        && !(0.0..=1.0).contains(v)
                    {
                        return Err(format!("{field} {v} is outside 0–1"));
                    }
                }
                let mood = match mood {
                    Some(m) => {
                        Some(short("mood", m)?.ok_or("the mood is empty; leave it out instead")?)
                    }
                    None => None,
                };
                let traits = traits
                    .iter()
                    .map(|t| short("trait", t)?.ok_or_else(|| "a trait is empty".to_owned()))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(vec![Event::BeliefObserved {
                    observation: BeliefObservation {
                        observer: who_id,
                        about,
                        mood,
                        energy: *energy,
                        availability: *availability,
                        traits,
                        feelings: Vec::new(),
                        confidence,
                        source,
                        // The world's clock (the turn's host time once its input is
                        // committed): `apply` records beliefs and mentions at it.
                        at: self.world.now(),
                    },
                }])
            }
            Report::PersonMentioned {
                name,
                line,
                description,
            } => {
                let index = self.line_index(*line)?;
                let name = name.trim();
                not_system("name", name)?;
                if self.named(name).is_ok() {
                    return Err(format!(
                        "\"{name}\" is already known; name them so in other reports"
                    ));
                }
                let facts = match description {
                    Some(d) => {
                        FactSheet::from_text(&text("description", d)?.replace(['\n', '\r'], " "))
                    }
                    None => FactSheet::default(),
                };
                Ok(vec![Event::PersonMentioned {
                    id: EntityId(self.world.next_id()),
                    key: None,
                    name: name.to_owned(),
                    facts,
                    by: Some(self.lines[index].0),
                    at: self.world.now(),
                }])
            }
            Report::Relation {
                who,
                from,
                to,
                line,
                sentiment,
                relation,
                inferred,
            } => {
                let who_id = self.present_one(who)?;
                let speaker = self.heard(who_id, who, *line)?;
                let from = self.named(from)?;
                if from == who_id {
                    return Err("one's own feelings: use a feeling report".into());
                }
                let to = self.named(to)?;
                if from == to {
                    return Err("a relation is between two people".into());
                }
                if !(-1.0..=1.0).contains(sentiment) {
                    return Err(format!("sentiment {sentiment} is outside −1 to 1"));
                }
                let relation = match relation {
                    Some(r) => short("relation", r)?,
                    None => None,
                };
                let (source, confidence) = self.source(who_id, from, speaker, *inferred, None)?;
                let mut events = vec![Event::BeliefObserved {
                    observation: BeliefObservation {
                        observer: who_id,
                        about: from,
                        mood: None,
                        energy: None,
                        availability: None,
                        traits: Vec::new(),
                        feelings: vec![Feeling {
                            toward: to,
                            sentiment: *sentiment,
                            text: relation.clone().unwrap_or_default(),
                        }],
                        confidence,
                        source,
                        at: self.world.now(),
                    },
                }];
                // A person only mentioned has no feelings of its own the story could set: what
                // was said of them is their edge, with where it comes from.
                if self.entity(from).mentioned {
                    let mut edge = self.edge(from, to);
                    edge.last_interaction =
                        self.world.edge(from, to).and_then(|e| e.last_interaction);
                    edge.affinity = *sentiment;
                    if let Some(r) = relation {
                        edge.summary = r;
                    }
                    edge.source = Some(source);
                    events.push(Event::EdgeUpdated { edge });
                }
                Ok(events)
            }
            Report::Rule {
                who,
                description,
                on,
                intent,
                condition,
                weight,
            } => {
                let who = self.present_one(who)?;
                // The model says what who means to do; the engine moves drives (seed 002).
                if intent.get("drive").is_some() {
                    return Err(
                        "a rule the story reports means to speak to someone or keeps a note".into(),
                    );
                }
                let mut value = serde_json::json!({
                    "description": description,
                    "on": on,
                    "intent": intent,
                });
                if let Some(c) = condition {
                    value["condition"] = c.clone().into();
                }
                if let Some(w) = weight {
                    value["weight"] = (*w).into();
                }
                let id = RuleId(self.world.next_id());
                // The world's clock, as for beliefs (the turn's time once its input is
                // committed).
                let now = self.world.now();
                let rule = self
                    .world
                    .rule_from_value(who, value, id, now, RuleSource::Model)
                    .map_err(|e| e.to_string())?;
                Ok(vec![Event::RuleAdded { rule }])
            }
        }
    }

    /// The index of line `line` (from 1) of the turn.
    fn line_index(&self, line: u32) -> Result<usize, String> {
        (line as usize)
            .checked_sub(1)
            .filter(|i| *i < self.lines.len())
            .ok_or_else(|| format!("there is no line {line}; the turn has {}", self.lines.len()))
    }

    /// The speaker of line `line`, which `who` must have heard: a character comes to believe
    /// only what it witnessed.
    fn heard(&self, who: EntityId, name: &str, line: u32) -> Result<EntityId, String> {
        let index = self.line_index(line)?;
        let (speaker, witnesses) = &self.lines[index];
        if !witnesses.contains(who) {
            return Err(format!("{name} did not hear line {line}"));
        }
        Ok(*speaker)
    }

    /// Where `who`'s belief about `subject` from a line of `speaker` comes from, and its
    /// confidence: the one given, capped by the source's ceiling (the ceiling when none is
    /// given).
    fn source(
        &self,
        who: EntityId,
        subject: EntityId,
        speaker: EntityId,
        inferred: Option<bool>,
        given: Option<f64>,
    ) -> Result<(BeliefSource, f64), String> {
        let source = if inferred == Some(true) || speaker == who {
            BeliefSource::Inferred
        } else if speaker == subject {
            BeliefSource::Observed
        } else {
            BeliefSource::ToldBy(speaker)
        };
        let ceiling = source_ceiling(source);
        let confidence = match given {
            Some(c) if !(0.0..=1.0).contains(&c) => {
                return Err(format!("confidence {c} is outside 0–1"));
            }
            Some(c) => c.min(ceiling),
            None => ceiling,
        };
        Ok((source, confidence))
    }

    /// A host action's report: `who` present, the other fields valid against the action's
    /// parameters. Returns who and those fields.
    pub fn action(
        &self,
        action: &super::ActionType,
        args: &serde_json::Value,
    ) -> Result<(EntityId, serde_json::Value), String> {
        let who = args
            .get("who")
            .and_then(serde_json::Value::as_str)
            .ok_or("an action needs \"who\", a present person")?;
        let who = self.present_one(who)?;
        let mut fields = args.clone();
        if let Some(o) = fields.as_object_mut() {
            o.remove("type");
            o.remove("who");
        }
        let mut schema = action.parameters.clone();
        if schema.get("type").is_none() {
            schema["type"] = "object".into();
        }
        super::schema_check::validate(&fields, &schema, &action.name)?;
        Ok((who, fields))
    }

    #[allow(clippy::too_many_arguments)]
    fn activity(
        &self,
        who: &str,
        move_to: Option<&str>,
        slot: Option<&str>,
        posture: Option<&str>,
        action: Option<&str>,
        stop_action: bool,
        pick_up: Option<&str>,
        put_down: Option<&str>,
    ) -> Result<Vec<Event>, String> {
        let who = self.present_one(who)?;
        let entity = self.entity(who);
        let mut activity = entity.activity.clone();
        let mut inventory = entity.inventory.clone();
        let mut events = Vec::new();
        let here = activity.position.as_ref().map(|p| p.container);
        if move_to.is_none()
            && slot.is_none()
            && posture.is_none()
            && action.is_none()
            && !stop_action
            && pick_up.is_none()
            && put_down.is_none()
        {
            return Err("an activity report needs a change".into());
        }
        if move_to.is_some() || slot.is_some() {
            let container = match move_to {
                Some(name) => self.place(name)?,
                None => here.ok_or("a slot needs a place; who is nowhere")?,
            };
            let slot = match slot {
                Some(s) => {
                    let c = self.world.container(container).ok_or("no such place")?;
                    let found = c
                        .slots
                        .iter()
                        .find(|x| x.name.eq_ignore_ascii_case(s))
                        .ok_or_else(|| format!("{} has no slot \"{s}\"", c.name))?;
                    Some(found.name.clone())
                }
                None => None,
            };
            activity.position = Some(Position { container, slot });
        }
        if let Some(p) = posture {
            activity.posture = short("posture", p)?;
        }
        if stop_action {
            activity.action = None;
        }
        if let Some(verb) = action {
            activity.action = Some(Action {
                verb: text("action", verb)?,
                started: self.now,
                duration_ms: None,
                interruptible: true,
                attention_required: false,
            });
        }
        if let Some(name) = pick_up {
            let item = self.named(name)?;
            if item == who {
                return Err("nothing picks itself up".into());
            }
            if self.entity(item).host_controlled {
                return Err(format!("{name} is a person, not an item"));
            }
            if inventory.contains(&item) {
                return Err(format!("{name} is already carried by its owner"));
            }
            if let Some(by) = self.world.carrier_of(item) {
                return Err(format!("{name} is carried by {}", self.entity(by).name));
            }
            let at = self
                .entity(item)
                .activity
                .position
                .as_ref()
                .map(|p| p.container);
            if at.is_none() || at != here {
                return Err(format!("{name} is not within reach"));
            }
            let mut item_activity = self.entity(item).activity.clone();
            item_activity.position = None;
            events.push(Event::ActivityChanged {
                entity: item,
                activity: item_activity,
            });
            inventory.push(item);
            activity.holding.push(item);
        }
        if let Some(name) = put_down {
            let item = self.named(name)?;
            if !inventory.contains(&item) {
                return Err(format!("{name} is not carried"));
            }
            let container = here.ok_or("who is nowhere; nowhere to put it")?;
            inventory.retain(|i| *i != item);
            activity.holding.retain(|i| *i != item);
            // Out of the hand, out of the inventory, onto the floor.
            events.push(Event::ActivityChanged {
                entity: who,
                activity,
            });
            events.push(Event::InventoryChanged {
                entity: who,
                inventory: inventory.clone(),
            });
            let mut item_activity = self.entity(item).activity.clone();
            item_activity.position = Some(Position {
                container,
                slot: None,
            });
            events.push(Event::ActivityChanged {
                entity: item,
                activity: item_activity,
            });
            return Ok(events);
        }
        if pick_up.is_some() {
            events.push(Event::InventoryChanged {
                entity: who,
                inventory,
            });
        }
        events.push(Event::ActivityChanged {
            entity: who,
            activity,
        });
        Ok(events)
    }

    /// The scoped event numbered `n`, in `status`, with a participant present.
    fn listed_event(&self, n: u64, status: EventStatus) -> Result<ScopedEventId, String> {
        let id = ScopedEventId(n);
        let ev = self
            .world
            .scoped_event(id)
            .filter(|e| e.status == status)
            .ok_or_else(|| {
                let s = if status == EventStatus::Active {
                    "active"
                } else {
                    "planned"
                };
                format!("there is no {s} event {n}")
            })?;
        if !ev.participants.iter().any(|p| self.present.contains(*p)) {
            return Err(format!("no participant of event {n} is present"));
        }
        Ok(id)
    }

    fn entity(&self, id: EntityId) -> &crate::model::Entity {
        self.world
            .entity(id)
            .expect("resolved names are entities of this world")
    }

    fn edge(&self, from: EntityId, to: EntityId) -> Edge {
        let mut edge = self
            .world
            .edge(from, to)
            .cloned()
            .unwrap_or_else(|| Edge::new(from, to));
        edge.last_interaction = Some(self.now);
        edge
    }

    /// A present entity, by name or alias.
    fn present_one(&self, name: &str) -> Result<EntityId, String> {
        let id = self.named(name)?;
        if !self.present.contains(id) {
            return Err(format!("{name} is not present"));
        }
        Ok(id)
    }

    /// Any entity but `who`'s own (by name), by name or alias.
    fn other(&self, name: &str, who: EntityId) -> Result<EntityId, String> {
        let id = self.named(name)?;
        if id == who {
            return Err("a report about oneself: use a state report".into());
        }
        Ok(id)
    }

    /// The entity named `name` (its name or an alias, any case).
    fn named(&self, name: &str) -> Result<EntityId, String> {
        let name = name.trim();
        let mut found = self.world.entities().filter(|e| {
            e.name.eq_ignore_ascii_case(name)
                || e.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        });
        match (found.next(), found.next()) {
            (Some(e), None) => Ok(e.id),
            (Some(_), Some(_)) => Err(format!("\"{name}\" names more than one entity")),
            (None, _) => Err(format!("there is no \"{name}\"")),
        }
    }

    /// The place named `name`.
    fn place(&self, name: &str) -> Result<ContainerId, String> {
        let name = name.trim();
        self.world
            .containers()
            .find(|c| c.name.eq_ignore_ascii_case(name))
            .map(|c| c.id)
            .ok_or_else(|| format!("there is no place \"{name}\""))
    }
}

/// The highest confidence a reported belief may have, by its source (docs/beliefs.md): what
/// the person said or showed of themselves 0.9, what someone else told 0.7, what was inferred
/// 0.5.
pub fn source_ceiling(source: BeliefSource) -> f64 {
    match source {
        BeliefSource::Observed | BeliefSource::Host => 0.9,
        BeliefSource::ToldBy(_) => 0.7,
        BeliefSource::Inferred => 0.5,
    }
}

/// Refuses a text that imitates the engine's own system lines (`[SYSTEM: …]`): only the
/// engine and the host write those.
fn not_system(what: &str, s: &str) -> Result<(), String> {
    if s.to_ascii_lowercase().contains("[system") {
        return Err(format!("the {what} imitates a system line"));
    }
    Ok(())
}

/// A text of a report: trimmed, non-empty, at most [`MAX_REPORT_TEXT`] characters, not a
/// system line.
fn text(what: &str, s: &str) -> Result<String, String> {
    let s = s.trim();
    not_system(what, s)?;
    if s.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if s.chars().count() > MAX_REPORT_TEXT {
        return Err(format!(
            "the {what} is longer than {MAX_REPORT_TEXT} characters"
        ));
    }
    Ok(s.to_owned())
}

/// A short text (mood, status, posture): empty clears it; at most 100 characters.
fn short(what: &str, s: &str) -> Result<Option<String>, String> {
    let s = s.trim();
    not_system(what, s)?;
    if s.chars().count() > 100 {
        return Err(format!("the {what} is longer than 100 characters"));
    }
    Ok((!s.is_empty()).then(|| s.to_owned()))
}
