//! The rows a Nyström fit reads: sources read chunk by chunk (`Rows`), where a streamed
//! fit sends the training coordinates (`Sink`), and the blocks each chunk is cut into.

use crate::error::{Error, Result};
use crate::validate;
use faer::{Mat, MatMut, MatRef};

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

/// `f(first_row, block, scratch)` on consecutive blocks of `step` rows of `chunk`, as
/// many at a time as there are threads, each result handed to `consume` in block order
/// as soon as its group of blocks (one per thread) is done: only a group's results are
/// held at once. `scratch` is a buffer of the thread running `f`, kept from block to
/// block (its contents are whatever the last block left; [`scratch_mat`]), so that a
/// block's kernel rows need no fresh allocation.
pub(super) fn for_blocks<T: Send>(
    chunk: MatRef<'_, f64>,
    step: usize,
    f: impl Fn(usize, MatRef<'_, f64>, &mut Mat<f64>) -> Result<T> + Sync,
    mut consume: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    use rayon::prelude::*;
    use std::sync::Mutex;
    let n = chunk.nrows();
    let threads = rayon::current_num_threads().max(1);
    let starts: Vec<usize> = (0..n).step_by(step.max(1)).collect();
    // One buffer per worker thread, by its index in the pool. A buffer is only taken by
    // the thread it belongs to, one block at a time; should it be held all the same (a
    // thread that re-entered `f` while waiting), the block gets a buffer of its own
    // instead of waiting for the lock.
    let scratch: Vec<Mutex<Mat<f64>>> = (0..threads).map(|_| Mutex::new(Mat::new())).collect();
    for group in starts.chunks(threads) {
        let parts: Vec<T> = group
            .par_iter()
            .map(|&s| {
                let block = chunk.subrows(s, step.min(n - s));
                let slot = rayon::current_thread_index().unwrap_or(0) % threads;
                match scratch[slot].try_lock() {
                    Ok(mut buffer) => f(s, block, &mut buffer),
                    Err(std::sync::TryLockError::Poisoned(e)) => f(s, block, &mut e.into_inner()),
                    Err(std::sync::TryLockError::WouldBlock) => f(s, block, &mut Mat::new()),
                }
            })
            .collect::<Result<_>>()?;
        for part in parts {
            consume(part)?;
        }
    }
    Ok(())
}

/// `buffer` as an m×r matrix to be overwritten: made anew (zeros) when its shape differs,
/// so that it is laid out exactly as a fresh `Mat::zeros(m, r)` — faer's products can
/// round differently on another layout (a one-row block), and a row's bits must not
/// depend on whether its block's storage was reused.
pub(super) fn scratch_mat(buffer: &mut Mat<f64>, m: usize, r: usize) -> MatMut<'_, f64> {
    if buffer.nrows() != m || buffer.ncols() != r {
        *buffer = Mat::zeros(m, r);
    }
    buffer.as_mut()
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
