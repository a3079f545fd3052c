//! A symmetric matrix–vector product that reads only the lower triangle (one AVX-512 sweep a column, else two vectorised ones; deterministic block sums): the operator Lanczos applies. Not an eigensolver.

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
    /// Each column in one AVX-512 sweep ([`column_avx512`]), where the CPU has it;
    /// else two portable sweeps ([`column`]). The same bits either way.
    wide: bool,
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
        #[cfg(target_arch = "x86_64")]
        let wide = std::arch::is_x86_feature_detected!("avx512f");
        #[cfg(not(target_arch = "x86_64"))]
        let wide = false;
        Some(LowerSymmetric { a, bounds, wide })
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

/// For each column j: y_j += A[j.., j]ᵀ x[j..] and y[j+1..] += A[j+1.., j] x_j, with 8
/// interleaved partial sums for the dot product (lane l sums the entries i ≡ l mod 8
/// of the part below the diagonal, in order; the rest after them).
#[inline(always)]
pub(super) fn lower_columns(
    op: &LowerSymmetric<'_>,
    cols: std::ops::Range<usize>,
    x: &[f64],
    y: &mut [f64],
) {
    for j in cols {
        let col = &op.column(j)[j..];
        let xj = x[j];
        let rest = &col[1..];
        let (xs, ys) = (&x[j + 1..], &mut y[j + 1..]);
        let whole = rest.len() / L * L;
        let (c, xs8, ys8) = (&rest[..whole], &xs[..whole], &mut ys[..whole]);
        #[cfg(target_arch = "x86_64")]
        let acc = if op.wide {
            // SAFETY: `wide` only where the CPU has AVX-512F (`LowerSymmetric::new`).
            unsafe { column_avx512(c, xs8, ys8, xj) }
        } else {
            column(c, xs8, ys8, xj)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let acc = column(c, xs8, ys8, xj);
        let mut dot =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for i in whole..rest.len() {
            dot += rest[i] * xs[i];
            ys[i] += rest[i] * xj;
        }
        y[j] += col[0] * xj + dot;
    }
}

/// Lanes of the partial sums.
const L: usize = 8;

/// The lanes of Σ c ⊙ x (in order within each lane) and y += c·xj, for slices whose
/// length is a multiple of [`L`]: two sweeps, each of which the compiler vectorises
/// (one loop doing both updates it wrote one scalar at a time).
#[inline(always)]
fn column(c: &[f64], x: &[f64], y: &mut [f64], xj: f64) -> [f64; L] {
    let mut acc = [0.0f64; L];
    for (c, xv) in c.as_chunks::<L>().0.iter().zip(x.as_chunks::<L>().0) {
        for l in 0..L {
            acc[l] += c[l] * xv[l];
        }
    }
    for (yv, c) in y.iter_mut().zip(c) {
        *yv += c * xj;
    }
    acc
}

/// [`column`] in one sweep with the eight lanes in one AVX-512 register: the same
/// operations in the same order (no fused multiply–add), so the same bits; the column
/// is read once.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn column_avx512(c: &[f64], x: &[f64], y: &mut [f64], xj: f64) -> [f64; L] {
    use core::arch::x86_64::*;
    let n = c.len().min(x.len()).min(y.len()) / L * L;
    let mut acc = _mm512_setzero_pd();
    let s = _mm512_set1_pd(xj);
    let mut i = 0;
    while i < n {
        // SAFETY: i + 8 <= n <= the length of each slice.
        unsafe {
            let cv = _mm512_loadu_pd(c.as_ptr().add(i));
            let xv = _mm512_loadu_pd(x.as_ptr().add(i));
            let yv = _mm512_loadu_pd(y.as_ptr().add(i));
            acc = _mm512_add_pd(acc, _mm512_mul_pd(cv, xv));
            _mm512_storeu_pd(
                y.as_mut_ptr().add(i),
                _mm512_add_pd(yv, _mm512_mul_pd(cv, s)),
            );
        }
        i += L;
    }
    let mut lanes = [0.0; L];
    // SAFETY: `lanes` holds eight values.
    unsafe { _mm512_storeu_pd(lanes.as_mut_ptr(), acc) };
    lanes
}

