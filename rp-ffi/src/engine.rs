//! `rp_engine`: a world and the save file that keeps its log (rp-core's
//! `Engine`), and response control (`rp_engine_decide`).

use std::cell::{Cell, RefCell};
use std::ffi::c_char;

use rp_core::facts::Decision;
use rp_core::{Engine, EngineOptions, EntityId, Message};

use crate::arg::{out_arg, str_arg};
use crate::error::{Error, ffi_result, rp_result};
use crate::handle::{Handles, Publish};
use crate::string::owned_string;

/// A world and the save that keeps its event log: the handle a program
/// holds while a story runs.
///
/// Create one with `rp_engine_in_memory`, `rp_engine_open` or
/// `rp_engine_create_from_world_file`; release it with `rp_engine_free`.
/// The handle is opaque and is never dereferenced by rp: a handle that was
/// freed already, or that did not come from rp, is refused with
/// `RP_RESULT_INVALID_HANDLE` (no crash).
///
/// Thread: an engine may be used from any thread, and from several at once:
/// calls on one engine run one at a time (each waits for the previous one to
/// finish), calls on different engines run in parallel.
#[allow(non_camel_case_types)]
pub struct rp_engine {
    _opaque: [u8; 0],
}

/// Every live engine.
fn engines() -> &'static Handles<Engine> {
    // Inside a function, so cbindgen neither exports nor warns about it.
    static ENGINES: Handles<Engine> = Handles::new();
    &ENGINES
}

/// The handle of a newly registered engine.
pub(crate) fn new_handle(engine: Engine) -> *mut rp_engine {
    std::ptr::without_provenance_mut(engines().insert(engine))
}

/// Runs `body` on the engine of the handle argument `engine`.
///
/// An engine that this thread is running the host's callbacks for (see
/// [`CallingOut`]) is refused with `RP_RESULT_CONFLICT`: its lock is held
/// further up this thread's stack, so waiting for it would never end.
pub(crate) fn with_engine<R>(
    engine: *const rp_engine,
    body: impl FnOnce(&mut Engine) -> Result<R, Error>,
) -> Result<R, Error> {
    refuse_calling_out(engine)?;
    engines().with("engine", engine.addr(), body)
}

/// The head of engine `engine` as of the end of the last call on it, read
/// without its lock (see [`Publish`]): a call in progress on another thread
/// is not waited for. Refused for calling out as [`with_engine`] refuses.
#[inline]
pub(crate) fn published_head(engine: *const rp_engine) -> Result<u64, Error> {
    refuse_calling_out(engine)?;
    engines().published("engine", engine.addr())
}

impl Publish for Engine {
    fn publish(&self) -> u64 {
        self.head()
    }
}

/// Checks, without waiting for it, that the handle argument `engine` is a
/// live engine that [`with_engine`] would not refuse for calling out.
///
/// A call that locks something else before the engine checks this first, so
/// that a callback is refused before it can wait on that other lock.
pub(crate) fn check_engine(engine: *const rp_engine) -> Result<(), Error> {
    refuse_calling_out(engine)?;
    engines().check("engine", engine.addr())
}

/// Whether this thread is running the host's callbacks of a turn
/// (`rp_engine_run_turn`), holding an engine's lock.
#[inline]
pub(crate) fn calling_out() -> bool {
    CALLING_OUT_COUNT.get() > 0
}

/// Refuses an engine whose lock this thread holds while the host's
/// callbacks run.
#[inline]
fn refuse_calling_out(engine: *const rp_engine) -> Result<(), Error> {
    if calling_out() {
        refuse_held(engine)
    } else {
        Ok(())
    }
}

#[cold]
#[inline(never)]
fn refuse_held(engine: *const rp_engine) -> Result<(), Error> {
    let number = engine.addr();
    let calling_out = CALLING_OUT
        .try_with(|held| held.borrow().contains(&number))
        .unwrap_or(false);
    if calling_out {
        return Err(Error::new(
            rp_result::Conflict,
            "`engine` is running a turn on this thread (rp_engine_run_turn): its callbacks \
             may not call rp with the same engine",
        ));
    }
    Ok(())
}

