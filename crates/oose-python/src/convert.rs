//! Values between Rust and Python: matrices as numpy arrays, an extension as
//! coordinates and a dict of diagnostics, parameter values both ways.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use oose::extend::Extension;
use oose::faer::MatRef;
use oose::model::params::Value;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

/// Copies a faer matrix into a new row-major numpy array.
pub(crate) fn to_numpy<'py>(py: Python<'py>, m: MatRef<'_, f64>) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_vec((m.nrows(), m.ncols()), oose::linalg::row_major(m))
        .expect("the vector holds r·c values")
        .into_pyarray(py)
}

/// Coordinates and a dict of per-point diagnostics (`residual`, `reconstruction_error`
/// and the method's own columns, in the CLI's column order).
pub(crate) fn extension_to_python<'py>(
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
        // The 0/1 columns are flags: booleans in Python (where every row has one).
        let flag = matches!(c.name, "is_novel" | "unique" | "isolated");
        if flag && c.values.iter().all(|v| v.is_finite()) {
            let flags: Vec<bool> = c.values.iter().map(|&v| v != 0.0).collect();
            diag.set_item(c.name, PyArray1::from_vec(py, flags))?;
        } else {
            diag.set_item(c.name, PyArray1::from_vec(py, c.values))?;
        }
    }
    Ok((coords, diag))
}

/// A Python value as a parameter value: None, bool, int (≥ 0), float or str.
pub(crate) fn to_value(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::None);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::Str(s.to_str()?.to_string()));
    }
    if let Ok(i) = v.extract::<i64>() {
        return u64::try_from(i).map(Value::Int).map_err(|_| {
            PyValueError::new_err(format!("invalid parameter `{name}`: must be >= 0, got {i}"))
        });
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Value::Float(x));
    }
    Err(PyValueError::new_err(format!(
        "invalid parameter `{name}`: expected None, a bool, a number or a string, got {}",
        v.repr()?
    )))
}

/// A parameter value as a Python object.
fn to_python<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
    })
}

pub(crate) fn to_dict<'py>(
    py: Python<'py>,
    values: &[(&'static str, Value)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in values {
        d.set_item(k, to_python(py, v)?)?;
    }
    Ok(d)
}
