//! Locally linear embedding (maths §14): standard, modified, Hessian and LTSA, with
//! scikit-learn's parameter names. Standard: barycentric weights of each point from its
//! k nearest neighbours (regularised local Gram matrix), M = (I − W)ᵀ(I − W). Modified:
//! several weight vectors per point. Hessian: M from local Hessian estimators. LTSA: M
//! from the local tangent spaces. The builders of M are in `weights`; the embedding is
//! M's eigenvectors 1..d from the bottom (the constant vector, eigenvalue 0, left out).
//!
//! New points get the same barycentric weights from their k nearest training points
//! and the same combination of the training embedding (scikit-learn's `transform`,
//! [Bengio 2004]'s extension). It is sample-wise but **not exact on training points**:
//! a training point is its own nearest neighbour, the regularisation spreads a little
//! of its weight over the others, so extend(xᵢ) moves by a small fraction of the
//! spacing of the embedding (measured in the tests and in maths §14). The per-point
//! reliability is the scale-free reconstruction error
//! e(z) = ||z − Σⱼ wⱼ xⱼ||² / (mean of ||z − xⱼ||² over the k neighbours).

use crate::error::{Error, Result};
use crate::extend::{by_chunks, Extension};
use crate::linalg::eigen::{top_eigen_below_top, Solver, Symmetric};
use crate::linalg::sparse::SymCsr;
use crate::linalg::stored::StoredMat;
use crate::model::method::{
    no_such_option, points_only, Configuration, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::{Kind, Param, ParamList, ParamSpec, Value, Values};
use crate::model::specs::{fmt_list, put_debug, solver_info, N_COMPONENTS, SOLVER};
use crate::neighbors::{knn, knn_stoppable};
use crate::validate;
use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
pub(crate) use weights::{barycentre, singular, standard_m};
use weights::{hessian_m, ltsa_m, modified_m};

mod groups;
mod weights;

/// σ of the shift-invert route on A = I − M/ρ: the wanted eigenvalues of M/ρ are tiny
/// (1e-9 on a 5000-point Swiss roll), so the shift sits below them; the singular
/// direction (the constant vector) is projected out of every solve.
const SHIFT_INVERT_SIGMA: f64 = 1e-10;

/// scikit-learn's default `hessian_tol`.
pub const HESSIAN_TOL: f64 = 1e-4;
/// scikit-learn's default `modified_tol`.
pub const MODIFIED_TOL: f64 = 1e-12;

/// Which LLE variant builds M (scikit-learn's `method`, with its tolerance).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum LleMethod {
    /// Barycentric weights W, M = (I − W)ᵀ(I − W) [Roweis 2000].
    #[default]
    Standard,
    /// Local tangent space alignment [Zhang 2004]: M = Σᵢ Sᵢ(I − GᵢGᵢᵀ)Sᵢᵀ, Gᵢ = [1/√k,
    /// the top d left singular vectors of the centred neighbourhood].
    Ltsa,
    /// Modified LLE [Zhang & Wang 2006]: several weight vectors per point, from the
    /// bottom eigenvectors of its local Gram matrix; `tol` is scikit-learn's
    /// `modified_tol`.
    Modified {
        /// A Householder vector shorter than this is taken as zero.
        tol: f64,
    },
    /// Hessian LLE [Donoho & Grimes 2003]: M from local Hessian estimators; needs
    /// k > d(d+3)/2. `tol` is scikit-learn's `hessian_tol`.
    Hessian {
        /// A Hessian column whose sum is below this is not normalised by it.
        tol: f64,
    },
}

impl LleMethod {
    /// The name every interface uses (`standard`, `ltsa`, `modified`, `hessian`).
    pub fn name(&self) -> &'static str {
        match self {
            LleMethod::Standard => "standard",
            LleMethod::Ltsa => "ltsa",
            LleMethod::Modified { .. } => "modified",
            LleMethod::Hessian { .. } => "hessian",
        }
    }

    /// Modified LLE with scikit-learn's default tolerance.
    pub fn modified() -> Self {
        LleMethod::Modified { tol: MODIFIED_TOL }
    }

    /// Hessian LLE with scikit-learn's default tolerance.
    pub fn hessian() -> Self {
        LleMethod::Hessian { tol: HESSIAN_TOL }
    }
}

