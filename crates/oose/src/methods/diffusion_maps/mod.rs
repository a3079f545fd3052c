//! Diffusion maps (maths §7): gaussian weights, optionally sparsified (kNN with the
//! mirror rule for new points, or a threshold η), α-normalisation, the symmetric
//! kernel k = D^{−1/2} W^(α) D^{−1/2}, its top eigenpairs, and four output flavours.
//! The Nyström extension of a new point uses its own density and degree; with the
//! training density it reproduces every training point exactly.
//!
//! The kernel machinery ([`DiffusionKernel`], [`DiffusionCore`]) is shared with
//! Laplacian eigenmaps and spectral clustering.
//!
//! Files: [`params`] (the kernel's parameters), `weights` (W and its normalisation),
//! `core` (the fitted kernel), `extend` (new points), `maps` and `eigenmaps` (the two
//! embeddings); spectral clustering is `methods::spectral_clustering`.

use crate::diagnostics::novelty::{Novelty, Pending};
use crate::diagnostics::residual::ResidualFactor;
use crate::error::{Error, Result};
use crate::extend::{by_chunks, Column, Extension};
use crate::kernel::distance::row_sq_norms;
/// The one ε type of the crate, re-exported where the diffusion kernel is built.
pub use crate::kernel::Epsilon;

/// σ of the shift-invert eigensolver: Lanczos runs on ((1 + σ)I − k)⁻¹ (the wanted
/// eigenvalues of a diffusion kernel lie 1e-3 to 1e-1 below 1).
const SHIFT_INVERT_SIGMA: f64 = 1e-4;
use crate::kernel::{fast_exp, Kernel};
use crate::linalg::eigen::{top_eigen_below_top, Solver, Symmetric};

use crate::linalg::pivoted_cholesky::factorize;
use crate::linalg::sparse::SymCsr;
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::neighbors::balls::{locality_groups, Links, PointIndex, Scratch};
use crate::validate;
use faer::{Mat, MatRef, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

mod core;
mod eigenmaps;
mod extend;
mod low_rank;
mod maps;
pub mod params;
pub(crate) mod weights;

pub use self::core::DiffusionCore;
pub use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};
pub use eigenmaps::{FittedEigenmaps, LaplacianEigenmaps};
pub use maps::{DiffusionMaps, FittedDiffusionMaps, Output};
pub use params::{Density, DiffusionKernel, OnIsolated, Sparsity};
pub use weights::{NormalisedKernel, Weights};
#[allow(unused_imports)]
pub(crate) use {self::core::*, extend::*, maps::*, weights::*};
