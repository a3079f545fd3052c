//! Landmark MDS (maths §6, de Silva–Tenenbaum): choose n landmarks (random, or max–min
//! greedy farthest-point), classical MDS on the landmarks, place every other training
//! point — and every new point — by the projection formula of maths §5 from its squared
//! distances to the landmarks. Memory is O(N·d + n²): no N×N matrix, so N = 10⁵ and
//! beyond fit.

use crate::error::Result;
use crate::extend::restricted::Joint;
use crate::extend::{by_chunks, Extension, Strategy};
use crate::kernel::distance::{row_sq_norms, self_sq_distances, sq_distances};
use crate::linalg::eigen::Solver;
use crate::linalg::stored::StoredMat;
use crate::methods::mds::cmds_info;
use crate::methods::mds::{Cmds, Definiteness};
use crate::methods::OutOfSample;
use crate::model::method::{points_only, Configuration, Fitted, Input, Method, Registered};
use crate::model::params::{Kind, ParamSpec, Values};
use crate::model::specs::{N_COMPONENTS, SEED, SOLVER};
use crate::rng::Rng;
use crate::validate;
use faer::{Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

pub use crate::methods::landmarks::Landmarks;

/// Landmark MDS parameters.
///
/// ```
/// use oose::methods::landmark_mds::LandmarkMds;
/// use oose::methods::OutOfSample;
/// let x = oose::datasets::swiss_roll(2000, 0.0, false, 0).points;
/// let m = LandmarkMds { n_landmarks: 100, ..Default::default() }.fit(x.as_ref()).unwrap();
/// assert_eq!(m.embedding().nrows(), 2000);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LandmarkMds {
    /// Embedding dimension d (default 2).
    pub n_components: usize,
    /// Number of landmarks n (default 500; when N is smaller every point is a landmark,
    /// which is classical MDS).
    pub n_landmarks: usize,
    /// Landmark choice (default max–min).
    pub landmarks: Landmarks,
    /// Seed of the landmark choice (default 0).
    pub seed: u64,
    /// Eigensolver for the n×n landmark problem (default `Auto`).
    pub solver: Solver,
}

impl Default for LandmarkMds {
    fn default() -> Self {
        LandmarkMds {
            n_components: 2,
            n_landmarks: 500,
            landmarks: Landmarks::MaxMin,
            seed: 0,
            solver: Solver::Auto,
        }
    }
}

/// A fitted Landmark MDS.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedLandmarkMds {
    params: LandmarkMds,
    /// Landmark indices among the training rows.
    indices: Vec<usize>,
    /// The landmark points (n×D) and their squared norms.
    landmarks: StoredMat,
    landmark_sq: Vec<f64>,
    core: Cmds,
    /// The embedding of every training point (N×d).
    embedding: StoredMat,
}

impl LandmarkMds {
    /// Fits on the rows of `x` (N×D).
    pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedLandmarkMds> {
        validate::training_points("training data", x)?;
        let big_n = x.nrows();
        validate::at_least_one("n_landmarks", self.n_landmarks)?;
        // More landmarks than points: every point is a landmark (= classical MDS).
        let n_landmarks = self.n_landmarks.min(big_n);
        let mut rng = Rng::new(self.seed);
        let indices = self.choose(x, n_landmarks, &mut rng)?;
        let l = crate::datasets::select_rows(x, &indices);
        let d2 = self_sq_distances(l.as_ref(), Par::rayon(0));
        let gamma = Mat::from_fn(l.nrows(), l.nrows(), |i, j| -0.5 * d2[(i, j)]);
        drop(d2);
        let core = Cmds::fit(
            gamma,
            self.n_components,
            self.solver,
            1e-12,
            Definiteness::Psd,
        )?;
        let landmark_sq = row_sq_norms(l.as_ref());
        let mut fitted = FittedLandmarkMds {
            params: self.clone(),
            indices,
            landmarks: StoredMat::from_mat(l.as_ref()),
            landmark_sq,
            core,
            embedding: StoredMat::default(),
        };
        let all = fitted.extend_with(x, Strategy::Projection)?;
        fitted.embedding = StoredMat::from_mat(all.coordinates.as_ref());
        Ok(fitted)
    }
}

impl LandmarkMds {
    /// The landmark rows of `x`. P-greedy runs on a random sample of
    /// [`SAMPLE`](crate::methods::landmarks::SAMPLE) rows when N is larger, with the
    /// gaussian kernel at ε = `auto` of that sample (maths §21); it may stop before
    /// `n` landmarks where the kernel's numerical rank on the sample is lower.
    fn choose(&self, x: MatRef<'_, f64>, n: usize, rng: &mut Rng) -> Result<Vec<usize>> {
        if self.landmarks != Landmarks::PGreedy {
            return self
                .landmarks
                .choose(x, n, crate::kernel::Kernel::default(), 0.0, rng);
        }
        let big_n = x.nrows();
        let rows = if big_n > crate::methods::landmarks::SAMPLE {
            rng.sample_indices(big_n, crate::methods::landmarks::SAMPLE)
        } else {
            (0..big_n).collect()
        };
        let sample = crate::datasets::select_rows(x, &rows);
        let kernel = crate::kernel::Kernel::default().resolve(sample.as_ref())?;
        let chosen = self
            .landmarks
            .choose(sample.as_ref(), n, kernel, 1e-12, rng)?;
        Ok(chosen.into_iter().map(|i| rows[i]).collect())
    }
}