fn tolerance(v: &Values, name: &'static str, default: f64) -> Result<f64> {
    let t = v.f64(name, default)?;
    validate::non_negative(name, t)?;
    Ok(t)
}

/// `method` with `hessian_tol` and `modified_tol` (each read whatever the method, as
/// scikit-learn does, and kept with the variant that uses it).
impl Param for LleMethod {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        // Both tolerances always (the one the method does not use at its default), in
        // the specs' order.
        let (mut hessian, mut modified) = (HESSIAN_TOL, MODIFIED_TOL);
        match *self {
            LleMethod::Modified { tol } => modified = tol,
            LleMethod::Hessian { tol } => hessian = tol,
            _ => {}
        }
        out.push((name, Value::Str(self.name().into())));
        out.push(("hessian_tol", Value::Float(hessian)));
        out.push(("modified_tol", Value::Float(modified)));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        let hessian = tolerance(v, "hessian_tol", HESSIAN_TOL)?;
        let modified = tolerance(v, "modified_tol", MODIFIED_TOL)?;
        let chosen = validate::named(
            name,
            &v.name(name, default.name())?,
            &[
                ("standard", LleMethod::Standard),
                ("ltsa", LleMethod::Ltsa),
                ("modified", LleMethod::modified()),
                ("hessian", LleMethod::hessian()),
            ],
        )?;
        Ok(match chosen {
            LleMethod::Modified { .. } => LleMethod::Modified { tol: modified },
            LleMethod::Hessian { .. } => LleMethod::Hessian { tol: hessian },
            other => other,
        })
    }
}

/// Locally linear embedding: standard, modified, Hessian or LTSA (maths §14).
///
/// ```
/// use oose::methods::lle::LocallyLinearEmbedding;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(400, 0.0, false, 0).points;
/// let m = LocallyLinearEmbedding { n_neighbors: 10, ..Default::default() }
///     .fit(x.as_ref()).unwrap();
/// assert_eq!(m.embedding().ncols(), 2);
/// // Not exact on training points, but close: a small fraction of the embedding's scale.
/// let e = m.extend(x.as_ref().subrows(7, 1)).unwrap();
/// let gap = (0..2).map(|j| (e.coordinates[(0, j)] - m.embedding()[(7, j)]).abs()).fold(0.0, f64::max);
/// assert!(gap < 0.1 * m.embedding().norm_max());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocallyLinearEmbedding {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Neighbours k of each point, itself not counted (default 5, as scikit-learn).
    pub n_neighbors: usize,
    /// Regularisation of the local Gram matrix G: G + reg·tr(G)·I (reg·I when tr G = 0);
    /// default 1e-3, as scikit-learn.
    pub reg: f64,
    /// Eigensolver (default `Auto`: dense up to 1000 points, shift-invert above).
    pub solver: Solver,
    /// The variant that builds M (default `Standard`).
    pub method: LleMethod,
}

impl Default for LocallyLinearEmbedding {
    fn default() -> Self {
        LocallyLinearEmbedding {
            n_components: 2,
            n_neighbors: 5,
            reg: 1e-3,
            solver: Solver::Auto,
            method: LleMethod::Standard,
        }
    }
}

