//! World queries (issue 10): the query loop with the scripted generator, its record in the
//! log, and the point-of-view filter.

use proptest::prelude::*;
use rp_core::query::{Confidence, QueryConfig, QueryInput, QueryStatus};
use rp_core::turn::{GenerateResult, NoSink, Purpose, ScriptedGenerator, Step};
use rp_core::*;
use serde_json::json;

struct Tavern {
    wren: EntityId,
    mira: EntityId,
    tobias: EntityId,
    harbour: EntityId,
    edda: EntityId,
    mira_memory: MemoryId,
    tobias_memory: MemoryId,
}

fn entity(id: EntityId, name: &str, facts: &str, host: bool) -> Event {
    Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: if name == "Tobias" {
            vec!["Toby".into()]
        } else {
            vec![]
        },
        facts: FactSheet::from_text(facts),
        host_controlled: host,
        state: EntityState {
            mood: Some("wary".into()),
            ..Default::default()
        },
    }
}

fn edge(from: EntityId, to: EntityId, summary: &str, knowledge: &[&str]) -> Event {
    Event::EdgeUpdated {
        edge: Edge {
            affinity: 0.5,
            trust: 0.2,
            summary: summary.into(),
            knowledge: knowledge.iter().map(|k| k.to_string()).collect(),
            ..Edge::new(from, to)
        },
    }
}

fn memory(id: MemoryId, owner: EntityId, witnesses: &[EntityId], text: &str) -> Event {
    Event::MemoryAdded {
        memory: Memory {
            id,
            owner,
            witnesses: witnesses.iter().copied().chain([owner]).collect(),
            text: text.into(),
            kind: MemoryKind::Reflection,
            significance: 0.8,
            created: 10,
            last_accessed: None,
            access_count: 0,
            decay: DecayStage::Full,
            pinned: false,
            embedding: None,
            scene: None,
            stability: 0.0,
            summary: None,
            feeling: None,
            about: None,
            sources: Vec::new(),
        },
    }
}

fn build(engine: &mut Engine) -> Tavern {
    let n = engine.world().next_id();
    let room = ContainerId(n);
    let [wren, mira, tobias, harbour, edda] = [1, 2, 3, 4, 5].map(|i| EntityId(n + i));
    let (mira_memory, tobias_memory) = (MemoryId(n + 6), MemoryId(n + 7));
    let at = |c| Activity {
        position: Some(Position {
            container: c,
            slot: None,
        }),
        ..Default::default()
    };
    engine
        .append(vec![
            Event::ContainerCreated {
                id: room,
                key: None,
                name: "The Crooked Lantern".into(),
                facts: FactSheet::default(),
                parent: None,
                slots: vec![],
                properties: Default::default(),
            },
            entity(wren, "Wren", "is a character", true),
            entity(
                mira,
                "Mira",
                "is a character\nMira is an innkeeper.\nRuns the Crooked Lantern and hears every rumour.",
                false,
            ),
            entity(
                tobias,
                "Tobias",
                "is a character\nis a smuggler\nMoves casks of brandy through the harbour at night.",
                false,
            ),
            entity(
                harbour,
                "Harbour",
                "is a location\nWhere the boats come in.",
                false,
            ),
            entity(
                edda,
                "Edda",
                "is a character\nA fisher who owes money.",
                false,
            ),
            Event::ActivityChanged {
                entity: wren,
                activity: at(room),
            },
            Event::ActivityChanged {
                entity: mira,
                activity: at(room),
            },
            Event::ActivityChanged {
                entity: tobias,
                activity: at(room),
            },
            edge(mira, tobias, "An old friend who drinks too much.", &["smuggles brandy"]),
            edge(tobias, mira, "Keeps my secrets.", &[]),
            edge(tobias, harbour, "Where the work is.", &[]),
            edge(edda, tobias, "Owes him silver.", &["buried the silver"]),
            memory(mira_memory, mira, &[tobias], "Tobias paid for the brandy with silver."),
            memory(
                tobias_memory,
                tobias,
                &[edda],
                "Edda buried the silver under the pier.",
            ),
        ])
        .expect("the tavern applies");
    Tavern {
        wren,
        mira,
        tobias,
        harbour,
        edda,
        mira_memory,
        tobias_memory,
    }
}

fn tavern() -> (Engine, Tavern) {
    let mut engine = Engine::in_memory("Tavern", 0).unwrap();
    let t = build(&mut engine);
    (engine, t)
}

