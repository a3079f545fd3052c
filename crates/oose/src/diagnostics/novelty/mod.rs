//! Novelty: a per-point score that says whether the training set represents a new
//! point, and its conformal p-value (maths §18, `docs/diagnostics.md`).
//!
//! The score of a new point z, with N_k(z) its k nearest training points (k = 10) and
//! r_j the mean distance of training point x_j to its own k nearest *other* training
//! points:
//!
//! ```text
//! d(z)  = mean_{j ∈ N_k(z)} ||z − x_j||        how far z is from the training set
//! ρ(z)  = mean_{j ∈ N_k(z)} r_j                 how spread the training set is there
//! s_E(z) = d(z) · sqrt(ρ̃ / ρ(z)),   ρ̃ = median_j r_j
//! s(z)   = (s_E(z)² · R · cs(z))^⅓
//! ```
//!
//! with cs the same construction on the directions from the training mean, among the
//! 14 nearest training points (`direction.rs`), and R the median distance of the
//! training points to their mean. s is a distance in the data's own units: s_E is the
//! mean distance to the k nearest training points where the training set is as spread as
//! it is typically (ρ = ρ̃), more in a tight region and less in a loose one; the square
//! root there is the geometric mean of the plain distance (the k-NN baseline) and the
//! LOF-style ratio d/ρ. The direction part sees a new population that lies at the usual
//! distance from the training points but in a direction they do not take (cell types
//! in PCA space fan out from the centre). Both chosen by measurement on held-out classes
//! of digits, Fashion-MNIST and PBMC cells (`benches/run_novelty.sh`). Model files
//! before format 6 hold no direction part and score by s_E alone, as they did.
//!
//! Calibration: the same score of each training point with itself left out (its
//! neighbours are the k nearest *other* training points), computed once at fit.
//! p(z) = (1 + #{i : s_i ≥ s(z)}) / (n + 1) (conformal, Vovk et al.): for z drawn like
//! the training points, P(p(z) ≤ α) ≈ α, so `is_novel = p ≤ α` raises false alarms at
//! the rate α the user chooses.

use super::direction::{combine, Directions, CANDIDATES};
use crate::error::{Error, Result};
use crate::kernel::bandwidth::median;
use crate::linalg::stored::StoredMat;
use crate::methods::mds::Proximity;
use crate::model::method::Cache;
use crate::model::Input;
use crate::neighbors::{k_smallest, knn};
use faer::MatRef;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Neighbours per score (k).
pub const NEIGHBOURS: usize = 10;
/// Default level α of `is_novel`.
pub const DEFAULT_ALPHA: f64 = 0.01;

/// What a new row holds, for the score.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reference {
    /// A point; the training points are stored.
    Points,
    /// Its distances to the training objects (classical MDS of dissimilarities).
    Distances,
    /// Its squared distances to the training objects.
    SquaredDistances,
}

/// The fitted novelty score: the reference set, the leave-one-out spreads and the
/// calibration scores (maths §18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Novelty {
    k: usize,
    reference: Reference,
    /// The training points (empty for distance rows).
    points: StoredMat,
    /// r_j: leave-one-out mean distance of training object j to its k nearest others.
    spread: Vec<f64>,
    /// ρ̃ = median of `spread`.
    typical_spread: f64,
    /// Leave-one-out scores of the training objects, ascending.
    calibration: Vec<f64>,
    /// Level of `is_novel`.
    alpha: f64,
    /// The direction part of the score (format 6 on; without it, files of earlier
    /// versions score as they did: the Euclidean score alone).
    #[serde(default, deserialize_with = "crate::model::added_in::<6, _, _>")]
    directions: Option<Directions>,
}

/// A [`Novelty`]'s fields as a model file holds them (see [`Novelty::written`]): the
/// same names, types and order, so the same bytes where the points are the score's.
#[derive(Serialize)]
pub(crate) struct Written<'a> {
    k: usize,
    reference: Reference,
    points: Cow<'a, StoredMat>,
    spread: &'a [f64],
    typical_spread: f64,
    calibration: &'a [f64],
    alpha: f64,
    directions: &'a Option<Directions>,
}

/// A novelty score fitted by a method from its own kNN graph, handed once to the model
/// (`Fitted::novelty`) and not stored with the method: a clone or a decoded model holds
/// none, and the model then fits the score itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Pending(Cache<std::sync::Mutex<Option<Novelty>>>);

impl Pending {
    pub(crate) fn new(novelty: Option<Novelty>) -> Pending {
        Pending(Cache(std::sync::Mutex::new(novelty)))
    }

