//! Checking a fact sheet before it goes into a world (`rp_sheet_check`).

use std::ffi::c_char;

use crate::arg::{out_arg, str_arg};
use crate::error::{ffi_result, rp_result};
use crate::string::owned_string;

/// The verdict of `rp_sheet_check` on `text`, as JSON.
fn check(text: &str) -> String {
    let verdict = match rp_core::facts::check_sheet(text) {
        Ok(()) => serde_json::json!({ "ok": true }),
        Err(error) => serde_json::json!({
            "ok": false,
            "line": error.line,
            "column": error.column,
            "message": error.message,
        }),
    };
    verdict.to_string()
}

/// Checks a fact sheet (the text of an entity's `facts`, one fact per line)
/// without a world: that every line parses and every `$if` condition
/// compiles.
///
/// `text` is `text_len` bytes of UTF-8 (borrowed for the call). A sheet with
/// an error is not a failure of the call: the call returns `RP_RESULT_OK`
/// and the verdict is in the JSON it writes to `*out_json` (a string the
/// caller releases with `rp_string_free`):
///
/// ```text
/// {"ok": true}
/// {"ok": false, "line": 2, "column": 12, "message": "..."}
/// ```
///
/// `line` and `column` are 1-based and count every line of `text`, blank
/// lines included; `column` counts characters, not bytes. A world refuses
/// the same sheets (with `RP_RESULT_FACT_SYNTAX`) when an entity gets one.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT` or
/// `RP_RESULT_INVALID_UTF8`.
///
/// Thread: any.
///
/// # Safety
///
/// `text` points to `text_len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_sheet_check(
    text: *const c_char,
    text_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        let out = out_arg("out_json", out_json)?;
        let json = owned_string("the verdict JSON", check(text))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_sheet_is_ok() {
        assert_eq!(
            check("A fisherman.\n$if mentioned: $respond\n"),
            r#"{"ok":true}"#
        );
    }

    #[test]
    fn an_error_is_placed_on_the_line_of_the_text() {
        let verdict: serde_json::Value =
            serde_json::from_str(&check("A fisherman.\n\n$if mentioned &&: $respond"))
                .expect("JSON");
        assert_eq!(verdict["ok"], false);
        assert_eq!(verdict["line"], 3);
        assert!(verdict["column"].as_u64().expect("a column") > 1);
        assert!(verdict["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}
