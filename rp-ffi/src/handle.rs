//! Handles: what a C caller holds in place of a Rust object.
//!
//! A handle is not a pointer to the object. It is a number naming a slot of a
//! table and the generation of that slot: each time a slot is given an object
//! its generation moves on, and each time the object is freed it moves on
//! again. So a handle that was freed, or that never came from rp, is answered
//! with `RP_RESULT_INVALID_HANDLE` instead of undefined behaviour, and a freed
//! handle can never come to name a newer object (no ABA: a slot whose
//! generations are spent is retired, so no number is handed out twice).
//!
//! Each object sits behind its own mutex in its slot, so calls on one handle
//! from several threads run one at a time, and calls on different handles run
//! in parallel. Looking a handle up writes nothing shared: it reads the slot's
//! generation and takes the object's own lock. Slots never move (the table
//! grows by segments that are never freed while it lives), so a look-up needs
//! no table-wide lock; one is taken only to hand out or free a slot.
//!
//! Freeing takes the object's lock, so it waits for a call on the same handle
//! running on another thread, and the object is released after that call. A
//! thread that must not wait (one running the host's callbacks while it
//! holds an engine's lock) frees without waiting, and an object in use is
//! refused instead.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use crate::error::{Error, rp_result};

/// The layout of handle numbers and of the table; not part of the C API:
///
/// cbindgen:ignore
mod layout {
    /// The low half of a handle number is the slot's index, the high half
    /// its generation.
    pub(super) const INDEX_BITS: u32 = usize::BITS / 2;
    pub(super) const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
    /// The last generation a handle number can carry. Generations of live
    /// objects are odd (1, 3, 5, ...), so no handle is 0 (`NULL`).
    pub(super) const LAST_GENERATION: usize = usize::MAX >> INDEX_BITS;
    /// Slots in the first segment; segment `k` holds `FIRST_SEGMENT << k`.
    pub(super) const FIRST_SEGMENT: usize = 16;
    /// Enough segments for every index below `2^INDEX_BITS`.
    pub(super) const SEGMENTS: usize = (INDEX_BITS - FIRST_SEGMENT.trailing_zeros()) as usize;
}

use layout::{FIRST_SEGMENT, INDEX_BITS, INDEX_MASK, LAST_GENERATION, SEGMENTS};

/// A number an object shows without its lock: the table stores it in the
/// object's slot after every call on the object, and [`Handles::published`]
/// reads it without waiting for a call in progress.
pub(crate) trait Publish {
    /// The number to show; 0 for objects with nothing to show.
    fn publish(&self) -> u64 {
        0
    }
}

/// One object's place in the table, on a cache line of its own so that calls
/// on neighbouring objects do not share one.
#[repr(align(64))]
struct Slot<T> {
    /// Odd while the slot holds an object (the generation its handle
    /// carries); even while it is free. Changed only under `object`'s lock.
    generation: AtomicUsize,
    /// What the object published at the end of the last call on it (see
    /// [`Publish`]). Written only under `object`'s lock.
    published: AtomicU64,
    object: Mutex<Option<T>>,
}

impl<T> Slot<T> {
    fn new() -> Self {
        Self {
            generation: AtomicUsize::new(0),
            published: AtomicU64::new(0),
            object: Mutex::new(None),
        }
    }
}

/// Which slots are handed out: changed only to hand out or free one.
struct Allocation {
    /// Slots used so far: those from here on were never handed out.
    used: usize,
    /// Freed slots to hand out again.
    free: Vec<usize>,
    /// Live objects.
    live: usize,
}

/// The live objects of one type by handle number, shared by every thread.
pub(crate) struct Handles<T> {
    /// The segments of slots, allocated as the table grows and kept until it
    /// is dropped (the tables of rp-ffi are statics: never).
    segments: [AtomicPtr<Slot<T>>; SEGMENTS],
    allocation: Mutex<Allocation>,
    /// The table owns `Slot<T>`s: it is `Send` and `Sync` when they are.
    _slots: PhantomData<Box<Slot<T>>>,
}

impl<T: Publish> Handles<T> {
    /// No live handles.
    pub(crate) const fn new() -> Self {
        Self {
            segments: [const { AtomicPtr::new(std::ptr::null_mut()) }; SEGMENTS],
            allocation: Mutex::new(Allocation {
                used: 0,
                free: Vec::new(),
                live: 0,
            }),
            _slots: PhantomData,
        }
    }

