//! Landmark MVU (maths §15) [Weinberger, Packer & Saul 2005]: every point is placed as
//! a fixed linear combination of m landmarks, X ≈ Q X_L, with Q from the LLE
//! reconstruction weights: Q = [I; −Φᵤᵤ⁻¹ Φᵤₗ] on the partition of
//! Φ = (I − W)ᵀ(I − W) into non-landmarks u and landmarks l. Then K = Q L Qᵀ and the
//! program is over the m×m matrix L: maximise tr K subject to Σᵢⱼ Kᵢⱼ = 0, L ⪰ 0 and
//! Kᵢᵢ − 2Kᵢⱼ + Kⱼⱼ **≤** dᵢⱼ² for every edge (inequalities: with K confined to the
//! span of Q no K keeps every length exactly).
//!
//! Centring: Q's rows sum to 1 (Φ1 = 0), so Σᵢⱼ Kᵢⱼ = vᵀLv with v = Qᵀ1, and L ⪰ 0
//! makes it L v = 0: L = V Y Vᵀ with V an orthonormal basis of v^⊥ (m×(m−1)), and
//! G = Q V carries everything (K = G Y Gᵀ).
//!
//! Edges outnumber the program's entries (N = 5000, k = 6: ~20000 edges against 780
//! entries of Y at m = 40), and few are active at the optimum. So the program is solved
//! on a working set of edges, then every edge is checked and the violated ones join
//! it (cutting planes), until none is violated by more than [`VIOLATION_TOL`].

use super::problem::{constraints, edge_scale, refuse_unsolved, to_solved, Solved};
use super::sdp::Sdp;
use crate::error::{Error, Result};
use crate::linalg::cholesky::Cholesky;
use crate::methods::lle::{barycentre, singular, standard_m};
use faer::{Mat, MatRef, Par};
use rayon::prelude::*;

/// The largest excess of an edge's length² over dᵢⱼ², relative to the mean dᵢⱼ², that
/// the final embedding may show on an edge outside the working set.
pub(super) const VIOLATION_TOL: f64 = 1e-6;

/// An edge in the working set whose length² is below (1 − this)·dᵢⱼ² leaves it.
const SLACK_TO_DROP: f64 = 0.05;

/// Most rounds of the cutting-plane loop.
const MAX_ROUNDS: usize = 30;

/// `m` landmarks by farthest-point sampling: first the point farthest from the mean,
/// then each time the point farthest from the landmarks so far (deterministic, spread
/// over the whole set, its extremes included: the reconstruction then interpolates).
pub(super) fn farthest_points(x: MatRef<'_, f64>, m: usize) -> Vec<usize> {
    let (n, dim) = (x.nrows(), x.ncols());
    let mean = crate::linalg::center::column_means(x);
    let dist2 = |i: usize, z: &[f64]| -> f64 { (0..dim).map(|c| (x[(i, c)] - z[c]).powi(2)).sum() };
    let argmax = |d: &[f64]| {
        d.iter()
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |b, (i, &v)| if v > b.1 { (i, v) } else { b },
            )
            .0
    };
    let mut nearest: Vec<f64> = (0..n).into_par_iter().map(|i| dist2(i, &mean)).collect();
    let mut chosen = Vec::with_capacity(m);
    let mut first = true;
    while chosen.len() < m.min(n) {
        let next = argmax(&nearest);
        chosen.push(next);
        let z: Vec<f64> = (0..dim).map(|c| x[(next, c)]).collect();
        if first {
            nearest = vec![f64::INFINITY; n];
            first = false;
        }
        nearest.par_iter_mut().enumerate().for_each(|(i, d)| {
            *d = d.min(dist2(i, &z));
        });
        for &c in &chosen {
            nearest[c] = f64::NEG_INFINITY;
        }
    }
    chosen
}

