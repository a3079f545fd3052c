//! Locally linear embedding (maths §14), standard and LTSA, with scikit-learn's
//! definitions and parameter names. Standard: barycentric weights of each point from
//! its k nearest neighbours (regularised local Gram matrix), M = (I − W)ᵀ(I − W). LTSA:
//! M from the local tangent spaces. The embedding is M's eigenvectors 1..d from the
//! bottom (the constant vector, eigenvalue 0, left out).
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
use crate::linalg::eigen::{top_eigen, top_eigen_below_top, Solver, Symmetric};
use crate::linalg::small::{cholesky_in_place, cholesky_solve};
use crate::linalg::sparse::SymCsr;
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, points_only, Configuration, ExtendOptions, Fitted, Input, Method,
};
use crate::model::params::{join, Kind, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, solver_info, N_COMPONENTS, SOLVER};
use crate::neighbors::knn;
use crate::validate;
use faer::{Mat, MatRef};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// σ of the shift-invert route on A = I − M/ρ: the wanted eigenvalues of M/ρ are tiny
/// (1e-9 on a 5000-point Swiss roll), so the shift sits below them; the singular
/// direction (the constant vector) is projected out of every solve.
const SHIFT_INVERT_SIGMA: f64 = 1e-10;

/// Which LLE variant builds M (scikit-learn's `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum LleMethod {
    /// Barycentric weights W, M = (I − W)ᵀ(I − W) [Roweis 2000].
    #[default]
    Standard,
    /// Local tangent space alignment [Zhang 2004]: M = Σᵢ Sᵢ(I − GᵢGᵢᵀ)Sᵢᵀ, Gᵢ = [1/√k,
    /// the top d left singular vectors of the centred neighbourhood].
    Ltsa,
}

impl LleMethod {
    /// The name every interface uses (`standard`, `ltsa`).
    pub fn name(&self) -> &'static str {
        match self {
            LleMethod::Standard => "standard",
            LleMethod::Ltsa => "ltsa",
        }
    }
}

impl crate::model::params::Named for LleMethod {
    fn name(&self) -> &'static str {
        LleMethod::name(self)
    }
    fn from_name(s: &str) -> Result<Self> {
        validate::named(
            "method",
            s,
            &[("standard", LleMethod::Standard), ("ltsa", LleMethod::Ltsa)],
        )
    }
}

/// Locally linear embedding, standard or LTSA (maths §14).
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

/// Barycentric weights of `z` from the rows `nbrs` of `x` (Σ w = 1): the solution of
/// (G + R I) w = 1, normalised, with G the Gram matrix of xⱼ − z and R = reg·tr G (reg
/// when tr G = 0). Also returns e(z), the scale-free reconstruction error. `None` when
/// the regularised G is not positive definite (reg = 0 and degenerate neighbours).
fn barycentre(z: &[f64], x: MatRef<'_, f64>, nbrs: &[usize], reg: f64) -> Option<(Vec<f64>, f64)> {
    let k = nbrs.len();
    let dim = z.len();
    let diff: Vec<f64> = nbrs
        .iter()
        .flat_map(|&j| (0..dim).map(move |c| x[(j, c)] - z[c]))
        .collect();
    let row = |a: usize| &diff[a * dim..(a + 1) * dim];
    let mut g = vec![0.0; k * k];
    for a in 0..k {
        for b in 0..=a {
            let v: f64 = row(a).iter().zip(row(b)).map(|(p, q)| p * q).sum();
            g[a * k + b] = v;
            g[b * k + a] = v;
        }
    }
    let trace: f64 = (0..k).map(|a| g[a * k + a]).sum();
    let r = if trace > 0.0 { reg * trace } else { reg };
    let mut l = g.clone();
    for a in 0..k {
        l[a * k + a] += r;
    }
    // Cholesky of the regularised G (lower triangle), then two triangular solves of 1.
    if !cholesky_in_place(&mut l, k) {
        return None;
    }
    let mut w = cholesky_solve(&l, k, &vec![1.0; k]);
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|v| *v /= sum);
    // ||z − Σ wⱼ xⱼ||² = wᵀ G w (Σ w = 1), over the mean squared neighbour distance.
    let mut err = 0.0;
    for a in 0..k {
        for b in 0..k {
            err += w[a] * g[a * k + b] * w[b];
        }
    }
    let scale = trace / k as f64;
    let e = if scale > 0.0 {
        err.max(0.0) / scale
    } else {
        0.0
    };
    Some((w, e))
}

