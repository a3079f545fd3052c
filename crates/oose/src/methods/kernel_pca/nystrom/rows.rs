//! The rows a Nyström fit reads: sources read chunk by chunk (`Rows`), where a streamed
//! fit sends the training coordinates (`Sink`), and the blocks each chunk is cut into.

use crate::error::{Error, Result};
use crate::validate;
use faer::MatRef;

/// Where a streamed fit sends each chunk's training coordinates: `(first_row, y)`.
pub type Sink<'a> = &'a mut dyn FnMut(usize, MatRef<'_, f64>) -> Result<()>;

/// Rows read chunk by chunk, in order (a matrix in memory, a file, a cluster's blocks).
pub trait Rows {
    /// (N, D).
    fn shape(&self) -> (usize, usize);
    /// Calls `f(first_row, chunk)` for consecutive chunks that cover every row once, in
    /// order.
    fn for_each_chunk(
        &mut self,
        f: &mut dyn FnMut(usize, MatRef<'_, f64>) -> Result<()>,
    ) -> Result<()>;
}

/// A matrix in memory, in chunks of [`NystromPlan::chunk_rows`](super::NystromPlan::chunk_rows) rows.
pub struct InMemory<'a>(pub MatRef<'a, f64>, pub usize);

impl Rows for InMemory<'_> {
    fn shape(&self) -> (usize, usize) {
        (self.0.nrows(), self.0.ncols())
    }
    fn for_each_chunk(
        &mut self,
        f: &mut dyn FnMut(usize, MatRef<'_, f64>) -> Result<()>,
    ) -> Result<()> {
        let n = self.0.nrows();
        let step = self.1.max(1);
        for s in (0..n).step_by(step) {
            f(s, self.0.subrows(s, step.min(n - s)))?;
        }
        Ok(())
    }
}

/// `f(first_row, block)` on consecutive blocks of `step` rows of `chunk`, as many at a
/// time as there are threads, results in order.
pub(super) fn in_blocks<T: Send>(
    chunk: MatRef<'_, f64>,
    step: usize,
    f: impl Fn(usize, MatRef<'_, f64>) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for_blocks(chunk, step, f, |part| {
        out.push(part);
        Ok(())
    })?;
    Ok(out)
}

/// [`in_blocks`], each block's result handed to `consume` in block order as soon as its
/// group of blocks (one per thread) is done: only a group's results are held at once.
pub(super) fn for_blocks<T: Send>(
    chunk: MatRef<'_, f64>,
    step: usize,
    f: impl Fn(usize, MatRef<'_, f64>) -> Result<T> + Sync,
    mut consume: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    use rayon::prelude::*;
    let n = chunk.nrows();
    let starts: Vec<usize> = (0..n).step_by(step.max(1)).collect();
    for group in starts.chunks(rayon::current_num_threads().max(1)) {
        let parts: Vec<T> = group
            .par_iter()
            .map(|&s| f(s, chunk.subrows(s, step.min(n - s))))
            .collect::<Result<_>>()?;
        for part in parts {
            consume(part)?;
        }
    }
    Ok(())
}

/// Checks that a chunk starting at row `start` is finite, naming the row of the whole.
pub(super) fn finite_from(start: usize, chunk: MatRef<'_, f64>) -> Result<()> {
    validate::finite("training data", chunk).map_err(|e| match e {
        Error::NonFinite {
            what,
            row,
            col,
            value,
        } => Error::NonFinite {
            what,
            row: row + start,
            col,
            value,
        },
        e => e,
    })
}
