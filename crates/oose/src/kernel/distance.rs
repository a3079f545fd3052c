//! Squared Euclidean distances and inner products by one matrix product (maths §1).
//!
//! ||a − b||² = ||a||² + ||b||² − 2aᵀb, computed with one GEMM and clamped at 0; the
//! diagonal of a self-distance matrix is set to exactly 0. Near pairs, where the formula
//! cancels, are recomputed from coordinate differences (see [`sq_distances`]).

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

/// Squared row norms of `x`.
pub fn row_sq_norms(x: MatRef<'_, f64>) -> Vec<f64> {
    let mut out = vec![0.0; x.nrows()];
    for j in 0..x.ncols() {
        let c = x.col(j);
        for (i, o) in out.iter_mut().enumerate() {
            let v = c[i];
            *o += v * v;
        }
    }
    out
}

/// A·Bᵀ (rows of `a` against rows of `b`).
pub fn inner_products(a: MatRef<'_, f64>, b: MatRef<'_, f64>, par: Par) -> Mat<f64> {
    crate::linalg::product(a, b.transpose(), par)
}

/// Squared distances between the rows of `a` and the rows of `b`, given their squared
/// norms. Clamped at 0.
pub fn sq_distances(
    a: MatRef<'_, f64>,
    a_sq: &[f64],
    b: MatRef<'_, f64>,
    b_sq: &[f64],
    par: Par,
) -> Mat<f64> {
    let mut g = Mat::<f64>::zeros(a.nrows(), b.nrows());
    matmul(g.as_mut(), Accum::Replace, a, b.transpose(), -2.0, par);
    for (j, &bj) in b_sq.iter().enumerate().take(g.ncols()) {
        finish_sq_distance_column(g.col_as_slice_mut(j), a, a_sq, b, j, bj);
    }
    g
}

/// [`sq_distances`] computing the squared norms itself.
///
/// ```
/// use oose::faer::{mat, Par};
/// use oose::kernel::distance::sq_distances_between;
/// let a = mat![[0.0, 0.0], [1.0, 1.0]];
/// let b = mat![[3.0, 4.0]];
/// let d = sq_distances_between(a.as_ref(), b.as_ref(), Par::Seq);
/// assert_eq!((d[(0, 0)], d[(1, 0)]), (25.0, 13.0));
/// ```
pub fn sq_distances_between(a: MatRef<'_, f64>, b: MatRef<'_, f64>, par: Par) -> Mat<f64> {
    sq_distances(a, &row_sq_norms(a), b, &row_sq_norms(b), par)
}

/// Turns column `j` of −2·A·Bᵀ into squared distances ||a_i − b_j||².
///
/// The GEMM formula loses ~eps·scale absolutely; for near pairs that is a large relative
/// error (and sqrt-based kernels turn 1e-14 into 1e-7), so those few entries are
/// recomputed from differences. The first loop is branch-free so that it vectorises;
/// the second runs only when a column has a near pair.
pub(crate) fn finish_sq_distance_column(
    col: &mut [f64],
    a: MatRef<'_, f64>,
    a_sq: &[f64],
    b: MatRef<'_, f64>,
    j: usize,
    bj: f64,
) {
    let mut left = add_norms(col, a_sq, bj);
    if left == 0 {
        return;
    }
    // Near pairs are rare: find them by runs of `RUN` entries, each counted branch-free,
    // and stop at the last one (a loop that tested and branched on every entry took a
    // fifth of the time of the kernel values themselves).
    // The predicate `add_norms` counted (`is_near`), so `left` counts down to 0 exactly.
    const RUN: usize = 32;
    for (k, (run, sq)) in col.chunks_mut(RUN).zip(a_sq.chunks(RUN)).enumerate() {
        let hits = run
            .iter()
            .zip(sq)
            .filter(|(v, ai)| is_near(**v, **ai, bj))
            .count();
        if hits == 0 {
            continue;
        }
        for (i, (v, &ai)) in run.iter_mut().zip(sq).enumerate() {
            if is_near(*v, ai, bj) {
                *v = direct_sq_distance(a, k * RUN + i, b, j);
            }
        }
        left -= hits;
        if left == 0 {
            return;
        }
    }
}

