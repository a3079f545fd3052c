//! Parameters shared by several methods (one description each) and the formatting of
//! `info` values.

use super::params::Kind;
use crate::linalg::eigen::Solver;

crate::model::params::param_specs! {
    /// Embedding dimension d.
    pub N_COMPONENTS: "n_components", "components", Kind::Int, "Embedding dimension d.";

    /// Relative tolerance of eigenvalues and pivots.
    pub RANK_TOLERANCE: "rank_tolerance", "rank-tolerance", Kind::Float,
        "Relative tolerance below which eigenvalues and pivots count as zero.";

    /// The eigensolver.
    pub SOLVER: "solver", "solver", Kind::Choice(Solver::NAMES),
        "Eigensolver (`auto` chooses by size and kernel; the one used is in `info`).";

    /// The seed of random choices.
    pub SEED: "seed", "seed", Kind::Int,
        "Seed of random choices (results are deterministic given it).";

    /// How a neighbour embedding (t-SNE, UMAP) finds new points' nearest training points.
    pub TRANSFORM_SEARCH: "transform_search", "transform-search", Kind::Choice(crate::neighbors::GraphMethod::NAMES),
        "How new points' nearest training points are found: exact, approximate (inverted \
        lists; training points still found exactly) or auto (approximate from 20000 \
        training points in more than 16 dimensions).";
}

/// A list of floats as `info` prints it (shortest round-trip form, comma-separated).
pub(crate) fn fmt_list(xs: &[f64]) -> String {
    xs.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// An `info` line whose value is `x` in its `Debug` form (floats: shortest round trip).
pub(crate) fn put_debug(v: &mut Vec<(String, String)>, name: &str, x: impl std::fmt::Debug) {
    v.push((name.into(), format!("{x:?}")));
}

/// `solver` and `solver_note` lines of `info`.
pub(crate) fn solver_info(v: &mut Vec<(String, String)>, used: (Solver, Option<&str>)) {
    v.push(("solver".into(), used.0.name().into()));
    if let Some(n) = used.1 {
        v.push(("solver_note".into(), n.into()));
    }
}
