//! Diffusion maps (maths §7); Laplacian eigenmaps, spectral clustering and the kNN
//! extension are in diffusion_graphs.rs.

use faer::Mat;
use oose::datasets;
use oose::linalg::eigen::Solver;
use oose::methods::diffusion_maps::{
    Density, DiffusionKernel, DiffusionMaps, Epsilon, OnIsolated, Output, Sparsity, Weights,
};
use oose::methods::OutOfSample;
use oose::model::{Fitted, Model};
use oose::Error;

mod common;
use common::{max_abs, max_diff};

fn sq_dist(x: faer::MatRef<'_, f64>, i: usize, z: faer::MatRef<'_, f64>, j: usize) -> f64 {
    (0..x.ncols())
        .map(|c| (x[(i, c)] - z[(j, c)]).powi(2))
        .sum()
}

/// Weights by the maths §1 rules, computed independently by brute force.
fn brute_weights(x: faer::MatRef<'_, f64>, eps: f64, sparsity: Sparsity) -> Mat<f64> {
    let n = x.nrows();
    let d2 = Mat::from_fn(n, n, |i, j| sq_dist(x, i, x, j));
    let radius = |i: usize, k: usize| {
        let mut r: Vec<f64> = (0..n).map(|j| d2[(i, j)]).collect();
        r.sort_by(f64::total_cmp);
        r[k - 1]
    };
    let r: Vec<f64> = match sparsity {
        Sparsity::Knn(k) => (0..n).map(|i| radius(i, k)).collect(),
        _ => vec![f64::INFINITY; n],
    };
    Mat::from_fn(n, n, |i, j| {
        let w = (-d2[(i, j)] / eps).exp();
        match sparsity {
            Sparsity::Dense => w,
            Sparsity::Knn(_) => {
                if d2[(i, j)] <= r[i].max(r[j]) {
                    w
                } else {
                    0.0
                }
            }
            Sparsity::Threshold(eta) => {
                if w >= eta {
                    w
                } else {
                    0.0
                }
            }
        }
    })
}

fn dense_kernel(k: &Weights) -> Mat<f64> {
    match k {
        Weights::Dense(m) => m.clone(),
        Weights::Sparse(s) => s.to_dense(),
    }
}

const SPARSITIES: [Sparsity; 3] = [
    Sparsity::Dense,
    Sparsity::Knn(12),
    Sparsity::Threshold(1e-3),
];