    /// Puts a score to be taken once.
    pub(crate) fn set(&self, novelty: Option<Novelty>) {
        if let Ok(mut n) = self.0 .0.lock() {
            *n = novelty;
        }
    }

    /// The score, once.
    pub(crate) fn take(&self) -> Option<Novelty> {
        self.0 .0.lock().ok().and_then(|mut n| n.take())
    }

    /// The score, once; else (taken already, or none was found) fitted on the
    /// training points `x`.
    pub(crate) fn take_or_fit(&self, x: MatRef<'_, f64>) -> Option<Novelty> {
        self.take().or_else(|| Novelty::fit(x))
    }
}

/// Per-point novelty columns of one extension.
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    /// s(z): larger = less represented, in the data's units.
    pub novelty: Vec<f64>,
    /// Conformal p-value in (0, 1].
    pub pvalue: Vec<f64>,
    /// p ≤ α.
    pub is_novel: Vec<bool>,
}

impl Novelty {
    /// Fits on training points (N×D), one per row. `None` with fewer than 2 points.
    ///
    /// ```
    /// use oose::diagnostics::novelty::Novelty;
    /// let x = oose::datasets::three_d_clusters(400, 3, 1).points;
    /// let nov = Novelty::fit(x.as_ref()).unwrap();
    /// let far = faer::Mat::<f64>::from_fn(1, 3, |_, _| 100.0);
    /// let s = nov.score(far.as_ref(), None).unwrap();
    /// assert!(s.is_novel[0] && s.pvalue[0] < 0.01);
    /// ```
    pub fn fit(x: MatRef<'_, f64>) -> Option<Novelty> {
        let n = x.nrows();
        if n < 2 {
            return None;
        }
        // A stop request (Ctrl-C) during the search leaves no score; the model's fit
        // then reports the interruption.
        let (idx, dist) =
            crate::neighbors::knn_stoppable(x, x, CANDIDATES.min(n - 1), true).ok()?;
        Some(Self::from_points(x, &idx, &dist))
    }

    /// [`Novelty::fit`] from a kNN graph of `x` the method has already built (each row's
    /// nearest other rows, nearest first, at least [`NEIGHBOURS`] of them or N − 1; the
    /// direction part looks among the first [`CANDIDATES`], or as many as every row
    /// has): the calibration then costs no second search. With the exact graph the result is
    /// that of `fit` (up to the order of tied distances); with an approximate one the
    /// leave-one-out spreads are those of the neighbours it found. `None` when a row has
    /// too few neighbours.
    pub(crate) fn from_graph(
        x: MatRef<'_, f64>,
        idx: &[Vec<usize>],
        dist: &[Vec<f64>],
    ) -> Option<Novelty> {
        let n = x.nrows();
        if n < 2 || idx.len() != n || dist.len() != n {
            return None;
        }
        let k = NEIGHBOURS.min(n - 1);
        if idx
            .iter()
            .zip(dist)
            .any(|(i, d)| i.len() < k || d.len() < k)
        {
            return None;
        }
        Some(Self::from_points(x, idx, dist))
    }

    /// The score of points from each one's nearest others: the Euclidean part from the
    /// first k, the direction part from the first [`CANDIDATES`] (or as many as every
    /// row has); the calibration scores are their weighted geometric means.
    fn from_points(x: MatRef<'_, f64>, idx: &[Vec<usize>], dist: &[Vec<f64>]) -> Novelty {
        let k = NEIGHBOURS.min(x.nrows() - 1);
        let candidates = idx.iter().map(Vec::len).fold(CANDIDATES, usize::min);
        let mut score =
            Self::from_neighbours(k, Reference::Points, StoredMat::from_mat(x), idx, dist);
        if let Some((part, loo)) = Directions::fit(x, idx, k, candidates) {
            let mut calibration: Vec<f64> = idx
                .iter()
                .zip(&score.spread)
                .zip(&loo)
                .map(|((nb, &r), &c)| {
                    combine(
                        score_of(
                            r,
                            &nb[..k.min(nb.len())],
                            &score.spread,
                            score.typical_spread,
                        ),
                        c,
                    )
                })
                .collect();
            calibration.sort_by(f64::total_cmp);
            score.calibration = calibration;
            score.directions = Some(part);
        }
        score
    }

