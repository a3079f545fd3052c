//! Sparse Cholesky factor for many solves with one right-hand side (the shift-invert
//! eigensolver). faer orders (AMD) and factors; the solves run here, on two threads:
//! below the top of the elimination tree the supernodes split into independent
//! subtrees, which two bins share out (balanced by stored values), so that the bins'
//! forward and backward substitutions run at the same time and only the top supernodes
//! run alone. (faer's solve visits the supernodes one after another; on a kNN graph of
//! an S-curve the top takes ~5 % of the values and each bin ~47 %.) The arithmetic and
//! its order do not depend on the number of threads.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, SymbolicCholesky, SymbolicCholeskyRaw,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Par, Side};
use std::ops::Range;

/// One supernode: columns `cols` of the permuted factor, the row indices below its
/// diagonal block (`rows`, a range into [`Cholesky::rows`]), and its values
/// (column-major, `cols.len() + rows.len()` rows) from offset `val`.
#[derive(Clone, Debug)]
struct Supernode {
    cols: Range<usize>,
    rows: Range<usize>,
    val: usize,
}

/// L Lᵀ = P A Pᵀ for a sparse symmetric positive definite A.
pub(crate) struct Cholesky {
    /// `perm[i]`: the row of A that is row i of P A Pᵀ.
    perm: Vec<usize>,
    nodes: Vec<Supernode>,
    rows: Vec<usize>,
    values: Vec<f64>,
    /// Supernode ranges of each bin's subtrees (each range closed under descendants).
    bins: [Vec<Range<usize>>; 2],
    /// The remaining supernodes (ancestors of the bins' subtrees), ascending.
    top: Vec<usize>,
}

impl Cholesky {
    /// Factors the n×n matrix whose upper triangle is given in CSC form (each column's
    /// row indices sorted, the diagonal present). `None` when the factor would hold more
    /// than `max_len` values or when the matrix is not numerically positive definite.
    pub(crate) fn factor_upper(
        n: usize,
        col_ptr: &[usize],
        row_idx: &[usize],
        values: &[f64],
        max_len: usize,
    ) -> Option<Cholesky> {
        let structure = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
        let m = SparseColMatRef::new(structure, values);
        let sym: SymbolicCholesky<usize> = factorize_symbolic_cholesky(
            structure,
            Side::Upper,
            Default::default(),
            Default::default(),
        )
        .ok()?;
        if sym.len_val() > max_len {
            return None;
        }
        let par = Par::rayon(0);
        let mut l_values = vec![0.0f64; sym.len_val()];
        let mut mem =
            MemBuffer::try_new(sym.factorize_numeric_llt_scratch::<f64>(par, Default::default()))
                .ok()?;
        sym.factorize_numeric_llt(
            &mut l_values,
            m,
            Side::Upper,
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .ok()?;
        drop(mem);
        let perm = match sym.perm() {
            Some(p) => p.arrays().0.to_vec(),
            None => (0..n).collect(),
        };
        let (nodes, rows): (Vec<Supernode>, Vec<usize>) = match sym.raw() {
            SymbolicCholeskyRaw::Supernodal(sup) => {
                let (begin, end) = (sup.supernode_begin(), sup.supernode_end());
                let (row_ptr, val_ptr) = (sup.col_ptr_for_row_idx(), sup.col_ptr_for_val());
                let nodes = (0..sup.n_supernodes())
                    .map(|s| Supernode {
                        cols: begin[s]..end[s],
                        rows: row_ptr[s]..row_ptr[s + 1],
                        val: val_ptr[s],
                    })
                    .collect();
                (nodes, sup.row_idx().to_vec())
            }
            // Simplicial: one column per supernode, its diagonal stored first.
            SymbolicCholeskyRaw::Simplicial(simp) => {
                let ptr = simp.col_ptr();
                let nodes = (0..n)
                    .map(|j| Supernode {
                        cols: j..j + 1,
                        rows: ptr[j] + 1..ptr[j + 1],
                        val: ptr[j],
                    })
                    .collect();
                (nodes, simp.row_idx().to_vec())
            }
        };
        let (bins, top) = split(&nodes, &rows, n);
        Some(Cholesky {
            perm,
            nodes,
            rows,
            values: l_values,
            bins,
            top,
        })
    }

    /// Overwrites `x` with A⁻¹ x. `work` holds two scratch vectors of length n.
    pub(crate) fn solve_in_place(&self, x: &mut [f64], work: &mut [Vec<f64>; 2]) {
        let n = self.perm.len();
        assert_eq!(x.len(), n, "solve: right-hand side of the wrong length");
        let [y, y1] = work;
        y.resize(n, 0.0);
        y1.resize(n, 0.0);
        for (yi, &p) in y.iter_mut().zip(&self.perm) {
            *yi = x[p];
        }
        // Forward: bin 0 on y, bin 1 on a copy whose top rows start at zero (they
        // collect bin 1's updates, added to y afterwards); then the top.
        y1.copy_from_slice(y);
        for &s in &self.top {
            y1[self.nodes[s].cols.clone()].fill(0.0);
        }
        rayon::join(
            || self.forward(&self.bins[0], y),
            || self.forward(&self.bins[1], y1),
        );
        for &s in &self.top {
            let c = self.nodes[s].cols.clone();
            for (a, b) in y[c.clone()].iter_mut().zip(&y1[c]) {
                *a += b;
            }
        }
        self.copy_bin(y1, y);
        self.forward_nodes(self.top.iter().copied(), y);
        // Backward: the top, then the bins (each reads its own rows and the top's).
        self.backward_nodes(self.top.iter().rev().copied(), y);
        y1.copy_from_slice(y);
        rayon::join(
            || self.backward(&self.bins[0], y),
            || self.backward(&self.bins[1], y1),
        );
        self.copy_bin(y1, y);
        for (&yi, &p) in y.iter().zip(&self.perm) {
            x[p] = yi;
        }
    }

    /// Copies bin 1's rows from `from` to `to`.
    fn copy_bin(&self, from: &[f64], to: &mut [f64]) {
        for r in &self.bins[1] {
            let cols = self.nodes[r.start].cols.start..self.nodes[r.end - 1].cols.end;
            to[cols.clone()].copy_from_slice(&from[cols]);
        }
    }

    fn forward(&self, bin: &[Range<usize>], y: &mut [f64]) {
        self.forward_nodes(bin.iter().flat_map(|r| r.clone()), y);
    }

    fn backward(&self, bin: &[Range<usize>], y: &mut [f64]) {
        self.backward_nodes(bin.iter().rev().flat_map(|r| r.clone().rev()), y);
    }

    /// Supernode `s`.
    #[inline(always)]
    fn node(&self, s: usize) -> Node<'_> {
        let node = &self.nodes[s];
        let w = node.cols.len();
        let rows = &self.rows[node.rows.clone()];
        let vals = &self.values[node.val..node.val + w * (w + rows.len())];
        Node {
            c0: node.cols.start,
            w,
            rows,
            vals,
        }
    }

