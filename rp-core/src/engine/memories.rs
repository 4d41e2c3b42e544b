//! Memories through the engine: forming, removing and recalling them, with the memory index
//! kept in step with the world.

use super::Engine;
use crate::error::Result;
use crate::log::Event;
use crate::memory::{self, EntityIndex, NewMemory, RecallOptions, Recalled};
use crate::model::{EntityId, Memory, MemoryId, Millis, Seq, WitnessSet};

impl Engine {
    /// Forms a memory (one [`Event::MemoryAdded`]); returns its id. The owner and every
    /// witness must exist; the text must not be empty; significance is 0–1.
    pub fn add_memory(&mut self, new: NewMemory) -> Result<MemoryId> {
        let id = MemoryId(self.world.next_id());
        let mut witnesses: WitnessSet = new.witnesses.iter().copied().collect();
        witnesses.insert(new.owner);
        let memory = Memory {
            pinned: new.pinned,
            embedding: new.embedding,
            sources: new.sources,
            ..Memory::new(
                id,
                new.owner,
                witnesses,
                new.text,
                new.kind,
                new.significance,
                new.created.unwrap_or(self.world.now()),
            )
        };
        self.append(vec![Event::MemoryAdded { memory }])?;
        Ok(id)
    }

    /// The memories always in `speaker`'s prompt, outside retrieval: its pinned memories
    /// (oldest first), then its `recent_scenes` most recent scene summaries (newest first).
    /// Like recall, only the speaker's own memories; unlike recall, no query.
    pub fn always_loaded(&self, speaker: EntityId, recent_scenes: usize) -> Result<Vec<MemoryId>> {
        self.world.always_loaded(speaker, recent_scenes)
    }

    /// How well `memory` is kept at `now` (docs/memory.md): its retention, 0–1, read from its
    /// stability and when it was last recalled, without ticking. 1 for a pinned memory or an
    /// event's gist, which never fade. `now` before the memory formed reads as when it formed.
    pub fn retention(&self, memory: MemoryId, now: Millis) -> Result<f64> {
        let m = self
            .world
            .memory(memory)
            .ok_or_else(|| crate::Error::not_found("memory", memory))?;
        let base = self.world.drive_settings(m.owner).memory_stability_ms();
        Ok(m.retention(base, now))
    }

    /// Removes a memory (one [`Event::MemoryRemoved`]); returns the new head.
    pub fn remove_memory(&mut self, id: MemoryId) -> Result<Seq> {
        self.append(vec![Event::MemoryRemoved { id }])
    }

    /// The memories `speaker` recalls for `query` at `now`: see [`memory::recall`]. Only
    /// `speaker`'s own memories can come back, on the current branch as it is now. Reading
    /// only: record what a turn used with [`Engine::mark_recalled`].
    ///
    /// The memory index is loaded on the first recall from beside the save (a save in a file:
    /// `SAVE.index`) and caught up with the log, or, when there is none to use (and after a
    /// rewind or a branch switch), built again one speaker at a time: each speaker's memories
    /// on its first recall. Then it is kept in step with every event appended (docs/memory.md,
    /// "The index beside the save").
    pub fn recall(
        &mut self,
        speaker: EntityId,
        query: &str,
        now: Millis,
        options: &RecallOptions,
    ) -> Result<Vec<Recalled>> {
        self.recall_skipping(speaker, query, now, options, &|_| false)
    }

    /// [`Engine::recall`] leaving out the memories `skip` says, before ranking.
    pub(crate) fn recall_skipping(
        &mut self,
        speaker: EntityId,
        query: &str,
        now: Millis,
        options: &RecallOptions,
        skip: &dyn Fn(&Memory) -> bool,
    ) -> Result<Vec<Recalled>> {
        options.check()?;
        let _span = tracing::info_span!("recall", speaker = speaker.0).entered();
        self.memory_index_ready()?;
        self.cover_in_index(speaker)?;
        let index = self.memory_index.as_mut().expect("made ready");
        memory::recall_skipping(&self.world, index, speaker, query, now, options, skip)
    }

    /// Records that `ids` were recalled at `at` (one [`Event::MemoriesRecalled`]): each one's
    /// last-accessed time and access count, which recency and decay read. Returns the new
    /// head; an empty list records nothing.
    pub fn mark_recalled(&mut self, ids: &[MemoryId], at: Millis) -> Result<Seq> {
        if ids.is_empty() {
            return Ok(self.head());
        }
        self.append(vec![Event::MemoriesRecalled {
            ids: ids.to_vec(),
            at,
        }])
    }

