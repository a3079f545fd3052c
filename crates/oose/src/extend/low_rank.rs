//! Certified low-rank extension (maths §20): the extension through the pivots P of the
//! fit's pivoted Cholesky factorisation instead of all N training points.
//!
//! The exact extension is affine in the kernel row: y(z) = a₀ + A k_X(z) (kernel PCA:
//! A = Λ_d^{−1/2} U_dᵀ on the part that survives centring; kernel interpolation:
//! A = the coefficients' transpose, a₀ = 0). Replacing k_X(z) by its Nyström
//! approximation k^P_X(z) = K_XP K_PP⁻¹ k_P(z) gives y^P(z) = a₀ + B k_P(z) with
//! B = A K_XP K_PP⁻¹ (d×r, formed once): r kernel values per new point instead of N.
//! The error e = k_X(z) − k^P_X(z) is a residual-kernel row, |eᵢ| ≤ P_P(xᵢ) P_P(z)
//! (Cauchy–Schwarz in the residual kernel's RKHS), so
//! ‖y(z) − y^P(z)‖₂ ≤ ‖A‖₂ P_P(z) (Σᵢ P_P(xᵢ)²)^{1/2} (kernel PCA: ‖A‖₂ = λ_d^{−1/2}).

use super::{by_chunks, Column, Extension};
use crate::error::{Error, Result};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::PivotedCholesky;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatRef, Par};

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// What the low-rank extension needs, formed once from a fitted model.
#[derive(Clone, Debug)]
pub(crate) struct LowRank {
    /// The pivots' training rows, in pivot order.
    pub pivots: Vec<usize>,
    /// L⁻ᵀ (r×r, upper), with K_PP = L Lᵀ.
    linv_t: Mat<f64>,
    /// Bᵀ (r×d): coordinates = a₀ + k_P(z)ᵀ Bᵀ.
    bt: Mat<f64>,
    /// a₀ (d): the coordinates of a zero kernel row.
    offset: Vec<f64>,
    /// mean_i k^P(xᵢ, z) = row_meanᵀ k_P(z): the Nyström row's mean (r).
    row_mean: Vec<f64>,
    /// Σᵢ P_P(xᵢ)² over the training points (with its rounding allowance).
    train_residual_sum: f64,
    /// P_P(xᵢ) of every training point (with its rounding allowance).
    train_power: Vec<f64>,
    /// ‖A‖₂, the operator norm of the map from kernel rows to coordinates.
    gain: f64,
}

