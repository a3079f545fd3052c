//! The fitted-model enum and its versioned file format.
//!
//! Layout (little endian): 8 magic bytes `b"OOSE\0MDL"`, format version (u32), payload
//! length (u64), CRC-32 of the payload (u32), then the postcard-encoded [`Model`].
//! A foreign, truncated, corrupted or newer-version file is a typed [`ModelError`].

pub mod stored;

use crate::error::Error;
use crate::error::{ModelError, Result};
use crate::extend::restricted::Joint;
use crate::extend::{Extension, Strategy};
use crate::methods::diffusion_maps::{
    DiffusionCore, FittedDiffusionMaps, FittedEigenmaps, FittedSpectralClustering,
};
use crate::methods::interpolate::FittedInterpolator;
use crate::methods::isomap::FittedIsomap;
use crate::methods::kernel_pca::FittedKernelPca;
use crate::methods::landmark_mds::FittedLandmarkMds;
use crate::methods::mds::{Cmds, FittedMds};
use crate::methods::pca::FittedPca;
use crate::methods::OutOfSample;
use faer::MatRef;
use serde::{Deserialize, Serialize};

/// Magic bytes at the start of every model file.
pub const MAGIC: [u8; 8] = *b"OOSE\0MDL";
/// Newest format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 8 + 4;

/// Any fitted model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
// Models are few and long-lived; boxing the large variant would only add indirection.
#[allow(clippy::large_enum_variant)]
pub enum Model {
    /// Linear PCA.
    Pca(FittedPca),
    /// Kernel PCA.
    KernelPca(FittedKernelPca),
    /// Classical MDS.
    Mds(FittedMds),
    /// Landmark MDS.
    LandmarkMds(FittedLandmarkMds),
    /// Isomap.
    Isomap(FittedIsomap),
    /// Diffusion maps.
    DiffusionMaps(FittedDiffusionMaps),
    /// Laplacian eigenmaps.
    Eigenmaps(FittedEigenmaps),
    /// Spectral clustering.
    SpectralClustering(FittedSpectralClustering),
    /// Kernel interpolation of values on the training points.
    Interpolate(FittedInterpolator),
}

impl From<FittedInterpolator> for Model {
    fn from(m: FittedInterpolator) -> Self {
        Model::Interpolate(m)
    }
}

impl From<FittedDiffusionMaps> for Model {
    fn from(m: FittedDiffusionMaps) -> Self {
        Model::DiffusionMaps(m)
    }
}

impl From<FittedEigenmaps> for Model {
    fn from(m: FittedEigenmaps) -> Self {
        Model::Eigenmaps(m)
    }
}

impl From<FittedSpectralClustering> for Model {
    fn from(m: FittedSpectralClustering) -> Self {
        Model::SpectralClustering(m)
    }
}

impl From<FittedMds> for Model {
    fn from(m: FittedMds) -> Self {
        Model::Mds(m)
    }
}

impl From<FittedLandmarkMds> for Model {
    fn from(m: FittedLandmarkMds) -> Self {
        Model::LandmarkMds(m)
    }
}

impl From<FittedIsomap> for Model {
    fn from(m: FittedIsomap) -> Self {
        Model::Isomap(m)
    }
}

impl From<FittedPca> for Model {
    fn from(m: FittedPca) -> Self {
        Model::Pca(m)
    }
}

impl From<FittedKernelPca> for Model {
    fn from(m: FittedKernelPca) -> Self {
        Model::KernelPca(m)
    }
}

