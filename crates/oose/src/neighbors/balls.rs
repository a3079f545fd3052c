//! Exact radius queries for sparsified kernels (SPEC §1).
//!
//! Every distance that decides whether an edge exists is computed here by one formula,
//! Σ_k (a_k − b_k)² in coordinate order, which is exactly symmetric in its arguments.
//! The kd-tree (kiddo, dimension ≤ 16) only proposes candidates with a radius widened by
//! a relative 1e−9, and every candidate is re-checked with that formula: so the kNN
//! radius rᵢ of a training point and the edge test ||z − xᵢ||² ≤ max(r_z², rᵢ²) give the
//! same answer for z = xᵢ as the training graph did, whatever the tree's rounding, and
//! ties at the k-th distance are all kept (the graph never depends on tie-breaking).
//!
//! [`BallIndex`] answers the mirror rule's reverse question — which xᵢ have z inside
//! their own ball of radius rᵢ — with one tree per octave of rᵢ², each queried with its
//! largest radius, so that a few large balls do not slow every query down.

use faer::MatRef;
use kiddo::immutable::float::kdtree::ImmutableKdTree;
use kiddo::SquaredEuclidean;
use std::num::NonZero;

use super::kdtree::MAX_DIM;

/// Relative widening of the tree's search radius; candidates are then checked exactly.
const WIDEN: f64 = 1.0 + 1e-9;

/// Exact squared Euclidean distance, Σ (a_k − b_k)², symmetric in `a` and `b`.
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (u, v) in a.iter().zip(b) {
        let d = u - v;
        s += d * d;
    }
    s
}

trait Search: Send + Sync {
    /// Items whose (tree) squared distance to `q` is at most `r2`, unsorted.
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<usize>);
    /// The `k` nearest items (any order).
    fn nearest(&self, q: &[f64], k: usize, out: &mut Vec<usize>);
}

struct Tree<const K: usize>(ImmutableKdTree<f64, u32, K, 32>);

impl<const K: usize> Search for Tree<K> {
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<usize>) {
        let q: [f64; K] = std::array::from_fn(|j| q[j]);
        out.extend(
            self.0
                .within_unsorted::<SquaredEuclidean>(&q, r2)
                .into_iter()
                .map(|nb| nb.item as usize),
        );
    }

    fn nearest(&self, q: &[f64], k: usize, out: &mut Vec<usize>) {
        let q: [f64; K] = std::array::from_fn(|j| q[j]);
        if let Some(k) = NonZero::new(k) {
            out.extend(
                self.0
                    .nearest_n::<SquaredEuclidean>(&q, k)
                    .into_iter()
                    .map(|nb| nb.item as usize),
            );
        }
    }
}

/// Brute force: every point is a candidate (the caller filters exactly).
struct Brute(usize);

impl Search for Brute {
    fn within(&self, _q: &[f64], _r2: f64, out: &mut Vec<usize>) {
        out.extend(0..self.0);
    }

    fn nearest(&self, _q: &[f64], _k: usize, out: &mut Vec<usize>) {
        out.extend(0..self.0);
    }
}

