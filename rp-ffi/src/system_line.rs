//! System lines from C (rp-core's `Engine::inject_system_line` and
//! `World::system_lines`): the host puts a `[SYSTEM: …]` line in the next
//! prompts of some characters, which carry it until a turn has shown it to
//! a responder.

use std::ffi::c_char;

use rp_core::EntityId;

use crate::arg::{out_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::string::owned_string;
use crate::turn::to_json;

/// Reads the audience of a system line: `NULL` with length 0 means every
/// character; otherwise a JSON array of entity ids.
///
/// # Safety
///
/// `json` is `NULL` or points to `len` readable bytes.
unsafe fn audience_arg(json: *const c_char, len: usize) -> Result<Option<Vec<EntityId>>, Error> {
    if json.is_null() && len == 0 {
        return Ok(None);
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("audience_json", json, len) }?;
    let ids: Vec<u64> = serde_json::from_str(json).map_err(|error| {
        Error::from(rp_core::Error::Invalid {
            what: "audience JSON (an array of entity ids)",
            reason: error.to_string(),
        })
    })?;
    Ok(Some(ids.into_iter().map(EntityId).collect()))
}

/// Injects a system line: the next prompts of the characters of the
/// audience carry `[SYSTEM: text]` after their newest line of dialogue,
/// never trimmed for the token budget, until a turn has shown it to one of
/// them as a responder (then the turn records it as shown and it is gone).
/// Recorded as one event, so the head moves forward and a replay reproduces
/// it. On success writes the line's id to `*out_line_id`.
///
/// - `text`, `text_len`: what the line says (UTF-8, borrowed for the call);
///   surrounding whitespace is dropped. It may not be empty, nor longer
///   than 64 KiB.
/// - `audience_json`, `audience_json_len`: whose prompts carry it, as a JSON
///   array of entity ids (UTF-8, borrowed for the call), such as `[3, 5]`;
///   `NULL` with length 0: every character's.
///
/// `rp_engine_system_lines` lists the lines not shown yet;
/// `rp_engine_inspect_prompt` shows where a prompt carries one (a piece of
/// section `"dialogue"` whose `"why"` says it is a system line).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for an empty or too long
/// text, or an audience that is not a JSON array of ids (`rp_last_error()`
/// says where); `RP_RESULT_NOT_FOUND` for an audience entity that does not
/// exist; `RP_RESULT_NULL_ARGUMENT` (`text` or `out_line_id` is `NULL`, or
/// `audience_json` is `NULL` with a length), `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback
/// of a turn on this engine), `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `text` points to `text_len` readable bytes; `audience_json` is `NULL`
/// (with `audience_json_len` 0) or points to `audience_json_len` readable
/// bytes; `out_line_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_inject_system_line(
    engine: *mut rp_engine,
    text: *const c_char,
    text_len: usize,
    audience_json: *const c_char,
    audience_json_len: usize,
    out_line_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        // SAFETY: the caller guarantees `audience_json` is NULL or points to
        // `audience_json_len` bytes.
        let audience = unsafe { audience_arg(audience_json, audience_json_len) }?;
        let out = out_arg("out_line_id", out_line_id)?;
        let id = with_engine(engine, |engine| {
            Ok(engine.inject_system_line(text, audience)?)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// The system lines no turn has shown yet, oldest first, as a JSON array
/// written to `*out_json` (a string the caller releases with
/// `rp_string_free`):
///
/// ```text
/// [{"id": 41,                     // from rp_engine_inject_system_line
///   "text": "The cellar door slams shut.",
///   "audience": [3],              // entity ids; null: every character
///   "at": 60000}]                 // the world's clock when injected, ms
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
pub unsafe extern "C" fn rp_engine_system_lines(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_json", out_json)?;
        let json = with_engine(engine, |engine| {
            Ok(to_json(&engine.world().system_lines().collect::<Vec<_>>()))
        })?;
        let json = owned_string("the system lines JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ptr;

    use serde_json::Value;

    use super::*;
    use crate::turn::rp_engine_inspect_prompt;
    use crate::turn::tests::{
        Tavern, begin, finish, free, head, last_error, provide, say, step, take_json, tavern,
    };

    const SLAM: &str = "The cellar door slams shut. React to it.";

    fn inject(t: &Tavern, text: &str, audience: Option<&str>) -> Result<u64, rp_result> {
        let mut id = u64::MAX;
        let (audience, audience_len) = audience.map_or((ptr::null(), 0), |a| (a.as_ptr(), a.len()));
        // SAFETY: valid strings and out-parameters.
        match unsafe {
            rp_engine_inject_system_line(
                t.engine,
                text.as_ptr().cast(),
                text.len(),
                audience.cast(),
                audience_len,
                &mut id,
            )
        } {
            rp_result::Ok => Ok(id),
            code => {
                assert_eq!(id, u64::MAX, "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    fn pending(t: &Tavern) -> Value {
        let mut json = ptr::null_mut();
        // SAFETY: valid out-parameter.
        let result = unsafe { rp_engine_system_lines(t.engine, &mut json) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        take_json(json)
    }

    /// The system message of `speaker`'s prompt.
    fn prompt_of(t: &Tavern, speaker: u64) -> String {
        let mut json = ptr::null_mut();
        // SAFETY: valid out-parameter; NULL with length 0 for the optional
        // strings.
        let result = unsafe {
            rp_engine_inspect_prompt(
                t.engine,
                speaker,
                ptr::null(),
                0,
                0,
                ptr::null(),
                0,
                &mut json,
            )
        };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        take_json(json)["messages"][0]["content"]
            .as_str()
            .expect("a text")
            .to_owned()
    }

    #[test]
    fn an_injected_line_reaches_its_audience_until_a_turn_shows_it() {
        let t = tavern();
        assert_eq!(pending(&t), serde_json::json!([]));
        let before = head(t.engine);
        let id = inject(&t, SLAM, Some(&format!("[{}]", t.tobias))).expect("injects");
        assert_eq!(head(t.engine), before + 1, "one event");
        assert_eq!(
            pending(&t),
            serde_json::json!([{"id": id, "text": SLAM, "audience": [t.tobias], "at": 0}])
        );
        assert!(prompt_of(&t, t.tobias).contains(&format!("[SYSTEM: {SLAM}]")));
        assert!(!prompt_of(&t, t.mira).contains("[SYSTEM:"));

        let turn = begin(&t, &say(&t, "Tobias, what was that?", 60_000), None).expect("begins");
        let request = step(t.engine, turn).expect("a step");
        assert_eq!(request["purpose"]["speaker"], t.tobias);
        assert!(request.to_string().contains("[SYSTEM: The cellar door"));
        assert_eq!(
            provide(t.engine, turn, r#"{"text": "The wind."}"#),
            rp_result::Ok
        );
        finish(t.engine, turn).expect("finishes");
        assert_eq!(free(turn), rp_result::Ok);
        assert_eq!(pending(&t), serde_json::json!([]), "shown, then gone");
        assert!(!prompt_of(&t, t.tobias).contains("[SYSTEM:"));

        // Without an audience, every character's prompt carries it.
        inject(&t, "  Thunder.  ", None).expect("injects");
        assert_eq!(pending(&t)[0]["text"], "Thunder.");
        assert_eq!(pending(&t)[0]["audience"], Value::Null);
        assert!(prompt_of(&t, t.mira).contains("[SYSTEM: Thunder.]"));
        assert!(prompt_of(&t, t.tobias).contains("[SYSTEM: Thunder.]"));
    }

    #[test]
    fn bad_input_is_refused_and_changes_nothing() {
        let t = tavern();
        let before = head(t.engine);
        assert_eq!(inject(&t, " \n ", None), Err(rp_result::Invalid));
        assert!(last_error().contains("empty"), "{}", last_error());
        assert_eq!(inject(&t, SLAM, Some("[3")), Err(rp_result::Invalid));
        assert!(
            last_error().starts_with("invalid audience JSON"),
            "{}",
            last_error()
        );
        assert_eq!(
            inject(&t, SLAM, Some(r#"["mira"]"#)),
            Err(rp_result::Invalid)
        );
        assert_eq!(inject(&t, SLAM, Some("null")), Err(rp_result::Invalid));
        assert_eq!(
            inject(&t, SLAM, Some(&format!("[{}, 999999]", t.mira))),
            Err(rp_result::NotFound)
        );
        assert!(last_error().contains("999999"), "{}", last_error());
        assert_eq!(
            inject(&t, &"a".repeat(64 * 1024 + 1), None),
            Err(rp_result::Invalid)
        );
        let bad_utf8 = b"\xff";
        let mut id = 0;
        // SAFETY: NULL and invalid arguments are answered safely.
        unsafe {
            assert_eq!(
                rp_engine_inject_system_line(
                    t.engine,
                    bad_utf8.as_ptr().cast(),
                    1,
                    ptr::null(),
                    0,
                    &mut id
                ),
                rp_result::InvalidUtf8
            );
            assert_eq!(
                rp_engine_inject_system_line(t.engine, ptr::null(), 0, ptr::null(), 0, &mut id),
                rp_result::NullArgument
            );
            assert_eq!(last_error(), "`text` is NULL");
            assert_eq!(
                rp_engine_inject_system_line(t.engine, c"x".as_ptr(), 1, ptr::null(), 2, &mut id),
                rp_result::NullArgument
            );
            assert_eq!(last_error(), "`audience_json` is NULL");
            assert_eq!(
                rp_engine_inject_system_line(
                    t.engine,
                    c"x".as_ptr(),
                    1,
                    ptr::null(),
                    0,
                    ptr::null_mut()
                ),
                rp_result::NullArgument
            );
            assert_eq!(last_error(), "`out_line_id` is NULL");
            assert_eq!(
                rp_engine_inject_system_line(
                    ptr::null_mut(),
                    c"x".as_ptr(),
                    1,
                    ptr::null(),
                    0,
                    &mut id
                ),
                rp_result::NullArgument
            );
            assert_eq!(
                rp_engine_system_lines(t.engine, ptr::null_mut()),
                rp_result::NullArgument
            );
        }
        assert_eq!(head(t.engine), before, "nothing was recorded");
        assert_eq!(pending(&t), serde_json::json!([]));
    }
}
