//! Kernel PCA fitted through landmarks (Nyström; maths §21): memory O(r² + chunk)
//! whatever N, so the fit streams over data larger than memory, on one machine or as a
//! reduction on a cluster.
//!
//! With landmarks P (r rows) and K_PP = L Lᵀ (pivoted Cholesky with the rank tolerance;
//! landmarks the arithmetic cannot tell apart are dropped), every point z has the
//! feature vector f(z) = L⁻¹ k_P(z) ∈ ℝʳ: the Nyström kernel is k^P(a, b) = f(a)ᵀ f(b).
//! Kernel PCA of k^P on the N training points is PCA of their feature vectors:
//! M = Σ_i (f_i − f̄)(f_i − f̄)ᵀ (r×r; uncentred: Σ f_i f_iᵀ) = V Λ Vᵀ, and
//! y(z) = V_dᵀ (f(z) − f̄) for training and new points alike. (SPEC §11 writes
//! Λ^{−1/2} in front; that would give every coordinate unit norm over the training set
//! instead of λ_j, so it is dropped here: with all points as landmarks this is exactly
//! kernel PCA, which the tests check.)
//!
//! The fit reads the data three times, chunk by chunk: a uniform sample (the landmark
//! choice, ε = `auto`, and the novelty score), the sums (M and f̄: one r×r and one r
//! vector, added chunk by chunk in order), and the embedding (y of every training row).
//! The sums are taken about the sample's mean feature vector, so the centring does not
//! cancel digits. Both passes over all N rows take their kernel values from
//! [`Kernel::block_loose_then`](crate::kernel::Kernel) (fused multiply-adds in the exp,
//! squared distances from differences on at most 8 coordinates): within a few ulp of
//! the extension's, not its bits, and a tenth of the fit's time less at N = 10⁶. So the
//! stored training embedding equals `extend` of the training rows to rounding (~1e-15
//! relative), not bitwise; [`FittedNystromKpca::embed`] gives the extension's bits.

use super::super::landmarks::{Landmarks, SAMPLE};
use crate::diagnostics::novelty::{Novelty, Pending};
use crate::error::{Error, Result};
use crate::kernel::distance::row_sq_norms;
use crate::kernel::Kernel;
use crate::linalg::pivoted_cholesky::pivoted_cholesky;
use crate::linalg::stored::StoredMat;
use crate::model::method::Transient;
use crate::model::params::{Kind, ParamSpec};
use crate::rng::Rng;
use crate::validate;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatMut, MatRef, Par};
use serde::{Deserialize, Serialize};

/// Kernel PCA through landmarks (a Nyström fit).
///
/// ```
/// use oose::methods::kernel_pca::NystromKpca;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(3000, 0.0, false, 0).points;
/// let m = NystromKpca { n_landmarks: 200, ..Default::default() }.fit(x.as_ref()).unwrap();
/// assert_eq!(m.embedding().nrows(), 3000);
/// let again = m.extend(x.as_ref().subrows(0, 10)).unwrap().coordinates;
/// assert!((again - m.embedding().subrows(0, 10)).norm_max() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NystromKpca {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// The kernel (default gaussian with ε = `auto`, chosen on the sample); positive
    /// definite kernels only.
    pub kernel: Kernel,
    /// Centre the features with the training mean (default true).
    pub centering: bool,
    /// Number of landmarks r (default 500).
    pub n_landmarks: usize,
    /// Landmark choice (default P-greedy).
    pub landmarks: Landmarks,
    /// Rows the landmark choice, ε = `auto` and the novelty score look at: a uniform
    /// sample when N is larger (default 10000; at least `n_landmarks`).
    pub landmark_sample: usize,
    /// Seed of the sample and of random and max–min landmarks (default 0).
    pub seed: u64,
    /// Relative tolerance: landmarks whose pivot falls below it, and eigenvalues below
    /// `rank_tolerance · λ₁`, count as 0 (default 1e-12).
    pub rank_tolerance: f64,
}

impl Default for NystromKpca {
    fn default() -> Self {
        NystromKpca {
            n_components: 2,
            kernel: Kernel::default(),
            centering: true,
            n_landmarks: 500,
            landmarks: Landmarks::PGreedy,
            landmark_sample: SAMPLE,
            seed: 0,
            rank_tolerance: 1e-12,
        }
    }
}

/// What the sums pass needs: the landmarks, their factor and the kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NystromPlan {
    params: NystromKpca,
    n_train: usize,
    /// Landmark rows among the training rows (in the order kept), where known.
    indices: Vec<usize>,
    landmarks: StoredMat,
    landmark_sq: Vec<f64>,
    /// L⁻ᵀ (r×r): f(z) = (k_P(z)ᵀ L⁻ᵀ)ᵀ.
    linv_t: StoredMat,
    /// The sample's mean feature vector (zero when uncentred): the sums' origin.
    shift: Vec<f64>,
}

