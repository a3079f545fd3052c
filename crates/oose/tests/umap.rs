//! UMAP (maths §13): the fit separates clusters and is deterministic whatever the
//! number of threads, both extensions are sample-wise and `interpolation` is exact on
//! training points, the inverse transform returns the training points with a power
//! function that grows away from the data, and bad input is a typed error or a
//! documented handling, never NaN.

use oose::error::Error;
use oose::extend::Strategy;
use oose::faer::Mat;
use oose::methods::umap::{OptimizeStart, Umap, UmapInit};
use oose::methods::OutOfSample;
use oose::model::{ExtendOptions, Fitted, Model};

mod common;
use common::{blobs, knn_accuracy};

fn info(m: &impl Fitted) -> Vec<(String, String)> {
    let mut v = Vec::new();
    m.info(&mut v);
    v
}

fn get(info: &[(String, String)], key: &str) -> String {
    info.iter()
        .find(|e| e.0 == key)
        .unwrap_or_else(|| panic!("no {key} in {info:?}"))
        .1
        .clone()
}

fn quick() -> Umap {
    Umap {
        n_neighbors: 10,
        n_epochs: Some(150),
        ..Default::default()
    }
}

#[test]
fn the_fit_separates_clusters_with_umap_learns_curve() {
    let (x, labels) = blobs(300, 4, 1);
    let m = Umap::default().fit(x.as_ref()).unwrap();
    assert!(knn_accuracy(m.embedding(), &labels) > 0.99);
    // umap-learn's find_ab_params(1.0, 0.1): a = 1.5769434, b = 0.8950608.
    let (a, b) = m.ab();
    assert!(
        (a - 1.576_943_4).abs() < 1e-4 && (b - 0.895_060_8).abs() < 1e-4,
        "{a} {b}"
    );
    assert_eq!(m.epochs(), 500);
    let i = info(&m);
    assert_eq!(get(&i, "init_used"), "spectral");
    assert_eq!(get(&i, "knn_graph"), "exact");
    // The blobs are far apart: the 10-NN graph has one component per blob, which the
    // spectral initialisation lays side by side.
    assert_eq!(get(&i, "graph_components"), "4");
    assert!(m.embedding().is_all_finite());
}

#[test]
fn interpolation_is_exact_on_training_points_and_both_strategies_are_sample_wise() {
    let (x, _) = blobs(240, 3, 2);
    let (train, z) = (x.as_ref().subrows(0, 200), x.as_ref().subrows(200, 40));
    let m: Model = quick().fit(train).unwrap().into();
    // The novelty calibration taken from the fit's (exact) kNN graph is the one a
    // separate search gives.
    let own = oose::diagnostics::novelty::Novelty::fit(train).unwrap();
    assert_eq!(m.novelty().unwrap().calibration(), own.calibration());
    let e = m.extend(train).unwrap();
    let y = m.embedding();
    let gap = (0..200)
        .flat_map(|i| (0..2).map(move |c| (i, c)))
        .map(|(i, c)| (e.coordinates[(i, c)] - y[(i, c)]).abs())
        .fold(0.0, f64::max);
    assert!(gap <= 1e-10, "{gap}");
    assert!(e.residual.iter().all(|r| *r == 0.0));
    for strategy in [Strategy::Interpolation, Strategy::Optimize] {
        let opts = ExtendOptions {
            strategy: Some(strategy),
            ..Default::default()
        };
        let batch = m.extend_options(z, &opts).unwrap();
        assert!(batch.coordinates.as_ref().is_all_finite());
        for i in [0, 17, 39] {
            let one = m.extend_options(z.subrows(i, 1), &opts).unwrap();
            for c in 0..2 {
                assert_eq!(
                    one.coordinates[(0, c)].to_bits(),
                    batch.coordinates[(i, c)].to_bits(),
                    "{strategy:?} row {i}"
                );
            }
        }
        // The batch in reverse order: each row where it was.
        let rev = Mat::from_fn(40, 10, |i, j| z[(39 - i, j)]);
        let back = m.extend_options(rev.as_ref(), &opts).unwrap();
        for i in 0..40 {
            assert_eq!(back.coordinates.row(39 - i), batch.coordinates.row(i));
        }
    }
}

