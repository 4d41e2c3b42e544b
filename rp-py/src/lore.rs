//! What lorebooks and cards put in a character's prompt, on `World` (docs/cards.md): its
//! lorebook timers (`lore_timers()`, rp-core's `Engine::lore_timers`) and a card's macros
//! expanded as its prompt expands them (`expand_macros()`, `Engine::expand_macros`).

use pyo3::prelude::*;

use crate::model::{Named, entity_id};
use crate::world::World;

#[pymethods]
impl World {
    /// The sticky and cooldown effects the lorebook entries of ``entity`` (an id, key, name or
    /// alias) hold (docs/cards.md, "Timed effects"), counted in the messages it heard: a list
    /// of ``{"book", "entry", "kind", "start", "end", "protected"}`` (``entry`` the entry's
    /// index in its book, ``kind`` ``"sticky"`` or ``"cooldown"``, holding from ``start``
    /// messages to ``end``, exclusive). Turns record them; empty when none holds.
    ///
    /// Raises ``NotFound`` (entity).
    fn lore_timers<'py>(&self, py: Python<'py>, entity: Named) -> PyResult<Bound<'py, PyAny>> {
        let timers = self.with_engine(py, |engine| {
            let entity = entity_id(engine.world(), &entity)?;
            Ok(engine.lore_timers(entity)?.to_vec())
        })?;
        crate::json::to_py(py, serde_json::to_value(timers))
    }

    /// ``text`` (a card's greeting, say) with the card macros expanded as the prompt of
    /// ``speaker`` expands them now (docs/cards.md, "Macros"): ``{{char}}`` and ``<BOT>`` are
    /// the speaker's name, ``{{user}}`` and ``<USER>`` the name of ``user``; ``{{random:…}}``,
    /// ``{{pick:…}}`` and ``{{roll:…}}`` draw from the world's generator at its position (the
    /// same world, the same text); ``{{// …}}`` is removed. Changes nothing.
    ///
    /// Raises ``NotFound`` (speaker or user).
    #[pyo3(signature = (text, *, speaker, user))]
    fn expand_macros(
        &self,
        py: Python<'_>,
        text: &str,
        speaker: Named,
        user: Named,
    ) -> PyResult<String> {
        self.with_engine(py, |engine| {
            let speaker = entity_id(engine.world(), &speaker)?;
            let user = entity_id(engine.world(), &user)?;
            engine.expand_macros(text, speaker, user)
        })
    }
}
