//! Input affinities of t-SNE (maths §12): the conditional probabilities p_{j|i} over each
//! point's k nearest neighbours, with the precision βᵢ found by bisection so that the
//! row's entropy equals log(perplexity), and their symmetrisation P.
//!
//! The bisection is scikit-learn's (`_binary_search_perplexity`): β starts at 1, is
//! doubled or halved until the target is bracketed and then bisected, at most 100 steps,
//! until |H − log(perplexity)| ≤ 1e-5 (natural logarithms). The same steps give the same
//! βᵢ, so P agrees with scikit-learn's `_joint_probabilities_nn` on the same neighbours
//! to round-off.

use crate::linalg::sparse::SymCsr;
use rayon::prelude::*;

/// Entropy tolerance of the bisection (scikit-learn's `PERPLEXITY_TOLERANCE`).
const TOLERANCE: f64 = 1e-5;
/// Most bisection steps.
const STEPS: usize = 100;
/// What a zero row sum is replaced by (scikit-learn's `EPSILON_DBL`).
const TINY_SUM: f64 = 1e-8;

/// p_{·|i} of one row of squared distances to its neighbours, and its β.
pub(crate) fn conditional_row(sq: &[f64], perplexity: f64) -> (Vec<f64>, f64) {
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
}
