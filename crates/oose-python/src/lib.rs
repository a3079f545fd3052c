//! `oose._oose`: the Python bindings of the oose library.
//!
//! One class, [`PyModel`] (`oose._oose.Model`, any fitted model: embedding, extension
//! with diagnostics, joint restricted reconstruction, the arc, info, its parameters,
//! bytes in the model file format), and one `fit(method, x, params)` for every method of
//! the library's registry, whose parameters are the library's under their SPEC names.
//! Nothing here is specific to one method. The Python package `oose` wraps them in
//! scikit-learn estimators and converts every input to a C-contiguous float64 array
//! before it gets here; the GIL is released while Rust computes. Library errors arrive
//! in Python as `ValueError` with the library's message.
//!
//! Arrays cross the boundary by hand (row-major slices viewed as faer matrices, faer
//! matrices copied into row-major numpy arrays, `convert`): two loops, no extra dependency.

use numpy::{PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use oose::faer::MatRef;
use oose::methods::mds::Proximity;
use oose::methods::OutOfSample;
use oose::model::{ExtendOptions, Input, MethodInfo, Model, METHODS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

mod convert;
mod nystrom;
mod options;
use convert::{extension_to_python, to_dict, to_numpy, to_value};
use options::{bag, check_extend_options, check_params, extend_options, name_arg, named_options};

/// A library error as the `ValueError` Python users expect, with the same message.
fn value_error(e: oose::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs library code so that a Rust panic (a bug) reaches Python as a `ValueError`
/// naming it, never as `pyo3_runtime.PanicException` (which `except Exception` misses).
fn guarded<T>(f: impl FnOnce() -> oose::Result<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(value_error),
        Err(p) => Err(PyValueError::new_err(format!(
            "internal error (please report): {}",
            oose::error::panic_message(p.as_ref())
        ))),
    }
}

/// The most threads `n_jobs` may ask for (the package reads it as `_oose.MAX_THREADS`):
/// a larger count is a mistake, not a machine, and each thread is spawned at once.
const MAX_THREADS: i64 = 1024;

/// The thread pool of `n_jobs` (scikit-learn's convention: `None` or −1 all cores,
/// −2 all but one, …; a positive count as given). `None` returned: rayon's global pool
/// (all cores). Pools are kept per size: a `transform` of one row must not pay for
/// spawning threads.
fn pool(n_jobs: Option<i64>) -> PyResult<Option<Arc<ThreadPool>>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let n = match n_jobs {
        None | Some(-1) => return Ok(None),
        Some(0) => {
            return Err(PyValueError::new_err(
                "n_jobs: 0 is not a thread count (None or -1: all cores, k > 0: k threads)",
            ))
        }
        Some(k) if k > MAX_THREADS => {
            return Err(PyValueError::new_err(format!(
                "n_jobs: at most {MAX_THREADS} threads, got {k}"
            )))
        }
        Some(k) if k > 0 => k,
        Some(k) => (cores + 1 + k).max(1),
    } as usize;
    static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(k, _)| *k == n) {
        return Ok(Some(p.clone()));
    }
    let p = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| PyValueError::new_err(format!("n_jobs: {e}")))?,
    );
    pools.push((n, p.clone()));
    Ok(Some(p))
}

/// Runs `f` in `pool` (or on the global pool).
fn in_pool<T: Send>(pool: &Option<Arc<ThreadPool>>, f: impl FnOnce() -> T + Send) -> T {
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// Runs `f` (a fit, the GIL released) on its own thread while this one checks for
/// Ctrl-C every 100 ms: on a signal the library is asked to stop
/// (`oose::progress::request_stop`; t-SNE and UMAP stop within an iteration or an
/// epoch), the fit is waited for and the signal's exception (`KeyboardInterrupt`) is
/// returned. The stop request is process-wide: fits running at the same time in other
/// Python threads stop too.
fn interruptible<T: Send>(f: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    oose::progress::clear_stop();
    std::thread::scope(|scope| {
        let (tx, rx) = channel();
        scope.spawn(move || {
            let _ = tx.send(f());
        });
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(result) => return result,
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(signal) = Python::attach(|py| py.check_signals()) {
                        oose::progress::request_stop();
                        let _ = rx.recv();
                        oose::progress::clear_stop();
                        return Err(signal);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyValueError::new_err(
                        "internal error (please report): the fit ended without a result",
                    ))
                }
            }
        }
    })
}

/// While alive, the library's progress messages go to Python's `sys.stderr` (shown
/// in notebooks too), prefixed `[oose]`.
struct Verbose;

