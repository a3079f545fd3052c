//! A primal–dual interior-point method for the semidefinite programs of maximum variance
//! unfolding (maths §15): maximise ⟨C, Y⟩ over Y ⪰ 0 (n×n) subject to m constraints
//! uₑᵀ Y uₑ = bₑ (exact MVU) or ≤ bₑ (landmark MVU), each a rank-one matrix uₑuₑᵀ.
//!
//! Infeasible-start path following with the HKM direction and Mehrotra's
//! predictor–corrector, as in SDPT3 and CSDP. With slacks s ≥ 0 for inequalities and
//! the dual (y, Z = 𝒜ᵀ(y) − C ⪰ 0), each Newton step solves (𝓜 + D) Δy = r with
//! 𝓜ₐᵦ = ⟨Aₐ, Y Aᵦ Z⁻¹⟩ and D = diag(s/y). The rank-one constraints make 𝓜 cheap:
//! 𝓜 = (UᵀYU) ∘ (UᵀZ⁻¹U), two products and a Hadamard product, where a general
//! solver (Clarabel, SCS) forms a KKT system over all n(n+1)/2 entries of Y (measured:
//! Clarabel 0.11 takes 81 s on a 60-point exact MVU, this solver a fraction of a
//! second). 𝓜 + D is factored densely (Cholesky, five steps of iterative refinement).

use crate::error::Result;
use faer::linalg::matmul::matmul;
use faer::linalg::solvers::DenseSolveCore;
use faer::{Accum, Mat, MatRef, Par, Side};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The accuracy accepted, as `AlmostSolved`, when the iterations stop short of the
/// requested one (Clarabel's "reduced tolerance", stricter): MVU programs are
/// degenerate (many more edges than a face of the cone needs), and rounding limits the
/// primal infeasibility to ~1e-7 relative on some.
pub const REDUCED_TOL: f64 = 1e-6;

/// (pobj − dobj)/(1 + |pobj| + |dobj|): how far apart the primal and dual objectives are,
/// relative (the status's fourth measure, and `objective_gap` in the info).
pub(crate) fn objective_gap(pobj: f64, dobj: f64) -> f64 {
    (pobj - dobj) / (1.0 + pobj.abs() + dobj.abs())
}

/// Primal and dual objective, relative primal and dual infeasibility, relative gap.
type Measures = (f64, f64, f64, f64, f64);

/// Steps of iterative refinement of each Newton system for an independent set of
/// constraints (measured on Swiss rolls and S-curves of 60–400 points: with 2, the
/// 400-point roll with k = 5 stalls at a primal infeasibility of 1e-6; with 5 it ends
/// almost solved; 10 gain nothing).
pub(crate) const REFINEMENT_STEPS: usize = 5;

/// Steps of refinement for dependent constraints (a singular Newton matrix factored
/// with a ridge) and for landmark MVU's inequalities: the setting those were measured
/// with.
pub(crate) const REFINEMENT_STEPS_RIDGE: usize = 2;

/// Iterations without progress in any measure after which the solve stops.
const PATIENCE: usize = 8;
/// Most Gauss–Newton steps of the feasibility restoration (each an m×m Cholesky); it
/// stops earlier once three steps in a row lower the largest residual by less than 1 %.
const RESTORATION_STEPS: usize = 60;
/// Relative primal infeasibility below which a restored iterate counts as feasible.
pub(crate) const FEASIBLE: f64 = 1e-12;

/// The semidefinite program: maximise ⟨C, Y⟩, Y ⪰ 0, uₑᵀ Y uₑ (= or ≤) bₑ.
pub(crate) struct Sdp<'a> {
    /// n×m: column e is uₑ.
    pub u: MatRef<'a, f64>,
    /// The right-hand sides bₑ.
    pub b: &'a [f64],
    /// The objective (symmetric n×n).
    pub c: MatRef<'a, f64>,
    /// `≤` instead of `=`.
    pub inequality: bool,
    /// Steps of iterative refinement of each Newton system.
    pub refinement: usize,
}

/// How the solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SdpStatus {
    /// Relative primal and dual infeasibility, duality gap and objective gap all below
    /// the tolerance.
    Solved,
    /// Stopped (iteration limit or no more progress) with every measure below the
    /// reduced tolerance [`REDUCED_TOL`] but not all below the requested one; or every
    /// measure below the requested one but the primal and dual objectives further apart.
    AlmostSolved,
    /// The iteration limit came first.
    MaxIterations,
    /// The steps became too short to make progress.
    Stalled,
}