fn answer(content: &str, sources: &[EntityId], confidence: &str) -> String {
    json!({
        "type": "answer",
        "content": content,
        "confidence": confidence,
        "sources": sources.iter().map(|s| json!({"entity_id": s.0, "contribution": "facts", "relevance": 0.9})).collect::<Vec<_>>(),
        "suggested_follow_ups": ["Who else?"],
    })
    .to_string()
}

fn more(capability: &str, params: serde_json::Value) -> String {
    json!({
        "type": "needs_more_info",
        "reason": "not enough yet",
        "requests": [{"capability_id": capability, "params": params, "reason": "to know"}],
    })
    .to_string()
}

fn run(engine: &mut Engine, g: &ScriptedGenerator, input: QueryInput) -> query::QueryOutcome {
    engine.run_query_blocking(input, g, &mut NoSink).unwrap()
}

#[test]
fn an_answer_in_one_round() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [answer("Mira runs the Lantern.", &[t.mira], "high")],
    );
    let head = engine.head();
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("Who runs the Crooked Lantern?", 50),
    );
    assert_eq!(out.query.status, QueryStatus::Completed);
    assert_eq!(
        out.seq,
        head + 2,
        "QueryAsked and QueryAnswered, one commit"
    );
    assert_eq!(out.iterations, 0);
    let a = out.query.answer.as_ref().unwrap();
    assert_eq!(
        (a.confidence, a.sources[0].entity_id),
        (Confidence::High, t.mira)
    );
    assert_eq!(a.suggested_follow_ups, vec!["Who else?"]);
    assert!(out.context.has_entity(t.mira), "found by the first search");
    let requests = g.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].purpose, Purpose::Query);
    assert_eq!(requests[0].params.temperature, Some(0.7));
    let schema = requests[0].json_schema.as_ref().unwrap();
    assert_eq!(schema["anyOf"].as_array().unwrap().len(), 2);
    assert!(requests[0].messages[0].content.contains("SEARCH_ENTITIES"));
    assert!(
        requests[0].messages[1]
            .content
            .contains("Who runs the Crooked Lantern?")
    );
    let kinds: Vec<&str> = engine
        .events(head + 1, head + 2)
        .unwrap()
        .iter()
        .map(|(_, e)| e.kind())
        .collect();
    assert_eq!(kinds, vec!["query_asked", "query_answered"]);
    assert_eq!(engine.get_query(out.query.id), Some(&out.query));
}

#[test]
fn a_needs_more_info_chain_expands_searches_and_walks_relationships() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            more("EXPAND_ENTITY", json!({"entity_id": t.tobias.0})),
            more("SEARCH_ENTITIES", json!({"query": "fisher owes money"})),
            more(
                "GET_RELATIONSHIPS",
                json!({"entity_ids": [t.edda.0], "direction": "outgoing"}),
            ),
            answer("Edda owes Tobias silver.", &[t.edda, t.tobias], "medium"),
        ],
    );
    let config = QueryConfig {
        max_info_requests: 4,
        ..Default::default()
    };
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("What is Tobias the smuggler up to?", 50).with_config(config),
    );
    assert_eq!(
        out.query.status,
        QueryStatus::Completed,
        "{:?}",
        out.query.error
    );
    assert_eq!(out.iterations, 3);
    assert_eq!(out.query.rounds.len(), 4);
    let a = out.query.answer.unwrap();
    assert_eq!((a.confidence, a.forced), (Confidence::Medium, None));
    let c = &out.context;
    assert!(c.has_full_entity(t.tobias) && c.is_expanded(t.tobias));
    assert!(
        c.entity(t.tobias)
            .unwrap()
            .facts
            .iter()
            .any(|f| f.contains("brandy"))
    );
    assert!(c.has_entity(t.edda), "found by the search");
    assert!(
        c.relationships()
            .any(|r| r.from == t.edda && r.to == t.tobias)
    );
    assert!(
        c.relationships()
            .any(|r| r.from == t.tobias && r.to == t.harbour),
        "from the expansion"
    );
    let runs: Vec<&str> = out.query.rounds[..3]
        .iter()
        .map(|r| r.requests[0].summary.as_str())
        .collect();
    assert!(runs[0].starts_with("expanded 1"), "{runs:?}");
    assert!(runs[1].starts_with("found"), "{runs:?}");
    assert!(runs[2].starts_with("1 relationships"), "{runs:?}");
    // Each request shows what the last fetched.
    let requests = g.requests();
    assert!(requests[1].messages[1].content.contains("brandy"));
    assert!(
        requests[3].messages[1].content.contains("[")
            && requests[3].messages[1].content.contains("Edda")
    );
    let s = c.stats();
    assert!(s.full_entities >= 1 && s.relationships >= 2 && s.token_estimate > 10);
}

