//! Exact kNN by brute force: squared distances by GEMM on tiles of 128 queries × 2048
//! points (2 MiB), each query keeping its k best candidates in a bounded max-heap, so
//! that a candidate farther than the current k-th costs one comparison. Tiles have a
//! fixed size and are processed in a fixed order, so the result does not depend on the
//! number of threads. The rows of one matrix among themselves (a training set's kNN
//! graph) take square tiles of 512 rows on one side of the diagonal only, each pair's
//! distance offered to both rows ([`knn_self`]): half the products.

use super::Neighbours;
use crate::kernel::distance::{row_sq_norms, sq_distances};
use faer::{MatRef, Par};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Queries per tile.
const QUERY_BLOCK: usize = 128;
/// Points per tile.
const POINT_BLOCK: usize = 2048;

/// A candidate neighbour ordered by (distance, index): ties go to the lower index.
#[derive(Clone, Copy, Debug)]
struct Cand(f64, usize);

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

/// The k smallest `(distance, index)` pairs offered, by (distance, index).
#[derive(Clone, Debug)]
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Cand>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The distance a candidate must not exceed to enter (+∞ while not full).
    #[inline]
    pub(crate) fn bound(&self) -> f64 {
        if self.heap.len() < self.k {
            f64::INFINITY
        } else {
            self.heap.peek().map_or(f64::INFINITY, |c| c.0)
        }
    }

    /// Offers a candidate; true if it entered.
    #[inline]
    pub(crate) fn offer(&mut self, d: f64, j: usize) -> bool {
        if self.k == 0 {
            return false;
        }
        let c = Cand(d, j);
        if self.heap.len() < self.k {
            self.heap.push(c);
            return true;
        }
        let mut top = self.heap.peek_mut().expect("full heap");
        if c < *top {
            *top = c;
            true
        } else {
            false
        }
    }

    /// The candidates, nearest first.
    pub(crate) fn into_sorted(self) -> (Vec<usize>, Vec<f64>) {
        let v = self.heap.into_sorted_vec();
        (
            v.iter().map(|c| c.1).collect(),
            v.iter().map(|c| c.0).collect(),
        )
    }
}

/// [`super::knn`] by brute force (exact; ties by index).
pub fn knn_brute(
    queries: MatRef<'_, f64>,
    points: MatRef<'_, f64>,
    k: usize,
    exclude_self: bool,
) -> Neighbours {
    knn_brute_with(super::Query::new(queries, points, k, exclude_self))
}

/// [`knn_brute`], stoppable between blocks of queries (`super::knn_stoppable`).
pub(super) fn knn_brute_with(query: super::Query<'_>) -> Neighbours {
    let super::Query {
        queries,
        points,
        k,
        exclude_self,
        stoppable,
    } = query;
    if exclude_self && same_rows(queries, points) {
        return knn_self(points, k, stoppable);
    }
    let n = points.nrows();
    let m = queries.nrows();
    let p_sq = row_sq_norms(points);
    let starts: Vec<usize> = (0..m).step_by(QUERY_BLOCK).collect();
    let parts: Vec<Neighbours> = starts
        .par_iter()
        .map(|&s| {
            let q = queries.subrows(s, QUERY_BLOCK.min(m - s));
            let q_sq = row_sq_norms(q);
            let mut tops: Vec<TopK> = (0..q.nrows()).map(|_| TopK::new(k)).collect();
            let mut bounds = vec![f64::INFINITY; q.nrows()];
            for p0 in (0..n).step_by(POINT_BLOCK) {
                // Checked per block of 128 × 2048 distances: a stop ends the search fast.
                if super::stopping(stoppable) {
                    return (Vec::new(), Vec::new());
                }
                let w = POINT_BLOCK.min(n - p0);
                let d2 = sq_distances(q, &q_sq, points.subrows(p0, w), &p_sq[p0..p0 + w], Par::Seq);
                for c in 0..w {
                    let j = p0 + c;
                    for (i, &v) in d2.col_as_slice(c).iter().enumerate() {
                        if v <= bounds[i] && !(exclude_self && j == s + i) && tops[i].offer(v, j) {
                            bounds[i] = tops[i].bound();
                        }
                    }
                }
            }
            let mut idx = Vec::with_capacity(q.nrows());
            let mut dist = Vec::with_capacity(q.nrows());
            for t in tops {
                let (i, d) = t.into_sorted();
                idx.push(i);
                dist.push(d.into_iter().map(f64::sqrt).collect());
            }
            (idx, dist)
        })
        .collect();
    let mut idx = Vec::with_capacity(m);
    let mut dist = Vec::with_capacity(m);
    for (i, d) in parts {
        idx.extend(i);
        dist.extend(d);
    }
    (idx, dist)
}

/// True when `a` and `b` are the same rows in memory.
fn same_rows(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    a.nrows() == b.nrows()
        && a.ncols() == b.ncols()
        && a.row_stride() == b.row_stride()
        && a.col_stride() == b.col_stride()
        && std::ptr::eq(a.as_ptr(), b.as_ptr())
}