thread_local! {
    /// The engines whose lock this thread holds while the host's code runs.
    static CALLING_OUT: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// How many entries `CALLING_OUT` has: read on every call, and kept
    /// apart because a `Cell<usize>` needs no destructor, so reading it is a
    /// plain load.
    static CALLING_OUT_COUNT: Cell<usize> = const { Cell::new(0) };
}

/// Marks an engine as held by this thread while the host's callbacks run,
/// until dropped, so that a callback calling rp with the same engine gets
/// `RP_RESULT_CONFLICT` instead of waiting forever for its lock.
pub(crate) struct CallingOut(usize);

impl CallingOut {
    /// Marks the engine of handle argument `engine`.
    pub(crate) fn new(engine: *const rp_engine) -> CallingOut {
        let number = engine.addr();
        let _ = CALLING_OUT.try_with(|held| {
            let mut held = held.borrow_mut();
            held.push(number);
            CALLING_OUT_COUNT.set(held.len());
        });
        CallingOut(number)
    }
}

impl Drop for CallingOut {
    fn drop(&mut self) {
        // During thread teardown the slot may be gone already; then nothing
        // on this thread can call rp again.
        let _ = CALLING_OUT.try_with(|held| {
            let mut held = held.borrow_mut();
            if let Some(at) = held.iter().rposition(|n| *n == self.0) {
                held.remove(at);
            }
            CALLING_OUT_COUNT.set(held.len());
        });
    }
}

/// Creates a new world named `name` in memory, with no save file.
///
/// `name` is `name_len` bytes of UTF-8 (borrowed for the call). `now` is the
/// host's clock in milliseconds (wall time in a chat app, game time in a
/// game) at which the world begins.
///
/// On success writes the new engine to `*out_engine`; release it with
/// `rp_engine_free`.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, or the code of the core error (`rp_last_error()`
/// says why).
///
/// Thread: any.
///
/// # Safety
///
/// `name` points to `name_len` readable bytes; `out_engine` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_in_memory(
    name: *const c_char,
    name_len: usize,
    now: i64,
    out_engine: *mut *mut rp_engine,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name` points to `name_len` bytes.
        let name = unsafe { str_arg("name", name, name_len) }?;
        let out = out_arg("out_engine", out_engine)?;
        let engine = Engine::in_memory(name, now)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(new_handle(engine)) };
        Ok(())
    })
}

/// Opens an existing save file on its current branch: the latest snapshot,
/// then a replay of the events after it.
///
/// `path` is `path_len` bytes of UTF-8 (borrowed for the call). On success
/// writes the engine to `*out_engine`; release it with `rp_engine_free`.
/// While it is open, no other engine (in this process or another) may open
/// the same file.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, or the code of the core error, such as
/// `RP_RESULT_STORAGE` (cannot read the file), `RP_RESULT_NOT_A_SAVE`,
/// `RP_RESULT_CORRUPT` or `RP_RESULT_UNSUPPORTED_VERSION`; `rp_last_error()`
/// names the file and what is wrong.
///
/// Thread: any. Does file I/O: it may take a while on a long history.
///
/// # Safety
///
/// `path` points to `path_len` readable bytes; `out_engine` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_open(
    path: *const c_char,
    path_len: usize,
    out_engine: *mut *mut rp_engine,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        let out = out_arg("out_engine", out_engine)?;
        let engine = Engine::open(path)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(new_handle(engine)) };
        Ok(())
    })
}

/// Creates a save file at `save_path` holding the world described by the
/// world file (TOML) at `world_file_path`, with the default options
/// (every commit durable before the call returns).
///
/// Both paths are UTF-8 of the given lengths (borrowed for the call). `now`
/// is the host's clock in milliseconds, used when the world file gives none.
/// The save file must not exist yet. Nothing is written when the world file
/// has an error.
///
/// On success writes the engine to `*out_engine`; release it with
/// `rp_engine_free`.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, or the code of the core error, such as
/// `RP_RESULT_WORLD_FILE` (the message names the file, line, column and
/// field), `RP_RESULT_FACT_SYNTAX` (a fact sheet in it does not compile) or
/// `RP_RESULT_STORAGE`.
///
/// Thread: any. Does file I/O.
///
/// # Safety
///
/// `save_path` and `world_file_path` point to their lengths of readable
/// bytes; `out_engine` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_create_from_world_file(
    save_path: *const c_char,
    save_path_len: usize,
    world_file_path: *const c_char,
    world_file_path_len: usize,
    now: i64,
    out_engine: *mut *mut rp_engine,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees both strings point to their lengths
        // of readable bytes.
        let save_path = unsafe { str_arg("save_path", save_path, save_path_len) }?;
        // SAFETY: as above.
        let world_file_path =
            unsafe { str_arg("world_file_path", world_file_path, world_file_path_len) }?;
        let out = out_arg("out_engine", out_engine)?;
        let engine = Engine::create_from_world_file(
            save_path,
            world_file_path,
            now,
            EngineOptions::default(),
        )?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(new_handle(engine)) };
        Ok(())
    })
}

/// Closes an engine and releases it. Every commit it reported as done is
/// already on disk; the save file is closed.
///
/// `engine` may be `NULL`, which does nothing and returns `RP_RESULT_OK`.
/// A handle that was freed already (or is not from rp) is refused with
/// `RP_RESULT_INVALID_HANDLE` and nothing happens. After this call the
/// handle is dead: every call with it returns `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any. A call on the same engine still running on another thread
/// finishes first: this call waits for it, then releases the engine. From a
/// callback of `rp_engine_run_turn`, where waiting could deadlock, it does
/// not wait: the callback's own engine, and an engine in use by another
/// thread, are refused with `RP_RESULT_CONFLICT`.
///
/// # Safety
///
/// None beyond the signature: any `engine` value is answered safely.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_free(engine: *mut rp_engine) -> rp_result {
    ffi_result(|| {
        if !engine.is_null() {
            // Its lock is held further up this thread's stack: waiting for
            // it would never end.
            refuse_calling_out(engine)?;
        }
        let removed = engines().remove("engine", engine.addr(), !calling_out())?;
        // Released here, outside the table's locks (closing a save file
        // does I/O).
        drop(removed);
        Ok(())
    })
}

