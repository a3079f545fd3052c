//! The direction part of the novelty score (maths §18): how far a point's direction
//! from the training mean μ is from the directions of the training points near it.
//!
//! With û = (z − μ)/‖z − μ‖ (0 at μ) and, among the [`CANDIDATES`] nearest training
//! points of z (Euclidean), the k whose directions are nearest to û:
//!
//! ```text
//! c(z)  = mean over those k of ‖û − û_j‖            chord distance on the unit sphere
//! c_j   = the same of training point j, among its nearest *others* (leave-one-out)
//! cs(z) = c(z) · sqrt(c̃ / mean c_j over those k),   c̃ = median_j c_j
//! ```
//!
//! and the novelty score is the weighted geometric mean (s_E(z)² · R · cs(z))^⅓ of the
//! Euclidean score s_E (`novelty/mod.rs`) and cs, the latter turned into the data's units by
//! R = median_j ‖x_j − μ‖. Searching the directions among the Euclidean neighbours
//! costs no second search; measured on held-out classes it scores as the nearest
//! directions among all training points do (maths §18).

use crate::kernel::bandwidth::median;
use crate::model::method::Transient;
use crate::neighbors::k_smallest;
use faer::MatRef;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Euclidean neighbours among which the nearest directions are sought.
pub const CANDIDATES: usize = 14;

/// The fitted direction part.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Directions {
    /// μ: the training mean.
    mean: Vec<f64>,
    /// c_j: leave-one-out mean chord distance of training point j's direction to the
    /// k nearest directions among its candidates.
    spread: Vec<f64>,
    /// c̃ = median of `spread`.
    typical_spread: f64,
    /// R = median distance of the training points to μ.
    radius: f64,
    /// Euclidean neighbours searched for the directions: [`CANDIDATES`], fewer where
    /// the score was fitted from a method's narrower kNN graph.
    candidates: usize,
    /// û_j of every training point, row after row: formed at the fit or on the first
    /// score (not stored), so that a score reads its candidates' directions from
    /// contiguous memory and not a column-major matrix with a stride of n.
    #[serde(skip)]
    units: Transient<OnceLock<Vec<f64>>>,
}

/// (z − μ)/‖z − μ‖, or 0 where z = μ.
fn unit(z: impl Iterator<Item = f64>, mean: &[f64]) -> Vec<f64> {
    let mut u: Vec<f64> = z.zip(mean).map(|(v, m)| v - m).collect();
    normalise(&mut u);
    u
}

/// Divides `u` by its norm, if not 0, and returns the norm.
fn normalise(u: &mut [f64]) -> f64 {
    let norm = u.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > 0.0 {
        u.iter_mut().for_each(|v| *v /= norm);
    }
    norm
}

