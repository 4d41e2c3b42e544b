//! The long session (issue 9, item 8): 2,000 scripted turns over several scenes and time skips.
//!
//! Wren (the player) talks in the tavern with Mira and Tobias, who always answer; every line is
//! 3–9 words from a Zipf vocabulary of made-up words, as in the turn bench. A thread
//! ("who rang the ferry bell at midnight?") stays open the whole session. Every 100 turns
//! Tobias steps out to the yard and back, which closes the scene (a summary per witness);
//! every 250 turns the story jumps eight hours ahead (a time skip, which closes every open
//! scene). Replies are remembered (the turn's default), so the memories grow all session.
//!
//! Checked on every prompt, in the smoke run too (which plays the same 2,000 turns): it is
//! within its token budget; it carries the open thread; once the speaker has a scene summary,
//! its newest one. Reported: the engine time of a turn around turn 100 and around turn 2,000
//! (the median of the 100 turns before each), and their ratio, which must stay near 1: the
//! turn's cost must not grow with the log.
//!
//! ```sh
//! cargo bench -p rp-benches --bench session 2>&1 | grep RESULT
//! ```

use rp_benches::{Rng, Vocabulary, full_run, report};
use rp_core::scene::SceneOptions;
use rp_core::turn::{
    Generate, GenerateRequest, GenerateResult, NoSink, Purpose, Section, TokenSink, TurnInput,
    TurnOptions,
};
use rp_core::{Engine, EntityId, MemoryKind, Skip};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const TURNS: usize = 2_000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const THREAD: &str = "Who rang the ferry bell at midnight?";
/// Words of the lines (as in the turn bench: made-up words with Zipf frequencies).
const VOCABULARY: usize = 20_000;

const WORLD: &str = r#"
[world]
name = "The Long Night"
now = 0

[[containers]]
id = "tavern"
name = "The Crooked Lantern"
audible_range = 0

[[containers]]
id = "yard"
name = "the yard"
audible_range = 0

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "tavern"
facts = "A traveller with ink-stained fingers."

[[entities]]
id = "mira"
name = "Mira"
container = "tavern"
facts = '''
The innkeeper, watchful and dry.
$respond
'''

[[entities]]
id = "tobias"
name = "Tobias"
container = "tavern"
facts = '''
An old fisherman who talks about lights on the marsh.
$respond
'''
"#;

/// Instant answers of 3–9 words from the vocabulary; a summary is unique (it carries a count),
/// so the bench can find it in later prompts.
struct Instant0 {
    count: AtomicU64,
    words: Vocabulary,
    rng: Mutex<Rng>,
}

#[async_trait::async_trait]
impl Generate for Instant0 {
    async fn generate(
        &self,
        request: &GenerateRequest,
        _sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        let who = request
            .messages
            .first()
            .and_then(|m| m.content.lines().next())
            .unwrap_or("")
            .trim_start_matches("You are ")
            .split(['.', ','])
            .next()
            .unwrap_or("")
            .to_owned();
        let words = {
            let mut rng = self.rng.lock().map_err(|_| "poisoned".to_owned())?;
            self.words.text(&mut rng, 3, 9)
        };
        Ok(GenerateResult::text(match request.purpose {
            Purpose::Summary => format!("{who} remembers scene memory {n}: {words}."),
            _ => format!("{words}."),
        }))
    }
}

