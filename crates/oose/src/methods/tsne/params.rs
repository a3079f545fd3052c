//! t-SNE's parameters: the gradient and initialisation choices, the parameter specs
//! and the registry's `Method` implementation.

use super::{FittedTsne, Tsne};
use crate::error::Result;
use crate::model::method::{points_only, Configuration, Input, Method, Registered};
use crate::model::params::{Kind, ParamSpec, Values};
use crate::model::specs::{N_COMPONENTS, SEED, TRANSFORM_SEARCH};
use serde::{Deserialize, Serialize};

/// Points from which `auto` sums the repulsion by FFT (below, Barnes–Hut is faster: the
/// grid, not the points, sets the FFT's cost; the FFT grid is also finer there, see
/// [`super::fft`]).
pub const FFT_FROM: usize = 10_000;

/// How the repulsive forces are summed during the fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum TsneGradient {
    /// Barnes–Hut on a 2^d-tree (d ≤ 3), opening angle `angle`.
    BarnesHut,
    /// The exact O(N²) sum (the reference; small N).
    Exact,
    /// FFT-accelerated interpolation (d ≤ 2; Linderman et al. 2019).
    Fft,
    /// FFT for N ≥ 10000 points and d ≤ 2, else Barnes–Hut (d ≤ 3: above, name `exact`).
    #[default]
    Auto,
}

impl TsneGradient {
    /// What `Auto` means for `n` points in `d` dimensions (other choices as they are).
    ///
    /// ```
    /// use oose::methods::tsne::TsneGradient;
    /// assert_eq!(TsneGradient::Auto.resolve(60000, 2), TsneGradient::Fft);
    /// assert_eq!(TsneGradient::Auto.resolve(5000, 2), TsneGradient::BarnesHut);
    /// assert_eq!(TsneGradient::Exact.resolve(60000, 2), TsneGradient::Exact);
    /// ```
    pub fn resolve(self, n: usize, d: usize) -> TsneGradient {
        match self {
            TsneGradient::Auto if n >= FFT_FROM && d <= 2 => TsneGradient::Fft,
            TsneGradient::Auto => TsneGradient::BarnesHut,
            other => other,
        }
    }
}

crate::model::params::named!(TsneGradient, "method":
    BarnesHut => "barnes-hut" | "barnes_hut",
    Exact => "exact",
    Fft => "fft",
    Auto => "auto",
);

/// The starting embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum TsneInit {
    /// Principal components, rescaled so that the first has standard deviation 1e-4.
    #[default]
    Pca,
    /// Gaussian with standard deviation 1e-4, from the seed.
    Random,
}

crate::model::params::named!(TsneInit, "init": Pca => "pca", Random => "random");

crate::model::params::param_specs! {
    PERPLEXITY: "perplexity", "perplexity", Kind::Float,
        "Perplexity: about the number of neighbours each point attends to.";
    EXAGGERATION: "early_exaggeration", "early-exaggeration", Kind::Float,
        "Factor on P during the first 250 iterations.";
    LEARNING_RATE: "learning_rate", "learning-rate", Kind::FloatOrName(&["auto"]),
        "Step size (`auto`: max(N / early_exaggeration / 4, 50)).", optional;
    MAX_ITER: "max_iter", "max-iter", Kind::Int,
        "Iterations in all, the early-exaggeration phase included.";
    ANGLE: "angle", "angle", Kind::Float, "Opening angle θ of Barnes–Hut.";
    GRADIENT: "method", "method", Kind::Choice(TsneGradient::NAMES),
        "How the repulsive forces are summed: auto (fft from 10000 points when d ≤ 2, else \
        barnes-hut), barnes-hut (d ≤ 3), fft (d ≤ 2) or exact (O(N²)).";
    INIT: "init", "init", Kind::Choice(TsneInit::NAMES),
        "Starting embedding: pca (rescaled to standard deviation 1e-4) or random.";
    NEIGHBORS: "neighbors", "neighbors", Kind::Choice(crate::neighbors::GraphMethod::NAMES),
        "The kNN graph of P: exact, approximate (NN-descent; its recall on a sample is in \
        the model info) or auto (approximate from 100000 points in more than 16 dimensions).";
    TRANSFORM_NEIGHBORS: "transform_neighbors", "transform-neighbors", Kind::Int,
        "Training neighbours a new point is placed from (their weighted median).";
}

impl Method for Tsne {
    type Fitted = FittedTsne;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &[
        N_COMPONENTS,
        PERPLEXITY,
        EXAGGERATION,
        LEARNING_RATE,
        MAX_ITER,
        ANGLE,
        GRADIENT,
        INIT,
        SEED,
        TRANSFORM_NEIGHBORS,
        NEIGHBORS,
        TRANSFORM_SEARCH,
    ];

    crate::params_as_data!(Tsne {
        n_components,
        perplexity,
        early_exaggeration,
        learning_rate,
        max_iter,
        angle,
        method,
        init,
        seed,
        transform_neighbors,
        neighbors,
        transform_search
    });

    fn configurations() -> Vec<Configuration> {
        vec![
            Configuration::exact(
                "barnes-hut",
                Values::new()
                    .with("perplexity", 10.0)
                    .with("max_iter", 300usize),
            ),
            Configuration::exact(
                "exact-random-init",
                Values::new()
                    .with("perplexity", 5.0)
                    .with("max_iter", 260usize)
                    .with("method", "exact")
                    .with("init", "random"),
            ),
            // New points' neighbours by inverted lists (maths §6), as from 20000 points.
            Configuration::exact(
                "lists-search",
                Values::new()
                    .with("perplexity", 10.0)
                    .with("max_iter", 260usize)
                    .with("transform_search", "approximate"),
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedTsne> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}
