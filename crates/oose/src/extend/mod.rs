//! What every extension returns, and the row-chunked parallel driver shared by the
//! methods: new points are processed in chunks of rows so that the kernel block
//! (chunk × N) stays bounded whatever the number of new points, and chunks run in
//! parallel (rayon). Rows are independent, so the result does not depend on the
//! chunking (the extension is sample-wise, DESIGN.md).

pub(crate) mod local;
pub(crate) mod low_rank;
pub(crate) mod projection;
pub mod restricted;

use crate::error::{Error, Result};
use faer::{Mat, MatRef};
use rayon::prelude::*;

/// Coordinates of extended points and their per-point diagnostics (maths §4).
#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    /// M×d coordinates, one row per new point, in input order.
    pub coordinates: Mat<f64>,
    /// k₀(z, z) = P_X(z)², the squared power function: how much of z lies outside what
    /// the training set can represent (0 on training points). NaN when k(z, z) is
    /// unknown (a precomputed kernel extended without its diagonal).
    pub residual: Vec<f64>,
    /// Feature-space squared distance of z to the fitted d-dimensional principal
    /// subspace; ≥ `residual`.
    pub reconstruction_error: Vec<f64>,
    /// Method- and strategy-specific per-point diagnostics (named columns, one value per
    /// point), e.g. `beta_minus_projection`, `objective_projection`, `lambda`.
    pub extra: Vec<Column>,
}

/// A named per-point diagnostic.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Column name (as written in the CLI's CSV header).
    pub name: &'static str,
    /// One value per extended point.
    pub values: Vec<f64>,
}

/// How a new object is placed. `Projection` is every model's default placement (for
/// the inner-product embeddings the projection of maths §5; for t-SNE, interpolation);
/// the others belong to some methods and are refused by the rest, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// ŷ = Λ^{−1/2} Uᵀ b (Gower = Bengio = Nyström = Landmark-MDS triangulation); the
    /// default placement of every model.
    #[default]
    Projection,
    /// The global minimiser of 2||Xy − b||² + (yᵀy − β)² (Trosset–Priebe), one object
    /// at a time (the MDS family and kernel PCA).
    Restricted,
    /// t-SNE's and UMAP's default: the weighted geometric median of the nearest training
    /// points' positions (maths §12, §13).
    Interpolation,
    /// t-SNE: each new point's own KL divergence against the fixed reference, minimised
    /// from its interpolation (maths §12); UMAP: umap-learn's transform, the SGD moving
    /// the new point only (maths §13).
    Optimize,
}

crate::model::params::named!(Strategy, "strategy":
    Projection => "projection",
    Restricted => "restricted",
    Interpolation => "interpolation",
    Optimize => "optimize",
);

/// How kernel PCA computes a new point's kernel row (maths §20): against every
/// training point (`exact`), through the fit's pivots with a certified bound
/// (`low-rank`), or per row through the pivots when its bound is at most `tolerance`
/// times the embedding's largest |coordinate|, else exactly (`auto`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ExtensionChoice {
    /// Every training point (the reference).
    Exact,
    /// The pivots only; the column `lowrank_bound` bounds the distance to exact.
    LowRank,
    /// Row by row: low-rank where its bound is at most `tolerance` × max |embedding|.
    Auto {
        /// Relative tolerance on the bound (default [`ExtensionChoice::AUTO_TOLERANCE`]).
        tolerance: f64,
    },
}

impl ExtensionChoice {
    /// Every name, as the interfaces take them.
    pub const NAMES: [&'static str; 3] = ["exact", "low-rank", "auto"];

    /// `auto`'s default tolerance.
    pub const AUTO_TOLERANCE: f64 = 1e-8;

    /// The choice of a name in [`ExtensionChoice::NAMES`] (`auto` with `tolerance`, or
    /// the default when `None`); a tolerance with another choice, or one that is not
    /// positive and finite, is refused.
    pub fn from_name(name: &str, tolerance: Option<f64>) -> Result<Self> {
        let choice = match name {
            "exact" => ExtensionChoice::Exact,
            "low-rank" | "low_rank" => ExtensionChoice::LowRank,
            "auto" => {
                let t = tolerance.unwrap_or(Self::AUTO_TOLERANCE);
                crate::validate::positive("lowrank_tolerance", t)?;
                return Ok(ExtensionChoice::Auto { tolerance: t });
            }
            other => {
                return Err(Error::param(
                    "extension",
                    format!("unknown choice {other:?} (one of exact, low-rank, auto)"),
                ))
            }
        };
        if tolerance.is_some() {
            return Err(Error::param(
                "lowrank_tolerance",
                "applies only to extension=auto",
            ));
        }
        Ok(choice)
    }

    /// The name every interface uses.
    pub fn name(&self) -> &'static str {
        match self {
            ExtensionChoice::Exact => "exact",
            ExtensionChoice::LowRank => "low-rank",
            ExtensionChoice::Auto { .. } => "auto",
        }
    }
}

