//! `World`: the state of a simulated world, a projection of its event log.

use super::WorldSettings;
use super::index::Index;
use super::table::Table;
use crate::error::{Error, Result};
use crate::facts::{RegexCache, Sheet};
use crate::model::*;
use imbl::Vector;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Facts about the world itself, set by [`crate::Event::WorldCreated`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldMeta {
    /// The world's name.
    pub name: String,
    /// The host clock when it was created.
    pub created: Millis,
    /// Fixed settings.
    pub settings: WorldSettings,
}

/// The world file last applied: the base a newer version of the file is compared with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorldFileBase {
    /// The file name as given.
    pub file: String,
    /// Its text.
    pub text: String,
}

/// The state of a world: entities, containers, edges, groups, memories, recent dialogue and
/// the narrative records, as a projection of the event log.
///
/// [`World::apply`] is the only way to change it. Cloning is cheap (structure is shared), so
/// a batch can be tried on a copy. Its serialised form (see [`World::to_bytes`]) is
/// deterministic: two worlds with the same history serialise to the same bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct World {
    pub(super) meta: Option<WorldMeta>,
    pub(super) now: Millis,
    pub(super) seq: Seq,
    pub(super) next_id: u64,
    pub(super) entities: Table<Entity>,
    pub(super) containers: Table<Container>,
    #[serde(with = "super::edge_rows")]
    pub(super) edges: Table<Edge>,
    pub(super) groups: Table<Group>,
    #[serde(with = "super::memory_rows")]
    pub(super) memories: super::memory_rows::Memories,
    pub(super) dialogue: Vector<Utterance>,
    pub(super) scoped_events: Table<ScopedEvent>,
    pub(super) threads: Table<Thread>,
    pub(super) scenes: Table<Scene>,
    pub(super) world_file: Option<WorldFileBase>,
    /// How many numbers the world's random generator has given out.
    #[serde(default)]
    pub(super) draws_taken: u64,
    /// Each entity's conversation timing (see [`World::speech`]).
    #[serde(default)]
    pub(super) speech: imbl::OrdMap<EntityId, super::Speech>,
    /// System lines not yet shown to a responder.
    #[serde(default)]
    pub(super) system_lines: Vector<SystemLine>,
    /// The world queries asked on this branch.
    #[serde(default)]
    pub(super) queries: Table<crate::model::WorldQuery>,
    /// Whether the world has kept minds since its creation: false in a snapshot written before
    /// drives existed, which opening does not use (it replays the log instead).
    #[serde(default)]
    pub(super) minds_kept: bool,
    /// The inner life of each engine-controlled entity (docs/drives.md).
    #[serde(default)]
    pub(super) minds: imbl::OrdMap<EntityId, Mind>,
    /// The world's drive settings (over the built-in defaults).
    #[serde(default)]
    pub(super) drive_config: DriveConfig,
    /// When each entity last heard another speak, under (hearer, speaker): one entry per
    /// hearer of a line. It is both what the hearer saw of the speaker's availability (a line
    /// heard: available) and, with the other way round, their contact
    /// ([`World::contact`]). Since record format 6; before, a line wrote a contact and a
    /// belief per hearer (benches/README.md, "One entry per hearer").
    #[serde(default, with = "super::pair_rows")]
    pub(super) heard: super::pairs::PairMap<Millis>,
    /// The contacts `heard` no longer shows, once per pair under (lower id, higher id)
    /// ([`super::minds::contact_key`]): a line heard whose entry an initiation unanswered
    /// took over ([`World::see_otherwise`]), or a contact a snapshot of format 5 or older kept
    /// beyond the lines it kept heard. [`World::contact`] reads them beside `heard`.
    #[serde(default, with = "super::pair_rows::contacts")]
    pub(super) contacts: super::pairs::PairMap<Millis>,
    /// What each (observer, observed) pair saw of the observed's availability other than by
    /// hearing it speak (an initiation unanswered), written after the last line the observer
    /// heard from it: a line heard takes the entry out (`World::seen_availability`).
    #[serde(default, rename = "seen", with = "super::pair_rows")]
    pub(super) beliefs: super::pairs::PairMap<Belief>,
    /// A snapshot of format 5 or older keeps every availability seen here, the lines heard
    /// among them: [`World::reindex`] sorts them into `heard` and `beliefs`
    /// ([`World::settle_pairs`]). Never written.
    #[serde(
        default,
        rename = "beliefs",
        skip_serializing,
        deserialize_with = "super::pair_rows::deserialize"
    )]
    pub(super) seen_before_6: super::pairs::PairMap<Belief>,
    /// What the host last reported of an entity's availability (believed by everyone).
    #[serde(default)]
    pub(super) reported: imbl::OrdMap<EntityId, Belief>,
    /// What each (observer, observed) pair believes of the observed person (docs/beliefs.md).
    #[serde(default, with = "super::pair_rows::people")]
    pub(super) people: super::pairs::PairMap<PersonBelief>,
    /// When the last decay pass ran (docs/memory.md); `None` before the first.
    #[serde(default)]
    pub(super) decay_passed: Option<Millis>,
    /// The earliest moment a memory may next cross a stage's threshold: the last pass's
    /// finding, brought forward by memories formed since (`None`: never). A snapshot written
    /// before memories faded has none recorded: a pass is due at once.
    #[serde(default = "super::minds::overdue")]
    pub(super) decay_next: Option<Millis>,
    /// The lorebooks (docs/cards.md), by id: whose (`None`: every character's), and the book.
    #[serde(default)]
    pub(super) lorebooks: imbl::OrdMap<u64, (Option<EntityId>, Lorebook)>,
    /// The alternatives of lines that have more than one (docs/edits.md, "Swipes"): every
    /// text, and which is the line.
    #[serde(default)]
    pub(super) alternatives: imbl::OrdMap<UtteranceId, (Vec<String>, u32)>,
    /// Each character's lorebook timers (docs/cards.md, "Timed effects").
    #[serde(default)]
    pub(super) lore_timers: imbl::OrdMap<EntityId, Vec<LoreTimer>>,
    /// The character card each entity was made from (docs/cards.md), as given.
    #[serde(default)]
    pub(super) cards: imbl::OrdMap<EntityId, String>,
    /// The files of each entity's card (docs/cards.md, "Assets"), by path: a CHARX's assets,
    /// the card's image. A snapshot written before assets were kept has none.
    #[serde(default)]
    pub(super) card_assets: imbl::OrdMap<EntityId, card::CardFiles>,
    /// The rules each character holds (docs/rules.md), by owner and id.
    #[serde(default, with = "super::rules::rule_map")]
    pub(super) rules: imbl::OrdMap<(EntityId, RuleId), Rule>,
    /// The requirements (docs/requirements.md), by id.
    #[serde(default)]
    pub(super) requirements: imbl::OrdMap<String, HeldRequirement>,
    #[serde(skip)]
    pub(super) index: Index,
    #[serde(skip)]
    pub(super) sheets: Sheets,
}

