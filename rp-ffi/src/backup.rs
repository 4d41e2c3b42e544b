//! Backups from C (rp-core's `Engine::backup`, `Engine::export_branch`;
//! docs/history.md#backups): a copy of an open save, whole or one branch of
//! it, in a new save file, made while the engine stays open.

use std::ffi::c_char;

use crate::arg::str_arg;
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};

/// Writes a backup of the engine's save to a new save file at `path`: every
/// branch with its history and head, which branch is current, and the
/// snapshots, as the engine has committed them when called. Opening the
/// backup with `rp_engine_open` gives the same world, branches and heads.
/// The engine stays open and is only read: nothing about it changes. An
/// engine in memory (`rp_engine_in_memory`) is backed up to a save file
/// like any other.
///
/// `path` is `path_len` bytes of UTF-8 (borrowed for the call). The backup
/// is written under a temporary name in the directory of `path` and takes
/// its name once complete and on stable storage; it never replaces a file,
/// and a failed backup leaves no file behind.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` when `path` exists (the
/// engine's own save file included; also when called from a callback of a
/// turn on this engine); `RP_RESULT_INVALID` when `path` names no file
/// (empty, or ending in `..`); `RP_RESULT_STORAGE` when it cannot be written
/// (a missing directory, no permission, a full disk) or the save cannot be
/// read; `RP_RESULT_CORRUPT` when the save's records are damaged;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On failure nothing changed and no file was
/// made.
///
/// Thread: any (see `rp_engine`). Does file I/O (it copies the whole save,
/// and syncs it): it may take a while on a long history, during which other
/// calls on the engine wait.
///
/// # Safety
///
/// `path` points to `path_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_backup(
    engine: *mut rp_engine,
    path: *const c_char,
    path_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        with_engine(engine, |engine| Ok(engine.backup(path)?))
    })
}

/// Writes the history of the branch named `name` to a new save file at
/// `path`: its events from the world's creation to its head (those it
/// shares with the branches it was forked from included), as the new save's
/// only branch, which keeps the name `name`, with a snapshot of its head so
/// the save opens without replaying. Opening it with `rp_engine_open` gives
/// that branch's world. The engine stays open, is only read, and its current
/// branch does not change.
///
/// `name` and `path` are UTF-8 of the given lengths (borrowed for the
/// call). The file is written as `rp_engine_backup` writes it: never over a
/// file, and no file left behind on failure.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when no branch has that
/// name; otherwise the codes of `rp_engine_backup`: `RP_RESULT_CONFLICT`
/// (`path` exists, or called from a callback of a turn on this engine),
/// `RP_RESULT_INVALID` (`path` names no file), `RP_RESULT_STORAGE`,
/// `RP_RESULT_CORRUPT`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`. On failure nothing
/// changed and no file was made.
///
/// Thread: any (see `rp_engine`). Does file I/O (and, for a branch other
/// than the current one, replays events to rebuild its world).
///
/// # Safety
///
/// `name` and `path` point to their lengths of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_export_branch(
    engine: *mut rp_engine,
    name: *const c_char,
    name_len: usize,
    path: *const c_char,
    path_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        with_engine(engine, |engine| Ok(engine.export_branch(name, path)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::tests::{head, last_error, tavern};

    #[test]
    fn a_backup_and_an_export_open_as_the_engine_s_world() {
        struct Dir(std::path::PathBuf);
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
        let t = tavern();
        let dir = Dir(std::env::temp_dir().join(format!("rp-ffi-backup-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).expect("a directory");
        let backup = dir.0.join("backup.rp");
        let backup = backup.to_str().expect("UTF-8");
        // SAFETY: valid strings.
        let result = unsafe { rp_engine_backup(t.engine, backup.as_ptr().cast(), backup.len()) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        let copy = rp_core::Engine::open(backup).expect("the backup opens");
        assert_eq!(copy.head(), head(t.engine));

        // SAFETY: valid strings.
        let again = unsafe { rp_engine_backup(t.engine, backup.as_ptr().cast(), backup.len()) };
        assert_eq!(again, rp_result::Conflict);

        let export = dir.0.join("main.rp");
        let export = export.to_str().expect("UTF-8");
        // SAFETY: valid strings.
        let result = unsafe {
            rp_engine_export_branch(
                t.engine,
                c"nowhere".as_ptr(),
                7,
                export.as_ptr().cast(),
                export.len(),
            )
        };
        assert_eq!(result, rp_result::NotFound);
        // SAFETY: valid strings.
        let result = unsafe {
            rp_engine_export_branch(
                t.engine,
                c"main".as_ptr(),
                4,
                export.as_ptr().cast(),
                export.len(),
            )
        };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        // SAFETY: NULL strings are refused, never read.
        let result = unsafe { rp_engine_backup(t.engine, std::ptr::null(), 0) };
        assert_eq!(result, rp_result::NullArgument);
    }
}
