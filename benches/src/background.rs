//! Waiting for what a loaded world builds on its own thread after an open (what fades when,
//! on the thread named `rp-fading`), so that it does not run into the next timed pass.
//!
//! Reading the schedule (`World::next_fading_after`) does not wait for that thread: a reader
//! that comes first builds the schedule itself, and the thread goes on building its own. A
//! bench that opens again at once would time its next open beside it, on one core fewer.

use std::time::{Duration, Instant};

/// The name of the thread a loaded world builds its schedule of what fades when on.
const FADING_THREAD: &str = "rp-fading";

/// Waits until no thread of this process is building a loaded world's schedule (up to a
/// minute; at once where the process's threads cannot be listed, as off Linux).
pub fn wait_for_background() {
    let deadline = Instant::now() + Duration::from_secs(60);
    while fading_threads() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How many threads of this process are named [`FADING_THREAD`] (0 where `/proc` is not).
fn fading_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end() == FADING_THREAD)
        })
        .count()
}
