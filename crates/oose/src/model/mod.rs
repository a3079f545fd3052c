//! The fitted model (a [`FittedMethod`] and its novelty score) and its versioned file
//! format.
//!
//! Layout (little endian): 8 magic bytes `b"OOSE\0MDL"`, format version (u32), payload
//! length (u64), CRC-32 (u32) of the payload (from version 5: of the version number and
//! the payload), then the postcard-encoded [`Model`]
//! (version 6: the fitted method, the novelty score, the interface's annotations, then
//! the metric; version 5, still read: the novelty score without its direction part
//! (scored by distance alone, as it was); version 4: the autoencoders' parameters without `precision`
//! (float64); version 3: without the metric (Euclidean); version 2: without
//! the annotations either; version 1: the fitted method alone, its novelty score fitted
//! again on reading).
//! A foreign, truncated, corrupted or newer-version file is a typed
//! [`ModelError`](crate::error::ModelError).

mod extend;
mod file;
mod finite;
mod macros;
pub mod method;
pub mod params;
pub(crate) mod specs;

pub(crate) use file::{added_in, reading, refuse};
pub use file::{checksum, FORMAT_VERSION, MAGIC};
pub use method::{
    Configuration, ExtendOptions, Fitted, InnerProduct, Input, InputKinds, Method, Registered,
};

use crate::diagnostics::novelty::{self, check_alpha, Novelty};
use crate::error::Error;
use crate::error::Result;
use crate::extend::Extension;
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
use crate::metric::Metric;
use faer::MatRef;
use params::{ParamList, ParamSpec, Values};
use serde::{Deserialize, Serialize};

/// The registry: every method, once. Each line names the `Model` variant, the fitted
/// type, the parameter struct (which implements [`Method`]), the method's name and its
/// help line (the struct's [`Registered`] impl). The order is the on-disk variant index
/// of model files: append only (a removed method keeps its slot).
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($fitted:ty) = $params:ty, $name:literal, $about:expr;)*) => {
        $(impl Registered for $params {
            const NAME: &'static str = $name;
            const ABOUT: &'static str = $about;
        })*

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
                    $(FittedMethod::$variant(_) => <$params as Registered>::NAME,)*
                }
            }
        }

        /// Every registered method, in registry order.
        pub static METHODS: &[MethodInfo] = &[$(MethodInfo::of::<$params>(),)*];
    };
}

registry! {
    /// Linear PCA.
    Pca(FittedPca) = Pca,
        "pca",
        "Linear PCA (maths §2)";
    /// Kernel PCA.
    KernelPca(FittedKernelPca) = KernelPca,
        "kpca",
        "Kernel PCA with Nyström extension (maths §3)";
    /// Classical MDS.
    Mds(FittedMds) = ClassicalMds,
        "mds",
        "Classical MDS of points or proximities (maths §5)";
    /// Landmark MDS.
    LandmarkMds(FittedLandmarkMds) = LandmarkMds,
        "landmark-mds",
        "Landmark MDS (maths §6)";
    /// Isomap.
    Isomap(FittedIsomap) = Isomap,
        "isomap",
        "Isomap: classical MDS of kNN-graph geodesics (maths §6)";
    /// Diffusion maps.
    DiffusionMaps(FittedDiffusionMaps) = DiffusionMaps,
        "dmaps",
        "Diffusion maps with exact Nyström extension (maths §7)";
    /// Laplacian eigenmaps.
    Eigenmaps(FittedEigenmaps) = LaplacianEigenmaps,
        "eigenmaps",
        "Laplacian eigenmaps with exact Nyström extension (maths §7)";
    /// Spectral clustering.
    SpectralClustering(FittedSpectralClustering) = SpectralClustering,
        "spectral-clustering",
        "Spectral clustering (Ng–Jordan–Weiss) extended to new points (maths §7)";
    /// Kernel interpolation of values on the training points.
    Interpolate(FittedInterpolator) = Interpolator,
        "interpolate",
        "Kernel interpolation of values on the training points (maths §8)";
    /// Locally linear embedding.
    Lle(crate::methods::lle::FittedLle) = crate::methods::lle::LocallyLinearEmbedding,
        "lle",
        "Locally linear embedding with barycentric extension (maths §14; not exact on \
         training points)";
    /// t-SNE.
    Tsne(crate::methods::tsne::FittedTsne) = crate::methods::tsne::Tsne,
        "tsne",
        "t-SNE with a weighted-median extension, exact on training points (maths §12)";
    /// UMAP.
    Umap(crate::methods::umap::FittedUmap) = crate::methods::umap::Umap,
        "umap",
        "UMAP with a weighted-median extension exact on training points, umap-learn's \
         transform made sample-wise, and an inverse transform (maths §13)";
    /// Maximum variance unfolding (appended: the variant index is the file format).
    Mvu(crate::methods::mvu::FittedMvu) = crate::methods::mvu::MaximumVarianceUnfolding,
        "mvu",
        "Maximum variance unfolding (exact SDP up to 1000 points, or landmarks) with barycentric \
         extension (maths §15; not exact on training points)";
    /// Autoencoder (appended).
    Autoencoder(crate::methods::autoencoder::FittedAutoencoder) = crate::methods::autoencoder::Autoencoder,
        "autoencoder",
        "Autoencoder: MLP encoder and decoder, Adam, early stopping; the encoder is the \
         extension (maths §16)";
    /// Variational autoencoder (appended).
    Vae(crate::methods::autoencoder::FittedVae) = crate::methods::autoencoder::VariationalAutoencoder,
        "vae",
        "Variational autoencoder: Gaussian encoder, β-weighted KL; embedding and extension = μ \
         (maths §16)";
    /// Kernel PCA through landmarks (appended).
    KpcaNystrom(crate::methods::kernel_pca::FittedNystromKpca) = crate::methods::kernel_pca::NystromKpca,
        "kpca-nystrom",
        "Kernel PCA fitted through landmarks (Nyström, maths §21)";
}