impl Verbose {
    fn new(on: bool) -> Option<Verbose> {
        on.then(|| {
            oose::progress::set_hook(Some(Box::new(|msg: &str| {
                Python::attach(|py| {
                    if let Ok(err) = py.import("sys").and_then(|s| s.getattr("stderr")) {
                        let _ = err.call_method1("write", (format!("[oose] {msg}\n"),));
                        let _ = err.call_method0("flush");
                    }
                });
            })));
            Verbose
        })
    }
}

impl Drop for Verbose {
    fn drop(&mut self) {
        oose::progress::set_hook(None);
    }
}

/// A borrowed C-contiguous float64 matrix: its data and shape.
struct Rows<'a> {
    data: &'a [f64],
    nrows: usize,
    ncols: usize,
}

impl<'a> Rows<'a> {
    fn new(a: &'a PyReadonlyArray2<'_, f64>, what: &str) -> PyResult<Rows<'a>> {
        let data = a.as_slice().map_err(|_| {
            PyValueError::new_err(format!(
                "{what}: expected a C-contiguous float64 array (the `oose` package converts \
                 its inputs; call the estimators rather than `oose._oose` directly)"
            ))
        })?;
        let shape = a.shape();
        Ok(Rows {
            data,
            nrows: shape[0],
            ncols: shape[1],
        })
    }

    fn mat(&self) -> MatRef<'a, f64> {
        MatRef::from_row_major_slice(self.data, self.nrows, self.ncols)
    }
}

/// What `__reduce__` returns: the class's `from_bytes` and the object's bytes.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));

/// `__reduce__` of an object that pickles as its bytes, read back by its class's
/// `from_bytes`.
fn by_bytes<'py, T>(slf: &Bound<'py, T>, bytes: Bound<'py, PyBytes>) -> PyResult<Reduced<'py>> {
    Ok((slf.as_any().get_type().getattr("from_bytes")?, (bytes,)))
}

/// Any fitted oose model. Pickles through the model file format.
#[pyclass(name = "Model", module = "oose._oose", frozen)]
pub struct PyModel {
    inner: Model,
}

