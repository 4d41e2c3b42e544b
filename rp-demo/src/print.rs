//! What the session prints beside the commands' own answers: replies as their tokens stream
//! in ([`Stream`]), game time ([`clock`]), where the player is and who hears them, the story so
//! far, and what became of a state-update pass.

use crate::Call;
use crate::session::Session;
use rp_core::turn::{Purpose, TokenSink, TurnOutcome};
use rp_core::{EntityId, Millis};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

/// Game time as "day 1, 00:01:30".
///
/// ```
/// assert_eq!(rp_demo::clock(90_000), "day 1, 00:01:30");
/// assert_eq!(rp_demo::clock(86_400_000 + 3_600_000), "day 2, 01:00:00");
/// ```
pub fn clock(ms: Millis) -> String {
    let s = ms.max(0) / 1000;
    format!(
        "day {}, {:02}:{:02}:{:02}",
        s / 86_400 + 1,
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

/// `text` with its later lines indented under the first.
pub(crate) fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n      ")
}

/// Prints replies to stdout as their tokens arrive, each after its speaker's name.
pub(crate) struct Stream {
    names: BTreeMap<EntityId, String>,
    speaking: Option<EntityId>,
    typing: Option<Duration>,
}

impl Stream {
    /// A stream naming speakers from `names`, pausing `typing` after each token.
    pub(crate) fn new(names: BTreeMap<EntityId, String>, typing: Option<Duration>) -> Stream {
        Stream {
            names,
            speaking: None,
            typing,
        }
    }

    /// Whether a reply was printed (its line is then still open).
    pub(crate) fn spoke(&self) -> bool {
        self.speaking.is_some()
    }
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

/// After a turn with a state-update pass: what became of its reports (each one, and the
/// model's raw answers, with `show_updates`).
pub(crate) fn report_updates(outcome: &TurnOutcome, calls: &[Call], show_updates: bool) {
    let updates: Vec<&Call> = calls.iter().filter(|c| c.is_update()).collect();
    if updates.is_empty() {
        return;
    }
    if show_updates {
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

impl Session {
    /// The last `n` lines Wren heard.
    pub(crate) fn recap(&self, n: usize) {
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
    pub(crate) fn whereabouts(&self) {
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
}
