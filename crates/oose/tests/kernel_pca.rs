//! Behaviour of PCA and kernel PCA: exactness on training points for every kernel,
//! both centring modes and both solvers; linear kernel PCA = PCA; Lanczos = dense;
//! residual properties (maths §2–4).

mod common;
use oose::datasets::{s_curve, swiss_roll};
use oose::faer::Mat;
use oose::kernel::{Epsilon, Kernel};
use oose::prelude::*;
use oose::rng::Rng;

fn max_rel_diff(a: oose::faer::MatRef<'_, f64>, b: oose::faer::MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let scale = b.norm_max().max(1e-300);
    (a - b).norm_max() / scale
}

fn kernels() -> Vec<(Kernel, usize)> {
    // (kernel, components): multiquadric with β = 1.5 is only conditionally positive
    // definite, so fewer components have positive eigenvalues.
    let a = Epsilon::Median;
    vec![
        (Kernel::Gaussian { epsilon: a }, 4),
        (Kernel::Laplacian { epsilon: a }, 4),
        (
            Kernel::InverseMultiquadric {
                epsilon: a,
                beta: -0.5,
            },
            4,
        ),
        (
            Kernel::Multiquadric {
                epsilon: a,
                beta: 1.5,
            },
            2,
        ),
        (
            Kernel::Wendland {
                epsilon: Epsilon::Value(15.0),
            },
            4,
        ),
        (Kernel::Linear, 3),
        (
            Kernel::Polynomial {
                gamma: 0.01,
                coef0: 1.0,
                degree: 2,
            },
            4,
        ),
    ]
}

