//! The three diffusion-kernel methods (diffusion maps, Laplacian eigenmaps, spectral
//! clustering) in the registry: their parameters as data and their extension options
//! (SPEC §7).

use crate::error::{Error, Result};
use crate::extend::Extension;
use crate::methods::diffusion_maps::{Density, OnIsolated};
use crate::methods::diffusion_maps::{
    DiffusionCore, DiffusionKernel, DiffusionMaps, Epsilon, FittedDiffusionMaps, FittedEigenmaps,
    LaplacianEigenmaps, Output, Sparsity,
};
use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};
use crate::methods::OutOfSample;
use crate::model::method::{no_such_option, ExtendOptions, Fitted, Input, Method};
use crate::model::params::{Kind, ParamList, ParamSpec, Value, Values};
use crate::model::specs::{
    fmt_list, solver_from, solver_info, solver_value, N_COMPONENTS, RANK_TOLERANCE, SEED, SOLVER,
};
use faer::MatRef;

/// The diffusion kernel's parameters (ε rule, sparsification, α).
const KERNEL: [ParamSpec; 5] = [
    ParamSpec::new(
        "epsilon",
        "epsilon",
        Kind::FloatOrName(&["auto", "median", "log-slope", "inf"]),
        "Bandwidth ε of exp(−r²/ε): a number, `auto` (median rule), `log-slope` \
         (Berry–Giannakis–Harlim) or `inf` (w = 1 on the graph).",
    ),
    ParamSpec::new(
        "sparsity",
        "sparsity",
        Kind::Choice(&["knn", "threshold", "dense"]),
        "Sparsification: knn (symmetric rule), threshold (w ≥ η) or dense.",
    ),
    ParamSpec::new(
        "n_neighbors",
        "knn",
        Kind::Int,
        "Nearest neighbours k (a point counts as its own nearest).",
    ),
    ParamSpec::new(
        "threshold",
        "threshold",
        Kind::Float,
        "η of the threshold rule (0 < η ≤ 1).",
    )
    .optional(),
    ParamSpec::new(
        "alpha",
        "alpha",
        Kind::Float,
        "α-normalisation in [0, 1]: 0 graph Laplacian, ½ Fokker–Planck, 1 Laplace–Beltrami.",
    ),
];

const ON_ISOLATED: ParamSpec = ParamSpec::new(
    "on_isolated",
    "on-isolated",
    Kind::Choice(&["error", "nan"]),
    "New points without a neighbour: an error naming the row, or NaN rows with an \
     `isolated` column.",
);

fn epsilon_value(e: Epsilon) -> Value {
    match e {
        Epsilon::Median => Value::Str("auto".into()),
        Epsilon::LogSlope => Value::Str("log-slope".into()),
        Epsilon::Value(x) => Value::Float(x),
    }
}

fn epsilon_from(v: Value) -> Result<Epsilon> {
    match v {
        Value::Str(s) => Epsilon::from_name(&s),
        Value::Float(x) => Ok(Epsilon::Value(x)),
        Value::Int(i) => Ok(Epsilon::Value(i as f64)),
        other => Err(Error::param(
            "epsilon",
            format!("expected a number, auto, log-slope or inf, got {other}"),
        )),
    }
}

fn sparsity_name(s: Sparsity) -> &'static str {
    match s {
        Sparsity::Dense => "dense",
        Sparsity::Knn(_) => "knn",
        Sparsity::Threshold(_) => "threshold",
    }
}

/// k of the default rule (what `n_neighbors` means when the rule is not kNN).
fn default_k(d: &DiffusionKernel) -> usize {
    match (d.sparsity, Sparsity::default()) {
        (Sparsity::Knn(k), _) | (_, Sparsity::Knn(k)) => k,
        _ => 0,
    }
}

