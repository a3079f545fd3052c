//! Exact radius and kNN-ball queries for sparsified kernels (SPEC §1).
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
//! sets under 64 points are scanned by brute force with the same formula.

use faer::MatRef;

use super::kdtree::MAX_DIM;

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

/// Reusable buffers of one querying thread.
#[derive(Default)]
pub struct Scratch {
    /// Candidates (tree position, squared distance).
    cand: Vec<(u32, f64)>,
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
        kth_smallest(&self.cand, f64::INFINITY, k, &mut self.bits)
    }
}

/// The k-th smallest of the candidate distances at most `bound` (there are at least
/// k; `bits` holds at least as many entries as `cand`). Squared distances are ≥ +0 and
/// never NaN, so their bit patterns order as they do.
#[inline]
fn kth_smallest(cand: &[(u32, f64)], bound: f64, k: usize, bits: &mut [u64]) -> f64 {
    let mut m = 0;
    for &(_, d) in cand {
        bits[m] = d.to_bits();
        m += usize::from(d <= bound);
    }
    assert!(m >= k, "fewer than k candidates");
    f64::from_bits(*bits[..m].select_nth_unstable(k - 1).1)
}

/// What a descent collects: the radius within which it must look in a node whose
/// largest ball is `node_r2`, and what it does with the points of a leaf (tree
/// positions from `start`, their squared distances, their balls' squared radii or an
/// empty slice).
trait Visit {
    fn limit(&self, node_r2: f64) -> f64;
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]);
}

/// Every point with d ≤ r².
struct Within<'a> {
    r2: f64,
    out: &'a mut Vec<(u32, f64)>,
}

impl Visit for Within<'_> {
    #[inline]
    fn limit(&self, _: f64) -> f64 {
        self.r2
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], _: &[f64]) {
        for (j, &d) in d.iter().enumerate() {
            if d <= self.r2 {
                self.out.push(((start + j) as u32, d));
            }
        }
    }
}

/// The k nearest (with ties), and with `balls` also every point whose ball holds q
/// (those go to `Scratch::members`).
///
/// The candidates are every point reached while its distance was at most the bound. The
/// bound starts at ∞ and, whenever the candidates have grown by k, becomes their k-th
/// smallest distance, which is at least the k-th smallest of all points reached and at
/// most the previous bound; candidates above it are dropped. So the candidates always
/// hold every point reached within the bound, their final k-th smallest distance is the
/// exact k-th nearest distance, and a node is skipped only when its box lies beyond the
/// bound (and beyond its largest ball).
struct Nearest<'a> {
    k: usize,
    balls: bool,
    s: &'a mut Scratch,
}

impl Visit for Nearest<'_> {
    #[inline]
    fn limit(&self, node_r2: f64) -> f64 {
        if self.balls {
            self.s.bound.max(node_r2)
        } else {
            self.s.bound
        }
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]) {
        let s = &mut *self.s;
        let b = s.bound;
        for (j, &d) in d.iter().enumerate() {
            if d <= b {
                s.cand.push(((start + j) as u32, d));
            }
        }
        if self.balls {
            for ((j, &d), &r) in d.iter().enumerate().zip(r2) {
                if d <= r {
                    s.members.push(((start + j) as u32, d));
                }
            }
        }
        if s.cand.len() >= s.next {
            let b = s.kth(self.k);
            s.bound = b;
            s.cand.retain(|c| c.1 <= b);
            s.next = s.cand.len() + self.k;
        }
    }
}

/// Every point whose ball holds q.
struct Containing<'a> {
    out: &'a mut Vec<(u32, f64)>,
}

