//! Kernel blocks for passes whose bits are not an extension's (the Nyström fit's passes
//! over all N rows): within a few ulp of [`Kernel::block_into`]'s values, for less work.

use super::{distance, Kernel};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par};

impl Kernel {
    /// Widest input whose squared distances [`Kernel::block_loose_then`] takes as sums of
    /// squared differences rather than the product form (a matrix product and a
    /// near-pair pass). Measured on the Nyström sums pass (2·10⁵ rows, 500 landmarks,
    /// two runs each way): at 8 coordinates the two within noise (0.97–1.03 s), at 12
    /// the product form faster (0.79–0.93 s against 0.95–1.07 s), at 3 the differences
    /// a tenth of the pass faster.
    const DIFFERENCES_MAX_WIDTH: usize = 8;

    /// The kernel block with `then(j, column j)` on each column while it is in cache
    /// (as [`Kernel::block_into_then`], on this thread), for a pass whose bits are not
    /// those of an extension (the Nyström sums): values within a few ulp of
    /// [`Kernel::block_into`]'s but not its bits. Cheaper: the exponential kernels' exp
    /// by fused multiply-adds, and for radial kernels on at most
    /// [`Kernel::DIFFERENCES_MAX_WIDTH`] coordinates the squared distances as sums of
    /// squared differences (no matrix product; no near-pair pass, a difference cancels
    /// nothing; nor the squared norms of `a`'s rows, which only the product form needs).
    /// `b_sq`: the squared norms of `b`'s rows. The same bits on every CPU.
    pub(crate) fn block_loose_then<T: Send>(
        &self,
        mut m: MatMut<'_, f64>,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        b_sq: &[f64],
        then: impl Fn(usize, &mut [f64]) -> T + Sync,
    ) -> Vec<T> {
        if !self.is_radial() || a.ncols() > Self::DIFFERENCES_MAX_WIDTH {
            let a_sq = distance::row_sq_norms(a);
            return self.block_into_then::<true, T>(m, a, &a_sq, b, b_sq, Par::Seq, then);
        }
        super::check_block_shape(m.rb(), a, b);
        // The coordinates of `a` column by column, contiguous; one point of `b` at a time.
        let a = a.to_owned();
        let cols: Vec<&[f64]> = (0..a.ncols()).map(|k| a.col_as_slice(k)).collect();
        let mut point = vec![0.0; b.ncols()];
        (0..m.ncols())
            .map(|j| {
                point
                    .iter_mut()
                    .zip(b.row(j).iter())
                    .for_each(|(p, v)| *p = *v);
                let col = m
                    .rb_mut()
                    .col_mut(j)
                    .try_as_col_major_mut()
                    .expect("contiguous columns (checked above)")
                    .as_slice_mut();
                distance::sq_distances_by_differences(col, &cols, &point);
                self.apply_in_place::<true>(col);
                then(j, col)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{all_kernels, direct};
    use super::*;
    use crate::kernel::distance::row_sq_norms;
    use faer::Mat;

    /// The loose block is the kernel's values (from the definition, to 1e-14) and within
    /// 1e-13 of [`Kernel::block`]'s, for every kernel, on the differences path (1, 3 and
    /// 8 coordinates) and the product path (9 and 20); `then` sees each finished column
    /// in order.
    #[test]
    fn loose_block_is_the_kernel_to_rounding_on_both_paths() {
        for width in [1, 3, 8, 9, 20] {
            let a = Mat::from_fn(300, width, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin());
            let b = Mat::from_fn(40, width, |i, j| ((i * 5 + j) as f64 * 0.71).cos() * 0.8);
            let (a_sq, b_sq) = (row_sq_norms(a.as_ref()), row_sq_norms(b.as_ref()));
            for k in all_kernels() {
                let exact = k.block(a.as_ref(), &a_sq, b.as_ref(), &b_sq, Par::Seq);
                let mut m = Mat::<f64>::zeros(300, 40);
                let sums =
                    k.block_loose_then(m.as_mut(), a.as_ref(), b.as_ref(), &b_sq, |j, col| {
                        (j, col.iter().sum::<f64>())
                    });
                for (j, &(jj, s)) in sums.iter().enumerate() {
                    assert_eq!(jj, j);
                    assert_eq!(s, m.col_as_slice(j).iter().sum::<f64>(), "{}", k.name());
                }
                for j in 0..40 {
                    let bj: Vec<f64> = (0..width).map(|c| b[(j, c)]).collect();
                    for i in 0..300 {
                        let ai: Vec<f64> = (0..width).map(|c| a[(i, c)]).collect();
                        let (got, want) = (m[(i, j)], direct(&k, &ai, &bj));
                        let scale = want.abs().max(1.0);
                        assert!(
                            (got - want).abs() <= 1e-14 * scale,
                            "{} width {width}",
                            k.name()
                        );
                        assert!((got - exact[(i, j)]).abs() <= 1e-13 * scale, "{}", k.name());
                    }
                }
            }
        }
    }
}
