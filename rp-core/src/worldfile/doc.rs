//! The world file's shape, parsed with spans so every error can name its line.

use crate::error::Error;
use crate::model::{DriveConfig, Personality};
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

/// A parsed world file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldDoc {
    /// The `[world]` table.
    pub world: WorldSection,
    /// `[[containers]]`.
    #[serde(default)]
    pub containers: Vec<ContainerDoc>,
    /// `[[entities]]`.
    #[serde(default)]
    pub entities: Vec<EntityDoc>,
    /// `[[edges]]`.
    #[serde(default)]
    pub edges: Vec<EdgeDoc>,
    /// `[[cards]]`: characters from card files (docs/cards.md, "In a world file").
    #[serde(default)]
    pub cards: Vec<CardDoc>,
    /// `[drives]`: the world's drive settings, laid over the built-in defaults (docs/drives.md).
    #[serde(default)]
    pub drives: Option<Spanned<DriveConfig>>,
    /// `[[requirements]]`: decision points and validators (docs/requirements.md), each a
    /// table in a requirement's JSON form.
    #[serde(default)]
    pub requirements: Vec<Spanned<toml::Value>>,
}

/// `[world]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSection {
    /// The world's name.
    pub name: Spanned<String>,
    /// The host clock at creation (ms); defaults to the caller's `now`.
    #[serde(default)]
    pub now: Option<i64>,
}

/// A slot of a container.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotDoc {
    /// Its name.
    pub name: String,
    /// Its capacity; absent for no limit.
    #[serde(default)]
    pub capacity: Option<u32>,
}

/// `[[containers]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerDoc {
    /// Stable key.
    pub id: Spanned<String>,
    /// Name.
    pub name: String,
    /// Facts, one per line.
    #[serde(default)]
    pub facts: Option<Spanned<String>>,
    /// Key of the enclosing container.
    #[serde(default)]
    pub parent: Option<Spanned<String>>,
    /// Slots.
    #[serde(default)]
    pub slots: Vec<SlotDoc>,
    /// It moves (a carriage, a ship).
    #[serde(default)]
    pub moving: bool,
    /// It is open to the container around it (hearing; see `ContainerProperties`).
    #[serde(default)]
    pub public: bool,
    /// Container-tree steps an utterance carries.
    #[serde(default)]
    pub audible_range: u32,
}

/// `[[entities]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityDoc {
    /// Stable key.
    pub id: Spanned<String>,
    /// Unique name.
    pub name: String,
    /// Other names.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Host-controlled (the player).
    #[serde(default)]
    pub player: bool,
    /// A person only talked about (docs/beliefs.md): no place, no mind, no lines. Set when
    /// the entity is created; a patch cannot change it.
    #[serde(default)]
    pub mentioned: bool,
    /// Facts, one per line.
    #[serde(default)]
    pub facts: Option<Spanned<String>>,
    /// Mood.
    #[serde(default)]
    pub mood: Option<String>,
    /// Goals.
    #[serde(default)]
    pub goals: Vec<String>,
    /// Status.
    #[serde(default)]
    pub status: Option<String>,
    /// Starting container (key).
    #[serde(default)]
    pub container: Option<Spanned<String>>,
    /// Starting slot in it.
    #[serde(default)]
    pub slot: Option<String>,
    /// Starting posture.
    #[serde(default)]
    pub posture: Option<String>,
    /// Starting action (verb).
    #[serde(default)]
    pub action: Option<String>,
    /// Items carried (entity keys).
    #[serde(default)]
    pub inventory: Vec<Spanned<String>>,
    /// Items in hand (entity keys, a subset of the inventory).
    #[serde(default)]
    pub holding: Vec<Spanned<String>>,
    /// Its drive settings, laid over the world's (`{ enabled = false }` for an item). Not for
    /// a player.
    #[serde(default)]
    pub drives: Option<Spanned<DriveConfig>>,
    /// Its personality: traits in [0, 1], 0.5 when not given. Not for a player.
    #[serde(default)]
    pub personality: Option<Spanned<Personality>>,
    /// Its rules (docs/rules.md), each a table in a rule's JSON form. Not for a player.
    #[serde(default)]
    pub rules: Vec<Spanned<toml::Value>>,
}

