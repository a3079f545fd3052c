//! The contract over the registry (DESIGN.md "One contract for every method"): for every
//! registered method and every configuration it declares, checked through the
//! type-erased model only, so a new method is covered by registering it.
//!
//! - extend(training points) = the training embedding, to 1e-10 relative, where the
//!   configuration claims exactness;
//! - rows are sample-wise where claimed: a batch, its reverse and each row alone give
//!   the same bits;
//! - the model file round trip gives the same model and the same extension, bitwise;
//! - asked for the coordinates only, the same coordinates bitwise, and no diagnostics;
//! - restricted reconstruction where declared, and `optimize` where a model takes it:
//!   sample-wise and round-tripped like projection (restricted reconstruction is not
//!   the training row: it also matches the norm β);
//! - bad input is a typed error: NaN (naming row and column), a wrong width, empty
//!   training data; an unknown parameter and an unsupported extension option are
//!   refused by name.

use oose::error::Error;
use oose::extend::{Extension, Strategy};
use oose::faer::{Mat, MatRef};
use oose::methods::diffusion_maps::Density;
use oose::methods::OutOfSample;
use oose::model::params::{Value, Values};
use oose::model::{ExtendOptions, Input, InputKinds, MethodInfo, Model, METHODS};

/// Three well-separated blobs of an S-curve: connected kNN graphs, and clusters.
fn points() -> (Mat<f64>, Mat<f64>) {
    let data = oose::datasets::s_curve(140, 0.02, 11).points;
    let x = data.as_ref().subrows(0, 120).to_owned();
    let z = data.as_ref().subrows(120, 20).to_owned();
    (x, z)
}

fn values_of(x: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(x.nrows(), 2, |i, j| {
        if j == 0 {
            (1.3 * x[(i, 0)]).sin() + x[(i, 2)]
        } else {
            x[(i, 1)] * x[(i, 2)]
        }
    })
}

fn fit(m: &MethodInfo, v: &Values, x: MatRef<'_, f64>, f: MatRef<'_, f64>) -> oose::Result<Model> {
    let input = match m.input {
        InputKinds::Values => Input::Values {
            points: x,
            values: f,
        },
        _ => Input::Points(x),
    };
    (m.fit)(v, input)
}

fn rel(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (a - b).norm_max() / b.norm_max().max(1e-300)
}

fn bits(e: &Extension) -> Vec<u64> {
    let mut v: Vec<u64> = (0..e.coordinates.ncols())
        .flat_map(|j| (0..e.coordinates.nrows()).map(move |i| (i, j)))
        .map(|(i, j)| e.coordinates[(i, j)].to_bits())
        .collect();
    v.extend(e.residual.iter().map(|x| x.to_bits()));
    v.extend(e.reconstruction_error.iter().map(|x| x.to_bits()));
    for c in &e.extra {
        v.extend(c.values.iter().map(|x| x.to_bits()));
    }
    v
}

/// Row `i`'s coordinates (bits) and diagnostics (values).
fn row(e: &Extension, i: usize) -> (Vec<u64>, Vec<f64>) {
    let coords = (0..e.coordinates.ncols())
        .map(|j| e.coordinates[(i, j)].to_bits())
        .collect();
    let mut diag = vec![e.residual[i], e.reconstruction_error[i]];
    diag.extend(e.extra.iter().map(|c| c.values[i]));
    (coords, diag)
}

/// Coordinates bitwise; diagnostics bitwise, or (the residual of a pivoted Cholesky
/// factor, whose blocked triangular solve sums in an order that depends on the number
/// of rows solved together) equal to round-off: 1e-9 of the scale of k(z, z) (the
/// power function P = sqrt(k₀) turns an absolute error δ of k₀ into δ/2P, so round-off
/// grows where k₀ is small). Returns whether the diagnostics were bitwise equal.
fn same_row(a: &Extension, i: usize, b: &Extension, j: usize, tag: &str) -> bool {
    let ((ca, da), (cb, db)) = (row(a, i), row(b, j));
    assert_eq!(ca, cb, "{tag}: coordinates of row {i} depend on the batch");
    let mut bitwise = true;
    for (k, (x, y)) in da.iter().zip(&db).enumerate() {
        if x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan()) {
            bitwise = false;
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                "{tag}: diagnostic {k} of row {i}: {x:e} vs {y:e}"
            );
        }
    }
    bitwise
}

