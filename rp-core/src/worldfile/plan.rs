//! Turning a world file into events: creation for what is new, three-way patches for what
//! exists, removals for what the file dropped.

use super::doc::{self, ContainerDoc, EdgeDoc, EntityDoc, WorldDoc};
use crate::error::{Error, Result};
use crate::log::{Event, World};
use crate::model::*;
use std::collections::BTreeSet;
use std::ops::Range;
use toml::Spanned;

/// The value a patch leaves: the file's new value if the file changed it since `base` (or
/// there is no base), else what play made of it.
fn pick<T: PartialEq>(base: Option<T>, new: T, current: T) -> T {
    match base {
        Some(b) if b == new => current,
        _ => new,
    }
}

pub(super) struct Planner<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) world: World,
    pub(super) events: Vec<Event>,
}

impl Planner<'_> {
    pub(super) fn err(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> Error {
        doc::error(self.file, self.text, span, field, message)
    }

    /// Applies `event` to the scratch world, blaming `span` if it does not apply.
    pub(super) fn push(&mut self, event: Event, span: Range<usize>, field: &str) -> Result<()> {
        self.push_with_facts(event, span, field, None, "")
    }

    /// Like [`Planner::push`], but a fact-sheet error points at its line inside `facts`.
    fn push_with_facts(
        &mut self,
        event: Event,
        span: Range<usize>,
        field: &str,
        facts: Option<&Spanned<String>>,
        facts_field: &str,
    ) -> Result<()> {
        match (self.world.apply(&event), facts) {
            (Ok(()), _) => {
                self.events.push(event);
                Ok(())
            }
            (
                Err(Error::FactSyntax {
                    line,
                    column,
                    message,
                    ..
                }),
                Some(f),
            ) => {
                let (file_line, col_offset) = doc::facts_line(self.text, f, line);
                Err(Error::WorldFile {
                    file: self.file.to_owned(),
                    line: file_line,
                    column: column + col_offset,
                    field: facts_field.to_owned(),
                    message: format!("line {line} of the fact sheet: {message}"),
                })
            }
            (Err(e), _) => Err(doc::at(self.file, self.text, span, field, e)),
        }
    }

    fn entity_id(&self, key: &Spanned<String>, field: &str) -> Result<EntityId> {
        self.world
            .entity_by_key(key.get_ref())
            .map(|e| e.id)
            .ok_or_else(|| {
                self.err(
                    key.span(),
                    field,
                    format!("no entity has the id {:?}", key.get_ref()),
                )
            })
    }

    pub(super) fn container_id(&self, key: &Spanned<String>, field: &str) -> Result<ContainerId> {
        self.world
            .container_by_key(key.get_ref())
            .map(|c| c.id)
            .ok_or_else(|| {
                self.err(
                    key.span(),
                    field,
                    format!("no container has the id {:?}", key.get_ref()),
                )
            })
    }
}

fn slots(doc: &ContainerDoc) -> Vec<Slot> {
    doc.slots
        .iter()
        .map(|s| Slot {
            name: s.name.clone(),
            capacity: s.capacity,
        })
        .collect()
}

fn properties(doc: &ContainerDoc) -> ContainerProperties {
    ContainerProperties {
        moving: doc.moving,
        public: doc.public,
        audible_range: doc.audible_range,
    }
}

fn state(doc: &EntityDoc) -> EntityState {
    EntityState {
        mood: doc.mood.clone(),
        goals: doc.goals.clone(),
        status: doc.status.clone(),
    }
}

