//! UMAP's layout (maths §13): the spectral initialisation (this project's Laplacian
//! eigenmaps of the fuzzy graph, one component at a time) and the stochastic gradient
//! descent with negative sampling, for the fit and for one new point (`optimize`).
//!
//! Determinism. umap-learn's parallel SGD updates shared positions from several threads
//! at once (Hogwild), so its result depends on thread timing; its seeded SGD is
//! sequential, each step seeing every earlier one. Here each epoch runs in 16 phases;
//! phase p moves the points p, p + 16, p + 32, … Each point moves only itself and reads
//! the others as they are when its phase begins: the earlier phases' moves of this epoch
//! are seen, its own phase's are not. Point i walks through its own edges in order, its
//! attractive steps doubled because umap-learn moves both ends of each of the two
//! directed copies of an edge, and its negative samples are drawn from a generator
//! seeded by (seed, epoch, i). The points of a phase are independent, so they run in
//! parallel and the result is the same bits whatever the thread count. Reading only the
//! epoch's start (one phase) is as deterministic but lags: on Fashion-MNIST its kNN
//! preservation was 0.008 lower (`PHASES`).

// Coordinates are indexed across position arrays at once: index loops read plainer.
#![allow(clippy::needless_range_loop)]

use super::power::{self, LANES};
use crate::linalg::eigen::{top_eigen_below_top, Solver, Symmetric};
use crate::linalg::sparse::SymCsr;
use crate::rng::Rng;
use faer::{Mat, MatRef};
use rayon::prelude::*;

/// Every gradient coordinate is clipped to [−CLIP, CLIP].
const CLIP: f64 = 4.0;
/// Heads per parallel task.
const CHUNK: usize = 32;
/// Phases per epoch (see the module's documentation). Chosen on Fashion-MNIST (60000
/// points, seeds 0–4): kNN preservation(10) 0.3054 with one phase (every point reads
/// the epoch's start), 0.3138 with 16, 0.3109 with 64; each phase adds a barrier.
const PHASES: usize = 16;

/// The low-dimensional similarity φ(r) = 1 / (1 + a r^{2b}).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Curve {
    pub(crate) a: f64,
    pub(crate) b: f64,
}

impl Curve {
    // The coefficients are computed in single precision, as umap-learn's SGD is: the
    // power and the division were most of the fit's time in double precision (a chain
    // of dependent latencies; glibc's table-driven powf is about twice as fast as its
    // pow, and faster than a scalar polynomial log₂/exp₂ without FMA, which was tried),
    // and a relative error of 1e-6 in a stochastic, clipped step is far below its noise.
    // The repulsive ones, about five per edge sample, go several at a time through
    // `power::repel` (vectorised). Positions stay in double precision.

    /// The attractive coefficient −2ab d^{2(b−1)} / (1 + a d^{2b}) at d² = `d2` > 0.
    #[inline]
    fn attract(&self, d2: f64) -> f64 {
        let (a, b, d2) = (self.a as f32, self.b as f32, d2 as f32);
        let p = d2.powf(b);
        let c = -2.0 * a * b * p / (d2 * (1.0 + a * p));
        // 0/0 when d² underflows single precision: coincident points do not attract.
        if c.is_finite() {
            f64::from(c)
        } else {
            0.0
        }
    }
}

fn clip(v: f64) -> f64 {
    v.clamp(-CLIP, CLIP)
}

/// The attractive SGD step of `pos` towards `other`: pos += step · clip(coef(d²) ·
/// (pos − other)), nothing when they coincide.
#[inline]
fn attract_to(pos: &mut [f64], other: &[f64], step: f64, sgd: &Sgd) {
    let d2 = sq(pos, other);
    if d2 > 0.0 {
        let coef = sgd.curve.attract(d2);
        for (p, o) in pos.iter_mut().zip(other) {
            *p += step * clip(coef * (*p - o));
        }
    }
}

