//! `oose._oose`: the Python bindings of the oose library.
//!
//! One class, [`PyModel`] (`oose._oose.Model`, any fitted model: embedding, extension
//! with diagnostics, joint restricted reconstruction, the arc, info, bytes in the model
//! file format), and one `fit_*` function per method whose keyword arguments are the
//! library's parameters under their SPEC names. The Python package `oose` wraps them in
//! scikit-learn estimators and converts every input to a C-contiguous float64 array
//! before it gets here; the GIL is released while Rust computes. Library errors arrive
//! in Python as `ValueError` with the library's message.
//!
//! Arrays cross the boundary by hand (row-major slices viewed as faer matrices, faer
//! matrices copied into row-major numpy arrays): two loops, no extra dependency.

use numpy::ndarray::Array2;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use oose::extend::{Extension, Strategy};
use oose::faer::MatRef;
use oose::kernel::{Bandwidth, Kernel};
use oose::linalg::eigen::Solver;
use oose::methods::diffusion_maps::{
    Density, DiffusionKernel, DiffusionMaps, Epsilon, LaplacianEigenmaps, OnIsolated, Output,
    Sparsity,
};
use oose::methods::interpolate::Interpolator;
use oose::methods::isomap::Isomap;
use oose::methods::kernel_pca::KernelPca;
use oose::methods::landmark_mds::{LandmarkMds, Landmarks};
use oose::methods::mds::{ClassicalMds, Proximity};
use oose::methods::pca::Pca;
use oose::methods::spectral_clustering::SpectralClustering;
use oose::methods::OutOfSample;
use oose::model::Model;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A library error as the `ValueError` Python users expect, with the same message.
fn value_error(e: oose::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn invalid(name: &'static str, reason: &str) -> oose::Error {
    oose::Error::InvalidParameter {
        name,
        reason: reason.into(),
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

/// Copies a faer matrix into a new row-major numpy array.
fn to_numpy<'py>(py: Python<'py>, m: MatRef<'_, f64>) -> Bound<'py, PyArray2<f64>> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut v = Vec::with_capacity(r * c);
    for i in 0..r {
        for j in 0..c {
            v.push(m[(i, j)]);
        }
    }
    Array2::from_shape_vec((r, c), v)
        .expect("the vector holds r·c values")
        .into_pyarray(py)
}

/// Coordinates and a dict of per-point diagnostics (`residual`, `reconstruction_error`
/// and the method's own columns, in the CLI's column order).
fn extension_to_python<'py>(
    py: Python<'py>,
    e: Extension,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
    let coords = to_numpy(py, e.coordinates.as_ref());
    let diag = PyDict::new(py);
    diag.set_item("residual", PyArray1::from_vec(py, e.residual))?;
    diag.set_item(
        "reconstruction_error",
        PyArray1::from_vec(py, e.reconstruction_error),
    )?;
    for c in e.extra {
        diag.set_item(c.name, PyArray1::from_vec(py, c.values))?;
    }
    Ok((coords, diag))
}

/// ε of a radial kernel: a float > 0 or the string `"auto"`.
fn bandwidth(e: &Bound<'_, PyAny>) -> PyResult<Bandwidth> {
    if let Ok(s) = e.extract::<String>() {
        return Bandwidth::from_name(&s).map_err(value_error);
    }
    let v: f64 = e
        .extract()
        .map_err(|_| PyValueError::new_err("epsilon: expected a float > 0 or \"auto\""))?;
    Bandwidth::value(v).map_err(value_error)
}

/// ε of the diffusion kernels: a float > 0 (or inf), or `"auto"`, `"median"`,
/// `"log-slope"`.
fn diffusion_epsilon(e: &Bound<'_, PyAny>) -> PyResult<Epsilon> {
    if let Ok(s) = e.extract::<String>() {
        return Epsilon::from_name(&s).map_err(value_error);
    }
    let v: f64 = e.extract().map_err(|_| {
        PyValueError::new_err("epsilon: expected a float > 0, \"auto\" or \"log-slope\"")
    })?;
    Ok(Epsilon::Value(v))
}

fn solver(name: &str) -> PyResult<Solver> {
    Solver::from_name(name).map_err(value_error)
}

#[allow(clippy::too_many_arguments)]
fn kernel(
    name: &str,
    epsilon: &Bound<'_, PyAny>,
    beta: Option<f64>,
    gamma: f64,
    coef0: f64,
    degree: u32,
) -> PyResult<Kernel> {
    Kernel::from_name(name, bandwidth(epsilon)?, beta, gamma, coef0, degree).map_err(value_error)
}

fn diffusion_kernel(
    epsilon: &Bound<'_, PyAny>,
    sparsity: &str,
    n_neighbors: usize,
    threshold: Option<f64>,
    alpha: f64,
) -> PyResult<DiffusionKernel> {
    Ok(DiffusionKernel {
        epsilon: diffusion_epsilon(epsilon)?,
        sparsity: Sparsity::from_parts(sparsity, n_neighbors, threshold).map_err(value_error)?,
        alpha,
    })
}

/// Runs `fit` on the rows of `x` without the GIL.
fn fit_rows<F>(py: Python<'_>, x: PyReadonlyArray2<'_, f64>, fit: F) -> PyResult<PyModel>
where
    F: FnOnce(MatRef<'_, f64>) -> oose::Result<Model> + Send,
{
    let rows = Rows::new(&x, "X")?;
    let model = py.detach(|| fit(rows.mat())).map_err(value_error)?;
    Ok(PyModel { inner: model })
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
        Model::from_bytes(data)
            .map(|inner| PyModel { inner })
            .map_err(value_error)
    }

    /// The model in the file format `oose fit` writes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from_bytes = slf.get_type().getattr("from_bytes")?;
        Ok((from_bytes, (slf.get().to_bytes(py),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<oose model: {}, {} training points, {} components>",
            self.inner.method(),
            self.inner.embedding().nrows(),
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
        match &self.inner {
            Model::Pca(m) => Some(m.eigenvalues().to_vec()),
            Model::KernelPca(m) => Some(m.eigenvalues().to_vec()),
            Model::Mds(m) => Some(m.core().eigenvalues().to_vec()),
            Model::LandmarkMds(m) => Some(m.core().eigenvalues().to_vec()),
            Model::Isomap(m) => Some(m.core().eigenvalues().to_vec()),
            Model::DiffusionMaps(m) => Some(m.eigenvalues().to_vec()),
            Model::Eigenmaps(m) => Some(m.core().eigenvalues().to_vec()),
            Model::SpectralClustering(m) => Some(m.core().eigenvalues().to_vec()),
            _ => None,
        }
    }

    /// ||f_X||²_H per value column (interpolants only).
    fn norms_squared(&self) -> Option<Vec<f64>> {
        match &self.inner {
            Model::Interpolate(m) => Some(m.norms_squared().to_vec()),
            _ => None,
        }
    }

    /// Cluster labels of the training points (spectral clustering only).
    fn labels(&self) -> Option<Vec<usize>> {
        match &self.inner {
            Model::SpectralClustering(m) => Some(m.labels().to_vec()),
            _ => None,
        }
    }

    /// Indices of the training rows that were embedded (Isomap's largest component;
    /// every row for the other methods).
    fn kept(&self) -> Vec<usize> {
        match &self.inner {
            Model::Isomap(m) => m.kept().to_vec(),
            m => (0..m.embedding().nrows()).collect(),
        }
    }

    /// Extends the rows of `z`: `(coordinates, diagnostics)` with diagnostics a dict of
    /// per-point arrays. `strategy` is `projection` or `restricted`; `density` and
    /// `on_isolated` override a diffusion-map model's; `kernel_diagonal` gives k(z, z)
    /// for a precomputed kernel.
    #[pyo3(signature = (z, *, strategy="projection", density=None, on_isolated=None, kernel_diagonal=None))]
    fn extend<'py>(
        &self,
        py: Python<'py>,
        z: PyReadonlyArray2<'py, f64>,
        strategy: &str,
        density: Option<&str>,
        on_isolated: Option<&str>,
        kernel_diagonal: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyDict>)> {
        let strategy = Strategy::from_name(strategy).map_err(value_error)?;
        let rows = Rows::new(&z, "X")?;
        let diag: Option<Vec<f64>> = kernel_diagonal
            .map(|d| d.as_slice().map(<[f64]>::to_vec))
            .transpose()
            .map_err(|_| PyValueError::new_err("kernel_diagonal: expected a 1-D float64 array"))?;
        let density = density
            .map(Density::from_name)
            .transpose()
            .map_err(value_error)?;
        let on_isolated = on_isolated
            .map(OnIsolated::from_name)
            .transpose()
            .map_err(value_error)?;
        let model = &self.inner;
        let e = py
            .detach(|| -> oose::Result<Extension> {
                let z = rows.mat();
                match (model, diag) {
                    (Model::KernelPca(m), Some(d)) if m.params().kernel == Kernel::Precomputed => {
                        if strategy != Strategy::Projection {
                            return Err(invalid(
                                "strategy",
                                "a precomputed kernel with its diagonal extends by projection",
                            ));
                        }
                        m.extend_kernel_rows(z, Some(&d))
                    }
                    (_, Some(_)) => Err(invalid(
                        "kernel_diagonal",
                        "applies only to kernel PCA with a precomputed kernel",
                    )),
                    (Model::DiffusionMaps(m), None) => m.extend_with(
                        z,
                        density.unwrap_or(m.params().density),
                        on_isolated.unwrap_or(m.params().on_isolated),
                    ),
                    (_, None) if density.is_some() || on_isolated.is_some() => Err(invalid(
                        "density",
                        "density and on_isolated at extension apply only to diffusion maps \
                             (Laplacian eigenmaps and spectral clustering take on_isolated at fit)",
                    )),
                    (_, None) => model.extend_with(z, strategy),
                }
            })
            .map_err(value_error)?;
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
        let j = py
            .detach(|| model.extend_joint(rows.mat(), mutual_rows.as_ref().map(Rows::mat)))
            .map_err(value_error)?;
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
        py.detach(|| model.arc(rows.mat(), steps))
            .map_err(value_error)
    }
}

/// Linear PCA (SPEC §2).
#[pyfunction]
#[pyo3(signature = (x, *, n_components, rank_tolerance))]
fn fit_pca(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = Pca {
        n_components,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Kernel PCA with Nyström extension (SPEC §3). `x` is the N×N kernel matrix when
/// `kernel = "precomputed"`.
#[pyfunction]
#[pyo3(signature = (x, *, n_components, kernel, epsilon, beta, gamma, coef0, degree, centering, solver, rank_tolerance))]
#[allow(clippy::too_many_arguments)]
fn fit_kernel_pca(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    kernel: &str,
    epsilon: &Bound<'_, PyAny>,
    beta: Option<f64>,
    gamma: f64,
    coef0: f64,
    degree: u32,
    centering: bool,
    solver: &str,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = KernelPca {
        n_components,
        kernel: self::kernel(kernel, epsilon, beta, gamma, coef0, degree)?,
        centering,
        solver: self::solver(solver)?,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Classical MDS (SPEC §5) of points or of an N×N proximity matrix; `input` is
/// `points`, `squared-dissimilarities`, `dissimilarities` or `similarities`.
#[pyfunction]
#[pyo3(signature = (x, *, input, n_components, solver, rank_tolerance))]
fn fit_mds(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    input: &str,
    n_components: usize,
    solver: &str,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let kind = Proximity::from_name(input).map_err(value_error)?;
    let p = ClassicalMds {
        n_components,
        solver: self::solver(solver)?,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit_proximity(x, kind).map(Model::from))
}

/// Landmark MDS (SPEC §6).
#[pyfunction]
#[pyo3(signature = (x, *, n_components, n_landmarks, landmarks, seed, solver))]
fn fit_landmark_mds(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    n_landmarks: usize,
    landmarks: &str,
    seed: u64,
    solver: &str,
) -> PyResult<PyModel> {
    let p = LandmarkMds {
        n_components,
        n_landmarks,
        landmarks: Landmarks::from_name(landmarks).map_err(value_error)?,
        seed,
        solver: self::solver(solver)?,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Isomap (SPEC §6).
#[pyfunction]
#[pyo3(signature = (x, *, n_components, n_neighbors, solver, largest_component, rank_tolerance))]
fn fit_isomap(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    n_neighbors: usize,
    solver: &str,
    largest_component: bool,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = Isomap {
        n_components,
        n_neighbors,
        solver: self::solver(solver)?,
        largest_component,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Diffusion maps (SPEC §7).
#[pyfunction]
#[pyo3(signature = (x, *, n_components, epsilon, sparsity, n_neighbors, threshold, alpha, t, output, solver, density, on_isolated, residual, rank_tolerance))]
#[allow(clippy::too_many_arguments)]
fn fit_diffusion_maps(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    epsilon: &Bound<'_, PyAny>,
    sparsity: &str,
    n_neighbors: usize,
    threshold: Option<f64>,
    alpha: f64,
    t: f64,
    output: &str,
    solver: &str,
    density: &str,
    on_isolated: &str,
    residual: Option<bool>,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = DiffusionMaps {
        n_components,
        kernel: diffusion_kernel(epsilon, sparsity, n_neighbors, threshold, alpha)?,
        t,
        output: Output::from_name(output).map_err(value_error)?,
        solver: self::solver(solver)?,
        density: Density::from_name(density).map_err(value_error)?,
        on_isolated: OnIsolated::from_name(on_isolated).map_err(value_error)?,
        residual,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Laplacian eigenmaps (SPEC §7).
#[pyfunction]
#[pyo3(signature = (x, *, n_components, epsilon, sparsity, n_neighbors, threshold, alpha, solver, on_isolated, rank_tolerance))]
#[allow(clippy::too_many_arguments)]
fn fit_eigenmaps(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_components: usize,
    epsilon: &Bound<'_, PyAny>,
    sparsity: &str,
    n_neighbors: usize,
    threshold: Option<f64>,
    alpha: f64,
    solver: &str,
    on_isolated: &str,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = LaplacianEigenmaps {
        n_components,
        kernel: diffusion_kernel(epsilon, sparsity, n_neighbors, threshold, alpha)?,
        solver: self::solver(solver)?,
        on_isolated: OnIsolated::from_name(on_isolated).map_err(value_error)?,
        rank_tolerance,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Spectral clustering, Ng–Jordan–Weiss (SPEC §7).
#[pyfunction]
#[pyo3(signature = (x, *, n_clusters, epsilon, sparsity, n_neighbors, threshold, alpha, solver, seed, n_init, on_isolated))]
#[allow(clippy::too_many_arguments)]
fn fit_spectral_clustering(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    n_clusters: usize,
    epsilon: &Bound<'_, PyAny>,
    sparsity: &str,
    n_neighbors: usize,
    threshold: Option<f64>,
    alpha: f64,
    solver: &str,
    seed: u64,
    n_init: usize,
    on_isolated: &str,
) -> PyResult<PyModel> {
    let p = SpectralClustering {
        n_clusters,
        kernel: diffusion_kernel(epsilon, sparsity, n_neighbors, threshold, alpha)?,
        solver: self::solver(solver)?,
        seed,
        n_init,
        on_isolated: OnIsolated::from_name(on_isolated).map_err(value_error)?,
    };
    fit_rows(py, x, |x| p.fit(x).map(Model::from))
}

/// Kernel interpolation of `values` (N×m) given on the rows of `x` (SPEC §8).
#[pyfunction]
#[pyo3(signature = (x, values, *, kernel, epsilon, beta, gamma, coef0, degree, regularization, geometric_harmonics, rank_tolerance))]
#[allow(clippy::too_many_arguments)]
fn fit_interpolator(
    py: Python<'_>,
    x: PyReadonlyArray2<'_, f64>,
    values: PyReadonlyArray2<'_, f64>,
    kernel: &str,
    epsilon: &Bound<'_, PyAny>,
    beta: Option<f64>,
    gamma: f64,
    coef0: f64,
    degree: u32,
    regularization: f64,
    geometric_harmonics: Option<f64>,
    rank_tolerance: f64,
) -> PyResult<PyModel> {
    let p = Interpolator {
        kernel: self::kernel(kernel, epsilon, beta, gamma, coef0, degree)?,
        regularization,
        geometric_harmonics,
        rank_tolerance,
    };
    let f = Rows::new(&values, "values")?;
    fit_rows(py, x, |x| p.fit(x, f.mat()).map(Model::from))
}

/// A built-in data set of SPEC §10 (deterministic given the seed): `swiss_roll`,
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

/// The extension module.
#[pymodule]
fn _oose(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModel>()?;
    m.add_function(wrap_pyfunction!(fit_pca, m)?)?;
    m.add_function(wrap_pyfunction!(fit_kernel_pca, m)?)?;
    m.add_function(wrap_pyfunction!(fit_mds, m)?)?;
    m.add_function(wrap_pyfunction!(fit_landmark_mds, m)?)?;
    m.add_function(wrap_pyfunction!(fit_isomap, m)?)?;
    m.add_function(wrap_pyfunction!(fit_diffusion_maps, m)?)?;
    m.add_function(wrap_pyfunction!(fit_eigenmaps, m)?)?;
    m.add_function(wrap_pyfunction!(fit_spectral_clustering, m)?)?;
    m.add_function(wrap_pyfunction!(fit_interpolator, m)?)?;
    m.add_function(wrap_pyfunction!(dataset, m)?)?;
    m.add("FORMAT_VERSION", oose::model::FORMAT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