/// col[i] += a_sq[i] + bj; the number of entries then below `REFINE · (a_sq[i] + bj)`.
/// Branch-free, compiled for the widest vectors the CPU has (the same bits on every
/// path: one add and one compare per entry).
fn add_norms(col: &mut [f64], a_sq: &[f64], bj: f64) -> usize {
    crate::linalg::simd::vectorized(
        #[inline(always)]
        || add_norms_body(col, a_sq, bj),
    )
}

#[inline(always)]
fn add_norms_body(col: &mut [f64], a_sq: &[f64], bj: f64) -> usize {
    let mut near = 0usize;
    for (v, &ai) in col.iter_mut().zip(a_sq) {
        let d2 = *v + (ai + bj);
        near += usize::from(is_near(d2, ai, bj));
        *v = d2;
    }
    near
}

/// Entries with d² below `REFINE · (||a||² + ||b||²)` are recomputed directly: the GEMM
/// formula's relative error there would exceed ~eps/REFINE ≈ 2e-13.
const REFINE: f64 = 1e-3;

/// Whether the squared distance `d2` of rows with squared norms `ai` and `bj` is near
/// enough to be recomputed directly (below `REFINE · (ai + bj)`).
#[inline(always)]
fn is_near(d2: f64, ai: f64, bj: f64) -> bool {
    d2 < REFINE * (ai + bj)
}

fn direct_sq_distance(a: MatRef<'_, f64>, i: usize, b: MatRef<'_, f64>, j: usize) -> f64 {
    (0..a.ncols())
        .map(|k| {
            let t = a[(i, k)] - b[(j, k)];
            t * t
        })
        .sum()
}

/// Squared distances of the points whose coordinates are the columns of `a_cols`
/// (column k: coordinate k of every point, contiguous) to the point `b`, written into
/// `out`, as sums of squared differences in coordinate order. For small widths, where
/// this costs fewer operations than the product form of [`sq_distances`] and needs no
/// near-pair correction (a difference cancels nothing). The same bits on every path.
pub(crate) fn sq_distances_by_differences(out: &mut [f64], a_cols: &[&[f64]], b: &[f64]) {
    crate::linalg::simd::vectorized(
        #[inline(always)]
        || sq_distances_by_differences_body(out, a_cols, b),
    )
}

#[inline(always)]
fn sq_distances_by_differences_body(out: &mut [f64], a_cols: &[&[f64]], b: &[f64]) {
    out.fill(0.0);
    for (col, &bk) in a_cols.iter().zip(b) {
        for (v, &x) in out.iter_mut().zip(col.iter()) {
            let t = x - bk;
            *v += t * t;
        }
    }
}

/// Queries per register tile of [`sq_distances_in_order`].
const TILE_ROWS: usize = 4;
/// Points per register tile (one AVX-512 vector, two AVX2 vectors).
const TILE_COLS: usize = 8;
/// Coordinates per pass over a tile (a packed panel of 8 points: 16 KiB, in L1).
const TILE_DEPTH: usize = 256;

/// Squared distances between every row of `a` and every row of `b` (row-major, `dim`
/// coordinates each) into `out` (row-major, `a`'s rows × `b`'s rows), each summed in
/// coordinate order from +0 — Σ_k (a_k − b_k)², the bits of the plain loop
/// (`neighbors::balls::sq_dist`) — but many at a time: a tile of 4 × 8 pairs keeps its
/// 32 sums in registers over 256 coordinates of packed panels, compiled for the widest
/// vectors the CPU has (a product and a sum per term, never fused, so the bits are the
/// same on every path). Diffusion-maps fits on 784 and 20000 coordinates ran 8–9× as
/// fast as with the plain loop, which waits on each sum in turn. Callers keep `b` to a
/// few hundred rows so that its panels stay in cache. `pack` is scratch space.
pub(crate) fn sq_distances_in_order(
    a: &[f64],
    b: &[f64],
    dim: usize,
    out: &mut [f64],
    pack: &mut Vec<f64>,
) {
    crate::linalg::simd::vectorized(
        #[inline(always)]
        || in_order_passes(a, b, dim, out, pack),
    )
}

