//! Nearest neighbours, neighbourhood graphs and shortest paths (maths §6).
//!
//! kNN is exact: a kd-tree (kiddo) for dimension ≤ 16, brute force on blocks of GEMM
//! distances above (rows of queries × all points, 2 MiB blocks, parallel over blocks;
//! a set's rows among themselves on one side of the diagonal only).

pub(crate) mod balls;
mod brute;
mod descent;
mod graph;
pub mod kdtree;
pub(crate) mod ragged;
mod search;

pub use brute::knn_brute;
pub use descent::{knn_descent, recall, Descent};
pub use graph::{knn_graph, GraphMethod, KnnGraph, APPROXIMATE_FROM, APPROXIMATE_QUERIES_FROM};
pub(crate) use search::row_hash;
pub use search::{GraphIndex, TrainingSearch, SEARCH_DEGREE};

use faer::MatRef;
use rayon::prelude::*;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

/// Neighbour indices and distances, one list per query row.
pub type Neighbours = (Vec<Vec<usize>>, Vec<Vec<f64>>);

/// The k nearest rows of `points` for every row of `queries`: indices and Euclidean
/// distances, nearest first. With `exclude_self`, `queries` must be `points` and row i
/// never lists itself. A kd-tree serves dimensions ≤ 16, brute force the rest (ties
/// between equidistant points may be broken differently by the two).
pub fn knn(
    queries: MatRef<'_, f64>,
    points: MatRef<'_, f64>,
    k: usize,
    exclude_self: bool,
) -> Neighbours {
    Query::new(queries, points, k, exclude_self).search()
}

/// [`knn`] inside a fit: a stop request ([`crate::progress::request_stop`], Ctrl-C) ends
/// the search within a block of queries and returns
/// [`Error::Interrupted`](crate::Error::Interrupted).
pub(crate) fn knn_stoppable(
    queries: MatRef<'_, f64>,
    points: MatRef<'_, f64>,
    k: usize,
    exclude_self: bool,
) -> crate::error::Result<Neighbours> {
    let found = Query {
        stoppable: true,
        ..Query::new(queries, points, k, exclude_self)
    }
    .search();
    // A search that skipped work on a stop request is incomplete: never returned.
    crate::progress::check()?;
    Ok(found)
}

/// The one rule of the kNN methods (UMAP, Isomap, LLE, the diffusion kernel's graph) for
/// an `n_neighbors` k ≥ N (from 2 points): k = N − 1 and the fit warning that says so, as
/// umap-learn does. `None` when k is usable as it is (or 0, refused by the method).
pub(crate) fn lowered(k: usize, n: usize) -> Option<(usize, String)> {
    (n >= 2 && k >= n).then(|| {
        (
            n - 1,
            format!(
                "n_neighbors = {k} is not below the number of points ({n}): lowered to N − 1 \
                 = {} (as umap-learn does)",
                n - 1
            ),
        )
    })
}

/// t-SNE's and UMAP's `transform_neighbors` t > N lowered to N (a new point is placed
/// from at most every training point), with the fit warning that says so pushed to
/// `warnings`.
pub(crate) fn lower_transform_neighbors(t: &mut usize, n: usize, warnings: &mut Vec<String>) {
    if *t > n {
        warnings.push(format!(
            "transform_neighbors = {t} is more than the number of points ({n}): lowered \
             to N = {n}"
        ));
        *t = n;
    }
}

/// `fit(params, x, warnings)` with the `n_neighbors` of `params` (the field `k` points
/// to) lowered to N − 1 and its note as the one warning where [`lowered`] says so
/// (N = the rows of `x`); else `fit` on `params` as they are, with no warning. The
/// graph methods' `fit`.
pub(crate) fn fit_lowered<P: Clone, T>(
    params: &P,
    x: MatRef<'_, f64>,
    k: impl Fn(&mut P) -> &mut usize,
    fit: impl FnOnce(&P, MatRef<'_, f64>, Vec<String>) -> crate::error::Result<T>,
) -> crate::error::Result<T> {
    let mut p = params.clone();
    match lowered(*k(&mut p), x.nrows()) {
        Some((used, note)) => {
            *k(&mut p) = used;
            fit(&p, x, vec![note])
        }
        None => fit(params, x, Vec::new()),
    }
}

/// True when a stoppable search is asked to stop: it skips its remaining work, and
/// [`knn_stoppable`] returns `Interrupted` (the request stays set until the next fit).
pub(crate) fn stopping(stoppable: bool) -> bool {
    stoppable && crate::progress::stop_requested()
}

/// One exact search: the k nearest rows of `points` for every row of `queries`
/// (without row i itself where `exclude_self`; then `queries` is `points`), skipping
/// its remaining work on a stop request where `stoppable` ([`stopping`]).
#[derive(Clone, Copy)]
pub(crate) struct Query<'a> {
    pub(crate) queries: MatRef<'a, f64>,
    pub(crate) points: MatRef<'a, f64>,
    pub(crate) k: usize,
    pub(crate) exclude_self: bool,
    pub(crate) stoppable: bool,
}

