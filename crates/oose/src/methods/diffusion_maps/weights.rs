//! The weight matrix W of a point set (dense, kNN by the symmetric rule, or threshold η) and its α-normalisation into the symmetric kernel D^{−1/2} W^(α) D^{−1/2} (maths §1, §7).

#[allow(unused_imports)]
use super::*;
use crate::diagnostics::direction::CANDIDATES;
use crate::neighbors::Neighbours;

/// The weights W (dense or sparse, symmetric, wᵢᵢ = 1) of a point set.
#[derive(Clone, Debug)]
pub enum Weights {
    /// N×N.
    Dense(Mat<f64>),
    /// Sparse symmetric.
    Sparse(SymCsr),
}

impl Weights {
    pub(crate) fn row_sums(&self) -> Vec<f64> {
        match self {
            Weights::Dense(w) => (0..w.nrows())
                .into_par_iter()
                .map(|i| w.col_as_slice(i).iter().sum())
                .collect(),
            Weights::Sparse(s) => s.row_sums(),
        }
    }

    /// Replaces w_ij by f(i, j, w_ij).
    pub(crate) fn map(&mut self, f: impl Fn(usize, usize, f64) -> f64 + Sync) {
        match self {
            Weights::Dense(w) => {
                use faer::reborrow::ReborrowMut;
                let n = w.nrows();
                w.as_mut()
                    .par_col_chunks_mut(1)
                    .enumerate()
                    .for_each(|(j, mut c)| {
                        let mut col = c.rb_mut().col_mut(0);
                        for i in 0..n {
                            col[i] = f(i, j, col[i]);
                        }
                    });
            }
            Weights::Sparse(s) => s.map_entries(f),
        }
    }

    /// Connected components of the graph of positive weights: the label of each point
    /// and the sizes (label 0 the largest).
    pub(crate) fn components(&self) -> (Vec<usize>, Vec<usize>) {
        match self {
            Weights::Sparse(s) => s.components(),
            Weights::Dense(w) => {
                let n = w.nrows();
                let all_positive = (0..n)
                    .into_par_iter()
                    .all(|j| w.col_as_slice(j).iter().all(|&v| v > 0.0));
                if all_positive {
                    return (vec![0; n], vec![n]);
                }
                let rows = (0..n)
                    .map(|i| {
                        w.col_as_slice(i)
                            .iter()
                            .enumerate()
                            .filter(|p| *p.1 > 0.0)
                            .map(|(j, &v)| (j as u32, v))
                            .collect()
                    })
                    .collect();
                SymCsr::from_rows(rows).components()
            }
        }
    }
}

/// The α-normalised symmetric kernel of a point set, its weights' densities and degrees.
#[derive(Clone, Debug)]
pub struct NormalisedKernel {
    /// k_ij = w_ij / (q_i^α q_j^α sqrt(d_i d_j)).
    pub kernel: Weights,
    /// q_i = Σ_j w_ij.
    pub density: Vec<f64>,
    /// d_i = Σ_j w_ij / (q_i^α q_j^α).
    pub degree: Vec<f64>,
    /// ε actually used.
    pub epsilon: f64,
    /// Twice the maximal log-slope (an intrinsic-dimension estimate), when ε came from
    /// the log-slope rule.
    pub dimension_estimate: Option<f64>,
    /// kNN squared radii r²ᵢ (empty unless kNN).
    pub radii2: Vec<f64>,
    /// Connected component of each point (0 the largest) in the graph of positive
    /// weights.
    pub component: Vec<usize>,
    /// Component sizes, largest first (one entry: the graph is connected).
    pub component_sizes: Vec<usize>,
    /// Each point's nearest others found by a kNN fit, for the novelty score (see
    /// [`nearest_others`]).
    pub(crate) neighbours: Option<Neighbours>,
}

/// The weights of a point set with what their search found on the way.
struct Built {
    weights: Weights,
    epsilon: f64,
    dimension_estimate: Option<f64>,
    radii2: Vec<f64>,
    neighbours: Option<Neighbours>,
}

