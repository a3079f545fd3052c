//! Approximate nearest training points of new points by inverted lists (maths §6): the
//! training points are split into C ≈ 2√N lists by k-means (fitted once, stored with
//! the model); a new point is compared with the points of the `probes` lists whose
//! centroids are nearest to it, and the k nearest of those are returned with their
//! exact distances.
//!
//! Why lists rather than the graph walk ([`super::GraphIndex`], the search of models
//! written before format 9): a walk measures one point after another at scattered
//! places of memory; a list is a block of points that every query probing it reads in
//! turn. A batch is searched list by list: the rows of a list are read once for all the
//! batch's queries that probe it and measured against up to eight of them at a time in
//! registers (single precision, fused multiply-adds), which keeps the arithmetic units
//! busy where the walk waits for memory. On Fashion-MNIST (PCA-50, 60000 training
//! points, 16 nearest of 10000 test images) the lists find the walk's recall in about a
//! third of its time (maths §6).
//!
//! Sample-wise and deterministic: which lists a query probes depends on the query alone,
//! and each of its distances to a point is one chain of fused multiply-adds in the order
//! of the coordinates, whatever the other queries of its group and whatever the
//! instruction set (AVX-512, AVX2 or plain code give the same bits). Candidates are
//! ranked by (single-precision distance, index), a total order, so the kept set does
//! not depend on the order they are met in; the kept points are then measured again in
//! double precision and ordered by (distance, index). Values are rounded to single
//! precision only after the training mean is taken off, and each list holds its points
//! less its centroid, so the single-precision distances are of the scale of a list, not
//! of the data's offset. A new point equal to a training point bit for bit gets that
//! point at distance 0 (a hash lookup, as the walk), so extensions stay exact on
//! training points. A query whose probed lists hold fewer than k points, or whose
//! single-precision distances are not finite (values beyond its range), is answered by
//! the exact search.

mod kernel;

use super::RowTable;
use crate::neighbors::descent::sq;
use crate::neighbors::ragged::Ragged;
use crate::neighbors::Neighbours;
use crate::rng::Rng;
use faer::MatRef;
use kernel::{norm2, By, Kernel, Out, GROUP, LANES};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Lloyd iterations of the centroids.
const ITERATIONS: usize = 8;
/// Points per list that the centroids are trained on, at most (a seeded sample).
const SAMPLE_PER_LIST: usize = 64;
/// Seed of the centroids' starting points and of their training sample.
const SEED: u64 = 0x6f6f_7365_6976_6600;
/// Queries searched together (a block of a batch; the result of a row does not depend
/// on its block).
const BLOCK: usize = 512;

/// The lists as stored in a model: what the search needs beyond the training points.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Lists {
    /// Mean of the training points, taken off before anything is rounded.
    mean: Vec<f64>,
    /// The lists' centroids (of the centred points, single precision), row after row.
    centroids: Vec<f32>,
    /// Where each list ends in `members`.
    ends: Vec<u32>,
    /// The training points list after list, increasing within a list.
    members: Vec<u32>,
    /// Lists probed per query.
    probes: u32,
}

/// The rows of `x` (row-major, width `w`) less `mean`, in single precision.
fn centred(x: &[f64], w: usize, mean: &[f64]) -> Vec<f32> {
    x.chunks_exact(w.max(1))
        .flat_map(|r| r.iter().zip(mean).map(|(v, m)| (v - m) as f32))
        .collect()
}

/// Training points whose neighbours set the number of lists probed.
const CALIBRATION_SAMPLE: usize = 500;
/// Neighbours of each (t-SNE's transform takes 16, UMAP's 15 by default).
const CALIBRATION_K: usize = 16;
/// The share of those neighbours that the probed lists must hold.
const CALIBRATION_RECALL: f64 = 0.99;

