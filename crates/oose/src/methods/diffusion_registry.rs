//! The three diffusion-kernel methods (diffusion maps, Laplacian eigenmaps, spectral
//! clustering) in the registry: their parameters as data and their extension options
//! (SPEC §7).

use crate::error::{Error, Result};
use crate::extend::Extension;
use crate::methods::diffusion_maps::Density;
use crate::methods::diffusion_maps::{
    DiffusionCore, DiffusionKernel, DiffusionMaps, Epsilon, FittedDiffusionMaps, FittedEigenmaps,
    LaplacianEigenmaps, Sparsity,
};
use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};
use crate::methods::OutOfSample;
use crate::model::method::{no_such_option, Configuration, ExtendOptions, Fitted, Input, Method};
use crate::model::params::{Kind, Param, ParamList, ParamSpec, Value, Values};
use crate::model::specs::{fmt_list, solver_info, N_COMPONENTS, RANK_TOLERANCE, SEED, SOLVER};
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

impl Param for DiffusionKernel {
    fn put(&self, _: &'static str, default: &Self, out: &mut ParamList) {
        out.extend(self.param_values(default));
    }
    fn get(v: &Values, _: &'static str, default: &Self) -> Result<Self> {
        DiffusionKernel::from_values(v, default)
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
                exact_on_training: false,
                samplewise: false,
                ..Configuration::exact(
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

    crate::params_as_data!(SpectralClustering {
        n_clusters,
        kernel,
        solver,
        seed,
        n_init,
        on_isolated
    });

    fn configurations() -> Vec<Configuration> {
        vec![Configuration::exact(
            "three-clusters",
            Values::new().with("n_clusters", 3usize),
        )]
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
