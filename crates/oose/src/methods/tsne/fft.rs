//! The repulsive forces of t-SNE by FFT-accelerated interpolation (maths §12; Linderman
//! et al. 2019), for d = 1 and 2.
//!
//! The repulsion needs, at every point yᵢ, four sums over all points j (i included):
//! φ₁ = Σⱼ k₁(yᵢ, yⱼ) with k₁ = (1 + ‖yᵢ − yⱼ‖²)⁻¹, and φ₂[q] = Σⱼ k₂(yᵢ, yⱼ) qⱼ with
//! k₂ = k₁² and the charges qⱼ ∈ {1, yⱼ₁, …, yⱼ_d}. Then
//! F_rep,i = yᵢ φ₂[1] − φ₂[y] (the term j = i vanishes) and Z = Σᵢ φ₁ − N (k₁(y, y) = 1).
//!
//! Each sum is approximated on a regular grid: the bounding box is cut into intervals of
//! width at most 1 (½ in a fit of fewer than 10000 points; at least 50 and at most 512
//! per dimension), each holding 3 equispaced interpolation nodes. The charges are spread
//! to the nodes of their interval by the Lagrange polynomials through those nodes, the
//! potential at every node is the discrete convolution of the kernel with the node
//! charges (a Toeplitz product, done as a circular convolution of twice the size by FFT),
//! and the potential at a point is interpolated back from the nodes of its interval by
//! the same polynomials. The error is that of polynomial interpolation of a smooth kernel
//! on intervals of width ≤ 1.
//!
//! The kernels are real and even, so their spectra are real: two kernels share one
//! complex FFT, and so do two real charge vectors against one kernel (five FFTs per
//! gradient in all). Charges are spread in point order and every FFT row is transformed on its own,
//! so the result does not depend on the number of threads.

// Grid indices run over several arrays at once.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;
use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// Interpolation nodes per interval.
pub(super) const NODES: usize = 3;
/// Fewest intervals per dimension.
const MIN_INTERVALS: usize = 50;
/// Most intervals per dimension (bounds the FFT at (2·3·512)² points whatever the
/// embedding's extent; beyond it the intervals grow wider than 1).
const MAX_INTERVALS: usize = 512;

/// The least m ≥ n with no prime factor above 5 (FFT sizes 6m are then fast: a prime
/// factor such as 23 would cost a Rader transform).
fn smooth(n: usize) -> usize {
    (n.max(1)..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3, 5] {
                while r % p == 0 {
                    r /= p;
                }
            }
            r == 1
        })
        .expect("5-smooth numbers are unbounded")
}

/// The node positions in an interval of unit width: (j + ½)/3.
fn node(j: usize) -> f64 {
    (j as f64 + 0.5) / NODES as f64
}

/// The Lagrange polynomials through the 3 nodes at `t` ∈ [0, 1].
fn lagrange(t: f64) -> [f64; NODES] {
    let mut l = [1.0; NODES];
    for j in 0..NODES {
        for m in 0..NODES {
            if m != j {
                l[j] *= (t - node(m)) / (node(j) - node(m));
            }
        }
    }
    l
}

/// One dimension of the grid.
#[derive(Clone, Copy, Debug)]
pub(super) struct Axis {
    pub(super) lo: f64,
    /// Interval width.
    pub(super) h: f64,
    pub(super) intervals: usize,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, per_unit: f64) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let width = (hi - lo).max(1e-12);
        let intervals =
            smooth(((width * per_unit).ceil() as usize).clamp(MIN_INTERVALS, MAX_INTERVALS));
        Axis {
            lo,
            h: width / intervals as f64,
            intervals,
        }
    }

    /// Nodes on this axis.
    fn nodes(&self) -> usize {
        self.intervals * NODES
    }

    /// Distance between neighbouring nodes.
    fn spacing(&self) -> f64 {
        self.h / NODES as f64
    }

    /// The first node of the interval holding `v`, and the node weights.
    fn locate(&self, v: f64) -> (usize, [f64; NODES]) {
        let s = (v - self.lo) / self.h;
        let b = (s.floor().max(0.0) as usize).min(self.intervals - 1);
        (b * NODES, lagrange(s - b as f64))
    }
}

