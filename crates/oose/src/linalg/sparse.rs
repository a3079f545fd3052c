//! A sparse symmetric matrix in compressed sparse row form (both triangles stored,
//! column indices sorted within each row), its parallel product with dense blocks,
//! and the shifted operator A + σI that the Lanczos eigensolver sees.

use faer::{Mat, MatMut, MatRef};
use rayon::prelude::*;

/// Sparse symmetric n×n matrix, CSR with both triangles.
#[derive(Clone, Debug, PartialEq)]
pub struct SymCsr {
    /// Row i's entries are `offsets[i]..offsets[i + 1]`.
    pub offsets: Vec<usize>,
    /// Column of each entry (sorted within a row).
    pub cols: Vec<u32>,
    /// Value of each entry.
    pub vals: Vec<f64>,
}

impl SymCsr {
    /// Builds the matrix from rows given as `(column, value)` lists (each row sorted by
    /// column, no duplicates; the caller guarantees symmetry).
    pub fn from_rows(rows: Vec<Vec<(u32, f64)>>) -> SymCsr {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let nnz: usize = rows.iter().map(Vec::len).sum();
        let mut cols = Vec::with_capacity(nnz);
        let mut vals = Vec::with_capacity(nnz);
        for r in rows {
            for (c, v) in r {
                cols.push(c);
                vals.push(v);
            }
            offsets.push(cols.len());
        }
        SymCsr {
            offsets,
            cols,
            vals,
        }
    }

    /// Matrix size n.
    pub fn n(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Row i as (columns, values).
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.offsets[i]..self.offsets[i + 1];
        (&self.cols[r.clone()], &self.vals[r])
    }

    /// Row sums.
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.n())
            .into_par_iter()
            .map(|i| self.row(i).1.iter().sum())
            .collect()
    }

    /// Replaces every entry a_ij by f(i, j, a_ij).
    pub fn map_entries(&mut self, f: impl Fn(usize, usize, f64) -> f64 + Sync) {
        let offsets = &self.offsets;
        let cols = &self.cols;
        // Rows are contiguous; split the value array by rows in parallel chunks.
        let n = offsets.len() - 1;
        let mut pieces: Vec<(usize, &mut [f64])> = Vec::new();
        let mut rest: &mut [f64] = &mut self.vals;
        let step = n.div_ceil(64).max(1);
        let mut start = 0;
        while start < n {
            let end = (start + step).min(n);
            let len = offsets[end] - offsets[start];
            let (head, tail) = rest.split_at_mut(len);
            pieces.push((start, head));
            rest = tail;
            start = end;
        }
        pieces.into_par_iter().for_each(|(s, vals)| {
            let base = offsets[s];
            let mut i = s;
            for (e, v) in vals.iter_mut().enumerate() {
                let pos = base + e;
                while pos >= offsets[i + 1] {
                    i += 1;
                }
                *v = f(i, cols[pos] as usize, *v);
            }
        });
    }

    /// The dense matrix.
    pub fn to_dense(&self) -> Mat<f64> {
        let n = self.n();
        let mut m = Mat::<f64>::zeros(n, n);
        for i in 0..n {
            let (c, v) = self.row(i);
            for (&j, &x) in c.iter().zip(v) {
                m[(i, j as usize)] = x;
            }
        }
        m
    }

    /// Column `j` (= row j) written densely into `out`.
    pub fn column_into(&self, j: usize, out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
        let (c, v) = self.row(j);
        for (&i, &x) in c.iter().zip(v) {
            out[i as usize] = x;
        }
    }

    /// Connected components of the graph of non-zero entries: (label of each vertex,
    /// component sizes), components numbered largest first.
    pub fn components(&self) -> (Vec<usize>, Vec<usize>) {
        components(self.n(), |i, visit| {
            let (cols, vals) = self.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                if v != 0.0 {
                    visit(j as usize);
                }
            }
        })
    }

    /// out = (A + shift·I − v vᵀ) rhs (the last term when `deflate` = Some(v)), rows in
    /// parallel.
    pub fn apply_shifted(
        &self,
        mut out: MatMut<'_, f64>,
        rhs: MatRef<'_, f64>,
        shift: f64,
        deflate: &[&[f64]],
    ) {
        let n = self.n();
        for c in 0..rhs.ncols() {
            let x = rhs.col(c);
            let x: Vec<f64> = (0..n).map(|i| x[i]).collect();
            let mut y = vec![0.0; n];
            y.par_chunks_mut(4096).enumerate().for_each(|(b, ys)| {
                for (o, yi) in ys.iter_mut().enumerate() {
                    let i = b * 4096 + o;
                    let (cols, vals) = self.row(i);
                    let mut s = shift * x[i];
                    for (&j, &v) in cols.iter().zip(vals) {
                        s += v * x[j as usize];
                    }
                    *yi = s;
                }
            });
            for v in deflate {
                let dot: f64 = v.iter().zip(&x).map(|(a, b)| a * b).sum();
                y.iter_mut().zip(*v).for_each(|(yi, vi)| *yi -= dot * vi);
            }
            let mut oc = faer::reborrow::ReborrowMut::rb_mut(&mut out).col_mut(c);
            for i in 0..n {
                oc[i] = y[i];
            }
        }
    }
}

