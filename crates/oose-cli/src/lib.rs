//! The library half of the `oose` command-line tool: its error type, the data-file
//! readers and writers (`.npy` and CSV, streamed in chunks), and the fuzz harness that
//! exercises them and the model decoder (`examples/fuzz.rs`).

pub mod fuzz;
pub mod io;

use std::io::Write as _;

/// An error to report: its message and the exit status.
#[derive(Debug)]
pub struct CliError {
    /// 2 = bad usage, 1 = bad data or files.
    pub code: u8,
    /// One line naming the culprit.
    pub message: String,
}

impl CliError {
    /// Bad data or files (exit status 1).
    pub fn data(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: message.into(),
        }
    }

    /// Bad usage (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: message.into(),
        }
    }
}

impl CliError {
    /// The reader of our output went away (a closed pipe): end quietly, with success,
    /// as Unix tools do.
    pub fn broken_pipe() -> Self {
        CliError {
            code: 0,
            message: String::new(),
        }
    }

    /// Whether this is [`CliError::broken_pipe`].
    pub fn is_broken_pipe(&self) -> bool {
        self.code == 0
    }

    /// Prefixes the message with the file it is about.
    pub fn in_file(mut self, file: &str) -> Self {
        self.message = format!("{file}: {}", self.message);
        self
    }
}

impl From<oose::Error> for CliError {
    fn from(e: oose::Error) -> Self {
        let code = match e {
            oose::Error::InvalidParameter { .. } | oose::Error::Unsupported(_) => 2,
            _ => 1,
        };
        CliError {
            code,
            message: e.to_string(),
        }
    }
}

/// Writes one line of a report to standard output: a full disk or a closed stdout is a
/// [`CliError`] (never a panic, as `println!` would give).
pub fn print_line(args: std::fmt::Arguments<'_>) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{args}")
        .and_then(|_| out.flush())
        .map_err(|e| io::write_error("<stdout>", e))
}

/// `println!` that returns a [`CliError`] on failure: `say!("x: {}", x)?`.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => {
        $crate::print_line(format_args!($($t)*))
    };
}
