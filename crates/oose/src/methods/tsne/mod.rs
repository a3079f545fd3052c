//! t-SNE (maths §12) with an out-of-sample extension that is exact on the training
//! points.
//!
//! - `affinities`: perplexity calibration by bisection and the symmetric P.
//! - `gradient`: the KL gradient by the exact sum, Barnes–Hut or (`fft`) FFT-accelerated
//!   interpolation.
//! - `optimise`: scikit-learn's schedule (PCA initialisation, early exaggeration,
//!   momentum, gains, learning rate `auto`).
//! - the `interpolation` extension (`crate::extend::local`, shared with UMAP): a new
//!   point is placed at the inverse-distance weighted geometric median of its nearest
//!   training points' positions. It is exact on the training points, sample-wise, and
//!   comes with the local power function as a per-point reliability.
//! - `transform`: the `optimize` extension (openTSNE's transform, sample-wise).
//! - `fft`: the repulsive forces by FFT-accelerated interpolation.
//! - `params`: the gradient and initialisation choices, parameter specs, `Method`.

mod affinities;
mod fft;
mod field;
mod gradient;
mod optimise;
mod params;
mod transform;

pub use params::{TsneGradient, TsneInit};

use crate::diagnostics::novelty::{Novelty, Pending};
use crate::error::{Error, Result};
use crate::extend::{local, Extension, Strategy};
use crate::linalg::sparse::SymCsr;
use crate::linalg::stored::StoredMat;
use crate::model::method::Fitted;
use crate::model::specs::{fmt_list, put_debug};
use crate::neighbors::{knn_graph, knn_stoppable, GraphMethod};
use crate::validate;
use faer::MatRef;
use serde::{Deserialize, Serialize};

/// The joint probabilities P of t-SNE (maths §12) from each point's neighbours `idx[i]`
/// and squared distances `sq[i]`: row i of P as `(column, value)` pairs sorted by column.
/// What `fit` uses; public so that P can be compared with other implementations.
///
/// ```
/// let idx = vec![vec![1, 2], vec![0, 2], vec![1, 0]];
/// let sq = vec![vec![1.0, 4.0], vec![1.0, 2.0], vec![2.0, 4.0]];
/// let p = oose::methods::tsne::joint_probabilities(&idx, &sq, 1.5).unwrap();
/// let total: f64 = p.iter().flatten().map(|e| e.1).sum();
/// assert!((total - 1.0).abs() < 1e-15);
/// ```
pub fn joint_probabilities(
    idx: &[Vec<usize>],
    sq: &[Vec<f64>],
    perplexity: f64,
) -> Result<Vec<Vec<(usize, f64)>>> {
    let n = idx.len();
    if sq.len() != n || idx.iter().zip(sq).any(|(a, b)| a.len() != b.len()) {
        return Err(Error::Shape {
            what: "neighbour distances",
            expected: "one distance per neighbour index".into(),
            got: "lists of other lengths".into(),
        });
    }
    if let Some(i) = idx.iter().position(|r| r.iter().any(|&j| j >= n)) {
        return Err(Error::param(
            "indices",
            format!("row {i} names a point beyond the {n} given"),
        ));
    }
    validate::positive("perplexity", perplexity)?;
    let (p, _) = affinities::joint(idx, sq, perplexity);
    Ok((0..n)
        .map(|i| {
            (p.offsets[i]..p.offsets[i + 1])
                .map(|e| (p.cols[e] as usize, p.vals[e]))
                .collect()
        })
        .collect())
}

