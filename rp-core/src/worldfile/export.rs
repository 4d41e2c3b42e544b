//! Writing a world back out as a world file.

use crate::log::World;
use crate::model::*;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A TOML basic string, escaped.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// A fact block: a multi-line literal string when the text allows it, else a basic string.
fn block(facts: &FactSheet) -> String {
    let text = facts.to_text();
    let literal_ok = !text.contains("'''")
        && !text.ends_with('\'')
        && text
            .chars()
            .all(|c| c == '\n' || c == '\t' || !c.is_control());
    if literal_ok && !facts.is_empty() {
        format!("'''\n{text}\n'''")
    } else {
        quote(&text)
    }
}

/// The world's drive settings as a `[drives]` table (`[drives.weights]` after it).
fn drives_table(config: &DriveConfig) -> String {
    #[derive(serde::Serialize)]
    struct File<'a> {
        drives: &'a DriveConfig,
    }
    toml::to_string(&File { drives: config }).unwrap_or_default()
}

/// An entity's drive settings as an inline table.
fn drives_inline(config: &DriveConfig) -> String {
    let mut out = String::new();
    match serde::Serialize::serialize(config, toml::ser::ValueSerializer::new(&mut out)) {
        Ok(_) => out,
        Err(_) => "{}".to_owned(),
    }
}

/// A personality as an inline table of the traits that are not 0.5.
fn personality_inline(p: &Personality) -> String {
    let traits: Vec<String> = p
        .traits()
        .into_iter()
        .filter(|(_, v)| *v != 0.5)
        .map(|(name, v)| format!("{name} = {}", toml::Value::Float(v)))
        .collect();
    format!("{{ {} }}", traits.join(", "))
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("[{}]", items.join(", "))
}

/// Stable keys for everything: the world-file key where there is one, else a fresh one.
struct Keys {
    entities: BTreeMap<EntityId, String>,
    containers: BTreeMap<ContainerId, String>,
}

impl Keys {
    fn new(world: &World) -> Keys {
        let mut taken: std::collections::BTreeSet<String> = world
            .entities()
            .filter_map(|e| e.key.clone())
            .chain(world.containers().filter_map(|c| c.key.clone()))
            .collect();
        let mut fresh = |prefix: &str, n: u64| {
            let mut k = format!("{prefix}-{n}");
            while taken.contains(&k) {
                k.push('_');
            }
            taken.insert(k.clone());
            k
        };
        let containers = world
            .containers()
            .map(|c| {
                (
                    c.id,
                    c.key.clone().unwrap_or_else(|| fresh("container", c.id.0)),
                )
            })
            .collect();
        let entities = world
            .entities()
            .map(|e| {
                (
                    e.id,
                    e.key.clone().unwrap_or_else(|| fresh("entity", e.id.0)),
                )
            })
            .collect();
        Keys {
            entities,
            containers,
        }
    }

    fn entity(&self, id: EntityId) -> String {
        quote(&self.entities[&id])
    }

    fn container(&self, id: ContainerId) -> String {
        quote(&self.containers[&id])
    }
}