/// Checks keys are unique and every reference names something in the file.
fn check_references(p: &Planner<'_>, doc: &WorldDoc) -> Result<()> {
    let mut containers = BTreeSet::new();
    for c in &doc.containers {
        if !containers.insert(c.id.get_ref().as_str()) {
            return Err(p.err(
                c.id.span(),
                "containers.id",
                format!("the id {:?} is used twice", c.id.get_ref()),
            ));
        }
    }
    let mut entities = BTreeSet::new();
    for e in &doc.entities {
        if !entities.insert(e.id.get_ref().as_str()) {
            return Err(p.err(
                e.id.span(),
                "entities.id",
                format!("the id {:?} is used twice", e.id.get_ref()),
            ));
        }
    }
    for c in &doc.cards {
        if !entities.insert(c.id.get_ref().as_str()) {
            return Err(p.err(
                c.id.span(),
                "cards.id",
                format!("the id {:?} is used twice", c.id.get_ref()),
            ));
        }
    }
    let check = |key: &Spanned<String>, set: &BTreeSet<&str>, field: &str, what: &str| {
        if set.contains(key.get_ref().as_str()) {
            Ok(())
        } else {
            Err(p.err(
                key.span(),
                field,
                format!("no {what} has the id {:?}", key.get_ref()),
            ))
        }
    };
    for c in &doc.containers {
        if let Some(parent) = &c.parent {
            check(parent, &containers, "containers.parent", "container")?;
        }
    }
    for e in &doc.entities {
        if let Some(c) = &e.container {
            check(c, &containers, "entities.container", "container")?;
        } else if e.slot.is_some() {
            return Err(p.err(e.id.span(), "entities.slot", "a slot needs a container"));
        }
        for i in &e.inventory {
            check(i, &entities, "entities.inventory", "entity")?;
        }
        for h in &e.holding {
            check(h, &entities, "entities.holding", "entity")?;
            if !e.inventory.iter().any(|i| i.get_ref() == h.get_ref()) {
                return Err(p.err(
                    h.span(),
                    "entities.holding",
                    format!("{:?} is held but not in the inventory", h.get_ref()),
                ));
            }
        }
    }
    for c in &doc.cards {
        if let Some(k) = &c.container {
            check(k, &containers, "cards.container", "container")?;
        } else if c.slot.is_some() {
            return Err(p.err(c.id.span(), "cards.slot", "a slot needs a container"));
        }
    }
    let mut edges = BTreeSet::new();
    for x in &doc.edges {
        check(&x.from, &entities, "edges.from", "entity")?;
        check(&x.to, &entities, "edges.to", "entity")?;
        if !edges.insert((x.from.get_ref().as_str(), x.to.get_ref().as_str())) {
            return Err(p.err(x.from.span(), "edges", "this edge is defined twice"));
        }
    }
    Ok(())
}

/// Checks drive settings and personalities before anything is planned: a value out of range is
/// an error at its key (nothing applies), and a player has neither.
fn check_drives(p: &Planner<'_>, doc: &WorldDoc) -> Result<()> {
    if let Some(d) = &doc.drives {
        d.get_ref()
            .check()
            .map_err(|m| value_error(p, d.span(), "", m))?;
    }
    for e in &doc.entities {
        if e.player {
            let given = [
                e.drives.as_ref().map(|d| (d.span(), "entities.drives")),
                e.personality
                    .as_ref()
                    .map(|x| (x.span(), "entities.personality")),
            ];
            if let Some((span, field)) = given.into_iter().flatten().next() {
                return Err(p.err(
                    span,
                    field,
                    format!(
                        "{} is a player (player = true): players have no drives or personality; \
                         the host decides what they say",
                        e.name
                    ),
                ));
            }
        }
        if let Some(d) = &e.drives {
            d.get_ref()
                .check()
                .map_err(|m| value_error(p, d.span(), "entities.", m))?;
        }
        if let Some(x) = &e.personality {
            x.get_ref()
                .check()
                .map_err(|m| value_error(p, x.span(), "entities.", m))?;
        }
    }
    Ok(())
}

