//! The inverted lists against the exact search; their kernels against each other; the
//! contract (rows independent of the batch); what a stored list must satisfy.

use super::kernel::plain;
use super::*;
use crate::neighbors::{knn_brute, recall};
use faer::Mat;

/// `n` training points and `m` queries in `clusters` clusters `gap` apart (noise of unit
/// variance, `w` columns, every value shifted by `offset`).
fn clustered(
    (n, m, w): (usize, usize, usize),
    (clusters, gap, offset): (usize, f64, f64),
    seed: u64,
) -> (Mat<f64>, Mat<f64>) {
    let mut rng = Rng::new(seed);
    let mut point =
        |i: usize, c: usize| offset + gap * ((i % clusters) as f64 + (c % 3) as f64) + rng.normal();
    let x = Mat::from_fn(n, w, &mut point);
    let q = Mat::from_fn(m, w, &mut point);
    (x, q)
}

fn index_of(x: MatRef<'_, f64>) -> (Lists, InvertedIndex) {
    let rows = crate::linalg::row_major(x);
    let lists = Lists::new(&rows, x.ncols());
    assert!(lists.is_consistent(x.nrows(), x.ncols()));
    let index = InvertedIndex::new(rows, x.ncols(), &lists);
    (lists, index)
}

#[test]
fn the_lists_find_almost_all_neighbours_and_training_points_exactly() {
    // Recall against the exact search, also where every value is offset by 10⁶ (the
    // lists subtract the mean before rounding to single precision).
    for offset in [0.0, 1e6] {
        let (x, q) = clustered((4000, 500, 20), (9, 3.0, offset), 3);
        let (lists, index) = index_of(x.as_ref());
        // ⌊2√4000⌉ lists; of them, as many probed as the calibration asks (noise in
        // every direction: many).
        assert_eq!(lists.ends.len(), 126);
        assert!((4..=126).contains(&lists.probes), "{}", lists.probes);
        let (approx, dist) = index.search(q.as_ref(), 10);
        let (exact, exact_d) = knn_brute(q.as_ref(), x.as_ref(), 10, false);
        let r = recall(&approx, &exact);
        assert!(r > 0.97, "offset {offset}: recall {r}");
        // The distances are the exact ones of the points returned, nearest first.
        for (a, (i, d)) in approx.iter().zip(&dist).enumerate() {
            for (&i, &d) in i.iter().zip(d) {
                let want = sq(
                    &crate::linalg::row_major(q.as_ref().subrows(a, 1)),
                    index.point(i),
                );
                assert_eq!(d, want.sqrt());
            }
            assert!(d.windows(2).all(|p| p[0] <= p[1]));
            if exact[a] == *i {
                // The brute-force search's distances come from a Gram matrix.
                for (d, e) in d.iter().zip(&exact_d[a]) {
                    assert!((d - e).abs() <= 1e-12 * e, "row {a}: {d} {e}");
                }
            }
        }
        let (own, d) = index.search(x.as_ref().subrows(100, 50), 5);
        for (i, (o, d)) in own.iter().zip(&d).enumerate() {
            assert_eq!((o[0], d[0]), (100 + i, 0.0));
        }
    }
}

#[test]
fn each_row_gets_the_same_neighbours_in_any_batch() {
    let (x, q) = clustered((3000, 700, 7), (5, 4.0, 0.0), 11);
    let (_, index) = index_of(x.as_ref());
    let batch = index.search(q.as_ref(), 12);
    // Reversed, which moves every row to another block and group.
    let rev = Mat::from_fn(q.nrows(), q.ncols(), |i, c| q[(q.nrows() - 1 - i, c)]);
    let back = index.search(rev.as_ref(), 12);
    for a in 0..q.nrows() {
        let b = q.nrows() - 1 - a;
        assert_eq!(
            (&batch.0[a], &batch.1[a]),
            (&back.0[b], &back.1[b]),
            "row {a}"
        );
    }
    for a in (0..q.nrows()).step_by(37) {
        let one = index.search(q.as_ref().subrows(a, 1), 12);
        assert_eq!(
            (&one.0[0], &one.1[0]),
            (&batch.0[a], &batch.1[a]),
            "row {a}"
        );
    }
    // And on one thread.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| index.search(q.as_ref(), 12)), batch);
    let again = pool.install(|| index_of(x.as_ref()).0);
    assert_eq!(again, index_of(x.as_ref()).0);
}

