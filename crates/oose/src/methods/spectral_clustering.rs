//! Spectral clustering (Ng–Jordan–Weiss, maths §7): the first c eigenvectors of the
//! diffusion kernel D^{−1/2} W^(α) D^{−1/2} (ψ₀ included), rows normalised to unit
//! length, seeded k-means. New points are extended (Nyström, maths §7), normalised the
//! same way and assigned to the nearest centroid.

use crate::error::{Error, Result};
use crate::extend::{Column, Extension};
use crate::linalg::eigen::Solver;
use crate::linalg::stored::StoredMat;
use crate::methods::diffusion_maps::params::{
    diffusion_info, fit_time_policy, KERNEL, ON_ISOLATED,
};
use crate::methods::diffusion_maps::{
    Density, DiffusionCore, DiffusionKernel, Epsilon, OnIsolated, Sparsity,
};
use crate::methods::OutOfSample;
#[allow(unused_imports)]
use crate::model::method::{
    no_such_option, points_only, Configuration, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::{join, Kind, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, put_debug, SEED, SOLVER};
use crate::rng::Rng;

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

/// Spectral clustering parameters.
///
/// ```
/// use oose::methods::diffusion_maps::{SpectralClustering, Sparsity, Epsilon};
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::three_d_clusters(300, 3, 0).points;
/// let m = SpectralClustering { n_clusters: 3, ..Default::default() }.fit(x.as_ref()).unwrap();
/// let e = m.extend(x.as_ref().subrows(0, 4)).unwrap();
/// let labels = &e.extra.iter().find(|c| c.name == "cluster").unwrap().values;
/// for i in 0..4 {
///     assert_eq!(labels[i] as usize, m.labels()[i]);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpectralClustering {
    /// Number of clusters c (default 2).
    pub n_clusters: usize,
    /// Weights (default: median ε, kNN 10, α = 0).
    pub kernel: DiffusionKernel,
    /// Eigensolver (default `Auto`).
    pub solver: Solver,
    /// k-means++ seed (default 0).
    pub seed: u64,
    /// k-means restarts; the one of least inertia is kept (default 10).
    pub n_init: usize,
    /// New points without neighbours (default `Error`).
    pub on_isolated: OnIsolated,
}

impl Default for SpectralClustering {
    fn default() -> Self {
        SpectralClustering {
            n_clusters: 2,
            kernel: DiffusionKernel {
                epsilon: Epsilon::Median,
                sparsity: Sparsity::Knn(10),
                alpha: 0.0,
            },
            solver: Solver::Auto,
            seed: 0,
            n_init: 10,
            on_isolated: OnIsolated::Error,
        }
    }
}