    /// Runs `step(y, node, tmp)` for each supernode of `nodes` in turn (vectorised where
    /// the machine allows), `tmp` a scratch vector, empty at each step.
    #[inline(always)]
    fn sweep(
        &self,
        nodes: impl Iterator<Item = usize>,
        y: &mut [f64],
        step: fn(&mut [f64], Node<'_>, &mut Vec<f64>),
    ) {
        let mut tmp = Vec::new();
        crate::linalg::simd::vectorized(
            #[inline(always)]
            || {
                for s in nodes {
                    tmp.clear();
                    step(y, self.node(s), &mut tmp);
                }
            },
        )
    }

    /// L z = y over the supernodes `nodes` (in an order where descendants come first).
    fn forward_nodes(&self, nodes: impl Iterator<Item = usize>, y: &mut [f64]) {
        self.sweep(nodes, y, forward_step)
    }

    /// Lᵀ u = z over the supernodes `nodes` (in an order where ancestors come first).
    fn backward_nodes(&self, nodes: impl Iterator<Item = usize>, y: &mut [f64]) {
        self.sweep(nodes, y, backward_step)
    }
}

/// One supernode's part of L z = y: its columns solved in `y`, their products with the
/// rows below subtracted from `y` (through `tmp`).
#[inline(always)]
fn forward_step(y: &mut [f64], Node { c0, w, rows, vals }: Node<'_>, tmp: &mut Vec<f64>) {
    let h = w + rows.len();
    tmp.resize(rows.len(), 0.0);
    let top = &mut y[c0..c0 + w];
    for j in 0..w {
        let col = &vals[j * h..(j + 1) * h];
        let zj = top[j] / col[j];
        top[j] = zj;
        for (t, &l) in top[j + 1..].iter_mut().zip(&col[j + 1..w]) {
            *t -= l * zj;
        }
        for (t, &l) in tmp.iter_mut().zip(&col[w..]) {
            *t += l * zj;
        }
    }
    for (&r, &t) in rows.iter().zip(tmp.iter()) {
        y[r] -= t;
    }
}

/// One supernode's part of Lᵀ u = z: its columns solved in `y` from the rows below
/// (gathered in `tmp`).
#[inline(always)]
fn backward_step(y: &mut [f64], Node { c0, w, rows, vals }: Node<'_>, tmp: &mut Vec<f64>) {
    let h = w + rows.len();
    tmp.extend(rows.iter().map(|&r| y[r]));
    let top = &mut y[c0..c0 + w];
    for j in (0..w).rev() {
        let col = &vals[j * h..(j + 1) * h];
        let acc = top[j] - dot(&col[j + 1..w], &top[j + 1..]) - dot(&col[w..], tmp);
        top[j] = acc / col[j];
    }
}

/// A supernode's first column `c0`, its width `w`, the rows below its diagonal block
/// and its values (column-major, `w + rows.len()` rows).
struct Node<'a> {
    c0: usize,
    w: usize,
    rows: &'a [usize],
    vals: &'a [f64],
}

