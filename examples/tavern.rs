//! The tavern demo: a playable session in the terminal.
//!
//! You are Wren, a traveller in the corner booth of the Crooked Lantern with Tobias, a
//! fisherman three ciders in; Mira keeps the bar across the room. Type a line: the characters
//! who hear it (from where everyone is) decide whether to answer (response control, from their
//! fact sheets) and answer in streamed text. The lines come from a scripted generator
//! (`tavern-lines.toml`), so no model is needed; any other `Generate` plays the same way.
//!
//! ```sh
//! cargo run --release --example tavern             # plays ./tavern.rp
//! cargo run --release --example tavern -- my.rp    # or another save
//! ```
//!
//! With `RP_LLM_BASE_URL` (and `RP_LLM_MODEL`, optionally `RP_LLM_API_KEY`) set, the
//! characters speak through the model server there instead (rp-llm's `OpenAiClient`, the
//! `llm` feature of rp-demo, on by default), and each turn ends with the state-update pass:
//! the model reports what changed, the engine checks it and applies what is valid.
//! `--stats` prints at exit what the session came to: turns, replies, state-update passes
//! by outcome with the reasons of rejected reports, and whether the save reopens and replays
//! to the world as it was played. `--show-updates` prints each pass's raw answers and what
//! became of every report. `scripts/real-model` runs it all on a small local model
//! (`docs/real-model.md`).
//!
//! The save is created from `examples/tavern.toml` the first time and resumed after that:
//! every line is in its event log, so a session can stop anywhere, come back, rewind and
//! branch. `/help` lists the commands. With stdin not a terminal, lines are read from it until
//! it ends, each echoed after `> `, so a session can be scripted:
//! `printf 'Tobias, what lights?\n/why Tobias\n' | cargo run --example tavern -- /tmp/x.rp`.
//!
//! This file is the embedding: open or create the save, choose who speaks for the characters,
//! play. The session itself (the turn loop, the commands, what is printed) is rp-demo's
//! `Session`.

use rp_core::{DriveConfig, Engine, EngineOptions, EntityId, EntityState, Event, FactSheet, Seq};
use rp_demo::{Args, Model, ScriptedLines, Session, Voices};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// What Tobias and Mira say without a model server, built into the binary so the demo runs
/// from any directory.
const LINES: &str = include_str!("tavern-lines.toml");

fn main() -> ExitCode {
    match play() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tavern: {e}");
            ExitCode::FAILURE
        }
    }
}

fn play() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let Some(args) = Args::from_env()? else {
        return Ok(()); // --help
    };

    // Who speaks for the characters: the model server named by RP_LLM_BASE_URL, if any, else
    // the scripted lines.
    let voices = match Model::from_env()? {
        Some(model) => Voices::Model(model),
        None => Voices::Scripted(ScriptedLines::from_toml(LINES)?),
    };

    // The save: resumed when it exists, else created from the world file. Every line played
    // is committed to its event log, so there is nothing to save at the end.
    let resumed = args.save.exists();
    let engine = if resumed {
        Engine::open(&args.save)?
    } else {
        create(&args.save)?
    };

    // A card brought in: its character stands in the booth and greets the player.
    let mut engine = engine;
    if let Some(card) = &args.card {
        let player = engine.world().entity_by_key("wren").map(|e| e.id);
        let player = player.ok_or("the tavern has no Wren")?;
        let (who, greeting) = rp_demo::bring_card(&mut engine, card, player)?;
        let name = engine
            .world()
            .entity(who)
            .map_or("", |e| e.name.as_str())
            .to_owned();
        println!("{name} joins you in the booth (from {}).", card.display());
        if !greeting.is_empty() {
            println!("{name}: {greeting}\n");
        }
    }

    // Play the lines of stdin until they end or /quit.
    let mut session = Session::start(engine, voices, &args.save, resumed)?;
    session.show_updates = args.show_updates;
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    session.run(stdin.lock(), interactive)?;
    session.leave();
    if args.stats {
        session.print_stats(started)?;
    }
    Ok(())
}

/// Creates the save at `save` from the tavern's world file, with the Ferryman added and a
/// plan of Tobias's.
fn create(save: &Path) -> rp_core::Result<Engine> {
    // The world file beside this example, wherever the demo is run from.
    let world_file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tavern.toml");
    let world_file = world_file.canonicalize().unwrap_or(world_file);
    let mut engine =
        Engine::create_from_world_file(save, &world_file, 0, EngineOptions::default())?;
    add_the_ferryman(&mut engine)?;
    give_tobias_a_plan(&mut engine)?;
    println!(
        "Created {} from {}.\n",
        save.display(),
        world_file.display()
    );
    Ok(engine)
}

/// The off-stage character the demo adds to a new save: known only by rumour, it has no place
/// in the tavern, but its summary loads into a prompt when someone mentions it (lore). It never
/// starts a conversation (its drives are off). Any change to a world is an event, checked by
/// the engine and committed to the log.
fn add_the_ferryman(engine: &mut Engine) -> rp_core::Result<Seq> {
    let id = EntityId(engine.world().next_id());
    engine.append(vec![
        Event::EntityCreated {
            id,
            key: None,
            name: "the Ferryman".into(),
            aliases: vec![],
            facts: FactSheet::from_text(
                "keywords: Ferryman, heron seal\n\
             summary: A boatman no one admits to having met. He takes travellers across the salt \
             marsh by night, for a price paid in advance, and seals his letters with a black \
             heron.",
            ),
            host_controlled: false,
            state: EntityState::default(),
        },
        Event::DrivesConfigured {
            entity: Some(id),
            config: DriveConfig {
                enabled: Some(false),
                ..DriveConfig::default()
            }
            .into(),
        },
    ])
}

/// The rule the demo gives Tobias in a new save (docs/rules.md): at one in the morning he means
/// to ask the traveller about the letter she carries. When it fires, the intention adds to his
/// pull to speak to Wren until he does; how Wren answers (or not) teaches him whether to speak
/// up to her again. `/rules Tobias` shows it.
fn give_tobias_a_plan(engine: &mut Engine) -> rp_core::Result<rp_core::RuleId> {
    let tobias = engine.world().resolve_entity("tobias")?;
    engine.add_rule(
        tobias,
        r#"{"description": "ask the traveller about her sealed letter",
            "on": {"day": 0, "hour": 1},
            "intent": {"initiate": "Wren", "about": "the sealed letter she carries"}}"#,
        0,
    )
}
