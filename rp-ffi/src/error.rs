//! Result codes and the thread-local last-error message.
//!
//! Every fallible entry point returns an [`rp_result`]; `RP_RESULT_OK` is 0 and
//! every other code names a class of failure a C caller can branch on. The
//! details a person needs (which argument, which byte, which versions) go
//! into a message kept per thread, read with [`rp_last_error`].
//!
//! Each call that returns an [`rp_result`] first clears the message, so after
//! `RP_RESULT_OK` it reads as the empty string and after a failure it
//! describes that failure. Calls that return no [`rp_result`] leave it alone.

use std::cell::{Cell, RefCell};
use std::ffi::c_char;
use std::fmt;

use rp_core::ErrorKind;

use crate::panic::ffi_guard;

/// The outcome of a fallible rp call.
///
/// Codes are stable: a code keeps its number once released, and new codes
/// are added at the end. Treat any code you do not know as a failure.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum rp_result {
    /// The call succeeded.
    Ok = 0,
    /// rp panicked, an internal bug; please report it with the message from
    /// `rp_last_error`. Handles passed to the call may be in any state and
    /// should only be freed.
    Panic = 1,
    /// A pointer argument that must not be `NULL` was `NULL`.
    NullArgument = 2,
    /// A string argument was not valid UTF-8.
    InvalidUtf8 = 3,
    /// The library is not the version the caller requires.
    VersionMismatch = 4,
    /// A handle argument is not a live handle: it was freed already, or it
    /// never came from rp. The call did nothing.
    InvalidHandle = 5,
    /// An id, name, key or branch that does not exist (`ErrorKind::NotFound`).
    NotFound = 6,
    /// An argument or event that is malformed or out of range, JSON that
    /// does not match its schema included (`ErrorKind::Invalid`).
    Invalid = 7,
    /// A request that contradicts the current state: a duplicate name, an
    /// entity in two places, a save file that already exists
    /// (`ErrorKind::Conflict`).
    Conflict = 8,
    /// A slot that is already full (`ErrorKind::Capacity`).
    Capacity = 9,
    /// A world file (TOML) with a syntax, type or reference error; the
    /// message names the file, line, column and field
    /// (`ErrorKind::WorldFile`).
    WorldFile = 10,
    /// An I/O failure of the save file, a full disk included
    /// (`ErrorKind::Storage`).
    Storage = 11,
    /// A save file whose content is damaged (`ErrorKind::Corrupt`).
    Corrupt = 12,
    /// A save file written by a newer format version
    /// (`ErrorKind::UnsupportedVersion`).
    UnsupportedVersion = 13,
    /// A file that is not an rp save at all (`ErrorKind::NotASave`).
    NotASave = 14,
    /// A fact sheet that does not compile; the message names the owner, line
    /// and column (`ErrorKind::FactSyntax`).
    FactSyntax = 15,
    /// The host's model failed: a generate callback of
    /// `rp_engine_run_turn` returned a failure, or a result rp could not
    /// read; the message says what it reported (`ErrorKind::Generation`).
    /// The turn was abandoned; its input stays committed.
    Generation = 16,
    /// A transition guarded by a pending requirement (docs/requirements.md):
    /// a move out of a guarded place, a scoped event, a time skip, a scene
    /// close, or a host action checked with `rp_engine_check_action`. The
    /// message names the requirement's id, name and text; nothing changed
    /// (`ErrorKind::RequirementUnmet`).
    RequirementUnmet = 17,
}

impl rp_result {
    /// The code of an rp-core error kind: one code per kind.
    pub(crate) fn of_kind(kind: ErrorKind) -> rp_result {
        match kind {
            ErrorKind::NotFound => rp_result::NotFound,
            ErrorKind::Invalid => rp_result::Invalid,
            ErrorKind::Conflict => rp_result::Conflict,
            ErrorKind::Capacity => rp_result::Capacity,
            ErrorKind::WorldFile => rp_result::WorldFile,
            ErrorKind::Storage => rp_result::Storage,
            ErrorKind::Corrupt => rp_result::Corrupt,
            ErrorKind::UnsupportedVersion => rp_result::UnsupportedVersion,
            ErrorKind::NotASave => rp_result::NotASave,
            ErrorKind::FactSyntax => rp_result::FactSyntax,
            ErrorKind::Generation => rp_result::Generation,
            ErrorKind::RequirementUnmet => rp_result::RequirementUnmet,
            // `ErrorKind` is #[non_exhaustive]. rp-ffi is released in lockstep with
            // rp-core (`rp_check_version` demands equality), so a new kind gets its
            // own code in the same change; until then it reads as `Invalid`, the
            // least specific code.
            _ => rp_result::Invalid,
        }
    }
}

