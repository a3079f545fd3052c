//! Autoencoders and variational autoencoders (maths §16): an MLP encoder E: R^D → R^d
//! and decoder D: R^d → R^D trained on the mean squared reconstruction error of the
//! standardised inputs (plus β·KL(N(μ, σ²) ‖ N(0, I)) for the VAE, whose encoder gives
//! μ and log σ² and whose embedding is μ).
//!
//! The out-of-sample extension is the encoder itself: each row is pushed through the
//! layers on its own in a fixed order of operations, so a row's coordinates do not
//! depend on the batch, and a training point returns its embedding exactly (the
//! embedding is computed the same way). `inverse_transform` is the decoder.
//!
//! The network is oose's own (`mlp`), on faer's GEMM: no neural-network dependency
//! (maths §16 says why). Deterministic given `seed` (one generator draws the weights,
//! the split, the batches and the VAE's noise).

use crate::diagnostics::novelty::{Novelty, Pending};
use crate::error::{Error, Result};
use crate::extend::{Column, Extension};
use crate::linalg::stored::StoredMat;
use crate::methods::OutOfSample;
use crate::model::method::{
    no_such_option, points_only, Configuration, ExtendOptions, Fitted, Input, Method, Registered,
};
use crate::model::params::{Kind, Param, ParamList, ParamSpec, Value, Values};
use crate::model::specs::{fmt_list, N_COMPONENTS, SEED};
use crate::neighbors::{knn_graph, GraphMethod, Neighbours, TrainingSearch, SEARCH_DEGREE};
use crate::validate;
use faer::{Mat, MatRef};
pub use mlp::Activation;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

mod mlp;
mod train;

/// Training points from which the novelty score's neighbours come from NN-descent and
/// new points' from inverted lists (in more than 16 dimensions), as UMAP's: an
/// exact graph of 60000 Fashion-MNIST images costs a minute, longer than 20 epochs.
const APPROXIMATE_GRAPH_FROM: usize = 20_000;

/// Rows pushed through the network together when extending (they share each weight
/// row's load; every row's arithmetic is its own).
const ROW_BLOCK: usize = 16;

/// The floating-point type a network trains in (maths §16). The stored model is
/// float64 either way (a float32 weight widens exactly), and so are the embedding and
/// every extension.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precision {
    /// Data, weights, gradients and Adam's moments in float64 (the default).
    #[default]
    Float64,
    /// The same in float32: about twice as fast (every product moves half the bytes
    /// and packs twice the lanes), with float32's rounding (about 6e-8 relative) in
    /// training.
    Float32,
}

crate::model::params::named!(Precision, "precision": Float64 => "float64", Float32 => "float32");

/// What training needs of either method's parameters.
pub(crate) struct Settings {
    pub precision: Precision,
    pub n_components: usize,
    pub layers: Vec<usize>,
    pub activation: Activation,
    pub epochs: usize,
    pub batch_size: usize,
    pub learning_rate: f64,
    pub validation_fraction: f64,
    pub patience: usize,
    pub seed: u64,
    pub variational: bool,
    pub beta: f64,
    pub label: &'static str,
}

impl Param for Activation {
    fn put(&self, name: &'static str, _: &Self, out: &mut ParamList) {
        out.push((name, Value::Str(self.name().into())));
    }
    fn get(v: &Values, name: &'static str, default: &Self) -> Result<Self> {
        let table: Vec<(&str, Activation)> = Activation::NAMES
            .iter()
            .map(|n| (*n, Activation::from_name(n).expect("listed")))
            .collect();
        let given = v.name(name, default.name())?;
        validate::named(name, &given, &table)
    }
}

