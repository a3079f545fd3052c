//! Maximum variance unfolding (maths §15) [Weinberger & Saul 2006]: the centred Gram
//! matrix K of largest trace that keeps the length of every edge of the symmetric kNN
//! graph, a semidefinite program; embedding = U_d Λ_d^{1/2} of K.
//!
//! Exact MVU solves the N×N program with an interior-point method of its own (`sdp`),
//! the edge lengths kept as **equalities** (maths §15), after a facial reduction that
//! removes what every feasible K must annihilate (the affine dependencies of the
//! graph's cliques); N up to [`MAX_EXACT`]. Landmark MVU (`n_landmarks = Some(m)`)
//! solves an m×m program instead, K = Q L Qᵀ with Q the LLE reconstruction of every
//! point from the landmarks, the edge lengths as **inequalities** (≤), edges brought
//! into the program as they are violated (`landmark`).
//!
//! New points get the barycentric weights of their k nearest training points applied
//! to the embedding (maths §14, as LLE): sample-wise, **not exact on training points**
//! (a training point's weights spread a little over its neighbours), with the
//! reconstruction error as the per-point reliability.

use crate::error::{Error, Result};
use crate::linalg::stored::StoredMat;
use crate::model::method::{
    no_such_option, points_only, Configuration, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::{Kind, ParamSpec, Values};
use crate::model::specs::{fmt_list, put_debug, N_COMPONENTS};
use crate::neighbors::{knn_stoppable, Graph};
use crate::validate;
use faer::MatRef;
pub use sdp::{SdpStatus, REDUCED_TOL};
use serde::{Deserialize, Serialize};

mod landmark;
mod problem;
mod sdp;

/// The most points exact MVU takes: its program has one constraint per edge (~0.7·k·N)
/// and each iteration factors a dense matrix of that order (N = 400, k = 5: 16 s).
pub const MAX_EXACT: usize = 1000;

/// Maximum variance unfolding (maths §15).
///
/// ```
/// use oose::methods::mvu::MaximumVarianceUnfolding;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(120, 0.0, false, 0).points;
/// let m = MaximumVarianceUnfolding::default()
///     .fit(x.as_ref())
///     .unwrap();
/// // Unrolled: the two top eigenvalues of K hold almost all of its trace.
/// let s = m.kernel_spectrum();
/// assert!((s[0] + s[1]) / m.objective() > 0.9);
/// assert_eq!(m.embedding().ncols(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaximumVarianceUnfolding {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Neighbours k of each point; an edge joins i and j if either chose the other
    /// (default 5). Also the neighbours of the extension's barycentric weights.
    pub n_neighbors: usize,
    /// Regularisation of the local Gram matrices of the extension's barycentric
    /// weights, as LLE's `reg` (default 1e-3).
    pub reg: f64,
    /// Relative accuracy of the semidefinite program: primal and dual infeasibility,
    /// duality gap, and the gap between the primal and dual objectives (default 1e-8).
    pub tol: f64,
    /// Most interior-point iterations (default 100; per round with landmarks).
    pub max_iter: usize,
    /// Landmark MVU with this many landmarks (farthest-point sampling), edge lengths as
    /// inequalities; `None` (default): exact MVU, at most [`MAX_EXACT`] points.
    pub n_landmarks: Option<usize>,
}

impl Default for MaximumVarianceUnfolding {
    fn default() -> Self {
        MaximumVarianceUnfolding {
            n_components: 2,
            n_neighbors: 5,
            reg: 1e-3,
            tol: 1e-8,
            max_iter: 100,
            n_landmarks: None,
        }
    }
}

impl MaximumVarianceUnfolding {
    fn validate(&self, n: usize) -> Result<()> {
        let (k, d) = (self.n_neighbors, self.n_components);
        validate::count("n_neighbors", k, n.saturating_sub(1), "N − 1")?;
        validate::count("n_components", d, n.saturating_sub(1), "N − 1")?;
        if let Some(m) = self.n_landmarks {
            if m <= d || m > n {
                return Err(Error::param(
                    "n_landmarks",
                    format!(
                        "must be between n_components + 1 = {} and N = {n}, got {m}",
                        d + 1
                    ),
                ));
            }
        } else if n > MAX_EXACT {
            return Err(Error::Shape {
                what: "training points",
                expected: format!(
                    "at most {MAX_EXACT} rows for exact MVU (one constraint per edge, a dense \
                     factorisation of their number per iteration); use landmarks \
                     (n_landmarks), or fit on a subset and extend the rest"
                ),
                got: format!("{n} rows"),
            });
        }
        validate::non_negative("reg", self.reg)?;
        if !(self.tol > 0.0 && self.tol < 1.0) {
            return Err(Error::param(
                "tol",
                format!("must be in (0, 1), got {}", self.tol),
            ));
        }
        validate::at_least_one("max_iter", self.max_iter)?;
        Ok(())
    }