/// A `DriveConfig::check` or `Personality::check` message ("drives.weights.task is 11; …",
/// "personality.shyness is 1.5; …") as an error at the key it names inside the table at `span`
/// (the table itself when the key is not found), its field prefixed with `prefix`.
fn value_error(p: &Planner<'_>, span: Range<usize>, prefix: &str, message: String) -> Error {
    let (path, key) = match message.split_once(' ') {
        Some((path, _)) if path.contains('.') => {
            (path.to_owned(), path.rsplit('.').next().unwrap_or(path))
        }
        // "stimulus kind \"…\" is not a name …"
        _ => ("drives.stimulus_kinds".to_owned(), "stimulus_kinds"),
    };
    // A `[table]`'s span may be its header alone: its keys follow, up to the next header.
    let body_end = p.text[span.end.min(p.text.len())..]
        .match_indices('\n')
        .map(|(i, _)| span.end + i + 1)
        .find(|&at| p.text[at..].trim_start().starts_with('['))
        .unwrap_or(p.text.len());
    let span = key_in(p.text, span.clone(), key)
        .or_else(|| key_in(p.text, span.start..body_end, key))
        .unwrap_or(span);
    p.err(span, &format!("{prefix}{path}"), message)
}

/// Where `key = …` is assigned inside `span` of `text`.
fn key_in(text: &str, span: Range<usize>, key: &str) -> Option<Range<usize>> {
    let inside = text.get(span.clone())?;
    let mut from = 0;
    while let Some(i) = inside[from..].find(key) {
        let at = from + i;
        let before = inside[..at].chars().next_back();
        let after = inside[at + key.len()..].trim_start_matches([' ', '\t']);
        let word_start = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if word_start && after.starts_with('=') {
            return Some(span.start + at..span.start + at + key.len());
        }
        from = at + key.len();
    }
    None
}

/// Containers ordered so every parent comes before its children.
fn parents_first<'d>(p: &Planner<'_>, doc: &'d WorldDoc) -> Result<Vec<&'d ContainerDoc>> {
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    let mut order = Vec::new();
    let mut left: Vec<&ContainerDoc> = doc.containers.iter().collect();
    while !left.is_empty() {
        let before = left.len();
        left.retain(|c| {
            let ready = c
                .parent
                .as_ref()
                .is_none_or(|x| placed.contains(x.get_ref().as_str()));
            if ready {
                placed.insert(c.id.get_ref());
                order.push(*c);
            }
            !ready
        });
        if left.len() == before {
            let c = left[0];
            let span = c.parent.as_ref().map_or(c.id.span(), |x| x.span());
            return Err(p.err(
                span,
                "containers.parent",
                "containers may not contain each other in a loop",
            ));
        }
    }
    Ok(order)
}

/// The events that make `world` match `doc` (see the [module docs](super)).
pub fn plan(world: &World, file: &str, text: &str, doc: &WorldDoc) -> Result<Vec<Event>> {
    if world.world_file().is_some_and(|b| b.text == text) {
        return Ok(Vec::new());
    }
    let base = world
        .world_file()
        .and_then(|b| doc::parse(&b.file, &b.text).ok());
    let mut p = Planner {
        file,
        text,
        world: world.clone(),
        events: Vec::new(),
    };
    check_references(&p, doc)?;
    check_drives(&p, doc)?;
    if let Some(base) = &base {
        remove_dropped(&mut p, base, doc)?;
    }
    plan_containers(&mut p, doc, base.as_ref())?;
    // The world's drive settings before the characters', which are laid over them.
    plan_world_drives(&mut p, doc, base.as_ref())?;
    let created = plan_entities(&mut p, doc, base.as_ref())?;
    let new_cards = super::cards::plan_cards(&mut p, doc, base.as_ref())?;
    place_new_entities(&mut p, doc, &created)?;
    super::cards::place_new_cards(&mut p, doc, &new_cards)?;
    plan_minds(&mut p, doc, base.as_ref())?;
    plan_edges(&mut p, doc, base.as_ref())?;
    super::requirements::plan_requirements(&mut p, doc, base.as_ref())?;
    p.push(
        Event::WorldFileApplied {
            file: file.to_owned(),
            text: text.to_owned(),
        },
        0..0,
        "",
    )?;
    Ok(p.events)
}