impl FittedLandmarkMds {
    /// The parameters used.
    pub fn params(&self) -> &LandmarkMds {
        &self.params
    }

    /// Indices of the landmarks among the training rows.
    pub fn landmark_indices(&self) -> &[usize] {
        &self.indices
    }

    /// The classical MDS of the landmarks.
    pub fn core(&self) -> &Cmds {
        &self.core
    }

    /// Γ rows (−½ squared distances to the landmarks) of new points.
    fn similarity_rows(&self, z: MatRef<'_, f64>) -> Mat<f64> {
        let z_sq = row_sq_norms(z);
        let mut rows = sq_distances(z, &z_sq, self.landmarks.view(), &self.landmark_sq, Par::Seq);
        for j in 0..rows.ncols() {
            rows.col_as_slice_mut(j).iter_mut().for_each(|v| *v *= -0.5);
        }
        rows
    }

    /// Extends new points with the chosen strategy, from their squared distances to the
    /// landmarks. Diagnostics as for classical MDS, relative to the landmarks.
    pub fn extend_with(&self, new: MatRef<'_, f64>, strategy: Strategy) -> Result<Extension> {
        validate::columns("new points", new, self.landmarks.ncols())?;
        validate::finite("new points", new)?;
        let n = self.landmarks.nrows();
        let d = self.core.eigenvalues().len();
        by_chunks(new, n, d, |_, z| {
            let rows = self.similarity_rows(z);
            self.core
                .extend_block(rows.as_ref(), &vec![0.0; z.nrows()], strategy)
        })
    }

    /// Joint restricted reconstruction of the rows of `new` (their mutual distances are
    /// computed), relative to the landmark configuration.
    pub fn extend_joint(&self, new: MatRef<'_, f64>) -> Result<Joint> {
        self.core.joint_of_points(new, self.landmarks.ncols(), |z| {
            let mut mutual = self_sq_distances(z, Par::Seq);
            for j in 0..mutual.ncols() {
                mutual
                    .col_as_slice_mut(j)
                    .iter_mut()
                    .for_each(|v| *v *= -0.5);
            }
            (self.similarity_rows(z), mutual)
        })
    }

    /// `steps + 1` points of the arc from projection to restricted reconstruction for
    /// each new point: `(point, λ, y)`.
    pub fn arc(&self, new: MatRef<'_, f64>, steps: usize) -> Result<Vec<(usize, f64, Vec<f64>)>> {
        self.core
            .arc_of_points(new, self.landmarks.ncols(), steps, |z| {
                self.similarity_rows(z)
            })
    }

    pub(crate) fn is_consistent(&self) -> bool {
        let n = self.core.n_train();
        self.core.is_consistent()
            && self.indices.len() == n
            && self.landmarks.nrows() == n
            && self.landmark_sq.len() == n
            && self.embedding.is_consistent()
            && self.embedding.ncols() == self.core.eigenvalues().len()
    }
}

impl OutOfSample for FittedLandmarkMds {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    /// Projection (use [`FittedLandmarkMds::extend_with`] for restricted reconstruction).
    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        self.extend_with(new, Strategy::Projection)
    }

    fn input_width(&self) -> usize {
        self.landmarks.ncols()
    }
}

impl Method for LandmarkMds {
    type Fitted = FittedLandmarkMds;

    const SPECS: &'static [ParamSpec] = &[
        N_COMPONENTS,
        ParamSpec::new(
            "n_landmarks",
            "landmarks",
            Kind::Int,
            "Number of landmarks (all points when N is smaller).",
        ),
        ParamSpec::new(
            "landmarks",
            "landmark-choice",
            Kind::Choice(Landmarks::NAMES),
            "How landmarks are chosen.",
        ),
        SEED,
        SOLVER,
    ];

    crate::params_as_data!(LandmarkMds {
        n_components,
        n_landmarks,
        landmarks,
        seed,
        solver
    });

    fn configurations() -> Vec<Configuration> {
        vec![
            Configuration::exact("max-min", Values::new().with("n_landmarks", 40usize))
                .with_restricted(),
            Configuration::exact(
                "random",
                Values::new()
                    .with("n_landmarks", 30usize)
                    .with("landmarks", "random"),
            )
            .with_restricted(),
        ]
    }

    fn fit_input(&self, input: Input<'_>) -> Result<FittedLandmarkMds> {
        points_only(input, Self::NAME, |x| self.fit(x))
    }
}

crate::inner_product_computing_mutual!(FittedLandmarkMds, LandmarkMds);

impl Fitted for FittedLandmarkMds {
    crate::fitted_basics!();

    crate::cmds_family_extension!(LandmarkMds);

    fn info(&self, v: &mut Vec<(String, String)>) {
        let p = &self.params;
        v.push(("n_landmarks".into(), self.indices.len().to_string()));
        v.push(("landmarks".into(), p.landmarks.name().to_string()));
        v.push(("seed".into(), p.seed.to_string()));
        cmds_info(&self.core, v, true);
    }
}
