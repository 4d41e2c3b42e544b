//! [`ScriptedLines`]: what the characters say when no model server is set, as data
//! (`examples/tavern-lines.toml`), and the scripted generator of a turn made from it. Each
//! turn, every character on stage gets the one line of its script that answers what it heard
//! (rp-core's `ScriptedGenerator` then says it, or the fallback, when the engine asks for a
//! reply); the engine still decides who answers, from the fact sheets. A character that speaks
//! first on its own (its drives crossed their threshold during a `/wait`) says the next line of
//! its `initiate` script ([`Initiations`]).

use rp_core::turn::{
    EmbedRequest, Generate, GenerateRequest, GenerateResult, Purpose, ScriptedGenerator, TokenSink,
};
use rp_core::{EntityId, World};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

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
    /// What each character says when it speaks first, on its own, by its world-file key: said
    /// in order, each once per branch, then the fallback.
    #[serde(default)]
    pub initiate: BTreeMap<String, Vec<String>>,
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

    /// The line the character with key `key` says when it speaks first: the first line of its
    /// `initiate` script not in `said`.
    ///
    /// ```
    /// let lines = rp_demo::ScriptedLines::from_toml(
    ///     "fallback = \"{name} sighs.\"\ninitiate.tobias = [\"Quiet night.\", \"Still raining.\"]\n",
    /// )
    /// .unwrap();
    /// let said = std::collections::HashSet::from(["Quiet night.".to_string()]);
    /// assert_eq!(lines.opening("tobias", None), Some("Quiet night."));
    /// assert_eq!(lines.opening("tobias", Some(&said)), Some("Still raining."));
    /// assert_eq!(lines.opening("mira", None), None);
    /// ```
    pub fn opening(&self, key: &str, said: Option<&HashSet<String>>) -> Option<&str> {
        self.initiate
            .get(key)
            .into_iter()
            .flatten()
            .find(|line| said.is_none_or(|s| !s.contains(*line)))
            .map(String::as_str)
    }

    /// The generator of a `/wait` ([`Initiations`]), skipping what each character has `said`
    /// on this branch.
    pub fn initiations(
        &self,
        world: &World,
        said: &BTreeMap<EntityId, HashSet<String>>,
    ) -> Initiations {
        Initiations {
            lines: self.clone(),
            keys: world
                .entities()
                .filter_map(|e| Some((e.id, e.key.clone()?)))
                .collect(),
            state: Mutex::new(Said {
                said: said.clone(),
                last: None,
            }),
            inner: ScriptedGenerator::new(self.fallback.as_str()),
        }
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

/// The scripted generator of a `/wait`, which may run several ticks: when a character speaks
/// first, the next unsaid line of its `initiate` script is scripted for purpose `initiate` just
/// before it is asked for; when one answers, the line of its script that answers what it last
/// heard in the wait (else what it heard before) is scripted for it the same way. What is not
/// scripted gets the fallback.
pub struct Initiations {
    lines: ScriptedLines,
    keys: BTreeMap<EntityId, String>,
    state: Mutex<Said>,
    inner: ScriptedGenerator,
}

struct Said {
    /// What each character has said on this branch.
    said: BTreeMap<EntityId, HashSet<String>>,
    /// The last line said in the wait, and by whom.
    last: Option<(EntityId, String)>,
}

impl Initiations {
    fn lock(&self) -> std::sync::MutexGuard<'_, Said> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Scripts the line `speaker` says for a request of `purpose`, if its script has one.
    fn prepare(&self, purpose: Purpose, speaker: EntityId) {
        let key = self.keys.get(&speaker).map_or("", String::as_str);
        let state = self.lock();
        let said = state.said.get(&speaker);
        match purpose {
            Purpose::Initiate { .. } => {
                if let Some(line) = self.lines.opening(key, said) {
                    self.inner.script_purpose(&purpose, [line]);
                }
            }
            _ => {
                let heard = state
                    .last
                    .as_ref()
                    .filter(|(who, _)| *who != speaker)
                    .map_or("", |(_, text)| text.as_str());
                if let Some(line) = self.lines.pick(key, heard, said) {
                    self.inner.script(speaker, [line]);
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl Generate for Initiations {
    async fn generate(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        // Only lines are scripted; the rest (summaries, reflections, state updates) get the
        // inner generator's answers.
        let speaker = match request.purpose {
            Purpose::Reply { speaker } | Purpose::Initiate { speaker } => speaker,
            _ => return self.inner.generate(request, sink).await,
        };
        self.prepare(request.purpose, speaker);
        let result = self.inner.generate(request, sink).await?;
        let mut state = self.lock();
        state
            .said
            .entry(speaker)
            .or_default()
            .insert(result.text.clone());
        state.last = Some((speaker, result.text.clone()));
        Ok(result)
    }

    async fn embed(&self, request: &EmbedRequest) -> Result<Vec<Vec<f32>>, String> {
        self.inner.embed(request).await
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
        assert_eq!(lines.initiate["tobias"].len(), 4);
        assert_eq!(lines.initiate["mira"].len(), 2);
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
    fn initiations_say_each_speakers_openings_in_order_and_answers_fit_them() {
        use rp_core::turn::{ChatMessage, NoSink, Role, block_on};
        let mut engine = rp_core::Engine::in_memory("tavern", 0).unwrap();
        engine
            .apply_world_file("tavern.toml", include_str!("../../examples/tavern.toml"))
            .unwrap();
        let w = engine.world();
        let (tobias, mira) = (
            w.resolve_entity("tobias").unwrap(),
            w.resolve_entity("mira").unwrap(),
        );
        let lines = tavern();
        let first = lines.initiate["tobias"][0].clone();
        let said = BTreeMap::from([(tobias, HashSet::from([first]))]);
        let g = lines.initiations(w, &said);
        let ask = |purpose: Purpose| {
            let request = GenerateRequest {
                purpose,
                messages: vec![ChatMessage::new(Role::System, "You are Tobias Reed.")],
                params: Default::default(),
                json_schema: None,
                tools: Vec::new(),
            };
            block_on(g.generate(&request, &mut NoSink)).unwrap().text
        };
        // Tobias's first opening was said on this branch: his second comes, then the third.
        assert!(ask(Purpose::Initiate { speaker: tobias }).starts_with("You keep a hand"));
        assert!(ask(Purpose::Initiate { speaker: mira }).starts_with("You've been at my counter"));
        // Mira answers what she heard last in the wait (her own line aside): not a word of it
        // calls for a line, so her first line for any occasion.
        assert!(ask(Purpose::Reply { speaker: mira }).starts_with("Mm. Drink your drink"));
        assert!(ask(Purpose::Initiate { speaker: tobias }).starts_with("Hear that?"));
        assert!(ask(Purpose::Initiate { speaker: tobias }).starts_with("Not much of a talker"));
        // Out of openings: the fallback.
        assert_eq!(
            ask(Purpose::Initiate { speaker: tobias }),
            "Tobias Reed shrugs and lets the rain do the talking."
        );
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
