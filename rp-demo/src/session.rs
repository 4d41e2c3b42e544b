//! [`Session`]: a game in progress, the engine and what the demo keeps beside it (the last
//! response decision of each character, the pending `$retry` wake-ups, what each character has
//! said on this branch, the statistics), and the loop that plays it: each line the player types
//! is a turn ([`Engine::run_turn_blocking`]), each line starting with `/` a command (the
//! commands are in `commands.rs` and, for the drives, `drives.rs`; what they share to print in
//! `print.rs`).

use crate::drives::Initiative;
use crate::print::{Stream, clock, report_updates};
use crate::{Observed, Stats, Voices, check_save};
use rp_core::facts::Decision;
use rp_core::turn::{TurnInput, TurnOptions, TurnOutcome, Wake};
use rp_core::{Engine, EntityId, Event, Millis, Seq, World};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Game time that passes with each line the player says (and with `/wait` without a duration).
pub const LINE_MS: Millis = 30_000;
/// Lines of the story so far a resumed session prints.
const RECAP_LINES: usize = 6;
/// A pause per streamed token, when stdout is a terminal.
const TYPING: Duration = Duration::from_millis(30);

/// The last response decision of a character, with what it weighed.
pub(crate) struct Weighed {
    pub(crate) decision: Decision,
    pub(crate) heard: String,
    pub(crate) mentioned: bool,
    pub(crate) at: Millis,
}

/// A game in progress: the engine and what the demo keeps beside it.
///
/// [`Session::start`] takes an opened (or just created) save, [`Session::run`] plays the lines
/// of the player until they end or `/quit`, [`Session::leave`] says where the story stands and
/// [`Session::print_stats`] what it came to (`--stats`).
pub struct Session {
    pub(crate) engine: Engine,
    /// The save's path, for the player.
    save: PathBuf,
    /// The character the player speaks as (the world's host-controlled entity: Wren).
    pub(crate) player: EntityId,
    pub(crate) options: TurnOptions,
    /// Who speaks for the characters.
    pub(crate) voices: Voices,
    /// The last response decision of each character, made in this session on this branch.
    pub(crate) decisions: BTreeMap<EntityId, Weighed>,
    /// Wake-ups asked for by `$retry`, not yet run.
    pub(crate) wakes: Vec<Wake>,
    /// The last event that sets the tavern up: rewinds stop there.
    pub(crate) floor: Seq,
    /// The lines each character has said on this branch.
    pub(crate) said: BTreeMap<EntityId, HashSet<String>>,
    /// Each character's last initiation in this session on this branch (from `/wait`).
    pub(crate) initiations: BTreeMap<EntityId, Initiative>,
    /// A pause per streamed token (when stdout is a terminal).
    typing: Option<Duration>,
    /// What the session's turns came to (`--stats`).
    pub(crate) stats: Stats,
    /// Print each state-update pass's raw answers and every report's fate (`--show-updates`).
    pub show_updates: bool,
}

impl Session {
    /// Starts playing `engine`, the save at `save`: says who speaks for the characters, then
    /// the story so far (`resumed`) or the tavern's opening, and where the player is. The
    /// player is the world's host-controlled entity; an error when there is none.
    pub fn start(
        engine: Engine,
        voices: Voices,
        save: &Path,
        resumed: bool,
    ) -> Result<Session, Box<dyn std::error::Error>> {
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
        let options = match &voices {
            Voices::Model(m) => {
                println!(
                    "The characters speak through the model at {}; after each turn it reports \
                     what changed (the state-update pass).\n",
                    m.about
                );
                crate::model_options(TurnOptions::default())
            }
            Voices::Scripted(_) => TurnOptions::default(),
        };
        let mut session = Session {
            engine,
            save: save.to_path_buf(),
            player,
            options,
            voices,
            decisions: BTreeMap::new(),
            wakes: Vec::new(),
            floor,
            said: BTreeMap::new(),
            initiations: BTreeMap::new(),
            typing: std::io::stdout().is_terminal().then_some(TYPING),
            stats: Stats::default(),
            show_updates: false,
        };
        session.refresh()?;
        let w = session.engine.world();
        let title = w.meta().map_or("?", |m| m.name.as_str());
        if resumed {
            println!(
                "Resumed {}: {title}, branch {}, head seq {}, {}.",
                save.display(),
                session.engine.current_branch(),
                session.engine.head(),
                clock(w.now())
            );
            session.recap(RECAP_LINES);
        } else {
            println!(
                "{title}: a low-beamed tavern on the salt marsh, a stormy night. You are Wren, \
                 carrying a sealed letter for someone called \"the Ferryman\"."
            );
        }
        session.whereabouts();
        Ok(session)
    }