/// The repulsive SGD steps of `pos` away from the rows of `others` (at most
/// [`LANES`] of them, row-major, width d), all taken from where `pos` is now (kept in
/// `start`) and added in order; none from a point it coincides with.
fn repel_from(pos: &mut [f64], others: &[f64], step: f64, sgd: &Sgd, start: &mut Vec<f64>) {
    let d = pos.len();
    let m = others.len() / d;
    debug_assert!(m <= LANES);
    // Unused lanes compute at d² = 1 and are not read.
    let mut d2 = [1.0f32; LANES];
    let mut sq64 = [0.0f64; LANES];
    for (l, o) in others.chunks_exact(d).enumerate() {
        sq64[l] = sq(pos, o);
        d2[l] = sq64[l] as f32;
    }
    let coef = power::repel(
        &d2,
        sgd.curve.a as f32,
        sgd.curve.b as f32,
        sgd.repulsion as f32,
    );
    start.clear();
    start.extend_from_slice(pos);
    for (l, o) in others.chunks_exact(d).enumerate() {
        if sq64[l] > 0.0 {
            let c64 = f64::from(coef[l]);
            for ((p, s), o) in pos.iter_mut().zip(start.iter()).zip(o) {
                *p += step * clip(c64 * (s - o));
            }
        }
    }
}

fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(p, q)| (p - q) * (p - q)).sum()
}

/// The SGD's settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sgd {
    pub(crate) curve: Curve,
    pub(crate) epochs: usize,
    pub(crate) learning_rate: f64,
    pub(crate) negative_sample_rate: f64,
    pub(crate) repulsion: f64,
    pub(crate) seed: u64,
}

/// A generator for one (seed, a, b) triple: SplitMix-style mixing so that nearby
/// triples give unrelated streams.
pub(crate) fn stream(seed: u64, a: u64, b: u64) -> Rng {
    let mut h = seed ^ 0x5851_F42D_4C95_7F2D;
    for v in [a, b] {
        h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
    }
    Rng::new(h)
}

/// The fuzzy graph relabelled phase-major (see the module's documentation): phase p
/// holds the points p, p + P, p + 2P, … of the caller's order (P phases), as the labels
/// `bounds[p]..bounds[p + 1]`, so that each phase is one run of rows.
struct Phased {
    /// `order[label]` = the caller's index of the point.
    order: Vec<usize>,
    offsets: Vec<usize>,
    /// New labels; each row's edges in the caller's order.
    cols: Vec<u32>,
    /// Epochs between samples of each edge: max / w.
    per_sample: Vec<f64>,
    bounds: Vec<usize>,
}

impl Phased {
    fn new(w: &SymCsr, phases: usize, max: f64) -> Phased {
        let n = w.n();
        let order: Vec<usize> = (0..phases).flat_map(|p| (p..n).step_by(phases)).collect();
        let mut label = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            label[old] = new as u32;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let (mut cols, mut per_sample) = (Vec::with_capacity(w.nnz()), Vec::with_capacity(w.nnz()));
        for &i in &order {
            for e in w.offsets[i]..w.offsets[i + 1] {
                cols.push(label[w.cols[e] as usize]);
                per_sample.push(max / w.vals[e]);
            }
            offsets.push(cols.len());
        }
        let mut bounds = vec![0];
        for p in 0..phases {
            bounds.push(bounds[p] + (n - p).div_ceil(phases));
        }
        Phased {
            order,
            offsets,
            cols,
            per_sample,
            bounds,
        }
    }
}

