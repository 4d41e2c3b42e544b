//! Character cards in and out (docs/cards.md): a card from SillyTavern and the community (V1,
//! V2 or V3, as JSON, inside a PNG or in a CHARX) becomes an entity whose facts are its prose,
//! with the card kept as given and its files (a CHARX's assets, a PNG's image: [`Asset`]) kept
//! beside it; any entity goes out as V2 or V3 JSON, as a PNG carrying both on the card's image
//! (the host's, [`Engine::set_card_image`], else the one it came with), or as a CHARX with its
//! files. A world file's `[[cards]]` loads cards too (`crate::worldfile`).
//!
//! ```
//! # let mut engine = rp_core::Engine::in_memory("Inn", 0)?;
//! let card = br#"{"spec": "chara_card_v2", "spec_version": "2.0", "data": {
//!     "name": "Aria", "description": "A bard with a cracked lute.",
//!     "first_mes": "*tunes her lute* Evening.", "extensions": {"fav": true}}}"#;
//! let imported = engine.import_card(card, 1_000)?;
//! assert_eq!(imported.greetings.first, "*tunes her lute* Evening.");
//! let again = engine.export_card(imported.entity, rp_core::cards::CardFormat::V2)?;
//! assert_eq!(again, card.to_vec()); // every field and extension, byte for byte
//! # Ok::<(), rp_core::Error>(())
//! ```

pub use crate::model::card::bytes;
pub mod charx;
pub mod png;
mod timers;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::log::Event;
use crate::model::{Card, EntityId, EntityState, FactSheet, Greetings, Millis};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

/// How a card goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardFormat {
    /// `chara_card_v2` JSON.
    V2,
    /// `chara_card_v3` JSON.
    V3,
    /// A PNG with the V2 card in a `chara` chunk and the V3 card in a `ccv3` chunk.
    Png,
    /// A CHARX: a zip with the V3 card as `card.json`.
    Charx,
}

impl CardFormat {
    /// `"v2"`, `"v3"`, `"png"` or `"charx"` (what C and Python name), or a file's extension:
    /// `.png`, `.charx`, `.json` (V3).
    pub fn from_name(name: &str) -> Result<CardFormat> {
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "v2" => CardFormat::V2,
            "v3" | "json" => CardFormat::V3,
            "png" => CardFormat::Png,
            "charx" => CardFormat::Charx,
            _ if lower.ends_with(".png") => CardFormat::Png,
            _ if lower.ends_with(".charx") => CardFormat::Charx,
            _ if lower.ends_with(".json") => CardFormat::V3,
            _ => {
                return Err(Error::invalid(
                    "card format",
                    format!(
                        "{name:?} is not a card format; use \"v2\", \"v3\", \"png\" or \"charx\" (or a .json, .png or .charx path)"
                    ),
                ));
            }
        })
    }
}

/// How a lorebook goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoreFormat {
    /// `{"spec": "lorebook_v3", "data": {...}}`, entries as a card's `character_book` holds
    /// them (SillyTavern's settings under each entry's `extensions`).
    V3,
    /// SillyTavern's World Info JSON: `{"entries": {"0": {...}}}`, camelCase.
    WorldInfo,
}

impl LoreFormat {
    /// `"lorebook_v3"` (or `"v3"`) or `"world_info"` (or `"wi"`).
    pub fn from_name(name: &str) -> Result<LoreFormat> {
        match name.to_ascii_lowercase().as_str() {
            "lorebook_v3" | "v3" => Ok(LoreFormat::V3),
            "world_info" | "wi" => Ok(LoreFormat::WorldInfo),
            _ => Err(Error::invalid(
                "lorebook format",
                format!("{name:?} is not a lorebook format; use \"lorebook_v3\" or \"world_info\""),
            )),
        }
    }
}

