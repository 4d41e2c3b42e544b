//! The machines' one contract (`rp_core::machine`) and `rp_core::job::Job`, which holds any of
//! them: every machine is driven by the same calls; a failed generation ends each the way the
//! contract says (a query is recorded as failed, the others commit nothing); a job finished
//! too early goes on, a finished one refuses every call; `Job::run` leaves a job whose model
//! failed where it was, except a query, which it records as failed.

use async_trait::async_trait;
use rp_core::job::{Job, JobKind, JobOutcome};
use rp_core::machine::{
    EmbedRequest, Generate, GenerateRequest, GenerateResult, Machine, NoSink, Purpose, Step,
    TokenSink, block_on,
};
use rp_core::query::{QueryInput, QueryMachine};
use rp_core::scene::SceneOptions;
use rp_core::turn::{ScriptedGenerator, TurnInput, TurnMachine, TurnOptions};
use rp_core::{Engine, EntityId, ErrorKind, Skip};

const TAVERN: &str = include_str!("../../examples/tavern.toml");

struct Tavern {
    engine: Engine,
    wren: EntityId,
}

fn tavern() -> Tavern {
    let mut engine = Engine::in_memory("jobs", 0).unwrap();
    engine.apply_world_file("tavern.toml", TAVERN).unwrap();
    let wren = engine.world().resolve_entity("wren").unwrap();
    Tavern { engine, wren }
}

/// A turn in the booth, so a scene is open with lines in it.
fn talk(t: &mut Tavern, now: i64) {
    let g = ScriptedGenerator::new("Lights on the marsh.");
    let tobias = t.engine.world().resolve_entity("tobias").unwrap();
    let input = TurnInput::say(t.wren, "Tobias, what did you see?", now);
    t.engine
        .run_turn_blocking(input, TurnOptions::default(), &g, &mut NoSink)
        .unwrap();
    assert!(t.engine.world().entity(tobias).is_some());
}

fn query(t: &mut Tavern, now: i64) -> QueryMachine {
    QueryMachine::begin(
        &mut t.engine,
        QueryInput {
            text: "Who runs the Crooked Lantern?".into(),
            asked_as: None,
            now,
            config: Default::default(),
        },
    )
    .unwrap()
}

/// Drives `job` with the same calls whatever it holds, answering generations with `answer`.
fn drive(engine: &mut Engine, job: &mut Job, answer: &dyn Fn(&GenerateRequest) -> String) {
    loop {
        match job.step(engine).unwrap() {
            Step::Generate(request) => job
                .provide(engine, GenerateResult::text(answer(&request)))
                .unwrap(),
            Step::Embed(request) => {
                let vectors = ScriptedGenerator::default().vectors(&request.texts);
                job.provide_embeddings(engine, vectors).unwrap();
            }
            Step::Act(_) => job.provide_action(engine, Err("no".into())).unwrap(),
            Step::Done => return,
        }
    }
}

fn summary_or_line(request: &GenerateRequest) -> String {
    match request.purpose {
        Purpose::Summary => "We talked about the lights.".into(),
        Purpose::Query => serde_json::json!({
            "type": "answer", "content": "Mira runs it.", "confidence": "high",
            "sources": [], "suggested_follow_ups": []
        })
        .to_string(),
        _ => "Aye.".into(),
    }
}