/// The stencil of the point `p` (1 or 2 coordinates) on a grid with `axes` whose rows of
/// nodes are `stride` apart: the flat index of its interval's first node and the weights
/// of the 3^d nodes (row-major over the axes; zeros past the first row for d = 1).
pub(super) fn stencil(axes: &[Axis; 2], p: &[f64], stride: usize) -> (usize, [f64; NODES * NODES]) {
    let (b0, l0) = axes[0].locate(p[0]);
    let (b1, l1) = if p.len() == 1 {
        (0, [1.0, 0.0, 0.0])
    } else {
        axes[1].locate(p[1])
    };
    let mut w = [0.0; NODES * NODES];
    for a in 0..NODES {
        for b in 0..NODES {
            w[a * NODES + b] = l0[a] * l1[b];
        }
    }
    (b0 * stride + b1, w)
}

/// A plan for the circular convolutions on a (padded) grid of `m[0]` × `m[1]` points
/// (`m[1]` = 1 for d = 1). Forward transforms leave the spectrum transposed, the inverse
/// transforms take it so: the two transposes of a 2-D FFT pair are saved.
struct Plan {
    m: [usize; 2],
    rows: [Arc<dyn Fft<f64>>; 2],
    inverse: [Arc<dyn Fft<f64>>; 2],
}

impl Plan {
    fn new(m: [usize; 2]) -> Plan {
        let mut planner = FftPlanner::new();
        Plan {
            m,
            rows: [
                planner.plan_fft_forward(m[1]),
                planner.plan_fft_forward(m[0]),
            ],
            inverse: [
                planner.plan_fft_inverse(m[0]),
                planner.plan_fft_inverse(m[1]),
            ],
        }
    }

    fn len(&self) -> usize {
        self.m[0] * self.m[1]
    }

    /// FFT of every row of `a` (rows of length `fft.len()`), in parallel.
    fn each_row(fft: &Arc<dyn Fft<f64>>, a: &mut [Complex64]) {
        let n = fft.len();
        if n == 1 {
            return;
        }
        a.par_chunks_mut(n).for_each_init(
            || vec![Complex64::new(0.0, 0.0); fft.get_inplace_scratch_len()],
            |scratch, row| fft.process_with_scratch(row, scratch),
        );
    }

    /// `a` (r × c, row-major) transposed.
    fn transpose(a: &[Complex64], r: usize, c: usize, pool: &mut Pool) -> Vec<Complex64> {
        let mut t = pool.take(a.len());
        t.par_chunks_mut(r).enumerate().for_each(|(j, row)| {
            for i in 0..r {
                row[i] = a[i * c + j];
            }
        });
        t
    }

    /// The spectrum of `a` (m₀ × m₁), transposed (m₁ × m₀).
    fn forward(&self, a: Vec<Complex64>, pool: &mut Pool) -> Vec<Complex64> {
        let [m0, m1] = self.m;
        Self::rows_then_columns(&self.rows, a, (m0, m1), pool)
    }

    /// The inverse of [`Plan::forward`], scaled by 1/(m₀·m₁).
    fn inverse(&self, t: Vec<Complex64>, pool: &mut Pool) -> Vec<Complex64> {
        let [m0, m1] = self.m;
        let mut a = Self::rows_then_columns(&self.inverse, t, (m1, m0), pool);
        let s = 1.0 / (m0 * m1) as f64;
        a.par_iter_mut().for_each(|v| *v *= s);
        a
    }

    /// `ffts[0]` along the rows of `a` (r × c), then `ffts[1]` along its columns, which
    /// the transpose (c × r, returned so) makes rows. A single row or column is its own
    /// transpose in memory: no copy.
    fn rows_then_columns(
        ffts: &[Arc<dyn Fft<f64>>; 2],
        mut a: Vec<Complex64>,
        (r, c): (usize, usize),
        pool: &mut Pool,
    ) -> Vec<Complex64> {
        Self::each_row(&ffts[0], &mut a);
        let mut t = if r == 1 || c == 1 {
            a
        } else {
            let t = Self::transpose(&a, r, c, pool);
            pool.give(a);
            t
        };
        Self::each_row(&ffts[1], &mut t);
        t
    }
}

/// The grid: axes, node counts g and FFT sizes m = 2g.
pub(super) struct Grid {
    d: usize,
    pub(super) axes: [Axis; 2],
    pub(super) g: [usize; 2],
    plan: Plan,
}

