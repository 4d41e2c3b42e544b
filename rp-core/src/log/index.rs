//! Lookups derived from the world's records, never serialised, rebuilt after a snapshot load.

use super::World;
use super::fading::{Fading, Schedule};
use super::layered::Layered;
use crate::error::{Error, Result};
use crate::model::{
    ContainerId, DecayStage, EntityId, Memory, MemoryId, MemoryKind, Millis, SceneId,
};
use imbl::{OrdMap, OrdSet};
use rustc_hash::FxHashMap;
use std::collections::hash_map;

/// A set of memory ids, as each owner's and each scene's are kept: in a sorted array when a
/// snapshot is loaded (built by pushing, not by a million inserts), and in a persistent map
/// for what changes since ([`Layered`]).
pub(crate) type IdSet = Layered<MemoryId, ()>;

/// Derived lookups kept in step by `apply`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Index {
    /// Lower-cased entity name → id.
    pub names: OrdMap<String, EntityId>,
    /// World-file key → entity.
    pub entity_keys: OrdMap<String, EntityId>,
    /// World-file key → container.
    pub container_keys: OrdMap<String, ContainerId>,
    /// (container, slot) → entities in that slot.
    pub slot_counts: OrdMap<(ContainerId, String), u32>,
    /// container → entities positioned in it (any slot).
    pub container_counts: OrdMap<ContainerId, u32>,
    /// container → child containers.
    pub children: OrdMap<ContainerId, u32>,
    /// item → the entity whose inventory holds it.
    pub carried_by: OrdMap<EntityId, EntityId>,
    /// owner → its memories (so one character's memories are found without a scan).
    pub memories_by_owner: OrdMap<EntityId, IdSet>,
    /// owner → its pinned memories and scene summaries (what every prompt loads, found
    /// without going through all its memories).
    pub always_by_owner: OrdMap<EntityId, IdSet>,
    /// container → its open scenes (the newest is its current one).
    pub open_scenes: OrdMap<ContainerId, OrdSet<SceneId>>,
    /// scene → the memories of its lines (compressed when it closes).
    pub memories_by_scene: OrdMap<SceneId, IdSet>,
    /// What fades when ([`Fading`]): the decay pass visits only the memories due, not every
    /// memory.
    pub fading: Fading,
}

impl Index {
    /// Records that `scene` of `container` is open (or no longer is).
    pub fn open_scene(&mut self, container: ContainerId, scene: SceneId, open: bool) {
        match self.open_scenes.get_mut(&container) {
            Some(set) if open => {
                set.insert(scene);
            }
            Some(set) => {
                set.remove(&scene);
                if set.is_empty() {
                    self.open_scenes.remove(&container);
                }
            }
            None if open => {
                self.open_scenes.insert(container, OrdSet::unit(scene));
            }
            None => {}
        }
    }

    /// Records when `memory` next moves on to a later stage, and to which (`None`: it never
    /// will).
    pub fn set_fading(&mut self, memory: &Memory, next: Option<(DecayStage, Millis)>) {
        let due = next.map(|(stage, at)| (at, memory.owner, stage));
        self.fading.set(memory.id, due);
    }

    /// Forgets when memory `id` moves on (it is gone).
    pub fn unset_fading(&mut self, id: MemoryId) {
        self.fading.set(id, None);
    }

    /// Records that `owner` holds `memory` (or no longer does).
    pub fn own_memory(&mut self, memory: &Memory, holds: bool) {
        let (owner, id) = (memory.owner, memory.id);
        add_to_set(&mut self.memories_by_owner, owner, id, holds);
        if memory.pinned || memory.kind == MemoryKind::SceneSummary {
            add_to_set(&mut self.always_by_owner, owner, id, holds);
        }
        if let Some(scene) = memory.scene {
            add_to_set(&mut self.memories_by_scene, scene, id, holds);
        }
    }
}

