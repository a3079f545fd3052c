//! Diffusion maps (SPEC §7): gaussian weights, optionally sparsified (kNN with the
//! mirror rule for new points, or a threshold η), α-normalisation, the symmetric
//! kernel k = D^{−1/2} W^(α) D^{−1/2}, its top eigenpairs, and four output flavours.
//! The Nyström extension of a new point uses its own density and degree; with the
//! training density it reproduces every training point exactly.
//!
//! The kernel machinery ([`DiffusionKernel`], [`DiffusionCore`]) is shared with
//! Laplacian eigenmaps and spectral clustering.

use crate::diagnostics::residual::ResidualFactor;
use crate::error::{Error, Result};
use crate::extend::{by_chunks, Column, Extension};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::{bandwidth, fast_exp, Bandwidth, Kernel};
use crate::linalg::eigen::{
    lanczos_fits, top_eigen, top_eigen_near_one, top_eigen_sparse, Eigen, Solver, AUTO_DENSE_MAX,
};

/// σ of the shift-invert eigensolver: Lanczos runs on ((1 + σ)I − k)⁻¹.
const SHIFT_INVERT_SIGMA: f64 = 1e-4;
use crate::linalg::pivoted_cholesky::factorize;
use crate::linalg::sparse::SymCsr;
use crate::methods::OutOfSample;
use crate::model::stored::StoredMat;
use crate::neighbors::balls::{locality_groups, PointIndex, Scratch};
use crate::validate;
use faer::{Mat, MatRef, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// How ε of the gaussian weights exp(−r²/ε) is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub enum Epsilon {
    /// Median of the squared pairwise distances (SPEC §1's `auto`).
    #[default]
    Median,
    /// The log-slope rule (Berry–Giannakis–Harlim): ε maximising d log Σw / d log ε.
    LogSlope,
    /// A fixed ε > 0; `f64::INFINITY` (sparse kernels only) makes every kept weight 1.
    Value(f64),
}

impl Epsilon {
    /// Parses `auto`/`median`, `log-slope`/`bgh`, `inf` or a positive number.
    pub fn from_name(s: &str) -> Result<Epsilon> {
        match s {
            "auto" | "median" => Ok(Epsilon::Median),
            "log-slope" | "bgh" => Ok(Epsilon::LogSlope),
            "inf" | "infinity" => Ok(Epsilon::Value(f64::INFINITY)),
            _ => s.parse::<f64>().map(Epsilon::Value).map_err(|_| {
                Error::param(
                    "epsilon",
                    format!("expected auto, median, log-slope, inf or a number, got {s:?}"),
                )
            }),
        }
    }
}

/// Which weights are kept (SPEC §1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Sparsity {
    /// Every pair.
    Dense,
    /// k nearest neighbours, a point counting as its own nearest: w_ij kept if
    /// ||xᵢ − x_j|| ≤ max(rᵢ, r_j), rᵢ = distance of xᵢ to its k-th nearest training
    /// point (ties at rᵢ are all kept). New points: the same rule with r_z.
    Knn(usize),
    /// w_ij kept if w_ij ≥ η (seed 000 Alg. 1), 0 < η ≤ 1.
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

/// Which density a new point is normalised with (SPEC §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Density {
    /// q(z) = Σᵢ w(z, xᵢ): sample-wise, exact on training points.
    #[default]
    Training,
    /// q(z) = Σᵢ w(z, xᵢ) + Σ_{z' in the batch} w(z, z'): the density of X ∪ Z (seed 000
    /// Thm 23, seed 003 eq. 9). Rows of one batch then depend on each other. Pairs of
    /// new points are linked by the same rule as training pairs (kNN: ||z − z'|| ≤
    /// max(r_z, r_z'), radii measured to the training points).
    Union,
}

impl Density {
    /// The name every interface uses.
    pub fn name(&self) -> &'static str {
        match self {
            Density::Training => "training",
            Density::Union => "union",
        }
    }

    /// Parses `training` or `union`.
    pub fn from_name(name: &str) -> Result<Density> {
        validate::named(
            "density",
            name,
            &[("training", Density::Training), ("union", Density::Union)],
        )
    }
}

/// What to do with a new point that has no neighbour under the sparsity rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum OnIsolated {
    /// An [`Error::Isolated`] naming the row.
    #[default]
    Error,
    /// NaN coordinates and 1 in the `isolated` diagnostic column.
    Nan,
}

impl OnIsolated {
    /// The name every interface uses.
    pub fn name(&self) -> &'static str {
        match self {
            OnIsolated::Error => "error",
            OnIsolated::Nan => "nan",
        }
    }

    /// Parses `error` or `nan`.
    pub fn from_name(name: &str) -> Result<OnIsolated> {
        validate::named(
            "on_isolated",
            name,
            &[("error", OnIsolated::Error), ("nan", OnIsolated::Nan)],
        )
    }
}

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

/// The weights W (dense or sparse, symmetric, wᵢᵢ = 1) of a point set.
#[derive(Clone, Debug)]
pub enum Weights {
    /// N×N.
    Dense(Mat<f64>),
    /// Sparse symmetric.
    Sparse(SymCsr),
}

impl Weights {
    fn row_sums(&self) -> Vec<f64> {
        match self {
            Weights::Dense(w) => (0..w.nrows())
                .into_par_iter()
                .map(|i| w.col_as_slice(i).iter().sum())
                .collect(),
            Weights::Sparse(s) => s.row_sums(),
        }
    }

