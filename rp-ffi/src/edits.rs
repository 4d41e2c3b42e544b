//! The player's hand on the story from C (docs/edits.md): past lines edited and deleted with the
//! rest of the story kept (with a preview of what an edit does), and swipes. What an edit does,
//! what its options mean and what their JSON is are rp-core's (`rp_core::edit`); these calls
//! convert arguments and answers.

use std::ffi::{c_char, c_void};

use rp_core::UtteranceId;
use rp_core::edit::EditOptions;
use rp_core::turn::{GenerateResult, NoSink};

use crate::arg::{out_arg, str_arg};
use crate::engine::{CallingOut, rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::run_turn::{CallbackGenerator, rp_generate_fn};
use crate::scene::read_json;
use crate::turn::{from_json, options_arg, outcome_json, to_json};

/// The edit options in `json` (`len` bytes), or the defaults for `NULL` with 0.
///
/// # Safety
///
/// `json` is `NULL` with `len` 0, or points to `len` readable bytes.
unsafe fn edit_options_arg(json: *const c_char, len: usize) -> Result<EditOptions, Error> {
    if json.is_null() && len == 0 {
        return Ok(EditOptions::default());
    }
    // SAFETY: the caller guarantees `json` points to `len` bytes.
    let json = unsafe { str_arg("options_json", json, len) }?;
    Ok(EditOptions::from_json(json)?)
}

/// Writes what editing line `line_id` to `text` (`text_len` bytes of UTF-8; `NULL` with 0:
/// deleting it) with `options_json` would do to `*out_json` (a string the caller releases with
/// `rp_string_free`), changing nothing (docs/edits.md, "The preview"):
///
/// ```text
/// {"line": 12, "base": 11, "kept": 40,
///  "edited": [{"seq": 12, "kind": "user_turn", "why": "the line, edited"}, ...],
///  "dropped": [{"seq": 19, "kind": "generated", "why": "the state update of ..."}],
///  "invalid": [{"seq": 41, "kind": "memories_summarized", "why": "..."}],
///  "regenerate": null}
/// ```
///
/// `options_json` (`options_len` bytes, or `NULL` with 0 for the defaults):
/// `{"with_replies": false, "on_invalid": "cancel"}` (`"cancel"`, `"drop"` or
/// `"regenerate"`), every field optional, unknown fields refused.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no such line on the current branch);
/// `RP_RESULT_INVALID` (an empty or too long text, bad options), `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a
/// callback running on this engine), `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `text` and `options_json` are `NULL` with length 0 or point to that many readable bytes;
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_preview_edit(
    engine: *mut rp_engine,
    line_id: u64,
    text: *const c_char,
    text_len: usize,
    options_json: *const c_char,
    options_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let text = if text.is_null() && text_len == 0 {
            None
        } else {
            // SAFETY: the caller guarantees `text` points to `text_len` bytes.
            Some(unsafe { str_arg("text", text, text_len) }?)
        };
        // SAFETY: as the caller guarantees for `options_json`.
        let options = unsafe { edit_options_arg(options_json, options_len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edit preview", |e| {
                Ok(to_json(&e.preview_edit(
                    UtteranceId(line_id),
                    text,
                    &options,
                )?))
            })
        }
    })
}

/// Edits line `line_id` (the player's or a character's) to `text` (`text_len` bytes of UTF-8),
/// keeping the rest of the story (docs/edits.md): the branch is rewound to before the line, its
/// old history kept as a branch, and the events after the line carried over in one commit.
/// Writes the outcome to `*out_json` (release with `rp_string_free`):
///
/// ```text
/// {"old_branch": "main~2", "head": 57, "preview": {...},
///  "regenerate": null}   // with "on_invalid": "regenerate", the input of the turn to run again
/// ```
///
/// Options as for `rp_engine_preview_edit`. With `"on_invalid": "cancel"` (the default), an edit
/// that would leave later events that no longer apply is refused with `RP_RESULT_CONFLICT`
/// (the message names them) and nothing changes.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND`, `RP_RESULT_INVALID`, `RP_RESULT_CONFLICT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `text` points to `text_len` readable bytes; `options_json` is `NULL` with 0 or points to
/// `options_len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_edit_line(
    engine: *mut rp_engine,
    line_id: u64,
    text: *const c_char,
    text_len: usize,
    options_json: *const c_char,
    options_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        // SAFETY: as the caller guarantees for `options_json`.
        let options = unsafe { edit_options_arg(options_json, options_len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edit outcome", |e| {
                Ok(to_json(&e.edit_line(
                    UtteranceId(line_id),
                    text,
                    &options,
                )?))
            })
        }
    })
}

/// Deletes line `line_id`, keeping the rest of the story: as `rp_engine_edit_line` (options,
/// outcome, result codes). Its memories and the record of its generation go with it; with
/// `"with_replies": true`, the later lines of its turn too.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` with 0 or points to `options_len` readable bytes; `out_json` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_delete_line(
    engine: *mut rp_engine,
    line_id: u64,
    options_json: *const c_char,
    options_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: as the caller guarantees for `options_json`.
        let options = unsafe { edit_options_arg(options_json, options_len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the edit outcome", |e| {
                Ok(to_json(&e.delete_line(UtteranceId(line_id), &options)?))
            })
        }
    })
}