impl Index {
    /// The memory lookups of `world` (a world being loaded, with none yet) but what fades
    /// when ([`Fading`]), from `runs` if its load gathered them, or the first memory whose
    /// owner is missing.
    ///
    /// What a snapshot's load spends most of its reindexing on. A snapshot's memories are
    /// gathered into runs by the threads that decode them ([`super::memory_rows`]), while each
    /// memory is still in cache; otherwise they are read here on every core (a stretch of them
    /// on each). Each owner's set is made at once from its run, without a look-up per memory
    /// ([`IdSet`]).
    fn index_memories(
        &mut self,
        world: &World,
        runs: Option<MemoryRuns>,
    ) -> std::result::Result<(), (MemoryId, EntityId)> {
        /// Memories per stretch: enough that a stretch costs far more than its thread.
        const STRETCH: usize = 65_536;
        let all = runs.unwrap_or_else(|| {
            let memories: Vec<&Memory> = world.memories.iter().collect();
            let stretches = memories.chunks(STRETCH).collect();
            let mut all = MemoryRuns::default();
            for runs in super::compress::in_parallel(stretches, |part: &[&Memory]| {
                MemoryRuns::of(part.iter().copied())
            }) {
                all.join(runs);
            }
            all
        });
        // The first memory, in id order, whose owner is missing.
        let orphan = all
            .owners
            .iter()
            .filter(|(owner, _)| !world.entities.contains(owner))
            .map(|(owner, ids)| (ids[0].0, *owner))
            .min();
        if let Some(orphan) = orphan {
            return Err(orphan);
        }
        fn sets<K: Ord + Clone>(runs: Runs<K>) -> OrdMap<K, IdSet> {
            // Each run is in id order (chunks or stretches joined in order, each in id order):
            // no sort, no duplicate.
            runs.into_iter()
                .map(|(k, ids)| (k, IdSet::from_sorted(ids)))
                .collect()
        }
        self.memories_by_owner = sets(all.owners);
        self.always_by_owner = sets(all.always);
        self.memories_by_scene = sets(all.scenes);
        Ok(())
    }
}

/// Memory ids gathered by key, each beside `()` as an [`IdSet`] holds it, so that a run
/// becomes its set as it is. Hashed, not ordered: the look-up per memory is most of gathering
/// them, and gathered on the decoding threads in B-trees, a million memories decoded as much
/// slower as the reindex they spared was long; hashed (rustc-hash's hasher, for integer keys),
/// the open at 1M memories is ×0.92 (benches/README.md, "Memories gathered as they decode").
/// The keys are put in order once, with their sets.
type Runs<K> = FxHashMap<K, Vec<(MemoryId, ())>>;

/// Memories gathered into runs by owner, by owner for those every prompt loads (pinned, and
/// scene summaries), and by scene, each run in id order when the memories were given in id
/// order: what a world's memory lookups are built from ([`Index::index_memories`]).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct MemoryRuns {
    owners: Runs<EntityId>,
    always: Runs<EntityId>,
    scenes: Runs<SceneId>,
}

impl MemoryRuns {
    /// The runs of `memories`, in the order given.
    pub(crate) fn of<'a>(memories: impl IntoIterator<Item = &'a Memory>) -> MemoryRuns {
        let mut runs = MemoryRuns::default();
        for m in memories {
            runs.owners.entry(m.owner).or_default().push((m.id, ()));
            if m.pinned || m.kind == MemoryKind::SceneSummary {
                runs.always.entry(m.owner).or_default().push((m.id, ()));
            }
            if let Some(scene) = m.scene {
                runs.scenes.entry(scene).or_default().push((m.id, ()));
            }
        }
        runs
    }

    /// Adds the runs of memories that come after these.
    pub(crate) fn join(&mut self, later: MemoryRuns) {
        fn join<K: Eq + std::hash::Hash>(into: &mut Runs<K>, runs: Runs<K>) {
            for (k, ids) in runs {
                match into.entry(k) {
                    hash_map::Entry::Occupied(e) => e.into_mut().extend(ids),
                    hash_map::Entry::Vacant(e) => {
                        e.insert(ids);
                    }
                }
            }
        }
        join(&mut self.owners, later.owners);
        join(&mut self.always, later.always);
        join(&mut self.scenes, later.scenes);
    }
}

