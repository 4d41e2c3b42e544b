//! Applying what cards bring (docs/cards.md): a lorebook added, checked before it is kept; a
//! character's lorebook timers.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{EntityId, LoreTimer, Lorebook, regex_key};

impl World {
    /// A lorebook added: read, every regex key compiled as JavaScript's (a key that is not a
    /// JavaScript regular expression is refused with its entry), its owner a known entity.
    pub(super) fn add_lorebook(
        &mut self,
        id: u64,
        owner: Option<EntityId>,
        json: &str,
    ) -> Result<()> {
        self.check_fresh(id)?;
        if let Some(o) = owner {
            self.get_entity(o)?;
        }
        let book = Lorebook::from_json(json)?;
        for (i, e) in book.entries.iter().enumerate() {
            for key in e.keys.iter().chain(&e.secondary_keys) {
                if let Some((source, flags)) = regex_key(key) {
                    crate::facts::JsRegex::compile(source, flags).map_err(|err| {
                        Error::invalid(
                            "lorebook",
                            format!("entry {i}: the key {key} is not a JavaScript regular expression: {err}"),
                        )
                    })?;
                }
            }
        }
        self.take_id(id);
        self.lorebooks.insert(id, (owner, book));
        Ok(())
    }

    /// A character's lorebook timers replaced: each ends after it starts; an empty list
    /// clears them.
    pub(super) fn set_lore_timers(&mut self, entity: EntityId, timers: &[LoreTimer]) -> Result<()> {
        self.get_entity(entity)?;
        if let Some(t) = timers.iter().find(|t| t.end <= t.start) {
            return Err(Error::invalid(
                "lore timers",
                format!(
                    "a timer of entry {} of lorebook {} ends ({}) before it starts ({})",
                    t.entry, t.book, t.end, t.start
                ),
            ));
        }
        if timers.is_empty() {
            self.lore_timers.remove(&entity);
        } else {
            self.lore_timers.insert(entity, timers.to_vec());
        }
        Ok(())
    }
}
