//! The one error type of the library. Every variant names its culprit (a parameter,
//! a row and column, a size) so that the message alone tells the user what to fix.

use thiserror::Error;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `oose`.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its domain (`epsilon <= 0`, `n_components = 0`, ...).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as used in every interface (SPEC names).
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{what}: non-finite value {value:?} at row {row}, column {col} (0-based)")]
    NonFinite {
        /// Which input ("training data", "new points", ...).
        what: &'static str,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        col: usize,
        /// The offending value.
        value: f64,
    },
    /// An input has no rows or no columns.
    #[error("{what} is empty ({rows} rows, {cols} columns)")]
    Empty {
        /// Which input.
        what: &'static str,
        /// Its number of rows.
        rows: usize,
        /// Its number of columns.
        cols: usize,
    },
    /// An input has the wrong shape.
    #[error("{what}: expected {expected}, got {got}")]
    Shape {
        /// Which input.
        what: &'static str,
        /// What was expected, in words ("3 columns").
        expected: String,
        /// What was given, in words.
        got: String,
    },
    /// Fewer positive eigenvalues than requested components.
    #[error("{}", too_few_eigenvalues(*requested, *available, *value, *tolerance))]
    NotEnoughPositiveEigenvalues {
        /// Components asked for.
        requested: usize,
        /// Eigenvalues above the tolerance.
        available: usize,
        /// The value of the `requested`-th eigenvalue.
        value: f64,
        /// The absolute tolerance used.
        tolerance: f64,
    },
    /// An entry violates what the input must be (a negative dissimilarity, an
    /// asymmetric pair, a non-zero diagonal).
    #[error("{what}: {reason} at row {row}, column {col} (0-based; value {value:?})")]
    InvalidValue {
        /// The input.
        what: &'static str,
        /// Row of the offending entry.
        row: usize,
        /// Column of the offending entry.
        col: usize,
        /// The entry.
        value: f64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A neighbourhood graph falls apart into several connected components.
    #[error(
        "the {graph} is disconnected: {} components, sizes {sizes:?} (largest first); {hint}",
        sizes.len()
    )]
    Disconnected {
        /// The graph, in words ("10-nearest-neighbour graph").
        graph: String,
        /// Component sizes, largest first.
        sizes: Vec<usize>,
        /// What to change.
        hint: &'static str,
    },
    /// A new point has no neighbour among the training points under the sparsity rule,
    /// so its extension is undefined (maths §7).
    #[error(
        "{what}: row {row} (0-based) has no neighbour among the training points under the \
         {rule} rule, so its extension is undefined; use a larger ε or k, or ask for NaN \
         with on_isolated = nan"
    )]
    Isolated {
        /// Which input.
        what: &'static str,
        /// 0-based row.
        row: usize,
        /// The sparsity rule in words.
        rule: String,
    },
    /// A result that must be finite is not: the arithmetic overflowed on this row (a
    /// row far larger than the training data, or a model file edited by hand).
    #[error("{what}: row {row} (0-based): {detail}")]
    Overflow {
        /// Which result ("extension of the new points", "training embedding", ...).
        what: &'static str,
        /// 0-based row.
        row: usize,
        /// What is not finite, and what to do.
        detail: &'static str,
    },
    /// The work needs more memory than the machine has available (planned before
    /// anything is allocated).
    #[error("{what} needs {needed} of memory, more than the {available} available")]
    OutOfMemory {
        /// What would be allocated ("kernel matrix (N×N)", ...).
        what: &'static str,
        /// The size needed, in words.
        needed: String,
        /// The memory available, in words.
        available: String,
    },
    #[error("eigensolver failed: {0}")]
    Eigensolver(String),
    /// An optimisation problem (MVU's semidefinite program) was not solved to the
    /// requested accuracy; nothing is returned rather than a wrong answer.
    #[error("{what} was not solved (status {status}): {detail}")]
    Unsolved {
        /// The problem.
        what: &'static str,
        /// The solver's status (`max-iterations`, `stalled`).
        status: &'static str,
        /// Iterations, residuals and what to change.
        detail: String,
    },
    /// The fit was asked to stop ([`crate::progress::request_stop`]: Ctrl-C in Python).
    #[error("interrupted: the fit was asked to stop")]
    Interrupted,
    /// A linear system that must be solved is singular (repeated points, too few
    /// points for a polynomial tail).
    #[error("{0}")]
    Singular(String),
    /// A model file or byte string could not be read.
    #[error("model: {0}")]
    Model(#[from] ModelError),
    /// The operation does not apply to this model or kernel.
    #[error("{0}")]
    Unsupported(String),
}

/// Why a model file could not be loaded.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelError {
    /// The bytes do not start with the oose magic.
    #[error("not an oose model file (wrong magic bytes)")]
    NotAModel,
    /// The file ends before the header or payload does.
    #[error("truncated model file: expected {expected} bytes, found {found}")]
    Truncated {
        /// Bytes the header announces.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The payload checksum does not match: the file was altered or damaged.
    #[error("corrupted model file: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum {
        /// CRC-32 stored in the header.
        stored: u32,
        /// CRC-32 of the payload as read (and of the version, from format 5).
        computed: u32,
    },
    /// The file was written by a newer oose.
    #[error("model format version {found} is newer than this oose supports (up to {supported}); upgrade oose")]
    NewerVersion {
        /// Version in the file.
        found: u32,
        /// Newest version this build reads.
        supported: u32,
    },
    /// The payload decodes to something inconsistent.
    #[error("corrupted model payload: {0}")]
    Corrupted(String),
}

impl Error {
    /// [`Error::InvalidValue`]: entry (`row`, `col`) of `what`, with its value.
    pub(crate) fn invalid(
        what: &'static str,
        (row, col): (usize, usize),
        value: f64,
        reason: &'static str,
    ) -> Self {
        Error::InvalidValue {
            what,
            row,
            col,
            value,
            reason,
        }
    }

    pub(crate) fn param(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }

    /// The same error about the parameter `name`: a table of names shared by two
    /// parameters (t-SNE's `neighbors` and `transform_search`) says which was given.
    pub(crate) fn about(self, name: &'static str) -> Self {
        match self {
            Error::InvalidParameter { reason, .. } => Error::InvalidParameter { name, reason },
            e => e,
        }
    }
}

/// [`Error::NotEnoughPositiveEigenvalues`]'s message: with none above the tolerance
/// there is nothing to embed, and a smaller tolerance is no remedy.
fn too_few_eigenvalues(requested: usize, available: usize, value: f64, tolerance: f64) -> String {
    let head = format!(
        "requested {requested} components but only {available} eigenvalue(s) are above the \
         tolerance {tolerance:?} (eigenvalue {requested} is {value:?})"
    );
    if available == 0 {
        format!("{head}: nothing to embed (do the points coincide?)")
    } else {
        format!(
            "{head}; ask for fewer components, or for a smaller rank_tolerance where \
             eigenvalue {requested} is not round-off"
        )
    }
}

/// The message a panic carried (`&str` or `String`; empty otherwise): what interfaces
/// report when they turn a bug into one line or an exception instead of a crash.
///
/// ```
/// let p = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(oose::error::panic_message(p.as_ref()), "boom 1");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
