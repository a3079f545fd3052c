//! Isomap (maths §6): kNN graph (an edge if either end chose it), geodesic distances by
//! Dijkstra from every training point, classical MDS of the squared geodesics.
//! Extension of z: d_G(z, xᵢ) = min over z's k nearest training points j of
//! ||z − x_j|| + d_G(x_j, xᵢ), then projection (or restricted reconstruction) with
//! a₂ = d_G² — scikit-learn's `Isomap.transform` for the projection.

use crate::error::Result;
use crate::extend::restricted::Joint;
use crate::extend::{by_chunks, Extension, Strategy};
use crate::linalg::eigen::Solver;
use crate::linalg::stored::StoredMat;
use crate::methods::mds::cmds_info;
use crate::methods::mds::{Cmds, Definiteness};
use crate::methods::OutOfSample;
use crate::model::method::{points_only, Configuration, Fitted, Input, Method, Registered};
use crate::model::params::{Kind, ParamSpec, Values};
use crate::model::specs::{N_COMPONENTS, RANK_TOLERANCE, SOLVER};
use crate::neighbors::{knn, knn_stoppable, Graph};
use crate::validate;
use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

/// Isomap parameters.
///
/// ```
/// use oose::methods::isomap::Isomap;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(400, 0.0, false, 0).points;
/// let m = Isomap { n_neighbors: 10, ..Default::default() }.fit(x.as_ref()).unwrap();
/// let e = m.extend(x.as_ref().subrows(0, 3)).unwrap();
/// assert!((e.coordinates[(0, 0)] - m.embedding()[(0, 0)]).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Isomap {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// k nearest neighbours for the graph and for extension (default 10).
    pub n_neighbors: usize,
    /// Eigensolver (default `Auto`).
    pub solver: Solver,
    /// Embed the largest connected component when the graph is disconnected (the other
    /// points are extended). Default false: every pair of components is joined by an
    /// edge between its two closest points (scikit-learn's rule), with a fit warning.
    pub largest_component: bool,
    /// Relative tolerance for positive eigenvalues (1e-12).
    pub rank_tolerance: f64,
}

impl Default for Isomap {
    fn default() -> Self {
        Isomap {
            n_components: 2,
            n_neighbors: 10,
            solver: Solver::Auto,
            largest_component: false,
            rank_tolerance: 1e-12,
        }
    }
}

/// A fitted Isomap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedIsomap {
    params: Isomap,
    /// The training points embedded (the largest component's, if so asked).
    x: StoredMat,
    /// Indices of the embedded points among the rows given to `fit`.
    kept: Vec<usize>,
    /// Geodesic distances among the embedded points (N×N).
    geodesics: StoredMat,
    core: Cmds,
    /// The fit's warnings (components joined), not stored.
    #[serde(skip)]
    warnings: crate::model::method::Transient<Vec<String>>,
}