    /// Fits on an N×N matrix of (squared, if `squared`) distances between the training
    /// objects.
    pub fn fit_distances(d: MatRef<'_, f64>, squared: bool) -> Option<Novelty> {
        let n = d.nrows();
        if n < 2 || d.ncols() != n {
            return None;
        }
        let k = NEIGHBOURS.min(n - 1);
        let (idx, dist): (Vec<Vec<usize>>, Vec<Vec<f64>>) = (0..n)
            .map(|i| nearest_in_row(d.row(i).iter().copied(), squared, k, Some(i)))
            .unzip();
        let reference = if squared {
            Reference::SquaredDistances
        } else {
            Reference::Distances
        };
        Some(Self::from_neighbours(
            k,
            reference,
            StoredMat::default(),
            &idx,
            &dist,
        ))
    }

    fn from_neighbours(
        k: usize,
        reference: Reference,
        points: StoredMat,
        idx: &[Vec<usize>],
        dist: &[Vec<f64>],
    ) -> Novelty {
        // Rows may hold more than k neighbours (a method's graph): the first k count.
        let spread: Vec<f64> = dist.iter().map(|d| mean(&d[..k.min(d.len())])).collect();
        let typical_spread = median(&mut spread.clone());
        let mut calibration: Vec<f64> = idx
            .iter()
            .zip(&spread)
            .map(|(nb, &r)| score_of(r, &nb[..k.min(nb.len())], &spread, typical_spread))
            .collect();
        calibration.sort_by(f64::total_cmp);
        Novelty {
            k,
            reference,
            points,
            spread,
            typical_spread,
            calibration,
            alpha: DEFAULT_ALPHA,
            directions: None,
        }
    }

    /// Neighbours per score (the Euclidean part's k).
    pub fn neighbours(&self) -> usize {
        self.k
    }

    /// Nearest training points a new point's score needs: the direction part's
    /// candidates where the score has one, else k.
    pub fn search_neighbours(&self) -> usize {
        match &self.directions {
            Some(d) => d.candidates().max(self.k),
            None => self.k,
        }
    }

    /// The level α of `is_novel`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The same with another level α ∈ (0, 1).
    pub fn with_alpha(mut self, alpha: f64) -> Result<Novelty> {
        check_alpha(alpha)?;
        self.alpha = alpha;
        Ok(self)
    }

    /// The leave-one-out scores of the training objects, ascending.
    pub fn calibration(&self) -> &[f64] {
        &self.calibration
    }

    /// What a new row holds.
    pub fn reference(&self) -> Reference {
        self.reference
    }

    /// Scores new rows (points, or distance rows for a distance reference) at level
    /// `alpha` (default: the stored one). Rows are scored independently of each other.
    pub fn score(&self, new: MatRef<'_, f64>, alpha: Option<f64>) -> Result<Scores> {
        self.score_near(new, alpha, None)
    }

    /// [`Novelty::score`] given, where `near` is some, the k ≥ [`Novelty::neighbours`]
    /// nearest reference points of every row (a search shared with the extension).
    pub(crate) fn score_near(
        &self,
        new: MatRef<'_, f64>,
        alpha: Option<f64>,
        near: Option<&crate::neighbors::Neighbours>,
    ) -> Result<Scores> {
        let alpha = match alpha {
            Some(a) => check_alpha(a).map(|_| a)?,
            None => self.alpha,
        };
        crate::validate::columns("new rows", new, self.width())?;
        let m = new.nrows();
        let wanted = self.search_neighbours();
        // Each row's neighbours: borrowed from the caller's search where it searched,
        // else from this search.
        let own: crate::neighbors::Neighbours;
        let (idx, dist) = match (self.reference, near) {
            (Reference::Points, Some(found)) => found,
            (Reference::Points, None) => {
                own = knn(new, self.points.view(), wanted, false);
                &own
            }
            (Reference::Distances | Reference::SquaredDistances, _) => {
                let squared = self.reference == Reference::SquaredDistances;
                own = (0..m)
                    .map(|i| nearest_in_row(new.row(i).iter().copied(), squared, self.k, None))
                    .unzip();
                &own
            }
        };
        let k = self.k;
        // The directions formed (on first use, and not for no rows) before the rows go
        // parallel.
        let units = self
            .directions
            .as_ref()
            .filter(|_| !idx.is_empty())
            .map(|part| (part, part.units(self.points.view())));
        // Rows in parallel: each row's score is its own, in any order.
        let novelty: Vec<f64> = idx
            .par_iter()
            .zip(dist)
            .enumerate()
            .with_min_len(256)
            .map(|(i, (nb, d))| {
                let nb = &nb[..wanted.min(nb.len())];
                let k = k.min(nb.len());
                let e = score_of(mean(&d[..k]), &nb[..k], &self.spread, self.typical_spread);
                match units {
                    Some((part, units)) => {
                        combine(e, part.score(units, new.row(i).iter().copied(), nb, k))
                    }
                    None => e,
                }
            })
            .collect();
        let pvalue: Vec<f64> = novelty.iter().map(|&s| self.pvalue(s)).collect();
        let is_novel = pvalue.iter().map(|&p| p <= alpha).collect();
        Ok(Scores {
            novelty,
            pvalue,
            is_novel,
        })
    }

