//! Brute force over the points, above 16 dimensions and for sets under 64 points: one
//! query scans every leaf of 16 points in index order; a group of queries reads each
//! block of points once, its distances summed many at a time with the one-query bits
//! ([`crate::kernel::distance::sq_distances_in_order`]), and from 32 coordinates only
//! for the pairs a matrix product does not rule out (maths §1, [`Brute::scan_group`]).

use super::{
    push_mirror, queries_by, sq_dist, Containing, Grouped, KthOut, Links, Nearest, Ragged, Scratch,
    Search, Visit, Within, LEAF,
};
use crate::kernel::distance::{sq_distance_blocks, sq_distances_in_order, DISTANCE_BLOCK};
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// Brute force over the points (tree positions = original indices).
pub(super) struct Brute {
    pub(super) dim: usize,
    pub(super) points: Vec<f64>,
    pub(super) r2: Vec<f64>,
    /// The rows' norms, for the screen of [`Brute::scan_group`] ([`screening_norms`]).
    pub(super) norms: Vec<f64>,
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

/// Largest group × points product a screened scan computes at once (16 MiB).
const WHOLE_GROUP: usize = 1 << 21;

/// [`WHOLE_GROUP`] (tests may lower it on their thread to take the block-by-block path).
fn whole_group() -> usize {
    #[cfg(test)]
    return WHOLE_LIMIT.with(|c| c.get());
    #[cfg(not(test))]
    WHOLE_GROUP
}

#[cfg(test)]
thread_local! {
    /// [`WHOLE_GROUP`] on this thread.
    pub(super) static WHOLE_LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(WHOLE_GROUP) };
}

/// Widths from which a group's scan screens its pairs by a matrix product first.
pub(super) const SCREEN_DIM: usize = 32;