impl Visit for Containing<'_> {
    #[inline]
    fn limit(&self, node_r2: f64) -> f64 {
        node_r2
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]) {
        for ((j, &d), &r) in d.iter().enumerate().zip(r2) {
            if d <= r {
                self.out.push(((start + j) as u32, d));
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Node<const D: usize> {
    lo: [f64; D],
    hi: [f64; D],
    start: u32,
    end: u32,
    /// Largest squared radius of the node's points (0 without radii).
    max_r2: f64,
}

impl<const D: usize> Node<D> {
    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
}

/// A complete binary kd-tree: node i has children 2i + 1 and 2i + 2, every leaf is at
/// the same depth, and a node's points are `pts[start..end]`.
struct Tree<const D: usize> {
    nodes: Vec<Node<D>>,
    pts: Vec<[f64; D]>,
    r2: Vec<f64>,
    first_leaf: usize,
}

/// Splits `order` (indices into `points`, row-major, width D) recursively at its middle
/// along the widest coordinate, `levels` times.
fn partition<const D: usize>(order: &mut [u32], points: &[f64], levels: u32) {
    if levels == 0 || order.len() < 2 {
        return;
    }
    let mut lo = [f64::INFINITY; D];
    let mut hi = [f64::NEG_INFINITY; D];
    for &i in order.iter() {
        let p = &points[i as usize * D..][..D];
        for k in 0..D {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let axis = (0..D)
        .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
        .unwrap_or(0);
    let mid = order.len() / 2;
    order.select_nth_unstable_by(mid, |&a, &b| {
        points[a as usize * D + axis]
            .total_cmp(&points[b as usize * D + axis])
            .then(a.cmp(&b))
    });
    let (left, right) = order.split_at_mut(mid);
    if left.len() > 4096 {
        rayon::join(
            || partition::<D>(left, points, levels - 1),
            || partition::<D>(right, points, levels - 1),
        );
    } else {
        partition::<D>(left, points, levels - 1);
        partition::<D>(right, points, levels - 1);
    }
}

impl<const D: usize> Tree<D> {
    /// Builds the tree (without balls); returns it with the original index of each
    /// tree position.
    fn new(points: &[f64]) -> (Tree<D>, Vec<u32>) {
        let n = points.len() / D;
        let mut levels = 0u32;
        while n.div_ceil(1 << levels) > LEAF {
            levels += 1;
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        partition::<D>(&mut order, points, levels);
        let pts: Vec<[f64; D]> = order
            .iter()
            .map(|&i| std::array::from_fn(|k| points[i as usize * D + k]))
            .collect();
        let first_leaf = (1usize << levels) - 1;
        let empty = Node {
            lo: [0.0; D],
            hi: [0.0; D],
            start: 0,
            end: 0,
            max_r2: 0.0,
        };
        let mut nodes = vec![empty; 2 * first_leaf + 1];
        nodes[0].end = n as u32;
        for i in 0..first_leaf {
            let (s, e) = (nodes[i].start, nodes[i].end);
            let mid = s + (e - s) / 2;
            nodes[2 * i + 1].start = s;
            nodes[2 * i + 1].end = mid;
            nodes[2 * i + 2].start = mid;
            nodes[2 * i + 2].end = e;
        }
        for node in &mut nodes[first_leaf..] {
            let range = node.start as usize..node.end as usize;
            node.lo = [f64::INFINITY; D];
            node.hi = [f64::NEG_INFINITY; D];
            for p in &pts[range.clone()] {
                for (k, &v) in p.iter().enumerate() {
                    node.lo[k] = node.lo[k].min(v);
                    node.hi[k] = node.hi[k].max(v);
                }
            }
        }
        for i in (0..first_leaf).rev() {
            let (a, b) = (nodes[2 * i + 1], nodes[2 * i + 2]);
            let node = &mut nodes[i];
            for k in 0..D {
                node.lo[k] = a.lo[k].min(b.lo[k]);
                node.hi[k] = a.hi[k].max(b.hi[k]);
            }
        }
        (
            Tree {
                nodes,
                pts,
                r2: Vec::new(),
                first_leaf,
            },
            order,
        )
    }

    /// Squared distance from q to the node's box: a lower bound of [`sq_dist`] from q to
    /// every point in it (same operations, same order, each term no larger).
    #[inline]
    fn box_d2(node: &Node<D>, q: &[f64; D]) -> f64 {
        let mut s = 0.0;
        for (k, &qk) in q.iter().enumerate() {
            // lo − q when q < lo, q − hi when q > hi, 0 inside: the larger of the two
            // differences and 0 (at most one is positive).
            let d = (node.lo[k] - qk).max(qk - node.hi[k]).max(0.0);
            s += d * d;
        }
        s
    }

    fn walk(&self, node: usize, q: &[f64; D], v: &mut impl Visit) {
        if node >= self.first_leaf {
            let nd = &self.nodes[node];
            let range = nd.start as usize..nd.end as usize;
            let mut d = [0.0; LEAF];
            for (d, p) in d.iter_mut().zip(&self.pts[range.clone()]) {
                *d = sq_dist(q, p);
            }
            let r2 = self.r2.get(range.clone()).unwrap_or(&[]);
            v.leaf(range.start, &d[..range.len()], r2);
            return;
        }
        let (l, r) = (2 * node + 1, 2 * node + 2);
        let (dl, dr) = (
            Self::box_d2(&self.nodes[l], q),
            Self::box_d2(&self.nodes[r], q),
        );
        let ((a, da), (b, db)) = if dl <= dr {
            ((l, dl), (r, dr))
        } else {
            ((r, dr), (l, dl))
        };
        if da <= v.limit(self.nodes[a].max_r2) {
            self.walk(a, q, v);
        }
        if db <= v.limit(self.nodes[b].max_r2) {
            self.walk(b, q, v);
        }
    }

    /// Squared distance between the node's box and the box [lo, hi]: a lower bound of
    /// [`sq_dist`] from any point in one to any point in the other (per coordinate, the
    /// rounded gap is no larger than the rounded difference of the two points).
    #[inline]
    fn box_box_d2(node: &Node<D>, lo: &[f64; D], hi: &[f64; D]) -> f64 {
        let mut s = 0.0;
        for k in 0..D {
            let d = (node.lo[k] - hi[k]).max(lo[k] - node.hi[k]).max(0.0);
            s += d * d;
        }
        s
    }

    /// Appends every leaf whose box lies within `r2` of the box [lo, hi], or within the
    /// leaf's own largest ball of it, in tree order.
    fn gather(&self, node: usize, lo: &[f64; D], hi: &[f64; D], r2: f64, out: &mut Vec<u32>) {
        let nd = &self.nodes[node];
        if Self::box_box_d2(nd, lo, hi) > r2.max(nd.max_r2) {
            return;
        }
        if node >= self.first_leaf {
            out.push(node as u32);
            return;
        }
        self.gather(2 * node + 1, lo, hi, r2, out);
        self.gather(2 * node + 2, lo, hi, r2, out);
    }

    /// The box [lo, hi] of a group of queries (row-major) and its centre.
    fn group_box(qs: &[f64]) -> ([f64; D], [f64; D], [f64; D]) {
        let mut lo = [f64::INFINITY; D];
        let mut hi = [f64::NEG_INFINITY; D];
        for q in qs.chunks_exact(D) {
            for (k, &v) in q.iter().enumerate() {
                lo[k] = lo[k].min(v);
                hi[k] = hi[k].max(v);
            }
        }
        let c = std::array::from_fn(|k| lo[k] + 0.5 * (hi[k] - lo[k]));
        (lo, hi, c)
    }

    /// Gathers the leaves within `reach` of the box [lo, hi] (or within their largest
    /// ball of it) into `s.leaves`, and sizes `s.cand` and `s.bits` for a scan of them.
    fn prepare_scan(&self, lo: &[f64; D], hi: &[f64; D], reach: f64, s: &mut Scratch) {
        s.leaves.clear();
        self.gather(0, lo, hi, reach, &mut s.leaves);
        let total: usize = s.leaves.iter().map(|&l| self.nodes[l as usize].len()).sum();
        s.cand.resize(total, (0, 0.0));
        s.bits.resize(total, 0);
    }

    /// Every point of the gathered leaves within `limit(leaf's largest ball)` of q,
    /// written to `cand` from the start; returns how many. (Written without branches:
    /// an entry is kept by moving the write position past it.)
    #[inline]
    fn scan(
        &self,
        q: &[f64; D],
        leaves: &[u32],
        limit: impl Fn(f64) -> f64,
        cand: &mut [(u32, f64)],
    ) -> usize {
        let mut n = 0;
        for &leaf in leaves {
            let nd = &self.nodes[leaf as usize];
            let limit = limit(nd.max_r2);
            if Self::box_d2(nd, q) > limit {
                continue;
            }
            for p in nd.start..nd.end {
                let d = sq_dist(q, &self.pts[p as usize]);
                cand[n] = (p, d);
                n += usize::from(d <= limit);
            }
        }
        n
    }

    /// Appends `(original index, d)` of the candidates with d ≤ max(r²_q, r²_p).
    #[inline]
    fn push_links(&self, cand: &[(u32, f64)], r2q: f64, ids: &[u32], out: &mut Vec<(usize, f64)>) {
        let base = out.len();
        out.resize(base + cand.len(), (0, 0.0));
        let mut w = base;
        for &(p, d) in cand {
            out[w] = (ids[p as usize] as usize, d);
            w += usize::from(d <= r2q.max(self.r2[p as usize]));
        }
        out.truncate(w);
    }

    /// c's k-th nearest distance r_c, with c's k nearest (tree positions) in `s.near`.
    fn centre_knn(&self, c: &[f64; D], k: usize, s: &mut Scratch) -> f64 {
        s.reset(k);
        self.walk(0, c, &mut Nearest { k, balls: false, s });
        let rc2 = s.kth(k);
        s.near.clear();
        s.near
            .extend(s.cand.iter().filter(|p| p.1 <= rc2).map(|p| p.0));
        rc2.sqrt()
    }

    fn query(&self, q: &[f64], v: &mut impl Visit) {
        let q: [f64; D] = std::array::from_fn(|k| q[k]);
        if !self.pts.is_empty() {
            self.walk(0, &q, v);
        }
    }
}

/// The queries every search structure answers, in tree positions.
trait Search: Send + Sync {
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<(u32, f64)>);
    /// Fills `s.cand` (see [`Nearest`]).
    fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch);
    fn containing(&self, q: &[f64], out: &mut Vec<(u32, f64)>);
    /// The grouped queries, where the structure has them (the tree); otherwise the
    /// caller asks query by query.
    fn grouped(&self) -> Option<&dyn Grouped>;
    /// Ends of groups of nearby points, in tree positions.
    fn leaf_ends(&self) -> Vec<usize>;
    /// Gives the points the balls `r2` (tree order).
    fn set_balls(&mut self, r2: Vec<f64>);
}

/// Queries answered for a group of nearby queries at once (see [`PointIndex`]).
trait Grouped {
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Vec<f64>);
    #[allow(clippy::too_many_arguments)]
    fn links_group(
        &self,
        qs: &[f64],
        r2q: &[f64],
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    );
    #[allow(clippy::too_many_arguments)]
    fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    );
}

impl<const D: usize> Search for Tree<D> {
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<(u32, f64)>) {
        self.query(q, &mut Within { r2, out });
    }
    fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch) {
        self.query(q, &mut Nearest { k, balls, s });
    }
    fn containing(&self, q: &[f64], out: &mut Vec<(u32, f64)>) {
        self.query(q, &mut Containing { out });
    }
    fn grouped(&self) -> Option<&dyn Grouped> {
        (!self.pts.is_empty()).then_some(self as &dyn Grouped)
    }
    /// Ends of the leaves in tree positions (the first leaf starts at 0).
    fn leaf_ends(&self) -> Vec<usize> {
        self.nodes[self.first_leaf..]
            .iter()
            .filter(|nd| nd.end > nd.start)
            .map(|nd| nd.end as usize)
            .collect()
    }
    /// Gives the points the balls `r2` (tree order).
    fn set_balls(&mut self, r2: Vec<f64>) {
        for nd in &mut self.nodes[self.first_leaf..] {
            nd.max_r2 = r2[nd.start as usize..nd.end as usize]
                .iter()
                .fold(0.0, |a: f64, &b| a.max(b));
        }
        for i in (0..self.first_leaf).rev() {
            self.nodes[i].max_r2 = self.nodes[2 * i + 1]
                .max_r2
                .max(self.nodes[2 * i + 2].max_r2);
        }
        self.r2 = r2;
    }
}

