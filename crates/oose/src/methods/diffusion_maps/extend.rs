//! The Nyström extension of the diffusion kernel's eigenvectors to new points (maths §7): the mirror rule of the kNN graph, the training or union density, the degree, residual and reconstruction-error diagnostics.

#[allow(unused_imports)]
use super::*;

impl DiffusionCore {
    pub(crate) fn indexes(&self) -> &Searcher {
        self.index.0.get_or_init(|| {
            let x = self.x.view();
            let phi = self.phi.view();
            let phi_rows = (0..phi.nrows())
                .flat_map(|i| (0..phi.ncols()).map(move |j| phi[(i, j)]))
                .collect();
            Searcher {
                points: if self.radii2.is_empty() {
                    PointIndex::new(x)
                } else {
                    PointIndex::with_balls(x, &self.radii2)
                },
                phi_rows,
            }
        })
    }

    /// Weights of new points to the training points, one sparse row per point
    /// (sparse kernels).
    pub(crate) fn sparse_rows(&self, z: MatRef<'_, f64>, groups: &[usize]) -> SparseRows {
        let eps = self.epsilon;
        let points = &self.indexes().points;
        let mut scratch = Scratch::default();
        let mut spans = vec![(0, 0); z.nrows()];
        let links = match self.spec.sparsity {
            Sparsity::Knn(k) => {
                // Rows come in locality order, cut into groups of nearby rows
                // (extend_psi); a group shares one descent (PointIndex::mirror_group).
                let (mut qs, mut found) = (Vec::new(), Links::new());
                for g in groups.windows(2) {
                    let rows = g[0]..g[1];
                    qs.clear();
                    for r in rows.clone() {
                        qs.extend(z.row(r).iter().copied());
                    }
                    let first = found.len();
                    points.mirror_group(&qs, k, &mut scratch, &mut found);
                    for (r, span) in rows.zip(found.ranges_from(first)) {
                        spans[r] = (span.start, span.end);
                    }
                }
                let mut links = found.into_items();
                gaussian_in_place(&mut links, eps);
                links
            }
            Sparsity::Threshold(eta) => {
                let r2 = threshold_radius2(eps, eta);
                let (mut qs, mut found, mut links) = (Vec::new(), Links::new(), Vec::new());
                // Groups of 64 rows: one read of the training points per group when
                // they are searched by brute force.
                for (g, spans) in spans.chunks_mut(64).enumerate() {
                    qs.clear();
                    for r in g * 64..g * 64 + spans.len() {
                        qs.extend(z.row(r).iter().copied());
                    }
                    found.clear();
                    points.within_group(&qs, r2, &mut scratch, &mut found);
                    for (span, row) in spans.iter_mut().zip(found.iter_mut()) {
                        row.sort_by_key(|p| p.0);
                        let from = links.len();
                        links.extend(
                            row.iter()
                                .map(|&(j, d)| (j, (-d / eps).exp()))
                                .filter(|p| p.1 >= eta),
                        );
                        *span = (from, links.len());
                    }
                }
                links
            }
            Sparsity::Dense => unreachable!("dense kernels use kernel blocks"),
        };
        SparseRows { spans, links }
    }