fn plan_containers(p: &mut Planner<'_>, doc: &WorldDoc, base: Option<&WorldDoc>) -> Result<()> {
    for c in parents_first(p, doc)? {
        let parent = match &c.parent {
            Some(k) => Some(p.container_id(k, "containers.parent")?),
            None => None,
        };
        let facts = FactSheet::from_text(doc::facts_text(&c.facts));
        let span = c.id.span();
        let Some(current) = p.world.container_by_key(c.id.get_ref()).cloned() else {
            let id = ContainerId(p.world.next_id());
            p.push_with_facts(
                Event::ContainerCreated {
                    id,
                    key: Some(c.id.get_ref().clone()),
                    name: c.name.clone(),
                    facts,
                    parent,
                    slots: slots(c),
                    properties: properties(c),
                },
                span,
                "containers",
                c.facts.as_ref(),
                "containers.facts",
            )?;
            continue;
        };
        let b = base.and_then(|b| {
            b.containers
                .iter()
                .find(|x| x.id.get_ref() == c.id.get_ref())
        });
        let b_parent = match b.map(|b| &b.parent) {
            Some(Some(k)) => p.world.container_by_key(k.get_ref()).map(|x| Some(x.id)),
            Some(None) => Some(None),
            None => None,
        };
        let name = pick(b.map(|b| &b.name), &c.name, &current.name).clone();
        let facts = pick(
            b.map(|b| FactSheet::from_text(doc::facts_text(&b.facts))),
            facts,
            current.facts.clone(),
        );
        let parent = pick(b_parent, parent, current.parent);
        let slots = pick(b.map(slots), slots(c), current.slots.clone());
        let properties = pick(b.map(properties), properties(c), current.properties.clone());
        if (&name, &facts, parent, &slots, &properties)
            != (
                &current.name,
                &current.facts,
                current.parent,
                &current.slots,
                &current.properties,
            )
        {
            p.push_with_facts(
                Event::ContainerEdited {
                    id: current.id,
                    name,
                    facts,
                    parent,
                    slots,
                    properties,
                },
                span,
                "containers",
                c.facts.as_ref(),
                "containers.facts",
            )?;
        }
    }
    Ok(())
}

/// Creates new entities and patches existing ones; returns the keys created.
fn plan_entities(
    p: &mut Planner<'_>,
    doc: &WorldDoc,
    base: Option<&WorldDoc>,
) -> Result<BTreeSet<String>> {
    let mut created = BTreeSet::new();
    for e in &doc.entities {
        let span = e.id.span();
        let facts = FactSheet::from_text(doc::facts_text(&e.facts));
        let Some(current) = p.world.entity_by_key(e.id.get_ref()).cloned() else {
            let id = EntityId(p.world.next_id());
            if e.mentioned {
                plan_mentioned(p, e, id, facts)?;
                created.insert(e.id.get_ref().clone());
                continue;
            }
            p.push_with_facts(
                Event::EntityCreated {
                    id,
                    key: Some(e.id.get_ref().clone()),
                    name: e.name.clone(),
                    aliases: e.aliases.clone(),
                    facts,
                    host_controlled: e.player,
                    state: state(e),
                },
                span,
                "entities",
                e.facts.as_ref(),
                "entities.facts",
            )?;
            created.insert(e.id.get_ref().clone());
            continue;
        };
        if e.mentioned != current.mentioned {
            let is = if current.mentioned { "is" } else { "is not" };
            return Err(p.err(
                span,
                "entities.mentioned",
                format!(
                    "{} {is} only mentioned; a patch cannot change that (remove it, then add it)",
                    current.name
                ),
            ));
        }
        let b = base.and_then(|b| b.entities.iter().find(|x| x.id.get_ref() == e.id.get_ref()));
        let name = pick(b.map(|b| &b.name), &e.name, &current.name);
        let aliases = pick(b.map(|b| &b.aliases), &e.aliases, &current.aliases);
        let facts = pick(
            b.map(|b| FactSheet::from_text(doc::facts_text(&b.facts))),
            facts,
            current.facts.clone(),
        );
        let player = pick(b.map(|b| b.player), e.player, current.host_controlled);
        let changed = |new: bool| new.then_some(());
        let edit = Event::EntityEdited {
            id: current.id,
            name: changed(*name != current.name).map(|_| name.clone()),
            aliases: changed(*aliases != current.aliases).map(|_| aliases.clone()),
            facts: changed(facts != current.facts).map(|_| facts.clone()),
            host_controlled: changed(player != current.host_controlled).map(|_| player),
        };
        if edit
            != (Event::EntityEdited {
                id: current.id,
                name: None,
                aliases: None,
                facts: None,
                host_controlled: None,
            })
        {
            p.push_with_facts(
                edit,
                span.clone(),
                "entities",
                e.facts.as_ref(),
                "entities.facts",
            )?;
        }
        let cur = &current.state;
        let new_state = EntityState {
            mood: pick(b.map(|b| b.mood.clone()), e.mood.clone(), cur.mood.clone()),
            goals: pick(
                b.map(|b| b.goals.clone()),
                e.goals.clone(),
                cur.goals.clone(),
            ),
            status: pick(
                b.map(|b| b.status.clone()),
                e.status.clone(),
                cur.status.clone(),
            ),
        };
        if new_state != *cur {
            p.push(
                Event::EntityStateChanged {
                    entity: current.id,
                    state: new_state,
                },
                span,
                "entities",
            )?;
        }
    }
    Ok(created)
}

