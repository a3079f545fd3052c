//! Input validation at the library boundary: shapes, emptiness, finiteness.

use crate::error::{Error, Result};
use faer::MatRef;

/// Checks that `x` has at least one row and one column and only finite entries.
pub(crate) fn finite_nonempty(what: &'static str, x: MatRef<'_, f64>) -> Result<()> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(Error::Empty {
            what,
            rows: x.nrows(),
            cols: x.ncols(),
        });
    }
    finite(what, x)
}

/// [`finite_nonempty`] for training points, which the methods measure by squared
/// distances and products: also refuses points whose entries are all below 1e-150 in
/// magnitude (and not all zero), whose squared differences fall below the smallest
/// normal number and lose their digits or vanish (the points would be found to
/// coincide); names the largest entry.
pub(crate) fn training_points(what: &'static str, x: MatRef<'_, f64>) -> Result<()> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return finite_nonempty(what, x);
    }
    // The same pass as `finite`'s.
    let (row, col, value) = checked(what, x)?;
    if value != 0.0 && value.abs() < 1e-150 {
        return Err(Error::invalid(
            what,
            (row, col),
            value,
            "too small: every entry is below 1e-150 in magnitude, so squared distances \
             underflow the arithmetic (rescale the data)",
        ));
    }
    Ok(())
}

/// How the rows of `x` repeat: equal rows (by value: −0.0 and 0.0 are equal) counted
/// together. For the messages of methods that find no distance to work with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Copies {
    /// Distinct rows.
    pub(crate) distinct: usize,
    /// Copies of the least repeated row (1: some row is unique).
    pub(crate) rarest: usize,
    /// Copies of the most repeated row.
    pub(crate) commonest: usize,
}

/// [`Copies`] of the rows of `x` (hashes their values: O(N·D)).
pub(crate) fn copies(x: MatRef<'_, f64>) -> Copies {
    let mut count: std::collections::HashMap<Vec<u64>, usize> = std::collections::HashMap::new();
    for i in 0..x.nrows() {
        // + 0.0 makes −0.0 into 0.0.
        let key = x.row(i).iter().map(|v| (v + 0.0).to_bits()).collect();
        *count.entry(key).or_default() += 1;
    }
    Copies {
        distinct: count.len(),
        rarest: count.values().copied().min().unwrap_or(0),
        commonest: count.values().copied().max().unwrap_or(0),
    }
}

/// The error of a neighbour method (t-SNE, UMAP) whose training points all lie at
/// distance 0 from their `k` nearest others: "all points coincide" where they do, else
/// the parameter `param` named with the duplicates that defeat it and `fix`, what
/// would make a neighbour distinct (given the rarest row's number of copies).
pub(crate) fn no_distances(
    x: MatRef<'_, f64>,
    method: &'static str,
    k: usize,
    param: &'static str,
    fix: impl Fn(usize) -> String,
) -> Error {
    let c = copies(x);
    if c.distinct <= 1 {
        return Error::Singular(format!(
            "training data: all {} points coincide: {method} has nothing to embed",
            x.nrows()
        ));
    }
    Error::param(
        param,
        format!(
            "every training point coincides with its {k} nearest others (the {} points are \
             {} distinct ones, each repeated at least {} times), so {method} has no distance \
             to work with; {}, or remove the duplicates",
            x.nrows(),
            c.distinct,
            c.rarest,
            fix(c.rarest)
        ),
    )
}

/// Checks that every entry of `x` is finite, reporting the first offender in row order,
/// and that no row is too large for the arithmetic ([`magnitude`]). One pass over the
/// entries; rows are measured only where an entry exceeds 1e150.
pub(crate) fn finite(what: &'static str, x: MatRef<'_, f64>) -> Result<()> {
    checked(what, x).map(|_| ())
}

