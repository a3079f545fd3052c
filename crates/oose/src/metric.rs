//! The input metric of the neighbour methods (maths §19): how points are compared
//! before any neighbour search, kernel or graph sees them.
//!
//! `cosine` and `correlation` are written as a map of the rows followed by the
//! Euclidean distance, so every method, extension and the novelty score keep their one
//! Euclidean implementation:
//!
//! - `cosine`: x ↦ x/‖x‖. The Euclidean distance of two images is the chordal distance
//!   ‖x/‖x‖ − y/‖y‖‖ = √(2(1 − cos θ)), an increasing function of the cosine distance
//!   1 − cos θ: the same nearest neighbours, in the same order, as a cosine search.
//! - `correlation`: x ↦ (x − x̄𝟙)/‖x − x̄𝟙‖ (the row centred on its own mean, then
//!   normalised): the chordal distance √(2(1 − r)) of Pearson's r.
//!
//! A model fitted with a metric stores it and applies it to every new row
//! ([`Model`](crate::model::Model) does, once, before the method and the novelty score
//! see the row): rows are independent of the batch, and a training row, scaled by any
//! power of two (cosine), maps onto its stored image bit for bit.

use crate::error::{Error, Result};
use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

/// How the neighbour methods compare points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// The Euclidean distance (rows as given).
    #[default]
    Euclidean,
    /// The angle between rows: the chordal distance √(2(1 − cos θ)).
    Cosine,
    /// Pearson's correlation of the rows' entries: √(2(1 − r)).
    Correlation,
}

