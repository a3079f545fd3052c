//! The fitted Nyström model: extension through the landmarks, and the registry's
//! contract.

use super::{FittedNystromKpca, NystromKpca, LANDMARK_SPECS};
use crate::diagnostics::novelty::Novelty;
use crate::error::Result;
use crate::extend::{by_chunks, Extension};
use crate::kernel::params::KERNEL_SPECS;
use crate::methods::OutOfSample;
use crate::model::method::{no_such_option, ExtendOptions, Fitted, Input, Method, Registered};
use crate::model::params::{join, ParamSpec, Values, NO_PARAMS};
use crate::model::specs::{fmt_list, put_debug, N_COMPONENTS, RANK_TOLERANCE};
use crate::validate;
use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatMut, MatRef, Par};

impl FittedNystromKpca {
    /// The parameters, with the kernel's ε as used.
    pub fn params(&self) -> &NystromKpca {
        &self.plan.params
    }

    /// The d eigenvalues of the (centred) Nyström kernel matrix, largest first.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }

    /// Number of training rows N.
    pub fn n_train(&self) -> usize {
        self.plan.n_train
    }

    /// The landmarks kept (r×D), in pivot order.
    pub fn landmarks(&self) -> MatRef<'_, f64> {
        self.plan.landmarks.view()
    }

    /// The landmarks' rows among the training rows.
    pub fn landmark_indices(&self) -> &[usize] {
        &self.plan.indices
    }

    /// The share of the kernel's trace over the training rows that the landmarks miss,
    /// Σ P_P(x_i)² / Σ k(x_i, x_i) (0: the Nyström kernel is exact on the training set),
    /// measured on the uniform sample of `landmark_sample` rows (every row when N is at
    /// most that); NaN for a model finished from sums without the sample.
    pub fn missed_trace(&self) -> f64 {
        if self.trace > 0.0 {
            self.missed / self.trace
        } else {
            0.0
        }
    }

    /// Whether the training embedding is kept (false after a streamed fit).
    pub fn keeps_embedding(&self) -> bool {
        self.embedding.nrows() == self.plan.n_train
    }

    /// Coordinates of the rows of `z`: k_P(z)ᵀ L⁻ᵀ V_d − V_dᵀ f̄. Row by row.
    pub fn coordinates(&self, z: MatRef<'_, f64>, par: Par) -> Mat<f64> {
        let (kz, _) = self.plan.kernel_rows(z, par);
        self.project(kz.as_ref(), par)
    }

    /// [`FittedNystromKpca::coordinates`] with the kernel rows written in `buffer` (the
    /// same bits).
    pub(super) fn coordinates_in(
        &self,
        z: MatRef<'_, f64>,
        buffer: &mut Mat<f64>,
        par: Par,
    ) -> Mat<f64> {
        let (kz, _) = self.plan.kernel_rows_in(z, buffer, par);
        self.project(kz.rb(), par)
    }

    /// [`FittedNystromKpca::coordinates_in`] with the kernel rows of
    /// [`Kernel::block_loose_then`](crate::kernel::Kernel) (within a few ulp, other bits),
    /// on this thread.
    pub(super) fn coordinates_loose_in(
        &self,
        z: MatRef<'_, f64>,
        buffer: &mut Mat<f64>,
    ) -> Mat<f64> {
        // In pieces of `cache_rows` rows, so that a piece's kernel rows are still in the
        // L2 cache when projected (N = 10⁶, r = 434: this pass 0.58 → 0.46 s; with 512
        // rows 0.53 s, 302 rows 0.55 s).
        let step = self.plan.cache_rows();
        let mut y = Mat::<f64>::zeros(z.nrows(), self.eigenvalues.len());
        for s in (0..z.nrows()).step_by(step) {
            let m = step.min(z.nrows() - s);
            let kz = self.plan.kernel_rows_loose_in(z.subrows(s, m), buffer);
            self.project_into(kz.rb(), y.as_mut().subrows_mut(s, m), Par::Seq);
        }
        y
    }

    fn project(&self, kz: MatRef<'_, f64>, par: Par) -> Mat<f64> {
        let mut y = Mat::<f64>::zeros(kz.nrows(), self.offset.len());
        self.project_into(kz, y.as_mut(), par);
        y
    }

    /// y ← k_P(z)ᵀ A − b for the kernel rows `kz`, written into `y`.
    fn project_into(&self, kz: MatRef<'_, f64>, mut y: MatMut<'_, f64>, par: Par) {
        matmul(
            y.rb_mut(),
            Accum::Replace,
            kz,
            self.projector.view(),
            1.0,
            par,
        );
        for (j, b) in self.offset.iter().enumerate() {
            y.rb_mut().col_mut(j).iter_mut().for_each(|v| *v -= b);
        }
    }

    /// The extension of the rows of `z` (coordinates, power function, reconstruction
    /// error), on this thread.
    pub(super) fn extend_block(&self, z: MatRef<'_, f64>) -> Extension {
        let (f, kz, kzz) = self.plan.features(z, Par::Seq);
        let y = self.project(kz.as_ref(), Par::Seq);
        let m = z.nrows();
        // Each row's sums over j in order, taken column by column (contiguous).
        let (mut norm2, mut centred2, mut y2) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        for (j, mu) in self.mean.iter().enumerate() {
            let col = f.col_as_slice(j);
            for ((n2, c2), &v) in norm2.iter_mut().zip(centred2.iter_mut()).zip(col) {
                *n2 += v * v;
                *c2 += (v - mu) * (v - mu);
            }
        }
        for j in 0..y.ncols() {
            for (s, &v) in y2.iter_mut().zip(y.col_as_slice(j)) {
                *s += v * v;
            }
        }
        let residual: Vec<f64> = kzz
            .iter()
            .zip(&norm2)
            .map(|(k, n2)| (k - n2).max(0.0))
            .collect();
        let reconstruction_error = residual
            .iter()
            .zip(centred2.iter().zip(&y2))
            .map(|(res, (c2, y2))| res + (c2 - y2).max(0.0))
            .collect();
        Extension {
            coordinates: y,
            residual,
            reconstruction_error,
            extra: Vec::new(),
        }
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let p = &self.plan;
        let r = p.rank();
        let d = self.eigenvalues.len();
        d >= 1
            && r >= d
            && p.landmarks.is_consistent()
            && p.landmark_sq.len() == r
            && p.linv_t.is_shape(r, r)
            && p.shift.len() == r
            && p.indices.len() == r
            && self.mean.len() == r
            && self.projector.is_shape(r, d)
            && self.vectors.is_shape(r, d)
            && self.offset.len() == d
            && self.embedding.is_consistent()
            && self.embedding.ncols() == d
            && (self.embedding.nrows() == p.n_train || self.embedding.nrows() == 0)
    }
}