impl DiffusionKernel {
    pub(crate) fn validate(&self, n: usize) -> Result<()> {
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(Error::param(
                "alpha",
                format!("must be in [0, 1], got {}", self.alpha),
            ));
        }
        if let Epsilon::Value(e) = self.epsilon {
            if e.is_nan() || e <= 0.0 {
                return Err(Error::param("epsilon", format!("must be > 0, got {e}")));
            }
            if e.is_infinite() && self.sparsity == Sparsity::Dense {
                return Err(Error::param(
                    "epsilon",
                    "ε = ∞ makes every dense weight 1 (a rank-one kernel); use a kNN or threshold graph",
                ));
            }
        }
        match self.sparsity {
            Sparsity::Knn(k) if k == 0 || k >= n => Err(Error::param(
                "n_neighbors",
                format!(
                    "must be between 1 and N − 1 = {} (a point counts as its own nearest neighbour), got {k}",
                    n.saturating_sub(1)
                ),
            )),
            Sparsity::Threshold(eta) if !(eta > 0.0 && eta <= 1.0) => Err(Error::param(
                "threshold",
                format!("η must be in (0, 1], got {eta}"),
            )),
            _ => Ok(()),
        }
    }

    /// The kernel for N points: a kNN graph's `n_neighbors` ≥ N (from 2 points) lowered to
    /// N − 1, with the warning that says so (as umap-learn does; scikit-learn's estimator
    /// checks fit 10 points, fewer than the defaults ask for). Otherwise as it is.
    ///
    /// ```
    /// use oose::methods::diffusion_maps::{DiffusionKernel, Sparsity};
    /// let k = DiffusionKernel { sparsity: Sparsity::Knn(25), ..Default::default() };
    /// let (used, note) = k.lowered_for(10);
    /// assert_eq!(used.sparsity, Sparsity::Knn(9));
    /// assert!(note.unwrap().contains("lowered to N − 1 = 9"));
    /// assert!(k.lowered_for(100).1.is_none());
    /// ```
    pub fn lowered_for(&self, n: usize) -> (DiffusionKernel, Option<String>) {
        let Sparsity::Knn(k) = self.sparsity else {
            return (*self, None);
        };
        match crate::neighbors::lowered(k, n) {
            Some((k, note)) => (
                DiffusionKernel {
                    sparsity: Sparsity::Knn(k),
                    ..*self
                },
                Some(note),
            ),
            None => (*self, None),
        }
    }

    /// ε for the points `x`, and the dimension estimate of the log-slope rule.
    pub(crate) fn resolve_epsilon(&self, x: MatRef<'_, f64>) -> Result<(f64, Option<f64>)> {
        self.epsilon.resolve(x, false)
    }

    /// Weights W of the rows of `x` (validated, ε resolved), with ε, the log-slope
    /// rule's dimension estimate and the kNN squared radii r²ᵢ (empty unless kNN).
    pub fn weights(&self, x: MatRef<'_, f64>) -> Result<(Weights, f64, Option<f64>, Vec<f64>)> {
        let b = self.build(x)?;
        Ok((b.weights, b.epsilon, b.dimension_estimate, b.radii2))
    }

    fn build(&self, x: MatRef<'_, f64>) -> Result<Built> {
        validate::training_points("training data", x)?;
        let n = x.nrows();
        self.validate(n)?;
        let (eps, dim) = self.resolve_epsilon(x)?;
        let w = |d2: f64| (-d2 / eps).exp();
        let mut neighbours = None;
        let (weights, radii2) = match self.sparsity {
            Sparsity::Dense => {
                let k = Kernel::Gaussian {
                    epsilon: Epsilon::Value(eps),
                };
                let n = x.nrows();
                crate::linalg::memory::plan("dense kernel matrix (N×N)", 3, n, n)?;
                (Weights::Dense(k.gram(x, Par::rayon(0))), Vec::new())
            }
            Sparsity::Knn(k) => {
                // One pass over groups of nearby points (the tree's leaves), one descent
                // per group: every point's exact k-th nearest squared distance r²ᵢ and
                // its ball {j : ||xᵢ − xⱼ||² ≤ r²ᵢ}; the rows of the symmetric rule
                // follow from the balls (see `rows_from_balls`).
                let points = PointIndex::new(x);
                let balls = points.map_groups(|_, qs, s, out| {
                    let (mut r2, mut found) = (Vec::new(), Links::new());
                    points.balls_group(qs, k, s, &mut r2, &mut found);
                    for (ball, &r2) in found.iter().zip(&r2) {
                        out.push((r2, ball.to_vec()));
                    }
                });
                let (radii2, balls): (Vec<f64>, Vec<_>) = balls.into_iter().unzip();
                neighbours = nearest_others(&balls);
                let mut rows = rows_from_balls(balls);
                rows.par_iter_mut()
                    .for_each(|row| gaussian_in_place(row, eps));
                (Weights::Sparse(SymCsr::from_rows(rows)), radii2)
            }
            Sparsity::Threshold(eta) => {
                let points = PointIndex::new(x);
                let r2 = threshold_radius2(eps, eta);
                let rows: Vec<Vec<(u32, f64)>> = points.map_groups(|_, qs, s, rows| {
                    let mut found = Links::new();
                    points.within_group(qs, r2, s, &mut found);
                    for list in found.iter() {
                        let mut r: Vec<(u32, f64)> = list
                            .iter()
                            .map(|&(j, d)| (j as u32, w(d)))
                            .filter(|p| p.1 >= eta)
                            .collect();
                        r.sort_by_key(|p| p.0);
                        rows.push(r);
                    }
                });
                (Weights::Sparse(SymCsr::from_rows(rows)), Vec::new())
            }
        };
        Ok(Built {
            weights,
            epsilon: eps,
            dimension_estimate: dim,
            radii2,
            neighbours,
        })
    }

    /// The normalised symmetric kernel of the rows of `x` (maths §7), with the connected
    /// components of its graph (on a disconnected graph eigenvalue 1 is repeated, once
    /// per component).
    pub fn normalised(&self, x: MatRef<'_, f64>) -> Result<NormalisedKernel> {
        let Built {
            mut weights,
            epsilon,
            dimension_estimate,
            radii2,
            neighbours,
        } = self.build(x)?;
        let (component, component_sizes) = weights.components();
        let density = weights.row_sums();
        let alpha = self.alpha;
        let qa: Vec<f64> = density.iter().map(|&q| density_power(q, alpha)).collect();
        weights.map(|i, j, w| w * qa[i] * qa[j]);
        let degree = weights.row_sums();
        let s: Vec<f64> = degree.iter().map(|&d| 1.0 / d.sqrt()).collect();
        weights.map(|i, j, w| w * s[i] * s[j]);
        Ok(NormalisedKernel {
            kernel: weights,
            density,
            degree,
            epsilon,
            dimension_estimate,
            radii2,
            component,
            component_sizes,
            neighbours,
        })
    }
}

