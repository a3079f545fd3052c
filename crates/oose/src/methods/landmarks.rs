//! Landmark choices shared by Landmark MDS and the Nyström fit of kernel PCA (maths §6,
//! §11): random, max–min (farthest point) and P-greedy (largest power function first).
//! For large N the choice runs on a uniform random sample of the rows
//! ([`SAMPLE`] by default), so its cost does not grow with N.

use crate::kernel::distance::row_sq_norms;
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::{factorize, PivotedCholesky};
use crate::rng::Rng;
use faer::{MatRef, Par};
use serde::{Deserialize, Serialize};

/// Rows a landmark choice looks at by default when N is larger.
pub const SAMPLE: usize = 10_000;

/// How landmarks are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Landmarks {
    /// n distinct points uniformly at random (seeded).
    Random,
    /// Max–min: a random first landmark, then repeatedly the point farthest from the
    /// landmarks chosen so far (spreads landmarks over the data).
    #[default]
    MaxMin,
    /// P-greedy (De Marchi–Schaback–Wendland): repeatedly the point whose power
    /// function P_P(x)² = k(x, x) − k(x, P) K_PP⁻¹ k(P, x) is largest, i.e. the pivots
    /// of the pivoted Cholesky factorisation of the kernel matrix (maths §21). Stops
    /// early when every power function is below the rank tolerance: more landmarks
    /// would add nothing the arithmetic can resolve.
    PGreedy,
}

crate::model::params::named!(Landmarks, "landmarks":
    Random => "random",
    MaxMin => "max-min",
    PGreedy => "p-greedy",
);

impl Landmarks {
    /// Chooses up to `n` distinct rows of `x`, in the order chosen. `kernel` (resolved,
    /// positive definite) and the relative tolerance `tol` are P-greedy's; the others
    /// ignore them. Only P-greedy may return fewer than `min(n, N)` rows (see
    /// [`Landmarks::PGreedy`]).
    pub fn choose(
        self,
        x: MatRef<'_, f64>,
        n: usize,
        kernel: Kernel,
        tol: f64,
        rng: &mut Rng,
    ) -> Vec<usize> {
        let n = n.min(x.nrows());
        match self {
            Landmarks::Random => rng.sample_indices(x.nrows(), n),
            Landmarks::MaxMin => max_min(x, n, rng),
            Landmarks::PGreedy => p_greedy(x, n, kernel, tol).pivots,
        }
    }
}

/// Max–min landmark indices: the first at random, then farthest-point.
pub(crate) fn max_min(x: MatRef<'_, f64>, n: usize, rng: &mut Rng) -> Vec<usize> {
    let big_n = x.nrows();
    let mut chosen = vec![rng.below(big_n)];
    let mut nearest = vec![f64::INFINITY; big_n];
    while chosen.len() < n {
        let last = *chosen.last().expect("non-empty");
        let mut best = (0usize, -1.0f64);
        for (i, d) in nearest.iter_mut().enumerate() {
            let d2: f64 = (0..x.ncols())
                .map(|c| {
                    let t = x[(i, c)] - x[(last, c)];
                    t * t
                })
                .sum();
            if d2 < *d {
                *d = d2;
            }
            if *d > best.1 {
                best = (i, *d);
            }
        }
        if best.1 <= 0.0 {
            break; // every point coincides with a landmark
        }
        chosen.push(best.0);
    }
    chosen
}

/// P-greedy: the pivots of the pivoted Cholesky factorisation of `kernel` on the rows
/// of `x` (at most `n`, stopping at the relative tolerance `tol`), with their factor.
/// N·n kernel values and O(N n²) flops.
pub(crate) fn p_greedy(x: MatRef<'_, f64>, n: usize, kernel: Kernel, tol: f64) -> PivotedCholesky {
    let x_sq = row_sq_norms(x);
    let diag: Vec<f64> = x_sq.iter().map(|&s| kernel.diag_value(s)).collect();
    factorize(diag, tol, n, |p, out| {
        let c = kernel.block(x, &x_sq, x.subrows(p, 1), &x_sq[p..=p], Par::Seq);
        out.copy_from_slice(c.col_as_slice(0));
        out[p] = kernel.diag_value(x_sq[p]);
    })
    .chol
}
