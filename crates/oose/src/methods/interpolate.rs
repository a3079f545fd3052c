//! Kernel interpolation and function extension (maths §8): given values F (N×m) on the
//! training points, f_X(z) = k_zᵀ A with K A = F (interpolation), (K + ρI) A = F
//! (ρ > 0: regularised least squares), a polynomial tail of degree m − 1 for
//! conditionally positive definite kernels of order m, or the truncated
//! eigen-expansion of K (geometric harmonics). Every predicted row comes with the power
//! function P_X(z) = sqrt(k₀(z, z)) of maths §4, and the model reports ||f_X||_H.

use crate::diagnostics::residual::ResidualFactor;
use crate::error::{Error, Result};
use crate::extend::low_rank::{self, LowRankParts};
use crate::extend::{by_chunks, Column, Extension, ExtensionChoice};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::params::KERNEL_SPECS;
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::pivoted_cholesky;
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, Configuration, ExtendOptions, Fitted, Input, InputKinds, Method, Registered,
};
use crate::model::params::{join, Kind, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, put_debug, RANK_TOLERANCE};
use crate::validate;
use faer::linalg::solvers::Solve;
use faer::{Mat, MatRef, Par, Side};
use serde::{Deserialize, Serialize};

/// Kernel interpolation parameters.
///
/// ```
/// use oose::kernel::Kernel;
/// use oose::methods::interpolate::Interpolator;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::s_curve(200, 0.0, 0).points;
/// let f = faer::Mat::from_fn(200, 1, |i, _| x[(i, 0)] * x[(i, 2)]);
/// let m = Interpolator { kernel: Kernel::gaussian(0.5), ..Default::default() }
///     .fit(x.as_ref(), f.as_ref()).unwrap();
/// let p = m.extend(x.as_ref().subrows(0, 3)).unwrap();
/// assert!((p.coordinates[(1, 0)] - f[(1, 0)]).abs() < 1e-8);
/// assert!(p.residual[1] < 1e-10);           // P_X² vanishes on training points
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interpolator {
    /// The kernel (default gaussian, ε by the median rule). Conditionally positive
    /// definite kernels (multiquadric, polyharmonic, thin plate) get a polynomial tail.
    pub kernel: Kernel,
    /// ρ ≥ 0: 0 interpolates, ρ > 0 solves (K + ρI) A = F (default 0).
    pub regularization: f64,
    /// Geometric harmonics: keep the eigenpairs of K with λ ≥ δ·λ₁ and set
    /// A = V Λ⁻¹ Vᵀ F (positive definite kernels; default `None`).
    pub geometric_harmonics: Option<f64>,
    /// Relative tolerance of the pivoted Cholesky behind the power function (1e-12).
    pub rank_tolerance: f64,
}

impl Default for Interpolator {
    fn default() -> Self {
        Interpolator {
            kernel: Kernel::default(),
            regularization: 0.0,
            geometric_harmonics: None,
            rank_tolerance: 1e-12,
        }
    }
}

