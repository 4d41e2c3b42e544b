//! A character card as the community writes it (docs/cards.md): Character Card V1 (the bare
//! TavernAI JSON), V2 (`chara_card_v2`, fields under `data`) and V3 (`chara_card_v3`). The
//! card's JSON is kept as it was given, so an export of the same version gives back every
//! field and extension byte for byte; conversions between versions keep every field too.

pub mod bytes;

use crate::error::{Error, Result};
use serde_json::{Map, Value, json};

/// The largest card JSON read, in bytes.
pub const MAX_CARD_BYTES: usize = 16 << 20;

/// The most files a card (a CHARX, and the files kept with a card) may hold.
pub const MAX_ENTRIES: usize = 10_000;
/// The largest file of a CHARX, other than `card.json`, in bytes.
pub const MAX_ASSET_BYTES: usize = 16 << 20;
/// The most bytes a card's files may come to, inflated.
pub const MAX_ASSETS_BYTES: usize = 64 << 20;
/// The longest path of a file in a card.
pub const MAX_PATH_BYTES: usize = 1024;

/// The files kept with a card (docs/cards.md, "Assets and images"), by path, and how many bytes
/// they come to (kept so a new file is checked against the bound without summing them all).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CardFiles {
    /// Each file's bytes, by path.
    pub files: imbl::OrdMap<String, bytes::Bytes>,
    /// Their sizes, added up.
    pub total: u64,
}

/// Why `path` cannot name a file of a card (docs/cards.md, "Assets and images"): empty, too
/// long, absolute, climbing (`..`), a drive (`:`), control characters, a folder (ending in
/// `/`), or `card.json` itself.
pub fn check_asset_path(path: &str) -> std::result::Result<(), String> {
    let climbs = path.starts_with('/')
        || path.starts_with('\\')
        || path.split(['/', '\\']).any(|part| part == "..")
        || path.contains(':');
    if climbs {
        return Err(format!("the path {path:?} climbs out of the archive"));
    }
    if path.is_empty() || path.ends_with('/') || path.ends_with('\\') {
        return Err(format!("the path {path:?} names no file"));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("a path is longer than {MAX_PATH_BYTES} bytes"));
    }
    if path.chars().any(char::is_control) {
        return Err(format!("the path {path:?} has control characters"));
    }
    if path == "card.json" {
        return Err("card.json is the card itself, not one of its files".into());
    }
    Ok(())
}

/// The text fields every version has.
pub const TEXT_FIELDS: [&str; 6] = [
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
];

/// A card's version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// The bare JSON of TavernAI (no `spec`).
    V1,
    /// `chara_card_v2`.
    V2,
    /// `chara_card_v3`.
    V3,
}

/// A card: its version, its JSON as given, and the object its fields are read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    spec: Spec,
    json: String,
    value: Value,
}

/// A card's greetings, offered to the host (the first message of a chat with it).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Greetings {
    /// `first_mes`.
    pub first: String,
    /// `alternate_greetings`.
    pub alternate: Vec<String>,
    /// `group_only_greetings` (V3): for group chats only.
    pub group_only: Vec<String>,
}

