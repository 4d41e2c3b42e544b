//! The commands over the characters' inner life (rp-core's drives): `/wait DURATION` plays
//! host time through [`rp_core::tick::advance`], so a character whose pressure crosses its
//! threshold speaks first and others fall asleep or wake, rules fire or are forgotten and
//! characters learn from how their initiations were answered (docs/rules.md); `/drives NAME`
//! shows what drives a character now; `/why NAME` adds why it last spoke first (kept from the
//! `/wait` that made it) to its last response decision.

use crate::print::{clock, report_updates};
use crate::session::{LINE_MS, Session};
use crate::{Call, Observed, Voices};
use rp_core::tick::{TickOptions, TickOutcome};
use rp_core::turn::{Generate, Purpose, block_on};
use rp_core::{EntityId, Millis, RuleId};
use std::collections::BTreeMap;

/// The longest `/wait`.
const MAX_WAIT_MS: Millis = 48 * 3_600_000;

/// What the session keeps of a character's last initiation: when, to whom, what it said, and
/// why ([`rp_core::drives::Candidate::explain`]).
pub(crate) struct Initiative {
    pub(crate) at: Millis,
    pub(crate) to: EntityId,
    pub(crate) line: String,
    pub(crate) explanation: String,
}

/// Reads a duration the player types: hours, minutes and seconds, largest first (`20m`,
/// `1h30m`, `45s`, `2h`), into milliseconds.
///
/// ```
/// use rp_demo::parse_duration;
/// assert_eq!(parse_duration("20m"), Ok(20 * 60_000));
/// assert_eq!(parse_duration("1h30m"), Ok(90 * 60_000));
/// assert_eq!(parse_duration("45s"), Ok(45_000));
/// assert_eq!(parse_duration("1H 5S"), Ok(3_605_000));
/// assert!(parse_duration("20").is_err());
/// assert!(parse_duration("5m1h").is_err());
/// assert!(parse_duration("0m").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Millis, String> {
    let usage = || format!("{text:?} is not a duration; write one like 20m, 1h30m or 45s");
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    if compact.is_empty() {
        return Err(usage());
    }
    let mut total: Millis = 0;
    let mut number = String::new();
    let mut last_unit = Millis::MAX;
    for c in compact.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit: Millis = match c {
            'h' => 3_600_000,
            'm' => 60_000,
            's' => 1_000,
            _ => return Err(usage()),
        };
        if number.is_empty() || unit >= last_unit {
            return Err(usage());
        }
        let n: Millis = number.parse().map_err(|_| usage())?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or_else(usage)?;
        number.clear();
        last_unit = unit;
    }
    if !number.is_empty() {
        return Err(usage());
    }
    if total == 0 {
        return Err(format!(
            "{text:?} is no time at all; wait at least a second"
        ));
    }
    if total > MAX_WAIT_MS {
        return Err(format!(
            "{text:?} is longer than the demo waits at once (48h); wait in steps"
        ));
    }
    Ok(total)
}

/// `ms` in words: "half a minute", "20 minutes", "1 hour 30 minutes", "45 seconds".
pub(crate) fn span(ms: Millis) -> String {
    if ms == 30_000 {
        return "half a minute".into();
    }
    let s = ms / 1000;
    let plural = |n: Millis, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    let parts: Vec<String> = [
        (s / 3600, "hour"),
        (s / 60 % 60, "minute"),
        (s % 60, "second"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, unit)| plural(n, unit))
    .collect();
    parts.join(" ")
}

/// The calls of a wait split by initiation: each initiation's turn starts with its `initiate`
/// generation and runs until the next one.
fn by_initiation(calls: Vec<Call>) -> Vec<Vec<Call>> {
    let mut out: Vec<Vec<Call>> = Vec::new();
    // Memory work between turns belongs to no initiation.
    for call in calls.into_iter().filter(|c| !c.memory) {
        match (
            matches!(call.purpose, Purpose::Initiate { .. }),
            out.last_mut(),
        ) {
            (false, Some(last)) => last.push(call),
            _ => out.push(vec![call]),
        }
    }
    out
}

