//! Times the stages of a diffusion-map fit and extension (kNN kernel, S-curve):
//! `cargo run --release -p oose --example profile_dmaps -- N M K [epsilon|log-slope|median]`.
use oose::methods::diffusion_maps::{DiffusionKernel, DiffusionMaps, Epsilon, Sparsity};
use oose::methods::OutOfSample;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(20000, |s| s.parse().unwrap());
    let m: usize = args.get(2).map_or(20000, |s| s.parse().unwrap());
    let k: usize = args.get(3).map_or(25, |s| s.parse().unwrap());
    let eps = Epsilon::from_name(args.get(4).map_or("log-slope", |s| s.as_str())).unwrap();
    let x = oose::datasets::s_curve(n, 0.0, 0).points;
    let z = oose::datasets::s_curve(m, 0.0, 1).points;
    let kernel = DiffusionKernel {
        epsilon: eps,
        sparsity: Sparsity::Knn(k),
        alpha: 1.0,
    };
    let t = Instant::now();
    let nk = kernel.normalised(x.as_ref()).unwrap();
    println!(
        "kernel: {:.3} s (epsilon {})",
        t.elapsed().as_secs_f64(),
        nk.epsilon
    );
    let t = Instant::now();
    let fitted = DiffusionMaps {
        n_components: 2,
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(nk.epsilon),
            ..kernel
        },
        ..Default::default()
    }
    .fit(x.as_ref())
    .unwrap();
    println!(
        "fit: {:.3} s, solver {:?}, eigenvalues {:?}",
        t.elapsed().as_secs_f64(),
        fitted.core().solver_used(),
        fitted.eigenvalues()
    );
    let t = Instant::now();
    let e = fitted.extend(z.as_ref()).unwrap();
    println!(
        "extend {m} (first call, builds the search index): {:.3} s ({} rows)",
        t.elapsed().as_secs_f64(),
        e.len()
    );
    let t = Instant::now();
    let _ = fitted.extend(z.as_ref()).unwrap();
    println!(
        "extend {m} (second call): {:.3} s",
        t.elapsed().as_secs_f64()
    );
}
