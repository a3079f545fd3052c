//! Deterministic synthetic manifolds (SPEC §10).
//!
//! Each generator returns the points (rows of an n×3 matrix) and the intrinsic
//! parameter `t` of each point, so that embeddings can be checked against it.
//! u, v ~ U[0, 1), ξ ~ N(0, I₃) from [`Rng`](crate::rng::Rng) seeded with `seed`;
//! `noise` multiplies ξ.

use crate::rng::Rng;
use faer::Mat;
use std::f64::consts::PI;

/// A generated data set: points and their intrinsic parameter.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// n×3 points, one per row.
    pub points: Mat<f64>,
    /// The intrinsic coordinate `t` of each point (the roll angle, the S parameter).
    pub t: Vec<f64>,
}

/// scikit-learn's Swiss roll: t = 1.5π(1 + 2u), h = 21v, (t cos t, h, t sin t) + noise·ξ.
///
/// With `hole`, points whose (t, h) fall in the centre block of the 3×3 grid of blocks
/// with corners (π(1.5 + i), 7j) are rejected and redrawn.
///
/// ```
/// let d = oose::datasets::swiss_roll(100, 0.0, false, 0);
/// assert_eq!(d.points.nrows(), 100);
/// let (x, z, t) = (d.points[(0, 0)], d.points[(0, 2)], d.t[0]);
/// assert!((x - t * t.cos()).abs() < 1e-12 && (z - t * t.sin()).abs() < 1e-12);
/// ```
pub fn swiss_roll(n: usize, noise: f64, hole: bool, seed: u64) -> Dataset {
    let mut rng = Rng::new(seed);
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut ts = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let u = rng.uniform();
        let v = rng.uniform();
        let t = 1.5 * PI * (1.0 + 2.0 * u);
        let h = 21.0 * v;
        if hole {
            let in_t = (PI * 2.5..PI * 3.5).contains(&t);
            let in_h = (7.0..14.0).contains(&h);
            if in_t && in_h {
                continue;
            }
        }
        let xi = [rng.normal(), rng.normal(), rng.normal()];
        points[(i, 0)] = t * t.cos() + noise * xi[0];
        points[(i, 1)] = h + noise * xi[1];
        points[(i, 2)] = t * t.sin() + noise * xi[2];
        ts.push(t);
        i += 1;
    }
    Dataset { points, t: ts }
}

/// scikit-learn's S-curve: t = 3π(u − ½), (sin t, 2v, sign(t)(cos t − 1)) + noise·ξ.
pub fn s_curve(n: usize, noise: f64, seed: u64) -> Dataset {
    let mut rng = Rng::new(seed);
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut ts = Vec::with_capacity(n);
    for i in 0..n {
        let u = rng.uniform();
        let v = rng.uniform();
        let t = 3.0 * PI * (u - 0.5);
        let xi = [rng.normal(), rng.normal(), rng.normal()];
        points[(i, 0)] = t.sin() + noise * xi[0];
        points[(i, 1)] = 2.0 * v + noise * xi[1];
        points[(i, 2)] = t.signum() * (t.cos() - 1.0) + noise * xi[2];
        ts.push(t);
    }
    Dataset { points, t: ts }
}

/// Splits the rows of `x` into a training part and a held-out part: `holdout` is the
/// fraction held out (rounded to the nearest count), chosen by a seeded shuffle.
/// Returns (training rows, held-out rows), each in increasing index order.
pub fn split_indices(n: usize, holdout: f64, seed: u64) -> (Vec<usize>, Vec<usize>) {
    let m = ((n as f64) * holdout.clamp(0.0, 1.0)).round() as usize;
    let held = Rng::new(seed).sample_indices(n, m);
    let mut is_held = vec![false; n];
    for &i in &held {
        is_held[i] = true;
    }
    let train = (0..n).filter(|&i| !is_held[i]).collect();
    (train, held)
}

/// The rows `idx` of `x`, in that order.
pub fn select_rows(x: faer::MatRef<'_, f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |i, j| x[(idx[i], j)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swiss_roll_matches_definition_without_noise() {
        let d = swiss_roll(500, 0.0, false, 1);
        for i in 0..500 {
            let t = d.t[i];
            assert!((1.5 * PI..4.5 * PI).contains(&t));
            assert!((d.points[(i, 0)] - t * t.cos()).abs() < 1e-12);
            assert!((d.points[(i, 2)] - t * t.sin()).abs() < 1e-12);
            assert!((0.0..21.0).contains(&d.points[(i, 1)]));
        }
    }

    #[test]
    fn swiss_roll_hole_is_empty() {
        let d = swiss_roll(2000, 0.0, true, 2);
        for i in 0..2000 {
            let t = d.t[i];
            let h = d.points[(i, 1)];
            assert!(!((2.5 * PI..3.5 * PI).contains(&t) && (7.0..14.0).contains(&h)));
        }
    }

    #[test]
    fn s_curve_matches_definition() {
        let d = s_curve(300, 0.0, 3);
        for i in 0..300 {
            let t = d.t[i];
            assert!((d.points[(i, 0)] - t.sin()).abs() < 1e-12);
            assert!((d.points[(i, 2)] - t.signum() * (t.cos() - 1.0)).abs() < 1e-12);
            assert!((0.0..2.0).contains(&d.points[(i, 1)]));
        }
    }

    #[test]
    fn deterministic_and_noise_scales() {
        let a = swiss_roll(50, 0.1, false, 9);
        let b = swiss_roll(50, 0.1, false, 9);
        assert_eq!(a.points, b.points);
        let c = swiss_roll(50, 0.0, false, 9);
        let dev: f64 = (0..50)
            .map(|i| (a.points[(i, 1)] - c.points[(i, 1)]).abs())
            .fold(0.0, f64::max);
        assert!(dev > 0.0 && dev < 0.6);
    }

    #[test]
    fn split_is_a_partition() {
        let (tr, ho) = split_indices(2000, 0.1, 5);
        assert_eq!(ho.len(), 200);
        assert_eq!(tr.len(), 1800);
        let mut all: Vec<usize> = tr.iter().chain(&ho).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..2000).collect::<Vec<_>>());
    }
}
