//! The classical-MDS core shared by classical MDS, Landmark MDS and Isomap (maths §5):
//! the double-centred similarities, their top eigenpairs, projection and restricted
//! reconstruction of new objects from their similarity rows, and its `info` lines.

#[allow(unused_imports)]
use super::*;

/// The fitted core shared by classical MDS, Landmark MDS and Isomap: the training
/// means of Γ, the top-d eigenpairs of B = PΓP, and what the diagnostics need.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cmds {
    pub(super) n_train: usize,
    pub(super) means: KernelMeans,
    pub(super) eigenvalues: Vec<f64>,
    /// The most negative eigenvalues of B (up to d of them, most negative first) when
    /// they were computed; empty when B is known or found to be PSD.
    pub(super) negative_eigenvalues: Vec<f64>,
    pub(super) embedding: StoredMat,
    pub(super) projector: Projector,
    /// Pivoted Cholesky of B when B is positive semidefinite (then the residual
    /// k₀(z, z) = β − bᵀB⁺b is defined).
    pub(super) residual: Option<ResidualFactor>,
    pub(super) solver_used: Solver,
    pub(super) solver_note: Option<String>,
}

/// Whether B is known to be positive semidefinite (points), or must be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Definiteness {
    /// Γ comes from Euclidean points: B is PSD.
    Psd,
    /// Compute the most negative eigenvalues and report them.
    Check,
    /// Neither report negative eigenvalues nor compute a residual (Isomap's geodesics).
    Skip,
}

impl Cmds {
    /// Fits on the symmetric N×N similarity matrix `gamma` (consumed).
    pub(crate) fn fit(
        mut gamma: Mat<f64>,
        d: usize,
        solver: Solver,
        tol: f64,
        definiteness: Definiteness,
    ) -> Result<Cmds> {
        let n = gamma.nrows();
        if d == 0 || d > n {
            return Err(Error::param(
                "n_components",
                format!("must be between 1 and the number of training objects ({n}), got {d}"),
            ));
        }
        crate::validate::rank_tolerance(tol)?;
        let means = KernelMeans::of(&gamma);
        means.center(&mut gamma);
        crate::progress::check()?;
        let mut b = gamma;
        let eig = top_eigen(b.as_ref(), d, solver)?;
        crate::linalg::eigen::require_positive(&eig.values, d, tol)?;
        let floor = tol * eig.values[0].max(0.0);
        let mut negative_eigenvalues = Vec::new();
        let psd = match definiteness {
            Definiteness::Psd => true,
            Definiteness::Skip => false,
            Definiteness::Check => {
                // The most negative eigenvalues of B are the largest of −B: negate in
                // place (no second N×N matrix), and back for the residual factor.
                let negate = |m: &mut Mat<f64>| {
                    for j in 0..n {
                        m.col_as_slice_mut(j).iter_mut().for_each(|v| *v = -*v);
                    }
                };
                negate(&mut b);
                let neg = top_eigen(b.as_ref(), d, solver);
                negate(&mut b);
                let neg = neg?;
                negative_eigenvalues = neg
                    .values
                    .iter()
                    .filter(|&&v| v > floor)
                    .map(|v| -v)
                    .collect();
                negative_eigenvalues.is_empty()
            }
        };
        let residual = psd.then(|| ResidualFactor::new(b.as_ref(), tol));
        drop(b);
        let sqrt_l: Vec<f64> = eig.values.iter().map(|v| v.sqrt()).collect();
        let u = &eig.vectors;
        let embedding = Mat::from_fn(n, d, |i, j| u[(i, j)] * sqrt_l[j]);
        let projector = Projector::new(u.as_ref(), &eig.values, &means);
        Ok(Cmds {
            n_train: n,
            means,
            eigenvalues: eig.values,
            negative_eigenvalues,
            embedding: StoredMat::from_mat(embedding.as_ref()),
            projector,
            residual,
            solver_used: eig.solver,
            solver_note: eig.note,
        })
    }

