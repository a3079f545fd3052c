//! The semidefinite program of exact maximum variance unfolding (maths §15), built
//! from the symmetric kNN graph's edges and handed to the interior-point solver (`sdp`).
//!
//! It is posed in a basis of what K may act on: K1 = 0 for K ⪰ 0 is a face of the cone
//! without interior points, and so is K a = 0 for every affine dependency a of a clique
//! of the graph (below); interior-point methods stall there. So K = W Y Wᵀ with W an
//! orthonormal basis of the complement of 1 and those a, Y ⪰ 0 free; tr K = tr Y and
//! the edge constraints stay equalities.
//!
//! Squared edge lengths are divided by their mean before the solve (the solver then
//! sees numbers near 1) and K multiplied back after.

use super::sdp::{Sdp, SdpSolution, SdpStatus};
use crate::error::{Error, Result};
use crate::linalg::eigen::{apply_sign_rule, top_eigen_of_factor};
use faer::{Mat, MatRef};
use rayon::prelude::*;

/// How many eigenvalues of K the model keeps for its info.
pub(super) const SPECTRUM_LEN: usize = 10;

/// A solved program and what the model keeps of it.
pub(super) struct Solved {
    /// N×d, in the data's units.
    pub embedding: Mat<f64>,
    /// The largest eigenvalues of K (up to [`SPECTRUM_LEN`]), data units.
    pub spectrum: Vec<f64>,
    /// tr K (the objective), data units.
    pub trace: f64,
    /// The dual objective Σ yₑ dᵢⱼ², data units (≥ tr K up to the tolerance).
    pub dual_objective: f64,
    pub status: SdpStatus,
    pub iterations: usize,
    pub primal_infeasibility: f64,
    pub dual_infeasibility: f64,
    pub gap: f64,
    /// Largest violation of an edge constraint, relative to the mean squared edge
    /// length: |Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ − dᵢⱼ²| (equalities) or its excess over dᵢⱼ²
    /// (inequalities).
    pub max_violation: f64,
}

/// The edge constraints as uₑ = G[i, :] − G[j, :] (columns of an n×m matrix) and
/// bₑ = dᵢⱼ² / scale.
pub(super) fn constraints(
    g: MatRef<'_, f64>,
    edges: &[(usize, usize, f64)],
    scale: f64,
) -> (Mat<f64>, Vec<f64>) {
    let u = Mat::from_fn(g.ncols(), edges.len(), |r, e| {
        let (i, j, _) = edges[e];
        g[(i, r)] - g[(j, r)]
    });
    let b = edges.iter().map(|&(_, _, d)| d * d / scale).collect();
    (u, b)
}

/// The mean squared edge length (the unit of the solve); an error when every edge has
/// length zero.
pub(super) fn edge_scale(edges: &[(usize, usize, f64)]) -> Result<f64> {
    let scale = edges.iter().map(|e| e.2 * e.2).sum::<f64>() / edges.len().max(1) as f64;
    if scale > 0.0 && scale.is_finite() {
        Ok(scale)
    } else {
        Err(Error::Singular(
            "maximum variance unfolding: every point coincides with its neighbours (all edge \
             lengths are zero)"
                .into(),
        ))
    }
}

pub(super) fn refuse_unsolved(s: &SdpSolution, max_iter: usize, tol: f64) -> Result<()> {
    if matches!(s.status, SdpStatus::Solved | SdpStatus::AlmostSolved) {
        return Ok(());
    }
    // The tolerance that accepts an iterate this accurate: its worst measure, rounded up
    // to a power of ten (the fit then warns with the objective gap, which can be larger);
    // none where that is not a valid tol, below 1.
    let worst = s.primal_infeasibility.max(s.dual_infeasibility).max(s.gap);
    let accepts = 10f64.powf(worst.log10().ceil());
    let tol_hint = (accepts > 0.0 && accepts < 1.0).then_some(accepts);
    let remedy = match (s.status, tol_hint) {
        // More iterations do not help a stall (nearly dependent edge constraints, maths
        // §15): more neighbours make the neighbourhoods rigid, a larger tol accepts it.
        (SdpStatus::Stalled, Some(t)) => format!(
            "the steps stalled, so more iterations do not help; tol = {t:.0e} or more \
             accepts a K this accurate (with a warning giving its objective gap), or use \
             more neighbours"
        ),
        (SdpStatus::Stalled, None) => {
            "the steps stalled, so more iterations do not help; use more neighbours".into()
        }
        (_, Some(t)) => {
            format!("raise max_iter, or tol to {t:.0e} or more, or use more neighbours")
        }
        (_, None) => "raise max_iter, or use more neighbours".into(),
    };
    Err(Error::Unsolved {
        what: "maximum variance unfolding's semidefinite program",
        status: s.status.name(),
        detail: format!(
            "after {} of at most {max_iter} iterations: primal infeasibility {:.1e}, dual \
             infeasibility {:.1e}, relative gap {:.1e} (tolerance {tol:.0e}); {remedy}",
            s.iterations, s.primal_infeasibility, s.dual_infeasibility, s.gap
        ),
    })
}