/// A fitted model: the fitted method and the novelty score fitted with it (maths §18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    method: FittedMethod,
    novelty: Option<Novelty>,
    annotations: Vec<(String, String)>,
    metric: Metric,
    /// ε of the generic pre-image (`inverse_transform`), computed on first use.
    #[serde(skip)]
    preimage_scale: method::Transient<std::sync::OnceLock<f64>>,
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
    /// Whether [`Model::fit`] takes a `metric` for it ([`Method::METRIC`]; not in
    /// `specs`: the model, not the method, applies it).
    pub metric: bool,
    /// Its default parameter values, in the order of `specs`, then `metric` where the
    /// method takes one.
    pub defaults: fn() -> ParamList,
    /// Checks a bag of values (all parameters known and valid) and returns the full
    /// parameter list it gives.
    pub resolve: fn(&Values) -> Result<ParamList>,
    /// Fits with a bag of values.
    pub fit: fn(&Values, Input<'_>) -> Result<Model>,
    /// What the contract test checks (see [`Method::configurations`]).
    pub configurations: fn() -> Vec<Configuration>,
    /// The method fitted instead when `n_landmarks` is given ([`Method::LANDMARK_FORM`]).
    pub landmark_form: Option<&'static str>,
}

impl std::fmt::Debug for MethodInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodInfo")
            .field("name", &self.name)
            .finish()
    }
}

fn defaults_of<P: Method>() -> ParamList {
    with_metric::<P>(P::default().values(), Metric::Euclidean)
}

fn resolve_of<P: Method>(v: &Values) -> Result<ParamList> {
    let (metric, v) = split_metric(P::NAME, P::METRIC, v)?;
    Ok(with_metric::<P>(P::from_values(&v)?.values(), metric))
}

/// `list` and, for a method that takes one, the metric.
fn with_metric<P: Method>(mut list: ParamList, metric: Metric) -> ParamList {
    if P::METRIC {
        list.push(("metric", params::Value::Str(metric.name().into())));
    }
    list
}

