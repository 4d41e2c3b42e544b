//! The player's commands: [`HELP`] lists them, and each is a method of [`Session`] here:
//! `/why` (a character's last response decision and its trace, then why it last spoke first),
//! `/prompt` (the prompt a character would be given now, piece by piece), `/state`, `/go`, and
//! the history commands `/rewind`, `/branches` and `/switch` over the engine's branches.
//! `/swipe`, `/choose`, `/edit` and `/delete` are in `edits.rs`. The
//! commands over the drives (`/wait`, `/drives`) are in `drives.rs`, `/memories` in
//! `memories.rs`, `/beliefs` in `beliefs.rs`, `/rules` in `rules.rs`.

use crate::print::clock;
use crate::resolve_entity;
use crate::session::{Session, last_heard};
use rp_core::{Activity, EntityId, Event, Millis, Position, Seq};

/// Game time a walk across the room takes.
const WALK_MS: Millis = 15_000;
/// Player lines `/rewind` offers to unsay.
const REWIND_CHOICES: usize = 5;

/// The commands, as `/help` lists them.
pub const HELP: &str = "\
Type a line to speak as Wren. Commands:
  /why NAME      NAME's last response decision and why (the trace of its fact sheet), and
                 why NAME last spoke first, unasked (during a /wait)
  /prompt NAME   the prompt NAME would be given now: every piece, its section, why it is there
  /state         where everyone is, what they are doing, moods and relationships
  /go PLACE      walk to the bar or back to the booth (who hears you depends on where you are)
  /wait          let half a minute pass (someone who hesitated may speak up)
  /wait DURATION let time pass (20m, 1h30m, 45s): whoever is left alone long enough speaks
                 first; characters fall asleep and wake
  /drives NAME   NAME's drives now: energy, mode, social debt, task, curiosity, pressure,
                 and the strongest pull to speak first, explained
  /memories NAME NAME's memories: each one's stage (whole, summary, residue, forgotten) and
                 how well it is kept now; reflections and what they rest on
  /beliefs NAME  what NAME believes about others (mood, energy, availability, traits, how
                 they feel about a third), how sure it is now and where it comes from
  /rules NAME    NAME's rules: when each fires, what it does, its weight now and its uses;
                 what NAME has in mind, and what it learned from how it was answered
  /rewind        the seqs to rewind to, to unsay each of your recent lines
  /rewind SEQ    rewind the story to just after event SEQ; the undone events stay a branch
  /swipe         ask for the last reply again; every alternative is kept
  /choose N      make alternative N (as /swipe lists them) the last reply
  /edit SEQ TEXT change line SEQ to TEXT, the rest of the story kept (/edit alone lists the
                 lines); what the edit does is shown, the story as it was kept as a branch
  /delete SEQ    take line SEQ out of the story, the rest kept (/delete alone lists them)
  /branches      the branches of the story
  /switch NAME   continue on another branch
  /help          this text
  /quit          leave (the story is saved after every line)";

impl Session {
    /// Runs the command `command` (the line without its `/`); false to stop.
    pub(crate) fn command(&mut self, command: &str) -> rp_core::Result<bool> {
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .map_or((command, ""), |(c, a)| (c, a.trim()));
        match name.to_lowercase().as_str() {
            "why" => self.why(arg)?,
            "prompt" => self.prompt(arg)?,
            "state" => self.state(),
            "go" => self.go(arg)?,
            "wait" => self.wait(arg)?,
            "drives" => self.drives(arg)?,
            "memories" => self.memories(arg)?,
            "beliefs" => self.beliefs(arg)?,
            "rules" => self.rules(arg)?,
            "rewind" => self.rewind(arg)?,
            "swipe" => self.swipe()?,
            "choose" => self.choose(arg)?,
            "edit" => self.edit(arg)?,
            "delete" => self.delete(arg)?,
            "branches" => self.branches(),
            "switch" => self.switch(arg)?,
            "help" | "?" => println!("{HELP}"),
            "quit" | "exit" | "q" => return Ok(false),
            "" => println!("  A command name follows the slash; /help lists them."),
            other => println!("  There is no /{other} command; /help lists the commands."),
        }
        Ok(true)
    }

    /// `/why NAME`: the last response decision, then why NAME last spoke first.
    fn why(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/why") else {
            return Ok(());
        };
        if self
            .engine
            .world()
            .entity(id)
            .is_some_and(|e| e.host_controlled)
        {
            println!(
                "  {} is yours: the engine never decides for the player.",
                self.name(id)
            );
            return Ok(());
        }
        self.why_decision(id)?;
        self.why_initiative(id)
    }

    /// `id`'s last response decision: with its trace when made in this session, else the
    /// outcome and the lines that fired, from the log.
    fn why_decision(&self, id: EntityId) -> rp_core::Result<()> {
        let name = self.name(id);
        let w = self.engine.world();
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
        // Decision points the world declares (docs/requirements.md), while one waits.
        for r in self.engine.requirements().iter().filter(|r| r.pending) {
            println!(
                "  Decision pending: {}: {}",
                r.requirement.name, r.requirement.text
            );
        }
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

    /// The character the player names in `command` ([`resolve_entity`]); prints why not when
    /// there is none (or no name was given), with the characters there are.
    pub(crate) fn find(&self, arg: &str, command: &str) -> Option<EntityId> {
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
        let found = resolve_entity(w, arg);
        if found.is_none() {
            println!(
                "  No one here is called {arg:?}. The characters: {}.",
                characters.join(", ")
            );
        }
        found.map(|e| e.id)
    }
}
