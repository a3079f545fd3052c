//! Helpers shared by the command-line tests: run the binary, a scratch directory, and
//! the failure contract (status, one stderr line naming the culprit, no panic).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `oose` with `args`.
pub fn oose(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(args)
        .output()
        .expect("run oose")
}

/// Runs `oose` with `args` and asserts that it succeeded (its stderr otherwise).
pub fn succeeds(args: &[&str]) -> Output {
    let out = oose(args);
    assert!(
        out.status.success(),
        "oose {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh scratch directory for one test, removed with everything in it when the test
/// ends — kept, with its path on stderr, when the test fails, so that what it wrote can
/// be looked at.
pub fn dir(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("oose-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// The directory of [`dir`]; a `Path` wherever one is expected.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("scratch directory kept: {}", self.0.display());
        } else {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }
}

/// `f` inside `d`, as a string argument.
pub fn p(d: &Path, f: &str) -> String {
    d.join(f).to_string_lossy().to_string()
}

/// Asserts a failure with the given status and a single stderr line containing
/// `needle`, without a panic or a backtrace.
pub fn fails(out: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "more than one line: {err:?}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace") && !err.contains("internal error")
    );
}

/// Writes rows as CSV (shortest round-trip decimals), no header.
pub fn write_csv(path: &str, rows: &[Vec<f64>]) {
    let s: String = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    std::fs::write(path, s).unwrap();
}

/// A Swiss roll with noise 0.05, as rows.
pub fn roll(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let d = oose::datasets::swiss_roll(n, 0.05, false, seed);
    (0..n)
        .map(|i| (0..3).map(|j| d.points[(i, j)]).collect())
        .collect()
}

/// A CSV file's header and rows.
pub fn read_csv(s: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = s.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    (header, rows)
}
