//! Branches and rewind from C (rp-core's `Engine::rewind`, `fork`,
//! `branches`, `switch_branch`, `rename_branch`, `delete_branch`,
//! `preview_rewind`). Rewinding never destroys: the undone events stay
//! reachable as a branch of their own until it is deleted.

use std::ffi::c_char;

use rp_core::{BranchInfo, ContainerId, EntityId, GroupId, MemoryId, RewindPreview, Seq};
use serde::Serialize;

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::string::owned_string;
use crate::turn::to_json;
use crate::world::write_json;

/// A branch as `rp_engine_branches` shows it.
#[derive(Serialize)]
struct Branch<'a> {
    name: &'a str,
    head: Seq,
    current: bool,
    forked_from: Option<ForkedFrom<'a>>,
}

#[derive(Serialize)]
struct ForkedFrom<'a> {
    branch: Option<&'a str>,
    seq: Seq,
}

impl<'a> From<&'a BranchInfo> for Branch<'a> {
    fn from(info: &'a BranchInfo) -> Self {
        Branch {
            name: &info.name,
            head: info.head,
            current: info.current,
            forked_from: info.forked_from.as_ref().map(|(branch, seq)| ForkedFrom {
                branch: branch.as_deref(),
                seq: *seq,
            }),
        }
    }
}

/// A rewind preview as `rp_engine_preview_rewind` shows it.
#[derive(Serialize)]
struct Preview<'a> {
    from_seq: Seq,
    to_seq: Seq,
    event_count: usize,
    events_by_kind: &'a std::collections::BTreeMap<&'static str, usize>,
    entities: Vec<EntityId>,
    containers: Vec<ContainerId>,
    edges: Vec<EdgeKey>,
    groups: Vec<GroupId>,
    memories: Vec<MemoryId>,
}

#[derive(Serialize)]
struct EdgeKey {
    from: EntityId,
    to: EntityId,
}

impl<'a> From<&'a RewindPreview> for Preview<'a> {
    fn from(p: &'a RewindPreview) -> Self {
        Preview {
            from_seq: p.from_seq,
            to_seq: p.to_seq,
            event_count: p.event_count(),
            events_by_kind: &p.events_by_kind,
            entities: p.entities.iter().copied().collect(),
            containers: p.containers.iter().copied().collect(),
            edges: p
                .edges
                .iter()
                .map(|(from, to)| EdgeKey {
                    from: *from,
                    to: *to,
                })
                .collect(),
            groups: p.groups.iter().copied().collect(),
            memories: p.memories.iter().copied().collect(),
        }
    }
}

/// Every named branch of the engine's save, in creation order, as a JSON
/// array written to `*out_json` (a string the caller releases with
/// `rp_string_free`):
///
/// ```text
/// [{"name": "main", "head": 42, "current": true, "forked_from": null},
///  {"name": "main~2", "head": 57, "current": false,
///   "forked_from": {"branch": "main",  // null once that branch is deleted
///                   "seq": 42}}]       // the history they share ends here
/// ```
///
/// Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_branches(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let branches = engine.branches();
            Ok(to_json(
                &branches.iter().map(Branch::from).collect::<Vec<_>>(),
            ))
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the branches JSON", json) }
    })
}

/// The name of the engine's current branch (`"main"` in a new world),
/// written to `*out_name`, a string the caller releases with
/// `rp_string_free`.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback of a turn on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_name` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_current_branch(
    engine: *const rp_engine,
    out_name: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_name", out_name)?;
        let name = with_engine(engine, |engine| Ok(engine.current_branch().to_owned()))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the branch name", name) }
    })
}

/// What `rp_engine_rewind` to `to_seq` would undo, as JSON written to
/// `*out_json` (a string the caller releases with `rp_string_free`).
/// Changes nothing.
///
/// ```text
/// {"from_seq": 57, "to_seq": 42,   // the head now, and after the rewind
///  "event_count": 15,              // events undone
///  "events_by_kind": {"user_turn": 3, "assistant_turn": 4, ...},
///  "entities": [3, 5],             // ids the undone events touch
///  "containers": [],
///  "edges": [{"from": 3, "to": 5}],
///  "groups": [],
///  "memories": [30, 31]}
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `to_seq` is not on the
/// current branch (it must be 1 to the head); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), `RP_RESULT_STORAGE` / `RP_RESULT_CORRUPT`
/// when the save file cannot be read.
///
/// Thread: any (see `rp_engine`). Reads the undone events from the save
/// file.
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_preview_rewind(
    engine: *const rp_engine,
    to_seq: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            let preview = engine.preview_rewind(to_seq)?;
            Ok(to_json(&Preview::from(&preview)))
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { write_json(out, "the rewind preview JSON", json) }
    })
}