#[test]
fn new_points_land_with_their_cluster_and_far_points_are_unreliable() {
    let (x, labels) = blobs(300, 3, 3);
    let (train, z) = (x.as_ref().subrows(0, 240), x.as_ref().subrows(240, 60));
    let m = quick().fit(train).unwrap();
    let y = m.embedding();
    for start in [OptimizeStart::WeightedMean, OptimizeStart::Interpolation] {
        let m = Umap {
            optimize_start: start,
            ..quick()
        }
        .fit(train)
        .unwrap();
        let model: Model = m.into();
        for strategy in [Strategy::Interpolation, Strategy::Optimize] {
            let opts = ExtendOptions {
                strategy: Some(strategy),
                ..Default::default()
            };
            let e = model.extend_options(z, &opts).unwrap();
            // Each new point's nearest training point in the embedding has its label.
            let (idx, _) = oose::neighbors::knn(e.coordinates.as_ref(), y, 1, false);
            let right = (0..60)
                .filter(|&i| labels[idx[i][0]] == labels[240 + i])
                .count();
            assert_eq!(right, 60, "{start:?} {strategy:?}");
        }
    }
    let far = Mat::from_fn(1, 10, |_, _| 100.0);
    let near = m.extend(z).unwrap();
    let e = m.extend(far.as_ref()).unwrap();
    // In 10 dimensions a new point is about as far from its neighbours as they are
    // from each other: P² is well inside (0, 1) for the blobs' new points, 1 far away.
    let top = near.residual.iter().copied().fold(0.0, f64::max);
    assert!(
        top < 0.95 && e.residual[0] > 0.999,
        "{top} {:?}",
        e.residual
    );
}

#[test]
fn one_thread_and_two_give_the_same_bits() {
    use oose::neighbors::GraphMethod;
    // 1280 points: each of the SGD's 16 phases spans several parallel chunks of 32.
    let (x, _) = blobs(1300, 3, 4);
    let run = |threads, init, neighbors| {
        common::on_threads(threads, || {
            let m: Model = Umap {
                init,
                neighbors,
                ..quick()
            }
            .fit(x.as_ref().subrows(0, 1280))
            .unwrap()
            .into();
            let opts = ExtendOptions {
                strategy: Some(Strategy::Optimize),
                ..Default::default()
            };
            let z = x.as_ref().subrows(1280, 20);
            let e = m.extend_options(z, &opts).unwrap();
            (m.embedding().to_owned(), e.coordinates)
        })
    };
    for (init, neighbors) in [
        (UmapInit::Spectral, GraphMethod::Exact),
        (UmapInit::Random, GraphMethod::Approximate),
    ] {
        let (one, two) = (run(1, init, neighbors), run(2, init, neighbors));
        assert!(one.0 == two.0, "embedding: {init:?} {neighbors:?}");
        assert!(one.1 == two.1, "optimize: {init:?} {neighbors:?}");
        // Another seed gives another layout.
        if init == UmapInit::Spectral {
            let other = Umap { seed: 1, ..quick() }
                .fit(x.as_ref().subrows(0, 1280))
                .unwrap();
            assert!(other.embedding() != one.0.as_ref());
        }
    }
}

#[test]
fn data_far_from_unit_scale_fit_as_at_unit_scale() {
    // umap-learn's bisection for σ starts at 1 and counts the steps that bracket σ: at
    // a scale of 2¹⁰⁰ it stops short of σ. Rows beyond its reach are bisected in units
    // of a power of two (maths §13): data 2¹⁰⁰, 2²⁰⁰ and 2⁻¹⁵⁰ times as large fit to
    // the same bits and place new points scaled alike at the same coordinates
    // (`optimize` draws its negative samples from the row's bytes: other draws there).
    let (x, _) = blobs(240, 3, 5);
    let run = |e: i32| {
        let f = 2f64.powi(e);
        let xs = Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] * f);
        let m: Model = quick().fit(xs.as_ref().subrows(0, 200)).unwrap().into();
        let z = xs.as_ref().subrows(200, 40);
        let placed = m.extend(z).unwrap().coordinates;
        let opts = ExtendOptions {
            strategy: Some(Strategy::Optimize),
            ..Default::default()
        };
        let moved = m.extend_options(z, &opts).unwrap().coordinates;
        assert!(moved.is_all_finite());
        (m.embedding().to_owned(), placed)
    };
    let (big, bigger, tiny) = (run(100), run(200), run(-150));
    assert!(big == bigger && big == tiny);
    assert!(big.0.is_all_finite() && big.1.is_all_finite());
}