/// `book`'s entries as a format writes them.
fn lorebook_json(book: &crate::model::Lorebook, format: LoreFormat) -> serde_json::Value {
    use serde_json::{Value, json};
    let logic = |e: &crate::model::BookEntry| match e.logic {
        crate::model::SelectiveLogic::AndAny => 0,
        crate::model::SelectiveLogic::NotAll => 1,
        crate::model::SelectiveLogic::NotAny => 2,
        crate::model::SelectiveLogic::AndAll => 3,
    };
    match format {
        LoreFormat::WorldInfo => {
            let entries: serde_json::Map<String, Value> = book
                .entries
                .iter()
                .map(|e| {
                    (e.id.to_string(), json!({
                        "uid": e.id, "key": e.keys, "keysecondary": e.secondary_keys,
                        "comment": e.comment, "content": e.content, "constant": e.constant,
                        "selective": e.selective, "selectiveLogic": logic(e), "order": e.order,
                        "position": e.position, "disable": e.disabled, "depth": e.depth,
                        "excludeRecursion": e.exclude_recursion,
                        "preventRecursion": e.prevent_recursion, "probability": e.probability,
                        "useProbability": e.use_probability, "group": e.group,
                        "groupWeight": e.group_weight, "scanDepth": e.scan_depth,
                        "caseSensitive": e.case_sensitive, "matchWholeWords": e.match_whole_words,
                        "sticky": e.sticky, "cooldown": e.cooldown, "delay": e.delay,
                        "delayUntilRecursion": e.delay_until_recursion
                    }))
                })
                .collect();
            json!({ "name": book.name, "entries": entries })
        }
        LoreFormat::V3 => {
            let entries: Vec<Value> = book
                .entries
                .iter()
                .map(|e| {
                    json!({
                        "id": e.id, "keys": e.keys, "secondary_keys": e.secondary_keys,
                        "comment": e.comment, "content": e.content, "constant": e.constant,
                        "selective": e.selective, "insertion_order": e.order,
                        "enabled": !e.disabled,
                        "position": if e.position == 1 { "after_char" } else { "before_char" },
                        "extensions": {
                            "position": e.position, "depth": e.depth, "selectiveLogic": logic(e),
                            "exclude_recursion": e.exclude_recursion,
                            "prevent_recursion": e.prevent_recursion,
                            "probability": e.probability, "useProbability": e.use_probability,
                            "group": e.group, "group_weight": e.group_weight,
                            "scan_depth": e.scan_depth, "case_sensitive": e.case_sensitive,
                            "match_whole_words": e.match_whole_words, "sticky": e.sticky,
                            "cooldown": e.cooldown, "delay": e.delay,
                            "delay_until_recursion": e.delay_until_recursion
                        }
                    })
                })
                .collect();
            json!({
                "spec": "lorebook_v3",
                "data": {
                    "name": book.name, "scan_depth": book.scan_depth,
                    "token_budget": book.token_budget,
                    "recursive_scanning": book.recursive_scanning,
                    "extensions": {}, "entries": entries
                }
            })
        }
    }
}

/// A lorebook as listed: its id, whose it is, its name and how many entries it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LorebookInfo {
    /// Its id.
    pub id: u64,
    /// The character whose book it is (`None`: every character's).
    pub owner: Option<EntityId>,
    /// Its name.
    pub name: String,
    /// How many entries it holds.
    pub entries: usize,
}

/// A card imported: the new entity, its name, and the greetings the host may open with.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ImportedCard {
    /// The new entity.
    pub entity: EntityId,
    /// Its name.
    pub name: String,
    /// The card's greetings.
    pub greetings: Greetings,
    /// The id of the card's own lorebook (its `character_book`), if it has one.
    pub lorebook: Option<u64>,
}

/// Where a card's image is kept when its card names no embedded PNG icon: the V3 default icon.
pub const DEFAULT_IMAGE: &str = "assets/icon/image/main.png";

