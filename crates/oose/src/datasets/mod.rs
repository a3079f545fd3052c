//! Deterministic synthetic manifolds (maths §10).
//!
//! Each generator returns the points (rows of an n×3 matrix; n×2 for the circle) and the intrinsic
//! parameter `t` of each point, so that embeddings can be checked against it.
//! u, v ~ U[0, 1), ξ ~ N(0, I₃) from [`Rng`] seeded with `seed`;
//! `noise` multiplies ξ.

use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::validate;
use faer::Mat;
use std::f64::consts::PI;

/// A generated data set: points and their intrinsic parameter.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// n×3 points, one per row.
    pub points: Mat<f64>,
    /// The intrinsic coordinate `t` of each point (the roll angle, the S parameter, the
    /// curve parameter; the cluster index for `three_d_clusters`, fractional on bridges).
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

/// Wittman's punctured sphere, deterministic (maths §10): the n points of the square
/// grid with step 9/√n on [−5, 5]² closest to the origin (ties by grid order), mapped by
/// the inverse stereographic map Y ↦ (aY₁, aY₂, 2·height·(1 − a)), a = 4/(4 + ||Y||²).
/// `t` is ||Y|| (the polar radius on the plane).
pub fn punched_sphere(n: usize, height: f64) -> Dataset {
    let step = 9.0 / (n.max(1) as f64).sqrt();
    let per = (10.0 / step).floor() as usize + 1;
    let mut grid: Vec<(f64, f64, f64)> = Vec::with_capacity(per * per);
    for i in 0..per {
        for j in 0..per {
            let (a, b) = (-5.0 + i as f64 * step, -5.0 + j as f64 * step);
            grid.push((a * a + b * b, a, b));
        }
    }
    assert!(
        grid.len() >= n,
        "the grid has {} points, fewer than n = {n}",
        grid.len()
    );
    grid.sort_by(|p, q| p.0.total_cmp(&q.0));
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut t = Vec::with_capacity(n);
    for (i, &(r2, a, b)) in grid.iter().take(n).enumerate() {
        let s = 4.0 / (4.0 + r2);
        points[(i, 0)] = s * a;
        points[(i, 1)] = s * b;
        points[(i, 2)] = 2.0 * height * (1.0 - s);
        t.push(r2.sqrt());
    }
    Dataset { points, t }
}

/// Wittman's 3D clusters (maths §10): `clusters` centres 10·U³; 9 bridge points on each
/// segment between consecutive centres (t = 0.1..0.9); the remaining points split
/// evenly among the clusters (the first ones take the remainder) as centre + 0.5·ξ.
/// `t` is the cluster index, i + s on the bridge from centre i at fraction s.
pub fn three_d_clusters(n: usize, clusters: usize, seed: u64) -> Dataset {
    assert!(clusters >= 1, "need at least one cluster");
    let bridges = 9 * (clusters - 1);
    assert!(
        n >= bridges + clusters,
        "n = {n} is too small for {clusters} clusters and their bridges"
    );
    let mut rng = Rng::new(seed);
    let centres: Vec<[f64; 3]> = (0..clusters)
        .map(|_| {
            [
                10.0 * rng.uniform(),
                10.0 * rng.uniform(),
                10.0 * rng.uniform(),
            ]
        })
        .collect();
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut t = Vec::with_capacity(n);
    let mut row = 0;
    let rest = n - bridges;
    for (c, centre) in centres.iter().enumerate() {
        let count = rest / clusters + usize::from(c < rest % clusters);
        for _ in 0..count {
            for j in 0..3 {
                points[(row, j)] = centre[j] + 0.5 * rng.normal();
            }
            t.push(c as f64);
            row += 1;
        }
    }
    for c in 0..clusters.saturating_sub(1) {
        for s in 1..=9 {
            let f = s as f64 / 10.0;
            for j in 0..3 {
                points[(row, j)] = centres[c][j] + f * (centres[c + 1][j] - centres[c][j]);
            }
            t.push(c as f64 + f);
            row += 1;
        }
    }
    Dataset { points, t }
}

fn curve(n: usize, f: impl Fn(f64) -> [f64; 3]) -> Dataset {
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut ts = Vec::with_capacity(n);
    for k in 0..n {
        let t = 2.0 * PI * k as f64 / n as f64;
        let p = f(t);
        for j in 0..3 {
            points[(k, j)] = p[j];
        }
        ts.push(t);
    }
    Dataset { points, t: ts }
}

/// Helix on a torus (maths §10): t = 2πk/n, ((2 + cos 8t) cos t, (2 + cos 8t) sin t, sin 8t).
pub fn helix(n: usize) -> Dataset {
    curve(n, |t| {
        let r = 2.0 + (8.0 * t).cos();
        [r * t.cos(), r * t.sin(), (8.0 * t).sin()]
    })
}

/// Trefoil knot (maths §10): t = 2πk/n, (sin t + 2 sin 2t, cos t − 2 cos 2t, −sin 3t).
pub fn trefoil(n: usize) -> Dataset {
    curve(n, |t| {
        [
            t.sin() + 2.0 * (2.0 * t).sin(),
            t.cos() - 2.0 * (2.0 * t).cos(),
            -(3.0 * t).sin(),
        ]
    })
}

/// Twin peaks (maths §10): (x, y) ~ U[−1, 1]², (x, y, 10 sin(πx) tanh(3y)); `t` = x.
pub fn twin_peaks(n: usize, seed: u64) -> Dataset {
    let mut rng = Rng::new(seed);
    let mut points = Mat::<f64>::zeros(n, 3);
    let mut ts = Vec::with_capacity(n);
    for i in 0..n {
        let x = 2.0 * rng.uniform() - 1.0;
        let y = 2.0 * rng.uniform() - 1.0;
        points[(i, 0)] = x;
        points[(i, 1)] = y;
        points[(i, 2)] = 10.0 * (PI * x).sin() * (3.0 * y).tanh();
        ts.push(x);
    }
    Dataset { points, t: ts }
}

