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
    /// Distances being selected from.
    dist: Vec<f64>,
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
        self.dist.clear();
        self.dist.extend(self.cand.iter().map(|c| c.1));
        *self.dist.select_nth_unstable_by(k - 1, f64::total_cmp).1
    }
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
    /// Builds the tree; returns it with the original index of each tree position.
    fn new(points: &[f64], r2: Option<&[f64]>) -> (Tree<D>, Vec<u32>) {
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
        let r2: Vec<f64> = r2.map_or(Vec::new(), |r| {
            order.iter().map(|&i| r[i as usize]).collect()
        });
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
            node.max_r2 = r2
                .get(range)
                .map_or(0.0, |r| r.iter().fold(0.0, |a, &b| a.max(b)));
        }
        for i in (0..first_leaf).rev() {
            let (a, b) = (nodes[2 * i + 1], nodes[2 * i + 2]);
            let node = &mut nodes[i];
            for k in 0..D {
                node.lo[k] = a.lo[k].min(b.lo[k]);
                node.hi[k] = a.hi[k].max(b.hi[k]);
            }
            node.max_r2 = a.max_r2.max(b.max_r2);
        }
        (
            Tree {
                nodes,
                pts,
                r2,
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
        let mut lo = [f64::INFINITY; D];
        let mut hi = [f64::NEG_INFINITY; D];
        for q in qs.chunks_exact(D) {
            for (k, &v) in q.iter().enumerate() {
                lo[k] = lo[k].min(v);
                hi[k] = hi[k].max(v);
            }
        }
        let c: [f64; D] = std::array::from_fn(|k| lo[k] + 0.5 * (hi[k] - lo[k]));
        s.reset(k);
        self.walk(0, &c, &mut Nearest { k, balls: false, s });
        let rc2 = s.kth(k);
        let rc = rc2.sqrt();
        // c's k nearest: the nearest of them to a query gives that query a tight bound.
        s.near.clear();
        s.near
            .extend(s.cand.iter().filter(|p| p.1 <= rc2).map(|p| p.0));
        let widen = |r: f64| r * r * (1.0 + 1e-10) + f64::MIN_POSITIVE;
        // Each query's bound: a point p has its own k nearest within r_p, so q has k
        // points within r_p + ||q − p||; with p the nearest to q of c's k nearest that
        // is usually much tighter than r_c + ||q − c||.
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
        let reach = s.bounds.iter().fold(0.0, |a: f64, &b| a.max(b));
        s.leaves.clear();
        self.gather(0, &lo, &hi, reach, &mut s.leaves);
        // Fixed-length buffers written without branches: an entry is kept by moving the
        // write position past it.
        let total: usize = s.leaves.iter().map(|&l| self.nodes[l as usize].len()).sum();
        s.cand.resize(total, (0, 0.0));
        s.bits.resize(total, 0);
        for (q, &bound) in qs.chunks_exact(D).zip(&s.bounds) {
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            // Every point within the bound or within its leaf's largest ball.
            let mut n = 0;
            for &leaf in &s.leaves {
                let nd = &self.nodes[leaf as usize];
                let limit = bound.max(nd.max_r2);
                if Self::box_d2(nd, &q) > limit {
                    continue;
                }
                for p in nd.start..nd.end {
                    let d = sq_dist(&q, &self.pts[p as usize]);
                    s.cand[n] = (p, d);
                    n += usize::from(d <= limit);
                }
            }
            let cand = &s.cand[..n];
            // Squared distances are ≥ +0 and never NaN, so their bit patterns sort as
            // they do.
            let mut m = 0;
            for &(_, d) in cand {
                s.bits[m] = d.to_bits();
                m += usize::from(d <= bound);
            }
            assert!(m >= k, "group search: fewer than k candidates");
            let r2q = f64::from_bits(*s.bits[..m].select_nth_unstable(k - 1).1);
            let r2 = &self.r2;
            let base = out.len();
            out.resize(base + n, (0, 0.0));
            let mut w = base;
            for &(p, d) in cand {
                out[w] = (ids[p as usize] as usize, d);
                w += usize::from(d <= r2q.max(r2[p as usize]));
            }
            out.truncate(w);
            ends.push(w);
        }
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
    /// [`PointIndex::mirror_group`] in one pass over the group; false when the
    /// structure has no such pass (the caller then asks query by query).
    fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) -> bool;
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
    fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) -> bool {
        if !self.pts.is_empty() {
            Tree::mirror_group(self, qs, k, ids, s, out, ends);
        }
        true
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
    fn mirror_group(
        &self,
        _: &[f64],
        _: usize,
        _: &[u32],
        _: &mut Scratch,
        _: &mut Vec<(usize, f64)>,
        _: &mut Vec<usize>,
    ) -> bool {
        false
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
        Self::build(x, None)
    }

    /// Indexes the rows of `x`, row i with the ball of squared radius `r2[i]` (≥ 0).
    pub fn with_balls(x: MatRef<'_, f64>, r2: &[f64]) -> PointIndex {
        assert_eq!(r2.len(), x.nrows(), "one radius per row");
        Self::build(x, Some(r2))
    }

    fn build(x: MatRef<'_, f64>, r2: Option<&[f64]>) -> PointIndex {
        let dim = x.ncols();
        let n = x.nrows();
        let points: Vec<f64> = (0..n)
            .flat_map(|i| (0..dim).map(move |j| x[(i, j)]))
            .collect();
        let brute = || -> (Box<dyn Search>, Vec<u32>) {
            let b = Brute {
                dim,
                points: points.clone(),
                r2: r2.map_or(Vec::new(), <[f64]>::to_vec),
            };
            (Box::new(b), (0..n as u32).collect())
        };
        let (search, ids) = if !(1..=MAX_DIM).contains(&dim) || n < 64 {
            brute()
        } else {
            macro_rules! dispatch {
                ($($d:literal)*) => {
                    match dim {
                        $($d => {
                            let (t, ids) = Tree::<$d>::new(&points, r2);
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
            has_balls: r2.is_some(),
            ids,
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

    /// The indices of the points in an order that keeps near points together (the
    /// tree's): querying in this order reuses the cache.
    pub fn spatial_order(&self) -> &[u32] {
        &self.ids
    }

    /// The k-th smallest exact squared distance from `q` to the indexed points
    /// (1 ≤ k ≤ len; a query that is one of the points counts itself at distance 0),
    /// and in `out` (cleared first) `(i, ||q − xᵢ||²)` for every point within it, ties
    /// included, in no particular order.
    pub fn knn_ball(
        &self,
        q: &[f64],
        k: usize,
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
    ) -> f64 {
        let r2 = self.nearest(q, k, false, s);
        out.clear();
        out.extend(
            s.cand
                .iter()
                .filter(|c| c.1 <= r2)
                .map(|&(p, d)| (self.ids[p as usize] as usize, d)),
        );
        r2
    }

    /// The k-th smallest exact squared distance from `q` (see [`PointIndex::knn_ball`]).
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
        assert!(
            (1..=self.len()).contains(&k),
            "k = {k} outside 1..={}",
            self.len()
        );
        let dim = self.dim.max(1);
        assert_eq!(qs.len() % dim, 0, "queries of {dim} coordinates");
        if !self.search.mirror_group(qs, k, &self.ids, s, out, ends) {
            for q in qs.chunks_exact(dim) {
                self.mirror_links(q, k, s, out);
                ends.push(out.len());
            }
        }
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
                let mut got = Vec::new();
                let r2k = idx.knn_ball(&qv, k, &mut s, &mut got);
                assert_eq!(r2k, sorted[k - 1]);
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
