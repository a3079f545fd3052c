//! The `optimize` extension of t-SNE (maths §12): openTSNE's transform made sample-wise.
//! For a new point z: p_{j|z} over its k = ⌊3·5⌋ + 1 = 16 nearest training points with
//! its own β_z (perplexity 5, the bisection of `affinities`); start at the interpolated
//! position; minimise z's own KL divergence against the fixed reference,
//!
//!   ∂C/∂y_z = 4 (Σⱼ p_{j|z} w_zj (y_z − yⱼ) − Σⱼ w_zj² (y_z − yⱼ) / Z_z),
//!
//! with Z_z = Σⱼ w_zj over the reference alone (openTSNE sums over the whole batch of new
//! points, which makes rows depend on each other). The repulsion comes from the
//! reference's field interpolated on a grid (d ≤ 2, [`Field`], as openTSNE's transform);
//! where a point is off that grid, or d = 3, from a Barnes–Hut tree of the reference
//! (θ = 0.5); above 3 dimensions, exactly. Field and tree are built on the first
//! `optimize` and kept with the model in memory ([`Reference`]). openTSNE's transform defaults:
//! 250 iterations, learning rate 0.1, momentum 0.8, gains as in the fit, gradient norm
//! clipped to 0.25. The reference is never changed; z's final KL is a diagnostic column.

// Coordinates are indexed across several arrays at once (position, gradient, update,
// gains): the index loop reads plainer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use super::affinities::conditional_row;
use super::field::Field;
use super::gradient::{exact_repulsion, Tree};
use crate::extend::{Column, Extension};
use crate::neighbors::Neighbours;
use faer::MatRef;
use rayon::prelude::*;

/// Perplexity of a new point's affinities (openTSNE's transform default).
pub(crate) const PERPLEXITY: f64 = 5.0;
const ITERATIONS: usize = 250;
const LEARNING_RATE: f64 = 0.1;
const MOMENTUM: f64 = 0.8;
const MAX_GRAD_NORM: f64 = 0.25;
const THETA: f64 = 0.5;

/// Training neighbours of a new point's affinities among `n`: ⌊3·5⌋ + 1, at most n.
pub(crate) fn neighbours(n: usize) -> usize {
    n.min((3.0 * PERPLEXITY).floor() as usize + 1)
}

/// The fixed reference a new point is optimised against: the training embedding, and
/// the field and tree of its repulsion.
#[derive(Clone, Debug)]
pub(crate) struct Reference {
    flat: Vec<f64>,
    d: usize,
    field: Option<Field>,
    tree: Option<Tree>,
}

impl Reference {
    /// The reference of the embedding `y` of the training points.
    pub(crate) fn new(y: MatRef<'_, f64>) -> Reference {
        let (n, d) = (y.nrows(), y.ncols());
        let flat: Vec<f64> = (0..n * d).map(|t| y[(t / d, t % d)]).collect();
        Reference {
            field: (d <= 2).then(|| Field::new(&flat, d)),
            tree: (d <= 3).then(|| Tree::build(&flat, d)),
            flat,
            d,
        }
    }

    /// Σⱼ w_zj, returned, and Σⱼ w_zj² (y_z − yⱼ) into `rep`, over the whole reference
    /// at `at`: from the field where it covers `at`, else Barnes–Hut where there is a
    /// tree, else exact.
    fn repulsion(&self, at: &[f64], rep: &mut [f64], stack: &mut Vec<usize>) -> f64 {
        if let Some(z) = self.field.as_ref().and_then(|f| f.at(at, rep)) {
            return z;
        }
        rep.iter_mut().for_each(|v| *v = 0.0);
        match &self.tree {
            Some(t) => t.repulsion(&self.flat, at, None, THETA, rep, stack),
            None => exact_repulsion(&self.flat, self.d, at, None, rep),
        }
    }
}

/// Optimises each row of `start` (the interpolated positions of new points) against the
/// training embedding held by `reference`; `nbrs` holds each new point's nearest
/// training points, at least [`neighbours`] of them (the first are used).
pub(crate) fn optimize(
    reference: &Reference,
    nbrs: &Neighbours,
    mut start: Extension,
) -> Extension {
    let (n, d) = (reference.flat.len() / reference.d, reference.d);
    let k = neighbours(n);
    let (idx, dist) = nbrs;
    let rows: Vec<(Vec<f64>, f64)> = (0..start.len())
        .into_par_iter()
        .map(|r| {
            let sq: Vec<f64> = dist[r][..k].iter().map(|v| v * v).collect();
            let (p, _) = conditional_row(&sq, PERPLEXITY);
            let y0: Vec<f64> = (0..d).map(|c| start.coordinates[(r, c)]).collect();
            one_point(reference, &idx[r][..k], &p, y0)
        })
        .collect();
    let mut kl = Vec::with_capacity(rows.len());
    for (r, (pos, k)) in rows.into_iter().enumerate() {
        for c in 0..d {
            start.coordinates[(r, c)] = pos[c];
        }
        kl.push(k);
    }
    start.extra.push(Column {
        name: "kl",
        values: kl,
    });
    start
}