/// Takes `id` out of `key`'s set in `map`.
pub(crate) fn drop_from_set<K: Ord + Clone>(map: &mut OrdMap<K, IdSet>, key: K, id: MemoryId) {
    add_to_set(map, key, id, false);
}

fn add_to_set<K: Ord + Clone>(map: &mut OrdMap<K, IdSet>, owner: K, id: MemoryId, holds: bool) {
    // In place: a set copied out and back would copy its nodes on every change.
    match map.get_mut(&owner) {
        Some(set) if holds => {
            set.insert(id, ());
        }
        Some(set) => {
            set.remove(&id);
            if set.is_empty() {
                map.remove(&owner);
            }
        }
        None if holds => {
            map.insert(owner, IdSet::unit(id, ()));
        }
        None => {}
    }
}

pub(crate) fn bump<K: Ord + Clone>(map: &mut OrdMap<K, u32>, key: K, up: bool) {
    let n = map.get(&key).copied().unwrap_or(0);
    let n = if up { n + 1 } else { n.saturating_sub(1) };
    if n == 0 {
        map.remove(&key);
    } else {
        map.insert(key, n);
    }
}

impl Index {
    /// Builds the index of `world`, failing if the records contradict each other (a decoded
    /// snapshot from a damaged or forged file).
    pub fn build(world: &World) -> Result<Index> {
        Ok(Index {
            fading: Fading::Ready(Schedule::of(world)),
            ..Index::build_without_fading(world, None)?
        })
    }

    /// [`Index::build`] for a world just loaded, which does not wait for what fades when: it
    /// is built on another thread ([`Fading::load`]). `runs` are its memories' runs, if its
    /// load gathered them.
    pub fn build_loading(world: &World, runs: Option<MemoryRuns>) -> Result<Index> {
        let ix = Index::build_without_fading(world, runs)?;
        Ok(Index {
            fading: Fading::load(world),
            ..ix
        })
    }