/// Monomials of total degree ≤ `deg` in `dim` variables, as exponent vectors
/// (graded order: 1, x₁, …, x_D, x₁², x₁x₂, …).
fn monomials(dim: usize, deg: usize) -> Vec<Vec<u32>> {
    let mut out = vec![vec![0u32; dim]];
    let mut last = out.clone();
    for _ in 0..deg {
        let mut next: Vec<Vec<u32>> = Vec::new();
        for e in &last {
            // Raise one variable at or after the last raised one (no duplicates).
            let start = e.iter().rposition(|&p| p > 0).unwrap_or(0);
            for v in start..dim {
                let mut f = e.clone();
                f[v] += 1;
                next.push(f);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

fn poly_matrix(x: MatRef<'_, f64>, mono: &[Vec<u32>]) -> Mat<f64> {
    Mat::from_fn(x.nrows(), mono.len(), |i, j| {
        mono[j]
            .iter()
            .enumerate()
            .map(|(v, &p)| x[(i, v)].powi(p as i32))
            .product()
    })
}

impl Interpolator {
    /// Fits on training points `x` (N×D) and values `f` (N×m).
    pub fn fit(&self, x: MatRef<'_, f64>, f: MatRef<'_, f64>) -> Result<FittedInterpolator> {
        validate::training_points("training data", x)?;
        validate::finite_nonempty("values", f)?;
        validate::rank_tolerance(self.rank_tolerance)?;
        let n = x.nrows();
        if f.nrows() != n {
            return Err(Error::Shape {
                what: "values",
                expected: format!("{n} rows (one per training point)"),
                got: format!("{} rows", f.nrows()),
            });
        }
        if self.kernel == Kernel::Precomputed {
            return Err(Error::param(
                "kernel",
                "interpolation evaluates the kernel on new points: give a kernel, not `precomputed`",
            ));
        }
        validate::non_negative("regularization", self.regularization)?;
        let kernel = self.kernel.resolve(x)?;
        let order = kernel.cpd_order();
        if let Some(delta) = self.geometric_harmonics {
            if !(delta > 0.0 && delta < 1.0) {
                return Err(Error::param(
                    "geometric_harmonics",
                    format!("δ must be in (0, 1), got {delta}"),
                ));
            }
            if order > 0 {
                return Err(Error::param(
                    "geometric_harmonics",
                    format!(
                        "needs a positive definite kernel; {} is not one",
                        kernel.name()
                    ),
                ));
            }
        }
        let mono = if order > 0 {
            monomials(x.ncols(), order - 1)
        } else {
            Vec::new()
        };
        let q = mono.len();
        if n < q {
            return Err(Error::Shape {
                what: "training data",
                expected: format!(
                    "at least {q} points for the polynomial tail of degree {}",
                    order - 1
                ),
                got: format!("{n}"),
            });
        }
        let par = Par::rayon(0);
        // At the peak four N×N matrices live at once: K with the solver's working
        // copies and factor (or the eigenvectors and the eigensolver's work), and later
        // K with the residual factor's working copy, factor and stored copy (measured:
        // 4.1–4.3 N×N of resident memory at N = 3000 and 6000, gaussian and thin-plate).
        crate::linalg::memory::plan(
            "kernel matrix (N×N) with its working copies and factors",
            4,
            n,
            n,
        )?;
        let k = kernel.gram(x, par);
        validate::computed_finite("kernel matrix", k.as_ref())?;
        let m = f.ncols();
        let rho = self.regularization;
        let (coef, tail) = if let Some(delta) = self.geometric_harmonics {
            let evd = k
                .self_adjoint_eigen(Side::Lower)
                .map_err(|e| Error::Eigensolver(format!("{e:?}")))?;
            let s = evd.S().column_vector();
            let u = evd.U();
            let top = s[n - 1];
            let keep: Vec<usize> = (0..n)
                .filter(|&j| s[j] >= delta * top && s[j] > 0.0)
                .collect();
            let v = Mat::from_fn(n, keep.len(), |i, c| u[(i, keep[c])]);
            let mut vtf = v.transpose() * f;
            for (c, &j) in keep.iter().enumerate() {
                let inv = 1.0 / (s[j] + rho);
                for col in 0..m {
                    vtf[(c, col)] *= inv;
                }
            }
            (&v * &vtf, Mat::<f64>::zeros(0, m))
        } else if q == 0 {
            let mut a = k.clone();
            for i in 0..n {
                a[(i, i)] += rho;
            }
            let sol = match a.llt(Side::Lower) {
                Ok(llt) => llt.solve(f),
                Err(_) => a.partial_piv_lu().solve(f),
            };
            (sol, Mat::<f64>::zeros(0, m))
        } else {
            let p = poly_matrix(x, &mono);
            let t = n + q;
            let big = Mat::from_fn(t, t, |i, j| match (i < n, j < n) {
                (true, true) => k[(i, j)] + if i == j { rho } else { 0.0 },
                (true, false) => p[(i, j - n)],
                (false, true) => p[(j, i - n)],
                (false, false) => 0.0,
            });
            let rhs = Mat::from_fn(t, m, |i, j| if i < n { f[(i, j)] } else { 0.0 });
            let sol = big.full_piv_lu().solve(rhs.as_ref());
            (
                sol.as_ref().subrows(0, n).to_owned(),
                sol.as_ref().subrows(n, q).to_owned(),
            )
        };
        if coef.as_ref().has_nan() || tail.as_ref().has_nan() {
            return Err(Error::Singular(singular_reason(x)));
        }
        // ||f_X||²_H = tr(Aᵀ K A), times (−1)^m for conditionally positive definite
        // kernels of order m (the native-space semi-norm).
        let ka = &k * &coef;
        let sign = if order % 2 == 1 { -1.0 } else { 1.0 };
        let norms: Vec<f64> = (0..m)
            .map(|c| sign * (0..n).map(|i| coef[(i, c)] * ka[(i, c)]).sum::<f64>())
            .collect();
        let residual = (order == 0).then(|| {
            ResidualFactor::from_cholesky(
                pivoted_cholesky(k.as_ref(), self.rank_tolerance),
                self.rank_tolerance,
            )
        });
        Ok(FittedInterpolator {
            params: Interpolator {
                kernel,
                ..self.clone()
            },
            x: StoredMat::from_mat(x),
            x_sq: row_sq_norms(x),
            values: StoredMat::from_mat(f),
            coef: StoredMat::from_mat(coef.as_ref()),
            tail: StoredMat::from_mat(tail.as_ref()),
            monomials: mono,
            norms_squared: norms,
            residual,
            low_rank: Default::default(),
        })
    }
}

/// Pre-image map of a fitted model (maths §8): the interpolant from the model's training
/// embedding (N×d) back to its training points `x` (N×D), so that `extend` on embedding
/// coordinates returns points in data space, each with its power function.
///
/// ```
/// use oose::kernel::Kernel;
/// use oose::methods::interpolate::{preimage, Interpolator};
/// use oose::methods::isomap::Isomap;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(400, 0.0, false, 0).points;
/// let iso = Isomap::default().fit(x.as_ref()).unwrap();
/// // The thin-plate spline suits 2-D embeddings (scale-free).
/// let tps = Interpolator { kernel: Kernel::Polyharmonic { beta: 2 }, ..Default::default() };
/// let back = preimage(&iso, x.as_ref(), &tps).unwrap();
/// let p = back.extend(iso.embedding().subrows(0, 2)).unwrap();
/// assert!((p.coordinates[(1, 2)] - x[(1, 2)]).abs() < 1e-6);
/// ```
pub fn preimage<M: OutOfSample + ?Sized>(
    model: &M,
    x: MatRef<'_, f64>,
    interpolator: &Interpolator,
) -> Result<FittedInterpolator> {
    let e = model.embedding();
    if x.nrows() != e.nrows() {
        return Err(Error::Shape {
            what: "training points for the pre-image",
            expected: format!("{} rows (one per embedded training point)", e.nrows()),
            got: format!("{} rows", x.nrows()),
        });
    }
    interpolator.fit(e, x)
}

/// Why [K P; Pᵀ 0] is singular, naming a repeated pair of training points if there is
/// one (only on the failure path, so the O(N²) scan costs nothing otherwise).
fn singular_reason(x: MatRef<'_, f64>) -> String {
    let n = x.nrows();
    for i in 0..n {
        for j in i + 1..n {
            if (0..x.ncols()).all(|c| x[(i, c)] == x[(j, c)]) {
                return format!(
                    "training points: rows {i} and {j} (0-based) are the same point, so the \
                     interpolation system is singular; remove repeated points or set \
                     regularization > 0"
                );
            }
        }
    }
    "training points: the interpolation system is singular (too few points in general \
     position for the polynomial tail?); set regularization > 0"
        .into()
}

/// A fitted interpolant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedInterpolator {
    params: Interpolator,
    x: StoredMat,
    x_sq: Vec<f64>,
    values: StoredMat,
    coef: StoredMat,
    tail: StoredMat,
    monomials: Vec<Vec<u32>>,
    norms_squared: Vec<f64>,
    residual: Option<ResidualFactor>,
    /// The low-rank extension's matrices, formed on first use (not stored).
    #[serde(skip)]
    low_rank: low_rank::LowRankCache,
}

impl FittedInterpolator {
    /// Parameters, with ε as used.
    pub fn params(&self) -> &Interpolator {
        &self.params
    }

    /// ||f_X||²_H per value column (the native-space semi-norm for conditionally
    /// positive definite kernels).
    pub fn norms_squared(&self) -> &[f64] {
        &self.norms_squared
    }

    /// Coefficients A (N×m).
    pub fn coefficients(&self) -> MatRef<'_, f64> {
        self.coef.view()
    }

    /// Degree of the polynomial tail (`None` without one).
    pub fn tail_degree(&self) -> Option<usize> {
        let o = self.params.kernel.cpd_order();
        (o > 0).then(|| o - 1)
    }

    /// Numerical rank kept for the power function (`None` for conditionally positive
    /// definite kernels, whose power function is not computed).
    pub fn residual_rank(&self) -> Option<usize> {
        self.residual.as_ref().map(ResidualFactor::rank)
    }

    fn low_rank_parts(&self) -> Result<&LowRankParts> {
        low_rank::cached(&self.low_rank, self.params.kernel, self.x.ncols(), || {
            let chol = self
                .residual
                .as_ref()
                .expect("a positive definite kernel has a tail-free fit and its power function")
                .cholesky();
            let coef = self.coef.view();
            // ‖A‖₂: the largest singular value of the coefficients (N×m).
            let gain = coef
                .singular_values()
                .map_or(f64::INFINITY, |s| s.first().copied().unwrap_or(0.0));
            LowRankParts::new(
                self.params.kernel,
                self.x.view(),
                &self.x_sq,
                chol,
                gain,
                |rows| (rows * coef, vec![0.0; rows.nrows()]),
            )
        })
    }

    /// The low-rank extension of the rows of `new` (maths §20): f^P(z) = k_P(z)ᵀ B
    /// through the r pivots of the power function's pivoted Cholesky factorisation
    /// (`residual_rank` in the info) instead of all N training points, with the column
    /// `lowrank_bound`, a bound on ‖f_X(z) − f^P(z)‖₂ (‖A‖₂ · P_P(z) · (Σᵢ P_P(xᵢ)²)^½),
    /// then `power_function` as in the exact extension. Row by row (sample-wise).
    /// Refused for kernels that are not positive definite.
    ///
    /// ```
    /// use oose::kernel::Kernel;
    /// use oose::methods::interpolate::Interpolator;
    /// use oose::methods::OutOfSample;
    /// let x = oose::datasets::s_curve(300, 0.0, 0).points;
    /// let f = faer::Mat::from_fn(300, 1, |i, _| x[(i, 0)] * x[(i, 2)]);
    /// let m = Interpolator { kernel: Kernel::gaussian(0.5), rank_tolerance: 1e-10, ..Default::default() }
    ///     .fit(x.as_ref(), f.as_ref()).unwrap();
    /// let z = oose::datasets::s_curve(20, 0.0, 1).points;
    /// let exact = m.extend(z.as_ref()).unwrap().coordinates;
    /// let fast = m.extend_low_rank(z.as_ref()).unwrap();
    /// let bound = &fast.extra[0].values;
    /// for i in 0..20 {
    ///     assert!((exact[(i, 0)] - fast.coordinates[(i, 0)]).abs() <= bound[i]);
    /// }
    /// ```
    pub fn extend_low_rank(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::finite_nonempty("new points", new)?;
        validate::columns("new points", new, self.x.ncols())?;
        let mut e = self
            .low_rank_parts()?
            .extend(new, |y, _, _| vec![f64::NAN; y.nrows()])?;
        e.extra.push(Column {
            name: "power_function",
            values: e.residual.iter().map(|r| r.sqrt()).collect(),
        });
        Ok(e)
    }

    /// `extension = auto`: each row through the pivots when its `lowrank_bound` is at
    /// most `tolerance` × the training values' largest |value|, else exactly (bound 0).
    pub fn extend_auto(&self, new: MatRef<'_, f64>, tolerance: f64) -> Result<Extension> {
        let fast = self.extend_low_rank(new)?;
        let limit = tolerance * self.values.view().norm_max();
        low_rank::auto(fast, new, limit, |rows| self.extend(rows))
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let (n, d) = (self.x.nrows(), self.x.ncols());
        let m = self.values.ncols();
        self.x.is_consistent()
            && self.values.is_shape(n, m)
            && self.coef.is_shape(n, m)
            && self.tail.is_shape(self.monomials.len(), m)
            && self.monomials.iter().all(|e| e.len() == d)
            && self.x_sq.len() == n
            && self.norms_squared.len() == m
            && self.residual.as_ref().is_none_or(|r| r.is_consistent(n))
    }
}

impl OutOfSample for FittedInterpolator {
    /// The values F on the training points.
    fn embedding(&self) -> MatRef<'_, f64> {
        self.values.view()
    }

    /// `coordinates` = f_X(z) (M×m); `residual` = P_X(z)² (NaN for conditionally
    /// positive definite kernels); `extra` holds `power_function` = P_X(z).
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.exact(new, true)
    }

    fn input_width(&self) -> usize {
        self.x.ncols()
    }
}