fn extend(model: &Model, z: MatRef<'_, f64>, s: Strategy) -> Extension {
    let opts = ExtendOptions {
        strategy: Some(s),
        ..Default::default()
    };
    model
        .extend_options(z, &opts)
        .unwrap_or_else(|e| panic!("{}: {e}", model.method()))
}

#[test]
fn every_registered_configuration_keeps_the_contract() {
    let (x, z) = points();
    let fx = values_of(x.as_ref());
    let mut checked = 0;
    let mut round_off_only = vec![];
    for m in METHODS {
        let configs = (m.configurations)();
        assert!(!configs.is_empty(), "{} declares no configuration", m.name);
        for c in configs {
            let tag = format!("{} [{}]", m.name, c.label);
            let model = fit(m, &c.values, x.as_ref(), fx.as_ref())
                .unwrap_or_else(|e| panic!("{tag}: fit: {e}"));
            assert_eq!(model.method(), m.name, "{tag}");
            let emb = model.embedding();
            assert_eq!(emb.nrows(), x.nrows(), "{tag}: one row per training point");

            let mut strategies = vec![Strategy::Projection];
            if c.restricted {
                strategies.push(Strategy::Restricted);
            }
            // The neighbour embeddings' second placement (t-SNE, UMAP).
            let optimize = ExtendOptions {
                strategy: Some(Strategy::Optimize),
                ..Default::default()
            };
            if model.check_options(&optimize).is_ok() {
                strategies.push(Strategy::Optimize);
            }
            for s in strategies {
                let tag = format!("{tag} {s:?}");
                // Restricted reconstruction also matches the norm β, which the d kept
                // components of a training point do not reach: exact for projection only.
                if c.exact_on_training && s == Strategy::Projection {
                    let e = extend(&model, x.as_ref(), s);
                    let err = rel(e.coordinates.as_ref(), emb);
                    assert!(err < 1e-10, "{tag}: extend(train) off by {err:e}");
                }
                let batch = extend(&model, z.as_ref(), s);
                assert_eq!(batch.len(), z.nrows(), "{tag}");
                let only = ExtendOptions {
                    strategy: Some(s),
                    coordinates_only: true,
                    ..Default::default()
                };
                let fast = model.extend_options(z.as_ref(), &only).unwrap();
                let coordinate_bits = |e: &Extension| -> Vec<u64> {
                    let c = &e.coordinates;
                    (0..c.ncols())
                        .flat_map(|j| c.col_as_slice(j).iter().map(|v| v.to_bits()))
                        .collect()
                };
                assert_eq!(
                    coordinate_bits(&fast),
                    coordinate_bits(&batch),
                    "{tag}: coordinates only"
                );
                assert!(
                    fast.residual
                        .iter()
                        .chain(&fast.reconstruction_error)
                        .all(|v| v.is_nan())
                        && fast.extra.is_empty()
                        && fast.residual.len() == z.nrows(),
                    "{tag}: coordinates only, yet diagnostics"
                );
                if c.samplewise {
                    let m = z.nrows();
                    let rev = Mat::from_fn(m, z.ncols(), |i, j| z[(m - 1 - i, j)]);
                    let back = extend(&model, rev.as_ref(), s);
                    let mut bitwise = true;
                    for i in 0..m {
                        bitwise &= same_row(&batch, i, &back, m - 1 - i, &tag);
                        let alone = extend(&model, z.as_ref().subrows(i, 1), s);
                        bitwise &= same_row(&batch, i, &alone, 0, &tag);
                    }
                    if !bitwise {
                        round_off_only.push(tag.clone());
                    }
                }
                // The file round trip: the same model, the same numbers.
                let back = Model::from_bytes(&model.to_bytes()).unwrap();
                assert!(back == model, "{tag}: round trip changed the model");
                assert_eq!(bits(&extend(&back, z.as_ref(), s)), bits(&batch), "{tag}");
            }

            // Bad input: typed errors that name the culprit.
            let mut bad = z.clone();
            bad[(3, 1)] = f64::NAN;
            match model.extend(bad.as_ref()) {
                Err(Error::NonFinite { row, col, .. }) => {
                    assert_eq!((row, col), (3, 1), "{tag}")
                }
                other => panic!("{tag}: NaN gave {other:?}"),
            }
            let wide = Mat::<f64>::zeros(2, x.ncols() + 2);
            assert!(
                matches!(model.extend(wide.as_ref()), Err(Error::Shape { .. })),
                "{tag}: a wrong width must be a shape error"
            );
            let empty = Mat::<f64>::zeros(0, x.ncols());
            assert!(
                matches!(
                    fit(m, &c.values, empty.as_ref(), fx.as_ref().subrows(0, 0)),
                    Err(Error::Empty { .. }) | Err(Error::InvalidParameter { .. })
                ),
                "{tag}: empty training data must be refused"
            );
            checked += 1;
        }
        // An unknown parameter is refused, named.
        let e = fit(
            m,
            &Values::new().with("no_such", Value::Int(1)),
            x.as_ref(),
            fx.as_ref(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no_such"), "{}: {e}", m.name);
    }
    assert!(checked >= 25, "only {checked} configurations");
    println!(
        "{checked} configurations; diagnostics sample-wise to round-off only (not bitwise): {}",
        round_off_only.join(", ")
    );
}

#[test]
fn declared_parameters_round_trip_through_values() {
    for m in METHODS {
        let defaults = (m.defaults)();
        let mut names: Vec<&str> = m.specs.iter().map(|s| s.name).collect();
        // The model, not the method, applies the metric: listed after the specs.
        if m.metric {
            names.push("metric");
        }
        let listed: Vec<&str> = defaults.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, listed, "{}: specs and values disagree", m.name);
        let mut v = Values::new();
        for (k, val) in &defaults {
            v.set(k, val.clone());
        }
        assert_eq!((m.resolve)(&v).unwrap(), defaults, "{}", m.name);
        for c in (m.configurations)() {
            let full = (m.resolve)(&c.values).unwrap();
            for k in c.values.names() {
                let want = full.iter().find(|(n, _)| n == &k);
                assert!(want.is_some(), "{} [{}]: {k} not listed", m.name, c.label);
            }
        }
    }
}

#[test]
fn unsupported_extension_options_are_refused_by_name() {
    let (x, z) = points();
    let fx = values_of(x.as_ref());
    for m in METHODS {
        let model = fit(m, &Values::new(), x.as_ref(), fx.as_ref()).unwrap();
        let f = model.fitted();
        let density = ExtendOptions {
            density: Some(Density::Training),
            ..Default::default()
        };
        let restricted = ExtendOptions {
            strategy: Some(Strategy::Restricted),
            ..Default::default()
        };
        let diag = [1.0; 20];
        let diagonal = ExtendOptions {
            kernel_diagonal: Some(&diag),
            ..Default::default()
        };
        for (opts, name) in [
            (density, "density"),
            (restricted, "strategy"),
            (diagonal, "kernel_diagonal"),
        ] {
            let supported = f.check_options(&opts).is_ok();
            let extended = model.extend_options(z.as_ref(), &opts);
            match extended {
                Err(Error::InvalidParameter { name: n, .. }) => {
                    assert_eq!(n, name, "{}", m.name);
                    assert!(!supported, "{}: check_options and extend disagree", m.name);
                }
                Ok(_) => assert!(supported, "{}: {name} accepted but not declared", m.name),
                Err(e) => assert!(supported, "{}: {name}: {e}", m.name),
            }
        }
        assert_eq!(
            f.inner_product().is_some(),
            f.check_options(&restricted_opts()).is_ok(),
            "{}: restricted reconstruction and joint reconstruction go together",
            m.name
        );
    }
}

fn restricted_opts() -> ExtendOptions<'static> {
    ExtendOptions {
        strategy: Some(Strategy::Restricted),
        ..Default::default()
    }
}