/// f(row) for every point of `index` (indexed with the balls `r2`), row = its links
/// {j : ||xᵢ − xⱼ||² ≤ max(r²ᵢ, r²ⱼ)} as (j, squared distance) sorted by j: the
/// symmetric kNN rule when r²ᵢ is i's k-th nearest squared distance (the test is
/// symmetric bit for bit, so no transpose is needed). In index order.
pub(crate) fn symmetric_rows<T: Send>(
    index: &PointIndex,
    r2: &[f64],
    f: impl Fn(&[(usize, f64)]) -> T + Sync,
) -> Vec<T> {
    index.map_groups(|g, qs, s, out| {
        let r2q: Vec<f64> = g.iter().map(|&i| r2[i as usize]).collect();
        let mut links = Links::new();
        index.links_group(qs, &r2q, s, &mut links);
        for row in links.iter_mut() {
            row.sort_unstable_by_key(|p| p.0);
            out.push(f(row));
        }
    })
}

/// The rows {j : ||xᵢ − xⱼ||² ≤ max(r²ᵢ, r²ⱼ)} of the symmetric kNN rule, as
/// `(j, squared distance)` sorted by j, from every point's ball `balls[i]` =
/// {j : ||xᵢ − xⱼ||² ≤ r²ᵢ}: row i is ball i together with every j whose ball holds i.
/// Exact, with no distance computed again: the distance is symmetric bit for bit
/// (maths §1), so `balls[j]` holds i with the very value `balls[i]` would.
pub(crate) fn rows_from_balls(balls: Vec<Vec<(usize, f64)>>) -> Vec<Vec<(u32, f64)>> {
    let mut rows: Vec<Vec<(u32, f64)>> = balls
        .iter()
        .map(|b| b.iter().map(|&(j, d)| (j as u32, d)).collect())
        .collect();
    for (i, ball) in balls.iter().enumerate() {
        for &(j, d) in ball {
            if j != i {
                rows[j].push((i as u32, d));
            }
        }
    }
    rows.par_iter_mut().for_each(|row| {
        row.sort_unstable_by_key(|p| p.0);
        row.dedup_by_key(|p| p.0);
    });
    rows
}

