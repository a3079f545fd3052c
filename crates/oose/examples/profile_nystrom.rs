//! Times the stages of a Nyström kernel PCA fit (maths §21) in memory:
//! `cargo run --release --example profile_nystrom -- [N] [R] [D]` (Swiss roll, noise 0.05,
//! defaults N = 10⁶, R = 500, D = 10): the sample and the plan (landmarks, ε, L⁻¹), the
//! sums pass, the r×r eigenproblem with the novelty score, the embedding pass, and
//! `NystromKpca::fit` whole.
use oose::methods::kernel_pca::NystromKpca;
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let n = args.first().copied().unwrap_or(1_000_000);
    let r = args.get(1).copied().unwrap_or(500);
    let d = args.get(2).copied().unwrap_or(10);
    let x = oose::datasets::swiss_roll(n, 0.05, false, 1).points;
    let est = NystromKpca {
        n_components: d,
        n_landmarks: r,
        ..Default::default()
    };
    let (rows, sample, plan) = stage("plan", || {
        let rows = est.sample_rows(n);
        let sample = oose::faer::Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)]);
        let plan = est.plan(sample.as_ref(), &rows, n).expect("plan");
        (rows, sample, plan)
    });
    println!("  rank {} from {} sample rows", plan.rank(), rows.len());
    let sums = stage("sums", || plan.sums(x.as_ref()).expect("sums"));
    let fitted = stage("finish", || {
        plan.finish_with_sample(&sums, sample.as_ref())
            .expect("finish")
    });
    let y = stage("embed", || fitted.embed(x.as_ref()).expect("embed"));
    println!("  {} rows embedded", y.nrows());
    let whole = stage("fit (whole)", || est.fit(x.as_ref()).expect("fit"));
    std::hint::black_box(whole);
}

/// Runs `f`, prints its wall time under `name`, returns its value.
fn stage<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!("{name:<12}{:.3} s", t.elapsed().as_secs_f64());
    out
}
