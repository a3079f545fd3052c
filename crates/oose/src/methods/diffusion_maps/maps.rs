//! Diffusion maps (maths §7): the four output flavours of the diffusion kernel's eigenvectors and their extension.

use super::params::{diffusion_info, KERNEL, ON_ISOLATED};
#[allow(unused_imports)]
use super::*;
use crate::extend::{Extension, ExtensionChoice};
use crate::model::method::points_only;
use crate::model::method::{
    no_such_option, Configuration, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::{join, Kind, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, put_debug, N_COMPONENTS, RANK_TOLERANCE, SOLVER};
use crate::validate;

/// Output coordinates of diffusion maps (maths §7), j = 1..d.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Output {
    /// λ_j^t ψ_j/ψ₀: Euclidean distance = diffusion distance at time t.
    #[default]
    Diffusion,
    /// λ_j^{1/2} ψ_j ([Wang 2018] Φ̃).
    Standard,
    /// standard · sqrt(d/Σd) ([Wang 2018] Ũ).
    Weighted,
    /// standard · sqrt(Σd/d) ([Wang 2018] Ṽ; diffusion with t = ½).
    Normalized,
}

crate::model::params::named!(Output, "output":
    Diffusion => "diffusion",
    Standard => "standard",
    Weighted => "weighted",
    Normalized => "normalized" | "normalised",
);

/// Coordinates j = 1..d from ψ rows (column 0 = ψ₀ = sqrt(d/Σd)).
pub(crate) fn flavour(
    psi: MatRef<'_, f64>,
    values: &[f64],
    d: usize,
    output: Output,
    t: f64,
) -> Mat<f64> {
    Mat::from_fn(psi.nrows(), d, |i, c| {
        let j = c + 1;
        let (l, p, p0) = (values[j], psi[(i, j)], psi[(i, 0)]);
        match output {
            Output::Diffusion => l.powf(t) * p / p0,
            Output::Standard => l.sqrt() * p,
            Output::Weighted => l.sqrt() * p * p0,
            Output::Normalized => l.sqrt() * p / p0,
        }
    })
}

/// Diffusion maps parameters.
///
/// ```
/// use oose::methods::diffusion_maps::{DiffusionMaps, Sparsity, Epsilon};
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::s_curve(300, 0.0, 0).points;
/// let m = DiffusionMaps::default()
///     .sparsity(Sparsity::Knn(15))
///     .epsilon(Epsilon::Value(0.5))
///     .fit(x.as_ref())
///     .unwrap();
/// let e = m.extend(x.as_ref().subrows(0, 2)).unwrap();
/// assert!((e.coordinates[(1, 0)] - m.embedding()[(1, 0)]).abs() < 1e-10);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffusionMaps {
    /// Embedding dimension d (default 2; ψ₀ is not counted).
    pub n_components: usize,
    /// Weights, sparsification and α (default: median ε, kNN 25, α = 1).
    pub kernel: DiffusionKernel,
    /// Diffusion time t ≥ 0 (default 1; used by the `diffusion` output).
    pub t: f64,
    /// Output flavour (default `diffusion`).
    pub output: Output,
    /// Eigensolver (default `Auto`: dense up to 1000 points, Lanczos above).
    pub solver: Solver,
    /// Density of new points (default `Training`).
    pub density: Density,
    /// New points without neighbours (default `Error`).
    pub on_isolated: OnIsolated,
    /// Compute the residual k₀(z, z) (pivoted Cholesky of the N×N kernel, O(N r²)):
    /// `None` = for dense kernels only.
    pub residual: Option<bool>,
    /// Eigenvalues at most this are not accepted as components (1e-12).
    pub rank_tolerance: f64,
}

impl Default for DiffusionMaps {
    fn default() -> Self {
        DiffusionMaps {
            n_components: 2,
            kernel: DiffusionKernel::default(),
            t: 1.0,
            output: Output::Diffusion,
            solver: Solver::Auto,
            density: Density::Training,
            on_isolated: OnIsolated::Error,
            residual: None,
            rank_tolerance: 1e-12,
        }
    }
}

/// Shorthand setters.
impl DiffusionMaps {
    /// Sets ε.
    pub fn epsilon(mut self, e: Epsilon) -> Self {
        self.kernel.epsilon = e;
        self
    }

    /// Sets the sparsification.
    pub fn sparsity(mut self, s: Sparsity) -> Self {
        self.kernel.sparsity = s;
        self
    }

    /// Sets α.
    pub fn alpha(mut self, a: f64) -> Self {
        self.kernel.alpha = a;
        self
    }

