//! The novelty score: leave-one-out calibration, p-values, distance rows, the level α,
//! and the directions formed before a score's rows go parallel.

use super::*;
use crate::datasets::three_d_clusters;
use faer::Mat;

#[test]
fn a_decoded_score_forms_its_directions_before_the_rows_go_parallel() {
    // Decoded, the directions are not formed yet: the first score forms them (with
    // every thread) and then scores 3000 rows in parallel on eight threads, as the
    // fitted score does with the directions it formed at the fit.
    let x = three_d_clusters(2000, 3, 4).points;
    let z = three_d_clusters(3000, 3, 5).points;
    let fitted = Novelty::fit(x.as_ref()).unwrap();
    assert!(fitted.directions.is_some());
    let decoded: Novelty = postcard::from_bytes(&postcard::to_allocvec(&fitted).unwrap()).unwrap();
    assert!(!decoded.directions.as_ref().unwrap().formed());
    let got = crate::testing::on_threads(8, || decoded.score(z.as_ref(), None)).unwrap();
    assert_eq!(got, fitted.score(z.as_ref(), None).unwrap());
    assert!(decoded.directions.as_ref().unwrap().formed());
}

#[test]
fn pvalue_counts_calibration_scores_at_least_as_large() {
    let x = three_d_clusters(99, 2, 3).points;
    let nov = Novelty::fit(x.as_ref()).unwrap();
    let cal = nov.calibration().to_vec();
    // Below every calibration score: p = 1; above all: 1/(n+1).
    assert_eq!(nov.pvalue(cal[0] * 0.5), 1.0);
    assert_eq!(nov.pvalue(cal[98] * 2.0), 0.01);
    // At the i-th smallest (no ties): n − i scores ≥ it.
    assert_eq!(nov.pvalue(cal[49]), (1 + 99 - 49) as f64 / 100.0);
    assert!(nov.pvalue(f64::NAN).is_nan());
}

#[test]
fn training_scores_are_leave_one_out() {
    // Three points on a line, k = 2: each point's spread is the mean distance to the
    // two others.
    let x = Mat::from_fn(3, 1, |i, _| [0.0, 1.0, 3.0][i]);
    let nov = Novelty::fit(x.as_ref()).unwrap();
    assert_eq!(nov.neighbours(), 2);
    assert_eq!(nov.spread, vec![2.0, 1.5, 2.5]);
    assert_eq!(nov.typical_spread, 2.0);
    // Euclidean part. Point 0: d = 2, neighbours 1 and 2 (ρ = 2): s = 2.
    // Point 1: d = 1.5, ρ = 2.25: s = 1.5·sqrt(2/2.25) = sqrt(2).
    // Point 2: d = 2.5, ρ = 1.75: s = 2.5·sqrt(2/1.75).
    let euclidean = [2.0, 2f64.sqrt(), 2.5 * (2.0f64 / 1.75).sqrt()];
    // Direction part: μ = 4/3, directions −1, −1, +1, R = median |x − μ| = 4/3.
    // Chord distances to the two others: point 0: 0 (to 1), 2 (to 2): c = 1;
    // point 1: 0, 2: c = 1; point 2: 2, 2: c = 2; c̃ = 1.
    // Point 0: mean c over {1, 2} = 1.5: R·1·sqrt(1/1.5); point 1 likewise (over
    // {0, 2}); point 2: mean over {0, 1} = 1: R·2.
    let r = 4.0 / 3.0;
    let direction = [r / 1.5f64.sqrt(), r / 1.5f64.sqrt(), 2.0 * r];
    let mut want: Vec<f64> = (0..3)
        .map(|i| (euclidean[i] * euclidean[i] * direction[i]).cbrt())
        .collect();
    want.sort_by(f64::total_cmp);
    for (a, b) in nov.calibration().iter().zip(&want) {
        assert!((a - b).abs() < 1e-15, "{a} vs {b}");
    }
    // A new point scores the same way (z = 2: Euclidean neighbours 1 and 3, both
    // directions +1 … point 1's is −1: chords 2 and 0).
    let z = Mat::from_fn(1, 1, |_, _| 2.0);
    let got = nov.score(z.as_ref(), None).unwrap().novelty[0];
    // d = 1 (to 1 and 3), ρ = (1.5 + 2.5)/2 = 2: s_E = 1; c = 1 (chords 0 to
    // point 2, 2 to point 1), mean c over {1, 2} = 1.5: R·sqrt(1/1.5).
    let want = (1.0 * 1.0 * r / 1.5f64.sqrt()).cbrt();
    assert!((got - want).abs() < 1e-15, "{got} vs {want}");
}

#[test]
fn a_narrower_graph_searches_as_many_candidates_as_it_has() {
    let x = three_d_clusters(150, 3, 2).points;
    let (idx, dist) = knn(x.as_ref(), x.as_ref(), 12, true);
    let from_graph = Novelty::from_graph(x.as_ref(), &idx, &dist).unwrap();
    assert_eq!(
        (from_graph.neighbours(), from_graph.search_neighbours()),
        (10, 12)
    );
    let fitted = Novelty::fit(x.as_ref()).unwrap();
    assert_eq!(fitted.search_neighbours(), CANDIDATES);
    // Fewer than k neighbours: no score from the graph.
    let (idx, dist) = knn(x.as_ref(), x.as_ref(), 9, true);
    assert!(Novelty::from_graph(x.as_ref(), &idx, &dist).is_none());
}

