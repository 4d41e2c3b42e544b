//! `rp_condition`: one condition of the fact language outside any sheet
//! (rp-core's `facts::Condition`).

use std::ffi::c_char;

use rp_core::facts::{Condition, ContextData, RegexCache};

use crate::arg::{out_arg, str_arg};
use crate::error::{ffi_result, rp_result};
use crate::handle::{Handles, Publish};
use crate::string::owned_string;
use crate::turn::to_json;

/// A compiled condition: the expression of a `$if` line, without `$if` and
/// without `: action` (`time.is_night && random() < 0.3`), compiled once and
/// tested as often as needed, for conditions of the host's own (a door that
/// opens at night, a quest step that waits for a word).
///
/// Create one with `rp_condition_compile`; release it with
/// `rp_condition_free`. Compiled on its own, a condition's `self` has no keys
/// and `has_fact` finds nothing.
///
/// Thread: any, like `rp_engine`.
#[allow(non_camel_case_types)]
pub struct rp_condition {
    _opaque: [u8; 0],
}

impl Publish for Condition {}

/// Every live condition.
fn conditions() -> &'static Handles<Condition> {
    static CONDITIONS: Handles<Condition> = Handles::new();
    &CONDITIONS
}

/// Compiles `source` (`source_len` bytes of UTF-8, borrowed for the call)
/// and writes the new condition to `*out_condition`.
///
/// A condition that does not compile (bad syntax, anything outside the
/// language, a regex the engine cannot run exactly like JavaScript) returns
/// `RP_RESULT_FACT_SYNTAX`; `rp_last_error()` gives the line and column (in
/// characters) and what is wrong.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8` or `RP_RESULT_FACT_SYNTAX`.
///
/// Thread: any.
///
/// # Safety
///
/// `source` points to `source_len` readable bytes; `out_condition` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_condition_compile(
    source: *const c_char,
    source_len: usize,
    out_condition: *mut *mut rp_condition,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `source` points to `source_len` bytes.
        let source = unsafe { str_arg("source", source, source_len) }?;
        let out = out_arg("out_condition", out_condition)?;
        let condition = Condition::compile(source, &mut RegexCache::default())
            .map_err(|e| e.to_error(source, "condition"))?;
        let handle = std::ptr::without_provenance_mut(conditions().insert(condition));
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// Releases a condition. `condition` may be `NULL`, which does nothing. A
/// handle freed already (or not from rp) is refused with
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any. A call on the same condition still running on another
/// thread finishes first: this call waits for it.
///
/// # Safety
///
/// None beyond the signature: any `condition` value is answered safely.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_condition_free(condition: *mut rp_condition) -> rp_result {
    ffi_result(|| {
        // A condition's calls take no other lock: waiting is always safe.
        drop(conditions().remove("condition", condition.addr(), true)?);
        Ok(())
    })
}

/// Tests `condition` against a context: writes to `*out_holds` whether it
/// holds (JavaScript's truthiness of its value).
///
/// `context_json` (`context_len` bytes of UTF-8) is a JSON object with any
/// of these fields (the variables of the fact language; see
/// `docs/facts.md`), unknown fields refused:
///
/// ```text
/// {"name": "Aria", "content": "Hello, Aria", "author": "Wren",
///  "mentioned": true, "response_ms": 60000, "retry_ms": 0,
///  "unread_count": 1, "interaction_type": null,
///  "present": ["Aria", "Wren"], "hour": 21}
/// ```
///
/// `response_ms` absent or `null` means never; `hour` defaults to 12.
/// `random()` and `roll()` draw from the generator of `seed`, from its start,
/// so the same seed gives the same answer.
///
/// A runtime type error (reading a property of `undefined`, say) makes the
/// condition false, as on a sheet line; it is not a failure of the call.
/// When `out_trace_json` is not `NULL`, the call writes there (a string the
/// caller releases with `rp_string_free`) what happened:
///
/// ```text
/// {"holds": false, "trace": [{"kind": "random", "value": 0.42},
///   {"kind": "error", "message": "cannot read `length` of undefined"}]}
/// ```
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE` or
/// `RP_RESULT_INVALID` (the context is not such a JSON object).
///
/// Thread: any.
///
/// # Safety
///
/// `context_json` points to `context_len` readable bytes; `out_holds` is
/// writable; `out_trace_json` is `NULL` or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_condition_test(
    condition: *const rp_condition,
    context_json: *const c_char,
    context_len: usize,
    seed: u64,
    out_holds: *mut bool,
    out_trace_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `context_json` points to `context_len` bytes.
        let context = unsafe { str_arg("context_json", context_json, context_len) }?;
        let out = out_arg("out_holds", out_holds)?;
        let context = ContextData::from_json(context)?;
        let tested = conditions().with("condition", condition.addr(), |c| {
            Ok(c.test_seeded(&context, seed))
        })?;
        if !out_trace_json.is_null() {
            let json = owned_string("the trace JSON", to_json(&tested))?;
            // SAFETY: the caller made the non-NULL `out_trace_json` writable.
            unsafe { out_trace_json.write(json) };
        }
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(tested.holds) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_says_what_was_drawn_and_what_failed() {
        let c = Condition::compile(
            "random() < 2 && interaction_type.length > 0",
            &mut RegexCache::default(),
        )
        .expect("compiles");
        let tested = c.test_seeded(&ContextData::default(), 7);
        assert!(!tested.holds);
        let v: serde_json::Value = serde_json::from_str(&to_json(&tested)).expect("JSON");
        assert_eq!(v["holds"], false);
        assert_eq!(v["trace"][0]["kind"], "random");
        assert_eq!(v["trace"][1]["kind"], "error");
    }
}