impl DiffusionKernel {
    fn param_values(&self, default: &DiffusionKernel) -> ParamList {
        let (k, eta) = match self.sparsity {
            Sparsity::Knn(k) => (k, Value::None),
            Sparsity::Threshold(e) => (default_k(default), Value::Float(e)),
            Sparsity::Dense => (default_k(default), Value::None),
        };
        vec![
            ("epsilon", epsilon_value(self.epsilon)),
            ("sparsity", Value::Str(sparsity_name(self.sparsity).into())),
            ("n_neighbors", Value::Int(k as u64)),
            ("threshold", eta),
            ("alpha", Value::Float(self.alpha)),
        ]
    }

    fn from_values(v: &Values, d: &DiffusionKernel) -> Result<DiffusionKernel> {
        let epsilon = epsilon_from(v.raw("epsilon", epsilon_value(d.epsilon)))?;
        let name = v.name("sparsity", sparsity_name(d.sparsity))?;
        let k = v.usize("n_neighbors", default_k(d))?;
        let default_eta = match d.sparsity {
            Sparsity::Threshold(e) if name == "threshold" => Some(e),
            _ => None,
        };
        let eta = v.opt_f64("threshold", default_eta)?;
        Ok(DiffusionKernel {
            epsilon,
            sparsity: Sparsity::from_parts(&name, k, eta)?,
            alpha: v.f64("alpha", d.alpha)?,
        })
    }
}

fn on_isolated_value(o: OnIsolated) -> Value {
    Value::Str(
        match o {
            OnIsolated::Error => "error",
            OnIsolated::Nan => "nan",
        }
        .into(),
    )
}

fn on_isolated_from(v: &Values, d: OnIsolated) -> Result<OnIsolated> {
    match v.raw("on_isolated", on_isolated_value(d)) {
        Value::Str(s) => OnIsolated::from_name(&s),
        other => Err(Error::param(
            "on_isolated",
            format!("expected error or nan, got {other}"),
        )),
    }
}

/// Kernel lines shared by the diffusion-kernel models.
fn diffusion_info(v: &mut Vec<(String, String)>, c: &DiffusionCore) {
    let spec = c.spec();
    v.push(("alpha".into(), format!("{:?}", spec.alpha)));
    v.push(("epsilon".into(), format!("{:?}", c.epsilon())));
    v.push((
        "epsilon_rule".into(),
        match spec.epsilon {
            Epsilon::Median => "median".into(),
            Epsilon::LogSlope => "log-slope".into(),
            Epsilon::Value(_) => "given".into(),
        },
    ));
    if let Some(d) = c.dimension_estimate() {
        v.push(("dimension_estimate".into(), format!("{d:.3}")));
    }
    match spec.sparsity {
        Sparsity::Dense => v.push(("sparsity".into(), "dense".into())),
        Sparsity::Knn(k) => {
            v.push(("sparsity".into(), "knn".into()));
            v.push(("n_neighbors".into(), k.to_string()));
        }
        Sparsity::Threshold(e) => {
            v.push(("sparsity".into(), "threshold".into()));
            v.push(("threshold".into(), format!("{e:?}")));
        }
    }
    v.push(("nnz".into(), c.nnz().to_string()));
    solver_info(v, c.solver_used());
    v.push((
        "residual_rank".into(),
        c.residual_rank()
            .map_or("n/a (residual not computed)".into(), |r| r.to_string()),
    ));
}