/// A file of a card (docs/cards.md, "Assets"): its path in the card's archive and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asset {
    /// Its path (`assets/icon/image/main.png`).
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The path in the archive an asset URI names: `embeded://path` (the spec's spelling) or
/// `embedded://path`; `None` for `ccdefault:`, `http(s)://`, `data:` and the rest.
pub fn embedded_path(uri: &str) -> Option<&str> {
    uri.strip_prefix("embeded://")
        .or_else(|| uri.strip_prefix("embedded://"))
        .filter(|p| !p.is_empty())
}

/// The path of the card's icon in its archive: the asset of `type` `icon` named `main`, else
/// the first icon, when its URI is embedded (`None` otherwise).
pub fn icon_path(card: &Card) -> Option<String> {
    let assets = card.data().get("assets")?.as_array()?;
    let icons: Vec<&serde_json::Value> = assets
        .iter()
        .filter(|a| a.get("type").and_then(serde_json::Value::as_str) == Some("icon"))
        .collect();
    let icon = icons
        .iter()
        .find(|a| a.get("name").and_then(serde_json::Value::as_str) == Some("main"))
        .or(icons.first())?;
    let uri = icon.get("uri")?.as_str()?;
    embedded_path(uri)
        .filter(|p| charx::check_path(p).is_ok())
        .map(str::to_owned)
}

/// Where `card`'s image goes (a PNG's image, the host's): its icon's path when that is a
/// `.png`, else [`DEFAULT_IMAGE`].
pub fn image_path(card: Option<&Card>) -> String {
    card.and_then(icon_path)
        .filter(|p| p.to_ascii_lowercase().ends_with(".png"))
        .unwrap_or_else(|| DEFAULT_IMAGE.to_owned())
}

/// The card in `bytes`: a PNG's `ccv3` chunk (else its `chara` chunk), base64 JSON; a
/// CHARX's `card.json`; or JSON itself.
pub fn read_card(bytes: &[u8]) -> Result<Card> {
    read_card_files(bytes).map(|(card, _)| card)
}

/// The card in `bytes` (as [`read_card`]) and the files it comes with: a CHARX's other files
/// at their paths; a PNG's image, its card chunks (`chara`, `ccv3`) taken out, at
/// [`image_path`]; none for JSON.
pub fn read_card_files(bytes: &[u8]) -> Result<(Card, Vec<Asset>)> {
    if charx::is_zip(bytes) {
        let read = charx::read(bytes)?;
        let card = Card::from_json(&read.card)?;
        let assets = read
            .assets
            .into_iter()
            .map(|(path, bytes)| Asset { path, bytes })
            .collect();
        return Ok((card, assets));
    }
    if png::is_png(bytes) {
        let card = read_png_card(bytes)?;
        let image = png::without_text_chunks(bytes, &["chara", "ccv3"])
            .map_err(|e| Error::invalid("card", e.0))?;
        let path = image_path(Some(&card));
        return Ok((card, vec![Asset { path, bytes: image }]));
    }
    let json = std::str::from_utf8(bytes)
        .map_err(|_| Error::invalid("card", "neither a PNG nor UTF-8 JSON"))?;
    Ok((Card::from_json(json)?, Vec::new()))
}

fn read_png_card(bytes: &[u8]) -> Result<Card> {
    let bad = |e: png::PngError| Error::invalid("card", e.0);
    let text = match png::text_chunk(bytes, "ccv3").map_err(bad)? {
        Some(t) => t,
        None => png::text_chunk(bytes, "chara")
            .map_err(bad)?
            .ok_or_else(|| {
                Error::invalid(
                    "card",
                    "the PNG holds no card (no `ccv3` or `chara` text chunk)",
                )
            })?,
    };
    let raw = text.trim();
    let decoded = STANDARD
        .decode(raw)
        .or_else(|_| STANDARD_NO_PAD.decode(raw.trim_end_matches('=')))
        .map_err(|e| Error::invalid("card", format!("the PNG's card is not base64: {e}")))?;
    let json = String::from_utf8(decoded)
        .map_err(|_| Error::invalid("card", "the PNG's card is not UTF-8 text"))?;
    Card::from_json(&json)
}

/// The events that make `card` (with its files) a new entity of `world`'s, keyed `key`: the
/// entity, its card, its files and its lorebook. Refused when an entity has its name already.
/// Returns the events, the entity and its lorebook's id.
pub(crate) fn card_events(
    world: &crate::log::World,
    card: &Card,
    assets: Vec<Asset>,
    key: Option<String>,
) -> Result<(Vec<Event>, EntityId, Option<u64>)> {
    let name = card.name().trim().to_owned();
    if world.entity_by_name(&name).is_some() {
        return Err(Error::conflict(format!(
            "an entity is named {name:?} already; rename one of them"
        )));
    }
    let nickname = card.text("nickname").trim();
    let aliases = if nickname.is_empty() || nickname == name {
        Vec::new()
    } else {
        vec![nickname.to_owned()]
    };
    let id = EntityId(world.next_id());
    let mut events = vec![Event::EntityCreated {
        id,
        key,
        name,
        aliases,
        facts: facts_of(card),
        host_controlled: false,
        state: EntityState::default(),
    }];
    events.extend(attach_events(id, card, assets));
    // Its lorebook, the character's own (docs/cards.md, "Lorebooks").
    let mut lorebook = None;
    if let Some(book) = card.data().get("character_book").filter(|b| b.is_object()) {
        lorebook = Some(id.0 + 1);
        events.push(Event::LorebookAdded {
            id: id.0 + 1,
            owner: Some(id),
            json: book.to_string(),
        });
    }
    Ok((events, id, lorebook))
}

/// `card` attached to `entity` with its files.
pub(crate) fn attach_events(entity: EntityId, card: &Card, assets: Vec<Asset>) -> Vec<Event> {
    let mut events = vec![Event::CardAttached {
        entity,
        card: card.json().to_owned(),
    }];
    events.extend(assets.into_iter().map(|a| Event::CardAsset {
        entity,
        path: a.path,
        bytes: a.bytes,
    }));
    events
}

/// The fact lines of a card (docs/cards.md, "What a card becomes"): its description line by
/// line, then `personality:` and `scenario:` facts; `{{char}}` and `<BOT>` read as its name. A
/// line that would read as a sheet directive (`$` and a letter) is kept as prose.
pub fn facts_of(card: &Card) -> FactSheet {
    let name = card.name().trim();
    let named = |t: &str| t.replace("{{char}}", name).replace("<BOT>", name);
    let prose = |t: String| {
        let starts_directive =
            t.starts_with('$') && t[1..].starts_with(|c: char| c.is_ascii_alphabetic());
        if starts_directive {
            format!("\u{200b}{t}")
        } else {
            t
        }
    };
    let mut lines: Vec<String> = named(card.text("description"))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| prose(l.to_owned()))
        .collect();
    for field in ["personality", "scenario"] {
        let text = named(card.text(field));
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if !joined.is_empty() {
            lines.push(format!("{field}: {joined}"));
        }
    }
    FactSheet(lines)
}