    /// [`Index::build`] but what fades when.
    fn build_without_fading(world: &World, runs: Option<MemoryRuns>) -> Result<Index> {
        let bad = |reason: String| Error::invalid("snapshot", reason);
        let mut ix = Index::default();
        for c in world.containers.iter() {
            if let Some(key) = &c.key
                && ix.container_keys.insert(key.clone(), c.id).is_some()
            {
                return Err(bad(format!("container key {key:?} is used twice")));
            }
            if let Some(p) = c.parent {
                if !world.containers.contains(&p) {
                    return Err(bad(format!("{} has a missing parent {p}", c.id)));
                }
                bump(&mut ix.children, p, true);
            }
        }
        for e in world.entities.iter() {
            if ix.names.insert(e.name.to_lowercase(), e.id).is_some() {
                return Err(bad(format!("the name {:?} is used twice", e.name)));
            }
            if let Some(key) = &e.key
                && ix.entity_keys.insert(key.clone(), e.id).is_some()
            {
                return Err(bad(format!("entity key {key:?} is used twice")));
            }
            if let Some(pos) = &e.activity.position {
                let c = world
                    .containers
                    .get(&pos.container)
                    .ok_or_else(|| bad(format!("{} stands in a missing container", e.id)))?;
                if let Some(slot) = &pos.slot {
                    if c.slot(slot).is_none() {
                        return Err(bad(format!("{} stands in a missing slot", e.id)));
                    }
                    bump(&mut ix.slot_counts, (pos.container, slot.clone()), true);
                }
                bump(&mut ix.container_counts, pos.container, true);
            }
            for item in &e.inventory {
                if !world.entities.contains(item) || ix.carried_by.insert(*item, e.id).is_some() {
                    return Err(bad(format!("{item} is missing or carried twice")));
                }
            }
        }
        // Containers inside each other and entities carrying each other in a loop would make
        // later walks up those chains endless.
        let containers = world.containers.len();
        for c in world.containers.iter() {
            let mut at = c.parent;
            for _ in 0..=containers {
                at = match at {
                    Some(p) => world.containers.get(&p).and_then(|x| x.parent),
                    None => break,
                };
            }
            if at.is_some() {
                return Err(bad(format!("{} is inside itself", c.id)));
            }
        }
        let entities = world.entities.len();
        for e in world.entities.iter() {
            let mut at = ix.carried_by.get(&e.id).copied();
            for _ in 0..=entities {
                at = match at {
                    Some(c) => ix.carried_by.get(&c).copied(),
                    None => break,
                };
            }
            if at.is_some() {
                return Err(bad(format!("{} carries itself through others", e.id)));
            }
        }
        ix.index_memories(world, runs)
            .map_err(|(m, owner)| bad(format!("{m} belongs to a missing {owner}")))?;
        for s in world.scenes.iter() {
            if let Some(w) = s.witnesses.iter().find(|w| !world.entities.contains(w)) {
                return Err(bad(format!("{} has a missing witness {w}", s.id)));
            }
            if s.is_open() {
                if !world.containers.contains(&s.container) {
                    return Err(bad(format!("{} is open in a missing container", s.id)));
                }
                ix.open_scene(s.container, s.id, true);
            }
        }
        if world.seq == u64::MAX || world.next_id == u64::MAX {
            return Err(bad("the sequence or id counter is exhausted".into()));
        }
        Ok(ix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Event, WorldSettings};
    use crate::model::*;

    fn world() -> World {
        let mut w = World::new();
        w.apply(&Event::WorldCreated {
            name: "W".into(),
            now: 0,
            settings: WorldSettings::default(),
        })
        .unwrap();
        for id in [1, 2] {
            w.apply(&Event::ContainerCreated {
                id: ContainerId(id),
                key: None,
                name: format!("c{id}"),
                facts: FactSheet::default(),
                parent: None,
                slots: vec![],
                properties: ContainerProperties::default(),
            })
            .unwrap();
        }
        for id in [3, 4] {
            w.apply(&Event::EntityCreated {
                id: EntityId(id),
                key: None,
                name: format!("e{id}"),
                aliases: vec![],
                facts: FactSheet::default(),
                host_controlled: false,
                state: EntityState::default(),
            })
            .unwrap();
        }
        w
    }

    #[test]
    fn memories_are_found_by_owner_and_orphans_are_refused() {
        let mut w = world();
        let memory = |id: u64, owner: u64| Memory {
            id: MemoryId(id),
            owner: EntityId(owner),
            witnesses: WitnessSet::from_iter([EntityId(owner)]),
            text: format!("memory {id}"),
            kind: MemoryKind::Reflection,
            significance: 0.5,
            created: 0,
            last_accessed: None,
            access_count: 0,
            decay: DecayStage::Full,
            pinned: false,
            embedding: None,
            scene: None,
            stability: 0.0,
            summary: None,
            feeling: None,
            about: None,
            sources: Vec::new(),
        };
        for (id, owner) in [(5, 3), (6, 4), (7, 3)] {
            w.apply(&Event::MemoryAdded {
                memory: memory(id, owner),
            })
            .unwrap();
        }
        let of = |w: &World, owner| -> Vec<u64> {
            w.memories_of(EntityId(owner)).map(|m| m.id.0).collect()
        };
        assert_eq!((of(&w, 3), of(&w, 4)), (vec![5, 7], vec![6]));
        w.apply(&Event::MemoryRemoved { id: MemoryId(5) }).unwrap();
        assert_eq!(of(&w, 3), vec![7]);
        assert_eq!(Index::build(&w).unwrap(), w.index);
        // A forged snapshot holding a memory of an entity that does not exist.
        w.memories.insert(memory(8, 99));
        assert!(
            Index::build(&w)
                .unwrap_err()
                .to_string()
                .contains("missing")
        );
    }

    /// A world with memories of two owners interleaved, pinned memories and scene summaries,
    /// fading at times out of id order, and removals.
    fn remembering_world() -> World {
        let mut w = world();
        for id in 10..200u64 {
            w.apply(&Event::MemoryAdded {
                memory: numbered_memory(id),
            })
            .unwrap();
        }
        for id in (10..200u64).step_by(3) {
            w.apply(&Event::MemoryRemoved { id: MemoryId(id) }).unwrap();
        }
        w
    }

    fn numbered_memory(id: u64) -> Memory {
        let owner = 3 + id % 2;
        Memory {
            kind: if id.is_multiple_of(7) {
                MemoryKind::SceneSummary
            } else {
                MemoryKind::Utterance
            },
            pinned: id.is_multiple_of(5),
            significance: (id % 10) as f64 / 10.0,
            ..Memory::new(
                MemoryId(id),
                EntityId(owner),
                WitnessSet::from_iter([EntityId(owner)]),
                format!("memory {id}"),
                MemoryKind::Utterance,
                0.5,
                ((id * 7919) % 1000) as i64 * 60_000,
            )
        }
    }

    #[test]
    fn the_memory_lookups_built_at_once_are_the_ones_apply_keeps() {
        // Each map is built in its own key order.
        let w = remembering_world();
        assert!(!w.index.fading.schedule().is_empty() && !w.index.always_by_owner.is_empty());
        assert_eq!(Index::build(&w).unwrap(), w.index);
    }

    /// Added, removed and recalled memories, a memory that moves on, and time enough for
    /// most of `remembering_world`'s memories to fade.
    fn memory_changes() -> [Event; 4] {
        [
            Event::MemoryAdded {
                memory: numbered_memory(500),
            },
            Event::MemoryRemoved { id: MemoryId(11) },
            Event::MemoriesRecalled {
                ids: vec![MemoryId(14), MemoryId(15)],
                at: 90_000,
            },
            Event::TimeAdvanced { to: 400_000_000 },
        ]
    }

    #[test]
    fn a_loaded_world_schedules_its_fading_on_another_thread_as_apply_would() {
        let mut kept = remembering_world();
        let mut loaded =
            crate::log::codec::decode_snapshot(&crate::log::codec::encode_snapshot(&kept), "test")
                .unwrap();
        assert!(matches!(loaded.index.fading, Fading::Loading { .. }));
        // Changes at once, while the schedule may still be on its way.
        let events = memory_changes();
        for event in &events {
            kept.apply(event).unwrap();
            loaded.apply(event).unwrap();
        }
        assert_eq!(loaded.index, kept.index);
        let due = |w: &World| w.fading_by(400_000_000);
        assert!(!due(&kept).is_empty());
        assert_eq!(due(&loaded), due(&kept));
        // Memories due are summarised (they move on to their summary stage).
        let summaries: Vec<MemorySummary> = due(&kept)
            .into_iter()
            .filter(|(_, owner, _)| *owner == EntityId(3))
            .take(5)
            .map(|(id, _, _)| MemorySummary {
                id,
                text: format!("in short, {id}"),
                feeling: None,
                about: None,
            })
            .collect();
        assert_eq!(summaries.len(), 5);
        let pass = Event::MemoriesSummarized {
            owner: EntityId(3),
            at: 400_000_000,
            summaries,
        };
        kept.apply(&pass).unwrap();
        loaded.apply(&pass).unwrap();
        assert_eq!(loaded.index, kept.index);
        assert_eq!(due(&loaded), due(&kept));
        assert_eq!(loaded.next_fading_after(0), kept.next_fading_after(0));
    }

    #[test]
    fn a_replay_that_puts_off_what_fades_when_reads_as_one_that_kept_it() {
        let mut kept = remembering_world();
        // One replay read before it ends (its schedule built then from the world it started
        // from and the changes since), one not read until its schedule is built at the end.
        let (mut read, mut unread) = (kept.clone(), kept.clone());
        for w in [&mut read, &mut unread] {
            assert!(w.defer_fading());
            assert!(!w.defer_fading(), "put off once");
        }
        let due = |w: &World| w.fading_by(400_000_000);
        let events = memory_changes();
        for (i, event) in events.iter().enumerate() {
            for w in [&mut kept, &mut read, &mut unread] {
                w.apply(event).unwrap();
            }
            if i == 1 {
                assert_eq!(due(&read), due(&kept));
                assert_eq!(read.next_fading_after(0), kept.next_fading_after(0));
            }
        }
        assert!(matches!(unread.index.fading, Fading::Loading { .. }));
        for w in [&mut read, &mut unread] {
            w.schedule_fading();
            assert_eq!(w.index, kept.index);
            assert_eq!(due(w), due(&kept));
            assert_eq!(w.next_fading_after(0), kept.next_fading_after(0));
        }
        assert!(!due(&kept).is_empty());
    }

    #[test]
    fn a_snapshot_builds_its_memory_lookups_from_the_runs_its_chunks_gave() {
        // More memories than a chunk holds, of two owners interleaved, with pinned ones, scene
        // summaries and memories of scenes (put in as a forged snapshot would: no scene is
        // checked).
        let mut w = world();
        for id in 10..40_000u64 {
            w.memories.insert(Memory {
                scene: (id % 3 == 0).then_some(SceneId(id % 7)),
                ..numbered_memory(id)
            });
        }
        w.index = Index::build(&w).unwrap();
        assert!(!w.index.memories_by_scene.is_empty() && !w.index.always_by_owner.is_empty());
        let codec = crate::log::codec::encode_snapshot(&w);
        let loaded = crate::log::codec::decode_snapshot(&codec, "test").unwrap();
        assert_eq!(loaded.index, w.index);
        // A memory of an entity that does not exist is refused from the runs as it was from
        // the memories: the first such memory is named.
        for (id, owner) in [(40_003, 99), (40_001, 98), (40_002, 99)] {
            w.memories.insert(Memory {
                owner: EntityId(owner),
                ..numbered_memory(id)
            });
        }
        let e = crate::log::codec::decode_snapshot(&crate::log::codec::encode_snapshot(&w), "t")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("memory#40001 belongs to a missing entity#98"),
            "{e}"
        );
    }