/// Rows of `b` per block of [`sq_distance_blocks`].
pub(crate) const DISTANCE_BLOCK: usize = 256;

/// [`sq_distances_in_order`] from the rows of `a` (a few dozen) to all rows of `b`,
/// [`DISTANCE_BLOCK`] rows of `b` at a time: `f(r, j0, d)` gets row r of `a`'s squared
/// distances to rows `j0..j0 + d.len()` of `b`, blocks in order of `b`, rows of `a` in
/// order within a block. `tile` and `pack` are scratch space.
pub(crate) fn sq_distance_blocks(
    a: &[f64],
    b: &[f64],
    dim: usize,
    tile: &mut Vec<f64>,
    pack: &mut Vec<f64>,
    mut f: impl FnMut(usize, usize, &[f64]),
) {
    if dim == 0 {
        return;
    }
    let m = a.len() / dim;
    for (c, block) in b.chunks(DISTANCE_BLOCK * dim).enumerate() {
        let len = block.len() / dim;
        tile.resize(m * len, 0.0);
        sq_distances_in_order(a, block, dim, tile, pack);
        for (r, row) in tile.chunks_exact(len).enumerate() {
            f(r, c * DISTANCE_BLOCK, row);
        }
    }
}

/// The body of [`sq_distances_in_order`], inlined into the caller (and so compiled for
/// the vector width it runs with).
#[inline(always)]
fn in_order_passes(a: &[f64], b: &[f64], dim: usize, out: &mut [f64], pack: &mut Vec<f64>) {
    let m = a.len().checked_div(dim).unwrap_or(0);
    let n = b.len().checked_div(dim).unwrap_or(0);
    assert_eq!(out.len(), m * n, "one output per pair");
    out.fill(0.0);
    if m == 0 || n == 0 {
        return;
    }
    let (mt, nt) = (m.div_ceil(TILE_ROWS), n.div_ceil(TILE_COLS));
    let depth = dim.min(TILE_DEPTH);
    pack.clear();
    pack.resize((mt * TILE_ROWS + nt * TILE_COLS) * depth, 0.0);
    let (qp, pp) = pack.split_at_mut(mt * TILE_ROWS * depth);
    for k0 in (0..dim).step_by(TILE_DEPTH) {
        let kc = TILE_DEPTH.min(dim - k0);
        // Panels: coordinate-major blocks of 4 queries / 8 points, padded with zeros
        // (the padded pairs are computed and dropped).
        pack_panels(a, m, dim, k0, kc, TILE_ROWS, qp);
        pack_panels(b, n, dim, k0, kc, TILE_COLS, pp);
        tile_pass(qp, pp, depth, kc, m, n, out);
    }
}

/// One pass of [`sq_distances_in_order`] over `kc` packed coordinates: every 4 × 8 tile
/// of `out` read, summed on in registers, and written back.
#[inline(always)]
fn tile_pass(qp: &[f64], pp: &[f64], depth: usize, kc: usize, m: usize, n: usize, out: &mut [f64]) {
    for (tj, ppanel) in pp.chunks_exact(TILE_COLS * depth).enumerate() {
        let ppanel = &ppanel[..TILE_COLS * kc];
        for (ti, qpanel) in qp.chunks_exact(TILE_ROWS * depth).enumerate() {
            let qpanel = &qpanel[..TILE_ROWS * kc];
            let (i0, j0) = (ti * TILE_ROWS, tj * TILE_COLS);
            let rows = TILE_ROWS.min(m - i0);
            let cols = TILE_COLS.min(n - j0);
            let mut acc = [[0.0f64; TILE_COLS]; TILE_ROWS];
            for (r, acc) in acc.iter_mut().enumerate().take(rows) {
                let o = (i0 + r) * n + j0;
                acc[..cols].copy_from_slice(&out[o..o + cols]);
            }
            tile_sums(qpanel, ppanel, &mut acc);
            for (r, acc) in acc.iter().enumerate().take(rows) {
                let o = (i0 + r) * n + j0;
                out[o..o + cols].copy_from_slice(&acc[..cols]);
            }
        }
    }
}