/// The optimised position of one new point and its final KL divergence.
fn one_point(reference: &Reference, nb: &[usize], p: &[f64], mut pos: Vec<f64>) -> (Vec<f64>, f64) {
    let (flat, d) = (&reference.flat, reference.d);
    let mut update = vec![0.0; d];
    let mut gains = vec![1.0f64; d];
    let mut rep = vec![0.0; d];
    let mut grad = vec![0.0; d];
    let mut stack = Vec::new();
    for _ in 0..ITERATIONS {
        let zz = reference.repulsion(&pos, &mut rep, &mut stack);
        grad.iter_mut().for_each(|g| *g = 0.0);
        for (&j, &pj) in nb.iter().zip(p) {
            let yj = &flat[j * d..(j + 1) * d];
            let d2: f64 = pos.iter().zip(yj).map(|(a, b)| (a - b) * (a - b)).sum();
            let w = 1.0 / (1.0 + d2);
            for c in 0..d {
                grad[c] += pj * w * (pos[c] - yj[c]);
            }
        }
        for c in 0..d {
            grad[c] = 4.0 * (grad[c] - rep[c] / zz);
        }
        let norm = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
        if norm > MAX_GRAD_NORM {
            grad.iter_mut().for_each(|g| *g *= MAX_GRAD_NORM / norm);
        }
        for c in 0..d {
            if update[c] * grad[c] < 0.0 {
                gains[c] += 0.2;
            } else {
                gains[c] *= 0.8;
            }
            gains[c] = gains[c].max(0.01);
            update[c] = MOMENTUM * update[c] - LEARNING_RATE * gains[c] * grad[c];
            pos[c] += update[c];
        }
    }
    let zz = reference.repulsion(&pos, &mut rep, &mut stack);
    let mut kl = 0.0;
    for (&j, &pj) in nb.iter().zip(p) {
        if pj > 0.0 {
            let yj = &flat[j * d..(j + 1) * d];
            let d2: f64 = pos.iter().zip(yj).map(|(a, b)| (a - b) * (a - b)).sum();
            let q = 1.0 / (1.0 + d2) / zz;
            kl += pj * (pj / q).ln();
        }
    }
    (pos, kl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// On the grid the reference's repulsion is the field's, near the exact sums; off
    /// it, the tree's (θ = 0.5), near them too; in 3 dimensions the tree's, in 4 exact.
    #[test]
    fn the_reference_repulsion_is_near_the_exact_sums_on_and_off_the_grid() {
        let mut rng = Rng::new(4);
        for d in [2, 3, 4] {
            let y = faer::Mat::from_fn(1500, d, |_, _| 8.0 * rng.normal());
            let reference = Reference::new(y.as_ref());
            assert_eq!(reference.field.is_some(), d <= 2);
            assert_eq!(reference.tree.is_some(), d <= 3);
            let mut stack = Vec::new();
            // Inside the data's box, and far outside it (off any grid).
            for scale in [4.0, 1000.0] {
                let at: Vec<f64> = (0..d).map(|_| scale * rng.normal()).collect();
                let mut rep = vec![0.0; d];
                let z = reference.repulsion(&at, &mut rep, &mut stack);
                let mut exact = vec![0.0; d];
                let z_exact = exact_repulsion(&reference.flat, d, &at, None, &mut exact);
                let norm = exact.iter().map(|v| v * v).sum::<f64>().sqrt();
                let err = rep
                    .iter()
                    .zip(&exact)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>();
                assert!(
                    err.sqrt() <= 0.05 * norm,
                    "d = {d}, scale {scale}: {rep:?} vs {exact:?}"
                );
                assert!(
                    (z - z_exact).abs() <= 0.02 * z_exact,
                    "d = {d}: Z {z} vs {z_exact}"
                );
                if scale > 100.0 && d <= 2 {
                    let field = reference.field.as_ref().unwrap();
                    assert!(field.at(&at, &mut rep).is_none());
                }
            }
        }
    }
}
