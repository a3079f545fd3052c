//! Landmark choices shared by Landmark MDS and the Nyström fit of kernel PCA (maths §6,
//! §11): random, max–min (farthest point) and P-greedy (largest power function first).
//! For large N the choice runs on a uniform random sample of the rows
//! ([`SAMPLE`] by default), so its cost does not grow with N.

use crate::error::Result;
use crate::kernel::distance::sq_distances_in_order;
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::PivotedCholesky;
use crate::rng::Rng;
use faer::MatRef;
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
    /// [`Landmarks::PGreedy`]), and only P-greedy fails: on a row whose k(x, x)
    /// overflowed, named ([`crate::Error::Overflow`]).
    pub fn choose(
        self,
        x: MatRef<'_, f64>,
        n: usize,
        kernel: Kernel,
        tol: f64,
        rng: &mut Rng,
    ) -> Result<Vec<usize>> {
        let n = n.min(x.nrows());
        Ok(match self {
            Landmarks::Random => rng.sample_indices(x.nrows(), n),
            Landmarks::MaxMin => max_min(x, n, rng),
            Landmarks::PGreedy => p_greedy(x, n, kernel, tol)?.pivots,
        })
    }
}

/// Max–min landmark indices: the first at random, then farthest-point (ties to the
/// lowest index). Each step measures the last landmark's squared distance to every
/// point, Σ (xᵢ − l)² in coordinate order (`sq_distances_in_order`), on a row-major
/// copy, in parallel over blocks of points; the choice does not depend on the threads.
pub(crate) fn max_min(x: MatRef<'_, f64>, n: usize, rng: &mut Rng) -> Vec<usize> {
    use rayon::prelude::*;
    const BLOCK: usize = crate::kernel::distance::DISTANCE_BLOCK;
    let (big_n, dim) = (x.nrows(), x.ncols());
    let rows = crate::linalg::row_major(x);
    let mut chosen = vec![rng.below(big_n)];
    if dim == 0 {
        return chosen; // every point coincides with the first
    }
    let mut nearest = vec![f64::INFINITY; big_n];
    while chosen.len() < n {
        let last = *chosen.last().expect("non-empty");
        let l = &rows[last * dim..(last + 1) * dim];
        nearest.par_chunks_mut(BLOCK).enumerate().for_each_init(
            || (Vec::new(), Vec::new()),
            |(tile, pack), (b, near)| {
                let pts = &rows[b * BLOCK * dim..(b * BLOCK + near.len()) * dim];
                tile.resize(near.len(), 0.0);
                sq_distances_in_order(l, pts, dim, tile, pack);
                for (d, &d2) in near.iter_mut().zip(tile.iter()) {
                    if d2 < *d {
                        *d = d2;
                    }
                }
            },
        );
        let mut best = (0usize, -1.0f64);
        for (i, &d) in nearest.iter().enumerate() {
            if d > best.1 {
                best = (i, d);
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
pub(crate) fn p_greedy(
    x: MatRef<'_, f64>,
    n: usize,
    kernel: Kernel,
    tol: f64,
) -> Result<PivotedCholesky> {
    Ok(kernel.pivoted_factor(x, tol, n)?.chol)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The farthest-point choice is the plain one (each distance summed in coordinate
    /// order, ties to the lowest index), over blocks of points and 256 coordinates,
    /// with duplicate rows (ties) and a stop when every point is a landmark's copy.
    #[test]
    fn max_min_is_the_plain_farthest_point_choice() {
        let plain = |x: MatRef<'_, f64>, n: usize, first: usize| {
            let mut chosen = vec![first];
            let mut nearest = vec![f64::INFINITY; x.nrows()];
            while chosen.len() < n {
                let last = *chosen.last().unwrap();
                let mut best = (0usize, -1.0f64);
                for (i, d) in nearest.iter_mut().enumerate() {
                    let mut d2 = 0.0;
                    for c in 0..x.ncols() {
                        let t = x[(i, c)] - x[(last, c)];
                        d2 += t * t;
                    }
                    *d = d.min(d2);
                    if *d > best.1 {
                        best = (i, *d);
                    }
                }
                if best.1 <= 0.0 {
                    break;
                }
                chosen.push(best.0);
            }
            chosen
        };
        for (rows, dim, n) in [(700, 3, 40), (300, 300, 25), (12, 5, 12)] {
            let x = faer::Mat::from_fn(rows, dim, |i, j| {
                // Rows repeat with period 97 (ties), and the last 12 rows' case has
                // 4 distinct rows only (the choice stops early).
                let i = if rows == 12 { i % 4 } else { i % 97 };
                ((i * 13 + j * 7) as f64 * 0.71).sin() * (1 + j % 3) as f64
            });
            let got = max_min(x.as_ref(), n, &mut Rng::new(3));
            let want = plain(x.as_ref(), n, Rng::new(3).below(rows));
            assert_eq!(got, want, "{rows}×{dim}");
            if rows == 12 {
                assert_eq!(got.len(), 4);
            }
        }
    }
}
