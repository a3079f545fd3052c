//! Exact kNN with a kd-tree (kiddo's immutable tree) for data of dimension ≤ 16.
//!
//! kiddo fixes the dimension at compile time; `knn_tree` dispatches on the runtime
//! dimension to one instantiation per dimension 1..=16.

use super::{stopping, Neighbours, Query};
use faer::MatRef;
use kiddo::immutable::float::kdtree::ImmutableKdTree;
use kiddo::SquaredEuclidean;
use rayon::prelude::*;
use std::num::NonZero;

/// Largest dimension served by the kd-tree.
pub const MAX_DIM: usize = 16;

fn rows<const K: usize>(x: MatRef<'_, f64>) -> Vec<[f64; K]> {
    (0..x.nrows())
        .map(|i| std::array::from_fn(|j| x[(i, j)]))
        .collect()
}

fn knn_k<const K: usize>(query: Query<'_>) -> Neighbours {
    let Query {
        queries,
        points,
        k,
        exclude_self,
        stoppable,
    } = query;
    let pts = rows::<K>(points);
    let tree: ImmutableKdTree<f64, u32, K, 32> = ImmutableKdTree::new_from_slice(&pts);
    let qs = rows::<K>(queries);
    let want = (k + usize::from(exclude_self)).min(pts.len());
    let per: Vec<(Vec<usize>, Vec<f64>)> = qs
        .par_iter()
        .enumerate()
        .map(|(i, q)| {
            let Some(want) = NonZero::new(want) else {
                return (Vec::new(), Vec::new());
            };
            if stopping(stoppable) {
                return (Vec::new(), Vec::new());
            }
            let mut found: Vec<(f64, usize)> = tree
                .nearest_n::<SquaredEuclidean>(q, want)
                .into_iter()
                .map(|nb| (nb.distance, nb.item as usize))
                .collect();
            if exclude_self {
                match found.iter().position(|f| f.1 == i) {
                    Some(p) => {
                        found.remove(p);
                    }
                    None => {
                        found.pop();
                    }
                }
            }
            found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            found.truncate(k);
            (
                found.iter().map(|f| f.1).collect(),
                found.iter().map(|f| f.0.sqrt()).collect(),
            )
        })
        .collect();
    per.into_iter().unzip()
}

/// kNN by kd-tree; `points.ncols()` must be in 1..=16.
pub(crate) fn knn_tree(query: Query<'_>) -> Neighbours {
    macro_rules! dispatch {
        ($($d:literal)*) => {
            match query.points.ncols() {
                $($d => knn_k::<$d>(query),)*
                d => unreachable!("kd-tree dimension {d} outside 1..=16"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}