    /// Fits on the rows of `x`.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedDiffusionMaps> {
        validate::non_negative("t", self.t)?;
        validate::at_least_one("n_components", self.n_components)?;
        let core = DiffusionCore::fit(
            x,
            &self.kernel,
            self.n_components + 1,
            self.solver,
            self.rank_tolerance,
            self.residual,
        )?;
        let embedding = flavour(
            core.eigenvectors(),
            core.eigenvalues(),
            self.n_components,
            self.output,
            self.t,
        );
        Ok(FittedDiffusionMaps {
            params: self.clone(),
            embedding: StoredMat::from_mat(embedding.as_ref()),
            core,
            low_rank: Default::default(),
        })
    }
}

/// A fitted diffusion map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedDiffusionMaps {
    pub(crate) params: DiffusionMaps,
    pub(crate) embedding: StoredMat,
    pub(crate) core: DiffusionCore,
    /// The low-rank extension's parts, formed on first use (not stored).
    #[serde(skip)]
    pub(crate) low_rank:
        crate::model::method::Transient<OnceLock<super::low_rank::DiffusionLowRank>>,
}

impl FittedDiffusionMaps {
    /// Parameters as given.
    pub fn params(&self) -> &DiffusionMaps {
        &self.params
    }

    /// Kernel, eigenpairs, ε used.
    pub fn core(&self) -> &DiffusionCore {
        &self.core
    }

    /// Eigenvalues λ₁..λ_d of the diffusion kernel (λ₀ = 1 left out).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.core.values[1..]
    }

    /// Extension with an explicit density and isolated-point policy.
    pub fn extend_with(
        &self,
        new: MatRef<'_, f64>,
        density: Density,
        on_isolated: OnIsolated,
    ) -> Result<Extension> {
        let e = self.core.extend_psi(new, density, on_isolated, true)?;
        Ok(self.flavoured(e))
    }

    /// The core's extension ψ̂ in the model's output flavour, with `relative_degree`.
    fn flavoured(&self, mut e: Extension) -> Extension {
        e.coordinates = flavour(
            e.coordinates.as_ref(),
            &self.core.values,
            self.params.n_components,
            self.params.output,
            self.params.t,
        );
        self.core.relative_degree(&mut e);
        e
    }

    /// The certified low-rank extension of the rows of `new` (maths §20, dense kernels
    /// with the training density): each row's kernel row through the pivots of the
    /// gaussian kernel's pivoted Cholesky factorisation (to `rank_tolerance`) instead of
    /// all N training points, with `lowrank_bound`, a bound on the distance to the exact
    /// coordinates. Rows whose density or degree interval reaches 0 (far from the data)
    /// cannot be certified and are extended exactly (bound 0); `residual` and
    /// `reconstruction_error` are NaN on the low-rank rows. Row by row.
    ///
    /// ```
    /// use oose::methods::diffusion_maps::{DiffusionMaps, Epsilon, Sparsity};
    /// use oose::methods::OutOfSample;
    /// let x = oose::datasets::swiss_roll(300, 0.0, false, 0).points;
    /// let mut p = DiffusionMaps::default().sparsity(Sparsity::Dense).epsilon(Epsilon::Value(40.0));
    /// p.rank_tolerance = 1e-8;
    /// let m = p.fit(x.as_ref()).unwrap();
    /// let z = oose::datasets::swiss_roll(20, 0.0, false, 1).points;
    /// let exact = m.extend(z.as_ref()).unwrap().coordinates;
    /// let fast = m.extend_low_rank(z.as_ref()).unwrap();
    /// let b = &fast.extra.iter().find(|c| c.name == "lowrank_bound").unwrap().values;
    /// for i in 0..20 {
    ///     let dev = ((exact[(i, 0)] - fast.coordinates[(i, 0)]).powi(2)
    ///         + (exact[(i, 1)] - fast.coordinates[(i, 1)]).powi(2))
    ///     .sqrt();
    ///     assert!(dev <= b[i]);
    /// }
    /// ```
    pub fn extend_low_rank(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_auto(new, f64::INFINITY)
    }

    /// `extension = auto`: each row through the pivots when its `lowrank_bound` is at
    /// most `tolerance` × the embedding's largest |coordinate|, else exactly (bound 0).
    pub fn extend_auto(&self, new: MatRef<'_, f64>, tolerance: f64) -> Result<Extension> {
        self.check_low_rank(self.params.density)?;
        validate::finite_nonempty("new points", new)?;
        validate::columns("new points", new, self.core.input_width())?;
        let parts = self.low_rank.0.get_or_init(|| {
            super::low_rank::DiffusionLowRank::new(&self.core, self.params.rank_tolerance)
        });
        let p = &self.params;
        let fast = parts.extend(&self.core, new, p.n_components, p.output, p.t)?;
        let limit = tolerance * self.embedding.view().norm_max();
        crate::extend::low_rank::auto(fast, new, limit, |rows| {
            self.extend_with(rows, Density::Training, p.on_isolated)
        })
    }

    fn check_low_rank(&self, density: Density) -> Result<()> {
        super::low_rank::check(
            self.core.spec.sparsity == Sparsity::Dense,
            density == Density::Union,
        )
    }

    /// The same model with another output flavour and diffusion time (no refit).
    pub fn with_output(&self, output: Output, t: f64) -> Result<FittedDiffusionMaps> {
        validate::non_negative("t", t)?;
        let mut m = self.clone();
        m.params.output = output;
        m.params.t = t;
        let e = flavour(
            self.core.eigenvectors(),
            &self.core.values,
            self.params.n_components,
            output,
            t,
        );
        m.embedding = StoredMat::from_mat(e.as_ref());
        Ok(m)
    }

    pub(crate) fn is_consistent(&self) -> bool {
        self.core.holds(&self.embedding, self.params.n_components)
    }
}