impl Extension {
    /// Number of extended points.
    pub fn len(&self) -> usize {
        self.coordinates.nrows()
    }

    /// True when no point was extended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The extension of rows computed in the order `perm` (row i of `self` is input row
    /// `perm[i]`), put back in input order.
    pub(crate) fn unpermuted(self, perm: &[usize]) -> Extension {
        let m = perm.len();
        let mut inv = vec![0; m];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        let back = |v: &[f64]| -> Vec<f64> { inv.iter().map(|&i| v[i]).collect() };
        Extension {
            coordinates: Mat::from_fn(m, self.coordinates.ncols(), |r, j| {
                self.coordinates[(inv[r], j)]
            }),
            residual: back(&self.residual),
            reconstruction_error: back(&self.reconstruction_error),
            extra: self
                .extra
                .iter()
                .map(|c| Column {
                    name: c.name,
                    values: back(&c.values),
                })
                .collect(),
        }
    }
}

/// Bytes of kernel block a chunk may hold.
const CHUNK_BYTES: usize = 4 << 20;

/// Rows per chunk for a kernel block with `width` columns.
pub(crate) fn chunk_rows(width: usize) -> usize {
    (CHUNK_BYTES / (8 * width.max(1))).clamp(64, 8192)
}

/// Chunks a batch of `m` rows at least is cut into (when they hold 64 rows or more),
/// so that the threads share the work evenly: two chunks of 8192 and 1808 rows kept one
/// of two threads idle for most of an extension.
const MIN_CHUNKS: usize = 16;

/// Applies `f(first_row, chunk)` to chunks of rows of `z` in parallel and stacks the
/// results in order. A chunk holds at most [`chunk_rows`]`(width)` rows and at most
/// 1/[`MIN_CHUNKS`] of the batch (64 rows at the least); `f` must treat rows
/// independently of the chunk they are in.
pub(crate) fn by_chunks<F>(z: MatRef<'_, f64>, width: usize, d: usize, f: F) -> Result<Extension>
where
    F: Fn(usize, MatRef<'_, f64>) -> Result<Extension> + Sync,
{
    let m = z.nrows();
    let rows = chunk_rows(width).min(m.div_ceil(MIN_CHUNKS).max(64));
    if m <= rows {
        return f(0, z);
    }
    let starts: Vec<usize> = (0..m).step_by(rows).collect();
    let parts: Vec<Extension> = starts
        .par_iter()
        .map(|&s| f(s, z.subrows(s, rows.min(m - s))))
        .collect::<Result<_>>()?;
    let mut coordinates = Mat::<f64>::zeros(m, d);
    let mut residual = Vec::with_capacity(m);
    let mut reconstruction_error = Vec::with_capacity(m);
    let mut extra: Vec<Column> = parts[0]
        .extra
        .iter()
        .map(|c| Column {
            name: c.name,
            values: Vec::with_capacity(m),
        })
        .collect();
    for (s, p) in starts.iter().zip(parts) {
        for (dst, src) in extra.iter_mut().zip(&p.extra) {
            dst.values.extend_from_slice(&src.values);
        }
        coordinates
            .as_mut()
            .subrows_mut(*s, p.len())
            .copy_from(p.coordinates.as_ref());
        residual.extend_from_slice(&p.residual);
        reconstruction_error.extend_from_slice(&p.reconstruction_error);
    }
    Ok(Extension {
        coordinates,
        residual,
        reconstruction_error,
        extra,
    })
}
