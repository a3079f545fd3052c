//! Automatic bandwidth ε (SPEC §1): the median of pairwise squared distances.
//!
//! Kernels whose argument is r² (gaussian, (inverse) multiquadric) get the median of
//! the squared distances; kernels whose argument is r (laplacian, wendland) get the
//! median distance, so that ε has the units of the kernel's argument. Above
//! [`SUBSAMPLE`] points the median is taken over a fixed-seed random subsample.

use crate::rng::Rng;
use faer::MatRef;
use rayon::prelude::*;

/// Largest number of points whose pairs are all used; above it, a subsample of this size.
pub const SUBSAMPLE: usize = 3000;

/// Median of the squared pairwise distances between distinct rows of `x` (pairs i < j).
/// Returns 0 when there are fewer than two rows or all points coincide.
pub fn median_sq_distance(x: MatRef<'_, f64>) -> f64 {
    if x.nrows() < 2 {
        return 0.0;
    }
    let mut vals = pair_sq_distance_bits(x);
    let n = vals.len();
    let (_, &mut hi, _) = vals.select_nth_unstable(n / 2);
    let hi = f64::from_bits(hi);
    if n % 2 == 1 {
        hi
    } else {
        let lo = vals[..n / 2]
            .iter()
            .copied()
            .max()
            .map_or(hi, f64::from_bits);
        0.5 * (lo + hi)
    }
}

/// The squared distances of all pairs i < j of rows of `x` (of a fixed-seed subsample
/// of [`SUBSAMPLE`] rows above that size), as the bit patterns of the doubles:
/// non-negative finite doubles order like their bits, so selection runs on integers.
fn pair_sq_distance_bits(x: MatRef<'_, f64>) -> Vec<u64> {
    let n = x.nrows();
    let idx: Vec<usize> = if n > SUBSAMPLE {
        Rng::new(0x05EE_BA4D).sample_indices(n, SUBSAMPLE)
    } else {
        (0..n).collect()
    };
    // Pairs i < j from coordinate differences (exact, and for the low dimensions of
    // typical data cheaper than a GEMM of the full m×m matrix), in parallel over i.
    let dim = x.ncols();
    let rows: Vec<f64> = idx
        .iter()
        .flat_map(|&i| (0..dim).map(move |j| x[(i, j)]))
        .collect();
    let m = idx.len();
    let rows = &rows;
    (0..m)
        .into_par_iter()
        .flat_map_iter(|i| {
            let a = &rows[i * dim..(i + 1) * dim];
            ((i + 1)..m).map(move |j| {
                let b = &rows[j * dim..(j + 1) * dim];
                let d: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
                d.to_bits()
            })
        })
        .collect()
}

/// The log-slope rule of Berry, Giannakis and Harlim for a gaussian kernel (SPEC §1):
/// the ε maximising d log S / d log ε, S(ε) = Σ_{i,j} exp(−||xᵢ − x_j||²/ε) (all
/// ordered pairs, i = j included), searched on a grid of 16 values per octave spanning
/// the pairwise squared distances (subsampled as for the median rule). The slope is
/// evaluated exactly, (Σ w d²/ε) / S. Returns (ε, maximal slope); twice the slope
/// estimates the intrinsic dimension. `None` when all points coincide.
pub fn log_slope_epsilon(x: MatRef<'_, f64>) -> Option<(f64, f64)> {
    let d2: Vec<f64> = pair_sq_distance_bits(x)
        .into_iter()
        .map(f64::from_bits)
        .filter(|&d| d > 0.0)
        .collect();
    let lo = d2.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = d2.iter().copied().fold(0.0f64, f64::max);
    if d2.is_empty() || hi <= 0.0 {
        return None;
    }
    let m = x.nrows().min(SUBSAMPLE) as f64;
    let (a, b) = ((lo.log2() - 2.0).floor(), (hi.log2() + 2.0).ceil());
    let steps = ((b - a) * 16.0) as usize;
    let slope = |eps: f64| {
        let (s, ds) = d2
            .par_iter()
            .map(|&d| {
                let w = (-d / eps).exp();
                (w, w * d / eps)
            })
            .reduce(|| (0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
        // Ordered pairs: each unordered pair twice, plus the m diagonal terms.
        2.0 * ds / (m + 2.0 * s)
    };
    (0..=steps)
        .map(|i| {
            let eps = (a + i as f64 / 16.0).exp2();
            (eps, slope(eps))
        })
        .max_by(|p, q| p.1.total_cmp(&q.1))
}

/// Median of `v` (mean of the two middle values for an even count). Reorders `v`.
pub fn median(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let cmp = |a: &f64, b: &f64| a.total_cmp(b);
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, cmp);
    if n % 2 == 1 {
        hi
    } else {
        let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_known_values() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn log_slope_estimates_the_dimension_of_a_grid() {
        // A 40×40 grid in the plane: twice the maximal slope is close to 2.
        let x = faer::Mat::from_fn(1600, 2, |i, j| {
            if j == 0 {
                (i % 40) as f64
            } else {
                (i / 40) as f64
            }
        });
        let (eps, slope) = log_slope_epsilon(x.as_ref()).unwrap();
        assert!(
            (2.0 * slope - 2.0).abs() < 0.25,
            "dimension {}",
            2.0 * slope
        );
        assert!(eps > 1.0 && eps < 400.0, "{eps}");
        let same = faer::Mat::from_fn(5, 2, |_, _| 1.0);
        assert!(log_slope_epsilon(same.as_ref()).is_none());
    }

    #[test]
    fn median_sq_distance_on_a_line() {
        // Points 0, 1, 2, 3: squared distances 1,1,1,4,4,9 → median (1+4)/2.
        let x = faer::Mat::from_fn(4, 1, |i, _| i as f64);
        assert_eq!(median_sq_distance(x.as_ref()), 2.5);
    }
}
