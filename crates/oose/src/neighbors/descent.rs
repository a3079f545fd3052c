//! Approximate kNN graphs by NN-descent (Dong, Charikar & Li 2011; maths §6).
//!
//! 1. **Start**: the leaves of `trees` random-projection trees (each node split by the
//!    perpendicular bisector of two of its points picked at random, down to leaves of at
//!    most `leaf` points); every point is offered every other point of its leaves.
//! 2. **Descent**: a neighbour of a neighbour is likely a neighbour. Each round, every
//!    point lists at most `max_candidates` of its neighbours that are new since the last
//!    round (with the points that list it as theirs), and the old ones likewise; every
//!    pair new–new and new–old in one list is measured and offered to both points. The
//!    rounds stop when fewer than `delta`·N·k offers are taken, or after `max_rounds`.
//!
//! Candidates are sampled by a hash of (point, candidate, round), offers are gathered
//! point by point in a fixed order and then applied target by target: the graph does not
//! depend on the number of threads. The cost is about (trees·leaf + rounds·1.5·
//! max_candidates²)·N distances, against N² for the exact graph, but the exact brute
//! force runs at GEMM speed: on Fashion-MNIST PCA-50 (60000 points, k = 91) NN-descent
//! takes 1.3× the exact graph's time at recall 0.999, so `auto` keeps the exact graph
//! below 100000 points.

use super::Neighbours;
use crate::rng::Rng;
use faer::MatRef;
use rayon::prelude::*;

/// The settings of NN-descent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Descent {
    /// Random-projection trees of the start (default 4).
    pub trees: usize,
    /// Most points in a tree's leaf (default max(k, 60)).
    pub leaf: usize,
    /// Most new (and most old) candidates per point and round (default 20).
    pub max_candidates: usize,
    /// Most rounds (default 12).
    pub max_rounds: usize,
    /// Stop when a round takes fewer than delta·N·k offers (default 0.001).
    pub delta: f64,
    /// Seed of the trees and the sampling.
    pub seed: u64,
}

impl Descent {
    /// The defaults for k neighbours.
    ///
    /// ```
    /// let s = oose::neighbors::Descent::for_k(90);
    /// assert_eq!((s.trees, s.leaf, s.max_candidates), (4, 90, 20));
    /// ```
    pub fn for_k(k: usize) -> Descent {
        Descent {
            trees: 4,
            leaf: k.max(60),
            max_candidates: 20,
            max_rounds: 12,
            delta: 0.001,
            seed: 0,
        }
    }
}

/// Squared Euclidean distance (four accumulators, so that it vectorises).
#[inline(always)]
pub(crate) fn sq(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for t in 0..4 {
            let d = x[t] - y[t];
            acc[t] += d * d;
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += (x - y) * (x - y);
    }
    s
}

/// [`sq`] with the four accumulators in one AVX register: the same operations in the
/// same order (no fused multiply–add), so the same bits. The compiler does not keep
/// [`sq`]'s accumulators in one register by itself (measured: two halves and shuffles).
///
/// # Safety
/// The CPU must have AVX (every CPU with AVX2 has it).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
pub(crate) unsafe fn sq_avx(a: &[f64], b: &[f64]) -> f64 {
    use core::arch::x86_64::*;
    let n = a.len().min(b.len());
    let whole = n / 4 * 4;
    let mut acc = _mm256_setzero_pd();
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 4 <= whole <= the length of both slices.
        let (x, y) = unsafe {
            (
                _mm256_loadu_pd(a.as_ptr().add(i)),
                _mm256_loadu_pd(b.as_ptr().add(i)),
            )
        };
        let d = _mm256_sub_pd(x, y);
        acc = _mm256_add_pd(acc, _mm256_mul_pd(d, d));
        i += 4;
    }
    let mut lanes = [0.0; 4];
    // SAFETY: `lanes` holds four values.
    unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc) };
    let mut s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for t in whole..n {
        s += (a[t] - b[t]) * (a[t] - b[t]);
    }
    s
}