/// The operator A + σI (− Σ v vᵀ) for the Lanczos solver.
#[derive(Debug)]
pub struct Shifted<'a> {
    /// A.
    pub matrix: &'a SymCsr,
    /// σ.
    pub shift: f64,
    /// Orthonormal vectors v to deflate (none: empty).
    pub deflate: &'a [&'a [f64]],
}

symmetric_lin_op!(Shifted<'_>,
    n: |op| op.matrix.n(),
    product: |op, out, rhs| op.matrix.apply_shifted(out, rhs, op.shift, op.deflate));

/// Connected components of a graph on `n` vertices whose edges `neighbours(v, visit)`
/// reports by calling `visit` on each neighbour of v: (label of each vertex, component
/// sizes), components numbered largest first (ties: by smallest vertex).
pub(crate) fn components(
    n: usize,
    neighbours: impl Fn(usize, &mut dyn FnMut(usize)),
) -> (Vec<usize>, Vec<usize>) {
    components_from(0..n, n, neighbours)
}

/// [`components`] with the searches started from the vertices of `starts` in that order
/// (each vertex once at least): with a directed `neighbours` and the order of
/// Kosaraju's second pass, the strongly connected components.
pub(crate) fn components_from(
    starts: impl IntoIterator<Item = usize>,
    n: usize,
    neighbours: impl Fn(usize, &mut dyn FnMut(usize)),
) -> (Vec<usize>, Vec<usize>) {
    let mut label = vec![usize::MAX; n];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for s in starts {
        if label[s] != usize::MAX {
            continue;
        }
        let c = sizes.len();
        label[s] = c;
        stack.push(s);
        let mut size = 0;
        while let Some(v) = stack.pop() {
            size += 1;
            neighbours(v, &mut |w| {
                if label[w] == usize::MAX {
                    label[w] = c;
                    stack.push(w);
                }
            });
        }
        sizes.push(size);
    }
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut rank = vec![0; sizes.len()];
    for (r, &c) in order.iter().enumerate() {
        rank[c] = r;
    }
    let label = label.into_iter().map(|c| rank[c]).collect();
    let sizes = order.iter().map(|&c| sizes[c]).collect();
    (label, sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: usize) -> SymCsr {
        let rows = (0..n)
            .map(|i| {
                let mut r = Vec::new();
                if i > 0 {
                    r.push(((i - 1) as u32, 1.0));
                }
                r.push((i as u32, 2.0));
                if i + 1 < n {
                    r.push(((i + 1) as u32, 1.0));
                }
                r
            })
            .collect();
        SymCsr::from_rows(rows)
    }

    #[test]
    fn product_matches_dense() {
        let a = path(10_000);
        let x = Mat::from_fn(10_000, 2, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let mut y = Mat::<f64>::zeros(10_000, 2);
        a.apply_shifted(y.as_mut(), x.as_ref(), 0.5, &[]);
        for c in 0..2 {
            for i in [0usize, 1, 4095, 4096, 9999] {
                let mut want = 2.5 * x[(i, c)];
                if i > 0 {
                    want += x[(i - 1, c)];
                }
                if i + 1 < 10_000 {
                    want += x[(i + 1, c)];
                }
                assert_eq!(y[(i, c)], want);
            }
        }
    }

    #[test]
    fn components_and_mapping() {
        let mut a = SymCsr::from_rows(vec![
            vec![(0, 1.0), (1, 1.0)],
            vec![(0, 1.0), (1, 1.0)],
            vec![(2, 1.0)],
        ]);
        let (label, sizes) = a.components();
        assert_eq!(sizes, vec![2, 1]);
        assert_eq!(label, vec![0, 0, 1]);
        a.map_entries(|i, j, v| v * (10 * i + j) as f64);
        assert_eq!(a.vals, vec![0.0, 1.0, 10.0, 11.0, 22.0]);
        assert_eq!(a.row_sums(), vec![1.0, 21.0, 22.0]);
    }
}
