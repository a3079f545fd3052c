//! The pieces of kernel PCA's Nyström fit (maths §21) for a fit orchestrated in Python:
//! chunks from an iterable, or a Dask array's blocks reduced on a cluster
//! (`oose.dask.fit_kernel_pca`). A plan (landmarks and their factor) is made once from
//! a sample; each chunk gives its sums; the sums add in chunk order; `finish` gives the
//! model. Plans and sums pickle through their bytes.

use crate::{by_bytes, guarded, to_value, value_error, PyModel, Reduced, Rows};
use numpy::PyReadonlyArray2;
use oose::methods::kernel_pca::{NystromKpca, NystromPlan, NystromSums};
use oose::model::params::Values;
use oose::model::{Method, Model};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

fn params_of(params: &Bound<'_, PyDict>) -> PyResult<NystromKpca> {
    let mut bag = Values::new();
    for (k, v) in params.iter() {
        let k: String = k.extract()?;
        let v = to_value(&k, &v)?;
        bag.set(&k, v);
    }
    NystromKpca::from_values(&bag).map_err(value_error)
}

/// The landmarks of a Nyström fit and their factor: what every chunk's sums need.
#[pyclass(name = "NystromPlan", module = "oose._oose", frozen)]
pub struct PyNystromPlan {
    inner: NystromPlan,
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

    /// The model from the sums of all rows, with the novelty score fitted on `sample`
    /// (the plan's sample). Its embedding is empty: extend the rows to have it.
    fn finish(
        &self,
        py: Python<'_>,
        sums: &PyNystromSums,
        sample: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<PyModel> {
        let s = Rows::new(&sample, "sample")?;
        let fitted =
            py.detach(|| guarded(|| self.inner.finish_with_sample(&sums.inner, s.mat())))?;
        Ok(PyModel {
            inner: Model::from(fitted),
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