    /// The engine, and the world it holds.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Plays the lines of `input` until it ends or `/quit`. `interactive` (a terminal): prompt
    /// with `> `; otherwise echo each line after `> `, so a piped session reads as played. A
    /// line that is not UTF-8 is ignored with a message; an error of a turn or command is
    /// printed and play goes on. An `Err` is input or output failing.
    pub fn run(&mut self, input: impl BufRead, interactive: bool) -> std::io::Result<()> {
        println!("Type a line to speak as Wren; /help lists the commands.\n");
        let mut lines = input.lines();
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
                    return Ok(());
                }
                Some(Ok(line)) => line,
                Some(Err(e)) if e.kind() == std::io::ErrorKind::InvalidData => {
                    println!("  That line is not UTF-8 text; it was ignored.");
                    continue;
                }
                Some(Err(e)) => return Err(e),
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if !interactive {
                println!("> {line}");
            }
            match self.handle(line) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => println!("  Error: {e}"),
            }
        }
    }

    /// Runs one line of input: a command, or a line for Wren to say. False to stop.
    pub fn handle(&mut self, line: &str) -> rp_core::Result<bool> {
        let Some(command) = line.strip_prefix('/') else {
            self.say(line)?;
            return Ok(true);
        };
        self.command(command)
    }

    /// Wren says `text`: first whoever was due to speak up does, then the turn runs.
    fn say(&mut self, text: &str) -> rp_core::Result<()> {
        let now = self.engine.world().now() + LINE_MS;
        self.wake_due(now)?;
        let heard = self.heard(Some(text));
        let outcome = self.turn(TurnInput::say(self.player, text, now), &heard)?;
        self.settle(outcome, &heard, true);
        Ok(())
    }

    /// Runs the wake-up turn asked for by `$retry`s due by `now`.
    pub(crate) fn wake_due(&mut self, now: Millis) -> rp_core::Result<()> {
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
        let outcome = self.turn(TurnInput::wake(self.player, at), &heard)?;
        self.settle(outcome, &heard, false);
        Ok(())
    }

    /// The line each character on stage would answer: `input`, or in a wake-up turn the last
    /// line it heard from someone else.
    pub(crate) fn heard(&self, input: Option<&str>) -> BTreeMap<EntityId, String> {
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

    /// Runs a turn, streaming the replies; `heard`: the line each character answers, which
    /// picks its scripted line.
    fn turn(
        &mut self,
        input: TurnInput,
        heard: &BTreeMap<EntityId, String>,
    ) -> rp_core::Result<TurnOutcome> {
        let names = self
            .engine
            .world()
            .entities()
            .map(|e| (e.id, e.name.clone()))
            .collect();
        let mut stream = Stream::new(names, self.typing);
        let mut scripted = None;
        let generator = self
            .voices
            .speaking(self.engine.world(), heard, &self.said, &mut scripted);
        let observed = Observed::new(generator);
        let outcome =
            self.engine
                .run_turn_blocking(input, self.options.clone(), &observed, &mut stream);
        if stream.spoke() {
            println!();
        }
        let calls = observed.take();
        match &outcome {
            Ok(outcome) => {
                self.stats.record_turn(outcome, &calls);
                report_updates(outcome, &calls, self.show_updates);
            }
            Err(_) => self.stats.failed_turns += 1,
        }
        outcome
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

    /// After the story moved to another point: forget this session's decisions and wake-ups,
    /// and read who said what on this branch from the log.
    pub(crate) fn refresh(&mut self) -> rp_core::Result<()> {
        self.decisions.clear();
        self.wakes.clear();
        self.said.clear();
        self.initiations.clear();
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

    /// Says where the story stands on leaving.
    pub fn leave(&self) {
        if !self.wakes.is_empty() {
            println!("  (Pending wake-ups are not kept: they belong to this session.)");
        }
        println!(
            "Saved in {}: branch {}, head seq {}. Run again to continue the story.",
            self.save.display(),
            self.engine.current_branch(),
            self.engine.head()
        );
    }

    /// Closes the save and prints what the session came to (`--stats`, [`Stats::table`]):
    /// turns, replies, state-update passes, whether the save reopens and replays to the world
    /// as played ([`check_save`]), and the wall time since `started`. An error when the save
    /// could not be checked or does not match.
    pub fn print_stats(self, started: Instant) -> Result<(), String> {
        // The save is opened by one engine at a time: keep the world as played, then close it.
        let Session {
            engine,
            save,
            stats,
            ..
        } = self;
        let live = engine.world().clone();
        drop(engine);
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
            Ok(check) if check.ok() => Ok(()),
            Ok(_) => Err("the save does not reopen and replay to the world as played".into()),
            Err(e) => Err(format!("the save could not be checked: {e}")),
        }
    }

    /// The name of `id`, or "entity N" when it is not in the world.
    pub(crate) fn name(&self, id: EntityId) -> String {
        self.engine
            .world()
            .entity(id)
            .map_or_else(|| format!("entity {}", id.0), |e| e.name.clone())
    }
}

/// The last line `entity` heard from someone else.
pub(crate) fn last_heard(w: &World, entity: EntityId) -> Option<String> {
    w.dialogue()
        .rev()
        .find(|u| u.speaker != entity && u.witnesses.contains(entity))
        .map(|u| u.text.clone())
}
