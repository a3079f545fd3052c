//! Classical MDS: the seed's examples, projection = kernel PCA of −½Δ₂, restricted and
//! joint restricted reconstruction, exact extension of training objects, bad input.

use oose::datasets::swiss_roll;
use oose::error::Error;
use oose::extend::Strategy;
use oose::faer::{mat, Mat, MatRef};
use oose::kernel::distance::self_sq_distances;
use oose::kernel::Kernel;
use oose::linalg::eigen::Solver;
use oose::methods::mds::ClassicalMds;
use oose::prelude::*;
use oose::rng::Rng;

fn max_rel_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (a - b).norm_max() / b.norm_max().max(1e-300)
}

fn column<'a>(e: &'a oose::extend::Extension, name: &str) -> &'a [f64] {
    &e.extra.iter().find(|c| c.name == name).unwrap().values
}

/// Squared distances between rows, from coordinate differences (independent of the
/// library's GEMM path).
fn sq_dists(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), b.nrows(), |i, j| {
        (0..a.ncols())
            .map(|c| (a[(i, c)] - b[(j, c)]).powi(2))
            .sum()
    })
}

/// τ_w of maths §5 written out entrywise: b (N×k) and β (k×k) for new points z.
fn tau(x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> (Mat<f64>, Mat<f64>) {
    let (d2, a2, al2) = (sq_dists(x, x), sq_dists(x, z), sq_dists(z, z));
    let (n, k) = (x.nrows() as f64, z.nrows());
    let row = |i: usize| (0..x.nrows()).map(|j| d2[(i, j)]).sum::<f64>() / n;
    let grand = (0..x.nrows()).map(row).sum::<f64>() / n;
    let col_a = |p: usize| (0..x.nrows()).map(|i| a2[(i, p)]).sum::<f64>() / n;
    let b = Mat::from_fn(x.nrows(), k, |i, p| {
        -0.5 * (a2[(i, p)] - col_a(p) - row(i) + grand)
    });
    let beta = Mat::from_fn(k, k, |p, q| {
        -0.5 * (al2[(p, q)] - col_a(p) - col_a(q) + grand)
    });
    (b, beta)
}

/// F(Y) = 2||X Yᵀ − b||² + ||Y Yᵀ − β||² (one object: k = 1), evaluated directly.
fn objective(
    x: MatRef<'_, f64>,
    y: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
    beta: MatRef<'_, f64>,
) -> f64 {
    let fit = x * y.transpose() - b;
    let gram = y * y.transpose() - beta;
    2.0 * fit.squared_norm_l2() + gram.squared_norm_l2()
}

fn example_2() -> Mat<f64> {
    mat![
        [0.0, 100.0, 45.0, 45.0],
        [100.0, 0.0, 45.0, 45.0],
        [45.0, 45.0, 0.0, 64.0],
        [45.0, 45.0, 64.0, 0.0]
    ]
}

#[test]
fn seed_001_example_2() {
    let m = ClassicalMds {
        n_components: 2,
        ..Default::default()
    }
    .fit_squared_dissimilarities(example_2().as_ref())
    .unwrap();
    let core = m.core();
    assert!((core.eigenvalues()[0] - 50.0).abs() < 1e-12);
    assert!((core.eigenvalues()[1] - 32.0).abs() < 1e-12);
    // X = rows (±5, 0), (0, ±4).
    let x = m.embedding();
    let mut rows: Vec<(f64, f64)> = (0..4).map(|i| (x[(i, 0)].abs(), x[(i, 1)].abs())).collect();
    rows.sort_by(|a, b| b.partial_cmp(a).unwrap());
    for (got, want) in rows
        .iter()
        .zip([(5.0, 0.0), (5.0, 0.0), (0.0, 4.0), (0.0, 4.0)])
    {
        assert!(
            (got.0 - want.0).abs() < 1e-12 && (got.1 - want.1).abs() < 1e-12,
            "{got:?}"
        );
    }
    assert!(core.negative_eigenvalues().is_empty());
    let a2 = mat![[386.0, 386.0, 457.0, 457.0]];
    let p = m.extend_with(a2.as_ref(), Strategy::Projection).unwrap();
    assert!(p.coordinates[(0, 0)].abs() < 1e-12 && p.coordinates[(0, 1)].abs() < 1e-12);
    // β − ||ŷ||² = β = 400.
    assert!((column(&p, "beta_minus_projection")[0] - 400.0).abs() < 1e-10);
    let r = m.extend_with(a2.as_ref(), Strategy::Restricted).unwrap();
    assert!(r.coordinates[(0, 0)].abs() < 1e-10);
    assert!((r.coordinates[(0, 1)].abs() - 19.1833).abs() < 5e-5);
    assert!((r.coordinates[(0, 1)].abs() - 368f64.sqrt()).abs() < 1e-10);
    assert!((column(&r, "lambda")[0] + 32.0).abs() < 1e-10);
    assert_eq!(column(&r, "unique")[0], 0.0);
    assert!(column(&r, "objective_restricted")[0] < column(&r, "objective_projection")[0]);
}

#[test]
fn seed_001_example_1_inner_product_form() {
    let x = mat![[-1.0, 0.0], [1.0, 0.0]];
    let m = ClassicalMds {
        n_components: 1,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let z = mat![[0.0, 9.0]];
    let p = m.extend(z.as_ref()).unwrap();
    assert!(p.coordinates[(0, 0)].abs() < 1e-12);
    assert!((column(&p, "beta_minus_projection")[0] - 81.0).abs() < 1e-10);
    let r = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    assert!((r.coordinates[(0, 0)].abs() - 8.8882).abs() < 5e-5);
    assert!((r.coordinates[(0, 0)].abs() - 79f64.sqrt()).abs() < 1e-12);
    assert_eq!(column(&r, "unique")[0], 0.0);
    // The residual sees the new direction: (0, 9) is 9 away from the line through the data.
    assert!((p.residual[0] - 81.0).abs() < 1e-9, "{}", p.residual[0]);
}

#[test]
fn projection_equals_kernel_pca_of_minus_half_squared_distances() {
    let x = swiss_roll(300, 0.1, false, 7).points;
    let z = swiss_roll(40, 0.1, false, 8).points;
    let d = 3;
    let mds = ClassicalMds {
        n_components: d,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let d2 = self_sq_distances(x.as_ref(), oose::faer::Par::Seq);
    let k = Mat::from_fn(300, 300, |i, j| -0.5 * d2[(i, j)]);
    let kpca = KernelPca {
        n_components: d,
        kernel: Kernel::Precomputed,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(k.as_ref())
    .unwrap();
    assert!(max_rel_diff(mds.embedding(), kpca.embedding()) < 1e-10);
    let a2 = sq_dists(z.as_ref(), x.as_ref());
    let kz = Mat::from_fn(40, 300, |i, j| -0.5 * a2[(i, j)]);
    let via_kpca = kpca
        .extend_kernel_rows(kz.as_ref(), Some(&[0.0; 40]))
        .unwrap();
    let via_mds = mds.extend(z.as_ref()).unwrap();
    assert!(max_rel_diff(via_mds.coordinates.as_ref(), via_kpca.coordinates.as_ref()) < 1e-10);
    // The same through squared dissimilarities.
    let from_d2 = ClassicalMds {
        n_components: d,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit_squared_dissimilarities(d2.as_ref())
    .unwrap();
    let via_d2 = from_d2.extend(a2.as_ref()).unwrap();
    assert!(max_rel_diff(via_d2.coordinates.as_ref(), via_mds.coordinates.as_ref()) < 1e-10);
}

#[test]
fn extending_training_objects_reproduces_the_embedding() {
    let x = swiss_roll(200, 0.1, false, 9).points;
    let d2 = self_sq_distances(x.as_ref(), oose::faer::Par::Seq);
    let delta = Mat::from_fn(200, 200, |i, j| d2[(i, j)].sqrt());
    let sim = Mat::from_fn(200, 200, |i, j| (-d2[(i, j)] / 50.0).exp());
    let p = ClassicalMds {
        n_components: 3,
        ..Default::default()
    };
    let cases = [
        (p.fit(x.as_ref()).unwrap(), x.clone()),
        (
            p.fit_squared_dissimilarities(d2.as_ref()).unwrap(),
            d2.clone(),
        ),
        (
            p.fit_dissimilarities(delta.as_ref()).unwrap(),
            delta.clone(),
        ),
        (p.fit_similarities(sim.as_ref()).unwrap(), sim.clone()),
    ];
    for (m, input) in &cases {
        // Restricted reconstruction keeps training objects in place only when they lie in
        // the representation space: here the Euclidean inputs (d = 3 = data dimension),
        // not the kernel similarities (rank ≫ 3).
        let strategies: &[Strategy] = if m.input() == oose::methods::mds::Proximity::Similarities {
            &[Strategy::Projection]
        } else {
            &[Strategy::Projection, Strategy::Restricted]
        };
        for &strategy in strategies {
            let e = m.extend_with(input.as_ref(), strategy).unwrap();
            let err = max_rel_diff(e.coordinates.as_ref(), m.embedding());
            assert!(err < 1e-10, "{:?} {strategy:?}: {err:e}", m.input());
        }
    }
    // Points give a PSD B: residual 0 on training points.
    let e = cases[0].0.extend(x.as_ref()).unwrap();
    assert!(
        e.residual.iter().all(|&r| r < 1e-8),
        "{:?}",
        &e.residual[..5]
    );
}

#[test]
fn restricted_equals_projection_in_span_and_never_has_a_larger_objective() {
    // Planar data embedded in its own dimension: every new point lies in the span.
    let mut rng = Rng::new(3);
    let x = Mat::from_fn(80, 2, |_, _| rng.normal());
    let z = Mat::from_fn(30, 2, |_, _| 3.0 * rng.normal());
    let m = ClassicalMds {
        n_components: 2,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let p = m.extend_with(z.as_ref(), Strategy::Projection).unwrap();
    let r = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    assert!(max_rel_diff(r.coordinates.as_ref(), p.coordinates.as_ref()) < 1e-8);
    // Swiss roll in 2 of 3 dimensions: objects stick out, restricted is never worse.
    let x = swiss_roll(300, 0.2, false, 4).points;
    let z = swiss_roll(100, 0.2, false, 5).points;
    let m = ClassicalMds::default().fit(x.as_ref()).unwrap();
    let r = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    let p = m.extend(z.as_ref()).unwrap();
    let (b, beta) = tau(x.as_ref(), z.as_ref());
    let mut strictly = 0;
    for i in 0..100 {
        let f = |c: &Mat<f64>| {
            objective(
                m.embedding(),
                c.as_ref().subrows(i, 1),
                b.as_ref().subcols(i, 1),
                beta.as_ref().submatrix(i, i, 1, 1),
            )
        };
        let (op, or) = (f(&p.coordinates), f(&r.coordinates));
        assert!(or <= op * (1.0 + 1e-12), "{i}: {or} > {op}");
        strictly += usize::from(or < op * (1.0 - 1e-6));
        // The reported objectives are these values.
        assert!((column(&r, "objective_projection")[i] - op).abs() <= 1e-9 * op);
        assert!((column(&r, "objective_restricted")[i] - or).abs() <= 1e-9 * op);
        // λ* < 0 exactly when the object sticks out (β > ||ŷ||²).
        let yn: f64 = (0..2).map(|j| p.coordinates[(i, j)].powi(2)).sum();
        assert_eq!(column(&r, "lambda")[i] < 0.0, beta[(i, i)] > yn);
    }
    assert!(strictly > 50, "only {strictly} strictly better");
}

#[test]
fn joint_restricted_reconstruction_is_no_worse_than_one_by_one_or_projection() {
    let x = swiss_roll(200, 0.2, false, 12).points;
    let z = swiss_roll(8, 0.5, false, 13).points;
    let m = ClassicalMds::default().fit(x.as_ref()).unwrap();
    let j = m.extend_joint(z.as_ref(), None).unwrap();
    // Objectives evaluated directly from the entrywise τ_w, not by the library.
    let (b, beta) = tau(x.as_ref(), z.as_ref());
    let f = |y: MatRef<'_, f64>| objective(m.embedding(), y, b.as_ref(), beta.as_ref());
    let joint = f(j.coordinates.as_ref());
    let one_by_one = f(m
        .extend_with(z.as_ref(), Strategy::Restricted)
        .unwrap()
        .coordinates
        .as_ref());
    let projection = f(m.extend(z.as_ref()).unwrap().coordinates.as_ref());
    assert!(
        (joint - j.objective).abs() <= 1e-9 * joint,
        "{joint} vs {}",
        j.objective
    );
    assert!(
        joint <= one_by_one * (1.0 + 1e-12),
        "{joint} > {one_by_one}"
    );
    assert!(joint < projection * (1.0 - 1e-6), "{joint} vs {projection}");
    assert!(
        j.gradient_norm <= 1e-6 * j.objective,
        "{} vs {}",
        j.gradient_norm,
        j.objective
    );
    // Same through squared dissimilarities plus the mutual block.
    let a2 = sq_dists(z.as_ref(), x.as_ref());
    let alpha2 = sq_dists(z.as_ref(), z.as_ref());
    let d2 = sq_dists(x.as_ref(), x.as_ref());
    let md = ClassicalMds::default()
        .fit_squared_dissimilarities(d2.as_ref())
        .unwrap();
    let jd = md.extend_joint(a2.as_ref(), Some(alpha2.as_ref())).unwrap();
    assert!((jd.objective - j.objective).abs() <= 1e-8 * j.objective);
    assert!(matches!(
        md.extend_joint(a2.as_ref(), None),
        Err(Error::InvalidParameter { name: "mutual", .. })
    ));
}

#[test]
fn arc_runs_from_projection_to_restricted() {
    let x = swiss_roll(200, 0.2, false, 14).points;
    let z = swiss_roll(3, 0.5, false, 15).points;
    let m = ClassicalMds::default().fit(x.as_ref()).unwrap();
    let p = m.extend(z.as_ref()).unwrap();
    let r = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    let arc = m.arc(z.as_ref(), 10).unwrap();
    assert_eq!(arc.len(), 3 * 11);
    for obj in 0..3 {
        let pts: Vec<_> = arc.iter().filter(|a| a.0 == obj).collect();
        assert_eq!(pts[0].1, 0.0);
        for j in 0..2 {
            assert!((pts[0].2[j] - p.coordinates[(obj, j)]).abs() < 1e-12);
            assert!((pts[10].2[j] - r.coordinates[(obj, j)]).abs() < 1e-12);
        }
        assert!((pts[10].1 - column(&r, "lambda")[obj]).abs() < 1e-12 * pts[10].1.abs());
    }
}

#[test]
fn non_euclidean_dissimilarities_report_negative_eigenvalues() {
    // Violates the triangle inequality: d(0,1) = 10 but d(0,2) = d(2,1) = 1.
    let delta = mat![
        [0.0, 10.0, 1.0, 5.0],
        [10.0, 0.0, 1.0, 5.0],
        [1.0, 1.0, 0.0, 5.0],
        [5.0, 5.0, 5.0, 0.0]
    ];
    let m = ClassicalMds {
        n_components: 1,
        ..Default::default()
    }
    .fit_dissimilarities(delta.as_ref())
    .unwrap();
    let neg = m.core().negative_eigenvalues();
    assert!(!neg.is_empty() && neg[0] < -1.0, "{neg:?}");
    assert!(!m.core().has_residual());
    // Cross-check against a dense decomposition of B.
    let n = 4;
    let g = Mat::from_fn(n, n, |i, j| -0.5 * delta[(i, j)] * delta[(i, j)]);
    let h = Mat::from_fn(n, n, |i, j| if i == j { 1.0 } else { 0.0 } - 0.25);
    let b = &h * &g * &h;
    let ev = b.self_adjoint_eigenvalues(oose::faer::Side::Lower).unwrap();
    assert!((ev[0] - neg[0]).abs() < 1e-10, "{ev:?} vs {neg:?}");
}

#[test]
fn bad_proximity_input_gives_typed_errors() {
    let p = ClassicalMds::default();
    let mut d2 = example_2();
    d2[(0, 1)] = 99.0;
    assert!(matches!(
        p.fit_squared_dissimilarities(d2.as_ref()),
        Err(Error::InvalidValue { row: 1, col: 0, .. })
    ));
    let mut d2 = example_2();
    d2[(2, 3)] = -1.0;
    d2[(3, 2)] = -1.0;
    assert!(matches!(
        p.fit_squared_dissimilarities(d2.as_ref()),
        Err(Error::InvalidValue {
            reason: "negative dissimilarity",
            ..
        })
    ));
    let mut d2 = example_2();
    d2[(2, 2)] = 1.0;
    assert!(matches!(
        p.fit_squared_dissimilarities(d2.as_ref()),
        Err(Error::InvalidValue {
            row: 2,
            col: 2,
            reason: "non-zero diagonal",
            ..
        })
    ));
    let mut d2 = example_2();
    d2[(1, 3)] = f64::NAN;
    assert!(matches!(
        p.fit_squared_dissimilarities(d2.as_ref()),
        Err(Error::NonFinite { row: 1, col: 3, .. })
    ));
    assert!(matches!(
        p.fit_squared_dissimilarities(example_2().as_ref().subcols(0, 3)),
        Err(Error::Shape { .. })
    ));
    let m = p.fit_squared_dissimilarities(example_2().as_ref()).unwrap();
    assert!(matches!(
        m.extend(mat![[1.0, 2.0, 3.0]].as_ref()),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        m.extend(mat![[1.0, 2.0, -3.0, 4.0]].as_ref()),
        Err(Error::InvalidValue { col: 2, .. })
    ));
    // Example 2's B has eigenvalues 50, 32, 4 and 0 (the centring direction).
    assert!(matches!(
        ClassicalMds {
            n_components: 4,
            ..Default::default()
        }
        .fit_squared_dissimilarities(example_2().as_ref()),
        Err(Error::NotEnoughPositiveEigenvalues {
            requested: 4,
            available: 3,
            ..
        })
    ));
}

#[test]
fn similarities_are_checked_against_their_own_scale() {
    // Inner products of points at a scale of 1e-10 (similarities of 1e-20): mutual
    // similarities whose diagonal disagrees with the γ(z, z) given with the rows by a
    // factor of three are refused, as at scale 1 (the tolerance was 1e-10 absolute).
    let x = swiss_roll(40, 0.2, false, 21).points;
    let z = swiss_roll(3, 0.5, false, 22).points;
    for s in [1.0, 1e-10] {
        let gram = |a: MatRef<'_, f64>, b: MatRef<'_, f64>| {
            Mat::from_fn(a.nrows(), b.nrows(), |i, j| {
                (0..a.ncols())
                    .map(|c| a[(i, c)] * b[(j, c)] * s * s)
                    .sum::<f64>()
            })
        };
        let m = ClassicalMds::default()
            .fit_similarities(gram(x.as_ref(), x.as_ref()).as_ref())
            .unwrap();
        let mutual = gram(z.as_ref(), z.as_ref());
        let cross = gram(z.as_ref(), x.as_ref());
        let rows = Mat::from_fn(3, 41, |i, j| {
            if j < 40 {
                cross[(i, j)]
            } else {
                mutual[(i, i)]
            }
        });
        assert!(m.extend_joint(rows.as_ref(), Some(mutual.as_ref())).is_ok());
        let refused = |rows: &Mat<f64>, mutual: &Mat<f64>, why: &str| {
            let e = m
                .extend_joint(rows.as_ref(), Some(mutual.as_ref()))
                .unwrap_err();
            assert!(e.to_string().contains(why), "scale {s}: {e}");
        };
        let mut off = rows.clone();
        off[(1, 40)] *= 3.0;
        refused(&off, &mutual, "diagonal differs");
        // A mutual block three times its mirror at one pair: not symmetric.
        let mut asym = mutual.clone();
        asym[(2, 0)] *= 3.0;
        refused(&rows, &asym, "not symmetric");
    }
}
