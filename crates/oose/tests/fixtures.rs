//! Compatibility: every model file in `tests/fixtures/` was written by the code of the
//! day the format was fixed (`examples/write_fixtures.rs`, run once, before the registry
//! refactor). Each must still decode, encode to the same bytes, and extend its committed
//! input to the committed output, bit for bit. The format is append-only: a change that
//! breaks this is a new format version with a reader for the old one.

use oose::extend::{Extension, Strategy};
use oose::faer::Mat;
use oose::methods::OutOfSample;
use oose::model::{ExtendOptions, Model};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn bits(word: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(word, 16).expect("hex bits"))
}

/// The input rows and the optional kernel diagonal.
fn read_input(path: &Path) -> (Mat<f64>, Option<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let shape: Vec<usize> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|s| s.parse().unwrap())
        .collect();
    let rows: Vec<Vec<f64>> = (0..shape[0])
        .map(|_| lines.next().unwrap().split(' ').map(bits).collect())
        .collect();
    let diag = lines
        .next()
        .and_then(|l| l.strip_prefix("diagonal "))
        .map(|l| l.split(' ').map(bits).collect());
    (Mat::from_fn(shape[0], shape[1], |i, j| rows[i][j]), diag)
}

/// Sections (`projection`, `restricted`) of named columns.
fn read_expected(path: &Path) -> BTreeMap<String, Vec<(String, Vec<u64>)>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: BTreeMap<String, Vec<(String, Vec<u64>)>> = BTreeMap::new();
    let mut section = String::new();
    for line in text.lines() {
        if let Some(s) = line.strip_prefix('[') {
            section = s.trim_end_matches(']').to_string();
            continue;
        }
        let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
        let v = rest
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(|w| u64::from_str_radix(w, 16).unwrap())
            .collect();
        out.entry(section.clone())
            .or_default()
            .push((name.to_string(), v));
    }
    out
}

fn columns(e: &Extension) -> Vec<(String, Vec<u64>)> {
    let mut v = vec![];
    for j in 0..e.coordinates.ncols() {
        let c = (0..e.coordinates.nrows())
            .map(|i| e.coordinates[(i, j)].to_bits())
            .collect();
        v.push((format!("c{}", j + 1), c));
    }
    let b = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
    v.push(("residual".into(), b(&e.residual)));
    v.push(("reconstruction_error".into(), b(&e.reconstruction_error)));
    for c in &e.extra {
        v.push((c.name.to_string(), b(&c.values)));
    }
    v
}

#[test]
fn every_fixture_decodes_reencodes_and_extends_bitwise() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "oose").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    assert!(names.len() >= 27, "fixtures missing: {names:?}");
    let mut methods = std::collections::BTreeSet::new();
    for name in &names {
        let stem = dir().join(name);
        let bytes = std::fs::read(stem.with_extension("oose")).unwrap();
        let model = Model::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        methods.insert(model.method());
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if version == oose::model::FORMAT_VERSION {
            assert!(
                model.to_bytes() == bytes,
                "{name}: re-encoding changed the bytes"
            );
        } else {
            // An older file is written in the current format: the same model.
            let again = Model::from_bytes(&model.to_bytes()).unwrap();
            assert!(again == model, "{name}: re-encoding changed the model");
        }
        let (input, diag) = read_input(&stem.with_extension("input"));
        let expected = read_expected(&stem.with_extension("expected"));
        for (section, want) in &expected {
            let strategy = match section.as_str() {
                "projection" => Strategy::Projection,
                "restricted" => Strategy::Restricted,
                s => panic!("{name}: unknown section {s}"),
            };
            let opts = ExtendOptions {
                strategy: Some(strategy),
                kernel_diagonal: diag.as_deref(),
                ..Default::default()
            };
            let got = model
                .extend_options(input.as_ref(), &opts)
                .unwrap_or_else(|e| panic!("{name} [{section}]: {e}"));
            // Files written before the novelty columns existed (format 1) expect the
            // others, unchanged.
            let novelty = ["novelty", "novelty_pvalue", "is_novel"];
            let got: Vec<_> = columns(&got)
                .into_iter()
                .filter(|c| !novelty.contains(&c.0.as_str()) || want.iter().any(|w| w.0 == c.0))
                .collect();
            assert_eq!(
                got.iter().map(|c| &c.0).collect::<Vec<_>>(),
                want.iter().map(|c| &c.0).collect::<Vec<_>>(),
                "{name} [{section}]: columns"
            );
            for ((col, g), (_, w)) in got.iter().zip(want) {
                assert!(g == w, "{name} [{section}] column {col}: not bitwise equal");
            }
        }
    }
    // One fixture (at least) per registered method.
    for m in oose::model::METHODS {
        assert!(methods.contains(m.name), "no fixture for {}", m.name);
    }
}