#[test]
fn every_machine_is_driven_by_the_same_calls() {
    let mut t = tavern();
    talk(&mut t, 1_000);
    let skip_to = 8 * 3_600_000;
    let turn = TurnMachine::begin(
        &mut t.engine,
        TurnInput::say(t.wren, "Mira, a cider.", 2_000),
        TurnOptions::default(),
    )
    .unwrap();
    let mut jobs = vec![Job::from(turn)];
    for kind in [
        JobKind::Turn,
        JobKind::SceneClose,
        JobKind::TimeSkip,
        JobKind::Query,
        JobKind::Tick,
    ] {
        let mut job = match kind {
            JobKind::Turn => jobs.pop().unwrap(),
            JobKind::SceneClose => {
                let booth = t.engine.world().resolve_container("booth").unwrap();
                Job::from(
                    t.engine
                        .begin_close_current_scene(booth, 3_000, &SceneOptions::default())
                        .unwrap(),
                )
            }
            JobKind::TimeSkip => Job::from(
                t.engine
                    .begin_time_skip(Skip::Jump { to: skip_to }, &SceneOptions::default())
                    .unwrap(),
            ),
            JobKind::Query => Job::from(query(&mut t, skip_to + 1)),
            JobKind::Tick => {
                // A crash wakes Mira's attention: her inbox is due at once.
                let mira = t.engine.world().resolve_entity("mira").unwrap();
                t.engine
                    .notify(
                        mira,
                        "sound",
                        rp_core::Priority::Critical,
                        "a crash",
                        skip_to + 2,
                    )
                    .unwrap();
                Job::from(
                    t.engine
                        .begin_tick(skip_to + 2, rp_core::tick::TickOptions::default())
                        .unwrap(),
                )
            }
        };
        assert_eq!(job.kind(), kind);
        let head = t.engine.head();
        let progress = job.progress(&mut t.engine).unwrap();
        assert_eq!(progress["kind"], kind.name());
        drive(&mut t.engine, &mut job, &summary_or_line);
        let outcome = job.finish(&mut t.engine).unwrap();
        assert!(job.is_over());
        if kind == JobKind::Tick {
            // A tick commits its arithmetic when it begins: here, Mira's inbox processed.
            let JobOutcome::Tick(tick) = &outcome else {
                panic!("a tick's outcome")
            };
            assert_eq!(tick.changes.len(), 1);
            assert_eq!(tick.changes[0].processed.len(), 1);
        } else {
            assert!(t.engine.head() > head, "{kind:?} committed");
        }
        let seq = match &outcome {
            JobOutcome::Turn(o) => o.seq,
            JobOutcome::SceneClose(o) => o.seq,
            JobOutcome::TimeSkip(o) => o.seq,
            JobOutcome::Query(o) => o.seq,
            JobOutcome::Tick(o) => o.seq,
        };
        assert_eq!(seq, t.engine.head());
        // The outcome's JSON is its machine's, unwrapped.
        assert_eq!(serde_json::to_value(&outcome).unwrap()["seq"], seq);
        let e = job.step(&mut t.engine).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert!(e.to_string().contains("is over"), "{e}");
    }
}

#[test]
fn a_job_finished_too_early_goes_on() {
    let mut t = tavern();
    talk(&mut t, 1_000);
    let booth = t.engine.world().resolve_container("booth").unwrap();
    let close = t
        .engine
        .begin_close_current_scene(booth, 2_000, &SceneOptions::default())
        .unwrap();
    let mut job = Job::from(close);
    let e = job.finish(&mut t.engine).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains("the job is not done"), "{e}");
    assert!(!job.is_over());
    drive(&mut t.engine, &mut job, &summary_or_line);
    job.finish(&mut t.engine).unwrap();
}

