//! The eigensolver behind one function: the `k` algebraically largest eigenpairs of a
//! symmetric matrix, by a dense decomposition or faer's restarted Lanczos, with the sign
//! rule of maths §3 applied to every eigenvector.
//!
//! One file per solver: [`dense`](self) (`dense`), `lanczos` (restarted Lanczos, with
//! the lower-triangle operator of `lower_symmetric`), `low_rank` (pivoted Cholesky),
//! `shift_invert` (sparse kernels). The choice between them, `Auto` included, is made in
//! one place, [`Solver::route`], from the matrix's size, the number of eigenpairs and
//! what the caller knows of the matrix ([`Structure`]); the same function refuses a
//! solver the matrix cannot use.

use crate::error::{Error, Result};
use crate::linalg::cholesky::Cholesky;
use crate::linalg::sparse::{Shifted, SymCsr};
use crate::rng::Rng;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::matrix_free::eigen::{
    partial_self_adjoint_eigen, partial_self_adjoint_eigen_scratch, PartialEigenParams,
};
use faer::matrix_free::LinOp;
use faer::{Col, Mat, MatMut, MatRef, Par, Side};
use serde::{Deserialize, Serialize};

mod dense;
mod lanczos;
mod low_rank;
mod lower_symmetric;
mod shift_invert;

use dense::dense;
use lanczos::{lanczos, lanczos_operator};
pub use low_rank::top_eigen_of_factor;
use lower_symmetric::LowerSymmetric;
pub(crate) use shift_invert::{top_eigen_below_top, Symmetric};
pub use shift_invert::{top_eigen_near_one, top_eigen_sparse, SHIFT_INVERT_MAX_FILL};

/// Which eigensolver to use ([`Solver::route`] turns the request into a route).
///
/// ```
/// use oose::linalg::eigen::Solver;
/// assert_eq!(Solver::from_name("low-rank").unwrap(), Solver::LowRank);
/// assert!(Solver::from_name("arpack").unwrap_err().to_string().contains("solver"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Solver {
    /// The matrix decides (the one policy of [`Solver::route`]): low-rank for a positive
    /// definite kernel, shift-invert for a large sparse diffusion kernel, Lanczos for a
    /// large matrix and few components, the dense solver otherwise.
    #[default]
    Auto,
    /// Full dense self-adjoint eigendecomposition (faer `self_adjoint_eigen`).
    Dense,
    /// Restarted Lanczos (faer's partial self-adjoint eigensolver).
    Lanczos,
    /// For a positive semidefinite kernel matrix: the eigenpairs of G Gᵀ from the small
    /// r×r matrix Gᵀ G, where G is the rank-revealing pivoted Cholesky factor (numerical
    /// rank r, relative tolerance `rank_tolerance`). Exact to that tolerance, and only
    /// N·r kernel values are computed. `Auto` takes it for positive definite kernels
    /// when r ≤ max(N/4, d). Kernel PCA only.
    LowRank,
    /// Shift-invert Lanczos with a sparse Cholesky factor, for the eigenvalues next to 1
    /// of a sparse diffusion kernel (`Auto` takes it above 1000 points). Diffusion
    /// kernels with a kNN or threshold graph only.
    ShiftInvert,
}

crate::model::params::named!(Solver, "solver":
    Auto => "auto",
    Dense => "dense",
    Lanczos => "lanczos",
    LowRank => "low-rank",
    ShiftInvert => "shift-invert",
);

/// Matrices at most this large always use the dense solver under `Auto`.
pub const AUTO_DENSE_MAX: usize = 1000;

