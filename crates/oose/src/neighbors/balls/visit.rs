//! What a search collects, leaf by leaf ([`Visit`]): the points within a radius, the k
//! nearest (with ties) and the points whose ball holds the query; and where a k-th
//! nearest search puts its results.

use super::{Links, Scratch};

/// What a descent collects: the radius within which it must look in a node whose
/// largest ball is `node_r2`, and what it does with the points of a leaf (tree
/// positions from `start`, their squared distances, their balls' squared radii or an
/// empty slice).
pub(super) trait Visit {
    fn limit(&self, node_r2: f64) -> f64;
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]);
    /// k, for a search of the k nearest: a caller that knows an upper bound of the
    /// k-th nearest distance may then pass it to [`Visit::tighten`].
    fn rank(&self) -> Option<usize> {
        None
    }
    /// Lowers the search's bound to `bound`, an upper bound of the exact k-th nearest
    /// squared distance: the candidates still take every point within the k-th
    /// nearest distance, so the search finds what it would have (see [`Nearest`]).
    fn tighten(&mut self, _bound: f64) {}
}

/// Every point with d ≤ r².
pub(super) struct Within<'a> {
    pub(super) r2: f64,
    pub(super) out: &'a mut Vec<(u32, f64)>,
}

impl Visit for Within<'_> {
    #[inline]
    fn limit(&self, _: f64) -> f64 {
        self.r2
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], _: &[f64]) {
        for (j, &d) in d.iter().enumerate() {
            if d <= self.r2 {
                self.out.push(((start + j) as u32, d));
            }
        }
    }
}

/// The k nearest (with ties), and with `balls` also every point whose ball holds q
/// (those go to `Scratch::members`).
///
/// The candidates are every point reached while its distance was at most the bound. The
/// bound starts at ∞ and, whenever the candidates have grown by k, becomes their k-th
/// smallest distance, which is at least the k-th smallest of all points reached and at
/// most the previous bound; candidates above it are dropped. So the candidates always
/// hold every point reached within the bound, their final k-th smallest distance is the
/// exact k-th nearest distance, and a node is skipped only when its box lies beyond the
/// bound (and beyond its largest ball).
pub(super) struct Nearest<'a> {
    pub(super) k: usize,
    pub(super) balls: bool,
    pub(super) s: &'a mut Scratch,
}

impl Visit for Nearest<'_> {
    #[inline]
    fn limit(&self, node_r2: f64) -> f64 {
        if self.balls {
            self.s.bound.max(node_r2)
        } else {
            self.s.bound
        }
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]) {
        let s = &mut *self.s;
        let b = s.bound;
        for (j, &d) in d.iter().enumerate() {
            if d <= b {
                s.cand.push(((start + j) as u32, d));
            }
        }
        if self.balls {
            for ((j, &d), &r) in d.iter().enumerate().zip(r2) {
                if d <= r {
                    s.members.push(((start + j) as u32, d));
                }
            }
        }
        if s.cand.len() >= s.next {
            let b = s.kth(self.k);
            s.bound = b;
            s.cand.retain(|c| c.1 <= b);
            s.next = s.cand.len() + self.k;
        }
    }
    #[inline]
    fn rank(&self) -> Option<usize> {
        Some(self.k)
    }
    #[inline]
    fn tighten(&mut self, bound: f64) {
        self.s.bound = self.s.bound.min(bound);
    }
}

/// Every point whose ball holds q.
pub(super) struct Containing<'a> {
    pub(super) out: &'a mut Vec<(u32, f64)>,
}

impl Visit for Containing<'_> {
    #[inline]
    fn limit(&self, node_r2: f64) -> f64 {
        node_r2
    }
    #[inline]
    fn leaf(&mut self, start: usize, d: &[f64], r2: &[f64]) {
        for ((j, &d), &r) in d.iter().enumerate().zip(r2) {
            if d <= r {
                self.out.push(((start + j) as u32, d));
            }
        }
    }
}

/// Where a k-th-nearest search puts what it finds for each query: its exact k-th
/// nearest squared distance r², and where asked its ball — the points within r² (ties
/// included) as a list of `(original index, d)` in the index's order.
pub(super) struct KthOut<'a> {
    pub(super) r2: &'a mut Vec<f64>,
    pub(super) balls: Option<BallsOut<'a>>,
}

/// The original index of each tree position, and the balls.
pub(super) type BallsOut<'a> = (&'a [u32], &'a mut Links);

impl KthOut<'_> {
    /// Records one query from candidates (tree positions) that hold every point
    /// within its k-th nearest squared distance `r2`.
    pub(super) fn push(&mut self, cand: &[(u32, f64)], r2: f64) {
        self.r2.push(r2);
        if let Some((ids, out)) = &mut self.balls {
            out.push_list(
                cand.iter()
                    .filter(|c| c.1 <= r2)
                    .map(|&(p, d)| (ids[p as usize] as usize, d)),
            );
        }
    }
}

/// Appends the mirror-rule links found by a [`Nearest`] search with balls whose k-th
/// smallest distance is `r2q`: the candidates within r2q and the points whose ball
/// holds the query, as `(original index, d)` sorted by index, each once.
pub(super) fn push_mirror(s: &Scratch, r2q: f64, ids: &[u32], out: &mut Vec<(usize, f64)>) {
    let start = out.len();
    out.extend(
        s.cand
            .iter()
            .filter(|c| c.1 <= r2q)
            .chain(&s.members)
            .map(|&(p, d)| (ids[p as usize] as usize, d)),
    );
    // A point both near and holding q in its ball was listed twice.
    let mut linked = out.split_off(start);
    linked.sort_unstable_by_key(|p| p.0);
    linked.dedup_by_key(|p| p.0);
    out.extend(linked);
}