#[test]
fn a_request_outside_the_constraints_forces_a_low_confidence_answer() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            more("EXPAND_ENTITY", json!({"entity_id": 987_654})),
            answer("Probably Mira.", &[t.mira], "high"),
        ],
    );
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("Who runs the Crooked Lantern?", 50),
    );
    assert_eq!(out.query.status, QueryStatus::Completed);
    let refused = out.query.rounds[0].requests[0].refused.as_deref().unwrap();
    assert!(refused.contains("one of"), "{refused}");
    let a = out.query.answer.unwrap();
    assert_eq!(
        a.confidence,
        Confidence::Low,
        "forced answers have low confidence"
    );
    assert!(a.forced.unwrap().contains("constraints"));
    let second = &g.requests()[1];
    assert!(
        second.json_schema.as_ref().unwrap().get("anyOf").is_none(),
        "answer only"
    );
    assert!(
        !second.messages[0]
            .content
            .contains("Capabilities (use only these")
    );
    assert_eq!(
        out.query.rounds[1]
            .forced
            .as_deref()
            .map(|f| f.contains("constraints")),
        Some(true)
    );
}

#[test]
fn the_iteration_limit_forces_the_answer() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            more("LIST_ENTITY_DEFINITIONS", json!({})),
            more(
                "GET_ENTITIES_BY_DEFINITION",
                json!({"definition": "smuggler"}),
            ),
            answer("Tobias.", &[t.tobias], "high"),
        ],
    );
    let config = QueryConfig {
        max_info_requests: 2,
        ..Default::default()
    };
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("Which smugglers are there?", 50).with_config(config),
    );
    assert_eq!(out.iterations, 2);
    let defs: Vec<String> = out.context.definitions().map(|d| d.name).collect();
    assert_eq!(defs, vec!["character", "innkeeper", "location", "smuggler"]);
    assert!(out.context.has_entity(t.tobias));
    let a = out.query.answer.unwrap();
    assert_eq!(a.confidence, Confidence::Low);
    assert!(a.forced.unwrap().contains("limit of 2"));
    let last = &g.requests()[2];
    assert!(
        last.messages[0]
            .content
            .contains("No more information can be fetched")
    );
}

#[test]
fn an_unreadable_reply_is_retried_once_then_the_query_fails() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            "Mira, I think.".to_string(),
            answer("Mira.", &[t.mira], "high"),
        ],
    );
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("Who runs the Crooked Lantern?", 50),
    );
    assert_eq!(out.query.status, QueryStatus::Completed);
    assert!(
        out.query.rounds[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("not JSON")
    );
    let retry = &g.requests()[1];
    assert!(
        retry
            .messages
            .last()
            .unwrap()
            .content
            .contains("could not be used")
    );

    // A source outside the context, twice: failed, recorded as such.
    let g = ScriptedGenerator::default();
    let outside = answer("Edda.", &[EntityId(424_242)], "high");
    g.script_purpose(&Purpose::Query, [outside.clone(), outside]);
    let out = run(&mut engine, &g, QueryInput::new("Who owes money?", 60));
    assert_eq!(out.query.status, QueryStatus::Failed);
    assert!(out.query.error.as_deref().unwrap().contains("twice"));
    assert_eq!(out.query.rounds.len(), 2);
    assert_eq!(engine.recent_queries(10).len(), 2);
}

