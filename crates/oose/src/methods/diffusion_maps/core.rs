//! The fitted diffusion kernel and its eigenpairs (maths §7), shared by diffusion maps, Laplacian eigenmaps and spectral clustering.

#[allow(unused_imports)]
use super::*;

/// Search structures over the training points, built on first use after loading.
pub(crate) type Indexes = crate::model::method::Cache<OnceLock<Searcher>>;

/// What the extension searches and reads: the training points' index (with their kNN
/// balls for a kNN kernel) and Φ row-major (one contiguous row per training point).
pub(crate) struct Searcher {
    pub(crate) points: PointIndex,
    pub(crate) phi_rows: Vec<f64>,
}

/// The fitted diffusion kernel and its eigenpairs, shared by diffusion maps, Laplacian
/// eigenmaps and spectral clustering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffusionCore {
    pub(crate) spec: DiffusionKernel,
    pub(crate) x: StoredMat,
    pub(crate) epsilon: f64,
    pub(crate) dimension_estimate: Option<f64>,
    pub(crate) radii2: Vec<f64>,
    /// q_i^{−α}.
    pub(crate) qa: Vec<f64>,
    pub(crate) degree: Vec<f64>,
    pub(crate) sum_degree: f64,
    pub(crate) median_degree: f64,
    pub(crate) median_density: f64,
    /// λ₀ = 1 ≥ λ₁ ≥ … (eigenvalues of the symmetric kernel).
    pub(crate) values: Vec<f64>,
    /// Eigenvectors ψ (N × m), ψ₀ = sqrt(d/Σd).
    pub(crate) psi: StoredMat,
    /// diag(s) ψ with sᵢ = q_i^{−α} d_i^{−1/2}: the extension is wᵀ(zᵢ) Φ scaled per row.
    pub(crate) phi: StoredMat,
    pub(crate) residual: Option<ResidualFactor>,
    pub(crate) solver: Solver,
    pub(crate) solver_note: Option<String>,
    pub(crate) nnz: usize,
    /// The fit's warnings (a disconnected graph), not stored.
    #[serde(skip)]
    pub(crate) warnings: crate::model::method::Transient<Vec<String>>,
    #[serde(skip)]
    pub(crate) index: Indexes,
    /// The novelty score from the fit's kNN search, for the model (not stored).
    #[serde(skip)]
    pub(crate) fit_novelty: Pending,
}