impl Isomap {
    /// Fits on the rows of `x` (N×D). `n_neighbors` ≥ N (from 2 points) is lowered to
    /// N − 1 with a fit warning, as umap-learn does; the model records the value used.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedIsomap> {
        validate::training_points("training data", x)?;
        crate::neighbors::fit_lowered(self, x, |p| &mut p.n_neighbors, Self::fit_noting)
    }

    fn fit_noting(&self, x: MatRef<'_, f64>, mut warnings: Vec<String>) -> Result<FittedIsomap> {
        let n = x.nrows();
        // Geodesics, the similarity matrix and the eigensolver's copy: N×N each.
        crate::linalg::memory::plan("Isomap's geodesic distances (N×N)", 3, n, n)?;
        validate::count(
            "n_neighbors",
            self.n_neighbors,
            n.saturating_sub(1),
            "N − 1",
        )?;
        crate::progress::report(|| {
            format!(
                "Isomap: {}-nearest neighbours of {n} points",
                self.n_neighbors
            )
        });
        let (mut idx, mut dist) = knn_stoppable(x, x, self.n_neighbors, true)?;
        let mut graph = Graph::from_knn(&idx, &dist);
        let (label, sizes) = graph.components();
        let kept: Vec<usize> = if sizes.len() > 1 && self.largest_component {
            let kept: Vec<usize> = (0..n).filter(|&i| label[i] == 0).collect();
            graph = graph.subgraph(&kept);
            kept
        } else {
            if sizes.len() > 1 {
                for (i, j, d) in joining_edges(x, &label, sizes.len()) {
                    idx[i].push(j);
                    dist[i].push(d);
                }
                graph = Graph::from_knn(&idx, &dist);
                warnings.push(format!(
                    "the {}-nearest-neighbour graph has {} connected components (sizes \
                     {sizes:?}): each pair was joined by an edge between its closest points \
                     (scikit-learn's rule; geodesics between components run through these \
                     edges). largest_component=true embeds the largest one instead",
                    self.n_neighbors,
                    sizes.len()
                ));
            }
            (0..n).collect()
        };
        let nk = kept.len();
        crate::progress::report(|| {
            format!("Isomap: geodesic distances (Dijkstra from {nk} points)")
        });
        let mut geo = graph.all_shortest_paths_stoppable()?;
        // Passes over N² entries, each a stop point (a fraction of a second at N = 8000).
        symmetrize_in_place(&mut geo, nk);
        crate::progress::check()?;
        // Symmetric now: row j of `geo` is column j, read contiguously.
        let mut gamma = Mat::<f64>::zeros(nk, nk);
        for j in 0..nk {
            let g = &geo[j * nk..(j + 1) * nk];
            for (v, &d) in gamma.col_as_slice_mut(j).iter_mut().zip(g) {
                *v = -0.5 * d * d;
            }
        }
        crate::progress::check()?;
        let geodesics = StoredMat::from_column_major(nk, nk, geo);
        crate::progress::report(|| "Isomap: eigenproblem".into());
        let core = Cmds::fit(
            gamma,
            self.n_components,
            self.solver,
            self.rank_tolerance,
            Definiteness::Skip,
        )?;
        let xk = Mat::from_fn(nk, x.ncols(), |i, j| x[(kept[i], j)]);
        Ok(FittedIsomap {
            params: self.clone(),
            x: StoredMat::from_mat(xk.as_ref()),
            kept,
            geodesics,
            core,
            warnings: crate::model::method::Transient(warnings),
        })
    }
}

/// One edge per pair of connected components (`label`: each point's, `count` of them):
/// between the pair's two closest points, (i, j, ‖xᵢ − xⱼ‖) with i in the component of
/// lower label. Exact (all pairs across the two components); the pairs in parallel.
fn joining_edges(x: MatRef<'_, f64>, label: &[usize], count: usize) -> Vec<(usize, usize, f64)> {
    use rayon::prelude::*;
    let mut members = vec![Vec::new(); count];
    for (i, &c) in label.iter().enumerate() {
        members[c].push(i);
    }
    let rows: Vec<Vec<f64>> = (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|j| x[(i, j)]).collect())
        .collect();
    let pairs: Vec<(usize, usize)> = (0..count)
        .flat_map(|a| (a + 1..count).map(move |b| (a, b)))
        .collect();
    pairs
        .par_iter()
        .map(|&(a, b)| {
            let mut best = (usize::MAX, usize::MAX, f64::INFINITY);
            for &i in &members[a] {
                for &j in &members[b] {
                    let d2: f64 = rows[i]
                        .iter()
                        .zip(&rows[j])
                        .map(|(p, q)| (p - q) * (p - q))
                        .sum();
                    if d2 < best.2 {
                        best = (i, j, d2);
                    }
                }
            }
            (best.0, best.1, best.2.sqrt())
        })
        .collect()
}

