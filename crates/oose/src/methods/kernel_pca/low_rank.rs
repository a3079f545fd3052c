//! Kernel PCA's certified low-rank extension (maths §20): the projection through the
//! fit's pivots, with the per-point bound on its distance from the exact extension.

use super::FittedKernelPca;
use crate::error::{Error, Result};
use crate::extend::low_rank::LowRank;
use crate::extend::{by_chunks, Column, Extension};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::Kernel;
use crate::methods::OutOfSample;
use crate::validate;
use faer::{Mat, MatRef, Par};

/// The matrices of the low-rank extension and the pivots' points.
#[derive(Clone, Debug)]
pub(super) struct LowRankParts {
    core: LowRank,
    /// The pivots' rows and squared norms.
    px: Mat<f64>,
    px_sq: Vec<f64>,
}

impl FittedKernelPca {
    /// Refuses, by name, a model the low-rank extension cannot serve.
    pub(super) fn check_low_rank(&self) -> Result<()> {
        if self.params.kernel == Kernel::Precomputed {
            return Err(Error::Unsupported(
                "the low-rank extension computes kernel values at the pivots; with a \
                 precomputed kernel use the exact extension"
                    .into(),
            ));
        }
        if !self.params.kernel.is_positive_definite(self.x.ncols()) {
            return Err(Error::param(
                "extension",
                format!(
                    "low-rank needs a positive definite kernel (its certificate is a power \
                     function); {} is not",
                    self.params.kernel.name()
                ),
            ));
        }
        Ok(())
    }

    fn low_rank_parts(&self) -> Result<&LowRankParts> {
        self.check_low_rank()?;
        if let Some(p) = self.low_rank.0.get() {
            return Ok(p);
        }
        let kernel = self.params.kernel;
        let chol = self.residual.cholesky();
        let x = self.x.view();
        let px = Mat::from_fn(chol.rank(), x.ncols(), |a, c| x[(chol.pivots[a], c)]);
        let px_sq = row_sq_norms(px.as_ref());
        let k_px = kernel.block(px.as_ref(), &px_sq, x, &self.x_sq, Par::rayon(0));
        let k_diag: Vec<f64> = self.x_sq.iter().map(|&s| kernel.diag_value(s)).collect();
        let centring = self.params.centering.then_some(&self.means);
        let core = LowRank::new(chol, k_px.as_ref(), &k_diag, &self.eigenvalues, |rows| {
            self.projector.project(rows, centring)
        });
        let parts = LowRankParts { core, px, px_sq };
        Ok(self.low_rank.0.get_or_init(|| parts))
    }

    /// The low-rank extension of the rows of `new` (maths §20): coordinates through the
    /// r pivots of the fit's pivoted Cholesky factorisation (`residual_rank` in the
    /// info) instead of all N training points, with the column `lowrank_bound`, a
    /// bound on the distance ‖y(z) − y^P(z)‖₂ to the exact extension
    /// ([`OutOfSample::extend`](crate::methods::OutOfSample::extend)). `residual` is
    /// P_P(z)² as in the exact extension; `reconstruction_error` uses the Nyström row.
    /// Row by row (sample-wise). Refused for a precomputed kernel and a kernel that is
    /// not positive definite.
    ///
    /// ```
    /// use oose::methods::kernel_pca::KernelPca;
    /// use oose::methods::OutOfSample;
    /// let x = oose::datasets::swiss_roll(300, 0.0, false, 0).points;
    /// let m = KernelPca { n_components: 2, ..Default::default() }.fit(x.as_ref()).unwrap();
    /// let z = oose::datasets::swiss_roll(20, 0.0, false, 1).points;
    /// let exact = m.extend(z.as_ref()).unwrap().coordinates;
    /// let fast = m.extend_low_rank(z.as_ref()).unwrap();
    /// let bound = &fast.extra.iter().find(|c| c.name == "lowrank_bound").unwrap().values;
    /// for i in 0..20 {
    ///     let dev = ((exact[(i, 0)] - fast.coordinates[(i, 0)]).powi(2)
    ///         + (exact[(i, 1)] - fast.coordinates[(i, 1)]).powi(2))
    ///     .sqrt();
    ///     assert!(dev <= bound[i]);
    /// }
    /// ```
    pub fn extend_low_rank(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("new points", new, self.x.ncols())?;
        validate::finite("new points", new)?;
        let parts = self.low_rank_parts()?;
        let kernel = self.params.kernel;
        let d = self.eigenvalues.len();
        by_chunks(new, parts.px.nrows().max(1), d, |_, z| {
            let z_sq = row_sq_norms(z);
            let k_zp = kernel.block(z, &z_sq, parts.px.as_ref(), &parts.px_sq, Par::Seq);
            let kzz: Vec<f64> = z_sq.iter().map(|&s| kernel.diag_value(s)).collect();
            let (y, residual, bound, mz) = parts.core.extend(k_zp.as_ref(), &kzz);
            let reconstruction_error = self.reconstruction_errors(y.as_ref(), &kzz, &mz);
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

    /// `extension = auto` (maths §20): each row through the pivots when its
    /// `lowrank_bound` is at most `tolerance` × the embedding's largest |coordinate|,
    /// else exactly (its bound then 0). Row by row, so independent of the batch.
    pub fn extend_auto(&self, new: MatRef<'_, f64>, tolerance: f64) -> Result<Extension> {
        let mut fast = self.extend_low_rank(new)?;
        let limit = tolerance * self.embedding.view().norm_max();
        let slow: Vec<usize> = {
            let b = &fast.extra[0].values;
            (0..b.len())
                .filter(|&i| !b[i].is_finite() || b[i] > limit)
                .collect()
        };
        if slow.is_empty() {
            return Ok(fast);
        }
        let rows = Mat::from_fn(slow.len(), new.ncols(), |a, c| new[(slow[a], c)]);
        let exact = self.extend(rows.as_ref())?;
        for (a, &i) in slow.iter().enumerate() {
            for j in 0..fast.coordinates.ncols() {
                fast.coordinates[(i, j)] = exact.coordinates[(a, j)];
            }
            fast.residual[i] = exact.residual[a];
            fast.reconstruction_error[i] = exact.reconstruction_error[a];
            fast.extra[0].values[i] = 0.0;
        }
        Ok(fast)
    }
}