impl DiffusionCore {
    /// Fits the kernel on `x` and computes `m` eigenpairs (ψ₀ included).
    pub(crate) fn fit(
        x: MatRef<'_, f64>,
        spec: &DiffusionKernel,
        m: usize,
        solver: Solver,
        rank_tolerance: f64,
        residual: Option<bool>,
    ) -> Result<DiffusionCore> {
        let n = x.nrows();
        crate::validate::rank_tolerance(rank_tolerance)?;
        // m = 1 (ψ₀ alone) is one cluster of spectral clustering; the diffusion maps ask
        // for at least one coordinate before they get here.
        if m == 0 || m > n {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be between 1 and N − 1 = {} (ψ₀ is not a coordinate), got {}",
                    n.saturating_sub(1),
                    m.saturating_sub(1)
                ),
            ));
        }
        let (spec, lowered) = &spec.lowered_for(n);
        let mut nk = spec.normalised(x)?;
        // ψ₀ = sqrt(d/Σd) is an exact eigenvector with eigenvalue 1, and so is, on a
        // disconnected graph, sqrt(d) on each component: the eigenvalue-1 space is
        // known exactly. Deflate it and compute the next eigenvalues of k − Σ ψψᵀ
        // (robust when they are close to 1, nearly separated clusters).
        let sum_degree: f64 = nk.degree.iter().sum();
        let ones = unit_eigenspace(&nk.degree, &nk.component, nk.component_sizes.len());
        let (matrix, nnz) = match &mut nk.kernel {
            Weights::Dense(k) => (Symmetric::Dense(k), n * n),
            Weights::Sparse(k) => (Symmetric::Sparse(k), k.nnz()),
        };
        // Coordinates from the eigenvalue-1 space (ψ₀ not counted), then the rest.
        let from_ones = (ones.ncols() - 1).min(m - 1);
        let rest = m - 1 - from_ones;
        let eig = if rest > 0 {
            let cols: Vec<&[f64]> = (0..ones.ncols()).map(|j| ones.col_as_slice(j)).collect();
            let eig = top_eigen_below_top(matrix, rest, &cols, solver, SHIFT_INVERT_SIGMA, 0.0)?;
            if eig.values[0] >= 1.0 - 1e-12 {
                return Err(Error::Eigensolver(format!(
                    "eigenvalue {} of the diffusion kernel is {} (≥ 1 − 1e-12): the graph \
                     is numerically disconnected; increase ε or the number of neighbours",
                    from_ones + 1,
                    eig.values[0]
                )));
            }
            eig
        } else {
            crate::linalg::eigen::Eigen {
                values: Vec::new(),
                vectors: Mat::zeros(n, 0),
                solver: Solver::Dense,
                note: Some(
                    "every coordinate is a component's stationary vector: no eigensolver ran"
                        .into(),
                ),
            }
        };
        let mut warnings: Vec<String> = lowered.iter().cloned().collect();
        let mut solver_note = eig.note;
        if nk.component_sizes.len() > 1 {
            let c = nk.component_sizes.len();
            let what = format!(
                "the {} diffusion graph has {c} connected components (sizes {:?}, largest \
                 first): eigenvalue 1 is repeated {c} times, and coordinates 1 to {} are \
                 constant on each component (they tell the components apart; the next ones \
                 describe the components' shapes)",
                spec.sparsity.describe(),
                nk.component_sizes,
                c - 1
            );
            solver_note = Some(match solver_note {
                Some(s) => format!("{what}; {s}"),
                None => what.clone(),
            });
            warnings.push(what);
        }
        let mut values = vec![1.0; 1 + from_ones];
        values.extend_from_slice(&eig.values);
        let tol = rank_tolerance;
        // Coordinate j has eigenvalue values[j] (ψ₀ is values[0]): the error names the
        // m − 1 coordinates asked for and the last one's eigenvalue, as
        // `require_positive` does (it named the first failing coordinate as the request).
        if (1..m).any(|j| values[j].is_nan() || values[j] <= tol) {
            return Err(Error::NotEnoughPositiveEigenvalues {
                requested: m - 1,
                available: (1..m).filter(|&j| values[j] > tol).count(),
                value: values[m - 1],
                tolerance: tol,
            });
        }
        let psi = Mat::from_fn(n, m, |i, j| {
            if j <= from_ones {
                ones[(i, j)]
            } else {
                eig.vectors[(i, j - 1 - from_ones)]
            }
        });
        let alpha = spec.alpha;
        let qa: Vec<f64> = nk
            .density
            .iter()
            .map(|&q| density_power(q, alpha))
            .collect();
        let phi = Mat::from_fn(n, m, |i, j| psi[(i, j)] * qa[i] / nk.degree[i].sqrt());
        let want_residual = residual.unwrap_or(matches!(nk.kernel, Weights::Dense(_)));
        let residual = want_residual.then(|| residual_factor(&nk.kernel, rank_tolerance));
        let mut sorted = nk.degree.clone();
        let median_degree = crate::kernel::bandwidth::median(&mut sorted);
        let mut sorted = nk.density.clone();
        let median_density = crate::kernel::bandwidth::median(&mut sorted);
        Ok(DiffusionCore {
            spec: *spec,
            x: StoredMat::from_mat(x),
            epsilon: nk.epsilon,
            dimension_estimate: nk.dimension_estimate,
            radii2: nk.radii2,
            qa,
            degree: nk.degree,
            sum_degree,
            median_degree,
            median_density,
            values,
            psi: StoredMat::from_mat(psi.as_ref()),
            phi: StoredMat::from_mat(phi.as_ref()),
            residual,
            solver: eig.solver,
            solver_note,
            nnz,
            warnings: crate::model::method::Transient(warnings),
            index: Indexes::default(),
            fit_novelty: Pending::new(
                nk.neighbours
                    .and_then(|(idx, dist)| Novelty::from_graph(x, &idx, &dist)),
            ),
        })
    }

    /// ε used.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The kernel specification as used: as given, but for an `n_neighbors` ≥ N lowered
    /// to N − 1 ([`DiffusionKernel::lowered_for`]).
    pub fn spec(&self) -> &DiffusionKernel {
        &self.spec
    }

    /// Twice the maximal log-slope when ε came from the log-slope rule.
    pub fn dimension_estimate(&self) -> Option<f64> {
        self.dimension_estimate
    }

    /// Eigenvalues λ₀ = 1 ≥ λ₁ ≥ … of the symmetric kernel.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors ψ (N × m) of the symmetric kernel, ψ₀ = sqrt(d/Σd).
    pub fn eigenvectors(&self) -> MatRef<'_, f64> {
        self.psi.view()
    }

    /// Median training density (Σ_j w_ij).
    pub fn median_density(&self) -> f64 {
        self.median_density
    }

    /// Degrees dᵢ of the training points.
    pub fn degrees(&self) -> &[f64] {
        &self.degree
    }

    /// Σᵢ dᵢ.
    pub fn sum_degree(&self) -> f64 {
        self.sum_degree
    }

    /// Solver used and its note.
    pub fn solver_used(&self) -> (Solver, Option<&str>) {
        (self.solver, self.solver_note.as_deref())
    }

    /// Stored non-zero weights (N² for a dense kernel).
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// Numerical rank of the kernel kept for the residual, when computed.
    pub fn residual_rank(&self) -> Option<usize> {
        self.residual.as_ref().map(ResidualFactor::rank)
    }

    /// Training data dimension.
    pub fn input_width(&self) -> usize {
        self.x.ncols()
    }

    pub(crate) fn n(&self) -> usize {
        self.x.nrows()
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let (n, m) = (self.x.nrows(), self.values.len());
        // The kernel's parameters as at fit (k < N, α ∈ [0, 1], ε > 0), and the ε
        // chosen: what the extension's neighbour search and weights rely on.
        self.spec.validate(n).is_ok()
            && self.epsilon > 0.0
            && self.x.is_consistent()
            && self.psi.is_shape(n, m)
            && self.phi.is_shape(n, m)
            && self.qa.len() == n
            && self.degree.len() == n
            && (self.radii2.is_empty() || self.radii2.len() == n)
            && matches!(self.spec.sparsity, Sparsity::Knn(_)) == !self.radii2.is_empty()
            && self.residual.as_ref().is_none_or(|r| r.is_consistent(n))
    }

    /// [`DiffusionCore::is_consistent`], with d + 1 eigenvalues and an N×d `embedding`:
    /// what a fitted model of d components built on this core holds.
    pub(crate) fn holds(&self, embedding: &StoredMat, d: usize) -> bool {
        self.is_consistent() && self.values.len() == d + 1 && embedding.is_shape(self.n(), d)
    }
}