/// [`sq_avx`] of `a` against four rows at once: four independent chains in flight
/// instead of one waiting on its own additions, each row's operations in
/// [`sq_avx`]'s order, so each result has its bits.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
pub(crate) unsafe fn sq4_avx(a: &[f64], b: [&[f64]; 4]) -> [f64; 4] {
    use core::arch::x86_64::*;
    let n = b.iter().fold(a.len(), |n, r| n.min(r.len()));
    let whole = n / 4 * 4;
    let mut acc = [_mm256_setzero_pd(); 4];
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 4 <= whole <= the length of every slice.
        let x = unsafe { _mm256_loadu_pd(a.as_ptr().add(i)) };
        for (acc, r) in acc.iter_mut().zip(b) {
            // SAFETY: as above.
            let d = _mm256_sub_pd(x, unsafe { _mm256_loadu_pd(r.as_ptr().add(i)) });
            *acc = _mm256_add_pd(*acc, _mm256_mul_pd(d, d));
        }
        i += 4;
    }
    let mut out = [0.0; 4];
    for ((o, acc), r) in out.iter_mut().zip(acc).zip(b) {
        let mut lanes = [0.0; 4];
        // SAFETY: `lanes` holds four values.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc) };
        let mut s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        for t in whole..n {
            s += (a[t] - r[t]) * (a[t] - r[t]);
        }
        *o = s;
    }
    out
}