impl Model {
    /// The method's name as used on the command line.
    pub fn method(&self) -> &'static str {
        match self {
            Model::Pca(_) => "pca",
            Model::KernelPca(_) => "kpca",
            Model::Mds(_) => "mds",
            Model::LandmarkMds(_) => "landmark-mds",
            Model::Isomap(_) => "isomap",
            Model::DiffusionMaps(_) => "dmaps",
            Model::Eigenmaps(_) => "eigenmaps",
            Model::SpectralClustering(_) => "spectral-clustering",
            Model::Interpolate(_) => "interpolate",
        }
    }

    fn inner(&self) -> &dyn OutOfSample {
        match self {
            Model::Pca(m) => m,
            Model::KernelPca(m) => m,
            Model::Mds(m) => m,
            Model::LandmarkMds(m) => m,
            Model::Isomap(m) => m,
            Model::DiffusionMaps(m) => m,
            Model::Eigenmaps(m) => m,
            Model::SpectralClustering(m) => m,
            Model::Interpolate(m) => m,
        }
    }

    /// Extends with an explicit strategy (SPEC §5): projection for every model;
    /// restricted reconstruction for the MDS family and centred kernel PCA.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        match (self, strategy) {
            (_, Strategy::Projection) => self.extend(new),
            (Model::Mds(m), s) => m.extend_with(new, s),
            (Model::LandmarkMds(m), s) => m.extend_with(new, s),
            (Model::Isomap(m), s) => m.extend_with(new, s),
            (Model::KernelPca(m), s) => m.extend_with(new, s),
            (Model::Pca(_), _) => Err(Error::Unsupported(
                "restricted reconstruction is for similarity-based models (mds, landmark-mds, \
                 isomap, kpca); PCA of points is classical MDS: fit `mds` instead"
                    .into(),
            )),
            (_, _) => Err(Error::Unsupported(format!(
                "restricted reconstruction is for the inner-product embeddings (mds, \
                 landmark-mds, isomap, kpca), not {}",
                self.method()
            ))),
        }
    }

    /// Joint restricted reconstruction of several new objects (the MDS family and kernel
    /// PCA; `mutual` only for classical MDS of proximity data).
    pub fn extend_joint(
        &self,
        new: MatRef<'_, f64>,
        mutual: Option<MatRef<'_, f64>>,
    ) -> Result<Joint> {
        let no_mutual = |m: &str| {
            Err(Error::param(
                "mutual",
                format!("{m} computes the new points' mutual proximities itself; do not pass them"),
            ))
        };
        match (self, mutual) {
            (Model::Mds(m), _) => m.extend_joint(new, mutual),
            (Model::LandmarkMds(m), None) => m.extend_joint(new),
            (Model::Isomap(m), None) => m.extend_joint(new),
            (Model::KernelPca(m), None) => m.extend_joint(new),
            (Model::LandmarkMds(_), Some(_)) => no_mutual("landmark-mds"),
            (Model::Isomap(_), Some(_)) => no_mutual("isomap"),
            (Model::KernelPca(_), Some(_)) => no_mutual("kpca"),
            _ => Err(Error::Unsupported(format!(
                "joint restricted reconstruction is available for mds, landmark-mds, isomap and kpca models, not {}",
                self.method()
            ))),
        }
    }

    /// `steps + 1` points on the arc from projection to restricted reconstruction of
    /// each new object, `(object, λ, y)` (the MDS family and kernel PCA).
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        match self {
            Model::Mds(m) => m.arc(new, steps),
            Model::LandmarkMds(m) => m.arc(new, steps),
            Model::Isomap(m) => m.arc(new, steps),
            Model::KernelPca(m) => m.arc(new, steps),
            _ => Err(Error::Unsupported(format!(
                "the arc is available for mds, landmark-mds, isomap and kpca models, not {}",
                self.method()
            ))),
        }
    }

    fn cmds(&self) -> Option<&Cmds> {
        match self {
            Model::Mds(m) => Some(m.core()),
            Model::LandmarkMds(m) => Some(m.core()),
            Model::Isomap(m) => Some(m.core()),
            _ => None,
        }
    }

    /// Encodes the model with header and checksum.
    ///
    /// ```
    /// use oose::methods::pca::Pca;
    /// use oose::model::Model;
    /// let x = oose::datasets::s_curve(50, 0.0, 1).points;
    /// let m: Model = Pca::default().fit(x.as_ref()).unwrap().into();
    /// let bytes = m.to_bytes();
    /// assert_eq!(Model::from_bytes(&bytes).unwrap(), m);
    /// assert!(Model::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload =
            postcard::to_allocvec(self).expect("serialising a model to memory cannot fail");
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Decodes bytes written by [`Model::to_bytes`], checking magic, version, length,
    /// checksum and the internal consistency of the payload.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        let found = bytes.len() as u64;
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) && !bytes.is_empty() {
                return Err(ModelError::Truncated {
                    expected: HEADER_LEN as u64,
                    found,
                }
                .into());
            }
            return Err(ModelError::NotAModel.into());
        }
        if bytes.len() < HEADER_LEN {
            return Err(ModelError::Truncated {
                expected: HEADER_LEN as u64,
                found,
            }
            .into());
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if version > FORMAT_VERSION {
            return Err(ModelError::NewerVersion {
                found: version,
                supported: FORMAT_VERSION,
            }
            .into());
        }
        if version == 0 {
            return Err(ModelError::Corrupted("format version 0 does not exist".into()).into());
        }
        let len = u64::from_le_bytes(bytes[12..20].try_into().unwrap());
        let stored = u32::from_le_bytes(bytes[20..24].try_into().unwrap());
        let expected = (HEADER_LEN as u64).saturating_add(len);
        if found < expected {
            return Err(ModelError::Truncated { expected, found }.into());
        }
        if found > expected {
            return Err(ModelError::Corrupted(format!(
                "{} bytes after the end of the payload",
                found - expected
            ))
            .into());
        }
        let payload = &bytes[HEADER_LEN..];
        let computed = crc32fast::hash(payload);
        if computed != stored {
            return Err(ModelError::Checksum { stored, computed }.into());
        }
        let model: Model = postcard::from_bytes(payload)
            .map_err(|e| ModelError::Corrupted(format!("payload does not decode: {e}")))?;
        let ok = match &model {
            Model::Pca(m) => m.is_consistent(),
            Model::KernelPca(m) => m.is_consistent(),
            Model::Mds(m) => m.is_consistent(),
            Model::LandmarkMds(m) => m.is_consistent(),
            Model::Isomap(m) => m.is_consistent(),
            Model::DiffusionMaps(m) => m.is_consistent(),
            Model::Eigenmaps(m) => m.is_consistent(),
            Model::SpectralClustering(m) => m.is_consistent(),
            Model::Interpolate(m) => m.is_consistent(),
        };
        if !ok {
            return Err(
                ModelError::Corrupted("matrix sizes in the payload disagree".into()).into(),
            );
        }
        Ok(model)
    }

    /// `(key, value)` lines describing the model: method, parameters actually used
    /// (the ε chosen), sizes, eigenvalues, solver, format version.
    pub fn info(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = vec![
            ("method".into(), self.method().into()),
            ("format_version".into(), FORMAT_VERSION.to_string()),
            ("n_components".into(), self.n_components().to_string()),
            ("input_width".into(), self.input_width().to_string()),
            ("n_train".into(), self.embedding().nrows().to_string()),
        ];
        let fmt = |xs: &[f64]| {
            xs.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Model::Pca(m) => {
                v.push(("eigenvalues".into(), fmt(m.eigenvalues())));
                v.push(("residual_rank".into(), m.residual_rank().to_string()));
                v.push((
                    "rank_tolerance".into(),
                    format!("{:?}", m.params().rank_tolerance),
                ));
            }
            Model::KernelPca(m) => {
                let p = m.params();
                v.push(("kernel".into(), p.kernel.name().into()));
                if let Some(e) = p.kernel.epsilon() {
                    v.push(("epsilon".into(), format!("{e:?}")));
                }
                match p.kernel {
                    crate::kernel::Kernel::InverseMultiquadric { beta, .. }
                    | crate::kernel::Kernel::Multiquadric { beta, .. } => {
                        v.push(("beta".into(), format!("{beta:?}")))
                    }
                    crate::kernel::Kernel::Polynomial {
                        gamma,
                        coef0,
                        degree,
                    } => {
                        v.push(("gamma".into(), format!("{gamma:?}")));
                        v.push(("coef0".into(), format!("{coef0:?}")));
                        v.push(("degree".into(), degree.to_string()));
                    }
                    _ => {}
                }
                v.push(("centering".into(), p.centering.to_string()));
                let (s, note) = m.solver_used();
                v.push(("solver".into(), s.name().into()));
                if let Some(n) = note {
                    v.push(("solver_note".into(), n.into()));
                }
                v.push(("eigenvalues".into(), fmt(m.eigenvalues())));
                v.push(("residual_rank".into(), m.residual_rank().to_string()));
                v.push(("rank_tolerance".into(), format!("{:?}", p.rank_tolerance)));
            }
            Model::Mds(m) => {
                v.push(("input".into(), m.input().name().into()));
            }
            Model::LandmarkMds(m) => {
                let p = m.params();
                v.push(("n_landmarks".into(), m.landmark_indices().len().to_string()));
                v.push((
                    "landmarks".into(),
                    format!("{:?}", p.landmarks).to_lowercase(),
                ));
                v.push(("seed".into(), p.seed.to_string()));
            }
            Model::Isomap(m) => {
                let p = m.params();
                v.push(("n_neighbors".into(), p.n_neighbors.to_string()));
                v.push(("largest_component".into(), p.largest_component.to_string()));
                v.push(("n_embedded".into(), m.kept().len().to_string()));
            }
            Model::DiffusionMaps(m) => {
                let p = m.params();
                v.push(("output".into(), p.output.name().into()));
                v.push(("t".into(), format!("{:?}", p.t)));
                v.push(("density".into(), format!("{:?}", p.density).to_lowercase()));
                diffusion_info(&mut v, m.core());
                v.push(("eigenvalues".into(), fmt(m.eigenvalues())));
            }
            Model::Eigenmaps(m) => {
                diffusion_info(&mut v, m.core());
                v.push((
                    "laplacian_eigenvalues".into(),
                    fmt(&m.laplacian_eigenvalues()),
                ));
            }
            Model::Interpolate(m) => {
                let p = m.params();
                v.push(("kernel".into(), p.kernel.name().into()));
                if let Some(e) = p.kernel.epsilon() {
                    v.push(("epsilon".into(), format!("{e:?}")));
                }
                v.push(("regularization".into(), format!("{:?}", p.regularization)));
                if let Some(d) = p.geometric_harmonics {
                    v.push(("geometric_harmonics_delta".into(), format!("{d:?}")));
                }
                v.push((
                    "tail_degree".into(),
                    m.tail_degree().map_or("none".into(), |d| d.to_string()),
                ));
                v.push(("norm_h_squared".into(), fmt(m.norms_squared())));
                v.push((
                    "residual_rank".into(),
                    m.residual_rank()
                        .map_or("n/a (conditionally positive definite kernel)".into(), |r| {
                            r.to_string()
                        }),
                ));
            }
            Model::SpectralClustering(m) => {
                v.push(("n_clusters".into(), m.params().n_clusters.to_string()));
                v.push(("seed".into(), m.params().seed.to_string()));
                v.push(("inertia".into(), format!("{:?}", m.inertia())));
                diffusion_info(&mut v, m.core());
                v.push(("eigenvalues".into(), fmt(m.core().eigenvalues())));
            }
        }
        if let Some(c) = self.cmds() {
            let (s, note) = c.solver_used();
            v.push(("solver".into(), s.name().into()));
            if let Some(n) = note {
                v.push(("solver_note".into(), n.into()));
            }
            v.push(("eigenvalues".into(), fmt(c.eigenvalues())));
            if !matches!(self, Model::Isomap(_)) {
                v.push((
                    "negative_eigenvalues".into(),
                    if c.negative_eigenvalues().is_empty() {
                        "none".into()
                    } else {
                        fmt(c.negative_eigenvalues())
                    },
                ));
            }
            v.push((
                "residual_rank".into(),
                c.residual_rank()
                    .map_or("n/a (B is not positive semidefinite)".into(), |r| {
                        r.to_string()
                    }),
            ));
        }
        v
    }
}

