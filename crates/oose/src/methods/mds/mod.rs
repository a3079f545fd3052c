//! Classical multidimensional scaling (maths §5, [Trosset 2025]) on points, squared or plain
//! dissimilarities, or similarities, with out-of-sample extension by projection or
//! restricted reconstruction (one object, several jointly, the arc).
//!
//! Every input is turned into a similarity Γ: points and dissimilarities give
//! Γ = −½Δ₂, similarities are Γ itself. Then B = P Γ P (P = I − 11ᵀ/N),
//! B = U Λ Uᵀ, X = U_d Λ_d^{1/2}. A new object brings its similarities γ(z, x_i) and
//! γ(z, z); centring them with the training means gives τ_w's b and β (maths §5) —
//! for Γ = −½Δ₂ this is exactly b_i = −½(a₂ᵢ − mean a₂ − mean_j Δ₂ᵢⱼ + mean Δ₂) and
//! β = −½(0 − 2 mean a₂ + mean Δ₂). Projection: ŷ = Λ_d^{−1/2} U_dᵀ b. The shared core
//! [`Cmds`] is also what Landmark MDS and Isomap fit.

use crate::diagnostics::residual::ResidualFactor;
use crate::error::{Error, Result};
use crate::extend::projection::Projector;
use crate::extend::restricted::{self, apply_strategy, restricted_joint, Joint};
use crate::extend::{by_chunks, Extension, Strategy};
use crate::kernel::distance::{row_sq_norms, sq_distances};
use crate::linalg::center::KernelMeans;
use crate::linalg::eigen::{top_eigen, Solver};
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, Configuration, ExtendOptions, Fitted, InnerProduct, Input, InputKinds, Method,
    Registered,
};
use crate::model::params::{ParamSpec, Values};
use crate::model::specs::{fmt_list, solver_info, N_COMPONENTS, RANK_TOLERANCE, SOLVER};
use crate::validate;
use faer::{Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

mod cmds;
pub use cmds::Cmds;
pub(crate) use cmds::{cmds_info, strategy_only, Definiteness};

/// What the training input of a classical MDS was; new objects come in the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Proximity {
    /// Points (N×D); new objects are points.
    Points,
    /// Squared dissimilarities Δ₂ (N×N); a new object is its row a₂ (N values).
    SquaredDissimilarities,
    /// Dissimilarities δ (N×N); a new object is its row of δ (N values).
    Dissimilarities,
    /// Similarities Γ (N×N, symmetric); a new object is its row of γ(z, xᵢ), optionally
    /// followed by γ(z, z) (N + 1 values; needed for β unless Γ has a constant diagonal).
    Similarities,
}

crate::model::params::named!(Proximity, "input":
    Points => "points",
    SquaredDissimilarities => "squared-dissimilarities",
    Dissimilarities => "dissimilarities",
    Similarities => "similarities",
);

/// Classical MDS parameters.
///
/// ```
/// use oose::methods::mds::ClassicalMds;
/// use faer::mat;
/// // Seed 001 Example 2.
/// let d2 = mat![[0.0, 100.0, 45.0, 45.0], [100.0, 0.0, 45.0, 45.0],
///               [45.0, 45.0, 0.0, 64.0], [45.0, 45.0, 64.0, 0.0]];
/// let m = ClassicalMds { n_components: 2, ..Default::default() }
///     .fit_squared_dissimilarities(d2.as_ref()).unwrap();
/// assert!((m.core().eigenvalues()[0] - 50.0).abs() < 1e-12);
/// assert!((m.core().eigenvalues()[1] - 32.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassicalMds {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Eigensolver (default `Auto`).
    pub solver: Solver,
    /// Relative tolerance for positive eigenvalues and the residual factor (1e-12).
    pub rank_tolerance: f64,
}

impl Default for ClassicalMds {
    fn default() -> Self {
        ClassicalMds {
            n_components: 2,
            solver: Solver::Auto,
            rank_tolerance: 1e-12,
        }
    }
}

/// A fitted classical MDS.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedMds {
    params: ClassicalMds,
    input: Proximity,
    /// Training points (Points input only).
    x: StoredMat,
    x_sq: Vec<f64>,
    /// The constant diagonal of Γ (similarities), used as γ(z, z) when not given.
    constant_diagonal: Option<f64>,
    core: Cmds,
}

