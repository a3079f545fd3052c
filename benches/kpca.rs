//! Kernel PCA, gaussian kernel (ε = auto), Swiss roll N = 5000 training points,
//! M = 20000 new points, 10 components (issue: foundation). Peer: benches/peers/kpca_sklearn.py;
//! benches/run_kpca.sh runs both and prints the ratios.

use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::swiss_roll;
use oose::prelude::*;
use oose_benches::{fit_then_extend, list};

fn kpca(c: &mut Criterion) {
    let x = swiss_roll(5000, 0.05, false, 0).points;
    let z = swiss_roll(20000, 0.05, false, 1).points;
    let params = KernelPca {
        n_components: 10,
        ..Default::default()
    };
    let model = fit_then_extend(
        c,
        "kpca_swiss_roll_n5000",
        &params,
        x.as_ref(),
        z.as_ref(),
        "extend_m20000",
        8,
    );
    // The same extension through the model, with the novelty columns (issue 24: at most
    // 1.5× the time without).
    let with_novelty = Model::from(model.clone());
    let mut g = c.benchmark_group("kpca_swiss_roll_n5000_novelty");
    g.sample_size(10)
        .measurement_time(std::time::Duration::from_secs(8));
    g.bench_function("extend_m20000", |b| {
        b.iter(|| std::hint::black_box(with_novelty.extend(z.as_ref()).unwrap()))
    });
    g.finish();
    // The certified low-rank extension through the fit's pivots (issue 18, maths §20);
    // its matrices are formed on the first call, outside the timing.
    let fast = model.extend_low_rank(z.as_ref()).unwrap();
    let mut g = c.benchmark_group("kpca_swiss_roll_n5000_lowrank");
    g.sample_size(10)
        .measurement_time(std::time::Duration::from_secs(8));
    g.bench_function("extend_m20000", |b| {
        b.iter(|| std::hint::black_box(model.extend_low_rank(z.as_ref()).unwrap()))
    });
    g.finish();
    let exact = model.extend(z.as_ref()).unwrap().coordinates;
    let bound = &fast
        .extra
        .iter()
        .find(|c| c.name == "lowrank_bound")
        .unwrap()
        .values;
    let ymax = exact.norm_max();
    let (mut max_bound, mut max_dev, mut worst) = (0.0f64, 0.0f64, 0.0f64);
    for (i, &b) in bound.iter().enumerate() {
        let dev = (0..exact.ncols())
            .map(|j| (exact[(i, j)] - fast.coordinates[(i, j)]).powi(2))
            .sum::<f64>()
            .sqrt();
        max_bound = max_bound.max(b);
        max_dev = max_dev.max(dev);
        worst = worst.max(dev / b);
    }
    // Facts the peer comparison needs (read by run_kpca.sh).
    let eps = model.params().kernel.epsilon().unwrap();
    let vals = list(model.eigenvalues());
    println!(
        "OOSE_FACTS epsilon={eps:?} solver={} residual_rank={} eigenvalues={} \
         lowrank_max_bound={:e} lowrank_max_deviation={:e} lowrank_worst_ratio={:e}",
        model.solver_used().0.name(),
        model.residual_rank(),
        vals,
        max_bound / ymax,
        max_dev / ymax,
        worst
    );
}

criterion_group!(benches, kpca);
criterion_main!(benches);