impl SdpStatus {
    /// The status in words (`solved`, `max-iterations`, `stalled`).
    pub fn name(&self) -> &'static str {
        match self {
            SdpStatus::Solved => "solved",
            SdpStatus::AlmostSolved => "almost-solved",
            SdpStatus::MaxIterations => "max-iterations",
            SdpStatus::Stalled => "stalled",
        }
    }
}

/// The solution and how good it is.
pub(crate) struct SdpSolution {
    /// The primal Y.
    pub y: Mat<f64>,
    pub status: SdpStatus,
    pub iterations: usize,
    /// ⟨C, Y⟩.
    pub primal_objective: f64,
    /// bᵀy.
    pub dual_objective: f64,
    /// ||b − 𝒜(Y) − s|| / (1 + ||b||).
    pub primal_infeasibility: f64,
    /// ||𝒜ᵀ(y) − C − Z||_F / (1 + ||C||_F).
    pub dual_infeasibility: f64,
    /// (⟨Y, Z⟩ + sᵀy) / (1 + |⟨C, Y⟩| + |bᵀy|).
    pub gap: f64,
}

fn sym(a: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

fn mul(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut c = Mat::zeros(a.nrows(), b.ncols());
    matmul(c.as_mut(), Accum::Replace, a, b, 1.0, Par::rayon(0));
    c
}

fn inner(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    (0..a.ncols())
        .map(|j| (0..a.nrows()).map(|i| a[(i, j)] * b[(i, j)]).sum::<f64>())
        .sum()
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn inverse_spd(a: MatRef<'_, f64>) -> Option<Mat<f64>> {
    let inv = a.llt(Side::Lower).ok()?.inverse();
    Some(sym(&inv))
}

/// The largest α ≤ 1/0 (∞ when none) with A + αΔ ⪰ 0, from the smallest eigenvalue of
/// L⁻¹ Δ L⁻ᵀ (A = L Lᵀ).
fn max_step_psd(a: MatRef<'_, f64>, delta: &Mat<f64>) -> f64 {
    let Ok(llt) = a.llt(Side::Lower) else {
        return 0.0;
    };
    let l = llt.L();
    let mut t = delta.clone();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, t.as_mut(), Par::rayon(0));
    let mut t2 = t.transpose().to_owned();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, t2.as_mut(), Par::rayon(0));
    let t2 = sym(&t2);
    match t2.self_adjoint_eigenvalues(Side::Lower) {
        Ok(ev) => {
            let min = ev.first().copied().unwrap_or(0.0);
            if min < 0.0 {
                -1.0 / min
            } else {
                f64::INFINITY
            }
        }
        Err(_) => 0.0,
    }
}

fn max_step_lp(v: &[f64], dv: &[f64]) -> f64 {
    v.iter()
        .zip(dv)
        .filter(|(_, &d)| d < 0.0)
        .map(|(&x, &d)| -x / d)
        .fold(f64::INFINITY, f64::min)
}

/// The factored system 𝓜 + D of one iteration (m×m), the matrix kept for iterative
/// refinement.
struct Normal(Mat<f64>, faer::linalg::solvers::Llt<f64>);

impl<'a> Sdp<'a> {
    fn n(&self) -> usize {
        self.u.nrows()
    }

    fn m(&self) -> usize {
        self.u.ncols()
    }

    /// 𝒜(S): uₑᵀ S uₑ for every e (S symmetric).
    pub(crate) fn apply(&self, s: MatRef<'_, f64>) -> Vec<f64> {
        let su = mul(s, self.u);
        (0..self.m())
            .into_par_iter()
            .map(|e| (0..self.n()).map(|i| self.u[(i, e)] * su[(i, e)]).sum())
            .collect()
    }

    /// 𝒜ᵀ(y) = Σ yₑ uₑuₑᵀ = U diag(y) Uᵀ.
    fn adjoint(&self, y: &[f64]) -> Mat<f64> {
        let scaled = Mat::from_fn(self.n(), self.m(), |i, e| self.u[(i, e)] * y[e]);
        let out = crate::linalg::product(scaled.as_ref(), self.u.transpose(), Par::rayon(0));
        sym(&out)
    }

