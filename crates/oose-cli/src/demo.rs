//! `oose demo`: the whole pipeline on built-in data. Swiss roll (maths §10, fixed seed),
//! fit on 90 % (Isomap by default: it unrolls the roll; any registered method fitted on
//! points), extend the other 10 % and 20 points between the turns of the roll, compare
//! with retraining (maths §9), the novelty p-values of both sets and the method's
//! diagnostics, and a plot whose colours are the novelty p-values.

use crate::{plot, say, CliError};
use clap::builder::PossibleValuesParser;
use clap::Args;
use oose::datasets::{select_rows, split_indices, swiss_roll};
use oose::diagnostics::retrain::compare_with_retraining;
use oose::faer::{Mat, MatRef};
use oose::methods::OutOfSample;
use oose::model::params::{Value, Values};
use oose::model::{Input, InputKinds, MethodInfo, Model, METHODS};
use std::time::Instant;

/// The methods the demo can show: every registered method fitted on points.
fn demo_methods() -> Vec<&'static str> {
    METHODS
        .iter()
        .filter(|m| m.input != InputKinds::Values)
        .map(|m| m.name)
        .collect()
}

#[derive(Args)]
pub struct DemoArgs {
    /// The method to demonstrate (every registered method fitted on points).
    #[arg(long, default_value = "isomap", value_parser = PossibleValuesParser::new(demo_methods()))]
    method: String,
    /// Where to write demo.png.
    #[arg(long, default_value = ".")]
    output_dir: std::path::PathBuf,
    /// Number of points in the Swiss roll.
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true)]
    n: usize,
    /// Seed of the data and of the split.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    seed: u64,
}

/// The demo's parameters: the library's defaults, but the log-slope ε for diffusion
/// maps (what the demo shows off), and for MVU 10 neighbours, tol = 1e-5 and 25
/// landmarks above 100 points. With MVU's defaults (5 neighbours, tol = 1e-8, exact up
/// to [`oose::methods::mvu::MAX_EXACT`] points) the demo's roll stalled the program at
/// 300 and 1000 points (17 s and 200 s), and with 5 neighbours, 50 landmarks and
/// tol = 1e-5 at 1000 and 4000; with these it fits at 100 to 4000 points in at most 4 s, closer to retraining (relative
/// extension error 8.8e-3 at 2000 points against 0.12).
fn fit(method: &str, x: MatRef<'_, f64>) -> Result<Model, CliError> {
    let mut v = Values::new();
    match method {
        "dmaps" => v.set("epsilon", Value::Str("log-slope".into())),
        "mvu" => {
            v.set("tol", Value::Float(1e-5));
            v.set("n_neighbors", Value::Int(10));
            if x.nrows() > 100 {
                v.set("n_landmarks", Value::Int(25));
            }
        }
        _ => {}
    }
    Ok(Model::fit(method, &v, Input::Points(x))?)
}

fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2], s[s.len() - 1])
}