/// Σ aᵢbᵢ with four partial sums (so that it vectorises), in a fixed order.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for k in 0..4 {
            s[k] += x[k] * y[k];
        }
    }
    let mut tail = 0.0;
    for (x, y) in ar.iter().zip(br) {
        tail += x * y;
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

/// The supernodes' elimination tree: each one's parent (the supernode holding the
/// first row below its diagonal block; it comes after its children), and the
/// lowest-numbered node and the number of nodes of its subtree.
struct Tree {
    parent: Vec<Option<usize>>,
    first: Vec<usize>,
    count: Vec<usize>,
}

impl Tree {
    fn new(nodes: &[Supernode], rows: &[usize], n: usize) -> Tree {
        let ns = nodes.len();
        let mut of = vec![0usize; n];
        for (s, node) in nodes.iter().enumerate() {
            of[node.cols.clone()].fill(s);
        }
        let parent: Vec<Option<usize>> = nodes
            .iter()
            .map(|node| rows[node.rows.clone()].iter().min().map(|&r| of[r]))
            .collect();
        let mut first: Vec<usize> = (0..ns).collect();
        let mut count = vec![1usize; ns];
        for s in 0..ns {
            if let Some(p) = parent[s] {
                assert!(p > s, "supernodes out of topological order");
                first[p] = first[p].min(first[s]);
                count[p] += count[s];
            }
        }
        Tree {
            parent,
            first,
            count,
        }
    }

    /// Whether the subtree of `s` is the range first[s]..=s (as many nodes as it holds).
    fn is_range(&self, s: usize) -> bool {
        self.count[s] == s + 1 - self.first[s]
    }
}

/// Splits the supernodal elimination tree: subtrees for two bins and the supernodes
/// above them. Starting from the roots, the subtree with the most values is replaced by
/// its children (its root going to the top) until the top alone outweighs the best
/// split met, the one with the least top + larger bin (bins filled largest subtree
/// first, each into the lighter bin), which is kept.
///
/// A bin holds subtrees as ranges of supernodes, first[r]..=r, which is the subtree
/// only where its nodes are numbered consecutively. faer's numbering guarantees that a
/// parent comes after its children, not that (its simplicial factor, chosen for small
/// or very sparse matrices, interleaves subtrees often): a subtree that is not such a
/// range never goes to a bin whole — its root goes to the top and its children are
/// considered in its place. (Before 2026-11-29 the ranges were taken as subtrees, and a
/// range took in nodes of other subtrees: a landmark MVU reconstruction solved with a
/// residual of 4e-2, maths §15.)
fn split(nodes: &[Supernode], rows: &[usize], n: usize) -> ([Vec<Range<usize>>; 2], Vec<usize>) {
    let ns = nodes.len();
    let tree = Tree::new(nodes, rows, n);
    // Values of each supernode, then of each subtree.
    let own: Vec<usize> = nodes
        .iter()
        .map(|node| node.cols.len() * (node.cols.len() + node.rows.len()))
        .collect();
    let mut size = own.clone();
    let mut children = vec![Vec::new(); ns];
    let mut roots = Vec::new();
    for s in 0..ns {
        match tree.parent[s] {
            Some(p) => {
                size[p] += size[s];
                children[p].push(s);
            }
            None => roots.push(s),
        }
    }
    let fill = |frontier: &[usize]| {
        let mut f = frontier.to_vec();
        f.sort_by_key(|&s| (std::cmp::Reverse(size[s]), s));
        let mut bins: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let mut load = [0usize; 2];
        for s in f {
            let b = usize::from(load[1] < load[0]);
            load[b] += size[s];
            bins[b].push(s);
        }
        (bins, load[0].max(load[1]))
    };
    // Root s goes to the top and its subtrees to the frontier; one that is not a range
    // (a leaf always is) gives its root to the top in turn.
    let expand =
        |s: usize, frontier: &mut Vec<usize>, top: &mut Vec<usize>, top_size: &mut usize| {
            let mut open = vec![s];
            while let Some(s) = open.pop() {
                top.push(s);
                *top_size += own[s];
                for &c in &children[s] {
                    if tree.is_range(c) {
                        frontier.push(c);
                    } else {
                        open.push(c);
                    }
                }
            }
        };
    let mut frontier = Vec::new();
    let mut top = Vec::new();
    let mut top_size = 0usize;
    for r in roots {
        if tree.is_range(r) {
            frontier.push(r);
        } else {
            expand(r, &mut frontier, &mut top, &mut top_size);
        }
    }
    let mut best = (top_size + fill(&frontier).1, top.clone(), frontier.clone());
    // Once the top alone costs as much as the best split, no later split is better.
    while top_size < best.0 {
        let Some(&big) = frontier.iter().max_by_key(|&&s| (size[s], s)) else {
            break;
        };
        if children[big].is_empty() {
            break;
        }
        frontier.retain(|&s| s != big);
        expand(big, &mut frontier, &mut top, &mut top_size);
        let cost = top_size + fill(&frontier).1;
        if cost < best.0 {
            best = (cost, top.clone(), frontier.clone());
        }
    }
    let (_, mut top, frontier) = best;
    top.sort_unstable();
    let (bins, _) = fill(&frontier);
    let ranges = |b: &Vec<usize>| {
        let mut r: Vec<Range<usize>> = b.iter().map(|&s| tree.first[s]..s + 1).collect();
        r.sort_by_key(|r| r.start);
        r
    };
    ([ranges(&bins[0]), ranges(&bins[1])], top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use faer::Mat;

    /// Upper triangle (CSC, rows sorted, diagonal present) of a dense symmetric matrix.
    fn upper_csc(a: &Mat<f64>) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let n = a.nrows();
        let (mut ptr, mut idx, mut val) = (vec![0], Vec::new(), Vec::new());
        for j in 0..n {
            for i in 0..=j {
                if a[(i, j)] != 0.0 || i == j {
                    idx.push(i);
                    val.push(a[(i, j)]);
                }
            }
            ptr.push(idx.len());
        }
        (ptr, idx, val)
    }

    /// A 2-D grid Laplacian (side × side, 4-neighbours) plus `shift`·I, with the
    /// vertices numbered in a scrambled order.
    fn grid(side: usize, shift: f64, seed: u64) -> Mat<f64> {
        let n = side * side;
        let mut rng = Rng::new(seed);
        let mut label: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            label.swap(i, (rng.uniform() * (i + 1) as f64) as usize % (i + 1));
        }
        let mut a = Mat::<f64>::zeros(n, n);
        for r in 0..side {
            for c in 0..side {
                let v = label[r * side + c];
                a[(v, v)] += shift;
                for (rr, cc) in [(r + 1, c), (r, c + 1)] {
                    if rr < side && cc < side {
                        let u = label[rr * side + cc];
                        let w = 0.5 + rng.uniform();
                        a[(v, v)] += w;
                        a[(u, u)] += w;
                        a[(u, v)] -= w;
                        a[(v, u)] -= w;
                    }
                }
            }
        }
        a
    }

    fn relative_error(a: &Mat<f64>, x: &[f64], b: &[f64]) -> f64 {
        let n = a.nrows();
        let xm = Mat::from_fn(n, 1, |i, _| x[i]);
        let r = a * &xm;
        let num: f64 = (0..n)
            .map(|i| (r[(i, 0)] - b[i]).powi(2))
            .sum::<f64>()
            .sqrt();
        num / b.iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    #[test]
    fn solves_match_the_matrix_and_do_not_depend_on_the_threads() {
        let a = grid(45, 1e-3, 7);
        let n = a.nrows();
        let (ptr, idx, val) = upper_csc(&a);
        let chol = Cholesky::factor_upper(n, &ptr, &idx, &val, usize::MAX).unwrap();
        // The tree splits: both bins and the top hold supernodes.
        assert!(!chol.bins[0].is_empty() && !chol.bins[1].is_empty() && !chol.top.is_empty());
        let mut rng = Rng::new(3);
        let b: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let solve_with = |threads: usize| {
            crate::testing::on_threads(threads, || {
                let mut x = b.clone();
                chol.solve_in_place(&mut x, &mut [Vec::new(), Vec::new()]);
                x
            })
        };
        let x1 = solve_with(1);
        let x2 = solve_with(2);
        assert!(x1.iter().zip(&x2).all(|(u, v)| u.to_bits() == v.to_bits()));
        let err = relative_error(&a, &x2, &b);
        assert!(err < 1e-11, "relative residual {err:e}");
        // Reused buffers give the same result.
        let mut work = [vec![5.0; 3], Vec::new()];
        let mut x3 = b.clone();
        chol.solve_in_place(&mut x3, &mut work);
        chol.solve_in_place(&mut x3, &mut work);
        let mut x4 = x2.clone();
        chol.solve_in_place(&mut x4, &mut [Vec::new(), Vec::new()]);
        assert_eq!(x3, x4);
    }

    #[test]
    fn tridiagonal_and_tiny_matrices_are_solved() {
        for n in [1usize, 2, 5, 300] {
            let a = Mat::from_fn(n, n, |i, j| {
                if i == j {
                    2.5
                } else if i.abs_diff(j) == 1 {
                    -1.0
                } else {
                    0.0
                }
            });
            let (ptr, idx, val) = upper_csc(&a);
            let chol = Cholesky::factor_upper(n, &ptr, &idx, &val, usize::MAX).unwrap();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() + 1.0).collect();
            let mut x = b.clone();
            chol.solve_in_place(&mut x, &mut [Vec::new(), Vec::new()]);
            let err = relative_error(&a, &x, &b);
            assert!(err < 1e-14, "n = {n}: relative residual {err:e}");
        }
    }

    /// A kNN-graph Laplacian of `n` random points in 3-D (k = 5, weights 1/(1 + d²))
    /// plus `shift`·I: small and very sparse, the matrices faer factors simplicially.
    fn knn_laplacian(n: usize, shift: f64, seed: u64) -> Mat<f64> {
        let mut rng = Rng::new(seed);
        let p: Vec<[f64; 3]> = (0..n)
            .map(|_| [rng.uniform(), rng.uniform(), rng.uniform()])
            .collect();
        let d2 = |i: usize, j: usize| (0..3).map(|c| (p[i][c] - p[j][c]).powi(2)).sum::<f64>();
        let mut a = Mat::<f64>::identity(n, n) * shift;
        for i in 0..n {
            let mut by: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            by.sort_by(|&u, &v| d2(i, u).total_cmp(&d2(i, v)));
            for &j in &by[..5] {
                if a[(i, j)] == 0.0 {
                    let w = 1.0 / (1.0 + d2(i, j));
                    a[(i, i)] += w;
                    a[(j, j)] += w;
                    a[(i, j)] -= w;
                    a[(j, i)] -= w;
                }
            }
        }
        a
    }

    /// Whether the factor's nodes are numbered in postorder (every subtree a range).
    fn in_postorder(chol: &Cholesky) -> bool {
        let tree = Tree::new(&chol.nodes, &chol.rows, chol.perm.len());
        (0..chol.nodes.len()).all(|s| tree.is_range(s))
    }

    /// faer's simplicial factor need not number its columns in postorder; the solve must
    /// not split such a tree into ranges (it did: relative residuals up to 11.7 here).
    #[test]
    fn factors_out_of_postorder_are_solved_exactly() {
        let mut out_of_postorder = 0;
        for seed in 0..40 {
            let a = knn_laplacian(90, 1e-2, seed);
            let n = a.nrows();
            let (ptr, idx, val) = upper_csc(&a);
            let chol = Cholesky::factor_upper(n, &ptr, &idx, &val, usize::MAX).unwrap();
            if !in_postorder(&chol) {
                out_of_postorder += 1;
            }
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.61).cos()).collect();
            let mut x = b.clone();
            chol.solve_in_place(&mut x, &mut [Vec::new(), Vec::new()]);
            let err = relative_error(&a, &x, &b);
            assert!(err < 1e-12, "seed {seed}: relative residual {err:e}");
        }
        // The case is met (the count is a property of faer's ordering, not asserted
        // exactly).
        assert!(out_of_postorder > 0, "no factor out of postorder among 40");
    }

    #[test]
    fn indefinite_matrices_and_excess_fill_are_refused() {
        let mut a = grid(10, 0.0, 1);
        a[(3, 3)] = -1.0;
        let (ptr, idx, val) = upper_csc(&a);
        assert!(Cholesky::factor_upper(100, &ptr, &idx, &val, usize::MAX).is_none());
        let a = grid(10, 1.0, 1);
        let (ptr, idx, val) = upper_csc(&a);
        assert!(Cholesky::factor_upper(100, &ptr, &idx, &val, 10).is_none());
        assert!(Cholesky::factor_upper(100, &ptr, &idx, &val, usize::MAX).is_some());
    }
}
