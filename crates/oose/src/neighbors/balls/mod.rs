//! Exact radius and kNN-ball queries for sparsified kernels (maths §1).
//!
//! Every distance that decides whether an edge exists is computed by one formula,
//! Σ_k (a_k − b_k)² in coordinate order ([`sq_dist`]), which is exactly symmetric in its
//! arguments. So the kNN radius rᵢ of a training point and the edge test
//! ||z − xᵢ||² ≤ max(r_z², rᵢ²) give the same answer for z = xᵢ as the training graph
//! did, and ties at the k-th distance are all kept (the graph never depends on
//! tie-breaking).
//!
//! The search structure is a balanced kd-tree over a copy of the points in tree order,
//! with a tight bounding box per node. A node is skipped only when the squared distance
//! from the query to its box, computed in the same coordinate order as [`sq_dist`],
//! exceeds the search radius: floating-point subtraction, squaring and addition of
//! non-negative terms are monotone, so that distance is a lower bound of [`sq_dist`] to
//! every point in the box, bit for bit, and no point within the radius is ever missed.
//!
//! A point may carry its own squared radius rᵢ² (the kNN balls of a fitted graph); each
//! node then also stores its largest, so one descent answers the mirror rule — the k
//! nearest of z together with every xᵢ whose ball contains z. Dimensions above 16 and
//! sets under 64 points are scanned by brute force with the same formula; a group of
//! queries reads each block of points once, its distances summed many at a time with
//! the same bits ([`crate::kernel::distance::sq_distances_in_order`]), wide points
//! only where a matrix product cannot rule the pair out (`brute`).

use faer::MatRef;

use super::kdtree::MAX_DIM;
use super::ragged::Ragged;

mod brute;
mod tree;
mod visit;
use brute::Brute;
use tree::{partition, Tree};
use visit::{push_mirror, Containing, KthOut, Nearest, Visit, Within};

/// Points per leaf (at most).
const LEAF: usize = 16;

/// r², widened by a relative 1e-10 (and the smallest positive normal): a safe upper
/// bound for a radius from the triangle inequality evaluated in floating point.
#[inline]
fn widen(r: f64) -> f64 {
    r * r * (1.0 + 1e-10) + f64::MIN_POSITIVE
}

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

/// Each query's points as `(original index, squared distance)`, a list per query.
pub(crate) type Links = Ragged<(usize, f64)>;

/// Reusable buffers of one querying thread.
#[derive(Default)]
pub struct Scratch {
    /// Candidates (tree position, squared distance).
    cand: Vec<(u32, f64)>,
    /// A group's points within a radius (tree positions), a list per query.
    found: Ragged<(u32, f64)>,
    /// Points whose ball holds the query (tree position, squared distance).
    members: Vec<(u32, f64)>,
    /// An upper bound of the k-th smallest squared distance seen so far (∞ at first).
    bound: f64,
    /// Candidate count at which the bound is next tightened.
    next: usize,
    /// Leaves gathered for a group of queries.
    leaves: Vec<u32>,
    /// The k nearest of a group's centre (tree positions).
    near: Vec<u32>,
    /// Each query's bound of its k-th nearest squared distance.
    bounds: Vec<f64>,
    /// Bit patterns of squared distances being selected from.
    bits: Vec<u64>,
    /// One scratch per query of a group scanned by brute force.
    each: Vec<Scratch>,
    /// A group's squared distances to a block of points, and the packed panels they
    /// are computed from (brute force).
    tile: Vec<f64>,
    pack: Vec<f64>,
    /// A group's screen (brute force).
    screen: brute::Screen,
}

impl Scratch {
    fn reset(&mut self, k: usize) {
        self.cand.clear();
        self.members.clear();
        self.bound = f64::INFINITY;
        self.next = 2 * k;
    }

    /// The k-th smallest candidate distance.
    fn kth(&mut self, k: usize) -> f64 {
        self.bits.resize(self.cand.len(), 0);
        kth_smallest(&self.cand, f64::INFINITY, k, &mut self.bits).expect("k candidates")
    }
}