/// Lists to probe: the fewest p such that, for a seeded sample of up to 500 training
/// points, the p lists of centroids nearest to each hold at least 99 % of their 16
/// nearest other training points (found by the kernel over every point). The data's
/// own structure sets it: few lists where the points lie near a low-dimensional set
/// (16 of 490 on Fashion-MNIST), up to all of them where neighbours are spread in
/// every direction.
fn calibrate(kernel: Kernel, xc: &[f32], w: usize, centroids: &[f32], label: &[u32]) -> u32 {
    let n = label.len();
    let c = centroids.len() / w;
    let k = CALIBRATION_K.min(n - 1);
    if k == 0 {
        return 1;
    }
    let sample = Rng::new(SEED ^ 1).sample_indices(n, CALIBRATION_SAMPLE.min(n));
    let rows: Vec<f32> = sample
        .iter()
        .flat_map(|&i| xc[i * w..(i + 1) * w].iter().copied())
        .collect();
    let all = Tiles::of_rows(xc, w, None);
    let by_centroid = Tiles::of_rows(centroids, w, None);
    let per_point: Vec<Vec<usize>> = rows
        .par_chunks(GROUP * w)
        .zip(sample.par_chunks(GROUP))
        .flat_map_iter(|(rows, points)| {
            let near = nearest(kernel, rows, w, &all, k + 1);
            // Each row's distances to every centroid; a list's rank among a row's
            // probes is the number of centroids before it by (distance, index), as the
            // probes are chosen.
            let mut to_centroids = vec![vec![0.0f32; c]; rows.len() / w];
            let mut d: Out = [[0.0; LANES]; GROUP];
            for t in 0..by_centroid.count() {
                let (data, norms, ids) = by_centroid.tile(t);
                kernel.run(rows, (data, norms), &By::ALL, &mut d);
                for (row, d) in to_centroids.iter_mut().zip(&d) {
                    for (&j, &v) in ids.iter().zip(d).filter(|(&j, _)| j != u32::MAX) {
                        row[j as usize] = v;
                    }
                }
            }
            points
                .iter()
                .zip(&to_centroids)
                .enumerate()
                .map(|(a, (&s, dc))| {
                    let rank = |l: usize| {
                        if dc[l].is_nan() {
                            return c;
                        }
                        let before = |(j, &v): (usize, &f32)| v < dc[l] || (v == dc[l] && j < l);
                        dc.iter().enumerate().filter(|&e| before(e)).count()
                    };
                    near[a * (k + 1)..(a + 1) * (k + 1)]
                        .iter()
                        .filter(|&&j| j != u32::MAX && j as usize != s)
                        .take(k)
                        .map(|&j| rank(label[j as usize] as usize))
                        .collect()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut count = vec![0usize; c + 1];
    let mut total = 0usize;
    for r in per_point.iter().flatten() {
        count[*r] += 1;
        total += 1;
    }
    let mut held = 0usize;
    for (p, &m) in count.iter().enumerate().take(c) {
        held += m;
        if held as f64 >= CALIBRATION_RECALL * total as f64 {
            return p as u32 + 1;
        }
    }
    c as u32
}

impl Lists {
    /// The lists of the N training points `x` (row-major, width `w`): C = ⌊2√N⌉ lists by
    /// k-means (seeded starting points, Lloyd's iterations on a sample of at most 64
    /// points per list), each point in the list of its nearest centroid; as many lists
    /// probed per query as [`calibrate`] finds needed.
    pub(crate) fn new(x: &[f64], w: usize) -> Lists {
        let n = x.len().checked_div(w).unwrap_or(0);
        if n == 0 || w == 0 {
            return Lists::default();
        }
        let c = ((2.0 * (n as f64).sqrt()).round() as usize).clamp(1, n);
        let mean = crate::linalg::center::column_means(MatRef::from_row_major_slice(x, n, w));
        let xc = centred(x, w, &mean);
        if !xc.chunks_exact(w).all(|r| norm2(r).is_finite()) {
            // Beyond single precision: the exact search.
            return Lists::default();
        }
        let row = |i: usize| &xc[i * w..(i + 1) * w];
        let mut rng = Rng::new(SEED);
        let mut centroids: Vec<f32> = rng
            .sample_indices(n, c)
            .into_iter()
            .flat_map(|i| row(i).iter().copied())
            .collect();
        let sample: Vec<f32> = rng
            .sample_indices(n, SAMPLE_PER_LIST * c)
            .into_iter()
            .flat_map(|i| row(i).iter().copied())
            .collect();
        let kernel = Kernel::detect();
        for _ in 0..ITERATIONS {
            let near = assign(kernel, &sample, w, &Tiles::of_rows(&centroids, w, None));
            let mut sum = vec![0.0f64; c * w];
            let mut count = vec![0usize; c];
            for (r, &j) in sample.chunks_exact(w).zip(&near) {
                let j = j as usize;
                count[j] += 1;
                sum[j * w..(j + 1) * w]
                    .iter_mut()
                    .zip(r)
                    .for_each(|(s, &v)| *s += v as f64);
            }
            for j in (0..c).filter(|&j| count[j] > 0) {
                for t in 0..w {
                    centroids[j * w + t] = (sum[j * w + t] / count[j] as f64) as f32;
                }
            }
        }
        let near = assign(kernel, &xc, w, &Tiles::of_rows(&centroids, w, None));
        let keyed = near
            .iter()
            .enumerate()
            .map(|(i, &j)| (j as usize, i as u32));
        let (members, ends) = Ragged::by_key(c, keyed).into_parts();
        let ends = ends.into_iter().map(|e| e as u32).collect();
        let probes = calibrate(kernel, &xc, w, &centroids, &near);
        Lists {
            mean,
            centroids,
            ends,
            members,
            probes,
        }
    }

    /// "C lists, p probed" (`None` without lists).
    pub(crate) fn describe(&self) -> Option<String> {
        (!self.is_empty()).then(|| format!("{} lists, {} probed", self.ends.len(), self.probes))
    }

    /// Whether there are no lists (a model written before format 9, or exact search).
    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Whether the lists fit `n` training points of width `w`: every point in exactly
    /// one list, finite centroids and mean, 1 ≤ probes ≤ C.
    pub(crate) fn is_consistent(&self, n: usize, w: usize) -> bool {
        let c = self.ends.len();
        let mut seen = vec![false; n];
        self.mean.len() == w
            && self.mean.iter().all(|v| v.is_finite())
            && self.centroids.len() == c * w
            && self.centroids.iter().all(|v| v.is_finite())
            && self.ends.windows(2).all(|e| e[0] <= e[1])
            && self.ends.last().is_some_and(|&e| e as usize == n)
            && self.members.len() == n
            && self
                .members
                .iter()
                .all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
            && (1..=c).contains(&(self.probes as usize))
    }

    /// List j's members.
    fn list(&self, j: usize) -> &[u32] {
        let start = if j == 0 { 0 } else { self.ends[j - 1] as usize };
        &self.members[start..self.ends[j] as usize]
    }
}

/// Rows in tiles of [`LANES`], coordinate-major inside a tile, with their squared norms
/// (+∞ in the lanes past the last row, so that those never rank) and indices.
#[derive(Clone, Debug, PartialEq)]
struct Tiles {
    w: usize,
    data: Vec<f32>,
    norms: Vec<f32>,
    ids: Vec<u32>,
}

impl Tiles {
    /// The rows of `rows` (row-major, width `w`), less `centre` when given, indexed by
    /// their place.
    fn of_rows(rows: &[f32], w: usize, centre: Option<&[f32]>) -> Tiles {
        let n = rows.len().checked_div(w).unwrap_or(0);
        let ids: Vec<u32> = (0..n as u32).collect();
        let mut t = Tiles::empty(w);
        t.push(
            &ids,
            |i| &rows[i as usize * w..(i as usize + 1) * w],
            centre,
            |i| i,
        );
        t
    }

    fn empty(w: usize) -> Tiles {
        Tiles {
            w,
            data: Vec::new(),
            norms: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// Appends the rows `row(i)` (less `centre`) of `members`, recorded as `id(i)`, in
    /// tiles of their own.
    fn push<'a>(
        &mut self,
        members: &[u32],
        row: impl Fn(u32) -> &'a [f32],
        centre: Option<&[f32]>,
        id: impl Fn(u32) -> u32,
    ) {
        let w = self.w;
        let mut r = vec![0.0f32; w];
        for chunk in members.chunks(LANES) {
            let base = self.data.len();
            self.data.resize(base + w * LANES, 0.0);
            for (lane, &i) in chunk.iter().enumerate() {
                r.copy_from_slice(row(i));
                if let Some(c) = centre {
                    r.iter_mut().zip(c).for_each(|(v, c)| *v -= c);
                }
                for (t, &v) in r.iter().enumerate() {
                    self.data[base + t * LANES + lane] = v;
                }
                self.norms.push(norm2(&r));
                self.ids.push(id(i));
            }
            for _ in chunk.len()..LANES {
                self.norms.push(f32::INFINITY);
                self.ids.push(u32::MAX);
            }
        }
    }

    fn count(&self) -> usize {
        self.norms.len() / LANES
    }

    fn tile(&self, t: usize) -> (&[f32], &[f32], &[u32]) {
        (
            &self.data[t * self.w * LANES..(t + 1) * self.w * LANES],
            &self.norms[t * LANES..(t + 1) * LANES],
            &self.ids[t * LANES..(t + 1) * LANES],
        )
    }
}

/// The `m` nearest rows of `tiles` to each row of `rows` (row-major, width `w` > 0), by
/// (‖p‖² − 2 q·p, index): m indices per row, nearest first (`u32::MAX` past the last
/// where fewer rank).
fn nearest(kernel: Kernel, rows: &[f32], w: usize, tiles: &Tiles, m: usize) -> Vec<u32> {
    let mut out = vec![u32::MAX; rows.len() / w * m];
    let mut d: Out = [[0.0; LANES]; GROUP];
    for (o, rows) in out.chunks_mut(GROUP * m).zip(rows.chunks(GROUP * w)) {
        let mut tops: Vec<Top> = (0..rows.len() / w).map(|_| Top::new(m)).collect();
        for t in 0..tiles.count() {
            let (data, norms, ids) = tiles.tile(t);
            let by = By {
                shift: [0.0; GROUP],
                worst: std::array::from_fn(|u| tops.get(u).map_or(f32::INFINITY, Top::worst)),
            };
            let masks = kernel.run(rows, (data, norms), &by, &mut d);
            for ((top, d), &mask) in tops.iter_mut().zip(&d).zip(&masks) {
                top.offer(d, mask, ids);
            }
        }
        for (top, o) in tops.iter().zip(o.chunks_mut(m)) {
            o[..top.len].copy_from_slice(&top.i[..top.len]);
        }
    }
    out
}

/// [`nearest`] with m = 1 on every core (k-means' assignments).
fn assign(kernel: Kernel, rows: &[f32], w: usize, tiles: &Tiles) -> Vec<u32> {
    rows.par_chunks(256 * w)
        .flat_map_iter(|rows| nearest(kernel, rows, w, tiles, 1))
        .collect()
}

/// The m smallest (distance, index) offered, in increasing order.
#[derive(Clone, Debug)]
struct Top {
    d: Vec<f32>,
    i: Vec<u32>,
    len: usize,
}

impl Top {
    fn new(m: usize) -> Top {
        Top {
            d: vec![f32::INFINITY; m],
            i: vec![u32::MAX; m],
            len: 0,
        }
    }

    /// The largest distance kept (+∞ until m are).
    fn worst(&self) -> f32 {
        self.d.last().copied().unwrap_or(f32::NEG_INFINITY)
    }

    /// Offers the lanes `mask` of `d` (distances of points `ids`; the kernel marked
    /// those not above [`Top::worst`]); +∞ never ranks.
    #[inline]
    fn offer(&mut self, d: &[f32; LANES], mut mask: u32, ids: &[u32]) {
        let m = self.d.len();
        if m == 0 {
            return;
        }
        while mask != 0 {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let (v, id) = (d[lane], ids[lane]);
            // (v, id) < (d, i) in the total order; NaN never reaches here (unmarked).
            let before = |d: f32, i: u32| v < d || (v == d && id < i);
            if v == f32::INFINITY || !before(self.d[m - 1], self.i[m - 1]) {
                continue;
            }
            let mut at = m - 1;
            while at > 0 && before(self.d[at - 1], self.i[at - 1]) {
                self.d[at] = self.d[at - 1];
                self.i[at] = self.i[at - 1];
                at -= 1;
            }
            self.d[at] = v;
            self.i[at] = id;
            self.len = (self.len + 1).min(m);
        }
    }
}

/// The search structure: the stored lists made into tiles, with the training rows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct InvertedIndex {
    width: usize,
    mean: Vec<f64>,
    /// Training points, row-major (their exact distances, and equality with a query).
    x: Vec<f64>,
    rows: RowTable,
    /// The centred centroids, row after row, and in tiles.
    centroid_rows: Vec<f32>,
    centroids: Tiles,
    /// The lists' points less their centroid, list after list; list j's tiles are
    /// `tile_ends[j − 1]..tile_ends[j]`.
    points: Tiles,
    tile_ends: Vec<usize>,
    probes: usize,
}

impl InvertedIndex {
    /// The index of the training points `x` (row-major, width `w`) over `lists` (which
    /// fit them: [`Lists::is_consistent`]).
    pub(crate) fn new(x: Vec<f64>, w: usize, lists: &Lists) -> InvertedIndex {
        let rows = RowTable::of_rows(&x, w);
        let xc = centred(&x, w, &lists.mean);
        let c = lists.ends.len();
        let mut points = Tiles::empty(w);
        let mut tile_ends = Vec::with_capacity(c);
        for j in 0..c {
            let centre = &lists.centroids[j * w..(j + 1) * w];
            let row = |i: u32| &xc[i as usize * w..(i as usize + 1) * w];
            points.push(lists.list(j), row, Some(centre), |i| i);
            tile_ends.push(points.count());
        }
        InvertedIndex {
            width: w,
            mean: lists.mean.clone(),
            rows,
            centroids: Tiles::of_rows(&lists.centroids, w, None),
            centroid_rows: lists.centroids.clone(),
            points,
            tile_ends,
            probes: lists.probes as usize,
            x,
        }
    }

    /// The training rows, row-major.
    pub(crate) fn rows(&self) -> &[f64] {
        &self.x
    }

    fn point(&self, i: usize) -> &[f64] {
        &self.x[i * self.width..(i + 1) * self.width]
    }

    /// The (approximate) k nearest training points of every row of `queries`: indices
    /// and Euclidean distances, nearest first.
    pub(crate) fn search(&self, queries: MatRef<'_, f64>, k: usize) -> Neighbours {
        let w = self.width;
        let n = self.x.len().checked_div(w).unwrap_or(0);
        let k = k.min(n);
        if w == 0 {
            // No coordinates: every training point at distance 0 (the exact search).
            return super::super::knn(queries, self.x_mat(), k, false);
        }
        let q = crate::linalg::row_major(queries);
        let kernel = Kernel::detect();
        q.par_chunks(BLOCK * w)
            .flat_map_iter(|block| self.block(kernel, block, k))
            .unzip()
    }

    fn x_mat(&self) -> MatRef<'_, f64> {
        let n = self.x.len().checked_div(self.width).unwrap_or(0);
        MatRef::from_row_major_slice(&self.x, n, self.width)
    }

    /// The k nearest of each row of `block` (row-major).
    fn block(&self, kernel: Kernel, block: &[f64], k: usize) -> Vec<(Vec<usize>, Vec<f64>)> {
        let w = self.width;
        let nq = block.len() / w;
        let qc = centred(block, w, &self.mean);
        // Each query's probes; then the (query, list) pairs list by list.
        let p = self.probes;
        let probes = nearest(kernel, &qc, w, &self.centroids, p);
        let probed = probes.iter().enumerate().filter(|&(_, &j)| j != u32::MAX);
        let by_list = Ragged::by_key(
            self.tile_ends.len(),
            probed.map(|(s, &j)| (j as usize, (s / p) as u32)),
        );
        let mut tops: Vec<Top> = (0..nq).map(|_| Top::new(k)).collect();
        let mut d: Out = [[0.0; LANES]; GROUP];
        let mut residual = vec![0.0f32; GROUP * w];
        for (j, queries) in by_list.iter().enumerate().filter(|(_, q)| !q.is_empty()) {
            let centre = &self.centroid_rows[j * w..(j + 1) * w];
            let tiles = if j == 0 { 0 } else { self.tile_ends[j - 1] }..self.tile_ends[j];
            for group in queries.chunks(GROUP) {
                // The group's residuals from the list's centroid, and their norms.
                let mut by = By::ALL;
                for (u, &a) in group.iter().enumerate() {
                    let r = &mut residual[u * w..(u + 1) * w];
                    r.iter_mut()
                        .zip(&qc[a as usize * w..(a as usize + 1) * w])
                        .zip(centre)
                        .for_each(|((r, q), c)| *r = q - c);
                    by.shift[u] = kernel.norm2(r);
                }
                let qs = &residual[..group.len() * w];
                for t in tiles.clone() {
                    let (data, norms, ids) = self.points.tile(t);
                    for (u, &a) in group.iter().enumerate() {
                        by.worst[u] = tops[a as usize].worst();
                    }
                    let masks = kernel.run(qs, (data, norms), &by, &mut d);
                    for ((&a, d), &mask) in group.iter().zip(&d).zip(&masks) {
                        tops[a as usize].offer(d, mask, ids);
                    }
                }
            }
        }
        tops.iter()
            .enumerate()
            .map(|(a, top)| {
                let fits = kernel.norm2(&qc[a * w..(a + 1) * w]).is_finite();
                self.finish(&block[a * w..(a + 1) * w], top, k, fits)
            })
            .collect()
    }

    /// Query `z`'s k nearest from its kept candidates `top` and the training points
    /// equal to it: measured again in double precision, by (distance, index); by the
    /// exact search where fewer than k were kept or z is beyond single precision (not
    /// `fits`).
    fn finish(&self, z: &[f64], top: &Top, k: usize, fits: bool) -> (Vec<usize>, Vec<f64>) {
        if top.len < k || !fits {
            let one = MatRef::from_row_major_slice(z, 1, self.width);
            let (mut i, mut d) = super::super::knn(one, self.x_mat(), k, false);
            return (i.pop().unwrap_or_default(), d.pop().unwrap_or_default());
        }
        let mut cand: Vec<(f64, u32)> = top.i[..top.len]
            .iter()
            .map(|&i| (sq(z, self.point(i as usize)), i))
            .collect();
        for i in self.rows.equal(&self.x, z) {
            if !top.i[..top.len].contains(&i) {
                cand.push((0.0, i));
            }
        }
        cand.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        cand.truncate(k);
        cand.into_iter()
            .map(|(d, i)| (i as usize, d.sqrt()))
            .unzip()
    }
}

#[cfg(test)]
mod tests;