    /// Replaces w_ij by f(i, j, w_ij).
    fn map(&mut self, f: impl Fn(usize, usize, f64) -> f64 + Sync) {
        match self {
            Weights::Dense(w) => {
                use faer::reborrow::ReborrowMut;
                let n = w.nrows();
                w.as_mut()
                    .par_col_chunks_mut(1)
                    .enumerate()
                    .for_each(|(j, mut c)| {
                        let mut col = c.rb_mut().col_mut(0);
                        for i in 0..n {
                            col[i] = f(i, j, col[i]);
                        }
                    });
            }
            Weights::Sparse(s) => s.map_entries(f),
        }
    }

    /// Component sizes of the graph of positive weights (largest first).
    fn component_sizes(&self) -> Vec<usize> {
        match self {
            Weights::Sparse(s) => s.components().1,
            Weights::Dense(w) => {
                let n = w.nrows();
                let all_positive = (0..n)
                    .into_par_iter()
                    .all(|j| w.col_as_slice(j).iter().all(|&v| v > 0.0));
                if all_positive {
                    return vec![n];
                }
                let rows = (0..n)
                    .map(|i| {
                        w.col_as_slice(i)
                            .iter()
                            .enumerate()
                            .filter(|p| *p.1 > 0.0)
                            .map(|(j, &v)| (j as u32, v))
                            .collect()
                    })
                    .collect();
                SymCsr::from_rows(rows).components().1
            }
        }
    }
}

/// The α-normalised symmetric kernel of a point set, its weights' densities and degrees.
#[derive(Clone, Debug)]
pub struct NormalisedKernel {
    /// k_ij = w_ij / (q_i^α q_j^α sqrt(d_i d_j)).
    pub kernel: Weights,
    /// q_i = Σ_j w_ij.
    pub density: Vec<f64>,
    /// d_i = Σ_j w_ij / (q_i^α q_j^α).
    pub degree: Vec<f64>,
    /// ε actually used.
    pub epsilon: f64,
    /// Twice the maximal log-slope (an intrinsic-dimension estimate), when ε came from
    /// the log-slope rule.
    pub dimension_estimate: Option<f64>,
    /// kNN squared radii r²ᵢ (empty unless kNN).
    pub radii2: Vec<f64>,
}

impl DiffusionKernel {
    fn validate(&self, n: usize) -> Result<()> {
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(Error::param(
                "alpha",
                format!("must be in [0, 1], got {}", self.alpha),
            ));
        }
        if let Epsilon::Value(e) = self.epsilon {
            if e.is_nan() || e <= 0.0 {
                return Err(Error::param("epsilon", format!("must be > 0, got {e}")));
            }
            if e.is_infinite() && self.sparsity == Sparsity::Dense {
                return Err(Error::param(
                    "epsilon",
                    "ε = ∞ makes every dense weight 1 (a rank-one kernel); use a kNN or threshold graph",
                ));
            }
        }
        match self.sparsity {
            Sparsity::Knn(k) if k == 0 || k >= n => Err(Error::param(
                "n_neighbors",
                format!(
                    "must be between 1 and N − 1 = {} (a point counts as its own nearest neighbour), got {k}",
                    n.saturating_sub(1)
                ),
            )),
            Sparsity::Threshold(eta) if !(eta > 0.0 && eta <= 1.0) => Err(Error::param(
                "threshold",
                format!("η must be in (0, 1], got {eta}"),
            )),
            _ => Ok(()),
        }
    }

    /// ε for the points `x`, and the dimension estimate of the log-slope rule.
    fn resolve_epsilon(&self, x: MatRef<'_, f64>) -> Result<(f64, Option<f64>)> {
        let coincide = || {
            Error::param(
                "epsilon",
                "the automatic rule found no positive pairwise distance (the points coincide); give ε explicitly",
            )
        };
        match self.epsilon {
            Epsilon::Value(e) => Ok((e, None)),
            Epsilon::Median => {
                let e = bandwidth::median_sq_distance(x);
                if e > 0.0 && e.is_finite() {
                    Ok((e, None))
                } else {
                    Err(coincide())
                }
            }
            Epsilon::LogSlope => bandwidth::log_slope_epsilon(x)
                .map(|(e, s)| (e, Some(2.0 * s)))
                .ok_or_else(coincide),
        }
    }

    /// Weights W of the rows of `x` (validated, ε resolved).
    pub fn weights(&self, x: MatRef<'_, f64>) -> Result<(Weights, f64, Option<f64>, Vec<f64>)> {
        validate::finite_nonempty("training data", x)?;
        let n = x.nrows();
        self.validate(n)?;
        let (eps, dim) = self.resolve_epsilon(x)?;
        let w = |d2: f64| (-d2 / eps).exp();
        let (weights, radii2) = match self.sparsity {
            Sparsity::Dense => {
                let k = Kernel::Gaussian {
                    epsilon: Bandwidth::Value(eps),
                };
                (Weights::Dense(k.gram(x, Par::rayon(0))), Vec::new())
            }
            Sparsity::Knn(k) => {
                // Two passes over groups of nearby points (the tree's leaves), one
                // descent per group: every point's exact k-th nearest squared distance
                // r²ᵢ, then its row {j : ||xᵢ − xⱼ||² ≤ max(r²ᵢ, r²ⱼ)} of the symmetric
                // rule (no transpose needed: the test is symmetric bit for bit).
                let points = PointIndex::new(x);
                let radii2 = points.map_groups(|_, qs, s, out| points.kth_group(qs, k, s, out));
                let points = points.into_balls(&radii2);
                let rows = symmetric_rows(&points, &radii2, |row| {
                    let mut row: Vec<(u32, f64)> =
                        row.iter().map(|&(j, d)| (j as u32, d)).collect();
                    gaussian_in_place(&mut row, eps);
                    row
                });
                (Weights::Sparse(SymCsr::from_rows(rows)), radii2)
            }
            Sparsity::Threshold(eta) => {
                let points = PointIndex::new(x);
                let r2 = threshold_radius2(eps, eta);
                let rows: Vec<Vec<(u32, f64)>> = (0..n)
                    .into_par_iter()
                    .map_init(
                        || (Scratch::default(), Vec::new()),
                        |(s, out), i| {
                            out.clear();
                            points.within(points.row(i), r2, s, out);
                            let mut r: Vec<(u32, f64)> = out
                                .iter()
                                .map(|&(j, d)| (j as u32, w(d)))
                                .filter(|p| p.1 >= eta)
                                .collect();
                            r.sort_by_key(|p| p.0);
                            r
                        },
                    )
                    .collect();
                (Weights::Sparse(SymCsr::from_rows(rows)), Vec::new())
            }
        };
        Ok((weights, eps, dim, radii2))
    }

    /// The normalised symmetric kernel of the rows of `x` (SPEC §7), after checking that
    /// the graph of positive weights is connected.
    pub fn normalised(&self, x: MatRef<'_, f64>) -> Result<NormalisedKernel> {
        let (mut weights, epsilon, dimension_estimate, radii2) = self.weights(x)?;
        let sizes = weights.component_sizes();
        if sizes.len() > 1 {
            return Err(Error::Disconnected {
                graph: format!("{} diffusion graph", self.sparsity.describe()),
                sizes,
                hint: "eigenvalue 1 is repeated (one per component); increase ε or the number of neighbours, or embed the components separately",
            });
        }
        let density = weights.row_sums();
        let alpha = self.alpha;
        let qa: Vec<f64> = density.iter().map(|&q| density_power(q, alpha)).collect();
        weights.map(|i, j, w| w * qa[i] * qa[j]);
        let degree = weights.row_sums();
        let s: Vec<f64> = degree.iter().map(|&d| 1.0 / d.sqrt()).collect();
        weights.map(|i, j, w| w * s[i] * s[j]);
        Ok(NormalisedKernel {
            kernel: weights,
            density,
            degree,
            epsilon,
            dimension_estimate,
            radii2,
        })
    }
}

