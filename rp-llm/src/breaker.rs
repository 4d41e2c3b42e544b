//! The circuit breaker, and the clock it and the retry backoff run on.
//!
//! A breaker counts failed calls in a row (a call is one `generate` or `embed` with all its
//! retries; only failures of the server count, see [`crate::Error::is_retryable`] and the
//! crate docs). At the threshold it opens: calls fail at once with
//! [`crate::Error::CircuitOpen`] for the cool-down. Then it half-opens: the next call goes
//! through as a trial, and the calls made meanwhile fail fast. A trial that succeeds closes
//! it; one that fails opens it again for another cool-down.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time as the breaker and the backoff see it. [`SystemClock`] is the real one;
/// [`ManualClock`] lets a test move time on without waiting. Socket timeouts always run on
/// real time.
pub trait Clock: Send + Sync {
    /// Now.
    fn now(&self) -> Instant;
    /// Waits `d` (a backoff between two attempts).
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
    }
}

/// A clock that moves only when told: [`ManualClock::advance`], or a `sleep`, which returns
/// at once after moving the clock on by what it was asked to wait. For tests.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
    slept: Mutex<Vec<Duration>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl ManualClock {
    /// A clock standing at the moment it is made.
    pub fn new() -> ManualClock {
        ManualClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
            slept: Mutex::new(Vec::new()),
        }
    }

    /// Moves the clock on by `d`.
    pub fn advance(&self, d: Duration) {
        *lock(&self.elapsed) += d;
    }

    /// Every wait asked of [`Clock::sleep`] so far, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        lock(&self.slept).clone()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + *lock(&self.elapsed)
    }

    fn sleep(&self, d: Duration) {
        lock(&self.slept).push(d);
        self.advance(d);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a circuit breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go through; `failures` failed in a row so far.
    Closed {
        /// Failed calls in a row.
        failures: u32,
    },
    /// Calls fail fast for `retry_in` more.
    Open {
        /// Until the next trial call is allowed.
        retry_in: Duration,
    },
    /// The cool-down is over: the next call is a trial (or one is under way).
    HalfOpen,
}

#[derive(Debug)]
enum Inner {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// The cool-down is over and a trial call is under way.
    Trial,
}

/// The breaker's state machine. Every call that [`Breaker::admit`]s must end with
/// [`Breaker::record`].
#[derive(Debug)]
pub(crate) struct Breaker {
    threshold: u32,
    cooldown: Duration,
    inner: Mutex<Inner>,
}

/// Why a call was not admitted.
pub(crate) struct Refused {
    pub retry_in: Duration,
}

impl Breaker {
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker {
            threshold,
            cooldown,
            inner: Mutex::new(Inner::Closed { failures: 0 }),
        }
    }

    pub(crate) fn threshold(&self) -> u32 {
        self.threshold
    }

    /// Whether a call may go through now.
    pub(crate) fn admit(&self, now: Instant) -> Result<(), Refused> {
        if self.threshold == 0 {
            return Ok(());
        }
        let mut inner = lock(&self.inner);
        match *inner {
            Inner::Closed { .. } => Ok(()),
            Inner::Open { until } if now >= until => {
                *inner = Inner::Trial;
                Ok(())
            }
            Inner::Open { until } => Err(Refused {
                retry_in: until - now,
            }),
            Inner::Trial => Err(Refused {
                retry_in: Duration::ZERO,
            }),
        }
    }

    /// The outcome of an admitted call: `server_ok` unless the server failed.
    pub(crate) fn record(&self, server_ok: bool, now: Instant) {
        if self.threshold == 0 {
            return;
        }
        let mut inner = lock(&self.inner);
        *inner = match (&*inner, server_ok) {
            (_, true) => Inner::Closed { failures: 0 },
            (Inner::Closed { failures }, false) if failures + 1 < self.threshold => Inner::Closed {
                failures: failures + 1,
            },
            // The threshold reached, a failed trial, or a call admitted before the breaker
            // opened that fails after: (re)open from now.
            _ => Inner::Open {
                until: now + self.cooldown,
            },
        };
    }

    pub(crate) fn state(&self, now: Instant) -> BreakerState {
        if self.threshold == 0 {
            return BreakerState::Closed { failures: 0 };
        }
        match *lock(&self.inner) {
            Inner::Closed { failures } => BreakerState::Closed { failures },
            Inner::Open { until } if now < until => BreakerState::Open {
                retry_in: until - now,
            },
            Inner::Open { .. } | Inner::Trial => BreakerState::HalfOpen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_failures_open_a_trial_half_opens_and_success_closes() {
        let clock = ManualClock::new();
        let b = Breaker::new(3, Duration::from_secs(30));
        for i in 0..3 {
            assert!(b.admit(clock.now()).is_ok(), "call {i}");
            b.record(false, clock.now());
        }
        assert!(matches!(b.state(clock.now()), BreakerState::Open { .. }));
        let refused = b.admit(clock.now()).err().unwrap();
        assert_eq!(refused.retry_in, Duration::from_secs(30));
        clock.advance(Duration::from_secs(29));
        assert!(b.admit(clock.now()).is_err());
        clock.advance(Duration::from_secs(1));
        assert_eq!(b.state(clock.now()), BreakerState::HalfOpen);
        // One trial at a time.
        assert!(b.admit(clock.now()).is_ok());
        assert_eq!(b.admit(clock.now()).err().unwrap().retry_in, Duration::ZERO);
        // The trial fails: open for another cool-down.
        b.record(false, clock.now());
        assert!(b.admit(clock.now()).is_err());
        clock.advance(Duration::from_secs(30));
        assert!(b.admit(clock.now()).is_ok());
        b.record(true, clock.now());
        assert_eq!(b.state(clock.now()), BreakerState::Closed { failures: 0 });
    }

    #[test]
    fn a_success_resets_the_count_and_zero_turns_the_breaker_off() {
        let now = Instant::now();
        let b = Breaker::new(3, Duration::from_secs(30));
        for ok in [false, false, true, false, false] {
            b.admit(now).ok().unwrap();
            b.record(ok, now);
        }
        assert_eq!(b.state(now), BreakerState::Closed { failures: 2 });
        let off = Breaker::new(0, Duration::from_secs(30));
        for _ in 0..10 {
            off.admit(now).ok().unwrap();
            off.record(false, now);
        }
        assert_eq!(off.state(now), BreakerState::Closed { failures: 0 });
    }

    #[test]
    fn the_manual_clock_records_sleeps_and_moves_on() {
        let c = ManualClock::new();
        let t0 = c.now();
        c.sleep(Duration::from_millis(250));
        c.advance(Duration::from_millis(50));
        assert_eq!(c.now() - t0, Duration::from_millis(300));
        assert_eq!(c.sleeps(), vec![Duration::from_millis(250)]);
    }
}