impl<const D: usize> Grouped for Tree<D> {
    /// The exact k-th nearest squared distance of each query of a group of nearby
    /// queries, appended to `out` (see [`PointIndex::kth_group`]).
    ///
    /// With c the centre of the group's box and r_c its k-th nearest distance, a query
    /// q has k points within r_c + ||q − c|| (triangle inequality), and within
    /// r_p + ||q − p|| for the previous query p of the group (r_p just computed). One
    /// descent gathers every leaf within the largest first bound of the group's box;
    /// each query scans those leaves with the smaller of its two bounds, and the k-th
    /// smallest distance within it is the exact k-th nearest. (Bounds are widened by a
    /// relative 1e-10, far above the rounding of the triangle inequality; that only
    /// adds candidates.)
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Vec<f64>) {
        let (lo, hi, c) = Self::group_box(qs);
        let rc = self.centre_knn(&c, k, s);
        let reach = qs
            .chunks_exact(D)
            .fold(0.0f64, |a, q| a.max(widen(rc + sq_dist(q, &c).sqrt())));
        self.prepare_scan(&lo, &hi, reach, s);
        let mut prev: Option<([f64; D], f64)> = None;
        for q in qs.chunks_exact(D) {
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            let mut bound = widen(rc + sq_dist(&q, &c).sqrt());
            if let Some((p, r2p)) = prev {
                bound = bound.min(widen(r2p.sqrt() + sq_dist(&q, &p).sqrt()));
            }
            let n = self.scan(&q, &s.leaves, |_| bound, &mut s.cand);
            let r2q = kth_smallest(&s.cand[..n], bound, k, &mut s.bits);
            out.push(r2q);
            prev = Some((q, r2q));
        }
    }
    /// The links {p : ||q − p||² ≤ max(r²_q, r²_p)} of each query of a group, given
    /// each query's own squared radius r²_q (see [`PointIndex::links_group`]). One
    /// descent gathers every leaf within the largest r²_q of the group's box or within
    /// its largest ball of it; no bound needs widening. Links come in tree order.
    fn links_group(
        &self,
        qs: &[f64],
        r2q: &[f64],
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        let (lo, hi, _) = Self::group_box(qs);
        let reach = r2q.iter().fold(0.0f64, |a, &b| a.max(b));
        self.prepare_scan(&lo, &hi, reach, s);
        for (q, &r) in qs.chunks_exact(D).zip(r2q) {
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            let n = self.scan(&q, &s.leaves, |m| r.max(m), &mut s.cand);
            self.push_links(&s.cand[..n], r, ids, out);
            ends.push(out.len());
        }
    }
    /// The mirror-rule links of a group of nearby queries (see
    /// [`PointIndex::mirror_group`]).
    ///
    /// With c the centre of the group's box, r_c its k-th nearest distance and p any
    /// point, a query q has k points within b_q = min(r_c + ||q − c||, r_p + ||q − p||)
    /// (triangle inequality; r_p, p's ball, holds p's k nearest), p taken as the
    /// nearest to q of c's k nearest. One descent gathers every leaf whose box lies
    /// within max_q b_q² of the group's box or within the leaf's largest ball of it.
    /// Each query then scans those leaves as the single-query search would with the
    /// fixed bound b_q²: every point within b_q² or within its own ball is found, and
    /// the k-th smallest of those within b_q² is the exact k-th nearest distance. (The
    /// bounds are widened by a relative 1e-10, far above the rounding of the triangle
    /// inequality; that only adds candidates.) Links come in tree order.
    fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        let (lo, hi, c) = Self::group_box(qs);
        let rc = self.centre_knn(&c, k, s);
        s.bounds.clear();
        for q in qs.chunks_exact(D) {
            let near = s.near.iter().fold((0, f64::INFINITY), |a, &p| {
                let d = sq_dist(q, &self.pts[p as usize]);
                if d < a.1 {
                    (p, d)
                } else {
                    a
                }
            });
            s.bounds.push(
                widen(rc + sq_dist(q, &c).sqrt())
                    .min(widen(self.r2[near.0 as usize].sqrt() + near.1.sqrt())),
            );
        }
        let reach = s.bounds.iter().fold(0.0f64, |a, &b| a.max(b));
        self.prepare_scan(&lo, &hi, reach, s);
        for (q, &bound) in qs.chunks_exact(D).zip(&s.bounds) {
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            // Every point within the bound or within its own ball.
            let n = self.scan(&q, &s.leaves, |m| bound.max(m), &mut s.cand);
            let r2q = kth_smallest(&s.cand[..n], bound, k, &mut s.bits);
            self.push_links(&s.cand[..n], r2q, ids, out);
            ends.push(out.len());
        }
    }
}