/// f(row) for every point of `index` (indexed with the balls `r2`), row = its links
/// {j : ||xᵢ − xⱼ||² ≤ max(r²ᵢ, r²ⱼ)} as (j, squared distance) sorted by j: the
/// symmetric kNN rule when r²ᵢ is i's k-th nearest squared distance (the test is
/// symmetric bit for bit, so no transpose is needed). In index order.
fn symmetric_rows<T: Send>(
    index: &PointIndex,
    r2: &[f64],
    f: impl Fn(&[(usize, f64)]) -> T + Sync,
) -> Vec<T> {
    index.map_groups(|g, qs, s, out| {
        let r2q: Vec<f64> = g.iter().map(|&i| r2[i as usize]).collect();
        let (mut links, mut ends) = (Vec::new(), Vec::new());
        index.links_group(qs, &r2q, s, &mut links, &mut ends);
        let mut from = 0;
        for &to in &ends {
            let row = &mut links[from..to];
            row.sort_unstable_by_key(|p| p.0);
            out.push(f(row));
            from = to;
        }
    })
}

/// Sparse weight rows of new points: row r is `links[spans[r].0..spans[r].1]`
/// (training index, weight).
struct SparseRows {
    spans: Vec<(usize, usize)>,
    links: Vec<(usize, f64)>,
}

impl SparseRows {
    fn row(&self, r: usize) -> &[(usize, f64)] {
        let (a, b) = self.spans[r];
        &self.links[a..b]
    }
}

/// (j, d²) ↦ (j, exp(−d²/ε)) for every entry, by the vectorised exp (≤ 2 ulp from
/// `f64::exp`), through a small buffer.
fn gaussian_in_place<J>(entries: &mut [(J, f64)], eps: f64) {
    let mut buf = [0.0f64; 256];
    for chunk in entries.chunks_mut(buf.len()) {
        let b = &mut buf[..chunk.len()];
        for (v, e) in b.iter_mut().zip(chunk.iter()) {
            *v = e.1;
        }
        fast_exp::exp_scaled(b, -1.0 / eps);
        for (v, e) in b.iter().zip(chunk.iter_mut()) {
            e.1 = *v;
        }
    }
}

/// q^(−α), with the common α = 0 and α = 1 exact and without `powf`.
fn density_power(q: f64, alpha: f64) -> f64 {
    if alpha == 0.0 {
        1.0
    } else if alpha == 1.0 {
        1.0 / q
    } else {
        q.powf(-alpha)
    }
}

/// ε ln(1/η): squared distances at most this have weight ≥ η.
fn threshold_radius2(eps: f64, eta: f64) -> f64 {
    if eps.is_infinite() {
        f64::INFINITY
    } else {
        eps * (1.0 / eta).ln()
    }
}