/// Moves the rows of `y` (n×d, row-major) along the fuzzy graph `w` (edges below
/// max/epochs already dropped) for `sgd.epochs` epochs; `report(epoch)` after each.
pub(crate) fn optimise(y: &mut [f64], d: usize, w: &SymCsr, sgd: &Sgd, report: &dyn Fn(usize)) {
    let n = w.n();
    let max = w.vals.iter().copied().fold(0.0, f64::max);
    if n == 0 || max <= 0.0 {
        return;
    }
    let g = Phased::new(w, PHASES.min(n), max);
    let per_negative: Vec<f64> = g
        .per_sample
        .iter()
        .map(|e| e / sgd.negative_sample_rate)
        .collect();
    let mut next = g.per_sample.clone();
    let mut next_negative = per_negative.clone();
    // Positions by new label.
    let mut z: Vec<f64> = g
        .order
        .iter()
        .flat_map(|&i| y[i * d..(i + 1) * d].iter().copied())
        .collect();
    let mut moved = Vec::new();
    for epoch in 0..sgd.epochs {
        // The caller turns a stop into an error (`progress::check` after this).
        if crate::progress::stop_requested() {
            return;
        }
        let alpha = sgd.learning_rate * (1.0 - epoch as f64 / sgd.epochs as f64);
        // One entry into the pool per epoch: entering it from outside for each phase
        // cost a tenth of the SGD in thread hand-offs.
        rayon::scope(|_| {
            for p in 0..g.bounds.len() - 1 {
                let (lo, hi) = (g.bounds[p], g.bounds[p + 1]);
                // The phase's points move in `moved`; everything is read from `z`, which
                // holds the earlier phases' moves and not yet this one's.
                moved.clear();
                moved.extend_from_slice(&z[lo * d..hi * d]);
                let at = |j: usize| &z[j * d..(j + 1) * d];
                // Chunk c covers heads lo + CHUNK·c.. and their edges.
                let mut edge_parts = Vec::new();
                let (mut rest_next, mut rest_neg) = (
                    &mut next[g.offsets[lo]..g.offsets[hi]],
                    &mut next_negative[g.offsets[lo]..g.offsets[hi]],
                );
                for s in (lo..hi).step_by(CHUNK) {
                    let len = g.offsets[(s + CHUNK).min(hi)] - g.offsets[s];
                    let (a, r1) = std::mem::take(&mut rest_next).split_at_mut(len);
                    let (b, r2) = std::mem::take(&mut rest_neg).split_at_mut(len);
                    edge_parts.push((a, b));
                    rest_next = r1;
                    rest_neg = r2;
                }
                moved
                    .par_chunks_mut(CHUNK * d)
                    .zip(edge_parts.into_par_iter())
                    .enumerate()
                    .for_each(|(c, (out, (next_part, neg_part)))| {
                        let s = lo + c * CHUNK;
                        let base = g.offsets[s];
                        let (mut others, mut start) = (Vec::with_capacity(LANES * d), Vec::new());
                        for (r, pos) in out.chunks_exact_mut(d).enumerate() {
                            let i = s + r;
                            let mut rng: Option<Rng> = None;
                            for e in g.offsets[i]..g.offsets[i + 1] {
                                let local = e - base;
                                if next_part[local] > epoch as f64 {
                                    continue;
                                }
                                attract_to(pos, at(g.cols[e] as usize), 2.0 * alpha, sgd);
                                next_part[local] += g.per_sample[e];
                                let due =
                                    ((epoch as f64 - neg_part[local]) / per_negative[e]).floor();
                                let count = if due > 0.0 { due as usize } else { 0 };
                                let rng = rng.get_or_insert_with(|| {
                                    stream(sgd.seed, epoch as u64, g.order[i] as u64)
                                });
                                // In groups of up to LANES, each group from one position.
                                for group in (0..count).step_by(LANES) {
                                    others.clear();
                                    for _ in group..count.min(group + LANES) {
                                        let k = rng.below(n);
                                        if k != i {
                                            // Element by element: a slice copy calls
                                            // memmove, which for d = 2 cost more than
                                            // the arithmetic.
                                            for &v in at(k) {
                                                others.push(v);
                                            }
                                        }
                                    }
                                    repel_from(pos, &others, alpha, sgd, &mut start);
                                }
                                neg_part[local] += count as f64 * per_negative[e];
                            }
                        }
                    });
                z[lo * d..hi * d].copy_from_slice(&moved);
            }
        });
        report(epoch + 1);
    }
    for (new, &old) in g.order.iter().enumerate() {
        y[old * d..(old + 1) * d].copy_from_slice(&z[new * d..(new + 1) * d]);
    }
}