fn build(points: &[f64], dim: usize) -> Box<dyn Search> {
    let n = points.len() / dim.max(1);
    if !(1..=MAX_DIM).contains(&dim) || n < 64 {
        return Box::new(Brute(n));
    }
    macro_rules! dispatch {
        ($($d:literal)*) => {
            match dim {
                $($d => {
                    let rows: Vec<[f64; $d]> = points
                        .chunks_exact($d)
                        .map(|c| std::array::from_fn(|j| c[j]))
                        .collect();
                    Box::new(Tree::<$d>(ImmutableKdTree::new_from_slice(&rows)))
                })*
                _ => unreachable!(),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// Points (row-major copy) with a search structure.
pub struct PointIndex {
    dim: usize,
    points: Vec<f64>,
    search: Box<dyn Search>,
}

impl std::fmt::Debug for PointIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PointIndex({}×{})", self.len(), self.dim)
    }
}

impl PointIndex {
    /// Indexes the rows of `x`.
    pub fn new(x: MatRef<'_, f64>) -> PointIndex {
        let dim = x.ncols();
        let points: Vec<f64> = (0..x.nrows())
            .flat_map(|i| (0..dim).map(move |j| x[(i, j)]))
            .collect();
        Self::from_rows(points, dim)
    }

    fn from_rows(points: Vec<f64>, dim: usize) -> PointIndex {
        let search = build(&points, dim);
        PointIndex {
            dim,
            points,
            search,
        }
    }

    /// Number of indexed points.
    pub fn len(&self) -> usize {
        self.points.len() / self.dim.max(1)
    }

    /// True when no point is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` of the indexed points.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.points[i * self.dim..(i + 1) * self.dim]
    }

    /// The k-th smallest exact squared distance from `q` to the indexed points (k ≥ 1,
    /// k ≤ len; a query that is one of the points counts itself at distance 0).
    pub fn kth_sq_dist(&self, q: &[f64], k: usize, scratch: &mut Vec<usize>) -> f64 {
        scratch.clear();
        self.search.nearest(q, k, scratch);
        let tree_kth = scratch
            .iter()
            .map(|&i| sq_dist(q, self.row(i)))
            .fold(0.0f64, f64::max);
        // The tree's k nearest may differ from the exact k nearest by rounding: collect
        // everything within the (widened) tree radius and select exactly.
        scratch.clear();
        self.search.within(q, tree_kth * WIDEN, scratch);
        let mut d: Vec<f64> = scratch.iter().map(|&i| sq_dist(q, self.row(i))).collect();
        if d.len() < k {
            // Cannot happen for the tree (the k nearest lie within their own radius);
            // kept as a guard for degenerate inputs.
            d = (0..self.len()).map(|i| sq_dist(q, self.row(i))).collect();
        }
        let (_, kth, _) = d.select_nth_unstable_by(k - 1, f64::total_cmp);
        *kth
    }

    /// An upper bound on the k-th smallest exact squared distance from `q`: the largest
    /// exact squared distance to the k points the tree finds nearest (any k points
    /// bound the k-th smallest distance from above; for the tree's choice it is that
    /// distance up to rounding).
    pub fn kth_sq_dist_bound(&self, q: &[f64], k: usize, scratch: &mut Vec<usize>) -> f64 {
        scratch.clear();
        self.search.nearest(q, k, scratch);
        scratch
            .iter()
            .map(|&i| sq_dist(q, self.row(i)))
            .fold(0.0f64, f64::max)
    }

    /// Appends `(i, ||q − xᵢ||²)` for every point with exact squared distance ≤ `r2`.
    pub fn within(
        &self,
        q: &[f64],
        r2: f64,
        scratch: &mut Vec<usize>,
        out: &mut Vec<(usize, f64)>,
    ) {
        scratch.clear();
        self.search.within(q, r2 * WIDEN, scratch);
        for &i in scratch.iter() {
            let d = sq_dist(q, self.row(i));
            if d <= r2 {
                out.push((i, d));
            }
        }
    }
}

/// Points, each with its own squared radius r²ᵢ, answering "which balls contain q".
#[derive(Debug)]
pub struct BallIndex {
    /// One index per octave of r², with the global ids of its points and the octave's
    /// largest r².
    levels: Vec<(PointIndex, Vec<usize>, f64)>,
    r2: Vec<f64>,
}

impl BallIndex {
    /// Indexes the rows of `x` with squared radii `r2` (one per row, ≥ 0).
    pub fn new(x: MatRef<'_, f64>, r2: &[f64]) -> BallIndex {
        let dim = x.ncols();
        let mut groups: std::collections::BTreeMap<i32, Vec<usize>> = Default::default();
        for (i, &r) in r2.iter().enumerate() {
            let key = if r > 0.0 {
                r.log2().floor() as i32
            } else {
                i32::MIN
            };
            groups.entry(key).or_default().push(i);
        }
        let levels = groups
            .into_values()
            .map(|ids| {
                let rows: Vec<f64> = ids
                    .iter()
                    .flat_map(|&i| (0..dim).map(move |j| x[(i, j)]))
                    .collect();
                let max = ids.iter().map(|&i| r2[i]).fold(0.0, f64::max);
                (PointIndex::from_rows(rows, dim), ids, max)
            })
            .collect();
        BallIndex {
            levels,
            r2: r2.to_vec(),
        }
    }

    /// The mirror-rule links of a query `q` to the indexed points, whose radii are their
    /// k-th nearest squared distances among themselves (`points` indexes the same rows):
    /// every i with ||q − xᵢ||² ≤ max(r²_q, r²ᵢ), r²_q the k-th smallest squared distance
    /// from q. Returns r²_q, and appends `(i, ||q − xᵢ||²)` sorted by i. One kNN query and
    /// one radius query per octave of radii.
    pub fn mirror_links(
        &self,
        q: &[f64],
        k: usize,
        points: &PointIndex,
        scratch: &mut Vec<usize>,
        out: &mut Vec<(usize, f64)>,
    ) -> f64 {
        let bound = points.kth_sq_dist_bound(q, k, scratch);
        let mut cand: Vec<(usize, f64)> = Vec::new();
        let mut local = Vec::new();
        for (index, ids, max) in &self.levels {
            local.clear();
            index.within(q, max.max(bound), scratch, &mut local);
            cand.extend(local.iter().map(|&(li, d)| (ids[li], d)));
        }
        // Every point within `bound` is a candidate, and at least k are.
        let mut near: Vec<f64> = cand.iter().map(|p| p.1).filter(|&d| d <= bound).collect();
        let (_, kth, _) = near.select_nth_unstable_by(k - 1, f64::total_cmp);
        let r2q = *kth;
        let start = out.len();
        out.extend(
            cand.into_iter()
                .filter(|&(i, d)| d <= r2q || d <= self.r2[i]),
        );
        out[start..].sort_by_key(|p| p.0);
        r2q
    }

    /// Appends `(i, ||q − xᵢ||²)` for every i with ||q − xᵢ||² ≤ r²ᵢ.
    pub fn containing(&self, q: &[f64], scratch: &mut Vec<usize>, out: &mut Vec<(usize, f64)>) {
        let mut local = Vec::new();
        for (index, ids, max) in &self.levels {
            local.clear();
            index.within(q, *max, scratch, &mut local);
            for &(li, d) in &local {
                let i = ids[li];
                if d <= self.r2[i] {
                    out.push((i, d));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use faer::Mat;

    #[test]
    fn radius_queries_match_brute_force() {
        let mut r = Rng::new(5);
        for dim in [2usize, 3, 20] {
            let x = Mat::from_fn(300, dim, |_, _| r.normal());
            let idx = PointIndex::new(x.as_ref());
            let r2: Vec<f64> = (0..300).map(|_| r.uniform() * 2.0).collect();
            let balls = BallIndex::new(x.as_ref(), &r2);
            let mut scratch = Vec::new();
            for q in 0..20 {
                let qv: Vec<f64> = (0..dim).map(|_| r.normal()).collect();
                let all: Vec<f64> = (0..300).map(|i| sq_dist(&qv, idx.row(i))).collect();
                let mut sorted = all.clone();
                sorted.sort_by(f64::total_cmp);
                let k = 1 + q % 7;
                assert_eq!(idx.kth_sq_dist(&qv, k, &mut scratch), sorted[k - 1]);
                let mut got = Vec::new();
                idx.within(&qv, 1.5, &mut scratch, &mut got);
                let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
                got.sort();
                let want: Vec<usize> = (0..300).filter(|&i| all[i] <= 1.5).collect();
                assert_eq!(got, want);
                let mut links = Vec::new();
                let r2q = balls.mirror_links(&qv, k, &idx, &mut scratch, &mut links);
                assert_eq!(r2q, sorted[k - 1]);
                let want: Vec<usize> = (0..300).filter(|&i| all[i] <= r2q.max(r2[i])).collect();
                assert_eq!(links.iter().map(|p| p.0).collect::<Vec<_>>(), want);
                let mut got = Vec::new();
                balls.containing(&qv, &mut scratch, &mut got);
                let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
                got.sort();
                let want: Vec<usize> = (0..300).filter(|&i| all[i] <= r2[i]).collect();
                assert_eq!(got, want);
            }
        }
    }
}