/// Declares a parameter struct, its defaults and its settings.
macro_rules! network_params {
    ($(#[$doc:meta])* $t:ident, $label:literal, variational: $var:literal,
     { $($(#[$fdoc:meta])* $f:ident: $fty:ty = $fdef:expr),* }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct $t {
            /// Embedding dimension d (default 2).
            pub n_components: usize,
            /// Widths of the encoder's hidden layers; the decoder mirrors them (default
            /// `[128]`; empty: a single linear map each way).
            pub layers: Vec<usize>,
            /// Activation of the hidden layers (default ReLU); the code and output
            /// layers are linear.
            pub activation: Activation,
            /// Most passes over the training points (default 100).
            pub epochs: usize,
            /// Points per Adam step (default 128).
            pub batch_size: usize,
            /// Adam's step size (default 1e-3).
            pub learning_rate: f64,
            /// Share of the points held out for early stopping (default 0.1; 0: train
            /// every epoch on every point and keep the last weights).
            pub validation_fraction: f64,
            /// Epochs without a better validation loss before training stops (default 10).
            pub patience: usize,
            $($(#[$fdoc])* pub $f: $fty,)*
            /// Seed of the weights, the split, the batches and the VAE's noise.
            pub seed: u64,
            /// The floating-point type of training (default float64; float32 is
            /// about twice as fast). Model files before format 5 read as float64.
            #[serde(deserialize_with = "crate::model::added_in::<5, _, _>")]
            pub precision: Precision,
        }

        impl Default for $t {
            fn default() -> Self {
                $t {
                    n_components: 2,
                    layers: vec![128],
                    activation: Activation::Relu,
                    epochs: 100,
                    batch_size: 128,
                    learning_rate: 1e-3,
                    validation_fraction: 0.1,
                    patience: 10,
                    $($f: $fdef,)*
                    seed: 0,
                    precision: Precision::Float64,
                }
            }
        }

        impl $t {
            fn settings(&self) -> Settings {
                Settings {
                    precision: self.precision,
                    n_components: self.n_components,
                    layers: self.layers.clone(),
                    activation: self.activation,
                    epochs: self.epochs,
                    batch_size: self.batch_size,
                    learning_rate: self.learning_rate,
                    validation_fraction: self.validation_fraction,
                    patience: self.patience,
                    seed: self.seed,
                    variational: $var,
                    beta: self.kl_weight(),
                    label: $label,
                }
            }

            /// Trains on the rows of `x`.
            pub fn fit(&self, x: MatRef<'_, f64>) -> Result<FittedNetwork<$t>> {
                fit_network(self.clone(), self.settings(), x)
            }
        }
    };
}

network_params!(
    /// An autoencoder (maths §16).
    ///
    /// ```
    /// use oose::methods::autoencoder::Autoencoder;
    /// use oose::methods::OutOfSample;
    /// let x = oose::datasets::s_curve(200, 0.0, 0).points;
    /// let m = Autoencoder { layers: vec![16], epochs: 20, ..Default::default() }
    ///     .fit(x.as_ref())
    ///     .unwrap();
    /// // The encoder is the extension: a training point returns its embedding exactly.
    /// let again = m.extend(x.as_ref().subrows(0, 5)).unwrap();
    /// assert_eq!(again.coordinates[(3, 1)], m.embedding()[(3, 1)]);
    /// ```
    Autoencoder, "autoencoder", variational: false, {}
);

impl Autoencoder {
    fn kl_weight(&self) -> f64 {
        0.0
    }
}

network_params!(
    /// A variational autoencoder (maths §16): Gaussian encoder (μ, log σ²),
    /// reparameterisation, loss = squared reconstruction error + β·KL; embedding = μ.
    ///
    /// ```
    /// use oose::methods::autoencoder::VariationalAutoencoder;
    /// let x = oose::datasets::s_curve(200, 0.0, 0).points;
    /// let m = VariationalAutoencoder { layers: vec![16], epochs: 10, ..Default::default() }
    ///     .fit(x.as_ref())
    ///     .unwrap();
    /// assert_eq!(m.loss_curve().0.len(), 10);
    /// ```
    VariationalAutoencoder, "VAE", variational: true, {
        /// Weight β of the KL term (default 1: the ELBO).
        beta: f64 = 1.0
    }
);

impl VariationalAutoencoder {
    fn kl_weight(&self) -> f64 {
        self.beta
    }
}

fn validate_settings(s: &Settings, n: usize, width: usize) -> Result<()> {
    let bad = |name, reason: String| Err(Error::param(name, reason));
    if s.n_components == 0 || s.n_components >= width {
        return bad(
            "n_components",
            format!(
                "must be between 1 and D − 1 = {} (the input has {width} feature(s)), got {}",
                width.saturating_sub(1),
                s.n_components
            ),
        );
    }
    if let Some(p) = s.layers.iter().position(|&w| w == 0) {
        return bad(
            "layers",
            format!("a layer of width 0 (layer {p} of {:?})", s.layers),
        );
    }
    validate::at_least_one("epochs", s.epochs)?;
    validate::at_least_one("batch_size", s.batch_size)?;
    validate::positive("learning_rate", s.learning_rate)?;
    if !(0.0..1.0).contains(&s.validation_fraction) {
        return bad(
            "validation_fraction",
            format!("must be in [0, 1), got {}", s.validation_fraction),
        );
    }
    validate::at_least_one("patience", s.patience)?;
    validate::non_negative("beta", s.beta)?;
    if n < 2 {
        return Err(Error::Shape {
            what: "training points",
            expected: "at least 2 rows".into(),
            got: format!("{n} rows"),
        });
    }
    Ok(())
}

fn fit_network<P: Clone + Sync>(
    params: P,
    s: Settings,
    x: MatRef<'_, f64>,
) -> Result<FittedNetwork<P>> {
    validate::training_points("training points", x)?;
    validate_settings(&s, x.nrows(), x.ncols())?;
    let (mean, scale) = train::statistics(x);
    let z = Mat::from_fn(x.nrows(), x.ncols(), |i, c| {
        (x[(i, c)] - mean[c]) / scale[c]
    });
    let t = train::train(&s, z.as_ref())?;
    let mut fitted = FittedNetwork {
        params,
        variational: s.variational,
        n_components: s.n_components,
        mean,
        scale,
        encoder: t.encoder,
        decoder: t.decoder,
        x: StoredMat::from_mat(x),
        embedding: StoredMat::default(),
        train_loss: t.train_loss,
        validation_loss: t.validation_loss,
        best_epoch: t.best_epoch,
        seed: s.seed,
        search: TrainingSearch::default(),
        fit_novelty: Pending::default(),
    };
    let e = fitted.encode(x)?;
    fitted.embedding = StoredMat::from_mat(e.coordinates.as_ref());
    let (n, dim) = (x.nrows(), x.ncols());
    if GraphMethod::Auto.resolve_from(n, dim, APPROXIMATE_GRAPH_FROM) == GraphMethod::Approximate {
        crate::progress::report(|| {
            format!("{}: the novelty score's kNN graph (NN-descent)", s.label)
        });
        let graph = knn_graph(
            x,
            SEARCH_DEGREE.min(n - 1),
            GraphMethod::Approximate,
            s.seed,
        )?;
        let (idx, dist) = &graph.neighbours;
        fitted.search = TrainingSearch::new(GraphMethod::Auto, x);
        fitted.fit_novelty = Pending::new(Novelty::from_graph(x, idx, dist));
    }
    Ok(fitted)
}

/// A fitted autoencoder or VAE (`P` its parameters).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FittedNetwork<P> {
    params: P,
    variational: bool,
    n_components: usize,
    mean: Vec<f64>,
    scale: Vec<f64>,
    encoder: mlp::Mlp,
    decoder: mlp::Mlp,
    x: StoredMat,
    embedding: StoredMat,
    train_loss: Vec<f64>,
    validation_loss: Vec<f64>,
    best_epoch: usize,
    /// Seed of the walk's starting points when new points are searched on the graph (a
    /// model written before format 9).
    seed: u64,
    /// How new points' nearest training points are found (the novelty score's).
    search: TrainingSearch,
    /// The novelty score from the fit's NN-descent graph, for the model (not stored).
    #[serde(skip)]
    fit_novelty: Pending,
}

/// A fitted autoencoder.
pub type FittedAutoencoder = FittedNetwork<Autoencoder>;
/// A fitted variational autoencoder.
pub type FittedVae = FittedNetwork<VariationalAutoencoder>;

impl<P: Sync> FittedNetwork<P> {
    /// The parameters as given.
    pub fn params(&self) -> &P {
        &self.params
    }

    /// Mean training loss per point of every epoch run, and the validation loss (empty
    /// without a validation fraction).
    pub fn loss_curve(&self) -> (&[f64], &[f64]) {
        (&self.train_loss, &self.validation_loss)
    }

    /// The epoch (1-based) whose weights were kept.
    pub fn best_epoch(&self) -> usize {
        self.best_epoch
    }

    fn standardised(&self, row: usize, x: MatRef<'_, f64>) -> Vec<f64> {
        (0..x.ncols())
            .map(|c| (x[(row, c)] - self.mean[c]) / self.scale[c])
            .collect()
    }

    /// A row's embedding, reconstruction error, mean posterior variance and KL (the last
    /// two NaN for the plain autoencoder), from its standardised input, code and output.
    fn row_diagnostics(
        &self,
        z: Vec<f64>,
        code: Vec<f64>,
        out: Vec<f64>,
    ) -> (Vec<f64>, f64, f64, f64) {
        let d = self.n_components;
        let err: f64 = out.iter().zip(&z).map(|(a, b)| (a - b).powi(2)).sum();
        let (var, kl) = if self.variational {
            let lv = &code[d..];
            let var = lv.iter().map(|v| v.exp()).sum::<f64>() / d as f64;
            let kl: f64 = (0..d)
                .map(|j| 0.5 * (code[j] * code[j] + lv[j].exp() - lv[j] - 1.0))
                .sum();
            (var, kl)
        } else {
            (f64::NAN, f64::NAN)
        };
        (code[..d].to_vec(), err, var, kl)
    }

    /// The encoder on each row: μ (and the VAE's diagnostics), the reconstruction error
    /// ‖z − D(E(z))‖² of the standardised row z.
    fn encode(&self, x: MatRef<'_, f64>) -> Result<Extension> {
        let d = self.n_components;
        let starts: Vec<usize> = (0..x.nrows()).step_by(ROW_BLOCK).collect();
        let rows: Vec<(Vec<f64>, f64, f64, f64)> = starts
            .into_par_iter()
            .flat_map_iter(|start| {
                let end = (start + ROW_BLOCK).min(x.nrows());
                let z: Vec<Vec<f64>> = (start..end).map(|i| self.standardised(i, x)).collect();
                let codes = self.encoder.forward_block(z.clone());
                let means: Vec<Vec<f64>> = codes.iter().map(|c| c[..d].to_vec()).collect();
                let outs = self.decoder.forward_block(means);
                z.into_iter()
                    .zip(codes)
                    .zip(outs)
                    .map(|((z, code), out)| self.row_diagnostics(z, code, out))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut extra = Vec::new();
        if self.variational {
            extra.push(Column {
                name: "posterior_variance",
                values: rows.iter().map(|r| r.2).collect(),
            });
            extra.push(Column {
                name: "negative_elbo",
                values: rows.iter().map(|r| r.1 + r.3).collect(),
            });
        }
        Ok(Extension {
            coordinates: Mat::from_fn(x.nrows(), d, |i, c| rows[i].0[c]),
            residual: vec![f64::NAN; x.nrows()],
            reconstruction_error: rows.iter().map(|r| r.1).collect(),
            extra,
        })
    }

    /// The decoder on embedding coordinates, back in the input's units.
    pub fn inverse_transform(&self, embedded: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("embedded points", embedded, self.n_components)?;
        validate::finite("embedded points", embedded)?;
        let width = self.mean.len();
        let starts: Vec<usize> = (0..embedded.nrows()).step_by(ROW_BLOCK).collect();
        let rows: Vec<Vec<f64>> = starts
            .into_par_iter()
            .flat_map_iter(|start| {
                let end = (start + ROW_BLOCK).min(embedded.nrows());
                let e: Vec<Vec<f64>> = (start..end)
                    .map(|i| (0..self.n_components).map(|c| embedded[(i, c)]).collect())
                    .collect();
                self.decoder.forward_block(e).into_iter().map(|out| {
                    out.iter()
                        .enumerate()
                        .map(|(c, v)| v * self.scale[c] + self.mean[c])
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        Ok(Extension {
            coordinates: Mat::from_fn(embedded.nrows(), width, |i, c| rows[i][c]),
            residual: vec![f64::NAN; embedded.nrows()],
            reconstruction_error: vec![f64::NAN; embedded.nrows()],
            extra: Vec::new(),
        })
    }

    fn consistent(&self) -> bool {
        let n = self.x.nrows();
        let width = self.x.ncols();
        let code = if self.variational {
            2 * self.n_components
        } else {
            self.n_components
        };
        self.embedding.is_shape(n, self.n_components)
            && self.mean.len() == width
            && self.scale.len() == width
            && self.encoder.widths() == Some((width, code))
            && self.decoder.widths() == Some((self.n_components, width))
            && self.best_epoch <= self.train_loss.len()
            && self.search.is_consistent(n, width)
    }
}

impl<P: Sync> OutOfSample for FittedNetwork<P> {
    fn embedding(&self) -> MatRef<'_, f64> {
        self.embedding.view()
    }

    fn extend(&self, new: MatRef<'_, f64>) -> Result<Extension> {
        validate::columns("new points", new, self.mean.len())?;
        validate::finite("new points", new)?;
        self.encode(new)
    }

    fn input_width(&self) -> usize {
        self.mean.len()
    }
}

crate::model::params::param_specs! {
    LAYERS: "layers", "layers", Kind::IntList,
        "Widths of the encoder's hidden layers, comma-separated (the decoder mirrors them; empty: linear maps).";
    ACTIVATION: "activation", "activation", Kind::Choice(&Activation::NAMES),
        "Activation of the hidden layers (code and output layers are linear).";
    EPOCHS: "epochs", "epochs", Kind::Int, "Most passes over the training points.";
    BATCH: "batch_size", "batch-size", Kind::Int, "Points per Adam step.";
    LR: "learning_rate", "learning-rate", Kind::Float, "Adam's step size.";
    VALIDATION: "validation_fraction", "validation-fraction", Kind::Float,
        "Share of the points held out for early stopping (0: none, the last weights kept).";
    PATIENCE: "patience", "patience", Kind::Int,
        "Epochs without a better validation loss before training stops.";
    BETA: "beta", "beta", Kind::Float, "Weight of the KL term (1: the ELBO).";

    PRECISION: "precision", "precision", Kind::Choice(Precision::NAMES),
        "Floating-point type of training (float32: about twice as fast; the model is float64 either way).";
}

const AE_SPECS: &[ParamSpec] = &[
    N_COMPONENTS,
    LAYERS,
    ACTIVATION,
    EPOCHS,
    BATCH,
    LR,
    VALIDATION,
    PATIENCE,
    SEED,
    PRECISION,
];
const VAE_SPECS: &[ParamSpec] = &[
    N_COMPONENTS,
    LAYERS,
    ACTIVATION,
    EPOCHS,
    BATCH,
    LR,
    VALIDATION,
    PATIENCE,
    BETA,
    SEED,
    PRECISION,
];

/// The contract's configurations: small networks, few epochs.
fn configurations() -> Vec<Configuration> {
    let small = Values::new()
        .with("layers", "8")
        .with("epochs", 5usize)
        .with("activation", "tanh");
    vec![
        Configuration::exact("small", small.clone()),
        Configuration::exact(
            "linear",
            small.with("layers", "").with("activation", "identity"),
        ),
    ]
}

macro_rules! network_method {
    ($t:ident, $specs:ident, { $($field:ident),* }) => {
        impl Method for $t {
            type Fitted = FittedNetwork<$t>;
            const METRIC: bool = false;
            const SPECS: &'static [ParamSpec] = $specs;

            crate::params_as_data!($t { $($field),* });

            fn configurations() -> Vec<Configuration> {
                configurations()
            }

            fn fit_input(&self, input: Input<'_>) -> Result<Self::Fitted> {
                points_only(input, Self::NAME, |x| self.fit(x))
            }
        }

        impl Fitted for FittedNetwork<$t> {
            fn training_stored(&self) -> Option<&StoredMat> {
                Some(&self.x)
            }

            fn param_values(&self) -> ParamList {
                Method::values(&self.params)
            }

            fn is_consistent(&self) -> bool {
                self.consistent()
            }

            fn check_options(&self, opts: &ExtendOptions<'_>) -> Result<()> {
                opts.refuse_all_but(&[], |o| no_such_option($t::NAME, o))
            }

            fn inverse(&self, embedded: MatRef<'_, f64>) -> Option<Result<Extension>> {
                Some(self.inverse_transform(embedded))
            }

            /// From the fit's NN-descent graph where it made one, else exact.
            fn novelty(&self, _input: Option<Input<'_>>) -> Option<Novelty> {
                self.fit_novelty.take_or_fit(self.x.view())
            }

            fn search_training(&self, new: MatRef<'_, f64>, k: usize) -> Option<Neighbours> {
                Some(self.search.search(self.x.view(), new, k, self.seed))
            }

            fn info(&self, v: &mut Vec<(String, String)>) {
                v.push(("epochs_run".into(), self.train_loss.len().to_string()));
                v.push(("best_epoch".into(), self.best_epoch.to_string()));
                v.push(("novelty_search".into(), self.search.name().into()));
                v.push(("loss_curve".into(), fmt_list(&self.train_loss)));
                if !self.validation_loss.is_empty() {
                    v.push(("validation_curve".into(), fmt_list(&self.validation_loss)));
                }
            }
        }
    };
}

network_method!(
    Autoencoder,
    AE_SPECS,
    { n_components, layers, activation, epochs, batch_size, learning_rate, validation_fraction, patience, seed, precision }
);

network_method!(
    VariationalAutoencoder,
    VAE_SPECS,
    { n_components, layers, activation, epochs, batch_size, learning_rate, validation_fraction, patience, beta, seed, precision }
);