/// Moves one new point `pos` against the fixed training embedding `y` (n×d)
/// along its memberships `v` to training points `nb` (umap-learn's transform made
/// sample-wise: the schedule is normalised by the largest possible membership, 1, not
/// by the batch's largest, and the negative samples come from `rng`, seeded by the row's
/// own bytes). Learning rate `sgd.learning_rate`, decaying linearly over `sgd.epochs`.
pub(crate) fn optimise_point(
    pos: &mut [f64],
    y: MatRef<'_, f64>,
    nb: &[usize],
    v: &[f64],
    sgd: &Sgd,
    rng: &mut Rng,
) {
    let (n, d) = (y.nrows(), pos.len());
    // The training point being pulled towards, those pushed away from.
    let mut other = vec![0.0; d];
    let (mut others, mut start) = (Vec::with_capacity(LANES * d), Vec::new());
    let row = |j: usize, other: &mut [f64]| {
        for (c, o) in other.iter_mut().enumerate() {
            *o = y[(j, c)];
        }
    };
    let epochs = sgd.epochs as f64;
    // Edges with v < 1/epochs are never sampled.
    let edges: Vec<(usize, f64)> = nb
        .iter()
        .zip(v)
        .filter(|(_, &w)| w >= 1.0 / epochs && w > 0.0)
        .map(|(&j, &w)| (j, 1.0 / w))
        .collect();
    let mut next: Vec<f64> = edges.iter().map(|e| e.1).collect();
    let mut next_negative: Vec<f64> = edges
        .iter()
        .map(|e| e.1 / sgd.negative_sample_rate)
        .collect();
    for epoch in 0..sgd.epochs {
        let alpha = sgd.learning_rate * (1.0 - epoch as f64 / epochs);
        for (t, &(j, per)) in edges.iter().enumerate() {
            if next[t] > epoch as f64 {
                continue;
            }
            row(j, &mut other);
            attract_to(pos, &other, alpha, sgd);
            next[t] += per;
            let per_negative = per / sgd.negative_sample_rate;
            let due = ((epoch as f64 - next_negative[t]) / per_negative).floor();
            let count = if due > 0.0 { due as usize } else { 0 };
            for group in (0..count).step_by(LANES) {
                others.clear();
                for _ in group..count.min(group + LANES) {
                    let k = rng.below(n);
                    others.extend((0..d).map(|c| y[(k, c)]));
                }
                repel_from(pos, &others, alpha, sgd, &mut start);
            }
            next_negative[t] += count as f64 * per_negative;
        }
    }
}

/// How the initialisation went: `spectral`, or `random` for components the spectral
/// route could not embed (too small, or the eigensolver failed), with the reason.
#[derive(Clone, Debug, Default)]
pub(crate) struct InitReport {
    pub(crate) components: usize,
    pub(crate) random_components: usize,
    pub(crate) note: Option<String>,
}

