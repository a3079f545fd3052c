//! The eigensolver behind one function: the `k` algebraically largest eigenpairs of a
//! symmetric matrix, by a dense decomposition or faer's restarted Lanczos, with the sign
//! rule of SPEC §3 applied to every eigenvector.

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

/// The `k` largest eigenpairs of G Gᵀ (G: N×r, any r) through the r×r matrix Gᵀ G:
/// Gᵀ G = V Σ Vᵀ ⇒ G Gᵀ (G V Σ^{−1/2}) = (G V Σ^{−1/2}) Σ. Eigenvalues at most
/// `tol · σ₁` are returned as they are; their vectors are left at zero (the caller
/// rejects them). Sign rule applied.
pub fn top_eigen_of_factor(g: MatRef<'_, f64>, k: usize, tol: f64) -> Result<Eigen> {
    let (n, r) = (g.nrows(), g.ncols());
    let mut gtg = Mat::<f64>::zeros(r, r);
    faer::linalg::matmul::matmul(
        gtg.as_mut(),
        faer::Accum::Replace,
        g.transpose(),
        g,
        1.0,
        Par::rayon(0),
    );
    let kk = k.min(r);
    let small = if kk > 0 {
        dense(gtg.as_ref(), kk)?
    } else {
        Eigen {
            values: Vec::new(),
            vectors: Mat::zeros(r, 0),
            solver: Solver::Dense,
            note: None,
        }
    };
    let mut values = small.values;
    values.resize(k, 0.0);
    let floor = tol * values.first().copied().unwrap_or(0.0).max(0.0);
    let mut vectors = Mat::<f64>::zeros(n, k);
    faer::linalg::matmul::matmul(
        vectors.as_mut().subcols_mut(0, kk),
        faer::Accum::Replace,
        g,
        small.vectors.as_ref(),
        1.0,
        Par::rayon(0),
    );
    for (j, &v) in values.iter().enumerate() {
        let scale = if v > floor && v > 0.0 {
            1.0 / v.sqrt()
        } else {
            0.0
        };
        vectors
            .col_as_slice_mut(j)
            .iter_mut()
            .for_each(|x| *x *= scale);
    }
    apply_sign_rule(vectors.as_mut());
    Ok(Eigen {
        values,
        vectors,
        solver: Solver::LowRank,
        note: None,
    })
}

fn dense(a: MatRef<'_, f64>, k: usize) -> Result<Eigen> {
    let n = a.nrows();
    let evd = a
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Eigensolver(format!("dense eigendecomposition failed: {e:?}")))?;
    let s = evd.S().column_vector();
    let u = evd.U();
    let values: Vec<f64> = (0..k).map(|j| s[n - 1 - j]).collect();
    let vectors = Mat::from_fn(n, k, |i, j| u[(i, n - 1 - j)]);
    Ok(Eigen {
        values,
        vectors,
        solver: Solver::Dense,
        note: None,
    })
}

/// Returns `Ok(Err(reason))` when Lanczos cannot be trusted for this matrix.
fn lanczos(a: MatRef<'_, f64>, k: usize) -> Result<std::result::Result<Eigen, String>> {
    // faer's tolerance is absolute on the Ritz residual ||A v − θ v||; ||A||_F bounds
    // every eigenvalue.
    let norm = a.norm_l2();
    match LowerSymmetric::new(a) {
        Some(op) => lanczos_operator(&op, k, norm, 0.0, lanczos_dims(k)),
        None => lanczos_operator(&a, k, norm, 0.0, lanczos_dims(k)),
    }
}

/// A symmetric matrix stored whole (column-major) as an operator that reads only its
/// lower triangle: each column j gives y_j += A[j.., j]ᵀ x[j..] and
/// y[j+1..] += A[j+1.., j] x_j in one sweep, so a product streams half the memory of
/// a full one. Lanczos is memory-bound (faer takes at least 64 products), so this
/// halves its cost, and it reads the same triangle as the dense solver.
///
/// The columns are cut into a fixed number of blocks of equal triangle area whatever
/// the number of threads, and the blocks' partial sums are added in block order: the
/// product is bitwise the same on every machine.
#[derive(Debug)]
struct LowerSymmetric<'a> {
    a: MatRef<'a, f64>,
    /// Column block boundaries (first column of each block, then n).
    bounds: Vec<usize>,
}

impl<'a> LowerSymmetric<'a> {
    const BLOCKS: usize = 16;

