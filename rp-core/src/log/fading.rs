//! What fades when: every memory that will move on to a later stage, ordered by the moment it
//! next does (docs/memory.md), so a decay pass visits only the memories due.
//!
//! A lookup derived from the world's memories like the rest of the index, with one difference:
//! at a million memories it is the costliest part of a load (a sixth of a second, built in
//! bulk; half a second before), and nothing but a decay pass reads it. So a loaded world does
//! not wait for it. A thread started for it builds it from the world as loaded, while the
//! changes made since are noted; the first change after it is ready folds the two together.
//! A decay pass that comes before it is ready builds it from the world as loaded itself,
//! rather than wait on the thread (the thread may not exist: a process forked by a host keeps
//! the world but not the thread). An open that replays a long log does the same with the
//! world it replayed ([`World::defer_fading`]), rather than keep the schedule up to date
//! through the replay.

use super::World;
use super::layered::Layered;
use crate::model::{DecayStage, EntityId, FadeRule, MemoryId, Millis};
use imbl::Vector;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Where a memory is next due: the moment, its owner, and the stage it moves on to.
pub(crate) type Due = (Millis, EntityId, DecayStage);

/// What fades when, with its reverse. Both maps are [`Layered`]: built in bulk from sorted
/// runs, as a snapshot's tables are. As persistent B-trees filled one insert at a time, they
/// were 60 % of building the schedule of a million memories (benches/README.md, "The
/// schedule built in bulk").
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Schedule {
    /// (the moment it next moves on, memory) → (its owner, the stage it moves to).
    by_moment: Layered<(Millis, MemoryId), (EntityId, DecayStage)>,
    /// memory → its moment in `by_moment`.
    moment_of: Layered<MemoryId, Millis>,
}

impl Schedule {
    /// The schedule of every memory of `world`, each under its owner's rule. A memory whose
    /// owner is missing is left out (a world being loaded is refused for it elsewhere).
    pub fn of(world: &World) -> Schedule {
        let mut due = Vec::new();
        let mut rules: HashMap<EntityId, Option<FadeRule>> = HashMap::new();
        for m in world.memories.iter() {
            // One look-up of the owner's rule per owner, not per memory.
            let rule = rules.entry(m.owner).or_insert_with(|| {
                world
                    .entities
                    .contains(&m.owner)
                    .then(|| FadeRule::of(&world.drive_settings(m.owner)))
            });
            if let Some((stage, at)) = rule.as_ref().and_then(|rule| m.fading(rule)) {
                due.push(((at, m.id), (m.owner, stage)));
            }
        }
        Schedule::in_bulk(due)
    }

    /// The schedule of `due`, which lists each memory once, in id order (as the world lists
    /// its memories). Each map is made from a run in its own key order; a memory's id makes
    /// its moment's key unique.
    fn in_bulk(mut due: Vec<((Millis, MemoryId), (EntityId, DecayStage))>) -> Schedule {
        let moment_of = due.iter().map(|((at, id), _)| (*id, *at)).collect();
        due.sort_unstable_by_key(|(key, _)| *key);
        Schedule {
            by_moment: Layered::from_sorted(due),
            moment_of: Layered::from_sorted(moment_of),
        }
    }

    fn set(&mut self, id: MemoryId, due: Option<Due>) {
        if let Some(old) = self.moment_of.remove(&id) {
            self.by_moment.remove(&(old, id));
        }
        if let Some((at, owner, stage)) = due {
            self.by_moment.insert((at, id), (owner, stage));
            self.moment_of.insert(id, at);
        }
    }

    /// The memories due at or before `now`, soonest first: (memory, owner, stage).
    pub fn due_by(&self, now: Millis) -> Vec<(MemoryId, EntityId, DecayStage)> {
        self.by_moment
            .range(..=(now, MemoryId(u64::MAX)))
            .map(|((_, id), (owner, stage))| (*id, *owner, *stage))
            .collect()
    }

    /// The first moment after `now` at which a memory moves on.
    pub fn next_after(&self, now: Millis) -> Option<Millis> {
        self.by_moment
            .range((now.saturating_add(1), MemoryId(0))..)
            .next()
            .map(|((at, _), _)| *at)
    }

    /// Whether no memory will fade further.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_moment.is_empty()
    }
}

/// A world's [`Schedule`], or the one of the world as it was loaded (being built on another
/// thread) with the changes made since.
#[derive(Clone, Debug)]
pub(crate) enum Fading {
    Ready(Schedule),
    Loading {
        loaded: Arc<Loaded>,
        since: Vector<(MemoryId, Option<Due>)>,
    },
}

/// A world as it was loaded and, once built, its schedule.
pub(crate) struct Loaded {
    world: World,
    schedule: OnceLock<Schedule>,
}

