//! The one contract (DESIGN.md "One contract for every method"): a method's parameter
//! struct implements [`Method`], its fitted type implements [`Fitted`]. The registry
//! (`model/mod.rs`) lists them once; the model type, its dispatch, its file format, the
//! command line and the Python binding are built from that list.

use super::params::{ParamList, ParamSpec, Values};
use crate::diagnostics::novelty::Novelty;
use crate::error::{Error, Result};
use crate::extend::restricted::Joint;
use crate::extend::{Extension, Strategy};
use crate::kernel::Kernel;
use crate::linalg::stored::StoredMat;
use crate::methods::diffusion_maps::{Density, OnIsolated};
use crate::methods::mds::Proximity;
use crate::methods::OutOfSample;
use faer::MatRef;

/// What a method is fitted on.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// Points, one per row (N×D); for a precomputed kernel, the N×N kernel matrix.
    Points(MatRef<'a, f64>),
    /// An N×N proximity matrix of the given kind (classical MDS).
    Proximity(MatRef<'a, f64>, Proximity),
    /// Points and the values of a function on them (N×m; kernel interpolation).
    Values {
        /// N×D.
        points: MatRef<'a, f64>,
        /// N×m.
        values: MatRef<'a, f64>,
    },
}

impl<'a> Input<'a> {
    /// The kind of input, in words (for errors).
    pub fn describe(&self) -> &'static str {
        match self {
            Input::Points(_) => "points",
            Input::Proximity(..) => "a proximity matrix",
            Input::Values { .. } => "points with values",
        }
    }

    /// An error saying that `method` does not take this input.
    pub fn refused(&self, method: &str, takes: &str) -> Error {
        Error::Unsupported(format!(
            "{method} is fitted on {takes}, not on {}",
            self.describe()
        ))
    }
}

/// Which inputs a method is fitted on (interfaces offer the matching options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKinds {
    /// Points only (or a kernel matrix for a precomputed kernel).
    Points,
    /// Points or a proximity matrix (classical MDS).
    PointsOrProximity,
    /// Points with values (kernel interpolation).
    Values,
}

/// A configuration a method declares for the contract test over the registry
/// (`tests/contract.rs`): its parameters and what the documentation claims of it.
#[derive(Clone, Debug)]
pub struct Configuration {
    /// A short label (`gaussian-centred`).
    pub label: &'static str,
    /// The parameters (the rest at their defaults).
    pub values: Values,
    /// extend(training points) by projection returns the training embedding (to 1e-10
    /// relative).
    pub exact_on_training: bool,
    /// Rows of extend(Z) do not depend on the other rows of Z (bitwise).
    pub samplewise: bool,
    /// Restricted reconstruction is available (checked sample-wise and round-tripped).
    pub restricted: bool,
}

impl Configuration {
    /// Exact on training points and sample-wise, projection only: what most
    /// configurations claim.
    pub fn exact(label: &'static str, values: Values) -> Self {
        Configuration {
            label,
            values,
            exact_on_training: true,
            samplewise: true,
            restricted: false,
        }
    }

    /// Sample-wise but not exact on training points (an extension that reconstructs a
    /// training point from its neighbours, or interpolation with a smoothing term).
    pub fn not_exact(label: &'static str, values: Values) -> Self {
        Configuration {
            exact_on_training: false,
            ..Configuration::exact(label, values)
        }
    }

    /// The same with restricted reconstruction.
    pub fn with_restricted(mut self) -> Self {
        self.restricted = true;
        self
    }
}

/// A method's name and help line: given by its line in the registry
/// ([`FittedMethod`](super::FittedMethod)'s definition in `model/mod.rs`), the one list
/// of methods, and implemented there.
///
/// ```
/// use oose::methods::kernel_pca::{KernelPca, NystromKpca};
/// use oose::model::Registered;
/// assert_eq!((KernelPca::NAME, NystromKpca::NAME), ("kpca", "kpca-nystrom"));
/// assert!(KernelPca::ABOUT.starts_with("Kernel PCA"));
/// ```
pub trait Registered {
    /// The method's name on the command line and in model files' `info` (`kpca`).
    const NAME: &'static str;
    /// One line for help texts.
    const ABOUT: &'static str;
}

