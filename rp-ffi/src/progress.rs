//! The progress of long work (docs/progress.md): `rp_engine_open_with_progress` reports
//! opening a save; `rp_engine_set_progress` gives an engine a callback for the long phases
//! of later calls (a replay to a past point, the memory index's build).

use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

use rp_core::{Engine, EngineOptions, Progress, ProgressFn};

use crate::arg::{out_arg, str_arg};
use crate::engine::{CallingOut, new_handle, rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};

/// The progress callback of `rp_engine_open_with_progress` and
/// `rp_engine_set_progress`: how far a phase of long work has come.
///
/// Called with:
///
/// - `user_data`: the pointer given with the callback, untouched;
/// - `phase`: the phase's name, NUL-terminated UTF-8 owned by rp and valid
///   only during the call: `"open.snapshot"` (finding and decoding the
///   latest snapshot: one item), `"open.replay"` (replaying the events after
///   it), `"history.replay"` (rebuilding a past world for
///   `rp_engine_memories_at`, `rp_engine_beliefs_at` or a query's
///   `"as_of"`: events), `"index.build"` (building the memory index on the
///   first recall after opening, a rewind or a branch switch: memories) or
///   `"compact"` (`rp_engine_compact`: four steps, pending commits made
///   durable, superseded snapshots dropped, records of an older format
///   rewritten, the file compacted).
///   Later versions add phases: show a name you do not know as it is;
/// - `done`, `total`: items done of the phase's total, `done <= total`.
///
/// Each phase is reported when it starts (`done` 0), at most about every
/// hundredth of its total while it runs, and when it ends (`done ==
/// total`, also for an empty phase, `total` 0). A phase that fails ends
/// without its last report (the call returns the error).
///
/// Called on the thread of the rp call doing the work, before that call
/// returns. It must be quick, must return normally (no `longjmp` or C++
/// exception across rp), and must not call rp with the engine doing the
/// work (such a call is refused with `RP_RESULT_CONFLICT`); calls with other
/// engines are allowed.
#[allow(non_camel_case_types)]
pub type rp_progress_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, phase: *const c_char, done: u64, total: u64),
>;

/// The host's progress callback, its `user_data`, and the handle number of
/// the engine it reports for (0 while opening: no handle exists yet).
struct Target {
    report: unsafe extern "C" fn(*mut c_void, *const c_char, u64, u64),
    user_data: *mut c_void,
    engine: usize,
}

// SAFETY: rp never dereferences `user_data`, it only hands it back to the
// host's callback, on the thread of the call doing the work (documented on
// rp_progress_fn and rp_engine_set_progress: the host makes it usable there).
unsafe impl Send for Target {}
// SAFETY: as above; the target is only read.
unsafe impl Sync for Target {}

impl Target {
    fn call(&self, progress: &Progress) {
        // While the callback runs, this thread holds the engine's lock: a call
        // with the same engine is refused instead of waiting for ever.
        let _held =
            (self.engine != 0).then(|| CallingOut::new(std::ptr::without_provenance(self.engine)));
        // Phase names are static and hold no NUL.
        let phase = CString::new(progress.phase).unwrap_or_default();
        // SAFETY: the host's callback, called as rp_progress_fn documents: its
        // own user_data, and a NUL-terminated string valid for the call.
        unsafe {
            (self.report)(
                self.user_data,
                phase.as_ptr(),
                progress.done,
                progress.total,
            )
        };
    }
}

/// The host's callback as rp-core's progress callback.
fn progress_fn(
    report: unsafe extern "C" fn(*mut c_void, *const c_char, u64, u64),
    user_data: *mut c_void,
    engine: usize,
) -> ProgressFn {
    let target = Target {
        report,
        user_data,
        engine,
    };
    Arc::new(move |progress: &Progress| target.call(progress))
}

/// Opens an existing save file on its current branch, as `rp_engine_open`
/// does, reporting its progress to `progress`: the phase `"open.snapshot"`
/// (the latest snapshot found and decoded), then `"open.replay"` (the events
/// after it; see `rp_progress_fn`).
///
/// `path` is `path_len` bytes of UTF-8 (borrowed for the call). `progress`
/// may be `NULL` (then this is `rp_engine_open`); `user_data` is handed to
/// it untouched and may be anything, `NULL` included. The callback is used
/// only during this call: the engine does not keep it (its `user_data` need
/// not outlive the call). For the long phases of later calls, give the
/// engine a callback with `rp_engine_set_progress`.
///
/// On success writes the engine to `*out_engine`; release it with
/// `rp_engine_free`.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, or the code of the core error, as
/// `rp_engine_open` does (`RP_RESULT_STORAGE`, `RP_RESULT_NOT_A_SAVE`,
/// `RP_RESULT_CORRUPT`, `RP_RESULT_UNSUPPORTED_VERSION`; `rp_last_error()`
/// names the file and what is wrong).
///
/// Thread: any. The callback runs on the calling thread, before this call
/// returns. Does file I/O: it may take a while on a long history.
///
/// # Safety
///
/// `path` points to `path_len` readable bytes; `out_engine` is writable;
/// `progress`, unless `NULL`, is a function of the `rp_progress_fn` type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_open_with_progress(
    path: *const c_char,
    path_len: usize,
    progress: rp_progress_fn,
    user_data: *mut c_void,
    out_engine: *mut *mut rp_engine,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        let out = out_arg("out_engine", out_engine)?;
        let options = EngineOptions {
            progress: progress.map(|report| progress_fn(report, user_data, 0)),
            ..EngineOptions::default()
        };
        let mut engine = Engine::open_with(path, options)?;
        // Used for the open only: `user_data` is borrowed for the call.
        engine.set_progress(None);
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(new_handle(engine)) };
        Ok(())
    })
}

/// Gives `engine` a progress callback for the long phases of later calls
/// (see `rp_progress_fn`: `"history.replay"`, `"index.build"`,
/// `"compact"`), replacing the one it had; `progress` `NULL` removes it.
///
/// `user_data` is handed to the callback untouched: it must stay usable
/// until the callback is replaced or removed, or the engine is freed.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT` (`engine` NULL),
/// `RP_RESULT_INVALID_HANDLE`, or `RP_RESULT_CONFLICT` from a callback of the
/// same engine.
///
/// Thread: any. The callback runs on the thread of the call doing the work
/// (whichever thread that is), during that call.
///
/// # Safety
///
/// `progress`, unless `NULL`, is a function of the `rp_progress_fn` type,
/// callable with `user_data` from any thread that calls rp with `engine`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_set_progress(
    engine: *mut rp_engine,
    progress: rp_progress_fn,
    user_data: *mut c_void,
) -> rp_result {
    ffi_result(|| {
        let number = engine.addr();
        with_engine(engine, |e| {
            e.set_progress(progress.map(|report| progress_fn(report, user_data, number)));
            Ok(())
        })
    })
}
