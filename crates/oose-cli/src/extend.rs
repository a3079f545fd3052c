//! `oose extend`: streams new rows through a model (reads, extends and writes in
//! chunks), or reconstructs them jointly. The extension options are the library's
//! (`ExtendOptions`); the model decides which it supports.

use crate::io::{MatrixReader, MatrixWriter};
use crate::{check_width, load_model, progress, CliError};
use clap::Args;
use oose::extend::{ExtensionChoice, Strategy};
use oose::faer::Mat;
use oose::methods::diffusion_maps::{Density, OnIsolated};
use oose::methods::OutOfSample;
use oose::model::{ExtendOptions, Model};
use std::sync::mpsc;

#[derive(Args)]
pub struct ExtendArgs {
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
    /// Add the per-point diagnostic columns: `residual,reconstruction_error`, the
    /// method's own (mds family: `beta_minus_projection,objective_projection`, plus
    /// `objective_restricted,lambda,unique` for restricted reconstruction), and
    /// `novelty,novelty_pvalue,is_novel` (every model; docs/diagnostics.md). Without
    /// it only the coordinates are computed (the same numbers), which is faster: no
    /// novelty search, no residual.
    #[arg(long)]
    diagnostics: bool,
    /// Level α of the `is_novel` column: a new point is flagged when its novelty
    /// p-value is ≤ α (about a fraction α of points like the training data are
    /// flagged). Default: the model's (0.01).
    #[arg(long, allow_hyphen_values = true)]
    alpha: Option<f64>,
    /// Extension strategy: projection (every model's default placement), restricted
    /// (mds, landmark-mds, isomap, kpca), interpolation (t-SNE's and UMAP's default) or
    /// optimize (t-SNE: each new point's own KL divergence minimised, adds the column
    /// `kl`; UMAP: umap-learn's transform moving the new point only).
    #[arg(long, default_value = "projection", value_parser = ["projection", "restricted", "interpolation", "optimize"])]
    strategy: String,
    /// Joint restricted reconstruction of all input rows together (reads the whole
    /// input). For proximity models give the new objects' mutual block with `--mutual`.
    #[arg(long)]
    joint: bool,
    /// k×k proximities among the new objects, same kind as the input (implies --joint).
    #[arg(long)]
    mutual: Option<String>,
    /// Density of new points for dmaps models (default: the model's). `union` reads the
    /// whole input as one batch.
    #[arg(long, value_parser = ["training", "union"])]
    density: Option<String>,
    /// New points without a neighbour (dmaps models; default: the model's; eigenmaps
    /// and spectral-clustering take it at fit).
    #[arg(long, value_parser = ["error", "nan"])]
    on_isolated: Option<String>,
    /// Kernel PCA, kernel interpolation and dense diffusion maps: kernel rows against
    /// every training point (exact), through the fit's pivots with a certified bound
    /// (low-rank: adds the column `lowrank_bound`), or per row low-rank where its bound
    /// is at most --lowrank-tolerance × the embedding's (interpolation: the values')
    /// largest |coordinate| (auto). Maths §20.
    #[arg(long, value_parser = ["exact", "low-rank", "auto"])]
    extension: Option<String>,
    /// With --extension auto: the relative bound below which a row is extended through
    /// the pivots (default 1e-8).
    #[arg(long, allow_hyphen_values = true)]
    lowrank_tolerance: Option<f64>,
    /// Rows per chunk while streaming.
    #[arg(long, default_value_t = 16384, hide = true)]
    chunk_rows: usize,
}

/// `oose inverse`: arguments.
#[derive(Args, Debug)]
pub struct InverseArgs {
    /// Model file written by `oose fit umap`.
    model: String,
    /// Embedding coordinates, d columns (.npy or CSV; `-` = stdin).
    #[arg(long, default_value = "-")]
    input: String,
    /// Output file (.npy or CSV; `-` = stdout): the input-space points x1..xD.
    #[arg(long, default_value = "-")]
    output: String,
    /// Append the columns `residual` (the interpolation's power function: 0 on the
    /// training embedding, rising away from it, above 1 far from it) and
    /// `reconstruction_error` (distance to the nearest training embedding point in units
    /// of the embedding's neighbour scale).
    #[arg(long)]
    diagnostics: bool,
}