/// out_i = min over (column c, offset d) in `through` of d + c_i (+∞ when `through` is
/// empty). Lanes of 16 outputs (four independent chains of 4-wide minima) are kept in
/// registers across all the columns, so `out` is written once; `if v < m` is `minpd`,
/// with no masked stores.
#[inline(always)]
fn min_plus(out: &mut [f64], through: &[(&[f64], f64)]) {
    const L: usize = 16;
    let n = out.len();
    let whole = n / L * L;
    for (i0, chunk) in (0..whole).step_by(L).zip(out.chunks_exact_mut(L)) {
        let mut m = [f64::INFINITY; L];
        for &(c, d) in through {
            let c = &c[i0..i0 + L];
            for l in 0..L {
                let v = d + c[l];
                m[l] = if v < m[l] { v } else { m[l] };
            }
        }
        chunk.copy_from_slice(&m);
    }
    for i in whole..n {
        out[i] = through
            .iter()
            .map(|&(c, d)| d + c[i])
            .fold(f64::INFINITY, |m, v| if v < m { v } else { m });
    }
}

/// Averages the Dijkstra output with its transpose in place (Dijkstra from i and from j
/// may round d(i, j) differently), so that it reads the same row- or column-major.
/// Tiled so that the transposed accesses stay in cache.
fn symmetrize_in_place(geo: &mut [f64], n: usize) {
    const T: usize = 64;
    for ib in (0..n).step_by(T) {
        for jb in (ib..n).step_by(T) {
            for i in ib..(ib + T).min(n) {
                for j in jb.max(i + 1)..(jb + T).min(n) {
                    let v = 0.5 * (geo[i * n + j] + geo[j * n + i]);
                    geo[i * n + j] = v;
                    geo[j * n + i] = v;
                }
            }
        }
    }
}

impl FittedIsomap {
    /// The parameters used.
    pub fn params(&self) -> &Isomap {
        &self.params
    }

    /// Indices (into the rows given to `fit`) of the points embedded.
    pub fn kept(&self) -> &[usize] {
        &self.kept
    }

    /// The fitted MDS core (eigenvalues, solver).
    pub fn core(&self) -> &Cmds {
        &self.core
    }

