//! A fuzz harness on stable Rust: mutation loops over the three things a hostile user
//! hands to oose — model files, `.npy` files and CSV text — driven by a seeded
//! generator, so every failure is reproducible from `(target, seed, case)`.
//!
//! - **model**: valid models of every registered configuration, mutated in the header
//!   (bit flips, truncation, appended bytes, length rewrites) and, mostly, in the payload
//!   with the length and checksum recomputed (a file crafted by someone else). A model
//!   that decodes is then used: `info`, the file round trip, `extend` (and restricted
//!   and joint reconstruction where the method has them).
//! - **npy**: valid `.npy` files with lying headers (shapes up to 2⁶⁴, wrong dtypes,
//!   Fortran order), flipped, truncated and extended bytes, read with the size known
//!   (a file) and unknown (a pipe).
//! - **csv**: CSV text with hostile numbers (1e308, 1e400, NaN, hex, empty fields),
//!   byte-order marks, CR LF, invalid UTF-8 and random byte edits; rows that read are
//!   extended through kernel PCA, Isomap and diffusion-map models.
//!
//! A case fails when it panics, or when an extension returns a non-finite coordinate
//! without the caller having asked for NaN rows. `examples/fuzz.rs` runs it long;
//! `tests/fuzz.rs` runs a bounded number of cases in `scripts/test`.

use crate::io::MatrixReader;
use oose::faer::Mat;
use oose::methods::mds::Proximity;
use oose::methods::OutOfSample;
use oose::model::params::{Value, Values};
use oose::model::{ExtendOptions, Input, InputKinds, Model, METHODS};
use oose::rng::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What is fuzzed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Model files.
    Model,
    /// `.npy` files.
    Npy,
    /// CSV text.
    Csv,
}

impl Target {
    /// All targets.
    pub const ALL: [Target; 3] = [Target::Model, Target::Npy, Target::Csv];

    /// The target named `name` (`model`, `npy`, `csv`).
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Model => "model",
            Target::Npy => "npy",
            Target::Csv => "csv",
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// Cases run.
    pub cases: usize,
    /// Inputs accepted (decoded or read) and used without failure.
    pub accepted: usize,
    /// Inputs refused with a typed error.
    pub refused: usize,
    /// Failures: `case N: what happened`.
    pub failures: Vec<String>,
    /// The slowest case, in seconds.
    pub slowest: f64,
}

static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);
/// What the current case started from (for the failure report).
static CURRENT: Mutex<String> = Mutex::new(String::new());

fn set_current(what: &str) {
    let mut c = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
    c.clear();
    c.push_str(what);
}

/// Runs `cases` cases of `target` from `seed`; `progress` counts finished cases (a
/// watchdog can tell a hang from it).
pub fn run(target: Target, cases: usize, seed: u64, progress: &AtomicUsize) -> Report {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let msg = oose::error::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        *PANIC_MESSAGE.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{msg}{at}"));
    }));
    let seeds = Seeds::new();
    let mut report = Report::default();
    let mut rng = Rng::new(seed);
    for case in 0..cases {
        let case_seed = rng.next_u64();
        let t = Instant::now();
        set_current("");
        let outcome = catch_unwind(AssertUnwindSafe(|| match target {
            Target::Model => model_case(&seeds, case_seed),
            Target::Npy => npy_case(case_seed),
            Target::Csv => csv_case(&seeds, case_seed),
        }));
        report.slowest = report.slowest.max(t.elapsed().as_secs_f64());
        report.cases += 1;
        match outcome {
            Ok(Outcome::Accepted) => report.accepted += 1,
            Ok(Outcome::Refused) => report.refused += 1,
            Ok(Outcome::Failed(why)) => report.failures.push(format!(
                "{} case {case} (seed {case_seed}): {why}",
                target.name()
            )),
            Err(_) => {
                let msg = PANIC_MESSAGE
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_default();
                let from = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
                report.failures.push(format!(
                    "{} case {case} (seed {case_seed}, from {from}): panic: {msg}",
                    target.name()
                ));
            }
        }
        progress.fetch_add(1, Ordering::Relaxed);
    }
    std::panic::set_hook(hook);
    report
}