    // Forged snapshots (their checksums can be made right) must not smuggle in states that
    // `apply` could never build and that would make its walks endless or its counters wrap.
    #[test]
    fn a_snapshot_with_containers_inside_each_other_is_refused() {
        let mut w = world();
        w.containers.get_mut(&ContainerId(1)).unwrap().parent = Some(ContainerId(2));
        w.containers.get_mut(&ContainerId(2)).unwrap().parent = Some(ContainerId(1));
        assert!(
            Index::build(&w)
                .unwrap_err()
                .to_string()
                .contains("inside itself")
        );
    }

    #[test]
    fn a_snapshot_with_entities_carrying_each_other_is_refused() {
        let mut w = world();
        w.entities.get_mut(&EntityId(3)).unwrap().inventory = vec![EntityId(4)];
        w.entities.get_mut(&EntityId(4)).unwrap().inventory = vec![EntityId(3)];
        assert!(
            Index::build(&w)
                .unwrap_err()
                .to_string()
                .contains("carries itself")
        );
    }

    #[test]
    fn exhausted_counters_are_refused_not_wrapped() {
        let mut w = world();
        w.seq = u64::MAX;
        assert!(Index::build(&w).is_err());
        assert!(w.apply(&Event::TimeAdvanced { to: 1 }).is_err());
        let mut w = world();
        w.draws_taken = u64::MAX;
        let decided = Event::ResponseDecided {
            entity: EntityId(3),
            respond: true,
            retry_ms: None,
            fired: vec![],
            draws: vec![0.5],
        };
        let before = w.to_bytes();
        assert!(w.apply(&decided).is_err());
        assert_eq!(w.to_bytes(), before);
    }
}
