//! The residual kernel on new points (maths §4): k₀(z, z) = k(z, z) − k_zᵀ K⁺ k_z, the
//! squared power function P_X(z)².
//!
//! K⁺ is represented by the pivoted Cholesky factor of K with the model's relative
//! rank tolerance (default 1e-12): k₀(z, z) = k(z, z) − ||L⁻¹ k_S(z)||², clamped at 0.
//! Directions of K below the tolerance are treated as absent, exactly like the rank
//! cut-off of an eigendecomposition. When K is ill-conditioned, values below about
//! `tol · max k(x, x)` (and below round-off, ~1e-16 · cond(K\[S,S\]) · k(z, z)) are not
//! significant: they mean "represented to working precision", not "exactly 0".
//! For kernels that are not positive definite the quantity is not a power function;
//! it is still reported (clamped at 0) for the pivot set the factorisation found.

use crate::linalg::pivoted_cholesky::{pivoted_cholesky, PivotedCholesky};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

/// Everything needed to evaluate k₀(z, z) for new points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResidualFactor {
    chol: PivotedCholesky,
    tolerance: f64,
}

impl ResidualFactor {
    /// Factorises the (uncentred) training kernel matrix `k`.
    pub fn new(k: MatRef<'_, f64>, tolerance: f64) -> Self {
        ResidualFactor {
            chol: pivoted_cholesky(k, tolerance),
            tolerance,
        }
    }

    /// Wraps a factorisation already computed with relative tolerance `tolerance`.
    pub fn from_cholesky(chol: PivotedCholesky, tolerance: f64) -> Self {
        ResidualFactor { chol, tolerance }
    }

    /// Numerical rank r of K kept for the residual.
    pub fn rank(&self) -> usize {
        self.chol.rank()
    }

    /// The relative tolerance used for the rank.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The factorisation itself.
    pub(crate) fn cholesky(&self) -> &PivotedCholesky {
        &self.chol
    }

    /// Pivot indices (training points spanning the kept subspace).
    pub fn pivots(&self) -> &[usize] {
        &self.chol.pivots
    }

    /// k₀(z, z) for rows of the kernel block `kz` (m×N, against all training points)
    /// and the diagonal values `kzz` = k(z, z).
    pub fn residuals(&self, kz: MatRef<'_, f64>, kzz: &[f64]) -> Vec<f64> {
        let m = kz.nrows();
        let r = self.rank();
        if r == 0 {
            return kzz.iter().map(|v| v.max(0.0)).collect();
        }
        let piv = &self.chol.pivots;
        let mut w = Mat::from_fn(r, m, |a, i| kz[(i, piv[a])]);
        solve_lower_triangular_in_place(self.chol.l(), w.as_mut(), Par::Seq);
        (0..m)
            .map(|i| {
                let s: f64 = w.col_as_slice(i).iter().map(|v| v * v).sum();
                (kzz[i] - s).max(0.0)
            })
            .collect()
    }

    /// Checks internal consistency against the number of training points.
    pub(crate) fn is_consistent(&self, n_train: usize) -> bool {
        let r = self.rank();
        self.chol.l.len() == r * r && self.chol.pivots.iter().all(|&p| p < n_train)
    }
}