/// The k-th smallest of the candidate distances at most `bound`, `None` when fewer
/// than k are (`bits` holds at least as many entries as `cand`). Squared distances are
/// ≥ +0 and never NaN, so their bit patterns order as they do.
#[inline]
fn kth_smallest(cand: &[(u32, f64)], bound: f64, k: usize, bits: &mut [u64]) -> Option<f64> {
    let mut m = 0;
    for &(_, d) in cand {
        bits[m] = d.to_bits();
        m += usize::from(d <= bound);
    }
    (m >= k).then(|| f64::from_bits(*bits[..m].select_nth_unstable(k - 1).1))
}

/// The queries every search structure answers, in tree positions.
trait Search: Send + Sync {
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<(u32, f64)>);
    /// Fills `s.cand` (see [`Nearest`]).
    fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch);
    fn containing(&self, q: &[f64], out: &mut Vec<(u32, f64)>);
    /// [`Search::within`] for each query of a group (`qs`, row-major, `dim` wide) in
    /// turn, a list each in `out`; query by query unless the structure does better.
    fn within_group(
        &self,
        qs: &[f64],
        dim: usize,
        r2: f64,
        _s: &mut Scratch,
        out: &mut Ragged<(u32, f64)>,
    ) {
        for q in qs.chunks_exact(dim) {
            self.within(q, r2, out.items_mut());
            out.close();
        }
    }
    /// The grouped queries, where the structure has them (the tree and brute force);
    /// otherwise the caller asks query by query.
    fn grouped(&self) -> Option<&dyn Grouped>;
    /// Ends of groups of nearby points, in tree positions.
    fn leaf_ends(&self) -> Vec<usize>;
    /// Gives the points the balls `r2` (tree order).
    fn set_balls(&mut self, r2: Vec<f64>);
}

/// Queries answered for a group of nearby queries at once (see [`PointIndex`]).
trait Grouped {
    /// Each query's exact k-th nearest squared distance (and ball) into `out`.
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: KthOut<'_>);
    fn links_group(&self, qs: &[f64], r2q: &[f64], ids: &[u32], s: &mut Scratch, out: &mut Links);
    fn mirror_group(&self, qs: &[f64], k: usize, ids: &[u32], s: &mut Scratch, out: &mut Links);
}

/// The three single queries of [`Search`], each a [`Visit`] passed to the structure's
/// own traversal `$walk(q, visitor)`.
macro_rules! queries_by {
    ($walk:ident) => {
        fn within(&self, q: &[f64], r2: f64, out: &mut Vec<(u32, f64)>) {
            self.$walk(q, &mut Within { r2, out });
        }
        fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch) {
            self.$walk(q, &mut Nearest { k, balls, s });
        }
        fn containing(&self, q: &[f64], out: &mut Vec<(u32, f64)>) {
            self.$walk(q, &mut Containing { out });
        }
    };
}
use queries_by;

