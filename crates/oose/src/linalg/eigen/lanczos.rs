//! Restarted Lanczos (faer's partial self-adjoint solver) on a dense symmetric matrix read through its lower triangle, or on any operator.

#[allow(unused_imports)]
use super::*;

/// Returns `Ok(Err(reason))` when Lanczos cannot be trusted for this matrix.
pub(super) fn lanczos(a: MatRef<'_, f64>, k: usize) -> Result<std::result::Result<Eigen, String>> {
    // faer's tolerance is absolute on the Ritz residual ||A v − θ v||; ||A||_F bounds
    // every eigenvalue.
    let norm = a.norm_l2();
    match LowerSymmetric::new(a) {
        Some(op) => lanczos_operator(&op, k, norm, 0.0, lanczos_dims(k)),
        None => lanczos_operator(&a, k, norm, 0.0, lanczos_dims(k)),
    }
}

/// The `k` largest eigenpairs of the operator `op` − `shift`·I by restarted Lanczos,
/// where `op` is positive semidefinite (or its eigenvalues of largest magnitude are the
/// wanted ones) and `norm` bounds its spectral norm.
pub(super) fn lanczos_operator(
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
