//! Kernel PCA's certified low-rank extension (maths §20): through the fit's pivots, every
//! point within its bound of the exact extension, the bound small where the kernel has
//! low numerical rank, rows independent of the batch, and refusals by name.

use oose::extend::Extension;
use oose::faer::{Mat, MatRef};
use oose::kernel::{Epsilon, Kernel};
use oose::methods::kernel_pca::{FittedKernelPca, KernelPca};
use oose::methods::OutOfSample;
use oose::prelude::Error;

fn bound(e: &oose::extend::Extension) -> &[f64] {
    &e.extra
        .iter()
        .find(|c| c.name == "lowrank_bound")
        .unwrap()
        .values
}

/// Largest ratio deviation / bound over the rows (≤ 1: every bound holds), the largest
/// bound relative to max |y|, and the smallest ratio bound / deviation among rows whose
/// deviation is above rounding (how loose the bound is), of the low-rank extension
/// `fast` against the `exact` one.
fn compare(exact: &Extension, fast: &Extension) -> (f64, f64, f64) {
    let b = bound(fast);
    let ymax = exact.coordinates.norm_max();
    let (mut worst, mut loosest) = (0.0f64, f64::INFINITY);
    for (i, &bi) in b.iter().enumerate() {
        let dev = (0..exact.coordinates.ncols())
            .map(|j| (exact.coordinates[(i, j)] - fast.coordinates[(i, j)]).powi(2))
            .sum::<f64>()
            .sqrt();
        worst = worst.max(dev / bi);
        if dev > 1e-13 * ymax {
            loosest = loosest.min(bi / dev);
        }
    }
    let top = b.iter().copied().fold(0.0, f64::max) / ymax;
    (worst, top, loosest)
}

/// [`compare`] for kernel PCA at the rows of `z`, checking on the way that P_P(z)² is
/// the exact extension's residual up to its rounding allowance.
fn check(m: &FittedKernelPca, z: MatRef<'_, f64>) -> (f64, f64, f64) {
    let exact = m.extend(z).unwrap();
    let fast = m.extend_low_rank(z).unwrap();
    for i in 0..z.nrows() {
        assert!(fast.residual[i] >= exact.residual[i] - 1e-12, "row {i}");
    }
    compare(&exact, &fast)
}

fn roll(n: usize, seed: u64) -> Mat<f64> {
    oose::datasets::swiss_roll(n, 0.05, false, seed).points
}