/// Q (N×m): row i reconstructs point i from the landmarks, Q = [I; −Φᵤᵤ⁻¹Φᵤₗ] in the
/// original row order, Φ = (I − W)ᵀ(I − W) from the barycentric weights of every point
/// on its `nbrs`.
fn reconstruction(
    x: MatRef<'_, f64>,
    nbrs: &[Vec<usize>],
    landmarks: &[usize],
    reg: f64,
) -> Result<Mat<f64>> {
    let n = x.nrows();
    let w = (0..n)
        .into_par_iter()
        .map(|i| {
            let z: Vec<f64> = (0..x.ncols()).map(|c| x[(i, c)]).collect();
            barycentre(&z, x, &nbrs[i], reg)
                .map(|b| b.0)
                .ok_or_else(|| singular(i))
        })
        .collect::<Result<Vec<_>>>()?;
    let w_refs: Vec<&[f64]> = w.iter().map(|v| &v[..]).collect();
    let phi = standard_m(nbrs, &w_refs);
    let mut slot = vec![None; n];
    for (l, &i) in landmarks.iter().enumerate() {
        slot[i] = Some(l);
    }
    let free: Vec<usize> = (0..n).filter(|&i| slot[i].is_none()).collect();
    if free.is_empty() {
        return Ok(Mat::from_fn(n, landmarks.len(), |i, l| {
            f64::from(u8::from(slot[i] == Some(l)))
        }));
    }
    let mut pos = vec![usize::MAX; n];
    for (p, &i) in free.iter().enumerate() {
        pos[i] = p;
    }
    // Φᵤᵤ's upper triangle, column by column (rows ascending: the BTreeMap's order,
    // which is the order of `pos` since both follow the original indices).
    let mut col_ptr = vec![0];
    let (mut rows, mut vals) = (Vec::new(), Vec::new());
    for &j in &free {
        for (&i, &v) in &phi[j] {
            let i = i as usize;
            if pos[i] != usize::MAX && pos[i] <= pos[j] {
                rows.push(pos[i]);
                vals.push(v);
            }
        }
        col_ptr.push(rows.len());
    }
    let chol = Cholesky::factor_upper(free.len(), &col_ptr, &rows, &vals, 400_000_000).ok_or_else(
        || {
            Error::Singular(
                "landmark MVU: the reconstruction of the other points from the landmarks \
                     is singular (a part of the neighbourhood graph holds no landmark) or too \
                     large to factor; use more landmarks or neighbours"
                    .into(),
            )
        },
    )?;
    let m = landmarks.len();
    let cols: Vec<Vec<f64>> = (0..m)
        .into_par_iter()
        .map(|l| {
            let mut rhs: Vec<f64> = free
                .iter()
                .map(|&i| -phi[i].get(&(landmarks[l] as u32)).copied().unwrap_or(0.0))
                .collect();
            let mut work = [Vec::new(), Vec::new()];
            chol.solve_in_place(&mut rhs, &mut work);
            rhs
        })
        .collect();
    Ok(Mat::from_fn(n, m, |i, l| match slot[i] {
        Some(s) => f64::from(u8::from(s == l)),
        None => cols[l][pos[i]],
    }))
}

/// An orthonormal basis of v^⊥ (m×(m−1)): the eigenvectors of v vᵀ for eigenvalue 0.
fn complement_basis(v: &[f64]) -> Result<Mat<f64>> {
    let m = v.len();
    let outer = Mat::from_fn(m, m, |i, j| v[i] * v[j]);
    let evd = outer
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::Eigensolver(format!("landmark MVU: centring basis: {e:?}")))?;
    // Ascending: the last eigenvector is v's direction.
    Ok(Mat::from_fn(m, m - 1, |i, c| evd.U()[(i, c)]))
}

fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    crate::linalg::product(a, b, Par::rayon(0))
}

/// A factor F (N×r) with F Fᵀ = G Y Gᵀ, from Y's eigendecomposition.
fn factor(g: MatRef<'_, f64>, y: MatRef<'_, f64>) -> Result<Mat<f64>> {
    let evd = y
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|e| Error::Eigensolver(format!("landmark MVU: eigendecomposition: {e:?}")))?;
    let s = evd.S().column_vector();
    let r = Mat::from_fn(y.nrows(), y.nrows(), |i, c| {
        evd.U()[(i, c)] * s[c].max(0.0).sqrt()
    });
    Ok(product(g, r.as_ref()))
}

/// The first working set: every edge at a landmark, then an even sample of the others
/// up to about as many as Y has entries (the program is then bounded).
fn first_working_set(edges: &[(usize, usize, f64)], landmarks: &[usize], n: usize) -> Vec<bool> {
    let mut is_landmark = vec![false; n];
    landmarks.iter().for_each(|&l| is_landmark[l] = true);
    let mut set: Vec<bool> = edges
        .iter()
        .map(|&(i, j, _)| is_landmark[i] || is_landmark[j])
        .collect();
    let r = landmarks.len().saturating_sub(1);
    let target = (4 * r).max(100);
    let stride = (edges.len() / target.max(1)).max(1);
    for e in (0..edges.len()).step_by(stride) {
        set[e] = true;
    }
    set
}