/// Runs the demo.
pub fn run(a: DemoArgs) -> Result<(), CliError> {
    if a.n < 20 {
        return Err(CliError::usage("--n must be at least 20"));
    }
    std::fs::create_dir_all(&a.output_dir)
        .map_err(|e| CliError::data(format!("{}: cannot create: {e}", a.output_dir.display())))?;
    let data = swiss_roll(a.n, 0.05, false, a.seed);
    let (tr, ho) = split_indices(a.n, 0.1, a.seed.wrapping_add(1));
    let x = select_rows(data.points.as_ref(), &tr);
    let z = select_rows(data.points.as_ref(), &ho);
    say!(
        "oose demo: Swiss roll, {} points (noise 0.05, seed {}): {} training, {} new",
        a.n,
        a.seed,
        x.nrows(),
        z.nrows()
    )?;

    let t0 = Instant::now();
    let model = fit(&a.method, x.as_ref())?;
    let t_fit = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let ext = model.extend(z.as_ref())?;
    let t_ext = t1.elapsed().as_secs_f64();

    let (info, params) = (model.info(), model.params());
    // What the model reports, else the parameter of that name (unset ones left out).
    let get = |k: &str| {
        info.iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.clone())
            .or_else(|| {
                params
                    .iter()
                    .find(|(a, v)| *a == k && *v != Value::None)
                    .map(|(_, v)| v.to_string())
            })
    };
    let about = MethodInfo::named(model.method()).map_or("", |m| m.about);
    let used: Vec<String> = [
        "kernel",
        "epsilon",
        "epsilon_rule",
        "dimension_estimate",
        "n_neighbors",
        "perplexity",
        "min_dist",
        "n_landmarks",
        "layers",
        "alpha",
        "t",
        "output",
        "solver",
        "kl_divergence",
    ]
    .iter()
    .filter_map(|k| get(k).map(|v| format!("{k} = {v}")))
    .collect();
    say!(
        "method: {about}, {} components{}{}",
        model.n_components(),
        if used.is_empty() { "" } else { "; " },
        used.join(", ")
    )?;
    if let Some(ev) = get("eigenvalues") {
        say!("eigenvalues: {ev}")?;
    }
    say!(
        "fit: {:.3} s   extend {} points: {:.4} s",
        t_fit,
        z.nrows(),
        t_ext
    )?;

    // Retrain on X ∪ Z (training rows first) and compare (maths §9).
    let mut all = Mat::<f64>::zeros(x.nrows() + z.nrows(), 3);
    all.as_mut().subrows_mut(0, x.nrows()).copy_from(x.as_ref());
    all.as_mut()
        .subrows_mut(x.nrows(), z.nrows())
        .copy_from(z.as_ref());
    let t2 = Instant::now();
    let retrained = fit(&a.method, all.as_ref())?;
    let t_re = t2.elapsed().as_secs_f64();
    let cmp = compare_with_retraining(
        model.embedding(),
        ext.coordinates.as_ref(),
        retrained.embedding(),
    )?;
    say!("retraining on all {} points: {:.3} s", all.nrows(), t_re)?;
    say!(
        "relative extension error: {:.3e}   training drift: {:.3e}   (maths §9, after Procrustes)",
        cmp.relative_extension_error,
        cmp.training_drift
    )?;
    let has_residual = ext.residual.iter().any(|r| !r.is_nan());
    if has_residual {
        let (lo, med, hi) = stats(&ext.residual);
        say!("residual k0(z,z) of new points: min {lo:.3e}  median {med:.3e}  max {hi:.3e}")?;
    } else {
        say!(
            "residual k0(z,z): none (it needs a positive semidefinite kernel the model keeps, \
             which geodesic similarities are not; a sparse diffusion kernel computes it when \
             fitted with residual on)"
        )?;
    }
    if let Some(c) = ext.extra.iter().find(|c| c.name == "relative_density") {
        let (lo, med, hi) = stats(&c.values);
        say!("relative density q(z)/median q(x) of new points: min {lo:.3}  median {med:.3}  max {hi:.3}")?;
        let far = Mat::from_fn(1, 3, |_, j| [60.0, 60.0, 60.0][j]);
        let far_ext = model.extend(far.as_ref())?;
        let v = far_ext
            .extra
            .iter()
            .find(|c| c.name == "relative_density")
            .map_or(f64::NAN, |c| c.values[0]);
        say!("a point far from the roll (60, 60, 60): relative density {v:.3e}")?;
    }
    let (lo, med, hi) = stats(&ext.reconstruction_error);
    say!("reconstruction error of new points: min {lo:.3e}  median {med:.3e}  max {hi:.3e}")?;
    let train_ext = model.extend(x.as_ref())?;
    let exact =
        (&train_ext.coordinates - model.embedding()).norm_max() / model.embedding().norm_max();
    if has_residual {
        let (_, _, rmax) = stats(&train_ext.residual);
        say!(
            "training points extended: max relative deviation {exact:.1e}, max residual {rmax:.1e}"
        )?;
        // (For MDS of 3-D points the residual is the distance² to the affine hull of
        // the data, all of R³: 0 everywhere, so the far point says nothing there.)
        if model.method() != "mds" {
            let far = Mat::from_fn(1, 3, |_, j| [60.0, 60.0, 60.0][j]);
            let far_ext = model.extend(far.as_ref())?;
            say!(
                "a point far from the roll (60, 60, 60): residual {:.6}",
                far_ext.residual[0]
            )?;
        }
    } else {
        say!("training points extended: max relative deviation {exact:.1e}")?;
    }
    if model.fitted().inner_product().is_some() {
        restricted_section(&model, x.as_ref())?;
    }

    // Points the training set does not represent: between the turns of the roll, half
    // a turn's gap (π) from both neighbouring sheets.
    let off = between_turns(20);
    let off_ext = model.extend(off.as_ref())?;
    let pvalues = |e: &oose::extend::Extension| -> Vec<f64> {
        e.extra
            .iter()
            .find(|c| c.name == "novelty_pvalue")
            .map_or_else(
                || vec![f64::NAN; e.coordinates.nrows()],
                |c| c.values.clone(),
            )
    };
    let (p_new, p_off) = (pvalues(&ext), pvalues(&off_ext));
    let flagged = |p: &[f64]| p.iter().filter(|&&v| v <= 0.01).count();
    // With few training points no p-value is that small (the calibration's smallest is
    // 1/(its size + 1)): say so rather than report that nothing was flagged.
    let smallest = get("novelty_smallest_pvalue").and_then(|v| v.parse::<f64>().ok());
    if let Some(p) = smallest.filter(|&p| p > 0.01) {
        say!(
            "novelty p-value: none can be flagged at alpha = 0.01 with {} training points \
             (the smallest p-value is {p:.3}); use more points",
            x.nrows()
        )?;
    }
    say!(
        "novelty p-value (alpha = 0.01): {} of {} held-out points flagged (about 1 % expected); \
         {} of {} points between the turns of the roll flagged",
        flagged(&p_new),
        p_new.len(),
        flagged(&p_off),
        p_off.len()
    )?;

    let png = a.output_dir.join("demo.png");
    let both = Mat::from_fn(z.nrows() + off.nrows(), model.n_components(), |i, j| {
        if i < z.nrows() {
            ext.coordinates[(i, j)]
        } else {
            off_ext.coordinates[(i - z.nrows(), j)]
        }
    });
    // log10 p: held-out points spread over [−3, 0] (p is uniform for points like the
    // training data), points the training set does not represent sit at the bottom.
    let colour: Vec<f64> = p_new
        .iter()
        .chain(&p_off)
        .map(|p| p.max(1e-16).log10())
        .collect();
    let title = format!(
        "oose demo: {} of a Swiss roll; 10 % held out + 20 off the roll extended",
        a.method
    );
    let figure = plot::Scatter {
        title: &title,
        train: model.embedding(),
        new: both.as_ref(),
        value: &colour,
        value_label: "log10 novelty p-value",
    };
    plot::scatter_png(&png, &figure)?;
    say!("wrote {}", png.display())?;
    Ok(())
}