/// The spectral initialisation (row-major n×d): for each connected component of `w`,
/// the eigenvectors 1..d of its normalised adjacency D^{−1/2} W D^{−1/2} (Laplacian
/// eigenmaps), scaled to a largest |coordinate| of 1; components too small for d
/// eigenvectors (or whose eigenproblem fails) are placed uniformly at random in the unit
/// cube. Several components are then laid side by side: component c is scaled by 0.3 and
/// shifted to the position of its centroid in `x` projected on the centroids' principal
/// axes (on a circle when there are too few components for d axes), at least 1 apart.
/// The whole is scaled to a largest |coordinate| of 10 and N(0, 1e−4) noise is added.
pub(crate) fn spectral(
    w: &SymCsr,
    x: MatRef<'_, f64>,
    d: usize,
    seed: u64,
) -> (Vec<f64>, InitReport) {
    let n = w.n();
    let (label, sizes) = w.components();
    let mut rng = Rng::new(seed);
    let mut y = vec![0.0; n * d];
    let mut report = InitReport {
        components: sizes.len(),
        ..Default::default()
    };
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); sizes.len()];
    for (i, &c) in label.iter().enumerate() {
        members[c].push(i);
    }
    for (c, m) in members.iter().enumerate() {
        let local = if m.len() >= d + 2 {
            component_eigenvectors(w, m, &label, c, d)
        } else {
            Err("fewer than d + 2 points".to_string())
        };
        match local {
            Ok(v) => {
                let big = v.iter().fold(0.0f64, |s, t| s.max(t.abs()));
                let f = if big > 0.0 { 1.0 / big } else { 1.0 };
                for (r, &i) in m.iter().enumerate() {
                    for k in 0..d {
                        y[i * d + k] = v[r * d + k] * f;
                    }
                }
            }
            Err(why) => {
                report.random_components += 1;
                report.note.get_or_insert(format!(
                    "component {c} ({} points) placed at random: {why}",
                    m.len()
                ));
                for &i in m {
                    for k in 0..d {
                        y[i * d + k] = 2.0 * rng.uniform() - 1.0;
                    }
                }
            }
        }
    }
    if members.len() > 1 {
        let offsets = component_offsets(x, &members, d);
        for (c, m) in members.iter().enumerate() {
            for &i in m {
                for k in 0..d {
                    y[i * d + k] = 0.3 * y[i * d + k] + offsets[c * d + k];
                }
            }
        }
    }
    let big = y.iter().fold(0.0f64, |s, t| s.max(t.abs()));
    let f = if big > 0.0 { 10.0 / big } else { 1.0 };
    for v in y.iter_mut() {
        *v = *v * f + 1e-4 * rng.normal();
    }
    (y, report)
}

/// Eigenvectors 1..d of component `c` (points `m`) of `w`, row-major |m|×d.
fn component_eigenvectors(
    w: &SymCsr,
    m: &[usize],
    label: &[usize],
    c: usize,
    d: usize,
) -> Result<Vec<f64>, String> {
    let mut at = vec![usize::MAX; w.n()];
    for (r, &i) in m.iter().enumerate() {
        at[i] = r;
    }
    let degree: Vec<f64> = m.iter().map(|&i| w.row(i).1.iter().sum()).collect();
    let rows: Vec<Vec<(u32, f64)>> = m
        .iter()
        .enumerate()
        .map(|(r, &i)| {
            let (cols, vals) = w.row(i);
            cols.iter()
                .zip(vals)
                .filter(|(&j, _)| label[j as usize] == c)
                .map(|(&j, &v)| {
                    let s = at[j as usize];
                    (s as u32, v / (degree[r] * degree[s]).sqrt())
                })
                .collect()
        })
        .collect();
    let s = SymCsr::from_rows(rows);
    let total: f64 = degree.iter().sum();
    let top: Vec<f64> = degree.iter().map(|g| (g / total).sqrt()).collect();
    let e = top_eigen_below_top(
        Symmetric::Sparse(&s),
        d,
        &[&top],
        Solver::Auto,
        SHIFT_INVERT_SIGMA,
        INIT_RESIDUAL,
    )
    .map_err(|e| e.to_string())?;
    if e.vectors.ncols() < d
        || e.vectors
            .as_ref()
            .col_iter()
            .any(|v| v.iter().any(|t| !t.is_finite()))
    {
        return Err("the eigensolver returned fewer or non-finite vectors".into());
    }
    Ok((0..m.len() * d)
        .map(|t| e.vectors[(t / d, t % d)])
        .collect())
}

/// Shift of the shift-invert route for the fuzzy graph's eigenvalues near 1.
const SHIFT_INVERT_SIGMA: f64 = 1e-4;

