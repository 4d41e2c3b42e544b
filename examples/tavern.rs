//! The tavern demo: a playable session in the terminal.
//!
//! You are Wren, a traveller in the corner booth of the Crooked Lantern with Tobias, a
//! fisherman three ciders in; Mira keeps the bar across the room. Type a line: the characters
//! who hear it (from where everyone is) decide whether to answer (response control, from their
//! fact sheets) and answer in streamed text. The lines come from a scripted generator, so no
//! model is needed; any other `Generate` plays the same way.
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

use rp_core::facts::Decision;
use rp_core::turn::{
    Generate, Purpose, ScriptedGenerator, TokenSink, TurnInput, TurnOptions, TurnOutcome, Wake,
};
use rp_core::{
    Activity, Engine, EngineOptions, EntityId, EntityState, Event, FactSheet, Millis, Position,
    Seq, World,
};
use rp_demo::{Call, Observed, Stats, check_save};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Game time that passes with each line the player says (and with `/wait`).
const LINE_MS: Millis = 30_000;
/// Game time a walk across the room takes.
const WALK_MS: Millis = 15_000;
/// Lines of the story so far a resumed session prints.
const RECAP_LINES: usize = 6;
/// Player lines `/rewind` offers to unsay.
const REWIND_CHOICES: usize = 5;
/// A pause per streamed token, when stdout is a terminal.
const TYPING: Duration = Duration::from_millis(30);
/// What a character says once its script has nothing left that fits (`{name}`: its name).
const FALLBACK: &str = "{name} shrugs and lets the rain do the talking.";

const HELP: &str = "\
Type a line to speak as Wren. Commands:
  /why NAME      NAME's last response decision and why (the trace of its fact sheet)
  /prompt NAME   the prompt NAME would be given now: every piece, its section, why it is there
  /state         where everyone is, what they are doing, moods and relationships
  /go PLACE      walk to the bar or back to the booth (who hears you depends on where you are)
  /wait          let half a minute pass (someone who hesitated may speak up)
  /rewind        the seqs to rewind to, to unsay each of your recent lines
  /rewind SEQ    rewind the story to just after event SEQ; the undone events stay a branch
  /branches      the branches of the story
  /switch NAME   continue on another branch
  /help          this text
  /quit          leave (the story is saved after every line)";

const USAGE: &str = "\
usage: tavern [--stats] [--show-updates] [SAVE]   (default SAVE: tavern.rp here)

  --stats          at exit, print turns, replies, state-update passes by outcome (with the
                   reasons of rejected reports) and whether the save reopens and replays to
                   the world as played
  --show-updates   print each state-update pass's raw answers and every report's fate

With RP_LLM_BASE_URL and RP_LLM_MODEL set (RP_LLM_API_KEY if the server wants one), the
characters speak through that OpenAI-compatible server, with the state-update pass on.";

/// A scripted line: the words that call for it (a word of the line it answers starting with
/// one of them; none: a line for any occasion, said in order) and its text. Each is said once
/// per branch.
type Line = (&'static [&'static str], &'static str);

const TOBIAS: &[Line] = &[
    (
        &["ferryman"],
        "...You'd do well not to say that name so loud. He takes folk across when the mist is \
         thick, and he never takes coin on the far side. Not all of them come back.",
    ),
    (
        &["light", "marsh"],
        "Lights, aye. Green ones, low over the reeds, moving against the wind. Three nights \
         running. Nobody believes a drunk, but I know what I saw.",
    ),
    (
        &["letter", "seal", "heron", "wax"],
        "A heron in black wax. I've seen that seal once before, on a coffin going out with the \
         tide. Put it away, friend.",
    ),
    (
        &["ferry", "boat", "passage", "cross"],
        "Cross the marsh? Not in my boat; she's at the bottom of it. Nobody sane crosses \
         tonight anyway.",
    ),
    (
        &["mira", "innkeeper", "owe", "debt"],
        "Mira? Best woman in town. I owe her eleven silver and she still pours for me. Don't \
         tell her I said so.",
    ),
    (
        &["knee", "hurt", "sober", "temper"],
        "The autumn gales took my boat and left me the knee. The sea thinks that's a fair trade.",
    ),
    (
        &["drink", "cider", "beer", "buy", "round", "thirsty"],
        "Now you're speaking my language. Cider, if you're buying. Mira keeps the good barrel \
         for folk she likes, so ask her nicely.",
    ),
    (
        &["hello", "evening", "greetings", "name", "who"],
        "Evening, stranger. Tobias Reed. Sit, sit; the bench doesn't bite, even if I do.",
    ),
    (
        &[],
        "Storm like this, the marsh swallows its own paths. Nobody sensible goes out tonight.",
    ),
    (
        &[],
        "You've ink on your fingers. A clerk, is it? Or someone running from one?",
    ),
    (
        &[],
        "My father used to say the marsh keeps what it's given. I never asked him what he'd \
         given it.",
    ),
];

