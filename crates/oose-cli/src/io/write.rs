//! Writing rows as CSV (with a header line) or `.npy` (float64, C order, the row count
//! patched into the header at the end).

use super::{display, is_npy, write_error};
use crate::CliError;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

/// Writes rows as CSV with a header line, or as `.npy` (float64, C order).
pub struct MatrixWriter {
    name: String,
    kind: WKind,
    width: usize,
    rows: usize,
}

enum WKind {
    Csv(Box<dyn Write>),
    Npy(BufWriter<File>),
}

/// Fixed header size for `.npy` output, so the row count can be patched at the end.
const NPY_HEADER: usize = 128;

impl MatrixWriter {
    /// Creates `path` (`-` for stdout) with the given column names.
    pub fn create(path: &str, columns: &[String]) -> Result<Self, CliError> {
        let name = display(path, true);
        let err = |e: io::Error| write_error(&name, e);
        let kind = if path == "-" {
            let mut w: Box<dyn Write> =
                Box::new(BufWriter::with_capacity(1 << 16, io::stdout().lock()));
            writeln!(w, "{}", columns.join(",")).map_err(err)?;
            WKind::Csv(w)
        } else if is_npy(path) {
            let mut f = BufWriter::new(File::create(path).map_err(err)?);
            f.write_all(&npy_header(0, columns.len())).map_err(err)?;
            WKind::Npy(f)
        } else {
            let mut w: Box<dyn Write> = Box::new(BufWriter::with_capacity(
                1 << 16,
                File::create(path).map_err(err)?,
            ));
            writeln!(w, "{}", columns.join(",")).map_err(err)?;
            WKind::Csv(w)
        };
        Ok(MatrixWriter {
            name,
            kind,
            width: columns.len(),
            rows: 0,
        })
    }

    /// Appends rows; `cols` gives the columns of each row (all of equal length `m`).
    pub fn write_rows(&mut self, cols: &[&[f64]]) -> Result<(), CliError> {
        debug_assert_eq!(cols.len(), self.width);
        let m = cols.first().map_or(0, |c| c.len());
        let name = &self.name;
        let err = |e: io::Error| write_error(name, e);
        match &mut self.kind {
            WKind::Csv(w) => {
                let mut line = String::with_capacity(24 * self.width);
                for i in 0..m {
                    line.clear();
                    for (j, c) in cols.iter().enumerate() {
                        if j > 0 {
                            line.push(',');
                        }
                        // `{:?}` is Rust's shortest representation that round-trips.
                        use std::fmt::Write as _;
                        let _ = write!(line, "{:?}", c[i]);
                    }
                    line.push('\n');
                    w.write_all(line.as_bytes()).map_err(err)?;
                }
            }
            WKind::Npy(f) => {
                for i in 0..m {
                    for c in cols {
                        f.write_all(&c[i].to_le_bytes()).map_err(err)?;
                    }
                }
            }
        }
        self.rows += m;
        Ok(())
    }

    /// Passes what is buffered on (a stream's reader sees every chunk as it is done).
    pub fn flush(&mut self) -> Result<(), CliError> {
        let r = match &mut self.kind {
            WKind::Csv(w) => w.flush(),
            WKind::Npy(f) => f.flush(),
        };
        r.map_err(|e| write_error(&self.name, e))
    }

    /// Flushes, and for `.npy` writes the final row count into the header.
    pub fn finish(self) -> Result<(), CliError> {
        let name = self.name;
        let err = |e: io::Error| write_error(&name, e);
        match self.kind {
            WKind::Csv(mut w) => w.flush().map_err(err),
            WKind::Npy(f) => {
                let mut f = f.into_inner().map_err(|e| err(e.into_error()))?;
                f.seek(SeekFrom::Start(0)).map_err(err)?;
                f.write_all(&npy_header(self.rows, self.width))
                    .map_err(err)?;
                f.flush().map_err(err)
            }
        }
    }
}

fn npy_header(rows: usize, cols: usize) -> Vec<u8> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    let mut h = Vec::with_capacity(NPY_HEADER);
    h.extend_from_slice(b"\x93NUMPY\x01\x00");
    h.extend_from_slice(&((NPY_HEADER - 10) as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    while h.len() < NPY_HEADER - 1 {
        h.push(b' ');
    }
    h.push(b'\n');
    h
}

/// Writes a whole matrix with column names `c1..cd`.
pub fn write_matrix(path: &str, m: oose::faer::MatRef<'_, f64>) -> Result<(), CliError> {
    let names: Vec<String> = (1..=m.ncols()).map(|j| format!("c{j}")).collect();
    let mut w = MatrixWriter::create(path, &names)?;
    let cols: Vec<Vec<f64>> = (0..m.ncols())
        .map(|j| (0..m.nrows()).map(|i| m[(i, j)]).collect())
        .collect();
    let refs: Vec<&[f64]> = cols.iter().map(|c| c.as_slice()).collect();
    w.write_rows(&refs)?;
    w.finish()
}