/// A new entity of the file marked `mentioned = true` (docs/beliefs.md): a person only talked
/// about, with its aliases and state; a place, inventory, drives or personality given to it
/// are refused where they are planned.
fn plan_mentioned(
    p: &mut Planner<'_>,
    e: &EntityDoc,
    id: EntityId,
    facts: FactSheet,
) -> Result<()> {
    let span = e.id.span();
    if e.player {
        return Err(p.err(
            span,
            "entities.mentioned",
            "a person only mentioned is not the player",
        ));
    }
    let at = p.world.now();
    p.push_with_facts(
        Event::PersonMentioned {
            id,
            key: Some(e.id.get_ref().clone()),
            name: e.name.clone(),
            facts,
            by: None,
            at,
        },
        span.clone(),
        "entities",
        e.facts.as_ref(),
        "entities.facts",
    )?;
    if !e.aliases.is_empty() {
        p.push(
            Event::EntityEdited {
                id,
                name: None,
                aliases: Some(e.aliases.clone()),
                facts: None,
                host_controlled: None,
            },
            span.clone(),
            "entities.aliases",
        )?;
    }
    if state(e) != EntityState::default() {
        p.push(
            Event::EntityStateChanged {
                entity: id,
                state: state(e),
            },
            span,
            "entities",
        )?;
    }
    Ok(())
}

/// The world's drive settings (`[drives]`; none given: the built-in defaults).
fn plan_world_drives(p: &mut Planner<'_>, doc: &WorldDoc, base: Option<&WorldDoc>) -> Result<()> {
    let config = pick(
        base.map(|b| drive_config(&b.drives)),
        drive_config(&doc.drives),
        p.world.drive_config().clone(),
    );
    if config != *p.world.drive_config() {
        let span = doc.drives.as_ref().map_or(0..0, |d| d.span());
        p.push(
            Event::DrivesConfigured {
                entity: None,
                config: Box::new(config),
            },
            span,
            "drives",
        )?;
    }
    Ok(())
}

fn drive_config(given: &Option<Spanned<DriveConfig>>) -> DriveConfig {
    given
        .as_ref()
        .map(|d| d.get_ref().clone())
        .unwrap_or_default()
}

fn personality(given: &Option<Spanned<Personality>>) -> Personality {
    given.as_ref().map(|x| *x.get_ref()).unwrap_or_default()
}