impl Grid {
    /// The grid for the points `y` with `per_unit` intervals per unit length.
    pub(super) fn new(y: &[f64], d: usize, per_unit: f64) -> Grid {
        assert!(
            (1..=2).contains(&d),
            "FFT interpolation is for 1 or 2 dimensions"
        );
        let n = y.len() / d;
        let axis = |c: usize| Axis::new((0..n).map(|i| y[i * d + c]), per_unit);
        let axes = if d == 1 {
            let a = axis(0);
            [
                a,
                Axis {
                    lo: 0.0,
                    h: 1.0,
                    intervals: 1,
                },
            ]
        } else {
            [axis(0), axis(1)]
        };
        let g = if d == 1 {
            [axes[0].nodes(), 1]
        } else {
            [axes[0].nodes(), axes[1].nodes()]
        };
        let m = if d == 1 {
            [2 * g[0], 1]
        } else {
            [2 * g[0], 2 * g[1]]
        };
        Grid {
            d,
            axes,
            g,
            plan: Plan::new(m),
        }
    }

    /// The spectrum of `k(r²)` on the circulant embedding of the node offsets. With two
    /// real even kernels packed as k₁ + i·k₂, both spectra are real: the real part of the
    /// result is k̂₁, the imaginary part k̂₂.
    fn kernel_spectrum(
        &self,
        k: impl Fn(f64) -> Complex64 + Sync,
        pool: &mut Pool,
    ) -> Vec<Complex64> {
        let [m0, m1] = self.plan.m;
        let off = |a: usize, g: usize, m: usize, h: f64| -> Option<f64> {
            match a.cmp(&g) {
                std::cmp::Ordering::Less => Some(a as f64 * h),
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Greater => Some((a as f64 - m as f64) * h),
            }
        };
        let (h0, h1) = (self.axes[0].spacing(), self.axes[1].spacing());
        let mut a = pool.take(m0 * m1);
        a.par_chunks_mut(m1).enumerate().for_each(|(i, row)| {
            let Some(x) = off(i, self.g[0], m0, h0) else {
                return;
            };
            for (j, v) in row.iter_mut().enumerate() {
                let y = if self.d == 1 {
                    Some(0.0)
                } else {
                    off(j, self.g[1], m1, h1)
                };
                if let Some(y) = y {
                    *v = k(x * x + y * y);
                }
            }
        });
        self.plan.forward(a, pool)
    }

    /// Distance between rows of nodes in the potentials (the padded grid's row length).
    pub(super) fn stride(&self) -> usize {
        self.plan.m[1]
    }

    /// Per point: the flat index of its interval's first node and the node weights
    /// (3^d of them, row-major over the axes).
    pub(super) fn stencils(&self, y: &[f64]) -> Vec<(usize, [f64; NODES * NODES])> {
        let m1 = self.plan.m[1];
        y.par_chunks_exact(self.d)
            .map(|p| stencil(&self.axes, p, m1))
            .collect()
    }

    /// The flat offsets of a stencil's nodes from its first node.
    fn offsets(&self) -> [usize; NODES * NODES] {
        let m1 = self.plan.m[1];
        let mut o = [0; NODES * NODES];
        for a in 0..NODES {
            for b in 0..NODES {
                o[a * NODES + b] = if self.d == 1 {
                    if b == 0 {
                        a
                    } else {
                        usize::MAX
                    }
                } else {
                    a * m1 + b
                };
            }
        }
        o
    }

    /// The kernel between the nodes of one interval (the same for every interval).
    fn local_kernel(&self, k: impl Fn(f64) -> f64) -> [[f64; NODES * NODES]; NODES * NODES] {
        let (h0, h1) = (self.axes[0].spacing(), self.axes[1].spacing());
        let mut m = [[0.0; NODES * NODES]; NODES * NODES];
        for a in 0..NODES * NODES {
            for b in 0..NODES * NODES {
                let x = (a / NODES) as f64 - (b / NODES) as f64;
                let y = (a % NODES) as f64 - (b % NODES) as f64;
                m[a][b] = k((x * h0).powi(2) + (y * h1).powi(2));
            }
        }
        m
    }

    /// The charges `q` spread to the nodes (in point order: the same sums whatever the
    /// number of threads).
    fn spread(
        &self,
        stencils: &[(usize, [f64; NODES * NODES])],
        q: impl Fn(usize) -> Complex64,
        pool: &mut Pool,
    ) -> Vec<Complex64> {
        let offsets = self.offsets();
        let mut grid = pool.take(self.plan.len());
        for (i, (first, w)) in stencils.iter().enumerate() {
            let qi = q(i);
            for (o, wt) in offsets.iter().zip(w) {
                if *o != usize::MAX {
                    grid[first + o] += qi * wt;
                }
            }
        }
        grid
    }