fn singular(row: usize) -> Error {
    Error::param(
        "reg",
        format!(
            "the local Gram matrix of point {row} is singular after regularisation \
             (duplicate or collinear neighbours); use reg > 0"
        ),
    )
}

/// Rows of a sparse symmetric matrix under construction.
type Rows = Vec<std::collections::BTreeMap<u32, f64>>;

/// Standard LLE: M = (I − W)ᵀ(I − W) = I − W − Wᵀ + WᵀW, row by row.
fn standard_m(idx: &[Vec<usize>], w: &[&[f64]]) -> Rows {
    let n = idx.len();
    let mut m: Rows = vec![Default::default(); n];
    for i in 0..n {
        *m[i].entry(i as u32).or_default() += 1.0;
        for (a, &ja) in idx[i].iter().enumerate() {
            *m[i].entry(ja as u32).or_default() -= w[i][a];
            *m[ja].entry(i as u32).or_default() -= w[i][a];
            for (b, &jb) in idx[i].iter().enumerate() {
                *m[ja].entry(jb as u32).or_default() += w[i][a] * w[i][b];
            }
        }
    }
    m
}

/// LTSA: for each point, Gᵢ = [1/√k, the top d eigenvectors of Xᵢ Xᵢᵀ] (Xᵢ its k
/// neighbours, centred), and M gains I − GᵢGᵢᵀ on the neighbours' block.
fn ltsa_m(x: MatRef<'_, f64>, idx: &[Vec<usize>], d: usize) -> Result<Rows> {
    let n = idx.len();
    let dim = x.ncols();
    let blocks: Vec<Mat<f64>> = idx
        .par_iter()
        .map(|nb| {
            let k = nb.len();
            let mean: Vec<f64> = (0..dim)
                .map(|c| nb.iter().map(|&j| x[(j, c)]).sum::<f64>() / k as f64)
                .collect();
            let xi = Mat::from_fn(k, dim, |a, c| x[(nb[a], c)] - mean[c]);
            let ci = &xi * xi.transpose();
            let v = top_eigen(ci.as_ref(), d, Solver::Dense)?.vectors;
            let g = Mat::from_fn(k, d + 1, |a, j| {
                if j == 0 {
                    1.0 / (k as f64).sqrt()
                } else {
                    v[(a, j - 1)]
                }
            });
            Ok(&g * g.transpose())
        })
        .collect::<Result<_>>()?;
    let mut m: Rows = vec![Default::default(); n];
    for (nb, ggt) in idx.iter().zip(&blocks) {
        for (a, &ja) in nb.iter().enumerate() {
            *m[ja].entry(ja as u32).or_default() += 1.0;
            for (b, &jb) in nb.iter().enumerate() {
                *m[ja].entry(jb as u32).or_default() -= ggt[(a, b)];
            }
        }
    }
    Ok(m)
}