enum Outcome {
    Accepted,
    Refused,
    Failed(String),
}

/// Valid models to mutate, and three models to extend CSV rows through.
struct Seeds {
    models: Vec<(String, Vec<u8>)>,
    extenders: Vec<Model>,
}

impl Seeds {
    fn new() -> Seeds {
        let x = oose::datasets::s_curve(60, 0.02, 5).points;
        let f = Mat::from_fn(x.nrows(), 2, |i, j| x[(i, j)] * x[(i, 2)]);
        let mut models = Vec::new();
        for m in METHODS {
            for c in (m.configurations)() {
                let input = match m.input {
                    InputKinds::Values => Input::Values {
                        points: x.as_ref(),
                        values: f.as_ref(),
                    },
                    _ => Input::Points(x.as_ref()),
                };
                if let Ok(model) = (m.fit)(&c.values, input) {
                    models.push((format!("{}/{}", m.name, c.label), model.to_bytes()));
                }
            }
        }
        // Proximity inputs: classical MDS of dissimilarities, kernel PCA of a kernel
        // matrix, and a diffusion map that answers NaN rows for isolated points.
        let n = x.nrows();
        let dist = Mat::from_fn(n, n, |i, j| {
            (0..3)
                .map(|c| (x[(i, c)] - x[(j, c)]).powi(2))
                .sum::<f64>()
                .sqrt()
        });
        let gram = Mat::from_fn(n, n, |i, j| {
            (0..3).map(|c| x[(i, c)] * x[(j, c)]).sum::<f64>()
        });
        let extra: [(&str, &str, Input<'_>, Values); 4] = [
            (
                "mds",
                "dissimilarities",
                Input::Proximity(dist.as_ref(), Proximity::Dissimilarities),
                Values::new(),
            ),
            (
                "mds",
                "similarities",
                Input::Proximity(gram.as_ref(), Proximity::Similarities),
                Values::new(),
            ),
            (
                "kpca",
                "precomputed",
                Input::Points(gram.as_ref()),
                Values::new().with("kernel", "precomputed"),
            ),
            (
                "dmaps",
                "knn-nan-isolated",
                Input::Points(x.as_ref()),
                Values::new()
                    .with("sparsity", "knn")
                    .with("on_isolated", "nan"),
            ),
        ];
        for (name, label, input, v) in extra {
            if let Ok(model) = Model::fit(name, &v, input) {
                models.push((format!("{name}/{label}"), model.to_bytes()));
            }
        }
        let fit = |name: &str| {
            Model::fit(name, &Default::default(), Input::Points(x.as_ref()))
                .expect("a default fit on an S-curve")
        };
        let extenders = vec![fit("kpca"), fit("isomap"), fit("dmaps")];
        Seeds { models, extenders }
    }
}

fn pick<'a, T>(rng: &mut Rng, v: &'a [T]) -> &'a T {
    &v[rng.below(v.len())]
}

/// Numbers that break arithmetic, as little-endian bytes of an f64 (−1: negative where
/// only non-negative values are stored, a distance or a radius).
const SPECIAL: [f64; 10] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e308,
    -1e308,
    0.0,
    -0.0,
    5e-324,
    1e-300,
    -1.0,
];

