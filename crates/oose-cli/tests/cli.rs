//! The command-line contract: files in and out, exit statuses (2 usage, 1 data), one
//! line on stderr naming the culprit, no panics.

mod common;

use common::{dir, fails, oose, p, read_csv, roll, write_csv};

#[test]
fn fit_embedding_extend_info_round_trip() {
    let d = dir("round");
    let (train, model, emb, ext) = (
        p(&d, "train.csv"),
        p(&d, "m.oose"),
        p(&d, "emb.csv"),
        p(&d, "ext.csv"),
    );
    write_csv(&train, &roll(150, 1));
    let out = oose(&[
        "fit",
        "kpca",
        "--input",
        &train,
        "--output",
        &model,
        "--components",
        "3",
        "--epsilon",
        "40",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(oose(&["embedding", &model, "--output", &emb])
        .status
        .success());
    let out = oose(&[
        "extend",
        &model,
        "--input",
        &train,
        "--output",
        &ext,
        "--diagnostics",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h1, e) = read_csv(&std::fs::read_to_string(&emb).unwrap());
    let (h2, x) = read_csv(&std::fs::read_to_string(&ext).unwrap());
    assert_eq!(h1, ["c1", "c2", "c3"]);
    assert_eq!(
        h2,
        [
            "c1",
            "c2",
            "c3",
            "residual",
            "reconstruction_error",
            "novelty",
            "novelty_pvalue",
            "is_novel"
        ]
    );
    assert_eq!(e.len(), 150);
    for i in 0..150 {
        for j in 0..3 {
            assert!((e[i][j] - x[i][j]).abs() < 1e-10);
        }
        assert!(x[i][3] <= 1e-10 && x[i][3] >= 0.0);
        // A training point is its own nearest neighbour: never novel at 0.01 with
        // 150 calibration scores (its p-value is at least 2/151).
        assert!(x[i][5] >= 0.0 && x[i][6] >= 2.0 / 151.0 && x[i][7] == 0.0);
    }
    let info = String::from_utf8(oose(&["info", &model]).stdout).unwrap();
    assert!(
        info.contains("method: kpca")
            && info.contains("epsilon: 40.0")
            && info.contains(&format!("format_version: {}", oose::model::FORMAT_VERSION))
            && info.contains("novelty_calibration: 150"),
        "{info}"
    );
    // stdin → stdout, and .npy output.
    let npy = p(&d, "ext.npy");
    assert!(
        oose(&["extend", &model, "--input", &train, "--output", &npy])
            .status
            .success()
    );
    let bytes = std::fs::read(&npy).unwrap();
    assert!(
        bytes.starts_with(b"\x93NUMPY")
            && String::from_utf8_lossy(&bytes[..128]).contains("(150, 3)")
    );
    assert_eq!(bytes.len(), 128 + 150 * 3 * 8);
}

#[test]
fn auto_epsilon_is_reported() {
    let d = dir("auto");
    let (train, model) = (p(&d, "t.csv"), p(&d, "m.oose"));
    write_csv(&train, &roll(80, 2));
    assert!(
        oose(&["fit", "kpca", "--input", &train, "--output", &model])
            .status
            .success()
    );
    let info = String::from_utf8(oose(&["info", &model]).stdout).unwrap();
    let eps: f64 = info
        .lines()
        .find_map(|l| l.strip_prefix("epsilon: "))
        .unwrap()
        .parse()
        .unwrap();
    let x = oose::faer::Mat::from_fn(80, 3, |i, j| roll(80, 2)[i][j]);
    assert_eq!(eps, oose::kernel::bandwidth::median_sq_distance(x.as_ref()));
}

#[test]
fn bad_data_exit_1_with_culprit() {
    let d = dir("bad");
    let model = p(&d, "m.oose");
    let good = p(&d, "good.csv");
    write_csv(&good, &roll(60, 3));
    assert!(oose(&["fit", "pca", "--input", &good, "--output", &model])
        .status
        .success());

    let nan = p(&d, "nan.csv");
    std::fs::write(&nan, "1,2,3\n4,NaN,6\n7,8,9\n").unwrap();
    fails(
        &oose(&["fit", "kpca", "--input", &nan, "--output", &p(&d, "x")]),
        1,
        "line 2, column 2",
    );
    let inf = p(&d, "inf.csv");
    std::fs::write(&inf, "1,2,3\n4,5,inf\n").unwrap();
    fails(
        &oose(&["extend", &model, "--input", &inf]),
        1,
        "line 2, column 3",
    );
    let ragged = p(&d, "ragged.csv");
    std::fs::write(&ragged, "1,2,3\n4,5\n").unwrap();
    fails(
        &oose(&["fit", "kpca", "--input", &ragged, "--output", &p(&d, "x")]),
        1,
        "ragged",
    );
    let wide = p(&d, "wide.csv");
    std::fs::write(&wide, "1,2,3,4\n").unwrap();
    fails(
        &oose(&["extend", &model, "--input", &wide]),
        1,
        "4 columns, but the model expects 3",
    );
    let empty = p(&d, "empty.csv");
    std::fs::write(&empty, "").unwrap();
    fails(
        &oose(&["fit", "kpca", "--input", &empty, "--output", &p(&d, "x")]),
        1,
        "empty",
    );
    fails(&oose(&["extend", &model, "--input", &empty]), 1, "empty");
    let word = p(&d, "word.csv");
    std::fs::write(&word, "1,2,3\n4,five,6\n").unwrap();
    fails(
        &oose(&["fit", "kpca", "--input", &word, "--output", &p(&d, "x")]),
        1,
        "line 2, column 2",
    );
    // NaN in a .npy file.
    let npy = p(&d, "nan.npy");
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
    let mut h = h.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    for v in [1.0, 2.0, 3.0, 4.0, f64::NAN, 6.0f64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(&npy, &b).unwrap();
    fails(
        &oose(&["fit", "kpca", "--input", &npy, "--output", &p(&d, "x")]),
        1,
        "row 2, column 2",
    );
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--input",
            &p(&d, "missing.csv"),
            "--output",
            &p(&d, "x"),
        ]),
        1,
        "missing.csv",
    );
}

#[test]
fn bad_models_exit_1() {
    let d = dir("models");
    let (train, model) = (p(&d, "t.csv"), p(&d, "m.oose"));
    write_csv(&train, &roll(60, 4));
    assert!(
        oose(&["fit", "kpca", "--input", &train, "--output", &model])
            .status
            .success()
    );
    let bytes = std::fs::read(&model).unwrap();
    let trunc = p(&d, "trunc.oose");
    std::fs::write(&trunc, &bytes[..bytes.len() / 2]).unwrap();
    fails(&oose(&["info", &trunc]), 1, "truncated");
    let flip = p(&d, "flip.oose");
    let mut f = bytes.clone();
    let at = f.len() - 40;
    f[at] ^= 0x10;
    std::fs::write(&flip, &f).unwrap();
    fails(&oose(&["extend", &flip, "--input", &train]), 1, "checksum");
    fails(&oose(&["embedding", &train]), 1, "not an oose model");
}

#[test]
fn bad_parameters_exit_2() {
    let d = dir("params");
    let train = p(&d, "t.csv");
    write_csv(&train, &roll(40, 5));
    let out = p(&d, "m.oose");
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--input",
            &train,
            "--output",
            &out,
            "--epsilon",
            "0",
        ]),
        2,
        "--epsilon",
    );
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--input",
            &train,
            "--output",
            &out,
            "--epsilon",
            "-3",
        ]),
        2,
        "--epsilon",
    );
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--input",
            &train,
            "--output",
            &out,
            "--components",
            "41",
        ]),
        2,
        "--components:",
    );
    fails(
        &oose(&[
            "fit",
            "pca",
            "--input",
            &train,
            "--output",
            &out,
            "--components",
            "4",
        ]),
        2,
        "--components:",
    );
    // More components than positive eigenvalues is a property of the data: status 1.
    fails(
        &oose(&[
            "fit",
            "kpca",
            "--kernel",
            "linear",
            "--input",
            &train,
            "--output",
            &out,
            "--components",
            "5",
        ]),
        1,
        "only 3 eigenvalue(s)",
    );
    fails(
        &oose(&["fit", "nonsense", "--input", &train, "--output", &out]),
        2,
        "nonsense",
    );
    fails(&oose(&["frobnicate"]), 2, "frobnicate");
    fails(
        &oose(&["fit", "interpolate", "--input", &train, "--output", &out]),
        2,
        "--values",
    );
    fails(
        &oose(&[
            "fit", "isomap", "--input", &train, "--knn", "0", "--output", &out,
        ]),
        2,
        "--knn:",
    );
    // A negative number reaches the option's own check (clap took "-0.1" and "-1e-8"
    // for flags: "unexpected argument '-0'").
    fails(
        &oose(&["compare", "kpca", "--input", &train, "--holdout", "-0.1"]),
        2,
        "--holdout: must be a fraction strictly between 0 and 1, got -0.1",
    );
    fails(
        &oose(&["dataset", "helix", "--noise", "-1e-3"]),
        2,
        "--noise: must be finite and >= 0, got -0.001",
    );
    fails(
        &oose(&["dataset", "helix", "--n", "-5"]),
        2,
        "invalid value '-5' for '--n <N>'",
    );
    // A --knn of at least N is lowered to N − 1 with a warning, not refused.
    let r = oose(&[
        "fit", "isomap", "--input", &train, "--knn", "40", "--output", &out,
    ]);
    assert!(r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("oose: warning: n_neighbors = 40 is not below the number of points (40): lowered to N − 1 = 39"),
        "{err}"
    );
    // 40 training points: no novelty p-value is below 1/41, so --diagnostics at the
    // default α = 0.01 warns that is_novel cannot be set; α = 0.05 can be reached.
    let ext = |extra: &[&str]| {
        let mut args = vec!["extend", out.as_str(), "--input", train.as_str()];
        args.extend_from_slice(extra);
        let r = oose(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        String::from_utf8_lossy(&r.stderr).into_owned()
    };
    let err = ext(&["--diagnostics"]);
    assert!(
        err.contains("oose: warning: is_novel cannot be set at alpha = 0.01: with 40 training points the smallest novelty p-value is 1/41 = 0.0244"),
        "{err}"
    );
    assert!(!ext(&["--diagnostics", "--alpha", "0.05"]).contains("warning"));
    assert!(!ext(&[]).contains("warning"));
}

