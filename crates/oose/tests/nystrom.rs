//! Kernel PCA through landmarks (maths §21): with every point a landmark it is kernel
//! PCA; streamed in any chunks, or reduced from partial sums in any grouping, it is the
//! in-memory fit; its sums are the same bits on one thread and two; P-greedy landmarks
//! beat random ones at equal r; refusals by name.

mod common;
use oose::faer::{Mat, MatRef, Par};
use oose::kernel::{Epsilon, Kernel};
use oose::linalg::eigen::Solver;
use oose::linalg::procrustes::orthogonal_procrustes;
use oose::methods::kernel_pca::{InMemory, KernelPca, NystromKpca, NystromPlan, Rows};
use oose::methods::landmark_mds::{LandmarkMds, Landmarks};
use oose::methods::OutOfSample;
use oose::prelude::Error;

fn roll(n: usize, seed: u64) -> Mat<f64> {
    oose::datasets::swiss_roll(n, 0.05, false, seed).points
}

/// ||A Q − B||_F / ||B||_F with the best orthogonal Q.
/// The plan of `p` for the rows of `x`, from its sample of them.
fn plan_of(p: &NystromKpca, x: MatRef<'_, f64>) -> NystromPlan {
    let rows = p.sample_rows(x.nrows());
    let sample = Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)]);
    p.plan(sample.as_ref(), &rows, x.nrows()).unwrap()
}

fn procrustes_error(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let q = orthogonal_procrustes(a, b).unwrap();
    (a * q - b).norm_l2() / b.norm_l2()
}

/// Largest |a − b| after flipping b's columns to a's signs, relative to max |a|.
fn signed_gap(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let mut worst = 0.0f64;
    for j in 0..a.ncols() {
        let dot: f64 = (0..a.nrows()).map(|i| a[(i, j)] * b[(i, j)]).sum();
        let s = dot.signum();
        for i in 0..a.nrows() {
            worst = worst.max((a[(i, j)] - s * b[(i, j)]).abs());
        }
    }
    worst / a.norm_max()
}