impl<'a> Query<'a> {
    /// A search that does not stop on a request. Asked for more neighbours than there
    /// are points, it lists every point (k is lowered to N before anything is sized by it).
    pub(crate) fn new(
        queries: MatRef<'a, f64>,
        points: MatRef<'a, f64>,
        k: usize,
        exclude_self: bool,
    ) -> Query<'a> {
        Query {
            queries,
            points,
            k: k.min(points.nrows()),
            exclude_self,
            stoppable: false,
        }
    }

    /// A kd-tree in dimensions ≤ 16 (from 64 points), brute force otherwise.
    fn search(self) -> Neighbours {
        if (1..=kdtree::MAX_DIM).contains(&self.points.ncols()) && self.points.nrows() >= 64 {
            kdtree::knn_tree(self)
        } else {
            brute::knn_brute_with(self)
        }
    }
}

/// Keeps the k smallest `(distance, index)` candidates, nearest first (ties by index;
/// NaN last).
pub(crate) fn k_smallest(cand: &mut Vec<(f64, usize)>, k: usize) {
    let by = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    let k = k.min(cand.len());
    if k < cand.len() {
        cand.select_nth_unstable_by(k, by);
    }
    cand.truncate(k);
    cand.sort_by(by);
}

/// An undirected weighted graph in compressed sparse row form.
#[derive(Clone, Debug)]
pub struct Graph {
    offsets: Vec<usize>,
    targets: Vec<usize>,
    weights: Vec<f64>,
}