impl OutOfSample for FittedNystromKpca {
    /// The training embedding; empty (0×d) after a streamed fit, whose embedding went to
    /// the sink (extend the training rows to have it again: the same coordinates).
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    /// Through the landmarks: r kernel values per row. `residual` is the Nyström power
    /// function P_P(z)² (what the landmarks do not represent), `reconstruction_error`
    /// adds the part of the feature vector outside the d components.
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("new points", new, self.plan.landmarks.ncols())?;
        validate::finite("new points", new)?;
        let d = self.eigenvalues.len();
        by_chunks(new, self.plan.rank(), d, |_, z| Ok(self.extend_block(z)))
    }

    fn input_width(&self) -> usize {
        self.plan.landmarks.ncols()
    }

    fn n_components(&self) -> usize {
        self.eigenvalues.len()
    }
}

impl Method for NystromKpca {
    type Fitted = FittedNystromKpca;

    const SPECS: &'static [ParamSpec] = &join::<13>(&[
        NO_PARAMS,
        &[N_COMPONENTS],
        &KERNEL_SPECS,
        &[super::super::CENTERING],
        &LANDMARK_SPECS,
        &[RANK_TOLERANCE],
    ]);

    crate::params_as_data!(NystromKpca {
        n_components,
        kernel,
        centering,
        n_landmarks,
        landmarks,
        landmark_sample,
        seed,
        rank_tolerance
    });

    fn configurations() -> Vec<crate::model::method::Configuration> {
        use crate::model::method::Configuration;
        let c = |label, choice: &str| {
            Configuration::exact(
                label,
                Values::new()
                    .with("n_landmarks", 60usize)
                    .with("landmarks", choice),
            )
        };
        vec![
            c("p-greedy", "p-greedy"),
            c("random", "random"),
            c("max-min", "max-min"),
            Configuration::exact(
                "uncentred-laplacian",
                Values::new()
                    .with("n_landmarks", 40usize)
                    .with("kernel", "laplacian")
                    .with("centering", false),
            ),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedNystromKpca> {
        crate::model::method::points_only(input, Self::NAME, |x| self.fit(x))
    }
}

impl Fitted for FittedNystromKpca {
    crate::fitted_basics!();

    fn fit_warnings(&self) -> &[String] {
        &self.warnings.0
    }

    /// Fitted on the landmark sample (a uniform sample of the training rows, or all of
    /// them), handed over once by the fit.
    fn novelty(&self, _input: Option<Input<'_>>) -> Option<Novelty> {
        self.novelty.take()
    }

    fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
        opts.refuse_all_but(&[], |o| match o {
            "extension" => "a Nyström model extends through its landmarks already".into(),
            o => no_such_option(NystromKpca::NAME, o),
        })
    }

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = &self.plan.params;
        v.push(("kernel".into(), p.kernel.name().into()));
        if let Some(e) = p.kernel.epsilon() {
            v.push(("epsilon".into(), format!("{e:?}")));
        }
        v.push(("centering".into(), p.centering.to_string()));
        v.push(("n_landmarks".into(), self.plan.rank().to_string()));
        v.push(("landmarks".into(), p.landmarks.name().into()));
        v.push((
            "landmark_sample".into(),
            p.landmark_sample
                .max(p.n_landmarks)
                .min(self.plan.n_train)
                .to_string(),
        ));
        v.push(("missed_trace".into(), format!("{:e}", self.missed_trace())));
        v.push(("eigenvalues".into(), fmt_list(&self.eigenvalues)));
        v.push(("embedding_kept".into(), self.keeps_embedding().to_string()));
        put_debug(v, "rank_tolerance", p.rank_tolerance);
    }

    fn eigenvalues(&self) -> Option<&[f64]> {
        Some(&self.eigenvalues)
    }

    fn training_rows(&self) -> usize {
        self.plan.n_train
    }
}
