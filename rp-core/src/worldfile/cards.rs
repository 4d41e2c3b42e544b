//! A world file's `[[cards]]` (docs/cards.md, "In a world file"): characters from card files,
//! each an entity keyed by its `id`, placed like a new `[[entities]]` entry.
//!
//! ```toml
//! [[cards]]
//! file = "cards/aria.png"      # JSON, PNG or CHARX; relative to the world file's directory
//! id = "aria"
//! container = "booth"
//! slot = "bench"
//! ```
//!
//! A card's path is read relative to the directory of the name the world file goes by: the
//! file's own directory when it is loaded from a path (`Engine::load_world_file`,
//! `Engine::create_from_world_file`), and, for text (`Engine::apply_world_file(name, text)`),
//! the directory of `name` — a bare name such as `"tavern.toml"` has none, so the path is read
//! from the process's current directory. An absolute path is read as it is.
//!
//! Patching: an entry the new file did not change (its `file` the same as in the file applied
//! last) leaves its entity alone, whatever play made of it, and its card file is not read
//! again. A changed `file` is read again: the entity takes the new card's name, nickname,
//! facts, card and files (and its book, when it owns no book of the same JSON). A new entry
//! imports its card; an entry dropped removes its entity. A bad path, an unreadable file or a
//! bad card is an error at the entry's `file`, and nothing applies.

