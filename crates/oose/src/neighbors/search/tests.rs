//! The walk against exact search and against its first two-heap form; the index's
//! edge lists; batch order.

use super::*;
use crate::neighbors::{knn_brute, recall};
use faer::Mat;

/// Training points and queries in `clusters` clusters `gap` apart (noise of unit
/// variance, `w` columns), and the index over the training points' exact `degree`
/// nearest neighbours.
fn clustered(
    (n, m, w): (usize, usize, usize),
    (clusters, gap): (usize, f64),
    degree: usize,
    seed: u64,
) -> (Mat<f64>, Mat<f64>, GraphIndex) {
    let mut rng = Rng::new(seed);
    let x = Mat::from_fn(n, w, |i, _| gap * (i % clusters) as f64 + rng.normal());
    let q = Mat::from_fn(m, w, |i, _| gap * (i % clusters) as f64 + rng.normal());
    let (graph, _) = knn_brute(x.as_ref(), x.as_ref(), degree, true);
    let index = GraphIndex::new(x.as_ref(), &graph, seed - 3);
    (x, q, index)
}

#[test]
fn the_walk_finds_almost_all_neighbours_and_training_points_exactly() {
    let (x, q, index) = clustered((4000, 500, 20), (9, 3.0), 15, 3);
    let (approx, _) = index.search(q.as_ref(), 10);
    let (exact, _) = knn_brute(q.as_ref(), x.as_ref(), 10, false);
    let r = recall(&approx, &exact);
    assert!(r > 0.98, "recall {r}");
    let (own, d) = index.search(x.as_ref().subrows(100, 50), 5);
    for (i, (o, d)) in own.iter().zip(&d).enumerate() {
        assert_eq!((o[0], d[0]), (100 + i, 0.0));
    }
    // Row by row as in a batch.
    let one = index.search(q.as_ref().subrows(7, 1), 10);
    assert_eq!(one.0[0], approx[7]);
}

#[test]
fn edges_both_ways_are_each_listed_once_in_increasing_order() {
    // Lists with repeats, a point listing itself, points no one lists and empty
    // lists: every point's edges are the sorted set of its list and of the points
    // listing it, as with a growing list per point.
    let mut rng = Rng::new(5);
    let n = 300;
    let lists: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            let len = if i % 7 == 0 { 0 } else { 1 + rng.below(12) };
            (0..len)
                .map(|t| if t == 3 { i } else { rng.below(n / 2) })
                .collect()
        })
        .collect();
    let index = GraphIndex::new(Mat::<f64>::zeros(n, 2).as_ref(), &lists, 1);
    let mut want: Vec<Vec<u32>> = lists
        .iter()
        .map(|r| r.iter().map(|&j| j as u32).collect())
        .collect();
    for (i, r) in lists.iter().enumerate() {
        for &j in r {
            want[j].push(i as u32);
        }
    }
    for (i, w) in want.iter_mut().enumerate() {
        w.sort_unstable();
        w.dedup();
        let got = &index.adjacent[index.offsets[i]..index.offsets[i + 1]];
        assert_eq!(got, &w[..], "point {i}");
    }
    assert_eq!(index.offsets.len(), n + 1);
    assert_eq!(index.adjacent.len(), index.offsets[n]);
    // Equal rows share a hash: all of them are found.
    assert_eq!(index.same_hash(&[0.0, 0.0]).count(), n);
}

