//! Linear PCA (maths §2): centre by the mean, thin SVD X̃ = U Σ Vᵀ, training scores
//! U_d Σ_d, extension y(z) = V_dᵀ (z − x̄). The same numbers as kernel PCA with the
//! linear kernel (tested), at O(N D²) instead of O(N³).
//!
//! Diagnostics with k(x, y) = xᵀy: residual(z) = ||z||² − ||P z||² with P the projector
//! on the span of the (uncentred) training points; reconstruction_error(z) =
//! ||z − x̄||² − ||y(z)||².

use crate::error::{Error, Result};
use crate::extend::{by_chunks, Extension};
use crate::linalg::eigen::apply_sign_rule;
use crate::linalg::memory;
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, points_only, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::ParamSpec;
use crate::model::specs::{fmt_list, put_debug, N_COMPONENTS, RANK_TOLERANCE};
use crate::validate;
use faer::{Mat, MatRef, Par, Side};
use serde::{Deserialize, Serialize};

/// PCA parameters.
///
/// ```
/// use oose::methods::{pca::Pca, OutOfSample};
/// let x = oose::datasets::s_curve(200, 0.0, 1).points;
/// let model = Pca { n_components: 2, ..Default::default() }.fit(x.as_ref()).unwrap();
/// let ext = model.extend(x.as_ref()).unwrap();
/// assert!((ext.coordinates[(7, 1)] - model.embedding()[(7, 1)]).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pca {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Relative tolerance on eigenvalues σ² (default 1e-12).
    pub rank_tolerance: f64,
}

impl Default for Pca {
    fn default() -> Self {
        Pca {
            n_components: 2,
            rank_tolerance: 1e-12,
        }
    }
}

/// A fitted PCA model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedPca {
    params: Pca,
    mean: Vec<f64>,
    /// V_d (D×d), signs fixed by the sign rule on the scores.
    components: StoredMat,
    /// σ_j² (the eigenvalues of the centred Gram matrix), largest first.
    eigenvalues: Vec<f64>,
    embedding: StoredMat,
    /// Orthonormal basis (D×r) of the span of the uncentred training points.
    row_space: StoredMat,
}

impl Pca {
    /// Fits on the rows of `x` (N×D).
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedPca> {
        validate::training_points("training data", x)?;
        validate::rank_tolerance(self.rank_tolerance)?;
        let (n, dim) = (x.nrows(), x.ncols());
        let d = self.n_components;
        if d == 0 || d > n.min(dim) {
            return Err(Error::param(
                "n_components",
                format!("must be between 1 and min(N, D) = {}, got {d}", n.min(dim)),
            ));
        }
        // The centred copy, its SVD factors and the span basis are N×D each; the
        // Gram matrix is min(N, D)² (the N×N route when D > N).
        memory::plan("PCA (copies of the N×D data)", 4, n, dim)?;
        let mean = crate::linalg::center::column_means(x);
        let xc = Mat::from_fn(n, dim, |i, j| x[(i, j)] - mean[j]);
        let svd = xc
            .thin_svd()
            .map_err(|e| Error::Eigensolver(format!("SVD failed: {e:?}")))?;
        let s = svd.S().column_vector();
        let eigenvalues: Vec<f64> = (0..d).map(|j| s[j] * s[j]).collect();
        crate::linalg::eigen::require_positive(&eigenvalues, d, self.rank_tolerance)?;
        let mut scores = Mat::from_fn(n, d, |i, j| svd.U()[(i, j)] * s[j]);
        let flipped = apply_sign_rule(scores.as_mut());
        let components = Mat::from_fn(dim, d, |i, j| {
            let v = svd.V()[(i, j)];
            if flipped[j] {
                -v
            } else {
                v
            }
        });
        let row_space = row_space(x, self.rank_tolerance)?;
        Ok(FittedPca {
            params: self.clone(),
            mean,
            components: StoredMat::from_mat(components.as_ref()),
            eigenvalues,
            embedding: StoredMat::from_mat(scores.as_ref()),
            row_space: StoredMat::from_mat(row_space.as_ref()),
        })
    }
}

/// An orthonormal basis (D×r) of the span of the uncentred training points: the
/// eigenvectors of XᵀX above the same relative tolerance as the rank of K = XXᵀ
/// (maths §4). With more coordinates than points (D > N) it comes from the N×N matrix
/// XXᵀ = UΛUᵀ, as XᵀU Λ^(−1/2) orthonormalised, never from the D×D one.
fn row_space(x: MatRef<'_, f64>, tolerance: f64) -> Result<Mat<f64>> {
    let (n, dim) = (x.nrows(), x.ncols());
    let gram = if dim > n {
        x * x.transpose()
    } else {
        x.transpose() * x
    };
    let evd = gram.self_adjoint_eigen(Side::Lower).map_err(|e| {
        Error::Eigensolver(format!(
            "eigendecomposition of the Gram matrix failed: {e:?}"
        ))
    })?;
    let ev = evd.S().column_vector();
    let m = gram.nrows();
    let top = ev[m - 1].max(0.0);
    let keep: Vec<usize> = (0..m)
        .filter(|&j| ev[j] > tolerance * top && ev[j] > 0.0)
        .collect();
    if dim <= n {
        return Ok(Mat::from_fn(dim, keep.len(), |i, j| evd.U()[(i, keep[j])]));
    }
    let u = Mat::from_fn(n, keep.len(), |i, j| {
        evd.U()[(i, keep[j])] / ev[keep[j]].sqrt()
    });
    let v = x.transpose() * u;
    // One QR pass restores orthonormality lost to the smaller eigenvalues.
    Ok(v.qr().compute_thin_Q())
}