/// The sums of one or more chunks over the kernel rows c_i = k_P(x_i), about
/// c₀ = L μ₀ (the kernel row of the plan's shift μ₀): added in chunk order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NystromSums {
    /// Rows summed.
    pub n: usize,
    /// Σ (c_i − c₀) (r).
    pub first: Vec<f64>,
    /// Σ (c_i − c₀)(c_i − c₀)ᵀ (r×r; its lower triangle: the upper is not read).
    pub second: StoredMat,
    /// Σ k(x_i, x_i).
    pub trace: f64,
    /// Unused (0): the kernel's trace the landmarks miss is measured on the sample
    /// ([`NystromPlan::finish_with_sample`]); kept so that the sums' bytes keep their
    /// layout.
    pub missed: f64,
}

/// Encodes with postcard (the model file's payload encoding; no header).
fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_allocvec(v).expect("serialising to memory cannot fail")
}

/// Decodes what [`encode`] wrote, checking that every byte was read and that the sizes
/// agree (`ok`).
fn decode<'a, T: Deserialize<'a>>(
    what: &str,
    bytes: &'a [u8],
    ok: impl Fn(&T) -> bool,
) -> Result<T> {
    let corrupted = |why: String| {
        Error::Model(crate::error::ModelError::Corrupted(format!(
            "{what}: {why}"
        )))
    };
    let (v, rest) = postcard::take_from_bytes::<T>(bytes).map_err(|e| corrupted(e.to_string()))?;
    if !rest.is_empty() {
        return Err(corrupted(format!("{} bytes after the data", rest.len())));
    }
    if !ok(&v) {
        return Err(corrupted("inconsistent sizes".into()));
    }
    Ok(v)
}

impl NystromSums {
    /// The sums as bytes (to move them between processes: a cluster's reduction).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// Sums from [`NystromSums::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<NystromSums> {
        decode("Nyström sums", bytes, |s: &NystromSums| {
            s.second.is_consistent() && s.second.is_shape(s.first.len(), s.first.len())
        })
    }

    /// Adds `other` (the next chunks' sums).
    pub fn add(&mut self, other: &NystromSums) -> Result<()> {
        if other.first.len() != self.first.len()
            || !other.second.is_shape(self.first.len(), self.first.len())
        {
            return Err(Error::Shape {
                what: "Nyström sums",
                expected: format!("{} landmarks", self.first.len()),
                got: format!("{}", other.first.len()),
            });
        }
        self.n += other.n;
        self.first
            .iter_mut()
            .zip(&other.first)
            .for_each(|(a, b)| *a += b);
        // Only the lower triangle is read (see `second`).
        self.second.add_lower_assign(&other.second);
        self.trace += other.trace;
        self.missed += other.missed;
        Ok(())
    }
}

/// A kernel PCA fitted through landmarks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedNystromKpca {
    plan: NystromPlan,
    /// f̄ (r; zero when uncentred).
    mean: Vec<f64>,
    eigenvalues: Vec<f64>,
    /// L⁻ᵀ V_d (r×d): y(z) = k_P(z)ᵀ A − b.
    projector: StoredMat,
    /// b = V_dᵀ f̄.
    offset: Vec<f64>,
    /// V_d (r×d), for the diagnostics.
    vectors: StoredMat,
    trace: f64,
    missed: f64,
    /// The training embedding (N×d); 0×d when it was streamed out instead.
    embedding: StoredMat,
    #[serde(skip)]
    novelty: Pending,
    #[serde(skip)]
    warnings: Transient<Vec<String>>,
}

impl NystromKpca {
    fn check(&self, n: usize, width: usize) -> Result<()> {
        if self.kernel == Kernel::Precomputed || !self.kernel.is_positive_definite(width) {
            return Err(Error::param(
                "kernel",
                format!(
                    "a Nyström fit needs a positive definite kernel on points, not {}",
                    self.kernel.name()
                ),
            ));
        }
        validate::rank_tolerance(self.rank_tolerance)?;
        validate::at_least_one("n_landmarks", self.n_landmarks)?;
        if self.n_components == 0 || self.n_components > self.n_landmarks.min(n) {
            return Err(Error::param(
                "n_components",
                format!(
                    "must be between 1 and the number of landmarks and of points ({}), got {}",
                    self.n_landmarks.min(n),
                    self.n_components
                ),
            ));
        }
        Ok(())
    }