impl Session {
    /// `/wait [DURATION]` (half a minute when none is given).
    pub(crate) fn wait(&mut self, arg: &str) -> rp_core::Result<()> {
        let ms = if arg.is_empty() {
            LINE_MS
        } else {
            match parse_duration(arg) {
                Ok(ms) => ms,
                Err(e) => {
                    println!("  {e}.");
                    return Ok(());
                }
            }
        };
        let to = self.engine.world().now() + ms;
        // The wake-ups asked for by $retry, each at its time, with the ticks before it.
        let mut times: Vec<Millis> = self
            .wakes
            .iter()
            .map(|w| w.at)
            .filter(|at| *at <= to)
            .collect();
        times.sort_unstable();
        times.dedup();
        let mut happened = !times.is_empty();
        for at in times {
            let before = (at - 1).max(self.engine.world().now());
            happened |= self.play_ticks(before)?;
            self.wake_due(at)?;
        }
        happened |= self.play_ticks(to)?;
        if !happened {
            let text = span(ms);
            let mut text = text.chars();
            let first = text.next().map(|c| c.to_uppercase().to_string());
            let text = format!("{}{}", first.unwrap_or_default(), text.as_str());
            let one = [LINE_MS, 3_600_000, 60_000, 1_000].contains(&ms);
            println!(
                "  {text} pass{}. The rain keeps on. ({})",
                if one { "es" } else { "" },
                clock(self.engine.world().now())
            );
        } else {
            println!(
                "  ({} passed: {}.)",
                span(ms),
                clock(self.engine.world().now())
            );
        }
        Ok(())
    }

    /// Plays host time to `until`: ticks at each moment something is due, the initiations'
    /// lines asked of the session's voices. Prints what happened; true when anything did.
    fn play_ticks(&mut self, until: Millis) -> rp_core::Result<bool> {
        if until < self.engine.world().now() {
            return Ok(false);
        }
        let options = TickOptions {
            turn: self.options.clone(),
            ..TickOptions::default()
        };
        let scripted;
        let generator: &dyn Generate = match &self.voices {
            Voices::Model(m) => m.generator.as_ref(),
            Voices::Scripted(lines) => {
                scripted = lines.initiations(self.engine.world(), &self.said);
                &scripted
            }
        };
        let observed = Observed::new(generator);
        // The rules' descriptions before the ticks: a rule forgotten in one is gone after it.
        let rules: BTreeMap<RuleId, String> = (self.engine.world().rules())
            .map(|r| (r.id, r.description.clone()))
            .collect();
        let played = block_on(rp_core::tick::advance(
            &mut self.engine,
            until,
            &options,
            &observed,
        ));
        let mut calls = by_initiation(observed.take()).into_iter();
        let outcomes = match played {
            Ok(outcomes) => outcomes,
            Err(e) => {
                self.stats.failed_turns += 1;
                return Err(e);
            }
        };
        let mut happened = false;
        for outcome in &outcomes {
            happened |= self.print_tick(outcome, &rules, &mut calls);
        }
        Ok(happened)
    }

