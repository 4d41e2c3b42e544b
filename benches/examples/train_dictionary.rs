//! Trains the dictionary that format 2 compresses events with, and writes it where rp-core
//! includes it (`rp-core/src/log/dictionary-1.zstd`).
//!
//! ```text
//! cargo run --release -p rp-benches --example train_dictionary -- rp-core/src/log/dictionary-1.zstd
//! ```
//!
//! Dictionary 1 is frozen: saves hold records compressed with it, and they must decode with
//! it forever. This program is how it was made (and how a dictionary 2 would be, under a new
//! codec byte); running it again writes the same bytes only with the same zstd and inputs.
//!
//! The samples are the event bodies (`codec::event_body`, MessagePack before compression) of
//! the synthetic log the log benches replay: every hot event kind (lines, memories, moves,
//! moods, edges, the clock, entities with fact sheets), in the proportions a campaign has.

use rp_benches::{Synth, WorldShape};
use rp_core::log::codec::event_body;

/// The dictionary's size: 64 KiB gives about 2.7× on these events where 16 KiB gives 2.6×.
const DICTIONARY_BYTES: usize = 64 * 1024;
/// Events generated; the samples are taken after the genesis, plus a share of it.
const EVENTS: usize = 60_000;

fn main() {
    let out = std::env::args()
        .nth(1)
        .expect("usage: train_dictionary <output file>");
    let events: Vec<_> = Synth::new(WorldShape::new(10_000), 0x5eed_0001)
        .log(EVENTS)
        .collect();
    // The genesis is 10,000 entities; keep one in ten of them so lines and memories dominate.
    let samples: Vec<Vec<u8>> = events
        .iter()
        .enumerate()
        .filter(|(i, e)| e.kind() != "entity_created" || i % 10 == 0)
        .map(|(_, e)| event_body(e))
        .collect();
    let dictionary =
        zstd::dict::from_samples(&samples, DICTIONARY_BYTES).expect("zstd trains a dictionary");
    std::fs::write(&out, &dictionary).expect("write the dictionary");
    println!(
        "{} bytes of dictionary from {} samples ({} bytes) written to {out}",
        dictionary.len(),
        samples.len(),
        samples.iter().map(Vec::len).sum::<usize>()
    );
}
