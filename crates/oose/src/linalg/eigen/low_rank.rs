//! The low-rank solver (maths §3, `Solver::LowRank`): the eigenpairs of G Gᵀ from the r×r matrix Gᵀ G of a rank-revealing pivoted Cholesky factor G.

#[allow(unused_imports)]
use super::*;

/// The `k` largest eigenpairs of G Gᵀ (G: N×r, any r) through the r×r matrix Gᵀ G:
/// Gᵀ G = V Σ Vᵀ ⇒ G Gᵀ (G V Σ^{−1/2}) = (G V Σ^{−1/2}) Σ. Eigenvalues at most
/// `tol · σ₁` are returned as they are; their vectors are left at zero (the caller
/// rejects them). Sign rule applied.
pub fn top_eigen_of_factor(g: MatRef<'_, f64>, k: usize, tol: f64) -> Result<Eigen> {
    let (n, r) = (g.nrows(), g.ncols());
    let gtg = crate::linalg::product(g.transpose(), g, Par::rayon(0));
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
