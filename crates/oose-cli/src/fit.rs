//! `oose fit METHOD` and `oose compare METHOD`: one subcommand per registered method,
//! built from the registry (`oose::model::METHODS`): its flags are the method's
//! parameters (names, kinds, help and defaults from the library), plus the inputs its
//! kind of data needs. Nothing here is specific to one method.

use crate::io::MatrixReader;
use crate::{load_model, progress, CliError};
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches, Command};
use oose::faer::{Mat, MatRef};
use oose::methods::mds::Proximity;
use oose::methods::OutOfSample;
use oose::model::params::{Kind, ParamSpec, Value, Values};
use oose::model::{Input, InputKinds, MethodInfo, Model, METHODS};

/// The proximity inputs of classical MDS (and the kernel matrix of a precomputed kernel).
const PROXIMITY_FLAGS: [(&str, Proximity, &str); 3] = [
    (
        "dissimilarities",
        Proximity::Dissimilarities,
        "The N×N dissimilarity matrix δ.",
    ),
    (
        "squared-dissimilarities",
        Proximity::SquaredDissimilarities,
        "The N×N squared dissimilarity matrix δ².",
    ),
    (
        "similarities",
        Proximity::Similarities,
        "The N×N similarity matrix (mds), or the kernel matrix (kernel = precomputed).",
    ),
];

/// Whether `m` has a `precomputed` kernel choice (its input may be a kernel matrix).
fn takes_kernel_matrix(m: &MethodInfo) -> bool {
    m.specs.iter().any(
        |s| matches!(s.kind, Kind::Choice(c) if s.name == "kernel" && c.contains(&"precomputed")),
    )
}

fn param_arg(s: &ParamSpec, default: &Value) -> Arg {
    let mut help = s.help.to_string();
    if *default != Value::None {
        help.push_str(&format!(" [default: {default}]"));
    }
    let mut a = Arg::new(param_id(s.name))
        .value_name(s.name.to_uppercase())
        .long(s.flag)
        .help(help)
        .allow_hyphen_values(true)
        .action(ArgAction::Set);
    for alias in s.aliases {
        a = a.alias(*alias);
    }
    match s.kind {
        Kind::Bool => a
            .num_args(0..=1)
            .default_missing_value("true")
            .value_parser(PossibleValuesParser::new(["true", "false"])),
        Kind::Choice(names) => a.value_parser(PossibleValuesParser::new(names.iter().copied())),
        _ => a,
    }
}

/// The id of a parameter's argument (apart from the input and output files' ids).
fn param_id(name: &str) -> String {
    format!("param:{name}")
}

