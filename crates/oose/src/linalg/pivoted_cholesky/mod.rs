//! Rank-revealing pivoted Cholesky factorisation of a symmetric positive semidefinite
//! matrix: K[S, S] = L Lᵀ for a pivot set S chosen greedily (largest remaining
//! diagonal), stopping when every remaining Schur-complement diagonal is at most
//! `tol · max_i K_ii`.
//!
//! Used for the residual kernel (maths §4): k₀(z, z) = k(z, z) − ||L⁻¹ k_S(z)||². With
//! the stopping rule, every training point not in S has residual ≤ tol · max K_ii, and
//! the factor costs O(N r²) for numerical rank r instead of an N×N decomposition.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, MatRef, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// The factor of K[S, S].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PivotedCholesky {
    /// Pivot indices S (in pivot order).
    pub pivots: Vec<usize>,
    /// r×r lower-triangular L with K[S, S] = L Lᵀ, column-major (zero above the
    /// diagonal). Model files from format 8 hold its lower triangle only
    /// ([`packed`]).
    #[serde(serialize_with = "packed::write", deserialize_with = "packed::read")]
    pub l: Vec<f64>,
    /// Largest remaining Schur-complement diagonal when the factorisation stopped.
    pub max_remaining: f64,
}

impl PivotedCholesky {
    /// Rank r = |S|.
    pub fn rank(&self) -> usize {
        self.pivots.len()
    }

    /// L as a matrix view.
    pub fn l(&self) -> MatRef<'_, f64> {
        let r = self.rank();
        MatRef::from_column_major_slice(&self.l, r, r)
    }
}

mod packed;

/// Pivots a panel holds before the trailing matrix is updated by one product.
const PANEL: usize = 128;

/// Factorises the symmetric PSD matrix `k` (its lower triangle is read). Negative
/// remaining diagonals (round-off, or an indefinite `k`) are never chosen as pivots.
///
/// The same greedy pivots as [`factorize`] (largest remaining diagonal, ties to the
/// smallest index), computed right-looking in panels of 128 pivots as LAPACK's `dpstrf`
/// does: a working copy of K is permuted symmetrically as pivots are chosen, each
/// pivot's column is its trailing column less the panel's earlier columns, and the
/// trailing lower triangle is updated once per panel by a matrix product. The
/// N·r²/2 multiply–adds are then made at matrix-product speed instead of one
/// memory-bound matrix–vector product per pivot; the result differs from
/// [`factorize`]'s only by the order of round-off. The rows of a finished panel's
/// columns are permuted once at the end, each column on its own (instead of a strided
/// swap across all of them at every pivot).
pub fn pivoted_cholesky(k: MatRef<'_, f64>, tol: f64) -> PivotedCholesky {
    let n = k.nrows();
    assert_eq!(k.ncols(), n, "pivoted Cholesky of a non-square matrix");
    // Lower triangle of the permuted working matrix; columns < j hold the factor, those
    // of finished panels with their rows as they were when the panel finished.
    let mut a = Mat::<f64>::zeros(n, n);
    for c in 0..n {
        a.col_mut(c)
            .subrows_mut(c, n - c)
            .copy_from(k.col(c).subrows(c, n - c));
    }
    let mut d: Vec<f64> = (0..n).map(|i| k[(i, i)]).collect();
    let mut perm: Vec<usize> = (0..n).collect();
    // swapped[j]: the position pivot j came from.
    let mut swapped: Vec<usize> = Vec::with_capacity(n);
    let max_diag = d.iter().copied().fold(0.0f64, f64::max);
    let stop = tol * max_diag;
    let mut max_remaining = max_diag;
    let mut j = 0;
    'panels: while j < n {
        let j0 = j;
        let end = (j0 + PANEL).min(n);
        while j < end {
            let (mut p, mut best) = (usize::MAX, f64::NEG_INFINITY);
            for i in j..n {
                if d[i] > best || (d[i] == best && p != usize::MAX && perm[i] < perm[p]) {
                    best = d[i];
                    p = i;
                }
            }
            max_remaining = best.max(0.0);
            if p == usize::MAX || best <= stop || best <= 0.0 {
                update_trailing(a.as_mut(), j0, j);
                break 'panels;
            }
            swap_symmetric(a.as_mut(), j0, j, p);
            swapped.push(p);
            d.swap(j, p);
            perm.swap(j, p);
            // Column j below the diagonal: the trailing column (current to the start
            // of the panel) less the panel's columns so far, over the pivot's square
            // root; the remaining diagonals lose its square.
            let (left, mut right) = a.as_mut().split_at_col_mut(j);
            let below = n - j - 1;
            let mut col = right.rb_mut().col_mut(0).subrows_mut(j + 1, below);
            if j > j0 {
                matmul(
                    col.rb_mut().as_mat_mut(),
                    Accum::Add,
                    left.rb().submatrix(j + 1, j0, below, j - j0),
                    left.rb().submatrix(j, j0, 1, j - j0).transpose(),
                    -1.0,
                    Par::Seq,
                );
            }
            let s = best.sqrt();
            for (v, di) in col.iter_mut().zip(&mut d[j + 1..]) {
                *v /= s;
                *di -= *v * *v;
            }
            right[(j, 0)] = s;
            d[j] = 0.0;
            j += 1;
        }
        update_trailing(a.as_mut(), j0, j);
    }
    if j == n {
        max_remaining = 0.0;
    }
    // L: each column's rows, with the swaps made after its panel finished.
    let r = j;
    let mut l = vec![0.0; r * r];
    let a = a.as_ref();
    l.par_chunks_mut(r.max(1)).enumerate().for_each_init(
        Vec::new,
        |rows: &mut Vec<f64>, (c, out)| {
            rows.clear();
            rows.extend(a.col(c).iter().skip(c));
            let done = ((c / PANEL + 1) * PANEL).min(r);
            for (s, &p) in swapped.iter().enumerate().skip(done) {
                rows.swap(s - c, p - c);
            }
            out[c..].copy_from_slice(&rows[..r - c]);
        },
    );
    PivotedCholesky {
        pivots: perm[..r].to_vec(),
        l,
        max_remaining,
    }
}