    /// Λ_d, largest first.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// The most negative eigenvalues of B (up to d, most negative first): evidence that
    /// the dissimilarities are not Euclidean. Empty when B is positive semidefinite or
    /// when they were not computed (Isomap).
    pub fn negative_eigenvalues(&self) -> &[f64] {
        &self.negative_eigenvalues
    }

    /// The training configuration X (N×d).
    pub fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    /// Number of training objects.
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// The eigensolver actually used, and why it differs from the requested one.
    pub fn solver_used(&self) -> (Solver, Option<&str>) {
        (self.solver_used, self.solver_note.as_deref())
    }

    /// Whether the residual kernel is available (B positive semidefinite).
    pub fn has_residual(&self) -> bool {
        self.residual.is_some()
    }

    /// Numerical rank of B used by the residual, when available.
    pub fn residual_rank(&self) -> Option<usize> {
        self.residual.as_ref().map(|r| r.rank())
    }

    /// Projections ŷ (m×d), centred self-similarities β and out-of-span parts ρ of new
    /// objects given their similarity rows `rows` (m×N) and γ(z, z) (NaN if unknown).
    /// Also returns the centred rows when `want_centred`.
    pub(super) fn project(
        &self,
        rows: MatRef<'_, f64>,
        self_sim: &[f64],
        want_centred: bool,
    ) -> (Mat<f64>, Vec<f64>, Vec<f64>, Option<Mat<f64>>) {
        let (y, mz) = self.projector.project(rows, Some(&self.means));
        let (beta, rho) = Projector::beta_rho(
            rows,
            &mz,
            self_sim,
            Some(&self.means),
            &self.eigenvalues,
            y.as_ref(),
        );
        let centred = want_centred.then(|| Projector::centred_rows(rows, &mz, &self.means));
        (y, beta, rho, centred)
    }

    /// Extends one block of new objects given their similarity rows (m×N) and
    /// self-similarities (NaN where unknown).
    pub(crate) fn extend_block(
        &self,
        rows: MatRef<'_, f64>,
        self_sim: &[f64],
        strategy: Strategy,
    ) -> Result<Extension> {
        let m = rows.nrows();
        let d = self.eigenvalues.len();
        let (mut y, beta, rho, centred) = self.project(rows, self_sim, self.residual.is_some());
        let residual = match (&self.residual, centred) {
            (Some(r), Some(c)) => {
                let res = r.residuals(c.as_ref(), &beta);
                res.into_iter()
                    .zip(&beta)
                    .map(|(v, b)| if b.is_nan() { f64::NAN } else { v })
                    .collect()
            }
            _ => vec![f64::NAN; m],
        };
        let reconstruction_error = (0..m)
            .map(|i| {
                let n2: f64 = (0..d).map(|j| y[(i, j)] * y[(i, j)]).sum();
                (beta[i] - n2).max(0.0)
            })
            .collect();
        let extra = apply_strategy(&self.eigenvalues, &mut y, &beta, &rho, strategy)?;
        Ok(Extension {
            coordinates: y,
            residual,
            reconstruction_error,
            extra,
        })
    }

    /// Extends new objects given their similarity rows, in parallel chunks.
    pub(crate) fn extend_rows(
        &self,
        rows: MatRef<'_, f64>,
        self_sim: &[f64],
        strategy: Strategy,
    ) -> Result<Extension> {
        by_chunks(rows, self.n_train, self.eigenvalues.len(), |s, c| {
            self.extend_block(c, &self_sim[s..s + c.nrows()], strategy)
        })
    }

