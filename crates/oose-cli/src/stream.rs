//! The streamed Nyström fit of `oose fit kpca --landmarks R` (maths §21): the input
//! file is read three times in chunks (sample, sums, embedding), so memory is
//! O(r² + chunk) whatever its size; the training embedding goes to `--embedding`
//! chunk by chunk.

use crate::io::{MatrixReader, MatrixWriter};
use crate::CliError;
use oose::faer::MatRef;
use oose::methods::kernel_pca::{NystromKpca, Rows, Sink};
use oose::model::params::Values;
use oose::model::{Method, Model};
use std::cell::RefCell;

/// Rows of a file, re-read from the start for each pass.
struct FileRows<'a> {
    path: &'a str,
    shape: (usize, usize),
    /// The first file error, kept with its exit status (the library sees a stop).
    failure: &'a RefCell<Option<CliError>>,
}

/// Rows per chunk read from the file.
const READ_ROWS: usize = 1 << 16;

impl FileRows<'_> {
    fn pass(
        &self,
        f: &mut dyn FnMut(usize, MatRef<'_, f64>) -> oose::Result<()>,
    ) -> Result<oose::Result<()>, CliError> {
        let mut r = MatrixReader::open(self.path)?;
        let mut start = 0;
        while let Some(chunk) = r.next_chunk(READ_ROWS)? {
            if chunk.ncols() != self.shape.1 {
                return Err(CliError::data(format!(
                    "{}: {} columns at row {}, {} before",
                    self.path,
                    chunk.ncols(),
                    start + 1,
                    self.shape.1
                )));
            }
            if let Err(e) = f(start, chunk.as_ref()) {
                return Ok(Err(e));
            }
            start += chunk.nrows();
        }
        if start != self.shape.0 {
            return Err(CliError::data(format!(
                "{}: {start} rows on this pass, {} on the first (the file changed while it \
                 was read)",
                self.path, self.shape.0
            )));
        }
        Ok(Ok(()))
    }
}

impl Rows for FileRows<'_> {
    fn shape(&self) -> (usize, usize) {
        self.shape
    }

    fn for_each_chunk(
        &mut self,
        f: &mut dyn FnMut(usize, MatRef<'_, f64>) -> oose::Result<()>,
    ) -> oose::Result<()> {
        match self.pass(f) {
            Ok(r) => r,
            Err(e) => {
                *self.failure.borrow_mut() = Some(e);
                Err(oose::Error::Interrupted)
            }
        }
    }
}

/// The shape of the file at `path`: from the `.npy` header, else by counting.
fn shape_of(path: &str) -> Result<(usize, usize), CliError> {
    let mut r = MatrixReader::open(path)?;
    if let Some(s) = r.shape() {
        return Ok(s);
    }
    let (mut n, mut d) = (0, 0);
    while let Some(c) = r.next_chunk(READ_ROWS)? {
        n += c.nrows();
        d = c.ncols();
    }
    Ok((n, d))
}

/// Fits kernel PCA through landmarks on the file at `path` with `values`, streaming
/// the training embedding to `embedding` when given (the model then keeps none);
/// `named` turns the library's errors into the command line's (parameters by flag).
pub fn fit_nystrom(
    values: &Values,
    path: &str,
    embedding: Option<&str>,
    named: impl Fn(oose::Error) -> CliError,
) -> Result<Model, CliError> {
    let p = NystromKpca::from_values(values).map_err(&named)?;
    let failure = RefCell::new(None);
    let mut rows = FileRows {
        path,
        shape: shape_of(path)?,
        failure: &failure,
    };
    let d = p.n_components;
    let mut writer = match embedding {
        Some(out) => Some(MatrixWriter::create(
            out,
            &(0..d).map(|j| format!("y{j}")).collect::<Vec<_>>(),
        )?),
        None => None,
    };
    let write_failure = RefCell::new(None);
    let mut sink = |_: usize, y: MatRef<'_, f64>| -> oose::Result<()> {
        let w = writer.as_mut().expect("a sink only with a writer");
        let cols: Vec<&[f64]> = (0..y.ncols())
            .map(|j| {
                y.col(j)
                    .try_as_col_major()
                    .expect("column-major")
                    .as_slice()
            })
            .collect();
        w.write_rows(&cols).map_err(|e| {
            *write_failure.borrow_mut() = Some(e);
            oose::Error::Interrupted
        })
    };
    let sink: Option<Sink<'_>> = if embedding.is_some() {
        Some(&mut sink)
    } else {
        None
    };
    let fitted = p.fit_rows(&mut rows, sink);
    if let Some(e) = failure.into_inner().or(write_failure.into_inner()) {
        return Err(e);
    }
    let fitted = fitted.map_err(&named)?;
    if let Some(w) = writer {
        w.finish()?;
    }
    Ok(Model::from(fitted))
}
