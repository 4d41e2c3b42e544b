//! Long work reports its progress to the host (docs/progress.md): opening a save (the latest
//! snapshot, then the replay of the events after it), replaying the log to a past point, and
//! building the memory index. Each is a *phase* with a name, a count done and a total known
//! up front; the host's callback ([`ProgressFn`]) hears the start of a phase (`done` 0), its
//! end (`done == total`) and, between them, at most about every hundredth of the total.
//!
//! The engine keeps the callback in its options ([`EngineOptions::progress`]): given to
//! [`Engine::open_with`] it hears the opening, and the engine keeps it for the phases of later
//! calls; [`Engine::set_progress`] replaces it. The callback runs on the thread of the call
//! doing the work, before that call returns, while the engine is borrowed by that call.
//!
//! Counting costs nothing noticeable: per item one increment and one comparison (with no
//! callback the next report is never due); the callback itself runs about a hundred times a
//! phase whatever its size.
//!
//! The memory index is a layer below the engine: the engine reports the phase `index.build`
//! around each speaker it has the index take in (`Engine::cover_in_index`).

use super::{Engine, EngineOptions};
use std::cell::Cell;
use std::sync::Arc;

/// How far a phase of long work has come: what a [`ProgressFn`] hears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The phase's name: one of the `Progress::*` constants (a host should show a name it
    /// does not know as it is: later versions add phases).
    pub phase: &'static str,
    /// Items done so far, `0..=total`.
    pub done: u64,
    /// Items in the phase, known when it starts.
    pub total: u64,
}

impl Progress {
    /// Opening a save: finding and decoding the latest snapshot (one item).
    pub const OPEN_SNAPSHOT: &'static str = "open.snapshot";
    /// Opening a save: replaying the events after the snapshot (items: events).
    pub const OPEN_REPLAY: &'static str = "open.replay";
    /// Rebuilding a past world (`world_at`, `memories_at`, `beliefs_at`, a query asked as of
    /// a point): replaying the log from the nearest known world (items: events).
    pub const HISTORY_REPLAY: &'static str = "history.replay";
    /// Building the memory index, on the first recall after opening, a rewind or a branch
    /// switch (items: recallable memories).
    pub const INDEX_BUILD: &'static str = "index.build";
    /// Catching up the memory index kept beside the save with the log, on the first recall
    /// after opening (items: events since its last commit; docs/memory.md).
    pub const INDEX_CATCH_UP: &'static str = "index.catch_up";
    /// Compacting a save ([`Engine::compact`]), in four steps (items): pending commits made
    /// durable, superseded snapshots dropped, records of an older format rewritten, the file
    /// compacted.
    pub const COMPACT: &'static str = "compact";
    /// Every phase this version reports, in the order an open and a first recall report them
    /// (then compaction, which only [`Engine::compact`] reports).
    pub const PHASES: [&'static str; 6] = [
        Progress::OPEN_SNAPSHOT,
        Progress::OPEN_REPLAY,
        Progress::HISTORY_REPLAY,
        Progress::INDEX_CATCH_UP,
        Progress::INDEX_BUILD,
        Progress::COMPACT,
    ];

    /// Whether the phase is over (`done == total`).
    pub fn is_done(&self) -> bool {
        self.done >= self.total
    }
}

/// The host's progress callback ([`EngineOptions::progress`], [`Engine::set_progress`]).
///
/// It must be quick (it runs on the engine's thread, between items of the work) and must not
/// panic: a panic unwinds through the engine's call, which then fails with the engine in
/// whatever state that call left (an open is abandoned; a replay or an index build leaves
/// nothing half-done that is kept).
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Counts a phase and reports it: at its start (when made), at most about every hundredth
/// of its total while it runs, and at its end ([`Meter::finish`]).
pub(crate) struct Meter<'a> {
    report: Option<&'a (dyn Fn(&Progress) + Send + Sync)>,
    phase: &'static str,
    total: u64,
    done: Cell<u64>,
    /// The count at which the next report is due (never, without a callback).
    next: Cell<u64>,
    step: u64,
}