    /// The sample's rows among N (all of them when N is at most the sample size), in
    /// increasing order; O(sample) memory.
    pub fn sample_rows(&self, n: usize) -> Vec<usize> {
        let size = self.landmark_sample.max(self.n_landmarks);
        if n <= size {
            return (0..n).collect();
        }
        Rng::new(self.seed).sample_sparse(n, size)
    }

    /// The landmarks and their factor from the `sample` rows (`rows`: their indices
    /// among the N training rows, from [`NystromKpca::sample_rows`]).
    pub fn plan(&self, sample: MatRef<'_, f64>, rows: &[usize], n: usize) -> Result<NystromPlan> {
        validate::training_points("training data", sample)?;
        self.check(n, sample.ncols())?;
        if rows.len() != sample.nrows() {
            return Err(Error::Shape {
                what: "sample row indices",
                expected: format!("{} indices", sample.nrows()),
                got: format!("{}", rows.len()),
            });
        }
        let kernel = self.kernel.resolve(sample)?;
        // Every row's k(x, x) finite, whatever the landmark choice (an overflowed one
        // would leave the landmarks' matrix no rank): named here.
        kernel.check_diagonal(&row_sq_norms(sample))?;
        // The seed's stream after the sample draw, so that the choice differs from it.
        let mut rng = Rng::new(self.seed ^ 0x6c61_6e64_6d61_726b);
        let chosen = self.landmarks.choose(
            sample,
            self.n_landmarks,
            kernel,
            self.rank_tolerance,
            &mut rng,
        )?;
        let p = crate::datasets::select_rows(sample, &chosen);
        let kpp = kernel.gram(p.as_ref(), Par::Seq);
        let chol = pivoted_cholesky(kpp.as_ref(), self.rank_tolerance);
        let r = chol.rank();
        if r < self.n_components {
            return Err(Error::param(
                "n_components",
                format!(
                    "the landmarks span {r} dimension(s) of the kernel's feature space; \
                     fewer than the {} asked (add landmarks or lower n_components)",
                    self.n_components
                ),
            ));
        }
        let keep = &chol.pivots;
        let landmarks = Mat::from_fn(r, p.ncols(), |i, j| p[(keep[i], j)]);
        let mut linv = Mat::<f64>::identity(r, r);
        solve_lower_triangular_in_place(chol.l(), linv.as_mut(), Par::Seq);
        let linv_t = linv.transpose().to_owned();
        let mut plan = NystromPlan {
            params: NystromKpca {
                kernel,
                ..self.clone()
            },
            n_train: n,
            indices: keep.iter().map(|&i| rows[chosen[i]]).collect(),
            landmark_sq: row_sq_norms(landmarks.as_ref()),
            landmarks: StoredMat::from_mat(landmarks.as_ref()),
            linv_t: StoredMat::from_mat(linv_t.as_ref()),
            shift: vec![0.0; r],
        };
        if self.centering {
            let f = plan.features(sample, Par::rayon(0)).0;
            plan.shift = (0..r)
                .map(|j| f.col_as_slice(j).iter().sum::<f64>() / f.nrows() as f64)
                .collect();
        }
        Ok(plan)
    }

    /// Fits on the rows of `x` (N×D) in memory; the embedding is stored.
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedNystromKpca> {
        validate::training_points("training data", x)?;
        self.fit_rows(&mut InMemory(x, usize::MAX), None)
    }