/// t-SNE (maths §12), with scikit-learn's defaults.
///
/// ```
/// use oose::methods::tsne::Tsne;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::three_d_clusters(150, 3, 1).points;
/// let m = Tsne { perplexity: 10.0, max_iter: 300, ..Default::default() }.fit(x.as_ref()).unwrap();
/// assert_eq!(m.embedding().ncols(), 2);
/// // Training points are placed exactly where the fit put them.
/// let e = m.extend(x.as_ref().subrows(4, 2)).unwrap();
/// assert_eq!(e.coordinates[(1, 0)], m.embedding()[(5, 0)]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tsne {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Perplexity (default 30): about the number of neighbours each point attends to.
    pub perplexity: f64,
    /// Factor on P for the first 250 iterations (default 12).
    pub early_exaggeration: f64,
    /// Step size; `None` (default) is scikit-learn's `auto`: max(N / exaggeration / 4, 50).
    pub learning_rate: Option<f64>,
    /// Iterations in all, the early-exaggeration phase included (default 1000).
    pub max_iter: usize,
    /// Opening angle θ of Barnes–Hut (default 0.5).
    pub angle: f64,
    /// How the repulsive forces are summed (default `auto`: FFT from 10000 points).
    pub method: TsneGradient,
    /// The starting embedding (default PCA).
    pub init: TsneInit,
    /// Seed of the random initialisation (default 0).
    pub seed: u64,
    /// Training neighbours a new point is placed from (default 5).
    pub transform_neighbors: usize,
    /// How the kNN graph of P is found (default `auto`: exact below 100000 points).
    pub neighbors: GraphMethod,
    /// How new points' nearest training points are found (default `auto`: inverted
    /// lists from 20000 training points in more than 16 dimensions).
    pub transform_search: GraphMethod,
}

impl Default for Tsne {
    fn default() -> Self {
        Tsne {
            n_components: 2,
            perplexity: 30.0,
            early_exaggeration: 12.0,
            learning_rate: None,
            max_iter: 1000,
            angle: 0.5,
            method: TsneGradient::Auto,
            init: TsneInit::Pca,
            seed: 0,
            transform_neighbors: 5,
            neighbors: GraphMethod::Auto,
            transform_search: GraphMethod::Auto,
        }
    }
}

impl Tsne {
    /// The neighbours per point of P: min(N − 1, ⌊3·perplexity⌋ + 1).
    pub fn n_neighbors(&self, n: usize) -> usize {
        n.saturating_sub(1)
            .min((3.0 * self.perplexity).floor() as usize + 1)
    }

    fn check(&self, n: usize) -> Result<()> {
        let bad = |name: &'static str, why: String| Err(Error::param(name, why));
        validate::enough_points("perplexity", "t-SNE", n, 2)?;
        if !(self.perplexity > 0.0 && self.perplexity.is_finite()) || self.perplexity >= n as f64 {
            return bad(
                "perplexity",
                format!(
                    "must be > 0 and below the number of points ({n}), got {}",
                    self.perplexity
                ),
            );
        }
        validate::at_least_one("n_components", self.n_components)?;
        let method = self.method.resolve(n, self.n_components);
        if method == TsneGradient::BarnesHut && self.n_components > 3 {
            return bad(
                "n_components",
                format!(
                    "Barnes–Hut works in 1 to 3 dimensions, got {}; use method = exact",
                    self.n_components
                ),
            );
        }
        if method == TsneGradient::Fft && self.n_components > 2 {
            return bad(
                "n_components",
                format!(
                    "the FFT gradient works in 1 or 2 dimensions, got {}; use method = \
                     barnes-hut or exact",
                    self.n_components
                ),
            );
        }
        if !(self.early_exaggeration >= 1.0 && self.early_exaggeration.is_finite()) {
            return bad(
                "early_exaggeration",
                format!("must be ≥ 1, got {}", self.early_exaggeration),
            );
        }
        if let Some(l) = self.learning_rate {
            validate::positive("learning_rate", l)?;
        }
        validate::at_least_one("max_iter", self.max_iter)?;
        if !(0.0..=1.0).contains(&self.angle) {
            return bad("angle", format!("must be in [0, 1], got {}", self.angle));
        }
        validate::count("transform_neighbors", self.transform_neighbors, n, "N")?;
        Ok(())
    }

    /// P from the kNN graph (an error if all points coincide).
    fn joint(&self, x: MatRef<'_, f64>, graph: &crate::neighbors::Neighbours) -> Result<SymCsr> {
        let (idx, dist) = graph;
        let sq: Vec<Vec<f64>> = dist
            .iter()
            .map(|r| r.iter().map(|d| d * d).collect())
            .collect();
        if sq.iter().flatten().all(|d| *d == 0.0) {
            let k = idx.first().map_or(0, Vec::len);
            return Err(validate::no_distances(x, "t-SNE", k, "perplexity", |c| {
                // k = ⌊3·perplexity⌋ + 1 reaches past c − 1 copies (rounded up to 0.01).
                let p = ((c - 1) as f64 / 3.0 * 100.0).ceil() / 100.0;
                format!("give a perplexity of at least {p}")
            }));
        }
        Ok(affinities::joint(idx, &sq, self.perplexity).0)
    }