impl OutOfSample for FittedDiffusionMaps {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_with(new, self.params.density, self.params.on_isolated)
    }

    fn input_width(&self) -> usize {
        self.core.input_width()
    }
}

impl Method for DiffusionMaps {
    type Fitted = FittedDiffusionMaps;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &join::<13>(&[
        NO_PARAMS,
        &[N_COMPONENTS],
        &KERNEL,
        &[
            ParamSpec::new("t", "time", Kind::Float, "Diffusion time t ≥ 0.").aliases(&["t"]),
            ParamSpec::new(
                "output",
                "output-kind",
                Kind::Choice(Output::NAMES),
                "Output coordinates (maths §7 flavours).",
            )
            .aliases(&["flavour"]),
            SOLVER,
            ParamSpec::new(
                "density",
                "density",
                Kind::Choice(Density::NAMES),
                "Density of new points (union: of X ∪ Z; rows of a batch are then coupled).",
            ),
            ON_ISOLATED,
            ParamSpec::new(
                "residual",
                "residual",
                Kind::Bool,
                "Compute the residual diagnostic (default: for dense kernels only).",
            )
            .optional(),
            RANK_TOLERANCE,
        ],
    ]);

    crate::params_as_data!(DiffusionMaps {
        n_components,
        kernel,
        t,
        output,
        solver,
        density,
        on_isolated,
        residual,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        let v = |sparsity: &str, output: &str| {
            Values::new()
                .with("sparsity", sparsity)
                .with("output", output)
                .with("n_neighbors", 12usize)
        };
        vec![
            Configuration::exact("knn-diffusion", v("knn", "diffusion")),
            Configuration::exact(
                "dense-standard",
                Values::new()
                    .with("sparsity", "dense")
                    .with("output", "standard")
                    .with("alpha", 0.5),
            ),
            Configuration::exact(
                "threshold-weighted",
                Values::new()
                    .with("sparsity", "threshold")
                    .with("threshold", 1e-3)
                    .with("epsilon", 0.8)
                    .with("output", "weighted")
                    .with("t", 2.0),
            ),
            Configuration::exact(
                "knn-normalized-log-slope",
                v("knn", "normalized").with("epsilon", "log-slope"),
            ),
            Configuration::exact(
                "knn-inf-alpha0",
                v("knn", "diffusion")
                    .with("epsilon", "inf")
                    .with("alpha", 0.0),
            ),
            // The union density couples the rows of a batch and moves training points.
            Configuration {
                samplewise: false,
                ..Configuration::not_exact(
                    "union-density",
                    v("knn", "diffusion").with("density", "union"),
                )
            },
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedDiffusionMaps> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedDiffusionMaps {
    crate::fitted_basics!(points: core.x, warnings: core.warnings, novelty: core.fit_novelty);

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&["density", "on_isolated", "extension"], |o| {
            no_such_option(DiffusionMaps::NAME, o)
        })?;
        if opts.extension.is_some_and(|e| e != ExtensionChoice::Exact) {
            self.check_low_rank(opts.density.unwrap_or(self.params.density))?;
        }
        Ok(())
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        match opts.extension {
            Some(ExtensionChoice::LowRank) => return self.extend_low_rank(new),
            Some(ExtensionChoice::Auto { tolerance }) => return self.extend_auto(new, tolerance),
            _ => {}
        }
        let p = self.params();
        let e = self.core.extend_psi(
            new,
            opts.density.unwrap_or(p.density),
            opts.on_isolated.unwrap_or(p.on_isolated),
            !opts.coordinates_only,
        )?;
        Ok(self.flavoured(e))
    }

    fn batch_coupled(&self, opts: &ExtendOptions<'_>) -> bool {
        opts.density.unwrap_or(self.params().density) == Density::Union
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = self.params();
        v.push(("output".into(), p.output.name().into()));
        put_debug(v, "t", p.t);
        v.push(("density".into(), format!("{:?}", p.density).to_lowercase()));
        diffusion_info(v, self.core());
        v.push((
            "eigenvalues".into(),
            fmt_list(FittedDiffusionMaps::eigenvalues(self)),
        ));
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(FittedDiffusionMaps::eigenvalues(self))
    }
}