/// Brute force over the points (tree positions = original indices).
struct Brute {
    dim: usize,
    points: Vec<f64>,
    r2: Vec<f64>,
}

impl Brute {
    fn scan(&self, q: &[f64], v: &mut impl Visit) {
        let dim = self.dim.max(1);
        let mut d = [0.0; LEAF];
        for (c, chunk) in self.points.chunks(LEAF * dim).enumerate() {
            let len = chunk.len() / dim;
            for (d, p) in d.iter_mut().zip(chunk.chunks_exact(dim)) {
                *d = sq_dist(q, p);
            }
            let start = c * LEAF;
            v.leaf(
                start,
                &d[..len],
                self.r2.get(start..start + len).unwrap_or(&[]),
            );
        }
    }
}

impl Search for Brute {
    fn within(&self, q: &[f64], r2: f64, out: &mut Vec<(u32, f64)>) {
        self.scan(q, &mut Within { r2, out });
    }
    fn nearest(&self, q: &[f64], k: usize, balls: bool, s: &mut Scratch) {
        self.scan(q, &mut Nearest { k, balls, s });
    }
    fn containing(&self, q: &[f64], out: &mut Vec<(u32, f64)>) {
        self.scan(q, &mut Containing { out });
    }
    fn grouped(&self) -> Option<&dyn Grouped> {
        None
    }
    fn leaf_ends(&self) -> Vec<usize> {
        let n = self.points.len() / self.dim.max(1);
        (1..=n.div_ceil(LEAF)).map(|g| (g * LEAF).min(n)).collect()
    }
    fn set_balls(&mut self, r2: Vec<f64>) {
        self.r2 = r2;
    }
}

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
    pub fn spatial_order(&self) -> &[u32] {
        &self.ids
    }

    /// The k-th smallest exact squared distance from `q` to the indexed points
    /// (1 ≤ k ≤ len; a query that is one of the points counts itself at distance 0).
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
        let start = out.len();
        let ids = &self.ids;
        out.extend(
            s.cand
                .iter()
                .filter(|c| c.1 <= r2q)
                .chain(&s.members)
                .map(|&(p, d)| (ids[p as usize] as usize, d)),
        );
        // A point both near and holding q in its ball was listed twice.
        let mut linked = out.split_off(start);
        linked.sort_unstable_by_key(|p| p.0);
        linked.dedup_by_key(|p| p.0);
        out.extend(linked);
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
    /// each query's links to `out` in turn, and after each query the length of `out` to
    /// `ends`. The same links as query by query, found in one descent for the whole
    /// group; it pays when the queries are near one another (a group from
    /// [`locality_groups`]). A query's links come in an order fixed by the index (not
    /// by i, and the same whatever group the query is in), so sums over them do not
    /// depend on the grouping.
    pub fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        assert!(self.has_balls, "mirror_group needs an index with balls");
        let dim = self.check_group(qs, k);
        match self.search.grouped() {
            Some(g) => g.mirror_group(qs, k, &self.ids, s, out, ends),
            None => {
                for q in qs.chunks_exact(dim) {
                    self.mirror_links(q, k, s, out);
                    ends.push(out.len());
                }
            }
        }
    }

    /// [`PointIndex::kth_sq_dist`] for a group of queries (`qs`, row-major), appended
    /// to `out` in turn; one descent for the whole group (see
    /// [`PointIndex::mirror_group`]).
    pub fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Vec<f64>) {
        let dim = self.check_group(qs, k);
        match self.search.grouped() {
            Some(g) => g.kth_group(qs, k, s, out),
            None => {
                for q in qs.chunks_exact(dim) {
                    out.push(self.nearest(q, k, false, s));
                }
            }
        }
    }

    /// For each query q of a group (`qs`, row-major) with its own squared radius
    /// `r2q[q]`, every i with ||q − xᵢ||² ≤ max(r²_q, r²ᵢ) (the symmetric kNN rule when
    /// r²_q is q's k-th nearest squared distance), appended to `out` as
    /// `(i, ||q − xᵢ||²)`, and after each query the length of `out` to `ends`. The
    /// order of a query's links is fixed by the index, as in
    /// [`PointIndex::mirror_group`].
    pub fn links_group(
        &self,
        qs: &[f64],
        r2q: &[f64],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        assert!(self.has_balls, "links_group needs an index with balls");
        let dim = self.check_group(qs, 1.min(self.len()));
        assert_eq!(qs.len(), r2q.len() * dim, "one radius per query");
        match self.search.grouped() {
            Some(g) => g.links_group(qs, r2q, &self.ids, s, out, ends),
            None => {
                for (q, &r) in qs.chunks_exact(dim).zip(r2q) {
                    let start = out.len();
                    self.within(q, r, s, out);
                    self.containing(q, s, out);
                    let mut linked = out.split_off(start);
                    linked.sort_unstable_by_key(|p| p.0);
                    linked.dedup_by_key(|p| p.0);
                    out.extend(linked);
                    ends.push(out.len());
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
mod tests {
    use super::*;
    use crate::rng::Rng;
    use faer::Mat;

    /// Every query against brute force, on data with many exact ties (a coarse grid)
    /// and on continuous data, in dimensions served by the tree and by brute force.
    #[test]
    fn queries_match_brute_force() {
        let mut r = Rng::new(5);
        for (dim, n, grid) in [
            (1, 500, true),
            (2, 300, false),
            (2, 400, true),
            (3, 300, false),
            (3, 1000, true),
            (20, 300, false),
        ] {
            let x = Mat::from_fn(n, dim, |_, _| {
                if grid {
                    (r.uniform() * 6.0).floor()
                } else {
                    r.normal()
                }
            });
            let idx = PointIndex::new(x.as_ref());
            let r2: Vec<f64> = (0..n).map(|_| r.uniform() * 2.0).collect();
            let balls = PointIndex::with_balls(x.as_ref(), &r2);
            let mut s = Scratch::default();
            for q in 0..40 {
                // Queries off the data, and (every third) on a data point.
                let qv: Vec<f64> = if q % 3 == 0 {
                    idx.row(q * 7 % n).to_vec()
                } else {
                    (0..dim)
                        .map(|_| {
                            if grid {
                                (r.uniform() * 6.0).floor()
                            } else {
                                r.normal()
                            }
                        })
                        .collect()
                };
                let all: Vec<f64> = (0..n).map(|i| sq_dist(&qv, idx.row(i))).collect();
                let mut sorted = all.clone();
                sorted.sort_by(f64::total_cmp);
                let k = 1 + q % 9;
                assert_eq!(idx.kth_sq_dist(&qv, k, &mut s), sorted[k - 1]);
                let mut one = Vec::new();
                idx.kth_group(&qv, k, &mut s, &mut one);
                assert_eq!(one, vec![sorted[k - 1]], "grouped k-th, dim {dim}, k {k}");
                let r2k = sorted[k - 1];
                let mut got = Vec::new();
                idx.within(&qv, r2k, &mut s, &mut got);
                let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
                got.sort();
                let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2k).collect();
                assert_eq!(got, want, "kNN ball, dim {dim}, k {k}");
                let mut got = Vec::new();
                idx.within(&qv, 1.5, &mut s, &mut got);
                let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
                got.sort();
                let want: Vec<usize> = (0..n).filter(|&i| all[i] <= 1.5).collect();
                assert_eq!(got, want);
                let mut links = Vec::new();
                let r2q = balls.mirror_links(&qv, k, &mut s, &mut links);
                assert_eq!(r2q, sorted[k - 1]);
                let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2q.max(r2[i])).collect();
                assert_eq!(links.iter().map(|p| p.0).collect::<Vec<_>>(), want);
                assert!(links.iter().all(|&(i, d)| d == all[i]));
                let mut got = Vec::new();
                balls.containing(&qv, &mut s, &mut got);
                let mut got: Vec<usize> = got.into_iter().map(|p| p.0).collect();
                got.sort();
                let want: Vec<usize> = (0..n).filter(|&i| all[i] <= r2[i]).collect();
                assert_eq!(got, want);
            }
        }
    }

    /// The grouped mirror search gives exactly the single-query links, whatever the
    /// grouping (locality groups of several sizes, and one arbitrary group), on
    /// continuous data and on a grid with ties, in tree and brute-force dimensions.
    #[test]
    fn mirror_group_matches_single_queries() {
        let mut r = Rng::new(11);
        for (dim, n, grid) in [
            (2, 600, false),
            (3, 800, true),
            (3, 500, false),
            (17, 200, false),
        ] {
            let draw = |r: &mut Rng| {
                if grid {
                    (r.uniform() * 6.0).floor()
                } else {
                    r.normal()
                }
            };
            let x = Mat::from_fn(n, dim, |_, _| draw(&mut r));
            let k = 7;
            let plain = PointIndex::new(x.as_ref());
            let mut s = Scratch::default();
            let r2: Vec<f64> = (0..n)
                .map(|i| plain.kth_sq_dist(plain.row(i), k, &mut s))
                .collect();
            let idx = PointIndex::with_balls(x.as_ref(), &r2);
            let z = Mat::from_fn(300, dim, |_, _| draw(&mut r) * 1.2);
            for leaf in [1, 5, 16, 300] {
                let (order, bounds) = locality_groups(z.as_ref(), leaf);
                let mut seen = order.clone();
                seen.sort();
                assert_eq!(seen, (0..300).collect::<Vec<u32>>());
                assert_eq!((bounds[0], *bounds.last().unwrap()), (0, 300));
                for g in bounds.windows(2) {
                    assert!(
                        g[0] < g[1] && g[1] - g[0] <= leaf,
                        "group {g:?}, leaf {leaf}"
                    );
                    let qs: Vec<f64> = order[g[0]..g[1]]
                        .iter()
                        .flat_map(|&i| z.row(i as usize).iter().copied().collect::<Vec<_>>())
                        .collect();
                    let (mut out, mut ends) = (Vec::new(), Vec::new());
                    idx.mirror_group(&qs, k, &mut s, &mut out, &mut ends);
                    assert_eq!(ends.len(), g[1] - g[0]);
                    let mut from = 0;
                    for (t, q) in qs.chunks_exact(dim).enumerate() {
                        let mut one = Vec::new();
                        idx.mirror_links(q, k, &mut s, &mut one);
                        let mut got = out[from..ends[t]].to_vec();
                        got.sort_by_key(|p| p.0);
                        assert_eq!(got, one, "dim {dim}, leaf {leaf}");
                        from = ends[t];
                    }
                }
            }
        }
    }

    /// The fit's grouped passes over the indexed points themselves: k-th nearest
    /// distances and then the symmetric-rule links, against brute force, with the
    /// balls added to the built index (`into_balls`).
    #[test]
    fn grouped_kth_and_links_over_the_points_match_brute_force() {
        let mut r = Rng::new(13);
        for (dim, n, grid) in [
            (2, 700, false),
            (3, 900, true),
            (3, 40, false),
            (18, 150, false),
        ] {
            let x = Mat::from_fn(n, dim, |_, _| {
                if grid {
                    (r.uniform() * 7.0).floor()
                } else {
                    r.normal()
                }
            });
            let k = 9.min(n);
            let idx = PointIndex::new(x.as_ref());
            let mut s = Scratch::default();
            let order = idx.spatial_order().to_vec();
            let bounds = idx.leaf_groups();
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, n));
            let rows = |g: &[usize]| -> Vec<f64> {
                order[g[0]..g[1]]
                    .iter()
                    .flat_map(|&i| x.row(i as usize).iter().copied().collect::<Vec<_>>())
                    .collect()
            };
            let mut r2 = vec![0.0; n];
            for g in bounds.windows(2) {
                let mut out = Vec::new();
                idx.kth_group(&rows(g), k, &mut s, &mut out);
                for (&i, v) in order[g[0]..g[1]].iter().zip(out) {
                    r2[i as usize] = v;
                }
            }
            let pts: Vec<Vec<f64>> = (0..n).map(|i| idx.row(i).to_vec()).collect();
            let d = |i: usize, j: usize| sq_dist(&pts[i], &pts[j]);
            for (i, &ri) in r2.iter().enumerate() {
                let mut all: Vec<f64> = (0..n).map(|j| d(i, j)).collect();
                all.sort_by(f64::total_cmp);
                assert_eq!(ri, all[k - 1], "k-th distance of point {i}, dim {dim}");
            }
            let balls = idx.into_balls(&r2);
            for g in bounds.windows(2) {
                let (mut out, mut ends) = (Vec::new(), Vec::new());
                let r2q: Vec<f64> = order[g[0]..g[1]].iter().map(|&i| r2[i as usize]).collect();
                balls.links_group(&rows(g), &r2q, &mut s, &mut out, &mut ends);
                let mut from = 0;
                for (&i, &to) in order[g[0]..g[1]].iter().zip(&ends) {
                    let i = i as usize;
                    let mut got = out[from..to].to_vec();
                    got.sort_by_key(|p| p.0);
                    let want: Vec<(usize, f64)> = (0..n)
                        .filter(|&j| d(i, j) <= r2[i].max(r2[j]))
                        .map(|j| (j, d(i, j)))
                        .collect();
                    assert_eq!(got, want, "links of point {i}, dim {dim}");
                    from = to;
                }
            }
        }
    }

    #[test]
    fn spatial_order_is_a_permutation() {
        let mut r = Rng::new(9);
        let x = Mat::from_fn(1000, 3, |_, _| r.normal());
        let idx = PointIndex::new(x.as_ref());
        let mut o: Vec<u32> = idx.spatial_order().to_vec();
        o.sort();
        assert_eq!(o, (0..1000).collect::<Vec<u32>>());
    }
}
