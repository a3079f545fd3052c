//! `oose`: fit an embedding, extend it to new points, inspect models, run the demo.
//! The contract (DESIGN.md): exit status 2 for bad usage, 1 for bad data or files,
//! one line on stderr naming the culprit, never a panic or a backtrace.

mod demo;
mod extend;
mod fit;
mod plot;
mod progress;
mod report;
mod stream;

pub use oose_cli::{io, say, CliError};

use clap::{Parser, Subcommand, ValueEnum};
use oose::methods::OutOfSample;
use oose::model::Model;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "oose",
    version,
    about = "Dimensionality reduction with out-of-sample extension and a per-point novelty score"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A method and its options, parsed by the registry (`fit`, `compare`).
#[derive(clap::Args)]
struct MethodArgs {
    /// The method and its options.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "METHOD [OPTIONS]"
    )]
    args: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a method on training data and save the model (`oose fit METHOD --help`
    /// lists a method's parameters and defaults).
    #[command(disable_help_flag = true)]
    Fit(MethodArgs),
    /// Write the training embedding of a model.
    Embedding {
        /// Model file written by `oose fit`.
        model: String,
        /// Output file (.npy or CSV; `-` = stdout).
        #[arg(long, default_value = "-")]
        output: String,
    },
    /// Embed new points into a fitted model (streams: reads, extends and writes in chunks).
    Extend(extend::ExtendArgs),
    /// Map embedding coordinates back to the input space (every model that embeds the
    /// training points it keeps, maths §8 and §13): local kernel interpolation of the
    /// training points; a training embedding point gives its training point exactly.
    Inverse(extend::InverseArgs),
    /// Describe a model: method, parameters actually used, sizes, format version.
    Info {
        /// Model file written by `oose fit`.
        model: String,
    },
    /// Theory diagnostics of a batch of new points for a kernel PCA model (maths §4): the
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
    /// retrain on all and print the relative extension error and training drift (maths §9;
    /// `oose compare METHOD --help`).
    #[command(disable_help_flag = true)]
    Compare(MethodArgs),
    /// Built-in Swiss roll: fit on 90 %, extend the other 10 %, compare with retraining, plot.
    Demo(demo::DemoArgs),
    /// Draw a model's training embedding (grey) and new points coloured by a
    /// diagnostic (default: novelty_pvalue), with a colour bar; SVG, PNG, JPEG or BMP
    /// (by the extension).
    Plot(plot::PlotArgs),
    /// Write a built-in synthetic data set (maths §10; deterministic given the seed).
    Dataset {
        /// Which data set.
        #[arg(value_enum)]
        name: DatasetName,
        /// Number of points.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        n: usize,
        /// Standard deviation of the Gaussian noise.
        #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
        noise: f64,
        /// Seed.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
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

/// One line on stderr; a stderr that cannot be written is not worth a panic.
macro_rules! complain {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

fn main() -> ExitCode {
    // A bug must still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = oose::error::panic_message(info.payload());
        complain!("oose: internal error (please report): {msg}");
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
            complain!("oose: {first} (see `oose --help`)");
            return ExitCode::from(2);
        }
    };
    let result =
        std::panic::catch_unwind(|| run(cli)).unwrap_or_else(|_| Err(CliError::data("aborted")));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            complain!("oose: {}", e.message.replace('\n', " "));
            ExitCode::from(e.code)
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Fit(m) => report::fit(&m.args),
        Command::Embedding { model, output } => {
            let m = load_model(&model)?;
            io::write_matrix(&output, m.embedding())
        }
        Command::Extend(a) => extend::run(a),
        Command::Inverse(a) => extend::inverse(a),
        Command::Compare(m) => report::compare(&m.args),
        Command::Theory { model, input } => report::theory(&model, &input),
        Command::Info { model } => {
            let m = load_model(&model)?;
            for (k, v) in m.info() {
                say!("{k}: {v}")?;
            }
            Ok(())
        }
        Command::Demo(a) => demo::run(a),
        Command::Plot(a) => plot::run(a),
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
            let d = oose::datasets::by_name(&name, n, noise, seed).map_err(|e| match e {
                oose::Error::InvalidParameter { name, reason } => {
                    CliError::usage(format!("--{}: {reason}", name.replace('_', "-")))
                }
                other => CliError::usage(other.to_string()),
            })?;
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

/// Checks the number of columns of new rows against what the model expects.
pub fn check_width(model: &Model, got: usize, file: &str) -> Result<(), CliError> {
    let f = model.fitted();
    if f.accepts_width(got) {
        return Ok(());
    }
    Err(CliError::data(format!(
        "{file}: rows have {got} columns, but the model expects {} ({})",
        model.input_width(),
        f.row_description()
    )))
}