    /// `None` when the columns of `a` are not contiguous.
    fn new(a: MatRef<'a, f64>) -> Option<Self> {
        let n = a.nrows();
        if (0..n).any(|j| a.col(j).try_as_col_major().is_none()) {
            return None;
        }
        // Column j holds n − j entries of the triangle; cut where the running count
        // passes b/BLOCKS of the total.
        let total = (n * (n + 1) / 2) as f64;
        let mut bounds = vec![0];
        let mut seen = 0usize;
        for j in 0..n {
            seen += n - j;
            let next = bounds.len() as f64 * total / Self::BLOCKS as f64;
            if seen as f64 >= next && j + 1 < n {
                bounds.push(j + 1);
            }
        }
        bounds.push(n);
        Some(LowerSymmetric { a, bounds })
    }

    /// y += the part of A x that the columns j in `cols` of the lower triangle give.
    fn block(&self, cols: std::ops::Range<usize>, x: &[f64], y: &mut [f64]) {
        crate::linalg::simd::vectorized(
            #[inline(always)]
            || lower_columns(self, cols, x, y),
        );
    }

    fn column(&self, j: usize) -> &'a [f64] {
        self.a
            .col(j)
            .try_as_col_major()
            .expect("contiguous columns (checked in new)")
            .as_slice()
    }

    fn product(&self, mut out: MatMut<'_, f64>, rhs: MatRef<'_, f64>) {
        use rayon::prelude::*;
        let n = self.a.nrows();
        for c in 0..rhs.ncols() {
            let x: Vec<f64> = rhs.col(c).iter().copied().collect();
            let parts: Vec<Vec<f64>> = self
                .bounds
                .par_windows(2)
                .map(|w| {
                    let mut y = vec![0.0; n];
                    self.block(w[0]..w[1], &x, &mut y);
                    y
                })
                .collect();
            let mut col = out.as_mut().col_mut(c);
            for i in 0..n {
                col[i] = parts.iter().fold(0.0, |s, p| s + p[i]);
            }
        }
    }
}

/// For each column j: y_j += A[j.., j]ᵀ x[j..] and y[j+1..] += A[j+1.., j] x_j, in one
/// sweep over the column, with 8 interleaved partial sums for the dot product.
#[inline(always)]
fn lower_columns(op: &LowerSymmetric<'_>, cols: std::ops::Range<usize>, x: &[f64], y: &mut [f64]) {
    const L: usize = 8;
    for j in cols {
        let col = &op.column(j)[j..];
        let xj = x[j];
        let rest = &col[1..];
        let (xs, ys) = (&x[j + 1..], &mut y[j + 1..]);
        let whole = rest.len() / L * L;
        let mut acc = [0.0f64; L];
        for ((c, xv), yv) in rest[..whole]
            .chunks_exact(L)
            .zip(xs[..whole].chunks_exact(L))
            .zip(ys[..whole].chunks_exact_mut(L))
        {
            for l in 0..L {
                acc[l] += c[l] * xv[l];
                yv[l] += c[l] * xj;
            }
        }
        let mut dot =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for i in whole..rest.len() {
            dot += rest[i] * xs[i];
            ys[i] += rest[i] * xj;
        }
        y[j] += col[0] * xj + dot;
    }
}

symmetric_lin_op!(LowerSymmetric<'_>,
    n: |op| op.a.nrows(),
    product: |op, out, rhs| op.product(out, rhs));

/// The `k` largest eigenpairs of the operator `op` − `shift`·I by restarted Lanczos,
/// where `op` is positive semidefinite (or its eigenvalues of largest magnitude are the
/// wanted ones) and `norm` bounds its spectral norm.
fn lanczos_operator(
    op: &dyn LinOp<f64>,
    k: usize,
    norm: f64,
    shift: f64,
    (min_dim, max_dim): (usize, usize),
) -> Result<std::result::Result<Eigen, String>> {
    let n = op.nrows();
    let params = PartialEigenParams {
        min_dim,
        max_dim,
        max_restarts: 300,
        ..Default::default()
    };
    let par = Par::rayon(0);
    let mut rng = Rng::new(0x1A2C_205E);
    let v0 = Col::<f64>::from_fn(n, |_| rng.normal());
    // Scale the absolute Ritz-residual tolerance by the norm bound, with the round-off
    // floor of a matvec.
    let tol = norm * (8.0 * (n as f64).sqrt() * f64::EPSILON).max(1e-13);
    let mut vecs = Mat::<f64>::zeros(n, k);
    let mut vals = vec![0.0; k];
    let mut mem = MemBuffer::new(partial_self_adjoint_eigen_scratch::<f64>(
        op, k, par, params,
    ));
    let info = partial_self_adjoint_eigen(
        vecs.as_mut(),
        &mut vals,
        op,
        v0.as_ref(),
        tol,
        par,
        MemStack::new(&mut mem),
        params,
    );
    if info.n_converged_eigen < k {
        return Ok(Err(format!(
            "Lanczos converged for {} of {k} eigenpairs",
            info.n_converged_eigen
        )));
    }
    // The k of largest magnitude; if all are positive they are the k largest.
    if vals[..k].iter().any(|&v| v < 0.0) {
        return Ok(Err(
            "the matrix has negative eigenvalues among those of largest magnitude".into(),
        ));
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&i, &j| vals[j].total_cmp(&vals[i]));
    let values = order.iter().map(|&i| vals[i] - shift).collect();
    let vectors = Mat::from_fn(n, k, |i, j| vecs[(i, order[j])]);
    Ok(Ok(Eigen {
        values,
        vectors,
        solver: Solver::Lanczos,
        note: None,
    }))
}