/// Moves the head of the current branch back to `to_seq`: the world becomes
/// what it was right after that event. Nothing is destroyed: the undone
/// events are kept as a new branch named after the current one (`"main~2"`,
/// say), and the current branch keeps its name.
///
/// When `out_kept_branch` is not `NULL`, writes there the name of the branch
/// that keeps the undone events (a string the caller releases with
/// `rp_string_free`), or `NULL` when `to_seq` is the head (nothing was
/// undone, no branch was made).
///
/// An `rp_turn` open on the engine is refused from then on; an input it
/// committed after `to_seq` stays with the undone events.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `to_seq` is not on the
/// current branch (1 to the head); `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback of a turn on this engine),
/// `RP_RESULT_STORAGE`. On failure nothing changed.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file (and replays events to rebuild the world).
///
/// # Safety
///
/// `out_kept_branch` is `NULL` or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_rewind(
    engine: *mut rp_engine,
    to_seq: u64,
    out_kept_branch: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let kept = with_engine(engine, |engine| Ok(engine.rewind(to_seq)?))?;
        if !out_kept_branch.is_null() {
            let name = match kept {
                Some(name) => owned_string("the branch name", name)?,
                None => std::ptr::null_mut(),
            };
            // SAFETY: the caller made the non-NULL `out_kept_branch` writable.
            unsafe { out_kept_branch.write(name) };
        }
        Ok(())
    })
}

/// Creates a branch named `name` that shares the current branch's history
/// up to `at_seq`. The current branch does not change: switch to the new
/// one with `rp_engine_switch_branch`.
///
/// `name` is `name_len` bytes of UTF-8 (borrowed for the call): not empty,
/// no surrounding whitespace or control characters, at most 256
/// characters. When `out_branch_json` is not `NULL`, writes there the new
/// branch as one object of `rp_engine_branches` (a string the caller
/// releases with `rp_string_free`).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for a bad name or an
/// `at_seq` not on the current branch (1 to the head);
/// `RP_RESULT_CONFLICT` when a branch of that name exists (or when called
/// from a callback of a turn on this engine); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure nothing changed.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file.
///
/// # Safety
///
/// `name` points to `name_len` readable bytes; `out_branch_json` is `NULL`
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_fork(
    engine: *mut rp_engine,
    at_seq: u64,
    name: *const c_char,
    name_len: usize,
    out_branch_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        let info = with_engine(engine, |engine| Ok(engine.fork(at_seq, name)?))?;
        if let Some(out) = std::ptr::NonNull::new(out_branch_json) {
            // SAFETY: the caller made the non-NULL `out_branch_json` writable.
            unsafe { write_json(out, "the branch JSON", to_json(&Branch::from(&info))) }?;
        }
        Ok(())
    })
}

/// Makes the branch named `name` current, loading its world (the head and
/// the world of every later call are that branch's).
///
/// `name` is `name_len` bytes of UTF-8 (borrowed for the call). Switching
/// to the current branch does nothing. An `rp_turn` open on the engine is
/// refused from then on.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when no branch has that
/// name; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), `RP_RESULT_STORAGE`, `RP_RESULT_CORRUPT`. On
/// failure nothing changed.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file (and replays events to rebuild the world).
///
/// # Safety
///
/// `name` points to `name_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_switch_branch(
    engine: *mut rp_engine,
    name: *const c_char,
    name_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        with_engine(engine, |engine| Ok(engine.switch_branch(name)?))
    })
}

/// Renames the branch `from` to `to` (the current one included).
///
/// Both are UTF-8 of the given lengths (borrowed for the call); `to` follows
/// the rules of `rp_engine_fork`. Renaming a branch to its own name does
/// nothing.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when no branch is named
/// `from`; `RP_RESULT_INVALID` for a bad new name; `RP_RESULT_CONFLICT`
/// when a branch is named `to` already (or when called from a callback of a
/// turn on this engine); `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure nothing
/// changed.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file.
///
/// # Safety
///
/// `from` and `to` point to their lengths of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_rename_branch(
    engine: *mut rp_engine,
    from: *const c_char,
    from_len: usize,
    to: *const c_char,
    to_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees both strings point to their lengths
        // of readable bytes.
        let from = unsafe { str_arg("from", from, from_len) }?;
        // SAFETY: as above.
        let to = unsafe { str_arg("to", to, to_len) }?;
        with_engine(engine, |engine| Ok(engine.rename_branch(from, to)?))
    })
}