    /// The relative errors of the Barnes–Hut (θ = `angle`) and FFT repulsive forces
    /// along the exact descent, every iteration: ‖g − g_exact‖ / ‖r_exact‖ with r the
    /// repulsive term 4 F_rep / Z of the gradient (the attractive term is the same in
    /// all three). What the benchmark reports (d ≤ 2; `method` is ignored).
    #[doc(hidden)]
    pub fn gradient_errors(&self, x: MatRef<'_, f64>) -> Result<Vec<(usize, f64, f64)>> {
        validate::training_points("training data", x)?;
        let n = x.nrows();
        let exact = Tsne {
            method: TsneGradient::Exact,
            ..self.clone()
        };
        exact.check(n)?;
        let d = self.n_components;
        if d > 2 {
            return Err(Error::param("n_components", "the FFT gradient needs d ≤ 2"));
        }
        let graph = knn_graph(x, self.n_neighbors(n), self.neighbors, self.seed)?;
        let p = self.joint(x, &graph.neighbours)?;
        let mut out = Vec::new();
        let mut pool = fft::Pool::default();
        optimise::run_observed(&exact, x, &p, &mut |it, y, exaggeration, g| {
            let repulsive =
                gradient::gradient(&p, y, d, 0.0, gradient::Repulsion::Exact, false, &mut pool);
            let den: f64 = repulsive.grad.iter().map(|b| b * b).sum();
            let rel = |a: &[f64]| {
                let num: f64 = a.iter().zip(g).map(|(u, v)| (u - v) * (u - v)).sum();
                (num / den).sqrt()
            };
            let bh = gradient::gradient(
                &p,
                y,
                d,
                exaggeration,
                gradient::Repulsion::BarnesHut(self.angle),
                false,
                &mut pool,
            );
            let ff = gradient::gradient(
                &p,
                y,
                d,
                exaggeration,
                gradient::Repulsion::Fft,
                false,
                &mut pool,
            );
            out.push((it + 1, rel(&bh.grad), rel(&ff.grad)));
        })?;
        Ok(out)
    }

    /// Fits on the rows of `x` (N×D).
    /// `perplexity` ≥ N (from 2 points) is lowered to (N − 1)/3 with a fit warning, as
    /// openTSNE does, and `transform_neighbors` > N to N; the model records the values
    /// used.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedTsne> {
        validate::training_points("training data", x)?;
        let n = x.nrows();
        let mut p = self.clone();
        let mut notes = Vec::new();
        if n >= 2 && self.perplexity.is_finite() && self.perplexity >= n as f64 {
            p.perplexity = (n - 1) as f64 / 3.0;
            notes.push(format!(
                "perplexity = {} is not below the number of points ({n}): lowered to \
                 (N − 1)/3 = {} (as openTSNE does)",
                self.perplexity, p.perplexity
            ));
        }
        crate::neighbors::lower_transform_neighbors(&mut p.transform_neighbors, n, &mut notes);
        p.fit_noting(x, notes)
    }

    fn fit_noting(&self, x: MatRef<'_, f64>, mut warnings: Vec<String>) -> Result<FittedTsne> {
        let n = x.nrows();
        self.check(n)?;
        let k = self.n_neighbors(n);
        let graph = knn_graph(x, k, self.neighbors, self.seed)?;
        let dist = &graph.neighbours.1;
        let p = self.joint(x, &graph.neighbours)?;
        let kt = self.transform_neighbors.min(n - 1).max(1);
        let reliability_epsilon = if kt <= k {
            local::training_scale(dist, kt)
        } else {
            local::training_scale(&knn_stoppable(x, x, kt, true)?.1, kt)
        };
        let index = local::KnnIndex::new(x, &graph, self.transform_search);
        let fit_novelty = Pending::new(Novelty::from_graph(x, &graph.neighbours.0, dist));
        let fit = optimise::run(self, x, &p)?;
        warnings.extend(fit.notes);
        Ok(FittedTsne {
            params: self.clone(),
            x: StoredMat::from_mat(x),
            embedding: StoredMat::from_mat(fit.embedding.as_ref()),
            n_neighbors: k,
            learning_rate: fit.learning_rate,
            kl: fit.kl,
            reliability_epsilon,
            index,
            fit_novelty,
            warnings: crate::model::method::Transient(warnings),
            reference: Default::default(),
        })
    }
}