/// Each character's drive settings and personality (none given: the world's settings, every
/// trait 0.5), for new entities and, three-way like every field, for existing ones.
fn plan_minds(p: &mut Planner<'_>, doc: &WorldDoc, base: Option<&WorldDoc>) -> Result<()> {
    for e in &doc.entities {
        let id = p.entity_id(&e.id, "entities.id")?;
        let b = base.and_then(|b| b.entities.iter().find(|x| x.id.get_ref() == e.id.get_ref()));
        // A host-controlled entity has no drives: nothing to keep but the defaults.
        let (cur_config, cur_personality) = p
            .world
            .entity(id)
            .filter(|x| !x.host_controlled)
            .and_then(|_| p.world.mind(id))
            .map(|m| (m.config.clone(), m.personality))
            .unwrap_or_default();
        let config = pick(
            b.map(|b| drive_config(&b.drives)),
            drive_config(&e.drives),
            cur_config.clone(),
        );
        if config != cur_config {
            let span = e.drives.as_ref().map_or(e.id.span(), |d| d.span());
            p.push(
                Event::DrivesConfigured {
                    entity: Some(id),
                    config: Box::new(config),
                },
                span,
                "entities.drives",
            )?;
        }
        let traits = pick(
            b.map(|b| personality(&b.personality)),
            personality(&e.personality),
            cur_personality,
        );
        if traits != cur_personality {
            let span = e.personality.as_ref().map_or(e.id.span(), |x| x.span());
            p.push(
                Event::PersonalitySet {
                    entity: id,
                    personality: traits,
                },
                span,
                "entities.personality",
            )?;
        }
        plan_rules(p, e, b, id)?;
    }
    Ok(())
}

/// An entity's rules, three-way: when the file changed them since `base` (or there is no
/// base), the rules the world file gave it become the file's; a rule the file still gives the
/// same (description, trigger, condition and intent) is kept with its weight and uses, the
/// rest are removed and the file's new ones added. Otherwise they stay as play left them.
fn plan_rules(
    p: &mut Planner<'_>,
    e: &EntityDoc,
    base: Option<&EntityDoc>,
    id: EntityId,
) -> Result<()> {
    let values = |rules: &[Spanned<toml::Value>]| -> Vec<toml::Value> {
        rules.iter().map(|r| r.get_ref().clone()).collect()
    };
    if base.is_some_and(|b| values(&b.rules) == values(&e.rules)) {
        return Ok(());
    }
    let now = p.world.now();
    let same = |a: &Rule, b: &Rule| {
        (&a.description, &a.trigger, &a.condition, &a.intent)
            == (&b.description, &b.trigger, &b.condition, &b.intent)
    };
    // The file's rules, read and checked as the host's are (ids assigned when added).
    let mut wanted: Vec<(Rule, Range<usize>)> = Vec::new();
    for rule in &e.rules {
        let value = serde_json::to_value(rule.get_ref())
            .map_err(|err| p.err(rule.span(), "entities.rules", err.to_string()))?;
        let made = p
            .world
            .rule_from_value(id, value, RuleId(0), now, RuleSource::World)
            .map_err(|err| doc::at(p.file, p.text, rule.span(), "entities.rules", err))?;
        wanted.push((made, rule.span()));
    }
    let held: Vec<Rule> = p
        .world
        .rules_of(id)
        .filter(|r| r.source == RuleSource::World)
        .cloned()
        .collect();
    for rule in &held {
        if !wanted.iter().any(|(w, _)| same(w, rule)) {
            let event = Event::RuleRemoved {
                entity: id,
                rule: rule.id,
                at: now,
                forgotten: false,
            };
            p.push(event, e.id.span(), "entities.rules")?;
        }
    }
    for (mut rule, span) in wanted {
        if held.iter().any(|h| same(h, &rule)) {
            continue;
        }
        rule.id = RuleId(p.world.next_id());
        p.push(Event::RuleAdded { rule }, span, "entities.rules")?;
    }
    Ok(())
}

