//! Isomap and Landmark MDS: exact extension of training points, Landmark MDS with every
//! point a landmark = classical MDS, disconnected graphs, kernel PCA strategies.

use oose::datasets::swiss_roll;
use oose::extend::Strategy;
use oose::faer::{Mat, MatRef};
use oose::kernel::Kernel;
use oose::linalg::eigen::Solver;
use oose::methods::isomap::Isomap;
use oose::methods::landmark_mds::{LandmarkMds, Landmarks};
use oose::methods::mds::ClassicalMds;
use oose::model::Fitted;
use oose::prelude::*;

fn max_rel_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    (a - b).norm_max() / b.norm_max().max(1e-300)
}

#[test]
fn isomap_extends_training_points_exactly() {
    let x = swiss_roll(400, 0.05, false, 21).points;
    for solver in [Solver::Dense, Solver::Lanczos] {
        let m = Isomap {
            n_components: 2,
            n_neighbors: 8,
            solver,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        for strategy in [Strategy::Projection, Strategy::Restricted] {
            let e = m.extend_with(x.as_ref(), strategy).unwrap();
            if strategy == Strategy::Projection {
                let err = max_rel_diff(e.coordinates.as_ref(), m.embedding());
                assert!(err < 1e-10, "{solver:?}: {err:e}");
            }
            assert!(e.residual.iter().all(|r| r.is_nan()));
        }
        // Geodesics are symmetric, zero on the diagonal, at least the Euclidean distance.
        let g = m.geodesics();
        for i in (0..400).step_by(37) {
            assert_eq!(g[(i, i)], 0.0);
            for j in (0..400).step_by(41) {
                assert_eq!(g[(i, j)], g[(j, i)]);
                let e: f64 = (0..3)
                    .map(|c| (x[(i, c)] - x[(j, c)]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(g[(i, j)] >= e * (1.0 - 1e-12));
            }
        }
    }
}

#[test]
fn disconnected_graph_is_joined_or_its_largest_component_embedded() {
    let a = swiss_roll(150, 0.0, false, 1).points;
    // A second, far-away copy of 50 points.
    let x = Mat::from_fn(200, 3, |i, j| {
        if i < 150 {
            a[(i, j)]
        } else {
            a[(i - 150, j)] + 1e4
        }
    });
    let joined = Isomap {
        n_neighbors: 5,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert_eq!(joined.embedding().nrows(), 200);
    let w = oose::model::Fitted::fit_warnings(&joined);
    assert!(
        w.len() == 1 && w[0].contains("2 connected components (sizes [150, 50])"),
        "{w:?}"
    );
    // The far copy sits about 1e4·√3 away along the first coordinate.
    let y = joined.embedding();
    let gap = (y[(0, 0)] - y[(199, 0)]).abs();
    assert!(gap > 1.5e4 && gap < 1.9e4, "{gap}");
    let m = Isomap {
        n_neighbors: 5,
        largest_component: true,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert_eq!(m.kept(), (0..150).collect::<Vec<_>>().as_slice());
    assert_eq!(m.embedding().nrows(), 150);
}

#[test]
fn landmark_mds_with_every_point_a_landmark_is_classical_mds() {
    let x = swiss_roll(300, 0.1, false, 22).points;
    let z = swiss_roll(30, 0.1, false, 23).points;
    let cmds = ClassicalMds {
        n_components: 3,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    // More landmarks than points means every point is a landmark.
    let lmds = LandmarkMds {
        n_components: 3,
        n_landmarks: 1000,
        landmarks: Landmarks::Random,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    // Landmarks come in a shuffled order: compare row by row through the indices.
    let idx = lmds.landmark_indices();
    let core = lmds.core().embedding();
    let reordered = Mat::from_fn(300, 3, |i, j| {
        core[(idx.iter().position(|&k| k == i).unwrap(), j)]
    });
    assert!(max_rel_diff(reordered.as_ref(), cmds.embedding()) < 1e-10);
    assert!(max_rel_diff(lmds.embedding(), cmds.embedding()) < 1e-10);
    let a = lmds.extend(z.as_ref()).unwrap();
    let b = cmds.extend(z.as_ref()).unwrap();
    assert!(max_rel_diff(a.coordinates.as_ref(), b.coordinates.as_ref()) < 1e-10);
    assert_eq!(idx.len(), 300);
    let none = LandmarkMds {
        n_landmarks: 0,
        ..Default::default()
    }
    .fit(x.as_ref());
    assert!(matches!(
        none,
        Err(oose::Error::InvalidParameter {
            name: "n_landmarks",
            ..
        })
    ));
}

#[test]
fn landmark_mds_places_landmarks_exactly_and_spreads_max_min_landmarks() {
    let x = swiss_roll(3000, 0.05, false, 24).points;
    let m = LandmarkMds {
        n_landmarks: 60,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let idx = m.landmark_indices();
    assert_eq!(idx.len(), 60);
    let core = m.core().embedding();
    let lx = Mat::from_fn(60, 3, |i, j| x[(idx[i], j)]);
    let e = m.extend(lx.as_ref()).unwrap();
    assert!(max_rel_diff(e.coordinates.as_ref(), core) < 1e-10);
    for (k, &i) in idx.iter().enumerate() {
        for j in 0..2 {
            assert!((m.embedding()[(i, j)] - core[(k, j)]).abs() <= 1e-10 * core.norm_max());
        }
    }
    // Max–min: the smallest landmark spacing beats that of random landmarks.
    let spacing = |ids: &[usize]| {
        let mut best = f64::INFINITY;
        for a in 0..ids.len() {
            for b in (a + 1)..ids.len() {
                let d: f64 = (0..3)
                    .map(|c| (x[(ids[a], c)] - x[(ids[b], c)]).powi(2))
                    .sum();
                best = best.min(d);
            }
        }
        best
    };
    let random = LandmarkMds {
        n_landmarks: 60,
        landmarks: Landmarks::Random,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert!(spacing(idx) > 4.0 * spacing(random.landmark_indices()));
}

#[test]
fn kernel_pca_restricted_with_linear_kernel_equals_mds_restricted() {
    let x = swiss_roll(200, 0.2, false, 25).points;
    let z = swiss_roll(20, 0.5, false, 26).points;
    let k = KernelPca {
        n_components: 2,
        kernel: Kernel::Linear,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let m = ClassicalMds {
        n_components: 2,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let a = k.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    let b = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    assert!(max_rel_diff(a.coordinates.as_ref(), b.coordinates.as_ref()) < 1e-8);
    for (ca, cb) in a.extra.iter().zip(&b.extra) {
        assert_eq!(ca.name, cb.name);
        for (u, v) in ca.values.iter().zip(&cb.values) {
            assert!(
                (u - v).abs() <= 1e-7 * (1.0 + v.abs()),
                "{}: {u} vs {v}",
                ca.name
            );
        }
    }
}

#[test]
fn mds_family_models_round_trip_through_files() {
    use oose::model::Model;
    let x = swiss_roll(120, 0.05, false, 27).points;
    let models: Vec<Model> = vec![
        ClassicalMds::default().fit(x.as_ref()).unwrap().into(),
        LandmarkMds {
            n_landmarks: 30,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
        .into(),
        Isomap::default().fit(x.as_ref()).unwrap().into(),
    ];
    for m in models {
        let bytes = m.to_bytes();
        let back = Model::from_bytes(&bytes).unwrap();
        assert_eq!(back, m, "{}", m.method());
        let e = back.extend_with(x.as_ref(), Strategy::Restricted).unwrap();
        assert_eq!(e.len(), 120);
        let mut flipped = bytes.clone();
        let k = bytes.len() / 2;
        flipped[k] ^= 0x10;
        assert!(Model::from_bytes(&flipped).is_err());
        assert!(Model::from_bytes(&bytes[..bytes.len() - 3]).is_err());
    }
}

#[test]
fn joint_and_arc_for_landmark_mds_isomap_and_kernel_pca() {
    use oose::model::Model;
    let x = swiss_roll(400, 0.05, false, 28).points;
    let z = swiss_roll(6, 0.8, false, 29).points;
    let models: Vec<Model> = vec![
        LandmarkMds {
            n_landmarks: 80,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap()
        .into(),
        Isomap::default().fit(x.as_ref()).unwrap().into(),
        KernelPca::default().fit(x.as_ref()).unwrap().into(),
    ];
    for m in &models {
        let j = m.extend_joint(z.as_ref(), None).unwrap();
        assert!(j.objective <= j.objective_one_by_one, "{}", m.method());
        assert!(j.objective <= j.objective_projection, "{}", m.method());
        assert!(
            j.gradient_norm <= 1e-6 * j.objective.max(1.0),
            "{}: {}",
            m.method(),
            j.gradient_norm
        );
        let r = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
        let p = m.extend(z.as_ref()).unwrap();
        let arc = m.arc(z.as_ref(), 5).unwrap();
        for obj in 0..6 {
            let pts: Vec<_> = arc.iter().filter(|a| a.0 == obj).collect();
            assert_eq!(pts.len(), 6);
            for c in 0..2 {
                assert!(
                    (pts[0].2[c] - p.coordinates[(obj, c)]).abs()
                        <= 1e-9 * (1.0 + p.coordinates[(obj, c)].abs())
                );
                assert!(
                    (pts[5].2[c] - r.coordinates[(obj, c)]).abs()
                        <= 1e-9 * (1.0 + r.coordinates[(obj, c)].abs())
                );
            }
        }
    }
}

#[test]
fn isomap_extension_does_not_depend_on_row_order() {
    let x = swiss_roll(500, 0.05, false, 30).points;
    let z = swiss_roll(300, 0.05, false, 31).points;
    let m = Isomap::default().fit(x.as_ref()).unwrap();
    let a = m.extend_with(z.as_ref(), Strategy::Restricted).unwrap();
    let rev = Mat::from_fn(300, 3, |i, j| z[(299 - i, j)]);
    let b = m.extend_with(rev.as_ref(), Strategy::Restricted).unwrap();
    for i in 0..300 {
        for j in 0..2 {
            assert_eq!(a.coordinates[(i, j)], b.coordinates[(299 - i, j)]);
        }
        for (ca, cb) in a.extra.iter().zip(&b.extra) {
            assert_eq!(
                ca.values[i].to_bits(),
                cb.values[299 - i].to_bits(),
                "{}",
                ca.name
            );
        }
    }
    // One point alone gives the same row as within the batch.
    let one = m.extend(z.as_ref().subrows(17, 1)).unwrap();
    let all = m.extend(z.as_ref()).unwrap();
    assert_eq!(one.coordinates[(0, 0)], all.coordinates[(17, 0)]);
}

#[test]
fn joined_components_keep_a_line_isometric() {
    // Two runs of a line, 0..9 and 20..29: with k = 2 the graph has two components, and
    // the joining edge 9–20 (length 11) makes the geodesics the distances along the
    // line, so the 1-D embedding is an isometry.
    let t: Vec<f64> = (0..10).chain(20..30).map(|v| v as f64).collect();
    let x = Mat::from_fn(20, 2, |i, j| if j == 0 { t[i] } else { 0.5 * t[i] });
    let m = Isomap {
        n_components: 1,
        n_neighbors: 2,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let y = m.embedding();
    let scale = 1.25f64.sqrt();
    for i in 0..20 {
        for j in 0..20 {
            let want = (t[i] - t[j]).abs() * scale;
            assert!(
                ((y[(i, 0)] - y[(j, 0)]).abs() - want).abs() < 1e-9,
                "{i} {j}"
            );
        }
    }
}

#[test]
fn isomap_lowers_n_neighbors_at_or_above_n_with_a_warning() {
    // umap-learn's rule (and what scikit-learn's estimator checks need: they fit 10
    // points, the default asks for 10 neighbours): k ≥ N becomes N − 1, the model
    // records the value used, and the fit is that of asking for N − 1.
    let x = swiss_roll(30, 0.0, false, 3).points;
    let asked = Isomap {
        n_neighbors: 29,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    assert!(asked.fit_warnings().is_empty());
    for k in [30, 100] {
        let m = Isomap {
            n_neighbors: k,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        assert_eq!(m.params().n_neighbors, 29);
        assert_eq!(m.embedding(), asked.embedding());
        let w = m.fit_warnings();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains(&format!(
            "n_neighbors = {k} is not below the number of points (30)"
        )));
        // Extension uses the k recorded: a training point comes back exactly.
        let e = m.extend(x.as_ref().subrows(4, 1)).unwrap();
        assert!(max_rel_diff(e.coordinates.as_ref(), m.embedding().subrows(4, 1)) < 1e-10);
    }
    let zero = Isomap {
        n_neighbors: 0,
        ..Default::default()
    }
    .fit(x.as_ref());
    assert!(matches!(
        zero,
        Err(Error::InvalidParameter {
            name: "n_neighbors",
            ..
        })
    ));
}
