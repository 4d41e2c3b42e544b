//! `decode_snapshot` on arbitrary bytes. The input is `record ++ tail ++ [tail_len]`: the whole
//! input, and the record alone, are decoded; a decoded world must round-trip through
//! `encode_snapshot`, and events generated from `tail` are applied to it, by reference and by
//! value (as replay does) to two copies that must agree. `World::apply` must never panic or
//! hang, even on a decoded world whose records are inconsistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::log::codec::decode_snapshot;

fuzz_target!(|data: &[u8]| {
    let (record, tail) = rp_fuzz::split_tail(data);
    if let Ok(world) = decode_snapshot(data, "fuzz") {
        rp_fuzz::check_snapshot_round_trip(&world);
    }
    if let Ok(mut world) = decode_snapshot(record, "fuzz") {
        rp_fuzz::check_snapshot_round_trip(&world);
        let mut by_value = world.clone();
        rp_fuzz::drive(&mut world, tail, 16, |w, e| {
            let a = w.apply(e).map_err(|e| e.to_string());
            let b = by_value.apply_owned(e.clone()).map_err(|e| e.to_string());
            assert_eq!(a, b, "apply and apply_owned disagree on {e:?}");
        });
        assert!(
            world.to_bytes() == by_value.to_bytes(),
            "apply and apply_owned diverged"
        );
        rp_fuzz::check_snapshot_reencode(&world);
    }
});
