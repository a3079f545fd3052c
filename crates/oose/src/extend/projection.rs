//! The projection (Nyström / Gower) map shared by kernel PCA and the MDS family
//! (maths §3, §5): y(z) = Λ_d^{−1/2} U_dᵀ k̃_z, where k̃_z is the kernel (similarity) row
//! of z centred with the training means — computed without forming k̃_z:
//! y = P kz + (grand − mean(kz)) · 1ᵀP − (row means)ᵀP, P = U_d Λ_d^{−1/2}.

use crate::linalg::center::KernelMeans;
use crate::linalg::stored::StoredMat;
use faer::{Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

/// P = U_d Λ_d^{−1/2} and the two vectors that centre on the fly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Projector {
    /// P (N×d).
    projector: StoredMat,
    /// 1ᵀP.
    col_sums: Vec<f64>,
    /// (training row means)ᵀ P.
    row_means: Vec<f64>,
}

impl Projector {
    /// From eigenvectors U (N×d, columns) and eigenvalues (all > 0).
    pub(crate) fn new(u: MatRef<'_, f64>, values: &[f64], means: &KernelMeans) -> Self {
        let (n, d) = (u.nrows(), values.len());
        let p = Mat::from_fn(n, d, |i, j| u[(i, j)] / values[j].sqrt());
        let col_sums = (0..d).map(|j| p.col_as_slice(j).iter().sum()).collect();
        let row_means = (0..d)
            .map(|j| {
                p.col_as_slice(j)
                    .iter()
                    .zip(&means.row)
                    .map(|(a, m)| a * m)
                    .sum()
            })
            .collect();
        Projector {
            projector: StoredMat::from_mat(p.as_ref()),
            col_sums,
            row_means,
        }
    }

    /// Coordinates of the rows `kz` (m×N) and their means mean_i kz[·, i]; centred with
    /// the training `means` when given (uncentred, Mercer form, otherwise).
    pub(crate) fn project(
        &self,
        kz: MatRef<'_, f64>,
        means: Option<&KernelMeans>,
    ) -> (Mat<f64>, Vec<f64>) {
        let (m, n) = (kz.nrows(), kz.ncols());
        let d = self.col_sums.len();
        let mut y = crate::linalg::product(kz, self.projector.view(), Par::Seq);
        // Row means accumulated column by column (kz is column-major: a row-wise loop
        // would stride through memory on the hot path).
        let mut mz = vec![0.0; m];
        for j in 0..n {
            for (acc, &v) in mz.iter_mut().zip(kz.col(j).iter()) {
                *acc += v;
            }
        }
        mz.iter_mut().for_each(|v| *v /= n as f64);
        if let Some(means) = means {
            let g = means.grand;
            for j in 0..d {
                let (cs, rm) = (self.col_sums[j], self.row_means[j]);
                for (i, v) in y.col_as_slice_mut(j).iter_mut().enumerate() {
                    *v += (g - mz[i]) * cs - rm;
                }
            }
        }
        (y, mz)
    }

    /// What restricted reconstruction needs besides ŷ (maths §5): for kernel rows `kz`
    /// with row means `mz` (from [`Projector::project`]) and self-similarities `kzz`,
    /// β = k̃(z, z) and ρ = ||b||² − ŷᵀΛŷ, with b the rows centred by `means` (the raw
    /// rows when `None`, the Mercer form).
    pub(crate) fn beta_rho(
        kz: MatRef<'_, f64>,
        mz: &[f64],
        kzz: &[f64],
        means: Option<&KernelMeans>,
        eigenvalues: &[f64],
        y: MatRef<'_, f64>,
    ) -> (Vec<f64>, Vec<f64>) {
        let m = kz.nrows();
        let mut b_sq = vec![0.0; m];
        let (shift, grand): (Vec<f64>, f64) = match means {
            Some(mn) => (mz.iter().map(|v| mn.grand - v).collect(), mn.grand),
            None => (vec![0.0; m], 0.0),
        };
        for j in 0..kz.ncols() {
            let rm = means.map_or(0.0, |mn| mn.row[j]);
            for ((acc, &v), &sh) in b_sq.iter_mut().zip(kz.col(j).iter()).zip(&shift) {
                let b = v - rm + sh;
                *acc += b * b;
            }
        }
        let beta = (0..m)
            .map(|i| match means {
                Some(_) => kzz[i] - 2.0 * mz[i] + grand,
                None => kzz[i],
            })
            .collect();
        let rho = (0..m)
            .map(|i| {
                let q: f64 = eigenvalues
                    .iter()
                    .enumerate()
                    .map(|(j, e)| e * y[(i, j)] * y[(i, j)])
                    .sum();
                (b_sq[i] - q).max(0.0)
            })
            .collect();
        (beta, rho)
    }

    /// The rows `kz` (with row means `mz`) centred by the training `means`.
    pub(crate) fn centred_rows(kz: MatRef<'_, f64>, mz: &[f64], means: &KernelMeans) -> Mat<f64> {
        Mat::from_fn(kz.nrows(), kz.ncols(), |i, j| {
            kz[(i, j)] - mz[i] - means.row[j] + means.grand
        })
    }

    /// Whether the stored shapes fit N training points and d components.
    pub(crate) fn is_shape(&self, n: usize, d: usize) -> bool {
        self.projector.is_shape(n, d) && self.col_sums.len() == d && self.row_means.len() == d
    }
}
