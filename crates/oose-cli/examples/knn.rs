//! The kNN graph of a data set, exact and approximate: time and recall.
//!
//! `cargo run --release -p oose-cli --example knn -- DATA.npy K`
//! prints the time of the exact graph (kd-tree or brute force), of the approximate one
//! (NN-descent), and the approximate graph's recall against the exact one; with a
//! third argument QUERIES.npy, the time and recall of the QK (fourth argument, default
//! 10) nearest training points of each query by exact search, by the graph walk
//! (`GraphIndex` over the first 15 exact neighbours, as models before format 9 keep
//! them) and by the inverted lists t-SNE's and UMAP's transform now keep
//! (`TrainingSearch`; the median of five searches each). The
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
        let (t_walk, walk) = median_of_five(|| index.search(q.as_ref(), qk));
        println!(
            "{} queries, k = {qk}: exact {t_exact:.3} s, graph walk {t_walk:.3} s (median of 5; \
             {:.2} µs a query; index built in {t_build:.3} s), recall {:.4}",
            q.nrows(),
            t_walk / q.nrows() as f64 * 1e6,
            oose::neighbors::recall(&walk.0, &truth.0)
        );
        let t = Instant::now();
        let search = oose::neighbors::TrainingSearch::new(
            oose::neighbors::GraphMethod::Approximate,
            x.as_ref(),
        );
        let t_fit = t.elapsed().as_secs_f64();
        let (times, found) = median_of_five(|| search.search(x.as_ref(), q.as_ref(), qk, 0));
        println!(
            "inverted lists ({}; made in {t_fit:.2} s, index at the first search): {:.3} s \
             (median of 5; {:.2} µs a query), recall {:.4}",
            search.lists().unwrap_or_default(),
            times,
            times / q.nrows() as f64 * 1e6,
            oose::neighbors::recall(&found.0, &truth.0)
        );
    }
}

/// The median time of five runs of `f` (and its last result).
fn median_of_five<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times[2], last.expect("five runs"))
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