/// `[[cards]]`: a character from a card file (docs/cards.md, "In a world file").
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardDoc {
    /// The card's file (JSON, PNG or CHARX), relative to the world file's directory.
    pub file: Spanned<String>,
    /// Stable key of its entity.
    pub id: Spanned<String>,
    /// Starting container (key).
    #[serde(default)]
    pub container: Option<Spanned<String>>,
    /// Starting slot in it.
    #[serde(default)]
    pub slot: Option<String>,
}

/// `[[edges]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeDoc {
    /// Key of the entity whose feelings these are.
    pub from: Spanned<String>,
    /// Key of the entity they are about.
    pub to: Spanned<String>,
    /// Liking in [-1, 1].
    #[serde(default)]
    pub affinity: f64,
    /// Trust in [-1, 1].
    #[serde(default)]
    pub trust: f64,
    /// Summary.
    #[serde(default)]
    pub summary: String,
    /// What `from` knows about `to`.
    #[serde(default)]
    pub knowledge: Vec<String>,
}

/// The text of a `facts` field ("" when absent).
pub(crate) fn facts_text(facts: &Option<Spanned<String>>) -> &str {
    facts.as_ref().map_or("", |f| f.get_ref().as_str())
}

/// Where line `line` (1-based) of a `facts` string starts in the file: (file line, column
/// offset to add to the sheet's column). Exact for multi-line strings (`'''`, `"""`) and
/// single-line ones; approximate where escapes change lengths.
pub(crate) fn facts_line(text: &str, facts: &Spanned<String>, line: usize) -> (usize, usize) {
    let span = facts.span();
    let (first_line, first_col) = line_col(text, span.start);
    let raw = &text[span.start.min(text.len())..span.end.min(text.len())];
    let delimiter = if raw.starts_with("'''") || raw.starts_with("\"\"\"") {
        3
    } else {
        1
    };
    let newline_after = raw[delimiter.min(raw.len())..].starts_with('\n')
        || raw[delimiter.min(raw.len())..].starts_with("\r\n");
    if delimiter == 3 && newline_after {
        (first_line + line, 0)
    } else if line == 1 {
        (first_line, first_col - 1 + delimiter)
    } else {
        (first_line + line - 1, 0)
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// A world-file error at `span`.
pub(crate) fn at(file: &str, text: &str, span: Range<usize>, field: &str, e: Error) -> Error {
    let message = match e {
        Error::WorldFile { message, .. } => message,
        other => other.to_string(),
    };
    error(file, text, span, field, message)
}

pub(crate) fn error(
    file: &str,
    text: &str,
    span: Range<usize>,
    field: &str,
    message: impl Into<String>,
) -> Error {
    let (line, column) = line_col(text, span.start);
    Error::WorldFile {
        file: file.to_owned(),
        line,
        column,
        field: field.to_owned(),
        message: message.into(),
    }
}

/// The key assigned nearest before `offset` on its line (`capacity = "x"` → `capacity`).
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    let before = &text[line_start..offset];
    let before = match before.rfind('=') {
        Some(eq) => &before[..eq],
        // The value is the first thing on the line: the key is further on (`key = ...`).
        None => text[line_start..].lines().next()?.split_once('=')?.0,
    };
    let key = before
        .trim_end()
        .rsplit(['{', ',', ' ', '\t'])
        .next()?
        .trim();
    (!key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.\"".contains(c)))
    .then(|| key.to_owned())
}

pub(crate) fn parse(file: &str, text: &str) -> crate::error::Result<WorldDoc> {
    toml::from_str::<WorldDoc>(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let (line, column) = line_col(text, span.start);
        let message = e.message().trim().to_owned();
        let field = quoted_field(&message)
            .or_else(|| key_on_line(text, span.start))
            .unwrap_or_default();
        Error::WorldFile {
            file: file.to_owned(),
            line,
            column,
            field,
            message,
        }
    })
}

/// serde names a missing or unknown field in backquotes: "missing field `name`".
fn quoted_field(message: &str) -> Option<String> {
    if !(message.contains("missing field") || message.contains("unknown field")) {
        return None;
    }
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    Some(message[start..end].to_owned())
}