    /// Fits on the rows of `x`. `n_neighbors` ≥ N (from 2 points) is lowered to N − 1
    /// with a fit warning, as the other graph methods do.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedMvu> {
        validate::training_points("training points", x)?;
        crate::neighbors::fit_lowered(self, x, |p| &mut p.n_neighbors, Self::fit_noting)
    }

    fn fit_noting(&self, x: MatRef<'_, f64>, warnings: Vec<String>) -> Result<FittedMvu> {
        let n = x.nrows();
        self.validate(n)?;
        let k = self.n_neighbors;
        let (idx, dist) = knn_stoppable(x, x, k, true)?;
        let graph = Graph::from_knn(&idx, &dist);
        let (_, sizes) = graph.components();
        if sizes.len() > 1 {
            return Err(Error::Disconnected {
                graph: format!("{k}-nearest-neighbour graph"),
                sizes,
                hint: "MVU's variance is unbounded when components can drift apart; use \
                       more neighbours (n_neighbors)",
            });
        }
        let edges = graph.edges();
        let (d, tol, max_iter) = (self.n_components, self.tol, self.max_iter);
        let (solved, landmarks) = match self.n_landmarks {
            None => (problem::exact(x, &edges, d, tol, max_iter)?, None),
            Some(m) => {
                let chosen = landmark::farthest_points(x, m);
                let (solved, rounds, working) =
                    landmark::landmark(x, &idx, &edges, &chosen, self.reg, d, tol, max_iter)?;
                let info = LandmarkInfo {
                    landmarks: chosen,
                    rounds,
                    working_set: working,
                };
                (solved, Some(info))
            }
        };
        let mut warnings = warnings;
        if solved.status == SdpStatus::AlmostSolved {
            let objective_gap = sdp::objective_gap(solved.trace, solved.dual_objective);
            let meaning = if solved.primal_infeasibility <= sdp::FEASIBLE {
                // A restored, feasible K (maths §15): its trace is a lower bound.
                format!(
                    "K keeps every edge, so tr K is a lower bound on the optimum and the \
                     dual objective, {:.1e} above it, an upper one",
                    -objective_gap
                )
            } else {
                "tr K is known to about that accuracy".to_string()
            };
            warnings.push(format!(
                "the semidefinite program stopped short of tol = {:.0e}: primal \
                 infeasibility {:.1e}, relative gap {:.1e}, objective gap {:.1e} ({meaning})",
                self.tol, solved.primal_infeasibility, solved.gap, objective_gap,
            ));
        }
        Ok(FittedMvu {
            params: self.clone(),
            x: StoredMat::from_mat(x),
            embedding: StoredMat::from_mat(solved.embedding.as_ref()),
            n_edges: edges.len(),
            spectrum: solved.spectrum,
            objective: solved.trace,
            dual_objective: solved.dual_objective,
            status: solved.status,
            iterations: solved.iterations,
            primal_infeasibility: solved.primal_infeasibility,
            dual_infeasibility: solved.dual_infeasibility,
            gap: solved.gap,
            max_violation: solved.max_violation,
            landmarks,
            warnings: crate::model::method::Transient(warnings),
        })
    }
}

/// What landmark MVU chose and how its cutting-plane loop went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct LandmarkInfo {
    /// Rows of the landmarks in the training set.
    landmarks: Vec<usize>,
    /// Programs solved (each with the violated edges of the last added).
    rounds: usize,
    /// Edges in the last program.
    working_set: usize,
}

/// A fitted maximum variance unfolding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedMvu {
    params: MaximumVarianceUnfolding,
    x: StoredMat,
    embedding: StoredMat,
    n_edges: usize,
    spectrum: Vec<f64>,
    objective: f64,
    dual_objective: f64,
    status: SdpStatus,
    iterations: usize,
    primal_infeasibility: f64,
    dual_infeasibility: f64,
    gap: f64,
    max_violation: f64,
    landmarks: Option<LandmarkInfo>,
    #[serde(skip)]
    warnings: crate::model::method::Transient<Vec<String>>,
}

impl FittedMvu {
    /// Parameters as used (`n_neighbors` lowered to N − 1 if it was ≥ N).
    pub fn params(&self) -> &MaximumVarianceUnfolding {
        &self.params
    }

    /// The largest eigenvalues of K (up to 10), largest first, in squared data units.
    pub fn kernel_spectrum(&self) -> &[f64] {
        &self.spectrum
    }

    /// tr K, the maximised variance (times N).
    pub fn objective(&self) -> f64 {
        self.objective
    }

    /// Largest violation of an edge constraint relative to the mean squared edge
    /// length: |Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ − dᵢⱼ²| (exact), or the excess of Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ
    /// over dᵢⱼ² (landmarks), over every edge.
    pub fn max_violation(&self) -> f64 {
        self.max_violation
    }

    /// The solver's status, iterations, and relative primal infeasibility, dual
    /// infeasibility and duality gap at the end.
    pub fn solver_report(&self) -> (SdpStatus, usize, f64, f64, f64) {
        (
            self.status,
            self.iterations,
            self.primal_infeasibility,
            self.dual_infeasibility,
            self.gap,
        )
    }