fn main() {
    let mut engine = Engine::in_memory("Session", 0).expect("engine");
    engine
        .apply_world_file("session.toml", WORLD)
        .expect("world file");
    let id = |engine: &Engine, name: &str| -> EntityId {
        engine.world().find_entity(name).expect("entity").id
    };
    let (wren, mira, tobias) = (
        id(&engine, "Wren"),
        id(&engine, "Mira"),
        id(&engine, "Tobias"),
    );
    let tavern = engine
        .world()
        .container_by_key("tavern")
        .expect("tavern")
        .id;
    let yard = engine.world().container_by_key("yard").expect("yard").id;
    engine
        .open_thread(THREAD, vec![wren, mira, tobias], 0)
        .expect("thread");
    let generator = Instant0 {
        count: AtomicU64::new(0),
        words: Vocabulary::new(VOCABULARY),
        rng: Mutex::new(Rng::new(7)),
    };
    let words = Vocabulary::new(VOCABULARY);
    let mut rng = Rng::new(11);
    let scenes = SceneOptions::default();
    let mut now = MINUTE;
    let mut times: Vec<Duration> = Vec::with_capacity(TURNS);
    let (mut prompts, mut max_tokens, mut budget, mut skips, mut moves) = (0usize, 0, 0, 0, 0);
    for turn in 1..=TURNS {
        if turn % 250 == 0 {
            now += 8 * HOUR;
            engine
                .time_skip_blocking(Skip::Jump { to: now }, &scenes, &generator)
                .expect("skip");
            skips += 1;
        }
        if turn % 100 == 50 {
            move_to(&mut engine, tobias, yard);
            moves += 1;
        } else if turn % 100 == 0 {
            move_to(&mut engine, tobias, tavern);
        }
        now += MINUTE;
        let text = format!("Mira, Tobias: {}?", words.text(&mut rng, 3, 8));
        let start = Instant::now();
        let outcome = engine
            .run_turn_blocking(
                TurnInput::say(wren, &text, now),
                TurnOptions {
                    outcome_prompts: true,
                    ..TurnOptions::default()
                },
                &generator,
                &mut NoSink,
            )
            .expect("turn");
        times.push(start.elapsed());
        assert!(!outcome.replies.is_empty(), "turn {turn}: nobody answered");
        for prompt in &outcome.prompts {
            prompts += 1;
            max_tokens = max_tokens.max(prompt.tokens);
            budget = prompt.budget_tokens;
            assert!(
                prompt.tokens <= prompt.budget_tokens,
                "turn {turn}: {} tokens over a budget of {}",
                prompt.tokens,
                prompt.budget_tokens
            );
            let text = prompt.text();
            assert!(
                prompt
                    .pieces
                    .iter()
                    .any(|p| p.section == Section::Threads && p.text.contains(THREAD)),
                "turn {turn}: the open thread is missing from the prompt of {}",
                prompt.speaker
            );
            let newest_summary = engine
                .world()
                .always_loaded_of(prompt.speaker)
                .filter(|m| m.kind == MemoryKind::SceneSummary)
                .max_by_key(|m| (m.created, m.id));
            if let Some(summary) = newest_summary {
                assert!(
                    text.contains(&summary.text),
                    "turn {turn}: the newest scene summary of {} is missing: {}",
                    prompt.speaker,
                    summary.text
                );
            }
        }
    }
    let window = |end: usize| {
        let mut w: Vec<Duration> = times[end - 100..end].to_vec();
        w.sort_unstable();
        w[w.len() / 2]
    };
    let (early, late) = (window(100), window(TURNS));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let summaries = engine
        .world()
        .all_memories()
        .filter(|m| m.kind == MemoryKind::SceneSummary)
        .count();
    report(format!(
        "session: {TURNS} turns, {prompts} prompts, {skips} time skips, {moves} departures, \
         {summaries} scene summaries, {} memories, {} events; largest prompt {max_tokens} of \
         {budget} tokens; every prompt carried the open thread and its speaker's newest summary",
        engine.world().all_memories().count(),
        engine.head(),
    ));
    report(format!(
        "session: engine time per turn (median of the 100 turns before): turn 100 {:.3} ms, \
         turn {TURNS} {:.3} ms, ratio {:.2}{}",
        ms(early),
        ms(late),
        ms(late) / ms(early),
        if full_run() {
            ""
        } else {
            " (smoke run: debug build, not a measurement)"
        }
    ));
}

fn move_to(engine: &mut Engine, who: EntityId, to: rp_core::ContainerId) {
    let mut activity = engine.world().entity(who).expect("entity").activity.clone();
    activity.position = Some(rp_core::Position {
        container: to,
        slot: None,
    });
    engine
        .append(vec![rp_core::Event::ActivityChanged {
            entity: who,
            activity,
        }])
        .expect("move");
}