/// Solves `sdp`, checks the status and turns Y into the embedding; the violation is
/// measured over `all` the edges (`sdp` holds an independent subset).
fn finish(
    sdp: &Sdp<'_>,
    all: &Sdp<'_>,
    g: MatRef<'_, f64>,
    scale: f64,
    d: usize,
    tol: f64,
    max_iter: usize,
) -> Result<Solved> {
    let s = sdp.solve_ipm(tol, max_iter, "MVU (exact)")?;
    refuse_unsolved(&s, max_iter, tol)?;
    let values = all.apply(s.y.as_ref());
    let max_violation = values
        .iter()
        .zip(all.b)
        .map(|(v, b)| {
            if sdp.inequality {
                (v - b).max(0.0)
            } else {
                (v - b).abs()
            }
        })
        .fold(0.0f64, f64::max);
    to_solved(&s, g, scale, d, max_violation)
}

/// The embedding of a solution: K = G Y Gᵀ = F Fᵀ with F = G S Σ^{1/2} (Y = S Σ Sᵀ),
/// the top eigenpairs of K from F.
pub(super) fn to_solved(
    s: &SdpSolution,
    g: MatRef<'_, f64>,
    scale: f64,
    d: usize,
    max_violation: f64,
) -> Result<Solved> {
    let evd = s
        .y
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::Eigensolver(format!("MVU: eigendecomposition of Y failed: {e:?}")))?;
    let n = s.y.nrows();
    let sig = evd.S().column_vector();
    let kept: Vec<usize> = (0..n)
        .rev()
        .filter(|&c| sig[c] > 0.0)
        .take(d.max(SPECTRUM_LEN))
        .collect();
    let sv = Mat::from_fn(n, kept.len(), |r, c| {
        evd.U()[(r, kept[c])] * sig[kept[c]].sqrt()
    });
    let f = crate::linalg::product(g, sv.as_ref(), faer::Par::rayon(0));
    let top = top_eigen_of_factor(f.as_ref(), kept.len().min(SPECTRUM_LEN.max(d)), 1e-14)?;
    let mut vectors = Mat::from_fn(g.nrows(), d, |r, c| {
        if c < top.values.len() {
            top.vectors[(r, c)]
        } else {
            0.0
        }
    });
    apply_sign_rule(vectors.as_mut());
    let embedding = Mat::from_fn(g.nrows(), d, |r, c| {
        let lam = top.values.get(c).copied().unwrap_or(0.0).max(0.0);
        vectors[(r, c)] * (lam * scale).sqrt()
    });
    Ok(Solved {
        embedding,
        spectrum: top
            .values
            .iter()
            .take(SPECTRUM_LEN)
            .map(|v| v * scale)
            .collect(),
        // tr K = tr(Gᵀ G Y) = ⟨C, Y⟩ (C = I for exact MVU, G orthonormal).
        trace: s.primal_objective * scale,
        dual_objective: s.dual_objective * scale,
        status: s.status,
        iterations: s.iterations,
        primal_infeasibility: s.primal_infeasibility,
        dual_infeasibility: s.dual_infeasibility,
        gap: s.gap,
        max_violation,
    })
}

/// Exact MVU on the rows of `x` with the graph's `edges` (i < j, Euclidean length).
pub(super) fn exact(
    x: MatRef<'_, f64>,
    edges: &[(usize, usize, f64)],
    d: usize,
    tol: f64,
    max_iter: usize,
) -> Result<Solved> {
    let scale = edge_scale(edges)?;
    let w = facial_basis(x, edges)?;
    let (u_all, b_all) = constraints(w.as_ref(), edges, scale);
    // Inside the face, the edges of a clique are linearly dependent constraints (their
    // matrices uₑuₑᵀ are): the solver's Newton matrix is then singular and its dual
    // multipliers undetermined. The same feasible set from an independent subset.
    let kept = independent_constraints(u_all.as_ref());
    crate::progress::report(|| {
        format!(
            "MVU (exact): {} of {} edge constraints independent",
            kept.len(),
            edges.len()
        )
    });
    let u = Mat::from_fn(u_all.nrows(), kept.len(), |r, c| u_all[(r, kept[c])]);
    let b: Vec<f64> = kept.iter().map(|&e| b_all[e]).collect();
    let c = Mat::<f64>::identity(w.ncols(), w.ncols());
    let sdp = Sdp {
        u: u.as_ref(),
        b: &b,
        c: c.as_ref(),
        inequality: false,
        refinement: super::sdp::REFINEMENT_STEPS,
    };
    let all = Sdp {
        u: u_all.as_ref(),
        b: &b_all,
        c: c.as_ref(),
        inequality: false,
        refinement: super::sdp::REFINEMENT_STEPS_RIDGE,
    };
    match finish(&sdp, &all, w.as_ref(), scale, d, tol, max_iter) {
        // Measured on a 200-point noisy S-curve, k = 5: the subset stalls at 1e-5 where
        // every edge as a constraint (a singular Newton matrix, factored with a ridge,
        // two refinement steps: the solver as it was before the subset) ends almost
        // solved; other graphs go the other way. The second try runs only after the
        // first failed.
        Err(Error::Unsolved { .. }) if kept.len() < edges.len() => {
            crate::progress::report(|| "MVU (exact): again with every edge constraint".into());
            finish(&all, &all, w.as_ref(), scale, d, tol, max_iter).map_err(landmark_hint)
        }
        other => other.map_err(landmark_hint),
    }
}

