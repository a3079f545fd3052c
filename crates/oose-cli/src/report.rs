//! `oose fit`, `oose compare` and `oose theory`: fit from the registry, and the reports
//! printed as `key: value` lines.

use crate::io::MatrixReader;
use crate::{check_width, fit, load_model, say, CliError};

/// `oose fit METHOD …`: fits and writes the model.
pub fn fit(args: &[String]) -> Result<(), CliError> {
    let (m, a) = fit::parse(args, false)?;
    let output = a
        .get_one::<String>("output")
        .cloned()
        .ok_or_else(|| CliError::usage("--output FILE is required (where to write the model)"))?;
    let model = fit::build_model(m, &a, None)?;
    std::fs::write(&output, model.to_bytes())
        .map_err(|e| CliError::data(format!("{output}: cannot write model: {e}")))?;
    // The embedding, unless a streamed fit has written it already.
    if let Some(path) = a.get_one::<String>("embedding") {
        let y = oose::methods::OutOfSample::embedding(&model);
        if y.nrows() > 0 {
            crate::io::write_matrix(path, y)?;
        }
    }
    Ok(())
}

/// `oose compare METHOD …`: hold out, fit, extend, retrain, print (maths §9).
pub fn compare(args: &[String]) -> Result<(), CliError> {
    let (m, a) = fit::parse(args, true)?;
    fit::points_only(&a)?;
    let input = a.get_one::<String>("input").cloned().unwrap_or_default();
    let holdout = *a.get_one::<f64>("holdout").expect("has a default");
    let split_seed = *a.get_one::<u64>("split-seed").expect("has a default");
    if !(holdout > 0.0 && holdout < 1.0) {
        return Err(CliError::usage(format!(
            "--holdout: must be a fraction strictly between 0 and 1, got {holdout}"
        )));
    }
    let x = MatrixReader::open(&input)?.read_all()?;
    let failure = std::cell::RefCell::new(None);
    let c = oose::diagnostics::retrain::compare_holdout(x.as_ref(), holdout, split_seed, |t| {
        fit::build_model(m, &a, Some(t)).map_err(|e| {
            let msg = e.message.clone();
            *failure.borrow_mut() = Some(e);
            oose::Error::Unsupported(msg)
        })
    });
    let c = match (c, failure.into_inner()) {
        (Ok(c), _) => c,
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(e.into()),
    };
    say!("method: {}", m.name)?;
    say!("n_train: {}", c.n_train)?;
    say!("n_new: {}", c.n_new)?;
    say!(
        "relative_extension_error: {:?}",
        c.comparison.relative_extension_error
    )?;
    say!("training_drift: {:?}", c.comparison.training_drift)?;
    Ok(())
}

/// `oose theory MODEL --input Z`: batch discrepancy, bounds and interlacing (maths §4).
pub fn theory(model: &str, input: &str) -> Result<(), CliError> {
    use oose::diagnostics::theory::{batch_discrepancy, interlacing};
    let m = load_model(model)?;
    let Some((kernel, x, tol)) = m.fitted().kernel_on_points() else {
        return Err(CliError::usage(format!(
            "theory needs a kernel on points (a kpca model without a precomputed kernel); \
             this {} model has none",
            m.method()
        )));
    };
    let z = MatrixReader::open(input)?.read_all()?;
    check_width(&m, z.ncols(), input)?;
    let d = batch_discrepancy(&kernel, x, z.as_ref(), tol)?;
    let il = interlacing(&kernel, x, z.as_ref(), tol)?;
    say!("n_train: {}", x.nrows())?;
    say!("n_new: {}", z.nrows())?;
    say!("discrepancy: {:?}", d.discrepancy)?;
    say!("identity: {:?}", d.identity)?;
    say!("bound: {:?}", d.bound)?;
    say!("seed_bound: {:?}", d.seed_bound)?;
    say!("trace_residual: {:?}", d.trace_residual)?;
    say!("max_residual: {:?}", d.max_residual)?;
    say!("exact: {}", d.exact)?;
    say!("interlacing_worst_violation: {:?}", il.worst_violation)?;
    say!("residual_norm: {:?}", il.residual_norm)?;
    Ok(())
}
