//! UMAP's parameters: the initialisation and `optimize` start choices, the parameter
//! specs (umap-learn's names) and the registry's `Method` implementation.

use super::{FittedUmap, Umap};
use crate::error::Result;
use crate::model::method::{points_only, Configuration, Input, Method, Registered};
use crate::model::params::{Kind, ParamSpec, Value, Values};
use crate::model::specs::{N_COMPONENTS, SEED, TRANSFORM_SEARCH};
use serde::{Deserialize, Serialize};

/// The starting embedding of the SGD.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum UmapInit {
    /// Laplacian eigenmaps of the fuzzy graph, component by component (maths §13).
    #[default]
    Spectral,
    /// Uniform in [−10, 10]^d, from the seed.
    Random,
}

crate::model::params::named!(UmapInit, "init": Spectral => "spectral", Random => "random");

/// Where the `optimize` extension starts a new point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum OptimizeStart {
    /// The membership-weighted mean of its neighbours' positions (umap-learn's).
    #[default]
    WeightedMean,
    /// Its `interpolation` position.
    Interpolation,
}

crate::model::params::named!(OptimizeStart, "optimize_start":
    WeightedMean => "weighted-mean" | "weighted_mean",
    Interpolation => "interpolation",
);

crate::model::params::param_specs! {
    N_NEIGHBORS: "n_neighbors", "n-neighbors", Kind::Int,
        "Neighbours per point, the point itself included.";
    MIN_DIST: "min_dist", "min-dist", Kind::Float,
        "Smallest distance between embedded points (≤ spread).";
    SPREAD: "spread", "spread", Kind::Float, "Scale of the embedded points.";
    N_EPOCHS: "n_epochs", "n-epochs", Kind::Int,
        "SGD epochs (unset: 500 up to 10000 points, else 200); optimize runs a third of them \
        (unset: 100 up to 10000 points, else 30, as umap-learn's transform).", optional;
    LEARNING_RATE: "learning_rate", "learning-rate", Kind::Float,
        "Initial SGD step, decaying linearly to 0 (optimize: a quarter of it).";
    NEGATIVE_SAMPLE_RATE: "negative_sample_rate", "negative-sample-rate", Kind::Int,
        "Negative samples per positive sample.";
    REPULSION_STRENGTH: "repulsion_strength", "repulsion-strength", Kind::Float,
        "Weight of the repulsive term.";
    INIT: "init", "init", Kind::Choice(UmapInit::NAMES),
        "Starting embedding: spectral (Laplacian eigenmaps of the fuzzy graph) or random.";
    TRANSFORM_NEIGHBORS: "transform_neighbors", "transform-neighbors", Kind::Int,
        "Training neighbours a new point is placed from by interpolation (their weighted median).";
    OPTIMIZE_START: "optimize_start", "optimize-start", Kind::Choice(&["weighted-mean", "interpolation"]),
        "Where optimize starts a new point: the membership-weighted mean of its neighbours' \
        positions (umap-learn's) or its interpolation.";
    NEIGHBORS: "neighbors", "neighbors", Kind::Choice(&["auto", "exact", "approximate"]),
        "The kNN graph: exact, approximate (NN-descent; its recall on a sample is in the model \
        info) or auto (approximate from 20000 points in more than 16 dimensions).";
}

impl Method for Umap {
    type Fitted = FittedUmap;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &[
        N_COMPONENTS,
        N_NEIGHBORS,
        MIN_DIST,
        SPREAD,
        N_EPOCHS,
        LEARNING_RATE,
        NEGATIVE_SAMPLE_RATE,
        REPULSION_STRENGTH,
        INIT,
        SEED,
        TRANSFORM_NEIGHBORS,
        OPTIMIZE_START,
        NEIGHBORS,
        TRANSFORM_SEARCH,
    ];

    crate::params_as_data!(Umap {
        n_components,
        n_neighbors,
        min_dist,
        spread,
        n_epochs,
        learning_rate,
        negative_sample_rate,
        repulsion_strength,
        init,
        seed,
        transform_neighbors,
        optimize_start,
        neighbors,
        transform_search
    });

    fn configurations() -> Vec<Configuration> {
        // Small fits (8 neighbours, 60 epochs), each with its own parameters.
        let small = |name, own: &[(&str, Value)]| {
            let mut v = Values::new()
                .with("n_neighbors", 8usize)
                .with("n_epochs", 60usize);
            for (param, value) in own {
                v.set(param, value.clone());
            }
            Configuration::exact(name, v)
        };
        vec![
            Configuration::exact(
                "spectral",
                Values::new()
                    .with("n_neighbors", 10usize)
                    .with("n_epochs", 100usize),
            ),
            small(
                "random-init",
                &[("init", "random".into()), ("min_dist", 0.3.into())],
            ),
            small("correlation", &[("metric", "correlation".into())]),
            // New points' neighbours by inverted lists (maths §6), as from 20000 points.
            small(
                "lists-search",
                &[("transform_search", "approximate".into())],
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedUmap> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}