    /// p(s) = (1 + #{i : s_i ≥ s}) / (n + 1); NaN for a NaN score.
    pub fn pvalue(&self, s: f64) -> f64 {
        if s.is_nan() {
            return f64::NAN;
        }
        let n = self.calibration.len();
        let below = self.calibration.partition_point(|&c| c < s);
        (1 + n - below) as f64 / (n + 1) as f64
    }

    /// The smallest p-value a new point can get, 1 / (N + 1) for N calibration scores:
    /// `is_novel` is never set at a level α below it.
    pub fn smallest_pvalue(&self) -> f64 {
        1.0 / (self.calibration.len() + 1) as f64
    }

    /// The warning to give where `is_novel` cannot be set at level `alpha` (default:
    /// the stored one) because α is below [`Novelty::smallest_pvalue`]: too few
    /// training points for that level. `None` where α can be reached.
    ///
    /// ```
    /// use oose::diagnostics::novelty::Novelty;
    /// let x = oose::datasets::swiss_roll(80, 0.0, false, 1).points;
    /// let n = Novelty::fit(x.as_ref()).unwrap();
    /// assert_eq!(n.smallest_pvalue(), 1.0 / 81.0);
    /// assert!(n.unreachable_level(Some(0.01)).unwrap().contains("80 training points"));
    /// assert!(n.unreachable_level(Some(0.05)).is_none());
    /// ```
    pub fn unreachable_level(&self, alpha: Option<f64>) -> Option<String> {
        let alpha = alpha.unwrap_or(self.alpha);
        let smallest = self.smallest_pvalue();
        let n = self.calibration.len();
        // The level to suggest, rounded up: 1/81 = 0.012345… asks for 0.0124.
        let reachable = (smallest * 1e4).ceil() / 1e4;
        (alpha < smallest).then(|| {
            format!(
                "is_novel cannot be set at alpha = {alpha}: with {n} training points the \
                 smallest novelty p-value is 1/{} = {smallest:.4}; ask for alpha ≥ {reachable} \
                 or fit on at least {} points (novelty and novelty_pvalue still rank the rows)",
                n + 1,
                (1.0 / alpha).ceil() as usize - 1,
            )
        })
    }

    /// Whether the sizes agree (a decoded payload).
    pub fn is_consistent(&self) -> bool {
        let n = self.spread.len();
        self.k >= 1
            && self.k < n.max(1)
            && self.calibration.len() == n
            && self.points.is_consistent()
            && match self.reference {
                Reference::Points => self.points.nrows() == n,
                _ => self.points.nrows() == 0,
            }
            && self.directions.as_ref().is_none_or(|d| {
                self.reference == Reference::Points
                    && d.candidates() >= self.k
                    && d.candidates() < n
                    && d.len() == n
                    && d.width() == self.points.ncols()
            })
    }

