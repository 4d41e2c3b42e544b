//! Fact sheets as stored: one prose line per fact.

use serde::{Deserialize, Serialize};

/// A fact sheet: the lines of prose (and, from the fact-language issue on, `$if` lines) that
/// describe an entity or a container. Stored as written, one fact per line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FactSheet(pub Vec<String>);

impl FactSheet {
    /// Splits a block of text into fact lines, dropping blank lines and trailing whitespace.
    pub fn from_text(text: &str) -> FactSheet {
        FactSheet(
            text.lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    /// The lines joined by newlines.
    pub fn to_text(&self) -> String {
        self.0.join("\n")
    }

    /// The lines.
    pub fn lines(&self) -> &[String] {
        &self.0
    }

    /// True when the sheet has no facts.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
