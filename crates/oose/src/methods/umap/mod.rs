//! UMAP (maths §13) with two out-of-sample extensions and an inverse transform.
//!
//! - `fuzzy`: each point's ρ and σ, the fuzzy union of the memberships, a and b.
//! - `layout`: the spectral initialisation (Laplacian eigenmaps of the fuzzy graph, one
//!   connected component at a time) and the SGD with negative sampling, deterministic
//!   whatever the thread count.
//! - `params`: the parameter specs and the registry's `Method`.
//!
//! The extensions never modify the model and are sample-wise:
//! - `interpolation` (default): the inverse-distance weighted geometric median of the
//!   nearest training points' positions (`crate::extend::local`, shared with t-SNE), exact
//!   on training points, with the local power function as the reliability;
//! - `optimize`: umap-learn's transform, the SGD moving the new point only against the
//!   fixed reference, its negative samples drawn from a generator seeded by the model's
//!   seed and the row's own bytes.
//!
//! [`FittedUmap::inverse_transform`] maps embedding coordinates back to the input space by
//! local kernel interpolation with its power function per point.

mod fuzzy;
mod layout;
mod params;
mod power;

pub use params::{OptimizeStart, UmapInit};

use crate::diagnostics::novelty::{Novelty, Pending};
use crate::error::{Error, Result};
use crate::extend::{local, Extension, Strategy};
use crate::linalg::sparse::SymCsr;
use crate::linalg::stored::StoredMat;
use crate::model::method::Fitted;
use crate::neighbors::{knn_graph, knn_stoppable, row_hash, GraphMethod, Neighbours};
use crate::validate;
use faer::{Mat, MatRef};
use layout::{Curve, Sgd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// `neighbors = auto` builds the graph by NN-descent from this many points in more than
/// 16 dimensions. umap-learn does from 4096 points; at 60000 × 50 with k = 14 NN-descent
/// takes 2.6 s at recall 0.994 against 6.9 s exact.
const APPROXIMATE_GRAPH_FROM: usize = 20_000;

/// a and b of UMAP's low-dimensional similarity 1 / (1 + a r^{2b}), fitted by least
/// squares to min_dist and spread (maths §13).
///
/// ```
/// let (a, b) = oose::methods::umap::curve(1.0, 0.1);
/// assert!((a - 1.577).abs() < 1e-3 && (b - 0.895).abs() < 1e-3);
/// ```
pub fn curve(spread: f64, min_dist: f64) -> (f64, f64) {
    fuzzy::fit_ab(spread, min_dist)
}

/// UMAP (maths §13), with umap-learn's defaults and parameter names.
///
/// ```
/// use oose::methods::umap::Umap;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::three_d_clusters(150, 3, 1).points;
/// let m = Umap { n_neighbors: 10, n_epochs: Some(100), ..Default::default() }
///     .fit(x.as_ref())
///     .unwrap();
/// assert_eq!(m.embedding().ncols(), 2);
/// // Training points are placed exactly where the fit put them.
/// let e = m.extend(x.as_ref().subrows(4, 2)).unwrap();
/// assert_eq!(e.coordinates[(1, 0)], m.embedding()[(5, 0)]);
/// // And the inverse transform takes the embedding back to the training points.
/// let back = m.inverse_transform(m.embedding().subrows(7, 1)).unwrap();
/// assert_eq!(back.coordinates[(0, 2)], x[(7, 2)]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Umap {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Neighbours per point, the point itself included (default 15).
    pub n_neighbors: usize,
    /// Smallest distance between embedded points (default 0.1).
    pub min_dist: f64,
    /// Scale of the embedded points (default 1).
    pub spread: f64,
    /// SGD epochs; `None` (default): 500 up to 10000 points, else 200.
    pub n_epochs: Option<usize>,
    /// Initial SGD step (default 1), decaying linearly to 0.
    pub learning_rate: f64,
    /// Negative samples per positive sample (default 5).
    pub negative_sample_rate: usize,
    /// Weight γ of the repulsive term (default 1).
    pub repulsion_strength: f64,
    /// The starting embedding (default spectral).
    pub init: UmapInit,
    /// Seed of the initialisation noise and of the negative samples (default 0).
    pub seed: u64,
    /// Training neighbours a new point is placed from by `interpolation` (default 5).
    pub transform_neighbors: usize,
    /// Where `optimize` starts a new point (default: umap-learn's weighted mean).
    pub optimize_start: OptimizeStart,
    /// How the kNN graph is found (default `auto`: NN-descent from 20000 points in more
    /// than 16 dimensions, else exact).
    pub neighbors: GraphMethod,
    /// How new points' nearest training points are found (default `auto`: inverted lists
    /// from 20000 training points in more than 16 dimensions).
    pub transform_search: GraphMethod,
}

