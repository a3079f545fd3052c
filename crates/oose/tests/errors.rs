//! Bad input gives typed errors naming the culprit, never a panic.

use oose::faer::Mat;
use oose::kernel::{Epsilon, Kernel};
use oose::model::Model;
use oose::prelude::*;
use oose::ModelError;

fn data() -> Mat<f64> {
    oose::datasets::swiss_roll(60, 0.05, false, 1).points
}

#[test]
fn nonfinite_training_and_new_points() {
    let mut x = data();
    x[(17, 2)] = f64::NAN;
    let e = KernelPca::default().fit(x.as_ref()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                what: "training data",
                row: 17,
                col: 2,
                ..
            }
        ),
        "{e}"
    );
    let m = KernelPca::default().fit(data().as_ref()).unwrap();
    let mut z = Mat::<f64>::zeros(3, 3);
    z[(2, 1)] = f64::INFINITY;
    let e = m.extend(z.as_ref()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                what: "new points",
                row: 2,
                col: 1,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("row 2"));
}

#[test]
fn wrong_width_and_empty() {
    let m = KernelPca::default().fit(data().as_ref()).unwrap();
    let z = Mat::<f64>::zeros(2, 4);
    let e = m.extend(z.as_ref()).unwrap_err();
    assert!(
        e.to_string().contains("expected 3 columns, got 4 columns"),
        "{e}"
    );
    let empty = Mat::<f64>::zeros(0, 3);
    assert!(matches!(
        KernelPca::default().fit(empty.as_ref()),
        Err(Error::Empty { .. })
    ));
    assert!(matches!(
        Pca::default().fit(empty.as_ref()),
        Err(Error::Empty { .. })
    ));
    // Extending zero rows is fine and returns zero rows.
    assert_eq!(m.extend(empty.as_ref()).unwrap().len(), 0);
}

#[test]
fn too_many_components() {
    let x = data();
    let e = KernelPca {
        n_components: 61,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidParameter {
                name: "n_components",
                ..
            }
        ),
        "{e}"
    );
    let e = KernelPca {
        n_components: 0,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap_err();
    assert!(matches!(
        e,
        Error::InvalidParameter {
            name: "n_components",
            ..
        }
    ));
    let e = Pca {
        n_components: 4,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap_err();
    assert!(matches!(
        e,
        Error::InvalidParameter {
            name: "n_components",
            ..
        }
    ));
    // The linear kernel on 3-D data has 3 positive eigenvalues.
    let e = KernelPca {
        n_components: 5,
        kernel: Kernel::Linear,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotEnoughPositiveEigenvalues {
                requested: 5,
                available: 3,
                ..
            }
        ),
        "{e}"
    );
    // Points on a line: PCA has one direction.
    let line = Mat::from_fn(10, 2, |i, j| (i * (j + 1)) as f64);
    let e = Pca {
        n_components: 2,
        ..Default::default()
    }
    .fit(line.as_ref())
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotEnoughPositiveEigenvalues {
                requested: 2,
                available: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn bad_epsilon() {
    for eps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let k = Kernel::Gaussian {
            epsilon: Epsilon::Value(eps),
        };
        let e = KernelPca {
            kernel: k,
            ..Default::default()
        }
        .fit(data().as_ref())
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidParameter {
                    name: "epsilon",
                    ..
                }
            ),
            "{eps}: {e}"
        );
    }
}

#[test]
fn precomputed_must_be_square_and_symmetric() {
    let k = Mat::from_fn(4, 5, |_, _| 1.0);
    let p = KernelPca {
        kernel: Kernel::Precomputed,
        ..Default::default()
    };
    assert!(matches!(p.fit(k.as_ref()), Err(Error::Shape { .. })));
    let k = Mat::from_fn(4, 4, |i, j| if i < j { 1.0 } else { 0.5 });
    assert!(p
        .fit(k.as_ref())
        .unwrap_err()
        .to_string()
        .contains("symmetric"));
}

fn model_bytes() -> Vec<u8> {
    Model::from(KernelPca::default().fit(data().as_ref()).unwrap()).to_bytes()
}

#[test]
fn model_round_trip_is_identical() {
    let x = data();
    for m in [
        Model::from(
            KernelPca {
                n_components: 3,
                ..Default::default()
            }
            .fit(x.as_ref())
            .unwrap(),
        ),
        Model::from(Pca::default().fit(x.as_ref()).unwrap()),
    ] {
        let back = Model::from_bytes(&m.to_bytes()).unwrap();
        assert_eq!(back, m);
        // Debug text: equal NaN columns (PCA built from its fitted type has no novelty
        // score) compare equal, bit for bit otherwise.
        assert_eq!(
            format!("{:?}", back.extend(x.as_ref()).unwrap()),
            format!("{:?}", m.extend(x.as_ref()).unwrap())
        );
    }
}

#[test]
fn truncated_model_files() {
    let b = model_bytes();
    for cut in [0usize, 3, 8, 20, 23, 24, b.len() / 2, b.len() - 1] {
        let e = Model::from_bytes(&b[..cut]).unwrap_err();
        let ok = matches!(
            e,
            Error::Model(ModelError::Truncated { .. }) | Error::Model(ModelError::NotAModel)
        );
        assert!(ok, "cut at {cut}: {e}");
        if cut >= 8 {
            assert!(
                matches!(e, Error::Model(ModelError::Truncated { .. })),
                "cut at {cut}: {e}"
            );
        }
    }
}

