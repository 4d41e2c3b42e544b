//! A character's lorebook timers as the host reads them (docs/cards.md, "Timed effects").

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{EntityId, LoreTimer};

impl Engine {
    /// The sticky and cooldown effects `entity`'s lorebook entries hold (docs/cards.md, "Timed
    /// effects"), as the last turn that built its prompt left them: each with its book, entry
    /// (its index in the book), kind, and the messages it heard when the effect began and when
    /// it ends. An unknown entity is a `not_found` error.
    pub fn lore_timers(&self, entity: EntityId) -> Result<&[LoreTimer]> {
        if self.world().entity(entity).is_none() {
            return Err(Error::not_found("entity", entity.0));
        }
        Ok(self.world().lore_timers(entity))
    }
}
