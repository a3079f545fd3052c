//! A symmetric matrix–vector product that reads only the lower triangle (AVX2 when present, deterministic block sums): the operator Lanczos applies. Not an eigensolver.

#[allow(unused_imports)]
use super::*;

/// A symmetric matrix stored whole (column-major) as an operator that reads only its
/// lower triangle: each column j gives y_j += A[j.., j]ᵀ x[j..] and
/// y[j+1..] += A[j+1.., j] x_j in one sweep, so a product streams half the memory of
/// a full one. Lanczos is memory-bound (faer takes at least 64 products), so this
/// halves its cost, and it reads the same triangle as the dense solver.
///
/// The columns are cut into a fixed number of blocks of equal triangle area whatever
/// the number of threads, and the blocks' partial sums are added in block order: the
/// product is bitwise the same on every machine.
#[derive(Debug)]
pub(super) struct LowerSymmetric<'a> {
    a: MatRef<'a, f64>,
    /// Column block boundaries (first column of each block, then n).
    bounds: Vec<usize>,
}

impl<'a> LowerSymmetric<'a> {
    const BLOCKS: usize = 16;

    /// `None` when the columns of `a` are not contiguous.
    pub(super) fn new(a: MatRef<'a, f64>) -> Option<Self> {
        let n = a.nrows();
        if (0..n).any(|j| a.col(j).try_as_col_major().is_none()) {
            return None;
        }
        // Column j holds n − j entries of the triangle; cut where the running count
        // passes b/BLOCKS of the total.
        let total = (n * (n + 1) / 2) as f64;
        let mut bounds = vec![0];
        let mut seen = 0usize;
        for j in 0..n {
            seen += n - j;
            let next = bounds.len() as f64 * total / Self::BLOCKS as f64;
            if seen as f64 >= next && j + 1 < n {
                bounds.push(j + 1);
            }
        }
        bounds.push(n);
        Some(LowerSymmetric { a, bounds })
    }

    /// y += the part of A x that the columns j in `cols` of the lower triangle give.
    fn block(&self, cols: std::ops::Range<usize>, x: &[f64], y: &mut [f64]) {
        crate::linalg::simd::vectorized(
            #[inline(always)]
            || lower_columns(self, cols, x, y),
        );
    }

    fn column(&self, j: usize) -> &'a [f64] {
        self.a
            .col(j)
            .try_as_col_major()
            .expect("contiguous columns (checked in new)")
            .as_slice()
    }

    pub(super) fn product(&self, mut out: MatMut<'_, f64>, rhs: MatRef<'_, f64>) {
        use rayon::prelude::*;
        let n = self.a.nrows();
        for c in 0..rhs.ncols() {
            let x: Vec<f64> = rhs.col(c).iter().copied().collect();
            let parts: Vec<Vec<f64>> = self
                .bounds
                .par_windows(2)
                .map(|w| {
                    let mut y = vec![0.0; n];
                    self.block(w[0]..w[1], &x, &mut y);
                    y
                })
                .collect();
            let mut col = out.as_mut().col_mut(c);
            for i in 0..n {
                col[i] = parts.iter().fold(0.0, |s, p| s + p[i]);
            }
        }
    }
}

/// For each column j: y_j += A[j.., j]ᵀ x[j..] and y[j+1..] += A[j+1.., j] x_j, in one
/// sweep over the column, with 8 interleaved partial sums for the dot product.
#[inline(always)]
pub(super) fn lower_columns(
    op: &LowerSymmetric<'_>,
    cols: std::ops::Range<usize>,
    x: &[f64],
    y: &mut [f64],
) {
    const L: usize = 8;
    for j in cols {
        let col = &op.column(j)[j..];
        let xj = x[j];
        let rest = &col[1..];
        let (xs, ys) = (&x[j + 1..], &mut y[j + 1..]);
        let whole = rest.len() / L * L;
        let mut acc = [0.0f64; L];
        for ((c, xv), yv) in rest[..whole]
            .chunks_exact(L)
            .zip(xs[..whole].chunks_exact(L))
            .zip(ys[..whole].chunks_exact_mut(L))
        {
            for l in 0..L {
                acc[l] += c[l] * xv[l];
                yv[l] += c[l] * xj;
            }
        }
        let mut dot =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for i in whole..rest.len() {
            dot += rest[i] * xs[i];
            ys[i] += rest[i] * xj;
        }
        y[j] += col[0] * xj + dot;
    }
}

symmetric_lin_op!(LowerSymmetric<'_>,
    n: |op| op.a.nrows(),
    product: |op, out, rhs| op.product(out, rhs));
