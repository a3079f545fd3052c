//! The local weights and the matrix M of each LLE variant (maths §14): barycentric
//! weights (standard LLE, and every variant's out-of-sample extension), LTSA's tangent
//! alignment, modified LLE's multiple weight vectors and Hessian LLE's Hessian
//! estimator. Each builder returns M row by row; the eigen step is shared.

use crate::error::{Error, Result};
use crate::linalg::eigen::{top_eigen, Solver};
use crate::linalg::small::{cholesky_in_place, cholesky_solve};
use faer::{Mat, MatRef};
use rayon::prelude::*;

/// Barycentric weights of `z` from the rows `nbrs` of `x` (Σ w = 1): the solution of
/// (G + R I) w = 1, normalised, with G the Gram matrix of xⱼ − z and R = reg·tr G (reg
/// when tr G = 0). Also returns e(z), the scale-free reconstruction error. `None` when
/// the regularised G is not positive definite (reg = 0 and degenerate neighbours).
pub(crate) fn barycentre(
    z: &[f64],
    x: MatRef<'_, f64>,
    nbrs: &[usize],
    reg: f64,
) -> Option<(Vec<f64>, f64)> {
    let k = nbrs.len();
    let dim = z.len();
    // G_ab = Σ_c (x_ac − z_c)(x_bc − z_c), each entry the left-to-right sum that
    // `Iterator::sum` makes (from −0.0), carried across blocks of columns so that no
    // k×D copy is made.
    let mut g = vec![-0.0; k * k];
    let mut diff = vec![0.0; k * GRAM_BLOCK.min(dim)];
    for c0 in (0..dim).step_by(GRAM_BLOCK) {
        let w = GRAM_BLOCK.min(dim - c0);
        for (a, &j) in nbrs.iter().enumerate() {
            for c in 0..w {
                diff[a * w + c] = x[(j, c0 + c)] - z[c0 + c];
            }
        }
        let row = |a: usize| &diff[a * w..(a + 1) * w];
        for a in 0..k {
            for b in 0..=a {
                g[a * k + b] = row(a)
                    .iter()
                    .zip(row(b))
                    .fold(g[a * k + b], |acc, (p, q)| acc + p * q);
            }
        }
    }
    for a in 0..k {
        for b in 0..a {
            g[b * k + a] = g[a * k + b];
        }
    }
    let trace: f64 = (0..k).map(|a| g[a * k + a]).sum();
    let r = if trace > 0.0 { reg * trace } else { reg };
    let mut l = g.clone();
    for a in 0..k {
        l[a * k + a] += r;
    }
    // Cholesky of the regularised G (lower triangle), then two triangular solves of 1.
    if !cholesky_in_place(&mut l, k) {
        return None;
    }
    let mut w = cholesky_solve(&l, k, &vec![1.0; k]);
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|v| *v /= sum);
    // ||z − Σ wⱼ xⱼ||² = wᵀ G w (Σ w = 1), over the mean squared neighbour distance.
    let mut err = 0.0;
    for a in 0..k {
        for b in 0..k {
            err += w[a] * g[a * k + b] * w[b];
        }
    }
    let scale = trace / k as f64;
    let e = if scale > 0.0 {
        err.max(0.0) / scale
    } else {
        0.0
    };
    Some((w, e))
}

pub(crate) fn singular(row: usize) -> Error {
    Error::param(
        "reg",
        format!(
            "the local Gram matrix of point {row} is singular after regularisation \
             (duplicate or collinear neighbours); use reg > 0"
        ),
    )
}

/// Rows of a sparse symmetric matrix under construction.
pub(crate) type Rows = Vec<std::collections::BTreeMap<u32, f64>>;

/// Standard LLE: M = (I − W)ᵀ(I − W) = I − W − Wᵀ + WᵀW, row by row.
pub(crate) fn standard_m(idx: &[Vec<usize>], w: &[&[f64]]) -> Rows {
    let n = idx.len();
    let mut m: Rows = vec![Default::default(); n];
    for i in 0..n {
        *m[i].entry(i as u32).or_default() += 1.0;
        for (a, &ja) in idx[i].iter().enumerate() {
            *m[i].entry(ja as u32).or_default() -= w[i][a];
            *m[ja].entry(i as u32).or_default() -= w[i][a];
            for (b, &jb) in idx[i].iter().enumerate() {
                *m[ja].entry(jb as u32).or_default() += w[i][a] * w[i][b];
            }
        }
    }
    m
}

