//! Kernel PCA, gaussian kernel (ε = auto), Swiss roll N = 5000 training points,
//! M = 20000 new points, 10 components (issue: foundation). Peer: benches/peers/kpca_sklearn.py;
//! benches/run_kpca.sh runs both and prints the ratios.

use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::swiss_roll;
use oose::prelude::*;
use std::hint::black_box;
use std::time::Duration;

fn kpca(c: &mut Criterion) {
    let x = swiss_roll(5000, 0.05, false, 0).points;
    let z = swiss_roll(20000, 0.05, false, 1).points;
    let params = KernelPca {
        n_components: 10,
        ..Default::default()
    };
    let mut g = c.benchmark_group("kpca_swiss_roll_n5000");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("fit", |b| {
        b.iter(|| black_box(params.fit(x.as_ref()).unwrap()))
    });
    let model = params.fit(x.as_ref()).unwrap();
    g.bench_function("extend_m20000", |b| {
        b.iter(|| black_box(model.extend(z.as_ref()).unwrap()))
    });
    g.finish();
    // Facts the peer comparison needs (read by run_kpca.sh).
    let eps = model.params().kernel.epsilon().unwrap();
    let vals: Vec<String> = model
        .eigenvalues()
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    println!(
        "OOSE_FACTS epsilon={eps:?} solver={} residual_rank={} eigenvalues={}",
        model.solver_used().0.name(),
        model.residual_rank(),
        vals.join(",")
    );
}

criterion_group!(benches, kpca);
criterion_main!(benches);
