//! Structure-aware `decode_snapshot`: the input is `body ++ tail ++ [tail_len]`; the body is
//! framed in a valid header so that the fuzzer reaches the MessagePack decoder and
//! `World::reindex`. A decoded world must round-trip, and `World::apply` of events generated
//! from `tail` must never panic or hang on it, however inconsistent it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::log::codec::decode_snapshot;

fuzz_target!(|data: &[u8]| {
    let (body, tail) = rp_fuzz::split_tail(data);
    if let Ok(mut world) = decode_snapshot(&rp_fuzz::wrap(body), "fuzz") {
        rp_fuzz::check_snapshot_round_trip(&world);
        rp_fuzz::drive(&mut world, tail, 16, |w, e| {
            let _ = w.apply(e);
        });
        rp_fuzz::check_snapshot_reencode(&world);
    }
});
