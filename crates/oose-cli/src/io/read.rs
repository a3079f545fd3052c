//! Reading a matrix of points in chunks of rows: `.npy` (its header checked against what
//! the input holds) and CSV (lines capped), from files or pipes.

use super::{display, is_npy};
use crate::CliError;
use oose::faer::Mat;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

/// The longest CSV line read (bytes): a longer one is refused, naming it, instead of
/// growing without bound (a stream without line breaks).
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// The most values in one CSV line or `.npy` row.
pub const MAX_WIDTH: usize = 1 << 24;
/// The most bytes of numbers in one chunk: chunks of wide rows hold fewer rows.
const CHUNK_BYTES: usize = 64 << 20;

/// Reads a matrix of points in chunks of rows.
///
/// Nothing is allocated beyond what the input actually holds: a `.npy` header is
/// checked against the file's size (or, on a pipe, the data are read as they come), a
/// CSV line is capped at [`MAX_LINE_BYTES`], and a chunk holds at most 64 MiB of
/// numbers whatever the row count asked for.
pub struct MatrixReader {
    name: String,
    kind: Kind,
    width: Option<usize>,
    rows_read: usize,
    /// Stop a chunk early when the next read would wait for the producer (pipes), so
    /// that a stream answers promptly.
    prompt: bool,
}

type Input = BufReader<Box<dyn Read + Send>>;

enum Kind {
    Csv {
        lines: Input,
        line_no: usize,
        buf: String,
    },
    Npy {
        input: Input,
        rows_left: usize,
        f32: bool,
        big_endian: bool,
        /// Bytes after the data are checked for at the end (when the size was unknown).
        check_tail: bool,
    },
    /// Fortran-order `.npy`: read whole (its size checked first), then served in chunks.
    Whole { data: Mat<f64>, next: usize },
}

impl MatrixReader {
    /// Opens `path` (`-` for stdin; `.npy` by extension, CSV otherwise).
    pub fn open(path: &str) -> Result<Self, CliError> {
        let name = display(path, false);
        let (input, size, regular): (Box<dyn Read + Send>, Option<u64>, bool) = if path == "-" {
            (Box::new(io::stdin()), None, false)
        } else {
            let f = File::open(path)
                .map_err(|e| CliError::data(format!("{name}: cannot open: {e}")))?;
            let meta = f.metadata().ok();
            let regular = meta.as_ref().is_some_and(|m| m.is_file());
            let size = meta.filter(|m| m.is_file()).map(|m| m.len());
            (Box::new(f), size, regular)
        };
        Self::from_reader(name, input, is_npy(path), size, !regular)
    }

    /// Reads `input`, named `name` in messages: `.npy` when `npy`, else CSV. `size` is
    /// the number of bytes it holds where that is known (a regular file); `prompt`
    /// ends chunks early when no more input is waiting (pipes).
    pub fn from_reader(
        name: String,
        input: Box<dyn Read + Send>,
        npy: bool,
        size: Option<u64>,
        prompt: bool,
    ) -> Result<Self, CliError> {
        let input = BufReader::with_capacity(1 << 16, input);
        let mut r = if npy {
            Self::npy(name, input, size)?
        } else {
            MatrixReader {
                name,
                kind: Kind::Csv {
                    lines: input,
                    line_no: 0,
                    buf: String::new(),
                },
                width: None,
                rows_read: 0,
                prompt: false,
            }
        };
        r.prompt = prompt;
        Ok(r)
    }

