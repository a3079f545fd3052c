//! The command-line contract: files in and out, exit statuses (2 usage, 1 data), one
//! line on stderr naming the culprit, no panics.

mod common;

use common::{dir, fails, oose, p};

fn write_csv(path: &str, rows: &[Vec<f64>]) {
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

fn roll(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let d = oose::datasets::swiss_roll(n, 0.05, false, seed);
    (0..n)
        .map(|i| (0..3).map(|j| d.points[(i, j)]).collect())
        .collect()
}

fn read_csv(s: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = s.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

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
            && info.contains("format_version: 2")
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
    while (10 + h.len() + 1) % 64 != 0 {
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
        "only 3 eigenvalues",
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
            "fit", "isomap", "--input", &train, "--knn", "40", "--output", &out,
        ]),
        2,
        "--knn:",
    );
}

#[test]
fn demo_runs_and_writes_a_png() {
    let d = dir("demo");
    let out = oose(&["demo", "--output-dir", &d.to_string_lossy(), "--n", "400"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("relative extension error") && s.contains("epsilon ="),
        "{s}"
    );
    let png = std::fs::read(d.join("demo.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}

#[test]
fn mds_seed_001_example_2_through_the_cli() {
    let d = dir("mds-ex2");
    let d2 = p(&d, "d2.csv");
    write_csv(
        &d2,
        &[
            vec![0.0, 100.0, 45.0, 45.0],
            vec![100.0, 0.0, 45.0, 45.0],
            vec![45.0, 45.0, 0.0, 64.0],
            vec![45.0, 45.0, 64.0, 0.0],
        ],
    );
    let model = p(&d, "m.oose");
    let out = oose(&[
        "fit",
        "mds",
        "--squared-dissimilarities",
        &d2,
        "--output",
        &model,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8_lossy(&oose(&["info", &model]).stdout).to_string();
    assert!(
        info.contains("eigenvalues: 50.0") && info.contains("negative_eigenvalues: none"),
        "{info}"
    );
    let a2 = p(&d, "a2.csv");
    write_csv(&a2, &[vec![386.0, 386.0, 457.0, 457.0]]);
    let out = oose(&[
        "extend",
        &model,
        "--input",
        &a2,
        "--strategy",
        "restricted",
        "--diagnostics",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (header, rows) = read_csv(&String::from_utf8_lossy(&out.stdout));
    let col = |name: &str| rows[0][header.iter().position(|h| h == name).unwrap()];
    assert!(col("c1").abs() < 1e-10);
    assert!((col("c2").abs() - 19.1833).abs() < 5e-5);
    assert!((col("lambda") + 32.0).abs() < 1e-9);
    assert_eq!(col("unique"), 0.0);
    assert!((col("beta_minus_projection") - 400.0).abs() < 1e-9);
    let out = oose(&["extend", &model, "--input", &a2]);
    let (_, rows) = read_csv(&String::from_utf8_lossy(&out.stdout));
    assert!(rows[0][0].abs() < 1e-10 && rows[0][1].abs() < 1e-10);
    // Bad proximity input: negative entry, wrong row length.
    write_csv(&a2, &[vec![386.0, -1.0, 457.0, 457.0]]);
    fails(
        &oose(&["extend", &model, "--input", &a2]),
        1,
        "negative dissimilarity",
    );
    write_csv(&a2, &[vec![386.0, 457.0, 457.0]]);
    fails(&oose(&["extend", &model, "--input", &a2]), 1, "expects 4");
    let bad = p(&d, "bad.csv");
    write_csv(
        &bad,
        &[
            vec![0.0, 1.0, 2.0],
            vec![1.0, 0.0, 3.0],
            vec![2.5, 3.0, 0.0],
        ],
    );
    fails(
        &oose(&[
            "fit",
            "mds",
            "--squared-dissimilarities",
            &bad,
            "--output",
            &model,
        ]),
        1,
        "not symmetric",
    );
}

#[test]
fn isomap_and_landmark_mds_fit_extend_and_report() {
    let d = dir("isomap");
    let train = p(&d, "train.csv");
    write_csv(&train, &roll(300, 1));
    let model = p(&d, "iso.oose");
    let out = oose(&[
        "fit", "isomap", "--input", &train, "--knn", "8", "--output", &model,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let emb = read_csv(&String::from_utf8_lossy(
        &oose(&["embedding", &model]).stdout,
    ))
    .1;
    let ext = oose(&[
        "extend",
        &model,
        "--input",
        &train,
        "--strategy",
        "restricted",
        "--diagnostics",
    ]);
    assert!(
        ext.status.success(),
        "{}",
        String::from_utf8_lossy(&ext.stderr)
    );
    let (header, rows) = read_csv(&String::from_utf8_lossy(&ext.stdout));
    assert!(header.contains(&"lambda".to_string()));
    let proj = read_csv(&String::from_utf8_lossy(
        &oose(&["extend", &model, "--input", &train]).stdout,
    ))
    .1;
    for (a, b) in proj.iter().zip(&emb) {
        assert!((a[0] - b[0]).abs() < 1e-8 && (a[1] - b[1]).abs() < 1e-8);
    }
    assert_eq!(rows.len(), 300);
    let info = String::from_utf8_lossy(&oose(&["info", &model]).stdout).to_string();
    assert!(
        info.contains("method: isomap") && info.contains("n_neighbors: 8"),
        "{info}"
    );
    // Too few neighbours: the error names the component sizes.
    fails(
        &oose(&[
            "fit", "isomap", "--input", &train, "--knn", "1", "--output", &model,
        ]),
        1,
        "disconnected",
    );
    let lm = p(&d, "lm.oose");
    let out = oose(&[
        "fit",
        "landmark-mds",
        "--input",
        &train,
        "--landmarks",
        "50",
        "--output",
        &lm,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8_lossy(&oose(&["info", &lm]).stdout).to_string();
    assert!(
        info.contains("n_landmarks: 50") && info.contains("landmarks: maxmin"),
        "{info}"
    );
    let few = p(&d, "few.csv");
    write_csv(&few, &roll(6, 9));
    let iso = p(&d, "iso2.oose");
    let out = oose(&[
        "fit", "isomap", "--input", &train, "--knn", "8", "--output", &iso,
    ]);
    assert!(out.status.success());
    for m in [&lm, &iso] {
        let joint = oose(&["extend", m, "--input", &few, "--joint", "--diagnostics"]);
        assert!(
            joint.status.success(),
            "{}",
            String::from_utf8_lossy(&joint.stderr)
        );
        let (header, rows) = read_csv(&String::from_utf8_lossy(&joint.stdout));
        let col = |name: &str| rows[0][header.iter().position(|h| h == name).unwrap()];
        assert_eq!(rows.len(), 6);
        assert!(col("joint_objective") <= col("objective_one_by_one"));
        assert!(col("joint_objective") <= col("objective_projection"));
    }
    fails(
        &oose(&["extend", &lm, "--input", &few, "--mutual", &few]),
        2,
        "mutual",
    );
}

#[test]
fn demo_mds_shows_projection_against_restricted_reconstruction() {
    let d = dir("demo-mds");
    let out = oose(&[
        "demo",
        "--method",
        "mds",
        "--output-dir",
        &d.to_string_lossy(),
        "--n",
        "300",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("restricted reconstruction y*") && s.contains("arc from projection"),
        "{s}"
    );
    assert!(
        s.contains("restricted (0.0000, 19.1833), lambda* = -32.0000"),
        "{s}"
    );
}

#[test]
fn mds_seed_001_example_1_through_the_cli() {
    // PCA of (−1, 0), (1, 0) in the inner-product form, d = 1, new object (0, 9).
    let d = dir("mds-ex1");
    let x = p(&d, "x.csv");
    write_csv(&x, &[vec![-1.0, 0.0], vec![1.0, 0.0]]);
    let model = p(&d, "m.oose");
    let out = oose(&[
        "fit",
        "mds",
        "--input",
        &x,
        "--components",
        "1",
        "--output",
        &model,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let z = p(&d, "z.csv");
    write_csv(&z, &[vec![0.0, 9.0]]);
    let out = oose(&[
        "extend",
        &model,
        "--input",
        &z,
        "--strategy",
        "restricted",
        "--diagnostics",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (header, rows) = read_csv(&String::from_utf8_lossy(&out.stdout));
    let col = |name: &str| rows[0][header.iter().position(|h| h == name).unwrap()];
    assert!((col("c1").abs() - 8.8882).abs() < 5e-5, "{}", col("c1"));
    assert!((col("beta_minus_projection") - 81.0).abs() < 1e-9);
    assert_eq!(col("unique"), 0.0);
    let out = oose(&["extend", &model, "--input", &z]);
    let (_, rows) = read_csv(&String::from_utf8_lossy(&out.stdout));
    assert!(rows[0][0].abs() < 1e-12);
}

#[test]
fn diffusion_models_fit_extend_and_report() {
    let d = dir("dmaps");
    let data = p(&d, "s.csv");
    let out = oose(&[
        "dataset", "s-curve", "--n", "400", "--seed", "3", "--output", &data,
    ]);
    assert!(out.status.success());
    let (_, rows) = read_csv(&std::fs::read_to_string(&data).unwrap());
    let model = p(&d, "dm.oose");
    let out = oose(&[
        "fit",
        "dmaps",
        "--input",
        &data,
        "--output",
        &model,
        "--knn",
        "15",
        "--epsilon",
        "log-slope",
        "--alpha",
        "0.5",
        "--output-kind",
        "standard",
        "--components",
        "3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8_lossy(&oose(&["info", &model]).stdout).to_string();
    for key in [
        "method: dmaps",
        "alpha: 0.5",
        "epsilon_rule: log-slope",
        "dimension_estimate:",
        "n_neighbors: 15",
        "output: standard",
    ] {
        assert!(info.contains(key), "{key} missing in {info}");
    }
    // Extending the training points reproduces the embedding; diagnostics columns.
    let emb = p(&d, "emb.csv");
    assert!(oose(&["embedding", &model, "--output", &emb])
        .status
        .success());
    let (_, e) = read_csv(&std::fs::read_to_string(&emb).unwrap());
    let ext = p(&d, "ext.csv");
    let out = oose(&[
        "extend",
        &model,
        "--input",
        &data,
        "--output",
        &ext,
        "--diagnostics",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (h, x) = read_csv(&std::fs::read_to_string(&ext).unwrap());
    assert_eq!(
        h,
        vec![
            "c1",
            "c2",
            "c3",
            "residual",
            "reconstruction_error",
            "relative_degree",
            "relative_density",
            "novelty",
            "novelty_pvalue",
            "is_novel"
        ]
    );
    assert_eq!(x.len(), rows.len());
    for (a, b) in x.iter().zip(&e) {
        for j in 0..3 {
            assert!((a[j] - b[j]).abs() < 1e-9, "{a:?} vs {b:?}");
        }
    }
    // Union density through the CLI: the whole input is one batch; differs from training.
    let ext_u = p(&d, "ext_u.csv");
    let out = oose(&[
        "extend",
        &model,
        "--input",
        &data,
        "--output",
        &ext_u,
        "--density",
        "union",
    ]);
    assert!(out.status.success());
    let (_, u) = read_csv(&std::fs::read_to_string(&ext_u).unwrap());
    assert!(u.iter().zip(&e).any(|(a, b)| (a[0] - b[0]).abs() > 1e-6));

    // Threshold kernel and an isolated new point: exit 1 naming the row, or NaN + flag.
    let thr = p(&d, "thr.oose");
    let out = oose(&[
        "fit",
        "dmaps",
        "--input",
        &data,
        "--output",
        &thr,
        "--sparsity",
        "threshold",
        "--threshold",
        "1e-3",
        "--epsilon",
        "0.5",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let newp = p(&d, "new.csv");
    write_csv(&newp, &[rows[0].clone(), vec![40.0, 40.0, 40.0]]);
    fails(&oose(&["extend", &thr, "--input", &newp]), 1, "row 1");
    let out = oose(&[
        "extend",
        &thr,
        "--input",
        &newp,
        "--on-isolated",
        "nan",
        "--diagnostics",
    ]);
    assert!(out.status.success());
    let (h, v) = read_csv(&String::from_utf8_lossy(&out.stdout));
    let flag = h.iter().position(|c| c == "isolated").unwrap();
    assert_eq!((v[0][flag], v[1][flag]), (0.0, 1.0));
    assert!(v[1][0].is_nan() && v[0][0].is_finite());

    // Eigenmaps and spectral clustering.
    let em = p(&d, "em.oose");
    assert!(oose(&[
        "fit",
        "eigenmaps",
        "--input",
        &data,
        "--output",
        &em,
        "--knn",
        "12"
    ])
    .status
    .success());
    let info = String::from_utf8_lossy(&oose(&["info", &em]).stdout).to_string();
    assert!(info.contains("laplacian_eigenvalues:") && info.contains("alpha: 0.0"));
    // The isolated-point policy of eigenmaps is the model's: refused at extend, not ignored.
    fails(
        &oose(&["extend", &em, "--input", &newp, "--on-isolated", "nan"]),
        2,
        "take it at fit",
    );
    let blobs = p(&d, "c.csv");
    assert!(oose(&[
        "dataset",
        "three-d-clusters",
        "--n",
        "300",
        "--output",
        &blobs
    ])
    .status
    .success());
    let sc = p(&d, "sc.oose");
    let out = oose(&[
        "fit",
        "spectral-clustering",
        "--input",
        &blobs,
        "--output",
        &sc,
        "--clusters",
        "3",
        "--epsilon",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = oose(&["extend", &sc, "--input", &blobs, "--diagnostics"]);
    let (h, v) = read_csv(&String::from_utf8_lossy(&out.stdout));
    let c = h.iter().position(|c| c == "cluster").unwrap();
    let mut labels: Vec<i64> = v.iter().map(|r| r[c] as i64).collect();
    labels.sort();
    labels.dedup();
    assert_eq!(labels, vec![0, 1, 2]);

    // Usage errors: threshold without η, k ≥ N, ε ≤ 0, density on another model.
    fails(
        &oose(&[
            "fit",
            "dmaps",
            "--input",
            &data,
            "--output",
            &thr,
            "--sparsity",
            "threshold",
        ]),
        2,
        "--threshold",
    );
    fails(
        &oose(&[
            "fit", "dmaps", "--input", &data, "--output", &thr, "--knn", "400",
        ]),
        2,
        "--knn:",
    );
    fails(
        &oose(&[
            "fit",
            "dmaps",
            "--input",
            &data,
            "--output",
            &thr,
            "--epsilon",
            "-1",
        ]),
        2,
        "epsilon",
    );
    fails(
        &oose(&["extend", &em, "--input", &data, "--density", "union"]),
        2,
        "--density",
    );
}

#[test]
fn compare_prints_the_library_numbers() {
    let d = dir("compare");
    let data = p(&d, "roll.csv");
    write_csv(&data, &roll(300, 4));
    let out = oose(&[
        "compare",
        "kpca",
        "--input",
        &data,
        "--holdout",
        "0.1",
        "--split-seed",
        "2",
        "--epsilon",
        "50",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let get = |k: &str| -> String {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("{k} missing in {text}"))
            .to_string()
    };
    // The same computation through the library, on the same rows (the CSV round-trips
    // doubles exactly).
    use oose::kernel::{Epsilon, Kernel};
    use oose::methods::kernel_pca::KernelPca;
    let rows = roll(300, 4);
    let x = oose::faer::Mat::from_fn(300, 3, |i, j| rows[i][j]);
    let c = oose::diagnostics::retrain::compare_holdout(x.as_ref(), 0.1, 2, |t| {
        KernelPca {
            kernel: Kernel::Gaussian {
                epsilon: Epsilon::Value(50.0),
            },
            ..Default::default()
        }
        .fit(t)
    })
    .unwrap();
    assert_eq!(get("n_train"), "270");
    assert_eq!(get("n_new"), "30");
    assert_eq!(
        get("relative_extension_error"),
        format!("{:?}", c.comparison.relative_extension_error)
    );
    assert_eq!(
        get("training_drift"),
        format!("{:?}", c.comparison.training_drift)
    );
    // Usage errors: a bad fraction, proximity input.
    fails(
        &oose(&["compare", "kpca", "--input", &data, "--holdout", "1.5"]),
        2,
        "holdout",
    );
    fails(
        &oose(&["compare", "mds", "--dissimilarities", &data]),
        2,
        "compare splits points",
    );
}

#[test]
fn theory_prints_the_batch_discrepancy() {
    let d = dir("theory");
    let train = p(&d, "train.csv");
    let new = p(&d, "new.csv");
    write_csv(&train, &roll(150, 1));
    write_csv(&new, &roll(20, 2));
    let model = p(&d, "k.oose");
    assert!(oose(&[
        "fit",
        "kpca",
        "--input",
        &train,
        "--output",
        &model,
        "--epsilon",
        "20"
    ])
    .status
    .success());
    let out = oose(&["theory", &model, "--input", &new]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let get = |k: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("{k} missing in {text}"))
            .parse()
            .unwrap()
    };
    let (dd, id, b) = (get("discrepancy"), get("identity"), get("bound"));
    assert!((dd - id).abs() <= 1e-8 * id, "{dd} vs {id}");
    assert!(dd <= b);
    assert!(get("interlacing_worst_violation") <= 1e-9 * 150.0);
    assert!(text.contains("exact: false"));
    // The training points themselves: exact.
    let out = oose(&["theory", &model, "--input", &train]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("exact: true"));
    // Not for other models.
    let iso = p(&d, "i.oose");
    assert!(
        oose(&["fit", "isomap", "--input", &train, "--output", &iso])
            .status
            .success()
    );
    fails(&oose(&["theory", &iso, "--input", &new]), 2, "kpca");
}

#[test]
fn interpolate_and_preimage_through_the_cli() {
    let d = dir("preimage");
    let train = p(&d, "train.csv");
    let new = p(&d, "new.csv");
    write_csv(&train, &roll(400, 5));
    write_csv(&new, &roll(10, 6));
    let iso = p(&d, "iso.oose");
    assert!(
        oose(&["fit", "isomap", "--input", &train, "--output", &iso])
            .status
            .success()
    );
    let pre = p(&d, "pre.oose");
    let out = oose(&[
        "fit",
        "interpolate",
        "--from-model",
        &iso,
        "--values",
        &train,
        "--kernel",
        "thin_plate",
        "--output",
        &pre,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8_lossy(&oose(&["info", &pre]).stdout).to_string();
    assert!(
        info.contains("kernel: thin_plate") && info.contains("tail_degree: 1"),
        "{info}"
    );
    // Training embedding → training points, exactly.
    let emb = p(&d, "emb.csv");
    assert!(oose(&["embedding", &iso, "--output", &emb])
        .status
        .success());
    let out = oose(&["extend", &pre, "--input", &emb]);
    let (h, back) = read_csv(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(h, vec!["c1", "c2", "c3"]);
    for (a, b) in back.iter().zip(roll(400, 5)) {
        for j in 0..3 {
            assert!((a[j] - b[j]).abs() < 1e-6, "{a:?} vs {b:?}");
        }
    }
    // --values must have one row per embedded point.
    fails(
        &oose(&[
            "fit",
            "interpolate",
            "--from-model",
            &iso,
            "--values",
            &new,
            "--output",
            &pre,
        ]),
        1,
        "values",
    );
}
