//! The theory diagnostics of the RKHS analysis (maths §4, [Wang 2018] §3–4): the residual
//! kernel k₀ = k − k̂ on a batch of new points, the batch discrepancy D with the
//! corrected identity and bound, the exactness criterion, and eigenvalue interlacing.
//!
//! k̂(a, b) = Φ̂(a)ᵀΦ̂(b) is the Nyström kernel of the training set with all numerical-rank
//! components, Φ̂(a) = L⁻¹ k_S(a) from the pivoted Cholesky factor K[S, S] = L Lᵀ
//! (relative tolerance `rank_tolerance`). These functions form (N+M)×(N+M) matrices:
//! they are diagnostics for moderate sizes, not for streaming.

use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::pivoted_cholesky;
use crate::validate;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatRef, Par, Side};

/// The batch discrepancy of maths §4 and its bounds, for training X (N) and batch Z (M).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchDiscrepancy {
    /// D = (N+M)⁻¹ sqrt(Σ_{a,b ∈ X∪Z} |d_k²(a,b) − d_k̂²(a,b)|), from its definition.
    pub discrepancy: f64,
    /// The corrected identity's right side, sqrt(Σ_{z,z'} d²_{k₀}(z,z') + 2N·Tr k₀|_Z)/(N+M):
    /// equal to `discrepancy` up to round-off.
    pub identity: f64,
    /// The corrected bound sqrt(2·Tr k₀|_Z / (N+M)) ≥ D.
    pub bound: f64,
    /// Seed 000's bound sqrt(2M)/(N+M)·sqrt(Tr k₀|_Z), which bounds only the Z×Z part
    /// (D exceeds it whenever N > M and Tr k₀ > 0).
    pub seed_bound: f64,
    /// Tr k₀|_Z = Σ_z residual(z).
    pub trace_residual: f64,
    /// max_z k₀(z, z).
    pub max_residual: f64,
    /// The exactness criterion ([Wang 2018] Thm 10): k₀ vanishes on Z (every k₀(z, z) at
    /// most `rank_tolerance` · max k(x, x)), i.e. extending Z equals retraining.
    pub exact: bool,
}

/// On the rows of A = X ∪ Z: the kernel matrix k, the Nyström kernel k̂ = Φ̂ᵀΦ̂ of the
/// training points' features, and the threshold below which residuals are round-off.
struct Nystrom {
    gram: Mat<f64>,
    khat: Mat<f64>,
    floor: f64,
}

fn nystrom(kernel: &Kernel, x: MatRef<'_, f64>, z: MatRef<'_, f64>, tol: f64) -> Result<Nystrom> {
    let a = stack(x, z)?;
    let a = a.as_ref();
    if *kernel == Kernel::Precomputed {
        return Err(Error::Unsupported(
            "the theory diagnostics evaluate the kernel on X ∪ Z: give a kernel, not `precomputed`"
                .into(),
        ));
    }
    let k = kernel.resolve(x)?;
    let kx = k.gram(x, Par::rayon(0));
    let chol = pivoted_cholesky(kx.as_ref(), tol);
    let r = chol.rank();
    let s = Mat::from_fn(r, x.ncols(), |i, j| x[(chol.pivots[i], j)]);
    let kas = k.block_between(s.as_ref(), a, Par::rayon(0));
    let mut features = kas;
    solve_lower_triangular_in_place(chol.l(), features.as_mut(), Par::rayon(0));
    let gram = k.gram(a, Par::rayon(0));
    let max_diag = (0..x.nrows()).map(|i| kx[(i, i)]).fold(0.0f64, f64::max);
    Ok(Nystrom {
        khat: features.transpose() * &features,
        gram,
        floor: tol * max_diag,
    })
}

fn stack(x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
    validate::training_points("training data", x)?;
    validate::finite_nonempty("new points", z)?;
    validate::columns("new points", z, x.ncols())?;
    let (n, m) = (x.nrows(), z.nrows());
    Ok(Mat::from_fn(n + m, x.ncols(), |i, j| {
        if i < n {
            x[(i, j)]
        } else {
            z[(i - n, j)]
        }
    }))
}

