//! Kernel PCA's extension of new points (maths §3–5): kernel rows against the training
//! points, the projection (or restricted reconstruction) and, when asked for, the
//! residual and the reconstruction error; joint restricted reconstruction and the arc.

use super::{FittedKernelPca, KernelPca};
use crate::error::{Error, Result};
use crate::extend::projection::Projector;
use crate::extend::restricted::{self, apply_strategy, restricted_joint, Joint};
use crate::extend::{by_chunks, Extension, Strategy};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::Kernel;
use crate::methods::OutOfSample;
use crate::model::method::{no_such_option, ExtendOptions, Fitted, Registered};
use crate::validate;
use faer::{Mat, MatRef, Par};

impl FittedKernelPca {
    /// Extends from kernel rows: `kz` (m×N) holds k(z, x_i), `kzz` the values k(z, z)
    /// when known (without them the residual is NaN and the reconstruction error uses
    /// NaN as well).
    pub fn extend_kernel_rows(
        &self,
        kz: MatRef<'_, f64>,
        kzz: Option<&[f64]>,
    ) -> Result<Extension> {
        self.kernel_rows(kz, kzz, true)
    }

    /// [`FittedKernelPca::extend_kernel_rows`], with the residual and the
    /// reconstruction error only when `diagnostics`.
    pub(super) fn kernel_rows(
        &self,
        kz: MatRef<'_, f64>,
        kzz: Option<&[f64]>,
        diagnostics: bool,
    ) -> Result<Extension> {
        validate::columns("kernel rows of new points", kz, self.n_train)?;
        validate::finite("kernel rows of new points", kz)?;
        if let Some(v) = kzz {
            if v.len() != kz.nrows() {
                return Err(Error::Shape {
                    what: "k(z, z) values",
                    expected: format!("{} values", kz.nrows()),
                    got: format!("{}", v.len()),
                });
            }
        }
        let d = self.eigenvalues.len();
        by_chunks(kz, self.n_train, d, |start, chunk| {
            let kzz = kzz.map(|v| &v[start..start + chunk.nrows()]);
            self.extend_block(chunk, kzz, Strategy::Projection, diagnostics)
        })
    }

