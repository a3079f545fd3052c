//! Orthogonal Procrustes: the orthogonal Q minimising ||A Q − B||_F (maths §9).

use crate::error::{Error, Result};
use faer::{Mat, MatRef};

/// The orthogonal d×d matrix Q minimising ||A Q − B||_F for n×d matrices A and B:
/// with AᵀB = U Σ Vᵀ, Q = U Vᵀ.
pub fn orthogonal_procrustes(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    if a.nrows() != b.nrows() || a.ncols() != b.ncols() {
        return Err(Error::Shape {
            what: "Procrustes inputs",
            expected: format!("{}×{}", a.nrows(), a.ncols()),
            got: format!("{}×{}", b.nrows(), b.ncols()),
        });
    }
    let m = a.transpose() * b;
    let svd = m
        .svd()
        .map_err(|e| Error::Eigensolver(format!("SVD in Procrustes failed: {e:?}")))?;
    Ok(svd.U() * svd.V().transpose())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn recovers_a_rotation() {
        let a = Rng::new(1).normal_mat(30, 3);
        // A rotation and a reflection.
        let mut q = crate::testing::plane_rotation(3, 0.3);
        q[(2, 2)] = -1.0;
        let b = &a * &q;
        let got = orthogonal_procrustes(a.as_ref(), b.as_ref()).unwrap();
        assert!((&got - &q).norm_l2() < 1e-12);
    }
}
