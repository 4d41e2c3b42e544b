//! Fact sheets as stored: one prose line per fact.

use serde::{Deserialize, Serialize};

/// A fact sheet: the lines of prose (and, from the fact-language issue on, `$if` lines) that
/// describe an entity or a container. Stored as written, one fact per line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FactSheet(pub Vec<String>);

impl FactSheet {
    /// Splits a block of text into fact lines, trimming trailing whitespace and trailing blank
    /// lines. Blank lines inside are kept (they are not facts, but they keep line numbers in
    /// errors and traces equal to the lines of the text).
    pub fn from_text(text: &str) -> FactSheet {
        let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        FactSheet(lines)
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
