//! Checks every target runs: events and snapshots survive a round trip through their
//! records, and the lookups `apply` maintains agree with a world rebuilt from scratch.

use rp_core::log::codec::{decode_event, decode_snapshot, encode_event, encode_snapshot};
use rp_core::*;

/// `x == x`: false only for values holding a NaN somewhere.
#[allow(clippy::eq_op)]
pub fn self_eq<T: PartialEq>(x: &T) -> bool {
    x == x
}

/// A decoded event must re-encode to a record that decodes to an equal event, and encoding
/// must be a fixpoint from then on.
pub fn check_event_round_trip(event: &Event) {
    let bytes = encode_event(event);
    let again = decode_event(&bytes, "fuzz-reencoded")
        .unwrap_or_else(|e| panic!("re-encoded event does not decode: {e}\n{event:?}"));
    if self_eq(event) {
        assert_eq!(&again, event, "event changed across a round trip");
    }
    assert_eq!(
        encode_event(&again),
        bytes,
        "event encoding is not a fixpoint"
    );
}

/// A decoded world must re-encode to a snapshot that decodes to a world with the same bytes.
pub fn check_snapshot_round_trip(world: &World) -> World {
    let bytes = world.to_bytes();
    let record = encode_snapshot(world);
    let again = decode_snapshot(&record, "fuzz-reencoded")
        .unwrap_or_else(|e| panic!("re-encoded snapshot does not decode: {e}"));
    assert_eq!(
        again.to_bytes(),
        bytes,
        "snapshot bytes changed across a round trip"
    );
    again
}

/// Like [`check_snapshot_round_trip`] but for worlds that may be inconsistent (a decoded
/// snapshot with events applied): encoding must not panic, and if the snapshot decodes again
/// its bytes must be stable.
pub fn check_snapshot_reencode(world: &World) {
    let bytes = world.to_bytes();
    if let Ok(again) = decode_snapshot(&encode_snapshot(world), "fuzz-reencoded") {
        assert_eq!(
            again.to_bytes(),
            bytes,
            "snapshot bytes changed across a round trip"
        );
    }
}

/// Checks that the lookups `apply` maintains incrementally agree with a world rebuilt from
/// the snapshot form (which re-derives them from scratch and checks every reference). Only
/// meaningful for worlds built by `apply` from `World::new()`.
pub fn check_consistent(world: &World) {
    let rebuilt =
        decode_snapshot(&encode_snapshot(world), "fuzz-consistency").unwrap_or_else(|e| {
            panic!("a world built by apply does not survive a snapshot reload: {e}")
        });
    assert_eq!(rebuilt.to_bytes(), world.to_bytes());
    for e in rebuilt.entities() {
        assert_eq!(
            world.entity_by_name(&e.name).map(|x| x.id),
            Some(e.id),
            "name index out of step for {:?}",
            e.name
        );
        if let Some(k) = &e.key {
            assert_eq!(
                world.entity_by_key(k).map(|x| x.id),
                Some(e.id),
                "entity key index out of step for {k:?}"
            );
        }
        assert_eq!(
            world.carrier_of(e.id),
            rebuilt.carrier_of(e.id),
            "carrier index out of step for {}",
            e.id
        );
    }
    for c in rebuilt.containers() {
        if let Some(k) = &c.key {
            assert_eq!(
                world.container_by_key(k).map(|x| x.id),
                Some(c.id),
                "container key index out of step for {k:?}"
            );
        }
        for s in &c.slots {
            assert_eq!(
                world.occupancy(c.id, &s.name),
                rebuilt.occupancy(c.id, &s.name),
                "slot count out of step for {:?} in {}",
                s.name,
                c.id
            );
        }
    }
}

/// Applies `event` to a world built by `apply` and checks the contract: on error the world is
/// unchanged; either way its lookups stay consistent.
pub fn apply_checked(world: &mut World, event: &Event) -> bool {
    let before = world.to_bytes();
    let seq = world.seq();
    let ok = match world.apply(event) {
        Ok(()) => {
            assert_eq!(world.seq(), seq + 1);
            true
        }
        Err(_) => {
            assert_eq!(
                world.to_bytes(),
                before,
                "a rejected event changed the world"
            );
            false
        }
    };
    check_consistent(world);
    ok
}