/// `oose inverse`: reads embedding coordinates in chunks and writes their pre-images.
pub fn inverse(a: InverseArgs) -> Result<(), CliError> {
    let model = load_model(&a.model)?;
    // Refused before any input is read when the method has no inverse.
    model.inverse_transform(model.embedding().subrows(0, 1))?;
    let input = MatrixReader::open(&a.input)?;
    let input_name = input.name().to_string();
    let width = model.input_width();
    let mut names: Vec<String> = (1..=width).map(|j| format!("x{j}")).collect();
    if a.diagnostics {
        names.push("residual".into());
        names.push("reconstruction_error".into());
    }
    let mut out: Option<MatrixWriter> = None;
    let mut rows = 0usize;
    let chunks = Chunks::start(input, 16384);
    while let Some(chunk) = chunks.next()? {
        let e = model.inverse_transform(chunk.as_ref()).map_err(|e| {
            let mut e = CliError::from(e);
            e.message = format!("{input_name}: {}", row_offset_message(&e.message, rows));
            e
        })?;
        let mut cols: Vec<&[f64]> = (0..width).map(|j| e.coordinates.col_as_slice(j)).collect();
        if a.diagnostics {
            cols.push(&e.residual);
            cols.push(&e.reconstruction_error);
        }
        let w = match out.as_mut() {
            Some(w) => w,
            None => out.insert(MatrixWriter::create(&a.output, &names)?),
        };
        w.write_rows(&cols)?;
        rows += chunk.nrows();
    }
    match out {
        Some(w) => w.finish(),
        None => MatrixWriter::create(&a.output, &names)?.finish(),
    }
}

/// An option error named by its flag.
fn option_error(e: oose::Error) -> CliError {
    match e {
        oose::Error::InvalidParameter { name, reason } => {
            CliError::usage(format!("--{}: {reason}", name.replace('_', "-")))
        }
        other => CliError::from(other),
    }
}

pub fn run(a: ExtendArgs) -> Result<(), CliError> {
    if a.chunk_rows == 0 {
        return Err(CliError::usage("--chunk-rows must be at least 1"));
    }
    let model = load_model(&a.model)?;
    if a.joint || a.mutual.is_some() {
        if a.extension.as_deref().is_some_and(|e| e != "exact") || a.lowrank_tolerance.is_some() {
            return Err(CliError::usage(
                "--extension low-rank|auto is a projection; joint restricted reconstruction \
                 needs the exact kernel rows",
            ));
        }
        return joint(&a, &model);
    }
    let opts = ExtendOptions {
        strategy: Some(Strategy::from_name(&a.strategy).map_err(option_error)?),
        density: a
            .density
            .as_deref()
            .map(Density::from_name)
            .transpose()
            .map_err(option_error)?,
        on_isolated: a
            .on_isolated
            .as_deref()
            .map(OnIsolated::from_name)
            .transpose()
            .map_err(option_error)?,
        // Its presence is checked here; its values come chunk by chunk.
        kernel_diagonal: a.kernel_diagonal.as_ref().map(|_| &[][..]),
        alpha: a.alpha,
        // Without --diagnostics only the coordinates are written: nothing else is
        // computed (the same coordinates, bitwise).
        coordinates_only: !a.diagnostics,
        extension: match (&a.extension, a.lowrank_tolerance) {
            (None, None) => None,
            (name, tol) => Some(
                ExtensionChoice::from_name(name.as_deref().unwrap_or("exact"), tol)
                    .map_err(option_error)?,
            ),
        },
    };
    model.check_options(&opts).map_err(option_error)?;
    if a.diagnostics {
        if let Some(w) = model.novelty().and_then(|n| n.unreachable_level(a.alpha)) {
            eprintln!("oose: warning: {w}");
        }
    }
    // Options that couple the rows of a batch: the whole input is one batch.
    let coupled = model.fitted().batch_coupled(&opts);
    let chunk_rows = if coupled { usize::MAX } else { a.chunk_rows };
    let input = MatrixReader::open(&a.input)?;
    let input_name = input.name().to_string();
    let mut diag = a
        .kernel_diagonal
        .as_deref()
        .map(MatrixReader::open)
        .transpose()?;
    let d = model.n_components();
    let mut out: Option<MatrixWriter> = None;
    let spin = progress::Spinner::start("extending");
    let mut rows = 0usize;
    let chunks = Chunks::start(input, chunk_rows);
    while let Some(chunk) = chunks.next()? {
        check_width(&model, chunk.ncols(), &input_name)?;
        let dv: Option<Vec<f64>> = match diag.as_mut() {
            Some(dr) => Some(diagonal_rows(dr, chunk.nrows(), rows, &input_name)?),
            None => None,
        };
        let chunk_opts = ExtendOptions {
            kernel_diagonal: dv.as_deref(),
            ..opts
        };
        let ext = model
            .extend_options(chunk.as_ref(), &chunk_opts)
            .map_err(|e| {
                let mut e = CliError::from(e);
                e.message = format!("{input_name}: {}", row_offset_message(&e.message, rows));
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
        let w = out.as_mut().expect("created above");
        w.write_rows(&refs)?;
        // Every chunk reaches the reader as soon as it is done (a stream's consumer
        // must not wait for the next 16384 rows).
        w.flush()?;
        rows += chunk.nrows();
        spin.inc(chunk.nrows());
    }
    spin.finish();
    match out {
        Some(o) if rows > 0 => o.finish(),
        _ => Err(CliError::data(format!(
            "{input_name}: empty input (no data rows)"
        ))),
    }
}

/// The kernel diagonal's next `n` values, one per row of the input.
/// `offset` rows were read before (for the row number in errors).
fn diagonal_rows(
    dr: &mut MatrixReader,
    n: usize,
    offset: usize,
    input: &str,
) -> Result<Vec<f64>, CliError> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let part = dr
            .next_chunk(n - v.len())?
            .ok_or_else(|| CliError::data(format!("{}: fewer rows than {input}", dr.name())))?;
        if part.ncols() != 1 {
            return Err(CliError::data(format!(
                "{}: expected one value per row of {input}",
                dr.name()
            )));
        }
        v.extend((0..part.nrows()).map(|i| part[(i, 0)]));
    }
    if let Some((i, x)) = v.iter().enumerate().find(|(_, x)| **x < 0.0) {
        return Err(CliError::data(format!(
            "{}: row {}: k(z, z) = {x} is negative (a positive semidefinite kernel has \
             k(z, z) ≥ 0)",
            dr.name(),
            offset + i + 1
        )));
    }
    Ok(v)
}

