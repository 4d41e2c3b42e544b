//! `decode_snapshot` on arbitrary bytes. The input is `record ++ tail ++ [tail_len]`: the whole
//! input, and the record alone, are decoded; a decoded world must round-trip through
//! `encode_snapshot`, and events generated from `tail` are applied to it. `World::apply` must
//! never panic or hang, even on a decoded world whose records are inconsistent.
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
        rp_fuzz::drive(&mut world, tail, 16, |w, e| {
            let _ = w.apply(e);
        });
        rp_fuzz::check_snapshot_reencode(&world);
    }
});