/// Writes the request that asks for the last reply of the latest turn again (a swipe;
/// docs/edits.md, "Swipes") to `*out_json` (release with `rp_string_free`):
/// `{"line": 42, "request": {...}}`, the request as `rp_turn_step` gives one (the prompt the
/// reply was given, built again from the world as it was). `line_id` 0 names the last reply;
/// another id must be it. `options_json`: turn options as for `rp_turn_begin` (`NULL` with 0:
/// the defaults; their sampling is used). Give the model's answer to
/// `rp_engine_add_alternative`. Changes nothing.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_CONFLICT` (the last line is the player's, or `line_id`
/// is not the last reply), `RP_RESULT_NOT_FOUND` (no line), `RP_RESULT_INVALID` (bad options),
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` with 0 or points to `options_len` readable bytes; `out_json` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_swipe_request(
    engine: *mut rp_engine,
    line_id: u64,
    options_json: *const c_char,
    options_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: as the caller guarantees for `options_json`.
        let options = unsafe { options_arg(options_json, options_len) }?;
        let line = (line_id != 0).then_some(UtteranceId(line_id));
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the swipe request", |e| {
                Ok(to_json(&e.swipe_request(line, &options)?))
            })
        }
    })
}

/// Records the model's answer `result_json` (`result_len` bytes: a generation result as
/// `rp_turn_provide` takes one, `{"text": "...", "model": "..."}`) as another alternative of
/// line `line_id` (the last reply); the line stays as it is. Writes the new alternative's index
/// to `*out_index` (the line itself is 0 until another is chosen).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` (bad JSON, an empty answer, 64 alternatives
/// already), `RP_RESULT_CONFLICT` (`line_id` is not the last reply), `RP_RESULT_NOT_FOUND`,
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_STORAGE`. On failure nothing changes.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `result_json` points to `result_len` readable bytes; `out_index` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_add_alternative(
    engine: *mut rp_engine,
    line_id: u64,
    result_json: *const c_char,
    result_len: usize,
    out_index: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `result_json` points to `result_len` bytes.
        let json = unsafe { str_arg("result_json", result_json, result_len) }?;
        let out = out_arg("out_index", out_index)?;
        let result: GenerateResult = from_json("generation result", json)?;
        let index = with_engine(engine, |e| {
            Ok(e.add_alternative(UtteranceId(line_id), &result)?)
        })?;
        // SAFETY: the caller made the non-NULL `out_index` writable.
        unsafe { out.write(index as u64) };
        Ok(())
    })
}

/// Writes the alternatives of line `line_id` to `*out_json` (release with `rp_string_free`):
/// `{"texts": ["...", "..."], "chosen": 1}`, or `null` for a line that has only itself.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT`. Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_alternatives(
    engine: *const rp_engine,
    line_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the alternatives", |e| {
                Ok(to_json(&e.world().alternatives(UtteranceId(line_id)).map(
                    |(texts, chosen)| serde_json::json!({"texts": texts, "chosen": chosen}),
                )))
            })
        }
    })
}

/// Makes alternative `n` of line `line_id` (the last reply) the line (docs/edits.md, "Swipes"):
/// the line and its memories take its text, every alternative is kept, and the state-update
/// pass of its turn is asked of `generate` again on the line that stands (when the turn had one
/// and `options_json` enables it). Writes the outcome of that pass as a turn's outcome JSON to
/// `*out_outcome_json` (release with `rp_string_free`).
///
/// `generate` and `user_data`: as for `rp_engine_run_turn` (no tokens are streamed; host
/// actions the pass reports are refused).
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no alternative `n`), `RP_RESULT_CONFLICT`
/// (`line_id` is not the last reply), `RP_RESULT_GENERATION` (the callback failed: the choice
/// stands, its pass is not recorded), `RP_RESULT_INVALID`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`); `generate` runs on the calling thread.
///
/// # Safety
///
/// `options_json` is `NULL` with 0 or points to `options_len` readable bytes; `generate`
/// follows its type's documentation; `out_outcome_json` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rp_engine_choose(
    engine: *mut rp_engine,
    line_id: u64,
    n: u64,
    options_json: *const c_char,
    options_len: usize,
    generate: rp_generate_fn,
    user_data: *mut c_void,
    out_outcome_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: as the caller guarantees for `options_json`.
        let options = unsafe { options_arg(options_json, options_len) }?;
        let generate =
            generate.ok_or_else(|| Error::new(rp_result::NullArgument, "`generate` is NULL"))?;
        let out = out_arg("out_outcome_json", out_outcome_json)?;
        let generator = CallbackGenerator::generate_only(generate, user_data);
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let outcome = with_engine(engine, |e| {
            let _calling_out = CallingOut::new(engine);
            Ok(e.choose_blocking(UtteranceId(line_id), n, options, &generator, &mut NoSink)?)
        })?;
        // SAFETY: the caller made the non-NULL `out_outcome_json` writable.
        unsafe { out.write(outcome_json(outcome)) };
        Ok(())
    })
}
