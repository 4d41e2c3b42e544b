//! Typed ids. Every id is a `u64` drawn from one counter per world, so an id names exactly one
//! thing of one kind; the newtypes keep an entity id from being used as a container id.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in a branch's history: the number of events applied, 1-based (0 = empty).
pub type Seq = u64;

/// Milliseconds on the host's clock (wall time in a chat app, game time in a game).
pub type Millis = i64;

/// The milliseconds from `since` to `until`, 0 if `until` comes first. It saturates: a time
/// read from a damaged save or given by a host may be anywhere in `Millis`, and a difference
/// of two such times must not overflow.
pub(crate) fn elapsed(since: Millis, until: Millis) -> Millis {
    until.saturating_sub(since).max(0)
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "#{}"), self.0)
            }
        }

        impl From<$name> for u64 {
            fn from(id: $name) -> u64 {
                id.0
            }
        }
    };
}

id_type!(
    /// An entity: a character, the player, an item.
    EntityId,
    "entity"
);
id_type!(
    /// A container: a room, a booth, a car.
    ContainerId,
    "container"
);
id_type!(
    /// A group node.
    GroupId,
    "group"
);
id_type!(
    /// A memory.
    MemoryId,
    "memory"
);
id_type!(
    /// An utterance (a user or assistant turn).
    UtteranceId,
    "utterance"
);
id_type!(
    /// A scoped event.
    ScopedEventId,
    "event"
);
id_type!(
    /// A thread.
    ThreadId,
    "thread"
);
id_type!(
    /// A scene.
    SceneId,
    "scene"
);
id_type!(
    /// A world query (a question asked about the world).
    QueryId,
    "query"
);
id_type!(
    /// A rule a character holds (docs/rules.md).
    RuleId,
    "rule"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Drive, Intent, Learned, Rule, RuleSource, Trigger, decayed};

    /// Every fading value reads the time since a moment a save holds, at a time a host gives;
    /// either may be anywhere in `Millis`, and none of them may overflow the time between
    /// (a panic under overflow checks, a wrong value without).
    #[test]
    fn what_fades_reads_the_time_between_without_overflow() {
        let ends = [(Millis::MIN, Millis::MAX), (Millis::MAX, Millis::MIN)];
        for (then, now) in ends {
            let v = decayed(0.8, then, now, 24.0);
            assert!((0.0..=0.8).contains(&v), "{v}");
            let learned = Learned {
                to: EntityId(1),
                term: "warmth".into(),
                factor: 2.0,
                at: then,
            };
            let f = learned.factor_at(now, 7.0);
            assert!((1.0..=2.0).contains(&f), "{f}");
            let rule = Rule {
                id: RuleId(1),
                owner: EntityId(1),
                description: "ask about the letter".into(),
                trigger: Trigger::At(then),
                condition: None,
                intent: Intent::Drive {
                    drive: Drive::Task,
                    amount: 0.5,
                },
                weight: 0.6,
                since: then,
                uses: 0,
                last_used: None,
                checked: None,
                created_at: then,
                source: RuleSource::Host,
            };
            let w = rule.weight_at(now, 30.0);
            assert!((0.0..=0.6).contains(&w), "{w}");
        }
        // Far after: faded all the way; not after: as set.
        assert_eq!(decayed(0.8, Millis::MIN, Millis::MAX, 24.0), 0.0);
        let learned = |at| Learned {
            to: EntityId(1),
            term: "warmth".into(),
            factor: 2.0,
            at,
        };
        assert_eq!(learned(Millis::MIN).factor_at(Millis::MAX, 7.0), 1.0);
        assert_eq!(learned(Millis::MAX).factor_at(Millis::MIN, 7.0), 2.0);
    }
}