/// A 64-bit mix of three numbers (the sampling priority).
#[inline]
fn hash(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(c.wrapping_mul(0x1656_67B1_9E37_79F9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One point's neighbours: sorted by (squared distance, index), with a flag "new since
/// the last round".
#[derive(Clone, Debug, Default)]
struct List {
    items: Vec<(f64, u32, bool)>,
}

impl List {
    fn bound(&self, k: usize) -> f64 {
        if self.items.len() < k {
            f64::INFINITY
        } else {
            self.items[k - 1].0
        }
    }

    /// Offers `j` at squared distance `d`; true if it entered.
    fn offer(&mut self, k: usize, d: f64, j: u32) -> bool {
        let key = |e: &(f64, u32, bool)| (e.0, e.1);
        if self.items.len() >= k {
            let last = key(&self.items[k - 1]);
            if d.total_cmp(&last.0).then(j.cmp(&last.1)).is_ge() {
                return false;
            }
        }
        if self.items.iter().any(|e| e.1 == j) {
            return false;
        }
        let pos = self
            .items
            .partition_point(|e| e.0.total_cmp(&d).then(e.1.cmp(&j)).is_lt());
        self.items.insert(pos, (d, j, true));
        self.items.truncate(k);
        true
    }
}

/// The leaves of one random-projection tree over the rows of `x` (row-major, width `w`).
fn rp_leaves(x: &[f64], w: usize, n: usize, leaf: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut stack: Vec<Vec<u32>> = vec![(0..n as u32).collect()];
    let mut normal = vec![0.0; w];
    while let Some(idx) = stack.pop() {
        if idx.len() <= leaf {
            out.push(idx);
            continue;
        }
        let a = idx[rng.below(idx.len())] as usize;
        let b = idx[rng.below(idx.len())] as usize;
        let (xa, xb) = (&x[a * w..(a + 1) * w], &x[b * w..(b + 1) * w]);
        let mut offset = 0.0;
        for c in 0..w {
            normal[c] = xa[c] - xb[c];
            offset += normal[c] * 0.5 * (xa[c] + xb[c]);
        }
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for &i in &idx {
            let p = &x[i as usize * w..(i as usize + 1) * w];
            let s: f64 = p.iter().zip(&normal).map(|(u, v)| u * v).sum::<f64>() - offset;
            if s > 0.0 || (s == 0.0 && rng.below(2) == 0) {
                left.push(i);
            } else {
                right.push(i);
            }
        }
        if left.is_empty() || right.is_empty() {
            // Coincident points (or an unlucky pair): halve at random.
            let mut all = idx;
            for t in (1..all.len()).rev() {
                all.swap(t, rng.below(t + 1));
            }
            right = all.split_off(all.len() / 2);
            left = all;
        }
        stack.push(right);
        stack.push(left);
    }
    out
}

/// The approximate k nearest other rows of `points` for every row (indices and Euclidean
/// distances, nearest first), by NN-descent with the settings `s`.
pub fn knn_descent(points: MatRef<'_, f64>, k: usize, s: &Descent) -> Neighbours {
    let (n, w) = (points.nrows(), points.ncols());
    let k = k.min(n.saturating_sub(1));
    let x = crate::linalg::row_major(points);
    let row = |i: usize| &x[i * w..(i + 1) * w];
    let mut lists: Vec<List> = vec![List::default(); n];
    if k == 0 {
        return (vec![Vec::new(); n], vec![Vec::new(); n]);
    }
    // 1. The start: every point meets the other points of its leaves.
    let forests: Vec<Vec<Vec<u32>>> = (0..s.trees)
        .into_par_iter()
        .map(|t| rp_leaves(&x, w, n, s.leaf.max(2), hash(s.seed, t as u64, 0)))
        .collect();
    let mut leaf_of = vec![vec![0u32; n]; s.trees];
    for (t, leaves) in forests.iter().enumerate() {
        for (l, leaf) in leaves.iter().enumerate() {
            for &i in leaf {
                leaf_of[t][i as usize] = l as u32;
            }
        }
    }
    lists.par_iter_mut().enumerate().for_each(|(i, list)| {
        for t in 0..s.trees {
            for &j in &forests[t][leaf_of[t][i] as usize] {
                if j as usize != i {
                    list.offer(k, sq(row(i), row(j as usize)), j);
                }
            }
        }
    });
    drop(leaf_of);
    // 2. The rounds.
    let mc = s.max_candidates.max(1);
    for round in 0..s.max_rounds {
        // A stop request ends the rounds; the fit reports it (`progress::check`).
        if crate::progress::stop_requested() {
            break;
        }
        let r = round as u64 + 1;
        // Forward candidates: up to mc new ones (marked old once listed), the old ones.
        let forward: Vec<(Vec<u32>, Vec<u32>)> = lists
            .par_iter_mut()
            .enumerate()
            .map(|(i, list)| {
                let mut new: Vec<(u64, usize)> = list
                    .items
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.2)
                    .map(|(p, e)| (hash(i as u64, e.1 as u64, r), p))
                    .collect();
                new.sort_unstable();
                new.truncate(mc);
                let mut old: Vec<(u64, u32)> = list
                    .items
                    .iter()
                    .filter(|e| !e.2)
                    .map(|e| (hash(i as u64, e.1 as u64, r), e.1))
                    .collect();
                old.sort_unstable();
                old.truncate(mc);
                let new_ids = new.iter().map(|&(_, p)| list.items[p].1).collect();
                for &(_, p) in &new {
                    list.items[p].2 = false;
                }
                (new_ids, old.into_iter().map(|e| e.1).collect())
            })
            .collect();
        // Reverse candidates, then the joint lists capped at mc by priority.
        let mut rev: Vec<(Vec<u32>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); n];
        for (i, (new, old)) in forward.iter().enumerate() {
            for &j in new {
                rev[j as usize].0.push(i as u32);
            }
            for &j in old {
                rev[j as usize].1.push(i as u32);
            }
        }
        let cands: Vec<(Vec<u32>, Vec<u32>)> = forward
            .into_par_iter()
            .zip(rev.into_par_iter())
            .enumerate()
            .map(|(i, ((mut new, mut old), (rn, ro)))| {
                let cap = |v: &mut Vec<u32>| {
                    v.sort_unstable();
                    v.dedup();
                    if v.len() > mc {
                        v.sort_by_key(|&j| hash(j as u64, i as u64, r));
                        v.truncate(mc);
                        v.sort_unstable();
                    }
                };
                new.extend(rn);
                old.extend(ro);
                cap(&mut new);
                cap(&mut old);
                old.retain(|j| new.binary_search(j).is_err());
                (new, old)
            })
            .collect();
        // The local joins: offers (target, other, d²), point by point.
        let bounds: Vec<f64> = lists.par_iter().map(|l| l.bound(k)).collect();
        let offers: Vec<Vec<(u32, u32, f64)>> = cands
            .par_iter()
            .map(|(new, old)| {
                let mut out = Vec::new();
                for (a, &u) in new.iter().enumerate() {
                    let ru = row(u as usize);
                    for &v in new[a + 1..].iter().chain(old.iter()) {
                        if u == v {
                            continue;
                        }
                        let d = sq(ru, row(v as usize));
                        if d <= bounds[u as usize] {
                            out.push((u, v, d));
                        }
                        if d <= bounds[v as usize] {
                            out.push((v, u, d));
                        }
                    }
                }
                out
            })
            .collect();
        // Applied target by target, in the order gathered.
        let mut count = vec![0usize; n + 1];
        for o in offers.iter().flatten() {
            count[o.0 as usize + 1] += 1;
        }
        for t in 0..n {
            count[t + 1] += count[t];
        }
        let mut sorted = vec![(0u32, 0.0f64); count[n]];
        let mut next = count.clone();
        for o in offers.iter().flatten() {
            let t = o.0 as usize;
            sorted[next[t]] = (o.1, o.2);
            next[t] += 1;
        }
        drop(offers);
        let taken: usize = lists
            .par_iter_mut()
            .enumerate()
            .map(|(t, list)| {
                sorted[count[t]..count[t + 1]]
                    .iter()
                    .filter(|&&(j, d)| list.offer(k, d, j))
                    .count()
            })
            .sum();
        if (taken as f64) < s.delta * (n * k) as f64 {
            break;
        }
    }
    lists
        .into_iter()
        .map(|l| {
            (
                l.items.iter().map(|e| e.1 as usize).collect::<Vec<_>>(),
                l.items.iter().map(|e| e.0.sqrt()).collect::<Vec<_>>(),
            )
        })
        .unzip()
}

/// The fraction of the exact neighbours found: Σᵢ |approx ∩ exact| / Σᵢ |exact|.
pub fn recall(approx: &[Vec<usize>], exact: &[Vec<usize>]) -> f64 {
    let (mut hit, mut all) = (0usize, 0usize);
    for (a, e) in approx.iter().zip(exact) {
        all += e.len();
        hit += e.iter().filter(|j| a.contains(j)).count();
    }
    if all == 0 {
        1.0
    } else {
        hit as f64 / all as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbors::knn_brute;
    use faer::Mat;

    #[test]
    fn descent_finds_almost_all_neighbours_whatever_the_threads() {
        let mut rng = Rng::new(11);
        let x = Mat::from_fn(3000, 12, |i, _| (i % 7) as f64 + rng.normal());
        let k = 15;
        let (exact, d_exact) = knn_brute(x.as_ref(), x.as_ref(), k, true);
        let s = Descent::for_k(k);
        let (approx, d_approx) = knn_descent(x.as_ref(), k, &s);
        let r = recall(&approx, &exact);
        assert!(r > 0.98, "recall {r}");
        // Distances sorted, and never below the exact k-th.
        for (a, e) in d_approx.iter().zip(&d_exact) {
            assert!(a.windows(2).all(|p| p[0] <= p[1]));
            assert!(a[k - 1] >= e[k - 1] - 1e-12);
        }
        let again = crate::testing::on_threads(1, || knn_descent(x.as_ref(), k, &s));
        assert_eq!(again.0, approx);
    }

    #[test]
    fn coincident_points_and_tiny_sets() {
        let x = Mat::from_fn(50, 3, |i, _| (i / 25) as f64);
        let (idx, dist) = knn_descent(x.as_ref(), 5, &Descent::for_k(5));
        assert!(idx.iter().all(|r| r.len() == 5));
        assert!(dist.iter().flatten().all(|d| *d == 0.0));
        let one = Mat::from_fn(1, 3, |_, _| 1.0);
        let (idx, _) = knn_descent(one.as_ref(), 5, &Descent::for_k(5));
        assert_eq!(idx, vec![Vec::<usize>::new()]);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx_distance_has_the_same_bits() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        let mut rng = Rng::new(11);
        for len in 0..70 {
            for _ in 0..20 {
                let a: Vec<f64> = (0..len).map(|_| rng.normal() * 1e3).collect();
                let b: Vec<f64> = (0..len).map(|_| rng.normal()).collect();
                // SAFETY: the CPU has AVX (checked above).
                let fast = unsafe { sq_avx(&a, &b) };
                assert_eq!(fast.to_bits(), sq(&a, &b).to_bits(), "length {len}");
                // Four rows at once: each with its own bits.
                let rows: Vec<Vec<f64>> = (0..4)
                    .map(|r| b.iter().map(|v| v * (r + 1) as f64).collect())
                    .collect();
                // SAFETY: the CPU has AVX (checked above).
                let four = unsafe { sq4_avx(&a, [&rows[0], &rows[1], &rows[2], &rows[3]]) };
                for (r, d) in rows.iter().zip(four) {
                    assert_eq!(d.to_bits(), sq(&a, r).to_bits(), "length {len}");
                }
            }
        }
    }
}
