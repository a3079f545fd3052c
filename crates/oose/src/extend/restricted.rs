//! Restricted reconstruction (maths §5, [Trosset 2025] §4–6): place a new object so that the
//! enlarged centred inner-product matrix is reconstructed as well as possible while the
//! training configuration X stays fixed.
//!
//! Everything here works in the coordinates of the fitted eigenbasis, where XᵀX = Λ is
//! diagonal, so a new object is described by its projection ŷ = Λ^{−1/2} Uᵀ b (then
//! Xᵀ b = Λ ŷ), its centred self-similarity β, and ρ = ||b − X ŷ||² (the part of b
//! outside the span of X; it only shifts objective values). With these,
//! f(y) = 2||Xy − b||² + (yᵀy − β)² = 2ρ + 2 (y − ŷ)ᵀ Λ (y − ŷ) + (yᵀy − β)²,
//! a form without cancellation.
//!
//! One object: the stationarity condition (Λ + λI) y = Λ ŷ with λ = ||y||² − β is
//! solved as the monotone root problem of maths §5 (global minimum guaranteed, the hard
//! case detected). Several objects jointly: F(Y) = Σ 2ρ_p + 2(y_p − ŷ_p)ᵀΛ(y_p − ŷ_p)
//! + ||Y Yᵀ − β||²_F, minimised by L-BFGS from several starts.

use crate::error::{Error, Result};
use crate::extend::{Column, Strategy};
use faer::{Mat, MatRef};

/// Applies `strategy` to projections `y` (m×d, replaced in place by the restricted
/// reconstructions when asked) of objects with centred self-similarities `beta` and
/// out-of-span parts `rho`. Returns the per-object diagnostics: `beta_minus_projection`
/// (β − ||ŷ||², what the projection ignores), `objective_projection`, and for
/// restricted reconstruction `objective_restricted`, `lambda` (λ*), `unique` (1 or 0).
pub(crate) fn apply_strategy(
    e: &[f64],
    y: &mut Mat<f64>,
    beta: &[f64],
    rho: &[f64],
    strategy: Strategy,
) -> Result<Vec<Column>> {
    let (m, d) = (y.nrows(), y.ncols());
    let row = |y: &Mat<f64>, i: usize| (0..d).map(|j| y[(i, j)]).collect::<Vec<f64>>();
    let mut ignored = Vec::with_capacity(m);
    let mut obj_proj = Vec::with_capacity(m);
    for i in 0..m {
        let yi = row(y, i);
        ignored.push(beta[i] - yi.iter().map(|v| v * v).sum::<f64>());
        obj_proj.push(objective(e, &yi, &yi, beta[i], rho[i]));
    }
    let mut extra = vec![
        Column {
            name: "beta_minus_projection",
            values: ignored,
        },
        Column {
            name: "objective_projection",
            values: obj_proj,
        },
    ];
    if strategy == Strategy::Restricted {
        if let Some(i) = beta.iter().position(|b| b.is_nan()) {
            return Err(Error::param(
                "strategy",
                format!(
                    "restricted reconstruction needs the self-similarity of every new object; \
                     object {i} has none"
                ),
            ));
        }
        let mut lambda = Vec::with_capacity(m);
        let mut unique = Vec::with_capacity(m);
        let mut obj = Vec::with_capacity(m);
        for i in 0..m {
            let yh = row(y, i);
            let r = restricted(e, &yh, beta[i]);
            obj.push(objective(e, &r.y, &yh, beta[i], rho[i]));
            for (j, v) in r.y.iter().enumerate() {
                y[(i, j)] = *v;
            }
            lambda.push(r.lambda);
            unique.push(if r.unique { 1.0 } else { 0.0 });
        }
        extra.push(Column {
            name: "objective_restricted",
            values: obj,
        });
        extra.push(Column {
            name: "lambda",
            values: lambda,
        });
        extra.push(Column {
            name: "unique",
            values: unique,
        });
    }
    Ok(extra)
}

/// The restricted reconstruction of one new object.
#[derive(Clone, Debug, PartialEq)]
pub struct Restricted {
    /// y* (d coordinates).
    pub y: Vec<f64>,
    /// λ* = ||y*||² − β: negative when the object sticks out of the representation
    /// space (β > ||ŷ||²), 0 when it lies in it, positive when it is "inside".
    pub lambda: f64,
    /// False when the minimiser is not unique (the hard case with t > 0: −y* reflected in
    /// the smallest-eigenvalue direction is another global minimiser; or a repeated
    /// smallest eigenvalue).
    pub unique: bool,
}