/// `n` points between the turns of the Swiss roll: at parameter t ∈ [1.5π, 3.5π] and
/// height 10.5, radius t + π instead of t (the next turn is at t + 2π).
fn between_turns(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 3, |i, j| {
        let t = std::f64::consts::PI * (1.5 + 2.0 * i as f64 / n as f64);
        let r = t + std::f64::consts::PI;
        [r * t.cos(), 10.5, r * t.sin()][j]
    })
}

/// Projection against restricted reconstruction (maths §5) for an object that sticks
/// out of the representation space: the centre of the data pushed 30 units along the
/// coordinate axis that the embedding represents worst.
fn restricted_section(model: &Model, x: MatRef<'_, f64>) -> Result<(), CliError> {
    use oose::extend::Strategy;
    let n = x.nrows() as f64;
    let centre: Vec<f64> = (0..3)
        .map(|j| (0..x.nrows()).map(|i| x[(i, j)]).sum::<f64>() / n)
        .collect();
    let candidates = Mat::from_fn(3, 3, |k, j| centre[j] + if j == k { 30.0 } else { 0.0 });
    let p = model.extend_with(candidates.as_ref(), Strategy::Projection)?;
    let ignored = |e: &oose::extend::Extension, i: usize| {
        e.extra
            .iter()
            .find(|c| c.name == "beta_minus_projection")
            .map(|c| c.values[i])
            .unwrap_or(e.reconstruction_error[i])
    };
    let k = (0..3)
        .max_by(|&a, &b| ignored(&p, a).total_cmp(&ignored(&p, b)))
        .unwrap_or(0);
    let obj = candidates.as_ref().subrows(k, 1);
    let p = model.extend_with(obj, Strategy::Projection)?;
    let r = model.extend_with(obj, Strategy::Restricted)?;
    let col = |e: &oose::extend::Extension, name: &str| {
        e.extra
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.values[0])
            .unwrap_or(f64::NAN)
    };
    let fmt = |e: &oose::extend::Extension| {
        (0..e.coordinates.ncols())
            .map(|j| format!("{:.4}", e.coordinates[(0, j)]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let axis = ["x", "y", "z"][k];
    say!(
        "an object sticking out of the embedding (data centre + 30 along {axis}): beta - |y_proj|^2 = {:.4}",
        col(&r, "beta_minus_projection")
    )?;
    say!(
        "  projection              y = ({})   objective {:.6e}",
        fmt(&p),
        col(&r, "objective_projection")
    )?;
    say!(
        "  restricted reconstruction y* = ({})   objective {:.6e}   lambda* = {:.4}{}",
        fmt(&r),
        col(&r, "objective_restricted"),
        col(&r, "lambda"),
        if col(&r, "unique") == 1.0 {
            ""
        } else {
            " (not unique)"
        }
    )?;
    {
        let arc = model.arc(obj, 4)?;
        let pts: Vec<String> = arc
            .iter()
            .map(|(_, l, y)| {
                format!(
                    "lambda {:.3}: ({})",
                    l,
                    y.iter()
                        .map(|v| format!("{v:.3}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        say!("  arc from projection to restricted: {}", pts.join("; "))?;
        seed_example_2()?;
    }
    Ok(())
}

/// Seed 001 Example 2 (maths §5): the new object is orthogonal to the training plane, so
/// the projection puts it at the origin while restricted reconstruction lifts it out.
fn seed_example_2() -> Result<(), CliError> {
    use oose::extend::Strategy;
    let d2 = oose::faer::mat![
        [0.0, 100.0, 45.0, 45.0],
        [100.0, 0.0, 45.0, 45.0],
        [45.0, 45.0, 0.0, 64.0],
        [45.0, 45.0, 64.0, 0.0]
    ];
    let m = oose::methods::mds::ClassicalMds::default().fit_squared_dissimilarities(d2.as_ref())?;
    let a2 = oose::faer::mat![[386.0, 386.0, 457.0, 457.0]];
    let p = m.extend_with(a2.as_ref(), Strategy::Projection)?;
    let r = m.extend_with(a2.as_ref(), Strategy::Restricted)?;
    let lambda = r
        .extra
        .iter()
        .find(|c| c.name == "lambda")
        .map_or(f64::NAN, |c| c.values[0]);
    say!(
        "[Trosset 2025] Example 2 (4 objects, Lambda = (50, 32), beta = 400): projection ({:.4}, {:.4}), \
         restricted ({:.4}, {:.4}), lambda* = {lambda:.4} (hard case, not unique)",
        p.coordinates[(0, 0)].abs(),
        p.coordinates[(0, 1)].abs(),
        r.coordinates[(0, 0)].abs(),
        r.coordinates[(0, 1)].abs()
    )?;
    Ok(())
}
