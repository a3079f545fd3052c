//! Host crate for the benchmarks in this folder (see benches/README.md), and what they
//! share: one criterion group that times a method's fit and then its extension.

use criterion::Criterion;
use oose::faer::MatRef;
use oose::methods::OutOfSample;
use oose::model::{Input, Method};
use std::hint::black_box;
use std::time::Duration;

/// Times `params`' fit on `x` (benchmark `fit`) and the fitted model's extension of `z`
/// (benchmark `extend_name`) in the criterion group `group`: 10 samples, `seconds` of
/// measurement each. Returns the fitted model (for the facts the peer scripts read).
pub fn fit_then_extend<M: Method>(
    c: &mut Criterion,
    group: &str,
    params: &M,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    extend_name: &str,
    seconds: u64,
) -> M::Fitted {
    let fit = || params.fit_input(Input::Points(x)).unwrap();
    let mut g = c.benchmark_group(group);
    g.sample_size(10)
        .measurement_time(Duration::from_secs(seconds))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("fit", |b| b.iter(|| black_box(fit())));
    let model = fit();
    g.bench_function(extend_name, |b| {
        b.iter(|| black_box(model.extend(z).unwrap()))
    });
    g.finish();
    model
}

/// Numbers as an `OOSE_FACTS` value: shortest round-trip forms, comma-separated.
pub fn list(xs: &[f64]) -> String {
    xs.iter()
        .map(|v| format!("{v:?}"))
        .collect::<Vec<_>>()
        .join(",")
}