impl ClassicalMds {
    /// Fits on points (N×D): Δ₂ = squared Euclidean distances.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedMds> {
        validate::training_points("training data", x)?;
        crate::linalg::memory::plan(
            "classical MDS's similarity matrix (N×N)",
            3,
            x.nrows(),
            x.nrows(),
        )?;
        let sq = row_sq_norms(x);
        let mut gamma = sq_distances(x, &sq, x, &sq, Par::rayon(0));
        crate::kernel::distance::symmetrize(&mut gamma);
        let n = x.nrows();
        for j in 0..n {
            for v in gamma.col_as_slice_mut(j) {
                *v *= -0.5;
            }
            gamma[(j, j)] = 0.0;
        }
        let core = Cmds::fit(
            gamma,
            self.n_components,
            self.solver,
            self.rank_tolerance,
            Definiteness::Psd,
        )?;
        Ok(FittedMds {
            params: self.clone(),
            input: Proximity::Points,
            x: StoredMat::from_mat(x),
            x_sq: sq,
            constant_diagonal: None,
            core,
        })
    }

    /// Fits on squared dissimilarities Δ₂ (N×N: symmetric, ≥ 0, zero diagonal).
    pub fn fit_squared_dissimilarities(&self, d2: MatRef<'_, f64>) -> Result<FittedMds> {
        self.fit_proximity(d2, Proximity::SquaredDissimilarities)
    }

    /// Fits on dissimilarities δ (N×N: symmetric, ≥ 0, zero diagonal); Δ₂ = δ².
    pub fn fit_dissimilarities(&self, delta: MatRef<'_, f64>) -> Result<FittedMds> {
        self.fit_proximity(delta, Proximity::Dissimilarities)
    }

    /// Fits on a symmetric similarity matrix Γ (not necessarily PSD: only the top-d
    /// eigenpairs are used, the truncated B̄ of maths §5).
    pub fn fit_similarities(&self, gamma: MatRef<'_, f64>) -> Result<FittedMds> {
        self.fit_proximity(gamma, Proximity::Similarities)
    }

    /// Fits on any kind of input.
    pub fn fit_proximity(&self, m: MatRef<'_, f64>, kind: Proximity) -> Result<FittedMds> {
        if kind == Proximity::Points {
            return self.fit(m);
        }
        let what = proximity_what(kind);
        validate::finite_nonempty(what, m)?;
        validate::square_symmetric(what, m)?;
        let n = m.nrows();
        if kind != Proximity::Similarities {
            check_dissimilarity_values(what, m)?;
        }
        let gamma = Mat::from_fn(n, n, |i, j| {
            let v = 0.5 * (m[(i, j)] + m[(j, i)]);
            to_similarity(kind, v)
        });
        let constant_diagonal = (kind == Proximity::Similarities)
            .then(|| {
                let d0 = gamma[(0, 0)];
                (0..n).all(|i| gamma[(i, i)] == d0).then_some(d0)
            })
            .flatten();
        let core = Cmds::fit(
            gamma,
            self.n_components,
            self.solver,
            self.rank_tolerance,
            Definiteness::Check,
        )?;
        Ok(FittedMds {
            params: self.clone(),
            input: kind,
            x: StoredMat::default(),
            x_sq: Vec::new(),
            constant_diagonal,
            core,
        })
    }
}

fn proximity_what(kind: Proximity) -> &'static str {
    match kind {
        Proximity::Points => "training data",
        Proximity::SquaredDissimilarities => "squared dissimilarity matrix",
        Proximity::Dissimilarities => "dissimilarity matrix",
        Proximity::Similarities => "similarity matrix",
    }
}

fn to_similarity(kind: Proximity, v: f64) -> f64 {
    match kind {
        Proximity::SquaredDissimilarities => -0.5 * v,
        Proximity::Dissimilarities => -0.5 * v * v,
        Proximity::Similarities | Proximity::Points => v,
    }
}

fn check_dissimilarity_values(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    if let Some(i) = (0..m.nrows()).find(|&i| m[(i, i)] != 0.0) {
        return Err(Error::invalid(what, (i, i), m[(i, i)], "non-zero diagonal"));
    }
    check_nonnegative(what, m)
}