impl Loaded {
    /// The schedule, built here if the thread building it has not given it yet.
    fn schedule(&self) -> &Schedule {
        self.schedule.get_or_init(|| Schedule::of(&self.world))
    }
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("ready", &self.schedule.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Fading {
    fn default() -> Self {
        Fading::Ready(Schedule::default())
    }
}

impl Fading {
    /// The schedule of `world` (a world just loaded, as it is now), built on a thread started
    /// for it.
    pub fn load(world: &World) -> Fading {
        let loaded = Arc::new(Loaded {
            world: world.clone(),
            schedule: OnceLock::new(),
        });
        let on_thread = Arc::clone(&loaded);
        // A thread of its own rather than a pool's: a pool's threads do not survive `fork`. If
        // none can be started, the schedule is built when it is first needed.
        let _ = std::thread::Builder::new()
            .name("rp-fading".into())
            .spawn(move || {
                // A world let go before the thread ran (a past world looked at and dropped)
                // leaves nobody to read its schedule.
                if Arc::strong_count(&on_thread) > 1 {
                    // Built outside the cell, then set: the cell is never left mid-build.
                    let schedule = Schedule::of(&on_thread.world);
                    let _ = on_thread.schedule.set(schedule);
                }
            });
        Fading::Loading {
            loaded,
            since: Vector::new(),
        }
    }

    /// The schedule of `world` (a world with its schedule ready, about to replay many
    /// events), put off: the changes are noted as a load's are, and nothing is built unless
    /// something reads it (see [`World::defer_fading`]). True if it was put off; a world
    /// still loading keeps its schedule coming.
    fn defer(&mut self, world: World) -> bool {
        if !matches!(self, Fading::Ready(_)) {
            return false;
        }
        *self = Fading::Loading {
            loaded: Arc::new(Loaded {
                world,
                schedule: OnceLock::new(),
            }),
            since: Vector::new(),
        };
        true
    }

    /// Records that memory `id` is next due as `due` (`None`: never, or it is gone).
    pub fn set(&mut self, id: MemoryId, due: Option<Due>) {
        if let Fading::Loading { loaded, since } = self {
            let Some(schedule) = loaded.schedule.get() else {
                since.push_back((id, due));
                return;
            };
            *self = Fading::Ready(caught_up(schedule, since));
        }
        if let Fading::Ready(schedule) = self {
            schedule.set(id, due);
        }
    }

    /// The schedule (built now from the world as loaded, if the thread has not given it yet).
    pub fn schedule(&self) -> Cow<'_, Schedule> {
        match self {
            Fading::Ready(schedule) => Cow::Borrowed(schedule),
            Fading::Loading { loaded, since } => Cow::Owned(caught_up(loaded.schedule(), since)),
        }
    }
}

/// `schedule` with the changes `since` made to it.
fn caught_up(schedule: &Schedule, since: &Vector<(MemoryId, Option<Due>)>) -> Schedule {
    let mut schedule = schedule.clone();
    for (id, due) in since {
        schedule.set(*id, *due);
    }
    schedule
}

impl PartialEq for Fading {
    fn eq(&self, other: &Self) -> bool {
        self.schedule() == other.schedule()
    }
}

impl World {
    /// Stops keeping what fades when up to date, for a replay of many events; true if it did,
    /// and then [`World::schedule_fading`] must follow the replay. A memory added or recalled
    /// moved two persistent maps of the schedule, about a seventh of a replay's apply; the world
    /// replayed builds it once, in bulk, on a thread, as a loaded world does
    /// (benches/README.md, "What fades when, built after a replay"). What fades when reads
    /// the same throughout: a reader before the end builds it from the world the replay
    /// started from and the changes noted since.
    pub(crate) fn defer_fading(&mut self) -> bool {
        let from = self.clone();
        self.index.fading.defer(from)
    }