/// Subtracts the panel's columns j0..j1 from the trailing lower triangle (rows and
/// columns ≥ j1): A₂₂ ← A₂₂ − G Gᵀ.
fn update_trailing(a: MatMut<'_, f64>, j0: usize, j1: usize) {
    let n = a.nrows();
    if j1 == j0 || j1 == n {
        return;
    }
    let (left, right) = a.split_at_col_mut(j1);
    let g = left.rb().submatrix(j1, j0, n - j1, j1 - j0);
    let par = if (n - j1) * (n - j1) * (j1 - j0) > 1 << 22 {
        Par::rayon(0)
    } else {
        Par::Seq
    };
    triangular::matmul(
        right.submatrix_mut(j1, 0, n - j1, n - j1),
        BlockStructure::TriangularLower,
        Accum::Add,
        g,
        BlockStructure::Rectangular,
        g.transpose(),
        BlockStructure::Rectangular,
        -1.0,
        par,
    );
}

/// Swaps positions j < p of the symmetric matrix stored in the lower triangle of `a`
/// (rows and columns both; the panel's factor columns j0..j have their rows swapped,
/// earlier columns are left for the end).
fn swap_symmetric(mut a: MatMut<'_, f64>, j0: usize, j: usize, p: usize) {
    if j == p {
        return;
    }
    let n = a.nrows();
    for c in j0..j {
        let t = a[(j, c)];
        a[(j, c)] = a[(p, c)];
        a[(p, c)] = t;
    }
    let t = a[(j, j)];
    a[(j, j)] = a[(p, p)];
    a[(p, p)] = t;
    for i in j + 1..p {
        let t = a[(i, j)];
        a[(i, j)] = a[(p, i)];
        a[(p, i)] = t;
    }
    for i in p + 1..n {
        let t = a[(i, j)];
        a[(i, j)] = a[(i, p)];
        a[(i, p)] = t;
    }
}