impl Graph {
    /// The symmetrised kNN graph: an edge i–j (weight = distance) if either chose the
    /// other (scikit-learn's convention).
    pub fn from_knn(idx: &[Vec<usize>], dist: &[Vec<f64>]) -> Graph {
        let n = idx.len();
        let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for i in 0..n {
            for (&j, &w) in idx[i].iter().zip(&dist[i]) {
                adj[i].push((j, w));
                adj[j].push((i, w));
            }
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        offsets.push(0);
        for a in adj.iter_mut() {
            a.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)));
            a.dedup_by_key(|e| e.0);
            for &(j, w) in a.iter() {
                targets.push(j);
                weights.push(w);
            }
            offsets.push(targets.len());
        }
        Graph {
            offsets,
            targets,
            weights,
        }
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True for the graph without vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn neighbours(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.offsets[i]..self.offsets[i + 1];
        self.targets[r.clone()]
            .iter()
            .copied()
            .zip(self.weights[r].iter().copied())
    }

    /// Every edge once, as (i, j, weight) with i < j, in order of i then j.
    pub fn edges(&self) -> Vec<(usize, usize, f64)> {
        (0..self.len())
            .flat_map(|i| {
                self.neighbours(i)
                    .filter(move |&(j, _)| j > i)
                    .map(move |(j, w)| (i, j, w))
            })
            .collect()
    }

    /// Connected components: a label per vertex, and the component sizes; labels are
    /// ordered by size, largest first (label 0 is the largest component).
    pub fn components(&self) -> (Vec<usize>, Vec<usize>) {
        crate::linalg::sparse::components(self.len(), |v, visit| {
            for (w, _) in self.neighbours(v) {
                visit(w);
            }
        })
    }

    /// The subgraph on the vertices `keep` (in that order).
    pub fn subgraph(&self, keep: &[usize]) -> Graph {
        let mut new_index = vec![usize::MAX; self.len()];
        for (k, &v) in keep.iter().enumerate() {
            new_index[v] = k;
        }
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        for &v in keep {
            for (w, wt) in self.neighbours(v) {
                if new_index[w] != usize::MAX {
                    targets.push(new_index[w]);
                    weights.push(wt);
                }
            }
            offsets.push(targets.len());
        }
        Graph {
            offsets,
            targets,
            weights,
        }
    }

    /// Shortest-path distances from every vertex, row-major N×N (unreachable pairs are
    /// +∞): Dijkstra from every source, in parallel, reusing finished rows.
    ///
    /// Sources run in breadth-first order, so a source's neighbours are mostly finished
    /// before it. When Dijkstra from s settles a vertex v whose own row is finished, it
    /// relaxes every vertex at once with d(s, v) + d(v, ·) (a vectorised pass) and does
    /// not expand v: every path through v is accounted for. A vertex w so improved is
    /// not pushed on the heap either (a path through w continues a path through v), so
    /// it is expanded only if an edge later gives it a still shorter distance. Only the
    /// neighbourhood of s that no finished row covers is searched edge by edge. The
    /// result is exact (each entry is the length of a path, and no shorter path is
    /// missed); it can differ from plain Dijkstra ([`Graph::all_shortest_paths_plain`])
    /// by the rounding of sums taken in another order.
    pub fn all_shortest_paths(&self) -> Vec<f64> {
        self.shortest_paths(false)
            .expect("only a stoppable search is interrupted")
    }

    /// [`Graph::all_shortest_paths`] inside a fit: a stop request
    /// ([`crate::progress::request_stop`], Ctrl-C) ends it after the current wave of at
    /// most 64 sources, with [`Error::Interrupted`](crate::Error::Interrupted).
    pub(crate) fn all_shortest_paths_stoppable(&self) -> crate::error::Result<Vec<f64>> {
        self.shortest_paths(true)
    }

    fn shortest_paths(&self, stoppable: bool) -> crate::error::Result<Vec<f64>> {
        let n = self.len();
        let mut out = vec![f64::INFINITY; n * n];
        let shared = SharedRows {
            data: out.as_mut_ptr(),
            n,
            done: (0..n).map(|_| AtomicBool::new(false)).collect(),
        };
        let order = self.bfs_order();
        // Sources run in waves of doubling size (1, 2, 4, …, WAVE_MAX); a wave reuses only
        // rows finished in earlier waves. Which rows a source reuses then does not depend
        // on thread timing, so every distance is summed in the same order on every run
        // and machine: bitwise deterministic results.
        const WAVE_MAX: usize = 64;
        let (mut start, mut size) = (0, 1);
        while start < n {
            if stopping(stoppable) {
                return Err(crate::error::Error::Interrupted);
            }
            let wave = &order[start..(start + size).min(n)];
            wave.par_iter().for_each_init(
                || (BinaryHeap::<Item>::with_capacity(n), vec![f64::INFINITY; n]),
                |(heap, dist), &s| self.dijkstra_reusing(s, dist, heap, &shared),
            );
            for &s in wave {
                shared.publish(s);
            }
            start += wave.len();
            size = (2 * size).min(WAVE_MAX);
        }
        Ok(out)
    }

    /// Plain Dijkstra from every source (binary heap, parallel over sources): the
    /// reference for [`Graph::all_shortest_paths`].
    pub fn all_shortest_paths_plain(&self) -> Vec<f64> {
        let n = self.len();
        let mut out = vec![f64::INFINITY; n * n];
        out.par_chunks_mut(n.max(1)).enumerate().for_each_init(
            || BinaryHeap::<Item>::with_capacity(n),
            |heap, (s, row)| self.dijkstra(s, row, heap, |_| None),
        );
        out
    }

    /// Vertices in breadth-first order, component after component.
    fn bfs_order(&self) -> Vec<usize> {
        let n = self.len();
        let mut seen = vec![false; n];
        let mut order = Vec::with_capacity(n);
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut head = order.len();
            order.push(root);
            while head < order.len() {
                let v = order[head];
                head += 1;
                for (w, _) in self.neighbours(v) {
                    if !seen[w] {
                        seen[w] = true;
                        order.push(w);
                    }
                }
            }
        }
        order
    }

    fn dijkstra_reusing(
        &self,
        s: usize,
        dist: &mut [f64],
        heap: &mut BinaryHeap<Item>,
        rows: &SharedRows,
    ) {
        dist.fill(f64::INFINITY);
        self.dijkstra(s, dist, heap, |v| rows.finished(v));
        rows.finish(s, dist);
    }

    /// Distances from `s` into `dist` (infinite on entry but at `s`). A vertex v with
    /// a `finished(v)` row is not expanded: that row, shifted by v's distance, bounds
    /// every entry at once (a closure, so that the plain search compiles without it).
    fn dijkstra<'r>(
        &self,
        s: usize,
        dist: &mut [f64],
        heap: &mut BinaryHeap<Item>,
        finished: impl Fn(usize) -> Option<&'r [f64]>,
    ) {
        heap.clear();
        dist[s] = 0.0;
        heap.push(Item::new(0.0, s));
        while let Some(item) = heap.pop() {
            let (d, v) = item.get();
            // Stale entries, and vertices improved through a finished row since they
            // were pushed (those lowered their distance without a push).
            if d > dist[v] {
                continue;
            }
            if v != s {
                if let Some(row) = finished(v) {
                    for (dw, &r) in dist.iter_mut().zip(row) {
                        let nd = d + r;
                        *dw = if nd < *dw { nd } else { *dw };
                    }
                    continue;
                }
            }
            let r = self.offsets[v]..self.offsets[v + 1];
            for (&w, &wt) in self.targets[r.clone()].iter().zip(&self.weights[r]) {
                let nd = d + wt;
                if nd < dist[w] {
                    dist[w] = nd;
                    heap.push(Item::new(nd, w));
                }
            }
        }
    }
}