/// Compiled fact sheets of the entities, and the world's regex cache. Derived, not saved.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sheets {
    pub compiled: imbl::OrdMap<EntityId, Arc<Sheet>>,
    pub regexes: RegexCache,
}

impl Sheets {
    /// Compiles `facts`, naming `owner` in the error.
    pub fn compile(&self, owner: &str, facts: &FactSheet) -> Result<Arc<Sheet>> {
        Sheet::compile(facts.lines(), &mut self.regexes.clone())
            .map(Arc::new)
            .map_err(|e| Error::FactSyntax {
                owner: owner.to_owned(),
                line: e.line,
                column: e.column,
                message: e.message,
            })
    }
}

impl World {
    /// An empty world: nothing applied yet. The first event must be
    /// [`crate::Event::WorldCreated`].
    pub fn new() -> World {
        World::default()
    }

    /// The world's name and settings; `None` before `WorldCreated`.
    pub fn meta(&self) -> Option<&WorldMeta> {
        self.meta.as_ref()
    }

    /// The host clock as last advanced.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// How many events have been applied.
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// The id the next created thing should take. Ids must be fresh: at least this value.
    pub fn next_id(&self) -> u64 {
        self.next_id.max(1)
    }

    /// Entities in id order.
    pub fn entities(&self) -> impl DoubleEndedIterator<Item = &Entity> + '_ {
        self.entities.iter()
    }

    /// The lorebooks `entity`'s lore is drawn from: the world's and its own, by id.
    pub fn lorebooks_of(&self, entity: EntityId) -> Vec<(u64, &Lorebook)> {
        self.lorebooks
            .iter()
            .filter(|(_, (owner, _))| owner.is_none_or(|o| o == entity))
            .map(|(id, (_, book))| (*id, book))
            .collect()
    }

    /// Every lorebook, by id, with whose it is.
    pub fn lorebooks(&self) -> impl Iterator<Item = (u64, Option<EntityId>, &Lorebook)> + '_ {
        self.lorebooks
            .iter()
            .map(|(id, (owner, b))| (*id, *owner, b))
    }

    /// The alternatives of `line` (docs/edits.md, "Swipes"): every text the model gave for it
    /// and which one is the line; `None` for a line that has only itself.
    pub fn alternatives(&self, line: UtteranceId) -> Option<(&[String], usize)> {
        self.alternatives
            .get(&line)
            .map(|(texts, chosen)| (texts.as_slice(), *chosen as usize))
    }

    /// `entity`'s lorebook timers: the sticky and cooldown effects it holds (docs/cards.md,
    /// "Timed effects").
    pub fn lore_timers(&self, entity: EntityId) -> &[LoreTimer] {
        self.lore_timers.get(&entity).map_or(&[], Vec::as_slice)
    }

    /// The character card `entity` was made from, as given (docs/cards.md).
    pub fn card_json(&self, entity: EntityId) -> Option<&str> {
        self.cards.get(&entity).map(String::as_str)
    }

    /// The entity with that id.
    pub fn entity(&self, id: EntityId) -> Option<&Entity> {
        self.entities.get(&id)
    }

    /// The entity with that name (case-insensitive).
    pub fn entity_by_name(&self, name: &str) -> Option<&Entity> {
        self.index
            .names
            .get(&name.to_lowercase())
            .and_then(|id| self.entity(*id))
    }

    /// The entity a world file knows by `key`.
    pub fn entity_by_key(&self, key: &str) -> Option<&Entity> {
        self.index
            .entity_keys
            .get(key)
            .and_then(|id| self.entity(*id))
    }

    /// The entity a host names: by world-file key (exact) first, then by name (any case).
    pub fn find_entity(&self, name_or_key: &str) -> Option<&Entity> {
        self.entity_by_key(name_or_key)
            .or_else(|| self.entity_by_name(name_or_key))
    }

    /// Who carries `item`, if anyone.
    pub fn carrier_of(&self, item: EntityId) -> Option<EntityId> {
        self.index.carried_by.get(&item).copied()
    }

    /// Containers in id order.
    pub fn containers(&self) -> impl DoubleEndedIterator<Item = &Container> + '_ {
        self.containers.iter()
    }

    /// The container with that id.
    pub fn container(&self, id: ContainerId) -> Option<&Container> {
        self.containers.get(&id)
    }

    /// The container a world file knows by `key`.
    pub fn container_by_key(&self, key: &str) -> Option<&Container> {
        self.index
            .container_keys
            .get(key)
            .and_then(|id| self.container(*id))
    }

    /// How many entities stand in `slot` of `container`.
    pub fn occupancy(&self, container: ContainerId, slot: &str) -> u32 {
        self.index
            .slot_counts
            .get(&(container, slot.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// The entities positioned in `container` (any slot), in id order.
    pub fn entities_in(&self, container: ContainerId) -> impl Iterator<Item = &Entity> + '_ {
        self.entities.iter().filter(move |e| {
            e.activity
                .position
                .as_ref()
                .is_some_and(|p| p.container == container)
        })
    }

    /// Directed edges in (from, to) order.
    pub fn edges(&self) -> impl DoubleEndedIterator<Item = &Edge> + '_ {
        self.edges.iter()
    }

    /// The edge `from → to`, if any.
    pub fn edge(&self, from: EntityId, to: EntityId) -> Option<&Edge> {
        self.edges.get(&(from, to))
    }

    /// The edges going out of `from`.
    pub fn edges_from(&self, from: EntityId) -> impl DoubleEndedIterator<Item = &Edge> + '_ {
        self.edges
            .range((from, EntityId(0))..=(from, EntityId(u64::MAX)))
    }

    /// Group nodes.
    pub fn groups(&self) -> impl DoubleEndedIterator<Item = &Group> + '_ {
        self.groups.iter()
    }

    /// The group with that id.
    pub fn group(&self, id: GroupId) -> Option<&Group> {
        self.groups.get(&id)
    }

    /// Every memory, of every owner. Prompt and retrieval code must use
    /// [`World::memories_of`], which applies the witness filter.
    pub fn all_memories(&self) -> impl DoubleEndedIterator<Item = &Memory> + '_ {
        self.memories.iter()
    }

    /// The memories `owner` holds and witnessed (the witness filter: docs/architecture.md).
    pub fn memories_of(&self, owner: EntityId) -> impl Iterator<Item = &Memory> + '_ {
        self.index
            .memories_by_owner
            .get(&owner)
            .into_iter()
            .flat_map(|ids| ids.keys())
            .filter_map(|id| self.memories.get(id))
            .filter(move |m| m.owner == owner && m.witnesses.contains(owner))
    }

    /// How many memories `owner` holds, at once (without going through them).
    pub fn memory_count(&self, owner: EntityId) -> u64 {
        self.index
            .memories_by_owner
            .get(&owner)
            .map_or(0, |ids| ids.len() as u64)
    }

    /// The pinned memories and scene summaries `owner` holds and witnessed (what
    /// [`crate::Engine::always_loaded`] chooses from), without going through all its memories.
    pub fn always_loaded_of(&self, owner: EntityId) -> impl Iterator<Item = &Memory> + '_ {
        self.index
            .always_by_owner
            .get(&owner)
            .into_iter()
            .flat_map(|ids| ids.keys())
            .filter_map(|id| self.memories.get(id))
            .filter(move |m| m.owner == owner && m.witnesses.contains(owner))
    }

    /// The memories always in `speaker`'s prompt, outside retrieval: its pinned memories
    /// (oldest first), then its `recent_scenes` most recent scene summaries (newest first).
    /// Only the speaker's own memories, witness-filtered; no query.
    pub fn always_loaded(&self, speaker: EntityId, recent_scenes: usize) -> Result<Vec<MemoryId>> {
        if self.entity(speaker).is_none() {
            return Err(Error::not_found("entity", speaker));
        }
        let mut pinned: Vec<&Memory> = self
            .always_loaded_of(speaker)
            .filter(|m| m.pinned)
            .collect();
        pinned.sort_by_key(|m| (m.created, m.id));
        let mut scenes: Vec<&Memory> = self
            .always_loaded_of(speaker)
            .filter(|m| !m.pinned && m.kind == MemoryKind::SceneSummary && m.recallable())
            .collect();
        scenes.sort_by_key(|m| std::cmp::Reverse((m.created, m.id)));
        scenes.truncate(recent_scenes);
        Ok(pinned.iter().chain(&scenes).map(|m| m.id).collect())
    }

    /// The memory with that id.
    pub fn memory(&self, id: MemoryId) -> Option<&Memory> {
        self.memories.get(&id)
    }

    /// The most recent utterances, oldest first (at most the world's dialogue window).
    pub fn dialogue(&self) -> impl DoubleEndedIterator<Item = &Utterance> + '_ {
        self.dialogue.iter()
    }

    /// Scoped events.
    pub fn scoped_events(&self) -> impl DoubleEndedIterator<Item = &ScopedEvent> + '_ {
        self.scoped_events.iter()
    }

    /// System lines waiting to be shown to a responder, oldest first.
    pub fn system_lines(&self) -> impl DoubleEndedIterator<Item = &SystemLine> + '_ {
        self.system_lines.iter()
    }

    /// Threads.
    pub fn threads(&self) -> impl DoubleEndedIterator<Item = &Thread> + '_ {
        self.threads.iter()
    }

    /// Scenes, open and closed, in id order (the order they opened).
    pub fn scenes(&self) -> impl DoubleEndedIterator<Item = &Scene> + '_ {
        self.scenes.iter()
    }

    /// The scene with that id.
    pub fn scene(&self, id: SceneId) -> Option<&Scene> {
        self.scenes.get(&id)
    }

    /// The open scenes of `container`, oldest first. More than one only while an older scene
    /// waits for its summaries (see [`crate::scene`]).
    pub fn open_scenes_in(&self, container: ContainerId) -> impl Iterator<Item = &Scene> + '_ {
        self.index
            .open_scenes
            .get(&container)
            .into_iter()
            .flat_map(|ids| ids.iter())
            .filter_map(|id| self.scenes.get(id))
    }

    /// Every open scene, in id order.
    pub fn open_scenes(&self) -> impl Iterator<Item = &Scene> + '_ {
        let mut ids: Vec<SceneId> = self
            .index
            .open_scenes
            .values()
            .flat_map(|ids| ids.iter().copied())
            .collect();
        ids.sort();
        ids.into_iter().filter_map(|id| self.scenes.get(&id))
    }

    /// The current scene of `container`: its newest open scene.
    pub fn current_scene(&self, container: ContainerId) -> Option<&Scene> {
        self.index
            .open_scenes
            .get(&container)
            .and_then(|ids| ids.get_max())
            .and_then(|id| self.scenes.get(id))
    }

    /// The current scene of the container `entity` stands in, if it stands in one that has an
    /// open scene.
    pub fn scene_of(&self, entity: EntityId) -> Option<&Scene> {
        let here = self.entity(entity)?.activity.position.as_ref()?.container;
        self.current_scene(here)
    }

    /// The memories of the lines said in `scene` (see [`Memory::scene`]), by id.
    pub fn scene_memories(&self, scene: SceneId) -> impl Iterator<Item = &Memory> + '_ {
        self.index
            .memories_by_scene
            .get(&scene)
            .into_iter()
            .flat_map(|ids| ids.keys())
            .filter_map(|id| self.memories.get(id))
    }

    /// The query with that id.
    pub fn query(&self, id: QueryId) -> Option<&crate::model::WorldQuery> {
        self.queries.get(&id)
    }

    /// Every query, oldest first.
    pub fn queries(&self) -> impl DoubleEndedIterator<Item = &crate::model::WorldQuery> + '_ {
        self.queries.iter()
    }

    /// The `limit` most recent queries, newest first.
    pub fn recent_queries(
        &self,
        limit: usize,
    ) -> impl Iterator<Item = &crate::model::WorldQuery> + '_ {
        self.queries.iter().rev().take(limit)
    }

    /// The compiled fact sheet of an entity.
    pub fn sheet(&self, id: EntityId) -> Option<&Sheet> {
        self.sheets.compiled.get(&id).map(Arc::as_ref)
    }

    /// How many numbers the world's random generator has given out.
    pub fn draws_taken(&self) -> u64 {
        self.draws_taken
    }

    /// The world file last applied, if any.
    pub fn world_file(&self) -> Option<&WorldFileBase> {
        self.world_file.as_ref()
    }

    /// The deterministic serialised form (MessagePack with named fields): equal bytes mean
    /// equal worlds.
    pub fn to_bytes(&self) -> Vec<u8> {
        super::codec::encode_payload(self)
    }

    /// Whether the derived lookups agree with a rebuild from the records (for tests).
    #[doc(hidden)]
    pub fn index_is_consistent(&self) -> bool {
        Index::build(self).is_ok_and(|ix| ix == self.index)
    }

    /// Rebuilds derived lookups and checks every reference, after decoding from a snapshot.
    pub(crate) fn reindex(&mut self) -> Result<()> {
        self.settle_pairs()?;
        let runs = self.memories.take_runs();
        self.index = Index::build_loading(self, runs)?;
        let mut sheets = Sheets::default();
        for e in self.entities.iter() {
            let sheet = sheets.compile(&e.name, &e.facts)?;
            sheets.compiled.insert(e.id, sheet);
        }
        self.sheets = sheets;
        Ok(())
    }
}
