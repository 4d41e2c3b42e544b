//! Semantic recall: vectors the host computes for memories and queries (no model runs in the
//! core), compared by cosine similarity.

pub use crate::model::{MAX_EMBEDDING_DIMENSIONS, check_embedding};

/// Cosine similarity of two vectors, in [-1, 1]; 0 when their lengths differ (vectors from
/// different models are not comparable).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_known_vectors() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-12);
        assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-12);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn bad_vectors_are_refused() {
        assert!(check_embedding(&[]).is_err());
        assert!(check_embedding(&[0.0, 0.0]).is_err());
        assert!(check_embedding(&[1.0, f32::NAN]).is_err());
        assert!(check_embedding(&vec![1.0; MAX_EMBEDDING_DIMENSIONS + 1]).is_err());
        assert!(check_embedding(&[0.5, -0.5]).is_ok());
    }
}