/// Points (a row-major copy in the caller's order) with a search structure, and
/// optionally a squared radius per point (its ball).
pub struct PointIndex {
    dim: usize,
    points: Vec<f64>,
    has_balls: bool,
    /// Original index of each tree position.
    ids: Vec<u32>,
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
        let n = x.nrows();
        let points: Vec<f64> = (0..n)
            .flat_map(|i| (0..dim).map(move |j| x[(i, j)]))
            .collect();
        let (search, ids) = if !(1..=MAX_DIM).contains(&dim) || n < 64 {
            let b = Brute {
                dim,
                norms: brute::screening_norms(&points, dim),
                points: points.clone(),
                r2: Vec::new(),
            };
            (Box::new(b) as Box<dyn Search>, (0..n as u32).collect())
        } else {
            macro_rules! dispatch {
                ($($d:literal)*) => {
                    match dim {
                        $($d => {
                            let (t, ids) = Tree::<$d>::new(&points);
                            (Box::new(t) as Box<dyn Search>, ids)
                        })*
                        _ => unreachable!(),
                    }
                };
            }
            dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
        };
        PointIndex {
            dim,
            points,
            has_balls: false,
            ids,
            search,
        }
    }

    /// Indexes the rows of `x`, row i with the ball of squared radius `r2[i]` (≥ 0).
    pub fn with_balls(x: MatRef<'_, f64>, r2: &[f64]) -> PointIndex {
        Self::new(x).into_balls(r2)
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

    /// The indices of the points in an order that keeps near points together (the
    /// tree's): querying in this order reuses the cache.
    #[cfg(test)]
    pub fn spatial_order(&self) -> &[u32] {
        &self.ids
    }

    /// The k-th smallest exact squared distance from `q` to the indexed points
    /// (1 ≤ k ≤ len; a query that is one of the points counts itself at distance 0).
    #[cfg(test)]
    pub fn kth_sq_dist(&self, q: &[f64], k: usize, s: &mut Scratch) -> f64 {
        self.nearest(q, k, false, s)
    }

    /// Runs [`Nearest`]; returns the exact k-th smallest squared distance.
    fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch) -> f64 {
        assert!(
            (1..=self.len()).contains(&k),
            "k = {k} outside 1..={}",
            self.len()
        );
        s.reset(k);
        self.search.nearest(q, k, balls, s);
        s.kth(k)
    }

    /// Appends `(i, ||q − xᵢ||²)` for every point with exact squared distance ≤ `r2`.
    pub fn within(&self, q: &[f64], r2: f64, s: &mut Scratch, out: &mut Vec<(usize, f64)>) {
        s.cand.clear();
        self.search.within(q, r2, &mut s.cand);
        out.extend(
            s.cand
                .iter()
                .map(|&(p, d)| (self.ids[p as usize] as usize, d)),
        );
    }

    /// [`PointIndex::within`] for each query of a group (`qs`, row-major) with the one
    /// squared radius `r2`, a list each appended to `out` in turn. The same points as
    /// query by query (in an order fixed by the index); by brute force (above 16
    /// dimensions) each block of points is read once for the group.
    pub(crate) fn within_group(&self, qs: &[f64], r2: f64, s: &mut Scratch, out: &mut Links) {
        let dim = self.check_group(qs, 1.min(self.len()));
        let mut found = std::mem::take(&mut s.found);
        found.clear();
        self.search.within_group(qs, dim, r2, s, &mut found);
        for list in found.iter() {
            out.push_list(
                list.iter()
                    .map(|&(p, d)| (self.ids[p as usize] as usize, d)),
            );
        }
        s.found = found;
    }

    /// The mirror-rule links of a query `q` to points indexed [`with_balls`] whose radii
    /// are their k-th nearest squared distances among themselves: every i with
    /// ||q − xᵢ||² ≤ max(r²_q, r²ᵢ), r²_q the k-th smallest squared distance from q.
    /// Returns r²_q, and appends `(i, ||q − xᵢ||²)` sorted by i. One descent.
    ///
    /// [`with_balls`]: PointIndex::with_balls
    pub fn mirror_links(
        &self,
        q: &[f64],
        k: usize,
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
    ) -> f64 {
        assert!(self.has_balls, "mirror_links needs an index with balls");
        let r2q = self.nearest(q, k, true, s);
        push_mirror(s, r2q, &self.ids, out);
        r2q
    }

    /// Appends `(i, ||q − xᵢ||²)` for every i whose ball holds q (||q − xᵢ||² ≤ r²ᵢ).
    pub fn containing(&self, q: &[f64], s: &mut Scratch, out: &mut Vec<(usize, f64)>) {
        assert!(self.has_balls, "containing needs an index with balls");
        s.cand.clear();
        self.search.containing(q, &mut s.cand);
        out.extend(
            s.cand
                .iter()
                .map(|&(p, d)| (self.ids[p as usize] as usize, d)),
        );
    }

    /// [`PointIndex::mirror_links`] for a group of queries (`qs`, row-major): appends
    /// each query's links to `out` as a list. The same links as query by query, found
    /// in one descent for the whole group; it pays when the queries are near one
    /// another (a group from [`locality_groups`]). A query's links come in an order
    /// fixed by the index (not by i, and the same whatever group the query is in), so
    /// sums over them do not depend on the grouping.
    pub(crate) fn mirror_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Links) {
        assert!(self.has_balls, "mirror_group needs an index with balls");
        let dim = self.check_group(qs, k);
        match self.search.grouped() {
            Some(g) => g.mirror_group(qs, k, &self.ids, s, out),
            None => {
                for q in qs.chunks_exact(dim) {
                    self.mirror_links(q, k, s, out.items_mut());
                    out.close();
                }
            }
        }
    }

    /// [`PointIndex::kth_sq_dist`] for a group of queries (`qs`, row-major), appended
    /// to `out` in turn; one descent for the whole group (see
    /// [`PointIndex::mirror_group`]).
    pub fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Vec<f64>) {
        self.kth_group_into(
            qs,
            k,
            s,
            KthOut {
                r2: out,
                balls: None,
            },
        );
    }
    /// [`PointIndex::kth_group`], with each query's ball too: every i with
    /// ||q − xᵢ||² ≤ r²_q (its k nearest, ties included) appended to `balls` as a list
    /// of `(i, ||q − xᵢ||²)` in an order fixed by the index. The same search, so the
    /// same cost.
    pub(crate) fn balls_group(
        &self,
        qs: &[f64],
        k: usize,
        s: &mut Scratch,
        r2: &mut Vec<f64>,
        balls: &mut Links,
    ) {
        let balls = Some((&self.ids[..], balls));
        self.kth_group_into(qs, k, s, KthOut { r2, balls });
    }
    fn kth_group_into(&self, qs: &[f64], k: usize, s: &mut Scratch, mut out: KthOut<'_>) {
        let dim = self.check_group(qs, k);
        match self.search.grouped() {
            Some(g) => g.kth_group(qs, k, s, out),
            None => {
                for q in qs.chunks_exact(dim) {
                    let r2 = self.nearest(q, k, false, s);
                    out.push(&s.cand, r2);
                }
            }
        }
    }
    /// For each query q of a group (`qs`, row-major) with its own squared radius
    /// `r2q[q]`, every i with ||q − xᵢ||² ≤ max(r²_q, r²ᵢ) (the symmetric kNN rule when
    /// r²_q is q's k-th nearest squared distance), appended to `out` as a list of
    /// `(i, ||q − xᵢ||²)`. The order of a query's links is fixed by the index, as in
    /// [`PointIndex::mirror_group`].
    pub(crate) fn links_group(&self, qs: &[f64], r2q: &[f64], s: &mut Scratch, out: &mut Links) {
        assert!(self.has_balls, "links_group needs an index with balls");
        let dim = self.check_group(qs, 1.min(self.len()));
        assert_eq!(qs.len(), r2q.len() * dim, "one radius per query");
        match self.search.grouped() {
            Some(g) => g.links_group(qs, r2q, &self.ids, s, out),
            None => {
                for (q, &r) in qs.chunks_exact(dim).zip(r2q) {
                    let mut linked = Vec::new();
                    self.within(q, r, s, &mut linked);
                    self.containing(q, s, &mut linked);
                    linked.sort_unstable_by_key(|p| p.0);
                    linked.dedup_by_key(|p| p.0);
                    out.push_list(linked);
                }
            }
        }
    }

    /// Checks a group query; returns the row width.
    fn check_group(&self, qs: &[f64], k: usize) -> usize {
        assert!(
            k <= self.len() && (k >= 1 || self.is_empty()),
            "k = {k} outside 1..={}",
            self.len()
        );
        let dim = self.dim.max(1);
        assert_eq!(qs.len() % dim, 0, "queries of {dim} coordinates");
        dim
    }

    /// Groups of nearby indexed points: group g is
    /// `spatial_order()[bounds[g]..bounds[g + 1]]` (bounds[0] = 0).
    pub fn leaf_groups(&self) -> Vec<usize> {
        let mut bounds = vec![0];
        bounds.extend(self.search.leaf_ends());
        bounds
    }

    /// Runs `f(group, coordinates, scratch, out)` on every group of nearby indexed
    /// points ([`PointIndex::leaf_groups`]) in parallel: `group` holds the points'
    /// indices, `coordinates` their rows (row-major), and `f` appends one value per
    /// point of the group to `out`. Returns the values in index order.
    pub fn map_groups<T: Send>(
        &self,
        f: impl Fn(&[u32], &[f64], &mut Scratch, &mut Vec<T>) + Sync,
    ) -> Vec<T> {
        use rayon::prelude::*;
        let bounds = self.leaf_groups();
        let parts: Vec<Vec<T>> = bounds
            .par_windows(2)
            .map_init(
                || (Scratch::default(), Vec::new()),
                |(s, qs), w| {
                    let g = &self.ids[w[0]..w[1]];
                    qs.clear();
                    for &i in g {
                        qs.extend_from_slice(self.row(i as usize));
                    }
                    let mut out = Vec::with_capacity(g.len());
                    f(g, qs, s, &mut out);
                    assert_eq!(out.len(), g.len(), "one value per point of the group");
                    out
                },
            )
            .collect();
        let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(self.len()).collect();
        for (w, part) in bounds.windows(2).zip(parts) {
            for (&i, v) in self.ids[w[0]..w[1]].iter().zip(part) {
                slots[i as usize] = Some(v);
            }
        }
        slots
            .into_iter()
            .map(|v| v.expect("every point is in one group"))
            .collect()
    }

    /// The same index with the ball of squared radius `r2[i]` (≥ 0) around point i
    /// (replacing any earlier balls).
    pub fn into_balls(mut self, r2: &[f64]) -> PointIndex {
        assert_eq!(r2.len(), self.len(), "one radius per point");
        let tree_order = self.ids.iter().map(|&i| r2[i as usize]).collect();
        self.search.set_balls(tree_order);
        self.has_balls = true;
        self
    }
}

