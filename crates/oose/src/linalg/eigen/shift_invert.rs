//! Eigenpairs of sparse symmetric kernels: Lanczos on the shifted sparse matrix, or shift-invert Lanczos with a sparse Cholesky factor for the eigenvalues nearest one (diffusion kernels).

#[allow(unused_imports)]
use super::*;

/// The `k` algebraically largest eigenpairs of a sparse symmetric matrix A, or of
/// A − Σ v vᵀ over the vectors of `deflate` (orthonormal eigenvectors of A whose
/// eigenvalues are to be removed from the search; empty: A itself).
///
/// Lanczos runs on A + ρI with ρ = max_i Σ_j |a_ij| (Gershgorin: A + ρI is positive
/// semidefinite, so its largest-magnitude eigenvalues are the largest; the shift does
/// not change the Krylov spaces). The solver is chosen by [`Solver::route`] for a plain
/// matrix; the dense route, and a Lanczos failure, use the dense solver on the densified
/// matrix (the failure with a note).
pub fn top_eigen_sparse(a: &SymCsr, k: usize, solver: Solver, deflate: &[&[f64]]) -> Result<Eigen> {
    sparse_to(a, k, solver, deflate, 0.0)
}

/// [`top_eigen_sparse`] with Lanczos' Ritz residuals below `residual` relative to the
/// norm bound (0: to round-off).
fn sparse_to(
    a: &SymCsr,
    k: usize,
    solver: Solver,
    deflate: &[&[f64]],
    residual: f64,
) -> Result<Eigen> {
    let n = a.n();
    let (route, mut note) = solver.route(n, k, Structure::Plain)?;
    let use_lanczos = route == Route::Lanczos;
    let mut out = if use_lanczos {
        // Gershgorin bound on ||A||, plus 1 for the deflated projector.
        let rho = (0..n)
            .map(|i| a.row(i).1.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0f64, f64::max)
            + if deflate.is_empty() { 0.0 } else { 1.0 };
        let op = Shifted {
            matrix: a,
            shift: rho,
            deflate,
        };
        match lanczos_operator(&op, k, 2.0 * rho, rho, lanczos_dims(k), residual)? {
            Ok(e) => e,
            Err(why) => {
                note = Some(format!("{why}; used the dense solver"));
                dense(densify(a, deflate).as_ref(), k)?
            }
        }
    } else {
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
/// [−1, 1] with its top eigenvalue 1 attained by the orthonormal vectors `top` (a
/// diffusion kernel and its ψ₀, one per connected component), `top` excluded, by
/// shift-invert Lanczos:
/// Lanczos on P ((1 + σ)I − A)⁻¹ P (P = I − Σ t tᵀ, sparse Cholesky of the shifted
/// matrix), whose eigenvalues 1/(1 + σ − λ) separate the eigenvalues next to 1 from the
/// bulk, where plain Lanczos on A converges slowly. The Ritz vectors are then refined by
/// Rayleigh–Ritz with A itself, so the returned pairs satisfy A v ≈ λ v to working
/// precision. `None` when the factor would fill more than [`SHIFT_INVERT_MAX_FILL`]
/// times nnz(A), or the factorisation or Lanczos fail: the caller falls back.
pub fn top_eigen_near_one(a: &SymCsr, k: usize, top: &[&[f64]], sigma: f64) -> Option<Eigen> {
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
    // x ↦ x − Σ (tᵀx) t, before and after each solve.
    let deflate = |x: &mut [f64]| {
        for t in top {
            let dot: f64 = x.iter().zip(*t).map(|(a, b)| a * b).sum();
            x.iter_mut().zip(*t).for_each(|(xi, ti)| *xi -= dot * ti);
        }
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
    a.apply_shifted(av.as_mut(), v.as_ref(), 0.0, &[]);
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
pub(super) fn lanczos_full(
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

/// A − Σ v vᵀ as a dense matrix.
pub(super) fn densify(a: &SymCsr, deflate: &[&[f64]]) -> Mat<f64> {
    let mut m = a.to_dense();
    rank_updates(&mut m, deflate, -1.0);
    m
}

/// m += sign · Σ v vᵀ over `vectors`.
fn rank_updates(m: &mut Mat<f64>, vectors: &[&[f64]], sign: f64) {
    let n = m.nrows();
    for v in vectors {
        for j in 0..n {
            let s = sign * v[j];
            for i in 0..n {
                m[(i, j)] += s * v[i];
            }
        }
    }
}

/// A symmetric matrix, dense (modified in place and restored) or sparse.
pub(crate) enum Symmetric<'a> {
    /// N×N, both triangles.
    Dense(&'a mut Mat<f64>),
    /// Sparse symmetric.
    Sparse(&'a SymCsr),
}

/// The `k` largest eigenpairs of a symmetric `a` whose spectrum lies in [−1, 1] with its
/// top eigenvalue 1 attained by the orthonormal vectors `top` (one, or one per connected
/// component of a graph), `top` excluded: the eigenpairs of A − Σ t tᵀ, by the route [`Solver::route`] gives a matrix next to one (dense: the
/// deflated matrix in place, restored after; sparse: shift-invert, falling back to
/// Lanczos on the deflated operator). Diffusion kernels (ψ₀) and the LLE family
/// (I − M/ρ and the constant vector) share it. `sigma`: the shift-invert route runs
/// Lanczos on ((1 + σ)I − A)⁻¹, which separates the eigenvalues within about σ of 1
/// from the rest; σ should be at most the distance from 1 of the wanted eigenvalues.
/// `residual`: plain Lanczos (the fallback) stops at Ritz residuals below it relative to
/// ‖A‖'s bound (0: to round-off; the dense and shift-invert routes are exact anyway).
pub(crate) fn top_eigen_below_top(
    a: Symmetric<'_>,
    k: usize,
    top: &[&[f64]],
    solver: Solver,
    sigma: f64,
    residual: f64,
) -> Result<Eigen> {
    match a {
        Symmetric::Dense(a) => {
            rank_updates(a, top, -1.0);
            let e = super::top_eigen(a.as_ref(), k, solver);
            rank_updates(a, top, 1.0);
            e
        }
        Symmetric::Sparse(a) => {
            let (route, note) = solver.route(a.n(), k, Structure::SparseNearOne)?;
            let mut e = match route {
                Route::ShiftInvert => match top_eigen_near_one(a, k, top, sigma) {
                    Some(e) => e,
                    None => {
                        let mut e = sparse_to(a, k, Solver::Auto, top, residual)?;
                        e.note.get_or_insert(format!(
                            "shift-invert was not used (factor too large or failed); used {}",
                            e.solver.name()
                        ));
                        e
                    }
                },
                r => sparse_to(a, k, r.solver(), top, residual)?,
            };
            if e.note.is_none() {
                e.note = note;
            }
            Ok(e)
        }
    }
}
