//! UMAP's fuzzy simplicial set (maths §13): each point's ρ and σ, the directed
//! memberships v_{j|i}, their fuzzy union, and the curve φ(r) = 1 / (1 + a r^{2b}) fitted
//! to min_dist and spread.

use crate::kernel::fast_exp::exp_scaled;
use crate::linalg::binary_unit;
use crate::linalg::sparse::SymCsr;
use rayon::prelude::*;

/// Bisection steps for σ at most.
const BISECTION_STEPS: usize = 64;
/// The bisection stops when Σ v is this close to its target.
const TOLERANCE: f64 = 1e-5;
/// σ is at least this fraction of the point's mean neighbour distance.
const MIN_SCALE: f64 = 1e-3;
/// Rows whose largest d − ρ lies within 2^±REACH are bisected as umap-learn does: σ is
/// then reached in at most about 34 of the 64 steps, the rest refine it.
const REACH: i32 = 24;

/// ρ (the distance to the nearest neighbour at a non-zero distance; 0 when every
/// neighbour coincides with the point) and σ of one point from its distances `dist` to
/// its neighbours (itself excluded), so that Σⱼ exp(−max(0, dⱼ − ρ)/σ) = `target`.
///
/// σ is bounded below by 1e-3 times the point's mean neighbour distance (`k` counting the
/// point itself, as umap-learn averages over its own zero distance), or, when ρ = 0, by
/// 1e-3 times `mean_all` (the mean over all points).
///
/// umap-learn's bisection starts at σ = 1 and counts the steps that bracket σ among its
/// 64: on data whose distances are far from 1 (1e20, 1e-30) it stops short of σ. Here a
/// row whose largest d − ρ is outside 2^±[`REACH`] is bisected in units of a power of two
/// near it ([`binary_unit`]); other rows take umap-learn's steps exactly.
pub(crate) fn smooth_distances(dist: &[f64], k: usize, target: f64, mean_all: f64) -> (f64, f64) {
    let rho = dist.iter().copied().find(|&d| d > 0.0).unwrap_or(0.0);
    let (mut lo, mut hi, mut mid) = (0.0f64, f64::INFINITY, 1.0f64);
    let beyond: Vec<f64> = dist.iter().map(|&d| (d - rho).max(0.0)).collect();
    let unit = binary_unit(beyond.iter().copied().fold(0.0, f64::max), REACH);
    let beyond: Vec<f64> = beyond.iter().map(|b| b / unit).collect();
    let mut v = beyond.clone();
    for _ in 0..BISECTION_STEPS {
        // exp(−max(0, d − ρ)/σ) for all neighbours at once (vectorised).
        v.copy_from_slice(&beyond);
        exp_scaled(&mut v, -1.0 / mid);
        let psum: f64 = v.iter().sum();
        if (psum - target).abs() < TOLERANCE {
            break;
        }
        if psum > target {
            hi = mid;
            mid = 0.5 * (lo + hi);
        } else {
            lo = mid;
            mid = if hi.is_infinite() {
                2.0 * mid
            } else {
                0.5 * (lo + hi)
            };
        }
    }
    let mean_i = dist.iter().sum::<f64>() / k.max(1) as f64;
    let floor = if rho > 0.0 { mean_i } else { mean_all };
    (rho, (mid * unit).max(MIN_SCALE * floor))
}

/// v = exp(−max(0, d − ρ)/σ) (1 when σ = 0).
pub(crate) fn membership(d: f64, rho: f64, sigma: f64) -> f64 {
    let t = d - rho;
    if t <= 0.0 || sigma == 0.0 {
        1.0
    } else {
        (-t / sigma).exp()
    }
}

/// The fuzzy union v_ij = v_{j|i} + v_{i|j} − v_{j|i} v_{i|j} of the directed memberships
/// of every point's neighbours `idx` (itself excluded) at distances `dist`, with
/// `k` = n_neighbors (the point included): a symmetric sparse matrix.
/// The mean neighbour distance over all points, each point's zero distance to itself
/// counted (umap-learn's), from the neighbours `dist` that exclude the point: σ's floor
/// when ρ = 0.
pub(crate) fn mean_distance(dist: &[Vec<f64>]) -> f64 {
    let count: usize = dist.iter().map(Vec::len).sum();
    dist.iter().flatten().sum::<f64>() / (count + dist.len()).max(1) as f64
}

