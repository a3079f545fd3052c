//! Double centring of a kernel matrix with the training means (maths §3).

use faer::Mat;
use serde::{Deserialize, Serialize};

/// The mean of every column of `x` (each summed from the first row to the last).
pub(crate) fn column_means(x: faer::MatRef<'_, f64>) -> Vec<f64> {
    let n = x.nrows();
    (0..x.ncols())
        .map(|c| (0..n).map(|i| x[(i, c)]).sum::<f64>() / n as f64)
        .collect()
}

/// The training means needed to centre any kernel row: mean_j K_ij for every i, and
/// the grand mean of K.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelMeans {
    /// mean_j K_ij, i = 1..N.
    pub row: Vec<f64>,
    /// mean_ij K_ij.
    pub grand: f64,
}

impl KernelMeans {
    /// Means of the symmetric matrix `k`.
    pub fn of(k: &Mat<f64>) -> Self {
        let n = k.nrows();
        // Column sums of a symmetric matrix are its row sums; columns are contiguous.
        let row: Vec<f64> = (0..n)
            .map(|j| k.col_as_slice(j).iter().sum::<f64>() / n as f64)
            .collect();
        let grand = row.iter().sum::<f64>() / n as f64;
        KernelMeans { row, grand }
    }

    /// Means of K = G Gᵀ from its N×r factor (O(N r), without forming K).
    pub fn of_factor(g: faer::MatRef<'_, f64>) -> Self {
        let n = g.nrows();
        let col_sums: Vec<f64> = (0..g.ncols()).map(|j| g.col(j).iter().sum()).collect();
        let mut row = vec![0.0; n];
        for (j, s) in col_sums.iter().enumerate() {
            for (r, v) in row.iter_mut().zip(g.col(j).iter()) {
                *r += v * s;
            }
        }
        for r in row.iter_mut() {
            *r /= n as f64;
        }
        let grand = row.iter().sum::<f64>() / n as f64;
        KernelMeans { row, grand }
    }

    /// K̃ = H K H in place.
    pub fn center(&self, k: &mut Mat<f64>) {
        let n = k.nrows();
        for j in 0..n {
            let mj = self.row[j];
            let col = k.col_as_slice_mut(j);
            for (i, v) in col.iter_mut().enumerate() {
                *v = *v - self.row[i] - mj + self.grand;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centred_matrix_has_zero_row_sums() {
        let k = Mat::from_fn(6, 6, |i, j| 1.0 / (1.0 + i as f64 + j as f64));
        let m = KernelMeans::of(&k);
        let mut c = k.clone();
        m.center(&mut c);
        for i in 0..6 {
            let s: f64 = (0..6).map(|j| c[(i, j)]).sum();
            assert!(s.abs() < 1e-14);
        }
    }
}
