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

    /// Whether the world kept minds since its creation. A snapshot written before drives
    /// existed did not: opening replays the log rather than start from it.
    pub fn keeps_minds(&self) -> bool {
        self.minds_kept
    }
}

/// A map keyed by pairs of entities, serialised as a list of `[from, to, value]` (JSON has no
/// tuple keys).
pub(super) mod pair_map {
    use crate::model::EntityId;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Map<V> = imbl::OrdMap<(EntityId, EntityId), V>;

    pub fn serialize<S: Serializer, V: Serialize + Clone>(
        map: &Map<V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter().map(|((a, b), v)| (a, b, v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de> + Clone>(
        d: D,
    ) -> Result<Map<V>, D::Error> {
        let items: Vec<(EntityId, EntityId, V)> = Vec::deserialize(d)?;
        Ok(items.into_iter().map(|(a, b, v)| ((a, b), v)).collect())
    }
}
