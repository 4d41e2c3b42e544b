//! Character cards from C (docs/cards.md): importing a card (V1, V2 or V3; JSON, PNG or CHARX)
//! as a new entity, exporting any entity as V2 or V3 JSON, a PNG or a CHARX, reading a card's
//! files and setting its image, and adding lorebooks. What a card becomes and
//! how it goes out is rp-core's (`rp_core::cards`); these calls convert bytes and answers.

use std::ffi::c_char;

use rp_core::EntityId;
use rp_core::cards::CardFormat;

use crate::arg::{out_arg, slice_arg, str_arg};
use crate::engine::{rp_engine, with_engine};
use crate::error::{ffi_result, rp_result};
use crate::panic::ffi_guard;
use crate::scene::read_json;
use crate::turn::to_json;

/// Imports the character card in `bytes` (`len` bytes, borrowed for the call: a card's JSON,
/// a PNG with a `ccv3` or `chara` text chunk (`ccv3` is preferred), or a CHARX zip) at `now` (host clock,
/// ms; the world's clock advances to it) as a new entity of the engine's, its facts made from
/// the card's prose, the card kept for export. Writes to `*out_json` (a string the caller
/// releases with `rp_string_free`):
///
/// ```text
/// {"entity": 12, "name": "Aria Vell",
///  "greetings": {"first": "*tunes her lute* Evening.",   // first_mes
///                "alternate": ["..."],                   // alternate_greetings
///                "group_only": []},                      // group_only_greetings
///  "lorebook": 13}        // its character_book as a lorebook (its id), or null
/// ```
///
/// The entity is not placed anywhere (move it with `rp_engine_set_activity`). The card's files
/// are kept with it (a CHARX's other files, a PNG's image: `rp_engine_card_assets`); a CHARX
/// file past its bounds (16 MiB, 64 MiB in all, 200:1, 10,000 files, a climbing path) is
/// `RP_RESULT_INVALID`, naming the file.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when the bytes hold no card (a PNG with a
/// broken chunk or CRC, no card chunk, bad base64, JSON that is not a card), a text too long
/// for a fact (64 KiB a line), or a `now` before the world's clock; `RP_RESULT_CONFLICT` when
/// an entity has the card's name already (or called from a callback running on this engine);
/// `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the
/// world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `bytes` points to `len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_import_card(
    engine: *mut rp_engine,
    bytes: *const u8,
    len: usize,
    now: i64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `bytes` points to `len` bytes.
        let bytes = unsafe { slice_arg("bytes", bytes, len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the imported card's JSON", |e| {
                Ok(to_json(&e.import_card(bytes, now)?))
            })
        }
    })
}

/// Exports entity `entity_id` as a character card in `format` (`format_len` bytes of UTF-8:
/// `"v2"`, `"v3"`, `"png"` or `"charx"`, or a file name ending in `.json` (V3), `.png` or
/// `.charx`). A card
/// imported comes back as it was given (the same version byte for byte; another version with
/// every field and extension kept); an entity made otherwise goes out as a card of its name
/// and prose facts. A PNG carries the V2 card in a `chara` chunk and the V3 card in a `ccv3`
/// chunk, on the card's image (the host's, `rp_engine_set_card_image`, else the one it came
/// with) or a 1×1 placeholder; a CHARX holds `card.json` and every file of the card
/// (`rp_engine_card_assets`). Writes the bytes to `*out_bytes` and their number to `*out_len`; release them with
/// `rp_bytes_free`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such entity;
/// `RP_RESULT_INVALID` for an unknown format; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT` (called from a
/// callback running on this engine). Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `format` points to `format_len` readable bytes; `out_bytes` and `out_len` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_export_card(
    engine: *const rp_engine,
    entity_id: u64,
    format: *const c_char,
    format_len: usize,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_bytes", out_bytes)?;
        let out_n = out_arg("out_len", out_len)?;
        // SAFETY: the caller guarantees `format` points to `format_len` bytes.
        let format = unsafe { str_arg("format", format, format_len) }?;
        let format = CardFormat::from_name(format)?;
        let bytes = with_engine(engine, |e| Ok(e.export_card(EntityId(entity_id), format)?))?;
        let bytes = bytes.into_boxed_slice();
        let n = bytes.len();
        let pointer = Box::into_raw(bytes).cast::<u8>();
        // SAFETY: non-NULL pointers the caller made writable.
        unsafe {
            out.write(pointer);
            out_n.write(n);
        }
        Ok(())
    })
}