impl Engine {
    /// Imports a character card (V1, V2 or V3; JSON, a PNG with a `ccv3` or `chara` chunk, or
    /// a CHARX) at `now`: a new entity of the engine's, its facts made from the card's prose
    /// ([`facts_of`]), the card kept as given for export with its files (a CHARX's assets, a
    /// PNG's image: [`Engine::card_assets`]). Not placed anywhere: the host puts it where it
    /// belongs. Refused, changing nothing, when the bytes hold no card, the card is not valid,
    /// a CHARX breaks its bounds, a text is too long for a fact, or an entity has its name
    /// already.
    pub fn import_card(&mut self, bytes: &[u8], now: Millis) -> Result<ImportedCard> {
        if now < self.world().now() {
            return Err(Error::invalid(
                "time",
                format!(
                    "import_card: now ({now}) is before the world's clock ({})",
                    self.world().now()
                ),
            ));
        }
        let (card, assets) = read_card_files(bytes)?;
        let (made, id, lorebook) = card_events(self.world(), &card, assets, None)?;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.extend(made);
        self.append(events)?;
        Ok(ImportedCard {
            entity: id,
            name: card.name().trim().to_owned(),
            greetings: card.greetings(),
            lorebook,
        })
    }

    /// Adds the lorebook in `bytes` (SillyTavern's World Info JSON, a `lorebook_v3`, or a
    /// card's `character_book`) at `now`: every character's when `owner` is `None`, else that
    /// character's alone. Returns its id. Refused, changing nothing, when it is not a lorebook,
    /// holds more than 100,000 entries, a regex key is not a JavaScript regular expression, or
    /// `owner` does not exist.
    pub fn import_lorebook(
        &mut self,
        bytes: &[u8],
        owner: Option<EntityId>,
        now: Millis,
    ) -> Result<u64> {
        if now < self.world().now() {
            return Err(Error::invalid(
                "time",
                format!(
                    "import_lorebook: now ({now}) is before the world's clock ({})",
                    self.world().now()
                ),
            ));
        }
        let json =
            std::str::from_utf8(bytes).map_err(|_| Error::invalid("lorebook", "not UTF-8 JSON"))?;
        let id = self.world().next_id();
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::LorebookAdded {
            id,
            owner,
            json: json.to_owned(),
        });
        self.append(events)?;
        Ok(id)
    }

    /// Every lorebook, by id.
    pub fn lorebooks(&self) -> Vec<LorebookInfo> {
        self.world()
            .lorebooks()
            .map(|(id, owner, b)| LorebookInfo {
                id,
                owner,
                name: b.name.clone(),
                entries: b.entries.len(),
            })
            .collect()
    }

    /// Lorebook `id` in `format`: a book comes back as it was given when it came in that
    /// format (World Info as World Info, a `lorebook_v3` as one: byte for byte; a card's
    /// `character_book` as `lorebook_v3` keeps every field of it); otherwise its entries are
    /// written in the format, every setting this engine reads kept, so importing the export
    /// gives the same book. An unknown id is a `not_found` error.
    pub fn export_lorebook(&self, id: u64, format: LoreFormat) -> Result<Vec<u8>> {
        let (_, _, book) = self
            .world()
            .lorebooks()
            .find(|(b, _, _)| *b == id)
            .ok_or_else(|| Error::not_found("lorebook", id))?;
        let given: serde_json::Value = serde_json::from_str(&book.json)
            .map_err(|e| Error::invalid("lorebook", e.to_string()))?;
        let spec = given.get("spec").and_then(serde_json::Value::as_str);
        let world_info = given
            .get("entries")
            .is_some_and(serde_json::Value::is_object);
        Ok(match format {
            LoreFormat::V3 if spec == Some("lorebook_v3") => book.json.clone().into_bytes(),
            LoreFormat::V3 if !world_info => {
                serde_json::json!({"spec": "lorebook_v3", "data": given})
                    .to_string()
                    .into_bytes()
            }
            LoreFormat::WorldInfo if world_info => book.json.clone().into_bytes(),
            _ => lorebook_json(book, format).to_string().into_bytes(),
        })
    }

    /// `text` (a card's greeting, say) with the card macros expanded as `speaker`'s prompt
    /// expands them now (docs/cards.md, "Macros"): `{{char}}` is `speaker`, `{{user}}` is
    /// `user`, and `{{random}}`, `{{pick}}` and `{{roll}}` draw from the world's generator at
    /// its position. Changes nothing; an unknown entity is a `not_found` error.
    pub fn expand_macros(&self, text: &str, speaker: EntityId, user: EntityId) -> Result<String> {
        let world = self.world();
        let name = |id: EntityId| {
            world
                .entity(id)
                .map(|e| e.name.as_str())
                .ok_or_else(|| Error::not_found("entity", id.0))
        };
        let macros = crate::turn::prompt::macros::Macros {
            char: name(speaker)?,
            user: name(user)?,
            seed: world.meta().map_or(0, |m| m.settings.seed),
            turn: world.seq(),
        };
        Ok(macros.expand(text, 0))
    }

    /// The card `entity` was made from (`None` for an entity made otherwise). An unknown
    /// entity is a `not_found` error.
    pub fn card(&self, entity: EntityId) -> Result<Option<Card>> {
        if self.world().entity(entity).is_none() {
            return Err(Error::not_found("entity", entity.0));
        }
        self.world()
            .card_json(entity)
            .map(Card::from_json)
            .transpose()
    }

    /// The files of `entity`'s card (docs/cards.md, "Assets"), by path: a CHARX's assets, a
    /// PNG's image, the host's image ([`Engine::set_card_image`]). An unknown entity is a
    /// `not_found` error.
    pub fn card_assets(&self, entity: EntityId) -> Result<Vec<Asset>> {
        if self.world().entity(entity).is_none() {
            return Err(Error::not_found("entity", entity.0));
        }
        Ok(self
            .world()
            .card_assets(entity)
            .map(|(path, bytes)| Asset {
                path: path.to_owned(),
                bytes: bytes.to_vec(),
            })
            .collect())
    }

    /// The bytes of the file at `path` of `entity`'s card. An unknown entity, or no file at
    /// `path`, is a `not_found` error.
    pub fn card_asset(&self, entity: EntityId, path: &str) -> Result<Vec<u8>> {
        if self.world().entity(entity).is_none() {
            return Err(Error::not_found("entity", entity.0));
        }
        self.world()
            .card_asset(entity, path)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::not_found("card file", format!("{path:?} of entity {entity}")))
    }

    /// The image `entity`'s card goes out on as a PNG: the file at its icon's path, else at
    /// [`DEFAULT_IMAGE`], that is a valid PNG (`None`: the placeholder).
    pub fn card_image(&self, entity: EntityId) -> Result<Option<Vec<u8>>> {
        let card = self.card(entity)?;
        let world = self.world();
        let icon = card.as_ref().and_then(icon_path);
        Ok(icon
            .iter()
            .map(String::as_str)
            .chain([DEFAULT_IMAGE])
            .filter_map(|path| world.card_asset(entity, path))
            .find(|bytes| png::check(bytes).is_ok())
            .map(<[u8]>::to_vec))
    }

    /// Sets `entity`'s image to the PNG `png` at `now` (the clock advances to it): kept, its
    /// card chunks (`chara`, `ccv3`) taken out, at the card's icon path when that is a `.png`,
    /// else at [`DEFAULT_IMAGE`]; a PNG export then carries the card on it. Works for an
    /// entity made without a card too. Refused, changing nothing, when `png` is not a valid
    /// PNG (`invalid`), the card's files would pass their bounds, `now` is before the clock, or
    /// the entity does not exist (`not_found`).
    pub fn set_card_image(&mut self, entity: EntityId, png: &[u8], now: Millis) -> Result<()> {
        if now < self.world().now() {
            return Err(Error::invalid(
                "time",
                format!(
                    "set_card_image: now ({now}) is before the world's clock ({})",
                    self.world().now()
                ),
            ));
        }
        let card = self.card(entity)?;
        let image = png::without_text_chunks(png, &["chara", "ccv3"])
            .map_err(|e| Error::invalid("card image", e.0))?;
        let mut events = Vec::new();
        if now > self.world().now() {
            events.push(Event::TimeAdvanced { to: now });
        }
        events.push(Event::CardAsset {
            entity,
            path: image_path(card.as_ref()),
            bytes: image,
        });
        self.append(events)?;
        Ok(())
    }

    /// `entity` as a card in `format`: the card it was made from (the same version as given
    /// comes back byte for byte; another version keeps every field), or, for an entity made
    /// otherwise, a card of its name and its prose facts. A PNG carries the V2 card in a
    /// `chara` chunk and the V3 card in a `ccv3` chunk on the card's image
    /// ([`Engine::card_image`]: the host's, else the one imported), else on a 1×1 placeholder.
    /// A CHARX holds `card.json` and every file of the card at its path.
    pub fn export_card(&self, entity: EntityId, format: CardFormat) -> Result<Vec<u8>> {
        let card = match self.card(entity)? {
            Some(card) => card,
            None => {
                let e = self.world().entity(entity).expect("checked by card()");
                let prose: Vec<&str> = e
                    .facts
                    .lines()
                    .iter()
                    .map(|l| l.trim())
                    .filter(|l| !l.is_empty() && !l.starts_with('$'))
                    .collect();
                Card::of(&e.name, &prose.join("\n"))
            }
        };
        Ok(match format {
            CardFormat::V2 => card.to_v2().into_bytes(),
            CardFormat::V3 => card.to_v3().into_bytes(),
            CardFormat::Png => {
                let v2 = STANDARD.encode(card.to_v2());
                let v3 = STANDARD.encode(card.to_v3());
                let image = self.card_image(entity)?.unwrap_or_else(png::placeholder);
                png::with_text_chunks(&image, &[("chara", &v2), ("ccv3", &v3)])
                    .map_err(|e| Error::invalid("card", e.0))?
            }
            CardFormat::Charx => charx::write(&card.to_v3(), self.world().card_assets(entity))?,
        })
    }
}
