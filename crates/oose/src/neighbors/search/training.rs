//! The search for new points' nearest training points that a fitted model keeps
//! (maths §6): exact, inverted lists (from format 9), or the graph walk of a file
//! written before format 9.

use super::inverted::{InvertedIndex, Lists};
use super::GraphIndex;
use crate::neighbors::{GraphMethod, Neighbours};
use faer::MatRef;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Neighbours per training point a [`TrainingSearch`] keeps for its walk.
pub const SEARCH_DEGREE: usize = 15;

/// The search for new points' nearest training points that a fitted model keeps: exact,
/// or approximate by inverted lists (maths §6, from format 9), or — in a model
/// written before format 9 — by a walk on its training kNN graph (the first
/// [`SEARCH_DEGREE`] neighbours of each point). Only the lists (or the graph's lists)
/// are stored; the search's index is built on first use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingSearch {
    /// The first neighbours of every training point, row after row (a model written
    /// before format 9 with approximate search; else empty).
    graph: Vec<u32>,
    #[serde(skip)]
    index: IndexCache,
    /// The inverted lists (approximate search from format 9; else empty).
    #[serde(default, deserialize_with = "crate::model::added_in::<9, _, _>")]
    lists: Lists,
    #[serde(skip)]
    inverted: crate::model::method::Cache<OnceLock<InvertedIndex>>,
}

/// The walk's index: no part of a model's value, built on first use.
type IndexCache = crate::model::method::Cache<OnceLock<GraphIndex>>;

impl TrainingSearch {
    /// Exact search when `method` resolves to exact for the training points `x`
    /// (`GraphMethod::resolve_queries`), else inverted lists of them.
    pub fn new(method: GraphMethod, x: MatRef<'_, f64>) -> Self {
        if method.resolve_queries(x.nrows(), x.ncols()) != GraphMethod::Approximate {
            return TrainingSearch::default();
        }
        TrainingSearch {
            lists: Lists::new(&crate::linalg::row_major(x), x.ncols()),
            ..TrainingSearch::default()
        }
    }

    /// Whether new points are searched exactly.
    pub fn is_exact(&self) -> bool {
        self.graph.is_empty() && self.lists.is_empty()
    }

    /// "C lists, p probed" where new points are searched by inverted lists.
    pub fn lists(&self) -> Option<String> {
        self.lists.describe()
    }

    /// `exact` or `approximate`.
    pub fn name(&self) -> &'static str {
        if self.is_exact() {
            "exact"
        } else {
            "approximate"
        }
    }

    /// The k nearest rows of `x` (the training points) for every row of `new`; `seed`
    /// draws the walk's starting points (a model written before format 9).
    pub fn search(
        &self,
        x: MatRef<'_, f64>,
        new: MatRef<'_, f64>,
        k: usize,
        seed: u64,
    ) -> Neighbours {
        if !self.lists.is_empty() {
            let index = self.inverted.0.get_or_init(|| {
                InvertedIndex::new(crate::linalg::row_major(x), x.ncols(), &self.lists)
            });
            return index.search(new, k);
        }
        if self.is_exact() {
            return crate::neighbors::knn(new, x, k, false);
        }
        let index = self.index.0.get_or_init(|| {
            let g = self.graph.len() / x.nrows();
            GraphIndex::from_lists(x, |i| &self.graph[i * g..(i + 1) * g], seed)
        });
        index.search(new, k)
    }

    /// The training points row after row, where the search's index has been built (its
    /// copy of the rows; a row is contiguous there, and recently searched rows are in
    /// cache).
    pub(crate) fn row_major(&self) -> Option<&[f64]> {
        if let Some(i) = self.inverted.0.get() {
            return Some(i.rows());
        }
        self.index.0.get().map(|g| g.x.as_slice())
    }

    /// Whether the stored lists fit `n` training points of width `dim`.
    pub fn is_consistent(&self, n: usize, dim: usize) -> bool {
        let graph = self.graph.is_empty()
            || (n > 0
                && self.graph.len().is_multiple_of(n)
                && self.graph.len() >= n
                && self.graph.iter().all(|&j| (j as usize) < n));
        let lists = self.lists.is_empty() || self.lists.is_consistent(n, dim);
        graph && lists && (self.graph.is_empty() || self.lists.is_empty())
    }
}