/// Applies a world file (TOML text) to the world as one batch of events:
/// a first load creates what it describes; a newer version of a file loaded
/// before patches what changed (fields play changed and the file did not
/// keep their played values).
///
/// A `[[cards]]` entry's `file` (docs/cards.md) is read relative to the
/// directory of `file_name` (a bare name: the current directory).
///
/// `file_name` names the file in error messages; `text` is its content. Both
/// are UTF-8 of the given lengths (borrowed for the call). On success writes
/// the number of events appended to `*out_events` (0 when nothing changed).
/// On failure the world is unchanged.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`, or the code of the
/// core error, such as `RP_RESULT_WORLD_FILE`, `RP_RESULT_FACT_SYNTAX`,
/// `RP_RESULT_CONFLICT` or `RP_RESULT_STORAGE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `file_name` and `text` point to their lengths of readable bytes;
/// `out_events` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_apply_world_file(
    engine: *mut rp_engine,
    file_name: *const c_char,
    file_name_len: usize,
    text: *const c_char,
    text_len: usize,
    out_events: *mut usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees both strings point to their lengths
        // of readable bytes.
        let file_name = unsafe { str_arg("file_name", file_name, file_name_len) }?;
        // SAFETY: as above.
        let text = unsafe { str_arg("text", text, text_len) }?;
        let out = out_arg("out_events", out_events)?;
        let events = with_engine(engine, |engine| {
            Ok(engine.apply_world_file(file_name, text)?)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(events) };
        Ok(())
    })
}

/// Reads the world file (TOML) at `path` and applies it, as
/// `rp_engine_apply_world_file` does.
///
/// `path` is `path_len` bytes of UTF-8 (borrowed for the call). On success
/// writes the number of events appended to `*out_events`.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_UTF8`, `RP_RESULT_INVALID_HANDLE`, or the code of the
/// core error (`RP_RESULT_WORLD_FILE` also when the file cannot be read).
///
/// Thread: any (see `rp_engine`). Does file I/O.
///
/// # Safety
///
/// `path` points to `path_len` readable bytes; `out_events` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_load_world_file(
    engine: *mut rp_engine,
    path: *const c_char,
    path_len: usize,
    out_events: *mut usize,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `path` points to `path_len` bytes.
        let path = unsafe { str_arg("path", path, path_len) }?;
        let out = out_arg("out_events", out_events)?;
        let events = with_engine(engine, |engine| Ok(engine.load_world_file(path)?))?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(events) };
        Ok(())
    })
}

