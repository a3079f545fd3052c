//! # oose — dimensionality reduction with out-of-sample extension
//!
//! Fit an embedding once (PCA, kernel PCA, MDS, Isomap, diffusion maps, Laplacian
//! eigenmaps, spectral clustering, LLE, MVU, t-SNE, UMAP, autoencoders, kernel
//! interpolation), then place new points into it without refitting, and get for every
//! new point a number that says whether the training set represents it: the novelty
//! score ([`diagnostics::novelty`]: a distance in the data's units, its calibrated
//! p-value and a flag at a level α you choose), and for the kernel methods the residual
//! k₀(z, z), the squared power function.
//!
//! The pipeline is visible in the modules: input → [`kernel`] → spectral fit
//! ([`linalg`], [`methods`]) → fitted [`model`] → [`extend`] → [`diagnostics`].
//! The mathematics is written out in the repository's `docs/maths.md`; module docs cite
//! it as "maths §N" (its section N) and the source papers by the short names of
//! `docs/bibliography.md` ("[Wang 2018]"). How methods are registered and what a new
//! method touches: `docs/design.md`.
//!
//! ```
//! use oose::prelude::*;
//!
//! let data = oose::datasets::swiss_roll(400, 0.05, false, 0).points;
//! let (train, new) = (data.as_ref().subrows(0, 360), data.as_ref().subrows(360, 40));
//! let model = KernelPca { n_components: 2, ..Default::default() }.fit(train).unwrap();
//! let ext = model.extend(new).unwrap();
//! assert_eq!(ext.coordinates.nrows(), 40);
//! assert!(ext.residual.iter().zip(&ext.reconstruction_error).all(|(r, e)| r <= &(e + 1e-9)));
//! ```

pub mod datasets;
pub mod diagnostics;
pub mod error;
pub mod extend;
pub mod kernel;
pub mod linalg;
pub mod methods;
pub mod metric;
pub mod model;
pub mod neighbors;
pub mod progress;
pub mod rng;
#[cfg(test)]
mod testing;
mod validate;

pub use error::{Error, ModelError, Result};
pub use faer;

/// The names most programs need: every method's parameter struct (its `fit` gives the
/// fitted model), the contract ([`OutOfSample`](crate::methods::OutOfSample): `extend`,
/// `embedding`), the type-erased [`Model`](crate::model::Model) with its options, and the
/// vocabulary the parameters use.
///
/// ```
/// use oose::prelude::*;
/// let x = oose::datasets::swiss_roll(300, 0.05, false, 0).points;
/// let model = DiffusionMaps::default().fit(x.as_ref()).unwrap();
/// assert_eq!(model.extend(x.as_ref().subrows(0, 5)).unwrap().coordinates.nrows(), 5);
/// ```
pub mod prelude {
    pub use crate::error::{Error, Result};
    pub use crate::extend::{Extension, Strategy};
    pub use crate::kernel::{Epsilon, Kernel};
    pub use crate::linalg::eigen::Solver;
    pub use crate::methods::diffusion_maps::{
        Density, DiffusionKernel, DiffusionMaps, FittedDiffusionMaps, FittedEigenmaps,
        LaplacianEigenmaps, OnIsolated, Sparsity,
    };
    pub use crate::methods::interpolate::{FittedInterpolator, Interpolator};
    pub use crate::methods::isomap::{FittedIsomap, Isomap};
    pub use crate::methods::kernel_pca::{FittedKernelPca, KernelPca};
    pub use crate::methods::landmark_mds::{FittedLandmarkMds, LandmarkMds, Landmarks};
    pub use crate::methods::mds::{ClassicalMds, FittedMds, Proximity};
    pub use crate::methods::pca::{FittedPca, Pca};
    pub use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};
    pub use crate::methods::OutOfSample;
    pub use crate::model::{ExtendOptions, Input, Model};
}