/// [`finite`], returning the entry of largest magnitude (row, column, value; zeros for
/// an empty or all-zero `x`).
fn checked(what: &'static str, x: MatRef<'_, f64>) -> Result<(usize, usize, f64)> {
    // Entries up to 1e150 cannot overflow a squared norm of fewer than 1e7 columns.
    let limit = if x.ncols() < 10_000_000 { 1e150 } else { 0.0 };
    // The first non-finite entry in row order, else the largest entry (the first in
    // column order among equals): read in memory order, row by row for row-major data
    // (what Python and the CLI hand over), so that no read strides over a row.
    let mut largest = (0, 0, 0.0f64);
    let mut first: Option<(usize, usize, f64)> = None;
    let mut visit = |i: usize, j: usize, v: f64| -> bool {
        if !v.is_finite() {
            if first.is_none_or(|(r, c, _)| (i, j) < (r, c)) {
                first = Some((i, j, v));
            }
            return false;
        }
        let (a, b) = (v.abs(), largest.2.abs());
        if a > b || (a == b && a > 0.0 && (j, i) < (largest.1, largest.0)) {
            largest = (i, j, v);
        }
        true
    };
    if x.ncols() > 1 && x.col_stride() == 1 {
        'rows: for i in 0..x.nrows() {
            let row = x.row(i).try_as_row_major().expect("a unit column stride");
            for (j, &v) in row.as_slice().iter().enumerate() {
                if !visit(i, j, v) {
                    break 'rows;
                }
            }
        }
    } else {
        for j in 0..x.ncols() {
            for (i, &v) in x.col(j).iter().enumerate() {
                if !visit(i, j, v) {
                    break;
                }
            }
        }
    }
    match first {
        None if largest.2.abs() > limit => magnitude(what, x).map(|_| largest),
        None => Ok(largest),
        Some((row, col, value)) => Err(Error::NonFinite {
            what,
            row,
            col,
            value,
        }),
    }
}

/// The largest squared row norm the arithmetic takes: squared distances between two
/// such rows (‖x − y‖² ≤ 2‖x‖² + 2‖y‖²) and their sums stay finite.
const MAX_SQUARED_NORM: f64 = f64::MAX / 16.0;

/// Checks that no row of the finite `x` is so large that squared distances, dot
/// products or kernel values computed from it overflow (a row of 1e200 would give NaN
/// coordinates); names the row and its largest entry.
fn magnitude(what: &'static str, x: MatRef<'_, f64>) -> Result<()> {
    for i in 0..x.nrows() {
        let r = x.row(i);
        let (col, m) =
            r.iter().enumerate().fold(
                (0, 0.0f64),
                |(c, m), (j, v)| if v.abs() > m { (j, v.abs()) } else { (c, m) },
            );
        if m == 0.0 {
            continue;
        }
        let scaled: f64 = r.iter().map(|v| (v / m) * (v / m)).sum();
        let sq = m * m * scaled;
        if sq.is_nan() || sq > MAX_SQUARED_NORM {
            return Err(Error::invalid(
                what,
                (i, col),
                x[(i, col)],
                "too large: the row's squared norm overflows the arithmetic (rescale the data)",
            ));
        }
    }
    Ok(())
}

/// Checks that a computed matrix (a kernel matrix, distances) is finite: where the
/// arithmetic overflows, the error names the first row, instead of eigenvalues or
/// coordinates turning NaN later.
pub(crate) fn computed_finite(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    let bad = (0..m.ncols())
        .filter_map(|j| m.col(j).iter().position(|v| !v.is_finite()))
        .min();
    match bad {
        None => Ok(()),
        Some(row) => Err(Error::Overflow {
            what,
            row,
            detail: "not finite: the arithmetic overflowed (rescale the data, or choose \
                     kernel parameters that keep its values finite)",
        }),
    }
}

/// Checks the number of columns of new data against what the model was fitted on.
pub(crate) fn columns(what: &'static str, x: MatRef<'_, f64>, expected: usize) -> Result<()> {
    if x.ncols() != expected {
        return Err(Error::Shape {
            what,
            expected: format!("{expected} columns"),
            got: format!("{} columns", x.ncols()),
        });
    }
    Ok(())
}

/// Checks that `m` is square and symmetric: mirrored entries may differ by 1e-10 times
/// the largest magnitude in `m` (round-off of the computation that produced it), at any
/// scale; names the first asymmetric pair. (The tolerance was 1e-10·(1 + |entry|), which
/// accepted any asymmetry below 1e-10: a matrix of dissimilarities of the order of 1e-20
/// with one entry three times its mirror passed.)
pub(crate) fn square_symmetric(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    let n = m.nrows();
    if m.ncols() != n {
        return Err(Error::Shape {
            what,
            expected: format!("a square matrix ({n}×{n})"),
            got: format!("{n}×{}", m.ncols()),
        });
    }
    // The callers have checked that `m` is finite.
    let tolerance = 1e-10 * m.norm_max();
    for j in 0..n {
        for i in (j + 1)..n {
            let (a, b) = (m[(i, j)], m[(j, i)]);
            if (a - b).abs() > tolerance {
                return Err(Error::invalid(
                    what,
                    (i, j),
                    a,
                    "not symmetric (the mirrored entry differs)",
                ));
            }
        }
    }
    Ok(())
}

