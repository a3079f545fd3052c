//! Diffusion-map benchmark (issue: diffusion maps): S-curve N = 20000 (seed 0, no
//! noise), M = 20000 new points (seed 1), kNN k = 25, ε = 0.02 (exp(−r²/ε)), α = 1,
//! d = 2, t = 1. The peers are datafold's `DiffusionMaps` with its distance cut-off and
//! pydiffmap with k = 25 (benches/peers/dmaps_peers.py, driven by benches/run_dmaps.sh).
use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::s_curve;
use oose::methods::diffusion_maps::{DiffusionKernel, DiffusionMaps, Epsilon, Sparsity};
use oose_benches::{fit_then_extend, list};

fn dmaps(c: &mut Criterion) {
    let x = s_curve(20000, 0.0, 0).points;
    let z = s_curve(20000, 0.0, 1).points;
    let params = DiffusionMaps {
        n_components: 2,
        kernel: DiffusionKernel {
            epsilon: Epsilon::Value(0.02),
            sparsity: Sparsity::Knn(25),
            alpha: 1.0,
        },
        ..Default::default()
    };
    let model = fit_then_extend(
        c,
        "dmaps_s_curve_n20000",
        &params,
        x.as_ref(),
        z.as_ref(),
        "transform_m20000",
        20,
    );
    let e = list(model.eigenvalues());
    println!(
        "OOSE_FACTS solver={} nnz={} eigenvalues={}",
        model.core().solver_used().0.name(),
        model.core().nnz(),
        e
    );
}

criterion_group!(benches, dmaps);
criterion_main!(benches);
