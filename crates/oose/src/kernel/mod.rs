//! Kernel functions (maths §1) and kernel matrices built by one GEMM in row chunks.
//!
//! Parameters carry the maths' names: `epsilon` (ε, an [`Epsilon`]), `beta` (β), `gamma`,
//! `coef0`, `degree`. A kernel with `Epsilon::Median` is resolved against the training
//! data once, at fit time, and the fitted model stores the resolved ε.

pub mod bandwidth;
pub mod distance;
mod factor;
pub(crate) mod fast_exp;
mod loose;
pub mod params;

use crate::error::{Error, Result};
pub use bandwidth::Epsilon;
use distance::row_sq_norms;
use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::Accum;
use faer::{Mat, MatMut, MatRef, Par};
use serde::{Deserialize, Serialize};

/// A kernel k(x, y). r = ||x − y||₂.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Kernel {
    /// exp(−r²/ε) (scikit-learn's `gamma` = 1/ε).
    Gaussian {
        /// ε > 0.
        #[serde(with = "bandwidth::kernel_format")]
        epsilon: Epsilon,
    },
    /// exp(−r/ε).
    Laplacian {
        /// ε > 0.
        #[serde(with = "bandwidth::kernel_format")]
        epsilon: Epsilon,
    },
    /// (1 + r²/ε)^β with β < 0 (positive definite).
    InverseMultiquadric {
        /// ε > 0.
        #[serde(with = "bandwidth::kernel_format")]
        epsilon: Epsilon,
        /// β < 0 (default −½).
        beta: f64,
    },
    /// (1 + r²/ε)^β with β > 0 not an integer (conditionally positive definite of order ⌈β⌉).
    Multiquadric {
        /// ε > 0.
        #[serde(with = "bandwidth::kernel_format")]
        epsilon: Epsilon,
        /// β > 0, β ∉ ℕ (default ½).
        beta: f64,
    },
    /// (1 − r/ε)₊⁴ (4r/ε + 1): compact support, positive definite for dimension ≤ 3.
    Wendland {
        /// Support radius ε > 0.
        #[serde(with = "bandwidth::kernel_format")]
        epsilon: Epsilon,
    },
    /// xᵀy: kernel PCA with it is PCA.
    Linear,
    /// (γ xᵀy + c)^p.
    Polynomial {
        /// γ ≠ 0.
        gamma: f64,
        /// c (`coef0`).
        coef0: f64,
        /// p ≥ 1.
        degree: u32,
    },
    /// The user supplies K, and to extend, the rows k(z, x_i) (and optionally k(z, z)).
    Precomputed,
    /// r^β (β odd) or r^β log r (β even; `beta` = 2 is the thin-plate spline r² log r):
    /// conditionally positive definite, for interpolation only (maths §8).
    Polyharmonic {
        /// β ≥ 1.
        beta: u32,
    },
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel::Gaussian {
            epsilon: Epsilon::Median,
        }
    }
}

/// The kernels' names, as every interface spells them.
pub const KERNEL_NAMES: [&str; 10] = [
    "gaussian",
    "laplacian",
    "inverse_multiquadric",
    "multiquadric",
    "wendland",
    "linear",
    "polynomial",
    "precomputed",
    "polyharmonic",
    "thin_plate",
];

