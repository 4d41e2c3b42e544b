//! Piecewise-linear functions of host time: every drive term is one between recorded changes,
//! so their weighted sum is one too, and the first time it reaches a threshold is solved, not
//! searched by stepping.

/// A piecewise-linear function on `[start, ∞)`: linear between knots, constant after the last.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ramp {
    /// Knots `(t, value)`, `t` strictly increasing; at least one.
    knots: Vec<(f64, f64)>,
}

impl Ramp {
    /// The constant `v` from `start`.
    pub fn constant(start: f64, v: f64) -> Ramp {
        Ramp {
            knots: vec![(start, v)],
        }
    }

    /// From `start`: `v0` until `t0`, then linear to `v1` at `t1`, then `v1`.
    pub fn segment(start: f64, t0: f64, v0: f64, t1: f64, v1: f64) -> Ramp {
        // A slope too steep to tell its ends apart (a huge rate) rises within a millisecond.
        let t1 = t1.max(t0 + 1.0);
        let mut r = Ramp::constant(start, v0);
        if t1 <= start {
            return Ramp::constant(start, v1);
        }
        if t0 > start {
            r.knots.push((t0, v0));
        } else {
            // Start inside the slope.
            let f = if t1 > t0 {
                (start - t0) / (t1 - t0)
            } else {
                1.0
            };
            r.knots[0].1 = v0 + (v1 - v0) * f;
        }
        r.knots.push((t1, v1));
        r
    }

    pub fn start(&self) -> f64 {
        self.knots[0].0
    }

    /// The value at `t` (≥ start).
    pub fn at(&self, t: f64) -> f64 {
        let k = &self.knots;
        match k.iter().position(|(x, _)| *x > t) {
            None => k[k.len() - 1].1,
            Some(0) => k[0].1,
            Some(i) => {
                let (t0, v0) = k[i - 1];
                let (t1, v1) = k[i];
                v0 + (v1 - v0) * (t - t0) / (t1 - t0)
            }
        }
    }

    fn knot_times<'a>(&'a self, other: &'a Ramp) -> Vec<f64> {
        let start = self.start().max(other.start());
        let mut ts: Vec<f64> = self
            .knots
            .iter()
            .chain(&other.knots)
            .map(|(t, _)| *t)
            .filter(|t| *t >= start)
            .chain([start])
            .collect();
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        ts
    }

    /// `a × self + b × other`.
    pub fn add_scaled(&self, a: f64, other: &Ramp, b: f64) -> Ramp {
        let knots = self
            .knot_times(other)
            .into_iter()
            .map(|t| (t, a * self.at(t) + b * other.at(t)))
            .collect();
        Ramp { knots }
    }

    /// The smaller of the two at every time (knots added where they cross).
    pub fn min(&self, other: &Ramp) -> Ramp {
        let ts = self.knot_times(other);
        let mut knots: Vec<(f64, f64)> = Vec::with_capacity(ts.len() * 2);
        for (i, t) in ts.iter().enumerate() {
            if i > 0 {
                let t0 = ts[i - 1];
                let d0 = self.at(t0) - other.at(t0);
                let d1 = self.at(*t) - other.at(*t);
                if d0 * d1 < 0.0 {
                    let tc = t0 + (t - t0) * d0 / (d0 - d1);
                    if tc > t0 && tc < *t {
                        knots.push((tc, self.at(tc).min(other.at(tc))));
                    }
                }
            }
            knots.push((*t, self.at(*t).min(other.at(*t))));
        }
        Ramp { knots }
    }

    /// The first time ≥ `from` at which the value is at least `level`, if any.
    pub fn first_at_least(&self, level: f64, from: f64) -> Option<f64> {
        let from = from.max(self.start());
        if self.at(from) >= level {
            return Some(from);
        }
        let k = &self.knots;
        for i in 0..k.len() {
            let (t1, v1) = k[i];
            if t1 <= from {
                continue;
            }
            let (t0, v0) = if i == 0 || k[i - 1].0 < from {
                (from, self.at(from))
            } else {
                k[i - 1]
            };
            if v1 >= level {
                // Linear from (t0, v0) below the level to (t1, v1) at or above it.
                let f = (level - v0) / (v1 - v0);
                return Some(t0 + (t1 - t0) * f.clamp(0.0, 1.0));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segments_sums_and_minimums() {
        let a = Ramp::segment(0.0, 10.0, 0.0, 20.0, 1.0);
        assert_eq!(a.at(5.0), 0.0);
        assert!((a.at(15.0) - 0.5).abs() < 1e-12);
        assert_eq!(a.at(99.0), 1.0);
        let b = Ramp::constant(0.0, 0.4);
        let m = a.min(&b);
        assert!((m.at(15.0) - 0.4).abs() < 1e-12);
        assert!((m.at(12.0) - 0.2).abs() < 1e-12);
        let s = a.add_scaled(0.5, &b, 1.0);
        assert!((s.first_at_least(0.8, 0.0).unwrap() - 18.0).abs() < 1e-9);
        assert_eq!(s.first_at_least(2.0, 0.0), None);
        // Starting inside the slope.
        let c = Ramp::segment(15.0, 10.0, 0.0, 20.0, 1.0);
        assert!((c.at(15.0) - 0.5).abs() < 1e-12);
        // A slope with no width (a rate too large for the clock's resolution) is still a
        // function: no division by zero, the level reached a millisecond later.
        let t = 1.7e12;
        let steep = Ramp::segment(0.0, t, 0.0, t, 1.0);
        assert!(steep.at(t + 0.5).is_finite());
        assert_eq!(steep.first_at_least(1.0, 0.0), Some(t + 1.0));
    }

    proptest! {
        /// The crossing found is a crossing, and nothing before it (sampled) crosses.
        #[test]
        fn first_crossing_is_first(
            t0 in 0.0..100.0f64, d0 in 0.1..100.0f64, v1 in 0.0..2.0f64,
            u0 in 0.0..100.0f64, e0 in 0.1..100.0f64, w1 in 0.0..2.0f64,
            level in 0.0..2.0f64,
        ) {
            let a = Ramp::segment(0.0, t0, 0.0, t0 + d0, v1);
            let b = Ramp::segment(0.0, u0, 1.0, u0 + e0, w1);
            let f = a.add_scaled(0.7, &a.min(&b), 0.6);
            match f.first_at_least(level, 0.0) {
                Some(t) => {
                    prop_assert!(f.at(t) >= level - 1e-9);
                    for i in 0..200 {
                        let x = t * f64::from(i) / 200.0;
                        prop_assert!(f.at(x) < level + 1e-9);
                    }
                }
                None => {
                    for i in 0..400 {
                        prop_assert!(f.at(f64::from(i)) < level);
                    }
                }
            }
        }
    }
}