/// A pivoted Cholesky factorisation with its full N×r factor G (K ≈ G Gᵀ, exact on the
/// pivot rows and columns; every entry of K − G Gᵀ is at most the stopping threshold in
/// magnitude when K is PSD).
pub struct Factorization {
    /// The pivots and L = G[S, :].
    pub chol: PivotedCholesky,
    /// G (N×r).
    pub g: Mat<f64>,
    /// False when the factorisation stopped at `max_rank` before reaching the tolerance.
    pub complete: bool,
}

/// Pivoted Cholesky of a PSD matrix given by its diagonal and a column oracle
/// (`column(p, out)` writes K[:, p] into `out`): only the r pivot columns are ever
/// formed, so a kernel matrix of numerical rank r costs N·r kernel values and O(N r²)
/// flops. Stops at the relative tolerance `tol` or after `max_rank` pivots.
pub fn factorize<F>(diag: Vec<f64>, tol: f64, max_rank: usize, mut column: F) -> Factorization
where
    F: FnMut(usize, &mut [f64]),
{
    factorize_ahead(diag, tol, max_rank, 1, |ps, mut out| {
        column(
            ps[0],
            out.rb_mut()
                .col_mut(0)
                .try_as_col_major_mut()
                .unwrap()
                .as_slice_mut(),
        )
    })
}

/// Candidates a block oracle is asked for at once (see [`factorize_blocks`]).
const LOOKAHEAD: usize = 64;

