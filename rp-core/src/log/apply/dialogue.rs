//! Applying the records of what is said: the player's and the characters' lines, the scenes
//! they join (opened, closed), and the system lines injected into prompts.

use super::{check_text, check_texts};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{DecayStage, Millis, Scene, SceneId, SystemLine, Utterance};
use std::borrow::Cow;

impl World {
    pub(super) fn add_utterance(
        &mut self,
        utterance: Cow<'_, Utterance>,
        user: bool,
    ) -> Result<()> {
        self.check_utterance(&utterance, user)?;
        if let Some(id) = utterance.scene {
            let scene = self
                .scenes
                .get(&id)
                .ok_or_else(|| Error::not_found("scene", id))?;
            if !scene.is_open() {
                return Err(Error::conflict(format!(
                    "{id} is closed; a line cannot join it"
                )));
            }
            let scene = self.scenes.get_mut(&id).expect("checked above");
            scene.lines = scene.lines.saturating_add(1);
            scene.last_line = Some(
                scene
                    .last_line
                    .map_or(utterance.at, |t| t.max(utterance.at)),
            );
            scene.witnesses.extend(utterance.witnesses.iter());
        }
        self.take_id(utterance.id.0);
        self.note_utterance(utterance.speaker, utterance.at, &utterance.witnesses);
        self.minds_hear(
            utterance.speaker,
            utterance.at,
            &utterance.witnesses,
            &utterance.text,
        );
        self.dialogue.push_back(utterance.into_owned());
        let window = self
            .meta
            .as_ref()
            .map_or(0, |m| m.settings.dialogue_window as usize);
        while self.dialogue.len() > window {
            self.dialogue.pop_front();
        }
        Ok(())
    }

    fn check_utterance(&self, u: &Utterance, user: bool) -> Result<()> {
        self.check_fresh(u.id.0)?;
        self.check_not_mentioned(u.speaker, "utterance")?;
        for w in u.witnesses.iter() {
            self.check_not_mentioned(w, "utterance")?;
        }
        let speaker = self.get_entity(u.speaker)?;
        if speaker.host_controlled != user {
            return Err(Error::invalid(
                "utterance",
                if user {
                    format!(
                        "{} is not host-controlled; its lines are assistant turns",
                        speaker.name
                    )
                } else {
                    format!(
                        "{} is host-controlled; the engine never speaks for it",
                        speaker.name
                    )
                },
            ));
        }
        if !u.witnesses.contains(u.speaker) {
            return Err(Error::invalid(
                "utterance",
                "the speaker must be among the witnesses",
            ));
        }
        for w in u.witnesses.iter() {
            self.get_entity(w)?;
        }
        check_text("utterance", &u.text)?;
        check_texts("utterance", u.model.iter())
    }

    pub(super) fn open_scene(&mut self, scene: &Scene) -> Result<()> {
        self.check_fresh(scene.id.0)?;
        self.get_container(scene.container)?;
        if scene.closed.is_some() || scene.lines != 0 || scene.last_line.is_some() {
            return Err(Error::invalid(
                "scene",
                "a scene opens open, with no lines yet",
            ));
        }
        for w in scene.witnesses.iter() {
            self.get_entity(w)?;
        }
        self.take_id(scene.id.0);
        self.index.open_scene(scene.container, scene.id, true);
        self.scenes.insert(scene.clone());
        Ok(())
    }

    /// `scene_closed`: an open scene closed at `at`; its witnesses' summaries stand for its
    /// lines from now on.
    pub(super) fn close_scene(&mut self, id: SceneId, at: Millis) -> Result<()> {
        let scene = self
            .scenes
            .get(&id)
            .ok_or_else(|| Error::not_found("scene", id))?;
        if let Some(closed) = scene.closed {
            return Err(Error::conflict(format!(
                "{id} is already closed (at {closed})"
            )));
        }
        if at < scene.opened {
            return Err(Error::invalid(
                "scene",
                format!(
                    "{id} cannot close at {at}, before it opened ({})",
                    scene.opened
                ),
            ));
        }
        let container = scene.container;
        self.index.open_scene(container, id, false);
        if let Some(scene) = self.scenes.get_mut(&id) {
            scene.closed = Some(at);
        }
        // Its witnesses' summaries stand for its lines from now on.
        let lines = self.index.memories_by_scene.get(&id).cloned();
        for m in lines.iter().flat_map(|ids| ids.keys()) {
            if let Some(memory) = self.memories.get_mut(m)
                && memory.decay == DecayStage::Full
            {
                memory.decay = DecayStage::Summary;
                self.refade(*m);
            }
        }
        Ok(())
    }

    /// `system_line_injected`: a line for the next prompts of its audience.
    pub(super) fn add_system_line(&mut self, line: &SystemLine) -> Result<()> {
        self.check_fresh(line.id)?;
        check_text("system line", &line.text)?;
        if line.text.trim().is_empty() {
            return Err(Error::invalid("event", "a system line is empty"));
        }
        if line.audience.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::invalid(
                "event",
                "a system line's audience is empty: no prompt would ever carry it",
            ));
        }
        for e in line.audience.iter().flatten() {
            self.get_entity(*e)?;
        }
        self.take_id(line.id);
        self.system_lines.push_back(line.clone());
        Ok(())
    }

    /// `system_lines_shown`: the lines shown to a responder, no longer carried.
    pub(super) fn clear_shown_system_lines(&mut self, ids: &[u64]) -> Result<()> {
        for id in ids {
            if !self.system_lines.iter().any(|l| l.id == *id) {
                return Err(Error::not_found("system line", id));
            }
        }
        self.system_lines.retain(|l| !ids.contains(&l.id));
        Ok(())
    }
}