/// Objective f(y) of one object (see the module documentation).
pub fn objective(eigenvalues: &[f64], y: &[f64], y_hat: &[f64], beta: f64, rho: f64) -> f64 {
    let mut quad = 0.0;
    let mut norm2 = 0.0;
    for ((&e, &v), &p) in eigenvalues.iter().zip(y).zip(y_hat) {
        quad += e * (v - p) * (v - p);
        norm2 += v * v;
    }
    2.0 * rho.max(0.0) + 2.0 * quad + (norm2 - beta) * (norm2 - beta)
}

/// y(λ)_j = e_j ŷ_j / (e_j + λ): the arc from the projection (λ = 0) to the restricted
/// reconstruction (λ = λ*).
pub fn arc_point(eigenvalues: &[f64], y_hat: &[f64], lambda: f64) -> Vec<f64> {
    eigenvalues
        .iter()
        .zip(y_hat)
        .map(|(&e, &p)| e * p / (e + lambda))
        .collect()
}

/// The global minimiser of f (maths §5). `eigenvalues` are Λ_d (positive, any order).
///
/// ```
/// // Seed 001 Example 1 (inner-product form): PCA of (−1, 0), (1, 0), new (0, 9).
/// let r = oose::extend::restricted::restricted(&[2.0], &[0.0], 81.0);
/// assert!((r.y[0] - 79f64.sqrt()).abs() < 1e-12);
/// assert_eq!(r.lambda, -2.0);
/// assert!(!r.unique);
/// ```
pub fn restricted(eigenvalues: &[f64], y_hat: &[f64], beta: f64) -> Restricted {
    let d = eigenvalues.len();
    let g: Vec<f64> = eigenvalues.iter().zip(y_hat).map(|(e, p)| e * p).collect();
    let e_min = eigenvalues.iter().copied().fold(f64::INFINITY, f64::min);
    let e_max = eigenvalues.iter().copied().fold(0.0f64, f64::max);
    let in_min = |j: usize| eigenvalues[j] <= e_min * (1.0 + 1e-12);
    let g_norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    let g_min = (0..d)
        .filter(|&j| in_min(j))
        .map(|j| g[j] * g[j])
        .sum::<f64>()
        .sqrt();
    let h = |mu: f64| -> f64 {
        g.iter()
            .zip(eigenvalues)
            .map(|(gj, e)| (gj / (e + mu)).powi(2))
            .sum::<f64>()
            - beta
            - mu
    };
    // The hard case: g has (numerically) no component on the smallest eigenvalue's
    // eigenvectors and the other components cannot reach the root before the pole.
    let scale = g_norm + e_max * beta.abs().sqrt();
    if g_min <= 1e-14 * scale {
        let mut y = vec![0.0; d];
        let mut norm2 = 0.0;
        for j in (0..d).filter(|&j| !in_min(j)) {
            y[j] = g[j] / (eigenvalues[j] - e_min);
            norm2 += y[j] * y[j];
        }
        let t2 = beta - e_min - norm2;
        if t2 >= 0.0 {
            let first_min = (0..d).find(|&j| in_min(j)).expect("d ≥ 1");
            y[first_min] = t2.sqrt();
            let repeated = (0..d).filter(|&j| in_min(j)).count() > 1;
            return Restricted {
                y,
                lambda: -e_min,
                unique: t2 == 0.0 && !repeated,
            };
        }
    }
    // h is strictly decreasing and convex on (−e_min, ∞): bracket the root, then Newton
    // steps safeguarded by bisection.
    let mut lo = -e_min;
    let mut step = e_max.max(beta.abs()).max(g_norm.powf(2.0 / 3.0)).max(1.0);
    let mut hi = lo + step;
    while h(hi) > 0.0 {
        lo = hi;
        step *= 2.0;
        hi = -e_min + step;
    }
    let mut mu = hi;
    for _ in 0..300 {
        let hv = h(mu);
        if hv == 0.0 {
            break;
        }
        if hv > 0.0 {
            lo = mu;
        } else {
            hi = mu;
        }
        let dh = -2.0
            * g.iter()
                .zip(eigenvalues)
                .map(|(gj, e)| gj * gj / (e + mu).powi(3))
                .sum::<f64>()
            - 1.0;
        let mut next = mu - hv / dh;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - mu).abs() <= 4.0 * f64::EPSILON * (mu.abs() + e_min) || hi - lo <= 0.0 {
            mu = next;
            break;
        }
        mu = next;
    }
    Restricted {
        y: arc_point(eigenvalues, y_hat, mu),
        lambda: mu,
        unique: true,
    }
}

