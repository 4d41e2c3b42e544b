//! Applying a card's files (docs/cards.md, "Assets and images"): a file kept at its path,
//! within the bounds a CHARX is read with, and read back by path.

use crate::error::{Error, Result};
use crate::log::World;
use crate::model::EntityId;
use crate::model::card::{MAX_ASSETS_BYTES, MAX_ENTRIES, check_asset_path};

impl World {
    /// A file of `entity`'s card kept at `path` (replacing one there): the path one that stays
    /// inside an archive, the entity's files at most [`MAX_ENTRIES`] and [`MAX_ASSETS_BYTES`]
    /// in all.
    pub(super) fn add_card_asset(
        &mut self,
        entity: EntityId,
        path: &str,
        bytes: &[u8],
    ) -> Result<()> {
        self.get_entity(entity)?;
        check_asset_path(path).map_err(|reason| Error::invalid("card asset", reason))?;
        let mut held = self.card_assets.get(&entity).cloned().unwrap_or_default();
        let replaced = held.files.get(path).map(|b| b.as_slice().len() as u64);
        let count = held.files.len() + usize::from(replaced.is_none());
        if count > MAX_ENTRIES {
            return Err(Error::invalid(
                "card asset",
                format!("{path}: a card holds at most {MAX_ENTRIES} files"),
            ));
        }
        let total =
            (held.total.saturating_sub(replaced.unwrap_or(0))).saturating_add(bytes.len() as u64);
        if total > MAX_ASSETS_BYTES as u64 {
            return Err(Error::invalid(
                "card asset",
                format!("{path}: a card's files come to at most {MAX_ASSETS_BYTES} bytes in all"),
            ));
        }
        held.files.insert(path.to_owned(), bytes.to_vec().into());
        held.total = total;
        self.card_assets.insert(entity, held);
        Ok(())
    }

    /// The files of `entity`'s card (docs/cards.md, "Assets and images"), by path: a CHARX's
    /// files, the card's image.
    pub fn card_assets(&self, entity: EntityId) -> impl Iterator<Item = (&str, &[u8])> + '_ {
        self.card_assets
            .get(&entity)
            .into_iter()
            .flat_map(|held| held.files.iter())
            .map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    /// The file of `entity`'s card at `path`, if there is one.
    pub fn card_asset(&self, entity: EntityId, path: &str) -> Option<&[u8]> {
        self.card_assets
            .get(&entity)
            .and_then(|held| held.files.get(path))
            .map(|b| b.as_slice())
    }
}
