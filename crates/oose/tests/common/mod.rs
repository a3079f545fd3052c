//! Helpers shared by the library's behaviour tests.

#![allow(dead_code)]

use oose::faer::{Mat, MatRef};

/// The largest |entry|.
pub fn max_abs(a: MatRef<'_, f64>) -> f64 {
    let mut m = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            m = m.max(a[(i, j)].abs());
        }
    }
    m
}

/// The largest |a − b| entry.
pub fn max_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let mut m = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            m = m.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    m
}

/// `k` Gaussian blobs in 10 dimensions (labels i % k), `n` points: centres with
/// standard deviation 8 per coordinate, unit noise.
pub fn blobs(n: usize, k: usize, seed: u64) -> (Mat<f64>, Vec<usize>) {
    let mut rng = oose::rng::Rng::new(seed);
    let centres: Vec<Vec<f64>> = (0..k)
        .map(|_| (0..10).map(|_| 8.0 * rng.normal()).collect())
        .collect();
    let labels: Vec<usize> = (0..n).map(|i| i % k).collect();
    let x = Mat::from_fn(n, 10, |i, j| centres[labels[i]][j]);
    let noise = rng.normal_mat(n, 10);
    (&x + &noise, labels)
}

/// Fraction of points whose 10 nearest others in `y` mostly share their label.
pub fn knn_accuracy(y: MatRef<'_, f64>, labels: &[usize]) -> f64 {
    let (idx, _) = oose::neighbors::knn(y, y, 10, true);
    let ok = idx
        .iter()
        .enumerate()
        .filter(|(i, nb)| nb.iter().filter(|&&j| labels[j] == labels[*i]).count() > 5)
        .count();
    ok as f64 / labels.len() as f64
}