fn model_case(seeds: &Seeds, seed: u64) -> Outcome {
    let mut rng = Rng::new(seed);
    let (label, valid) = pick(&mut rng, &seeds.models);
    set_current(label);
    let mut b = valid.clone();
    const HEADER: usize = 24;
    match rng.below(10) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => b.truncate(rng.below(b.len())),
        2 => b.extend((0..1 + rng.below(16)).map(|_| rng.next_u64() as u8)),
        3 => {
            let len = match rng.below(3) {
                0 => rng.next_u64(),
                1 => (b.len() - HEADER) as u64 + rng.below(3) as u64 - 1,
                _ => u64::MAX,
            };
            b[12..20].copy_from_slice(&len.to_le_bytes());
        }
        _ => {
            // The payload, edited, with its length and checksum made valid again.
            let mut p = b.split_off(HEADER);
            for _ in 0..1 + rng.below(4) {
                if p.is_empty() {
                    break;
                }
                let i = rng.below(p.len());
                match rng.below(6) {
                    0 => p[i] ^= 1 << rng.below(8),
                    1 => p[i] = *pick(&mut rng, &[0u8, 1, 2, 0x7f, 0x80, 0xff]),
                    2 if i + 8 <= p.len() => {
                        let v = *pick(&mut rng, &SPECIAL);
                        p[i..i + 8].copy_from_slice(&v.to_le_bytes());
                    }
                    3 => {
                        let extra: Vec<u8> = (0..1 + rng.below(8))
                            .map(|_| rng.next_u64() as u8)
                            .collect();
                        p.splice(i..i, extra);
                    }
                    4 => {
                        let end = (i + 1 + rng.below(8)).min(p.len());
                        p.drain(i..end);
                    }
                    _ => {
                        // A varint (a size, an index, a count) made large or zero.
                        let v = *pick(&mut rng, &[0u8, 1, 0xff]);
                        p[i] = v;
                        if v == 0xff {
                            for k in i + 1..(i + 4).min(p.len()) {
                                p[k] = 0xff;
                            }
                        }
                    }
                }
            }
            b[12..20].copy_from_slice(&(p.len() as u64).to_le_bytes());
            let version = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
            b[20..24].copy_from_slice(&oose::model::checksum(version, &p).to_le_bytes());
            b.extend_from_slice(&p);
        }
    }
    let model = match Model::from_bytes(&b) {
        Ok(m) => m,
        Err(_) => return Outcome::Refused,
    };
    use_model(&model, label, &mut rng)
}

/// Whether the model was asked to return NaN rows for isolated points.
fn nan_rows_requested(model: &Model) -> bool {
    model
        .params()
        .iter()
        .any(|(n, v)| *n == "on_isolated" && *v == Value::Str("nan".into()))
}

fn use_model(model: &Model, label: &str, rng: &mut Rng) -> Outcome {
    let _ = model.info();
    if Model::from_bytes(&model.to_bytes()).as_ref() != Ok(model) {
        return Outcome::Failed(format!("{label}: the file round trip changed the model"));
    }
    let w = model.input_width();
    if w == 0 || w > 10_000 {
        return Outcome::Accepted;
    }
    let train = model.fitted().training_points();
    let z = Mat::from_fn(3, w, |i, j| match (i, train) {
        (0, Some(x)) if x.nrows() > 0 && x.ncols() == w => x[(0, j)],
        (1, _) => 0.0,
        _ => 3.0 * rng.normal(),
    });
    let nan_ok = nan_rows_requested(model);
    let full = model.extend(z.as_ref());
    // Only the coordinates: the full extension's bits; never an error where the full
    // extension has none (the other way round is fine: the diagnostics it leaves out
    // can be what a corrupt file breaks).
    let alone = model.extend_options(
        z.as_ref(),
        &ExtendOptions {
            coordinates_only: true,
            ..Default::default()
        },
    );
    match (&full, &alone) {
        (Ok(f), Ok(a)) if !same_bits(&f.coordinates, &a.coordinates) => {
            return Outcome::Failed(format!(
                "{label}: the coordinates alone differ from the full extension's"
            ));
        }
        (Ok(_), Err(e)) => {
            return Outcome::Failed(format!(
                "{label}: the coordinates alone failed where the full extension did not: {e}"
            ));
        }
        _ => {}
    }
    let mut outcomes = vec![full];
    if model.fitted().inner_product().is_some() {
        outcomes.push(model.extend_with(z.as_ref(), oose::extend::Strategy::Restricted));
        let _ = model.extend_joint(z.as_ref(), None);
    }
    let optimize = ExtendOptions {
        strategy: Some(oose::extend::Strategy::Optimize),
        ..Default::default()
    };
    if model.check_options(&optimize).is_ok() {
        outcomes.push(model.extend_options(z.as_ref(), &optimize));
    }
    for e in outcomes.into_iter().flatten() {
        if !nan_ok && e.coordinates.as_ref().has_nan() {
            return Outcome::Failed(format!("{label}: NaN coordinates without an error"));
        }
        if !nan_ok && !e.coordinates.as_ref().is_all_finite() {
            return Outcome::Failed(format!("{label}: infinite coordinates without an error"));
        }
    }
    Outcome::Accepted
}