/// The first negative entry, row by row, is an error.
fn check_nonnegative(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    let mut entries = (0..m.nrows()).flat_map(|i| (0..m.ncols()).map(move |j| (i, j)));
    match entries.find(|&e| m[e] < 0.0) {
        Some(e) => Err(Error::invalid(what, e, m[e], "negative dissimilarity")),
        None => Ok(()),
    }
}

impl FittedMds {
    /// The parameters used.
    pub fn params(&self) -> &ClassicalMds {
        &self.params
    }

    /// The kind of input the model was fitted on (new objects come in the same kind).
    pub fn input(&self) -> Proximity {
        self.input
    }

    /// The fitted core (eigenvalues, negative eigenvalues, solver).
    pub fn core(&self) -> &Cmds {
        &self.core
    }

    /// Similarity rows (m×N) and γ(z, z) of new objects given in the input's kind.
    fn similarity_rows(&self, new: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<f64>)> {
        let n = self.core.n_train;
        let m = new.nrows();
        match self.input {
            Proximity::Points => {
                validate::columns("new points", new, self.x.ncols())?;
                validate::finite("new points", new)?;
                let z_sq = row_sq_norms(new);
                let mut rows = sq_distances(new, &z_sq, self.x.view(), &self.x_sq, Par::Seq);
                for j in 0..n {
                    rows.col_as_slice_mut(j).iter_mut().for_each(|v| *v *= -0.5);
                }
                Ok((rows, vec![0.0; m]))
            }
            Proximity::SquaredDissimilarities | Proximity::Dissimilarities => {
                let what = "dissimilarities of new objects";
                validate::columns(what, new, n)?;
                validate::finite(what, new)?;
                check_nonnegative(what, new)?;
                let rows = Mat::from_fn(m, n, |i, j| to_similarity(self.input, new[(i, j)]));
                Ok((rows, vec![0.0; m]))
            }
            Proximity::Similarities => {
                let what = "similarities of new objects";
                if new.ncols() != n && new.ncols() != n + 1 {
                    return Err(Error::Shape {
                        what,
                        expected: format!("{n} columns, or {} with γ(z, z) last", n + 1),
                        got: format!("{} columns", new.ncols()),
                    });
                }
                validate::finite(what, new)?;
                let rows = new.subcols(0, n).to_owned();
                let self_sim = if new.ncols() == n + 1 {
                    (0..m).map(|i| new[(i, n)]).collect()
                } else {
                    vec![self.constant_diagonal.unwrap_or(f64::NAN); m]
                };
                Ok((rows, self_sim))
            }
        }
    }