/// A method: its name (through its registry line, [`Registered`]), its parameters, and
/// `fit`.
pub trait Method: Registered + Default + Sized {
    /// The fitted type.
    type Fitted: Fitted;
    /// What the method is fitted on.
    const INPUT: InputKinds = InputKinds::Points;
    /// Whether the method compares points through a neighbour search or a kernel of
    /// distances, so that [`Model::fit`](super::Model::fit) takes a `metric`
    /// (maths §19; applied to the points before the method sees them).
    const METRIC: bool = false;

    /// The parameters: names, flags, kinds and help (not the defaults: those are
    /// `Self::default()`'s values).
    const SPECS: &'static [ParamSpec];

    /// The registered method fitted instead when `n_landmarks` is given (kernel PCA's
    /// Nyström fit, `kpca-nystrom`): [`Model::fit`](super::Model::fit) and the
    /// interfaces route there, so `kpca` with landmarks is the landmark form.
    const LANDMARK_FORM: Option<&'static str> = None;

    /// Every parameter's value, in the order of [`Method::SPECS`].
    fn values(&self) -> ParamList;

    /// The parameters from a bag of values; absent ones take the default, an unknown
    /// name is an error.
    fn from_values(v: &Values) -> Result<Self>;

    /// Fits the method.
    fn fit_input(&self, input: Input<'_>) -> Result<Self::Fitted>;

    /// The configurations the contract test runs on points (every kernel, flavour and
    /// strategy the method documents); by default its defaults.
    fn configurations() -> Vec<Configuration> {
        vec![Configuration::exact("default", Values::new())]
    }
}

/// Options of one extension call. Every option a model does not support is refused
/// by name ([`ExtendOptions::refuse_all_but`]); none is silently ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExtendOptions<'a> {
    /// Projection (every model) or restricted reconstruction (inner-product models).
    pub strategy: Option<Strategy>,
    /// Density of new points (diffusion maps; default: the model's).
    pub density: Option<Density>,
    /// New points without a neighbour (diffusion maps; default: the model's).
    pub on_isolated: Option<OnIsolated>,
    /// k(z, z) of each new row (a precomputed kernel: enables the residual).
    pub kernel_diagonal: Option<&'a [f64]>,
    /// Level α of `is_novel` (every model; default: the model's, 0.01 unless set).
    pub alpha: Option<f64>,
    /// Exact or certified low-rank kernel rows (kernel PCA; default exact).
    pub extension: Option<crate::extend::ExtensionChoice>,
    /// Only the coordinates are wanted (every model; default false): the novelty
    /// score (its neighbour search) is left out, and so are kernel PCA's, kernel
    /// interpolation's and dense diffusion maps' residual and the neighbour
    /// embeddings' power function (what else a method computes beside its coordinates
    /// costs little and is dropped). The coordinates are bitwise those of the full
    /// extension; `residual` and `reconstruction_error` are NaN and `extra` is empty.
    /// What the CLI's `extend` without `--diagnostics` and Python's `transform` without
    /// `return_diagnostics` ask for.
    pub coordinates_only: bool,
}

impl ExtendOptions<'_> {
    /// The placement of a neighbour embedding (t-SNE, UMAP): `optimize` when asked for,
    /// else `interpolation` (the default, also under the name `projection`).
    pub fn placement(&self) -> Strategy {
        match self.strategy {
            Some(Strategy::Optimize) => Strategy::Optimize,
            _ => Strategy::Interpolation,
        }
    }

    /// The names of the options given (projection counts as no option: every model
    /// extends by projection).
    pub fn given(&self) -> Vec<&'static str> {
        let mut v = vec![];
        match self.strategy {
            None | Some(Strategy::Projection) => {}
            Some(s) => v.push(s.name()),
        }
        if self.density.is_some() {
            v.push("density");
        }
        if self.on_isolated.is_some() {
            v.push("on_isolated");
        }
        if self.kernel_diagonal.is_some() {
            v.push("kernel_diagonal");
        }
        if self
            .extension
            .is_some_and(|e| e != crate::extend::ExtensionChoice::Exact)
        {
            v.push("extension");
        }
        v
    }

    /// Refuses every given option not in `supported`, with `why(option)` as reason.
    /// A strategy counts by its name (`restricted`, `interpolation`, `optimize`); the
    /// error names the parameter `strategy`.
    pub fn refuse_all_but(
        &self,
        supported: &[&str],
        why: impl Fn(&'static str) -> String,
    ) -> Result<()> {
        match self.given().into_iter().find(|o| !supported.contains(o)) {
            None => Ok(()),
            Some(o) => {
                let param = match o {
                    "restricted" | "interpolation" | "optimize" => "strategy",
                    o => o,
                };
                Err(Error::param(param, why(o)))
            }
        }
    }
}

