//! Laplacian eigenmaps (maths §7): ψ_j/ψ₀ of the α = 0 diffusion kernel, Laplacian eigenvalues 1 − λ.

use super::params::{diffusion_info, fit_time_policy, KERNEL, ON_ISOLATED};
#[allow(unused_imports)]
use super::*;
use crate::extend::Extension;
use crate::model::method::points_only;
use crate::model::method::{Configuration, ExtendOptions, Fitted, Input, Method, Registered};
use crate::model::params::{join, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, N_COMPONENTS, RANK_TOLERANCE, SOLVER};

/// Laplacian eigenmaps (maths §7): the diffusion kernel's eigenvectors, output ψ_j/ψ₀
/// (the generalised eigenvectors of L f = μ D f with μ = 1 − λ). Default α = 0 (the
/// graph Laplacian of the weights).
///
/// ```
/// use oose::methods::diffusion_maps::{LaplacianEigenmaps, Sparsity, Epsilon};
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(300, 0.0, false, 0).points;
/// let m = LaplacianEigenmaps { n_components: 2, ..Default::default() }
///     .fit(x.as_ref()).unwrap();
/// assert!(m.laplacian_eigenvalues()[0] > 0.0);
/// let e = m.extend(x.as_ref().subrows(5, 1)).unwrap();
/// assert!((e.coordinates[(0, 1)] - m.embedding()[(5, 1)]).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaplacianEigenmaps {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Weights (default: median ε, kNN 10, α = 0).
    pub kernel: DiffusionKernel,
    /// Eigensolver (default `Auto`).
    pub solver: Solver,
    /// New points without neighbours (default `Error`).
    pub on_isolated: OnIsolated,
    /// Eigenvalues at most this are not accepted (1e-12).
    pub rank_tolerance: f64,
}

impl Default for LaplacianEigenmaps {
    fn default() -> Self {
        LaplacianEigenmaps {
            n_components: 2,
            kernel: DiffusionKernel {
                epsilon: Epsilon::Median,
                sparsity: Sparsity::Knn(10),
                alpha: 0.0,
            },
            solver: Solver::Auto,
            on_isolated: OnIsolated::Error,
            rank_tolerance: 1e-12,
        }
    }
}

impl LaplacianEigenmaps {
    /// Fits on the rows of `x`.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedEigenmaps> {
        // ψ_j/ψ₀ is the diffusion map's `diffusion` output at t = 0.
        let m = DiffusionMaps {
            n_components: self.n_components,
            kernel: self.kernel,
            t: 0.0,
            output: Output::Diffusion,
            solver: self.solver,
            on_isolated: self.on_isolated,
            residual: Some(false),
            rank_tolerance: self.rank_tolerance,
            ..Default::default()
        }
        .fit(x)?;
        Ok(FittedEigenmaps {
            params: self.clone(),
            embedding: m.embedding,
            core: m.core,
        })
    }
}

/// Fitted Laplacian eigenmaps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedEigenmaps {
    pub(crate) params: LaplacianEigenmaps,
    pub(crate) embedding: StoredMat,
    pub(crate) core: DiffusionCore,
}

impl FittedEigenmaps {
    /// Parameters as given.
    pub fn params(&self) -> &LaplacianEigenmaps {
        &self.params
    }

    /// Kernel, eigenpairs, ε used.
    pub fn core(&self) -> &DiffusionCore {
        &self.core
    }

    /// Eigenvalues μ_j = 1 − λ_j of the normalised Laplacian, j = 1..d.
    pub fn laplacian_eigenvalues(&self) -> Vec<f64> {
        self.core.values[1..].iter().map(|l| 1.0 - l).collect()
    }

    pub(crate) fn is_consistent(&self) -> bool {
        self.core.holds(&self.embedding, self.params.n_components)
    }
}

impl OutOfSample for FittedEigenmaps {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        let mut e = self
            .core
            .extend_psi(new, Density::Training, self.params.on_isolated, true)?;
        e.coordinates = flavour(
            e.coordinates.as_ref(),
            &self.core.values,
            self.params.n_components,
            Output::Diffusion,
            0.0,
        );
        self.core.relative_degree(&mut e);
        Ok(e)
    }

    fn input_width(&self) -> usize {
        self.core.input_width()
    }
}

impl Method for LaplacianEigenmaps {
    type Fitted = FittedEigenmaps;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &join::<9>(&[
        NO_PARAMS,
        &[N_COMPONENTS],
        &KERNEL,
        &[SOLVER, ON_ISOLATED, RANK_TOLERANCE],
    ]);

    crate::params_as_data!(LaplacianEigenmaps {
        n_components,
        kernel,
        solver,
        on_isolated,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        vec![
            Configuration::exact("knn-10", Values::new()),
            Configuration::exact("dense", Values::new().with("sparsity", "dense")),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedEigenmaps> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedEigenmaps {
    crate::fitted_basics!(points: core.x, warnings: core.warnings, novelty: core.fit_novelty);

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        fit_time_policy(LaplacianEigenmaps::NAME, opts)
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        diffusion_info(v, self.core());
        v.push((
            "laplacian_eigenvalues".into(),
            fmt_list(&self.laplacian_eigenvalues()),
        ));
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(self.core().eigenvalues())
    }
}