/// The arc of every row of a batch: `(row, λ, y)` for `steps + 1` points per row, row p
/// from its projection `y[p, ..]` and its centred inner product with itself `beta[p]`.
/// What every inner-product method's `arc` returns.
pub(crate) fn arcs(
    eigenvalues: &[f64],
    y: MatRef<'_, f64>,
    beta: impl Fn(usize) -> f64,
    steps: usize,
) -> Vec<(usize, f64, Vec<f64>)> {
    let mut out = Vec::new();
    for p in 0..y.nrows() {
        let yh: Vec<f64> = (0..y.ncols()).map(|j| y[(p, j)]).collect();
        for (l, v) in arc(eigenvalues, &yh, beta(p), steps) {
            out.push((p, l, v));
        }
    }
    out
}

/// The centred inner products among k new objects, from their mutual (uncentred) inner
/// products `mutual` (k×k, symmetrised here), their mean inner products with the
/// training objects `row_means` and the training grand mean:
/// β_pq = ½(m_pq + m_qp) − m̄_p − m̄_q + m̄ (maths §5). `None`: uncentred (β = the
/// symmetrised `mutual`). What every inner-product method's joint reconstruction needs.
pub(crate) fn centred_mutual(mutual: MatRef<'_, f64>, centring: Option<(&[f64], f64)>) -> Mat<f64> {
    let k = mutual.nrows();
    let sym = |p: usize, q: usize| 0.5 * (mutual[(p, q)] + mutual[(q, p)]);
    match centring {
        Some((mz, grand)) => Mat::from_fn(k, k, |p, q| sym(p, q) - mz[p] - mz[q] + grand),
        None => Mat::from_fn(k, k, sym),
    }
}

/// `steps + 1` points of the arc y(λ), λ = λ*·s/steps, s = 0..steps: from the projection
/// to the restricted reconstruction. In the hard case the last point is y* itself
/// (the arc reaches it only in the limit along the smallest-eigenvalue direction).
pub fn arc(eigenvalues: &[f64], y_hat: &[f64], beta: f64, steps: usize) -> Vec<(f64, Vec<f64>)> {
    let r = restricted(eigenvalues, y_hat, beta);
    let steps = steps.max(1);
    (0..=steps)
        .map(|s| {
            if s == steps {
                (r.lambda, r.y.clone())
            } else {
                let l = r.lambda * s as f64 / steps as f64;
                (l, arc_point(eigenvalues, y_hat, l))
            }
        })
        .collect()
}

/// The result of a joint restricted reconstruction.
#[derive(Clone, Debug)]
pub struct Joint {
    /// k×d coordinates of the new objects.
    pub coordinates: Mat<f64>,
    /// F at the returned coordinates.
    pub objective: f64,
    /// Euclidean norm of ∇F there.
    pub gradient_norm: f64,
    /// F of the per-object restricted solutions and of the projections (the two
    /// deterministic starts), for comparison.
    pub objective_one_by_one: f64,
    /// F at the projections.
    pub objective_projection: f64,
}

/// F(Y) and its gradient for the joint problem (Y row-major k×d in `y`).
fn joint_value_grad(
    e: &[f64],
    y_hat: &[f64],
    beta: &Mat<f64>,
    rho: f64,
    y: &[f64],
    grad: &mut [f64],
) -> f64 {
    let d = e.len();
    let k = beta.nrows();
    let mut f = 2.0 * rho;
    for p in 0..k {
        for j in 0..d {
            let diff = y[p * d + j] - y_hat[p * d + j];
            f += 2.0 * e[j] * diff * diff;
            grad[p * d + j] = 4.0 * e[j] * diff;
        }
    }
    // S = Y Yᵀ − β; F += ||S||²; ∇ += 4 S Y.
    for p in 0..k {
        for q in 0..k {
            let dot: f64 = (0..d).map(|j| y[p * d + j] * y[q * d + j]).sum();
            let s = dot - beta[(p, q)];
            f += s * s;
            for j in 0..d {
                grad[p * d + j] += 4.0 * s * y[q * d + j];
            }
        }
    }
    f
}

