//! The repulsive field of a fixed reference embedding on the FFT grid of [`super::fft`]
//! (maths §12): what t-SNE's `optimize` extension reads at every step instead of
//! summing over the reference.

use super::fft::{stencil, Axis, Grid, Pool, NODES};

/// The repulsive field of a fixed reference embedding (the `optimize` extension, d = 1
/// or 2): at the grid's nodes, the four potentials Σⱼ k₁, Σⱼ k₂ and Σⱼ k₂ yⱼ (two
/// coordinates) over the reference points, computed once by the same spreading and
/// FFTs as [`super::fft::repulsion`]; at a new point they are interpolated from the nodes of its
/// interval. The grid covers the reference's box widened by [`FIELD_MARGIN`] on each
/// side; a point outside it has no value here ([`Field::at`] returns `None`).
/// Depends on the reference alone: a new point's value does not depend on the others.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    d: usize,
    axes: [Axis; 2],
    /// Nodes per axis (g₁ = 1 for d = 1).
    g: [usize; 2],
    /// Per node, row-major: Σ k₁, Σ k₂, Σ k₂ y₀, Σ k₂ y₁.
    potentials: Vec<[f64; 4]>,
}

/// Margin of the field's grid beyond the reference's box on each side, as a share of
/// its width (at least one unit): a new point optimised near the edge of the embedding
/// stays on the grid.
const FIELD_MARGIN: f64 = 0.05;

impl Field {
    /// The field of the reference points `y` (row-major, d = 1 or 2).
    pub(crate) fn new(y: &[f64], d: usize) -> Field {
        let n = y.len() / d;
        let mut widened = Vec::with_capacity(y.len() + 2 * d);
        widened.extend_from_slice(y);
        for side in [-1.0, 1.0] {
            for c in 0..d {
                let (lo, hi) = (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
                    (lo.min(y[i * d + c]), hi.max(y[i * d + c]))
                });
                let margin = (FIELD_MARGIN * (hi - lo)).max(1.0);
                widened.push(if side < 0.0 { lo - margin } else { hi + margin });
            }
        }
        let grid = Grid::new(&widened, d, 1.0);
        let mut pool = Pool::default();
        // The reference alone carries charge (the two corner points only set the box).
        let stencils = grid.stencils(y);
        let (sums, moments) = grid.potentials(&stencils, y, &mut pool);
        let m1 = grid.stride();
        let potentials = (0..grid.g[0] * grid.g[1])
            .map(|t| {
                let at = (t / grid.g[1]) * m1 + t % grid.g[1];
                let (s, m) = (sums[at], moments[at]);
                [s.re, s.im, m.re, m.im]
            })
            .collect();
        Field {
            d,
            axes: grid.axes,
            g: grid.g,
            potentials,
        }
    }

    /// At `z` (d coordinates): Σⱼ k₁(z, yⱼ), returned, and Σⱼ k₂(z, yⱼ)(z − yⱼ) into
    /// `rep`; `None` outside the grid.
    pub(crate) fn at(&self, z: &[f64], rep: &mut [f64]) -> Option<f64> {
        let inside = |a: &Axis, v: f64| v >= a.lo && v <= a.lo + a.h * a.intervals as f64;
        if !inside(&self.axes[0], z[0]) || (self.d == 2 && !inside(&self.axes[1], z[1])) {
            return None;
        }
        let (first, w) = stencil(&self.axes, &z[..self.d], self.g[1]);
        let rows = if self.d == 2 { NODES } else { 1 };
        let mut acc = [0.0; 4];
        for a in 0..NODES {
            for b in 0..rows {
                let p = &self.potentials[first + a * self.g[1] + b];
                for (s, v) in acc.iter_mut().zip(p) {
                    *s += w[a * NODES + b] * v;
                }
            }
        }
        rep[0] = z[0] * acc[1] - acc[2];
        if self.d == 2 {
            rep[1] = z[1] * acc[1] - acc[3];
        }
        Some(acc[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::tsne::gradient::exact_repulsion;
    use crate::rng::Rng;

    /// The field of a reference against the exact sums at new points inside its box
    /// (and none far outside it).
    #[test]
    fn the_field_of_a_reference_matches_the_exact_sums() {
        let mut rng = Rng::new(8);
        // Sparse clouds (intervals of width 1 against pairs ~1 apart) interpolate worst.
        for (d, spread, tol, tol_z) in [
            (2, 1.0, 2e-3, 2e-3),
            (2, 15.0, 0.06, 0.02),
            (1, 20.0, 0.06, 0.02),
        ] {
            let y: Vec<f64> = (0..2000 * d).map(|_| spread * rng.normal()).collect();
            let field = Field::new(&y, d);
            // The force error over all points against the forces' norm (as the fit's
            // test), and Z's worst relative error.
            let (mut err2, mut norm2, mut worst_z) = (0.0, 0.0, 0.0f64);
            for _ in 0..300 {
                let z: Vec<f64> = (0..d).map(|_| spread * rng.normal()).collect();
                let mut rep = vec![0.0; d];
                let Some(zz) = field.at(&z, &mut rep) else {
                    continue;
                };
                let mut exact = vec![0.0; d];
                let z_exact = exact_repulsion(&y, d, &z, None, &mut exact);
                norm2 += exact.iter().map(|v| v * v).sum::<f64>();
                err2 += rep
                    .iter()
                    .zip(&exact)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>();
                worst_z = worst_z.max((zz - z_exact).abs() / z_exact);
            }
            let force = (err2 / norm2).sqrt();
            eprintln!("d = {d}, spread {spread}: force {force:.2e}, Z {worst_z:.2e}");
            assert!(force < tol, "d = {d}, spread {spread}: force {force}");
            assert!(worst_z < tol_z, "d = {d}, spread {spread}: Z {worst_z}");
            let far = vec![1e6; d];
            assert!(field.at(&far, &mut vec![0.0; d]).is_none());
        }
    }
}
