//! `/beliefs NAME`: what a character believes about the people it knows of (docs/beliefs.md):
//! each aspect with how sure it is now, where it comes from and how long ago it was observed,
//! then the words its prompt carries of it.

use crate::drives::span;
use crate::session::Session;
use rp_core::{AspectView, BeliefSource, Millis};

impl Session {
    /// `/beliefs NAME`.
    pub(crate) fn beliefs(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/beliefs") else {
            return Ok(());
        };
        let name = self.name(id);
        let w = self.engine.world();
        let now = w.now();
        let views = w.beliefs_of(id, now);
        if views.is_empty() {
            println!("  {name} believes nothing about anyone yet.");
            return Ok(());
        }
        println!("  What {name} believes, at {}:", crate::print::clock(now));
        for v in &views {
            let who = if v.mentioned {
                format!("{} (only mentioned)", v.name)
            } else {
                v.name.clone()
            };
            let mut parts: Vec<String> = Vec::new();
            if let Some(a) = &v.mood {
                parts.push(self.aspect("mood", &a.value, a, now));
            }
            if let Some(a) = &v.energy {
                parts.push(self.aspect("energy", &format!("{:.2}", a.value), a, now));
            }
            if let Some(a) = &v.availability {
                parts.push(self.aspect("availability", &format!("{:.2}", a.value), a, now));
            }
            for a in &v.traits {
                parts.push(self.aspect("trait", &a.value, a, now));
            }
            for a in &v.feelings {
                let f = &a.value;
                let toward = format!("{:+.1} toward {} {}", f.sentiment, f.toward_name, f.text);
                parts.push(self.aspect("feels", toward.trim_end(), a, now));
            }
            println!("    {who}:");
            for p in parts {
                println!("      {p}");
            }
            if let Some(said) = v.describe(w, now) {
                println!("      in {name}'s prompt: {said}");
            }
        }
        Ok(())
    }

    /// One believed aspect: its value, the confidence now, where from and how long ago.
    fn aspect<T>(&self, what: &str, value: &str, a: &AspectView<T>, now: Millis) -> String {
        let from = match a.source {
            BeliefSource::Observed => "seen".to_string(),
            BeliefSource::ToldBy(by) => format!("told by {}", self.name(by)),
            BeliefSource::Inferred => "inferred".to_string(),
            BeliefSource::Host => "known".to_string(),
        };
        let ago = if now > a.at {
            format!("{} ago", span(now - a.at))
        } else {
            "just now".to_string()
        };
        format!(
            "{what} {value} (sure {:.0} %, {from}, {ago})",
            a.confidence * 100.0
        )
    }
}