    /// Prints one tick: who fell asleep or woke, which rules fired or were forgotten (`rules`:
    /// their descriptions before the ticks), who held back, what characters learned from the
    /// answers to their initiations, who reflected and what faded, each initiation's line and
    /// the answers to it. True when any of that happened.
    fn print_tick(
        &mut self,
        outcome: &TickOutcome,
        rules: &BTreeMap<RuleId, String>,
        calls: &mut impl Iterator<Item = Vec<Call>>,
    ) -> bool {
        let at = clock(outcome.at);
        let mut happened = false;
        for change in &outcome.changes {
            match change.asleep {
                Some(true) => println!("  ({at}: {} falls asleep.)", self.name(change.entity)),
                Some(false) => println!("  ({at}: {} wakes.)", self.name(change.entity)),
                None => continue,
            }
            happened = true;
        }
        let description = |entity: EntityId, id: RuleId| {
            (self.engine.world().rule(entity, id))
                .map(|r| r.description.clone())
                .or_else(|| rules.get(&id).cloned())
                .unwrap_or_else(|| format!("rule #{}", id.0))
        };
        for (entity, id) in &outcome.rules_fired {
            happened = true;
            println!(
                "  ({at}: {} acts on a rule: {}. /rules {} lists them.)",
                self.name(*entity),
                description(*entity, *id),
                first_word(&self.name(*entity))
            );
        }
        for (entity, id) in &outcome.rules_forgotten {
            happened = true;
            println!(
                "  ({at}: {} forgets a rule, unused too long: {}.)",
                self.name(*entity),
                description(*entity, *id)
            );
        }
        for learned in &outcome.learned {
            happened = true;
            let name = self.name(learned.entity);
            if learned.changes.is_empty() {
                println!("  ({at}: {name}: {}.)", learned.reason);
            } else {
                println!(
                    "  ({at}: {name} learns from it: {}. /why {} says what it changed.)",
                    learned.reason,
                    first_word(&name)
                );
            }
        }
        for (entity, gates) in &outcome.held {
            let closed: Vec<String> = gates
                .iter()
                .filter(|g| !g.open)
                .map(|g| g.detail.clone())
                .collect();
            if !closed.is_empty() {
                println!(
                    "  ({at}: {} meant to speak, but held back: {}.)",
                    self.name(*entity),
                    closed.join("; ")
                );
                happened = true;
            }
        }
        for r in &outcome.reflections {
            happened = true;
            let name = self.name(r.entity);
            if let Some(why) = &r.rejected {
                println!("  ({at}: {name} tries to make sense of things, but cannot: {why}.)");
            }
            for id in &r.insights {
                let text = self
                    .engine
                    .world()
                    .memory(*id)
                    .map_or("", |m| m.text.as_str());
                println!("  ({at}: {name} reflects: \"{text}\")");
            }
        }
        for c in &outcome.classified {
            happened = true;
            let name = self.name(c.entity);
            match (&c.classification, &c.thought) {
                (Some(k), Some(_)) => {
                    println!(
                        "  ({at}: {name} stops to think: {} ({}).)",
                        k.intent, c.reason
                    )
                }
                (Some(k), None) => {
                    println!("  ({at}: {name} takes it for {} ({}).)", k.intent, c.reason)
                }
                (None, _) => println!("  ({at}: {name} cannot make sense of a {}.)", c.kind),
            }
        }
        for (entity, id) in &outcome.thoughts {
            happened = true;
            let text = self
                .engine
                .world()
                .memory(*id)
                .map_or("", |m| m.text.as_str());
            println!("  ({at}: {} thinks: \"{text}\")", self.name(*entity));
        }
        if !outcome.faded.is_empty() || !outcome.summarized.is_empty() {
            happened = true;
            let to = |stage| outcome.faded.iter().filter(|c| c.stage == stage).count();
            println!(
                "  ({at}: memories fade: {} kept only as a summary, {} only as a feeling, {} \
                 forgotten. /memories NAME shows them.)",
                outcome.summarized.len(),
                to(rp_core::DecayStage::Residue),
                to(rp_core::DecayStage::Forgotten),
            );
        }
        for init in &outcome.initiations {
            happened = true;
            let c = &init.candidate;
            let (speaker, to) = (self.name(c.speaker), self.name(c.to));
            let to_you = if c.to == self.player {
                "you".to_string()
            } else {
                to
            };
            println!(
                "  ({at}: {speaker} speaks first, to {to_you}: {}.)",
                c.about.name().replace('_', " ")
            );
            for reply in &init.turn.replies {
                println!("{}: {}", self.name(reply.speaker), reply.text);
                self.said
                    .entry(reply.speaker)
                    .or_default()
                    .insert(reply.text.clone());
            }
            let answered: Vec<String> = init
                .turn
                .replies
                .iter()
                .skip(1)
                .map(|r| self.name(r.speaker))
                .collect();
            let why = first_word(&speaker);
            if !answered.is_empty() {
                println!("  ({} answered.)", answered.join(" and "));
            } else if c.to == self.player {
                println!("  (Spoken to you: answer, or let it be. /why {why} says why.)");
            } else {
                println!("  (No one answered. /why {why} says why.)");
            }
            let calls = calls.next().unwrap_or_default();
            self.stats.record_turn(&init.turn, &calls);
            report_updates(&init.turn, &calls, self.show_updates);
            if let Some(first) = init.turn.replies.first() {
                self.initiations.insert(
                    c.speaker,
                    Initiative {
                        at: outcome.at,
                        to: c.to,
                        line: first.text.clone(),
                        explanation: init.explanation.clone(),
                    },
                );
            }
        }
        happened
    }

