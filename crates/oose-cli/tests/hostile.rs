//! Hostile input to the command-line tool (one test per finding of the hostile-input
//! probe): lying `.npy` headers, endless lines, write failures, streams that pause.
//! Every failure is exit 1 or 2 with one stderr line naming the culprit, never a panic.

use std::io::{BufRead, BufReader, Write};
mod common;

use common::{dir, fails, oose, p as path};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A `.npy` file whose header says `shape` (and `fortran`) followed by `data`.
fn npy(file: &str, shape: &str, fortran: bool, data: &[u8]) {
    let mut h = format!(
        "{{'descr': '<f8', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while h.len() < 117 {
        h.push(' ');
    }
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b.extend_from_slice(data);
    std::fs::write(file, b).unwrap();
}

/// A kernel PCA model on 120 Swiss-roll points, and the training file.
fn model(d: &std::path::Path) -> (String, String) {
    let (train, m) = (path(d, "train.csv"), path(d, "k.oose"));
    let ok = oose(&["dataset", "swiss-roll", "--n", "120", "--output", &train]);
    assert!(ok.status.success());
    let ok = oose(&["fit", "kpca", "--input", &train, "--output", &m]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    (train, m)
}

#[test]
fn npy_headers_that_promise_more_than_the_file_holds_are_refused() {
    let d = dir("npy");
    let (_, m) = model(&d);
    let f = path(&d, "x.npy");
    let cases: [(&str, bool, &str); 5] = [
        ("(2, 1000000000000)", false, "coordinates per row"),
        (
            "(1000000000000, 2)",
            true,
            "needs 16000000000000 bytes, the file has 64",
        ),
        ("(1000000000000, 3)", false, "needs 24000000000000 bytes"),
        ("(4294967296, 4294967296)", false, "coordinates per row"),
        ("(1, 2305843009213693952)", false, "coordinates per row"),
    ];
    for (shape, fortran, needle) in cases {
        npy(&f, shape, fortran, &[0u8; 64]);
        fails(&oose(&["extend", &m, "--input", &f]), 1, needle);
        let out = path(&d, "m2.oose");
        fails(
            &oose(&["fit", "pca", "--input", &f, "--output", &out]),
            1,
            needle,
        );
    }
    // (9223372036854775807, 3) × 8 bytes overflows u64.
    npy(&f, "(9223372036854775807, 3)", false, &[0u8; 64]);
    fails(&oose(&["extend", &m, "--input", &f]), 1, "overflows");
    // Exactly what the header promises, then more: trailing bytes are refused.
    let row: Vec<u8> = [1.0f64, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut data = row.clone();
    data.extend_from_slice(b"junk");
    npy(&f, "(1, 3)", false, &data);
    fails(
        &oose(&["extend", &m, "--input", &f]),
        1,
        "4 bytes after the .npy data",
    );
    npy(&f, "(1, 3)", false, &row);
    assert!(oose(&["extend", &m, "--input", &f]).status.success());
    npy(&f, "(5, 0)", false, &[]);
    fails(
        &oose(&["extend", &m, "--input", &f]),
        1,
        "rows without coordinates",
    );
}

#[test]
fn a_line_without_end_is_refused_at_the_cap_and_a_bom_is_read() {
    let d = dir("csv");
    let (_, m) = model(&d);
    // 65 MiB of zero bytes without a line break.
    let mut child = Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(["extend", &m])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![0u8; 1 << 20];
        for _ in 0..65 {
            if stdin.write_all(&block).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    fails(&out, 1, "<stdin>: line 1: longer than 64 MiB");
    let f = path(&d, "bom.csv");
    std::fs::write(&f, "\u{feff}1,2,3\n4,5,6\n").unwrap();
    let out = oose(&["extend", &m, "--input", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    std::fs::write(&f, b"1,2,3\n\xff\xfe,1,1\n").unwrap();
    fails(
        &oose(&["extend", &m, "--input", &f]),
        1,
        "line 2: not UTF-8 text",
    );
}

#[test]
fn write_failures_are_named_and_a_closed_pipe_ends_quietly() {
    let d = dir("write");
    let (train, m) = model(&d);
    if std::path::Path::new("/dev/full").exists() {
        for args in [
            vec!["info", m.as_str()],
            vec!["extend", m.as_str(), "--input", train.as_str()],
            vec!["embedding", m.as_str()],
            vec!["dataset", "helix", "--n", "10"],
            vec!["compare", "pca", "--input", train.as_str()],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_oose"))
                .args(&args)
                .stdout(std::fs::File::create("/dev/full").unwrap())
                .output()
                .unwrap();
            fails(&out, 1, "<stdout>: cannot write: No space left on device");
        }
        let out = oose(&["extend", &m, "--input", &train, "--output", "/dev/full"]);
        fails(&out, 1, "/dev/full: cannot write");
    }
    // The reader takes one line and goes away: no message, success.
    let mut child = Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(["dataset", "swiss-roll", "--n", "200000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim(), "c1,c2,c3");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_stream_sees_each_row_before_its_input_ends() {
    let d = dir("stream");
    let (_, m) = model(&d);
    let mut child = Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(["extend", &m])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for l in lines.by_ref() {
            if tx.send(l.unwrap()).is_err() {
                break;
            }
        }
    });
    for round in 0..3 {
        // One row, and the producer pauses with the pipe open.
        writeln!(stdin, "{}.5,1,2", round).unwrap();
        stdin.flush().unwrap();
        if round == 0 {
            let header = rx.recv_timeout(Duration::from_secs(60)).unwrap();
            assert!(header.starts_with("c1,"));
        }
        let row = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the row comes out while the input is still open");
        assert_eq!(row.split(',').count(), 2, "{row}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_negative_kernel_diagonal_is_refused() {
    let d = dir("diag");
    let x = path(&d, "x.csv");
    let ok = oose(&["dataset", "helix", "--n", "40", "--output", &x]);
    assert!(ok.status.success());
    // A linear kernel matrix of the points, fitted as a precomputed kernel.
    let text = std::fs::read_to_string(&x).unwrap();
    let pts: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
    let gram: String = pts
        .iter()
        .map(|a| {
            pts.iter()
                .map(|b| format!("{:?}", dot(a, b)))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let (k, m, diag) = (path(&d, "k.csv"), path(&d, "k.oose"), path(&d, "diag.csv"));
    std::fs::write(&k, &gram).unwrap();
    let ok = oose(&[
        "fit",
        "kpca",
        "--kernel",
        "precomputed",
        "--similarities",
        &k,
        "--output",
        &m,
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let rows: String = gram.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&x, rows).unwrap();
    std::fs::write(&diag, "1.0\n-3.0\n").unwrap();
    let out = oose(&["extend", &m, "--input", &x, "--kernel-diagonal", &diag]);
    fails(&out, 1, "negative");
}

#[test]
fn pca_of_wide_data_takes_the_n_by_n_route_and_too_large_a_request_is_named() {
    let d = dir("wide");
    let f = path(&d, "wide.csv");
    // 3 points in 20000 dimensions: the D×D Gram matrix would be 3.2 GB.
    let rows: String = (0..3)
        .map(|i| {
            (0..20000)
                .map(|j| format!("{}", ((i * 7 + j * 13) % 101) as f64 / 10.0))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    std::fs::write(&f, rows).unwrap();
    let m = path(&d, "w.oose");
    let out = Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(["fit", "pca", "--input", &f, "--output", &m])
        .env("OOSE_MEMORY_LIMIT", "100000000")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8(oose(&["info", &m]).stdout).unwrap();
    assert!(info.contains("residual_rank: 3"), "{info}");
    // A kernel matrix that does not fit in the memory allowed: refused before it is
    // allocated, with the size it needs.
    let (train, _) = model(&d);
    let out = Command::new(env!("CARGO_BIN_EXE_oose"))
        .args(["fit", "kpca", "--input", &train, "--output", &m])
        .env("OOSE_MEMORY_LIMIT", "100000")
        .output()
        .unwrap();
    fails(
        &out,
        1,
        "kernel matrix (N×N) needs 337.5 KiB of memory, more than the 97.7 KiB",
    );
}

#[test]
fn the_smaller_findings_are_named_by_their_flags() {
    let d = dir("small");
    let (train, _) = model(&d);
    let out = path(&d, "x.oose");
    fails(
        &oose(&["dataset", "helix", "--n", "0"]),
        2,
        "--n: must be at least 1",
    );
    fails(
        &oose(&["dataset", "swiss-roll", "--n", "10", "--noise", "-1"]),
        2,
        "--noise: must be finite and >= 0, got -1",
    );
    let clusters = |c: &str| {
        let args = [
            "fit",
            "spectral-clustering",
            "--input",
            &train,
            "--output",
            &out,
        ];
        oose(&[&args[..], &["--clusters", c]].concat())
    };
    fails(
        &clusters("150"),
        2,
        "--clusters: must be between 1 and N = 120, got 150",
    );
    // 119 clusters of these 120 points need more eigenvalues above the tolerance than
    // the kernel has: told in clusters, never as "requested N components".
    let r = clusters("119");
    fails(&r, 2, "--clusters:");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("clusters need 119 eigenvalues") && !err.contains("components"),
        "{err}"
    );
    // The advice holds: at most K clusters fit, K + 1 do not.
    let k: usize = err
        .split("ask for at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no advice in {err}"));
    assert!(
        clusters(&k.to_string()).status.success(),
        "{k} clusters: {err}"
    );
    assert!(
        !clusters(&(k + 1).to_string()).status.success(),
        "{} clusters",
        k + 1
    );
    fails(
        &oose(&["compare", "pca", "--input", &train, "--holdout", "1.5"]),
        2,
        "--holdout: must be a fraction strictly between 0 and 1",
    );
    // A number in a message is written in its shortest round-trip form.
    let big = path(&d, "big.csv");
    std::fs::write(&big, "1,2,3\n4,5e160,6\n7,8,9\n1,1,1\n").unwrap();
    fails(
        &oose(&["fit", "pca", "--input", &big, "--output", &out]),
        1,
        "at row 1, column 1 (0-based; value 5e160)",
    );
    // NaN is no value for any real parameter, read by this kernel or not.
    fails(
        &oose(&[
            "fit", "kpca", "--input", &train, "--output", &out, "--coef0", "nan",
        ]),
        2,
        "--coef0: expected a number, got NaN",
    );
    fails(
        &oose(&[
            "fit", "kpca", "--input", &train, "--output", &out, "--coef0", "1e400",
        ]),
        2,
        "--coef0: must be finite, got inf",
    );
    // An option another method takes is refused, like one no method takes.
    fails(
        &oose(&[
            "fit", "kpca", "--input", &train, "--output", &out, "--knn", "5",
        ]),
        2,
        "'--knn'",
    );
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--input",
            &train,
            "--output",
            &out,
            "--threshold",
            "0.5",
        ]),
        2,
        "'--threshold'",
    );
}