impl FittedPca {
    /// The parameters used.
    pub fn params(&self) -> &Pca {
        &self.params
    }

    /// σ_j², largest first.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The training mean x̄.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Principal axes V_d (D×d) as columns.
    pub fn components(&self) -> MatRef<'_, f64> {
        self.components.view()
    }

    /// Rank of the span of the training points.
    pub fn residual_rank(&self) -> usize {
        self.row_space.ncols()
    }

    fn extend_block(&self, z: MatRef<'_, f64>) -> Extension {
        let (m, dim, d) = (z.nrows(), z.ncols(), self.eigenvalues.len());
        let zc = Mat::from_fn(m, dim, |i, j| z[(i, j)] - self.mean[j]);
        let y = crate::linalg::product(zc.as_ref(), self.components.view(), Par::Seq);
        let r = self.row_space.ncols();
        let p = crate::linalg::product(z, self.row_space.view(), Par::Seq);
        let mut residual = Vec::with_capacity(m);
        let mut rec = Vec::with_capacity(m);
        for i in 0..m {
            let zz: f64 = (0..dim).map(|j| z[(i, j)] * z[(i, j)]).sum();
            let pp: f64 = (0..r).map(|j| p[(i, j)] * p[(i, j)]).sum();
            residual.push((zz - pp).max(0.0));
            let cc: f64 = (0..dim).map(|j| zc[(i, j)] * zc[(i, j)]).sum();
            let yy: f64 = (0..d).map(|j| y[(i, j)] * y[(i, j)]).sum();
            rec.push((cc - yy).max(0.0));
        }
        Extension {
            coordinates: y,
            residual,
            reconstruction_error: rec,
            extra: Vec::new(),
        }
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let dim = self.mean.len();
        let d = self.eigenvalues.len();
        self.components.is_consistent()
            && self.embedding.is_consistent()
            && self.row_space.is_consistent()
            && (self.components.nrows(), self.components.ncols()) == (dim, d)
            && self.embedding.ncols() == d
            && self.row_space.nrows() == dim
            && d >= 1
    }
}

impl OutOfSample for FittedPca {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("new points", new, self.mean.len())?;
        validate::finite("new points", new)?;
        by_chunks(
            new,
            self.mean.len().max(64),
            self.eigenvalues.len(),
            |_, z| Ok(self.extend_block(z)),
        )
    }

    fn input_width(&self) -> usize {
        self.mean.len()
    }
}

impl Method for Pca {
    type Fitted = FittedPca;

    const SPECS: &'static [ParamSpec] = &[N_COMPONENTS, RANK_TOLERANCE];

    crate::params_as_data!(Pca {
        n_components,
        rank_tolerance
    });

    fn fit_input(&self, input: Input<'_>) -> Result<FittedPca> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedPca {
    crate::fitted_basics!();

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&[], |o| match o {
            "restricted" => "restricted reconstruction is for similarity-based models (mds, \
                           landmark-mds, isomap, kpca); PCA of points is classical MDS: fit \
                           `mds` instead"
                .into(),
            o => no_such_option(Pca::NAME, o),
        })
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("eigenvalues".into(), fmt_list(self.eigenvalues())));
        v.push(("residual_rank".into(), self.residual_rank().to_string()));
        put_debug(v, "rank_tolerance", self.params.rank_tolerance);
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(&self.eigenvalues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With more coordinates than points, the span comes from the N×N Gram matrix: an
    /// orthonormal basis holding every training row, and residuals that agree with the
    /// D×D route on the same data.
    #[test]
    fn wide_data_takes_the_n_by_n_route_to_the_same_span() {
        let mut rng = crate::rng::Rng::new(4);
        let x = rng.normal_mat(12, 300);
        let v = row_space(x.as_ref(), 1e-12).unwrap();
        assert_eq!((v.nrows(), v.ncols()), (300, 12));
        let vtv = v.transpose() * &v;
        let eye = Mat::<f64>::identity(12, 12);
        assert!((&vtv - &eye).norm_max() < 1e-12);
        // Every training row lies in the span: ‖x − VVᵀx‖ ≈ 0.
        let back = (&x * &v) * v.transpose();
        assert!((&back - &x).norm_max() < 1e-10 * x.norm_max());
        // A QR basis of Xᵀ spans the same space: the same residuals for new points.
        let m = Pca::default().fit(x.as_ref()).unwrap();
        let z = rng.normal_mat(3, 300);
        let e = m.extend(z.as_ref()).unwrap();
        let direct = {
            let xt = x.transpose().to_owned();
            let q = xt.qr().compute_thin_Q();
            let p = &z * &q;
            (0..3)
                .map(|i| {
                    let zz: f64 = (0..300).map(|j| z[(i, j)] * z[(i, j)]).sum();
                    let pp: f64 = (0..12).map(|j| p[(i, j)] * p[(i, j)]).sum();
                    zz - pp
                })
                .collect::<Vec<_>>()
        };
        for (got, want) in e.residual.iter().zip(&direct) {
            assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
        }
        let t = m.extend(x.as_ref().subrows(0, 2)).unwrap();
        assert!(t.residual.iter().all(|r| *r < 1e-9 * 300.0));
    }
}