    /// The allocation state. Its operations cannot panic halfway (they push,
    /// pop or count), so a poisoned lock still guards a consistent state.
    fn allocation(&self) -> MutexGuard<'_, Allocation> {
        self.allocation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The segment of slot `index` and the slot's place in it.
    #[inline(always)]
    fn locate(index: usize) -> (usize, usize) {
        let n = index + FIRST_SEGMENT;
        let segment = (n.ilog2() - FIRST_SEGMENT.ilog2()) as usize;
        (segment, n - (FIRST_SEGMENT << segment))
    }

    /// Slot `index`, if its segment exists.
    #[inline(always)]
    fn slot(&self, index: usize) -> Option<&Slot<T>> {
        let (segment, offset) = Self::locate(index);
        let first = self.segments.get(segment)?.load(Ordering::Acquire);
        if first.is_null() {
            return None;
        }
        // SAFETY: a non-null segment pointer points to `FIRST_SEGMENT <<
        // segment` initialised slots (see `insert`), freed only by `drop`,
        // and `offset` is below that count (see `locate`).
        Some(unsafe { &*first.add(offset) })
    }

    /// Registers `object` and returns its new handle number (never 0).
    pub(crate) fn insert(&self, object: T) -> usize {
        let mut allocation = self.allocation();
        let index = match allocation.free.pop() {
            Some(index) => index,
            None => {
                let index = allocation.used;
                let (segment, offset) = Self::locate(index);
                assert!(segment < SEGMENTS, "rp has run out of handles");
                if offset == 0 {
                    let slots: Box<[Slot<T>]> =
                        (0..FIRST_SEGMENT << segment).map(|_| Slot::new()).collect();
                    let first = Box::into_raw(slots).cast::<Slot<T>>();
                    self.segments[segment].store(first, Ordering::Release);
                }
                allocation.used += 1;
                index
            }
        };
        allocation.live += 1;
        let slot = self.slot(index).expect("the slot's segment was allocated");
        let mut held = slot.object.lock().unwrap_or_else(PoisonError::into_inner);
        slot.published.store(object.publish(), Ordering::Release);
        *held = Some(object);
        let generation = slot.generation.load(Ordering::Relaxed) + 1;
        debug_assert!(!generation.is_multiple_of(2) && generation <= LAST_GENERATION);
        slot.generation.store(generation, Ordering::Release);
        (generation << INDEX_BITS) | index
    }

    /// The slot of handle `number` and the generation it names, if live now.
    ///
    /// `name` is the argument's name in the error: `RP_RESULT_NULL_ARGUMENT`
    /// for 0 (`NULL`), `RP_RESULT_INVALID_HANDLE` for a number that is not
    /// live. Every call on a handle starts here: the errors are made out of
    /// line, so this stays a few instructions inlined into each entry point.
    #[inline(always)]
    fn live(&self, name: &str, number: usize) -> Result<(&Slot<T>, usize), Error> {
        let generation = number >> INDEX_BITS;
        if number != 0
            && !generation.is_multiple_of(2)
            && let Some(slot) = self.slot(number & INDEX_MASK)
            && slot.generation.load(Ordering::Acquire) == generation
        {
            return Ok((slot, generation));
        }
        Err(not_live(name, number))
    }

    /// Checks that handle `number` is live, without waiting for its object.
    pub(crate) fn check(&self, name: &str, number: usize) -> Result<(), Error> {
        self.live(name, number).map(drop)
    }