/// The inverse transform over the registry: every method that embeds the training
/// points it keeps maps its training embedding back to those points exactly, is
/// sample-wise, and has a power function that is 0 there and grows away (the
/// autoencoders' decoder: sample-wise, lossy); the others refuse by name.
#[test]
fn the_inverse_transform_returns_training_points_or_is_refused_by_name() {
    let (x, _) = points();
    let f = values_of(x.as_ref());
    let mut inverted = Vec::new();
    for m in METHODS {
        let v = match m.name {
            "tsne" => Values::new()
                .with("perplexity", 10.0)
                .with("max_iter", 100usize),
            "umap" => Values::new().with("n_epochs", 30usize),
            _ => Values::new(),
        };
        let model =
            fit(m, &v, x.as_ref(), f.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", m.name));
        let y = model.embedding().to_owned();
        match model.inverse_transform(y.as_ref()) {
            // The autoencoders' inverse is their decoder, a lossy pre-image (maths §16):
            // not exact on training points, no power function (NaN), sample-wise.
            Ok(back) if matches!(m.name, "autoencoder" | "vae") => {
                assert!(back
                    .coordinates
                    .col_iter()
                    .all(|c| c.iter().all(|v| v.is_finite())));
                assert!(back.residual.iter().all(|p| p.is_nan()), "{}", m.name);
                let one = model.inverse_transform(y.as_ref().subrows(4, 1)).unwrap();
                assert!(
                    one.coordinates.row(0) == back.coordinates.row(4),
                    "{}",
                    m.name
                );
                inverted.push(m.name);
            }
            Ok(back) => {
                let kept = model.fitted().training_points().unwrap();
                assert!(
                    back.coordinates == kept,
                    "{}: training points not returned",
                    m.name
                );
                assert!(back.residual.iter().all(|&p| p == 0.0), "{}", m.name);
                // Halfway between two training embedding points: not a training
                // point, a positive power function, the same bits alone and in a batch.
                let mid = Mat::from_fn(3, y.ncols(), |i, j| 0.5 * (y[(i, j)] + y[(i + 7, j)]));
                let all = model.inverse_transform(mid.as_ref()).unwrap();
                let one = model.inverse_transform(mid.as_ref().subrows(1, 1)).unwrap();
                assert!(
                    all.residual.iter().all(|&p| p > 0.0),
                    "{}: {:?}",
                    m.name,
                    all.residual
                );
                assert_eq!(
                    bits(&one),
                    bits(&Extension {
                        coordinates: all.coordinates.as_ref().subrows(1, 1).to_owned(),
                        residual: vec![all.residual[1]],
                        reconstruction_error: vec![all.reconstruction_error[1]],
                        extra: vec![],
                    }),
                    "{}: inverse not sample-wise",
                    m.name
                );
                let wrong = Mat::<f64>::zeros(2, y.ncols() + 1);
                assert!(matches!(
                    model.inverse_transform(wrong.as_ref()),
                    Err(Error::Shape { .. })
                ));
                inverted.push(m.name);
            }
            Err(e) => assert!(
                matches!(e, Error::Unsupported(_)) && e.to_string().contains(m.name),
                "{}: {e}",
                m.name
            ),
        }
    }
    assert_eq!(
        inverted,
        [
            "kpca",
            "mds",
            "isomap",
            "dmaps",
            "eigenmaps",
            "lle",
            "tsne",
            "umap",
            "mvu",
            "autoencoder",
            "vae"
        ]
    );
}
