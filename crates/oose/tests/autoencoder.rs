//! Autoencoders (maths §16): the linear autoencoder is PCA (the seed's remark), the
//! encoder is the extension, training is deterministic, and bad input is refused.

mod common;
use oose::faer::Mat;
use oose::methods::autoencoder::{Activation, Autoencoder, Precision, VariationalAutoencoder};
use oose::methods::OutOfSample;
use oose::prelude::Error;

/// 400 correlated Gaussian points in R⁶, standardised (so the autoencoder's own
/// standardisation leaves them as they are, up to rounding).
fn correlated() -> Mat<f64> {
    let mut rng = oose::rng::Rng::new(3);
    let g = rng.normal_mat(400, 6);
    let a = Mat::from_fn(6, 6, |i, j| {
        if i == j {
            3.0 - 0.4 * i as f64
        } else {
            0.3 * ((i * 7 + j * 3) % 5) as f64 - 0.6
        }
    });
    let x = &g * &a;
    let n = x.nrows() as f64;
    let mean: Vec<f64> = (0..6)
        .map(|c| (0..400).map(|i| x[(i, c)]).sum::<f64>() / n)
        .collect();
    let sd: Vec<f64> = (0..6)
        .map(|c| ((0..400).map(|i| (x[(i, c)] - mean[c]).powi(2)).sum::<f64>() / n).sqrt())
        .collect();
    Mat::from_fn(400, 6, |i, c| (x[(i, c)] - mean[c]) / sd[c])
}

/// Orthonormal basis (6×d) of the top-d left singular vectors of the columns of `m`ᵀ
/// (m: n×6 rows), i.e. the top principal directions of the rows.
fn top_directions(m: &Mat<f64>, d: usize) -> Mat<f64> {
    let cov = m.transpose() * m;
    let evd = cov.self_adjoint_eigen(oose::faer::Side::Lower).unwrap();
    let k = cov.nrows();
    Mat::from_fn(k, d, |i, c| evd.U()[(i, k - 1 - c)])
}

#[test]
fn a_linear_autoencoder_spans_the_pca_subspace_and_matches_its_error() {
    linear_autoencoder_is_pca(Precision::Float64);
}

#[test]
fn a_linear_autoencoder_trained_in_float32_spans_the_pca_subspace_too() {
    linear_autoencoder_is_pca(Precision::Float32);
}

