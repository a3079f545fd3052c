//! The command line method by method: the MDS family against seed 001's examples, Isomap
//! and landmark MDS, `compare`, `theory`, interpolation and pre-images
//! (split from cli.rs, whose helpers they share through `common`).

mod common;

use common::{dir, fails, oose, p, read_csv, roll, succeeds, write_csv};

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
    // Too few neighbours: the components are joined (scikit-learn's rule), with one
    // warning line naming their sizes.
    let out = oose(&[
        "fit", "isomap", "--input", &train, "--knn", "1", "--output", &model,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.starts_with("oose: warning: the 1-nearest-neighbour graph has ")
            && err.contains("connected components (sizes [")
            && err.trim_end().lines().count() == 1,
        "{err}"
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
        info.contains("n_landmarks: 50") && info.contains("landmarks: max-min"),
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

/// `oose demo --method <method> --n <n>` in a fresh directory (returned, with the
/// demo.png it holds), which must succeed; its standard output.
fn demo(method: &str, n: usize) -> (common::Scratch, String) {
    let d = dir(&format!("demo-{method}-{n}"));
    let out = succeeds(&[
        "demo",
        "--method",
        method,
        "--output-dir",
        &d.to_string_lossy(),
        "--n",
        &n.to_string(),
    ]);
    (d, String::from_utf8(out.stdout).unwrap())
}

#[test]
fn demo_mds_shows_projection_against_restricted_reconstruction() {
    let (_d, s) = demo("mds", 300);
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
fn demo_takes_every_method_fitted_on_points() {
    // The registry's methods, not a list of the demo's own: the neighbour embeddings
    // (exact on training points), LLE and MVU (not exact there; MVU with the demo's
    // landmarks) and the autoencoder.
    for (method, about, exact) in [
        ("tsne", "t-SNE", true),
        ("umap", "UMAP", true),
        ("lle", "Locally linear embedding", false),
        ("autoencoder", "Autoencoder", true),
        ("mvu", "Maximum variance unfolding", false),
    ] {
        let (d, s) = demo(method, 300);
        assert!(s.contains(&format!("method: {about}")), "{s}");
        assert!(s.contains("relative extension error"), "{s}");
        assert!(
            s.contains("points between the turns of the roll flagged"),
            "{s}"
        );
        assert_eq!(
            s.contains("training points extended: max relative deviation 0.0e0"),
            exact,
            "{s}"
        );
        assert!(std::fs::read(d.join("demo.png"))
            .unwrap()
            .starts_with(b"\x89PNG"));
    }
    // 18 training points: no p-value reaches α = 0.01, and the demo says so.
    let (_d, s) = demo("pca", 20);
    assert!(
        s.contains("none can be flagged at alpha = 0.01 with 18 training points"),
        "{s}"
    );
    // interpolate needs values, not only points: not offered.
    let out = oose(&["demo", "--method", "interpolate"]);
    assert_eq!(out.status.code(), Some(2));
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

#[test]
fn metric_through_the_cli_is_stored_and_scale_free() {
    let d = dir("metric");
    let train = p(&d, "train.csv");
    let pts = roll(200, 4);
    write_csv(&train, &pts);
    let model = p(&d, "m.oose");
    let out = oose(&[
        "fit",
        "umap",
        "--input",
        &train,
        "--metric",
        "cosine",
        "--n-epochs",
        "30",
        "--output",
        &model,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = String::from_utf8_lossy(&oose(&["info", &model]).stdout).to_string();
    assert!(info.contains("metric: cosine"), "{info}");
    // Rows times 4 extend to the same text as the rows.
    let (a, b) = (p(&d, "a.csv"), p(&d, "b.csv"));
    write_csv(&a, &pts[..5]);
    let scaled: Vec<Vec<f64>> = pts[..5]
        .iter()
        .map(|r| r.iter().map(|v| 4.0 * v).collect())
        .collect();
    write_csv(&b, &scaled);
    let ea = oose(&["extend", &model, "--input", &a]);
    let eb = oose(&["extend", &model, "--input", &b]);
    assert!(ea.status.success() && ea.stdout == eb.stdout);
    // Methods without a metric have no flag; a bad name lists the choices.
    fails(
        &oose(&["fit", "kpca", "--input", &train, "--metric", "cosine"]),
        2,
        "--metric",
    );
    fails(
        &oose(&["fit", "isomap", "--input", &train, "--metric", "l1"]),
        2,
        "invalid value 'l1' for '--metric",
    );
}

#[test]
fn autoencoder_and_vae_through_the_cli() {
    let d = dir("autoencoder");
    let x = p(&d, "x.csv");
    write_csv(&x, &roll(200, 0));
    let model = p(&d, "ae.oose");
    succeeds(&[
        "fit",
        "autoencoder",
        "--input",
        &x,
        "--layers",
        "16,8",
        "--activation",
        "tanh",
        "--epochs",
        "12",
        "--batch-size",
        "32",
        "--learning-rate",
        "3e-3",
        "--output",
        &model,
    ]);
    let info = String::from_utf8_lossy(&oose(&["info", &model]).stdout).to_string();
    assert!(
        info.contains("method: autoencoder") && info.contains("novelty_search: exact"),
        "{info}"
    );
    let curve = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("loss_curve: "))
        .unwrap_or_else(|| panic!("{info}"));
    let losses: Vec<f64> = curve
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    assert!(!losses.is_empty() && losses.len() <= 12, "{losses:?}");
    // The encoder is the extension: the training rows come back as the embedding.
    let emb = succeeds(&["embedding", &model]);
    let ext = succeeds(&["extend", &model, "--input", &x]);
    assert_eq!(
        read_csv(&String::from_utf8_lossy(&emb.stdout)).1,
        read_csv(&String::from_utf8_lossy(&ext.stdout)).1
    );
    // The VAE's diagnostics (trained in float32); a width of 0, a precision that is
    // not one, and a flag of another method are refused.
    let vae = p(&d, "vae.oose");
    succeeds(&[
        "fit",
        "vae",
        "--input",
        &x,
        "--layers",
        "8",
        "--epochs",
        "5",
        "--beta",
        "0.5",
        "--precision",
        "float32",
        "--output",
        &vae,
    ]);
    let out = succeeds(&["extend", &vae, "--input", &x, "--diagnostics"]);
    let (header, _) = read_csv(&String::from_utf8_lossy(&out.stdout));
    for col in [
        "posterior_variance",
        "negative_elbo",
        "reconstruction_error",
        "novelty",
    ] {
        assert!(header.iter().any(|h| h == col), "{header:?}");
    }
    fails(
        &oose(&[
            "fit",
            "autoencoder",
            "--input",
            &x,
            "--layers",
            "8,0",
            "--output",
            &model,
        ]),
        2,
        "layers",
    );
    fails(
        &oose(&[
            "fit",
            "vae",
            "--input",
            &x,
            "--precision",
            "float16",
            "--output",
            &model,
        ]),
        2,
        "--precision",
    );
    fails(
        &oose(&[
            "fit",
            "autoencoder",
            "--input",
            &x,
            "--beta",
            "1",
            "--output",
            &model,
        ]),
        2,
        "beta",
    );
}

#[test]
fn kpca_extends_through_its_pivots_with_a_bound() {
    let d = dir("lowrank");
    write_csv(&p(&d, "x.csv"), &roll(400, 0));
    write_csv(&p(&d, "z.csv"), &roll(30, 1));
    let m = p(&d, "m.oose");
    succeeds(&["fit", "kpca", "--input", &p(&d, "x.csv"), "--output", &m]);
    let z = p(&d, "z.csv");
    let run = |extra: &[&str]| {
        let mut args = vec!["extend", &m, "--input", &z, "--diagnostics"];
        args.extend_from_slice(extra);
        read_csv(&String::from_utf8_lossy(&succeeds(&args).stdout))
    };
    let (h, exact) = run(&[]);
    assert!(!h.iter().any(|c| c == "lowrank_bound"));
    let (h, fast) = run(&["--extension", "low-rank"]);
    let col = h.iter().position(|c| c == "lowrank_bound").unwrap();
    for (e, f) in exact.iter().zip(&fast) {
        let dev = ((e[0] - f[0]).powi(2) + (e[1] - f[1]).powi(2)).sqrt();
        assert!(dev <= f[col] && f[col] < 1e-8, "{dev} vs bound {}", f[col]);
    }
    // auto with a tolerance below every bound: the exact coordinates, bound 0.
    let (h, auto) = run(&["--extension", "auto", "--lowrank-tolerance", "1e-30"]);
    let col = h.iter().position(|c| c == "lowrank_bound").unwrap();
    for (e, a) in exact.iter().zip(&auto) {
        assert_eq!((e[0], e[1], a[col]), (a[0], a[1], 0.0));
    }
    let refused = |extra: &[&str], needle: &str| {
        let mut args = vec!["extend", &m, "--input", &z];
        args.extend_from_slice(extra);
        fails(&oose(&args), 2, needle);
    };
    refused(&["--lowrank-tolerance", "1e-8"], "--lowrank-tolerance");
    refused(
        &["--extension", "low-rank", "--strategy", "restricted"],
        "--extension",
    );
    refused(&["--extension", "low-rank", "--joint"], "--extension");
    let iso = p(&d, "iso.oose");
    succeeds(&[
        "fit",
        "isomap",
        "--input",
        &p(&d, "x.csv"),
        "--output",
        &iso,
    ]);
    fails(
        &oose(&["extend", &iso, "--input", &z, "--extension", "low-rank"]),
        2,
        "kernel PCA",
    );
}

#[test]
fn kpca_with_landmarks_is_a_streamed_nystrom_fit() {
    let d = dir("nystrom");
    let x = p(&d, "x.npy");
    succeeds(&[
        "dataset",
        "swiss-roll",
        "--n",
        "3000",
        "--seed",
        "1",
        "--output",
        &x,
    ]);
    let (model, y) = (p(&d, "m.oose"), p(&d, "y.csv"));
    succeeds(&[
        "fit",
        "kpca",
        "--landmarks",
        "60",
        "--landmark-choice",
        "max-min",
        "--landmark-sample",
        "1000",
        "--components",
        "3",
        "--input",
        &x,
        "--output",
        &model,
        "--embedding",
        &y,
    ]);
    let info = String::from_utf8_lossy(&succeeds(&["info", &model]).stdout).to_string();
    for line in [
        "method: kpca-nystrom",
        "n_train: 3000",
        "n_landmarks: 60",
        "landmarks: max-min",
        "landmark_sample: 1000",
        "embedding_kept: false",
    ] {
        assert!(info.contains(line), "{line}\n{info}");
    }
    // The streamed embedding is the extension of the training rows.
    let (_, streamed) = read_csv(&std::fs::read_to_string(&y).unwrap());
    let out = succeeds(&["extend", &model, "--input", &x]);
    let (_, again) = read_csv(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(streamed.len(), 3000);
    let worst = streamed
        .iter()
        .zip(&again)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(u, v)| (u - v).abs()))
        .fold(0.0f64, f64::max);
    assert!(worst < 1e-12, "{worst:e}");
    // An exact-fit flag with landmarks, and a low-rank extension of a Nyström model,
    // are refused by name.
    let out = oose(&[
        "fit",
        "kpca",
        "--landmarks",
        "20",
        "--solver",
        "dense",
        "--input",
        &x,
        "--output",
        &model,
    ]);
    fails(&out, 2, "solver");
    let out = oose(&["extend", &model, "--input", &x, "--extension", "low-rank"]);
    fails(&out, 2, "landmarks already");
}