#[test]
fn extending_training_points_reproduces_embedding_for_every_kernel_centring_and_solver() {
    let x = swiss_roll(300, 0.05, false, 1).points;
    let mut checked = 0;
    for (kernel, d) in kernels() {
        for centering in [true, false] {
            for solver in [Solver::Dense, Solver::Lanczos, Solver::LowRank] {
                let fit = KernelPca {
                    n_components: d,
                    kernel,
                    centering,
                    solver,
                    ..Default::default()
                }
                .fit(x.as_ref());
                let model = match fit {
                    Ok(m) => m,
                    Err(Error::InvalidParameter { name: "solver", .. })
                        if solver == Solver::LowRank && !kernel.is_positive_definite(3) =>
                    {
                        continue
                    }
                    // The uncentred multiquadric matrix has a single positive eigenvalue.
                    Err(Error::NotEnoughPositiveEigenvalues { .. })
                        if matches!(kernel, Kernel::Multiquadric { .. }) && !centering =>
                    {
                        continue
                    }
                    Err(e) => panic!("{} centering={centering} {solver:?}: {e}", kernel.name()),
                };
                let ext = model.extend(x.as_ref()).unwrap();
                let err = max_rel_diff(ext.coordinates.as_ref(), model.embedding());
                assert!(
                    err < 1e-10,
                    "{} centering={centering} {solver:?} ({:?}): {err:e}",
                    kernel.name(),
                    model.solver_used()
                );
                let kmax = ext.residual.iter().copied().fold(0.0, f64::max);
                if kernel.is_positive_definite(3) {
                    assert!(
                        kmax <= 1e-10,
                        "{}: residual on training points {kmax:e}",
                        kernel.name()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 38, "only {checked} combinations ran");
}

#[test]
fn low_rank_solver_equals_dense_solver() {
    let x = swiss_roll(400, 0.05, false, 3).points;
    for kernel in [
        Kernel::gaussian(40.0),
        Kernel::Laplacian {
            epsilon: Epsilon::Value(10.0),
        },
        Kernel::Linear,
    ] {
        for centering in [true, false] {
            let d = 3;
            let fit = |solver| {
                KernelPca {
                    n_components: d,
                    kernel,
                    centering,
                    solver,
                    ..Default::default()
                }
                .fit(x.as_ref())
                .unwrap()
            };
            let (lr, dense) = (fit(Solver::LowRank), fit(Solver::Dense));
            assert_eq!(lr.solver_used().0, Solver::LowRank);
            for (a, b) in lr.eigenvalues().iter().zip(dense.eigenvalues()) {
                assert!((a - b).abs() <= 1e-10 * b, "{}: {a} vs {b}", kernel.name());
            }
            let err = max_rel_diff(lr.embedding(), dense.embedding());
            assert!(
                err < 1e-9,
                "{} centering={centering}: {err:e}",
                kernel.name()
            );
            let z = swiss_roll(50, 0.05, false, 4).points;
            let (ea, eb) = (
                lr.extend(z.as_ref()).unwrap(),
                dense.extend(z.as_ref()).unwrap(),
            );
            assert!(max_rel_diff(ea.coordinates.as_ref(), eb.coordinates.as_ref()) < 1e-9);
            // The solvers factor K by different algorithms (one column a pivot, or in
            // panels of 128): k₀ agrees to the rounding of ||L⁻¹ k_S(z)||², about
            // 1e-16 · cond(K[S, S]) (docs/maths.md §4). Gaussian ε = 40 keeps all 400
            // pivots and K[S, S] is ill-conditioned: 1.9e-10 measured.
            for (a, b) in ea.residual.iter().zip(&eb.residual) {
                assert!(
                    (a - b).abs() < 1e-8,
                    "{} residual: {a} vs {b}",
                    kernel.name()
                );
            }
        }
    }
}

#[test]
fn uncentred_multiquadric_single_positive_component_is_exact() {
    let x = swiss_roll(200, 0.05, false, 2).points;
    let k = Kernel::Multiquadric {
        epsilon: Epsilon::Median,
        beta: 0.5,
    };
    let m = KernelPca {
        n_components: 1,
        kernel: k,
        centering: false,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let ext = m.extend(x.as_ref()).unwrap();
    assert!(max_rel_diff(ext.coordinates.as_ref(), m.embedding()) < 1e-10);
    let too_many = KernelPca {
        n_components: 2,
        kernel: k,
        centering: false,
        ..Default::default()
    }
    .fit(x.as_ref());
    assert!(
        matches!(
            too_many,
            Err(Error::NotEnoughPositiveEigenvalues {
                requested: 2,
                available: 1,
                ..
            })
        ),
        "{too_many:?}"
    );
}

#[test]
fn linear_kernel_pca_equals_pca() {
    let x = s_curve(250, 0.1, 3).points;
    let z = s_curve(40, 0.3, 4).points;
    let pca = Pca {
        n_components: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    for solver in [Solver::Dense, Solver::Lanczos] {
        let kp = KernelPca {
            n_components: 3,
            kernel: Kernel::Linear,
            solver,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        assert!(max_rel_diff(kp.embedding(), pca.embedding()) < 1e-10);
        for j in 0..3 {
            assert!(
                (kp.eigenvalues()[j] - pca.eigenvalues()[j]).abs() < 1e-10 * pca.eigenvalues()[0]
            );
        }
        let (a, b) = (
            kp.extend(z.as_ref()).unwrap(),
            pca.extend(z.as_ref()).unwrap(),
        );
        assert!(max_rel_diff(a.coordinates.as_ref(), b.coordinates.as_ref()) < 1e-10);
        for i in 0..40 {
            assert!((a.residual[i] - b.residual[i]).abs() < 1e-9 * (1.0 + b.residual[i]));
            assert!(
                (a.reconstruction_error[i] - b.reconstruction_error[i]).abs()
                    < 1e-9 * (1.0 + b.reconstruction_error[i])
            );
        }
    }
}

#[test]
fn pca_residual_is_zero_in_a_full_span_and_measures_distance_to_a_plane() {
    // Points in the plane z = 0 of R³: the residual of a new point is its squared height.
    let mut r = Rng::new(5);
    let x = Mat::from_fn(50, 3, |_, j| if j == 2 { 0.0 } else { r.normal() });
    let m = Pca {
        n_components: 2,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let z = Mat::from_fn(3, 3, |i, j| if j == 2 { i as f64 } else { 0.5 });
    let e = m.extend(z.as_ref()).unwrap();
    for i in 0..3 {
        assert!((e.residual[i] - (i * i) as f64).abs() < 1e-10);
        assert!(e.reconstruction_error[i] >= e.residual[i] - 1e-12);
    }
}

/// `solver = auto` factors a sample of 5N/16 points first: when the sample alone needs
/// more than N/4 pivots, the low-rank attempt on all N would fail and is skipped, with
/// the same fit as the dense solver's; data of low rank still take the low-rank route.
#[test]
fn auto_skips_the_low_rank_attempt_a_sample_shows_would_fail() {
    let x = Rng::new(23).normal_mat(400, 30);
    let fit = |solver| {
        KernelPca {
            n_components: 3,
            kernel: Kernel::Gaussian {
                epsilon: Epsilon::Value(30.0),
            },
            solver,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
    };
    let (auto, dense) = (fit(Solver::Auto), fit(Solver::Dense));
    assert_eq!(
        auto.solver_used(),
        (
            Solver::Dense,
            Some("numerical rank of a sample of 125 points above 100 (N/4): used the N×N solver")
        )
    );
    assert_eq!(auto.residual_rank(), 400);
    assert!(max_rel_diff(auto.embedding(), dense.embedding()) < 1e-12);
    // Points on a segment: K of numerical rank far below N/4.
    let line = Mat::from_fn(400, 1, |i, _| i as f64 / 400.0);
    let low = KernelPca {
        n_components: 3,
        ..Default::default()
    }
    .fit(line.as_ref())
    .unwrap();
    assert_eq!(low.solver_used(), (Solver::LowRank, None));
    assert!(low.residual_rank() < 100, "{}", low.residual_rank());
}

#[test]
fn lanczos_and_dense_eigenvalues_agree_n2000() {
    let x = swiss_roll(2000, 0.05, false, 6).points;
    let base = KernelPca {
        n_components: 10,
        ..Default::default()
    };
    let d = KernelPca {
        solver: Solver::Dense,
        ..base.clone()
    }
    .fit(x.as_ref())
    .unwrap();
    let l = KernelPca {
        solver: Solver::Lanczos,
        ..base
    }
    .fit(x.as_ref())
    .unwrap();
    assert_eq!(l.solver_used().0, Solver::Lanczos, "{:?}", l.solver_used());
    for j in 0..10 {
        let (a, b) = (l.eigenvalues()[j], d.eigenvalues()[j]);
        assert!((a - b).abs() <= 1e-9 * b, "eigenvalue {j}: {a} vs {b}");
    }
    assert!(max_rel_diff(l.embedding(), d.embedding()) < 1e-7);
}

#[test]
fn residual_far_point_gaussian_is_one_and_bounded_by_reconstruction_error() {
    let x = swiss_roll(400, 0.05, false, 7).points;
    let m = KernelPca {
        n_components: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let far = Mat::from_fn(1, 3, |_, _| 1e4);
    let e = m.extend(far.as_ref()).unwrap();
    assert!((e.residual[0] - 1.0).abs() < 1e-12, "{}", e.residual[0]);
    let mut r = Rng::new(8);
    let z = Mat::from_fn(500, 3, |_, _| 15.0 * (2.0 * r.uniform() - 1.0));
    for kernel in [
        Kernel::default(),
        Kernel::Laplacian {
            epsilon: Epsilon::Median,
        },
    ] {
        for centering in [true, false] {
            let m = KernelPca {
                n_components: 3,
                kernel,
                centering,
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap();
            let e = m.extend(z.as_ref()).unwrap();
            let mut positive = 0;
            for i in 0..500 {
                assert!(e.residual[i] >= 0.0);
                assert!(
                    e.residual[i] <= e.reconstruction_error[i] + 1e-10,
                    "row {i}: {} > {}",
                    e.residual[i],
                    e.reconstruction_error[i]
                );
                positive += (e.residual[i] > 1e-6) as usize;
            }
            assert!(
                positive > 100,
                "random points should mostly stick out ({positive})"
            );
        }
    }
}

#[test]
fn residual_equals_schur_complement_for_full_rank_kernel() {
    // For a well-conditioned K, k₀(z,z) = k(z,z) − k_zᵀ K⁻¹ k_z computed directly.
    let mut r = Rng::new(9);
    let x = Mat::from_fn(40, 2, |_, _| 3.0 * r.normal());
    let kernel = Kernel::gaussian(0.5);
    let m = KernelPca {
        n_components: 2,
        kernel,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let z = Mat::from_fn(10, 2, |_, _| 3.0 * r.normal());
    let e = m.extend(z.as_ref()).unwrap();
    let k = Mat::from_fn(40, 40, |i, j| {
        let d2 = (x[(i, 0)] - x[(j, 0)]).powi(2) + (x[(i, 1)] - x[(j, 1)]).powi(2);
        (-d2 / 0.5).exp()
    });
    let chol = k.llt(oose::faer::Side::Lower).unwrap();
    for p in 0..10 {
        let kz = Mat::from_fn(40, 1, |i, _| {
            let d2 = (x[(i, 0)] - z[(p, 0)]).powi(2) + (x[(i, 1)] - z[(p, 1)]).powi(2);
            (-d2 / 0.5).exp()
        });
        let sol = oose::faer::linalg::solvers::Solve::solve(&chol, &kz);
        let quad: f64 = (0..40).map(|i| kz[(i, 0)] * sol[(i, 0)]).sum();
        assert!(
            (e.residual[p] - (1.0 - quad)).abs() < 1e-10,
            "{} vs {}",
            e.residual[p],
            1.0 - quad
        );
    }
}

#[test]
fn extension_is_samplewise_and_chunking_does_not_matter() {
    let x = swiss_roll(300, 0.05, false, 10).points;
    let z = swiss_roll(20000, 0.5, false, 11).points;
    let m = KernelPca {
        n_components: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let all = m.extend(z.as_ref()).unwrap();
    let some = m.extend(z.as_ref().subrows(12345, 7)).unwrap();
    for i in 0..7 {
        for j in 0..3 {
            assert_eq!(all.coordinates[(12345 + i, j)], some.coordinates[(i, j)]);
        }
        assert_eq!(all.residual[12345 + i], some.residual[i]);
    }
}

#[test]
fn precomputed_kernel_matches_gaussian() {
    let x = swiss_roll(200, 0.05, false, 12).points;
    let z = swiss_roll(30, 0.3, false, 13).points;
    let kernel = Kernel::gaussian(40.0);
    let g = KernelPca {
        n_components: 3,
        kernel,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let k = kernel.gram(x.as_ref(), oose::faer::Par::Seq);
    let p = KernelPca {
        n_components: 3,
        kernel: Kernel::Precomputed,
        ..Default::default()
    }
    .fit(k.as_ref())
    .unwrap();
    assert!(max_rel_diff(p.embedding(), g.embedding()) < 1e-12);
    let xs = oose::kernel::distance::row_sq_norms(x.as_ref());
    let zs = oose::kernel::distance::row_sq_norms(z.as_ref());
    let kz = kernel.block(z.as_ref(), &zs, x.as_ref(), &xs, oose::faer::Par::Seq);
    let ones = vec![1.0; 30];
    let (a, b) = (
        p.extend_kernel_rows(kz.as_ref(), Some(&ones)).unwrap(),
        g.extend(z.as_ref()).unwrap(),
    );
    assert!(max_rel_diff(a.coordinates.as_ref(), b.coordinates.as_ref()) < 1e-12);
    for i in 0..30 {
        assert!((a.residual[i] - b.residual[i]).abs() < 1e-12);
    }
    assert!(p.extend(kz.as_ref()).unwrap().residual[0].is_nan());
    // Training rows of a precomputed model extend exactly too.
    let back = p.extend(k.as_ref()).unwrap();
    assert!(max_rel_diff(back.coordinates.as_ref(), p.embedding()) < 1e-10);
}

/// A precomputed kernel has no restricted reconstruction: the up-front option check and
/// the extension itself refuse it with the same typed error, naming `strategy`.
#[test]
fn precomputed_kernel_refuses_restricted_reconstruction_in_one_place() {
    use oose::model::{ExtendOptions, Fitted};
    let x = oose::datasets::s_curve(40, 0.0, 3).points;
    let k = oose::faer::Mat::from_fn(40, 40, |i, j| {
        let d2: f64 = (0..3).map(|c| (x[(i, c)] - x[(j, c)]).powi(2)).sum();
        (-d2).exp()
    });
    let m = KernelPca {
        kernel: Kernel::Precomputed,
        ..Default::default()
    }
    .fit(k.as_ref())
    .unwrap();
    let opts = ExtendOptions {
        strategy: Some(oose::extend::Strategy::Restricted),
        ..Default::default()
    };
    for e in [
        m.check_options(&opts).unwrap_err(),
        m.extend_with(k.as_ref().subrows(0, 2), oose::extend::Strategy::Restricted)
            .unwrap_err(),
    ] {
        assert!(
            matches!(
                e,
                oose::Error::InvalidParameter {
                    name: "strategy",
                    ..
                }
            ),
            "{e:?}"
        );
    }
}

/// The low-rank route's look-ahead asks for kernel columns in blocks and subtracts the
/// factor by parallel matrix products: the factor, hence every residual, has the same
/// bits on one thread and on two (wide points, so that the look-ahead reaches its
/// parallel sizes). The eigenvalues are not compared: faer's dense eigensolver blocks
/// by the thread count (docs/design.md promises thread-independent bits for t-SNE and
/// UMAP only).
#[test]
fn low_rank_factor_has_the_same_bits_on_one_and_two_threads() {
    let x = Rng::new(21).normal_mat(1500, 12);
    let fit = |t: usize| {
        common::on_threads(t, || {
            KernelPca {
                n_components: 3,
                kernel: Kernel::gaussian(400.0),
                solver: Solver::LowRank,
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap()
        })
    };
    let (one, two) = (fit(1), fit(2));
    assert!(one.residual_rank() > 200, "rank {}", one.residual_rank());
    let z = Rng::new(22).normal_mat(20, 12);
    let (a, b) = (
        one.extend(z.as_ref()).unwrap(),
        two.extend(z.as_ref()).unwrap(),
    );
    assert_eq!(a.residual, b.residual);
}