/// `mean_all` is [`mean_distance`] of `dist`.
pub(crate) fn fuzzy_union(
    idx: &[Vec<usize>],
    dist: &[Vec<f64>],
    k: usize,
    mean_all: f64,
) -> SymCsr {
    let n = idx.len();
    let target = (k as f64).log2();
    let directed: Vec<Vec<f64>> = dist
        .par_iter()
        .map(|d| {
            let (rho, sigma) = smooth_distances(d, k, target, mean_all);
            d.iter().map(|&v| membership(v, rho, sigma)).collect()
        })
        .collect();
    // Row i collects (j, v_{j|i}, v_{i|j}).
    let mut rows: Vec<Vec<(u32, f64, f64)>> = vec![Vec::new(); n];
    for (i, (nb, v)) in idx.iter().zip(&directed).enumerate() {
        for (&j, &w) in nb.iter().zip(v) {
            if j != i {
                rows[i].push((j as u32, w, 0.0));
                rows[j].push((i as u32, 0.0, w));
            }
        }
    }
    let merged: Vec<Vec<(u32, f64)>> = rows
        .into_par_iter()
        .map(|mut r| {
            r.sort_by_key(|e| e.0);
            let mut out: Vec<(u32, f64)> = Vec::with_capacity(r.len());
            let mut t = 0;
            while t < r.len() {
                let (j, mut a, mut b) = r[t];
                t += 1;
                while t < r.len() && r[t].0 == j {
                    a = a.max(r[t].1);
                    b = b.max(r[t].2);
                    t += 1;
                }
                let v = a + b - a * b;
                if v > 0.0 {
                    out.push((j, v));
                }
            }
            out
        })
        .collect();
    SymCsr::from_rows(merged)
}

