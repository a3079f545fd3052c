//! Measuring extension quality against retraining (maths §9).
//!
//! Embeddings are unique only up to an orthogonal map, so the retrained embedding is
//! aligned to the original one by orthogonal Procrustes fitted on the training rows;
//! then the extension of Z is compared with the aligned retrained Z rows.

use crate::datasets::{select_rows, split_indices};
use crate::error::{Error, Result};
use crate::linalg::procrustes::orthogonal_procrustes;
use crate::methods::OutOfSample;
use faer::{Mat, MatRef};

/// Relative extension error and training drift (maths §9).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetrainComparison {
    /// RMSE(extension of Z − aligned retrained Z) / RMS(aligned retrained Z).
    pub relative_extension_error: f64,
    /// RMSE(training embedding − aligned retrained X rows) / RMS(training embedding):
    /// the perturbation retraining itself causes.
    pub training_drift: f64,
}

fn rms(a: MatRef<'_, f64>) -> f64 {
    (a.squared_norm_l2() / (a.nrows() * a.ncols()).max(1) as f64).sqrt()
}

/// Compares an extension with retraining.
///
/// * `train` — the original training embedding (N×d);
/// * `extended` — the extension of the new points (M×d);
/// * `retrained` — the embedding of X ∪ Z by the same method, X rows first (N+M rows).
pub fn compare_with_retraining(
    train: MatRef<'_, f64>,
    extended: MatRef<'_, f64>,
    retrained: MatRef<'_, f64>,
) -> Result<RetrainComparison> {
    let (n, m, d) = (train.nrows(), extended.nrows(), train.ncols());
    if retrained.nrows() != n + m || retrained.ncols() != d || extended.ncols() != d {
        return Err(Error::Shape {
            what: "retrained embedding",
            expected: format!("{}×{d}", n + m),
            got: format!("{}×{}", retrained.nrows(), retrained.ncols()),
        });
    }
    let q = orthogonal_procrustes(retrained.subrows(0, n), train)?;
    let aligned: Mat<f64> = retrained * &q;
    let ax = aligned.as_ref().subrows(0, n);
    let az = aligned.as_ref().subrows(n, m);
    let ext_err = rms((extended - az).as_ref()) / rms(az);
    let drift = rms((train - ax).as_ref()) / rms(train);
    Ok(RetrainComparison {
        relative_extension_error: ext_err,
        training_drift: drift,
    })
}

/// The outcome of [`compare_holdout`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldoutComparison {
    /// Rows fitted on.
    pub n_train: usize,
    /// Rows held out and extended.
    pub n_new: usize,
    /// Extension error and training drift.
    pub comparison: RetrainComparison,
}

/// maths §9 end to end: holds out the fraction `holdout` of the rows of `x` (a seeded
/// shuffle, [`split_indices`]), fits with `fit` on the rest, extends the held-out rows,
/// fits again on all rows (training rows first) and compares the two after Procrustes
/// alignment on the training rows.
///
/// ```
/// use oose::diagnostics::retrain::compare_holdout;
/// use oose::methods::kernel_pca::KernelPca;
/// let x = oose::datasets::swiss_roll(400, 0.05, false, 0).points;
/// let c = compare_holdout(x.as_ref(), 0.1, 1, |t| KernelPca::default().fit(t)).unwrap();
/// assert_eq!((c.n_train, c.n_new), (360, 40));
/// assert!(c.comparison.relative_extension_error < 0.5);
/// ```
pub fn compare_holdout<M, F>(
    x: MatRef<'_, f64>,
    holdout: f64,
    seed: u64,
    fit: F,
) -> Result<HoldoutComparison>
where
    M: OutOfSample,
    F: Fn(MatRef<'_, f64>) -> Result<M>,
{
    let n = x.nrows();
    if !(holdout > 0.0 && holdout < 1.0) {
        return Err(Error::param(
            "holdout",
            format!("must be a fraction strictly between 0 and 1, got {holdout}"),
        ));
    }
    let (tr, ho) = split_indices(n, holdout, seed);
    if tr.is_empty() || ho.is_empty() {
        return Err(Error::param(
            "holdout",
            format!(
                "{holdout} of {n} rows leaves {} training and {} held-out rows; both must be non-empty",
                tr.len(),
                ho.len()
            ),
        ));
    }
    let xt = select_rows(x, &tr);
    let xz = select_rows(x, &ho);
    let order: Vec<usize> = tr.iter().chain(&ho).copied().collect();
    let all = select_rows(x, &order);
    let model = fit(xt.as_ref())?;
    let ext = model.extend(xz.as_ref())?;
    let retrained = fit(all.as_ref())?;
    let comparison = compare_with_retraining(
        model.embedding(),
        ext.coordinates.as_ref(),
        retrained.embedding(),
    )?;
    Ok(HoldoutComparison {
        n_train: tr.len(),
        n_new: ho.len(),
        comparison,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn rotation_alone_gives_zero_errors() {
        let all = Rng::new(2).normal_mat(40, 2);
        let retrained = &all * crate::testing::plane_rotation(2, 0.7);
        let cmp = compare_with_retraining(
            all.as_ref().subrows(0, 30),
            all.as_ref().subrows(30, 10),
            retrained.as_ref(),
        )
        .unwrap();
        assert!(cmp.relative_extension_error < 1e-12);
        assert!(cmp.training_drift < 1e-12);
    }

    #[test]
    fn perturbed_extension_is_measured() {
        let all = Rng::new(3).normal_mat(40, 2);
        let mut ext = all.as_ref().subrows(30, 10).to_owned();
        ext[(0, 0)] += 1.0;
        let cmp = compare_with_retraining(all.as_ref().subrows(0, 30), ext.as_ref(), all.as_ref())
            .unwrap();
        let az = all.as_ref().subrows(30, 10);
        let want = (1.0f64 / 20.0).sqrt() / rms(az);
        assert!((cmp.relative_extension_error - want).abs() < 1e-12);
    }
}