/// Search structures over the training points, built on first use after loading.
#[derive(Default)]
struct Indexes(OnceLock<Searcher>);

/// What the extension searches and reads: the training points' index (with their kNN
/// balls for a kNN kernel) and Φ row-major (one contiguous row per training point).
struct Searcher {
    points: PointIndex,
    phi_rows: Vec<f64>,
}

impl Clone for Indexes {
    fn clone(&self) -> Self {
        Indexes::default()
    }
}

impl PartialEq for Indexes {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Indexes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Indexes")
    }
}

/// The fitted diffusion kernel and its eigenpairs, shared by diffusion maps, Laplacian
/// eigenmaps and spectral clustering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffusionCore {
    spec: DiffusionKernel,
    x: StoredMat,
    epsilon: f64,
    dimension_estimate: Option<f64>,
    radii2: Vec<f64>,
    /// q_i^{−α}.
    qa: Vec<f64>,
    degree: Vec<f64>,
    sum_degree: f64,
    median_degree: f64,
    median_density: f64,
    /// λ₀ = 1 ≥ λ₁ ≥ … (eigenvalues of the symmetric kernel).
    values: Vec<f64>,
    /// Eigenvectors ψ (N × m), ψ₀ = sqrt(d/Σd).
    psi: StoredMat,
    /// diag(s) ψ with sᵢ = q_i^{−α} d_i^{−1/2}: the extension is wᵀ(zᵢ) Φ scaled per row.
    phi: StoredMat,
    residual: Option<ResidualFactor>,
    solver: Solver,
    solver_note: Option<String>,
    nnz: usize,
    #[serde(skip)]
    index: Indexes,
}