/// Rows normalised to unit Euclidean length (zero rows stay zero).
fn normalise_rows(v: MatRef<'_, f64>) -> Mat<f64> {
    let norms: Vec<f64> = (0..v.nrows())
        .map(|i| {
            (0..v.ncols())
                .map(|j| v[(i, j)] * v[(i, j)])
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    Mat::from_fn(v.nrows(), v.ncols(), |i, j| {
        if norms[i] > 0.0 {
            v[(i, j)] / norms[i]
        } else {
            v[(i, j)]
        }
    })
}

fn sq(a: MatRef<'_, f64>, i: usize, c: &[f64]) -> f64 {
    c.iter()
        .enumerate()
        .map(|(j, &v)| (a[(i, j)] - v) * (a[(i, j)] - v))
        .sum()
}

/// Index of the nearest centroid and the squared distance to it (ties to the lowest).
fn nearest(a: MatRef<'_, f64>, i: usize, centroids: &[Vec<f64>]) -> (usize, f64) {
    let mut best = (0, f64::INFINITY);
    for (c, cent) in centroids.iter().enumerate() {
        let d = sq(a, i, cent);
        if d < best.1 {
            best = (c, d);
        }
    }
    best
}

/// Lloyd's k-means with k-means++ seeding, `n_init` restarts: (centroids, labels,
/// inertia) of the best run.
pub fn kmeans(
    a: MatRef<'_, f64>,
    k: usize,
    seed: u64,
    n_init: usize,
) -> (Vec<Vec<f64>>, Vec<usize>, f64) {
    let (n, dim) = (a.nrows(), a.ncols());
    let mut rng = Rng::new(seed);
    let mut best: Option<(Vec<Vec<f64>>, Vec<usize>, f64)> = None;
    for _ in 0..n_init.max(1) {
        // k-means++.
        let mut cents: Vec<Vec<f64>> = Vec::with_capacity(k);
        let first = rng.below(n);
        cents.push((0..dim).map(|j| a[(first, j)]).collect());
        let mut d2: Vec<f64> = (0..n).map(|i| sq(a, i, &cents[0])).collect();
        while cents.len() < k {
            let total: f64 = d2.iter().sum();
            let pick = if total > 0.0 {
                let mut u = rng.uniform() * total;
                let mut p = n - 1;
                for (i, &d) in d2.iter().enumerate() {
                    if u < d {
                        p = i;
                        break;
                    }
                    u -= d;
                }
                p
            } else {
                rng.below(n)
            };
            cents.push((0..dim).map(|j| a[(pick, j)]).collect());
            let c = cents.last().unwrap();
            for (i, v) in d2.iter_mut().enumerate() {
                *v = v.min(sq(a, i, c));
            }
        }
        let mut labels = vec![usize::MAX; n];
        for _ in 0..300 {
            let mut changed = false;
            for (i, l) in labels.iter_mut().enumerate() {
                let (c, _) = nearest(a, i, &cents);
                if *l != c {
                    *l = c;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            let mut sums = vec![vec![0.0; dim]; k];
            let mut counts = vec![0usize; k];
            for (i, &l) in labels.iter().enumerate() {
                counts[l] += 1;
                for j in 0..dim {
                    sums[l][j] += a[(i, j)];
                }
            }
            for c in 0..k {
                if counts[c] > 0 {
                    cents[c] = sums[c].iter().map(|s| s / counts[c] as f64).collect();
                }
            }
        }
        let inertia: f64 = (0..n).map(|i| sq(a, i, &cents[labels[i]])).sum();
        if best.as_ref().is_none_or(|b| inertia < b.2) {
            best = Some((cents, labels, inertia));
        }
    }
    best.expect("at least one k-means run")
}

impl SpectralClustering {
    /// Fits on the rows of `x`.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedSpectralClustering> {
        // One cluster (scikit-learn accepts it): ψ₀ alone, every point labelled 0.
        crate::validate::at_least_one("n_clusters", self.n_clusters)?;
        let c = self.n_clusters;
        if c > x.nrows() {
            return Err(Error::param(
                "n_clusters",
                format!("must be between 1 and N = {}, got {c}", x.nrows()),
            ));
        }
        // The core counts its coordinates without ψ₀; a clustering uses ψ₀ too: its
        // errors are told in clusters.
        let core = DiffusionCore::fit(x, &self.kernel, c, self.solver, 1e-12, Some(false))
            .map_err(|e| match e {
                Error::NotEnoughPositiveEigenvalues {
                    available,
                    value,
                    tolerance,
                    ..
                } => Error::param(
                    "n_clusters",
                    format!(
                        "{c} clusters need {c} eigenvalues of the kernel above the tolerance \
                         {tolerance:?}, but only {} are (eigenvalue {c} is {value:?}); ask \
                         for at most {} clusters",
                        available + 1,
                        available + 1
                    ),
                ),
                other => other,
            })?;
        let rows = normalise_rows(core.eigenvectors());
        let (centroids, labels, inertia) =
            kmeans(rows.as_ref(), self.n_clusters, self.seed, self.n_init);
        Ok(FittedSpectralClustering {
            params: self.clone(),
            embedding: StoredMat::from_mat(rows.as_ref()),
            centroids: centroids.concat(),
            labels,
            inertia,
            core,
        })
    }
}

/// Fitted spectral clustering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedSpectralClustering {
    params: SpectralClustering,
    /// Normalised eigenvector rows (N × c).
    embedding: StoredMat,
    /// c × c centroids, row-major.
    centroids: Vec<f64>,
    labels: Vec<usize>,
    inertia: f64,
    core: DiffusionCore,
}

impl FittedSpectralClustering {
    /// Parameters as given.
    pub fn params(&self) -> &SpectralClustering {
        &self.params
    }

    /// Kernel, eigenpairs, ε used.
    pub fn core(&self) -> &DiffusionCore {
        &self.core
    }

    /// Cluster of each training point.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// k-means inertia on the training rows.
    pub fn inertia(&self) -> f64 {
        self.inertia
    }

    fn centroid_rows(&self) -> Vec<Vec<f64>> {
        self.centroids
            .chunks(self.params.n_clusters)
            .map(<[f64]>::to_vec)
            .collect()
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let c = self.params.n_clusters;
        let n = self.labels.len();
        self.core.is_consistent()
            && self.centroids.len() == c * c
            && self.embedding.is_shape(n, c)
            && self.labels.iter().all(|&l| l < c)
            && self.core.eigenvalues().len() == c
    }
}

impl OutOfSample for FittedSpectralClustering {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    /// Coordinates: the normalised extended eigenvector rows; `extra` holds `cluster`
    /// (the nearest centroid, as a number) and `relative_degree`.
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        let mut e = self
            .core
            .extend_psi(new, Density::Training, self.params.on_isolated, true)?;
        let rows = normalise_rows(e.coordinates.as_ref());
        let cents = self.centroid_rows();
        let cluster = (0..rows.nrows())
            .map(|i| {
                if rows[(i, 0)].is_nan() {
                    f64::NAN
                } else {
                    nearest(rows.as_ref(), i, &cents).0 as f64
                }
            })
            .collect();
        e.coordinates = rows;
        self.core.relative_degree(&mut e);
        e.extra.insert(
            0,
            Column {
                name: "cluster",
                values: cluster,
            },
        );
        Ok(e)
    }

    fn input_width(&self) -> usize {
        self.core.input_width()
    }
}

impl Method for SpectralClustering {
    type Fitted = FittedSpectralClustering;
    const METRIC: bool = true;

    const SPECS: &'static [ParamSpec] = &join::<10>(&[
        NO_PARAMS,
        &[ParamSpec::new(
            "n_clusters",
            "clusters",
            Kind::Int,
            "Number of clusters c.",
        )],
        &KERNEL,
        &[
            SOLVER,
            SEED,
            ParamSpec::new(
                "n_init",
                "n-init",
                Kind::Int,
                "k-means restarts; the one of least inertia is kept.",
            ),
            ON_ISOLATED,
        ],
    ]);

    crate::params_as_data!(SpectralClustering {
        n_clusters,
        kernel,
        solver,
        seed,
        n_init,
        on_isolated
    });

    fn configurations() -> Vec<Configuration> {
        vec![Configuration::exact(
            "three-clusters",
            Values::new().with("n_clusters", 3usize),
        )]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedSpectralClustering> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedSpectralClustering {
    crate::fitted_basics!(points: core.x, warnings: core.warnings, novelty: core.fit_novelty);

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        fit_time_policy(SpectralClustering::NAME, opts)
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        v.push(("n_clusters".into(), self.params().n_clusters.to_string()));
        v.push(("seed".into(), self.params().seed.to_string()));
        put_debug(v, "inertia", self.inertia());
        diffusion_info(v, self.core());
        v.push(("eigenvalues".into(), fmt_list(self.core().eigenvalues())));
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(self.core().eigenvalues())
    }

    fn labels(&self) -> Option<&[usize]> {
        Some(FittedSpectralClustering::labels(self))
    }
}
