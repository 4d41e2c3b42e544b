//! `decode_event` on arbitrary bytes: never panics; a decoded event round-trips through
//! `encode_event`, and applying it to the tavern world keeps the world consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::log::codec::decode_event;

fuzz_target!(|data: &[u8]| {
    if let Ok(event) = decode_event(data, "fuzz") {
        rp_fuzz::check_event_round_trip(&event);
        let mut world = rp_fuzz::tavern().clone();
        rp_fuzz::apply_checked(&mut world, &event);
    }
});