const MIRA: &[Line] = &[
    (
        &["ferryman", "ferry"],
        "Keep your voice down. The last man who asked after the Ferryman in here left at dawn, \
         and nobody saw him again. Who gave you that name?",
    ),
    (
        &["brother", "vanish", "missing"],
        "Ten winters. He went out after the lights and the marsh kept him. That's all I'll say.",
    ),
    (
        &["light", "marsh"],
        "Tobias tells that story to anyone with a coin. Don't follow lights on the marsh. \
         That's not advice; it's a rule of this house.",
    ),
    (
        &["letter", "seal", "heron", "wax"],
        "Put that away. Not here, where anyone can see a heron seal.",
    ),
    (
        &["tobias", "fisherman"],
        "Tobias? Harmless. He owes me eleven silver and a great deal of patience.",
    ),
    (
        &["room", "bed", "stay", "sleep"],
        "A room's two silver, paid now. Top of the stairs; the door sticks.",
    ),
    (
        &["drink", "cider", "beer", "ale", "wine", "thirsty"],
        "Cider or dark ale; the wine turned in the spring. Coin on the counter first.",
    ),
    (
        &["hello", "evening", "greetings"],
        "Evening. You're not from the marsh towns. What brings you out in this weather?",
    ),
    (
        &[],
        "Mm. Drink your drink and mind your business, stranger; it's the cheapest thing on offer.",
    ),
    (
        &[],
        "Twenty years behind this bar. You learn who's trouble by how they sit, and you sit \
         like someone waiting.",
    ),
];

/// The script of the character with world-file key `key`.
fn script_of(key: &str) -> &'static [Line] {
    match key {
        "tobias" => TOBIAS,
        "mira" => MIRA,
        _ => &[],
    }
}

/// The line of `script` that answers `heard`: the first unsaid one called for by a word of it,
/// else the first unsaid line for any occasion.
fn pick(script: &[Line], heard: &str, said: Option<&HashSet<String>>) -> Option<&'static str> {
    let words: Vec<String> = heard
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let fresh = |line: &&Line| said.is_none_or(|s| !s.contains(line.1));
    script
        .iter()
        .filter(fresh)
        .find(|(keys, _)| keys.iter().any(|k| words.iter().any(|w| w.starts_with(k))))
        .or_else(|| {
            script
                .iter()
                .filter(fresh)
                .find(|(keys, _)| keys.is_empty())
        })
        .map(|line| line.1)
}

/// The off-stage character the demo adds to a new save: known only by rumour, it has no place
/// in the tavern, but its summary loads into a prompt when someone mentions it (lore).
fn add_the_ferryman(engine: &mut Engine) -> rp_core::Result<Seq> {
    let id = EntityId(engine.world().next_id());
    engine.append(vec![Event::EntityCreated {
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
    }])
}

fn main() -> ExitCode {
    match play() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tavern: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What the command line asks for.
struct Args {
    save: PathBuf,
    stats: bool,
    show_updates: bool,
}

/// Reads the command line; `None` after printing the usage (asked for, or a wrong argument).
fn args() -> Result<Option<Args>, String> {
    let mut args = Args {
        save: PathBuf::from("tavern.rp"),
        stats: false,
        show_updates: false,
    };
    let mut save = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--stats" => args.stats = true,
            "--show-updates" => args.show_updates = true,
            "-h" | "--help" => {
                println!("{USAGE}\n\n{HELP}");
                return Ok(None);
            }
            a if a.starts_with('-') => return Err(format!("unknown option {a}\n\n{USAGE}")),
            _ if save.is_some() => return Err(format!("one save at most\n\n{USAGE}")),
            _ => save = Some(PathBuf::from(arg)),
        }
    }
    if let Some(save) = save {
        args.save = save;
    }
    Ok(Some(args))
}

/// The model server's client, when `RP_LLM_BASE_URL` is set: what the characters speak
/// through instead of their scripts.
struct Model {
    generator: Box<dyn Generate>,
    /// Where it is and which model answers, for the player.
    about: String,
}

/// Whether `RP_LLM_BASE_URL` is set (to something).
fn model_wanted() -> bool {
    std::env::var_os("RP_LLM_BASE_URL").is_some_and(|v| !v.to_string_lossy().trim().is_empty())
}

#[cfg(feature = "llm")]
fn model_from_env() -> Result<Option<Model>, Box<dyn std::error::Error>> {
    if !model_wanted() {
        return Ok(None);
    }
    let client = rp_llm::OpenAiClient::from_env()?;
    let config = client.config();
    let about = format!("{} (model {})", config.base_url, config.model);
    Ok(Some(Model {
        generator: Box::new(client),
        about,
    }))
}

#[cfg(not(feature = "llm"))]
fn model_from_env() -> Result<Option<Model>, Box<dyn std::error::Error>> {
    if model_wanted() {
        return Err(
            "RP_LLM_BASE_URL is set, but this build of the demo has no model client \
                    (rp-demo's `llm` feature is off); unset it to play the scripted voices"
                .into(),
        );
    }
    Ok(None)
}