/// Writes the files of entity `entity_id`'s card (docs/cards.md, "Assets") as a JSON array to
/// `*out_json` (a string the caller releases with `rp_string_free`), by path:
///
/// ```text
/// [{"path": "assets/icon/image/main.png", "size": 48213},
///  {"path": "assets/other/audio/hum.ogg", "size": 90112}]
/// ```
///
/// A CHARX's files other than `card.json`, a PNG card's image (its card chunks taken out),
/// the host's image (`rp_engine_set_card_image`); `[]` for an entity without any. Fetch one
/// file's bytes with `rp_engine_card_asset`.
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
pub unsafe extern "C" fn rp_engine_card_assets(
    engine: *const rp_engine,
    entity_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the card's files", |e| {
                let files: Vec<serde_json::Value> = e
                    .card_assets(EntityId(entity_id))?
                    .iter()
                    .map(|a| serde_json::json!({"path": a.path, "size": a.bytes.len()}))
                    .collect();
                Ok(serde_json::Value::Array(files).to_string())
            })
        }
    })
}

/// Writes the bytes of the file at `path` (`path_len` bytes of UTF-8, as
/// `rp_engine_card_assets` lists it) of entity `entity_id`'s card to `*out_bytes` and their
/// number to `*out_len`; release them with `rp_bytes_free`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no such entity, or its card has no file at
/// `path`), `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT`. Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `path` points to `path_len` readable bytes; `out_bytes` and `out_len` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_card_asset(
    engine: *const rp_engine,
    entity_id: u64,
    path: *const c_char,
    path_len: usize,
    out_bytes: *mut *mut u8,
    out_len: *mut usize,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_bytes", out_bytes)?;
        let out_n = out_arg("out_len", out_len)?;
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        let bytes = with_engine(engine, |e| Ok(e.card_asset(EntityId(entity_id), path)?))?;
        // SAFETY: non-NULL pointers the caller made writable.
        unsafe { hand_out_bytes(bytes, out, out_n) };
        Ok(())
    })
}

/// Sets entity `entity_id`'s image to the PNG in `png` (`len` bytes, borrowed for the call) at
/// `now` (host clock, ms; the world's clock advances to it): kept as one of the card's files
/// (its `chara` and `ccv3` chunks taken out), and the image a PNG export
/// (`rp_engine_export_card`) carries the card on. Works for an entity made without a card.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when `png` is not a valid PNG (signature, chunk
/// lengths, CRCs, `IEND`), the card's files would pass their bounds (64 MiB), or `now` is
/// before the world's clock; `RP_RESULT_NOT_FOUND` (no such entity), `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT`, `RP_RESULT_STORAGE`. On failure the world
/// is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `png` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_set_card_image(
    engine: *mut rp_engine,
    entity_id: u64,
    png: *const u8,
    len: usize,
    now: i64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `png` points to `len` bytes.
        let png = unsafe { slice_arg("png", png, len) }?;
        with_engine(engine, |e| {
            Ok(e.set_card_image(EntityId(entity_id), png, now)?)
        })
    })
}