/// Copies coordinates `k0..k0 + kc` of the `rows` rows of `x` into panels of `width`
/// rows, each coordinate-major (`kc` × `width`, then the next panel at a stride of
/// `TILE_DEPTH` × `width`); rows past the end are zeros.
#[inline(always)]
fn pack_panels(
    x: &[f64],
    rows: usize,
    dim: usize,
    k0: usize,
    kc: usize,
    width: usize,
    out: &mut [f64],
) {
    let stride = width * dim.min(TILE_DEPTH);
    for (t, panel) in out.chunks_exact_mut(stride).enumerate() {
        for c in 0..width {
            let i = t * width + c;
            if i < rows {
                let row = &x[i * dim + k0..i * dim + k0 + kc];
                for (kk, &v) in row.iter().enumerate() {
                    panel[kk * width + c] = v;
                }
            } else {
                for kk in 0..kc {
                    panel[kk * width + c] = 0.0;
                }
            }
        }
    }
}

/// acc[r][c] += (p_kc − q_kr)² for each coordinate k of the panels in turn. (Written
/// on fixed-size arrays, with the sums in a local copy, so that the compiler keeps
/// them in vector registers.)
#[inline(always)]
fn tile_sums(qpanel: &[f64], ppanel: &[f64], acc: &mut [[f64; TILE_COLS]; TILE_ROWS]) {
    let mut sums = *acc;
    for (q, p) in qpanel
        .chunks_exact(TILE_ROWS)
        .zip(ppanel.chunks_exact(TILE_COLS))
    {
        let q: &[f64; TILE_ROWS] = q.try_into().expect("a panel row of 4");
        let p: &[f64; TILE_COLS] = p.try_into().expect("a panel row of 8");
        for r in 0..TILE_ROWS {
            for c in 0..TILE_COLS {
                let t = p[c] - q[r];
                sums[r][c] += t * t;
            }
        }
    }
    *acc = sums;
}

/// Squared distances among the rows of `x`: symmetric, zero diagonal, clamped at 0.
pub fn self_sq_distances(x: MatRef<'_, f64>, par: Par) -> Mat<f64> {
    let sq = row_sq_norms(x);
    let mut d = sq_distances(x, &sq, x, &sq, par);
    symmetrize(&mut d);
    for i in 0..d.nrows() {
        d[(i, i)] = 0.0;
    }
    d
}