/// Exact MVU's unsolved error points to landmark MVU too, whose inequality program has
/// an interior (maths §15).
fn landmark_hint(e: Error) -> Error {
    match e {
        Error::Unsolved {
            what,
            status,
            detail,
        } => Error::Unsolved {
            what,
            status,
            detail: format!("{detail}, or fit on landmarks (n_landmarks)"),
        },
        other => other,
    }
}

/// Relative residual below which a constraint counts as a combination of the others.
const CONSTRAINT_DEPENDENCY_TOL: f64 = 1e-12;

/// An independent subset (in increasing order) of the constraints uₑᵀ Y uₑ, spanning
/// the others: pivoted Cholesky of their Gram matrix ⟨uₑuₑᵀ, u_f u_fᵀ⟩ = (uₑᵀu_f)²,
/// each step taking the constraint with the largest residual, until every residual is
/// below [`CONSTRAINT_DEPENDENCY_TOL`] times the largest diagonal entry. The right-hand
/// sides of the dropped constraints are implied: the data's own Gram matrix satisfies
/// every one (the violation over all edges is measured after the solve).
pub(super) fn independent_constraints(u: MatRef<'_, f64>) -> Vec<usize> {
    let m = u.ncols();
    let ip = crate::linalg::product(u.transpose(), u, faer::Par::rayon(0));
    let gram = |e: usize, f: usize| ip[(e, f)] * ip[(e, f)];
    let mut residual: Vec<f64> = (0..m).map(|e| gram(e, e)).collect();
    let top = residual.iter().copied().fold(0.0, f64::max);
    // Columns of the factor, one per chosen constraint (length m).
    let mut factor: Vec<Vec<f64>> = Vec::new();
    let mut chosen = Vec::new();
    let mut open = vec![true; m];
    while chosen.len() < m {
        let Some(p) = (0..m)
            .filter(|&e| open[e])
            .max_by(|&a, &b| residual[a].total_cmp(&residual[b]).then(b.cmp(&a)))
        else {
            break;
        };
        if residual[p] <= CONSTRAINT_DEPENDENCY_TOL * top || top == 0.0 {
            break;
        }
        let pivot = residual[p].sqrt();
        let col: Vec<f64> = (0..m)
            .into_par_iter()
            .map(|e| {
                if !open[e] || e == p {
                    return if e == p { pivot } else { 0.0 };
                }
                let done: f64 = factor.iter().map(|l| l[e] * l[p]).sum();
                (gram(e, p) - done) / pivot
            })
            .collect();
        for e in 0..m {
            if open[e] && e != p {
                residual[e] -= col[e] * col[e];
            }
        }
        open[p] = false;
        chosen.push(p);
        factor.push(col);
    }
    chosen.sort_unstable();
    chosen
}

/// Relative size below which a singular value of a clique's coordinates counts as zero.
const DEPENDENCY_TOL: f64 = 1e-10;