impl Default for Umap {
    fn default() -> Self {
        Umap {
            n_components: 2,
            n_neighbors: 15,
            min_dist: 0.1,
            spread: 1.0,
            n_epochs: None,
            learning_rate: 1.0,
            negative_sample_rate: 5,
            repulsion_strength: 1.0,
            init: UmapInit::Spectral,
            seed: 0,
            transform_neighbors: 5,
            optimize_start: OptimizeStart::WeightedMean,
            neighbors: GraphMethod::Auto,
            transform_search: GraphMethod::Auto,
        }
    }
}

impl Umap {
    /// Epochs of the fit for `n` points: `n_epochs`, or 500 up to 10000 points, else 200.
    pub fn epochs(&self, n: usize) -> usize {
        self.n_epochs.unwrap_or(if n <= 10_000 { 500 } else { 200 })
    }

    fn check(&self, n: usize) -> Result<()> {
        let bad = |name: &'static str, why: String| Err(Error::param(name, why));
        validate::enough_points("n_neighbors", "UMAP", n, 3)?;
        validate::below_points("n_neighbors", self.n_neighbors, 2, n)?;
        validate::below_points("n_components", self.n_components, 1, n)?;
        validate::positive("spread", self.spread)?;
        if !(self.min_dist >= 0.0 && self.min_dist <= self.spread) {
            return bad(
                "min_dist",
                format!(
                    "must be between 0 and spread = {}, got {}",
                    self.spread, self.min_dist
                ),
            );
        }
        if let Some(epochs) = self.n_epochs {
            validate::at_least_one("n_epochs", epochs)?;
        }
        validate::positive("learning_rate", self.learning_rate)?;
        validate::at_least_one("negative_sample_rate", self.negative_sample_rate)?;
        validate::non_negative("repulsion_strength", self.repulsion_strength)?;
        validate::count("transform_neighbors", self.transform_neighbors, n, "N")?;
        Ok(())
    }

    /// Fits on the rows of `x` (N×D). `n_neighbors` ≥ N (from 2 points) is lowered
    /// to N − 1 with a fit warning, as umap-learn does, and `transform_neighbors` > N
    /// to N; the model records the values used.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedUmap> {
        validate::training_points("training data", x)?;
        let n = x.nrows();
        let mut p = self.clone();
        let mut notes = Vec::new();
        if let Some((used, note)) = crate::neighbors::lowered(p.n_neighbors, n) {
            p.n_neighbors = used;
            notes.push(note);
        }
        crate::neighbors::lower_transform_neighbors(&mut p.transform_neighbors, n, &mut notes);
        p.fit_noting(x, notes)
    }

    fn fit_noting(&self, x: MatRef<'_, f64>, warnings: Vec<String>) -> Result<FittedUmap> {
        let n = x.nrows();
        self.check(n)?;
        let k = self.n_neighbors - 1;
        let method = self
            .neighbors
            .resolve_from(n, x.ncols(), APPROXIMATE_GRAPH_FROM);
        let graph = knn_graph(x, k, method, self.seed)?;
        crate::progress::check()?;
        let (idx, dist) = &graph.neighbours;
        if dist.iter().flatten().all(|&v| v == 0.0) {
            return Err(validate::no_distances(x, "UMAP", k, "n_neighbors", |c| {
                format!("give n_neighbors above {c}")
            }));
        }
        let mean_distance = fuzzy::mean_distance(dist);
        let mut w = fuzzy::fuzzy_union(idx, dist, self.n_neighbors, mean_distance);
        let epochs = self.epochs(n);
        prune(&mut w, epochs);
        let d = self.n_components;
        let (mut y, init) = match self.init {
            // The eigensolvers split their work by the number of threads, which moves
            // the last bits of the eigenvectors; the SGD would amplify that. One thread
            // keeps the fit the same bits whatever the pool.
            UmapInit::Spectral => match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
                Ok(pool) => pool.install(|| layout::spectral(&w, x, d, self.seed)),
                Err(_) => layout::spectral(&w, x, d, self.seed),
            },
            UmapInit::Random => {
                let mut rng = crate::rng::Rng::new(self.seed);
                let y = (0..n * d).map(|_| 20.0 * rng.uniform() - 10.0).collect();
                (y, layout::InitReport::default())
            }
        };
        let (a, b) = fuzzy::fit_ab(self.spread, self.min_dist);
        let sgd = Sgd {
            curve: Curve { a, b },
            epochs,
            learning_rate: self.learning_rate,
            negative_sample_rate: self.negative_sample_rate as f64,
            repulsion: self.repulsion_strength,
            seed: self.seed,
        };
        layout::optimise(&mut y, d, &w, &sgd, &|e| {
            if e % 20 == 0 || e == epochs {
                crate::progress::report(|| format!("UMAP epoch {e}/{epochs}"));
            }
        });
        crate::progress::check()?;
        let embedding = Mat::from_fn(n, d, |i, c| y[i * d + c]);
        let kt = self.transform_neighbors.min(n - 1).max(1);
        let reliability_epsilon = if kt <= k {
            local::training_scale(dist, kt)
        } else {
            local::training_scale(&knn_stoppable(x, x, kt, true)?.1, kt)
        };
        let inverse_epsilon = local::preimage_scale(embedding.as_ref());
        let index = local::KnnIndex::new(x, &graph, self.transform_search);
        let fit_novelty = Pending::new(Novelty::from_graph(x, idx, dist));
        Ok(FittedUmap {
            params: self.clone(),
            x: StoredMat::from_mat(x),
            embedding: StoredMat::from_mat(embedding.as_ref()),
            a,
            b,
            epochs,
            edges: w.nnz(),
            mean_distance,
            components: init.components,
            random_components: init.random_components,
            init_note: init.note,
            reliability_epsilon,
            inverse_epsilon,
            index,
            fit_novelty,
            warnings: crate::model::method::Transient(warnings),
        })
    }
}