    /// Geodesic distances among the embedded training points (N×N, symmetric).
    pub fn geodesics(&self) -> MatRef<'_, f64> {
        self.geodesics.view()
    }

    /// Extends new points with the chosen strategy (maths §6). The residual is NaN
    /// (geodesic matrices are not Euclidean); `reconstruction_error`,
    /// `beta_minus_projection` and the objectives are reported.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        validate::columns("new points", new, self.x.ncols())?;
        validate::finite("new points", new)?;
        let n = self.core.n_train();
        let d = self.core.eigenvalues().len();
        // Rows are independent, so they may run in any order: in the order of their
        // nearest training point along a Morton curve of the embedding, neighbouring new
        // points read the same geodesic columns while those are still in cache.
        let (idx, dist) = knn(new, self.x.view(), self.params.n_neighbors, false);
        let perm = self.locality_order(&idx);
        let idx: Vec<Vec<usize>> = perm.iter().map(|&i| idx[i].clone()).collect();
        let dist: Vec<Vec<f64>> = perm.iter().map(|&i| dist[i].clone()).collect();
        // The chunks of `new` only give the row ranges; the neighbour lists (in `perm`
        // order) are all the rows are needed for.
        let ext = by_chunks(new, n, d, |start, z| {
            let end = start + z.nrows();
            let rows = self.geodesic_rows(&idx[start..end], &dist[start..end]);
            self.core
                .extend_block(rows.as_ref(), &vec![0.0; z.nrows()], strategy)
        })?;
        Ok(ext.unpermuted(&perm))
    }

    /// A permutation of new points (given their neighbour lists, nearest first) that
    /// puts points with nearby nearest training points (in the embedding) together.
    fn locality_order(&self, nn: &[Vec<usize>]) -> Vec<usize> {
        let m = nn.len();
        if m < 2 {
            return (0..m).collect();
        }
        let e = self.core.embedding();
        let cols = e.ncols().min(2);
        let range: Vec<(f64, f64)> = (0..cols)
            .map(|j| {
                let c = e.col(j);
                let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, (hi - lo).max(f64::MIN_POSITIVE))
            })
            .collect();
        let key = |i: usize| -> u64 {
            let q = |j: usize| -> u64 {
                let (lo, w) = range[j];
                (((e[(nn[i][0], j)] - lo) / w * 65535.0).clamp(0.0, 65535.0)) as u64
            };
            let (a, b) = (q(0), if cols > 1 { q(1) } else { 0 });
            // Interleave the bits of a and b (Morton / Z-order).
            (0..16).fold(0u64, |acc, bit| {
                acc | (((a >> bit) & 1) << (2 * bit)) | (((b >> bit) & 1) << (2 * bit + 1))
            })
        };
        let mut perm: Vec<usize> = (0..m).collect();
        let keys: Vec<u64> = (0..m).map(key).collect();
        perm.sort_by_key(|&i| (keys[i], i));
        perm
    }

    /// Γ rows −½ d_G(z, xᵢ)² of new points (maths §6), with d_G through their k nearest
    /// training points `idx` at distances `dist`.
    fn geodesic_rows(&self, idx: &[Vec<usize>], dist: &[Vec<f64>]) -> Mat<f64> {
        let n = self.core.n_train();
        let g = self.geodesics.view();
        let m = idx.len();
        let mut rows = Mat::<f64>::zeros(m, n);
        // Blocks of B new points: their d_G rows are built contiguously (streaming
        // through columns of G), then written out so that each column of `rows` gets B
        // consecutive values — one cache line instead of B scattered writes.
        const B: usize = 8;
        let mut best = vec![f64::INFINITY; B * n];
        // Column j of the symmetric geodesic matrix = d_G(x_j, ·), contiguous.
        let column = |j: usize| -> &[f64] {
            g.col(j)
                .try_as_col_major()
                .expect("stored matrices are column-major")
                .as_slice()
        };
        let mut through: Vec<(&[f64], f64)> = Vec::new();
        crate::linalg::simd::vectorized(
            #[inline(always)]
            || {
                for r0 in (0..m).step_by(B) {
                    let bs = B.min(m - r0);
                    for rr in 0..bs {
                        through.clear();
                        through.extend(
                            idx[r0 + rr]
                                .iter()
                                .zip(&dist[r0 + rr])
                                .map(|(&j, &dj)| (column(j), dj)),
                        );
                        min_plus(&mut best[rr * n..(rr + 1) * n], &through);
                    }
                    for i in 0..n {
                        let col = rows.col_as_slice_mut(i);
                        for rr in 0..bs {
                            let b = best[rr * n + i];
                            col[r0 + rr] = -0.5 * b * b;
                        }
                    }
                }
            },
        );
        rows
    }

    /// Γ rows of new points: −½ squared geodesics through their k nearest training
    /// points.
    fn gamma_rows(&self, z: MatRef<'_, f64>) -> Mat<f64> {
        let (idx, dist) = knn(z, self.x.view(), self.params.n_neighbors, false);
        self.geodesic_rows(&idx, &dist)
    }

    /// Joint restricted reconstruction of the rows of `new`. Their mutual geodesics run
    /// through the training graph: d_G(z_p, z_q) = min over the k nearest training
    /// points a of z_p and b of z_q of ||z_p − a|| + d_G(a, b) + ||b − z_q||.
    pub fn extend_joint(&self, new: MatRef<'_, f64>) -> Result<Joint> {
        self.core.joint_of_points(new, self.x.ncols(), |z| {
            let (idx, dist) = knn(z, self.x.view(), self.params.n_neighbors, false);
            let g = self.geodesics.view();
            let k = z.nrows();
            let mutual = Mat::from_fn(k, k, |p, q| {
                if p == q {
                    return 0.0;
                }
                let mut best = f64::INFINITY;
                for (&a, &da) in idx[p].iter().zip(&dist[p]) {
                    for (&b, &db) in idx[q].iter().zip(&dist[q]) {
                        best = best.min(da + g[(a, b)] + db);
                    }
                }
                -0.5 * best * best
            });
            (self.geodesic_rows(&idx, &dist), mutual)
        })
    }

    /// `steps + 1` points of the arc from projection to restricted reconstruction for
    /// each new point: `(point, λ, y)`.
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        self.core
            .arc_of_points(new, self.x.ncols(), steps, |z| self.gamma_rows(z))
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let n = self.core.n_train();
        let k = self.params.n_neighbors;
        self.core.is_consistent()
            && (1..n).contains(&k)
            && self.x.nrows() == n
            && self.kept.len() == n
            && self.geodesics.is_shape(n, n)
    }
}

