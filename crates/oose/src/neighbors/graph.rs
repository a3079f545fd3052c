//! The kNN graph of a training set, exact or approximate, with what a model reports of
//! it (maths §6): the method used and, for the approximate one, its recall measured on a
//! sample against the exact neighbours.

use super::{knn_brute, knn_descent, recall, Descent, Neighbours};
use crate::rng::Rng;
use faer::MatRef;
use serde::{Deserialize, Serialize};

/// Points from which `auto` takes the approximate graph: below, the exact brute force
/// (GEMM tiles) is about as fast (60000 × 50 with k = 91: 8.7 s exact on 2 cores).
pub const APPROXIMATE_FROM: usize = 100_000;
/// Training points from which `auto` answers new points' neighbour queries by inverted
/// lists ([`super::TrainingSearch`]): one exact query costs N distances, the lists a few
/// thousand, measured for many queries at once.
pub const APPROXIMATE_QUERIES_FROM: usize = 20_000;
/// Points whose exact neighbours measure an approximate graph's recall.
const RECALL_SAMPLE: usize = 500;

/// How a kNN graph is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum GraphMethod {
    /// Exact below [`APPROXIMATE_FROM`] points or in ≤ 16 dimensions (kd-tree), else
    /// approximate.
    #[default]
    Auto,
    /// The exact neighbours (kd-tree in ≤ 16 dimensions, GEMM brute force above).
    Exact,
    /// NN-descent ([`knn_descent`]).
    Approximate,
}

crate::model::params::named!(GraphMethod, "neighbors":
    Auto => "auto",
    Exact => "exact",
    Approximate => "approximate" | "nn-descent",
);

impl GraphMethod {
    /// What `Auto` means for `n` points in `dim` dimensions.
    ///
    /// ```
    /// use oose::neighbors::GraphMethod;
    /// assert_eq!(GraphMethod::Auto.resolve(60_000, 50), GraphMethod::Exact);
    /// assert_eq!(GraphMethod::Auto.resolve(500_000, 50), GraphMethod::Approximate);
    /// assert_eq!(GraphMethod::Auto.resolve(500_000, 3), GraphMethod::Exact);
    /// ```
    pub fn resolve(self, n: usize, dim: usize) -> GraphMethod {
        self.resolve_from(n, dim, APPROXIMATE_FROM)
    }

    /// What `Auto` means for `n` points in `dim` dimensions when the approximate graph
    /// starts at `from` points (a method's own threshold: UMAP's graph, like umap-learn's,
    /// is approximate from fewer points than t-SNE's, which needs 3·perplexity + 1
    /// neighbours per point and for which the exact brute force stays cheaper longer).
    ///
    /// ```
    /// use oose::neighbors::GraphMethod;
    /// assert_eq!(GraphMethod::Auto.resolve_from(60_000, 50, 20_000), GraphMethod::Approximate);
    /// assert_eq!(GraphMethod::Exact.resolve_from(60_000, 50, 20_000), GraphMethod::Exact);
    /// ```
    pub fn resolve_from(self, n: usize, dim: usize, from: usize) -> GraphMethod {
        match self {
            GraphMethod::Auto if n >= from && dim > super::kdtree::MAX_DIM => {
                GraphMethod::Approximate
            }
            GraphMethod::Auto => GraphMethod::Exact,
            other => other,
        }
    }

    /// What `Auto` means for queries against `n` training points in `dim` dimensions.
    ///
    /// ```
    /// use oose::neighbors::GraphMethod;
    /// assert_eq!(GraphMethod::Auto.resolve_queries(60_000, 50), GraphMethod::Approximate);
    /// assert_eq!(GraphMethod::Auto.resolve_queries(5_000, 50), GraphMethod::Exact);
    /// ```
    pub fn resolve_queries(self, n: usize, dim: usize) -> GraphMethod {
        self.resolve_from(n, dim, APPROXIMATE_QUERIES_FROM)
    }
}

/// A kNN graph and how it was made.
#[derive(Clone, Debug)]
pub struct KnnGraph {
    /// Neighbour indices and distances, nearest first (a point never lists itself).
    pub neighbours: Neighbours,
    /// `Exact` or `Approximate`.
    pub method: GraphMethod,
    /// The fraction of true neighbours found, measured on up to 500 sampled points
    /// (1 for the exact graph).
    pub recall: f64,
}

/// The k nearest other rows of every row of `x` by `method` (`seed`: the approximate
/// graph's trees and its recall sample). The exact search stops on request
/// ([`crate::progress::request_stop`]: [`Error::Interrupted`](crate::Error::Interrupted));
/// the approximate one ends its rounds early and leaves the caller to check.
///
/// ```
/// use oose::neighbors::{knn_graph, GraphMethod};
/// let x = oose::datasets::swiss_roll(400, 0.0, false, 1).points;
/// let g = knn_graph(x.as_ref(), 10, GraphMethod::Approximate, 0).unwrap();
/// assert!(g.recall > 0.95);
/// ```
pub fn knn_graph(
    x: MatRef<'_, f64>,
    k: usize,
    method: GraphMethod,
    seed: u64,
) -> crate::error::Result<KnnGraph> {
    let (n, dim) = (x.nrows(), x.ncols());
    match method.resolve(n, dim) {
        GraphMethod::Approximate => {
            let neighbours = knn_descent(
                x,
                k,
                &Descent {
                    seed,
                    ..Descent::for_k(k)
                },
            );
            let recall = sampled_recall(x, &neighbours.0, k, seed);
            Ok(KnnGraph {
                neighbours,
                method: GraphMethod::Approximate,
                recall,
            })
        }
        _ => Ok(KnnGraph {
            neighbours: super::knn_stoppable(x, x, k, true)?,
            method: GraphMethod::Exact,
            recall: 1.0,
        }),
    }
}

/// The recall of `approx` on a sample of rows, against their exact neighbours.
fn sampled_recall(x: MatRef<'_, f64>, approx: &[Vec<usize>], k: usize, seed: u64) -> f64 {
    let n = x.nrows();
    let m = RECALL_SAMPLE.min(n);
    let mut rows = Rng::new(seed ^ 0x5EED_0F2E_C4A1).sample_indices(n, m);
    rows.sort_unstable();
    let q = faer::Mat::from_fn(m, x.ncols(), |i, c| x[(rows[i], c)]);
    let (exact, _) = knn_brute(q.as_ref(), x, k + 1, false);
    let exact: Vec<Vec<usize>> = exact
        .into_iter()
        .zip(&rows)
        .map(|(r, &i)| r.into_iter().filter(|&j| j != i).take(k).collect())
        .collect();
    let picked: Vec<Vec<usize>> = rows.iter().map(|&i| approx[i].clone()).collect();
    recall(&picked, &exact)
}
