//! Shared helpers for the rp-core fuzz targets: record framing, round-trip and consistency
//! checks, and a small structure-aware event generator that draws ids and names from a world
//! so that generated events get past the "no such entity" checks and exercise `World::apply`.
//!
//! `checks` holds the round-trip and consistency checks, `generator` the event generator
//! ([`Src`], [`Gen`], [`drive`]); the record framing and the tavern world are here.

mod checks;
mod generator;

pub use checks::{
    apply_checked, check_consistent, check_event_round_trip, check_snapshot_reencode,
    check_snapshot_round_trip, self_eq,
};
pub use generator::{Gen, Src, drive};

use rp_core::*;
use std::sync::OnceLock;

/// The tavern world file shipped with the examples.
pub const TAVERN_TOML: &str = include_str!("../../examples/tavern.toml");

/// Frames a MessagePack `body` as a record of the current format (magic, version, CRC-32 of
/// version and body), so a structure-aware target gets every input past the checksum.
pub fn wrap(body: &[u8]) -> Vec<u8> {
    rp_core::log::codec::frame(body)
}

/// Splits an input laid out as `record ++ tail ++ [tail_len]` (`tail_len` one byte). An empty
/// input gives two empty halves; a `tail_len` longer than what is there takes all of it.
pub fn split_tail(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((&n, rest)) = data.split_last() else {
        return (data, data);
    };
    let n = usize::from(n).min(rest.len());
    rest.split_at(rest.len() - n)
}

/// Builds an input for [`split_tail`].
pub fn join_tail(record: &[u8], tail: &[u8]) -> Vec<u8> {
    assert!(tail.len() <= 255);
    let mut out = record.to_vec();
    out.extend_from_slice(tail);
    out.push(tail.len() as u8);
    out
}

/// The tavern world, loaded from `examples/tavern.toml` by applying its creation events.
pub fn tavern() -> &'static World {
    static TAVERN: OnceLock<World> = OnceLock::new();
    TAVERN.get_or_init(|| {
        let events = worldfile::creation_events("tavern.toml", TAVERN_TOML, 0, Default::default())
            .expect("tavern.toml loads");
        let mut world = World::new();
        for e in &events {
            world.apply(e).expect("tavern event applies");
        }
        world
    })
}