    fn npy(name: String, mut input: Input, size: Option<u64>) -> Result<Self, CliError> {
        let bad = |why: &str| CliError::data(format!("{name}: not a readable .npy file: {why}"));
        let mut pre = [0u8; 8];
        input
            .read_exact(&mut pre)
            .map_err(|_| bad("shorter than its header"))?;
        if &pre[..6] != b"\x93NUMPY" {
            return Err(bad("wrong magic bytes"));
        }
        let (hlen, prefix) = match pre[6] {
            1 => {
                let mut b = [0u8; 2];
                input
                    .read_exact(&mut b)
                    .map_err(|_| bad("truncated header"))?;
                (u16::from_le_bytes(b) as usize, 10)
            }
            2 | 3 => {
                let mut b = [0u8; 4];
                input
                    .read_exact(&mut b)
                    .map_err(|_| bad("truncated header"))?;
                (u32::from_le_bytes(b) as usize, 12)
            }
            v => return Err(bad(&format!("unknown format version {v}"))),
        };
        if hlen > 1 << 20 {
            return Err(bad("header too long"));
        }
        let mut h = vec![0u8; hlen];
        input
            .read_exact(&mut h)
            .map_err(|_| bad("truncated header"))?;
        let h = String::from_utf8_lossy(&h).to_string();
        let descr = dict_value(&h, "descr").ok_or_else(|| bad("no 'descr' in header"))?;
        let descr = descr.trim_matches(|c| c == '\'' || c == '"');
        let (f32, big_endian) = match descr {
            "<f8" | "|f8" | "=f8" => (false, false),
            ">f8" => (false, true),
            "<f4" | "|f4" | "=f4" => (true, false),
            ">f4" => (true, true),
            other => {
                return Err(CliError::data(format!(
                    "{name}: dtype {other:?} is not supported; save the array as float64 or float32"
                )))
            }
        };
        let fortran =
            dict_value(&h, "fortran_order").ok_or_else(|| bad("no 'fortran_order' in header"))?;
        let fortran = match fortran.trim() {
            "True" => true,
            "False" => false,
            other => return Err(bad(&format!("fortran_order is {other:?}"))),
        };
        let shape = dict_value(&h, "shape").ok_or_else(|| bad("no 'shape' in header"))?;
        let dims: Vec<usize> = shape
            .trim_matches(|c| c == '(' || c == ')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<usize>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad(&format!("unreadable shape {shape:?}")))?;
        if dims.len() != 2 {
            return Err(CliError::data(format!(
                "{name}: expected a 2-D array (points × coordinates), got shape {shape:?}"
            )));
        }
        let (rows, cols) = (dims[0], dims[1]);
        if cols == 0 && rows > 0 {
            return Err(CliError::data(format!(
                "{name}: shape {shape}: rows without coordinates"
            )));
        }
        if cols > MAX_WIDTH {
            return Err(CliError::data(format!(
                "{name}: shape {shape}: more than {MAX_WIDTH} coordinates per row"
            )));
        }
        let item = if f32 { 4u64 } else { 8 };
        let bytes = (rows as u64)
            .checked_mul(cols as u64)
            .and_then(|v| v.checked_mul(item))
            .ok_or_else(|| bad(&format!("shape {shape} overflows the size of any file")))?;
        if let Some(size) = size {
            let have = size.saturating_sub((prefix + hlen) as u64);
            if have < bytes {
                return Err(CliError::data(format!(
                    "{name}: truncated .npy data: shape {shape} needs {bytes} bytes, the file has {have}"
                )));
            }
            if have > bytes {
                return Err(CliError::data(format!(
                    "{name}: {} bytes after the .npy data (shape {shape} needs {bytes})",
                    have - bytes
                )));
            }
        }
        let mut r = MatrixReader {
            name,
            kind: Kind::Npy {
                input,
                rows_left: rows,
                f32,
                big_endian,
                check_tail: size.is_none(),
            },
            width: Some(cols),
            rows_read: 0,
            prompt: false,
        };
        if fortran {
            // Column-major data cannot be served row by row without all of it; its size
            // was checked against the file (or is read as it comes from a pipe).
            let mut all = Mat::<f64>::zeros(0, 0);
            if let Kind::Npy { input, .. } = &mut r.kind {
                let vals = read_numbers(input, rows * cols, f32, big_endian, &r.name)?;
                all = Mat::from_fn(rows, cols, |i, j| vals[j * rows + i]);
                check_end(input, &r.name)?;
            }
            r.kind = Kind::Whole { data: all, next: 0 };
        }
        Ok(r)
    }

    /// The file's name as shown in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of rows and columns where the header tells them (`.npy`), before
    /// any row is read; `None` for CSV.
    pub fn shape(&self) -> Option<(usize, usize)> {
        match &self.kind {
            Kind::Npy { rows_left, .. } => Some((self.rows_read + rows_left, self.width?)),
            Kind::Whole { data, .. } => Some((data.nrows(), data.ncols())),
            Kind::Csv { .. } => None,
        }
    }

    /// Rows of the current width that fit in one chunk's byte budget.
    fn budget_rows(&self, max_rows: usize) -> usize {
        let w = self.width.unwrap_or(1).max(1);
        max_rows.min((CHUNK_BYTES / (8 * w)).max(1))
    }

    /// The next at most `max_rows` rows, or `None` at the end. Non-finite values are
    /// reported with their row and column (1-based, as a person counts them). On a
    /// pipe the chunk ends early, with at least one row, when no more input is waiting.
    pub fn next_chunk(&mut self, max_rows: usize) -> Result<Option<Mat<f64>>, CliError> {
        let max_rows = self.budget_rows(max_rows.max(1));
        let prompt = self.prompt;
        let chunk = match &mut self.kind {
            Kind::Csv {
                lines,
                line_no,
                buf,
            } => {
                let mut rows: Vec<Vec<f64>> = Vec::new();
                let mut cap = max_rows;
                while rows.len() < cap {
                    if prompt && !rows.is_empty() && lines.buffer().is_empty() {
                        break;
                    }
                    buf.clear();
                    let n = (&mut *lines)
                        .take(MAX_LINE_BYTES as u64 + 1)
                        .read_line(buf)
                        .map_err(|e| {
                            let why = if e.kind() == io::ErrorKind::InvalidData {
                                "not UTF-8 text".to_string()
                            } else {
                                format!("read error: {e}")
                            };
                            CliError::data(format!("{}: line {}: {why}", self.name, *line_no + 1))
                        })?;
                    if n == 0 {
                        break;
                    }
                    *line_no += 1;
                    if n > MAX_LINE_BYTES {
                        return Err(CliError::data(format!(
                            "{}: line {}: longer than {} MiB",
                            self.name,
                            line_no,
                            MAX_LINE_BYTES >> 20
                        )));
                    }
                    let mut line = buf.trim();
                    if *line_no == 1 {
                        // A UTF-8 byte-order mark, as some spreadsheets write.
                        line = line.trim_start_matches('\u{feff}').trim_start();
                    }
                    if line.is_empty() {
                        continue;
                    }
                    let fields = line.split(',').count();
                    if fields > MAX_WIDTH {
                        return Err(CliError::data(format!(
                            "{}: line {}: more than {MAX_WIDTH} values",
                            self.name, line_no
                        )));
                    }
                    let parsed: Result<Vec<f64>, usize> = line
                        .split(',')
                        .enumerate()
                        .map(|(c, f)| f.trim().parse::<f64>().map_err(|_| c))
                        .collect();
                    let vals = match parsed {
                        Ok(v) => v,
                        Err(c) => {
                            // A first line made only of non-numbers is a header: keep its
                            // width, skip it.
                            let header = self.rows_read == 0
                                && rows.is_empty()
                                && self.width.is_none()
                                && *line_no == 1
                                && line.split(',').all(|f| f.trim().parse::<f64>().is_err());
                            if header {
                                self.width = Some(fields);
                                continue;
                            }
                            return Err(CliError::data(format!(
                                "{}: line {}, column {}: not a number: {:?}",
                                self.name,
                                line_no,
                                c + 1,
                                line.split(',').nth(c).unwrap_or("").trim()
                            )));
                        }
                    };
                    match self.width {
                        None => self.width = Some(vals.len()),
                        Some(w) if w != vals.len() => {
                            return Err(CliError::data(format!(
                                "{}: line {}: {} values, but earlier lines have {w} (ragged rows)",
                                self.name,
                                line_no,
                                vals.len()
                            )))
                        }
                        _ => {}
                    }
                    if rows.is_empty() {
                        cap = max_rows.min((CHUNK_BYTES / (8 * vals.len().max(1))).max(1));
                    }
                    if let Some(c) = vals.iter().position(|v| !v.is_finite()) {
                        return Err(CliError::data(format!(
                            "{}: line {}, column {}: non-finite value {}",
                            self.name,
                            line_no,
                            c + 1,
                            vals[c]
                        )));
                    }
                    rows.push(vals);
                }
                if rows.is_empty() {
                    None
                } else {
                    let w = rows[0].len();
                    Some(Mat::from_fn(rows.len(), w, |i, j| rows[i][j]))
                }
            }
            Kind::Npy {
                input,
                rows_left,
                f32,
                big_endian,
                check_tail,
            } => {
                let w = self.width.unwrap_or(0);
                let row_bytes = w * if *f32 { 4 } else { 8 };
                let mut take = (*rows_left).min(max_rows);
                if prompt && take > 1 && row_bytes > 0 {
                    // What is waiting (at least one row): a stream answers promptly.
                    let waiting = input.buffer().len() / row_bytes;
                    take = take.min(waiting.max(1));
                }
                if take == 0 {
                    if *check_tail {
                        *check_tail = false;
                        check_end(input, &self.name)?;
                    }
                    None
                } else {
                    let vals = read_numbers(input, take * w, *f32, *big_endian, &self.name)?;
                    *rows_left -= take;
                    Some(Mat::from_fn(take, w, |i, j| vals[i * w + j]))
                }
            }
            Kind::Whole { data, next } => {
                let take = (data.nrows() - *next).min(max_rows);
                if take == 0 {
                    None
                } else {
                    let m = data.as_ref().subrows(*next, take).to_owned();
                    *next += take;
                    Some(m)
                }
            }
        };
        if let Some(m) = &chunk {
            if !matches!(self.kind, Kind::Csv { .. }) {
                for j in 0..m.ncols() {
                    for i in 0..m.nrows() {
                        if !m[(i, j)].is_finite() {
                            return Err(CliError::data(format!(
                                "{}: row {}, column {}: non-finite value {}",
                                self.name,
                                self.rows_read + i + 1,
                                j + 1,
                                m[(i, j)]
                            )));
                        }
                    }
                }
            }
            self.rows_read += m.nrows();
        }
        Ok(chunk)
    }

    /// Reads everything that is left; an input without any data row is an error.
    pub fn read_all(mut self) -> Result<Mat<f64>, CliError> {
        self.prompt = false;
        let mut parts = Vec::new();
        while let Some(c) = self.next_chunk(1 << 16)? {
            parts.push(c);
        }
        let n: usize = parts.iter().map(|p| p.nrows()).sum();
        let w = self.width.unwrap_or(0);
        if n == 0 || w == 0 {
            return Err(CliError::data(format!(
                "{}: empty input (no data rows)",
                self.name
            )));
        }
        Ok(oose::linalg::stack_rows(&parts, w))
    }
}

/// The text of `key`'s value in a Python dict literal (the `.npy` header).
fn dict_value<'a>(h: &'a str, key: &str) -> Option<&'a str> {
    let k1 = format!("'{key}'");
    let at = h.find(&k1)? + k1.len();
    let rest = h[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

/// Reads `count` numbers. The buffer grows with the data that actually arrive (a header
/// may promise more than a pipe delivers), never to the promised size up front.
fn read_numbers(
    input: &mut Input,
    count: usize,
    f32: bool,
    big: bool,
    name: &str,
) -> Result<Vec<f64>, CliError> {
    let size = if f32 { 4 } else { 8 };
    let want = count
        .checked_mul(size)
        .ok_or_else(|| CliError::data(format!("{name}: .npy shape overflows")))?;
    let mut bytes = Vec::with_capacity(want.min(CHUNK_BYTES));
    let got = input
        .take(want as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::data(format!("{name}: read error: {e}")))?;
    if got < want {
        return Err(CliError::data(format!("{name}: truncated .npy data")));
    }
    Ok(bytes
        .chunks_exact(size)
        .map(|b| match (f32, big) {
            (false, false) => f64::from_le_bytes(b.try_into().unwrap()),
            (false, true) => f64::from_be_bytes(b.try_into().unwrap()),
            (true, false) => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            (true, true) => f32::from_be_bytes(b.try_into().unwrap()) as f64,
        })
        .collect())
}

/// Refuses bytes after the data a `.npy` header announces (read from a pipe).
fn check_end(input: &mut Input, name: &str) -> Result<(), CliError> {
    let mut one = [0u8; 1];
    match input.read(&mut one) {
        Ok(0) => Ok(()),
        Ok(_) => Err(CliError::data(format!(
            "{name}: bytes after the .npy data the header announces"
        ))),
        Err(e) => Err(CliError::data(format!("{name}: read error: {e}"))),
    }
}