impl LocallyLinearEmbedding {
    fn validate(&self, n: usize, dim: usize) -> Result<()> {
        let (k, d) = (self.n_neighbors, self.n_components);
        validate::count("n_neighbors", k, n.saturating_sub(1), "N − 1")?;
        validate::count("n_components", d, n.saturating_sub(1), "N − 1")?;
        if d > k {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be at most n_neighbors = {k} (the weights span k directions), got {d}"
                ),
            ));
        }
        match self.method {
            LleMethod::Hessian { .. } if k <= d * (d + 3) / 2 => {
                return Err(Error::param(
                    "n_neighbors",
                    format!(
                        "Hessian LLE needs more than d(d+3)/2 = {} neighbours for d = {d} \
                         (1 + d + d(d+1)/2 local fits), got {k}",
                        d * (d + 3) / 2
                    ),
                ))
            }
            LleMethod::Hessian { .. } | LleMethod::Modified { .. } if d > dim => {
                return Err(Error::param(
                    "n_components",
                    format!(
                        "{} LLE needs at most as many components as input dimensions \
                         ({dim}), got {d}",
                        self.method.name()
                    ),
                ))
            }
            _ => {}
        }
        validate::non_negative("reg", self.reg)?;
        Ok(())
    }

    /// Fits on the rows of `x`. `n_neighbors` ≥ N (from 2 points) is lowered to N − 1
    /// with a fit warning, as umap-learn does; the model records the value used.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedLle> {
        validate::training_points("training points", x)?;
        crate::neighbors::fit_lowered(self, x, |p| &mut p.n_neighbors, Self::fit_noting)
    }

    fn fit_noting(&self, x: MatRef<'_, f64>, mut warnings: Vec<String>) -> Result<FittedLle> {
        let n = x.nrows();
        self.validate(n, x.ncols())?;
        let k = self.n_neighbors;
        let (idx, _) = knn_stoppable(x, x, k, true)?;
        // Barycentric weights of every training point: standard LLE's W, and for both
        // variants the training points' reconstruction error (in `info`).
        let bary: Vec<Option<(Vec<f64>, f64)>> = (0..n)
            .into_par_iter()
            .map(|i| {
                let z: Vec<f64> = (0..x.ncols()).map(|c| x[(i, c)]).collect();
                barycentre(&z, x, &idx[i], self.reg)
            })
            .collect();
        let m = match self.method {
            LleMethod::Standard => {
                let w = bary
                    .iter()
                    .enumerate()
                    .map(|(i, b)| b.as_ref().map(|b| &b.0[..]).ok_or_else(|| singular(i)))
                    .collect::<Result<Vec<_>>>()?;
                standard_m(&idx, &w)
            }
            LleMethod::Ltsa => ltsa_m(x, &idx, self.n_components)?,
            LleMethod::Modified { tol } => modified_m(x, &idx, self.n_components, self.reg, tol)?,
            LleMethod::Hessian { tol } => hessian_m(x, &idx, self.n_components, tol)?,
        };
        // After the weights, whose errors (a singular local Gram matrix) name the cause
        // more directly.
        groups::check(&self.method, &idx, &mut warnings, |wider| {
            Ok(knn_stoppable(x, x, wider, true)?.0)
        })?;
        let mut training_error: Vec<f64> = bary
            .iter()
            .map(|b| b.as_ref().map_or(f64::NAN, |b| b.1))
            .collect();
        // A = I − M/ρ, ρ ≥ ||M|| (Gershgorin): spectrum in [0, 1], top eigenvalue 1 at the
        // constant vector (M 1 = 0 as the weights sum to 1); the bottom of M is the top
        // of A below it.
        let rho = m
            .iter()
            .map(|r| r.values().map(|v| v.abs()).sum::<f64>())
            .fold(0.0f64, f64::max);
        let a_rows: Vec<Vec<(u32, f64)>> = m
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut row: Vec<(u32, f64)> = r.iter().map(|(&j, &v)| (j, -v / rho)).collect();
                // The identity's entry, also where M's row stores no diagonal.
                match row.binary_search_by_key(&(i as u32), |e| e.0) {
                    Ok(p) => row[p].1 += 1.0,
                    Err(p) => row.insert(p, (i as u32, 1.0)),
                }
                row
            })
            .collect();
        let a = SymCsr::from_rows(a_rows);
        let top = vec![1.0 / (n as f64).sqrt(); n];
        let eig = top_eigen_below_top(
            Symmetric::Sparse(&a),
            self.n_components,
            &[&top],
            self.solver,
            SHIFT_INVERT_SIGMA,
            0.0,
        )?;
        // λ_M as the Rayleigh quotient vᵀ M v on M itself: ρ(1 − λ_A) would carry an
        // absolute error of ρ times the rounding of λ_A, large next to eigenvalues of
        // 1e-10.
        let values: Vec<f64> = (0..self.n_components)
            .map(|j| {
                let v = eig.vectors.col(j);
                (0..n)
                    .map(|i| v[i] * m[i].iter().map(|(&c, &w)| w * v[c as usize]).sum::<f64>())
                    .sum::<f64>()
            })
            .collect();
        Ok(FittedLle {
            params: self.clone(),
            x: StoredMat::from_mat(x),
            embedding: StoredMat::from_mat(eig.vectors.as_ref()),
            eigenvalues: values,
            solver_used: eig.solver,
            solver_note: eig.note,
            median_training_error: crate::kernel::bandwidth::median(&mut training_error),
            warnings: crate::model::method::Transient(warnings),
        })
    }
}