/// Drops the edges below max/epochs (they would never be sampled), keeping symmetry.
fn prune(w: &mut SymCsr, epochs: usize) {
    let max = w.vals.iter().copied().fold(0.0, f64::max);
    let floor = max / epochs as f64;
    let rows: Vec<Vec<(u32, f64)>> = (0..w.n())
        .map(|i| {
            let (c, v) = w.row(i);
            c.iter()
                .zip(v)
                .filter(|(_, &t)| t >= floor)
                .map(|(&j, &t)| (j, t))
                .collect()
        })
        .collect();
    *w = SymCsr::from_rows(rows);
}

/// A fitted UMAP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedUmap {
    params: Umap,
    x: StoredMat,
    embedding: StoredMat,
    a: f64,
    b: f64,
    /// Epochs run.
    epochs: usize,
    /// Stored entries of the fuzzy graph after pruning (both directions).
    edges: usize,
    /// Mean neighbour distance over the training points (σ's floor when ρ = 0).
    mean_distance: f64,
    /// Connected components of the fuzzy graph.
    components: usize,
    /// Components the spectral initialisation placed at random.
    random_components: usize,
    /// Why a component was placed at random.
    init_note: Option<String>,
    /// ε₀ of the reliability (the local power function at the training data's scale).
    reliability_epsilon: f64,
    /// ε of the inverse transform (the training embedding's own scale).
    inverse_epsilon: f64,
    /// The kNN graph's method and recall, and the search for new points.
    index: local::KnnIndex,
    /// The novelty score from the fit's kNN graph, for the model (not stored).
    #[serde(skip)]
    fit_novelty: Pending,
    /// The fit's warnings (n_neighbors lowered), not stored.
    #[serde(skip)]
    warnings: crate::model::method::Transient<Vec<String>>,
}

impl FittedUmap {
    /// Parameters as given.
    pub fn params(&self) -> &Umap {
        &self.params
    }

    /// a and b of 1 / (1 + a r^{2b}).
    pub fn ab(&self) -> (f64, f64) {
        (self.a, self.b)
    }

    /// Epochs the fit ran.
    pub fn epochs(&self) -> usize {
        self.epochs
    }

    /// Connected components of the fuzzy graph.
    pub fn components(&self) -> usize {
        self.components
    }

    /// Epochs of `optimize` (umap-learn's transform): a third of `n_epochs` when it was
    /// given, else 100 up to 10000 training points and 30 above.
    pub fn transform_epochs(&self) -> usize {
        match self.params.n_epochs {
            Some(e) => (e / 3).max(1),
            None if self.x.nrows() <= 10_000 => 100,
            None => 30,
        }
    }

    fn neighbours_for(&self, strategy: Strategy) -> usize {
        let kt = self.params.transform_neighbors;
        if strategy == Strategy::Optimize {
            kt.max(self.params.n_neighbors.min(self.x.nrows()))
        } else {
            kt
        }
    }

    /// `interpolation` or `optimize` of the rows of `new`, from one neighbour search
    /// (`near`, when the caller has searched with at least as many neighbours); the
    /// interpolation's reliability columns only with `diagnostics`.
    fn place(
        &self,
        new: MatRef<'_, f64>,
        strategy: Strategy,
        near: Option<&Neighbours>,
        diagnostics: bool,
    ) -> Result<Extension> {
        let (nbrs, mut ext) = self.interpolated(new, strategy, near, diagnostics)?;
        if strategy == Strategy::Optimize {
            self.optimize(new, &nbrs, &mut ext);
        }
        Ok(ext)
    }