/// Kernel lines shared by the diffusion-kernel models.
fn diffusion_info(v: &mut Vec<(String, String)>, c: &DiffusionCore) {
    use crate::methods::diffusion_maps::{Epsilon, Sparsity};
    let spec = c.spec();
    v.push(("alpha".into(), format!("{:?}", spec.alpha)));
    v.push(("epsilon".into(), format!("{:?}", c.epsilon())));
    v.push((
        "epsilon_rule".into(),
        match spec.epsilon {
            Epsilon::Median => "median".into(),
            Epsilon::LogSlope => "log-slope".into(),
            Epsilon::Value(_) => "given".into(),
        },
    ));
    if let Some(d) = c.dimension_estimate() {
        v.push(("dimension_estimate".into(), format!("{d:.3}")));
    }
    match spec.sparsity {
        Sparsity::Dense => v.push(("sparsity".into(), "dense".into())),
        Sparsity::Knn(k) => {
            v.push(("sparsity".into(), "knn".into()));
            v.push(("n_neighbors".into(), k.to_string()));
        }
        Sparsity::Threshold(e) => {
            v.push(("sparsity".into(), "threshold".into()));
            v.push(("threshold".into(), format!("{e:?}")));
        }
    }
    v.push(("nnz".into(), c.nnz().to_string()));
    let (s, note) = c.solver_used();
    v.push(("solver".into(), s.name().into()));
    if let Some(n) = note {
        v.push(("solver_note".into(), n.into()));
    }
    v.push((
        "residual_rank".into(),
        c.residual_rank()
            .map_or("n/a (residual not computed)".into(), |r| r.to_string()),
    ));
}

impl OutOfSample for Model {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.inner().embedding()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.inner().extend(new)
    }

    fn input_width(&self) -> usize {
        self.inner().input_width()
    }
}