/// Rows per side of the square tiles of [`knn_self`].
const SELF_BLOCK: usize = 512;

/// The k nearest other rows of every row of `x` ([`knn_brute`] with `x` both the
/// queries and the points, each row excluded from its own list). Each pair's squared
/// distance is computed once, in the tile of row blocks (I, J) with I ≤ J, and offered
/// to both rows: half the matrix products of searching every row against all rows.
/// A row's k nearest are the k smallest (distance, index) pairs offered to it, which do
/// not depend on the order in which the tiles run: the result is the same on any number
/// of threads. Stoppable between tiles.
fn knn_self(x: MatRef<'_, f64>, k: usize, stoppable: bool) -> Neighbours {
    use std::sync::Mutex;
    let n = x.nrows();
    let sq = row_sq_norms(x);
    let blocks = n.div_ceil(SELF_BLOCK);
    let rows = |b: usize| b * SELF_BLOCK..((b + 1) * SELF_BLOCK).min(n);
    let tops: Vec<Mutex<Vec<TopK>>> = (0..blocks)
        .map(|b| Mutex::new(rows(b).map(|_| TopK::new(k)).collect()))
        .collect();
    let tiles: Vec<(usize, usize)> = (0..blocks)
        .flat_map(|bi| (bi..blocks).map(move |bj| (bi, bj)))
        .collect();
    tiles.par_iter().for_each(|&(bi, bj)| {
        if super::stopping(stoppable) {
            return;
        }
        let (ri, rj) = (rows(bi), rows(bj));
        let d2 = sq_distances(
            x.subrows(ri.start, ri.len()),
            &sq[ri.clone()],
            x.subrows(rj.start, rj.len()),
            &sq[rj.clone()],
            Par::Seq,
        );
        // The rows of block I, their candidates in block J (column c of the tile).
        {
            let mut tops = tops[bi].lock().expect("no panic while offering");
            let mut bounds: Vec<f64> = tops.iter().map(TopK::bound).collect();
            for (c, j) in rj.clone().enumerate() {
                for (i, &v) in d2.col_as_slice(c).iter().enumerate() {
                    if v <= bounds[i] && j != ri.start + i && tops[i].offer(v, j) {
                        bounds[i] = tops[i].bound();
                    }
                }
            }
        }
        // The rows of block J, their candidates in block I (the same values).
        if bi != bj {
            let mut tops = tops[bj].lock().expect("no panic while offering");
            for (c, top) in tops.iter_mut().enumerate() {
                let mut bound = top.bound();
                for (i, &v) in d2.col_as_slice(c).iter().enumerate() {
                    if v <= bound && top.offer(v, ri.start + i) {
                        bound = top.bound();
                    }
                }
            }
        }
    });
    let mut idx = Vec::with_capacity(n);
    let mut dist = Vec::with_capacity(n);
    for part in tops {
        for t in part.into_inner().expect("no panic while offering") {
            let (i, d) = t.into_sorted();
            idx.push(i);
            dist.push(d.into_iter().map(f64::sqrt).collect());
        }
    }
    (idx, dist)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The rows among themselves (each pair's distance computed once, in tiles of
    /// blocks across the 512-row boundary) give what the general search gives: a copy
    /// of the rows as the queries takes the general path.
    #[test]
    fn a_self_search_finds_what_a_search_of_a_copy_finds() {
        for (n, dim, k) in [(700, 20, 9), (1100, 40, 30), (513, 3, 512)] {
            let x = Rng::new(n as u64).normal_mat(n, dim);
            let copy = x.clone();
            assert!(same_rows(x.as_ref(), x.as_ref()));
            assert!(!same_rows(copy.as_ref(), x.as_ref()));
            let (is, ds) = knn_brute(x.as_ref(), x.as_ref(), k, true);
            let (ig, dg) = knn_brute(copy.as_ref(), x.as_ref(), k, true);
            assert_eq!(is, ig, "n = {n}");
            for (a, b) in ds.iter().flatten().zip(dg.iter().flatten()) {
                assert!((a - b).abs() <= 1e-13 * a, "n = {n}: {a} vs {b}");
            }
            for (i, row) in is.iter().enumerate() {
                assert_eq!(row.len(), k.min(n - 1));
                assert!(!row.contains(&i), "row {i} among its own neighbours");
            }
        }
    }

    /// Tiles offer to a row from two sides, in whatever order the threads take them:
    /// the same bits on one thread and on two.
    #[test]
    fn a_self_search_has_the_same_bits_on_one_and_two_threads() {
        let x = Rng::new(3).normal_mat(1600, 12);
        let run = |t: usize| {
            crate::testing::on_threads(t, || knn_brute(x.as_ref(), x.as_ref(), 15, true))
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.0, two.0);
        let bits = |d: &[Vec<f64>]| d.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&one.1), bits(&two.1));
    }
}