    /// Fits on `source`, reading it three times chunk by chunk (memory O(r² + chunk)).
    /// With `sink`, each chunk's training coordinates go to `sink(first_row, y)` and the
    /// model keeps no embedding; without, the model keeps it (N×d).
    pub fn fit_rows(
        &self,
        source: &mut dyn Rows,
        mut sink: Option<Sink<'_>>,
    ) -> Result<FittedNystromKpca> {
        let (n, width) = source.shape();
        if n == 0 || width == 0 {
            return Err(Error::Empty {
                what: "training data",
                rows: n,
                cols: width,
            });
        }
        self.check(n, width)?;
        let rows = self.sample_rows(n);
        let mut sample = Mat::<f64>::zeros(rows.len(), width);
        let mut next = 0;
        source.for_each_chunk(&mut |start, chunk| {
            finite_from(start, chunk)?;
            while next < rows.len() && rows[next] < start + chunk.nrows() {
                sample
                    .as_mut()
                    .row_mut(next)
                    .copy_from(chunk.row(rows[next] - start));
                next += 1;
            }
            Ok(())
        })?;
        crate::progress::report(|| format!("Nyström: choosing landmarks on {} rows", rows.len()));
        let plan = self.plan(sample.as_ref(), &rows, n)?;
        let mut sums = plan.empty_sums();
        let mut done = 0usize;
        source.for_each_chunk(&mut |_, chunk| {
            sums.add(&plan.sums(chunk)?)?;
            done += chunk.nrows();
            crate::progress::report(|| format!("Nyström: sums {done}/{n} rows"));
            crate::progress::check()
        })?;
        let mut fitted = plan.finish_with_sample(&sums, sample.as_ref())?;
        drop(sample);
        let d = fitted.eigenvalues.len();
        // The training embedding, column-major, written in place block by block (no
        // copy of the whole afterwards).
        let mut stored = vec![0.0; if sink.is_none() { n * d } else { 0 }];
        let mut done = 0usize;
        source.for_each_chunk(&mut |start, chunk| {
            // Checked in the first two passes already; only the width can have changed.
            validate::columns("training data", chunk, width)?;
            fitted.embed_blocks(chunk, true, |at, y| match sink.as_mut() {
                Some(f) => f(start + at, y),
                None => {
                    MatMut::from_column_major_slice_mut(&mut stored, n, d)
                        .subrows_mut(start + at, y.nrows())
                        .copy_from(y);
                    Ok(())
                }
            })?;
            done += chunk.nrows();
            crate::progress::report(|| format!("Nyström: embedding {done}/{n} rows"));
            crate::progress::check()
        })?;
        fitted.embedding = if sink.is_none() {
            StoredMat::from_column_major(n, d, stored)
        } else {
            StoredMat::from_mat(Mat::<f64>::zeros(0, d).as_ref())
        };
        Ok(fitted)
    }
}

impl FittedNystromKpca {
    /// The coordinates of the rows of `z` alone (no diagnostics, no novelty score): the
    /// training embedding's pass. In blocks of [`NystromPlan::chunk_rows`] rows, in
    /// parallel, so memory stays O(r · block) whatever `z`'s size; the rows are those
    /// of [`OutOfSample::extend`](crate::methods::OutOfSample::extend).
    pub fn embed(&self, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        validate::columns("new points", z, self.plan.landmarks.ncols())?;
        validate::finite("new points", z)?;
        let mut y = Mat::<f64>::zeros(z.nrows(), self.eigenvalues.len());
        self.embed_blocks(z, false, |at, part| {
            y.as_mut().subrows_mut(at, part.nrows()).copy_from(part);
            Ok(())
        })?;
        Ok(y)
    }

    /// The coordinates of the rows of `z` block by block, each block handed to
    /// `put(first_row, y)` in order: the fit's embedding pass (`loose`: the kernel rows
    /// of [`Kernel::block_loose_then`](crate::kernel::Kernel), within a few ulp of the
    /// extension's, a fifth less time) and [`embed`](Self::embed) (the extension's bits).
    fn embed_blocks(
        &self,
        z: MatRef<'_, f64>,
        loose: bool,
        mut put: impl FnMut(usize, MatRef<'_, f64>) -> Result<()>,
    ) -> Result<()> {
        let mut at = 0;
        rows::for_blocks(
            z,
            self.plan.chunk_rows(),
            |_, b, buffer| {
                Ok(if loose {
                    self.coordinates_loose_in(b, buffer)
                } else {
                    self.coordinates_in(b, buffer, Par::Seq)
                })
            },
            |y| {
                put(at, y.as_ref())?;
                at += y.nrows();
                Ok(())
            },
        )
    }

    /// The fitted model as bytes (without its novelty score, which the model keeps).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// A fitted model from [`FittedNystromKpca::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<FittedNystromKpca> {
        decode("Nyström model", bytes, |f: &FittedNystromKpca| {
            f.is_consistent()
        })
    }

    /// Fits the novelty score on `sample`, handed to the model once.
    fn novelty_from(&self, sample: MatRef<'_, f64>) {
        self.novelty.set(Novelty::fit(sample));
    }
}

mod fitted;
mod plan;
mod rows;
use rows::finite_from;
pub use rows::{InMemory, Rows, Sink};

/// The landmark parameters (shared with the interfaces).
pub(crate) const LANDMARK_SPECS: [ParamSpec; 4] = [
    ParamSpec::new(
        "n_landmarks",
        "landmarks",
        Kind::Int,
        "Number of landmarks r (a Nyström fit: memory O(r² + chunk), any N).",
    ),
    ParamSpec::new(
        "landmarks",
        "landmark-choice",
        Kind::Choice(Landmarks::NAMES),
        "How landmarks are chosen (on the sample).",
    ),
    ParamSpec::new(
        "landmark_sample",
        "landmark-sample",
        Kind::Int,
        "Rows of the uniform sample the landmark choice, ε = auto and the novelty score \
         use when N is larger.",
    ),
    crate::model::specs::SEED,
];
