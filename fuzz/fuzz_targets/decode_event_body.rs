//! Structure-aware `decode_event`: the input is a MessagePack body, framed here in a valid
//! header (magic, the current version, CRC-32, the body stored plain) so that every input reaches the MessagePack decoder and
//! its depth/size limits. A decoded event must round-trip and apply cleanly (or be rejected
//! without changing anything) on the tavern world.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rp_core::log::codec::decode_event;

fuzz_target!(|body: &[u8]| {
    let record = rp_fuzz::wrap(body);
    if let Ok(event) = decode_event(&record, "fuzz") {
        rp_fuzz::check_event_round_trip(&event);
        let mut world = rp_fuzz::tavern().clone();
        rp_fuzz::apply_checked(&mut world, &event);
    }
});
