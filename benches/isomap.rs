//! Isomap benchmark (issue: MDS/Isomap): Swiss roll N = 5000 (seed 0), M = 5000 new
//! points (seed 1), noise 0.05, k = 10, 2 components. The peer is scikit-learn's
//! `Isomap` (benches/peers/isomap_sklearn.py, driven by benches/run_isomap.sh).
use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::swiss_roll;
use oose::methods::isomap::Isomap;
use oose_benches::{fit_then_extend, list};

fn isomap(c: &mut Criterion) {
    let x = swiss_roll(5000, 0.05, false, 0).points;
    let z = swiss_roll(5000, 0.05, false, 1).points;
    let params = Isomap {
        n_components: 2,
        n_neighbors: 10,
        ..Default::default()
    };
    let model = fit_then_extend(
        c,
        "isomap_swiss_roll_n5000",
        &params,
        x.as_ref(),
        z.as_ref(),
        "transform_m5000",
        20,
    );
    let e = list(model.core().eigenvalues());
    println!(
        "OOSE_FACTS solver={} eigenvalues={}",
        model.core().solver_used().0.name(),
        e
    );
}

criterion_group!(benches, isomap);
criterion_main!(benches);
