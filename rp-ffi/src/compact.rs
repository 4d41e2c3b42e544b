//! Compaction from C (rp-core's `Engine::compact`; docs/history.md#compaction):
//! the room a save holds without using it given back, its file shrunk.

use std::ffi::c_char;

use crate::arg::out_arg;
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::turn::to_json;
use crate::world::write_json;

/// Compacts the engine's save: drops on every branch the snapshots no
/// branch opens from any more (all but the latest of each branch and, for
/// each branch forked from it, the latest at or before the fork point), in
/// one durable commit, rewrites the records of an older format in the
/// current one (a save written before format 2 is about half the size
/// after), then compacts the save file so that it shrinks to what it holds. The world, the
/// branches, their heads and histories do not change; the save opens to
/// the same worlds as before, as fast.
///
/// Writes what was done as JSON to `*out_json` (a string the caller
/// releases with `rp_string_free`):
///
/// ```text
/// {"file_bytes_before": 16846848,     // the file's length before, after
///  "file_bytes_after": 8392704,
///  "allocated_bytes_before": 12656640, // the room it takes on disk
///  "allocated_bytes_after": 7872512,   // (st_blocks * 512 on Unix)
///  "snapshots_dropped": 3,
///  "compacted": true,                  // whether the file changed
///  "records_upgraded": 0}              // records of an older format rewritten
/// ```
///
/// Sizes are 0 for an engine in memory (`rp_engine_in_memory`), which has
/// no file: it only drops its superseded snapshots. Compacting a compact
/// save is harmless. Reports the phase `"compact"` to the engine's progress
/// callback (`rp_engine_set_progress`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_STORAGE` when the file cannot be
/// written (a full disk, an I/O error); `RP_RESULT_CORRUPT` when damage is
/// found on the way; `RP_RESULT_CONFLICT` when called from a callback
/// running on this engine; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`. A compaction that fails leaves a save that
/// opens with the same worlds, and the engine usable; `*out_json` is not
/// written.
///
/// Thread: any (see `rp_engine`). Does file I/O: it rewrites the file in
/// place, which takes a time proportional to its size, during which other
/// calls on the engine wait.
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_compact(
    engine: *mut rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| Ok(to_json(&engine.compact()?)))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the compaction's JSON", json) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::tests::{last_error, tavern};

    fn compact(engine: *mut rp_engine) -> (rp_result, Option<serde_json::Value>) {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: `out` is writable.
        let result = unsafe { rp_engine_compact(engine, &mut out) };
        if out.is_null() {
            return (result, None);
        }
        // SAFETY: rp wrote a NUL-terminated string, released below.
        let json = unsafe { std::ffi::CStr::from_ptr(out) }
            .to_str()
            .expect("UTF-8")
            .to_owned();
        // SAFETY: the string rp handed out, released once.
        unsafe { crate::rp_string_free(out) };
        (result, Some(serde_json::from_str(&json).expect("JSON")))
    }

    #[test]
    fn an_engine_in_memory_compacts_to_a_report_of_zeros() {
        let t = tavern();
        let (result, json) = compact(t.engine);
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        assert_eq!(
            json,
            Some(serde_json::to_value(rp_core::Compaction::default()).expect("JSON"))
        );
        // SAFETY: a NULL out-parameter is refused, never written.
        let result = unsafe { rp_engine_compact(t.engine, std::ptr::null_mut()) };
        assert_eq!(result, rp_result::NullArgument);
        assert_eq!(compact(std::ptr::null_mut()).0, rp_result::NullArgument);
    }
}