/// Inventories first (items must not stand anywhere), then positions and activities.
fn place_new_entities(
    p: &mut Planner<'_>,
    doc: &WorldDoc,
    created: &BTreeSet<String>,
) -> Result<()> {
    let new: Vec<&EntityDoc> = doc
        .entities
        .iter()
        .filter(|e| created.contains(e.id.get_ref()))
        .collect();
    for e in &new {
        if e.inventory.is_empty() {
            continue;
        }
        let entity = p.entity_id(&e.id, "entities.id")?;
        let inventory = e
            .inventory
            .iter()
            .map(|k| p.entity_id(k, "entities.inventory"))
            .collect::<Result<Vec<_>>>()?;
        let span = e.inventory[0].span();
        p.push(
            Event::InventoryChanged { entity, inventory },
            span,
            "entities.inventory",
        )?;
    }
    for e in &new {
        let entity = p.entity_id(&e.id, "entities.id")?;
        let position = match &e.container {
            Some(k) => Some(Position {
                container: p.container_id(k, "entities.container")?,
                slot: e.slot.clone(),
            }),
            None => None,
        };
        let holding = e
            .holding
            .iter()
            .map(|k| p.entity_id(k, "entities.holding"))
            .collect::<Result<Vec<_>>>()?;
        let activity = Activity {
            position,
            posture: e.posture.clone(),
            action: e.action.as_ref().map(|verb| Action {
                verb: verb.clone(),
                started: p.world.now(),
                duration_ms: None,
                interruptible: true,
                attention_required: false,
            }),
            holding,
            attention: None,
            status: None,
        };
        if activity != Activity::default() {
            let span = e.container.as_ref().map_or(e.id.span(), |c| c.span());
            p.push(
                Event::ActivityChanged { entity, activity },
                span,
                "entities.container",
            )?;
        }
    }
    Ok(())
}

fn plan_edges(p: &mut Planner<'_>, doc: &WorldDoc, base: Option<&WorldDoc>) -> Result<()> {
    for x in &doc.edges {
        let from = p.entity_id(&x.from, "edges.from")?;
        let to = p.entity_id(&x.to, "edges.to")?;
        let b = base.and_then(|b| {
            b.edges
                .iter()
                .find(|y| y.from.get_ref() == x.from.get_ref() && y.to.get_ref() == x.to.get_ref())
        });
        let edge = match p.world.edge(from, to) {
            None => Edge {
                affinity: x.affinity,
                trust: x.trust,
                summary: x.summary.clone(),
                knowledge: x.knowledge.clone(),
                ..Edge::new(from, to)
            },
            Some(cur) => Edge {
                affinity: pick(b.map(|b| b.affinity), x.affinity, cur.affinity),
                trust: pick(b.map(|b| b.trust), x.trust, cur.trust),
                summary: pick(b.map(|b| &b.summary), &x.summary, &cur.summary).clone(),
                knowledge: pick(b.map(|b| &b.knowledge), &x.knowledge, &cur.knowledge).clone(),
                ..cur.clone()
            },
        };
        if p.world.edge(from, to) != Some(&edge) {
            p.push(Event::EdgeUpdated { edge }, x.from.span(), "edges")?;
        }
    }
    Ok(())
}

fn edge_key(x: &EdgeDoc) -> (String, String) {
    (x.from.get_ref().clone(), x.to.get_ref().clone())
}

