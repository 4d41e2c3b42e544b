//! Building save files: fast setup options, a save with a synthetic world, big logs with
//! snapshots, written straight to a store.

use crate::{Synth, T0, WORLD_NAME, WorldShape};
use rp_core::log::codec::{encode_event, encode_snapshot};
use rp_core::store::{BranchId, Commit, RedbStore, Store};
use rp_core::{Durability, Engine, EngineOptions, Seq, World};
use std::path::Path;

/// Engine options for fast setup: no fsync per commit, no snapshots.
pub fn setup_options() -> EngineOptions {
    EngineOptions {
        durability: Durability::Eventual,
        snapshot_every: 0,
        ..EngineOptions::default()
    }
}

/// A save file at `path` holding the world of `synth` after its genesis (appended with
/// [`setup_options`], then flushed). Returns the generator, ready for turns.
pub fn create_save(path: &Path, shape: WorldShape, seed: u64) -> Synth {
    let mut synth = Synth::new(shape, seed);
    let mut engine =
        Engine::create_with(path, WORLD_NAME, T0, setup_options()).expect("create the save");
    engine.append(synth.genesis()).expect("genesis applies");
    engine.flush().expect("flush");
    synth
}

/// The id of the branch that holds seq 1 (the main branch of a fresh save). The branch ids
/// are internal to rp-core; this finds it through the public `Store` API.
pub fn main_branch(store: &dyn Store) -> BranchId {
    (0..64)
        .find(|b| matches!(store.last_seq(*b), Ok(Some(_))))
        .expect("a save file with events")
}

/// A synthetic log, encoded, with the worlds at chosen seqs (for snapshots).
pub struct BigLog {
    /// `records[i]` is the encoded event of seq `i + 1`.
    pub records: Vec<Vec<u8>>,
    /// Total encoded bytes.
    pub bytes: usize,
    /// The world as of each requested seq, in request order.
    pub worlds: Vec<(Seq, World)>,
    /// The world after the last event.
    pub last: World,
}

/// Generates `total` events of a world of `shape`, checking each applies, and encodes them.
pub fn build_log(shape: WorldShape, total: usize, seed: u64, snapshot_at: &[Seq]) -> BigLog {
    let mut world = World::new();
    let mut records = Vec::with_capacity(total);
    let mut bytes = 0;
    let mut worlds = Vec::new();
    for event in Synth::new(shape, seed).log(total) {
        world
            .apply(&event)
            .unwrap_or_else(|e| panic!("synthetic event {} is invalid: {e}", world.seq() + 1));
        let r = encode_event(&event);
        bytes += r.len();
        records.push(r);
        if snapshot_at.contains(&world.seq()) {
            worlds.push((world.seq(), world.clone()));
        }
    }
    BigLog {
        records,
        bytes,
        worlds,
        last: world,
    }
}

/// Writes `log` to a new save file at `path`: `Engine::create_with` writes seq 1 and the
/// metadata, then the raw store takes the rest in large non-durable batches, flushed at the
/// end. No snapshots (see [`add_snapshots`]).
pub fn write_save(path: &Path, log: &BigLog) {
    drop(Engine::create_with(path, WORLD_NAME, T0, setup_options()).expect("create the save"));
    let mut store = RedbStore::open(path).expect("open the save");
    let branch = main_branch(&store);
    store
        .read_events(branch, 1, 1, &mut |_, b| {
            assert_eq!(
                b, log.records[0],
                "the engine wrote a different world_created"
            );
            Ok(())
        })
        .expect("read seq 1");
    for (i, chunk) in log.records[1..].chunks(50_000).enumerate() {
        let first = 2 + (i * 50_000) as Seq;
        store
            .commit(Commit {
                events: chunk
                    .iter()
                    .zip(first..)
                    .map(|(r, s)| (branch, s, r.clone()))
                    .collect(),
                durable: false,
                ..Commit::default()
            })
            .expect("commit");
    }
    store
        .commit(Commit {
            durable: true,
            ..Commit::default()
        })
        .expect("commit");
}

/// Adds snapshots (seq, world) to the save file at `path`, as the engine would store them.
/// Returns the size in bytes of each encoded snapshot.
pub fn add_snapshots(path: &Path, snapshots: &[(Seq, &World)]) -> Vec<usize> {
    let mut store = RedbStore::open(path).expect("open the save");
    let branch = main_branch(&store);
    let records: Vec<_> = snapshots
        .iter()
        .map(|(s, w)| (branch, *s, encode_snapshot(w)))
        .collect();
    let sizes = records.iter().map(|r| r.2.len()).collect();
    store
        .commit(Commit {
            snapshots: records,
            durable: true,
            ..Commit::default()
        })
        .expect("commit");
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TURN_EVENTS, WorldShape};
    use rp_core::{Engine, Seq};

    #[test]
    fn synthetic_log_applies_in_order() {
        let log = build_log(WorldShape::new(200), 5_000, 7, &[1_000]);
        assert_eq!(log.records.len(), 5_000);
        assert_eq!(log.last.seq(), 5_000);
        assert_eq!(log.last.entities().count(), 200);
        assert_eq!(log.worlds.len(), 1);
        assert_eq!(log.worlds[0].0, 1_000);
    }

    #[test]
    fn synthetic_turns_apply_through_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.rp");
        let mut synth = create_save(&path, WorldShape::new(50), 1);
        let mut engine = Engine::open_with(&path, setup_options()).unwrap();
        for _ in 0..100 {
            let turn = synth.turn();
            assert_eq!(turn.len(), TURN_EVENTS);
            engine.append(turn).unwrap();
        }
        assert_eq!(engine.head(), 1 + 8 + 50 + 50 + 100 * TURN_EVENTS as Seq);
    }
}
