//! The `metric` of the neighbour methods (maths §19) through the registry: a cosine
//! model is the Euclidean model of the unit rows, new rows are mapped the same way
//! (scale-free: a row times a power of two lands on the same bits), it is stored in
//! the model file, and methods without a metric refuse it by name.

use oose::faer::{Mat, MatRef};
use oose::methods::OutOfSample;
use oose::metric::Metric;
use oose::model::params::{Value, Values};
use oose::model::{Input, Model, METHODS};
use oose::rng::Rng;

/// Small, quick parameters per method (the defaults of the rest).
fn values(name: &str) -> Values {
    let v = Values::new();
    match name {
        "tsne" => v.with("perplexity", 10.0).with("max_iter", 250usize),
        "umap" => v.with("n_neighbors", 10usize).with("n_epochs", 60usize),
        "lle" => v.with("n_neighbors", 10usize),
        "spectral-clustering" => v.with("n_clusters", 3usize),
        _ => v,
    }
}

fn scaled(x: MatRef<'_, f64>, f: impl Fn(usize) -> f64) -> Mat<f64> {
    Mat::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] * f(i))
}

fn same(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    (a.nrows(), a.ncols()) == (b.nrows(), b.ncols())
        && (0..a.nrows())
            .all(|i| (0..a.ncols()).all(|j| a[(i, j)].to_bits() == b[(i, j)].to_bits()))
}

/// An S-curve moved off the origin (every row has a direction).
fn data(n: usize, seed: u64) -> Mat<f64> {
    let x = oose::datasets::s_curve(n, 0.05, seed).points;
    Mat::from_fn(n, 3, |i, j| x[(i, j)] + [3.0, 1.0, 2.5][j])
}

