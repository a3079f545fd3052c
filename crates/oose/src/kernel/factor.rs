//! The pivoted Cholesky factor of a kernel matrix on points, from blocks of kernel
//! columns (maths §2): only the pivots' columns are formed, a look-ahead's worth at a
//! time (`factorize_blocks`).

use super::distance::row_sq_norms;
use super::Kernel;
use crate::error::{Error, Result};
use crate::linalg::pivoted_cholesky::{factorize_blocks, Factorization};
use faer::{MatRef, Par};

impl Kernel {
    /// Refuses a row whose k(x, x) the arithmetic overflowed (`x_sq`: the rows' squared
    /// norms), naming it. |k(x, y)| ≤ sqrt(k(x, x) k(y, y)) for a positive definite
    /// kernel: a finite diagonal keeps every value of its matrix finite.
    pub(crate) fn check_diagonal(self, x_sq: &[f64]) -> Result<()> {
        match x_sq.iter().position(|&s| !self.diag_value(s).is_finite()) {
            Some(row) => Err(Error::Overflow {
                what: "kernel matrix",
                row,
                detail: "k(x, x) is not finite: the arithmetic overflowed (rescale the data, \
                         or choose kernel parameters that keep it finite)",
            }),
            None => Ok(()),
        }
    }

    /// The greedy pivoted Cholesky factor of this kernel's matrix on the rows of `x`,
    /// stopping at the relative tolerance `tol` or after `max_rank` pivots. A row whose
    /// k(x, x) overflowed is refused by name ([`Kernel::check_diagonal`]): it would be
    /// no pivot and stop the factorisation at once.
    pub(crate) fn pivoted_factor(
        self,
        x: MatRef<'_, f64>,
        tol: f64,
        max_rank: usize,
    ) -> Result<Factorization> {
        let x_sq = row_sq_norms(x);
        self.check_diagonal(&x_sq)?;
        let diag: Vec<f64> = x_sq.iter().map(|&s| self.diag_value(s)).collect();
        Ok(factorize_blocks(diag, tol, max_rank, |ps, mut out| {
            let xc = crate::datasets::select_rows(x, ps);
            let sq: Vec<f64> = ps.iter().map(|&p| x_sq[p]).collect();
            self.block_into(out.as_mut(), x, &x_sq, xc.as_ref(), &sq, Par::rayon(0));
            for (a, &p) in ps.iter().enumerate() {
                out[(p, a)] = self.diag_value(x_sq[p]);
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Epsilon;
    use crate::linalg::pivoted_cholesky::factorize;
    use crate::rng::Rng;

    /// A row whose k(x, x) overflowed is refused by name, not left out of the pivots
    /// (where it stopped the factorisation at once: no pivot is above ∞ · tol).
    #[test]
    fn an_overflowed_diagonal_is_named() {
        let mut x = Rng::new(32).normal_mat(20, 3);
        for c in 0..3 {
            x[(7, c)] *= 1e110;
        }
        let k = Kernel::Polynomial {
            gamma: 1.0,
            coef0: 1.0,
            degree: 3,
        };
        let Err(e) = k.pivoted_factor(x.as_ref(), 1e-12, 20) else {
            panic!("an overflowed diagonal was factored");
        };
        assert!(
            matches!(
                e,
                Error::Overflow {
                    what: "kernel matrix",
                    row: 7,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    /// The blocked factor chooses the pivots of the one-column algorithm on the same
    /// kernel (columns formed one at a time, as P-greedy and the diffusion low-rank
    /// parts did), with the same factor up to round-off, stopping at the tolerance and
    /// at `max_rank`.
    #[test]
    fn pivoted_factor_takes_the_one_column_pivots() {
        let x = Rng::new(31).normal_mat(300, 5);
        let x_sq = row_sq_norms(x.as_ref());
        // Full rank; stopped at max_rank; stopped by the tolerance.
        for (eps, max_rank, rank) in [(2.0, 300, 300), (2.0, 40, 40), (2000.0, 300, 0)] {
            let k = Kernel::Gaussian {
                epsilon: Epsilon::Value(eps),
            };
            let want = factorize(vec![1.0; 300], 1e-12, max_rank, |p, out| {
                let c = k.block(x.as_ref(), &x_sq, x.subrows(p, 1), &x_sq[p..=p], Par::Seq);
                out.copy_from_slice(c.col_as_slice(0));
                out[p] = 1.0;
            });
            let got = k.pivoted_factor(x.as_ref(), 1e-12, max_rank).unwrap();
            assert_eq!(
                got.chol.pivots, want.chol.pivots,
                "ε = {eps}, max_rank {max_rank}"
            );
            assert_eq!(got.complete, want.complete);
            // L Lᵀ = K[S, S] to round-off (entry by entry the two factors agree only
            // to cond(K[S, S]) times it: 1.5e-9 at ε = 2000).
            let (l, s) = (got.chol.l(), &got.chol.pivots);
            let kss = k.block(x.as_ref(), &x_sq, x.as_ref(), &x_sq, Par::Seq);
            let llt = l * l.transpose();
            for a in 0..s.len() {
                for b in 0..s.len() {
                    let want = if a == b { 1.0 } else { kss[(s[a], s[b])] };
                    assert!((llt[(a, b)] - want).abs() <= 1e-13, "ε = {eps}: ({a}, {b})");
                }
            }
            if rank > 0 {
                assert_eq!(got.chol.rank(), rank);
                for (a, b) in got.chol.l.iter().zip(&want.chol.l) {
                    assert!((a - b).abs() <= 1e-9, "ε = {eps}: {a} vs {b}");
                }
            } else {
                assert!(got.complete && got.chol.rank() < 150, "{}", got.chol.rank());
            }
        }
    }
}
