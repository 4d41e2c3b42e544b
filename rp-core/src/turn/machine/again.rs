//! A turn's state-update pass asked for again, on lines already said (docs/edits.md,
//! "Swipes"): when another alternative of a reply becomes the line, the pass judged on the old
//! one is dropped and this machine asks for a new one. Nothing else of a turn happens: no
//! responders, no new lines, no memories (the lines' are kept).

use super::{Line, TurnInput, TurnMachine, TurnOptions};
use crate::engine::Engine;
use crate::model::{EntityId, Millis, SceneId, WitnessSet};
use crate::turn::prompt::CharsPerToken;
use std::sync::Arc;

impl TurnMachine {
    /// A machine that asks for the state-update pass of `lines` (speaker, the line as
    /// remembered, "Name: text", who heard it, its scene) at `now`, then commits what it
    /// judged. Done at once when `options` disable the pass or there is no line.
    pub(crate) fn update_again(
        engine: &Engine,
        lines: Vec<(EntityId, String, WitnessSet, Option<SceneId>)>,
        mut options: TurnOptions,
        now: Millis,
    ) -> TurnMachine {
        // The lines' memories are in the world already.
        options.remember_dialogue = false;
        let counter = Arc::new(CharsPerToken(options.prompt.chars_per_token));
        let speaker = lines.first().map_or(EntityId(0), |l| l.0);
        let mut m = TurnMachine::fresh(
            engine,
            TurnInput::wake(speaker, now),
            options,
            counter,
            String::new(),
            None,
        );
        m.lines = lines
            .into_iter()
            .map(|(s, t, w, scene)| -> Line { (s, t, w, None, scene) })
            .collect();
        m.phase = m.after_replies();
        m
    }
}
