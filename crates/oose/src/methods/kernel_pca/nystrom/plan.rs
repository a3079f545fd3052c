//! The plan's passes over the rows: kernel rows and feature vectors, the sums (one r×r
//! matrix and one r vector per block, added in block order) and the r×r eigenproblem
//! that finishes the fit.

use super::rows;
use super::{decode, encode, FittedNystromKpca, NystromPlan, NystromSums};
use crate::diagnostics::novelty::Pending;
use crate::error::{Error, Result};
use crate::kernel::distance::row_sq_norms;
use crate::linalg::eigen::{top_eigen, Solver};
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::validate;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, MatRef, Par};

impl NystromPlan {
    /// The plan as bytes (to send it to a cluster's workers once).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// A plan from [`NystromPlan::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<NystromPlan> {
        decode("Nyström plan", bytes, |p: &NystromPlan| {
            let r = p.landmarks.nrows();
            p.landmarks.is_consistent()
                && p.linv_t.is_consistent()
                && p.linv_t.is_shape(r, r)
                && p.landmark_sq.len() == r
                && p.shift.len() == r
                && p.indices.len() == r
                && r >= p.params.n_components
        })
    }

    /// Number of landmarks kept r.
    pub fn rank(&self) -> usize {
        self.landmarks.nrows()
    }

    /// Number of training rows N the plan was made for.
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// Rows per block of the sums and embedding passes: about 2²⁰ kernel values (8 MB),
    /// so that a block's features stay in cache.
    pub fn chunk_rows(&self) -> usize {
        ((1usize << 20) / self.rank().max(1)).clamp(256, 1 << 16)
    }

    /// The feature vectors f(z) = L⁻¹ k_P(z) (m×r) of the rows of `z`, their kernel
    /// rows k_P(z) (m×r) and k(z, z): the extension's path, in matrices of their own.
    pub(super) fn features(&self, z: MatRef<'_, f64>, par: Par) -> (Mat<f64>, Mat<f64>, Vec<f64>) {
        let (kz, kzz) = self.kernel_rows(z, par);
        let mut f = Mat::<f64>::zeros(z.nrows(), self.rank());
        // L⁻ᵀ is upper triangular: half the products of a full one.
        triangular::matmul(
            f.as_mut(),
            BlockStructure::Rectangular,
            Accum::Replace,
            kz.as_ref(),
            BlockStructure::Rectangular,
            self.linv_t.view(),
            BlockStructure::TriangularUpper,
            1.0,
            par,
        );
        (f, kz, kzz)
    }

    /// The kernel rows k_P(z) (m×r) of the rows of `z` in a matrix of their own, and
    /// k(z, z).
    pub(super) fn kernel_rows(&self, z: MatRef<'_, f64>, par: Par) -> (Mat<f64>, Vec<f64>) {
        let mut kz = Mat::new();
        let kzz = self.kernel_rows_in(z, &mut kz, par).1;
        (kz, kzz)
    }

    /// The kernel rows written into `buffer` (the fit's passes reuse one per thread: no
    /// allocation per block; [`rows::scratch_mat`], the same bits), and k(z, z).
    pub(super) fn kernel_rows_in<'b>(
        &self,
        z: MatRef<'_, f64>,
        buffer: &'b mut Mat<f64>,
        par: Par,
    ) -> (MatMut<'b, f64>, Vec<f64>) {
        let mut kz = rows::scratch_mat(buffer, z.nrows(), self.rank());
        let (kzz, _) = self.kernel_rows_into(z, kz.rb_mut(), par, |_, _| ());
        (kz, kzz)
    }

    /// [`NystromPlan::kernel_rows_in`] by [`Kernel::block_loose_then`](crate::kernel::Kernel)
    /// (within a few ulp, other bits), on this thread; without k(z, z).
    pub(super) fn kernel_rows_loose_in<'b>(
        &self,
        z: MatRef<'_, f64>,
        buffer: &'b mut Mat<f64>,
    ) -> MatMut<'b, f64> {
        let mut kz = rows::scratch_mat(buffer, z.nrows(), self.rank());
        self.params.kernel.block_loose_then(
            kz.rb_mut(),
            z,
            self.landmarks.view(),
            &self.landmark_sq,
            |_, _| (),
        );
        kz
    }

    /// The kernel rows written into `kz`, with `then(j, column j)` applied to each column
    /// as it is computed ([`Kernel::block_into_then`](crate::kernel::Kernel)): k(z, z)
    /// and the results of `then`.
    fn kernel_rows_into<T: Send>(
        &self,
        z: MatRef<'_, f64>,
        kz: MatMut<'_, f64>,
        par: Par,
        then: impl Fn(usize, &mut [f64]) -> T + Sync,
    ) -> (Vec<f64>, Vec<T>) {
        let z_sq = row_sq_norms(z);
        let out = self.params.kernel.block_into_then::<false, _>(
            kz,
            z,
            &z_sq,
            self.landmarks.view(),
            &self.landmark_sq,
            par,
            then,
        );
        (self.diagonal(&z_sq), out)
    }

    /// k(z, z) of rows with squared norms `z_sq`.
    fn diagonal(&self, z_sq: &[f64]) -> Vec<f64> {
        z_sq.iter()
            .map(|&s| self.params.kernel.diag_value(s))
            .collect()
    }

    /// Zero sums.
    pub fn empty_sums(&self) -> NystromSums {
        let r = self.rank();
        NystromSums {
            n: 0,
            first: vec![0.0; r],
            second: StoredMat::from_mat(Mat::<f64>::zeros(r, r).as_ref()),
            trace: 0.0,
            missed: 0.0,
        }
    }

    /// The sums of the rows of `chunk` (a reduction: add them in chunk order).
    ///
    /// Blocks of [`NystromPlan::chunk_rows`] rows are summed in parallel (one thread
    /// each) and added in order: the result does not depend on the thread count.
    pub fn sums(&self, chunk: MatRef<'_, f64>) -> Result<NystromSums> {
        validate::columns("training data", chunk, self.landmarks.ncols())?;
        validate::finite("training data", chunk)?;
        let mut total = self.empty_sums();
        let c0 = self.kernel_shift();
        // Added in block order as each group of blocks is done (the same additions as
        // adding them all at the end: the same bits), so that a large chunk does not hold
        // an r×r matrix per block.
        rows::for_blocks(
            chunk,
            self.chunk_rows(),
            |_, b, buffer| Ok(self.block_sums(b, &c0, buffer)),
            |part| total.add(&part),
        )?;
        Ok(total)
    }

    /// c₀ = L μ₀, the kernel row whose feature vector is the shift μ₀ (zero when
    /// uncentred): the solve of L⁻¹ c₀ = μ₀ with the stored L⁻ᵀ.
    fn kernel_shift(&self) -> Vec<f64> {
        let mut c0 = Mat::from_fn(self.rank(), 1, |i, _| self.shift[i]);
        solve_lower_triangular_in_place(self.linv_t.view().transpose(), c0.as_mut(), Par::Seq);
        c0.col_as_slice(0).to_vec()
    }

    /// Rows per cache-sized piece: a power of two of rows holding fewer than 2¹⁷ kernel
    /// values (under 1 MiB; 256 rows at r = 434, at least 64), so that the piece's
    /// kernel rows are still in the L2 cache when they are used (multiplied, projected).
    pub(super) fn cache_rows(&self) -> usize {
        1usize << (17 - (self.rank().max(1).ilog2() + 1).min(11))
    }

    /// The sums of one block, on one thread: over the kernel rows, not the feature
    /// vectors (maths §11): the features' triangular product is left to the r×r matrix
    /// of [`NystromPlan::finish`], which halves the products of this pass.
    /// `c0`: [`NystromPlan::kernel_shift`].
    ///
    /// The block is taken in pieces of [`NystromPlan::cache_rows`] rows, added in order:
    /// a piece's kernel rows are multiplied while still in the L2 cache, where the
    /// product runs ~7 % faster than from a whole block's 8 MB (N = 10⁶, r = 434: the
    /// sums pass 2.31–2.38 → 2.02–2.14 s; pieces of 128 rows the same).
    fn block_sums(&self, chunk: MatRef<'_, f64>, c0: &[f64], buffer: &mut Mat<f64>) -> NystromSums {
        let r = self.rank();
        let step = self.cache_rows().min(chunk.nrows().max(1));
        let mut first = vec![0.0; r];
        // Only the lower triangle of the symmetric Σ (c − c₀)(c − c₀)ᵀ: half the products.
        let mut second = vec![0.0; r * r];
        let mut trace = 0.0;
        for (i, s) in (0..chunk.nrows()).step_by(step).enumerate() {
            let piece = chunk.subrows(s, step.min(chunk.nrows() - s));
            let mut kz = rows::scratch_mat(buffer, step, r).subrows_mut(0, piece.nrows());
            // Each column as it is computed (still in cache): c − c₀ and its sum.
            let sums = self.params.kernel.block_loose_then(
                kz.rb_mut(),
                piece,
                self.landmarks.view(),
                &self.landmark_sq,
                |j, col| shift_and_sum(col, c0[j]),
            );
            first.iter_mut().zip(sums).for_each(|(f, v)| *f += v);
            trace += self.diagonal(&row_sq_norms(piece)).iter().sum::<f64>();
            triangular::matmul(
                MatMut::from_column_major_slice_mut(&mut second, r, r),
                BlockStructure::TriangularLower,
                if i == 0 { Accum::Replace } else { Accum::Add },
                kz.rb().transpose(),
                BlockStructure::Rectangular,
                kz.rb(),
                BlockStructure::Rectangular,
                1.0,
                Par::Seq,
            );
        }
        NystromSums {
            n: chunk.nrows(),
            first,
            second: StoredMat::from_column_major(r, r, second),
            trace,
            missed: 0.0,
        }
    }

    /// [`NystromPlan::finish`] with the novelty score fitted on `sample` (the rows the
    /// plan was made from), as [`NystromKpca::fit_rows`](super::NystromKpca::fit_rows)
    /// does: what a reduction run elsewhere (a cluster) calls last.
    pub fn finish_with_sample(
        &self,
        sums: &NystromSums,
        sample: MatRef<'_, f64>,
    ) -> Result<FittedNystromKpca> {
        validate::columns("sample", sample, self.landmarks.ncols())?;
        validate::finite("sample", sample)?;
        let mut fitted = self.finish(sums)?;
        // The trace the landmarks miss, Σ (k(x, x) − ‖f(x)‖²), on the uniform sample (all
        // rows when N is at most its size): it needs each row's feature vector, which
        // the sums pass no longer forms, and from the sums alone it would be a
        // difference of two sums of size N carrying cond(K_PP) times their rounding.
        // `residual` is that power function, as the extension reports it.
        let missed: f64 = OutOfSample::extend(&fitted, sample)?.residual.iter().sum();
        let trace: f64 = self.diagonal(&row_sq_norms(sample)).iter().sum();
        fitted.missed = if trace > 0.0 {
            missed / trace * fitted.trace
        } else {
            0.0
        };
        fitted.novelty_from(sample);
        Ok(fitted)
    }

    /// The model from the sums of all N training rows (its embedding is left empty:
    /// extend the training rows, or use
    /// [`NystromKpca::fit_rows`](super::NystromKpca::fit_rows)). Its `missed_trace` is
    /// NaN: it is measured on the sample ([`NystromPlan::finish_with_sample`]).
    pub fn finish(&self, sums: &NystromSums) -> Result<FittedNystromKpca> {
        let r = self.rank();
        if sums.n != self.n_train || sums.first.len() != r || !sums.second.is_shape(r, r) {
            return Err(Error::Shape {
                what: "Nyström sums",
                expected: format!("{} rows over {r} landmarks", self.n_train),
                got: format!("{} rows over {} landmarks", sums.n, sums.first.len()),
            });
        }
        let n = sums.n as f64;
        let delta_c: Vec<f64> = sums.first.iter().map(|s| s / n).collect();
        // G = Σ (c − c̄)(c − c̄)ᵀ = Σ (c − c₀)(c − c₀)ᵀ − N δ δᵀ with δ = c̄ − c₀;
        // uncentred (c₀ = 0): Σ c cᵀ. Then M = L⁻¹ G L⁻ᵀ, the features' sums: the
        // rounding of G grows by cond(K_PP) only along the last pivots' directions, not
        // the top components (top eigenvalues and embedding equal to 5e-16 and 3e-14
        // with pivots down to 1e-12, maths §11).
        let s = sums.second.view();
        let g = Mat::from_fn(r, r, |a, b| {
            let v = s[(a.max(b), a.min(b))];
            if self.params.centering {
                v - n * delta_c[a] * delta_c[b]
            } else {
                v
            }
        });
        validate::computed_finite("Nyström sums", g.as_ref())?;
        let u = self.linv_t.view();
        let gu = crate::linalg::product(g.as_ref(), u, Par::Seq);
        let m = crate::linalg::product(u.transpose(), gu.as_ref(), Par::Seq);
        let m = Mat::from_fn(r, r, |a, b| 0.5 * (m[(a, b)] + m[(b, a)]));
        // δ in feature space: f̄ − μ₀ = L⁻¹ (c̄ − c₀).
        let delta: Vec<f64> = (0..r)
            .map(|a| (0..r).map(|b| u[(b, a)] * delta_c[b]).sum())
            .collect();
        let d = self.params.n_components;
        let eig = top_eigen(m.as_ref(), d, Solver::Dense)?;
        crate::linalg::eigen::require_positive(&eig.values, d, self.params.rank_tolerance)?;
        let mean: Vec<f64> = if self.params.centering {
            self.shift.iter().zip(&delta).map(|(m, d)| m + d).collect()
        } else {
            vec![0.0; r]
        };
        let v = eig.vectors;
        let a = crate::linalg::product(self.linv_t.view(), v.as_ref(), Par::Seq);
        let offset = (0..d)
            .map(|j| (0..r).map(|i| v[(i, j)] * mean[i]).sum())
            .collect();
        Ok(FittedNystromKpca {
            plan: self.clone(),
            mean,
            eigenvalues: eig.values,
            projector: StoredMat::from_mat(a.as_ref()),
            offset,
            vectors: StoredMat::from_mat(v.as_ref()),
            trace: sums.trace,
            // Measured on the sample by `finish_with_sample`; unknown from the sums.
            missed: f64::NAN,
            embedding: StoredMat::from_mat(Mat::<f64>::zeros(0, d).as_ref()),
            novelty: Pending::default(),
            warnings: Default::default(),
        })
    }
}

