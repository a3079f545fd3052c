//! The fitted model (a [`FittedMethod`] and its novelty score) and its versioned file
//! format.
//!
//! Layout (little endian): 8 magic bytes `b"OOSE\0MDL"`, format version (u32), payload
//! length (u64), CRC-32 of the payload (u32), then the postcard-encoded [`Model`]
//! (version 3: the fitted method, the novelty score, then the interface's annotations;
//! version 2, still read: without the annotations; version 1, still read: the fitted
//! method alone, its novelty score fitted again on reading).
//! A foreign, truncated, corrupted or newer-version file is a typed [`ModelError`].

mod finite;
pub mod method;
pub mod params;
pub(crate) mod specs;

pub use method::{Configuration, ExtendOptions, Fitted, InnerProduct, Input, InputKinds, Method};

use crate::diagnostics::novelty::{self, check_alpha, Novelty};
use crate::error::Error;
use crate::error::{ModelError, Result};
use crate::extend::restricted::Joint;
use crate::extend::{Extension, Strategy};
use crate::methods::diffusion_maps::{
    DiffusionMaps, FittedDiffusionMaps, FittedEigenmaps, LaplacianEigenmaps, OnIsolated,
};
use crate::methods::interpolate::{FittedInterpolator, Interpolator};
use crate::methods::isomap::{FittedIsomap, Isomap};
use crate::methods::kernel_pca::{FittedKernelPca, KernelPca};
use crate::methods::landmark_mds::{FittedLandmarkMds, LandmarkMds};
use crate::methods::mds::{ClassicalMds, FittedMds};
use crate::methods::pca::{FittedPca, Pca};
use crate::methods::spectral_clustering::{FittedSpectralClustering, SpectralClustering};
use crate::methods::OutOfSample;
use faer::MatRef;
use params::{ParamList, ParamSpec, Values};
use serde::{Deserialize, Serialize};

/// Magic bytes at the start of every model file.
pub const MAGIC: [u8; 8] = *b"OOSE\0MDL";
/// Newest format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 3;
const HEADER_LEN: usize = 8 + 4 + 8 + 4;

/// The registry: every method, once. Each line names the `Model` variant, the fitted
/// type and the parameter struct (which implements [`Method`]). The order is the
/// on-disk variant index of model files: append only (a removed method keeps its slot).
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($fitted:ty) = $params:ty;)*) => {
        /// A fitted method, any of the registered ones.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        // Models are few and long-lived; boxing the large variant would only add indirection.
        #[allow(clippy::large_enum_variant)]
        pub enum FittedMethod {
            $($(#[$doc])* $variant($fitted),)*
        }

        $(impl From<$fitted> for FittedMethod {
            fn from(m: $fitted) -> Self {
                FittedMethod::$variant(m)
            }
        }

        impl From<$fitted> for Model {
            /// The model, with the novelty score fitted on the training data the fitted
            /// type keeps (linear PCA and landmark MDS keep none: fit them with
            /// [`Model::fit`] to have it).
            fn from(m: $fitted) -> Self {
                Model::assemble(FittedMethod::$variant(m), None)
            }
        })*

        impl FittedMethod {
            /// The fitted model behind the contract.
            pub fn fitted(&self) -> &dyn Fitted {
                match self {
                    $(FittedMethod::$variant(m) => m,)*
                }
            }

            /// The method's name as used on the command line.
            pub fn method(&self) -> &'static str {
                match self {
                    $(FittedMethod::$variant(_) => <$params as Method>::NAME,)*
                }
            }
        }

        /// Every registered method, in registry order.
        pub static METHODS: &[MethodInfo] = &[$(MethodInfo::of::<$params>(),)*];
    };
}

registry! {
    /// Linear PCA.
    Pca(FittedPca) = Pca;
    /// Kernel PCA.
    KernelPca(FittedKernelPca) = KernelPca;
    /// Classical MDS.
    Mds(FittedMds) = ClassicalMds;
    /// Landmark MDS.
    LandmarkMds(FittedLandmarkMds) = LandmarkMds;
    /// Isomap.
    Isomap(FittedIsomap) = Isomap;
    /// Diffusion maps.
    DiffusionMaps(FittedDiffusionMaps) = DiffusionMaps;
    /// Laplacian eigenmaps.
    Eigenmaps(FittedEigenmaps) = LaplacianEigenmaps;
    /// Spectral clustering.
    SpectralClustering(FittedSpectralClustering) = SpectralClustering;
    /// Kernel interpolation of values on the training points.
    Interpolate(FittedInterpolator) = Interpolator;
    /// Locally linear embedding.
    Lle(crate::methods::lle::FittedLle) = crate::methods::lle::LocallyLinearEmbedding;
    /// t-SNE.
    Tsne(crate::methods::tsne::FittedTsne) = crate::methods::tsne::Tsne;
    /// UMAP.
    Umap(crate::methods::umap::FittedUmap) = crate::methods::umap::Umap;
}