#[test]
fn every_kernel_gives_the_same_bits() {
    let mut rng = Rng::new(5);
    for w in [1, 3, 17, 50] {
        let rows: Vec<f32> = (0..40 * w).map(|_| (rng.normal() * 30.0) as f32).collect();
        let tiles = Tiles::of_rows(&rows, w, Some(&vec![0.25; w]));
        let qs: Vec<f32> = (0..GROUP * w)
            .map(|_| (rng.normal() * 30.0) as f32)
            .collect();
        for nq in [1, 3, 5, GROUP] {
            let q = &qs[..nq * w];
            for t in 0..tiles.count() {
                let (data, norms, _) = tiles.tile(t);
                let by = By {
                    shift: std::array::from_fn(|_| (rng.normal() * 100.0).abs() as f32),
                    worst: std::array::from_fn(|_| (rng.normal() * 3e4).abs() as f32),
                };
                let mut want: Out = [[0.0; LANES]; GROUP];
                let want_masks = plain(q, data, norms, &by, &mut want);
                // The plain kernel is the formula: ‖p‖² − 2 Σ q·p, one fma at a time,
                // plus the shift; marked where not above the bound.
                let p0: Vec<f32> = (0..w).map(|c| data[c * LANES]).collect();
                let dot = q[..w]
                    .iter()
                    .zip(&p0)
                    .fold(0.0f32, |a, (x, y)| x.mul_add(*y, a));
                let d = (-2.0f32).mul_add(dot, norm2(&p0)) + by.shift[0];
                assert_eq!(want[0][0], d);
                assert_eq!(want_masks[0] & 1 == 1, d <= by.worst[0]);
                for kernel in Kernel::all() {
                    let mut got: Out = [[1.0; LANES]; GROUP];
                    let masks = kernel.run(q, (data, norms), &by, &mut got);
                    for u in 0..nq {
                        let (a, b) = (got[u].map(f32::to_bits), want[u].map(f32::to_bits));
                        assert_eq!(a, b, "{kernel:?} w {w} query {u}");
                        assert_eq!(masks[u], want_masks[u], "{kernel:?} w {w} query {u}");
                    }
                    assert_eq!(kernel.norm2(&q[..w]).to_bits(), norm2(&q[..w]).to_bits());
                }
            }
        }
    }
}

#[test]
fn a_query_whose_lists_hold_fewer_than_k_points_gets_the_exact_answer() {
    let (x, q) = clustered((400, 60, 4), (4, 5.0, 0.0), 8);
    let (lists, index) = index_of(x.as_ref());
    // 40 lists of about 10 points, at most 15 of them probed: fewer than 200 points.
    assert_eq!(lists.ends.len(), 40);
    assert!(lists.probes <= 15, "{}", lists.probes);
    let got = index.search(q.as_ref(), 200);
    let want = knn_brute(q.as_ref(), x.as_ref(), 200, false);
    assert_eq!(got.0, want.0);
}

#[test]
fn edited_lists_are_inconsistent() {
    let (x, _) = clustered((500, 1, 3), (3, 4.0, 0.0), 2);
    let (lists, _) = index_of(x.as_ref());
    let (n, w) = (500, 3);
    type Edit = Box<dyn Fn(&mut Lists)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("a point twice", Box::new(|l| l.members[1] = l.members[0])),
        ("a point out of range", Box::new(|l| l.members[3] = 500)),
        ("no probe", Box::new(|l| l.probes = 0)),
        ("more probes than lists", Box::new(|l| l.probes = 46)),
        ("a NaN centroid", Box::new(|l| l.centroids[4] = f32::NAN)),
        ("an infinite mean", Box::new(|l| l.mean[1] = f64::INFINITY)),
        ("lists out of order", Box::new(|l| l.ends.swap(0, 1))),
        (
            "a list past the end",
            Box::new(|l| *l.ends.last_mut().unwrap() += 1),
        ),
        (
            "a centroid short",
            Box::new(|l| {
                l.centroids.pop();
            }),
        ),
    ];
    assert_eq!(lists.ends.len(), 45);
    for (what, edit) in edits {
        let mut l = lists.clone();
        edit(&mut l);
        assert!(!l.is_consistent(n, w), "{what}");
    }
    assert!(!lists.is_consistent(n + 1, w));
    assert!(!lists.is_consistent(n, w + 1));
}

#[test]
fn the_probed_count_is_the_fewest_nearest_lists_holding_99_percent_of_the_sample() {
    // The calibration recomputed here from the probes' own order (every centroid
    // ranked by `nearest`) and the exact neighbours in double precision.
    for (clusters, w, seed) in [(9, 20, 3), (4, 5, 8)] {
        let (x, _) = clustered((3000, 1, w), (clusters, 3.0, 0.0), seed);
        let (lists, _) = index_of(x.as_ref());
        let n = x.nrows();
        let c = lists.ends.len();
        let mut label = vec![0usize; n];
        for j in 0..c {
            for &i in lists.list(j) {
                label[i as usize] = j;
            }
        }
        let sample = Rng::new(SEED ^ 1).sample_indices(n, CALIBRATION_SAMPLE.min(n));
        let rows = crate::linalg::row_major(x.as_ref());
        let xc = centred(&rows, w, &lists.mean);
        let sample_rows: Vec<f32> = sample
            .iter()
            .flat_map(|&i| xc[i * w..(i + 1) * w].to_vec())
            .collect();
        let tiles = Tiles::of_rows(&lists.centroids, w, None);
        let order = nearest(Kernel::Plain, &sample_rows, w, &tiles, c);
        let (near, _) = knn_brute(x.as_ref(), x.as_ref(), CALIBRATION_K, true);
        let mut ranks = Vec::new();
        for (a, &s) in sample.iter().enumerate() {
            let o = &order[a * c..(a + 1) * c];
            for &j in &near[s] {
                ranks.push(o.iter().position(|&l| l as usize == label[j]).unwrap());
            }
        }
        ranks.sort_unstable();
        let want = ranks[(CALIBRATION_RECALL * ranks.len() as f64).ceil() as usize - 1] + 1;
        assert_eq!(
            lists.probes as usize, want,
            "{clusters} clusters in {w} dimensions"
        );
    }
}
