//! The novelty score and its p-value (maths §18) through the registry: every method
//! fitted on points carries it; rows are scored independently of the batch (bitwise);
//! p-values are calibrated on points drawn like the training data; an unseen cluster is
//! found.

use oose::datasets::{s_curve, three_d_clusters};
use oose::diagnostics::novelty::Novelty;
use oose::extend::Extension;
use oose::faer::{Mat, MatRef};
use oose::methods::mds::Proximity;
use oose::methods::OutOfSample;
use oose::model::params::{Value, Values};
use oose::model::{ExtendOptions, Input, InputKinds, Model, METHODS};

fn column<'a>(e: &'a Extension, name: &str) -> &'a [f64] {
    &e.extra
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .values
}

fn fit(name: &str, x: MatRef<'_, f64>) -> Model {
    let m = oose::model::MethodInfo::named(name).unwrap();
    let values = Mat::from_fn(x.nrows(), 1, |i, _| x[(i, 0)].sin());
    let input = match m.input {
        InputKinds::Values => Input::Values {
            points: x,
            values: values.as_ref(),
        },
        _ => Input::Points(x),
    };
    // Landmark MDS keeps every point a landmark here, so that the training points are
    // what the score measures against whatever the method.
    let v = if name == "landmark-mds" {
        Values::new().with("n_landmarks", Value::Int(x.nrows() as _))
    } else {
        Values::new()
    };
    (m.fit)(&v, input).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_method_scores_rows_independently_of_the_batch() {
    let data = s_curve(260, 0.02, 3).points;
    let x = data.as_ref().subrows(0, 200);
    let mut z = data.as_ref().subrows(200, 60).to_owned();
    // Two points far from the curve.
    for j in 0..3 {
        z[(0, j)] += 5.0;
        z[(1, j)] -= 4.0;
    }
    // The score depends on the training points alone: every method gives the one of
    // a score fitted on them directly (the suite's AUROC holds for every method); the
    // methods that hand their own kNN graph to the score (t-SNE, UMAP with its 14
    // others, the autoencoders) included.
    let direct = Novelty::fit(x).unwrap().score(z.as_ref(), None).unwrap();
    for m in METHODS {
        let model = fit(m.name, x);
        let nov = model
            .novelty()
            .unwrap_or_else(|| panic!("{}: no novelty", m.name));
        assert_eq!(nov.calibration().len(), 200, "{}", m.name);
        let batch = model.extend(z.as_ref()).unwrap();
        assert_eq!(nov.search_neighbours(), 14, "{}", m.name);
        for (i, (a, b)) in column(&batch, "novelty")
            .iter()
            .zip(&direct.novelty)
            .enumerate()
        {
            assert!(
                (a - b).abs() <= 1e-12 * b,
                "{}: row {i}: {a} vs {b}",
                m.name
            );
        }
        assert_eq!(
            column(&batch, "novelty_pvalue"),
            direct.pvalue,
            "{}",
            m.name
        );
        let (s, p, flag) = (
            column(&batch, "novelty"),
            column(&batch, "novelty_pvalue"),
            column(&batch, "is_novel"),
        );
        for i in 0..z.nrows() {
            let one = model.extend(z.as_ref().subrows(i, 1)).unwrap();
            for name in ["novelty", "novelty_pvalue", "is_novel"] {
                assert_eq!(
                    column(&one, name)[0].to_bits(),
                    column(&batch, name)[i].to_bits(),
                    "{}: {name} of row {i} depends on the batch",
                    m.name
                );
            }
            assert!(p[i] > 0.0 && p[i] <= 1.0, "{}: p = {}", m.name, p[i]);
            assert_eq!(flag[i] == 1.0, p[i] <= 0.01, "{}: row {i}", m.name);
        }
        // The far points: beyond every calibration score.
        for i in [0, 1] {
            assert_eq!(p[i], 1.0 / 201.0, "{}: row {i}", m.name);
            assert!(s[i] > 1.5 * nov.calibration()[199], "{}", m.name);
        }
        // A coarser level flags at least as many.
        let loose = model
            .extend_options(
                z.as_ref(),
                &ExtendOptions {
                    alpha: Some(0.2),
                    ..Default::default()
                },
            )
            .unwrap();
        let count = |c: &[f64]| c.iter().filter(|&&v| v == 1.0).count();
        assert!(
            count(column(&loose, "is_novel")) >= count(flag),
            "{}",
            m.name
        );
        // Its own training points are never flagged at 0.01 (each is its own nearest
        // neighbour, so its score is at most its leave-one-out score).
        let own = model.extend(x).unwrap();
        assert!(
            column(&own, "novelty_pvalue")
                .iter()
                .all(|&p| p >= 2.0 / 201.0),
            "{}",
            m.name
        );
    }
}

#[test]
fn false_alarms_match_the_level_on_points_like_the_training_data() {
    let x = s_curve(3000, 0.05, 21).points;
    let z = s_curve(4000, 0.05, 22).points;
    let nov = Novelty::fit(x.as_ref()).unwrap();
    for alpha in [0.01, 0.05, 0.1] {
        let s = nov.score(z.as_ref(), Some(alpha)).unwrap();
        let rate = s.is_novel.iter().filter(|&&b| b).count() as f64 / 4000.0;
        assert!(
            rate >= 0.5 * alpha && rate <= 1.5 * alpha,
            "alpha {alpha}: false-alarm rate {rate}"
        );
    }
}

#[test]
fn a_cluster_left_out_of_training_is_found() {
    // Four clusters with bridges; train without the last cluster's points.
    let d = three_d_clusters(1200, 4, 5);
    let last = 3.0;
    let (mut train, mut test_known, mut novel) = (vec![], vec![], vec![]);
    for (i, &t) in d.t.iter().enumerate() {
        if t == last {
            novel.push(i);
        } else if i % 5 == 0 {
            test_known.push(i);
        } else {
            train.push(i);
        }
    }
    let rows = |idx: &[usize]| oose::datasets::select_rows(d.points.as_ref(), idx);
    let model = Model::fit("kpca", &Values::new(), Input::Points(rows(&train).as_ref())).unwrap();
    let known = model.extend(rows(&test_known).as_ref()).unwrap();
    let new = model.extend(rows(&novel).as_ref()).unwrap();
    let (sk, sn) = (column(&known, "novelty"), column(&new, "novelty"));
    // AUROC: the fraction of (novel, known) pairs ordered correctly.
    let pairs = sn.len() * sk.len();
    let right: usize = sn
        .iter()
        .map(|a| sk.iter().filter(|&b| a > b).count())
        .sum();
    let auroc = right as f64 / pairs as f64;
    assert!(auroc > 0.99, "AUROC {auroc}");
    let flagged = column(&new, "is_novel")
        .iter()
        .filter(|&&v| v == 1.0)
        .count();
    assert!(
        flagged as f64 > 0.9 * sn.len() as f64,
        "{flagged} of {}",
        sn.len()
    );
    let alarms = column(&known, "is_novel")
        .iter()
        .filter(|&&v| v == 1.0)
        .count();
    assert!(
        alarms as f64 <= 0.03 * sk.len() as f64,
        "{alarms} of {}",
        sk.len()
    );
}

#[test]
fn dissimilarity_models_score_distance_rows_like_points() {
    let data = s_curve(150, 0.02, 8).points;
    let x = data.as_ref().subrows(0, 120);
    let z = data.as_ref().subrows(120, 30);
    let dist = |a: MatRef<'_, f64>, i: usize, j: usize| {
        (0..3)
            .map(|c| (a[(i, c)] - x[(j, c)]).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let dx = Mat::from_fn(120, 120, |i, j| dist(x, i, j));
    let dz = Mat::from_fn(30, 120, |i, j| dist(z, i, j));
    let by_points = Model::fit("mds", &Values::new(), Input::Points(x)).unwrap();
    let by_rows = Model::fit(
        "mds",
        &Values::new(),
        Input::Proximity(dx.as_ref(), Proximity::Dissimilarities),
    )
    .unwrap();
    // Distance rows hold no direction: their score is the distance part s_E alone
    // (maths §18), here by brute force; the points' score has the direction part too.
    let nearest = |r: &[f64], own: Option<usize>| {
        let mut v: Vec<(f64, usize)> = (0..120)
            .filter(|&j| Some(j) != own)
            .map(|j| (r[j], j))
            .collect();
        v.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        v.truncate(10);
        v
    };
    let spread: Vec<f64> = (0..120)
        .map(|i| {
            let r: Vec<f64> = (0..120).map(|j| dx[(i, j)]).collect();
            nearest(&r, Some(i)).iter().map(|p| p.0).sum::<f64>() / 10.0
        })
        .collect();
    let mut sorted = spread.clone();
    sorted.sort_by(f64::total_cmp);
    let typical = 0.5 * (sorted[59] + sorted[60]);
    let b = by_rows.extend(dz.as_ref()).unwrap();
    for (i, v) in column(&b, "novelty").iter().enumerate() {
        let r: Vec<f64> = (0..120).map(|j| dz[(i, j)]).collect();
        let nb = nearest(&r, None);
        let d = nb.iter().map(|p| p.0).sum::<f64>() / 10.0;
        let rho = nb.iter().map(|p| spread[p.1]).sum::<f64>() / 10.0;
        let want = d * (typical / rho).sqrt();
        assert!((v - want).abs() <= 1e-12 * want, "row {i}: {v} vs {want}");
    }
    let a = by_points.extend(z).unwrap();
    assert!(column(&a, "novelty")
        .iter()
        .zip(column(&b, "novelty"))
        .any(|(u, v)| (u - v).abs() > 1e-6 * v));
    // Similarities: nothing to measure against; the columns are NaN.
    let sim = Mat::from_fn(120, 120, |i, j| (-dx[(i, j)].powi(2)).exp());
    let by_sim = Model::fit(
        "mds",
        &Values::new(),
        Input::Proximity(sim.as_ref(), Proximity::Similarities),
    )
    .unwrap();
    assert!(by_sim.novelty().is_none());
    let zs = Mat::from_fn(30, 120, |i, j| (-dz[(i, j)].powi(2)).exp());
    let e = by_sim.extend(zs.as_ref()).unwrap();
    assert!(column(&e, "novelty").iter().all(|v| v.is_nan()));
}

#[test]
fn the_level_is_stored_with_the_model() {
    let x = s_curve(200, 0.02, 4).points;
    let m = Model::fit("isomap", &Values::new(), Input::Points(x.as_ref()))
        .unwrap()
        .with_novelty_alpha(0.3)
        .unwrap();
    let back = Model::from_bytes(&m.to_bytes()).unwrap();
    assert_eq!(back.novelty().unwrap().alpha(), 0.3);
    let e = back.extend(x.as_ref()).unwrap();
    let p = column(&e, "novelty_pvalue");
    let flag = column(&e, "is_novel");
    assert!(p.iter().zip(flag).all(|(&p, &f)| (f == 1.0) == (p <= 0.3)));
    let err = back
        .extend_options(
            x.as_ref(),
            &ExtendOptions {
                alpha: Some(0.0),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("alpha"), "{err}");
}

#[test]
fn the_score_is_the_distance_corrected_for_the_local_spread_as_maths_18_writes_it() {
    // s(z) = (s_E(z)² · R·cs(z))^⅓ with s_E(z) = d(z)·sqrt(ρ̃/ρ(z)) and cs the same
    // construction on the directions from the training mean, among the 14 nearest
    // (maths §18), computed here by brute force, independently of the library's search
    // and bookkeeping. A tight cluster beside a loose one (spreads differ by 8), so that
    // new points land where the training set is tighter and looser than typical.
    let mut rng = oose::rng::Rng::new(7);
    let (n, m) = (301, 40);
    let x = Mat::from_fn(n, 2, |i, _| {
        let (centre, scale) = if i % 3 == 0 { (0.0, 0.1) } else { (3.0, 0.8) };
        centre + scale * rng.normal()
    });
    let z = Mat::from_fn(m, 2, |i, _| {
        let (centre, scale) = if i % 2 == 0 { (0.0, 0.3) } else { (3.0, 1.5) };
        centre + scale * rng.normal()
    });
    let nov = Novelty::fit(x.as_ref()).unwrap();
    let row = |mat: &Mat<f64>, i: usize| [mat[(i, 0)], mat[(i, 1)]];
    let mu = [
        (0..n).map(|i| x[(i, 0)]).sum::<f64>() / n as f64,
        (0..n).map(|i| x[(i, 1)]).sum::<f64>() / n as f64,
    ];
    let unit = |a: [f64; 2]| {
        let (u, v) = (a[0] - mu[0], a[1] - mu[1]);
        let r = (u * u + v * v).sqrt();
        [u / r, v / r]
    };
    let dist = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    // The `count` nearest training points to `a` (skipping `own`), nearest first.
    let nearest = |a: [f64; 2], own: Option<usize>, count: usize| {
        let mut v: Vec<(f64, usize)> = (0..n)
            .filter(|&j| Some(j) != own)
            .map(|j| (dist(a, row(&x, j)), j))
            .collect();
        v.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        v.truncate(count);
        v
    };
    // Among the 14 nearest, the 10 nearest directions.
    let directions = |a: [f64; 2], own: Option<usize>| {
        let u = unit(a);
        let mut v: Vec<(f64, usize)> = nearest(a, own, 14)
            .iter()
            .map(|&(_, j)| (dist(u, unit(row(&x, j))), j))
            .collect();
        v.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)));
        v.truncate(10);
        v
    };
    let mean = |v: &[(f64, usize)]| v.iter().map(|p| p.0).sum::<f64>() / v.len() as f64;
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[n / 2] // n odd: the middle one
    };
    let spread: Vec<f64> = (0..n)
        .map(|i| mean(&nearest(row(&x, i), Some(i), 10)))
        .collect();
    let c_spread: Vec<f64> = (0..n)
        .map(|i| mean(&directions(row(&x, i), Some(i))))
        .collect();
    let (typical, c_typical) = (median(&spread), median(&c_spread));
    let radius = median(&(0..n).map(|i| dist(row(&x, i), mu)).collect::<Vec<_>>());
    let expect = |a: [f64; 2], own: Option<usize>| {
        let nb = nearest(a, own, 10);
        let rho = nb.iter().map(|p| spread[p.1]).sum::<f64>() / 10.0;
        let euclidean = mean(&nb) * (typical / rho).sqrt();
        let dirs = directions(a, own);
        let c_rho = dirs.iter().map(|p| c_spread[p.1]).sum::<f64>() / 10.0;
        let direction = radius * mean(&dirs) * (c_typical / c_rho).sqrt();
        ((euclidean * euclidean * direction).cbrt(), rho > typical)
    };
    let got = nov.score(z.as_ref(), None).unwrap();
    let mut sides = [0, 0];
    for i in 0..m {
        let (want, loose) = expect(row(&z, i), None);
        sides[loose as usize] += 1;
        let s = got.novelty[i];
        assert!((s - want).abs() <= 1e-12 * want, "row {i}: {s} vs {want}");
    }
    assert!(sides[0] > 5 && sides[1] > 5, "both sides of ρ̃: {sides:?}");
    // The calibration: the same score of each training point with itself left out.
    let mut cal: Vec<f64> = (0..n).map(|i| expect(row(&x, i), Some(i)).0).collect();
    cal.sort_by(f64::total_cmp);
    for (a, b) in nov.calibration().iter().zip(&cal) {
        assert!((a - b).abs() <= 1e-12 * b, "{a} vs {b}");
    }
}