impl Metric {
    /// The names every interface accepts, in this order.
    pub const NAMES: &'static [&'static str] = &["euclidean", "cosine", "correlation"];

    /// The metric's name (`"cosine"`).
    pub fn name(self) -> &'static str {
        match self {
            Metric::Euclidean => "euclidean",
            Metric::Cosine => "cosine",
            Metric::Correlation => "correlation",
        }
    }

    /// The metric named `name`; an error naming `metric` and the choices otherwise.
    ///
    /// ```
    /// use oose::metric::Metric;
    /// assert_eq!(Metric::from_name("cosine").unwrap(), Metric::Cosine);
    /// assert!(Metric::from_name("manhattan").unwrap_err().to_string().contains("metric"));
    /// ```
    pub fn from_name(name: &str) -> Result<Metric> {
        match name {
            "euclidean" => Ok(Metric::Euclidean),
            "cosine" => Ok(Metric::Cosine),
            "correlation" => Ok(Metric::Correlation),
            other => Err(Error::param(
                "metric",
                format!(
                    "expected one of {}, got {other:?}",
                    Metric::NAMES.join(", ")
                ),
            )),
        }
    }

    /// The rows of `x` mapped to where the Euclidean distance is this metric's; `None`
    /// for [`Metric::Euclidean`] (the rows as given). Non-finite entries are an error
    /// naming `what`, row and column; so is a row without a direction: all zeros
    /// (cosine) or constant (correlation).
    ///
    /// ```
    /// use oose::faer::mat;
    /// use oose::metric::Metric;
    /// let x = mat![[3.0, 4.0], [0.0, 2.0]];
    /// let y = Metric::Cosine.prepare("points", x.as_ref()).unwrap().unwrap();
    /// assert_eq!((y[(0, 0)], y[(0, 1)], y[(1, 1)]), (0.6, 0.8, 1.0));
    /// assert!(Metric::Euclidean.prepare("points", x.as_ref()).unwrap().is_none());
    /// let zero = mat![[1.0, 1.0], [0.0, 0.0]];
    /// let e = Metric::Cosine.prepare("points", zero.as_ref()).unwrap_err();
    /// assert!(e.to_string().contains("row 1"), "{e}");
    /// ```
    pub fn prepare(self, what: &'static str, x: MatRef<'_, f64>) -> Result<Option<Mat<f64>>> {
        if self == Metric::Euclidean {
            return Ok(None);
        }
        crate::validate::finite(what, x)?;
        let (n, d) = (x.nrows(), x.ncols());
        let mut out = Mat::<f64>::zeros(n, d);
        let mut row = vec![0.0; d];
        for i in 0..n {
            for (j, r) in row.iter_mut().enumerate() {
                *r = x[(i, j)];
            }
            let big = row.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            if self == Metric::Correlation {
                let mean = row.iter().sum::<f64>() / d as f64;
                row.iter_mut().for_each(|v| *v -= mean);
            }
            // Scaled by the largest entry first: no overflow or underflow in the norm.
            let scale = row.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            // A centred constant row is round-off: d·ε of its entries' size.
            let floor = match self {
                Metric::Correlation => 4.0 * d as f64 * f64::EPSILON * big,
                _ => 0.0,
            };
            if scale <= floor {
                let reason = match self {
                    Metric::Cosine => "a row of zeros has no direction (metric = cosine)",
                    _ => "a constant row has no correlation (metric = correlation)",
                };
                return Err(Error::invalid(what, (i, 0), x[(i, 0)], reason));
            }
            let norm = scale * row.iter().map(|v| (v / scale).powi(2)).sum::<f64>().sqrt();
            for (j, r) in row.iter().enumerate() {
                out[(i, j)] = r / norm;
            }
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::mat;

    #[test]
    fn cosine_rows_have_unit_norm_and_keep_direction() {
        let x = mat![
            [1e-200, 2e-200, 2e-200],
            [1e140, 0.0, -1e140],
            [-3.0, 0.0, 4.0]
        ];
        let y = Metric::Cosine.prepare("x", x.as_ref()).unwrap().unwrap();
        for i in 0..3 {
            let norm: f64 = (0..3).map(|j| y[(i, j)].powi(2)).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-15, "row {i}: {norm}");
            for j in 0..3 {
                assert_eq!(y[(i, j)].signum(), x[(i, j)].signum());
            }
        }
        assert_eq!((y[(0, 0)], y[(0, 1)]), (1.0 / 3.0, 2.0 / 3.0));
        assert_eq!((y[(2, 0)], y[(2, 2)]), (-0.6, 0.8));
    }

    #[test]
    fn chordal_distance_is_the_cosine_and_correlation_distance() {
        let x = mat![[1.0, 2.0, 0.5, -1.0], [0.3, -0.7, 2.0, 1.1]];
        let (a, b) = ((0..4).map(|j| x[(0, j)]), (0..4).map(|j| x[(1, j)]));
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let (a, b): (Vec<f64>, Vec<f64>) = (a.collect(), b.collect());
        let chord = |y: &Mat<f64>| (0..4).map(|j| (y[(0, j)] - y[(1, j)]).powi(2)).sum::<f64>();
        let cos = dot(&a, &b) / (dot(&a, &a) * dot(&b, &b)).sqrt();
        let y = Metric::Cosine.prepare("x", x.as_ref()).unwrap().unwrap();
        assert!((chord(&y) - 2.0 * (1.0 - cos)).abs() < 1e-14);
        let centre = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            v.iter().map(|x| x - m).collect::<Vec<_>>()
        };
        let (ca, cb) = (centre(&a), centre(&b));
        let r = dot(&ca, &cb) / (dot(&ca, &ca) * dot(&cb, &cb)).sqrt();
        let y = Metric::Correlation
            .prepare("x", x.as_ref())
            .unwrap()
            .unwrap();
        assert!((chord(&y) - 2.0 * (1.0 - r)).abs() < 1e-14);
    }

    #[test]
    fn rows_without_direction_and_non_finite_rows_are_named() {
        let x = mat![[1.0, 2.0], [5.0, 5.0]];
        let e = Metric::Correlation
            .prepare("new points", x.as_ref())
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidValue { row: 1, .. }) && e.to_string().contains("constant"),
            "{e}"
        );
        assert!(Metric::Cosine.prepare("new points", x.as_ref()).is_ok());
        let x = mat![[1.0, f64::NAN]];
        let e = Metric::Cosine
            .prepare("new points", x.as_ref())
            .unwrap_err();
        assert!(matches!(e, Error::NonFinite { row: 0, col: 1, .. }), "{e}");
    }

    #[test]
    fn powers_of_two_map_to_the_same_bits() {
        let x = mat![[0.1, 0.7, -0.3], [0.4, 0.4, 0.9]];
        let scaled = Mat::from_fn(2, 3, |i, j| x[(i, j)] * if i == 0 { 8.0 } else { 0.25 });
        for m in [Metric::Cosine, Metric::Correlation] {
            let a = m.prepare("x", x.as_ref()).unwrap().unwrap();
            let b = m.prepare("x", scaled.as_ref()).unwrap().unwrap();
            assert!(a == b, "{m:?}");
        }
    }
}