/// Deletes the branch named `name`, which must not be the current one. The
/// events it shares with other branches stay; the rest are removed from the
/// save file for good.
///
/// `name` is `name_len` bytes of UTF-8 (borrowed for the call).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when no branch has that
/// name; `RP_RESULT_CONFLICT` when it is the current branch (or when called
/// from a callback of a turn on this engine); `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure nothing changed.
///
/// Thread: any (see `rp_engine`). Does file I/O for an engine with a save
/// file.
///
/// # Safety
///
/// `name` points to `name_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_delete_branch(
    engine: *mut rp_engine,
    name: *const c_char,
    name_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        with_engine(engine, |engine| Ok(engine.delete_branch(name)?))
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr;

    use serde_json::Value;

    use super::*;
    use crate::string::rp_string_free;
    use crate::turn::tests::{Tavern, head, last_error, take_json, tavern};
    use crate::world::rp_engine_append;

    fn advance(t: &Tavern, to: i64) {
        let events = format!(r#"[{{"time_advanced": {{"to": {to}}}}}]"#);
        let mut seq = 0;
        // SAFETY: a valid string and out-parameter.
        let result =
            unsafe { rp_engine_append(t.engine, events.as_ptr().cast(), events.len(), &mut seq) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
    }

    fn branches(t: &Tavern) -> Value {
        let mut json = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        assert_eq!(
            unsafe { rp_engine_branches(t.engine, &mut json) },
            rp_result::Ok
        );
        take_json(json)
    }

    fn rewind(t: &Tavern, to: u64) -> Result<Option<String>, rp_result> {
        let mut kept = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        match unsafe { rp_engine_rewind(t.engine, to, &mut kept) } {
            rp_result::Ok if kept.is_null() => Ok(None),
            rp_result::Ok => {
                // SAFETY: a live string rp handed out, released once.
                let name = unsafe { CStr::from_ptr(kept) }.to_str().map(str::to_owned);
                // SAFETY: as above.
                unsafe { rp_string_free(kept) };
                Ok(Some(name.expect("UTF-8")))
            }
            code => Err(code),
        }
    }

    fn switch(t: &Tavern, name: &str) -> rp_result {
        // SAFETY: a valid string.
        unsafe { rp_engine_switch_branch(t.engine, name.as_ptr().cast(), name.len()) }
    }

    #[test]
    fn a_rewind_keeps_the_undone_events_as_a_branch() {
        let t = tavern();
        let start = head(t.engine);
        advance(&t, 1_000);
        advance(&t, 2_000);

        let mut json = ptr::null_mut();
        // SAFETY: a valid out-parameter.
        let result = unsafe { rp_engine_preview_rewind(t.engine, start, &mut json) };
        assert_eq!(result, rp_result::Ok);
        let preview = take_json(json);
        assert_eq!(preview["event_count"], 2);
        assert_eq!(preview["events_by_kind"]["time_advanced"], 2);
        assert_eq!(head(t.engine), start + 2, "a preview changes nothing");

        assert_eq!(rewind(&t, start), Ok(Some("main~2".to_owned())));
        assert_eq!(head(t.engine), start);
        assert_eq!(rewind(&t, start), Ok(None), "nothing to undo");
        assert_eq!(rewind(&t, start + 1), Err(rp_result::Invalid));
        let list = branches(&t);
        assert_eq!(list[0]["name"], "main~2");
        assert_eq!(list[0]["head"], start + 2);
        assert_eq!(list[1]["name"], "main");
        assert_eq!(list[1]["current"], true);
        assert_eq!(list[1]["forked_from"]["seq"], start);

        assert_eq!(switch(&t, "main~2"), rp_result::Ok);
        assert_eq!(head(t.engine), start + 2);
        assert_eq!(switch(&t, "nowhere"), rp_result::NotFound);
    }

    #[test]
    fn forks_are_named_renamed_and_deleted() {
        let t = tavern();
        let start = head(t.engine);
        let mut json = ptr::null_mut();
        // SAFETY: valid strings and out-parameters.
        unsafe {
            assert_eq!(
                rp_engine_fork(t.engine, start, c"side".as_ptr(), 4, &mut json),
                rp_result::Ok
            );
            let info = take_json(json);
            assert_eq!(info["name"], "side");
            assert_eq!(info["current"], false);
            assert_eq!(
                rp_engine_fork(t.engine, start, c"side".as_ptr(), 4, ptr::null_mut()),
                rp_result::Conflict
            );
            assert_eq!(
                rp_engine_rename_branch(t.engine, c"side".as_ptr(), 4, c"aside".as_ptr(), 5),
                rp_result::Ok
            );
            assert_eq!(
                rp_engine_delete_branch(t.engine, c"main".as_ptr(), 4),
                rp_result::Conflict
            );
            assert_eq!(
                rp_engine_delete_branch(t.engine, c"aside".as_ptr(), 5),
                rp_result::Ok
            );
            let mut name = ptr::null_mut();
            assert_eq!(rp_engine_current_branch(t.engine, &mut name), rp_result::Ok);
            assert_eq!(CStr::from_ptr(name).to_str(), Ok("main"));
            rp_string_free(name);
        }
        assert_eq!(branches(&t).as_array().map(Vec::len), Some(1));
    }
}