#[pymethods]
impl PyModel {
    /// Decodes the bytes of a model file (magic, version, checksum are checked).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyModel> {
        guarded(|| Model::from_bytes(data)).map(|inner| PyModel { inner })
    }

    /// The model in the file format `oose fit` writes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<Reduced<'py>> {
        by_bytes(slf, slf.get().to_bytes(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "<oose model: {}, {} training points, {} components>",
            self.inner.method(),
            self.inner.fitted().training_rows(),
            self.inner.n_components()
        )
    }

    /// The method's name as on the command line (`kpca`, `isomap`, …).
    #[getter]
    fn method(&self) -> &'static str {
        self.inner.method()
    }

    /// Embedding dimension d (for an interpolant: the number of value columns).
    #[getter]
    fn n_components(&self) -> usize {
        self.inner.n_components()
    }

    /// Number of columns `extend` expects.
    #[getter]
    fn input_width(&self) -> usize {
        self.inner.input_width()
    }

    /// The training embedding (N×d).
    fn embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        to_numpy(py, self.inner.embedding())
    }

    /// `(key, value)` pairs: method, parameters actually used (ε chosen), sizes,
    /// eigenvalues, solver, format version — what `oose info` prints.
    fn info(&self) -> Vec<(String, String)> {
        self.inner.info()
    }

    /// The eigenvalues of the fit, largest first (None for an interpolant).
    fn eigenvalues(&self) -> Option<Vec<f64>> {
        self.inner.fitted().eigenvalues().map(<[f64]>::to_vec)
    }

    /// ||f_X||²_H per value column (interpolants only).
    /// Leave-one-out novelty scores of the training points, ascending (the calibration
    /// of `novelty_pvalue`), or None where the model has no novelty score.
    #[getter]
    fn novelty_calibration(&self) -> Option<Vec<f64>> {
        self.inner.novelty().map(|n| n.calibration().to_vec())
    }

    /// The warning to give where `is_novel` cannot be set at level `alpha` (None: the
    /// model's): α below the smallest p-value 1/(N + 1). None where it can, or where
    /// the model has no novelty score.
    #[pyo3(signature = (alpha=None))]
    fn unreachable_level(&self, alpha: Option<f64>) -> Option<String> {
        self.inner
            .novelty()
            .and_then(|n| n.unreachable_level(alpha))
    }

    fn norms_squared(&self) -> Option<Vec<f64>> {
        self.inner.fitted().norms_squared().map(<[f64]>::to_vec)
    }

    /// Cluster labels of the training points (spectral clustering only).
    fn labels(&self) -> Option<Vec<usize>> {
        self.inner.fitted().labels().map(<[usize]>::to_vec)
    }

    /// Indices of the training rows that were embedded (Isomap's largest component;
    /// every row for the other methods).
    fn kept(&self) -> Vec<usize> {
        match self.inner.fitted().kept() {
            Some(k) => k.to_vec(),
            None => (0..self.inner.embedding().nrows()).collect(),
        }
    }

    /// The annotations stored with the model: `{key: text}` (the Python estimator's
    /// constructor parameters as JSON; empty for a file written by `oose fit`).
    fn annotations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.annotations() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The same model with `annotations` (`{key: text}`) in place of its own.
    fn with_annotations(&self, annotations: &Bound<'_, PyDict>) -> PyResult<PyModel> {
        let inner = self
            .inner
            .clone()
            .with_annotations(annotation_pairs(annotations)?)
            .map_err(value_error)?;
        Ok(PyModel { inner })
    }

    /// What the fit decided that the user should know (a disconnected graph connected
    /// or embedded by components); empty for a model read from bytes. The estimators
    /// issue them as warnings.
    fn fit_warnings(&self) -> Vec<String> {
        self.inner.fitted().fit_warnings().to_vec()
    }

    /// The parameters the model was fitted with, by their SPEC names (what `fit`
    /// takes; ε as the model records it: see `Model::params`).
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        to_dict(py, &self.inner.params())
    }

    /// Extends the rows of `z`: `(coordinates, diagnostics)` with diagnostics a dict of
    /// per-point arrays. `strategy` is `projection` or `restricted`; `density` and
    /// `on_isolated` override a diffusion-map model's; `kernel_diagonal` gives k(z, z)
    /// for a precomputed kernel; `alpha` is the level of `is_novel` (default: the
    /// model's, 0.01); `extension` is kernel PCA's, kernel interpolation's and dense
    /// diffusion maps' `exact`, `low-rank` or `auto` (with `lowrank_tolerance`, maths §20).
    /// With `diagnostics=False` only the coordinates are computed (the same, bitwise)
    /// and the dict is empty.
    #[pyo3(signature = (z, *, strategy="projection", density=None, on_isolated=None, kernel_diagonal=None, alpha=None, extension=None, lowrank_tolerance=None, n_jobs=None, diagnostics=true))]
    // One argument per Python keyword: the signature is the Python one.
    #[allow(clippy::too_many_arguments)]
    fn extend<'py>(
        &self,
        py: Python<'py>,
        z: PyReadonlyArray2<'py, f64>,
        strategy: &str,
        density: Option<&str>,
        on_isolated: Option<&str>,
        kernel_diagonal: Option<PyReadonlyArray1<'py, f64>>,
        alpha: Option<f64>,
        extension: Option<&str>,
        lowrank_tolerance: Option<f64>,
        n_jobs: Option<i64>,
        diagnostics: bool,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
        let threads = pool(n_jobs)?;
        let rows = Rows::new(&z, "X")?;
        let diag: Option<Vec<f64>> = kernel_diagonal
            .map(|d| d.as_slice().map(<[f64]>::to_vec))
            .transpose()
            .map_err(|_| PyValueError::new_err("kernel_diagonal: expected a 1-D float64 array"))?;
        let opts = ExtendOptions {
            kernel_diagonal: diag.as_deref(),
            alpha,
            coordinates_only: !diagnostics,
            ..extend_options(strategy, density, on_isolated, extension, lowrank_tolerance)?
        };
        let model = &self.inner;
        let e = py.detach(|| {
            in_pool(&threads, || {
                guarded(|| model.extend_options(rows.mat(), &opts))
            })
        })?;
        if !diagnostics {
            return Ok((to_numpy(py, e.coordinates.as_ref()), PyDict::new(py)));
        }
        extension_to_python(py, e)
    }

    /// Checks extension options, given as `extend` takes them (keywords `strategy`,
    /// `density`, `on_isolated`, `extension`, `lowrank_tolerance`), against this model,
    /// reading no data: an option the model does not support, or a value that is not
    /// one, is a `ValueError` naming it (estimators call it at fit, so that a wrong
    /// option is not found first by `transform`).
    #[pyo3(signature = (**options))]
    fn check_options(&self, options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let opts = named_options(options)?;
        self.inner.check_options(&opts).map_err(value_error)
    }

    /// The inverse transform (UMAP): rows of embedding coordinates back to the input
    /// space; returns `(points, diagnostics)` with `residual` (the interpolation's power
    /// function) and `reconstruction_error`.
    #[pyo3(signature = (y, *, n_jobs=None))]
    fn inverse_transform<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray2<'py, f64>,
        n_jobs: Option<i64>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
        let threads = pool(n_jobs)?;
        let rows = Rows::new(&y, "X")?;
        let model = &self.inner;
        let e =
            py.detach(|| in_pool(&threads, || guarded(|| model.inverse_transform(rows.mat()))))?;
        extension_to_python(py, e)
    }

    /// Joint restricted reconstruction of all rows of `z` together (the MDS family and
    /// kernel PCA); `mutual` is the new objects' k×k proximity block for MDS fitted on
    /// proximities. Returns `(coordinates, info)` with the objective, the gradient norm
    /// and the objectives of the one-by-one and projection starts.
    #[pyo3(signature = (z, *, mutual=None))]
    fn extend_joint<'py>(
        &self,
        py: Python<'py>,
        z: PyReadonlyArray2<'py, f64>,
        mutual: Option<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
        let rows = Rows::new(&z, "X")?;
        let mutual_rows = mutual
            .as_ref()
            .map(|m| Rows::new(m, "mutual"))
            .transpose()?;
        let model = &self.inner;
        let j = py.detach(|| {
            guarded(|| model.extend_joint(rows.mat(), mutual_rows.as_ref().map(Rows::mat)))
        })?;
        let info = PyDict::new(py);
        info.set_item("objective", j.objective)?;
        info.set_item("gradient_norm", j.gradient_norm)?;
        info.set_item("objective_one_by_one", j.objective_one_by_one)?;
        info.set_item("objective_projection", j.objective_projection)?;
        Ok((to_numpy(py, j.coordinates.as_ref()), info))
    }

    /// `steps + 1` points on the arc from projection to restricted reconstruction of
    /// each row of `z`: a list of `(row, λ, coordinates)`.
    fn arc(
        &self,
        py: Python<'_>,
        z: PyReadonlyArray2<'_, f64>,
        steps: usize,
    ) -> PyResult<Vec<(usize, f64, Vec<f64>)>> {
        let rows = Rows::new(&z, "X")?;
        let model = &self.inner;
        py.detach(|| guarded(|| model.arc(rows.mat(), steps)))
    }
}