/// A fitted model: the fitted method and the novelty score fitted with it (maths §18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    method: FittedMethod,
    novelty: Option<Novelty>,
    annotations: Vec<(String, String)>,
}

/// A version-2 payload: a [`Model`] before the annotations.
#[derive(Deserialize)]
struct ModelV2 {
    method: FittedMethod,
    novelty: Option<Novelty>,
}

/// A registered method, type-erased: what interfaces build their commands from.
#[derive(Clone, Copy)]
pub struct MethodInfo {
    /// The name on the command line (`kpca`).
    pub name: &'static str,
    /// One line for help texts.
    pub about: &'static str,
    /// What it is fitted on.
    pub input: InputKinds,
    /// Its parameters.
    pub specs: &'static [ParamSpec],
    /// Its default parameter values, in the order of `specs`.
    pub defaults: fn() -> ParamList,
    /// Checks a bag of values (all parameters known and valid) and returns the full
    /// parameter list it gives.
    pub resolve: fn(&Values) -> Result<ParamList>,
    /// Fits with a bag of values.
    pub fit: fn(&Values, Input<'_>) -> Result<Model>,
    /// What the contract test checks (see [`Method::configurations`]).
    pub configurations: fn() -> Vec<Configuration>,
}

impl std::fmt::Debug for MethodInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodInfo")
            .field("name", &self.name)
            .finish()
    }
}

fn defaults_of<P: Method>() -> ParamList {
    P::default().values()
}

fn resolve_of<P: Method>(v: &Values) -> Result<ParamList> {
    P::from_values(v).map(|p| p.values())
}

fn fit_of<P: Method>(v: &Values, input: Input<'_>) -> Result<Model>
where
    FittedMethod: From<P::Fitted>,
{
    let p = P::from_values(v)?;
    let fitted = p.fit_input(input)?;
    let model = Model::assemble(FittedMethod::from(fitted), Some(input));
    // Overflow is an error where it arises, never a NaN embedding with exit status 0.
    if let Some(e) = model.fitted().eigenvalues() {
        if let Some(row) = e.iter().position(|v| !v.is_finite()) {
            return Err(Error::Overflow {
                what: "eigenvalues of the fit",
                row,
                detail: "not finite: the arithmetic overflowed (rescale the data)",
            });
        }
    }
    if let Some(row) = first_nonfinite_row(model.embedding()) {
        return Err(Error::Overflow {
            what: "training embedding",
            row,
            detail: "the coordinates are not finite: the arithmetic overflowed (rescale the data)",
        });
    }
    Ok(model)
}

/// Annotation keys are not empty and appear once.
fn check_annotations(a: &[(String, String)]) -> Result<()> {
    for (i, (k, _)) in a.iter().enumerate() {
        if k.is_empty() {
            return Err(Error::param("annotations", "a key is empty"));
        }
        if a[..i].iter().any(|(other, _)| other == k) {
            return Err(Error::param(
                "annotations",
                format!("key {k:?} appears twice"),
            ));
        }
    }
    Ok(())
}

/// The first row of `m` with a non-finite entry.
fn first_nonfinite_row(m: MatRef<'_, f64>) -> Option<usize> {
    (0..m.nrows()).find(|&i| (0..m.ncols()).any(|j| !m[(i, j)].is_finite()))
}

impl MethodInfo {
    const fn of<P: Method>() -> MethodInfo
    where
        FittedMethod: From<P::Fitted>,
    {
        MethodInfo {
            name: P::NAME,
            about: P::ABOUT,
            input: P::INPUT,
            specs: P::SPECS,
            defaults: defaults_of::<P>,
            resolve: resolve_of::<P>,
            fit: fit_of::<P>,
            configurations: P::configurations,
        }
    }

    /// The registered method named `name`.
    ///
    /// ```
    /// let m = oose::model::MethodInfo::named("isomap").unwrap();
    /// assert!(m.specs.iter().any(|s| s.name == "n_neighbors"));
    /// assert!(oose::model::MethodInfo::named("nonsense").is_err());
    /// ```
    pub fn named(name: &str) -> Result<&'static MethodInfo> {
        METHODS.iter().find(|m| m.name == name).ok_or_else(|| {
            let names: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
            Error::param(
                "method",
                format!("expected one of {}, got {name:?}", names.join(", ")),
            )
        })
    }
}