#[test]
fn queries_survive_reopen_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.rp");
    let mut engine = Engine::create(&path, "Tavern", 0).unwrap();
    let t = build(&mut engine);
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            more("GET_ENTITY_BY_NAME", json!({"name": "Toby"})),
            answer("Tobias, called Toby.", &[t.tobias], "high"),
            answer("Mira.", &[t.mira], "low"),
        ],
    );
    let first = run(&mut engine, &g, QueryInput::new("Who is Toby?", 50));
    assert!(first.context.has_full_entity(t.tobias), "by alias");
    let second = run(
        &mut engine,
        &g,
        QueryInput::new("Who keeps the inn?", 60).asked_as(t.wren),
    );
    let bytes = engine.world().to_bytes();
    drop(engine);
    let engine = Engine::open(&path).unwrap();
    assert_eq!(engine.world().to_bytes(), bytes);
    assert_eq!(engine.get_query(first.query.id), Some(&first.query));
    let recent: Vec<QueryId> = engine.recent_queries(5).iter().map(|q| q.id).collect();
    assert_eq!(recent, vec![second.query.id, first.query.id]);
    assert_eq!(engine.recent_queries(1).len(), 1);
    let q = engine.get_query(first.query.id).unwrap();
    assert_eq!((q.config.max_info_requests, q.info_requests), (3, 1));
    assert_eq!(
        q.rounds[0].requests[0].request.capability_id,
        "GET_ENTITY_BY_NAME"
    );
    assert_eq!(q.rounds[0].output.model.as_deref(), Some("scripted"));
    assert_eq!(
        engine.get_query(second.query.id).unwrap().asked_as,
        Some(t.wren)
    );
}