/// Each point's [`CANDIDATES`] nearest others from the balls of a kNN fit (every ball
/// holds the point itself at distance 0): indices and distances, nearest first, ties by
/// index — the search [`Novelty::fit`] would make, with the exact distances of maths §1,
/// so the novelty score costs no second search. `None` when a ball holds fewer.
pub(crate) fn nearest_others(balls: &[Vec<(usize, f64)>]) -> Option<Neighbours> {
    let lists: Option<Vec<(Vec<usize>, Vec<f64>)>> = balls
        .par_iter()
        .enumerate()
        .map(|(i, ball)| {
            let mut others: Vec<(usize, f64)> = ball.iter().filter(|p| p.0 != i).copied().collect();
            if others.len() < CANDIDATES {
                return None;
            }
            others.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            others.truncate(CANDIDATES);
            Some(others.into_iter().map(|(j, d)| (j, d.sqrt())).unzip())
        })
        .collect();
    lists.map(|l| l.into_iter().unzip())
}

/// Sparse weight rows of new points: row r is `links[spans[r].0..spans[r].1]`
/// (training index, weight).
pub(crate) struct SparseRows {
    pub(crate) spans: Vec<(usize, usize)>,
    pub(crate) links: Vec<(usize, f64)>,
}

impl SparseRows {
    pub(crate) fn row(&self, r: usize) -> &[(usize, f64)] {
        let (a, b) = self.spans[r];
        &self.links[a..b]
    }
}

/// (j, d²) ↦ (j, exp(−d²/ε)) for every entry, by the vectorised exp (≤ 2 ulp from
/// `f64::exp`), through a small buffer.
pub(crate) fn gaussian_in_place<J>(entries: &mut [(J, f64)], eps: f64) {
    let mut buf = [0.0f64; 256];
    for chunk in entries.chunks_mut(buf.len()) {
        let b = &mut buf[..chunk.len()];
        for (v, e) in b.iter_mut().zip(chunk.iter()) {
            *v = e.1;
        }
        fast_exp::exp_scaled(b, -1.0 / eps);
        for (v, e) in b.iter().zip(chunk.iter_mut()) {
            e.1 = *v;
        }
    }
}

/// q^(−α), with the common α = 0 and α = 1 exact and without `powf`.
pub(crate) fn density_power(q: f64, alpha: f64) -> f64 {
    if alpha == 0.0 {
        1.0
    } else if alpha == 1.0 {
        1.0 / q
    } else {
        q.powf(-alpha)
    }
}

/// ε ln(1/η): squared distances at most this have weight ≥ η.
pub(crate) fn threshold_radius2(eps: f64, eta: f64) -> f64 {
    if eps.is_infinite() {
        f64::INFINITY
    } else {
        eps * (1.0 / eta).ln()
    }
}
