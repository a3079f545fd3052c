//! Linear algebra shared by the methods: the eigensolver with the sign rule (maths §3),
//! pivoted Cholesky for the residual kernel (maths §4), centring, Procrustes (maths §9),
//! and the column-major matrix model files hold (`stored`).

/// The product `a · b` in a new matrix, with parallelism `par`.
pub(crate) fn product(
    a: faer::MatRef<'_, f64>,
    b: faer::MatRef<'_, f64>,
    par: faer::Par,
) -> faer::Mat<f64> {
    let mut out = faer::Mat::<f64>::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(out.as_mut(), faer::Accum::Replace, a, b, 1.0, par);
    out
}

/// 2ᵉ with 2ᵉ ≤ `largest` < 2ᵉ⁺¹ where e lies outside [−`reach`, `reach`], else 1 (also
/// for a `largest` that is 0, subnormal or not finite). A bisection that starts at 1 and
/// doubles or halves a bounded number of times (t-SNE's β, UMAP's σ) reaches a row's
/// scale only within about 2^±steps: run on the row divided by this unit, it meets its
/// target at any scale, and the unit scales the result back. Dividing by a power of two
/// is exact, so a row within reach is computed bit for bit as before, and rows that
/// differ by a power-of-two factor outside the reach give the same bits up to that
/// factor.
pub(crate) fn binary_unit(largest: f64, reach: i32) -> f64 {
    if !largest.is_normal() {
        return 1.0;
    }
    let e = ((largest.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    if e.abs() <= reach {
        1.0
    } else {
        f64::from_bits(((e + 1023) as u64) << 52)
    }
}

/// The rows of `x` one after the other (row-major), copied by blocks of 64 rows: the
/// reads run down the columns and the writes stay in the first-level cache. From 2¹⁶
/// values the blocks are shared among the threads (a copy: the same values whatever
/// their number); below, the copy stays on the calling thread (handing a small copy
/// to the pool would cost more than the copy: Python's results of one row).
///
/// ```
/// use oose::faer::Mat;
/// let x = Mat::from_fn(2, 3, |i, j| (10 * i + j) as f64);
/// assert_eq!(oose::linalg::row_major(x.as_ref()), [0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
/// ```
pub fn row_major(x: faer::MatRef<'_, f64>) -> Vec<f64> {
    use rayon::prelude::*;
    const BLOCK: usize = 64;
    let (n, w) = (x.nrows(), x.ncols());
    let mut out = vec![0.0; n * w];
    if w == 0 {
        return out;
    }
    let copy = |(b, block): (usize, &mut [f64])| {
        let rows = block.len() / w;
        for c in 0..w {
            let col = x.col(c).subrows(b * BLOCK, rows);
            match col.try_as_col_major() {
                Some(col) => {
                    for (i, v) in col.as_slice().iter().enumerate() {
                        block[i * w + c] = *v;
                    }
                }
                None => {
                    for (i, v) in col.iter().enumerate() {
                        block[i * w + c] = *v;
                    }
                }
            }
        }
    };
    if n * w < 1 << 16 {
        out.chunks_mut(BLOCK * w).enumerate().for_each(copy);
    } else {
        out.par_chunks_mut(BLOCK * w)
            .enumerate()
            .with_min_len(16)
            .for_each(copy);
    }
    out
}

/// The row blocks `parts` one under the other, in a new matrix `width` columns wide
/// (the width of an empty list; every block must have it).
///
/// ```
/// use oose::faer::Mat;
/// let a = Mat::from_fn(2, 3, |i, j| (i * 3 + j) as f64);
/// let b = Mat::from_fn(1, 3, |_, j| 10.0 + j as f64);
/// let s = oose::linalg::stack_rows(&[a.clone(), b], 3);
/// assert_eq!((s.nrows(), s[(2, 1)]), (3, 11.0));
/// assert_eq!(s.as_ref().subrows(0, 2), a.as_ref());
/// ```
pub fn stack_rows(parts: &[faer::Mat<f64>], width: usize) -> faer::Mat<f64> {
    let n = parts.iter().map(|p| p.nrows()).sum();
    let mut out = faer::Mat::<f64>::zeros(n, width);
    let mut at = 0;
    for p in parts {
        assert_eq!(p.ncols(), width, "stack_rows: a block of another width");
        out.as_mut()
            .subrows_mut(at, p.nrows())
            .copy_from(p.as_ref());
        at += p.nrows();
    }
    out
}

/// `impl LinOp<f64>` for a symmetric operator (it is its own conjugate transpose, so
/// `apply` and `conj_apply` are both the product) of dimension `$n`, given by
/// `$product(self, out, rhs)`: the shape faer's Lanczos takes.
macro_rules! symmetric_lin_op {
    ($ty:ty, n: |$s:ident| $n:expr, product: |$sp:ident, $out:ident, $rhs:ident| $product:expr) => {
        impl faer::matrix_free::LinOp<f64> for $ty {
            fn apply_scratch(
                &self,
                _rhs_ncols: usize,
                _par: faer::Par,
            ) -> faer::dyn_stack::StackReq {
                faer::dyn_stack::StackReq::EMPTY
            }

            fn nrows(&self) -> usize {
                let $s = self;
                $n
            }

            fn ncols(&self) -> usize {
                let $s = self;
                $n
            }

            fn apply(
                &self,
                $out: faer::MatMut<'_, f64>,
                $rhs: faer::MatRef<'_, f64>,
                _par: faer::Par,
                _stack: &mut faer::dyn_stack::MemStack,
            ) {
                let $sp = self;
                $product
            }

            fn conj_apply(
                &self,
                out: faer::MatMut<'_, f64>,
                rhs: faer::MatRef<'_, f64>,
                par: faer::Par,
                stack: &mut faer::dyn_stack::MemStack,
            ) {
                faer::matrix_free::LinOp::apply(self, out, rhs, par, stack)
            }
        }
    };
}

pub mod center;
pub(crate) mod cholesky;
pub mod eigen;
pub mod memory;
pub(crate) mod pivoted_cholesky;
pub mod procrustes;
pub(crate) mod simd;
pub(crate) mod small;
pub(crate) mod sparse;
pub(crate) mod stored;

#[cfg(test)]
mod tests {
    use faer::Mat;

    #[test]
    fn row_major_copies_every_layout_and_a_partial_last_block() {
        for (n, w) in [(0, 3), (5, 0), (1, 1), (64, 3), (130, 7), (2100, 40)] {
            let x = Mat::from_fn(n, w, |i, j| (i * 1000 + j) as f64);
            let want: Vec<f64> = (0..n * w).map(|t| x[(t / w, t % w)]).collect();
            assert_eq!(super::row_major(x.as_ref()), want, "{n}×{w}");
            // A transposed view: columns with a stride.
            let t = Mat::from_fn(w, n, |j, i| x[(i, j)]);
            assert_eq!(
                super::row_major(t.as_ref().transpose()),
                want,
                "{n}×{w} strided"
            );
        }
    }
}