impl Kernel {
    /// The kernel named `name` (one of [`KERNEL_NAMES`]) with its parameters, validated.
    /// `beta` is the exponent of the inverse multiquadric (default −½), multiquadric
    /// (default ½) and polyharmonic (an integer, default 3) kernels and must be `None`
    /// for the others; `gamma`, `coef0` and `degree` are the polynomial kernel's;
    /// `thin_plate` is polyharmonic with β = 2.
    ///
    /// ```
    /// use oose::kernel::{Epsilon, Kernel};
    /// let k = Kernel::from_name("thin_plate", Epsilon::Median, None, 1.0, 1.0, 3).unwrap();
    /// assert_eq!(k, Kernel::Polyharmonic { beta: 2 });
    /// assert!(Kernel::from_name("gaussian", Epsilon::Median, Some(2.0), 1.0, 1.0, 3).is_err());
    /// ```
    pub fn from_name(
        name: &str,
        epsilon: Epsilon,
        beta: Option<f64>,
        gamma: f64,
        coef0: f64,
        degree: u32,
    ) -> Result<Kernel> {
        let k = match name {
            "gaussian" => Kernel::Gaussian { epsilon },
            "laplacian" => Kernel::Laplacian { epsilon },
            "inverse_multiquadric" => Kernel::InverseMultiquadric {
                epsilon,
                beta: beta.unwrap_or(-0.5),
            },
            "multiquadric" => Kernel::Multiquadric {
                epsilon,
                beta: beta.unwrap_or(0.5),
            },
            "wendland" => Kernel::Wendland { epsilon },
            "linear" => Kernel::Linear,
            "polynomial" => Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            },
            "precomputed" => Kernel::Precomputed,
            "thin_plate" => Kernel::Polyharmonic { beta: 2 },
            "polyharmonic" => {
                let b = beta.unwrap_or(3.0);
                if !(b >= 1.0 && b.fract() == 0.0 && b <= 64.0) {
                    return Err(Error::param(
                        "beta",
                        format!("polyharmonic needs an integer β between 1 and 64, got {b}"),
                    ));
                }
                Kernel::Polyharmonic { beta: b as u32 }
            }
            _ => {
                return Err(Error::param(
                    "kernel",
                    format!("expected one of {}, got {name:?}", KERNEL_NAMES.join(", ")),
                ))
            }
        };
        let takes_beta = matches!(
            k,
            Kernel::InverseMultiquadric { .. }
                | Kernel::Multiquadric { .. }
                | Kernel::Polyharmonic { .. }
        ) && name != "thin_plate";
        if beta.is_some() && !takes_beta {
            return Err(Error::param(
                "beta",
                format!("the {name} kernel has no exponent β"),
            ));
        }
        k.validate()?;
        Ok(k)
    }

    /// Gaussian kernel with a fixed ε.
    pub fn gaussian(epsilon: f64) -> Self {
        Kernel::Gaussian {
            epsilon: Epsilon::Value(epsilon),
        }
    }

    /// The kernel's name as used on the command line and in files.
    pub fn name(&self) -> &'static str {
        match self {
            Kernel::Gaussian { .. } => "gaussian",
            Kernel::Laplacian { .. } => "laplacian",
            Kernel::InverseMultiquadric { .. } => "inverse_multiquadric",
            Kernel::Multiquadric { .. } => "multiquadric",
            Kernel::Wendland { .. } => "wendland",
            Kernel::Linear => "linear",
            Kernel::Polynomial { .. } => "polynomial",
            Kernel::Precomputed => "precomputed",
            Kernel::Polyharmonic { beta: 2 } => "thin_plate",
            Kernel::Polyharmonic { .. } => "polyharmonic",
        }
    }

    /// ε if the kernel has one (`None` for `Auto` before fitting and for kernels without).
    pub fn epsilon(&self) -> Option<f64> {
        match self.bandwidth() {
            Some(Epsilon::Value(e)) => Some(e),
            _ => None,
        }
    }

    fn bandwidth(&self) -> Option<Epsilon> {
        match *self {
            Kernel::Gaussian { epsilon }
            | Kernel::Laplacian { epsilon }
            | Kernel::InverseMultiquadric { epsilon, .. }
            | Kernel::Multiquadric { epsilon, .. }
            | Kernel::Wendland { epsilon } => Some(epsilon),
            _ => None,
        }
    }

    fn with_bandwidth(mut self, b: Epsilon) -> Self {
        match &mut self {
            Kernel::Gaussian { epsilon }
            | Kernel::Laplacian { epsilon }
            | Kernel::InverseMultiquadric { epsilon, .. }
            | Kernel::Multiquadric { epsilon, .. }
            | Kernel::Wendland { epsilon } => *epsilon = b,
            _ => {}
        }
        self
    }

    /// True for kernels whose argument is r rather than r² (ε then has units of r).
    fn scales_with_distance(&self) -> bool {
        matches!(self, Kernel::Laplacian { .. } | Kernel::Wendland { .. })
    }

    /// Checks the parameters' domains (maths §1).
    pub fn validate(&self) -> Result<()> {
        match self.bandwidth() {
            Some(Epsilon::Value(e)) => crate::validate::positive("epsilon", e)?,
            Some(Epsilon::LogSlope) => {
                return Err(Error::param(
                    "epsilon",
                    format!(
                        "the log-slope rule is the diffusion kernel's; the {} kernel takes a number or `auto`",
                        self.name()
                    ),
                ));
            }
            _ => {}
        }
        match *self {
            Kernel::InverseMultiquadric { beta, .. } if !(beta < 0.0 && beta.is_finite()) => {
                Err(Error::param(
                    "beta",
                    format!("inverse_multiquadric needs β < 0, got {beta}"),
                ))
            }
            Kernel::Multiquadric { beta, .. }
                if !(beta > 0.0 && beta.is_finite() && beta.fract() != 0.0) =>
            {
                Err(Error::param(
                    "beta",
                    format!("multiquadric needs β > 0 and not an integer, got {beta}"),
                ))
            }
            Kernel::Polynomial { gamma, .. } if !(gamma.is_finite() && gamma != 0.0) => Err(
                Error::param("gamma", format!("must be finite and non-zero, got {gamma}")),
            ),
            Kernel::Polynomial { coef0, .. } if !coef0.is_finite() => Err(Error::param(
                "coef0",
                format!("must be finite, got {coef0}"),
            )),
            Kernel::Polynomial { degree: 0, .. } => {
                Err(Error::param("degree", "must be at least 1"))
            }
            Kernel::Polyharmonic { beta: 0 } => Err(Error::param(
                "beta",
                "polyharmonic needs an integer β ≥ 1, got 0",
            )),
            _ => Ok(()),
        }
    }

    /// Replaces `Epsilon::Median` by the median rule on `x` (maths §1) and validates.
    pub fn resolve(&self, x: MatRef<'_, f64>) -> Result<Kernel> {
        self.validate()?;
        if self.bandwidth() != Some(Epsilon::Median) {
            return Ok(*self);
        }
        let (e, _) = Epsilon::Median.resolve(x, self.scales_with_distance())?;
        Ok(self.with_bandwidth(Epsilon::Value(e)))
    }

    /// Whether every kernel matrix of this kernel on points of dimension `dim` is
    /// positive semidefinite.
    pub fn is_positive_definite(&self, dim: usize) -> bool {
        match *self {
            Kernel::Gaussian { .. }
            | Kernel::Laplacian { .. }
            | Kernel::InverseMultiquadric { .. }
            | Kernel::Linear => true,
            Kernel::Wendland { .. } => dim <= 3,
            Kernel::Polynomial { gamma, coef0, .. } => gamma > 0.0 && coef0 >= 0.0,
            Kernel::Multiquadric { .. } | Kernel::Precomputed | Kernel::Polyharmonic { .. } => {
                false
            }
        }
    }

    /// The order m of conditional positive definiteness (0 for positive definite
    /// kernels): interpolation needs a polynomial tail of degree m − 1 (maths §8).
    /// Multiquadric: ⌈β⌉; polyharmonic r^β: ⌈β/2⌉ (β odd), β/2 + 1 (β even).
    pub fn cpd_order(&self) -> usize {
        match *self {
            Kernel::Multiquadric { beta, .. } => beta.ceil() as usize,
            Kernel::Polyharmonic { beta } if beta % 2 == 1 => beta.div_ceil(2) as usize,
            Kernel::Polyharmonic { beta } => (beta / 2 + 1) as usize,
            _ => 0,
        }
    }

    /// k(x, y) from the squared distance `d2` and the inner product `g` (only the one the
    /// kernel needs is read). Requires a resolved kernel.
    #[inline]
    fn value(&self, d2: f64, g: f64) -> f64 {
        match *self {
            Kernel::Gaussian {
                epsilon: Epsilon::Value(e),
            } => (-d2 / e).exp(),
            Kernel::Laplacian {
                epsilon: Epsilon::Value(e),
            } => (-d2.sqrt() / e).exp(),
            Kernel::InverseMultiquadric {
                epsilon: Epsilon::Value(e),
                beta,
            }
            | Kernel::Multiquadric {
                epsilon: Epsilon::Value(e),
                beta,
            } => (1.0 + d2 / e).powf(beta),
            Kernel::Wendland {
                epsilon: Epsilon::Value(e),
            } => {
                let r = d2.sqrt() / e;
                if r < 1.0 {
                    let s = 1.0 - r;
                    let s2 = s * s;
                    s2 * s2 * (4.0 * r + 1.0)
                } else {
                    0.0
                }
            }
            Kernel::Polyharmonic { beta } => {
                let r = d2.sqrt();
                if beta % 2 == 1 {
                    r.powi(beta as i32)
                } else if r > 0.0 {
                    r.powi(beta as i32) * r.ln()
                } else {
                    0.0
                }
            }
            Kernel::Linear => g,
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => (gamma * g + coef0).powi(degree as i32),
            _ => f64::NAN,
        }
    }

    pub(crate) fn is_radial(&self) -> bool {
        !matches!(
            self,
            Kernel::Linear | Kernel::Polynomial { .. } | Kernel::Precomputed
        )
    }

    /// k(z, z) for a point with squared norm `sq`.
    pub fn diag_value(&self, sq: f64) -> f64 {
        self.value(0.0, sq)
    }

    /// [`Kernel::block`] computing the squared norms itself.
    ///
    /// ```
    /// use oose::faer::{mat, Par};
    /// use oose::kernel::Kernel;
    /// let a = mat![[0.0, 0.0], [1.0, 0.0]];
    /// let k = Kernel::gaussian(2.0).block_between(a.as_ref(), a.as_ref(), Par::Seq);
    /// assert_eq!(k[(0, 0)], 1.0);
    /// assert!((k[(0, 1)] - (-0.5f64).exp()).abs() < 1e-15);
    /// ```
    pub fn block_between(&self, a: MatRef<'_, f64>, b: MatRef<'_, f64>, par: Par) -> Mat<f64> {
        self.block(a, &row_sq_norms(a), b, &row_sq_norms(b), par)
    }

    /// The kernel block [k(a_i, b_j)] given the rows and their squared norms.
    /// The kernel must be resolved and not `Precomputed`.
    pub fn block(
        &self,
        a: MatRef<'_, f64>,
        a_sq: &[f64],
        b: MatRef<'_, f64>,
        b_sq: &[f64],
        par: Par,
    ) -> Mat<f64> {
        let mut m = Mat::<f64>::zeros(a.nrows(), b.nrows());
        self.block_into(m.as_mut(), a, a_sq, b, b_sq, par);
        m
    }

    /// [`Kernel::block`] written into `m` (a.nrows() × b.nrows(), column-major with
    /// contiguous columns; its contents are overwritten): for callers that reuse one
    /// buffer across many blocks. The same bits as [`Kernel::block`].
    pub fn block_into(
        &self,
        m: MatMut<'_, f64>,
        a: MatRef<'_, f64>,
        a_sq: &[f64],
        b: MatRef<'_, f64>,
        b_sq: &[f64],
        par: Par,
    ) {
        self.block_into_then::<false, _>(m, a, a_sq, b, b_sq, par, |_, _| ());
    }

    /// [`Kernel::block_into`], then `then(j, column j)` on each finished column while
    /// it is still in cache (a pass over the column that would otherwise read the
    /// block again); its results in column order. `FUSED`: the exponential kernels' exp
    /// by fused multiply-adds (other bits: [`Kernel::block_loose_then`]); the extension's
    /// values are `FUSED = false`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn block_into_then<const FUSED: bool, T: Send>(
        &self,
        mut m: MatMut<'_, f64>,
        a: MatRef<'_, f64>,
        a_sq: &[f64],
        b: MatRef<'_, f64>,
        b_sq: &[f64],
        par: Par,
        then: impl Fn(usize, &mut [f64]) -> T + Sync,
    ) -> Vec<T> {
        check_block_shape(m.rb(), a, b);
        let radial = self.is_radial();
        let alpha = if radial { -2.0 } else { 1.0 };
        matmul(m.rb_mut(), Accum::Replace, a, b.transpose(), alpha, par);
        // Distances and kernel values column by column, while the column is in cache.
        let finish = |j: usize, mut col: MatMut<'_, f64>| {
            let col = col
                .rb_mut()
                .col_mut(0)
                .try_as_col_major_mut()
                .expect("contiguous columns (checked above)")
                .as_slice_mut();
            if radial {
                distance::finish_sq_distance_column(col, a, a_sq, b, j, b_sq[j]);
            }
            self.apply_in_place::<FUSED>(col);
            then(j, col)
        };
        let ncols = m.ncols();
        if matches!(par, Par::Seq) || m.nrows() * ncols < 1 << 16 {
            (0..ncols)
                .map(|j| finish(j, m.rb_mut().subcols_mut(j, 1)))
                .collect()
        } else {
            use rayon::prelude::*;
            let chunk = ncols.div_ceil(4 * rayon::current_num_threads()).max(1);
            let parts: Vec<Vec<T>> = m
                .par_col_chunks_mut(chunk)
                .enumerate()
                .map(|(c, mut cols)| {
                    (0..cols.ncols())
                        .map(|j| finish(c * chunk + j, cols.rb_mut().subcols_mut(j, 1)))
                        .collect()
                })
                .collect();
            parts.into_iter().flatten().collect()
        }
    }

    /// Replaces squared distances (radial kernels) or inner products (the others) by
    /// kernel values. The two exponential kernels take the vectorised exp; with
    /// `FUSED`, the one by fused multiply-adds ([`fast_exp::exp_scaled_fused`]: other
    /// bits).
    fn apply_in_place<const FUSED: bool>(&self, v: &mut [f64]) {
        match *self {
            Kernel::Gaussian {
                epsilon: Epsilon::Value(e),
            } => match FUSED {
                true => fast_exp::exp_scaled_fused(v, -1.0 / e),
                false => fast_exp::exp_scaled(v, -1.0 / e),
            },
            Kernel::Laplacian {
                epsilon: Epsilon::Value(e),
            } => match FUSED {
                true => fast_exp::exp_sqrt_scaled_fused(v, -1.0 / e),
                false => fast_exp::exp_sqrt_scaled(v, -1.0 / e),
            },
            _ if self.is_radial() => v.iter_mut().for_each(|x| *x = self.value(*x, 0.0)),
            _ => v.iter_mut().for_each(|x| *x = self.value(0.0, *x)),
        }
    }

    /// The symmetric kernel matrix of the rows of `x` (both triangles bit-identical;
    /// for radial kernels the diagonal is k(x, x) exactly).
    pub fn gram(&self, x: MatRef<'_, f64>, par: Par) -> Mat<f64> {
        let sq = row_sq_norms(x);
        let mut k = self.block(x, &sq, x, &sq, par);
        distance::symmetrize(&mut k);
        if self.is_radial() {
            let d = self.diag_value(0.0);
            for i in 0..k.nrows() {
                k[(i, i)] = d;
            }
        }
        k
    }
}

/// Panics unless `m` is a.nrows() × b.nrows() with contiguous columns (a kernel block's
/// output).
fn check_block_shape(m: MatRef<'_, f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    assert!(
        m.nrows() == a.nrows() && m.ncols() == b.nrows() && m.row_stride() == 1,
        "kernel block: output must be {}×{} with contiguous columns",
        a.nrows(),
        b.nrows()
    );
}

#[cfg(test)]
mod tests;