/// The tangent coordinates of a neighbourhood: the top d eigenvectors of Xᵢ Xᵢᵀ (Xᵢ the
/// k neighbours, centred), i.e. its top d left singular vectors (k × d).
fn tangent_coordinates(x: MatRef<'_, f64>, nb: &[usize], d: usize) -> Result<Mat<f64>> {
    let g = local_gram(x, nb, |cols, out| {
        for (o, c) in out.iter_mut().zip(cols) {
            *o = nb.iter().map(|&j| x[(j, c)]).sum::<f64>() / nb.len() as f64;
        }
    });
    Ok(top_eigen(g.as_ref(), d, Solver::Dense)?.vectors)
}

/// Columns per block of a local Gram matrix: no allocation grows with the input
/// dimension D. (A k×D copy per point made glibc's heap keep one freed copy per point:
/// modified LLE of 2000 points in 20000 dimensions took 4.8 GB beyond its 0.32 GB of
/// data.)
const GRAM_BLOCK: usize = 1024;

/// The k×k Gram matrix (X − 1cᵀ)(X − 1cᵀ)ᵀ of the rows `nb` of `x` about the centre c,
/// whose entries over a range of columns `centre(cols, out)` writes: faer's product of
/// each block of `GRAM_BLOCK` columns, summed (up to 1024 columns: one product, the
/// whole difference's).
fn local_gram(
    x: MatRef<'_, f64>,
    nb: &[usize],
    centre: impl Fn(std::ops::Range<usize>, &mut [f64]),
) -> Mat<f64> {
    let (k, dim) = (nb.len(), x.ncols());
    let mut g = Mat::<f64>::zeros(k, k);
    let mut c = vec![0.0; GRAM_BLOCK.min(dim)];
    for c0 in (0..dim).step_by(GRAM_BLOCK) {
        let w = GRAM_BLOCK.min(dim - c0);
        centre(c0..c0 + w, &mut c[..w]);
        let xb = Mat::from_fn(k, w, |a, j| x[(nb[a], c0 + j)] - c[j]);
        let block = &xb * xb.transpose();
        if c0 == 0 {
            g = block;
        } else {
            g += block;
        }
    }
    g
}

/// LTSA: for each point, Gᵢ = [1/√k, its tangent coordinates], and M gains I − GᵢGᵢᵀ on
/// the neighbours' block.
pub(super) fn ltsa_m(x: MatRef<'_, f64>, idx: &[Vec<usize>], d: usize) -> Result<Rows> {
    let blocks: Vec<Mat<f64>> = idx
        .par_iter()
        .map(|nb| {
            let k = nb.len();
            let v = tangent_coordinates(x, nb, d)?;
            let g = Mat::from_fn(k, d + 1, |a, j| {
                if j == 0 {
                    1.0 / (k as f64).sqrt()
                } else {
                    v[(a, j - 1)]
                }
            });
            Ok(Mat::<f64>::identity(k, k) - &g * g.transpose())
        })
        .collect::<Result<_>>()?;
    Ok(assemble(idx.len(), idx, &blocks))
}

/// M = the sum of the k×k blocks on their neighbourhoods' rows and columns.
fn assemble(n: usize, idx: &[Vec<usize>], blocks: &[Mat<f64>]) -> Rows {
    let mut m: Rows = vec![Default::default(); n];
    for (nb, block) in idx.iter().zip(blocks) {
        add_block(&mut m, nb, block);
    }
    m
}

/// Adds a k×k block on the rows and columns `nb` of M.
fn add_block(m: &mut Rows, nb: &[usize], block: &Mat<f64>) {
    for (a, &ja) in nb.iter().enumerate() {
        for (b, &jb) in nb.iter().enumerate() {
            *m[ja].entry(jb as u32).or_default() += block[(a, b)];
        }
    }
}