/// Looks up the entity `name_or_key` names and writes its id to
/// `*out_entity_id`, by rp-core's rule (`World::resolve_entity`, the same
/// in Rust and Python): its world-file key (exact, such as `"mira"`), or
/// failing that its name (exactly, then ignoring case, such as
/// `"mira holt"`), or failing that its alias (ignoring case, such as
/// `"the innkeeper"`).
///
/// `name_or_key` is `len` bytes of UTF-8 (borrowed for the call). Ids are
/// stable for the life of the world: keep them rather than looking them up
/// again.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NOT_FOUND` (nothing has that key,
/// name or alias), `RP_RESULT_INVALID` (an alias two entities share; the
/// message lists them), `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`
/// or `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `name_or_key` points to `len` readable bytes; `out_entity_id` is
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_entity_id(
    engine: *const rp_engine,
    name_or_key: *const c_char,
    len: usize,
    out_entity_id: *mut u64,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `name_or_key` points to `len` bytes.
        let name_or_key = unsafe { str_arg("name_or_key", name_or_key, len) }?;
        let out = out_arg("out_entity_id", out_entity_id)?;
        let id = with_engine(engine, |engine| {
            Ok(engine.world().resolve_entity(name_or_key)?.0)
        })?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// Writes the seq of the last event on the engine's current branch to
/// `*out_head` (0 for a log without events). Every call that changes the
/// world (`rp_engine_apply_world_file`, `rp_engine_decide`, ...) moves it
/// forward.
///
/// It takes no lock and never waits: while a call on the engine runs on
/// another thread, it reports the head as that call found it, and the new
/// head once the call has returned. So a game loop can poll it every frame
/// to learn whether the world changed.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT`,
/// `RP_RESULT_INVALID_HANDLE`, `RP_RESULT_PANIC` (an earlier call on the
/// engine panicked) or `RP_RESULT_CONFLICT` (called from a callback of a
/// turn running on the same engine).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_head` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_head(engine: *const rp_engine, out_head: *mut u64) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_head", out_head)?;
        let head = published_head(engine)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(head) };
        Ok(())
    })
}

/// Decides whether entity `entity_id` responds to a message (response
/// control): evaluates its fact sheet against the message, with the world's
/// seeded random generator, and records the decision in the log (so the
/// head moves forward and a replay reproduces it).
///
/// `message_json` is `message_json_len` bytes of UTF-8 JSON (borrowed for
/// the call), an object whose fields are all optional; unknown fields are
/// refused:
///
/// ```text
/// {
///   "content": "Mira, another cider?",  // string, default ""
///   "author": "Wren",                    // string, default ""
///   "mentioned": true,      // bool; absent or null: rp looks for the
///                           // entity's name and aliases in content, as
///                           // whole words, ignoring case
///   "response_ms": 60000,   // ms since the entity last responded;
///                           // absent or null: never
///   "retry_ms": 0,          // ms since the message arrived, default 0
///   "unread_count": 0,      // messages since the entity's last reply,
///                           // a whole number >= 0, default 0
///   "interaction_type": "use",  // how an item is used; default null
///   "hour": 21.5            // hour of day; absent or null: from the
///                           // world clock
/// }
/// ```
///
/// `{}` is a valid message. On success writes the decision as JSON to
/// `*out_decision_json`, a string the caller releases with `rp_string_free`:
///
/// ```text
/// {
///   "respond": true,        // whether the entity responds now
///   "retry_ms": null,       // or a whole number: a `$retry` fired; do not
///                           // respond now, decide again after this many ms
///   "facts": ["..."],       // the facts that apply: plain lines, and the
///                           // text of conditional lines that fired
///   "trace": [              // why, in order; every entry has "line" (the
///                           // 1-based sheet line) and "kind":
///     {"line": 4, "kind": "fired", "action": "$respond true"},
///     {"line": 5, "kind": "random", "value": 0.42},
///     {"line": 6, "kind": "chance", "probability": 0.1, "value": 0.42,
///      "result": false},
///     {"line": 7, "kind": "roll", "notation": "2d6+1", "dice": [3, 5],
///      "total": 9},
///     {"line": 8, "kind": "error", "message": "..."}  // a runtime error:
///                                                     // the condition was false
///   ],
///   "draws": [0.42]         // every random number drawn, in order
/// }
/// ```
///
/// `rp_decision_explain` turns this JSON into text a writer can read.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when the message is not JSON
/// or does not match the schema (`rp_last_error()` says where);
/// `RP_RESULT_NOT_FOUND` when there is no such entity (or it has no fact
/// sheet); `RP_RESULT_NULL_ARGUMENT`, `RP_RESULT_INVALID_UTF8`,
/// `RP_RESULT_INVALID_HANDLE`; `RP_RESULT_STORAGE` when the decision could
/// not be saved (then the world is unchanged).
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `message_json` points to `message_json_len` readable bytes;
/// `out_decision_json` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_decide(
    engine: *mut rp_engine,
    entity_id: u64,
    message_json: *const c_char,
    message_json_len: usize,
    out_decision_json: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `message_json` points to
        // `message_json_len` bytes.
        let message_json = unsafe { str_arg("message_json", message_json, message_json_len) }?;
        let out = out_arg("out_decision_json", out_decision_json)?;
        let message = Message::from_json(message_json).map_err(Error::from)?;
        let decision = with_engine(engine, |engine| {
            Ok(engine.decide(EntityId(entity_id), &message)?)
        })?;
        let json = serde_json::to_string(&decision).expect("a Decision serialises to JSON");
        let json = owned_string("the decision JSON", json)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(json) };
        Ok(())
    })
}