#[test]
fn demo_runs_and_writes_a_png() {
    let d = dir("demo");
    let out = oose(&["demo", "--output-dir", &d.to_string_lossy()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("relative extension error") && s.contains("Isomap"),
        "{s}"
    );
    // The 20 points between the turns of the roll are all flagged as novel.
    assert!(
        s.contains("20 of 20 points between the turns of the roll flagged"),
        "{s}"
    );
    let png = std::fs::read(d.join("demo.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}

#[test]
fn plot_draws_png_and_svg_coloured_by_a_named_diagnostic() {
    let d = dir("plot");
    let (train, new, model) = (p(&d, "train.npy"), p(&d, "new.npy"), p(&d, "m.oose"));
    for (n, seed, path) in [("600", "0", &train), ("50", "3", &new)] {
        let out = oose(&[
            "dataset", "s-curve", "--n", n, "--seed", seed, "--output", path,
        ]);
        assert!(out.status.success());
    }
    let out = oose(&["fit", "isomap", "--input", &train, "--output", &model]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = p(&d, "fig.png");
    let out = oose(&["plot", &model, "--input", &new, "--output", &png]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
    let svg = p(&d, "fig.svg");
    let out = oose(&[
        "plot", &model, "--input", &new, "--color", "novelty", "--log10", "--output", &svg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("log10 novelty") && text.contains("<circle"));
    // An unknown column is a usage error that lists the model's columns.
    fails(
        &oose(&[
            "plot", &model, "--input", &new, "--color", "nope", "--output", &png,
        ]),
        2,
        "has residual, reconstruction_error",
    );
    // The extension picks the format: JPEG and BMP are written, one with no format is
    // refused before any work (the backend failed at the end, leaving an empty file).
    for (ext, magic) in [("jpg", &b"\xff\xd8"[..]), ("bmp", &b"BM"[..])] {
        let f = p(&d, &format!("fig.{ext}"));
        let out = oose(&["plot", &model, "--input", &new, "--output", &f]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(std::fs::read(&f).unwrap().starts_with(magic), "{ext}");
    }
    let gif = p(&d, "fig.gif");
    fails(
        &oose(&["plot", &model, "--input", &new, "--output", &gif]),
        2,
        "--output: ",
    );
    assert!(!std::path::Path::new(&gif).exists());
}

/// The README's command-line session runs as written, line by line in one directory,
/// and writes what it says: the training embedding and the new points' coordinates with
/// their diagnostics.
#[test]
fn readme_command_line_session_runs_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let after = &readme[readme
        .find("\n## Command line")
        .expect("a Command line section")..];
    let block = &after[after.find("```bash\n").expect("a bash block") + 8..];
    let block = &block[..block.find("```").expect("the block's end")];
    let d = dir("readme");
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split(" #").next().unwrap().trim();
        if command.is_empty() {
            continue;
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words[0], "oose", "{line}");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_oose"))
            .args(&words[1..])
            .current_dir(&*d)
            .output()
            .expect("run oose");
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert_eq!(ran, 6);
    let lines = |f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    assert_eq!(lines("emb.csv").lines().count(), 2001);
    let new = lines("new-emb.csv");
    assert_eq!(new.lines().count(), 201);
    assert!(new.starts_with("c1,c2,residual,reconstruction_error,novelty,novelty_pvalue,is_novel"));
}