    /// Σ_{z' in the batch} w(z, z') for every row z of the batch (the union density's
    /// batch part, maths §7).
    pub(crate) fn batch_density(&self, z: MatRef<'_, f64>) -> Vec<f64> {
        let eps = self.epsilon;
        let m = z.nrows();
        match self.spec.sparsity {
            Sparsity::Dense => {
                let k = Kernel::Gaussian {
                    epsilon: Epsilon::Value(eps),
                };
                let sq = row_sq_norms(z);
                let rows = crate::extend::chunk_rows(m);
                (0..m)
                    .step_by(rows)
                    .collect::<Vec<_>>()
                    .into_par_iter()
                    .flat_map_iter(|s| {
                        let len = rows.min(m - s);
                        let b = k.block(z.subrows(s, len), &sq[s..s + len], z, &sq, Par::Seq);
                        (0..len)
                            .map(|i| (0..m).map(|j| b[(i, j)]).sum::<f64>())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }
            Sparsity::Threshold(eta) => {
                let batch = PointIndex::new(z);
                let r2 = threshold_radius2(eps, eta);
                batch.map_groups(|_, qs, s, sums| {
                    let mut found = Links::new();
                    batch.within_group(qs, r2, s, &mut found);
                    for list in found.iter() {
                        // In the index's order, as query by query.
                        sums.push(
                            list.iter()
                                .map(|&(_, d)| (-d / eps).exp())
                                .filter(|&w| w >= eta)
                                .sum(),
                        );
                    }
                })
            }
            Sparsity::Knn(k) => {
                // The batch's own kNN graph under the mirror rule: r²_z is z's k-th
                // nearest squared distance to the training points.
                let points = &self.indexes().points;
                let batch = PointIndex::new(z);
                let r2 = batch.map_groups(|_, qs, s, out| points.kth_group(qs, k, s, out));
                let batch = batch.into_balls(&r2);
                symmetric_rows(&batch, &r2, |row| {
                    row.iter().map(|&(_, d)| (-d / eps).exp()).sum()
                })
            }
        }
    }

    /// The extension ψ̂(z) of every eigenvector (M × m, ψ̂₀ = sqrt(d(z)/Σd)), with
    /// per-row diagnostics: `degree` d(z), `isolated` (with `OnIsolated::Nan`), the
    /// residual k₀(z, z) of the symmetric kernel (NaN when not computed) and the
    /// m-component reconstruction error k(z,z) − Σ_j λ_j ψ̂_j(z)². The residual only
    /// with `residual` (its triangular solve is the costliest part of a dense row).
    pub(crate) fn extend_psi(
        &self,
        z: MatRef<'_, f64>,
        density: Density,
        on_isolated: OnIsolated,
        residual: bool,
    ) -> Result<Extension> {
        validate::finite_nonempty("new points", z)?;
        validate::columns("new points", z, self.input_width())?;
        // kNN rows run in locality order, cut once into groups of nearby rows that
        // share descents (sparse_rows); results go back to input order.
        let (perm, groups) = match self.spec.sparsity {
            Sparsity::Knn(_) => {
                let (order, bounds) = locality_groups(z, 16);
                (
                    Some(order.into_iter().map(|i| i as usize).collect::<Vec<_>>()),
                    bounds,
                )
            }
            _ => (None, Vec::new()),
        };
        let zp = perm
            .as_ref()
            .map(|p| Mat::from_fn(z.nrows(), z.ncols(), |r, j| z[(p[r], j)]));
        let z = zp.as_ref().map_or(z, |zp| zp.as_ref());
        let extra_q = match density {
            Density::Training => None,
            Density::Union => Some(self.batch_density(z)),
        };
        let n = self.n();
        let m = self.values.len();
        // Sparse rows: chunks of 256 rows, small enough to balance the threads.
        let chunk_width = if self.spec.sparsity == Sparsity::Dense || self.residual.is_some() {
            n
        } else {
            2048
        };
        let x_sq = (self.spec.sparsity == Sparsity::Dense).then(|| row_sq_norms(self.x.view()));
        // Isolated rows are flagged in every chunk; the first in input order is the error.
        let ext = by_chunks(z, chunk_width, m, |start, zc| {
            // Sparse rows, or a dense block.
            let (sparse, dense) = match &x_sq {
                Some(x_sq) => {
                    let k = Kernel::Gaussian {
                        epsilon: Epsilon::Value(self.epsilon),
                    };
                    let zsq = row_sq_norms(zc);
                    (None, Some(k.block(zc, &zsq, self.x.view(), x_sq, Par::Seq)))
                }
                None => {
                    // This chunk's groups, cut at its ends, from 0.
                    let end = start + zc.nrows();
                    let inner = groups.partition_point(|&b| b <= start)
                        ..groups.partition_point(|&b| b < end);
                    let g: Vec<usize> = std::iter::once(0)
                        .chain(groups[inner].iter().map(|&b| b - start))
                        .chain(std::iter::once(zc.nrows()))
                        .collect();
                    (Some(self.sparse_rows(zc, &g)), None)
                }
            };
            let rows = (start, zc.nrows());
            Ok(self.finish_rows(rows, sparse, dense, extra_q.as_deref(), residual))
        })?;
        let mut ext = match &perm {
            Some(p) => ext.unpermuted(p),
            None => ext,
        };
        let flags = ext.extra.iter().position(|c| c.name == "isolated");
        let first = flags.and_then(|c| ext.extra[c].values.iter().position(|&v| v != 0.0));
        match (on_isolated, first) {
            (OnIsolated::Error, Some(row)) => Err(Error::Isolated {
                what: "new points",
                row,
                rule: self.spec.sparsity.describe(),
            }),
            (OnIsolated::Error, None) => {
                ext.extra.retain(|c| c.name != "isolated");
                Ok(ext)
            }
            (OnIsolated::Nan, _) => Ok(ext),
        }
    }

    /// The rows `start..start + rows` of a batch from their kernel rows: coordinates
    /// and diagnostics, the residual only `with_residual`.
    pub(crate) fn finish_rows(
        &self,
        (start, rows): (usize, usize),
        sparse: Option<SparseRows>,
        dense: Option<Mat<f64>>,
        extra_q: Option<&[f64]>,
        with_residual: bool,
    ) -> Extension {
        let n = self.n();
        let m = self.values.len();
        let alpha = self.spec.alpha;
        let phi = &self.indexes().phi_rows;
        let mut psi = Mat::<f64>::zeros(rows, m);
        let mut degree = vec![0.0; rows];
        let mut dens = vec![0.0; rows];
        let mut isolated = vec![0.0; rows];
        let mut kzz = vec![0.0; rows];
        // Per-row scale of the symmetric-kernel row: k_z,i = w_z,i sᵢ · scale(z).
        let mut scale = vec![0.0; rows];
        let mut acc = vec![0.0; m];
        for r in 0..rows {
            // (q_train(z), Σ w qa, wᵀΦ)
            acc.fill(0.0);
            let (mut q, mut wq) = (0.0, 0.0);
            let mut add = |i: usize, w: f64| {
                q += w;
                wq += w * self.qa[i];
                for (a, p) in acc.iter_mut().zip(&phi[i * m..(i + 1) * m]) {
                    *a += w * p;
                }
            };
            if let Some(s) = &sparse {
                for &(i, w) in s.row(r) {
                    add(i, w);
                }
            } else if let Some(b) = &dense {
                for i in 0..n {
                    let w = b[(r, i)];
                    if w != 0.0 {
                        add(i, w);
                    }
                }
            }
            if q.is_nan() || q <= 0.0 {
                isolated[r] = 1.0;
                psi.row_mut(r).fill(f64::NAN);
                degree[r] = f64::NAN;
                dens[r] = f64::NAN;
                kzz[r] = f64::NAN;
                scale[r] = f64::NAN;
                continue;
            }
            let qz = q + extra_q.map_or(0.0, |e| e[start + r]);
            let qza = density_power(qz, alpha);
            let dz = qza * wq;
            let sc = qza / dz.sqrt();
            for j in 0..m {
                psi[(r, j)] = acc[j] * sc / self.values[j];
            }
            psi[(r, 0)] = (dz / self.sum_degree).sqrt();
            degree[r] = dz;
            dens[r] = qz;
            kzz[r] = qza * qza / dz;
            scale[r] = sc;
        }
        let mut recon = vec![0.0; rows];
        for r in 0..rows {
            let s: f64 = (0..m)
                .map(|j| self.values[j] * psi[(r, j)] * psi[(r, j)])
                .sum();
            recon[r] = (kzz[r] - s).max(0.0);
            if kzz[r].is_nan() {
                recon[r] = f64::NAN;
            }
        }
        let residual = match self.residual.as_ref().filter(|_| with_residual) {
            None => vec![f64::NAN; rows],
            Some(f) => {
                let s: Vec<f64> = (0..n).map(|i| self.qa[i] / self.degree[i].sqrt()).collect();
                let kz = match (&sparse, &dense) {
                    (_, Some(b)) => Mat::from_fn(rows, n, |r, i| b[(r, i)] * s[i] * scale[r]),
                    (Some(sp), _) => {
                        let mut kz = Mat::zeros(rows, n);
                        for r in 0..rows {
                            for &(i, w) in sp.row(r) {
                                kz[(r, i)] = w * s[i] * scale[r];
                            }
                        }
                        kz
                    }
                    (None, None) => unreachable!("rows are sparse or dense"),
                };
                let mut v = f.residuals(kz.as_ref(), &kzz);
                for (x, &iso) in v.iter_mut().zip(&isolated) {
                    if iso != 0.0 {
                        *x = f64::NAN;
                    }
                }
                v
            }
        };
        let mut extra = vec![
            Column {
                name: "degree",
                values: degree,
            },
            Column {
                name: "density",
                values: dens,
            },
        ];
        extra.push(Column {
            name: "isolated",
            values: isolated,
        });
        Extension {
            coordinates: psi,
            residual,
            reconstruction_error: recon,
            extra,
        }
    }

    /// Replaces the `degree` and `density` columns by `relative_degree` = d(z) / median
    /// training degree and `relative_density` = q(z) / median training density. (For
    /// α = 1 the degree is invariant under w(z, ·) ↦ c·w(z, ·), so a far point need not
    /// show in it; the density q(z) = Σᵢ w(z, xᵢ) does.)
    pub(crate) fn relative_degree(&self, ext: &mut Extension) {
        for c in ext.extra.iter_mut() {
            if c.name == "degree" {
                c.name = "relative_degree";
                c.values.iter_mut().for_each(|v| *v /= self.median_degree);
            } else if c.name == "density" {
                c.name = "relative_density";
                c.values.iter_mut().for_each(|v| *v /= self.median_density);
            }
        }
    }
}

/// Pivoted Cholesky of the (dense or sparse) symmetric kernel for the residual: a dense
/// kernel in panels at matrix-product speed, a sparse one a column at a time.
pub(crate) fn residual_factor(k: &Weights, tol: f64) -> ResidualFactor {
    let s = match k {
        Weights::Dense(m) => return ResidualFactor::new(m.as_ref(), tol),
        Weights::Sparse(s) => s,
    };
    let diag = (0..s.n())
        .map(|i| {
            let (c, v) = s.row(i);
            c.binary_search(&(i as u32)).map_or(0.0, |p| v[p])
        })
        .collect();
    let f = factorize(diag, tol, s.n(), |p, out| s.column_into(p, out));
    ResidualFactor::from_cholesky(f.chol, tol)
}