/// An orthonormal basis of the eigenvalue-1 space of the normalised kernel of a graph
/// with `components` connected components (`component[i]`: point i's, 0 the largest):
/// ψ₀ = sqrt(d/Σd) first, then, for the components in order but the last, sqrt(d) on the
/// component made orthogonal to the columns before (Gram–Schmidt, twice). Each column
/// is constant in ψⱼ/ψ₀ on every component. N × `components`.
pub(crate) fn unit_eigenspace(degree: &[f64], component: &[usize], components: usize) -> Mat<f64> {
    let n = degree.len();
    let total: f64 = degree.iter().sum();
    let mut basis = Mat::<f64>::zeros(n, components);
    for i in 0..n {
        basis[(i, 0)] = (degree[i] / total).sqrt();
    }
    for c in 1..components {
        let mut v: Vec<f64> = (0..n)
            .map(|i| {
                if component[i] == c - 1 {
                    degree[i].sqrt()
                } else {
                    0.0
                }
            })
            .collect();
        for _ in 0..2 {
            for j in 0..c {
                let u = basis.col_as_slice(j);
                let dot: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
                v.iter_mut().zip(u).for_each(|(x, u)| *x -= dot * u);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        for i in 0..n {
            basis[(i, c)] = v[i] / norm;
        }
    }
    if components > 1 {
        crate::linalg::eigen::apply_sign_rule(basis.as_mut().subcols_mut(1, components - 1));
    }
    basis
}
