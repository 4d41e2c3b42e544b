//! What lorebooks and cards put in a character's prompt, read from C (docs/cards.md): its
//! lorebook timers, and a card's macros expanded as its prompt expands them. The rules are
//! rp-core's (`Engine::lore_timers`, `Engine::expand_macros`); these calls convert answers.

use std::ffi::c_char;

use rp_core::EntityId;

use crate::arg::str_arg;
use crate::engine::rp_engine;
use crate::error::{ffi_result, rp_result};
use crate::scene::read_json;
use crate::turn::to_json;

/// Writes the sticky and cooldown effects entity `entity_id`'s lorebook entries hold
/// (docs/cards.md, "Timed effects") as a JSON array to `*out_json` (a string the caller releases
/// with `rp_string_free`), counted in the messages the character heard:
///
/// ```text
/// [{"book": 7, "entry": 0, "kind": "sticky", "start": 3, "end": 7, "protected": false}]
/// ```
///
/// `entry` is the entry's index in its book; the effect holds from `start` messages to `end`
/// (exclusive). Turns record them; `[]` when none holds.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no such entity), `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a callback running on this
/// engine). Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_lore_timers(
    engine: *const rp_engine,
    entity_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the lorebook timers", |e| {
                Ok(to_json(&e.lore_timers(EntityId(entity_id))?))
            })
        }
    })
}

/// Writes `text` (`text_len` bytes of UTF-8: a card's greeting, say) with the card macros
/// expanded as the prompt of `speaker_id` expands them now (docs/cards.md, "Macros") to
/// `*out_text` (a string the caller releases with `rp_string_free`): `{{char}}` and `<BOT>` are
/// the speaker's name, `{{user}}` and `<USER>` the name of `user_id`; `{{random:…}}`,
/// `{{pick:…}}` and `{{roll:…}}` draw from the world's generator at its position (the same
/// world, the same text); `{{// …}}` is removed.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no such speaker or user),
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT`. Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `text` points to `text_len` readable bytes; `out_text` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_expand_macros(
    engine: *const rp_engine,
    text: *const c_char,
    text_len: usize,
    speaker_id: u64,
    user_id: u64,
    out_text: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `text` points to `text_len` bytes.
        let text = unsafe { str_arg("text", text, text_len) }?;
        // SAFETY: the caller made `out_text` writable.
        unsafe {
            read_json(engine, out_text, "the expanded text", |e| {
                Ok(e.expand_macros(text, EntityId(speaker_id), EntityId(user_id))?)
            })
        }
    })
}
