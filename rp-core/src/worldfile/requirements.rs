//! `[[requirements]]` of a world file (docs/requirements.md): each table in a requirement's
//! JSON form, read and checked as the host's are; planned three-way, and written back.
//!
//! ```toml
//! [[requirements]]
//! id = "fare"
//! name = "The fare"
//! subject = "wren"
//! condition = "self.fare_paid"
//! guards = [{ leave = "jetty" }, { time_skip = true }]
//! text = "Wren must pay the ferryman before leaving the jetty."
//! ```

use super::doc::{self, WorldDoc};
use super::plan::Planner;
use crate::error::Result;
use crate::log::{Event, World};
use crate::model::*;
use std::fmt::Write;
use toml::Spanned;

/// The requirements, three-way: when the file changed its `[[requirements]]` since `base`
/// (or there is no base), the requirements the last version of the file gave (by id) become
/// the new file's: one it still gives the same is kept, the rest are removed and the new ones
/// added. Requirements the host added (ids the base did not give) are left alone; a file that
/// gives the id of one is an error at that table.
pub(super) fn plan_requirements(
    p: &mut Planner<'_>,
    doc: &WorldDoc,
    base: Option<&WorldDoc>,
) -> Result<()> {
    let values = |rs: &[Spanned<toml::Value>]| -> Vec<toml::Value> {
        rs.iter().map(|r| r.get_ref().clone()).collect()
    };
    if base.is_some_and(|b| values(&b.requirements) == values(&doc.requirements)) {
        return Ok(());
    }
    let id_of = |v: &toml::Value| v.get("id").and_then(|x| x.as_str()).map(str::to_owned);
    let base_ids: Vec<String> = base
        .map(|b| {
            b.requirements
                .iter()
                .filter_map(|r| id_of(r.get_ref()))
                .collect()
        })
        .unwrap_or_default();
    // The file's requirements, read on the world without the ones the base gave (so an id
    // the file keeps is not taken by itself).
    let mut scratch = p.world.clone();
    for id in &base_ids {
        if scratch.requirement(id).is_some() {
            scratch.apply(&Event::RequirementRemoved { id: id.clone() })?;
        }
    }
    let mut wanted: Vec<(Requirement, std::ops::Range<usize>)> = Vec::new();
    for r in &doc.requirements {
        let value = serde_json::to_value(r.get_ref())
            .map_err(|err| p.err(r.span(), "requirements", err.to_string()))?;
        let made = scratch
            .requirement_from_value(value)
            .map_err(|err| doc::at(p.file, p.text, r.span(), "requirements", err))?;
        if wanted.iter().any(|(w, _)| w.id == made.id) {
            return Err(p.err(
                r.span(),
                "requirements",
                format!("the id {:?} is given twice", made.id),
            ));
        }
        wanted.push((made, r.span()));
    }
    let held: Vec<Requirement> = base_ids
        .iter()
        .filter_map(|id| p.world.requirement(id).cloned())
        .collect();
    for h in &held {
        if !wanted.iter().any(|(w, _)| w == h) {
            let event = Event::RequirementRemoved { id: h.id.clone() };
            p.push(event, 0..0, "requirements")?;
        }
    }
    for (r, span) in wanted {
        if held.contains(&r) {
            continue;
        }
        p.push(
            Event::RequirementAdded { requirement: r },
            span,
            "requirements",
        )?;
    }
    Ok(())
}

/// Writes `[[requirements]]` tables for every requirement of `world`.
pub(super) fn export(
    world: &World,
    out: &mut String,
    entity: impl Fn(EntityId) -> String,
    container: impl Fn(ContainerId) -> String,
) {
    let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let event = |e: &Option<ScopedEventId>| match e {
        None => "true".to_owned(),
        Some(id) => world
            .scoped_event(*id)
            .map_or_else(|| id.0.to_string(), |e| quote(&e.name)),
    };
    for h in world.requirements() {
        let r = &h.requirement;
        let _ = writeln!(
            out,
            "\n[[requirements]]\nid = {}\nname = {}",
            quote(&r.id),
            quote(&r.name)
        );
        if let Some(s) = r.subject.filter(|s| world.entity(*s).is_some()) {
            let _ = writeln!(out, "subject = {}", entity(s));
        }
        let guards: Vec<String> = r
            .guards
            .iter()
            .map(|g| match g {
                Guard::Leave { container: c } if world.container(*c).is_some() => {
                    format!("{{ leave = {} }}", container(*c))
                }
                Guard::Leave { container: c } => format!("{{ leave = {} }}", c.0),
                Guard::StartEvent { event: e } => format!("{{ start_event = {} }}", event(e)),
                Guard::CompleteEvent { event: e } => {
                    format!("{{ complete_event = {} }}", event(e))
                }
                Guard::TimeSkip => "{ time_skip = true }".to_owned(),
                Guard::SceneClose => "{ scene_close = true }".to_owned(),
                Guard::Action { name } => format!("{{ action = {} }}", quote(name)),
            })
            .collect();
        let _ = writeln!(
            out,
            "condition = {}\nguards = [{}]\ntext = {}",
            quote(&r.condition),
            guards.join(", "),
            quote(&r.text)
        );
    }
}