/// Euclidean norms of the rows of `points` (`dim` wide) when a scan screens its pairs
/// ([`SCREEN_DIM`], every norm [`screenable`]), else none.
pub(super) fn screening_norms(points: &[f64], dim: usize) -> Vec<f64> {
    if dim < SCREEN_DIM {
        return Vec::new();
    }
    let norms: Vec<f64> = points
        .chunks_exact(dim)
        .map(|p| p.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect();
    if norms.iter().all(|&v| screenable(v)) {
        norms
    } else {
        Vec::new()
    }
}

/// Norms for which the screen's bound holds: 0, or between 1e-140 and 1e140, where
/// ||q||² + ||p||² − 2qᵀp neither overflows nor loses more than the allowance to
/// underflow (maths §1). Points or queries beyond are summed exactly, every pair.
fn screenable(norm: f64) -> bool {
    norm == 0.0 || (1e-140..=1e140).contains(&norm)
}

#[cfg(test)]
thread_local! {
    /// Groups this thread answered with one exact call per query (tests check both
    /// ways of a group with all its products at once).
    pub(super) static ONE_CALL_GROUPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Blocks this thread answered through the screen (tests check that they ran).
    pub(super) static SCREENED_BLOCKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Reusable buffers of a screened scan ([`Brute::scan_group`]).
#[derive(Default)]
pub(super) struct Screen {
    /// −2 × the group's inner products with a block of points, or with all of them
    /// (column-major).
    approx: Vec<f64>,
    /// Which pairs of the block need their exact distance (row-major).
    keep: Vec<bool>,
    /// The rows one query needs, packed, and their exact distances.
    rows: Vec<f64>,
    exact: Vec<f64>,
    /// One query's distances to the block: exact where kept, else +∞.
    d: Vec<f64>,
    /// One query's screened values minus their allowance, over all the points.
    lower: Vec<f64>,
    /// The points each query of the group keeps, in order, one query after another
    /// (query r's from `kept_ends[r]` to `kept_ends[r + 1]`).
    kept_at: Vec<usize>,
    kept_ends: Vec<usize>,
}

impl Brute {
    /// [`Brute::scan`] for a group of queries (`qs`, row-major): `visitors[r]` sees
    /// query r's squared distances in leaves of 16 points in index order, as it would
    /// alone, bit for bit, but each block of points is read once for the whole group.
    ///
    /// Below [`SCREEN_DIM`] coordinates every distance is summed exactly, many at a time
    /// ([`crate::kernel::distance::sq_distances_in_order`]). From there, a block's pairs
    /// are screened first by the matrix product ||q||² + ||p||² − 2qᵀp. Its rounding
    /// error and the exact sum's are each at most (D + 5)u(‖q‖ + ‖p‖)² (u = 2⁻⁵³, D
    /// coordinates; maths §1), and the screen allows twice their sum. A pair whose screened
    /// value minus that allowance exceeds what the visitor keeps at the block's start
    /// (`Visit::limit` with the point's ball: visitors only ever lower it) has an exact
    /// distance the visitor would drop too, so it gets +∞ instead; every other pair gets
    /// its exact distance. So the visitors decide as with every distance exact. A block
    /// where more than a quarter of the pairs pass the screen is summed exactly whole.
    /// When the group's products with all the points fit in [`WHOLE_GROUP`] they are
    /// formed first, and a k-nearest search starts from the k-th smallest screened value
    /// plus allowance (`Visit::tighten`): a bound of its k-th nearest distance, so that
    /// it sums exactly little more than its k nearest. Each query then screens all the
    /// points against its limit as it stands after that — a limit that only falls later,
    /// so the pairs kept include those the block-by-block screen would keep, and the
    /// others the visitor drops — and sums its kept pairs exactly in one call (one
    /// packing of the query, where a call per block packed it once for every block with
    /// a kept pair: 18 times for each of 10000 queries in a 784-coordinate fit); unless
    /// a query of the group keeps more than a quarter of the points (duplicates, ties):
    /// then the group goes block by block, summing crowded blocks whole.
    fn scan_group<V: Visit>(
        &self,
        qs: &[f64],
        visitors: &mut [V],
        tile: &mut Vec<f64>,
        pack: &mut Vec<f64>,
        sc: &mut Screen,
    ) {
        debug_assert_eq!(qs.len(), visitors.len() * self.dim, "one visitor per query");
        let feed = |v: &mut V, j0: usize, row: &[f64]| {
            for (l, d) in row.chunks(LEAF).enumerate() {
                let start = j0 + l * LEAF;
                v.leaf(start, d, self.r2.get(start..start + d.len()).unwrap_or(&[]));
            }
        };
        let (dim, m) = (self.dim.max(1), visitors.len());
        let q_sq: Vec<f64> = qs
            .chunks_exact(dim)
            .map(|q| q.iter().map(|v| v * v).sum())
            .collect();
        let q_norm: Vec<f64> = q_sq.iter().map(|v: &f64| v.sqrt()).collect();
        if self.norms.is_empty() || !q_norm.iter().all(|&v| screenable(v)) {
            sq_distance_blocks(qs, &self.points, self.dim, tile, pack, |r, j0, row| {
                feed(&mut visitors[r], j0, row)
            });
            return;
        }
        let allowance = 4.0 * (dim as f64 + 5.0) * (f64::EPSILON / 2.0);
        // Query r and a point of norm `np` whose −2qᵀp is `prod`: the screened squared
        // distance and its allowance.
        let screen = |r: usize, np: f64, prod: f64| {
            let t = q_norm[r] + np;
            (q_sq[r] + np * np + prod, allowance * t * t)
        };
        let qm = MatRef::from_row_major_slice(qs, m, dim);
        let n = self.norms.len();
        // −2QPᵀ, column-major: for the whole set at once when it is small enough and a
        // search can use it (below), else a block at a time.
        let whole = m * n <= whole_group() && visitors.iter().any(|v| v.rank().is_some());
        let product = |approx: &mut Vec<f64>, points: &[f64]| {
            let len = points.len() / dim;
            approx.resize(m * len, 0.0);
            matmul(
                MatMut::from_column_major_slice_mut(approx, m, len),
                Accum::Replace,
                qm,
                MatRef::from_row_major_slice(points, len, dim).transpose(),
                -2.0,
                Par::Seq,
            );
        };
        if whole {
            product(&mut sc.approx, &self.points);
            // Per query, one pass over its products: each pair's screened value minus its
            // allowance (a lower bound of the exact distance), kept; and for a k-nearest
            // search the k-th smallest upper bound (screened value plus allowance), a
            // bound of its k-th nearest distance that the search starts from, so that it
            // sums exactly hardly more than its k nearest. Then the points the screen
            // keeps with that limit, listed (query r's in kept_at[ends[r]..ends[r + 1]]).
            sc.kept_at.clear();
            sc.kept_ends.clear();
            sc.kept_ends.push(0);
            let mut most_kept = 0;
            for (r, v) in visitors.iter_mut().enumerate() {
                let rank = v.rank().filter(|&k| (1..=n).contains(&k));
                sc.lower.clear();
                sc.d.clear();
                let mut bound = f64::INFINITY;
                for (j, &np) in self.norms.iter().enumerate() {
                    let (screened, slack) = screen(r, np, sc.approx[j * m + r]);
                    sc.lower.push(screened - slack);
                    let Some(k) = rank else { continue };
                    let upper = screened + slack;
                    if upper <= bound {
                        sc.d.push(upper);
                        if sc.d.len() == k && bound == f64::INFINITY {
                            bound = sc.d.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
                        } else if sc.d.len() >= 2 * k {
                            bound = *sc.d.select_nth_unstable_by(k - 1, f64::total_cmp).1;
                            sc.d.retain(|&u| u <= bound);
                        }
                    }
                }
                if let Some(k) = rank {
                    v.tighten(*sc.d.select_nth_unstable_by(k - 1, f64::total_cmp).1);
                }
                let start = sc.kept_at.len();
                sc.kept_at
                    .extend(sc.lower.iter().enumerate().filter_map(|(j, &low)| {
                        (low <= v.limit(self.r2.get(j).copied().unwrap_or(0.0))).then_some(j)
                    }));
                most_kept = most_kept.max(sc.kept_at.len() - start);
                sc.kept_ends.push(sc.kept_at.len());
            }
            // Few kept pairs (the usual case): each query sums its kept pairs exactly in
            // one call, with the limit it has now (it only ever lowers it: a pair dropped
            // here it would drop later too), and sees every leaf in order. Where a query
            // keeps more than a quarter of the points (ties, duplicates), the blocks below
            // sum such blocks whole for the group instead, many queries at a time.
            if 4 * most_kept <= n {
                for (r, (v, q)) in visitors.iter_mut().zip(qs.chunks_exact(dim)).enumerate() {
                    let kept = &sc.kept_at[sc.kept_ends[r]..sc.kept_ends[r + 1]];
                    sc.rows.clear();
                    for &j in kept {
                        sc.rows
                            .extend_from_slice(&self.points[j * dim..(j + 1) * dim]);
                    }
                    sc.exact.resize(kept.len(), 0.0);
                    sq_distances_in_order(q, &sc.rows, dim, &mut sc.exact, pack);
                    sc.d.clear();
                    sc.d.resize(n, f64::INFINITY);
                    for (&j, &e) in kept.iter().zip(&sc.exact) {
                        sc.d[j] = e;
                    }
                    feed(v, 0, &sc.d);
                }
                // Every block of points was answered through the screen.
                #[cfg(test)]
                {
                    SCREENED_BLOCKS.with(|c| c.set(c.get() + n.div_ceil(DISTANCE_BLOCK)));
                    ONE_CALL_GROUPS.with(|c| c.set(c.get() + 1));
                }
                return;
            }
        }
        for (b, block) in self.points.chunks(DISTANCE_BLOCK * dim).enumerate() {
            let (len, j0) = (block.len() / dim, b * DISTANCE_BLOCK);
            let norms = &self.norms[j0..j0 + len];
            if !whole {
                product(&mut sc.approx, block);
            }
            let approx = &sc.approx[if whole { j0 * m } else { 0 }..][..m * len];
            sc.keep.resize(m * len, false);
            let mut kept = 0;
            for (r, v) in visitors.iter().enumerate() {
                for (j, &np) in norms.iter().enumerate() {
                    let (screened, slack) = screen(r, np, approx[j * m + r]);
                    let limit = v.limit(self.r2.get(j0 + j).copied().unwrap_or(0.0));
                    let keep = screened - slack <= limit;
                    sc.keep[r * len + j] = keep;
                    kept += usize::from(keep);
                }
            }
            if 4 * kept > m * len {
                tile.resize(m * len, 0.0);
                sq_distances_in_order(qs, block, dim, tile, pack);
                for (v, row) in visitors.iter_mut().zip(tile.chunks_exact(len)) {
                    feed(v, j0, row);
                }
                continue;
            }
            #[cfg(test)]
            SCREENED_BLOCKS.with(|c| c.set(c.get() + 1));
            for (r, (v, q)) in visitors.iter_mut().zip(qs.chunks_exact(dim)).enumerate() {
                let keep = &sc.keep[r * len..(r + 1) * len];
                sc.rows.clear();
                for (p, _) in block.chunks_exact(dim).zip(keep).filter(|t| *t.1) {
                    sc.rows.extend_from_slice(p);
                }
                sc.exact.resize(sc.rows.len() / dim, 0.0);
                sq_distances_in_order(q, &sc.rows, dim, &mut sc.exact, pack);
                sc.d.clear();
                let mut exact = sc.exact.iter();
                sc.d.extend(keep.iter().map(|&k| {
                    if k {
                        *exact.next().expect("one exact distance per kept pair")
                    } else {
                        f64::INFINITY
                    }
                }));
                feed(v, j0, &sc.d);
            }
        }
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
        self.scan_group(qs, &mut visitors, &mut s.tile, &mut s.pack, &mut s.screen);
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
        self.scan_group(qs, &mut visitors, &mut s.tile, &mut s.pack, &mut s.screen);
        m
    }
}

impl Grouped for Brute {
    fn kth_group(&self, qs: &[f64], k: usize, s: &mut Scratch, mut out: KthOut<'_>) {
        let m = self.nearest_group(qs, k, false, s);
        for e in &mut s.each[..m] {
            let r2 = e.kth(k);
            out.push(&e.cand, r2);
        }
    }
    fn links_group(&self, qs: &[f64], r2q: &[f64], _: &[u32], s: &mut Scratch, out: &mut Links) {
        self.collect_group(qs, |r| r2q[r], true, s);
        // Tree positions are the indices: the links come sorted by index, once each.
        for e in &s.each[..r2q.len()] {
            out.push_list(e.cand.iter().map(|&(p, d)| (p as usize, d)));
        }
    }
    fn mirror_group(&self, qs: &[f64], k: usize, ids: &[u32], s: &mut Scratch, out: &mut Links) {
        let m = self.nearest_group(qs, k, true, s);
        for e in &mut s.each[..m] {
            let r2q = e.kth(k);
            push_mirror(e, r2q, ids, out.items_mut());
            out.close();
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
        out: &mut Ragged<(u32, f64)>,
    ) {
        let m = self.collect_group(qs, |_| r2, false, s);
        for e in &s.each[..m] {
            out.push_list(e.cand.iter().copied());
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
