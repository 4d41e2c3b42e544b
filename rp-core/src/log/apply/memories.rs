//! Applying the records of memories: added, removed, recalled.

use super::{check_text, check_unit};
use crate::error::{Error, Result};
use crate::log::World;
use crate::model::{Memory, MemoryId, Millis};
use std::borrow::Cow;

impl World {
    pub(super) fn add_memory(&mut self, memory: Cow<'_, Memory>) -> Result<()> {
        self.check_fresh(memory.id.0)?;
        self.get_entity(memory.owner)?;
        if !memory.witnesses.contains(memory.owner) {
            return Err(Error::invalid(
                "memory",
                "the owner must be among the witnesses",
            ));
        }
        for w in memory.witnesses.iter() {
            self.get_entity(w)?;
        }
        if memory.text.trim().is_empty() {
            return Err(Error::invalid("memory", "the text is empty"));
        }
        check_text("memory", &memory.text)?;
        check_unit("memory", "significance", memory.significance, 0.0)?;
        if let Some(v) = &memory.embedding {
            crate::model::check_embedding(v).map_err(|m| Error::invalid("memory", m))?;
        }
        if let Some(scene) = memory.scene
            && self.scenes.get(&scene).is_none()
        {
            return Err(Error::not_found("scene", scene));
        }
        self.take_id(memory.id.0);
        self.index.own_memory(&memory, true);
        self.memories.insert(memory.into_owned());
        Ok(())
    }

    /// `memory_removed`: the memory, which must exist, and its place in the indexes.
    pub(super) fn remove_memory(&mut self, id: MemoryId) -> Result<()> {
        let Some(memory) = self.memories.remove(&id) else {
            return Err(Error::not_found("memory", id));
        };
        self.index.own_memory(&memory, false);
        Ok(())
    }

    /// `memories_recalled`: each memory listed once, accessed at `at` (never earlier than before)
    /// and counted.
    pub(super) fn recall_memories(&mut self, ids: &[MemoryId], at: Millis) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for id in ids {
            if !seen.insert(*id) {
                return Err(Error::invalid(
                    "memories recalled",
                    format!("{id} is listed twice"),
                ));
            }
            if self.memories.get(id).is_none() {
                return Err(Error::not_found("memory", id));
            }
        }
        for id in ids {
            if let Some(m) = self.memories.get(id) {
                let mut m = m.clone();
                m.last_accessed = Some(m.last_accessed.map_or(at, |t| t.max(at)));
                m.access_count = m.access_count.saturating_add(1);
                self.memories.insert(m);
            }
        }
        Ok(())
    }
}