/// The unit circle S¹ with uniformly random angles θ ∈ [0, 2π) (n×2; `t` = θ). Its
/// Laplace–Beltrami spectrum is 0, 1, 1, 4, 4, 9, 9, … with eigenfunctions cos kθ,
/// sin kθ: a spectral-convergence test.
pub fn circle_s1(n: usize, seed: u64) -> Dataset {
    let mut rng = Rng::new(seed);
    let mut points = Mat::<f64>::zeros(n, 2);
    let mut ts = Vec::with_capacity(n);
    for i in 0..n {
        let th = 2.0 * PI * rng.uniform();
        points[(i, 0)] = th.cos();
        points[(i, 1)] = th.sin();
        ts.push(th);
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

/// The data sets by name, as the CLI (`oose dataset`, kebab case) and Python
/// (`oose.datasets`, snake case) spell them: `swiss_roll`, `swiss_roll_hole`, `s_curve`,
/// `punched_sphere`, `three_d_clusters`, `helix`, `trefoil`, `twin_peaks`, `circle_s1`.
/// `noise` applies to the Swiss rolls and the S-curve only (the others are exact or have
/// their spread fixed); a non-zero `noise` elsewhere is an error, not ignored.
///
/// ```
/// let d = oose::datasets::by_name("s-curve", 50, 0.1, 3).unwrap();
/// assert_eq!(d.points, oose::datasets::s_curve(50, 0.1, 3).points);
/// assert!(oose::datasets::by_name("helix", 50, 0.1, 0).is_err());
/// ```
pub fn by_name(name: &str, n: usize, noise: f64, seed: u64) -> Result<Dataset> {
    validate::at_least_one("n", n)?;
    if !(noise >= 0.0 && noise.is_finite()) {
        return Err(Error::param(
            "noise",
            format!("must be finite and >= 0, got {noise}"),
        ));
    }
    // Refused with its size, not aborted on (n = 2⁴⁰ asks for 24 TiB).
    crate::linalg::memory::plan("data set (n×3)", 1, n, 3)?;
    let name = name.replace('-', "_");
    let noisy = matches!(name.as_str(), "swiss_roll" | "swiss_roll_hole" | "s_curve");
    if noise != 0.0 && !noisy {
        return Err(Error::param(
            "noise",
            format!("does not apply to {name} (exact, or its spread is fixed)"),
        ));
    }
    Ok(match name.as_str() {
        "swiss_roll" => swiss_roll(n, noise, false, seed),
        "swiss_roll_hole" => swiss_roll(n, noise, true, seed),
        "s_curve" => s_curve(n, noise, seed),
        "punched_sphere" => punched_sphere(n, 1.0),
        "three_d_clusters" => {
            crate::validate::enough_points("n", "three_d_clusters", n, 21)?;
            three_d_clusters(n, 3, seed)
        }
        "helix" => helix(n),
        "trefoil" => trefoil(n),
        "twin_peaks" => twin_peaks(n, seed),
        "circle_s1" => circle_s1(n, seed),
        _ => {
            return Err(Error::param(
                "name",
                format!(
                    "unknown data set {name:?} (swiss_roll, swiss_roll_hole, s_curve, \
                     punched_sphere, three_d_clusters, helix, trefoil, twin_peaks, circle_s1)"
                ),
            ))
        }
    })
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
    fn punched_sphere_lies_on_the_sphere() {
        let d = punched_sphere(1000, 1.0);
        assert_eq!(d.points.nrows(), 1000);
        // (x, y, z) with a = 4/(4 + r²) lies on the sphere x² + y² + (z − 1)² = 1.
        for i in 0..1000 {
            let (x, y, z) = (d.points[(i, 0)], d.points[(i, 1)], d.points[(i, 2)]);
            assert!((x * x + y * y + (z - 1.0) * (z - 1.0) - 1.0).abs() < 1e-12);
            assert!(d.t[i] <= 5.0 * 2f64.sqrt() + 1e-12);
        }
        // The n closest grid points: radii non-decreasing.
        assert!(d.t.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn three_d_clusters_counts_and_bridges() {
        let d = three_d_clusters(100, 3, 4);
        assert_eq!(d.points.nrows(), 100);
        let bridges = d.t.iter().filter(|t| t.fract() != 0.0).count();
        assert_eq!(bridges, 18);
        let in_first = d.t.iter().filter(|&&t| t == 0.0).count();
        assert_eq!(in_first, 28); // (100 − 18) = 82 = 28 + 27 + 27
    }

    #[test]
    fn curves_match_their_formulas() {
        let h = helix(64);
        let t = h.t[5];
        assert!((h.points[(5, 2)] - (8.0 * t).sin()).abs() < 1e-12);
        let k = trefoil(64);
        let t = k.t[7];
        assert!((k.points[(7, 0)] - (t.sin() + 2.0 * (2.0 * t).sin())).abs() < 1e-12);
        let p = twin_peaks(50, 1);
        for i in 0..50 {
            let (x, y) = (p.points[(i, 0)], p.points[(i, 1)]);
            assert!((p.points[(i, 2)] - 10.0 * (PI * x).sin() * (3.0 * y).tanh()).abs() < 1e-12);
        }
        let c = circle_s1(100, 2);
        for i in 0..100 {
            let r = c.points[(i, 0)].hypot(c.points[(i, 1)]);
            assert!((r - 1.0).abs() < 1e-15);
        }
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
