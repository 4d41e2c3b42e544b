//! Applying the records of entities: created, edited, removed, where each stands and what it
//! holds and carries, its state. The checks that keep an entity in one place at a time live
//! here.

use super::{check_facts, check_name, check_text, check_texts, distinct};
use crate::error::{Error, Result};
use crate::log::World;
use crate::log::index::bump;
use crate::model::{Activity, Entity, EntityId, EntityState, FactSheet, MIN_GROUP_SIZE, Position};
use std::borrow::Cow;

impl World {
    /// `entity_created`: a new entity, its name, key and fact sheet indexed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn create_entity(
        &mut self,
        id: EntityId,
        key: &Option<String>,
        name: &str,
        aliases: &[String],
        facts: &FactSheet,
        host_controlled: bool,
        state: &EntityState,
    ) -> Result<()> {
        self.check_fresh(id.0)?;
        self.check_entity_identity(None, name, aliases, facts)?;
        self.check_state(state)?;
        let sheet = self.sheets.compile(name, facts)?;
        if let Some(k) = key {
            check_name("entity key", k)?;
            if self.index.entity_keys.contains_key(k) {
                return Err(Error::conflict(format!(
                    "an entity with the key {k:?} already exists"
                )));
            }
            self.index.entity_keys.insert(k.clone(), id);
        }
        self.index.names.insert(name.to_lowercase(), id);
        self.sheets.compiled.insert(id, sheet);
        self.take_id(id.0);
        self.entities.insert(Entity {
            id,
            key: key.clone(),
            name: name.to_owned(),
            aliases: aliases.to_vec(),
            facts: facts.clone(),
            host_controlled,
            state: state.clone(),
            activity: Activity::default(),
            inventory: Vec::new(),
            mentioned: false,
        });
        if !host_controlled {
            self.add_mind(id);
        }
        Ok(())
    }

    /// `entity_edited`: the fields given replace the entity's, its indexes follow.
    pub(super) fn edit_entity(
        &mut self,
        id: EntityId,
        name: &Option<String>,
        aliases: &Option<Vec<String>>,
        facts: &Option<FactSheet>,
        host_controlled: Option<bool>,
    ) -> Result<()> {
        let current = self.get_entity(id)?;
        let new_name = name.as_ref().unwrap_or(&current.name);
        let new_aliases = aliases.as_ref().unwrap_or(&current.aliases);
        let new_facts = facts.as_ref().unwrap_or(&current.facts);
        self.check_entity_identity(Some(id), new_name, new_aliases, new_facts)?;
        let sheet = match facts {
            Some(f) => Some(self.sheets.compile(new_name, f)?),
            None => None,
        };
        let old_name = current.name.to_lowercase();
        if let Some(sheet) = sheet {
            self.sheets.compiled.insert(id, sheet);
        }
        if let Some(n) = name {
            self.index.names.remove(&old_name);
            self.index.names.insert(n.to_lowercase(), id);
        }
        let e = self.entity_mut(id)?;
        if let Some(n) = name {
            e.name = n.clone();
        }
        if let Some(a) = aliases {
            e.aliases = a.clone();
        }
        if let Some(f) = facts {
            e.facts = f.clone();
        }
        if let Some(h) = host_controlled {
            e.host_controlled = h;
            if !h {
                self.add_mind(id);
            }
        }
        Ok(())
    }

    pub(super) fn remove_entity(&mut self, id: EntityId) -> Result<()> {
        let e = self.get_entity(id)?;
        if !e.inventory.is_empty() {
            return Err(Error::conflict(format!(
                "{} still carries items; move them out first",
                e.name
            )));
        }
        if let Some(carrier) = self.carrier_of(id) {
            return Err(Error::conflict(format!(
                "{} is carried by {carrier}; take it out of the inventory first",
                e.name
            )));
        }
        let e = self.entities.remove(&id).expect("checked above");
        self.sheets.compiled.remove(&id);
        self.speech.remove(&id);
        self.remove_mind(id);
        self.remove_beliefs(id);
        self.cards.remove(&id);
        self.lore_timers.remove(&id);
        self.card_assets.remove(&id);
        let owned: Vec<u64> = (self.lorebooks.iter())
            .filter(|(_, (owner, _))| *owner == Some(id))
            .map(|(b, _)| *b)
            .collect();
        for b in owned {
            self.lorebooks.remove(&b);
        }
        self.index.names.remove(&e.name.to_lowercase());
        if let Some(k) = &e.key {
            self.index.entity_keys.remove(k);
        }
        self.track_position(e.activity.position.as_ref(), false);
        let edges: Vec<_> = self
            .edges
            .iter()
            .filter(|x| x.from == id || x.to == id)
            .map(|x| (x.from, x.to))
            .collect();
        for k in edges {
            self.edges.remove(&k);
        }
        let groups: Vec<_> = self
            .groups
            .iter()
            .filter(|g| g.members.contains(&id))
            .map(|g| g.id)
            .collect();
        for g in groups {
            let group = self.groups.get_mut(&g).expect("listed above");
            group.members.remove(&id);
            if group.members.len() < MIN_GROUP_SIZE {
                self.groups.remove(&g);
            }
        }
        let memories: Vec<_> = self
            .memories
            .iter()
            .filter(|m| m.owner == id)
            .map(|m| m.id)
            .collect();
        for m in memories {
            self.index.unset_fading(m);
            if let Some(memory) = self.memories.remove(&m)
                && let Some(scene) = memory.scene
            {
                crate::log::index::drop_from_set(&mut self.index.memories_by_scene, scene, m);
            }
        }
        let scenes: Vec<_> = self
            .scenes
            .iter()
            .filter(|s| s.witnesses.contains(id))
            .map(|s| s.id)
            .collect();
        for s in scenes {
            if let Some(scene) = self.scenes.get_mut(&s) {
                scene.witnesses.remove(id);
            }
        }
        self.index.memories_by_owner.remove(&id);
        self.index.always_by_owner.remove(&id);
        let attending: Vec<_> = self
            .entities
            .iter()
            .filter(|x| x.activity.attention == Some(id))
            .map(|x| x.id)
            .collect();
        for x in attending {
            self.entity_mut(x)?.activity.attention = None;
        }
        Ok(())
    }

    pub(super) fn change_activity(
        &mut self,
        entity: EntityId,
        activity: Cow<'_, Activity>,
    ) -> Result<()> {
        self.check_activity(entity, &activity)?;
        let old = self.get_entity(entity)?.activity.position.clone();
        self.track_position(old.as_ref(), false);
        self.track_position(activity.position.as_ref(), true);
        self.entity_mut(entity)?.activity = activity.into_owned();
        Ok(())
    }

    /// `inventory_changed`: what the entity carries, and who carries each item.
    pub(super) fn change_inventory(
        &mut self,
        entity: EntityId,
        inventory: &[EntityId],
    ) -> Result<()> {
        self.check_inventory(entity, inventory)?;
        let old = std::mem::take(&mut self.entity_mut(entity)?.inventory);
        for item in &old {
            self.index.carried_by.remove(item);
        }
        for item in inventory {
            self.index.carried_by.insert(*item, entity);
        }
        self.entity_mut(entity)?.inventory = inventory.to_vec();
        Ok(())
    }

    pub(super) fn change_state(
        &mut self,
        entity: EntityId,
        state: Cow<'_, EntityState>,
    ) -> Result<()> {
        self.get_entity(entity)?;
        self.check_state(&state)?;
        self.entity_mut(entity)?.state = state.into_owned();
        Ok(())
    }

    pub(super) fn entity_mut(&mut self, id: EntityId) -> Result<&mut Entity> {
        self.entities
            .get_mut(&id)
            .ok_or_else(|| Error::not_found("entity", id))
    }

    fn check_entity_identity(
        &self,
        id: Option<EntityId>,
        name: &str,
        aliases: &[String],
        facts: &FactSheet,
    ) -> Result<()> {
        check_name("entity", name)?;
        if let Some(other) = self.index.names.get(&name.to_lowercase())
            && Some(*other) != id
        {
            return Err(Error::conflict(format!(
                "an entity named {name:?} already exists ({other})"
            )));
        }
        for a in aliases {
            check_name("alias", a)?;
        }
        check_facts("entity", facts)
    }

    fn check_state(&self, state: &EntityState) -> Result<()> {
        check_texts("state", state.mood.iter())?;
        check_texts("state", state.status.iter())?;
        check_texts("state", &state.goals)
    }

    fn check_activity(&self, id: EntityId, activity: &Activity) -> Result<()> {
        let entity = self.get_entity(id)?;
        if let Some(pos) = &activity.position {
            self.check_not_mentioned(id, "activity")?;
            if let Some(carrier) = self.carrier_of(id) {
                return Err(Error::conflict(format!(
                    "{} is carried by {carrier}; an entity cannot be in two places",
                    entity.name
                )));
            }
            let c = self.get_container(pos.container)?;
            if let Some(slot_name) = &pos.slot {
                let slot = c.slot(slot_name).ok_or_else(|| {
                    Error::not_found("slot", format!("{slot_name:?} in {}", c.name))
                })?;
                let already_there = entity.activity.position.as_ref() == Some(pos);
                if let Some(cap) = slot.capacity
                    && !already_there
                    && self.occupancy(pos.container, slot_name) >= cap
                {
                    return Err(Error::SlotFull {
                        container: c.name.clone(),
                        slot: slot_name.clone(),
                        capacity: cap,
                    });
                }
            }
        }
        distinct("activity", &activity.holding)?;
        for item in &activity.holding {
            if !entity.inventory.contains(item) {
                return Err(Error::invalid(
                    "activity",
                    format!(
                        "{} cannot hold {item}: it is not in its inventory",
                        entity.name
                    ),
                ));
            }
        }
        if let Some(a) = activity.attention {
            self.get_entity(a)?;
        }
        if let Some(action) = &activity.action {
            if action.verb.trim().is_empty() {
                return Err(Error::invalid("activity", "the action has no verb"));
            }
            check_text("activity", &action.verb)?;
        }
        check_texts("activity", activity.posture.iter())?;
        check_texts("activity", activity.status.iter())
    }

    pub(super) fn track_position(&mut self, pos: Option<&Position>, up: bool) {
        if let Some(p) = pos {
            bump(&mut self.index.container_counts, p.container, up);
            if let Some(slot) = &p.slot {
                bump(&mut self.index.slot_counts, (p.container, slot.clone()), up);
            }
        }
    }

    fn check_inventory(&self, id: EntityId, inventory: &[EntityId]) -> Result<()> {
        let entity = self.get_entity(id)?;
        distinct("inventory", inventory)?;
        for item in inventory {
            let it = self.get_entity(*item)?;
            if *item == id {
                return Err(Error::invalid(
                    "inventory",
                    format!("{} cannot carry itself", entity.name),
                ));
            }
            if let Some(carrier) = self.carrier_of(*item)
                && carrier != id
            {
                return Err(Error::conflict(format!(
                    "{} is already carried by {carrier}; an entity cannot be in two places",
                    it.name
                )));
            }
            if it.activity.position.is_some() {
                return Err(Error::conflict(format!(
                    "{} stands in a container; an entity cannot be in two places (move it out first)",
                    it.name
                )));
            }
            // Carrying an entity that (transitively) carries us would make a loop.
            let mut at = self.carrier_of(id);
            while let Some(c) = at {
                if c == *item {
                    return Err(Error::conflict(format!(
                        "{} carries {} already",
                        it.name, entity.name
                    )));
                }
                at = self.carrier_of(c);
            }
        }
        for held in &entity.activity.holding {
            if !inventory.contains(held) {
                return Err(Error::conflict(format!(
                    "{} still holds {held}; put it down before removing it from the inventory",
                    entity.name
                )));
            }
        }
        Ok(())
    }
}