/// a and b of φ(r) = 1 / (1 + a r^{2b}) fitted by least squares to 1 for r < min_dist
/// and exp(−(r − min_dist)/spread) beyond, on 300 points of [0, 3·spread]
/// (Levenberg–Marquardt from a = b = 1).
pub(crate) fn fit_ab(spread: f64, min_dist: f64) -> (f64, f64) {
    const POINTS: usize = 300;
    let xs: Vec<f64> = (0..POINTS)
        .map(|i| 3.0 * spread * i as f64 / (POINTS - 1) as f64)
        .collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|&x| {
            if x < min_dist {
                1.0
            } else {
                (-(x - min_dist) / spread).exp()
            }
        })
        .collect();
    // Residuals and the Jacobian of f(x) = 1/(1 + a x^{2b}).
    let eval = |a: f64, b: f64| -> (f64, [f64; 3], [f64; 2]) {
        let (mut cost, mut jtj, mut jtr) = (0.0, [0.0; 3], [0.0; 2]);
        for (&x, &y) in xs.iter().zip(&ys) {
            let (p, lx) = if x > 0.0 {
                (x.powf(2.0 * b), x.ln())
            } else {
                (0.0, 0.0)
            };
            let f = 1.0 / (1.0 + a * p);
            let r = f - y;
            let ja = -p * f * f;
            let jb = -a * p * 2.0 * lx * f * f;
            cost += r * r;
            jtj[0] += ja * ja;
            jtj[1] += ja * jb;
            jtj[2] += jb * jb;
            jtr[0] += ja * r;
            jtr[1] += jb * r;
        }
        (cost, jtj, jtr)
    };
    let (mut a, mut b) = (1.0f64, 1.0f64);
    let mut lambda = 1e-3;
    let (mut cost, mut jtj, mut jtr) = eval(a, b);
    for _ in 0..500 {
        let m00 = jtj[0] * (1.0 + lambda);
        let m11 = jtj[2] * (1.0 + lambda);
        let det = m00 * m11 - jtj[1] * jtj[1];
        if det == 0.0 || !det.is_finite() {
            break;
        }
        let da = -(m11 * jtr[0] - jtj[1] * jtr[1]) / det;
        let db = -(m00 * jtr[1] - jtj[1] * jtr[0]) / det;
        let (na, nb) = (a + da, b + db);
        if na <= 0.0 || nb <= 0.0 {
            lambda *= 10.0;
            continue;
        }
        let next = eval(na, nb);
        if next.0 <= cost {
            let small = da.abs() <= 1e-14 * a.abs() && db.abs() <= 1e-14 * b.abs();
            (a, b) = (na, nb);
            (cost, jtj, jtr) = next;
            lambda = (lambda * 0.1).max(1e-12);
            if small {
                break;
            }
        } else {
            lambda *= 10.0;
            if lambda > 1e12 {
                break;
            }
        }
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_and_b_are_umap_learns_for_its_defaults() {
        // umap-learn's find_ab_params(1.0, 0.1) (scipy's curve_fit): 1.5769, 0.8951.
        let (a, b) = fit_ab(1.0, 0.1);
        assert!(
            (a - 1.5769).abs() < 1e-3 && (b - 0.8951).abs() < 1e-3,
            "{a} {b}"
        );
        // A larger min_dist flattens the curve near 0: larger b, smaller a.
        let (a2, b2) = fit_ab(1.0, 0.5);
        assert!(b2 > b && a2 < a, "{a2} {b2}");
    }

    #[test]
    fn sigma_meets_its_target_and_rho_is_the_nearest_positive_distance() {
        let d = [0.0, 0.5, 0.7, 1.0, 1.4];
        let target = (6f64).log2();
        let (rho, sigma) = smooth_distances(&d, 6, target, 1.0);
        assert_eq!(rho, 0.5);
        let s: f64 = d.iter().map(|&v| membership(v, rho, sigma)).sum();
        assert!((s - target).abs() < 1e-4, "{s}");
        // All neighbours coincide: ρ = 0, every membership 1, σ at its floor.
        let (rho, sigma) = smooth_distances(&[0.0; 5], 6, target, 2.0);
        assert_eq!(rho, 0.0);
        assert!((sigma - 2e-3).abs() < 1e-12 || sigma < 1e-10, "{sigma}");
    }

    #[test]
    fn sigma_meets_its_target_at_any_scale_and_scales_with_the_data() {
        // The largest d − ρ is 1.5: within reach, umap-learn's steps.
        let d = [0.0, 0.5, 0.7, 1.0, 1.4, 2.0];
        let target = (7f64).log2();
        let (rho, sigma) = smooth_distances(&d, 7, target, 1.0);
        for s in [1e-30, 1e-12, 3e7, 1e20, 1e100, 1e-150] {
            let ds: Vec<f64> = d.iter().map(|v| v * s).collect();
            let (r, sg) = smooth_distances(&ds, 7, target, s);
            let sum: f64 = ds.iter().map(|&v| membership(v, r, sg)).sum();
            // umap-learn's 64 steps from σ = 1 end at σ = 2⁻⁶⁴ for s = 1e-30, far
            // above every distance (each membership 1, sum 6), and short of σ for 1e20.
            assert!((sum - target).abs() < 1e-4, "scale {s}: {sum}");
            assert!((sg / (sigma * s) - 1.0).abs() < 1e-4, "scale {s}: {sg}");
        }
        // A power-of-two factor outside the reach: the same steps, the same bits.
        for e in [-200, -60, 40, 300] {
            let f = 2f64.powi(e);
            let ds: Vec<f64> = d.iter().map(|v| v * f).collect();
            assert_eq!(smooth_distances(&ds, 7, target, f), (rho * f, sigma * f));
        }
    }

    #[test]
    fn the_union_is_symmetric_and_at_most_one() {
        let idx = vec![vec![1, 2], vec![0, 2], vec![1, 0], vec![2, 1]];
        let dist = vec![
            vec![1.0, 2.0],
            vec![1.0, 1.5],
            vec![1.5, 2.0],
            vec![3.0, 3.5],
        ];
        let g = fuzzy_union(&idx, &dist, 3, mean_distance(&dist));
        let m = g.to_dense();
        for i in 0..4 {
            assert_eq!(m[(i, i)], 0.0);
            for j in 0..4 {
                assert_eq!(m[(i, j)], m[(j, i)]);
                assert!((0.0..=1.0).contains(&m[(i, j)]));
            }
        }
        // Each point's nearest neighbour has membership 1 one way, so the union is 1.
        assert_eq!(m[(0, 1)], 1.0);
        assert_eq!(m[(3, 2)], 1.0);
    }
}