impl DiffusionCore {
    /// Fits the kernel on `x` and computes `m` eigenpairs (ψ₀ included).
    pub(crate) fn fit(
        x: MatRef<'_, f64>,
        spec: &DiffusionKernel,
        m: usize,
        solver: Solver,
        rank_tolerance: f64,
        residual: Option<bool>,
    ) -> Result<DiffusionCore> {
        let n = x.nrows();
        if m < 2 || m > n {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be between 1 and N − 1 = {} (ψ₀ is not a coordinate), got {}",
                    n.saturating_sub(1),
                    m.saturating_sub(1)
                ),
            ));
        }
        let mut nk = spec.normalised(x)?;
        // ψ₀ = sqrt(d/Σd) is an exact eigenvector with eigenvalue 1: deflate it and
        // compute λ₁.. of k − ψ₀ψ₀ᵀ (robust when λ₁ is close to 1, nearly separated
        // clusters).
        let sum_degree: f64 = nk.degree.iter().sum();
        let psi0: Vec<f64> = nk.degree.iter().map(|d| (d / sum_degree).sqrt()).collect();
        let (eig, nnz): (Eigen, usize) = match &mut nk.kernel {
            Weights::Dense(k) => {
                for j in 0..n {
                    for i in 0..n {
                        k[(i, j)] -= psi0[i] * psi0[j];
                    }
                }
                let e = top_eigen(k.as_ref(), m - 1, solver)?;
                for j in 0..n {
                    for i in 0..n {
                        k[(i, j)] += psi0[i] * psi0[j];
                    }
                }
                (e, n * n)
            }
            Weights::Sparse(k) => {
                let shift_invert = match solver {
                    Solver::Auto => n > AUTO_DENSE_MAX,
                    Solver::ShiftInvert => true,
                    _ => false,
                };
                let si = if shift_invert && lanczos_fits(m - 1, n) {
                    top_eigen_near_one(k, m - 1, &psi0, SHIFT_INVERT_SIGMA)
                } else {
                    None
                };
                let e = match si {
                    Some(e) => e,
                    None => {
                        let mut e = top_eigen_sparse(k, m - 1, solver, Some(&psi0))?;
                        if shift_invert && e.note.is_none() {
                            e.note = Some(
                                "shift-invert was not used (factor too large or failed); plain Lanczos"
                                    .into(),
                            );
                        }
                        e
                    }
                };
                (e, k.nnz())
            }
        };
        if eig.values[0] >= 1.0 - 1e-12 {
            return Err(Error::Eigensolver(format!(
                "the second eigenvalue of the diffusion kernel is {} (≥ 1 − 1e-12): the graph \
                 is numerically disconnected; increase ε or the number of neighbours",
                eig.values[0]
            )));
        }
        let mut values = vec![1.0];
        values.extend_from_slice(&eig.values);
        let tol = rank_tolerance;
        if let Some(j) = (1..m).find(|&j| values[j].is_nan() || values[j] <= tol) {
            return Err(Error::NotEnoughPositiveEigenvalues {
                requested: j,
                available: j - 1,
                value: values[j],
                tolerance: tol,
            });
        }
        let psi = Mat::from_fn(n, m, |i, j| {
            if j == 0 {
                psi0[i]
            } else {
                eig.vectors[(i, j - 1)]
            }
        });
        let alpha = spec.alpha;
        let qa: Vec<f64> = nk
            .density
            .iter()
            .map(|&q| density_power(q, alpha))
            .collect();
        let phi = Mat::from_fn(n, m, |i, j| psi[(i, j)] * qa[i] / nk.degree[i].sqrt());
        let want_residual = residual.unwrap_or(matches!(nk.kernel, Weights::Dense(_)));
        let residual = want_residual.then(|| residual_factor(&nk.kernel, rank_tolerance));
        let mut sorted = nk.degree.clone();
        let median_degree = bandwidth::median(&mut sorted);
        let mut sorted = nk.density.clone();
        let median_density = bandwidth::median(&mut sorted);
        Ok(DiffusionCore {
            spec: *spec,
            x: StoredMat::from_mat(x),
            epsilon: nk.epsilon,
            dimension_estimate: nk.dimension_estimate,
            radii2: nk.radii2,
            qa,
            degree: nk.degree,
            sum_degree,
            median_degree,
            median_density,
            values,
            psi: StoredMat::from_mat(psi.as_ref()),
            phi: StoredMat::from_mat(phi.as_ref()),
            residual,
            solver: eig.solver,
            solver_note: eig.note,
            nnz,
            index: Indexes::default(),
        })
    }

    /// ε used.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The kernel specification as given.
    pub fn spec(&self) -> &DiffusionKernel {
        &self.spec
    }

    /// Twice the maximal log-slope when ε came from the log-slope rule.
    pub fn dimension_estimate(&self) -> Option<f64> {
        self.dimension_estimate
    }

    /// Eigenvalues λ₀ = 1 ≥ λ₁ ≥ … of the symmetric kernel.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors ψ (N × m) of the symmetric kernel, ψ₀ = sqrt(d/Σd).
    pub fn eigenvectors(&self) -> MatRef<'_, f64> {
        self.psi.view()
    }

    /// Median training density (Σ_j w_ij).
    pub fn median_density(&self) -> f64 {
        self.median_density
    }

    /// Degrees dᵢ of the training points.
    pub fn degrees(&self) -> &[f64] {
        &self.degree
    }

    /// Σᵢ dᵢ.
    pub fn sum_degree(&self) -> f64 {
        self.sum_degree
    }

    /// Solver used and its note.
    pub fn solver_used(&self) -> (Solver, Option<&str>) {
        (self.solver, self.solver_note.as_deref())
    }

    /// Stored non-zero weights (N² for a dense kernel).
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Numerical rank of the kernel kept for the residual, when computed.
    pub fn residual_rank(&self) -> Option<usize> {
        self.residual.as_ref().map(ResidualFactor::rank)
    }

    /// Training data dimension.
    pub fn input_width(&self) -> usize {
        self.x.ncols()
    }

    fn n(&self) -> usize {
        self.x.nrows()
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let (n, m) = (self.x.nrows(), self.values.len());
        self.x.is_consistent()
            && self.psi.is_shape(n, m)
            && self.phi.is_shape(n, m)
            && self.qa.len() == n
            && self.degree.len() == n
            && (self.radii2.is_empty() || self.radii2.len() == n)
            && matches!(self.spec.sparsity, Sparsity::Knn(_)) == !self.radii2.is_empty()
            && self.residual.as_ref().is_none_or(|r| r.is_consistent(n))
    }

    fn indexes(&self) -> &Searcher {
        self.index.0.get_or_init(|| {
            let x = self.x.view();
            let phi = self.phi.view();
            let phi_rows = (0..phi.nrows())
                .flat_map(|i| (0..phi.ncols()).map(move |j| phi[(i, j)]))
                .collect();
            Searcher {
                points: if self.radii2.is_empty() {
                    PointIndex::new(x)
                } else {
                    PointIndex::with_balls(x, &self.radii2)
                },
                phi_rows,
            }
        })
    }

    /// Weights of new points to the training points, one sparse row per point
    /// (sparse kernels).
    fn sparse_rows(&self, z: MatRef<'_, f64>, groups: &[usize]) -> SparseRows {
        let eps = self.epsilon;
        let points = &self.indexes().points;
        let mut scratch = Scratch::default();
        let mut links = Vec::new();
        let mut spans = vec![(0, 0); z.nrows()];
        match self.spec.sparsity {
            Sparsity::Knn(k) => {
                // Rows come in locality order, cut into groups of nearby rows
                // (extend_psi); a group shares one descent (PointIndex::mirror_group).
                let mut qs = Vec::new();
                let mut ends = Vec::new();
                for g in groups.windows(2) {
                    let rows = g[0]..g[1];
                    qs.clear();
                    for r in rows.clone() {
                        qs.extend(z.row(r).iter().copied());
                    }
                    ends.clear();
                    let mut from = links.len();
                    points.mirror_group(&qs, k, &mut scratch, &mut links, &mut ends);
                    for (r, &to) in rows.zip(&ends) {
                        spans[r] = (from, to);
                        from = to;
                    }
                }
                gaussian_in_place(&mut links, eps);
            }
            Sparsity::Threshold(eta) => {
                let r2 = threshold_radius2(eps, eta);
                let mut q = vec![0.0; z.ncols()];
                let mut found = Vec::new();
                for (i, span) in spans.iter_mut().enumerate() {
                    for (j, v) in q.iter_mut().enumerate() {
                        *v = z[(i, j)];
                    }
                    found.clear();
                    points.within(&q, r2, &mut scratch, &mut found);
                    found.sort_by_key(|p| p.0);
                    let from = links.len();
                    links.extend(
                        found
                            .iter()
                            .map(|&(j, d)| (j, (-d / eps).exp()))
                            .filter(|p| p.1 >= eta),
                    );
                    *span = (from, links.len());
                }
            }
            Sparsity::Dense => unreachable!("dense kernels use kernel blocks"),
        }
        SparseRows { spans, links }
    }

    /// Σ_{z' in the batch} w(z, z') for every row z of the batch (the union density's
    /// batch part, SPEC §7).
    fn batch_density(&self, z: MatRef<'_, f64>) -> Vec<f64> {
        let eps = self.epsilon;
        let m = z.nrows();
        match self.spec.sparsity {
            Sparsity::Dense => {
                let k = Kernel::Gaussian {
                    epsilon: Bandwidth::Value(eps),
                };
                let sq = row_sq_norms(z);
                let rows = crate::extend::chunk_rows(m);
                (0..m)
                    .step_by(rows)
                    .collect::<Vec<_>>()
                    .into_par_iter()
                    .flat_map_iter(|s| {
                        let len = rows.min(m - s);
                        let b = k.block(z.subrows(s, len), &sq[s..s + len], z, &sq, Par::Seq);
                        (0..len)
                            .map(|i| (0..m).map(|j| b[(i, j)]).sum::<f64>())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }
            Sparsity::Threshold(eta) => {
                let batch = PointIndex::new(z);
                let r2 = threshold_radius2(eps, eta);
                (0..m)
                    .into_par_iter()
                    .map_init(
                        || (Scratch::default(), Vec::new()),
                        |(s, out), i| {
                            out.clear();
                            batch.within(batch.row(i), r2, s, out);
                            out.iter()
                                .map(|&(_, d)| (-d / eps).exp())
                                .filter(|&w| w >= eta)
                                .sum()
                        },
                    )
                    .collect()
            }
            Sparsity::Knn(k) => {
                // The batch's own kNN graph under the mirror rule: r²_z is z's k-th
                // nearest squared distance to the training points.
                let points = &self.indexes().points;
                let batch = PointIndex::new(z);
                let r2 = batch.map_groups(|_, qs, s, out| points.kth_group(qs, k, s, out));
                let batch = batch.into_balls(&r2);
                symmetric_rows(&batch, &r2, |row| {
                    row.iter().map(|&(_, d)| (-d / eps).exp()).sum()
                })
            }
        }
    }

    /// The extension ψ̂(z) of every eigenvector (M × m, ψ̂₀ = sqrt(d(z)/Σd)), with
    /// per-row diagnostics: `degree` d(z), `isolated` (with `OnIsolated::Nan`), the
    /// residual k₀(z, z) of the symmetric kernel (NaN when not computed) and the
    /// m-component reconstruction error k(z,z) − Σ_j λ_j ψ̂_j(z)².
    pub(crate) fn extend_psi(
        &self,
        z: MatRef<'_, f64>,
        density: Density,
        on_isolated: OnIsolated,
    ) -> Result<Extension> {
        validate::finite_nonempty("new points", z)?;
        validate::columns("new points", z, self.input_width())?;
        // kNN rows run in locality order, cut once into groups of nearby rows that
        // share descents (sparse_rows); results go back to input order.
        let (perm, groups) = match self.spec.sparsity {
            Sparsity::Knn(_) => {
                let (order, bounds) = locality_groups(z, 16);
                (
                    Some(order.into_iter().map(|i| i as usize).collect::<Vec<_>>()),
                    bounds,
                )
            }
            _ => (None, Vec::new()),
        };
        let zp = perm
            .as_ref()
            .map(|p| Mat::from_fn(z.nrows(), z.ncols(), |r, j| z[(p[r], j)]));
        let z = zp.as_ref().map_or(z, |zp| zp.as_ref());
        let extra_q = match density {
            Density::Training => None,
            Density::Union => Some(self.batch_density(z)),
        };
        let n = self.n();
        let m = self.values.len();
        // Sparse rows: chunks of 256 rows, small enough to balance the threads.
        let chunk_width = if self.spec.sparsity == Sparsity::Dense || self.residual.is_some() {
            n
        } else {
            2048
        };
        let x_sq = (self.spec.sparsity == Sparsity::Dense).then(|| row_sq_norms(self.x.view()));
        // Isolated rows are flagged in every chunk; the first in input order is the error.
        let ext = by_chunks(z, chunk_width, m, |start, zc| {
            // Sparse rows, or a dense block.
            let (sparse, dense) = match &x_sq {
                Some(x_sq) => {
                    let k = Kernel::Gaussian {
                        epsilon: Bandwidth::Value(self.epsilon),
                    };
                    let zsq = row_sq_norms(zc);
                    (None, Some(k.block(zc, &zsq, self.x.view(), x_sq, Par::Seq)))
                }
                None => {
                    // This chunk's groups, cut at its ends, from 0.
                    let end = start + zc.nrows();
                    let inner = groups.partition_point(|&b| b <= start)
                        ..groups.partition_point(|&b| b < end);
                    let g: Vec<usize> = std::iter::once(0)
                        .chain(groups[inner].iter().map(|&b| b - start))
                        .chain(std::iter::once(zc.nrows()))
                        .collect();
                    (Some(self.sparse_rows(zc, &g)), None)
                }
            };
            Ok(self.finish_rows(start, zc.nrows(), sparse, dense, extra_q.as_deref()))
        })?;
        let mut ext = match &perm {
            Some(p) => ext.unpermuted(p),
            None => ext,
        };
        let flags = ext.extra.iter().position(|c| c.name == "isolated");
        let first = flags.and_then(|c| ext.extra[c].values.iter().position(|&v| v != 0.0));
        match (on_isolated, first) {
            (OnIsolated::Error, Some(row)) => Err(Error::Isolated {
                what: "new points",
                row,
                rule: self.spec.sparsity.describe(),
            }),
            (OnIsolated::Error, None) => {
                ext.extra.retain(|c| c.name != "isolated");
                Ok(ext)
            }
            (OnIsolated::Nan, _) => Ok(ext),
        }
    }

    fn finish_rows(
        &self,
        start: usize,
        rows: usize,
        sparse: Option<SparseRows>,
        dense: Option<Mat<f64>>,
        extra_q: Option<&[f64]>,
    ) -> Extension {
        let n = self.n();
        let m = self.values.len();
        let alpha = self.spec.alpha;
        let phi = &self.indexes().phi_rows;
        let mut psi = Mat::<f64>::zeros(rows, m);
        let mut degree = vec![0.0; rows];
        let mut dens = vec![0.0; rows];
        let mut isolated = vec![0.0; rows];
        let mut kzz = vec![0.0; rows];
        // Per-row scale of the symmetric-kernel row: k_z,i = w_z,i sᵢ · scale(z).
        let mut scale = vec![0.0; rows];
        let mut acc = vec![0.0; m];
        for r in 0..rows {
            // (q_train(z), Σ w qa, wᵀΦ)
            acc.fill(0.0);
            let (mut q, mut wq) = (0.0, 0.0);
            let mut add = |i: usize, w: f64| {
                q += w;
                wq += w * self.qa[i];
                for (a, p) in acc.iter_mut().zip(&phi[i * m..(i + 1) * m]) {
                    *a += w * p;
                }
            };
            if let Some(s) = &sparse {
                for &(i, w) in s.row(r) {
                    add(i, w);
                }
            } else if let Some(b) = &dense {
                for i in 0..n {
                    let w = b[(r, i)];
                    if w != 0.0 {
                        add(i, w);
                    }
                }
            }
            if q.is_nan() || q <= 0.0 {
                isolated[r] = 1.0;
                psi.row_mut(r).fill(f64::NAN);
                degree[r] = f64::NAN;
                dens[r] = f64::NAN;
                kzz[r] = f64::NAN;
                scale[r] = f64::NAN;
                continue;
            }
            let qz = q + extra_q.map_or(0.0, |e| e[start + r]);
            let qza = density_power(qz, alpha);
            let dz = qza * wq;
            let sc = qza / dz.sqrt();
            for j in 0..m {
                psi[(r, j)] = acc[j] * sc / self.values[j];
            }
            psi[(r, 0)] = (dz / self.sum_degree).sqrt();
            degree[r] = dz;
            dens[r] = qz;
            kzz[r] = qza * qza / dz;
            scale[r] = sc;
        }
        let mut recon = vec![0.0; rows];
        for r in 0..rows {
            let s: f64 = (0..m)
                .map(|j| self.values[j] * psi[(r, j)] * psi[(r, j)])
                .sum();
            recon[r] = (kzz[r] - s).max(0.0);
            if kzz[r].is_nan() {
                recon[r] = f64::NAN;
            }
        }
        let residual = match &self.residual {
            None => vec![f64::NAN; rows],
            Some(f) => {
                let s: Vec<f64> = (0..n).map(|i| self.qa[i] / self.degree[i].sqrt()).collect();
                let kz = match (&sparse, &dense) {
                    (_, Some(b)) => Mat::from_fn(rows, n, |r, i| b[(r, i)] * s[i] * scale[r]),
                    (Some(sp), _) => {
                        let mut kz = Mat::zeros(rows, n);
                        for r in 0..rows {
                            for &(i, w) in sp.row(r) {
                                kz[(r, i)] = w * s[i] * scale[r];
                            }
                        }
                        kz
                    }
                    (None, None) => unreachable!("rows are sparse or dense"),
                };
                let mut v = f.residuals(kz.as_ref(), &kzz);
                for (x, &iso) in v.iter_mut().zip(&isolated) {
                    if iso != 0.0 {
                        *x = f64::NAN;
                    }
                }
                v
            }
        };
        let mut extra = vec![
            Column {
                name: "degree",
                values: degree,
            },
            Column {
                name: "density",
                values: dens,
            },
        ];
        extra.push(Column {
            name: "isolated",
            values: isolated,
        });
        Extension {
            coordinates: psi,
            residual,
            reconstruction_error: recon,
            extra,
        }
    }

    /// Replaces the `degree` and `density` columns by `relative_degree` = d(z) / median
    /// training degree and `relative_density` = q(z) / median training density. (For
    /// α = 1 the degree is invariant under w(z, ·) ↦ c·w(z, ·), so a far point need not
    /// show in it; the density q(z) = Σᵢ w(z, xᵢ) does.)
    pub(crate) fn relative_degree(&self, ext: &mut Extension) {
        for c in ext.extra.iter_mut() {
            if c.name == "degree" {
                c.name = "relative_degree";
                c.values.iter_mut().for_each(|v| *v /= self.median_degree);
            } else if c.name == "density" {
                c.name = "relative_density";
                c.values.iter_mut().for_each(|v| *v /= self.median_density);
            }
        }
    }
}

/// Pivoted Cholesky of the (dense or sparse) symmetric kernel for the residual.
fn residual_factor(k: &Weights, tol: f64) -> ResidualFactor {
    let (n, diag): (usize, Vec<f64>) = match k {
        Weights::Dense(m) => (m.nrows(), (0..m.nrows()).map(|i| m[(i, i)]).collect()),
        Weights::Sparse(s) => (
            s.n(),
            (0..s.n())
                .map(|i| {
                    let (c, v) = s.row(i);
                    c.binary_search(&(i as u32)).map_or(0.0, |p| v[p])
                })
                .collect(),
        ),
    };
    let f = factorize(diag, tol, n, |p, out| match k {
        Weights::Dense(m) => out.copy_from_slice(m.col_as_slice(p)),
        Weights::Sparse(s) => s.column_into(p, out),
    });
    ResidualFactor::from_cholesky(f.chol, tol)
}

/// Output coordinates of diffusion maps (SPEC §7), j = 1..d.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Output {
    /// λ_j^t ψ_j/ψ₀: Euclidean distance = diffusion distance at time t.
    #[default]
    Diffusion,
    /// λ_j^{1/2} ψ_j (seed 000 Φ̃).
    Standard,
    /// standard · sqrt(d/Σd) (seed 000 Ũ).
    Weighted,
    /// standard · sqrt(Σd/d) (seed 000 Ṽ; diffusion with t = ½).
    Normalized,
}