    /// The potentials at every node of the charges of the points `y` (their stencils):
    /// Σ k₁ + i·Σ k₂, and Σ k₂ y₀ + i·Σ k₂ y₁ (arrays of the padded grid, from `pool`).
    /// Five transforms: k̂₁ and k̂₂ from one; the charges 1 and y₀ + i·y₁ forward; then
    /// (k̂₁ + i·k̂₂)·ĉ₁ back gives Σ k₁ and Σ k₂ (real and imaginary part: both
    /// convolutions are real), and k̂₂·(ŷ₀ + i·ŷ₁) back gives Σ k₂ y₀ and Σ k₂ y₁.
    pub(super) fn potentials(
        &self,
        stencils: &[(usize, [f64; NODES * NODES])],
        y: &[f64],
        pool: &mut Pool,
    ) -> (Vec<Complex64>, Vec<Complex64>) {
        let d = self.d;
        let kk = self.kernel_spectrum(
            |r2| {
                let w = 1.0 / (1.0 + r2);
                Complex64::new(w, w * w)
            },
            pool,
        );
        let ones = self.spread(stencils, |_| Complex64::new(1.0, 0.0), pool);
        let mut spec = self.plan.forward(ones, pool);
        spec.par_iter_mut().zip(&kk).for_each(|(s, k)| *s *= k);
        let sums = self.plan.inverse(spec, pool);
        let coords = self.spread(
            stencils,
            |i| Complex64::new(y[i * d], if d == 2 { y[i * d + 1] } else { 0.0 }),
            pool,
        );
        let mut spec = self.plan.forward(coords, pool);
        spec.par_iter_mut().zip(&kk).for_each(|(s, k)| *s *= k.im);
        let moments = self.plan.inverse(spec, pool);
        pool.give(kk);
        (sums, moments)
    }

    /// The potentials `pot` at the nodes interpolated at the points.
    fn gather(
        &self,
        stencils: &[(usize, [f64; NODES * NODES])],
        pot: &[Complex64],
    ) -> Vec<Complex64> {
        let offsets = self.offsets();
        stencils
            .par_iter()
            .map(|(first, w)| {
                let mut s = Complex64::new(0.0, 0.0);
                for (o, wt) in offsets.iter().zip(w) {
                    if *o != usize::MAX {
                        s += pot[first + o] * wt;
                    }
                }
                s
            })
            .collect()
    }
}

/// The repulsive forces F_rep,i = Σⱼ k₁²(yᵢ − yⱼ) into `rep` (row-major N×d, overwritten)
/// and Z = Σ_{i≠j} k₁, by interpolation on the grid (d = 1 or 2).
/// `pool` keeps the grids from one call to the next.
pub(crate) fn repulsion(y: &[f64], d: usize, rep: &mut [f64], pool: &mut Pool) -> f64 {
    repulsion_on(y, d, rep, intervals_per_unit(y.len() / d), pool)
}

/// Intervals per unit length of the fit's grid for `n` points: 1 (FIt-SNE's) from
/// [`FFT_FROM`](super::params::FFT_FROM) points, 2 below. The grid's force error is
/// that of 3-node interpolation on intervals of width h (about 3 % at h = 1 once the
/// embedding has spread; h³: 8× less at h = ½), and at 2000 Fashion-MNIST points it moves
/// the final KL divergence 4 % above the exact gradient's at h = 1, 0.6 % at h = ½
/// (maths §12). Below `FFT_FROM` the grid, not the points, sets the cost, and `auto`
/// uses Barnes–Hut there: a user who asks for the FFT gets the accurate grid.
fn intervals_per_unit(n: usize) -> f64 {
    if n < super::params::FFT_FROM {
        2.0
    } else {
        1.0
    }
}

/// Grids kept for reuse: one gradient needs a few arrays of up to (6·512)² complex
/// numbers, and allocating them afresh each iteration costs more in page faults than
/// the transforms themselves.
#[derive(Default)]
pub(crate) struct Pool {
    free: Vec<Vec<Complex64>>,
}

impl Pool {
    /// A zeroed array of `len`.
    fn take(&mut self, len: usize) -> Vec<Complex64> {
        let mut v = self.free.pop().unwrap_or_default();
        v.clear();
        v.resize(len, Complex64::new(0.0, 0.0));
        v
    }

