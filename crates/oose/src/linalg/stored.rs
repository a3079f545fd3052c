//! A dense matrix as stored in model files (column-major data plus its shape).

use faer::MatRef;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Column-major matrix with its shape; what model payloads hold. A payload whose data
/// length disagrees with its shape does not decode. The values are shared by clones
/// (a model's novelty score holds the method's training points, not a copy); the one
/// change in place, [`StoredMat::add_lower_assign`], copies them first when shared.
#[derive(Clone, Debug, PartialEq, Deserialize, Default)]
#[serde(try_from = "Raw")]
pub struct StoredMat {
    nrows: usize,
    ncols: usize,
    data: Arc<Vec<f64>>,
}

/// The fields as written: the shape, then the values (a sequence, as a `Vec`).
#[derive(Serialize)]
struct Written<'a> {
    nrows: usize,
    ncols: usize,
    data: &'a [f64],
}

impl Serialize for StoredMat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Written {
            nrows: self.nrows,
            ncols: self.ncols,
            data: &self.data,
        }
        .serialize(s)
    }
}

/// The decoded fields, before their shape is checked.
#[derive(Deserialize)]
struct Raw {
    nrows: usize,
    ncols: usize,
    data: Vec<f64>,
}

impl TryFrom<Raw> for StoredMat {
    type Error = String;

    fn try_from(r: Raw) -> Result<Self, String> {
        if r.nrows.checked_mul(r.ncols) != Some(r.data.len()) {
            return Err(format!(
                "a {}×{} matrix holds {} values",
                r.nrows,
                r.ncols,
                r.data.len()
            ));
        }
        Ok(StoredMat {
            nrows: r.nrows,
            ncols: r.ncols,
            data: Arc::new(r.data),
        })
    }
}

impl StoredMat {
    /// Copies a faer matrix.
    pub fn from_mat(m: MatRef<'_, f64>) -> Self {
        let mut data = Vec::with_capacity(m.nrows() * m.ncols());
        for j in 0..m.ncols() {
            match m.col(j).try_as_col_major() {
                Some(col) => data.extend_from_slice(col.as_slice()),
                None => data.extend((0..m.nrows()).map(|i| m[(i, j)])),
            }
        }
        StoredMat {
            nrows: m.nrows(),
            ncols: m.ncols(),
            data: Arc::new(data),
        }
    }

    /// Adds `other`'s lower triangle (diagonal included) to this square matrix's; the
    /// upper triangle is left as it is.
    pub(crate) fn add_lower_assign(&mut self, other: &StoredMat) {
        let n = self.nrows;
        debug_assert!(n == self.ncols && other.nrows == n && other.ncols == n);
        let data = Arc::make_mut(&mut self.data);
        for j in 0..n {
            let col = j * n + j..(j + 1) * n;
            data[col.clone()]
                .iter_mut()
                .zip(&other.data[col])
                .for_each(|(a, b)| *a += b);
        }
    }

    /// Takes ownership of column-major `data` (nrows·ncols values).
    pub fn from_column_major(nrows: usize, ncols: usize, data: Vec<f64>) -> Self {
        assert_eq!(data.len(), nrows * ncols, "data length must be nrows·ncols");
        StoredMat {
            nrows,
            ncols,
            data: Arc::new(data),
        }
    }

    /// A view (no copy).
    pub fn view(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.data, self.nrows, self.ncols)
    }

    /// Column `j` as a slice (panics when `j` is out of range).
    pub fn col(&self, j: usize) -> &[f64] {
        &self.data[j * self.nrows..(j + 1) * self.nrows]
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Whether `self` and `other` hold the same values (not copies of them).
    pub(crate) fn shares_values_with(&self, other: &StoredMat) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }

    /// Whether the data length matches the shape (checked after decoding a file).
    /// True when the stored data is consistent and has shape rows×cols.
    pub fn is_shape(&self, rows: usize, cols: usize) -> bool {
        self.is_consistent() && self.nrows() == rows && self.ncols() == cols
    }

    pub fn is_consistent(&self) -> bool {
        self.nrows.checked_mul(self.ncols) == Some(self.data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::StoredMat;

    /// The same fields as the file format, without the check.
    #[derive(serde::Serialize)]
    struct Unchecked {
        nrows: usize,
        ncols: usize,
        data: Vec<f64>,
    }

    #[test]
    fn a_length_that_disagrees_with_the_shape_does_not_decode() {
        let ok = postcard::to_allocvec(&Unchecked {
            nrows: 2,
            ncols: 3,
            data: vec![1.0; 6],
        })
        .unwrap();
        let m: StoredMat = postcard::from_bytes(&ok).unwrap();
        assert!(m.is_shape(2, 3));
        for (nrows, ncols, len) in [(2, 3, 5), (2, 3, 7), (usize::MAX, 2, 2)] {
            let bad = postcard::to_allocvec(&Unchecked {
                nrows,
                ncols,
                data: vec![1.0; len],
            })
            .unwrap();
            let e = postcard::from_bytes::<StoredMat>(&bad).unwrap_err();
            assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        }
    }

    #[test]
    fn written_as_the_file_format_and_shared_until_changed() {
        let m = StoredMat::from_column_major(2, 3, (0..6).map(f64::from).collect());
        let as_file = Unchecked {
            nrows: 2,
            ncols: 3,
            data: (0..6).map(f64::from).collect(),
        };
        assert_eq!(
            postcard::to_allocvec(&m).unwrap(),
            postcard::to_allocvec(&as_file).unwrap()
        );
        // A clone holds the same values; a change in place copies them first.
        let square = StoredMat::from_column_major(2, 2, vec![1.0; 4]);
        let mut changed = square.clone();
        assert!(changed.shares_values_with(&square));
        changed.add_lower_assign(&StoredMat::from_column_major(2, 2, vec![1.0; 4]));
        assert!(!changed.shares_values_with(&square));
        assert_eq!(square.col(0), [1.0, 1.0]);
        assert_eq!(changed.col(0), [2.0, 2.0]);
        assert_eq!(changed.col(1), [1.0, 2.0]);
    }

    #[test]
    fn adding_the_lower_triangle_leaves_the_upper_one() {
        let data = |f: fn(usize, usize) -> f64| {
            let v = (0..16).map(|t| f(t % 4, t / 4)).collect::<Vec<_>>();
            StoredMat::from_column_major(4, 4, v)
        };
        let mut m = data(|i, j| (10 * i + j) as f64);
        m.add_lower_assign(&data(|i, j| 100.0 * (1 + i + j) as f64));
        for i in 0..4 {
            for j in 0..4 {
                let want = (10 * i + j) as f64
                    + if i >= j {
                        100.0 * (1 + i + j) as f64
                    } else {
                        0.0
                    };
                assert_eq!(m.view()[(i, j)], want, "({i}, {j})");
            }
        }
    }
}