fn linear_autoencoder_is_pca(precision: Precision) {
    let x = correlated();
    let m = Autoencoder {
        precision,
        layers: vec![],
        activation: Activation::Identity,
        // Full batches: Adam then follows the gradient without sampling noise.
        epochs: 2000,
        batch_size: 400,
        learning_rate: 1e-2,
        validation_fraction: 0.0,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    // The reconstructions lie in the decoder's affine 2-plane: its directions, against
    // the top two principal directions.
    let rec = m.inverse_transform(m.embedding()).unwrap().coordinates;
    let mean: Vec<f64> = (0..6)
        .map(|c| (0..400).map(|i| rec[(i, c)]).sum::<f64>() / 400.0)
        .collect();
    let centred = Mat::from_fn(400, 6, |i, c| rec[(i, c)] - mean[c]);
    let ae = top_directions(&centred, 2);
    let pca = top_directions(&x, 2);
    let cosines = (ae.transpose() * &pca).singular_values().unwrap();
    let largest_angle = cosines
        .iter()
        .map(|c| c.min(1.0).acos())
        .fold(0.0, f64::max);
    assert!(
        largest_angle <= 1e-2,
        "largest principal angle {largest_angle} rad"
    );
    // Reconstruction error (per point) against PCA's: the sum of the bottom eigenvalues
    // of the covariance.
    let cov = x.transpose() * &x;
    let ev = cov
        .self_adjoint_eigenvalues(oose::faer::Side::Lower)
        .unwrap();
    let pca_error: f64 = ev[..4].iter().sum::<f64>() / 400.0;
    let ae_error: f64 = m
        .extend(x.as_ref())
        .unwrap()
        .reconstruction_error
        .iter()
        .sum::<f64>()
        / 400.0;
    eprintln!(
        "{precision:?}: largest principal angle {largest_angle:.2e} rad, error ratio {:.6}",
        ae_error / pca_error
    );
    assert!(
        ae_error <= 1.01 * pca_error,
        "{ae_error} vs PCA {pca_error}"
    );
    assert!(
        ae_error >= pca_error * (1.0 - 1e-9),
        "{ae_error} below PCA's optimum {pca_error}"
    );
}

fn small() -> Autoencoder {
    Autoencoder {
        layers: vec![12],
        activation: Activation::Tanh,
        epochs: 15,
        batch_size: 32,
        ..Default::default()
    }
}

#[test]
fn the_encoder_is_the_extension_and_training_is_deterministic() {
    extension_and_determinism(small());
}

#[test]
fn in_float32_too_the_encoder_is_the_extension_and_training_is_deterministic() {
    extension_and_determinism(Autoencoder {
        precision: Precision::Float32,
        ..small()
    });
    // The two precisions start from the same draws and end near each other, not equal.
    let x = oose::datasets::s_curve(300, 0.05, 0).points;
    let m64 = small().fit(x.as_ref()).unwrap();
    let m32 = Autoencoder {
        precision: Precision::Float32,
        ..small()
    }
    .fit(x.as_ref())
    .unwrap();
    let (l64, l32) = (m64.loss_curve().0, m32.loss_curve().0);
    assert_eq!(l64.len(), l32.len());
    assert_ne!(l64, l32);
    for (a, b) in l64.iter().zip(l32) {
        assert!((a - b).abs() <= 1e-3 * a, "float64 {a} float32 {b}");
    }
    // The model keeps the float32 weights, widened exactly.
    let m: oose::model::Model = m32.into();
    let params: Vec<_> = oose::model::Model::from_bytes(&m.to_bytes())
        .unwrap()
        .params()
        .into_iter()
        .filter(|(k, _)| *k == "precision")
        .map(|(_, v)| v.to_string())
        .collect();
    assert_eq!(params, ["float32"]);
}

fn extension_and_determinism(params: Autoencoder) {
    let x = oose::datasets::s_curve(300, 0.05, 0).points;
    let m = params.fit(x.as_ref()).unwrap();
    let again = m.extend(x.as_ref()).unwrap();
    assert_eq!(again.coordinates, m.embedding().to_owned());
    let one = m.extend(x.as_ref().subrows(17, 1)).unwrap();
    assert_eq!(one.coordinates.row(0), m.embedding().row(17));
    // Same seed: the same bits, on one thread or two.
    let bytes =
        |m: oose::methods::autoencoder::FittedAutoencoder| oose::model::Model::from(m).to_bytes();
    let on = |threads: usize| common::on_threads(threads, || params.fit(x.as_ref()).unwrap());
    let reference = bytes(m.clone());
    assert_eq!(bytes(on(1)), reference);
    assert_eq!(bytes(on(2)), reference);
    let other = Autoencoder {
        seed: 1,
        ..params.clone()
    }
    .fit(x.as_ref())
    .unwrap();
    assert_ne!(bytes(other), reference);
    // The loss went down, and early stopping kept the best validation epoch.
    let (train, val) = m.loss_curve();
    assert!(train.last().unwrap() < &train[0], "{train:?}");
    let best = m.best_epoch();
    assert!(
        val.iter().all(|v| *v >= val[best - 1]),
        "{val:?} best {best}"
    );
}

#[test]
fn a_diverging_loss_names_the_epoch_and_the_learning_rate() {
    let x = oose::datasets::s_curve(100, 0.0, 0).points;
    let err = Autoencoder {
        learning_rate: 1e200,
        ..small()
    }
    .fit(x.as_ref())
    .unwrap_err();
    match &err {
        Error::Unsolved { status, detail, .. } => {
            assert_eq!(*status, "diverged");
            assert!(
                detail.contains("epoch") && detail.contains("learning_rate = 1e200"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_parameters_name_themselves() {
    let x = oose::datasets::s_curve(50, 0.0, 0).points;
    let name = |e: Error| match e {
        Error::InvalidParameter { name, .. } => name,
        other => panic!("{other:?}"),
    };
    for (p, want) in [
        (
            Autoencoder {
                n_components: 3,
                ..small()
            },
            "n_components",
        ),
        (
            Autoencoder {
                layers: vec![8, 0],
                ..small()
            },
            "layers",
        ),
        (
            Autoencoder {
                batch_size: 0,
                ..small()
            },
            "batch_size",
        ),
        (
            Autoencoder {
                epochs: 0,
                ..small()
            },
            "epochs",
        ),
        (
            Autoencoder {
                learning_rate: 0.0,
                ..small()
            },
            "learning_rate",
        ),
        (
            Autoencoder {
                validation_fraction: 1.0,
                ..small()
            },
            "validation_fraction",
        ),
    ] {
        assert_eq!(name(p.fit(x.as_ref()).unwrap_err()), want);
    }
    // A constant column is standardised to zero and stays finite.
    let mut c = x.clone();
    for i in 0..50 {
        c[(i, 2)] = 4.0;
    }
    let m = small().fit(c.as_ref()).unwrap();
    assert!(m.embedding().col(0).iter().all(|v| v.is_finite()));
}

#[test]
fn the_vae_embeds_mu_and_is_less_sure_far_from_the_data() {
    vae_is_less_sure_far_away(Precision::Float64);
}

#[test]
fn a_vae_trained_in_float32_is_less_sure_far_from_the_data_too() {
    vae_is_less_sure_far_away(Precision::Float32);
}

fn vae_is_less_sure_far_away(precision: Precision) {
    let x = oose::datasets::s_curve(400, 0.05, 0).points;
    let m = VariationalAutoencoder {
        precision,
        layers: vec![16],
        activation: Activation::Tanh,
        epochs: 60,
        batch_size: 32,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let near = oose::datasets::s_curve(200, 0.05, 1).points;
    let far = Mat::from_fn(200, 3, |i, c| {
        6.0 * (((i * 3 + c) * 2654435761usize % 1000) as f64 / 500.0 - 1.0)
    });
    let var = |z: &Mat<f64>| {
        let e = m.extend(z.as_ref()).unwrap();
        let col = e
            .extra
            .iter()
            .find(|c| c.name == "posterior_variance")
            .unwrap();
        col.values.iter().sum::<f64>() / col.values.len() as f64
    };
    let (v_near, v_far) = (var(&near), var(&far));
    assert!(v_far > v_near, "far {v_far} near {v_near}");
    let e = m.extend(near.as_ref()).unwrap();
    let elbo = e.extra.iter().find(|c| c.name == "negative_elbo").unwrap();
    assert!(elbo
        .values
        .iter()
        .zip(&e.reconstruction_error)
        .all(|(n, r)| n >= r));
}

#[test]
fn from_20000_points_in_high_dimension_the_novelty_score_uses_nn_descent() {
    // 20000 points near 4 centres in R¹⁷ (> 16 dimensions: the kd-tree's limit).
    let mut rng = oose::rng::Rng::new(5);
    let x = Mat::from_fn(20000, 17, |i, c| {
        3.0 * (((i % 4) * 5 + c) % 7) as f64 + rng.normal()
    });
    let values = oose::model::params::Values::new()
        .with("layers", "4")
        .with("epochs", 1usize)
        .with("validation_fraction", 0.0);
    let model = oose::model::Model::fit(
        "autoencoder",
        &values,
        oose::model::Input::Points(x.as_ref()),
    )
    .unwrap();
    let info = model.info();
    let search = info.iter().find(|(k, _)| k == "novelty_search").unwrap();
    assert_eq!(search.1, "approximate");
    // Points like the training data pass at the 1 % level; points far away do not.
    let near = Mat::from_fn(400, 17, |i, c| {
        3.0 * (((i % 4) * 5 + c) % 7) as f64 + rng.normal()
    });
    let far = Mat::from_fn(50, 17, |_, _| 40.0 + rng.normal());
    let flagged = |z: &Mat<f64>| {
        let e = model.extend(z.as_ref()).unwrap();
        let col = e.extra.iter().find(|c| c.name == "is_novel").unwrap();
        col.values.iter().filter(|&&v| v == 1.0).count()
    };
    assert!(
        flagged(&near) <= 12,
        "{} of 400 near points flagged",
        flagged(&near)
    );
    assert_eq!(flagged(&far), 50);
    // Training points are found exactly by the walk: their novelty is their own
    // leave-one-out calibration score, so none is flagged.
    assert_eq!(flagged(&x.as_ref().subrows(0, 300).to_owned()), 0);
}

#[test]
fn a_network_too_large_for_memory_is_refused_before_it_is_allocated() {
    // 10⁹ hidden units: ~10¹⁰ weights with their gradients and moments, hundreds of
    // GiB (was an allocation failure inside faer, a panic).
    let x = correlated();
    for precision in [Precision::Float64, Precision::Float32] {
        let e = Autoencoder {
            layers: vec![1_000_000_000],
            epochs: 1,
            precision,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap_err();
        let Error::OutOfMemory { what, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(*what, "the autoencoder's training");
        assert!(e.to_string().contains("GiB"), "{e}");
    }
}