    /// The training rows chosen as landmarks (landmark MVU), in the order chosen.
    pub fn landmarks(&self) -> Option<&[usize]> {
        self.landmarks.as_ref().map(|l| &l.landmarks[..])
    }

    fn is_consistent(&self) -> bool {
        let n = self.x.nrows();
        let landmarks_ok = match (&self.landmarks, self.params.n_landmarks) {
            (None, None) => true,
            (Some(l), Some(m)) => l.landmarks.len() == m && l.landmarks.iter().all(|&i| i < n),
            _ => false,
        };
        landmarks_ok
            && self.embedding.is_shape(n, self.params.n_components)
            && self.params.n_neighbors >= 1
            && self.params.n_neighbors < n
    }
}

crate::methods::lle::barycentric_out_of_sample!(FittedMvu);

const SPECS: &[ParamSpec] = &[
    N_COMPONENTS,
    ParamSpec::new(
        "n_neighbors",
        "knn",
        Kind::Int,
        "Neighbours k of each point: the graph whose edge lengths are kept (one ≥ N is \
         lowered to N − 1, with a warning), and the extension's barycentric weights.",
    ),
    ParamSpec::new(
        "reg",
        "reg",
        Kind::Float,
        "Regularisation of the local Gram matrices of the extension's barycentric weights.",
    ),
    ParamSpec::new(
        "tol",
        "tol",
        Kind::Float,
        "Relative accuracy of the semidefinite program (infeasibility, duality gap, objective gap).",
    ),
    ParamSpec::new(
        "max_iter",
        "max-iter",
        Kind::Int,
        "Most interior-point iterations (per program solved, with landmarks).",
    ),
    ParamSpec::new(
        "n_landmarks",
        "landmarks",
        Kind::Int,
        "Landmark MVU with this many landmarks (edge lengths as inequalities), for more \
         points than exact MVU takes; default: exact MVU.",
    ),
];

impl Method for MaximumVarianceUnfolding {
    type Fitted = FittedMvu;
    const METRIC: bool = true;
    const SPECS: &'static [ParamSpec] = SPECS;

    crate::params_as_data!(MaximumVarianceUnfolding {
        n_components,
        n_neighbors,
        reg,
        tol,
        max_iter,
        n_landmarks
    });

    fn configurations() -> Vec<Configuration> {
        let not_exact = Configuration::not_exact;
        vec![
            not_exact("k-5", Values::new()),
            not_exact("k-6", Values::new().with("n_neighbors", 6usize)),
            not_exact(
                "landmarks-12",
                Values::new()
                    .with("n_neighbors", 6usize)
                    .with("n_landmarks", 12usize),
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedMvu> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedMvu {
    crate::fitted_basics!(points: x, warnings: warnings);

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&[], |o| no_such_option(MaximumVarianceUnfolding::NAME, o))
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        match &self.landmarks {
            None => v.push(("edge_constraints".into(), "equalities".into())),
            Some(l) => {
                v.push(("edge_constraints".into(), "inequalities (≤)".into()));
                v.push(("n_landmarks".into(), l.landmarks.len().to_string()));
                v.push(("cutting_plane_rounds".into(), l.rounds.to_string()));
                v.push(("working_set_edges".into(), l.working_set.to_string()));
                let rows: Vec<String> = l.landmarks.iter().map(|i| i.to_string()).collect();
                v.push(("landmarks".into(), rows.join(",")));
            }
        }
        v.push(("n_edges".into(), self.n_edges.to_string()));
        v.push(("sdp_status".into(), self.status.name().into()));
        v.push(("sdp_iterations".into(), self.iterations.to_string()));
        put_debug(v, "objective", self.objective);
        put_debug(v, "dual_objective", self.dual_objective);
        v.push((
            "primal_infeasibility".into(),
            format!("{:.3e}", self.primal_infeasibility),
        ));
        v.push((
            "dual_infeasibility".into(),
            format!("{:.3e}", self.dual_infeasibility),
        ));
        v.push(("duality_gap".into(), format!("{:.3e}", self.gap)));
        // The gap in the objectives, which also counts the primal infeasibility times
        // the multipliers (large on degenerate graphs: maths §15).
        v.push((
            "objective_gap".into(),
            format!(
                "{:.3e}",
                sdp::objective_gap(self.objective, self.dual_objective)
            ),
        ));
        v.push((
            "max_constraint_violation".into(),
            format!("{:.3e}", self.max_violation),
        ));
        v.push(("kernel_spectrum".into(), fmt_list(&self.spectrum)));
        let d = self.params.n_components.min(self.spectrum.len());
        let top: f64 = self.spectrum[..d].iter().sum();
        v.push((
            "kernel_top_fraction".into(),
            format!("{:.6}", top / self.objective),
        ));
    }
}