/// What the caller knows of the symmetric matrix beyond its size: the input of the one
/// `Auto` policy, [`Solver::route`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structure {
    /// Nothing more: the dense solver or Lanczos.
    Plain,
    /// A kernel matrix whose columns can be computed on demand but whose definiteness is
    /// not known (a precomputed kernel): the low-rank route on request, never under `Auto`.
    Factorable,
    /// A positive semidefinite kernel on points, columns on demand: the low-rank route is
    /// `Auto`'s first choice.
    PsdKernel,
    /// A sparse matrix whose wanted eigenvalues lie next to its top eigenvalue 1 (a
    /// sparse diffusion kernel): shift-invert is `Auto`'s choice above [`AUTO_DENSE_MAX`].
    SparseNearOne,
}

/// How the eigenpairs are computed (the result of [`Solver::route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Full dense decomposition.
    Dense,
    /// Restarted Lanczos.
    Lanczos,
    /// Pivoted Cholesky up to `max_rank` columns; if the numerical rank is higher, the
    /// caller falls back to `Solver::Auto.route(n, k, Structure::Plain)`.
    LowRank {
        /// Largest factor rank before falling back.
        max_rank: usize,
    },
    /// Shift-invert Lanczos; if the factor is too large or fails, the caller falls back
    /// to `Solver::Auto.route(n, k, Structure::Plain)`.
    ShiftInvert,
}

impl Solver {
    /// The one solver policy: how `k` eigenpairs of an n×n symmetric matrix of the given
    /// [`Structure`] are computed, with a note when the route is not the one asked for.
    ///
    /// `Auto`: the low-rank route for a positive semidefinite kernel (giving up above rank
    /// max(N/4, k), where the factor costs more than the N×N route); shift-invert for a
    /// sparse diffusion kernel above [`AUTO_DENSE_MAX`] points; otherwise Lanczos above
    /// [`AUTO_DENSE_MAX`] points when its subspace is at most N/4, else the dense solver.
    /// `Lanczos` and `shift-invert` fall back to the dense solver, with a note, when their
    /// subspace does not fit. `low-rank` and `shift-invert` on a matrix without the
    /// structure they need are a typed error naming `solver`; k outside 1..=n one naming
    /// `n_components`.
    ///
    /// ```
    /// use oose::linalg::eigen::{Route, Solver, Structure};
    /// assert_eq!(Solver::Auto.route(500, 2, Structure::Plain).unwrap().0, Route::Dense);
    /// assert_eq!(Solver::Auto.route(5000, 2, Structure::Plain).unwrap().0, Route::Lanczos);
    /// assert_eq!(
    ///     Solver::Auto.route(5000, 2, Structure::PsdKernel).unwrap().0,
    ///     Route::LowRank { max_rank: 1250 }
    /// );
    /// assert!(Solver::LowRank.route(500, 2, Structure::Plain).is_err());
    /// ```
    pub fn route(
        self,
        n: usize,
        k: usize,
        structure: Structure,
    ) -> Result<(Route, Option<String>)> {
        if k == 0 || k > n {
            return Err(Error::param(
                "n_components",
                format!("must be between 1 and {n} (the matrix size), got {k}"),
            ));
        }
        let (_, max_dim) = lanczos_dims(k);
        let fits = max_dim < n;
        let large = n > AUTO_DENSE_MAX;
        let unfit = |what: &str| {
            Some(format!(
                "{what} needs a subspace of {max_dim} < n = {n}; used the dense solver"
            ))
        };
        let plain = if large && 4 * max_dim <= n {
            Route::Lanczos
        } else {
            Route::Dense
        };
        Ok(match (self, structure) {
            (Solver::Dense, _) => (Route::Dense, None),
            (Solver::Lanczos, _) if fits => (Route::Lanczos, None),
            (Solver::Lanczos, _) => (Route::Dense, unfit("Lanczos")),
            (Solver::LowRank, Structure::PsdKernel | Structure::Factorable) => {
                (Route::LowRank { max_rank: n }, None)
            }
            (Solver::LowRank, _) => {
                return Err(Error::param(
                    "solver",
                    "low-rank needs a positive semidefinite kernel matrix (kernel PCA with a \
                     positive definite kernel, or a precomputed one); use auto, dense or lanczos",
                ))
            }
            (Solver::ShiftInvert, Structure::SparseNearOne) if fits => (Route::ShiftInvert, None),
            (Solver::ShiftInvert, Structure::SparseNearOne) => {
                (Route::Dense, unfit("shift-invert"))
            }
            (Solver::ShiftInvert, _) => {
                return Err(Error::param(
                    "solver",
                    "shift-invert is for sparse diffusion kernels (kNN or threshold); use auto, \
                     dense or lanczos",
                ))
            }
            (Solver::Auto, Structure::PsdKernel) => (
                Route::LowRank {
                    max_rank: (n / 4).max(k),
                },
                None,
            ),
            (Solver::Auto, Structure::SparseNearOne) if large && fits => (Route::ShiftInvert, None),
            (Solver::Auto, _) => (plain, None),
        })
    }
}