/// [`OutOfSample`] by [`barycentric_extension`] for a fitted type with the training points
/// `x`, the `embedding` (both `StoredMat`) and `params.n_neighbors`, `params.reg`: LLE's
/// and maximum variance unfolding's.
macro_rules! barycentric_out_of_sample {
    ($fitted:ty) => {
        $crate::stored_out_of_sample!(
            $fitted,
            "The barycentric extension (maths §14): the weights that reconstruct each new \
             point from its nearest training points, applied to their embedding; the \
             reconstruction error per point as the reliability.",
            |self, new| {
                $crate::validate::columns("new points", new, self.x.ncols())?;
                $crate::validate::finite("new points", new)?;
                $crate::methods::lle::barycentric_extension(
                    self.x.view(),
                    self.embedding.view(),
                    self.params.n_neighbors,
                    self.params.reg,
                    new,
                )
            }
        );
    };
}
pub(crate) use barycentric_out_of_sample;

/// The barycentric extension (maths §14) of the checked rows `new`: the weights that
/// reconstruct each row from its k nearest rows of `x` (regularised by `reg`) applied
/// to the same rows of the embedding `y`; the reconstruction error per row as the
/// reliability. Shared by LLE and maximum variance unfolding.
pub(crate) fn barycentric_extension(
    x: MatRef<'_, f64>,
    y: MatRef<'_, f64>,
    k: usize,
    reg: f64,
    new: MatRef<'_, f64>,
) -> Result<Extension> {
    let d = y.ncols();
    // One neighbour search for the whole batch (each row's list depends on that row
    // alone); the chunks then only solve the k×k systems.
    let (idx, _) = knn(new, x, k, false);
    by_chunks(new, k, d, |start, z| {
        let mut coords = Mat::zeros(z.nrows(), d);
        let mut error = Vec::with_capacity(z.nrows());
        for (r, nbrs) in idx[start..start + z.nrows()].iter().enumerate() {
            let zr: Vec<f64> = (0..z.ncols()).map(|c| z[(r, c)]).collect();
            let (w, e) = barycentre(&zr, x, nbrs, reg).ok_or_else(|| singular(start + r))?;
            for j in 0..d {
                coords[(r, j)] = nbrs.iter().zip(&w).map(|(&i, wi)| wi * y[(i, j)]).sum();
            }
            error.push(e);
        }
        Ok(Extension {
            coordinates: coords,
            residual: vec![f64::NAN; z.nrows()],
            reconstruction_error: error,
            extra: vec![],
        })
    })
}