fn chord(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

impl Directions {
    /// Fits on the training points `x` and each one's nearest other points `idx`
    /// (nearest first, the first `candidates` of them used); returns the part
    /// and every training point's leave-one-out score cs_j. `None` where the directions
    /// carry nothing (the median c_j or R is 0: one-dimensional data, say).
    pub(crate) fn fit(
        x: MatRef<'_, f64>,
        idx: &[Vec<usize>],
        k: usize,
        candidates: usize,
    ) -> Option<(Directions, Vec<f64>)> {
        let w = x.ncols();
        let mean = crate::linalg::center::column_means(x);
        let (units, mut norms) = all_units(x, &mean);
        let nearest: Vec<(Vec<usize>, f64)> = idx
            .iter()
            .enumerate()
            .map(|(i, nb)| {
                let cand = &nb[..candidates.min(nb.len())];
                let row = |j: usize| &units[j * w..(j + 1) * w];
                nearest_directions(row(i), cand, |t| row(cand[t]), k)
            })
            .collect();
        let spread: Vec<f64> = nearest.iter().map(|n| n.1).collect();
        let typical_spread = median(&mut spread.clone());
        let radius = median(&mut norms);
        if !(typical_spread > 0.0 && radius > 0.0) {
            return None;
        }
        let part = Directions {
            mean,
            spread,
            typical_spread,
            radius,
            candidates,
            units: Transient(OnceLock::from(units)),
        };
        let loo = nearest.iter().map(|(nb, c)| part.scaled(*c, nb)).collect();
        Some((part, loo))
    }

    /// The training points' directions û_j, row after row, formed from `x` (the points
    /// the part was fitted on) on the first call, with every thread. Called before a
    /// parallel region, not inside one: a thread of the pool waiting there on another's
    /// first call could be handed work that makes the same call (a deadlock).
    pub(crate) fn units(&self, x: MatRef<'_, f64>) -> &[f64] {
        self.units.0.get_or_init(|| all_units(x, &self.mean).0)
    }

    /// Whether the directions have been formed (tests).
    #[cfg(test)]
    pub(super) fn formed(&self) -> bool {
        self.units.0.get().is_some()
    }

    /// cs(z) in the data's units (R · cs) of the point `z` with Euclidean candidates
    /// `candidates` (indices of training points; `units` from [`Directions::units`]).
    pub(crate) fn score(
        &self,
        units: &[f64],
        z: impl Iterator<Item = f64>,
        candidates: &[usize],
        k: usize,
    ) -> f64 {
        let u = unit(z, &self.mean);
        let w = self.mean.len();
        let (nb, c) = nearest_directions(
            &u,
            candidates,
            |t| &units[candidates[t] * w..(candidates[t] + 1) * w],
            k,
        );
        self.scaled(c, &nb)
    }

    /// R · c · sqrt(c̃ / mean c_j over `nb`): as the Euclidean score treats its spreads.
    fn scaled(&self, c: f64, nb: &[usize]) -> f64 {
        self.radius * super::novelty::score_of(c, nb, &self.spread, self.typical_spread)
    }

    /// Euclidean neighbours a new point's direction is sought among.
    pub(crate) fn candidates(&self) -> usize {
        self.candidates
    }

    /// The same with `candidates` changed (a decoded file can say anything).
    #[cfg(test)]
    pub(crate) fn with_candidates(mut self, candidates: usize) -> Directions {
        self.candidates = candidates;
        self
    }

    /// Training points scored against.
    pub(crate) fn len(&self) -> usize {
        self.spread.len()
    }

    /// Width of a point.
    pub(crate) fn width(&self) -> usize {
        self.mean.len()
    }
}

/// û_j of every row of `x`, row after row (the values of [`unit`]), and the norms
/// ‖x_j − μ‖; rows shared among the threads (the same values whatever their number).
fn all_units(x: MatRef<'_, f64>, mean: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let w = x.ncols();
    let mut units = crate::linalg::row_major(x);
    if w == 0 {
        return (units, vec![0.0; x.nrows()]);
    }
    let norms = units
        .par_chunks_exact_mut(w)
        .with_min_len(1024)
        .map(|u| {
            u.iter_mut().zip(mean).for_each(|(v, m)| *v -= m);
            normalise(u)
        })
        .collect();
    (units, norms)
}

/// The k training points among `candidates` whose directions (`dir` of a position in
/// `candidates`) are nearest to `u` (ties by index), and the mean of their chord
/// distances.
fn nearest_directions<'a>(
    u: &[f64],
    candidates: &[usize],
    dir: impl Fn(usize) -> &'a [f64],
    k: usize,
) -> (Vec<usize>, f64) {
    let mut d: Vec<(f64, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(t, &j)| (chord(u, dir(t)), j))
        .collect();
    k_smallest(&mut d, k);
    let mean = d.iter().map(|e| e.0).sum::<f64>() / d.len().max(1) as f64;
    (d.into_iter().map(|e| e.1).collect(), mean)
}

/// s_E^⅔ · cs^⅓: the geometric mean of the Euclidean and the direction score with
/// weights ⅔ and ⅓ (with ½ each, points between the turns of a Swiss roll, at the usual
/// direction but far from both sheets, were flagged less often: maths §18); 0 when
/// either is 0.
pub(crate) fn combine(euclidean: f64, direction: f64) -> f64 {
    if euclidean == 0.0 || direction == 0.0 {
        0.0
    } else {
        (euclidean * euclidean * direction).cbrt()
    }
}
