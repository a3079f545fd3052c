//! One module per method. Each has a parameter struct with defaults and a `fit` that
//! returns a fitted model implementing [`OutOfSample`].

pub mod autoencoder;
pub mod diffusion_maps;
pub mod interpolate;
pub mod isomap;
pub mod kernel_pca;
pub mod landmark_mds;
pub mod landmarks;
pub mod lle;
pub mod mds;
pub mod mvu;
pub mod pca;
pub mod spectral_clustering;
pub mod tsne;
pub mod umap;

use crate::error::Result;
use crate::extend::Extension;
use faer::MatRef;

/// The one contract every fitted model follows (DESIGN.md).
pub trait OutOfSample {
    /// The training embedding (N×d).
    fn embedding(&self) -> MatRef<'_, f64>;

    /// Embeds new points without refitting; one row per input row, in order, with
    /// per-point diagnostics. Rows do not influence each other.
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension>;

    /// Number of columns `extend` expects (the data dimension, or N for a
    /// precomputed kernel).
    fn input_width(&self) -> usize;

    /// Embedding dimension d.
    fn n_components(&self) -> usize {
        self.embedding().ncols()
    }
}