/// Modified LLE [Zhang & Wang 2006], scikit-learn's construction (maths §14). Per point
/// i, the eigendecomposition Cᵢ = Vᵢ diag(λ) Vᵢᵀ of the Gram matrix of its neighbours
/// relative to it (λ descending; beyond min(D, k) they are zeros); η is the median over
/// points of Σ_{j ≥ d} λⱼ / Σ_{j < d} λⱼ, and sᵢ the number of trailing eigenvalues whose
/// sum stays below η times the rest (at least 1). The sᵢ bottom eigenvectors, turned by
/// the Householder reflection that maps their column sums onto αᵢ·1, plus (1 − αᵢ) times
/// the regularised barycentric weights, are sᵢ weight vectors; M = Σᵢ Ŵᵢ Ŵᵢᵀ with Ŵᵢ
/// those vectors on the neighbours and −1 at i. `tol` is scikit-learn's `modified_tol`
/// (a reflection shorter than it is the identity); `reg` regularises the barycentric
/// weights as in standard LLE (scikit-learn fixes it at 1e-3 here).
pub(super) fn modified_m(
    x: MatRef<'_, f64>,
    idx: &[Vec<usize>],
    d: usize,
    reg: f64,
    tol: f64,
) -> Result<Rows> {
    let n = idx.len();
    let dim = x.ncols();
    let k = idx[0].len();
    let nev = dim.min(k);
    let local: Vec<(Vec<f64>, Mat<f64>)> = idx
        .par_iter()
        .enumerate()
        .map(|(i, nb)| {
            let g = local_gram(x, nb, |cols, out| {
                out.iter_mut().zip(cols).for_each(|(o, c)| *o = x[(i, c)]);
            });
            let e = top_eigen(g.as_ref(), k, Solver::Dense)?;
            Ok((e.values[..nev].to_vec(), e.vectors))
        })
        .collect::<Result<_>>()?;
    let mut ratio = local
        .iter()
        .enumerate()
        .map(|(i, (l, _))| {
            let top: f64 = l[..d].iter().sum();
            if top > 0.0 {
                Ok(l[d..].iter().sum::<f64>() / top)
            } else {
                Err(Error::param(
                    "n_neighbors",
                    format!(
                        "modified LLE: point {i} coincides with all of its {k} neighbours \
                         (duplicates); remove them or use more neighbours"
                    ),
                ))
            }
        })
        .collect::<Result<Vec<f64>>>()?;
    let eta = crate::kernel::bandwidth::median(&mut ratio);
    let blocks: Vec<(Mat<f64>, Vec<f64>, usize)> = local
        .par_iter()
        .map(|(l, v)| {
            // sᵢ: the count of j < nev − 1 with Σ_{>j} λ / Σ_{≤j} λ < η, plus the zeros.
            let total: f64 = l.iter().sum();
            let mut cum = 0.0;
            let mut below = 0;
            for &lj in &l[..nev - 1] {
                cum += lj;
                if total / cum - 1.0 < eta {
                    below += 1;
                }
            }
            let s = (below + k - nev).max(1);
            let vi = v.as_ref().subcols(k - s, s);
            // Regularised barycentric weights from the same decomposition.
            let r = if total > 0.0 { reg * total } else { reg };
            let mut w_reg = vec![0.0; k];
            for j in 0..k {
                let lj = if j < nev { l[j] } else { 0.0 };
                let proj: f64 = (0..k).map(|a| v[(a, j)]).sum::<f64>() / (lj + r);
                (0..k).for_each(|a| w_reg[a] += v[(a, j)] * proj);
            }
            let sum: f64 = w_reg.iter().sum();
            w_reg.iter_mut().for_each(|w| *w /= sum);
            let col_sums: Vec<f64> = (0..s).map(|c| (0..k).map(|a| vi[(a, c)]).sum()).collect();
            let alpha = col_sums.iter().map(|c| c * c).sum::<f64>().sqrt() / (s as f64).sqrt();
            let mut h: Vec<f64> = col_sums.iter().map(|c| alpha - c).collect();
            let norm_h = h.iter().map(|c| c * c).sum::<f64>().sqrt();
            let scale = if norm_h < tol { 0.0 } else { 1.0 / norm_h };
            h.iter_mut().for_each(|c| *c *= scale);
            let vh: Vec<f64> = (0..k)
                .map(|a| (0..s).map(|c| vi[(a, c)] * h[c]).sum())
                .collect();
            let wi = Mat::from_fn(k, s, |a, c| {
                vi[(a, c)] - 2.0 * vh[a] * h[c] + (1.0 - alpha) * w_reg[a]
            });
            let row_sums = (0..k).map(|a| (0..s).map(|c| wi[(a, c)]).sum()).collect();
            (&wi * wi.transpose(), row_sums, s)
        })
        .collect();
    let mut m: Rows = vec![Default::default(); n];
    for (i, (nb, (block, row_sums, s))) in idx.iter().zip(&blocks).enumerate() {
        add_block(&mut m, nb, block);
        for (a, &ja) in nb.iter().enumerate() {
            *m[i].entry(ja as u32).or_default() -= row_sums[a];
            *m[ja].entry(i as u32).or_default() -= row_sums[a];
        }
        *m[i].entry(i as u32).or_default() += *s as f64;
    }
    Ok(m)
}