/// Fits the registered method `method` (`kpca`, `isomap`, … — see `methods()`) on the
/// rows of `x` with the parameters `params` (a dict by SPEC name; absent ones take the
/// library's defaults, an unknown one is an error). `values` (N×m) are the function
/// values for `interpolate`; `input` names what `x` holds for classical MDS (`points`,
/// `squared-dissimilarities`, `dissimilarities`, `similarities`); `annotations`
/// (`{key: text}`) are stored in the model as `Model.with_annotations` would, without
/// its copy of the model.
#[pyfunction]
#[pyo3(signature = (method, x, params, *, values=None, input=None, n_jobs=None, verbose=false, annotations=None))]
// One argument per Python keyword: the signature is the Python one.
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    params: &Bound<'_, PyDict>,
    values: Option<PyReadonlyArray2<'_, f64>>,
    input: Option<&Bound<'_, PyAny>>,
    n_jobs: Option<i64>,
    verbose: bool,
    annotations: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyModel> {
    let threads = pool(n_jobs)?;
    let annotations = annotations.map(annotation_pairs).transpose()?;
    let bag = bag(params)?;
    // `kpca` with `n_landmarks` is its landmark form, `kpca-nystrom`.
    let info = MethodInfo::named(method)
        .and_then(|m| m.routed(&bag))
        .map_err(value_error)?;
    let input = input.map(|v| name_arg("input", v)).transpose()?;
    let kind = Proximity::from_name(input.as_deref().unwrap_or("points")).map_err(value_error)?;
    let rows = Rows::new(&x, "X")?;
    let f = values
        .as_ref()
        .map(|v| Rows::new(v, "values"))
        .transpose()?;
    let _progress = Verbose::new(verbose);
    let model = py.detach(|| {
        interruptible(|| {
            in_pool(&threads, || {
                guarded(|| {
                    let x = rows.mat();
                    let input = match (&f, kind) {
                        (Some(f), _) => Input::Values {
                            points: x,
                            values: f.mat(),
                        },
                        (None, Proximity::Points) => Input::Points(x),
                        (None, kind) => Input::Proximity(x, kind),
                    };
                    (info.fit)(&bag, input)
                })
            })
        })
    })?;
    // Annotated here, where the model is ours: `with_annotations` on the Python object
    // would copy it (0.04 s for a 10⁶-point embedding).
    let inner = match annotations {
        Some(pairs) => model.with_annotations(pairs).map_err(value_error)?,
        None => model,
    };
    Ok(PyModel { inner })
}

