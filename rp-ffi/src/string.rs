//! Strings rp hands to C: NUL-terminated UTF-8 the caller owns and gives back
//! with [`rp_string_free`].

use std::ffi::{CString, c_char};

use crate::error::{Error, rp_result};
use crate::panic::ffi_guard;

/// Moves `text` to C as a string for [`rp_string_free`].
///
/// A C string ends at its first NUL, so text holding one is refused with
/// `RP_RESULT_INVALID` rather than handed out cut short. (JSON never holds
/// one: serde_json escapes it.)
pub(crate) fn owned_string(what: &str, text: String) -> Result<*mut c_char, Error> {
    CString::new(text).map(CString::into_raw).map_err(|error| {
        Error::new(
            rp_result::Invalid,
            format_args!(
                "{what} holds a NUL byte at index {}, which a C string cannot carry",
                error.nul_position()
            ),
        )
    })
}

/// Releases a string that rp handed out (`char *` out-parameters such as
/// the JSON of `rp_engine_decide`).
///
/// `string` may be `NULL`, which does nothing. Otherwise it must be a string
/// rp handed out and not yet released: passing anything else (a string from
/// `malloc`, a string from `rp_version` or `rp_last_error`, a string twice)
/// is undefined behaviour. Never release rp's strings with `free()`.
///
/// Thread: any, not necessarily the one that received the string.
///
/// # Safety
///
/// `string` is `NULL` or a pointer rp handed out as an owned string that has
/// not been released yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_string_free(string: *mut c_char) {
    if string.is_null() {
        return;
    }
    ffi_guard(|| {
        // SAFETY: the caller guarantees `string` came from `owned_string`
        // (CString::into_raw) and was not released before.
        drop(unsafe { CString::from_raw(string) });
    });
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    #[test]
    fn an_owned_string_round_trips_and_is_released() {
        let pointer = owned_string("text", "héllo".into()).expect("no NUL");
        // SAFETY: `pointer` is a live string from owned_string.
        assert_eq!(unsafe { CStr::from_ptr(pointer) }.to_str(), Ok("héllo"));
        // SAFETY: released exactly once.
        unsafe { rp_string_free(pointer) };
    }

    #[test]
    fn text_with_a_nul_is_refused() {
        let error = owned_string("the world file", "a\0b".into()).expect_err("NUL");
        assert_eq!(error.code(), rp_result::Invalid);
        assert_eq!(
            error.message(),
            "the world file holds a NUL byte at index 1, which a C string cannot carry"
        );
    }

    #[test]
    fn releasing_null_does_nothing() {
        // SAFETY: NULL is allowed.
        unsafe { rp_string_free(std::ptr::null_mut()) };
    }
}