fn fit_of<P: Method>(v: &Values, input: Input<'_>) -> Result<Model>
where
    FittedMethod: From<P::Fitted>,
{
    let (metric, v) = split_metric(P::NAME, P::METRIC, v)?;
    let prepared = match input {
        Input::Points(x) => metric.prepare("training data", x)?,
        _ if metric != Metric::Euclidean => {
            return Err(Error::param(
                "metric",
                format!(
                    "{} compares points; {} has none",
                    metric.name(),
                    input.describe()
                ),
            ))
        }
        _ => None,
    };
    let input = prepared
        .as_ref()
        .map_or(input, |p| Input::Points(p.as_ref()));
    let p = P::from_values(&v)?;
    let fitted = p.fit_input(input)?;
    let mut model = Model::assemble(FittedMethod::from(fitted), Some(input));
    // The novelty score's search stops on request too (leaving no score): the fit was
    // asked to stop, so it reports that rather than a model without its score.
    crate::progress::check()?;
    model.metric = metric;
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

/// The metric given in `values` and the values without it; an error naming `metric`
/// for a method (`name`) that does not take one (`takes` false).
fn split_metric(name: &str, takes: bool, values: &Values) -> Result<(Metric, Values)> {
    let mut rest = values.clone();
    let Some(v) = rest.remove("metric") else {
        return Ok((Metric::Euclidean, rest));
    };
    let metric = match v {
        params::Value::None => Metric::Euclidean,
        params::Value::Str(s) => Metric::from_name(&s)?,
        other => {
            return Err(Error::param(
                "metric",
                format!(
                    "expected a name ({}), got {other}",
                    Metric::NAMES.join(", ")
                ),
            ))
        }
    };
    if !takes && metric != Metric::Euclidean {
        let takes: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.metric)
            .map(|m| m.name)
            .collect();
        return Err(Error::param(
            "metric",
            format!(
                "{name} does not compare points by a metric (metric is taken by {})",
                takes.join(", ")
            ),
        ));
    }
    Ok((metric, rest))
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
            metric: P::METRIC,
            defaults: defaults_of::<P>,
            resolve: resolve_of::<P>,
            fit: fit_of::<P>,
            configurations: P::configurations,
            landmark_form: P::LANDMARK_FORM,
        }
    }

    /// The method that fits `values`: this one, or its landmark form when `values`
    /// give `n_landmarks` (kernel PCA with landmarks is `kpca-nystrom`).
    ///
    /// ```
    /// use oose::model::{params::Values, MethodInfo};
    /// let kpca = MethodInfo::named("kpca").unwrap();
    /// assert_eq!(kpca.routed(&Values::new()).unwrap().name, "kpca");
    /// let v = Values::new().with("n_landmarks", 100usize);
    /// assert_eq!(kpca.routed(&v).unwrap().name, "kpca-nystrom");
    /// let none = Values::new().with("n_landmarks", oose::model::params::Value::None);
    /// assert_eq!(kpca.routed(&none).unwrap().name, "kpca");
    /// ```
    pub fn routed(&'static self, values: &Values) -> Result<&'static MethodInfo> {
        match self.landmark_form {
            Some(form) if values.is_set("n_landmarks") => MethodInfo::named(form),
            _ => Ok(self),
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
        let mut model = Model {
            method,
            novelty,
            annotations: Vec::new(),
            metric: Metric::Euclidean,
            preimage_scale: Default::default(),
        };
        model.share_training_points();
        model
    }

    /// The novelty score holds the method's training points, not a copy of them,
    /// where they are the same bits (one set of values in memory).
    pub(crate) fn share_training_points(&mut self) {
        if let (Some(n), Some(x)) = (&mut self.novelty, self.method.fitted().training_stored()) {
            n.share_points(x);
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
    ///
    /// `metric` (`euclidean`, `cosine`, `correlation`; maths §19) is taken by the
    /// neighbour methods ([`MethodInfo::metric`]) on points: the model maps the
    /// training points, and every new point, before the method and the novelty score
    /// see them.
    ///
    /// ```
    /// use oose::model::{Input, Model, params::Values};
    /// let x = oose::datasets::s_curve(200, 0.0, 1).points;
    /// let v = Values::new().with("metric", "cosine");
    /// let m = Model::fit("umap", &v.clone().with("n_epochs", 20usize), Input::Points(x.as_ref())).unwrap();
    /// assert_eq!(m.metric().name(), "cosine");
    /// let e = Model::fit("kpca", &v, Input::Points(x.as_ref())).unwrap_err();
    /// assert!(e.to_string().contains("metric"), "{e}");
    /// ```
    pub fn fit(method: &str, values: &Values, input: Input<'_>) -> Result<Model> {
        (MethodInfo::named(method)?.routed(values)?.fit)(values, input)
    }

    /// How the model compares points (maths §19): applied to every new row first.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// `new` mapped by the model's metric (`None`: as given).
    fn prepared(&self, new: MatRef<'_, f64>) -> Result<Option<faer::Mat<f64>>> {
        if self.metric != Metric::Euclidean {
            crate::validate::columns("new points", new, self.input_width())?;
        }
        self.metric.prepare("new points", new)
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
        let mut p = self.fitted().param_values();
        if MethodInfo::named(self.method()).is_ok_and(|m| m.metric) {
            p.push(("metric", params::Value::Str(self.metric.name().into())));
        }
        p
    }

    /// `(key, value)` lines describing the model: method, parameters actually used
    /// (the ε chosen), sizes, eigenvalues, solver, format version.
    pub fn info(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = vec![
            ("method".into(), self.method().into()),
            ("format_version".into(), FORMAT_VERSION.to_string()),
            ("n_components".into(), self.n_components().to_string()),
            ("input_width".into(), self.input_width().to_string()),
            ("n_train".into(), self.fitted().training_rows().to_string()),
        ];
        if self.metric != Metric::Euclidean {
            v.push(("metric".into(), self.metric.name().into()));
        }
        self.fitted().info(&mut v);
        match &self.novelty {
            Some(n) => {
                v.push(("novelty_neighbours".into(), n.neighbours().to_string()));
                v.push((
                    "novelty_calibration".into(),
                    n.calibration().len().to_string(),
                ));
                v.push(("novelty_alpha".into(), n.alpha().to_string()));
                v.push((
                    "novelty_smallest_pvalue".into(),
                    n.smallest_pvalue().to_string(),
                ));
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