#[test]
fn a_decoded_score_with_more_candidates_than_points_is_inconsistent() {
    // A model file edited to ask each new row for 10¹² direction candidates among 150
    // training points: refused at load (it once tried to allocate 8 TB and aborted).
    let x = three_d_clusters(150, 3, 2).points;
    let fitted = Novelty::fit(x.as_ref()).unwrap();
    assert!(fitted.is_consistent());
    for (c, ok) in [(149, true), (150, false), (1 << 40, false)] {
        let mut edited = fitted.clone();
        edited.directions = edited.directions.map(|d| d.with_candidates(c));
        assert_eq!(edited.is_consistent(), ok, "{c} candidates");
    }
}

#[test]
fn distance_rows_score_like_points() {
    let x = three_d_clusters(120, 3, 5).points;
    let z = three_d_clusters(40, 2, 6).points;
    // The Euclidean part (distance rows have no direction part).
    let mut by_points = Novelty::fit(x.as_ref()).unwrap();
    assert!(by_points.directions.take().is_some());
    let dx = Mat::from_fn(120, 120, |i, j| dist(x.row(i), x.row(j)));
    let dz = Mat::from_fn(40, 120, |i, j| dist(z.row(i), x.row(j)));
    let by_rows = Novelty::fit_distances(dx.as_ref(), false).unwrap();
    let sq = Mat::from_fn(40, 120, |i, j| dz[(i, j)] * dz[(i, j)]);
    let by_sq = Novelty::fit_distances(
        Mat::from_fn(120, 120, |i, j| dx[(i, j)] * dx[(i, j)]).as_ref(),
        true,
    )
    .unwrap();
    let a = by_points.score(z.as_ref(), None).unwrap();
    let b = by_rows.score(dz.as_ref(), None).unwrap();
    let c = by_sq.score(sq.as_ref(), None).unwrap();
    for i in 0..40 {
        assert!((a.novelty[i] - b.novelty[i]).abs() < 1e-9 * a.novelty[i]);
        assert!((a.novelty[i] - c.novelty[i]).abs() < 1e-9 * a.novelty[i]);
    }
}

fn dist(a: faer::RowRef<'_, f64>, b: faer::RowRef<'_, f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .map(|(p, q)| (p - q) * (p - q))
        .sum::<f64>()
        .sqrt()
}

#[test]
fn alpha_outside_the_open_unit_interval_is_refused() {
    let x = three_d_clusters(20, 2, 1).points;
    let nov = Novelty::fit(x.as_ref()).unwrap();
    for a in [0.0, 1.0, -0.1, f64::NAN] {
        let e = nov.score(x.as_ref(), Some(a)).unwrap_err().to_string();
        assert!(e.contains("alpha"), "{e}");
    }
    assert_eq!(nov.clone().with_alpha(0.05).unwrap().alpha(), 0.05);
    let wide = Mat::<f64>::zeros(2, 4);
    let e = nov.score(wide.as_ref(), None).unwrap_err().to_string();
    assert!(e.contains("new rows"), "{e}");
}

#[test]
fn a_level_below_the_smallest_pvalue_is_named_and_flags_nothing() {
    // 80 training points: no p-value is below 1/81, so a point far from all of them
    // is not flagged at α = 0.01 (the note says so) and is at α = 1/81.
    let x = three_d_clusters(80, 2, 3).points;
    let nov = Novelty::fit(x.as_ref()).unwrap();
    assert_eq!(nov.smallest_pvalue(), 1.0 / 81.0);
    let far = Mat::<f64>::from_fn(1, 3, |_, _| 1e3);
    let s = nov.score(far.as_ref(), Some(0.01)).unwrap();
    assert_eq!((s.pvalue[0], s.is_novel[0]), (1.0 / 81.0, false));
    let note = nov.unreachable_level(None).unwrap();
    assert!(
        note.contains(
            "alpha = 0.01: with 80 training points the smallest novelty p-value is 1/81 = 0.0123"
        ) && note.contains("ask for alpha ≥ 0.0124 or fit on at least 99 points"),
        "{note}"
    );
    assert!(nov.score(far.as_ref(), Some(1.0 / 81.0)).unwrap().is_novel[0]);
    // The level suggested is reached (rounded up, not down to 0.0123).
    assert!(nov.score(far.as_ref(), Some(0.0124)).unwrap().is_novel[0]);
    assert!(nov.unreachable_level(Some(0.0123)).is_some());
    assert_eq!(nov.unreachable_level(Some(1.0 / 81.0)), None);
    // 99 points reach 0.01 exactly.
    let y = three_d_clusters(99, 2, 3).points;
    let nov = Novelty::fit(y.as_ref()).unwrap();
    assert_eq!(nov.unreachable_level(None), None);
    assert!(nov.score(far.as_ref(), None).unwrap().is_novel[0]);
    assert!(nov
        .unreachable_level(Some(0.0099))
        .unwrap()
        .contains("at least 101 points"));
}
