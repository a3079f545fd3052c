//! Rank-revealing pivoted Cholesky factorisation of a symmetric positive semidefinite
//! matrix: K[S, S] = L Lᵀ for a pivot set S chosen greedily (largest remaining
//! diagonal), stopping when every remaining Schur-complement diagonal is at most
//! `tol · max_i K_ii`.
//!
//! Used for the residual kernel (maths §4): k₀(z, z) = k(z, z) − ||L⁻¹ k_S(z)||². With
//! the stopping rule, every training point not in S has residual ≤ tol · max K_ii, and
//! the factor costs O(N r²) for numerical rank r instead of an N×N decomposition.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

/// The factor of K[S, S].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PivotedCholesky {
    /// Pivot indices S (in pivot order).
    pub pivots: Vec<usize>,
    /// r×r lower-triangular L with K[S, S] = L Lᵀ, column-major.
    pub l: Vec<f64>,
    /// Largest remaining Schur-complement diagonal when the factorisation stopped.
    pub max_remaining: f64,
}

impl PivotedCholesky {
    /// Rank r = |S|.
    pub fn rank(&self) -> usize {
        self.pivots.len()
    }

    /// L as a matrix view.
    pub fn l(&self) -> MatRef<'_, f64> {
        let r = self.rank();
        MatRef::from_column_major_slice(&self.l, r, r)
    }
}

/// Factorises the symmetric PSD matrix `k` (only the columns of chosen pivots and the
/// diagonal are read). Negative remaining diagonals (round-off, or an indefinite `k`)
/// are never chosen as pivots.
pub fn pivoted_cholesky(k: MatRef<'_, f64>, tol: f64) -> PivotedCholesky {
    let n = k.nrows();
    let diag = (0..n).map(|i| k[(i, i)]).collect();
    factorize(diag, tol, n, |p, out| {
        for (o, v) in out.iter_mut().zip(k.col(p).iter()) {
            *o = *v;
        }
    })
    .chol
}

/// A pivoted Cholesky factorisation with its full N×r factor G (K ≈ G Gᵀ, exact on the
/// pivot rows and columns; every entry of K − G Gᵀ is at most the stopping threshold in
/// magnitude when K is PSD).
pub struct Factorization {
    /// The pivots and L = G[S, :].
    pub chol: PivotedCholesky,
    /// G (N×r).
    pub g: Mat<f64>,
    /// False when the factorisation stopped at `max_rank` before reaching the tolerance.
    pub complete: bool,
}

/// Pivoted Cholesky of a PSD matrix given by its diagonal and a column oracle
/// (`column(p, out)` writes K[:, p] into `out`): only the r pivot columns are ever
/// formed, so a kernel matrix of numerical rank r costs N·r kernel values and O(N r²)
/// flops. Stops at the relative tolerance `tol` or after `max_rank` pivots.
pub fn factorize<F>(mut diag: Vec<f64>, tol: f64, max_rank: usize, mut column: F) -> Factorization
where
    F: FnMut(usize, &mut [f64]),
{
    let n = diag.len();
    let max_diag = diag.iter().copied().fold(0.0f64, f64::max);
    let stop = tol * max_diag;
    let mut chosen = vec![false; n];
    let mut pivots = Vec::new();
    // Columns of the N×r factor, appended as pivots are added (the room doubled when
    // full; nothing zero-filled).
    let mut cap = n.min(max_rank).min(64);
    let mut big = Mat::<f64>::with_capacity(n, cap);
    big.resize_with(n, 0, |_, _| 0.0);
    let mut max_remaining = max_diag;
    let mut complete = true;
    let mut col = Mat::<f64>::zeros(n, 1);
    for j in 0..n {
        let (mut p, mut best) = (usize::MAX, f64::NEG_INFINITY);
        for (i, &d) in diag.iter().enumerate() {
            if !chosen[i] && d > best {
                best = d;
                p = i;
            }
        }
        max_remaining = best.max(0.0);
        if p == usize::MAX || best <= stop || best <= 0.0 {
            break;
        }
        if j == max_rank {
            complete = false;
            break;
        }
        // new column = (K[:, p] − G[:, :j] G[p, :j]ᵀ) / sqrt(d_p)
        if j == cap {
            cap = (2 * cap).min(n);
            big.reserve(n, cap);
        }
        column(p, col.col_as_slice_mut(0));
        if j > 0 {
            matmul(
                col.as_mut(),
                Accum::Add,
                big.as_ref(),
                big.as_ref().row(p).transpose().as_mat(),
                -1.0,
                if n * j > 1 << 18 {
                    Par::rayon(0)
                } else {
                    Par::Seq
                },
            );
        }
        let s = best.sqrt();
        let c = col.col_as_slice_mut(0);
        for v in c.iter_mut() {
            *v /= s;
        }
        c[p] = s;
        chosen[p] = true;
        diag[p] = 0.0;
        for (i, d) in diag.iter_mut().enumerate() {
            if !chosen[i] {
                *d -= c[i] * c[i];
            }
        }
        big.resize_with(n, j + 1, |i, _| c[i]);
        pivots.push(p);
    }
    if pivots.len() == n {
        max_remaining = 0.0;
    }
    let r = pivots.len();
    let mut l = vec![0.0; r * r];
    for jj in 0..r {
        for ii in jj..r {
            l[jj * r + ii] = big[(pivots[ii], jj)];
        }
    }
    let g = big;
    Factorization {
        chol: PivotedCholesky {
            pivots,
            l,
            max_remaining,
        },
        g,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn reproduces_low_rank_matrix() {
        let g = Rng::new(5).normal_mat(50, 7);
        let k = &g * g.transpose();
        let f = pivoted_cholesky(k.as_ref(), 1e-12);
        assert_eq!(f.rank(), 7);
        let l = f.l();
        let llt = l * l.transpose();
        for a in 0..7 {
            for b in 0..7 {
                let want = k[(f.pivots[a], f.pivots[b])];
                assert!((llt[(a, b)] - want).abs() < 1e-10 * (1.0 + want.abs()));
            }
            for b in (a + 1)..7 {
                assert_eq!(l[(a, b)], 0.0);
            }
        }
        assert!(f.max_remaining < 1e-10);
    }

    #[test]
    fn factor_reproduces_the_matrix_and_stops_at_max_rank() {
        let h = Rng::new(6).normal_mat(40, 5);
        let k = &h * h.transpose();
        let diag = (0..40).map(|i| k[(i, i)]).collect::<Vec<_>>();
        let oracle = |p: usize, out: &mut [f64]| {
            for (i, o) in out.iter_mut().enumerate() {
                *o = k[(i, p)];
            }
        };
        let f = factorize(diag.clone(), 1e-12, 40, oracle);
        assert!(f.complete);
        let ggt = &f.g * f.g.transpose();
        for i in 0..40 {
            for j in 0..40 {
                assert!((ggt[(i, j)] - k[(i, j)]).abs() < 1e-10 * (1.0 + k[(i, j)].abs()));
            }
        }
        let partial = factorize(diag, 1e-12, 3, oracle);
        assert!(!partial.complete);
        assert_eq!(partial.g.ncols(), 3);
    }

    #[test]
    fn full_rank_matrix_uses_every_pivot() {
        let n = 20;
        let k = Mat::from_fn(n, n, |i, j| (-((i as f64 - j as f64).abs())).exp());
        let f = pivoted_cholesky(k.as_ref(), 1e-14);
        assert_eq!(f.rank(), n);
        assert_eq!(f.max_remaining, 0.0);
    }
}