#[test]
fn a_query_as_an_entity_sees_only_what_it_could_know() {
    let (mut engine, t) = tavern();
    let g = ScriptedGenerator::default();
    g.script_purpose(
        &Purpose::Query,
        [
            more("SEARCH_ENTITIES", json!({"query": "fisher owes money"})),
            more(
                "GET_RELATIONSHIPS",
                json!({"entity_ids": [t.mira.0, t.tobias.0]}),
            ),
            more("EXPAND_ENTITY", json!({"entity_id": t.tobias.0})),
            answer("Tobias paid in silver.", &[t.tobias], "medium"),
        ],
    );
    let config = QueryConfig {
        max_info_requests: 5,
        ..Default::default()
    };
    let out = run(
        &mut engine,
        &g,
        QueryInput::new("Who has the silver?", 50)
            .asked_as(t.mira)
            .with_config(config),
    );
    assert_eq!(
        out.query.status,
        QueryStatus::Completed,
        "{:?}",
        out.query.error
    );
    let c = &out.context;
    let memories: Vec<MemoryId> = c.memories().map(|m| m.id).collect();
    assert_eq!(memories, vec![t.mira_memory], "never Tobias's own memory");
    assert!(!memories.contains(&t.tobias_memory));
    assert!(!c.has_entity(t.edda), "Mira never met Edda");
    assert!(
        c.relationships().all(|r| r.from == t.mira),
        "only her own edges"
    );
    assert!(c.relationships().any(|r| r.to == t.tobias));
    let tobias = c.entity(t.tobias).unwrap();
    assert!(
        tobias.facts.iter().all(|f| !f.contains("casks")),
        "not his fact sheet"
    );
    assert!(
        tobias.facts.iter().any(|f| f.contains("smuggles brandy")),
        "what she knows"
    );
    let prompt = &g.requests()[0].messages[0].content;
    assert!(prompt.contains("as Mira knows it"));
    let _ = t.harbour;
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (mut engine, t) = tavern();
    let head = engine.head();
    let bad = [
        QueryInput::new("   ", 1),
        QueryInput::new("x".repeat(10_001), 1),
        QueryInput::new("Who?", 1).asked_as(EntityId(999_999)),
        QueryInput::new("Who?", 1).with_config(QueryConfig {
            max_initial_entities: 0,
            ..Default::default()
        }),
    ];
    for input in bad {
        assert!(engine.begin_query(input).is_err());
    }
    assert!(QueryInput::from_json(r#"{"text": "Who?", "now": 1, "asked": 3}"#).is_err());
    let input =
        QueryInput::from_json(r#"{"text": "Who?", "now": 1, "config": {"max_info_requests": 1}}"#)
            .unwrap();
    assert_eq!(input.config.max_info_requests, 1);
    assert_eq!(engine.head(), head);

    // A machine refuses out-of-order calls and a moved engine.
    let mut q = engine
        .begin_query(QueryInput::new("Who runs the inn?", 1))
        .unwrap();
    assert!(matches!(q.step().unwrap(), Step::Generate(_)));
    q.provide(GenerateResult::text(answer("Mira.", &[t.mira], "high")))
        .unwrap();
    assert_eq!(q.step().unwrap(), Step::Done);
    assert!(q.provide(GenerateResult::text("{}")).is_err());
    q.finish().unwrap();
    let mut m = query::QueryMachine::begin(&mut engine, QueryInput::new("Who?", 1)).unwrap();
    assert!(!m.is_done());
    engine.append(vec![Event::TimeAdvanced { to: 99 }]).unwrap();
    let e = m.step(&mut engine).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    let head = engine.head();
    assert!(m.finish(&mut engine).is_err());
    assert_eq!(engine.head(), head);

    // A query event out of turn is refused by the world itself.
    let answered = engine.recent_queries(1)[0].id;
    let again = Event::QueryFailed {
        id: answered,
        info_requests: 0,
        rounds: vec![],
        error: "late".into(),
        at: 100,
    };
    assert_eq!(
        engine.append(vec![again]).unwrap_err().kind(),
        ErrorKind::Conflict
    );
}

#[test]
fn a_generator_failure_is_recorded_as_a_failed_query() {
    struct Down;
    #[async_trait::async_trait]
    impl turn::Generate for Down {
        async fn generate(
            &self,
            _: &turn::GenerateRequest,
            _: &mut dyn turn::TokenSink,
        ) -> Result<GenerateResult, String> {
            Err("the model is down".into())
        }
    }
    let (mut engine, _) = tavern();
    let e = engine
        .run_query_blocking(QueryInput::new("Who?", 1), &Down, &mut NoSink)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    let q = engine.recent_queries(1)[0];
    assert_eq!(q.status, QueryStatus::Failed);
    assert!(q.error.as_deref().unwrap().contains("down"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// DESIGN §2.7: whatever the world and whatever the model asks, a query asked as an entity
    /// holds only memories that entity owns and witnessed, and only its own edges.
    #[test]
    fn a_pov_query_never_holds_an_unwitnessed_memory(
        n in 3usize..7,
        memories in proptest::collection::vec((0usize..7, proptest::collection::vec(0usize..7, 0..4), 0usize..4), 0..24),
        edges in proptest::collection::vec((0usize..7, 0usize..7), 0..20),
        pov in 0usize..7,
    ) {
        const WORDS: [&str; 4] = ["silver", "brandy", "pier", "storm"];
        let mut engine = Engine::in_memory("P", 0).unwrap();
        let first = engine.world().next_id();
        let ids: Vec<EntityId> = (0..n as u64).map(|i| EntityId(first + i)).collect();
        let mut events: Vec<Event> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| entity(*id, &format!("Person{i}"), "is a character\nknows about silver and brandy", false))
            .collect();
        for (next, (owner, witnesses, word)) in (first + n as u64..).zip(memories.iter()) {
            let owner = ids[owner % n];
            let w: Vec<EntityId> = witnesses.iter().map(|x| ids[x % n]).collect();
            events.push(memory(MemoryId(next), owner, &w, &format!("the {} memory {next}", WORDS[*word])));
        }
        for (a, b) in &edges {
            let (a, b) = (ids[a % n], ids[b % n]);
            if a != b {
                events.push(edge(a, b, "knows", &["a thing"]));
            }
        }
        engine.append(events).unwrap();
        let pov = ids[pov % n];
        let g = ScriptedGenerator::default();
        let all: Vec<u64> = ids.iter().map(|i| i.0).collect();
        g.script_purpose(&Purpose::Query, [
            more("SEARCH_ENTITIES", json!({"query": "silver brandy"})),
            more("GET_RELATIONSHIPS", json!({"entity_ids": [pov.0], "max_hops": 3})),
            // Often outside the constraints (then forced): both paths are checked.
            more("EXPAND_ENTITIES", json!({"entity_ids": all})),
            answer("Nobody knows.", &[pov], "low"),
            answer("Nobody knows.", &[pov], "low"),
        ]);
        let config = QueryConfig { max_info_requests: 4, ..Default::default() };
        let out = engine
            .run_query_blocking(QueryInput::new("Who has the silver and the brandy?", 100).asked_as(pov).with_config(config), &g, &mut NoSink)
            .unwrap();
        let world = engine.world();
        for m in out.context.memories() {
            let stored = world.memory(m.id).unwrap();
            prop_assert_eq!(stored.owner, pov);
            prop_assert!(stored.witnesses.contains(pov));
        }
        for r in out.context.relationships() {
            prop_assert_eq!(r.from, pov);
        }
        let witnessed = world.memories_of(pov).count();
        prop_assert!(out.context.memories().count() <= witnessed);
    }
}