#[test]
fn each_row_gets_the_same_neighbours_in_any_batch_order() {
    // The batch is searched in the order of `batch_order`'s cells, not in input
    // order: every row must still get what it gets alone, in its own place.
    let (_, q, index) = clustered((3000, 400, 12), (5, 4.0), 10, 8);
    let all = index.search(q.as_ref(), 7);
    let reversed = Mat::from_fn(q.nrows(), q.ncols(), |i, c| q[(q.nrows() - 1 - i, c)]);
    let back = index.search(reversed.as_ref(), 7);
    for i in 0..q.nrows() {
        let alone = index.search(q.as_ref().subrows(i, 1), 7);
        assert_eq!(
            (&all.0[i], &all.1[i]),
            (&alone.0[0], &alone.1[0]),
            "row {i}"
        );
        let j = q.nrows() - 1 - i;
        assert_eq!(
            (&back.0[j], &back.1[j]),
            (&alone.0[0], &alone.1[0]),
            "row {i}"
        );
    }
    // The columns by variance, written by hand: ±1, ±3 and ±2 about 0 have variances
    // 1, 9 and 4, so the order is column 1 (cells of 3 / 2), then column 2.
    let spread = Mat::from_fn(40, 3, |i, c| {
        [1.0, 3.0, 2.0][c] * if i % 2 == 0 { 1.0 } else { -1.0 }
    });
    assert_eq!(batch_order(spread.as_ref()), (1, 2, 1.5));
    // A constant column among others, and a single constant column, still give one.
    let flat = Mat::from_fn(50, 3, |i, c| if c == 1 { 2.0 } else { i as f64 });
    assert_eq!(batch_order(flat.as_ref()).0, 0);
    assert_eq!(batch_order(Mat::<f64>::zeros(4, 1).as_ref()), (0, 0, 1.0));
    // Rows without columns: no column to order by, every training row at distance 0.
    let lists: Vec<Vec<usize>> = (0..6).map(|i| vec![(i + 1) % 6]).collect();
    let none = GraphIndex::new(Mat::<f64>::zeros(6, 0).as_ref(), &lists, 1);
    let (idx, dist) = none.search(Mat::<f64>::zeros(3, 0).as_ref(), 2);
    assert_eq!((idx.len(), dist), (3, vec![vec![0.0, 0.0]; 3]));
}

/// The walk as first written, with two heaps (the nearest unexpanded candidate
/// popped from one, the ef best kept in the other), for the test below.
fn two_heap_walk(index: &GraphIndex, z: &[f64], k: usize) -> (Vec<usize>, Vec<f64>) {
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashSet};
    let ef = EF.max(k);
    let mut seen = HashSet::new();
    let mut best: BinaryHeap<Cand> = BinaryHeap::new();
    let mut todo: BinaryHeap<Reverse<Cand>> = BinaryHeap::new();
    let mut visit = |i: u32, best: &mut BinaryHeap<Cand>, todo: &mut BinaryHeap<_>| {
        if !seen.insert(i) {
            return;
        }
        let c = Cand(sq(z, index.point(i)), i);
        if best.len() < ef || c < *best.peek().unwrap() {
            best.push(c);
            if best.len() > ef {
                best.pop();
            }
            todo.push(Reverse(c));
        }
    };
    for i in index.same_hash(z) {
        if index.point(i) == z {
            visit(i, &mut best, &mut todo);
        }
    }
    for &s in &index.seeds {
        visit(s, &mut best, &mut todo);
    }
    while let Some(Reverse(c)) = todo.pop() {
        if best.len() >= ef && c > *best.peek().unwrap() {
            break;
        }
        let i = c.1 as usize;
        for &j in &index.adjacent[index.offsets[i]..index.offsets[i + 1]] {
            visit(j, &mut best, &mut todo);
        }
    }
    let mut v = best.into_sorted_vec();
    v.truncate(k);
    (
        v.iter().map(|c| c.1 as usize).collect(),
        v.iter().map(|c| c.0.sqrt()).collect(),
    )
}