impl<'a> Meter<'a> {
    /// Starts phase `phase` of `total` items, reporting 0 done.
    pub fn start(progress: Option<&'a ProgressFn>, phase: &'static str, total: u64) -> Meter<'a> {
        let report = progress.map(|f| &**f);
        let step = total.div_ceil(100).max(1);
        if let Some(report) = report {
            report(&Progress {
                phase,
                done: 0,
                total,
            });
        }
        Meter {
            report,
            phase,
            total,
            done: Cell::new(0),
            next: Cell::new(if report.is_some() { step } else { u64::MAX }),
            step,
        }
    }

    /// One more item done.
    #[inline]
    pub fn tick(&self) {
        self.set(self.done.get() + 1);
    }

    /// `done` items done.
    #[inline]
    pub fn set(&self, done: u64) {
        self.done.set(done);
        if done >= self.next.get() {
            self.report_now();
        }
    }

    #[cold]
    #[inline(never)]
    fn report_now(&self) {
        let done = self.done.get().min(self.total);
        self.next.set(done.saturating_add(self.step));
        // The end is reported once, by `finish`.
        if done < self.total
            && let Some(report) = self.report
        {
            report(&Progress {
                phase: self.phase,
                done,
                total: self.total,
            });
        }
    }

    /// Ends the phase, reporting all done (also when the work stopped early: a replay to a
    /// point of time ends where that time is reached).
    pub fn finish(self) {
        if let Some(report) = self.report {
            report(&Progress {
                phase: self.phase,
                done: self.total,
                total: self.total,
            });
        }
    }
}

impl Engine {
    /// Sets (or, with `None`, removes) the callback that hears the progress of long work
    /// from now on (docs/progress.md): the same as [`EngineOptions::progress`] given when
    /// opening.
    pub fn set_progress(&mut self, progress: Option<ProgressFn>) {
        self.options.progress = progress;
    }
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("durability", &self.durability)
            .field("snapshot_every", &self.snapshot_every)
            .field("settings", &self.settings)
            .field("progress", &self.progress.as_ref().map(|_| "Fn(&Progress)"))
            .finish()
    }
}

/// Options are equal when their settings are and they hold the same callback (the same
/// `Arc`) or none.
impl PartialEq for EngineOptions {
    fn eq(&self, other: &Self) -> bool {
        self.durability == other.durability
            && self.snapshot_every == other.snapshot_every
            && self.settings == other.settings
            && match (&self.progress, &other.progress) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for EngineOptions {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn recorder() -> (ProgressFn, Arc<Mutex<Vec<Progress>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        let f: ProgressFn = Arc::new(move |p: &Progress| into.lock().unwrap().push(*p));
        (f, seen)
    }

    #[test]
    fn a_meter_reports_start_about_a_hundred_steps_and_the_end() {
        let (f, seen) = recorder();
        let meter = Meter::start(Some(&f), "x", 1000);
        for _ in 0..1000 {
            meter.tick();
        }
        meter.finish();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 101, "{seen:?}");
        assert_eq!(seen[0].done, 0);
        assert_eq!(seen[1].done, 10);
        assert_eq!(seen.last().unwrap().done, 1000);
        assert!(seen.windows(2).all(|w| w[0].done < w[1].done));
    }

    #[test]
    fn an_empty_phase_reports_its_start_and_end() {
        let (f, seen) = recorder();
        Meter::start(Some(&f), "x", 0).finish();
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.iter().map(|p| (p.done, p.total)).collect::<Vec<_>>(),
            [(0, 0), (0, 0)]
        );
    }

    #[test]
    fn a_meter_without_a_callback_never_reports() {
        let meter = Meter::start(None, "x", 10);
        for _ in 0..20 {
            meter.tick();
        }
        assert_eq!(meter.next.get(), u64::MAX);
        meter.finish();
    }
}