symmetric_lin_op!(LowerSymmetric<'_>,
    n: |op| op.a.nrows(),
    product: |op, out, rhs| op.product(out, rhs));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The product in the order the docs give, one scalar operation at a time: per
    /// block, a zeroed y; per column, lane l of the dot sums the entries i ≡ l (mod 8)
    /// below the diagonal up to the last whole group of 8, the rest follow; the blocks'
    /// y are added in block order.
    fn in_documented_order(a: &Mat<f64>, bounds: &[usize], x: &[f64]) -> Vec<f64> {
        let n = a.nrows();
        let parts: Vec<Vec<f64>> = bounds
            .windows(2)
            .map(|w| {
                let mut y = vec![0.0; n];
                for j in w[0]..w[1] {
                    let rest = n - j - 1;
                    let whole = rest / 8 * 8;
                    let mut lane = [0.0; 8];
                    for i in 0..whole {
                        lane[i % 8] += a[(j + 1 + i, j)] * x[j + 1 + i];
                    }
                    let mut dot = ((lane[0] + lane[4]) + (lane[1] + lane[5]))
                        + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
                    for i in whole..rest {
                        dot += a[(j + 1 + i, j)] * x[j + 1 + i];
                    }
                    for i in 0..rest {
                        y[j + 1 + i] += a[(j + 1 + i, j)] * x[j];
                    }
                    y[j] += a[(j, j)] * x[j] + dot;
                }
                y
            })
            .collect();
        (0..n)
            .map(|i| parts.iter().fold(0.0, |s, p| s + p[i]))
            .collect()
    }

    /// Both column sweeps (the AVX-512 one where the CPU has it), each compiled for
    /// every vector width the CPU has, give the bits of the documented order.
    #[test]
    fn the_product_has_the_bits_of_the_documented_order_on_every_path() {
        for n in [1, 9, 16, 17, 64, 203] {
            let mut r = Rng::new(n as u64);
            let b = Mat::from_fn(n, n, |_, _| r.normal());
            let a = &b + b.transpose();
            let x = Mat::from_fn(n, 1, |_, _| r.normal());
            let mut op = LowerSymmetric::new(a.as_ref()).unwrap();
            let xs: Vec<f64> = x.col(0).iter().copied().collect();
            let want: Vec<u64> = in_documented_order(&a, &op.bounds, &xs)
                .iter()
                .map(|v| v.to_bits())
                .collect();
            let sweeps = if op.wide {
                vec![true, false]
            } else {
                vec![false]
            };
            for wide in sweeps {
                op.wide = wide;
                for (path, got) in crate::linalg::simd::each_path(|| {
                    let mut y = Mat::<f64>::zeros(n, 1);
                    op.product(y.as_mut(), x.as_ref());
                    y.col(0).iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                }) {
                    assert_eq!(got, want, "n = {n}, {path}, AVX-512 sweep: {wide}");
                }
            }
        }
    }

    #[test]
    fn the_avx512_column_sweep_has_the_bits_of_the_portable_one() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            for len in [0, 8, 64, 808] {
                let mut r = Rng::new(len as u64 + 5);
                let c: Vec<f64> = (0..len).map(|_| r.normal()).collect();
                let x: Vec<f64> = (0..len).map(|_| r.normal()).collect();
                let y0: Vec<f64> = (0..len).map(|_| r.normal()).collect();
                let (mut y1, mut y2) = (y0.clone(), y0.clone());
                let a1 = column(&c, &x, &mut y1, 0.7);
                // SAFETY: the CPU has AVX-512F (just checked).
                let a2 = unsafe { column_avx512(&c, &x, &mut y2, 0.7) };
                assert_eq!(a1.map(f64::to_bits), a2.map(f64::to_bits), "len {len}");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&y1), bits(&y2), "len {len}");
                assert!(
                    len == 0 || bits(&y1) != bits(&y0),
                    "len {len}: y not updated"
                );
            }
        }
    }
}
