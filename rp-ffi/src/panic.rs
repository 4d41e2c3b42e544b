//! The panic boundary every `extern "C"` entry point runs inside.
//!
//! Unwinding out of an `extern "C"` function aborts the host process, and a C
//! caller could do nothing with a Rust panic anyway. So each entry point wraps
//! its body in [`ffi_guard`], which catches the panic, records its message as
//! the thread's last error (see [`crate::error`]) and returns a value the C
//! caller can test: [`rp_result::Panic`] for functions that return a result
//! code, `NULL` for functions that return a pointer, nothing for functions
//! that return nothing. The process's panic hook still runs first, so by
//! default the message is also printed to stderr.

use std::any::Any;
use std::panic::{UnwindSafe, catch_unwind};

use crate::error::{rp_result, set_last_error};

/// What an entry point returns when its body panicked.
pub(crate) trait PanicValue {
    /// The value handed back to C in place of the body's result.
    fn panic_value() -> Self;
}

impl PanicValue for rp_result {
    fn panic_value() -> Self {
        rp_result::Panic
    }
}

impl PanicValue for () {
    fn panic_value() -> Self {}
}

impl<T> PanicValue for *const T {
    fn panic_value() -> Self {
        std::ptr::null()
    }
}

/// Runs `body`, turning a panic into `R::panic_value()`.
///
/// On a panic the thread's last error becomes `"panic: <message>"`, so the C
/// caller can read what went wrong through `rp_last_error`. The message of a
/// successful or failed body is left as the body set it.
///
/// `body` must be [`UnwindSafe`]: an entry point that captures state which a
/// panic could leave half-updated (a handle's interior, say) has to decide
/// explicitly what a caller may still do with it, rather than have this
/// helper assert it away.
#[inline]
pub(crate) fn ffi_guard<R, F>(body: F) -> R
where
    R: PanicValue,
    F: FnOnce() -> R + UnwindSafe,
{
    match catch_unwind(body) {
        Ok(value) => value,
        Err(payload) => {
            set_last_error(&format!("panic: {}", panic_message(payload.as_ref())));
            R::panic_value()
        }
    }
}

/// The text a `panic!` carried, or a placeholder when its payload is not text.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&'static str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "a panic with a payload that is not a string"
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;
    use crate::error::{clear_last_error, rp_last_error};

    fn last_error() -> String {
        // SAFETY: rp_last_error always returns a valid NUL-terminated string,
        // and nothing else runs on this thread before it is copied.
        unsafe { CStr::from_ptr(rp_last_error()) }
            .to_str()
            .expect("last error is UTF-8")
            .to_owned()
    }

    #[test]
    fn returns_the_body_value_when_it_does_not_panic() {
        clear_last_error();
        let result: rp_result = ffi_guard(|| rp_result::Ok);
        assert_eq!(result, rp_result::Ok);
        assert_eq!(last_error(), "");
    }

    #[test]
    fn a_panic_becomes_the_panic_code_and_its_message_the_last_error() {
        clear_last_error();
        let result: rp_result = ffi_guard(|| panic!("boom {}", 42));
        assert_eq!(result, rp_result::Panic);
        assert_eq!(last_error(), "panic: boom 42");
    }

    #[test]
    fn a_panic_in_a_pointer_returning_entry_point_becomes_null() {
        let pointer: *const u8 = ffi_guard(|| panic!("static message"));
        assert!(pointer.is_null());
        assert_eq!(last_error(), "panic: static message");

        let pointer: *const u8 = ffi_guard(|| std::panic::panic_any(7_u32));
        assert!(pointer.is_null());
        assert_eq!(
            last_error(),
            "panic: a panic with a payload that is not a string"
        );
    }
}