    /// Extends with an explicit strategy (maths §5). Restricted reconstruction uses
    /// b = the (centred) kernel row and β = k̃(z, z); it adds the diagnostics columns
    /// `beta_minus_projection`, `objective_projection`, `objective_restricted`,
    /// `lambda` and `unique`. Needs k(z, z), so not available for a precomputed kernel.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        if strategy == Strategy::Projection {
            return self.extend(new);
        }
        // One place decides which options a precomputed kernel supports.
        self.check_options(&ExtendOptions {
            strategy: Some(strategy),
            ..Default::default()
        })?;
        self.extend_points(new, strategy, true)
    }

    /// Projections ŷ (k×d), centred mutual kernel β (k×k) and out-of-span parts ρ of a
    /// batch of new points: what joint restricted reconstruction and the arc need.
    fn restricted_inputs(&self, new: MatRef<'_, f64>) -> Result<(Mat<f64>, Mat<f64>, Vec<f64>)> {
        if self.params.kernel == Kernel::Precomputed {
            return Err(Error::Unsupported(
                "joint restricted reconstruction and the arc need kernel values among the new \
                 points; with a precomputed kernel fit mds --similarities instead"
                    .into(),
            ));
        }
        validate::finite_nonempty("new points", new)?;
        validate::columns("new points", new, self.x.ncols())?;
        let kernel = self.params.kernel;
        let z_sq = row_sq_norms(new);
        let kz = kernel.block(new, &z_sq, self.x.view(), &self.x_sq, Par::rayon(0));
        let kk = kernel.gram(new, Par::Seq);
        let k = new.nrows();
        let diag: Vec<f64> = (0..k).map(|p| kk[(p, p)]).collect();
        let means = self.params.centering.then_some(&self.means);
        let (y, mz) = self.projector.project(kz.as_ref(), means);
        let (_, rho) = Projector::beta_rho(
            kz.as_ref(),
            &mz,
            &diag,
            means,
            &self.eigenvalues,
            y.as_ref(),
        );
        let beta = restricted::centred_mutual(kk.as_ref(), means.map(|mn| (&mz[..], mn.grand)));
        Ok((y, beta, rho))
    }

    /// Joint restricted reconstruction of the rows of `new` (maths §5), with their mutual
    /// kernel values computed.
    pub fn extend_joint(&self, new: MatRef<'_, f64>) -> Result<Joint> {
        let (y, beta, rho) = self.restricted_inputs(new)?;
        Ok(restricted_joint(&self.eigenvalues, &y, &beta, &rho))
    }

    /// `steps + 1` points of the arc from projection to restricted reconstruction for
    /// each new point: `(point, λ, y)`.
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        let (y, beta, _) = self.restricted_inputs(new)?;
        Ok(restricted::arcs(
            &self.eigenvalues,
            y.as_ref(),
            |p| beta[(p, p)],
            steps,
        ))
    }

    /// The extension of points by `strategy`, with the residual and the reconstruction
    /// error only when `diagnostics` (the residual's triangular solve against the
    /// residual factor, r²·m multiply–adds, is the costliest part where r is large).
    pub(super) fn extend_points(
        &self,
        new: MatRef<'_, f64>,
        strategy: Strategy,
        diagnostics: bool,
    ) -> Result<Extension> {
        validate::columns("new points", new, self.x.ncols())?;
        validate::finite("new points", new)?;
        let d = self.eigenvalues.len();
        let kernel = self.params.kernel;
        by_chunks(new, self.n_train, d, |_, z| {
            let z_sq = row_sq_norms(z);
            let kz = kernel.block(z, &z_sq, self.x.view(), &self.x_sq, Par::Seq);
            let kzz: Vec<f64> = z_sq.iter().map(|&s| kernel.diag_value(s)).collect();
            self.extend_block(kz.as_ref(), Some(&kzz), strategy, diagnostics)
        })
    }

    /// ‖φ̃(z)‖² − ‖y‖² per row (clamped at 0): k(z, z), centred with the row means
    /// `mz` of the kernel rows when the model centres.
    pub(super) fn reconstruction_errors(
        &self,
        y: MatRef<'_, f64>,
        kzz: &[f64],
        mz: &[f64],
    ) -> Vec<f64> {
        (0..y.nrows())
            .map(|i| {
                let kt = if self.params.centering {
                    kzz[i] - 2.0 * mz[i] + self.means.grand
                } else {
                    kzz[i]
                };
                let norm2: f64 = (0..y.ncols()).map(|j| y[(i, j)] * y[(i, j)]).sum();
                (kt - norm2).max(0.0)
            })
            .collect()
    }

    /// Core of the extension for one block of kernel rows.
    fn extend_block(
        &self,
        kz: MatRef<'_, f64>,
        kzz: Option<&[f64]>,
        strategy: Strategy,
        diagnostics: bool,
    ) -> Result<Extension> {
        let m = kz.nrows();
        let centring = self.params.centering.then_some(&self.means);
        let (mut y, mz) = self.projector.project(kz, centring);
        let (residual, reconstruction_error) = match kzz.filter(|_| diagnostics) {
            None => (vec![f64::NAN; m], vec![f64::NAN; m]),
            Some(kzz) => {
                let res = self.residual.residuals(kz, kzz);
                let rec = self.reconstruction_errors(y.as_ref(), kzz, &mz);
                (res, rec)
            }
        };
        let extra = match (strategy, kzz) {
            (Strategy::Projection, _) => Vec::new(),
            (Strategy::Interpolation | Strategy::Optimize, _) => {
                return Err(Error::param(
                    "strategy",
                    no_such_option(KernelPca::NAME, strategy.name()),
                ))
            }
            (Strategy::Restricted, None) => {
                return Err(Error::Unsupported(
                    "restricted reconstruction needs k(z, z)".into(),
                ))
            }
            (Strategy::Restricted, Some(kzz)) => {
                let (beta, rho) =
                    Projector::beta_rho(kz, &mz, kzz, centring, &self.eigenvalues, y.as_ref());
                apply_strategy(&self.eigenvalues, &mut y, &beta, &rho, strategy)?
            }
        };
        Ok(Extension {
            coordinates: y,
            residual,
            reconstruction_error,
            extra,
        })
    }
}