/// A fitted t-SNE.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedTsne {
    params: Tsne,
    x: StoredMat,
    embedding: StoredMat,
    /// Neighbours per point in P.
    n_neighbors: usize,
    /// The learning rate used (`auto` resolved).
    learning_rate: f64,
    /// (iteration, KL(P‖Q)) every 50 iterations and at the end.
    kl: Vec<(usize, f64)>,
    /// ε₀ of the reliability (the local power function at the training data's scale).
    reliability_epsilon: f64,
    /// The kNN graph's method and recall, and the search for new points.
    index: local::KnnIndex,
    /// The novelty score from the fit's kNN graph, for the model (not stored).
    #[serde(skip)]
    fit_novelty: Pending,
    /// The fit's warnings (perplexity lowered), not stored.
    #[serde(skip)]
    warnings: crate::model::method::Transient<Vec<String>>,
    /// The reference of `optimize` (the repulsion's field and tree), built on its first
    /// call and kept in memory, not stored.
    #[serde(skip)]
    reference: crate::model::method::Transient<std::sync::OnceLock<transform::Reference>>,
}

impl FittedTsne {
    /// Parameters as given.
    pub fn params(&self) -> &Tsne {
        &self.params
    }

    /// KL(P‖Q) at the end of the fit.
    pub fn kl_divergence(&self) -> f64 {
        self.kl.last().map_or(f64::NAN, |k| k.1)
    }

    /// (iteration, KL(P‖Q)) every 50 iterations and at the end (the divergence from
    /// the true P, also during early exaggeration).
    pub fn kl_history(&self) -> &[(usize, f64)] {
        &self.kl
    }

    /// The training neighbours a strategy needs per new point.
    fn neighbours_for(&self, strategy: Strategy) -> usize {
        let kt = self.params.transform_neighbors;
        if strategy == Strategy::Optimize {
            kt.max(transform::neighbours(self.x.nrows()))
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
        near: Option<&crate::neighbors::Neighbours>,
        diagnostics: bool,
    ) -> Result<Extension> {
        let y = self.embedding.view();
        let (nbrs, start) = self.interpolated(new, strategy, near, diagnostics)?;
        Ok(if strategy == Strategy::Optimize {
            let reference = self
                .reference
                .0
                .get_or_init(|| transform::Reference::new(y));
            transform::optimize(reference, &nbrs, start)
        } else {
            start
        })
    }

    fn is_consistent(&self) -> bool {
        let n = self.x.nrows();
        self.embedding.is_shape(n, self.params.n_components)
            && self.reliability_epsilon > 0.0
            && self.index.is_consistent(n, self.x.ncols())
            && self.params.transform_neighbors >= 1
            && self.params.transform_neighbors <= n
    }
}

crate::neighbour_embedding_fitted!(out_of_sample FittedTsne);

impl Fitted for FittedTsne {
    crate::neighbour_embedding_fitted!(Tsne);

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("tsne_neighbors".into(), self.n_neighbors.to_string()));
        self.index.info(v);
        let gradient = self
            .params
            .method
            .resolve(self.x.nrows(), self.params.n_components);
        v.push(("gradient_method".into(), gradient.name().into()));
        let iterations = self.kl.last().map_or(0, |k| k.0);
        v.push(("iterations".into(), iterations.to_string()));
        put_debug(v, "learning_rate_used", self.learning_rate);
        put_debug(v, "kl_divergence", self.kl_divergence());
        put_debug(v, "reliability_epsilon", self.reliability_epsilon);
        let hist: Vec<f64> = self.kl.iter().map(|k| k.1).collect();
        v.push(("kl_every_50".into(), fmt_list(&hist)));
    }
}