impl Route {
    /// The solver this route runs (`Solver::Dense`, `Lanczos`, `LowRank` or `ShiftInvert`).
    pub fn solver(self) -> Solver {
        match self {
            Route::Dense => Solver::Dense,
            Route::Lanczos => Solver::Lanczos,
            Route::LowRank { .. } => Solver::LowRank,
            Route::ShiftInvert => Solver::ShiftInvert,
        }
    }
}

/// `k` eigenpairs, eigenvalues in non-increasing order.
#[derive(Clone, Debug)]
pub struct Eigen {
    /// Eigenvalues, largest first.
    pub values: Vec<f64>,
    /// Eigenvectors as columns (n×k), unit norm, sign rule applied.
    pub vectors: Mat<f64>,
    /// The solver actually used (never `Auto`).
    pub solver: Solver,
    /// Why the solver differs from the one requested, if it does.
    pub note: Option<String>,
}

/// Lanczos subspace sizes for `k` wanted eigenpairs.
/// The relative residual a product's round-off allows at size n: where every Lanczos
/// here stops when asked for no more than round-off.
fn roundoff(n: usize) -> f64 {
    (8.0 * (n as f64).sqrt() * f64::EPSILON).max(1e-13)
}

fn lanczos_dims(k: usize) -> (usize, usize) {
    let min_dim = k.max(16) + 8;
    (min_dim, (2 * min_dim).max(k + 32))
}

/// The `k` algebraically largest eigenpairs of the symmetric matrix `a` (both solvers
/// read only its lower triangle).
///
/// Lanczos finds the eigenvalues of largest magnitude; when one of those is negative
/// (an indefinite matrix) they need not be the largest algebraically, so the dense
/// solver is used instead and [`Eigen::note`] says so.
///
/// ```
/// use faer::Mat;
/// let a = Mat::from_fn(3, 3, |i, j| if i == j { [1.0, 3.0, 2.0][i] } else { 0.0 });
/// let e = oose::linalg::eigen::top_eigen(a.as_ref(), 2, oose::linalg::eigen::Solver::Auto).unwrap();
/// assert_eq!(e.values, vec![3.0, 2.0]);
/// assert_eq!(e.vectors[(1, 0)], 1.0);
/// ```
pub fn top_eigen(a: MatRef<'_, f64>, k: usize, solver: Solver) -> Result<Eigen> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(Error::Shape {
            what: "eigensolver input",
            expected: "a square matrix".into(),
            got: format!("{}×{}", n, a.ncols()),
        });
    }
    let (route, mut note) = solver.route(n, k, Structure::Plain)?;
    let use_lanczos = route == Route::Lanczos;
    let mut out = if use_lanczos {
        match lanczos(a, k)? {
            Ok(e) => e,
            Err(why) => {
                note = Some(format!("{why}; used the dense solver"));
                dense(a, k)?
            }
        }
    } else {
        dense(a, k)?
    };
    apply_sign_rule(out.vectors.as_mut());
    out.note = note;
    Ok(out)
}