fn play() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let Some(args) = args()? else {
        return Ok(());
    };
    let save = args.save.clone();
    let model = model_from_env()?;
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut session = Session::open(&save, model)?;
    session.show_updates = args.show_updates;
    if std::io::stdout().is_terminal() {
        session.typing = Some(TYPING);
    }
    println!("Type a line to speak as Wren; /help lists the commands.\n");
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            print!("> ");
            std::io::stdout().flush()?;
        }
        let line = match lines.next() {
            None => {
                if interactive {
                    println!();
                }
                break;
            }
            Some(Ok(line)) => line,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                println!("  That line is not UTF-8 text; it was ignored.");
                continue;
            }
            Some(Err(e)) => return Err(e.into()),
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !interactive {
            println!("> {line}");
        }
        match session.handle(line) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => println!("  Error: {e}"),
        }
    }
    session.leave(&save);
    if args.stats {
        // The save is opened by one engine at a time: keep the world as played, then close it.
        let live = session.engine.world().clone();
        let stats = session.stats.clone();
        drop(session);
        let check = check_save(&save, &live);
        println!("\nSession statistics:");
        match &check {
            Ok(check) => print!("{}", stats.table(Some(check), Some(started.elapsed()))),
            Err(e) => {
                print!("{}", stats.table(None, Some(started.elapsed())));
                println!("  save check failed: {e}");
            }
        }
        match check {
            Ok(check) if check.ok() => {}
            Ok(_) => {
                return Err("the save does not reopen and replay to the world as played".into());
            }
            Err(e) => return Err(format!("the save could not be checked: {e}").into()),
        }
    }
    Ok(())
}

/// The last response decision of a character, with what it weighed.
struct Weighed {
    decision: Decision,
    heard: String,
    mentioned: bool,
    at: Millis,
}

/// A game in progress: the engine and what the demo keeps beside it.
struct Session {
    engine: Engine,
    /// Wren.
    player: EntityId,
    options: TurnOptions,
    /// The last response decision of each character, made in this session on this branch.
    decisions: BTreeMap<EntityId, Weighed>,
    /// Wake-ups asked for by `$retry`, not yet run.
    wakes: Vec<Wake>,
    /// The last event that sets the tavern up: rewinds stop there.
    floor: Seq,
    /// The lines each character has said on this branch.
    said: BTreeMap<EntityId, HashSet<String>>,
    /// A pause per streamed token.
    typing: Option<Duration>,
    /// The model server the characters speak through; `None`: their scripts.
    model: Option<Model>,
    /// What the session's turns came to (`--stats`).
    stats: Stats,
    /// Print each state-update pass's raw answers and every report's fate.
    show_updates: bool,
}

impl Session {
    /// Resumes `save`, or creates it from the tavern's world file.
    fn open(save: &Path, model: Option<Model>) -> Result<Session, Box<dyn std::error::Error>> {
        let resumed = save.exists();
        let engine = if resumed {
            Engine::open(save)?
        } else {
            let world_file =
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tavern.toml");
            let world_file = world_file.canonicalize().unwrap_or(world_file);
            let mut engine =
                Engine::create_from_world_file(save, &world_file, 0, EngineOptions::default())?;
            add_the_ferryman(&mut engine)?;
            println!(
                "Created {} from {}.\n",
                save.display(),
                world_file.display()
            );
            engine
        };
        let player = engine
            .world()
            .entities()
            .find(|e| e.host_controlled)
            .ok_or("the save has no host-controlled entity to play")?
            .id;
        // The story starts with the first line or step of play; before it, the setup.
        let floor = engine
            .events(1, engine.head())?
            .iter()
            .find(|(_, e)| matches!(e, Event::TimeAdvanced { .. } | Event::UserTurn { .. }))
            .map_or(engine.head(), |(seq, _)| seq - 1);
        let options = match &model {
            Some(_) => rp_demo::model_options(TurnOptions::default()),
            None => TurnOptions::default(),
        };
        if let Some(m) = &model {
            println!(
                "The characters speak through the model at {}; after each turn it reports what \
                 changed (the state-update pass).\n",
                m.about
            );
        }
        let mut session = Session {
            engine,
            player,
            options,
            decisions: BTreeMap::new(),
            wakes: Vec::new(),
            floor,
            said: BTreeMap::new(),
            typing: None,
            model,
            stats: Stats::default(),
            show_updates: false,
        };
        session.refresh()?;
        if resumed {
            let w = session.engine.world();
            println!(
                "Resumed {}: {}, branch {}, head seq {}, {}.",
                save.display(),
                w.meta().map_or("?", |m| m.name.as_str()),
                session.engine.current_branch(),
                session.engine.head(),
                clock(w.now())
            );
            session.recap(RECAP_LINES);
        } else {
            let w = session.engine.world();
            println!(
                "{}: a low-beamed tavern on the salt marsh, a stormy night. You are Wren, \
                 carrying a sealed letter for someone called \"the Ferryman\".",
                w.meta().map_or("?", |m| m.name.as_str())
            );
        }
        session.whereabouts();
        Ok(session)
    }