/// Why a model without options refuses one (the message names what has it).
pub(crate) fn no_such_option(method: &str, option: &'static str) -> String {
    match option {
        "restricted" => format!(
            "restricted reconstruction is for the inner-product embeddings (mds, \
             landmark-mds, isomap, kpca), not {method}"
        ),
        "interpolation" | "optimize" => {
            format!("the {option} strategy is t-SNE's and UMAP's, not {method}'s (use projection)")
        }
        "density" => format!("density at extension applies only to dmaps models, not {method}"),
        "on_isolated" => {
            format!("on_isolated at extension applies only to dmaps models, not {method}")
        }
        "kernel_diagonal" => "applies only to kernel PCA with a precomputed kernel".into(),
        "extension" => format!("low-rank extension is kernel PCA's, not {method}'s"),
        _ => format!("{method} has no extension option {option}"),
    }
}

/// An inner-product embedding (the MDS family and kernel PCA): restricted
/// reconstruction, joint restricted reconstruction, the arc (maths §5).
pub trait InnerProduct {
    /// Joint restricted reconstruction of all rows of `new` together; `mutual` is the
    /// new objects' k×k proximity block where the model cannot compute it.
    fn extend_joint(&self, new: MatRef<'_, f64>, mutual: Option<MatRef<'_, f64>>) -> Result<Joint>;

    /// `steps + 1` points on the arc from projection to restricted reconstruction of
    /// each new object, `(object, λ, y)`.
    fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>>;
}

/// A value a fitted model keeps in memory but not in its file, and that equality
/// ignores: what the fit reports once, such as its warnings.
#[derive(Clone, Debug, Default)]
pub struct Transient<T>(pub T);

impl<T> PartialEq for Transient<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a model builds on first use or hands over once (a search index, a pending
/// score) and never stores: equal to any other, and cloned empty (a clone builds its
/// own), unlike [`Transient`], whose clone copies the value.
#[derive(Default)]
pub(crate) struct Cache<T: Default>(pub(crate) T);

impl<T: Default> Clone for Cache<T> {
    fn clone(&self) -> Self {
        Cache::default()
    }
}

impl<T: Default> PartialEq for Cache<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T: Default> std::fmt::Debug for Cache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cache")
    }
}

/// A fitted model: the contract every registered method's fitted type follows.
pub trait Fitted: OutOfSample {
    /// The parameters as fitted (ε as chosen), by name.
    fn param_values(&self) -> ParamList;

    /// What the fit decided that the user should know (a disconnected graph connected
    /// or embedded by components); interfaces show them as warnings. Not stored: a
    /// model read from a file has none.
    fn fit_warnings(&self) -> &[String] {
        &[]
    }

    /// Refuses, by name, every option of `opts` the model does not support (interfaces
    /// call it before reading any data).
    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()>;

