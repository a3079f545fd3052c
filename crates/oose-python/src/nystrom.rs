//! The pieces of kernel PCA's Nyström fit (maths §21) for a fit orchestrated in Python:
//! chunks from an iterable, or a Dask array's blocks reduced on a cluster
//! (`oose.dask.fit_kernel_pca`). A plan (landmarks and their factor) is made once from
//! a sample; each chunk gives its sums; the sums add in chunk order; `finish` gives the
//! fit: its model, and the coordinates of rows without diagnostics or novelty search
//! (the training embedding's pass). Plans, sums and fits pickle through their bytes.

use crate::{bag, by_bytes, guarded, value_error, PyModel, Reduced, Rows};
use numpy::PyArray2;
use numpy::PyReadonlyArray2;
use oose::methods::kernel_pca::{FittedNystromKpca, NystromKpca, NystromPlan, NystromSums};
use oose::model::{Method, Model};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

fn params_of(params: &Bound<'_, PyDict>) -> PyResult<NystromKpca> {
    NystromKpca::from_values(&bag(params)?).map_err(value_error)
}

/// The landmarks of a Nyström fit and their factor: what every chunk's sums need.
#[pyclass(name = "NystromPlan", module = "oose._oose", frozen)]
pub struct PyNystromPlan {
    inner: NystromPlan,
}

/// A finished Nyström fit: the model, and the coordinates of rows without diagnostics
/// (the training embedding's pass: no novelty search). Pickles through its bytes
/// (coordinates only: the model's novelty score stays with `model()`).
#[pyclass(name = "NystromFit", module = "oose._oose", frozen)]
pub struct PyNystromFit {
    fitted: FittedNystromKpca,
    model: Option<Model>,
}

#[pymethods]
impl PyNystromFit {
    /// The model, with its novelty score (only where the fit was finished).
    fn model(&self) -> PyResult<PyModel> {
        self.model
            .clone()
            .map(|inner| PyModel { inner })
            .ok_or_else(|| {
                value_error(oose::Error::Unsupported(
                    "a NystromFit read from bytes carries coordinates only; take model() \
                 before pickling"
                        .into(),
                ))
            })
    }

    /// The coordinates of the rows of `x` (no diagnostics).
    fn embed<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows = Rows::new(&x, "X")?;
        let y = py.detach(|| guarded(|| self.fitted.embed(rows.mat())))?;
        Ok(crate::to_numpy(py, y.as_ref()))
    }

    /// The fit as bytes (coordinates only).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.fitted.to_bytes())
    }

    /// A fit from `to_bytes` (coordinates only).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyNystromFit> {
        guarded(|| FittedNystromKpca::from_bytes(data)).map(|fitted| PyNystromFit {
            fitted,
            model: None,
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<Reduced<'py>> {
        by_bytes(slf, slf.get().to_bytes(py))
    }
}

/// The sums of some chunks of a Nyström fit (added in chunk order).
#[pyclass(name = "NystromSums", module = "oose._oose")]
pub struct PyNystromSums {
    inner: NystromSums,
}

#[pymethods]
impl PyNystromPlan {
    /// The plan from the sample rows `sample` (their indices `rows` among the `n`
    /// training rows, from `sample_rows`) with kpca-nystrom's parameters `params`.
    #[new]
    fn new(
        py: Python<'_>,
        params: &Bound<'_, PyDict>,
        sample: PyReadonlyArray2<'_, f64>,
        rows: Vec<usize>,
        n: usize,
    ) -> PyResult<PyNystromPlan> {
        let p = params_of(params)?;
        let s = Rows::new(&sample, "sample")?;
        let inner = py.detach(|| guarded(|| p.plan(s.mat(), &rows, n)))?;
        Ok(PyNystromPlan { inner })
    }

    /// The indices of the sample among `n` rows (increasing).
    #[staticmethod]
    fn sample_rows(params: &Bound<'_, PyDict>, n: usize) -> PyResult<Vec<usize>> {
        Ok(params_of(params)?.sample_rows(n))
    }

    /// Number of landmarks kept.
    #[getter]
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    /// Rows per block the single-machine fit uses.
    #[getter]
    fn chunk_rows(&self) -> usize {
        self.inner.chunk_rows()
    }

    /// Zero sums.
    fn empty_sums(&self) -> PyNystromSums {
        PyNystromSums {
            inner: self.inner.empty_sums(),
        }
    }

    /// The sums of the rows of `chunk`.
    fn sums(&self, py: Python<'_>, chunk: PyReadonlyArray2<'_, f64>) -> PyResult<PyNystromSums> {
        let c = Rows::new(&chunk, "chunk")?;
        let inner = py.detach(|| guarded(|| self.inner.sums(c.mat())))?;
        Ok(PyNystromSums { inner })
    }

    /// The fit from the sums of all rows, with the novelty score fitted on `sample`
    /// (the plan's sample): its `model()` (whose embedding is empty) and `embed(rows)`
    /// for the training embedding.
    fn finish(
        &self,
        py: Python<'_>,
        sums: &PyNystromSums,
        sample: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<PyNystromFit> {
        let s = Rows::new(&sample, "sample")?;
        let fitted =
            py.detach(|| guarded(|| self.inner.finish_with_sample(&sums.inner, s.mat())))?;
        Ok(PyNystromFit {
            fitted: fitted.clone(),
            model: Some(Model::from(fitted)),
        })
    }

    /// The plan as bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// A plan from `to_bytes`.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyNystromPlan> {
        guarded(|| NystromPlan::from_bytes(data)).map(|inner| PyNystromPlan { inner })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<Reduced<'py>> {
        by_bytes(slf, slf.get().to_bytes(py))
    }
}

#[pymethods]
impl PyNystromSums {
    /// Adds `other` (the next chunks' sums) in place.
    fn add(&mut self, other: &PyNystromSums) -> PyResult<()> {
        self.inner.add(&other.inner).map_err(value_error)
    }

    /// Rows summed.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n
    }

    /// The sums as bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// Sums from `to_bytes`.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyNystromSums> {
        guarded(|| NystromSums::from_bytes(data)).map(|inner| PyNystromSums { inner })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<Reduced<'py>> {
        by_bytes(slf, slf.borrow().to_bytes(py))
    }
}
