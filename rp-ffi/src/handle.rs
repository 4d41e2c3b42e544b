//! Handles: what a C caller holds in place of a Rust object.
//!
//! A handle is not a pointer to the object. It is a number, handed out once
//! and never again, that a registry maps to the object while it is alive.
//! So a handle that was freed, or that never came from rp, is answered with
//! `RP_RESULT_INVALID_HANDLE` instead of undefined behaviour, and a freed
//! handle can never come to name a newer object (no ABA: numbers are not
//! reused).
//!
//! Each object sits behind its own mutex, so calls on one handle from several
//! threads run one at a time, and calls on different handles run in
//! parallel. The registry's own lock is held only to look a number up, never
//! while the object works.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::{Error, rp_result};

/// Live objects of one type by handle number.
pub(crate) struct Registry<T> {
    /// The number the next handle gets; 0 is never used, so no handle is
    /// `NULL`.
    next: usize,
    live: BTreeMap<usize, Arc<Mutex<T>>>,
}

impl<T> Registry<T> {
    /// An empty registry.
    pub(crate) const fn new() -> Self {
        Self {
            next: 1,
            live: BTreeMap::new(),
        }
    }
}

/// A registry shared by every thread.
pub(crate) struct Handles<T>(Mutex<Registry<T>>);

impl<T> Handles<T> {
    /// No live handles.
    pub(crate) const fn new() -> Self {
        Self(Mutex::new(Registry::new()))
    }

    /// The registry. Its operations cannot panic halfway (they insert, remove
    /// or clone), so a poisoned lock still guards a consistent map.
    fn registry(&self) -> MutexGuard<'_, Registry<T>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `object` and returns its new handle number (never 0).
    pub(crate) fn insert(&self, object: T) -> usize {
        let mut registry = self.registry();
        let number = registry.next;
        // 2^64 handles cannot be created in the life of a process on a 64-bit
        // target; on a 32-bit one the count would wrap after 2^32, so a
        // number still in use is skipped (as is 0).
        registry.next = registry.next.wrapping_add(1).max(1);
        while registry.live.contains_key(&registry.next) {
            registry.next = registry.next.wrapping_add(1).max(1);
        }
        registry.live.insert(number, Arc::new(Mutex::new(object)));
        number
    }

    /// The object of handle `number`, kept alive for the caller even if
    /// another thread frees the handle meanwhile.
    ///
    /// `name` is the argument's name in the error: `RP_RESULT_NULL_ARGUMENT`
    /// for 0 (`NULL`), `RP_RESULT_INVALID_HANDLE` for a number that is not
    /// live.
    pub(crate) fn get(&self, name: &str, number: usize) -> Result<Arc<Mutex<T>>, Error> {
        if number == 0 {
            return Err(Error::new(
                rp_result::NullArgument,
                format_args!("`{name}` is NULL"),
            ));
        }
        self.registry()
            .live
            .get(&number)
            .cloned()
            .ok_or_else(|| invalid_handle(name))
    }

    /// Unregisters handle `number` and hands its object back; `Ok(None)` for
    /// 0 (`NULL`). The caller drops it after the registry's lock is released.
    pub(crate) fn remove(&self, name: &str, number: usize) -> Result<Option<Arc<Mutex<T>>>, Error> {
        if number == 0 {
            return Ok(None);
        }
        self.registry()
            .live
            .remove(&number)
            .map(Some)
            .ok_or_else(|| invalid_handle(name))
    }

    /// Runs `body` on the object of handle `number`, holding its lock.
    ///
    /// An object whose earlier call panicked (its lock is poisoned) may be
    /// half-updated: it is refused with `RP_RESULT_PANIC`, and may only be
    /// freed.
    pub(crate) fn with<R>(
        &self,
        name: &str,
        number: usize,
        body: impl FnOnce(&mut T) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let object = self.get(name, number)?;
        let mut guard = object.lock().map_err(|_| {
            Error::new(
                rp_result::Panic,
                format_args!(
                    "`{name}` is unusable: an earlier call on it panicked; it may only be freed"
                ),
            )
        })?;
        body(&mut guard)
    }

    /// How many handles are live.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.registry().live.len()
    }
}

fn invalid_handle(name: &str) -> Error {
    Error::new(
        rp_result::InvalidHandle,
        format_args!("`{name}` is not a live handle: it was freed already, or it is not from rp"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> rp_result {
        result.expect_err("the call fails").code()
    }

    #[test]
    fn handles_are_never_null_and_never_reused() {
        let handles = Handles::new();
        let a = handles.insert("a");
        assert_ne!(a, 0);
        assert!(handles.remove("h", a).expect("a is live").is_some());
        let b = handles.insert("b");
        assert_ne!(a, b);
        assert_eq!(code(handles.get("h", a)), rp_result::InvalidHandle);
        assert_eq!(
            *handles.get("h", b).expect("b is live").lock().unwrap(),
            "b"
        );
    }

    #[test]
    fn a_freed_or_foreign_handle_is_invalid_and_null_is_a_null_argument() {
        let handles = Handles::new();
        let a = handles.insert(1);
        assert_eq!(code(handles.get("h", a + 1000)), rp_result::InvalidHandle);
        assert_eq!(code(handles.get("h", 0)), rp_result::NullArgument);
        assert!(handles.remove("h", 0).expect("NULL is fine").is_none());
        handles.remove("h", a).expect("a is live");
        assert_eq!(code(handles.remove("h", a)), rp_result::InvalidHandle);
        assert_eq!(
            code(handles.with("h", a, |_| Ok(()))),
            rp_result::InvalidHandle
        );
        assert_eq!(handles.len(), 0);
    }

    #[test]
    fn an_object_that_panicked_is_refused_until_freed() {
        let handles = Handles::new();
        let a = handles.insert(1);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handles.with("h", a, |_| -> Result<(), Error> { panic!("boom") })
        }));
        assert!(outcome.is_err());
        assert_eq!(code(handles.with("h", a, |_| Ok(()))), rp_result::Panic);
        assert!(handles.remove("h", a).expect("still registered").is_some());
    }

    #[test]
    fn a_freed_handle_stays_usable_by_a_call_already_running() {
        let handles = Handles::new();
        let a = handles.insert(String::from("kept"));
        let running = handles.get("h", a).expect("a is live");
        drop(handles.remove("h", a).expect("a is live"));
        assert_eq!(*running.lock().unwrap(), "kept");
    }
}