    /// Runs one line of input; false to stop.
    fn handle(&mut self, line: &str) -> rp_core::Result<bool> {
        let Some(command) = line.strip_prefix('/') else {
            self.say(line)?;
            return Ok(true);
        };
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .map_or((command, ""), |(c, a)| (c, a.trim()));
        match name.to_lowercase().as_str() {
            "why" => self.why(arg)?,
            "prompt" => self.prompt(arg)?,
            "state" => self.state(),
            "go" => self.go(arg)?,
            "wait" => self.wait()?,
            "rewind" => self.rewind(arg)?,
            "branches" => self.branches(),
            "switch" => self.switch(arg)?,
            "help" | "?" => println!("{HELP}"),
            "quit" | "exit" | "q" => return Ok(false),
            "" => println!("  A command name follows the slash; /help lists them."),
            other => println!("  There is no /{other} command; /help lists the commands."),
        }
        Ok(true)
    }

    /// Wren says `text`: first whoever was due to speak up does, then the turn runs.
    fn say(&mut self, text: &str) -> rp_core::Result<()> {
        let now = self.engine.world().now() + LINE_MS;
        self.wake_due(now)?;
        let heard = self.heard(Some(text));
        let voices = self.voices(&heard);
        let outcome = self.turn(TurnInput::say(self.player, text, now), &voices)?;
        self.settle(outcome, &heard, true);
        Ok(())
    }

    /// Runs the wake-up turn asked for by `$retry`s due by `now`.
    fn wake_due(&mut self, now: Millis) -> rp_core::Result<()> {
        let (due, later): (Vec<Wake>, Vec<Wake>) = self.wakes.iter().partition(|w| w.at <= now);
        self.wakes = later;
        let Some(at) = due.iter().map(|w| w.at).max() else {
            return Ok(());
        };
        let hearers = self.engine.world().hearers(self.player);
        let (near, away): (Vec<Wake>, Vec<Wake>) =
            due.into_iter().partition(|w| hearers.contains(w.entity));
        for w in away {
            println!(
                "  ({} meant to come back to what you said, but you are out of earshot now.)",
                self.name(w.entity)
            );
        }
        if near.is_empty() {
            return Ok(());
        }
        let at = at.max(self.engine.world().now());
        let who: Vec<String> = near.iter().map(|w| self.name(w.entity)).collect();
        println!("  ({}: {} comes back to it.)", clock(at), who.join(" and "));
        let heard = self.heard(None);
        let voices = self.voices(&heard);
        let outcome = self.turn(TurnInput::wake(self.player, at), &voices)?;
        self.settle(outcome, &heard, false);
        Ok(())
    }

    /// The line each character on stage would answer: `input`, or in a wake-up turn the last
    /// line it heard from someone else.
    fn heard(&self, input: Option<&str>) -> BTreeMap<EntityId, String> {
        let w = self.engine.world();
        w.entities()
            .filter(|e| !e.host_controlled && e.activity.position.is_some())
            .map(|e| {
                let text = match input {
                    Some(t) => t.to_string(),
                    None => last_heard(w, e.id).unwrap_or_default(),
                };
                (e.id, text)
            })
            .collect()
    }

    /// A generator with the line each character would say to what it heard.
    fn voices(&self, heard: &BTreeMap<EntityId, String>) -> ScriptedGenerator {
        let voices = ScriptedGenerator::new(FALLBACK);
        for (&id, text) in heard {
            let key = self
                .engine
                .world()
                .entity(id)
                .and_then(|e| e.key.as_deref())
                .unwrap_or("");
            if let Some(line) = pick(script_of(key), text, self.said.get(&id)) {
                voices.script(id, [line]);
            }
        }
        voices
    }

    /// Runs a turn, streaming the replies.
    fn turn(
        &mut self,
        input: TurnInput,
        voices: &ScriptedGenerator,
    ) -> rp_core::Result<TurnOutcome> {
        let names = self
            .engine
            .world()
            .entities()
            .map(|e| (e.id, e.name.clone()))
            .collect();
        let mut stream = Stream {
            names,
            speaking: None,
            typing: self.typing,
        };
        let generator: &dyn Generate = match &self.model {
            Some(m) => m.generator.as_ref(),
            None => voices,
        };
        let observed = Observed::new(generator);
        let outcome =
            self.engine
                .run_turn_blocking(input, self.options.clone(), &observed, &mut stream);
        if stream.speaking.is_some() {
            println!();
        }
        let calls = observed.take();
        match &outcome {
            Ok(outcome) => {
                self.stats.record_turn(outcome, &calls);
                self.report_updates(outcome, &calls);
            }
            Err(_) => self.stats.failed_turns += 1,
        }
        outcome
    }

    /// After a turn with a state-update pass: what became of its reports (each one, and the
    /// model's raw answers, with `--show-updates`).
    fn report_updates(&self, outcome: &TurnOutcome, calls: &[Call]) {
        let updates: Vec<&Call> = calls.iter().filter(|c| c.is_update()).collect();
        if updates.is_empty() {
            return;
        }
        if self.show_updates {
            for (i, call) in updates.iter().enumerate() {
                if i > 0 {
                    println!("  [update] asked again: {}", indent(&call.last_message));
                }
                match &call.result {
                    Ok(r) => println!("  [update] answer {}: {}", i + 1, indent(&r.text)),
                    Err(e) => println!("  [update] answer {}: error: {e}", i + 1),
                }
            }
            for r in &outcome.reports {
                match &r.rejected {
                    None => println!("  [update] applied: {}", r.report),
                    Some(why) => {
                        println!("  [update] rejected: {}\n      because: {why}", r.report)
                    }
                }
            }
        }
        let rejected = outcome
            .reports
            .iter()
            .filter(|r| r.rejected.is_some())
            .count();
        println!(
            "  (State update: {} report{}, {} applied, {} rejected{}.)",
            outcome.reports.len(),
            if outcome.reports.len() == 1 { "" } else { "s" },
            outcome.reports.len() - rejected,
            rejected,
            if updates.len() > 1 {
                "; the first answer was refused and asked again"
            } else {
                ""
            }
        );
    }

