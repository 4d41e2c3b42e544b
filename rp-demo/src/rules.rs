//! `/rules NAME`: the rules a character holds (docs/rules.md): what each one is, when it fires,
//! what it does, its weight now (fading unused, moved by feedback), how often it was used and
//! when it will be forgotten; then the intentions fired rules left in its mind and what it
//! learned from how others answered it.

use crate::print::clock;
use crate::session::Session;
use rp_core::drives::learn::narrative;
use rp_core::{EntityId, Intent, Millis, Rule, RuleSource, Trigger};
use std::collections::BTreeSet;

impl Session {
    /// `/rules NAME`.
    pub(crate) fn rules(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/rules") else {
            return Ok(());
        };
        let name = self.name(id);
        let w = self.engine.world();
        if w.entity(id).is_some_and(|e| e.host_controlled) {
            println!("  {name} is yours: players hold no rules; you decide what Wren does.");
            return Ok(());
        }
        if w.mind(id).is_none() {
            println!("  {name} holds no rules: only the characters the engine plays do.");
            return Ok(());
        }
        let now = w.now();
        let views = self.engine.rules(id, now)?;
        if views.is_empty() {
            println!("  {name} holds no rules.");
        } else {
            println!(
                "  {name}'s rules, at {} ({} of {}):",
                clock(now),
                views.len(),
                rp_core::MAX_RULES
            );
        }
        for v in &views {
            let r = &v.rule;
            println!("    #{} {}", r.id.0, r.description);
            println!("      on:     {}", self.trigger(r));
            if let Some(condition) = &r.condition {
                println!("      if:     {condition}");
            }
            println!("      does:   {}", self.intent(&r.intent));
            let forgotten = v
                .forgotten_at
                .map_or(String::new(), |at| forgotten(at, now));
            println!(
                "      weight: {:.2} now ({:.2} at {}){forgotten}",
                v.weight_now,
                r.weight,
                clock(r.since)
            );
            println!("      {}, {}", uses(r), source(r.source));
        }
        let d = self.engine.drives(id, now)?;
        if !d.intentions.is_empty() {
            println!("  In {name}'s mind:");
            for i in &d.intentions {
                match i.to {
                    Some(to) => println!(
                        "    to talk with {} about {} (weight {:.2}, since {})",
                        self.name(to),
                        i.text,
                        i.weight,
                        clock(i.at)
                    ),
                    None => println!("    {} (since {})", i.text, clock(i.at)),
                }
            }
        }
        for a in &d.awaiting {
            println!(
                "  {name} waits to see how {} takes being spoken to at {}.",
                self.name(a.to),
                clock(a.at)
            );
        }
        let told: BTreeSet<EntityId> = d.learned.iter().map(|l| l.to).collect();
        for to in told {
            if let Some(learned) = narrative(self.engine.world(), id, to, now) {
                println!("  Learned: {learned}.");
            }
        }
        Ok(())
    }

    /// When a rule fires, in words.
    fn trigger(&self, r: &Rule) -> String {
        match &r.trigger {
            Trigger::Stimulus(kind) => {
                format!("each {kind} {name} notices", name = self.name(r.owner))
            }
            Trigger::At(at) => match r.checked {
                Some(when) => format!("once, at {} (spent at {})", clock(*at), clock(when)),
                None => format!("once, at {}", clock(*at)),
            },
        }
    }

    /// What a rule does, in words.
    fn intent(&self, intent: &Intent) -> String {
        match intent {
            Intent::Initiate { to, about } => {
                format!("means to talk with {} about {about}", self.name(*to))
            }
            Intent::Note { text } => format!("keeps in mind: \"{text}\""),
            Intent::Drive { drive, amount } => {
                format!("{} {amount:+.2} × weight", drive.name().replace('_', " "))
            }
        }
    }
}

fn forgotten(at: Millis, now: Millis) -> String {
    if at <= now {
        "; forgotten at the next tick".to_string()
    } else {
        format!("; forgotten unused at {}", clock(at))
    }
}

fn uses(r: &Rule) -> String {
    match (r.uses, r.last_used) {
        (0, _) | (_, None) => "never used".to_string(),
        (1, Some(at)) => format!("used once, at {}", clock(at)),
        (n, Some(at)) => format!("used {n} times, last at {}", clock(at)),
    }
}

fn source(source: RuleSource) -> &'static str {
    match source {
        RuleSource::World => "from the world file",
        RuleSource::Host => "from the host",
        RuleSource::Model => "from the model (a state-update report)",
    }
}
