//! Shared pieces of the rp benches (DESIGN §10): a deterministic generator of valid synthetic
//! event logs, the SQLite peer, the fsync floor, and latency statistics.
//!
//! Every bench binary measures rp beside a peer in the same process, on the same encoded
//! events, so the figures it prints are ratios from one run.
//!
//! By what they hold: `background` (waiting for what a loaded world builds on its own
//! thread), `cache` (the page cache and peak memory, for cold starts), `rng` (deterministic
//! randomness, vocabularies), `synth` (the synthetic world and its turns), `saves` (save files
//! and big logs), `sqlite` (the SQLite peer), `fsync_floor` (the disk's floor), `stats`
//! (latency statistics, timing and reporting).

mod background;
mod cache;
mod fsync_floor;
mod rng;
mod saves;
mod sqlite;
mod stats;
mod synth;

pub use background::wait_for_background;
pub use cache::{bytes_under, disk_bytes_under, evict, files_under, peak_rss_kib, resident};
pub use fsync_floor::FsyncFloor;
pub use rng::{Rng, Vocabulary, Zipf, word};
pub use saves::{
    BigLog, add_snapshots, build_log, create_save, main_branch, setup_options, write_save,
};
pub use sqlite::{SqliteLog, SqliteSync};
pub use stats::{Elapsed, Latency, Stopwatch, file_size, loadavg, ms, report, thread_cpu, time};
pub use synth::{Synth, WorldShape, encode_all, engine_world_created};

use rp_core::Millis;

/// The name every synthetic world is created with.
pub const WORLD_NAME: &str = "The Crooked Lantern";
/// The host clock when every synthetic world is created.
pub const T0: Millis = 1_700_000_000_000;
/// Events in one synthetic turn.
pub const TURN_EVENTS: usize = 10;

/// True when the binary runs as a benchmark (`cargo bench`), false in test mode
/// (`cargo test --benches`, `cargo bench -- --test`), where the benches shrink to a smoke run.
pub fn full_run() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

/// The full-run value, or the smoke-run one.
pub fn scaled<T>(full: T, smoke: T) -> T {
    if full_run() { full } else { smoke }
}
