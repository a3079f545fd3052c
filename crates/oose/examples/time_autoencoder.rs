//! Times the autoencoder's training per epoch: 784 → 256 → 64 → 2 and back (ReLU), Adam
//! 1e-3, batch 128, on N uniform random rows (the time does not depend on the values),
//! the median interval between the per-epoch progress reports. The same network as
//! `benches/probes/candle` (the dependency measurement of maths §16).
//!
//! `cargo run --release -p oose --example time_autoencoder -- N EPOCHS [float64|float32]`
use oose::methods::autoencoder::{Autoencoder, Precision};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn main() {
    let precision = std::env::args()
        .nth(3)
        .map_or(Ok(Precision::Float64), |p| Precision::from_name(&p))
        .expect("float64 or float32");
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .take(2)
        .map(|a| a.parse().expect("N EPOCHS"))
        .collect();
    let (n, epochs) = (
        args.first().copied().unwrap_or(20000),
        args.get(1).copied().unwrap_or(5),
    );
    let mut rng = oose::rng::Rng::new(1);
    let x = oose::faer::Mat::from_fn(n, 784, |_, _| rng.uniform());
    let stamps = Arc::new(Mutex::new(Vec::new()));
    let s = stamps.clone();
    let start = Instant::now();
    oose::progress::set_hook(Some(Box::new(move |m: &str| {
        eprintln!("{:8.3} s  {m}", start.elapsed().as_secs_f64());
        if m.contains("epoch") && m.contains("loss") {
            s.lock().unwrap().push(Instant::now());
        }
    })));
    Autoencoder {
        layers: vec![256, 64],
        epochs,
        validation_fraction: 0.0,
        precision,
        ..Default::default()
    }
    .fit(x.as_ref())
    .expect("fit");
    eprintln!("{:8.3} s  fitted", start.elapsed().as_secs_f64());
    oose::progress::set_hook(None);
    let t = stamps.lock().unwrap();
    let mut gaps: Vec<f64> = t.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    gaps.sort_by(f64::total_cmp);
    println!(
        "oose, {}, N = {n}: {:.3} s per epoch (median of {} intervals)",
        precision.name(),
        gaps[gaps.len() / 2],
        gaps.len()
    );
}
