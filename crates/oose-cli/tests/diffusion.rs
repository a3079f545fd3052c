//! Diffusion maps, Laplacian eigenmaps and spectral clustering through the command line
//! (split from cli.rs).

mod common;

use common::{dir, fails, oose, p, read_csv, write_csv};

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
            "fit", "dmaps", "--input", &data, "--output", &thr, "--knn", "0",
        ]),
        2,
        "--knn:",
    );
    // At least N: lowered to N − 1 with a warning.
    let r = oose(&[
        "fit", "dmaps", "--input", &data, "--output", &thr, "--knn", "400",
    ]);
    assert!(r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("lowered to N − 1 = 399"));
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