impl LocallyLinearEmbedding {
    fn validate(&self, n: usize) -> Result<()> {
        let k = self.n_neighbors;
        if k == 0 || k >= n {
            return Err(Error::param(
                "n_neighbors",
                format!(
                    "must be between 1 and N − 1 = {}, got {k}",
                    n.saturating_sub(1)
                ),
            ));
        }
        let d = self.n_components;
        if d == 0 || d >= n {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be between 1 and N − 1 = {}, got {d}",
                    n.saturating_sub(1)
                ),
            ));
        }
        if d > k {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be at most n_neighbors = {k} (the weights span k directions), got {d}"
                ),
            ));
        }
        if !(self.reg >= 0.0 && self.reg.is_finite()) {
            return Err(Error::param(
                "reg",
                format!("must be finite and ≥ 0, got {}", self.reg),
            ));
        }
        Ok(())
    }

    /// Fits on the rows of `x`.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedLle> {
        validate::finite_nonempty("training points", x)?;
        let n = x.nrows();
        self.validate(n)?;
        let k = self.n_neighbors;
        let (idx, _) = knn(x, x, k, true);
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
            LleMethod::Ltsa => {
                // A point in no other point's neighbourhood (its own does not contain it,
                // as in scikit-learn) is unconstrained: M's row is zero and the bottom
                // eigenvectors would be spent on it.
                let mut covered = vec![false; n];
                idx.iter().flatten().for_each(|&j| covered[j] = true);
                let lonely: Vec<usize> = (0..n).filter(|&i| !covered[i]).collect();
                if !lonely.is_empty() {
                    return Err(Error::param(
                        "n_neighbors",
                        format!(
                            "LTSA: {} point(s) ({}{}) are in no other point's neighbourhood, \
                             so nothing places them; use more neighbours",
                            lonely.len(),
                            lonely
                                .iter()
                                .take(5)
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join(", "),
                            if lonely.len() > 5 { ", …" } else { "" }
                        ),
                    ));
                }
                ltsa_m(x, &idx, self.n_components)?
            }
        };
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
        })
    }
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
}

impl FittedLle {
    /// Parameters as given.
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

impl OutOfSample for FittedLle {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("new points", new, self.x.ncols())?;
        validate::finite("new points", new)?;
        let x = self.x.view();
        let y = self.embedding.view();
        let (k, d) = (self.params.n_neighbors, self.params.n_components);
        // One neighbour search for the whole batch (each row's list depends on that row
        // alone); the chunks then only solve the k×k systems.
        let (idx, _) = knn(new, x, k, false);
        by_chunks(new, k, d, |start, z| {
            let mut coords = Mat::zeros(z.nrows(), d);
            let mut error = Vec::with_capacity(z.nrows());
            for (r, nbrs) in idx[start..start + z.nrows()].iter().enumerate() {
                let zr: Vec<f64> = (0..z.ncols()).map(|c| z[(r, c)]).collect();
                let (w, e) =
                    barycentre(&zr, x, nbrs, self.params.reg).ok_or_else(|| singular(start + r))?;
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

    fn input_width(&self) -> usize {
        self.x.ncols()
    }
}

const N_NEIGHBORS: ParamSpec = ParamSpec::new(
    "n_neighbors",
    "knn",
    Kind::Int,
    "Neighbours k of each point (itself not counted).",
);

const REG: ParamSpec = ParamSpec::new(
    "reg",
    "reg",
    Kind::Float,
    "Regularisation of the local Gram matrix: G + reg·tr(G)·I.",
);

const METHOD: ParamSpec = ParamSpec::new(
    "method",
    "method",
    Kind::Choice(&["standard", "ltsa"]),
    "Variant that builds M: standard (barycentric weights) or ltsa (local tangent spaces).",
);

impl Method for LocallyLinearEmbedding {
    type Fitted = FittedLle;
    const NAME: &'static str = "lle";
    const ABOUT: &'static str =
        "Locally linear embedding with barycentric extension (maths §14; not exact on training points)";
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] =
        &join::<5>(&[NO_PARAMS, &[N_COMPONENTS, N_NEIGHBORS, REG, SOLVER, METHOD]]);

    crate::params_as_data!(LocallyLinearEmbedding {
        n_components,
        n_neighbors,
        reg,
        solver,
        method
    });

    fn configurations() -> Vec<Configuration> {
        let not_exact = |label, values| Configuration {
            exact_on_training: false,
            ..Configuration::exact(label, values)
        };
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
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedLle> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedLle {
    fn training_points(&self) -> Option<faer::MatRef<'_, f64>> {
        Some(self.x.view())
    }

    crate::fitted_basics!();

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&[], |o| no_such_option(LocallyLinearEmbedding::NAME, o))
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("lle_method".into(), self.params.method.name().into()));
        solver_info(v, (self.solver_used, self.solver_note.as_deref()));
        v.push(("m_eigenvalues".into(), fmt_list(&self.eigenvalues)));
        v.push((
            "reconstruction_error".into(),
            format!("{:?}", self.reconstruction_error()),
        ));
        v.push((
            "median_training_reconstruction_error".into(),
            format!("{:?}", self.median_training_error),
        ));
    }
}
