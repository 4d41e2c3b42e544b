//! Scenes from C (docs/architecture.md): opening one (rp-core's
//! `Engine::open_scene`), reading them (`World::scenes`, `World::scene`,
//! `World::current_scene`, `World::scene_of`) and asking which are due to
//! close (`Engine::due_scenes`). Closing a scene is a job: see
//! [`crate::job`].
//!
//! A scene is a stretch of story in one container, the compression
//! boundary of the dialogue: turns open one in the speaker's container when
//! it has none, every line said joins it, and closing it leaves each
//! witness a summary of its own.

use std::ffi::c_char;

use rp_core::scene::CloseReason;
use rp_core::{ContainerId, EntityId, SceneId};
use serde::Serialize;

use crate::arg::out_arg;
use crate::engine::{rp_engine, with_engine};
use crate::error::{Error, ffi_result, rp_result};
use crate::job::scene_options_arg;
use crate::turn::to_json;
use crate::world::write_json;

/// Runs `read` on the engine and writes the JSON it makes to `out_json`.
///
/// # Safety
///
/// `out_json` is NULL or writable.
pub(crate) unsafe fn read_json(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
    what: &str,
    read: impl FnOnce(&mut rp_core::Engine) -> Result<String, Error>,
) -> Result<(), Error> {
    let out = out_arg("out_json", out_json)?;
    let json = with_engine(engine, read)?;
    // SAFETY: the caller made the non-NULL `out_json` writable.
    unsafe { write_json(out, what, json) }
}

fn not_found(what: &'static str, id: impl std::fmt::Display) -> Error {
    Error::from(rp_core::Error::NotFound {
        what,
        id: id.to_string(),
    })
}

/// Opens a scene in container `container_id` at `now` (host clock, ms; the
/// world's clock advances to it) and writes its id to `*out_scene_id`. Its
/// first witnesses are the entities in the container. Turns open scenes by
/// themselves (see `"scenes"` in the options of `rp_turn_begin`); call this
/// to start one before anyone speaks.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// container; `RP_RESULT_CONFLICT` when the container has an open scene
/// already (close it first: `rp_engine_begin_close_current_scene`), or when
/// called from a callback running on this engine; `RP_RESULT_INVALID` when
/// `now` is before the world's clock; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_STORAGE`. On failure the world is
/// unchanged.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_scene_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_open_scene(
    engine: *mut rp_engine,
    container_id: u64,
    now: i64,
    out_scene_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_scene_id", out_scene_id)?;
        let id = with_engine(
            engine,
            |e| Ok(e.open_scene(ContainerId(container_id), now)?),
        )?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// Every scene, open and closed, in id order, as a JSON array of the
/// objects `rp_engine_scene` describes, written to `*out_json` (a string
/// the caller releases with `rp_string_free`). The open ones have
/// `"closed": null`. Changes nothing.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE` or `RP_RESULT_CONFLICT` (called from a
/// callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_scenes(
    engine: *const rp_engine,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the scenes JSON", |e| {
                Ok(to_json(&e.world().scenes().collect::<Vec<_>>()))
            })
        }
    })
}

/// The scene `scene_id` as JSON, written to `*out_json` (a string the
/// caller releases with `rp_string_free`). Changes nothing.
///
/// ```text
/// {"id": 9,
///  "container": 2,          // where it happens
///  "opened": 60000,         // host clock, ms
///  "closed": null,          // when it closed, or null while open
///  "witnesses": [1, 3],     // who was there: those present when it
///                           // opened and everyone who heard a line of it
///  "lines": 4,              // lines said in it
///  "last_line": 65000}      // when its newest line was said, or null
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// scene; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_scene(
    engine: *const rp_engine,
    scene_id: u64,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the scene JSON", |e| {
                let scene = e
                    .world()
                    .scene(SceneId(scene_id))
                    .ok_or_else(|| not_found("scene", SceneId(scene_id)))?;
                Ok(to_json(scene))
            })
        }
    })
}

/// The id of the current scene of a place, written to `*out_scene_id`: the
/// newest open scene of container `container_id`, or, with `entity_id`
/// other than 0, of the container that entity is in (`container_id` is then
/// ignored; pass 0). A line said there now joins that scene.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_NOT_FOUND` when there is no such
/// container or entity, the entity is nowhere, or the place has no open
/// scene; `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_scene_id` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_current_scene(
    engine: *const rp_engine,
    container_id: u64,
    entity_id: u64,
    out_scene_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_scene_id", out_scene_id)?;
        let id = with_engine(engine, |e| {
            let world = e.world();
            let scene = if entity_id != 0 {
                let entity = EntityId(entity_id);
                if world.entity(entity).is_none() {
                    return Err(not_found("entity", entity));
                }
                world
                    .scene_of(entity)
                    .ok_or_else(|| not_found("open scene of the place of", entity))?
            } else {
                let container = ContainerId(container_id);
                if world.container(container).is_none() {
                    return Err(not_found("container", container));
                }
                world
                    .current_scene(container)
                    .ok_or_else(|| not_found("open scene", container))?
            };
            Ok(scene.id)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id.0) };
        Ok(())
    })
}

/// A scene due to close, as `rp_engine_due_scenes` writes it.
#[derive(Serialize)]
struct DueScene {
    scene: SceneId,
    #[serde(flatten)]
    reason: CloseReason,
}

/// The open scenes due to close at `now` (host clock, ms) under the scene
/// options, oldest first, with why, as JSON written to `*out_json` (a
/// string the caller releases with `rp_string_free`). Changes nothing:
/// close them with `rp_engine_begin_scene_close`. (Turns close the due
/// scenes of the speaker's container and of those who hear the input by
/// themselves.)
///
/// `options_json`, `options_json_len`: as for `rp_engine_begin_scene_close`
/// (`NULL` with length 0 for the defaults); `"max_gap_ms"` and
/// `"close_on_departure"` decide.
///
/// ```text
/// [{"scene": 9, "reason": "superseded", "by": 12},  // a newer scene
///                                   // opened in its container
///  {"scene": 10, "reason": "departure", "entity": 3},  // a witness left
///                                   // its container
///  {"scene": 11, "reason": "gap", "since": 60000}]  // its newest line (or
///                                   // opening) is max_gap_ms old
/// ```
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` for options that do not
/// match or are out of range; `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`,
/// `RP_RESULT_CONFLICT` (called from a callback running on this engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `options_json` is `NULL` (with `options_json_len` 0) or points to
/// `options_json_len` readable bytes; `out_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_due_scenes(
    engine: *const rp_engine,
    now: i64,
    options_json: *const c_char,
    options_json_len: usize,
    out_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `options_json` is NULL or points to
        // `options_json_len` bytes.
        let options = unsafe { scene_options_arg(options_json, options_json_len) }?;
        // SAFETY: the caller made `out_json` writable.
        unsafe {
            read_json(engine, out_json, "the due scenes JSON", |e| {
                let due: Vec<DueScene> = e
                    .due_scenes(now, &options)
                    .into_iter()
                    .map(|(scene, reason)| DueScene { scene, reason })
                    .collect();
                Ok(to_json(&due))
            })
        }
    })
}