#[test]
fn with_every_point_a_landmark_it_is_kernel_pca() {
    let x = roll(250, 0);
    for centering in [true, false] {
        let kernel = Kernel::Laplacian {
            epsilon: Epsilon::Value(3.0),
        };
        let exact = KernelPca {
            n_components: 3,
            kernel,
            centering,
            solver: Solver::Dense,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        let ny = NystromKpca {
            n_components: 3,
            kernel,
            centering,
            n_landmarks: 250,
            landmarks: Landmarks::Random,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        assert_eq!(
            ny.landmarks().nrows(),
            250,
            "the Laplacian kernel has full rank"
        );
        for (a, b) in exact.eigenvalues().iter().zip(ny.eigenvalues()) {
            assert!(
                (a - b).abs() <= 1e-11 * a,
                "centring {centering}: {a} vs {b}"
            );
        }
        let gap = signed_gap(exact.embedding(), ny.embedding());
        assert!(gap < 1e-9, "centring {centering}: embedding gap {gap:e}");
        assert!(ny.missed_trace() < 1e-12, "{}", ny.missed_trace());
        // New points too: the same extension, diagnostics included.
        let z = roll(40, 1);
        let (e, n) = (
            exact.extend(z.as_ref()).unwrap(),
            ny.extend(z.as_ref()).unwrap(),
        );
        let gap = signed_gap(e.coordinates.as_ref(), n.coordinates.as_ref());
        assert!(gap < 1e-9, "centring {centering}: new points' gap {gap:e}");
        for i in 0..40 {
            assert!((e.residual[i] - n.residual[i]).abs() < 1e-9, "row {i}");
            let rec = (e.reconstruction_error[i] - n.reconstruction_error[i]).abs();
            assert!(rec < 1e-9, "row {i}: {rec:e}");
        }
    }
}

#[test]
fn a_streamed_fit_in_any_chunks_is_the_in_memory_fit() {
    let x = roll(3000, 2);
    let p = NystromKpca {
        n_components: 4,
        n_landmarks: 150,
        landmark_sample: 1000,
        ..Default::default()
    };
    let whole = p.fit(x.as_ref()).unwrap();
    let mut streamed = Mat::<f64>::zeros(3000, 4);
    let mut seen = 0;
    let mut sink = |start: usize, y: MatRef<'_, f64>| {
        streamed.as_mut().subrows_mut(start, y.nrows()).copy_from(y);
        seen += y.nrows();
        Ok(())
    };
    let chunked = p
        .fit_rows(&mut InMemory(x.as_ref(), 97), Some(&mut sink))
        .unwrap();
    assert_eq!(seen, 3000);
    assert!(!chunked.keeps_embedding() && whole.keeps_embedding());
    assert_eq!(chunked.landmark_indices(), whole.landmark_indices());
    for (a, b) in whole.eigenvalues().iter().zip(chunked.eigenvalues()) {
        assert!((a - b).abs() <= 1e-12 * a, "{a} vs {b}");
    }
    let gap = (whole.embedding() - streamed.as_ref()).norm_max() / whole.embedding().norm_max();
    assert!(gap < 1e-12, "{gap:e}");
    // The coordinates alone (no diagnostics) are the embedding, also after a round trip
    // through bytes; truncated bytes are refused.
    let again = whole.embed(x.as_ref()).unwrap();
    assert!((again.as_ref() - whole.embedding()).norm_max() < 1e-12 * whole.embedding().norm_max());
    // `embed` (the fit's embedding pass, on reused per-thread buffers) gives each row the
    // bits `extend` gives it, also in a last block of one row: new points one more than
    // a block (the plan's own block size).
    let step = plan_of(&p, x.as_ref()).chunk_rows();
    let z = roll(step + 1, 7);
    let (by_embed, by_extend) = (
        whole.embed(z.as_ref()).unwrap(),
        whole.extend(z.as_ref()).unwrap(),
    );
    assert_eq!(by_embed, by_extend.coordinates);
    let bytes = whole.to_bytes();
    let back = oose::methods::kernel_pca::FittedNystromKpca::from_bytes(&bytes).unwrap();
    assert_eq!(back.embed(x.as_ref()).unwrap(), again);
    assert!(
        oose::methods::kernel_pca::FittedNystromKpca::from_bytes(&bytes[..bytes.len() - 5])
            .is_err()
    );
    // The sample is 1000 of the 3000 rows, and the landmarks are among them.
    let rows = p.sample_rows(3000);
    assert_eq!(rows.len(), 1000);
    assert!(whole.landmark_indices().iter().all(|i| rows.contains(i)));
}

#[test]
fn sums_reduce_in_any_grouping_to_the_same_model() {
    let x = roll(2000, 3);
    let p = NystromKpca {
        n_components: 3,
        n_landmarks: 100,
        ..Default::default()
    };
    let plan = plan_of(&p, x.as_ref());
    // Blocks of 500 reduced left to right, and blocks of 300 reduced pairwise.
    let mut a = plan.empty_sums();
    for s in (0..2000).step_by(500) {
        a.add(&plan.sums(x.as_ref().subrows(s, 500)).unwrap())
            .unwrap();
    }
    let mut parts: Vec<_> = (0..2000)
        .step_by(300)
        .map(|s| plan.sums(x.as_ref().subrows(s, 300.min(2000 - s))).unwrap())
        .collect();
    while parts.len() > 1 {
        let mut next = Vec::new();
        for pair in parts.chunks(2) {
            let mut s = pair[0].clone();
            if let Some(t) = pair.get(1) {
                s.add(t).unwrap();
            }
            next.push(s);
        }
        parts = next;
    }
    let (ma, mb) = (plan.finish(&a).unwrap(), plan.finish(&parts[0]).unwrap());
    let z = roll(50, 4);
    let (ya, yb) = (
        ma.extend(z.as_ref()).unwrap(),
        mb.extend(z.as_ref()).unwrap(),
    );
    let gap =
        (ya.coordinates.as_ref() - yb.coordinates.as_ref()).norm_max() / ya.coordinates.norm_max();
    assert!(gap < 1e-12, "{gap:e}");
    // Sums of the wrong size are refused by name.
    let mut short = plan.empty_sums();
    short
        .add(&plan.sums(x.as_ref().subrows(0, 10)).unwrap())
        .unwrap();
    assert!(matches!(plan.finish(&short), Err(Error::Shape { .. })));
}

#[test]
fn the_sums_are_the_same_bits_on_one_thread_and_two() {
    // Several blocks of the plan's `chunk_rows` (≈ 10⁴ rows at r = 100), each summed in
    // cache-sized pieces with a shorter last piece, and a shorter last block.
    let x = roll(25_000, 5);
    let p = NystromKpca {
        n_components: 3,
        n_landmarks: 100,
        centering: false,
        ..Default::default()
    };
    let plan = plan_of(&p, x.as_ref());
    assert!(
        plan.chunk_rows() < 12_500,
        "{} rows a block",
        plan.chunk_rows()
    );
    let sums = |threads| common::on_threads(threads, || plan.sums(x.as_ref()).unwrap());
    let one = sums(1);
    assert_eq!(one.to_bytes(), sums(2).to_bytes());
    // And they are the sums, against the kernel rows formed in one piece by
    // `Kernel::block_between` (uncentred: c₀ = 0): Σ c and Σ c cᵀ to rounding, and
    // Σ k(x, x) = N for the gaussian kernel.
    let fitted = plan.finish(&one).unwrap();
    let k = fitted
        .params()
        .kernel
        .block_between(x.as_ref(), fitted.landmarks(), Par::Seq);
    let r = k.ncols();
    assert_eq!((one.n, one.trace), (25_000, 25_000.0));
    let first: Vec<f64> = (0..r).map(|j| k.col(j).iter().sum()).collect();
    let top = first.iter().copied().fold(0.0, f64::max);
    for (a, b) in one.first.iter().zip(&first) {
        assert!((a - b).abs() <= 1e-12 * top, "{a} vs {b}");
    }
    let kk = k.transpose() * &k;
    let second = one.second.view();
    let top = kk.norm_max();
    for j in 0..r {
        for i in j..r {
            let (a, b) = (second[(i, j)], kk[(i, j)]);
            assert!((a - b).abs() <= 1e-12 * top, "({i}, {j}): {a} vs {b}");
        }
    }
}

#[test]
fn p_greedy_landmarks_beat_random_ones_at_equal_r() {
    let x = roll(2500, 5);
    let exact = KernelPca {
        n_components: 4,
        solver: Solver::Dense,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let err = |choice, seed| {
        let m = NystromKpca {
            n_components: 4,
            n_landmarks: 40,
            landmarks: choice,
            seed,
            ..Default::default()
        }
        .fit(x.as_ref())
        .unwrap();
        procrustes_error(m.embedding(), exact.embedding())
    };
    let greedy = err(Landmarks::PGreedy, 0);
    let random: f64 = (0..3).map(|s| err(Landmarks::Random, s)).sum::<f64>() / 3.0;
    let maxmin = err(Landmarks::MaxMin, 0);
    assert!(
        greedy <= 0.5 * random,
        "p-greedy {greedy:e}, random {random:e}"
    );
    assert!(greedy <= maxmin, "p-greedy {greedy:e}, max-min {maxmin:e}");
}

#[test]
fn the_residual_is_the_power_function_of_the_landmarks() {
    let x = roll(1500, 6);
    let m = NystromKpca {
        n_landmarks: 80,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let idx = m.landmark_indices().to_vec();
    let l = Mat::from_fn(idx.len(), 3, |i, j| x[(idx[i], j)]);
    let on = m.extend(l.as_ref()).unwrap();
    assert!(
        on.residual.iter().all(|&r| r < 1e-10),
        "{:?}",
        &on.residual[..5]
    );
    let far = Mat::from_fn(3, 3, |_, _| 1e3);
    let off = m.extend(far.as_ref()).unwrap();
    for i in 0..3 {
        assert!((off.residual[i] - 1.0).abs() < 1e-12, "{}", off.residual[i]);
        assert!(off.reconstruction_error[i] >= off.residual[i]);
    }
}

#[test]
fn refusals_name_the_culprit() {
    let x = roll(200, 7);
    let fit = |p: NystromKpca| p.fit(x.as_ref()).unwrap_err();
    let named = |e: Error, who: &str| match e {
        Error::InvalidParameter { name, .. } => assert_eq!(name, who),
        other => panic!("{other:?}"),
    };
    named(
        fit(NystromKpca {
            kernel: Kernel::Multiquadric {
                epsilon: Epsilon::Value(1.0),
                beta: 0.5,
            },
            ..Default::default()
        }),
        "kernel",
    );
    named(
        fit(NystromKpca {
            kernel: Kernel::Precomputed,
            ..Default::default()
        }),
        "kernel",
    );
    named(
        fit(NystromKpca {
            n_landmarks: 0,
            ..Default::default()
        }),
        "n_landmarks",
    );
    named(
        fit(NystromKpca {
            n_components: 5,
            n_landmarks: 4,
            ..Default::default()
        }),
        "n_components",
    );
    let mut bad = x.clone();
    bad[(123, 1)] = f64::NAN;
    let e = NystromKpca::default()
        .fit_rows(&mut InMemory(bad.as_ref(), 50), None)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                row: 123,
                col: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(InMemory(x.as_ref(), 50).shape(), (200, 3));
    // k(x, x) = (xᵀx + 1)³ overflows from row 150 on (norms ~1e110): named, as kernel
    // PCA names it, for every landmark choice (P-greedy found no pivot and the
    // landmarks no rank, which read as "n_components").
    let huge = Mat::from_fn(200, 3, |i, j| {
        x[(i, j)] * if i >= 150 { 1e110 } else { 1.0 }
    });
    for landmarks in [Landmarks::PGreedy, Landmarks::Random, Landmarks::MaxMin] {
        let e = NystromKpca {
            kernel: Kernel::Polynomial {
                gamma: 1.0,
                coef0: 1.0,
                degree: 3,
            },
            landmarks,
            ..Default::default()
        }
        .fit(huge.as_ref())
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Overflow {
                    what: "kernel matrix",
                    row: 150,
                    ..
                }
            ),
            "{landmarks:?}: {e:?}"
        );
    }
}

#[test]
fn landmark_mds_takes_p_greedy_landmarks() {
    let x = roll(1200, 8);
    let m = LandmarkMds {
        n_components: 3,
        n_landmarks: 30,
        landmarks: Landmarks::PGreedy,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    let idx = m.landmark_indices();
    assert!(!idx.is_empty() && idx.len() <= 30);
    let mut sorted = idx.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), idx.len(), "distinct landmarks");
    // Euclidean data: landmark MDS with spanning landmarks is classical MDS (all three
    // dimensions, so that near-equal eigenvalues cannot swap axes).
    let cmds = oose::methods::mds::ClassicalMds {
        n_components: 3,
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    // Landmark MDS centres at the landmarks' mean: compare after centring both.
    let centred = |a: MatRef<'_, f64>| {
        let mut c = a.to_owned();
        for j in 0..c.ncols() {
            let mean = c.col(j).iter().sum::<f64>() / c.nrows() as f64;
            c.col_mut(j).iter_mut().for_each(|v| *v -= mean);
        }
        c
    };
    let (a, b) = (centred(m.embedding()), centred(cmds.embedding()));
    let err = procrustes_error(a.as_ref(), b.as_ref());
    assert!(err < 1e-8, "{err:e}");
}
