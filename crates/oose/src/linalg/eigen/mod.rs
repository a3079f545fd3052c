//! The eigensolver behind one function: the `k` algebraically largest eigenpairs of a
//! symmetric matrix, by a dense decomposition or faer's restarted Lanczos, with the sign
//! rule of maths §3 applied to every eigenvector.
//!
//! One file per solver: [`dense`](self) (`dense`), `lanczos` (restarted Lanczos, with
//! the lower-triangle operator of `lower_symmetric`), `low_rank` (pivoted Cholesky),
//! `shift_invert` (sparse kernels). The `Auto` choice between them is made here
//! ([`top_eigen`], [`top_eigen_sparse`]) and, for the kernel-specific low-rank and
//! shift-invert solvers, by the methods that know the kernel.

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
pub use shift_invert::{top_eigen_near_one, top_eigen_sparse, SHIFT_INVERT_MAX_FILL};

/// Which eigensolver to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Solver {
    /// Dense for small matrices or many components, Lanczos otherwise.
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
    /// when r ≤ N/4.
    LowRank,
    /// Shift-invert Lanczos with a sparse Cholesky factor (sparse diffusion kernels,
    /// chosen by `Auto` or `Lanczos` above 1000 points; never requested directly).
    ShiftInvert,
}

impl Solver {
    /// The solver's name as used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Solver::Auto => "auto",
            Solver::Dense => "dense",
            Solver::Lanczos => "lanczos",
            Solver::LowRank => "low-rank",
            Solver::ShiftInvert => "shift-invert",
        }
    }

    /// Parses a solver name (`auto`, `dense`, `lanczos`, `low-rank`, `shift-invert`).
    ///
    /// ```
    /// use oose::linalg::eigen::Solver;
    /// assert_eq!(Solver::from_name("low-rank").unwrap(), Solver::LowRank);
    /// assert!(Solver::from_name("arpack").unwrap_err().to_string().contains("solver"));
    /// ```
    pub fn from_name(name: &str) -> crate::error::Result<Solver> {
        crate::validate::named(
            "solver",
            name,
            &[
                ("auto", Solver::Auto),
                ("dense", Solver::Dense),
                ("lanczos", Solver::Lanczos),
                ("low-rank", Solver::LowRank),
                ("shift-invert", Solver::ShiftInvert),
            ],
        )
    }
}

/// Matrices at most this large always use the dense solver under `Auto`.
pub const AUTO_DENSE_MAX: usize = 1000;

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

/// Whether Lanczos for `k` eigenpairs fits in dimension `n` (its subspace is smaller).
pub fn lanczos_fits(k: usize, n: usize) -> bool {
    lanczos_dims(k).1 < n
}

/// Lanczos subspace sizes for `k` wanted eigenpairs.
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
    if k == 0 || k > n {
        return Err(Error::param(
            "n_components",
            format!("must be between 1 and {n} (the matrix size), got {k}"),
        ));
    }
    let (_, max_dim) = lanczos_dims(k);
    let lanczos_possible = max_dim < n;
    let mut note = None;
    let use_lanczos = match solver {
        Solver::Dense | Solver::LowRank => false,
        Solver::Auto | Solver::ShiftInvert => {
            lanczos_possible && n > AUTO_DENSE_MAX && 4 * max_dim <= n
        }
        Solver::Lanczos => {
            if !lanczos_possible {
                note = Some(format!(
                    "Lanczos needs a subspace of {max_dim} < n = {n}; used the dense solver"
                ));
            }
            lanczos_possible
        }
    };
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

impl crate::model::params::Named for Solver {
    fn name(&self) -> &'static str {
        Solver::name(self)
    }
    fn from_name(s: &str) -> Result<Self> {
        Solver::from_name(s)
    }
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
    fn bad_k_is_an_error() {
        let a = random_psd(5, 5, 4);
        assert!(top_eigen(a.as_ref(), 0, Solver::Dense).is_err());
        assert!(top_eigen(a.as_ref(), 6, Solver::Dense).is_err());
    }
}
