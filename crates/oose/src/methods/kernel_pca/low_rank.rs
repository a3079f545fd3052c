//! Kernel PCA's certified low-rank extension (maths §20): the projection through the
//! fit's pivots, with the per-point bound on its distance from the exact extension.

use super::FittedKernelPca;
use crate::error::Result;
use crate::extend::low_rank::{self, LowRankParts};
use crate::extend::Extension;
use crate::methods::OutOfSample;
use crate::validate;
use faer::MatRef;

impl FittedKernelPca {
    fn low_rank_parts(&self) -> Result<&LowRankParts> {
        low_rank::cached(&self.low_rank, self.params.kernel, self.x.ncols(), || {
            let min = self
                .eigenvalues
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            let centring = self.params.centering.then_some(&self.means);
            LowRankParts::new(
                self.params.kernel,
                self.x.view(),
                &self.x_sq,
                self.residual.cholesky(),
                1.0 / min.sqrt(),
                |rows| self.projector.project(rows, centring),
            )
        })
    }

    /// The low-rank extension of the rows of `new` (maths §20): coordinates through the
    /// r pivots of the fit's pivoted Cholesky factorisation (`residual_rank` in the
    /// info) instead of all N training points, with the column `lowrank_bound`, a
    /// bound on the distance ‖y(z) − y^P(z)‖₂ to the exact extension
    /// ([`OutOfSample::extend`]). `residual` is
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
        self.low_rank_parts()?
            .extend(new, |y, kzz, mz| self.reconstruction_errors(y, kzz, mz))
    }

    /// `extension = auto` (maths §20): each row through the pivots when its
    /// `lowrank_bound` is at most `tolerance` × the embedding's largest |coordinate|,
    /// else exactly (its bound then 0). Row by row, so independent of the batch.
    pub fn extend_auto(&self, new: MatRef<'_, f64>, tolerance: f64) -> Result<Extension> {
        let fast = self.extend_low_rank(new)?;
        let limit = tolerance * self.embedding.view().norm_max();
        low_rank::auto(fast, new, limit, |rows| self.extend(rows))
    }
}
