//! Exact MVU's solve on one generated data set (maths §15): status, iterations,
//! residuals, objective and dual objective, edge violation, top-two share of tr K.
//!
//! `cargo run --release --example probe_mvu -- roll|scurve N K [NOISE SEED]` (TRACE=1: every
//! iteration on stderr).
use oose::methods::mvu::MaximumVarianceUnfolding;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("roll");
    let n: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(60);
    let k: usize = args.get(3).and_then(|v| v.parse().ok()).unwrap_or(6);
    let noise: f64 = args.get(4).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    let seed: u64 = args.get(5).and_then(|v| v.parse().ok()).unwrap_or(0);
    let x = match which {
        "scurve" => oose::datasets::s_curve(n, noise, seed).points,
        _ => oose::datasets::swiss_roll(n, noise, false, seed).points,
    };
    if std::env::var("TRACE").is_ok() {
        oose::progress::set_hook(Some(Box::new(|m: &str| eprintln!("{m}"))));
    }
    let t = Instant::now();
    let r = MaximumVarianceUnfolding {
        n_neighbors: k,
        ..Default::default()
    }
    .fit(x.as_ref());
    let el = t.elapsed().as_secs_f64();
    match r {
        Ok(m) => {
            let (status, it, p, d, gap) = m.solver_report();
            let s = m.kernel_spectrum();
            println!(
                "{which} N={n} k={k}: {el:.2} s {status:?} it={it} p={p:.1e} d={d:.1e} gap={gap:.1e} obj={:.10e} viol={:.1e} top2={:.4}",
                m.objective(),
                m.max_violation(),
                (s[0] + s[1]) / m.objective()
            );
            use oose::model::method::Fitted;
            let mut info = Vec::new();
            m.info(&mut info);
            for (k, v) in info {
                if k == "dual_objective" || k == "objective_gap" || k == "objective" {
                    println!("  {k} {v}");
                }
            }
        }
        Err(e) => println!("{which} N={n} k={k}: {el:.2} s error {e}"),
    }
}
