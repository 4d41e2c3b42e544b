//! `/memories NAME`: what a character remembers, each memory with its stage and how well it is
//! kept now (docs/memory.md): whole, reduced to a summary, a residue (a feeling on an edge) or
//! forgotten; reflections with the memories they rest on.

use crate::session::Session;
use rp_core::{DecayStage, Memory, MemoryKind};

/// The most memories listed, newest first.
const SHOWN: usize = 12;
/// The most reflections listed first, newest first.
const REFLECTIONS: usize = 3;

impl Session {
    /// `/memories NAME`.
    pub(crate) fn memories(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some(id) = self.find(arg, "/memories") else {
            return Ok(());
        };
        let name = self.name(id);
        let w = self.engine.world();
        let now = w.now();
        let mut all: Vec<&Memory> = w.memories_of(id).collect();
        if all.is_empty() {
            println!("  {name} remembers nothing yet.");
            return Ok(());
        }
        all.sort_by_key(|m| std::cmp::Reverse((m.created, m.id)));
        let count = |stage: DecayStage| all.iter().filter(|m| m.decay == stage).count();
        println!(
            "  {name} holds {} memories: {} whole, {} summaries, {} residues, {} forgotten.",
            all.len(),
            count(DecayStage::Full),
            count(DecayStage::Summary),
            count(DecayStage::Residue),
            count(DecayStage::Forgotten),
        );
        if let Some(mind) = w.mind(id) {
            let s = w.drive_settings(id);
            println!(
                "  Since {name} last reflected: significance {:.1} of {:.1}.",
                mind.unreflected,
                s.reflect_at(&mind.personality)
            );
        }
        // Its newest reflections first, then its newest memories of any other kind.
        let (reflections, rest): (Vec<&Memory>, Vec<&Memory>) =
            all.iter().partition(|m| m.kind == MemoryKind::Reflection);
        let listed: Vec<&Memory> = reflections
            .iter()
            .take(REFLECTIONS)
            .chain(rest.iter().take(SHOWN))
            .copied()
            .collect();
        for m in &listed {
            let retention = self.engine.retention(m.id, now)?;
            let stage = match m.decay {
                DecayStage::Full => "whole",
                DecayStage::Summary if m.summary.is_none() => "in its scene's summary",
                DecayStage::Summary => "summary",
                DecayStage::Residue => "residue",
                DecayStage::Forgotten => "forgotten",
            };
            let kind = match m.kind {
                MemoryKind::Reflection => {
                    let from: Vec<String> = m.sources.iter().map(|s| s.to_string()).collect();
                    format!(", a reflection on {}", from.join(" "))
                }
                MemoryKind::SceneSummary => ", a scene".into(),
                MemoryKind::EventGist => ", an event's gist".into(),
                MemoryKind::Thought => ", a thought".into(),
                MemoryKind::Utterance => String::new(),
            };
            let text = match m.decay {
                DecayStage::Residue => format!(
                    "(only a feeling left: {} toward {})",
                    m.feeling.as_deref().unwrap_or("nothing"),
                    m.about.map_or_else(|| "no one".into(), |a| self.name(a))
                ),
                DecayStage::Forgotten => "(forgotten)".into(),
                _ if m.pinned => format!("{} (pinned: never fades)", m.shown_text()),
                _ => m.shown_text().to_owned(),
            };
            println!(
                "    {} [{stage}{kind}, retention {retention:.2}] {}",
                m.id,
                cut(&text, 100)
            );
        }
        if all.len() > listed.len() {
            println!("    … and {} more.", all.len() - listed.len());
        }
        Ok(())
    }
}

/// `text` cut to `n` characters.
fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(n - 1).collect();
        s.push('…');
        s
    }
}