use super::doc::{CardDoc, WorldDoc};
use super::plan::Planner;
use crate::cards::{Asset, attach_events, card_events, facts_of, read_card_files};
use crate::error::{Error, Result};
use crate::log::Event;
use crate::model::{Activity, Card, EntityId, Position};
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest card file read, in bytes (a CHARX of 16 MiB of card and 64 MiB of files,
/// compressed or stored, fits).
const MAX_CARD_FILE_BYTES: u64 = 96 << 20;

/// Where `card_file` is, for a world file going by the name `world_file`.
pub(crate) fn card_path(world_file: &str, card_file: &str) -> PathBuf {
    let given = Path::new(card_file);
    if given.is_absolute() {
        return given.to_owned();
    }
    match Path::new(world_file).parent() {
        Some(dir) => dir.join(given),
        None => given.to_owned(),
    }
}

/// The card of entry `c` and its files, or an error at its `file`.
fn read_entry(p: &Planner<'_>, c: &CardDoc) -> Result<(Card, Vec<Asset>)> {
    let span = c.file.span();
    let given = c.file.get_ref();
    if given.trim().is_empty() {
        return Err(p.err(span, "cards.file", "the card's file is empty"));
    }
    let path = card_path(p.file, given);
    let fail = |why: String| p.err(span.clone(), "cards.file", format!("{given}: {why}"));
    let meta = std::fs::metadata(&path).map_err(|e| fail(format!("cannot read the card: {e}")))?;
    if !meta.is_file() {
        return Err(fail("not a file".into()));
    }
    if meta.len() > MAX_CARD_FILE_BYTES {
        return Err(fail(format!(
            "the card is larger than {MAX_CARD_FILE_BYTES} bytes"
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_CARD_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(format!("cannot read the card: {e}")))?;
    if bytes.len() as u64 > MAX_CARD_FILE_BYTES {
        return Err(fail(format!(
            "the card is larger than {MAX_CARD_FILE_BYTES} bytes"
        )));
    }
    read_card_files(&bytes).map_err(|e| fail(e.to_string()))
}

/// Pushes `events`, blaming entry `c`'s `file` for any that does not apply.
fn push_all(p: &mut Planner<'_>, c: &CardDoc, events: Vec<Event>) -> Result<()> {
    for event in events {
        p.push(event, c.file.span(), "cards.file")?;
    }
    Ok(())
}

/// Imports new entries' cards and re-reads changed ones (see the [module docs](self)); returns
/// the keys of the entities created.
pub(super) fn plan_cards(
    p: &mut Planner<'_>,
    doc: &WorldDoc,
    base: Option<&WorldDoc>,
) -> Result<BTreeSet<String>> {
    let mut created = BTreeSet::new();
    for c in &doc.cards {
        let key = c.id.get_ref();
        let before = base.and_then(|b| b.cards.iter().find(|x| x.id.get_ref() == key));
        let current = p.world.entity_by_key(key).map(|e| e.id);
        if current.is_some() && before.is_some_and(|b| b.file.get_ref() == c.file.get_ref()) {
            continue;
        }
        let (card, assets) = read_entry(p, c)?;
        match current {
            None => {
                let (events, _, _) = card_events(&p.world, &card, assets, Some(key.clone()))
                    .map_err(|e| super::doc::at(p.file, p.text, c.file.span(), "cards.file", e))?;
                push_all(p, c, events)?;
                created.insert(key.clone());
            }
            Some(id) => replace_card(p, c, id, &card, assets)?,
        }
    }
    Ok(created)
}

/// Entity `id` takes `card`: its name, nickname and facts, the card and its files, and its
/// book unless it owns one of the same JSON.
fn replace_card(
    p: &mut Planner<'_>,
    c: &CardDoc,
    id: EntityId,
    card: &Card,
    assets: Vec<Asset>,
) -> Result<()> {
    let Some(current) = p.world.entity(id).cloned() else {
        return Err(Error::not_found("entity", id.0));
    };
    let name = card.name().trim().to_owned();
    let nickname = card.text("nickname").trim();
    let aliases = if nickname.is_empty() || nickname == name {
        Vec::new()
    } else {
        vec![nickname.to_owned()]
    };
    let facts = facts_of(card);
    let edit = Event::EntityEdited {
        id,
        name: (name != current.name).then(|| name.clone()),
        aliases: (aliases != current.aliases).then(|| aliases.clone()),
        facts: (facts != current.facts).then(|| facts.clone()),
        host_controlled: None,
    };
    let unchanged = Event::EntityEdited {
        id,
        name: None,
        aliases: None,
        facts: None,
        host_controlled: None,
    };
    let mut events: Vec<Event> = (edit != unchanged).then_some(edit).into_iter().collect();
    events.extend(attach_events(id, card, assets));
    if let Some(book) = card.data().get("character_book").filter(|b| b.is_object()) {
        let json = book.to_string();
        let owned = p
            .world
            .lorebooks()
            .any(|(_, owner, b)| owner == Some(id) && b.json == json);
        if !owned {
            events.push(Event::LorebookAdded {
                id: p.world.next_id(),
                owner: Some(id),
                json,
            });
        }
    }
    push_all(p, c, events)
}

/// Places the entities of new entries where their `container` and `slot` say.
pub(super) fn place_new_cards(
    p: &mut Planner<'_>,
    doc: &WorldDoc,
    created: &BTreeSet<String>,
) -> Result<()> {
    for c in doc
        .cards
        .iter()
        .filter(|c| created.contains(c.id.get_ref()))
    {
        let Some(k) = &c.container else {
            continue;
        };
        let Some(entity) = p.world.entity_by_key(c.id.get_ref()).map(|e| e.id) else {
            continue;
        };
        let position = Position {
            container: p.container_id(k, "cards.container")?,
            slot: c.slot.clone(),
        };
        let activity = Activity {
            position: Some(position),
            ..Activity::default()
        };
        p.push(
            Event::ActivityChanged { entity, activity },
            k.span(),
            "cards.container",
        )?;
    }
    Ok(())
}

/// The `[[cards]]` entries of the world file applied last, by key: their `file`.
pub(super) fn card_entries(
    world: &crate::log::World,
) -> std::collections::BTreeMap<String, String> {
    world
        .world_file()
        .and_then(|b| super::doc::parse(&b.file, &b.text).ok())
        .map(|doc| {
            doc.cards
                .into_iter()
                .map(|c| (c.id.into_inner(), c.file.into_inner()))
                .collect()
        })
        .unwrap_or_default()
}
