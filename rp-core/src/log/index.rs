//! Lookups derived from the world's records, never serialised, rebuilt after a snapshot load.

use super::World;
use crate::error::{Error, Result};
use crate::model::{ContainerId, EntityId};
use imbl::OrdMap;

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
        Ok(ix)
    }
}