/// `{key: text}` as the pairs `Model::with_annotations` takes.
fn annotation_pairs(annotations: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    annotations
        .iter()
        .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<String>()?)))
        .collect()
}

/// t-SNE's joint probabilities P (maths §12) from each point's neighbour indices and
/// squared distances (both N×k): CSR arrays `(indptr, indices, data)` of the symmetric
/// N×N matrix. For comparing P with other implementations.
#[pyfunction]
fn tsne_joint_probabilities(
    indices: PyReadonlyArray2<'_, i64>,
    sq_distances: PyReadonlyArray2<'_, f64>,
    perplexity: f64,
) -> PyResult<(Vec<usize>, Vec<usize>, Vec<f64>)> {
    let idx = indices.as_array();
    let sq = sq_distances.as_array();
    let idx: Vec<Vec<usize>> = idx
        .rows()
        .into_iter()
        .map(|r| {
            r.iter()
                .map(|&v| usize::try_from(v).unwrap_or(usize::MAX))
                .collect()
        })
        .collect();
    let sq: Vec<Vec<f64>> = sq.rows().into_iter().map(|r| r.to_vec()).collect();
    let rows = guarded(|| oose::methods::tsne::joint_probabilities(&idx, &sq, perplexity))?;
    let mut indptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for r in rows {
        for (c, v) in r {
            cols.push(c);
            vals.push(v);
        }
        indptr.push(cols.len());
    }
    Ok((indptr, cols, vals))
}

/// The registered methods' names.
#[pyfunction]
fn methods() -> Vec<&'static str> {
    METHODS.iter().map(|m| m.name).collect()
}

/// The default parameters of `method`, by SPEC name, in the library's order.
#[pyfunction]
fn defaults<'py>(py: Python<'py>, method: &str) -> PyResult<Bound<'py, PyDict>> {
    let info = MethodInfo::named(method).map_err(value_error)?;
    to_dict(py, &(info.defaults)())
}

/// `(name, help)` of each parameter of `method`.
#[pyfunction]
fn param_help(method: &str) -> PyResult<Vec<(&'static str, &'static str)>> {
    let info = MethodInfo::named(method).map_err(value_error)?;
    Ok(info.specs.iter().map(|s| (s.name, s.help)).collect())
}

/// A built-in data set of maths §10 (deterministic given the seed): `swiss_roll`,
/// `swiss_roll_hole`, `s_curve`, `punched_sphere`, `three_d_clusters`, `helix`,
/// `trefoil`, `twin_peaks`, `circle_s1`.
#[pyfunction]
#[pyo3(signature = (name, n, *, noise=0.0, seed=0))]
fn dataset<'py>(
    py: Python<'py>,
    name: &str,
    n: usize,
    noise: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let d = oose::datasets::by_name(name, n, noise, seed).map_err(value_error)?;
    Ok(to_numpy(py, d.points.as_ref()))
}

/// Asks every running fit to stop, as Ctrl-C does (`oose::progress::request_stop`): a
/// fit in progress returns `ValueError("interrupted: …")` at its next check; the request
/// is withdrawn when the next fit starts. Private: the tests' safety net against an
/// interrupt that never arrives.
#[pyfunction]
fn _request_stop() {
    oose::progress::request_stop();
}

/// The extension module.
#[pymodule]
fn _oose(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModel>()?;
    m.add("MAX_THREADS", MAX_THREADS)?;
    m.add_class::<nystrom::PyNystromPlan>()?;
    m.add_class::<nystrom::PyNystromSums>()?;
    m.add_class::<nystrom::PyNystromFit>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(param_help, m)?)?;
    m.add_function(wrap_pyfunction!(dataset, m)?)?;
    m.add_function(wrap_pyfunction!(tsne_joint_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(check_extend_options, m)?)?;
    m.add_function(wrap_pyfunction!(check_params, m)?)?;
    m.add_function(wrap_pyfunction!(_request_stop, m)?)?;
    m.add("FORMAT_VERSION", oose::model::FORMAT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
