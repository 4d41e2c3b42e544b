//! A deterministic generator for tests and the demo: answers from scripts per purpose and
//! speaker, streaming word by word.

use super::{EmbedRequest, Generate, GenerateRequest, GenerateResult, Purpose, TokenSink};
use crate::model::EntityId;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// Answers each request with the next line scripted for its speaker (replies) or its purpose
/// (everything else), then with the fallback. Requests that want JSON get valid JSON instead: an
/// unscripted state-update pass `{"reports": []}`; an unscripted summary of memories each
/// memory's first eight words; an unscripted reflection one insight, "I keep thinking about
/// what happened lately.", citing the first three memories listed; an unscripted
/// classification of an answer's tone `positive` for an answer of eight words or more or with
/// an exclamation, `negative` for one to three words, `neutral` otherwise; an unscripted
/// classification of a stimulus "something happened", confidence 0.8, significance 0.8 when a
/// stimulus was critical or more than three are listed (0.3 otherwise); an unscripted thought "I
/// wonder what that was about.". The fallback may use `{name}` (the speaker's
/// name, read from the prompt's first line "You are NAME…"), `{n}` (a running count) and
/// `{heard}` (the last dialogue line of the prompt). Embeddings are deterministic hashes of
/// the words, so equal texts get equal vectors and shared words raise similarity.
#[derive(Debug)]
pub struct ScriptedGenerator {
    state: Mutex<State>,
    fallback: String,
    model: String,
    dims: usize,
}

#[derive(Debug, Default)]
struct State {
    by_speaker: BTreeMap<EntityId, VecDeque<String>>,
    by_purpose: BTreeMap<&'static str, VecDeque<String>>,
    count: u64,
    requests: Vec<GenerateRequest>,
}

fn purpose_key(p: &Purpose) -> &'static str {
    p.name()
}

impl Default for ScriptedGenerator {
    fn default() -> Self {
        ScriptedGenerator::new("{name} nods. ({n})")
    }
}

impl ScriptedGenerator {
    /// A generator whose unscripted answers are `fallback` (see the type's docs).
    pub fn new(fallback: impl Into<String>) -> ScriptedGenerator {
        ScriptedGenerator {
            state: Mutex::new(State::default()),
            fallback: fallback.into(),
            model: "scripted".into(),
            dims: 64,
        }
    }

    /// Queues lines for `speaker`'s replies, in order.
    pub fn script(&self, speaker: EntityId, lines: impl IntoIterator<Item = impl Into<String>>) {
        let mut s = self.lock();
        s.by_speaker
            .entry(speaker)
            .or_default()
            .extend(lines.into_iter().map(Into::into));
    }

    /// Queues answers for requests of `purpose` (any speaker), in order.
    pub fn script_purpose(
        &self,
        purpose: &Purpose,
        lines: impl IntoIterator<Item = impl Into<String>>,
    ) {
        let mut s = self.lock();
        s.by_purpose
            .entry(purpose_key(purpose))
            .or_default()
            .extend(lines.into_iter().map(Into::into));
    }

    /// Every request answered so far, in order.
    pub fn requests(&self) -> Vec<GenerateRequest> {
        self.lock().requests.clone()
    }

    /// The answer to `request` (and records it), without streaming.
    pub fn answer(&self, request: &GenerateRequest) -> GenerateResult {
        let mut s = self.lock();
        s.count += 1;
        s.requests.push(request.clone());
        let scripted = match request.purpose {
            Purpose::Reply { speaker } => {
                s.by_speaker.get_mut(&speaker).and_then(VecDeque::pop_front)
            }
            _ => None,
        }
        .or_else(|| {
            s.by_purpose
                .get_mut(purpose_key(&request.purpose))
                .and_then(VecDeque::pop_front)
        });
        let text = scripted.unwrap_or_else(|| {
            if request.purpose == Purpose::StateUpdate {
                // Unscripted, nothing changed.
                return r#"{"reports": []}"#.to_owned();
            }
            if let Some(json) = memory_answer(request) {
                return json;
            }
            let system = request.messages.first().map_or("", |m| m.content.as_str());
            let name = system
                .lines()
                .find_map(|l| l.strip_prefix("You are "))
                .map(|l| l.split([',', '.', '(']).next().unwrap_or("").trim())
                .unwrap_or("");
            let heard = request
                .messages
                .iter()
                .flat_map(|m| m.content.lines())
                .rfind(|l| l.contains(": "))
                .unwrap_or("");
            self.fallback
                .replace("{name}", name)
                .replace("{n}", &s.count.to_string())
                .replace("{heard}", heard)
        });
        let prompt_tokens = request
            .messages
            .iter()
            .map(|m| m.content.len().div_ceil(4))
            .sum::<usize>();
        GenerateResult {
            completion_tokens: Some(u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)),
            prompt_tokens: Some(u32::try_from(prompt_tokens).unwrap_or(u32::MAX)),
            model: Some(self.model.clone()),
            text,
            tool_calls: Vec::new(),
        }
    }

    /// Deterministic vectors for `texts`.
    pub fn vectors(&self, texts: &[String]) -> Vec<Vec<f32>> {
        texts.iter().map(|t| hash_vector(t, self.dims)).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A bag-of-words vector: each lower-cased word adds 1 to a hashed dimension.
fn hash_vector(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dims];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        v[(h % dims as u64) as usize] += 1.0;
    }
    v
}