    /// Joint restricted reconstruction from similarity rows (k×N), self-similarities and
    /// the k×k similarities among the new objects (`mutual`, diagonal = γ(z, z)).
    pub(crate) fn joint_rows(&self, rows: MatRef<'_, f64>, mutual: MatRef<'_, f64>) -> Joint {
        let k = rows.nrows();
        let diag: Vec<f64> = (0..k).map(|p| mutual[(p, p)]).collect();
        let (y, _, rho, _) = self.project(rows, &diag, false);
        let n = self.n_train as f64;
        let mz: Vec<f64> = (0..k)
            .map(|p| (0..self.n_train).map(|i| rows[(p, i)]).sum::<f64>() / n)
            .collect();
        let beta = restricted::centred_mutual(mutual, Some((&mz, self.means.grand)));
        restricted_joint(&self.eigenvalues, &y, &beta, &rho)
    }

    /// `steps + 1` points on the arc from projection to restricted reconstruction for
    /// each object given by its similarity row and γ(z, z): `(object, λ, y)`.
    pub(crate) fn arc_rows(
        &self,
        rows: MatRef<'_, f64>,
        self_sim: &[f64],
        steps: usize,
    ) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        if let Some(i) = self_sim.iter().position(|s| s.is_nan()) {
            return Err(Error::param(
                "strategy",
                format!("the arc needs γ(z, z); object {i} has none"),
            ));
        }
        let (y, beta, _, _) = self.project(rows, self_sim, false);
        Ok(restricted::arcs(
            &self.eigenvalues,
            y.as_ref(),
            |p| beta[p],
            steps,
        ))
    }

    /// Joint restricted reconstruction of new points of an MDS-family model on points
    /// (Isomap, landmark MDS): `gamma` gives their Γ rows against the training objects
    /// and the k×k Γ among them; `width` is the points' dimension.
    pub(crate) fn joint_of_points(
        &self,
        new: MatRef<'_, f64>,
        width: usize,
        gamma: impl FnOnce(MatRef<'_, f64>) -> (Mat<f64>, Mat<f64>),
    ) -> Result<Joint> {
        validate::finite_nonempty("new points", new)?;
        validate::columns("new points", new, width)?;
        let (rows, mutual) = gamma(new);
        Ok(self.joint_rows(rows.as_ref(), mutual.as_ref()))
    }

    /// The arc of new points of an MDS-family model on points (γ(z, z) = 0) from their
    /// Γ rows, `rows(new)`.
    pub(crate) fn arc_of_points(
        &self,
        new: MatRef<'_, f64>,
        width: usize,
        steps: usize,
        rows: impl FnOnce(MatRef<'_, f64>) -> Mat<f64>,
    ) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        validate::columns("new points", new, width)?;
        validate::finite("new points", new)?;
        self.arc_rows(rows(new).as_ref(), &vec![0.0; new.nrows()], steps)
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let (n, d) = (self.n_train, self.eigenvalues.len());
        d >= 1
            && self.means.row.len() == n
            && self.embedding.is_shape(n, d)
            && self.projector.is_shape(n, d)
            && self.residual.as_ref().is_none_or(|r| r.is_consistent(n))
    }
}

/// The `info` lines of a classical-MDS core: solver, eigenvalues, the negative ones
/// (where B may be indefinite) and the residual rank.
pub(crate) fn cmds_info(c: &Cmds, v: &mut Vec<(String, String)>, negative: bool) {
    solver_info(v, c.solver_used());
    v.push(("eigenvalues".into(), fmt_list(c.eigenvalues())));
    if negative {
        v.push((
            "negative_eigenvalues".into(),
            if c.negative_eigenvalues().is_empty() {
                "none".into()
            } else {
                fmt_list(c.negative_eigenvalues())
            },
        ));
    }
    v.push((
        "residual_rank".into(),
        c.residual_rank()
            .map_or("n/a (B is not positive semidefinite)".into(), |r| {
                r.to_string()
            }),
    ));
}

/// Extension options of the MDS family: the strategy only.
pub(crate) fn strategy_only(method: &str, opts: &ExtendOptions<'_>) -> Result<()> {
    opts.refuse_all_but(&["restricted"], |o| no_such_option(method, o))
}