/// `value` in 1..=`max`, else an error naming `param`: "must be between 1 and
/// `bound` = `max`, got `value`" (`bound` says what `max` is: "N", "N − 1").
pub(crate) fn count(param: &'static str, value: usize, max: usize, bound: &str) -> Result<()> {
    if (1..=max).contains(&value) {
        return Ok(());
    }
    Err(Error::param(
        param,
        format!("must be between 1 and {bound} = {max}, got {value}"),
    ))
}

/// At least `min` points for `what` (a method or a dataset), else an error naming
/// `param`, the parameter whose bound the number of points is.
pub(crate) fn enough_points(param: &'static str, what: &str, n: usize, min: usize) -> Result<()> {
    if n < min {
        return Err(Error::param(
            param,
            format!("{what} needs at least {min} points, got {n}"),
        ));
    }
    Ok(())
}

/// `min` ≤ `value` < `n` (the number of points), else an error naming `param`.
pub(crate) fn below_points(param: &'static str, value: usize, min: usize, n: usize) -> Result<()> {
    if value < min || value >= n {
        return Err(Error::param(
            param,
            format!("must be at least {min} and below the number of points ({n}), got {value}"),
        ));
    }
    Ok(())
}

/// `value` ≥ 1, else an error naming `param`: "must be at least 1, got 0".
pub(crate) fn at_least_one(param: &'static str, value: usize) -> Result<()> {
    if value == 0 {
        return Err(Error::param(param, "must be at least 1, got 0"));
    }
    Ok(())
}

/// `value` finite and > 0, else an error naming `param`.
pub(crate) fn positive(param: &'static str, value: f64) -> Result<()> {
    if !(value > 0.0 && value.is_finite()) {
        return Err(Error::param(
            param,
            format!("must be finite and > 0, got {value}"),
        ));
    }
    Ok(())
}

/// A relative tolerance below which eigenvalues and pivots count as zero: in [0, 1),
/// else an error naming `rank_tolerance` (NaN included).
pub(crate) fn rank_tolerance(value: f64) -> Result<()> {
    if !(0.0..1.0).contains(&value) {
        return Err(Error::param(
            "rank_tolerance",
            format!("must be in [0, 1), got {value}"),
        ));
    }
    Ok(())
}

/// `value` finite and ≥ 0, else an error naming `param`.
pub(crate) fn non_negative(param: &'static str, value: f64) -> Result<()> {
    if !(value >= 0.0 && value.is_finite()) {
        return Err(Error::param(
            param,
            format!("must be finite and ≥ 0, got {value}"),
        ));
    }
    Ok(())
}