/// Rows read on their own thread and handed over in blocks: the extension of one chunk
/// overlaps the parsing of the next, and a chunk is cut short when the input pauses,
/// so a stream's rows come out promptly whatever the chunk size.
struct Chunks {
    blocks: mpsc::Receiver<Result<Mat<f64>, CliError>>,
    chunk_rows: usize,
}

/// Rows per block handed over by the reading thread.
const BLOCK_ROWS: usize = 1024;

impl Chunks {
    fn start(mut input: MatrixReader, chunk_rows: usize) -> Chunks {
        let (tx, rx) = mpsc::sync_channel(64);
        let block = BLOCK_ROWS.min(chunk_rows);
        std::thread::spawn(move || loop {
            match input.next_chunk(block) {
                Ok(Some(m)) => {
                    if tx.send(Ok(m)).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        });
        Chunks {
            blocks: rx,
            chunk_rows,
        }
    }

    /// The next chunk: what is waiting, at least one block and at most about
    /// `chunk_rows` rows (all rows when `chunk_rows` is unbounded); `None` at the end.
    fn next(&self) -> Result<Option<Mat<f64>>, CliError> {
        let Ok(first) = self.blocks.recv() else {
            return Ok(None);
        };
        let first = first?;
        let mut parts = vec![first];
        let mut n = parts[0].nrows();
        while n < self.chunk_rows {
            let next = if self.chunk_rows == usize::MAX {
                // Coupled rows: the whole input is one batch.
                match self.blocks.recv() {
                    Ok(b) => b,
                    Err(_) => break,
                }
            } else {
                match self.blocks.try_recv() {
                    Ok(b) => b,
                    Err(_) => break,
                }
            };
            let b = next?;
            n += b.nrows();
            parts.push(b);
        }
        if parts.len() == 1 {
            return Ok(parts.pop());
        }
        // The reader keeps one width (ragged rows are its error).
        Ok(Some(oose::linalg::stack_rows(&parts, parts[0].ncols())))
    }
}

/// Joint restricted reconstruction: the whole input at once (the rows are coupled).
fn joint(a: &ExtendArgs, model: &Model) -> Result<(), CliError> {
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
