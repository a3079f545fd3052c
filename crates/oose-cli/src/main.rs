//! `oose`: fit an embedding, extend it to new points, inspect models, run the demo.
//! The contract (DESIGN.md): exit status 2 for bad usage, 1 for bad data or files,
//! one line on stderr naming the culprit, never a panic or a backtrace.

mod demo;
mod io;
mod plot;
mod progress;

use clap::{Args, Parser, Subcommand, ValueEnum};
use io::{MatrixReader, MatrixWriter};
use oose::faer::{Mat, MatRef};
use oose::kernel::{Bandwidth, Kernel};
use oose::methods::OutOfSample;
use oose::model::Model;
use oose::prelude::*;
use std::process::ExitCode;

/// An error to report: its message and the exit status.
#[derive(Debug)]
pub struct CliError {
    /// 2 = bad usage, 1 = bad data or files.
    pub code: u8,
    /// One line naming the culprit.
    pub message: String,
}

impl CliError {
    /// Bad data or files (exit status 1).
    pub fn data(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: message.into(),
        }
    }

    /// Bad usage (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: message.into(),
        }
    }
}

impl CliError {
    /// Prefixes the message with the file it is about.
    pub fn in_file(mut self, file: &str) -> Self {
        self.message = format!("{file}: {}", self.message);
        self
    }
}

impl From<oose::Error> for CliError {
    fn from(e: oose::Error) -> Self {
        let code = match e {
            oose::Error::InvalidParameter { .. } | oose::Error::Unsupported(_) => 2,
            _ => 1,
        };
        CliError {
            code,
            message: e.to_string(),
        }
    }
}