/// The subcommand of one method.
fn method_command(m: &MethodInfo, compare: bool) -> Command {
    let defaults = (m.defaults)();
    let mut c = Command::new(m.name).about(m.about).arg(
        Arg::new("input")
            .long("input")
            .default_value("-")
            .help("Training points (.npy or CSV; `-` = stdin)."),
    );
    if compare {
        c = c
            .arg(
                Arg::new("holdout")
                    .long("holdout")
                    .default_value("0.1")
                    .allow_hyphen_values(true)
                    .value_parser(clap::value_parser!(f64))
                    .help("Fraction of the rows held out and extended."),
            )
            .arg(
                Arg::new("split-seed")
                    .long("split-seed")
                    .default_value("0")
                    .allow_negative_numbers(true)
                    .value_parser(clap::value_parser!(u64))
                    .help("Seed of the split."),
            );
    } else {
        c = c.arg(
            Arg::new("output")
                .long("output")
                .help("Where to write the model."),
        );
    }
    match m.input {
        InputKinds::PointsOrProximity => {
            for (flag, _, help) in PROXIMITY_FLAGS {
                c = c.arg(Arg::new(flag).long(flag).help(help));
            }
        }
        InputKinds::Points if takes_kernel_matrix(m) => {
            let (flag, _, help) = PROXIMITY_FLAGS[2];
            c = c.arg(Arg::new(flag).long(flag).help(help));
        }
        InputKinds::Values => {
            c = c
                .arg(
                    Arg::new("values")
                        .long("values")
                        .help("Values F (N×m) on the training points."),
                )
                .arg(Arg::new("from-model").long("from-model").help(
                    "Interpolate from this model's training embedding instead of --input \
                     (with --values = its training points: a pre-image map).",
                ));
        }
        InputKinds::Points => {}
    }
    for s in m.specs {
        let d = defaults
            .iter()
            .find(|(n, _)| *n == s.name)
            .map_or(Value::None, |(_, v)| v.clone());
        c = c.arg(param_arg(s, &d));
    }
    // The landmark form's own flags (`kpca --landmarks R` is `kpca-nystrom`).
    if let Some(form) = m.landmark_form.and_then(|f| MethodInfo::named(f).ok()) {
        let defaults = (form.defaults)();
        for s in form
            .specs
            .iter()
            .filter(|s| !m.specs.iter().any(|t| t.name == s.name))
        {
            let d = defaults
                .iter()
                .find(|(n, _)| *n == s.name)
                .map_or(Value::None, |(_, v)| v.clone());
            let mut help = if s.name == "n_landmarks" {
                format!("{} Fits `{}`.", s.help, form.name)
            } else {
                format!("With --landmarks: {}", s.help)
            };
            // No default for --landmarks itself: without it the fit is exact.
            if d != Value::None && s.name != "n_landmarks" {
                help.push_str(&format!(" [default: {d}]"));
            }
            c = c.arg(param_arg(s, &d).help(help));
        }
    }
    if !compare {
        c = c.arg(
            Arg::new("embedding")
                .long("embedding")
                .value_name("FILE")
                .help(
                    "Also write the training embedding (N×d; .npy or CSV). A Nyström fit \
                     read from a file streams it there and keeps none in the model.",
                ),
        );
    }
    if m.metric {
        c = c.arg(
            Arg::new(param_id("metric"))
                .long("metric")
                .value_name("METRIC")
                .help(
                    "How points are compared (maths §19): euclidean, or cosine/correlation \
                     as the chordal distance of the rows' directions (centred for \
                     correlation); new points are mapped the same way [default: euclidean]",
                )
                .value_parser(PossibleValuesParser::new(
                    oose::metric::Metric::NAMES.iter().copied(),
                )),
        );
    }
    c
}

/// `oose fit` (or `oose compare`) with one subcommand per registered method.
pub fn command(compare: bool) -> Command {
    let (name, about) = if compare {
        (
            "oose compare",
            "Hold out a fraction of the points, fit on the rest, extend the held-out points, \
             retrain on all and print the relative extension error and training drift",
        )
    } else {
        (
            "oose fit",
            "Fit a method on training data and save the model",
        )
    };
    Command::new(name)
        .about(about)
        .subcommand_required(true)
        .subcommand_value_name("METHOD")
        .subcommands(METHODS.iter().map(|m| method_command(m, compare)))
}

/// Parses `args` (what follows `fit` or `compare`): the method and its matches.
pub fn parse(
    args: &[String],
    compare: bool,
) -> Result<(&'static MethodInfo, ArgMatches), CliError> {
    let cmd = command(compare);
    let name = cmd.get_name().to_string();
    let matches = match cmd.try_get_matches_from(std::iter::once(name).chain(args.iter().cloned()))
    {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("bad usage");
            return Err(CliError::usage(format!(
                "{} (see `oose {} --help`)",
                first.trim_start_matches("error: "),
                if compare { "compare" } else { "fit" }
            )));
        }
    };
    let (method, sub) = matches.subcommand().expect("a subcommand is required");
    let info = MethodInfo::named(method).map_err(|e| CliError::usage(e.to_string()))?;
    let info = info
        .routed(&values(sub))
        .map_err(|e| CliError::usage(e.to_string()))?;
    Ok((info, sub.clone()))
}

/// The parameter values given on the command line (text, parsed by the library):
/// every parameter flag given, so that one the fitted method does not take (`--solver`
/// with `--landmarks`) is refused by name rather than ignored.
fn values(a: &ArgMatches) -> Values {
    let mut v = Values::new();
    for id in a.ids() {
        let Some(name) = id.as_str().strip_prefix("param:") else {
            continue;
        };
        if a.value_source(id.as_str()) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        if let Some(text) = a.get_one::<String>(id.as_str()) {
            v.set(name, Value::Str(text.clone()));
        }
    }
    v
}

/// A parameter error from the library, named by its command-line flag.
pub fn flag_error(m: &MethodInfo, e: oose::Error) -> CliError {
    match e {
        oose::Error::InvalidParameter { name, reason } => {
            let flag = m
                .specs
                .iter()
                .find(|s| s.name == name)
                .map_or(name.replace('_', "-"), |s| s.flag.to_string());
            CliError::usage(format!("--{flag}: {reason}"))
        }
        other => CliError::usage(other.to_string()),
    }
}

