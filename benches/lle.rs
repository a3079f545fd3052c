//! LLE benchmark (issue: LLE family): Swiss roll N = 5000 (seed 0), M = 5000 new points
//! (seed 1), noise 0.05, k = 10, 2 components, each variant (standard, modified,
//! Hessian, LTSA). The peer is scikit-learn's
//! `LocallyLinearEmbedding(eigen_solver="arpack")` (benches/peers/lle_sklearn.py, driven
//! by benches/run_lle.sh).
use criterion::{criterion_group, criterion_main, Criterion};
use oose::datasets::swiss_roll;
use oose::methods::lle::{LleMethod, LocallyLinearEmbedding};
use oose_benches::fit_then_extend;

fn lle(c: &mut Criterion) {
    let x = swiss_roll(5000, 0.05, false, 0).points;
    let z = swiss_roll(5000, 0.05, false, 1).points;
    for method in [
        LleMethod::Standard,
        LleMethod::modified(),
        LleMethod::hessian(),
        LleMethod::Ltsa,
    ] {
        let params = LocallyLinearEmbedding {
            n_neighbors: 10,
            method,
            ..Default::default()
        };
        let name = method.name();
        let model = fit_then_extend(
            c,
            &format!("lle_{name}_swiss_roll_n5000"),
            &params,
            x.as_ref(),
            z.as_ref(),
            "transform_m5000",
            10,
        );
        let info = oose::model::Model::from(model.clone()).info();
        let solver = info
            .iter()
            .find(|(k, _)| k == "solver")
            .map_or("?", |(_, v)| v.as_str());
        println!(
            "OOSE_FACTS method={name} solver={solver} reconstruction_error={:?}",
            model.reconstruction_error()
        );
    }
}

criterion_group!(benches, lle);
criterion_main!(benches);