#[test]
fn the_kept_list_expands_as_two_heaps_do_on_every_path() {
    // 45 columns: four-wide blocks and a remainder in every distance.
    let (x, q, index) = clustered((3000, 300, 45), (7, 2.0), 12, 4);
    let n = x.nrows();
    for k in [1, 10, 40] {
        // Queries, then training rows (found by their hash).
        let owned: Vec<Vec<f64>> = (0..q.nrows())
            .chain(0..20)
            .enumerate()
            .map(|(t, r)| {
                let m = if t < q.nrows() && k != 40 {
                    q.as_ref()
                } else {
                    x.as_ref()
                };
                (0..45).map(|c| m[(r, c)]).collect()
            })
            .collect();
        let rows: Vec<&[f64]> = owned.iter().map(Vec::as_slice).collect();
        // Walked GROUP at a time, and in groups of 3 (fewer walks than slots); each
        // row as when walked alone.
        for rows in [&rows[..], &rows[..3]] {
            let walked = |avx: bool| {
                let mut marks = Marks(vec![0; n]);
                let mut out = vec![(Vec::new(), Vec::new()); rows.len()];
                #[cfg(target_arch = "x86_64")]
                if avx {
                    // SAFETY: only called on a CPU with AVX (below).
                    unsafe { index.walks_avx(rows, k, &mut marks, &mut out) };
                    assert!(marks.0.iter().all(|&m| m == 0), "marks left");
                    return out;
                }
                let _ = avx;
                index.walk::<false>(rows, k, &mut marks, &mut out);
                assert!(marks.0.iter().all(|&m| m == 0), "marks left");
                out
            };
            let mut paths = vec![("plain", walked(false))];
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx") {
                paths.push(("avx", walked(true)));
            }
            for (path, found) in paths {
                for (r, (z, (i, d))) in rows.iter().zip(found).enumerate() {
                    let (want_i, want_d) = two_heap_walk(&index, z, k);
                    assert_eq!(i, want_i, "{path}, k = {k}, row {r}");
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&d), bits(&want_d), "{path}, k = {k}, row {r}");
                }
            }
        }
    }
}

#[test]
fn the_index_is_the_same_on_one_thread_and_two() {
    // Edges on one thread while the rows are copied (in blocks shared among the
    // threads) and hashed on another: 5000 rows are 79 blocks of the copy.
    let mut rng = Rng::new(17);
    let x = Mat::from_fn(5000, 20, |i, _| (i % 7) as f64 + rng.normal());
    let (graph, _) = knn_brute(x.as_ref(), x.as_ref(), 10, true);
    let on =
        |threads| crate::testing::on_threads(threads, || GraphIndex::new(x.as_ref(), &graph, 2));
    let (one, two) = (on(1), on(2));
    assert_eq!(one, two);
    let rows: Vec<f64> = (0..5000 * 20).map(|t| x[(t / 20, t % 20)]).collect();
    assert_eq!(one.x, rows);
    let filled = one.rows.slots.iter().filter(|s| s.1 != 0).count();
    assert_eq!((filled, one.offsets.len()), (5000, 5001));
}

#[test]
fn the_row_table_finds_every_row_of_a_hash_through_collisions() {
    // Rows 0, 2 and 4 share a hash; row 1's lands in their slot (3) and differs in the
    // upper half; row 3's upper half equals theirs, its slot (12) does not. 2·5 → 16
    // slots. (A row of the same upper half further along a run of full slots would be
    // a candidate too: the walk compares the bits.)
    let hashes = [
        0x7_0000_0003,
        0x9_0000_0003,
        0x7_0000_0003,
        0x7_0000_000C,
        0x7_0000_0003,
    ];
    let table = RowTable::new(hashes.iter().copied(), hashes.len());
    assert_eq!(table.slots.len(), 16);
    let mut same: Vec<u32> = table.get(0x7_0000_0003).collect();
    same.sort_unstable();
    assert_eq!(same, [0, 2, 4]);
    assert_eq!(table.get(0x9_0000_0003).collect::<Vec<_>>(), [1]);
    assert_eq!(table.get(0x7_0000_000C).collect::<Vec<_>>(), [3]);
    assert_eq!(table.get(0x5_0000_0001).count(), 0);
    // A table of no rows has slots, all empty.
    assert_eq!(RowTable::new(std::iter::empty(), 0).get(3).count(), 0);
}
