//! Brute force over the points, above 16 dimensions and for sets under 64 points: one
//! query scans every leaf of 16 points in index order; a group of queries reads each
//! block of points once, its distances summed many at a time with the one-query bits
//! ([`crate::kernel::distance::sq_distances_in_order`]).

use super::{
    push_mirror, queries_by, sq_dist, Containing, Grouped, Nearest, Scratch, Search, Visit, Within,
    LEAF,
};
use crate::kernel::distance::sq_distance_blocks;

/// Brute force over the points (tree positions = original indices).
pub(super) struct Brute {
    pub(super) dim: usize,
    pub(super) points: Vec<f64>,
    pub(super) r2: Vec<f64>,
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

/// Queries per group of a brute-force index ([`Search::leaf_ends`]): each block of
/// points is read once for this many queries.
const BRUTE_GROUP: usize = 64;

impl Brute {
    /// [`Brute::scan`] for a group of queries (`qs`, row-major): `visitors[r]` sees
    /// query r's squared distances in leaves of 16 points in index order, as it would
    /// alone, bit for bit, but each block of points is read once for the whole group
    /// and the distances are summed many at a time
    /// ([`crate::kernel::distance::sq_distances_in_order`]).
    fn scan_group<V: Visit>(
        &self,
        qs: &[f64],
        visitors: &mut [V],
        tile: &mut Vec<f64>,
        pack: &mut Vec<f64>,
    ) {
        debug_assert_eq!(qs.len(), visitors.len() * self.dim, "one visitor per query");
        sq_distance_blocks(qs, &self.points, self.dim, tile, pack, |r, j0, row| {
            for (l, d) in row.chunks(LEAF).enumerate() {
                let start = j0 + l * LEAF;
                let r2 = self.r2.get(start..start + d.len()).unwrap_or(&[]);
                visitors[r].leaf(start, d, r2);
            }
        });
    }

    /// Runs [`Nearest`] for every query of a group, each on its own scratch in `s.each`
    /// (reset for k; the first `qs.len() / dim` are used).
    fn nearest_group(&self, qs: &[f64], k: usize, balls: bool, s: &mut Scratch) -> usize {
        let m = qs.len() / self.dim.max(1);
        let mut visitors: Vec<Nearest> = per_query(&mut s.each, m)
            .iter_mut()
            .map(|e| {
                e.reset(k);
                Nearest { k, balls, s: e }
            })
            .collect();
        self.scan_group(qs, &mut visitors, &mut s.tile, &mut s.pack);
        m
    }

    /// Runs [`Collect`] with radius `r2(r)` for every query r of a group, into the
    /// candidates of its own scratch in `s.each`; returns the number of queries.
    fn collect_group(
        &self,
        qs: &[f64],
        r2: impl Fn(usize) -> f64,
        balls: bool,
        s: &mut Scratch,
    ) -> usize {
        let m = qs.len() / self.dim.max(1);
        let mut visitors: Vec<Collect> = per_query(&mut s.each, m)
            .iter_mut()
            .enumerate()
            .map(|(r, e)| {
                e.cand.clear();
                Collect {
                    r2: r2(r),
                    balls,
                    out: &mut e.cand,
                }
            })
            .collect();
        self.scan_group(qs, &mut visitors, &mut s.tile, &mut s.pack);
        m
    }
}

impl Grouped for Brute {
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, out: &mut Vec<f64>) {
        let m = self.nearest_group(qs, k, false, s);
        out.extend(s.each[..m].iter_mut().map(|e| e.kth(k)));
    }
    fn links_group(
        &self,
        qs: &[f64],
        r2q: &[f64],
        _ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        self.collect_group(qs, |r| r2q[r], true, s);
        // Tree positions are the indices: the links come sorted by index, once each.
        for e in &s.each[..r2q.len()] {
            out.extend(e.cand.iter().map(|&(p, d)| (p as usize, d)));
            ends.push(out.len());
        }
    }
    fn mirror_group(
        &self,
        qs: &[f64],
        k: usize,
        ids: &[u32],
        s: &mut Scratch,
        out: &mut Vec<(usize, f64)>,
        ends: &mut Vec<usize>,
    ) {
        let m = self.nearest_group(qs, k, true, s);
        for e in &mut s.each[..m] {
            let r2q = e.kth(k);
            push_mirror(e, r2q, ids, out);
            ends.push(out.len());
        }
    }
}

/// Every point with d ≤ r², or with `balls` d ≤ max(r², its ball's r²), in the order
/// visited.
struct Collect<'a> {
    r2: f64,
    balls: bool,
    out: &'a mut Vec<(u32, f64)>,
}

impl Visit for Collect<'_> {
    #[inline]
    fn limit(&self, node_r2: f64) -> f64 {
        if self.balls {
            self.r2.max(node_r2)
        } else {
            self.r2
        }
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]) {
        for (j, &d) in d.iter().enumerate() {
            let r = if self.balls {
                self.r2.max(r2[j])
            } else {
                self.r2
            };
            if d <= r {
                self.out.push(((start + j) as u32, d));
            }
        }
    }
}

impl Search for Brute {
    queries_by!(scan);
    fn within_group(
        &self,
        qs: &[f64],
        _dim: usize,
        r2: f64,
        s: &mut Scratch,
        out: &mut Vec<(u32, f64)>,
        ends: &mut Vec<usize>,
    ) {
        let m = self.collect_group(qs, |_| r2, false, s);
        for e in &s.each[..m] {
            out.extend_from_slice(&e.cand);
            ends.push(out.len());
        }
    }
    fn grouped(&self) -> Option<&dyn Grouped> {
        Some(self as &dyn Grouped)
    }
    fn leaf_ends(&self) -> Vec<usize> {
        let n = self.points.len() / self.dim.max(1);
        (1..=n.div_ceil(BRUTE_GROUP))
            .map(|g| (g * BRUTE_GROUP).min(n))
            .collect()
    }
    fn set_balls(&mut self, r2: Vec<f64>) {
        self.r2 = r2;
    }
}

/// The first `m` of a group's per-query scratches, made as needed.
fn per_query(each: &mut Vec<Scratch>, m: usize) -> &mut [Scratch] {
    if each.len() < m {
        each.resize_with(m, Scratch::default);
    }
    &mut each[..m]
}