    /// Unregisters handle `number` and hands its object back; `Ok(None)` for
    /// 0 (`NULL`). With `wait`, waits for a call on the object running on
    /// another thread; without, refuses an object in use with
    /// `RP_RESULT_CONFLICT` (for a thread that holds other objects' locks,
    /// which that call might be waiting for). The caller drops the object,
    /// after every lock of the table is released.
    pub(crate) fn remove(&self, name: &str, number: usize, wait: bool) -> Result<Option<T>, Error> {
        if number == 0 {
            return Ok(None);
        }
        let (slot, generation) = self.live(name, number)?;
        let mut held = if wait {
            slot.object.lock().unwrap_or_else(PoisonError::into_inner)
        } else {
            match slot.object.try_lock() {
                Ok(held) => held,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::new(
                        rp_result::Conflict,
                        format_args!(
                            "`{name}` is in use by a call on another thread, and waiting for it \
                             from a callback of rp_engine_run_turn could wait forever; free it \
                             after rp_engine_run_turn returns"
                        ),
                    ));
                }
            }
        };
        if slot.generation.load(Ordering::Relaxed) != generation {
            // Freed by another thread while this one waited.
            return Err(invalid_handle(name));
        }
        let object = held.take();
        slot.generation.store(generation + 1, Ordering::Release);
        // The next object in this slot starts with a sound lock.
        slot.object.clear_poison();
        drop(held);
        let mut allocation = self.allocation();
        allocation.live -= 1;
        // A slot whose generations are spent is retired, never handed out again.
        if generation < LAST_GENERATION {
            allocation.free.push(number & INDEX_MASK);
        }
        Ok(object)
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
        let (slot, generation) = self.live(name, number)?;
        let (mut held, poisoned) = match slot.object.lock() {
            Ok(held) => (held, false),
            Err(poisoned) => (poisoned.into_inner(), true),
        };
        // Freed (and perhaps handed out again) while this thread waited.
        if slot.generation.load(Ordering::Relaxed) != generation {
            return Err(invalid_handle(name));
        }
        if poisoned {
            return Err(self::poisoned(name));
        }
        let object = held.as_mut().ok_or_else(|| invalid_handle(name))?;
        let result = body(object);
        // Published before the lock is released, so a reader that sees the
        // next call's effects also sees this value or a later one.
        slot.published.store(object.publish(), Ordering::Release);
        result
    }

    /// What the object of handle `number` published at the end of the last
    /// call on it, without waiting for a call in progress on another thread.
    ///
    /// An object whose earlier call panicked is refused with
    /// `RP_RESULT_PANIC`, as by [`Handles::with`].
    #[inline]
    pub(crate) fn published(&self, name: &str, number: usize) -> Result<u64, Error> {
        let (slot, generation) = self.live(name, number)?;
        let value = slot.published.load(Ordering::Acquire);
        // The generation read again after the value (the value's acquire
        // load keeps this one after it): unchanged means the object was live
        // all along, so the value is its own and not a successor's (handle
        // numbers are never reused).
        if slot.generation.load(Ordering::Acquire) != generation {
            return Err(invalid_handle(name));
        }
        if slot.object.is_poisoned() {
            return Err(poisoned(name));
        }
        Ok(value)
    }

    /// How many handles are live.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.allocation().live
    }
}

impl<T> Drop for Handles<T> {
    fn drop(&mut self) {
        for (segment, first) in self.segments.iter_mut().enumerate() {
            let first = *first.get_mut();
            if !first.is_null() {
                let slots = std::ptr::slice_from_raw_parts_mut(first, FIRST_SEGMENT << segment);
                // SAFETY: made by `Box::into_raw` of a boxed slice of this
                // length in `insert`, and dropped only here, once.
                drop(unsafe { Box::from_raw(slots) });
            }
        }
    }
}

#[cold]
fn poisoned(name: &str) -> Error {
    Error::new(
        rp_result::Panic,
        format_args!("`{name}` is unusable: an earlier call on it panicked; it may only be freed"),
    )
}

/// The error of handle `number` (argument `name`) not being live.
#[cold]
#[inline(never)]
fn not_live(name: &str, number: usize) -> Error {
    if number == 0 {
        crate::arg::null_argument(name)
    } else {
        invalid_handle(name)
    }
}