#[async_trait::async_trait]
impl Generate for ScriptedGenerator {
    async fn generate(
        &self,
        request: &GenerateRequest,
        sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        let result = self.answer(request);
        for (i, word) in result.text.split(' ').enumerate() {
            if i > 0 {
                sink.token(&request.purpose, " ");
            }
            sink.token(&request.purpose, word);
        }
        Ok(result)
    }

    async fn embed(&self, request: &EmbedRequest) -> Result<Vec<Vec<f32>>, String> {
        Ok(self.vectors(&request.texts))
    }
}

/// The memories a summary or reflection request lists (`- id N…: text`), as (id, text).
fn listed(request: &GenerateRequest) -> Vec<(u64, String)> {
    let system = request.messages.first().map_or("", |m| m.content.as_str());
    system
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("- id ")?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let (_, text) = rest.split_once(": ")?;
            Some((digits.parse().ok()?, text.to_owned()))
        })
        .collect()
}

/// The unscripted answer to a summary of memories, a reflection or a classification (see
/// [`ScriptedGenerator`]); `None` for any other request.
fn memory_answer(request: &GenerateRequest) -> Option<String> {
    let perceived = request
        .messages
        .last()
        .and_then(|m| m.content.strip_prefix("What you just perceived:\n"))
        .map(|rest| rest.split("\n\n").next().unwrap_or_default());
    match request.purpose {
        Purpose::Summary if request.json_schema.is_some() => {
            let summaries: Vec<serde_json::Value> = listed(request)
                .into_iter()
                .map(|(id, text)| {
                    let words: Vec<&str> = text.split_whitespace().take(8).collect();
                    serde_json::json!({"id": id, "summary": words.join(" ")})
                })
                .collect();
            Some(serde_json::json!({ "summaries": summaries }).to_string())
        }
        Purpose::Reflect { .. } => {
            let sources: Vec<u64> = listed(request).iter().take(3).map(|(id, _)| *id).collect();
            let insights = if sources.is_empty() {
                Vec::new()
            } else {
                vec![serde_json::json!({
                    "text": "I keep thinking about what happened lately.",
                    "sources": sources,
                })]
            };
            Some(serde_json::json!({ "insights": insights }).to_string())
        }
        Purpose::Classify { .. } if perceived.is_some() => {
            // A stimulus: what it means is unknown; it matters when it was critical or many.
            let perceived = perceived.unwrap_or_default();
            let matters = perceived.contains("(critical)") || perceived.lines().count() > 3;
            Some(
                serde_json::json!({
                    "intent": "something happened",
                    "sentiment": "neutral",
                    "confidence": 0.8,
                    "significance": if matters { 0.8 } else { 0.3 },
                })
                .to_string(),
            )
        }
        Purpose::Think { .. } => {
            Some(serde_json::json!({ "thought": "I wonder what that was about." }).to_string())
        }
        Purpose::Classify { .. } => {
            // The answer's tone from its words: several words or an exclamation are warm, one
            // to three are curt, the rest neutral.
            let answer = request
                .messages
                .last()
                .and_then(|m| m.content.split(" answered: \"").nth(1))
                .and_then(|rest| rest.split("\"\n").next())
                .unwrap_or("");
            let words = answer.split_whitespace().count();
            let sentiment = if answer.contains('!') || words >= 8 {
                "positive"
            } else if words <= 3 {
                "negative"
            } else {
                "neutral"
            };
            Some(serde_json::json!({ "sentiment": sentiment }).to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::{ChatMessage, Role};

    fn request(purpose: Purpose, system: &str) -> GenerateRequest {
        GenerateRequest {
            purpose,
            messages: vec![
                ChatMessage::new(Role::System, system),
                ChatMessage::new(Role::User, "What does Mira say?"),
            ],
            params: Default::default(),
            json_schema: None,
            tools: Vec::new(),
        }
    }

    #[test]
    fn scripts_answer_per_speaker_then_per_purpose_then_the_fallback() {
        let g = ScriptedGenerator::new("{name} heard \"{heard}\" ({n})");
        let mira = EntityId(7);
        g.script(mira, ["Evening."]);
        g.script_purpose(&Purpose::Summary, ["They met at the bar."]);
        g.script_purpose(&Purpose::Reply { speaker: mira }, ["Anyone's reply."]);
        let reply = request(
            Purpose::Reply { speaker: mira },
            "You are Mira Holt, a character.\nWren: A cider.",
        );
        assert_eq!(g.answer(&reply).text, "Evening.");
        assert_eq!(g.answer(&reply).text, "Anyone's reply.");
        assert_eq!(
            g.answer(&reply).text,
            "Mira Holt heard \"Wren: A cider.\" (3)"
        );
        let summary = request(Purpose::Summary, "");
        assert_eq!(g.answer(&summary).text, "They met at the bar.");
        assert_eq!(g.answer(&summary).model.as_deref(), Some("scripted"));
        assert_eq!(g.requests().len(), 5);
    }

    #[test]
    fn vectors_are_deterministic_and_share_words() {
        let g = ScriptedGenerator::default();
        let v = g.vectors(&["the dark ale".into(), "The Dark ale".into(), "rain".into()]);
        assert_eq!(v[0], v[1]);
        assert_ne!(v[0], v[2]);
        assert_eq!(v[0].len(), 64);
    }
}