    /// Keeps what a finished turn decided and says what did not show as a reply.
    fn settle(&mut self, outcome: TurnOutcome, heard: &BTreeMap<EntityId, String>, said: bool) {
        let at = self.engine.world().now();
        for reply in &outcome.replies {
            self.said
                .entry(reply.speaker)
                .or_default()
                .insert(reply.text.clone());
        }
        for wake in &outcome.wake {
            println!(
                "  ({} hesitates: $retry, to reconsider at {}; on your next line or /wait.)",
                self.name(wake.entity),
                clock(wake.at)
            );
            self.wakes.push(*wake);
        }
        let mut quiet = Vec::new();
        for d in &outcome.decisions {
            if !d.decision.respond && d.decision.retry_ms.is_none() {
                quiet.push(self.name(d.entity));
            }
        }
        if !quiet.is_empty() {
            println!(
                "  ({} heard and said nothing; /why {} says why.)",
                quiet.join(" and "),
                quiet[0]
            );
        } else if said && outcome.decisions.is_empty() {
            println!("  (No one is within earshot; /state shows who is where.)");
        }
        for d in outcome.decisions {
            self.decisions.insert(
                d.entity,
                Weighed {
                    heard: heard.get(&d.entity).cloned().unwrap_or_default(),
                    mentioned: d.mentioned,
                    decision: d.decision,
                    at,
                },
            );
        }
    }

