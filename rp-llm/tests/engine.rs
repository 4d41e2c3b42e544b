//! The client driving the engine end to end: a turn in a tiny world, run with
//! `Engine::run_turn_blocking` against a model server on 127.0.0.1, with semantic recall on so
//! both chat completions and embeddings go over the wire.

mod common;

use common::*;
use rp_core::turn::{Purpose, TurnInput, TurnOptions};
use rp_core::{
    Activity, ContainerId, ContainerProperties, Engine, EntityId, ErrorKind, Event, FactSheet,
    Position,
};
use serde_json::{Value, json};

/// A room, the player (host-controlled) and Mira, who always answers.
fn tavern(engine: &mut Engine) -> (EntityId, EntityId) {
    let next = engine.world().next_id();
    let (room, wren, mira) = (ContainerId(next), EntityId(next + 1), EntityId(next + 2));
    let at = Activity {
        position: Some(Position {
            container: room,
            slot: None,
        }),
        ..Default::default()
    };
    let person = |id, name: &str, host, facts: &[&str]| Event::EntityCreated {
        id,
        key: None,
        name: name.into(),
        aliases: vec![],
        facts: FactSheet(facts.iter().map(|s| s.to_string()).collect()),
        host_controlled: host,
        state: Default::default(),
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
                properties: ContainerProperties::default(),
            },
            person(wren, "Wren", true, &[]),
            person(mira, "Mira Holt", false, &["The innkeeper.", "$respond"]),
            Event::ActivityChanged {
                entity: wren,
                activity: at.clone(),
            },
            Event::ActivityChanged {
                entity: mira,
                activity: at,
            },
        ])
        .expect("the world builds");
    (wren, mira)
}

/// A vector for `text`: letter counts folded into 8 dimensions, plus one so none is zero.
fn vector(text: &str) -> Vec<f64> {
    let mut v = vec![1.0; 8];
    for b in text.bytes() {
        v[(b % 8) as usize] += 1.0;
    }
    v
}

#[test]
fn a_turn_runs_through_the_client_and_records_the_streamed_reply() {
    let server = Server::start(|_, r, conn| {
        if r.path == "/v1/embeddings" {
            let data: Vec<Value> = r.body["input"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, t)| json!({"index": i, "embedding": vector(t.as_str().unwrap_or(""))}))
                .collect();
            json_answer(conn, 200, &json!({"data": data, "model": "embed"}));
        } else {
            stream_text(conn, &["Evening,", " traveller.", " Cider?"]);
        }
    });
    let (client, _) = new_client(config(&server));
    let mut engine = Engine::in_memory("The Crooked Lantern", 0).unwrap();
    let (wren, mira) = tavern(&mut engine);
    let mut streamed = Vec::new();
    let mut sink = |p: &Purpose, t: &str| streamed.push((*p, t.to_string()));
    let options = TurnOptions {
        semantic: true,
        ..Default::default()
    };
    let outcome = engine
        .run_turn_blocking(
            TurnInput::say(wren, "Evening, Mira.", 1_000),
            options,
            &client,
            &mut sink,
        )
        .expect("the turn runs");

    assert_eq!(outcome.replies.len(), 1);
    assert_eq!(outcome.replies[0].speaker, mira);
    assert_eq!(outcome.replies[0].text, "Evening, traveller. Cider?");
    let reply = Purpose::Reply { speaker: mira };
    assert_eq!(
        streamed,
        [
            (reply, "Evening,".to_string()),
            (reply, " traveller.".to_string()),
            (reply, " Cider?".to_string()),
        ]
    );
    // Recorded in the log, with the model the server named.
    let recorded = engine
        .events(1, engine.head())
        .unwrap()
        .into_iter()
        .find_map(|(_, e)| match e {
            Event::AssistantTurn { utterance } => Some(utterance),
            _ => None,
        })
        .expect("the reply is in the log");
    assert_eq!(
        (
            recorded.speaker,
            recorded.text.as_str(),
            recorded.model.as_deref()
        ),
        (mira, "Evening, traveller. Cider?", Some("test-model"))
    );
    assert!(engine.world().all_memories().all(|m| m.embedding.is_some()));

    // On the wire: the query's vector, the reply, the lines' vectors.
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/v1/embeddings", "/v1/chat/completions", "/v1/embeddings"]
    );
    let prompt = requests[1].body["messages"].to_string();
    assert!(prompt.contains("Evening, Mira."), "{prompt}");
    assert!(prompt.contains("Mira Holt"), "{prompt}");
}

#[test]
fn a_failing_server_abandons_the_turn_and_keeps_the_input() {
    let server = Server::start(|_, _, conn| {
        json_answer(
            conn,
            500,
            &json!({"error": {"message": "CUDA out of memory"}}),
        )
    });
    let mut c = config(&server);
    c.max_retries = 1;
    let (client, clock) = new_client(c);
    let mut engine = Engine::in_memory("The Crooked Lantern", 0).unwrap();
    let (wren, _) = tavern(&mut engine);
    let e = engine
        .run_turn_blocking(
            TurnInput::say(wren, "Mira?", 1_000),
            TurnOptions::default(),
            &client,
            &mut rp_core::turn::NoSink,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Generation);
    let message = e.to_string();
    assert!(message.contains("/v1/chat/completions"), "{message}");
    assert!(message.contains("CUDA out of memory"), "{message}");
    assert_eq!(server.count(), 2);
    assert_eq!(clock.sleeps().len(), 1);
    let events = engine.events(1, engine.head()).unwrap();
    assert!(
        events
            .iter()
            .any(|(_, e)| matches!(e, Event::UserTurn { utterance } if utterance.text == "Mira?"))
    );
    assert!(
        !events
            .iter()
            .any(|(_, e)| matches!(e, Event::AssistantTurn { .. }))
    );
}
