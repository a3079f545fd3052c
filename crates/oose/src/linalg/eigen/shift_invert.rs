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
        // A rough solve that failed would fail again at round-off: tried once.
        let tried = residual > 0.0;
        let quick = if tried {
            rough(a, k, rho, deflate, residual)
        } else {
            None
        };
        let lanczos = match quick {
            Some(e) => Ok(e),
            None => lanczos_operator(&op, k, 2.0 * rho, rho, lanczos_dims(k), residual)?,
        };
        match lanczos {
            Ok(e) => e,
            Err(why) => match (!tried).then(|| rough(a, k, rho, deflate, 0.0)).flatten() {
                Some(e) => {
                    note = Some(format!("{why}; used unrestarted Lanczos"));
                    e
                }
                None => {
                    note = Some(format!("{why}; used the dense solver"));
                    dense(densify(a, deflate).as_ref(), k)?
                }
            },
        }
    } else {
        dense(densify(a, deflate).as_ref(), k)?
    };
    apply_sign_rule(out.vectors.as_mut());
    out.note = note;
    Ok(out)
}

/// The unrestarted Lanczos of a rough solve ([`rough`]) holds at most this many basis
/// entries (256 MiB) and takes at most [`ROUGH_MAX_STEPS`] steps.
const ROUGH_BASIS_ENTRIES: usize = 1 << 25;
/// See [`ROUGH_BASIS_ENTRIES`].
const ROUGH_MAX_STEPS: usize = 300;

/// The `k` largest eigenpairs of A − Σ d dᵀ (`deflate`) with Ritz residuals below
/// `residual` · 2ρ, never below the round-off of a product ([`roundoff`]) (ρ: the Gershgorin bound plus the deflation's 1, so that A + ρI ⪰ 0
/// and ‖A + ρI‖ ≤ 2ρ), by [`lanczos_full`] on A + ρI and Rayleigh–Ritz with A. `None`
/// when its basis would exceed [`ROUGH_BASIS_ENTRIES`] before it converged: the caller
/// runs faer's restarted solver, whose memory does not grow with the steps.
fn rough(a: &SymCsr, k: usize, rho: f64, deflate: &[&[f64]], residual: f64) -> Option<Eigen> {
    let n = a.n();
    if n < 2 {
        return None;
    }
    let steps = ROUGH_MAX_STEPS.min(ROUGH_BASIS_ENTRIES / n).min(n - 1);
    if steps < 2 * k + 2 {
        return None;
    }
    let mut out = Mat::<f64>::zeros(n, 1);
    let apply = |x: &mut [f64]| {
        a.apply_shifted(
            out.as_mut(),
            MatRef::from_column_major_slice(x, n, 1),
            rho,
            deflate,
        );
        x.copy_from_slice(out.col_as_slice(0));
    };
    // The Ritz values of A + ρI are at most ρ + 1: this tolerance on |β s| / θ₁ keeps
    // the residuals below residual · 2ρ.
    let residual = residual.max(roundoff(n));
    let v = lanczos_full(apply, n, k, residual * 2.0 * rho / (rho + 1.0), steps)?;
    let (values, vectors) = rayleigh_ritz(a, v.as_ref(), deflate)?;
    Some(Eigen {
        values,
        vectors,
        solver: Solver::Lanczos,
        note: None,
    })
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
    let (values, vectors) = rayleigh_ritz(a, ritz.as_ref(), &[])?;
    Some(Eigen {
        values,
        vectors,
        solver: Solver::ShiftInvert,
        note: None,
    })
}

/// Lanczos with full reorthogonalisation and no restart for the `k` largest
/// eigenvalues of a symmetric positive semidefinite operator (`apply(x)` overwrites x
/// with A x) whose wanted eigenvalues stand well apart from the rest (as after a
/// shift-invert), or when a rough answer will do: stops when the top `k` Ritz pairs have
/// residual estimates |β_j s_{j,i}| ≤ `tol` · θ₁, or after `max_steps` steps (then
/// `None`). Returns the orthonormal Ritz vectors (n×k), largest first.
///
/// Each new vector is orthogonalised against all earlier ones by classical
/// Gram–Schmidt applied twice, as two matrix–vector products with the basis ("twice is
/// enough"), one thread so that the bits do not depend on the pool. faer's restarted
/// solver orthogonalises vector by vector and takes a norm of the whole vector after
/// each: on UMAP's initialisation (60000 points) it spent 3.2 s where this spends
/// under 1 s.
pub(super) fn lanczos_full(
    mut apply: impl FnMut(&mut [f64]),
    n: usize,
    k: usize,
    tol: f64,
    max_steps: usize,
) -> Option<Mat<f64>> {
    use faer::linalg::matmul::matmul;
    use faer::Accum;
    let mut rng = Rng::new(0x51F7_1A7E);
    // Columns added as the iteration goes (a doubling), not max_steps at once.
    let mut basis = Mat::<f64>::zeros(n, max_steps.min(32));
    let mut v = Mat::<f64>::from_fn(n, 1, |_, _| rng.normal());
    v /= v.norm_l2();
    let mut h = Mat::<f64>::zeros(max_steps, 1);
    let (mut alpha, mut beta): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for j in 0..max_steps {
        if j == basis.ncols() {
            let wider = (2 * j).min(max_steps);
            basis.resize_with(n, wider, |_, _| 0.0);
        }
        basis.col_mut(j).copy_from(v.col(0));
        let mut w = v.clone();
        apply(w.col_as_slice_mut(0));
        let a = crate::linalg::product(v.transpose(), w.as_ref(), Par::Seq);
        alpha.push(a[(0, 0)]);
        let m = j + 1;
        for _ in 0..2 {
            let vb = basis.as_ref().subcols(0, m);
            let mut hm = h.as_mut().subrows_mut(0, m);
            matmul(
                hm.as_mut(),
                Accum::Replace,
                vb.transpose(),
                w.as_ref(),
                1.0,
                Par::Seq,
            );
            matmul(w.as_mut(), Accum::Add, vb, hm.as_ref(), -1.0, Par::Seq);
        }
        let bj = w.norm_l2();
        // The tridiagonal's eigenproblem costs m³: every step while m is small, then
        // every tenth.
        if m >= k && (m <= 40 || m % 10 == 0 || bj == 0.0 || m == max_steps) {
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
                let mut ritz = Mat::<f64>::zeros(n, k);
                let vb = basis.as_ref().subcols(0, m);
                matmul(
                    ritz.as_mut(),
                    Accum::Replace,
                    vb,
                    e.vectors.as_ref(),
                    1.0,
                    Par::Seq,
                );
                return Some(ritz);
            }
        }
        if bj == 0.0 {
            return None;
        }
        beta.push(bj);
        v = w / bj;
    }
    None
}

