//! The C ABI of rp: `librp` and `include/rp.h` (docs/architecture.md).
//!
//! This crate is a thin layer over `rp-core`: it converts arguments, calls
//! the core and converts the answer back. cbindgen turns the `///` comments
//! below into the documentation of `include/rp.h`, so they are written for
//! a C reader.
//!
//! # Conventions
//!
//! - Every name starts with `rp_` (types) or `RP_` (constants and codes).
//! - Fallible calls return an `rp_result`; `RP_RESULT_OK` is 0. The details
//!   of a failure are in `rp_last_error()`, a message kept per thread.
//! - Strings passed in are `(const char *ptr, size_t len)` UTF-8, not
//!   NUL-terminated, borrowed only for the call. `ptr` must not be `NULL`.
//! - Strings handed out are NUL-terminated UTF-8. Through a `char **`
//!   out-parameter they become the caller's, released with
//!   `rp_string_free`; returned as `const char *` they stay the library's
//!   and the function says how long they live. Never pass one to `free()`.
//! - Out-parameters must not be `NULL` (unless the function says that one
//!   is optional), and are written only on success.
//! - Objects are opaque handles (`rp_engine *`), created by
//!   `rp_<type>_<constructor>` and released by `rp_<type>_free`, which
//!   accepts `NULL`. A freed or foreign handle is refused with
//!   `RP_RESULT_INVALID_HANDLE`, never dereferenced.
//! - Errors of the engine map one to one onto result codes, from
//!   `RP_RESULT_NOT_FOUND` on: one code per `rp_core::ErrorKind`.
//! - Structured values cross as JSON, with the schema in the comment of the
//!   function that takes or gives it.
//! - No Rust panic crosses into C: every entry point runs inside a panic
//!   boundary and reports a panic as `RP_RESULT_PANIC` (or `NULL` for calls
//!   that return a pointer).
//! - Callbacks (`rp_engine_run_turn`, `rp_engine_run_job`,
//!   `rp_engine_advance`) receive the caller's `void *user_data` untouched,
//!   run on the calling thread before the call returns, return
//!   an `int` holding an `RP_RESULT_*` code, and may not call rp with the
//!   engine that runs them (such a call is refused, never a deadlock).
//!   The progress callback (`rp_progress_fn`) follows the same rules, except
//!   that it returns nothing.
//! - Unless a function says otherwise, it may be called from any thread.

#![warn(missing_docs)]

use std::ffi::{CStr, c_char};

mod arg;
mod backup;
mod beliefs;
mod branch;
mod cards;
mod compact;
mod condition;
mod drives;
mod durability;
mod edits;
mod engine;
mod error;
mod graph;
mod handle;
mod history;
mod index;
mod job;
mod lore;
mod memory;
mod panic;
mod progress;
mod requirements;
mod rules;
mod run_turn;
mod scene;
mod sheet;
mod story;
mod string;
mod system_line;
mod turn;
mod world;

/// rp-ffi's own work, reachable from Rust for the benchmarks; not part of
/// the C API.
#[doc(hidden)]
pub mod bench {
    use std::ffi::CString;

    use rp_core::turn::{GenerateRequest, TurnOutcome};

    /// A request's JSON as the generate callback receives it.
    pub fn request_c_json(request: &GenerateRequest) -> CString {
        crate::turn::to_c_json(request)
    }

    /// An outcome's JSON as `rp_engine_run_turn` hands it out.
    pub fn outcome_c_json(outcome: &TurnOutcome) -> CString {
        crate::turn::to_c_json(outcome)
    }

    /// Runs `body` on the engine behind the handle `engine`, as a call of
    /// the C API does (its lock held), so a Rust peer can drive the very
    /// world the C calls drive; `None` if the handle is not live.
    pub fn with_engine<R>(
        engine: *mut crate::engine::rp_engine,
        body: impl FnOnce(&mut rp_core::Engine) -> R,
    ) -> Option<R> {
        crate::engine::with_engine(engine, |e| Ok(body(e))).ok()
    }
}

