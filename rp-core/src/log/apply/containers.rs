//! Applying the records of containers: created, edited (slots, parent, properties), removed.

use super::{check_facts, check_name};
use crate::error::{Error, Result};
use crate::log::World;
use crate::log::index::bump;
use crate::model::{Container, ContainerId, ContainerProperties, FactSheet, Slot};

fn check_slots(slots: &[Slot]) -> Result<()> {
    for (i, s) in slots.iter().enumerate() {
        check_name("slot", &s.name)?;
        if slots[..i].iter().any(|o| o.name == s.name) {
            return Err(Error::invalid(
                "container",
                format!("the slot {:?} is defined twice", s.name),
            ));
        }
    }
    Ok(())
}

impl World {
    /// `container_created`: a new container under its parent, its key indexed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn create_container(
        &mut self,
        id: ContainerId,
        key: &Option<String>,
        name: &str,
        facts: &FactSheet,
        parent: Option<ContainerId>,
        slots: &[Slot],
        properties: &ContainerProperties,
    ) -> Result<()> {
        self.check_fresh(id.0)?;
        check_name("container", name)?;
        check_facts("container", facts)?;
        check_slots(slots)?;
        self.sheets.compile(name, facts)?;
        if let Some(p) = parent {
            self.get_container(p)?;
        }
        if let Some(k) = key {
            check_name("container key", k)?;
            if self.index.container_keys.contains_key(k) {
                return Err(Error::conflict(format!(
                    "a container with the key {k:?} already exists"
                )));
            }
        }
        if let Some(k) = key {
            self.index.container_keys.insert(k.clone(), id);
        }
        if let Some(p) = parent {
            bump(&mut self.index.children, p, true);
        }
        self.take_id(id.0);
        self.containers.insert(Container {
            id,
            key: key.clone(),
            name: name.to_owned(),
            facts: facts.clone(),
            parent,
            slots: slots.to_vec(),
            properties: properties.clone(),
        });
        Ok(())
    }

    /// `container_edited`: the container's fields replaced, as long as every occupied slot stays
    /// and still has room.
    pub(super) fn edit_container(
        &mut self,
        id: ContainerId,
        name: &str,
        facts: &FactSheet,
        parent: Option<ContainerId>,
        slots: &[Slot],
        properties: &ContainerProperties,
    ) -> Result<()> {
        let current = self.get_container(id)?;
        check_name("container", name)?;
        check_facts("container", facts)?;
        check_slots(slots)?;
        if *facts != current.facts {
            self.sheets.compile(name, facts)?;
        }
        if let Some(p) = parent {
            self.check_no_cycle(id, p)?;
        }
        for old in &current.slots {
            let used = self.occupancy(id, &old.name);
            if used == 0 {
                continue;
            }
            match slots.iter().find(|s| s.name == old.name) {
                None => {
                    return Err(Error::conflict(format!(
                        "the slot {:?} of {} is occupied and cannot be removed",
                        old.name, current.name
                    )));
                }
                Some(s) if s.capacity.is_some_and(|c| c < used) => {
                    return Err(Error::conflict(format!(
                        "the slot {:?} of {} holds {used}, more than the new capacity",
                        old.name, current.name
                    )));
                }
                _ => {}
            }
        }
        let old_parent = current.parent;
        if let Some(p) = old_parent {
            bump(&mut self.index.children, p, false);
        }
        if let Some(p) = parent {
            bump(&mut self.index.children, p, true);
        }
        let c = self.containers.get_mut(&id).expect("checked above");
        c.name = name.to_owned();
        c.facts = facts.clone();
        c.parent = parent;
        c.slots = slots.to_vec();
        c.properties = properties.clone();
        Ok(())
    }

    /// `container_removed`: only an empty container, with no open scene, goes.
    pub(super) fn remove_container(&mut self, id: ContainerId) -> Result<()> {
        let c = self.get_container(id)?;
        if self.index.container_counts.contains_key(&id) {
            return Err(Error::conflict(format!(
                "{} ({id}) still holds entities; move them out first",
                c.name
            )));
        }
        if self.index.children.contains_key(&id) {
            return Err(Error::conflict(format!(
                "{} ({id}) still holds containers; remove them first",
                c.name
            )));
        }
        if let Some(scene) = self.index.open_scenes.get(&id).and_then(|s| s.get_min()) {
            return Err(Error::conflict(format!(
                "{} ({id}) has an open scene ({scene}); close it first",
                c.name
            )));
        }
        let c = self.containers.remove(&id).expect("checked above");
        if let Some(p) = c.parent {
            bump(&mut self.index.children, p, false);
        }
        if let Some(k) = &c.key {
            self.index.container_keys.remove(k);
        }
        Ok(())
    }

    pub(super) fn get_container(&self, id: ContainerId) -> Result<&Container> {
        self.containers
            .get(&id)
            .ok_or_else(|| Error::not_found("container", id))
    }

    fn check_no_cycle(&self, id: ContainerId, parent: ContainerId) -> Result<()> {
        let mut at = Some(parent);
        while let Some(c) = at {
            if c == id {
                return Err(Error::invalid(
                    "container",
                    format!("{id} cannot be inside itself"),
                ));
            }
            at = self.get_container(c)?.parent;
        }
        Ok(())
    }
}
