//! How a memory fades (docs/memory.md): retention as a function of host time, the stability
//! that sets its curve, and how a recall reinforces it. Pure arithmetic; the rules that apply
//! it live in [`crate::log`] and the decay pass.
//!
//! The curve is FSRS's power law, `R(t) = (1 + 19/81 · t/S)^−0.5`, with `R = 0.9` at `t = S`;
//! a recall raises `S` by FSRS-5's stability increase for a successful review, with the
//! difficulty held at the scale's middle. docs/memory.md says why this form and not
//! MemoryBank's exponential.

/// Milliseconds in a day of host time.
pub const DAY_MS: f64 = 86_400_000.0;

/// FSRS's factor: `19/81`, so that `R(S) = 0.9`.
const FACTOR: f64 = 19.0 / 81.0;

/// FSRS-5's default weights for the stability increase of a successful review (`w8`, `w9`,
/// `w10`), and the difficulty it is read at (FSRS's scale is 1–10).
const W8: f64 = 1.545_75;
const W9: f64 = 0.119_2;
const W10: f64 = 1.019_25;
const DIFFICULTY: f64 = 5.0;

/// Retention after `elapsed_ms` of host time since the last review, for a memory of stability
/// `stability_ms`: 1 at once, 0.9 after one stability, falling as a power law (never 0).
pub fn retention(elapsed_ms: f64, stability_ms: f64) -> f64 {
    let t = elapsed_ms.max(0.0);
    let s = stability_ms.max(1.0);
    (1.0 / (1.0 + FACTOR * t / s).sqrt()).clamp(0.0, 1.0)
}

/// The host time after the last review at which retention falls to `r` (in (0, 1)); `None`
/// for an `r` it never falls to (≥ 1, or ≤ 0).
pub fn time_to(r: f64, stability_ms: f64) -> Option<f64> {
    if !(r > 0.0 && r < 1.0) {
        return None;
    }
    Some(stability_ms.max(1.0) / FACTOR * (r.powi(-2) - 1.0))
}

/// The stability a memory starts with: `base_ms` at significance 0.5, four times less at 0 and
/// four times more at 1 (significance makes a memory last).
pub fn initial_stability(base_ms: f64, significance: f64) -> f64 {
    base_ms * 4f64.powf(2.0 * significance.clamp(0.0, 1.0) - 1.0)
}

/// The stability after a recall at retention `r` (FSRS-5, a successful review): the lower the
/// retention when recalled, the more it grows; a memory recalled again at once (r ≈ 1) barely
/// gains (the spacing effect), so recalling it in every prompt of a scene does not make it
/// permanent.
pub fn reinforced(stability_ms: f64, r: f64) -> f64 {
    let s = stability_ms.max(1.0);
    let days = s / DAY_MS;
    let gain = W8.exp()
        * (11.0 - DIFFICULTY)
        * days.powf(-W9)
        * ((W10 * (1.0 - r.clamp(0.0, 1.0))).exp() - 1.0);
    s * (1.0 + gain.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_is_point_nine_after_one_stability() {
        assert!((retention(DAY_MS, DAY_MS) - 0.9).abs() < 1e-12);
        assert_eq!(retention(0.0, DAY_MS), 1.0);
        let t = time_to(0.5, DAY_MS).unwrap();
        assert!((retention(t, DAY_MS) - 0.5).abs() < 1e-12);
        assert_eq!(time_to(1.0, DAY_MS), None);
    }

    #[test]
    fn an_immediate_recall_barely_reinforces() {
        let s = DAY_MS;
        assert!(reinforced(s, 0.999) < 1.05 * s);
        assert!(reinforced(s, 0.9) > 3.0 * s);
        assert!(reinforced(s, 0.5) > reinforced(s, 0.9));
    }
}
