//! Kernel PCA with Nyström extension (maths §3), centred or uncentred (Mercer), with the
//! per-point residual kernel and reconstruction error (maths §4).
//!
//! Fit: K̃ = H K H (or K), K̃ = U Λ Uᵀ, Y = U_d Λ_d^{1/2}. Extend: k̃_z centred with the
//! training means, y(z) = Λ_d^{−1/2} U_dᵀ k̃_z. Extending a training point returns its
//! training row to round-off ([Wang 2018] Cor. 13).

use crate::diagnostics::residual::ResidualFactor;
use crate::error::{Error, Result};
use crate::extend::projection::Projector;
use crate::extend::{Extension, ExtensionChoice, Strategy};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::params::KERNEL_SPECS;
use crate::kernel::Kernel;
use crate::linalg::center::KernelMeans;
use crate::linalg::eigen::{top_eigen, top_eigen_of_factor, Route, Solver, Structure};
use crate::linalg::pivoted_cholesky::factorize_blocks;
use crate::linalg::stored::StoredMat;
use crate::methods::mds::Proximity;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, Configuration, ExtendOptions, Fitted, InnerProduct, Input, Method, Registered,
};
use crate::model::params::{join, Kind, ParamSpec, Value, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, put_debug, solver_info, N_COMPONENTS, RANK_TOLERANCE, SOLVER};
use crate::validate;
use faer::{Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

mod extend;
mod factor;
mod low_rank;
mod nystrom;
pub use nystrom::{FittedNystromKpca, InMemory, NystromKpca, NystromPlan, NystromSums, Rows, Sink};

/// Kernel PCA parameters.
///
/// ```
/// use oose::methods::kernel_pca::KernelPca;
/// use oose::methods::OutOfSample;
/// use oose::kernel::Kernel;
/// let x = oose::datasets::swiss_roll(300, 0.0, false, 0).points;
/// let model = KernelPca { n_components: 3, kernel: Kernel::gaussian(50.0), ..Default::default() }
///     .fit(x.as_ref())
///     .unwrap();
/// let ext = model.extend(x.as_ref().subrows(0, 5)).unwrap();
/// for i in 0..5 {
///     for j in 0..3 {
///         assert!((ext.coordinates[(i, j)] - model.embedding()[(i, j)]).abs() < 1e-9);
///     }
///     assert!(ext.residual[i] < 1e-10);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelPca {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// The kernel (default gaussian with ε = `auto`).
    pub kernel: Kernel,
    /// Double-centre K with the training means (default true); false is the Mercer form.
    pub centering: bool,
    /// Eigensolver (default `Auto`).
    pub solver: Solver,
    /// Relative tolerance: eigenvalues and pivots below `rank_tolerance · max` count as 0
    /// (default 1e-12).
    pub rank_tolerance: f64,
}

impl Default for KernelPca {
    fn default() -> Self {
        KernelPca {
            n_components: 2,
            kernel: Kernel::default(),
            centering: true,
            solver: Solver::Auto,
            rank_tolerance: 1e-12,
        }
    }
}

/// A fitted kernel PCA model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedKernelPca {
    params: KernelPca,
    /// Training points (N×D), or empty for a precomputed kernel.
    x: StoredMat,
    x_sq: Vec<f64>,
    n_train: usize,
    means: KernelMeans,
    eigenvalues: Vec<f64>,
    /// U_d Λ_d^{−1/2} (N×d): maps a (centred) kernel row to coordinates.
    /// U_d Λ_d^{−1/2} with what centres kernel rows on the fly.
    projector: Projector,
    embedding: StoredMat,
    residual: ResidualFactor,
    solver_used: Solver,
    solver_note: Option<String>,
    /// The low-rank extension's matrices, formed on first use (not stored).
    #[serde(skip)]
    low_rank: crate::extend::low_rank::LowRankCache,
}

