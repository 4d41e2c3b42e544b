//! The cost of the C ABI (issue 7, item 6): what a C or C++ host pays for going through
//! `librp` rather than calling rp-core from Rust, measured in the same process and run.
//!
//! rp-ffi's library (`rp`) is linked as an rlib, so `rp::rp_engine_head` and the others are
//! called here exactly as C calls them: `extern "C"` functions taking a handle, out-parameters
//! and JSON strings, each running its panic boundary, handle lookup and argument checks.
//!
//! - **No-op.** `rp_engine_head(engine, &mut out)` against `Engine::head()` on an equivalent
//!   engine, in batches of millions of calls, the contenders alternating batch by batch (the
//!   first of each round rotates). Also `Mutex<Engine>` lock + `head()`, what a Rust host
//!   that shares its engine between threads pays (the C handle is shareable). Target:
//!   C − Rust ≤ 60 ns per call.
//! - **A scripted turn.** Two in-memory engines loaded from `examples/tavern.toml`, one behind
//!   a C handle (`rp_engine_in_memory` + `rp_engine_load_world_file`), one in Rust
//!   (`Engine::in_memory` + `load_world_file`): same name and clock, so the same seed and the
//!   same decisions. Each round Wren (the player) says the same line at the same advancing
//!   `now` to both: through `rp_engine_run_turn` with an `extern "C"` generate callback that
//!   answers a fixed `{"text": ...}` (the outcome string released with `rp_string_free`), and
//!   through `Engine::run_turn_blocking` with a `Generate` that answers the same text. Default
//!   options on both (tools offered, dialogue remembered; the C outcome without the prompts,
//!   which the Rust outcome holds as moved values). C and Rust alternate turn by turn,
//!   so both worlds grow alike. Target: overhead ≤ 10 % at p50. Then, after the comparison,
//!   more turns on the Rust engine alone in the poll form (`begin_turn_with`, `step`,
//!   `provide`, `finish`, each call timed), and the JSON work that the C side does and the
//!   Rust side does not, timed alone on the last of them: where the difference goes.
//!
//! Wall and thread CPU time of each measurement are reported (the machine is shared).
//! `cargo test --benches` runs a small version as a smoke test.

use rp::{
    rp_engine, rp_engine_entity_id, rp_engine_free, rp_engine_head, rp_engine_in_memory,
    rp_engine_load_world_file, rp_engine_run_turn, rp_last_error, rp_result, rp_string_free,
    rp_token_sink, rp_version,
};
use rp_benches::{Elapsed, Latency, Stopwatch, loadavg, scaled};
use rp_core::turn::{
    Generate, GenerateRequest, GenerateResult, NoSink, Step, TokenSink, TurnInput, TurnOptions,
};
use rp_core::{Engine, EntityId, Millis};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The demo world, loaded by both engines.
const WORLD_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tavern.toml");
/// Both engines' name and starting clock: equal, so their seeds (and decisions) are equal.
const NAME: &str = "The Crooked Lantern";
const START: Millis = 0;
/// The player's line each round: it names two characters.
const LINE: &str = "Tobias, Mira, what news tonight?";
/// The model's answer to every request, as text (Rust) and as the result JSON (C).
const REPLY: &str = "Lights on the marsh again, and not a soul believes me.";
const REPLY_JSON: &str = r#"{"text": "Lights on the marsh again, and not a soul believes me."}"#;
/// How far the clock advances between rounds.
const MINUTE: Millis = 60_000;

fn report(line: impl AsRef<str>) {
    println!("RESULT ffi: {}", line.as_ref());
}

