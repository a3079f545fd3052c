//! The Barnes–Hut (θ = 0.5) and FFT repulsive forces of t-SNE against the exact ones
//! along the exact descent (defaults otherwise): relative error every 50 iterations, and
//! the median and largest over all iterations.
//!
//! `cargo run --release -p oose-cli --example tsne_gradients -- DATA.npy`

use oose::methods::tsne::Tsne;
use oose_cli::io::MatrixReader;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tsne_gradients DATA.npy");
        std::process::exit(2);
    };
    let x = MatrixReader::open(&path)
        .and_then(|r| r.read_all())
        .unwrap_or_else(|e| {
            eprintln!("{e:?}");
            std::process::exit(1)
        });
    let errors = Tsne::default()
        .gradient_errors(x.as_ref())
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    println!("iteration  barnes-hut  fft");
    for (it, bh, fft) in errors.iter().filter(|e| e.0 % 50 == 0) {
        println!("{it:9}  {bh:10.2e}  {fft:.2e}");
    }
    let summary = |pick: fn(&(usize, f64, f64)) -> f64| {
        let mut v: Vec<f64> = errors.iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() - 1])
    };
    let (bh_med, bh_max) = summary(|e| e.1);
    let (fft_med, fft_max) = summary(|e| e.2);
    println!(
        "{} points, {} iterations: relative error of the repulsive forces, median / largest: \
         barnes-hut {bh_med:.2e} / {bh_max:.2e}, fft {fft_med:.2e} / {fft_max:.2e}",
        x.nrows(),
        errors.len()
    );
}
