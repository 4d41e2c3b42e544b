//! Reading what the log keeps of the characters' inner life (docs/drives.md); the drives
//! computed from it are [`crate::drives`].

use super::World;
use super::pairs::PairMap;
use crate::model::{
    Belief, DecayStage, DriveConfig, DriveSettings, EntityId, FadeRule, HOUR_MS, MemoryId, Millis,
    Mind,
};

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

    /// When `a` and `b` last spoke in each other's hearing: the later of when each last heard
    /// the other, and of a contact kept apart (where an initiation unanswered took over the
    /// line heard that held it).
    pub fn contact(&self, a: EntityId, b: EntityId) -> Option<Millis> {
        self.heard_between(a, b)
            .max(self.contacts.get(&contact_key(a, b)).copied())
    }

    /// The later of when `a` last heard `b` and `b` last heard `a`.
    fn heard_between(&self, a: EntityId, b: EntityId) -> Option<Millis> {
        let heard = |x, y| self.heard.get(&(x, y)).copied();
        heard(a, b).max(heard(b, a))
    }

    /// The latest availability of `about` that `observer` saw: what it saw otherwise (an
    /// initiation unanswered) if that came after the last line it heard from `about`, else
    /// that line (available, when heard).
    pub(super) fn seen_availability(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        let pair = (observer, about);
        self.beliefs.get(&pair).copied().or_else(|| {
            self.heard.get(&pair).map(|&at| Belief {
                availability: 1.0,
                at,
            })
        })
    }

    /// `hearer` heard `speaker` at `at`: one entry, which is both what it saw of the speaker
    /// (available, taking out what it saw otherwise before) and their contact. A contact kept
    /// apart that the lines heard now reach is let go.
    pub(super) fn hear(&mut self, hearer: EntityId, speaker: EntityId, at: Millis) {
        self.heard.insert((hearer, speaker), at);
        self.beliefs.remove(&(hearer, speaker));
        let key = contact_key(hearer, speaker);
        if let Some(&kept) = self.contacts.get(&key)
            && Some(kept) <= self.heard_between(hearer, speaker)
        {
            self.contacts.remove(&key);
        }
    }

    /// `observer` saw `about`'s availability otherwise than by hearing it (an initiation
    /// unanswered): that stands over the last line it heard from `about`, whose time is kept
    /// apart as their contact if nothing else holds it.
    pub(super) fn see_otherwise(&mut self, observer: EntityId, about: EntityId, seen: Belief) {
        self.beliefs.insert((observer, about), seen);
        if let Some(at) = self.heard.remove(&(observer, about)) {
            let key = contact_key(observer, about);
            let held = self
                .heard_between(observer, about)
                .max(self.contacts.get(&key).copied());
            if Some(at) > held {
                self.contacts.insert(key, at);
            }
        }
    }

    /// Forgets every line heard, availability seen and contact of `entity`, either way.
    pub(super) fn forget_pairs_of(&mut self, entity: EntityId) {
        self.heard.forget(entity);
        self.beliefs.forget(entity);
        self.contacts.forget(entity);
    }

    /// After a snapshot's load: sorts the availability a snapshot of format 5 or older kept in
    /// one map into the lines heard (an availability of 1, which only a line heard wrote) and
    /// the rest, then keeps of its contacts only those the lines heard do not reach, as
    /// [`World::hear`] and [`World::see_otherwise`] keep them. A snapshot of format 6 keeps
    /// them so already. A snapshot that holds availability seen in both forms is refused.
    pub(super) fn settle_pairs(&mut self) -> crate::error::Result<()> {
        if self.seen_before_6.is_empty() {
            return Ok(());
        }
        if !self.heard.is_empty() || !self.beliefs.is_empty() {
            return Err(crate::error::Error::invalid(
                "snapshot",
                "it keeps availability seen both as before format 6 and as since",
            ));
        }
        let (heard, other): (Vec<_>, Vec<_>) = std::mem::take(&mut self.seen_before_6)
            .iter()
            .map(|(pair, b)| (*pair, *b))
            .partition(|(_, b)| b.availability == 1.0);
        // Both come in pair order, as the map held them.
        self.heard = PairMap::from_sorted(heard.into_iter().map(|(p, b)| (p, b.at)).collect());
        self.beliefs = PairMap::from_sorted(other);
        // Both in contact order: one pass over each. At a million of each, this whole load
        // took 86–95 ms in a release build, where a look-up per contact into the lines heard
        // took 162–165 ms alone.
        let reached = contacts_heard(&self.heard);
        let mut reached = reached.iter().peekable();
        let mut kept = Vec::new();
        for (pair, &at) in self.contacts.iter() {
            while reached.next_if(|(p, _)| p < pair).is_some() {}
            let heard = reached.next_if(|(p, _)| p == pair).map(|(_, at)| *at);
            if Some(at) > heard {
                kept.push((*pair, at));
            }
        }
        if kept.len() != self.contacts.len() {
            self.contacts = PairMap::from_sorted(kept);
        }
        Ok(())
    }

    /// The latest of what `observer` saw of `about`'s availability, what the host reported and
    /// what it came to believe (docs/beliefs.md). A belief observed with confidence `c` counts
    /// as the availability `0.5 + (a − 0.5) × c` (0.5: no idea); the drives fade it from there.
    pub fn belief(&self, observer: EntityId, about: EntityId) -> Option<Belief> {
        self.availability_held(observer, about, self.people.get(&(observer, about)))
            .map(|h| Belief {
                availability: 0.5 + (h.value - 0.5) * h.confidence,
                at: h.at,
            })
    }

    /// When a decay pass is next due (docs/memory.md): the earliest moment a memory may cross
    /// a stage's threshold, as the last pass found it and memories formed since bring it
    /// forward, but not before `decay_pass_hours` after the last pass (nor before the world's
    /// clock); `None` when no memory will.
    pub fn decay_due(&self) -> Option<Millis> {
        let every = DriveSettings::resolve(&self.drive_config, None).decay_pass_hours;
        let after_last = self.decay_passed.map_or(Millis::MIN, |p| {
            p.saturating_add((every * HOUR_MS) as Millis)
        });
        self.decay_next.map(|at| at.max(after_last).max(self.now))
    }

    /// The memories due to move on to a later stage at or before `now`, soonest first, each
    /// with its owner and the stage it moves to (docs/memory.md): what a decay pass at `now`
    /// visits.
    pub fn fading_by(&self, now: Millis) -> Vec<(MemoryId, EntityId, DecayStage)> {
        self.index.fading.schedule().due_by(now)
    }

    /// The first moment after `now` at which a memory moves on to a later stage.
    pub fn next_fading_after(&self, now: Millis) -> Option<Millis> {
        self.index.fading.schedule().next_after(now)
    }

    /// Works out again when memory `id` next moves on (after it changed, or its owner's
    /// settings did), and returns that moment (`None`: never, or no such memory).
    pub(super) fn refade(&mut self, id: MemoryId) -> Option<Millis> {
        let Some(m) = self.memories.get(&id) else {
            self.index.unset_fading(id);
            return None;
        };
        let next = m.fading(&FadeRule::of(&self.drive_settings(m.owner)));
        self.index.set_fading(m, next);
        next.map(|(_, at)| at)
    }

    /// [`World::refade`] of every memory of `owner`.
    pub(super) fn refade_owner(&mut self, owner: EntityId) {
        let ids: Vec<MemoryId> = self.memories_of(owner).map(|m| m.id).collect();
        for id in ids {
            self.refade(id);
        }
    }

    /// [`World::refade`] of every memory (the world's settings changed).
    pub(super) fn refade_all(&mut self) {
        let ids: Vec<MemoryId> = self.memories.iter().map(|m| m.id).collect();
        for id in ids {
            self.refade(id);
        }
    }

    /// Whether the world kept minds since its creation. A snapshot written before drives
    /// existed did not: opening replays the log rather than start from it.
    pub fn keeps_minds(&self) -> bool {
        self.minds_kept
    }
}

