//! Restarted Lanczos (faer's partial self-adjoint solver) on a dense symmetric matrix read through its lower triangle, or on any operator.

#[allow(unused_imports)]
use super::*;

/// Returns `Ok(Err(reason))` when Lanczos cannot be trusted for this matrix.
pub(super) fn lanczos(a: MatRef<'_, f64>, k: usize) -> Result<std::result::Result<Eigen, String>> {
    // faer's tolerance is absolute on the Ritz residual ||A v − θ v||; ||A||_F bounds
    // every eigenvalue.
    let norm = a.norm_l2();
    match LowerSymmetric::new(a) {
        Some(op) => lanczos_operator(&op, k, norm, 0.0, lanczos_dims(k), 0.0),
        None => lanczos_operator(&a, k, norm, 0.0, lanczos_dims(k), 0.0),
    }
}

/// An operator that unwinds out of faer's Lanczos (with [`Stopped`], and without the
/// panic hook: `resume_unwind`) at its next product once a stop is requested (Ctrl-C,
/// [`crate::progress::request_stop`]); [`lanczos_operator`] catches it and returns
/// `Interrupted`. faer's solver has no cancellation of its own, and a degenerate
/// operator (zero products) makes it restart until its limit.
struct Stoppable<'a> {
    op: &'a dyn LinOp<f64>,
    stop: &'a (dyn Fn() -> bool + Sync),
}

impl std::fmt::Debug for Stoppable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.op.fmt(f)
    }
}

impl LinOp<f64> for Stoppable<'_> {
    fn apply_scratch(&self, rhs_ncols: usize, par: Par) -> faer::dyn_stack::StackReq {
        self.op.apply_scratch(rhs_ncols, par)
    }
    fn nrows(&self) -> usize {
        self.op.nrows()
    }
    fn ncols(&self) -> usize {
        self.op.ncols()
    }
    fn apply(
        &self,
        out: faer::MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        if (self.stop)() {
            std::panic::resume_unwind(Box::new(Stopped));
        }
        self.op.apply(out, rhs, par, stack);
    }
    /// A real operator is its own conjugate.
    fn conj_apply(
        &self,
        out: faer::MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        par: Par,
        stack: &mut MemStack,
    ) {
        self.apply(out, rhs, par, stack);
    }
}

/// The payload of the unwind that carries a stop request out of faer.
struct Stopped;

/// The `k` largest eigenpairs of the operator `op` − `shift`·I by restarted Lanczos,
/// where `op` is positive semidefinite (or its eigenvalues of largest magnitude are the
/// wanted ones) and `norm` bounds its spectral norm. The Ritz residuals end below
/// `norm` times `residual` (0: the round-off of a product, the default everywhere but
/// where a rough answer is all that is needed).
pub(super) fn lanczos_operator(
    op: &dyn LinOp<f64>,
    k: usize,
    norm: f64,
    shift: f64,
    dims: (usize, usize),
    residual: f64,
) -> Result<std::result::Result<Eigen, String>> {
    lanczos_stoppable(
        op,
        k,
        norm,
        shift,
        dims,
        residual,
        &crate::progress::stop_requested,
    )
}

/// [`lanczos_operator`] that ends with `Interrupted` as soon as `stop` says so.
fn lanczos_stoppable(
    op: &dyn LinOp<f64>,
    k: usize,
    norm: f64,
    shift: f64,
    (min_dim, max_dim): (usize, usize),
    residual: f64,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<std::result::Result<Eigen, String>> {
    let n = op.nrows();
    let op = &Stoppable { op, stop };
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
    let tol = norm * roundoff(n).max(residual);
    let mut vecs = Mat::<f64>::zeros(n, k);
    let mut vals = vec![0.0; k];
    let mut mem = MemBuffer::new(partial_self_adjoint_eigen_scratch::<f64>(
        op, k, par, params,
    ));
    if stop() {
        return Err(crate::Error::Interrupted);
    }
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        partial_self_adjoint_eigen(
            vecs.as_mut(),
            &mut vals,
            op,
            v0.as_ref(),
            tol,
            par,
            MemStack::new(&mut mem),
            params,
        )
    }));
    let info = match run {
        Ok(info) => info,
        Err(payload) if payload.is::<Stopped>() => return Err(crate::Error::Interrupted),
        Err(payload) => std::panic::resume_unwind(payload),
    };
    if info.n_converged_eigen < k {
        return Ok(Err(format!(
            "Lanczos converged for {} of {k} eigenpairs",
            info.n_converged_eigen
        )));
    }
    // faer's restarted solver can return one eigenvector twice, each copy with a tiny
    // residual (a ghost: the set is wrong). Seen on an 800-point graph whose second and
    // third eigenvalues below the top lie 5e-4 apart (`shift_invert` tests).
    let gram = vecs.transpose() * &vecs;
    let off = (0..k)
        .flat_map(|i| (0..k).map(move |j| (i, j)))
        .map(|(i, j)| (gram[(i, j)] - if i == j { 1.0 } else { 0.0 }).abs())
        .fold(0.0, f64::max);
    if off > 1e-8 {
        return Ok(Err(format!(
            "Lanczos returned eigenvectors that are not orthonormal (|VᵀV − I| = {off:.1e})"
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_stop_during_the_iteration_ends_it_at_the_next_product() {
        let n = 400;
        let a = Mat::from_fn(n, n, |i, j| 1.0 / (1.0 + (i as f64 - j as f64).abs()));
        let asked = AtomicUsize::new(0);
        // The predicate is asked once before the solver and once per product: stop
        // after 5 products.
        let stop = || asked.fetch_add(1, Ordering::SeqCst) > 5;
        let dims = lanczos_dims(3);
        let r = lanczos_stoppable(&a.as_ref(), 3, a.norm_l2(), 0.0, dims, 0.0, &stop);
        assert!(matches!(r, Err(crate::Error::Interrupted)), "{r:?}");
        assert_eq!(asked.load(Ordering::SeqCst), 7);
        // Never asked to stop: the same call converges.
        let r = lanczos_stoppable(&a.as_ref(), 3, a.norm_l2(), 0.0, dims, 0.0, &|| false);
        assert_eq!(r.unwrap().unwrap().values.len(), 3);
    }
}