impl Card {
    /// Reads a card from its JSON text: V3 or V2 by `spec`, else V1 (a bare object with a
    /// `name`). Refused (`invalid card`) when it is not JSON, too large, not an object, of an
    /// unknown `spec`, without a name, or a field has the wrong type.
    pub fn from_json(text: &str) -> Result<Card> {
        let bad = |reason: String| Err(Error::invalid("card", reason));
        if text.len() > MAX_CARD_BYTES {
            return bad(format!("the card is larger than {MAX_CARD_BYTES} bytes"));
        }
        let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| Error::invalid("card", format!("not JSON: {e}")))?;
        let Some(root) = value.as_object() else {
            return bad("a card is a JSON object".into());
        };
        let spec = match root.get("spec").and_then(Value::as_str) {
            Some("chara_card_v3") => Spec::V3,
            Some("chara_card_v2") => Spec::V2,
            Some(other) => return bad(format!("{other:?} is not a card spec this engine reads")),
            None if root.contains_key("spec") => return bad("`spec` is not a string".into()),
            None => Spec::V1,
        };
        if spec != Spec::V1 && !root.get("data").is_some_and(Value::is_object) {
            return bad("a V2 or V3 card has its fields in a `data` object".into());
        }
        let card = Card {
            spec,
            json: text.to_owned(),
            value,
        };
        card.check()?;
        Ok(card)
    }

    fn check(&self) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid("card", reason));
        let data = self.data();
        for field in TEXT_FIELDS.iter().chain(&[
            "creator_notes",
            "system_prompt",
            "post_history_instructions",
            "creator",
            "character_version",
        ]) {
            if let Some(v) = data.get(*field)
                && !v.is_string()
                && !v.is_null()
            {
                return bad(format!("`{field}` is not a string"));
            }
        }
        for field in ["alternate_greetings", "group_only_greetings", "tags"] {
            if let Some(v) = data.get(field)
                && !v.is_null()
                && !v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            {
                return bad(format!("`{field}` is not a list of strings"));
            }
        }
        if let Some(v) = data.get("extensions")
            && !v.is_object()
        {
            return bad("`extensions` is not an object".into());
        }
        if self.name().trim().is_empty() {
            return bad("the card has no name".into());
        }
        Ok(())
    }

    /// Its version.
    pub fn spec(&self) -> Spec {
        self.spec
    }

    /// Its JSON as it was given.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The object its fields are in (`data`, or the root of a V1 card).
    pub fn data(&self) -> &Map<String, Value> {
        let root = self.value.as_object().expect("checked when read");
        match self.spec {
            Spec::V1 => root,
            _ => root["data"].as_object().expect("checked when read"),
        }
    }

    /// A text field, `""` when absent.
    pub fn text(&self, field: &str) -> &str {
        self.data().get(field).and_then(Value::as_str).unwrap_or("")
    }

    /// A list of strings, empty when absent.
    pub fn list(&self, field: &str) -> Vec<String> {
        self.data()
            .get(field)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The character's name.
    pub fn name(&self) -> &str {
        self.text("name")
    }

    /// Its greetings.
    pub fn greetings(&self) -> Greetings {
        Greetings {
            first: self.text("first_mes").to_owned(),
            alternate: self.list("alternate_greetings"),
            group_only: self.list("group_only_greetings"),
        }
    }

    /// The card as V2 JSON: a V2 card as it was given; another version with every field of
    /// its data under `data` (V3's own fields included: V2 readers skip what they do not
    /// know), and the V1 fields mirrored at the root as SillyTavern writes them.
    pub fn to_v2(&self) -> String {
        if self.spec == Spec::V2 {
            return self.json.clone();
        }
        self.converted("chara_card_v2", "2.0")
    }

    /// The card as V3 JSON: a V3 card as it was given; another version with its data, and
    /// the fields V3 requires (`group_only_greetings`) added when absent.
    pub fn to_v3(&self) -> String {
        if self.spec == Spec::V3 {
            return self.json.clone();
        }
        self.converted("chara_card_v3", "3.0")
    }

    fn converted(&self, spec: &str, version: &str) -> String {
        let mut data = self.data().clone();
        data.entry("extensions").or_insert_with(|| json!({}));
        if spec == "chara_card_v3" {
            data.entry("group_only_greetings")
                .or_insert_with(|| json!([]));
        }
        let mut root = Map::new();
        root.insert("spec".into(), spec.into());
        root.insert("spec_version".into(), version.into());
        for field in TEXT_FIELDS {
            root.insert(field.into(), self.text(field).into());
        }
        root.insert("data".into(), Value::Object(data));
        Value::Object(root).to_string()
    }

    /// A V2 card of a character described by `name` and `description` (an entity imported
    /// from no card).
    pub fn of(name: &str, description: &str) -> Card {
        let value = json!({
            "spec": "chara_card_v2",
            "spec_version": "2.0",
            "data": {
                "name": name, "description": description, "personality": "", "scenario": "",
                "first_mes": "", "mes_example": "", "creator_notes": "", "system_prompt": "",
                "post_history_instructions": "", "alternate_greetings": [], "tags": [],
                "creator": "", "character_version": "", "extensions": {}
            }
        });
        Card {
            spec: Spec::V2,
            json: value.to_string(),
            value,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_by_spec() {
        let v1 = Card::from_json(r#"{"name": "Aria", "description": "A bard."}"#).unwrap();
        assert_eq!((v1.spec(), v1.text("description")), (Spec::V1, "A bard."));
        let v2 = Card::from_json(
            r#"{"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Aria", "alternate_greetings": ["Hi"], "extensions": {"x": {"y": [1, 2]}}}}"#,
        )
        .unwrap();
        assert_eq!(v2.greetings().alternate, vec!["Hi".to_owned()]);
        assert_eq!(
            v2.to_v2(),
            v2.json(),
            "the same version is given back byte for byte"
        );
        let v3: Value = serde_json::from_str(&v2.to_v3()).unwrap();
        assert_eq!(v3["spec"], "chara_card_v3");
        assert_eq!(v3["data"]["extensions"]["x"]["y"][1], 2);
        assert_eq!(v3["data"]["group_only_greetings"], json!([]));
        let back = Card::from_json(&Card::from_json(&v2.to_v3()).unwrap().to_v2()).unwrap();
        assert_eq!(back.data(), Card::from_json(&v2.to_v3()).unwrap().data());
    }

    #[test]
    fn what_is_not_a_card_is_named() {
        for (bad, why) in [
            ("[]", "a JSON object"),
            ("{", "not JSON"),
            (
                r#"{"spec": "chara_card_v9", "data": {}}"#,
                "not a card spec",
            ),
            (
                r#"{"spec": "chara_card_v2", "data": []}"#,
                "a `data` object",
            ),
            (
                r#"{"spec": "chara_card_v2", "data": {"name": ""}}"#,
                "no name",
            ),
            (
                r#"{"name": "A", "description": 5}"#,
                "`description` is not a string",
            ),
            (
                r#"{"name": "A", "tags": [1]}"#,
                "`tags` is not a list of strings",
            ),
        ] {
            let e = Card::from_json(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(Card::from_json(&deep).is_err());
    }
}