#[test]
fn extension_of_training_points_is_exact() {
    let x = datasets::s_curve(300, 0.05, 1).points;
    let mut cells = 0;
    for sparsity in SPARSITIES {
        for alpha in [0.0, 0.5, 1.0] {
            let base = DiffusionMaps {
                n_components: 3,
                kernel: DiffusionKernel {
                    epsilon: Epsilon::Value(0.3),
                    sparsity,
                    alpha,
                },
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap();
            for (output, t) in [
                (Output::Diffusion, 1.0),
                (Output::Diffusion, 2.5),
                (Output::Standard, 1.0),
                (Output::Weighted, 1.0),
                (Output::Normalized, 1.0),
            ] {
                let m = base.with_output(output, t).unwrap();
                let e = m.extend(x.as_ref()).unwrap();
                let err = max_diff(e.coordinates.as_ref(), m.embedding());
                let scale = max_abs(m.embedding());
                assert!(
                    err <= 1e-10 * scale,
                    "{sparsity:?} α={alpha} {output:?} t={t}: {err:e} (scale {scale:e})"
                );
                let rel = &e
                    .extra
                    .iter()
                    .find(|c| c.name == "relative_degree")
                    .unwrap()
                    .values;
                let d = m.core().degrees();
                let mut sorted = d.to_vec();
                sorted.sort_by(f64::total_cmp);
                let med = 0.5 * (sorted[149] + sorted[150]);
                for i in [0, 77, 299] {
                    assert!((rel[i] - d[i] / med).abs() < 1e-12 * rel[i]);
                }
                // relative_density = q(x)/median q: > 0, and 1 on average-ish points.
                let rq = &e
                    .extra
                    .iter()
                    .find(|c| c.name == "relative_density")
                    .unwrap()
                    .values;
                let mut s = rq.clone();
                s.sort_by(f64::total_cmp);
                assert!((0.5 * (s[149] + s[150]) - 1.0).abs() < 1e-12);
                if sparsity == Sparsity::Dense {
                    // Residual of a training point: 0 up to the rank tolerance.
                    let worst = e.residual.iter().copied().fold(0.0f64, f64::max);
                    assert!(worst < 1e-9, "{worst:e}");
                }
                cells += 1;
            }
        }
    }
    assert_eq!(cells, 45);
}

#[test]
fn lanczos_on_sparse_kernel_agrees_with_dense_and_is_exact() {
    let x = datasets::s_curve(1500, 0.02, 2).points;
    let fit = |solver| {
        DiffusionMaps {
            n_components: 4,
            kernel: DiffusionKernel {
                epsilon: Epsilon::Value(0.05),
                sparsity: Sparsity::Knn(15),
                alpha: 1.0,
            },
            solver,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
    };
    let d = fit(Solver::Dense);
    for solver in [Solver::Lanczos, Solver::ShiftInvert, Solver::Auto] {
        let l = fit(solver);
        let want = if solver == Solver::Lanczos {
            Solver::Lanczos
        } else {
            Solver::ShiftInvert
        };
        assert_eq!(
            l.core().solver_used().0,
            want,
            "{:?}",
            l.core().solver_used()
        );
        for j in 0..4 {
            assert!(
                (l.eigenvalues()[j] - d.eigenvalues()[j]).abs() < 1e-11,
                "{solver:?} {j}: {} vs {}",
                l.eigenvalues()[j],
                d.eigenvalues()[j]
            );
        }
        let e = l.extend(x.as_ref()).unwrap();
        let err = max_diff(e.coordinates.as_ref(), l.embedding());
        assert!(err <= 1e-10 * max_abs(l.embedding()), "{solver:?}: {err:e}");
        // Same eigenvectors up to the sign rule, which both apply.
        let dev = max_diff(l.embedding(), d.embedding());
        assert!(dev < 1e-8 * max_abs(d.embedding()), "{solver:?}: {dev:e}");
    }
}

#[test]
fn shift_invert_agrees_with_dense_on_very_sparse_graphs() {
    // 800 S-curve points, 10 neighbours a point: faer factors (1 + σ)I − A
    // simplicially, its columns out of postorder. Before 2026-11-29 the solve split
    // that tree into ranges that were not subtrees, and shift-invert's eigenvalues were
    // off by up to 5.3e-2 on these seeds (dense: exact).
    for seed in 0..3 {
        let x = datasets::s_curve(800, 0.0, seed).points;
        let fit = |solver| {
            DiffusionMaps {
                kernel: DiffusionKernel {
                    sparsity: Sparsity::Knn(10),
                    ..Default::default()
                },
                solver,
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap()
        };
        let (s, d) = (fit(Solver::ShiftInvert), fit(Solver::Dense));
        assert_eq!(s.core().solver_used().0, Solver::ShiftInvert);
        for (j, (a, b)) in s.eigenvalues().iter().zip(d.eigenvalues()).enumerate() {
            assert!((a - b).abs() < 1e-11, "seed {seed}, {j}: {a} vs {b}");
        }
    }
}

#[test]
fn alpha_zero_and_one_are_seed_003_kernels() {
    let x = datasets::swiss_roll(200, 0.1, false, 3).points;
    let eps = 20.0;
    for sparsity in [Sparsity::Dense, Sparsity::Knn(10)] {
        let w = brute_weights(x.as_ref(), eps, sparsity);
        let n = 200;
        let s: Vec<f64> = (0..n).map(|i| (0..n).map(|j| w[(i, j)]).sum()).collect();
        let r: Vec<f64> = (0..n)
            .map(|i| s[i] * (0..n).map(|j| w[(i, j)] / s[j]).sum::<f64>())
            .collect();
        for (alpha, norm) in [(0.0, &s), (1.0, &r)] {
            let k = DiffusionKernel {
                epsilon: Epsilon::Value(eps),
                sparsity,
                alpha,
            }
            .normalised(x.as_ref())
            .unwrap();
            let k = dense_kernel(&k.kernel);
            let want = Mat::from_fn(n, n, |i, j| w[(i, j)] / (norm[i] * norm[j]).sqrt());
            let err = max_diff(k.as_ref(), want.as_ref());
            assert!(err < 1e-14, "{sparsity:?} α={alpha}: {err:e}");
            // Same zero pattern as the brute-force rule.
            for i in 0..n {
                for j in 0..n {
                    assert_eq!(k[(i, j)] == 0.0, want[(i, j)] == 0.0, "({i}, {j})");
                }
            }
        }
    }
}

/// The extension of new points by maths §7's formula, written out from the fitted
/// eigenvectors, both densities.
#[test]
fn new_points_follow_the_nystrom_formula() {
    let all = datasets::twin_peaks(260, 4).points;
    let x = all.as_ref().subrows(0, 240);
    let z = all.as_ref().subrows(240, 20);
    let eps = 0.8;
    for sparsity in SPARSITIES {
        for density in [Density::Training, Density::Union] {
            let alpha = 0.5;
            let m = DiffusionMaps {
                n_components: 3,
                kernel: DiffusionKernel {
                    epsilon: Epsilon::Value(eps),
                    sparsity,
                    alpha,
                },
                output: Output::Standard,
                density,
                ..Default::default()
            }
            .fit(x)
            .unwrap();
            let e = m.extend(z).unwrap();
            let w = brute_weights(x, eps, sparsity);
            let q: Vec<f64> = (0..240)
                .map(|i| (0..240).map(|j| w[(i, j)]).sum())
                .collect();
            let psi = m.core().eigenvectors();
            let lam = m.core().eigenvalues();
            // Weights between new points and training points (and among new points).
            let rz = |a: usize| {
                let mut r: Vec<f64> = (0..240).map(|i| sq_dist(z, a, x, i)).collect();
                r.sort_by(f64::total_cmp);
                r[match sparsity {
                    Sparsity::Knn(k) => k - 1,
                    _ => 0,
                }]
            };
            let rx = |i: usize| {
                let mut r: Vec<f64> = (0..240).map(|j| sq_dist(x, i, x, j)).collect();
                r.sort_by(f64::total_cmp);
                r[match sparsity {
                    Sparsity::Knn(k) => k - 1,
                    _ => 0,
                }]
            };
            let keep = |d2: f64, ra: f64, rb: f64| {
                let w = (-d2 / eps).exp();
                match sparsity {
                    Sparsity::Dense => w,
                    Sparsity::Knn(_) => {
                        if d2 <= ra.max(rb) {
                            w
                        } else {
                            0.0
                        }
                    }
                    Sparsity::Threshold(eta) => {
                        if w >= eta {
                            w
                        } else {
                            0.0
                        }
                    }
                }
            };
            let rxs: Vec<f64> = (0..240).map(rx).collect();
            for a in 0..20 {
                let ra = rz(a);
                let wz: Vec<f64> = (0..240)
                    .map(|i| keep(sq_dist(z, a, x, i), ra, rxs[i]))
                    .collect();
                let mut qz: f64 = wz.iter().sum();
                if density == Density::Union {
                    qz += (0..20)
                        .map(|b| keep(sq_dist(z, a, z, b), ra, rz(b)))
                        .sum::<f64>();
                }
                let wa: Vec<f64> = (0..240)
                    .map(|i| wz[i] / (qz.powf(alpha) * q[i].powf(alpha)))
                    .collect();
                let dz: f64 = wa.iter().sum();
                let d = m.core().degrees();
                for j in 1..=3 {
                    let s: f64 = (0..240)
                        .map(|i| wa[i] / (dz * d[i]).sqrt() * psi[(i, j)])
                        .sum();
                    let psi_hat = s / lam[j];
                    let want = lam[j].sqrt() * psi_hat;
                    let got = e.coordinates[(a, j - 1)];
                    assert!(
                        (got - want).abs() < 1e-12 * (1.0 + want.abs()) * 100.0,
                        "{sparsity:?} {density:?} row {a} col {j}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn circle_has_paired_eigenvalues_and_fourier_eigenvectors() {
    let d = datasets::circle_s1(2000, 7);
    let m = DiffusionMaps {
        n_components: 4,
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(0.01),
            sparsity: Sparsity::Dense,
            alpha: 1.0,
        },
        output: Output::Diffusion,
        t: 0.0,
        residual: Some(false),
        ..Default::default()
    }
    .fit(d.points.as_ref())
    .unwrap();
    let l = m.eigenvalues();
    let (g1, g2) = (1.0 - l[0], 1.0 - l[2]);
    // Pairs: the splitting within a pair (random angles) is a few per cent of the gap
    // 1 − λ, against a factor 4 between the pairs.
    assert!((l[0] - l[1]).abs() < 0.05 * g1, "{l:?}");
    assert!((l[2] - l[3]).abs() < 0.05 * g2, "{l:?}");
    // Laplace–Beltrami: 1 − λ_k ∝ k² (ratio 4 between the pairs).
    assert!((g2 / g1 - 4.0).abs() < 0.1, "ratio {}", g2 / g1);
    let y = m.embedding();
    for (pair, k) in [(0usize, 1.0f64), (2, 2.0)] {
        for f in [|a: f64| a.cos(), |a: f64| a.sin()] {
            let target: Vec<f64> = d.t.iter().map(|&th| f(k * th)).collect();
            // Least-squares fit of the target by the pair (after any rotation within it):
            // the normal equations of the 2-column fit, then the fit's correlation.
            let col = |j: usize| (0..2000).map(move |i| y[(i, pair + j)]);
            let dot = |a: Vec<f64>, b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
            let (c0, c1): (Vec<f64>, Vec<f64>) = (col(0).collect(), col(1).collect());
            let (g00, g01, g11) = (
                dot(c0.clone(), &c0),
                dot(c0.clone(), &c1),
                dot(c1.clone(), &c1),
            );
            let (b0, b1) = (dot(c0.clone(), &target), dot(c1.clone(), &target));
            let det = g00 * g11 - g01 * g01;
            let (a0, a1) = ((g11 * b0 - g01 * b1) / det, (g00 * b1 - g01 * b0) / det);
            let fit: Vec<f64> = (0..2000).map(|i| a0 * c0[i] + a1 * c1[i]).collect();
            let corr = dot(fit.clone(), &target)
                / (dot(fit.clone(), &fit) * dot(target.clone(), &target)).sqrt();
            assert!(corr > 0.99, "k = {k}: correlation {corr}");
        }
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let x = datasets::s_curve(100, 0.0, 5).points;
    let with = |kernel: DiffusionKernel| DiffusionMaps {
        kernel,
        ..Default::default()
    };
    for eps in [0.0, -1.0, f64::NAN] {
        let e = with(DiffusionKernel {
            epsilon: Epsilon::Value(eps),
            ..Default::default()
        })
        .fit(x.as_ref())
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidParameter {
                    name: "epsilon",
                    ..
                }
            ),
            "{e}"
        );
    }
    let knn = |k: usize| {
        with(DiffusionKernel {
            sparsity: Sparsity::Knn(k),
            ..Default::default()
        })
        .fit(x.as_ref())
    };
    let e = knn(0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidParameter {
                name: "n_neighbors",
                ..
            }
        ),
        "{e}"
    );
    // n_neighbors ≥ N is lowered to N − 1 with a warning (umap-learn's rule): the
    // same fit as asking for N − 1, the kernel recording the value used.
    let n = x.nrows();
    let asked = knn(n - 1).unwrap();
    assert!(asked.fit_warnings().is_empty());
    for k in [n, n + 50] {
        let m = knn(k).unwrap();
        assert_eq!(m.core().spec().sparsity, Sparsity::Knn(n - 1));
        assert_eq!(m.params().kernel.sparsity, Sparsity::Knn(k));
        assert_eq!(m.embedding(), asked.embedding());
        assert_eq!(m.fit_warnings().len(), 1);
        assert!(
            m.fit_warnings()[0].contains(&format!("n_neighbors = {k} is not below")),
            "{:?}",
            m.fit_warnings()
        );
    }
    let e = with(DiffusionKernel {
        alpha: 1.5,
        ..Default::default()
    })
    .fit(x.as_ref())
    .unwrap_err();
    assert!(matches!(e, Error::InvalidParameter { name: "alpha", .. }));
    // Two far-apart blobs with few neighbours: disconnected.
    let mut two = Mat::<f64>::zeros(60, 3);
    let blob = datasets::s_curve(60, 0.0, 6).points;
    for i in 0..60 {
        for j in 0..3 {
            two[(i, j)] = blob[(i, j)] + if i >= 40 { 100.0 } else { 0.0 };
        }
    }
    // Embedded: eigenvalue 1 twice, the first coordinate constant on each component
    // (telling them apart), and a warning naming the sizes.
    let m = with(DiffusionKernel {
        sparsity: Sparsity::Knn(5),
        epsilon: Epsilon::Value(1.0),
        alpha: 1.0,
    })
    .fit(two.as_ref())
    .unwrap();
    assert_eq!(&m.core().eigenvalues()[..2], &[1.0, 1.0]);
    assert!(m.core().eigenvalues()[2] < 1.0 - 1e-6);
    let y = m.embedding();
    let (a, b) = (y[(0, 0)], y[(59, 0)]);
    assert!((a - b).abs() > 0.5, "{a} {b}");
    for i in 0..60 {
        let want = if i < 40 { a } else { b };
        assert!((y[(i, 0)] - want).abs() < 1e-10, "row {i}");
    }
    let w = oose::model::Fitted::fit_warnings(&m);
    assert!(
        w.len() == 1 && w[0].contains("2 connected components (sizes [40, 20]"),
        "{w:?}"
    );
    // NaN in the data names its row and column.
    let mut bad = x.clone();
    bad[(7, 2)] = f64::NAN;
    let e = with(DiffusionKernel::default())
        .fit(bad.as_ref())
        .unwrap_err();
    assert!(matches!(e, Error::NonFinite { row: 7, col: 2, .. }), "{e}");
    // An isolated new point (threshold rule): an error naming the row, or NaN + flag.
    let m = DiffusionMaps {
        kernel: DiffusionKernel {
            sparsity: Sparsity::Threshold(1e-4),
            epsilon: Epsilon::Value(0.5),
            alpha: 0.5,
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let mut z = Mat::<f64>::zeros(3, 3);
    z.as_mut().row_mut(0).copy_from(x.row(3));
    z[(1, 0)] = 50.0;
    z.as_mut().row_mut(2).copy_from(x.row(4));
    let e = m.extend(z.as_ref()).unwrap_err();
    assert!(matches!(e, Error::Isolated { row: 1, .. }), "{e}");
    assert!(e.to_string().contains("row 1"));
    let e = m
        .extend_with(z.as_ref(), Density::Training, OnIsolated::Nan)
        .unwrap();
    let flag = &e
        .extra
        .iter()
        .find(|c| c.name == "isolated")
        .unwrap()
        .values;
    assert_eq!(flag, &vec![0.0, 1.0, 0.0]);
    assert!(e.coordinates[(1, 0)].is_nan() && !e.coordinates[(0, 0)].is_nan());
    assert!((e.coordinates[(2, 1)] - m.embedding()[(4, 1)]).abs() < 1e-10);
    let mut zn = z.clone();
    zn[(2, 1)] = f64::INFINITY;
    assert!(matches!(
        m.extend(zn.as_ref()).unwrap_err(),
        Error::NonFinite { row: 2, col: 1, .. }
    ));
}

#[test]
fn epsilon_rules_are_reported() {
    let x = datasets::s_curve(400, 0.0, 8).points;
    for rule in [Epsilon::Median, Epsilon::LogSlope] {
        let m = DiffusionMaps::default()
            .epsilon(rule)
            .fit(x.as_ref())
            .unwrap();
        let eps = m.core().epsilon();
        assert!(eps > 0.0 && eps.is_finite());
        let info = Model::from(m).info();
        let get = |k: &str| info.iter().find(|p| p.0 == k).map(|p| p.1.clone());
        assert_eq!(get("epsilon").unwrap(), format!("{eps:?}"));
        if rule == Epsilon::LogSlope {
            // The S-curve is a surface: dimension estimate near 2.
            let dim: f64 = get("dimension_estimate").unwrap().parse().unwrap();
            assert!((dim - 2.0).abs() < 0.6, "{dim}");
        }
    }
}

#[test]
fn model_file_round_trip_extends_identically() {
    let x = datasets::helix(500).points;
    let m: Model = DiffusionMaps {
        n_components: 2,
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(0.2),
            sparsity: Sparsity::Knn(10),
            alpha: 1.0,
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap()
    .into();
    let back = Model::from_bytes(&m.to_bytes()).unwrap();
    assert_eq!(back, m);
    let z = datasets::helix(37).points;
    assert_eq!(
        back.extend(z.as_ref()).unwrap().coordinates,
        m.extend(z.as_ref()).unwrap().coordinates
    );
}

#[test]
fn too_many_components_name_the_request_and_what_is_available() {
    // 30 points on a line with a wide kernel: the spectrum falls below 1e-12 early.
    let x = Mat::from_fn(30, 1, |i, _| i as f64 / 29.0);
    let fit = |d| {
        DiffusionMaps {
            n_components: d,
            kernel: DiffusionKernel {
                epsilon: Epsilon::Value(1.0),
                ..Default::default()
            },
            ..Default::default()
        }
        .fit(x.as_ref())
    };
    let Err(Error::NotEnoughPositiveEigenvalues {
        requested,
        available,
        value,
        ..
    }) = fit(29)
    else {
        panic!("29 components of a fast-decaying spectrum fitted")
    };
    // The request is the 29 coordinates asked for (it was the first coordinate below
    // the tolerance), the value that of coordinate 29.
    assert_eq!(requested, 29);
    assert!((1..29).contains(&available), "{available}");
    assert!(value <= 1e-12, "{value}");
    assert!(fit(available).is_ok());
    let e = fit(available + 1).unwrap_err();
    assert!(
        matches!(e, Error::NotEnoughPositiveEigenvalues { requested: r, available: a, .. } if r == available + 1 && a == available),
        "{e:?}"
    );
    assert!(e.to_string().starts_with(&format!(
        "requested {} components but only {available} eigenvalue(s)",
        available + 1
    )));
}