/// Writes the decision JSON of `rp_engine_decide` as text a writer can
/// read: one line per trace entry (`"line 4: fired: $respond true"`), then
/// the outcome (`"→ responds"`, `"→ stays silent"` or
/// `"→ not now; evaluate again in 5000 ms"`).
///
/// `decision_json` is `decision_json_len` bytes of UTF-8 (borrowed for the
/// call). On success writes the text to `*out_text`, a string the caller
/// releases with `rp_string_free`.
///
/// Returns `RP_RESULT_OK`; `RP_RESULT_INVALID` when the JSON is not a
/// decision; `RP_RESULT_NULL_ARGUMENT` or `RP_RESULT_INVALID_UTF8`.
///
/// Thread: any.
///
/// # Safety
///
/// `decision_json` points to `decision_json_len` readable bytes; `out_text`
/// is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_decision_explain(
    decision_json: *const c_char,
    decision_json_len: usize,
    out_text: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        // SAFETY: the caller guarantees `decision_json` points to
        // `decision_json_len` bytes.
        let decision_json = unsafe { str_arg("decision_json", decision_json, decision_json_len) }?;
        let out = out_arg("out_text", out_text)?;
        let decision: Decision = serde_json::from_str(decision_json).map_err(|error| {
            Error::from(rp_core::Error::Invalid {
                what: "decision JSON",
                reason: error.to_string(),
            })
        })?;
        let text = owned_string("the explanation", decision.explain())?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Writes the current world in world-file form (TOML) to `*out_text`, a