impl Output {
    /// Parses the flavour name.
    pub fn from_name(s: &str) -> Result<Output> {
        match s {
            "diffusion" => Ok(Output::Diffusion),
            "standard" => Ok(Output::Standard),
            "weighted" => Ok(Output::Weighted),
            "normalized" | "normalised" => Ok(Output::Normalized),
            _ => Err(Error::param(
                "output",
                format!("expected diffusion, standard, weighted or normalized, got {s:?}"),
            )),
        }
    }

    /// The flavour's name.
    pub fn name(&self) -> &'static str {
        match self {
            Output::Diffusion => "diffusion",
            Output::Standard => "standard",
            Output::Weighted => "weighted",
            Output::Normalized => "normalized",
        }
    }
}

/// Coordinates j = 1..d from ψ rows (column 0 = ψ₀ = sqrt(d/Σd)).
fn flavour(psi: MatRef<'_, f64>, values: &[f64], d: usize, output: Output, t: f64) -> Mat<f64> {
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
        if !(self.t >= 0.0 && self.t.is_finite()) {
            return Err(Error::param(
                "t",
                format!("must be finite and ≥ 0, got {}", self.t),
            ));
        }
        if self.n_components == 0 {
            return Err(Error::param("n_components", "must be at least 1, got 0"));
        }
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
        })
    }
}