    /// `/drives NAME`.
    pub(crate) fn drives(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/drives") else {
            return Ok(());
        };
        let name = self.name(id);
        let w = self.engine.world();
        if w.entity(id).is_some_and(|e| e.host_controlled) {
            println!("  {name} is yours: players have no drives; you decide when Wren speaks.");
            return Ok(());
        }
        if !w.drive_settings(id).enabled {
            println!("  {name} has no drives (drives.enabled = false in the world file).");
            return Ok(());
        }
        let now = w.now();
        let d = self.engine.drives(id, now)?;
        let candidates = self.engine.initiation_candidates(id, now)?;
        println!("  {name}'s drives at {}:", clock(now));
        println!(
            "    energy {:.2}, mode {} (inbox every {})",
            d.energy,
            d.mode.name(),
            span((d.interval_ms / 1000.0).round() as Millis * 1000)
        );
        if d.mode == rp_core::Mode::Sleep {
            println!(
                "    disturbance {:.2} (wakes at {:.2})",
                d.disturbance, d.wake_threshold
            );
        }
        if d.social_debt.is_empty() {
            println!("    social debt: toward no one (knows no one)");
        } else {
            let hearers = self.engine.world().hearers(id);
            let debts: Vec<String> = d
                .social_debt
                .iter()
                .map(|(to, v)| {
                    let away = if hearers.contains(*to) {
                        ""
                    } else {
                        " (out of earshot)"
                    };
                    format!("{} {v:.2}{away}", self.name(*to))
                })
                .collect();
            println!("    social debt: {}", debts.join(", "));
        }
        println!("    task {:.2}, curiosity {:.2}", d.task, d.curiosity);
        println!(
            "    pressure {:.2}, threshold {:.2}",
            d.pressure, d.threshold
        );
        let traits: Vec<String> = d
            .personality
            .traits()
            .iter()
            .filter(|(_, v)| *v != 0.5)
            .map(|(t, v)| format!("{t} {v:.2}"))
            .collect();
        if !traits.is_empty() {
            println!("    personality: {}", traits.join(", "));
        }
        if let Some(until) = d.held_until.filter(|u| *u > now) {
            println!("    held back until {}", clock(until));
        }
        match candidates.first() {
            Some(c) => {
                println!("    top candidate:");
                print_explanation(&c.explain(self.engine.world()), "      ");
            }
            None => {
                println!("    no one {name} knows is within earshot and awake: no one to speak to")
            }
        }
        Ok(())
    }

    /// The second part of `/why NAME`: why `id` last spoke first (from a `/wait` of this
    /// session), or what would make it speak first now.
    pub(crate) fn why_initiative(&mut self, id: EntityId) -> rp_core::Result<()> {
        let name = self.name(id);
        if let Some(i) = self.initiations.get(&id) {
            let to = if i.to == self.player {
                "you".to_string()
            } else {
                self.name(i.to)
            };
            println!(
                "  {name} last spoke first at {}, to {to}: \"{}\"",
                clock(i.at),
                i.line
            );
            print_explanation(&i.explanation, "    ");
            return Ok(());
        }
        let w = self.engine.world();
        if w.mind(id).is_none() || !w.drive_settings(id).enabled {
            return Ok(());
        }
        // Not in this session: the log keeps the initiation (its pressure and threshold).
        let events = self.engine.events(self.floor + 1, self.engine.head())?;
        let last = events.iter().rev().find_map(|(seq, e)| match e {
            rp_core::Event::Initiated { initiation, at } if initiation.speaker == id => {
                Some((*seq, initiation.clone(), *at))
            }
            _ => None,
        });
        if let Some((seq, i, at)) = last {
            let to = if i.to == self.player {
                "you".to_string()
            } else {
                self.name(i.to)
            };
            println!(
                "  {name} last spoke first at {}, to {to}, from the log (seq {seq}): pressure \
                 {:.2} ≥ threshold {:.2}, about {}",
                clock(at),
                i.score,
                i.threshold,
                i.about.name().replace('_', " ")
            );
            println!(
                "    (the log keeps the pressure and what it was about; the full explanation \
                 is kept for initiations in this session)"
            );
            return Ok(());
        }
        let now = w.now();
        let candidates = self.engine.initiation_candidates(id, now)?;
        match candidates.first() {
            Some(c) => {
                println!("  {name} has not spoken first in this session; the strongest pull now:");
                print_explanation(&c.explain(self.engine.world()), "    ");
            }
            None => println!(
                "  {name} has not spoken first in this session, and knows no one within earshot \
                 to speak to."
            ),
        }
        Ok(())
    }
}

fn print_explanation(text: &str, indent: &str) {
    for line in text.lines() {
        println!("{indent}{line}");
    }
}

fn first_word(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_largest_unit_first_and_refuse_the_rest() {
        assert_eq!(parse_duration("2h"), Ok(7_200_000));
        assert_eq!(parse_duration("1h30m15s"), Ok(5_415_000));
        assert_eq!(parse_duration(" 90s "), Ok(90_000));
        for bad in [
            "",
            "m",
            "1x",
            "1h1h",
            "30s1m",
            "-5m",
            "1.5h",
            "49h",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn spans_read_as_words() {
        assert_eq!(span(30_000), "half a minute");
        assert_eq!(span(20 * 60_000), "20 minutes");
        assert_eq!(span(5_400_000), "1 hour 30 minutes");
        assert_eq!(span(1_000), "1 second");
    }
}