/// v ← v − c, returning the sum of the new entries: in eight running sums (sum k takes
/// the entries k, k + 8, …) added in a fixed order at the end, so that the additions
/// vectorise instead of waiting on one another. The same order on every path, so the
/// same bits on every CPU.
fn shift_and_sum(col: &mut [f64], c: f64) -> f64 {
    crate::linalg::simd::vectorized(
        #[inline(always)]
        || shift_and_sum_body(col, c),
    )
}

#[inline(always)]
fn shift_and_sum_body(col: &mut [f64], c: f64) -> f64 {
    let mut lanes = [0.0f64; 8];
    let mut blocks = col.chunks_exact_mut(8);
    for b in &mut blocks {
        for (s, v) in lanes.iter_mut().zip(b.iter_mut()) {
            *v -= c;
            *s += *v;
        }
    }
    let mut tail = 0.0;
    for v in blocks.into_remainder() {
        *v -= c;
        tail += *v;
    }
    let [s0, s1, s2, s3, s4, s5, s6, s7] = lanes;
    ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_and_sum_shifts_every_entry_and_sums_them_on_every_path() {
        let mut rng = crate::rng::Rng::new(7);
        for len in (0..40).chain([2416, 2417]) {
            let col: Vec<f64> = (0..len).map(|_| rng.uniform() * 3.0).collect();
            let c = 0.7;
            // The reference: the shifted entries summed exactly (as integers in units
            // of 2⁻⁶⁰, exact for these magnitudes), rounded once.
            let exact = |v: &[f64]| {
                let units: i128 = v.iter().map(|x| (x * 2f64.powi(60)) as i128).sum();
                units as f64 / 2f64.powi(60)
            };
            let shifted: Vec<f64> = col.iter().map(|v| v - c).collect();
            let want = exact(&shifted);
            let paths = crate::linalg::simd::each_path(
                #[inline(always)]
                || {
                    let mut v = col.clone();
                    let s = shift_and_sum_body(&mut v, c);
                    (s, v)
                },
            );
            let (_, (s0, v0)) = &paths[0];
            assert_eq!(v0, &shifted, "len {len}");
            // Each running sum adds len/8 terms, then four more additions: the bound
            // of recursive summation for that depth.
            let depth = (len / 8 + 5) as f64;
            let scale: f64 = shifted.iter().map(|v| v.abs()).sum();
            assert!(
                (s0 - want).abs() <= depth * f64::EPSILON * scale + 1e-15,
                "len {len}: {s0} vs {want}"
            );
            for (path, (s, v)) in &paths {
                assert_eq!(s.to_bits(), s0.to_bits(), "{path}, len {len}");
                assert_eq!(v, v0, "{path}, len {len}");
            }
            let mut v = col.clone();
            assert_eq!(shift_and_sum(&mut v, c).to_bits(), s0.to_bits());
        }
    }
}