pub use backup::{rp_engine_backup, rp_engine_export_branch};
pub use branch::{
    rp_engine_branches, rp_engine_current_branch, rp_engine_delete_branch, rp_engine_fork,
    rp_engine_preview_rewind, rp_engine_rename_branch, rp_engine_rewind, rp_engine_switch_branch,
};
pub use cards::{
    rp_bytes_free, rp_engine_card_asset, rp_engine_card_assets, rp_engine_export_card,
    rp_engine_export_lorebook, rp_engine_import_card, rp_engine_import_lorebook,
    rp_engine_lorebooks, rp_engine_set_card_image,
};
pub use compact::rp_engine_compact;
pub use condition::{rp_condition, rp_condition_compile, rp_condition_free, rp_condition_test};
pub use drives::{
    rp_engine_advance, rp_engine_begin_tick, rp_engine_configure_drives, rp_engine_drives,
    rp_engine_initiation_candidates, rp_engine_next_tick, rp_engine_next_tick_at, rp_engine_notify,
    rp_engine_report_availability, rp_engine_set_personality,
};
pub use edits::{
    rp_engine_add_alternative, rp_engine_alternatives, rp_engine_choose, rp_engine_delete_line,
    rp_engine_edit_line, rp_engine_preview_edit, rp_engine_swipe_request,
};
pub use engine::{
    rp_decision_explain, rp_engine, rp_engine_apply_world_file, rp_engine_create_from_world_file,
    rp_engine_decide, rp_engine_entity_id, rp_engine_export_world_file, rp_engine_free,
    rp_engine_head, rp_engine_in_memory, rp_engine_load_world_file, rp_engine_open,
};
pub use error::{rp_last_error, rp_result};
pub use graph::{rp_engine_graph, rp_engine_query, rp_engine_recent_queries};
pub use history::{rp_engine_beliefs_at, rp_engine_memories_at};
pub use index::rp_engine_memory_index_origin;
pub use job::{
    rp_engine_begin_close_current_scene, rp_engine_begin_query, rp_engine_begin_scene_close,
    rp_engine_begin_time_skip, rp_engine_run_job, rp_job, rp_job_fail, rp_job_finish, rp_job_free,
    rp_job_provide, rp_job_provide_action, rp_job_provide_embeddings, rp_job_step,
};
pub use lore::{rp_engine_expand_macros, rp_engine_lore_timers};
pub use memory::{
    rp_engine_add_memory, rp_engine_always_loaded, rp_engine_mark_recalled, rp_engine_memories_of,
    rp_engine_memory, rp_engine_recall, rp_engine_remove_memory, rp_engine_search_entities,
};
pub use progress::{rp_engine_open_with_progress, rp_engine_set_progress, rp_progress_fn};
pub use requirements::{
    rp_engine_add_requirement, rp_engine_check_action, rp_engine_remove_requirement,
    rp_engine_requirements,
};
pub use rules::{rp_engine_add_rule, rp_engine_remove_rule, rp_engine_rules};
pub use run_turn::{
    rp_act_fn, rp_engine_run_turn, rp_engine_run_turn_with_actions, rp_generate_fn, rp_token_fn,
    rp_token_sink, rp_token_sink_emit,
};
pub use scene::{
    rp_engine_current_scene, rp_engine_due_scenes, rp_engine_open_scene, rp_engine_scene,
    rp_engine_scenes,
};
pub use sheet::rp_sheet_check;
pub use story::{
    rp_engine_cancel_event, rp_engine_complete_event, rp_engine_drop_thread,
    rp_engine_expire_event, rp_engine_open_thread, rp_engine_plan_event, rp_engine_resolve_thread,
    rp_engine_run_due, rp_engine_scoped_event, rp_engine_scoped_events, rp_engine_start_event,
    rp_engine_threads,
};
pub use string::rp_string_free;
pub use system_line::{rp_engine_inject_system_line, rp_engine_system_lines};
pub use turn::{
    rp_engine_inspect_prompt, rp_turn, rp_turn_begin, rp_turn_finish, rp_turn_free,
    rp_turn_provide, rp_turn_provide_action, rp_turn_provide_embeddings, rp_turn_step,
};
pub use world::{
    rp_engine_append, rp_engine_container, rp_engine_container_id, rp_engine_containers,
    rp_engine_dialogue, rp_engine_edge, rp_engine_edges, rp_engine_edges_from, rp_engine_entities,
    rp_engine_entity, rp_engine_events, rp_engine_next_id, rp_engine_world,
};

use crate::arg::str_arg;
use crate::error::{Error, ffi_result};
use crate::panic::ffi_guard;

/// The version of the rp library, such as `"0.1.0"`.
///
/// Returns a NUL-terminated string owned by the library and valid for the
/// life of the process: do not free or modify it.
///
/// Thread: any. Never fails and never returns `NULL`.
#[unsafe(no_mangle)]
pub extern "C" fn rp_version() -> *const c_char {
    // The version with its NUL terminator, checked when compiling. (Inside
    // the function, so cbindgen neither exports nor warns about it.)
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("the package version contains a NUL byte"),
        };
    ffi_guard(|| VERSION.as_ptr())
}

