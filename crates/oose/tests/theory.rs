//! Theory diagnostics (maths §4): the corrected batch-discrepancy identity and bound, the
//! exactness criterion, and eigenvalue interlacing as a property test.

use faer::Mat;
use oose::diagnostics::theory::{batch_discrepancy, interlacing};
use oose::kernel::{Epsilon, Kernel};
use oose::rng::Rng;
use proptest::prelude::*;

fn random(n: usize, dim: usize, seed: u64) -> Mat<f64> {
    let mut r = Rng::new(seed);
    Mat::from_fn(n, dim, |_, _| r.normal())
}

fn kernels(eps: f64) -> [Kernel; 3] {
    [
        Kernel::gaussian(eps),
        Kernel::InverseMultiquadric {
            epsilon: Epsilon::Value(eps),
            beta: -0.5,
        },
        Kernel::Laplacian {
            epsilon: Epsilon::Value(eps),
        },
    ]
}

#[test]
fn corrected_identity_holds_to_round_off() {
    for seed in 0..6u64 {
        let x = random(60, 3, seed);
        let z = random(15, 3, seed + 100);
        for k in kernels(0.7) {
            let d = batch_discrepancy(&k, x.as_ref(), z.as_ref(), 1e-12).unwrap();
            let rel = (d.discrepancy - d.identity).abs() / d.identity;
            assert!(rel < 1e-10, "{k:?} seed {seed}: {rel:e}");
            assert!(d.trace_residual > 0.0 && !d.exact);
        }
    }
}

#[test]
fn corrected_bound_holds_on_100_random_cases() {
    let mut r = Rng::new(42);
    for case in 0..100u64 {
        let n = 10 + r.below(40);
        let m = 1 + r.below(20);
        let dim = 1 + r.below(4);
        let eps = 0.05 + 3.0 * r.uniform();
        let k = kernels(eps)[r.below(3)];
        let x = random(n, dim, 1000 + case);
        let z = random(m, dim, 2000 + case);
        let d = batch_discrepancy(&k, x.as_ref(), z.as_ref(), 1e-12).unwrap();
        // D from its definition sums |d_k² − d_k̂²| over all pairs, including the X×X
        // pairs where k − k̂ is round-off below the rank tolerance (1e-12 · k(x,x) = 1e-12):
        // that floor adds at most sqrt(4 · 1e-12) = 2e-6 to D.
        let floor = 2.0 * 1e-12f64.sqrt();
        assert!(
            d.discrepancy <= d.bound * (1.0 + 1e-10) + floor,
            "case {case} ({k:?}, N={n}, M={m}): D = {} > bound {}",
            d.discrepancy,
            d.bound
        );
    }
}

/// Regression: [Wang 2018]'s bound (eqs. 44–45), sqrt(2M)/(N+M)·sqrt(Tr k₀), keeps only the
/// Z×Z pairs. Each of the 2·N·M pairs (x, z) contributes k₀(z, z) (eq. 27), so with
/// N > M the discrepancy exceeds it; the corrected bound sqrt(2 Tr k₀/(N+M)) holds.
#[test]
fn seed_bound_fails_where_the_corrected_one_holds() {
    let x = random(80, 2, 7);
    let z = random(5, 2, 8);
    let d = batch_discrepancy(&Kernel::gaussian(0.5), x.as_ref(), z.as_ref(), 1e-12).unwrap();
    assert!(d.discrepancy > d.seed_bound, "{d:?}");
    assert!(d.discrepancy <= d.bound);
    // By the identity, D² (N+M)² ≥ 2N·Tr k₀ > 2M·Tr k₀ = seed_bound² (N+M)².
    assert!(d.discrepancy / d.seed_bound > (80.0f64 / 5.0).sqrt() * 0.5);
}

#[test]
fn exactness_criterion_separates_training_points_from_new_ones() {
    let x = random(50, 3, 3);
    let z = Mat::from_fn(6, 3, |i, j| x[(7 * i, j)]);
    let k = Kernel::gaussian(1.0);
    let d = batch_discrepancy(&k, x.as_ref(), z.as_ref(), 1e-12).unwrap();
    assert!(d.exact, "{d:?}");
    assert!(d.max_residual < 1e-10 && d.discrepancy < 1e-5);
    let far = Mat::from_fn(1, 3, |_, _| 10.0);
    let d = batch_discrepancy(&k, x.as_ref(), far.as_ref(), 1e-12).unwrap();
    assert!(!d.exact && (d.max_residual - 1.0).abs() < 1e-12);
    assert!(batch_discrepancy(&Kernel::Precomputed, x.as_ref(), z.as_ref(), 1e-12).is_err());
    assert!(batch_discrepancy(&k, x.as_ref(), random(2, 4, 1).as_ref(), 1e-12).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn eigenvalues_interlace(
        n in 3usize..30,
        m in 1usize..10,
        dim in 1usize..4,
        eps in 0.05f64..4.0,
        which in 0usize..3,
        seed in 0u64..1_000_000,
    ) {
        let x = random(n, dim, seed);
        let z = random(m, dim, seed ^ 0xABCD);
        let k = kernels(eps)[which];
        let il = interlacing(&k, x.as_ref(), z.as_ref(), 1e-12).unwrap();
        let scale = il.lambda[0];
        prop_assert!(il.worst_violation <= 1e-9 * scale, "{:?}", il);
        prop_assert_eq!(il.lambda.len(), n + m);
        prop_assert_eq!(il.sigma.len(), n);
    }
}