/// The `k` algebraically largest eigenpairs of a sparse symmetric matrix A, or of
/// A − v vᵀ when `deflate` = Some(v) (v a unit eigenvector of A whose eigenvalue is to
/// be removed from the search).
///
/// Lanczos runs on A + ρI with ρ = max_i Σ_j |a_ij| (Gershgorin: A + ρI is positive
/// semidefinite, so its largest-magnitude eigenvalues are the largest; the shift does
/// not change the Krylov spaces). `Dense`, or `Auto` for n ≤ [`AUTO_DENSE_MAX`], and a
/// Lanczos failure, use the dense solver on the densified matrix (with a note).
pub fn top_eigen_sparse(
    a: &SymCsr,
    k: usize,
    solver: Solver,
    deflate: Option<&[f64]>,
) -> Result<Eigen> {
    let n = a.n();
    if k == 0 || k > n {
        return Err(Error::param(
            "n_components",
            format!("must be between 1 and {n} (the matrix size), got {k}"),
        ));
    }
    let (_, max_dim) = lanczos_dims(k);
    let use_lanczos = match solver {
        Solver::Dense | Solver::LowRank => false,
        Solver::Auto | Solver::ShiftInvert => max_dim < n && n > AUTO_DENSE_MAX,
        Solver::Lanczos => max_dim < n,
    };
    let mut note = None;
    let mut out = if use_lanczos {
        // Gershgorin bound on ||A||, plus 1 for the deflated rank-one term.
        let rho = (0..n)
            .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0f64, f64::max)
            + if deflate.is_some() { 1.0 } else { 0.0 };
        let op = Shifted {
            matrix: a,
            shift: rho,
            deflate,
        };
        match lanczos_operator(&op, k, 2.0 * rho, rho, lanczos_dims(k))? {
            Ok(e) => e,
            Err(why) => {
                note = Some(format!("{why}; used the dense solver"));
                dense(densify(a, deflate).as_ref(), k)?
            }
        }
    } else {
        if solver == Solver::Lanczos {
            note = Some(format!(
                "Lanczos needs a subspace of {max_dim} < n = {n}; used the dense solver"
            ));
        }
        dense(densify(a, deflate).as_ref(), k)?
    };
    apply_sign_rule(out.vectors.as_mut());
    out.note = note;
    Ok(out)
}

/// Largest factor fill (stored values of L over stored entries of A) accepted by
/// [`top_eigen_near_one`] before it returns `None` (the caller then runs plain Lanczos).
pub const SHIFT_INVERT_MAX_FILL: usize = 60;

