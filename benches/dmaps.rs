//! Diffusion-map benchmark (issue: diffusion maps): S-curve N = 20000 (seed 0, no
//! noise), M = 20000 new points (seed 1), kNN k = 25, ε = 0.02 (exp(−r²/ε)), α = 1,
//! d = 2, t = 1. The peers are datafold's `DiffusionMaps` with its distance cut-off and
//! pydiffmap with k = 25 (benches/peers/dmaps_peers.py, driven by benches/run_dmaps.sh).
use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::s_curve;
use oose::methods::diffusion_maps::{DiffusionKernel, DiffusionMaps, Epsilon, Sparsity};
use oose::methods::OutOfSample;
use std::hint::black_box;
use std::time::Duration;

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
    let mut g = c.benchmark_group("dmaps_s_curve_n20000");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("fit", |b| {
        b.iter(|| black_box(params.fit(x.as_ref()).unwrap()))
    });
    let model = params.fit(x.as_ref()).unwrap();
    g.bench_function("transform_m20000", |b| {
        b.iter(|| black_box(model.extend(z.as_ref()).unwrap()))
    });
    g.finish();
    let e: Vec<String> = model
        .eigenvalues()
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    println!(
        "OOSE_FACTS solver={} nnz={} eigenvalues={}",
        model.core().solver_used().0.name(),
        model.core().nnz(),
        e.join(",")
    );
}

criterion_group!(benches, dmaps);
criterion_main!(benches);