/// Whether two matrices have the same shape and the same bits.
fn same_bits(a: &Mat<f64>, b: &Mat<f64>) -> bool {
    a.shape() == b.shape()
        && (0..a.nrows())
            .all(|i| (0..a.ncols()).all(|j| a[(i, j)].to_bits() == b[(i, j)].to_bits()))
}

fn npy_case(seed: u64) -> Outcome {
    let mut rng = Rng::new(seed);
    let rows = rng.below(5);
    let cols = 1 + rng.below(4);
    let f32 = rng.below(2) == 0;
    let big = rng.below(4) == 0;
    let fortran = rng.below(3) == 0;
    let descr = format!(
        "{}f{}",
        if big { ">" } else { "<" },
        if f32 { 4 } else { 8 }
    );
    let huge = [
        "0",
        "1",
        "3",
        "2147483648",
        "4294967296",
        "1000000000000",
        "2305843009213693952",
        "9223372036854775807",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "1e3",
        "",
    ];
    let shape = match rng.below(4) {
        0 => format!("({}, {})", pick(&mut rng, &huge), pick(&mut rng, &huge)),
        1 => match rng.below(4) {
            0 => format!("({},)", pick(&mut rng, &huge)),
            1 => "()".to_string(),
            2 => format!("({rows}, {cols}, 2)"),
            _ => format!("({rows}, {}", cols),
        },
        _ => format!("({rows}, {cols})"),
    };
    let descr = if rng.below(10) == 0 {
        pick(&mut rng, &["<i8", "|b1", "<c16", "'<f8", "", "<f2"]).to_string()
    } else {
        descr
    };
    let mut h = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if rng.below(10) == 0 {
            "Maybe"
        } else if fortran {
            "True"
        } else {
            "False"
        }
    );
    while h.len() % 64 != 63 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY".to_vec();
    if rng.below(4) == 0 {
        b.extend_from_slice(&[2, 0]);
        b.extend_from_slice(&(h.len() as u32).to_le_bytes());
    } else {
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    }
    b.extend_from_slice(h.as_bytes());
    for _ in 0..rows * cols {
        let v = if rng.below(20) == 0 {
            *pick(&mut rng, &SPECIAL)
        } else {
            rng.normal()
        };
        match (f32, big) {
            (true, false) => b.extend_from_slice(&(v as f32).to_le_bytes()),
            (true, true) => b.extend_from_slice(&(v as f32).to_be_bytes()),
            (false, false) => b.extend_from_slice(&v.to_le_bytes()),
            (false, true) => b.extend_from_slice(&v.to_be_bytes()),
        }
    }
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => b.truncate(rng.below(b.len() + 1)),
        2 => b.extend((0..1 + rng.below(9)).map(|_| rng.next_u64() as u8)),
        3 => {
            // The header length field itself.
            let v = rng.next_u64() as u16;
            if b[6] == 1 {
                b[8..10].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {}
    }
    let size = (rng.below(2) == 0).then_some(b.len() as u64);
    read(b, true, size, &mut rng).0
}

