//! Applying the alternatives of a line (docs/edits.md, "Swipes"): checked before they are kept.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::UtteranceId;

/// The most alternatives one line keeps.
pub const MAX_ALTERNATIVES: usize = 64;

impl World {
    /// A line's alternatives set: at least one text, at most [`MAX_ALTERNATIVES`], each within
    /// the size of a line, the chosen one among them and, while the line is in the world's
    /// dialogue, the line's own text.
    pub(super) fn set_alternatives(
        &mut self,
        line: UtteranceId,
        texts: &[String],
        chosen: u32,
    ) -> Result<()> {
        let bad = |reason: String| Err(Error::invalid("alternatives", reason));
        if texts.is_empty() || texts.len() > MAX_ALTERNATIVES {
            return bad(format!(
                "a line has 1 to {MAX_ALTERNATIVES} alternatives, not {}",
                texts.len()
            ));
        }
        if let Some(t) = texts.iter().find(|t| t.len() > crate::log::MAX_TEXT_BYTES) {
            return bad(format!(
                "an alternative of {} bytes is longer than a line ({} bytes)",
                t.len(),
                crate::log::MAX_TEXT_BYTES
            ));
        }
        let Some(text) = texts.get(chosen as usize) else {
            return bad(format!(
                "alternative {chosen} is not among the {} given",
                texts.len()
            ));
        };
        if let Some(u) = self.dialogue.iter().find(|u| u.id == line)
            && u.text != *text
        {
            return bad(format!(
                "the chosen alternative is not the text of line {}",
                line.0
            ));
        }
        self.alternatives.insert(line, (texts.to_vec(), chosen));
        Ok(())
    }
}