/// The world as a world file. Loading the result into an empty world gives back the same
/// entities, containers, placements and edges (under the same keys), and the same drive
/// settings and personalities (written when they are not the defaults).
pub fn export(world: &World) -> String {
    let keys = Keys::new(world);
    let mut out = String::new();
    let name = world.meta().map_or("", |m| m.name.as_str());
    let _ = writeln!(
        out,
        "[world]\nname = {}\nnow = {}",
        quote(name),
        world.now()
    );
    if *world.drive_config() != DriveConfig::default() {
        let _ = write!(out, "\n{}", drives_table(world.drive_config()));
    }
    for c in world.containers() {
        let _ = writeln!(
            out,
            "\n[[containers]]\nid = {}\nname = {}",
            keys.container(c.id),
            quote(&c.name)
        );
        if let Some(p) = c.parent {
            let _ = writeln!(out, "parent = {}", keys.container(p));
        }
        let props = &c.properties;
        if props.moving {
            let _ = writeln!(out, "moving = true");
        }
        if props.public {
            let _ = writeln!(out, "public = true");
        }
        if props.audible_range != 0 {
            let _ = writeln!(out, "audible_range = {}", props.audible_range);
        }
        if !c.slots.is_empty() {
            let slots = c.slots.iter().map(|s| match s.capacity {
                Some(cap) => format!("{{ name = {}, capacity = {cap} }}", quote(&s.name)),
                None => format!("{{ name = {} }}", quote(&s.name)),
            });
            let _ = writeln!(out, "slots = {}", list(slots));
        }
        if !c.facts.is_empty() {
            let _ = writeln!(out, "facts = {}", block(&c.facts));
        }
    }
    // The characters of the last file's `[[cards]]` go back as `[[cards]]` entries.
    let cards = super::cards::card_entries(world);
    for e in world.entities() {
        if e.key.as_ref().is_some_and(|k| cards.contains_key(k)) {
            continue;
        }
        let _ = writeln!(
            out,
            "\n[[entities]]\nid = {}\nname = {}",
            keys.entity(e.id),
            quote(&e.name)
        );
        if !e.aliases.is_empty() {
            let _ = writeln!(
                out,
                "aliases = {}",
                list(e.aliases.iter().map(|a| quote(a)))
            );
        }
        if e.host_controlled {
            let _ = writeln!(out, "player = true");
        }
        if e.mentioned {
            let _ = writeln!(out, "mentioned = true");
        }
        let a = &e.activity;
        if let Some(p) = &a.position {
            let _ = writeln!(out, "container = {}", keys.container(p.container));
            if let Some(s) = &p.slot {
                let _ = writeln!(out, "slot = {}", quote(s));
            }
        }
        if let Some(p) = &a.posture {
            let _ = writeln!(out, "posture = {}", quote(p));
        }
        if let Some(action) = &a.action {
            let _ = writeln!(out, "action = {}", quote(&action.verb));
        }
        if let Some(m) = &e.state.mood {
            let _ = writeln!(out, "mood = {}", quote(m));
        }
        if !e.state.goals.is_empty() {
            let _ = writeln!(
                out,
                "goals = {}",
                list(e.state.goals.iter().map(|g| quote(g)))
            );
        }
        if let Some(s) = &e.state.status {
            let _ = writeln!(out, "status = {}", quote(s));
        }
        if !e.inventory.is_empty() {
            let _ = writeln!(
                out,
                "inventory = {}",
                list(e.inventory.iter().map(|i| keys.entity(*i)))
            );
        }
        if !a.holding.is_empty() {
            let _ = writeln!(
                out,
                "holding = {}",
                list(a.holding.iter().map(|i| keys.entity(*i)))
            );
        }
        if let Some(mind) = world.mind(e.id).filter(|_| !e.host_controlled) {
            if mind.config != DriveConfig::default() {
                let _ = writeln!(out, "drives = {}", drives_inline(&mind.config));
            }
            if mind.personality != Personality::default() {
                let _ = writeln!(
                    out,
                    "personality = {}",
                    personality_inline(&mind.personality)
                );
            }
        }
        if !e.facts.is_empty() {
            let _ = writeln!(out, "facts = {}", block(&e.facts));
        }
    }
    for e in world.entities() {
        let Some(file) = e.key.as_ref().and_then(|k| cards.get(k)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "\n[[cards]]\nfile = {}\nid = {}",
            quote(file),
            keys.entity(e.id)
        );
        if let Some(p) = &e.activity.position {
            let _ = writeln!(out, "container = {}", keys.container(p.container));
            if let Some(s) = &p.slot {
                let _ = writeln!(out, "slot = {}", quote(s));
            }
        }
    }
    for x in world.edges() {
        let _ = writeln!(
            out,
            "\n[[edges]]\nfrom = {}\nto = {}\naffinity = {:?}\ntrust = {:?}",
            keys.entity(x.from),
            keys.entity(x.to),
            x.affinity,
            x.trust
        );
        if !x.summary.is_empty() {
            let _ = writeln!(out, "summary = {}", quote(&x.summary));
        }
        if !x.knowledge.is_empty() {
            let _ = writeln!(
                out,
                "knowledge = {}",
                list(x.knowledge.iter().map(|k| quote(k)))
            );
        }
    }
    let (entity, container) = (|id| keys.entity(id), |id| keys.container(id));
    super::requirements::export(world, &mut out, entity, container);
    out
}