/// Reads `bytes` whole or in chunks; the matrix when it reads.
fn read(
    bytes: Vec<u8>,
    npy: bool,
    size: Option<u64>,
    rng: &mut Rng,
) -> (Outcome, Option<Mat<f64>>) {
    let prompt = size.is_none();
    let r = MatrixReader::from_reader(
        "fuzz".into(),
        Box::new(std::io::Cursor::new(bytes)),
        npy,
        size,
        prompt,
    );
    let mut r = match r {
        Ok(r) => r,
        Err(e) => return (refusal(&e.message), None),
    };
    if rng.below(2) == 0 {
        return match r.read_all() {
            Ok(m) => match check_finite(&m) {
                None => (Outcome::Accepted, Some(m)),
                Some(f) => (f, None),
            },
            Err(e) => (refusal(&e.message), None),
        };
    }
    loop {
        match r.next_chunk(1 + rng.below(3)) {
            Ok(Some(m)) => {
                if let Some(f) = check_finite(&m) {
                    return (f, None);
                }
            }
            Ok(None) => return (Outcome::Accepted, None),
            Err(e) => return (refusal(&e.message), None),
        }
    }
}

fn check_finite(m: &Mat<f64>) -> Option<Outcome> {
    (!m.as_ref().is_all_finite()).then(|| Outcome::Failed("a non-finite value was read".into()))
}

/// A refusal must be one line naming the input.
fn refusal(message: &str) -> Outcome {
    if !message.starts_with("fuzz") || message.contains('\n') {
        return Outcome::Failed(format!("unnamed or multi-line error: {message:?}"));
    }
    Outcome::Refused
}

fn csv_case(seeds: &Seeds, seed: u64) -> Outcome {
    let mut rng = Rng::new(seed);
    let fields = [
        "1", "-2.5", "0", "1e308", "-1e308", "1e200", "1e400", "nan", "NaN", "inf", "-inf", "0x10",
        "", " ", "1 2", "+3", "1e-320", "١", "x", "\"1\"", "1.", ".5", "--1",
    ];
    let width = if rng.below(3) == 0 {
        1 + rng.below(5)
    } else {
        3
    };
    let mut text = String::new();
    if rng.below(8) == 0 {
        text.push('\u{feff}');
    }
    if rng.below(5) == 0 {
        text.push_str("a,b,c\n");
    }
    for _ in 0..rng.below(8) {
        let w = if rng.below(10) == 0 {
            1 + rng.below(5)
        } else {
            width
        };
        let row: Vec<String> = (0..w)
            .map(|_| {
                if rng.below(6) == 0 {
                    pick(&mut rng, &fields).to_string()
                } else {
                    format!("{}", rng.normal() * 10f64.powi(rng.below(7) as i32))
                }
            })
            .collect();
        text.push_str(&row.join(","));
        text.push_str(if rng.below(6) == 0 { "\r\n" } else { "\n" });
    }
    let mut b = text.into_bytes();
    if rng.below(4) == 0 && !b.is_empty() {
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(b.len());
            b[i] = *pick(
                &mut rng,
                &[0u8, b',', b'\n', b'\r', 0xff, 0xc3, b'e', b'-', b'9'],
            );
        }
    }
    let (outcome, m) = read(b, false, None, &mut rng);
    let Some(z) = m else {
        return outcome;
    };
    if z.ncols() != 3 {
        return outcome;
    }
    for model in &seeds.extenders {
        if let Ok(e) = model.extend(z.as_ref()) {
            if !e.coordinates.as_ref().is_all_finite() {
                return Outcome::Failed(format!(
                    "{}: non-finite coordinates without an error",
                    model.method()
                ));
            }
        }
    }
    outcome
}

/// The labels of the valid models the model target mutates (one per registered
/// configuration that fits on 60 S-curve points).
pub fn seed_models() -> Vec<String> {
    Seeds::new().models.into_iter().map(|(l, _)| l).collect()
}
