//! Dense diffusion maps' certified low-rank extension (maths §20).
//!
//! A new point's coordinates depend on its gaussian kernel row w = k_X(z) through three
//! kinds of linear functionals only: the density q = 1ᵀw, wq = Σᵢ wᵢ qᵢ^{−α} and
//! aⱼ = Φⱼᵀw (Φ = diag(s)ψ, as the exact extension). Each output is a monomial in them,
//! C·aⱼ·q^a·wq^b (a, b ≤ 0 by flavour). Through the pivots P of the kernel's pivoted
//! Cholesky factorisation, w^P = K_XP K_PP⁻¹ k_P(z) turns each functional c into c^P
//! with |cᵀw − cᵀw^P| ≤ κ_c P_P(z), κ_c = Σᵢ |cᵢ| P_P(xᵢ); evaluating the monomial over
//! the box of those intervals bounds every coordinate, and `lowrank_bound` is the norm
//! of those bounds. A row whose interval for q or wq reaches 0 cannot be certified and
//! is extended exactly (bound 0).

use super::{DiffusionCore, Output};
use crate::error::{Error, Result};
use crate::extend::low_rank::LowRankParts;
use crate::extend::{Column, Extension};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::{Epsilon, Kernel};
use faer::{Mat, MatRef};

/// The low-rank parts of a dense diffusion map and the constants κ of its functionals
/// (q, wq, then one per eigenvector).
#[derive(Clone, Debug)]
pub(crate) struct DiffusionLowRank {
    parts: LowRankParts,
    kappa: Vec<f64>,
}

impl DiffusionLowRank {
    /// From a dense core, with pivots down to `tolerance` × max k(x, x) (the model's
    /// `rank_tolerance`).
    pub(crate) fn new(core: &DiffusionCore, tolerance: f64) -> DiffusionLowRank {
        let x = core.x.view();
        let n = x.nrows();
        let kernel = Kernel::Gaussian {
            epsilon: Epsilon::Value(core.epsilon),
        };
        let x_sq = row_sq_norms(x);
        let chol = kernel
            .pivoted_factor(x, tolerance, n)
            .expect("a gaussian kernel's diagonal is 1")
            .chol;
        let phi = core.phi.view();
        let m = phi.ncols();
        let a = Mat::from_fn(n, m + 2, |i, c| match c {
            0 => 1.0,
            1 => core.qa[i],
            _ => phi[(i, c - 2)],
        });
        // The parts' joint bound (gain ‖A‖, here the Frobenius norm) goes unused: each
        // functional gets its own constant κ below, which `extend` combines per output.
        let parts = LowRankParts::new(kernel, x, &x_sq, &chol, a.norm_l2(), |rows| {
            (rows * a.as_ref(), vec![0.0; rows.nrows()])
        });
        let kappa = parts.core.column_constants(a.as_ref());
        DiffusionLowRank { parts, kappa }
    }

    /// Coordinates (d components of `output`), their bound and the degree/density
    /// columns of the rows of `new`; rows that cannot be certified get an infinite bound.
    pub(crate) fn extend(
        &self,
        core: &DiffusionCore,
        new: MatRef<'_, f64>,
        d: usize,
        output: Output,
        t: f64,
    ) -> Result<Extension> {
        let e = self
            .parts
            .extend(new, |y, _, _| vec![f64::NAN; y.nrows()])?;
        let alpha = core.spec.alpha;
        let sd = core.sum_degree;
        // Output c = C·aⱼ·q^a·wq^b (j = c + 1; maths §7's flavours through ψⱼ, ψ₀).
        let (qa_exp, wq_exp) = match output {
            Output::Diffusion | Output::Normalized => (0.0, -1.0),
            Output::Standard => (-alpha / 2.0, -0.5),
            Output::Weighted => (-alpha, 0.0),
        };
        let factor = |j: usize| {
            let l = core.values[j];
            match output {
                Output::Diffusion => l.powf(t - 1.0) * sd.sqrt(),
                Output::Normalized => sd.sqrt() / l.sqrt(),
                Output::Standard => 1.0 / l.sqrt(),
                Output::Weighted => 1.0 / (l.sqrt() * sd.sqrt()),
            }
        };
        let rows = new.nrows();
        let mut coords = Mat::<f64>::zeros(rows, d);
        let mut bound = vec![f64::INFINITY; rows];
        let mut degree = vec![f64::NAN; rows];
        let mut density = vec![f64::NAN; rows];
        for r in 0..rows {
            let p = e.residual[r].sqrt();
            let (q, wq) = (e.coordinates[(r, 0)], e.coordinates[(r, 1)]);
            let (dq, dw) = (self.kappa[0] * p, self.kappa[1] * p);
            if !(q - dq > 0.0 && wq - dw > 0.0) {
                continue;
            }
            let qza = super::density_power(q, alpha);
            degree[r] = qza * wq / core.median_degree;
            density[r] = q / core.median_density;
            let mono = |q: f64, w: f64| q.powf(qa_exp) * w.powf(wq_exp);
            let mid = mono(q, wq);
            // q^a and wq^b decrease (a, b ≤ 0): the box's extremes are its corners.
            let (lo, hi) = (mono(q + dq, wq + dw), mono(q - dq, wq - dw));
            let mut sum = 0.0;
            for c in 0..d {
                let j = c + 1;
                let (a, da) = (e.coordinates[(r, j + 2)], self.kappa[j + 2] * p);
                let k = factor(j);
                let value = a * mid;
                coords[(r, c)] = k * value;
                let worst = [a - da, a + da]
                    .iter()
                    .flat_map(|&ac| [ac * lo, ac * hi])
                    .map(|corner| (corner - value).abs())
                    .fold(0.0, f64::max);
                // The corners' own rounding (a few units of the largest product).
                let slack = 4.0 * f64::EPSILON * (a.abs() + da) * hi;
                sum += (k.abs() * (worst + slack)).powi(2);
            }
            bound[r] = sum.sqrt();
        }
        Ok(Extension {
            coordinates: coords,
            residual: vec![f64::NAN; rows],
            reconstruction_error: vec![f64::NAN; rows],
            extra: vec![
                Column {
                    name: "relative_degree",
                    values: degree,
                },
                Column {
                    name: "relative_density",
                    values: density,
                },
                Column {
                    name: "lowrank_bound",
                    values: bound,
                },
            ],
        })
    }
}

/// Refuses, by name, the diffusion maps the low-rank extension cannot serve: sparse
/// kernels (a new point's weights are not a row of one positive definite kernel) and
/// the union density (a sum over the batch).
pub(crate) fn check(dense: bool, union: bool) -> Result<()> {
    if !dense {
        return Err(Error::param(
            "extension",
            "low-rank needs a dense kernel (sparsity dense): a sparsified kernel row is not \
             a row of a positive definite kernel",
        ));
    }
    if union {
        return Err(Error::param(
            "extension",
            "low-rank needs the training density (density training): the union density \
             sums over the batch",
        ));
    }
    Ok(())
}