    /// umap-learn's transform, one row at a time (maths §13).
    fn optimize(&self, new: MatRef<'_, f64>, nbrs: &Neighbours, ext: &mut Extension) {
        let (n, d) = (self.x.nrows(), self.params.n_components);
        let kz = self.params.n_neighbors.min(n);
        let y = self.embedding.view();
        let sgd = Sgd {
            curve: Curve {
                a: self.a,
                b: self.b,
            },
            epochs: self.transform_epochs(),
            learning_rate: self.params.learning_rate / 4.0,
            negative_sample_rate: self.params.negative_sample_rate as f64,
            repulsion: self.params.repulsion_strength,
            seed: self.params.seed,
        };
        let target = (kz as f64).log2();
        let (idx, dist) = nbrs;
        let start = &ext.coordinates;
        let moved: Vec<Vec<f64>> = (0..new.nrows())
            .into_par_iter()
            .map(|r| {
                let (nb, ds) = (&idx[r][..kz], &dist[r][..kz]);
                let (rho, sigma) = fuzzy::smooth_distances(ds, kz, target, self.mean_distance);
                let v: Vec<f64> = ds
                    .iter()
                    .map(|&t| fuzzy::membership(t, rho, sigma))
                    .collect();
                let mut pos: Vec<f64> = match self.params.optimize_start {
                    OptimizeStart::Interpolation => (0..d).map(|c| start[(r, c)]).collect(),
                    OptimizeStart::WeightedMean => {
                        let total: f64 = v.iter().sum();
                        (0..d)
                            .map(|c| {
                                nb.iter().zip(&v).map(|(&j, w)| w * y[(j, c)]).sum::<f64>() / total
                            })
                            .collect()
                    }
                };
                let bits = row_hash((0..new.ncols()).map(|c| new[(r, c)]));
                let mut rng = layout::stream(self.params.seed, bits, 0x0F7E_5A3B);
                layout::optimise_point(&mut pos, y, nb, &v, &sgd, &mut rng);
                pos
            })
            .collect();
        for (r, pos) in moved.into_iter().enumerate() {
            for (c, v) in pos.into_iter().enumerate() {
                ext.coordinates[(r, c)] = v;
            }
        }
    }

    /// Maps embedding coordinates (rows of `embedded`, d columns) back to the input
    /// space by local kernel interpolation on their 10 nearest training embedding points
    /// (maths §13): a training embedding point returns its training point exactly.
    /// `residual` is the interpolation's power function, 0 on the training embedding and
    /// growing away from it (above 1 far away); `reconstruction_error` the distance to the
    /// nearest training embedding point in units of the embedding's neighbour scale.
    pub fn inverse_transform(&self, embedded: MatRef<'_, f64>) -> Result<Extension> {
        local::inverse(
            self.embedding.view(),
            self.x.view(),
            embedded,
            self.inverse_epsilon,
        )
    }

    fn is_consistent(&self) -> bool {
        let n = self.x.nrows();
        self.embedding.is_shape(n, self.params.n_components)
            && self.reliability_epsilon > 0.0
            && self.inverse_epsilon > 0.0
            && self.a > 0.0
            && self.b > 0.0
            && self.epochs >= 1
            && self.mean_distance >= 0.0
            && self.index.is_consistent(n, self.x.ncols())
            && self.params.check(n).is_ok()
    }
}

crate::neighbour_embedding_fitted!(out_of_sample FittedUmap);

impl Fitted for FittedUmap {
    crate::neighbour_embedding_fitted!(Umap);

    fn inverse(&self, embedded: MatRef<'_, f64>) -> Option<Result<Extension>> {
        Some(self.inverse_transform(embedded))
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("umap_neighbors".into(), self.params.n_neighbors.to_string()));
        self.index.info(v);
        let mut put = |k: &str, s: String| v.push((k.into(), s));
        put("a", format!("{:?}", self.a));
        put("b", format!("{:?}", self.b));
        put("epochs", self.epochs.to_string());
        put("graph_edges", (self.edges / 2).to_string());
        put("graph_components", self.components.to_string());
        let init = match (self.params.init, self.random_components) {
            (UmapInit::Random, _) => "random".to_string(),
            (_, 0) => "spectral".to_string(),
            (_, r) => format!("spectral ({r} components at random)"),
        };
        put("init_used", init);
        if let Some(note) = &self.init_note {
            put("init_note", note.clone());
        }
        put(
            "reliability_epsilon",
            format!("{:?}", self.reliability_epsilon),
        );
        put("inverse_epsilon", format!("{:?}", self.inverse_epsilon));
    }
}
