//! Kernel interpolation and function extension (maths §8) with the power function (§4).

use faer::Mat;
use oose::kernel::{Epsilon, Kernel};
use oose::methods::interpolate::Interpolator;
use oose::methods::kernel_pca::KernelPca;
use oose::methods::OutOfSample;
use oose::model::Model;
use oose::rng::Rng;

fn uniform(n: usize, dim: usize, lo: f64, hi: f64, seed: u64) -> Mat<f64> {
    let mut r = Rng::new(seed);
    Mat::from_fn(n, dim, |_, _| lo + (hi - lo) * r.uniform())
}

fn pd_kernels() -> [Kernel; 3] {
    [
        Kernel::gaussian(0.5),
        Kernel::InverseMultiquadric {
            epsilon: Epsilon::Value(0.3),
            beta: -0.5,
        },
        Kernel::Wendland {
            epsilon: Epsilon::Value(1.2),
        },
    ]
}

#[test]
fn interpolation_reproduces_the_data() {
    let x = uniform(150, 2, -1.0, 1.0, 1);
    let f = Mat::from_fn(150, 2, |i, j| {
        (3.0 * x[(i, 0)]).sin() + j as f64 * x[(i, 1)].powi(2)
    });
    // Bandwidths at the scale of the point spacing (≈ 0.16), where K is well conditioned.
    let well_conditioned = [
        Kernel::gaussian(0.02),
        Kernel::InverseMultiquadric {
            epsilon: Epsilon::Value(0.01),
            beta: -0.5,
        },
        Kernel::Wendland {
            epsilon: Epsilon::Value(0.3),
        },
    ];
    for kernel in well_conditioned {
        let m = Interpolator {
            kernel,
            ..Default::default()
        }
        .fit(x.as_ref(), f.as_ref())
        .unwrap();
        let e = m.extend(x.as_ref()).unwrap();
        let scale = 1.0 + f.norm_max();
        let err = (&e.coordinates - &f).norm_max();
        assert!(err < 1e-10 * scale, "{kernel:?}: {err:e}");
        assert!(e.residual.iter().all(|&r| r < 1e-10), "{kernel:?}");
        // ||f_X||² = tr(Fᵀ A) for interpolation.
        let a = m.coefficients();
        for c in 0..2 {
            let tr: f64 = (0..150).map(|i| f[(i, c)] * a[(i, c)]).sum();
            assert!((m.norms_squared()[c] - tr).abs() <= 1e-8 * tr.abs());
        }
    }
}

/// f = Σ_j c_j k(·, y_j) lies in the RKHS with ||f||² = cᵀ K_Y c; the interpolant's
/// error is bounded by P_X(z)·||f||_H (maths §8, [Notes] Thm 1.27).
#[test]
fn power_function_bounds_the_error() {
    let x = uniform(120, 2, -1.0, 1.0, 2);
    let y = uniform(7, 2, -1.0, 1.0, 3);
    let mut r = Rng::new(4);
    let c: Vec<f64> = (0..7).map(|_| r.normal()).collect();
    let z = uniform(1000, 2, -1.2, 1.2, 5);
    for kernel in pd_kernels() {
        let ky = kernel.gram(y.as_ref(), faer::Par::Seq);
        let norm2: f64 = (0..7)
            .map(|i| (0..7).map(|j| c[i] * ky[(i, j)] * c[j]).sum::<f64>())
            .sum();
        let eval = |p: &Mat<f64>| -> Vec<f64> {
            let yq = oose::kernel::distance::row_sq_norms(y.as_ref());
            let pq = oose::kernel::distance::row_sq_norms(p.as_ref());
            let kb = kernel.block(p.as_ref(), &pq, y.as_ref(), &yq, faer::Par::Seq);
            (0..p.nrows())
                .map(|i| (0..7).map(|j| kb[(i, j)] * c[j]).sum())
                .collect()
        };
        let fx = eval(&x);
        let fz = eval(&z);
        let f = Mat::from_fn(120, 1, |i, _| fx[i]);
        let m = Interpolator {
            kernel,
            ..Default::default()
        }
        .fit(x.as_ref(), f.as_ref())
        .unwrap();
        assert!(
            m.norms_squared()[0] <= norm2 * (1.0 + 1e-8),
            "||f_X|| ≤ ||f||"
        );
        let e = m.extend(z.as_ref()).unwrap();
        let p = &e
            .extra
            .iter()
            .find(|c| c.name == "power_function")
            .unwrap()
            .values;
        let mut worst = 0.0f64;
        for i in 0..1000 {
            let err = (fz[i] - e.coordinates[(i, 0)]).abs();
            let bound = p[i] * norm2.sqrt();
            // Round-off slack: the residual is exact only to ~1e-12 (rank tolerance).
            assert!(
                err <= bound + 1e-6 * norm2.sqrt(),
                "{kernel:?} z{i}: {err:e} > {bound:e}"
            );
            worst = worst.max(err / (bound + 1e-300));
        }
        assert!(worst <= 1.0 + 1e-6, "{kernel:?}: worst ratio {worst}");
    }
}