/// Rows of the all-pairs output shared between threads: row s is written once, by the
/// thread that runs source s, and read by others only after its `done` flag is set
/// (after the wave that computed it has ended).
struct SharedRows {
    data: *mut f64,
    n: usize,
    done: Vec<AtomicBool>,
}

// SAFETY: a row is written by exactly one thread (each source is processed once) before
// its flag is released; readers acquire the flag first and never read unfinished rows,
// and no row is written after it is finished. `data` outlives every use (the caller's
// Vec is not touched until the parallel loop has ended).
unsafe impl Sync for SharedRows {}

impl SharedRows {
    /// Row v if it is finished.
    fn finished(&self, v: usize) -> Option<&[f64]> {
        if self.done[v].load(AtomicOrdering::Acquire) {
            // SAFETY: finished rows are never written again (see the Sync impl).
            Some(unsafe { std::slice::from_raw_parts(self.data.add(v * self.n), self.n) })
        } else {
            None
        }
    }

    /// Writes row s (not yet visible to other sources).
    fn finish(&self, s: usize, values: &[f64]) {
        // SAFETY: only the thread running source s writes row s, once, before the flag.
        let row = unsafe { std::slice::from_raw_parts_mut(self.data.add(s * self.n), self.n) };
        row.copy_from_slice(values);
    }

    /// Makes row s visible to later sources (called once its wave has ended).
    fn publish(&self, s: usize) {
        self.done[s].store(true, AtomicOrdering::Release);
    }
}

/// Min-heap entry: a non-negative distance (whose bit pattern orders like the number)
/// and a vertex, compared as integers.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Item(std::cmp::Reverse<(u64, u32)>);

impl Item {
    fn new(d: f64, v: usize) -> Self {
        Item(std::cmp::Reverse((d.to_bits(), v as u32)))
    }