/// Rayleigh–Ritz with A − Σ d dᵀ (`deflate`) on the span of the orthonormal columns of
/// `v`: the k×k projected matrix's eigenpairs, largest first, and the rotated vectors
/// (sign rule applied), so that the returned pairs are A's to working precision.
fn rayleigh_ritz(
    a: &SymCsr,
    v: MatRef<'_, f64>,
    deflate: &[&[f64]],
) -> Option<(Vec<f64>, Mat<f64>)> {
    let (n, k) = (v.nrows(), v.ncols());
    let mut av = Mat::<f64>::zeros(n, k);
    a.apply_shifted(av.as_mut(), v, 0.0, deflate);
    // One thread: a reduction over n split by the pool would move the last bits.
    let h = crate::linalg::product(v.transpose(), av.as_ref(), Par::Seq);
    let hs = Mat::from_fn(k, k, |i, j| 0.5 * (h[(i, j)] + h[(j, i)]));
    let small = dense(hs.as_ref(), k).ok()?;
    let mut vectors = crate::linalg::product(v, small.vectors.as_ref(), Par::Seq);
    apply_sign_rule(vectors.as_mut());
    Some((small.values, vectors))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// D^{-1/2} W D^{-1/2} of a Gaussian 8-NN graph on `n` random points of the unit
    /// square, and its top eigenvector √(d/Σd).
    fn normalised_graph(n: usize) -> (SymCsr, Vec<f64>) {
        let mut rng = Rng::new(7);
        let p: Vec<[f64; 2]> = (0..n).map(|_| [rng.uniform(), rng.uniform()]).collect();
        let d2 = |i: usize, j: usize| (p[i][0] - p[j][0]).powi(2) + (p[i][1] - p[j][1]).powi(2);
        let mut w = vec![std::collections::BTreeMap::new(); n];
        for i in 0..n {
            let mut near: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            near.sort_by(|&a, &b| d2(i, a).total_cmp(&d2(i, b)));
            for &j in &near[..8] {
                let v = (-d2(i, j) / 0.002).exp();
                w[i].insert(j as u32, v);
                w[j].insert(i as u32, v);
            }
        }
        let deg: Vec<f64> = w.iter().map(|r| r.values().sum()).collect();
        let rows = w
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.iter()
                    .map(|(&j, &v)| (j, v / (deg[i] * deg[j as usize]).sqrt()))
                    .collect()
            })
            .collect();
        let total: f64 = deg.iter().sum();
        (
            SymCsr::from_rows(rows),
            deg.iter().map(|g| (g / total).sqrt()).collect(),
        )
    }

    #[test]
    fn a_rough_solve_meets_its_residual_and_agrees_with_the_converged_one() {
        let (s, top) = normalised_graph(800);
        let k = 3;
        let rho = 2.0;
        let residual = 1e-7;
        let e = rough(&s, k, rho, &[&top], residual).expect("within 300 steps");
        let mut exact = dense(densify(&s, &[&top]).as_ref(), k).unwrap();
        apply_sign_rule(exact.vectors.as_mut());
        // faer's restarted solver returns the second vector twice here; the guard sees
        // it and the unrestarted Lanczos takes over, to round-off.
        let lanczos =
            top_eigen_below_top(Symmetric::Sparse(&s), k, &[&top], Solver::Lanczos, 0.0, 0.0)
                .unwrap();
        assert!(
            lanczos
                .note
                .as_deref()
                .unwrap_or("")
                .contains("not orthonormal"),
            "{:?}",
            lanczos.note
        );
        for c in 0..k {
            assert!((lanczos.values[c] - exact.values[c]).abs() < 1e-12, "{c}");
        }
        let mut av = Mat::<f64>::zeros(800, k);
        s.apply_shifted(av.as_mut(), e.vectors.as_ref(), 0.0, &[&top]);
        for c in 0..k {
            let r: f64 = (0..800)
                .map(|i| (av[(i, c)] - e.values[c] * e.vectors[(i, c)]).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(r <= residual * 2.0 * rho, "pair {c}: residual {r}");
            // Ritz values are off by about the squared residual over the gap.
            assert!((e.values[c] - exact.values[c]).abs() < 1e-10, "{c}");
            assert!(e.values[c] < 1.0 - 1e-6, "the top eigenvector is deflated");
            // Same vectors, after the sign rule.
            let gap = (0..800)
                .map(|i| (e.vectors[(i, c)] - exact.vectors[(i, c)]).abs())
                .fold(0.0, f64::max);
            assert!(gap < 1e-4, "{c}: {gap}");
        }
        // A basis that would not fit gives way to the restarted solver.
        assert!(rough(&s, 200, rho, &[&top], residual).is_none());
    }
}
