//! [`ScriptedLines`]: what the characters say when no model server is set, as data
//! (`examples/tavern-lines.toml`), and the scripted generator of a turn made from it. Each
//! turn, every character on stage gets the one line of its script that answers what it heard
//! (rp-core's `ScriptedGenerator` then says it, or the fallback, when the engine asks for a
//! reply); the engine still decides who answers, from the fact sheets.

use rp_core::turn::ScriptedGenerator;
use rp_core::{EntityId, World};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// One scripted line.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    /// The words that call for it: a word of the line it answers starting with one of them
    /// (any case). None: a line for any occasion, said in order.
    #[serde(default)]
    pub words: Vec<String>,
    /// What the character says.
    pub text: String,
}

/// The scripted lines of every character, by world-file key, and the fallback. Each line is
/// said once per branch.
///
/// ```
/// let lines = rp_demo::ScriptedLines::from_toml(
///     r#"
///     fallback = "{name} shrugs."
///     [[lines.tobias]]
///     words = ["light"]
///     text = "Green lights, three nights running."
///     [[lines.tobias]]
///     text = "Storm like this, nobody goes out."
///     "#,
/// )
/// .unwrap();
/// assert_eq!(lines.pick("tobias", "What LIGHTS?", None), Some("Green lights, three nights running."));
/// assert_eq!(lines.pick("tobias", "Evening.", None), Some("Storm like this, nobody goes out."));
/// assert_eq!(lines.pick("mira", "Evening.", None), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedLines {
    /// What a character says once its script has nothing left that fits (`{name}`: its name).
    pub fallback: String,
    /// The lines of each character, by its world-file key, in the order they are tried.
    #[serde(default)]
    pub lines: BTreeMap<String, Vec<Line>>,
}

impl ScriptedLines {
    /// Reads the lines from TOML: a `fallback` and `[[lines.KEY]]` tables with `text` and
    /// optional `words` (`examples/tavern-lines.toml` says more). The words are kept in lower
    /// case.
    pub fn from_toml(text: &str) -> Result<ScriptedLines, toml::de::Error> {
        let mut lines: ScriptedLines = toml::from_str(text)?;
        for line in lines.lines.values_mut().flatten() {
            for word in &mut line.words {
                *word = word.to_lowercase();
            }
        }
        Ok(lines)
    }

    /// The script of the character with world-file key `key` (empty for anyone else).
    pub fn of(&self, key: &str) -> &[Line] {
        self.lines.get(key).map_or(&[], Vec::as_slice)
    }

    /// The line the character with key `key` says to `heard`: the first one not in `said`
    /// called for by a word of it, else the first one not in `said` for any occasion.
    pub fn pick(&self, key: &str, heard: &str, said: Option<&HashSet<String>>) -> Option<&str> {
        let words: Vec<String> = heard
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let script = self.of(key);
        let fresh = |line: &&Line| said.is_none_or(|s| !s.contains(&line.text));
        script
            .iter()
            .filter(fresh)
            .find(|line| {
                line.words
                    .iter()
                    .any(|k| words.iter().any(|w| w.starts_with(k.as_str())))
            })
            .or_else(|| {
                script
                    .iter()
                    .filter(fresh)
                    .find(|line| line.words.is_empty())
            })
            .map(|line| line.text.as_str())
    }

    /// The generator of one turn: for each character in `heard` (the line it answers), the
    /// line it would say, skipping what it has `said` on this branch.
    pub fn generator(
        &self,
        world: &World,
        heard: &BTreeMap<EntityId, String>,
        said: &BTreeMap<EntityId, HashSet<String>>,
    ) -> ScriptedGenerator {
        let generator = ScriptedGenerator::new(self.fallback.as_str());
        for (&id, text) in heard {
            let key = world
                .entity(id)
                .and_then(|e| e.key.as_deref())
                .unwrap_or("");
            if let Some(line) = self.pick(key, text, said.get(&id)) {
                generator.script(id, [line]);
            }
        }
        generator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAVERN: &str = include_str!("../../examples/tavern-lines.toml");

    fn tavern() -> ScriptedLines {
        ScriptedLines::from_toml(TAVERN).expect("the tavern's lines load")
    }

    #[test]
    fn the_tavern_lines_load_for_tobias_and_mira() {
        let lines = tavern();
        assert_eq!(lines.of("tobias").len(), 11);
        assert_eq!(lines.of("mira").len(), 10);
        assert!(lines.of("wren").is_empty());
        assert!(lines.fallback.contains("{name}"));
        assert!(
            lines
                .lines
                .values()
                .flatten()
                .all(|l| !l.text.is_empty() && !l.text.contains('\n'))
        );
    }

    #[test]
    fn a_word_calls_for_its_line_by_prefix_in_any_case() {
        let lines = tavern();
        let text = lines.pick("tobias", "Tobias, what LIGHTS?", None).unwrap();
        assert!(text.starts_with("Lights, aye."), "{text}");
        // "ferryman" is asked before "ferry": the first line called for wins.
        let text = lines.pick("mira", "the Ferryman", None).unwrap();
        assert!(text.starts_with("Keep your voice down."), "{text}");
    }

    #[test]
    fn said_lines_are_skipped_and_lines_for_any_occasion_come_in_order() {
        let lines = tavern();
        let first = lines.pick("tobias", "Hm.", None).unwrap().to_string();
        assert!(first.starts_with("Storm like this"), "{first}");
        let said = HashSet::from([first]);
        let second = lines.pick("tobias", "Hm.", Some(&said)).unwrap();
        assert!(second.starts_with("You've ink"), "{second}");
        let all: HashSet<String> = lines.of("tobias").iter().map(|l| l.text.clone()).collect();
        assert_eq!(lines.pick("tobias", "lights", Some(&all)), None);
    }

    #[test]
    fn a_malformed_file_is_an_error_with_its_place() {
        let e = ScriptedLines::from_toml("fallback = \"x\"\n[[lines.tobias]]\nwords = [\"a\"]\n")
            .unwrap_err();
        assert!(e.to_string().contains("text"), "{e}");
        let e = ScriptedLines::from_toml("fallback = \"x\"\ncolour = 1\n").unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }
}