/// Checks that the `d`-th of the eigenvalues `values` (largest first) is positive and
/// above `tolerance` × the largest, else names how many are.
pub(crate) fn require_positive(values: &[f64], d: usize, tolerance: f64) -> Result<()> {
    let floor = tolerance * values[0].max(0.0);
    if values[d - 1] <= floor || values[d - 1] <= 0.0 {
        return Err(Error::NotEnoughPositiveEigenvalues {
            requested: d,
            available: values.iter().filter(|&&v| v > floor && v > 0.0).count(),
            value: values[d - 1],
            tolerance: floor,
        });
    }
    Ok(())
}

/// Flips each column so that its entry of largest absolute value is positive (maths §3).
/// Ties in magnitude go to the first such entry.
pub fn apply_sign_rule(mut v: faer::MatMut<'_, f64>) -> Vec<bool> {
    let mut flipped = Vec::with_capacity(v.ncols());
    for j in 0..v.ncols() {
        let mut best = 0.0f64;
        let mut sign = 1.0;
        for i in 0..v.nrows() {
            let x = v[(i, j)];
            if x.abs() > best {
                best = x.abs();
                sign = x.signum();
            }
        }
        let flip = sign < 0.0;
        if flip {
            for i in 0..v.nrows() {
                v[(i, j)] = -v[(i, j)];
            }
        }
        flipped.push(flip);
    }
    flipped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_psd(n: usize, rank: usize, seed: u64) -> Mat<f64> {
        let mut r = Rng::new(seed);
        let g = Mat::from_fn(n, rank, |_, j| r.normal() / (1.0 + j as f64));
        &g * g.transpose()
    }

    #[test]
    fn dense_matches_definition() {
        let a = random_psd(40, 40, 1);
        let e = top_eigen(a.as_ref(), 5, Solver::Dense).unwrap();
        for j in 0..5 {
            let v = e.vectors.col(j);
            let av = &a * v;
            let res = (&av - v * faer::Scale(e.values[j])).norm_l2();
            assert!(res < 1e-10 * e.values[0], "{res}");
            if j > 0 {
                assert!(e.values[j] <= e.values[j - 1]);
            }
        }
    }

    #[test]
    fn sign_rule_makes_largest_entry_positive() {
        let a = random_psd(30, 30, 2);
        let e = top_eigen(a.as_ref(), 4, Solver::Dense).unwrap();
        for j in 0..4 {
            let (mut best, mut val) = (0.0f64, 0.0);
            for i in 0..30 {
                if e.vectors[(i, j)].abs() > best {
                    best = e.vectors[(i, j)].abs();
                    val = e.vectors[(i, j)];
                }
            }
            assert!(val > 0.0);
        }
    }

    #[test]
    fn lanczos_agrees_with_dense() {
        let a = random_psd(400, 60, 3);
        let d = top_eigen(a.as_ref(), 6, Solver::Dense).unwrap();
        let l = top_eigen(a.as_ref(), 6, Solver::Lanczos).unwrap();
        assert_eq!(l.solver, Solver::Lanczos, "{:?}", l.note);
        for j in 0..6 {
            assert!((d.values[j] - l.values[j]).abs() <= 1e-10 * d.values[j]);
            let dot: f64 = (0..400)
                .map(|i| d.vectors[(i, j)] * l.vectors[(i, j)])
                .sum();
            assert!((dot - 1.0).abs() < 1e-8, "column {j}: {dot}");
        }
    }

    #[test]
    fn lower_triangle_product_equals_the_full_product() {
        // Sizes below, at and above the block count, and not multiples of the 8 lanes.
        for n in [1, 2, 7, 16, 17, 101] {
            let a = random_psd(n, n.min(9), 10 + n as u64);
            let mut r = Rng::new(n as u64);
            let x = Mat::from_fn(n, 2, |_, _| r.normal());
            let op = LowerSymmetric::new(a.as_ref()).unwrap();
            let mut y = Mat::<f64>::zeros(n, 2);
            op.product(y.as_mut(), x.as_ref());
            let full = &a * &x;
            let err = (&y - &full).norm_max();
            assert!(err <= 1e-12 * full.norm_max().max(1.0), "n = {n}: {err}");
            // The upper triangle is never read.
            let mut lower = a.clone();
            for j in 0..n {
                for i in 0..j {
                    lower[(i, j)] = f64::NAN;
                }
            }
            let mut z = Mat::<f64>::zeros(n, 2);
            LowerSymmetric::new(lower.as_ref())
                .unwrap()
                .product(z.as_mut(), x.as_ref());
            assert_eq!(z, y, "n = {n}");
        }
        // A block of a larger matrix has contiguous columns; a transposed view does not,
        // and is refused (Lanczos then uses faer's product).
        let a = random_psd(12, 12, 2);
        assert!(LowerSymmetric::new(a.as_ref().submatrix(1, 1, 6, 6)).is_some());
        assert!(LowerSymmetric::new(a.as_ref().submatrix(1, 1, 6, 6).transpose()).is_none());
    }

    #[test]
    fn indefinite_matrix_falls_back_to_dense() {
        let n = 300;
        let a = Mat::from_fn(n, n, |i, j| {
            if i == j {
                if i == 0 {
                    -100.0
                } else {
                    1.0 + i as f64 / n as f64
                }
            } else {
                0.0
            }
        });
        let e = top_eigen(a.as_ref(), 2, Solver::Lanczos).unwrap();
        assert_eq!(e.solver, Solver::Dense);
        assert!(e.note.is_some());
        assert!((e.values[0] - (1.0 + 299.0 / 300.0)).abs() < 1e-12);
    }

    #[test]
    fn one_policy_routes_every_request() {
        use Structure::*;
        use {Route as R, Solver as S};
        // (request, n, k, structure) → (route, with a note). Auto: the size and what is
        // known of the matrix decide; Lanczos under Auto only while its subspace
        // (2·(k + 8) or k + 32) is ≤ N/4. Requests: honoured where the matrix allows,
        // with a note where they do not fit.
        let cases = [
            (S::Auto, 1000, 2, Plain, R::Dense, false),
            (S::Auto, 1001, 2, Plain, R::Lanczos, false),
            (S::Auto, 2000, 300, Plain, R::Dense, false),
            (S::Auto, 1001, 2, SparseNearOne, R::ShiftInvert, false),
            (S::Auto, 1000, 2, SparseNearOne, R::Dense, false),
            (
                S::Auto,
                200,
                3,
                PsdKernel,
                R::LowRank { max_rank: 50 },
                false,
            ),
            (S::Auto, 200, 3, Factorable, R::Dense, false),
            (S::Lanczos, 100, 2, Plain, R::Lanczos, false),
            (S::Lanczos, 40, 2, Plain, R::Dense, true),
            (S::ShiftInvert, 40, 2, SparseNearOne, R::Dense, true),
            (
                S::LowRank,
                200,
                3,
                Factorable,
                R::LowRank { max_rank: 200 },
                false,
            ),
        ];
        for (solver, n, k, structure, route, noted) in cases {
            let (got, note) = solver.route(n, k, structure).unwrap();
            assert_eq!(
                (got, note.is_some()),
                (route, noted),
                "{solver:?} n={n} k={k} {structure:?}"
            );
        }
        // Refused, by name, on a matrix without the structure they need.
        for (s, st) in [
            (Solver::LowRank, Plain),
            (Solver::LowRank, SparseNearOne),
            (Solver::ShiftInvert, Plain),
            (Solver::ShiftInvert, PsdKernel),
        ] {
            let e = s.route(500, 2, st).unwrap_err();
            assert!(
                matches!(e, Error::InvalidParameter { name: "solver", .. }),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_k_is_an_error() {
        let a = random_psd(5, 5, 4);
        assert!(top_eigen(a.as_ref(), 0, Solver::Dense).is_err());
        assert!(top_eigen(a.as_ref(), 6, Solver::Dense).is_err());
    }
}