    /// The `k` entities (1–1000) whose names, aliases or facts best match `query`, best
    /// first, with their scores; a word of a name or alias counts three times a word of the
    /// facts. `query` is words, never query syntax. This is the host's search over the whole
    /// world, not any character's knowledge.
    pub fn search_entities(&mut self, query: &str, k: usize) -> Result<Vec<(EntityId, f32)>> {
        if !(1..=1000).contains(&k) {
            return Err(crate::Error::invalid(
                "entity search",
                format!("k must be 1 to 1000, not {k}"),
            ));
        }
        let index = match &mut self.entity_index {
            Some(index) => index,
            None => self.entity_index.insert(EntityIndex::build(&self.world)?),
        };
        index.search(query, k)
    }

    /// Keeps the indexes in step with `events`, just applied to the world; drops one (to be
    /// rebuilt from the world when next needed) if that fails or cannot be done from the
    /// events alone (removing an entity removes its memories without events of their own).
    pub(super) fn index_events(&mut self, events: &[Event]) {
        if self.memory_index.is_some() {
            let payload = events.last().map(|last| self.index_payload_after(last));
            let index = self.memory_index.as_mut().expect("checked");
            let mut ok = super::memory_files::index_memory_events(index, &self.world, events);
            if let Some(p) = payload {
                index.set_payload(p);
            }
            // Commits once enough has gathered, so the in-memory delta stays small even
            // when nothing recalls for a while.
            ok = ok && index.refresh().is_ok();
            if !ok {
                self.memory_index = None;
            }
        }
        if events.iter().any(|e| {
            matches!(
                e,
                Event::EntityCreated { .. }
                    | Event::PersonMentioned { .. }
                    | Event::EntityEdited { .. }
                    | Event::EntityRemoved { .. }
            )
        }) {
            self.lore_index = None;
            self.definition_index = None;
        }
        if let Some(graph) = &mut self.relationship_graph {
            let graph = std::sync::Arc::make_mut(graph);
            for e in events {
                match e {
                    Event::EntityCreated { id, .. } | Event::PersonMentioned { id, .. } => {
                        graph.add_entity(*id)
                    }
                    Event::EntityRemoved { id } => graph.remove_entity(*id),
                    Event::EdgeUpdated { edge } => graph.add_edge(edge.from, edge.to),
                    Event::EdgeRemoved { from, to } => graph.remove_edge(*from, *to),
                    _ => {}
                }
            }
        }
        if let Some(index) = &mut self.entity_index {
            let mut ok = true;
            for e in events {
                match e {
                    Event::EntityCreated { id, .. }
                    | Event::PersonMentioned { id, .. }
                    | Event::EntityEdited { id, .. } => match self.world.entity(*id) {
                        Some(entity) => ok &= index.put(entity).is_ok(),
                        None => index.remove(*id),
                    },
                    Event::EntityRemoved { id } => index.remove(*id),
                    _ => {}
                }
            }
            if !ok {
                self.entity_index = None;
            }
        }
    }

    /// Where the memory index came from (`None` before the first recall, or after a rewind or
    /// a branch switch until the next): loaded from beside the save and caught up, built there
    /// (with why the one there could not be used), or built in memory.
    pub fn memory_index_origin(&self) -> Option<crate::memory::IndexOrigin> {
        self.memory_index.as_ref().map(|i| i.origin().clone())
    }

    /// Forgets the indexes: the world was replaced (rewind, branch switch, resync).
    pub(super) fn drop_memory_index(&mut self) {
        self.epoch += 1;
        self.memory_index = None;
        self.entity_index = None;
        self.lore_index = None;
        self.relationship_graph = None;
        self.definition_index = None;
    }

    /// The relationship graph of the world (built when first needed, then kept in step with
    /// every event appended).
    pub(crate) fn relationship_graph(&mut self) -> std::sync::Arc<crate::graph::RelationshipGraph> {
        self.relationship_graph
            .get_or_insert_with(|| {
                std::sync::Arc::new(crate::graph::RelationshipGraph::build(&self.world))
            })
            .clone()
    }

    /// The entity kinds of the world (built when first needed, kept until an entity changes).
    pub(crate) fn definition_index(&mut self) -> std::sync::Arc<crate::lore::DefinitionIndex> {
        self.definition_index
            .get_or_insert_with(|| {
                std::sync::Arc::new(crate::lore::DefinitionIndex::build(self.world.entities()))
            })
            .clone()
    }

    /// Relationship queries over the current world (see [`crate::graph`]); the graph is built
    /// once and kept in step with every event appended.
    pub fn relationships(&mut self) -> crate::graph::Relationships<'_> {
        let graph = self.relationship_graph();
        crate::graph::Relationships::with(&self.world, graph)
    }

    /// The lore keys of the world's entities (built when first needed, kept until an entity
    /// changes).
    pub(crate) fn lore_index(&mut self) -> std::sync::Arc<crate::lore::LoreIndex> {
        self.lore_index
            .get_or_insert_with(|| std::sync::Arc::new(crate::lore::LoreIndex::build(&self.world)))
            .clone()
    }
}
