//! Input affinities of t-SNE (maths §12): the conditional probabilities p_{j|i} over each
//! point's k nearest neighbours, with the precision βᵢ found by bisection so that the
//! row's entropy equals log(perplexity), and their symmetrisation P.
//!
//! The bisection is scikit-learn's (`_binary_search_perplexity`): β starts at 1, is
//! doubled or halved until the target is bracketed and then bisected, at most 100 steps,
//! until |H − log(perplexity)| ≤ 1e-5 (natural logarithms). The same steps give the same
//! βᵢ, so P agrees with scikit-learn's `_joint_probabilities_nn` on the same neighbours
//! to round-off. scikit-learn's 100 steps include those that bracket β, which therefore
//! never reaches a β beyond 2^±100 (squared distances of 1e40 or 1e-40: data at a scale
//! of 1e20 or 1e-20); a row whose largest squared distance is outside 2^±[`REACH`] is
//! bisected in units of a power of two near it (exact), every other row as
//! scikit-learn does, bit for bit.

use crate::linalg::sparse::SymCsr;
use rayon::prelude::*;

/// Entropy tolerance of the bisection (scikit-learn's `PERPLEXITY_TOLERANCE`).
const TOLERANCE: f64 = 1e-5;
/// Most bisection steps.
const STEPS: usize = 100;
/// What a zero row sum is replaced by (scikit-learn's `EPSILON_DBL`).
const TINY_SUM: f64 = 1e-8;
/// Rows whose largest squared distance lies within 2^±REACH are bisected as
/// scikit-learn does: β is bracketed in at most about 50 of the 100 steps.
const REACH: i32 = 40;

/// p_{·|i} of one row of squared distances to its neighbours, and its β.
pub(crate) fn conditional_row(sq: &[f64], perplexity: f64) -> (Vec<f64>, f64) {
    let unit = crate::linalg::binary_unit(sq.iter().copied().fold(0.0, f64::max), REACH);
    if unit != 1.0 {
        let scaled: Vec<f64> = sq.iter().map(|d| d / unit).collect();
        let (p, beta) = conditional_row(&scaled, perplexity);
        return (p, beta / unit);
    }
    let target = perplexity.ln();
    let (mut lo, mut hi, mut beta) = (f64::NEG_INFINITY, f64::INFINITY, 1.0f64);
    let mut p = vec![0.0; sq.len()];
    for _ in 0..STEPS {
        let mut sum = 0.0;
        for (pj, d) in p.iter_mut().zip(sq) {
            *pj = (-d * beta).exp();
            sum += *pj;
        }
        if sum == 0.0 {
            sum = TINY_SUM;
        }
        let mut weighted = 0.0;
        for (pj, d) in p.iter_mut().zip(sq) {
            *pj /= sum;
            weighted += d * *pj;
        }
        let entropy = sum.ln() + beta * weighted;
        let diff = entropy - target;
        if diff.abs() <= TOLERANCE {
            break;
        }
        if diff > 0.0 {
            lo = beta;
            beta = if hi == f64::INFINITY {
                beta * 2.0
            } else {
                (beta + hi) / 2.0
            };
        } else {
            hi = beta;
            beta = if lo == f64::NEG_INFINITY {
                beta / 2.0
            } else {
                (beta + lo) / 2.0
            };
        }
    }
    (p, beta)
}