/// Ritz residual, relative to the norm bound, at which the initialisation's Lanczos
/// stops (umap-learn's `eigsh` stops at 1e-4): a starting layout, moved by the SGD and
/// perturbed by noise, needs no more, and Lanczos to round-off on a large fuzzy graph
/// (whose sparse factor is too dense for shift-invert) was 40 % of the fit's time. On
/// Fashion-MNIST (60000 points) the unrestarted Lanczos of a rough solve reaches it in
/// 130 steps (0.95 s), its vectors 9e-4 (sine of the largest principal angle) from the
/// converged ones; at 1e-4, 100 steps and 5e-2.
const INIT_RESIDUAL: f64 = 1e-5;

/// The positions of the components (row-major, one row of d per component): their
/// centroids in `x` on the centroids' top principal axes, or on a circle (a line when
/// d = 1) when there are fewer components than d + 1; scaled so that the closest two
/// are 1 apart.
fn component_offsets(x: MatRef<'_, f64>, members: &[Vec<usize>], d: usize) -> Vec<f64> {
    let count = members.len();
    let w = x.ncols();
    let centroids = Mat::from_fn(count, w, |c, k| {
        members[c].iter().map(|&i| x[(i, k)]).sum::<f64>() / members[c].len() as f64
    });
    let projected = (count > d)
        .then(|| {
            crate::methods::pca::Pca {
                n_components: d,
                ..Default::default()
            }
            .fit(centroids.as_ref())
            .ok()
        })
        .flatten();
    let mut out: Vec<f64> = match projected {
        Some(p) => {
            use crate::methods::OutOfSample;
            let e = p.embedding();
            (0..count * d).map(|t| e[(t / d, t % d)]).collect()
        }
        None => (0..count * d)
            .map(|t| {
                let (c, k) = (t / d, t % d);
                let angle = std::f64::consts::TAU * c as f64 / count as f64;
                match (d, k) {
                    (1, _) => c as f64,
                    (_, 0) => angle.cos(),
                    (_, 1) => angle.sin(),
                    _ => 0.0,
                }
            })
            .collect(),
    };
    let mut closest = f64::INFINITY;
    for a in 0..count {
        for b in 0..a {
            closest = closest.min(sq(&out[a * d..(a + 1) * d], &out[b * d..(b + 1) * d]).sqrt());
        }
    }
    if closest.is_finite() && closest > 0.0 {
        out.iter_mut().for_each(|v| *v /= closest);
    } else {
        // Coincident centroids: a line, one apart.
        for c in 0..count {
            out[c * d] += c as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phased_graph_is_the_same_graph_relabelled_phase_major() {
        // A ring of 37 points, each joined to the next two on both sides.
        let n = 37;
        let rows = (0..n)
            .map(|i| {
                let mut r: Vec<(u32, f64)> = [n - 2, n - 1, 1, 2]
                    .iter()
                    .map(|s| (((i + s) % n) as u32, 1.0 + ((i + s) % n) as f64))
                    .collect();
                r.sort_by_key(|e| e.0);
                r
            })
            .collect();
        let w = SymCsr::from_rows(rows);
        let g = Phased::new(&w, 16, 40.0);
        // Phase p is the labels bounds[p]..bounds[p + 1] and holds p, p + 16, ….
        assert_eq!(g.bounds.len(), 17);
        assert_eq!(g.bounds[16], n);
        for p in 0..16 {
            let held: Vec<usize> = g.order[g.bounds[p]..g.bounds[p + 1]].to_vec();
            assert_eq!(held, (p..n).step_by(16).collect::<Vec<_>>());
        }
        // Every edge keeps its ends and its rate, in the caller's order within a row.
        for (new, &old) in g.order.iter().enumerate() {
            let ends: Vec<usize> = g.cols[g.offsets[new]..g.offsets[new + 1]]
                .iter()
                .map(|&c| g.order[c as usize])
                .collect();
            let want: Vec<usize> = w.cols[w.offsets[old]..w.offsets[old + 1]]
                .iter()
                .map(|&c| c as usize)
                .collect();
            assert_eq!(ends, want);
            for (e, f) in (g.offsets[new]..g.offsets[new + 1]).zip(w.offsets[old]..) {
                assert_eq!(g.per_sample[e], 40.0 / w.vals[f]);
            }
        }
    }
}
