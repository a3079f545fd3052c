//! The dense solver: faer's full self-adjoint eigendecomposition, top k kept.

#[allow(unused_imports)]
use super::*;

pub(super) fn dense(a: MatRef<'_, f64>, k: usize) -> Result<Eigen> {
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