#[test]
fn a_cosine_model_is_the_euclidean_model_of_the_unit_rows_and_scale_free() {
    let x = data(240, 1);
    let (train, new) = (x.as_ref().subrows(0, 200), x.as_ref().subrows(200, 40));
    let unit = Metric::Cosine.prepare("x", train).unwrap().unwrap();
    let unit_new = Metric::Cosine.prepare("x", new).unwrap().unwrap();
    // Powers of two: the unit rows are the same bits.
    let train_scaled = scaled(train, |i| [0.25, 8.0, 1.0][i % 3]);
    let new_scaled = scaled(new, |i| [4.0, 0.5][i % 2]);
    let takes: Vec<&str> = METHODS
        .iter()
        .filter(|m| m.metric)
        .map(|m| m.name)
        .collect();
    assert_eq!(
        takes,
        [
            "isomap",
            "dmaps",
            "eigenmaps",
            "spectral-clustering",
            "lle",
            "tsne",
            "umap",
            "mvu"
        ]
    );
    for name in takes {
        let cos = Model::fit(
            name,
            &values(name).with("metric", "cosine"),
            Input::Points(train_scaled.as_ref()),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let euc = Model::fit(name, &values(name), Input::Points(unit.as_ref())).unwrap();
        assert_eq!(cos.metric(), Metric::Cosine);
        assert!(
            same(cos.embedding(), euc.embedding()),
            "{name}: training embedding"
        );
        let a = cos.extend(new_scaled.as_ref()).unwrap();
        let b = euc.extend(unit_new.as_ref()).unwrap();
        assert!(
            same(a.coordinates.as_ref(), b.coordinates.as_ref()),
            "{name}: extension"
        );
        let col = |e: &oose::extend::Extension, c: &str| {
            e.extra.iter().find(|x| x.name == c).unwrap().values.clone()
        };
        assert_eq!(col(&a, "novelty"), col(&b, "novelty"), "{name}: novelty");
        // Training rows at another scale: the same bits as at the fit's scale, and
        // where the fit put them.
        let back = cos.extend(scaled(train, |_| 2.0).as_ref()).unwrap();
        let fit_scale = cos.extend(train_scaled.as_ref()).unwrap();
        assert!(
            same(back.coordinates.as_ref(), fit_scale.coordinates.as_ref()),
            "{name}: training rows"
        );
        let err = (back.coordinates.as_ref() - cos.embedding()).norm_max();
        // (LLE and MVU's barycentric extension is not exact on training points, maths
        // §14–15.)
        assert!(
            name == "lle" || name == "mvu" || err <= 1e-10 * cos.embedding().norm_max(),
            "{name}: {err:e}"
        );
        // The metric is part of the model: file, parameters, info.
        let again = Model::from_bytes(&cos.to_bytes()).unwrap();
        assert_eq!(again, cos);
        assert!(cos
            .params()
            .contains(&("metric", Value::Str("cosine".into()))));
        assert!(euc
            .params()
            .contains(&("metric", Value::Str("euclidean".into()))));
        assert!(cos.info().contains(&("metric".into(), "cosine".into())));
    }
}

#[test]
fn metric_is_refused_by_methods_without_one_and_checked() {
    let x = data(60, 2);
    for m in METHODS.iter().filter(|m| !m.metric) {
        let e = Model::fit(
            m.name,
            &Values::new().with("metric", "cosine"),
            Input::Points(x.as_ref()),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("metric") && e.to_string().contains("isomap"),
            "{}: {e}",
            m.name
        );
    }
    let e = Model::fit(
        "isomap",
        &Values::new().with("metric", "manhattan"),
        Input::Points(x.as_ref()),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("euclidean, cosine, correlation"),
        "{e}"
    );
    // A row without a direction is named, at fit and at extension.
    let mut z = x.clone();
    z.as_mut().row_mut(7).fill(0.0);
    let e = Model::fit(
        "isomap",
        &Values::new().with("metric", "cosine"),
        Input::Points(z.as_ref()),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("training data") && e.to_string().contains("row 7"),
        "{e}"
    );
    let m = Model::fit(
        "isomap",
        &Values::new().with("metric", "correlation"),
        Input::Points(x.as_ref()),
    )
    .unwrap();
    let flat = Mat::from_fn(3, 3, |i, _| if i == 2 { 5.0 } else { i as f64 + 1.0 });
    let e = m.extend(flat.as_ref()).unwrap_err();
    assert!(
        e.to_string().contains("new points") && e.to_string().contains("row 0"),
        "{e}"
    );
}

#[test]
fn cosine_spectral_clustering_separates_directions_at_any_scale() {
    // Three directions in R⁶, each point at a random length from 0.2 to 30: the
    // Euclidean graph joins the rays where they meet near the origin; by direction
    // they are three clusters.
    let mut rng = Rng::new(5);
    let dirs = rng.normal_mat(3, 6);
    let n = 300;
    let truth: Vec<usize> = (0..n).map(|i| i % 3).collect();
    let x = {
        let mut x = Mat::<f64>::zeros(n, 6);
        for i in 0..n {
            let len = 0.2 + 29.8 * rng.uniform();
            for j in 0..6 {
                x[(i, j)] = len * (dirs[(truth[i], j)] + 0.08 * rng.normal());
            }
        }
        x
    };
    let fit = |metric: &str| {
        let v = Values::new()
            .with("n_clusters", 3usize)
            .with("metric", metric);
        Model::fit("spectral-clustering", &v, Input::Points(x.as_ref())).unwrap()
    };
    let agreement = |m: &Model| {
        let labels = m.fitted().labels().unwrap().to_vec();
        // Best match of cluster labels to the truth (3! permutations).
        let perms = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        perms
            .iter()
            .map(|p| (0..n).filter(|&i| p[labels[i]] == truth[i]).count())
            .max()
            .unwrap()
    };
    let cos = agreement(&fit("cosine"));
    let euc = agreement(&fit("euclidean"));
    eprintln!("spectral clustering of three rays: cosine {cos}/{n}, euclidean {euc}/{n}");
    assert_eq!(cos, n);
    assert!(euc < n, "the Euclidean graph separated the rays too: {euc}");
}
