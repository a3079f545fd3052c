//! `oose demo`: the whole pipeline on built-in data. Swiss roll (SPEC §10, fixed seed),
//! fit on 90 %, extend the other 10 %, compare with retraining (SPEC §9), residual
//! statistics, and a plot.

use crate::{plot, CliError};
use clap::{Args, ValueEnum};
use oose::datasets::{select_rows, split_indices, swiss_roll};
use oose::diagnostics::retrain::compare_with_retraining;
use oose::faer::{Mat, MatRef};
use oose::methods::OutOfSample;
use oose::model::Model;
use oose::prelude::*;
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum DemoMethod {
    Pca,
    Kpca,
}

#[derive(Args)]
pub struct DemoArgs {
    /// The method to demonstrate.
    #[arg(long, value_enum, default_value = "kpca")]
    method: DemoMethod,
    /// Where to write demo.png.
    #[arg(long, default_value = ".")]
    output_dir: std::path::PathBuf,
    /// Number of points in the Swiss roll.
    #[arg(long, default_value_t = 2000)]
    n: usize,
    /// Seed of the data and of the split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

fn fit(method: DemoMethod, x: MatRef<'_, f64>) -> Result<Model, CliError> {
    Ok(match method {
        DemoMethod::Pca => Pca::default().fit(x)?.into(),
        DemoMethod::Kpca => KernelPca::default().fit(x)?.into(),
    })
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
    println!(
        "oose demo: Swiss roll, {} points (noise 0.05, seed {}): {} training, {} new",
        a.n,
        a.seed,
        x.nrows(),
        z.nrows()
    );

    let t0 = Instant::now();
    let model = fit(a.method, x.as_ref())?;
    let t_fit = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let ext = model.extend(z.as_ref())?;
    let t_ext = t1.elapsed().as_secs_f64();

    let info = model.info();
    let get = |k: &str| info.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    match &model {
        Model::KernelPca(m) => println!(
            "method: kernel PCA, gaussian kernel, epsilon = {} (auto: median squared distance), {} components, solver {}",
            m.params().kernel.epsilon().map(|e| format!("{e:.6}")).unwrap_or_default(),
            m.n_components(),
            m.solver_used().0.name()
        ),
        _ => println!("method: PCA, {} components", model.n_components()),
    }
    println!("eigenvalues: {}", get("eigenvalues").unwrap_or_default());
    println!(
        "fit: {:.3} s   extend {} points: {:.4} s",
        t_fit,
        z.nrows(),
        t_ext
    );

    // Retrain on X ∪ Z (training rows first) and compare (SPEC §9).
    let mut all = Mat::<f64>::zeros(x.nrows() + z.nrows(), 3);
    all.as_mut().subrows_mut(0, x.nrows()).copy_from(x.as_ref());
    all.as_mut()
        .subrows_mut(x.nrows(), z.nrows())
        .copy_from(z.as_ref());
    let t2 = Instant::now();
    let retrained = fit(a.method, all.as_ref())?;
    let t_re = t2.elapsed().as_secs_f64();
    let cmp = compare_with_retraining(
        model.embedding(),
        ext.coordinates.as_ref(),
        retrained.embedding(),
    )?;
    println!("retraining on all {} points: {:.3} s", all.nrows(), t_re);
    println!(
        "relative extension error: {:.3e}   training drift: {:.3e}   (SPEC §9, after Procrustes)",
        cmp.relative_extension_error, cmp.training_drift
    );
    let (lo, med, hi) = stats(&ext.residual);
    println!("residual k0(z,z) of new points: min {lo:.3e}  median {med:.3e}  max {hi:.3e}");
    let (lo, med, hi) = stats(&ext.reconstruction_error);
    println!("reconstruction error of new points: min {lo:.3e}  median {med:.3e}  max {hi:.3e}");
    let train_ext = model.extend(x.as_ref())?;
    let exact =
        (&train_ext.coordinates - model.embedding()).norm_max() / model.embedding().norm_max();
    let (_, _, rmax) = stats(&train_ext.residual);
    println!(
        "training points extended: max relative deviation {exact:.1e}, max residual {rmax:.1e}"
    );
    let far = Mat::from_fn(1, 3, |_, j| [60.0, 60.0, 60.0][j]);
    let far_ext = model.extend(far.as_ref())?;
    println!(
        "a point far from the roll (60, 60, 60): residual {:.6}",
        far_ext.residual[0]
    );

    let png = a.output_dir.join("demo.png");
    let logres: Vec<f64> = ext.residual.iter().map(|r| r.max(1e-16).log10()).collect();
    plot::scatter_png(
        &png,
        &format!(
            "oose demo: {} of a Swiss roll, 10 % extended",
            if a.method == DemoMethod::Kpca {
                "kernel PCA"
            } else {
                "PCA"
            }
        ),
        model.embedding(),
        ext.coordinates.as_ref(),
        &logres,
        "log10 residual",
    )?;
    println!("wrote {}", png.display());
    Ok(())
}
