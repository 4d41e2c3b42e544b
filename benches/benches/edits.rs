//! Edits and swipes (issue 22, item 7; docs/edits.md).
//!
//! A save (a redb file, durable commits) of a 2,000-turn session: Wren speaks, Mira and Tobias
//! always answer (scripted, instantly), every line remembered by its witnesses. Timed:
//!
//! - `delete`: deleting Wren's line 500 turns back, the tail of 1,500 turns re-applied onto the
//!   new history, with its preview first (`Engine::begin_edit`, its preview, then
//!   `Engine::finish_edit`), as a host that shows the preview does. Each sample then switches back to the old history
//!   (kept as a branch) for the next. Target p50 ≤ 100 ms.
//! - `swipe`: the engine's part of a swipe (`Engine::swipe_request`: the prompt built again as
//!   the world was before the reply; `Engine::add_alternative`: recorded) right after a turn,
//!   beside the engine's part of that turn of two replies (`Engine::run_turn_blocking` with an
//!   instant model), halved: a swipe should cost no more than a reply. 20 turns and swipes.
//!
//! ```sh
//! cargo bench -p rp-benches --bench edits 2>&1 | grep RESULT
//! ```

use rp_benches::{Latency, ms, report, scaled};
use rp_core::edit::{EditOptions, OnInvalid};
use rp_core::turn::{NoSink, ScriptedGenerator, TurnInput, TurnOptions};
use rp_core::{Engine, UtteranceId};
use std::time::Instant;

const WORLD: &str = r#"
[world]
name = "The Long Night"
now = 0

[[containers]]
id = "tavern"
name = "The Crooked Lantern"

[[entities]]
id = "wren"
name = "Wren"
player = true
container = "tavern"

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

fn main() {
    let turns: usize = scaled(2_000, 400);
    let back: usize = scaled(500, 100);
    let samples: usize = scaled(9, 3);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut engine = Engine::create(dir.path().join("session.rp"), "Session", 0).expect("save");
    engine
        .apply_world_file("long.toml", WORLD)
        .expect("the world file");
    let wren = engine.world().resolve_entity("wren").expect("wren");
    let generator = ScriptedGenerator::default();
    let options = TurnOptions::default();
    let mut lines: Vec<UtteranceId> = Vec::with_capacity(turns);
    for t in 0..turns {
        let now = (t as i64 + 1) * 30_000;
        let outcome = engine
            .run_turn_blocking(
                TurnInput::say(wren, format!("Line {t}: what of the marsh lights?"), now),
                options.clone(),
                &generator,
                &mut NoSink,
            )
            .expect("a turn");
        lines.push(outcome.input.expect("Wren's line"));
    }
    let events = engine.head();

    // Deleting a line `back` turns back, with the preview first.
    let line = lines[turns - back];
    let drop = EditOptions {
        with_replies: false,
        on_invalid: OnInvalid::Drop,
    };
    let mut previews = Vec::new();
    let mut deletes = Vec::new();
    let mut carried = 0;
    for _ in 0..samples {
        let start = Instant::now();
        let plan = engine.begin_edit(line, None, &drop).expect("the plan");
        previews.push(start.elapsed());
        carried = plan.preview().kept + plan.preview().edited.len();
        let done = engine.finish_edit(plan).expect("the delete");
        deletes.push(start.elapsed());
        engine
            .switch_branch(done.old_branch.as_deref().expect("the old history"))
            .expect("back to the old history");
    }
    let d = Latency::of(&deletes);
    let p = Latency::of(&previews);
    report(format!(
        "edits.delete turns={turns} events={events} line_turns_back={back} events_carried={carried} samples={samples} preview_p50_ms={} preview_and_delete_p50_ms={} max_ms={} target_p50_ms<=100",
        ms(p.p50),
        ms(d.p50),
        ms(d.max),
    ));

    // A swipe's engine time beside a reply's: a turn, then a swipe of its last reply.
    let mut swipes = Vec::new();
    let mut turn_times = Vec::new();
    for t in 0..samples.max(20) {
        let now = engine.world().now() + 30_000;
        let start = Instant::now();
        engine
            .run_turn_blocking(
                TurnInput::say(wren, format!("Swipe {t}: and the ferry?"), now),
                options.clone(),
                &generator,
                &mut NoSink,
            )
            .expect("a turn");
        turn_times.push(start.elapsed());
        let start = Instant::now();
        let swipe = engine.swipe_request(None, &options).expect("the request");
        let result = rp_core::machine::block_on(rp_core::turn::Generate::generate(
            &generator,
            &swipe.request,
            &mut NoSink,
        ))
        .expect("an answer");
        engine
            .add_alternative(swipe.line, &result)
            .expect("recorded");
        swipes.push(start.elapsed());
    }
    let s = Latency::of(&swipes);
    let r = Latency::of(&turn_times);
    report(format!(
        "edits.swipe samples={samples} swipe_p50_ms={} turn_of_two_replies_p50_ms={} swipe_over_one_reply={:.2} target<=1",
        ms(s.p50),
        ms(r.p50),
        s.p50.as_secs_f64() / (r.p50.as_secs_f64() / 2.0),
    ));
}
