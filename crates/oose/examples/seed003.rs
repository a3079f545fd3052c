//! Seed 003's protocol (maths §10): S-curve, Swiss roll, punched sphere and 3D clusters,
//! 2048 points each, 1843 training / 205 new (seeded split), kNN sparsification with
//! k = 25, ε = 1 (Swiss roll: ε = ∞, w = 1 on the kNN graph), graph-Laplacian (α = 0)
//! and Laplace–Beltrami (α = 1) kernels, d = 2 diffusion coordinates (t = 1).
//! The extension of the new points is compared with retraining on all 2048 points
//! (maths §9): relative extension error and training drift, after Procrustes.
//!
//! `cargo run --release -p oose --example seed003`

use oose::datasets::{self, select_rows, split_indices};
use oose::diagnostics::retrain::compare_with_retraining;
use oose::methods::diffusion_maps::{DiffusionKernel, DiffusionMaps, Epsilon, Sparsity};
use oose::methods::OutOfSample;

fn main() {
    let n = 2048;
    let sets: Vec<(&str, faer::Mat<f64>, f64)> = vec![
        ("S-curve", datasets::s_curve(n, 0.0, 0).points, 1.0),
        (
            "Swiss roll",
            datasets::swiss_roll(n, 0.0, false, 0).points,
            f64::INFINITY,
        ),
        (
            "punched sphere",
            datasets::punched_sphere(n, 1.0).points,
            1.0,
        ),
        (
            "3D clusters",
            datasets::three_d_clusters(n, 3, 0).points,
            1.0,
        ),
    ];
    println!("| data | kernel | ε | λ₁, λ₂ | relative extension error | training drift | ratio |");
    println!("|---|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for (name, all, eps) in &sets {
        let (tr, ho) = split_indices(n, 0.1, 3);
        let x = select_rows(all.as_ref(), &tr);
        let z = select_rows(all.as_ref(), &ho);
        let order: Vec<usize> = tr.iter().chain(&ho).copied().collect();
        let xz = select_rows(all.as_ref(), &order);
        for (label, alpha) in [("GL (α = 0)", 0.0), ("LB (α = 1)", 1.0)] {
            let dm = DiffusionMaps {
                n_components: 2,
                kernel: DiffusionKernel {
                    epsilon: Epsilon::Value(*eps),
                    sparsity: Sparsity::Knn(25),
                    alpha,
                },
                ..Default::default()
            };
            let fitted = dm.fit(x.as_ref()).expect("fit");
            let ext = fitted.extend(z.as_ref()).expect("extend");
            let re = dm.fit(xz.as_ref()).expect("retrain");
            let c = compare_with_retraining(
                fitted.embedding(),
                ext.coordinates.as_ref(),
                re.embedding(),
            )
            .expect("compare");
            let ratio = c.relative_extension_error / c.training_drift;
            worst = worst.max(ratio);
            let l = fitted.eigenvalues();
            println!(
                "| {name} | {label} | {} | {:.6}, {:.6} | {:.3e} | {:.3e} | {:.2} |",
                if eps.is_infinite() {
                    "∞".to_string()
                } else {
                    format!("{eps}")
                },
                l[0],
                l[1],
                c.relative_extension_error,
                c.training_drift,
                ratio
            );
        }
    }
    println!("worst ratio (extension error / training drift): {worst:.2}");
}