/// An orthonormal basis W (N×r) of the vectors every feasible K acts on: K = W Ŷ Wᵀ
/// loses no feasible K (facial reduction). Besides 1 (centring), a clique C of the
/// graph fixes every distance among its points, hence their centred Gram matrix; an
/// affine dependency a of its points (Σ aᵢ = 0, Σ aᵢ xᵢ = 0, support C) has
/// aᵀ K a = −½ aᵀ D a = ||Σ aᵢ xᵢ||² = 0, so K a = 0 for every feasible K ⪰ 0. In low
/// dimension (a Swiss roll in R³: every clique of 5 points) these make the program
/// without interior points, where an interior-point method stalls (measured: relative
/// gap 8e-6 at N = 100); removing them restores the interior.
fn facial_basis(x: MatRef<'_, f64>, edges: &[(usize, usize, f64)]) -> Result<Mat<f64>> {
    let n = x.nrows();
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(i, j, dist) in edges {
        adj[i].push((j, dist));
        adj[j].push((i, dist));
    }
    let mut sorted: Vec<Vec<usize>> = adj
        .iter()
        .map(|a| a.iter().map(|e| e.0).collect())
        .collect();
    sorted.iter_mut().for_each(|a| a.sort_unstable());
    let linked = |a: usize, b: usize| sorted[a].binary_search(&b).is_ok();
    // One greedy clique per edge: its two ends, then their common neighbours nearest
    // to the first end first, each joined to all members so far.
    let mut cliques: Vec<Vec<usize>> = edges
        .par_iter()
        .map(|&(i, j, _)| {
            let mut by_dist = adj[i].clone();
            by_dist.sort_by(|a, b| a.1.total_cmp(&b.1));
            let mut c = vec![i, j];
            for (l, _) in by_dist {
                if l != j && c.iter().all(|&m| linked(m, l)) {
                    c.push(l);
                }
            }
            c.sort_unstable();
            c
        })
        .filter(|c| c.len() > x.ncols() + 1)
        .collect();
    cliques.sort();
    cliques.dedup();
    let deps: Vec<Vec<(usize, f64)>> = cliques
        .par_iter()
        .flat_map_iter(|c| dependencies(x, c))
        .collect();
    let mut s = Mat::<f64>::from_fn(n, n, |_, _| 1.0 / n as f64);
    for a in &deps {
        for &(i, ai) in a {
            for &(j, aj) in a {
                s[(i, j)] += ai * aj;
            }
        }
    }
    let evd = s
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::Eigensolver(format!("MVU facial reduction: {e:?}")))?;
    let ev = evd.S().column_vector();
    let top = ev[n - 1].max(1.0);
    let keep: Vec<usize> = (0..n).filter(|&c| ev[c] <= 1e-9 * top).collect();
    crate::progress::report(|| {
        format!(
            "MVU (exact): {} cliques, {} affine dependencies, program size {} of {}",
            cliques.len(),
            deps.len(),
            keep.len(),
            n - 1
        )
    });
    Ok(Mat::from_fn(n, keep.len(), |r, c| evd.U()[(r, keep[c])]))
}

/// The affine dependencies of the points `c` (unit vectors over c): the null space of
/// [Xᶜᵀ; 1ᵀ] beyond what a clique of affinely independent points has.
fn dependencies(x: MatRef<'_, f64>, c: &[usize]) -> Vec<Vec<(usize, f64)>> {
    let k = c.len();
    let dim = x.ncols();
    let mean: Vec<f64> = (0..dim)
        .map(|j| c.iter().map(|&i| x[(i, j)]).sum::<f64>() / k as f64)
        .collect();
    let centred = Mat::from_fn(k, dim, |a, j| x[(c[a], j)] - mean[j]);
    // G = Xc Xcᵀ + 11ᵀ·(scale): its null space is exactly the dependencies.
    let mut g = crate::linalg::product(centred.as_ref(), centred.transpose(), faer::Par::Seq);
    let size = (0..k)
        .map(|a| g[(a, a)])
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    for a in 0..k {
        for b in 0..k {
            g[(a, b)] += size / k as f64;
        }
    }
    let Ok(evd) = g.self_adjoint_eigen(faer::Side::Lower) else {
        return Vec::new();
    };
    let ev = evd.S().column_vector();
    (0..k)
        .filter(|&col| ev[col] <= DEPENDENCY_TOL * size)
        .map(|col| (0..k).map(|a| (c[a], evd.U()[(a, col)])).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In 2×2 symmetric matrices (3 dimensions), e₁e₁ᵀ, e₂e₂ᵀ, vvᵀ (v = e₁ + e₂) are
    /// independent; wwᵀ (w = e₁ − e₂) = 2e₁e₁ᵀ + 2e₂e₂ᵀ − vvᵀ and (2e₁)(2e₁)ᵀ are not.
    #[test]
    fn dependent_rank_one_constraints_are_dropped() {
        let cols = [[1.0, 0.0], [2.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, -1.0]];
        let u = Mat::from_fn(2, 5, |i, e| cols[e][i]);
        let kept = independent_constraints(u.as_ref());
        assert_eq!(kept.len(), 3, "{kept:?}");
        // One of the parallel pair (the longer: largest residual first), and any two
        // of the other three span what the third adds.
        assert!(kept.contains(&1) && !kept.contains(&0), "{kept:?}");
        // Independent ones are all kept.
        let kept = independent_constraints(u.as_ref().subcols(2, 3));
        assert_eq!(kept, vec![0, 1, 2]);
    }
}