    fn factor(&self, y: MatRef<'_, f64>, w: MatRef<'_, f64>, d: &[f64]) -> Option<Normal> {
        let p = mul(mul(self.u.transpose(), y).as_ref(), self.u);
        let q = mul(mul(self.u.transpose(), w).as_ref(), self.u);
        let m = self.m();
        let mut mm = Mat::from_fn(m, m, |a, b| {
            0.5 * (p[(a, b)] * q[(b, a)] + p[(b, a)] * q[(a, b)])
        });
        for (e, de) in d.iter().enumerate() {
            mm[(e, e)] += de;
        }
        if let Ok(l) = mm.llt(Side::Lower) {
            return Some(Normal(mm, l));
        }
        // Near the optimum 𝓜 loses definiteness to rounding: factor with a tiny ridge
        // (the refinement steps correct for it).
        let ridge = 1e-13 * (0..m).map(|e| mm[(e, e)]).fold(0.0, f64::max);
        let mut shifted = mm.clone();
        for e in 0..m {
            shifted[(e, e)] += ridge;
        }
        let l = shifted.llt(Side::Lower).ok()?;
        Some(Normal(mm, l))
    }

    fn solve(&self, normal: &Normal, r: &[f64]) -> Vec<f64> {
        use faer::linalg::solvers::Solve;
        let Normal(mm, l) = normal;
        {
            {
                let rhs = Mat::from_fn(r.len(), 1, |i, _| r[i]);
                let mut x = rhs.clone();
                l.solve_in_place(x.as_mut());
                // Iterative refinement: 𝓜 is ill-conditioned near the optimum, and the
                // step lengths depend on an accurate direction.
                for _ in 0..self.refinement {
                    let mut res = rhs.clone();
                    matmul(
                        res.as_mut(),
                        Accum::Add,
                        mm.as_ref(),
                        x.as_ref(),
                        -1.0,
                        Par::rayon(0),
                    );
                    l.solve_in_place(res.as_mut());
                    x += &res;
                }
                (0..r.len()).map(|i| x[(i, 0)]).collect()
            }
        }
    }

    /// Feasibility restoration of an equality program's solution `y` (maths §15): the
    /// interior-point iterate satisfies 𝒜(Y) = b only to its tolerance, and on MVU's
    /// degenerate programs the large multipliers turn that into a visible excess of the
    /// objective (⟨C, Y⟩ − bᵀy ≈ yᵀ(𝒜(Y) − b)). Gauss–Newton on a factor Y = S Sᵀ,
    /// each step the least-norm change of S that zeroes the linearised residual:
    /// rₑ = ‖Sᵀuₑ‖² − bₑ, (𝒥𝒥ᵀ)ₑf = 4 (uₑᵀu_f)(uₑᵀ S Sᵀ u_f), ΔS = −2 U diag(λ) Uᵀ S
    /// with (𝒥𝒥ᵀ) λ = r. At a KKT point the change of ⟨I, Y⟩ is −yᵀr to first order:
    /// the objective moves onto the dual's. Steps are kept only while the largest
    /// residual falls; `None` when none does (the iterate is then kept as it is).
    pub(crate) fn restore_feasibility(&self, y: MatRef<'_, f64>) -> Option<Mat<f64>> {
        use faer::linalg::solvers::Solve;
        if self.inequality {
            return None;
        }
        let evd = y.self_adjoint_eigen(Side::Lower).ok()?;
        let sig = evd.S().column_vector();
        let n = self.n();
        let mut s = Mat::from_fn(n, n, |r, c| evd.U()[(r, c)] * sig[c].max(0.0).sqrt());
        let gram = mul(self.u.transpose(), self.u);
        let residual = |s: &Mat<f64>| -> (Vec<f64>, f64) {
            let su = mul(s.transpose(), self.u);
            let r: Vec<f64> = (0..self.m())
                .map(|e| (0..n).map(|i| su[(i, e)] * su[(i, e)]).sum::<f64>() - self.b[e])
                .collect();
            let worst = r.iter().fold(0.0f64, |w, v| w.max(v.abs()));
            (r, worst)
        };
        let (mut r, mut worst) = residual(&s);
        let (mut improved, mut slow) = (false, 0);
        for _ in 0..RESTORATION_STEPS {
            let su = mul(s.transpose(), self.u);
            let k = mul(su.transpose(), su.as_ref());
            let m = self.m();
            let a = Mat::from_fn(m, m, |e, f| 4.0 * gram[(e, f)] * k[(e, f)]);
            // Dependent constraints make 𝒥𝒥ᵀ (near) singular: Levenberg–Marquardt, the
            // smallest ridge (relative to its largest diagonal entry) whose step lowers
            // the largest residual.
            let top = (0..m).map(|e| a[(e, e)]).fold(0.0, f64::max);
            let rhs = Mat::from_fn(m, 1, |e, _| 2.0 * r[e]);
            let found = [1e-13, 1e-11, 1e-9, 1e-7, 1e-5, 1e-3]
                .iter()
                .find_map(|&rel| {
                    let mut shifted = a.clone();
                    for e in 0..m {
                        shifted[(e, e)] += rel * top;
                    }
                    let lambda = shifted.llt(Side::Lower).ok()?.solve(rhs.as_ref());
                    let lam: Vec<f64> = (0..m).map(|e| lambda[(e, 0)]).collect();
                    let next = &s - mul(self.adjoint(&lam).as_ref(), s.as_ref());
                    let (r_next, worst_next) = residual(&next);
                    (worst_next < worst).then_some((next, r_next, worst_next))
                });
            let Some((next, r_next, worst_next)) = found else {
                break;
            };
            slow = if worst_next > 0.99 * worst {
                slow + 1
            } else {
                0
            };
            (s, r, worst, improved) = (next, r_next, worst_next, true);
            // Three steps in a row that lower the residual by less than 1 % end the
            // restoration (each costs an m×m Cholesky).
            if slow == 3 || worst <= 1e-15 * self.b.iter().fold(0.0f64, |w, v| w.max(v.abs())) {
                break;
            }
        }
        improved.then(|| mul(s.as_ref(), s.transpose()))
    }