#[test]
fn a_failed_generation_ends_each_machine_as_the_contract_says() {
    let mut t = tavern();
    talk(&mut t, 1_000);
    let booth = t.engine.world().resolve_container("booth").unwrap();

    // A scene close and a time skip commit nothing and say why.
    let close = t
        .engine
        .begin_close_current_scene(booth, 2_000, &SceneOptions::default())
        .unwrap();
    let skip = t
        .engine
        .begin_time_skip(Skip::Jump { to: 3_000_000 }, &SceneOptions::default())
        .unwrap();
    for mut job in [Job::from(close), Job::from(skip)] {
        let head = t.engine.head();
        assert!(matches!(
            job.step(&mut t.engine).unwrap(),
            Step::Generate(_)
        ));
        job.fail(&mut t.engine, "the model is down").unwrap();
        assert_eq!(job.step(&mut t.engine).unwrap(), Step::Done);
        let e = job.fail(&mut t.engine, "again").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
        let e = job
            .provide(&mut t.engine, GenerateResult::text("late"))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
        let e = job.finish(&mut t.engine).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Generation);
        assert!(e.to_string().contains("the model is down"), "{e}");
        assert_eq!(t.engine.head(), head, "nothing committed");
    }
    assert!(
        t.engine.world().current_scene(booth).is_some(),
        "still open"
    );

    // A turn keeps its input and nothing else.
    let mut turn = TurnMachine::begin(
        &mut t.engine,
        TurnInput::say(t.wren, "Tobias, again?", 4_000),
        TurnOptions::default(),
    )
    .unwrap();
    let head = t.engine.head();
    assert!(matches!(
        turn.step(&mut t.engine).unwrap(),
        Step::Generate(_)
    ));
    Machine::fail(&mut turn, &mut t.engine, "the model is down").unwrap();
    assert_eq!(turn.step(&mut t.engine).unwrap(), Step::Done);
    let e = turn.finish(&mut t.engine).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert_eq!(t.engine.head(), head, "the input stays, nothing more");

    // A query is recorded as failed.
    let mut job = Job::from(query(&mut t, 5_000));
    let head = t.engine.head();
    job.fail(&mut t.engine, "the model is down").unwrap();
    let JobOutcome::Query(outcome) = job.finish(&mut t.engine).unwrap() else {
        panic!("a query's outcome");
    };
    assert_eq!(outcome.query.error.as_deref(), Some("the model is down"));
    assert_eq!(t.engine.head(), head + 2, "asked and failed");
}

/// A model that fails every request.
struct Down;

#[async_trait]
impl Generate for Down {
    async fn generate(
        &self,
        _: &GenerateRequest,
        _: &mut dyn TokenSink,
    ) -> Result<GenerateResult, String> {
        Err("connection refused".into())
    }

    async fn embed(&self, _: &EmbedRequest) -> Result<Vec<Vec<f32>>, String> {
        Err("connection refused".into())
    }
}

#[test]
fn a_run_whose_model_fails_leaves_the_job_where_it_was_but_records_a_query() {
    let mut t = tavern();
    talk(&mut t, 1_000);
    let booth = t.engine.world().resolve_container("booth").unwrap();
    let close = t
        .engine
        .begin_close_current_scene(booth, 2_000, &SceneOptions::default())
        .unwrap();
    let mut job = Job::from(close);
    let head = t.engine.head();
    let e = block_on(job.run(&mut t.engine, &Down, &mut NoSink)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert_eq!(t.engine.head(), head);
    assert!(!job.is_over(), "the same step can be answered again");
    let g = ScriptedGenerator::new("We talked about the lights.");
    block_on(job.run(&mut t.engine, &g, &mut NoSink)).unwrap();
    assert!(job.is_over() && t.engine.head() > head);

    let mut job = Job::from(query(&mut t, 3_000));
    let head = t.engine.head();
    let e = block_on(job.run(&mut t.engine, &Down, &mut NoSink)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert!(job.is_over());
    assert_eq!(t.engine.head(), head + 2, "asked and failed");
    let failed = t.engine.recent_queries(1)[0];
    assert!(
        failed
            .error
            .as_deref()
            .is_some_and(|e| e.contains("connection refused"))
    );

    // The generic driver consumes its machine: a scene close whose model failed commits
    // nothing and is gone.
    talk(&mut t, 4_000);
    let close = t
        .engine
        .begin_close_current_scene(booth, 5_000, &SceneOptions::default())
        .unwrap();
    let head = t.engine.head();
    let e = block_on(rp_core::machine::run(
        &mut t.engine,
        close,
        &Down,
        &mut NoSink,
    ))
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    assert_eq!(t.engine.head(), head);
}
