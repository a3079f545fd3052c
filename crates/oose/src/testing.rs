//! Helpers of the unit tests.

/// `f` run on a pool of `threads` threads (thread-count independence tests).
pub(crate) fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// The `dim`×`dim` identity with the plane of the first two axes turned by `angle`:
/// [[cos, −sin], [sin, cos]] in its top left corner.
pub(crate) fn plane_rotation(dim: usize, angle: f64) -> faer::Mat<f64> {
    let (c, s) = (angle.cos(), angle.sin());
    faer::Mat::from_fn(dim, dim, |i, j| match (i, j) {
        (0, 0) | (1, 1) => c,
        (0, 1) => -s,
        (1, 0) => s,
        _ => f64::from(u8::from(i == j)),
    })
}