/// [`factorize`] with a block oracle (`columns(ps, out)` writes K[:, ps] into the
/// N × |ps| `out`), for a K whose columns cost less together than one at a time (a
/// kernel: one matrix product over the points instead of one pass a column).
///
/// The pivots are [`factorize`]'s greedy ones, chosen one at a time; what changes is
/// when their columns are computed. At a *look-ahead* the oracle is asked for the w
/// columns C of largest remaining diagonal (ties to the smallest index; the next pivot
/// is the first of them), and the earlier pivots' part is taken from them by one
/// matrix product, K[:, C] − G G[C, :]ᵀ. The pivots that follow take their column from
/// there, less the pivots chosen since; the first pivot outside C, or the (w+1)-th
/// since the look-ahead, starts the next one. The width w starts at 16, doubles after
/// a look-ahead whose w columns were all used and is otherwise twice the number used
/// (between 4 and 64): on wide data the greedy pivots come from the top of the
/// diagonal dozens at a time, in three dimensions a few at a time. Only the order of
/// round-off differs from [`factorize`].
pub fn factorize_blocks<F>(diag: Vec<f64>, tol: f64, max_rank: usize, columns: F) -> Factorization
where
    F: FnMut(&[usize], MatMut<'_, f64>),
{
    factorize_ahead(diag, tol, max_rank, LOOKAHEAD, columns)
}

fn factorize_ahead<F>(
    mut diag: Vec<f64>,
    tol: f64,
    max_rank: usize,
    lookahead: usize,
    mut columns: F,
) -> Factorization
where
    F: FnMut(&[usize], MatMut<'_, f64>),
{
    let n = diag.len();
    let max_diag = diag.iter().copied().fold(0.0f64, f64::max);
    let stop = tol * max_diag;
    let mut chosen = vec![false; n];
    let mut pivots = Vec::new();
    // Columns of the N×r factor, appended as pivots are added (the room doubled when
    // full; nothing zero-filled).
    let mut cap = n.min(max_rank).min(64);
    let mut big = Mat::<f64>::with_capacity(n, cap);
    big.resize_with(n, 0, |_, _| 0.0);
    let mut max_remaining = max_diag;
    let mut complete = true;
    // The look-ahead: candidates C, their columns less the factor's columns before
    // `start`, and each point's column in it (usize::MAX: none).
    let mut cand: Vec<usize> = Vec::new();
    let mut ahead = Mat::<f64>::zeros(0, 0);
    let mut slot = vec![usize::MAX; n];
    let mut start = 0;
    let mut width = lookahead.min(16);
    let mut col = Mat::<f64>::zeros(n, 1);
    for j in 0..n {
        let (mut p, mut best) = (usize::MAX, f64::NEG_INFINITY);
        for (i, &d) in diag.iter().enumerate() {
            if !chosen[i] && d > best {
                best = d;
                p = i;
            }
        }
        max_remaining = best.max(0.0);
        if p == usize::MAX || best <= stop || best <= 0.0 {
            break;
        }
        if j == max_rank {
            complete = false;
            break;
        }
        if j == cap {
            cap = (2 * cap).min(n);
            big.reserve(n, cap);
        }
        if slot[p] == usize::MAX || j - start == width {
            // The next width: doubled after a panel that used every candidate, twice
            // the pivots used otherwise (few hits: candidates wasted).
            if j > 0 {
                let used = j - start;
                width = if used == width { 2 * width } else { 2 * used };
                width = width.clamp(lookahead.min(4), lookahead);
            }
            for &c in &cand {
                slot[c] = usize::MAX;
            }
            let by_diag = |a: &usize, b: &usize| diag[*b].total_cmp(&diag[*a]).then(a.cmp(b));
            cand.clear();
            cand.extend((0..n).filter(|&i| !chosen[i] && diag[i] > stop));
            if cand.len() > width {
                cand.select_nth_unstable_by(width - 1, by_diag);
                cand.truncate(width);
            }
            cand.sort_unstable_by(by_diag);
            debug_assert_eq!(cand[0], p);
            ahead = Mat::zeros(n, cand.len());
            columns(&cand, ahead.as_mut());
            if j > 0 {
                let g_c = Mat::from_fn(cand.len(), j, |a, b| big[(cand[a], b)]);
                matmul(
                    ahead.as_mut(),
                    Accum::Add,
                    big.as_ref(),
                    g_c.transpose(),
                    -1.0,
                    if n * j * cand.len() > 1 << 18 {
                        Par::rayon(0)
                    } else {
                        Par::Seq
                    },
                );
            }
            for (s, &c) in cand.iter().enumerate() {
                slot[c] = s;
            }
            start = j;
        }
        // new column = (K[:, p] − G[:, :j] G[p, :j]ᵀ) / sqrt(d_p), the part before
        // `start` already taken
        col.col_mut(0).copy_from(ahead.col(slot[p]));
        if j > start {
            let since = big.as_ref().subcols(start, j - start);
            matmul(
                col.as_mut(),
                Accum::Add,
                since,
                since.row(p).transpose().as_mat(),
                -1.0,
                Par::Seq,
            );
        }
        let s = best.sqrt();
        let c = col.col_as_slice_mut(0);
        for v in c.iter_mut() {
            *v /= s;
        }
        c[p] = s;
        chosen[p] = true;
        diag[p] = 0.0;
        for (i, d) in diag.iter_mut().enumerate() {
            if !chosen[i] {
                *d -= c[i] * c[i];
            }
        }
        big.resize_with(n, j + 1, |i, _| c[i]);
        pivots.push(p);
    }
    if pivots.len() == n {
        max_remaining = 0.0;
    }
    let r = pivots.len();
    let mut l = vec![0.0; r * r];
    for jj in 0..r {
        for ii in jj..r {
            l[jj * r + ii] = big[(pivots[ii], jj)];
        }
    }
    let g = big;
    Factorization {
        chol: PivotedCholesky {
            pivots,
            l,
            max_remaining,
        },
        g,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn reproduces_low_rank_matrix() {
        let g = Rng::new(5).normal_mat(50, 7);
        let k = &g * g.transpose();
        let f = pivoted_cholesky(k.as_ref(), 1e-12);
        assert_eq!(f.rank(), 7);
        let l = f.l();
        let llt = l * l.transpose();
        for a in 0..7 {
            for b in 0..7 {
                let want = k[(f.pivots[a], f.pivots[b])];
                assert!((llt[(a, b)] - want).abs() < 1e-10 * (1.0 + want.abs()));
            }
            for b in (a + 1)..7 {
                assert_eq!(l[(a, b)], 0.0);
            }
        }
        assert!(f.max_remaining < 1e-10);
    }

    #[test]
    fn factor_reproduces_the_matrix_and_stops_at_max_rank() {
        let h = Rng::new(6).normal_mat(40, 5);
        let k = &h * h.transpose();
        let diag = (0..40).map(|i| k[(i, i)]).collect::<Vec<_>>();
        let oracle = |p: usize, out: &mut [f64]| {
            for (i, o) in out.iter_mut().enumerate() {
                *o = k[(i, p)];
            }
        };
        let f = factorize(diag.clone(), 1e-12, 40, oracle);
        assert!(f.complete);
        let ggt = &f.g * f.g.transpose();
        for i in 0..40 {
            for j in 0..40 {
                assert!((ggt[(i, j)] - k[(i, j)]).abs() < 1e-10 * (1.0 + k[(i, j)].abs()));
            }
        }
        let partial = factorize(diag, 1e-12, 3, oracle);
        assert!(!partial.complete);
        assert_eq!(partial.g.ncols(), 3);
    }

    /// Ranks ending before, on and after panel boundaries, repeated points, ties that
    /// swaps reorder, a full-rank gaussian kernel, an indefinite matrix.
    fn test_matrices() -> Vec<Mat<f64>> {
        let mut rng = Rng::new(11);
        let mut cases: Vec<Mat<f64>> = Vec::new();
        for (n, r) in [
            (150, 7),
            (150, 64),
            (200, 127),
            (200, 128),
            (200, 129),
            (300, 257),
            (280, 280),
        ] {
            let g = rng.normal_mat(n, r);
            cases.push(&g * g.transpose());
        }
        // Repeated points: equal diagonals and equal columns.
        let g = rng.normal_mat(40, 3);
        let rows: Vec<usize> = (0..160).map(|i| i % 40).collect();
        let h = Mat::from_fn(160, 3, |i, c| g[(rows[i], c)]);
        cases.push(&h * h.transpose());
        // Equal diagonals that the swaps reorder: ties broken by the original index.
        cases.push(Mat::from_fn(150, 150, |i, j| {
            if i == j {
                1.0 + ((i * 7) % 3) as f64
            } else {
                0.0
            }
        }));
        // A Gaussian kernel: full rank, fast decay.
        let x = rng.normal_mat(140, 4);
        cases.push(Mat::from_fn(140, 140, |i, j| {
            let d2: f64 = (0..4).map(|c| (x[(i, c)] - x[(j, c)]).powi(2)).sum();
            (-d2 / 8.0).exp()
        }));
        // Indefinite: negative remaining diagonals must never be pivots.
        let g = rng.normal_mat(90, 5);
        let mut m = &g * g.transpose();
        for i in 0..90 {
            m[(i, i)] -= 0.5;
        }
        cases.push(m);
        cases
    }

    /// The panel algorithm chooses [`factorize`]'s pivots (one matrix–vector product a
    /// pivot) and the same factor up to round-off: ranks ending before, on and after
    /// panel boundaries, ties, full rank, an indefinite matrix.
    #[test]
    fn panels_choose_the_greedy_pivots_of_the_column_algorithm() {
        let cases = test_matrices();
        for (c, k) in cases.iter().enumerate() {
            let n = k.nrows();
            let diag = (0..n).map(|i| k[(i, i)]).collect();
            let want = factorize(diag, 1e-12, n, |p, out| {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = k[(i, p)];
                }
            })
            .chol;
            let got = pivoted_cholesky(k.as_ref(), 1e-12);
            assert_eq!(got.pivots, want.pivots, "case {c}: pivots");
            let scale = want.l.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (a, b) in got.l.iter().zip(&want.l) {
                assert!((a - b).abs() <= 1e-9 * scale, "case {c}: {a} vs {b}");
            }
            let rel = (got.max_remaining - want.max_remaining).abs();
            assert!(rel <= 1e-9 * scale * scale, "case {c}: max_remaining");
        }
    }

    /// The trailing products run in parallel on large panels: same bits on one thread
    /// and on two.
    #[test]
    fn panel_factor_has_the_same_bits_on_one_and_two_threads() {
        let g = Rng::new(12).normal_mat(400, 300);
        let k = &g * g.transpose();
        let run = |t: usize| crate::testing::on_threads(t, || pivoted_cholesky(k.as_ref(), 1e-12));
        let (one, two) = (run(1), run(2));
        assert_eq!(one.rank(), 300);
        assert_eq!(one, two);
    }

    /// From format 8 the factor is written as its lower triangle and read back whole;
    /// a count that is no triangular number is an error, not a misshapen factor.
    #[test]
    fn the_factor_is_written_as_its_lower_triangle() {
        let g = Rng::new(13).normal_mat(30, 6);
        let c = pivoted_cholesky((&g * g.transpose()).as_ref(), 1e-12);
        assert_eq!(c.rank(), 6);
        let bytes = postcard::to_allocvec(&c).unwrap();
        // 21 values of 8 bytes for the factor, not 36.
        let square = postcard::to_allocvec(&(&c.pivots, &c.l, c.max_remaining)).unwrap();
        assert_eq!(square.len() - bytes.len(), 15 * 8);
        assert_eq!(postcard::from_bytes::<PivotedCholesky>(&bytes).unwrap(), c);
        let bad = postcard::to_allocvec(&(&c.pivots, vec![1.0; 20], c.max_remaining)).unwrap();
        let e = postcard::from_bytes::<PivotedCholesky>(&bad).unwrap_err();
        assert!(matches!(e, postcard::Error::SerdeDeCustom), "{e:?}");
        // A count whose double overflows (an edited file): an error too.
        for count in [usize::MAX / 2 + 2, usize::MAX] {
            let huge = postcard::to_allocvec(&(Vec::<usize>::new(), count)).unwrap();
            let e = postcard::from_bytes::<PivotedCholesky>(&huge).unwrap_err();
            assert!(
                matches!(e, postcard::Error::SerdeDeCustom),
                "{count}: {e:?}"
            );
        }
    }

    fn copy_columns(k: &Mat<f64>) -> impl FnMut(&[usize], MatMut<'_, f64>) + '_ {
        |ps, mut out| {
            for (a, &p) in ps.iter().enumerate() {
                out.rb_mut().col_mut(a).copy_from(k.col(p));
            }
        }
    }

    /// The look-ahead computes the columns earlier, not other pivots: the column
    /// algorithm's pivots and factor up to round-off, and its stop at `max_rank`.
    #[test]
    fn look_ahead_chooses_the_greedy_pivots_of_the_column_algorithm() {
        for (c, k) in test_matrices().iter().enumerate() {
            let n = k.nrows();
            let diag: Vec<f64> = (0..n).map(|i| k[(i, i)]).collect();
            for max_rank in [n, 70, 5] {
                let want = factorize(diag.clone(), 1e-12, max_rank, |p, out| {
                    out.copy_from_slice(k.col_as_slice(p));
                });
                let got = factorize_blocks(diag.clone(), 1e-12, max_rank, copy_columns(k));
                assert_eq!(got.chol.pivots, want.chol.pivots, "case {c}, {max_rank}");
                assert_eq!(got.complete, want.complete, "case {c}, {max_rank}");
                let scale = want.g.norm_max();
                let err = (&got.g - &want.g).norm_max();
                assert!(err <= 1e-9 * scale, "case {c}, {max_rank}: {err:e}");
            }
        }
    }

    /// Look-ahead products in parallel: the same bits on one thread and on two.
    #[test]
    fn look_ahead_has_the_same_bits_on_one_and_two_threads() {
        let g = Rng::new(13).normal_mat(400, 300);
        let k = &g * g.transpose();
        let diag: Vec<f64> = (0..400).map(|i| k[(i, i)]).collect();
        let run = |t: usize| {
            crate::testing::on_threads(t, || {
                factorize_blocks(diag.clone(), 1e-12, 400, copy_columns(&k))
            })
        };
        let (one, two) = (run(1), run(2));
        assert_eq!(one.chol.rank(), 300);
        assert_eq!(one.chol, two.chol);
        assert_eq!(one.g, two.g);
    }

    #[test]
    fn full_rank_matrix_uses_every_pivot() {
        let n = 20;
        let k = Mat::from_fn(n, n, |i, j| (-((i as f64 - j as f64).abs())).exp());
        let f = pivoted_cholesky(k.as_ref(), 1e-14);
        assert_eq!(f.rank(), n);
        assert_eq!(f.max_remaining, 0.0);
    }
}
