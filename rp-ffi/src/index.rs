//! Where the memory index came from, read from C (docs/memory.md, "The index beside the save").
//! The index itself is rp-core's; this call converts the answer.

use std::ffi::c_char;

use crate::engine::rp_engine;
use crate::error::{ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;

/// Writes where the memory index of `engine` came from to `*out_json` (a string the caller
/// releases with `rp_string_free`): `null` before the first recall (and after a rewind or a
/// branch switch until the next); `{"loaded": {"caught_up": 12}}` when it was read from beside
/// the save (`SAVE.index`) and caught up with that many events; `{"built": {"reason": "..."}}`
/// when it was built there because the one there could not be used (missing, damaged, of
/// another history); `"memory"` for a save that is not a file.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine). Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_memory_index_origin(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the memory index's origin", |e| {
                Ok(to_json(&e.memory_index_origin()))
            })
        }
    })
}
