//! `oose fit umap`, both extension strategies and `oose inverse` through the binary:
//! the training points come back exactly, rows are independent of the batch, the info
//! reports the graph, and `inverse` is refused by name where a model has none.

mod common;

use common::{dir, fails, oose, p, read_csv};

fn ok(args: &[&str]) -> String {
    let out = oose(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The data rows of a CSV text.
fn rows(csv: &str) -> Vec<Vec<f64>> {
    read_csv(csv).1
}

#[test]
fn fit_extend_both_strategies_and_inverse() {
    let d = dir("umap");
    let (data, train, model) = (p(&d, "all.csv"), p(&d, "train.csv"), p(&d, "u.oose"));
    ok(&[
        "dataset",
        "three-d-clusters",
        "--n",
        "220",
        "--output",
        &data,
    ]);
    let all = std::fs::read_to_string(&data).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    // The header, 200 training rows; the last 20 are new.
    std::fs::write(&train, lines[..201].join("\n") + "\n").unwrap();
    let new = p(&d, "new.csv");
    std::fs::write(
        &new,
        [&lines[..1], &lines[201..]].concat().join("\n") + "\n",
    )
    .unwrap();
    ok(&[
        "fit",
        "umap",
        "--input",
        &train,
        "--output",
        &model,
        "--n-neighbors",
        "10",
        "--n-epochs",
        "100",
    ]);
    let info = ok(&["info", &model]);
    for key in [
        "method: umap",
        "epochs: 100",
        "knn_graph: exact",
        "init_used: spectral",
    ] {
        assert!(info.contains(key), "{key} in {info}");
    }
    // The training points come back where the fit put them.
    let emb = rows(&ok(&["embedding", &model]));
    let again = rows(&ok(&["extend", &model, "--input", &train]));
    for (a, b) in emb.iter().zip(&again) {
        assert!(
            a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-10),
            "{a:?} {b:?}"
        );
    }
    // Each strategy: the batch and the rows one at a time agree.
    for strategy in ["interpolation", "optimize"] {
        let batch = rows(&ok(&[
            "extend",
            &model,
            "--input",
            &new,
            "--strategy",
            strategy,
        ]));
        assert_eq!(batch.len(), 20);
        let one = p(&d, "one.csv");
        std::fs::write(&one, format!("{}\n{}\n", lines[0], lines[210])).unwrap();
        let single = rows(&ok(&[
            "extend",
            &model,
            "--input",
            &one,
            "--strategy",
            strategy,
        ]));
        assert_eq!(single[0], batch[9], "{strategy}");
    }
    // inverse: the training embedding back to the training points, with diagnostics.
    let emb_file = p(&d, "emb.csv");
    ok(&["embedding", &model, "--output", &emb_file]);
    let back = ok(&["inverse", &model, "--input", &emb_file, "--diagnostics"]);
    assert!(
        back.starts_with("x1,x2,x3,residual,reconstruction_error\n"),
        "{back}"
    );
    let back = rows(&back);
    let x = rows(&std::fs::read_to_string(&train).unwrap());
    for (b, t) in back.iter().zip(&x) {
        assert!((0..3).all(|c| (b[c] - t[c]).abs() <= 1e-8), "{b:?} {t:?}");
        assert!(b[3].abs() <= 1e-8);
    }
    // Bad input: wrong width, a model without an inverse.
    fails(
        &oose(&["inverse", &model, "--input", &train]),
        1,
        "embedded points",
    );
    let lmds = p(&d, "l.oose");
    ok(&[
        "fit",
        "landmark-mds",
        "--input",
        &train,
        "--landmarks",
        "20",
        "--output",
        &lmds,
    ]);
    fails(
        &oose(&["inverse", &lmds, "--input", &emb_file]),
        2,
        "landmark-mds keeps none",
    );
    fails(
        &oose(&[
            "fit",
            "umap",
            "--input",
            &train,
            "--output",
            &model,
            "--n-neighbors",
            "1",
        ]),
        2,
        "n-neighbors",
    );
    fails(
        &oose(&[
            "extend",
            &model,
            "--input",
            &new,
            "--strategy",
            "restricted",
        ]),
        2,
        "restricted",
    );
}