/// A fitted locally linear embedding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedLle {
    params: LocallyLinearEmbedding,
    x: StoredMat,
    embedding: StoredMat,
    /// The eigenvalues of M for the embedding's columns, smallest first.
    eigenvalues: Vec<f64>,
    solver_used: Solver,
    solver_note: Option<String>,
    median_training_error: f64,
    /// The fit's warnings (n_neighbors lowered), not stored.
    #[serde(skip)]
    warnings: crate::model::method::Transient<Vec<String>>,
}

impl FittedLle {
    /// Parameters as used (`n_neighbors` lowered to N − 1 if it was ≥ N).
    pub fn params(&self) -> &LocallyLinearEmbedding {
        &self.params
    }

    /// The eigenvalues of M = (I − W)ᵀ(I − W) of the embedding's columns, smallest
    /// first.
    pub fn m_eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// scikit-learn's `reconstruction_error_`: the sum of [`Self::m_eigenvalues`].
    pub fn reconstruction_error(&self) -> f64 {
        self.eigenvalues.iter().sum()
    }

    fn is_consistent(&self) -> bool {
        let (n, d) = (self.x.nrows(), self.params.n_components);
        self.embedding.is_shape(n, d)
            && self.eigenvalues.len() == d
            && self.params.n_neighbors < n
            && self.params.n_neighbors >= 1
    }
}

barycentric_out_of_sample!(FittedLle);

crate::model::params::param_specs! {
    N_NEIGHBORS: "n_neighbors", "knn", Kind::Int,
        "Neighbours k of each point (itself not counted; one ≥ N is lowered to N − 1, with a warning).";

    REG: "reg", "reg", Kind::Float, "Regularisation of the local Gram matrix: G + reg·tr(G)·I.";

    METHOD: "method", "method", Kind::Choice(&["standard", "modified", "hessian", "ltsa"]),
        "Variant that builds M: standard (barycentric weights), modified (several weight \
        vectors per point), hessian (local Hessian estimators; n_neighbors > d(d+3)/2) or \
        ltsa (local tangent spaces).";

    HESSIAN_TOL_SPEC: "hessian_tol", "hessian-tol", Kind::Float,
        "Hessian LLE: a Hessian column whose sum is at least this is divided by it.";

    MODIFIED_TOL_SPEC: "modified_tol", "modified-tol", Kind::Float,
        "Modified LLE: a Householder vector shorter than this is taken as zero.";
}

impl Method for LocallyLinearEmbedding {
    type Fitted = FittedLle;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &[
        N_COMPONENTS,
        N_NEIGHBORS,
        REG,
        SOLVER,
        METHOD,
        HESSIAN_TOL_SPEC,
        MODIFIED_TOL_SPEC,
    ];

    crate::params_as_data!(LocallyLinearEmbedding {
        n_components,
        n_neighbors,
        reg,
        solver,
        method
    });

    fn configurations() -> Vec<Configuration> {
        let not_exact = Configuration::not_exact;
        vec![
            not_exact("k-10", Values::new().with("n_neighbors", 10usize)),
            not_exact(
                "k-12-reg",
                Values::new().with("n_neighbors", 12usize).with("reg", 1e-2),
            ),
            not_exact(
                "ltsa",
                Values::new()
                    .with("n_neighbors", 10usize)
                    .with("method", "ltsa"),
            ),
            not_exact(
                "modified",
                Values::new()
                    .with("n_neighbors", 10usize)
                    .with("method", "modified"),
            ),
            not_exact(
                "hessian",
                Values::new()
                    .with("n_neighbors", 10usize)
                    .with("method", "hessian"),
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedLle> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedLle {
    crate::fitted_basics!(points: x, warnings: warnings);

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&[], |o| no_such_option(LocallyLinearEmbedding::NAME, o))
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("lle_method".into(), self.params.method.name().into()));
        solver_info(v, (self.solver_used, self.solver_note.as_deref()));
        v.push(("m_eigenvalues".into(), fmt_list(&self.eigenvalues)));
        put_debug(v, "reconstruction_error", self.reconstruction_error());
        put_debug(
            v,
            "median_training_reconstruction_error",
            self.median_training_error,
        );
    }
}