#[test]
fn every_single_bit_flip_is_detected() {
    let b = model_bytes();
    // Flip one bit in each byte (a different bit per byte): header flips are caught by
    // magic/version/length checks, payload flips by the checksum.
    for i in 0..b.len() {
        let mut c = b.clone();
        c[i] ^= 1 << (i % 8);
        assert!(
            Model::from_bytes(&c).is_err(),
            "flip in byte {i} not detected"
        );
    }
}

#[test]
fn foreign_and_newer_files() {
    assert!(matches!(
        Model::from_bytes(b"\x93NUMPY\x01\x00 not a model at all"),
        Err(Error::Model(ModelError::NotAModel))
    ));
    let mut b = model_bytes();
    b[8..12].copy_from_slice(&99u32.to_le_bytes());
    assert!(matches!(
        Model::from_bytes(&b),
        Err(Error::Model(ModelError::NewerVersion {
            found: 99,
            supported: oose::model::FORMAT_VERSION
        }))
    ));
    let mut b = model_bytes();
    b.push(0);
    assert!(matches!(
        Model::from_bytes(&b),
        Err(Error::Model(ModelError::Corrupted(_)))
    ));
}

#[test]
fn a_solver_the_matrix_cannot_use_is_refused_by_name() {
    use oose::model::method::Input;
    use oose::model::params::{Value, Values};
    let x = data();
    // low-rank needs a positive semidefinite kernel; shift-invert a sparse diffusion kernel.
    for (method, solver, extra) in [
        ("mds", "low-rank", None),
        ("isomap", "low-rank", None),
        ("dmaps", "low-rank", None),
        ("mds", "shift-invert", None),
        ("kpca", "shift-invert", None),
        ("dmaps", "shift-invert", Some(("sparsity", "dense"))),
    ] {
        let mut v = Values::new().with("solver", Value::Str(solver.into()));
        if let Some((name, value)) = extra {
            v = v.with(name, Value::Str(value.into()));
        }
        match Model::fit(method, &v, Input::Points(x.as_ref())) {
            Err(Error::InvalidParameter { name: "solver", .. }) => {}
            other => panic!("{method} with {solver}: {:?}", other.map(|m| m.method())),
        }
    }
    // Where the structure is there, the request is honoured.
    for (method, solver) in [("kpca", "low-rank"), ("dmaps", "shift-invert")] {
        let v = Values::new().with("solver", Value::Str(solver.into()));
        let m = Model::fit(method, &v, Input::Points(x.as_ref())).unwrap();
        assert!(
            m.info().iter().any(|(k, s)| k == "solver" && s == solver),
            "{method}"
        );
    }
}

#[test]
fn rank_tolerance_outside_the_unit_interval_is_named_by_every_method_that_has_one() {
    use oose::model::params::Values;
    use oose::model::{Input, METHODS};
    let x = data();
    let f = Mat::from_fn(60, 1, |i, _| x[(i, 0)]);
    let with = METHODS
        .iter()
        .filter(|m| m.specs.iter().any(|s| s.name == "rank_tolerance"))
        .collect::<Vec<_>>();
    // NaN was taken by the diffusion methods, interpolation and PCA.
    let names: Vec<&str> = with.iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "pca",
            "kpca",
            "mds",
            "isomap",
            "dmaps",
            "eigenmaps",
            "interpolate",
            "kpca-nystrom"
        ]
    );
    for m in with {
        for bad in [f64::NAN, 1.0, -1e-3] {
            let v = Values::new().with("rank_tolerance", bad);
            let input = if m.name == "interpolate" {
                Input::Values {
                    points: x.as_ref(),
                    values: f.as_ref(),
                }
            } else {
                Input::Points(x.as_ref())
            };
            let e = Model::fit(m.name, &v, input).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::InvalidParameter {
                        name: "rank_tolerance",
                        ..
                    }
                ),
                "{} with {bad}: {e}",
                m.name
            );
        }
    }
}

#[test]
fn no_eigenvalue_above_the_tolerance_says_there_is_nothing_to_embed() {
    use oose::model::params::Values;
    use oose::model::{Input, Model};
    let same = Mat::from_fn(30, 3, |_, j| j as f64);
    let e = Model::fit("mds", &Values::new(), Input::Points(same.as_ref())).unwrap_err();
    assert!(
        matches!(e, Error::NotEnoughPositiveEigenvalues { available: 0, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .ends_with("nothing to embed (do the points coincide?)"),
        "{e}"
    );
    // With one eigenvalue above it, the remedies.
    let line = Mat::from_fn(30, 3, |i, _| i as f64);
    let e = Model::fit("mds", &Values::new(), Input::Points(line.as_ref())).unwrap_err();
    assert!(
        e.to_string().contains("only 1 eigenvalue(s)")
            && e.to_string()
                .contains("ask for fewer components, or for a smaller rank_tolerance"),
        "{e}"
    );
}