impl KernelPca {
    /// Fits on the rows of `x` (N×D), or on the N×N kernel matrix `x` when the kernel
    /// is `Precomputed`.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedKernelPca> {
        let precomputed = self.kernel == Kernel::Precomputed;
        if let Kernel::Polyharmonic { .. } = self.kernel {
            return Err(Error::param(
                "kernel",
                "polyharmonic and thin-plate kernels are for interpolation only (maths §8)",
            ));
        }
        let what = if precomputed {
            "precomputed kernel matrix"
        } else {
            "training data"
        };
        if precomputed {
            validate::finite_nonempty(what, x)?;
        } else {
            validate::training_points(what, x)?;
        }
        validate::rank_tolerance(self.rank_tolerance)?;
        let n = x.nrows();
        if self.n_components == 0 || self.n_components > n {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be between 1 and the number of training points ({n}), got {}",
                    self.n_components
                ),
            ));
        }
        let d = self.n_components;
        let kernel = if precomputed {
            validate::square_symmetric("precomputed kernel matrix", x)?;
            Kernel::Precomputed
        } else {
            self.kernel.resolve(x)?
        };
        let structure = if precomputed {
            Structure::Factorable
        } else if kernel.is_positive_definite(x.ncols()) {
            Structure::PsdKernel
        } else {
            Structure::Plain
        };
        // The route refuses low-rank for a kernel that is not positive definite here.
        let (route, _) = self.solver.route(n, d, structure)?;
        let mut fallback_note = None;
        // `auto` on points: a sample first, when it alone shows the attempt would fail.
        let sampled = match route {
            Route::LowRank { max_rank } if self.solver == Solver::Auto && !precomputed => {
                factor::sample_rank_exceeds(x, kernel, self.rank_tolerance, max_rank)?
                    .map(|m| (m, max_rank))
            }
            _ => None,
        };
        let fitted = if let Some((m, max_rank)) = sampled {
            fallback_note = Some(format!(
                "numerical rank of a sample of {m} points above {max_rank} (N/4): used the \
                 N×N solver"
            ));
            None
        } else if let Route::LowRank { max_rank } = route {
            let f = if precomputed {
                let diag = (0..n).map(|i| x[(i, i)]).collect();
                factorize_blocks(diag, self.rank_tolerance, max_rank, |ps, mut out| {
                    for (a, &p) in ps.iter().enumerate() {
                        for i in 0..n {
                            out[(i, a)] = 0.5 * (x[(i, p)] + x[(p, i)]);
                        }
                    }
                })
            } else {
                kernel.pivoted_factor(x, self.rank_tolerance, max_rank)?
            };
            if f.complete {
                let means = KernelMeans::of_factor(f.g.as_ref());
                let mut g = f.g;
                if self.centering {
                    for j in 0..g.ncols() {
                        let col = g.col_as_slice_mut(j);
                        let mean = col.iter().sum::<f64>() / n as f64;
                        col.iter_mut().for_each(|v| *v -= mean);
                    }
                }
                let eig = top_eigen_of_factor(g.as_ref(), d, self.rank_tolerance)?;
                let residual = ResidualFactor::from_cholesky(f.chol, self.rank_tolerance);
                Some((means, residual, eig))
            } else {
                fallback_note = Some(format!(
                    "numerical rank of K above {max_rank} (N/4): used the N×N solver"
                ));
                None
            }
        } else {
            None
        };
        let (means, residual, mut eig) = match fitted {
            Some(f) => f,
            None => {
                let mut k = if precomputed {
                    let mut k = x.to_owned();
                    crate::kernel::distance::symmetrize(&mut k);
                    k
                } else {
                    crate::linalg::memory::plan("kernel matrix (N×N)", 3, n, n)?;
                    let k = kernel.gram(x, Par::rayon(0));
                    validate::computed_finite("kernel matrix", k.as_ref())?;
                    k
                };
                let means = KernelMeans::of(&k);
                let residual = ResidualFactor::new(k.as_ref(), self.rank_tolerance);
                if self.centering {
                    means.center(&mut k);
                }
                // The N×N route: the one requested, or `Auto`'s after the low-rank one.
                let solver = match route {
                    Route::LowRank { .. } => Solver::Auto,
                    r => r.solver(),
                };
                let eig = top_eigen(k.as_ref(), d, solver)?;
                (means, residual, eig)
            }
        };
        if eig.note.is_none() {
            eig.note = fallback_note;
        }
        crate::linalg::eigen::require_positive(&eig.values, d, self.rank_tolerance)?;
        let sqrt_l: Vec<f64> = eig.values.iter().map(|v| v.sqrt()).collect();
        let u = eig.vectors;
        let embedding = Mat::from_fn(n, d, |i, j| u[(i, j)] * sqrt_l[j]);
        let projector = Projector::new(u.as_ref(), &eig.values, &means);
        let (xs, x_sq) = if precomputed {
            (StoredMat::default(), Vec::new())
        } else {
            (StoredMat::from_mat(x), row_sq_norms(x))
        };
        Ok(FittedKernelPca {
            params: KernelPca {
                kernel,
                ..self.clone()
            },
            x: xs,
            x_sq,
            n_train: n,
            means,
            eigenvalues: eig.values,
            projector,
            embedding: StoredMat::from_mat(embedding.as_ref()),
            residual,
            solver_used: eig.solver,
            solver_note: eig.note,
            low_rank: Default::default(),
        })
    }
}