#[derive(Parser)]
#[command(
    name = "oose",
    version,
    about = "Kernel dimensionality reduction with out-of-sample extension"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a method on training data and save the model.
    Fit(FitArgs),
    /// Write the training embedding of a model.
    Embedding {
        /// Model file written by `oose fit`.
        model: String,
        /// Output file (.npy or CSV; `-` = stdout).
        #[arg(long, default_value = "-")]
        output: String,
    },
    /// Embed new points into a fitted model (streams: reads, extends and writes in chunks).
    Extend(ExtendArgs),
    /// Describe a model: method, parameters actually used, sizes, format version.
    Info {
        /// Model file written by `oose fit`.
        model: String,
    },
    /// Theory diagnostics of a batch of new points for a kernel PCA model (SPEC §4): the
    /// batch discrepancy D from its definition, the corrected identity and bound, seed
    /// 000's bound, Tr and max of the residual, the exactness criterion, interlacing.
    Theory {
        /// Model file written by `oose fit kpca` (a kernel on points).
        model: String,
        /// New points (.npy or CSV; `-` = stdin).
        #[arg(long, default_value = "-")]
        input: String,
    },
    /// Hold out a fraction of the points, fit on the rest, extend the held-out points,
    /// retrain on all and print the relative extension error and training drift (SPEC §9).
    Compare(CompareArgs),
    /// Built-in Swiss roll: fit on 90 %, extend the other 10 %, compare with retraining, plot.
    Demo(demo::DemoArgs),
    /// Write a built-in synthetic data set (SPEC §10; deterministic given the seed).
    Dataset {
        /// Which data set.
        #[arg(value_enum)]
        name: DatasetName,
        /// Number of points.
        #[arg(long, default_value_t = 1000)]
        n: usize,
        /// Standard deviation of the Gaussian noise.
        #[arg(long, default_value_t = 0.0)]
        noise: f64,
        /// Seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output file (.npy or CSV; `-` = stdout).
        #[arg(long, default_value = "-")]
        output: String,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum DatasetName {
    SwissRoll,
    SCurve,
    PunchedSphere,
    ThreeDClusters,
    Helix,
    Trefoil,
    TwinPeaks,
    CircleS1,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum Method {
    Pca,
    Kpca,
    Mds,
    LandmarkMds,
    Isomap,
    Dmaps,
    Eigenmaps,
    SpectralClustering,
    Interpolate,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
#[value(rename_all = "snake_case")]
enum KernelName {
    ThinPlate,
    Polyharmonic,
    Gaussian,
    Laplacian,
    InverseMultiquadric,
    Multiquadric,
    Wendland,
    Linear,
    Polynomial,
    Precomputed,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum SparsityName {
    Knn,
    Threshold,
    Dense,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum FlavourName {
    Diffusion,
    Standard,
    Weighted,
    Normalized,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum DensityName {
    Training,
    Union,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum IsolatedName {
    Error,
    Nan,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum LandmarkChoice {
    Random,
    MaxMin,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum SolverName {
    Auto,
    Dense,
    Lanczos,
    LowRank,
    ShiftInvert,
}

#[derive(Args)]
struct FitArgs {
    /// The method.
    method: Method,
    /// Training points (.npy or CSV; `-` = stdin). For `--kernel precomputed`, the N×N kernel matrix.
    #[arg(long, default_value = "-")]
    input: String,
    /// The N×N similarity matrix, for `mds` or `kpca --kernel precomputed`.
    #[arg(long)]
    similarities: Option<String>,
    /// The N×N dissimilarity matrix δ (mds).
    #[arg(long)]
    dissimilarities: Option<String>,
    /// The N×N squared dissimilarity matrix δ² (mds).
    #[arg(long)]
    squared_dissimilarities: Option<String>,
    /// Number of nearest neighbours k (isomap: default 10; dmaps: 25; eigenmaps,
    /// spectral-clustering: 10). A point counts as its own nearest for the diffusion
    /// kernels.
    #[arg(long)]
    knn: Option<usize>,
    /// Sparsification of the diffusion kernels: knn (symmetric rule), threshold (w ≥ η,
    /// give --threshold) or dense.
    #[arg(long, value_enum, default_value = "knn")]
    sparsity: SparsityName,
    /// η of the threshold rule (dmaps, eigenmaps, spectral-clustering).
    #[arg(long)]
    threshold: Option<f64>,
    /// α-normalisation in [0, 1] (dmaps: default 1; eigenmaps, spectral-clustering: 0).
    #[arg(long)]
    alpha: Option<f64>,
    /// Diffusion time t ≥ 0 (dmaps, `diffusion` coordinates).
    #[arg(long = "time", alias = "t", default_value_t = 1.0)]
    t: f64,
    /// Output coordinates of dmaps (SPEC §7 flavours).
    #[arg(
        long = "output-kind",
        alias = "flavour",
        value_enum,
        default_value = "diffusion"
    )]
    flavour: FlavourName,
    /// Density of new points for dmaps (union: of X ∪ Z, the whole input read as one batch).
    #[arg(long, value_enum, default_value = "training")]
    density: DensityName,
    /// New points without a neighbour under the sparsity rule: an error, or NaN rows
    /// with an `isolated` flag column.
    #[arg(long, value_enum, default_value = "error")]
    on_isolated: IsolatedName,
    /// Compute the residual diagnostic of dmaps (pivoted Cholesky of the N×N kernel;
    /// default: for dense kernels only).
    #[arg(long)]
    residual: Option<bool>,
    /// Values F (N×m) on the training points (interpolate).
    #[arg(long)]
    values: Option<String>,
    /// Interpolate from this model's training embedding instead of --input: with
    /// `--values` = the model's training points, a pre-image map (interpolate).
    #[arg(long)]
    from_model: Option<String>,
    /// ρ ≥ 0 of regularised least squares (interpolate; 0 interpolates).
    #[arg(long, default_value_t = 0.0)]
    regularization: f64,
    /// Geometric harmonics: keep eigenvalues ≥ δ·λ₁ (interpolate).
    #[arg(long)]
    geometric_harmonics: Option<f64>,
    /// Number of clusters (spectral-clustering).
    #[arg(long, default_value_t = 2)]
    clusters: usize,
    /// Embed the largest connected component of a disconnected kNN graph (isomap).
    #[arg(long)]
    largest_component: bool,
    /// Number of landmarks (landmark-mds).
    #[arg(long, default_value_t = 500)]
    landmarks: usize,
    /// How landmarks are chosen (landmark-mds).
    #[arg(long, value_enum, default_value = "max-min")]
    landmark_choice: LandmarkChoice,
    /// Seed of random choices (landmark-mds).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to write the model (required by `fit`; `compare` writes none).
    #[arg(long)]
    output: Option<String>,
    /// Embedding dimension d.
    #[arg(long, default_value_t = 2)]
    components: usize,
    /// Kernel (kpca).
    #[arg(long, value_enum, default_value = "gaussian")]
    kernel: KernelName,
    /// Bandwidth ε: a number > 0 or `auto` (median rule); the diffusion kernels also take
    /// `log-slope` (Berry–Giannakis–Harlim) and `inf` (w = 1 on the graph).
    #[arg(long, default_value = "auto", allow_hyphen_values = true)]
    epsilon: String,
    /// Exponent β of the (inverse) multiquadric kernel.
    #[arg(long, allow_hyphen_values = true)]
    beta: Option<f64>,
    /// γ of the polynomial kernel.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    gamma: f64,
    /// c of the polynomial kernel.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    coef0: f64,
    /// Degree p of the polynomial kernel.
    #[arg(long, default_value_t = 3)]
    degree: u32,
    /// Double-centre the kernel matrix (`false`: uncentred Mercer form).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    centering: bool,
    /// Eigensolver.
    #[arg(long, value_enum, default_value = "auto")]
    solver: SolverName,
    /// Relative tolerance below which eigenvalues and pivots count as zero.
    #[arg(long, default_value_t = 1e-12)]
    rank_tolerance: f64,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    fit: FitArgs,
    /// Fraction of the rows held out and extended.
    #[arg(long, default_value_t = 0.1)]
    holdout: f64,
    /// Seed of the split.
    #[arg(long, default_value_t = 0)]
    split_seed: u64,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
enum Strategy {
    Projection,
    Restricted,
}

#[derive(Args)]
struct ExtendArgs {
    /// Model file written by `oose fit`.
    model: String,
    /// New points (.npy or CSV; `-` = stdin). For a precomputed kernel: rows k(z, x_i).
    #[arg(long, default_value = "-")]
    input: String,
    /// For a precomputed kernel: the values k(z, z), one per row (enables the residual).
    #[arg(long)]
    kernel_diagonal: Option<String>,
    /// Output file (.npy or CSV; `-` = stdout).
    #[arg(long, default_value = "-")]
    output: String,
    /// Add the per-point diagnostic columns: `residual,reconstruction_error` and the
    /// method's own (mds family: `beta_minus_projection,objective_projection`, plus
    /// `objective_restricted,lambda,unique` for restricted reconstruction).
    #[arg(long)]
    diagnostics: bool,
    /// Extension strategy.
    #[arg(long, value_enum, default_value = "projection")]
    strategy: Strategy,
    /// Joint restricted reconstruction of all input rows together (mds; reads the whole
    /// input). For proximity models give the new objects' mutual block with `--mutual`.
    #[arg(long)]
    joint: bool,
    /// k×k proximities among the new objects, same kind as the input (implies --joint).
    #[arg(long)]
    mutual: Option<String>,
    /// Density of new points for dmaps models (default: the model's). `union` reads the
    /// whole input as one batch.
    #[arg(long, value_enum)]
    density: Option<DensityName>,
    /// New points without a neighbour (dmaps models; default: the model's; eigenmaps
    /// and spectral-clustering take it at fit).
    #[arg(long, value_enum)]
    on_isolated: Option<IsolatedName>,
    /// Rows per chunk while streaming.
    #[arg(long, default_value_t = 16384, hide = true)]
    chunk_rows: usize,
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("oose: internal error (please report): {msg}");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            e.exit()
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        Err(e) => {
            // One line, per the contract; `oose --help` has the rest.
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("bad usage")
                .trim_start_matches("error: ");
            eprintln!("oose: {first} (see `oose --help`)");
            return ExitCode::from(2);
        }
    };
    let result =
        std::panic::catch_unwind(|| run(cli)).unwrap_or_else(|_| Err(CliError::data("aborted")));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oose: {}", e.message.replace('\n', " "));
            ExitCode::from(e.code)
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Fit(a) => fit(a),
        Command::Embedding { model, output } => {
            let m = load_model(&model)?;
            io::write_matrix(&output, m.embedding())
        }
        Command::Extend(a) => extend(a),
        Command::Compare(a) => compare(a),
        Command::Theory { model, input } => theory(&model, &input),
        Command::Info { model } => {
            let m = load_model(&model)?;
            for (k, v) in m.info() {
                println!("{k}: {v}");
            }
            Ok(())
        }
        Command::Demo(a) => demo::run(a),
        Command::Dataset {
            name,
            n,
            noise,
            seed,
            output,
        } => {
            let name = name
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            let d = oose::datasets::by_name(&name, n, noise, seed).map_err(flag_error)?;
            io::write_matrix(&output, d.points.as_ref())
        }
    }
}

/// Reads and decodes a model file.
pub fn load_model(path: &str) -> Result<Model, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::data(format!("{path}: cannot read model: {e}")))?;
    Model::from_bytes(&bytes).map_err(|e| CliError::data(format!("{path}: {e}")))
}

/// A parameter error from the library, named by its command-line flag.
fn flag_error(e: oose::Error) -> CliError {
    match e {
        oose::Error::InvalidParameter { name, reason } => {
            CliError::usage(format!("--{}: {reason}", name.replace('_', "-")))
        }
        other => CliError::usage(other.to_string()),
    }
}

fn parse_epsilon(s: &str) -> Result<Bandwidth, CliError> {
    Bandwidth::from_name(s).map_err(flag_error)
}

fn kernel_from(a: &FitArgs) -> Result<Kernel, CliError> {
    let epsilon = parse_epsilon(&a.epsilon)?;
    let name = a
        .kernel
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    Kernel::from_name(&name, epsilon, a.beta, a.gamma, a.coef0, a.degree).map_err(flag_error)
}

fn isolated_from(s: IsolatedName) -> oose::methods::diffusion_maps::OnIsolated {
    match s {
        IsolatedName::Error => oose::methods::diffusion_maps::OnIsolated::Error,
        IsolatedName::Nan => oose::methods::diffusion_maps::OnIsolated::Nan,
    }
}

/// The diffusion kernel from the command line (`k` and `alpha` are the method's defaults).
fn diffusion_kernel(
    a: &FitArgs,
    k: usize,
    alpha: f64,
) -> Result<oose::methods::diffusion_maps::DiffusionKernel, CliError> {
    use oose::methods::diffusion_maps::{DiffusionKernel, Epsilon, Sparsity};
    let epsilon = Epsilon::from_name(&a.epsilon).map_err(|e| CliError::usage(e.to_string()))?;
    let sparsity_name = match a.sparsity {
        SparsityName::Knn => "knn",
        SparsityName::Dense => "dense",
        SparsityName::Threshold => "threshold",
    };
    let sparsity =
        Sparsity::from_parts(sparsity_name, a.knn.unwrap_or(k), a.threshold).map_err(flag_error)?;
    Ok(DiffusionKernel {
        epsilon,
        sparsity,
        alpha: a.alpha.unwrap_or(alpha),
    })
}

fn solver_from(s: SolverName) -> Solver {
    match s {
        SolverName::Auto => Solver::Auto,
        SolverName::Dense => Solver::Dense,
        SolverName::Lanczos => Solver::Lanczos,
        SolverName::LowRank => Solver::LowRank,
        SolverName::ShiftInvert => Solver::ShiftInvert,
    }
}

fn fit(a: FitArgs) -> Result<(), CliError> {
    let output = a
        .output
        .clone()
        .ok_or_else(|| CliError::usage("--output FILE is required (where to write the model)"))?;
    let model = build_model(&a, None)?;
    std::fs::write(&output, model.to_bytes())
        .map_err(|e| CliError::data(format!("{output}: cannot write model: {e}")))
}

fn compare(a: CompareArgs) -> Result<(), CliError> {
    if a.fit.output.is_some() {
        return Err(CliError::usage("compare writes no model: drop --output"));
    }
    let f = &a.fit;
    if f.similarities.is_some()
        || f.dissimilarities.is_some()
        || f.squared_dissimilarities.is_some()
        || (f.method == Method::Kpca && f.kernel == KernelName::Precomputed)
    {
        return Err(CliError::usage(
            "compare splits points (--input); proximity or kernel matrices are not supported",
        ));
    }
    let x = MatrixReader::open(&a.fit.input)?.read_all()?;
    let failure = std::cell::RefCell::new(None);
    let c = oose::diagnostics::retrain::compare_holdout(x.as_ref(), a.holdout, a.split_seed, |t| {
        build_model(&a.fit, Some(t)).map_err(|e| {
            let msg = e.message.clone();
            *failure.borrow_mut() = Some(e);
            oose::Error::Unsupported(msg)
        })
    });
    let c = match (c, failure.into_inner()) {
        (Ok(c), _) => c,
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(e.into()),
    };
    println!("method: {}", method_name(a.fit.method));
    println!("n_train: {}", c.n_train);
    println!("n_new: {}", c.n_new);
    println!(
        "relative_extension_error: {:?}",
        c.comparison.relative_extension_error
    );
    println!("training_drift: {:?}", c.comparison.training_drift);
    Ok(())
}

fn theory(model: &str, input: &str) -> Result<(), CliError> {
    use oose::diagnostics::theory::{batch_discrepancy, interlacing};
    let m = load_model(model)?;
    let (kernel, x, tol) =
        match &m {
            Model::KernelPca(k) => match k.training_points() {
                Some(x) => (k.params().kernel, x, k.params().rank_tolerance),
                None => return Err(CliError::usage(
                    "theory needs the kernel on new points: not available for a precomputed kernel",
                )),
            },
            other => {
                return Err(CliError::usage(format!(
                    "theory applies to kpca models (a kernel on points), not {}",
                    other.method()
                )))
            }
        };
    let z = MatrixReader::open(input)?.read_all()?;
    check_width(&m, z.ncols(), input)?;
    let d = batch_discrepancy(&kernel, x, z.as_ref(), tol)?;
    let il = interlacing(&kernel, x, z.as_ref(), tol)?;
    println!("n_train: {}", x.nrows());
    println!("n_new: {}", z.nrows());
    println!("discrepancy: {:?}", d.discrepancy);
    println!("identity: {:?}", d.identity);
    println!("bound: {:?}", d.bound);
    println!("seed_bound: {:?}", d.seed_bound);
    println!("trace_residual: {:?}", d.trace_residual);
    println!("max_residual: {:?}", d.max_residual);
    println!("exact: {}", d.exact);
    println!("interlacing_worst_violation: {:?}", il.worst_violation);
    println!("residual_norm: {:?}", il.residual_norm);
    Ok(())
}

fn method_name(m: Method) -> String {
    m.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// Fits the method of `a` on `data`, or on the file(s) `a` names when `data` is None.
fn build_model(a: &FitArgs, data: Option<MatRef<'_, f64>>) -> Result<Model, CliError> {
    let read = |path: &str| -> Result<Mat<f64>, CliError> {
        match data {
            Some(x) => Ok(x.to_owned()),
            None => MatrixReader::open(path)?.read_all(),
        }
    };
    let points_only = |what: &str| -> Result<(), CliError> {
        if data.is_some() {
            Err(CliError::usage(format!(
                "{what}: compare splits points; proximity or kernel matrices are not supported"
            )))
        } else {
            Ok(())
        }
    };
    let model: Model = match a.method {
        Method::Pca => {
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting pca");
            let m = Pca {
                n_components: a.components,
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref());
            spin.finish();
            m?.into()
        }
        Method::Kpca => {
            let kernel = kernel_from(a)?;
            let source = match (&a.similarities, kernel) {
                (Some(_), k) if k != Kernel::Precomputed => {
                    return Err(CliError::usage("--similarities needs --kernel precomputed"))
                }
                (Some(s), _) => s.clone(),
                (None, _) => a.input.clone(),
            };
            if kernel == Kernel::Precomputed {
                points_only("--kernel precomputed")?;
            }
            let x = read(&source)?;
            let solver = solver_from(a.solver);
            let spin = progress::Spinner::start("fitting kernel PCA");
            let m = KernelPca {
                n_components: a.components,
                kernel,
                centering: a.centering,
                solver,
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref());
            spin.finish();
            m?.into()
        }
        Method::Mds => {
            use oose::methods::mds::{ClassicalMds, Proximity};
            let given: Vec<(&Option<String>, Proximity)> = vec![
                (&a.dissimilarities, Proximity::Dissimilarities),
                (
                    &a.squared_dissimilarities,
                    Proximity::SquaredDissimilarities,
                ),
                (&a.similarities, Proximity::Similarities),
            ];
            let chosen: Vec<(String, Proximity)> = given
                .into_iter()
                .filter_map(|(f, k)| f.clone().map(|f| (f, k)))
                .collect();
            let (source, kind) =
                match chosen.len() {
                    0 => (a.input.clone(), Proximity::Points),
                    1 => chosen[0].clone(),
                    _ => return Err(CliError::usage(
                        "give one of --dissimilarities, --squared-dissimilarities, --similarities",
                    )),
                };
            if kind != Proximity::Points {
                points_only("proximity input")?;
            }
            let m = read(&source)?;
            let spin = progress::Spinner::start("fitting classical MDS");
            let fitted = ClassicalMds {
                n_components: a.components,
                solver: solver_from(a.solver),
                rank_tolerance: a.rank_tolerance,
            }
            .fit_proximity(m.as_ref(), kind)
            .map_err(|e| CliError::from(e).in_file(&source));
            spin.finish();
            fitted?.into()
        }
        Method::LandmarkMds => {
            use oose::methods::landmark_mds::{LandmarkMds, Landmarks};
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting landmark MDS");
            let fitted = LandmarkMds {
                n_components: a.components,
                n_landmarks: a.landmarks,
                landmarks: match a.landmark_choice {
                    LandmarkChoice::Random => Landmarks::Random,
                    LandmarkChoice::MaxMin => Landmarks::MaxMin,
                },
                seed: a.seed,
                solver: solver_from(a.solver),
            }
            .fit(x.as_ref());
            spin.finish();
            fitted?.into()
        }
        Method::Isomap => {
            use oose::methods::isomap::Isomap;
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting isomap");
            let fitted = Isomap {
                n_components: a.components,
                n_neighbors: a.knn.unwrap_or(10),
                solver: solver_from(a.solver),
                largest_component: a.largest_component,
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref());
            spin.finish();
            fitted?.into()
        }
        Method::Dmaps => {
            use oose::methods::diffusion_maps::{Density, DiffusionMaps, Output};
            let kernel = diffusion_kernel(a, 25, 1.0)?;
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting diffusion maps");
            let fitted = DiffusionMaps {
                n_components: a.components,
                kernel,
                t: a.t,
                output: match a.flavour {
                    FlavourName::Diffusion => Output::Diffusion,
                    FlavourName::Standard => Output::Standard,
                    FlavourName::Weighted => Output::Weighted,
                    FlavourName::Normalized => Output::Normalized,
                },
                solver: solver_from(a.solver),
                density: match a.density {
                    DensityName::Training => Density::Training,
                    DensityName::Union => Density::Union,
                },
                on_isolated: isolated_from(a.on_isolated),
                residual: a.residual,
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref());
            spin.finish();
            fitted?.into()
        }
        Method::Eigenmaps => {
            use oose::methods::diffusion_maps::LaplacianEigenmaps;
            let kernel = diffusion_kernel(a, 10, 0.0)?;
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting Laplacian eigenmaps");
            let fitted = LaplacianEigenmaps {
                n_components: a.components,
                kernel,
                solver: solver_from(a.solver),
                on_isolated: isolated_from(a.on_isolated),
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref());
            spin.finish();
            fitted?.into()
        }
        Method::SpectralClustering => {
            use oose::methods::diffusion_maps::SpectralClustering;
            let kernel = diffusion_kernel(a, 10, 0.0)?;
            let x = read(&a.input)?;
            let spin = progress::Spinner::start("fitting spectral clustering");
            let fitted = SpectralClustering {
                n_clusters: a.clusters,
                kernel,
                solver: solver_from(a.solver),
                seed: a.seed,
                n_init: 10,
                on_isolated: isolated_from(a.on_isolated),
            }
            .fit(x.as_ref());
            spin.finish();
            fitted?.into()
        }
        Method::Interpolate => {
            use oose::methods::interpolate::Interpolator;
            let kernel = kernel_from(a)?;
            let Some(values) = &a.values else {
                return Err(CliError::usage(
                    "interpolate needs --values F (one row of values per training point)",
                ));
            };
            points_only("interpolate")?;
            let x = match &a.from_model {
                Some(path) => load_model(path)?.embedding().to_owned(),
                None => read(&a.input)?,
            };
            let f = MatrixReader::open(values)?.read_all()?;
            let spin = progress::Spinner::start("fitting the interpolant");
            let fitted = Interpolator {
                kernel,
                regularization: a.regularization,
                geometric_harmonics: a.geometric_harmonics,
                rank_tolerance: a.rank_tolerance,
            }
            .fit(x.as_ref(), f.as_ref());
            spin.finish();
            fitted?.into()
        }
        #[allow(unreachable_patterns)]
        other => {
            return Err(CliError::usage(format!(
                "method `{}` is not available in this version of oose",
                other
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default()
            )))
        }
    };
    Ok(model)
}

fn extend(a: ExtendArgs) -> Result<(), CliError> {
    if a.chunk_rows == 0 {
        return Err(CliError::usage("--chunk-rows must be at least 1"));
    }
    let model = load_model(&a.model)?;
    let strategy = match a.strategy {
        Strategy::Projection => oose::extend::Strategy::Projection,
        Strategy::Restricted => oose::extend::Strategy::Restricted,
    };
    if a.joint || a.mutual.is_some() {
        return extend_joint(&a, &model);
    }
    let kpca = match &model {
        Model::KernelPca(m) if m.params().kernel == Kernel::Precomputed => Some(m),
        _ => None,
    };
    if a.kernel_diagonal.is_some() && kpca.is_none() {
        return Err(CliError::usage(
            "--kernel-diagonal applies only to models with a precomputed kernel",
        ));
    }
    let diffusion = matches!(
        model,
        Model::DiffusionMaps(_) | Model::Eigenmaps(_) | Model::SpectralClustering(_)
    );
    if (a.density.is_some() || a.on_isolated.is_some()) && !diffusion {
        return Err(CliError::usage(
            "--density and --on-isolated apply only to dmaps, eigenmaps and spectral-clustering models",
        ));
    }
    if a.density.is_some() && !matches!(model, Model::DiffusionMaps(_)) {
        return Err(CliError::usage("--density applies only to dmaps models"));
    }
    if a.on_isolated.is_some() && !matches!(model, Model::DiffusionMaps(_)) {
        return Err(CliError::usage(
            "--on-isolated at extend applies to dmaps models; eigenmaps and \
             spectral-clustering models take it at fit (`oose fit … --on-isolated nan`)",
        ));
    }
    // The union density couples the rows of a batch: the whole input is one batch.
    let union = match (&model, a.density) {
        (_, Some(DensityName::Union)) => true,
        (Model::DiffusionMaps(m), None) => {
            m.params().density == oose::methods::diffusion_maps::Density::Union
        }
        _ => false,
    };
    let chunk_rows = if union { usize::MAX } else { a.chunk_rows };
    let mut input = MatrixReader::open(&a.input)?;
    let mut diag = a
        .kernel_diagonal
        .as_deref()
        .map(MatrixReader::open)
        .transpose()?;
    let d = model.n_components();
    let mut out: Option<MatrixWriter> = None;
    let spin = progress::Spinner::start("extending");
    let mut rows = 0usize;
    while let Some(chunk) = input.next_chunk(chunk_rows)? {
        check_width(&model, chunk.ncols(), input.name())?;
        let ext = match (kpca, diag.as_mut()) {
            (Some(m), Some(dr)) => {
                let dv = dr.next_chunk(chunk.nrows())?.ok_or_else(|| {
                    CliError::data(format!("{}: fewer rows than {}", dr.name(), input.name()))
                })?;
                if dv.ncols() != 1 || dv.nrows() != chunk.nrows() {
                    return Err(CliError::data(format!(
                        "{}: expected one value per row of {}",
                        dr.name(),
                        input.name()
                    )));
                }
                let v: Vec<f64> = (0..dv.nrows()).map(|i| dv[(i, 0)]).collect();
                m.extend_kernel_rows(chunk.as_ref(), Some(&v))
            }
            _ => match (&model, a.density, a.on_isolated) {
                (Model::DiffusionMaps(m), dens, iso) if dens.is_some() || iso.is_some() => {
                    use oose::methods::diffusion_maps::Density;
                    let density = match dens {
                        Some(DensityName::Union) => Density::Union,
                        Some(DensityName::Training) => Density::Training,
                        None => m.params().density,
                    };
                    let iso = iso.map_or(m.params().on_isolated, isolated_from);
                    m.extend_with(chunk.as_ref(), density, iso)
                }
                _ => model.extend_with(chunk.as_ref(), strategy),
            },
        }
        .map_err(|e| {
            let mut e = CliError::from(e);
            e.message = format!("{}: {}", input.name(), row_offset_message(&e.message, rows));
            e
        })?;
        let mut cols: Vec<Vec<f64>> = (0..d)
            .map(|j| ext.coordinates.col_as_slice(j).to_vec())
            .collect();
        let mut names: Vec<String> = (1..=d).map(|j| format!("c{j}")).collect();
        if a.diagnostics {
            names.push("residual".into());
            names.push("reconstruction_error".into());
            cols.push(ext.residual);
            cols.push(ext.reconstruction_error);
            for c in ext.extra {
                names.push(c.name.into());
                cols.push(c.values);
            }
        }
        if out.is_none() {
            out = Some(MatrixWriter::create(&a.output, &names)?);
        }
        let refs: Vec<&[f64]> = cols.iter().map(|c| c.as_slice()).collect();
        out.as_mut().expect("created above").write_rows(&refs)?;
        rows += chunk.nrows();
        spin.inc(chunk.nrows());
    }
    spin.finish();
    match out {
        Some(o) if rows > 0 => o.finish(),
        _ => Err(CliError::data(format!(
            "{}: empty input (no data rows)",
            input.name()
        ))),
    }
}

/// Checks the number of columns of new rows against what the model expects.
fn check_width(model: &Model, got: usize, file: &str) -> Result<(), CliError> {
    let want = model.input_width();
    let similarity_mds = matches!(model, Model::Mds(m)
        if m.input() == oose::methods::mds::Proximity::Similarities);
    if got == want || (similarity_mds && got == want + 1) {
        return Ok(());
    }
    let what = match model {
        Model::KernelPca(m) if m.params().kernel == Kernel::Precomputed => {
            "one kernel value per training point"
        }
        Model::Mds(m) if m.input() != oose::methods::mds::Proximity::Points => {
            "one proximity per training object (similarities: optionally γ(z, z) last)"
        }
        _ => "the training data's dimension",
    };
    Err(CliError::data(format!(
        "{file}: rows have {got} columns, but the model expects {want} ({what})"
    )))
}

/// Joint restricted reconstruction: the whole input at once (the rows are coupled).
fn extend_joint(a: &ExtendArgs, model: &Model) -> Result<(), CliError> {
    let new = MatrixReader::open(&a.input)?.read_all()?;
    check_width(model, new.ncols(), &a.input)?;
    let mutual = a
        .mutual
        .as_deref()
        .map(|f| MatrixReader::open(f)?.read_all())
        .transpose()?;
    let spin = progress::Spinner::start("joint restricted reconstruction");
    let j = model
        .extend_joint(new.as_ref(), mutual.as_ref().map(|m| m.as_ref()))
        .map_err(|e| CliError::from(e).in_file(&a.input));
    spin.finish();
    let j = j?;
    let d = model.n_components();
    let k = j.coordinates.nrows();
    let mut names: Vec<String> = (1..=d).map(|c| format!("c{c}")).collect();
    let mut cols: Vec<Vec<f64>> = (0..d)
        .map(|c| (0..k).map(|i| j.coordinates[(i, c)]).collect())
        .collect();
    if a.diagnostics {
        for (name, v) in [
            ("joint_objective", j.objective),
            ("joint_gradient_norm", j.gradient_norm),
            ("objective_one_by_one", j.objective_one_by_one),
            ("objective_projection", j.objective_projection),
        ] {
            names.push(name.into());
            cols.push(vec![v; k]);
        }
    }
    let mut out = MatrixWriter::create(&a.output, &names)?;
    let refs: Vec<&[f64]> = cols.iter().map(|c| c.as_slice()).collect();
    out.write_rows(&refs)?;
    out.finish()
}

/// Library errors count rows within a chunk; the user needs the row in the file.
fn row_offset_message(msg: &str, offset: usize) -> String {
    if offset == 0 {
        return msg.to_string();
    }
    format!("{msg} (in the chunk starting at data row {})", offset + 1)
}