#[test]
fn annotations_are_kept_from_format_3_and_empty_before() {
    let read = |name: &str| {
        let bytes = std::fs::read(dir().join(name).with_extension("oose")).unwrap();
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        (version, Model::from_bytes(&bytes).unwrap())
    };
    let (v, m) = read("annotated-kpca-v3");
    assert_eq!(v, 3);
    let want = [("strategy", "'restricted'"), ("n_jobs", "2")];
    let got: Vec<(&str, &str)> = m
        .annotations()
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(got, want);
    let (v, m) = read("umap");
    assert_eq!(v, 2);
    assert!(m.annotations().is_empty());
    // Annotations change no number: the same fit, written in format 2 without them
    // (by older code), extends the same points to the same coordinates.
    let (_, plain) = read("kpca-gaussian-centred");
    let (_, annotated) = read("annotated-kpca-v3");
    let (input, _) = read_input(&dir().join("annotated-kpca-v3.input"));
    let e1 = annotated.extend(input.as_ref()).unwrap();
    let e2 = plain.extend(input.as_ref()).unwrap();
    let diff = (0..e1.coordinates.nrows())
        .flat_map(|i| (0..e1.coordinates.ncols()).map(move |j| (i, j)))
        .map(|(i, j)| (e1.coordinates[(i, j)] - e2.coordinates[(i, j)]).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-12, "{diff}");
}

#[test]
fn a_field_added_in_format_5_takes_its_default_in_older_files() {
    let read = |name: &str| {
        let bytes = std::fs::read(dir().join(name).with_extension("oose")).unwrap();
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        let model = Model::from_bytes(&bytes).unwrap();
        let precision = model
            .params()
            .into_iter()
            .find(|(k, _)| *k == "precision")
            .map(|(_, v)| v.to_string());
        (version, precision, model)
    };
    // Written before the autoencoders had a precision: read as trained, in float64; the
    // fields after it (the weights, …) still in place, so it extends bitwise (above).
    let (v, p, old) = read("autoencoder");
    assert_eq!((v, p.as_deref()), (4, Some("float64")));
    let (v, p, _) = read("autoencoder-float32");
    assert_eq!((v, p.as_deref()), (5, Some("float32")));
    // Written again, the old file is a file of the current format, which holds the field.
    let again = old.to_bytes();
    assert_eq!(
        u32::from_le_bytes(again[8..12].try_into().unwrap()),
        oose::model::FORMAT_VERSION
    );
    assert_eq!(Model::from_bytes(&again).unwrap(), old);
}

#[test]
fn format_7_writes_the_training_points_once() {
    // The same fit, written in format 6 (the novelty score's copy of the training
    // points beside the method's) and in format 7 (the method's alone): the same model,
    // 80 × 3 values and a byte of their count fewer.
    let read = |name: &str| std::fs::read(dir().join(name).with_extension("oose")).unwrap();
    let (v6, v7) = (read("kpca-novelty-v6"), read("kpca-novelty-v7"));
    let version = |b: &[u8]| u32::from_le_bytes(b[8..12].try_into().unwrap());
    assert_eq!((version(&v6), version(&v7)), (6, 7));
    assert_eq!(v6.len() - v7.len(), 80 * 3 * 8 + 1);
    let (m6, m7) = (
        Model::from_bytes(&v6).unwrap(),
        Model::from_bytes(&v7).unwrap(),
    );
    assert_eq!(m6, m7);
    assert_eq!(m7.novelty().unwrap().len(), 80);
    assert_eq!(m6.to_bytes(), m7.to_bytes());
}

#[test]
fn format_8_writes_the_residual_factor_s_lower_triangle() {
    // The model of `kpca-novelty-v7` written again in format 8: its residual factor
    // (80 × 80, every training point a pivot) holds 80·81/2 values instead of 80²,
    // the upper triangle's zeros left out; the same model, and what the two older files
    // become when written today.
    let read = |name: &str| std::fs::read(dir().join(name).with_extension("oose")).unwrap();
    let (v6, v7, v8) = (
        read("kpca-novelty-v6"),
        read("kpca-novelty-v7"),
        read("kpca-novelty-v8"),
    );
    let version = |b: &[u8]| u32::from_le_bytes(b[8..12].try_into().unwrap());
    assert_eq!(version(&v8), 8);
    let m8 = Model::from_bytes(&v8).unwrap();
    let info = m8.info();
    let rank = info.iter().find(|(k, _)| k == "residual_rank");
    assert_eq!(rank.map(|(_, v)| v.as_str()), Some("80"));
    // Both lengths are written as two-byte varints (3240 and 6400).
    assert_eq!(v7.len() - v8.len(), (80 * 80 - 80 * 81 / 2) * 8);
    for old in [&v6, &v7] {
        let m = Model::from_bytes(old).unwrap();
        assert_eq!(m, m8);
        // The same payload (format 9 changed nothing in kernel PCA's; the header
        // names today's format).
        assert_eq!(m.to_bytes()[24..], v8[24..]);
    }
}