/// Removes what the base had and the new file dropped.
fn remove_dropped(p: &mut Planner<'_>, base: &WorldDoc, doc: &WorldDoc) -> Result<()> {
    let keep_edges: BTreeSet<_> = doc.edges.iter().map(edge_key).collect();
    for x in &base.edges {
        if keep_edges.contains(&edge_key(x)) {
            continue;
        }
        let ids = (
            p.world.entity_by_key(x.from.get_ref()).map(|e| e.id),
            p.world.entity_by_key(x.to.get_ref()).map(|e| e.id),
        );
        if let (Some(from), Some(to)) = ids
            && p.world.edge(from, to).is_some()
        {
            p.push(Event::EdgeRemoved { from, to }, 0..0, "edges")?;
        }
    }
    let keep: BTreeSet<&str> = doc
        .entities
        .iter()
        .map(|e| e.id.get_ref().as_str())
        .collect();
    for e in &base.entities {
        if keep.contains(e.id.get_ref().as_str()) {
            continue;
        }
        if let Some(id) = p.world.entity_by_key(e.id.get_ref()).map(|x| x.id) {
            drop_entity(p, id)?;
        }
    }
    let keep: BTreeSet<&str> = doc.cards.iter().map(|c| c.id.get_ref().as_str()).collect();
    for c in &base.cards {
        if keep.contains(c.id.get_ref().as_str()) {
            continue;
        }
        if let Some(id) = p.world.entity_by_key(c.id.get_ref()).map(|x| x.id) {
            drop_entity(p, id)?;
        }
    }
    let keep: BTreeSet<&str> = doc
        .containers
        .iter()
        .map(|c| c.id.get_ref().as_str())
        .collect();
    let mut dropped: Vec<ContainerId> = base
        .containers
        .iter()
        .filter(|c| !keep.contains(c.id.get_ref().as_str()))
        .filter_map(|c| p.world.container_by_key(c.id.get_ref()).map(|x| x.id))
        .collect();
    // Children before parents.
    let depth = |w: &World, mut c: ContainerId| {
        let mut d = 0;
        while let Some(parent) = w.container(c).and_then(|x| x.parent) {
            d += 1;
            c = parent;
        }
        d
    };
    dropped.sort_by_key(|c| std::cmp::Reverse(depth(&p.world, *c)));
    for c in dropped {
        drop_container(p, c)?;
    }
    Ok(())
}

fn drop_entity(p: &mut Planner<'_>, id: EntityId) -> Result<()> {
    let entity = p
        .world
        .entity(id)
        .cloned()
        .ok_or_else(|| Error::not_found("entity", id))?;
    if !entity.inventory.is_empty() {
        if !entity.activity.holding.is_empty() {
            let activity = Activity {
                holding: Vec::new(),
                ..entity.activity.clone()
            };
            p.push(
                Event::ActivityChanged {
                    entity: id,
                    activity,
                },
                0..0,
                "entities",
            )?;
        }
        p.push(
            Event::InventoryChanged {
                entity: id,
                inventory: Vec::new(),
            },
            0..0,
            "entities",
        )?;
    }
    if let Some(carrier) = p.world.carrier_of(id) {
        let c = p
            .world
            .entity(carrier)
            .cloned()
            .ok_or_else(|| Error::not_found("entity", carrier))?;
        if c.activity.holding.contains(&id) {
            let activity = Activity {
                holding: c
                    .activity
                    .holding
                    .iter()
                    .copied()
                    .filter(|x| *x != id)
                    .collect(),
                ..c.activity.clone()
            };
            p.push(
                Event::ActivityChanged {
                    entity: carrier,
                    activity,
                },
                0..0,
                "entities",
            )?;
        }
        let inventory = c.inventory.iter().copied().filter(|x| *x != id).collect();
        p.push(
            Event::InventoryChanged {
                entity: carrier,
                inventory,
            },
            0..0,
            "entities",
        )?;
    }
    p.push(Event::EntityRemoved { id }, 0..0, "entities")
}

fn drop_container(p: &mut Planner<'_>, id: ContainerId) -> Result<()> {
    let parent = p.world.container(id).and_then(|c| c.parent);
    let inside: Vec<Entity> = p.world.entities_in(id).cloned().collect();
    for e in inside {
        let activity = Activity {
            position: parent.map(|container| Position {
                container,
                slot: None,
            }),
            ..e.activity.clone()
        };
        p.push(
            Event::ActivityChanged {
                entity: e.id,
                activity,
            },
            0..0,
            "containers",
        )?;
    }
    p.push(Event::ContainerRemoved { id }, 0..0, "containers")
}