impl FittedInterpolator {
    /// The exact extension, with the residual and the power function only when
    /// `diagnostics` (they cost a triangular solve of the residual's rank per row).
    fn exact(&self, new: MatRef<'_, f64>, diagnostics: bool) -> Result<Extension> {
        validate::finite_nonempty("new points", new)?;
        validate::columns("new points", new, self.x.ncols())?;
        let n = self.x.nrows();
        let m = self.values.ncols();
        let kernel = self.params.kernel;
        by_chunks(new, n, m, |_, z| {
            let z_sq = row_sq_norms(z);
            let kz = kernel.block(z, &z_sq, self.x.view(), &self.x_sq, Par::Seq);
            let mut vals = &kz * self.coef.view();
            if !self.monomials.is_empty() {
                let p = poly_matrix(z, &self.monomials);
                vals += &p * self.tail.view();
            }
            let residual = match self.residual.as_ref().filter(|_| diagnostics) {
                Some(r) => {
                    let kzz: Vec<f64> = z_sq.iter().map(|&s| kernel.diag_value(s)).collect();
                    r.residuals(kz.as_ref(), &kzz)
                }
                None => vec![f64::NAN; z.nrows()],
            };
            let power = residual.iter().map(|r| r.sqrt()).collect();
            Ok(Extension {
                coordinates: vals,
                reconstruction_error: vec![f64::NAN; z.nrows()],
                residual,
                extra: vec![Column {
                    name: "power_function",
                    values: power,
                }],
            })
        })
    }
}