#[test]
fn every_point_lies_within_its_bound_of_the_exact_extension() {
    let x = roll(600, 0);
    let z = roll(300, 1);
    for (label, kernel, centering, d) in [
        ("gaussian auto, centred", Kernel::default(), true, 2),
        ("gaussian auto, uncentred", Kernel::default(), false, 5),
        (
            "gaussian ε = 4",
            Kernel::Gaussian {
                epsilon: Epsilon::Value(4.0),
            },
            true,
            10,
        ),
        (
            "laplacian",
            Kernel::Laplacian {
                epsilon: Epsilon::Value(20.0),
            },
            true,
            3,
        ),
    ] {
        let m = KernelPca {
            n_components: d,
            kernel,
            centering,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        let (worst, top, loosest) = check(&m, z.as_ref());
        println!(
            "{label}: rank {} of 600, deviation/bound ≤ {worst:.2e}, max bound {top:.1e} × max|y|, \
             bound ≥ {loosest:.1e} × deviation",
            m.residual_rank()
        );
        assert!(
            worst <= 1.0,
            "{label}: a deviation exceeds its bound ({worst})"
        );
        // Training points too: their exact extension is the embedding.
        let (worst, _, _) = check(&m, x.as_ref().subrows(0, 50));
        assert!(worst <= 1.0, "{label}: training rows ({worst})");
    }
}

#[test]
fn with_low_numerical_rank_the_bound_is_tiny_and_the_pivots_few() {
    // A wide gaussian: numerical rank far below N.
    let x = roll(800, 2);
    let m = KernelPca {
        n_components: 10,
        kernel: Kernel::Gaussian {
            epsilon: Epsilon::Value(2000.0),
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert!(m.residual_rank() < 150, "rank {}", m.residual_rank());
    let (worst, top, _) = check(&m, roll(400, 3).as_ref());
    assert!(worst <= 1.0, "{worst}");
    assert!(top <= 1e-8, "largest bound {top:e} × max|y|");
}

#[test]
fn rows_are_extended_independently_of_the_batch() {
    let x = roll(300, 4);
    let m = KernelPca {
        n_components: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let z = roll(500, 5);
    let all = m.extend_low_rank(z.as_ref()).unwrap();
    for i in [0, 17, 499] {
        let one = m.extend_low_rank(z.as_ref().subrows(i, 1)).unwrap();
        for j in 0..3 {
            assert_eq!(all.coordinates[(i, j)], one.coordinates[(0, j)]);
        }
        assert_eq!(bound(&all)[i], bound(&one)[0]);
        assert_eq!(all.residual[i], one.residual[0]);
    }
}

#[test]
fn refusals_name_the_culprit() {
    let x = roll(100, 6);
    let fit = |kernel| {
        KernelPca {
            n_components: 2,
            kernel,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
    };
    let m = fit(Kernel::Polynomial {
        gamma: 1.0,
        coef0: -1.0,
        degree: 3,
    });
    match m.extend_low_rank(x.as_ref()).unwrap_err() {
        Error::InvalidParameter { name, .. } => assert_eq!(name, "extension"),
        other => panic!("{other:?}"),
    }
    let m = fit(Kernel::default());
    let wide = Mat::<f64>::zeros(2, 4);
    assert!(m.extend_low_rank(wide.as_ref()).is_err());
    let nan = Mat::from_fn(1, 3, |_, _| f64::NAN);
    assert!(m.extend_low_rank(nan.as_ref()).is_err());
}

/// Kernel interpolation through the same pivots (maths §20): every row of f^P within its
/// bound of f_X, the bound and the pivots reported, `auto` exact where the bound is too
/// large, rows independent of the batch; a tail (conditionally positive definite
/// kernel) refused by name.
#[test]
fn kernel_interpolation_through_the_pivots_is_within_its_bound() {
    use oose::extend::ExtensionChoice;
    use oose::methods::interpolate::Interpolator;
    use oose::model::{ExtendOptions, Input, Model};
    let x = roll(500, 0);
    let f = Mat::from_fn(500, 2, |i, j| (x[(i, j)] * 0.3).sin() + x[(i, 2)] * 0.1);
    let z = roll(200, 1);
    for (tol, eps) in [(1e-8, 200.0), (1e-6, 100.0), (1e-10, 50.0), (1e-12, 5.0)] {
        let m = Interpolator {
            kernel: Kernel::Gaussian {
                epsilon: Epsilon::Value(eps),
            },
            rank_tolerance: tol,
            regularization: 1e-8,
            ..Default::default()
        }
        .fit(x.as_ref(), f.as_ref())
        .unwrap();
        let exact = m.extend(z.as_ref()).unwrap();
        let fast = m.extend_low_rank(z.as_ref()).unwrap();
        let (worst, top, loosest) = compare(&exact, &fast);
        let power = |e: &oose::extend::Extension| {
            e.extra
                .iter()
                .find(|c| c.name == "power_function")
                .unwrap()
                .values
                .clone()
        };
        let (pe, pf) = (power(&exact), power(&fast));
        eprintln!(
            "tol {tol:e}, eps {eps}: rank {:?} of 500, largest bound {top:.2e} × max|f|, \
             deviation/bound ≤ {worst:.3}, bound/deviation ≥ {loosest:.1}",
            m.residual_rank()
        );
        assert!(worst <= 1.0, "tol {tol}: a bound fails ({worst})");
        // P_P(z)² as the exact extension's residual, up to the rounding allowance.
        for (i, (a, b)) in pe.iter().zip(&pf).enumerate() {
            assert!((a * a - b * b).abs() <= 1e-12, "row {i}: power {a} vs {b}");
            assert!(fast.residual[i] >= exact.residual[i] - 1e-12, "row {i}");
        }
    }
    // Through the model: auto keeps the rows whose bound is below the tolerance.
    let mut values = oose::model::params::Values::new();
    values = values
        .with("epsilon", 20.0)
        .with("rank_tolerance", 1e-6)
        .with("regularization", 1e-8);
    let model = Model::fit(
        "interpolate",
        &values,
        Input::Values {
            points: x.as_ref(),
            values: f.as_ref(),
        },
    )
    .unwrap();
    let run = |choice| {
        let opts = ExtendOptions {
            extension: Some(choice),
            ..Default::default()
        };
        model.extend_options(z.as_ref(), &opts).unwrap()
    };
    let low = run(ExtensionChoice::LowRank);
    let exact = run(ExtensionChoice::Exact);
    let fmax = f.norm_max();
    let b = bound(&low).to_vec();
    let cut = b.iter().copied().fold(0.0, f64::max) / fmax / 2.0;
    let auto = run(ExtensionChoice::Auto { tolerance: cut });
    let (mut kept, mut swapped) = (0, 0);
    for (i, &bi) in b.iter().enumerate() {
        let src = if bi <= cut * fmax { &low } else { &exact };
        kept += usize::from(bi <= cut * fmax);
        swapped += usize::from(bi > cut * fmax);
        for j in 0..2 {
            assert_eq!(auto.coordinates[(i, j)], src.coordinates[(i, j)], "row {i}");
        }
    }
    assert!(kept > 0 && swapped > 0, "{kept} kept, {swapped} exact");
    // Sample-wise: one row alone gives the same bits.
    let one = model
        .extend_options(
            z.as_ref().subrows(7, 1),
            &ExtendOptions {
                extension: Some(ExtensionChoice::LowRank),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(one.coordinates.row(0), low.coordinates.row(7));
    // A thin-plate spline has a tail and no power function: refused by name.
    let tps = Model::fit(
        "interpolate",
        &oose::model::params::Values::new().with("kernel", "thin_plate"),
        Input::Values {
            points: x.as_ref(),
            values: f.as_ref(),
        },
    )
    .unwrap();
    let e = tps
        .extend_options(
            z.as_ref(),
            &ExtendOptions {
                extension: Some(ExtensionChoice::LowRank),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("extension"), "{e}");
}

/// Dense diffusion maps through the gaussian kernel's pivots (maths §20): every output
/// flavour and α, each row within its bound of the exact extension; rows independent
/// of the batch; sparse kernels and the union density refused by name.
#[test]
fn dense_diffusion_maps_through_the_pivots_are_within_their_bound() {
    use oose::extend::ExtensionChoice;
    use oose::methods::diffusion_maps::{Density, DiffusionMaps, Output, Sparsity};
    use oose::model::ExtendOptions;
    let x = roll(500, 0);
    let z = roll(200, 1);
    for output in [
        Output::Diffusion,
        Output::Standard,
        Output::Weighted,
        Output::Normalized,
    ] {
        for alpha in [0.0, 0.5, 1.0] {
            let mut p = DiffusionMaps::default()
                .sparsity(Sparsity::Dense)
                .epsilon(Epsilon::Value(40.0))
                .alpha(alpha);
            p.output = output;
            p.rank_tolerance = 1e-8;
            let m = p.fit(x.as_ref()).unwrap();
            let exact = m.extend(z.as_ref()).unwrap();
            let fast = m.extend_low_rank(z.as_ref()).unwrap();
            let (worst, top, loosest) = compare(&exact, &fast);
            // Every row certified on this data (none extended exactly with bound 0).
            assert!(
                bound(&fast).iter().all(|b| b.is_finite() && *b > 0.0),
                "{output:?} α {alpha}"
            );
            eprintln!(
                "{output:?}, α = {alpha}: largest bound {top:.1e} × max|y|, \
                 deviation/bound ≤ {worst:.3}, bound/deviation ≥ {loosest:.1}"
            );
            assert!(
                worst <= 1.0,
                "{output:?} α {alpha}: a bound fails ({worst})"
            );
            assert!(
                top < 1e-3,
                "{output:?} α {alpha}: bounds up to {top} × max|y|"
            );
            // One row alone: the same bits.
            let one = m.extend_low_rank(z.as_ref().subrows(9, 1)).unwrap();
            assert_eq!(one.coordinates.row(0), fast.coordinates.row(9));
        }
    }
    // Refusals, by name.
    let knn = DiffusionMaps::default().fit(x.as_ref()).unwrap();
    let e = knn.extend_low_rank(z.as_ref()).unwrap_err();
    assert!(e.to_string().contains("dense"), "{e}");
    let dense = DiffusionMaps::default()
        .sparsity(Sparsity::Dense)
        .fit(x.as_ref())
        .unwrap();
    let model: oose::model::Model = dense.into();
    let e = model
        .extend_options(
            z.as_ref(),
            &ExtendOptions {
                extension: Some(ExtensionChoice::LowRank),
                density: Some(Density::Union),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("union"), "{e}");
}
