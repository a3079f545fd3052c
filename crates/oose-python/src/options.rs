//! Parameters and extension options read from Python with errors that name them:
//! the dict → bag of values of `fit`, and the checks estimators run at fit
//! (`check_extend_options`, `Model.check_options`, `check_params`).

use crate::{to_value, value_error};
use oose::extend::{ExtensionChoice, Strategy};
use oose::methods::diffusion_maps::{Density, OnIsolated};
use oose::model::params::Values;
use oose::model::{ExtendOptions, MethodInfo};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

/// The extension options named as `Model.extend` takes them (every value parsed; no
/// model consulted): what `extend`, `Model.check_options` and `check_extend_options`
/// read.
pub(crate) fn extend_options(
    strategy: &str,
    density: Option<&str>,
    on_isolated: Option<&str>,
    extension: Option<&str>,
    lowrank_tolerance: Option<f64>,
) -> PyResult<ExtendOptions<'static>> {
    Ok(ExtendOptions {
        strategy: Some(Strategy::from_name(strategy).map_err(value_error)?),
        density: density
            .map(Density::from_name)
            .transpose()
            .map_err(value_error)?,
        on_isolated: on_isolated
            .map(OnIsolated::from_name)
            .transpose()
            .map_err(value_error)?,
        extension: match (extension, lowrank_tolerance) {
            (None, None) => None,
            (name, tol) => Some(
                ExtensionChoice::from_name(name.unwrap_or("exact"), tol).map_err(value_error)?,
            ),
        },
        ..Default::default()
    })
}

/// Parses extension options as `Model.extend` takes them (see `Model.check_options`),
/// before any model exists: an estimator's `fit` calls it first, so that a misspelt
/// option costs no fit; whether the model supports them is `Model.check_options`.
#[pyfunction]
#[pyo3(signature = (**options))]
pub(crate) fn check_extend_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    named_options(options).map(|_| ())
}

/// The `ValueError` of a parameter given a value of the wrong kind, in the core's words.
fn refused(name: &str, expected: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyValueError::new_err(format!(
        "invalid parameter `{name}`: expected {expected}, got {}",
        v.repr().map_or_else(|_| "?".into(), |r| r.to_string())
    ))
}

/// A parameter that takes a name, read with an error naming it.
pub(crate) fn name_arg(name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    v.extract::<String>()
        .map_err(|_| refused(name, "a name", v))
}

/// [`extend_options`] from keyword arguments, each value read with an error naming it
/// (the typed signature of `extend` would say only "must be real number, not str"),
/// and an unknown keyword refused.
pub(crate) fn named_options(
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<ExtendOptions<'static>> {
    const NAMES: [&str; 5] = [
        "strategy",
        "density",
        "on_isolated",
        "extension",
        "lowrank_tolerance",
    ];
    let (mut names, mut tolerance): ([Option<String>; 4], Option<f64>) = Default::default();
    if let Some(d) = options {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let Some(at) = NAMES.iter().position(|n| *n == k) else {
                return Err(PyValueError::new_err(format!(
                    "no extension option `{k}` (the options: {})",
                    NAMES.join(", ")
                )));
            };
            if v.is_none() && at > 0 {
                continue;
            }
            if at == 4 {
                let x = (!v.is_instance_of::<PyBool>())
                    .then(|| v.extract::<f64>().ok())
                    .flatten();
                tolerance = Some(x.ok_or_else(|| refused(&k, "a real number or None", &v))?);
            } else {
                names[at] = Some(name_arg(&k, &v)?);
            }
        }
    }
    let [strategy, density, on_isolated, extension] = &names;
    extend_options(
        strategy.as_deref().unwrap_or("projection"),
        density.as_deref(),
        on_isolated.as_deref(),
        extension.as_deref(),
        tolerance,
    )
}

/// Checks the parameters `params` (a dict by SPEC name) of the registered method
/// `method` as `fit` would, without data: an unknown name or a value the method
/// cannot take is a `ValueError` naming it. For parameters an estimator holds but
/// this fit does not read (kernel PCA's landmark choice without `n_landmarks`).
#[pyfunction]
pub(crate) fn check_params(method: &str, params: &Bound<'_, PyDict>) -> PyResult<()> {
    let info = MethodInfo::named(method).map_err(value_error)?;
    (info.resolve)(&bag(params)?)
        .map(|_| ())
        .map_err(value_error)
}

/// A dict of parameters by SPEC name as the core's bag of values.
pub(crate) fn bag(params: &Bound<'_, PyDict>) -> PyResult<Values> {
    let mut bag = Values::new();
    for (k, v) in params.iter() {
        let k: String = k.extract()?;
        let v = to_value(&k, &v)?;
        bag.set(&k, v);
    }
    Ok(bag)
}
