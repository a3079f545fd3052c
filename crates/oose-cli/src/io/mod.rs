//! Data files: `.npy` (f64 or f32, 2-D) and CSV (comma-separated numbers, one point per
//! row, an optional header line of non-numbers), read and written in chunks of rows so
//! that `extend` streams.
//!
//! The `.npy` reader and writer are hand-written (the format is a short text header
//! and raw little-endian numbers): ndarray-npy reads whole arrays only, and streaming
//! is part of the command-line contract.

mod read;
mod write;

pub use read::{MatrixReader, MAX_LINE_BYTES, MAX_WIDTH};
pub use write::{write_matrix, MatrixWriter};

use crate::CliError;
use std::io;

/// Whether a path names a `.npy` file.
pub fn is_npy(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".npy")
}

/// How a path is named in messages: `-` is standard input or output.
pub(crate) fn display(path: &str, output: bool) -> String {
    match (path, output) {
        ("-", false) => "<stdin>".into(),
        ("-", true) => "<stdout>".into(),
        _ => path.to_string(),
    }
}

/// A write error on `name`: a closed pipe ends the program quietly, as Unix tools do
/// (the reader has all it wanted); anything else names the file.
pub fn write_error(name: &str, e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::broken_pipe()
    } else {
        CliError::data(format!("{name}: cannot write: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oose::faer::Mat;

    fn tmp(name: &str) -> String {
        let d = std::env::temp_dir().join(format!("oose-io-{}-{name}", std::process::id()));
        d.to_string_lossy().to_string()
    }

    #[test]
    fn npy_round_trip_in_chunks() {
        let p = tmp("a.npy");
        let m = Mat::from_fn(7, 3, |i, j| (i * 3 + j) as f64 * 0.1);
        write_matrix(&p, m.as_ref()).unwrap();
        let mut r = MatrixReader::open(&p).unwrap();
        let a = r.next_chunk(4).unwrap().unwrap();
        let b = r.next_chunk(4).unwrap().unwrap();
        assert!(r.next_chunk(4).unwrap().is_none());
        assert_eq!((a.nrows(), b.nrows()), (4, 3));
        assert_eq!(b[(2, 1)], m[(6, 1)]);
        std::fs::remove_file(p).ok();
    }

    #[test]
    fn csv_with_header_and_errors() {
        let p = tmp("b.csv");
        std::fs::write(&p, "x,y\n1,2\n3, 4.5\n").unwrap();
        let m = MatrixReader::open(&p).unwrap().read_all().unwrap();
        assert_eq!((m.nrows(), m.ncols(), m[(1, 1)]), (2, 2, 4.5));
        std::fs::write(&p, "1,2\n3\n").unwrap();
        let e = MatrixReader::open(&p).unwrap().read_all().unwrap_err();
        assert!(
            e.message.contains("line 2") && e.message.contains("ragged"),
            "{}",
            e.message
        );
        std::fs::write(&p, "1,2\n3,nan\n").unwrap();
        let e = MatrixReader::open(&p).unwrap().read_all().unwrap_err();
        assert!(e.message.contains("line 2, column 2"), "{}", e.message);
        std::fs::write(&p, "").unwrap();
        let e = MatrixReader::open(&p).unwrap().read_all().unwrap_err();
        assert!(e.message.contains("empty"), "{}", e.message);
        std::fs::remove_file(p).ok();
    }

    #[test]
    fn round_trip_formatting_is_exact() {
        let p = tmp("c.csv");
        let vals = [0.1, 1.0 / 3.0, 1e-300, -2.5e17, f64::MIN_POSITIVE];
        let m = Mat::from_fn(5, 1, |i, _| vals[i]);
        write_matrix(&p, m.as_ref()).unwrap();
        let back = MatrixReader::open(&p).unwrap().read_all().unwrap();
        for i in 0..5 {
            assert_eq!(back[(i, 0)], vals[i]);
        }
        std::fs::remove_file(p).ok();
    }
}