impl FittedKernelPca {
    /// The parameters, with the kernel's ε as actually used.
    pub fn params(&self) -> &KernelPca {
        &self.params
    }

    /// The d eigenvalues of the (centred) kernel matrix, largest first.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The eigensolver actually used, and why it differs from the requested one.
    pub fn solver_used(&self) -> (Solver, Option<&str>) {
        (self.solver_used, self.solver_note.as_deref())
    }

    /// Numerical rank r of K kept for the residual kernel.
    pub fn residual_rank(&self) -> usize {
        self.residual.rank()
    }

    /// Number of training points N.
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let n = self.n_train;
        let d = self.eigenvalues.len();
        let points_ok = if self.params.kernel == Kernel::Precomputed {
            self.x.nrows() == 0
        } else {
            self.x.nrows() == n && self.x_sq.len() == n && self.x.is_consistent()
        };
        points_ok
            && d >= 1
            && self.embedding.is_consistent()
            && self.projector.is_shape(n, d)
            && (self.embedding.nrows(), self.embedding.ncols()) == (n, d)
            && self.means.row.len() == n
            && self.residual.is_consistent(n)
    }
}

impl OutOfSample for FittedKernelPca {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    /// For a precomputed kernel, `new` holds the kernel rows k(z, x_i) (M×N) and the
    /// residual is NaN; use [`FittedKernelPca::extend_kernel_rows`] to pass k(z, z).
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        if self.params.kernel == Kernel::Precomputed {
            return self.extend_kernel_rows(new, None);
        }
        self.extend_points(new, Strategy::Projection, true)
    }

    fn input_width(&self) -> usize {
        if self.params.kernel == Kernel::Precomputed {
            self.n_train
        } else {
            self.x.ncols()
        }
    }
}

crate::model::params::param_specs! {
    /// Kernel PCA's centring (also the Nyström fit's: centring its features is
    /// double-centring its kernel matrix).
    pub(super) CENTERING: "centering", "centering", Kind::Bool,
        "Double-centre the kernel matrix (`false`: the uncentred Mercer form).";
}

impl Method for KernelPca {
    type Fitted = FittedKernelPca;
    const LANDMARK_FORM: Option<&'static str> = Some(NystromKpca::NAME);