    fn give(&mut self, v: Vec<Complex64>) {
        self.free.push(v);
    }
}

/// [`repulsion`] with `per_unit` intervals per unit length.
fn repulsion_on(y: &[f64], d: usize, rep: &mut [f64], per_unit: f64, pool: &mut Pool) -> f64 {
    let n = y.len() / d;
    let grid = Grid::new(y, d, per_unit);
    let stencils = grid.stencils(y);
    let (pot, moments_pot) = grid.potentials(&stencils, y, pool);
    let sums = grid.gather(&stencils, &pot);
    let moments = grid.gather(&stencils, &moments_pot);
    pool.give(pot);
    pool.give(moments_pot);
    for i in 0..n {
        let s = sums[i].im;
        rep[i * d] = y[i * d] * s - moments[i].re;
        if d == 2 {
            rep[i * d + 1] = y[i * d + 1] * s - moments[i].im;
        }
    }
    // Z: the interpolated sums less each point's interpolated self-interaction (exactly
    // 1 without interpolation; subtracting the interpolated value removes that error).
    let local = grid.local_kernel(|r2| 1.0 / (1.0 + r2));
    let own: Vec<f64> = stencils
        .par_iter()
        .map(|(_, w)| {
            let mut s = 0.0;
            for a in 0..NODES * NODES {
                for b in 0..NODES * NODES {
                    s += w[a] * local[a][b] * w[b];
                }
            }
            s
        })
        .collect();
    sums.iter().map(|p| p.re).sum::<f64>() - own.iter().sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::tsne::gradient::exact_repulsion;
    use crate::rng::Rng;

    fn compare(n: usize, d: usize, spread: f64, per_unit: f64) -> (f64, f64) {
        let mut rng = Rng::new(5);
        let y: Vec<f64> = (0..n * d).map(|_| spread * rng.normal()).collect();
        let mut rep = vec![0.0; n * d];
        let z = repulsion_on(&y, d, &mut rep, per_unit, &mut Pool::default());
        let mut exact = vec![0.0; n * d];
        let mut z_exact = 0.0;
        for i in 0..n {
            z_exact += exact_repulsion(
                &y,
                d,
                &y[i * d..(i + 1) * d],
                Some(i),
                &mut exact[i * d..(i + 1) * d],
            );
        }
        let norm = exact.iter().map(|v| v * v).sum::<f64>().sqrt();
        let err = rep
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        (err / norm, (z - z_exact).abs() / z_exact)
    }

    /// Against the exact sums: a compact cloud (50 intervals of width < 1) and a wide,
    /// sparse one (intervals of width 1, where the forces come from near pairs and the
    /// interpolation error O(h³) shows), in 1 and 2 dimensions; halving the intervals
    /// divides the error by about 2³.
    #[test]
    fn interpolated_repulsion_matches_the_exact_sum() {
        for (d, spread, tol) in [
            (2, 1.0, 2e-3),
            (2, 20.0, 0.06),
            (1, 1.0, 2e-3),
            (1, 30.0, 0.06),
        ] {
            let (force, z) = compare(700, d, spread, 1.0);
            assert!(force < tol, "d = {d}, spread {spread}: force error {force}");
            assert!(z < 2e-3, "d = {d}, spread {spread}: Z error {z}");
            if spread > 1.0 {
                let (finer, _) = compare(700, d, spread, 2.0);
                assert!(finer < force / 5.0, "d = {d}: {finer} vs {force}");
            }
        }
    }

    #[test]
    fn grid_sizes_are_5_smooth() {
        assert_eq!(smooth(50), 50);
        assert_eq!(smooth(97), 100);
        assert_eq!(smooth(121), 125);
        assert_eq!(smooth(512), 512);
    }

    #[test]
    fn lagrange_weights_reproduce_quadratics() {
        for t in [0.0, 0.1, 0.5, 0.77, 1.0] {
            let l = lagrange(t);
            let s: f64 = l.iter().sum();
            let lin: f64 = (0..NODES).map(|j| l[j] * node(j)).sum();
            let quad: f64 = (0..NODES).map(|j| l[j] * node(j) * node(j)).sum();
            assert!((s - 1.0).abs() < 1e-14 && (lin - t).abs() < 1e-14);
            assert!((quad - t * t).abs() < 1e-14);
        }
    }
}