/// Hands `bytes` to the caller through `out` and `out_n` (released with `rp_bytes_free`).
///
/// # Safety
///
/// `out` and `out_n` are writable.
unsafe fn hand_out_bytes(
    bytes: Vec<u8>,
    out: std::ptr::NonNull<*mut u8>,
    out_n: std::ptr::NonNull<usize>,
) {
    let bytes = bytes.into_boxed_slice();
    let n = bytes.len();
    let pointer = Box::into_raw(bytes).cast::<u8>();
    // SAFETY: the caller made both writable.
    unsafe {
        out.write(pointer);
        out_n.write(n);
    }
}

/// Adds the lorebook in `json` (`len` bytes of UTF-8, borrowed for the call: SillyTavern's
/// World Info JSON, a `lorebook_v3`, or a card's `character_book`) at `now` (host clock, ms;
/// the world's clock advances to it): every character's when `owner_id` is 0, else that
/// character's alone. Its entries then come into a character's prompt when what it heard
/// activates them (docs/cards.md, "Lorebooks"). Writes its id to `*out_id`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when it is not a lorebook (not JSON, no
/// `entries`, a field of the wrong type, more than 100,000 entries, a regex key that is not a
/// JavaScript regular expression) or `now` is before the world's clock; `RP_RESULT_NOT_FOUND`
/// when `owner_id` is not an entity; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine), `RP_RESULT_STORAGE`.
/// On failure the world is unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `json` points to `len` readable bytes; `out_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_import_lorebook(
    engine: *mut rp_engine,
    json: *const u8,
    len: usize,
    owner_id: u64,
    now: i64,
    out_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_id", out_id)?;
        // SAFETY: the caller guarantees `json` points to `len` bytes.
        let bytes = unsafe { slice_arg("json", json, len) }?;
        let owner = (owner_id != 0).then_some(EntityId(owner_id));
        let id = with_engine(engine, |e| Ok(e.import_lorebook(bytes, owner, now)?))?;
        // SAFETY: a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// Writes lorebook `id` in `format` (`format_len` bytes of UTF-8: `"lorebook_v3"` or
/// `"world_info"`) to `*out_json` (a string the caller releases with `rp_string_free`). A book
/// comes back as it was given when it came in that format; otherwise every setting is kept, so
/// importing the export gives the same book.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` (no such book), `RP_RESULT_INVALID` (an
/// unknown format), `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_CONFLICT`. Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `format` points to `format_len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_export_lorebook(
    engine: *const rp_engine,
    id: u64,
    format: *const c_char,
    format_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `format` points to `format_len` bytes.
        let format = unsafe { str_arg("format", format, format_len) }?;
        let format = rp_core::cards::LoreFormat::from_name(format)?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the lorebook's JSON", |e| {
                // JSON text, always UTF-8.
                let bytes = e.export_lorebook(id, format)?;
                Ok(String::from_utf8_lossy(&bytes).into_owned())
            })
        }
    })
}

/// Writes every lorebook as a JSON array to `*out_json` (a string the caller releases with
/// `rp_string_free`): `[{"id": 13, "owner": 12, "name": "Aria's songs", "entries": 4}]`
/// (`"owner": null`: every character's).
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT`. Changes nothing.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_lorebooks(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the lorebooks' JSON", |e| {
                Ok(to_json(&e.lorebooks()))
            })
        }
    })
}

/// Releases bytes rp handed out (`rp_engine_export_card`, `rp_engine_card_asset`), with the
/// length it gave.
///
/// `bytes` may be `NULL`, which does nothing. Otherwise it must be bytes rp handed out, not
/// yet released, and `len` the length rp gave with them: anything else is undefined
/// behaviour. Never release them with `free()`.
///
/// Thread: any.
///
/// # Safety
///
/// `bytes` is `NULL` or a pointer rp handed out with `len` bytes, not yet released.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_bytes_free(bytes: *mut u8, len: usize) {
    if bytes.is_null() {
        return;
    }
    ffi_guard(|| {
        // SAFETY: the caller guarantees `bytes` and `len` came from `Box::into_raw` of a boxed
        // slice of `len` bytes, not released before.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(bytes, len)) });
    });
}
