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

/// Checks that every entry of `x` is finite; reports the first offender in row order.
pub(crate) fn finite(what: &'static str, x: MatRef<'_, f64>) -> Result<()> {
    let mut first: Option<(usize, usize, f64)> = None;
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            let v = x[(i, j)];
            if !v.is_finite() {
                match first {
                    Some((r, _, _)) if r <= i => {}
                    _ => first = Some((i, j, v)),
                }
                break;
            }
        }
    }
    match first {
        None => Ok(()),
        Some((row, col, value)) => Err(Error::NonFinite {
            what,
            row,
            col,
            value,
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

/// Checks that `m` is square and symmetric (to 1e-10 relative); names the first
/// asymmetric pair.
pub(crate) fn square_symmetric(what: &'static str, m: MatRef<'_, f64>) -> Result<()> {
    let n = m.nrows();
    if m.ncols() != n {
        return Err(Error::Shape {
            what,
            expected: format!("a square matrix ({n}×{n})"),
            got: format!("{n}×{}", m.ncols()),
        });
    }
    for j in 0..n {
        for i in (j + 1)..n {
            let (a, b) = (m[(i, j)], m[(j, i)]);
            if (a - b).abs() > 1e-10 * (1.0 + a.abs().max(b.abs())) {
                return Err(Error::InvalidValue {
                    what,
                    row: i,
                    col: j,
                    value: a,
                    reason: "not symmetric (the mirrored entry differs)",
                });
            }
        }
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
}