/// The `k` largest eigenpairs of a sparse symmetric `a` whose spectrum lies in
/// [−1, 1] with its top eigenvalue 1 attained by the unit vector `top` (a diffusion
/// kernel and its ψ₀), `top` excluded, by shift-invert Lanczos:
/// Lanczos on P ((1 + σ)I − A)⁻¹ P (P = I − top topᵀ, sparse Cholesky of the shifted
/// matrix), whose eigenvalues 1/(1 + σ − λ) separate the eigenvalues next to 1 from the
/// bulk, where plain Lanczos on A converges slowly. The Ritz vectors are then refined by
/// Rayleigh–Ritz with A itself, so the returned pairs satisfy A v ≈ λ v to working
/// precision. `None` when the factor would fill more than [`SHIFT_INVERT_MAX_FILL`]
/// times nnz(A), or the factorisation or Lanczos fail: the caller falls back.
pub fn top_eigen_near_one(a: &SymCsr, k: usize, top: &[f64], sigma: f64) -> Option<Eigen> {
    let n = a.n();
    // (1 + σ)I − A, upper triangle in CSC: column i holds row i's entries j < i of the
    // symmetric A (sorted) and then the diagonal, so no sort or triplet pass is needed.
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::with_capacity(a.nnz() / 2 + n);
    let mut values = Vec::with_capacity(a.nnz() / 2 + n);
    col_ptr.push(0usize);
    for i in 0..n {
        let (cols, vals) = a.row(i);
        let mut diag = 1.0 + sigma;
        for (&j, &v) in cols.iter().zip(vals) {
            let j = j as usize;
            if j == i {
                diag -= v;
            } else if j < i {
                row_idx.push(j);
                values.push(-v);
            }
        }
        row_idx.push(i);
        values.push(diag);
        col_ptr.push(row_idx.len());
    }
    // One symbolic analysis (AMD ordering), used both to bound the fill and to factor.
    let chol = Cholesky::factor_upper(
        n,
        &col_ptr,
        &row_idx,
        &values,
        SHIFT_INVERT_MAX_FILL * a.nnz().max(n),
    )?;
    drop((col_ptr, row_idx, values));
    let mut work = [Vec::new(), Vec::new()];
    // x ↦ x − (topᵀx) top, before and after each solve.
    let deflate = |x: &mut [f64]| {
        let dot: f64 = x.iter().zip(top).map(|(a, b)| a * b).sum();
        x.iter_mut().zip(top).for_each(|(xi, ti)| *xi -= dot * ti);
    };
    let solve = |x: &mut [f64]| {
        deflate(x);
        chol.solve_in_place(x, &mut work);
        deflate(x);
    };
    let ritz = lanczos_full(solve, n, k, 1e-14, 120.min(n - 1))?;
    drop(chol);
    // Rayleigh–Ritz with A on the span of the Ritz vectors.
    let v = ritz;
    let mut av = Mat::<f64>::zeros(n, k);
    a.apply_shifted(av.as_mut(), v.as_ref(), 0.0, None);
    let h = v.transpose() * &av;
    let hs = Mat::from_fn(k, k, |i, j| 0.5 * (h[(i, j)] + h[(j, i)]));
    let small = dense(hs.as_ref(), k).ok()?;
    let mut vectors = &v * &small.vectors;
    apply_sign_rule(vectors.as_mut());
    Some(Eigen {
        values: small.values,
        vectors,
        solver: Solver::ShiftInvert,
        note: None,
    })
}

/// Lanczos with full reorthogonalisation and no restart for the `k` largest
/// eigenvalues of a symmetric positive semidefinite operator (`apply(x)` overwrites x
/// with A x) whose wanted eigenvalues stand well apart from the rest, as after a
/// shift-invert: stops when the top `k` Ritz pairs have residual estimates
/// |β_j s_{j,i}| ≤ `tol` · θ₁, or after `max_steps` steps (then `None`). Returns the
/// orthonormal Ritz vectors (n×k), largest first.
fn lanczos_full(
    mut apply: impl FnMut(&mut [f64]),
    n: usize,
    k: usize,
    tol: f64,
    max_steps: usize,
) -> Option<Mat<f64>> {
    let mut rng = Rng::new(0x51F7_1A7E);
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let norm = |x: &[f64]| x.iter().map(|a| a * a).sum::<f64>().sqrt();
    let nv = norm(&v);
    v.iter_mut().for_each(|x| *x /= nv);
    let (mut alpha, mut beta): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for j in 0..max_steps {
        let mut w = v.clone();
        apply(&mut w);
        basis.push(v);
        let a: f64 = w.iter().zip(&basis[j]).map(|(x, y)| x * y).sum();
        alpha.push(a);
        // Full reorthogonalisation (twice is enough).
        for _ in 0..2 {
            for b in &basis {
                let d: f64 = w.iter().zip(b).map(|(x, y)| x * y).sum();
                w.iter_mut().zip(b).for_each(|(x, y)| *x -= d * y);
            }
        }
        let bj = norm(&w);
        let m = j + 1;
        if m >= k {
            let t = Mat::from_fn(m, m, |r, c| {
                if r == c {
                    alpha[r]
                } else if r == c + 1 {
                    beta[c]
                } else if c == r + 1 {
                    beta[r]
                } else {
                    0.0
                }
            });
            let e = dense(t.as_ref(), k).ok()?;
            let theta1 = e.values[0].abs();
            let converged = (0..k).all(|i| (bj * e.vectors[(m - 1, i)]).abs() <= tol * theta1);
            if converged || bj == 0.0 {
                let basis_mat = Mat::from_fn(n, m, |r, c| basis[c][r]);
                return Some(&basis_mat * &e.vectors);
            }
        }
        if bj == 0.0 {
            return None;
        }
        beta.push(bj);
        v = w.into_iter().map(|x| x / bj).collect();
    }
    None
}

/// A − v vᵀ as a dense matrix.
fn densify(a: &SymCsr, deflate: Option<&[f64]>) -> Mat<f64> {
    let mut m = a.to_dense();
    if let Some(v) = deflate {
        let n = m.nrows();
        for j in 0..n {
            for i in 0..n {
                m[(i, j)] -= v[i] * v[j];
            }
        }
    }
    m
}

/// Flips each column so that its entry of largest absolute value is positive (SPEC §3).
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