fn ns(d: Duration, per: u64) -> f64 {
    d.as_secs_f64() * 1e9 / per as f64
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Panics with `rp_last_error()` unless `code` is `RP_RESULT_OK`.
fn check(code: rp_result, call: &str) {
    if code != rp_result::Ok {
        // SAFETY: rp_last_error returns a NUL-terminated string valid until the next call.
        let message = unsafe { CStr::from_ptr(rp_last_error()) }.to_string_lossy();
        panic!("{call} failed with {code:?}: {message}");
    }
}

/// An engine behind a C handle, as a C host makes it.
fn c_engine() -> *mut rp_engine {
    let mut engine: *mut rp_engine = std::ptr::null_mut();
    let mut loaded = 0_usize;
    // SAFETY: the strings point to their lengths of bytes; the out-parameters are writable.
    unsafe {
        check(
            rp_engine_in_memory(NAME.as_ptr().cast(), NAME.len(), START, &mut engine),
            "rp_engine_in_memory",
        );
        check(
            rp_engine_load_world_file(
                engine,
                WORLD_FILE.as_ptr().cast(),
                WORLD_FILE.len(),
                &mut loaded,
            ),
            "rp_engine_load_world_file",
        );
    }
    assert!(loaded > 0, "the world file loaded no events");
    engine
}

/// The same engine in Rust.
fn rust_engine() -> Engine {
    let mut engine = Engine::in_memory(NAME, START).expect("engine");
    engine.load_world_file(WORLD_FILE).expect("world file");
    engine
}

fn c_entity_id(engine: *mut rp_engine, name: &str) -> u64 {
    let mut id = 0;
    // SAFETY: `name` points to its length of bytes; `id` is writable.
    check(
        unsafe { rp_engine_entity_id(engine, name.as_ptr().cast(), name.len(), &mut id) },
        "rp_engine_entity_id",
    );
    id
}

fn c_head(engine: *mut rp_engine) -> u64 {
    let mut head = 0;
    // SAFETY: `head` is writable.
    check(
        unsafe { rp_engine_head(engine, &mut head) },
        "rp_engine_head",
    );
    head
}

// ---------------------------------------------------------------------------------------------
// The no-op.

fn batch_c(engine: *mut rp_engine, calls: u64) -> Elapsed {
    let mut head = 0_u64;
    let sw = Stopwatch::start();
    for _ in 0..calls {
        // SAFETY: a live handle and a writable out-parameter.
        let code = unsafe { rp_engine_head(black_box(engine), black_box(&mut head)) };
        black_box(code);
    }
    let elapsed = sw.stop();
    black_box(head);
    elapsed
}

fn batch_rust(engine: &Engine, calls: u64) -> Elapsed {
    let sw = Stopwatch::start();
    for _ in 0..calls {
        black_box(black_box(engine).head());
    }
    sw.stop()
}

fn batch_mutex(engine: &Mutex<Engine>, calls: u64) -> Elapsed {
    let sw = Stopwatch::start();
    for _ in 0..calls {
        black_box(black_box(engine).lock().expect("not poisoned").head());
    }
    sw.stop()
}

fn no_op() {
    let c = c_engine();
    let rust = rust_engine();
    let shared = Mutex::new(rust_engine());
    assert_eq!(c_head(c), rust.head(), "the engines differ");

    let rounds = scaled(30, 3);
    let calls: u64 = scaled(4_000_000, 20_000);
    // Warm up every path (and the CPU's clock).
    batch_c(c, calls / 4 + 1);
    batch_rust(&rust, calls / 4 + 1);
    batch_mutex(&shared, calls / 4 + 1);

    let (mut c_wall, mut c_cpu) = (Vec::new(), Vec::new());
    let (mut r_wall, mut r_cpu) = (Vec::new(), Vec::new());
    let (mut m_wall, mut m_cpu) = (Vec::new(), Vec::new());
    let (mut d_wall, mut d_cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let mut times = [Elapsed::default(); 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            times[which] = match which {
                0 => batch_c(c, calls),
                1 => batch_rust(&rust, calls),
                _ => batch_mutex(&shared, calls),
            };
        }
        let [tc, tr, tm] = times;
        c_wall.push(ns(tc.wall, calls));
        c_cpu.push(ns(tc.cpu, calls));
        r_wall.push(ns(tr.wall, calls));
        r_cpu.push(ns(tr.cpu, calls));
        m_wall.push(ns(tm.wall, calls));
        m_cpu.push(ns(tm.cpu, calls));
        d_wall.push(ns(tc.wall, calls) - ns(tr.wall, calls));
        d_cpu.push(ns(tc.cpu, calls) - ns(tr.cpu, calls));
    }
    let (cw, cc) = (median(&mut c_wall), median(&mut c_cpu));
    let (rw, rc) = (median(&mut r_wall), median(&mut r_cpu));
    let (mw, mc) = (median(&mut m_wall), median(&mut m_cpu));
    let (dw, dc) = (median(&mut d_wall), median(&mut d_cpu));
    report(format!(
        "no-op: {rounds} rounds of {calls} calls each, medians of the rounds (wall / thread CPU)"
    ));
    report(format!(
        "no-op: c rp_engine_head      {cw:7.2} / {cc:7.2} ns/call"
    ));
    report(format!(
        "no-op: rust Engine::head     {rw:7.2} / {rc:7.2} ns/call"
    ));
    report(format!(
        "no-op: rust Mutex<Engine> lock + head {mw:7.2} / {mc:7.2} ns/call"
    ));
    report(format!(
        "no-op: c - rust (per round, median) {dw:+.2} / {dc:+.2} ns/call | target <= 60 ns: {}",
        if dw <= 60.0 { "met" } else { "missed" }
    ));
    report(format!(
        "no-op: c - rust Mutex<Engine> {:+.2} / {:+.2} ns/call",
        cw - mw,
        cc - mc
    ));
    // SAFETY: a live handle, freed once.
    check(unsafe { rp_engine_free(c) }, "rp_engine_free");
}

// ---------------------------------------------------------------------------------------------
// The turn.

/// The C host's model: answers every request with `REPLY_JSON`, counting the calls in the
/// `AtomicUsize` that `user_data` points to.
unsafe extern "C" fn c_generate(
    user_data: *mut c_void,
    request_json: *const c_char,
    request_json_len: usize,
    _sink: *mut rp_token_sink,
    out_result_json: *mut *const c_char,
    out_result_len: *mut usize,
) -> c_int {
    black_box((request_json, request_json_len));
    // SAFETY: `user_data` is the counter `c_turn` passes, alive for the whole turn.
    let calls = unsafe { &*user_data.cast::<AtomicUsize>() };
    calls.fetch_add(1, Ordering::Relaxed);
    // SAFETY: rp makes both out-parameters writable. A string constant stays valid after the
    // callback returns, as rp_generate_fn requires.
    unsafe {
        out_result_json.write(REPLY_JSON.as_ptr().cast());
        out_result_len.write(REPLY_JSON.len());
    }
    rp_result::Ok as c_int
}

/// The Rust host's model: the same answer.
struct Fixed {
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Generate for Fixed {
    async fn generate(
        &self,
        request: &GenerateRequest,
        _sink: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        black_box(request);
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(GenerateResult {
            text: REPLY.to_owned(),
            ..GenerateResult::default()
        })
    }
}

/// One turn through the C ABI; its time, and the number of replies in its outcome.
fn c_turn(engine: *mut rp_engine, input_json: &str, calls: &AtomicUsize) -> (Elapsed, usize) {
    let mut outcome: *mut c_char = std::ptr::null_mut();
    let sw = Stopwatch::start();
    // SAFETY: the input points to its length of bytes, NULL options with length 0 are the
    // defaults, the callback follows rp_generate_fn, `calls` outlives the call, `outcome` is
    // writable; the outcome string goes back to rp_string_free.
    let code = unsafe {
        rp_engine_run_turn(
            engine,
            input_json.as_ptr().cast(),
            input_json.len(),
            std::ptr::null(),
            0,
            Some(c_generate),
            None,
            std::ptr::from_ref(calls).cast_mut().cast(),
            &mut outcome,
        )
    };
    let call = sw.stop();
    check(code, "rp_engine_run_turn");
    // The host reads the outcome (not timed: how it parses JSON is its own business), then
    // releases it (timed, as Rust's drop of the outcome is).
    // SAFETY: rp wrote a NUL-terminated string on success.
    let json = unsafe { CStr::from_ptr(outcome) }.to_bytes();
    let replies =
        serde_json::from_slice::<serde_json::Value>(json).expect("outcome JSON")["replies"]
            .as_array()
            .expect("replies")
            .len();
    let sw = Stopwatch::start();
    // SAFETY: a string rp handed out, released once.
    unsafe { rp_string_free(outcome) };
    let free = sw.stop();
    let elapsed = Elapsed {
        wall: call.wall + free.wall,
        cpu: call.cpu + free.cpu,
    };
    (elapsed, replies)
}

/// The same turn in Rust.
fn rust_turn(engine: &mut Engine, input: TurnInput, generator: &Fixed) -> (Elapsed, usize) {
    let sw = Stopwatch::start();
    let outcome = engine
        .run_turn_blocking(input, TurnOptions::default(), generator, &mut NoSink)
        .expect("turn");
    let call = sw.stop();
    let replies = outcome.replies.len();
    // Timed apart, as the C side's rp_string_free is (so both pay for two stopwatches).
    let sw = Stopwatch::start();
    drop(outcome);
    let free = sw.stop();
    let elapsed = Elapsed {
        wall: call.wall + free.wall,
        cpu: call.cpu + free.cpu,
    };
    (elapsed, replies)
}

fn pct(c: Duration, rust: Duration) -> f64 {
    (c.as_secs_f64() / rust.as_secs_f64() - 1.0) * 100.0
}

fn turn() {
    let c = c_engine();
    let wren = EntityId(c_entity_id(c, "Wren"));
    let on_engine = |body: &mut dyn FnMut(&mut Engine)| {
        rp::bench::with_engine(c, |e| body(e)).expect("a live engine");
    };
    on_engine(&mut |e| {
        assert!(
            e.world().entity(wren).expect("Wren").host_controlled,
            "Wren is the player"
        );
    });
    let c_calls = AtomicUsize::new(0);
    let generator = Fixed {
        calls: AtomicUsize::new(0),
    };

    let warmup = scaled(20, 2);
    let rounds = scaled(500, 6);
    let (mut c_wall, mut c_cpu, mut r_wall, mut r_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut c_replies, mut r_replies) = (0, 0);
    let mut now = START;
    for round in 0..warmup + rounds {
        now += MINUTE;
        // The two turns of a round are said a minute apart, on the same world.
        let first = TurnInput::say(wren, LINE, now);
        now += MINUTE;
        let second = TurnInput::say(wren, LINE, now);
        let (c_input, rust_input) = if round % 2 == 0 {
            (first, second)
        } else {
            (second, first)
        };
        let input_json = serde_json::to_string(&c_input).expect("input JSON");
        let rust = |input: TurnInput| {
            let mut out = None;
            on_engine(&mut |e| out = Some(rust_turn(e, input.clone(), &generator)));
            out.expect("the turn ran")
        };
        let (tc, nc, tr, nr) = if round % 2 == 0 {
            let (tc, nc) = c_turn(c, &input_json, &c_calls);
            let (tr, nr) = rust(rust_input);
            (tc, nc, tr, nr)
        } else {
            let (tr, nr) = rust(rust_input);
            let (tc, nc) = c_turn(c, &input_json, &c_calls);
            (tc, nc, tr, nr)
        };
        assert_eq!(
            nc, nr,
            "round {round}: C and Rust gave different numbers of replies"
        );
        if round + 1 == warmup {
            c_calls.store(0, Ordering::Relaxed);
            generator.calls.store(0, Ordering::Relaxed);
        }
        if round >= warmup {
            c_wall.push(tc.wall);
            c_cpu.push(tc.cpu);
            r_wall.push(tr.wall);
            r_cpu.push(tr.cpu);
            c_replies += nc;
            r_replies += nr;
        }
    }
    let (cw, cc) = (Latency::of(&c_wall), Latency::of(&c_cpu));
    let (rw, rc) = (Latency::of(&r_wall), Latency::of(&r_cpu));
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    report(format!(
        "turn: {rounds} rounds after {warmup} warm-up, \"{LINE}\" said by Wren, default options; \
         replies C {c_replies}, Rust {r_replies} (generate calls C {}, Rust {}); one world, \
         head {} after both",
        c_calls.load(Ordering::Relaxed),
        generator.calls.load(Ordering::Relaxed),
        c_head(c)
    ));
    report(format!(
        "turn: c rp_engine_run_turn        wall p50 {} p99 {} ms | CPU p50 {} p99 {} ms",
        ms(cw.p50),
        ms(cw.p99),
        ms(cc.p50),
        ms(cc.p99)
    ));
    report(format!(
        "turn: rust run_turn_blocking      wall p50 {} p99 {} ms | CPU p50 {} p99 {} ms",
        ms(rw.p50),
        ms(rw.p99),
        ms(rc.p50),
        ms(rc.p99)
    ));
    let overhead = pct(cw.p50, rw.p50);
    report(format!(
        "turn: overhead at p50: wall {overhead:+.2} % ({:+.1} us), CPU {:+.2} % ({:+.1} us) | \
         target <= 10 %: {}",
        (cw.p50.as_secs_f64() - rw.p50.as_secs_f64()) * 1e6,
        pct(cc.p50, rc.p50),
        (cc.p50.as_secs_f64() - rc.p50.as_secs_f64()) * 1e6,
        if overhead <= 10.0 { "met" } else { "missed" }
    ));
    on_engine(&mut |e| breakdown(e, wren, now + MINUTE));
    // SAFETY: a live handle, freed once.
    check(unsafe { rp_engine_free(c) }, "rp_engine_free");
}

/// Where a turn's time goes, on the Rust engine only, after the comparison: more turns in the
/// poll form with each call timed; then the JSON work `rp_engine_run_turn` does that the Rust
/// call does not, timed alone on the last turn's request and outcome: the input read from
/// JSON, each request written as JSON into a C string, the callback's result read back, the
/// outcome written as JSON into a C string.
fn breakdown(engine: &mut Engine, wren: EntityId, mut now: Millis) {
    let turns = scaled(100, 2);
    let phases = ["begin_turn_with", "step", "provide", "finish"];
    let mut cpu: [Vec<Duration>; 4] = Default::default();
    let mut input_json = String::new();
    let mut requests = Vec::new();
    let mut outcome = None;
    for _ in 0..turns {
        now += MINUTE;
        let input = TurnInput::say(wren, LINE, now);
        input_json = serde_json::to_string(&input).expect("input JSON");
        requests.clear();
        let mut spent = [Duration::ZERO; 4];
        let sw = Stopwatch::start();
        // The prompts stay in the outcome, so writing it can be timed with them too.
        let mut turn = engine
            .begin_turn_with(
                input,
                TurnOptions {
                    outcome_prompts: true,
                    ..TurnOptions::default()
                },
            )
            .expect("turn");
        spent[0] += sw.stop().cpu;
        loop {
            let sw = Stopwatch::start();
            let step = turn.step().expect("step");
            spent[1] += sw.stop().cpu;
            match step {
                Step::Generate(request) => {
                    requests.push(request);
                    let result = GenerateResult::from_json(REPLY_JSON).expect("result");
                    let sw = Stopwatch::start();
                    turn.provide(result).expect("provide");
                    spent[2] += sw.stop().cpu;
                }
                Step::Done => break,
                other => panic!("unexpected step {other:?}"),
            }
        }
        let sw = Stopwatch::start();
        outcome = Some(turn.finish().expect("finish"));
        spent[3] += sw.stop().cpu;
        for (samples, d) in cpu.iter_mut().zip(spent) {
            samples.push(d);
        }
    }
    let outcome = outcome.expect("a turn ran");
    let parts: Vec<String> = phases
        .iter()
        .zip(&cpu)
        .map(|(name, samples)| {
            format!("{name} {:.1}", Latency::of(samples).p50.as_secs_f64() * 1e6)
        })
        .collect();
    report(format!(
        "turn: the Rust turn's calls in the poll form (thread CPU per turn, medians of {turns} \
         more turns, us): {}",
        parts.join(", ")
    ));

    let repeats = scaled(200, 3);
    // Each sample runs the work 50 times: reading the thread's CPU clock is a system call
    // of about a microsecond here, as long as the work itself.
    const PER_SAMPLE: u32 = 50;
    let time = |f: &dyn Fn()| {
        let mut samples: Vec<Duration> = (0..repeats)
            .map(|_| {
                let sw = Stopwatch::start();
                for _ in 0..PER_SAMPLE {
                    f();
                }
                sw.stop().cpu / PER_SAMPLE
            })
            .collect();
        samples.sort_unstable();
        samples[samples.len() / 2].as_secs_f64() * 1e6
    };
    let read_input = time(&|| {
        black_box(TurnInput::from_json(black_box(&input_json)).expect("input"));
    });
    let write_requests = time(&|| {
        for request in &requests {
            black_box(rp::bench::request_c_json(black_box(request)));
        }
    });
    let read_results = time(&|| {
        for _ in &requests {
            black_box(GenerateResult::from_json(black_box(REPLY_JSON)).expect("result"));
        }
    });
    // By default the C outcome leaves the prompts out ("outcome_prompts": false).
    let mut without_prompts = outcome.clone();
    without_prompts.prompts.clear();
    let write = |outcome: &rp_core::turn::TurnOutcome| {
        time(&|| {
            black_box(rp::bench::outcome_c_json(black_box(outcome)));
        })
    };
    let write_outcome = write(&without_prompts);
    let write_with_prompts = write(&outcome);
    let request_bytes: usize = requests
        .iter()
        .map(|r| serde_json::to_string(r).expect("request JSON").len())
        .sum();
    let bytes = |outcome| serde_json::to_string(outcome).expect("outcome JSON").len();
    report(format!(
        "turn: the C side's JSON, timed alone (median thread CPU of {repeats} samples of {PER_SAMPLE} runs): input read \
         {read_input:.1} us; {} request(s) written, {request_bytes} bytes, {write_requests:.1} us; \
         result(s) read {read_results:.1} us; outcome written, {} bytes, {write_outcome:.1} us; \
         sum {:.1} us (the outcome with \"outcome_prompts\": {} bytes, {write_with_prompts:.1} us)",
        requests.len(),
        bytes(&without_prompts),
        read_input + write_requests + read_results + write_outcome,
        bytes(&outcome),
    ));
}

fn main() {
    // SAFETY: rp_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(rp_version()) }.to_string_lossy();
    report(format!(
        "rp_version() = {version}; load average before {}",
        loadavg()
    ));
    no_op();
    turn();
    report(format!("load average after {}", loadavg()));
}
