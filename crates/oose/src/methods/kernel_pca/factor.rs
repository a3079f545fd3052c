//! Kernel PCA's low-rank route (maths §2): the sample that tells `solver = auto` when
//! not to attempt it.

use crate::error::Result;
use crate::kernel::Kernel;
use crate::rng::Rng;
use faer::MatRef;

/// Seed of the sample [`sample_rank_exceeds`] factors.
const SAMPLE_SEED: u64 = 0x5A4D_9E7A;

/// Whether a fixed-seed sample of 5·`max_rank`/4 of the rows of `x` already needs more
/// than `max_rank` pivots; `None` when the sample would be all of them. The sample's
/// kernel matrix is a principal submatrix of K, whose eigenvalues interlace K's: K has
/// at least as many eigenvalues above any threshold as the sample. The greedy pivot
/// count follows the eigenvalue count (not exactly), so when the sample alone exceeds
/// the rank the low-rank route gives up at, the attempt on all N points would be
/// wasted; the sample costs about a third of it (m·r² against N·r², m = 5N/16). A
/// misjudged case costs time only: both routes give the same fit to round-off.
pub(super) fn sample_rank_exceeds(
    x: MatRef<'_, f64>,
    kernel: Kernel,
    tol: f64,
    max_rank: usize,
) -> Result<Option<usize>> {
    let n = x.nrows();
    let m = max_rank + max_rank / 4;
    if m >= n || max_rank == 0 {
        return Ok(None);
    }
    let mut rows = Rng::new(SAMPLE_SEED).sample_indices(n, m);
    rows.sort_unstable();
    let xs = crate::datasets::select_rows(x, &rows);
    let f = kernel.pivoted_factor(xs.as_ref(), tol, max_rank)?;
    Ok((!f.complete).then_some(m))
}
