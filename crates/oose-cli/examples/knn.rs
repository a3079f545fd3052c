//! The kNN graph of a data set, exact and approximate: time and recall.
//!
//! `cargo run --release -p oose-cli --example knn -- DATA.npy K`
//! prints the time of the exact graph (kd-tree or brute force), of the approximate one
//! (NN-descent), and the approximate graph's recall against the exact one; with a
//! third argument QUERIES.npy, the time and recall of the QK (fourth argument, default
//! 10) nearest training points of each query by exact search and by the graph walk
//! (`GraphIndex` over the first 15 exact neighbours, as t-SNE's transform keeps them;
//! the median of five searches). The
//! environment variables TREES, MC (most candidates), LEAF and ROUNDS override
//! NN-descent's defaults.

use oose_cli::io::MatrixReader;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, k, ..] = &args[..] else {
        eprintln!("usage: knn DATA.npy K [QUERIES.npy [QK]]");
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
    if let Some(path) = args.get(2) {
        let q = MatrixReader::open(path)
            .and_then(|r| r.read_all())
            .unwrap_or_else(|e| {
                eprintln!("{e:?}");
                std::process::exit(1)
            });
        let qk: usize = args.get(3).map_or(10, |v| v.parse().expect("QK: a number"));
        let t = Instant::now();
        let truth = oose::neighbors::knn(q.as_ref(), x.as_ref(), qk, false);
        let t_exact = t.elapsed().as_secs_f64();
        let lists: Vec<Vec<usize>> = exact
            .0
            .iter()
            .map(|r| r[..15.min(r.len())].to_vec())
            .collect();
        let t = Instant::now();
        let index = oose::neighbors::GraphIndex::new(x.as_ref(), &lists, 0);
        let t_build = t.elapsed().as_secs_f64();
        let mut times = Vec::new();
        let mut walk = None;
        for _ in 0..5 {
            let t = Instant::now();
            walk = Some(index.search(q.as_ref(), qk));
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let t_walk = times[2];
        println!(
            "{} queries, k = {qk}: exact {t_exact:.3} s, graph walk {t_walk:.3} s (median of 5; \
             {:.2} µs a query; index built in {t_build:.3} s), recall {:.4}",
            q.nrows(),
            t_walk / q.nrows() as f64 * 1e6,
            oose::neighbors::recall(&walk.expect("five searches").0, &truth.0)
        );
    }
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
