//! Isomap benchmark (issue: MDS/Isomap): Swiss roll N = 5000 (seed 0), M = 5000 new
//! points (seed 1), noise 0.05, k = 10, 2 components. The peer is scikit-learn's
//! `Isomap` (benches/peers/isomap_sklearn.py, driven by benches/run_isomap.sh).
use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::swiss_roll;
use oose::methods::isomap::Isomap;
use oose::methods::OutOfSample;
use std::hint::black_box;
use std::time::Duration;

fn isomap(c: &mut Criterion) {
    let x = swiss_roll(5000, 0.05, false, 0).points;
    let z = swiss_roll(5000, 0.05, false, 1).points;
    let params = Isomap {
        n_components: 2,
        n_neighbors: 10,
        ..Default::default()
    };
    let mut g = c.benchmark_group("isomap_swiss_roll_n5000");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("fit", |b| {
        b.iter(|| black_box(params.fit(x.as_ref()).unwrap()))
    });
    let model = params.fit(x.as_ref()).unwrap();
    g.bench_function("transform_m5000", |b| {
        b.iter(|| black_box(model.extend(z.as_ref()).unwrap()))
    });
    g.finish();
    let e: Vec<String> = model
        .core()
        .eigenvalues()
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    println!(
        "OOSE_FACTS solver={} eigenvalues={}",
        model.core().solver_used().0.name(),
        e.join(",")
    );
}

criterion_group!(benches, isomap);
criterion_main!(benches);