/// The joint probabilities P = (C + Cᵀ) / sum(C + Cᵀ) from each point's neighbours
/// `idx[i]` and squared distances `sq[i]` (C holds p_{j|i} at (i, idx[i][a])); the βᵢ
/// found. P is symmetric, sums to 1, and has no diagonal.
pub(crate) fn joint(idx: &[Vec<usize>], sq: &[Vec<f64>], perplexity: f64) -> (SymCsr, Vec<f64>) {
    let n = idx.len();
    let rows: Vec<(Vec<f64>, f64)> = sq
        .par_iter()
        .map(|s| conditional_row(s, perplexity))
        .collect();
    let betas = rows.iter().map(|r| r.1).collect();
    // C + Cᵀ, row by row: (column, value) pairs, then merged by column.
    let mut entries: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
    for (i, (p, _)) in rows.iter().enumerate() {
        for (&j, &v) in idx[i].iter().zip(p) {
            entries[i].push((j as u32, v));
            entries[j].push((i as u32, v));
        }
    }
    let merged: Vec<Vec<(u32, f64)>> = entries
        .into_par_iter()
        .map(|mut r| {
            r.sort_by_key(|e| e.0);
            let mut out: Vec<(u32, f64)> = Vec::with_capacity(r.len());
            for (c, v) in r {
                match out.last_mut() {
                    Some(last) if last.0 == c => last.1 += v,
                    _ => out.push((c, v)),
                }
            }
            out
        })
        .collect();
    let total: f64 = merged.iter().flatten().map(|e| e.1).sum();
    let total = total.max(f64::EPSILON);
    let scaled = merged
        .into_iter()
        .map(|r| r.into_iter().map(|(c, v)| (c, v / total)).collect())
        .collect();
    (SymCsr::from_rows(scaled), betas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_reaches_the_perplexity_and_p_is_a_symmetric_distribution() {
        let sq: Vec<f64> = (1..=30).map(|j| (j as f64).sqrt()).collect();
        let (p, beta) = conditional_row(&sq, 10.0);
        let h: f64 = -p
            .iter()
            .filter(|v| **v > 0.0)
            .map(|v| v * v.ln())
            .sum::<f64>();
        assert!((h - 10f64.ln()).abs() <= 1e-5, "{h}");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12 && beta > 0.0);
        let idx = vec![vec![1, 2], vec![0, 2], vec![1, 0]];
        let d = vec![vec![1.0, 4.0], vec![1.0, 2.0], vec![2.0, 4.0]];
        let (m, _) = joint(&idx, &d, 1.5);
        let dense = |i: usize, j: usize| {
            (m.offsets[i]..m.offsets[i + 1])
                .find(|&e| m.cols[e] as usize == j)
                .map_or(0.0, |e| m.vals[e])
        };
        let sum: f64 = m.vals.iter().sum();
        assert!((sum - 1.0).abs() < 1e-15);
        for i in 0..3 {
            assert_eq!(dense(i, i), 0.0);
            for j in 0..3 {
                assert_eq!(dense(i, j), dense(j, i));
            }
        }
    }

    #[test]
    fn the_perplexity_is_reached_at_any_scale_and_beta_scales_with_the_data() {
        // The largest squared distance is 1.5: within reach, scikit-learn's steps.
        let sq: Vec<f64> = (1..=30).map(|j| j as f64 / 20.0).collect();
        let (p, beta) = conditional_row(&sq, 10.0);
        let entropy = |p: &[f64]| {
            -p.iter()
                .filter(|v| **v > 0.0)
                .map(|v| v * v.ln())
                .sum::<f64>()
        };
        for s in [1e-80, 1e-30, 1e30, 1e60, 1e200] {
            let ss: Vec<f64> = sq.iter().map(|v| v * s).collect();
            let (ps, bs) = conditional_row(&ss, 10.0);
            // scikit-learn's 100 steps from β = 1 stop at β = 2¹⁰⁰ for s = 1e-80 (p
            // uniform, entropy ln 30) and at 2⁻¹⁰⁰ for s = 1e60 (p on the nearest, 0).
            assert!((entropy(&ps) - 10f64.ln()).abs() <= 1e-5, "scale {s}");
            assert!((bs * s / beta - 1.0).abs() < 1e-3, "scale {s}: {bs}");
        }
        for e in [-400, -50, 50, 800] {
            let f = 2f64.powi(e);
            let ss: Vec<f64> = sq.iter().map(|v| v * f).collect();
            assert_eq!(conditional_row(&ss, 10.0), (p.clone(), beta / f));
        }
    }
}