/// Hessian LLE [Donoho & Grimes 2003] (maths §14): per point, the tangent coordinates U
/// (the top d left singular vectors of the centred neighbourhood), Y = [1, U, the
/// d(d+1)/2 products UₐU_b (a ≤ b)], orthonormalised by QR; the dp = d(d+1)/2 columns
/// after the first d + 1 estimate the Hessian, and M = Σᵢ Hᵢ Hᵢᵀ on the neighbours.
/// A column whose sum is at least `tol` (scikit-learn's `hessian_tol`) is divided by it.
/// scikit-learn keeps every column of the full Q after the first d + 1 instead of the
/// dp Hessian ones, which makes M = Σ (I − GGᵀ), LTSA's matrix (maths §14).
pub(super) fn hessian_m(
    x: MatRef<'_, f64>,
    idx: &[Vec<usize>],
    d: usize,
    tol: f64,
) -> Result<Rows> {
    let dp = d * (d + 1) / 2;
    let blocks: Vec<Mat<f64>> = idx
        .par_iter()
        .map(|nb| {
            let k = nb.len();
            let u = tangent_coordinates(x, nb, d)?;
            let pairs: Vec<(usize, usize)> =
                (0..d).flat_map(|a| (a..d).map(move |b| (a, b))).collect();
            let y = Mat::from_fn(k, 1 + d + dp, |r, c| match c {
                0 => 1.0,
                c if c <= d => u[(r, c - 1)],
                c => {
                    let (a, b) = pairs[c - 1 - d];
                    u[(r, a)] * u[(r, b)]
                }
            });
            let q = y.qr().compute_thin_Q();
            let mut w = q.as_ref().subcols(d + 1, dp).to_owned();
            for c in 0..dp {
                let sum: f64 = (0..k).map(|r| w[(r, c)]).sum();
                if sum.abs() >= tol {
                    (0..k).for_each(|r| w[(r, c)] /= sum);
                }
            }
            Ok(&w * w.transpose())
        })
        .collect::<Result<_>>()?;
    Ok(assemble(idx.len(), idx, &blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(n: usize, dim: usize) -> Mat<f64> {
        Mat::from_fn(n, dim, |i, c| {
            ((i * 31 + c * 17) as f64 * 0.37).sin() + i as f64
        })
    }

    #[test]
    fn barycentre_over_column_blocks_is_the_whole_rows_sum_bitwise() {
        // 2500 columns: three blocks. The reference is the sum over the whole k×D
        // difference that the weights were computed from before the blocks.
        let x = wide(12, 2500);
        let z: Vec<f64> = (0..2500).map(|c| (c as f64 * 0.11).cos()).collect();
        let nb: Vec<usize> = (1..12).collect();
        let (k, dim) = (nb.len(), z.len());
        let diff: Vec<f64> = nb
            .iter()
            .flat_map(|&j| (0..dim).map(|c| x[(j, c)] - z[c]).collect::<Vec<_>>())
            .collect();
        let row = |a: usize| &diff[a * dim..(a + 1) * dim];
        let trace: f64 = (0..k)
            .map(|a| row(a).iter().zip(row(a)).map(|(p, q)| p * q).sum::<f64>())
            .sum();
        let (w, e) = barycentre(&z, x.as_ref(), &nb, 1e-3).unwrap();
        // The weights solve (G + reg·tr G·I) w ∝ 1 for the reference G, to round-off,
        // and the error's scale is its trace: both from the same bits.
        let (w_ref, e_ref) = {
            let mut g = vec![0.0; k * k];
            for a in 0..k {
                for b in 0..k {
                    g[a * k + b] = row(a).iter().zip(row(b)).map(|(p, q)| p * q).sum();
                }
            }
            let mut l = g.clone();
            (0..k).for_each(|a| l[a * k + a] += 1e-3 * trace);
            assert!(cholesky_in_place(&mut l, k));
            let mut w = cholesky_solve(&l, k, &vec![1.0; k]);
            let s: f64 = w.iter().sum();
            w.iter_mut().for_each(|v| *v /= s);
            let err: f64 = (0..k)
                .flat_map(|a| (0..k).map(move |b| (a, b)))
                .map(|(a, b)| w[a] * g[a * k + b] * w[b])
                .sum();
            (w, err.max(0.0) / (trace / k as f64))
        };
        assert_eq!(w, w_ref);
        assert_eq!(e.to_bits(), e_ref.to_bits());
    }

    #[test]
    fn local_gram_over_column_blocks_is_the_whole_product() {
        let x = wide(10, 2500);
        let nb = [0, 2, 4, 6, 8, 9];
        let g = local_gram(x.as_ref(), &nb, |cols, out| {
            out.iter_mut().zip(cols).for_each(|(o, c)| *o = x[(1, c)])
        });
        let xi = Mat::from_fn(nb.len(), 2500, |a, c| x[(nb[a], c)] - x[(1, c)]);
        let full = &xi * xi.transpose();
        let scale = full.norm_max();
        assert!((&g - &full).norm_max() <= 1e-13 * scale);
        // Up to one block it is that product itself.
        let narrow = x.as_ref().subcols(0, 1000);
        let g = local_gram(narrow, &nb, |_, out| out.fill(0.0));
        let xi = Mat::from_fn(nb.len(), 1000, |a, c| narrow[(nb[a], c)]);
        assert_eq!(g, &xi * xi.transpose());
    }
}
