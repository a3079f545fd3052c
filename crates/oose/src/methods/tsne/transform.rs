//! The `optimize` extension of t-SNE (maths §12): openTSNE's transform made sample-wise.
//! For a new point z: p_{j|z} over its k = ⌊3·5⌋ + 1 = 16 nearest training points with
//! its own β_z (perplexity 5, the bisection of `affinities`); start at the interpolated
//! position; minimise z's own KL divergence against the fixed reference,
//!
//!   ∂C/∂y_z = 4 (Σⱼ p_{j|z} w_zj (y_z − yⱼ) − Σⱼ w_zj² (y_z − yⱼ) / Z_z),
//!
//! with Z_z = Σⱼ w_zj over the reference alone (openTSNE sums over the whole batch of new
//! points, which makes rows depend on each other). The repulsion comes from a Barnes–Hut
//! tree of the reference (θ = 0.5) built once per call. openTSNE's transform defaults:
//! 250 iterations, learning rate 0.1, momentum 0.8, gains as in the fit, gradient norm
//! clipped to 0.25. The reference is never changed; z's final KL is a diagnostic column.

// Coordinates are indexed across several arrays at once (position, gradient, update,
// gains): the index loop reads plainer than zipped iterators.
#![allow(clippy::needless_range_loop)]

use super::affinities::conditional_row;
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

/// Optimises each row of `start` (the interpolated positions of new points) against the
/// embedding `y` of the training points; `nbrs` holds each new point's nearest training
/// points, at least [`neighbours`] of them (the first are used).
pub(crate) fn optimize(y: MatRef<'_, f64>, nbrs: &Neighbours, mut start: Extension) -> Extension {
    let (n, d) = (y.nrows(), y.ncols());
    let flat: Vec<f64> = (0..n * d).map(|t| y[(t / d, t % d)]).collect();
    let tree = (d <= 3).then(|| Tree::build(&flat, d));
    let k = neighbours(n);
    let (idx, dist) = nbrs;
    let rows: Vec<(Vec<f64>, f64)> = (0..start.len())
        .into_par_iter()
        .map(|r| {
            let sq: Vec<f64> = dist[r][..k].iter().map(|v| v * v).collect();
            let (p, _) = conditional_row(&sq, PERPLEXITY);
            let y0: Vec<f64> = (0..d).map(|c| start.coordinates[(r, c)]).collect();
            one_point(&flat, d, tree.as_ref(), &idx[r][..k], &p, y0)
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

/// Σⱼ w_zj and Σⱼ w_zj² (y_z − yⱼ) over the whole reference at `at` (Barnes–Hut where
/// there is a tree, else exact).
fn repulsion(
    flat: &[f64],
    d: usize,
    tree: Option<&Tree>,
    at: &[f64],
    rep: &mut [f64],
    stack: &mut Vec<usize>,
) -> f64 {
    rep.iter_mut().for_each(|v| *v = 0.0);
    match tree {
        Some(t) => t.repulsion(flat, at, None, THETA, rep, stack),
        None => exact_repulsion(flat, d, at, None, rep),
    }
}

/// The optimised position of one new point and its final KL divergence.
fn one_point(
    flat: &[f64],
    d: usize,
    tree: Option<&Tree>,
    nb: &[usize],
    p: &[f64],
    mut pos: Vec<f64>,
) -> (Vec<f64>, f64) {
    let mut update = vec![0.0; d];
    let mut gains = vec![1.0f64; d];
    let mut rep = vec![0.0; d];
    let mut grad = vec![0.0; d];
    let mut stack = Vec::new();
    for _ in 0..ITERATIONS {
        let zz = repulsion(flat, d, tree, &pos, &mut rep, &mut stack);
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
    let zz = repulsion(flat, d, tree, &pos, &mut rep, &mut stack);
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
