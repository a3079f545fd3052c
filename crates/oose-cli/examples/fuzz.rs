//! The long fuzz run (see `oose_cli::fuzz`):
//!
//! ```text
//! cargo run --release -p oose-cli --example fuzz -- [model|npy|csv|all] [CASES] [SEED]
//! ```
//!
//! Runs CASES cases (default 100000) per target and prints, per target, the cases, the
//! inputs accepted and refused, the failures (panics, silent non-finite answers), the
//! slowest case; at the end the peak resident memory. A case that runs over 60 s is a
//! hang: the run stops with status 3. Any failure: status 1.

use oose_cli::fuzz::{run, Target};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("all", String::as_str);
    let cases: usize = args.get(1).map_or(100_000, |s| s.parse().expect("CASES"));
    let seed: u64 = args.get(2).map_or(1, |s| s.parse().expect("SEED"));
    let targets: Vec<Target> = if which == "all" {
        Target::ALL.to_vec()
    } else {
        vec![Target::from_name(which).expect("target: model, npy, csv or all")]
    };
    let progress = Arc::new(AtomicUsize::new(0));
    let watched = progress.clone();
    std::thread::spawn(move || {
        let (mut last, mut since) = (usize::MAX, Instant::now());
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let now = watched.load(Ordering::Relaxed);
            if now != last {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > Duration::from_secs(60) {
                eprintln!("fuzz: case {now} has run for over 60 s: a hang");
                std::process::exit(3);
            }
        }
    });
    let mut failed = false;
    for t in targets {
        let start = Instant::now();
        let r = run(t, cases, seed, &progress);
        println!(
            "{}: {} cases in {:.1} s: {} accepted, {} refused, {} failures; slowest case {:.3} s",
            t.name(),
            r.cases,
            start.elapsed().as_secs_f64(),
            r.accepted,
            r.refused,
            r.failures.len(),
            r.slowest
        );
        for f in r.failures.iter().take(20) {
            println!("  {f}");
        }
        failed |= !r.failures.is_empty();
    }
    if let Some(kib) = peak_rss_kib() {
        println!("peak RSS: {:.1} MiB", kib as f64 / 1024.0);
    }
    std::process::exit(i32::from(failed));
}
