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
    let n = x.nrows();
    if n < 2 {
        return 0.0;
    }
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
    // Non-negative finite doubles order like their bit patterns: select on integers.
    let mut vals: Vec<u64> = (0..m)
        .into_par_iter()
        .flat_map_iter(|i| {
            let a = &rows[i * dim..(i + 1) * dim];
            ((i + 1)..m).map(move |j| {
                let b = &rows[j * dim..(j + 1) * dim];
                let d: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
                d.to_bits()
            })
        })
        .collect();
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
    fn median_sq_distance_on_a_line() {
        // Points 0, 1, 2, 3: squared distances 1,1,1,4,4,9 → median (1+4)/2.
        let x = faer::Mat::from_fn(4, 1, |i, _| i as f64);
        assert_eq!(median_sq_distance(x.as_ref()), 2.5);
    }
}
