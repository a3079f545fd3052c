//! The balanced kd-tree with tight boxes and per-node largest balls, and its single and
//! grouped queries (see the parent module for why its skips are exact).

use super::*;

#[derive(Clone, Copy)]
pub(super) struct Node<const D: usize> {
    pub(super) lo: [f64; D],
    pub(super) hi: [f64; D],
    pub(super) start: u32,
    pub(super) end: u32,
    /// Largest squared radius of the node's points (0 without radii).
    pub(super) max_r2: f64,
}

impl<const D: usize> Node<D> {
    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }
}

/// A complete binary kd-tree: node i has children 2i + 1 and 2i + 2, every leaf is at
/// the same depth, and a node's points are `pts[start..end]`.
pub(super) struct Tree<const D: usize> {
    pub(super) nodes: Vec<Node<D>>,
    pub(super) pts: Vec<[f64; D]>,
    pub(super) r2: Vec<f64>,
    pub(super) first_leaf: usize,
}

/// Splits `order` (indices into `points`, row-major, width D) recursively at its middle
/// along the widest coordinate, `levels` times.
pub(super) fn partition<const D: usize>(order: &mut [u32], points: &[f64], levels: u32) {
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
    pub(super) fn new(points: &[f64]) -> (Tree<D>, Vec<u32>) {
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

impl<const D: usize> Search for Tree<D> {
    super::queries_by!(query);
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
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, mut out: KthOut<'_>) {
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
            // Both bounds come from distances measured here, so k points lie within.
            let r2q = kth_smallest(&s.cand[..n], bound, k, &mut s.bits).expect("k candidates");
            out.push(&s.cand[..n], r2q);
            prev = Some((q, r2q));
        }
    }
    /// The links {p : ||q − p||² ≤ max(r²_q, r²_p)} of each query of a group, given
    /// each query's own squared radius r²_q (see [`PointIndex::links_group`]). One
    /// descent gathers every leaf within the largest r²_q of the group's box or within
    /// its largest ball of it; no bound needs widening. Links come in tree order.
    fn links_group(&self, qs: &[f64], r2q: &[f64], ids: &[u32], s: &mut Scratch, out: &mut Links) {
        let (lo, hi, _) = Self::group_box(qs);
        let reach = r2q.iter().fold(0.0f64, |a, &b| a.max(b));
        self.prepare_scan(&lo, &hi, reach, s);
        for (q, &r) in qs.chunks_exact(D).zip(r2q) {
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            let n = self.scan(&q, &s.leaves, |m| r.max(m), &mut s.cand);
            self.push_links(&s.cand[..n], r, ids, out.items_mut());
            out.close();
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
    fn mirror_group(&self, qs: &[f64], k: usize, ids: &[u32], s: &mut Scratch, out: &mut Links) {
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
        for (j, q) in qs.chunks_exact(D).enumerate() {
            let bound = s.bounds[j];
            let q: [f64; D] = std::array::from_fn(|k| q[k]);
            // Every point within the bound or within its own ball.
            let n = self.scan(&q, &s.leaves, |m| bound.max(m), &mut s.cand);
            match kth_smallest(&s.cand[..n], bound, k, &mut s.bits) {
                Some(r2q) => self.push_links(&s.cand[..n], r2q, ids, out.items_mut()),
                // Fewer than k within the bound: a ball is smaller than its point's
                // k-th nearest distance, which no fitted index has but a model file
                // edited with a valid checksum can. The query is answered alone.
                None => {
                    let mut alone = Scratch::default();
                    alone.reset(k);
                    self.nearest(&q, k, true, &mut alone);
                    let r2q = alone.kth(k);
                    push_mirror(&alone, r2q, ids, out.items_mut());
                }
            }
            out.close();
        }
    }
}