#[cold]
fn invalid_handle(name: &str) -> Error {
    Error::new(
        rp_result::InvalidHandle,
        format_args!("`{name}` is not a live handle: it was freed already, or it is not from rp"),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use super::*;

    impl Publish for u8 {}
    impl Publish for usize {}
    impl Publish for i32 {}
    impl Publish for String {}
    impl Publish for &str {}
    impl Publish for u32 {
        fn publish(&self) -> u64 {
            u64::from(*self)
        }
    }

    fn code<T: std::fmt::Debug>(result: Result<T, Error>) -> rp_result {
        result.expect_err("the call fails").code()
    }

    fn value<T: Clone + Publish>(handles: &Handles<T>, number: usize) -> Result<T, Error> {
        handles.with("h", number, |object| Ok(object.clone()))
    }

    #[test]
    fn handles_are_never_null_and_never_reused() {
        let handles = Handles::new();
        let a = handles.insert("a");
        assert_ne!(a, 0);
        assert_eq!(handles.remove("h", a, true).expect("a is live"), Some("a"));
        let b = handles.insert("b");
        assert_ne!(a, b);
        assert_eq!(b & INDEX_MASK, a & INDEX_MASK, "the slot is used again");
        assert_eq!(code(value(&handles, a)), rp_result::InvalidHandle);
        assert_eq!(value(&handles, b).expect("b is live"), "b");
    }

    #[test]
    fn a_freed_or_foreign_handle_is_invalid_and_null_is_a_null_argument() {
        let handles = Handles::new();
        let a = handles.insert(1);
        for foreign in [
            a + 1000,
            a + (1 << INDEX_BITS),
            a + (2 << INDEX_BITS),
            1,
            usize::MAX,
        ] {
            assert_eq!(
                code(handles.check("h", foreign)),
                rp_result::InvalidHandle,
                "{foreign:#x}"
            );
            assert_eq!(code(value(&handles, foreign)), rp_result::InvalidHandle);
            assert_eq!(
                code(handles.remove("h", foreign, true)),
                rp_result::InvalidHandle
            );
        }
        assert_eq!(code(handles.check("h", 0)), rp_result::NullArgument);
        assert_eq!(code(value(&handles, 0)), rp_result::NullArgument);
        assert!(
            handles
                .remove("h", 0, true)
                .expect("NULL is fine")
                .is_none()
        );
        handles.check("h", a).expect("a is live");
        handles.remove("h", a, true).expect("a is live");
        assert_eq!(code(handles.remove("h", a, true)), rp_result::InvalidHandle);
        assert_eq!(code(handles.check("h", a)), rp_result::InvalidHandle);
        assert_eq!(
            code(handles.with("h", a, |_| Ok(()))),
            rp_result::InvalidHandle
        );
        assert_eq!(handles.len(), 0);
    }

    #[test]
    fn an_object_that_panicked_is_refused_until_freed_and_its_slot_starts_afresh() {
        let handles = Handles::new();
        let a = handles.insert(1);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handles.with("h", a, |_| -> Result<(), Error> { panic!("boom") })
        }));
        assert!(outcome.is_err());
        assert_eq!(code(handles.with("h", a, |_| Ok(()))), rp_result::Panic);
        assert_eq!(
            handles.remove("h", a, true).expect("still registered"),
            Some(1)
        );
        let b = handles.insert(2);
        assert_eq!(b & INDEX_MASK, a & INDEX_MASK);
        assert_eq!(value(&handles, b).expect("a new object is sound"), 2);
        assert_eq!(code(value(&handles, a)), rp_result::InvalidHandle);
    }

    #[test]
    fn the_table_grows_by_segments_and_every_handle_finds_its_own_object() {
        let handles = Handles::new();
        let numbers: Vec<usize> = (0..1000).map(|i| handles.insert(i)).collect();
        for (i, number) in numbers.iter().enumerate() {
            assert_eq!(value(&handles, *number).expect("live"), i);
        }
        for number in numbers.iter().step_by(2) {
            handles.remove("h", *number, true).expect("live");
        }
        assert_eq!(handles.len(), 500);
        let again: Vec<usize> = (1000..1500).map(|i| handles.insert(i)).collect();
        for (i, number) in numbers.iter().enumerate() {
            let found = value(&handles, *number);
            if i % 2 == 0 {
                assert_eq!(code(found), rp_result::InvalidHandle);
            } else {
                assert_eq!(found.expect("live"), i);
            }
        }
        for (i, number) in again.iter().enumerate() {
            assert_eq!(value(&handles, *number).expect("live"), 1000 + i);
        }
        assert_eq!(handles.len(), 1000);
    }

    #[test]
    fn slots_are_located_in_their_segments() {
        assert_eq!(Handles::<u8>::locate(0), (0, 0));
        assert_eq!(Handles::<u8>::locate(15), (0, 15));
        assert_eq!(Handles::<u8>::locate(16), (1, 0));
        assert_eq!(Handles::<u8>::locate(47), (1, 31));
        assert_eq!(Handles::<u8>::locate(48), (2, 0));
        let (segment, offset) = Handles::<u8>::locate(INDEX_MASK - FIRST_SEGMENT);
        assert_eq!(segment, SEGMENTS - 1);
        assert_eq!(offset, (FIRST_SEGMENT << segment) - 1, "the last slot");
    }

    #[test]
    fn a_slot_whose_generations_are_spent_is_retired() {
        let handles = Handles::new();
        let a = handles.insert(1);
        let slot = handles.slot(a & INDEX_MASK).expect("allocated");
        // Skip to the slot's last generation.
        slot.generation.store(LAST_GENERATION, Ordering::Relaxed);
        let last = (LAST_GENERATION << INDEX_BITS) | (a & INDEX_MASK);
        assert_eq!(value(&handles, last).expect("live"), 1);
        handles.remove("h", last, true).expect("live");
        let b = handles.insert(2);
        assert_ne!(b & INDEX_MASK, a & INDEX_MASK, "not handed out again");
        assert_eq!(code(value(&handles, last)), rp_result::InvalidHandle);
    }

    #[test]
    fn freeing_waits_for_a_call_running_on_another_thread() {
        let handles = Arc::new(Handles::new());
        let a = handles.insert(String::from("kept"));
        let started = Arc::new(AtomicBool::new(false));
        let running = {
            let (handles, started) = (Arc::clone(&handles), Arc::clone(&started));
            std::thread::spawn(move || {
                handles.with("h", a, |object| {
                    started.store(true, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(50));
                    Ok(object.clone())
                })
            })
        };
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let freed = handles.remove("h", a, true).expect("a is live");
        assert_eq!(freed.as_deref(), Some("kept"));
        let seen = running
            .join()
            .expect("no panic")
            .expect("the call finished");
        assert_eq!(seen, "kept");
        assert_eq!(code(value(&handles, a)), rp_result::InvalidHandle);
    }

    #[test]
    fn freeing_without_waiting_refuses_an_object_in_use() {
        let handles = Arc::new(Handles::new());
        let a = handles.insert(1_u32);
        let inside = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let running = {
            let (handles, inside, release) = (
                Arc::clone(&handles),
                Arc::clone(&inside),
                Arc::clone(&release),
            );
            std::thread::spawn(move || {
                handles.with("h", a, |_| {
                    inside.store(true, Ordering::SeqCst);
                    while !release.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    Ok(())
                })
            })
        };
        while !inside.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let refused = handles.remove("h", a, false).expect_err("in use");
        assert_eq!(refused.code(), rp_result::Conflict);
        assert!(
            refused.message().contains("in use"),
            "{}",
            refused.message()
        );
        release.store(true, Ordering::SeqCst);
        running.join().expect("no panic").expect("ran");
        assert_eq!(handles.remove("h", a, false).expect("free now"), Some(1));
    }

    #[test]
    fn the_published_number_is_read_without_waiting_and_follows_each_call() {
        let handles = Arc::new(Handles::new());
        let a = handles.insert(7_u32);
        assert_eq!(handles.published("h", a).expect("live"), 7);
        let inside = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let running = {
            let (handles, inside, release) = (
                Arc::clone(&handles),
                Arc::clone(&inside),
                Arc::clone(&release),
            );
            std::thread::spawn(move || {
                handles.with("h", a, |n| {
                    *n = 8;
                    inside.store(true, Ordering::SeqCst);
                    while !release.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    Ok(())
                })
            })
        };
        while !inside.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // The call holds the lock: the number is the one it found.
        assert_eq!(handles.published("h", a).expect("live"), 7);
        release.store(true, Ordering::SeqCst);
        running.join().expect("no panic").expect("ran");
        assert_eq!(handles.published("h", a).expect("live"), 8);
        handles.remove("h", a, true).expect("live");
        assert_eq!(code(handles.published("h", a)), rp_result::InvalidHandle);
        assert_eq!(code(handles.published("h", 0)), rp_result::NullArgument);
    }

    #[test]
    fn the_published_number_of_an_object_that_panicked_is_refused() {
        let handles = Handles::new();
        let a = handles.insert(1_u32);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handles.with("h", a, |_| -> Result<(), Error> { panic!("boom") })
        }));
        assert!(outcome.is_err());
        assert_eq!(code(handles.published("h", a)), rp_result::Panic);
    }

    #[test]
    fn calls_on_different_handles_run_in_parallel() {
        let handles = Arc::new(Handles::new());
        let a = handles.insert(0_u32);
        let b = handles.insert(0_u32);
        let inside = Arc::new(AtomicBool::new(false));
        let b_ran = Arc::new(AtomicBool::new(false));
        // A call on `a` that waits, holding `a`, for a call on `b` to run.
        let waiting = {
            let (handles, inside, b_ran) = (
                Arc::clone(&handles),
                Arc::clone(&inside),
                Arc::clone(&b_ran),
            );
            std::thread::spawn(move || {
                handles.with("h", a, |_| {
                    inside.store(true, Ordering::SeqCst);
                    let give_up = std::time::Instant::now() + Duration::from_secs(10);
                    while !b_ran.load(Ordering::SeqCst) && std::time::Instant::now() < give_up {
                        std::thread::yield_now();
                    }
                    Ok(b_ran.load(Ordering::SeqCst))
                })
            })
        };
        while !inside.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        handles
            .with("h", b, |n| {
                *n += 1;
                Ok(())
            })
            .expect("b is live");
        b_ran.store(true, Ordering::SeqCst);
        let saw_b = waiting.join().expect("no panic").expect("ran");
        assert!(saw_b, "the call on b ran while a was held");
    }
}