#[test]
fn the_inverse_transform_returns_training_points_and_its_power_function_grows_away() {
    let (x, _) = blobs(200, 2, 5);
    let m = quick().fit(x.as_ref()).unwrap();
    let back = m.inverse_transform(m.embedding()).unwrap();
    let gap = (0..200)
        .flat_map(|i| (0..10).map(move |c| (i, c)))
        .map(|(i, c)| (back.coordinates[(i, c)] - x[(i, c)]).abs())
        .fold(0.0, f64::max);
    assert!(gap <= 1e-8, "{gap}");
    assert!(back.residual.iter().all(|r| r.abs() < 1e-8));
    // Walking from a training embedding point straight away from the data: the power
    // function rises from 0 towards 1.
    let y = m.embedding();
    let (cx, cy) = (
        (0..200).map(|i| y[(i, 0)]).sum::<f64>() / 200.0,
        (0..200).map(|i| y[(i, 1)]).sum::<f64>() / 200.0,
    );
    let far = (0..200)
        .max_by(|&i, &j| {
            let r = |k: usize| (y[(k, 0)] - cx).hypot(y[(k, 1)] - cy);
            r(i).total_cmp(&r(j))
        })
        .unwrap();
    let (ux, uy) = (y[(far, 0)] - cx, y[(far, 1)] - cy);
    let len = ux.hypot(uy);
    let steps = [0.0, 0.5, 2.0, 8.0, 50.0];
    let path = Mat::from_fn(steps.len(), 2, |s, c| {
        let t = steps[s] / len;
        y[(far, c)] + t * if c == 0 { ux } else { uy }
    });
    let p = m.inverse_transform(path.as_ref()).unwrap().residual;
    assert!(p[0].abs() < 1e-8, "{p:?}");
    // (With the constant tail it is not monotone and tends to 1 + 1/(1ᵀK⁻¹1) > 1.)
    assert!(
        p[1] > 0.1 && p[2..].iter().all(|&v| v > p[1] && v > 0.99),
        "{p:?}"
    );
    // Through the model: the same, and refused by a method without an inverse.
    let model: Model = m.clone().into();
    let again = model.inverse_transform(path.as_ref()).unwrap();
    assert_eq!(again.residual, p);
    let e = model
        .inverse_transform(Mat::<f64>::zeros(1, 3).as_ref())
        .unwrap_err();
    assert!(e.to_string().contains("embedded points"), "{e}");
    let k = Model::fit(
        "spectral-clustering",
        &Default::default(),
        oose::model::Input::Points(x.as_ref()),
    )
    .unwrap();
    let e = k.inverse_transform(k.embedding()).unwrap_err();
    assert!(e.to_string().contains("inverse"), "{e}");
}