impl Model {
    /// The model of a fitted method, with its novelty score fitted on the training data
    /// the method keeps, or else on `input`'s points.
    fn assemble(method: FittedMethod, input: Option<Input<'_>>) -> Model {
        let novelty = method.fitted().novelty(input);
        Model {
            method,
            novelty,
            annotations: Vec::new(),
        }
    }

    /// The fitted method.
    pub fn fitted_method(&self) -> &FittedMethod {
        &self.method
    }

    /// The fitted model behind the contract.
    pub fn fitted(&self) -> &dyn Fitted {
        self.method.fitted()
    }

    /// The method's name as used on the command line.
    pub fn method(&self) -> &'static str {
        self.method.method()
    }

    /// The novelty score and its calibration (maths §18); `None` where the model has
    /// no training data to measure against (a precomputed kernel, similarities, linear
    /// PCA or landmark MDS built from a fitted type instead of [`Model::fit`]).
    pub fn novelty(&self) -> Option<&Novelty> {
        self.novelty.as_ref()
    }

    /// The same model with `is_novel` at level `alpha` ∈ (0, 1) by default (0.01 unless
    /// set).
    ///
    /// ```
    /// use oose::model::{Input, Model, params::Values};
    /// let x = oose::datasets::s_curve(300, 0.0, 1).points;
    /// let m = Model::fit("pca", &Values::new(), Input::Points(x.as_ref())).unwrap();
    /// let m = m.with_novelty_alpha(0.05).unwrap();
    /// assert_eq!(m.novelty().unwrap().alpha(), 0.05);
    /// assert!(m.clone().with_novelty_alpha(1.5).is_err());
    /// ```
    pub fn with_novelty_alpha(mut self, alpha: f64) -> Result<Model> {
        check_alpha(alpha)?;
        if let Some(n) = self.novelty.take() {
            self.novelty = Some(n.with_alpha(alpha)?);
        }
        Ok(self)
    }

    /// Fits the method named `method` with parameters `values` (absent ones take their
    /// defaults) on `input`.
    ///
    /// ```
    /// use oose::model::{Input, Model, params::{Value, Values}};
    /// let x = oose::datasets::s_curve(200, 0.0, 1).points;
    /// let v = Values::new().with("n_neighbors", Value::Int(8));
    /// let m = Model::fit("isomap", &v, Input::Points(x.as_ref())).unwrap();
    /// assert_eq!(m.method(), "isomap");
    /// assert!(m.params().contains(&("n_neighbors", Value::Int(8))));
    /// ```
    pub fn fit(method: &str, values: &Values, input: Input<'_>) -> Result<Model> {
        (MethodInfo::named(method)?.fit)(values, input)
    }

    /// The interface's annotations: `(key, text)` pairs an interface stored with the
    /// model to restore what the fit does not record (the Python estimator's extension
    /// strategy, thread count, …). The core keeps them and never reads them.
    pub fn annotations(&self) -> &[(String, String)] {
        &self.annotations
    }

    /// The same model with `annotations` in place of its own (keys unique and not
    /// empty).
    ///
    /// ```
    /// use oose::model::{Input, Model, params::Values};
    /// let x = oose::datasets::s_curve(100, 0.0, 1).points;
    /// let m = Model::fit("pca", &Values::new(), Input::Points(x.as_ref())).unwrap();
    /// let m = m.with_annotations(vec![("strategy".into(), "'restricted'".into())]).unwrap();
    /// let back = Model::from_bytes(&m.to_bytes()).unwrap();
    /// assert_eq!(back.annotations(), m.annotations());
    /// assert!(back.with_annotations(vec![(String::new(), "1".into())]).is_err());
    /// ```
    pub fn with_annotations(mut self, annotations: Vec<(String, String)>) -> Result<Model> {
        check_annotations(&annotations)?;
        self.annotations = annotations;
        Ok(self)
    }

    /// The parameters as fitted, by name. ε as the model records it: the diffusion
    /// methods keep `auto` (`info` shows the ε chosen), kernel PCA and the
    /// interpolator the ε that `auto` chose.
    pub fn params(&self) -> ParamList {
        self.fitted().param_values()
    }

    /// Extends with options (strategy, density, isolated-point policy, kernel diagonal):
    /// every option the model does not support is a typed error naming it.
    ///
    /// Every extension carries the novelty columns `novelty`, `novelty_pvalue` and
    /// `is_novel` (maths §18; NaN where the model has no novelty score), at the level
    /// `opts.alpha` or the model's.
    pub fn extend_options(
        &self,
        new: MatRef<'_, f64>,
        opts: &ExtendOptions<'_>,
    ) -> Result<Extension> {
        self.check_options(opts)?;
        let method_opts = ExtendOptions {
            alpha: None,
            ..*opts
        };
        let near = self.shared_search(new, &method_opts);
        let mut e = match &near {
            Some(near) => self.fitted().extend_near(new, &method_opts, near)?,
            None => self.fitted().extend_options(new, &method_opts)?,
        };
        if !self.nan_rows_requested(opts) {
            if let Some(row) = first_nonfinite_row(e.coordinates.as_ref()) {
                return Err(Error::Overflow {
                    what: "extension of the new points",
                    row,
                    detail: "the coordinates are not finite: the arithmetic overflowed \
                             (values far larger than the training data?)",
                });
            }
        }
        // The method has checked the width of `new` against what its rows hold, which
        // is what the novelty score measures.
        let scores = match &self.novelty {
            Some(n) => Some(n.score_near(new, opts.alpha, near.as_ref())?),
            None => None,
        };
        e.extra.extend(novelty::columns(scores, e.len()));
        Ok(e)
    }

    /// One neighbour search for the method and the novelty score, where the method
    /// asks for one and the novelty score measures against the same training points
    /// (it is fitted on the points the model keeps, so equal shapes mean the same
    /// points): the k = max(both) nearest training points of every row of `new`.
    fn shared_search(
        &self,
        new: MatRef<'_, f64>,
        opts: &ExtendOptions<'_>,
    ) -> Option<crate::neighbors::Neighbours> {
        let wanted = self.fitted().neighbours_wanted(opts);
        let x = self.fitted().training_points()?;
        let nov = self.novelty.as_ref()?;
        let same = nov.reference() == novelty::Reference::Points
            && nov.width() == x.ncols()
            && nov.len() == x.nrows();
        // Rows the method will refuse (wrong width, not finite) are not searched: its
        // own checks name them.
        if wanted == 0
            || !same
            || new.ncols() != x.ncols()
            || new.nrows() == 0
            || crate::validate::finite("new points", new).is_err()
        {
            return None;
        }
        let k = wanted.max(nov.neighbours()).min(x.nrows());
        self.fitted().search_training(new, k)
    }

    /// Whether the caller asked for NaN rows (isolated new points of neighbour-graph
    /// models: `on_isolated = nan`, given now or at fit).
    fn nan_rows_requested(&self, opts: &ExtendOptions<'_>) -> bool {
        opts.on_isolated == Some(OnIsolated::Nan)
            || (opts.on_isolated.is_none()
                && self
                    .params()
                    .iter()
                    .any(|(n, v)| *n == "on_isolated" && *v == params::Value::Str("nan".into())))
    }

    /// Refuses, by name, every option of `opts` the model does not support and a level
    /// α outside (0, 1) (interfaces call it before reading any data).
    pub fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        if let Some(a) = opts.alpha {
            check_alpha(a)?;
        }
        self.fitted().check_options(opts)
    }

    /// Extends with an explicit strategy (maths §5): projection for every model;
    /// restricted reconstruction for the MDS family and centred kernel PCA.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        self.extend_options(
            new,
            &ExtendOptions {
                strategy: Some(strategy),
                ..Default::default()
            },
        )
    }

    /// The inverse transform (UMAP, maths §13): embedding coordinates back to the input
    /// space, with the power function per point as `residual`.
    pub fn inverse_transform(&self, embedded: MatRef<'_, f64>) -> Result<Extension> {
        self.fitted().inverse(embedded).unwrap_or_else(|| {
            Err(Error::Unsupported(format!(
                "an inverse transform is available for umap models, not {}",
                self.method()
            )))
        })
    }

    fn inner_product(&self, what: &str) -> Result<&dyn InnerProduct> {
        self.fitted().inner_product().ok_or_else(|| {
            Error::Unsupported(format!(
                "{what} is available for mds, landmark-mds, isomap and kpca models, not {}",
                self.method()
            ))
        })
    }

    /// Joint restricted reconstruction of several new objects (the MDS family and kernel
    /// PCA; `mutual` only for classical MDS of proximity data).
    pub fn extend_joint(
        &self,
        new: MatRef<'_, f64>,
        mutual: Option<MatRef<'_, f64>>,
    ) -> Result<Joint> {
        self.inner_product("joint restricted reconstruction")?
            .extend_joint(new, mutual)
    }

    /// `steps + 1` points on the arc from projection to restricted reconstruction of
    /// each new object, `(object, λ, y)` (the MDS family and kernel PCA).
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        self.inner_product("the arc")?.arc(new, steps)
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
        // The whole payload, or it was written by another version (a flipped version
        // number reads a newer payload as an older one, which leaves bytes over).
        fn whole<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> std::result::Result<T, ModelError> {
            match postcard::take_from_bytes::<T>(payload) {
                Ok((v, [])) => Ok(v),
                Ok((_, rest)) => Err(ModelError::Corrupted(format!(
                    "{} bytes left over after the payload",
                    rest.len()
                ))),
                Err(e) => Err(ModelError::Corrupted(format!(
                    "payload does not decode: {e}"
                ))),
            }
        }
        let model: Model = if version == 1 {
            // Version 1 held the fitted method only: the novelty score is fitted again
            // from the training data the method keeps (deterministic: as at fit).
            let method: FittedMethod = whole(payload)?;
            if !method.fitted().is_consistent() {
                return Err(
                    ModelError::Corrupted("matrix sizes in the payload disagree".into()).into(),
                );
            }
            Model::assemble(method, None)
        } else if version == 2 {
            let m: ModelV2 = whole(payload)?;
            Model {
                method: m.method,
                novelty: m.novelty,
                annotations: Vec::new(),
            }
        } else {
            whole(payload)?
        };
        // Parameters first (their errors name them), then the sizes they imply.
        model.check_payload()?;
        let ok = model.fitted().is_consistent()
            && model.novelty.as_ref().is_none_or(|n| n.is_consistent());
        if !ok {
            return Err(
                ModelError::Corrupted("matrix sizes in the payload disagree".into()).into(),
            );
        }
        Ok(model)
    }

    /// What a decoded payload must satisfy beyond its sizes (a file written by someone
    /// else with a valid checksum): every stored number finite, and the parameters
    /// valid by the same checks as at fit (`n_neighbors ≥ 1`, scales > 0, …).
    fn check_payload(&self) -> Result<()> {
        finite::check(self).map_err(|e| ModelError::Corrupted(format!("{e}")))?;
        check_annotations(&self.annotations)
            .map_err(|e| ModelError::Corrupted(format!("annotations: {e}")))?;
        let info = MethodInfo::named(self.method())?;
        let mut v = Values::new();
        let n = self.embedding().nrows() as u64;
        for (name, value) in self.params() {
            // Counts (n_components, n_neighbors, n_clusters, …) are at least 1 in a
            // fitted model; the fit checks them against N, which a payload can dodge.
            if name.starts_with("n_") && value == params::Value::Int(0) {
                return Err(ModelError::Corrupted(format!(
                    "invalid parameter `{name}`: 0 (a fitted model has at least 1)"
                ))
                .into());
            }
            // What the fit checked against the number of training points.
            let limit = match name {
                "n_neighbors" => Some((n.saturating_sub(1), "below the number of training points")),
                "n_components" | "n_clusters" => Some((n, "at most the number of training points")),
                _ => None,
            };
            if let (Some((max, rule)), params::Value::Int(v)) = (limit, &value) {
                if *v > max {
                    return Err(ModelError::Corrupted(format!(
                        "invalid parameter `{name}`: {v} (must be {rule}, {n})"
                    ))
                    .into());
                }
            }
            if value != params::Value::None {
                v.set(name, value);
            }
        }
        (info.resolve)(&v).map_err(|e| ModelError::Corrupted(format!("invalid parameter: {e}")))?;
        Ok(())
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
        self.fitted().info(&mut v);
        match &self.novelty {
            Some(n) => {
                v.push(("novelty_neighbours".into(), n.neighbours().to_string()));
                v.push((
                    "novelty_calibration".into(),
                    n.calibration().len().to_string(),
                ));
                v.push(("novelty_alpha".into(), n.alpha().to_string()));
            }
            None => v.push((
                "novelty".into(),
                "none (no training data to measure against)".into(),
            )),
        }
        v
    }
}

impl OutOfSample for Model {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.fitted().embedding()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_options(new, &ExtendOptions::default())
    }

    fn input_width(&self) -> usize {
        self.fitted().input_width()
    }
}
