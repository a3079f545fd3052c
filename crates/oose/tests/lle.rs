//! Locally linear embedding: the eigenproblem, the extension's deviation on training
//! points (documented in maths §14), the solvers' agreement, and bad input.

use oose::faer::Mat;
use oose::linalg::eigen::Solver;
use oose::methods::lle::{LleMethod, LocallyLinearEmbedding};
use oose::methods::OutOfSample;
use oose::model::Fitted;
use oose::prelude::Error;

fn roll(n: usize, seed: u64) -> Mat<f64> {
    oose::datasets::swiss_roll(n, 0.05, false, seed).points
}

#[test]
fn embedding_is_orthonormal_and_orthogonal_to_the_constant() {
    let x = roll(600, 1);
    let m = LocallyLinearEmbedding {
        n_neighbors: 10,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let y = m.embedding();
    let g = y.transpose() * y;
    for a in 0..2 {
        for b in 0..2 {
            let want = if a == b { 1.0 } else { 0.0 };
            assert!((g[(a, b)] - want).abs() < 1e-10, "{a},{b}: {}", g[(a, b)]);
        }
        let mean: f64 = (0..600).map(|i| y[(i, a)]).sum::<f64>() / 600.0;
        assert!(mean.abs() < 1e-10, "column {a} mean {mean}");
    }
    let ev = m.m_eigenvalues();
    assert!(ev[0] > 0.0 && ev[0] <= ev[1], "{ev:?}");
}

#[test]
fn extension_of_training_points_deviates_by_a_small_measured_amount() {
    // Not exact (maths §14): a training point is its own nearest neighbour and the
    // regularisation spreads some weight over the others. Measured on this roll: the
    // median deviation is about 1e-4 of the embedding's scale, the largest about 1e-2.
    let x = roll(800, 2);
    let m = LocallyLinearEmbedding {
        n_neighbors: 10,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let e = m.extend(x.as_ref()).unwrap();
    let y = m.embedding();
    let scale = y.norm_max();
    let mut dev: Vec<f64> = (0..800)
        .map(|i| {
            (0..2)
                .map(|j| (e.coordinates[(i, j)] - y[(i, j)]).abs())
                .fold(0.0, f64::max)
                / scale
        })
        .collect();
    dev.sort_by(f64::total_cmp);
    let (median, max) = (dev[400], dev[799]);
    assert!(
        median > 0.0,
        "the extension is not exact on training points"
    );
    assert!(median < 1e-3, "median relative deviation {median}");
    assert!(max < 5e-2, "largest relative deviation {max}");
    // The reliability is small there: training points are their own reconstruction.
    let mut err = e.reconstruction_error.clone();
    err.sort_by(f64::total_cmp);
    assert!(err[400] < 1e-3, "median reconstruction error {}", err[400]);
}

#[test]
fn shift_invert_agrees_with_the_dense_solver() {
    let x = roll(1500, 3);
    let fit = |solver| {
        LocallyLinearEmbedding {
            n_neighbors: 10,
            solver,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
    };
    let (d, s) = (fit(Solver::Dense), fit(Solver::Auto));
    let info: Vec<(String, String)> = oose::model::Model::from(s.clone()).info();
    assert!(
        info.iter()
            .any(|(k, v)| k == "solver" && v == "shift-invert"),
        "{info:?}"
    );
    for j in 0..2 {
        let (a, b) = (d.m_eigenvalues()[j], s.m_eigenvalues()[j]);
        assert!((a - b).abs() <= 1e-6 * a, "eigenvalue {j}: {a} vs {b}");
        let dot: f64 = (0..1500)
            .map(|i| d.embedding()[(i, j)] * s.embedding()[(i, j)])
            .sum();
        assert!((dot.abs() - 1.0).abs() < 1e-8, "column {j}: {dot}");
    }
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let x = roll(50, 4);
    let name = |p: LocallyLinearEmbedding| match p.fit(x.as_ref()) {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{:?}", other.map(|_| ())),
    };
    let base = LocallyLinearEmbedding::default();
    // n_neighbors ≥ N is lowered to N − 1 with a warning (umap-learn's rule): the fit
    // of asking for N − 1, the model recording the value used.
    let asked = LocallyLinearEmbedding {
        n_neighbors: 49,
        ..base.clone()
    }
    .fit(x.as_ref())
    .unwrap();
    for k in [50, 80] {
        let m = LocallyLinearEmbedding {
            n_neighbors: k,
            ..base.clone()
        }
        .fit(x.as_ref())
        .unwrap();
        assert_eq!(m.params().n_neighbors, 49);
        assert_eq!(m.embedding(), asked.embedding());
        assert_eq!(m.fit_warnings().len(), 1);
        assert!(m.fit_warnings()[0].contains("lowered to N − 1 = 49"));
    }
    assert!(asked.fit_warnings().is_empty());
    assert_eq!(
        name(LocallyLinearEmbedding {
            n_neighbors: 0,
            ..base.clone()
        }),
        "n_neighbors"
    );
    assert_eq!(
        name(LocallyLinearEmbedding {
            n_components: 6,
            ..base.clone()
        }),
        "n_components"
    );
    assert_eq!(
        name(LocallyLinearEmbedding {
            reg: -1.0,
            ..base.clone()
        }),
        "reg"
    );
    assert_eq!(
        name(LocallyLinearEmbedding {
            reg: f64::NAN,
            ..base.clone()
        }),
        "reg"
    );
    // Duplicated points without regularisation: a singular local Gram matrix, named.
    let mut dup = Mat::zeros(40, 3);
    for i in 0..40 {
        for j in 0..3 {
            dup[(i, j)] = ((i / 4) as f64 * 0.7 + j as f64).sin();
        }
    }
    match (LocallyLinearEmbedding {
        n_neighbors: 3,
        reg: 0.0,
        ..base
    })
    .fit(dup.as_ref())
    {
        Err(Error::InvalidParameter {
            name: "reg",
            reason,
        }) => {
            assert!(reason.contains("point"), "{reason}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn ltsa_is_orthonormal_and_refuses_points_no_neighbourhood_contains() {
    use oose::methods::lle::LleMethod;
    let x = roll(500, 5);
    let m = LocallyLinearEmbedding {
        n_neighbors: 10,
        method: LleMethod::Ltsa,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let g = m.embedding().transpose() * m.embedding();
    assert!((g[(0, 0)] - 1.0).abs() < 1e-10 && g[(0, 1)].abs() < 1e-10);
    // A far point is nobody's neighbour (with k = 2 every other point has closer ones).
    let mut y = roll(60, 6);
    for j in 0..3 {
        y[(0, j)] = 1e3 + j as f64;
    }
    match (LocallyLinearEmbedding {
        n_neighbors: 2,
        n_components: 1,
        method: LleMethod::Ltsa,
        ..Default::default()
    })
    .fit(y.as_ref())
    {
        Err(Error::InvalidParameter {
            name: "n_neighbors",
            reason,
        }) => assert!(reason.contains("(0"), "{reason}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// R² of the least-squares affine fit of `target` from the embedding's columns.
fn affine_r2(y: oose::faer::MatRef<'_, f64>, target: &[f64]) -> f64 {
    use oose::faer::linalg::solvers::Solve;
    let n = y.nrows();
    let a = Mat::from_fn(
        n,
        y.ncols() + 1,
        |i, j| if j == 0 { 1.0 } else { y[(i, j - 1)] },
    );
    let b = Mat::from_fn(n, 1, |i, _| target[i]);
    let coef = (a.transpose() * &a)
        .llt(oose::faer::Side::Lower)
        .unwrap()
        .solve(a.transpose() * &b);
    let fit = &a * &coef;
    let mean = target.iter().sum::<f64>() / n as f64;
    let ss_res: f64 = (0..n).map(|i| (target[i] - fit[(i, 0)]).powi(2)).sum();
    let ss_tot: f64 = target.iter().map(|t| (t - mean).powi(2)).sum();
    1.0 - ss_res / ss_tot
}

#[test]
fn the_variants_recover_the_coordinates_of_flat_and_developable_surfaces() {
    // Hessian LLE's M annihilates the affine functions of isometric coordinates
    // [Donoho & Grimes], LTSA's too: on points of a plane (rotated into R³) the
    // embedding is an affine function of the plane's coordinates up to rounding; on a
    // half cylinder (isometric to a rectangle) up to the discretisation. Modified and
    // standard LLE regularise their weights, so recover them less closely.
    use oose::methods::lle::LleMethod;
    let mut rng = oose::rng::Rng::new(11);
    let n = 600;
    let u: Vec<(f64, f64)> = (0..n)
        .map(|_| (3.0 * rng.uniform(), 2.0 * rng.uniform()))
        .collect();
    let plane = Mat::from_fn(n, 3, |i, j| {
        let (a, b) = u[i];
        [0.6 * a + 0.48 * b, 0.8 * a - 0.36 * b, 0.8 * b][j]
    });
    let cylinder = Mat::from_fn(n, 3, |i, j| {
        let (a, b) = u[i];
        [a.cos(), a.sin(), b][j]
    });
    let coords = [
        u.iter().map(|p| p.0).collect::<Vec<_>>(),
        u.iter().map(|p| p.1).collect(),
    ];
    for (method, plane_floor, cylinder_floor) in [
        (LleMethod::Standard, 0.99, 0.99),
        (LleMethod::modified(), 0.99999, 0.9999),
        (LleMethod::hessian(), 1.0 - 1e-12, 0.9999),
        (LleMethod::Ltsa, 1.0 - 1e-12, 0.9999),
    ] {
        for (surface, x, floor) in [
            ("plane", &plane, plane_floor),
            ("cylinder", &cylinder, cylinder_floor),
        ] {
            let m = LocallyLinearEmbedding {
                n_neighbors: 12,
                method,
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap();
            let r2 = coords
                .iter()
                .map(|c| affine_r2(m.embedding(), c))
                .fold(1.0, f64::min);
            println!(
                "{} on the {surface}: 1 − R² = {:.2e}",
                method.name(),
                1.0 - r2
            );
            assert!(r2 >= floor, "{} on the {surface}: R² {r2}", method.name());
        }
    }
}

#[test]
fn hessian_and_modified_refuse_what_they_cannot_fit() {
    use oose::methods::lle::LleMethod;
    use oose::model::method::Method;
    use oose::model::params::Values;
    let x = roll(80, 8);
    let fit = |k, d, method| {
        LocallyLinearEmbedding {
            n_neighbors: k,
            n_components: d,
            method,
            ..Default::default()
        }
        .fit(x.as_ref())
    };
    // Hessian LLE needs k > d(d+3)/2: 5 for d = 2, 9 for d = 3.
    for (k, d) in [(5, 2), (9, 3)] {
        match fit(k, d, LleMethod::hessian()) {
            Err(Error::InvalidParameter { name, reason }) => {
                assert_eq!(name, "n_neighbors");
                assert!(reason.contains(&format!("d(d+3)/2 = {k}")), "{reason}");
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
    assert!(fit(6, 2, LleMethod::hessian()).is_ok());
    // More components than input dimensions.
    for method in [LleMethod::hessian(), LleMethod::modified()] {
        match fit(20, 4, method) {
            Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, "n_components"),
            other => panic!("{:?}", other.map(|_| ())),
        }
    }
    // Tolerances: negative or not finite, named; each kept with its method.
    for (name, v) in [("hessian_tol", -1.0), ("modified_tol", f64::NAN)] {
        match LocallyLinearEmbedding::from_values(&Values::new().with(name, v)) {
            Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{other:?}"),
        }
    }
    let p = LocallyLinearEmbedding::from_values(
        &Values::new()
            .with("method", "hessian")
            .with("hessian_tol", 0.5),
    )
    .unwrap();
    assert_eq!(p.method, LleMethod::Hessian { tol: 0.5 });
    // Duplicates: a point whose neighbours all coincide with it has nothing to weigh.
    let mut dup = roll(40, 9);
    for i in 1..4 {
        for j in 0..3 {
            dup[(i, j)] = dup[(0, j)];
        }
    }
    let modified = LocallyLinearEmbedding {
        n_neighbors: 3,
        method: LleMethod::modified(),
        ..Default::default()
    };
    match modified.fit(dup.as_ref()) {
        Err(Error::InvalidParameter { name, reason }) => {
            assert_eq!(name, "n_neighbors");
            assert!(reason.contains("coincides"), "{reason}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// `parts` Swiss rolls of 150 points, 1000 apart.
fn apart(parts: usize) -> Mat<f64> {
    let rolls: Vec<Mat<f64>> = (0..parts).map(|p| roll(150, p as u64 + 1)).collect();
    Mat::from_fn(150 * parts, 3, |i, j| {
        rolls[i / 150][(i % 150, j)]
            + if j == 0 {
                1000.0 * (i / 150) as f64
            } else {
                0.0
            }
    })
}

#[test]
fn groups_the_weights_cannot_tie_together_are_warned_or_refused() {
    // Two rolls apart: M's null space is the constant and the rolls' indicator, so the
    // first coordinate is constant on each roll and tells them apart; the fit says so.
    let two = LocallyLinearEmbedding {
        n_neighbors: 10,
        n_components: 2,
        ..Default::default()
    }
    .fit(apart(2).as_ref())
    .unwrap();
    assert_eq!(two.fit_warnings().len(), 1);
    assert!(
        two.fit_warnings()[0].contains(
            "2 closed groups (each point's neighbours inside its own group), sizes [150, 150]"
        ),
        "{:?}",
        two.fit_warnings()
    );
    let y = two.embedding();
    let scale = (0..300).map(|i| y[(i, 0)].abs()).fold(0.0, f64::max);
    for part in [0..150, 150..300] {
        let (lo, hi) = part
            .clone()
            .map(|i| y[(i, 0)])
            .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        // (To the solver's accuracy next to eigenvalues of about 1e-9: 4e-7 here.)
        assert!(hi - lo <= 1e-5 * scale, "{part:?}: {lo} … {hi}");
    }
    assert!((y[(0, 0)] - y[(150, 0)]).abs() > 0.5 * scale);
    // Three: a two-dimensional null space beyond the constant, in any rotation.
    for method in [
        LleMethod::Standard,
        LleMethod::modified(),
        LleMethod::Ltsa,
        LleMethod::hessian(),
    ] {
        let p = LocallyLinearEmbedding {
            n_neighbors: 10,
            n_components: 2,
            method,
            ..Default::default()
        };
        match p.fit(apart(3).as_ref()) {
            Err(Error::InvalidParameter {
                name: "n_neighbors",
                reason,
            }) => assert!(reason.contains("[150, 150, 150]"), "{method:?}: {reason}"),
            other => panic!("{method:?}: {:?}", other.map(|_| ())),
        }
    }
}
