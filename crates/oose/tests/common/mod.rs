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

/// A t-SNE or UMAP model fitted with its defaults on the 4 points `x`: two fit
/// warnings, the first containing `first` (the lowered neighbour count), the second
/// lowering `transform_neighbors` from 5 to 4, which the model records; the training
/// points extend onto the embedding exactly.
pub fn assert_lowered_on_four_points<M>(m: &M, x: MatRef<'_, f64>, first: &str)
where
    M: oose::model::Fitted + oose::methods::OutOfSample,
{
    let w = m.fit_warnings();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].contains(first), "{w:?}");
    assert!(
        w[1].contains(
            "transform_neighbors = 5 is more than the number of points (4): lowered to N = 4"
        ),
        "{w:?}"
    );
    use oose::model::params::Value;
    assert!(m
        .param_values()
        .contains(&("transform_neighbors", Value::Int(4))));
    let e = m.extend(x).unwrap();
    assert_eq!(e.coordinates, m.embedding().to_owned());
}

/// The parameter an `Error::InvalidParameter` names (panics on any other error).
pub fn refused_param(e: &oose::error::Error) -> &'static str {
    match e {
        oose::error::Error::InvalidParameter { name, .. } => name,
        other => panic!("not a parameter error: {other:?}"),
    }
}

/// `f` run on a pool of `threads` threads (thread-count independence tests).
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}