impl OutOfSample for FittedIsomap {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.core.embedding()
    }

    /// Projection (use [`FittedIsomap::extend_with`] for restricted reconstruction).
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_with(new, Strategy::Projection)
    }

    fn input_width(&self) -> usize {
        self.x.ncols()
    }
}

impl Method for Isomap {
    type Fitted = FittedIsomap;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &[
        N_COMPONENTS,
        ParamSpec::new(
            "n_neighbors",
            "knn",
            Kind::Int,
            "Nearest neighbours k of the graph and of the extension (one ≥ N is lowered to N − 1, with a warning).",
        ),
        SOLVER,
        ParamSpec::new(
            "largest_component",
            "largest-component",
            Kind::Bool,
            "Embed the largest connected component of a disconnected graph (default: join \
             the components at their closest points, with a warning).",
        ),
        RANK_TOLERANCE,
    ];

    crate::params_as_data!(Isomap {
        n_components,
        n_neighbors,
        solver,
        largest_component,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        vec![
            Configuration::exact("knn-8", Values::new().with("n_neighbors", 8usize))
                .with_restricted(),
            Configuration::exact(
                "cosine",
                Values::new()
                    .with("n_neighbors", 8usize)
                    .with("metric", "cosine"),
            )
            .with_restricted(),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedIsomap> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

crate::inner_product_computing_mutual!(FittedIsomap, Isomap);

impl Fitted for FittedIsomap {
    crate::fitted_basics!(points: x, warnings: warnings);

    crate::cmds_family_extension!(Isomap);

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = &self.params;
        v.push(("n_neighbors".into(), p.n_neighbors.to_string()));
        v.push(("largest_component".into(), p.largest_component.to_string()));
        v.push(("n_embedded".into(), self.kept.len().to_string()));
        cmds_info(&self.core, v, false);
    }

    fn kept(&self) -> Option<&[usize]> {
        Some(&self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn min_plus_is_the_minimum_over_the_columns() {
        let mut r = Rng::new(5);
        // Lengths around the 16-wide lanes, with and without a tail.
        for n in [0, 1, 15, 16, 17, 40] {
            let cols: Vec<Vec<f64>> = (0..3)
                .map(|_| (0..n).map(|_| r.normal().abs()).collect())
                .collect();
            let offsets = [0.5, 0.0, 2.0];
            let through: Vec<(&[f64], f64)> = cols
                .iter()
                .zip(offsets)
                .map(|(c, d)| (c.as_slice(), d))
                .collect();
            let mut out = vec![f64::NAN; n];
            crate::linalg::simd::vectorized(
                #[inline(always)]
                || min_plus(&mut out, &through),
            );
            for i in 0..n {
                let want = (0..3)
                    .map(|c| offsets[c] + cols[c][i])
                    .fold(f64::INFINITY, f64::min);
                assert_eq!(out[i], want, "n = {n}, i = {i}");
            }
            let mut none = vec![0.0; n];
            min_plus(&mut none, &[]);
            assert!(none.iter().all(|v| *v == f64::INFINITY));
        }
    }
}