impl Method for Interpolator {
    type Fitted = FittedInterpolator;
    const INPUT: InputKinds = InputKinds::Values;

    const SPECS: &'static [ParamSpec] = &join::<9>(&[
        NO_PARAMS,
        &KERNEL_SPECS,
        &[
            ParamSpec::new(
                "regularization",
                "regularization",
                Kind::Float,
                "ρ ≥ 0 of regularised least squares (0 interpolates).",
            ),
            ParamSpec::new(
                "geometric_harmonics",
                "geometric-harmonics",
                Kind::Float,
                "Geometric harmonics: keep eigenvalues ≥ δ·λ₁.",
            )
            .optional(),
            RANK_TOLERANCE,
        ],
    ]);

    crate::params_as_data!(Interpolator {
        kernel,
        regularization,
        geometric_harmonics,
        rank_tolerance
    });

    fn configurations() -> Vec<Configuration> {
        let inexact = Configuration::not_exact;
        vec![
            Configuration::exact("gaussian", Values::new().with("epsilon", 1.0)),
            Configuration::exact("thin-plate", Values::new().with("kernel", "thin_plate")),
            Configuration::exact(
                "polyharmonic-3",
                Values::new().with("kernel", "polyharmonic"),
            ),
            inexact(
                "multiquadric-regularized",
                Values::new()
                    .with("kernel", "multiquadric")
                    .with("regularization", 1e-3),
            ),
            inexact(
                "geometric-harmonics",
                Values::new()
                    .with("epsilon", 2.0)
                    .with("geometric_harmonics", 1e-8),
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedInterpolator> {
        match input {
            Input::Values { points, values } => self.fit(points, values),
            other => Err(other.refused(Self::NAME, "points with values")),
        }
    }
}

impl Fitted for FittedInterpolator {
    fn training_stored(&self) -> Option<&StoredMat> {
        Some(&self.x)
    }

    crate::fitted_basics!();

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&["extension"], |o| no_such_option(Interpolator::NAME, o))?;
        if opts.extension.is_some_and(|e| e != ExtensionChoice::Exact) {
            // Refused for a kernel that is not positive definite: a conditionally
            // positive definite kernel, with its polynomial tail, has no power function
            // to certify with.
            low_rank::check_kernel(self.params.kernel, self.x.ncols())?;
        }
        Ok(())
    }

    fn extend_options(&self, new: MatRef<'_, f64>, opts: &ExtendOptions<'_>) -> Result<Extension> {
        self.check_options(opts)?;
        match opts.extension {
            Some(ExtensionChoice::LowRank) => self.extend_low_rank(new),
            Some(ExtensionChoice::Auto { tolerance }) => self.extend_auto(new, tolerance),
            _ => self.exact(new, !opts.coordinates_only),
        }
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = &self.params;
        v.push(("kernel".into(), p.kernel.name().into()));
        if let Some(e) = p.kernel.epsilon() {
            v.push(("epsilon".into(), format!("{e:?}")));
        }
        put_debug(v, "regularization", p.regularization);
        if let Some(d) = p.geometric_harmonics {
            v.push(("geometric_harmonics_delta".into(), format!("{d:?}")));
        }
        v.push((
            "tail_degree".into(),
            self.tail_degree().map_or("none".into(), |d| d.to_string()),
        ));
        v.push(("norm_h_squared".into(), fmt_list(&self.norms_squared)));
        v.push((
            "residual_rank".into(),
            self.residual_rank()
                .map_or("n/a (conditionally positive definite kernel)".into(), |r| {
                    r.to_string()
                }),
        ));
    }

    fn norms_squared(&self) -> Option<&[f64]> {
        Some(&self.norms_squared)
    }
}
