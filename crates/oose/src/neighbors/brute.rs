//! Exact kNN by brute force: squared distances by GEMM on tiles of 128 queries × 2048
//! points (2 MiB), each query keeping its k best candidates in a bounded max-heap, so
//! that a candidate farther than the current k-th costs one comparison. Tiles have a
//! fixed size and are processed in a fixed order, so the result does not depend on the
//! number of threads.

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