/// `compare` splits points: refuses proximity and kernel matrices and values.
pub fn points_only(a: &ArgMatches) -> Result<(), CliError> {
    let flag = |name: &str| a.try_get_one::<String>(name).ok().flatten().is_some();
    let matrix = PROXIMITY_FLAGS.iter().any(|(f, _, _)| flag(f))
        || a.try_get_one::<String>(&param_id("kernel"))
            .ok()
            .flatten()
            .is_some_and(|k| k == "precomputed")
        || flag("values");
    if matrix {
        return Err(CliError::usage(
            "compare splits points (--input); proximity or kernel matrices and values are not \
             supported",
        ));
    }
    Ok(())
}

/// Fits the method of `a` on `data`, or on the file(s) `a` names when `data` is None.
pub fn build_model(
    m: &MethodInfo,
    a: &ArgMatches,
    data: Option<MatRef<'_, f64>>,
) -> Result<Model, CliError> {
    let v = values(a);
    // Parameters are checked before any data is read, and named by their flag.
    (m.resolve)(&v).map_err(|e| flag_error(m, e))?;
    let read = |path: &str| -> Result<Mat<f64>, CliError> {
        match data {
            Some(x) => Ok(x.to_owned()),
            None => MatrixReader::open(path)?.read_all(),
        }
    };
    let flag = |name: &str| a.try_get_one::<String>(name).ok().flatten().cloned();
    let input = flag("input").unwrap_or_else(|| "-".into());
    let proximities: Vec<(String, Proximity, &str)> = PROXIMITY_FLAGS
        .iter()
        .filter_map(|(f, k, _)| flag(f).map(|path| (path, *k, *f)))
        .collect();
    if proximities.len() > 1 {
        return Err(CliError::usage(
            "give one of --dissimilarities, --squared-dissimilarities, --similarities",
        ));
    }
    let precomputed = flag(&param_id("kernel")).as_deref() == Some("precomputed");
    if data.is_some() {
        points_only(a)?;
    }
    // The data are read first; the spinner covers the fit alone.
    let fit = |input: Input<'_>| {
        let spin = progress::Spinner::start(&format!("fitting {}", m.name));
        spin.follow_library(&format!("fitting {}", m.name));
        let fitted = (m.fit)(&v, input);
        spin.finish();
        if let Ok(model) = &fitted {
            for w in model.fitted().fit_warnings() {
                eprintln!("oose: warning: {w}");
            }
        }
        // A parameter refused once the data are known (n_components > N, …) is named
        // by its flag, like those refused before reading.
        fitted.map_err(|e| match e {
            oose::Error::InvalidParameter { .. } => flag_error(m, e),
            other => CliError::from(other),
        })
    };
    match (m.input, proximities.first()) {
        (InputKinds::Values, _) => {
            let Some(values) = flag("values") else {
                return Err(CliError::usage(format!(
                    "{} needs --values F (one row of values per training point)",
                    m.name
                )));
            };
            let x = match flag("from-model") {
                Some(path) => load_model(&path)?.embedding().to_owned(),
                None => read(&input)?,
            };
            let f = MatrixReader::open(&values)?.read_all()?;
            fit(Input::Values {
                points: x.as_ref(),
                values: f.as_ref(),
            })
        }
        (_, Some((path, kind, flag))) => {
            if *kind == Proximity::Similarities && m.input == InputKinds::Points && !precomputed {
                return Err(CliError::usage(format!(
                    "--{flag} needs --kernel precomputed"
                )));
            }
            let x = read(path)?;
            fit(Input::Proximity(x.as_ref(), *kind)).map_err(|e| {
                if e.code == 2 {
                    e
                } else {
                    e.in_file(path)
                }
            })
        }
        (_, None) if data.is_none() && m.name == "kpca-nystrom" && input != "-" => {
            // Streamed: the file is read in chunks, three times, never whole.
            let embedding = flag("embedding");
            let spin = progress::Spinner::start(&format!("fitting {}", m.name));
            spin.follow_library(&format!("fitting {}", m.name));
            let model = crate::stream::fit_nystrom(&v, &input, embedding.as_deref(), |e| match e {
                oose::Error::InvalidParameter { .. } => flag_error(m, e),
                other => CliError::from(other),
            });
            spin.finish();
            model
        }
        (_, None) => {
            let x = read(&input)?;
            fit(Input::Points(x.as_ref()))
        }
    }
}