fn points_only<T>(
    input: Input<'_>,
    method: &str,
    fit: impl FnOnce(MatRef<'_, f64>) -> Result<T>,
) -> Result<T> {
    match input {
        Input::Points(x) => fit(x),
        other => Err(other.refused(method, "points")),
    }
}

/// Eigenmaps and spectral clustering: `on_isolated` is a fit parameter, no option.
fn fit_time_policy(method: &'static str, opts: &ExtendOptions<'_>) -> Result<()> {
    opts.refuse_all_but(&[], |o| match o {
        "on_isolated" => "on_isolated at extend applies to dmaps models; eigenmaps and \
                          spectral-clustering models take it at fit (`oose fit … \
                          --on-isolated nan`)"
            .into(),
        o => no_such_option(method, o),
    })
}

impl Method for DiffusionMaps {
    type Fitted = FittedDiffusionMaps;
    const NAME: &'static str = "dmaps";
    const ABOUT: &'static str = "Diffusion maps with exact Nyström extension (SPEC §7)";

    fn specs() -> &'static [ParamSpec] {
        const S: [ParamSpec; 13] = [
            N_COMPONENTS,
            KERNEL[0],
            KERNEL[1],
            KERNEL[2],
            KERNEL[3],
            KERNEL[4],
            ParamSpec::new("t", "time", Kind::Float, "Diffusion time t ≥ 0.").aliases(&["t"]),
            ParamSpec::new(
                "output",
                "output-kind",
                Kind::Choice(&["diffusion", "standard", "weighted", "normalized"]),
                "Output coordinates (SPEC §7 flavours).",
            )
            .aliases(&["flavour"]),
            SOLVER,
            ParamSpec::new(
                "density",
                "density",
                Kind::Choice(&["training", "union"]),
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
        ];
        &S
    }

    fn values(&self) -> ParamList {
        let d = Self::default();
        let mut v = vec![("n_components", Value::Int(self.n_components as u64))];
        v.extend(self.kernel.param_values(&d.kernel));
        v.push(("t", Value::Float(self.t)));
        v.push(("output", Value::Str(self.output.name().into())));
        v.push(("solver", solver_value(self.solver)));
        v.push((
            "density",
            Value::Str(
                match self.density {
                    Density::Training => "training",
                    Density::Union => "union",
                }
                .into(),
            ),
        ));
        v.push(("on_isolated", on_isolated_value(self.on_isolated)));
        v.push(("residual", self.residual.map_or(Value::None, Value::Bool)));
        v.push(("rank_tolerance", Value::Float(self.rank_tolerance)));
        v
    }

    fn from_values(v: &Values) -> Result<Self> {
        let d = Self::default();
        let p = DiffusionMaps {
            n_components: v.usize("n_components", d.n_components)?,
            kernel: DiffusionKernel::from_values(v, &d.kernel)?,
            t: v.f64("t", d.t)?,
            output: Output::from_name(&v.name("output", d.output.name())?)?,
            solver: solver_from(v, d.solver)?,
            density: Density::from_name(&v.name(
                "density",
                match d.density {
                    Density::Training => "training",
                    Density::Union => "union",
                },
            )?)?,
            on_isolated: on_isolated_from(v, d.on_isolated)?,
            residual: v.opt_bool("residual", d.residual)?,
            rank_tolerance: v.f64("rank_tolerance", d.rank_tolerance)?,
        };
        v.finish(Self::NAME, Self::specs())?;
        Ok(p)
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedDiffusionMaps> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedDiffusionMaps {
    fn param_values(&self) -> ParamList {
        self.params().values()
    }

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&["density", "on_isolated"], |o| {
            no_such_option(DiffusionMaps::NAME, o)
        })
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        if opts.density.is_none() && opts.on_isolated.is_none() {
            return self.extend(new);
        }
        let p = self.params();
        self.extend_with(
            new,
            opts.density.unwrap_or(p.density),
            opts.on_isolated.unwrap_or(p.on_isolated),
        )
    }

    fn batch_coupled(&self, opts: &ExtendOptions<'_>) -> bool {
        opts.density.unwrap_or(self.params().density) == Density::Union
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = self.params();
        v.push(("output".into(), p.output.name().into()));
        v.push(("t".into(), format!("{:?}", p.t)));
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

    fn is_consistent(&self) -> bool {
        FittedDiffusionMaps::is_consistent(self)
    }
}

impl Method for LaplacianEigenmaps {
    type Fitted = FittedEigenmaps;
    const NAME: &'static str = "eigenmaps";
    const ABOUT: &'static str = "Laplacian eigenmaps with exact Nyström extension (SPEC §7)";

    fn specs() -> &'static [ParamSpec] {
        const S: [ParamSpec; 9] = [
            N_COMPONENTS,
            KERNEL[0],
            KERNEL[1],
            KERNEL[2],
            KERNEL[3],
            KERNEL[4],
            SOLVER,
            ON_ISOLATED,
            RANK_TOLERANCE,
        ];
        &S
    }

    fn values(&self) -> ParamList {
        let d = Self::default();
        let mut v = vec![("n_components", Value::Int(self.n_components as u64))];
        v.extend(self.kernel.param_values(&d.kernel));
        v.push(("solver", solver_value(self.solver)));
        v.push(("on_isolated", on_isolated_value(self.on_isolated)));
        v.push(("rank_tolerance", Value::Float(self.rank_tolerance)));
        v
    }

    fn from_values(v: &Values) -> Result<Self> {
        let d = Self::default();
        let p = LaplacianEigenmaps {
            n_components: v.usize("n_components", d.n_components)?,
            kernel: DiffusionKernel::from_values(v, &d.kernel)?,
            solver: solver_from(v, d.solver)?,
            on_isolated: on_isolated_from(v, d.on_isolated)?,
            rank_tolerance: v.f64("rank_tolerance", d.rank_tolerance)?,
        };
        v.finish(Self::NAME, Self::specs())?;
        Ok(p)
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedEigenmaps> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedEigenmaps {
    fn param_values(&self) -> ParamList {
        self.params().values()
    }

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        fit_time_policy(LaplacianEigenmaps::NAME, opts)
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        self.extend(new)
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

    fn is_consistent(&self) -> bool {
        FittedEigenmaps::is_consistent(self)
    }
}

impl Method for SpectralClustering {
    type Fitted = FittedSpectralClustering;
    const NAME: &'static str = "spectral-clustering";
    const ABOUT: &'static str =
        "Spectral clustering (Ng–Jordan–Weiss) extended to new points (SPEC §7)";

    fn specs() -> &'static [ParamSpec] {
        const S: [ParamSpec; 10] = [
            ParamSpec::new("n_clusters", "clusters", Kind::Int, "Number of clusters c."),
            KERNEL[0],
            KERNEL[1],
            KERNEL[2],
            KERNEL[3],
            KERNEL[4],
            SOLVER,
            SEED,
            ParamSpec::new(
                "n_init",
                "n-init",
                Kind::Int,
                "k-means restarts; the one of least inertia is kept.",
            ),
            ON_ISOLATED,
        ];
        &S
    }

    fn values(&self) -> ParamList {
        let d = Self::default();
        let mut v = vec![("n_clusters", Value::Int(self.n_clusters as u64))];
        v.extend(self.kernel.param_values(&d.kernel));
        v.push(("solver", solver_value(self.solver)));
        v.push(("seed", Value::Int(self.seed)));
        v.push(("n_init", Value::Int(self.n_init as u64)));
        v.push(("on_isolated", on_isolated_value(self.on_isolated)));
        v
    }

    fn from_values(v: &Values) -> Result<Self> {
        let d = Self::default();
        let p = SpectralClustering {
            n_clusters: v.usize("n_clusters", d.n_clusters)?,
            kernel: DiffusionKernel::from_values(v, &d.kernel)?,
            solver: solver_from(v, d.solver)?,
            seed: v.u64("seed", d.seed)?,
            n_init: v.usize("n_init", d.n_init)?,
            on_isolated: on_isolated_from(v, d.on_isolated)?,
        };
        v.finish(Self::NAME, Self::specs())?;
        Ok(p)
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedSpectralClustering> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedSpectralClustering {
    fn param_values(&self) -> ParamList {
        self.params().values()
    }

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        fit_time_policy(SpectralClustering::NAME, opts)
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        self.extend(new)
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("n_clusters".into(), self.params().n_clusters.to_string()));
        v.push(("seed".into(), self.params().seed.to_string()));
        v.push(("inertia".into(), format!("{:?}", self.inertia())));
        diffusion_info(v, self.core());
        v.push(("eigenvalues".into(), fmt_list(self.core().eigenvalues())));
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(self.core().eigenvalues())
    }

    fn is_consistent(&self) -> bool {
        FittedSpectralClustering::is_consistent(self)
    }

    fn labels(&self) -> Option<&[usize]> {
        Some(FittedSpectralClustering::labels(self))
    }
}