/// Looks `name` up in `table` (the names every interface uses); the error lists the
/// accepted names and names the parameter.
pub(crate) fn named<T: Copy>(param: &'static str, name: &str, table: &[(&str, T)]) -> Result<T> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            Error::param(
                param,
                format!("expected one of {}, got {name:?}", names.join(", ")),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn reports_first_nonfinite_in_row_order() {
        let mut x = Mat::<f64>::zeros(4, 3);
        x[(3, 0)] = f64::NAN;
        x[(1, 2)] = f64::INFINITY;
        let e = finite("training data", x.as_ref()).unwrap_err();
        assert_eq!(
            e,
            Error::NonFinite {
                what: "training data",
                row: 1,
                col: 2,
                value: f64::INFINITY
            }
        );
    }

    #[test]
    fn row_major_data_are_read_in_memory_order_with_the_same_answers() {
        // The same matrix column-major and as a row-major view of its rows.
        let check = |x: &Mat<f64>| {
            let flat: Vec<f64> = (0..x.nrows())
                .flat_map(|i| (0..x.ncols()).map(move |j| x[(i, j)]))
                .collect();
            let rm = MatRef::from_row_major_slice(&flat, x.nrows(), x.ncols());
            assert_eq!(rm.col_stride(), 1);
            let (a, b) = (checked("x", x.as_ref()), checked("x", rm));
            assert!(format!("{a:?}") == format!("{b:?}"), "{a:?} {b:?}");
            a
        };
        let mut x = Mat::<f64>::from_fn(5, 4, |i, j| (i as f64 - 2.0) * 0.1 + j as f64 * 0.01);
        // Equal largest magnitudes: the first in column order, (3, 1), is named.
        x[(1, 2)] = -7.0;
        x[(3, 1)] = 7.0;
        x[(4, 0)] = 6.0;
        assert_eq!(check(&x).unwrap(), (3, 1, 7.0));
        // Non-finite entries: the first in row order.
        x[(4, 0)] = f64::NAN;
        x[(2, 3)] = f64::NEG_INFINITY;
        x[(2, 1)] = f64::INFINITY;
        assert!(matches!(
            check(&x),
            Err(Error::NonFinite { row: 2, col: 1, .. })
        ));
    }

    #[test]
    fn symmetry_is_judged_against_the_matrix_scale() {
        let base = Mat::<f64>::from_fn(4, 4, |i, j| (i as f64 - j as f64).abs());
        for s in [1e-20, 1.0, 1e20] {
            let mut m = Mat::from_fn(4, 4, |i, j| base[(i, j)] * s);
            // Round-off of the largest entry's size: accepted.
            m[(0, 1)] += 1e-12 * s;
            assert!(square_symmetric("m", m.as_ref()).is_ok(), "scale {s}");
            // One entry three times its mirror: refused at every scale.
            m[(2, 1)] *= 3.0;
            let e = square_symmetric("m", m.as_ref()).unwrap_err();
            assert!(
                matches!(e, Error::InvalidValue { row: 2, col: 1, .. }),
                "scale {s}: {e:?}"
            );
        }
    }

    #[test]
    fn rows_whose_squares_overflow_are_named() {
        let mut x = Mat::<f64>::from_fn(3, 2, |i, j| (i + j) as f64);
        assert!(finite("x", x.as_ref()).is_ok());
        x[(1, 0)] = 1e200;
        let e = finite("new points", x.as_ref()).unwrap_err();
        assert!(
            matches!(e, Error::InvalidValue { row: 1, col: 0, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("too large"), "{e}");
        // Large but safe: 1e152 squared is 1e304.
        x[(1, 0)] = 1e152;
        assert!(finite("x", x.as_ref()).is_ok());
    }

    #[test]
    fn training_points_too_small_for_squares_are_named() {
        let mut x = Mat::<f64>::from_fn(3, 2, |i, j| (i + 2 * j) as f64 * 1e-160);
        x[(2, 0)] = -3e-155;
        let e = training_points("training data", x.as_ref()).unwrap_err();
        assert!(
            matches!(e, Error::InvalidValue { row: 2, col: 0, value, .. } if value == -3e-155),
            "{e:?}"
        );
        assert!(e.to_string().contains("too small"), "{e}");
        // Small but safe (1e-140 squared is 1e-280), all zero (the methods say the
        // points coincide), and one entry of ordinary size: accepted.
        x[(2, 0)] = 1e-140;
        assert!(training_points("x", x.as_ref()).is_ok());
        assert!(training_points("x", Mat::<f64>::zeros(3, 2).as_ref()).is_ok());
        x[(0, 1)] = 1.0;
        x[(2, 0)] = 1e-300;
        assert!(training_points("x", x.as_ref()).is_ok());
    }

    #[test]
    fn copies_count_equal_rows_with_signed_zeros_equal() {
        let x = Mat::from_fn(6, 2, |i, j| match (i, j) {
            (0, _) | (1, _) => 0.0,
            (2, _) => -0.0,
            (3, 0) | (4, 0) => 1.0,
            _ => 2.0,
        });
        assert_eq!(
            copies(x.as_ref()),
            Copies {
                distinct: 3,
                rarest: 1,
                commonest: 3
            }
        );
    }

    #[test]
    fn empty_is_an_error() {
        let x = Mat::<f64>::zeros(0, 3);
        assert!(matches!(
            finite_nonempty("x", x.as_ref()),
            Err(Error::Empty {
                rows: 0,
                cols: 3,
                ..
            })
        ));
    }

    #[test]
    fn scalar_checks_name_the_parameter_and_the_value() {
        assert!(at_least_one("k", 1).is_ok());
        assert_eq!(
            at_least_one("k", 0).unwrap_err(),
            Error::param("k", "must be at least 1, got 0")
        );
        assert!(positive("rate", f64::MIN_POSITIVE).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = positive("rate", bad).unwrap_err();
            assert_eq!(
                e,
                Error::param("rate", format!("must be finite and > 0, got {bad}"))
            );
        }
        assert!(non_negative("beta", 0.0).is_ok());
        for bad in [-1e-300, f64::NAN, f64::INFINITY] {
            let e = non_negative("beta", bad).unwrap_err();
            assert_eq!(
                e,
                Error::param("beta", format!("must be finite and ≥ 0, got {bad}"))
            );
        }
        assert!(enough_points("k", "UMAP", 3, 3).is_ok());
        assert_eq!(
            enough_points("k", "UMAP", 2, 3).unwrap_err(),
            Error::param("k", "UMAP needs at least 3 points, got 2")
        );
        assert!(below_points("k", 2, 2, 3).is_ok());
        for bad in [1, 3, 4] {
            assert_eq!(
                below_points("k", bad, 2, 3).unwrap_err(),
                Error::param(
                    "k",
                    format!("must be at least 2 and below the number of points (3), got {bad}")
                )
            );
        }
    }
}