    /// Extends with options (checked by [`Fitted::check_options`] first). The default
    /// is for models whose options change nothing once checked: projection.
    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        self.extend(new)
    }

    /// The k nearest training points of every row of `new` as this model finds them
    /// (exact by default; `None` for a model that keeps no training points).
    fn search_training(
        &self,
        new: MatRef<'_, f64>,
        k: usize,
    ) -> Option<crate::neighbors::Neighbours> {
        self.training_points()
            .map(|x| crate::neighbors::knn(new, x, k, false))
    }

    /// How many nearest training points of each new row this extension searches for
    /// (0: none, the default). The model then searches once, for the extension and the
    /// novelty score together, and calls [`Fitted::extend_near`].
    fn neighbours_wanted(&self, _opts: &ExtendOptions<'_>) -> usize {
        0
    }

    /// [`Fitted::extend_options`] given `near`, the k ≥ [`Fitted::neighbours_wanted`]
    /// nearest training points of every row of `new` (the default ignores them).
    fn extend_near(
        &self,
        new: MatRef<'_, f64>,
        opts: &ExtendOptions<'_>,
        _near: &crate::neighbors::Neighbours,
    ) -> Result<Extension> {
        self.extend_options(new, opts)
    }

    /// Whether these options couple the rows of a batch (an interface must then pass
    /// the whole input as one batch).
    fn batch_coupled(&self, _opts: &ExtendOptions<'_>) -> bool {
        false
    }

    /// The method's own `(key, value)` lines of `info` (parameters used, solver, …).
    fn info(&self, v: &mut Vec<(String, String)>);

    /// Eigenvalues of the fit, largest first, where there are any.
    fn eigenvalues(&self) -> Option<&[f64]> {
        None
    }

    /// Whether the sizes of a decoded payload agree.
    fn is_consistent(&self) -> bool;

    /// Restricted and joint reconstruction, where the method has them.
    fn inner_product(&self) -> Option<&dyn InnerProduct> {
        None
    }

    /// The inverse transform: embedding coordinates (rows of `embedded`) back to the
    /// input space, each with its power function as `residual` — where the method has
    /// one (`None` otherwise).
    fn inverse(&self, _embedded: MatRef<'_, f64>) -> Option<Result<Extension>> {
        None
    }

    /// The training points the model keeps (N×D), where it keeps them.
    fn training_points(&self) -> Option<MatRef<'_, f64>> {
        self.training_stored().map(StoredMat::view)
    }

    /// The stored matrix behind [`Fitted::training_points`] (what a model's novelty
    /// score shares instead of holding a copy); `None` where the model keeps none.
    #[doc(hidden)]
    fn training_stored(&self) -> Option<&StoredMat> {
        None
    }

    /// The novelty score (maths §18): fitted on the training points the model keeps,
    /// or else on the fitting `input` (points or dissimilarities; `None` where there is
    /// nothing to measure against: similarities, no input).
    fn novelty(&self, input: Option<Input<'_>>) -> Option<Novelty> {
        match self.training_points() {
            Some(x) => Novelty::fit(x),
            None => crate::diagnostics::novelty::from_input(input),
        }
    }

    /// Number of training rows N: the embedding's rows, unless the model streamed its
    /// embedding out instead of keeping it (a Nyström fit read in chunks).
    fn training_rows(&self) -> usize {
        self.embedding().nrows()
    }

    /// Cluster labels of the training points (clustering methods).
    fn labels(&self) -> Option<&[usize]> {
        None
    }

    /// Indices of the training rows that were embedded (all, unless a method drops some).
    fn kept(&self) -> Option<&[usize]> {
        None
    }

    /// ||f_X||²_H per value column (interpolants).
    fn norms_squared(&self) -> Option<&[f64]> {
        None
    }

    /// Whether new rows with `width` columns can be extended.
    fn accepts_width(&self, width: usize) -> bool {
        width == self.input_width()
    }

    /// What a new row holds, in words (for width errors).
    fn row_description(&self) -> &'static str {
        "the training data's dimension"
    }

    /// The kernel, the training points and the rank tolerance, for a kernel on points
    /// (theory diagnostics).
    fn kernel_on_points(&self) -> Option<(Kernel, MatRef<'_, f64>, f64)> {
        None
    }
}

/// The error for mutual proximities given to a model that computes them itself.
pub(crate) fn mutual_refused(method: &str) -> Error {
    Error::param(
        "mutual",
        format!("{method} computes the new points' mutual proximities itself; do not pass them"),
    )
}

/// `fit` of a method fitted on points only: other inputs are refused, named.
pub(crate) fn points_only<T>(
    input: Input<'_>,
    method: &str,
    fit: impl FnOnce(MatRef<'_, f64>) -> Result<T>,
) -> Result<T> {
    match input {
        Input::Points(x) => fit(x),
        other => Err(other.refused(method, "points")),
    }
}