/// The batch discrepancy of the new points `z` against the training points `x` for
/// `kernel` (maths §4, with the correction to [Wang 2018] eqs. 44–45).
///
/// ```
/// use oose::diagnostics::theory::batch_discrepancy;
/// use oose::kernel::Kernel;
/// let all = oose::datasets::swiss_roll(120, 0.1, false, 0).points;
/// let (x, z) = (all.as_ref().subrows(0, 100), all.as_ref().subrows(100, 20));
/// let d = batch_discrepancy(&Kernel::gaussian(4.0), x, z, 1e-12).unwrap();
/// assert!((d.discrepancy - d.identity).abs() <= 1e-8 * d.identity);
/// assert!(d.discrepancy <= d.bound);
/// ```
pub fn batch_discrepancy(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    rank_tolerance: f64,
) -> Result<BatchDiscrepancy> {
    let (n, m) = (x.nrows(), z.nrows());
    let t = n + m;
    let ny = nystrom(kernel, x, z, rank_tolerance)?;
    let (k, khat) = (&ny.gram, &ny.khat);
    // D from its definition: d_k² − d_k̂² over all ordered pairs.
    let mut sum = 0.0;
    for j in 0..t {
        for i in 0..t {
            let dk = k[(i, i)] + k[(j, j)] - 2.0 * k[(i, j)];
            let dh = khat[(i, i)] + khat[(j, j)] - 2.0 * khat[(i, j)];
            sum += (dk - dh).abs();
        }
    }
    let discrepancy = sum.sqrt() / t as f64;
    // k₀ on Z.
    let k0 = Mat::from_fn(m, m, |i, j| k[(n + i, n + j)] - khat[(n + i, n + j)]);
    let trace: f64 = (0..m).map(|i| k0[(i, i)]).sum();
    let total: f64 = (0..m)
        .map(|j| (0..m).map(|i| k0[(i, j)]).sum::<f64>())
        .sum();
    // Σ_{z,z'} d²_{k₀}(z,z') = 2M·Tr k₀ − 2·1ᵀK₀1.
    let zz = 2.0 * m as f64 * trace - 2.0 * total;
    let identity = (zz + 2.0 * n as f64 * trace).max(0.0).sqrt() / t as f64;
    let max_residual = (0..m).map(|i| k0[(i, i)]).fold(f64::NEG_INFINITY, f64::max);
    Ok(BatchDiscrepancy {
        discrepancy,
        identity,
        bound: (2.0 * trace.max(0.0) / t as f64).sqrt(),
        seed_bound: (2.0 * m as f64).sqrt() / t as f64 * trace.max(0.0).sqrt(),
        trace_residual: trace,
        max_residual,
        exact: max_residual <= ny.floor,
    })
}

/// Eigenvalue interlacing of [Wang 2018] Cor. 16 (uncentred form, maths §4).
#[derive(Clone, Debug, PartialEq)]
pub struct Interlacing {
    /// Eigenvalues of k on X ∪ Z, largest first.
    pub lambda: Vec<f64>,
    /// Eigenvalues of k̂ on X ∪ Z, largest first.
    pub gamma: Vec<f64>,
    /// Eigenvalues of K = k on X, largest first.
    pub sigma: Vec<f64>,
    /// ||k₀||₂ on X ∪ Z.
    pub residual_norm: f64,
    /// Largest violation of 0 ≤ λ_j − γ_j ≤ ||k₀||₂ and γ_j ≥ σ_j (≤ 0 when they hold;
    /// compare with round-off, about 1e-12 · λ₁).
    pub worst_violation: f64,
}

/// Computes the three spectra and checks the interlacing inequalities.
pub fn interlacing(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    rank_tolerance: f64,
) -> Result<Interlacing> {
    let n = x.nrows();
    let ny = nystrom(kernel, x, z, rank_tolerance)?;
    let khat = &ny.khat;
    let spectrum = |m: MatRef<'_, f64>| -> Result<Vec<f64>> {
        let e = m
            .self_adjoint_eigenvalues(Side::Lower)
            .map_err(|e| Error::Eigensolver(format!("{e:?}")))?;
        let mut v = e;
        v.sort_by(|p, q| q.total_cmp(p));
        Ok(v)
    };
    let lambda = spectrum(ny.gram.as_ref())?;
    let gamma = spectrum(khat.as_ref())?;
    let sigma = spectrum(ny.gram.as_ref().submatrix(0, 0, n, n))?;
    let k0 = &ny.gram - khat;
    let k0_spec = spectrum(k0.as_ref())?;
    let residual_norm = k0_spec.iter().map(|v| v.abs()).fold(0.0f64, f64::max);
    let mut worst = f64::NEG_INFINITY;
    for j in 0..lambda.len() {
        let diff = lambda[j] - gamma[j];
        worst = worst.max(-diff).max(diff - residual_norm);
        if j < n {
            worst = worst.max(sigma[j] - gamma[j]);
        }
    }
    Ok(Interlacing {
        lambda,
        gamma,
        sigma,
        residual_norm,
        worst_violation: worst,
    })
}