/// Joint restricted reconstruction of k objects (maths §5): `y_hat` (k×d) their
/// projections, `beta` (k×k) their centred mutual similarities (symmetric), `rho` their
/// out-of-span parts. Starts from the one-by-one solutions and from the projections,
/// runs L-BFGS from each to a stationary point, keeps the best.
pub fn restricted_joint(
    eigenvalues: &[f64],
    y_hat: &Mat<f64>,
    beta: &Mat<f64>,
    rho: &[f64],
) -> Joint {
    let (k, d) = (y_hat.nrows(), y_hat.ncols());
    let flat = |m: &Mat<f64>| -> Vec<f64> {
        (0..k)
            .flat_map(|p| (0..d).map(move |j| (p, j)))
            .map(|(p, j)| m[(p, j)])
            .collect()
    };
    let yh = flat(y_hat);
    let rho_sum: f64 = rho.iter().map(|r| r.max(0.0)).sum();
    let fg = |y: &[f64], g: &mut [f64]| joint_value_grad(eigenvalues, &yh, beta, rho_sum, y, g);
    let one_by_one: Vec<f64> = (0..k)
        .flat_map(|p| restricted(eigenvalues, &yh[p * d..(p + 1) * d], beta[(p, p)]).y)
        .collect();
    let mut scratch = vec![0.0; k * d];
    let f_one = fg(&one_by_one, &mut scratch);
    let f_proj = fg(&yh, &mut scratch);
    let mut best: Option<(Vec<f64>, f64, f64)> = None;
    for start in [one_by_one, yh.clone()] {
        let (y, f, gn) = lbfgs(&fg, start, 2000, 1e-13);
        if best.as_ref().is_none_or(|b| f < b.1) {
            best = Some((y, f, gn));
        }
    }
    let (y, f, gn) = best.expect("two starts");
    Joint {
        coordinates: Mat::from_fn(k, d, |p, j| y[p * d + j]),
        objective: f,
        gradient_norm: gn,
        objective_one_by_one: f_one,
        objective_projection: f_proj,
    }
}