    /// This score as a model file writes it: its fields in their order, its copy of
    /// the training points left out (an empty matrix) where that copy is bitwise
    /// `method_points`, the points the method keeps (format 7: the reader gives them
    /// back); borrowed, nothing copied.
    pub(crate) fn written(&self, method_points: Option<&StoredMat>) -> Written<'_> {
        let shared = method_points.is_some_and(|x| self.holds_bits_of(x));
        Written {
            k: self.k,
            reference: self.reference,
            points: if shared {
                Cow::Owned(StoredMat::default())
            } else {
                Cow::Borrowed(&self.points)
            },
            spread: &self.spread,
            typical_spread: self.typical_spread,
            calibration: &self.calibration,
            alpha: self.alpha,
            directions: &self.directions,
        }
    }

    /// Whether this score holds `x`'s values themselves (not a copy; tests).
    #[cfg(test)]
    pub(crate) fn points_share_values_with(&self, x: &StoredMat) -> bool {
        self.points.shares_values_with(x)
    }

    /// Whether this is a score read without its points (see [`Novelty::written`]): a
    /// point reference holding no point.
    pub(crate) fn lacks_points(&self) -> bool {
        self.reference == Reference::Points && self.points.nrows() == 0 && !self.is_empty()
    }

    /// Whether this score's points are `x`'s values, bit for bit (the same values held
    /// once, or a copy of them).
    fn holds_bits_of(&self, x: &StoredMat) -> bool {
        self.reference == Reference::Points
            && (self.points.shares_values_with(x)
                || (self.points.is_shape(x.nrows(), x.ncols())
                    && (0..x.ncols()).all(|j| {
                        x.col(j)
                            .iter()
                            .zip(self.points.col(j))
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    })))
    }

    /// Holds `x` (the method's training points) as its points where they are this
    /// score's own bit for bit: a copy becomes the one set of values.
    pub(crate) fn share_points(&mut self, x: &StoredMat) {
        if self.holds_bits_of(x) {
            self.points = x.clone();
        }
    }

    /// Gives a score read without its points (see [`Novelty::lacks_points`]) the
    /// method's training points `x`, shared (the caller checked their number).
    pub(crate) fn restore_points(&mut self, x: &StoredMat) {
        self.points = x.clone();
    }

    /// The number of training objects scored against.
    pub fn len(&self) -> usize {
        self.spread.len()
    }

    /// True when there are no training objects (never for a fitted score).
    pub fn is_empty(&self) -> bool {
        self.spread.is_empty()
    }

    /// The width a new row must have (training dimension, or one distance per training
    /// object).
    pub fn width(&self) -> usize {
        match self.reference {
            Reference::Points => self.points.ncols(),
            _ => self.spread.len(),
        }
    }
}

/// The novelty score of a method's fitting input: points (any method fitted on points
/// or on points with values) or (squared) dissimilarities; `None` for similarities and
/// without an input.
pub(crate) fn from_input(input: Option<Input<'_>>) -> Option<Novelty> {
    match input? {
        Input::Points(x) | Input::Values { points: x, .. } => Novelty::fit(x),
        Input::Proximity(x, Proximity::Points) => Novelty::fit(x),
        Input::Proximity(d, Proximity::Dissimilarities) => Novelty::fit_distances(d, false),
        Input::Proximity(d, Proximity::SquaredDissimilarities) => Novelty::fit_distances(d, true),
        Input::Proximity(_, Proximity::Similarities) => None,
    }
}

/// Checks a level α ∈ (0, 1).
pub fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "alpha",
            format!("the level of is_novel must lie in (0, 1), got {alpha}"),
        ))
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// s = d · sqrt(ρ̃ / ρ) with ρ the mean spread of the neighbours; a point on top of
/// duplicates (ρ = 0) scores its distance as is when it is 0, +∞ otherwise.
pub(super) fn score_of(d: f64, neighbours: &[usize], spread: &[f64], typical: f64) -> f64 {
    let rho = neighbours.iter().map(|&j| spread[j]).sum::<f64>() / neighbours.len() as f64;
    if d == 0.0 || rho == typical {
        d
    } else if rho > 0.0 {
        d * (typical / rho).sqrt()
    } else {
        f64::INFINITY
    }
}

/// The k smallest entries of a distance row (indices and distances, nearest first, ties
/// by index), skipping `skip`; NaN entries sort last.
fn nearest_in_row(
    row: impl Iterator<Item = f64>,
    squared: bool,
    k: usize,
    skip: Option<usize>,
) -> (Vec<usize>, Vec<f64>) {
    let mut cand: Vec<(f64, usize)> = row
        .enumerate()
        .filter(|&(j, _)| Some(j) != skip)
        .map(|(j, v)| (if squared { v.max(0.0).sqrt() } else { v }, j))
        .collect();
    k_smallest(&mut cand, k);
    cand.into_iter().map(|(d, j)| (j, d)).unzip()
}

/// Columns `novelty`, `novelty_pvalue`, `is_novel` (1 or 0), NaN where there is no
/// score.
pub(crate) fn columns(scores: Option<Scores>, m: usize) -> Vec<crate::extend::Column> {
    use crate::extend::Column;
    let (novelty, pvalue, flag) = match scores {
        Some(s) => (
            s.novelty,
            s.pvalue,
            s.is_novel
                .iter()
                .map(|&b| if b { 1.0 } else { 0.0 })
                .collect(),
        ),
        None => (vec![f64::NAN; m], vec![f64::NAN; m], vec![f64::NAN; m]),
    };
    vec![
        Column {
            name: "novelty",
            values: novelty,
        },
        Column {
            name: "novelty_pvalue",
            values: pvalue,
        },
        Column {
            name: "is_novel",
            values: flag,
        },
    ]
}

#[cfg(test)]
mod tests;