/// string the caller releases with `rp_string_free`. Loading it into an
/// empty world gives back what the format holds.
///
/// Returns `RP_RESULT_OK`, `RP_RESULT_NULL_ARGUMENT` or
/// `RP_RESULT_INVALID_HANDLE`.
///
/// Thread: any (see `rp_engine`).
///
/// # Safety
///
/// `out_text` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rp_engine_export_world_file(
    engine: *const rp_engine,
    out_text: *mut *mut c_char,
) -> rp_result {
    ffi_result(|| {
        let out = out_arg("out_text", out_text)?;
        let text = with_engine(engine, |engine| Ok(engine.export_world_file()))?;
        let text = owned_string("the world file", text)?;
        // SAFETY: `out` is a non-NULL pointer the caller made writable.
        unsafe { out.write(text) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr;

    use super::*;
    use crate::error::rp_last_error;
    use crate::string::rp_string_free;

    const TAVERN: &str = include_str!("../../examples/tavern.toml");

    fn last_error() -> String {
        // SAFETY: rp_last_error returns a valid NUL-terminated string.
        unsafe { CStr::from_ptr(rp_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Takes a string rp handed out, releasing it.
    fn take(string: *mut c_char) -> String {
        // SAFETY: `string` is a live string rp handed out; released once.
        let text = unsafe { CStr::from_ptr(string) }
            .to_str()
            .expect("UTF-8")
            .to_owned();
        // SAFETY: as above.
        unsafe { rp_string_free(string) };
        text
    }

    fn tavern() -> *mut rp_engine {
        let mut engine = ptr::null_mut();
        let name = "test";
        // SAFETY: valid strings and out-parameters.
        let result =
            unsafe { rp_engine_in_memory(name.as_ptr().cast(), name.len(), 0, &mut engine) };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        let mut events = 0;
        let file = "tavern.toml";
        // SAFETY: as above.
        let result = unsafe {
            rp_engine_apply_world_file(
                engine,
                file.as_ptr().cast(),
                file.len(),
                TAVERN.as_ptr().cast(),
                TAVERN.len(),
                &mut events,
            )
        };
        assert_eq!(result, rp_result::Ok, "{}", last_error());
        assert!(events > 0);
        engine
    }

    fn entity_id(engine: *const rp_engine, name: &str) -> Result<u64, rp_result> {
        let mut id = u64::MAX;
        // SAFETY: valid strings and out-parameters.
        match unsafe { rp_engine_entity_id(engine, name.as_ptr().cast(), name.len(), &mut id) } {
            rp_result::Ok => Ok(id),
            code => {
                assert_eq!(id, u64::MAX, "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    fn decide(
        engine: *mut rp_engine,
        id: u64,
        message: &str,
    ) -> Result<serde_json::Value, rp_result> {
        let mut json = ptr::null_mut();
        // SAFETY: valid strings and out-parameters.
        match unsafe {
            rp_engine_decide(
                engine,
                id,
                message.as_ptr().cast(),
                message.len(),
                &mut json,
            )
        } {
            rp_result::Ok => Ok(serde_json::from_str(&take(json)).expect("decision JSON")),
            code => {
                assert!(json.is_null(), "the out-parameter was written on failure");
                Err(code)
            }
        }
    }

    #[test]
    fn mira_responds_when_mentioned_and_only_then() {
        let engine = tavern();
        let mira = entity_id(engine, "Mira Holt").expect("Mira by name");
        assert_eq!(entity_id(engine, "mira"), Ok(mira), "Mira by key");
        assert_eq!(
            entity_id(engine, "mira holt"),
            Ok(mira),
            "names ignore case"
        );

        let mut head = 0;
        // SAFETY: valid out-parameter.
        assert_eq!(unsafe { rp_engine_head(engine, &mut head) }, rp_result::Ok);

        let mentioned = decide(
            engine,
            mira,
            r#"{"content": "Mira, a cider please", "author": "Wren"}"#,
        )
        .expect("decides");
        assert_eq!(mentioned["respond"], true);
        assert_eq!(mentioned["retry_ms"], serde_json::Value::Null);
        assert!(mentioned["trace"][0]["line"].as_u64().is_some());
        assert_eq!(mentioned["trace"][0]["kind"], "fired");

        let unrelated =
            decide(engine, mira, r#"{"content": "the rain will not stop"}"#).expect("decides");
        assert_eq!(unrelated["respond"], false);

        let mut after = 0;
        // SAFETY: valid out-parameter.
        assert_eq!(unsafe { rp_engine_head(engine, &mut after) }, rp_result::Ok);
        assert_eq!(after, head + 2, "each decision is recorded");

        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { rp_engine_free(engine) }, rp_result::Ok);
    }

    #[test]
    fn bad_input_is_refused_with_the_code_of_its_kind() {
        let engine = tavern();
        let mira = entity_id(engine, "Mira Holt").expect("Mira");
        assert_eq!(decide(engine, mira, "{not json"), Err(rp_result::Invalid));
        assert!(
            last_error().starts_with("invalid message: not JSON: "),
            "{}",
            last_error()
        );
        assert_eq!(
            decide(engine, mira, r#"{"shout": 1}"#),
            Err(rp_result::Invalid)
        );
        assert_eq!(decide(engine, 999_999, "{}"), Err(rp_result::NotFound));
        assert_eq!(entity_id(engine, "nobody"), Err(rp_result::NotFound));
        assert_eq!(last_error(), r#"entity "nobody" does not exist"#);

        let mut events = 0;
        let bad = "[[entities]]\nname = 3\n";
        // SAFETY: valid strings and out-parameters.
        let result = unsafe {
            rp_engine_apply_world_file(
                engine,
                c"bad.toml".as_ptr(),
                8,
                bad.as_ptr().cast(),
                bad.len(),
                &mut events,
            )
        };
        assert_eq!(result, rp_result::WorldFile);
        assert!(last_error().starts_with("bad.toml:"), "{}", last_error());

        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { rp_engine_free(engine) }, rp_result::Ok);
    }

    #[test]
    fn a_freed_handle_is_invalid_and_null_is_refused() {
        let engine = tavern();
        // SAFETY: a live handle, then a dead one: both answered safely.
        assert_eq!(unsafe { rp_engine_free(engine) }, rp_result::Ok);
        assert_eq!(unsafe { rp_engine_free(engine) }, rp_result::InvalidHandle);
        let mut head = 0;
        // SAFETY: valid out-parameter; the dead handle is answered safely.
        assert_eq!(
            unsafe { rp_engine_head(engine, &mut head) },
            rp_result::InvalidHandle
        );
        assert_eq!(decide(engine, 1, "{}"), Err(rp_result::InvalidHandle));
        // SAFETY: NULL handles and out-parameters are refused.
        unsafe {
            assert_eq!(rp_engine_free(ptr::null_mut()), rp_result::Ok);
            assert_eq!(
                rp_engine_head(ptr::null(), &mut head),
                rp_result::NullArgument
            );
            assert_eq!(last_error(), "`engine` is NULL");
        }
        let live = tavern();
        // SAFETY: NULL out-parameter.
        assert_eq!(
            unsafe { rp_engine_head(live, ptr::null_mut()) },
            rp_result::NullArgument
        );
        assert_eq!(last_error(), "`out_head` is NULL");
        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { rp_engine_free(live) }, rp_result::Ok);
    }

    #[test]
    fn an_exported_world_loads_into_a_new_one_and_explain_reads_a_decision() {
        let engine = tavern();
        let mut text = ptr::null_mut();
        // SAFETY: valid out-parameter.
        assert_eq!(
            unsafe { rp_engine_export_world_file(engine, &mut text) },
            rp_result::Ok
        );
        let exported = take(text);
        let mut copy = ptr::null_mut();
        let mut events = 0;
        // SAFETY: valid strings and out-parameters.
        unsafe {
            assert_eq!(
                rp_engine_in_memory(c"copy".as_ptr(), 4, 0, &mut copy),
                rp_result::Ok
            );
            let result = rp_engine_apply_world_file(
                copy,
                c"export.toml".as_ptr(),
                11,
                exported.as_ptr().cast(),
                exported.len(),
                &mut events,
            );
            assert_eq!(result, rp_result::Ok, "{}", last_error());
        }
        assert_eq!(entity_id(copy, "mira").map(|_| ()), Ok(()));
        assert_eq!(entity_id(copy, "Tobias Reed").map(|_| ()), Ok(()));
        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { rp_engine_free(copy) }, rp_result::Ok);

        let mira = entity_id(engine, "Mira Holt").expect("Mira");
        let mut json = ptr::null_mut();
        let message = r#"{"mentioned": true}"#;
        // SAFETY: valid strings and out-parameters.
        let result = unsafe {
            rp_engine_decide(
                engine,
                mira,
                message.as_ptr().cast(),
                message.len(),
                &mut json,
            )
        };
        assert_eq!(result, rp_result::Ok);
        let json = take(json);
        let mut explained = ptr::null_mut();
        // SAFETY: as above.
        let result =
            unsafe { rp_decision_explain(json.as_ptr().cast(), json.len(), &mut explained) };
        assert_eq!(result, rp_result::Ok);
        assert!(take(explained).ends_with("→ responds\n"));
        // SAFETY: a live handle, freed once.
        assert_eq!(unsafe { rp_engine_free(engine) }, rp_result::Ok);
    }
}