    /// Extends new objects with the chosen strategy. Diagnostics: `residual` (when B is
    /// PSD), `reconstruction_error` = max(0, β − ||ŷ||²), and the columns
    /// `beta_minus_projection`, `objective_projection` (plus `objective_restricted`,
    /// `lambda`, `unique` for restricted reconstruction).
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        if self.input == Proximity::Points {
            validate::columns("new points", new, self.x.ncols())?;
            validate::finite("new points", new)?;
            let d = self.core.eigenvalues.len();
            return by_chunks(new, self.core.n_train, d, |_, z| {
                let (rows, s) = self.similarity_rows(z)?;
                self.core.extend_block(rows.as_ref(), &s, strategy)
            });
        }
        let (rows, s) = self.similarity_rows(new)?;
        self.core.extend_rows(rows.as_ref(), &s, strategy)
    }

    /// Joint restricted reconstruction of the k new objects in `new` (maths §5). For
    /// points the mutual dissimilarities are computed; otherwise `mutual` (k×k, in the
    /// input's kind: squared or plain dissimilarities with zero diagonal, or similarities
    /// with γ(z, z) on the diagonal) must be given.
    pub fn extend_joint(
        &self,
        new: MatRef<'_, f64>,
        mutual: Option<MatRef<'_, f64>>,
    ) -> Result<Joint> {
        let (rows, self_sim) = self.similarity_rows(new)?;
        let k = new.nrows();
        if k == 0 {
            return Err(Error::Empty {
                what: "new objects",
                rows: 0,
                cols: new.ncols(),
            });
        }
        let mutual_sim = match (self.input, mutual) {
            (Proximity::Points, _) => {
                let sq = row_sq_norms(new);
                let mut g = sq_distances(new, &sq, new, &sq, Par::Seq);
                for j in 0..k {
                    g.col_as_slice_mut(j).iter_mut().for_each(|v| *v *= -0.5);
                    g[(j, j)] = 0.0;
                }
                g
            }
            (_, None) => {
                return Err(Error::param(
                    "mutual",
                    "joint restricted reconstruction of proximity data needs the k×k \
                     proximities among the new objects",
                ))
            }
            (kind, Some(mm)) => {
                let what = "proximities among the new objects";
                validate::finite(what, mm)?;
                if mm.nrows() != k || mm.ncols() != k {
                    return Err(Error::Shape {
                        what,
                        expected: format!("{k}×{k}"),
                        got: format!("{}×{}", mm.nrows(), mm.ncols()),
                    });
                }
                validate::square_symmetric(what, mm)?;
                if kind != Proximity::Similarities {
                    check_dissimilarity_values(what, mm)?;
                }
                let g = Mat::from_fn(k, k, |i, j| to_similarity(kind, mm[(i, j)]));
                if kind == Proximity::Similarities {
                    // Round-off of the similarities' own size, at any scale.
                    let largest = g.norm_max();
                    for (i, s) in self_sim.iter().enumerate() {
                        if !s.is_nan() && (g[(i, i)] - s).abs() > 1e-10 * largest.max(s.abs()) {
                            return Err(Error::invalid(
                                what,
                                (i, i),
                                g[(i, i)],
                                "diagonal differs from the γ(z, z) given with the rows",
                            ));
                        }
                    }
                }
                g
            }
        };
        Ok(self.core.joint_rows(rows.as_ref(), mutual_sim.as_ref()))
    }

    /// `steps + 1` points on the arc from the projection (λ = 0) to the restricted
    /// reconstruction (λ*) of each new object: `(object, λ, y)`.
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        let (rows, self_sim) = self.similarity_rows(new)?;
        self.core.arc_rows(rows.as_ref(), &self_sim, steps)
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let n = self.core.n_train;
        self.core.is_consistent()
            && self.x.is_consistent()
            && match self.input {
                Proximity::Points => self.x.nrows() == n && self.x_sq.len() == n,
                _ => self.x.nrows() == 0,
            }
    }
}

impl OutOfSample for FittedMds {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.core.embedding()
    }

    /// Projection (use [`FittedMds::extend_with`] for restricted reconstruction).
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_with(new, Strategy::Projection)
    }

    fn input_width(&self) -> usize {
        match self.input {
            Proximity::Points => self.x.ncols(),
            _ => self.core.n_train,
        }
    }
}

impl Method for ClassicalMds {
    type Fitted = FittedMds;
    const INPUT: InputKinds = InputKinds::PointsOrProximity;

    const SPECS: &'static [ParamSpec] = &[N_COMPONENTS, SOLVER, RANK_TOLERANCE];

    crate::params_as_data!(ClassicalMds {
        n_components,
        solver,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        vec![Configuration::exact("points", Values::new()).with_restricted()]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedMds> {
        match input {
            Input::Points(x) => self.fit(x),
            Input::Proximity(m, kind) => self.fit_proximity(m, kind),
            other => Err(other.refused(Self::NAME, "points or a proximity matrix")),
        }
    }
}

impl InnerProduct for FittedMds {
    fn extend_joint(&self, new: MatRef<'_, f64>, mutual: Option<MatRef<'_, f64>>) -> Result<Joint> {
        FittedMds::extend_joint(self, new, mutual)
    }

    fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        FittedMds::arc(self, new, steps)
    }
}

impl Fitted for FittedMds {
    fn training_stored(&self) -> Option<&StoredMat> {
        (self.input == Proximity::Points).then_some(&self.x)
    }

    crate::fitted_basics!();

    crate::cmds_family_extension!(ClassicalMds);

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("input".into(), self.input.name().into()));
        cmds_info(&self.core, v, true);
    }

    fn accepts_width(&self, width: usize) -> bool {
        let want = self.input_width();
        width == want || (self.input == Proximity::Similarities && width == want + 1)
    }

    fn row_description(&self) -> &'static str {
        match self.input {
            Proximity::Points => "the training data's dimension",
            _ => "one proximity per training object (similarities: optionally γ(z, z) last)",
        }
    }
}
