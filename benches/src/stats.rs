//! Statistics and reporting: latency percentiles, timing, CPU time, load, the report lines.

use std::path::Path;
use std::time::{Duration, Instant};

/// Latency percentiles of a set of samples.
#[derive(Clone, Copy, Debug)]
pub struct Latency {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Mean.
    pub mean: Duration,
    /// Worst.
    pub max: Duration,
}

impl Latency {
    /// The percentiles of `samples` (nearest-rank).
    pub fn of(samples: &[Duration]) -> Latency {
        assert!(!samples.is_empty());
        let mut s = samples.to_vec();
        s.sort_unstable();
        let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        Latency {
            n: s.len(),
            p50: rank(0.50),
            p99: rank(0.99),
            mean: s.iter().sum::<Duration>() / s.len() as u32,
            max: s[s.len() - 1],
        }
    }
}

/// Milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Times `f` once.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// CPU time consumed so far by the calling thread. On a shared machine the wall clock also
/// counts time spent waiting for a core; this does not.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock and thread CPU time of one measurement.
#[derive(Clone, Copy, Debug, Default)]
pub struct Elapsed {
    /// Wall clock.
    pub wall: Duration,
    /// CPU time of the measuring thread.
    pub cpu: Duration,
}

/// A running measurement of wall and CPU time.
pub struct Stopwatch {
    wall: Instant,
    cpu: Duration,
}

impl Stopwatch {
    /// Starts measuring.
    pub fn start() -> Stopwatch {
        Stopwatch {
            cpu: thread_cpu(),
            wall: Instant::now(),
        }
    }

    /// The time since [`Stopwatch::start`].
    pub fn stop(&self) -> Elapsed {
        let wall = self.wall.elapsed();
        Elapsed {
            wall,
            cpu: thread_cpu().saturating_sub(self.cpu),
        }
    }
}

/// The machine's load averages (1, 5, 15 minutes), to print beside the figures.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Prints one result line, prefixed so it is easy to grep from the bench output.
pub fn report(line: impl AsRef<str>) {
    println!("RESULT {}", line.as_ref());
}

/// Size of a file in bytes.
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_percentiles() {
        let s: Vec<_> = (1..=100).map(Duration::from_millis).collect();
        let l = Latency::of(&s);
        assert_eq!(l.p50, Duration::from_millis(50));
        assert_eq!(l.p99, Duration::from_millis(99));
        assert_eq!(l.max, Duration::from_millis(100));
    }
}