/// The residuals P_X(z)² of the interpolant and of uncentred kernel PCA (both fitted on
/// `x` with `kernel`) at the rows of `z`.
fn both_residuals(kernel: Kernel, x: &Mat<f64>, z: &Mat<f64>) -> (Vec<f64>, Vec<f64>) {
    let f = Mat::from_fn(x.nrows(), 1, |i, _| x[(i, 0)]);
    let it = Interpolator {
        kernel,
        ..Default::default()
    }
    .fit(x.as_ref(), f.as_ref())
    .unwrap();
    let kp = KernelPca {
        kernel,
        n_components: 2,
        centering: false,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    (
        it.extend(z.as_ref()).unwrap().residual,
        kp.extend(z.as_ref()).unwrap().residual,
    )
}

#[test]
fn power_function_is_the_kernel_pca_residual() {
    let x = uniform(100, 3, -1.0, 1.0, 6);
    let z = uniform(40, 3, -1.5, 1.5, 7);
    for kernel in pd_kernels() {
        let (a, b) = both_residuals(kernel, &x, &z);
        for (u, v) in a.iter().zip(&b) {
            assert!((u - v).abs() < 1e-10, "{kernel:?}: {u} vs {v}");
        }
    }
    // A kernel whose k(z, z) depends on z (cubic polynomial, 20-dimensional feature
    // space in R³) with fewer points than that rank: P_X(z)² > 0, as kernel PCA's.
    let kernel = Kernel::Polynomial {
        gamma: 1.0,
        coef0: 1.0,
        degree: 3,
    };
    let (a, b) = both_residuals(kernel, &uniform(12, 3, -1.0, 1.0, 8), &z);
    for (u, v) in a.iter().zip(&b) {
        assert!(*v > 1e-3 && (u - v).abs() <= 1e-9 * v, "{u} vs {v}");
    }
}

#[test]
fn thin_plate_spline_reproduces_linear_functions_and_data() {
    let x = uniform(80, 2, 0.0, 1.0, 8);
    let lin = Mat::from_fn(80, 1, |i, _| 2.0 - x[(i, 0)] + 3.0 * x[(i, 1)]);
    let tps = Interpolator {
        kernel: Kernel::Polyharmonic { beta: 2 },
        ..Default::default()
    };
    let m = tps.fit(x.as_ref(), lin.as_ref()).unwrap();
    assert_eq!(m.tail_degree(), Some(1));
    let z = uniform(50, 2, 0.0, 1.0, 9);
    let e = m.extend(z.as_ref()).unwrap();
    for i in 0..50 {
        let want = 2.0 - z[(i, 0)] + 3.0 * z[(i, 1)];
        assert!((e.coordinates[(i, 0)] - want).abs() < 1e-9);
    }
    // The kernel part vanishes for a linear function: A = 0, ||f||_H = 0.
    assert!(m.norms_squared()[0].abs() < 1e-12);
    let f = Mat::from_fn(80, 1, |i, _| (6.0 * x[(i, 0)]).cos() * x[(i, 1)]);
    let m = tps.fit(x.as_ref(), f.as_ref()).unwrap();
    let e = m.extend(x.as_ref()).unwrap();
    assert!((&e.coordinates - &f).norm_max() < 1e-9);
    assert!(m.norms_squared()[0] > 0.0, "TPS semi-norm is non-negative");
    assert!(e.residual.iter().all(|r| r.is_nan()));
    // Multiquadric (order 1: constant tail) and cubic r³ (order 2: linear tail).
    for (k, deg) in [
        (
            Kernel::Multiquadric {
                epsilon: Epsilon::Value(0.5),
                beta: 0.5,
            },
            0,
        ),
        (Kernel::Polyharmonic { beta: 3 }, 1),
    ] {
        let m = Interpolator {
            kernel: k,
            ..Default::default()
        }
        .fit(x.as_ref(), f.as_ref())
        .unwrap();
        assert_eq!(m.tail_degree(), Some(deg));
        let e = m.extend(x.as_ref()).unwrap();
        assert!((&e.coordinates - &f).norm_max() < 1e-8, "{k:?}");
        assert!(m.norms_squared()[0] > 0.0, "{k:?}: semi-norm sign");
    }
}

/// datafold's geometric-harmonics test case: f(x) = sin ||x|| on a 23×23 grid over
/// [−4, 4]², predicted on a 100×100 grid; datafold asserts a max error < 7.5e-2.
#[test]
fn geometric_harmonics_on_datafolds_case() {
    let grid = |k: usize| {
        Mat::from_fn(k * k, 2, |i, j| {
            let t = if j == 0 { i % k } else { i / k };
            -4.0 + 8.0 * t as f64 / (k - 1) as f64
        })
    };
    let x = grid(23);
    let z = grid(100);
    let f = Mat::from_fn(x.nrows(), 1, |i, _| x[(i, 0)].hypot(x[(i, 1)]).sin());
    let m = Interpolator {
        kernel: Kernel::gaussian(1.5),
        geometric_harmonics: Some(1e-8),
        ..Default::default()
    }
    .fit(x.as_ref(), f.as_ref())
    .unwrap();
    let e = m.extend(z.as_ref()).unwrap();
    let err = (0..z.nrows())
        .map(|i| (e.coordinates[(i, 0)] - z[(i, 0)].hypot(z[(i, 1)]).sin()).abs())
        .fold(0.0f64, f64::max);
    println!("geometric harmonics max error {err:e}");
    assert!(err < 7.5e-2, "{err}");
}

#[test]
fn bad_input_and_model_files() {
    let x = uniform(30, 2, 0.0, 1.0, 10);
    let f = Mat::from_fn(30, 1, |i, _| x[(i, 0)]);
    let base = Interpolator::default();
    assert!(base.fit(x.as_ref(), f.as_ref().subrows(0, 29)).is_err());
    assert!(Interpolator {
        regularization: -1.0,
        ..Default::default()
    }
    .fit(x.as_ref(), f.as_ref())
    .is_err());
    assert!(Interpolator {
        kernel: Kernel::Polyharmonic { beta: 2 },
        geometric_harmonics: Some(1e-6),
        ..Default::default()
    }
    .fit(x.as_ref(), f.as_ref())
    .is_err());
    assert!(KernelPca {
        kernel: Kernel::Polyharmonic { beta: 2 },
        ..Default::default()
    }
    .fit(x.as_ref())
    .is_err());
    let m: Model = base.fit(x.as_ref(), f.as_ref()).unwrap().into();
    let back = Model::from_bytes(&m.to_bytes()).unwrap();
    assert_eq!(back, m);
    // Regularisation: a smoother fit that no longer interpolates.
    let noisy = Mat::from_fn(30, 1, |i, _| x[(i, 0)] + 0.1 * ((i * 7) % 5) as f64);
    let r = Interpolator {
        kernel: Kernel::gaussian(0.3),
        regularization: 1e-1,
        ..Default::default()
    }
    .fit(x.as_ref(), noisy.as_ref())
    .unwrap();
    let e = r.extend(x.as_ref()).unwrap();
    assert!((&e.coordinates - &noisy).norm_max() > 1e-3);
}

#[test]
fn preimage_maps_embeddings_back_to_data_space() {
    use oose::methods::interpolate::preimage;
    use oose::methods::isomap::Isomap;
    let all = oose::datasets::swiss_roll(1100, 0.0, false, 11).points;
    let x = all.as_ref().subrows(0, 1000);
    let z = all.as_ref().subrows(1000, 100);
    let iso = Isomap {
        n_neighbors: 10,
        ..Default::default()
    }
    .fit(x)
    .unwrap();
    // The thin-plate spline: scale-free, the natural choice for a 2-D embedding (a
    // gaussian of fixed ε oscillates in the gaps of the embedded roll: rms 1.4 with
    // ε = 4 against 0.18 here).
    let back = preimage(
        &iso,
        x,
        &Interpolator {
            kernel: Kernel::Polyharmonic { beta: 2 },
            ..Default::default()
        },
    )
    .unwrap();
    // Exact on the training embedding.
    let e = back.extend(iso.embedding()).unwrap();
    assert!((&e.coordinates - x).norm_max() < 1e-6 * x.norm_max());
    // New points: embed, then map back; the roll is recovered to about 1 % (rms) of
    // its size.
    let ez = iso.extend(z).unwrap();
    let pz = back.extend(ez.coordinates.as_ref()).unwrap();
    let d = &pz.coordinates - z;
    let rms = (d.squared_norm_l2() / 300.0).sqrt() / x.norm_max();
    assert!(rms < 0.02, "relative rms pre-image error {rms}");
    assert!(d.norm_max() / x.norm_max() < 0.1);
    // Row counts must match.
    assert!(preimage(&iso, z, &Interpolator::default()).is_err());
}

#[test]
fn repeated_points_make_a_singular_system_named_by_its_rows() {
    let mut x = uniform(30, 2, -1.0, 1.0, 41);
    for j in 0..2 {
        x[(17, j)] = x[(4, j)];
    }
    let f = Mat::from_fn(30, 1, |i, _| i as f64);
    let tps = Interpolator {
        kernel: Kernel::Polyharmonic { beta: 2 },
        ..Default::default()
    };
    match tps.fit(x.as_ref(), f.as_ref()) {
        Err(oose::Error::Singular(msg)) => assert!(msg.contains("rows 4 and 17"), "{msg}"),
        other => panic!("expected a singular-system error, got {other:?}"),
    }
    // Regularised least squares fits the same data.
    let reg = Interpolator {
        regularization: 1e-6,
        ..tps
    };
    assert!(reg.fit(x.as_ref(), f.as_ref()).is_ok());
}
