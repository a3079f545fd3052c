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
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{no_such_option, points_only, ExtendOptions, Fitted, Input, Method};
use crate::model::params::ParamSpec;
use crate::model::specs::{fmt_list, N_COMPONENTS, RANK_TOLERANCE};
use crate::validate;
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par, Side};
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
        validate::finite_nonempty("training data", x)?;
        let (n, dim) = (x.nrows(), x.ncols());
        let d = self.n_components;
        if d == 0 || d > n.min(dim) {
            return Err(Error::param(
                "n_components",
                format!("must be between 1 and min(N, D) = {}, got {d}", n.min(dim)),
            ));
        }
        let mean: Vec<f64> = (0..dim)
            .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64)
            .collect();
        let xc = Mat::from_fn(n, dim, |i, j| x[(i, j)] - mean[j]);
        let svd = xc
            .thin_svd()
            .map_err(|e| Error::Eigensolver(format!("SVD failed: {e:?}")))?;
        let s = svd.S().column_vector();
        let eigenvalues: Vec<f64> = (0..d).map(|j| s[j] * s[j]).collect();
        let tol = self.rank_tolerance * (s[0] * s[0]);
        if eigenvalues[d - 1] <= tol || eigenvalues[d - 1] <= 0.0 {
            return Err(Error::NotEnoughPositiveEigenvalues {
                requested: d,
                available: eigenvalues.iter().filter(|&&v| v > tol && v > 0.0).count(),
                value: eigenvalues[d - 1],
                tolerance: tol,
            });
        }
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
        // Span of the uncentred points: eigenvectors of XᵀX above the same relative
        // tolerance as the rank of K = XXᵀ (maths §4).
        let gram = x.transpose() * x;
        let evd = gram
            .self_adjoint_eigen(Side::Lower)
            .map_err(|e| Error::Eigensolver(format!("eigendecomposition of XᵀX failed: {e:?}")))?;
        let ev = evd.S().column_vector();
        let top = ev[dim - 1].max(0.0);
        let keep: Vec<usize> = (0..dim)
            .filter(|&j| ev[j] > self.rank_tolerance * top && ev[j] > 0.0)
            .collect();
        let row_space = Mat::from_fn(dim, keep.len(), |i, j| evd.U()[(i, keep[j])]);
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
        let mut y = Mat::<f64>::zeros(m, d);
        matmul(
            y.as_mut(),
            Accum::Replace,
            zc.as_ref(),
            self.components.view(),
            1.0,
            Par::Seq,
        );
        let r = self.row_space.ncols();
        let mut p = Mat::<f64>::zeros(m, r);
        matmul(
            p.as_mut(),
            Accum::Replace,
            z,
            self.row_space.view(),
            1.0,
            Par::Seq,
        );
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
    const NAME: &'static str = "pca";
    const ABOUT: &'static str = "Linear PCA (maths §2)";

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
            "strategy" => "restricted reconstruction is for similarity-based models (mds, \
                           landmark-mds, isomap, kpca); PCA of points is classical MDS: fit \
                           `mds` instead"
                .into(),
            o => no_such_option(Pca::NAME, o),
        })
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("eigenvalues".into(), fmt_list(self.eigenvalues())));
        v.push(("residual_rank".into(), self.residual_rank().to_string()));
        v.push((
            "rank_tolerance".into(),
            format!("{:?}", self.params.rank_tolerance),
        ));
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(&self.eigenvalues)
    }
}