/// Limited-memory BFGS with a backtracking (Armijo) line search. Returns the point, its
/// value and gradient norm. Never returns a point worse than the start.
pub(crate) fn lbfgs<F>(fg: &F, mut x: Vec<f64>, max_iter: usize, gtol: f64) -> (Vec<f64>, f64, f64)
where
    F: Fn(&[f64], &mut [f64]) -> f64,
{
    let n = x.len();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
    let mut g = vec![0.0; n];
    let mut f = fg(&x, &mut g);
    let mut hist: Vec<(Vec<f64>, Vec<f64>, f64)> = Vec::new();
    let mem = 10;
    let (mut xn, mut gn) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..max_iter {
        let gnorm = dot(&g, &g).sqrt();
        if gnorm <= gtol * f.abs().max(1.0) {
            break;
        }
        // Two-loop recursion: direction = −H g.
        let mut q = g.clone();
        let mut alphas = Vec::with_capacity(hist.len());
        for (s, yv, r) in hist.iter().rev() {
            let a = r * dot(s, &q);
            q.iter_mut().zip(yv).for_each(|(qi, yi)| *qi -= a * yi);
            alphas.push(a);
        }
        let gamma = hist
            .last()
            .map(|(s, yv, _)| dot(s, yv) / dot(yv, yv))
            .unwrap_or(1.0 / gnorm.max(f64::MIN_POSITIVE));
        q.iter_mut().for_each(|v| *v *= gamma);
        for ((s, yv, r), a) in hist.iter().zip(alphas.iter().rev()) {
            let b = r * dot(yv, &q);
            q.iter_mut().zip(s).for_each(|(qi, si)| *qi += (a - b) * si);
        }
        let mut dir: Vec<f64> = q.iter().map(|v| -v).collect();
        let mut slope = dot(&g, &dir);
        if slope >= 0.0 {
            dir = g.iter().map(|v| -v * gamma.abs()).collect();
            slope = dot(&g, &dir);
            hist.clear();
        }
        let mut t = 1.0;
        let mut progressed = false;
        for _ in 0..60 {
            xn.iter_mut()
                .zip(&x)
                .zip(&dir)
                .for_each(|((o, xi), di)| *o = xi + t * di);
            let fnew = fg(&xn, &mut gn);
            if fnew <= f + 1e-4 * t * slope {
                if fnew < f {
                    let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
                    let yv: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| a - b).collect();
                    let sy = dot(&s, &yv);
                    if sy > 1e-300 {
                        hist.push((s, yv, 1.0 / sy));
                        if hist.len() > mem {
                            hist.remove(0);
                        }
                    }
                    std::mem::swap(&mut x, &mut xn);
                    std::mem::swap(&mut g, &mut gn);
                    f = fnew;
                    progressed = true;
                }
                break;
            }
            t *= 0.5;
        }
        if !progressed {
            break;
        }
    }
    let gnorm = dot(&g, &g).sqrt();
    (x, f, gnorm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn seed_001_example_2_hard_case() {
        // Λ = (50, 32), b ⟂ span(X) so ŷ = 0, β = 400.
        let r = restricted(&[50.0, 32.0], &[0.0, 0.0], 400.0);
        assert_eq!(r.lambda, -32.0);
        assert_eq!(r.y[0], 0.0);
        assert!((r.y[1] - 368f64.sqrt()).abs() < 1e-12);
        assert!(!r.unique);
    }

    #[test]
    fn in_span_object_is_its_projection() {
        // β = ||ŷ||² means the object lies in the representation space: λ* = 0.
        let e = [5.0, 2.0, 0.5];
        let yh = [0.3, -1.2, 0.7];
        let beta: f64 = yh.iter().map(|v| v * v).sum();
        let r = restricted(&e, &yh, beta);
        assert!(r.lambda.abs() < 1e-12, "{}", r.lambda);
        for (a, b) in r.y.iter().zip(&yh) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!(r.unique);
    }

    #[test]
    fn stationarity_and_root_accuracy_on_random_instances() {
        let mut rng = Rng::new(11);
        for _ in 0..500 {
            let d = 1 + rng.below(5);
            let e: Vec<f64> = (0..d).map(|_| 0.1 + 10.0 * rng.uniform()).collect();
            let yh: Vec<f64> = (0..d).map(|_| 3.0 * rng.normal()).collect();
            let beta = 20.0 * rng.normal();
            let r = restricted(&e, &yh, beta);
            let n2: f64 = r.y.iter().map(|v| v * v).sum();
            let emin = e.iter().copied().fold(f64::INFINITY, f64::min);
            assert!(r.lambda >= -emin * (1.0 + 1e-12));
            assert!((r.lambda - (n2 - beta)).abs() <= 1e-9 * (1.0 + beta.abs() + n2));
            // The gradient vanishes: (Λ + λ) y = Λ ŷ.
            for j in 0..d {
                let res = (e[j] + r.lambda) * r.y[j] - e[j] * yh[j];
                assert!(res.abs() <= 1e-9 * (1.0 + e[j] * yh[j].abs()), "{res}");
            }
        }
    }

    #[test]
    fn restricted_is_the_global_minimum_on_random_instances() {
        // 200 random instances (some in the hard case), 20 random local minimisations
        // each: none may end below the closed-form minimum (relative 1e-9).
        let mut rng = Rng::new(2024);
        let mut hard = 0;
        for inst in 0..200 {
            let d = 1 + rng.below(4);
            let mut e: Vec<f64> = (0..d).map(|_| 0.05 + 20.0 * rng.uniform()).collect();
            e.sort_by(|a, b| b.partial_cmp(a).unwrap());
            let mut yh: Vec<f64> = (0..d).map(|_| 2.0 * rng.normal()).collect();
            if inst % 5 == 0 {
                yh[d - 1] = 0.0; // no component on the smallest eigenvalue
            }
            let beta = 30.0 * rng.normal() + 10.0;
            let rho = rng.uniform();
            let r = restricted(&e, &yh, beta);
            hard += usize::from(!r.unique);
            let best = objective(&e, &r.y, &yh, beta, rho);
            let fg = |y: &[f64], g: &mut [f64]| {
                let n2: f64 = y.iter().map(|v| v * v).sum();
                for j in 0..d {
                    g[j] = 4.0 * e[j] * (y[j] - yh[j]) + 4.0 * (n2 - beta) * y[j];
                }
                objective(&e, y, &yh, beta, rho)
            };
            for _ in 0..20 {
                let start: Vec<f64> = (0..d).map(|_| 8.0 * rng.normal()).collect();
                let (_, f, _) = lbfgs(&fg, start, 5000, 1e-15);
                assert!(
                    f >= best - 1e-9 * best.abs().max(1.0),
                    "instance {inst}: local {f} < restricted {best}"
                );
            }
        }
        assert!(hard >= 10, "only {hard} hard cases exercised");
    }

    #[test]
    fn lbfgs_minimises_a_quadratic() {
        let fg = |x: &[f64], g: &mut [f64]| {
            g[0] = 2.0 * (x[0] - 1.0);
            g[1] = 20.0 * (x[1] + 2.0);
            (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2)
        };
        let (x, f, gn) = lbfgs(&fg, vec![5.0, 5.0], 200, 1e-14);
        assert!(
            (x[0] - 1.0).abs() < 1e-8 && (x[1] + 2.0).abs() < 1e-8,
            "{x:?}"
        );
        assert!(f < 1e-15 && gn < 1e-7);
    }
}
