//! Reading the arguments C callers pass in.
//!
//! Strings come in as `(const char *ptr, size_t len)`: `len` bytes of UTF-8,
//! not NUL-terminated, borrowed for the duration of the call. `ptr` must not
//! be `NULL`, even when `len` is 0.
//!
//! Out-parameters are pointers to where the result goes. They must not be
//! `NULL`, and are checked before the call does any work, so a call refused
//! for a `NULL` out-parameter has changed nothing. They are written only
//! when the call succeeds.

use std::ffi::c_char;
use std::ptr::NonNull;

use crate::error::{Error, rp_result};

/// Borrows the string argument `name` as `&str`, checking it is not `NULL`
/// and is UTF-8.
///
/// # Safety
///
/// Unless `ptr` is `NULL`, it must point to `len` initialised bytes that stay
/// valid and unmodified for `'a`, and `len` must not exceed `isize::MAX`.
pub(crate) unsafe fn str_arg<'a>(
    name: &str,
    ptr: *const c_char,
    len: usize,
) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return Err(Error::new(
            rp_result::NullArgument,
            format_args!("`{name}` is NULL"),
        ));
    }
    // SAFETY: `ptr` is not NULL, and the caller guarantees it points to `len`
    // readable bytes that outlive 'a.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|error| {
        Error::new(
            rp_result::InvalidUtf8,
            format_args!("`{name}` is not valid UTF-8: {error}"),
        )
    })
}

/// Borrows the array argument `name` of `len` items. `ptr` may be `NULL` only
/// when `len` is 0.
///
/// # Safety
///
/// Unless `ptr` is `NULL`, it must point to `len` initialised, aligned items
/// that stay valid and unmodified for `'a`.
pub(crate) unsafe fn slice_arg<'a, T>(
    name: &str,
    ptr: *const T,
    len: usize,
) -> Result<&'a [T], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::new(
            rp_result::NullArgument,
            format_args!("`{name}` is NULL but its length is {len}"),
        ));
    }
    // SAFETY: `ptr` is not NULL, and the caller guarantees it points to `len`
    // items that outlive 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Checks the out-parameter `name` is not `NULL`.
///
/// The caller writes through the result only once the call has succeeded.
#[inline(always)]
pub(crate) fn out_arg<T>(name: &str, ptr: *mut T) -> Result<NonNull<T>, Error> {
    NonNull::new(ptr).ok_or_else(|| null_argument(name))
}

/// The error of argument `name` being `NULL` (made out of line: every call
/// checks its arguments).
#[cold]
#[inline(never)]
pub(crate) fn null_argument(name: &str) -> Error {
    Error::new(rp_result::NullArgument, format_args!("`{name}` is NULL"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(ptr: *const c_char, len: usize) -> Result<&'static str, (rp_result, String)> {
        // SAFETY: the tests pass NULL or pointers into 'static byte strings.
        unsafe { str_arg("text", ptr, len) }
            .map_err(|error| (error.code(), error.message().to_owned()))
    }

    #[test]
    fn reads_exactly_len_bytes_without_a_terminator() {
        let bytes = b"0.1.0-and-more";
        assert_eq!(read(bytes.as_ptr().cast(), 5), Ok("0.1.0"));
    }

    #[test]
    fn an_empty_string_needs_a_non_null_pointer() {
        assert_eq!(read(c"".as_ptr(), 0), Ok(""));
        assert_eq!(
            read(std::ptr::null(), 0),
            Err((rp_result::NullArgument, "`text` is NULL".to_owned()))
        );
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_position() {
        let bytes = b"ab\xffcd";
        assert_eq!(
            read(bytes.as_ptr().cast(), bytes.len()),
            Err((
                rp_result::InvalidUtf8,
                "`text` is not valid UTF-8: invalid utf-8 sequence of 1 bytes from index 2"
                    .to_owned()
            ))
        );
    }

    #[test]
    fn a_null_out_parameter_is_a_null_argument() {
        let mut slot = 0_u64;
        assert!(out_arg("out", &raw mut slot).is_ok());
        let error = out_arg::<u64>("out_id", std::ptr::null_mut()).expect_err("NULL");
        assert_eq!(error.code(), rp_result::NullArgument);
        assert_eq!(error.message(), "`out_id` is NULL");
    }
}