/// Landmark MVU on the rows of `x`: `nbrs` (each point's k nearest, not itself) for the
/// reconstruction, `edges` (i < j, Euclidean length) of the symmetric graph. Returns the
/// solution and the number of cutting-plane rounds and of edges in the final working
/// set.
#[allow(clippy::too_many_arguments)]
pub(super) fn landmark(
    x: MatRef<'_, f64>,
    nbrs: &[Vec<usize>],
    edges: &[(usize, usize, f64)],
    landmarks: &[usize],
    reg: f64,
    d: usize,
    tol: f64,
    max_iter: usize,
) -> Result<(Solved, usize, usize)> {
    let scale = edge_scale(edges)?;
    crate::progress::report(|| {
        format!(
            "MVU (landmarks): reconstruction from {} landmarks",
            landmarks.len()
        )
    });
    let q = reconstruction(x, nbrs, landmarks, reg)?;
    let v: Vec<f64> = (0..q.ncols())
        .map(|l| (0..q.nrows()).map(|i| q[(i, l)]).sum())
        .collect();
    let g = product(q.as_ref(), complement_basis(&v)?.as_ref());
    let c = product(g.transpose(), g.as_ref());
    let (u_all, b_all) = constraints(g.as_ref(), edges, scale);
    let mut working = first_working_set(edges, landmarks, x.nrows());
    let add_cap = (g.ncols() * (g.ncols() + 1) / 2).max(200);
    let mut dropped = vec![false; edges.len()];
    for round in 1..=MAX_ROUNDS {
        let set: Vec<usize> = (0..edges.len()).filter(|&e| working[e]).collect();
        let u = Mat::from_fn(g.ncols(), set.len(), |r, e| u_all[(r, set[e])]);
        let b: Vec<f64> = set.iter().map(|&e| b_all[e]).collect();
        let sdp = Sdp {
            u: u.as_ref(),
            b: &b,
            c: c.as_ref(),
            inequality: true,
            refinement: super::sdp::REFINEMENT_STEPS_RIDGE,
        };
        let label = format!("MVU (landmarks), round {round}, {} edges", set.len());
        let s = sdp.solve_ipm(tol, max_iter, &label)?;
        refuse_unsolved(&s, max_iter, tol)?;
        // Every edge's excess over its bound, in units of the mean dᵢⱼ².
        let f = factor(g.as_ref(), s.y.as_ref())?;
        let excess: Vec<f64> = edges
            .par_iter()
            .zip(&b_all)
            .map(|(&(i, j, _), &b)| {
                (0..f.ncols())
                    .map(|r| (f[(i, r)] - f[(j, r)]).powi(2))
                    .sum::<f64>()
                    - b
            })
            .collect();
        let mut violated: Vec<usize> = (0..edges.len())
            .filter(|&e| !working[e] && excess[e] > VIOLATION_TOL)
            .collect();
        let max_violation = excess.iter().copied().fold(0.0f64, f64::max);
        let tight = excess.iter().filter(|&&v| v > -1e-3).count();
        crate::progress::report(|| {
            format!(
                "MVU (landmarks): round {round}: {} edges violated outside the working set, \
                 largest excess {max_violation:.1e}, {tight} edges within 1e-3 of their bound",
                violated.len()
            )
        });
        if violated.is_empty() {
            let solved = to_solved(&s, g.as_ref(), scale, d, max_violation)?;
            return Ok((solved, round, set.len()));
        }
        violated.sort_by(|&a, &b| excess[b].total_cmp(&excess[a]));
        for &e in violated.iter().take(add_cap) {
            working[e] = true;
        }
        // Edges far from their bound leave the working set, once each (an edge that
        // comes back stays: the loop cannot cycle).
        for &e in &set {
            if excess[e] < -SLACK_TO_DROP * b_all[e] && !dropped[e] {
                working[e] = false;
                dropped[e] = true;
            }
        }
    }
    Err(Error::Unsolved {
        what: "landmark MVU's semidefinite program",
        status: "max-rounds",
        detail: format!(
            "edges were still violated after {MAX_ROUNDS} rounds of adding them to the \
             working set; use more neighbours or landmarks"
        ),
    })
}
