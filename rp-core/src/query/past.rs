//! A world query asked about the past (docs/history.md): the entity and memory indexes of a
//! past world, built for the query from that world, so that its search and recall read the
//! world as it was and never the world of today.

use crate::error::{Error, Result};
use crate::log::World;
use crate::memory::{EntityIndex, MemoryIndex, RecallOptions, Recalled};
use crate::model::{EntityId, Millis};
use std::sync::{Mutex, PoisonError};

/// The indexes of a past world (the entity index built at once, the memory index when a
/// recall first needs it).
pub(crate) struct PastIndexes {
    entities: Mutex<EntityIndex>,
    memories: Mutex<Option<MemoryIndex>>,
}

impl std::fmt::Debug for PastIndexes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PastIndexes").finish_non_exhaustive()
    }
}

impl PastIndexes {
    /// The indexes of `world`.
    pub fn build(world: &World) -> Result<PastIndexes> {
        Ok(PastIndexes {
            entities: Mutex::new(EntityIndex::build(world)?),
            memories: Mutex::new(None),
        })
    }

    /// [`crate::Engine::search_entities`] over the past world.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<(EntityId, f32)>> {
        if !(1..=1000).contains(&k) {
            return Err(Error::invalid(
                "entity search",
                format!("k must be 1 to 1000, not {k}"),
            ));
        }
        self.entities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .search(query, k)
    }

    /// [`crate::Engine::recall`] over the past world `world` (the one these indexes are of).
    pub fn recall(
        &self,
        world: &World,
        speaker: EntityId,
        query: &str,
        now: Millis,
        options: &RecallOptions,
    ) -> Result<Vec<Recalled>> {
        let mut memories = self.memories.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match &mut *memories {
            Some(index) => index,
            // Each speaker's memories are taken in on its first recall, not the world's at once.
            None => memories.insert(MemoryIndex::lazy()?),
        };
        crate::memory::recall(world, index, speaker, query, now, options)
    }
}
