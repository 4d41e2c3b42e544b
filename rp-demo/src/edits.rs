//! The player's hand on the story (docs/edits.md): `/swipe` asks for the last reply again,
//! `/choose N` makes alternative N the line, `/edit SEQ TEXT` and `/delete SEQ` change a past
//! line with the rest of the story kept, each after showing what it will do.

use crate::session::Session;
use rp_core::edit::{EditOptions, EditPreview, OnInvalid};
use rp_core::{Event, UtteranceId};

/// Lines `/edit` and `/delete` list when given no seq.
const LINES_LISTED: usize = 8;

impl Session {
    /// `/swipe`: the last reply asked for again, and every alternative so far.
    pub(crate) fn swipe(&mut self) -> rp_core::Result<()> {
        let heard = self.heard(None);
        let mut scripted = None;
        let generator =
            self.voices
                .speaking(self.engine.world(), &heard, &self.said, &mut scripted);
        let n = match self.engine.swipe_blocking(None, &self.options, generator) {
            Ok(n) => n,
            Err(e) if e.kind() == rp_core::ErrorKind::Conflict => {
                println!("  {e}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        if let Some(line) = self.last_utterance()? {
            self.list_alternatives(line.id);
            // The scripted voices pick a line not said yet: the next swipe gives another.
            if let Some((texts, _)) = self.engine.world().alternatives(line.id) {
                let said = self.said.entry(line.speaker).or_default();
                said.extend(texts.iter().cloned());
            }
        }
        println!("  (Alternative {n} is new; /choose {n} makes it the line.)");
        Ok(())
    }

    /// `/choose N`: alternative N of the last reply becomes the line.
    pub(crate) fn choose(&mut self, arg: &str) -> rp_core::Result<()> {
        let Ok(n) = arg.parse::<usize>() else {
            println!("  /choose takes an alternative's number, as /swipe lists them.");
            return Ok(());
        };
        let Some(line) = self.last_line()? else {
            println!("  No one has said anything yet.");
            return Ok(());
        };
        let heard = self.heard(None);
        let mut scripted = None;
        let generator =
            self.voices
                .speaking(self.engine.world(), &heard, &self.said, &mut scripted);
        match self.engine.choose_blocking(
            line,
            n,
            self.options.clone(),
            generator,
            &mut rp_core::machine::NoSink,
        ) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    rp_core::ErrorKind::NotFound | rp_core::ErrorKind::Conflict
                ) =>
            {
                println!("  {e}");
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        self.refresh()?;
        self.list_alternatives(line);
        Ok(())
    }

    /// `/edit SEQ TEXT`: line SEQ says TEXT, the rest of the story kept.
    pub(crate) fn edit(&mut self, arg: &str) -> rp_core::Result<()> {
        let Some((seq, text)) = arg.split_once(char::is_whitespace) else {
            self.list_lines("/edit SEQ TEXT")?;
            return Ok(());
        };
        self.change_line(seq, Some(text.trim()))
    }

    /// `/delete SEQ`: line SEQ is gone, the rest of the story kept.
    pub(crate) fn delete(&mut self, arg: &str) -> rp_core::Result<()> {
        if arg.is_empty() {
            self.list_lines("/delete SEQ")?;
            return Ok(());
        }
        self.change_line(arg, None)
    }

    fn change_line(&mut self, seq: &str, text: Option<&str>) -> rp_core::Result<()> {
        let Some(line) = seq.parse().ok().and_then(|s| self.line_at(s)) else {
            println!(
                "  Seq {seq} is not a line of this branch; /edit or /delete alone lists them."
            );
            return Ok(());
        };
        let options = EditOptions {
            with_replies: false,
            on_invalid: OnInvalid::Drop,
        };
        let preview = match self.engine.preview_edit(line, text, &options) {
            Ok(p) => p,
            Err(e) if e.kind() == rp_core::ErrorKind::Invalid => {
                println!("  {e}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        print_preview(&preview);
        let done = match text {
            Some(t) => self.engine.edit_line(line, t, &options)?,
            None => self.engine.delete_line(line, &options)?,
        };
        if let Some(old) = done.old_branch {
            println!("  The story as it was is kept as branch \"{old}\" (/switch {old}).");
        }
        self.refresh()?;
        Ok(())
    }

    /// The last line of the branch: the reply swipes are for.
    fn last_line(&self) -> rp_core::Result<Option<UtteranceId>> {
        Ok(self.last_utterance()?.map(|u| u.id))
    }

    fn last_utterance(&self) -> rp_core::Result<Option<rp_core::Utterance>> {
        let head = self.engine.head();
        let events = self.engine.events(self.floor + 1, head)?;
        Ok(events.into_iter().rev().find_map(|(_, e)| match e {
            Event::AssistantTurn { utterance } | Event::UserTurn { utterance } => Some(utterance),
            _ => None,
        }))
    }

    fn list_alternatives(&self, line: UtteranceId) {
        let Some((texts, chosen)) = self.engine.world().alternatives(line) else {
            return;
        };
        for (i, t) in texts.iter().enumerate() {
            let mark = if i == chosen { "*" } else { " " };
            println!("  {mark} {i}: {t}");
        }
    }

    /// The utterance of the line at `seq`, if the event there is a line.
    fn line_at(&self, seq: rp_core::Seq) -> Option<UtteranceId> {
        if seq <= self.floor {
            return None;
        }
        let events = self.engine.events(seq, seq).ok()?;
        events.first().and_then(|(_, e)| match e {
            Event::AssistantTurn { utterance } | Event::UserTurn { utterance } => {
                Some(utterance.id)
            }
            _ => None,
        })
    }

    fn list_lines(&self, usage: &str) -> rp_core::Result<()> {
        let events = self.engine.events(self.floor + 1, self.engine.head())?;
        let lines: Vec<(rp_core::Seq, String)> = events
            .iter()
            .filter_map(|(seq, e)| match e {
                Event::AssistantTurn { utterance } | Event::UserTurn { utterance } => Some((
                    *seq,
                    format!("{}: {}", self.name(utterance.speaker), utterance.text),
                )),
                _ => None,
            })
            .collect();
        if lines.is_empty() {
            println!("  No one has said anything yet.");
            return Ok(());
        }
        println!("  {usage}; the lines by seq:");
        for (seq, text) in &lines[lines.len().saturating_sub(LINES_LISTED)..] {
            println!("    {seq:<5} {text}");
        }
        Ok(())
    }
}

/// What an edit does, as the player reads it before it is made.
fn print_preview(p: &EditPreview) {
    println!(
        "  The edit carries {} later events over as they were, changes {} and drops {}.",
        p.kept,
        p.edited.len(),
        p.dropped.len()
    );
    for n in p.dropped.iter().chain(&p.invalid) {
        println!("    dropped: seq {} ({}): {}", n.seq, n.kind, n.why);
    }
}