/// A fitted diffusion map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedDiffusionMaps {
    params: DiffusionMaps,
    embedding: StoredMat,
    core: DiffusionCore,
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
        let mut e = self.core.extend_psi(new, density, on_isolated)?;
        e.coordinates = flavour(
            e.coordinates.as_ref(),
            &self.core.values,
            self.params.n_components,
            self.params.output,
            self.params.t,
        );
        self.core.relative_degree(&mut e);
        Ok(e)
    }

    /// The same model with another output flavour and diffusion time (no refit).
    pub fn with_output(&self, output: Output, t: f64) -> Result<FittedDiffusionMaps> {
        if !(t >= 0.0 && t.is_finite()) {
            return Err(Error::param(
                "t",
                format!("must be finite and ≥ 0, got {t}"),
            ));
        }
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
        self.core.is_consistent()
            && self.core.values.len() == self.params.n_components + 1
            && self
                .embedding
                .is_shape(self.core.n(), self.params.n_components)
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

/// Laplacian eigenmaps (SPEC §7): the diffusion kernel's eigenvectors, output ψ_j/ψ₀
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
        if self.n_components == 0 {
            return Err(Error::param("n_components", "must be at least 1, got 0"));
        }
        let core = DiffusionCore::fit(
            x,
            &self.kernel,
            self.n_components + 1,
            self.solver,
            self.rank_tolerance,
            Some(false),
        )?;
        let embedding = flavour(
            core.eigenvectors(),
            core.eigenvalues(),
            self.n_components,
            Output::Diffusion,
            0.0,
        );
        Ok(FittedEigenmaps {
            params: self.clone(),
            embedding: StoredMat::from_mat(embedding.as_ref()),
            core,
        })
    }
}

/// Fitted Laplacian eigenmaps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedEigenmaps {
    params: LaplacianEigenmaps,
    embedding: StoredMat,
    core: DiffusionCore,
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
        self.core.is_consistent()
            && self.core.values.len() == self.params.n_components + 1
            && self
                .embedding
                .is_shape(self.core.n(), self.params.n_components)
    }
}

impl OutOfSample for FittedEigenmaps {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        let mut e = self
            .core
            .extend_psi(new, Density::Training, self.params.on_isolated)?;
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

pub use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};

impl crate::model::params::Named for Output {
    fn name(&self) -> &'static str {
        Output::name(self)
    }
    fn from_name(s: &str) -> Result<Self> {
        Output::from_name(s)
    }
}

impl crate::model::params::Named for Density {
    fn name(&self) -> &'static str {
        Density::name(self)
    }
    fn from_name(s: &str) -> Result<Self> {
        Density::from_name(s)
    }
}

impl crate::model::params::Named for OnIsolated {
    fn name(&self) -> &'static str {
        OnIsolated::name(self)
    }
    fn from_name(s: &str) -> Result<Self> {
        OnIsolated::from_name(s)
    }
}