    fn get(&self) -> (f64, usize) {
        let (d, v) = self.0 .0;
        (f64::from_bits(d), v as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use faer::Mat;

    #[test]
    fn knn_matches_sorting_all_distances() {
        let x = Rng::new(1).normal_mat(120, 4);
        let (idx, dist) = knn_brute(x.as_ref(), x.as_ref(), 5, true);
        for i in 0..120 {
            let mut all: Vec<(f64, usize)> = (0..120)
                .filter(|&j| j != i)
                .map(|j| {
                    let d: f64 = (0..4).map(|c| (x[(i, c)] - x[(j, c)]).powi(2)).sum();
                    (d.sqrt(), j)
                })
                .collect();
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            for t in 0..5 {
                assert_eq!(idx[i][t], all[t].1);
                assert!((dist[i][t] - all[t].0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn more_neighbours_than_points_lists_every_point() {
        // k is at most the number of points, however large it is asked (a corrupt
        // model file once asked for 10¹² and the search tried to allocate for them).
        // 80 points: brute force in 20 dimensions, the kd-tree in 3 (from 64 points).
        let x = Rng::new(3).normal_mat(80, 20);
        let q = Rng::new(4).normal_mat(3, 20);
        for dim in [20, 3] {
            let (p, q) = (x.subcols(0, dim), q.subcols(0, dim));
            let (all, _) = knn(q, p, 80, false);
            assert_eq!(knn(q, p, 1 << 40, false).0, all, "dim {dim}");
            assert!(all.iter().all(|r| r.len() == 80));
            let (own, _) = knn(p, p, 1 << 40, true);
            assert!(own.iter().all(|r| r.len() == 79), "dim {dim}");
        }
    }

    #[test]
    fn kd_tree_agrees_with_brute_force() {
        let mut r = Rng::new(2);
        for dim in [1, 2, 3, 7, 16] {
            let x = Mat::from_fn(300, dim, |_, _| r.normal());
            let q = Mat::from_fn(50, dim, |_, _| r.normal());
            for (queries, exclude) in [(x.as_ref(), true), (q.as_ref(), false)] {
                let (ib, db) = knn_brute(queries, x.as_ref(), 7, exclude);
                let (it, dt) = knn(queries, x.as_ref(), 7, exclude);
                assert_eq!(ib, it, "dim {dim}");
                for (a, b) in db.iter().flatten().zip(dt.iter().flatten()) {
                    assert!((a - b).abs() <= 1e-12 * (1.0 + a), "dim {dim}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn shortest_paths_on_a_path_graph_and_components() {
        // Points on a line: 0 — 1 — 2 — 3, and a far pair 10 — 11.
        let x = Mat::from_fn(6, 1, |i, _| [0.0, 1.0, 2.5, 4.5, 100.0, 101.0][i]);
        let (idx, dist) = knn(x.as_ref(), x.as_ref(), 1, true);
        let g = Graph::from_knn(&idx, &dist);
        let (label, sizes) = g.components();
        assert_eq!(sizes, vec![4, 2]);
        assert_eq!(label, vec![0, 0, 0, 0, 1, 1]);
        let sub = g.subgraph(&[0, 1, 2, 3]);
        let d = sub.all_shortest_paths();
        assert_eq!(d[3], 4.5);
        assert_eq!(d[4 + 2], 1.5);
        let full = g.all_shortest_paths();
        assert!(full[4].is_infinite());
    }

    #[test]
    fn reusing_rows_gives_the_plain_dijkstra_distances() {
        let mut r = Rng::new(8);
        for (n, dim, k) in [(400, 2, 4), (300, 3, 6), (250, 5, 3)] {
            let x = Mat::from_fn(n, dim, |_, _| r.normal());
            let (idx, dist) = knn(x.as_ref(), x.as_ref(), k, true);
            let g = Graph::from_knn(&idx, &dist);
            let (a, b) = (g.all_shortest_paths(), g.all_shortest_paths_plain());
            let mut finite = 0;
            for (u, v) in a.iter().zip(&b) {
                if v.is_finite() {
                    finite += 1;
                    assert!((u - v).abs() <= 1e-12 * v.max(1.0), "{u} vs {v}");
                } else {
                    assert!(u.is_infinite());
                }
            }
            assert!(finite > n * n / 2);
        }
    }

    #[test]
    fn shortest_paths_are_bitwise_the_same_whatever_the_threads() {
        let x = Rng::new(9).normal_mat(1500, 3);
        let (idx, dist) = knn(x.as_ref(), x.as_ref(), 6, true);
        let g = Graph::from_knn(&idx, &dist);
        let run = |threads: usize| crate::testing::on_threads(threads, || g.all_shortest_paths());
        let one = run(1);
        for threads in [2, 3, 4] {
            for _ in 0..3 {
                let other = run(threads);
                let same = one
                    .iter()
                    .zip(&other)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{threads} threads changed a distance");
            }
        }
    }
}
