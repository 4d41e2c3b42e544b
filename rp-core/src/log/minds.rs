//! Reading what the log keeps of the characters' inner life (docs/drives.md); the drives
//! computed from it are [`crate::drives`].

use super::World;
use crate::model::{Belief, DriveConfig, DriveSettings, EntityId, Millis, Mind};

impl World {
    /// The mind of an engine-controlled entity.
    pub fn mind(&self, entity: EntityId) -> Option<&Mind> {
        self.minds.get(&entity)
    }

    /// Every mind, in entity id order.
    pub fn minds(&self) -> impl Iterator<Item = (EntityId, &Mind)> + '_ {
        self.minds.iter().map(|(id, m)| (*id, m))
    }

    /// The world's drive settings, as configured (over the built-in defaults).
    pub fn drive_config(&self) -> &DriveConfig {
        &self.drive_config
    }

    /// `entity`'s drive settings resolved: built-in defaults, the world's, its own.
    pub fn drive_settings(&self, entity: EntityId) -> DriveSettings {
        DriveSettings::resolve(
            &self.drive_config,
            self.minds.get(&entity).map(|m| &m.config),
        )
    }

    /// When `a` and `b` last spoke in each other's hearing.
    pub fn contact(&self, a: EntityId, b: EntityId) -> Option<Millis> {
        self.contacts.get(&(a, b)).copied()
    }

    /// The latest of what `observer` saw of `about`'s availability and what the host reported.
    pub fn belief(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        let seen = self.beliefs.get(&(observer, about)).copied();
        let told = self.reported.get(&about).copied();
        match (seen, told) {
            (Some(a), Some(b)) => Some(if b.at >= a.at { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Fills in the minds a snapshot from before drives lacks (fresh, at the world's time).
    pub(super) fn fill_minds(&mut self) {
        let missing: Vec<EntityId> = self
            .entities
            .iter()
            .filter(|e| !e.host_controlled && !self.minds.contains_key(&e.id))
            .map(|e| e.id)
            .collect();
        for id in missing {
            self.minds.insert(id, Mind::new(self.now));
        }
    }
}