#[test]
fn bad_input_is_a_typed_error_naming_the_parameter() {
    let (x, _) = blobs(60, 2, 6);
    let param = |u: Umap| match u.fit(x.as_ref()) {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        param(Umap {
            n_neighbors: 1,
            ..quick()
        }),
        "n_neighbors"
    );
    // n_neighbors ≥ N is lowered to N − 1 with a warning (umap-learn's rule).
    let m = Umap {
        n_neighbors: 60,
        ..quick()
    }
    .fit(x.as_ref())
    .unwrap();
    use oose::model::Fitted;
    assert!(
        m.fit_warnings()[0].contains("lowered to N − 1 = 59"),
        "{:?}",
        m.fit_warnings()
    );
    assert!(m
        .param_values()
        .contains(&("n_neighbors", oose::model::params::Value::Int(59))));
    assert_eq!(
        param(Umap {
            min_dist: 2.0,
            spread: 1.0,
            ..quick()
        }),
        "min_dist"
    );
    assert_eq!(
        param(Umap {
            n_epochs: Some(0),
            ..quick()
        }),
        "n_epochs"
    );
    assert_eq!(
        param(Umap {
            n_components: 60,
            ..quick()
        }),
        "n_components"
    );
    let constant = Mat::from_fn(50, 3, |_, _| 1.5);
    let e = quick().fit(constant.as_ref()).unwrap_err();
    assert!(
        e.to_string()
            .contains("training data: all 50 points coincide: UMAP has nothing to embed"),
        "{e}"
    );
    let mut nan = x.clone();
    nan[(7, 2)] = f64::NAN;
    let e = quick().fit(nan.as_ref()).unwrap_err();
    assert!(e.to_string().contains("row 7"), "{e}");
    // Duplicated points (ρ = 0 for whole groups) embed and extend without NaN.
    let dup = Mat::from_fn(90, 3, |i, j| ((i / 3) * 3 + j) as f64 * 0.37 % 5.0);
    let m = quick().fit(dup.as_ref()).unwrap();
    assert!(m.embedding().is_all_finite());
    let e = m.extend(dup.as_ref().subrows(0, 6)).unwrap();
    assert!(e.coordinates.as_ref().is_all_finite());
    let model: Model = m.into();
    let opts = ExtendOptions {
        strategy: Some(Strategy::Optimize),
        ..Default::default()
    };
    let e = model
        .extend_options(dup.as_ref().subrows(0, 6), &opts)
        .unwrap();
    assert!(e.coordinates.as_ref().is_all_finite());
    // Other strategies are refused by name.
    let e = model
        .extend_options(
            dup.as_ref().subrows(0, 2),
            &ExtendOptions {
                strategy: Some(Strategy::Restricted),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("restricted"), "{e}");
}

/// Components too small for the spectral initialisation are placed at random and said
/// so in the model info; the embedding stays finite.
#[test]
fn a_graph_with_tiny_components_is_handled_and_reported() {
    let (x, _) = blobs(100, 2, 7);
    // Two far-away pairs: components of 2 points with n_neighbors = 2.
    let mut rows: Vec<Vec<f64>> = (0..100)
        .map(|i| (0..10).map(|j| x[(i, j)]).collect())
        .collect();
    for (t, c) in [(0.0, 500.0), (0.1, 500.0), (0.0, -500.0), (0.1, -500.0)] {
        rows.push((0..10).map(|j| if j == 0 { c + t } else { c }).collect());
    }
    let x = Mat::from_fn(104, 10, |i, j| rows[i][j]);
    let m = Umap {
        n_neighbors: 2,
        ..quick()
    }
    .fit(x.as_ref())
    .unwrap();
    let i = info(&m);
    let components: usize = get(&i, "graph_components").parse().unwrap();
    assert!(components >= 3, "{i:?}");
    assert!(get(&i, "init_used").contains("at random"), "{i:?}");
    assert!(
        get(&i, "init_note").contains("fewer than d + 2 points"),
        "{i:?}"
    );
    assert!(m.embedding().is_all_finite());
}

#[test]
fn the_defaults_fit_four_points_lowering_the_neighbour_counts_with_warnings() {
    let (x, _) = blobs(4, 2, 6);
    let m = Umap::default().fit(x.as_ref()).unwrap();
    common::assert_lowered_on_four_points(&m, x.as_ref(), "lowered to N − 1 = 3");
    // Not lowered where it fits: no warning.
    let (y, _) = blobs(60, 2, 6);
    assert!(quick().fit(y.as_ref()).unwrap().fit_warnings().is_empty());
    // 0 stays an error.
    let e = Umap {
        transform_neighbors: 0,
        ..quick()
    }
    .fit(y.as_ref())
    .unwrap_err();
    assert_eq!(common::refused_param(&e), "transform_neighbors");
}

#[test]
fn points_that_coincide_with_all_their_neighbours_name_n_neighbors() {
    // Two distinct points, 40 copies each: every point's 14 nearest others are copies.
    // Not "all points coincide" (they do not): the n_neighbors that gets past them.
    let x = Mat::from_fn(80, 3, |i, _| (i % 2) as f64);
    let e = Umap::default().fit(x.as_ref()).unwrap_err();
    assert_eq!(common::refused_param(&e), "n_neighbors");
    assert!(
        e.to_string().contains(
            "the 80 points are 2 distinct ones, each repeated at least 40 times), so UMAP has \
             no distance to work with; give n_neighbors above 40"
        ),
        "{e}"
    );
    let m = Umap {
        n_neighbors: 41,
        ..quick()
    }
    .fit(x.as_ref())
    .unwrap();
    assert!(m.embedding().is_all_finite());
}
