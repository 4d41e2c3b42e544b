//! World files: a world written by hand in TOML, loaded as ordinary events, exported back, and
//! re-applied as a patch to an existing save.
//!
//! ```toml
//! [world]
//! name = "The Crooked Lantern"
//!
//! [drives]                            # the world's drive settings (optional)
//! night_start = 2.0                   # the regulars keep late hours
//! night_end = 7.0
//!
//! [[containers]]
//! id = "tavern"                       # a stable key; patches match on it
//! name = "The Crooked Lantern"
//! audible_range = 1
//! slots = [{ name = "floor" }]
//!
//! [[containers]]
//! id = "booth"
//! name = "the corner booth"
//! parent = "tavern"
//! slots = [{ name = "bench", capacity = 4 }]
//!
//! [[entities]]
//! id = "wren"
//! name = "Wren"
//! player = true                       # host-controlled
//! container = "booth"
//! slot = "bench"
//! facts = """
//! A traveller with ink-stained fingers.
//! """
//!
//! [[entities]]
//! id = "tobias"
//! name = "Tobias Reed"
//! container = "booth"
//! slot = "bench"
//! personality = { shyness = 0.7, patience = 0.3 }
//! drives = { social_debt_per_hour = 3.0 }
//!
//! [[entities]]
//! id = "letter"
//! name = "the sealed letter"
//! drives = { enabled = false }        # an item: no drives
//!
//! [[edges]]
//! from = "wren"
//! to = "tavern-keeper"
//! affinity = 0.2
//!
//! [[cards]]                           # a character from a card file (docs/cards.md)
//! file = "cards/aria.png"             # relative to this file's directory
//! id = "aria"
//! container = "booth"
//! slot = "bench"
//! ```
//!
//! Cards (docs/cards.md, "In a world file"): each `[[cards]]` entry imports a card file (JSON,
//! PNG or CHARX) as a character keyed `id`, placed like a new `[[entities]]` entry. Its `file` is
//! read relative to the directory of the name the world file goes by (its path when loaded from
//! one; for text, the name given with it, a bare name meaning the current directory). A patch
//! leaves an entry's character alone unless its `file` changed (then the new card replaces the
//! old); export writes the entries back. A bad path or card is an error at the entry's `file`.
//!
//! Drives (docs/drives.md): the top-level `[drives]` table holds the world's drive settings
//! (any field of [`DriveConfig`](crate::model::DriveConfig): `threshold`,
//! `social_debt_per_hour`, `night_start`, `weights = { social_debt = 0.8 }`, …), laid over the
//! built-in defaults. An entity's `drives = { … }` (the same fields) is laid over the world's;
//! `drives = { enabled = false }` is for items and anything else that never starts a
//! conversation. An entity's `personality = { … }` gives its traits (`humor`, `formality`,
//! `curiosity`, `patience`, `empathy`, `shyness`, `independence`), each in [0, 1], 0.5 when not
//! given. A player (`player = true`) has neither. Values are checked like everything else: a
//! rate below zero or a trait above 1 is an error at its key, and nothing applies. Loading
//! records `DrivesConfigured` and `PersonalitySet` events where the values differ from the
//! world's; export writes them back when they are not the defaults.
//!
//! People only talked about (docs/beliefs.md): an entity with `mentioned = true` (a name,
//! aliases, facts, a mood, goals, a status) is a lightweight person with no place, no mind and
//! no lines; a `container`, `player`, `drives` or `personality` on it is an error at its key.
//! Export writes `mentioned = true` back; a patch cannot change it.
//!
//! Patching: when a newer version of a file is applied to a save that loaded an older one, each
//! field the new version changed (compared with the version last applied) is set; fields the
//! file did not change keep whatever play made of them. Starting placement (`container`,
//! `slot`, `posture`, `action`, `inventory`, `holding`) applies to new entities only, so a
//! patch never teleports a character mid-story. Things removed from the file are removed from
//! the world (an entity's items are dropped first, entities in a removed container move to
//! its parent).

mod cards;
mod doc;
mod export;
mod plan;
mod requirements;

pub use doc::{CardDoc, ContainerDoc, EdgeDoc, EntityDoc, SlotDoc, WorldDoc, WorldSection};
pub use export::export;
pub use plan::plan;

use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, Result};
use crate::log::{Event, World, WorldSettings};
use std::path::Path;

/// Parses a world file. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<WorldDoc> {
    doc::parse(file, text)
}

/// Reads a world file from disk.
pub fn read(path: impl AsRef<Path>) -> Result<(String, String)> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::WorldFile {
        file: name.clone(),
        line: 0,
        column: 0,
        field: String::new(),
        message: format!("cannot read the file: {e}"),
    })?;
    Ok((name, text))
}

/// The events that create a new world from a world file (`WorldCreated` first).
pub fn creation_events(
    file: &str,
    text: &str,
    now: i64,
    settings: WorldSettings,
) -> Result<Vec<Event>> {
    let doc = parse(file, text)?;
    let mut world = World::new();
    let created = Event::WorldCreated {
        name: doc.world.name.get_ref().clone(),
        now: doc.world.now.unwrap_or(now),
        settings,
    };
    world
        .apply(&created)
        .map_err(|e| doc::at(file, text, doc.world.name.span(), "world.name", e))?;
    let mut events = vec![created];
    events.extend(plan(&world, file, text, &doc)?);
    Ok(events)
}

impl Engine {
    /// Creates a save file at `save` holding the world described by the world file at
    /// `world_file`. Nothing is written if the world file has an error.
    pub fn create_from_world_file(
        save: impl AsRef<Path>,
        world_file: impl AsRef<Path>,
        now: i64,
        options: EngineOptions,
    ) -> Result<Engine> {
        let (file, text) = read(world_file)?;
        let events = creation_events(&file, &text, now, options.settings.clone())?;
        let Some(Event::WorldCreated { name, now, .. }) = events.first() else {
            unreachable!("creation_events starts with WorldCreated")
        };
        let mut engine = Engine::create_with(save.as_ref(), name, *now, options)?;
        if let Err(e) = engine.append(events[1..].to_vec()) {
            drop(engine);
            let _ = std::fs::remove_file(save.as_ref());
            return Err(e);
        }
        Ok(engine)
    }

    /// Applies a world file to this world as one batch of events: a first load creates what
    /// it describes, a newer version patches (see the [module docs](crate::worldfile)).
    /// Returns the number of events appended.
    pub fn apply_world_file(&mut self, file: &str, text: &str) -> Result<usize> {
        let doc = parse(file, text)?;
        let events = plan(self.world(), file, text, &doc)?;
        let n = events.len();
        self.append(events)?;
        Ok(n)
    }

    /// Reads a world file from disk and applies it ([`Engine::apply_world_file`]).
    pub fn load_world_file(&mut self, path: impl AsRef<Path>) -> Result<usize> {
        let (file, text) = read(path)?;
        self.apply_world_file(&file, &text)
    }

    /// The current world in world-file form.
    pub fn export_world_file(&self) -> String {
        export(self.world())
    }
}