    const SPECS: &'static [ParamSpec] = &join::<10>(&[
        NO_PARAMS,
        &[N_COMPONENTS],
        &KERNEL_SPECS,
        &[CENTERING, SOLVER, RANK_TOLERANCE],
    ]);

    crate::params_as_data!(KernelPca {
        n_components,
        kernel,
        centering,
        solver,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        let c = |label, kernel: &str, eps: Value, centering: bool| {
            let v = Values::new()
                .with("kernel", kernel)
                .with("epsilon", eps)
                .with("centering", centering);
            let c = Configuration::exact(label, v);
            if centering {
                c.with_restricted()
            } else {
                c
            }
        };
        vec![
            c("gaussian-centred", "gaussian", "auto".into(), true),
            c("gaussian-uncentred", "gaussian", 2.0.into(), false),
            c("laplacian", "laplacian", "auto".into(), true),
            c(
                "inverse-multiquadric",
                "inverse_multiquadric",
                1.0.into(),
                true,
            ),
            c("wendland", "wendland", 4.0.into(), true),
            c("linear", "linear", "auto".into(), true),
            Configuration::exact(
                "polynomial-low-rank",
                Values::new()
                    .with("kernel", "polynomial")
                    .with("degree", 2usize)
                    .with("solver", "dense"),
            )
            .with_restricted(),
            Configuration::exact(
                "gaussian-low-rank",
                Values::new().with("solver", "low-rank"),
            )
            .with_restricted(),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedKernelPca> {
        match input {
            Input::Points(x) => self.fit(x),
            Input::Proximity(k, Proximity::Similarities) if self.kernel == Kernel::Precomputed => {
                self.fit(k)
            }
            other => Err(other.refused(
                Self::NAME,
                "points (or, with kernel = precomputed, the N×N kernel matrix)",
            )),
        }
    }
}

crate::inner_product_computing_mutual!(FittedKernelPca, KernelPca);

impl Fitted for FittedKernelPca {
    /// None for a precomputed kernel.
    fn training_stored(&self) -> Option<&StoredMat> {
        (self.params.kernel != Kernel::Precomputed).then_some(&self.x)
    }

    /// The kept training points; never the fitting input, which for a precomputed
    /// kernel is the kernel matrix, not points.
    fn novelty(
        &self,
        _input: Option<crate::model::Input<'_>>,
    ) -> Option<crate::diagnostics::novelty::Novelty> {
        self.training_points()
            .and_then(crate::diagnostics::novelty::Novelty::fit)
    }

    crate::fitted_basics!();

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&["restricted", "kernel_diagonal", "extension"], |o| {
            no_such_option(KernelPca::NAME, o)
        })?;
        let precomputed = self.params.kernel == Kernel::Precomputed;
        if opts.extension.is_some_and(|e| e != ExtensionChoice::Exact) {
            crate::extend::low_rank::check_kernel(self.params.kernel, self.x.ncols())?;
            if opts.strategy.is_some_and(|s| s != Strategy::Projection) {
                return Err(Error::param(
                    "extension",
                    "the low-rank extension is a projection; restricted reconstruction \
                     needs the exact kernel row (extension=exact)",
                ));
            }
        }
        if opts.kernel_diagonal.is_some() && !precomputed {
            return Err(Error::param(
                "kernel_diagonal",
                "applies only to models with a precomputed kernel",
            ));
        }
        if precomputed && opts.strategy.is_some_and(|s| s != Strategy::Projection) {
            return Err(Error::param(
                "strategy",
                "restricted reconstruction with a precomputed kernel needs k(z, z) and the \
                 kernel among new points; fit mds with --similarities instead",
            ));
        }
        Ok(())
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        let strategy = opts.strategy.unwrap_or_default();
        let diagnostics = !opts.coordinates_only;
        match (opts.kernel_diagonal, opts.extension) {
            (Some(d), _) => self.kernel_rows(new, Some(d), diagnostics),
            (None, Some(ExtensionChoice::LowRank)) => self.extend_low_rank(new),
            (None, Some(ExtensionChoice::Auto { tolerance })) => self.extend_auto(new, tolerance),
            (None, _) if self.params.kernel == Kernel::Precomputed => {
                self.kernel_rows(new, None, diagnostics)
            }
            (None, _) => self.extend_points(new, strategy, diagnostics),
        }
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = &self.params;
        v.push(("kernel".into(), p.kernel.name().into()));
        if let Some(e) = p.kernel.epsilon() {
            v.push(("epsilon".into(), format!("{e:?}")));
        }
        match p.kernel {
            Kernel::InverseMultiquadric { beta, .. } | Kernel::Multiquadric { beta, .. } => {
                v.push(("beta".into(), format!("{beta:?}")))
            }
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => {
                v.push(("gamma".into(), format!("{gamma:?}")));
                v.push(("coef0".into(), format!("{coef0:?}")));
                v.push(("degree".into(), degree.to_string()));
            }
            _ => {}
        }
        v.push(("centering".into(), p.centering.to_string()));
        solver_info(v, self.solver_used());
        v.push(("eigenvalues".into(), fmt_list(&self.eigenvalues)));
        v.push(("residual_rank".into(), self.residual_rank().to_string()));
        put_debug(v, "rank_tolerance", p.rank_tolerance);
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(&self.eigenvalues)
    }

    fn inner_product(&self) -> Option<&dyn InnerProduct> {
        Some(self)
    }

    fn row_description(&self) -> &'static str {
        if self.params.kernel == Kernel::Precomputed {
            "one kernel value per training point"
        } else {
            "the training data's dimension"
        }
    }

    fn kernel_on_points(&self) -> Option<(Kernel, MatRef<'_, f64>, f64)> {
        self.training_points()
            .map(|x| (self.params.kernel, x, self.params.rank_tolerance))
    }
}
