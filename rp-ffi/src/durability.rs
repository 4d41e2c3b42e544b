//! When commits reach the disk, from C (rp-core's `Durability`, `Engine::set_durability` and
//! `Engine::flush`): a game that saves often can write its turns eventually, grouped, and
//! make them durable at the moments it chooses.

use std::ffi::c_char;

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::string::owned_string;

/// Sets when the engine's next commits reach stable storage, by name:
/// `"immediate"` (the default: every commit is on disk before the call that
/// made it returns) or `"eventual"` (faster: consecutive commits are held
/// and written together, in one transaction, with the next durable one:
/// `rp_engine_flush`, every 4,096 events, or `rp_engine_free`; a crash may
/// lose the latest commits, never part of one). Going back to `"immediate"`
/// makes every earlier commit durable first.
///
/// `durability` is UTF-8 of `durability_len` bytes (borrowed for the call).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for another name;
/// `RP_RESULT_STORAGE` when making earlier commits durable fails;
/// `RP_RESULT_CONFLICT` when called from a callback running on this engine;
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`. On any error the durability is unchanged.
///
/// Thread: any (see `rp_engine`). Does file I/O when going back to
/// `"immediate"`.
///
/// # Safety
///
/// `durability` points to `durability_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_set_durability(
    engine: *mut rp_engine,
    durability: *const c_char,
    durability_len: usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `durability` points to its length.
        let name = unsafe { str_arg("durability", durability, durability_len) }?;
        let durability: rp_core::Durability = name.parse()?;
        with_engine(engine, |e| Ok(e.set_durability(durability)?))
    })
}

/// Writes the engine's durability, `"immediate"` or `"eventual"`, to
/// `*out_name` (a string the caller releases with `rp_string_free`).
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_CONFLICT` (from a callback running on
/// this engine), `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_name` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_durability(
    engine: *mut rp_engine,
    out_name: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_name", out_name)?;
        let name = with_engine(engine, |e| Ok(e.options().durability.name()))?;
        let name = owned_string("the durability", name.to_owned())?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(name) };
        Ok(())
    })
}

/// Makes every earlier commit of the engine durable: needed only with the
/// `"eventual"` durability (`rp_engine_set_durability`); freeing the engine
/// does it too.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_STORAGE` when the save cannot be
/// written (the engine keeps the commits and writes them with the next
/// commit, or the next call says they are lost); `RP_RESULT_CONFLICT` when
/// called from a callback running on this engine; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`). Does file I/O (an fsync).
#[unsafe(no_mangle)]
pub extern "C" fn rp_engine_flush(engine: *mut rp_engine) -> rp_result {
    ffi_result(|| with_engine(engine, |e| Ok(e.flush()?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn::tests::{last_error, tavern};

    fn set(engine: *mut rp_engine, name: &[u8]) -> rp_result {
        // SAFETY: the slice is valid for the call.
        unsafe { rp_engine_set_durability(engine, name.as_ptr().cast(), name.len()) }
    }

    fn get(engine: *mut rp_engine) -> String {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: `out` is writable.
        let result = unsafe { rp_engine_durability(engine, &mut out) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        // SAFETY: rp wrote a NUL-terminated string, released below.
        let name = unsafe { std::ffi::CStr::from_ptr(out) }
            .to_str()
            .expect("UTF-8")
            .to_owned();
        // SAFETY: the string rp handed out, released once.
        unsafe { crate::rp_string_free(out) };
        name
    }

    #[test]
    fn durability_is_set_by_name_and_a_bad_name_changes_nothing() {
        let t = tavern();
        assert_eq!(get(t.engine), "immediate");
        assert_eq!(
            set(t.engine, b"eventual"),
            rp_result::Ok,
            "{}",
            last_error()
        );
        assert_eq!(get(t.engine), "eventual");
        assert_eq!(rp_engine_flush(t.engine), rp_result::Ok);
        assert_eq!(set(t.engine, b"sometimes"), rp_result::Invalid);
        assert!(last_error().contains("durability"), "{}", last_error());
        assert_eq!(get(t.engine), "eventual", "a refused name changes nothing");
        assert_eq!(set(t.engine, b"\xff"), rp_result::InvalidUtf8);
        // SAFETY: a NULL name is refused, never read.
        let null = unsafe { rp_engine_set_durability(t.engine, std::ptr::null(), 3) };
        assert_eq!(null, rp_result::NullArgument);
        assert_eq!(set(t.engine, b"immediate"), rp_result::Ok);
        assert_eq!(get(t.engine), "immediate");
        // SAFETY: a NULL out-parameter is refused, never written.
        let result = unsafe { rp_engine_durability(t.engine, std::ptr::null_mut()) };
        assert_eq!(result, rp_result::NullArgument);
        assert_eq!(
            rp_engine_flush(std::ptr::null_mut()),
            rp_result::NullArgument
        );
    }
}
