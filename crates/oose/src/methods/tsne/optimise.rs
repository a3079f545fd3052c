//! scikit-learn's optimisation schedule for t-SNE (maths §12): initialisation (PCA with
//! the first column rescaled to standard deviation 1e-4, or Gaussian), then gradient
//! descent with momentum and per-coordinate gains in two phases: early exaggeration
//! (P × 12, momentum 0.5, 250 iterations), then P itself with momentum 0.8. As in
//! scikit-learn, each phase starts with zero update and unit gains. The divergence is
//! recorded every 50 iterations and at the end.

use super::gradient::{gradient, Repulsion};
use super::{Tsne, TsneGradient, TsneInit};
use crate::error::{Error, Result};
use crate::linalg::sparse::SymCsr;
use crate::methods::pca::Pca;
use crate::methods::OutOfSample;
use crate::rng::Rng;
use faer::{Mat, MatRef};

/// Iterations of the early-exaggeration phase (scikit-learn's `_EXPLORATION_MAX_ITER`).
pub(crate) const EXPLORATION: usize = 250;
/// The divergence is recorded every this many iterations.
const CHECK_EVERY: usize = 50;

/// What the optimisation produced.
pub(crate) struct Fit {
    pub embedding: Mat<f64>,
    pub learning_rate: f64,
    pub kl: Vec<(usize, f64)>,
    /// What the fit decided that the user should know (the model's fit warnings).
    pub notes: Vec<String>,
}

/// The initial embedding (row-major), and a note when `pca` could not give every
/// column.
fn initial(params: &Tsne, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Option<String>)> {
    let (n, d) = (x.nrows(), params.n_components);
    let random = || {
        let mut rng = Rng::new(params.seed);
        (0..n * d)
            .map(|_| 1e-4 * rng.normal())
            .collect::<Vec<f64>>()
    };
    if params.init == TsneInit::Random {
        return Ok((random(), None));
    }
    let pca = |k: usize| {
        Pca {
            n_components: k,
            ..Default::default()
        }
        .fit(x)
    };
    // Data that span fewer than d dimensions (points on a line embedded in the plane)
    // have fewer principal components: the others start as `random` would.
    let (pca, k) = match pca(d) {
        Ok(p) => (p, d),
        Err(Error::NotEnoughPositiveEigenvalues { available, .. }) if available >= 1 => {
            (pca(available)?, available)
        }
        Err(e) => return Err(e),
    };
    let e = pca.embedding();
    let mean = (0..n).map(|i| e[(i, 0)]).sum::<f64>() / n as f64;
    let var = (0..n).map(|i| (e[(i, 0)] - mean).powi(2)).sum::<f64>() / n as f64;
    let scale = if var > 0.0 { 1e-4 / var.sqrt() } else { 1.0 };
    let mut y = if k < d { random() } else { vec![0.0; n * d] };
    for (t, v) in y.iter_mut().enumerate() {
        if t % d < k {
            *v = e[(t / d, t % d)] * scale;
        }
    }
    let note = (k < d).then(|| {
        format!(
            "init = pca: the data span {k} dimension(s), fewer than n_components = {d}; \
             the other {} initial column(s) are Gaussian with standard deviation 1e-4, \
             as init = random gives",
            d - k
        )
    });
    Ok((y, note))
}

/// Runs the optimisation on P.
pub(crate) fn run(params: &Tsne, x: MatRef<'_, f64>, p: &SymCsr) -> Result<Fit> {
    run_observed(params, x, p, &mut |_, _, _, _| {})
}

/// Called every iteration with (iteration, y, exaggeration, gradient).
pub(crate) type Observer<'a> = dyn FnMut(usize, &[f64], f64, &[f64]) + 'a;

/// [`run`], showing `observe` every iteration.
pub(crate) fn run_observed(
    params: &Tsne,
    x: MatRef<'_, f64>,
    p: &SymCsr,
    observe: &mut Observer<'_>,
) -> Result<Fit> {
    let (n, d) = (x.nrows(), params.n_components);
    let (mut y, note) = initial(params, x)?;
    let learning_rate = params
        .learning_rate
        .unwrap_or_else(|| (n as f64 / params.early_exaggeration / 4.0).max(50.0));
    let repulsion = match params.method.resolve(n, d) {
        TsneGradient::Exact => Repulsion::Exact,
        TsneGradient::Fft => Repulsion::Fft,
        _ => Repulsion::BarnesHut(params.angle),
    };
    let p_log_p: f64 = p
        .vals
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v * v.ln())
        .sum();
    let explore = EXPLORATION.min(params.max_iter);
    let mut update = vec![0.0; n * d];
    let mut gains = vec![1.0f64; n * d];
    let mut kl = Vec::new();
    let mut pool = super::fft::Pool::default();
    for it in 0..params.max_iter {
        crate::progress::check()?;
        if it == explore {
            // scikit-learn's second call of its gradient descent starts afresh.
            update.iter_mut().for_each(|u| *u = 0.0);
            gains.iter_mut().for_each(|g| *g = 1.0);
        }
        let (exaggeration, momentum) = if it < explore {
            (params.early_exaggeration, 0.5)
        } else {
            (1.0, 0.8)
        };
        let record = (it + 1) % CHECK_EVERY == 0 || it + 1 == params.max_iter;
        let g = gradient(p, &y, d, exaggeration, repulsion, record, &mut pool);
        if let Some(t) = g.grad.iter().position(|v| !v.is_finite()) {
            return Err(Error::Overflow {
                what: "t-SNE gradient",
                row: t / d,
                detail: "not finite during the optimisation (try a smaller learning_rate)",
            });
        }
        observe(it, &y, exaggeration, &g.grad);
        if record {
            let k = g.kl(p_log_p);
            if !k.is_finite() {
                return Err(diverged(
                    it + 1,
                    k,
                    learning_rate,
                    params.early_exaggeration,
                ));
            }
            crate::progress::report(|| {
                format!("t-SNE iteration {}/{}, KL {k:.4}", it + 1, params.max_iter)
            });
            kl.push((it + 1, k));
        }
        for t in 0..n * d {
            let gt = g.grad[t];
            if update[t] * gt < 0.0 {
                gains[t] += 0.2;
            } else {
                gains[t] *= 0.8;
            }
            gains[t] = gains[t].max(0.01);
            update[t] = momentum * update[t] - learning_rate * gains[t] * gt;
            y[t] += update[t];
        }
    }
    // No gradient follows the last step: its coordinates are checked here.
    if let Some(t) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::Overflow {
            what: "t-SNE embedding",
            row: t / d,
            detail: "not finite after the last step (try a smaller learning_rate)",
        });
    }
    Ok(Fit {
        embedding: Mat::from_fn(n, d, |i, c| y[i * d + c]),
        learning_rate,
        kl,
        notes: note.into_iter().collect(),
    })
}

/// The error of an optimisation whose KL(P‖Q) is no longer finite at iteration `it`:
/// the points have flown so far apart that every similarity q underflows (a learning
/// rate or an early exaggeration far too large). The coordinates would still be finite,
/// and meaningless.
fn diverged(it: usize, kl: f64, learning_rate: f64, exaggeration: f64) -> Error {
    Error::Unsolved {
        what: "t-SNE's optimisation",
        status: "diverged",
        detail: format!(
            "KL(P‖Q) is {kl:?} at iteration {it} with learning_rate = {learning_rate:?} and \
             early_exaggeration = {exaggeration:?}: the points flew apart (lower them)"
        ),
    }
}