/// The decay moment of a world read from a snapshot that did not record one: at once.
pub(super) fn overdue() -> Option<Millis> {
    Some(Millis::MIN)
}

/// The contact each pair's lines heard give ([`World::contact`] without the contacts kept
/// apart), under [`contact_key`], in its order.
fn contacts_heard(heard: &PairMap<Millis>) -> Vec<((EntityId, EntityId), Millis)> {
    let mut all: Vec<_> = heard
        .iter()
        .map(|(&(hearer, speaker), &at)| (contact_key(hearer, speaker), at))
        .collect();
    // By pair, then time: the last of each pair is the later way.
    all.sort_unstable();
    all.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 = later.1;
        }
        same
    });
    all
}

/// Where the contact of `a` and `b` is kept: one entry per pair, whichever spoke.
pub(super) fn contact_key(a: EntityId, b: EntityId) -> (EntityId, EntityId) {
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(id: u64) -> EntityId {
        EntityId(id)
    }

    fn seen(availability: f64, at: Millis) -> Belief {
        Belief { availability, at }
    }

    /// The pairs of a map, for comparison.
    fn pairs<V: Clone + Copy>(map: &PairMap<V>) -> Vec<((u64, u64), V)> {
        map.iter().map(|((a, b), v)| ((a.0, b.0), *v)).collect()
    }

    #[test]
    fn a_line_heard_is_one_entry_and_an_approach_unanswered_stands_over_it() {
        let mut w = World::default();
        w.hear(e(1), e(2), 10);
        assert_eq!(w.contact(e(2), e(1)), Some(10));
        assert_eq!(w.seen_availability(e(1), e(2)), Some(seen(1.0, 10)));
        assert_eq!(w.seen_availability(e(2), e(1)), None);
        assert_eq!(
            (w.heard.len(), w.contacts.len(), w.beliefs.len()),
            (1, 0, 0)
        );

        // 1 approaches 2, unanswered: what it saw is now that, and the contact stays.
        w.see_otherwise(e(1), e(2), seen(0.0, 20));
        assert_eq!(w.seen_availability(e(1), e(2)), Some(seen(0.0, 20)));
        assert_eq!(w.contact(e(1), e(2)), Some(10));
        assert_eq!(pairs(&w.contacts), vec![((1, 2), 10)]);
        assert!(w.heard.is_empty());

        // 2 hears 1 later: the lines heard hold the contact again.
        w.hear(e(2), e(1), 15);
        assert_eq!(w.contact(e(1), e(2)), Some(15));
        assert!(w.contacts.is_empty());
        // 2 answers: 1 saw it available, and nothing is left apart.
        w.hear(e(1), e(2), 30);
        assert_eq!(w.seen_availability(e(1), e(2)), Some(seen(1.0, 30)));
        assert_eq!(w.contact(e(1), e(2)), Some(30));
        assert!(w.beliefs.is_empty() && w.contacts.is_empty());
        assert_eq!(pairs(&w.heard), vec![((1, 2), 30), ((2, 1), 15)]);

        // An approach whose line the other heard since keeps nothing apart.
        w.see_otherwise(e(2), e(1), seen(0.0, 40));
        assert!(w.contacts.is_empty());
        assert_eq!(w.contact(e(1), e(2)), Some(30));

        w.forget_pairs_of(e(1));
        assert!(w.heard.is_empty() && w.beliefs.is_empty() && w.contacts.is_empty());
        assert_eq!(w.contact(e(1), e(2)), None);
    }

    #[test]
    fn a_snapshot_before_format_6_sorts_what_was_seen_and_keeps_only_contacts_beyond_it() {
        let mut w = World {
            seen_before_6: PairMap::from_sorted(vec![
                ((e(1), e(2)), seen(1.0, 10)),
                ((e(2), e(1)), seen(0.0, 20)),
                ((e(3), e(1)), seen(1.0, 5)),
            ]),
            contacts: PairMap::from_sorted(vec![
                ((e(1), e(2)), 20),
                ((e(1), e(3)), 5),
                ((e(4), e(5)), 7),
            ]),
            ..World::default()
        };
        w.settle_pairs().unwrap();
        assert!(w.seen_before_6.is_empty());
        assert_eq!(pairs(&w.heard), vec![((1, 2), 10), ((3, 1), 5)]);
        assert_eq!(pairs(&w.beliefs), vec![((2, 1), seen(0.0, 20))]);
        // (1, 3) is what 3 heard of 1; (1, 2) and (4, 5) reach beyond the lines kept heard.
        assert_eq!(pairs(&w.contacts), vec![((1, 2), 20), ((4, 5), 7)]);
        assert_eq!(w.contact(e(2), e(1)), Some(20));
        assert_eq!(w.contact(e(3), e(1)), Some(5));
        assert_eq!(w.contact(e(5), e(4)), Some(7));
        assert_eq!(w.seen_availability(e(2), e(1)), Some(seen(0.0, 20)));
        assert_eq!(w.seen_availability(e(1), e(2)), Some(seen(1.0, 10)));
    }

    proptest::proptest! {
        /// The contacts the lines heard give, merged in one pass, are the later of both ways
        /// for each pair, as `World::contact` reads them one pair at a time.
        #[test]
        fn the_contacts_of_the_lines_heard_are_read_in_one_pass(
            lines in proptest::collection::btree_map((0u64..12, 0u64..12), -50i64..50, 0..60),
        ) {
            let heard = PairMap::from_sorted(
                lines.iter().filter(|((a, b), _)| a != b).map(|(&(a, b), &at)| ((e(a), e(b)), at)).collect(),
            );
            let world = World { heard: heard.clone(), ..World::default() };
            let mut expected = std::collections::BTreeMap::new();
            for (&(a, b), _) in heard.iter() {
                expected.insert(contact_key(a, b), world.contact(a, b).expect("heard"));
            }
            let expected: Vec<_> = expected.into_iter().collect();
            proptest::prop_assert_eq!(contacts_heard(&heard), expected);
        }
    }

    #[test]
    fn a_snapshot_keeping_what_was_seen_in_both_forms_is_refused() {
        let mut w = World {
            seen_before_6: PairMap::from_sorted(vec![((e(1), e(2)), seen(1.0, 10))]),
            heard: PairMap::from_sorted(vec![((e(2), e(1)), 10)]),
            ..World::default()
        };
        let err = w.settle_pairs().unwrap_err();
        assert!(err.to_string().contains("format 6"), "{err}");
    }
}
