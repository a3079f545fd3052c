//! Laplacian eigenmaps, spectral clustering, the residual of sparse kernels and the kNN
//! extension of diffusion models (split from diffusion_maps.rs).

use faer::Mat;
use oose::datasets;
use oose::methods::diffusion_maps::{
    Density, DiffusionKernel, DiffusionMaps, Epsilon, LaplacianEigenmaps, OnIsolated, Sparsity,
    SpectralClustering,
};
use oose::methods::OutOfSample;
use oose::Error;

mod common;
use common::{max_abs, max_diff};

#[test]
fn eigenmaps_are_diffusion_coordinates_at_time_zero() {
    let x = datasets::swiss_roll(400, 0.0, false, 9).points;
    let kernel = DiffusionKernel {
        epsilon: Epsilon::Value(5.0),
        sparsity: Sparsity::Knn(10),
        alpha: 0.0,
    };
    let le = LaplacianEigenmaps {
        n_components: 2,
        kernel,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let dm = DiffusionMaps {
        n_components: 2,
        kernel,
        t: 0.0,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert_eq!(le.embedding(), dm.embedding());
    for (mu, l) in le.laplacian_eigenvalues().iter().zip(dm.eigenvalues()) {
        assert_eq!(*mu, 1.0 - l);
    }
    let e = le.extend(x.as_ref().subrows(100, 50)).unwrap();
    let err = max_diff(e.coordinates.as_ref(), le.embedding().subrows(100, 50));
    assert!(err < 1e-10 * max_abs(le.embedding()), "{err:e}");
}

#[test]
fn spectral_clustering_recovers_clusters_and_assigns_new_points() {
    let d = datasets::three_d_clusters(630, 3, 11);
    let x = d.points.as_ref();
    // Training: every other point; new points: the rest.
    let tr: Vec<usize> = (0..630).step_by(2).collect();
    let te: Vec<usize> = (1..630).step_by(2).collect();
    let xt = datasets::select_rows(x, &tr);
    let xz = datasets::select_rows(x, &te);
    let m = SpectralClustering {
        n_clusters: 3,
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(1.0),
            sparsity: Sparsity::Knn(10),
            alpha: 0.0,
        },
        ..Default::default()
    }
    .fit(xt.as_ref())
    .unwrap();
    // Map clusters to generating centres through the non-bridge training points.
    let mut map = [usize::MAX; 3];
    for (r, &i) in tr.iter().enumerate() {
        if d.t[i].fract() == 0.0 {
            let c = d.t[i] as usize;
            if map[c] == usize::MAX {
                map[c] = m.labels()[r];
            }
            assert_eq!(m.labels()[r], map[c], "training point {i}");
        }
    }
    let mut seen = map.to_vec();
    seen.sort();
    assert_eq!(seen, vec![0, 1, 2]);
    let e = m.extend(xz.as_ref()).unwrap();
    let lab = &e.extra.iter().find(|c| c.name == "cluster").unwrap().values;
    for (r, &i) in te.iter().enumerate() {
        if d.t[i].fract() == 0.0 {
            assert_eq!(lab[r] as usize, map[d.t[i] as usize], "new point {i}");
        }
    }
    // Extending the training points reproduces their labels.
    let e = m.extend(xt.as_ref()).unwrap();
    let lab = &e.extra.iter().find(|c| c.name == "cluster").unwrap().values;
    for (l, &want) in lab.iter().zip(m.labels()) {
        assert_eq!(*l as usize, want);
    }
}

#[test]
fn residual_on_request_for_sparse_kernels() {
    let all = datasets::s_curve(320, 0.02, 12).points;
    let x = all.as_ref().subrows(0, 300);
    let z = all.as_ref().subrows(300, 20);
    let fit = |residual| {
        DiffusionMaps {
            kernel: DiffusionKernel {
                epsilon: Epsilon::Value(0.3),
                sparsity: Sparsity::Knn(12),
                alpha: 1.0,
            },
            residual,
            ..Default::default()
        }
        .fit(x)
        .unwrap()
    };
    // Off by default for sparse kernels: NaN, and the model says so.
    let off = fit(None);
    assert!(off.extend(z).unwrap().residual.iter().all(|r| r.is_nan()));
    assert!(off.core().residual_rank().is_none());
    let on = fit(Some(true));
    assert!(on.core().residual_rank().unwrap() > 0);
    let tr = on.extend(x).unwrap();
    assert!(
        tr.residual.iter().all(|&r| (0.0..1e-9).contains(&r)),
        "training residuals"
    );
    let new = on.extend(z).unwrap();
    assert!(new.residual.iter().all(|&r| r.is_finite() && r >= 0.0));
    // A point far off the S-curve is poorly represented.
    let far = Mat::from_fn(1, 3, |_, j| [0.0, 1.0, 5.0][j]);
    let f = on.extend(far.as_ref()).unwrap();
    let worst_new = new.residual.iter().copied().fold(0.0f64, f64::max);
    assert!(
        f.residual[0] > worst_new,
        "{} vs {worst_new}",
        f.residual[0]
    );
}

/// The kNN extension is sample-wise to the bit: a new point's row does not depend on
/// the other rows of the batch or their order (rows are grouped by locality inside),
/// and an isolated row is reported by its input index, the first in input order.
#[test]
fn knn_extension_is_sample_wise_and_reports_the_first_isolated_row() {
    let x = datasets::s_curve(1500, 0.0, 21).points;
    let mut z = datasets::s_curve(700, 0.0, 22).points;
    for r in [611, 95] {
        z[(r, 0)] = 100.0;
    }
    let m = DiffusionMaps {
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(0.05),
            sparsity: Sparsity::Knn(15),
            alpha: 0.5,
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let e = m.extend(z.as_ref()).unwrap_err();
    assert!(matches!(e, Error::Isolated { row: 95, .. }), "{e}");
    let nan = |z: faer::MatRef<'_, f64>| {
        m.extend_with(z, Density::Training, OnIsolated::Nan)
            .unwrap()
    };
    let all = nan(z.as_ref());
    let flag = |e: &oose::extend::Extension| {
        e.extra
            .iter()
            .find(|c| c.name == "isolated")
            .unwrap()
            .values
            .clone()
    };
    let flagged: Vec<usize> = (0..700).filter(|&r| flag(&all)[r] != 0.0).collect();
    assert_eq!(flagged, vec![95, 611]);
    let same_row =
        |a: &oose::extend::Extension, i: usize, b: &oose::extend::Extension, j: usize| {
            (0..a.coordinates.ncols())
                .all(|c| a.coordinates[(i, c)].to_bits() == b.coordinates[(j, c)].to_bits())
                && a.reconstruction_error[i].to_bits() == b.reconstruction_error[j].to_bits()
                && a.extra
                    .iter()
                    .zip(&b.extra)
                    .all(|(u, v)| u.values[i].to_bits() == v.values[j].to_bits())
        };
    let rev = Mat::from_fn(700, 3, |r, c| z[(699 - r, c)]);
    let back = nan(rev.as_ref());
    assert!(
        (0..700).all(|r| same_row(&all, r, &back, 699 - r)),
        "reversed batch"
    );
    for (start, len) in [(0, 1), (37, 20), (300, 400)] {
        let part = nan(z.as_ref().subrows(start, len));
        assert!(
            (0..len).all(|r| same_row(&all, start + r, &part, r)),
            "rows {start}..+{len}"
        );
    }
    // And the embedding of the training points is reproduced.
    let tr = m.extend(x.as_ref()).unwrap();
    assert!(max_diff(tr.coordinates.as_ref(), m.embedding()) < 1e-10);
}

#[test]
fn spectral_clustering_finds_the_components_of_a_disconnected_graph() {
    // Three far-apart blobs: the 10-NN graph has three components, eigenvalue 1 is
    // repeated three times, and the components are the clusters (the textbook case;
    // scikit-learn labels them 100/100/100 too).
    let (x, truth) = common::blobs(300, 3, 5);
    let m = SpectralClustering {
        n_clusters: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert_eq!(&m.core().eigenvalues()[..3], &[1.0, 1.0, 1.0]);
    let w = oose::model::Fitted::fit_warnings(&m);
    assert!(w.len() == 1 && w[0].contains("3 connected components (sizes [100, 100, 100]"));
    let labels = m.labels();
    let mut counts = [0usize; 3];
    for (i, &l) in labels.iter().enumerate() {
        assert_eq!(l, labels[truth[i]], "point {i} is not with its blob");
        counts[l] += 1;
    }
    assert_eq!(counts, [100, 100, 100]);
    // New points near each blob get its cluster.
    let z = Mat::from_fn(6, 10, |i, j| x[(i, j)] + 0.05);
    let e = m.extend(z.as_ref()).unwrap();
    let got = &e.extra.iter().find(|c| c.name == "cluster").unwrap().values;
    for i in 0..6 {
        assert_eq!(got[i] as usize, labels[i]);
    }
    // One cluster (scikit-learn accepts it): everything in cluster 0.
    let one = SpectralClustering {
        n_clusters: 1,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert!(one.labels().iter().all(|&l| l == 0));
    let e = one.extend(z.as_ref()).unwrap();
    assert!(e
        .extra
        .iter()
        .find(|c| c.name == "cluster")
        .unwrap()
        .values
        .iter()
        .all(|&v| v == 0.0));
}

#[test]
fn diffusion_maps_of_a_disconnected_graph_extend_exactly_and_round_trip() {
    let (x, truth) = common::blobs(240, 3, 8);
    let m = DiffusionMaps {
        n_components: 3,
        kernel: DiffusionKernel {
            sparsity: Sparsity::Knn(10),
            ..Default::default()
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    // Coordinates 1 and 2 are constant on each blob and tell the blobs apart.
    let y = m.embedding();
    for i in 0..240 {
        let r = truth[i];
        for j in 0..2 {
            assert!((y[(i, j)] - y[(r, j)]).abs() < 1e-10, "row {i} column {j}");
        }
    }
    let apart = |a: usize, b: usize| {
        ((y[(a, 0)] - y[(b, 0)]).powi(2) + (y[(a, 1)] - y[(b, 1)]).powi(2)).sqrt()
    };
    assert!(apart(0, 1) > 0.5 && apart(0, 2) > 0.5 && apart(1, 2) > 0.5);
    // The extension of the training points is the embedding.
    let e = m.extend(x.as_ref()).unwrap();
    assert!(max_diff(e.coordinates.as_ref(), y) < 1e-10);
    let model = oose::model::Model::from(m.clone());
    let back = oose::model::Model::from_bytes(&model.to_bytes()).unwrap();
    assert!(back == model);
    assert!(oose::model::Fitted::fit_warnings(back.fitted()).is_empty());
}