/// Replaces `m` by (m + mᵀ)/2 so that both triangles agree bit for bit.
pub fn symmetrize(m: &mut Mat<f64>) {
    let n = m.nrows();
    for j in 0..n {
        for i in (j + 1)..n {
            let v = 0.5 * (m[(i, j)] + m[(j, i)]);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distances by differences: each entry is (x₀ − b₀)² + (x₁ − b₁)² + … summed in
    /// coordinate order, bit for bit, on every vector path (remainders included).
    #[test]
    fn distances_by_differences_sum_the_squares_in_order_on_every_path() {
        let cols: Vec<Vec<f64>> = (0..5)
            .map(|k| {
                (0..1001)
                    .map(|i| ((i * 7 + k * 3) as f64 * 0.37).sin() * 4.0)
                    .collect()
            })
            .collect();
        let b = [0.3, -1.2, 2.5, 0.0, -0.7];
        for width in [1, 3, 5] {
            let a: Vec<&[f64]> = cols[..width].iter().map(|c| c.as_slice()).collect();
            let want: Vec<u64> = (0..1001)
                .map(|i| {
                    let mut s = 0.0;
                    for (k, &bk) in b[..width].iter().enumerate() {
                        let t = a[k][i] - bk;
                        s += t * t;
                    }
                    s.to_bits()
                })
                .collect();
            for (path, got) in crate::linalg::simd::each_path(
                #[inline(always)]
                || {
                    let mut out = vec![f64::NAN; 1001];
                    sq_distances_by_differences_body(&mut out, &a, &b[..width]);
                    out
                },
            ) {
                let bits: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
                assert_eq!(bits, want, "{path}, width {width}");
            }
            let mut out = vec![f64::NAN; 1001];
            sq_distances_by_differences(&mut out, &a, &b[..width]);
            assert!(out.iter().zip(&want).all(|(v, w)| v.to_bits() == *w));
        }
    }

    /// The tiled distances are the plain loop's bits (Σ (a_k − b_k)² in coordinate
    /// order from +0) on every vector path, for row counts and widths off the tile
    /// sizes (remainders of 4 queries, 8 points and 256 coordinates), magnitudes from
    /// 1e-3 to 1e3 and coinciding rows.
    #[test]
    fn tiled_distances_are_the_plain_loops_bits_on_every_path() {
        let value = |i: usize, k: usize| {
            let e = ((i * 5 + k) % 7) as i32 - 3;
            ((i * 31 + k * 17) as f64 * 0.61).sin() * 10f64.powi(e)
        };
        for (m, n, dim) in [
            (1, 1, 1),
            (7, 13, 3),
            (5, 9, 256),
            (9, 17, 300),
            (4, 8, 513),
        ] {
            let a: Vec<f64> = (0..m * dim).map(|t| value(t / dim, t % dim)).collect();
            let mut b: Vec<f64> = (0..n * dim)
                .map(|t| value(t / dim + 1000, t % dim))
                .collect();
            b[..dim].copy_from_slice(&a[..dim]); // a pair at distance exactly 0
            let want: Vec<u64> = (0..m * n)
                .map(|t| {
                    let (i, j) = (t / n, t % n);
                    crate::neighbors::balls::sq_dist(
                        &a[i * dim..(i + 1) * dim],
                        &b[j * dim..(j + 1) * dim],
                    )
                    .to_bits()
                })
                .collect();
            assert_eq!(want[0], 0);
            for (path, got) in crate::linalg::simd::each_path(
                #[inline(always)]
                || {
                    let mut out = vec![f64::NAN; m * n];
                    in_order_passes(&a, &b, dim, &mut out, &mut Vec::new());
                    out
                },
            ) {
                let bits: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
                assert_eq!(bits, want, "{path}, {m}×{n}×{dim}");
            }
            let mut out = vec![f64::NAN; m * n];
            sq_distances_in_order(&a, &b, dim, &mut out, &mut vec![1.0; 3]);
            assert!(out.iter().zip(&want).all(|(v, w)| v.to_bits() == *w));
        }
        let mut out = Vec::new();
        sq_distances_in_order(&[], &[1.0], 1, &mut out, &mut Vec::new());
        assert!(out.is_empty());
    }

    /// The distance pass gives the plain build's bits and near count on every vector
    /// path the CPU has (AVX2, AVX-512), remainders included (1001 entries, some near).
    #[test]
    fn every_path_of_the_distance_pass_gives_the_plain_bits() {
        let a_sq: Vec<f64> = (0..1001)
            .map(|i| 1.0 + (i as f64 * 0.37).sin().abs())
            .collect();
        let bj = 2.5;
        // −2aᵀb: most entries far, every 97th within REFINE of cancelling.
        let col: Vec<f64> = (0..1001)
            .map(|i| {
                let s = a_sq[i] + bj;
                if i % 97 == 0 {
                    -s * (1.0 - 1e-5)
                } else {
                    -s * (0.3 + 0.5 * (i as f64 * 0.11).cos().abs())
                }
            })
            .collect();
        let paths = crate::linalg::simd::each_path(
            #[inline(always)]
            || {
                let mut v = col.clone();
                let near = add_norms_body(&mut v, &a_sq, bj);
                (v, near)
            },
        );
        let (_, (want, near)) = &paths[0];
        assert_eq!(*near, 11);
        let mut v = col.clone();
        assert_eq!(add_norms(&mut v, &a_sq, bj), *near, "dispatched");
        assert!(v.iter().zip(want).all(|(x, y)| x.to_bits() == y.to_bits()));
        for (path, (v, n)) in &paths {
            assert_eq!(n, near, "{path}");
            for (i, (x, y)) in v.iter().zip(want).enumerate() {
                assert_eq!(x.to_bits(), y.to_bits(), "{path}, entry {i}");
            }
        }
    }

    #[test]
    fn matches_direct_formula_and_is_clamped() {
        let a = Mat::from_fn(7, 3, |i, j| ((i * 3 + j) as f64).sin() * 10.0);
        let b = Mat::from_fn(5, 3, |i, j| ((i + 2 * j) as f64).cos());
        let d = sq_distances_between(a.as_ref(), b.as_ref(), Par::Seq);
        for i in 0..7 {
            for j in 0..5 {
                let direct: f64 = (0..3).map(|k| (a[(i, k)] - b[(j, k)]).powi(2)).sum();
                assert!((d[(i, j)] - direct).abs() <= 1e-12 * (1.0 + direct));
            }
        }
        let s = self_sq_distances(a.as_ref(), Par::Seq);
        for i in 0..7 {
            assert_eq!(s[(i, i)], 0.0);
            for j in 0..7 {
                assert!(s[(i, j)] >= 0.0);
                assert_eq!(s[(i, j)], s[(j, i)]);
            }
        }
    }

    #[test]
    fn near_pairs_far_from_origin_are_accurate() {
        // 2⁻¹⁴ is exact in binary, so the true distance is exactly 3·2⁻²⁸.
        let h = 2f64.powi(-14);
        let a = Mat::from_fn(2, 3, |i, j| 1e3 + j as f64 + i as f64 * h);
        let s = self_sq_distances(a.as_ref(), Par::Seq);
        let want = 3.0 * h * h;
        assert_eq!(s[(0, 1)], want);
        let d = sq_distances_between(a.as_ref(), a.as_ref(), Par::Seq);
        assert_eq!(d[(0, 0)], 0.0);
    }

    /// Near pairs anywhere in a long column (the first entry, inside and at the ends of
    /// the runs the refinement scans, the last entry of a partial last run) are all
    /// recomputed from differences; the far ones keep the GEMM formula's value.
    #[test]
    fn near_pairs_anywhere_in_a_column_are_refined() {
        let h = 2f64.powi(-14);
        let n = 1000;
        let near = [0usize, 31, 32, 500, 501, 959, 999];
        let b = Mat::from_fn(1, 3, |_, j| 1e3 + j as f64);
        let a = Mat::from_fn(n, 3, |i, j| {
            if near.contains(&i) {
                b[(0, j)] + h * (1 + i % 3) as f64
            } else {
                b[(0, j)] + 1.0 + (i as f64 * 0.37).sin()
            }
        });
        let d = sq_distances_between(a.as_ref(), b.as_ref(), Par::Seq);
        for i in 0..n {
            let direct = direct_sq_distance(a.as_ref(), i, b.as_ref(), 0);
            if near.contains(&i) {
                let k = (1 + i % 3) as f64;
                assert_eq!(d[(i, 0)], 3.0 * (k * h) * (k * h), "row {i}");
                assert_eq!(d[(i, 0)], direct);
            } else {
                assert!((d[(i, 0)] - direct).abs() <= 1e-9 * direct, "row {i}");
            }
        }
    }

    #[test]
    fn identical_far_points_are_not_negative() {
        // Large norms make the GEMM formula cancel: the clamp keeps the result ≥ 0.
        let a = Mat::from_fn(3, 2, |_, j| 1e8 + j as f64 * 1e-3);
        let s = sq_distances_between(a.as_ref(), a.as_ref(), Par::Seq);
        for i in 0..3 {
            for j in 0..3 {
                assert!(s[(i, j)] >= 0.0);
            }
        }
    }
}