impl LowRank {
    /// From the factorisation `chol` of the uncentred training kernel, its rows at the
    /// pivots `k_px` (r×N, pivot order), the training diagonal k(xᵢ, xᵢ), `gain` = ‖A‖₂
    /// (or a bound on it), and the exact extension `project` (kernel rows m×N → their
    /// m×d coordinates and m row means, as [`Projector::project`](super::projection::Projector::project)).
    pub(crate) fn new(
        chol: &PivotedCholesky,
        k_px: MatRef<'_, f64>,
        k_diag: &[f64],
        gain: f64,
        project: impl Fn(MatRef<'_, f64>) -> (Mat<f64>, Vec<f64>),
    ) -> Self {
        let (r, n) = (chol.rank(), k_px.ncols());
        let l = chol.l().to_owned();
        // W = L⁻¹ K_PX: the training points' residuals P_P(xᵢ)² = k(xᵢ, xᵢ) − ‖W[:, i]‖²
        // (each with its rounding allowance, see `residual`).
        let mut w = k_px.to_owned();
        solve_lower_triangular_in_place(l.as_ref(), w.as_mut(), Par::rayon(0));
        let train_residuals: Vec<f64> = (0..n)
            .map(|i| residual(k_diag[i], w.col_as_slice(i).iter().map(|v| v * v).sum(), r))
            .collect();
        let train_residual_sum = train_residuals.iter().sum();
        let train_power = train_residuals.iter().map(|v| v.sqrt()).collect();
        // G = L⁻ᵀ W = K_PP⁻¹ K_PX (r×N): row a is the kernel row whose projection is
        // column a of B (plus a₀).
        solve_upper_triangular_in_place(l.transpose(), w.as_mut(), Par::rayon(0));
        let mut rows = Mat::<f64>::zeros(r + 1, n);
        rows.as_mut().subrows_mut(0, r).copy_from(&w);
        let (y, mut row_mean) = project(rows.as_ref());
        row_mean.truncate(r);
        let d = y.ncols();
        let offset: Vec<f64> = (0..d).map(|j| y[(r, j)]).collect();
        let bt = Mat::from_fn(r, d, |a, j| y[(a, j)] - offset[j]);
        let mut linv = Mat::<f64>::identity(r, r);
        solve_lower_triangular_in_place(l.as_ref(), linv.as_mut(), Par::rayon(0));
        LowRank {
            pivots: chol.pivots.clone(),
            linv_t: linv.transpose().to_owned(),
            bt,
            offset,
            row_mean,
            train_residual_sum,
            train_power,
            gain,
        }
    }

    /// κ_c = Σᵢ |A_ic| P_P(xᵢ) for each column c of `a` (N×c): |a_cᵀ e| ≤ κ_c P_P(z) for
    /// the error e of a Nyström row, a bound per linear functional of the kernel row.
    pub(crate) fn column_constants(&self, a: MatRef<'_, f64>) -> Vec<f64> {
        (0..a.ncols())
            .map(|c| {
                (0..a.nrows())
                    .map(|i| a[(i, c)].abs() * self.train_power[i])
                    .sum()
            })
            .collect()
    }

    /// Coordinates, P_P(z)², the certified bound on ‖y(z) − y^P(z)‖₂ and the Nyström
    /// row's mean, for kernel rows `k_zp` (m×r, against the pivots in pivot order) with
    /// k(z, z) = `kzz`.
    pub(crate) fn extend(
        &self,
        k_zp: MatRef<'_, f64>,
        kzz: &[f64],
    ) -> (Mat<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let (m, r, d) = (k_zp.nrows(), self.pivots.len(), self.offset.len());
        let mut y = crate::linalg::product(k_zp, self.bt.as_ref(), Par::Seq);
        for j in 0..d {
            let o = self.offset[j];
            y.col_as_slice_mut(j).iter_mut().for_each(|v| *v += o);
        }
        // W = K_zP L⁻ᵀ by a product (rows independent of the batch, like the
        // projection's), not a blocked triangular solve; L⁻ᵀ is upper triangular, so
        // half the products of a full one (the recursion splits L⁻ᵀ only, never the
        // rows).
        let mut w = Mat::<f64>::zeros(m, r);
        faer::linalg::matmul::triangular::matmul(
            w.as_mut(),
            faer::linalg::matmul::triangular::BlockStructure::Rectangular,
            Accum::Replace,
            k_zp,
            faer::linalg::matmul::triangular::BlockStructure::Rectangular,
            self.linv_t.as_ref(),
            faer::linalg::matmul::triangular::BlockStructure::TriangularUpper,
            1.0,
            Par::Seq,
        );
        let mut sq = vec![0.0; m];
        for a in 0..r {
            for (acc, v) in sq.iter_mut().zip(w.col_as_slice(a)) {
                *acc += v * v;
            }
        }
        let res: Vec<f64> = (0..m).map(|i| residual(kzz[i], sq[i], r)).collect();
        let root_train = self.train_residual_sum.sqrt();
        let bound = res
            .iter()
            .map(|p2| self.gain * p2.sqrt() * root_train)
            .collect();
        let means = (0..m)
            .map(|i| (0..r).map(|a| self.row_mean[a] * k_zp[(i, a)]).sum())
            .collect();
        (y, res, bound, means)
    }
}

/// P_P(z)² = k(z, z) − s, s = ‖w‖² (w = L⁻¹ k_P(z)) made an upper bound of the exact value:
/// clamped at 0, plus the rounding of the difference and of the triangular solve,
/// 2(r + 2)·u·(k(z, z) + ‖w‖²).
fn residual(kzz: f64, s: f64, r: usize) -> f64 {
    (kzz - s).max(0.0) + 2.0 * (r as f64 + 2.0) * U * (kzz.abs() + s)
}

/// A model's low-rank extension, formed once: the [`LowRank`] matrices and the pivots'
/// points.
#[derive(Clone, Debug)]
pub(crate) struct LowRankParts {
    pub core: LowRank,
    kernel: Kernel,
    /// The pivots' rows and squared norms.
    px: Mat<f64>,
    px_sq: Vec<f64>,
}

impl LowRankParts {
    /// From the training points `x` (squared norms `x_sq`), the factorisation `chol` of
    /// their `kernel` matrix, `gain` and `project` as in [`LowRank::new`].
    pub(crate) fn new(
        kernel: Kernel,
        x: MatRef<'_, f64>,
        x_sq: &[f64],
        chol: &PivotedCholesky,
        gain: f64,
        project: impl Fn(MatRef<'_, f64>) -> (Mat<f64>, Vec<f64>),
    ) -> Self {
        let px = Mat::from_fn(chol.rank(), x.ncols(), |a, c| x[(chol.pivots[a], c)]);
        let px_sq = row_sq_norms(px.as_ref());
        let k_px = kernel.block(px.as_ref(), &px_sq, x, x_sq, Par::rayon(0));
        let k_diag: Vec<f64> = x_sq.iter().map(|&s| kernel.diag_value(s)).collect();
        LowRankParts {
            core: LowRank::new(chol, k_px.as_ref(), &k_diag, gain, project),
            kernel,
            px,
            px_sq,
        }
    }

    /// The low-rank extension of the rows of `new`, chunk by chunk: coordinates,
    /// `residual` = P_P(z)², the column `lowrank_bound`; `finish(y, k(z, z), Nyström row
    /// means)` gives the chunk's `reconstruction_error`.
    pub(crate) fn extend(
        &self,
        new: MatRef<'_, f64>,
        finish: impl Fn(MatRef<'_, f64>, &[f64], &[f64]) -> Vec<f64> + Sync,
    ) -> Result<Extension> {
        let d = self.core.offset.len();
        by_chunks(new, self.px.nrows().max(1), d, |_, z| {
            let z_sq = row_sq_norms(z);
            let k_zp = self
                .kernel
                .block(z, &z_sq, self.px.as_ref(), &self.px_sq, Par::Seq);
            let kzz: Vec<f64> = z_sq.iter().map(|&s| self.kernel.diag_value(s)).collect();
            let (y, residual, bound, mz) = self.core.extend(k_zp.as_ref(), &kzz);
            let reconstruction_error = finish(y.as_ref(), &kzz, &mz);
            Ok(Extension {
                coordinates: y,
                residual,
                reconstruction_error,
                extra: vec![Column {
                    name: "lowrank_bound",
                    values: bound,
                }],
            })
        })
    }
}

/// A model's low-rank parts, built on first use and kept in memory (never saved).
pub(crate) type LowRankCache = crate::model::method::Transient<std::sync::OnceLock<LowRankParts>>;

/// The low-rank parts in `cache` of a kernel model (`kernel` in `dim` dimensions):
/// the kernel checked ([`check_kernel`]), then the parts built by `build` on first use.
pub(crate) fn cached(
    cache: &LowRankCache,
    kernel: Kernel,
    dim: usize,
    build: impl FnOnce() -> LowRankParts,
) -> Result<&LowRankParts> {
    check_kernel(kernel, dim)?;
    Ok(cache.0.get_or_init(build))
}

/// Refuses, by name, a kernel the low-rank extension cannot serve in `dim` dimensions.
pub(crate) fn check_kernel(kernel: Kernel, dim: usize) -> Result<()> {
    if kernel == Kernel::Precomputed {
        return Err(Error::Unsupported(
            "the low-rank extension computes kernel values at the pivots; with a \
             precomputed kernel use the exact extension"
                .into(),
        ));
    }
    if !kernel.is_positive_definite(dim) {
        return Err(Error::param(
            "extension",
            format!(
                "low-rank needs a positive definite kernel (its certificate is a power \
                 function); {} is not",
                kernel.name()
            ),
        ));
    }
    Ok(())
}

/// `extension = auto` (maths §20) from the low-rank extension `fast` of the rows of
/// `new`: the rows whose `lowrank_bound` exceeds `limit`, or is not finite, are replaced
/// by their exact extension from `exact` (coordinates, residual, reconstruction error
/// and every extra column the two share by name; bound 0). A decision per row, so rows
/// stay independent of the batch.
pub(crate) fn auto(
    mut fast: Extension,
    new: MatRef<'_, f64>,
    limit: f64,
    exact: impl FnOnce(MatRef<'_, f64>) -> Result<Extension>,
) -> Result<Extension> {
    let at = fast
        .extra
        .iter()
        .position(|c| c.name == "lowrank_bound")
        .expect("a low-rank extension has its bound");
    let slow: Vec<usize> = {
        let b = &fast.extra[at].values;
        (0..b.len())
            .filter(|&i| !b[i].is_finite() || b[i] > limit)
            .collect()
    };
    if slow.is_empty() {
        return Ok(fast);
    }
    let rows = crate::datasets::select_rows(new, &slow);
    let e = exact(rows.as_ref())?;
    for (a, &i) in slow.iter().enumerate() {
        for j in 0..fast.coordinates.ncols() {
            fast.coordinates[(i, j)] = e.coordinates[(a, j)];
        }
        fast.residual[i] = e.residual[a];
        fast.reconstruction_error[i] = e.reconstruction_error[a];
        for col in &mut fast.extra {
            if let Some(src) = e.extra.iter().find(|c| c.name == col.name) {
                col.values[i] = src.values[a];
            }
        }
        fast.extra[at].values[i] = 0.0;
    }
    Ok(fast)
}