/// Checks that the loaded library is exactly version `expected`.
///
/// Call it once at start-up with the version your program was built and
/// tested against, so a mismatched `librp` is refused before it is used.
/// While rp is 0.x, any difference, patch level included, may change the
/// ABI, so the check is for equality.
///
/// `expected` is `expected_len` bytes of UTF-8, borrowed for the call; it
/// need not be NUL-terminated and must not be `NULL`.
///
/// Returns:
/// - `RP_RESULT_OK` when the versions are equal;
/// - `RP_RESULT_VERSION_MISMATCH` when they differ;
/// - `RP_RESULT_NULL_ARGUMENT` when `expected` is `NULL`;
/// - `RP_RESULT_INVALID_UTF8` when `expected` is not UTF-8.
///
/// On failure `rp_last_error()` names both versions or the faulty argument.
///
/// Thread: any.
///
/// # Safety
///
/// Unless `expected` is `NULL`, it must point to `expected_len` readable
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_check_version(
    expected: *const c_char,
    expected_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `expected` points to `expected_len`
        // readable bytes that outlive this call.
        let expected = unsafe { str_arg("expected", expected, expected_len) }?;
        let actual = rp_core::version();
        if expected == actual {
            Ok(())
        } else {
            Err(Error::new(
                rp_result::VersionMismatch,
                format_args!("librp is version {actual}, but version {expected} is required"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: rp_last_error returns a valid NUL-terminated string, copied
        // before the next rp call on this thread.
        unsafe { CStr::from_ptr(rp_last_error()) }
            .to_str()
            .expect("last error is UTF-8")
            .to_owned()
    }

    fn check(expected: &[u8]) -> rp_result {
        // SAFETY: the slice is valid for the call.
        unsafe { rp_check_version(expected.as_ptr().cast(), expected.len()) }
    }

    #[test]
    fn rp_version_is_the_core_version() {
        // SAFETY: rp_version returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(rp_version()) };
        assert_eq!(version.to_str(), Ok(rp_core::version()));
        assert!(!rp_core::version().is_empty());
    }

    #[test]
    fn rp_version_returns_the_same_pointer_every_time() {
        assert_eq!(rp_version(), rp_version());
    }

    #[test]
    fn the_library_version_passes_the_check() {
        assert_eq!(check(rp_core::version().as_bytes()), rp_result::Ok);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn another_version_is_a_mismatch_naming_both() {
        assert_eq!(check(b"0.0.0-other"), rp_result::VersionMismatch);
        assert_eq!(
            last_error(),
            format!(
                "librp is version {}, but version 0.0.0-other is required",
                rp_core::version()
            )
        );
        // A prefix of the real version is not the real version.
        let version = rp_core::version().as_bytes();
        assert_eq!(
            check(&version[..version.len() - 1]),
            rp_result::VersionMismatch
        );
    }

    #[test]
    fn a_null_version_is_a_null_argument() {
        // SAFETY: NULL is allowed and must be refused.
        let result = unsafe { rp_check_version(std::ptr::null(), 5) };
        assert_eq!(result, rp_result::NullArgument);
        assert_eq!(last_error(), "`expected` is NULL");
    }

    #[test]
    fn a_non_utf8_version_is_invalid_utf8() {
        assert_eq!(check(b"0.1\xff"), rp_result::InvalidUtf8);
        let message = last_error();
        assert!(
            message.starts_with("`expected` is not valid UTF-8"),
            "{message}"
        );
    }

    #[test]
    fn result_codes_keep_their_numbers() {
        assert_eq!(rp_result::Ok as i32, 0);
        assert_eq!(rp_result::Panic as i32, 1);
        assert_eq!(rp_result::NullArgument as i32, 2);
        assert_eq!(rp_result::InvalidUtf8 as i32, 3);
        assert_eq!(rp_result::VersionMismatch as i32, 4);
        assert_eq!(rp_result::InvalidHandle as i32, 5);
        assert_eq!(rp_result::NotFound as i32, 6);
        assert_eq!(rp_result::Invalid as i32, 7);
        assert_eq!(rp_result::Conflict as i32, 8);
        assert_eq!(rp_result::Capacity as i32, 9);
        assert_eq!(rp_result::WorldFile as i32, 10);
        assert_eq!(rp_result::Storage as i32, 11);
        assert_eq!(rp_result::Corrupt as i32, 12);
        assert_eq!(rp_result::UnsupportedVersion as i32, 13);
        assert_eq!(rp_result::NotASave as i32, 14);
        assert_eq!(rp_result::FactSyntax as i32, 15);
        assert_eq!(rp_result::Generation as i32, 16);
        assert_eq!(rp_result::RequirementUnmet as i32, 17);
    }
}