/// An order of the rows of `x` that keeps near rows together (a balanced kd-tree's
/// leaf order), cut into groups of at most `leaf` rows: group g is
/// `order[bounds[g]..bounds[g + 1]]`. Rows wider than 16 coordinates keep their order.
pub fn locality_groups(x: MatRef<'_, f64>, leaf: usize) -> (Vec<u32>, Vec<usize>) {
    let (n, dim) = (x.nrows(), x.ncols());
    let leaf = leaf.max(1);
    let mut levels = 0u32;
    while n.div_ceil(1 << levels) > leaf {
        levels += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    if (1..=MAX_DIM).contains(&dim) {
        let points: Vec<f64> = (0..n)
            .flat_map(|i| (0..dim).map(move |j| x[(i, j)]))
            .collect();
        macro_rules! dispatch {
            ($($d:literal)*) => {
                match dim {
                    $($d => partition::<$d>(&mut order, &points, levels),)*
                    _ => unreachable!(),
                }
            };
        }
        dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }
    // The leaves of `partition`: halves (the first the smaller) `levels` deep.
    fn cut(start: usize, len: usize, levels: u32, bounds: &mut Vec<usize>) {
        if levels == 0 || len < 2 {
            bounds.push(start + len);
        } else {
            cut(start, len / 2, levels - 1, bounds);
            cut(start + len / 2, len - len / 2, levels - 1, bounds);
        }
    }
    let mut bounds = vec![0];
    if n > 0 {
        cut(0, n, levels, &mut bounds);
    }
    (order, bounds)
}

#[cfg(test)]
mod tests;