    /// `/why NAME`.
    fn why(&self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/why") else {
            return Ok(());
        };
        let name = self.name(id);
        let w = self.engine.world();
        if w.entity(id).is_some_and(|e| e.host_controlled) {
            println!("  {name} is yours: the engine never decides for the player.");
            return Ok(());
        }
        if let Some(weighed) = self.decisions.get(&id) {
            println!(
                "  {name} weighed \"{}\" at {}{}:",
                weighed.heard,
                clock(weighed.at),
                if weighed.mentioned {
                    ", mentioned by name"
                } else {
                    ""
                }
            );
            for line in weighed.decision.explain().lines() {
                println!("    {line}");
            }
            if weighed.decision.trace.is_empty() {
                println!(
                    "    (no line fired: a sheet without $respond lines answers what it hears; \
                     one with them stays silent unless one fires)"
                );
            }
            return Ok(());
        }
        // Not decided in this session: the log keeps the outcome and the lines that fired.
        let events = self.engine.events(self.floor + 1, self.engine.head())?;
        let last = events.iter().rev().find_map(|(seq, e)| match e {
            Event::ResponseDecided {
                entity,
                respond,
                retry_ms,
                fired,
                ..
            } if *entity == id => Some((*seq, *respond, *retry_ms, fired.clone())),
            _ => None,
        });
        let Some((seq, respond, retry_ms, fired)) = last else {
            println!(
                "  {name} has made no response decision on this branch yet: nothing has been \
                 said within earshot of {name}."
            );
            return Ok(());
        };
        println!("  {name}'s last decision, from the log (seq {seq}):");
        let lines = w
            .entity(id)
            .map(|e| e.facts.lines().to_vec())
            .unwrap_or_default();
        for n in fired {
            let text = lines.get(n as usize - 1).map_or("", String::as_str);
            println!("    line {n}: fired: {text}");
        }
        println!(
            "    → {}",
            match (respond, retry_ms) {
                (_, Some(ms)) => format!("not now; evaluate again in {ms} ms"),
                (true, None) => "responds".into(),
                (false, None) => "stays silent".into(),
            }
        );
        println!(
            "    (the log keeps what replay needs: the outcome, the lines fired, the draws; the \
             full trace is kept for decisions made in this session)"
        );
        Ok(())
    }

    /// `/prompt NAME`.
    fn prompt(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/prompt") else {
            return Ok(());
        };
        let name = self.name(id);
        let now = self.engine.world().now();
        let answering = last_heard(self.engine.world(), id);
        let prompt =
            self.engine
                .inspect_prompt(id, answering.as_deref(), now, &self.options.prompt)?;
        match answering {
            Some(line) => println!(
                "  {name}'s prompt now, answering \"{line}\" ({} of {} tokens):",
                prompt.tokens, prompt.budget_tokens
            ),
            None => println!(
                "  {name}'s prompt now, having heard nothing yet ({} of {} tokens):",
                prompt.tokens, prompt.budget_tokens
            ),
        }
        let mut section = None;
        for piece in &prompt.pieces {
            if section != Some(piece.section) {
                section = Some(piece.section);
                println!("  [{}]", piece.section.as_str());
            }
            println!("    {}", piece.text);
            println!("        ↳ {}", piece.why);
        }
        if !prompt.trimmed.is_empty() {
            println!("  Dropped to fit the budget:");
            for piece in &prompt.trimmed {
                println!("    [{}] {}", piece.section.as_str(), piece.text);
            }
        }
        Ok(())
    }

    /// `/state`.
    fn state(&self) {
        let w = self.engine.world();
        println!(
            "  {}: {}, branch {}, head seq {}",
            w.meta().map_or("?", |m| m.name.as_str()),
            clock(w.now()),
            self.engine.current_branch(),
            self.engine.head()
        );
        for c in w.containers() {
            let inside: Vec<_> = w.entities_in(c.id).collect();
            let parent = c
                .parent
                .and_then(|p| w.container(p))
                .map_or(String::new(), |p| format!(", in {}", p.name));
            println!("  [{}]{parent}", c.name);
            if inside.is_empty() {
                println!("    no one");
            }
            for e in inside {
                let a = &e.activity;
                let mut parts = Vec::new();
                parts.extend(a.posture.clone());
                parts.extend(a.position.as_ref().and_then(|p| p.slot.clone()));
                parts.extend(a.action.as_ref().map(|x| x.verb.clone()));
                let mut line = format!(
                    "    {}{}: {}",
                    e.name,
                    if e.id == self.player { " (you)" } else { "" },
                    parts.join(", ")
                );
                if let Some(mood) = &e.state.mood {
                    line.push_str(&format!("; mood {mood}"));
                }
                if let Some(status) = &e.state.status {
                    line.push_str(&format!("; {status}"));
                }
                let items: Vec<String> = e.inventory.iter().map(|i| self.name(*i)).collect();
                if !items.is_empty() {
                    line.push_str(&format!("; carries {}", items.join(", ")));
                }
                println!("{line}");
            }
        }
        let off: Vec<String> = w
            .entities()
            .filter(|e| e.activity.position.is_none())
            .map(|e| match w.carrier_of(e.id) {
                Some(c) => format!("{} (carried by {})", e.name, self.name(c)),
                None => e.name.clone(),
            })
            .collect();
        if !off.is_empty() {
            println!("  Off stage: {}", off.join(", "));
        }
        let hearers: Vec<String> = w
            .hearers(self.player)
            .iter()
            .filter(|&h| h != self.player)
            .map(|h| self.name(h))
            .collect();
        println!(
            "  Within earshot of you: {}",
            if hearers.is_empty() {
                "no one".to_string()
            } else {
                hearers.join(", ")
            }
        );
        let on_stage = |id| w.entity(id).is_some_and(|e| e.activity.position.is_some());
        println!("  Relationships of those present (directed):");
        for e in w.edges().filter(|e| on_stage(e.from) && on_stage(e.to)) {
            println!(
                "    {} → {}: affinity {:+.2}, trust {:+.2}. {}",
                self.name(e.from),
                self.name(e.to),
                e.affinity,
                e.trust,
                e.summary
            );
        }
    }

    /// `/go PLACE`.
    fn go(&mut self, arg: &str) -> rp_core::Result<()> {
        let w = self.engine.world();
        let places: Vec<String> = w
            .containers()
            .map(|c| c.key.clone().unwrap_or_else(|| c.name.clone()))
            .collect();
        let wanted = arg.to_lowercase();
        let wanted = wanted.strip_prefix("the ").unwrap_or(&wanted).trim();
        if wanted.is_empty() {
            println!("  /go where? The places: {}.", places.join(", "));
            return Ok(());
        }
        let by_key = w.containers().find(|c| {
            c.key
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case(wanted))
        });
        let by_name: Vec<_> = w
            .containers()
            .filter(|c| c.name.to_lowercase().contains(wanted))
            .collect();
        let place = match (by_key, by_name.as_slice()) {
            (Some(c), _) => c,
            (None, [c]) => *c,
            (None, []) => {
                println!(
                    "  There is no place called {arg:?} here. The places: {}.",
                    places.join(", ")
                );
                return Ok(());
            }
            (None, _) => {
                println!(
                    "  {arg:?} could be more than one place. The places: {}.",
                    places.join(", ")
                );
                return Ok(());
            }
        };
        let Some(me) = w.entity(self.player) else {
            println!("  Wren is not in this world.");
            return Ok(());
        };
        if me.activity.position.as_ref().map(|p| p.container) == Some(place.id) {
            println!("  You are already in {}.", place.name);
            return Ok(());
        }
        let slot = place
            .slots
            .iter()
            .find(|s| {
                s.capacity
                    .is_none_or(|cap| w.occupancy(place.id, &s.name) < cap)
            })
            .map(|s| s.name.clone());
        if slot.is_none() && !place.slots.is_empty() {
            println!("  There is no room in {}.", place.name);
            return Ok(());
        }
        let posture = match place.key.as_deref() {
            Some("bar") => "leaning on the counter",
            Some("booth") => "sitting",
            _ => "standing",
        };
        let activity = Activity {
            position: Some(Position {
                container: place.id,
                slot: slot.clone(),
            }),
            posture: Some(posture.into()),
            action: None,
            ..me.activity.clone()
        };
        let place_name = place.name.clone();
        let to = w.now() + WALK_MS;
        // Whoever was due to speak up does so before Wren leaves.
        self.wake_due(to)?;
        let to = to.max(self.engine.world().now());
        self.engine.append(vec![
            Event::TimeAdvanced { to },
            Event::ActivityChanged {
                entity: self.player,
                activity,
            },
        ])?;
        match slot {
            Some(s) => println!("  You walk over to {place_name} ({s})."),
            None => println!("  You walk over to {place_name}."),
        }
        self.whereabouts();
        Ok(())
    }

    /// `/wait`.
    fn wait(&mut self) -> rp_core::Result<()> {
        let to = self.engine.world().now() + LINE_MS;
        let due = self.wakes.iter().any(|w| w.at <= to);
        self.wake_due(to)?;
        if self.engine.world().now() < to {
            self.engine.append(vec![Event::TimeAdvanced { to }])?;
        }
        if !due {
            println!("  Half a minute passes. The rain keeps on. ({})", clock(to));
        }
        Ok(())
    }

    /// `/rewind [SEQ]`.
    fn rewind(&mut self, arg: &str) -> rp_core::Result<()> {
        let head = self.engine.head();
        if arg.is_empty() {
            let events = self.engine.events(self.floor + 1, head)?;
            let mut choices = Vec::new();
            for (i, (seq, e)) in events.iter().enumerate() {
                if let Event::UserTurn { utterance } = e {
                    // Unsay the line and the clock step committed with it.
                    let before = match i.checked_sub(1).map(|j| &events[j]) {
                        Some((s, Event::TimeAdvanced { .. })) if *s == seq - 1 => seq - 2,
                        _ => seq - 1,
                    };
                    choices.push((before, utterance.text.clone()));
                }
            }
            if choices.is_empty() {
                println!("  The story is at seq {head}; you have not said anything yet.");
                return Ok(());
            }
            println!("  The story is at seq {head}. To unsay a line, rewind to the seq before it:");
            for (seq, text) in &choices[choices.len().saturating_sub(REWIND_CHOICES)..] {
                println!("    /rewind {seq:<5} unsays \"{text}\" and all after it");
            }
            if choices[0].0 != self.floor {
                println!(
                    "    /rewind {:<5} back to the start of the story",
                    self.floor
                );
            }
            return Ok(());
        }
        let Ok(to) = arg.parse::<Seq>() else {
            println!("  /rewind takes a seq number, like /rewind 12; /rewind alone lists them.");
            return Ok(());
        };
        if to < self.floor {
            println!(
                "  Seq {to} is before the story begins: the tavern is set up by seq {}, the \
                 earliest you can rewind to.",
                self.floor
            );
            return Ok(());
        }
        if to > head {
            println!("  Seq {to} is ahead of the story, which is at seq {head}.");
            return Ok(());
        }
        if to == head {
            println!("  Nothing to undo: the story is at seq {head}.");
            return Ok(());
        }
        let preview = self.engine.preview_rewind(to)?;
        let undone = self.engine.events(to + 1, head)?;
        let kinds: Vec<String> = preview
            .events_by_kind
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect();
        let tail = self.engine.rewind(to)?;
        println!(
            "  Rewound from seq {head} to seq {to}: {} events undone ({}).",
            preview.event_count(),
            kinds.join(", ")
        );
        for (_, e) in &undone {
            match e {
                Event::UserTurn { utterance } | Event::AssistantTurn { utterance } => println!(
                    "    unsaid: {}: {}",
                    self.name(utterance.speaker),
                    utterance.text
                ),
                Event::ActivityChanged { entity, .. } => {
                    println!("    undone: {} moving", self.name(*entity))
                }
                _ => {}
            }
        }
        if let Some(tail) = tail {
            println!(
                "  The undone events are kept as branch \"{tail}\" (/branches, /switch {tail})."
            );
        }
        self.refresh()?;
        self.whereabouts();
        Ok(())
    }

    /// `/branches`.
    fn branches(&self) {
        for b in self.engine.branches() {
            let from = match &b.forked_from {
                Some((Some(parent), seq)) => format!(", forked from {parent} at seq {seq}"),
                Some((None, seq)) => format!(", forked at seq {seq}"),
                None => String::new(),
            };
            println!(
                "  {} {} (head seq {}{from})",
                if b.current { "*" } else { " " },
                b.name,
                b.head
            );
        }
    }

    /// `/switch NAME`.
    fn switch(&mut self, arg: &str) -> rp_core::Result<()> {
        if arg.is_empty() {
            println!("  /switch to which branch? /branches lists them.");
            return Ok(());
        }
        if !self.engine.branches().iter().any(|b| b.name == arg) {
            println!("  There is no branch {arg:?}; /branches lists them.");
            return Ok(());
        }
        self.engine.switch_branch(arg)?;
        println!(
            "  Now on branch {} (head seq {}).",
            self.engine.current_branch(),
            self.engine.head()
        );
        self.refresh()?;
        self.recap(3);
        self.whereabouts();
        Ok(())
    }

    /// After the story moved to another point: forget this session's decisions and wake-ups,
    /// and read who said what on this branch from the log.
    fn refresh(&mut self) -> rp_core::Result<()> {
        self.decisions.clear();
        self.wakes.clear();
        self.said.clear();
        for (_, e) in self.engine.events(self.floor + 1, self.engine.head())? {
            if let Event::AssistantTurn { utterance } = e {
                self.said
                    .entry(utterance.speaker)
                    .or_default()
                    .insert(utterance.text);
            }
        }
        Ok(())
    }

    /// The last `n` lines Wren heard.
    fn recap(&self, n: usize) {
        let w = self.engine.world();
        let heard: Vec<_> = w
            .dialogue()
            .filter(|u| u.witnesses.contains(self.player))
            .collect();
        if heard.is_empty() {
            println!("Nothing has been said yet.");
            return;
        }
        println!("The story so far (the last lines you heard):");
        for u in &heard[heard.len().saturating_sub(n)..] {
            println!("  {}: {}", self.name(u.speaker), u.text);
        }
    }

    /// Where Wren is and who hears her.
    fn whereabouts(&self) {
        let w = self.engine.world();
        let Some(me) = w.entity(self.player) else {
            return;
        };
        let place = me
            .activity
            .position
            .as_ref()
            .and_then(|p| w.container(p.container))
            .map_or("nowhere", |c| c.name.as_str());
        let near: Vec<String> = w
            .hearers(self.player)
            .iter()
            .filter(|&h| h != self.player)
            .map(|h| self.name(h))
            .collect();
        let far: Vec<String> = w
            .entities()
            .filter(|e| e.id != self.player && e.activity.position.is_some())
            .filter(|e| !near.contains(&e.name))
            .map(|e| e.name.clone())
            .collect();
        let mut line = format!("You are in {place}");
        if near.is_empty() {
            line.push_str("; no one is within earshot");
        } else {
            line.push_str(&format!("; within earshot: {}", near.join(", ")));
        }
        if !far.is_empty() {
            line.push_str(&format!("; out of earshot: {}", far.join(", ")));
        }
        println!("{line}.");
    }

    /// The entity a player names: by key or name (any case), an alias, or one word of a name.
    /// Prints why not when there is none.
    fn find(&self, arg: &str, command: &str) -> Option<EntityId> {
        let w = self.engine.world();
        let characters: Vec<&str> = w
            .entities()
            .filter(|e| e.activity.position.is_some())
            .map(|e| e.name.as_str())
            .collect();
        if arg.is_empty() {
            println!(
                "  {command} whom? The characters: {}.",
                characters.join(", ")
            );
            return None;
        }
        let a = arg.to_lowercase();
        let found = w
            .find_entity(arg)
            .or_else(|| {
                w.entities()
                    .find(|e| e.aliases.iter().any(|x| x.to_lowercase() == a))
            })
            .or_else(|| {
                let by_word: Vec<_> = w
                    .entities()
                    .filter(|e| e.name.to_lowercase().split_whitespace().any(|p| p == a))
                    .collect();
                match by_word.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                }
            });
        if found.is_none() {
            println!(
                "  No one here is called {arg:?}. The characters: {}.",
                characters.join(", ")
            );
        }
        found.map(|e| e.id)
    }

    fn name(&self, id: EntityId) -> String {
        self.engine
            .world()
            .entity(id)
            .map_or_else(|| format!("entity {}", id.0), |e| e.name.clone())
    }

    /// Says where the story stands on leaving.
    fn leave(&self, save: &Path) {
        if !self.wakes.is_empty() {
            println!("  (Pending wake-ups are not kept: they belong to this session.)");
        }
        println!(
            "Saved in {}: branch {}, head seq {}. Run again to continue the story.",
            save.display(),
            self.engine.current_branch(),
            self.engine.head()
        );
    }
}