    /// What fades when, after a replay that put it off ([`World::defer_fading`]): built from
    /// the world as it is now, on a thread started for it.
    pub(crate) fn schedule_fading(&mut self) {
        self.index.fading = Fading::load(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(at: Millis, owner: u64) -> Option<Due> {
        Some((at, EntityId(owner), DecayStage::Summary))
    }

    /// A schedule of memories 1..=n, memory i due at 1000 - i (so the order by moment is not
    /// the order by id).
    fn schedule(n: u64) -> Schedule {
        let mut s = Schedule::default();
        for i in 1..=n {
            s.set(MemoryId(i), due(1000 - i as Millis, i % 3));
        }
        s
    }

    /// A schedule still being built: `Fading::load` without the thread, so a test decides
    /// when it is done (its world has no memories: built from it, the schedule is empty).
    fn loading() -> (Fading, Arc<Loaded>) {
        let loaded = Arc::new(Loaded {
            world: World::new(),
            schedule: OnceLock::new(),
        });
        let fading = Fading::Loading {
            loaded: Arc::clone(&loaded),
            since: Vector::new(),
        };
        (fading, loaded)
    }

    proptest::proptest! {
        /// A schedule built in bulk (as a loaded world's is) and then changed reads as one
        /// built change by change: the same entries, the same memories due, the same next
        /// moment.
        #[test]
        fn a_schedule_built_in_bulk_reads_as_one_built_by_changes(
            loaded in proptest::collection::btree_map(1u64..200, (-50i64..50, 0u64..4), 0..60),
            changes in proptest::collection::vec(
                (1u64..220, proptest::option::of((-60i64..60, 0u64..4))),
                0..60,
            ),
        ) {
            let due_of = |(at, owner): (i64, u64)| (at, EntityId(owner), DecayStage::Summary);
            let mut bulk = Schedule::in_bulk(
                loaded
                    .iter()
                    .map(|(id, d)| {
                        let (at, owner, stage) = due_of(*d);
                        ((at, MemoryId(*id)), (owner, stage))
                    })
                    .collect(),
            );
            let mut by_changes = Schedule::default();
            for (id, d) in &loaded {
                by_changes.set(MemoryId(*id), Some(due_of(*d)));
            }
            for (id, d) in changes {
                bulk.set(MemoryId(id), d.map(due_of));
                by_changes.set(MemoryId(id), d.map(due_of));
            }
            proptest::prop_assert_eq!(&bulk, &by_changes);
            for now in -61..61 {
                proptest::prop_assert_eq!(bulk.due_by(now), by_changes.due_by(now));
                proptest::prop_assert_eq!(bulk.next_after(now), by_changes.next_after(now));
            }
        }
    }

    #[test]
    fn a_schedule_lists_what_is_due_soonest_first() {
        let s = schedule(10);
        let ids =
            |s: &Schedule| -> Vec<u64> { s.due_by(992).iter().map(|(id, _, _)| id.0).collect() };
        assert_eq!(ids(&s), vec![10, 9, 8]);
        assert_eq!(s.next_after(992), Some(993));
        assert_eq!(s.next_after(999), None);
        let mut s = s;
        // Moved later, then gone: each memory is listed once, at its latest moment.
        s.set(MemoryId(10), due(5000, 1));
        s.set(MemoryId(9), None);
        assert_eq!(ids(&s), vec![8]);
        assert_eq!(s.next_after(999), Some(5000));
    }

    #[test]
    fn changes_made_while_loading_are_kept_once_it_is_built() {
        let changes = [
            (MemoryId(3), due(10, 0)),
            (MemoryId(11), due(20, 2)),
            (MemoryId(5), None),
            (MemoryId(3), due(30, 0)),
        ];
        let mut expected = schedule(10);
        for (id, d) in changes {
            expected.set(id, d);
        }
        let (mut fading, loaded) = loading();
        for (id, d) in changes {
            fading.set(id, d);
        }
        let copy = fading.clone();
        assert!(matches!(fading, Fading::Loading { ref since, .. } if since.len() == 4));
        loaded.schedule.set(schedule(10)).unwrap();
        // Read while still noted as changes...
        assert_eq!(*fading.schedule(), expected);
        // ...and folded in by the next change.
        fading.set(MemoryId(1), None);
        expected.set(MemoryId(1), None);
        assert!(matches!(fading, Fading::Ready(_)));
        assert_eq!(*fading.schedule(), expected);
        // A copy taken before keeps its own changes, not the later ones.
        assert_ne!(copy, fading);
        let mut without = expected.clone();
        without.set(MemoryId(1), due(999, 1));
        assert_eq!(*copy.schedule(), without);
    }

    #[test]
    fn a_schedule_being_built_equals_the_same_one_built_at_once() {
        let (mut fading, loaded) = loading();
        fading.set(MemoryId(2), None);
        let mut ready = Fading::Ready(schedule(4));
        ready.set(MemoryId(2), None);
        loaded.schedule.set(schedule(4)).unwrap();
        assert_eq!(fading, ready);
        assert_ne!(fading, Fading::default());
    }

    #[test]
    fn a_reader_that_comes_first_builds_the_schedule_from_the_world_as_loaded() {
        // The thread never gives it (it could not start, or the process was forked).
        let (mut fading, loaded) = loading();
        fading.set(MemoryId(7), due(70, 1));
        let mut expected = Schedule::default();
        expected.set(MemoryId(7), due(70, 1));
        assert_eq!(*fading.schedule(), expected);
        assert!(loaded.schedule.get().is_some(), "built once, kept");
        fading.set(MemoryId(8), due(80, 1));
        expected.set(MemoryId(8), due(80, 1));
        assert!(matches!(fading, Fading::Ready(_)));
        assert_eq!(*fading.schedule(), expected);
    }
}
