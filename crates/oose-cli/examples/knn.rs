//! The kNN graph of a data set, exact and approximate: time and recall.
//!
//! `cargo run --release -p oose-cli --example knn -- DATA.npy K`
//! prints the time of the exact graph (kd-tree or brute force), of the approximate one
//! (NN-descent), and the approximate graph's recall against the exact one. The
//! environment variables TREES, MC (most candidates), LEAF and ROUNDS override
//! NN-descent's defaults.

use oose_cli::io::MatrixReader;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, k, ..] = &args[..] else {
        eprintln!("usage: knn DATA.npy K");
        std::process::exit(2);
    };
    let x = MatrixReader::open(data)
        .and_then(|r| r.read_all())
        .unwrap_or_else(|e| {
            eprintln!("{e:?}");
            std::process::exit(1)
        });
    let k: usize = k.parse().expect("K: a number");
    let t = Instant::now();
    let exact = oose::neighbors::knn(x.as_ref(), x.as_ref(), k, true);
    let t_exact = t.elapsed().as_secs_f64();
    println!(
        "{} points, {} dimensions, k = {k}: exact {t_exact:.2} s",
        x.nrows(),
        x.ncols()
    );
    let t = Instant::now();
    let approx = oose::neighbors::knn_descent(x.as_ref(), k, &tuned(k));
    let t_approx = t.elapsed().as_secs_f64();
    println!(
        "NN-descent {t_approx:.2} s ({:.2} of the exact time), recall {:.4}",
        t_approx / t_exact,
        oose::neighbors::recall(&approx.0, &exact.0)
    );
}

fn tuned(k: usize) -> oose::neighbors::Descent {
    let mut s = oose::neighbors::Descent::for_k(k);
    let get = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let Some(v) = get("TREES") {
        s.trees = v;
    }
    if let Some(v) = get("MC") {
        s.max_candidates = v;
    }
    if let Some(v) = get("LEAF") {
        s.leaf = v;
    }
    if let Some(v) = get("ROUNDS") {
        s.max_rounds = v;
    }
    s
}
