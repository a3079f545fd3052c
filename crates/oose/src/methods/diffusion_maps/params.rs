//! The parameters of the diffusion kernel (maths §1, §7): the ε rule, the sparsification, the density of new points, the isolated-point policy.

#[allow(unused_imports)]
use super::*;
use crate::model::method::{no_such_option, ExtendOptions};
use crate::model::params::{Kind, Param, ParamList, ParamSpec, Value, Values};
use crate::model::specs::{put_debug, solver_info};

/// Which weights are kept (maths §1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Sparsity {
    /// Every pair.
    Dense,
    /// k nearest neighbours, a point counting as its own nearest: w_ij kept if
    /// ||xᵢ − x_j|| ≤ max(rᵢ, r_j), rᵢ = distance of xᵢ to its k-th nearest training
    /// point (ties at rᵢ are all kept). New points: the same rule with r_z.
    Knn(usize),
    /// w_ij kept if w_ij ≥ η ([Wang 2018] Alg. 1), 0 < η ≤ 1.
    Threshold(f64),
}

impl Default for Sparsity {
    fn default() -> Self {
        Sparsity::Knn(25)
    }
}

impl Sparsity {
    /// The rule in words (for messages).
    pub fn describe(&self) -> String {
        match self {
            Sparsity::Dense => "dense".into(),
            Sparsity::Knn(k) => format!("{k}-nearest-neighbour"),
            Sparsity::Threshold(e) => format!("threshold η = {e}"),
        }
    }

    /// The rule named `knn` (with `n_neighbors`), `threshold` (with `threshold` η) or
    /// `dense`. A value given for the other rule is an error, not silently ignored.
    ///
    /// ```
    /// use oose::methods::diffusion_maps::Sparsity;
    /// assert_eq!(Sparsity::from_parts("knn", 25, None).unwrap(), Sparsity::Knn(25));
    /// assert!(Sparsity::from_parts("threshold", 25, None).is_err());
    /// ```
    pub fn from_parts(name: &str, n_neighbors: usize, threshold: Option<f64>) -> Result<Sparsity> {
        match (name, threshold) {
            ("knn", None) => Ok(Sparsity::Knn(n_neighbors)),
            ("dense", None) => Ok(Sparsity::Dense),
            ("threshold", Some(eta)) => Ok(Sparsity::Threshold(eta)),
            ("threshold", None) => Err(Error::param(
                "threshold",
                "sparsity `threshold` needs the threshold η (0 < η ≤ 1)",
            )),
            ("knn" | "dense", Some(_)) => Err(Error::param(
                "threshold",
                "applies only with sparsity `threshold`",
            )),
            _ => Err(Error::param(
                "sparsity",
                format!("expected knn, threshold or dense, got {name:?}"),
            )),
        }
    }
}

/// Which density a new point is normalised with (maths §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Density {
    /// q(z) = Σᵢ w(z, xᵢ): sample-wise, exact on training points.
    #[default]
    Training,
    /// q(z) = Σᵢ w(z, xᵢ) + Σ_{z' in the batch} w(z, z'): the density of X ∪ Z ([Wang 2018]
    /// Thm 23, [Wang 2019] eq. 9). Rows of one batch then depend on each other. Pairs of
    /// new points are linked by the same rule as training pairs (kNN: ||z − z'|| ≤
    /// max(r_z, r_z'), radii measured to the training points).
    Union,
}

crate::model::params::named!(Density, "density": Training => "training", Union => "union");

/// What to do with a new point that has no neighbour under the sparsity rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum OnIsolated {
    /// An [`Error::Isolated`] naming the row.
    #[default]
    Error,
    /// NaN coordinates and 1 in the `isolated` diagnostic column.
    Nan,
}

crate::model::params::named!(OnIsolated, "on_isolated": Error => "error", Nan => "nan");

/// The weight matrix and its normalisation: everything but the eigensolver.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffusionKernel {
    /// Bandwidth rule (default median).
    pub epsilon: Epsilon,
    /// Sparsification (default kNN with k = 25).
    pub sparsity: Sparsity,
    /// α ∈ [0, 1]: 0 graph Laplacian, ½ Fokker–Planck, 1 Laplace–Beltrami.
    pub alpha: f64,
}

impl Default for DiffusionKernel {
    fn default() -> Self {
        DiffusionKernel {
            epsilon: Epsilon::Median,
            sparsity: Sparsity::default(),
            alpha: 1.0,
        }
    }
}

/// The diffusion kernel's parameters (ε rule, sparsification, α).
pub(crate) const KERNEL: [ParamSpec; 5] = [
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
        "Nearest neighbours k (a point counts as its own nearest; one ≥ N is lowered to N − 1, with a warning).",
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

crate::model::params::param_specs! {
    pub(crate) ON_ISOLATED: "on_isolated", "on-isolated", Kind::Choice(OnIsolated::NAMES),
        "New points without a neighbour: an error naming the row, or NaN rows with an \
        `isolated` column.";
}

pub(crate) fn sparsity_name(s: Sparsity) -> &'static str {
    match s {
        Sparsity::Dense => "dense",
        Sparsity::Knn(_) => "knn",
        Sparsity::Threshold(_) => "threshold",
    }
}

/// k of the default rule (what `n_neighbors` means when the rule is not kNN).
pub(crate) fn default_k(d: &DiffusionKernel) -> usize {
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
            ("epsilon", self.epsilon.to_value()),
            ("sparsity", Value::Str(sparsity_name(self.sparsity).into())),
            ("n_neighbors", Value::Int(k as u64)),
            ("threshold", eta),
            ("alpha", Value::Float(self.alpha)),
        ]
    }

    fn from_values(v: &Values, d: &DiffusionKernel) -> Result<DiffusionKernel> {
        let epsilon = Epsilon::from_value(v.raw("epsilon", d.epsilon.to_value()))?;
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
pub(crate) fn diffusion_info(v: &mut Vec<(String, String)>, c: &DiffusionCore) {
    let spec = c.spec();
    put_debug(v, "alpha", spec.alpha);
    put_debug(v, "epsilon", c.epsilon());
    v.push(("epsilon_rule".into(), spec.epsilon.rule().into()));
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

/// Eigenmaps and spectral clustering: `on_isolated` is a fit parameter, no option.
pub(crate) fn fit_time_policy(method: &'static str, opts: &ExtendOptions<'_>) -> Result<()> {
    opts.refuse_all_but(&[], |o| match o {
        "on_isolated" => "on_isolated at extend applies to dmaps models; eigenmaps and \
                          spectral-clustering models take it at fit (`oose fit … \
                          --on-isolated nan`)"
            .into(),
        o => no_such_option(method, o),
    })
}