    /// Solves the program to relative accuracy `tol` in at most `max_iter` iterations.
    /// Checks for a stop request between iterations and reports progress.
    pub fn solve_ipm(&self, tol: f64, max_iter: usize, label: &str) -> Result<SdpSolution> {
        let (n, m) = (self.n(), self.m());
        let q = if self.inequality { m } else { 0 };
        let norms: Vec<f64> = (0..m)
            .map(|e| (0..n).map(|i| self.u[(i, e)].powi(2)).sum::<f64>())
            .collect();
        let b_norm = norm(self.b);
        // The objective scaled to ||C||_F = √n (as C = I): the solution does not change,
        // the starting point below suits it. Objectives are scaled back at the end.
        let c_scale = inner(self.c, self.c).sqrt() / (n as f64).sqrt();
        let c_scale = if c_scale > 0.0 && c_scale.is_finite() {
            c_scale
        } else {
            1.0
        };
        let cm = Mat::from_fn(n, n, |i, j| self.c[(i, j)] / c_scale);
        let c_norm = (n as f64).sqrt();
        // SDPT3's starting point: Y and Z multiples of I, large enough to be well inside;
        // with inequalities Y strictly feasible instead (𝒜(Y) = b/2 at most).
        let xi = if self.inequality {
            0.5 * (0..m)
                .filter(|&e| norms[e] > 0.0)
                .map(|e| self.b[e] / norms[e])
                .fold(f64::INFINITY, f64::min)
        } else {
            (0..m)
                .map(|e| (n as f64) * (1.0 + self.b[e].abs()) / (1.0 + norms[e]))
                .fold((n as f64).sqrt().max(10.0), f64::max)
        };
        let xi = if xi.is_finite() && xi > 0.0 { xi } else { 1.0 };
        let eta = norms
            .iter()
            .copied()
            .fold((n as f64).sqrt().max(10.0).max(c_norm), f64::max);
        let mut yv: Mat<f64> = Mat::<f64>::identity(n, n) * xi;
        let mut zv: Mat<f64> = Mat::<f64>::identity(n, n) * eta;
        let mut dual = vec![if self.inequality { 1.0 } else { 0.0 }; m];
        let mut slack: Vec<f64> = (0..q)
            .map(|e| (self.b[e] - xi * norms[e]).max(0.5 * self.b[e]).max(1e-12))
            .collect();
        let mut status = SdpStatus::MaxIterations;
        let mut iterations = 0;
        let mut report = (0.0, 0.0, 0.0, 0.0, 0.0);
        // The iterate with the smallest worst measure (returned if the solve stops short),
        // and the best progress score Σ log(measure) with the iteration it was seen at.
        let mut best: Option<(f64, Mat<f64>, Mat<f64>, Measures)> = None;
        let mut progress = (f64::INFINITY, 0usize);
        for it in 0..=max_iter {
            crate::progress::check()?;
            let ay = self.apply(yv.as_ref());
            let r_p: Vec<f64> = (0..m)
                .map(|e| self.b[e] - ay[e] - if self.inequality { slack[e] } else { 0.0 })
                .collect();
            let aty = self.adjoint(&dual);
            let r_d = Mat::from_fn(n, n, |i, j| aty[(i, j)] - cm[(i, j)] - zv[(i, j)]);
            let pobj = inner(cm.as_ref(), yv.as_ref());
            let dobj: f64 = self.b.iter().zip(&dual).map(|(b, y)| b * y).sum();
            let comp = inner(yv.as_ref(), zv.as_ref())
                + slack.iter().zip(&dual).map(|(s, y)| s * y).sum::<f64>();
            let rel_p = norm(&r_p) / (1.0 + b_norm);
            let rel_d = inner(r_d.as_ref(), r_d.as_ref()).sqrt() / (1.0 + c_norm);
            let rel_gap = comp / (1.0 + pobj.abs() + dobj.abs());
            report = (pobj, dobj, rel_p, rel_d, rel_gap);
            iterations = it;
            crate::progress::report(|| {
                format!(
                    "{label}: iteration {it}, objective {pobj:.6e}, infeasibility {:.1e}, gap {rel_gap:.1e}",
                    rel_p.max(rel_d)
                )
            });
            if rel_p < tol && rel_d < tol && rel_gap < tol {
                status = SdpStatus::Solved;
                best = None;
                break;
            }
            let worst = rel_p.max(rel_d).max(rel_gap);
            if best.as_ref().is_none_or(|b| worst < b.0) {
                best = Some((worst, yv.clone(), zv.clone(), report));
            }
            // Progress in any of the three measures counts (each only down to a tenth of
            // the tolerance: below, rounding moves it, and a primal infeasibility at
            // 1e-16 once must not hide later progress in the others); none for
            // PATIENCE iterations is a stall.
            let score: f64 = [rel_p, rel_d, rel_gap]
                .iter()
                .map(|v| v.max(0.1 * tol).ln())
                .sum();
            if score < progress.0 - 1e-3 {
                progress = (score, it);
            } else if it - progress.1 >= PATIENCE {
                status = SdpStatus::Stalled;
                break;
            }
            if it == max_iter {
                break;
            }
            let mu = comp / (n + q) as f64;
            let Some(w) = inverse_spd(zv.as_ref()) else {
                status = SdpStatus::Stalled;
                break;
            };
            let d: Vec<f64> = if self.inequality {
                slack.iter().zip(&dual).map(|(s, y)| s / y).collect()
            } else {
                vec![0.0; m]
            };
            let Some(normal) = self.factor(yv.as_ref(), w.as_ref(), &d) else {
                status = SdpStatus::Stalled;
                break;
            };
            // Y R_d Z⁻¹ (symmetrised), the same for predictor and corrector.
            let t = sym(&mul(mul(yv.as_ref(), r_d.as_ref()).as_ref(), w.as_ref()));
            let direction = |smu: f64, corr: Option<(&Mat<f64>, &[f64])>| {
                // G = σμZ⁻¹ − Y − ΔYₐΔZₐZ⁻¹; h = (σμ − s∘y − Δsₐ∘Δyₐ)/y.
                let mut g = Mat::from_fn(n, n, |i, j| smu * w[(i, j)] - yv[(i, j)]);
                if let Some((c, _)) = corr {
                    g -= c;
                }
                let g = sym(&g);
                let h: Vec<f64> = (0..q)
                    .map(|e| {
                        let cl = corr.map_or(0.0, |(_, c)| c[e]);
                        (smu - slack[e] * dual[e] - cl) / dual[e]
                    })
                    .collect();
                let ag = self.apply((&g - &t).as_ref());
                let rhs: Vec<f64> = (0..m)
                    .map(|e| ag[e] + if q > 0 { h[e] } else { 0.0 } - r_p[e])
                    .collect();
                let dy = self.solve(&normal, &rhs);
                let dz = &self.adjoint(&dy) + &r_d;
                let dyv = sym(&(&g - mul(mul(yv.as_ref(), dz.as_ref()).as_ref(), w.as_ref())));
                let ds: Vec<f64> = (0..q).map(|e| h[e] - d[e] * dy[e]).collect();
                (dyv, dz, dy, ds)
            };
            let steps = |dyv: &Mat<f64>, dz: &Mat<f64>, dy: &[f64], ds: &[f64]| {
                let mut ap = max_step_psd(yv.as_ref(), dyv);
                let mut ad = max_step_psd(zv.as_ref(), dz);
                if q > 0 {
                    ap = ap.min(max_step_lp(&slack, ds));
                    ad = ad.min(max_step_lp(&dual, dy));
                }
                (ap, ad)
            };
            // Predictor (σ = 0).
            let (dya, dza, dyva, dsa) = direction(0.0, None);
            let (ap, ad) = steps(&dya, &dza, &dyva, &dsa);
            let (ap, ad) = (ap.min(1.0), ad.min(1.0));
            let y_aff = &yv + &dya * ap;
            let z_aff = &zv + &dza * ad;
            let comp_aff = inner(y_aff.as_ref(), z_aff.as_ref())
                + (0..q)
                    .map(|e| (slack[e] + ap * dsa[e]) * (dual[e] + ad * dyva[e]))
                    .sum::<f64>();
            let sigma = (comp_aff / comp).clamp(0.0, 1.0).powi(3);
            // Corrector: the second-order term of the predictor, σμ centring.
            let corr_mat = mul(mul(dya.as_ref(), dza.as_ref()).as_ref(), w.as_ref());
            let corr_lp: Vec<f64> = (0..q).map(|e| dsa[e] * dyva[e]).collect();
            let (dyv, dz, dy, ds) = direction(sigma * mu, Some((&corr_mat, &corr_lp)));
            let (ap, ad) = steps(&dyv, &dz, &dy, &ds);
            let gamma = 0.95;
            let (ap, ad) = ((gamma * ap).min(1.0), (gamma * ad).min(1.0));
            if ap < 1e-10 && ad < 1e-10 {
                status = SdpStatus::Stalled;
                break;
            }
            yv += &dyv * ap;
            yv = sym(&yv);
            zv += &dz * ad;
            zv = sym(&zv);
            for e in 0..m {
                dual[e] += ad * dy[e];
            }
            for e in 0..q {
                slack[e] += ap * ds[e];
            }
        }
        if let Some((worst, y_best, z_best, r)) = best {
            yv = y_best;
            zv = z_best;
            report = r;
            if worst < REDUCED_TOL {
                status = SdpStatus::AlmostSolved;
            }
        }
        // An equality program's iterate satisfies 𝒜(Y) = b only to the accuracy of the
        // last Newton directions; restored onto 𝒜(Y) = b, Y is feasible, ⟨C, Y⟩ a lower
        // bound on the optimum, and the measures are those of (restored Y, y, Z).
        if status != SdpStatus::Solved || objective_gap(report.0, report.1).abs() > tol {
            if let Some(restored) = self.restore_feasibility(yv.as_ref()) {
                let ay = self.apply(restored.as_ref());
                let r_p: Vec<f64> = (0..m).map(|e| self.b[e] - ay[e]).collect();
                let pobj = inner(cm.as_ref(), restored.as_ref());
                let (_, dobj, _, rel_d, _) = report;
                let rel_p = norm(&r_p) / (1.0 + b_norm);
                let rel_gap = inner(restored.as_ref(), zv.as_ref()).max(0.0)
                    / (1.0 + pobj.abs() + dobj.abs());
                let worst = rel_p.max(rel_d).max(rel_gap);
                crate::progress::report(|| {
                    format!(
                        "{label}: restored feasibility: infeasibility {rel_p:.1e} (was {:.1e}), gap {rel_gap:.1e} (was {:.1e})",
                        report.2, report.4
                    )
                });
                // Kept when it is no worse in every measure, or when it is feasible: its
                // ⟨C, Y⟩ is then a lower bound on the optimum and the dual objective an
                // upper one, while the unrestored iterate's objective lies in no bracket
                // (on the 150-point roll it is 1.0e-5 above the optimum that SDPA-GMP
                // finds, the restored one 3e-9 below it: maths §15).
                let feasible = rel_p <= FEASIBLE && rel_d <= tol;
                if feasible || worst <= report.2.max(report.3).max(report.4) {
                    yv = restored;
                    report = (pobj, dobj, rel_p, rel_d, rel_gap);
                    if rel_p < tol && rel_d < tol && rel_gap < tol {
                        status = SdpStatus::Solved;
                    } else if worst < REDUCED_TOL {
                        status = SdpStatus::AlmostSolved;
                    }
                }
            }
        }
        let (pobj, dobj, rel_p, rel_d, rel_gap) = report;
        // `Solved` promises the objective as well: with large multipliers the three
        // measures can meet `tol` while ⟨C, Y⟩ and bᵀy still differ by more (maths §15).
        if status == SdpStatus::Solved && objective_gap(pobj, dobj).abs() > tol {
            status = SdpStatus::AlmostSolved;
        }
        Ok(SdpSolution {
            y: yv,
            status,
            iterations,
            primal_objective: pobj * c_scale,
            dual_objective: dobj * c_scale,
            primal_infeasibility: rel_p,
            dual_infeasibility: rel_d,
            gap: rel_gap,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(u: &Mat<f64>, b: &[f64], inequality: bool) -> SdpSolution {
        let c = Mat::<f64>::identity(u.nrows(), u.nrows());
        Sdp {
            u: u.as_ref(),
            b,
            c: c.as_ref(),
            inequality,
            refinement: REFINEMENT_STEPS,
        }
        .solve_ipm(1e-9, 100, "test")
        .unwrap()
    }

    /// Asserts |got − want| < tol, printing `got` otherwise.
    fn assert_within(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() < tol, "{got} (want {want} ± {tol})");
    }

    /// max tr Y subject to Y₁₁ = 1, Y₂₂ = 2: 3, whatever Y₁₂.
    #[test]
    fn diagonal_equalities() {
        let u = Mat::from_fn(2, 2, |i, e| if i == e { 1.0 } else { 0.0 });
        let s = solve(&u, &[1.0, 2.0], false);
        assert_eq!(s.status, SdpStatus::Solved);
        assert_within(s.primal_objective, 3.0, 1e-7);
        assert_within(s.dual_objective, 3.0, 1e-7);
    }

    /// The same with inequalities, more constraints than entries of Y (5 > 3, 𝓜
    /// singular, 𝓜 + D not) and a repeated one: Y₁₁ ≤ 1, Y₂₂ ≤ 1, (Y₁₁ + Y₂₂ ± 2Y₁₂) ≤ 3, 4Y₁₁ ≤ 4: tr Y = 2.
    #[test]
    fn inequalities_through_the_entries() {
        let cols = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0]];
        let u = Mat::from_fn(2, 5, |i, e| cols[e][i]);
        let s = solve(&u, &[1.0, 1.0, 3.0, 3.0, 4.0], true);
        assert_eq!(s.status, SdpStatus::Solved);
        assert_within(s.primal_objective, 2.0, 1e-7);
        assert!((s.y[(0, 0)] - 1.0).abs() < 1e-6 && (s.y[(1, 1)] - 1.0).abs() < 1e-6);
        // Through 𝓜 itself (3 ≤ 3 constraints: the dual route) the same answer.
        let u3 = Mat::from_fn(2, 3, |i, e| cols[e][i]);
        let s3 = solve(&u3, &[1.0, 1.0, 3.0], true);
        assert_within(s3.primal_objective, 2.0, 1e-7);
    }

    /// Three points on a path with unit edges, centred (u = basis coordinates of
    /// e₀ − e₁ and e₁ − e₂ in an orthonormal basis of 1^⊥): the path straightens,
    /// K = Gram of (−1, 0, 1), tr K = 2.
    #[test]
    fn a_path_unfolds_into_a_line() {
        let r2 = std::f64::consts::SQRT_2;
        let r6 = 6f64.sqrt();
        // Orthonormal basis of 1^⊥ in R³ (rows = points).
        let v = [
            [1.0 / r2, 1.0 / r6],
            [-1.0 / r2, 1.0 / r6],
            [0.0, -2.0 / r6],
        ];
        let u = Mat::from_fn(2, 2, |i, e| v[e][i] - v[e + 1][i]);
        let s = solve(&u, &[1.0, 1.0], false);
        assert_eq!(s.status, SdpStatus::Solved);
        assert_within(s.primal_objective, 2.0, 1e-7);
    }
}