/// The last line `entity` heard from someone else.
fn last_heard(w: &World, entity: EntityId) -> Option<String> {
    w.dialogue()
        .rev()
        .find(|u| u.speaker != entity && u.witnesses.contains(entity))
        .map(|u| u.text.clone())
}

/// `text` with its later lines indented under the first.
fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n      ")
}

/// Game time as "day 1, 00:01:30".
fn clock(ms: Millis) -> String {
    let s = ms.max(0) / 1000;
    format!(
        "day {}, {:02}:{:02}:{:02}",
        s / 86_400 + 1,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// Prints replies as their tokens arrive, each after its speaker's name.
struct Stream {
    names: BTreeMap<EntityId, String>,
    speaking: Option<EntityId>,
    typing: Option<Duration>,
}

impl TokenSink for Stream {
    fn token(&mut self, purpose: &Purpose, text: &str) {
        let Some(speaker) = purpose.speaker() else {
            return;
        };
        let mut out = std::io::stdout().lock();
        if self.speaking != Some(speaker) {
            if text.is_empty() {
                return;
            }
            if self.speaking.is_some() {
                let _ = writeln!(out);
            }
            let name = self.names.get(&speaker).map_or("?", String::as_str);
            let _ = write!(out, "{name}: ");
            self.speaking = Some(speaker);
        }
        let _ = write!(out, "{text}");
        let _ = out.flush();
        if let Some(pause) = self.typing {
            std::thread::sleep(pause);
        }
    }
}