/// A failed call on its way back to C: the code it returns and the message
/// [`rp_last_error`] will give.
#[derive(Debug)]
pub(crate) struct Error {
    code: rp_result,
    message: String,
}

impl Error {
    /// A failure with `code`, described by `message`.
    ///
    /// `code` must not be [`rp_result::Ok`].
    pub(crate) fn new(code: rp_result, message: impl fmt::Display) -> Self {
        debug_assert_ne!(code, rp_result::Ok, "an Error needs a failure code");
        Self {
            code,
            message: message.to_string(),
        }
    }

    /// A failure of an rp-core call: the code of its kind, its message.
    pub(crate) fn core(error: &rp_core::Error) -> Self {
        Self::new(rp_result::of_kind(error.kind()), error)
    }

    /// The code the call returns.
    #[cfg(test)]
    pub(crate) fn code(&self) -> rp_result {
        self.code
    }

    /// The message the call leaves as the last error.
    #[cfg(test)]
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl From<rp_core::Error> for Error {
    fn from(error: rp_core::Error) -> Self {
        Self::core(&error)
    }
}

/// Runs the body of an entry point that returns an [`rp_result`].
///
/// Clears the last error, runs `body` inside the panic boundary and turns
/// its `Err` into the error's code, with its message as the last error.
#[inline]
pub(crate) fn ffi_result<F>(body: F) -> rp_result
where
    F: FnOnce() -> Result<(), Error> + std::panic::UnwindSafe,
{
    clear_last_error();
    ffi_guard(|| match body() {
        Ok(()) => rp_result::Ok,
        Err(error) => {
            set_last_error(&error.message);
            error.code
        }
    })
}

thread_local! {
    /// This thread's last error: the message's bytes and a NUL, or nothing
    /// for the empty string. Clearing keeps the buffer, so a call that
    /// succeeds neither allocates nor frees.
    static LAST_ERROR: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Whether `LAST_ERROR` holds a message: read on every call, and kept
    /// apart because a `Cell<bool>` needs no destructor, so reading it is a
    /// plain load.
    static HAS_ERROR: Cell<bool> = const { Cell::new(false) };
}

/// Makes `message` this thread's last error.
///
/// A NUL inside `message` would end the C string early, so it is replaced
/// by U+FFFD.
pub(crate) fn set_last_error(message: &str) {
    // During thread teardown the slot may already be gone; there is nobody
    // left on this thread to read the message then.
    let _ = LAST_ERROR.try_with(|slot| {
        let mut buffer = slot.borrow_mut();
        buffer.clear();
        for (i, part) in message.split('\0').enumerate() {
            if i > 0 {
                buffer.extend_from_slice("\u{FFFD}".as_bytes());
            }
            buffer.extend_from_slice(part.as_bytes());
        }
        buffer.push(0);
        HAS_ERROR.set(true);
    });
}

/// Makes this thread's last error the empty string, without allocating.
///
/// Inlined: every call starts here, and the usual case (the last call
/// succeeded) is one thread-local read.
#[inline]
pub(crate) fn clear_last_error() {
    if HAS_ERROR.get() {
        clear_held_error();
    }
}

#[cold]
#[inline(never)]
fn clear_held_error() {
    /// The most a cleared buffer keeps for the next message; a larger one
    /// is freed, so one huge message does not hold its memory for the
    /// thread's life.
    const KEPT_CAPACITY: usize = 4096;
    HAS_ERROR.set(false);
    let _ = LAST_ERROR.try_with(|slot| {
        let mut buffer = slot.borrow_mut();
        if buffer.capacity() > KEPT_CAPACITY {
            *buffer = Vec::new();
        } else {
            buffer.clear();
        }
    });
}

/// The message describing the last failed rp call on the calling thread.
///
/// Returns a NUL-terminated UTF-8 string owned by the library: do not free
/// or modify it. It stays valid until the next rp call on the same thread;
/// copy it to keep it. It is the empty string when the last call that
/// returns an `rp_result` succeeded, or when no such call was made on this
/// thread.
///
/// Thread: any. Each thread has its own message. Never fails and never
/// returns `NULL`.
#[unsafe(no_mangle)]
pub extern "C" fn rp_last_error() -> *const c_char {
    let pointer = ffi_guard(|| {
        if !HAS_ERROR.get() {
            return std::ptr::null();
        }
        // A message ends with its NUL.
        LAST_ERROR
            .try_with(|slot| slot.borrow().as_ptr().cast::<c_char>())
            .unwrap_or(std::ptr::null())
    });
    if pointer.is_null() {
        c"".as_ptr()
    } else {
        pointer
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    #[test]
    fn every_error_kind_has_a_code_of_its_own() {
        let codes: std::collections::BTreeSet<i32> = ErrorKind::ALL
            .iter()
            .map(|k| rp_result::of_kind(*k) as i32)
            .collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len(), "two kinds share a code");
    }

    fn last_error() -> String {
        // SAFETY: rp_last_error returns a valid NUL-terminated string, read
        // before any other rp call on this thread.
        unsafe { CStr::from_ptr(rp_last_error()) }
            .to_str()
            .expect("last error is UTF-8")
            .to_owned()
    }

    #[test]
    fn the_last_error_is_empty_on_a_fresh_thread() {
        let message = std::thread::spawn(last_error).join().expect("thread ran");
        assert_eq!(message, "");
    }

    #[test]
    fn a_failed_call_sets_its_code_and_message() {
        let result = ffi_result(|| Err(Error::new(rp_result::NullArgument, "`x` is NULL")));
        assert_eq!(result, rp_result::NullArgument);
        assert_eq!(last_error(), "`x` is NULL");
    }

    #[test]
    fn a_successful_call_clears_the_previous_message() {
        set_last_error("stale");
        assert_eq!(ffi_result(|| Ok(())), rp_result::Ok);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn a_panicking_call_reports_the_panic_code() {
        let result = ffi_result(|| panic!("invariant broken"));
        assert_eq!(result, rp_result::Panic);
        assert_eq!(last_error(), "panic: invariant broken");
    }

    #[test]
    fn each_thread_keeps_its_own_message() {
        set_last_error("main thread");
        let other = std::thread::spawn(|| {
            set_last_error("other thread");
            last_error()
        })
        .join()
        .expect("thread ran");
        assert_eq!(other, "other thread");
        assert_eq!(last_error(), "main thread");
    }

    #[test]
    fn interior_nul_bytes_do_not_truncate_the_message() {
        set_last_error("before\0after");
        assert_eq!(last_error(), "before\u{FFFD}after");
        set_last_error("\0");
        assert_eq!(last_error(), "\u{FFFD}");
    }

    #[test]
    fn clearing_keeps_the_buffer_and_a_longer_message_replaces_a_shorter_one() {
        set_last_error("a long message first");
        let capacity = LAST_ERROR.with(|slot| slot.borrow().capacity());
        assert_eq!(ffi_result(|| Ok(())), rp_result::Ok);
        assert_eq!(last_error(), "");
        assert_eq!(
            LAST_ERROR.with(|slot| slot.borrow().capacity()),
            capacity,
            "a successful call does not free the buffer"
        );
        set_last_error("short");
        assert_eq!(last_error(), "short");
        set_last_error("a longer message than the one before");
        assert_eq!(last_error(), "a longer message than the one before");

        // A huge message is not kept once cleared.
        set_last_error(&"x".repeat(100_000));
        clear_last_error();
        assert_eq!(LAST_ERROR.with(|slot| slot.borrow().capacity()), 0);
        assert_eq!(last_error(), "");
    }
}
